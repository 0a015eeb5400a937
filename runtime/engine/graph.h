// graph.h - the forward pass as data: a list of nodes built once per context from the model.
//
// Activations live in a small fixed set of buffers (llama2.c's RunState), each holding one row
// per token of the batch. A node names its op, its input and output buffers, and its weight;
// the executor (runtime/engine/exec.c) runs the list on the thread pool with a barrier after each
// node. For one llama block the list reads like the paper:
//
//   attn_norm   RMS_NORM     x     -> xb        (x normalised, times attn_norm)
//   attn_in     CONVERT      xb    -> xq        (xb rounded to the weights' vec_dot_type)
//   attn_q/k/v  MATMUL       xq    -> q, k, v
//   [q/k/v_bias ADD_BIAS     q, k, v            (+ bias: Qwen2)]
//   [q/k_norm   HEAD_NORM    q, k               (RMSNorm of each head: Qwen3)]
//   rope_q/k    ROPE         q, k               (rotary position, in place; NEOX pairs for
//                                               Qwen, frequency factors for Llama 3)
//   [q_scale    SCALE        q                  (q * 1/sqrt(head_dim): Phi-3)]
// GPT-2 differs in three places: learned positions added after the embedding (POS_ROWS into
// tmp, ADD), LayerNorm (LAYER_NORM then ADD_BIAS) for every norm, and no RoPE; its feed-forward
// is ffn_up (+ bias), GELU, ffn_down (+ bias). Gemma scales the embedding (SCALE), normalises
// the attention's and the feed-forward's outputs again before their residual adds (RMS_NORM in
// place on tmp), gates with GELU (GELU_MUL), soft-caps the scores inside ATTENTION and (Gemma 2)
// the logits (SOFTCAP), and windows the attention of its local layers.
//   kv_store    KV_STORE     k, v  -> cache     (each row's key/value at its sequence's position)
//   attn        ATTENTION    q, cache -> att    (causal softmax(q k / sqrt(d)) v, per head, each
//                                               row over its own sequence)
//   attn_out    CONVERT+MATMUL att -> tmp    [+ ADD_BIAS when the file has attn_output.bias]
//   attn_res    ADD          x += tmp
//   ffn_norm    RMS_NORM     x     -> xb
//   ffn_gate/up CONVERT+MATMUL xb  -> hb, hb2
//   ffn_act     SILU_MUL     hb = silu(hb) * hb2
//   ffn_down    CONVERT+MATMUL hb  -> tmp
//   ffn_res     ADD          x += tmp
// A hybrid's recurrent layer (LFM2) replaces everything from attn_q to attn_out with:
//   conv_in     CONVERT+MATMUL xb -> mix        (b, c and x [3 n_embd])
//   shortconv   SHORTCONV    mix   -> att       (c * conv(b * x), the state carried per sequence)
//   conv_out    CONVERT+MATMUL att -> tmp
// A gated delta-net layer (Qwen3.5) replaces them with:
//   ssm_qkv/z/beta/alpha CONVERT+MATMUL xb -> mix, gate, beta, alpha
//   ssm_gates   DELTA_GATES  alpha, beta       (softplus(alpha + dt) * a; sigmoid(beta))
//   ssm_conv    CONV1D       mix   -> conv     (silu of the causal convolution, state carried)
//   ssm_l2      L2_NORM      conv              (q and k heads)
//   ssm_delta   DELTA_NET    conv, alpha, beta -> att (the state carried per sequence)
//   ssm_norm    NORM_GATED   att, gate         (rmsnorm per head * silu(z))
//   ssm_out     CONVERT+MATMUL att -> tmp
// and its attention layers project q with a gate (Q_SPLIT after attn_q) and gate the attention's
// output (SIGMOID_GATE) before attn_output.
// A mixture of experts (Qwen3-MoE) replaces gate, up and down with:
//   ffn_router  MATMUL       xb    -> route     (the router's logits [n_expert])
//   ffn_route   MOE_ROUTE    route -> sel       (softmax, the k best experts and their weights)
//   ffn_group   MOE_GROUP    sel                (the batch's rows listed per expert)
//   ffn_gate/up_exps MOE_MATMUL xq -> hb, hb2   (each row's k experts: [k * n_ff_exp])
//   ffn_act     SILU_MUL     hb = silu(hb) * hb2
//   ffn_down_exps MOE_MATMUL hb  -> exp        (each expert's output: [k * n_embd])
//   ffn_moe_sum MOE_SUM      exp, sel -> tmp   (weighted, summed in the experts' order)
// and, with a shared expert (Qwen2-MoE), its gate/up/act/down as a dense SwiGLU into exp, its
// gate's logit (MATMUL with a vector) into route, then MOE_SHARED: tmp += exp * sigmoid(route).
// Gemma 4 sizes q, k, v and the attention per layer (node head_dim), has no k and v (nor their
// store) in the layers reading an earlier layer's cache, normalises v per head (HEAD_NORM with a
// weight of ones), and adds to each layer's output an input of its own, made once per token:
//   per_layer_token_embd GET_ROWS ids -> ple  (then SCALE by sqrt(n_ple))
//   per_layer_model_proj MATMUL x -> hb        (then SCALE by 1/sqrt(n_embd), HEAD_NORM per layer)
//   ple_add      ADD          ple += hb         (then SCALE by 1/sqrt(2))
// and, per layer after ffn_res:
//   inp_gate     MATMUL       x     -> hb        [n_ple]
//   ple_act      GELU_MUL     hb = gelu(hb) * ple[l * n_ple ..]
//   proj         MATMUL       hb    -> tmp       (then RMS_NORM in place: post_norm)
//   ple_res      ADD          x += tmp           [out_scale SCALE x by layer_output_scale]
// and after the last block, on the rows whose logits are wanted only:
//   out_rows    GATHER       x     -> tmp       (those rows, packed)
//   output_norm RMS_NORM     tmp   -> xb
//   output      CONVERT+MATMUL xb  -> logits
#ifndef MINT_GRAPH_H
#define MINT_GRAPH_H

#include "quant/kernels.h"
#include "runtime/engine/model.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum mint_op {
    MINT_OP_GET_ROWS,     // dst[t] = dequantized row ids[t] of the weight
    MINT_OP_RMS_NORM,     // dst[t] = src[t] / sqrt(mean(src[t]^2) + eps) * w
    MINT_OP_CONVERT,      // dst[t] = src[t] converted to the activation type `type`
    MINT_OP_MATMUL,       // dst[t] = W . src[t]  (src already converted to W's vec_dot_type)
    MINT_OP_ROPE,         // dst[t] rotated in place for position pos + t
    MINT_OP_KV_STORE,     // cache[layer] rows pos..pos+n-1 = (k, v)
    MINT_OP_ATTENTION,    // dst[t] = causal multi-head attention of q[t] over the cache
    MINT_OP_ADD,          // dst[t] += src[t]
    MINT_OP_SILU_MUL,     // dst[t] = silu(dst[t]) * src[t]
    MINT_OP_GATHER,       // dst[i] = src[out_rows[i]]: the rows whose logits are wanted
    MINT_OP_ADD_BIAS,     // dst[t] += w (a bias vector)
    MINT_OP_HEAD_NORM,    // each w->n_in run of dst[t] (a head, or the row: OLMoE) RMS-normalised
                          // in place, times w
    MINT_OP_SCALE,        // dst[t] *= scale
    MINT_OP_LAYER_NORM,   // dst[t] = (src[t] - mean) / sqrt(var + eps) * w  (bias: an ADD_BIAS)
    MINT_OP_GELU,         // dst[t] = gelu(dst[t]) (ggml's f16 table values)
    MINT_OP_POS_ROWS,     // dst[t] = row pos[t] of the weight: learned positions (GPT-2)
    MINT_OP_GELU_MUL,     // dst[t] = gelu(dst[t]) * src[t] (GeGLU: Gemma)
    MINT_OP_SOFTCAP,      // dst[t] = scale * tanh(dst[t] / scale) (Gemma 2's logits)
    MINT_OP_MOE_ROUTE,    // dst[t] = the k experts src[t]'s router logits choose: ids (as floats,
                          // exact) then weights (ops/moe.c); src[t] becomes the probabilities
    MINT_OP_MOE_GROUP,    // the rows (t, j) of the batch listed per chosen expert (exec's moe)
    MINT_OP_MOE_MATMUL,   // dst[t][j] = W[expert j of t] . (src[t], or src[t][j] when per_slot)
    MINT_OP_MOE_SUM,      // dst[t] = sum_j weight j of src2[t] * src[t][j]
    MINT_OP_MOE_SHARED,   // dst[t] += src[t] * sigmoid(src2[t][0]) (the shared expert, gated)
    MINT_OP_SWIGLU_OAI,   // dst[t] = swiglu_oai(dst[t], src[t]) (gpt-oss's experts: ops/ops.h)
    MINT_OP_SHORTCONV,    // dst[t] = c * conv(b * x) of src[t] = (b, c, x) over its sequence's
                          // last taps, carrying the state (LFM2: ops/shortconv.c)
    MINT_OP_Q_SPLIT,      // src[t] = (q, gate) per head [2 head_dim]: q into dst[t], the gates
                          // into src2[t] (Qwen3.5's attn_q)
    MINT_OP_SIGMOID_GATE, // dst[t] *= sigmoid(src[t]) (the attention's output, gated)
    MINT_OP_DELTA_GATES,  // dst[t] (alpha) = softplus(alpha + w) * bias, src[t] (beta) =
                          // sigmoid(beta), in place (ops/delta_net.h)
    MINT_OP_CONV1D,       // dst[t] = silu(conv(src)) per channel over its sequence's last taps,
                          // carrying the state (a delta net's q, k, v)
    MINT_OP_L2_NORM,      // the first width elements of dst[t], a head of hp->ssm_s at a
                          // time (q and k), divided by their L2 norm, in place
    MINT_OP_DELTA_NET,    // dst[t] = the gated delta rule's output for q, k, v of src[t],
                          // log-decays src2[t] and write strengths beta[t], carrying the state
    MINT_OP_NORM_GATED,   // dst[t] = rmsnorm per head (times w) * silu(src[t]), in place
    MINT_OP_COUNT,
} mint_op;

// The activation buffers. Each holds n_batch rows of `width` elements (f32, or bytes of a
// converted type for the XQ_* buffers).
typedef enum mint_buf_id {
    MINT_BUF_NONE = -1,
    MINT_BUF_X = 0,  // residual stream [n_embd]
    MINT_BUF_XB,     // normalised residual [n_embd]
    MINT_BUF_Q,      // queries [n_head * head_dim]
    MINT_BUF_K,      // keys of this batch [n_head_kv * head_dim]
    MINT_BUF_V,      // values of this batch [n_head_kv * head_dim]
    MINT_BUF_ATT,    // attention output [n_head * head_dim]
    MINT_BUF_HB,     // ffn gate, then silu(gate) * up [n_ff] (a mixture: [k * n_ff_exp])
    MINT_BUF_HB2,    // ffn up [n_ff] (a mixture: [k * n_ff_exp])
    MINT_BUF_TMP,    // matmul output before the residual add [n_embd]
    MINT_BUF_LOGITS, // output logits [n_vocab]
    MINT_BUF_XQ,     // converted activations (bytes, sized for the largest conversion)
    MINT_BUF_ROUTE,  // a mixture's router logits, then probabilities [n_expert]
    MINT_BUF_SEL,    // the chosen experts: ids (as floats), then weights [2 n_expert_used]
    MINT_BUF_EXP,    // each chosen expert's output [n_expert_used * n_embd]
    MINT_BUF_MIX,    // a recurrent mixer's input projection [3 n_embd] (LFM2: b, c, x; a delta
                     // net's q, k, v), or Qwen3.5's queries with their gates [2 q_dim]
    MINT_BUF_GATE,   // an output's gate: the attention's (Qwen3.5), a delta net's z
    MINT_BUF_CONV,   // a delta net's q, k, v after the convolution [(2 H_k + H_v) S]
    MINT_BUF_ALPHA,  // a delta net's decays [H_v]
    MINT_BUF_BETA,   // a delta net's write strengths [H_v]
    MINT_BUF_PLE,    // every layer's own input [n_layer * n_ple] (Gemma 4), layer l's at l * n_ple
    MINT_BUF_COUNT,
} mint_buf_id;

typedef struct mint_node {
    mint_op op;           // what to compute
    char name[32];        // e.g. "blk.3.attn_q", for --dump-graph and errors
    mint_buf_id dst;      // output buffer (in place for ROPE / ADD / SILU_MUL)
    mint_buf_id src;      // first input buffer
    mint_buf_id src2;     // second input (KV_STORE: v; SILU_MUL: up), else NONE
    const mint_weight *w; // weight (GET_ROWS, RMS_NORM, MATMUL, ADD_BIAS, HEAD_NORM; ROPE: the
                          // frequency factors, or NULL; ATTENTION: the sinks, or NULL), else NULL
    int32_t layer;        // block index (KV_STORE, ATTENTION, SHORTCONV, ROPE), else -1
    int32_t slot;         // KV_STORE, ATTENTION: the layer's index among the KV cache's layers;
                          // SHORTCONV: among the recurrent state's; else -1
    uint32_t type;        // CONVERT: target type; MATMUL: the type src was converted to;
                          // MOE_ROUTE: the weighting (ops/ops.h mint_moe_weights)
    const mint_weight *bias; // MOE_MATMUL: the experts' biases (row e: expert e's), or NULL
    int64_t width;           // elements per row of dst (or of src for CONVERT)
    int64_t src_at;          // GELU_MUL: where in each src row its input starts (a layer's part
                             // of Gemma 4's per-layer inputs), else 0
    int32_t head_dim;        // ROPE, ATTENTION: the layer's head size (Gemma 4's vary), else 0
    float scale;             // SCALE: the factor; SOFTCAP: the cap; else 0
    bool out_only;           // runs on the n_out gathered rows whose logits are wanted (the
                             // final norm and the output head), not on every row of the batch
    bool no_barrier;         // the next node neither reads nor writes what this one writes
                             // (q, k and v; gate and up): threads go on without waiting
    bool per_slot;           // MOE_MATMUL: slot j of row t reads part j of src[t] (the experts'
                             // own hidden rows), not the whole row (the shared input)
} mint_node;

typedef struct mint_graph {
    mint_node *nodes;              // [n_nodes] in execution order
    int n_nodes;                   // number of nodes
    int64_t width[MINT_BUF_COUNT]; // elements (XQ: bytes) per row of each buffer
} mint_graph;

// Builds the graph for a model in a context of n_ctx positions per sequence (which picks
// LongRoPE's factors); activations are converted to the vec_dot_type of each weight in the kernel
// table k.
mint_status mint_graph_build(const mint_model *m, const mint_kernels *k, int32_t n_ctx,
                             mint_graph *g, mint_err *err);
void mint_graph_free(mint_graph *g);

// Writes the graph as text (one node per line: index, op, name, inputs -> output with shapes,
// weight type) into a malloc'd string.
char *mint_graph_describe(const mint_graph *g, const mint_model *m);

const char *mint_op_name(mint_op op);
const char *mint_buf_name(mint_buf_id b);

#endif // MINT_GRAPH_H
