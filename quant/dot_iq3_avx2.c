// dot_iq3_avx2.c - IQ3_XXS . Q8_K and IQ3_S . Q8_K dot products and gemm tiles for AVX2 (Haswell,
// Zen 1 and later); the formats are in quant/iq3.h and docs/formats.md 2.7.
//
// A sub-block of 32 elements is 8 grid points of 4 magnitudes: 8 scalar loads of the grid
// (mint_iq3xxs_grid / mint_iq3s_grid) assemble its 32 unsigned magnitudes (at most 62) in one
// register. Its 32 sign bits become a byte mask (each byte picks its bit out of a broadcast of the
// 4 sign bytes), and vpsignb puts the signs on the activations (Q8_K activations are never -128,
// so the negation cannot overflow). vpmaddubsw multiplies magnitudes by signed activations into
// int16 pairs (at most 2 * 62 * 127 = 15748, no saturation) and vpmaddwd against the sub-block's
// odd scale 2 ls + 1 widens them to int32 with the scale applied. The super-block's integer sum
// is exact (below 2^31), so one horizontal add gives the reference's isum, and the per
// super-block f32 step, (d_w * d_a) * isum added in order (and IQ3_XXS's final 0.25), is the
// reference's own: vec_dot and every gemm element equal quant/quant_iq3_ref.c's bit for bit.
//
// Tiles as the K-quants (quant/dot_k_avx2.c): 1 row x 8 columns for a batch, 4 x 1 for a token.
#include "quant/fp16.h"
#include "quant/iq3.h"
#include "quant/simd_avx2.h"

#define MINT_LEVEL_NAME(name) name##_avx2

// Byte e of the result is 0xFF when bit e of the 32 sign bits is set, else 0.
MINT_AVX2_INLINE __m256i iq3_sign_mask(uint32_t bits) {
    const __m256i spread = _mm256_set_epi64x(0x0303030303030303ll, 0x0202020202020202ll,
                                             0x0101010101010101ll, 0x0000000000000000ll);
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    const __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)bits), spread);
    return _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
}

// The 32 magnitudes of 8 grid points.
MINT_AVX2_INLINE __m256i iq3_points(const uint32_t *grid, const int idx[8]) {
    return _mm256_set_epi32((int)grid[idx[7]], (int)grid[idx[6]], (int)grid[idx[5]],
                            (int)grid[idx[4]], (int)grid[idx[3]], (int)grid[idx[2]],
                            (int)grid[idx[1]], (int)grid[idx[0]]);
}

// Sum of the 8 int32 lanes (exact).
MINT_AVX2_INLINE int32_t iq3_hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

// One sub-block ib of a weight row: its magnitudes, its sign mask with the low bit set (the
// vpsignb operand: -1 where negative, +1 elsewhere) and its odd scale.
typedef struct iq3_sub {
    __m256i mag;  // [32] u8 magnitudes
    __m256i sign; // [32] i8 -1 / +1
    __m256i ls;   // [16] i16 2 ls + 1
} iq3_sub;

MINT_AVX2_INLINE iq3_sub iq3_xxs_sub(const mint_block_iq3_xxs *b, int ib) {
    const uint32_t aux = mint_iq3xxs_aux(b, ib);
    int idx[8];
#pragma GCC unroll 8
    for (int g = 0; g < 8; g++) idx[g] = b->qs[8 * ib + g];
    uint32_t bits = 0;
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) bits |= (uint32_t)mint_iq3xxs_signs(aux >> 7 * k) << 8 * k;
    return (iq3_sub){iq3_points(mint_iq3xxs_grid, idx),
                     _mm256_or_si256(iq3_sign_mask(bits), _mm256_set1_epi8(1)),
                     _mm256_set1_epi16((int16_t)(2 * (aux >> 28) + 1))};
}

MINT_AVX2_INLINE iq3_sub iq3_s_sub(const mint_block_iq3_s *b, int ib) {
    int idx[8];
#pragma GCC unroll 8
    for (int g = 0; g < 8; g++) idx[g] = mint_iq3s_index(b, 8 * ib + g);
    return (iq3_sub){
        iq3_points(mint_iq3s_grid, idx),
        _mm256_or_si256(iq3_sign_mask(load_u32(b->signs + 4 * ib)), _mm256_set1_epi8(1)),
        _mm256_set1_epi16((int16_t)(2 * mint_iq3s_scale(b, ib) + 1))};
}

// R x C tile of IQ3_XXS (xxs) or IQ3_S rows against Q8_K rows (see the file comment).
MINT_AVX2_INLINE void iq3_tile(const int R, const int C, const mint_tile *t, const bool xxs) {
    const size_t bytes = xxs ? sizeof(mint_block_iq3_xxs) : sizeof(mint_block_iq3_s);
    float sum[MINT_TILE_RMAX][MINT_TILE_CMAX];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) sum[r][c] = 0.0f;
    for (int64_t i = 0; i < t->n / MINT_QK_K; i++) {
        for (size_t off = 0; off < bytes; off += 64)
            prefetch_next_rows(R, C, t, (size_t)i * bytes + off);
        const uint8_t *w[MINT_TILE_RMAX];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) w[r] = t->w + r * t->w_stride + (size_t)i * bytes;
        const mint_block_q8_K *a[MINT_TILE_CMAX];
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) a[c] = (const mint_block_q8_K *)(t->a + c * t->a_stride) + i;
        __m256i isum[MINT_TILE_RMAX][MINT_TILE_CMAX];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) isum[r][c] = _mm256_setzero_si256();
        for (int ib = 0; ib < 8; ib++) {
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const iq3_sub s = xxs ? iq3_xxs_sub((const mint_block_iq3_xxs *)w[r], ib)
                                      : iq3_s_sub((const mint_block_iq3_s *)w[r], ib);
#pragma GCC unroll 8
                for (int c = 0; c < C; c++) {
                    const __m256i av = _mm256_loadu_si256((const __m256i *)(a[c]->qs + 32 * ib));
                    const __m256i p = _mm256_maddubs_epi16(s.mag, _mm256_sign_epi8(av, s.sign));
                    isum[r][c] = _mm256_add_epi32(isum[r][c], _mm256_madd_epi16(p, s.ls));
                }
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            uint16_t dw;
            memcpy(&dw, w[r], sizeof dw);
            const float df = mint_f16_to_f32(dw);
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) {
                const float d = df * a[c]->d;
                const float prod = d * (float)iq3_hsum_i32(isum[r][c]);
                sum[r][c] = sum[r][c] + prod;
            }
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = xxs ? 0.25f * sum[r][c] : sum[r][c];
}

MINT_AVX2_INLINE void iq3_xxs_tile(const int R, const int C, const mint_tile *t) {
    iq3_tile(R, C, t, true);
}
MINT_AVX2_INLINE void iq3_s_tile(const int R, const int C, const mint_tile *t) {
    iq3_tile(R, C, t, false);
}

MINT_TILE_KERNELS(iq3_xxs_q8_K, iq3_xxs_tile, 1, 8, 4)
MINT_TILE_KERNELS(iq3_s_q8_K, iq3_s_tile, 1, 8, 4)
