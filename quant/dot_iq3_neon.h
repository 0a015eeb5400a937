// dot_iq3_neon.h - IQ3_XXS . Q8_K and IQ3_S . Q8_K dot products and gemm tiles for aarch64 (the
// formats: quant/iq3.h, docs/formats.md 2.7).
//
// Not an ordinary header: it holds the kernels' bodies and is compiled twice, by
// quant/dot_iq3_neon.c (baseline NEON) and quant/dot_iq3_neondot.c (dotprod), which differ only in
// mint_dot_s8 and the MINT_LEVEL_NAME suffix (see quant/kernels.h).
//
// Per 16 elements (4 grid points) the magnitudes (at most 62) are 4 loads of the grid; the 16
// sign bits, one sign byte per 8 elements broadcast and tested against the bit of each lane
// (CMTST), negate them as (m ^ s) - s, and one dot step with the activation bytes adds their
// products. Per 32-element sub-block MLA (by scalar) multiplies the sum by the odd scale 2 ls + 1
// into the pair's int32x4, so the super-block's isum is exact (far below 2^31), and its f32 step
// (d_w * d_a) * isum, added in order, is the reference's own (quant/quant_iq3_ref.c): vec_dot
// and gemm equal the reference bit for bit (IQ3_XXS's 0.25 at the end, as there).
//
// Tiles as the K-quants (quant/dot_k_neon.h): up to 4 rows x 2 columns.
#include "quant/iq3.h"
#include "quant/simd_neon.h"

// The 16 magnitudes of grid points idx[0..3], element 4k + j in byte 4k + j.
MINT_NEON_INLINE int8x16_t iq3_points(const uint32_t *grid, const int *idx) {
    const uint32_t p[4] = {grid[idx[0]], grid[idx[1]], grid[idx[2]], grid[idx[3]]};
    return vreinterpretq_s8_u32(vld1q_u32(p));
}

// The magnitudes m with the signs of bits 0..7 of s0 (bytes 0..7) and s1 (bytes 8..15) applied.
MINT_NEON_INLINE int8x16_t iq3_signed(int8x16_t m, unsigned s0, unsigned s1) {
    static const uint8_t bit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    const uint8x16_t b = vcombine_u8(vdup_n_u8((uint8_t)s0), vdup_n_u8((uint8_t)s1));
    const int8x16_t s = vreinterpretq_s8_u8(vtstq_u8(b, vld1q_u8(bit)));
    return vsubq_s8(veorq_s8(m, s), s);
}

// One sub-block ib of a weight row as two signed halves and its odd scale.
typedef struct iq3_sub {
    int8x16_t lo, hi; // [16] i8 signed magnitudes of elements 0..15, 16..31
    int ls;           // 2 ls + 1
} iq3_sub;

MINT_NEON_INLINE iq3_sub iq3_xxs_sub(const mint_block_iq3_xxs *b, int ib) {
    const uint32_t aux = mint_iq3xxs_aux(b, ib);
    int idx[8];
#pragma GCC unroll 8
    for (int g = 0; g < 8; g++) idx[g] = b->qs[8 * ib + g];
    unsigned s[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) s[k] = mint_iq3xxs_signs(aux >> 7 * k);
    return (iq3_sub){iq3_signed(iq3_points(mint_iq3xxs_grid, idx), s[0], s[1]),
                     iq3_signed(iq3_points(mint_iq3xxs_grid, idx + 4), s[2], s[3]),
                     (int)(2 * (aux >> 28) + 1)};
}

MINT_NEON_INLINE iq3_sub iq3_s_sub(const mint_block_iq3_s *b, int ib) {
    int idx[8];
#pragma GCC unroll 8
    for (int g = 0; g < 8; g++) idx[g] = mint_iq3s_index(b, 8 * ib + g);
    const uint8_t *s = b->signs + 4 * ib;
    return (iq3_sub){iq3_signed(iq3_points(mint_iq3s_grid, idx), s[0], s[1]),
                     iq3_signed(iq3_points(mint_iq3s_grid, idx + 4), s[2], s[3]),
                     2 * mint_iq3s_scale(b, ib) + 1};
}

// R x C tile of IQ3_XXS (xxs) or IQ3_S rows against Q8_K rows (see the file comment).
MINT_NEON_INLINE void iq3_tile(const int R, const int C, const mint_tile *t, const bool xxs) {
    const size_t bytes = xxs ? sizeof(mint_block_iq3_xxs) : sizeof(mint_block_iq3_s);
    float sum[4][2];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) sum[r][c] = 0.0f;
    for (int64_t i = 0; i < t->n / MINT_QK_K; i++) {
        const uint8_t *w[4];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) w[r] = t->w + r * t->w_stride + (size_t)i * bytes;
        const mint_block_q8_K *a[2];
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) a[c] = (const mint_block_q8_K *)(t->a + c * t->a_stride) + i;
        int32x4_t isum[4][2];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) isum[r][c] = vdupq_n_s32(0);
        for (int ib = 0; ib < 8; ib++) {
            int8x16_t a0[2], a1[2];
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) {
                a0[c] = vld1q_s8(a[c]->qs + 32 * ib);
                a1[c] = vld1q_s8(a[c]->qs + 32 * ib + 16);
            }
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const iq3_sub s = xxs ? iq3_xxs_sub((const mint_block_iq3_xxs *)w[r], ib)
                                      : iq3_s_sub((const mint_block_iq3_s *)w[r], ib);
#pragma GCC unroll 2
                for (int c = 0; c < C; c++) {
                    int32x4_t p = mint_dot_s8(vdupq_n_s32(0), s.lo, a0[c]);
                    p = mint_dot_s8(p, s.hi, a1[c]);
                    isum[r][c] = vmlaq_n_s32(isum[r][c], p, s.ls);
                }
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            uint16_t dh;
            memcpy(&dh, w[r], sizeof dh);
            const float dw = mint_neon_f16(dh);
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) {
                const float d = dw * a[c]->d;
                const float prod = d * (float)vaddvq_s32(isum[r][c]);
                sum[r][c] = sum[r][c] + prod;
            }
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = xxs ? 0.25f * sum[r][c] : sum[r][c];
}

MINT_NEON_INLINE void iq3_xxs_tile(const int R, const int C, const mint_tile *t) {
    iq3_tile(R, C, t, true);
}
MINT_NEON_INLINE void iq3_s_tile(const int R, const int C, const mint_tile *t) {
    iq3_tile(R, C, t, false);
}

MINT_TILE_KERNELS(iq3_xxs_q8_K, iq3_xxs_tile, 4, 2, 4)
MINT_TILE_KERNELS(iq3_s_q8_K, iq3_s_tile, 4, 2, 4)
