"""The low level: Context (one inference session: a paged KV cache for several sequences, the
logits of the last evaluation, tracing and attention capture) and Sampler (mint's chain:
repetition penalty -> top-k -> top-p -> min-p -> temperature -> a seeded draw).

A Context belongs to a Model (Model.context(...) makes one); closing the model closes its
contexts. Logits come back as array('f') copies (numpy.asarray(ctx.logits()) views one as a
float32 array without another copy), so nothing the bindings return points into memory libmint
may reuse or free.
"""

import ctypes
import os
from collections import namedtuple
from ctypes import byref

from . import _lib, _util
from ._lib import check
from .errors import ClosedError, MintArgumentError

BatchEntry = namedtuple("BatchEntry", "token pos seq logits")
BatchEntry.__doc__ = "One entry of a decode batch: a token at a position of a sequence."
BatchEntry.__new__.__defaults__ = (False,)

SampleInfo = namedtuple("SampleInfo", "n_vocab n_top_k n_top_p n_min_p token p greedy n_grammar")
SampleInfo.__doc__ = (
    "What the sampler chain did for one draw: candidates left after each step, the token "
    "picked and its probability in the distribution drawn from (1 for greedy), and the "
    "candidates an attached grammar allowed (n_vocab without one; -1 when greedy's argmax was "
    "allowed alone)."
)

TraceNode = namedtuple(
    "TraceNode",
    "name op rows width weight_type weight_ne act_type bytes_read seconds threads",
)
TraceNode.__doc__ = "One node of the graph the last evaluation ran (Context.trace = True)."

SpecStats = namedtuple("SpecStats", "generated drafted accepted target_passes seconds")


def _cache_info_dict(ci):
    return {name: getattr(ci, name) for name, _ in _lib.mint_cache_info._fields_}


class Context(_util.Closable):
    """One inference session over a model. Prefer Model.context(...), which fills in the
    model's defaults. Every argument left as None takes mint's default (mint_ctx_default_params):
    n_ctx the model's training context (at most 4096), n_threads the online CPUs, n_batch 512,
    n_seq_max 1, kv_block 32, kv_size n_ctx * n_seq_max, kv_type "f32", attention "auto",
    prefix_cache_bytes 0 (memory for prefix-cache blocks beyond the sequences' own)."""

    def __init__(
        self,
        model,
        n_ctx=None,
        n_threads=None,
        n_batch=None,
        n_seq_max=None,
        kv_block=None,
        kv_size=None,
        kv_type=None,
        attention=None,
        max_memory=None,
        isa=None,
        prefix_cache_bytes=None,
    ):
        self._h = None
        self._capture = None
        self._routing = None
        if not isinstance(model, _util.ModelBase):
            raise _lib.errors.MintTypeError(
                f"model must be a mint.Model, not {type(model).__name__}"
            )
        L = _lib.load()
        p = L.mint_ctx_default_params()
        for name, v in (
            ("n_ctx", n_ctx),
            ("n_threads", n_threads),
            ("n_batch", n_batch),
            ("n_seq_max", n_seq_max),
            ("kv_block", kv_block),
            ("kv_size", kv_size),
        ):
            if v is not None:
                setattr(p, name, _util.as_int(v, name))
        if kv_type is not None:
            p.kv_type = _util.choice(kv_type, _lib.KV_TYPES, "kv_type")
        if attention is not None:
            p.attention = _util.choice(attention, _lib.ATTENTION, "attention")
        if max_memory is not None:
            p.max_memory = _util.as_int(max_memory, "max_memory", 0, 2**64 - 1)
        if isa is not None:
            p.isa = _lib.name_bytes(isa, "isa")
        if prefix_cache_bytes is not None:
            p.prefix_cache_bytes = _util.as_int(
                prefix_cache_bytes, "prefix_cache_bytes", 0, 2**64 - 1
            )
        h = ctypes.c_void_p()
        e = _util.err()
        check(L.mint_ctx_create(model._handle(), byref(p), byref(h), byref(e)), e)
        self._L = L
        self._h = h
        self.model = model
        self.n_vocab = model.n_vocab
        model._contexts.add(self)

    # -- lifetime -------------------------------------------------------------------------------

    def _handle(self):
        if self._h is None:
            raise ClosedError("the context is closed")
        return self._h

    def close(self):
        """Frees the context (idempotent). Further use raises mint.ClosedError."""
        if self._h is not None:
            self._L.mint_ctx_free(self._h)
            self._h = None
            self._capture = None
            self.model._contexts.discard(self)

    @property
    def closed(self):
        return self._h is None

    def __repr__(self):
        if self._h is None:
            return "<mint.Context closed>"
        return (
            f"<mint.Context n_ctx={self.n_ctx} n_seq={self.n_seq} n_past={self.n_past} "
            f"attention={self.attention} threads={self.n_threads}>"
        )

    # -- evaluation -----------------------------------------------------------------------------

    def eval(self, tokens, pos=None, all_logits=False):
        """Evaluates tokens on sequence 0 at positions pos, pos+1, ... (default: right after
        what the sequence holds; a smaller pos drops the positions past it first). Keeps the
        logits of the last token, or of every token with all_logits (rows 0..n-1)."""
        h = self._handle()
        ids, n = _util.token_array(tokens)
        if n == 0:
            raise MintArgumentError("eval: no tokens")
        p = self.n_past if pos is None else _util.as_int(pos, "pos", 0)
        e = _util.err()
        check(self._L.mint_eval(h, ids, n, p, _util.as_bool(all_logits, "all_logits"), byref(e)), e)

    def decode(self, entries):
        """Evaluates a batch over several sequences in one forward pass. entries: BatchEntry or
        (token, pos, seq[, logits]) tuples. A sequence's entries must continue it (its first at
        seq_n_past(seq), then in order). The entries asking for logits get rows 0, 1, ... of
        logits(row), in entry order. On an error nothing changes."""
        h = self._handle()
        items = list(entries)
        if not items:
            raise MintArgumentError("decode: no entries")
        arr = (_lib.mint_batch_entry * len(items))()
        for i, it in enumerate(items):
            if not isinstance(it, (tuple, list)) or len(it) not in (3, 4):
                raise _lib.errors.MintTypeError(
                    f"decode: entry {i} must be a (token, pos, seq[, logits]) tuple"
                )
            arr[i].token = _util.as_int(it[0], f"entries[{i}].token")
            arr[i].pos = _util.as_int(it[1], f"entries[{i}].pos")
            arr[i].seq = _util.as_int(it[2], f"entries[{i}].seq")
            arr[i].logits = _util.as_bool(it[3], f"entries[{i}].logits") if len(it) == 4 else False
        e = _util.err()
        check(self._L.mint_decode(h, arr, len(items), byref(e)), e)

    def logits(self, row=-1):
        """The logits (n_vocab float32, a copy) of a row the last evaluation kept; -1 is the
        last row. numpy.asarray(ctx.logits()) gives a float32 array."""
        h = self._handle()
        r = _util.as_int(row, "row")
        p = self._L.mint_get_logits(h, r)
        if not p:
            raise MintArgumentError(
                f"logits row {row} is outside the {self.n_logits} rows the last evaluation kept"
            )
        return _util.floats_at(p, self.n_vocab)

    def _logits_ptr(self, row=-1):
        p = self._L.mint_get_logits(self._handle(), row)
        if not p:
            raise MintArgumentError("no logits: evaluate something first")
        return p

    @property
    def n_logits(self):
        """Rows of logits the last evaluation kept."""
        return self._L.mint_get_n_logits(self._handle())

    # -- sequences ------------------------------------------------------------------------------

    @property
    def n_past(self):
        """Positions sequence 0 holds (the KV cache position mint_eval continues from)."""
        return self._L.mint_ctx_n_past(self._handle())

    def seq_n_past(self, seq):
        n = self._L.mint_seq_n_past(self._handle(), _util.as_int(seq, "seq"))
        if n < 0:
            raise MintArgumentError(f"sequence {seq} is outside 0..{self.n_seq - 1}")
        return n

    def seq_tokens(self, seq=0):
        """The tokens sequence seq holds (a list)."""
        n = self.seq_n_past(seq)
        p = self._L.mint_seq_tokens(self._handle(), seq)
        return [p[i] for i in range(n)] if p and n else []

    def fork(self, src, dst):
        """dst drops what it held and shares every KV block of src (nothing is copied)."""
        e = _util.err()
        check(
            self._L.mint_seq_fork(
                self._handle(), _util.as_int(src, "src"), _util.as_int(dst, "dst"), byref(e)
            ),
            e,
        )

    def truncate(self, seq, n_keep):
        """Keeps positions 0..n_keep-1 of seq and releases the rest (0 empties it)."""
        e = _util.err()
        check(
            self._L.mint_seq_truncate(
                self._handle(), _util.as_int(seq, "seq"), _util.as_int(n_keep, "n_keep"), byref(e)
            ),
            e,
        )

    def prefix(self, seq, tokens):
        """Makes seq hold the longest prefix of tokens available without evaluating (what it
        holds, or full blocks of the prefix cache), at most len(tokens) - 1 positions. Returns
        how many it holds: evaluate tokens[held:] at position held."""
        ids, n = _util.token_array(tokens)
        held = ctypes.c_int32()
        e = _util.err()
        check(
            self._L.mint_seq_prefix(
                self._handle(), _util.as_int(seq, "seq"), ids, n, byref(held), byref(e)
            ),
            e,
        )
        return held.value

    def cache_info(self):
        """The KV pool: block size, blocks used / cached / free / max, bytes, prefix hits,
        copies on write, evictions (a dict)."""
        ci = _lib.mint_cache_info()
        self._L.mint_ctx_cache_info(self._handle(), byref(ci))
        return _cache_info_dict(ci)

    # -- what the context is --------------------------------------------------------------------

    @property
    def n_ctx(self):
        return self._L.mint_ctx_n_ctx(self._handle())

    @property
    def n_seq(self):
        return self._L.mint_ctx_n_seq(self._handle())

    @property
    def n_batch(self):
        return self._L.mint_ctx_n_batch(self._handle())

    @property
    def n_threads(self):
        return self._L.mint_ctx_n_threads(self._handle())

    @property
    def isa(self):
        """Kernel level the context computes with ("avx512vnni", "avx2", "ref", ...)."""
        return _lib.cstr(self._L.mint_ctx_isa_name(self._handle()))

    @property
    def attention(self):
        """The attention algorithm ("naive", "rowwise", "flash"; with auto, the one the last
        evaluation used, or "auto" before any)."""
        return _lib.cstr(self._L.mint_ctx_attention_name(self._handle()))

    @property
    def attention_scratch(self):
        """Attention work space per thread, in bytes."""
        return self._L.mint_ctx_attention_scratch(self._handle())

    @property
    def n_evaluated(self):
        """Tokens evaluated since the context was created."""
        return self._L.mint_ctx_n_evaluated(self._handle())

    def graph_text(self):
        """The op graph, one node per line (mint-run --dump-graph)."""
        return _lib.cstr(self._L.mint_ctx_graph_text(self._handle()))

    # -- seeing inside --------------------------------------------------------------------------

    @property
    def trace(self):
        return getattr(self, "_trace", False)

    @trace.setter
    def trace(self, on):
        self._L.mint_ctx_set_trace(self._handle(), _util.as_bool(on, "trace"))
        self._trace = on

    def last_trace(self):
        """The nodes of the last evaluation (with trace on): a list of TraceNode."""
        nodes = ctypes.POINTER(_lib.mint_trace_node)()
        n = self._L.mint_ctx_last_trace(self._handle(), byref(nodes))
        out = []
        for i in range(n):
            x = nodes[i]
            out.append(
                TraceNode(
                    _lib.cstr(x.name),
                    _lib.cstr(x.op),
                    x.rows,
                    x.width,
                    _lib.cstr(x.weight_type),
                    (x.weight_ne[0], x.weight_ne[1]),
                    _lib.cstr(x.act_type),
                    x.bytes_read,
                    x.seconds,
                    x.threads,
                )
            )
        return out

    def capture_attention(self, max_pos):
        """Records attention weights from now on for rows of sequence 0 at positions < max_pos
        (None stops). Read them with attention_weights()."""
        h = self._handle()
        e = _util.err()
        if max_pos is None:
            check(self._L.mint_ctx_capture_attention(h, None, 0, byref(e)), e)
            self._capture = None
            return
        mp = _util.as_int(max_pos, "max_pos", 1, self.n_ctx)  # positions past n_ctx never come
        info = self.model.info
        n = info.n_layer * info.n_head * mp * mp
        buf = (ctypes.c_float * n)()
        check(self._L.mint_ctx_capture_attention(h, buf, mp, byref(e)), e)
        self._capture = (buf, (info.n_layer, info.n_head, mp, mp))

    def attention_weights(self):
        """A copy of the captured weights as a float32 memoryview of shape
        (layer, head, pos, key): w[l, h, p, k] for k <= p is the weight head h of layer l gave
        key k when the token at position p was evaluated (numpy.asarray(w) for an array)."""
        self._handle()
        if self._capture is None:
            raise MintArgumentError("attention capture is off: call capture_attention(max_pos)")
        buf, shape = self._capture
        return memoryview(bytearray(buf)).cast("f", shape)

    def capture_routing(self, max_pos):
        """A mixture of experts: records from now on, for rows of sequence 0 at positions <
        max_pos, the experts each layer's router chose and their weights (None stops). Read them
        with routing()."""
        h = self._handle()
        e = _util.err()
        if max_pos is None:
            check(self._L.mint_ctx_capture_routing(h, None, None, 0, byref(e)), e)
            self._routing = None
            return
        mp = _util.as_int(max_pos, "max_pos", 1, self.n_ctx)
        info = self.model.info
        k = max(info.n_expert_used, 1)
        n = info.n_layer * mp * k
        ids, w = (ctypes.c_int32 * n)(), (ctypes.c_float * n)()
        check(self._L.mint_ctx_capture_routing(h, ids, w, mp, byref(e)), e)
        self._routing = (ids, w, (info.n_layer, mp, k))

    def routing(self):
        """The captured routing: (ids, weights), an int32 and a float32 memoryview of shape
        (layer, pos, k): the experts layer l chose for the token at position p, the best first,
        and the weights it gave their outputs."""
        self._handle()
        if getattr(self, "_routing", None) is None:
            raise MintArgumentError("routing capture is off: call capture_routing(max_pos)")
        ids, w, shape = self._routing
        return memoryview(bytearray(ids)).cast("i", shape), memoryview(bytearray(w)).cast("f", shape)

    def capture_state(self, max_pos):
        """A hybrid model: records from now on, for rows of sequence 0 at positions < max_pos, the
        L2 norm of each recurrent layer's state per head after the row (None stops). Read them
        with state_norms()."""
        h = self._handle()
        e = _util.err()
        if max_pos is None:
            check(self._L.mint_ctx_capture_state(h, None, 0, byref(e)), e)
            self._state = None
            return
        mp = _util.as_int(max_pos, "max_pos", 1, self.n_ctx)
        info = self.model.info
        shape = (max(info.n_layer_recurrent, 1), max(info.n_state_heads, 1), mp)
        buf = (ctypes.c_float * (shape[0] * shape[1] * mp))()
        check(self._L.mint_ctx_capture_state(h, buf, mp, byref(e)), e)
        self._state = (buf, shape)

    def state_norms(self):
        """The captured state norms: a float32 memoryview of shape (recurrent layer, head, pos)."""
        self._handle()
        if getattr(self, "_state", None) is None:
            raise MintArgumentError("state capture is off: call capture_state(max_pos)")
        buf, shape = self._state
        return memoryview(bytearray(buf)).cast("f", shape)

    # -- decoding over several sequences --------------------------------------------------------

    def beam_search(self, prompt, n_beams=4, max_tokens=64, length_penalty=1.0, ignore_eos=False):
        """Beam search after a prompt (token ids) on sequences 0..n_beams-1 (the context needs
        n_seq_max >= n_beams). Returns (tokens, logprob) of the best beam."""
        h = self._handle()
        ids, n = _util.token_array(prompt, "prompt")
        p = self._L.mint_beam_default_params()
        p.n_beams = _util.as_int(n_beams, "n_beams")
        p.max_tokens = _util.as_int(max_tokens, "max_tokens")
        p.length_penalty = _util.as_float(length_penalty, "length_penalty")
        p.ignore_eos = _util.as_bool(ignore_eos, "ignore_eos")
        cap = max(min(p.max_tokens, self.n_ctx), 1)  # no beam outgrows the context
        out = (ctypes.c_int32 * cap)()
        n_out = ctypes.c_int32()
        lp = ctypes.c_double()
        e = _util.err()
        check(
            self._L.mint_beam_search(h, ids, n, byref(p), out, cap, byref(n_out), byref(lp), byref(e)),
            e,
        )
        return list(out[: n_out.value]), lp.value

    def speculative(
        self, sampler, prompt, draft=None, n_draft=8, lookup_n=3, max_tokens=64,
        ignore_eos=False, on_token=None,
    ):  # fmt: skip
        """Speculative decoding on sequence 0: draft (another Context, same vocabulary) proposes
        up to n_draft tokens, or, with draft None, prompt lookup copies them from the context
        itself (n-grams up to lookup_n). on_token(id) is called with each accepted token (return
        False to stop). Returns (tokens, SpecStats)."""
        h = self._handle()
        if not isinstance(sampler, Sampler):
            raise _lib.errors.MintTypeError(
                f"sampler must be a mint.Sampler, not {type(sampler).__name__}"
            )
        if draft is not None and not isinstance(draft, Context):
            raise _lib.errors.MintTypeError(
                f"draft must be a mint.Context or None, not {type(draft).__name__}"
            )
        ids, n = _util.token_array(prompt, "prompt")
        p = self._L.mint_spec_default_params()
        p.draft = draft._handle() if draft is not None else None
        p.n_draft = _util.as_int(n_draft, "n_draft")
        p.lookup_n = _util.as_int(lookup_n, "lookup_n")
        p.max_tokens = _util.as_int(max_tokens, "max_tokens")
        p.ignore_eos = _util.as_bool(ignore_eos, "ignore_eos")
        got, raised = [], []

        def cb(user, tok):
            got.append(tok)
            if on_token is None:
                return True
            try:
                return on_token(tok) is not False
            except BaseException as ex:  # re-raised after the C call returns
                raised.append(ex)
                return False

        c_cb = _lib.SPEC_ON_TOKEN(cb)
        p.on_token = c_cb
        st = _lib.mint_spec_stats()
        e = _util.err()
        status = self._L.mint_speculative(h, sampler._handle(), ids, n, byref(p), byref(st), byref(e))
        if raised:
            raise raised[0]
        check(status, e)
        return got, SpecStats(st.generated, st.drafted, st.accepted, st.target_passes, st.seconds)


class Sampler(_util.Closable):
    """mint's sampler chain over n_vocab logits, with its own seeded RNG. Order: an attached
    grammar's mask (set_grammar), repetition penalty (last repeat_last_n accepted tokens) -> top-k -> top-p -> min-p -> temperature ->
    a draw; temperature 0 is greedy argmax (after the penalty; lowest id wins a tie). The
    defaults and the accepted ranges are mint-run's (temperature 0..1e6, top_k 0..2^30 with 0 for
    all, top_p in (0, 1], min_p 0..1, repeat_penalty 0.001..1000, repeat_last_n 0..2^20); a value
    outside raises ValueError naming it and its range. seed None draws a random seed."""

    def __init__(
        self,
        n_vocab,
        temperature=0.8,
        top_k=40,
        top_p=0.95,
        min_p=0.05,
        repeat_penalty=1.0,
        repeat_last_n=64,
        seed=None,
    ):
        self._h = None
        self._grammar = None
        L = _lib.load()
        p = L.mint_sampler_default_params()
        p.temp = _util.as_float(temperature, "temperature")
        p.top_k = _util.as_int(top_k, "top_k")
        p.top_p = _util.as_float(top_p, "top_p")
        p.min_p = _util.as_float(min_p, "min_p")
        p.repeat_penalty = _util.as_float(repeat_penalty, "repeat_penalty")
        p.repeat_last_n = _util.as_int(repeat_last_n, "repeat_last_n")
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        p.seed = _util.as_int(seed, "seed", 0, 2**64 - 1)
        self.n_vocab = _util.as_int(n_vocab, "n_vocab", 1)
        e = _util.err()
        # The ranges mint-run accepts, checked by the library (mint_sampler_create alone would
        # take a negative temperature as greedy and a negative top_k as all tokens).
        if L.mint_sampler_params_check(byref(p), byref(e)):
            msg = e.msg.decode("utf-8", "replace")
            raise MintArgumentError(msg.replace("sampler: temp ", "sampler: temperature ", 1))
        h = ctypes.c_void_p()
        check(L.mint_sampler_create(byref(p), self.n_vocab, byref(h), byref(e)), e)
        self._L = L
        self._h = h
        self.params = {name: getattr(p, name) for name, _ in _lib.mint_sampler_params._fields_}

    def _handle(self):
        if self._h is None:
            raise ClosedError("the sampler is closed")
        return self._h

    def close(self):
        if self._h is not None:
            self._L.mint_sampler_free(self._h)
            self._h = None

    def __repr__(self):
        return f"<mint.Sampler {self.params}>"

    def sample(self, logits):
        """Picks a token from n_vocab logits (array('f'), a numpy float32 array, a list)."""
        buf = _util.float_array(logits, self.n_vocab)
        return self._L.mint_sampler_sample(self._handle(), buf)

    def sample_info(self, logits):
        """sample(), also reporting how many candidates each step left: a SampleInfo."""
        buf = _util.float_array(logits, self.n_vocab)
        return self._sample_info_ptr(buf)

    def _sample_info_ptr(self, ptr):
        info = _lib.mint_sample_info()
        self._L.mint_sampler_sample_info(self._handle(), ptr, byref(info))
        return SampleInfo(
            info.n_vocab, info.n_top_k, info.n_top_p, info.n_min_p, info.token, info.p, info.greedy,
            info.n_grammar,
        )  # fmt: skip

    def set_grammar(self, grammar):
        """Attaches a mint.Grammar (None detaches): every draw is then among the tokens it
        allows, before the rest of the chain. The sampler keeps it alive while attached; whoever
        steps the generation accepts each token into it (the library's generation step does)."""
        h = None if grammar is None else grammar._handle()
        self._L.mint_sampler_set_grammar(self._handle(), h)
        self._grammar = grammar

    def accept(self, token):
        """Records a token in the repetition-penalty history."""
        t = _util.as_int(token, "token")
        self._L.mint_sampler_accept(self._handle(), t)

    def reset(self, seed=None):
        """Clears the history and reseeds (seed None: the one it was created with)."""
        s = self.params["seed"] if seed is None else _util.as_int(seed, "seed", 0, 2**64 - 1)
        self._L.mint_sampler_reset(self._handle(), s)

