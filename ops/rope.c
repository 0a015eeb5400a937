// rope.c - rotary position embedding (docs/formats.md 5.3). Pair i of each head turns by
// theta_i = pos * base^(-2i/n_rot) / ff_i * freq_scale. Which dimensions form pair i is the mode:
// NORMAL (llama) pairs (x[2i], x[2i+1]); NEOX (GPT-NeoX, Qwen, Gemma, Phi-3) pairs (x[i],
// x[i + n_rot/2]). ff_i are per-pair frequency factors (Llama 3's rope_freqs tensor, Phi-3's
// LongRoPE rope_factors_long/short), 1 when the model has none. LongRoPE also scales the pair by
// mscale, folded into cos and sin as ggml does (1 otherwise: exact).
#include "ops/ops.h"

#include <math.h>

// x[0..n_heads*head_dim) rotated in place for position pos (YaRN: mint_rope_angle).
void mint_rope_row(float *x, int n_heads, int head_dim, const mint_rope_cfg *c, int32_t pos) {
    // theta follows ggml's running product (not a fresh powf per pair): the two differ by up to
    // 1.8e-4 at positions in the thousands, and the product is what llama.cpp computes. The
    // factor divides before freq_scale multiplies, in ggml's order.
    float cs[512]; // cos/sin pairs; n_rot <= 512 is checked at load (head_dim <= 512)
    const int half = c->n_rot / 2;
    const float theta_scale = powf(c->base, -2.0f / (float)c->n_rot);
    float theta = (float)pos;
    for (int i = 0; i < half; i++) {
        float ms = c->mscale;
        const float t = mint_rope_angle(c->freq_factors ? theta / c->freq_factors[i] : theta, i,
                                        c->freq_scale, c->ext_factor, c->corr_dims, &ms);
        cs[2 * i] = cosf(t) * ms;
        cs[2 * i + 1] = sinf(t) * ms;
        theta *= theta_scale;
    }
    // Pair i is (v[i * step], v[i * step + off]).
    const int step = c->neox ? 1 : 2, off = c->neox ? half : 1;
    for (int h = 0; h < n_heads; h++) {
        float *v = x + (size_t)h * head_dim;
        for (int i = 0; i < half; i++) {
            float *a = v + i * step, *b = a + off;
            const float x0 = *a, x1 = *b, co = cs[2 * i], si = cs[2 * i + 1];
            // ggml is built with FP contraction, so its rotation is these two FMAs.
            *a = fmaf(x0, co, -(x1 * si));
            *b = fmaf(x0, si, x1 * co);
        }
    }
}

// YaRN's correction range (the contract is in ops/ops.h).
void mint_rope_yarn_corr_dims(int n_rot, int n_ctx_orig, float base, float dims[2]) {
    // The pair whose wavelength turns n_rot_turns times over n_ctx_orig positions.
    const float turns[2] = {32.0f, 1.0f};
    float d[2];
    for (int j = 0; j < 2; j++)
        d[j] = (float)n_rot * logf((float)n_ctx_orig / (turns[j] * 2.0f * (float)M_PI)) /
               (2.0f * logf(base));
    const float start = floorf(d[0]), end = ceilf(d[1]);
    dims[0] = start > 0.0f ? start : 0.0f;
    dims[1] = end < (float)(n_rot - 1) ? end : (float)(n_rot - 1);
}

// x[r] rotated for position pos[r]   for r in [r0, r1)
void mint_rope(float *x, size_t stride, const int32_t *pos, int n_heads, int head_dim,
               const mint_rope_cfg *c, long r0, long r1) {
    for (long r = r0; r < r1; r++)
        mint_rope_row((float *)((char *)x + (size_t)r * stride), n_heads, head_dim, c, pos[r]);
}
