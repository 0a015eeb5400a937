// vec_neon.c - the float vector kernels of softmax and attention with baseline Armv8-A NEON: 4
// lanes, each running the reference's steps (quant/vec_ref.c, quant/vec_exp.h) bit for bit. A
// partial last vector goes through a zero-padded copy.
#include "quant/simd_neon.h"
#include "quant/vec_delta.h"
#include "quant/vec_exp.h"

#include <math.h>

// e^x in 4 lanes: mint_exp1's steps, the scaling by 2^n in the same two exact halves. (FMAX and
// FMIN return NaN for a NaN x, which the reference passes through too.)
MINT_NEON_INLINE float32x4_t exp4(float32x4_t x) {
    x = vmaxq_f32(vdupq_n_f32(MINT_EXP_LO), x);
    x = vminq_f32(vdupq_n_f32(MINT_EXP_HI), x);
    const float32x4_t magic = vdupq_n_f32(MINT_EXP_MAGIC);
    const float32x4_t t = vfmaq_f32(magic, x, vdupq_n_f32(MINT_EXP_LOG2E));
    const float32x4_t n = vsubq_f32(t, magic);
    float32x4_t r = vfmaq_f32(x, n, vdupq_n_f32(-MINT_EXP_LN2_HI));
    r = vfmaq_f32(r, n, vdupq_n_f32(-MINT_EXP_LN2_LO));
    float32x4_t p = vdupq_n_f32(MINT_EXP_C5);
    p = vfmaq_f32(vdupq_n_f32(MINT_EXP_C4), p, r);
    p = vfmaq_f32(vdupq_n_f32(MINT_EXP_C3), p, r);
    p = vfmaq_f32(vdupq_n_f32(MINT_EXP_C2), p, r);
    p = vfmaq_f32(vdupq_n_f32(MINT_EXP_C1), p, r);
    p = vfmaq_f32(vdupq_n_f32(MINT_EXP_C0), p, r);
    const float32x4_t r2 = vmulq_f32(r, r);
    p = vfmaq_f32(r, p, r2);
    p = vaddq_f32(p, vdupq_n_f32(1.0f));
    const uint32x4_t ni =
        vsubq_u32(vreinterpretq_u32_f32(t), vdupq_n_u32(mint_exp_bits(MINT_EXP_MAGIC)));
    const uint32x4_t n1 =
        vsubq_u32(vshrq_n_u32(vaddq_u32(ni, vdupq_n_u32(256)), 1), vdupq_n_u32(128));
    const uint32x4_t n2 = vsubq_u32(ni, n1);
    const uint32x4_t bias = vdupq_n_u32(127);
    const float32x4_t s1 = vreinterpretq_f32_u32(vshlq_n_u32(vaddq_u32(n1, bias), 23));
    const float32x4_t s2 = vreinterpretq_f32_u32(vshlq_n_u32(vaddq_u32(n2, bias), 23));
    return vmulq_f32(vmulq_f32(p, s1), s2);
}

void vec_exp_neon(const float *x, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, exp4(vld1q_f32(x + i)));
    if (i < n) {
        float buf[4] = {0};
        memcpy(buf, x + i, sizeof(float) * (size_t)(n - i));
        vst1q_f32(buf, exp4(vld1q_f32(buf)));
        memcpy(y + i, buf, sizeof(float) * (size_t)(n - i));
    }
}

// x > v ? x : v per lane (FMAX would return NaN for a NaN x; the reference skips it).
MINT_NEON_INLINE float32x4_t max_keep(float32x4_t x, float32x4_t v) {
    return vbslq_f32(vcgtq_f32(x, v), x, v);
}

float vec_max_neon(const float *x, int64_t n, float m) {
    float32x4_t v = vdupq_n_f32(m);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) v = max_keep(vld1q_f32(x + i), v);
    v = max_keep(v, vextq_f32(v, v, 2));
    v = max_keep(v, vextq_f32(v, v, 1));
    m = vgetq_lane_f32(v, 0);
    for (; i < n; i++) m = x[i] > m ? x[i] : m;
    return m + 0.0f;
}

double vec_exp_sum_neon(float *x, int64_t n, float m) {
    const float32x4_t mv = vdupq_n_f32(m);
    float64x2_t acc[8]; // acc[k] holds lanes 2k, 2k + 1 of the double sum
    for (int k = 0; k < 8; k++) acc[k] = vdupq_n_f64(0.0);
    for (int64_t i = 0; i < n; i += 16) {
        float buf[16] = {0};
        const int64_t len = n - i < 16 ? n - i : 16;
        float *src = len == 16 ? x + i : buf;
        if (len < 16) memcpy(buf, x + i, sizeof(float) * (size_t)len);
        for (int q = 0; q < 4; q++) {
            float32x4_t e = exp4(vsubq_f32(vld1q_f32(src + 4 * q), mv));
            const int live = (int)(len - 4 * q); // lanes below it are elements of x
            if (live < 4) {
                const int32x4_t idx = {0, 1, 2, 3};
                const uint32x4_t keep = vcltq_s32(idx, vdupq_n_s32(live < 0 ? 0 : live));
                e = vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(e), keep));
            }
            vst1q_f32(src + 4 * q, e);
            acc[2 * q] = vaddq_f64(acc[2 * q], vcvt_f64_f32(vget_low_f32(e)));
            acc[2 * q + 1] = vaddq_f64(acc[2 * q + 1], vcvt_high_f64_f32(e));
        }
        if (len < 16) memcpy(x + i, buf, sizeof(float) * (size_t)len);
    }
    for (int k = 0; k < 4; k++) acc[k] = vaddq_f64(acc[k], acc[k + 4]); // l += l + 8
    acc[0] = vaddq_f64(acc[0], acc[2]);                                 // l += l + 4
    acc[1] = vaddq_f64(acc[1], acc[3]);
    acc[0] = vaddq_f64(acc[0], acc[1]); // l += l + 2
    return vgetq_lane_f64(acc[0], 0) + vgetq_lane_f64(acc[0], 1);
}

void vec_scale_neon(float *x, int64_t n, float c) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(x + i, vmulq_n_f32(vld1q_f32(x + i), c));
    for (; i < n; i++) x[i] *= c;
}

void vec_round_f16_neon(float *x, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(x + i, vcvt_f32_f16(vcvt_f16_f32(vld1q_f32(x + i))));
    if (i < n) {
        float buf[4] = {0};
        memcpy(buf, x + i, sizeof(float) * (size_t)(n - i));
        vst1q_f32(buf, vcvt_f32_f16(vcvt_f16_f32(vld1q_f32(buf))));
        memcpy(x + i, buf, sizeof(float) * (size_t)(n - i));
    }
}

// ---- the gated delta rule's step (quant/vec_delta.h) -------------------------------------------
// A dot's 16 lanes are four registers (lanes 0-3, 4-7, 8-11, 12-15); two columns go together so
// that their chains of adds interleave. Products and sums are separate instructions (vmulq,
// vaddq): the reference rounds each product before adding it.

// mint_delta_combine16 on the four registers: (l + (l + 8)), + (l + 4), then (0 + 2) + (1 + 3).
MINT_NEON_INLINE float delta_combine(const float32x4_t *a) {
    const float32x4_t c = vaddq_f32(vaddq_f32(a[0], a[2]), vaddq_f32(a[1], a[3]));
    const float32x2_t d = vadd_f32(vget_low_f32(c), vget_high_f32(c)); // c0 + c2, c1 + c3
    return vget_lane_f32(d, 0) + vget_lane_f32(d, 1);
}

// A finished dot: the registers' lanes, and when s_k is not a multiple of 16 the elements past
// `full` added in scalar code by `tail` first.
#define DELTA_FINISH(acc, tail_call, result)                                                       \
    do {                                                                                           \
        if (full < s_k) {                                                                          \
            float lanes[MINT_DELTA_LANES];                                                         \
            for (int r = 0; r < 4; r++) vst1q_f32(lanes + 4 * r, (acc)[r]);                        \
            tail_call;                                                                             \
            (result) = mint_delta_combine16(lanes);                                                \
        } else {                                                                                   \
            (result) = delta_combine(acc);                                                         \
        }                                                                                          \
    } while (0)

// Columns j0 .. j0 + nc - 1 (nc <= 2) of the step.
MINT_NEON_INLINE void delta_cols(float *st, int s_k, int j0, int nc, const float *q, const float *k,
                                 const float *v, float decay, float beta, float scale, float *out) {
    const int full = s_k & ~(MINT_DELTA_LANES - 1);
    const float32x4_t dv = vdupq_n_f32(decay);
    float32x4_t acc[2][4];
    float dj[2];
    for (int c = 0; c < nc; c++)
        for (int r = 0; r < 4; r++) acc[c][r] = vdupq_n_f32(0.0f);
    for (int i = 0; i < full; i += 16)
        for (int c = 0; c < nc; c++) {
            float *col = st + (size_t)(j0 + c) * (size_t)s_k + i;
            for (int r = 0; r < 4; r++) {
                const float32x4_t x = vmulq_f32(vld1q_f32(col + 4 * r), dv);
                vst1q_f32(col + 4 * r, x);
                acc[c][r] = vaddq_f32(acc[c][r], vmulq_f32(x, vld1q_f32(k + i + 4 * r)));
            }
        }
    for (int c = 0; c < nc; c++) {
        float *col = st + (size_t)(j0 + c) * (size_t)s_k;
        float a;
        DELTA_FINISH(acc[c], mint_delta_tail_decay_dot(col, k, decay, full, s_k, lanes), a);
        dj[c] = (v[j0 + c] - a) * beta;
        for (int r = 0; r < 4; r++) acc[c][r] = vdupq_n_f32(0.0f);
    }
    for (int i = 0; i < full; i += 16)
        for (int c = 0; c < nc; c++) {
            float *col = st + (size_t)(j0 + c) * (size_t)s_k + i;
            const float32x4_t d = vdupq_n_f32(dj[c]);
            for (int r = 0; r < 4; r++) {
                const float32x4_t x =
                    vaddq_f32(vld1q_f32(col + 4 * r), vmulq_f32(vld1q_f32(k + i + 4 * r), d));
                vst1q_f32(col + 4 * r, x);
                acc[c][r] = vaddq_f32(acc[c][r], vmulq_f32(x, vld1q_f32(q + i + 4 * r)));
            }
        }
    for (int c = 0; c < nc; c++) {
        float *col = st + (size_t)(j0 + c) * (size_t)s_k;
        float o;
        DELTA_FINISH(acc[c], mint_delta_tail_update_dot(col, k, q, dj[c], full, s_k, lanes), o);
        out[j0 + c] = o * scale;
    }
}

void vec_delta_step_neon(float *st, int s_k, int s_v, const float *q, const float *k,
                         const float *v, float decay, float beta, float scale, float *out) {
    int j = 0;
    for (; j + 2 <= s_v; j += 2) delta_cols(st, s_k, j, 2, q, k, v, decay, beta, scale, out);
    for (; j < s_v; j++) delta_cols(st, s_k, j, 1, q, k, v, decay, beta, scale, out);
}
