// ops.h - the operations of the forward pass, as plain functions over pointers and shapes.
//
// Like llama2.c's rmsnorm/matmul/softmax, an op knows nothing of graphs, contexts or threads: it
// reads and writes the rows it is given. Row ops take a range [r0, r1) of rows that are
// `*_stride` bytes apart, so the executor (runtime/engine/exec.c) splits the rows of a node
// across threads and calls the op once per thread. No op splits a dot product or a reduction,
// so a result never depends on how the rows were split. Attention has its own header
// (ops/attention.h).
#ifndef MINT_OPS_H
#define MINT_OPS_H

#include "quant/kernels.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// dst[r] = to_float(table row ids[r])   for r in [r0, r1); the embedding lookup. No rounding:
// ggml's get_rows dequantizes the row exactly.
void mint_get_rows(mint_to_float_fn to_float, const void *table, size_t table_row_bytes,
                   int64_t n_in, const int32_t *ids, float *dst, size_t dst_stride, long r0,
                   long r1);

// y[0..n) = x / sqrt(mean(x^2) + eps) * w   (one row)
void mint_rms_norm_row(const float *x, const float *w, float *y, int64_t n, float eps);
// mint_rms_norm_row for rows [r0, r1).
void mint_rms_norm(const float *x, size_t x_stride, const float *w, float *y, size_t y_stride,
                   int64_t n, float eps, long r0, long r1);

// y[r] = x[r] converted to a weight's vec_dot_type   for r in [r0, r1)
void mint_convert(mint_from_float_fn from_float, const float *x, size_t x_stride, void *y,
                  size_t y_stride, int64_t n, long r0, long r1);

// y[c * y_stride + r] = dot(w row r, a row c) for r < nr, c < nc: the kernel's gemm, or vec_dot
// per element when it has none (bit-identical either way). Every matmul of the model, and the
// score and value products of attention, are calls of this.
void mint_gemm_tile(const mint_type_kernels *tk, int64_t n, const void *w, size_t w_stride, int nr,
                    const void *a, size_t a_stride, int nc, float *y, size_t y_stride);

// How RoPE turns a head (ops/rope.c): which dimensions pair up and at what angles.
typedef struct mint_rope_cfg {
    int n_rot;                 // rotated dimensions per head (even, == head_dim)
    float base;                // frequency base (rope.freq_base)
    float freq_scale;          // 1 / linear scaling factor (1)
    const float *freq_factors; // [n_rot / 2] divisors of each pair's angle (Llama 3's
                               // rope_freqs), or NULL for none
    bool neox;                 // pairs (x[i], x[i + n_rot/2]) (NEOX) instead of (x[2i], x[2i+1])
    float mscale;              // cos and sin are multiplied by it (rope.scaling.attn_factor, 1):
                               // LongRoPE's sqrt(1 + ln(scale) / ln(original context))
    float ext_factor;          // YaRN's extrapolation mix (0: none, every angle times freq_scale)
    float corr_dims[2];        // YaRN: the pairs where the ramp from extrapolated (below [0]) to
                               // interpolated (above [1]) angles runs
} mint_rope_cfg;

// YaRN's correction range (ggml_rope_yarn_corr_dims): the pairs whose wavelength spans
// beta_fast = 32 and beta_slow = 1 turns over n_ctx_orig positions, floored / ceiled and clamped
// to [0, n_rot - 1], into dims[2].
void mint_rope_yarn_corr_dims(int n_rot, int n_ctx_orig, float base, float dims[2]);

// The angle of pair i whose unscaled angle is theta (pos * base^(-2i/n_rot) / ff_i), and the
// factor of its cos and sin, as ggml's rope computes them: theta * freq_scale, then with YaRN
// (ext_factor != 0) mixed back toward theta by the ramp over corr_dims, and mscale times
// 1 + 0.1 ln(1 / freq_scale).
static inline float mint_rope_angle(float theta, int i, float freq_scale, float ext_factor,
                                    const float corr_dims[2], float *mscale) {
    const float interp = theta * freq_scale;
    if (ext_factor == 0.0f) return interp;
    const float span = corr_dims[1] - corr_dims[0] > 0.001f ? corr_dims[1] - corr_dims[0] : 0.001f;
    const float y = ((float)i - corr_dims[0]) / span;
    const float ramp = (1.0f - (y < 0.0f ? 0.0f : y > 1.0f ? 1.0f : y)) * ext_factor;
    *mscale *= 1.0f + 0.1f * logf(1.0f / freq_scale);
    return interp * (1.0f - ramp) + theta * ramp;
}

// x[0..n_heads*head_dim) rotated in place for position pos: pair i of each head turned by
// pos * base^(-2i/n_rot) / freq_factors[i] * freq_scale, and scaled by mscale.
void mint_rope_row(float *x, int n_heads, int head_dim, const mint_rope_cfg *c, int32_t pos);
// mint_rope_row for rows [r0, r1), row r at position pos[r].
void mint_rope(float *x, size_t stride, const int32_t *pos, int n_heads, int head_dim,
               const mint_rope_cfg *c, long r0, long r1);

// Each head of x[r] (n_heads runs of head_dim) RMS-normalised in place and times w[0..head_dim)
// for r in [r0, r1): Qwen3's and Gemma 3's q/k norms.
void mint_rms_norm_heads(float *x, size_t stride, const float *w, int n_heads, int head_dim,
                         float eps, long r0, long r1);

// x[r] += y[r]   for r in [r0, r1), n elements per row (the residual add)
void mint_add(float *x, size_t x_stride, const float *y, size_t y_stride, int64_t n, long r0,
              long r1);

// y[0..n) = (x - mean) / sqrt(variance + eps) * w   (one row; LayerNorm without its bias)
void mint_layer_norm_row(const float *x, const float *w, float *y, int64_t n, float eps);
// mint_layer_norm_row for rows [r0, r1).
void mint_layer_norm(const float *x, size_t x_stride, const float *w, float *y, size_t y_stride,
                     int64_t n, float eps, long r0, long r1);

// gelu(x) as llama.cpp's CPU build computes it: the tanh form at x rounded to f16, the result
// rounded to f16 (ggml's table), 0 below -10 and x above 10.
float mint_gelu_one(float x);
// x[r] = gelu(x[r]) in place   for r in [r0, r1), n elements per row
void mint_gelu(float *x, size_t x_stride, int64_t n, long r0, long r1);

// g[r] = gelu(g[r]) * u[r]   for r in [r0, r1) (GeGLU; ggml's geglu: 0 where g <= -10)
void mint_gelu_mul(float *g, size_t g_stride, const float *u, size_t u_stride, int64_t n, long r0,
                   long r1);

// x[r] = c * tanh(x[r] * (1/c))   for r in [r0, r1) (soft-capping, as ggml: scale, tanh, scale)
void mint_softcap(float *x, size_t x_stride, float c, int64_t n, long r0, long r1);

// x[r] *= s   for r in [r0, r1), n elements per row (ggml_scale)
void mint_scale(float *x, size_t x_stride, float s, int64_t n, long r0, long r1);

// g[r] = silu(g[r]) * u[r], silu(g) = g / (1 + e^-g)   for r in [r0, r1) (SwiGLU)
void mint_silu_mul(float *g, size_t g_stride, const float *u, size_t u_stride, int64_t n, long r0,
                   long r1);

// s[0..n) = softmax(s) in place (n >= 1), with the float vector kernels vk: the maximum, the
// exponentials e^(s - max) (mint's exp) summed in double as ggml's soft_max does, times 1 / sum.
void mint_softmax(const mint_vec_kernels *vk, float *s, int32_t n);
// mint_softmax with one more logit, `sink`, in the maximum and the sum (ggml's soft_max with
// sinks): s[i] = e^(s[i] - m) / (sum_j e^(s[j] - m) + e^(sink - m)), m the maximum of both.
void mint_softmax_sink(const mint_vec_kernels *vk, float *s, int32_t n, float sink);

// How a router's logits become the chosen experts' weights.
typedef enum mint_moe_weights {
    MINT_MOE_PROBS = 0,    // softmax over all experts; the chosen ones' probabilities
    MINT_MOE_PROBS_NORM,   // ... divided by their sum (Qwen3-MoE, Mixtral)
    MINT_MOE_TOPK_SOFTMAX, // the k best logits, then a softmax over those k (gpt-oss)
} mint_moe_weights;

// A mixture of experts' router for one token (ops/moe.c): probs[0..n_expert) holds the router's
// logits (and becomes their softmax unless how is MINT_MOE_TOPK_SOFTMAX); ids[0..k) = the k
// experts of the highest logits, the best first (a tie to the lower id), weights[0..k) = their
// weights as `how` says.
void mint_moe_route(const mint_vec_kernels *vk, float *probs, int32_t n_expert, int32_t k,
                    mint_moe_weights how, int32_t *ids, float *weights);

// g[r][i] = swiglu_oai(g[r][i], u[r][i]) for i < n, r in [r0, r1): gpt-oss's clamped SwiGLU as
// ggml computes it, x = min(g, 7), y = clamp(u, -7, 7), x / (1 + e^(-1.702 x)) * (y + 1).
void mint_swiglu_oai(float *g, size_t g_stride, const float *u, size_t u_stride, int64_t n, long r0,
                     long r1);

// dst[0..n) = sum over j < k of weights[j] * y[j][0..n) (row j of y at j * y_stride bytes): the
// chosen experts' outputs, each product rounded, added in the order of j (ops/moe.c).
void mint_moe_sum(float *dst, const float *y, size_t y_stride, const float *weights, int32_t k,
                  int64_t n);

// dst[0..n) += y[0..n) * sigmoid(logit), the sigmoid as ggml's silu(logit) / logit (Qwen2-MoE's
// shared expert behind its gate; ops/moe.c).
void mint_moe_shared_add(float *dst, const float *y, float logit, int64_t n);

// LFM2's short convolution (ops/shortconv.c) over n_rows consecutive rows of one sequence, for
// channels [c0, c1) of n: in[t] = (b, c, x), three n-wide parts (in_proj's output), bx = b * x;
//   y[t][ch] = c[t][ch] * sum_{k < taps} w[ch * taps + k] * bx_{t - taps + 1 + k}[ch]
// where the bx before the first row are state[j * n + ch] (j = 0 .. taps - 2, oldest first).
// The state ends holding the run's last taps - 1 values of bx. taps is 2..64.
void mint_shortconv(const float *in, size_t in_stride, float *y, size_t y_stride, int32_t n_rows,
                    const float *w, int taps, float *state, int64_t n, long c0, long c1);

#endif // MINT_OPS_H
