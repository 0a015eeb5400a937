// attn_tile_ref.c - the reference products of attention (quant/kernels.h: mint_qk_fn, mint_pv_fn)
// over an f32 or f16 cache: one chain of fused multiply-adds per output element, in the order the
// SIMD levels run it lane by lane.
#include "quant/fp16.h"
#include "quant/ref.h"

#include <math.h>

static inline float elem(const void *p, size_t i, int f16) {
    return f16 ? mint_f16_to_f32(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

static void qk(int f16, int64_t d, const float *q, size_t q_stride, int nr, const void *kt,
               size_t kt_stride, int nk, float scale, float *s, size_t s_stride) {
    for (int r = 0; r < nr; r++)
        for (int j = 0; j < nk; j++) {
            float acc = 0.0f;
            for (int64_t i = 0; i < d; i++)
                acc = fmaf(q[(size_t)r * q_stride + (size_t)i],
                           elem(kt, (size_t)i * kt_stride + (size_t)j, f16), acc);
            s[(size_t)r * s_stride + (size_t)j] = acc * scale;
        }
}

static void pv(int f16, int64_t d, const float *p, size_t p_stride, int nr, const void *v,
               size_t v_stride, int nk, const float *a, float *o, size_t o_stride) {
    for (int r = 0; r < nr; r++)
        for (int64_t i = 0; i < d; i++) {
            float acc = 0.0f;
            for (int j = 0; j < nk; j++)
                acc = fmaf(p[(size_t)r * p_stride + (size_t)j],
                           elem(v, (size_t)j * v_stride + (size_t)i, f16), acc);
            float *y = o + (size_t)r * o_stride + (size_t)i;
            *y = fmaf(*y, a ? a[r] : 1.0f, acc);
        }
}

void attn_qk_f32_ref(int64_t d, const float *q, size_t q_stride, int nr, const void *kt,
                     size_t kt_stride, int nk, float scale, float *s, size_t s_stride) {
    qk(0, d, q, q_stride, nr, kt, kt_stride, nk, scale, s, s_stride);
}

void attn_qk_f16_ref(int64_t d, const float *q, size_t q_stride, int nr, const void *kt,
                     size_t kt_stride, int nk, float scale, float *s, size_t s_stride) {
    qk(1, d, q, q_stride, nr, kt, kt_stride, nk, scale, s, s_stride);
}

void attn_pv_f32_ref(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                     size_t v_stride, int nk, const float *a, float *o, size_t o_stride) {
    pv(0, d, p, p_stride, nr, v, v_stride, nk, a, o, o_stride);
}

void attn_pv_f16_ref(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                     size_t v_stride, int nk, const float *a, float *o, size_t o_stride) {
    pv(1, d, p, p_stride, nr, v, v_stride, nk, a, o, o_stride);
}
