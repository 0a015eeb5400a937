// arch.h - the architectures mint runs, each described by a row of a table (runtime/engine/
// arch.c): what its blocks have beyond llama's, read by the model binder (model.c), the graph
// builder (graph.c) and the plain forward pass (forward_plain.c). Metadata keys are llama.cpp's,
// prefixed with the architecture's name ("qwen2.embedding_length"); tensors have llama.cpp's
// names. docs/design.md ("Adding an architecture") says how a row is added.
#ifndef MINT_ARCH_H
#define MINT_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum mint_tensor_need {
    MINT_ABSENT = 0, // the architecture has no such tensor: one in the file is refused
    MINT_OPTIONAL,   // bound when the file has it (llama's optional biases, Llama 3's rope_freqs)
    MINT_REQUIRED,   // a file without it is refused, naming the tensor
} mint_tensor_need;

// How a block normalises its input, and the final norm.
typedef enum mint_norm_kind {
    MINT_NORM_RMS = 0, // RMSNorm times a weight; attention.layer_norm_rms_epsilon
    MINT_NORM_LAYER,   // LayerNorm times a weight plus a bias (blk.N.attn_norm/ffn_norm.bias,
                       // output_norm.bias); attention.layer_norm_epsilon (GPT-2)
} mint_norm_kind;

// Where a token's position enters.
typedef enum mint_pos_kind {
    MINT_POS_ROPE = 0,  // RoPE on q and k over the pairs (x[2i], x[2i+1]) (llama)
    MINT_POS_ROPE_NEOX, // RoPE over the pairs (x[i], x[i + n_rot/2]) (Qwen, Phi-3, Gemma)
    MINT_POS_LEARNED,   // position_embd.weight [n_embd, context_length] added to the embedding;
                        // no RoPE (GPT-2)
} mint_pos_kind;

// The feed-forward block.
typedef enum mint_ffn_kind {
    MINT_FFN_SWIGLU = 0, // down(silu(gate x) * up x)
    MINT_FFN_GEGLU,      // down(gelu(gate x) * up x), the gate through ggml's GELU table (Gemma)
    MINT_FFN_GELU,       // down(gelu(up x + b_up)) + b_down: two matrices with biases, no gate
                         // (GPT-2)
    MINT_FFN_MOE,        // a mixture of experts: a router (blk.N.ffn_gate_inp) scores
                         // expert_count SwiGLU experts (blk.N.ffn_gate/up/down_exps, one matrix
                         // per expert stacked along a third axis); each token takes the
                         // expert_used_count best, their outputs weighted by the router's
                         // softmax probabilities (Qwen3-MoE, OLMoE, Mixtral)
} mint_ffn_kind;

// How a mixture's router turns its logits into the chosen experts' weights.
typedef enum mint_moe_gating {
    MINT_MOE_SOFTMAX = 0,  // softmax over every expert's logit, the best k taken with their
                           // probabilities (renormalised when moe_norm_weights)
    MINT_MOE_SOFTMAX_TOPK, // the best k logits taken, then a softmax over those k alone
                           // (gpt-oss; llama.cpp's SOFTMAX_WEIGHT gating)
} mint_moe_gating;

// An expert's activation between its gate/up and down projections.
typedef enum mint_moe_act {
    MINT_MOE_SWIGLU = 0, // silu(gate) * up
    MINT_MOE_SWIGLU_OAI, // min(gate, 7) sigmoid(1.702 min(gate, 7)) (clamp(up, -7, 7) + 1)
                         // (gpt-oss; llama.cpp's swiglu_oai)
} mint_moe_act;

// A layer's token mixer: attention over the KV cache, or a recurrence whose past is one state per
// sequence (runtime/engine/rstate.h) that each token overwrites.
typedef enum mint_mixer_kind {
    MINT_MIXER_ATTENTION = 0, // attention (every layer of a transformer)
    MINT_MIXER_SHORTCONV,     // LFM2's double-gated short convolution: in_proj gives b, c, x;
                              // y = out_proj(c * conv(b * x)), conv a depthwise causal one over
                              // the last shortconv.l_cache inputs (its state: the L - 1 before)
    MINT_MIXER_DELTA_NET,     // Qwen3.5's gated delta net: q, k, v through a causal convolution
                              // (ssm.conv_kernel taps) and SiLU, q and k L2-normalised, then the
                              // gated delta rule over a [S_v][S_k] state per value head, its
                              // output RMS-normalised per head and gated by silu(z)
                              // (ops/delta_net.h)
} mint_mixer_kind;

typedef struct mint_arch {
    const char *name;          // general.architecture, and the prefix of its metadata keys
    mint_norm_kind norm;       // every norm of the model
    mint_pos_kind pos;         // RoPE (which pairs) or learned positions
    mint_ffn_kind ffn;         // the feed-forward block
    mint_tensor_need qkv_bias; // blk.N.attn_q/k/v.bias [q_dim]/[kv_dim] (attn_qkv.bias when fused)
    mint_tensor_need out_bias; // blk.N.attn_output.bias [n_embd]
    mint_tensor_need qk_norm;  // blk.N.attn_q_norm/attn_k_norm.weight [head_dim], RMSNorm per head
    bool qk_norm_whole;        // ... [q_dim] / [kv_dim] instead: one RMSNorm over the whole
                               // projection, before it is cut into heads (OLMoE)
    mint_tensor_need rope_freqs; // rope_freqs.weight [n_rot / 2]: divisors of each pair's angle
    mint_tensor_need longrope;   // rope_factors_long/short.weight [n_rot / 2]: LongRoPE's two sets
                                 // of divisors, chosen by the context's length (Phi-3 128k,
                                 // Phi-3.5)
    bool fused_qkv;     // q, k, v are row ranges of one blk.N.attn_qkv.weight [n_embd, q+2kv]
    bool fused_gate_up; // gate and up are the two halves of blk.N.ffn_up.weight [n_embd, 2 n_ff]
    bool q_prescale;    // queries are scaled by 1/sqrt(head_dim) before attention, which then
                        // scales the scores by 1 (Phi-3 in llama.cpp: the same value, rounded
                        // at another step)
    // Gemma 2 and 3:
    bool embd_scale; // the embedding is multiplied by sqrt(n_embd)
    bool post_norms; // RMSNorm of the attention's and the feed-forward's outputs before their
                     // residual adds (blk.N.post_attention_norm, blk.N.post_ffw_norm)
    int swa_period;  // with attention.sliding_window (or swa_window_default), layers l with
                     // l % swa_period < swa_period - 1 see only the window's last keys
                     // (attention.sliding_window_pattern may override the period); 0: none
    int swa_window_default; // the window when the file does not say (0: no window then)
    float attn_softcap;     // scores = c tanh(scores / c) before the softmax
                            // (attn_logit_softcapping overrides; 0: none)
    float final_softcap;    // logits = c tanh(logits / c) (0: none)
    bool final_softcap_key; // final_logit_softcapping, when the file has it, sets that c
    float rope_base_swa;    // RoPE base of the window layers when rope.freq_base_swa is
                            // absent (0: the file's rope.freq_base and scale)
    int wide_scale_layers;  // a model with this many layers scales queries by
                            // 1/sqrt(n_embd / n_head), not 1/sqrt(head_dim) (the 27B ones)
    bool moe_norm_weights;  // MINT_FFN_MOE: the chosen experts' probabilities are divided by
                            // their sum (Qwen3-MoE's norm_topk_prob), else used as they are
    bool moe_variant;       // the row a file of this name takes when its expert_count is > 0
                            // (Mixtral's experts in a llama file): mint_arch_for_file finds
                            // it, mint_arch_find never does
    bool moe_ff_is_ff;      // the experts are feed_forward_length wide (llama's layout), not
                            // expert_feed_forward_length
    bool moe_shared_expert; // beside the routed experts, a shared SwiGLU expert every token
                            // takes (ffn_gate/up/down_shexp, expert_shared_feed_forward_length
                            // wide), its output times sigmoid(ffn_gate_inp_shexp . x)
                            // (Qwen2-MoE)
    // gpt-oss:
    mint_tensor_need attn_sinks;  // blk.N.attn_sinks.weight [n_head] F32: per head, a logit that
                                  // joins every softmax of the attention without a value (it only
                                  // takes weight away from the keys)
    bool ffn_norm_post_attention; // the feed-forward's RMSNorm weight is stored as
                                  // blk.N.post_attention_norm.weight (its name in gpt-oss files)
    mint_moe_gating moe_gating;   // MINT_FFN_MOE: logits to weights
    mint_moe_act moe_act;         // MINT_FFN_MOE: the experts' activation
    mint_tensor_need moe_biases;  // biases of the router (ffn_gate_inp.bias [n_expert]) and of
                                  // every expert's projections (ffn_gate/up/down_exps.bias,
                                  // [n_ff_exp] / [n_embd] per expert)
    // Hybrids (a recurrent mixer in some layers, attention in the others):
    mint_mixer_kind recurrent;    // the mixer of the recurrent layers (ATTENTION: every layer is)
    bool recurrent_no_kv;         // layer l is recurrent when attention.head_count_kv[l] is 0, an
                                  // array with an entry per layer (LFM2)
    const char *output_norm_name; // the final norm's tensor when not output_norm.weight (LFM2's
                                  // converter names it token_embd_norm.weight)
    bool recurrent_interval;      // layer l is recurrent unless (l + 1) is a multiple of
                                  // full_attention_interval (default 4) (Qwen3.5)
    bool q_gate;                  // attn_q gives each head's queries and as many gate values
                                  // after them ([2 head_dim] per head); the attention's output
                                  // is multiplied by sigmoid(gate) before attn_output (Qwen3.5)
    // Gemma 4 (runtime/engine/gemma4.c reads what the file says per layer):
    bool layer_shapes;  // per-layer shapes from the file's arrays: window layers marked by
                        // attention.sliding_window_pattern (a bool per layer) with a head size of
                        // their own (attention.key_length_swa), feed_forward_length per layer,
                        // and the last attention.shared_kv_layers layers computing no keys or
                        // values but reading an earlier layer's; rope_freqs only on full layers
    bool v_norm;        // each value head RMS-normalised, without a weight
    bool attn_unscaled; // scores are q . k, neither queries nor scores scaled
    mint_tensor_need per_layer_input; // per_layer_token_embd, per_layer_model_proj and
                                      // per_layer_proj_norm, and per layer inp_gate, proj and
                                      // post_norm: an input of its own for each layer, made from
                                      // the token and its embedding (embedding_length_per_layer_
                                      // input wide), gated into the layer's output
    mint_tensor_need out_scale;       // blk.N.layer_output_scale.weight [1]: the layer's output
                                      // times that number
    // What llama-quantize knows of the architecture (runtime/filetools/mix.c):
    int quant_70b_layers; // a model with this many layers is llama.cpp's 70B type, whose attn_v
                          // gets more bits (0: none)
    bool quant_70b_gqa;   // ... only when its K/V heads are shared (llama's 80 MHA layers: 65B)
} mint_arch;

// ---------------------------------------------------------------------------------------------
// A layer's tensors, declared: what the binder (runtime/engine/model.c) reads and checks and
// the synthetic writer (runtime/filetools/synth.c) writes, from one list made from the row.

// A length in the model's dimensions.
typedef enum mint_dim {
    MINT_DIM_0 = 0,    // nothing: a view at the start
    MINT_DIM_1,        // one: a vector's row count
    MINT_DIM_EMBD,     // n_embd
    MINT_DIM_FF,       // n_ff
    MINT_DIM_FF2,      // 2 n_ff (gate and up in one matrix)
    MINT_DIM_Q,        // n_head * head_dim
    MINT_DIM_KV,       // n_head_kv * head_dim
    MINT_DIM_Q_KV,     // q + kv (where a fused v starts)
    MINT_DIM_QKV,      // q + 2 kv (q, k and v in one matrix)
    MINT_DIM_HEAD,     // head_dim
    MINT_DIM_FF_EXP,   // an expert's feed-forward width (expert_feed_forward_length)
    MINT_DIM_EXPERTS,  // experts (expert_count)
    MINT_DIM_FF_SHEXP, // the shared expert's width (expert_shared_feed_forward_length)
    MINT_DIM_HEADS,    // n_head (one number per query head: attention sinks)
    MINT_DIM_CONV,     // a short convolution's taps (shortconv.l_cache)
    MINT_DIM_EMBD3,    // 3 n_embd (LFM2's in_proj: b, c and x)
    MINT_DIM_Q2,       // 2 q (queries and their gates: Qwen3.5's attn_q)
    MINT_DIM_SSM_QKV,  // a delta net's q, k and v: 2 H_k S + H_v S
    MINT_DIM_SSM_V,    // its v (and output): H_v S (ssm.inner_size)
    MINT_DIM_SSM_VH,   // its value heads H_v (ssm.time_step_rank)
    MINT_DIM_SSM_S,    // a head's size S (ssm.state_size)
    MINT_DIM_PLE,      // a layer's own input width (Gemma 4's embedding_length_per_layer_input)
} mint_dim;

// Where a tensor (or a view of a fused one) is bound: a field of runtime/engine/model.h's
// mint_layer.
typedef enum mint_slot {
    MINT_SLOT_FUSED = 0, // bound whole, then cut into its views
    MINT_SLOT_ATTN_NORM,
    MINT_SLOT_ATTN_NORM_B,
    MINT_SLOT_WQ,
    MINT_SLOT_WK,
    MINT_SLOT_WV,
    MINT_SLOT_BQ,
    MINT_SLOT_BK,
    MINT_SLOT_BV,
    MINT_SLOT_Q_NORM,
    MINT_SLOT_K_NORM,
    MINT_SLOT_WO,
    MINT_SLOT_BO,
    MINT_SLOT_ATTN_POST_NORM,
    MINT_SLOT_FFN_NORM,
    MINT_SLOT_FFN_NORM_B,
    MINT_SLOT_W_GATE,
    MINT_SLOT_W_UP,
    MINT_SLOT_B_UP,
    MINT_SLOT_W_DOWN,
    MINT_SLOT_B_DOWN,
    MINT_SLOT_FFN_POST_NORM,
    MINT_SLOT_ROUTER,         // ffn_gate_inp: [n_embd] -> [n_expert] router logits
    MINT_SLOT_GATE_EXPS,      // ffn_gate_exps: n_expert x ([n_embd] -> [n_ff_exp])
    MINT_SLOT_UP_EXPS,        // ffn_up_exps: n_expert x ([n_embd] -> [n_ff_exp])
    MINT_SLOT_DOWN_EXPS,      // ffn_down_exps: n_expert x ([n_ff_exp] -> [n_embd])
    MINT_SLOT_SHEXP_GATE_INP, // ffn_gate_inp_shexp: [n_embd] -> the shared expert's gate logit
    MINT_SLOT_GATE_SHEXP,     // ffn_gate_shexp: [n_embd] -> [n_ff_shexp]
    MINT_SLOT_UP_SHEXP,       // ffn_up_shexp: [n_embd] -> [n_ff_shexp]
    MINT_SLOT_DOWN_SHEXP,     // ffn_down_shexp: [n_ff_shexp] -> [n_embd]
    MINT_SLOT_ATTN_SINKS,     // attn_sinks: [n_head] per-head sink logits
    MINT_SLOT_ROUTER_B,       // ffn_gate_inp.bias: [n_expert]
    MINT_SLOT_GATE_EXPS_B,    // ffn_gate_exps.bias: n_expert x [n_ff_exp]
    MINT_SLOT_UP_EXPS_B,      // ffn_up_exps.bias: n_expert x [n_ff_exp]
    MINT_SLOT_DOWN_EXPS_B,    // ffn_down_exps.bias: n_expert x [n_embd]
    MINT_SLOT_CONV,           // shortconv.conv: [L] taps per channel, n_embd rows
    MINT_SLOT_CONV_IN,        // shortconv.in_proj: [n_embd] -> [3 n_embd] (b, c, x)
    MINT_SLOT_CONV_OUT,       // shortconv.out_proj: [n_embd] -> [n_embd]
    MINT_SLOT_SSM_QKV,        // attn_qkv (a delta net's): [n_embd] -> [ssm q, k, v]
    MINT_SLOT_SSM_Z,          // attn_gate: [n_embd] -> [H_v S], the output's gate z
    MINT_SLOT_SSM_CONV,       // ssm_conv1d: [L] taps per channel of q, k, v
    MINT_SLOT_SSM_DT,         // ssm_dt.bias: [H_v]
    MINT_SLOT_SSM_A,          // ssm_a: [H_v] (-exp(A_log))
    MINT_SLOT_SSM_BETA,       // ssm_beta: [n_embd] -> [H_v]
    MINT_SLOT_SSM_ALPHA,      // ssm_alpha: [n_embd] -> [H_v]
    MINT_SLOT_SSM_NORM,       // ssm_norm: [S] the gated RMSNorm's weight
    MINT_SLOT_SSM_OUT,        // ssm_out: [H_v S] -> [n_embd]
    MINT_SLOT_PLE_GATE,       // inp_gate: [n_embd] -> [n_ple] (Gemma 4's per-layer input gate)
    MINT_SLOT_PLE_PROJ,       // proj: [n_ple] -> [n_embd]
    MINT_SLOT_PLE_NORM,       // post_norm: [n_embd] RMSNorm of proj's output
    MINT_SLOT_OUT_SCALE,      // layer_output_scale: [1] the layer's output factor
    MINT_SLOT_COUNT
} mint_slot;

// A part of a fused tensor: rows (elements of a vector) [at, at + n) bound as `slot`.
typedef struct mint_view {
    mint_slot slot; // where the part goes
    mint_dim at;    // its first row (element)
    mint_dim n;     // its rows (elements)
} mint_view;

// One tensor of a layer, blk.N.<suffix>.
typedef struct mint_layer_tensor {
    const char *suffix;    // "attn_q.weight"
    mint_dim n_in;         // row length (a vector's length)
    mint_dim n_out;        // rows (MINT_DIM_1 for a vector)
    mint_tensor_need need; // must, may or must not be in a file
    mint_slot slot;        // where it is bound; MINT_SLOT_FUSED: cut into views
    mint_view views[3];    // [n_views] the parts of a fused tensor
    int n_views;           // 0 unless slot is MINT_SLOT_FUSED
    float mean;            // synthetic values: mean (1 for norm weights, else 0) ...
    float scale;           // ... and spread: scale, over sqrt(scale_by) when that is not
    mint_dim scale_by;     // MINT_DIM_0 (a matrix: 1 / sqrt of its row length's dimension)
    mint_dim n_mat;        // MINT_DIM_0: one matrix (or vector); else a stack of that many
                           // matrices of [n_in, n_out] each, ne[2] (the experts)
} mint_layer_tensor;

enum { MINT_LAYER_TENSORS_MAX = 40 };

// The numbers a mint_dim is made of (a layer's: Gemma 4's head_dim and n_ff vary by layer).
typedef struct mint_dims {
    int64_t n_embd;      // residual width
    int64_t n_ff;        // feed-forward width
    int64_t n_head;      // query heads
    int64_t n_head_kv;   // key/value heads
    int64_t head_dim;    // head size
    int64_t n_ff_exp;    // an expert's feed-forward width (0 without experts)
    int64_t n_expert;    // experts (0 without)
    int64_t n_ff_shexp;  // the shared expert's width (0 without)
    int64_t n_conv;      // a short convolution's taps (0 without)
    int64_t ssm_k_heads; // a delta net's key heads H_k (0 without)
    int64_t ssm_v_heads; // its value heads H_v
    int64_t ssm_s;       // its head size S
    int64_t n_ple;       // a layer's own input width (0 without)
} mint_dims;

// d in those numbers.
int64_t mint_dim_value(mint_dim d, const mint_dims *x);

// The tensors of one layer of `a` whose token mixer is `mixer` (MINT_MIXER_ATTENTION, or the
// row's recurrent kind for a hybrid's recurrent layers), in the order llama.cpp's converter
// writes them, those a file must not have included (need MINT_ABSENT): into
// out[MINT_LAYER_TENSORS_MAX]; returns how many.
int mint_arch_layer_tensors(const mint_arch *a, mint_mixer_kind mixer, mint_layer_tensor *out);

// The row of `name`, or NULL when mint does not run it.
const mint_arch *mint_arch_find(const char *name);
// The row a file of architecture `name` takes: its experts' variant when it has experts (an
// expert_count above 0) and the table has one, else mint_arch_find's.
const mint_arch *mint_arch_for_file(const char *name, bool has_experts);
// "llama, qwen2, ...": the names of every row in the table's order, for messages, into buf.
void mint_arch_list(char *buf, size_t cap);
// The row as one line of text ("architecture gemma2: RMSNorm, RoPE (NEOX pairs), GeGLU; ..."):
// its block kinds, then what else it has, for mint-run --dump-graph. Truncated to cap.
void mint_arch_describe(const mint_arch *a, char *buf, size_t cap);

// ---------------------------------------------------------------------------------------------
// The metadata keys, declared (runtime/engine/arch_keys.c): each "<arch>.<suffix>" key the
// binder reads, named once; what a row makes of each follows from its block kinds.

typedef enum mint_key {
    MINT_KEY_EMBEDDING_LENGTH,
    MINT_KEY_BLOCK_COUNT,
    MINT_KEY_CONTEXT_LENGTH,
    MINT_KEY_FEED_FORWARD_LENGTH,
    MINT_KEY_HEAD_COUNT,
    MINT_KEY_HEAD_COUNT_KV,
    MINT_KEY_KEY_LENGTH,
    MINT_KEY_VALUE_LENGTH,
    MINT_KEY_ROPE_DIMS,
    MINT_KEY_ROPE_BASE,
    MINT_KEY_ROPE_SCALING_TYPE,
    MINT_KEY_ROPE_SCALING_FACTOR,
    MINT_KEY_ROPE_SCALE_LINEAR,
    MINT_KEY_ROPE_ATTN_FACTOR,
    MINT_KEY_ROPE_ORIG_CTX,
    MINT_KEY_RMS_EPS,
    MINT_KEY_LN_EPS,
    MINT_KEY_SWA_WINDOW,
    MINT_KEY_SWA_PATTERN,
    MINT_KEY_ROPE_BASE_SWA,
    MINT_KEY_ATTN_SOFTCAP,
    MINT_KEY_FINAL_SOFTCAP,
    MINT_KEY_EXPERT_COUNT,
    MINT_KEY_EXPERT_USED,
    MINT_KEY_EXPERT_FF,
    MINT_KEY_EXPERT_SHARED_FF,
    MINT_KEY_SHORTCONV_L,
    MINT_KEY_SSM_CONV,
    MINT_KEY_SSM_STATE,
    MINT_KEY_SSM_GROUPS,
    MINT_KEY_SSM_DT_RANK,
    MINT_KEY_SSM_INNER,
    MINT_KEY_FULL_ATTN_INTERVAL,
    MINT_KEY_ROPE_SECTIONS,
    MINT_KEY_KEY_LENGTH_SWA,
    MINT_KEY_VALUE_LENGTH_SWA,
    MINT_KEY_ROPE_DIMS_SWA,
    MINT_KEY_SHARED_KV_LAYERS,
    MINT_KEY_PLE_WIDTH,
    MINT_KEY_COUNT
} mint_key;

// What a row makes of a key.
typedef enum mint_key_need {
    MINT_KEY_ABSENT = 0, // not this architecture's: never read
    MINT_KEY_IGNORED,    // its files carry it, the binder leaves it unread (as llama.cpp does)
    MINT_KEY_OPTIONAL,   // read when present, a default (or the row's value) otherwise
    MINT_KEY_REQUIRED,   // a file without it is refused, naming the key
} mint_key_need;

// The key's suffix ("attention.head_count"), NULL past MINT_KEY_COUNT.
const char *mint_arch_key_suffix(mint_key k);
// "<arch>.<suffix>" into buf.
void mint_arch_key_name(char *buf, size_t cap, const char *arch, mint_key k);
// The key of a suffix, MINT_KEY_COUNT when none is declared.
mint_key mint_arch_key_find(const char *suffix);
// What row `a` makes of key k.
mint_key_need mint_arch_key_need(const mint_arch *a, mint_key k);
// The row's keys, one line each ("  qwen3.context_length (uint, optional; absent: 2048): ..."),
// for mint-run --dump-graph. Truncated to cap.
void mint_arch_describe_keys(const mint_arch *a, char *buf, size_t cap);

#endif // MINT_ARCH_H
