// dot_iq1_avx2.c - IQ1_S . Q8_K and IQ1_M . Q8_K dot products and gemm tiles for AVX2 (Haswell,
// Zen 1 and later), equal to the reference (quant/quant_iq1_ref.c) bit for bit.
//
// Element j of a group of 8 is scale * (grid[index][j] + delta) with delta = +-1/8, so 8 times
// it, v = 8 * grid + sign, is an odd integer in -9..9. Per sub-block of 32 the 4 lattice points
// are loaded as one 256-bit vector (one 64-bit load each; grid bytes are -1, 0, 1), vpsignb of
// the constant 8 makes 8 * grid and one add the group signs. vpmaddubsw multiplies |v| by the
// activation carrying v's sign (never 0: v is odd), pairs into int16 (at most 2 * 9 * 127), and
// vpmaddwd by the multiplier 2s + 1 (per 32 for IQ1_S, per 16-element 128-bit half for IQ1_M)
// widens to int32. So a super-block's lanes hold exactly
//   isum = sum (2s + 1) * sum v * a = 8 * sumi + sumi1
// of the reference's two integer sums (below 2^22), and isum / 8 is exactly the reference's
// sumi + sumi1 / 8. The pair's scalar f32 accumulator then adds (d_w * d_a) * (isum * 0.125)
// per super-block, in order, as the reference does.
//
// Tiles as the K-quants (quant/dot_k_avx2.c): 1 row x 8 columns for a batch, 4 x 1 for a token.
#include "quant/fp16.h"
#include "quant/iq1.h"
#include "quant/simd_avx2.h"

#define MINT_LEVEL_NAME(name) name##_avx2

// The sum of the 8 int32 lanes (exact).
MINT_AVX2_INLINE int hsum_i32x8(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

// 8 bytes of +1 or -1 for a group's delta sign.
static const uint64_t iq1_sign8[2] = {0x0101010101010101ull, 0xFFFFFFFFFFFFFFFFull};

// The 4 lattice points i0..i3 as 32 bytes 8 * grid + sign, with per-group sign bytes s.
MINT_AVX2_INLINE __m256i iq1_values(int i0, int i1, int i2, int i3, __m256i s) {
    const __m256i g =
        _mm256_set_epi64x((long long)mint_iq1s_grid[i3], (long long)mint_iq1s_grid[i2],
                          (long long)mint_iq1s_grid[i1], (long long)mint_iq1s_grid[i0]);
    return _mm256_add_epi8(_mm256_sign_epi8(_mm256_set1_epi8(8), g), s);
}

// Sub-block k (32 elements) of an IQ1_S super-block: values and multipliers (int16 lanes).
MINT_AVX2_INLINE void iq1s_sub(const mint_block_iq1_s *b, int k, __m256i *v, __m256i *ls) {
    const unsigned qh = b->qh[k];
    const uint8_t *qs = b->qs + 4 * k;
    const __m256i s = _mm256_set1_epi64x((long long)iq1_sign8[qh >> 15]);
    *v = iq1_values(qs[0] | (qh << 8 & 0x700), qs[1] | (qh << 5 & 0x700), qs[2] | (qh << 2 & 0x700),
                    qs[3] | (qh >> 1 & 0x700), s);
    *ls = _mm256_set1_epi16((short)(2 * (qh >> 12 & 7) + 1));
}

// Sub-block k (32 elements, halves 2k and 2k + 1) of an IQ1_M super-block.
MINT_AVX2_INLINE void iq1m_sub(const mint_block_iq1_m *b, int k, __m256i *v, __m256i *ls) {
    const unsigned h0 = b->qh[2 * k], h1 = b->qh[2 * k + 1];
    const uint8_t *qs = b->qs + 4 * k;
    const __m256i s =
        _mm256_set_epi64x((long long)iq1_sign8[h1 >> 7], (long long)iq1_sign8[h1 >> 3 & 1],
                          (long long)iq1_sign8[h0 >> 7], (long long)iq1_sign8[h0 >> 3 & 1]);
    *v = iq1_values(qs[0] | (h0 << 8 & 0x700), qs[1] | (h0 << 4 & 0x700), qs[2] | (h1 << 8 & 0x700),
                    qs[3] | (h1 << 4 & 0x700), s);
    const unsigned w = mint_iq1m_word(b, k / 2) >> 6 * (k % 2);
    *ls = _mm256_set_m128i(_mm_set1_epi16((short)(2 * (w >> 3 & 7) + 1)),
                           _mm_set1_epi16((short)(2 * (w & 7) + 1)));
}

// R x C tile of IQ1_S (M = 0) or IQ1_M (M = 1) rows against Q8_K rows (see the file comment).
MINT_AVX2_INLINE void iq1_tile(const int M, const int R, const int C, const mint_tile *t) {
    const size_t bytes = M ? sizeof(mint_block_iq1_m) : sizeof(mint_block_iq1_s);
    float acc[MINT_TILE_RMAX][MINT_TILE_CMAX];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) acc[r][c] = 0.0f;
    for (int64_t i = 0; i < t->n / MINT_QK_K; i++) {
        prefetch_next_rows(R, C, t, (size_t)i * bytes);
        const uint8_t *w[MINT_TILE_RMAX];
        float dw[MINT_TILE_RMAX];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            w[r] = t->w + r * t->w_stride + (size_t)i * bytes;
            dw[r] = mint_f16_to_f32(M ? mint_iq1m_d((const mint_block_iq1_m *)(const void *)w[r])
                                      : ((const mint_block_iq1_s *)(const void *)w[r])->d);
        }
        const mint_block_q8_K *a[MINT_TILE_CMAX];
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) a[c] = (const mint_block_q8_K *)(t->a + c * t->a_stride) + i;

        __m256i isum[MINT_TILE_RMAX][MINT_TILE_CMAX];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) isum[r][c] = _mm256_setzero_si256();
        for (int k = 0; k < 8; k++) {
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                __m256i v, ls;
                if (M)
                    iq1m_sub((const mint_block_iq1_m *)(const void *)w[r], k, &v, &ls);
                else
                    iq1s_sub((const mint_block_iq1_s *)(const void *)w[r], k, &v, &ls);
                const __m256i u = _mm256_abs_epi8(v);
#pragma GCC unroll 8
                for (int c = 0; c < C; c++) {
                    const __m256i av = _mm256_loadu_si256((const __m256i *)(a[c]->qs + 32 * k));
                    const __m256i p = _mm256_maddubs_epi16(u, _mm256_sign_epi8(av, v));
                    isum[r][c] = _mm256_add_epi32(isum[r][c], _mm256_madd_epi16(p, ls));
                }
            }
        }
#pragma GCC unroll 8
        for (int c = 0; c < C; c++)
#pragma GCC unroll 4
            for (int r = 0; r < R; r++)
                acc[r][c] += dw[r] * a[c]->d * ((float)hsum_i32x8(isum[r][c]) * 0.125f);
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = acc[r][c];
}

MINT_AVX2_INLINE void iq1_s_tile(const int R, const int C, const mint_tile *t) {
    iq1_tile(0, R, C, t);
}
MINT_AVX2_INLINE void iq1_m_tile(const int R, const int C, const mint_tile *t) {
    iq1_tile(1, R, C, t);
}

MINT_TILE_KERNELS(iq1_s_q8_K, iq1_s_tile, 1, 8, 4)
MINT_TILE_KERNELS(iq1_m_q8_K, iq1_m_tile, 1, 8, 4)
