// act_avx2.c - activation conversions for AVX2 + F16C: f32 rows to Q8_0, Q8_1, Q8_K, F16 and
// BF16, writing exactly the bytes of the reference (quant/act_ref.c, quant/float_ref.c).
//
// Why the bytes agree. The reference rounds x * (127 / amax) (Q8_0, Q8_1) or (-127 / max) * x
// (Q8_K) to nearest-even by adding 1.5 * 2^23 and keeping the low mantissa bits; vcvtps2dq under
// the default MXCSR rounding (nearest-even) gives the same integer for every product within
// +-2^22, and the products here are within +-127.0001. The byte stored is the low byte of that
// integer (the reference's int8_t narrowing), taken with a mask before the unsigned packs, so
// even inputs with infinities give the reference's bytes (an inf x has x * 0 = NaN, which both
// turn into 0). The f32 scales are computed with the reference's scalar expressions, and f16
// stores go through the reference's mint_f32_to_f16. NaN inputs are not reproduced byte for byte
// (a NaN activation is already garbage): the lane-parallel max ignores where in the block the
// NaN sat, which the reference's sequential scan does not.
#include "quant/fp16.h"
#include "quant/simd_avx2.h"

// Largest |x| over 8 * nv floats (max is exact, so the lane order does not matter). vmaxps
// returns its second operand when one is NaN, so NaN elements are skipped, as in Q8_K's scan.
MINT_AVX2_INLINE float absmax(const float *x, int nv) {
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    __m256 m = _mm256_setzero_ps();
    for (int v = 0; v < nv; v++)
        m = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + 8 * v), abs_mask), m);
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

// Nearest-even integers of 8 products x * scale, low byte only (0..255 in each int32 lane).
MINT_AVX2_INLINE __m256i round_low_byte(__m256 x, __m256 scale) {
    return _mm256_and_si256(_mm256_cvtps_epi32(_mm256_mul_ps(x, scale)), _mm256_set1_epi32(0xFF));
}

// 4 x 8 int32 lanes holding bytes (0..255) -> 32 bytes in element order. The packs work within
// 128-bit halves, which interleaves the 4-element quarters; one dword permute restores the order.
MINT_AVX2_INLINE __m256i pack_bytes(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
    const __m256i b = _mm256_packus_epi16(_mm256_packus_epi32(v0, v1), _mm256_packus_epi32(v2, v3));
    return _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// 32 quants of one block: q = low byte of RNE(x * scale).
MINT_AVX2_INLINE __m256i quantize32(const float *x, __m256 scale) {
    return pack_bytes(round_low_byte(_mm256_loadu_ps(x), scale),
                      round_low_byte(_mm256_loadu_ps(x + 8), scale),
                      round_low_byte(_mm256_loadu_ps(x + 16), scale),
                      round_low_byte(_mm256_loadu_ps(x + 24), scale));
}

// Sum of 32 signed bytes.
MINT_AVX2_INLINE int sum_i8x32(__m256i q) {
    const __m256i s =
        _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), q), _mm256_set1_epi16(1));
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
    return _mm_cvtsi128_si32(h);
}

// Q8_0 activations: d = f16(amax / 127), q = RNE(x * (127 / amax)).
void quantize_row_q8_0_act_avx2(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q8_0 *y = vy;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK) {
        const float amax = absmax(x, 4);
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[ib].d = mint_f32_to_f16(amax / 127.0f);
        _mm256_storeu_si256((__m256i *)y[ib].qs, quantize32(x, _mm256_set1_ps(id)));
    }
}

// Q8_1 activations: as Q8_0, plus s = f16(d * sum(q)) with the unrounded d.
void quantize_row_q8_1_act_avx2(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q8_1 *y = vy;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK) {
        const float amax = absmax(x, 4);
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        const __m256i q = quantize32(x, _mm256_set1_ps(id));
        y[ib].d = mint_f32_to_f16(d);
        _mm256_storeu_si256((__m256i *)y[ib].qs, q);
        y[ib].s = mint_f32_to_f16(d * (float)sum_i8x32(q));
    }
}

// The 16 sums of 16 signed bytes of a Q8_K block's 256 quants, as int16 (each at most 2048 in
// magnitude). Per 32 bytes, vpmaddubsw/vpmaddwd against ones give 4 partial sums per 16-byte
// group (low half: group 2k, high half: group 2k + 1); two rounds of vphaddd finish the sums
// in the order [0 2 4 6 | 1 3 5 7] and [8 10 12 14 | 9 11 13 15], which the final 16-bit
// interleave puts in order.
MINT_AVX2_INLINE void bsums16(const int8_t *qs, int16_t *bsums) {
    __m256i c[8];
    for (int k = 0; k < 8; k++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * k));
        c[k] =
            _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), q), _mm256_set1_epi16(1));
    }
    const __m256i k0 =
        _mm256_hadd_epi32(_mm256_hadd_epi32(c[0], c[1]), _mm256_hadd_epi32(c[2], c[3]));
    const __m256i k1 =
        _mm256_hadd_epi32(_mm256_hadd_epi32(c[4], c[5]), _mm256_hadd_epi32(c[6], c[7]));
    const __m256i p = _mm256_packs_epi32(k0, k1); // [0 2 4 6 8 10 12 14 | 1 3 5 7 9 11 13 15]
    const __m128i even = _mm256_castsi256_si128(p), odd = _mm256_extracti128_si256(p, 1);
    _mm_storeu_si128((__m128i *)bsums, _mm_unpacklo_epi16(even, odd));
    _mm_storeu_si128((__m128i *)(bsums + 8), _mm_unpackhi_epi16(even, odd));
}

// Q8_K: max = the signed value of the first largest |x|, iscale = -127 / max,
// q = min(127, RNE(iscale * x)), d = 1 / iscale, bsums of 16; an all-zero block is all zero.
void quantize_row_q8_K_avx2(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q8_K *y = vy;
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    for (int64_t i = 0; i < n / MINT_QK_K; i++, x += MINT_QK_K) {
        const float amax = absmax(x, MINT_QK_K / 8);
        if (amax == 0.0f) {
            memset(&y[i], 0, sizeof y[i]);
            continue;
        }
        // The first element whose |x| equals the maximum, as the reference's strict '>' scan
        // keeps it.
        float max = amax;
        const __m256 vmax = _mm256_set1_ps(amax);
        for (int v = 0; v < MINT_QK_K / 8; v++) {
            const __m256 ax = _mm256_and_ps(_mm256_loadu_ps(x + 8 * v), abs_mask);
            const int hit = _mm256_movemask_ps(_mm256_cmp_ps(ax, vmax, _CMP_EQ_OQ));
            if (hit) {
                max = x[8 * v + __builtin_ctz((unsigned)hit)];
                break;
            }
        }
        const float iscale = -127.0f / max;
        const __m256 vs = _mm256_set1_ps(iscale);
        const __m256i limit = _mm256_set1_epi32(127), low_byte = _mm256_set1_epi32(0xFF);
        for (int b = 0; b < MINT_QK_K / 32; b++) {
            __m256i v[4];
            for (int k = 0; k < 4; k++) {
                const __m256i q =
                    _mm256_cvtps_epi32(_mm256_mul_ps(vs, _mm256_loadu_ps(x + 32 * b + 8 * k)));
                v[k] = _mm256_and_si256(_mm256_min_epi32(q, limit), low_byte);
            }
            _mm256_storeu_si256((__m256i *)(y[i].qs + 32 * b), pack_bytes(v[0], v[1], v[2], v[3]));
        }
        bsums16(y[i].qs, y[i].bsums);
        y[i].d = 1 / iscale;
    }
}

// F16 (RNE, F16C). F16C keeps a NaN's payload where the reference writes sign | 0x7E00, so a
// group of 8 that holds a NaN goes through the reference's scalar conversion; so does the tail.
void quantize_row_f16_avx2(const float *restrict x, void *restrict vy, int64_t n) {
    uint16_t *y = vy;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))) {
            for (int j = 0; j < 8; j++) y[i + j] = mint_f32_to_f16(x[i + j]);
            continue;
        }
        _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; i++) y[i] = mint_f32_to_f16(x[i]);
}

// BF16: (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16, NaN -> (bits >> 16) | 0x40, 16 at a time.
MINT_AVX2_INLINE __m256i bf16_round(__m256i b) {
    const __m256i one = _mm256_set1_epi32(1);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(b, 16), one);
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(b, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), lsb)), 16);
    const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(0x40));
    const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x7FFFFFFF)),
                                              _mm256_set1_epi32(0x7F800000));
    return _mm256_blendv_epi8(rounded, quiet, is_nan);
}

void quantize_row_bf16_avx2(const float *restrict x, void *restrict vy, int64_t n) {
    uint16_t *y = vy;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i lo = bf16_round(_mm256_loadu_si256((const __m256i *)(x + i)));
        const __m256i hi = bf16_round(_mm256_loadu_si256((const __m256i *)(x + i + 8)));
        // packus works per 128-bit half: [lo0..3 hi0..3 | lo4..7 hi4..7] -> reorder quarters.
        const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
        _mm256_storeu_si256((__m256i *)(y + i), p);
    }
    for (; i < n; i++) y[i] = mint_f32_to_bf16(x[i]);
}
