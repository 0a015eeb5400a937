// vec_exp.h - mint's exponential: the definition every level computes bit for bit.
//
// Internal to quant/. e^x = 2^n * e^r with n = rint(x * log2 e) and r = x - n ln 2 (Cody-Waite,
// ln 2 in two parts, both products fused), e^r = 1 + r + r^2 P(r) with Cephes' degree-5 P
// (expf.c), evaluated by Horner with fused multiply-adds, and the scaling by 2^n done in two
// exact halves so that results below 2^-126 round once, as subnormals (and results above
// FLT_MAX become +inf). Every step is one IEEE operation with one rounding (fmaf, +, *, or exact
// integer work on the bits), so a vector lane that runs the same steps gets the same bits: the
// SIMD files use these constants and this order, and tests/test_vec.c compares them with memcmp.
//
// Accuracy against the correctly rounded e^x, measured over every float in [-104, 89]:
// at most 1.013 ulp for normal results (99.2% are correctly rounded; 21 inputs pass 1 ulp),
// at most 0.75 * 2^-149 for subnormal ones. Special values: e^-inf = +0 (as is anything below
// -104), e^0 = 1 exactly, e^x = +inf from x = 88.72284 on (e^x > FLT_MAX), NaN stays NaN.
#ifndef MINT_QUANT_VEC_EXP_H
#define MINT_QUANT_VEC_EXP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define MINT_EXP_LO     (-104.0f)        // below: e^x < 2^-150, which rounds to +0
#define MINT_EXP_HI     89.0f            // above: e^x > FLT_MAX, +inf
#define MINT_EXP_MAGIC  0x1.8p23f        // 1.5 * 2^23: adding it rounds to an integer (RNE)
#define MINT_EXP_LOG2E  0x1.715476p+0f   // log2(e) rounded to float
#define MINT_EXP_LN2_HI 0x1.62e430p-1f   // ln 2 rounded to float (above ln 2)
#define MINT_EXP_LN2_LO -0x1.05c610p-29f // ln 2 - MINT_EXP_LN2_HI
// P(r) = C0 + C1 r + ... + C5 r^5 ~ (e^r - 1 - r) / r^2 on |r| <= ln2 / 2 (Cephes expf.c)
#define MINT_EXP_C0 5.0000001201E-1f
#define MINT_EXP_C1 1.6666665459E-1f
#define MINT_EXP_C2 4.1665795894E-2f
#define MINT_EXP_C3 8.3334519073E-3f
#define MINT_EXP_C4 1.3981999507E-3f
#define MINT_EXP_C5 1.9875691500E-4f

static inline uint32_t mint_exp_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float mint_exp_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

// 2^k for -126 <= k <= 127 (k as a two's complement uint32_t), from its exponent field.
static inline float mint_exp_pow2(uint32_t k) {
    return mint_exp_float((k + 127u) << 23);
}

// e^x, one element: the specification of every level's exp. The clamps are written so that a
// NaN passes through them (as the SIMD max/min with the constant first do).
static inline float mint_exp1(float x) {
    x = MINT_EXP_LO > x ? MINT_EXP_LO : x;
    x = MINT_EXP_HI < x ? MINT_EXP_HI : x;
    const float t = fmaf(x, MINT_EXP_LOG2E, MINT_EXP_MAGIC); // MAGIC + n, n = rint(x log2 e)
    const float n = t - MINT_EXP_MAGIC;                      // exact
    float r = fmaf(n, -MINT_EXP_LN2_HI, x);
    r = fmaf(n, -MINT_EXP_LN2_LO, r);
    float p = MINT_EXP_C5;
    p = fmaf(p, r, MINT_EXP_C4);
    p = fmaf(p, r, MINT_EXP_C3);
    p = fmaf(p, r, MINT_EXP_C2);
    p = fmaf(p, r, MINT_EXP_C1);
    p = fmaf(p, r, MINT_EXP_C0);
    const float r2 = r * r;
    p = fmaf(p, r2, r);
    p = p + 1.0f;
    // n in [-150, 129] from the low bits of t, split into n1 = floor(n / 2) and n2 = n - n1, both
    // in [-75, 65]: p * 2^n1 is exact and * 2^n2 rounds once. Unsigned arithmetic (two's
    // complement, wrapping) keeps a NaN's garbage bits defined; the result is NaN anyway.
    const uint32_t ni = mint_exp_bits(t) - mint_exp_bits(MINT_EXP_MAGIC);
    const uint32_t n1 = ((ni + 256u) >> 1) - 128u, n2 = ni - n1;
    const float y = p * mint_exp_pow2(n1);
    return y * mint_exp_pow2(n2);
}

#endif // MINT_QUANT_VEC_EXP_H
