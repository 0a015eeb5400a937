// attention.c - storing keys/values, and causal grouped-query attention over them, in two
// versions: the plain one, one (query, head) pair at a time, and a tiled one that processes a
// block of queries and the heads sharing a KV head together with the matmul kernels.
//
// Arithmetic. With an f32 cache it is llama.cpp's plain path (its f32kv runs): scores q.k in
// f32, softmax(scale * s + mask) with the exponentials summed in double, then the probabilities
// times V. With an f16 cache it is llama.cpp's non-flash f16 path: keys and values are rounded
// to f16 when stored, q is rounded to f16 for q.k, and the probabilities are rounded to f16
// before they weight V.
//
// Why the tiled version gives the same bits for a query whether it comes in a batch or alone:
// every score is one dot product of length head_dim (gemm equals vec_dot per element); the
// softmax of a row depends only on that row; and "probabilities times V" is, per output
// dimension, one dot product over positions 0 .. L-1 where L = the query's position + 1 rounded
// up to MINT_KV_PAD, with the probabilities past the query's position set to zero. L depends
// only on the position, so the dot is the same call in both cases. Query blocks never straddle a
// MINT_KV_PAD boundary, so one L serves a whole block.
#include "ops/attention.h"

#include "ops/ops.h"
#include "quant/fp16.h"

#include <string.h>

// cache position pos = (k, v): k a row, v a column of the transposed values
void mint_kv_store(const mint_kv_view *kv, const float *k, const float *v, int32_t pos) {
    void *kd = mint_kv_k_row(kv, pos);
    if (kv->type == MINT_TYPE_F32) {
        memcpy(kd, k, (size_t)kv->kv_dim * sizeof(float));
        for (int64_t i = 0; i < kv->kv_dim; i++) ((float *)mint_kv_vt_row(kv, i))[pos] = v[i];
    } else {
        for (int64_t i = 0; i < kv->kv_dim; i++) ((uint16_t *)kd)[i] = mint_f32_to_f16(k[i]);
        for (int64_t i = 0; i < kv->kv_dim; i++)
            ((uint16_t *)mint_kv_vt_row(kv, i))[pos] = mint_f32_to_f16(v[i]);
    }
}

// ---------------------------------------------------------------------------------------------
// The plain version: one query of one head at a time, every step a loop you can read.

void mint_attention_plain(const mint_kv_view *kv, const mint_attn_shape *sh, const float *q,
                          int kvh, int32_t n_keys, float *s, float *out) {
    const int hd = sh->head_dim;
    for (int32_t j = 0; j < n_keys; j++) { // scores: s[j] = q . k_j * scale
        const void *k = (const char *)mint_kv_k_row(kv, j) + (size_t)kvh * hd * kv->elem;
        double d = 0;
        if (kv->type == MINT_TYPE_F32)
            for (int i = 0; i < hd; i++) d += (double)(q[i] * ((const float *)k)[i]);
        else
            for (int i = 0; i < hd; i++)
                d += (double)(mint_f16_to_f32(mint_f32_to_f16(q[i])) *
                              mint_f16_to_f32(((const uint16_t *)k)[i]));
        s[j] = (float)d * sh->scale;
    }
    mint_softmax(s, n_keys);
    for (int i = 0; i < hd; i++) { // out[i] = sum_j p_j * v_j[i]
        const void *vt = mint_kv_vt_row(kv, (int64_t)kvh * hd + i);
        double o = 0;
        for (int32_t j = 0; j < n_keys; j++) {
            if (kv->type == MINT_TYPE_F32)
                o += (double)(s[j] * ((const float *)vt)[j]);
            else
                o += (double)(mint_f16_to_f32(mint_f32_to_f16(s[j])) *
                              mint_f16_to_f32(((const uint16_t *)vt)[j]));
        }
        out[i] = (float)o;
    }
}

// ---------------------------------------------------------------------------------------------
// The tiled version.

// Queries per block: with the heads of a group, blocks of about 64 rows reuse each key and value
// row 64 times from cache. A power of two dividing MINT_KV_PAD, so blocks never straddle one.
static int32_t queries_per_block(int group) {
    int32_t q = 1;
    while (q * 2 * group <= 64 && q * 2 <= MINT_KV_PAD) q *= 2;
    return q;
}

static size_t round64(size_t x) {
    return (x + 63) / 64 * 64;
}

size_t mint_attention_scratch_bytes(const mint_attn_shape *sh, int32_t n_ctx) {
    const int group = sh->n_head / sh->n_head_kv;
    const size_t rows = (size_t)queries_per_block(group) * (size_t)group;
    const size_t n_pad = ((size_t)n_ctx + MINT_KV_PAD - 1) / MINT_KV_PAD * MINT_KV_PAD;
    // scores (f32) + probabilities (f32 or f16) + queries + outputs, each cache-line aligned;
    // the plain version needs n_ctx floats, which the last term covers
    return round64(rows * n_pad * 4) * 2 + round64(rows * (size_t)sh->head_dim * 4) * 2 +
           round64((size_t)n_ctx * 4);
}

typedef struct block {
    int32_t t0, nq; // first row of the batch in the block, number of queries
    int kvh;        // KV head
} block;

// Query blocks of a batch, aligned to absolute positions.
static int32_t n_query_blocks(const mint_attn_batch *b, int32_t qb) {
    const int32_t first = b->pos0 / qb, last = (b->pos0 + b->n_tokens - 1) / qb;
    return last - first + 1;
}

int32_t mint_attention_tiled_items(const mint_attn_batch *b) {
    const int group = b->sh->n_head / b->sh->n_head_kv;
    return n_query_blocks(b, queries_per_block(group)) * b->sh->n_head_kv;
}

static block get_block(const mint_attn_batch *b, int32_t qb, int32_t i) {
    const int32_t n_qb = n_query_blocks(b, qb);
    // Latest query blocks first: they have the most keys, so the dynamic split balances.
    const int32_t k = n_qb - 1 - i / b->sh->n_head_kv;
    const int32_t start = (b->pos0 / qb + k) * qb; // absolute position of the block's first slot
    const int32_t p0 = start > b->pos0 ? start : b->pos0;
    const int32_t end = b->pos0 + b->n_tokens;
    const int32_t p1 = start + qb < end ? start + qb : end;
    return (block){p0 - b->pos0, p1 - p0, i % b->sh->n_head_kv};
}

void mint_attention_tiled_item(const mint_attn_batch *b, int32_t i, uint8_t *scratch) {
    const mint_attn_shape *sh = b->sh;
    const mint_kv_view *kv = b->kv;
    const int hd = sh->head_dim, group = sh->n_head / sh->n_head_kv;
    const block bl = get_block(b, queries_per_block(group), i);
    const int rows = bl.nq * group; // row r: query r / group, head kvh * group + r % group
    const int32_t p_last = b->pos0 + bl.t0 + bl.nq - 1;
    const int32_t L = (p_last + MINT_KV_PAD) / MINT_KV_PAD * MINT_KV_PAD; // keys 0..L-1
    const bool f16 = kv->type == MINT_TYPE_F16;
    const mint_type_kernels *tk = &b->k->t[kv->type];
    const size_t n_pad = (size_t)kv->n_pad, qrow = (size_t)hd * kv->elem, prow = n_pad * kv->elem;
    // Work space: S [rows][n_pad] f32 | P [rows][n_pad] | Q [rows][hd] | O [rows][hd] f32.
    float *S = (float *)scratch;
    uint8_t *P = scratch + round64((size_t)rows * n_pad * 4);
    uint8_t *Q = P + round64((size_t)rows * n_pad * 4);
    float *O = (float *)(Q + round64((size_t)rows * (size_t)hd * 4));

    for (int r = 0; r < rows; r++) { // gather (and round) the queries
        const float *q =
            (const float *)((const char *)b->q + (size_t)(bl.t0 + r / group) * b->q_stride) +
            (size_t)(bl.kvh * group + r % group) * hd;
        if (f16)
            tk->from_float(q, Q + (size_t)r * qrow, hd);
        else
            memcpy(Q + (size_t)r * qrow, q, (size_t)hd * sizeof(float));
    }
    // S[r][j] = q_r . k_j for j < L (those past the query's position are masked below)
    const void *K = (const char *)mint_kv_k_row(kv, 0) + (size_t)bl.kvh * hd * kv->elem;
    mint_gemm_tile(tk, hd, K, (size_t)kv->kv_dim * kv->elem, L, Q, qrow, rows, S, n_pad);
    for (int r = 0; r < rows; r++) {
        float *s = S + (size_t)r * n_pad;
        const int32_t n_keys = b->pos0 + bl.t0 + r / group + 1;
        for (int32_t j = 0; j < n_keys; j++) s[j] *= sh->scale;
        mint_softmax(s, n_keys);
        for (int32_t j = n_keys; j < L; j++) s[j] = 0.0f;
        if (f16)
            tk->from_float(s, P + (size_t)r * prow, L);
        else
            memcpy(P + (size_t)r * prow, s, (size_t)L * sizeof(float));
    }
    // O[r][i] = sum_{j < L} P[r][j] * Vt[i][j]
    const void *Vt = mint_kv_vt_row(kv, (int64_t)bl.kvh * hd);
    mint_gemm_tile(tk, L, Vt, prow, hd, P, prow, rows, O, (size_t)hd);
    for (int r = 0; r < rows; r++)
        memcpy((float *)((char *)b->out + (size_t)(bl.t0 + r / group) * b->out_stride) +
                   (size_t)(bl.kvh * group + r % group) * hd,
               O + (size_t)r * hd, (size_t)hd * sizeof(float));
}
