// attention.c - the KV store, and causal grouped-query attention over a paged cache in three
// algorithms (naive, row-wise, flash).
//
// Arithmetic. Every step is a kernel of the table's float vector kernels (quant/kernels.h:
// mint_vec_kernels), which give the same bits on every instruction-set level:
//   - a score is q.k as one chain of fused multiply-adds over the head's dimensions, times the
//     scale (mint_qk_fn); with an f16 cache q is rounded to f16 first (keys are f16 already);
//   - naive and row-wise take the softmax of a query's whole row of scores (mint_softmax: the
//     maximum, e^(s - max) with mint's exp, the sum in double, times 1 / sum), round the
//     probabilities to f16 with an f16 cache (llama.cpp's non-flash f16 path), and weight V block
//     by block: each block's part is, per output element, one chain of fused multiply-adds over
//     the block's positions (mint_pv_fn), and the parts are added to the output in block order;
//   - flash walks the keys in steps of a few blocks with a running maximum m and sum l per row
//     (online softmax): per step, m' = max(m, the step's scores), alpha = e^(m - m'), the
//     weights e^(s - m') (rounded to f16 with an f16 cache), l = l alpha + their sum (double),
//     and the output becomes o alpha + the first block's part (one fused multiply-add), then
//     + each further block's part; at the end o / l. It agrees with the other two to rounding
//     (a few 1e-7 of max |v| with an f32 cache, tests/test_ops.c).
// Naive and row-wise run the same steps on every row, so they give the same bits, and a batch
// may use either (the context's "auto" does, runtime/engine/context.c).
//
// A quantized cache (Q8_0, Q4_0 rows, ops/attention_quant.c) follows llama.cpp's CPU flash
// attention: each query head is converted to Q8_0 once (the kernel table's from_float, the same
// bytes on every level), a score is the type's vec_dot of the key row's head segment with it
// (integer sums inside each 32-element block) times the scale, and a block's values are
// dequantized (exactly: d times a small integer) as the pv kernel reads them (pv_q8_0, pv_q4_0)
// and weighed in the same fixed order as an f32 cache, with the bits of dequantize-then-pv_f32. The
// probabilities and flash's weights stay f32 (llama.cpp rounds them to f16 only with an f16 V, the
// VKQ16 path). A score is then still one call for one (query, key) pair whatever the batch, and a
// block's part of P.V the same chain, so everything below holds for it too; only the vec_dot's
// float sum over blocks may differ between kernel levels (quant/kernels.h), not between batches or
// threads.
//
// Why a query gets the same bits whether it comes alone, in a batch, or beside other sequences:
// every score is its own chain of length head_dim, the same whatever other rows share the tile;
// the softmax of a row depends only on that row; each block's part of P.V is a chain over the
// whole block with the probabilities past the query's position set to zero, whatever the cache
// holds there (finite values: blocks are zeroed when first allocated); the parts are added in
// block order; flash's steps start at fixed positions (multiples of its step); and a row only
// ever takes part in the blocks up to its own position. So neither the batch, nor the thread
// split, nor where the blocks lie in memory changes a result.
#include "ops/attention.h"

#include "ops/attention_quant.h"
#include "ops/ops.h"
#include "quant/fp16.h"

#include <math.h>
#include <string.h>

static const char *const algo_names[MINT_ATTN_ALGO_COUNT] = {"naive", "rowwise", "flash"};

const char *mint_attn_algo_name(mint_attn_algo a) {
    return a >= 0 && a < MINT_ATTN_ALGO_COUNT ? algo_names[a] : "?";
}

// (k, v) of position pos: k a column of the block's transposed keys, v a row of its values; in a
// quantized cache both a quantized row
void mint_kv_store(const mint_kv_view *kv, int32_t l, int32_t pos, const float *k, const float *v) {
    const int32_t b = pos / kv->block, slot = pos % kv->block;
    uint8_t *kt = mint_kv_block_kt(kv, l, b);
    uint8_t *vd = mint_kv_value_row(kv, l, pos);
    const size_t krow = (size_t)kv->block; // elements between key rows
    if (mint_kv_quantized(kv)) {
        mint_kvq_store_row(kv->type, k, mint_kv_key_row(kv, l, pos), kv->kv_dim);
        mint_kvq_store_row(kv->type, v, vd, kv->kv_dim);
    } else if (kv->type == MINT_TYPE_F32) {
        for (int64_t i = 0; i < kv->kv_dim; i++) ((float *)kt)[(size_t)i * krow + slot] = k[i];
        memcpy(vd, v, (size_t)kv->kv_dim * sizeof(float));
    } else {
        for (int64_t i = 0; i < kv->kv_dim; i++)
            ((uint16_t *)kt)[(size_t)i * krow + slot] = mint_f32_to_f16(k[i]);
        for (int64_t i = 0; i < kv->kv_dim; i++) ((uint16_t *)vd)[i] = mint_f32_to_f16(v[i]);
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

// Cache blocks per flash step: at least 256 positions, so the per-step work (maxima, the
// rescale, the kernel calls) is spread over enough keys (one layer of tg at depth 2048: steps of
// 32, 64, 128, 256 positions took 0.24, 0.21, 0.20, 0.20 ms). Depends only on the block size.
static int32_t flash_step_blocks(int32_t block) {
    return block >= 256 ? 1 : (256 + block - 1) / block;
}

// Head h of query row `row` of the batch.
static const float *query(const mint_attn_batch *b, int32_t row, int h) {
    return (const float *)((const char *)b->q + (size_t)row * b->q_stride) +
           (size_t)h * b->sh->head_dim;
}
static float *output(const mint_attn_batch *b, int32_t row, int h) {
    return (float *)((char *)b->out + (size_t)row * b->out_stride) + (size_t)h * b->sh->head_dim;
}

// dst = q, rounded to f16 (and kept as f32) for an f16 cache; converted to Q8_0 (bytes in dst's
// hd floats' room) for a quantized one.
static void put_query(const mint_kernels *K, const mint_kv_view *kv, const float *q, float *dst,
                      int hd) {
    if (mint_kv_quantized(kv)) {
        mint_kvq_put_query(K, q, dst, hd);
        return;
    }
    memcpy(dst, q, (size_t)hd * sizeof(float));
    if (kv->type == MINT_TYPE_F16) K->vec.round_f16(dst, hd);
}

// s[c * s_stride + j] = scale * q_c . k_j for the keys of logical block blk, KV head kvh, c < nc.
static void block_scores(const mint_kernels *K, const mint_kv_view *kv, int32_t l, int32_t blk,
                         int kvh, int hd, float scale, const float *Q, int nc, float *s,
                         size_t s_stride) {
    const mint_vec_kernels *vk = &K->vec;
    if (mint_kv_quantized(kv)) {
        mint_kvq_block_scores(K, kv, l, blk, kvh, hd, scale, (const uint8_t *)Q,
                              (size_t)hd * sizeof(float), nc, s, s_stride);
        return;
    }
    const uint8_t *Kt = mint_kv_block_kt(kv, l, blk) + (size_t)kvh * hd * kv->block * kv->elem;
    const mint_qk_fn qk = kv->type == MINT_TYPE_F16 ? vk->qk_f16 : vk->qk_f32;
    qk(hd, Q, (size_t)hd, nc, Kt, (size_t)kv->block, kv->block, scale, s, s_stride);
}

// o[c * hd + i] = o[c * hd + i] * a[c] + sum_j P[c][j] * v_j[i] over the positions of logical
// block blk, KV head kvh (a == NULL: o + the sum). A quantized cache's values are weighed as
// their dequantized f32 rows, bit for bit.
static void block_values(const mint_kernels *K, const mint_kv_view *kv, int32_t l, int32_t blk,
                         int kvh, int hd, const float *P, size_t p_stride, int nc, const float *a,
                         float *o) {
    const mint_vec_kernels *vk = &K->vec;
    if (mint_kv_quantized(kv)) {
        mint_kvq_block_values(K, kv, l, blk, kvh, hd, P, p_stride, nc, a, o);
        return;
    }
    const uint8_t *V = mint_kv_block_v(kv, l, blk) + (size_t)kvh * hd * kv->elem;
    const mint_pv_fn pv = kv->type == MINT_TYPE_F16 ? vk->pv_f16 : vk->pv_f32;
    pv(hd, P, p_stride, nc, V, (size_t)kv->kv_dim, kv->block, a, o, (size_t)hd);
}

// s[0..n) = c tanh(s / c) (ops/elementwise.c: mint_softcap), unchanged when c = 0.
static void soft_cap(float *s, int32_t n, float c) {
    if (c != 0.0f) mint_softcap(s, 0, c, n, 0, 1);
}

// s[lo..n_keys) = softmax(soft-capped s) (with the head's sink logit in the sum when sink is not
// NULL), rounded to f16 for an f16 cache; the rest of
// s[0..len) = 0. Keys before lo are outside the window: llama.cpp masks them to -inf, whose
// exponentials add exact zeros to the sum, so leaving them out gives the same bits.
static void probabilities(const mint_vec_kernels *vk, const mint_kv_view *kv, float softcap,
                          const float *sink, float *s, int32_t lo, int32_t n_keys, int32_t len) {
    soft_cap(s + lo, n_keys - lo, softcap);
    if (sink)
        mint_softmax_sink(vk, s + lo, n_keys - lo, *sink);
    else
        mint_softmax(vk, s + lo, n_keys - lo);
    if (kv->type == MINT_TYPE_F16) vk->round_f16(s + lo, n_keys - lo);
    memset(s, 0, (size_t)lo * sizeof(float));
    memset(s + n_keys, 0, (size_t)(len - n_keys) * sizeof(float));
}

// First row of a run's queries (row i at position pos0 + i) that reaches logical block blk.
static int32_t first_row(int32_t blk, int32_t block, int32_t pos0) {
    return blk * block > pos0 ? blk * block - pos0 : 0;
}

// ---------------------------------------------------------------------------------------------
// Naive: for one head and every query of a run, the whole score matrix S (queries x keys), the
// softmax of each row, then S times V block by block.

static void naive_item(const mint_attn_batch *b, const mint_attn_run *run, int h,
                       uint8_t *scratch) {
    const mint_attn_shape *sh = b->sh;
    const mint_kv_view *kv = &run->kv;
    const mint_vec_kernels *vk = &b->k->vec;
    const int hd = sh->head_dim, kvh = h / (sh->n_head / sh->n_head_kv);
    const int32_t B = kv->block, nq = run->n;
    const int32_t n_blk = (run->pos0 + nq - 1) / B + 1, L = n_blk * B;
    float *Q = (float *)scratch;                                      // [nq][hd]
    float *S = (float *)(scratch + round64((size_t)nq * hd * 4));     // [nq][L]
    float *O = (float *)((uint8_t *)S + round64((size_t)nq * L * 4)); // [nq][hd]

    for (int32_t i = 0; i < nq; i++)
        put_query(b->k, kv, query(b, run->row0 + i, h), Q + (size_t)i * hd, hd);
    for (int32_t blk = 0; blk < n_blk; blk++) {
        const int32_t r0 = first_row(blk, B, run->pos0);
        block_scores(b->k, kv, b->layer, blk, kvh, hd, sh->scale, Q + (size_t)r0 * hd, nq - r0,
                     S + (size_t)r0 * L + (size_t)blk * B, (size_t)L);
    }
    for (int32_t i = 0; i < nq; i++) {
        const int32_t n_keys = run->pos0 + i + 1, len = ((n_keys - 1) / B + 1) * B;
        probabilities(vk, kv, sh->softcap, b->sinks ? b->sinks + h : NULL, S + (size_t)i * L,
                      mint_attn_first_key(b->window, n_keys - 1), n_keys, len);
    }
    memset(O, 0, (size_t)nq * hd * sizeof(float));
    for (int32_t blk = 0; blk < n_blk; blk++) {
        const int32_t r0 = first_row(blk, B, run->pos0);
        block_values(b->k, kv, b->layer, blk, kvh, hd, S + (size_t)r0 * L + (size_t)blk * B,
                     (size_t)L, nq - r0, NULL, O + (size_t)r0 * hd);
    }
    for (int32_t i = 0; i < nq; i++)
        memcpy(output(b, run->row0 + i, h), O + (size_t)i * hd, (size_t)hd * sizeof(float));
}

// ---------------------------------------------------------------------------------------------
// Row-wise: one query and the heads of one KV head: a row of scores per head, its softmax, times
// V block by block.

static void rowwise_item(const mint_attn_batch *b, const mint_attn_run *run, int32_t i, int kvh,
                         uint8_t *scratch) {
    const mint_attn_shape *sh = b->sh;
    const mint_kv_view *kv = &run->kv;
    const mint_vec_kernels *vk = &b->k->vec;
    const int hd = sh->head_dim, group = sh->n_head / sh->n_head_kv;
    const int32_t B = kv->block, n_keys = run->pos0 + i + 1, n_blk = (n_keys - 1) / B + 1;
    const int32_t L = n_blk * B;
    float *Q = (float *)scratch;                                         // [group][hd]
    float *S = (float *)(scratch + round64((size_t)group * hd * 4));     // [group][L]
    float *O = (float *)((uint8_t *)S + round64((size_t)group * L * 4)); // [group][hd]

    for (int g = 0; g < group; g++)
        put_query(b->k, kv, query(b, run->row0 + i, kvh * group + g), Q + (size_t)g * hd, hd);
    for (int32_t blk = 0; blk < n_blk; blk++)
        block_scores(b->k, kv, b->layer, blk, kvh, hd, sh->scale, Q, group, S + (size_t)blk * B,
                     (size_t)L);
    for (int g = 0; g < group; g++)
        probabilities(vk, kv, sh->softcap, b->sinks ? b->sinks + kvh * group + g : NULL,
                      S + (size_t)g * L, mint_attn_first_key(b->window, n_keys - 1), n_keys, L);
    memset(O, 0, (size_t)group * hd * sizeof(float));
    for (int32_t blk = 0; blk < n_blk; blk++)
        block_values(b->k, kv, b->layer, blk, kvh, hd, S + (size_t)blk * B, (size_t)L, group, NULL,
                     O);
    for (int g = 0; g < group; g++)
        memcpy(output(b, run->row0 + i, kvh * group + g), O + (size_t)g * hd,
               (size_t)hd * sizeof(float));
}

// ---------------------------------------------------------------------------------------------
// Flash: a block of queries with every head of one KV head; keys and values a step of
// flash_step_blocks blocks at a time, with a running maximum and sum per row (no score row is
// kept).

typedef struct flash_space {
    float *Q;     // [rows][hd] queries
    float *S;     // [rows][step] scores, then weights
    float *O;     // [rows][hd] running outputs
    float *m;     // [rows] running maxima
    float *alpha; // [rows] e^(m_old - m_new) of the step
    float *diff;  // [rows] m_old - m_new
    double *l;    // [rows] running sums
} flash_space;

static flash_space flash_layout(uint8_t *scratch, size_t rows, size_t hd, size_t step) {
    flash_space f;
    uint8_t *p = scratch;
    f.Q = (float *)p, p += round64(rows * hd * 4);
    f.S = (float *)p, p += round64(rows * step * 4);
    f.O = (float *)p, p += round64(rows * hd * 4);
    f.m = (float *)p, p += round64(rows * 4);
    f.alpha = (float *)p, p += round64(rows * 4);
    f.diff = (float *)p, p += round64(rows * 4);
    f.l = (double *)p;
    return f;
}

static size_t flash_bytes(size_t rows, size_t hd, size_t step) {
    return round64(rows * hd * 4) * 2 + round64(rows * step * 4) + round64(rows * 4) * 3 +
           round64(rows * 8);
}

// The keys of a step (positions k0 .. k0 + step - 1) that a query at position p sees, as offsets
// into the step: [*lo, *n_valid), empty (lo == n_valid) when none.
static void step_keys(int32_t window, int32_t p, int32_t k0, int32_t step, int32_t *lo,
                      int32_t *n_valid) {
    const int32_t reach = p + 1 - k0;
    *n_valid = reach < step ? reach : step;
    const int32_t first = mint_attn_first_key(window, p) - k0;
    *lo = first < 0 ? 0 : first > *n_valid ? *n_valid : first;
}

static void flash_item(const mint_attn_batch *b, const mint_attn_run *run, int32_t t0, int32_t nq,
                       int kvh, uint8_t *scratch) {
    const mint_attn_shape *sh = b->sh;
    const mint_kv_view *kv = &run->kv;
    const mint_vec_kernels *vk = &b->k->vec;
    const int hd = sh->head_dim, group = sh->n_head / sh->n_head_kv;
    const int32_t B = kv->block, rows = nq * group; // row r: query t0 + r / group
    const int32_t p_first = run->pos0 + t0, n_blk = (p_first + nq - 1) / B + 1;
    const int32_t sb = flash_step_blocks(B), step = sb * B;
    const flash_space f = flash_layout(scratch, (size_t)rows, (size_t)hd, (size_t)step);

    for (int32_t r = 0; r < rows; r++) {
        put_query(b->k, kv, query(b, run->row0 + t0 + r / group, kvh * group + r % group),
                  f.Q + (size_t)r * hd, hd);
        f.m[r] = -INFINITY;
        f.l[r] = 0.0;
    }
    memset(f.O, 0, (size_t)rows * hd * sizeof(float));
    for (int32_t b0 = 0; b0 < n_blk; b0 += sb) {
        const int32_t b1 = b0 + sb < n_blk ? b0 + sb : n_blk;
        const int32_t r0 = first_row(b0, B, p_first) * group; // rows reaching the step
        for (int32_t blk = b0; blk < b1; blk++) {
            const int32_t rb = first_row(blk, B, p_first) * group;
            block_scores(b->k, kv, b->layer, blk, kvh, hd, sh->scale, f.Q + (size_t)rb * hd,
                         rows - rb, f.S + (size_t)rb * step + (size_t)(blk - b0) * B, (size_t)step);
        }
        for (int32_t r = r0; r < rows; r++) {
            int32_t lo, n_valid; // keys of the step it sees: [lo, n_valid)
            step_keys(b->window, p_first + r / group, b0 * B, step, &lo, &n_valid);
            float *s = f.S + (size_t)r * step;
            soft_cap(s + lo, n_valid - lo, sh->softcap);
            // A step wholly before the window changes nothing (alpha 1), even before any key was
            // seen (m still -inf, where m_old - m_new would be NaN).
            const float mx = lo < n_valid ? vk->max(s + lo, n_valid - lo, f.m[r]) : f.m[r];
            f.diff[r] = lo < n_valid ? f.m[r] - mx : 0.0f; // -inf on the first step: alpha = 0
            f.m[r] = mx;
        }
        vk->exp(f.diff + r0, f.alpha + r0, rows - r0);
        for (int32_t r = r0; r < rows; r++) {
            int32_t lo, n_valid;
            step_keys(b->window, p_first + r / group, b0 * B, step, &lo, &n_valid);
            float *s = f.S + (size_t)r * step;
            const double sum = lo < n_valid ? vk->exp_sum(s + lo, n_valid - lo, f.m[r]) : 0.0;
            if (kv->type == MINT_TYPE_F16 && lo < n_valid) vk->round_f16(s + lo, n_valid - lo);
            memset(s, 0, (size_t)lo * sizeof(float));
            memset(s + n_valid, 0, (size_t)(step - n_valid) * sizeof(float));
            f.l[r] = f.l[r] * (double)f.alpha[r] + sum;
        }
        for (int32_t blk = b0; blk < b1; blk++) {
            const int32_t rb = first_row(blk, B, p_first) * group;
            block_values(b->k, kv, b->layer, blk, kvh, hd,
                         f.S + (size_t)rb * step + (size_t)(blk - b0) * B, (size_t)step, rows - rb,
                         blk == b0 ? f.alpha + rb : NULL, f.O + (size_t)rb * hd);
        }
    }
    for (int32_t r = 0; r < rows; r++) {
        const int h = kvh * group + r % group;
        float *dst = output(b, run->row0 + t0 + r / group, h);
        memcpy(dst, f.O + (size_t)r * hd, (size_t)hd * sizeof(float));
        double l = f.l[r];
        if (b->sinks) { // the sink joins the sum last, as ggml's flash attention adds it
            const float sink = b->sinks[h];
            if (sink > f.m[r]) { // a new maximum: what was summed shrinks by e^(m - sink)
                const float ms = expf(f.m[r] - sink);
                vk->scale(dst, hd, ms);
                l = l * (double)ms + 1.0;
            } else {
                l += (double)expf(sink - f.m[r]);
            }
        }
        vk->scale(dst, hd, (float)(1.0 / l));
    }
}

// ---------------------------------------------------------------------------------------------
// Work items

// Items of one run.
static int32_t run_items(const mint_attn_batch *b, const mint_attn_run *run) {
    const mint_attn_shape *sh = b->sh;
    switch (b->algo) {
    case MINT_ATTN_ALGO_NAIVE:
        return sh->n_head;
    case MINT_ATTN_ALGO_ROWWISE:
        return run->n * sh->n_head_kv;
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
    case MINT_ATTN_ALGO_NAIVE:
        naive_item(b, run, k, scratch);
        break;
    case MINT_ATTN_ALGO_ROWWISE: {
        // One KV head after the other, so that consecutive items read the same keys and values
        // (from cache); within a KV head the latest queries first: they have the most keys, so a
        // dynamic split balances.
        const int32_t t = run->n - 1 - k % run->n;
        rowwise_item(b, run, t, k / run->n, scratch);
        break;
    }
    default: {
        // As for row-wise: KV head by KV head, the latest query blocks first.
        const int32_t qb = flash_queries(sh->n_head / sh->n_head_kv);
        const int32_t n_qb = (run->n + qb - 1) / qb, blk = n_qb - 1 - k % n_qb;
        const int32_t t0 = blk * qb, nq = run->n - t0 < qb ? run->n - t0 : qb;
        flash_item(b, run, t0, nq, k / n_qb, scratch);
    }
    }
}

size_t mint_attention_scratch_bytes(mint_attn_algo algo, const mint_attn_shape *sh, int32_t n_rows,
                                    int32_t n_ctx, int32_t block) {
    const size_t L = ((size_t)n_ctx + (size_t)block - 1) / (size_t)block * (size_t)block;
    const size_t hd = (size_t)sh->head_dim, group = (size_t)(sh->n_head / sh->n_head_kv);
    switch (algo) {
    case MINT_ATTN_ALGO_NAIVE:
        return round64((size_t)n_rows * hd * 4) * 2 + round64((size_t)n_rows * L * 4) + 64;
    case MINT_ATTN_ALGO_ROWWISE:
        return round64(group * hd * 4) * 2 + round64(group * L * 4) + 64;
    default: {
        const size_t rows = (size_t)flash_queries((int)group) * group;
        return flash_bytes(rows, hd, (size_t)(flash_step_blocks(block) * block)) + 64;
    }
    }
}
