"""Grammars: llama.cpp's GBNF constraining what a sampler may pick (mint_text.h "Grammars").

    g = model.grammar('root ::= "yes" | "no"')
    text = model.generate("Answer:", grammar=g)       # or grammar='root ::= ...' directly

A Grammar is one generation's state over a model's vocabulary: Model.generate resets it before
it starts. Lazy grammars (tool calls) wait for a trigger word, regex pattern or token before
they constrain anything.
"""

import ctypes
from ctypes import byref

from . import _lib, _util
from ._lib import check
from .errors import ClosedError, MintTypeError


def _texts(items, what):
    out = []
    for x in items:
        if not isinstance(x, str):
            raise MintTypeError(f"{what} must be strings, not {type(x).__name__}")
        out.append(x.encode("utf-8"))
    return out


class Grammar(_util.Closable):
    """A GBNF grammar (llama.cpp's format: rules, alternatives, groups, * + ? {m,n}, literals,
    character classes, token references <[id]>) for model's vocabulary. root names the start
    rule ("root"). trigger_words, trigger_patterns (PCRE2 regexes) and trigger_tokens make it
    lazy: free text until one fires, then constrained from the trigger on. A grammar that does
    not parse raises mint.MintFormatError with its one line (line:column); a bad trigger
    mint.MintArgumentError."""

    def __init__(self, model, text, root=None, trigger_words=(), trigger_patterns=(),
                 trigger_tokens=()):  # fmt: skip
        self._h = None
        if not isinstance(text, str):
            raise MintTypeError(f"grammar must be a str (GBNF text), not {type(text).__name__}")
        L = self._L = model._L
        p = L.mint_grammar_default_params()
        self._root = None if root is None else _texts([root], "root")[0]
        p.root = self._root
        words = _texts(trigger_words, "trigger_words")
        pats = _texts(trigger_patterns, "trigger_patterns")
        toks = [_util.as_int(t, "trigger token", 0) for t in trigger_tokens]
        # The library copies the triggers; these arrays only live for the call.
        w_arr = (ctypes.c_char_p * max(len(words), 1))(*words)
        p_arr = (ctypes.c_char_p * max(len(pats), 1))(*pats)
        t_arr = (ctypes.c_int32 * max(len(toks), 1))(*toks)
        p.trigger_words = ctypes.cast(w_arr, ctypes.POINTER(ctypes.c_char_p))
        p.n_trigger_words = len(words)
        p.trigger_patterns = ctypes.cast(p_arr, ctypes.POINTER(ctypes.c_char_p))
        p.n_trigger_patterns = len(pats)
        p.trigger_tokens = ctypes.cast(t_arr, ctypes.POINTER(ctypes.c_int32))
        p.n_trigger_tokens = len(toks)
        raw = text.encode("utf-8")
        h = ctypes.c_void_p()
        e = _util.err()
        check(L.mint_grammar_create(model._handle(), raw, len(raw), byref(p), byref(h), byref(e)), e)
        self._h = h
        self._model = model  # the grammar reads the model's vocabulary
        model._grammars.add(self)  # closed when the model closes

    def _handle(self):
        if self._h is None:
            raise ClosedError("the grammar is closed")
        return self._h

    def close(self):
        if self._h is not None:
            self._L.mint_grammar_free(self._h)
            self._h = None

    def reset(self):
        """Back to the start (a lazy grammar waits for its trigger again)."""
        self._L.mint_grammar_reset(self._handle())

    def allows(self, token):
        """Whether token could be accepted now."""
        return bool(self._L.mint_grammar_allows(self._handle(), _util.as_int(token, "token")))

    def accept(self, token):
        """Advances by token; mint.MintArgumentError when the grammar does not allow it."""
        e = _util.err()
        check(self._L.mint_grammar_accept(self._handle(), _util.as_int(token, "token"), byref(e)), e)

    @property
    def can_end(self):
        """Whether the text so far is a complete match (an end-of-generation token is allowed)."""
        return bool(self._L.mint_grammar_can_end(self._handle()))


def json_schema_to_grammar(schema):
    """llama.cpp's JSON Schema to GBNF conversion (mint_json_schema_to_grammar): schema as a
    dict / list / bool or JSON text; returns the grammar's GBNF text. A malformed or unsupported
    schema raises mint.MintFormatError naming the keyword and its JSON pointer."""
    import json

    if not isinstance(schema, (str, bytes)):
        schema = json.dumps(schema)
    raw = schema.encode("utf-8") if isinstance(schema, str) else schema
    out = ctypes.c_void_p()
    e = _util.err()
    L = _lib.load()
    check(L.mint_json_schema_to_grammar(raw, len(raw), byref(out), byref(e)), e)
    try:
        return ctypes.string_at(out.value).decode("utf-8")
    finally:
        L.mint_grammar_text_free(out)
