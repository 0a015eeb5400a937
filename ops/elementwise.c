// elementwise.c - residual add, scaling, the SwiGLU activation and softmax.
#include "ops/ops.h"

#include <math.h>

// x[r] += y[r]   for r in [r0, r1)
void mint_add(float *x, size_t x_stride, const float *y, size_t y_stride, int64_t n, long r0,
              long r1) {
    for (long r = r0; r < r1; r++) {
        float *xr = (float *)((char *)x + (size_t)r * x_stride);
        const float *yr = (const float *)((const char *)y + (size_t)r * y_stride);
        for (int64_t i = 0; i < n; i++) xr[i] += yr[i];
    }
}

// x[r] *= s   for r in [r0, r1)
void mint_scale(float *x, size_t x_stride, float s, int64_t n, long r0, long r1) {
    for (long r = r0; r < r1; r++) {
        float *xr = (float *)((char *)x + (size_t)r * x_stride);
        for (int64_t i = 0; i < n; i++) xr[i] *= s;
    }
}

// g[r] = silu(g[r]) * u[r], silu(g) = g / (1 + e^-g)   for r in [r0, r1)
void mint_silu_mul(float *g, size_t g_stride, const float *u, size_t u_stride, int64_t n, long r0,
                   long r1) {
    for (long r = r0; r < r1; r++) {
        float *gr = (float *)((char *)g + (size_t)r * g_stride);
        const float *ur = (const float *)((const char *)u + (size_t)r * u_stride);
        for (int64_t i = 0; i < n; i++) gr[i] = gr[i] / (1.0f + expf(-gr[i])) * ur[i];
    }
}

// s[0..n) = softmax(s)   (in place; exponentials summed in double, as ggml's soft_max)
void mint_softmax(const mint_vec_kernels *vk, float *s, int32_t n) {
    const float max = vk->max(s, n, -INFINITY);
    const double sum = vk->exp_sum(s, n, max);
    vk->scale(s, n, (float)(1.0 / sum));
}
