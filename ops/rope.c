// rope.c - rotary position embedding in llama's NORMAL mode: adjacent pairs (x[2i], x[2i+1]) of
// each head rotate by theta_i = pos * base^(-2i/n_rot) * freq_scale (docs/formats.md 5.3).
#include "ops/ops.h"

#include <math.h>

// x[0..n_heads*head_dim) rotated in place for position pos.
void mint_rope_row(float *x, int n_heads, int head_dim, int n_rot, int32_t pos, float base,
                   float freq_scale) {
    // theta follows ggml's running product (not a fresh powf per pair): the two differ by up to
    // 1.8e-4 at positions in the thousands, and the product is what llama.cpp computes.
    float cs[512]; // cos/sin pairs; n_rot <= 512 is checked at load (head_dim <= 512)
    const float theta_scale = powf(base, -2.0f / (float)n_rot);
    float theta = (float)pos;
    for (int i = 0; i < n_rot / 2; i++) {
        const float t = theta * freq_scale;
        cs[2 * i] = cosf(t);
        cs[2 * i + 1] = sinf(t);
        theta *= theta_scale;
    }
    for (int h = 0; h < n_heads; h++) {
        float *v = x + (size_t)h * head_dim;
        for (int i = 0; i < n_rot / 2; i++) {
            const float x0 = v[2 * i], x1 = v[2 * i + 1], c = cs[2 * i], s = cs[2 * i + 1];
            // ggml is built with FP contraction, so its rotation is these two FMAs.
            v[2 * i] = fmaf(x0, c, -(x1 * s));
            v[2 * i + 1] = fmaf(x0, s, x1 * c);
        }
    }
}

// x[r] rotated for position pos[r]   for r in [r0, r1)
void mint_rope(float *x, size_t stride, const int32_t *pos, int n_heads, int head_dim, int n_rot,
               float base, float freq_scale, long r0, long r1) {
    for (long r = r0; r < r1; r++)
        mint_rope_row((float *)((char *)x + (size_t)r * stride), n_heads, head_dim, n_rot, pos[r],
                      base, freq_scale);
}
