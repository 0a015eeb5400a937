// dot_iq2_avx2.c - IQ2_XXS, IQ2_XS and IQ2_S . Q8_K dot products and gemm tiles for AVX2
// (quant/dot_iq2.h).
//
// A super-block is 8 chunks of 32 elements, each 4 groups of 8. A chunk's 4 grid points (8
// magnitude bytes each, 8..43) are gathered from the grid table into one 256-bit vector, one
// point per 64-bit lane; the 4 sign bytes are spread over their lanes (a byte times
// 0x0101010101010101 repeats it) and compared bit by bit with 1, 2, 4, ... 128, giving -1 where an
// element is negative and, or-ed with 1, +1 elsewhere. vpsignb puts the signs on the activations
// (Q8_K's are never -128, so negating cannot overflow), vpmaddubsw multiplies by the unsigned
// magnitudes into int16 pairs (at most 2 * 43 * 127, no saturation), and vpmaddwd against the
// chunk's odd scales 2 ls + 1 (one per 32 elements for IQ2_XXS, one per 16 for the others) widens
// to int32. The super-block's sum, below 256 * 43 * 127 * 31 < 2^31, is exact; the f32 steps are
// the reference's (quant/dot_iq2.h), so the bits are too.
//
// Tiles: 1 row x up to 4 columns for a batch (a row's chunks are decoded once for its columns).
#include "quant/dot_iq2.h"
#include "quant/fp16.h"
#include "quant/iq2_tables.h"
#include "quant/simd_avx2.h"

#define MINT_LEVEL_NAME(name) name##_avx2

// One chunk of 32 weights: magnitudes, +-1 signs, and the int16 scales of its two halves.
typedef struct iq2_chunk {
    __m256i mag;   // [32] grid bytes 8..43
    __m256i sign;  // [32] -1 or +1
    __m256i scale; // [16] int16: 2 ls + 1 of elements 0..15 (low lane), 16..31 (high lane)
} iq2_chunk;

MINT_AVX2_INLINE __m256i iq2_signs(unsigned s0, unsigned s1, unsigned s2, unsigned s3) {
    const uint64_t rep = 0x0101010101010101ull;
    const __m256i bits = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    const __m256i s = _mm256_set_epi64x((long long)(s3 * rep), (long long)(s2 * rep),
                                        (long long)(s1 * rep), (long long)(s0 * rep));
    const __m256i neg = _mm256_cmpeq_epi8(_mm256_and_si256(s, bits), bits);
    return _mm256_or_si256(neg, _mm256_set1_epi8(1));
}

MINT_AVX2_INLINE __m256i iq2_points(const uint64_t *grid, unsigned i0, unsigned i1, unsigned i2,
                                    unsigned i3) {
    return _mm256_set_epi64x((long long)grid[i3], (long long)grid[i2], (long long)grid[i1],
                             (long long)grid[i0]);
}

MINT_AVX2_INLINE __m256i iq2_scales(int lo, int hi) {
    return _mm256_setr_m128i(_mm_set1_epi16((short)lo), _mm_set1_epi16((short)hi));
}

MINT_AVX2_INLINE void iq2_xxs_chunk(const mint_block_iq2_xxs *b, int ib, iq2_chunk *c) {
    const uint8_t *q = (const uint8_t *)(b->qs + 4 * ib);
    const uint32_t idx = load_u32(q), sg = load_u32(q + 4);
    const uint8_t *ks = mint_iq2_ksigns;
    c->mag = iq2_points(mint_iq2xxs_grid, idx & 0xFF, idx >> 8 & 0xFF, idx >> 16 & 0xFF, idx >> 24);
    c->sign = iq2_signs(ks[sg & 127], ks[sg >> 7 & 127], ks[sg >> 14 & 127], ks[sg >> 21 & 127]);
    const int ls = 2 * (int)(sg >> 28) + 1;
    c->scale = iq2_scales(ls, ls);
}

MINT_AVX2_INLINE void iq2_xs_chunk(const mint_block_iq2_xs *b, int ib, iq2_chunk *c) {
    const uint16_t *q = b->qs + 4 * ib;
    const uint8_t *ks = mint_iq2_ksigns;
    c->mag = iq2_points(mint_iq2xs_grid, q[0] & 511u, q[1] & 511u, q[2] & 511u, q[3] & 511u);
    c->sign = iq2_signs(ks[q[0] >> 9], ks[q[1] >> 9], ks[q[2] >> 9], ks[q[3] >> 9]);
    c->scale = iq2_scales(2 * (b->scales[ib] & 0xF) + 1, 2 * (b->scales[ib] >> 4) + 1);
}

MINT_AVX2_INLINE void iq2_s_chunk(const mint_block_iq2_s *b, int ib, iq2_chunk *c) {
    const uint8_t *q = b->qs + 4 * ib, *s = b->qs + MINT_QK_K / 8 + 4 * ib;
    const unsigned h = b->qh[ib];
    c->mag = iq2_points(mint_iq2s_grid, q[0] | (h << 8 & 0x300), q[1] | (h << 6 & 0x300),
                        q[2] | (h << 4 & 0x300), q[3] | (h << 2 & 0x300));
    c->sign = iq2_signs(s[0], s[1], s[2], s[3]);
    c->scale = iq2_scales(2 * (b->scales[ib] & 0xF) + 1, 2 * (b->scales[ib] >> 4) + 1);
}

MINT_AVX2_INLINE int32_t hsum_i32x8(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

// R x C tile (R = 1) of rows of block type BLOCK against Q8_K rows; CHUNK decodes.
#define IQ2_TILE(fn, BLOCK, CHUNK)                                                                 \
    MINT_AVX2_INLINE void fn(const int R, const int C, const mint_tile *t) {                       \
        float acc[MINT_TILE_RMAX][MINT_TILE_CMAX];                                                 \
        for (int r = 0; r < R; r++)                                                                \
            for (int c = 0; c < C; c++) acc[r][c] = 0.0f;                                          \
        for (int64_t i = 0; i < t->n / MINT_QK_K; i++) {                                           \
            prefetch_next_rows(R, C, t, (size_t)i * sizeof(BLOCK));                                \
            const mint_block_q8_K *a[MINT_TILE_CMAX];                                              \
            for (int c = 0; c < C; c++)                                                            \
                a[c] = (const mint_block_q8_K *)(t->a + c * t->a_stride) + i;                      \
            for (int r = 0; r < R; r++) {                                                          \
                const BLOCK *w = (const BLOCK *)(t->w + r * t->w_stride) + i;                      \
                __m256i isum[MINT_TILE_CMAX];                                                      \
                for (int c = 0; c < C; c++) isum[c] = _mm256_setzero_si256();                      \
                for (int ib = 0; ib < MINT_QK_K / 32; ib++) {                                      \
                    iq2_chunk ch;                                                                  \
                    CHUNK(w, ib, &ch);                                                             \
                    for (int c = 0; c < C; c++) {                                                  \
                        const __m256i av =                                                         \
                            _mm256_loadu_si256((const __m256i *)(a[c]->qs + 32 * ib));             \
                        const __m256i p =                                                          \
                            _mm256_maddubs_epi16(ch.mag, _mm256_sign_epi8(av, ch.sign));           \
                        isum[c] = _mm256_add_epi32(isum[c], _mm256_madd_epi16(p, ch.scale));       \
                    }                                                                              \
                }                                                                                  \
                const float dw = mint_f16_to_f32(w->d);                                            \
                for (int c = 0; c < C; c++) {                                                      \
                    const float d = dw * a[c]->d;                                                  \
                    acc[r][c] += d * (float)hsum_i32x8(isum[c]);                                   \
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
