// norm.c - RMSNorm times the norm weight, as ggml computes it (docs/formats.md 5.2): the squares
// are f32 products summed in double; the scale is 1 / sqrtf(mean + eps) in f32.
#include "ops/ops.h"

#include <math.h>

// y[0..n) = x / sqrt(mean(x^2) + eps) * w
void mint_rms_norm_row(const float *x, const float *w, float *y, int64_t n, float eps) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double)(x[i] * x[i]);
    const float mean = (float)(sum / (double)n);
    const float scale = 1.0f / sqrtf(mean + eps);
    // ggml scales first, then multiplies by the weight in a separate op: keep that order.
    for (int64_t i = 0; i < n; i++) y[i] = (x[i] * scale) * w[i];
}

// y[r] = rmsnorm(x[r]) * w   for r in [r0, r1)
void mint_rms_norm(const float *x, size_t x_stride, const float *w, float *y, size_t y_stride,
                   int64_t n, float eps, long r0, long r1) {
    for (long r = r0; r < r1; r++)
        mint_rms_norm_row((const float *)((const char *)x + (size_t)r * x_stride), w,
                          (float *)((char *)y + (size_t)r * y_stride), n, eps);
}

// Each head of x[r] normalised in place   for r in [r0, r1)
void mint_rms_norm_heads(float *x, size_t stride, const float *w, int n_heads, int head_dim,
                         float eps, long r0, long r1) {
    for (long r = r0; r < r1; r++)
        for (int h = 0; h < n_heads; h++) {
            float *v = (float *)((char *)x + (size_t)r * stride) + (size_t)h * head_dim;
            mint_rms_norm_row(v, w, v, head_dim, eps); // reads each x[i] before writing y[i]
        }
}

// y[0..n) = (x - mean(x)) / sqrt(var(x) + eps) * w, as ggml's norm then mul: the sum in double
// rounded to f32 before dividing by n, the squared deviations summed in double, the scale
// 1 / sqrtf in f32, and (x - mean) times the scale rounded before the weight multiplies it. (ggml
// adds the squares in SIMD blocks before widening them, an order that moves the variance by an
// ulp or so; docs/tolerances.md 3.9.) The bias is a separate add, as in ggml.
void mint_layer_norm_row(const float *x, const float *w, float *y, int64_t n, float eps) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double)x[i];
    const float mean = (float)sum / (float)n;
    double sq = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const float d = x[i] - mean;
        sq += (double)(d * d);
    }
    const float variance = (float)(sq / (double)n);
    const float scale = 1.0f / sqrtf(variance + eps);
    for (int64_t i = 0; i < n; i++) y[i] = ((x[i] - mean) * scale) * w[i];
}

// y[r] = layernorm(x[r]) * w   for r in [r0, r1)
void mint_layer_norm(const float *x, size_t x_stride, const float *w, float *y, size_t y_stride,
                     int64_t n, float eps, long r0, long r1) {
    for (long r = r0; r < r1; r++)
        mint_layer_norm_row((const float *)((const char *)x + (size_t)r * x_stride), w,
                            (float *)((char *)y + (size_t)r * y_stride), n, eps);
}
