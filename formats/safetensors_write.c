// safetensors_write.c - the safetensors writer: tensors are recorded, then written in one pass
// (length, JSON header padded with spaces, the tensors back to back).
#include "formats/safetensors.h"

#include "base/error.h"
#include "base/fileio.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

typedef struct st_wtensor {
    char *name;              // owned copy
    const mint_st_dtype *dt; // dtype
    uint32_t n_dims;         // 1..4
    int64_t ne[4];           // ggml order
    const void *data;        // [nbytes] borrowed
    uint64_t nbytes;         // bytes
} st_wtensor;

struct mint_st_writer {
    st_wtensor *t; // [n_t] in the order added
    size_t n_t;    // tensors
    char **meta;   // [2 * n_meta] key, value, key, value ...
    size_t n_meta; // metadata entries
};

mint_st_writer *mint_st_writer_create(void) {
    return calloc(1, sizeof(mint_st_writer));
}

void mint_st_writer_free(mint_st_writer *w) {
    if (!w) return;
    for (size_t i = 0; i < w->n_t; i++) free(w->t[i].name);
    for (size_t i = 0; i < 2 * w->n_meta; i++) free(w->meta[i]);
    free(w->meta);
    free(w->t);
    free(w);
}

mint_status mint_st_writer_add_meta(mint_st_writer *w, const char *key, const char *value) {
    char **meta = realloc(w->meta, 2 * (w->n_meta + 1) * sizeof *meta);
    if (!meta) return MINT_E_NOMEM;
    w->meta = meta;
    char *k = strdup(key), *v = strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return MINT_E_NOMEM;
    }
    w->meta[2 * w->n_meta] = k;
    w->meta[2 * w->n_meta + 1] = v;
    w->n_meta++;
    return MINT_OK;
}

mint_status mint_st_writer_add(mint_st_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                               const int64_t *ne, const void *data, uint64_t nbytes,
                               mint_err *err) {
    const mint_st_dtype *dt = mint_st_dtype_of_type(type);
    if (!dt)
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "safetensors writer: tensor '%s' has ggml type %s, which safetensors "
                         "cannot hold (F32, F16, BF16, F64, I8..I64 only)",
                         name, mint_type_name(type));
    if (n_dims < 1 || n_dims > 4)
        return mint_fail(err, MINT_E_ARG, "safetensors writer: tensor '%s': n_dims %u", name,
                         n_dims);
    uint64_t count = 1;
    for (uint32_t d = 0; d < n_dims; d++) count *= (uint64_t)ne[d];
    if (count * dt->size != nbytes)
        return mint_fail(err, MINT_E_ARG,
                         "safetensors writer: tensor '%s': %" PRIu64 " bytes given, the shape "
                         "needs %" PRIu64,
                         name, nbytes, count * dt->size);
    // json-c would keep only the last of two equal keys; refuse instead of writing a broken file.
    for (size_t i = 0; i < w->n_t; i++)
        if (strcmp(w->t[i].name, name) == 0)
            return mint_fail(err, MINT_E_ARG, "safetensors writer: tensor '%s' added twice", name);
    if (strcmp(name, "__metadata__") == 0 || name[0] == '\0')
        return mint_fail(err, MINT_E_ARG, "safetensors writer: '%s' is not a tensor name", name);
    st_wtensor *t = realloc(w->t, (w->n_t + 1) * sizeof *t);
    if (!t) return mint_fail(err, MINT_E_NOMEM, "safetensors writer: out of memory");
    w->t = t;
    st_wtensor *e = &w->t[w->n_t];
    memset(e, 0, sizeof *e);
    e->name = strdup(name);
    if (!e->name) return mint_fail(err, MINT_E_NOMEM, "safetensors writer: out of memory");
    e->dt = dt;
    e->n_dims = n_dims;
    for (int d = 0; d < 4; d++) e->ne[d] = d < (int)n_dims ? ne[d] : 1;
    e->data = data;
    e->nbytes = nbytes;
    w->n_t++;
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Layout

// The reference writer's order: larger elements first (so every tensor stays aligned to its
// element size when the buffer starts 8-aligned), then by name.
static int cmp_order(const void *a, const void *b) {
    const st_wtensor *x = *(const st_wtensor *const *)a, *y = *(const st_wtensor *const *)b;
    if (x->dt->size != y->dt->size) return x->dt->size > y->dt->size ? -1 : 1;
    return strcmp(x->name, y->name);
}

// Builds the padded header (without the 8-byte length) and the write order.
static mint_status build_header(mint_st_writer *w, char **hdr, size_t *hdr_len,
                                st_wtensor ***order_out, mint_err *err) {
    *hdr = NULL;
    *order_out = NULL;
    st_wtensor **order = malloc((w->n_t + 1) * sizeof *order);
    json_object *root = json_object_new_object();
    mint_status st = order && root ? MINT_OK : MINT_E_NOMEM;
    if (st == MINT_OK && w->n_meta) {
        json_object *meta = json_object_new_object();
        if (!meta) st = MINT_E_NOMEM;
        for (size_t i = 0; i < w->n_meta && st == MINT_OK; i++)
            if (json_object_object_add(meta, w->meta[2 * i],
                                       json_object_new_string(w->meta[2 * i + 1])) != 0)
                st = MINT_E_NOMEM;
        if (st == MINT_OK && json_object_object_add(root, "__metadata__", meta) != 0)
            st = MINT_E_NOMEM;
    }
    if (st == MINT_OK) {
        for (size_t i = 0; i < w->n_t; i++) order[i] = &w->t[i];
        qsort(order, w->n_t, sizeof *order, cmp_order);
    }
    uint64_t off = 0;
    for (size_t i = 0; i < w->n_t && st == MINT_OK; i++) {
        const st_wtensor *t = order[i];
        json_object *e = json_object_new_object(), *shape = json_object_new_array(),
                    *offs = json_object_new_array();
        // e owns shape and offs once added, so one put releases all three.
        if (!e || !shape || !offs || json_object_object_add(e, "shape", shape) != 0) {
            json_object_put(shape);
            json_object_put(offs);
            json_object_put(e);
            st = MINT_E_NOMEM;
            break;
        }
        if (json_object_object_add(e, "data_offsets", offs) != 0) {
            json_object_put(offs);
            json_object_put(e);
            st = MINT_E_NOMEM;
            break;
        }
        // PyTorch order: outermost first.
        for (int d = (int)t->n_dims - 1; d >= 0; d--)
            if (json_object_array_add(shape, json_object_new_int64(t->ne[d])) != 0)
                st = MINT_E_NOMEM;
        if (json_object_array_add(offs, json_object_new_int64((int64_t)off)) != 0 ||
            json_object_array_add(offs, json_object_new_int64((int64_t)(off + t->nbytes))) != 0 ||
            json_object_object_add(e, "dtype", json_object_new_string(t->dt->name)) != 0)
            st = MINT_E_NOMEM;
        if (st != MINT_OK || json_object_object_add(root, t->name, e) != 0) {
            json_object_put(e);
            st = MINT_E_NOMEM;
        }
        off += t->nbytes;
    }
    size_t len = 0;
    const char *text =
        st == MINT_OK ? json_object_to_json_string_length(
                            root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len)
                      : NULL;
    if (st == MINT_OK && !text) st = MINT_E_NOMEM;
    size_t padded = (len + 7) / 8 * 8; // 8 + padded is a multiple of 8
    char *buf = st == MINT_OK ? malloc(padded ? padded : 1) : NULL;
    if (st == MINT_OK && !buf) st = MINT_E_NOMEM;
    if (st == MINT_OK) {
        memcpy(buf, text, len);
        memset(buf + len, ' ', padded - len);
    }
    json_object_put(root);
    if (st != MINT_OK) {
        free(order);
        free(buf);
        return mint_fail(err, st, "safetensors writer: out of memory");
    }
    *hdr = buf;
    *hdr_len = padded;
    *order_out = order;
    return MINT_OK;
}

typedef mint_status (*sink_fn)(void *ctx, const void *p, size_t n, mint_err *err);

static mint_status emit(mint_st_writer *w, sink_fn sink, void *ctx, mint_err *err) {
    char *hdr;
    size_t hdr_len = 0;
    st_wtensor **order;
    mint_status st = build_header(w, &hdr, &hdr_len, &order, err);
    if (st != MINT_OK) return st;
    uint8_t len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (uint8_t)((uint64_t)hdr_len >> (8 * i));
    st = sink(ctx, len8, 8, err);
    if (st == MINT_OK) st = sink(ctx, hdr, hdr_len, err);
    for (size_t i = 0; i < w->n_t && st == MINT_OK; i++)
        if (order[i]->nbytes) st = sink(ctx, order[i]->data, (size_t)order[i]->nbytes, err);
    free(hdr);
    free(order);
    return st;
}

typedef struct membuf {
    uint8_t *p; // [cap]
    size_t len; // used
    size_t cap; // allocated
} membuf;

static mint_status sink_mem(void *ctx, const void *p, size_t n, mint_err *err) {
    membuf *b = ctx;
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < n) cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q) return mint_fail(err, MINT_E_NOMEM, "safetensors writer: out of memory");
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    return MINT_OK;
}

mint_status mint_st_writer_write_mem(mint_st_writer *w, uint8_t **buf, size_t *len, mint_err *err) {
    membuf b = {0};
    mint_status st = emit(w, sink_mem, &b, err);
    if (st != MINT_OK) {
        free(b.p);
        *buf = NULL;
        *len = 0;
        return st;
    }
    *buf = b.p;
    *len = b.len;
    return MINT_OK;
}

static mint_status sink_file(void *ctx, const void *p, size_t n, mint_err *err) {
    return mint_atomic_file_write(ctx, p, n, err);
}

mint_status mint_st_writer_write_file(mint_st_writer *w, const char *path, mint_err *err) {
    mint_atomic_file *af = NULL;
    mint_status st = mint_atomic_file_begin(path, &af, err);
    if (st != MINT_OK) return st;
    st = emit(w, sink_file, af, err);
    if (st == MINT_OK) return mint_atomic_file_commit(af, err);
    mint_atomic_file_abort(af);
    return st;
}
