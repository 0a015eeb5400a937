// mint_file.h - model files in mint's public API: opening and validating a file (GGUF,
// safetensors, a Hugging Face checkpoint folder) and inspecting it (metadata, tensor table, raw
// bytes); ggml's type names and sizes, XXH3 hashing, and files written whole or not at all.
// Included by mint.h, whose handles, statuses and conventions it uses; a program includes
// mint.h only.
#ifndef MINT_FILE_H
#define MINT_FILE_H

#ifndef MINT_H
#error "include mint.h, which includes this header after the types it uses"
#endif

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------------------------------------
// Model files: open, validate, inspect

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
    uint64_t header_size; // bytes before the data section's padding (GGUF: header + metadata +
                          // tensor infos; safetensors: 8 + JSON header)
    uint64_t data_offset; // byte offset of the data section in the (first) file
    uint64_t data_size;   // bytes from data_offset to the end of the last tensor (summed over
                          // the shards of a checkpoint folder)
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
    const void *data;     // into the read-only map, or memory the file owns (q/k rows of a
                          // HF checkpoint, reordered; unaligned safetensors data, copied)
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
MINT_API mint_status mint_file_open(const char *path, mint_file **out, mint_err *err);
MINT_API void mint_file_close(mint_file *f);

MINT_API void mint_file_get_info(const mint_file *f, mint_file_info *out);
MINT_API mint_status mint_file_tensor(const mint_file *f, uint64_t i, mint_tensor_info *out);
MINT_API mint_status mint_file_find_tensor(const mint_file *f, const char *name,
                                           mint_tensor_info *out);
MINT_API mint_status mint_file_kv(const mint_file *f, uint64_t i, mint_kv_info *out);

// Typed metadata access by key. MINT_E_NOT_FOUND when absent, MINT_E_TYPE when the stored type
// differs (the integer getters accept any integer type whose value fits).
MINT_API mint_status mint_file_get_u32(const mint_file *f, const char *key, uint32_t *out,
                                       mint_err *err);
MINT_API mint_status mint_file_get_i32(const mint_file *f, const char *key, int32_t *out,
                                       mint_err *err);
MINT_API mint_status mint_file_get_u64(const mint_file *f, const char *key, uint64_t *out,
                                       mint_err *err);
MINT_API mint_status mint_file_get_f32(const mint_file *f, const char *key, float *out,
                                       mint_err *err);
MINT_API mint_status mint_file_get_bool(const mint_file *f, const char *key, bool *out,
                                        mint_err *err);
// A string value: pointer to its bytes (not NUL-terminated) and length.
MINT_API mint_status mint_file_get_str(const mint_file *f, const char *key, const char **s,
                                       uint64_t *len, mint_err *err);
// An array value: element type, length, and for non-string element types a pointer to the
// elements in native layout (aligned). String elements are read with mint_file_get_arr_str.
MINT_API mint_status mint_file_get_arr(const mint_file *f, const char *key,
                                       mint_value_type *elem_type, uint64_t *n, const void **data,
                                       mint_err *err);
MINT_API mint_status mint_file_get_arr_str(const mint_file *f, const char *key, uint64_t i,
                                           const char **s, uint64_t *len, mint_err *err);

// Writes a short human-readable rendering of metadata entry i into buf (always NUL-terminated):
// scalars in full, strings quoted and escaped (cut after max_str bytes), arrays summarised as
// "[type; n] first items...". Returns the length it wanted to write.
MINT_API size_t mint_file_kv_format(const mint_file *f, uint64_t i, char *buf, size_t cap,
                                    size_t max_str, size_t max_items);

// Name of a ggml type code ("F32", "Q4_K", ...), or "type<N>" in a static buffer for unknown codes.
MINT_API const char *mint_type_name(uint32_t type);
// Size of `n` elements of a type in bytes; 0 if unknown or n not a multiple of the block.
MINT_API uint64_t mint_type_nbytes(uint32_t type, uint64_t n);
// Elements per block of a type (1 for F32/F16/BF16, 32, 256); 0 if unknown.
MINT_API uint32_t mint_type_block_size(uint32_t type);

// XXH3-64 of a byte range (the hash mint-inspect --hash prints and mint-quantize records).
MINT_API uint64_t mint_hash64(const void *data, size_t n);

// Files written whole or not at all: the bytes go to an unnamed temporary file in the target's
// folder; commit fsyncs it and renames it over the target (so an error, a crash or a kill leaves
// the old file or none, never half of one); abort discards it. begin fails at once when the
// folder cannot be written, before any work that would be lost.
typedef struct mint_atomic_file mint_atomic_file;

MINT_API mint_status mint_atomic_file_begin(const char *path, mint_atomic_file **out,
                                            mint_err *err);
// Writes all n bytes.
MINT_API mint_status mint_atomic_file_write(mint_atomic_file *f, const void *p, size_t n,
                                            mint_err *err);
// fsync + rename over the target + fsync of the folder; frees f in every case.
MINT_API mint_status mint_atomic_file_commit(mint_atomic_file *f, mint_err *err);
// Discards the temporary file; frees f. Accepts NULL.
MINT_API void mint_atomic_file_abort(mint_atomic_file *f);

#ifdef __cplusplus
}
#endif

#endif // MINT_FILE_H
