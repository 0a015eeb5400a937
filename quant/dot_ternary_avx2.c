// dot_ternary_avx2.c - dot products and gemm tiles of the ternary types TQ1_0 and TQ2_0 with Q8_K
// activations, for AVX2 (Haswell, Zen 1 and later).
//
// A weight is trit - 1 with trit in {0, 1, 2}, so per group of 32
//   sum((trit - 1) * a) = sum(trit * a) - sum(a)
// where vpmaddubsw multiplies the 32 unsigned trits with the 32 activation bytes (at most
// 2 * 2 * 128 per int16 pair) and the same instruction against ones gives the pairs of sum(a),
// subtracted in int16 before vpmaddwd widens to int32. The subtraction is per lane, not once per
// super-block from Q8_K's bsums: most trits of a real row are 1 (weight 0), so sum(trit * a)
// and sum(a) are large and nearly equal, and each lane must hold only its own elements' small
// difference for the float work after it to round as little as the reference. The pair's
// 8-lane f32 accumulator gets (d_w * d_a) * isum once per super-block (one FMA), reduced by
// hsum_f32x8 at the end, as the K-quants' tiles do.
//
// TQ2_0's trits are Q2_K's 2-bit fields (one shift and mask per group). TQ1_0's are base-3
// digits: trit t of a byte b is ((b * 3^t mod 256) * 3) >> 8. AVX2 has no byte multiply, so
// the even and odd bytes of each 16-bit lane are multiplied apart (the odd one in the high
// byte, where the product's overflow falls off the lane), and "* 3 >> 8" is vpmulhuw of the
// byte placed in the high half by 3.
#include "quant/simd_avx2.h"

#define MINT_LEVEL_NAME(name) name##_avx2

// The trits of 32 bytes, each byte b giving ((b * p mod 256) * 3) >> 8 with p the 16-bit lane's
// power of 3 (the same for both bytes of a lane).
MINT_AVX2_INLINE __m256i tq1_trits(__m256i b, __m256i pow) {
    const __m256i lo_mask = _mm256_set1_epi16(0x00FF), three = _mm256_set1_epi16(3);
    const __m256i even =
        _mm256_slli_epi16(_mm256_mullo_epi16(_mm256_and_si256(b, lo_mask), pow), 8);
    const __m256i odd = _mm256_mullo_epi16(_mm256_andnot_si256(lo_mask, b), pow);
    const __m256i t_even = _mm256_mulhi_epu16(even, three);
    const __m256i t_odd = _mm256_mulhi_epu16(_mm256_andnot_si256(lo_mask, odd), three);
    return _mm256_or_si256(t_even, _mm256_slli_epi16(t_odd, 8));
}

// The 32 trits of group g (elements 32g..32g+31) of a TQ1_0 super-block, in element order
// (quant/blocks.h): groups 0..4 are trit g of qs[0..31]; groups 5, 6 take trits 2(g-5) and
// 2(g-5)+1 of qs[32..47] in their two halves; group 7 takes trit 4 of qs[32..47], then the 16
// elements of qh: element 240 + 4k + j is trit k of qh[j].
MINT_AVX2_INLINE __m256i tq1_levels(const mint_block_tq1_0 *b, int g) {
    static const short pow3[5] = {1, 3, 9, 27, 81};
    if (g < 5) {
        const __m256i raw = _mm256_loadu_si256((const __m256i *)b->qs);
        return tq1_trits(raw, _mm256_set1_epi16(pow3[g]));
    }
    const __m128i tail = _mm_loadu_si128((const __m128i *)(b->qs + 32));
    if (g < 7) {
        const int t = 2 * (g - 5);
        return tq1_trits(_mm256_set_m128i(tail, tail),
                         _mm256_set_m128i(_mm_set1_epi16(pow3[t + 1]), _mm_set1_epi16(pow3[t])));
    }
    int32_t qh;
    memcpy(&qh, b->qh, sizeof qh);
    const __m128i h = _mm_set1_epi32(qh);
    return tq1_trits(_mm256_set_m128i(h, tail),
                     _mm256_set_m128i(_mm_set_epi16(27, 27, 9, 9, 3, 3, 1, 1), _mm_set1_epi16(81)));
}

// The 32 trits of group g of a TQ2_0 super-block: element 128h + 32l + m in bits 2l of
// qs[32h + m].
MINT_AVX2_INLINE __m256i tq2_levels(const mint_block_tq2_0 *b, int g) {
    const __m256i raw = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * (g / 4)));
    return _mm256_and_si256(_mm256_srli_epi16(raw, 2 * (g % 4)), _mm256_set1_epi8(3));
}

// R x C tile of ternary rows (TQ1_0 when tq1, else TQ2_0) against Q8_K rows.
MINT_AVX2_INLINE void ternary_tile(const int R, const int C, bool tq1, const mint_tile *t) {
    const size_t bytes = tq1 ? sizeof(mint_block_tq1_0) : sizeof(mint_block_tq2_0);
    const __m256i ones = _mm256_set1_epi16(1), one8 = _mm256_set1_epi8(1);
    __m256 acc[MINT_TILE_RMAX][MINT_TILE_CMAX];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) acc[r][c] = _mm256_setzero_ps();
    for (int64_t i = 0; i < t->n / MINT_QK_K; i++) {
        for (size_t off = 0; off < bytes; off += 64)
            prefetch_next_rows(R, C, t, (size_t)i * bytes + off);
        const mint_block_q8_K *a[MINT_TILE_CMAX];
        __m256i isum[MINT_TILE_RMAX][MINT_TILE_CMAX];
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) {
            a[c] = (const mint_block_q8_K *)(t->a + c * t->a_stride) + i;
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) isum[r][c] = _mm256_setzero_si256();
        }
#pragma GCC unroll 8
        for (int g = 0; g < 8; g++) {
            __m256i av[MINT_TILE_CMAX], asum[MINT_TILE_CMAX]; // the group's bytes, their pair sums
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) {
                av[c] = _mm256_loadu_si256((const __m256i *)(a[c]->qs + 32 * g));
                asum[c] = _mm256_maddubs_epi16(one8, av[c]);
            }
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const uint8_t *blk = t->w + r * t->w_stride + i * bytes;
                const __m256i q = tq1 ? tq1_levels((const mint_block_tq1_0 *)blk, g)
                                      : tq2_levels((const mint_block_tq2_0 *)blk, g);
#pragma GCC unroll 8
                for (int c = 0; c < C; c++) {
                    const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(q, av[c]), asum[c]);
                    isum[r][c] = _mm256_add_epi32(isum[r][c], _mm256_madd_epi16(p, ones));
                }
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const uint8_t *blk = t->w + r * t->w_stride + i * bytes;
            const __m256 dw = bcast_f16(tq1 ? &((const mint_block_tq1_0 *)blk)->d
                                            : &((const mint_block_tq2_0 *)blk)->d);
#pragma GCC unroll 8
            for (int c = 0; c < C; c++)
                acc[r][c] = _mm256_fmadd_ps(_mm256_mul_ps(dw, _mm256_set1_ps(a[c]->d)),
                                            _mm256_cvtepi32_ps(isum[r][c]), acc[r][c]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = hsum_f32x8(acc[r][c]);
}

MINT_AVX2_INLINE void tq1_0_tile(const int R, const int C, const mint_tile *t) {
    ternary_tile(R, C, true, t);
}
MINT_AVX2_INLINE void tq2_0_tile(const int R, const int C, const mint_tile *t) {
    ternary_tile(R, C, false, t);
}

MINT_TILE_KERNELS(tq1_0_q8_K, tq1_0_tile, 1, 8, 4)
MINT_TILE_KERNELS(tq2_0_q8_K, tq2_0_tile, 1, 8, 4)
