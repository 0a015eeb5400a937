// delta_net.h - the operations of a gated delta-net layer (Qwen3.5's linear-attention layers,
// llama.cpp's arch `qwen35`) that are not matmuls: the causal depthwise convolution with its
// carried state, the L2 norm of the q and k heads, the decay and write-strength gates, the gated
// delta rule itself (recurrent, one token after another, and chunked, for prompts), the gated
// RMSNorm of its output, and the sigmoid gate of Qwen3.5's full-attention layers.
//
// Like ops/ops.h, an op reads and writes what it is given: rows [r0, r1), channels [c0, c1) or
// value heads [h0, h1), so the executor can split the work across threads by calling an op once
// per thread. No op splits a reduction, so a result never depends on how the work was split.
//
// Layouts, in C order (the last index contiguous), and llama.cpp's tensors they match (llama.cpp
// writes shapes fastest index first, so its {a, b} is [b][a] here):
//   conv weight  w[C][L]      ssm_conv1d.weight {L, C}: row c holds channel c's L taps
//   conv state   st[C][L-1]   the layer's conv state {L-1, C}: row c holds channel c's last L-1
//                             inputs, oldest first (so llama.cpp's state can be copied in)
//   q, k         [H_k][S_k]   per token, the first two parts of the convolution's output
//   v            [H_v][S_v]   per token, its third part
//   g, beta      [H_v]        per token
//   delta state  [H_v][S_v][S_k]  llama.cpp's ssm state {S_v, S_v, H_v} (S_k == S_v there),
//                             byte for byte: element [h][j][i] is S_h[i][j], the weight from key
//                             dimension i to value dimension j of head h. S_h is S_k x S_v and
//                             stored by columns: column j (value j's S_k weights) is contiguous,
//                             so S_h^T k is S_v contiguous dots, as in ggml's gated_delta_net
//   out          [H_v][S_v]   per token
// Value head h reads key head h % H_k (H_v a multiple of H_k): llama.cpp's GGUF files store the
// value heads tiled over the key heads (K0 K1 .. K0 K1 ..), which is how ggml's gated_delta_net
// and ggml_repeat broadcast q and k.
#ifndef MINT_DELTA_NET_H
#define MINT_DELTA_NET_H

#include "quant/kernels.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Each head of x[r] (n_heads runs of head_dim) divided in place by its L2 norm, for r in
// [r0, r1), as ggml's l2_norm: the squares (each rounded to f32) summed in double, the scale
// 1 / max(sqrtf(sum), eps) in f32, each x times it. Qwen3.5 calls it on q and k with the
// model's RMS eps; their 2 H_k heads are adjacent in a row of the convolution's output.
void mint_l2_norm_heads(float *x, size_t stride, int n_heads, int head_dim, float eps, long r0,
                        long r1);

// The gates of a token, in place, for r in [r0, r1) (H_v = n_heads values per row):
//   alpha[r][h] = softplus(alpha[r][h] + dt_bias[h]) * a[h]    the log-decay g (<= 0)
//   beta[r][h]  = sigmoid(beta[r][h])                          the write strength
// as ggml's add, softplus (x above 20 passes through, else logf(1 + expf(x))), mul, and
// sigmoid 1 / (1 + expf(-x)). a is ssm_a, which the GGUF stores as -exp(A_log).
void mint_delta_gates(float *alpha, size_t alpha_stride, float *beta, size_t beta_stride,
                      const float *dt_bias, const float *a, int n_heads, long r0, long r1);

// The dimensions of one layer's delta rule.
typedef struct mint_delta_dims {
    int n_k_heads; // H_k: heads of q and k
    int n_v_heads; // H_v: heads of v, g, beta, out and the state (a multiple of H_k)
    int s_k;       // S_k: elements of a q or k head
    int s_v;       // S_v: elements of a v or out head
    float scale;   // out = scale * S^T q: 1 / sqrtf(S_k) for Qwen3.5. q comes unscaled; the
                   // scale multiplies each finished output, as ggml's gated_delta_net does
} mint_delta_dims;

// One run of n_tokens consecutive tokens of one sequence. Token t's rows start t * *_stride
// bytes after the pointer; a row holds what the layout table above says. out and state must not
// overlap the inputs or each other.
typedef struct mint_delta_seq {
    int n_tokens;       // T >= 1
    const float *q;     // [T rows][H_k][S_k], L2-normalised, unscaled
    size_t q_stride;    // bytes between tokens of q
    const float *k;     // [T rows][H_k][S_k], L2-normalised
    size_t k_stride;    // bytes between tokens of k
    const float *v;     // [T rows][H_v][S_v]
    size_t v_stride;    // bytes between tokens of v
    const float *g;     // [T rows][H_v] log-decays: the state decays by e^g (g <= 0)
    size_t g_stride;    // bytes between tokens of g
    const float *beta;  // [T rows][H_v] write strengths in (0, 1) (sigmoid already applied)
    size_t beta_stride; // bytes between tokens of beta
    float *out;         // [T rows][H_v][S_v], written
    size_t out_stride;  // bytes between tokens of out
    float *state;       // [H_v][S_v][S_k], the state before the run, updated to the state
                        // after it
} mint_delta_seq;

// The gated delta rule token by token, for value heads [h0, h1): per token t and head h, with
// S = S_h, k, q of key head h % H_k,
//   S = e^g S;   d = beta (v - S^T k);   S = S + k d^T;   out = scale * S^T q
// in this order of ggml's gated_delta_net: the state scaled by expf(g) and rounded, then per
// value dimension j the dot of column j with k, d_j = (v_j - dot) * beta, column j += k * d_j
// (each product rounded, then added), and its dot with q times scale. Each dot sums in 16
// interleaved f32 lanes (element i to lane i % 16) that then combine pairwise, halving. K's
// delta_step does one token of one head (quant/kernels.h: every level gives the same bits).
void mint_delta_net_recurrent(const mint_kernels *K, const mint_delta_dims *d,
                              const mint_delta_seq *s, int h0, int h1);

// Tokens per chunk of mint_delta_net_chunked.
#define MINT_DELTA_CHUNK 64

// Bytes of scratch one call of mint_delta_net_chunked needs (each thread its own).
size_t mint_delta_net_chunked_scratch_bytes(const mint_delta_dims *d);

// The same recurrence as mint_delta_net_recurrent, for value heads [h0, h1), computed in chunks
// of MINT_DELTA_CHUNK tokens with the WY (UT) representation of llama.cpp's delta-net chunking:
// within a chunk the updates of the state are solved for all tokens at once (a unit lower
// triangular system in the chunk's keys), the outputs are the decayed state's read-outs plus the
// chunk's causal attention over the solved updates, and the state is updated once per chunk.
// Equal to the recurrent form up to rounding (tests/test_ops_delta.c states the budget). Its
// products are gemm-shaped (x m, both row-major, each sum in order), which vectorize better than
// the recurrent form's dots, but for S = 128 it does about 40% more multiply-adds: with the
// portable flags the two forms take about as long on a long run and the recurrent one is faster on
// a short run (for 16 heads of 128: 1 token 0.08 against 0.5 ms), with -march=native (MINT_NATIVE)
// this one is the faster. scratch: mint_delta_net_chunked_scratch_bytes bytes, float-aligned
// (64-byte alignment keeps each of its arrays on whole cache lines).
void mint_delta_net_chunked(const mint_delta_dims *d, const mint_delta_seq *s, void *scratch,
                            int h0, int h1);

// Qwen3.5's gated norm, norm(out, z), in place for r in [r0, r1): each head of x[r] (n_heads
// runs of head_dim) RMS-normalised (mint_rms_norm_row: ggml's rms_norm, then times w[head_dim]),
// then times silu(z) of the same element, silu(z) = z / (1 + expf(-z)) rounded first (ggml's
// build_norm then mul by silu(z)).
void mint_rms_norm_gated(float *x, size_t x_stride, const float *z, size_t z_stride, const float *w,
                         int n_heads, int head_dim, float eps, long r0, long r1);

// x[r][h][i] *= sigmoid(g[r][h * g_head_stride + i])   for r in [r0, r1), h < n_heads,
// i < head_dim, sigmoid(g) = 1 / (1 + expf(-g)) rounded first (ggml's sigmoid, then mul). Qwen3.5's
// full-attention layers gate their output with it; their gate is the second half of each head of
// the q projection (g = q + head_dim, g_head_stride = 2 head_dim; head_dim when it is packed).
void mint_sigmoid_gate(float *x, size_t x_stride, const float *g, size_t g_stride,
                       size_t g_head_stride, int n_heads, int head_dim, long r0, long r1);

// The causal depthwise convolution of one sequence's n_tokens inputs, for channels [c0, c1):
//   out[t][c] = sum over j < L of w[c][j] * xx[t + j][c],   xx = the L-1 inputs of state[c],
//                                                            then x
// the products added in the order of j from 0 in f32 (ggml's ssm_conv; a build of ggml that
// targets FMA fuses each step, sum = fma(x, w, sum)), then silu(out) if apply_silu (Qwen3.5
// applies ggml's silu to the convolution: silu(y) = y / (1 + expf(-y))). state[c] becomes the
// last L-1 of xx. x, out: rows of C = the channel count, x_stride / out_stride bytes apart;
// out must not overlap x or state. Layouts of w and state: the table above.
void mint_conv1d_causal(const float *x, size_t x_stride, int n_tokens, const float *w, int kernel,
                        float *state, float *out, size_t out_stride, bool apply_silu, int c0,
                        int c1);

#endif
