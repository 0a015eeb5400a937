// dot_q1q2_neon.h - dot products and gemm tiles of Q1_0 and Q2_0 (quant/blocks_q1q2.h) against
// Q8_0 activations, for aarch64.
//
// Not an ordinary header: compiled twice, by quant/dot_q1q2_neon.c (baseline NEON) and
// quant/dot_q1q2_neondot.c (dotprod), which differ only in mint_dot_s8 and the MINT_LEVEL_NAME
// suffix (see quant/kernels.h).
//
// The codes are unpacked 16 at a time to signed bytes (Q1_0: +1 / -1; Q2_0: q - 1), each byte
// first fetched from the block's 16 code bytes by TBL, then its bit tested (CMTST) or its field
// shifted into place (USHL by -2 (e % 4)). Each 32-element activation block's sum is exact in
// one int32x4 per pair, added across once, and the float work is the reference's own
// expression in its order (quant/quant_q1q2_ref.c): sumb += d_a * sumi per activation block,
// then sum += d_w * sumb. These kernels return the reference's bits, and gemm does too. Tiles go
// up to 4 rows x 2 columns, as the ternary ones.
#include "quant/fp16.h"
#include "quant/simd_neon.h"

// The 16 signs of elements 16j..16j+15 of a Q1_0 block as +1 / -1 bytes.
MINT_NEON_INLINE int8x16_t q1_chunk(uint8x16_t qs, int j) {
    static const uint8_t bits[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    const uint8x16_t idx =
        vcombine_u8(vdup_n_u8((uint8_t)(2 * j)), vdup_n_u8((uint8_t)(2 * j + 1)));
    const uint8x16_t set = vtstq_u8(vqtbl1q_u8(qs, idx), vld1q_u8(bits));
    return vreinterpretq_s8_u8(vsubq_u8(vandq_u8(set, vdupq_n_u8(2)), vdupq_n_u8(1)));
}

// The 16 codes of elements 16j..16j+15 of a Q2_0 block as q - 1 bytes (-1 .. 2).
MINT_NEON_INLINE int8x16_t q2_chunk(uint8x16_t qs, int j) {
    static const int8_t shifts[16] = {0, -2, -4, -6, 0, -2, -4, -6, 0, -2, -4, -6, 0, -2, -4, -6};
    static const uint8_t pick[16] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
    const uint8x16_t idx = vaddq_u8(vld1q_u8(pick), vdupq_n_u8((uint8_t)(4 * j)));
    const uint8x16_t q = vandq_u8(vshlq_u8(vqtbl1q_u8(qs, idx), vld1q_s8(shifts)), vdupq_n_u8(3));
    return vreinterpretq_s8_u8(vsubq_u8(q, vdupq_n_u8(1)));
}

// R x C tile of Q1_0 (q1) or Q2_0 rows against Q8_0 rows.
MINT_NEON_INLINE void q1q2_tile(const int R, const int C, bool q1, const mint_tile *t) {
    const int qk = q1 ? 128 : 64, sub = qk / MINT_QK;
    const size_t bytes = q1 ? sizeof(mint_block_q1_0) : sizeof(mint_block_q2_0);
    float sum[4][2] = {{0}};
    for (int64_t ib = 0; ib < t->n / qk; ib++) {
        float sumb[4][2] = {{0}};
        uint8x16_t qs[4];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) qs[r] = vld1q_u8(t->w + r * t->w_stride + ib * bytes + 2);
        for (int k = 0; k < sub; k++) {
            const mint_block_q8_0 *a[2];
            int8x16_t a0[2], a1[2];
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) {
                a[c] = (const mint_block_q8_0 *)(t->a + c * t->a_stride) + ib * sub + k;
                a0[c] = vld1q_s8(a[c]->qs);
                a1[c] = vld1q_s8(a[c]->qs + 16);
            }
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const int8x16_t w0 = q1 ? q1_chunk(qs[r], 2 * k) : q2_chunk(qs[r], 2 * k);
                const int8x16_t w1 = q1 ? q1_chunk(qs[r], 2 * k + 1) : q2_chunk(qs[r], 2 * k + 1);
#pragma GCC unroll 2
                for (int c = 0; c < C; c++) {
                    const int32x4_t s =
                        mint_dot_s8(mint_dot_s8(vdupq_n_s32(0), w0, a0[c]), w1, a1[c]);
                    sumb[r][c] += mint_f16_to_f32(a[c]->d) * (float)vaddvq_s32(s);
                }
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            uint16_t dbits;
            memcpy(&dbits, t->w + r * t->w_stride + ib * bytes, sizeof dbits);
            const float dw = mint_f16_to_f32(dbits);
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) sum[r][c] += dw * sumb[r][c];
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = sum[r][c];
}

MINT_NEON_INLINE void q1_0_tile(const int R, const int C, const mint_tile *t) {
    q1q2_tile(R, C, true, t);
}
MINT_NEON_INLINE void q2_0_tile(const int R, const int C, const mint_tile *t) {
    q1q2_tile(R, C, false, t);
}

MINT_TILE_KERNELS(q1_0_q8_0, q1_0_tile, 4, 2, 4)
MINT_TILE_KERNELS(q2_0_q8_0, q2_0_tile, 4, 2, 4)
