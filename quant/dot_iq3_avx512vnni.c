// dot_iq3_avx512vnni.c - IQ3_XXS . Q8_K and IQ3_S . Q8_K for AVX-512 VNNI (Cascade Lake, Ice
// Lake, Zen 4; the avx512 level without VNNI keeps quant/dot_iq3_avx2.c's). The formats are in
// quant/iq3.h and docs/formats.md 2.7.
//
// Two sub-blocks (64 elements) per step: 16 scalar grid loads assemble their magnitudes (at most
// 62, unsigned) in one register, their 64 sign bits are a mask register under which the
// activations are negated (Q8_K activations are never -128), and one vpdpbusd sums 4 products per
// int32 lane; vpmulld by the odd scale 2 ls + 1 of each half (lanes 0..7 the first sub-block,
// 8..15 the second) and an add keep the super-block's sum exact in int32. One reduction per
// super-block then gives the reference's isum, and the f32 step (d_w * d_a) * isum added in order
// (IQ3_XXS's 0.25 at the end) is the reference's own: vec_dot and gemm equal
// quant/quant_iq3_ref.c bit for bit. Only the file's layout is read (no packed form).
//
// Tiles as quant/dot_iq3_avx2.c's: 1 row x 8 columns for a batch, 4 x 1 for a token.
#include "quant/fp16.h"
#include "quant/iq3.h"
#include "quant/simd_avx512.h"
#include "quant/tiles.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define MINT_LEVEL_NAME(name) name##_avx512vnni

// The 64 magnitudes of 16 grid points.
X512_ALWAYS_INLINE __m512i iq3_points16(const uint32_t *grid, const int idx[16]) {
    return _mm512_set_epi32(
        (int)grid[idx[15]], (int)grid[idx[14]], (int)grid[idx[13]], (int)grid[idx[12]],
        (int)grid[idx[11]], (int)grid[idx[10]], (int)grid[idx[9]], (int)grid[idx[8]],
        (int)grid[idx[7]], (int)grid[idx[6]], (int)grid[idx[5]], (int)grid[idx[4]],
        (int)grid[idx[3]], (int)grid[idx[2]], (int)grid[idx[1]], (int)grid[idx[0]]);
}

// Sub-blocks ib, ib + 1 of a weight row: magnitudes, sign bits (bit e: element e negative) and
// the odd scales (lanes 0..7: ib's, 8..15: ib + 1's).
typedef struct iq3_pair {
    __m512i mag;    // [64] u8 magnitudes
    __mmask64 sign; // bit e set: element e is negative
    __m512i ls;     // [16] i32 2 ls + 1
} iq3_pair;

X512_ALWAYS_INLINE iq3_pair iq3_xxs_pair(const mint_block_iq3_xxs *b, int ib) {
    int idx[16];
    uint64_t bits = 0;
    int ls[2];
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        const uint32_t aux = mint_iq3xxs_aux(b, ib + h);
#pragma GCC unroll 8
        for (int g = 0; g < 8; g++) idx[8 * h + g] = b->qs[8 * (ib + h) + g];
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++)
            bits |= (uint64_t)mint_iq3xxs_signs(aux >> 7 * k) << (32 * h + 8 * k);
        ls[h] = (int)(2 * (aux >> 28) + 1);
    }
    const __m512i scale = _mm512_inserti64x4(_mm512_set1_epi32(ls[0]), _mm256_set1_epi32(ls[1]), 1);
    return (iq3_pair){iq3_points16(mint_iq3xxs_grid, idx), (__mmask64)bits, scale};
}

X512_ALWAYS_INLINE iq3_pair iq3_s_pair(const mint_block_iq3_s *b, int ib) {
    int idx[16];
#pragma GCC unroll 16
    for (int g = 0; g < 16; g++) idx[g] = mint_iq3s_index(b, 8 * ib + g);
    uint64_t bits;
    memcpy(&bits, b->signs + 4 * ib, sizeof bits);
    const __m512i scale =
        _mm512_inserti64x4(_mm512_set1_epi32(2 * mint_iq3s_scale(b, ib) + 1),
                           _mm256_set1_epi32(2 * mint_iq3s_scale(b, ib + 1) + 1), 1);
    return (iq3_pair){iq3_points16(mint_iq3s_grid, idx), (__mmask64)bits, scale};
}

// R x C tile of IQ3_XXS (xxs) or IQ3_S rows against Q8_K rows (see the file comment).
X512_ALWAYS_INLINE void iq3_tile(const int R, const int C, const mint_tile *t, const bool xxs) {
    const size_t bytes = xxs ? sizeof(mint_block_iq3_xxs) : sizeof(mint_block_iq3_s);
    const __m512i zero = _mm512_setzero_si512();
    float sum[MINT_TILE_RMAX][MINT_TILE_CMAX];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) sum[r][c] = 0.0f;
    for (int64_t i = 0; i < t->n / MINT_QK_K; i++) {
        const uint8_t *w[MINT_TILE_RMAX];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) w[r] = t->w + r * t->w_stride + (size_t)i * bytes;
        const mint_block_q8_K *a[MINT_TILE_CMAX];
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) a[c] = (const mint_block_q8_K *)(t->a + c * t->a_stride) + i;
        __m512i isum[MINT_TILE_RMAX][MINT_TILE_CMAX];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) isum[r][c] = zero;
        for (int ib = 0; ib < 8; ib += 2) {
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const iq3_pair s = xxs ? iq3_xxs_pair((const mint_block_iq3_xxs *)w[r], ib)
                                       : iq3_s_pair((const mint_block_iq3_s *)w[r], ib);
#pragma GCC unroll 8
                for (int c = 0; c < C; c++) {
                    const __m512i av = _mm512_loadu_si512((const void *)(a[c]->qs + 32 * ib));
                    const __m512i as = _mm512_mask_sub_epi8(av, s.sign, zero, av);
                    const __m512i p = _mm512_dpbusd_epi32(zero, s.mag, as);
                    isum[r][c] = _mm512_add_epi32(isum[r][c], _mm512_mullo_epi32(p, s.ls));
                }
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            uint16_t dh;
            memcpy(&dh, w[r], sizeof dh);
            const float dw = mint_f16_to_f32(dh);
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) {
                const float d = dw * a[c]->d;
                const float prod = d * (float)_mm512_reduce_add_epi32(isum[r][c]);
                sum[r][c] = sum[r][c] + prod;
            }
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = xxs ? 0.25f * sum[r][c] : sum[r][c];
}

X512_ALWAYS_INLINE void iq3_xxs_tile(const int R, const int C, const mint_tile *t) {
    iq3_tile(R, C, t, true);
}
X512_ALWAYS_INLINE void iq3_s_tile(const int R, const int C, const mint_tile *t) {
    iq3_tile(R, C, t, false);
}

MINT_TILE_KERNELS(iq3_xxs_q8_K, iq3_xxs_tile, 1, 8, 4)
MINT_TILE_KERNELS(iq3_s_q8_K, iq3_s_tile, 1, 8, 4)
