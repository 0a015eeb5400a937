// dot_iq1_neon.h - IQ1_S . Q8_K and IQ1_M . Q8_K dot products and gemm tiles for aarch64, equal
// to the reference (quant/quant_iq1_ref.c) bit for bit.
//
// Not an ordinary header: it holds the kernels' bodies and is compiled twice, by
// quant/dot_iq1_neon.c (baseline NEON) and quant/dot_iq1_neondot.c (dotprod), which differ only in
// mint_dot_s8 and the MINT_LEVEL_NAME suffix (see quant/kernels.h).
//
// As quant/dot_iq1_avx2.c: 8 times an element, v = 8 * grid + sign, is an odd int8 in -9..9.
// Per 16 elements two lattice points (one 64-bit load each) shifted left by 3 plus the groups'
// sign bytes make 16 values, one dot step with the activations gives their sum in an int32x4,
// and MLA by the multiplier 2s + 1 (per 32 for IQ1_S, per 16 for IQ1_M) adds it to the pair's
// int32x4. The lanes' total is exactly 8 * sumi + sumi1 of the reference (below 2^22), so
// (d_w * d_a) * (total * 0.125) per super-block, added in order, is the reference's f32 sum.
//
// Tiles as the K-quants (quant/dot_k_neon.h): up to 4 rows x 2 columns.
#include "quant/fp16.h"
#include "quant/iq1.h"
#include "quant/simd_neon.h"

// 8 bytes of +1 or -1 for a group's delta sign.
static const uint64_t iq1_sign8[2] = {0x0101010101010101ull, 0xFFFFFFFFFFFFFFFFull};

// Lattice points i0, i1 as 16 values 8 * grid + sign (s0, s1: the groups' sign bits).
MINT_NEON_INLINE int8x16_t iq1_values(int i0, int i1, unsigned s0, unsigned s1) {
    const int8x16_t g = vcombine_s8(vcreate_s8(mint_iq1s_grid[i0]), vcreate_s8(mint_iq1s_grid[i1]));
    const int8x16_t s = vcombine_s8(vcreate_s8(iq1_sign8[s0]), vcreate_s8(iq1_sign8[s1]));
    return vaddq_s8(vshlq_n_s8(g, 3), s);
}

// Sub-block k (32 elements) of an IQ1_S super-block: two 16-value halves, one multiplier.
MINT_NEON_INLINE void iq1s_sub(const mint_block_iq1_s *b, int k, int8x16_t v[2], int ls[2]) {
    const unsigned qh = b->qh[k], s = qh >> 15;
    const uint8_t *qs = b->qs + 4 * k;
    v[0] = iq1_values(qs[0] | (qh << 8 & 0x700), qs[1] | (qh << 5 & 0x700), s, s);
    v[1] = iq1_values(qs[2] | (qh << 2 & 0x700), qs[3] | (qh >> 1 & 0x700), s, s);
    ls[0] = ls[1] = 2 * (qh >> 12 & 7) + 1;
}

// Sub-block k (32 elements, halves 2k and 2k + 1) of an IQ1_M super-block.
MINT_NEON_INLINE void iq1m_sub(const mint_block_iq1_m *b, int k, int8x16_t v[2], int ls[2]) {
    const unsigned h0 = b->qh[2 * k], h1 = b->qh[2 * k + 1];
    const uint8_t *qs = b->qs + 4 * k;
    v[0] = iq1_values(qs[0] | (h0 << 8 & 0x700), qs[1] | (h0 << 4 & 0x700), h0 >> 3 & 1, h0 >> 7);
    v[1] = iq1_values(qs[2] | (h1 << 8 & 0x700), qs[3] | (h1 << 4 & 0x700), h1 >> 3 & 1, h1 >> 7);
    const unsigned w = mint_iq1m_word(b, k / 2) >> 6 * (k % 2);
    ls[0] = 2 * (w & 7) + 1;
    ls[1] = 2 * (w >> 3 & 7) + 1;
}

// R x C tile of IQ1_S (M = 0) or IQ1_M (M = 1) rows against Q8_K rows (see the file comment).
MINT_NEON_INLINE void iq1_tile(const int M, const int R, const int C, const mint_tile *t) {
    const size_t bytes = M ? sizeof(mint_block_iq1_m) : sizeof(mint_block_iq1_s);
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
        for (int k = 0; k < 8; k++) {
            int8x16_t a0[2], a1[2];
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) {
                a0[c] = vld1q_s8(a[c]->qs + 32 * k);
                a1[c] = vld1q_s8(a[c]->qs + 32 * k + 16);
            }
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                int8x16_t v[2];
                int ls[2];
                if (M)
                    iq1m_sub((const mint_block_iq1_m *)(const void *)w[r], k, v, ls);
                else
                    iq1s_sub((const mint_block_iq1_s *)(const void *)w[r], k, v, ls);
#pragma GCC unroll 2
                for (int c = 0; c < C; c++) {
                    isum[r][c] =
                        vmlaq_n_s32(isum[r][c], mint_dot_s8(vdupq_n_s32(0), v[0], a0[c]), ls[0]);
                    isum[r][c] =
                        vmlaq_n_s32(isum[r][c], mint_dot_s8(vdupq_n_s32(0), v[1], a1[c]), ls[1]);
                }
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const float dw =
                mint_f16_to_f32(M ? mint_iq1m_d((const mint_block_iq1_m *)(const void *)w[r])
                                  : ((const mint_block_iq1_s *)(const void *)w[r])->d);
#pragma GCC unroll 2
            for (int c = 0; c < C; c++)
                sum[r][c] += dw * a[c]->d * ((float)vaddvq_s32(isum[r][c]) * 0.125f);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = sum[r][c];
}

MINT_NEON_INLINE void iq1_s_tile(const int R, const int C, const mint_tile *t) {
    iq1_tile(0, R, C, t);
}
MINT_NEON_INLINE void iq1_m_tile(const int R, const int C, const mint_tile *t) {
    iq1_tile(1, R, C, t);
}

MINT_TILE_KERNELS(iq1_s_q8_K, iq1_s_tile, 4, 2, 4)
MINT_TILE_KERNELS(iq1_m_q8_K, iq1_m_tile, 4, 2, 4)
