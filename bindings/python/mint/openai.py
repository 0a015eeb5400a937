"""OpenAI-shaped results, as llama-cpp-python's Llama returns them and mint-serve sends them:
create_completion ("text_completion") and create_chat_completion ("chat.completion"), whole or
streamed as chunks, the methods of OpenAIMixin, which Model inherits. The generation underneath
is Model.generate's loop (_generate.py over libmint's mint_gen_step, which also ends the text at
a stop string and holds back what may begin one); the chat prompt is the model's chat template
rendered as mint-run -cnv renders it. This module imports nothing of model.py: the mixin's
methods call the model's own (_run, _chat_ids, detokenize, token_bytes) through self.
"""

import codecs
import os
import time
import uuid

from . import _util
from ._generate import State
from .errors import MintArgumentError, MintTypeError

ROLES = ("system", "user", "assistant")


def check_messages(messages):
    """[(role, content)] from OpenAI-style messages; TypeError / ValueError on a bad one."""
    if isinstance(messages, (str, bytes, dict)) or not hasattr(messages, "__iter__"):
        raise MintTypeError(
            'messages must be a list of {"role": ..., "content": ...} dicts, not '
            f"{type(messages).__name__}"
        )
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise MintTypeError(f"messages[{i}] must be a dict, not {type(m).__name__}")
        role, content = m.get("role"), m.get("content")
        if role not in ROLES:
            raise MintArgumentError(f"messages[{i}]: role {role!r} is not one of {', '.join(ROLES)}")
        if not isinstance(content, str):
            raise MintTypeError(
                f"messages[{i}]: content must be a str, not {type(content).__name__}"
            )
        out.append((role, content))
    if not out:
        raise MintArgumentError("messages is empty")
    return out


def _check_stop(stop):
    if stop is None:
        return []
    if isinstance(stop, str):
        stop = [stop]
    if not isinstance(stop, (list, tuple)) or not all(isinstance(s, str) for s in stop):
        raise MintTypeError("stop must be a str or a list of str")
    return [s for s in stop if s]


def _sampling(temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed):
    return dict(
        temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p,
        repeat_penalty=repeat_penalty, repeat_last_n=repeat_last_n, seed=seed,
    )  # fmt: skip


def _envelope(model, cid, object_, created):
    return {"id": cid, "object": object_, "created": created, "model": os.path.basename(model.path)}


def _usage(state):
    n_prompt = len(state.prompt_ids)
    return {
        "prompt_tokens": n_prompt,
        "completion_tokens": state.n_generated,
        "total_tokens": n_prompt + state.n_generated,
    }


def _piece_str(b):
    return b.decode("utf-8", "replace")


def _completion_logprobs(model, toks, offset0):
    """OpenAI completions' logprobs: tokens, token_logprobs, top_logprobs, text_offset."""
    out = {"tokens": [], "token_logprobs": [], "top_logprobs": [], "text_offset": []}
    off = offset0
    for tok, piece, lp, top, _text, _finish in toks:
        s = _piece_str(piece)
        out["tokens"].append(s)
        out["token_logprobs"].append(lp)
        out["top_logprobs"].append({_piece_str(model.token_bytes(t)): l for t, l in top})
        out["text_offset"].append(off)
        off += len(s)
    return out


def _chat_logprobs(model, toks):
    """OpenAI chat's logprobs: {"content": [{token, logprob, bytes, top_logprobs}]}."""
    content = []
    for tok, piece, lp, top, _text, _finish in toks:
        alts = []
        for t, l in top:
            b = model.token_bytes(t)
            alts.append({"token": _piece_str(b), "logprob": l, "bytes": list(b)})
        content.append({"token": _piece_str(piece), "logprob": lp, "bytes": list(piece),
                        "top_logprobs": alts})  # fmt: skip
    return {"content": content}


def _n_top(logprobs, what):
    if logprobs is None or logprobs is False:
        return 0
    if logprobs is True:
        return 0
    return _util.as_int(logprobs, what, 0, 20)


def _decoder():
    return codecs.getincrementaldecoder("utf-8")("replace")


def _rest(dec, state):
    """The text after the last token: what was held back for a stop string when generation ended
    at end-of-generation, and a character left incomplete (as U+FFFD); nothing after a stop
    string."""
    return "" if state.stop_string else dec.decode(state.tail, final=True)


class OpenAIMixin:
    """create_completion, create_chat_completion and __call__ for Model (which supplies _run,
    _chat_ids, _context, detokenize, token_bytes and path)."""

    def create_completion(
        self,
        prompt,
        max_tokens=16,
        temperature=0.8,
        top_p=0.95,
        top_k=40,
        min_p=0.05,
        repeat_penalty=1.0,
        repeat_last_n=64,
        seed=None,
        stop=None,
        echo=False,
        logprobs=None,
        stream=False,
        ignore_eos=False,
    ):
        """An OpenAI "text_completion" dict for prompt (text or token ids):
        {"id", "object", "created", "model", "choices": [{"text", "index", "logprobs",
        "finish_reason"}], "usage"}. finish_reason is "stop" (end of generation or a stop string)
        or "length" (max_tokens, or the context is full). logprobs=K adds each token's logprob and
        the K most likely alternatives; echo puts the prompt text before the completion. With
        stream=True, yields "text_completion" chunks, the last one carrying finish_reason."""
        stops = _check_stop(stop)
        echo = _util.as_bool(echo, "echo")
        n_top = _n_top(logprobs, "logprobs")
        want_lp = logprobs is not None and logprobs is not False
        state = State()
        steps = self._run(
            prompt, max_tokens,
            _sampling(temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed),
            ignore_eos, state, n_top, want_lp, stops,
        )  # fmt: skip
        prefix = ""
        if echo:
            prefix = prompt if isinstance(prompt, str) else self.detokenize(prompt)
        cid, created = "cmpl-" + uuid.uuid4().hex, int(time.time())
        if stream:
            return _completion_chunks(self, steps, state, prefix, want_lp, cid, created)
        dec = _decoder()
        text, kept = prefix, []
        for step in steps:
            text += dec.decode(step.text)
            if step.finish == "stop":  # a stop string: its token's log-probabilities are left out
                break
            kept.append(step)
        text += _rest(dec, state)
        r = _envelope(self, cid, "text_completion", created)
        lp = _completion_logprobs(self, kept, len(prefix)) if want_lp else None
        r["choices"] = [{"text": text, "index": 0, "logprobs": lp, "finish_reason": state.finish_reason}]
        r["usage"] = _usage(state)
        return r

    __call__ = create_completion

    def create_chat_completion(
        self,
        messages,
        max_tokens=None,
        temperature=0.8,
        top_p=0.95,
        top_k=40,
        min_p=0.05,
        repeat_penalty=1.0,
        repeat_last_n=64,
        seed=None,
        stop=None,
        stream=False,
        chat_template=None,
        logprobs=False,
        top_logprobs=None,
    ):
        """An OpenAI "chat.completion" dict for messages ([{"role", "content"}]):
        {"id", "object", "created", "model", "choices": [{"index", "message": {"role":
        "assistant", "content"}, "logprobs", "finish_reason"}], "usage"}. The prompt is the model's
        chat template (or chat_template: a llama.cpp name such as "chatml") rendered as mint-run
        -cnv does; the reply ends at end of turn, a stop string, max_tokens (None: no limit) or a
        full context. logprobs=True adds each token's logprob, top_logprobs=K its K best
        alternatives. With stream=True, yields "chat.completion.chunk" dicts (delta role, then
        content)."""
        stops = _check_stop(stop)
        want_lp = _util.as_bool(logprobs, "logprobs")
        n_top = _n_top(top_logprobs, "top_logprobs") if want_lp else 0
        ids = self._chat_ids(messages, chat_template, self._context().n_ctx)
        state = State()
        steps = self._run(
            ids, max_tokens,
            _sampling(temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed),
            False, state, n_top, want_lp, stops,
        )  # fmt: skip
        cid, created = "chatcmpl-" + uuid.uuid4().hex, int(time.time())
        if stream:
            return _chat_chunks(self, steps, state, want_lp, cid, created)
        dec = _decoder()
        text, kept = "", []
        for step in steps:
            text += dec.decode(step.text)
            if step.finish == "stop":
                break
            kept.append(step)
        text += _rest(dec, state)
        r = _envelope(self, cid, "chat.completion", created)
        r["choices"] = [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": _chat_logprobs(self, kept) if want_lp else None,
                "finish_reason": state.finish_reason,
            }
        ]
        r["usage"] = _usage(state)
        return r


def _completion_chunks(model, steps, state, prefix, want_lp, cid, created):
    dec = _decoder()

    def chunk(text, lp, finish):
        c = _envelope(model, cid, "text_completion", created)
        c["choices"] = [{"text": text, "index": 0, "logprobs": lp, "finish_reason": finish}]
        return c

    off = len(prefix)
    if prefix:
        yield chunk(prefix, None, None)
    for step in steps:
        shown = dec.decode(step.text)
        if step.finish == "stop":
            if shown:
                yield chunk(shown, None, None)
            break
        lp = _completion_logprobs(model, [step], off) if want_lp else None
        off += len(_piece_str(step.piece))
        yield chunk(shown, lp, None)
    rest = _rest(dec, state)
    if rest:
        yield chunk(rest, None, None)
    yield chunk("", None, state.finish_reason)


def _chat_chunks(model, steps, state, want_lp, cid, created):
    dec = _decoder()

    def chunk(delta, lp, finish):
        c = _envelope(model, cid, "chat.completion.chunk", created)
        c["choices"] = [{"index": 0, "delta": delta, "logprobs": lp, "finish_reason": finish}]
        return c

    yield chunk({"role": "assistant", "content": ""}, None, None)
    for step in steps:
        shown = dec.decode(step.text)
        if step.finish == "stop":
            if shown:
                yield chunk({"content": shown}, None, None)
            break
        yield chunk({"content": shown}, _chat_logprobs(model, [step]) if want_lp else None, None)
    rest = _rest(dec, state)
    if rest:
        yield chunk({"content": rest}, None, None)
    yield chunk({}, None, state.finish_reason)
