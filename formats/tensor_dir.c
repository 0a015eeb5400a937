// tensor_dir.c - struct mint_file: construction, lookup, typed metadata getters, and the
// public mint_file_* API of mint.h that reads a directory. The readers (gguf.c, safetensors.c,
// hf_checkpoint.c) fill it; opening a path, which picks the reader, is file_open.c's: this file
// calls no reader.
#include "formats/tensor_dir.h"

#include "base/error.h"
#include "quant/types.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Value types

static const struct {
    const char *name;
    size_t size;
} value_types[] = {
    [MINT_VAL_U8] = {"u8", 1},     [MINT_VAL_I8] = {"i8", 1},     [MINT_VAL_U16] = {"u16", 2},
    [MINT_VAL_I16] = {"i16", 2},   [MINT_VAL_U32] = {"u32", 4},   [MINT_VAL_I32] = {"i32", 4},
    [MINT_VAL_F32] = {"f32", 4},   [MINT_VAL_BOOL] = {"bool", 1}, [MINT_VAL_STRING] = {"str", 0},
    [MINT_VAL_ARRAY] = {"arr", 0}, [MINT_VAL_U64] = {"u64", 8},   [MINT_VAL_I64] = {"i64", 8},
    [MINT_VAL_F64] = {"f64", 8},
};

size_t mint_value_type_size(uint32_t type) {
    return type <= MINT_VAL_F64 ? value_types[type].size : 0;
}

const char *mint_value_type_name(uint32_t type) {
    return type <= MINT_VAL_F64 ? value_types[type].name : "?";
}

// ---------------------------------------------------------------------------------------------
// Construction

mint_file *mint_file_new(mint_file_format format) {
    mint_file *f = calloc(1, sizeof *f);
    if (f) f->format = format;
    return f;
}

void mint_file_close(mint_file *f) {
    if (!f) return;
    for (int i = 0; i < f->n_maps; i++) mint_mapped_file_close(&f->maps[i]);
    free(f->maps);
    for (int i = 0; i < f->n_owned; i++) free(f->owned[i]);
    free(f->owned);
    free(f->kv);
    free(f->t);
    mint_strmap_free(&f->kv_index);
    mint_strmap_free(&f->t_index);
    mint_arena_free(&f->arena);
    free(f);
}

mint_status mint_file_own(mint_file *f, void *p, mint_err *err) {
    void **owned = realloc(f->owned, (size_t)(f->n_owned + 1) * sizeof *owned);
    if (!owned) {
        free(p);
        return mint_fail(err, MINT_E_NOMEM, "out of memory");
    }
    f->owned = owned;
    f->owned[f->n_owned++] = p;
    return MINT_OK;
}

mint_status mint_file_build_index(mint_file *f, mint_err *err) {
    mint_strmap_free(&f->kv_index);
    mint_strmap_free(&f->t_index);
    if (mint_strmap_init(&f->kv_index, f->n_kv) != MINT_OK ||
        mint_strmap_init(&f->t_index, f->n_tensors) != MINT_OK)
        return mint_fail(err, MINT_E_NOMEM, "out of memory indexing %" PRIu64 " tensors",
                         f->n_tensors);
    for (uint64_t i = 0; i < f->n_kv; i++) {
        int32_t prev;
        const char *key = f->kv[i].key;
        mint_status st = mint_strmap_put(&f->kv_index, key, strlen(key), (int32_t)i, &prev);
        if (st == MINT_E_ARG)
            return mint_fail(err, MINT_E_FORMAT,
                             "metadata key '%s' at byte %" PRIu64 " is a duplicate of entry %d",
                             key, f->kv[i].file_offset, prev);
        if (st != MINT_OK) return mint_fail(err, st, "out of memory");
    }
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        int32_t prev;
        const char *name = f->t[i].name;
        mint_status st = mint_strmap_put(&f->t_index, name, strlen(name), (int32_t)i, &prev);
        if (st == MINT_E_ARG)
            return mint_fail(err, MINT_E_FORMAT,
                             "tensor name '%s' (tensor %" PRIu64 ") is a duplicate of tensor %d",
                             name, i, prev);
        if (st != MINT_OK) return mint_fail(err, st, "out of memory");
    }
    return MINT_OK;
}

mint_status mint_file_add_kv(mint_file *f, const char *key, mint_value_type type,
                             mint_value_type elem_type, uint64_t n, const void *data,
                             mint_err *err) {
    mint_kv *kv = realloc(f->kv, (size_t)(f->n_kv + 1) * sizeof *kv);
    if (!kv) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    f->kv = kv;
    mint_kv *e = &f->kv[f->n_kv];
    memset(e, 0, sizeof *e);
    e->key = mint_arena_strndup(&f->arena, key, strlen(key));
    e->type = type;
    e->elem_type = elem_type;
    e->n = type == MINT_VAL_ARRAY || type == MINT_VAL_STRING ? n : 1;
    if (!e->key) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    switch (type) {
    case MINT_VAL_U8:
        e->v.u = *(const uint8_t *)data;
        break;
    case MINT_VAL_BOOL:
        e->v.u = *(const uint8_t *)data;
        break;
    case MINT_VAL_U16:
        e->v.u = *(const uint16_t *)data;
        break;
    case MINT_VAL_U32:
        e->v.u = *(const uint32_t *)data;
        break;
    case MINT_VAL_U64:
        e->v.u = *(const uint64_t *)data;
        break;
    case MINT_VAL_I8:
        e->v.i = *(const int8_t *)data;
        break;
    case MINT_VAL_I16:
        e->v.i = *(const int16_t *)data;
        break;
    case MINT_VAL_I32:
        e->v.i = *(const int32_t *)data;
        break;
    case MINT_VAL_I64:
        e->v.i = *(const int64_t *)data;
        break;
    case MINT_VAL_F32:
        e->v.f = *(const float *)data;
        break;
    case MINT_VAL_F64:
        e->v.f = *(const double *)data;
        break;
    case MINT_VAL_STRING:
        e->str = mint_arena_strndup(&f->arena, data, n);
        if (!e->str) return mint_fail(err, MINT_E_NOMEM, "out of memory");
        break;
    case MINT_VAL_ARRAY: {
        if (elem_type == MINT_VAL_STRING) {
            const mint_str *src = data;
            mint_str *dst = mint_arena_alloc(&f->arena, n * sizeof *dst + 1);
            if (!dst) return mint_fail(err, MINT_E_NOMEM, "out of memory");
            for (uint64_t i = 0; i < n; i++) {
                char *p = mint_arena_strndup(&f->arena, src[i].p, src[i].len);
                if (!p) return mint_fail(err, MINT_E_NOMEM, "out of memory");
                dst[i] = (mint_str){p, src[i].len};
            }
            e->arr = dst;
        } else {
            size_t es = mint_value_type_size(elem_type);
            if (es == 0) return mint_fail(err, MINT_E_ARG, "bad array element type %d", elem_type);
            void *dst = mint_arena_alloc(&f->arena, n * es + 1);
            if (!dst) return mint_fail(err, MINT_E_NOMEM, "out of memory");
            if (n) memcpy(dst, data, n * es);
            e->arr = dst;
        }
        break;
    }
    }
    f->n_kv++;
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Lookup

const mint_kv *mint_file_find_kv(const mint_file *f, const char *key) {
    int32_t i = mint_strmap_get(&f->kv_index, key, strlen(key));
    return i < 0 ? NULL : &f->kv[i];
}

const mint_tdesc *mint_file_find(const mint_file *f, const char *name) {
    int32_t i = mint_strmap_get(&f->t_index, name, strlen(name));
    return i < 0 ? NULL : &f->t[i];
}

// ---------------------------------------------------------------------------------------------
// Public API: what was read (mint_file_open, which picks the reader, is in file_open.c)

void mint_file_get_info(const mint_file *f, mint_file_info *out) {
    memset(out, 0, sizeof *out);
    out->format = f->format;
    out->version = f->version;
    out->file_size = f->file_size;
    out->header_size = f->header_size;
    out->n_kv = f->n_kv;
    out->n_tensors = f->n_tensors;
    out->alignment = f->alignment;
    out->data_offset = f->data_offset;
    out->data_size = f->data_size;
}

static void fill_tensor_info(const mint_tdesc *t, mint_tensor_info *out) {
    const mint_type_traits *tt = mint_type_get(t->type);
    out->name = t->name;
    out->type = t->type;
    out->type_known = tt != NULL;
    out->type_computable = tt && tt->computable;
    out->n_dims = t->n_dims;
    memcpy(out->ne, t->ne, sizeof out->ne);
    out->offset = t->offset;
    out->file_offset = t->file_offset;
    out->nbytes = t->nbytes;
    out->data = t->data;
}

mint_status mint_file_tensor(const mint_file *f, uint64_t i, mint_tensor_info *out) {
    if (i >= f->n_tensors) return MINT_E_ARG;
    fill_tensor_info(&f->t[i], out);
    return MINT_OK;
}

mint_status mint_file_find_tensor(const mint_file *f, const char *name, mint_tensor_info *out) {
    const mint_tdesc *t = mint_file_find(f, name);
    if (!t) return MINT_E_NOT_FOUND;
    fill_tensor_info(t, out);
    return MINT_OK;
}

mint_status mint_file_kv(const mint_file *f, uint64_t i, mint_kv_info *out) {
    if (i >= f->n_kv) return MINT_E_ARG;
    const mint_kv *kv = &f->kv[i];
    out->key = kv->key;
    out->type = kv->type;
    out->elem_type = kv->elem_type;
    out->n = kv->n;
    out->file_offset = kv->file_offset;
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Public API: typed getters

static mint_status get_kv(const mint_file *f, const char *key, const mint_kv **out, mint_err *err) {
    *out = mint_file_find_kv(f, key);
    if (!*out) return mint_fail(err, MINT_E_NOT_FOUND, "metadata key '%s' is missing", key);
    return MINT_OK;
}

static bool is_unsigned(mint_value_type t) {
    return t == MINT_VAL_U8 || t == MINT_VAL_U16 || t == MINT_VAL_U32 || t == MINT_VAL_U64;
}

static bool is_signed(mint_value_type t) {
    return t == MINT_VAL_I8 || t == MINT_VAL_I16 || t == MINT_VAL_I32 || t == MINT_VAL_I64;
}

static mint_status type_error(mint_err *err, const mint_kv *kv, const char *want) {
    return mint_fail(err, MINT_E_TYPE, "metadata key '%s' holds a %s, expected %s", kv->key,
                     mint_value_type_name(kv->type), want);
}

// Reads any integer entry as a signed 128-bit-safe pair: value in [lo, hi] or a type error.
static mint_status get_int(const mint_file *f, const char *key, int64_t lo, uint64_t hi,
                           const char *want, uint64_t *u, int64_t *s, mint_err *err) {
    const mint_kv *kv;
    mint_status st = get_kv(f, key, &kv, err);
    if (st != MINT_OK) return st;
    if (is_unsigned(kv->type)) {
        if (kv->v.u > hi)
            return mint_fail(err, MINT_E_TYPE, "metadata key '%s' = %" PRIu64 " does not fit %s",
                             key, kv->v.u, want);
        *u = kv->v.u;
        *s = (int64_t)kv->v.u;
        return MINT_OK;
    }
    if (is_signed(kv->type)) {
        if (kv->v.i < lo || (kv->v.i > 0 && (uint64_t)kv->v.i > hi))
            return mint_fail(err, MINT_E_TYPE, "metadata key '%s' = %" PRId64 " does not fit %s",
                             key, kv->v.i, want);
        *u = (uint64_t)kv->v.i;
        *s = kv->v.i;
        return MINT_OK;
    }
    return type_error(err, kv, want);
}

mint_status mint_file_get_u32(const mint_file *f, const char *key, uint32_t *out, mint_err *err) {
    uint64_t u;
    int64_t s;
    mint_status st = get_int(f, key, 0, UINT32_MAX, "u32", &u, &s, err);
    if (st == MINT_OK) *out = (uint32_t)u;
    return st;
}

mint_status mint_file_get_i32(const mint_file *f, const char *key, int32_t *out, mint_err *err) {
    uint64_t u;
    int64_t s;
    mint_status st = get_int(f, key, INT32_MIN, INT32_MAX, "i32", &u, &s, err);
    if (st == MINT_OK) *out = (int32_t)s;
    return st;
}

mint_status mint_file_get_u64(const mint_file *f, const char *key, uint64_t *out, mint_err *err) {
    uint64_t u;
    int64_t s;
    mint_status st = get_int(f, key, 0, UINT64_MAX, "u64", &u, &s, err);
    if (st == MINT_OK) *out = u;
    return st;
}

mint_status mint_file_get_f32(const mint_file *f, const char *key, float *out, mint_err *err) {
    const mint_kv *kv;
    mint_status st = get_kv(f, key, &kv, err);
    if (st != MINT_OK) return st;
    if (kv->type != MINT_VAL_F32 && kv->type != MINT_VAL_F64) return type_error(err, kv, "f32");
    *out = (float)kv->v.f;
    return MINT_OK;
}

mint_status mint_file_get_bool(const mint_file *f, const char *key, bool *out, mint_err *err) {
    const mint_kv *kv;
    mint_status st = get_kv(f, key, &kv, err);
    if (st != MINT_OK) return st;
    if (kv->type != MINT_VAL_BOOL) return type_error(err, kv, "bool");
    *out = kv->v.u != 0;
    return MINT_OK;
}

mint_status mint_file_get_str(const mint_file *f, const char *key, const char **s, uint64_t *len,
                              mint_err *err) {
    const mint_kv *kv;
    mint_status st = get_kv(f, key, &kv, err);
    if (st != MINT_OK) return st;
    if (kv->type != MINT_VAL_STRING) return type_error(err, kv, "str");
    *s = kv->str;
    if (len) *len = kv->n;
    return MINT_OK;
}

mint_status mint_file_get_arr(const mint_file *f, const char *key, mint_value_type *elem_type,
                              uint64_t *n, const void **data, mint_err *err) {
    const mint_kv *kv;
    mint_status st = get_kv(f, key, &kv, err);
    if (st != MINT_OK) return st;
    if (kv->type != MINT_VAL_ARRAY) return type_error(err, kv, "arr");
    if (elem_type) *elem_type = kv->elem_type;
    if (n) *n = kv->n;
    if (data) *data = kv->elem_type == MINT_VAL_STRING ? NULL : kv->arr;
    return MINT_OK;
}

mint_status mint_file_get_arr_str(const mint_file *f, const char *key, uint64_t i, const char **s,
                                  uint64_t *len, mint_err *err) {
    const mint_kv *kv;
    mint_status st = get_kv(f, key, &kv, err);
    if (st != MINT_OK) return st;
    if (kv->type != MINT_VAL_ARRAY || kv->elem_type != MINT_VAL_STRING)
        return type_error(err, kv, "arr[str]");
    if (i >= kv->n)
        return mint_fail(err, MINT_E_ARG, "metadata key '%s': index %" PRIu64 " >= length %" PRIu64,
                         key, i, kv->n);
    const mint_str *a = kv->arr;
    *s = a[i].p;
    if (len) *len = a[i].len;
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Public API: formatting a value for people

typedef struct outbuf {
    char *p;    // [cap] destination
    size_t cap; // capacity including the NUL
    size_t len; // bytes wanted so far (may exceed cap)
} outbuf;

static void out_printf(outbuf *o, const char *fmt, ...) MINT_PRINTF(2, 3);
static void out_printf(outbuf *o, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = o->len < o->cap ? o->cap - o->len : 0;
    int n = vsnprintf(room ? o->p + o->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0) o->len += (size_t)n;
}

// Quoted, escaped, cut after max bytes (with "..." when cut).
static void out_string(outbuf *o, const char *s, uint64_t n, size_t max) {
    out_printf(o, "\"");
    uint64_t m = n < max ? n : max;
    for (uint64_t i = 0; i < m; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            out_printf(o, "\\%c", c);
        else if (c == '\n')
            out_printf(o, "\\n");
        else if (c == '\t')
            out_printf(o, "\\t");
        else if (c < 0x20 || c == 0x7f)
            out_printf(o, "\\x%02x", c);
        else
            out_printf(o, "%c", c);
    }
    out_printf(o, "\"%s", m < n ? "..." : "");
}

static void out_scalar(outbuf *o, mint_value_type t, const void *p) {
    switch (t) {
    case MINT_VAL_U8:
        out_printf(o, "%u", *(const uint8_t *)p);
        break;
    case MINT_VAL_I8:
        out_printf(o, "%d", *(const int8_t *)p);
        break;
    case MINT_VAL_U16:
        out_printf(o, "%u", *(const uint16_t *)p);
        break;
    case MINT_VAL_I16:
        out_printf(o, "%d", *(const int16_t *)p);
        break;
    case MINT_VAL_U32:
        out_printf(o, "%" PRIu32, *(const uint32_t *)p);
        break;
    case MINT_VAL_I32:
        out_printf(o, "%" PRId32, *(const int32_t *)p);
        break;
    case MINT_VAL_F32:
        out_printf(o, "%.9g", *(const float *)p);
        break;
    case MINT_VAL_BOOL:
        out_printf(o, "%s", *(const uint8_t *)p ? "true" : "false");
        break;
    case MINT_VAL_U64:
        out_printf(o, "%" PRIu64, *(const uint64_t *)p);
        break;
    case MINT_VAL_I64:
        out_printf(o, "%" PRId64, *(const int64_t *)p);
        break;
    case MINT_VAL_F64:
        out_printf(o, "%.17g", *(const double *)p);
        break;
    default:
        out_printf(o, "?");
        break;
    }
}

size_t mint_file_kv_format(const mint_file *f, uint64_t i, char *buf, size_t cap, size_t max_str,
                           size_t max_items) {
    outbuf o = {buf, cap, 0};
    if (cap) buf[0] = '\0';
    if (i >= f->n_kv) return 0;
    const mint_kv *kv = &f->kv[i];
    switch (kv->type) {
    case MINT_VAL_STRING:
        out_string(&o, kv->str, kv->n, max_str);
        break;
    case MINT_VAL_ARRAY: {
        out_printf(&o, "[%s; %" PRIu64 "]", mint_value_type_name(kv->elem_type), kv->n);
        uint64_t m = kv->n < max_items ? kv->n : max_items;
        for (uint64_t j = 0; j < m; j++) {
            out_printf(&o, j ? ", " : " ");
            if (kv->elem_type == MINT_VAL_STRING) {
                const mint_str *a = kv->arr;
                out_string(&o, a[j].p, a[j].len, max_str);
            } else {
                size_t es = mint_value_type_size(kv->elem_type);
                out_scalar(&o, kv->elem_type, (const char *)kv->arr + j * es);
            }
        }
        if (m < kv->n) out_printf(&o, m ? ", ..." : " ...");
        break;
    }
    case MINT_VAL_F32: {
        float x = (float)kv->v.f;
        out_scalar(&o, kv->type, &x);
        break;
    }
    case MINT_VAL_F64:
        out_scalar(&o, kv->type, &kv->v.f);
        break;
    case MINT_VAL_BOOL:
        out_printf(&o, "%s", kv->v.u ? "true" : "false");
        break;
    case MINT_VAL_I8:
    case MINT_VAL_I16:
    case MINT_VAL_I32:
    case MINT_VAL_I64:
        out_printf(&o, "%" PRId64, kv->v.i);
        break;
    default:
        out_printf(&o, "%" PRIu64, kv->v.u);
        break;
    }
    return o.len;
}
