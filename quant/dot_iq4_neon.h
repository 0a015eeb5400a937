// dot_iq4_neon.h - IQ4_XS . Q8_K dot products and gemm tiles for aarch64 (IQ4_NL . Q8_0 is a
// 32-element block type and lives in quant/dot_legacy_neon.h).
//
// Not an ordinary header: it holds the kernels' bodies and is compiled twice, by
// quant/dot_iq4_neon.c (baseline NEON) and quant/dot_iq4_neondot.c (dotprod), which differ only in
// mint_dot_s8 and the MINT_LEVEL_NAME suffix (see quant/kernels.h).
//
// Per 32-element group a row's 16 nibble bytes become its signed levels (-127..113) by one TBL of
// mint_iq4nl_table (quant/unpack.h) per half; two dot steps with the activation bytes give the
// group's sum in an int32x4, which MLA (by scalar) multiplies by the group's 6-bit scale ls - 32
// into the pair's int32x4, so the super-block's
//   isum = sum over groups of (ls - 32) * sum(level * a)
// is exact (each lane below 8 * 8 * 127 * 127 * 32 < 2^27). Per super-block the pair's f32 sum
// gets (d_w * d_a) * isum, the same expression quant/dot_iq4_avx2.c uses; the reference rounds
// once per group instead (f32 rounding only, tests/test_kernels.c budget).
//
// Tiles as the K-quants (quant/dot_k_neon.h): up to 4 rows x 2 columns.
#include "quant/simd_neon.h"
#include "quant/unpack.h"

// R x C tile of IQ4_XS rows against Q8_K rows (see the file comment).
MINT_NEON_INLINE void iq4_xs_tile(const int R, const int C, const mint_tile *t) {
    const int8x16_t table = vld1q_s8(mint_iq4nl_table());
    const uint8x16_t m4 = vdupq_n_u8(0x0F);
    float sum[4][2];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) sum[r][c] = 0.0f;
    for (int64_t i = 0; i < t->n / MINT_QK_K; i++) {
        const mint_block_iq4_xs *w[4];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) w[r] = (const mint_block_iq4_xs *)(t->w + r * t->w_stride) + i;
        const mint_block_q8_K *a[2];
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) a[c] = (const mint_block_q8_K *)(t->a + c * t->a_stride) + i;
        int32x4_t isum[4][2];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) isum[r][c] = vdupq_n_s32(0);
        for (int g = 0; g < 8; g++) {
            int8x16_t a0[2], a1[2];
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) {
                a0[c] = vld1q_s8(a[c]->qs + 32 * g);
                a1[c] = vld1q_s8(a[c]->qs + 32 * g + 16);
            }
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const uint8x16_t v = vld1q_u8(w[r]->qs + 16 * g);
                const int8x16_t lo = vqtbl1q_s8(table, vandq_u8(v, m4));
                const int8x16_t hi = vqtbl1q_s8(table, vshrq_n_u8(v, 4));
                const int ls = ((w[r]->scales_l[g / 2] >> 4 * (g % 2) & 0xF) |
                                (w[r]->scales_h >> 2 * g & 3) << 4) -
                               32;
#pragma GCC unroll 2
                for (int c = 0; c < C; c++) {
                    int32x4_t p = mint_dot_s8(vdupq_n_s32(0), lo, a0[c]);
                    p = mint_dot_s8(p, hi, a1[c]);
                    isum[r][c] = vmlaq_n_s32(isum[r][c], p, ls);
                }
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const float dw = mint_neon_f16(w[r]->d);
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) sum[r][c] += dw * a[c]->d * (float)vaddvq_s32(isum[r][c]);
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = sum[r][c];
}

MINT_TILE_KERNELS(iq4_xs_q8_K, iq4_xs_tile, 4, 2, 4)
