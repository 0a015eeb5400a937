// dot_float_neon.c - F32, F16 and BF16 dot products and gemm tiles for baseline Armv8-A NEON
// (both NEON levels use these).
//
// Both operands are widened to f32 exactly (FCVTL for f16, a 16-bit left shift for bf16) and
// multiplied with FMLA into one 4-lane accumulator per (row, column) pair; products of two f16
// or two bf16 values are exact in f32, so the only rounding is the accumulation. Element i goes
// to lane i % 4; the lanes are added at the end with FADDP (vaddvq_f32). n need not be a
// multiple of 4 (attention calls these with the head size): the last n % 4 elements are read
// through a zero-padded copy and go through the same FMLA, so every tile shape adds the same
// terms in the same order.
#include "quant/simd_neon.h"

#define MINT_LEVEL_NAME(name) name##_neon

enum float_kind { KIND_F32, KIND_F16, KIND_BF16 };

// 4 elements starting at element i of a row of the given kind, widened to f32.
MINT_NEON_INLINE float32x4_t load4(enum float_kind kind, const uint8_t *row, int64_t i) {
    switch (kind) {
    case KIND_F32:
        return vld1q_f32((const float *)row + i);
    case KIND_F16:
        return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16((const uint16_t *)row + i)));
    default:
        return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16((const uint16_t *)row + i), 16));
    }
}

// The last rem (< 4) elements from element i on, zero-padded to 4, widened to f32.
MINT_NEON_INLINE float32x4_t load_tail(enum float_kind kind, const uint8_t *row, int64_t i,
                                       int rem) {
    const size_t size = kind == KIND_F32 ? 4 : 2;
    uint8_t buf[16] = {0};
    memcpy(buf, row + (size_t)i * size, (size_t)rem * size);
    return load4(kind, buf, 0);
}

// R x C tile: acc[r][c] += w_r[i..i+4) * a_c[i..i+4) for every 4 elements. The C activation
// vectors are widened once per step and reused for R rows; 4 x 4 keeps 16 accumulators, 4
// activations and 1 weight vector in the 32 vector registers.
MINT_NEON_INLINE void float_tile(const int R, const int C, enum float_kind kind,
                                 const mint_tile *t) {
    float32x4_t acc[4][4];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) acc[r][c] = vdupq_n_f32(0.0f);
    const int64_t n4 = t->n & ~(int64_t)3;
    for (int64_t i = 0; i < n4; i += 4) {
        float32x4_t av[4];
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) av[c] = load4(kind, t->a + c * t->a_stride, i);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const float32x4_t wv = load4(kind, t->w + r * t->w_stride, i);
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) acc[r][c] = vfmaq_f32(acc[r][c], wv, av[c]);
        }
    }
    const int rem = (int)(t->n - n4);
    if (rem) {
        float32x4_t av[4];
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) av[c] = load_tail(kind, t->a + c * t->a_stride, n4, rem);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const float32x4_t wv = load_tail(kind, t->w + r * t->w_stride, n4, rem);
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) acc[r][c] = vfmaq_f32(acc[r][c], wv, av[c]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = vaddvq_f32(acc[r][c]);
}

MINT_NEON_INLINE void f32_tile(const int R, const int C, const mint_tile *t) {
    float_tile(R, C, KIND_F32, t);
}
MINT_NEON_INLINE void f16_tile(const int R, const int C, const mint_tile *t) {
    float_tile(R, C, KIND_F16, t);
}
MINT_NEON_INLINE void bf16_tile(const int R, const int C, const mint_tile *t) {
    float_tile(R, C, KIND_BF16, t);
}

MINT_TILE_KERNELS(f32_f32, f32_tile, 4, 4, 4)
MINT_TILE_KERNELS(f16_f16, f16_tile, 4, 4, 4)
MINT_TILE_KERNELS(bf16_bf16, bf16_tile, 4, 4, 4)
