"""The high level: Model (weights, vocabulary, and a context of its own for generation).

    with mint.Model("stories260K.gguf", n_threads=2) as m:
        ids = m.tokenize("Once upon a time")           # [1, 403, 407, 261, 378]
        print(m.generate("Once upon a time", max_tokens=32, temperature=0))
        for tok in m.generate("Once", max_tokens=8, stream=True):
            print(tok.id, repr(tok.piece), tok.logprob)

generate() is mint-run's plain generation loop (tools/run/plain.c) step for step: the
prompt evaluated as one batch, then libmint's generation step (sample, end-of-generation, stop
strings, the first piece's space; _generate.py) -> evaluate the token at the next position. With the same prompt, model and sampler settings it produces mint-run's
tokens (tests/test_generate.py checks it against the program). beam_search(), speculative() and
generate_many() are mint-run's --beams, --lookup/--draft and --n-parallel.
"""

import codecs
import dataclasses
import os
import warnings
import weakref
from collections import namedtuple

from . import _generate, _lib, _util
from ._lib import check
from .context import Context, Sampler
from .grammar import Grammar, json_schema_to_grammar
from .errors import (
    ClosedError,
    MintArgumentError,
    MintLimitError,
    MintTypeError,
    MintUnsupportedError,
)
from .openai import OpenAIMixin, check_messages

Token = namedtuple("Token", "id piece logprob")
Token.__doc__ = (
    "A generated token: its id, its text (str; a character split across tokens appears with "
    "the token that completes it) and its log-probability under the model (natural log, before "
    "sampling filters)."
)


@dataclasses.dataclass(frozen=True)
class ModelInfo:
    """The model's description (mint_model_desc)."""

    path: str
    arch: str
    name: str
    n_vocab: int
    n_ctx_train: int
    n_embd: int
    n_ff: int
    n_layer: int
    n_head: int
    n_head_kv: int
    head_dim: int
    n_rot: int
    rope_base: float
    rope_freq_scale: float
    rms_eps: float
    bos: int
    eos: int
    add_bos: bool
    n_params: int
    weight_bytes: int
    bytes_per_token: int
    chat_template: str
    types: str
    locked: bool  # mlock=True was asked and every byte of the weights is locked in RAM
    lock_error: str  # mlock=True could not lock (some of) the weights: why; else None
    n_expert: int  # experts of a mixture-of-experts model (0: dense)
    n_expert_used: int  # experts each token takes (0: dense)
    n_layer_recurrent: int  # a hybrid's layers whose past is a state (0: a transformer)
    n_state_heads: int  # heads of each such layer's state (a delta net's value heads; 1: LFM2)
    state_bytes: int  # bytes of one sequence's recurrent state


class Model(OpenAIMixin, _util.ModelBase):
    """A model file opened for inference: GGUF, safetensors, or a Hugging Face folder.
    A Model and its contexts are for one thread at a time (use a Model per thread).

    n_ctx, n_threads, n_batch, kv_type ("f32" / "f16" / "q8_0" / "q4_0") and attention ("auto",
    "naive", "rowwise", "flash") are the defaults of the contexts this model makes (None: mint's own,
    e.g. n_ctx the model's training context up to 4096, n_threads every online CPU). A context
    manager; close() frees the weights and every context made from the model.

    no_mmap=True reads the file into memory instead of mapping it (mint-run --no-mmap: mapped
    weights can slow down within a run); mlock=True locks the weights in RAM (--mlock). When
    they cannot be locked (RLIMIT_MEMLOCK) the model still opens, info.locked is False and a
    RuntimeWarning says why."""

    def __init__(
        self,
        path,
        n_ctx=None,
        n_threads=None,
        kv_type="f32",
        attention="auto",
        n_batch=None,
        vocab_only=False,
        repack=True,
        no_mmap=False,
        mlock=False,
    ):
        self._h = None
        self._contexts = set()
        self._grammars = weakref.WeakSet()  # they read the vocabulary: closed with the model
        self._ctx = None
        self._busy = False
        p = _lib.fspath_bytes(path, "model path")
        self._ctx_args = dict(
            n_ctx=_util.opt_int(n_ctx, "n_ctx", 1),
            n_threads=_util.opt_int(n_threads, "n_threads", 1),
            n_batch=_util.opt_int(n_batch, "n_batch", 1),
            kv_type=kv_type,
            attention=attention,
        )
        _util.choice(kv_type, _lib.KV_TYPES, "kv_type")
        _util.choice(attention, _lib.ATTENTION, "attention")
        L = _lib.load()
        mp = _lib.mint_model_params(
            vocab_only=_util.as_bool(vocab_only, "vocab_only"),
            no_repack=not _util.as_bool(repack, "repack"),
            no_mmap=_util.as_bool(no_mmap, "no_mmap"),
            mlock=_util.as_bool(mlock, "mlock"),
        )
        h = _lib.ctypes.c_void_p()
        e = _util.err()
        check(L.mint_model_open(p, _lib.ctypes.byref(mp), _lib.ctypes.byref(h), _lib.ctypes.byref(e)), e)
        self._L = L
        self._h = h
        self.path = os.fsdecode(p)
        d = _lib.mint_model_desc()
        L.mint_model_describe(h, _lib.ctypes.byref(d))
        fields = {}
        for name, _ in _lib.mint_model_desc._fields_:
            v = getattr(d, name)
            fields[name] = _lib.cstr(v) if isinstance(v, bytes) else v
        self.info = ModelInfo(path=self.path, **fields)
        if self.info.lock_error:
            warnings.warn("mlock: " + self.info.lock_error, RuntimeWarning, stacklevel=2)

    # -- lifetime -------------------------------------------------------------------------------

    def _handle(self):
        if self._h is None:
            raise ClosedError("the model is closed")
        return self._h

    def repack_wait(self):
        """Returns once the background repacking of the weight matrices is done (it helps on
        this thread); time generation after it to measure the steady state. Results are the
        same bits before, during and after."""
        self._L.mint_model_repack_wait(self._handle())

    def close(self):
        """Frees the model and every context made from it (idempotent)."""
        if self._h is None:
            return
        for c in list(self._contexts):
            c.close()
        for g in list(self._grammars):
            g.close()
        self._ctx = None
        self._L.mint_model_close(self._h)
        self._h = None

    @property
    def closed(self):
        return self._h is None

    def __repr__(self):
        state = "closed" if self._h is None else f"{self.info.n_layer} layers, vocab {self.n_vocab}"
        return f"<mint.Model {os.path.basename(self.path)!r} {state}>"

    @property
    def n_vocab(self):
        return self.info.n_vocab

    @property
    def bos(self):
        return self.info.bos

    @property
    def eos(self):
        return self.info.eos

    @property
    def n_ctx(self):
        """Context length of the model's own context (generation)."""
        return self._context().n_ctx

    def context(self, **kwargs):
        """A new Context on this model; arguments as Context's, the model's defaults for those
        left out."""
        self._handle()
        args = {k: v for k, v in self._ctx_args.items() if v is not None}
        args.update(kwargs)
        return Context(self, **args)

    def _context(self):
        """The model's own context, made on first use."""
        self._handle()
        if self._ctx is None or self._ctx.closed:
            self._ctx = self.context()
        return self._ctx

    # -- text and tokens ------------------------------------------------------------------------

    def tokenize(self, text, add_bos=True, special=False):
        """Token ids of a text (str or UTF-8 bytes). add_bos adds BOS (and EOS) as the
        vocabulary asks; special turns control-token text such as "</s>" into the token."""
        h = self._handle()
        b = _lib.text_bytes(text)
        add = _util.as_bool(add_bos, "add_bos")
        spec = _util.as_bool(special, "special")
        cap = len(b) + 8
        for _ in range(2):
            ids = (_lib.ctypes.c_int32 * cap)()
            n = _lib.ctypes.c_size_t()
            e = _util.err()
            st = self._L.mint_tokenize(h, b, len(b), add, spec, ids, cap, _lib.ctypes.byref(n), _lib.ctypes.byref(e))
            if st == _lib.MINT_E_LIMIT and n.value > cap:
                cap = n.value
                continue
            check(st, e)
            return list(ids[: n.value])
        raise MintLimitError("tokenize: the token count kept growing")  # pragma: no cover

    def token_bytes(self, token, special=False):
        """The bytes a token stands for (byte tokens give their byte; control tokens are empty
        unless special)."""
        h = self._handle()
        t = _util.as_int(token, "token")
        if t < 0 or t >= self.n_vocab:
            raise MintArgumentError(f"token id {t} is outside 0..{self.n_vocab - 1}")
        buf = _lib.ctypes.create_string_buffer(256)
        n = self._L.mint_token_to_piece(h, t, _util.as_bool(special, "special"), buf, 256)
        if n > 256:
            buf = _lib.ctypes.create_string_buffer(n)
            n = self._L.mint_token_to_piece(h, t, special, buf, n)
        return buf.raw[:n]

    def token_text(self, token):
        """The token's vocabulary entry as stored ("▁Once", "<0x0A>")."""
        t = _util.as_int(token, "token")
        s = self._L.mint_token_text(self._handle(), t)
        if s is None:
            raise MintArgumentError(f"token id {t} is outside 0..{self.n_vocab - 1}")
        return s.decode("utf-8", "replace")

    def is_eog(self, token):
        """Whether a token ends generation (EOS and the like)."""
        return bool(self._L.mint_token_is_eog(self._handle(), _util.as_int(token, "token")))

    def _adds_space_prefix(self):
        return bool(self._L.mint_vocab_adds_space_prefix(self._handle()))

    def detokenize(self, ids, special=False):
        """The text of token ids: their pieces joined, minus the space the tokenizer puts before
        the first word (so detokenize(tokenize(s)) == s); control tokens are left out unless
        special. Bytes that are not UTF-8 become U+FFFD."""
        return self.detokenize_bytes(ids, special).decode("utf-8", "replace")

    def detokenize_bytes(self, ids, special=False):
        """detokenize() as bytes."""
        arr, _n = _util.token_array(ids, "ids")
        out = []
        strip = self._adds_space_prefix()
        for t in arr:
            b = self.token_bytes(t, special)
            if strip and self.token_bytes(t):  # the first token with text of its own
                if b.startswith(b" "):
                    b = b[1:]
                strip = False
            out.append(b)
        return b"".join(out)

    # -- generation -----------------------------------------------------------------------------

    def sampler(self, **params):
        """A Sampler over this model's vocabulary (arguments as Sampler's)."""
        return Sampler(self.n_vocab, **params)

    def grammar(self, text, root=None, trigger_words=(), trigger_patterns=(), trigger_tokens=()):
        """A mint.Grammar (GBNF text, llama.cpp's format) over this model's vocabulary, for
        generate(grammar=...) or Sampler.set_grammar; arguments as Grammar's."""
        return Grammar(self, text, root, trigger_words, trigger_patterns, trigger_tokens)

    def _grammar_of(self, grammar):
        """generate's grammar argument as (Grammar at its start, whether this call owns it)."""
        if grammar is None:
            return None, False
        if isinstance(grammar, Grammar):
            grammar.reset()
            return grammar, False
        if isinstance(grammar, str):
            return self.grammar(grammar), True
        raise MintTypeError(
            f"grammar must be a str (GBNF) or a mint.Grammar, not {type(grammar).__name__}"
        )

    def _prompt_ids(self, prompt, n_ctx):
        """mint-run's prompt rules (tools/run/common.c): text tokenized with BOS, a lone BOS
        for an empty prompt, no room left in the context is an error."""
        if isinstance(prompt, (str, bytes)):
            ids = self.tokenize(prompt, add_bos=True, special=False)
        else:
            arr, _n = _util.token_array(prompt, "prompt")
            ids = list(arr)
            for t in ids:
                if t < 0 or t >= self.n_vocab:
                    raise MintArgumentError(f"prompt: token id {t} is outside 0..{self.n_vocab - 1}")
        if not ids and self.bos >= 0:
            ids = [self.bos]
        if not ids:
            raise MintArgumentError("the prompt is empty and the vocabulary has no BOS token")
        if len(ids) >= n_ctx:
            raise MintLimitError(
                f"the prompt has {len(ids)} tokens, which leaves no room in the context of "
                f"{n_ctx} (raise n_ctx)"
            )
        return ids

    def _run(self, prompt, max_tokens, sampling, ignore_eos, state, n_top=0, want_lp=True, stops=(),
             grammar=None):  # fmt: skip
        """A generator of _generate.Step on the model's context, holding it while it runs."""
        max_tokens = _util.max_tokens(max_tokens)
        ignore_eos = _util.as_bool(ignore_eos, "ignore_eos")
        ctx = self._context()
        ids = self._prompt_ids(prompt, ctx.n_ctx)
        sampler = self.sampler(**sampling)  # checks the arguments now, not at the first token
        try:
            g, own = self._grammar_of(grammar)  # a grammar that does not parse raises here
        except BaseException:
            sampler.close()
            raise
        sampler.set_grammar(g)

        def gen():
            if self._busy:
                raise MintArgumentError(
                    "the model is already generating (a streamed generation is still open); "
                    "finish or close it first, or use a second Model"
                )
            self._busy = True
            try:
                yield from _generate.steps(
                    self, ctx, ids, sampler, max_tokens, ignore_eos, state, n_top, want_lp, stops
                )
            finally:
                self._busy = False
                sampler.close()
                if own:
                    g.close()

        return gen()

    def generate(
        self,
        prompt,
        max_tokens=128,
        temperature=0.8,
        top_k=40,
        top_p=0.95,
        min_p=0.05,
        repeat_penalty=1.0,
        repeat_last_n=64,
        seed=None,
        stream=False,
        ignore_eos=False,
        grammar=None,
        json_schema=None,
    ):
        """Generates a continuation of prompt (text, or a list of token ids). Returns the new
        text, or with stream=True yields Token(id, piece, logprob) as they come. Stops at
        end-of-generation, after max_tokens (None or -1: none), or when the context is full.
        grammar (GBNF text in llama.cpp's format, or a mint.Grammar, which is reset first)
        constrains the text: only tokens it allows are drawn, and the end comes once the text is
        a complete match (even with ignore_eos); a grammar that does not parse raises
        mint.MintFormatError with its one line. json_schema (a dict or JSON text) is the grammar
        llama.cpp's converter makes of it (mint.json_schema_to_grammar); give one or the other.
        Sampler arguments, defaults and ranges as mint-run's (--temp --top-k --top-p --min-p
        --repeat-penalty --repeat-last-n -s, -n for max_tokens); temperature 0 is greedy. A value
        outside its range raises ValueError (mint.MintArgumentError) naming it and the range."""
        if json_schema is not None:
            if grammar is not None:
                raise MintArgumentError("give grammar or json_schema, not both")
            grammar = json_schema_to_grammar(json_schema)
        sampling = dict(
            temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p,
            repeat_penalty=repeat_penalty, repeat_last_n=repeat_last_n, seed=seed,
        )  # fmt: skip
        steps = self._run(prompt, max_tokens, sampling, ignore_eos, _generate.State(), want_lp=stream,
                          grammar=grammar)  # fmt: skip
        if stream:
            return self._stream_tokens(steps)
        return b"".join(step.piece for step in steps).decode("utf-8", "replace")

    @staticmethod
    def _stream_tokens(steps):
        dec = codecs.getincrementaldecoder("utf-8")("replace")
        for step in steps:
            yield Token(step.id, dec.decode(step.piece), step.logprob)

    def generate_many(
        self, prompt, n, max_tokens=128, temperature=0.8, top_k=40, top_p=0.95, min_p=0.05,
        repeat_penalty=1.0, repeat_last_n=64, seed=None, ignore_eos=False,
    ):  # fmt: skip
        """n completions of one prompt decoded together (mint-run --n-parallel): the prompt is
        evaluated once in sequence 0, the other sequences share its KV blocks (fork), and each
        step decodes one token of every unfinished sequence in one batch. Sequence i samples with
        seed + i. Returns a list of n texts."""
        n = _util.as_int(n, "n", 1, 256)
        if seed is None:
            seed = int.from_bytes(os.urandom(7), "little")
        seed = _util.as_int(seed, "seed", 0, 2**64 - 1 - n)
        ignore_eos = _util.as_bool(ignore_eos, "ignore_eos")
        with self.context(n_seq_max=n) as ctx:
            ids = self._prompt_ids(prompt, ctx.n_ctx)
            room = ctx.n_ctx - len(ids)
            mt = _util.max_tokens(max_tokens)
            n_max = mt if mt is not None and 0 <= mt < room else room
            samplers = [
                self.sampler(
                    temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p,
                    repeat_penalty=repeat_penalty, repeat_last_n=repeat_last_n, seed=seed + i,
                )  # fmt: skip
                for i in range(n)
            ]
            lone_bos = len(ids) == 1 and ids[0] == self.bos
            gens = []
            try:
                for s in samplers:  # each sequence through the library's generation step
                    for t in ids:
                        s.accept(t)
                    gens.append(_generate.Gen(self, s, n_max, (), 0, False, ignore_eos, lone_bos))
                ctx.eval(ids, pos=0)
                for i in range(1, n):
                    ctx.fork(0, i)
                text = [b""] * n
                done = [False] * n
                row = [0] * n
                for step in range(n_max):
                    entries = []
                    for i in range(n):
                        if done[i]:
                            continue
                        out = gens[i].step(ctx._logits_ptr(row[i] if step else 0))
                        text[i] += gens[i].text()
                        if out.finish == _generate.Gen.EOS:
                            done[i] = True
                            continue
                        if out.finish:
                            continue  # the last tokens need no logits
                        row[i] = len(entries)
                        entries.append((out.token, len(ids) + step, i, True))
                    if not entries:
                        break
                    ctx.decode(entries)
            finally:
                for g in gens:
                    g.close()
                for s in samplers:
                    s.close()
        return [t.decode("utf-8", "replace") for t in text]

    def _text(self, ids, after_bos):
        b = b"".join(self.token_bytes(t) for t in ids)
        if after_bos and ids and self.token_bytes(ids[0]).startswith(b" "):
            b = b[1:]
        return b.decode("utf-8", "replace")

    def beam_search(self, prompt, n_beams=4, max_tokens=None, length_penalty=1.0, ignore_eos=False):
        """Beam search (mint-run --beams): the n_beams continuations of highest total
        log-probability, all beams evaluated in one batch per step. Returns a dict: text,
        tokens (including a final end-of-generation token), logprob (of the best beam)."""
        nb = _util.as_int(n_beams, "n_beams", 1, 256)
        with self.context(n_seq_max=nb) as ctx:
            ids = self._prompt_ids(prompt, ctx.n_ctx)
            room = ctx.n_ctx - len(ids)
            mt = _util.max_tokens(max_tokens)
            budget = mt if mt is not None and 0 <= mt < room else room
            if budget < 1:
                raise MintLimitError("no room left in the context (raise n_ctx)")
            toks, lp = ctx.beam_search(ids, nb, budget, length_penalty, ignore_eos)
        shown = toks[:-1] if toks and self.is_eog(toks[-1]) and not ignore_eos else toks
        lone_bos = len(ids) == 1 and ids[0] == self.bos
        return {"text": self._text(shown, lone_bos), "tokens": toks, "logprob": lp}

    def speculative(
        self, prompt, draft=None, n_draft=8, lookup_n=3, max_tokens=None, temperature=0.0,
        top_k=40, top_p=0.95, min_p=0.05, seed=None, ignore_eos=False,
    ):  # fmt: skip
        """Speculative decoding (mint-run --draft / --lookup): draft, a Model (or a path) with
        the same vocabulary, proposes n_draft tokens per target pass; with draft None, prompt
        lookup copies them from the text so far (n-grams up to lookup_n). With temperature 0 the
        output is the model's greedy output token for token; otherwise it follows the model's
        distribution exactly. Returns a dict: text, tokens, stats (generated, drafted, accepted,
        target_passes, seconds, acceptance)."""
        own_draft = None
        dctx = None
        if draft is not None and not isinstance(draft, Model):
            own_draft = draft = Model(draft)
        try:
            if draft is not None:
                e = _util.err()
                st = self._L.mint_vocab_compatible(self._handle(), draft._handle(), _lib.ctypes.byref(e))
                if st:
                    msg = e.msg.decode("utf-8", "replace")
                    raise _lib.errors.error_for(
                        st, f"draft {draft.path}: its vocabulary differs from the model's: {msg}"
                    )
            with self.context() as ctx:
                if draft is not None:
                    dctx = draft.context(n_threads=ctx.n_threads, n_ctx=ctx.n_ctx,
                                         kv_type=self._ctx_args["kv_type"])  # fmt: skip
                ids = self._prompt_ids(prompt, ctx.n_ctx)
                room = ctx.n_ctx - len(ids)
                mt = _util.max_tokens(max_tokens)
                budget = mt if mt is not None and 0 <= mt < room else room
                if budget < 1:
                    raise MintLimitError("no room left in the context (raise n_ctx)")
                with self.sampler(temperature=temperature, top_k=top_k, top_p=top_p,
                                  min_p=min_p, repeat_penalty=1.0, seed=seed) as s:  # fmt: skip
                    toks, stats = ctx.speculative(s, ids, dctx, n_draft, lookup_n, budget, ignore_eos)
        finally:
            if dctx is not None:
                dctx.close()
            if own_draft is not None:
                own_draft.close()
        shown = [t for t in toks if not self.is_eog(t)]
        lone_bos = len(ids) == 1 and ids[0] == self.bos
        st = stats._asdict()
        st["acceptance"] = stats.accepted / stats.drafted if stats.drafted else 0.0
        return {"text": self._text(shown, lone_bos), "tokens": toks, "stats": st}

    # -- chat -----------------------------------------------------------------------------------

    def chat_template(self, name=None):
        """The Jinja source of the chat template mint-run would use: a preset's (one of llama.cpp's
        built-in names: "chatml", "llama3", "gemma", ...) when name is given, else the model's own
        tokenizer.chat_template (None when the model has none)."""
        if name is not None:
            src = self._L.mint_chat_preset(_lib.name_bytes(name, "chat_template"))
            if src is None:
                names = []
                while (n := self._L.mint_chat_preset_name(len(names))) is not None:
                    names.append(n.decode("ascii"))
                raise MintArgumentError(
                    f"chat_template '{name}' is not one of llama.cpp's built-in names: "
                    + ", ".join(names)
                )
            return src.decode("utf-8")
        return self.info.chat_template

    def apply_chat_template(self, messages, chat_template=None, add_assistant=True):
        """The prompt text for messages ([{"role": ..., "content": ...}]), rendered by mint's
        Jinja engine exactly as Hugging Face's apply_chat_template renders it. chat_template:
        None (the model's own template), a preset name (llama.cpp's: "chatml", "llama3", ...), or
        a Jinja template's text (anything containing "{")."""
        self._handle()
        if isinstance(chat_template, str) and "{" in chat_template:
            src = chat_template
        else:
            src = self.chat_template(chat_template)
        msgs = check_messages(messages)
        arr = (_lib.mint_chat_msg * len(msgs))()
        keep = []
        for i, (role, content) in enumerate(msgs):
            r, c = role.encode("utf-8"), content.encode("utf-8")
            keep += [r, c]
            arr[i].role, arr[i].content = r, c
        bos = self._L.mint_token_text(self._h, self.bos) if self.bos >= 0 else b""
        eos = self._L.mint_token_text(self._h, self.eos) if self.eos >= 0 else b""
        add = _util.as_bool(add_assistant, "add_assistant")
        out = _lib.ctypes.c_void_p()
        n = _lib.c_size_t()
        err = _lib.mint_err()
        st = self._L.mint_chat_apply(
            src.encode("utf-8") if src is not None else None, arr, len(msgs), add, bos, eos,
            _lib.ctypes.byref(out), _lib.ctypes.byref(n), _lib.ctypes.byref(err),
        )
        _lib.check(st, err)
        try:
            return _lib.ctypes.string_at(out.value, n.value).decode("utf-8", "replace")
        finally:
            self._L.mint_chat_free(out)

    def _chat_ids(self, messages, chat_template, n_ctx):
        """The prompt tokens of a conversation, as mint-run -cnv makes them (tools/run/chat.c):
        parse_special on, BOS added unless the rendered text starts with it."""
        text = self.apply_chat_template(messages, chat_template)
        bos = self._L.mint_token_text(self._h, self.bos) if self.bos >= 0 else b""
        bos_s = (bos or b"").decode("utf-8", "replace")
        ids = self.tokenize(text, add_bos=not text.startswith(bos_s), special=True)
        if ids and len(ids) >= n_ctx:
            raise MintLimitError(
                f"the conversation ({len(ids)} tokens) fills the context of {n_ctx}"
            )
        return ids
