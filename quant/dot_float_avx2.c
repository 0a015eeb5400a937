// dot_float_avx2.c - F32, F16 and BF16 dot products and gemm tiles for AVX2 + FMA + F16C
// (Haswell, Zen 1 and later).
//
// Both operands are widened to f32 (exactly: F16C's vcvtph2ps for f16, a 16-bit shift for bf16)
// and multiplied with FMA into one 8-lane accumulator per (row, column) pair; products of two
// f16 or two bf16 values are exact in f32, so the only rounding is the accumulation. The
// accumulator sums the row in 8 interleaved lanes (element i goes to lane i % 8), which is also
// what the reference's double sum is compared against. n need not be a multiple of 8 (attention
// calls these with the head size): the last n % 8 elements are read through a zero-padded copy
// and go through the same FMA, so every tile shape still adds the same terms in the same order.
#include "quant/simd_avx2.h"

#define MINT_LEVEL_NAME(name) name##_avx2

#include <string.h>

enum float_kind { KIND_F32, KIND_F16, KIND_BF16 };

// 8 elements starting at element i of a row of the given kind, widened to f32.
MINT_AVX2_INLINE __m256 load8(enum float_kind kind, const uint8_t *row, int64_t i) {
    switch (kind) {
    case KIND_F32:
        return _mm256_loadu_ps((const float *)row + i);
    case KIND_F16:
        return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)row + i)));
    default: {
        const __m256i h =
            _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const uint16_t *)row + i)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(h, 16));
    }
    }
}

// The last rem (< 8) elements from element i on, zero-padded to 8, widened to f32.
MINT_AVX2_INLINE __m256 load_tail(enum float_kind kind, const uint8_t *row, int64_t i, int rem) {
    const size_t size = kind == KIND_F32 ? 4 : 2;
    uint8_t buf[32] = {0};
    memcpy(buf, row + (size_t)i * size, (size_t)rem * size);
    return load8(kind, buf, 0);
}

// R x C tile: acc[r][c] += w_r[i..i+8) * a_c[i..i+8) for every 8 elements. The C activation
// vectors are widened once per step and reused for R rows; 4 x 3 keeps 12 accumulators, 3
// activations and 1 weight vector in the 16 YMM registers.
MINT_AVX2_INLINE void float_tile(const int R, const int C, enum float_kind kind,
                                 const mint_tile *t) {
    __m256 acc[MINT_TILE_RMAX][MINT_TILE_CMAX];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) acc[r][c] = _mm256_setzero_ps();
    const int64_t n8 = t->n & ~(int64_t)7;
    const size_t elem_bytes = kind == KIND_F32 ? 4 : 2;
    for (int64_t i = 0; i < n8; i += 8) {
        // One prefetch per 64-byte line of each next row (every 16 or 8 elements).
        if ((i & (64 / elem_bytes - 1)) == 0) prefetch_next_rows(R, C, t, (size_t)i * elem_bytes);
        __m256 av[MINT_TILE_CMAX];
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) av[c] = load8(kind, t->a + c * t->a_stride, i);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const __m256 wv = load8(kind, t->w + r * t->w_stride, i);
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) acc[r][c] = _mm256_fmadd_ps(wv, av[c], acc[r][c]);
        }
    }
    const int rem = (int)(t->n - n8);
    if (rem) {
        __m256 av[MINT_TILE_CMAX];
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) av[c] = load_tail(kind, t->a + c * t->a_stride, n8, rem);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const __m256 wv = load_tail(kind, t->w + r * t->w_stride, n8, rem);
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) acc[r][c] = _mm256_fmadd_ps(wv, av[c], acc[r][c]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = hsum_f32x8(acc[r][c]);
}

MINT_AVX2_INLINE void f32_tile(const int R, const int C, const mint_tile *t) {
    float_tile(R, C, KIND_F32, t);
}
MINT_AVX2_INLINE void f16_tile(const int R, const int C, const mint_tile *t) {
    float_tile(R, C, KIND_F16, t);
}
MINT_AVX2_INLINE void bf16_tile(const int R, const int C, const mint_tile *t) {
    float_tile(R, C, KIND_BF16, t);
}

// ---------------------------------------------------------------------------------------------
// Entry points: vec_dot is the 1 x 1 tile, gemm covers the output with tiles of up to 4 x 3.

MINT_TILE_KERNELS(f32_f32, f32_tile, 4, 3, 4)
MINT_TILE_KERNELS(f16_f16, f16_tile, 4, 3, 4)
MINT_TILE_KERNELS(bf16_bf16, bf16_tile, 4, 3, 4)
