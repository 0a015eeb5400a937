"""The ctypes layer: finding libmint.so, mirrors of mint.h's structs, and the functions'
prototypes. Nothing here is Pythonic; mint/model.py and mint/files.py build the API on it.

Library lookup order (the first that exists wins; see library_candidates()):
  1. MINT_LIBRARY: a path to libmint.so or libmint.so.0 (an error if it does not load);
  2. the prefix recorded when the package was installed (mint/_config.py: LIBDIR, written by
     `pip install` from MINT_PREFIX or from pkg-config's libdir for mint);
  3. ctypes.util.find_library("mint"), then "libmint.so.0" through the dynamic loader's own
     search (LD_LIBRARY_PATH, ld.so.cache, /usr/local/lib ...).

The struct mirrors must match mint.h field for field; tests/test_abi.py compiles a C program
against the installed header and compares every struct's size and every field's offset, and the
field names, with these.
"""

import ctypes
import ctypes.util
import os
import threading

from . import errors

c_bool = ctypes.c_bool
c_char_p = ctypes.c_char_p
c_double = ctypes.c_double
c_float = ctypes.c_float
c_int = ctypes.c_int
c_int32 = ctypes.c_int32
c_int64 = ctypes.c_int64
c_size_t = ctypes.c_size_t
c_uint32 = ctypes.c_uint32
c_uint64 = ctypes.c_uint64
c_void_p = ctypes.c_void_p
POINTER = ctypes.POINTER
c_enum = ctypes.c_int  # C enums are ints on every ABI mint supports

# ---------------------------------------------------------------------------------------------
# Enums (values as in mint.h; test_abi.py checks them)

MINT_OK = 0
MINT_E_LIMIT = 6
MINT_ERR_MSG_MAX = 512

KV_TYPES = {"f32": 0, "f16": 1, "q8_0": 2, "q4_0": 3}
ATTENTION = {"auto": 0, "naive": 1, "rowwise": 2, "flash": 3}
FILE_FORMATS = {0: "gguf", 1: "safetensors", 2: "hf_dir"}
VALUE_TYPES = {
    0: "u8", 1: "i8", 2: "u16", 3: "i16", 4: "u32", 5: "i32", 6: "f32", 7: "bool",
    8: "string", 9: "array", 10: "u64", 11: "i64", 12: "f64",
}  # fmt: skip
CHAT_TEMPLATES = {"unknown": 0, "zephyr": 1, "llama2": 2, "chatml": 3}

# C names of the enum constants the bindings rely on, with their values (checked against mint.h).
ENUM_VALUES = {
    "MINT_OK": 0, "MINT_E_IO": 1, "MINT_E_FORMAT": 2, "MINT_E_UNSUPPORTED": 3, "MINT_E_NOMEM": 4,
    "MINT_E_ARG": 5, "MINT_E_LIMIT": 6, "MINT_E_NOT_FOUND": 7, "MINT_E_TYPE": 8,
    "MINT_ERR_MSG_MAX": MINT_ERR_MSG_MAX,
    "MINT_FORMAT_GGUF": 0, "MINT_FORMAT_SAFETENSORS": 1, "MINT_FORMAT_HF_DIR": 2,
    "MINT_VAL_U8": 0, "MINT_VAL_I8": 1, "MINT_VAL_U16": 2, "MINT_VAL_I16": 3, "MINT_VAL_U32": 4,
    "MINT_VAL_I32": 5, "MINT_VAL_F32": 6, "MINT_VAL_BOOL": 7, "MINT_VAL_STRING": 8,
    "MINT_VAL_ARRAY": 9, "MINT_VAL_U64": 10, "MINT_VAL_I64": 11, "MINT_VAL_F64": 12,
    "MINT_KV_F32": 0, "MINT_KV_F16": 1, "MINT_KV_Q8_0": 2, "MINT_KV_Q4_0": 3,
    "MINT_ATTENTION_AUTO": 0, "MINT_ATTENTION_NAIVE": 1, "MINT_ATTENTION_ROWWISE": 2,
    "MINT_ATTENTION_FLASH": 3,
    "MINT_CHAT_UNKNOWN": 0, "MINT_CHAT_ZEPHYR": 1, "MINT_CHAT_LLAMA2": 2, "MINT_CHAT_CHATML": 3,
    "MINT_FINISH_NONE": 0, "MINT_FINISH_STOP": 1, "MINT_FINISH_LENGTH": 2, "MINT_FINISH_EOS": 3,
    "MINT_GEN_MAX_STOP": 16, "MINT_GEN_MAX_TOP": 20,
}  # fmt: skip
MINT_GEN_MAX_STOP = 16
MINT_GEN_MAX_TOP = 20
FINISH_NAMES = {0: None, 1: "stop", 2: "length", 3: "stop"}  # mint_finish_name's spelling


# ---------------------------------------------------------------------------------------------
# Structs, in mint.h's order. `_c_name_` is the C typedef (for the ABI test).


class Struct(ctypes.Structure):
    _c_name_ = None


class mint_err(Struct):
    _c_name_ = "mint_err"
    _fields_ = [("code", c_enum), ("msg", ctypes.c_char * MINT_ERR_MSG_MAX)]


class mint_file_info(Struct):
    _c_name_ = "mint_file_info"
    _fields_ = [
        ("format", c_enum),
        ("version", c_uint32),
        ("file_size", c_uint64),
        ("n_kv", c_uint64),
        ("n_tensors", c_uint64),
        ("alignment", c_uint32),
        ("header_size", c_uint64),
        ("data_offset", c_uint64),
        ("data_size", c_uint64),
    ]


class mint_tensor_info(Struct):
    _c_name_ = "mint_tensor_info"
    _fields_ = [
        ("name", c_char_p),
        ("type", c_uint32),
        ("type_known", c_bool),
        ("type_computable", c_bool),
        ("n_dims", c_uint32),
        ("ne", c_int64 * 4),
        ("offset", c_uint64),
        ("file_offset", c_uint64),
        ("nbytes", c_uint64),
        ("data", c_void_p),
    ]


class mint_kv_info(Struct):
    _c_name_ = "mint_kv_info"
    _fields_ = [
        ("key", c_char_p),
        ("type", c_enum),
        ("elem_type", c_enum),
        ("n", c_uint64),
        ("file_offset", c_uint64),
    ]


class mint_model_params(Struct):
    _c_name_ = "mint_model_params"
    _fields_ = [
        ("vocab_only", c_bool),
        ("no_repack", c_bool),
        ("no_mmap", c_bool),
        ("mlock", c_bool),
    ]


class mint_model_desc(Struct):
    _c_name_ = "mint_model_desc"
    _fields_ = [
        ("arch", c_char_p),
        ("name", c_char_p),
        ("n_vocab", c_int32),
        ("n_ctx_train", c_int32),
        ("n_embd", c_int32),
        ("n_ff", c_int32),
        ("n_layer", c_int32),
        ("n_head", c_int32),
        ("n_head_kv", c_int32),
        ("head_dim", c_int32),
        ("n_rot", c_int32),
        ("rope_base", c_float),
        ("rope_freq_scale", c_float),
        ("rms_eps", c_float),
        ("bos", c_int32),
        ("eos", c_int32),
        ("add_bos", c_bool),
        ("n_params", c_uint64),
        ("weight_bytes", c_uint64),
        ("bytes_per_token", c_uint64),
        ("chat_template", c_char_p),
        ("types", c_char_p),
        ("locked", c_bool),
        ("lock_error", c_char_p),
        ("n_expert", c_int32),
        ("n_expert_used", c_int32),
        ("n_layer_recurrent", c_int32),
        ("n_state_heads", c_int32),
        ("state_bytes", c_uint64),
    ]


class mint_ctx_params(Struct):
    _c_name_ = "mint_ctx_params"
    _fields_ = [
        ("n_threads", c_int32),
        ("n_ctx", c_int32),
        ("n_batch", c_int32),
        ("n_seq_max", c_int32),
        ("kv_block", c_int32),
        ("kv_size", c_int32),
        ("kv_type", c_enum),
        ("attention", c_enum),
        ("max_memory", c_uint64),
        ("isa", c_char_p),
        ("prefix_cache_bytes", c_uint64),
    ]


class mint_batch_entry(Struct):
    _c_name_ = "mint_batch_entry"
    _fields_ = [("token", c_int32), ("pos", c_int32), ("seq", c_int32), ("logits", c_bool)]


class mint_cache_info(Struct):
    _c_name_ = "mint_cache_info"
    _fields_ = [
        ("block", c_int32),
        ("blocks_used", c_int32),
        ("blocks_cached", c_int32),
        ("blocks_free", c_int32),
        ("blocks_max", c_int32),
        ("bytes_block", c_uint64),
        ("bytes_alloc", c_uint64),
        ("prefix_hits", c_uint64),
        ("copies", c_uint64),
        ("evictions", c_uint64),
        ("bytes_state", c_uint64),
        ("state_restores", c_uint64),
        ("state_replayed", c_uint64),
    ]


class mint_trace_node(Struct):
    _c_name_ = "mint_trace_node"
    _fields_ = [
        ("name", c_char_p),
        ("op", c_char_p),
        ("rows", c_int32),
        ("width", c_int64),
        ("weight_type", c_char_p),
        ("weight_ne", c_int64 * 2),
        ("act_type", c_char_p),
        ("bytes_read", c_uint64),
        ("seconds", c_double),
        ("threads", c_int32),
    ]


class mint_sampler_params(Struct):
    _c_name_ = "mint_sampler_params"
    _fields_ = [
        ("temp", c_float),
        ("top_k", c_int32),
        ("top_p", c_float),
        ("min_p", c_float),
        ("repeat_penalty", c_float),
        ("repeat_last_n", c_int32),
        ("seed", c_uint64),
    ]


class mint_sample_info(Struct):
    _c_name_ = "mint_sample_info"
    _fields_ = [
        ("n_vocab", c_int32),
        ("n_top_k", c_int32),
        ("n_top_p", c_int32),
        ("n_min_p", c_int32),
        ("token", c_int32),
        ("p", c_float),
        ("greedy", c_bool),
        ("n_grammar", c_int32),
    ]


class mint_fim_tokens(Struct):
    _c_name_ = "mint_fim_tokens"
    _fields_ = [
        ("pre", c_int32),
        ("suf", c_int32),
        ("mid", c_int32),
        ("pad", c_int32),
        ("rep", c_int32),
        ("sep", c_int32),
    ]


class mint_grammar_params(Struct):
    _c_name_ = "mint_grammar_params"
    _fields_ = [
        ("root", c_char_p),
        ("trigger_words", POINTER(c_char_p)),
        ("n_trigger_words", c_int32),
        ("trigger_patterns", POINTER(c_char_p)),
        ("n_trigger_patterns", c_int32),
        ("trigger_tokens", POINTER(c_int32)),
        ("n_trigger_tokens", c_int32),
    ]


class mint_gen_params(Struct):
    _c_name_ = "mint_gen_params"
    _fields_ = [
        ("max_tokens", c_int32),
        ("stop", POINTER(c_char_p)),
        ("n_stop", c_int32),
        ("n_top", c_int32),
        ("logprobs", c_bool),
        ("sample_info", c_bool),
        ("ignore_eos", c_bool),
        ("after_bos", c_bool),
        ("post_sampling", c_bool),
    ]


class mint_gen_token(Struct):
    _c_name_ = "mint_gen_token"
    _fields_ = [
        ("token", c_int32),
        ("info", mint_sample_info),
        ("piece", c_void_p),
        ("n_piece", c_size_t),
        ("text", c_void_p),
        ("n_text", c_size_t),
        ("n_held", c_size_t),
        ("logprob", c_double),
        ("n_top", c_int32),
        ("top_id", c_int32 * MINT_GEN_MAX_TOP),
        ("top_logprob", c_double * MINT_GEN_MAX_TOP),
        ("finish", c_int),
        ("n_generated", c_int32),
    ]


class mint_beam_params(Struct):
    _c_name_ = "mint_beam_params"
    _fields_ = [
        ("n_beams", c_int32),
        ("length_penalty", c_float),
        ("max_tokens", c_int32),
        ("ignore_eos", c_bool),
    ]


SPEC_ON_TOKEN = ctypes.CFUNCTYPE(c_bool, c_void_p, c_int32)


class mint_spec_params(Struct):
    _c_name_ = "mint_spec_params"
    _fields_ = [
        ("draft", c_void_p),
        ("n_draft", c_int32),
        ("lookup_n", c_int32),
        ("max_tokens", c_int32),
        ("ignore_eos", c_bool),
        ("on_token", SPEC_ON_TOKEN),
        ("user", c_void_p),
    ]


class mint_spec_stats(Struct):
    _c_name_ = "mint_spec_stats"
    _fields_ = [
        ("generated", c_uint64),
        ("drafted", c_uint64),
        ("accepted", c_uint64),
        ("target_passes", c_uint64),
        ("seconds", c_double),
    ]


PPL_ON_CHUNK = ctypes.CFUNCTYPE(None, c_void_p, c_int32, c_int32, c_double)


class mint_ppl_params(Struct):
    _c_name_ = "mint_ppl_params"
    _fields_ = [
        ("n_ctx", c_int32),
        ("n_chunks", c_int32),
        ("n_threads", c_int32),
        ("kv_type", c_enum),
        ("attention", c_enum),
        ("kld_base_out", c_char_p),
        ("kld_base_in", c_char_p),
        ("n_batch", c_int32),
        ("imatrix", c_void_p),
        ("imatrix_output", c_bool),
        ("on_chunk", PPL_ON_CHUNK),
        ("user", c_void_p),
    ]


PERCENTILES = ("max", "p999", "p99", "p95", "p90", "p75", "median", "p25", "p10", "p5", "p1",
               "p01", "min")  # fmt: skip


class mint_ppl_percentiles(Struct):
    _c_name_ = "mint_ppl_percentiles"
    _fields_ = [(n, c_double) for n in PERCENTILES]


class mint_ppl_result(Struct):
    _c_name_ = "mint_ppl_result"
    _fields_ = [
        ("n_ctx", c_int32),
        ("n_chunks", c_int32),
        ("n_text_tokens", c_uint64),
        ("count", c_uint64),
        ("ppl", c_double),
        ("ppl_err", c_double),
        ("seconds", c_double),
        ("has_kld", c_bool),
        ("ppl_base", c_double),
        ("ppl_base_err", c_double),
        ("cor", c_double),
        ("log_ratio", c_double),
        ("log_ratio_err", c_double),
        ("ppl_ratio", c_double),
        ("ppl_ratio_err", c_double),
        ("ppl_diff", c_double),
        ("ppl_diff_err", c_double),
        ("kld", c_double),
        ("kld_err", c_double),
        ("kld_pct", mint_ppl_percentiles),
        ("dp", c_double),
        ("dp_err", c_double),
        ("dp_pct", mint_ppl_percentiles),
        ("dp_rms", c_double),
        ("dp_rms_err", c_double),
        ("same_top", c_double),
        ("same_top_err", c_double),
    ]


QUANT_PROGRESS = ctypes.CFUNCTYPE(None, c_void_p, c_uint64, c_uint64)
QUANT_ON_TENSOR = ctypes.CFUNCTYPE(None, c_void_p, c_char_p, c_char_p, c_char_p, c_char_p)


class mint_quantize_params(Struct):
    _c_name_ = "mint_quantize_params"
    _fields_ = [
        ("ftype", c_char_p),
        ("pure", c_bool),
        ("leave_output", c_bool),
        ("allow_requantize", c_bool),
        ("output_type", c_char_p),
        ("token_embd_type", c_char_p),
        ("overrides", POINTER(c_char_p)),
        ("n_overrides", c_int),
        ("n_threads", c_int),
        ("progress", QUANT_PROGRESS),
        ("on_tensor", QUANT_ON_TENSOR),
        ("user", c_void_p),
        ("imatrix", c_void_p),
        ("imatrix_file", c_char_p),
        ("include_weights", POINTER(c_char_p)),
        ("n_include_weights", c_int),
        ("exclude_weights", POINTER(c_char_p)),
        ("n_exclude_weights", c_int),
    ]


class mint_synth_params(Struct):
    _c_name_ = "mint_synth_params"
    _fields_ = [
        ("preset", c_char_p),
        ("ftype", c_char_p),
        ("vocab", c_char_p),
        ("seed", c_uint64),
        ("n_threads", c_int),
        ("shape", c_char_p),
    ]


class mint_imatrix_info(Struct):
    _c_name_ = "mint_imatrix_info"
    _fields_ = [
        ("n_entries", c_int64),
        ("n_datasets", c_int64),
        ("chunk_count", c_uint32),
        ("chunk_size", c_uint32),
        ("legacy", c_bool),
        ("has_metadata", c_bool),
    ]


class mint_imatrix_entry(Struct):
    _c_name_ = "mint_imatrix_entry"
    _fields_ = [
        ("name", c_char_p),
        ("n_vals", c_int64),
        ("n_counts", c_int64),
        ("sums", POINTER(c_float)),
        ("counts", POINTER(c_int64)),
    ]


class mint_chat_msg(Struct):
    _c_name_ = "mint_chat_msg"
    _fields_ = [("role", c_char_p), ("content", c_char_p)]



# Chat formats (mint_chat_apply_ex, mint_chat_parse): mirrored for the ABI; the Python API does
# not use them yet.
class mint_chat_msg_ex(Struct):
    _c_name_ = "mint_chat_msg_ex"
    _fields_ = [
        ("role", c_char_p),
        ("content", c_char_p),
        ("reasoning_content", c_char_p),
        ("tool_calls", c_char_p),
        ("tool_call_id", c_char_p),
        ("name", c_char_p),
    ]


class mint_chat_opts(Struct):
    _c_name_ = "mint_chat_opts"
    _fields_ = [
        ("add_generation_prompt", c_bool),
        ("bos", c_char_p),
        ("eos", c_char_p),
        ("tools", c_char_p),
        ("kwargs", c_char_p),
        ("reasoning", c_enum),
        ("now", ctypes.c_int64),
    ]


class mint_chat_parse_opts(Struct):
    _c_name_ = "mint_chat_parse_opts"
    _fields_ = [
        ("reasoning_format", c_enum),
        ("reasoning_open", c_bool),
        ("parse_tools", c_bool),
        ("tools", c_char_p),
    ]


class mint_chat_tool_call(Struct):
    _c_name_ = "mint_chat_tool_call"
    _fields_ = [("id", c_void_p), ("name", c_void_p), ("arguments", c_void_p)]


class mint_chat_parsed(Struct):
    _c_name_ = "mint_chat_parsed"
    _fields_ = [
        ("content", c_void_p),
        ("content_len", c_size_t),
        ("reasoning_content", c_void_p),
        ("reasoning_len", c_size_t),
        ("tool_calls", POINTER(mint_chat_tool_call)),
        ("n_tool_calls", c_size_t),
    ]


class mint_chat_delta(Struct):
    _c_name_ = "mint_chat_delta"
    _fields_ = [
        ("kind", c_enum),
        ("tool_index", c_size_t),
        ("id", c_char_p),
        ("name", c_char_p),
        ("text", c_void_p),
        ("len", c_size_t),
    ]

class mint_chat_grammar_opts(Struct):
    _c_name_ = "mint_chat_grammar_opts"
    _fields_ = [
        ("tools", c_char_p),
        ("tool_choice", c_char_p),
        ("parallel", c_bool),
        ("reasoning", c_bool),
        ("reasoning_open", c_bool),
    ]


class mint_chat_grammar(Struct):
    _c_name_ = "mint_chat_grammar"
    _fields_ = [
        ("gbnf", c_void_p),
        ("lazy", c_bool),
        ("trigger_words", POINTER(c_char_p)),
        ("n_trigger_words", c_int32),
        ("trigger_patterns", POINTER(c_char_p)),
        ("n_trigger_patterns", c_int32),
    ]

STRUCTS = [
    mint_err, mint_file_info, mint_tensor_info, mint_kv_info, mint_model_params, mint_model_desc,
    mint_ctx_params, mint_batch_entry, mint_cache_info, mint_trace_node, mint_sampler_params,
    mint_sample_info, mint_fim_tokens, mint_grammar_params, mint_gen_params, mint_gen_token, mint_beam_params, mint_spec_params, mint_spec_stats, mint_ppl_params,
    mint_ppl_percentiles, mint_ppl_result, mint_quantize_params, mint_synth_params,
    mint_imatrix_info, mint_imatrix_entry, mint_chat_msg,
    mint_chat_msg_ex, mint_chat_opts, mint_chat_parse_opts, mint_chat_tool_call, mint_chat_parsed,
    mint_chat_delta, mint_chat_grammar_opts, mint_chat_grammar,
]  # fmt: skip

# Opaque handles: void pointers on the Python side.
handle = c_void_p
P = POINTER

# ---------------------------------------------------------------------------------------------
# Prototypes: name -> (restype, argtypes). Every MINT_API function of mint.h is either here or in
# UNBOUND (test_abi.py checks that, and the argument counts).

PROTOTYPES = {
    "mint_status_name": (c_char_p, [c_enum]),
    "mint_version": (c_char_p, []),
    # files
    "mint_file_open": (c_enum, [c_char_p, P(handle), P(mint_err)]),
    "mint_file_close": (None, [handle]),
    "mint_file_get_info": (None, [handle, P(mint_file_info)]),
    "mint_file_tensor": (c_enum, [handle, c_uint64, P(mint_tensor_info)]),
    "mint_file_find_tensor": (c_enum, [handle, c_char_p, P(mint_tensor_info)]),
    "mint_file_kv": (c_enum, [handle, c_uint64, P(mint_kv_info)]),
    "mint_file_get_u32": (c_enum, [handle, c_char_p, P(c_uint32), P(mint_err)]),
    "mint_file_get_i32": (c_enum, [handle, c_char_p, P(c_int32), P(mint_err)]),
    "mint_file_get_u64": (c_enum, [handle, c_char_p, P(c_uint64), P(mint_err)]),
    "mint_file_get_f32": (c_enum, [handle, c_char_p, P(c_float), P(mint_err)]),
    "mint_file_get_bool": (c_enum, [handle, c_char_p, P(c_bool), P(mint_err)]),
    "mint_file_get_str": (c_enum, [handle, c_char_p, P(c_void_p), P(c_uint64), P(mint_err)]),
    "mint_file_get_arr": (
        c_enum,
        [handle, c_char_p, P(c_enum), P(c_uint64), P(c_void_p), P(mint_err)],
    ),
    "mint_file_get_arr_str": (
        c_enum,
        [handle, c_char_p, c_uint64, P(c_void_p), P(c_uint64), P(mint_err)],
    ),
    "mint_file_kv_format": (c_size_t, [handle, c_uint64, c_void_p, c_size_t, c_size_t, c_size_t]),
    "mint_type_name": (c_char_p, [c_uint32]),
    "mint_type_nbytes": (c_uint64, [c_uint32, c_uint64]),
    "mint_type_block_size": (c_uint32, [c_uint32]),
    "mint_hash64": (c_uint64, [c_void_p, c_size_t]),
    "mint_verify_hashes": (c_enum, [handle, P(c_uint64), P(mint_err)]),
    # models
    "mint_model_open": (c_enum, [c_char_p, P(mint_model_params), P(handle), P(mint_err)]),
    "mint_model_repack_wait": (None, [handle]),
    "mint_model_close": (None, [handle]),
    "mint_model_describe": (None, [handle, P(mint_model_desc)]),
    "mint_tokenize": (
        c_enum,
        [handle, c_char_p, c_size_t, c_bool, c_bool, P(c_int32), c_size_t, P(c_size_t),
         P(mint_err)],
    ),  # fmt: skip
    "mint_token_to_piece": (c_size_t, [handle, c_int32, c_bool, c_void_p, c_size_t]),
    "mint_token_text": (c_char_p, [handle, c_int32]),
    "mint_token_is_eog": (c_bool, [handle, c_int32]),
    "mint_vocab_compatible": (c_enum, [handle, handle, P(mint_err)]),
    # the plain forward pass (its own block in mint.h)
    "mint_plain_create": (c_enum, [handle, c_int32, P(handle), P(mint_err)]),
    "mint_plain_forward": (c_enum, [handle, c_int32, c_int32, P(c_float), P(mint_err)]),
    "mint_plain_free": (None, [handle]),
    # contexts
    "mint_attention_name": (c_char_p, [c_enum]),
    "mint_attention_from_name": (c_int, [c_char_p]),
    "mint_ctx_default_params": (mint_ctx_params, []),
    "mint_ctx_create": (c_enum, [handle, P(mint_ctx_params), P(handle), P(mint_err)]),
    "mint_ctx_free": (None, [handle]),
    "mint_decode": (c_enum, [handle, P(mint_batch_entry), c_int32, P(mint_err)]),
    "mint_eval": (c_enum, [handle, P(c_int32), c_int32, c_int32, c_bool, P(mint_err)]),
    "mint_get_logits": (P(c_float), [handle, c_int32]),
    "mint_get_n_logits": (c_int32, [handle]),
    "mint_seq_n_past": (c_int32, [handle, c_int32]),
    "mint_seq_tokens": (P(c_int32), [handle, c_int32]),
    "mint_seq_fork": (c_enum, [handle, c_int32, c_int32, P(mint_err)]),
    "mint_seq_truncate": (c_enum, [handle, c_int32, c_int32, P(mint_err)]),
    "mint_seq_forget": (c_enum, [handle, c_int32, P(mint_err)]),
    "mint_seq_prefix": (c_enum, [handle, c_int32, P(c_int32), c_int32, P(c_int32), P(mint_err)]),
    "mint_ctx_cache_info": (None, [handle, P(mint_cache_info)]),
    "mint_ctx_n_past": (c_int32, [handle]),
    "mint_ctx_n_ctx": (c_int32, [handle]),
    "mint_ctx_n_seq": (c_int32, [handle]),
    "mint_ctx_n_batch": (c_int32, [handle]),
    "mint_ctx_n_threads": (c_int32, [handle]),
    "mint_ctx_isa_name": (c_char_p, [handle]),
    "mint_ctx_attention_name": (c_char_p, [handle]),
    "mint_ctx_attention_scratch": (c_uint64, [handle]),
    "mint_ctx_n_evaluated": (c_uint64, [handle]),
    "mint_ctx_graph_text": (c_char_p, [handle]),
    "mint_isa_name": (c_char_p, []),
    "mint_ctx_set_trace": (None, [handle, c_bool]),
    "mint_ctx_capture_attention": (c_enum, [handle, P(c_float), c_int32, P(mint_err)]),
    "mint_ctx_capture_routing": (c_enum, [handle, P(c_int32), P(c_float), c_int32, P(mint_err)]),
    "mint_ctx_capture_state": (c_enum, [handle, P(c_float), c_int32, P(mint_err)]),
    "mint_ctx_last_trace": (c_int32, [handle, P(P(mint_trace_node))]),
    "mint_measure_read_bandwidth": (c_enum, [c_int, c_size_t, c_int, P(c_double), P(mint_err)]),
    # samplers
    "mint_sampler_default_params": (mint_sampler_params, []),
    "mint_sampler_params_check": (c_enum, [P(mint_sampler_params), P(mint_err)]),
    "mint_sampler_create": (c_enum, [P(mint_sampler_params), c_int32, P(handle), P(mint_err)]),
    "mint_sampler_free": (None, [handle]),
    "mint_sampler_sample": (c_int32, [handle, P(c_float)]),
    "mint_sampler_sample_info": (c_int32, [handle, P(c_float), P(mint_sample_info)]),
    "mint_sampler_accept": (None, [handle, c_int32]),
    "mint_sampler_reset": (None, [handle, c_uint64]),
    "mint_sampler_set_grammar": (None, [handle, handle]),
    # grammars
    "mint_grammar_default_params": (mint_grammar_params, []),
    "mint_grammar_create": (
        c_enum, [handle, c_char_p, c_size_t, P(mint_grammar_params), P(handle), P(mint_err)],
    ),
    "mint_grammar_free": (None, [handle]),
    "mint_grammar_reset": (None, [handle]),
    "mint_grammar_allows": (c_bool, [handle, c_int32]),
    "mint_grammar_accept": (c_enum, [handle, c_int32, P(mint_err)]),
    "mint_grammar_can_end": (c_bool, [handle]),
    "mint_json_schema_to_grammar": (c_enum, [c_char_p, c_size_t, P(c_void_p), P(mint_err)]),
    # chat formats
    "mint_chat_default_opts": (mint_chat_opts, []),
    "mint_chat_apply_ex": (
        c_enum, [c_char_p, P(mint_chat_msg_ex), c_size_t, P(mint_chat_opts), P(c_void_p),
                 P(c_size_t), P(mint_err)],
    ),
    "mint_chat_format_detect": (c_enum, [c_char_p]),
    "mint_chat_format_name": (c_char_p, [c_enum]),
    "mint_chat_format_reasons": (c_bool, [c_char_p]),
    "mint_chat_default_parse_opts": (mint_chat_parse_opts, []),
    "mint_chat_prompt_opens_reasoning": (c_bool, [c_enum, c_char_p, c_size_t]),
    "mint_chat_parse": (
        c_enum, [c_enum, c_char_p, c_size_t, c_bool, P(mint_chat_parse_opts),
                 P(mint_chat_parsed), P(mint_err)],
    ),
    "mint_chat_parsed_free": (None, [P(mint_chat_parsed)]),
    "mint_chat_diff": (
        c_enum, [P(mint_chat_parsed), P(mint_chat_parsed), P(mint_chat_delta), c_size_t,
                 P(c_size_t), P(mint_err)],
    ),
    "mint_chat_tool_grammar": (
        c_enum, [c_enum, P(mint_chat_grammar_opts), P(mint_chat_grammar), P(mint_err)],
    ),
    "mint_chat_grammar_free": (None, [P(mint_chat_grammar)]),
    "mint_grammar_text_free": (None, [c_void_p]),
    # logits to text
    "mint_top_k": (c_int32, [P(c_float), c_int32, c_int32, P(c_int32)]),
    "mint_log_softmax": (None, [P(c_float), c_int32, P(c_int32), c_int32, P(c_double)]),
    "mint_vocab_adds_space_prefix": (c_bool, [handle]),
    "mint_vocab_fim_tokens": (mint_fim_tokens, [handle]),
    "mint_gen_default_params": (mint_gen_params, []),
    "mint_gen_create": (c_enum, [handle, handle, P(mint_gen_params), P(handle), P(mint_err)]),
    "mint_gen_free": (None, [handle]),
    "mint_gen_step": (c_enum, [handle, P(c_float), P(mint_gen_token), P(mint_err)]),
    "mint_finish_name": (c_char_p, [c_int]),
    # decoding strategies
    "mint_beam_default_params": (mint_beam_params, []),
    "mint_beam_search": (
        c_enum,
        [handle, P(c_int32), c_int32, P(mint_beam_params), P(c_int32), c_int32, P(c_int32),
         P(c_double), P(mint_err)],
    ),  # fmt: skip
    "mint_spec_default_params": (mint_spec_params, []),
    "mint_speculative": (
        c_enum,
        [handle, handle, P(c_int32), c_int32, P(mint_spec_params), P(mint_spec_stats),
         P(mint_err)],
    ),  # fmt: skip
    # perplexity, quantizing, synthetic models
    "mint_ppl_default_params": (mint_ppl_params, []),
    "mint_perplexity": (
        c_enum,
        [handle, c_char_p, c_size_t, P(mint_ppl_params), P(mint_ppl_result), P(mint_err)],
    ),
    "mint_quantize_file": (c_enum, [c_char_p, c_char_p, P(mint_quantize_params), P(mint_err)]),
    "mint_synth_write": (c_enum, [P(mint_synth_params), c_char_p, P(mint_err)]),
    "mint_imatrix_create": (c_enum, [c_uint32, P(handle), P(mint_err)]),
    "mint_imatrix_load": (c_enum, [c_char_p, P(handle), P(mint_err)]),
    "mint_imatrix_parse": (c_enum, [c_void_p, c_size_t, c_char_p, P(handle), P(mint_err)]),
    "mint_imatrix_free": (None, [handle]),
    "mint_imatrix_get_info": (None, [handle, P(mint_imatrix_info)]),
    "mint_imatrix_dataset": (c_char_p, [handle, c_int64]),
    "mint_imatrix_add_dataset": (c_enum, [handle, c_char_p, P(mint_err)]),
    "mint_imatrix_entry_at": (c_enum, [handle, c_int64, P(mint_imatrix_entry)]),
    "mint_imatrix_find": (c_enum, [handle, c_char_p, P(mint_imatrix_entry)]),
    "mint_imatrix_combine": (c_enum, [handle, handle, P(mint_err)]),
    "mint_imatrix_importance": (
        c_enum, [handle, c_char_p, c_int64, c_int64, c_int64, P(c_float), P(mint_err)]),
    "mint_imatrix_save": (c_enum, [handle, c_char_p, c_enum, P(mint_err)]),
    "mint_ctx_set_imatrix": (c_enum, [handle, handle, c_bool, P(mint_err)]),
    # chat templates
    "mint_chat_detect": (c_enum, [c_char_p]),
    "mint_chat_from_name": (c_enum, [c_char_p]),
    "mint_chat_name": (c_char_p, [c_enum]),
    "mint_chat_render": (
        c_size_t,
        [c_enum, P(mint_chat_msg), c_size_t, c_bool, c_char_p, c_char_p, c_void_p, c_size_t],
    ),
    "mint_chat_preset": (c_char_p, [c_char_p]),
    "mint_chat_preset_name": (c_char_p, [c_size_t]),
    "mint_chat_apply": (
        c_enum,
        [c_char_p, P(mint_chat_msg), c_size_t, c_bool, c_char_p, c_char_p, P(c_void_p),
         P(c_size_t), P(mint_err)],
    ),  # fmt: skip
    "mint_chat_free": (None, [c_void_p]),
}

# Declared in mint.h and deliberately not bound: atomic file writes are for C programs (Python
# has tempfile + os.replace).
UNBOUND = {
    "mint_atomic_file_begin",
    "mint_atomic_file_write",
    "mint_atomic_file_commit",
    "mint_atomic_file_abort",
}

# ---------------------------------------------------------------------------------------------
# Finding and loading the library

_lock = threading.Lock()
_lib = None
_path = None


def _recorded_libdir():
    try:
        from . import _config
    except ImportError:
        return None
    return getattr(_config, "LIBDIR", None) or None


def library_candidates():
    """The places searched for libmint, in order, as (how, path-or-name) pairs."""
    out = []
    env = os.environ.get("MINT_LIBRARY")
    if env:
        out.append(("MINT_LIBRARY", env))
        return out  # an explicit choice is never silently replaced by another library
    libdir = _recorded_libdir()
    if libdir:
        for name in ("libmint.so.0", "libmint.so"):
            out.append(("installed prefix", os.path.join(libdir, name)))
    found = ctypes.util.find_library("mint")
    if found:
        out.append(("find_library", found))
    out.append(("dynamic loader", "libmint.so.0"))
    return out


def load():
    """The loaded library (loaded once, on first use). Raises LibraryNotFoundError saying
    where it looked."""
    global _lib, _path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for how, where in library_candidates():
            if how in ("installed prefix",) and not os.path.exists(where):
                tried.append(f"{how}: {where} (absent)")
                continue
            try:
                lib = ctypes.CDLL(where)
            except OSError as e:
                tried.append(f"{how}: {where} ({e})")
                continue
            _bind(lib)
            _path = where
            _lib = lib
            return lib
        raise errors.LibraryNotFoundError(
            "libmint not found; set MINT_LIBRARY to the path of libmint.so, or install mint "
            "(cmake --install build --prefix P) and reinstall the package with MINT_PREFIX=P. "
            "Tried: " + "; ".join(tried)
        )


def _bind(lib):
    for name, (res, args) in PROTOTYPES.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            raise errors.LibraryNotFoundError(
                f"the loaded libmint lacks {name}: it is older than these bindings"
            ) from None
        f.restype = res
        f.argtypes = args


def library_path():
    """Path (or loader name) of the libmint the bindings loaded; loads it if needed."""
    load()
    if os.path.sep not in _path:
        # A loader name: report the file the loader picked.
        try:
            with open("/proc/self/maps") as f:
                for line in f:
                    if "libmint.so" in line:
                        return line.split()[-1]
        except OSError:
            pass
    return os.path.abspath(_path) if os.path.sep in _path else _path


# ---------------------------------------------------------------------------------------------
# Helpers shared by the API modules


def check(status, err):
    """Raises the exception of a failed status with mint's message."""
    if status != MINT_OK:
        msg = err.msg.decode("utf-8", "replace") if err is not None else ""
        if not msg:
            msg = f"mint call failed with status {errors.STATUS_NAMES.get(status, status)}"
        raise errors.error_for(status, msg)


def cstr(p):
    """A C string (bytes or None from ctypes) as str."""
    return None if p is None else p.decode("utf-8", "replace")


def fspath_bytes(path, what="path"):
    """A str / bytes / os.PathLike path as bytes for C; TypeError for anything else."""
    if isinstance(path, (str, bytes)) or hasattr(path, "__fspath__"):
        p = os.fsencode(os.fspath(path))
        if b"\0" in p:
            raise errors.MintArgumentError(f"{what} contains a NUL byte")
        return p
    raise errors.MintTypeError(f"{what} must be a str or os.PathLike, not {type(path).__name__}")


def text_bytes(text, what="text"):
    if isinstance(text, str):
        return text.encode("utf-8")
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    raise errors.MintTypeError(f"{what} must be a str or bytes, not {type(text).__name__}")


def name_bytes(s, what):
    if not isinstance(s, str):
        raise errors.MintTypeError(f"{what} must be a str, not {type(s).__name__}")
    b = s.encode("utf-8")
    if b"\0" in b:
        raise errors.MintArgumentError(f"{what} contains a NUL byte")
    return b
