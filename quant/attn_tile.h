// attn_tile.h - attention's two products (quant/kernels.h: mint_qk_fn, mint_pv_fn) over an f32,
// f16 or quantized cache, written once for every SIMD level: a level's attn_tile_<level>.c defines
// its vector primitives and tile sizes, then includes this header, which defines the entry points
// MINT_LEVEL_NAME(attn_qk_f32), (attn_qk_f16), (attn_pv_f32), (attn_pv_f16), (attn_pv_q8_0) and
// (attn_pv_q4_0).
//
// Both products have one shape: y[r][c] = last(sum_{k < depth} x[r][k] * m[k][c]), where m's
// rows are contiguous along the output columns c:
//   scores: x = q, m = kt (row i = dimension i of the nk keys), depth d, c = key,
//           last(acc) = acc * scale;
//   values: x = p, m = v (row j = the d values of key j), depth nk, c = dimension,
//           last(acc) = fma(o, a[r], acc) (o the old output, a == NULL meaning 1).
// Independent output elements sit in the lanes (ATTN_LANES columns per vector), so no lane ever
// meets another and nothing is summed across lanes: a tile of R rows x NV vectors loads NV
// vectors of m's row k, broadcasts x[r][k] and runs one fused multiply-add per lane. Each lane
// thus runs the reference's chain in the reference's order, so every element has the reference's
// bits (quant/attn_tile_ref.c) whatever the tile shape, and there is no horizontal sum to pay
// per element however short the chain.
//
// The level defines, before including:
//   attn_vec, attn_mask     its vector type and lane-mask type (int where there are no masks);
//   ATTN_LANES              f32 lanes per vector;
//   ATTN_QK_R, ATTN_QK_NV   the scores tile, rows x vectors (at most 8 x 4);
//   ATTN_PV_R, ATTN_PV_NV   the values tile;
//   ATTN_MASKED             1: the columns past the last whole tile run as one tile whose last
//                           vector is masked (attn_mask_first); 0: as single vectors, and the
//                           last ncols % ATTN_LANES columns one element at a time (fmaf);
//   ATTN_FULL               the mask of all lanes;
//   attn_zero(), attn_set1(x), attn_mul(u, v), attn_fma(acc, u, v) = acc + u * v rounded once,
//   attn_load(f16, p, i, m) = elements p[i ..] (f32 or f16) as f32, lanes outside m zero and
//   not read, attn_load_out(y, m), attn_store(y, m, v), and attn_mask_first(n) if ATTN_MASKED;
//   for quantized values: attn_half(p) = the f16 at p as f32, attn_load_q8(q, m) = the int8
//   q[0 ..] as f32, attn_load_q4(q, hi, m) = the low (hi = 0) or high nibbles of q[0 ..] minus 8
//   as f32 (lanes outside m not read).
//
// A quantized row's vector of ATTN_LANES (at most 16) columns from a multiple of ATTN_LANES lies
// in one half of one 32-element block, so it is one load and one product by the block's scale:
// the dequantized vector with to_float's bits (quant/attn_elem.h), without a row written out.
#include "quant/attn_elem.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define ATTN_INLINE static inline __attribute__((always_inline))
#define ATTN_UNROLL _Pragma("GCC unroll 8")

enum attn_kind { ATTN_SCORES, ATTN_VALUES };

// One call's operands (see the top of the file).
typedef struct attn_job {
    mint_attn_elem elem; // what m holds
    int64_t depth;       // length of every chain: d (scores) or nk (values)
    const float *x;      // row r at x + r * x_stride: q or p, depth elements
    size_t x_stride;     // floats between rows of x
    const void *m;       // row k at element k * m_stride: kt or v, one element per output column
    size_t m_stride;     // elements between rows of m (bytes for quantized rows)
    float scale;         // scores: the factor of every sum
    const float *a;      // values: a[r] multiplies the old output row r (NULL: 1)
    float *y;            // output row r at y + r * y_stride: s or o
    size_t y_stride;     // floats between output rows
} attn_job;

// Columns c .. c + ATTN_LANES - 1 of row k of m (lanes outside mask zero or unread).
ATTN_INLINE attn_vec attn_get(const attn_job *job, int64_t k, size_t c, attn_mask mask) {
    const mint_attn_elem e = job->elem;
    if (e == MINT_ATTN_F32 || e == MINT_ATTN_F16)
        return attn_load(e == MINT_ATTN_F16, job->m, (size_t)k * job->m_stride + c, mask);
    const uint8_t *blk = mint_attn_block_at(e, job->m, job->m_stride, (size_t)k, c);
    const size_t i = c % 32;
    const attn_vec q = e == MINT_ATTN_Q8_0 ? attn_load_q8(blk + 2 + i, mask)
                                           : attn_load_q4(blk + 2 + i % 16, i >= 16, mask);
    return attn_mul(q, attn_set1(attn_half(blk)));
}

// Rows x vectors of the tile of a product.
ATTN_INLINE int attn_rows_max(const int kind) {
    return kind == ATTN_SCORES ? ATTN_QK_R : ATTN_PV_R;
}
ATTN_INLINE int attn_vecs_max(const int kind) {
    return kind == ATTN_SCORES ? ATTN_QK_NV : ATTN_PV_NV;
}

// Rows r0 .. r0 + R - 1 x columns c0 .. c0 + ATTN_LANES * NV - 1 (the last vector under mlast).
ATTN_INLINE void attn_tile(const int kind, const int R, const int NV, const attn_job *job, int r0,
                           size_t c0, attn_mask mlast) {
    const float *x = job->x + (size_t)r0 * job->x_stride;
    attn_vec acc[8][4];
    ATTN_UNROLL for (int r = 0; r < R; r++) {
        ATTN_UNROLL for (int v = 0; v < NV; v++) acc[r][v] = attn_zero();
    }
    for (int64_t k = 0; k < job->depth; k++) {
        attn_vec mk[4];
        ATTN_UNROLL for (int v = 0; v < NV; v++) mk[v] =
            attn_get(job, k, c0 + ATTN_LANES * (size_t)v, v == NV - 1 ? mlast : ATTN_FULL);
        ATTN_UNROLL for (int r = 0; r < R; r++) {
            const attn_vec xb = attn_set1(x[(size_t)r * job->x_stride + (size_t)k]);
            ATTN_UNROLL for (int v = 0; v < NV; v++) acc[r][v] = attn_fma(acc[r][v], xb, mk[v]);
        }
    }
    const attn_vec sc = attn_set1(job->scale);
    ATTN_UNROLL for (int r = 0; r < R; r++) {
        const attn_vec ar = attn_set1(job->a ? job->a[r0 + r] : 1.0f);
        ATTN_UNROLL for (int v = 0; v < NV; v++) {
            float *y = job->y + (size_t)(r0 + r) * job->y_stride + c0 + ATTN_LANES * (size_t)v;
            const attn_mask m = v == NV - 1 ? mlast : ATTN_FULL;
            if (kind == ATTN_SCORES)
                attn_store(y, m, attn_mul(acc[r][v], sc));
            else
                attn_store(y, m, attn_fma(acc[r][v], attn_load_out(y, m), ar));
        }
    }
}

// Every row of one column chunk: whole tiles, then one tile of the rows left.
ATTN_INLINE void attn_rows(const int kind, const int NV, const attn_job *job, int nr, size_t c0,
                           attn_mask mlast) {
    const int RT = attn_rows_max(kind);
    int r = 0;
    for (; r + RT <= nr; r += RT) attn_tile(kind, RT, NV, job, r, c0, mlast);
    const int left = nr - r;
    if (left == 1) attn_tile(kind, 1, NV, job, r, c0, mlast);
    if (RT > 2 && left == 2) attn_tile(kind, 2, NV, job, r, c0, mlast);
    if (RT > 3 && left == 3) attn_tile(kind, 3, NV, job, r, c0, mlast);
    if (RT > 4 && left == 4) attn_tile(kind, 4, NV, job, r, c0, mlast);
    if (RT > 5 && left == 5) attn_tile(kind, 5, NV, job, r, c0, mlast);
    if (RT > 6 && left == 6) attn_tile(kind, 6, NV, job, r, c0, mlast);
    if (RT > 7 && left == 7) attn_tile(kind, 7, NV, job, r, c0, mlast);
}

// The whole product: chunks of whole tiles, then the columns left.
ATTN_INLINE void attn_product(const int kind, const attn_job *job, int nr, size_t ncols) {
    const int NVT = attn_vecs_max(kind);
    size_t c = 0;
    for (; c + (size_t)ATTN_LANES * NVT <= ncols; c += (size_t)ATTN_LANES * NVT)
        attn_rows(kind, NVT, job, nr, c, ATTN_FULL);
#if ATTN_MASKED
    // One chunk of as many vectors as the columns left need, the last one masked.
    const int left = (int)(ncols - c);
    if (left <= 0) return;
    const int nv = (left + ATTN_LANES - 1) / ATTN_LANES;
    const attn_mask m = attn_mask_first(left - (nv - 1) * ATTN_LANES);
    if (nv == 1) attn_rows(kind, 1, job, nr, c, m);
    if (NVT > 1 && nv == 2) attn_rows(kind, 2, job, nr, c, m);
    if (NVT > 2 && nv == 3) attn_rows(kind, 3, job, nr, c, m);
    if (NVT > 3 && nv == 4) attn_rows(kind, 4, job, nr, c, m);
#else
    for (; c + ATTN_LANES <= ncols; c += ATTN_LANES) attn_rows(kind, 1, job, nr, c, ATTN_FULL);
    // The last ncols % ATTN_LANES columns: the same chain, one element at a time.
    for (int r = 0; r < nr; r++)
        for (size_t cc = c; cc < ncols; cc++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < job->depth; k++)
                acc = fmaf(job->x[(size_t)r * job->x_stride + (size_t)k],
                           mint_attn_elem_at(job->elem, job->m, job->m_stride, (size_t)k, cc), acc);
            float *y = job->y + (size_t)r * job->y_stride + cc;
            *y = kind == ATTN_SCORES ? acc * job->scale : fmaf(*y, job->a ? job->a[r] : 1.0f, acc);
        }
#endif
}

void MINT_LEVEL_NAME(attn_qk_f32)(int64_t d, const float *q, size_t q_stride, int nr,
                                  const void *kt, size_t kt_stride, int nk, float scale, float *s,
                                  size_t s_stride) {
    const attn_job job = {MINT_ATTN_F32, d, q, q_stride, kt, kt_stride, scale, NULL, s, s_stride};
    attn_product(ATTN_SCORES, &job, nr, (size_t)nk);
}

void MINT_LEVEL_NAME(attn_qk_f16)(int64_t d, const float *q, size_t q_stride, int nr,
                                  const void *kt, size_t kt_stride, int nk, float scale, float *s,
                                  size_t s_stride) {
    const attn_job job = {MINT_ATTN_F16, d, q, q_stride, kt, kt_stride, scale, NULL, s, s_stride};
    attn_product(ATTN_SCORES, &job, nr, (size_t)nk);
}

void MINT_LEVEL_NAME(attn_pv_f32)(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                                  size_t v_stride, int nk, const float *a, float *o,
                                  size_t o_stride) {
    const attn_job job = {MINT_ATTN_F32, nk, p, p_stride, v, v_stride, 0.0f, a, o, o_stride};
    attn_product(ATTN_VALUES, &job, nr, (size_t)d);
}

void MINT_LEVEL_NAME(attn_pv_f16)(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                                  size_t v_stride, int nk, const float *a, float *o,
                                  size_t o_stride) {
    const attn_job job = {MINT_ATTN_F16, nk, p, p_stride, v, v_stride, 0.0f, a, o, o_stride};
    attn_product(ATTN_VALUES, &job, nr, (size_t)d);
}

void MINT_LEVEL_NAME(attn_pv_q8_0)(int64_t d, const float *p, size_t p_stride, int nr,
                                   const void *v, size_t v_stride, int nk, const float *a, float *o,
                                   size_t o_stride) {
    const attn_job job = {MINT_ATTN_Q8_0, nk, p, p_stride, v, v_stride, 0.0f, a, o, o_stride};
    attn_product(ATTN_VALUES, &job, nr, (size_t)d);
}

void MINT_LEVEL_NAME(attn_pv_q4_0)(int64_t d, const float *p, size_t p_stride, int nr,
                                   const void *v, size_t v_stride, int nk, const float *a, float *o,
                                   size_t o_stride) {
    const attn_job job = {MINT_ATTN_Q4_0, nk, p, p_stride, v, v_stride, 0.0f, a, o, o_stride};
    attn_product(ATTN_VALUES, &job, nr, (size_t)d);
}
