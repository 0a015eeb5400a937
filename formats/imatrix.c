// imatrix.c - importance matrices: reading llama-imatrix's GGUF and legacy .dat files,
// combining, saving, and the importance llama-quantize derives (formats/imatrix.h).
#include "formats/imatrix.h"

#include "base/error.h"
#include "formats/gguf.h"
#include "formats/mapped_file.h"
#include "formats/tensor_dir.h"
#include "quant/types.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// The set of entries

static void entry_free(mint_imx_entry *e) {
    if (!e) return;
    free(e->name);
    free(e->sums);
    free(e->counts);
    free(e);
}

mint_status mint_imatrix_create(uint32_t chunk_size, mint_imatrix **out, mint_err *err) {
    *out = calloc(1, sizeof **out);
    if (!*out) return mint_fail(err, MINT_E_NOMEM, "imatrix: out of memory");
    (*out)->chunk_size = chunk_size;
    (*out)->collector = true;
    return MINT_OK;
}

void mint_imatrix_free(mint_imatrix *im) {
    if (!im) return;
    for (int64_t i = 0; i < im->n; i++) entry_free(im->e[i]);
    free(im->e);
    for (int64_t i = 0; i < im->n_datasets; i++) free(im->datasets[i]);
    free(im->datasets);
    free(im);
}

// Index of the first entry whose name is not below `name` (binary search).
static int64_t lower_bound(const mint_imatrix *im, const char *name) {
    int64_t lo = 0, hi = im->n;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (strcmp(im->e[mid]->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

mint_imx_entry *mint_imatrix_lookup(const mint_imatrix *im, const char *name) {
    const int64_t i = lower_bound(im, name);
    return i < im->n && strcmp(im->e[i]->name, name) == 0 ? im->e[i] : NULL;
}

mint_status mint_imatrix_get_or_add(mint_imatrix *im, const char *name, int64_t n_vals,
                                    int64_t n_counts, mint_imx_entry **out, mint_err *err) {
    const int64_t i = lower_bound(im, name);
    if (i < im->n && strcmp(im->e[i]->name, name) == 0) {
        *out = im->e[i];
        if (im->e[i]->n_vals != n_vals)
            return mint_fail(err, MINT_E_LIMIT, "imatrix: inconsistent size for %s (%lld vs %lld)",
                             name, (long long)im->e[i]->n_vals, (long long)n_vals);
        return MINT_OK;
    }
    *out = NULL;
    if (n_vals < 0 || n_vals > MINT_IMATRIX_MAX_VALUES || n_counts < 0 || n_counts > n_vals + 1 ||
        im->n >= MINT_IMATRIX_MAX_ENTRIES)
        return mint_fail(err, MINT_E_LIMIT,
                         "imatrix: entry %s of %lld values and %lld counts (at most %lld values, "
                         "%d entries)",
                         name, (long long)n_vals, (long long)n_counts,
                         (long long)MINT_IMATRIX_MAX_VALUES, MINT_IMATRIX_MAX_ENTRIES);
    if (im->n == im->cap) {
        const int64_t cap = im->cap ? im->cap * 2 : 64;
        mint_imx_entry **e = realloc(im->e, (size_t)cap * sizeof *e);
        if (!e) return mint_fail(err, MINT_E_NOMEM, "imatrix: out of memory");
        im->e = e;
        im->cap = cap;
    }
    mint_imx_entry *e = calloc(1, sizeof *e);
    if (e) {
        e->name = strdup(name);
        e->sums = calloc(n_vals ? (size_t)n_vals : 1, sizeof *e->sums);
        e->counts = calloc(n_counts ? (size_t)n_counts : 1, sizeof *e->counts);
    }
    if (!e || !e->name || !e->sums || !e->counts) {
        entry_free(e);
        return mint_fail(err, MINT_E_NOMEM, "imatrix: out of memory for %s", name);
    }
    e->n_vals = n_vals;
    e->n_counts = n_counts;
    memmove(im->e + i + 1, im->e + i, (size_t)(im->n - i) * sizeof *im->e);
    im->e[i] = e;
    im->n++;
    *out = e;
    return MINT_OK;
}

mint_status mint_imatrix_add_dataset(mint_imatrix *im, const char *name, mint_err *err) {
    char **d = realloc(im->datasets, (size_t)(im->n_datasets + 1) * sizeof *d);
    if (!d) return mint_fail(err, MINT_E_NOMEM, "imatrix: out of memory");
    im->datasets = d;
    if (!(d[im->n_datasets] = strdup(name)))
        return mint_fail(err, MINT_E_NOMEM, "imatrix: out of memory");
    im->n_datasets++;
    return MINT_OK;
}

// llama-imatrix's chunk count of a collection: the largest count in whole chunks.
static uint32_t chunks_of(const mint_imatrix *im) {
    if (!im->collector || im->chunk_size == 0) return im->chunk_count;
    int64_t max = 0;
    for (int64_t i = 0; i < im->n; i++)
        for (int64_t j = 0; j < im->e[i]->n_counts; j++)
            if (im->e[i]->counts[j] > max) max = im->e[i]->counts[j];
    const int64_t c = max / im->chunk_size;
    return c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

void mint_imatrix_get_info(const mint_imatrix *im, mint_imatrix_info *out) {
    *out = (mint_imatrix_info){.n_entries = im->n,
                               .n_datasets = im->n_datasets,
                               .chunk_count = chunks_of(im),
                               .chunk_size = im->chunk_size,
                               .legacy = im->legacy,
                               .has_metadata = im->has_metadata};
}

const char *mint_imatrix_dataset(const mint_imatrix *im, int64_t i) {
    return i >= 0 && i < im->n_datasets ? im->datasets[i] : NULL;
}

static void to_public(const mint_imx_entry *e, mint_imatrix_entry *out) {
    *out = (mint_imatrix_entry){e->name, e->n_vals, e->n_counts, e->sums, e->counts};
}

mint_status mint_imatrix_entry_at(const mint_imatrix *im, int64_t i, mint_imatrix_entry *out) {
    if (i < 0 || i >= im->n) return MINT_E_ARG;
    to_public(im->e[i], out);
    return MINT_OK;
}

mint_status mint_imatrix_find(const mint_imatrix *im, const char *name, mint_imatrix_entry *out) {
    const mint_imx_entry *e = mint_imatrix_lookup(im, name);
    if (!e) return MINT_E_NOT_FOUND;
    to_public(e, out);
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Reading the GGUF layout

// Little-endian f32 at p (tensor data may sit at any alignment the file chose).
static float get_f32(const uint8_t *p) {
    float v;
    memcpy(&v, p, sizeof v);
    return v;
}

// A count as llama.cpp's loader reads it (lround of the stored float), refusing what no count
// can be: not finite, negative, or past 2^53 (where floats stop holding every integer).
static mint_status get_count(float v, const char *fname, const char *name, int64_t j, int64_t *out,
                             mint_err *err) {
    if (!isfinite(v) || v < 0.0f || v > 9007199254740992.0f)
        return mint_fail(err, MINT_E_FORMAT,
                         "%s: %s.counts[%lld] = %g is not a count (finite, 0 .. 2^53)", fname, name,
                         (long long)j, (double)v);
    *out = (int64_t)lroundf(v);
    return MINT_OK;
}

static bool ends_with(const char *s, size_t len, const char *suffix, size_t n) {
    return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

static mint_status read_gguf_meta(const mint_file *f, const char *fname, mint_imatrix *im,
                                  mint_err *err) {
    static const char *const keys[2] = {"imatrix.chunk_count", "imatrix.chunk_size"};
    uint32_t *dst[2] = {&im->chunk_count, &im->chunk_size};
    bool have = true;
    for (int k = 0; k < 2; k++) {
        mint_status st = mint_file_get_u32(f, keys[k], dst[k], err);
        if (st == MINT_E_NOT_FOUND) {
            have = false;
            continue;
        }
        if (st != MINT_OK)
            return mint_fail(err, MINT_E_FORMAT, "%s: %s is not a u32 (type %s)", fname, keys[k],
                             mint_value_type_name(mint_file_find_kv(f, keys[k])->type));
    }
    const mint_kv *d = mint_file_find_kv(f, "imatrix.datasets");
    have = have && d;
    // llama.cpp's loader takes the names from an array of strings and ignores anything else.
    if (d && d->type == MINT_VAL_ARRAY && d->elem_type == MINT_VAL_STRING) {
        const mint_str *s = d->arr;
        for (uint64_t i = 0; i < d->n; i++) {
            char *name = strndup(s[i].p, (size_t)s[i].len); // a NUL inside ends it, as in C++
            if (!name) return mint_fail(err, MINT_E_NOMEM, "%s: out of memory", fname);
            mint_status st = mint_imatrix_add_dataset(im, name, err);
            free(name);
            if (st != MINT_OK) return st;
        }
    }
    im->has_metadata = have;
    return MINT_OK;
}

// Pairs every "<name>.in_sum2" with its "<name>.counts" (other tensors are ignored, as by
// llama.cpp's loader) and copies them into entries.
static mint_status read_gguf_tensors(const mint_file *f, const char *fname, mint_imatrix *im,
                                     mint_err *err) {
    static const char s_sum[] = ".in_sum2", s_cnt[] = ".counts";
    if (f->n_tensors < 1) return mint_fail(err, MINT_E_FORMAT, "%s: no data (no tensors)", fname);
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        const mint_tdesc *t = &f->t[i];
        const size_t len = strlen(t->name);
        const bool is_sum = ends_with(t->name, len, s_sum, sizeof s_sum - 1);
        const bool is_cnt = ends_with(t->name, len, s_cnt, sizeof s_cnt - 1);
        if (!is_sum && !is_cnt) continue;
        const size_t base_len = len - (is_sum ? sizeof s_sum - 1 : sizeof s_cnt - 1);
        char name[MINT_MAX_NAME + 1], other[MINT_MAX_NAME + 16];
        memcpy(name, t->name, base_len);
        name[base_len] = '\0';
        snprintf(other, sizeof other, "%s%s", name, is_sum ? s_cnt : s_sum);
        const mint_tdesc *o = mint_file_find(f, other);
        if (!o)
            return mint_fail(err, MINT_E_FORMAT, "%s: mismatched sums and counts for %s: no %s",
                             fname, name, other);
        if (is_cnt) continue; // handled with its in_sum2
        const mint_tdesc *c = o;
        if (t->type != MINT_TYPE_F32 || c->type != MINT_TYPE_F32)
            return mint_fail(err, MINT_E_FORMAT,
                             "%s: sums and counts for %s must be F32, not %s, %s", fname, name,
                             mint_type_name(t->type), mint_type_name(c->type));
        const int64_t n_vals = (int64_t)(t->nbytes / 4), n_counts = (int64_t)(c->nbytes / 4);
        if (n_counts < 1 || n_vals < 1 || n_vals % n_counts != 0)
            return mint_fail(err, MINT_E_FORMAT,
                             "%s: %s has %lld sums for %lld counts (want a positive multiple)",
                             fname, name, (long long)n_vals, (long long)n_counts);
        mint_imx_entry *e;
        mint_status st = mint_imatrix_get_or_add(im, name, n_vals, n_counts, &e, err);
        if (st != MINT_OK) {
            mint_err_prefix(err, "%s", fname);
            return st;
        }
        const uint8_t *ps = t->data, *pc = c->data;
        for (int64_t j = 0; j < n_vals; j++) e->sums[j] = get_f32(ps + 4 * j);
        for (int64_t j = 0; j < n_counts; j++) {
            st = get_count(get_f32(pc + 4 * j), fname, name, j, &e->counts[j], err);
            if (st != MINT_OK) return st;
        }
    }
    if (im->n == 0)
        return mint_fail(err, MINT_E_FORMAT, "%s: no <name>.in_sum2 / <name>.counts tensors",
                         fname);
    return MINT_OK;
}

static mint_status parse_gguf(const void *data, size_t size, const char *fname, mint_imatrix *im,
                              mint_err *err) {
    mint_file *f = NULL;
    mint_status st = mint_gguf_parse(data, size, fname, &f, err);
    if (st != MINT_OK) return st;
    st = read_gguf_meta(f, fname, im, err);
    if (st == MINT_OK) st = read_gguf_tensors(f, fname, im, err);
    mint_file_close(f);
    return st;
}

// ---------------------------------------------------------------------------------------------
// Reading the legacy layout

typedef struct reader {
    const uint8_t *p; // [size] the image
    size_t size;      // bytes
    size_t at;        // read position
} reader;

static bool get_i32(reader *r, int32_t *v) {
    if (r->size - r->at < 4) return false;
    uint32_t u = (uint32_t)r->p[r->at] | (uint32_t)r->p[r->at + 1] << 8 |
                 (uint32_t)r->p[r->at + 2] << 16 | (uint32_t)r->p[r->at + 3] << 24;
    memcpy(v, &u, sizeof u);
    r->at += 4;
    return true;
}

static mint_status parse_legacy(const void *data, size_t size, const char *fname, mint_imatrix *im,
                                mint_err *err) {
    reader r = {data, size, 0};
    int32_t n_entries;
    if (!get_i32(&r, &n_entries) || n_entries < 1)
        return mint_fail(err, MINT_E_FORMAT, "%s: no data: %s (legacy imatrix: i32 n_entries >= 1)",
                         fname, size < 4 ? "shorter than 4 bytes" : "entry count < 1");
    if (n_entries > MINT_IMATRIX_MAX_ENTRIES || (size_t)n_entries > size / 12)
        return mint_fail(err, MINT_E_FORMAT,
                         "%s: %d entries do not fit in %zu bytes (legacy imatrix, at most %d)",
                         fname, n_entries, size, MINT_IMATRIX_MAX_ENTRIES);
    for (int32_t i = 0; i < n_entries; i++) {
        const size_t at = r.at;
        int32_t len, ncall, nval;
        if (!get_i32(&r, &len) || len < 0 || len > MINT_IMATRIX_MAX_NAME ||
            (size_t)len > size - r.at)
            return mint_fail(err, MINT_E_FORMAT,
                             "%s: entry %d at byte %zu: bad name length (0 .. %d, inside the file)",
                             fname, i + 1, at, MINT_IMATRIX_MAX_NAME);
        char name[MINT_IMATRIX_MAX_NAME + 1];
        memcpy(name, r.p + r.at, (size_t)len);
        name[len] = '\0'; // a NUL inside ends the name, as in llama.cpp's loader
        r.at += (size_t)len;
        if (!get_i32(&r, &ncall) || !get_i32(&r, &nval) || nval < 1)
            return mint_fail(err, MINT_E_FORMAT,
                             "%s: entry %d (%s): failed reading the number of values (>= 1)", fname,
                             i + 1, name);
        if ((size_t)nval > (size - r.at) / 4)
            return mint_fail(err, MINT_E_FORMAT,
                             "%s: entry %d (%s): %d values run past the end (%zu bytes left)",
                             fname, i + 1, name, nval, size - r.at);
        if (mint_imatrix_lookup(im, name))
            return mint_fail(err, MINT_E_FORMAT, "%s: entry %d: duplicate name %s", fname, i + 1,
                             name);
        mint_imx_entry *e;
        mint_status st = mint_imatrix_get_or_add(im, name, nval, 1, &e, err);
        if (st != MINT_OK) {
            mint_err_prefix(err, "%s", fname);
            return st;
        }
        for (int32_t j = 0; j < nval; j++) e->sums[j] = get_f32(r.p + r.at + 4 * (size_t)j);
        r.at += 4 * (size_t)nval;
        e->counts[0] = ncall;
    }
    // The optional trailer: the chunk count, then the dataset's name. A short trailer is read as
    // far as it goes, as llama.cpp's loader does.
    int32_t n_calls, len;
    if (r.at < size) {
        im->chunk_count = get_i32(&r, &n_calls) && n_calls > 0 ? (uint32_t)n_calls : 0;
        if (get_i32(&r, &len) && len > 0 && (size_t)len <= size - r.at) {
            char *d = strndup((const char *)r.p + r.at, (size_t)len);
            if (!d) return mint_fail(err, MINT_E_NOMEM, "%s: out of memory", fname);
            mint_status st = mint_imatrix_add_dataset(im, d, err);
            free(d);
            if (st != MINT_OK) return st;
        }
    }
    im->legacy = true;
    return MINT_OK;
}

mint_status mint_imatrix_parse(const void *data, size_t size, const char *name, mint_imatrix **out,
                               mint_err *err) {
    *out = NULL;
    mint_imatrix *im = calloc(1, sizeof *im);
    if (!im) return mint_fail(err, MINT_E_NOMEM, "%s: out of memory", name);
    const bool gguf = size >= 4 && memcmp(data, "GGUF", 4) == 0;
    mint_status st =
        gguf ? parse_gguf(data, size, name, im, err) : parse_legacy(data, size, name, im, err);
    if (st != MINT_OK) {
        mint_err_one_line(err);
        mint_imatrix_free(im);
        return st;
    }
    *out = im;
    return MINT_OK;
}

mint_status mint_imatrix_load(const char *path, mint_imatrix **out, mint_err *err) {
    *out = NULL;
    mint_mapped_file map;
    mint_status st = mint_mapped_file_load(path, false, &map, err);
    if (st != MINT_OK) return st;
    st = mint_imatrix_parse(map.data ? map.data : (const void *)"", map.size, path, out, err);
    mint_mapped_file_close(&map);
    return st;
}

// ---------------------------------------------------------------------------------------------
// Combining and the importance

mint_status mint_imatrix_combine(mint_imatrix *dst, const mint_imatrix *src, mint_err *err) {
    if (dst->legacy)
        return mint_fail(err, MINT_E_ARG, "imatrix: cannot combine into a legacy file read in");
    if (src->legacy && dst->chunk_size == 0)
        return mint_fail(err, MINT_E_ARG,
                         "imatrix: combining a legacy file needs a chunk size (got 0)");
    // Check every entry first, so that a refusal leaves dst as it was.
    for (int64_t i = 0; i < src->n; i++) {
        const mint_imx_entry *s = src->e[i], *d = mint_imatrix_lookup(dst, s->name);
        if (!d) continue;
        if (d->n_vals != s->n_vals)
            return mint_fail(err, MINT_E_LIMIT,
                             "imatrix: mismatched sums size for %s: %lld != %lld", s->name,
                             (long long)s->n_vals, (long long)d->n_vals);
        if (!src->legacy && d->n_counts != s->n_counts && d->n_counts != 1)
            return mint_fail(err, MINT_E_LIMIT,
                             "imatrix: mismatched counts size for %s: %lld != %lld", s->name,
                             (long long)s->n_counts, (long long)d->n_counts);
    }
    for (int64_t i = 0; i < src->n; i++) {
        const mint_imx_entry *s = src->e[i];
        mint_imx_entry *d;
        mint_status st = mint_imatrix_get_or_add(dst, s->name, s->n_vals,
                                                 src->legacy ? 1 : s->n_counts, &d, err);
        if (st != MINT_OK) return st;
        if (src->legacy) {
            // (sum / count) * ncall, times the chunk size: back to a raw sum of ncall chunks
            const int64_t cs = dst->chunk_size;
            for (int64_t j = 0; j < s->n_vals; j++) d->sums[j] += s->sums[j] * (float)cs;
            for (int64_t j = 0; j < d->n_counts; j++) d->counts[j] += s->counts[0] * cs;
            continue;
        }
        if (d->n_counts == 1 && s->n_counts > 1) { // broadcast a single count to the stack's
            int64_t *c = realloc(d->counts, (size_t)s->n_counts * sizeof *c);
            if (!c) return mint_fail(err, MINT_E_NOMEM, "imatrix: out of memory");
            for (int64_t j = 1; j < s->n_counts; j++) c[j] = c[0];
            d->counts = c;
            d->n_counts = s->n_counts;
        }
        for (int64_t j = 0; j < s->n_vals; j++) d->sums[j] += s->sums[j];
        for (int64_t j = 0; j < s->n_counts; j++) d->counts[j] += s->counts[j];
    }
    for (int64_t i = 0; i < src->n_datasets; i++) {
        mint_status st = mint_imatrix_add_dataset(dst, src->datasets[i], err);
        if (st != MINT_OK) return st;
    }
    return MINT_OK;
}

mint_status mint_imatrix_importance(const mint_imatrix *im, const char *name, int64_t n_per_row,
                                    int64_t n_mat, int64_t mat, float *out, mint_err *err) {
    const mint_imx_entry *e = mint_imatrix_lookup(im, name);
    if (!e) return mint_fail(err, MINT_E_NOT_FOUND, "imatrix: did not find weights for %s", name);
    if (n_per_row < 1 || n_mat < 1 || mat < 0 || mat >= n_mat)
        return mint_fail(err, MINT_E_ARG, "imatrix: matrix %lld of %lld (rows of %lld) for %s",
                         (long long)mat, (long long)n_mat, (long long)n_per_row, name);
    if (e->n_vals / n_mat != n_per_row || e->n_vals % n_mat != 0)
        return mint_fail(err, MINT_E_LIMIT,
                         "imatrix size %lld is different from tensor size %lld for %s",
                         (long long)e->n_vals, (long long)(n_per_row * n_mat), name);
    for (int64_t j = 0; j < e->n_vals; j++)
        if (!isfinite(e->sums[j]))
            return mint_fail(err, MINT_E_FORMAT, "imatrix contains non-finite value %f (%s[%lld])",
                             (double)e->sums[j], name, (long long)j);
    const int64_t per_count = e->n_vals / e->n_counts;
    for (int64_t i = 0; i < n_per_row; i++) {
        const int64_t k = mat * n_per_row + i;
        if (im->legacy) {
            const int64_t ncall = e->counts[0];
            out[i] = ncall > 0 ? e->sums[k] / (float)ncall : e->sums[k];
        } else {
            const float count = (float)e->counts[k / per_count];
            out[i] = count > 0.0f ? e->sums[k] / count : 1.0f;
        }
    }
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Saving

// A writer call's failure (the writer records no message) as one line.
static mint_status added(mint_status st, const char *path, mint_err *err) {
    return st == MINT_OK ? MINT_OK
                         : mint_fail(err, st, "%s: out of memory building the GGUF", path);
}

static mint_status save_gguf(const mint_imatrix *im, const char *path, mint_err *err) {
    int64_t n_counts = 0;
    for (int64_t i = 0; i < im->n; i++) n_counts += im->e[i]->n_counts;
    mint_gguf_writer *w = mint_gguf_writer_create();
    mint_str *ds = calloc((size_t)im->n_datasets + 1, sizeof *ds);
    float *counts = malloc(((size_t)n_counts + 1) * sizeof *counts); // every entry's, as F32
    mint_status st = added(w && ds && counts ? MINT_OK : MINT_E_NOMEM, path, err);
    for (int64_t i = 0; st == MINT_OK && i < im->n_datasets; i++)
        ds[i] = (mint_str){im->datasets[i], strlen(im->datasets[i])};
    if (st == MINT_OK) st = added(mint_gguf_add_str(w, "general.type", "imatrix"), path, err);
    if (st == MINT_OK)
        st = added(mint_gguf_add_arr_str(w, "imatrix.datasets", ds, (uint64_t)im->n_datasets), path,
                   err);
    if (st == MINT_OK)
        st = added(mint_gguf_add_u32(w, "imatrix.chunk_count", chunks_of(im)), path, err);
    if (st == MINT_OK)
        st = added(mint_gguf_add_u32(w, "imatrix.chunk_size", im->chunk_size), path, err);
    int64_t at = 0;
    for (int64_t i = 0; st == MINT_OK && i < im->n; i++) {
        const mint_imx_entry *e = im->e[i];
        if (e->n_vals < 1 || e->n_counts < 1) continue;
        if (strlen(e->name) + 8 > MINT_MAX_NAME) {
            st = mint_fail(err, MINT_E_LIMIT, "%s: %s.in_sum2 is longer than %d bytes", path,
                           e->name, MINT_MAX_NAME);
            break;
        }
        char sname[MINT_MAX_NAME + 1], cname[MINT_MAX_NAME + 1];
        snprintf(sname, sizeof sname, "%s.in_sum2", e->name);
        snprintf(cname, sizeof cname, "%s.counts", e->name);
        for (int64_t j = 0; j < e->n_counts; j++) counts[at + j] = (float)e->counts[j];
        const int64_t ne_s[2] = {e->n_vals / e->n_counts, e->n_counts}, ne_c[2] = {1, e->n_counts};
        st = added(mint_gguf_add_tensor(w, sname, MINT_TYPE_F32, 2, ne_s, e->sums,
                                        (uint64_t)e->n_vals * 4),
                   path, err);
        if (st == MINT_OK)
            st = added(mint_gguf_add_tensor(w, cname, MINT_TYPE_F32, 2, ne_c, counts + at,
                                            (uint64_t)e->n_counts * 4),
                       path, err);
        at += e->n_counts;
    }
    if (st == MINT_OK) st = mint_gguf_writer_write_file(w, path, err);
    mint_gguf_writer_free(w);
    free(counts);
    free(ds);
    return st;
}

static mint_status put_i32(mint_atomic_file *f, int32_t v, mint_err *err) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    const uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    return mint_atomic_file_write(f, b, 4, err);
}

// llama-imatrix's legacy layout: entries with some count, each value (sum / count) * ncall.
static mint_status save_dat(const mint_imatrix *im, const char *path, mint_err *err) {
    if (im->chunk_size == 0)
        return mint_fail(err, MINT_E_ARG, "%s: a .dat imatrix needs a chunk size (got 0)", path);
    int32_t n_entries = 0;
    for (int64_t i = 0; i < im->n; i++) {
        const mint_imx_entry *e = im->e[i];
        bool any = false;
        for (int64_t j = 0; j < e->n_counts; j++) any |= e->counts[j] != 0;
        n_entries += any;
        if (e->n_vals > INT32_MAX || strlen(e->name) > INT32_MAX)
            return mint_fail(err, MINT_E_LIMIT, "%s: %s has %lld values (a .dat holds %d)", path,
                             e->name, (long long)e->n_vals, INT32_MAX);
    }
    mint_atomic_file *f;
    mint_status st = mint_atomic_file_begin(path, &f, err);
    if (st != MINT_OK) return st;
    st = put_i32(f, n_entries, err);
    const int64_t cs = im->chunk_size;
    float *tmp = NULL;
    for (int64_t i = 0; st == MINT_OK && i < im->n; i++) {
        const mint_imx_entry *e = im->e[i];
        int64_t max = 0;
        bool any = false;
        for (int64_t j = 0; j < e->n_counts; j++) {
            any |= e->counts[j] != 0;
            if (e->counts[j] > max) max = e->counts[j];
        }
        if (!any) continue;
        const int32_t len = (int32_t)strlen(e->name), ncall = (int32_t)((max + cs - 1) / cs);
        st = put_i32(f, len, err);
        if (st == MINT_OK) st = mint_atomic_file_write(f, e->name, (size_t)len, err);
        if (st == MINT_OK) st = put_i32(f, ncall, err);
        if (st == MINT_OK) st = put_i32(f, (int32_t)e->n_vals, err);
        float *t = st == MINT_OK ? realloc(tmp, (size_t)e->n_vals * sizeof *t) : NULL;
        if (st == MINT_OK && !t) st = mint_fail(err, MINT_E_NOMEM, "%s: out of memory", path);
        if (st != MINT_OK) break;
        tmp = t;
        const int64_t per = e->n_vals / e->n_counts;
        for (int64_t j = 0; j < e->n_vals; j++) {
            float count = (float)e->counts[j / per], value = e->sums[j];
            if (count == 0.0f) value = count = 1.0f; // an expert no token reached: neutral
            tmp[j] = value / count * (float)ncall;
        }
        for (int64_t j = 0; st == MINT_OK && j < e->n_vals; j++) {
            uint32_t u;
            memcpy(&u, &tmp[j], 4);
            st = put_i32(f, (int32_t)u, err);
        }
    }
    free(tmp);
    const char *ds = im->n_datasets ? im->datasets[im->n_datasets - 1] : "";
    const uint32_t chunks = chunks_of(im);
    if (st == MINT_OK) st = put_i32(f, chunks > INT32_MAX ? INT32_MAX : (int32_t)chunks, err);
    if (st == MINT_OK) st = put_i32(f, (int32_t)strlen(ds), err);
    if (st == MINT_OK) st = mint_atomic_file_write(f, ds, strlen(ds), err);
    if (st != MINT_OK) {
        mint_atomic_file_abort(f);
        return st;
    }
    return mint_atomic_file_commit(f, err);
}

mint_status mint_imatrix_save(const mint_imatrix *im, const char *path, mint_imatrix_format format,
                              mint_err *err) {
    if (im->legacy)
        return mint_fail(err, MINT_E_ARG,
                         "%s: a legacy imatrix read in holds no raw sums: combine it into one "
                         "made by mint_imatrix_create first",
                         path);
    if (format == MINT_IMATRIX_DAT) return save_dat(im, path, err);
    if (format != MINT_IMATRIX_GGUF)
        return mint_fail(err, MINT_E_ARG, "%s: unknown imatrix format %d", path, (int)format);
    return save_gguf(im, path, err);
}
