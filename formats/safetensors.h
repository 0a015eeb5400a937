// safetensors.h - the safetensors format: a validating reader into struct mint_file, and a writer.
//
// Layout (docs/formats.md section 8.1): u64 LE header length N, N bytes of UTF-8 JSON,
// then the data buffer. The JSON object maps each tensor name to {"dtype": "F16", "shape":
// [d0, d1, ...] (PyTorch order, outermost first), "data_offsets": [begin, end]} with offsets
// relative to the buffer, plus an optional "__metadata__" object of string -> string.
//
// dtypes: F32, F16 and BF16 become ggml's F32 / F16 / BF16; F64, I64, I32, I16 and I8 become the
// ggml codes of the same names (listed, not computable). U8, BOOL and the newer dtypes (F8_*,
// U16 ... U64, sub-byte types) have no ggml type: such a file is refused with MINT_E_UNSUPPORTED
// naming the tensor. An unknown dtype string is MINT_E_FORMAT.
//
// Shapes become ggml order (ne[0] innermost = the last PyTorch dimension), so a PyTorch
// [out, in] weight has ne = [in, out] with the same bytes. A 0-d scalar is n_dims 1, ne [1];
// a dimension of 0 is accepted (an empty tensor, nbytes 0); more than 4 dimensions is
// MINT_E_UNSUPPORTED.
#ifndef MINT_SAFETENSORS_H
#define MINT_SAFETENSORS_H

#include "formats/tensor_dir.h"
#include "mint.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MINT_ST_MAX_HEADER 100000000ull // the reference reader's MAX_HEADER_SIZE

typedef struct mint_st_dtype {
    const char *name; // "F16"
    uint32_t size;    // bytes per element
    int ggml_type;    // mint_type code, or -1 when ggml has none
} mint_st_dtype;

// The dtype with this exact (case-sensitive) name, or NULL.
const mint_st_dtype *mint_st_dtype_find(const char *name);
// The dtype for a ggml type code (F32, F16, BF16, F64, I8..I64), or NULL (quantized types).
const mint_st_dtype *mint_st_dtype_of_type(uint32_t type);

// True when the first bytes of a file (head[n], n >= 9 for a positive answer) look like
// safetensors rather than GGUF: not the GGUF magic, and a '{' right after the 8-byte length.
bool mint_safetensors_sniff(const void *head, size_t n);

// Validates the safetensors image data[size] (one file or one shard) and appends its tensors to
// f, each pointing into `data` (or into an aligned copy owned by f, see safetensors.c), with
// t->shard = shard. "__metadata__" entries become string metadata when keep_metadata. *data_start
// (may be NULL) receives 8 + N. Checks: the header length fits the file and the limit; the JSON is
// one well-formed UTF-8 object with no duplicate key at any level; every tensor has a known dtype,
// integer non-negative shape entries whose element count and byte size do not overflow, and
// data_offsets [begin, end] with end - begin = bytes needed, inside the buffer, overlapping no
// other tensor. Names are non-empty and at most MINT_MAX_KEY bytes. Failures name the tensor,
// field, value and limit; `name` prefixes them. On failure f may hold some of the tensors: close
// it.
mint_status mint_safetensors_parse_into(mint_file *f, const uint8_t *data, size_t size, int shard,
                                        const char *name, bool keep_metadata, uint64_t *data_start,
                                        mint_err *err);

// A whole file in memory -> a new mint_file (format MINT_FORMAT_SAFETENSORS); `data` must outlive
// it.
mint_status mint_safetensors_parse(const void *data, size_t size, const char *name, mint_file **out,
                                   mint_err *err);

// Maps (or, when no_mmap, reads into memory) and validates a .safetensors file.
mint_status mint_safetensors_open(const char *path, bool no_mmap, mint_file **out, mint_err *err);

// ---------------------------------------------------------------------------------------------
// Writer. Tensors are written in the reference writer's order (larger elements first, then by
// name) right after each other, and the JSON header is padded with spaces to a multiple of 8, so
// every tensor is aligned to its element size. Data pointers are borrowed until the write.

typedef struct mint_st_writer mint_st_writer;

mint_st_writer *mint_st_writer_create(void);
void mint_st_writer_free(mint_st_writer *w);

// One "__metadata__" entry (copied).
mint_status mint_st_writer_add_meta(mint_st_writer *w, const char *key, const char *value);

// A tensor of a ggml type with a safetensors dtype, shape in ggml order (reversed on output).
// MINT_E_UNSUPPORTED for a type safetensors cannot hold; MINT_E_ARG when nbytes does not match the
// shape or the name is empty, "__metadata__" or already added.
mint_status mint_st_writer_add(mint_st_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                               const int64_t *ne, const void *data, uint64_t nbytes, mint_err *err);

// Writes to `path` atomically (temp + fsync + rename).
mint_status mint_st_writer_write_file(mint_st_writer *w, const char *path, mint_err *err);
// Writes to memory; *buf is malloc'd and owned by the caller.
mint_status mint_st_writer_write_mem(mint_st_writer *w, uint8_t **buf, size_t *len, mint_err *err);

#endif // MINT_SAFETENSORS_H
