"""Files and the drivers: File (a validated model file: metadata, tensor table, raw bytes),
inspect() (what mint-inspect prints, as a dict), quantize() (mint-quantize), perplexity()
(mint-perplexity, with KL divergence against a base file) and synth_write() (a model with
random weights, for tests that need no data)."""

import ctypes
from ctypes import byref

from . import _lib, _util
from ._lib import check
from .errors import ClosedError
from .model import Model

_ARRAY_CTYPES = {
    0: ctypes.c_uint8, 1: ctypes.c_int8, 2: ctypes.c_uint16, 3: ctypes.c_int16,
    4: ctypes.c_uint32, 5: ctypes.c_int32, 6: ctypes.c_float, 7: ctypes.c_bool,
    10: ctypes.c_uint64, 11: ctypes.c_int64, 12: ctypes.c_double,
}  # fmt: skip


def version():
    """libmint's version string."""
    return _lib.cstr(_lib.load().mint_version())


def isa():
    """The kernel level the process computes with ("avx512vnni", "avx2", "neon", "ref", ...)."""
    return _lib.cstr(_lib.load().mint_isa_name())


def type_name(code):
    """Name of a ggml type code ("F32", "Q4_K", ...)."""
    return _lib.cstr(_lib.load().mint_type_name(_util.as_int(code, "type", 0, 2**32 - 1)))


def hash64(data):
    """XXH3-64 of bytes (what mint-inspect --hash prints)."""
    b = bytes(memoryview(data)) if not isinstance(data, bytes) else data
    return _lib.load().mint_hash64(b, len(b))


class File(_util.Closable):
    """A model file opened and validated by mint (GGUF, safetensors, Hugging Face folder), for
    inspection. A context manager."""

    def __init__(self, path):
        self._h = None
        p = _lib.fspath_bytes(path, "path")
        L = _lib.load()
        h = ctypes.c_void_p()
        e = _util.err()
        check(L.mint_file_open(p, byref(h), byref(e)), e)
        self._L, self._h, self.path = L, h, p.decode("utf-8", "replace")
        fi = _lib.mint_file_info()
        L.mint_file_get_info(h, byref(fi))
        self.info = {name: getattr(fi, name) for name, _ in _lib.mint_file_info._fields_}
        self.info["format"] = _lib.FILE_FORMATS.get(fi.format, str(fi.format))

    def _handle(self):
        if self._h is None:
            raise ClosedError("the file is closed")
        return self._h

    def close(self):
        if self._h is not None:
            self._L.mint_file_close(self._h)
            self._h = None

    def __repr__(self):
        return f"<mint.File {self.path!r} {self.info['format']}>"

    # -- metadata -------------------------------------------------------------------------------

    def keys(self):
        """Metadata keys, in file order."""
        return [k["key"] for k in self.metadata(values=False)]

    def metadata(self, values=True, max_str=60, max_items=8):
        """One dict per metadata entry: key, type, elem_type (arrays), n, and text (mint's
        rendering, as mint-inspect prints it); with values, also value (get(key)) for scalars
        and strings."""
        h = self._handle()
        out = []
        buf = ctypes.create_string_buffer(1024)
        for i in range(self.info["n_kv"]):
            kv = _lib.mint_kv_info()
            check(self._L.mint_file_kv(h, i, byref(kv)), None)
            self._L.mint_file_kv_format(h, i, buf, len(buf), max_str, max_items)
            d = {
                "key": _lib.cstr(kv.key),
                "type": _lib.VALUE_TYPES.get(kv.type, str(kv.type)),
                "elem_type": _lib.VALUE_TYPES.get(kv.elem_type) if kv.type == 9 else None,
                "n": kv.n,
                "text": buf.value.decode("utf-8", "replace"),
            }
            if values and kv.type != 9:
                d["value"] = self.get(d["key"])
            out.append(d)
        return out

    def get(self, key):
        """A metadata value as Python: int, float, bool, str, or a list for an array."""
        h = self._handle()
        k = _lib.name_bytes(key, "key")
        kv = self._find_kv(key)
        e = _util.err()
        t = kv.type
        if t == 8:
            p, n = ctypes.c_void_p(), ctypes.c_uint64()
            check(self._L.mint_file_get_str(h, k, byref(p), byref(n), byref(e)), e)
            return ctypes.string_at(p, n.value).decode("utf-8", "replace") if n.value else ""
        if t == 9:
            et, n, p = ctypes.c_int(), ctypes.c_uint64(), ctypes.c_void_p()
            check(self._L.mint_file_get_arr(h, k, byref(et), byref(n), byref(p), byref(e)), e)
            if et.value == 8:
                out = []
                for i in range(n.value):
                    s, ln = ctypes.c_void_p(), ctypes.c_uint64()
                    check(self._L.mint_file_get_arr_str(h, k, i, byref(s), byref(ln), byref(e)), e)
                    out.append(ctypes.string_at(s, ln.value).decode("utf-8", "replace") if ln.value else "")
                return out
            ct = _ARRAY_CTYPES[et.value]
            return list((ct * n.value).from_address(p.value)) if n.value else []
        getters = {
            0: ("mint_file_get_u32", ctypes.c_uint32), 2: ("mint_file_get_u32", ctypes.c_uint32),
            4: ("mint_file_get_u32", ctypes.c_uint32), 1: ("mint_file_get_i32", ctypes.c_int32),
            3: ("mint_file_get_i32", ctypes.c_int32), 5: ("mint_file_get_i32", ctypes.c_int32),
            10: ("mint_file_get_u64", ctypes.c_uint64), 11: ("mint_file_get_u64", ctypes.c_uint64),
            6: ("mint_file_get_f32", ctypes.c_float), 12: ("mint_file_get_f32", ctypes.c_float),
            7: ("mint_file_get_bool", ctypes.c_bool),
        }  # fmt: skip
        fn, ct = getters[t]
        v = ct()
        check(getattr(self._L, fn)(h, k, byref(v), byref(e)), e)
        return v.value

    def _find_kv(self, key):
        h = self._handle()
        for i in range(self.info["n_kv"]):
            kv = _lib.mint_kv_info()
            self._L.mint_file_kv(h, i, byref(kv))
            if _lib.cstr(kv.key) == key:
                return kv
        raise _lib.errors.MintNotFoundError(f"{self.path}: no metadata key '{key}'")

    # -- tensors --------------------------------------------------------------------------------

    @staticmethod
    def _tensor_dict(t):
        return {
            "name": _lib.cstr(t.name),
            "type": _lib.cstr(_lib.load().mint_type_name(t.type)),
            "type_code": t.type,
            "computable": t.type_computable,
            "shape": tuple(t.ne[i] for i in range(t.n_dims)),
            "offset": t.offset,
            "file_offset": t.file_offset,
            "nbytes": t.nbytes,
        }

    def tensors(self):
        """One dict per tensor: name, type, type_code, computable, shape (ne order: ne[0]
        innermost), offset, file_offset, nbytes."""
        h = self._handle()
        out = []
        for i in range(self.info["n_tensors"]):
            t = _lib.mint_tensor_info()
            check(self._L.mint_file_tensor(h, i, byref(t)), None)
            out.append(self._tensor_dict(t))
        return out

    def tensor(self, name):
        """The tensor dict of a name (MintNotFoundError if absent)."""
        t = self._find_tensor(name)
        return self._tensor_dict(t)

    def tensor_bytes(self, name):
        """A copy of a tensor's raw bytes (numpy.frombuffer(b, numpy.float32) for an F32 one;
        reshape with the shape reversed)."""
        t = self._find_tensor(name)
        return ctypes.string_at(t.data, t.nbytes)

    def _find_tensor(self, name):
        t = _lib.mint_tensor_info()
        st = self._L.mint_file_find_tensor(self._handle(), _lib.name_bytes(name, "name"), byref(t))
        if st:
            raise _lib.errors.error_for(st, f"{self.path}: no tensor '{name}'")
        return t

    def verify_hashes(self):
        """Checks the tensor hashes mint-quantize recorded; returns the number checked."""
        n = ctypes.c_uint64()
        e = _util.err()
        check(self._L.mint_verify_hashes(self._handle(), byref(n), byref(e)), e)
        return n.value


def inspect(path):
    """What mint-inspect shows, as a dict: path, info (format, version, sizes, offsets),
    metadata (list of dicts), tensors (list of dicts), n_params, types (tensors per type)."""
    with File(path) as f:
        tensors = f.tensors()
        types = {}
        n_params = 0
        for t in tensors:
            types[t["type"]] = types.get(t["type"], 0) + 1
            n = 1
            for d in t["shape"]:
                n *= d
            n_params += n
        return {
            "path": f.path,
            "info": dict(f.info),
            "metadata": f.metadata(),
            "tensors": tensors,
            "n_params": n_params,
            "types": types,
        }


def quantize(
    src, dst, type, *, pure=False, leave_output=False, allow_requantize=False, output_type=None,
    token_embd_type=None, overrides=(), n_threads=0, progress=None, imatrix=None,
    include_weights=(), exclude_weights=(),
):  # fmt: skip
    """Quantizes a model (GGUF, safetensors, Hugging Face folder) to a GGUF of file type
    `type` ("Q4_K_M", "Q8_0", "F16", ... as llama-quantize names them), written atomically.
    Returns one dict per tensor: name, from, to, reason (why that type). progress(done, total)
    is called with bytes written. imatrix: the path of an importance matrix (llama-imatrix's
    GGUF or .dat), as llama-quantize --imatrix; include_weights / exclude_weights: name
    substrings of the tensors to use it for / not (its --include-weights / --exclude-weights)."""
    s = _lib.fspath_bytes(src, "src")
    d = _lib.fspath_bytes(dst, "dst")
    L = _lib.load()
    p = _lib.mint_quantize_params()
    p.ftype = _lib.name_bytes(type, "type")
    p.pure = _util.as_bool(pure, "pure")
    p.leave_output = _util.as_bool(leave_output, "leave_output")
    p.allow_requantize = _util.as_bool(allow_requantize, "allow_requantize")
    if output_type is not None:
        p.output_type = _lib.name_bytes(output_type, "output_type")
    if token_embd_type is not None:
        p.token_embd_type = _lib.name_bytes(token_embd_type, "token_embd_type")
    if isinstance(overrides, str):
        overrides = [overrides]
    ov = [_lib.name_bytes(o, "overrides[]") for o in overrides]
    arr = (ctypes.c_char_p * max(len(ov), 1))(*ov)
    p.overrides = arr if ov else None
    p.n_overrides = len(ov)
    p.n_threads = _util.as_int(n_threads, "n_threads", 0)
    filters = []
    for what, names in (("include_weights", include_weights), ("exclude_weights", exclude_weights)):
        if isinstance(names, str):
            names = [names]
        b = [_lib.name_bytes(n, what + "[]") for n in names]
        filters.append(((ctypes.c_char_p * max(len(b), 1))(*b), len(b)))
    p.include_weights, p.n_include_weights = filters[0] if filters[0][1] else (None, 0)
    p.exclude_weights, p.n_exclude_weights = filters[1] if filters[1][1] else (None, 0)
    im = ctypes.c_void_p()
    if imatrix is not None:
        p.imatrix_file = _lib.fspath_bytes(imatrix, "imatrix")
        e = _util.err()
        check(L.mint_imatrix_load(p.imatrix_file, byref(im), byref(e)), e)
        p.imatrix = im
    decisions, raised = [], []

    def on_tensor(user, name, frm, to, reason):
        decisions.append({"name": _lib.cstr(name), "from": _lib.cstr(frm), "to": _lib.cstr(to),
                          "reason": _lib.cstr(reason)})  # fmt: skip

    def on_progress(user, done, total):
        if progress is not None and not raised:
            try:
                progress(done, total)
            except BaseException as ex:
                raised.append(ex)

    c_tensor = _lib.QUANT_ON_TENSOR(on_tensor)
    c_progress = _lib.QUANT_PROGRESS(on_progress)
    p.on_tensor = c_tensor
    p.progress = c_progress
    e = _util.err()
    try:
        st = L.mint_quantize_file(s, d, byref(p), byref(e))
    finally:
        if im:
            L.mint_imatrix_free(im)
    if raised:
        raise raised[0]
    check(st, e)
    return decisions


def perplexity(
    model, text, n_ctx=512, n_chunks=None, n_threads=None, kv_type="f32", attention="auto",
    kld_base_out=None, kld_base_in=None, on_chunk=None,
):  # fmt: skip
    """Perplexity of text by llama-perplexity's method (mint-perplexity): chunks of n_ctx
    tokens, the second half of each scored. model: a mint.Model or a path. kld_base_out saves
    the model's log-probabilities (llama.cpp's KL base file); kld_base_in compares against
    such a file (KL divergence, delta-p, same top token). on_chunk(i, n, ppl) reports progress.
    Returns a dict: ppl, ppl_err, n_ctx, n_chunks, count, n_text_tokens, seconds, and with
    kld_base_in the KL statistics (kld, kld_err, same_top, kld_pct, dp_pct, ...)."""
    own = None
    if not isinstance(model, Model):
        own = model = Model(model)
    try:
        L = _lib.load()
        b = _lib.text_bytes(text)
        p = L.mint_ppl_default_params()
        p.n_ctx = _util.as_int(n_ctx, "n_ctx", 1)
        p.n_chunks = -1 if n_chunks is None else _util.as_int(n_chunks, "n_chunks")
        p.n_threads = 0 if n_threads is None else _util.as_int(n_threads, "n_threads", 0)
        p.kv_type = _util.choice(kv_type, _lib.KV_TYPES, "kv_type")
        p.attention = _util.choice(attention, _lib.ATTENTION, "attention")
        if kld_base_out is not None:
            p.kld_base_out = _lib.fspath_bytes(kld_base_out, "kld_base_out")
        if kld_base_in is not None:
            p.kld_base_in = _lib.fspath_bytes(kld_base_in, "kld_base_in")
        raised = []

        def cb(user, i, n, ppl):
            if on_chunk is not None and not raised:
                try:
                    on_chunk(i, n, ppl)
                except BaseException as ex:
                    raised.append(ex)

        c_cb = _lib.PPL_ON_CHUNK(cb)
        p.on_chunk = c_cb
        r = _lib.mint_ppl_result()
        e = _util.err()
        st = L.mint_perplexity(model._handle(), b, len(b), byref(p), byref(r), byref(e))
        if raised:
            raise raised[0]
        check(st, e)
    finally:
        if own is not None:
            own.close()
    out = {}
    for name, _ in _lib.mint_ppl_result._fields_:
        v = getattr(r, name)
        if isinstance(v, _lib.mint_ppl_percentiles):
            v = {k: getattr(v, k) for k in _lib.PERCENTILES}
        out[name] = v
    if not r.has_kld:
        base = ("n_ctx", "n_chunks", "n_text_tokens", "count", "ppl", "ppl_err", "seconds", "has_kld")
        out = {k: out[k] for k in base}
    return out


def synth_write(path, preset="small", ftype="F32", vocab=None, seed=1, n_threads=0, shape=None):
    """Writes a GGUF with random weights: preset "small" (256 wide, 4 layers, GQA),
    "mha" (128 wide, 2 layers) or "tinyllama" (TinyLlama-1.1B's shapes), or "llama3", "qwen2",
    "qwen3", "phi3", "gpt2", "gemma2", "gemma3", and the mixtures of experts "qwen3moe", "olmoe",
    "mixtral" with shape "real" (Llama-3.2-1B, Qwen2.5-0.5B, Qwen3-0.6B, Phi-3-mini, GPT-2 124M,
    Gemma-2-2B, Gemma-3-1B, Qwen3-30B-A3B, OLMoE-1B-7B, Mixtral-8x7B), "tiny" or "micro"; ftype as
    llama-quantize names file types. Its text is noise; its shapes, speed and formats are
    real. Returns path."""
    d = _lib.fspath_bytes(path, "path")
    L = _lib.load()
    p = _lib.mint_synth_params()
    p.preset = _lib.name_bytes(preset, "preset")
    p.ftype = _lib.name_bytes(ftype, "ftype")
    if vocab is not None:
        p.vocab = _lib.fspath_bytes(vocab, "vocab")
    p.seed = _util.as_int(seed, "seed", 0, 2**64 - 1)
    p.n_threads = _util.as_int(n_threads, "n_threads", 0)
    if shape is not None:
        p.shape = _lib.name_bytes(shape, "shape")
    e = _util.err()
    check(L.mint_synth_write(byref(p), d, byref(e)), e)
    return path


def measure_read_bandwidth(n_threads=1, nbytes=64 << 20, reps=3):
    """Memory read bandwidth in GB/s: n_threads threads streaming nbytes, the median of reps
    passes (each thread streams its share as a one-token matmul streams its weights)."""
    L = _lib.load()
    gb = ctypes.c_double()
    e = _util.err()
    check(
        L.mint_measure_read_bandwidth(
            _util.as_int(n_threads, "n_threads", 1), _util.as_int(nbytes, "nbytes", 1, 2**62),
            _util.as_int(reps, "reps", 1), byref(gb), byref(e),
        ),
        e,
    )  # fmt: skip
    return gb.value

