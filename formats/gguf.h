// gguf.h - GGUF v2/v3: a validating reader into struct mint_file, and a writer.
//
// Layout (docs/formats.md section 1): 24-byte header (magic "GGUF", u32 version,
// u64 tensor count, u64 metadata count), the metadata records, the tensor-info records, zero
// padding to the alignment, then the data section. All little-endian.
#ifndef MINT_GGUF_H
#define MINT_GGUF_H

#include "base/fileio.h"
#include "formats/tensor_dir.h"
#include "mint.h"

#include <stdint.h>
#include <stdio.h>

#define MINT_GGUF_MAGIC             0x46554747u // "GGUF" read as a little-endian u32
#define MINT_GGUF_DEFAULT_ALIGNMENT 32u

// Maps (or, when no_mmap, reads into memory: formats/mapped_file.h) and validates a GGUF file
// (every check of docs/formats.md 1.8, once). On failure *out is NULL and err names the field,
// the value, the limit and the byte offset.
mint_status mint_gguf_open(const char *path, bool no_mmap, mint_file **out, mint_err *err);

// Validates a GGUF image already in memory; the file keeps pointers into `data`, which must
// outlive it. `name` is used in messages.
mint_status mint_gguf_parse(const void *data, size_t size, const char *name, mint_file **out,
                            mint_err *err);

// ---------------------------------------------------------------------------------------------
// Writer. It writes what it is told, in order, without validating (tests use it to make broken
// files); mint_gguf_writer_write_file goes through a temporary file, fsync and rename so the
// target holds either the old file or the complete new one.

typedef struct mint_gguf_writer mint_gguf_writer;

// Produces the bytes of one tensor into dst[nbytes]; returns MINT_OK or a failure status.
typedef mint_status (*mint_gguf_fill_fn)(void *user, uint64_t index, void *dst, uint64_t nbytes,
                                         mint_err *err);

mint_gguf_writer *mint_gguf_writer_create(void);
void mint_gguf_writer_free(mint_gguf_writer *w);

// Defaults: version 3, alignment 32, or general.alignment when a u32 entry the reader accepts
// (a power of two up to MINT_MAX_ALIGNMENT) is added.
void mint_gguf_writer_set_version(mint_gguf_writer *w, uint32_t version);
void mint_gguf_writer_set_alignment(mint_gguf_writer *w, uint32_t alignment);

// Metadata, in the order added. Scalars take a pointer to a value of the named type.
mint_status mint_gguf_add_scalar(mint_gguf_writer *w, const char *key, mint_value_type type,
                                 const void *value);
mint_status mint_gguf_add_u32(mint_gguf_writer *w, const char *key, uint32_t v);
mint_status mint_gguf_add_f32(mint_gguf_writer *w, const char *key, float v);
mint_status mint_gguf_add_bool(mint_gguf_writer *w, const char *key, bool v);
mint_status mint_gguf_add_str(mint_gguf_writer *w, const char *key, const char *s);
mint_status mint_gguf_add_strn(mint_gguf_writer *w, const char *key, const char *s, uint64_t len);
// n elements of a non-string type, native layout.
mint_status mint_gguf_add_arr(mint_gguf_writer *w, const char *key, mint_value_type elem_type,
                              const void *data, uint64_t n);
mint_status mint_gguf_add_arr_str(mint_gguf_writer *w, const char *key, const mint_str *strs,
                                  uint64_t n);
// File offset of the value of the most recently added metadata entry (for an array: its first
// element). Lets a caller patch values it only knows after the data is written (hashes).
uint64_t mint_gguf_writer_last_value_offset(const mint_gguf_writer *w);
// Copies metadata entry i of an open file (any type).
mint_status mint_gguf_add_kv_from(mint_gguf_writer *w, const mint_file *f, uint64_t i);

// Tensors, in the order added; offsets are assigned at write time (each aligned). `data` must
// stay valid until the write; NULL writes zeros. nbytes is written as given.
mint_status mint_gguf_add_tensor(mint_gguf_writer *w, const char *name, uint32_t type,
                                 uint32_t n_dims, const int64_t *ne, const void *data,
                                 uint64_t nbytes);
// Same, with the bytes produced by fill(user, index, ...) at write time.
mint_status mint_gguf_add_tensor_fill(mint_gguf_writer *w, const char *name, uint32_t type,
                                      uint32_t n_dims, const int64_t *ne, uint64_t nbytes,
                                      mint_gguf_fill_fn fill, void *user, uint64_t index);

// Writes to `path` atomically (temp + fsync + rename). Removes the temporary file on failure.
// Every tensor, the last one too, is padded to the alignment with zeros; a file without tensors
// ends right after its metadata, as llama.cpp's vocab-only files do.
mint_status mint_gguf_writer_write_file(mint_gguf_writer *w, const char *path, mint_err *err);
// Same, calling finish(user, file, err) after the data and before the commit, e.g. to patch
// metadata with mint_atomic_file_pwrite; a failure from finish discards the file.
typedef mint_status (*mint_gguf_finish_fn)(void *user, mint_atomic_file *f, mint_err *err);
mint_status mint_gguf_writer_write_file_ex(mint_gguf_writer *w, const char *path,
                                           mint_gguf_finish_fn finish, void *user, mint_err *err);
// Writes to memory; *buf is malloc'd and owned by the caller.
mint_status mint_gguf_writer_write_mem(mint_gguf_writer *w, uint8_t **buf, size_t *len,
                                       mint_err *err);

#endif // MINT_GGUF_H
