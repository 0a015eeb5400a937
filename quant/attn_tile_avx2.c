// attn_tile_avx2.c - attention's two products with AVX2 + FMA + F16C: the driver of
// quant/attn_tile.h over 8-lane vectors. Tiles of 6 rows x 2 vectors (16 columns) keep 12
// accumulators, 2 loaded vectors and a broadcast in the 16 registers; the columns past the last
// multiple of 8 run the same chain one element at a time (fmaf is one vfmadd).
#include "quant/simd_avx2.h"

#include <string.h>

#define MINT_LEVEL_NAME(name) name##_avx2

typedef __m256 attn_vec;
typedef int attn_mask; // no masks: every vector is whole

#define ATTN_LANES  8
#define ATTN_QK_R   6
#define ATTN_QK_NV  2
#define ATTN_PV_R   6
#define ATTN_PV_NV  2
#define ATTN_MASKED 0
#define ATTN_FULL   1

MINT_AVX2_INLINE __m256 attn_zero(void) {
    return _mm256_setzero_ps();
}
MINT_AVX2_INLINE __m256 attn_set1(float x) {
    return _mm256_set1_ps(x);
}
MINT_AVX2_INLINE __m256 attn_mul(__m256 u, __m256 v) {
    return _mm256_mul_ps(u, v);
}
MINT_AVX2_INLINE __m256 attn_fma(__m256 acc, __m256 u, __m256 v) {
    return _mm256_fmadd_ps(u, v, acc);
}
MINT_AVX2_INLINE __m256 attn_load(int f16, const void *p, size_t i, attn_mask m) {
    if (f16) return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)p + i)));
    return _mm256_loadu_ps((const float *)p + i);
}
MINT_AVX2_INLINE __m256 attn_load_out(const float *y, attn_mask m) {
    return _mm256_loadu_ps(y);
}
MINT_AVX2_INLINE float attn_half(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, sizeof h);
    return _cvtsh_ss(h);
}
MINT_AVX2_INLINE __m256 attn_load_q8(const uint8_t *q, attn_mask m) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)q)));
}
MINT_AVX2_INLINE __m256 attn_load_q4(const uint8_t *q, int hi, attn_mask m) {
    const __m256i b = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)q));
    const __m256i n = hi ? _mm256_srli_epi32(b, 4) : _mm256_and_si256(b, _mm256_set1_epi32(15));
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(n, _mm256_set1_epi32(8)));
}
MINT_AVX2_INLINE void attn_store(float *y, attn_mask m, __m256 v) {
    _mm256_storeu_ps(y, v);
}

#include "quant/attn_tile.h"
