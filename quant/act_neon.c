// act_neon.c - activation conversions for baseline Armv8-A NEON (both NEON levels use these):
// f32 rows to Q8_0, Q8_1, Q8_K, F16 and BF16, writing exactly the reference's bytes.
//
// Why the bytes match (quant/act_ref.c is the specification):
//   - RNE(x * m) is the reference's own mint_nearest_int in four lanes (add 1.5 * 2^23, keep
//     the mantissa bits, subtract 2^22), and the quant its low byte (a truncating narrow), so
//     even a block whose multiplier overflows to inf (all-subnormal values: x * m = +-inf) gives
//     the reference's bytes, where FCVTNS and a saturating narrow would give +-127;
//   - the scales (amax / 127, 127 / amax, -127 / max, 1 / iscale) are computed in scalar f32
//     exactly as the reference writes them, and stored with the same f16 conversion;
//   - f32 -> f16 is FCVTN (RNE, subnormals kept, overflow to inf, as mint_f32_to_f16), with NaN
//     lanes replaced by sign | 0x7E00 as the reference writes them (FCVTN would keep payload
//     bits); f32 -> bf16 is the reference's integer rounding, four lanes at a time.
// ARM's own llama.cpp path rounds Q8_0 activations with 1/d; mint's rounding is the reference's
// (x86 llama.cpp's) on every ISA, so logits do not depend on the machine.
#include "quant/fp16.h"
#include "quant/simd_neon.h"

// Largest |x| of n (a multiple of 16) floats: FABS + FMAX over 4 accumulators, FMAXV at the
// end. Equal to the reference's scan for every input without NaN.
MINT_NEON_INLINE float absmax(const float *x, int n) {
    float32x4_t m[4];
    for (int k = 0; k < 4; k++) m[k] = vdupq_n_f32(0.0f);
    for (int j = 0; j < n; j += 16)
        for (int k = 0; k < 4; k++) m[k] = vmaxq_f32(m[k], vabsq_f32(vld1q_f32(x + j + 4 * k)));
    return vmaxvq_f32(vmaxq_f32(vmaxq_f32(m[0], m[1]), vmaxq_f32(m[2], m[3])));
}

// The reference's mint_nearest_int in four lanes: add 1.5 * 2^23, keep the mantissa bits,
// subtract 2^22 (RNE for |v| <= 2^22; for +-inf -2^22, as the reference).
MINT_NEON_INLINE int32x4_t nearest4(float32x4_t v) {
    const float32x4_t t = vaddq_f32(v, vdupq_n_f32(12582912.0f));
    return vsubq_s32(vandq_s32(vreinterpretq_s32_f32(t), vdupq_n_s32(0x007FFFFF)),
                     vdupq_n_s32(0x00400000));
}

// 16 int32 to their low bytes, as the reference's (int8_t) casts.
MINT_NEON_INLINE int8x16_t low_bytes(const int32x4_t q[4]) {
    const int16x8_t lo = vcombine_s16(vmovn_s32(q[0]), vmovn_s32(q[1]));
    const int16x8_t hi = vcombine_s16(vmovn_s32(q[2]), vmovn_s32(q[3]));
    return vcombine_s8(vmovn_s16(lo), vmovn_s16(hi));
}

// RNE(x[0..16) * m) as 16 int8, the reference's mint_nearest_int and (int8_t) cast lane by
// lane, and the int32 sum of those quants added into *sum.
MINT_NEON_INLINE int8x16_t round16(const float *x, float m, int32x4_t *sum) {
    int32x4_t q[4];
    for (int k = 0; k < 4; k++) q[k] = nearest4(vmulq_n_f32(vld1q_f32(x + 4 * k), m));
    const int8x16_t r = low_bytes(q);
    *sum = vpadalq_s16(*sum, vpaddlq_s8(r));
    return r;
}

// Q8_0 activations: d = f16(amax / 127), q = RNE(x * (127 / amax)).
void quantize_row_q8_0_act_neon(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q8_0 *y = vy;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK) {
        const float amax = absmax(x, MINT_QK);
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[ib].d = mint_f32_to_f16(amax / 127.0f);
        int32x4_t sum = vdupq_n_s32(0);
        vst1q_s8(y[ib].qs, round16(x, id, &sum));
        vst1q_s8(y[ib].qs + 16, round16(x + 16, id, &sum));
    }
}

// Q8_1 activations: as Q8_0, plus s = f16(d * sum(q)) with the unrounded f32 d.
void quantize_row_q8_1_act_neon(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q8_1 *y = vy;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK) {
        const float amax = absmax(x, MINT_QK);
        const float d = amax / 127.0f;
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[ib].d = mint_f32_to_f16(d);
        int32x4_t sum = vdupq_n_s32(0);
        vst1q_s8(y[ib].qs, round16(x, id, &sum));
        vst1q_s8(y[ib].qs + 16, round16(x + 16, id, &sum));
        y[ib].s = mint_f32_to_f16(d * (float)vaddvq_s32(sum));
    }
}

// Q8_K: max = the signed value of the first largest |x|, iscale = -127 / max,
// q = min(127, RNE(iscale * x)), d = 1 / iscale, bsums = sums of 16 quants; an all-zero block
// is all zero bytes.
void quantize_row_q8_K_neon(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q8_K *y = vy;
    for (int64_t i = 0; i < n / MINT_QK_K; i++, x += MINT_QK_K) {
        const float amax = absmax(x, MINT_QK_K);
        if (amax == 0.0f) {
            memset(&y[i], 0, sizeof y[i]);
            continue;
        }
        // The first element reaching amax decides the sign (the reference keeps the first).
        float max = amax;
        for (int j = 0; j < MINT_QK_K; j++)
            if (x[j] == amax || x[j] == -amax) {
                max = x[j];
                break;
            }
        const float iscale = -127.0f / max;
        const int32x4_t q127 = vdupq_n_s32(127);
        for (int g = 0; g < MINT_QK_K / 16; g++) {
            int32x4_t q[4];
            for (int k = 0; k < 4; k++)
                q[k] =
                    vminq_s32(nearest4(vmulq_n_f32(vld1q_f32(x + 16 * g + 4 * k), iscale)), q127);
            const int8x16_t r = low_bytes(q);
            vst1q_s8(y[i].qs + 16 * g, r);
            y[i].bsums[g] = vaddlvq_s8(r);
        }
        y[i].d = 1 / iscale;
    }
}

// 4 floats -> 4 f16 bits: FCVTN, then NaN lanes (|bits| > 0x7F800000) set to sign | 0x7E00.
MINT_NEON_INLINE uint16x4_t f16x4(float32x4_t v) {
    const uint32x4_t bits = vreinterpretq_u32_f32(v);
    const uint16x4_t h = vreinterpret_u16_f16(vcvt_f16_f32(v));
    const uint32x4_t nan =
        vcgtq_u32(vandq_u32(bits, vdupq_n_u32(0x7FFFFFFF)), vdupq_n_u32(0x7F800000));
    const uint16x4_t qnan =
        vorr_u16(vand_u16(vshrn_n_u32(bits, 16), vdup_n_u16(0x8000)), vdup_n_u16(0x7E00));
    return vbsl_u16(vmovn_u32(nan), qnan, h);
}

void quantize_row_f16_neon(const float *restrict x, void *restrict vy, int64_t n) {
    uint16_t *y = vy;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1_u16(y + i, f16x4(vld1q_f32(x + i)));
    for (; i < n; i++) y[i] = mint_f32_to_f16(x[i]);
}

// 4 floats -> 4 bf16 bits: (x + 0x7FFF + bit 16 of x) >> 16 (RNE on the dropped half), NaN
// lanes (x >> 16) | 0x40 (forced quiet), as mint_f32_to_bf16.
MINT_NEON_INLINE uint16x4_t bf16x4(float32x4_t v) {
    const uint32x4_t bits = vreinterpretq_u32_f32(v);
    const uint32x4_t odd = vandq_u32(vshrq_n_u32(bits, 16), vdupq_n_u32(1));
    const uint16x4_t rounded =
        vshrn_n_u32(vaddq_u32(vaddq_u32(bits, vdupq_n_u32(0x7FFF)), odd), 16);
    const uint32x4_t nan =
        vcgtq_u32(vandq_u32(bits, vdupq_n_u32(0x7FFFFFFF)), vdupq_n_u32(0x7F800000));
    const uint16x4_t qnan = vorr_u16(vshrn_n_u32(bits, 16), vdup_n_u16(0x40));
    return vbsl_u16(vmovn_u32(nan), qnan, rounded);
}

void quantize_row_bf16_neon(const float *restrict x, void *restrict vy, int64_t n) {
    uint16_t *y = vy;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1_u16(y + i, bf16x4(vld1q_f32(x + i)));
    for (; i < n; i++) y[i] = mint_f32_to_bf16(x[i]);
}
