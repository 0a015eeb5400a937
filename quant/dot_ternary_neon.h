// dot_ternary_neon.h - dot products and gemm tiles of the ternary types TQ1_0 and TQ2_0 (weights
// -1 / 0 / +1 against Q8_K activations) for aarch64.
//
// Not an ordinary header: compiled twice, by quant/dot_ternary_neon.c (baseline NEON) and
// quant/dot_ternary_neondot.c (dotprod), which differ only in mint_dot_s8 and the
// MINT_LEVEL_NAME suffix (see quant/kernels.h).
//
// The trits are unpacked to signed bytes trit - 1 and go straight into the dot steps, so each
// super-block's sum (trit - 1) * a is exact in one int32x4 per pair; the four lanes are added
// once, and the pair's f32 sum gets the reference's own expression, sumi * (d_w * d_a): these
// kernels return the reference's bits, and gemm does too. TQ1_0's base-3 digits need a byte
// multiply, which NEON has: trit t of b is the high byte of (b * 3^t mod 256) * 3 (UMULL and a
// narrowing shift). Tiles go up to 4 rows x 2 columns, as the K-quants'.
#include "quant/fp16.h"
#include "quant/simd_neon.h"

// Trits of 16 bytes as trit - 1: ((b * p mod 256) * 3) >> 8 - 1, p the power of 3 of each byte.
MINT_NEON_INLINE int8x16_t tq1_trits(uint8x16_t b, uint8x16_t pow) {
    const uint8x16_t q = vmulq_u8(b, pow);
    const uint8x16_t three = vdupq_n_u8(3);
    const uint16x8_t lo = vmull_u8(vget_low_u8(q), vget_low_u8(three));
    const uint8x16_t t = vshrn_high_n_u16(vshrn_n_u16(lo, 8), vmull_high_u8(q, three), 8);
    return vreinterpretq_s8_u8(vsubq_u8(t, vdupq_n_u8(1)));
}

// The 16 signed weights of chunk k (elements 16k..16k+15) of a TQ1_0 super-block (quant/blocks.h:
// qs[0..31] hold elements 0..159 as trits t of bytes m (element 32t + m), qs[32..47] elements
// 160..239 (160 + 16t + m), qh[0..3] the last 16 (240 + 4t + j)).
MINT_NEON_INLINE int8x16_t tq1_chunk(const mint_block_tq1_0 *b, int k) {
    static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
    if (k < 10) return tq1_trits(vld1q_u8(b->qs + 16 * (k % 2)), vdupq_n_u8(pow3[k / 2]));
    if (k < 15) return tq1_trits(vld1q_u8(b->qs + 32), vdupq_n_u8(pow3[k - 10]));
    static const uint8_t qh_pow[16] = {1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27};
    uint32_t qh;
    memcpy(&qh, b->qh, sizeof qh);
    return tq1_trits(vreinterpretq_u8_u32(vdupq_n_u32(qh)), vld1q_u8(qh_pow));
}

// The 16 signed weights of chunk k of a TQ2_0 super-block: element 128h + 32l + m in bits 2l of
// qs[32h + m], so chunk k is bytes 32h + 16(k % 2).. shifted by 2l (h = k / 8, l = (k / 2) % 4).
MINT_NEON_INLINE int8x16_t tq2_chunk(const mint_block_tq2_0 *b, int k) {
    const uint8x16_t raw = vld1q_u8(b->qs + 32 * (k / 8) + 16 * (k % 2));
    const uint8x16_t t =
        vandq_u8(vshlq_u8(raw, vdupq_n_s8((int8_t)(-2 * ((k / 2) % 4)))), vdupq_n_u8(3));
    return vreinterpretq_s8_u8(vsubq_u8(t, vdupq_n_u8(1)));
}

MINT_NEON_INLINE void ternary_tile(const int R, const int C, bool tq1, const mint_tile *t) {
    const size_t bytes = tq1 ? sizeof(mint_block_tq1_0) : sizeof(mint_block_tq2_0);
    float sum[4][2] = {{0}};
    for (int64_t ib = 0; ib < t->n / MINT_QK_K; ib++) {
        const mint_block_q8_K *a[2];
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) a[c] = (const mint_block_q8_K *)(t->a + c * t->a_stride) + ib;
        int32x4_t isum[4][2];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) isum[r][c] = vdupq_n_s32(0);
        for (int k = 0; k < 16; k++) {
            int8x16_t av[2];
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) av[c] = vld1q_s8(a[c]->qs + 16 * k);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const uint8_t *blk = t->w + r * t->w_stride + (size_t)ib * bytes;
                const int8x16_t w = tq1 ? tq1_chunk((const mint_block_tq1_0 *)blk, k)
                                        : tq2_chunk((const mint_block_tq2_0 *)blk, k);
#pragma GCC unroll 2
                for (int c = 0; c < C; c++) isum[r][c] = mint_dot_s8(isum[r][c], w, av[c]);
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const uint8_t *blk = t->w + r * t->w_stride + (size_t)ib * bytes;
            const float dw = mint_f16_to_f32(tq1 ? ((const mint_block_tq1_0 *)blk)->d
                                                 : ((const mint_block_tq2_0 *)blk)->d);
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) sum[r][c] += (float)vaddvq_s32(isum[r][c]) * (dw * a[c]->d);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = sum[r][c];
}

MINT_NEON_INLINE void tq1_0_tile(const int R, const int C, const mint_tile *t) {
    ternary_tile(R, C, true, t);
}
MINT_NEON_INLINE void tq2_0_tile(const int R, const int C, const mint_tile *t) {
    ternary_tile(R, C, false, t);
}

MINT_TILE_KERNELS(tq1_0_q8_K, tq1_0_tile, 4, 2, 4)
MINT_TILE_KERNELS(tq2_0_q8_K, tq2_0_tile, 4, 2, 4)
