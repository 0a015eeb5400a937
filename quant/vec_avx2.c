// vec_avx2.c - the float vector kernels of softmax and attention with AVX2 + FMA + F16C: 8 lanes,
// each running the reference's steps (quant/vec_ref.c, quant/vec_exp.h) bit for bit; the last
// partial vector is read and written under a lane mask.
#include "quant/simd_avx2.h"
#include "quant/vec_delta.h"
#include "quant/vec_exp.h"

// Lanes below n (n <= 8) as an AVX2 mask vector.
MINT_AVX2_INLINE __m256i lanes_below(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// e^x in 8 lanes: mint_exp1's steps, the scaling by 2^n in the same two exact halves.
MINT_AVX2_INLINE __m256 exp8(__m256 x) {
    x = _mm256_max_ps(_mm256_set1_ps(MINT_EXP_LO), x); // LO > x ? LO : x (a NaN x passes)
    x = _mm256_min_ps(_mm256_set1_ps(MINT_EXP_HI), x); // HI < x ? HI : x
    const __m256 magic = _mm256_set1_ps(MINT_EXP_MAGIC);
    const __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(MINT_EXP_LOG2E), magic);
    const __m256 n = _mm256_sub_ps(t, magic);
    __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-MINT_EXP_LN2_HI), x);
    r = _mm256_fmadd_ps(n, _mm256_set1_ps(-MINT_EXP_LN2_LO), r);
    __m256 p = _mm256_set1_ps(MINT_EXP_C5);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(MINT_EXP_C4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(MINT_EXP_C3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(MINT_EXP_C2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(MINT_EXP_C1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(MINT_EXP_C0));
    const __m256 r2 = _mm256_mul_ps(r, r);
    p = _mm256_fmadd_ps(p, r2, r);
    p = _mm256_add_ps(p, _mm256_set1_ps(1.0f));
    const __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(t),
                                        _mm256_set1_epi32((int)mint_exp_bits(MINT_EXP_MAGIC)));
    const __m256i n1 = _mm256_sub_epi32(
        _mm256_srli_epi32(_mm256_add_epi32(ni, _mm256_set1_epi32(256)), 1), _mm256_set1_epi32(128));
    const __m256i n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

void vec_exp_avx2(const float *x, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, exp8(_mm256_loadu_ps(x + i)));
    if (i < n) {
        const __m256i m = lanes_below(n - i);
        _mm256_maskstore_ps(y + i, m, exp8(_mm256_maskload_ps(x + i, m)));
    }
}

float vec_max_avx2(const float *x, int64_t n, float m) {
    __m256 v = _mm256_set1_ps(m);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) v = _mm256_max_ps(_mm256_loadu_ps(x + i), v); // x > v ? x : v
    if (i < n) {
        const __m256i k = lanes_below(n - i);
        const __m256 xv = _mm256_blendv_ps(v, _mm256_maskload_ps(x + i, k), _mm256_castsi256_ps(k));
        v = _mm256_max_ps(xv, v);
    }
    __m128 q = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    q = _mm_max_ps(q, _mm_movehl_ps(q, q));
    q = _mm_max_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q) + 0.0f;
}

// 16 elements from i (lanes at or past n read as 0, add +0 and are not stored): the double sum's
// lanes 0..3, 4..7, 8..11, 12..15 are acc[0..3].
MINT_AVX2_INLINE void exp_sum16(float *x, int64_t i, int64_t n, __m256 m, __m256d acc[4]) {
    for (int h = 0; h < 2; h++) {
        const int64_t at = i + 8 * h;
        __m256 e;
        if (at + 8 <= n) {
            e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + at), m));
            _mm256_storeu_ps(x + at, e);
        } else {
            const __m256i k = lanes_below(n > at ? n - at : 0);
            e = exp8(_mm256_sub_ps(_mm256_maskload_ps(x + at, k), m));
            e = _mm256_and_ps(e, _mm256_castsi256_ps(k));
            _mm256_maskstore_ps(x + at, k, e);
        }
        acc[2 * h] = _mm256_add_pd(acc[2 * h], _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
        acc[2 * h + 1] =
            _mm256_add_pd(acc[2 * h + 1], _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
}

double vec_exp_sum_avx2(float *x, int64_t n, float m) {
    const __m256 mv = _mm256_set1_ps(m);
    __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(),
                      _mm256_setzero_pd()};
    for (int64_t i = 0; i < n; i += 16) exp_sum16(x, i, n, mv, acc);
    // l += l + 8, then l += l + 4, l += l + 2, lane 0 + lane 1
    const __m256d s4 = _mm256_add_pd(_mm256_add_pd(acc[0], acc[2]), _mm256_add_pd(acc[1], acc[3]));
    const __m128d s2 = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd(s4, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s2, _mm_unpackhi_pd(s2, s2)));
}

void vec_scale_avx2(float *x, int64_t n, float c) {
    const __m256 cv = _mm256_set1_ps(c);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), cv));
    if (i < n) {
        const __m256i k = lanes_below(n - i);
        _mm256_maskstore_ps(x + i, k, _mm256_mul_ps(_mm256_maskload_ps(x + i, k), cv));
    }
}

MINT_AVX2_INLINE __m256 round_f16_8(__m256 x) {
    return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

void vec_round_f16_avx2(float *x, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, round_f16_8(_mm256_loadu_ps(x + i)));
    if (i < n) {
        const __m256i k = lanes_below(n - i);
        _mm256_maskstore_ps(x + i, k, round_f16_8(_mm256_maskload_ps(x + i, k)));
    }
}

// ---- the gated delta rule's step (quant/vec_delta.h) -------------------------------------------
// A dot's 16 lanes are two registers (lanes 0-7, 8-15); four columns go together so that their
// chains of adds interleave.

// mint_delta_combine16 on the two registers: (l + (l + 8)), + (l + 4), then (0 + 2) + (1 + 3).
MINT_AVX2_INLINE float delta_combine(__m256 lo, __m256 hi) {
    const __m256 b = _mm256_add_ps(lo, hi);
    const __m128 c = _mm_add_ps(_mm256_castps256_ps128(b), _mm256_extractf128_ps(b, 1));
    const __m128 d = _mm_add_ps(c, _mm_movehl_ps(c, c)); // c0 + c2, c1 + c3
    return _mm_cvtss_f32(_mm_add_ss(d, _mm_movehdup_ps(d)));
}

// A finished dot: the registers' lanes, and when s_k is not a multiple of 16 the elements past
// `full` added in scalar code by `tail` first.
#define DELTA_FINISH(lo, hi, tail_call, result)                                                    \
    do {                                                                                           \
        if (full < s_k) {                                                                          \
            float lanes[MINT_DELTA_LANES];                                                         \
            _mm256_storeu_ps(lanes, (lo));                                                         \
            _mm256_storeu_ps(lanes + 8, (hi));                                                     \
            tail_call;                                                                             \
            (result) = mint_delta_combine16(lanes);                                                \
        } else {                                                                                   \
            (result) = delta_combine((lo), (hi));                                                  \
        }                                                                                          \
    } while (0)

// Columns j0 .. j0 + nc - 1 (nc <= 4) of the step.
MINT_AVX2_INLINE void delta_cols(float *st, int s_k, int j0, int nc, const float *q, const float *k,
                                 const float *v, float decay, float beta, float scale, float *out) {
    const int full = s_k & ~(MINT_DELTA_LANES - 1);
    const __m256 dv = _mm256_set1_ps(decay);
    __m256 lo[4], hi[4];
    float dj[4];
    for (int c = 0; c < nc; c++) lo[c] = hi[c] = _mm256_setzero_ps();
    for (int i = 0; i < full; i += 16) {
        const __m256 k0 = _mm256_loadu_ps(k + i), k1 = _mm256_loadu_ps(k + i + 8);
        for (int c = 0; c < nc; c++) {
            float *col = st + (size_t)(j0 + c) * (size_t)s_k;
            const __m256 x0 = _mm256_mul_ps(_mm256_loadu_ps(col + i), dv);
            const __m256 x1 = _mm256_mul_ps(_mm256_loadu_ps(col + i + 8), dv);
            _mm256_storeu_ps(col + i, x0);
            _mm256_storeu_ps(col + i + 8, x1);
            lo[c] = _mm256_add_ps(lo[c], _mm256_mul_ps(x0, k0));
            hi[c] = _mm256_add_ps(hi[c], _mm256_mul_ps(x1, k1));
        }
    }
    for (int c = 0; c < nc; c++) {
        float *col = st + (size_t)(j0 + c) * (size_t)s_k;
        float a;
        DELTA_FINISH(lo[c], hi[c], mint_delta_tail_decay_dot(col, k, decay, full, s_k, lanes), a);
        dj[c] = (v[j0 + c] - a) * beta;
        lo[c] = hi[c] = _mm256_setzero_ps();
    }
    for (int i = 0; i < full; i += 16) {
        const __m256 k0 = _mm256_loadu_ps(k + i), k1 = _mm256_loadu_ps(k + i + 8);
        const __m256 q0 = _mm256_loadu_ps(q + i), q1 = _mm256_loadu_ps(q + i + 8);
        for (int c = 0; c < nc; c++) {
            float *col = st + (size_t)(j0 + c) * (size_t)s_k;
            const __m256 d = _mm256_set1_ps(dj[c]);
            const __m256 x0 = _mm256_add_ps(_mm256_loadu_ps(col + i), _mm256_mul_ps(k0, d));
            const __m256 x1 = _mm256_add_ps(_mm256_loadu_ps(col + i + 8), _mm256_mul_ps(k1, d));
            _mm256_storeu_ps(col + i, x0);
            _mm256_storeu_ps(col + i + 8, x1);
            lo[c] = _mm256_add_ps(lo[c], _mm256_mul_ps(x0, q0));
            hi[c] = _mm256_add_ps(hi[c], _mm256_mul_ps(x1, q1));
        }
    }
    for (int c = 0; c < nc; c++) {
        float *col = st + (size_t)(j0 + c) * (size_t)s_k;
        float o;
        DELTA_FINISH(lo[c], hi[c], mint_delta_tail_update_dot(col, k, q, dj[c], full, s_k, lanes),
                     o);
        out[j0 + c] = o * scale;
    }
}

void vec_delta_step_avx2(float *st, int s_k, int s_v, const float *q, const float *k,
                         const float *v, float decay, float beta, float scale, float *out) {
    int j = 0;
    for (; j + 4 <= s_v; j += 4) delta_cols(st, s_k, j, 4, q, k, v, decay, beta, scale, out);
    for (; j < s_v; j++) delta_cols(st, s_k, j, 1, q, k, v, decay, beta, scale, out);
}
