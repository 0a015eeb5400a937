// act_avx512.c - activation conversions f32 -> Q8_0, Q8_1, Q8_K with AVX-512 (Skylake-X, Zen 4),
// writing the same bytes as quant/act_ref.c.
//
// Why the bytes agree: the block maximum is exact in any order; the multiplier (127/amax, or
// -127/max for Q8_K) is the same scalar f32 division; each x * multiplier is one f32 product in
// either code; vcvtps2dq rounds to nearest-even under the default MXCSR, which is what the
// reference's mint_nearest_int computes for |v| <= 2^22; the f16 scales go through the same
// scalar mint_f32_to_f16. A block holding an inf or a NaN is handed to the reference, whose
// out-of-range arithmetic is not worth reproducing lane by lane.
#include "quant/simd_avx512.h"
#include "quant/fp16.h"
#include "quant/ref.h"

// fpclass categories: quiet NaN, +inf, -inf, signalling NaN.
#define NONFINITE 0x99

X512_ALWAYS_INLINE __m512 absf(__m512 v) {
    return _mm512_castsi512_ps(
        _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7FFFFFFF)));
}

// q = RNE(v * id) as bytes (|q| <= 127, so the truncating vpmovdb keeps it).
X512_ALWAYS_INLINE __m128i round_to_i8(__m512 v, __m512 id) {
    return _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v, id)));
}

// The sum of 16 stored quants. Summed from the bytes, as the reference does: when 127/amax
// overflows (a subnormal amax) the int32 conversions hold 0x80000000, whose sum would overflow.
X512_ALWAYS_INLINE int sum_i8x16(__m128i q) {
    return _mm512_reduce_add_epi32(_mm512_cvtepi8_epi32(q));
}

// Q8_0: d = f16(amax/127), q = RNE(x * (127/amax)).
void quantize_row_q8_0_act_avx512(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q8_0 *y = vy;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK) {
        const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
        if (_mm512_fpclass_ps_mask(v0, NONFINITE) | _mm512_fpclass_ps_mask(v1, NONFINITE)) {
            quantize_row_q8_0_act_ref(x, &y[ib], MINT_QK);
            continue;
        }
        const float amax = _mm512_reduce_max_ps(_mm512_max_ps(absf(v0), absf(v1)));
        const __m512 id = _mm512_set1_ps(amax != 0.0f ? 127.0f / amax : 0.0f);
        y[ib].d = mint_f32_to_f16(amax / 127.0f);
        _mm_storeu_si128((__m128i *)y[ib].qs, round_to_i8(v0, id));
        _mm_storeu_si128((__m128i *)(y[ib].qs + 16), round_to_i8(v1, id));
    }
}

// Q8_1: as Q8_0, plus s = f16(d * sum(q)) with the unrounded d = amax/127.
void quantize_row_q8_1_act_avx512(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q8_1 *y = vy;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK) {
        const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
        if (_mm512_fpclass_ps_mask(v0, NONFINITE) | _mm512_fpclass_ps_mask(v1, NONFINITE)) {
            quantize_row_q8_1_act_ref(x, &y[ib], MINT_QK);
            continue;
        }
        const float amax = _mm512_reduce_max_ps(_mm512_max_ps(absf(v0), absf(v1)));
        const float d = amax / 127.0f;
        const __m512 id = _mm512_set1_ps(amax != 0.0f ? 127.0f / amax : 0.0f);
        y[ib].d = mint_f32_to_f16(d);
        const __m128i q0 = round_to_i8(v0, id), q1 = round_to_i8(v1, id);
        _mm_storeu_si128((__m128i *)y[ib].qs, q0);
        _mm_storeu_si128((__m128i *)(y[ib].qs + 16), q1);
        const int sum = sum_i8x16(q0) + sum_i8x16(q1);
        y[ib].s = mint_f32_to_f16(d * (float)sum);
    }
}

// Q8_K: max = the signed value of the first largest |x|, iscale = -127/max,
// q = min(127, RNE(iscale * x)), d = 1/iscale, bsums = sums of 16 quants; all-zero -> zeros.
void quantize_row_q8_K_avx512(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q8_K *y = vy;
    for (int64_t i = 0; i < n / MINT_QK_K; i++, x += MINT_QK_K) {
        __m512 v[16];
        __mmask16 bad = 0;
        __m512 amaxv = _mm512_setzero_ps();
        for (int g = 0; g < 16; g++) {
            v[g] = _mm512_loadu_ps(x + 16 * g);
            bad |= _mm512_fpclass_ps_mask(v[g], NONFINITE);
            amaxv = _mm512_max_ps(absf(v[g]), amaxv);
        }
        if (bad) {
            quantize_row_q8_K_ref(x, &y[i], MINT_QK_K);
            continue;
        }
        const float amax = _mm512_reduce_max_ps(amaxv);
        if (amax == 0.0f) {
            memset(&y[i], 0, sizeof y[i]);
            continue;
        }
        // The first element whose |x| equals the maximum decides the sign, as the reference's
        // strict "greater than" scan does.
        float max = 0.0f;
        for (int g = 0; g < 16; g++) {
            const __mmask16 hit = _mm512_cmp_ps_mask(absf(v[g]), _mm512_set1_ps(amax), _CMP_EQ_OQ);
            if (hit) {
                max = x[16 * g + __builtin_ctz(hit)];
                break;
            }
        }
        const float iscale = -127.0f / max;
        const __m512 is = _mm512_set1_ps(iscale);
        for (int g = 0; g < 16; g++) {
            __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(is, v[g]));
            q = _mm512_min_epi32(q, _mm512_set1_epi32(127));
            const __m128i q8 = _mm512_cvtepi32_epi8(q);
            _mm_storeu_si128((__m128i *)(y[i].qs + 16 * g), q8);
            y[i].bsums[g] = (int16_t)sum_i8x16(q8);
        }
        y[i].d = 1 / iscale;
    }
}
