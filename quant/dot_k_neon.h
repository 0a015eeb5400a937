// dot_k_neon.h - dot products and gemm tiles of the K-quants (Q2_K .. Q6_K weights against Q8_K
// activations) for aarch64.
//
// Not an ordinary header: it holds the kernels' bodies and is compiled twice, by
// quant/dot_k_neon.c (baseline NEON) and quant/dot_k_neondot.c (dotprod), which differ only in
// mint_dot_s8 and the MINT_LEVEL_NAME suffix (see quant/kernels.h).
//
// Per 256-element super-block and (row, column) pair everything integer is exact, as in the
// reference: each 16- or 32-element sub-block's sum of level * a comes from dot steps in an
// int32x4, is multiplied by the sub-block's integer scale with MLA (by scalar) into one int32x4
// per pair, and the four lanes are added once per super-block; the mins' part uses Q8_K's bsums
// (SMULL / SMLAL2 of the 16-bit mins and bsums). The super-block then adds to the pair's f32
// sum with the reference's own expression (d * isum - dmin * summs, in the same order), so these
// kernels return exactly the reference's bits, and gemm does too.
//
// Tiles go up to 4 weight rows x 2 activation columns: per 32 elements a pair needs its int32
// accumulator, two unpacked weight registers and two activation registers; at 4 x 2 GCC 12
// keeps Q2_K, Q4_K and Q6_K's inner loops free of stack spills (Q3_K and Q5_K, which also unpack
// a high-bit mask, spill a few registers; 4 x 4 would spill for every type). The loops over a
// super-block's parts are not unrolled (the offsets and shifts of a part are computed), which keeps
// the code small.
#include "quant/simd_neon.h"
#include "quant/unpack.h"

// The (row, column) pair's super-block contribution, the reference's expression:
// sum + d * isum - dmin * summs.
MINT_NEON_INLINE float k_add(float sum, float d, int32x4_t isum, float dmin, int summs) {
    return sum + (d * (float)vaddvq_s32(isum) - dmin * (float)summs);
}

// sum over 16 sub-block entries of min[k] * bsums[k] (int16 x int16, exact in int32).
MINT_NEON_INLINE int mins_dot16(int16x8_t m_lo, int16x8_t m_hi, const int16_t *bsums) {
    const int16x8_t b_lo = vld1q_s16(bsums), b_hi = vld1q_s16(bsums + 8);
    int32x4_t p = vmull_s16(vget_low_s16(m_lo), vget_low_s16(b_lo));
    p = vmlal_high_s16(p, m_lo, b_lo);
    p = vmlal_s16(p, vget_low_s16(m_hi), vget_low_s16(b_hi));
    p = vmlal_high_s16(p, m_hi, b_hi);
    return vaddvq_s32(p);
}

// ---------------------------------------------------------------------------------------------
// Q2_K: 16 sub-blocks of 16; 2-bit levels (element 128n + 32j + l in bits 2j of qs[32n + l]),
// scale = low nibble and min = high nibble of scales[sub-block].

MINT_NEON_INLINE void q2_K_tile(const int R, const int C, const mint_tile *t) {
    float sum[4][2] = {{0}};
    const int64_t nb = t->n / MINT_QK_K;
    for (int64_t ib = 0; ib < nb; ib++) {
        const mint_block_q2_K *w[4];
        const mint_block_q8_K *a[2];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) w[r] = (const mint_block_q2_K *)(t->w + r * t->w_stride) + ib;
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) a[c] = (const mint_block_q8_K *)(t->a + c * t->a_stride) + ib;
        int32x4_t isum[4][2];
        int summs[4][2];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const uint8x16_t sc = vld1q_u8(w[r]->scales);
            const uint8x16_t mins = vshrq_n_u8(sc, 4);
            const int16x8_t m_lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(mins)));
            const int16x8_t m_hi = vreinterpretq_s16_u16(vmovl_high_u8(mins));
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) {
                summs[r][c] = mins_dot16(m_lo, m_hi, a[c]->bsums);
                isum[r][c] = vdupq_n_s32(0);
            }
        }
        const uint8x16_t m3 = vdupq_n_u8(3);
#pragma GCC unroll 1
        for (int part = 0; part < 8; part++) { // 32 elements: n = part / 4, j = part % 4
            const int n = part / 4, j = part % 4, sb = 2 * part;
            const int8x16_t shift = vdupq_n_s8((int8_t)(-2 * j));
            int8x16_t a0[2], a1[2];
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) {
                a0[c] = vld1q_s8(a[c]->qs + 32 * part);
                a1[c] = vld1q_s8(a[c]->qs + 32 * part + 16);
            }
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const uint8_t *q = w[r]->qs + 32 * n;
                const int8x16_t w0 =
                    vreinterpretq_s8_u8(vandq_u8(vshlq_u8(vld1q_u8(q), shift), m3));
                const int8x16_t w1 =
                    vreinterpretq_s8_u8(vandq_u8(vshlq_u8(vld1q_u8(q + 16), shift), m3));
                const int s0 = w[r]->scales[sb] & 0xF, s1 = w[r]->scales[sb + 1] & 0xF;
#pragma GCC unroll 2
                for (int c = 0; c < C; c++) {
                    isum[r][c] =
                        vmlaq_n_s32(isum[r][c], mint_dot_s8(vdupq_n_s32(0), w0, a0[c]), s0);
                    isum[r][c] =
                        vmlaq_n_s32(isum[r][c], mint_dot_s8(vdupq_n_s32(0), w1, a1[c]), s1);
                }
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) {
                const float dall = a[c]->d * mint_neon_f16(w[r]->d);
                const float dmin = a[c]->d * mint_neon_f16(w[r]->dmin);
                sum[r][c] = k_add(sum[r][c], dall, isum[r][c], dmin, summs[r][c]);
            }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = sum[r][c];
}

// ---------------------------------------------------------------------------------------------
// Q3_K: 2-bit levels as Q2_K plus a high bit (bit 4n + j of hmask[l] for element
// 128n + 32j + l); level - 4 times a signed 6-bit scale (stored + 32) per 16 elements.

MINT_NEON_INLINE void q3_K_tile(const int R, const int C, const mint_tile *t) {
    float sum[4][2] = {{0}};
    const int64_t nb = t->n / MINT_QK_K;
    for (int64_t ib = 0; ib < nb; ib++) {
        const mint_block_q3_K *w[4];
        const mint_block_q8_K *a[2];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) w[r] = (const mint_block_q3_K *)(t->w + r * t->w_stride) + ib;
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) a[c] = (const mint_block_q8_K *)(t->a + c * t->a_stride) + ib;
        int scale[4][16];
        int32x4_t isum[4][2];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            for (int k = 0; k < 16; k++) scale[r][k] = mint_q3_scale(w[r]->scales, k) - 32;
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) isum[r][c] = vdupq_n_s32(0);
        }
        const uint8x16_t m3 = vdupq_n_u8(3), four = vdupq_n_u8(4);
#pragma GCC unroll 1
        for (int part = 0; part < 8; part++) { // 32 elements: n = part / 4, j = part % 4
            const int n = part / 4, j = part % 4, sb = 2 * part;
            const int8x16_t shift = vdupq_n_s8((int8_t)(-2 * j));
            const uint8x16_t hbit = vdupq_n_u8((uint8_t)(1u << part));
            int8x16_t a0[2], a1[2];
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) {
                a0[c] = vld1q_s8(a[c]->qs + 32 * part);
                a1[c] = vld1q_s8(a[c]->qs + 32 * part + 16);
            }
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const uint8_t *q = w[r]->qs + 32 * n;
                // level = 2 low bits | high bit << 2, then - 4: exact in int8 (-4..3).
                const uint8x16_t l0 =
                    vorrq_u8(vandq_u8(vshlq_u8(vld1q_u8(q), shift), m3),
                             vandq_u8(vtstq_u8(vld1q_u8(w[r]->hmask), hbit), four));
                const uint8x16_t l1 =
                    vorrq_u8(vandq_u8(vshlq_u8(vld1q_u8(q + 16), shift), m3),
                             vandq_u8(vtstq_u8(vld1q_u8(w[r]->hmask + 16), hbit), four));
                const int8x16_t w0 = vsubq_s8(vreinterpretq_s8_u8(l0), vreinterpretq_s8_u8(four));
                const int8x16_t w1 = vsubq_s8(vreinterpretq_s8_u8(l1), vreinterpretq_s8_u8(four));
                const int s0 = scale[r][sb], s1 = scale[r][sb + 1];
#pragma GCC unroll 2
                for (int c = 0; c < C; c++) {
                    isum[r][c] =
                        vmlaq_n_s32(isum[r][c], mint_dot_s8(vdupq_n_s32(0), w0, a0[c]), s0);
                    isum[r][c] =
                        vmlaq_n_s32(isum[r][c], mint_dot_s8(vdupq_n_s32(0), w1, a1[c]), s1);
                }
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) {
                const float d = mint_neon_f16(w[r]->d) * a[c]->d;
                sum[r][c] = sum[r][c] + d * (float)vaddvq_s32(isum[r][c]);
            }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = sum[r][c];
}

// ---------------------------------------------------------------------------------------------
// Q4_K / Q5_K: 8 sub-blocks of 32, 6-bit scales and mins; the low 4 bits of sub-blocks 2p and
// 2p + 1 are the low and high nibbles of qs[32p .. 32p + 32); Q5_K's 5th bit of element
// 32b + l is bit b of qh[l].

MINT_NEON_INLINE void k4_tile(const int R, const int C, const int five, const mint_tile *t) {
    float sum[4][2] = {{0}};
    const size_t wbytes = five ? sizeof(mint_block_q5_K) : sizeof(mint_block_q4_K);
    const int64_t nb = t->n / MINT_QK_K;
    for (int64_t ib = 0; ib < nb; ib++) {
        // Q4_K and Q5_K share d, dmin, scales; qs (and Q5_K's qh) are located per type.
        const uint8_t *w[4];
        const mint_block_q8_K *a[2];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) w[r] = t->w + r * t->w_stride + (size_t)ib * wbytes;
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) a[c] = (const mint_block_q8_K *)(t->a + c * t->a_stride) + ib;
        int scale[4][8];
        int32x4_t isum[4][2];
        int summs[4][2];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const uint8_t *packed = ((const mint_block_q4_K *)w[r])->scales;
            int16_t mins[8];
            for (int b = 0; b < 8; b++) {
                int sc, m;
                mint_k4_scale_min(b, packed, &sc, &m);
                scale[r][b] = sc;
                mins[b] = (int16_t)m;
            }
            const int16x8_t m8 = vld1q_s16(mins);
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) {
                // Each min covers 32 elements: two bsums, added pairwise (ADDP).
                const int16x8_t bs = vpaddq_s16(vld1q_s16(a[c]->bsums), vld1q_s16(a[c]->bsums + 8));
                int32x4_t p = vmull_s16(vget_low_s16(m8), vget_low_s16(bs));
                p = vmlal_high_s16(p, m8, bs);
                summs[r][c] = vaddvq_s32(p);
                isum[r][c] = vdupq_n_s32(0);
            }
        }
        const uint8x16_t m4 = vdupq_n_u8(0x0F), x10 = vdupq_n_u8(0x10);
#pragma GCC unroll 1
        for (int b = 0; b < 8; b++) { // sub-block b: elements 32b .. 32b + 31
            const int8x16_t shift = vdupq_n_s8((int8_t)(-4 * (b % 2)));
            const uint8x16_t hbit = vdupq_n_u8((uint8_t)(1u << b));
            int8x16_t a0[2], a1[2];
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) {
                a0[c] = vld1q_s8(a[c]->qs + 32 * b);
                a1[c] = vld1q_s8(a[c]->qs + 32 * b + 16);
            }
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const uint8_t *qs = five ? ((const mint_block_q5_K *)w[r])->qs
                                         : ((const mint_block_q4_K *)w[r])->qs;
                const uint8_t *q = qs + 32 * (b / 2);
                uint8x16_t l0 = vandq_u8(vshlq_u8(vld1q_u8(q), shift), m4);
                uint8x16_t l1 = vandq_u8(vshlq_u8(vld1q_u8(q + 16), shift), m4);
                if (five) {
                    const uint8_t *qh = ((const mint_block_q5_K *)w[r])->qh;
                    l0 = vorrq_u8(l0, vandq_u8(vtstq_u8(vld1q_u8(qh), hbit), x10));
                    l1 = vorrq_u8(l1, vandq_u8(vtstq_u8(vld1q_u8(qh + 16), hbit), x10));
                }
                const int s = scale[r][b];
#pragma GCC unroll 2
                for (int c = 0; c < C; c++) {
                    int32x4_t p = mint_dot_s8(vdupq_n_s32(0), vreinterpretq_s8_u8(l0), a0[c]);
                    p = mint_dot_s8(p, vreinterpretq_s8_u8(l1), a1[c]);
                    isum[r][c] = vmlaq_n_s32(isum[r][c], p, s);
                }
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) {
                const mint_block_q4_K *h = (const mint_block_q4_K *)w[r];
                const float d = mint_neon_f16(h->d) * a[c]->d;
                const float dmin = mint_neon_f16(h->dmin) * a[c]->d;
                sum[r][c] = k_add(sum[r][c], d, isum[r][c], dmin, summs[r][c]);
            }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = sum[r][c];
}

MINT_NEON_INLINE void q4_K_tile(const int R, const int C, const mint_tile *t) {
    k4_tile(R, C, 0, t);
}
MINT_NEON_INLINE void q5_K_tile(const int R, const int C, const mint_tile *t) {
    k4_tile(R, C, 1, t);
}

// ---------------------------------------------------------------------------------------------
// Q6_K: element 128h + 32s + l has its low 4 bits in ql[64h + l + 32(s & 1)] (low nibble for
// s < 2, high for s >= 2) and its high 2 bits in bits 2s of qh[32h + l]; level - 32 times a
// signed 8-bit scale per 16 elements.

MINT_NEON_INLINE void q6_K_tile(const int R, const int C, const mint_tile *t) {
    float sum[4][2] = {{0}};
    const int64_t nb = t->n / MINT_QK_K;
    for (int64_t ib = 0; ib < nb; ib++) {
        const mint_block_q6_K *w[4];
        const mint_block_q8_K *a[2];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) w[r] = (const mint_block_q6_K *)(t->w + r * t->w_stride) + ib;
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) a[c] = (const mint_block_q8_K *)(t->a + c * t->a_stride) + ib;
        int32x4_t isum[4][2];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) isum[r][c] = vdupq_n_s32(0);
        const uint8x16_t m4 = vdupq_n_u8(0x0F), m3 = vdupq_n_u8(3);
        const int8x16_t s32 = vdupq_n_s8(32);
#pragma GCC unroll 1
        for (int part = 0; part < 8; part++) { // 32 elements: h = part / 4, s = part % 4
            const int h = part / 4, s = part % 4, sb = 2 * part;
            const int8x16_t lshift = vdupq_n_s8((int8_t)(-4 * (s / 2)));
            const int8x16_t hshift = vdupq_n_s8((int8_t)(-2 * s));
            int8x16_t a0[2], a1[2];
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) {
                a0[c] = vld1q_s8(a[c]->qs + 32 * part);
                a1[c] = vld1q_s8(a[c]->qs + 32 * part + 16);
            }
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const uint8_t *ql = w[r]->ql + 64 * h + 32 * (s & 1), *qh = w[r]->qh + 32 * h;
                // level = low nibble | 2 high bits << 4 (0..63), then - 32: exact in int8.
                const uint8x16_t l0 =
                    vorrq_u8(vandq_u8(vshlq_u8(vld1q_u8(ql), lshift), m4),
                             vshlq_n_u8(vandq_u8(vshlq_u8(vld1q_u8(qh), hshift), m3), 4));
                const uint8x16_t l1 =
                    vorrq_u8(vandq_u8(vshlq_u8(vld1q_u8(ql + 16), lshift), m4),
                             vshlq_n_u8(vandq_u8(vshlq_u8(vld1q_u8(qh + 16), hshift), m3), 4));
                const int8x16_t w0 = vsubq_s8(vreinterpretq_s8_u8(l0), s32);
                const int8x16_t w1 = vsubq_s8(vreinterpretq_s8_u8(l1), s32);
                const int s0 = w[r]->scales[sb], s1 = w[r]->scales[sb + 1];
#pragma GCC unroll 2
                for (int c = 0; c < C; c++) {
                    isum[r][c] =
                        vmlaq_n_s32(isum[r][c], mint_dot_s8(vdupq_n_s32(0), w0, a0[c]), s0);
                    isum[r][c] =
                        vmlaq_n_s32(isum[r][c], mint_dot_s8(vdupq_n_s32(0), w1, a1[c]), s1);
                }
            }
        }
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
#pragma GCC unroll 2
            for (int c = 0; c < C; c++) {
                const float d = mint_neon_f16(w[r]->d) * a[c]->d;
                sum[r][c] = sum[r][c] + d * (float)vaddvq_s32(isum[r][c]);
            }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = sum[r][c];
}

MINT_TILE_KERNELS(q2_K_q8_K, q2_K_tile, 4, 2, 4)
MINT_TILE_KERNELS(q3_K_q8_K, q3_K_tile, 4, 2, 4)
MINT_TILE_KERNELS(q4_K_q8_K, q4_K_tile, 4, 2, 4)
MINT_TILE_KERNELS(q5_K_q8_K, q5_K_tile, 4, 2, 4)
MINT_TILE_KERNELS(q6_K_q8_K, q6_K_tile, 4, 2, 4)
