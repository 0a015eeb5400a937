// dot_q1q2_avx2.c - dot products and gemm tiles of Q1_0 and Q2_0 (quant/blocks_q1q2.h) with
// Q8_0 activations, for AVX2 (Haswell, Zen 1 and later); the AVX-512 levels use them as they are.
//
// Both weight blocks span several Q8_0 blocks (Q1_0 four, Q2_0 two), so the work is per 32
// elements, one activation block at a time. Q1_0: the 32 sign bits become 32 bytes of +1 / -1
// (each byte picks its bit with vpshufb and a bit mask, vpcmpeqb finds the clear ones) and
// vpsignb puts them on the activations, whose pairs vpmaddubsw against ones sums (|a| <= 127:
// no overflow). Q2_0: the four 2-bit fields of each byte are shifted out per 64-bit lane
// (vpsrlvq), then one vpermd and one vpshufb put the codes in element order; sum (q - 1) * a is
// vpmaddubsw(q, a) minus vpmaddubsw(1, a), as the ternary tiles do.
//
// Float part, per (row, column) pair: each activation block's 8 int32 lanes are converted and
// multiplied into the weight block's 8-lane sum by d_a (FMA), and that sum is scaled by d_w into
// the pair's accumulator (FMA), reduced by hsum_f32x8 at the end: ggml's order per lane
// (quant/quant_q1q2_ref.c), the same in every tile shape, so gemm equals vec_dot bit for bit.
#include "quant/fp16.h"
#include "quant/simd_avx2.h"

#define MINT_LEVEL_NAME(name) name##_avx2

// +1 where bit e of the 32 bits at p is set, -1 where it is clear, byte e (e < 32).
MINT_AVX2_INLINE __m256i q1_signs(const uint8_t *p) {
    const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202,
                                           0x0101010101010101, 0x0000000000000000);
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201);
    const __m256i x = _mm256_shuffle_epi8(_mm256_set1_epi32((int)load_u32(p)), shuf);
    const __m256i clear = _mm256_cmpeq_epi8(_mm256_and_si256(x, bit), _mm256_setzero_si256());
    return _mm256_or_si256(clear, _mm256_set1_epi8(1));
}

// The 32 codes (0..3) of the 8 bytes at p, byte e = element e: lane p of x >> 2p holds elements
// 4b + p in its byte b; vpermd gathers elements 0..15 in the low half (as four 4-byte rows of
// one shift each) and vpshufb transposes each half's 4 x 4 bytes into element order.
MINT_AVX2_INLINE __m256i q2_codes(const uint8_t *p) {
    long long v;
    memcpy(&v, p, sizeof v);
    __m256i x = _mm256_srlv_epi64(_mm256_set1_epi64x(v), _mm256_set_epi64x(6, 4, 2, 0));
    x = _mm256_and_si256(x, _mm256_set1_epi8(3));
    x = _mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
    const __m256i t = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 0, 4,
                                       8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    return _mm256_shuffle_epi8(x, t);
}

// R x C tile of Q1_0 (q1) or Q2_0 rows against Q8_0 rows.
MINT_AVX2_INLINE void q1q2_tile(const int R, const int C, bool q1, const mint_tile *t) {
    const int qk = q1 ? 128 : 64, sub = qk / MINT_QK;
    const size_t bytes = q1 ? sizeof(mint_block_q1_0) : sizeof(mint_block_q2_0);
    const __m256i ones = _mm256_set1_epi16(1), one8 = _mm256_set1_epi8(1);
    __m256 acc[MINT_TILE_RMAX][MINT_TILE_CMAX];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) acc[r][c] = _mm256_setzero_ps();
    for (int64_t i = 0; i < t->n / qk; i++) {
        prefetch_next_rows(R, C, t, (size_t)i * bytes);
        __m256 blk[MINT_TILE_RMAX][MINT_TILE_CMAX]; // the weight block's sum per pair
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) blk[r][c] = _mm256_setzero_ps();
#pragma GCC unroll 4
        for (int k = 0; k < sub; k++) {
            __m256i av[MINT_TILE_CMAX], asum[MINT_TILE_CMAX];
            __m256 da[MINT_TILE_CMAX];
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) {
                const mint_block_q8_0 *a =
                    (const mint_block_q8_0 *)(t->a + c * t->a_stride) + i * sub + k;
                av[c] = _mm256_loadu_si256((const __m256i *)a->qs);
                da[c] = bcast_f16(&a->d);
                if (!q1) asum[c] = _mm256_maddubs_epi16(one8, av[c]);
            }
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const uint8_t *w = t->w + r * t->w_stride + i * bytes + 2; // the codes, after d
                const __m256i q = q1 ? q1_signs(w + 4 * k) : q2_codes(w + 8 * k);
#pragma GCC unroll 8
                for (int c = 0; c < C; c++) {
                    const __m256i p =
                        q1 ? _mm256_maddubs_epi16(one8, _mm256_sign_epi8(av[c], q))
                           : _mm256_sub_epi16(_mm256_maddubs_epi16(q, av[c]), asum[c]);
                    const __m256 s = _mm256_cvtepi32_ps(_mm256_madd_epi16(p, ones));
                    blk[r][c] = _mm256_fmadd_ps(da[c], s, blk[r][c]);
                }
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const __m256 dw = bcast_f16((const uint16_t *)(t->w + r * t->w_stride + i * bytes));
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) acc[r][c] = _mm256_fmadd_ps(dw, blk[r][c], acc[r][c]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = hsum_f32x8(acc[r][c]);
}

MINT_AVX2_INLINE void q1_0_tile(const int R, const int C, const mint_tile *t) {
    q1q2_tile(R, C, true, t);
}
MINT_AVX2_INLINE void q2_0_tile(const int R, const int C, const mint_tile *t) {
    q1q2_tile(R, C, false, t);
}

MINT_TILE_KERNELS(q1_0_q8_0, q1_0_tile, 1, 8, 4)
MINT_TILE_KERNELS(q2_0_q8_0, q2_0_tile, 1, 8, 4)
