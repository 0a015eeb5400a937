"""The generation loop of tools/run/plain.c over libmint's generation step (mint_gen_step,
runtime/text/generate.c): the prompt evaluated as one batch, then step -> evaluate the token at
the next position. The step samples, ends at end-of-generation, a stop string or max_tokens,
applies the first piece's leading-space rule and computes log-probabilities, exactly as
mint-run and mint-serve get them; this module only drives it. Model.generate and the
OpenAI-shaped methods (openai.py) consume it.
"""

import ctypes
from collections import namedtuple
from ctypes import byref

from . import _lib, _util
from ._lib import check

Step = namedtuple("Step", "id piece logprob top text finish")
Step.__doc__ = (
    "One generated token: id, piece (bytes, leading-space rule applied), logprob (None unless "
    "asked for), top [(id, logprob)], text (the bytes this step releases: stop strings never "
    "appear in part) and finish (None, or 'stop' / 'length' when this token ended it)."
)


class State:
    """What a generation loop leaves behind: why it stopped, the prompt it ran on, the tokens
    generated, and the text released after the last token (what was held back for a stop string
    when the generation ended at end-of-generation)."""

    def __init__(self):
        self.finish_reason = "length"
        self.prompt_ids = ()
        self.n_generated = 0
        self.tail = b""
        self.stop_string = False  # it ended at a stop string


class Gen(_util.Closable):
    """One mint_gen: the library's generation step over a model's vocabulary and a Sampler
    (which must outlive it). step() returns the shared mint_gen_token, valid until the next
    step; text() the bytes it released."""

    EOS = _lib.ENUM_VALUES["MINT_FINISH_EOS"]
    STOP = _lib.ENUM_VALUES["MINT_FINISH_STOP"]

    def __init__(self, model, sampler, max_tokens=None, stops=(), n_top=0, logprobs=False,
                 ignore_eos=False, after_bos=False):  # fmt: skip
        self._g = None
        L = self._L = model._L
        p = L.mint_gen_default_params()
        p.max_tokens = -1 if max_tokens is None else max_tokens
        stop_b = [s.encode("utf-8") for s in stops]
        self._stops = (ctypes.c_char_p * max(len(stop_b), 1))(*stop_b)  # copied by the library
        p.stop = ctypes.cast(self._stops, ctypes.POINTER(ctypes.c_char_p))
        p.n_stop = len(stop_b)
        p.n_top = n_top
        p.logprobs = bool(logprobs)
        p.ignore_eos = bool(ignore_eos)
        p.after_bos = bool(after_bos)
        g = ctypes.c_void_p()
        self._e = _util.err()
        check(L.mint_gen_create(model._handle(), sampler._handle(), byref(p), byref(g), byref(self._e)), self._e)
        self._g = g
        self.out = _lib.mint_gen_token()

    def step(self, logits_ptr):
        check(self._L.mint_gen_step(self._g, logits_ptr, byref(self.out), byref(self._e)), self._e)
        return self.out

    def text(self):
        o = self.out
        return ctypes.string_at(o.text, o.n_text) if o.n_text else b""

    def piece(self):
        o = self.out
        return ctypes.string_at(o.piece, o.n_piece) if o.n_piece else b""

    def close(self):
        if self._g is not None:
            self._L.mint_gen_free(self._g)
            self._g = None


def steps(model, ctx, ids, sampler, max_tokens, ignore_eos, state, n_top=0, want_lp=True, stops=()):
    """Yields a Step per generated token (a generator; ctx is the model's context, ids the
    prompt, sampler a Sampler it draws with). Sets state.finish_reason ("stop" at
    end-of-generation or a stop string, "length" at max_tokens or a full context)."""
    for t in ids:
        sampler.accept(t)
    held = ctx.prefix(0, ids)
    ctx.eval(ids[held:], pos=held)
    n_seq, n_ctx = len(ids), ctx.n_ctx
    state.prompt_ids = ids
    state.finish_reason = "length"
    if max_tokens == 0:
        return
    lone_bos = len(ids) == 1 and ids[0] == model.bos
    with Gen(model, sampler, max_tokens, stops, n_top, want_lp, ignore_eos, lone_bos) as g:
        while True:
            out = g.step(ctx._logits_ptr(-1))
            text = g.text()
            if out.finish == Gen.EOS:
                state.finish_reason = "stop"
                state.tail = text
                return
            finish = _lib.FINISH_NAMES[out.finish]
            if finish is not None:
                state.finish_reason = finish
                state.stop_string = out.finish == Gen.STOP
            lp = out.logprob if (want_lp or n_top) else None
            top = [(out.top_id[k], out.top_logprob[k]) for k in range(out.n_top)]
            n_seq += 1
            state.n_generated = out.n_generated
            yield Step(out.token, g.piece(), lp, top, text, finish)
            if finish is not None or n_seq >= n_ctx:
                return  # finished, or the context is full (the last token is not evaluated)
            ctx.eval([out.token], pos=n_seq - 1)
