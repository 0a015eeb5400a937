// tensor_dir.h - struct mint_file: the format-neutral result of opening a model file.
//
// Every reader (GGUF, safetensors, a Hugging Face folder) produces the same thing: a list of
// metadata entries with typed values and a list of tensors (name, type, shape, bytes in a read-
// only map). Everything above formats/ works on this and never sees the file format again.
#ifndef MINT_TENSOR_DIR_H
#define MINT_TENSOR_DIR_H

#include "base/arena.h"
#include "base/strmap.h"
#include "formats/mapped_file.h"
#include "mint.h"

#include <stdbool.h>
#include <stdint.h>

// Hard limits on what a file may declare, checked before anything is allocated for it.
#define MINT_MAX_TENSORS   (1u << 20)   // tensors per file
#define MINT_MAX_KV        (1u << 20)   // metadata entries per file
#define MINT_MAX_NAME      63           // tensor name bytes (ggml's GGML_MAX_NAME - 1)
#define MINT_MAX_KEY       65535        // metadata key bytes (GGUF spec)
#define MINT_MAX_STRING    (1ull << 30) // one string value (ggml's cap)
#define MINT_MAX_ARRAY     (1ull << 30) // elements of one array (ggml's cap)
#define MINT_MAX_ALIGNMENT (1u << 24)   // general.alignment

// A byte string that is not NUL-terminated (it may point into the map).
typedef struct mint_str {
    const char *p; // [len] bytes
    uint64_t len;  // length in bytes
} mint_str;

typedef struct mint_kv {
    const char *key;           // NUL-terminated (arena)
    mint_value_type type;      // value type
    mint_value_type elem_type; // element type of an array
    uint64_t n;                // array length, string length, or 1 for a scalar
    union {
        uint64_t u;       // U8/U16/U32/U64 and BOOL (the raw byte)
        int64_t i;        // I8/I16/I32/I64, sign-extended
        double f;         // F32 (exactly) and F64
    } v;                  // scalar value
    const char *str;      // STRING: [n] bytes + NUL (arena)
    const void *arr;      // ARRAY: [n] native elements (arena, aligned), or [n] mint_str
    uint64_t file_offset; // byte offset of the record in the file; 0 when synthesised
} mint_kv;

typedef struct mint_tdesc {
    const char *name;     // NUL-terminated (arena)
    uint32_t type;        // ggml type code, known to quant/types.h
    uint32_t n_dims;      // 1..4
    int64_t ne[4];        // ne[0] innermost; unused dims are 1
    uint64_t offset;      // byte offset relative to the data section of its file
    uint64_t file_offset; // absolute byte offset in its file
    uint64_t nbytes;      // bytes of data
    const void *data;     // [nbytes] in a map, or in memory owned by the file (converted data)
    int shard;            // index into maps[] of the file holding it (0 for single files)
} mint_tdesc;

struct mint_file {
    mint_file_format format;
    uint32_t version;       // GGUF version; 0 otherwise
    uint32_t alignment;     // GGUF data alignment; 0 otherwise
    uint64_t file_size;     // bytes (all shards)
    uint64_t header_size;   // GGUF: bytes of header, metadata and tensor infos (before padding)
    uint64_t data_offset;   // data section start in the (first) file
    uint64_t data_size;     // bytes from data_offset to the end of the last tensor
    mint_kv *kv;            // [n_kv]
    uint64_t n_kv;          // metadata entries
    mint_tdesc *t;          // [n_tensors]
    uint64_t n_tensors;     // tensors
    mint_mapped_file *maps; // [n_maps] mapped files (one per shard)
    int n_maps;             // number of maps
    mint_strmap kv_index;   // key -> index into kv
    mint_strmap t_index;    // name -> index into t
    mint_arena arena;       // owns keys, names, strings, arrays and converted tensor data
    void **owned;           // [n_owned] malloc'd buffers freed with the file (large data)
    int n_owned;            // number of owned buffers
    bool no_mmap;           // maps[] were read into anonymous memory (mint_file_open_opt), not
                            // mapped from the files
};

// mint_file_open (mint.h), with the files' bytes read into anonymous memory instead of mapped
// when no_mmap (formats/mapped_file.h). Defined in file_open.c.
mint_status mint_file_open_opt(const char *path, bool no_mmap, mint_file **out, mint_err *err);

// Allocates an empty file of the given format. NULL when out of memory.
mint_file *mint_file_new(mint_file_format format);

// Looks up a metadata entry / tensor; NULL when absent.
const mint_kv *mint_file_find_kv(const mint_file *f, const char *key);
const mint_tdesc *mint_file_find(const mint_file *f, const char *name);

// Adds a synthesised metadata entry (used by the safetensors/HF readers). The value is copied.
// For arrays, `data` holds n native elements, or n mint_str for strings.
mint_status mint_file_add_kv(mint_file *f, const char *key, mint_value_type type,
                             mint_value_type elem_type, uint64_t n, const void *data,
                             mint_err *err);

// Builds kv_index and t_index, rejecting duplicate keys / names with MINT_E_FORMAT.
mint_status mint_file_build_index(mint_file *f, mint_err *err);

// Keeps a malloc'd buffer alive until the file is closed. MINT_E_NOMEM (and frees p) on failure.
mint_status mint_file_own(mint_file *f, void *p, mint_err *err);

// Byte size of one element of a metadata value type (0 for STRING / ARRAY / unknown).
size_t mint_value_type_size(uint32_t type);
const char *mint_value_type_name(uint32_t type);

#endif // MINT_TENSOR_DIR_H
