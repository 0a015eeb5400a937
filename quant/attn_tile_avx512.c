// attn_tile_avx512.c - attention's two products with AVX-512F: the driver of quant/attn_tile.h
// over 16-lane vectors. Scores tiles are 8 rows x 2 vectors (32 keys), values tiles 4 rows x 4
// vectors (64 dimensions); the columns past the last whole tile run as one narrower tile whose
// last vector is masked, so no element is computed one at a time.
#include "quant/simd_avx512.h"

#include <string.h>

#define MINT_LEVEL_NAME(name) name##_avx512

typedef __m512 attn_vec;
typedef __mmask16 attn_mask;

#define ATTN_LANES  16
#define ATTN_QK_R   8
#define ATTN_QK_NV  2
#define ATTN_PV_R   4
#define ATTN_PV_NV  4
#define ATTN_MASKED 1
#define ATTN_FULL   0xFFFF

X512_ALWAYS_INLINE __m512 attn_zero(void) {
    return _mm512_setzero_ps();
}
X512_ALWAYS_INLINE __m512 attn_set1(float x) {
    return _mm512_set1_ps(x);
}
X512_ALWAYS_INLINE __m512 attn_mul(__m512 u, __m512 v) {
    return _mm512_mul_ps(u, v);
}
X512_ALWAYS_INLINE __m512 attn_fma(__m512 acc, __m512 u, __m512 v) {
    return _mm512_fmadd_ps(u, v, acc);
}
X512_ALWAYS_INLINE __mmask16 attn_mask_first(int n) {
    return x512_mask16(n);
}
// Lanes outside m read as 0 and touch nothing.
X512_ALWAYS_INLINE __m512 attn_load(int f16, const void *p, size_t i, __mmask16 m) {
    if (f16) {
        const uint16_t *h = (const uint16_t *)p + i;
        return _mm512_cvtph_ps(m == 0xFFFF ? _mm256_loadu_si256((const __m256i *)h)
                                           : _mm256_maskz_loadu_epi16(m, h));
    }
    const float *f = (const float *)p + i;
    return m == 0xFFFF ? _mm512_loadu_ps(f) : _mm512_maskz_loadu_ps(m, f);
}
X512_ALWAYS_INLINE __m512 attn_load_out(const float *y, __mmask16 m) {
    return _mm512_maskz_loadu_ps(m, y);
}
X512_ALWAYS_INLINE float attn_half(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, sizeof h);
    return _cvtsh_ss(h);
}
X512_ALWAYS_INLINE __m512 attn_load_q8(const uint8_t *q, __mmask16 m) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, q)));
}
X512_ALWAYS_INLINE __m512 attn_load_q4(const uint8_t *q, int hi, __mmask16 m) {
    const __m512i b = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, q));
    const __m512i n = hi ? _mm512_srli_epi32(b, 4) : _mm512_and_si512(b, _mm512_set1_epi32(15));
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(n, _mm512_set1_epi32(8)));
}
X512_ALWAYS_INLINE void attn_store(float *y, __mmask16 m, __m512 v) {
    _mm512_mask_storeu_ps(y, m, v);
}

#include "quant/attn_tile.h"
