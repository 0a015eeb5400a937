// attn_tile_neon.c - attention's two products with baseline Armv8-A NEON: the driver of
// quant/attn_tile.h over 4-lane vectors (FCVTL widens f16 exactly). Tiles of 6 rows x 4 vectors
// (16 columns) keep 24 accumulators, 4 loaded vectors and a broadcast in the 32 registers; the
// columns past the last multiple of 4 run the same chain one element at a time (fmaf is FMADD).
#include "quant/simd_neon.h"

#include <string.h>

#define MINT_LEVEL_NAME(name) name##_neon

typedef float32x4_t attn_vec;
typedef int attn_mask; // no masks: every vector is whole

#define ATTN_LANES  4
#define ATTN_QK_R   6
#define ATTN_QK_NV  4
#define ATTN_PV_R   6
#define ATTN_PV_NV  4
#define ATTN_MASKED 0
#define ATTN_FULL   1

MINT_NEON_INLINE float32x4_t attn_zero(void) {
    return vdupq_n_f32(0.0f);
}
MINT_NEON_INLINE float32x4_t attn_set1(float x) {
    return vdupq_n_f32(x);
}
MINT_NEON_INLINE float32x4_t attn_mul(float32x4_t u, float32x4_t v) {
    return vmulq_f32(u, v);
}
MINT_NEON_INLINE float32x4_t attn_fma(float32x4_t acc, float32x4_t u, float32x4_t v) {
    return vfmaq_f32(acc, u, v);
}
MINT_NEON_INLINE float32x4_t attn_load(int f16, const void *p, size_t i, attn_mask m) {
    if (f16) return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16((const uint16_t *)p + i)));
    return vld1q_f32((const float *)p + i);
}
MINT_NEON_INLINE float32x4_t attn_load_out(const float *y, attn_mask m) {
    return vld1q_f32(y);
}
MINT_NEON_INLINE float attn_half(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, sizeof h);
    return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0);
}
// Four bytes at q, widened to four 32-bit lanes (signed or not).
MINT_NEON_INLINE int32x4_t attn_bytes4(const uint8_t *q, int is_signed) {
    uint32_t u;
    memcpy(&u, q, sizeof u);
    const uint8x8_t b = vcreate_u8((uint64_t)u);
    if (is_signed) return vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_u8(b))));
    return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(b))));
}
MINT_NEON_INLINE float32x4_t attn_load_q8(const uint8_t *q, attn_mask m) {
    return vcvtq_f32_s32(attn_bytes4(q, 1));
}
MINT_NEON_INLINE float32x4_t attn_load_q4(const uint8_t *q, int hi, attn_mask m) {
    const int32x4_t b = attn_bytes4(q, 0);
    const int32x4_t n = hi ? vshrq_n_s32(b, 4) : vandq_s32(b, vdupq_n_s32(15));
    return vcvtq_f32_s32(vsubq_s32(n, vdupq_n_s32(8)));
}
MINT_NEON_INLINE void attn_store(float *y, attn_mask m, float32x4_t v) {
    vst1q_f32(y, v);
}

#include "quant/attn_tile.h"
