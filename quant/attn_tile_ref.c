// attn_tile_ref.c - the reference products of attention (quant/kernels.h: mint_qk_fn, mint_pv_fn)
// over an f32, f16 or quantized cache: one chain of fused multiply-adds per output element, in
// the order the SIMD levels run it lane by lane.
#include "quant/attn_elem.h"
#include "quant/ref.h"

#include <math.h>

static void qk(mint_attn_elem e, int64_t d, const float *q, size_t q_stride, int nr, const void *kt,
               size_t kt_stride, int nk, float scale, float *s, size_t s_stride) {
    for (int r = 0; r < nr; r++)
        for (int j = 0; j < nk; j++) {
            float acc = 0.0f;
            for (int64_t i = 0; i < d; i++)
                acc = fmaf(q[(size_t)r * q_stride + (size_t)i],
                           mint_attn_elem_at(e, kt, kt_stride, (size_t)i, (size_t)j), acc);
            s[(size_t)r * s_stride + (size_t)j] = acc * scale;
        }
}

static void pv(mint_attn_elem e, int64_t d, const float *p, size_t p_stride, int nr, const void *v,
               size_t v_stride, int nk, const float *a, float *o, size_t o_stride) {
    for (int r = 0; r < nr; r++)
        for (int64_t i = 0; i < d; i++) {
            float acc = 0.0f;
            for (int j = 0; j < nk; j++)
                acc = fmaf(p[(size_t)r * p_stride + (size_t)j],
                           mint_attn_elem_at(e, v, v_stride, (size_t)j, (size_t)i), acc);
            float *y = o + (size_t)r * o_stride + (size_t)i;
            *y = fmaf(*y, a ? a[r] : 1.0f, acc);
        }
}

void attn_qk_f32_ref(int64_t d, const float *q, size_t q_stride, int nr, const void *kt,
                     size_t kt_stride, int nk, float scale, float *s, size_t s_stride) {
    qk(MINT_ATTN_F32, d, q, q_stride, nr, kt, kt_stride, nk, scale, s, s_stride);
}

void attn_qk_f16_ref(int64_t d, const float *q, size_t q_stride, int nr, const void *kt,
                     size_t kt_stride, int nk, float scale, float *s, size_t s_stride) {
    qk(MINT_ATTN_F16, d, q, q_stride, nr, kt, kt_stride, nk, scale, s, s_stride);
}

void attn_pv_f32_ref(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                     size_t v_stride, int nk, const float *a, float *o, size_t o_stride) {
    pv(MINT_ATTN_F32, d, p, p_stride, nr, v, v_stride, nk, a, o, o_stride);
}

void attn_pv_f16_ref(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                     size_t v_stride, int nk, const float *a, float *o, size_t o_stride) {
    pv(MINT_ATTN_F16, d, p, p_stride, nr, v, v_stride, nk, a, o, o_stride);
}

void attn_pv_q8_0_ref(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                      size_t v_stride, int nk, const float *a, float *o, size_t o_stride) {
    pv(MINT_ATTN_Q8_0, d, p, p_stride, nr, v, v_stride, nk, a, o, o_stride);
}

void attn_pv_q4_0_ref(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                      size_t v_stride, int nk, const float *a, float *o, size_t o_stride) {
    pv(MINT_ATTN_Q4_0, d, p, p_stride, nr, v, v_stride, nk, a, o, o_stride);
}
