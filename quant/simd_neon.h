// simd_neon.h - what the aarch64 kernel files share: intrinsic helpers and the kernels'
// prototypes (the register tiles are instantiated by quant/tiles.h). Included only by *_neon.c
// and *_neondot.c files.
//
// Two levels, one source. The integer kernels (quant/dot_legacy_neon.h, quant/dot_k_neon.h) are
// written once against mint_dot_s8 below and compiled twice: in *_neon.c files (-march=armv8-a)
// it is the baseline SMULL + SADALP sequence, in *_neondot.c files (-march=armv8.2-a+dotprod)
// it is one SDOT (vdotq_s32, Armv8.2 dotprod: Cortex-A55/A76 and later, Neoverse N1/Graviton 2,
// Apple M1). Each .c file defines MINT_LEVEL_NAME (quant/kernels.h), its copy's suffix. The float
// kernels and the activation converters use only baseline instructions and exist once, in the neon
// level; the neondot level inherits them from the table below it. (The +fp16 extension's
// half-precision arithmetic is not used: summing products in f16 would break the f32 error budget,
// and the f16 <-> f32 conversions that matter, FCVTL / FCVTN, are already baseline Armv8.0.)
//
// How gemm equals vec_dot bit for bit: each type has one always-inline "tile" function that
// computes R x C outputs (R weight rows, C activation rows, compile-time constants). Every
// (row, column) pair goes through its own fixed sequence of float operations, which does not
// depend on R or C, so vec_dot (the 1 x 1 tile) and every tile shape give identical bits.
// Register blocking reuses each unpacked weight block for C columns and each activation block
// for R rows.
#ifndef MINT_QUANT_SIMD_NEON_H
#define MINT_QUANT_SIMD_NEON_H

#include "quant/blocks.h"
#include "quant/kernels.h"
#include "quant/tiles.h"

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

// Float operations happen exactly as written in every tile shape (clang would otherwise fuse a
// multiply and an add differently in different inlinings; GCC does not contract in ISO C mode).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define MINT_NEON_INLINE static inline __attribute__((always_inline))

// ---------------------------------------------------------------------------------------------
// Helpers

// acc + the products a[j] * b[j] summed in groups of four: exact int32 (|a|, |b| <= 128 give
// at most 4 * 2^14 per lane per call). With dotprod lane k gets elements 4k..4k+3 (SDOT); the
// baseline widens to 16 bits (SMULL / SMULL2, |a * b| <= 2^14 fits) and adds neighbouring pairs
// into the 32-bit lanes (SADALP), so lane k gets elements {2k, 2k+1, 2k+8, 2k+9}. Only the
// total over the lanes is ever used as an integer, and it is the same.
MINT_NEON_INLINE int32x4_t mint_dot_s8(int32x4_t acc, int8x16_t a, int8x16_t b) {
#if defined(__ARM_FEATURE_DOTPROD)
    return vdotq_s32(acc, a, b);
#else
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
    return vpadalq_s16(acc, vmull_high_s8(a, b));
#endif
}

// One f16 (raw bits) widened to f32, exactly (FCVT; f16 subnormals are kept).
MINT_NEON_INLINE float mint_neon_f16(uint16_t h) {
    return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0);
}

// The f16 at p + r * stride (bytes) for r < R in lanes 0..R-1 of an f32 vector (lanes >= R are
// zero): the scales of R weight rows' blocks, widened with one FCVTL.
MINT_NEON_INLINE float32x4_t mint_neon_f16_rows(const int R, const uint8_t *p, size_t stride) {
    uint16x4_t h = vdup_n_u16(0);
    uint16_t v[4];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) memcpy(&v[r], p + (size_t)r * stride, sizeof v[r]);
    if (R > 0) h = vset_lane_u16(v[0], h, 0);
    if (R > 1) h = vset_lane_u16(v[1], h, 1);
    if (R > 2) h = vset_lane_u16(v[2], h, 2);
    if (R > 3) h = vset_lane_u16(v[3], h, 3);
    return vcvt_f32_f16(vreinterpret_f16_u16(h));
}

// Lane r (a compile-time constant after unrolling) of a float vector.
MINT_NEON_INLINE float mint_neon_lane(float32x4_t v, const int r) {
    switch (r) {
    case 0:
        return vgetq_lane_f32(v, 0);
    case 1:
        return vgetq_lane_f32(v, 1);
    case 2:
        return vgetq_lane_f32(v, 2);
    default:
        return vgetq_lane_f32(v, 3);
    }
}

// acc + x * v[r]: FMLA by element, the scale of weight row r taken from a vector of R scales.
MINT_NEON_INLINE float32x4_t mint_neon_fma_lane(float32x4_t acc, float32x4_t x, float32x4_t v,
                                                const int r) {
    switch (r) {
    case 0:
        return vfmaq_laneq_f32(acc, x, v, 0);
    case 1:
        return vfmaq_laneq_f32(acc, x, v, 1);
    case 2:
        return vfmaq_laneq_f32(acc, x, v, 2);
    default:
        return vfmaq_laneq_f32(acc, x, v, 3);
    }
}

// ---------------------------------------------------------------------------------------------
// The kernels (signatures of quant/kernels.h). Register-tiled dot products are made by
// MINT_TILE_KERNELS (quant/tiles.h).

// Plain floats (quant/dot_float_neon.c), neon level only.
MINT_DECLARE_DOT(f32_f32, neon)
MINT_DECLARE_DOT(f16_f16, neon)
MINT_DECLARE_DOT(bf16_bf16, neon)

// Integer kernels (quant/dot_legacy_neon.h and quant/dot_k_neon.h), compiled for both levels.
MINT_DECLARE_DOT(q4_0_q8_0, neon)
MINT_DECLARE_DOT(q4_1_q8_1, neon)
MINT_DECLARE_DOT(q5_0_q8_0, neon)
MINT_DECLARE_DOT(q5_1_q8_1, neon)
MINT_DECLARE_DOT(q8_0_q8_0, neon)
MINT_DECLARE_DOT(mxfp4_q8_0, neon)
MINT_DECLARE_DOT(iq4_nl_q8_0, neon)
MINT_DECLARE_DOT(iq4_xs_q8_K, neon)
MINT_DECLARE_DOT(iq3_xxs_q8_K, neon)
MINT_DECLARE_DOT(iq3_s_q8_K, neon)
MINT_DECLARE_DOT(iq1_s_q8_K, neon)
MINT_DECLARE_DOT(iq1_m_q8_K, neon)
MINT_DECLARE_DOT(q2_K_q8_K, neon)
MINT_DECLARE_DOT(tq1_0_q8_K, neon)
MINT_DECLARE_DOT(tq2_0_q8_K, neon)
MINT_DECLARE_DOT(q1_0_q8_0, neon)
MINT_DECLARE_DOT(q2_0_q8_0, neon)
MINT_DECLARE_DOT(q3_K_q8_K, neon)
MINT_DECLARE_DOT(q4_K_q8_K, neon)
MINT_DECLARE_DOT(q5_K_q8_K, neon)
MINT_DECLARE_DOT(q6_K_q8_K, neon)
MINT_DECLARE_DOT(q4_0_q8_0, neondot)
MINT_DECLARE_DOT(q4_1_q8_1, neondot)
MINT_DECLARE_DOT(q5_0_q8_0, neondot)
MINT_DECLARE_DOT(q5_1_q8_1, neondot)
MINT_DECLARE_DOT(q8_0_q8_0, neondot)
MINT_DECLARE_DOT(mxfp4_q8_0, neondot)
MINT_DECLARE_DOT(iq4_nl_q8_0, neondot)
MINT_DECLARE_DOT(iq4_xs_q8_K, neondot)
MINT_DECLARE_DOT(iq3_xxs_q8_K, neondot)
MINT_DECLARE_DOT(iq3_s_q8_K, neondot)
MINT_DECLARE_DOT(iq1_s_q8_K, neondot)
MINT_DECLARE_DOT(iq1_m_q8_K, neondot)
MINT_DECLARE_DOT(q2_K_q8_K, neondot)
MINT_DECLARE_DOT(tq1_0_q8_K, neondot)
MINT_DECLARE_DOT(tq2_0_q8_K, neondot)
MINT_DECLARE_DOT(q1_0_q8_0, neondot)
MINT_DECLARE_DOT(q2_0_q8_0, neondot)
MINT_DECLARE_DOT(q3_K_q8_K, neondot)
MINT_DECLARE_DOT(q4_K_q8_K, neondot)
MINT_DECLARE_DOT(q5_K_q8_K, neondot)
MINT_DECLARE_DOT(q6_K_q8_K, neondot)

// Activation conversions (quant/act_neon.c), byte-identical to the reference; neon level only.
void quantize_row_q8_0_act_neon(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_q8_1_act_neon(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_q8_K_neon(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_f16_neon(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_bf16_neon(const float *restrict x, void *restrict y, int64_t n);

// Float vector kernels of softmax and attention (quant/vec_neon.c, quant/attn_tile_neon.c),
// equal to the reference bit for bit (quant/kernels.h: mint_vec_kernels). Neon level only.
void vec_exp_neon(const float *x, float *y, int64_t n);
float vec_max_neon(const float *x, int64_t n, float m);
double vec_exp_sum_neon(float *x, int64_t n, float m);
void vec_scale_neon(float *x, int64_t n, float c);
void vec_round_f16_neon(float *x, int64_t n);
void vec_delta_step_neon(float *st, int s_k, int s_v, const float *q, const float *k,
                         const float *v, float decay, float beta, float scale, float *out);
MINT_DECLARE_ATTN(neon)

#endif // MINT_QUANT_SIMD_NEON_H
