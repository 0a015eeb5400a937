// dot_iq4_avx2.c - IQ4_XS . Q8_K dot products and gemm tiles for AVX2 (Haswell, Zen 1 and later).
// IQ4_NL . Q8_0 is a 32-element block type and lives with the others in quant/dot_legacy_avx2.c.
//
// A super-block is 8 groups of 32 elements. Each group's 16 nibble bytes become its 32 table
// indices (nibbles32) and one vpshufb of mint_iq4nl_table (quant/unpack.h) in both 128-bit halves
// makes them the signed levels -127..113. vpmaddubsw needs an unsigned operand, so it multiplies
// |level| by the activation carrying the level's sign (vpsignb; Q8_K activations are never -128,
// so the negation cannot overflow): adjacent pairs into int16, at most 2 * 127 * 127 = 32258, no
// saturation. vpmaddwd against the group's 6-bit scale (ls - 32, broadcast as int16) widens to
// int32 and applies the scale in one instruction, so the super-block's
//   isum = sum over groups of (ls - 32) * sum(level * a)
// accumulates exactly in 8 int32 lanes (each below 8 * 2 * 32258 * 32 < 2^24, so its conversion
// to f32 is exact too). Per super-block the pair's f32 accumulator then gets (d_w * d_a) * isum,
// one FMA; the reference (quant/quant_iq4_ref.c) rounds once per group instead, so the two differ
// by f32 rounding only (tests/test_kernels.c budget).
//
// Tiles as the K-quants (quant/dot_k_avx2.c): 1 row x 8 columns for a batch, 4 x 1 for a token.
#include "quant/simd_avx2.h"
#include "quant/unpack.h"

#define MINT_LEVEL_NAME(name) name##_avx2

// The 8 group scales of a super-block, ls - 32 in -32..31: BMI2's pdep spreads the 8 nibbles of
// scales_l (group g's in nibble g) into the low halves of 8 bytes and the 8 bit pairs of
// scales_h (group g's at bits 2g) into bits 4..5 of the same bytes, so byte g is ls(g).
MINT_AVX2_INLINE void iq4_xs_scales(const mint_block_iq4_xs *b, int16_t s[8]) {
    const uint64_t ls = _pdep_u64(load_u32(b->scales_l), 0x0F0F0F0F0F0F0F0Full) |
                        _pdep_u64(b->scales_h, 0x3030303030303030ull);
#pragma GCC unroll 8
    for (int g = 0; g < 8; g++) s[g] = (int16_t)((int)(ls >> 8 * g & 0xFF) - 32);
}

// R x C tile of IQ4_XS rows against Q8_K rows (see the file comment).
MINT_AVX2_INLINE void iq4_xs_tile(const int R, const int C, const mint_tile *t) {
    const size_t bytes = sizeof(mint_block_iq4_xs);
    const __m256i table = _mm256_broadcastsi128_si256(
        _mm_loadu_si128((const __m128i *)(const void *)mint_iq4nl_table()));
    __m256 acc[MINT_TILE_RMAX][MINT_TILE_CMAX];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) acc[r][c] = _mm256_setzero_ps();
    for (int64_t i = 0; i < t->n / MINT_QK_K; i++) {
        for (size_t off = 0; off < bytes; off += 64)
            prefetch_next_rows(R, C, t, (size_t)i * bytes + off);
        const mint_block_iq4_xs *w[MINT_TILE_RMAX];
        int16_t scale[MINT_TILE_RMAX][8];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            w[r] = (const mint_block_iq4_xs *)(t->w + r * t->w_stride) + i;
            iq4_xs_scales(w[r], scale[r]);
        }
        const mint_block_q8_K *a[MINT_TILE_CMAX];
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) a[c] = (const mint_block_q8_K *)(t->a + c * t->a_stride) + i;

        __m256i isum[MINT_TILE_RMAX][MINT_TILE_CMAX];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) isum[r][c] = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int g = 0; g < 8; g++) {
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const __m256i lv = _mm256_shuffle_epi8(table, nibbles32(w[r]->qs + 16 * g));
                const __m256i u = _mm256_abs_epi8(lv);
                const __m256i sc = _mm256_set1_epi16(scale[r][g]);
#pragma GCC unroll 8
                for (int c = 0; c < C; c++) {
                    const __m256i av = _mm256_loadu_si256((const __m256i *)(a[c]->qs + 32 * g));
                    const __m256i p = _mm256_maddubs_epi16(u, _mm256_sign_epi8(av, lv));
                    isum[r][c] = _mm256_add_epi32(isum[r][c], _mm256_madd_epi16(p, sc));
                }
            }
        }
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) {
            const __m256 da = _mm256_set1_ps(a[c]->d);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++)
                acc[r][c] = _mm256_fmadd_ps(_mm256_mul_ps(bcast_f16(&w[r]->d), da),
                                            _mm256_cvtepi32_ps(isum[r][c]), acc[r][c]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = hsum_f32x8(acc[r][c]);
}

MINT_TILE_KERNELS(iq4_xs_q8_K, iq4_xs_tile, 1, 8, 4)
