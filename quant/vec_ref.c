// vec_ref.c - the reference float vector kernels of softmax and attention (quant/kernels.h):
// plain loops, one IEEE operation per step. They are the specification the SIMD levels match bit
// for bit.
#include "quant/fp16.h"
#include "quant/ref.h"
#include "quant/vec_exp.h"

void vec_exp_ref(const float *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = mint_exp1(x[i]);
}

float vec_max_ref(const float *x, int64_t n, float m) {
    for (int64_t i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
    return m + 0.0f; // -0 -> +0: the vector levels may meet the zeros in another order
}

double vec_exp_sum_ref(float *x, int64_t n, float m) {
    double acc[16] = {0};
    for (int64_t i = 0; i < n; i++) {
        const float d = x[i] - m;
        x[i] = mint_exp1(d);
        acc[i % 16] += (double)x[i];
    }
    for (int w = 8; w >= 2; w /= 2)
        for (int l = 0; l < w; l++) acc[l] += acc[l + w];
    return acc[0] + acc[1];
}

void vec_scale_ref(float *x, int64_t n, float c) {
    for (int64_t i = 0; i < n; i++) x[i] *= c;
}

void vec_round_f16_ref(float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] = mint_f16_to_f32(mint_f32_to_f16(x[i]));
}
