// quantize.c - converting a model to a GGUF file type: llama-quantize's per-tensor types
// (runtime/filetools/mix.c), llama.cpp's reference quantizers (quant/*_ref.c), tensors in
// llama-quantize's order, and the result written atomically with every tensor's XXH3-64 in its
// metadata.
//
// A tensor is converted row by row: the source row is dequantized exactly to f32 (F32, F16 and
// BF16 sources are already exact) and quantized with the target type's reference quantizer
// (mint_quantize_rows_ref, given the row's importance when an importance matrix has an entry for
// the tensor: the expert's, for a row of a stack), so an F32 source gives the bytes
// llama-quantize writes. Rows are spread over a thread pool.
#include "base/error.h"
#include "base/hash.h"
#include "formats/gguf.h"
#include "quant/kernels.h"
#include "runtime/filetools/mix.h"
#include "runtime/engine/pool.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY_SOURCE_HASH "mint.quantize.source_xxh3"
#define KEY_TENSOR_HASH "mint.quantize.tensor_xxh3"

typedef struct job {
    const mint_file *src;    // source model
    const mint_tdesc **t;    // [n] source tensors in output order
    uint32_t *type;          // [n] output types
    float **imp;             // [n] importance [ne[2]][ne[0]] of each tensor, or NULL (none)
    uint64_t *hash;          // [n] XXH3-64 of each output tensor, filled while writing
    size_t n;                // tensors
    mint_pool *pool;         // converts rows in parallel
    const mint_kernels *ref; // reference table (exact dequantizers)
    const mint_quantize_params *p;
    uint64_t done, total; // bytes written / to write (progress)
    uint64_t hash_offset; // file offset of the tensor hash array
} job;

typedef struct rows_task {
    const mint_tdesc *t;     // source tensor
    uint32_t type;           // output type
    const float *imp;        // [ne[2]][ne[0]] importance per expert and column, or NULL
    uint8_t *dst;            // output bytes
    const mint_kernels *ref; // reference table
    bool oom;                // a thread could not get its row buffer
} rows_task;

static void convert_rows(void *arg, int ith, int nth) {
    rows_task *r = arg;
    const mint_tdesc *t = r->t;
    const int64_t n_in = t->ne[0], rows = t->ne[1] * t->ne[2] * t->ne[3];
    const size_t src_row = (size_t)mint_row_size(t->type, n_in);
    const size_t dst_row = (size_t)mint_row_size(r->type, n_in);
    long lo, hi;
    mint_split((long)rows, ith, nth, &lo, &hi);
    if (t->type == r->type) { // a copy
        memcpy(r->dst + (size_t)lo * dst_row, (const uint8_t *)t->data + (size_t)lo * src_row,
               (size_t)(hi - lo) * dst_row);
        return;
    }
    float *x = malloc((size_t)n_in * sizeof *x);
    if (!x) {
        r->oom = true;
        return;
    }
    for (long i = lo; i < hi; i++) {
        r->ref->t[t->type].to_float((const uint8_t *)t->data + (size_t)i * src_row, x, n_in);
        // Row i belongs to expert i / ne[1] (llama-quantize's nrows_per_expert).
        const float *imp = r->imp ? r->imp + (size_t)(i / t->ne[1]) * (size_t)n_in : NULL;
        mint_quantize_rows_ref((mint_type)r->type, x, r->dst + (size_t)i * dst_row, 1, n_in, imp);
    }
    free(x);
}

static mint_status fill(void *user, uint64_t index, void *dst, uint64_t nbytes, mint_err *err) {
    job *j = user;
    rows_task r = {j->t[index], j->type[index], j->imp[index], dst, j->ref, false};
    mint_pool_run(j->pool, convert_rows, &r);
    if (r.oom) return mint_fail(err, MINT_E_NOMEM, "out of memory converting %s", r.t->name);
    j->hash[index] = mint_hash64(dst, (size_t)nbytes);
    j->done += nbytes;
    if (j->p->progress) j->p->progress(j->p->user, j->done, j->total);
    return MINT_OK;
}

// After the data: the tensor hashes are known, patch them into the header's array.
static mint_status finish(void *user, mint_atomic_file *f, mint_err *err) {
    job *j = user;
    uint8_t *le = malloc(j->n * 8);
    if (!le) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    for (size_t i = 0; i < j->n; i++)
        for (int b = 0; b < 8; b++) le[i * 8 + (size_t)b] = (uint8_t)(j->hash[i] >> (8 * b));
    mint_status st = mint_atomic_file_pwrite(f, j->hash_offset, le, j->n * 8, err);
    free(le);
    return st;
}

// XXH3-64 over every file the source was read from, in order.
static uint64_t source_hash(const mint_file *f) {
    const void **data = malloc((size_t)f->n_maps * sizeof *data);
    size_t *len = malloc((size_t)f->n_maps * sizeof *len);
    uint64_t h = 0;
    if (data && len) {
        for (int i = 0; i < f->n_maps; i++) {
            data[i] = f->maps[i].data;
            len[i] = f->maps[i].size;
        }
        h = mint_hash64_parts((size_t)f->n_maps, data, len);
    }
    free(data);
    free(len);
    return h;
}

static bool same_file(const char *a, const char *b) {
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

// A tensor type name given for output.weight or token_embd.weight: MINT_E_ARG when it names no
// type, MINT_E_UNSUPPORTED when it names one mint cannot compute with (IQ*, TQ*, Q8_1, Q8_K),
// as mint_mix_override_parse reports the same cases for --tensor-type.
static mint_status parse_type(const char *what, const char *name, int *out, mint_err *err) {
    *out = -1;
    if (!name) return MINT_OK;
    int t = mint_type_from_name(name);
    const mint_type_traits *tt = t >= 0 ? mint_type_get((uint32_t)t) : NULL;
    if (!tt || !tt->computable)
        return mint_fail(err, tt ? MINT_E_UNSUPPORTED : MINT_E_ARG,
                         "%s '%s' is not a type mint can write (F32, F16, BF16, "
                         "Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, MXFP4, Q2_K..Q6_K, IQ4_NL, IQ4_XS, "
                         "IQ3_XXS, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M)",
                         what, name);
    *out = t;
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// The importance matrix, used as llama-quantize uses it: its entries filtered by name, the
// tensor's entry found by the tensor's name, each expert of a stack weighted by its own slice,
// the refusals where llama-quantize refuses, and four metadata keys saying what was used.

#define KEY_IMATRIX_FILE    "quantize.imatrix.file"
#define KEY_IMATRIX_DATASET "quantize.imatrix.dataset"
#define KEY_IMATRIX_ENTRIES "quantize.imatrix.entries_count"
#define KEY_IMATRIX_CHUNKS  "quantize.imatrix.chunks_count"

typedef struct imat_use {
    const mint_imatrix *im; // the matrix, or NULL
    mint_imatrix_info info; // its counts and metadata
    int64_t n_used;         // entries that pass the name filters (0: quantize without)
} imat_use;

static bool contains_any(const char *name, const char *const *subs, int n) {
    for (int i = 0; i < n; i++)
        if (subs[i] && strstr(name, subs[i])) return true;
    return false;
}

// Whether an entry of this name is used: it contains no --exclude-weights substring and, when
// --include-weights were given, one of them (a substring anywhere, as llama-quantize matches).
static bool imat_wanted(const mint_quantize_params *p, const char *name) {
    if (contains_any(name, p->exclude_weights, p->n_exclude_weights)) return false;
    return p->n_include_weights == 0 ||
           contains_any(name, p->include_weights, p->n_include_weights);
}

// Checks the parameters and the matrix and counts the entries used. llama-quantize checks every
// value of every used entry before it starts (a non-finite one stops it), so this does too.
static mint_status imat_select(const mint_quantize_params *p, imat_use *u, mint_err *err) {
    memset(u, 0, sizeof *u);
    if (p->n_include_weights < 0 || p->n_exclude_weights < 0 ||
        (p->n_include_weights > 0 && !p->include_weights) ||
        (p->n_exclude_weights > 0 && !p->exclude_weights))
        return mint_fail(err, MINT_E_ARG, "quantize: bad include/exclude weights arrays");
    if (p->n_include_weights > 0 && p->n_exclude_weights > 0)
        return mint_fail(err, MINT_E_ARG,
                         "--include-weights and --exclude-weights cannot be used together");
    if (!p->imatrix) {
        if (p->n_include_weights > 0 || p->n_exclude_weights > 0)
            return mint_fail(err, MINT_E_ARG,
                             "--include-weights / --exclude-weights need --imatrix FILE");
        return MINT_OK;
    }
    u->im = p->imatrix;
    mint_imatrix_get_info(u->im, &u->info);
    if (!u->info.legacy && !u->info.has_metadata)
        return mint_fail(err, MINT_E_FORMAT,
                         "the importance matrix %s has no imatrix.datasets, .chunk_count and "
                         ".chunk_size metadata (llama-quantize refuses it too)",
                         p->imatrix_file ? p->imatrix_file : "given");
    float *buf = NULL;
    int64_t cap = 0;
    mint_status st = MINT_OK;
    for (int64_t i = 0; i < u->info.n_entries && !st; i++) {
        mint_imatrix_entry e;
        if ((st = mint_imatrix_entry_at(u->im, i, &e))) break;
        if (!imat_wanted(p, e.name)) continue;
        const int64_t per = e.n_vals / e.n_counts;
        if (per > cap) {
            free(buf);
            cap = per;
            if (!(buf = malloc((size_t)cap * sizeof *buf))) {
                st = mint_fail(err, MINT_E_NOMEM, "out of memory reading the importance matrix");
                break;
            }
        }
        for (int64_t m = 0; m < e.n_counts && !st; m++)
            st = mint_imatrix_importance(u->im, e.name, per, e.n_counts, m, buf, err);
        u->n_used++;
    }
    free(buf);
    return st;
}

static bool is_token_embd(const char *name) {
    return !strcmp(name, "token_embd.weight") || !strcmp(name, "per_layer_token_embd.weight");
}

// The importance of tensor t's columns, per expert ([ne[2]][ne[0]], malloc'd into *out; NULL:
// quantized without), for its conversion to `type`; *note says which for the -v reason. An entry
// of another size stops the run, except for the token embeddings (quantized without), and a type
// that needs an importance (mint_mix_requires_imatrix: Q2_K in a Q2_K_S file, IQ3_XXS, the IQ2
// and IQ1 types) without one
// stops it too: llama-quantize's refusals.
static mint_status tensor_importance(const mint_quantize_params *p, const imat_use *u,
                                     mint_ftype ftype, const mint_tdesc *t, uint32_t type,
                                     float **out, const char **note, mint_err *err) {
    *out = NULL;
    *note = NULL;
    mint_imatrix_entry e;
    if (u->n_used > 0 && imat_wanted(p, t->name) &&
        mint_imatrix_find(u->im, t->name, &e) == MINT_OK && t->ne[3] == 1) {
        const int64_t n0 = t->ne[0], n_mat = t->ne[2];
        float *imp = malloc((size_t)(n0 * n_mat) * sizeof *imp);
        if (!imp) return mint_fail(err, MINT_E_NOMEM, "out of memory for %s's importance", t->name);
        mint_status st = MINT_OK;
        for (int64_t m = 0; m < n_mat && !st; m++)
            st = mint_imatrix_importance(u->im, t->name, n0, n_mat, m, imp + m * n0, err);
        if (st == MINT_E_LIMIT && is_token_embd(t->name)) {
            free(imp);
            mint_err_clear(err);
            *note = "its imatrix entry has another size: quantized without";
        } else if (st) {
            free(imp);
            return st;
        } else {
            *out = imp;
            *note = "weighted by the imatrix";
        }
    } else if (u->n_used > 0) {
        *note = "no imatrix entry: quantized without";
    }
    const bool needs = mint_mix_requires_imatrix((int)type, ftype);
    if (needs && !*out && !is_token_embd(t->name) && strcmp(t->name, "output.weight"))
        return mint_fail(err, MINT_E_ARG,
                         "missing importance matrix for tensor %s in a very low-bit quantization "
                         "(%s; llama-quantize refuses it too)",
                         t->name, mint_type_name(type));
    return MINT_OK;
}

// Whether the source's key is one this run writes again (after general.file_type, where
// llama-quantize's setting it moves it).
static bool imat_rewrites(const imat_use *u, const char *key) {
    if (u->n_used == 0) return false;
    return !strcmp(key, KEY_IMATRIX_FILE) || !strcmp(key, KEY_IMATRIX_ENTRIES) ||
           (!strcmp(key, KEY_IMATRIX_DATASET) && u->info.n_datasets > 0) ||
           (!strcmp(key, KEY_IMATRIX_CHUNKS) && u->info.chunk_count > 0);
}

// llama-quantize's record of the matrix: the path and the first dataset (each cut to 127
// bytes), the entries used and the chunks the matrix summed (when it says).
static mint_status imat_metadata(mint_gguf_writer *w, const mint_quantize_params *p,
                                 const imat_use *u) {
    if (u->n_used == 0) return MINT_OK;
    const char *file = p->imatrix_file ? p->imatrix_file : "";
    mint_status st = mint_gguf_add_strn(w, KEY_IMATRIX_FILE, file, strnlen(file, 127));
    if (!st && u->info.n_datasets > 0) {
        const char *ds = mint_imatrix_dataset(u->im, 0);
        st = mint_gguf_add_strn(w, KEY_IMATRIX_DATASET, ds, strnlen(ds, 127));
    }
    if (!st) st = mint_gguf_add_u32(w, KEY_IMATRIX_ENTRIES, (uint32_t)u->n_used);
    if (!st && u->info.chunk_count > 0)
        st = mint_gguf_add_u32(w, KEY_IMATRIX_CHUNKS, u->info.chunk_count);
    return st;
}

mint_status mint_quantize_file(const char *in, const char *out, const mint_quantize_params *p,
                               mint_err *err) {
    mint_err_clear(err);
    if (!in || !out || !p)
        return mint_fail(err, MINT_E_ARG, "quantize: input, output or params is NULL");
    if (p->n_overrides < 0 || (p->n_overrides > 0 && !p->overrides))
        return mint_fail(err, MINT_E_ARG,
                         "quantize: n_overrides is %d (must be 0, or more with an overrides array)",
                         p->n_overrides);
    if (same_file(in, out))
        return mint_fail(err, MINT_E_ARG, "refusing to write over the input %s", in);
    mint_mix_params mp;
    mint_ftype ftype;
    mint_status st = mint_ftype_from_name(p->ftype ? p->ftype : "", &ftype, err);
    if (st) return st;
    imat_use im;
    if ((st = imat_select(p, &im, err))) return st;
    mp = mint_mix_default_params(ftype);
    mp.has_imatrix = im.n_used > 0;
    mp.pure = p->pure;
    mp.leave_output = p->leave_output;
    mint_mix_override *ov = calloc((size_t)p->n_overrides + 1, sizeof *ov);
    if (!ov) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    for (int i = 0; i < p->n_overrides; i++)
        if ((st = mint_mix_override_parse(p->overrides[i], &ov[i], err))) {
            free(ov);
            return st;
        }
    mp.overrides = ov;
    mp.n_overrides = (size_t)p->n_overrides;
    if ((st = parse_type("--output-tensor-type", p->output_type, &mp.output_type, err)) ||
        (st = parse_type("--token-embedding-type", p->token_embd_type, &mp.token_embd_type, err))) {
        free(ov);
        return st;
    }

    mint_file *f = NULL;
    job j = {0};
    mint_gguf_writer *w = NULL;
    mint_mix_choice *ch = NULL;
    size_t *order = NULL;
    if ((st = mint_file_open(in, &f, err))) goto done;
    // A checkpoint folder is read from several files; OUT must be none of them either.
    for (int i = 0; i < f->n_maps; i++)
        if (f->maps[i].path && same_file(f->maps[i].path, out)) {
            st = mint_fail(err, MINT_E_ARG, "refusing to write over the input %s", f->maps[i].path);
            goto done;
        }
    j.n = f->n_tensors;
    ch = calloc(j.n + 1, sizeof *ch);
    order = calloc(j.n + 1, sizeof *order);
    j.t = calloc(j.n + 1, sizeof *j.t);
    j.type = calloc(j.n + 1, sizeof *j.type);
    j.hash = calloc(j.n + 1, sizeof *j.hash);
    j.imp = calloc(j.n + 1, sizeof *j.imp);
    w = mint_gguf_writer_create();
    if (!ch || !order || !j.t || !j.type || !j.hash || !j.imp || !w) {
        st = mint_fail(err, MINT_E_NOMEM, "out of memory");
        goto done;
    }
    if ((st = mint_mix_plan_file(f, &mp, ch, order, err))) goto done;
    j.src = f;
    j.p = p;
    j.ref = mint_kernels_for(MINT_ISA_REF);
    for (size_t k = 0; k < j.n; k++) {
        const mint_tdesc *t = &f->t[order[k]];
        const mint_mix_choice *c = &ch[order[k]];
        const mint_type_traits *src = mint_type_get(t->type);
        if (!src || !src->computable) {
            st = mint_fail(err, MINT_E_UNSUPPORTED,
                           "tensor '%s' has type %s, which mint cannot read", t->name,
                           mint_type_name(t->type));
            goto done;
        }
        if (c->type != t->type && src->is_quant && !p->allow_requantize) {
            st = mint_fail(err, MINT_E_ARG,
                           "tensor '%s' is already %s; requantizing loses quality twice (pass "
                           "--allow-requantize to do it anyway)",
                           t->name, mint_type_name(t->type));
            goto done;
        }
        const mint_type_traits *dst = mint_type_get(c->type);
        if (!dst || !dst->computable) { // a mix rule's pick (IQ3_S in IQ2_S / IQ2_M files)
            st = mint_fail(err, MINT_E_UNSUPPORTED,
                           "tensor '%s': llama-quantize's %s mix makes it %s, which mint cannot "
                           "compute yet",
                           t->name, mint_ftype_name(ftype), mint_type_name(c->type));
            goto done;
        }
        j.t[k] = t;
        j.type[k] = c->type;
        j.total += mint_row_size(c->type, t->ne[0]) * (uint64_t)(t->ne[1] * t->ne[2] * t->ne[3]);
        const char *note = NULL;
        if (c->type != t->type &&
            (st = tensor_importance(p, &im, ftype, t, c->type, &j.imp[k], &note, err)))
            goto done;
        if (p->on_tensor) {
            char reason[MINT_MIX_REASON_MAX + 64];
            snprintf(reason, sizeof reason, "%s%s%s", c->reason, note ? "; " : "",
                     note ? note : "");
            p->on_tensor(p->user, t->name, mint_type_name(t->type), mint_type_name(c->type),
                         reason);
        }
    }
    // Metadata: the source's, with the file type replaced, plus where the bytes came from.
    for (uint64_t i = 0; i < f->n_kv && !st; i++) {
        const char *key = f->kv[i].key;
        if (!strcmp(key, "general.file_type") || !strcmp(key, "general.quantization_version") ||
            !strncmp(key, "mint.quantize.", 14) || imat_rewrites(&im, key))
            continue;
        st = mint_gguf_add_kv_from(w, f, i);
    }
    if (!st) st = mint_gguf_add_u32(w, "general.quantization_version", 2);
    if (!st) st = mint_gguf_add_u32(w, "general.file_type", mint_ftype_file_type(ftype));
    if (!st) st = imat_metadata(w, p, &im);
    uint64_t sh = source_hash(f);
    if (!st) st = mint_gguf_add_scalar(w, KEY_SOURCE_HASH, MINT_VAL_U64, &sh);
    if (!st) st = mint_gguf_add_arr(w, KEY_TENSOR_HASH, MINT_VAL_U64, j.hash, j.n);
    j.hash_offset = mint_gguf_writer_last_value_offset(w);
    for (size_t k = 0; k < j.n && !st; k++) {
        const mint_tdesc *t = j.t[k];
        uint64_t bytes =
            mint_row_size(j.type[k], t->ne[0]) * (uint64_t)(t->ne[1] * t->ne[2] * t->ne[3]);
        st = mint_gguf_add_tensor_fill(w, t->name, j.type[k], t->n_dims, t->ne, bytes, fill, &j, k);
    }
    if (st) {
        st = mint_fail(err, st, "building the output's header failed (%s)", mint_status_name(st));
        goto done;
    }
    int threads = p->n_threads > 0 ? p->n_threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if ((st = mint_pool_create(threads < 1 ? 1 : threads > 64 ? 64 : threads, &j.pool, err)))
        goto done;
    st = mint_gguf_writer_write_file_ex(w, out, finish, &j, err);
done:
    mint_pool_free(j.pool);
    mint_gguf_writer_free(w);
    free(j.t);
    free(j.type);
    free(j.hash);
    for (size_t k = 0; j.imp && k < j.n; k++) free(j.imp[k]);
    free(j.imp);
    free(ch);
    free(order);
    free(ov);
    mint_file_close(f);
    return st;
}

mint_status mint_verify_hashes(const mint_file *f, uint64_t *n_checked, mint_err *err) {
    *n_checked = 0;
    const mint_kv *kv = mint_file_find_kv(f, KEY_TENSOR_HASH);
    if (!kv)
        return mint_fail(err, MINT_E_NOT_FOUND, "the file records no tensor hashes (%s)",
                         KEY_TENSOR_HASH);
    if (kv->type != MINT_VAL_ARRAY || kv->elem_type != MINT_VAL_U64 || kv->n != f->n_tensors)
        return mint_fail(err, MINT_E_FORMAT,
                         "%s holds %" PRIu64 " entries of %s for %" PRIu64 " tensors",
                         KEY_TENSOR_HASH, kv->n, mint_value_type_name(kv->elem_type), f->n_tensors);
    const uint64_t *h = kv->arr;
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        uint64_t got = mint_hash64(f->t[i].data, (size_t)f->t[i].nbytes);
        if (got != h[i])
            return mint_fail(err, MINT_E_FORMAT,
                             "tensor '%s': XXH3 %016" PRIx64 " but the file records %016" PRIx64,
                             f->t[i].name, got, h[i]);
        (*n_checked)++;
    }
    return MINT_OK;
}
