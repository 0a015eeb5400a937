// attention.c - the KV store, and causal grouped-query attention over a paged cache in three
// algorithms (naive, row-wise, flash).
//
// Arithmetic. With an f32 cache the scores are q.k in f32, scaled, and the probabilities are a
// softmax with the exponentials summed in double (ggml's soft_max); "probabilities times V" is
// summed block by block: each block's part is one dot product of length `block` per output
// element, and the parts are added in block order. With an f16 cache, keys and values are
// rounded to f16 when stored, q to f16 for q.k, and the probabilities to f16 before they weight
// V (llama.cpp's non-flash f16 path). Naive and row-wise normalise the probabilities before V;
// flash keeps a running maximum m and sum l per query (online softmax: each block rescales the
// output so far by e^(m_old - m_new)) and divides by l at the end, so it agrees with the other
// two to rounding (about 1e-7 relative with an f32 cache).
//
// Why a query gets the same bits whether it comes alone, in a batch, or beside other sequences:
// every score is one dot of length head_dim (a kernel's gemm equals its vec_dot per element);
// the softmax of a row depends only on that row; each block's part of P.V is one dot of length
// `block` with the probabilities past the query's position set to zero, whatever the cache holds
// there (finite values: blocks are zeroed when first allocated); the parts are added in block
// order; and a row only ever takes part in the blocks up to its own position. So neither the
// batch, nor the thread split, nor where the blocks lie in memory changes a result.
#include "ops/attention.h"

#include "ops/ops.h"
#include "quant/fp16.h"

#include <math.h>
#include <string.h>

static const char *const algo_names[MINT_ATTN_ALGO_COUNT] = {"naive", "rowwise", "flash"};

const char *mint_attn_algo_name(mint_attn_algo a) {
    return a >= 0 && a < MINT_ATTN_ALGO_COUNT ? algo_names[a] : "?";
}

// (k, v) of position pos: k a row of the block's keys, v a column of its transposed values
void mint_kv_store(const mint_kv_view *kv, int32_t l, int32_t pos, const float *k, const float *v) {
    const int32_t b = pos / kv->block, slot = pos % kv->block;
    uint8_t *kd = mint_kv_block_k(kv, l, b) + (size_t)slot * (size_t)kv->kv_dim * kv->elem;
    uint8_t *vt = mint_kv_block_vt(kv, l, b);
    const size_t vrow = (size_t)kv->block; // elements between value rows
    if (kv->type == MINT_TYPE_F32) {
        memcpy(kd, k, (size_t)kv->kv_dim * sizeof(float));
        for (int64_t i = 0; i < kv->kv_dim; i++) ((float *)vt)[(size_t)i * vrow + slot] = v[i];
    } else {
        for (int64_t i = 0; i < kv->kv_dim; i++) ((uint16_t *)kd)[i] = mint_f32_to_f16(k[i]);
        for (int64_t i = 0; i < kv->kv_dim; i++)
            ((uint16_t *)vt)[(size_t)i * vrow + slot] = mint_f32_to_f16(v[i]);
    }
}

// ---------------------------------------------------------------------------------------------
// Shared pieces

static size_t round64(size_t x) {
    return (x + 63) / 64 * 64;
}

// Rows per flash item: with the heads of a group, blocks of about 64 rows reuse each key and
// value row 64 times from cache.
static int32_t flash_queries(int group) {
    int32_t q = 1;
    while (q * 2 * group <= 64) q *= 2;
    return q;
}

// Head h of query row `row` of the batch.
static const float *query(const mint_attn_batch *b, int32_t row, int h) {
    return (const float *)((const char *)b->q + (size_t)row * b->q_stride) +
           (size_t)h * b->sh->head_dim;
}
static float *output(const mint_attn_batch *b, int32_t row, int h) {
    return (float *)((char *)b->out + (size_t)row * b->out_stride) + (size_t)h * b->sh->head_dim;
}

// dst = q rounded to the cache type (f16) or copied (f32).
static void put_query(const mint_type_kernels *tk, const mint_kv_view *kv, const float *q,
                      uint8_t *dst, int hd) {
    if (kv->type == MINT_TYPE_F16)
        tk->from_float(q, dst, hd);
    else
        memcpy(dst, q, (size_t)hd * sizeof(float));
}

// y[c * y_stride + j] = q_c . k_j for the keys of logical block blk, KV head kvh, rows c < nc.
static void block_scores(const mint_type_kernels *tk, const mint_kv_view *kv, int32_t l,
                         int32_t blk, int kvh, int hd, const uint8_t *Q, size_t q_row, int nc,
                         float *y, size_t y_stride) {
    const uint8_t *K = mint_kv_block_k(kv, l, blk) + (size_t)kvh * hd * kv->elem;
    mint_gemm_tile(tk, hd, K, (size_t)kv->kv_dim * kv->elem, kv->block, Q, q_row, nc, y, y_stride);
}

// y[c * hd + i] = sum_j P[c][j] * v_j[i] over the positions of logical block blk, KV head kvh.
static void block_values(const mint_type_kernels *tk, const mint_kv_view *kv, int32_t l,
                         int32_t blk, int kvh, int hd, const uint8_t *P, size_t p_row, int nc,
                         float *y) {
    const size_t vrow = (size_t)kv->block * kv->elem;
    const uint8_t *Vt = mint_kv_block_vt(kv, l, blk) + (size_t)kvh * hd * vrow;
    mint_gemm_tile(tk, kv->block, Vt, vrow, hd, P, p_row, nc, y, (size_t)hd);
}

// s[0..n_keys) = softmax(s * scale); s[n_keys..len) = 0; then P = s in the cache type.
static void probabilities(const mint_type_kernels *tk, const mint_kv_view *kv, float *s,
                          int32_t n_keys, int32_t len, float scale, uint8_t *P) {
    for (int32_t j = 0; j < n_keys; j++) s[j] *= scale;
    mint_softmax(s, n_keys);
    for (int32_t j = n_keys; j < len; j++) s[j] = 0.0f;
    if (kv->type == MINT_TYPE_F16) tk->from_float(s, P, len);
}

static void add_rows(float *o, const float *part, size_t n) {
    for (size_t i = 0; i < n; i++) o[i] += part[i];
}

// ---------------------------------------------------------------------------------------------
// Naive: for one head and every query of a run, the whole score matrix S (queries x keys), the
// softmax of each row, then S times V block by block.

static void naive_item(const mint_attn_batch *b, const mint_attn_run *run, int h,
                       uint8_t *scratch) {
    const mint_attn_shape *sh = b->sh;
    const mint_kv_view *kv = &run->kv;
    const mint_type_kernels *tk = &b->k->t[kv->type];
    const int hd = sh->head_dim, kvh = h / (sh->n_head / sh->n_head_kv);
    const int32_t B = kv->block, nq = run->n;
    const int32_t n_blk = (run->pos0 + nq - 1) / B + 1, L = n_blk * B;
    const size_t q_row = (size_t)hd * kv->elem, p_row = (size_t)L * kv->elem;
    float *S = (float *)scratch; // [nq][L]
    uint8_t *P = kv->type == MINT_TYPE_F16 ? scratch + round64((size_t)nq * L * 4) : (uint8_t *)S;
    uint8_t *Q = scratch + round64((size_t)nq * L * 4) * 2;
    float *O = (float *)(Q + round64((size_t)nq * hd * 4));
    float *part = O + (size_t)nq * hd;

    for (int32_t i = 0; i < nq; i++)
        put_query(tk, kv, query(b, run->row0 + i, h), Q + (size_t)i * q_row, hd);
    for (int32_t blk = 0; blk < n_blk; blk++) { // rows from r0 on reach this block
        const int32_t r0 = blk * B > run->pos0 ? blk * B - run->pos0 : 0;
        block_scores(tk, kv, b->layer, blk, kvh, hd, Q + (size_t)r0 * q_row, q_row, nq - r0,
                     S + (size_t)r0 * L + (size_t)blk * B, (size_t)L);
    }
    for (int32_t i = 0; i < nq; i++) {
        const int32_t n_keys = run->pos0 + i + 1, len = ((n_keys - 1) / B + 1) * B;
        probabilities(tk, kv, S + (size_t)i * L, n_keys, len, sh->scale, P + (size_t)i * p_row);
    }
    memset(O, 0, (size_t)nq * hd * sizeof(float));
    for (int32_t blk = 0; blk < n_blk; blk++) {
        const int32_t r0 = blk * B > run->pos0 ? blk * B - run->pos0 : 0;
        block_values(tk, kv, b->layer, blk, kvh, hd, P + (size_t)r0 * p_row + (size_t)blk * B * kv->elem,
                     p_row, nq - r0, part + (size_t)r0 * hd);
        add_rows(O + (size_t)r0 * hd, part + (size_t)r0 * hd, (size_t)(nq - r0) * hd);
    }
    for (int32_t i = 0; i < nq; i++)
        memcpy(output(b, run->row0 + i, h), O + (size_t)i * hd, (size_t)hd * sizeof(float));
}

// ---------------------------------------------------------------------------------------------
// Row-wise: one query of one head: its row of scores, softmax, times V block by block.

static void rowwise_item(const mint_attn_batch *b, const mint_attn_run *run, int32_t i, int h,
                         uint8_t *scratch) {
    const mint_attn_shape *sh = b->sh;
    const mint_kv_view *kv = &run->kv;
    const mint_type_kernels *tk = &b->k->t[kv->type];
    const int hd = sh->head_dim, kvh = h / (sh->n_head / sh->n_head_kv);
    const int32_t B = kv->block, n_keys = run->pos0 + i + 1, n_blk = (n_keys - 1) / B + 1;
    const int32_t L = n_blk * B;
    float *s = (float *)scratch; // [L]
    uint8_t *P = kv->type == MINT_TYPE_F16 ? scratch + round64((size_t)L * 4) : (uint8_t *)s;
    uint8_t *Q = scratch + round64((size_t)L * 4) * 2;
    float *o = (float *)(Q + round64((size_t)hd * 4)), *part = o + hd;

    put_query(tk, kv, query(b, run->row0 + i, h), Q, hd);
    for (int32_t blk = 0; blk < n_blk; blk++)
        block_scores(tk, kv, b->layer, blk, kvh, hd, Q, 0, 1, s + (size_t)blk * B, 0);
    probabilities(tk, kv, s, n_keys, L, sh->scale, P);
    memset(o, 0, (size_t)hd * sizeof(float));
    for (int32_t blk = 0; blk < n_blk; blk++) {
        block_values(tk, kv, b->layer, blk, kvh, hd, P + (size_t)blk * B * kv->elem, 0, 1, part);
        add_rows(o, part, (size_t)hd);
    }
    memcpy(output(b, run->row0 + i, h), o, (size_t)hd * sizeof(float));
}

// ---------------------------------------------------------------------------------------------
// Flash: a block of queries with every head of one KV head; keys and values one block at a
// time, with a running maximum and sum per row (no score row is kept).

static void flash_item(const mint_attn_batch *b, const mint_attn_run *run, int32_t t0,
                       int32_t nq, int kvh, uint8_t *scratch) {
    const mint_attn_shape *sh = b->sh;
    const mint_kv_view *kv = &run->kv;
    const mint_type_kernels *tk = &b->k->t[kv->type];
    const int hd = sh->head_dim, group = sh->n_head / sh->n_head_kv;
    const int32_t B = kv->block, rows = nq * group; // row r: query t0 + r / group
    const int32_t p_first = run->pos0 + t0, n_blk = (p_first + nq - 1) / B + 1;
    const size_t q_row = (size_t)hd * kv->elem, p_row = (size_t)B * kv->elem;
    // Work space: Q [rows][hd] | S [rows][B] f32 | P [rows][B] | O, part [rows][hd] f32 |
    // m [rows] f32 | l [rows] double.
    uint8_t *Q = scratch;
    float *S = (float *)(Q + round64((size_t)rows * hd * 4));
    uint8_t *P = kv->type == MINT_TYPE_F16 ? (uint8_t *)(S + (size_t)rows * B) : (uint8_t *)S;
    float *O = (float *)((uint8_t *)S + round64((size_t)rows * B * 4) * 2);
    float *part = O + (size_t)rows * hd, *m = part + (size_t)rows * hd;
    double *lsum = (double *)(scratch + round64((size_t)((uint8_t *)(m + rows) - scratch)));

    for (int32_t r = 0; r < rows; r++) {
        put_query(tk, kv, query(b, run->row0 + t0 + r / group, kvh * group + r % group),
                  Q + (size_t)r * q_row, hd);
        m[r] = -INFINITY;
        lsum[r] = 0.0;
    }
    memset(O, 0, (size_t)rows * hd * sizeof(float));
    for (int32_t blk = 0; blk < n_blk; blk++) {
        const int32_t q0 = blk * B > p_first ? blk * B - p_first : 0; // first query reaching blk
        const int32_t r0 = q0 * group;
        block_scores(tk, kv, b->layer, blk, kvh, hd, Q + (size_t)r0 * q_row, q_row, rows - r0,
                     S + (size_t)r0 * B, (size_t)B);
        for (int32_t r = r0; r < rows; r++) {
            const int32_t pos = p_first + r / group;
            const int32_t n_valid = pos + 1 - blk * B < B ? pos + 1 - blk * B : B;
            float *s = S + (size_t)r * B;
            float mx = m[r];
            for (int32_t j = 0; j < n_valid; j++) {
                s[j] *= sh->scale;
                mx = s[j] > mx ? s[j] : mx;
            }
            const float alpha = expf(m[r] - mx); // 0 on the first block (m = -inf)
            double sum = 0.0;
            for (int32_t j = 0; j < n_valid; j++) {
                s[j] = expf(s[j] - mx);
                sum += (double)s[j];
            }
            for (int32_t j = n_valid; j < B; j++) s[j] = 0.0f;
            if (kv->type == MINT_TYPE_F16) tk->from_float(s, P + (size_t)r * p_row, B);
            lsum[r] = lsum[r] * (double)alpha + sum;
            m[r] = mx;
            float *o = O + (size_t)r * hd;
            if (alpha != 1.0f)
                for (int d = 0; d < hd; d++) o[d] *= alpha;
        }
        block_values(tk, kv, b->layer, blk, kvh, hd, P + (size_t)r0 * p_row, p_row, rows - r0,
                     part + (size_t)r0 * hd);
        add_rows(O + (size_t)r0 * hd, part + (size_t)r0 * hd, (size_t)(rows - r0) * hd);
    }
    for (int32_t r = 0; r < rows; r++) {
        float *dst = output(b, run->row0 + t0 + r / group, kvh * group + r % group);
        const float inv = (float)(1.0 / lsum[r]);
        for (int d = 0; d < hd; d++) dst[d] = O[(size_t)r * hd + d] * inv;
    }
}

// ---------------------------------------------------------------------------------------------
// Work items

// Items of one run.
static int32_t run_items(const mint_attn_batch *b, const mint_attn_run *run) {
    const mint_attn_shape *sh = b->sh;
    switch (b->algo) {
    case MINT_ATTN_ALGO_NAIVE: return sh->n_head;
    case MINT_ATTN_ALGO_ROWWISE: return run->n * sh->n_head;
    default: {
        const int32_t qb = flash_queries(sh->n_head / sh->n_head_kv);
        return (run->n + qb - 1) / qb * sh->n_head_kv;
    }
    }
}

int32_t mint_attention_plan(mint_attn_batch *b) {
    int32_t total = 0;
    for (int32_t r = 0; r < b->n_runs; r++) {
        b->runs[r].item0 = total;
        total += run_items(b, &b->runs[r]);
    }
    return total;
}

void mint_attention_item(const mint_attn_batch *b, int32_t i, uint8_t *scratch) {
    int32_t r = b->n_runs - 1; // runs are few: a linear search from the back
    while (r > 0 && b->runs[r].item0 > i) r--;
    const mint_attn_run *run = &b->runs[r];
    const int32_t k = i - run->item0;
    const mint_attn_shape *sh = b->sh;
    switch (b->algo) {
    case MINT_ATTN_ALGO_NAIVE: naive_item(b, run, k, scratch); break;
    case MINT_ATTN_ALGO_ROWWISE: rowwise_item(b, run, k / sh->n_head, k % sh->n_head, scratch); break;
    default: {
        // Latest query blocks first: they have the most keys, so a dynamic split balances.
        const int32_t qb = flash_queries(sh->n_head / sh->n_head_kv);
        const int32_t n_qb = (run->n + qb - 1) / qb, blk = n_qb - 1 - k / sh->n_head_kv;
        const int32_t t0 = blk * qb, nq = run->n - t0 < qb ? run->n - t0 : qb;
        flash_item(b, run, t0, nq, k % sh->n_head_kv, scratch);
    }
    }
}

size_t mint_attention_scratch_bytes(mint_attn_algo algo, const mint_attn_shape *sh, int32_t n_rows,
                                    int32_t n_ctx, int32_t block) {
    const size_t L = ((size_t)n_ctx + (size_t)block - 1) / (size_t)block * (size_t)block;
    const size_t hd = (size_t)sh->head_dim;
    switch (algo) {
    case MINT_ATTN_ALGO_NAIVE:
        return round64((size_t)n_rows * L * 4) * 2 + round64((size_t)n_rows * hd * 4) +
               (size_t)n_rows * hd * 4 * 2 + 64;
    case MINT_ATTN_ALGO_ROWWISE: return round64(L * 4) * 2 + round64(hd * 4) + hd * 4 * 2 + 64;
    default: {
        const size_t rows = (size_t)flash_queries(sh->n_head / sh->n_head_kv) *
                            (size_t)(sh->n_head / sh->n_head_kv);
        return round64(rows * hd * 4) + round64(rows * (size_t)block * 4) * 2 +
               round64(rows * hd * 4 * 2 + rows * 4) + rows * 8 + 64;
    }
    }
}
