// quant_iq1_ref.c - reference dequantizers and dot products of IQ1_S (ggml type 19) and IQ1_M
// (type 29), the 1.5- and 1.75-bit lattice formats (quant/blocks.h, quant/iq1.h, docs/formats.md
// 2.7): every group of 8 elements is a point of a 2048-point ternary lattice, shifted by +-1/8
// and scaled by an odd 3-bit multiplier times an f16 super-block scale.
//
// The dot products are ggml's generic ones with Q8_K (ggml's vec_dot_type for both): per
// super-block two exact integer sums, sum (2s+1) * grid . a and sum (2s+1) * sign * a (the
// latter from Q8_K's 16-element sums for IQ1_S), then (d_w * d_a) * (sumi + sumi1 / 8) in f32,
// super-blocks summed in order. Both integer sums stay below 2^21, so sumi + sumi1 / 8 is exact.
#include "quant/fp16.h"
#include "quant/iq1.h"
#include "quant/ref.h"

// ---------------------------------------------------------------------------------------------
// IQ1_S

void dequantize_row_iq1_s_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_iq1_s *x = vx;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float d = mint_f16_to_f32(x[i].d);
        for (int ib = 0; ib < MINT_QK_K / 32; ib++) {
            const float dl = d * (float)mint_iq1s_scale(&x[i], ib);
            const float delta = (float)mint_iq1s_sign(&x[i], ib) * MINT_IQ1_DELTA;
            for (int g = 4 * ib; g < 4 * ib + 4; g++) {
                const int8_t *p = mint_iq1_point(mint_iq1s_index(&x[i], g));
                for (int j = 0; j < 8; j++) *y++ = dl * ((float)p[j] + delta);
            }
        }
    }
}

// *s = sum over super-blocks of (d_w * d_a) * (sumi + sumi1 / 8) with, per sub-block of 32,
// sumi += (2s+1) * sum grid * a and sumi1 += (2s+1) * sign * (its two bsums).
void vec_dot_iq1_s_q8_K_ref(int64_t n, float *restrict s, const void *restrict vw,
                            const void *restrict va) {
    const mint_block_iq1_s *w = vw;
    const mint_block_q8_K *a = va;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const int8_t *q8 = a[i].qs;
        int sumi = 0, sumi1 = 0;
        for (int ib = 0; ib < MINT_QK_K / 32; ib++) {
            const int ls = mint_iq1s_scale(&w[i], ib);
            int lsum = 0;
            for (int g = 4 * ib; g < 4 * ib + 4; g++) {
                const int8_t *p = mint_iq1_point(mint_iq1s_index(&w[i], g));
                for (int j = 0; j < 8; j++) lsum += p[j] * q8[j];
                q8 += 8;
            }
            sumi += ls * lsum;
            sumi1 += ls * mint_iq1s_sign(&w[i], ib) * (a[i].bsums[2 * ib] + a[i].bsums[2 * ib + 1]);
        }
        sum += mint_f16_to_f32(w[i].d) * a[i].d * ((float)sumi + MINT_IQ1_DELTA * (float)sumi1);
    }
    *s = sum;
}

// ---------------------------------------------------------------------------------------------
// IQ1_M

void dequantize_row_iq1_m_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_iq1_m *x = vx;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float d = mint_f16_to_f32(mint_iq1m_d(&x[i]));
        for (int g = 0; g < MINT_QK_K / 8; g++) {
            const float dl = d * (float)mint_iq1m_scale(&x[i], g / 2);
            const float delta = (float)mint_iq1m_sign(&x[i], g) * MINT_IQ1_DELTA;
            const int8_t *p = mint_iq1_point(mint_iq1m_index(&x[i], g));
            for (int j = 0; j < 8; j++) *y++ = dl * ((float)p[j] + delta);
        }
    }
}

// *s = sum over super-blocks of (d_w * d_a) * (sumi1 + sumi2 / 8) with, per half of 16,
// sumi1 += (2s+1) * sum grid * a and sumi2 += (2s+1) * sum over its groups of sign * sum a.
void vec_dot_iq1_m_q8_K_ref(int64_t n, float *restrict s, const void *restrict vw,
                            const void *restrict va) {
    const mint_block_iq1_m *w = vw;
    const mint_block_q8_K *a = va;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const int8_t *q8 = a[i].qs;
        int sumi1 = 0, sumi2 = 0;
        for (int h = 0; h < MINT_QK_K / 16; h++) {
            int dot = 0, shift = 0;
            for (int g = 2 * h; g < 2 * h + 2; g++) {
                const int8_t *p = mint_iq1_point(mint_iq1m_index(&w[i], g));
                int lsum = 0;
                for (int j = 0; j < 8; j++) {
                    dot += p[j] * q8[j];
                    lsum += q8[j];
                }
                shift += mint_iq1m_sign(&w[i], g) * lsum;
                q8 += 8;
            }
            const int ls = mint_iq1m_scale(&w[i], h);
            sumi1 += ls * dot;
            sumi2 += ls * shift;
        }
        sum += mint_f16_to_f32(mint_iq1m_d(&w[i])) * a[i].d *
               ((float)sumi1 + MINT_IQ1_DELTA * (float)sumi2);
    }
    *s = sum;
}
