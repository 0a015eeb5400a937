// dot_k_avx2.c - dot products and gemm tiles of the K-quants (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K)
// with Q8_K activations, for AVX2 (Haswell, Zen 1 and later).
//
// A super-block of 256 elements is 8 groups of 32. For every group the weight levels are unpacked
// into 32 unsigned bytes (0..3, 0..7, 0..15, 0..31 or 0..63) and multiplied with the group's 32
// activation bytes by vpmaddubsw (u8 x s8, adjacent pairs into int16: at most 2 * 63 * 127, no
// saturation); vpmaddwd against the sub-block scales then widens to int32 *and* applies the
// integer scale in the same instruction, so the whole super-block's scaled sum
//   isum = sum over sub-blocks of scale * sum(level * a)
// accumulates exactly in 8 int32 lanes. The types whose levels carry an offset (Q3_K: level - 4,
// Q6_K: level - 32) subtract offset * sum(scale * bsum) from Q8_K's bsums; the types with mins
// (Q2_K, Q4_K, Q5_K) compute summs = sum(min * bsum) the same way (one vpmaddwd). Then per
// super-block the pair's f32 accumulator gets (d_w * d_a) * isum and, for mins,
// -(dmin_w * d_a) * summs, each one FMA over 8 lanes; hsum_f32x8 reduces it at the end.
//
// The scales are unpacked once per row and super-block into 16 int16 values (one per 16-element
// sub-block; the 32-element types repeat each scale twice); each group's vpmaddwd operand (the
// scale of its first 16 elements in the low 128-bit half, of its last 16 in the high half:
// vpmaddwd pairs never cross the halves) is one vpshufb of those, made when the group is used
// (precomputing all 8 per row was slower: they were spilled and reloaded).
//
// Tiles: a batch uses 1 row x 8 columns. The work is bound by the two multiplies per group and
// column (vpmaddubsw, vpmaddwd); sharing one row's unpacked levels and scales over 8 columns beat
// every multi-row shape measured (2x4 .. 4x8). One token uses 4 x 1 tiles.
#include "quant/simd_avx2.h"

#define MINT_LEVEL_NAME(name) name##_avx2

// What one weight row's super-block contributes, unpacked once and reused for C columns.
typedef struct k_row {
    __m256i lo, hi; // [16] int16 sub-block scales 0..7 / 8..15, each in both 128-bit halves
    __m256i bmul;   // [16] int16 multipliers of Q8_K's bsums (mins, or scales for the offset)
    __m256 d;       // f32 d_w, broadcast
    __m256 dmin;    // f32 dmin_w, broadcast (types with mins)
} k_row;

MINT_AVX2_INLINE bool has_mins(mint_type type) {
    return type == MINT_TYPE_Q2_K || type == MINT_TYPE_Q4_K || type == MINT_TYPE_Q5_K;
}

MINT_AVX2_INLINE size_t k_block_bytes(mint_type type) {
    switch (type) {
    case MINT_TYPE_Q2_K:
        return sizeof(mint_block_q2_K);
    case MINT_TYPE_Q3_K:
        return sizeof(mint_block_q3_K);
    case MINT_TYPE_Q4_K:
        return sizeof(mint_block_q4_K);
    case MINT_TYPE_Q5_K:
        return sizeof(mint_block_q5_K);
    default:
        return sizeof(mint_block_q6_K);
    }
}

// ---------------------------------------------------------------------------------------------
// Scales

// The vpmaddwd operand of group g (elements 32g..32g+31) from the 16 int16 sub-block scales
// s0..s15: s[2g] in the low half, s[2g+1] in the high half. vpshufb stays inside 128-bit halves,
// so k_prepare broadcast each half of the scales to both halves (lo: s0..s7, hi: s8..s15); one
// shuffle then picks the two words.
MINT_AVX2_INLINE __m256i group_scale(const k_row *row, int g) {
    const int w = 2 * (g % 4); // word index of s[2g] within its half
    const short pick_lo = (short)((2 * w) | (2 * w + 1) << 8);
    const short pick_hi = (short)((2 * w + 2) | (2 * w + 3) << 8);
    const __m256i pick = _mm256_set_m128i(_mm_set1_epi16(pick_hi), _mm_set1_epi16(pick_lo));
    return _mm256_shuffle_epi8(g < 4 ? row->lo : row->hi, pick);
}

// 8 unsigned bytes -> 16 int16 with each value twice (a 32-element sub-block's scale for both of
// its 16-element halves).
MINT_AVX2_INLINE __m256i twice_u8_to_i16(uint64_t bytes) {
    const __m128i b = _mm_cvtsi64_si128((long long)bytes);
    return _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(b, b));
}

// Q4_K / Q5_K: the 12 packed bytes as 8 six-bit scales and 8 six-bit mins (one per byte, as
// little-endian words). Sub-blocks 0..3 keep their values in the low 6 bits of bytes 0..3
// (scales) and 4..7 (mins); sub-blocks 4..7 take their low 4 bits from the nibbles of bytes
// 8..11 and their top 2 bits from the top 2 bits of bytes 0..3 (scales) or 4..7 (mins).
MINT_AVX2_INLINE void k4_scales_mins(const uint8_t *q, uint64_t *scales, uint64_t *mins) {
    const uint32_t u0 = load_u32(q), u1 = load_u32(q + 4), u2 = load_u32(q + 8);
    const uint32_t sc_hi = (u2 & 0x0F0F0F0F) | ((u0 >> 2) & 0x30303030);
    const uint32_t mn_hi = ((u2 >> 4) & 0x0F0F0F0F) | ((u1 >> 2) & 0x30303030);
    *scales = (uint64_t)(u0 & 0x3F3F3F3F) | (uint64_t)sc_hi << 32;
    *mins = (uint64_t)(u1 & 0x3F3F3F3F) | (uint64_t)mn_hi << 32;
}

// Q3_K: the 16 six-bit scales minus their bias 32, as 16 int16. Scale k = 4j + i has its low 4
// bits in a nibble of bytes 0..7 (j = 0, 1: low nibbles of bytes 0..3, 4..7; j = 2, 3: high
// nibbles) and its top 2 bits at bits 2j of byte 8 + i.
MINT_AVX2_INLINE __m256i q3_scales(const uint8_t *q) {
    const uint32_t u0 = load_u32(q), u1 = load_u32(q + 4), u2 = load_u32(q + 8);
    const uint32_t w0 = (u0 & 0x0F0F0F0F) | ((u2 << 4) & 0x30303030);
    const uint32_t w1 = (u1 & 0x0F0F0F0F) | ((u2 << 2) & 0x30303030);
    const uint32_t w2 = ((u0 >> 4) & 0x0F0F0F0F) | (u2 & 0x30303030);
    const uint32_t w3 = ((u1 >> 4) & 0x0F0F0F0F) | ((u2 >> 2) & 0x30303030);
    const __m128i b =
        _mm_sub_epi8(_mm_set_epi32((int)w3, (int)w2, (int)w1, (int)w0), _mm_set1_epi8(32));
    return _mm256_cvtepi8_epi16(b);
}

// Unpacks row r's super-block: scales, bsums multipliers and f32 scales.
MINT_AVX2_INLINE void k_prepare(mint_type type, const uint8_t *blk, k_row *row) {
    __m256i s16;
    switch (type) {
    case MINT_TYPE_Q2_K: {
        const mint_block_q2_K *b = (const mint_block_q2_K *)blk;
        const __m128i sc = _mm_loadu_si128((const __m128i *)b->scales);
        const __m128i m4 = _mm_set1_epi8(0x0F);
        s16 = _mm256_cvtepu8_epi16(_mm_and_si128(sc, m4));
        row->bmul = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc, 4), m4));
        row->d = bcast_f16(&b->d);
        row->dmin = bcast_f16(&b->dmin);
        break;
    }
    case MINT_TYPE_Q3_K: {
        const mint_block_q3_K *b = (const mint_block_q3_K *)blk;
        s16 = q3_scales(b->scales);
        row->bmul = s16;
        row->d = bcast_f16(&b->d);
        break;
    }
    case MINT_TYPE_Q4_K:
    case MINT_TYPE_Q5_K: {
        // Q4_K and Q5_K share the first three fields (d, dmin, scales).
        const mint_block_q4_K *b = (const mint_block_q4_K *)blk;
        uint64_t sc, mn;
        k4_scales_mins(b->scales, &sc, &mn);
        s16 = twice_u8_to_i16(sc);
        row->bmul = twice_u8_to_i16(mn);
        row->d = bcast_f16(&b->d);
        row->dmin = bcast_f16(&b->dmin);
        break;
    }
    default: {
        const mint_block_q6_K *b = (const mint_block_q6_K *)blk;
        s16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)b->scales));
        row->bmul = s16;
        row->d = bcast_f16(&b->d);
        break;
    }
    }
    row->lo = _mm256_permute2x128_si256(s16, s16, 0x00);
    row->hi = _mm256_permute2x128_si256(s16, s16, 0x11);
}

// ---------------------------------------------------------------------------------------------
// Levels

// Bits of every byte of v shifted left by s (negative: right) and masked; 16-bit shifts are safe
// because the mask keeps only bits that came from the same byte.
MINT_AVX2_INLINE __m256i shift_mask(__m256i v, int s, char mask) {
    if (s > 0) v = _mm256_slli_epi16(v, s);
    if (s < 0) v = _mm256_srli_epi16(v, -s);
    return _mm256_and_si256(v, _mm256_set1_epi8(mask));
}

// The 32 unsigned levels of group g (elements 32g..32g+31) of a super-block, in element order.
MINT_AVX2_INLINE __m256i k_levels(mint_type type, const uint8_t *blk, int g) {
    switch (type) {
    case MINT_TYPE_Q2_K: {
        // Element 128n + 32j + l: bits 2j of qs[32n + l].
        const mint_block_q2_K *b = (const mint_block_q2_K *)blk;
        const __m256i raw = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * (g / 4)));
        return shift_mask(raw, -2 * (g % 4), 3);
    }
    case MINT_TYPE_Q3_K: {
        // As Q2_K, plus bit g of hmask[l] as the level's bit 2.
        const mint_block_q3_K *b = (const mint_block_q3_K *)blk;
        const __m256i raw = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * (g / 4)));
        const __m256i hm = _mm256_loadu_si256((const __m256i *)b->hmask);
        return _mm256_or_si256(shift_mask(raw, -2 * (g % 4), 3), shift_mask(hm, 2 - g, 4));
    }
    case MINT_TYPE_Q4_K: {
        // Element 32g + l: low nibble of qs[32(g/2) + l] for even g, high nibble for odd g.
        const mint_block_q4_K *b = (const mint_block_q4_K *)blk;
        const __m256i raw = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * (g / 2)));
        return shift_mask(raw, -4 * (g % 2), 0x0F);
    }
    case MINT_TYPE_Q5_K: {
        // As Q4_K, plus bit g of qh[l] as the level's bit 4.
        const mint_block_q5_K *b = (const mint_block_q5_K *)blk;
        const __m256i raw = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * (g / 2)));
        const __m256i qh = _mm256_loadu_si256((const __m256i *)b->qh);
        return _mm256_or_si256(shift_mask(raw, -4 * (g % 2), 0x0F), shift_mask(qh, 4 - g, 0x10));
    }
    default: {
        // Q6_K, element 128h + 32t + l: low 4 bits from ql[64h + l] (t even) or ql[64h + 32 + l]
        // (t odd), low nibble for t < 2 and high for t >= 2; top 2 bits at bits 2t of qh[32h + l].
        const mint_block_q6_K *b = (const mint_block_q6_K *)blk;
        const int h = g / 4, t = g % 4;
        const __m256i ql = _mm256_loadu_si256((const __m256i *)(b->ql + 64 * h + 32 * (t % 2)));
        const __m256i qh = _mm256_loadu_si256((const __m256i *)(b->qh + 32 * h));
        return _mm256_or_si256(shift_mask(ql, -4 * (t / 2), 0x0F), shift_mask(qh, 4 - 2 * t, 0x30));
    }
    }
}

// ---------------------------------------------------------------------------------------------
// The tile

// R x C tile of K-quant rows against Q8_K rows. Per super-block: R rows are unpacked into k_row,
// then for every group each row's 32 levels are built once and multiplied with the C columns'
// activation bytes into R x C int32 accumulators; the float work is once per super-block.
MINT_AVX2_INLINE void k_tile(const int R, const int C, mint_type type, const mint_tile *t) {
    const size_t bytes = k_block_bytes(type);
    // Q3_K and Q6_K sum level * a: subtract offset * scale * bsum (offset 4 = 1 << 2 or 32).
    const int offset_shift = type == MINT_TYPE_Q3_K ? 2 : 5;
    __m256 acc[MINT_TILE_RMAX][MINT_TILE_CMAX];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) acc[r][c] = _mm256_setzero_ps();
    for (int64_t i = 0; i < t->n / MINT_QK_K; i++) {
        for (size_t off = 0; off < bytes; off += 64)
            prefetch_next_rows(R, C, t, (size_t)i * bytes + off);
        k_row row[MINT_TILE_RMAX];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) k_prepare(type, t->w + r * t->w_stride + i * bytes, &row[r]);
        const mint_block_q8_K *a[MINT_TILE_CMAX];
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) a[c] = (const mint_block_q8_K *)(t->a + c * t->a_stride) + i;

        __m256i isum[MINT_TILE_RMAX][MINT_TILE_CMAX];
#pragma GCC unroll 4
        for (int r = 0; r < R; r++)
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) isum[r][c] = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int g = 0; g < 8; g++) {
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const __m256i q = k_levels(type, t->w + r * t->w_stride + i * bytes, g);
                const __m256i scale = group_scale(&row[r], g);
#pragma GCC unroll 8
                for (int c = 0; c < C; c++) {
                    const __m256i av = _mm256_loadu_si256((const __m256i *)(a[c]->qs + 32 * g));
                    const __m256i p = _mm256_maddubs_epi16(q, av);
                    isum[r][c] = _mm256_add_epi32(isum[r][c], _mm256_madd_epi16(p, scale));
                }
            }
        }
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) {
            const __m256i bsums = load_bsums(a[c]);
            const __m256 da = _mm256_set1_ps(a[c]->d);
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const __m256i bm = _mm256_madd_epi16(row[r].bmul, bsums);
                __m256i s = isum[r][c];
                if (!has_mins(type)) s = _mm256_sub_epi32(s, _mm256_slli_epi32(bm, offset_shift));
                acc[r][c] =
                    _mm256_fmadd_ps(_mm256_mul_ps(row[r].d, da), _mm256_cvtepi32_ps(s), acc[r][c]);
                if (has_mins(type))
                    acc[r][c] = _mm256_fnmadd_ps(_mm256_mul_ps(row[r].dmin, da),
                                                 _mm256_cvtepi32_ps(bm), acc[r][c]);
            }
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) t->y[c * t->y_stride + r] = hsum_f32x8(acc[r][c]);
}

MINT_AVX2_INLINE void q2_K_tile(const int R, const int C, const mint_tile *t) {
    k_tile(R, C, MINT_TYPE_Q2_K, t);
}
MINT_AVX2_INLINE void q3_K_tile(const int R, const int C, const mint_tile *t) {
    k_tile(R, C, MINT_TYPE_Q3_K, t);
}
MINT_AVX2_INLINE void q4_K_tile(const int R, const int C, const mint_tile *t) {
    k_tile(R, C, MINT_TYPE_Q4_K, t);
}
MINT_AVX2_INLINE void q5_K_tile(const int R, const int C, const mint_tile *t) {
    k_tile(R, C, MINT_TYPE_Q5_K, t);
}
MINT_AVX2_INLINE void q6_K_tile(const int R, const int C, const mint_tile *t) {
    k_tile(R, C, MINT_TYPE_Q6_K, t);
}

MINT_TILE_KERNELS(q2_K_q8_K, q2_K_tile, 1, 8, 4)
MINT_TILE_KERNELS(q3_K_q8_K, q3_K_tile, 1, 8, 4)
MINT_TILE_KERNELS(q4_K_q8_K, q4_K_tile, 1, 8, 4)
MINT_TILE_KERNELS(q5_K_q8_K, q5_K_tile, 1, 8, 4)
MINT_TILE_KERNELS(q6_K_q8_K, q6_K_tile, 1, 8, 4)
