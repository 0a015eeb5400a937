// dot_iq2_neon.h - IQ2_XXS, IQ2_XS and IQ2_S . Q8_K dot products and gemm tiles for aarch64
// (quant/dot_iq2.h).
//
// Not an ordinary header: it holds the kernels' bodies and is compiled twice, by
// quant/dot_iq2_neon.c (baseline NEON) and quant/dot_iq2_neondot.c (dotprod), which differ only in
// mint_dot_s8 and the MINT_LEVEL_NAME suffix (see quant/kernels.h).
//
// Per 32-element chunk the 4 grid points (8 magnitude bytes each) become two uint8x16 vectors;
// each group's sign byte, duplicated and tested against 1, 2, 4, ... 128 (CMTST), gives -1 where
// an element is negative, and (m ^ s) - s puts the sign on the magnitude (8..43 fits int8). Two
// dot steps per chunk with the activations, MLA by the odd scale 2 ls + 1 (per 32 elements for
// IQ2_XXS, per 16 for the others): the super-block's integer sum is exact (below 2^31), and the
// f32 steps after it are the reference's (quant/dot_iq2.h), so the bits are too.
//
// Tiles: 1 row x up to 4 columns.
#include "quant/dot_iq2.h"
#include "quant/iq2_tables.h"
#include "quant/simd_neon.h"

// One chunk of 32 signed weights (two halves) and the scales of its halves.
typedef struct iq2_chunk {
    int8x16_t w[2]; // [32] grid byte * sign
    int ls[2];      // 2 ls + 1 of elements 0..15 and 16..31
} iq2_chunk;

// 8 magnitudes (one grid point) with the signs of sign byte s.
MINT_NEON_INLINE int8x8_t iq2_group(uint64_t point, unsigned s) {
    const uint8x8_t bits = vcreate_u8(0x8040201008040201ull);
    const int8x8_t neg = vreinterpret_s8_u8(vtst_u8(vdup_n_u8((uint8_t)s), bits));
    const int8x8_t m = vreinterpret_s8_u8(vcreate_u8(point));
    return vsub_s8(veor_s8(m, neg), neg);
}

MINT_NEON_INLINE void iq2_fill(iq2_chunk *c, const uint64_t *grid, const unsigned idx[4],
                               const unsigned sg[4]) {
    c->w[0] = vcombine_s8(iq2_group(grid[idx[0]], sg[0]), iq2_group(grid[idx[1]], sg[1]));
    c->w[1] = vcombine_s8(iq2_group(grid[idx[2]], sg[2]), iq2_group(grid[idx[3]], sg[3]));
}

MINT_NEON_INLINE void iq2_xxs_chunk(const mint_block_iq2_xxs *b, int ib, iq2_chunk *c) {
    const uint32_t idx = (uint32_t)b->qs[4 * ib] | (uint32_t)b->qs[4 * ib + 1] << 16;
    const uint32_t sg = (uint32_t)b->qs[4 * ib + 2] | (uint32_t)b->qs[4 * ib + 3] << 16;
    const uint8_t *ks = mint_iq2_ksigns;
    const unsigned i4[4] = {idx & 0xFF, idx >> 8 & 0xFF, idx >> 16 & 0xFF, idx >> 24};
    const unsigned s4[4] = {ks[sg & 127], ks[sg >> 7 & 127], ks[sg >> 14 & 127],
                            ks[sg >> 21 & 127]};
    iq2_fill(c, mint_iq2xxs_grid, i4, s4);
    c->ls[0] = c->ls[1] = 2 * (int)(sg >> 28) + 1;
}

MINT_NEON_INLINE void iq2_xs_chunk(const mint_block_iq2_xs *b, int ib, iq2_chunk *c) {
    const uint16_t *q = b->qs + 4 * ib;
    const uint8_t *ks = mint_iq2_ksigns;
    const unsigned i4[4] = {q[0] & 511u, q[1] & 511u, q[2] & 511u, q[3] & 511u};
    const unsigned s4[4] = {ks[q[0] >> 9], ks[q[1] >> 9], ks[q[2] >> 9], ks[q[3] >> 9]};
    iq2_fill(c, mint_iq2xs_grid, i4, s4);
    c->ls[0] = 2 * (b->scales[ib] & 0xF) + 1;
    c->ls[1] = 2 * (b->scales[ib] >> 4) + 1;
}

MINT_NEON_INLINE void iq2_s_chunk(const mint_block_iq2_s *b, int ib, iq2_chunk *c) {
    const uint8_t *q = b->qs + 4 * ib, *s = b->qs + MINT_QK_K / 8 + 4 * ib;
    const unsigned h = b->qh[ib];
    const unsigned i4[4] = {q[0] | (h << 8 & 0x300), q[1] | (h << 6 & 0x300),
                            q[2] | (h << 4 & 0x300), q[3] | (h << 2 & 0x300)};
    const unsigned s4[4] = {s[0], s[1], s[2], s[3]};
    iq2_fill(c, mint_iq2s_grid, i4, s4);
    c->ls[0] = 2 * (b->scales[ib] & 0xF) + 1;
    c->ls[1] = 2 * (b->scales[ib] >> 4) + 1;
}

// R x C tile (R = 1) of rows of block type BLOCK against Q8_K rows; CHUNK decodes.
#define IQ2_TILE(fn, BLOCK, CHUNK)                                                                 \
    MINT_NEON_INLINE void fn(const int R, const int C, const mint_tile *t) {                       \
        float acc[4][4];                                                                           \
        for (int r = 0; r < R; r++)                                                                \
            for (int c = 0; c < C; c++) acc[r][c] = 0.0f;                                          \
        for (int64_t i = 0; i < t->n / MINT_QK_K; i++) {                                           \
            const mint_block_q8_K *a[4];                                                           \
            for (int c = 0; c < C; c++)                                                            \
                a[c] = (const mint_block_q8_K *)(t->a + c * t->a_stride) + i;                      \
            for (int r = 0; r < R; r++) {                                                          \
                const BLOCK *w = (const BLOCK *)(t->w + r * t->w_stride) + i;                      \
                int32x4_t isum[4];                                                                 \
                for (int c = 0; c < C; c++) isum[c] = vdupq_n_s32(0);                              \
                for (int ib = 0; ib < MINT_QK_K / 32; ib++) {                                      \
                    iq2_chunk ch;                                                                  \
                    CHUNK(w, ib, &ch);                                                             \
                    for (int c = 0; c < C; c++) {                                                  \
                        const int32x4_t p0 =                                                       \
                            mint_dot_s8(vdupq_n_s32(0), ch.w[0], vld1q_s8(a[c]->qs + 32 * ib));    \
                        const int32x4_t p1 = mint_dot_s8(vdupq_n_s32(0), ch.w[1],                  \
                                                         vld1q_s8(a[c]->qs + 32 * ib + 16));       \
                        isum[c] = vmlaq_n_s32(isum[c], p0, ch.ls[0]);                              \
                        isum[c] = vmlaq_n_s32(isum[c], p1, ch.ls[1]);                              \
                    }                                                                              \
                }                                                                                  \
                const float dw = mint_neon_f16(w->d);                                              \
                for (int c = 0; c < C; c++) {                                                      \
                    const float d = dw * a[c]->d;                                                  \
                    acc[r][c] += d * (float)vaddvq_s32(isum[c]);                                   \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        for (int r = 0; r < R; r++)                                                                \
            for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = 0.125f * acc[r][c];            \
    }

IQ2_TILE(iq2_xxs_tile, mint_block_iq2_xxs, iq2_xxs_chunk)
IQ2_TILE(iq2_xs_tile, mint_block_iq2_xs, iq2_xs_chunk)
IQ2_TILE(iq2_s_tile, mint_block_iq2_s, iq2_s_chunk)

MINT_TILE_KERNELS(iq2_xxs_q8_K, iq2_xxs_tile, 1, 4, 1)
MINT_TILE_KERNELS(iq2_xs_q8_K, iq2_xs_tile, 1, 4, 1)
MINT_TILE_KERNELS(iq2_s_q8_K, iq2_s_tile, 1, 4, 1)
