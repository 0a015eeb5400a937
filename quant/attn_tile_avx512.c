// attn_tile_avx512.c - attention's two products (quant/kernels.h: mint_qk_fn, mint_pv_fn) with
// AVX-512F, over an f32 or f16 cache.
//
// Both put independent output elements in the lanes, so no lane ever meets another and nothing
// is summed across lanes: the scores tile holds 16 keys per vector (the keys are stored
// transposed, a dimension's keys contiguous) and broadcasts one query element per row; the
// values tile holds 16 output dimensions per vector (value rows contiguous) and broadcasts one
// probability per row. Each lane runs the reference's chain of fused multiply-adds in the
// reference's order, so every element has the reference's bits (quant/attn_tile_ref.c), and
// there is no horizontal sum to pay per element, however short the chain.
#include "quant/avx512_common.h"
#include "quant/avx512_parts.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

// 16 elements at p + i as f32 (exact); lanes outside m read as 0 and touch nothing.
X512_ALWAYS_INLINE __m512 load16(int f16, const void *p, size_t i, __mmask16 m) {
    if (f16) {
        const uint16_t *h = (const uint16_t *)p + i;
        return _mm512_cvtph_ps(m == 0xFFFF ? _mm256_loadu_si256((const __m256i *)h)
                                           : _mm256_maskz_loadu_epi16(m, h));
    }
    const float *f = (const float *)p + i;
    return m == 0xFFFF ? _mm512_loadu_ps(f) : _mm512_maskz_loadu_ps(m, f);
}

// ---------------------------------------------------------------------------------------------
// Scores: R query rows (at most QK_R) x 16 * NV keys from key j0 (the last vector under mlast).
enum { QK_R = 8, QK_NV = 2 };

X512_ALWAYS_INLINE void qk_tile(int f16, int R, int NV, int64_t d, const float *q, size_t q_stride,
                                const void *kt, size_t kt_stride, size_t j0, __mmask16 mlast,
                                float scale, float *s, size_t s_stride) {
    __m512 acc[QK_R][QK_NV];
    X512_UNROLL for (int r = 0; r < R; r++) {
        X512_UNROLL for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ps();
    }
    for (int64_t i = 0; i < d; i++) {
        __m512 k[QK_NV];
        X512_UNROLL for (int v = 0; v < NV; v++) k[v] = load16(
            f16, kt, (size_t)i * kt_stride + j0 + 16 * (size_t)v, v == NV - 1 ? mlast : 0xFFFF);
        X512_UNROLL for (int r = 0; r < R; r++) {
            const __m512 qb = _mm512_set1_ps(q[(size_t)r * q_stride + (size_t)i]);
            X512_UNROLL for (int v = 0; v < NV; v++) acc[r][v] =
                _mm512_fmadd_ps(qb, k[v], acc[r][v]);
        }
    }
    const __m512 sc = _mm512_set1_ps(scale);
    X512_UNROLL for (int r = 0; r < R; r++) {
        X512_UNROLL for (int v = 0; v < NV; v++)
            _mm512_mask_storeu_ps(s + (size_t)r * s_stride + j0 + 16 * (size_t)v,
                                  v == NV - 1 ? mlast : 0xFFFF, _mm512_mul_ps(acc[r][v], sc));
    }
}

// Rows of one column chunk, in tiles of QK_R rows (the last tile smaller).
X512_ALWAYS_INLINE void qk_rows(int f16, int NV, int64_t d, const float *q, size_t q_stride, int nr,
                                const void *kt, size_t kt_stride, size_t j0, __mmask16 mlast,
                                float scale, float *s, size_t s_stride) {
    int r = 0;
    for (; r + QK_R <= nr; r += QK_R)
        qk_tile(f16, QK_R, NV, d, q + (size_t)r * q_stride, q_stride, kt, kt_stride, j0, mlast,
                scale, s + (size_t)r * s_stride, s_stride);
    const float *qr = q + (size_t)r * q_stride;
    float *sr = s + (size_t)r * s_stride;
    switch (nr - r) {
#define QK_CASE(R)                                                                                 \
    case R:                                                                                        \
        qk_tile(f16, R, NV, d, qr, q_stride, kt, kt_stride, j0, mlast, scale, sr, s_stride);       \
        break;
        QK_CASE(1)
        QK_CASE(2)
        QK_CASE(3)
        QK_CASE(4)
        QK_CASE(5)
        QK_CASE(6)
        QK_CASE(7)
#undef QK_CASE
    default:
        break;
    }
}

X512_ALWAYS_INLINE void qk(int f16, int64_t d, const float *q, size_t q_stride, int nr,
                           const void *kt, size_t kt_stride, int nk, float scale, float *s,
                           size_t s_stride) {
    size_t j = 0;
    for (; j + 32 <= (size_t)nk; j += 32)
        qk_rows(f16, 2, d, q, q_stride, nr, kt, kt_stride, j, 0xFFFF, scale, s, s_stride);
    const int left = nk - (int)j;
    if (left > 16)
        qk_rows(f16, 2, d, q, q_stride, nr, kt, kt_stride, j, x512_mask16(left - 16), scale, s,
                s_stride);
    else if (left > 0)
        qk_rows(f16, 1, d, q, q_stride, nr, kt, kt_stride, j, x512_mask16(left), scale, s,
                s_stride);
}

static void attn_qk_f32_avx512(int64_t d, const float *q, size_t q_stride, int nr, const void *kt,
                               size_t kt_stride, int nk, float scale, float *s, size_t s_stride) {
    qk(0, d, q, q_stride, nr, kt, kt_stride, nk, scale, s, s_stride);
}

static void attn_qk_f16_avx512(int64_t d, const float *q, size_t q_stride, int nr, const void *kt,
                               size_t kt_stride, int nk, float scale, float *s, size_t s_stride) {
    qk(1, d, q, q_stride, nr, kt, kt_stride, nk, scale, s, s_stride);
}

// ---------------------------------------------------------------------------------------------
// Probabilities times values: R rows (at most PV_R) x 16 * NV dimensions from i0.
enum { PV_R = 4, PV_NV = 4 };

X512_ALWAYS_INLINE void pv_tile(int f16, int R, int NV, const float *p, size_t p_stride,
                                const void *v, size_t v_stride, int nk, size_t i0, __mmask16 mlast,
                                const float *a, float *o, size_t o_stride) {
    __m512 acc[PV_R][PV_NV];
    X512_UNROLL for (int r = 0; r < R; r++) {
        X512_UNROLL for (int c = 0; c < NV; c++) acc[r][c] = _mm512_setzero_ps();
    }
    for (int j = 0; j < nk; j++) {
        __m512 x[PV_NV];
        X512_UNROLL for (int c = 0; c < NV; c++) x[c] = load16(
            f16, v, (size_t)j * v_stride + i0 + 16 * (size_t)c, c == NV - 1 ? mlast : 0xFFFF);
        X512_UNROLL for (int r = 0; r < R; r++) {
            const __m512 pb = _mm512_set1_ps(p[(size_t)r * p_stride + (size_t)j]);
            X512_UNROLL for (int c = 0; c < NV; c++) acc[r][c] =
                _mm512_fmadd_ps(pb, x[c], acc[r][c]);
        }
    }
    X512_UNROLL for (int r = 0; r < R; r++) {
        const __m512 ar = _mm512_set1_ps(a ? a[r] : 1.0f);
        X512_UNROLL for (int c = 0; c < NV; c++) {
            float *y = o + (size_t)r * o_stride + i0 + 16 * (size_t)c;
            const __mmask16 m = c == NV - 1 ? mlast : 0xFFFF;
            _mm512_mask_storeu_ps(y, m,
                                  _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, y), ar, acc[r][c]));
        }
    }
}

X512_ALWAYS_INLINE void pv_rows(int f16, int NV, const float *p, size_t p_stride, int nr,
                                const void *v, size_t v_stride, int nk, size_t i0, __mmask16 mlast,
                                const float *a, float *o, size_t o_stride) {
    int r = 0;
    for (; r + PV_R <= nr; r += PV_R)
        pv_tile(f16, PV_R, NV, p + (size_t)r * p_stride, p_stride, v, v_stride, nk, i0, mlast,
                a ? a + r : NULL, o + (size_t)r * o_stride, o_stride);
    const float *pr = p + (size_t)r * p_stride, *ar = a ? a + r : NULL;
    float *orow = o + (size_t)r * o_stride;
    switch (nr - r) {
#define PV_CASE(R)                                                                                 \
    case R:                                                                                        \
        pv_tile(f16, R, NV, pr, p_stride, v, v_stride, nk, i0, mlast, ar, orow, o_stride);         \
        break;
        PV_CASE(1)
        PV_CASE(2)
        PV_CASE(3)
#undef PV_CASE
    default:
        break;
    }
}

X512_ALWAYS_INLINE void pv(int f16, int64_t d, const float *p, size_t p_stride, int nr,
                           const void *v, size_t v_stride, int nk, const float *a, float *o,
                           size_t o_stride) {
    size_t i = 0;
    for (; i + 64 <= (size_t)d; i += 64)
        pv_rows(f16, 4, p, p_stride, nr, v, v_stride, nk, i, 0xFFFF, a, o, o_stride);
    const int left = (int)(d - (int64_t)i);
    if (left > 48)
        pv_rows(f16, 4, p, p_stride, nr, v, v_stride, nk, i, x512_mask16(left - 48), a, o,
                o_stride);
    else if (left > 32)
        pv_rows(f16, 3, p, p_stride, nr, v, v_stride, nk, i, x512_mask16(left - 32), a, o,
                o_stride);
    else if (left > 16)
        pv_rows(f16, 2, p, p_stride, nr, v, v_stride, nk, i, x512_mask16(left - 16), a, o,
                o_stride);
    else if (left > 0)
        pv_rows(f16, 1, p, p_stride, nr, v, v_stride, nk, i, x512_mask16(left), a, o, o_stride);
}

static void attn_pv_f32_avx512(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                               size_t v_stride, int nk, const float *a, float *o, size_t o_stride) {
    pv(0, d, p, p_stride, nr, v, v_stride, nk, a, o, o_stride);
}

static void attn_pv_f16_avx512(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                               size_t v_stride, int nk, const float *a, float *o, size_t o_stride) {
    pv(1, d, p, p_stride, nr, v, v_stride, nk, a, o, o_stride);
}

void mint_x512_set_attn_avx512(mint_kernels *k) {
    k->vec.qk_f32 = attn_qk_f32_avx512;
    k->vec.qk_f16 = attn_qk_f16_avx512;
    k->vec.pv_f32 = attn_pv_f32_avx512;
    k->vec.pv_f16 = attn_pv_f16_avx512;
}
