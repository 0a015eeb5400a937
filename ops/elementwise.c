// elementwise.c - residual add and the SwiGLU activation.
#include "ops/ops.h"

#include <math.h>

// dst[t] += src[t]   rows split across threads
void op_add(const mint_node *n, const mint_exec *e, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    for (long t = lo; t < hi; t++) {
        float *x = mint_row(e, n->dst, t);
        const float *y = mint_row(e, n->src, t);
        for (int64_t i = 0; i < n->width; i++) x[i] += y[i];
    }
}

// dst[t] = silu(dst[t]) * src[t], silu(g) = g / (1 + e^-g)   rows split across threads
void op_silu_mul(const mint_node *n, const mint_exec *e, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    for (long t = lo; t < hi; t++) {
        float *g = mint_row(e, n->dst, t);
        const float *u = mint_row(e, n->src, t);
        for (int64_t i = 0; i < n->width; i++) g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
    }
}
