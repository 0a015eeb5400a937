// attn_tile_neon.c - attention's two products (quant/kernels.h: mint_qk_fn, mint_pv_fn) with
// baseline Armv8-A NEON, over an f32 or f16 cache (FCVTL widens f16 exactly).
//
// As in attn_tile_avx512.c, independent output elements sit in the lanes (4 keys of the scores,
// or 4 dimensions of the output, per vector) and each lane runs the reference's chain of fused
// multiply-adds (FMLA) in order, so every element has the reference's bits. Tiles of up to 6
// rows x 16 columns keep 24 accumulators, 4 loaded vectors and a broadcast in the 32 registers.
// Columns past the last multiple of 4 run the same chain one element at a time (fmaf is FMADD).
#include "quant/fp16.h"
#include "quant/simd_neon.h"

#include <math.h>

enum { TILE_R = 6, TILE_NV = 4 };

MINT_NEON_INLINE float32x4_t load4(int f16, const void *p, size_t i) {
    if (f16) return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16((const uint16_t *)p + i)));
    return vld1q_f32((const float *)p + i);
}

MINT_NEON_INLINE float elem(int f16, const void *p, size_t i) {
    return f16 ? mint_f16_to_f32(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

// ---------------------------------------------------------------------------------------------
// Scores: R rows x 4 * NV keys from key j0.

MINT_NEON_INLINE void qk_tile(int f16, int R, int NV, int64_t d, const float *q, size_t q_stride,
                              const void *kt, size_t kt_stride, size_t j0, float scale, float *s,
                              size_t s_stride) {
    float32x4_t acc[TILE_R][TILE_NV];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) acc[r][v] = vdupq_n_f32(0.0f);
    for (int64_t i = 0; i < d; i++) {
        float32x4_t k[TILE_NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++)
            k[v] = load4(f16, kt, (size_t)i * kt_stride + j0 + 4 * (size_t)v);
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            const float32x4_t qb = vdupq_n_f32(q[(size_t)r * q_stride + (size_t)i]);
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) acc[r][v] = vfmaq_f32(acc[r][v], qb, k[v]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++)
            vst1q_f32(s + (size_t)r * s_stride + j0 + 4 * (size_t)v, vmulq_n_f32(acc[r][v], scale));
}

MINT_NEON_INLINE void qk_rows(int f16, int NV, int64_t d, const float *q, size_t q_stride, int nr,
                              const void *kt, size_t kt_stride, size_t j0, float scale, float *s,
                              size_t s_stride) {
    int r = 0;
    for (; r + TILE_R <= nr; r += TILE_R)
        qk_tile(f16, TILE_R, NV, d, q + (size_t)r * q_stride, q_stride, kt, kt_stride, j0, scale,
                s + (size_t)r * s_stride, s_stride);
    const float *qr = q + (size_t)r * q_stride;
    float *sr = s + (size_t)r * s_stride;
    switch (nr - r) {
#define QK_CASE(R)                                                                                 \
    case R:                                                                                        \
        qk_tile(f16, R, NV, d, qr, q_stride, kt, kt_stride, j0, scale, sr, s_stride);              \
        break;
        QK_CASE(1)
        QK_CASE(2)
        QK_CASE(3)
        QK_CASE(4)
        QK_CASE(5)
#undef QK_CASE
    default:
        break;
    }
}

MINT_NEON_INLINE void qk(int f16, int64_t d, const float *q, size_t q_stride, int nr,
                         const void *kt, size_t kt_stride, int nk, float scale, float *s,
                         size_t s_stride) {
    size_t j = 0;
    for (; j + 16 <= (size_t)nk; j += 16)
        qk_rows(f16, 4, d, q, q_stride, nr, kt, kt_stride, j, scale, s, s_stride);
    for (; j + 4 <= (size_t)nk; j += 4)
        qk_rows(f16, 1, d, q, q_stride, nr, kt, kt_stride, j, scale, s, s_stride);
    for (int r = 0; r < nr; r++) // the last nk % 4 keys
        for (size_t jj = j; jj < (size_t)nk; jj++) {
            float acc = 0.0f;
            for (int64_t i = 0; i < d; i++)
                acc = fmaf(q[(size_t)r * q_stride + (size_t)i],
                           elem(f16, kt, (size_t)i * kt_stride + jj), acc);
            s[(size_t)r * s_stride + jj] = acc * scale;
        }
}

void attn_qk_f32_neon(int64_t d, const float *q, size_t q_stride, int nr, const void *kt,
                      size_t kt_stride, int nk, float scale, float *s, size_t s_stride) {
    qk(0, d, q, q_stride, nr, kt, kt_stride, nk, scale, s, s_stride);
}

void attn_qk_f16_neon(int64_t d, const float *q, size_t q_stride, int nr, const void *kt,
                      size_t kt_stride, int nk, float scale, float *s, size_t s_stride) {
    qk(1, d, q, q_stride, nr, kt, kt_stride, nk, scale, s, s_stride);
}

// ---------------------------------------------------------------------------------------------
// Probabilities times values: R rows x 4 * NV dimensions from i0.

MINT_NEON_INLINE void pv_tile(int f16, int R, int NV, const float *p, size_t p_stride,
                              const void *v, size_t v_stride, int nk, size_t i0, const float *a,
                              float *o, size_t o_stride) {
    float32x4_t acc[TILE_R][TILE_NV];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int c = 0; c < NV; c++) acc[r][c] = vdupq_n_f32(0.0f);
    for (int j = 0; j < nk; j++) {
        float32x4_t x[TILE_NV];
#pragma GCC unroll 4
        for (int c = 0; c < NV; c++)
            x[c] = load4(f16, v, (size_t)j * v_stride + i0 + 4 * (size_t)c);
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            const float32x4_t pb = vdupq_n_f32(p[(size_t)r * p_stride + (size_t)j]);
#pragma GCC unroll 4
            for (int c = 0; c < NV; c++) acc[r][c] = vfmaq_f32(acc[r][c], pb, x[c]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
        const float32x4_t ar = vdupq_n_f32(a ? a[r] : 1.0f);
#pragma GCC unroll 4
        for (int c = 0; c < NV; c++) {
            float *y = o + (size_t)r * o_stride + i0 + 4 * (size_t)c;
            vst1q_f32(y, vfmaq_f32(acc[r][c], vld1q_f32(y), ar));
        }
    }
}

MINT_NEON_INLINE void pv_rows(int f16, int NV, const float *p, size_t p_stride, int nr,
                              const void *v, size_t v_stride, int nk, size_t i0, const float *a,
                              float *o, size_t o_stride) {
    int r = 0;
    for (; r + TILE_R <= nr; r += TILE_R)
        pv_tile(f16, TILE_R, NV, p + (size_t)r * p_stride, p_stride, v, v_stride, nk, i0,
                a ? a + r : NULL, o + (size_t)r * o_stride, o_stride);
    const float *pr = p + (size_t)r * p_stride, *ar = a ? a + r : NULL;
    float *orow = o + (size_t)r * o_stride;
    switch (nr - r) {
#define PV_CASE(R)                                                                                 \
    case R:                                                                                        \
        pv_tile(f16, R, NV, pr, p_stride, v, v_stride, nk, i0, ar, orow, o_stride);                \
        break;
        PV_CASE(1)
        PV_CASE(2)
        PV_CASE(3)
        PV_CASE(4)
        PV_CASE(5)
#undef PV_CASE
    default:
        break;
    }
}

MINT_NEON_INLINE void pv(int f16, int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                         size_t v_stride, int nk, const float *a, float *o, size_t o_stride) {
    size_t i = 0;
    for (; i + 16 <= (size_t)d; i += 16)
        pv_rows(f16, 4, p, p_stride, nr, v, v_stride, nk, i, a, o, o_stride);
    for (; i + 4 <= (size_t)d; i += 4)
        pv_rows(f16, 1, p, p_stride, nr, v, v_stride, nk, i, a, o, o_stride);
    for (int r = 0; r < nr; r++) // the last d % 4 dimensions
        for (size_t ii = i; ii < (size_t)d; ii++) {
            float acc = 0.0f;
            for (int j = 0; j < nk; j++)
                acc = fmaf(p[(size_t)r * p_stride + (size_t)j],
                           elem(f16, v, (size_t)j * v_stride + ii), acc);
            float *y = o + (size_t)r * o_stride + ii;
            *y = fmaf(*y, a ? a[r] : 1.0f, acc);
        }
}

void attn_pv_f32_neon(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                      size_t v_stride, int nk, const float *a, float *o, size_t o_stride) {
    pv(0, d, p, p_stride, nr, v, v_stride, nk, a, o, o_stride);
}

void attn_pv_f16_neon(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                      size_t v_stride, int nk, const float *a, float *o, size_t o_stride) {
    pv(1, d, p, p_stride, nr, v, v_stride, nk, a, o, o_stride);
}
