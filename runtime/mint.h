// mint.h - the one public header of mint, a small CPU runtime for Llama-family models.
//
// Everything a program needs goes through the opaque handles declared here:
//   mint_file     a validated model file (GGUF, safetensors, or a Hugging Face checkpoint folder),
//                 for inspection: metadata, tensor table, raw bytes;
//   mint_model    weights bound to a llama graph, plus the vocabulary;
//   mint_ctx      one inference session: KV cache, scratch, thread pool;
//   mint_sampler  a chain of sampling steps with its own seeded RNG.
//
// Conventions
// - Functions that can fail return mint_status and, when `err` is not NULL, fill the caller-owned
//   mint_err with the same code and a one-line message naming the field, the value and the limit.
// - The library never prints and never exits; tools print err.msg.
// - Handles are created by *_open / *_create and released by the matching *_close / *_free, which
//   accept NULL. Strings returned as `const char *` live as long as the handle they came from.
// - Token ids are int32_t; tensor shapes use ggml's order (ne[0] is the innermost dimension).
#ifndef MINT_H
#define MINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------------------------------------
// Status and errors

typedef enum mint_status {
    MINT_OK = 0,
    MINT_E_IO = 1,          // open / read / write / mmap / rename failed
    MINT_E_FORMAT = 2,      // the file is malformed (bad magic, count past the end, ...)
    MINT_E_UNSUPPORTED = 3, // well-formed, but mint cannot do it (tensor type, architecture)
    MINT_E_NOMEM = 4,       // an allocation failed
    MINT_E_ARG = 5,         // a bad argument from the caller (flag value, out-of-range index)
    MINT_E_LIMIT = 6,       // a limit was reached (context full, buffer too small, too large)
    MINT_E_NOT_FOUND = 7,   // a metadata key or tensor is absent
    MINT_E_TYPE = 8,        // a metadata key holds a value of another type
} mint_status;

#define MINT_ERR_MSG_MAX 512

typedef struct mint_err {
    mint_status code;           // same value the failing call returned
    char msg[MINT_ERR_MSG_MAX]; // one line, no trailing newline
} mint_err;

// Short stable name of a status ("ok", "io", "format", ...).
const char *mint_status_name(mint_status s);

// Version string of the library, e.g. "0.1.0".
const char *mint_version(void);

// ---------------------------------------------------------------------------------------------
// Model files: open, validate, inspect

typedef struct mint_file mint_file;

typedef enum mint_file_format {
    MINT_FORMAT_GGUF = 0,
    MINT_FORMAT_SAFETENSORS = 1, // one .safetensors file
    MINT_FORMAT_HF_DIR = 2,      // a Hugging Face checkpoint folder (config.json + safetensors)
} mint_file_format;

// Metadata value types; the numbers are GGUF's value type codes.
typedef enum mint_value_type {
    MINT_VAL_U8 = 0,
    MINT_VAL_I8 = 1,
    MINT_VAL_U16 = 2,
    MINT_VAL_I16 = 3,
    MINT_VAL_U32 = 4,
    MINT_VAL_I32 = 5,
    MINT_VAL_F32 = 6,
    MINT_VAL_BOOL = 7,
    MINT_VAL_STRING = 8,
    MINT_VAL_ARRAY = 9,
    MINT_VAL_U64 = 10,
    MINT_VAL_I64 = 11,
    MINT_VAL_F64 = 12,
} mint_value_type;

typedef struct mint_file_info {
    mint_file_format format;
    uint32_t version;     // GGUF version (2 or 3); 0 for safetensors
    uint64_t file_size;   // bytes (sum over shards for a checkpoint folder)
    uint64_t n_kv;        // metadata entries
    uint64_t n_tensors;   // tensors
    uint32_t alignment;   // GGUF data alignment (general.alignment or 32); 0 for safetensors
    uint64_t data_offset; // byte offset of the data section in the file
    uint64_t data_size;   // bytes from data_offset to the end of the last tensor
} mint_file_info;

typedef struct mint_tensor_info {
    const char *name;     // NUL-terminated
    uint32_t type;        // ggml type code (mint_type_name() names it)
    bool type_known;      // false for a code mint has no layout for (never in an opened file)
    bool type_computable; // mint has kernels for it (F32, F16, BF16, Q4_0 ... Q6_K)
    uint32_t n_dims;      // 1..4
    int64_t ne[4];        // elements per dimension, ne[0] innermost; unused dims are 1
    uint64_t offset;      // byte offset relative to the data section
    uint64_t file_offset; // absolute byte offset in its file
    uint64_t nbytes;      // bytes of tensor data
    const void *data;     // pointer into the read-only map
} mint_tensor_info;

typedef struct mint_kv_info {
    const char *key;           // NUL-terminated
    mint_value_type type;      // value type
    mint_value_type elem_type; // element type when type == MINT_VAL_ARRAY
    uint64_t n;                // array length (1 for a scalar, string length for a string)
    uint64_t file_offset;      // where the key/value record starts in the file (0 if synthesised)
} mint_kv_info;

// Open and validate a model file: every count, length, type code, shape and offset is checked
// here, once. Returns MINT_E_FORMAT / MINT_E_IO / MINT_E_UNSUPPORTED with a message naming the
// field, value, limit and byte offset. Tensor types mint cannot compute with are accepted here.
mint_status mint_file_open(const char *path, mint_file **out, mint_err *err);
void mint_file_close(mint_file *f);

void mint_file_get_info(const mint_file *f, mint_file_info *out);
mint_status mint_file_tensor(const mint_file *f, uint64_t i, mint_tensor_info *out);
mint_status mint_file_find_tensor(const mint_file *f, const char *name, mint_tensor_info *out);
mint_status mint_file_kv(const mint_file *f, uint64_t i, mint_kv_info *out);

// Typed metadata access by key. MINT_E_NOT_FOUND when absent, MINT_E_TYPE when the stored type
// differs (the integer getters accept any integer type whose value fits).
mint_status mint_file_get_u32(const mint_file *f, const char *key, uint32_t *out, mint_err *err);
mint_status mint_file_get_i32(const mint_file *f, const char *key, int32_t *out, mint_err *err);
mint_status mint_file_get_u64(const mint_file *f, const char *key, uint64_t *out, mint_err *err);
mint_status mint_file_get_f32(const mint_file *f, const char *key, float *out, mint_err *err);
mint_status mint_file_get_bool(const mint_file *f, const char *key, bool *out, mint_err *err);
// A string value: pointer to its bytes (not NUL-terminated) and length.
mint_status mint_file_get_str(const mint_file *f, const char *key, const char **s, uint64_t *len,
                              mint_err *err);
// An array value: element type, length, and for non-string element types a pointer to the
// elements in native layout (aligned). String elements are read with mint_file_get_arr_str.
mint_status mint_file_get_arr(const mint_file *f, const char *key, mint_value_type *elem_type,
                              uint64_t *n, const void **data, mint_err *err);
mint_status mint_file_get_arr_str(const mint_file *f, const char *key, uint64_t i, const char **s,
                                  uint64_t *len, mint_err *err);

// Writes a short human-readable rendering of metadata entry i into buf (always NUL-terminated):
// scalars in full, strings quoted and escaped (cut after max_str bytes), arrays summarised as
// "[type; n] first items...". Returns the length it wanted to write.
size_t mint_file_kv_format(const mint_file *f, uint64_t i, char *buf, size_t cap, size_t max_str,
                           size_t max_items);

// Name of a ggml type code ("F32", "Q4_K", ...), or "type<N>" in a static buffer for unknown codes.
const char *mint_type_name(uint32_t type);
// Size of `n` elements of a type in bytes; 0 if unknown or n not a multiple of the block.
uint64_t mint_type_nbytes(uint32_t type, uint64_t n);
// Elements per block of a type (1 for F32/F16/BF16, 32, 256); 0 if unknown.
uint32_t mint_type_block_size(uint32_t type);

// XXH3-64 of a byte range (the hash mint-inspect --hash prints and mint-quantize records).
uint64_t mint_hash64(const void *data, size_t n);

#ifdef __cplusplus
}
#endif

#endif // MINT_H
