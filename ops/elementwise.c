// elementwise.c - residual add, scaling, the SwiGLU and GELU activations and softmax.
#include "ops/ops.h"

#include "quant/fp16.h"

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

// GELU as llama.cpp computes it on a CPU: the tanh form 0.5 x (1 + tanh(sqrt(2/pi) x (1 +
// 0.044715 x^2))) evaluated in f32 at x rounded to f16, the result rounded to f16 (ggml keeps it
// in a 65536-entry table indexed by the f16 bits; computing the entry here gives its bits), and
// x itself past +-10.
float mint_gelu_one(float x) {
    if (x <= -10.0f) return 0.0f;
    if (x >= 10.0f) return x;
    const float h = mint_f16_to_f32(mint_f32_to_f16(x));
    const float g =
        0.5f * h *
        (1.0f + tanhf(0.79788456080286535587989211986876f * h * (1.0f + 0.044715f * h * h)));
    return mint_f16_to_f32(mint_f32_to_f16(g));
}

// x[r] = gelu(x[r])   for r in [r0, r1)
void mint_gelu(float *x, size_t x_stride, int64_t n, long r0, long r1) {
    for (long r = r0; r < r1; r++) {
        float *xr = (float *)((char *)x + (size_t)r * x_stride);
        for (int64_t i = 0; i < n; i++) xr[i] = mint_gelu_one(xr[i]);
    }
}

// g[r] = gelu(g[r]) * u[r]   for r in [r0, r1)
void mint_gelu_mul(float *g, size_t g_stride, const float *u, size_t u_stride, int64_t n, long r0,
                   long r1) {
    for (long r = r0; r < r1; r++) {
        float *gr = (float *)((char *)g + (size_t)r * g_stride);
        const float *ur = (const float *)((const char *)u + (size_t)r * u_stride);
        for (int64_t i = 0; i < n; i++)
            gr[i] = gr[i] <= -10.0f ? 0.0f : mint_gelu_one(gr[i]) * ur[i];
    }
}

// x[r] = c tanh(x[r] / c)   for r in [r0, r1)
void mint_softcap(float *x, size_t x_stride, float c, int64_t n, long r0, long r1) {
    const float inv = 1.0f / c;
    for (long r = r0; r < r1; r++) {
        float *xr = (float *)((char *)x + (size_t)r * x_stride);
        for (int64_t i = 0; i < n; i++) xr[i] = tanhf(xr[i] * inv) * c;
    }
}

// s[0..n) = softmax(s)   (in place; exponentials summed in double, as ggml's soft_max)
void mint_softmax(const mint_vec_kernels *vk, float *s, int32_t n) {
    const float max = vk->max(s, n, -INFINITY);
    const double sum = vk->exp_sum(s, n, max);
    vk->scale(s, n, (float)(1.0 / sum));
}

void mint_softmax_sink(const mint_vec_kernels *vk, float *s, int32_t n, float sink) {
    float max = vk->max(s, n, -INFINITY);
    if (sink > max) max = sink;
    double sum = vk->exp_sum(s, n, max);
    sum += (double)expf(sink - max);
    vk->scale(s, n, (float)(1.0 / sum));
}
