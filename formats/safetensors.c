// safetensors.c - the safetensors reader: the header length, the JSON and every tensor's dtype,
// shape and byte range are checked here, once, before any tensor is handed out.
#include "formats/safetensors.h"

#include "base/error.h"
#include "formats/json_doc.h"
#include "formats/mapped_file.h"
#include "quant/types.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// dtypes (huggingface/safetensors: safetensors/src/tensor.rs `Dtype`)

static const mint_st_dtype dtypes[] = {
    {"F64", 8, MINT_TYPE_F64},
    {"F32", 4, MINT_TYPE_F32},
    {"F16", 2, MINT_TYPE_F16},
    {"BF16", 2, MINT_TYPE_BF16},
    {"I64", 8, MINT_TYPE_I64},
    {"I32", 4, MINT_TYPE_I32},
    {"I16", 2, MINT_TYPE_I16},
    {"I8", 1, MINT_TYPE_I8},
    {"U8", 1, -1},
    {"BOOL", 1, -1},
    {"U16", 2, -1},
    {"U32", 4, -1},
    {"U64", 8, -1},
    {"F8_E4M3", 1, -1},
    {"F8_E5M2", 1, -1},
    {"F8_E8M0", 1, -1},
    {"F6_E2M3", 1, -1},
    {"F6_E3M2", 1, -1},
    {"F4", 1, -1},
};

const mint_st_dtype *mint_st_dtype_find(const char *name) {
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strcmp(dtypes[i].name, name) == 0) return &dtypes[i];
    return NULL;
}

const mint_st_dtype *mint_st_dtype_of_type(uint32_t type) {
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].ggml_type >= 0 && (uint32_t)dtypes[i].ggml_type == type) return &dtypes[i];
    return NULL;
}

bool mint_safetensors_sniff(const void *head, size_t n) {
    const uint8_t *p = head;
    return n >= 9 && memcmp(p, "GGUF", 4) != 0 && p[8] == '{';
}

static uint64_t load_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

// ---------------------------------------------------------------------------------------------
// One tensor entry

typedef struct entry_ctx {
    mint_file *f;        // destination
    const uint8_t *data; // whole file
    uint64_t buf_start;  // 8 + N
    uint64_t buf_size;   // bytes of the data buffer
    int shard;           // shard index
    mint_err *err;       // failures
} entry_ctx;

static mint_status read_shape(entry_ctx *c, const char *name, json_object *shape,
                              const mint_st_dtype *dt, mint_tdesc *t) {
    size_t n = json_object_array_length(shape);
    uint64_t count = 1, nonzero = 1;
    int64_t dims[64];
    for (size_t d = 0; d < n; d++) {
        json_object *v = json_object_array_get_idx(shape, d);
        if (!json_object_is_type(v, json_type_int))
            return mint_fail(c->err, MINT_E_FORMAT,
                             "tensor '%s': shape[%zu] is a %s, expected a non-negative integer",
                             name, d, mint_json_type_name(v));
        int64_t x = json_object_get_int64(v);
        if (x < 0)
            return mint_fail(c->err, MINT_E_FORMAT,
                             "tensor '%s': shape[%zu] = %" PRId64 " is negative", name, d, x);
        // Overflow is checked on the product of the non-zero dimensions, so a tensor with a zero
        // dimension cannot hide an absurd one.
        if (x > 0 &&
            (__builtin_mul_overflow(nonzero, (uint64_t)x, &nonzero) || nonzero > INT64_MAX))
            return mint_fail(c->err, MINT_E_FORMAT,
                             "tensor '%s': element count overflows int64 at shape[%zu] = %" PRId64,
                             name, d, x);
        count *= (uint64_t)x;
        if (d < 64) dims[d] = x;
    }
    if (n > 4)
        return mint_fail(c->err, MINT_E_UNSUPPORTED,
                         "tensor '%s': %zu dimensions; mint tensors have at most 4", name, n);
    if (__builtin_mul_overflow(count, (uint64_t)dt->size, &t->nbytes) || t->nbytes > INT64_MAX)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "tensor '%s': %" PRIu64 " elements of %s overflow the byte size", name,
                         count, dt->name);
    t->n_dims = n ? (uint32_t)n : 1;
    for (int d = 0; d < 4; d++) t->ne[d] = 1;
    for (size_t d = 0; d < n; d++) t->ne[d] = dims[n - 1 - d];
    return MINT_OK;
}

static mint_status read_offsets(entry_ctx *c, const char *name, json_object *offs, mint_tdesc *t) {
    if (!json_object_is_type(offs, json_type_array) || json_object_array_length(offs) != 2)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "tensor '%s': data_offsets is %s, expected [begin, end]", name,
                         json_object_to_json_string_ext(offs, JSON_C_TO_STRING_PLAIN));
    int64_t be[2];
    for (int i = 0; i < 2; i++) {
        json_object *v = json_object_array_get_idx(offs, (size_t)i);
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
            return mint_fail(c->err, MINT_E_FORMAT,
                             "tensor '%s': data_offsets[%d] = %s is not a non-negative integer",
                             name, i, json_object_to_json_string(v));
        be[i] = json_object_get_int64(v);
    }
    uint64_t begin = (uint64_t)be[0], end = (uint64_t)be[1];
    if (end < begin)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] end before begin",
                         name, begin, end);
    if (end - begin != t->nbytes)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] hold %" PRIu64
                         " bytes, the dtype and shape need %" PRIu64,
                         name, begin, end, end - begin, t->nbytes);
    if (end > c->buf_size)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "tensor '%s': data_offsets [%" PRIu64 ", %" PRIu64 "] are past the end "
                         "of the %" PRIu64 "-byte data buffer (file byte %" PRIu64 ")",
                         name, begin, end, c->buf_size, c->buf_start + c->buf_size);
    t->offset = begin;
    t->file_offset = c->buf_start + begin;
    return MINT_OK;
}

// Points the tensor at its bytes. Other writers than the reference one need not align tensors,
// and a tensor whose start is not a multiple of its element size cannot be read through a float*
// (or uint16_t*) without undefined behaviour; such a tensor is copied once into malloc'd memory
// (aligned for any type) owned by the file.
static mint_status place_data(entry_ctx *c, const char *name, uint32_t elem, mint_tdesc *t) {
    const uint8_t *p = c->data + t->file_offset;
    if (elem <= 1 || (uintptr_t)p % elem == 0 || t->nbytes == 0) {
        t->data = p;
        return MINT_OK;
    }
    void *copy = malloc((size_t)t->nbytes);
    if (!copy)
        return mint_fail(c->err, MINT_E_NOMEM,
                         "tensor '%s': out of memory copying %" PRIu64 " unaligned bytes", name,
                         t->nbytes);
    memcpy(copy, p, (size_t)t->nbytes);
    t->data = copy;
    return mint_file_own(c->f, copy, c->err);
}

static mint_status read_entry(entry_ctx *c, const char *name, json_object *v, mint_tdesc *t) {
    memset(t, 0, sizeof *t);
    t->shard = c->shard;
    size_t name_len = strlen(name);
    if (name_len == 0 || name_len > MINT_MAX_KEY)
        return mint_fail(c->err, MINT_E_FORMAT, "tensor name length %zu is outside 1..%d", name_len,
                         MINT_MAX_KEY);
    if (!json_object_is_type(v, json_type_object))
        return mint_fail(c->err, MINT_E_FORMAT, "tensor '%s': entry is a %s, expected an object",
                         name, mint_json_type_name(v));
    json_object *dtype_v = NULL, *shape = NULL, *offs = NULL;
    if (!json_object_object_get_ex(v, "dtype", &dtype_v) ||
        !json_object_is_type(dtype_v, json_type_string))
        return mint_fail(c->err, MINT_E_FORMAT, "tensor '%s': \"dtype\" is %s, expected a string",
                         name, dtype_v ? mint_json_type_name(dtype_v) : "missing");
    const char *dtype = json_object_get_string(dtype_v);
    if (!json_object_object_get_ex(v, "shape", &shape) ||
        !json_object_is_type(shape, json_type_array))
        return mint_fail(c->err, MINT_E_FORMAT, "tensor '%s': \"shape\" is %s, expected an array",
                         name, shape ? mint_json_type_name(shape) : "missing");
    if (!json_object_object_get_ex(v, "data_offsets", &offs))
        return mint_fail(c->err, MINT_E_FORMAT, "tensor '%s': \"data_offsets\" is missing", name);
    const mint_st_dtype *dt = mint_st_dtype_find(dtype);
    if (!dt)
        return mint_fail(c->err, MINT_E_FORMAT,
                         "tensor '%s': dtype \"%.32s\" is not a safetensors dtype (F64 F32 F16 "
                         "BF16 I64 I32 I16 I8 U8 BOOL ...)",
                         name, dtype);
    if (dt->ggml_type < 0)
        return mint_fail(c->err, MINT_E_UNSUPPORTED,
                         "tensor '%s': dtype %s has no ggml type (mint reads F32, F16, BF16, and "
                         "lists F64 and I8..I64)",
                         name, dt->name);
    t->type = (uint32_t)dt->ggml_type;
    mint_status st = read_shape(c, name, shape, dt, t);
    if (st == MINT_OK) st = read_offsets(c, name, offs, t);
    if (st == MINT_OK) {
        t->name = mint_arena_strndup(&c->f->arena, name, name_len);
        if (!t->name) return mint_fail(c->err, MINT_E_NOMEM, "out of memory");
        st = place_data(c, name, dt->size, t);
    }
    return st;
}

// ---------------------------------------------------------------------------------------------
// Overlaps: sort the new tensors by (begin, end) and compare neighbours.

typedef struct span {
    uint64_t begin; // offset in the buffer
    uint64_t end;   // one past the last byte
    uint64_t index; // tensor index in f->t
} span;

static int cmp_span(const void *a, const void *b) {
    const span *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

static mint_status check_overlaps(mint_file *f, uint64_t first, uint64_t n, mint_err *err) {
    if (n < 2) return MINT_OK;
    span *s = malloc(n * sizeof *s);
    if (!s) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    for (uint64_t i = 0; i < n; i++) {
        const mint_tdesc *t = &f->t[first + i];
        s[i] = (span){t->offset, t->offset + t->nbytes, first + i};
    }
    qsort(s, n, sizeof *s, cmp_span);
    mint_status st = MINT_OK;
    for (uint64_t i = 1; i < n; i++) {
        if (s[i].begin >= s[i - 1].end) continue;
        st = mint_fail(err, MINT_E_FORMAT,
                       "tensor '%s' [%" PRIu64 ", %" PRIu64 ") overlaps tensor '%s' [%" PRIu64
                       ", %" PRIu64 ")",
                       f->t[s[i].index].name, s[i].begin, s[i].end, f->t[s[i - 1].index].name,
                       s[i - 1].begin, s[i - 1].end);
        break;
    }
    free(s);
    return st;
}

// ---------------------------------------------------------------------------------------------
// The header

static mint_status read_metadata(mint_file *f, json_object *meta, bool keep, mint_err *err) {
    if (!json_object_is_type(meta, json_type_object))
        return mint_fail(err, MINT_E_FORMAT, "\"__metadata__\" is a %s, expected an object",
                         mint_json_type_name(meta));
    json_object_object_foreach(meta, key, val) {
        if (!json_object_is_type(val, json_type_string))
            return mint_fail(err, MINT_E_FORMAT,
                             "\"__metadata__\".\"%.64s\" is a %s, expected a string", key,
                             mint_json_type_name(val));
        size_t klen = strlen(key), vlen = (size_t)json_object_get_string_len(val);
        if (klen == 0 || klen > MINT_MAX_KEY || vlen > MINT_MAX_STRING)
            return mint_fail(err, MINT_E_FORMAT,
                             "\"__metadata__\" key \"%.64s\" (%zu bytes, value %zu bytes) is "
                             "outside the limits (key 1..%d, value %llu)",
                             key, klen, vlen, MINT_MAX_KEY, MINT_MAX_STRING);
        if (!keep) continue;
        mint_status st = mint_file_add_kv(f, key, MINT_VAL_STRING, MINT_VAL_STRING, vlen,
                                          json_object_get_string(val), err);
        if (st != MINT_OK) return st;
    }
    return MINT_OK;
}

static mint_status parse_header(mint_file *f, const uint8_t *data, size_t size, int shard,
                                bool keep_metadata, uint64_t *data_start, mint_err *err) {
    if (size < 8)
        return mint_fail(err, MINT_E_FORMAT,
                         "safetensors: the file has %zu bytes, fewer than the 8-byte header length",
                         size);
    uint64_t n = load_u64(data);
    if (n > MINT_ST_MAX_HEADER)
        return mint_fail(err, MINT_E_FORMAT,
                         "safetensors: header length %" PRIu64 " at byte 0 exceeds the limit of "
                         "%llu",
                         n, MINT_ST_MAX_HEADER);
    if (n > size - 8)
        return mint_fail(err, MINT_E_FORMAT,
                         "safetensors: header length %" PRIu64 " at byte 0 is past the end of the "
                         "file (%zu bytes follow it)",
                         n, size - 8);
    json_object *root = NULL;
    mint_status st =
        mint_json_parse((const char *)data + 8, (size_t)n, "safetensors header", 8, &root, err);
    if (st != MINT_OK) return st;
    if (!json_object_is_type(root, json_type_object)) {
        st = mint_fail(err, MINT_E_FORMAT,
                       "safetensors: the header is a JSON %s, expected an "
                       "object",
                       mint_json_type_name(root));
        json_object_put(root);
        return st;
    }
    entry_ctx c = {f, data, 8 + n, size - 8 - n, shard, err};
    if (data_start) *data_start = c.buf_start;
    uint64_t first = f->n_tensors, count = (uint64_t)json_object_object_length(root);
    if (count > MINT_MAX_TENSORS || f->n_tensors + count > MINT_MAX_TENSORS) {
        json_object_put(root);
        return mint_fail(err, MINT_E_FORMAT,
                         "safetensors: %" PRIu64 " tensors exceed the limit "
                         "of %u",
                         f->n_tensors + count, MINT_MAX_TENSORS);
    }
    mint_tdesc *t = realloc(f->t, (size_t)(f->n_tensors + count + 1) * sizeof *t);
    if (!t) {
        json_object_put(root);
        return mint_fail(err, MINT_E_NOMEM, "safetensors: out of memory");
    }
    f->t = t;
    json_object_object_foreach(root, key, val) {
        if (strcmp(key, "__metadata__") == 0)
            st = read_metadata(f, val, keep_metadata, err);
        else if ((st = read_entry(&c, key, val, &f->t[f->n_tensors])) == MINT_OK)
            f->n_tensors++;
        if (st != MINT_OK) break;
    }
    json_object_put(root);
    if (st != MINT_OK) return st;
    return check_overlaps(f, first, f->n_tensors - first, err);
}

mint_status mint_safetensors_parse_into(mint_file *f, const uint8_t *data, size_t size, int shard,
                                        const char *name, bool keep_metadata, uint64_t *data_start,
                                        mint_err *err) {
    mint_status st = parse_header(f, data, size, shard, keep_metadata, data_start, err);
    if (st != MINT_OK) {
        mint_err_prefix(err, "%s", name);
        mint_err_one_line(err); // names and keys from the JSON may hold escaped control bytes
    }
    return st;
}

mint_status mint_safetensors_parse(const void *data, size_t size, const char *name, mint_file **out,
                                   mint_err *err) {
    *out = NULL;
    mint_file *f = mint_file_new(MINT_FORMAT_SAFETENSORS);
    if (!f) return mint_fail(err, MINT_E_NOMEM, "%s: out of memory", name);
    f->file_size = size;
    mint_status st =
        mint_safetensors_parse_into(f, data, size, 0, name, true, &f->data_offset, err);
    f->header_size = f->data_offset; // 8-byte length + JSON header
    if (st == MINT_OK) {
        st = mint_file_build_index(f, err);
        if (st != MINT_OK) {
            mint_err_prefix(err, "%s", name);
            mint_err_one_line(err);
        }
    }
    for (uint64_t i = 0; st == MINT_OK && i < f->n_tensors; i++) {
        uint64_t end = f->t[i].offset + f->t[i].nbytes;
        if (end > f->data_size) f->data_size = end;
    }
    if (st != MINT_OK) {
        mint_file_close(f);
        return st;
    }
    *out = f;
    return MINT_OK;
}

mint_status mint_safetensors_open(const char *path, bool no_mmap, mint_file **out, mint_err *err) {
    *out = NULL;
    mint_mapped_file map;
    mint_status st = mint_mapped_file_load(path, no_mmap, &map, err);
    if (st != MINT_OK) return st;
    mint_file *f = NULL;
    st = mint_safetensors_parse(map.data ? map.data : (const uint8_t *)"", map.size, path, &f, err);
    if (st != MINT_OK) {
        mint_mapped_file_close(&map);
        return st;
    }
    f->maps = malloc(sizeof *f->maps);
    if (!f->maps) {
        mint_mapped_file_close(&map);
        mint_file_close(f);
        return mint_fail(err, MINT_E_NOMEM, "%s: out of memory", path);
    }
    f->maps[0] = map;
    f->n_maps = 1;
    f->no_mmap = no_mmap;
    *out = f;
    return MINT_OK;
}
