// dot_legacy_neon.h - dot products and gemm tiles of the 32-element block types (Q4_0, Q4_1,
// Q5_0, Q5_1, Q8_0, MXFP4, IQ4_NL weights against Q8_0 / Q8_1 activations) for aarch64.
//
// Not an ordinary header: it holds the kernels' bodies and is compiled twice, by
// quant/dot_legacy_neon.c (baseline NEON) and quant/dot_legacy_neondot.c (dotprod), which differ
// only in mint_dot_s8 and the MINT_LEVEL_NAME suffix (see quant/kernels.h).
//
// The pattern is llama.cpp's ARM one: a weight block is unpacked to 32 signed bytes in two
// 16-byte registers (nibbles split with AND / USHR, the offset 8 or 16 subtracted in int8, which
// is exact), multiplied with the activation block's 32 int8 by two dot steps into one int32x4,
// converted to f32 and added with the block scale d_w * d_a by one FMLA into a 4-lane f32
// accumulator per (row, column) pair. The *_1 types add m_w * s_a per block into a second
// accumulator (lane r = row r of the tile) that joins the lanes' sum at the end. The integer
// sum of a block is exact; only the float accumulation differs from the reference, in order.
//
// The block scales of the tile's R rows are widened together (one FCVTL of R f16 values) and
// multiplied by the column's activation scale once per column; FMLA by element then picks row
// r's scale. The products d_w * d_a are the same IEEE multiplies in every tile shape.
//
// MXFP4 unpacks by one TBL per half: its codes index the doubled E2M1 values (-12..12, exact
// int8), and its block scale is the E8M0 exponent's f32 half-scale instead of an f16. IQ4_NL
// unpacks the same way from its non-linear levels (-127..113, quant/unpack.h), with an f16 d.
#include "quant/fp16.h"
#include "quant/simd_neon.h"
#include "quant/unpack.h"

enum legacy_kind { KIND_Q4_0, KIND_Q4_1, KIND_Q5_0, KIND_Q5_1, KIND_Q8_0, KIND_MXFP4, KIND_IQ4_NL };

// Bytes per weight block of a kind.
MINT_NEON_INLINE size_t weight_block_bytes(enum legacy_kind kind) {
    switch (kind) {
    case KIND_Q4_0:
        return sizeof(mint_block_q4_0);
    case KIND_Q4_1:
        return sizeof(mint_block_q4_1);
    case KIND_Q5_0:
        return sizeof(mint_block_q5_0);
    case KIND_Q5_1:
        return sizeof(mint_block_q5_1);
    case KIND_MXFP4:
        return sizeof(mint_block_mxfp4);
    case KIND_IQ4_NL:
        return sizeof(mint_block_iq4_nl);
    default:
        return sizeof(mint_block_q8_0);
    }
}

// The E8M0 exponents at p + r * stride for r < R as f32 half-scales in lanes 0..R-1 (MXFP4's
// d_w; lanes >= R are zero).
MINT_NEON_INLINE float32x4_t e8m0_rows(const int R, const uint8_t *p, size_t stride) {
    float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) v[r] = mint_e8m0_half_to_f32(p[(size_t)r * stride]);
    return vld1q_f32(v);
}

// Whether a kind has a minimum m (and pairs with Q8_1 activations).
MINT_NEON_INLINE int has_min(enum legacy_kind kind) {
    return kind == KIND_Q4_1 || kind == KIND_Q5_1;
}

// The 5th bits of a Q5 block as 0x10 / 0 bytes: element e's bit is bit e of the little-endian
// word qh. TBL spreads qh byte k over the 8 lanes of elements 8k..8k+7, CMTST tests one bit per
// lane.
MINT_NEON_INLINE void q5_high_bits(const uint8_t *qh, uint8x16_t *lo, uint8x16_t *hi) {
    uint32_t word;
    memcpy(&word, qh, sizeof word);
    const uint8x16_t v = vreinterpretq_u8_u32(vdupq_n_u32(word));
    static const uint8_t idx_lo[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
    static const uint8_t idx_hi[16] = {2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3};
    static const uint8_t bit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    const uint8x16_t sel = vld1q_u8(bit), x10 = vdupq_n_u8(0x10);
    *lo = vandq_u8(vtstq_u8(vqtbl1q_u8(v, vld1q_u8(idx_lo)), sel), x10);
    *hi = vandq_u8(vtstq_u8(vqtbl1q_u8(v, vld1q_u8(idx_hi)), sel), x10);
}

// Weight block b as 32 int8 in element order: elements 0..15 in *lo, 16..31 in *hi, offset
// already subtracted (Q4_0: q - 8, Q5_0: q - 16; Q4_1 / Q5_1 levels stay 0..31).
MINT_NEON_INLINE void unpack_block(enum legacy_kind kind, const uint8_t *b, int8x16_t *lo,
                                   int8x16_t *hi) {
    const uint8x16_t m4 = vdupq_n_u8(0x0F);
    switch (kind) {
    case KIND_Q4_0: {
        const uint8x16_t v = vld1q_u8(((const mint_block_q4_0 *)b)->qs);
        *lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(v, m4)), vdupq_n_s8(8));
        *hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(v, 4)), vdupq_n_s8(8));
        break;
    }
    case KIND_Q4_1: {
        const uint8x16_t v = vld1q_u8(((const mint_block_q4_1 *)b)->qs);
        *lo = vreinterpretq_s8_u8(vandq_u8(v, m4));
        *hi = vreinterpretq_s8_u8(vshrq_n_u8(v, 4));
        break;
    }
    case KIND_Q5_0: {
        const mint_block_q5_0 *q = (const mint_block_q5_0 *)b;
        const uint8x16_t v = vld1q_u8(q->qs);
        uint8x16_t hl, hh;
        q5_high_bits(q->qh, &hl, &hh);
        *lo = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vandq_u8(v, m4), hl)), vdupq_n_s8(16));
        *hi = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(v, 4), hh)), vdupq_n_s8(16));
        break;
    }
    case KIND_Q5_1: {
        const mint_block_q5_1 *q = (const mint_block_q5_1 *)b;
        const uint8x16_t v = vld1q_u8(q->qs);
        uint8x16_t hl, hh;
        q5_high_bits(q->qh, &hl, &hh);
        *lo = vreinterpretq_s8_u8(vorrq_u8(vandq_u8(v, m4), hl));
        *hi = vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(v, 4), hh));
        break;
    }
    case KIND_MXFP4: {
        const uint8x16_t v = vld1q_u8(((const mint_block_mxfp4 *)b)->qs);
        const int8x16_t table = vld1q_s8(mint_mxfp4_table());
        *lo = vqtbl1q_s8(table, vandq_u8(v, m4));
        *hi = vqtbl1q_s8(table, vshrq_n_u8(v, 4));
        break;
    }
    case KIND_IQ4_NL: {
        const uint8x16_t v = vld1q_u8(((const mint_block_iq4_nl *)b)->qs);
        const int8x16_t table = vld1q_s8(mint_iq4nl_table());
        *lo = vqtbl1q_s8(table, vandq_u8(v, m4));
        *hi = vqtbl1q_s8(table, vshrq_n_u8(v, 4));
        break;
    }
    default: {
        const int8_t *qs = ((const mint_block_q8_0 *)b)->qs;
        *lo = vld1q_s8(qs);
        *hi = vld1q_s8(qs + 16);
        break;
    }
    }
}

// R x C tile of a 32-element block type: per block, R unpacked weight blocks and, per column,
// one activation block; see the file comment for the arithmetic.
MINT_NEON_INLINE void legacy_tile(const int R, const int C, enum legacy_kind kind,
                                  const mint_tile *t) {
    const size_t wbytes = weight_block_bytes(kind);
    const int with_min = has_min(kind);
    // Q8_1 activations: d, s, qs[32]; Q8_0: d, qs[32].
    const size_t abytes = with_min ? sizeof(mint_block_q8_1) : sizeof(mint_block_q8_0);
    const size_t aqs = with_min ? offsetof(mint_block_q8_1, qs) : offsetof(mint_block_q8_0, qs);
    float32x4_t acc[4][4], msum[4];
#pragma GCC unroll 4
    for (int c = 0; c < C; c++) {
        msum[c] = vdupq_n_f32(0.0f);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) acc[r][c] = vdupq_n_f32(0.0f);
    }
    const int64_t nb = t->n / MINT_QK;
    for (int64_t ib = 0; ib < nb; ib++) {
        const uint8_t *wblk = t->w + (size_t)ib * wbytes;
        int8x16_t wl[4], wh[4];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) unpack_block(kind, wblk + r * t->w_stride, &wl[r], &wh[r]);
        // d is every weight block's first field (MXFP4: its E8M0 byte), m (the *_1 types) its
        // second.
        const float32x4_t dw = kind == KIND_MXFP4 ? e8m0_rows(R, wblk, t->w_stride)
                                                  : mint_neon_f16_rows(R, wblk, t->w_stride);
        const float32x4_t mw = with_min ? mint_neon_f16_rows(R, wblk + 2, t->w_stride) : dw;
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) {
            const uint8_t *ablk = t->a + c * t->a_stride + (size_t)ib * abytes;
            const int8x16_t a0 = vld1q_s8((const int8_t *)(ablk + aqs));
            const int8x16_t a1 = vld1q_s8((const int8_t *)(ablk + aqs + 16));
            uint16_t da, sa;
            memcpy(&da, ablk, sizeof da);
            const float32x4_t scale = vmulq_n_f32(dw, mint_neon_f16(da));
            if (with_min) {
                memcpy(&sa, ablk + 2, sizeof sa);
                msum[c] = vfmaq_n_f32(msum[c], mw, mint_neon_f16(sa));
            }
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                int32x4_t p = mint_dot_s8(vdupq_n_s32(0), wl[r], a0);
                p = mint_dot_s8(p, wh[r], a1);
                acc[r][c] = mint_neon_fma_lane(acc[r][c], vcvtq_f32_s32(p), scale, r);
            }
        }
    }
#pragma GCC unroll 4
    for (int c = 0; c < C; c++)
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            float s = vaddvq_f32(acc[r][c]);
            if (with_min) s += mint_neon_lane(msum[c], r);
            t->y[c * t->y_stride + r] = s;
        }
}

MINT_NEON_INLINE void q4_0_tile(const int R, const int C, const mint_tile *t) {
    legacy_tile(R, C, KIND_Q4_0, t);
}
MINT_NEON_INLINE void q4_1_tile(const int R, const int C, const mint_tile *t) {
    legacy_tile(R, C, KIND_Q4_1, t);
}
MINT_NEON_INLINE void q5_0_tile(const int R, const int C, const mint_tile *t) {
    legacy_tile(R, C, KIND_Q5_0, t);
}
MINT_NEON_INLINE void q5_1_tile(const int R, const int C, const mint_tile *t) {
    legacy_tile(R, C, KIND_Q5_1, t);
}
MINT_NEON_INLINE void q8_0_tile(const int R, const int C, const mint_tile *t) {
    legacy_tile(R, C, KIND_Q8_0, t);
}
MINT_NEON_INLINE void mxfp4_tile(const int R, const int C, const mint_tile *t) {
    legacy_tile(R, C, KIND_MXFP4, t);
}
MINT_NEON_INLINE void iq4_nl_tile(const int R, const int C, const mint_tile *t) {
    legacy_tile(R, C, KIND_IQ4_NL, t);
}

// Tile shapes: with SDOT a pair's block is two instructions and 4 x 2 tiles stay in the 32
// registers; the baseline's SMULL / SADALP steps need more temporaries, and beyond 2 x 2 the
// compiler starts spilling accumulators to the stack inside the block loop.
#if defined(__ARM_FEATURE_DOTPROD)
#define LEGACY_RMAX 4
#define LEGACY_CMAX 2
#else
#define LEGACY_RMAX 2
#define LEGACY_CMAX 2
#endif

MINT_TILE_KERNELS(q4_0_q8_0, q4_0_tile, LEGACY_RMAX, LEGACY_CMAX, LEGACY_RMAX)
MINT_TILE_KERNELS(q4_1_q8_1, q4_1_tile, LEGACY_RMAX, LEGACY_CMAX, LEGACY_RMAX)
MINT_TILE_KERNELS(q5_0_q8_0, q5_0_tile, LEGACY_RMAX, LEGACY_CMAX, LEGACY_RMAX)
MINT_TILE_KERNELS(q5_1_q8_1, q5_1_tile, LEGACY_RMAX, LEGACY_CMAX, LEGACY_RMAX)
MINT_TILE_KERNELS(q8_0_q8_0, q8_0_tile, LEGACY_RMAX, LEGACY_CMAX, LEGACY_RMAX)
MINT_TILE_KERNELS(mxfp4_q8_0, mxfp4_tile, LEGACY_RMAX, LEGACY_CMAX, LEGACY_RMAX)
MINT_TILE_KERNELS(iq4_nl_q8_0, iq4_nl_tile, LEGACY_RMAX, LEGACY_CMAX, LEGACY_RMAX)
