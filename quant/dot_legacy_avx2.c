// dot_legacy_avx2.c - dot products and gemm tiles of the 32-element block types (Q4_0, Q4_1,
// Q5_0, Q5_1, Q8_0) with Q8_0 / Q8_1 activations, for AVX2 (Haswell, Zen 1 and later).
//
// The integer dot of one block is the classic AVX2 sequence: vpmaddubsw multiplies unsigned
// weight bytes by signed activation bytes and adds adjacent pairs into int16, vpmaddwd with ones
// widens and adds pairs again into 8 int32 lanes. No int16 pair can saturate: weight levels are
// at most 31 (|w| at most 128 for Q8_0) and activations are at most 127 in magnitude. Offset
// levels (Q4_0: q - 8, Q5_0: q - 16) are handled as sum(q * a) - offset * sum(a), the offset
// term taken per activation block with the same vpmaddubsw (offset bytes x a) and subtracted in
// int16 before widening; that keeps the multiply unsigned x signed and costs one instruction
// per (row, column). The 8 lanes are converted to f32 and added with one FMA scaled by
// d_w * d_a into the pair's accumulator, then summed with hsum_f32x8 at the end.
#include "quant/simd_avx2.h"

// sum over adjacent int16 pairs -> 8 int32 lanes, as f32.
MINT_AVX2_INLINE __m256 widen_sum_f32(__m256i p16) {
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, _mm256_set1_epi16(1)));
}

// ---------------------------------------------------------------------------------------------
// Q4_0 and Q5_0 (levels with an offset) x Q8_0

// Bytes per block of a legacy weight type.
MINT_AVX2_INLINE size_t block_bytes(mint_type type) {
    switch (type) {
    case MINT_TYPE_Q4_0:
        return sizeof(mint_block_q4_0);
    case MINT_TYPE_Q4_1:
        return sizeof(mint_block_q4_1);
    case MINT_TYPE_Q5_0:
        return sizeof(mint_block_q5_0);
    default:
        return sizeof(mint_block_q5_1);
    }
}

// Weight levels of block ib of a row: Q4_0's nibbles (0..15) or Q5_0's nibble | 5th bit << 4
// (0..31), one byte per element in element order.
MINT_AVX2_INLINE __m256i legacy_levels(mint_type type, const uint8_t *row, int64_t ib) {
    if (type == MINT_TYPE_Q4_0) return nibbles32(((const mint_block_q4_0 *)row)[ib].qs);
    const mint_block_q5_0 *b = (const mint_block_q5_0 *)row + ib;
    return _mm256_or_si256(nibbles32(b->qs), bits_to_0x10(load_u32(b->qh)));
}

MINT_AVX2_INLINE const uint16_t *legacy_d(mint_type type, const uint8_t *row, int64_t ib) {
    if (type == MINT_TYPE_Q4_0) return &((const mint_block_q4_0 *)row)[ib].d;
    return &((const mint_block_q5_0 *)row)[ib].d;
}

// R x C tile of Q4_0 or Q5_0 rows against Q8_0 rows. Per block: R weight blocks are unpacked
// once and kept in registers, then for each of the C activation blocks the offset term
// offset * a (in int16 pairs) is computed once and the R pair products reuse it.
MINT_AVX2_INLINE void offset_tile(const int R, const int C, mint_type type,
                                  const mint_avx2_tile *t) {
    const __m256i offset = _mm256_set1_epi8(type == MINT_TYPE_Q4_0 ? 8 : 16);
    __m256 acc[4][4];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) acc[r][c] = _mm256_setzero_ps();
    for (int64_t ib = 0; ib < t->n / MINT_QK; ib++) {
        prefetch_next_rows(R, C, t, (size_t)ib * block_bytes(type));
        __m256i q[4];
        __m256 dw[4];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            q[r] = legacy_levels(type, t->w + r * t->w_stride, ib);
            dw[r] = bcast_f16(legacy_d(type, t->w + r * t->w_stride, ib));
        }
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) {
            const mint_block_q8_0 *ab = (const mint_block_q8_0 *)(t->a + c * t->a_stride) + ib;
            const __m256i av = _mm256_loadu_si256((const __m256i *)ab->qs);
            const __m256i off = _mm256_maddubs_epi16(offset, av);
            const __m256 da = bcast_f16(&ab->d);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(q[r], av), off);
                acc[r][c] = _mm256_fmadd_ps(_mm256_mul_ps(dw[r], da), widen_sum_f32(p), acc[r][c]);
            }
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = hsum_f32x8(acc[r][c]);
}

MINT_AVX2_INLINE void q4_0_tile(const int R, const int C, const mint_avx2_tile *t) {
    offset_tile(R, C, MINT_TYPE_Q4_0, t);
}
MINT_AVX2_INLINE void q5_0_tile(const int R, const int C, const mint_avx2_tile *t) {
    offset_tile(R, C, MINT_TYPE_Q5_0, t);
}

MINT_AVX2_TILES(q4_0_tile, 4, 2)
MINT_AVX2_TILES(q5_0_tile, 4, 2)

// ---------------------------------------------------------------------------------------------
// Q4_1 and Q5_1 (levels with a min) x Q8_1: d_w * d_a * sum(q * a) + m_w * s_a per block.

MINT_AVX2_INLINE __m256i min_levels(mint_type type, const uint8_t *row, int64_t ib) {
    if (type == MINT_TYPE_Q4_1) return nibbles32(((const mint_block_q4_1 *)row)[ib].qs);
    const mint_block_q5_1 *b = (const mint_block_q5_1 *)row + ib;
    return _mm256_or_si256(nibbles32(b->qs), bits_to_0x10(load_u32(b->qh)));
}

// d and m of block ib (the two types start with the same two f16 fields).
MINT_AVX2_INLINE const uint16_t *min_dm(mint_type type, const uint8_t *row, int64_t ib) {
    if (type == MINT_TYPE_Q4_1) return &((const mint_block_q4_1 *)row)[ib].d;
    return &((const mint_block_q5_1 *)row)[ib].d;
}

// R x C tile of Q4_1 or Q5_1 rows against Q8_1 rows. The m_w * s_a term is one product per
// block: it is added into lane 0 of the accumulator only (the other lanes add 0 * s_a), with the
// same FMA in every tile shape.
MINT_AVX2_INLINE void min_tile(const int R, const int C, mint_type type, const mint_avx2_tile *t) {
    __m256 acc[4][4];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) acc[r][c] = _mm256_setzero_ps();
    for (int64_t ib = 0; ib < t->n / MINT_QK; ib++) {
        prefetch_next_rows(R, C, t, (size_t)ib * block_bytes(type));
        __m256i q[4];
        __m256 dw[4], mw[4];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const uint16_t *dm = min_dm(type, t->w + r * t->w_stride, ib);
            q[r] = min_levels(type, t->w + r * t->w_stride, ib);
            dw[r] = bcast_f16(&dm[0]);
            mw[r] = _mm256_zextps128_ps256(_mm_cvtph_ps(_mm_cvtsi32_si128(dm[1])));
        }
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) {
            const mint_block_q8_1 *ab = (const mint_block_q8_1 *)(t->a + c * t->a_stride) + ib;
            const __m256i av = _mm256_loadu_si256((const __m256i *)ab->qs);
            const __m256 da = bcast_f16(&ab->d), sa = bcast_f16(&ab->s);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const __m256 sumi = widen_sum_f32(_mm256_maddubs_epi16(q[r], av));
                acc[r][c] = _mm256_fmadd_ps(_mm256_mul_ps(dw[r], da), sumi, acc[r][c]);
                acc[r][c] = _mm256_fmadd_ps(mw[r], sa, acc[r][c]);
            }
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = hsum_f32x8(acc[r][c]);
}

MINT_AVX2_INLINE void q4_1_tile(const int R, const int C, const mint_avx2_tile *t) {
    min_tile(R, C, MINT_TYPE_Q4_1, t);
}
MINT_AVX2_INLINE void q5_1_tile(const int R, const int C, const mint_avx2_tile *t) {
    min_tile(R, C, MINT_TYPE_Q5_1, t);
}

MINT_AVX2_TILES(q4_1_tile, 4, 2)
MINT_AVX2_TILES(q5_1_tile, 4, 2)

// ---------------------------------------------------------------------------------------------
// Q8_0 x Q8_0. vpmaddubsw needs one unsigned operand, so the sign of w moves onto a:
// |w| * (a * sign(w)) (vpsignb). |w| is at most 128 and fits an unsigned byte even for
// w = -128; a is never -128 (activations are at most 127 in magnitude), so negating it cannot
// overflow, and a pair is at most 2 * 128 * 127 < 2^15.

MINT_AVX2_INLINE void q8_0_tile(const int R, const int C, const mint_avx2_tile *t) {
    __m256 acc[4][4];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) acc[r][c] = _mm256_setzero_ps();
    for (int64_t ib = 0; ib < t->n / MINT_QK; ib++) {
        prefetch_next_rows(R, C, t, (size_t)ib * sizeof(mint_block_q8_0));
        __m256i qw[4], aw[4];
        __m256 dw[4];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const mint_block_q8_0 *b = (const mint_block_q8_0 *)(t->w + r * t->w_stride) + ib;
            qw[r] = _mm256_loadu_si256((const __m256i *)b->qs);
            aw[r] = _mm256_abs_epi8(qw[r]);
            dw[r] = bcast_f16(&b->d);
        }
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) {
            const mint_block_q8_0 *ab = (const mint_block_q8_0 *)(t->a + c * t->a_stride) + ib;
            const __m256i av = _mm256_loadu_si256((const __m256i *)ab->qs);
            const __m256 da = bcast_f16(&ab->d);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const __m256i p = _mm256_maddubs_epi16(aw[r], _mm256_sign_epi8(av, qw[r]));
                acc[r][c] = _mm256_fmadd_ps(_mm256_mul_ps(dw[r], da), widen_sum_f32(p), acc[r][c]);
            }
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = hsum_f32x8(acc[r][c]);
}

MINT_AVX2_TILES(q8_0_tile, 4, 2)

// ---------------------------------------------------------------------------------------------
// Entry points: vec_dot is the 1 x 1 tile, gemm covers the output with the type's tiles.

MINT_AVX2_ENTRY_POINTS(q4_0_q8_0, q4_0_tile, 4, 2)
MINT_AVX2_ENTRY_POINTS(q4_1_q8_1, q4_1_tile, 4, 2)
MINT_AVX2_ENTRY_POINTS(q5_0_q8_0, q5_0_tile, 4, 2)
MINT_AVX2_ENTRY_POINTS(q5_1_q8_1, q5_1_tile, 4, 2)
MINT_AVX2_ENTRY_POINTS(q8_0_q8_0, q8_0_tile, 4, 2)
