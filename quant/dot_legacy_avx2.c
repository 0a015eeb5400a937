// dot_legacy_avx2.c - dot products and gemm tiles of the 32-element block types (Q4_0, Q4_1,
// Q5_0, Q5_1, Q8_0, MXFP4, IQ4_NL) with Q8_0 / Q8_1 activations, for AVX2 (Haswell, Zen 1 and
// later).
//
// Integer part, per (row, column) block: vpmaddubsw multiplies unsigned weight bytes by signed
// activation bytes and adds adjacent pairs into int16 (no saturation: levels are at most 31, or
// |w| at most 128 for Q8_0, against activations of magnitude at most 127), then vpmaddwd with
// ones widens and adds pairs into 8 int32 lanes. Offset levels (Q4_0: q - 8, Q5_0: q - 16) are
// summed as sum(q * a) - offset * sum(a): the offset term is one vpmaddubsw per activation block,
// subtracted in int16 (each pair stays within 2 * 16 * 127), so each (row, column) pays one
// vpsubw for it. Q8_0 x Q8_0 moves w's sign onto a: |w| * (a * sign(w)) with vpsignb (a is never
// -128, so the negation cannot overflow). MXFP4 does the same with its codes looked up (vpshufb)
// as their doubled E2M1 values, -12..12, and its E8M0 exponent as the block's f32 half-scale;
// IQ4_NL too, its indices looked up as the non-linear levels -127..113 (quant/unpack.h).
//
// Float part. The block scale d_w * d_a differs for every (row, column, block), so each block's
// integer sum must be scaled by its own float. Four rows share one accumulator: vphaddd folds
// the four rows' 8-lane sums into one vector [r0 r1 r2 r3 | r0 r1 r2 r3] (low half: the sum of
// each row's lanes 0..3, high half: lanes 4..7; integer adds, exact), and one vcvtdq2ps, one
// vmulps (the four rows' d_w times the column's d_a) and one FMA accumulate all four. That is 3
// float instructions per 4 blocks instead of 3 per block, and a 4-row x C tile needs only C
// accumulators. A row's float arithmetic is the same whichever of the four slots it sits in
// (lanes r and r + 4), so the 1 x 1 tile (vec_dot, with three empty slots) and every gemm tile
// shape give the same bits; the result is lane r plus lane r + 4.
//
// Tiles: 4 rows x 8 columns for a batch (8 accumulators, 4 unpacked weight blocks), 4 x 1 for one
// token. Eight-row tiles (two accumulators per column) measured within noise of these.
#include "quant/fp16.h"
#include "quant/simd_avx2.h"
#include "quant/unpack.h"

#define MINT_LEVEL_NAME(name) name##_avx2

// Bytes per block of a legacy weight type.
MINT_AVX2_INLINE size_t block_bytes(mint_type type) {
    switch (type) {
    case MINT_TYPE_Q4_0:
        return sizeof(mint_block_q4_0);
    case MINT_TYPE_Q4_1:
        return sizeof(mint_block_q4_1);
    case MINT_TYPE_Q5_0:
        return sizeof(mint_block_q5_0);
    case MINT_TYPE_Q5_1:
        return sizeof(mint_block_q5_1);
    case MINT_TYPE_MXFP4:
        return sizeof(mint_block_mxfp4);
    case MINT_TYPE_IQ4_NL:
        return sizeof(mint_block_iq4_nl);
    default:
        return sizeof(mint_block_q8_0);
    }
}

// Types whose weights are signed bytes, multiplied as |w| times a with w's sign (Q8_0, and
// MXFP4 and IQ4_NL after their table lookups).
MINT_AVX2_INLINE bool is_signed(mint_type type) {
    return type == MINT_TYPE_Q8_0 || type == MINT_TYPE_MXFP4 || type == MINT_TYPE_IQ4_NL;
}

MINT_AVX2_INLINE bool has_offset(mint_type type) {
    return type == MINT_TYPE_Q4_0 || type == MINT_TYPE_Q5_0;
}

MINT_AVX2_INLINE bool has_min(mint_type type) {
    return type == MINT_TYPE_Q4_1 || type == MINT_TYPE_Q5_1;
}

// One weight block, ready to multiply: the unsigned operand of vpmaddubsw (levels, or |w| for
// Q8_0 and MXFP4) and, for those two, w itself (whose signs go onto the activations).
typedef struct legacy_w {
    __m256i u;    // [32] unsigned bytes
    __m256i sign; // [32] Q8_0's w (sign source); unused otherwise
} legacy_w;

// Unpacks block ib of a row; *d and *m get the f16 bits of its scale and min (m: 0 if none), or
// for MXFP4 *d its E8M0 exponent byte. MXFP4's codes become their doubled E2M1 values (-12..12)
// by one vpshufb from the 16-byte table in both halves.
MINT_AVX2_INLINE legacy_w legacy_unpack(mint_type type, const uint8_t *row, int64_t ib, uint16_t *d,
                                        uint16_t *m) {
    legacy_w w = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    *m = 0;
    switch (type) {
    case MINT_TYPE_Q4_0: {
        const mint_block_q4_0 *b = (const mint_block_q4_0 *)row + ib;
        w.u = nibbles32(b->qs);
        *d = b->d;
        break;
    }
    case MINT_TYPE_Q4_1: {
        const mint_block_q4_1 *b = (const mint_block_q4_1 *)row + ib;
        w.u = nibbles32(b->qs);
        *d = b->d;
        *m = b->m;
        break;
    }
    case MINT_TYPE_Q5_0: {
        const mint_block_q5_0 *b = (const mint_block_q5_0 *)row + ib;
        w.u = _mm256_or_si256(nibbles32(b->qs), bits_to_0x10(load_u32(b->qh)));
        *d = b->d;
        break;
    }
    case MINT_TYPE_Q5_1: {
        const mint_block_q5_1 *b = (const mint_block_q5_1 *)row + ib;
        w.u = _mm256_or_si256(nibbles32(b->qs), bits_to_0x10(load_u32(b->qh)));
        *d = b->d;
        *m = b->m;
        break;
    }
    case MINT_TYPE_MXFP4: {
        const mint_block_mxfp4 *b = (const mint_block_mxfp4 *)row + ib;
        const __m256i table = _mm256_broadcastsi128_si256(
            _mm_loadu_si128((const __m128i *)(const void *)mint_mxfp4_table()));
        w.sign = _mm256_shuffle_epi8(table, nibbles32(b->qs));
        w.u = _mm256_abs_epi8(w.sign);
        *d = b->e;
        break;
    }
    case MINT_TYPE_IQ4_NL: {
        const mint_block_iq4_nl *b = (const mint_block_iq4_nl *)row + ib;
        const __m256i table = _mm256_broadcastsi128_si256(
            _mm_loadu_si128((const __m128i *)(const void *)mint_iq4nl_table()));
        w.sign = _mm256_shuffle_epi8(table, nibbles32(b->qs));
        w.u = _mm256_abs_epi8(w.sign);
        *d = b->d;
        break;
    }
    default: {
        const mint_block_q8_0 *b = (const mint_block_q8_0 *)row + ib;
        w.sign = _mm256_loadu_si256((const __m256i *)b->qs);
        w.u = _mm256_abs_epi8(w.sign);
        *d = b->d;
        break;
    }
    }
    return w;
}

// One activation block: its bytes, the offset term (offset types) and its f16 d and s.
typedef struct legacy_a {
    __m256i q;   // [32] int8 activations
    __m256i off; // [16] int16 pair sums of offset * q (Q4_0, Q5_0)
    __m256 d;    // f32 d_a, broadcast
    __m256 s;    // f32 s_a, broadcast (Q8_1: Q4_1, Q5_1)
} legacy_a;

MINT_AVX2_INLINE legacy_a legacy_act(mint_type type, const uint8_t *row, int64_t ib) {
    legacy_a a;
    if (has_min(type)) {
        const mint_block_q8_1 *b = (const mint_block_q8_1 *)row + ib;
        a.q = _mm256_loadu_si256((const __m256i *)b->qs);
        a.d = bcast_f16(&b->d);
        a.s = bcast_f16(&b->s);
    } else {
        const mint_block_q8_0 *b = (const mint_block_q8_0 *)row + ib;
        a.q = _mm256_loadu_si256((const __m256i *)b->qs);
        a.d = bcast_f16(&b->d);
        a.s = _mm256_setzero_ps();
    }
    const __m256i offset = _mm256_set1_epi8(type == MINT_TYPE_Q4_0 ? 8 : 16);
    a.off = has_offset(type) ? _mm256_maddubs_epi16(offset, a.q) : _mm256_setzero_si256();
    return a;
}

// 16 int16 lanes, each the sum of two adjacent products (levels with the offset removed):
// at most 2 * 31 * 127 (Q5_1) or 2 * 128 * 127 (Q8_0) in magnitude.
MINT_AVX2_INLINE __m256i legacy_pairs(mint_type type, legacy_w w, legacy_a a) {
    __m256i p;
    if (is_signed(type))
        p = _mm256_maddubs_epi16(w.u, _mm256_sign_epi8(a.q, w.sign));
    else
        p = _mm256_maddubs_epi16(w.u, a.q);
    if (has_offset(type)) p = _mm256_sub_epi16(p, a.off);
    return p;
}

// Four rows' products of one block folded into [r0 r1 r2 r3 | r0 r1 r2 r3] int32: low half the
// row's elements 0..15, high half 16..31 (no instruction here crosses the 128-bit halves). Up to
// Q5_1 (and MXFP4, 8 * 12 * 127) a sum of 8 products stays below 2^15 (8 * 31 * 127 = 31496),
// so the first two folds can be 16-bit vphaddw and one vpmaddwd widens the result, instead of
// widening each row; Q8_0's and IQ4_NL's products (up to 128 * 127) only allow the pairs in 16
// bits, so they widen first.
MINT_AVX2_INLINE __m256i legacy_fold4(mint_type type, const __m256i p[4]) {
    const __m256i ones = _mm256_set1_epi16(1);
    if (type == MINT_TYPE_Q8_0 || type == MINT_TYPE_IQ4_NL) {
        const __m256i q0 = _mm256_madd_epi16(p[0], ones), q1 = _mm256_madd_epi16(p[1], ones);
        const __m256i q2 = _mm256_madd_epi16(p[2], ones), q3 = _mm256_madd_epi16(p[3], ones);
        return _mm256_hadd_epi32(_mm256_hadd_epi32(q0, q1), _mm256_hadd_epi32(q2, q3));
    }
    const __m256i h =
        _mm256_hadd_epi16(_mm256_hadd_epi16(p[0], p[1]), _mm256_hadd_epi16(p[2], p[3]));
    return _mm256_madd_epi16(h, ones);
}

// Four f16 values (raw bits) as f32 [v0 v1 v2 v3 | v0 v1 v2 v3], the layout of a 4-row
// accumulator.
MINT_AVX2_INLINE __m256 f16x4_twice(const uint16_t v[4]) {
    const uint64_t bits =
        (uint64_t)v[0] | (uint64_t)v[1] << 16 | (uint64_t)v[2] << 32 | (uint64_t)v[3] << 48;
    return _mm256_cvtph_ps(_mm_set1_epi64x((long long)bits));
}

// Four E8M0 exponents as their f32 half-scales [v0 v1 v2 v3 | v0 v1 v2 v3] (MXFP4's d_w).
MINT_AVX2_INLINE __m256 e8m0x4_twice(const uint16_t e[4]) {
    const __m128 v =
        _mm_setr_ps(mint_e8m0_half_to_f32((uint8_t)e[0]), mint_e8m0_half_to_f32((uint8_t)e[1]),
                    mint_e8m0_half_to_f32((uint8_t)e[2]), mint_e8m0_half_to_f32((uint8_t)e[3]));
    return _mm256_set_m128(v, v);
}

// Four f16 values as f32 [v0 v1 v2 v3 | 0 0 0 0]: the *_1 types add m_w * s_a into the low half
// only, once per block.
MINT_AVX2_INLINE __m256 f16x4_low(const uint16_t v[4]) {
    const uint64_t bits =
        (uint64_t)v[0] | (uint64_t)v[1] << 16 | (uint64_t)v[2] << 32 | (uint64_t)v[3] << 48;
    return _mm256_cvtph_ps(_mm_set_epi64x(0, (long long)bits));
}

// R x C tile (R <= 4 rows share the accumulator of each column). Per block: the R weight blocks
// are unpacked once and kept in registers; each of the C activation blocks is loaded once and
// multiplied with all of them.
MINT_AVX2_INLINE void legacy_tile(const int R, const int C, mint_type type, const mint_tile *t) {
    const size_t bytes = block_bytes(type);
    __m256 acc[MINT_TILE_CMAX];
#pragma GCC unroll 8
    for (int c = 0; c < C; c++) acc[c] = _mm256_setzero_ps();
    for (int64_t ib = 0; ib < t->n / MINT_QK; ib++) {
        prefetch_next_rows(R, C, t, (size_t)ib * bytes);
        legacy_w w[4];
        uint16_t d[4] = {0, 0, 0, 0}, m[4] = {0, 0, 0, 0};
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
            w[r] = legacy_unpack(type, t->w + r * t->w_stride, ib, &d[r], &m[r]);
        const __m256 dw = type == MINT_TYPE_MXFP4 ? e8m0x4_twice(d) : f16x4_twice(d);
        const __m256 mw = has_min(type) ? f16x4_low(m) : _mm256_setzero_ps();
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) {
            const legacy_a a = legacy_act(type, t->a + c * t->a_stride, ib);
            __m256i p[4];
#pragma GCC unroll 4
            for (int r = 0; r < 4; r++)
                p[r] = r < R ? legacy_pairs(type, w[r], a) : _mm256_setzero_si256();
            const __m256i sum4 = legacy_fold4(type, p);
            acc[c] = _mm256_fmadd_ps(_mm256_mul_ps(dw, a.d), _mm256_cvtepi32_ps(sum4), acc[c]);
            if (has_min(type)) acc[c] = _mm256_fmadd_ps(mw, a.s, acc[c]);
        }
    }
#pragma GCC unroll 8
    for (int c = 0; c < C; c++) {
        const __m128 s =
            _mm_add_ps(_mm256_castps256_ps128(acc[c]), _mm256_extractf128_ps(acc[c], 1));
        float *y = t->y + c * t->y_stride;
        if (R == 4) {
            _mm_storeu_ps(y, s);
        } else {
            float v[4];
            _mm_storeu_ps(v, s);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) y[r] = v[r];
        }
    }
}

MINT_AVX2_INLINE void q4_0_tile(const int R, const int C, const mint_tile *t) {
    legacy_tile(R, C, MINT_TYPE_Q4_0, t);
}
MINT_AVX2_INLINE void q4_1_tile(const int R, const int C, const mint_tile *t) {
    legacy_tile(R, C, MINT_TYPE_Q4_1, t);
}
MINT_AVX2_INLINE void q5_0_tile(const int R, const int C, const mint_tile *t) {
    legacy_tile(R, C, MINT_TYPE_Q5_0, t);
}
MINT_AVX2_INLINE void q5_1_tile(const int R, const int C, const mint_tile *t) {
    legacy_tile(R, C, MINT_TYPE_Q5_1, t);
}
MINT_AVX2_INLINE void q8_0_tile(const int R, const int C, const mint_tile *t) {
    legacy_tile(R, C, MINT_TYPE_Q8_0, t);
}
MINT_AVX2_INLINE void mxfp4_tile(const int R, const int C, const mint_tile *t) {
    legacy_tile(R, C, MINT_TYPE_MXFP4, t);
}
MINT_AVX2_INLINE void iq4_nl_tile(const int R, const int C, const mint_tile *t) {
    legacy_tile(R, C, MINT_TYPE_IQ4_NL, t);
}

MINT_TILE_KERNELS(q4_0_q8_0, q4_0_tile, 4, 8, 4)
MINT_TILE_KERNELS(q4_1_q8_1, q4_1_tile, 4, 8, 4)
MINT_TILE_KERNELS(q5_0_q8_0, q5_0_tile, 4, 8, 4)
MINT_TILE_KERNELS(q5_1_q8_1, q5_1_tile, 4, 8, 4)
MINT_TILE_KERNELS(q8_0_q8_0, q8_0_tile, 4, 8, 4)
MINT_TILE_KERNELS(mxfp4_q8_0, mxfp4_tile, 4, 8, 4)
MINT_TILE_KERNELS(iq4_nl_q8_0, iq4_nl_tile, 4, 8, 4)
