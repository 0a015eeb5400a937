// norm.c - RMSNorm times the norm weight, as ggml computes it (formats.md 5.2): the squares are
// f32 products summed in double; the scale is 1 / sqrtf(mean + eps) in f32.
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

// dst[t] = rmsnorm(src[t]) * w   rows split across threads
void op_rms_norm(const mint_node *n, const mint_exec *e, int ith, int nth) {
    const int32_t first = mint_first_row(e, n);
    long lo, hi;
    mint_split(e->n_tokens - first, ith, nth, &lo, &hi);
    for (long t = first + lo; t < first + hi; t++)
        mint_rms_norm_row(mint_row(e, n->src, t), n->w->data, mint_row(e, n->dst, t), n->width,
                          e->hp->rms_eps);
}
