// vec_avx512.c - the float vector kernels of softmax and attention with AVX-512F (Skylake-X,
// Ice Lake, Zen 4): 16 lanes, each running the reference's steps (quant/vec_ref.c,
// quant/vec_exp.h), the last partial vector under a mask. The one difference of form: e^x's
// scaling by 2^n is vscalefps, which rounds p * 2^n once, exactly as the reference's two exact
// halves do (so subnormal results agree too).
#include "quant/simd_avx512.h"
#include "quant/vec_delta.h"
#include "quant/vec_exp.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

// e^x in 16 lanes: mint_exp1's steps.
X512_ALWAYS_INLINE __m512 exp16(__m512 x) {
    x = _mm512_max_ps(_mm512_set1_ps(MINT_EXP_LO), x); // LO > x ? LO : x (a NaN x passes)
    x = _mm512_min_ps(_mm512_set1_ps(MINT_EXP_HI), x); // HI < x ? HI : x
    const __m512 magic = _mm512_set1_ps(MINT_EXP_MAGIC);
    const __m512 t = _mm512_fmadd_ps(x, _mm512_set1_ps(MINT_EXP_LOG2E), magic);
    const __m512 n = _mm512_sub_ps(t, magic);
    __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-MINT_EXP_LN2_HI), x);
    r = _mm512_fmadd_ps(n, _mm512_set1_ps(-MINT_EXP_LN2_LO), r);
    __m512 p = _mm512_set1_ps(MINT_EXP_C5);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MINT_EXP_C4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MINT_EXP_C3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MINT_EXP_C2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MINT_EXP_C1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(MINT_EXP_C0));
    const __m512 r2 = _mm512_mul_ps(r, r);
    p = _mm512_fmadd_ps(p, r2, r);
    p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

void vec_exp_avx512(const float *x, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, exp16(_mm512_loadu_ps(x + i)));
    if (i < n) {
        const __mmask16 m = x512_mask16((int)(n - i));
        _mm512_mask_storeu_ps(y + i, m, exp16(_mm512_maskz_loadu_ps(m, x + i)));
    }
}

float vec_max_avx512(const float *x, int64_t n, float m) {
    __m512 v = _mm512_set1_ps(m);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) v = _mm512_max_ps(_mm512_loadu_ps(x + i), v); // x > v ? x : v
    if (i < n) {
        const __mmask16 k = x512_mask16((int)(n - i));
        v = _mm512_mask_max_ps(v, k, _mm512_maskz_loadu_ps(k, x + i), v);
    }
    __m256 h = _mm256_max_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    __m128 q = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_max_ps(q, _mm_movehl_ps(q, q));
    q = _mm_max_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q) + 0.0f;
}

// Lanes 0..7 of the double sum take elements i mod 16 < 8, lanes 8..15 the others.
X512_ALWAYS_INLINE void exp_sum16(float *x, int64_t i, __mmask16 k, __m512 m, __m512d *lo,
                                  __m512d *hi) {
    __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), m));
    e = _mm512_maskz_mov_ps(k, e); // lanes past n add +0
    _mm512_mask_storeu_ps(x + i, k, e);
    *lo = _mm512_add_pd(*lo, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
    *hi = _mm512_add_pd(*hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(e, 1)));
}

double vec_exp_sum_avx512(float *x, int64_t n, float m) {
    const __m512 mv = _mm512_set1_ps(m);
    __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) exp_sum16(x, i, 0xFFFF, mv, &lo, &hi);
    if (i < n) exp_sum16(x, i, x512_mask16((int)(n - i)), mv, &lo, &hi);
    const __m512d s8 = _mm512_add_pd(lo, hi); // l + (l + 8)
    const __m256d s4 = _mm256_add_pd(_mm512_castpd512_pd256(s8), _mm512_extractf64x4_pd(s8, 1));
    const __m128d s2 = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd(s4, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s2, _mm_unpackhi_pd(s2, s2)));
}

void vec_scale_avx512(float *x, int64_t n, float c) {
    const __m512 cv = _mm512_set1_ps(c);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), cv));
    if (i < n) {
        const __mmask16 k = x512_mask16((int)(n - i));
        _mm512_mask_storeu_ps(x + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), cv));
    }
}

X512_ALWAYS_INLINE __m512 round_f16_16(__m512 x) {
    return _mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

void vec_round_f16_avx512(float *x, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, round_f16_16(_mm512_loadu_ps(x + i)));
    if (i < n) {
        const __mmask16 k = x512_mask16((int)(n - i));
        _mm512_mask_storeu_ps(x + i, k, round_f16_16(_mm512_maskz_loadu_ps(k, x + i)));
    }
}

// ---- the gated delta rule's step (quant/vec_delta.h) -------------------------------------------
// A dot's 16 lanes are one register; four columns go together so that four chains of adds
// interleave (one column's adds depend on each other, the columns' do not).

// mint_delta_combine16 on a register: (l + (l + 8)), + (l + 4), then (0 + 2) + (1 + 3).
X512_ALWAYS_INLINE float delta_combine(__m512 a) {
    const __m256 b = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
    const __m128 c = _mm_add_ps(_mm256_castps256_ps128(b), _mm256_extractf128_ps(b, 1));
    const __m128 d = _mm_add_ps(c, _mm_movehl_ps(c, c)); // c0 + c2, c1 + c3
    return _mm_cvtss_f32(_mm_add_ss(d, _mm_movehdup_ps(d)));
}

// A finished dot: the register's lanes, and when s_k is not a multiple of 16 the elements past
// `full` added in scalar code by `tail` first.
#define DELTA_FINISH(acc, tail_call, result)                                                       \
    do {                                                                                           \
        if (full < s_k) {                                                                          \
            float lanes[MINT_DELTA_LANES];                                                         \
            _mm512_storeu_ps(lanes, (acc));                                                        \
            tail_call;                                                                             \
            (result) = mint_delta_combine16(lanes);                                                \
        } else {                                                                                   \
            (result) = delta_combine(acc);                                                         \
        }                                                                                          \
    } while (0)

// Columns j0 .. j0 + nc - 1 (nc <= 4) of the step.
X512_ALWAYS_INLINE void delta_cols(float *st, int s_k, int j0, int nc, const float *q,
                                   const float *k, const float *v, float decay, float beta,
                                   float scale, float *out) {
    const int full = s_k & ~(MINT_DELTA_LANES - 1);
    const __m512 dv = _mm512_set1_ps(decay);
    __m512 acc[4];
    float dj[4];
    for (int c = 0; c < nc; c++) acc[c] = _mm512_setzero_ps();
    for (int i = 0; i < full; i += 16) {
        const __m512 kv = _mm512_loadu_ps(k + i);
        for (int c = 0; c < nc; c++) {
            float *col = st + (size_t)(j0 + c) * (size_t)s_k;
            const __m512 x = _mm512_mul_ps(_mm512_loadu_ps(col + i), dv);
            _mm512_storeu_ps(col + i, x);
            acc[c] = _mm512_add_ps(acc[c], _mm512_mul_ps(x, kv));
        }
    }
    for (int c = 0; c < nc; c++) {
        float *col = st + (size_t)(j0 + c) * (size_t)s_k;
        float a;
        DELTA_FINISH(acc[c], mint_delta_tail_decay_dot(col, k, decay, full, s_k, lanes), a);
        dj[c] = (v[j0 + c] - a) * beta;
        acc[c] = _mm512_setzero_ps();
    }
    for (int i = 0; i < full; i += 16) {
        const __m512 kv = _mm512_loadu_ps(k + i), qv = _mm512_loadu_ps(q + i);
        for (int c = 0; c < nc; c++) {
            float *col = st + (size_t)(j0 + c) * (size_t)s_k;
            const __m512 x =
                _mm512_add_ps(_mm512_loadu_ps(col + i), _mm512_mul_ps(kv, _mm512_set1_ps(dj[c])));
            _mm512_storeu_ps(col + i, x);
            acc[c] = _mm512_add_ps(acc[c], _mm512_mul_ps(x, qv));
        }
    }
    for (int c = 0; c < nc; c++) {
        float *col = st + (size_t)(j0 + c) * (size_t)s_k;
        float o;
        DELTA_FINISH(acc[c], mint_delta_tail_update_dot(col, k, q, dj[c], full, s_k, lanes), o);
        out[j0 + c] = o * scale;
    }
}

void vec_delta_step_avx512(float *st, int s_k, int s_v, const float *q, const float *k,
                           const float *v, float decay, float beta, float scale, float *out) {
    int j = 0;
    for (; j + 4 <= s_v; j += 4) delta_cols(st, s_k, j, 4, q, k, v, decay, beta, scale, out);
    for (; j < s_v; j++) delta_cols(st, s_k, j, 1, q, k, v, decay, beta, scale, out);
}
