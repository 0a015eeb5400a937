// simd_avx2.h - what the AVX2 kernel files share: small intrinsic helpers and the kernels'
// prototypes (the register tiles are instantiated by quant/tiles.h). Included only by *_avx2.c
// files (it needs -mavx2 -mfma -mf16c, which only those files get).
//
// How every AVX2 dot product is built, so that gemm equals vec_dot bit for bit: each type has
// one always-inline "tile" function that computes an R x C block of outputs (R weight rows, C
// activation rows) with R and C compile-time constants, and both vec_dot (the 1 x 1 tile) and
// gemm are made of it. Integer sums inside a block are exact whatever the instruction order; the
// float operations a (row, column) pair goes through (conversion of its integer lanes, the scale
// multiply, the FMA into its accumulator lanes, the final reduction) are the same in every tile
// shape, so every shape gives identical bits. Float and K-quant tiles keep one 8-lane
// accumulator per pair (reduced by hsum_f32x8); the legacy tiles share one accumulator between
// four rows (dot_legacy_avx2.c says why). Register blocking reuses each unpacked weight block
// for C columns and each activation block for R rows; the tile shapes per type were chosen by
// measurement (the numbers are in the commit messages).
#ifndef MINT_QUANT_SIMD_AVX2_H
#define MINT_QUANT_SIMD_AVX2_H

#include "quant/blocks.h"
#include "quant/kernels.h"
#include "quant/tiles.h"

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

// Float operations must happen exactly as written (mul, then FMA) in every tile shape; clang
// would otherwise be free to fuse a multiply and an add differently in different inlinings.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define MINT_AVX2_INLINE static inline __attribute__((always_inline))

// ---------------------------------------------------------------------------------------------
// Helpers

// Sum of the 8 lanes in one fixed order (halves, then pairs, then the last two), so every caller
// reduces an accumulator the same way.
MINT_AVX2_INLINE float hsum_f32x8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// One f16 (raw bits at p) widened exactly and broadcast to 8 lanes (F16C).
MINT_AVX2_INLINE __m256 bcast_f16(const uint16_t *p) {
    return _mm256_cvtph_ps(_mm_set1_epi16((short)*p));
}

// The 16 nibble bytes of a 32-element block as 32 bytes 0..15 in element order: low nibbles
// (elements 0..15) in the low 128-bit half, high nibbles (16..31) in the high half. The 16 bytes
// are broadcast to both halves by the load unit; one 64-bit variable shift moves the high half.
MINT_AVX2_INLINE __m256i nibbles32(const uint8_t *qs) {
    const __m256i x = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)qs));
    const __m256i shifted = _mm256_srlv_epi64(x, _mm256_set_epi64x(4, 4, 0, 0));
    return _mm256_and_si256(shifted, _mm256_set1_epi8(0x0F));
}

// 4 bytes as a little-endian word (x86 is little-endian; memcpy makes the unaligned read legal).
MINT_AVX2_INLINE uint32_t load_u32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

// Bit e of the 32-bit word qh as byte e of the result: 0x10 where set, 0 where clear (the 5th bit
// of Q5_0/Q5_1 quants, already in place). Each byte first receives the qh byte that holds its
// bit, then one bit is tested per byte.
MINT_AVX2_INLINE __m256i bits_to_0x10(uint32_t qh) {
    const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202,
                                           0x0101010101010101, 0x0000000000000000);
    __m256i x = _mm256_shuffle_epi8(_mm256_set1_epi32((int)qh), shuf);
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201);
    x = _mm256_cmpeq_epi8(_mm256_and_si256(x, bit), bit);
    return _mm256_and_si256(x, _mm256_set1_epi8(0x10));
}

// Q8_K's bsums (16 int16) of super-block a.
MINT_AVX2_INLINE __m256i load_bsums(const mint_block_q8_K *a) {
    return _mm256_loadu_si256((const __m256i *)a->bsums);
}

// ---------------------------------------------------------------------------------------------
// Register tiles (quant/tiles.h: MINT_TILE_KERNELS makes vec_dot and gemm of a tile function).

// Token generation (one column) streams each weight row once from memory. The hardware
// prefetchers do not run far enough ahead of R interleaved row streams to hide the latency, so
// an R x 1 tile asks for the same bytes of the next R rows while it computes its own: by the time
// the driver moves on, those rows are in L2. Into L2 (hint T2), not L1: measured on Zen 4 with
// one thread, Q8_0 gemv went from 8 GB/s (no prefetch) or 11 GB/s (into L1) to 17 GB/s, F16 from
// 14 to 21 GB/s (the memory's single-thread read rate is 22 GB/s there). Past the last row this
// is a harmless hint (prefetches never fault).
MINT_AVX2_INLINE void prefetch_next_rows(const int R, const int C, const mint_tile *t,
                                         size_t offset) {
    if (C != 1 || t->w_stride == 0) return; // batch tiles find their rows in L2; vec_dot has one
    // The address is computed as an integer: past the last row it points outside the weights.
    const uintptr_t next = (uintptr_t)t->w + (size_t)R * t->w_stride + offset;
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
        _mm_prefetch((const char *)(next + (size_t)r * t->w_stride), _MM_HINT_T2);
}

// ---------------------------------------------------------------------------------------------
// The kernels (signatures of quant/kernels.h).

MINT_DECLARE_DOT(f32_f32, avx2)
MINT_DECLARE_DOT(f16_f16, avx2)
MINT_DECLARE_DOT(bf16_bf16, avx2)
MINT_DECLARE_DOT(q4_0_q8_0, avx2)
MINT_DECLARE_DOT(q4_1_q8_1, avx2)
MINT_DECLARE_DOT(q5_0_q8_0, avx2)
MINT_DECLARE_DOT(q5_1_q8_1, avx2)
MINT_DECLARE_DOT(q8_0_q8_0, avx2)
MINT_DECLARE_DOT(mxfp4_q8_0, avx2)
MINT_DECLARE_DOT(iq4_nl_q8_0, avx2)
MINT_DECLARE_DOT(iq4_xs_q8_K, avx2)
MINT_DECLARE_DOT(iq3_xxs_q8_K, avx2)
MINT_DECLARE_DOT(iq3_s_q8_K, avx2)
MINT_DECLARE_DOT(iq1_s_q8_K, avx2)
MINT_DECLARE_DOT(iq1_m_q8_K, avx2)
MINT_DECLARE_DOT(q2_K_q8_K, avx2)
MINT_DECLARE_DOT(tq1_0_q8_K, avx2)
MINT_DECLARE_DOT(tq2_0_q8_K, avx2)
MINT_DECLARE_DOT(q1_0_q8_0, avx2)
MINT_DECLARE_DOT(q2_0_q8_0, avx2)
MINT_DECLARE_DOT(q3_K_q8_K, avx2)
MINT_DECLARE_DOT(q4_K_q8_K, avx2)
MINT_DECLARE_DOT(q5_K_q8_K, avx2)
MINT_DECLARE_DOT(q6_K_q8_K, avx2)

// Activation conversions (quant/act_avx2.c), byte-identical to the reference.
void quantize_row_q8_0_act_avx2(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_q8_1_act_avx2(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_q8_K_avx2(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_f16_avx2(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_bf16_avx2(const float *restrict x, void *restrict y, int64_t n);

// Dequantizers (quant/dequant_avx2.c), equal to the reference bit for bit.
void dequantize_row_f16_avx2(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_bf16_avx2(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_q4_0_avx2(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_q8_0_avx2(const void *restrict x, float *restrict y, int64_t n);

// Float vector kernels of softmax and attention (quant/vec_avx2.c, quant/attn_tile_avx2.c),
// equal to the reference bit for bit (quant/kernels.h: mint_vec_kernels).
void vec_exp_avx2(const float *x, float *y, int64_t n);
float vec_max_avx2(const float *x, int64_t n, float m);
double vec_exp_sum_avx2(float *x, int64_t n, float m);
void vec_scale_avx2(float *x, int64_t n, float c);
void vec_round_f16_avx2(float *x, int64_t n);
void vec_delta_step_avx2(float *st, int s_k, int s_v, const float *q, const float *k,
                         const float *v, float decay, float beta, float scale, float *out);
MINT_DECLARE_ATTN(avx2)

#endif // MINT_QUANT_SIMD_AVX2_H
