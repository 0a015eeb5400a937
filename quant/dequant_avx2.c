// dequant_avx2.c - to_float for F16, BF16, Q4_0 and Q8_0, equal to the reference bit for bit.
// Only the token-embedding lookup uses these (one row per token, so the other types keep the
// scalar reference); each element is computed with the reference's f32 operations in the
// reference's order (no fused multiply-add).
#include "quant/fp16.h"
#include "quant/simd_avx2.h"

// F16 -> f32 with F16C. F16C sets the quiet bit of a signalling NaN, which the reference keeps
// as it is, so a group of 8 holding an inf or NaN takes the reference's scalar path.
void dequantize_row_f16_avx2(const void *restrict vx, float *restrict y, int64_t n) {
    const uint16_t *x = vx;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128((const __m128i *)(x + i));
        const __m128i exp = _mm_and_si128(h, _mm_set1_epi16(0x7C00));
        if (_mm_movemask_epi8(_mm_cmpeq_epi16(exp, _mm_set1_epi16(0x7C00)))) {
            for (int j = 0; j < 8; j++) y[i + j] = mint_f16_to_f32(x[i + j]);
            continue;
        }
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; i++) y[i] = mint_f16_to_f32(x[i]);
}

// BF16 -> f32: the 16 bits become the top half.
void dequantize_row_bf16_avx2(const void *restrict vx, float *restrict y, int64_t n) {
    const uint16_t *x = vx;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(x + i)));
        _mm256_storeu_si256((__m256i *)(y + i), _mm256_slli_epi32(h, 16));
    }
    for (; i < n; i++) y[i] = mint_bf16_to_f32(x[i]);
}

// 32 signed bytes times d, as f32: y[e] = (float)q[e] * d.
MINT_AVX2_INLINE void scale_bytes32(__m256i q, __m256 d, float *y) {
    const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
    _mm256_storeu_ps(y, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo)), d));
    _mm256_storeu_ps(
        y + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8))), d));
    _mm256_storeu_ps(y + 16, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi)), d));
    _mm256_storeu_ps(
        y + 24, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8))), d));
}

// Q4_0: y = (float)(q - 8) * d.
void dequantize_row_q4_0_avx2(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_q4_0 *x = vx;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, y += MINT_QK) {
        const __m256i q = _mm256_sub_epi8(nibbles32(x[ib].qs), _mm256_set1_epi8(8));
        scale_bytes32(q, bcast_f16(&x[ib].d), y);
    }
}

// Q8_0: y = (float)q * d.
void dequantize_row_q8_0_avx2(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_q8_0 *x = vx;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, y += MINT_QK)
        scale_bytes32(_mm256_loadu_si256((const __m256i *)x[ib].qs), bcast_f16(&x[ib].d), y);
}
