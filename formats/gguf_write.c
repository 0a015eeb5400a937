// gguf_write.c - the GGUF writer: metadata and tensors are recorded in order, then written in
// one pass (header, metadata, tensor infos, padding, data). It does not validate: tests use it
// to make malformed files, and mint-quantize validates what it writes by reading it back.
#include "formats/gguf.h"

#include "base/error.h"
#include "base/fileio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

// A growable byte buffer for the header part of the file.
typedef struct bytes {
    uint8_t *p; // [cap]
    size_t len; // bytes used
    size_t cap; // bytes allocated
    bool oom;   // an append failed; reported at write time
} bytes;

static void put(bytes *b, const void *src, size_t n) {
    if (b->oom || n == 0) return; // n == 0 may come with src == NULL (no metadata yet)
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < n) {
            if (cap > SIZE_MAX / 2) {
                b->oom = true;
                return;
            }
            cap *= 2;
        }
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void put_u32(bytes *b, uint32_t v) {
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(b, x, 4);
}

static void put_u64(bytes *b, uint64_t v) {
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}

static void put_str(bytes *b, const char *s, uint64_t len) {
    put_u64(b, len);
    put(b, s, (size_t)len);
}

typedef struct wtensor {
    char *name;             // owned copy
    uint32_t type;          // ggml type code
    uint32_t n_dims;        // 1..4 (written as given)
    int64_t ne[4];          // shape
    const void *data;       // NULL: zeros or fill
    uint64_t nbytes;        // bytes of data
    mint_gguf_fill_fn fill; // producer, or NULL
    void *user;             // producer's context
    uint64_t index;         // producer's index
} wtensor;

struct mint_gguf_writer {
    uint32_t version;    // written version (default 3)
    uint32_t alignment;  // data alignment (default 32, or general.alignment)
    bytes kv;            // encoded metadata records
    uint64_t n_kv;       // number of records in kv
    wtensor *t;          // [n_t] tensors in order
    uint64_t n_t;        // number of tensors
    bool oom;            // an allocation failed
    uint64_t last_value; // offset in kv of the last added entry's value
};

mint_gguf_writer *mint_gguf_writer_create(void) {
    mint_gguf_writer *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->version = 3;
    w->alignment = MINT_GGUF_DEFAULT_ALIGNMENT;
    return w;
}

void mint_gguf_writer_free(mint_gguf_writer *w) {
    if (!w) return;
    for (uint64_t i = 0; i < w->n_t; i++) free(w->t[i].name);
    free(w->t);
    free(w->kv.p);
    free(w);
}

void mint_gguf_writer_set_version(mint_gguf_writer *w, uint32_t version) {
    w->version = version;
}
void mint_gguf_writer_set_alignment(mint_gguf_writer *w, uint32_t a) {
    w->alignment = a;
}

// ---------------------------------------------------------------------------------------------
// Metadata

// Encodes one scalar given in its native C type (uint16_t for U16, float for F32, ...) as
// little-endian bytes.
static void put_scalar(bytes *b, mint_value_type type, const void *value) {
    size_t n = mint_value_type_size(type);
    uint64_t v = 0;
    switch (n) {
    case 1:
        v = *(const uint8_t *)value;
        break;
    case 2: {
        uint16_t x;
        memcpy(&x, value, 2);
        v = x;
        break;
    }
    case 4: {
        uint32_t x;
        memcpy(&x, value, 4);
        v = x;
        break;
    }
    default: {
        memcpy(&v, value, 8);
        break;
    }
    }
    uint8_t tmp[8];
    for (size_t i = 0; i < n; i++) tmp[i] = (uint8_t)(v >> (8 * i));
    put(b, tmp, n);
}

static mint_status kv_done(mint_gguf_writer *w) {
    w->n_kv++;
    return w->kv.oom ? MINT_E_NOMEM : MINT_OK;
}

mint_status mint_gguf_add_scalar(mint_gguf_writer *w, const char *key, mint_value_type type,
                                 const void *value) {
    if (mint_value_type_size(type) == 0) return MINT_E_ARG;
    put_str(&w->kv, key, strlen(key));
    put_u32(&w->kv, type);
    w->last_value = w->kv.len;
    put_scalar(&w->kv, type, value);
    // A general.alignment the reader accepts becomes the writer's alignment; any other value is
    // written as given (to make broken files) and the alignment stays.
    if (type == MINT_VAL_U32 && strcmp(key, "general.alignment") == 0) {
        uint32_t a;
        memcpy(&a, value, 4);
        if (a && (a & (a - 1)) == 0 && a <= MINT_MAX_ALIGNMENT) w->alignment = a;
    }
    return kv_done(w);
}

mint_status mint_gguf_add_u32(mint_gguf_writer *w, const char *key, uint32_t v) {
    return mint_gguf_add_scalar(w, key, MINT_VAL_U32, &v);
}

mint_status mint_gguf_add_f32(mint_gguf_writer *w, const char *key, float v) {
    return mint_gguf_add_scalar(w, key, MINT_VAL_F32, &v);
}

mint_status mint_gguf_add_bool(mint_gguf_writer *w, const char *key, bool v) {
    uint8_t b = v;
    return mint_gguf_add_scalar(w, key, MINT_VAL_BOOL, &b);
}

mint_status mint_gguf_add_strn(mint_gguf_writer *w, const char *key, const char *s, uint64_t len) {
    put_str(&w->kv, key, strlen(key));
    put_u32(&w->kv, MINT_VAL_STRING);
    w->last_value = w->kv.len;
    put_str(&w->kv, s, len);
    return kv_done(w);
}

mint_status mint_gguf_add_str(mint_gguf_writer *w, const char *key, const char *s) {
    return mint_gguf_add_strn(w, key, s, strlen(s));
}

mint_status mint_gguf_add_arr(mint_gguf_writer *w, const char *key, mint_value_type elem_type,
                              const void *data, uint64_t n) {
    size_t es = mint_value_type_size(elem_type);
    if (es == 0) return MINT_E_ARG;
    put_str(&w->kv, key, strlen(key));
    put_u32(&w->kv, MINT_VAL_ARRAY);
    put_u32(&w->kv, elem_type);
    put_u64(&w->kv, n);
    w->last_value = w->kv.len;
    for (uint64_t i = 0; i < n; i++) put_scalar(&w->kv, elem_type, (const char *)data + i * es);
    return kv_done(w);
}

mint_status mint_gguf_add_arr_str(mint_gguf_writer *w, const char *key, const mint_str *strs,
                                  uint64_t n) {
    put_str(&w->kv, key, strlen(key));
    put_u32(&w->kv, MINT_VAL_ARRAY);
    put_u32(&w->kv, MINT_VAL_STRING);
    put_u64(&w->kv, n);
    w->last_value = w->kv.len;
    for (uint64_t i = 0; i < n; i++) put_str(&w->kv, strs[i].p, strs[i].len);
    return kv_done(w);
}

uint64_t mint_gguf_writer_last_value_offset(const mint_gguf_writer *w) {
    return 24 + w->last_value; // the metadata records follow the 24-byte header
}

mint_status mint_gguf_add_kv_from(mint_gguf_writer *w, const mint_file *f, uint64_t i) {
    if (i >= f->n_kv) return MINT_E_ARG;
    const mint_kv *kv = &f->kv[i];
    // Scalars are held widened in kv->v; narrow them back to their own native type.
    union {
        uint8_t u8;
        int8_t i8;
        uint16_t u16;
        int16_t i16;
        uint32_t u32;
        int32_t i32;
        uint64_t u64;
        int64_t i64;
        float f32;
        double f64;
    } x;
    switch (kv->type) {
    case MINT_VAL_STRING:
        return mint_gguf_add_strn(w, kv->key, kv->str, kv->n);
    case MINT_VAL_ARRAY:
        if (kv->elem_type == MINT_VAL_STRING)
            return mint_gguf_add_arr_str(w, kv->key, kv->arr, kv->n);
        return mint_gguf_add_arr(w, kv->key, kv->elem_type, kv->arr, kv->n);
    case MINT_VAL_U8:
    case MINT_VAL_BOOL:
        x.u8 = (uint8_t)kv->v.u;
        break;
    case MINT_VAL_I8:
        x.i8 = (int8_t)kv->v.i;
        break;
    case MINT_VAL_U16:
        x.u16 = (uint16_t)kv->v.u;
        break;
    case MINT_VAL_I16:
        x.i16 = (int16_t)kv->v.i;
        break;
    case MINT_VAL_U32:
        x.u32 = (uint32_t)kv->v.u;
        break;
    case MINT_VAL_I32:
        x.i32 = (int32_t)kv->v.i;
        break;
    case MINT_VAL_U64:
        x.u64 = kv->v.u;
        break;
    case MINT_VAL_I64:
        x.i64 = kv->v.i;
        break;
    case MINT_VAL_F32:
        x.f32 = (float)kv->v.f;
        break;
    case MINT_VAL_F64:
        x.f64 = kv->v.f;
        break;
    default:
        return MINT_E_ARG;
    }
    return mint_gguf_add_scalar(w, kv->key, kv->type, &x);
}

// ---------------------------------------------------------------------------------------------
// Tensors

static mint_status add_tensor(mint_gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                              const int64_t *ne, const void *data, uint64_t nbytes,
                              mint_gguf_fill_fn fill, void *user, uint64_t index) {
    wtensor *t = realloc(w->t, (size_t)(w->n_t + 1) * sizeof *t);
    if (!t) return MINT_E_NOMEM;
    w->t = t;
    wtensor *e = &w->t[w->n_t];
    memset(e, 0, sizeof *e);
    e->name = strdup(name);
    if (!e->name) return MINT_E_NOMEM;
    e->type = type;
    e->n_dims = n_dims;
    for (int d = 0; d < 4; d++) e->ne[d] = d < (int)n_dims ? ne[d] : 1;
    e->data = data;
    e->nbytes = nbytes;
    e->fill = fill;
    e->user = user;
    e->index = index;
    w->n_t++;
    return MINT_OK;
}

mint_status mint_gguf_add_tensor(mint_gguf_writer *w, const char *name, uint32_t type,
                                 uint32_t n_dims, const int64_t *ne, const void *data,
                                 uint64_t nbytes) {
    return add_tensor(w, name, type, n_dims, ne, data, nbytes, NULL, NULL, 0);
}

mint_status mint_gguf_add_tensor_fill(mint_gguf_writer *w, const char *name, uint32_t type,
                                      uint32_t n_dims, const int64_t *ne, uint64_t nbytes,
                                      mint_gguf_fill_fn fill, void *user, uint64_t index) {
    return add_tensor(w, name, type, n_dims, ne, NULL, nbytes, fill, user, index);
}

// ---------------------------------------------------------------------------------------------
// Writing

static const uint8_t zeros[4096] = {0}; // source of padding bytes

static uint64_t align_up(uint64_t x, uint32_t a) {
    return a ? x + (a - x % a) % a : x;
}

// Header, metadata and tensor infos, padded to the alignment. Offsets are assigned here.
static mint_status encode_header(mint_gguf_writer *w, bytes *b) {
    put_u32(b, MINT_GGUF_MAGIC);
    put_u32(b, w->version);
    put_u64(b, w->n_t);
    put_u64(b, w->n_kv);
    put(b, w->kv.p, w->kv.len);
    uint64_t off = 0;
    for (uint64_t i = 0; i < w->n_t; i++) {
        const wtensor *t = &w->t[i];
        put_str(b, t->name, strlen(t->name));
        put_u32(b, t->n_dims);
        for (uint32_t d = 0; d < t->n_dims && d < 4; d++) put_u64(b, (uint64_t)t->ne[d]);
        put_u32(b, t->type);
        put_u64(b, off);
        off = align_up(off + t->nbytes, w->alignment);
    }
    // Without tensors there is no data section to pad for: llama.cpp's vocab-only files end
    // right after the metadata, and so do ours.
    size_t pad = w->n_t ? (size_t)(align_up(b->len, w->alignment) - b->len) : 0;
    while (pad > 0) {
        size_t n = pad < sizeof zeros ? pad : sizeof zeros;
        put(b, zeros, n);
        pad -= n;
    }
    return b->oom || w->kv.oom ? MINT_E_NOMEM : MINT_OK;
}

// Calls sink(ctx, bytes, n) for every byte of the file after the header.
typedef mint_status (*sink_fn)(void *ctx, const void *p, size_t n, mint_err *err);

// n zero bytes, in pieces of at most sizeof zeros (padding can be as long as the alignment).
static mint_status emit_zeros(sink_fn sink, void *ctx, uint64_t n, mint_err *err) {
    mint_status st = MINT_OK;
    while (n > 0 && st == MINT_OK) {
        size_t k = n < sizeof zeros ? (size_t)n : sizeof zeros;
        st = sink(ctx, zeros, k, err);
        n -= k;
    }
    return st;
}

static mint_status emit_data(mint_gguf_writer *w, sink_fn sink, void *ctx, mint_err *err) {
    uint64_t off = 0;
    for (uint64_t i = 0; i < w->n_t; i++) {
        const wtensor *t = &w->t[i];
        mint_status st = MINT_OK;
        if (t->fill) {
            void *buf = malloc(t->nbytes ? (size_t)t->nbytes : 1);
            if (!buf) return mint_fail(err, MINT_E_NOMEM, "gguf writer: out of memory");
            st = t->fill(t->user, t->index, buf, t->nbytes, err);
            if (st == MINT_OK) st = sink(ctx, buf, (size_t)t->nbytes, err);
            free(buf);
        } else if (t->data) {
            st = sink(ctx, t->data, (size_t)t->nbytes, err);
        } else {
            st = emit_zeros(sink, ctx, t->nbytes, err);
        }
        if (st != MINT_OK) return st;
        uint64_t end = off + t->nbytes;
        off = align_up(end, w->alignment);
        // Every tensor is padded to the alignment, the last one too, as llama.cpp writes them.
        st = emit_zeros(sink, ctx, off - end, err);
        if (st != MINT_OK) return st;
    }
    return MINT_OK;
}

static mint_status sink_bytes(void *ctx, const void *p, size_t n, mint_err *err) {
    bytes *b = ctx;
    put(b, p, n);
    return b->oom ? mint_fail(err, MINT_E_NOMEM, "gguf writer: out of memory") : MINT_OK;
}

mint_status mint_gguf_writer_write_mem(mint_gguf_writer *w, uint8_t **buf, size_t *len,
                                       mint_err *err) {
    *buf = NULL;
    *len = 0;
    bytes b = {0};
    mint_status st = encode_header(w, &b);
    if (st != MINT_OK) {
        free(b.p);
        return mint_fail(err, st, "gguf writer: out of memory");
    }
    st = emit_data(w, sink_bytes, &b, err);
    if (st != MINT_OK) {
        free(b.p);
        return st;
    }
    *buf = b.p;
    *len = b.len;
    return MINT_OK;
}

static mint_status sink_file(void *ctx, const void *p, size_t n, mint_err *err) {
    return mint_atomic_file_write(ctx, p, n, err);
}

mint_status mint_gguf_writer_write_file(mint_gguf_writer *w, const char *path, mint_err *err) {
    return mint_gguf_writer_write_file_ex(w, path, NULL, NULL, err);
}

mint_status mint_gguf_writer_write_file_ex(mint_gguf_writer *w, const char *path,
                                           mint_gguf_finish_fn finish, void *user, mint_err *err) {
    bytes b = {0};
    mint_status st = encode_header(w, &b);
    if (st != MINT_OK) {
        free(b.p);
        return mint_fail(err, st, "gguf writer: out of memory");
    }
    mint_atomic_file *af = NULL;
    st = mint_atomic_file_begin(path, &af, err);
    if (st == MINT_OK) st = mint_atomic_file_write(af, b.p, b.len, err);
    free(b.p);
    if (st == MINT_OK) st = emit_data(w, sink_file, af, err);
    if (st == MINT_OK && finish) st = finish(user, af, err);
    if (st == MINT_OK) return mint_atomic_file_commit(af, err);
    mint_atomic_file_abort(af);
    return st;
}
