// model.h - struct mint_model: hyper-parameters and weights bound by name, for the block its
// architecture's row (runtime/engine/arch.h) describes.
//
// A weight is a view into the read-only map: data pointer, type, and [n_in, n_out] shape (rows
// of n_in elements). Nothing is copied, except 1-D norm weights stored in F16/BF16, which are
// widened to F32 once at load, and the matrices the kernels read repacked (runtime/engine/
// repack.c): those also get a copy in quant/pack.h's 16-row groups, or, for the types and
// levels without packed kernels, a copy in the file's own layout on huge pages (`moved`), and
// `data` stays their plain twin in the map.
#ifndef MINT_MODEL_H
#define MINT_MODEL_H

#include "formats/tensor_dir.h"
#include "mint.h"
#include "runtime/engine/arch.h"
#include "runtime/text/vocab.h"

#include <stdint.h>

typedef struct mint_weight {
    const char *name;   // GGUF tensor name
    uint32_t type;      // ggml type code (computable)
    int64_t n_in;       // ne[0]: elements per row (input features)
    int64_t n_out;      // ne[1]: rows (output features); 1 for a vector
    size_t row_bytes;   // bytes per row
    const void *data;   // [n_out][row_bytes] in the map (or owned by the model)
    const void *packed; // the rows in 16-row groups (quant/pack.h), or NULL
    size_t pack_stride; // bytes per packed group (mint_pack_group_bytes)
    const void *moved;  // [n_out][row_bytes]: `data`'s bytes in anonymous memory, or NULL
    int64_t n_mat;      // ne[2]: matrices stacked (a mixture's experts), each [n_in, n_out], the
                        // rows of matrix e from row e * n_out on; 0 or 1: one matrix
} mint_weight;

typedef struct mint_layer {
    mint_weight attn_norm; // [n_embd] F32
    mint_weight wq;        // [n_embd] -> [n_head * head_dim]
    mint_weight wk;        // [n_embd] -> [n_head_kv * head_dim]
    mint_weight wv;        // [n_embd] -> [n_head_kv * head_dim]
    mint_weight wo;        // [n_head * head_dim] -> [n_embd]
    mint_weight ffn_norm;  // [n_embd] F32
    mint_weight w_gate;    // [n_embd] -> [n_ff]
    mint_weight w_up;      // [n_embd] -> [n_ff]
    mint_weight w_down;    // [n_ff] -> [n_embd]
    // What some architectures add (data NULL when the layer has none):
    mint_weight bq, bk, bv; // [q_dim], [kv_dim], [kv_dim] F32 biases of q, k, v (Qwen2)
    mint_weight bo;         // [n_embd] F32 bias of the attention output
    mint_weight q_norm;     // [head_dim] F32 per-head RMSNorm of the queries (Qwen3)
    mint_weight k_norm;     // [head_dim] F32 per-head RMSNorm of the keys (Qwen3)
    mint_weight attn_norm_b, ffn_norm_b; // [n_embd] F32 LayerNorm biases (GPT-2)
    mint_weight b_up;                    // [n_ff] F32 bias of ffn_up (GPT-2)
    mint_weight b_down;                  // [n_embd] F32 bias of ffn_down (GPT-2)
    mint_weight attn_post_norm;          // [n_embd] F32 RMSNorm of the attention output (Gemma)
    mint_weight ffn_post_norm;           // [n_embd] F32 RMSNorm of the feed-forward output (Gemma)
    // A mixture of experts (runtime/engine/arch.h MINT_FFN_MOE) in place of gate, up and down:
    mint_weight router;    // [n_embd] -> [n_expert] router logits (ffn_gate_inp)
    mint_weight gate_exps; // n_expert x ([n_embd] -> [n_ff_exp]) (n_mat = n_expert)
    mint_weight up_exps;   // n_expert x ([n_embd] -> [n_ff_exp])
    mint_weight down_exps; // n_expert x ([n_ff_exp] -> [n_embd])
    // ... and a shared expert every token takes (Qwen2-MoE), data NULL without:
    mint_weight shexp_gate_inp; // [n_embd] F32: the shared expert's gate logit is its dot with x
    mint_weight gate_shexp;     // [n_embd] -> [n_ff_shexp]
    mint_weight up_shexp;       // [n_embd] -> [n_ff_shexp]
    mint_weight down_shexp;     // [n_ff_shexp] -> [n_embd]
    // gpt-oss (data NULL without):
    mint_weight attn_sinks;  // [n_head] F32: each head's sink logit (ops/attention.h)
    mint_weight router_b;    // [n_expert] F32 bias of the router logits
    mint_weight gate_exps_b; // [n_ff_exp] x n_expert F32 (n_out = n_expert): expert e's gate bias
    mint_weight up_exps_b;   // [n_ff_exp] x n_expert F32: expert e's up bias is row e
    mint_weight down_exps_b; // [n_embd] x n_expert F32: expert e's down bias is row e
    // A hybrid's recurrent layer (runtime/engine/arch.h mint_mixer_kind) in place of attention:
    mint_weight conv;     // [n_conv] taps x n_embd channels (LFM2's shortconv.conv)
    mint_weight conv_in;  // [n_embd] -> [3 n_embd]: b, c and x (shortconv.in_proj)
    mint_weight conv_out; // [n_embd] -> [n_embd] (shortconv.out_proj)
    // ... or a gated delta net (Qwen3.5; ops/delta_net.h for the shapes):
    mint_weight ssm_qkv;   // [n_embd] -> [(2 H_k + H_v) S] q, k, v before the convolution
    mint_weight ssm_z;     // [n_embd] -> [H_v S] the output's gate (attn_gate)
    mint_weight ssm_conv;  // [n_conv] taps x (2 H_k + H_v) S channels F32
    mint_weight ssm_dt;    // [H_v] F32 bias of alpha
    mint_weight ssm_a;     // [H_v] F32 -exp(A_log): alpha's factor after softplus
    mint_weight ssm_beta;  // [n_embd] -> [H_v] write strengths before the sigmoid
    mint_weight ssm_alpha; // [n_embd] -> [H_v] decays before the softplus
    mint_weight ssm_norm;  // [S] F32 the gated RMSNorm's weight
    mint_weight ssm_out;   // [H_v S] -> [n_embd]
    // Gemma 4 (data NULL without):
    mint_weight ple_gate;  // [n_embd] -> [n_ple]: the gate of the layer's own input (inp_gate)
    mint_weight ple_proj;  // [n_ple] -> [n_embd]: its projection back (proj)
    mint_weight ple_norm;  // [n_embd] F32 RMSNorm of that projection (post_norm)
    mint_weight out_scale; // [1] F32: the layer's output times it (layer_output_scale)
    mint_weight v_norm;    // [head_dim] F32 ones: the values' RMSNorm without a weight (owned)
    mint_mixer_kind mixer; // this layer's token mixer: attention, or the row's recurrent kind
    int32_t kv_slot;       // attention: the index among the KV cache's layers of the layer whose
                           // keys and values it reads (its own, or an earlier one's), else -1
    int32_t rs_slot;       // recurrent: the layer's index among the state's layers, else -1
    bool kv_shared;        // it reads an earlier layer's keys and values (kv_slot) and computes
                           // and stores none (Gemma 4's last shared_kv_layers layers)
    int32_t head_dim;      // its head size: hp->head_dim, or hp->head_dim_swa in a Gemma 4
                           // window layer
    int32_t n_ff;          // its feed-forward width: hp->n_ff, or feed_forward_length[l]
} mint_layer;

typedef struct mint_hparams {
    int32_t n_vocab;       // vocabulary size (rows of token_embd)
    int32_t n_ctx_train;   // llama.context_length
    int32_t n_embd;        // residual width
    int32_t n_ff;          // feed-forward width
    int32_t n_layer;       // blocks
    int32_t n_head;        // query heads
    int32_t n_head_kv;     // key/value heads; n_head % n_head_kv == 0
    int32_t head_dim;      // attention.key_length, else n_embd / n_head
    int32_t n_rot;         // rotary dimensions (== head_dim for llama)
    float rope_base;       // llama.rope.freq_base (10000)
    float rope_freq_scale; // 1 / llama.rope.scaling.factor for linear scaling (1)
    float rope_mscale;     // rope.scaling.attn_factor: RoPE's cos and sin times it (1); with
                           // YaRN, llama.cpp's attention factor (ops/rope.c adds its own)
    float rope_ext_factor; // YaRN's extrapolation mix (1 with rope.scaling.type yarn, else 0);
                           // its range of pairs comes from n_ctx_orig and each layer's base
                           // (ops/ops.h mint_rope_yarn_corr_dims)
    int32_t n_ctx_orig;    // rope.scaling.original_context_length (n_ctx_train): a context
                           // longer than it takes LongRoPE's long factors
    float rms_eps;         // the norms' epsilon: attention.layer_norm_rms_epsilon (RMSNorm) or
                           // attention.layer_norm_epsilon (LayerNorm)
    float attn_scale;      // scores' factor: 1 / sqrt(head_dim), or 1 when q_scale has it
    float q_scale;         // queries' factor after RoPE: 1, or 1 / sqrt(head_dim) (Phi-3)
    bool rope_neox;        // NEOX RoPE pairs (the row's; here for the executor, which sees hp only)
    float embd_scale;      // factor of the embedding (sqrt(n_embd) for Gemma), or 1
    int32_t swa_window;    // keys a window layer sees (the last swa_window), or 0: no window
    int32_t swa_period;    // layer l is windowed when l % swa_period < swa_period - 1
    float rope_base_swa;   // RoPE base of the window layers
    float rope_freq_scale_swa; // RoPE scale of the window layers
    float attn_softcap;        // scores' soft-cap c (c tanh(s / c)), or 0
    float final_softcap;       // logits' soft-cap, or 0
    int32_t n_expert;          // expert_count: experts of a mixture (0: a dense feed-forward)
    int32_t n_expert_used;     // expert_used_count: experts each token takes, 1..n_expert
    int32_t n_ff_exp;          // expert_feed_forward_length: an expert's hidden width
    int32_t n_ff_shexp;        // expert_shared_feed_forward_length: the shared expert's (0: none)
    int32_t n_conv;            // a convolution's taps: shortconv.l_cache, ssm.conv_kernel (0: none)
    int32_t ssm_k_heads;       // a delta net's key heads H_k: ssm.group_count (0: none)
    int32_t ssm_v_heads;       // its value heads H_v: ssm.time_step_rank
    int32_t ssm_s;             // its head size S: ssm.state_size (ssm.inner_size = H_v S)
    int32_t n_layer_kv;        // layers with attention (their keys and values are cached)
    int32_t n_layer_rs;        // recurrent layers (their state is kept per sequence)
    // Gemma 4 (runtime/engine/gemma4.c); elsewhere swa_layers NULL, the others as head_dim/n_rot:
    const uint8_t *swa_layers; // [n_layer] 1 for a window layer (sliding_window_pattern's
                               // array, owned by the model), or NULL: swa_period decides
    int32_t head_dim_swa;      // head size of the window layers (key_length_swa, <= head_dim)
    int32_t n_rot_swa;         // their rotary dimensions (rope.dimension_count_swa)
    int32_t n_ple;             // a layer's own input width (embedding_length_per_layer_input), 0
} mint_hparams;

typedef struct mint_repack mint_repack;

struct mint_model {
    mint_file *file;         // the opened file (owns the map)
    mint_vocab *vocab;       // tokenizer
    mint_hparams hp;         // shapes and constants
    mint_weight tok_embd;    // [n_embd, n_vocab]
    mint_weight output_norm; // [n_embd] F32
    mint_weight output;      // [n_embd, n_vocab] (token_embd when tied)
    mint_layer *layers;      // [n_layer]
    mint_weight rope_freqs;  // [n_rot / 2] F32 RoPE frequency divisors (Llama 3), data NULL if none
    mint_weight rope_long;   // [n_rot / 2] F32 LongRoPE divisors for contexts > n_ctx_orig (Phi-3)
    mint_weight rope_short;  // [n_rot / 2] F32 LongRoPE divisors otherwise; both or neither
    mint_weight output_norm_b; // [n_embd] F32 LayerNorm bias of the final norm (GPT-2), or none
    mint_weight pos_embd;      // [n_embd, n_ctx_train] learned positions (GPT-2), data NULL if none
    mint_weight ple_embd;      // [n_ple * n_layer, n_vocab] each token's own inputs of every
                               // layer (Gemma 4's per_layer_token_embd), data NULL if none
    mint_weight ple_model;     // [n_embd] -> [n_ple * n_layer] the same from the embedding
                               // (per_layer_model_proj)
    mint_weight ple_norm;      // [n_ple] F32 RMSNorm of each layer's part of it
                               // (per_layer_proj_norm)
    const mint_arch *desc;     // the architecture's row (NULL for a vocabulary-only model)
    bool vocab_only;           // no weights bound
    char *arch;                // general.architecture
    char *name;                // general.name or ""
    char *chat_template;       // tokenizer.chat_template or NULL
    char types[256];           // per-type tensor counts of the bound weights
    uint64_t n_params;         // elements in the bound weights
    uint64_t weight_bytes;     // bytes of the bound weights
    void **owned;              // [n_owned] buffers made at load (widened norms)
    int n_owned;               // number of owned buffers
    void *packed_map;          // anonymous map holding every packed matrix, or NULL
    size_t packed_map_bytes;   // its length
    size_t packed_bytes;       // bytes of packed matrices in it
    mint_repack *repack;       // background packing state (runtime/engine/repack.c), or NULL
    bool mlock;                // params->mlock: weight memory is locked as it is made
    size_t lock_failed_bytes;  // bytes of it mlock refused (0: all that was asked is locked)
    char lock_error[320];      // why, when lock_failed_bytes > 0 (mint_model_desc.lock_error)
    // The vocabulary's token trie for grammars, built by the first grammar and shared by all
    // (runtime/decoding/model_grammar.c), or NULL.
    _Atomic(struct mint_token_trie *) token_trie;
};

// The RoPE frequency divisors a context of n_ctx positions (per sequence) uses (data NULL for
// none): rope_freqs, else LongRoPE's long factors when n_ctx exceeds n_ctx_orig and its short ones
// otherwise (llama.cpp's choice).
const mint_weight *mint_model_rope_factors(const mint_model *m, int32_t n_ctx);

// mint_model_open on a file already opened (or parsed from memory: the GGUF fuzz harness), which
// the model then owns, closing it on failure too; `label` names it in messages.
mint_status mint_model_open_file(mint_file *f, const char *label, const mint_model_params *params,
                                 mint_model **out, mint_err *err);

// Starts repacking, in the background, the matrices that the start-up kernel level reads
// packed (runtime/engine/repack.c), unless params->no_repack or the environment variable
// MINT_REPACK=0 says not to. A matrix's `packed` is set (atomically, release) once its packed
// rows are complete; until then its file rows serve. Failing to get memory for the copy is not
// an error: the kernels then keep reading the file's layout.
mint_status mint_model_repack(mint_model *m, const mint_model_params *params, mint_err *err);
// Stops the background packing after the matrix in progress and frees its state (model close).
void mint_model_repack_stop(mint_model *m);

// Which layers mix tokens by attention and which by the row's recurrence (m->layers[l].mixer,
// kv_slot, rs_slot), hp->n_layer_kv and n_layer_rs, and the recurrent mixer's numbers
// (hp->n_conv), from the file (runtime/engine/hybrid.c). m->layers is allocated; a row without
// a recurrent mixer gets attention in every layer.
mint_status mint_model_read_mixers(mint_model *m, mint_err *err);
// Entry i of a metadata array of integers or bools, as a 64-bit number (-1: another element
// type) (runtime/engine/hybrid.c).
int64_t mint_meta_arr_int(mint_value_type t, const void *data, uint64_t i);

// Gemma 4's shapes per layer (runtime/engine/gemma4.c): the window pattern, head sizes, widths
// and shared keys and values, into hp and m->layers (whose head_dim and n_ff it sets for every
// row, from hp when the row has no layer_shapes). After the head size and the window are read.
mint_status mint_model_read_layer_shapes(mint_model *m, mint_err *err);
// What Gemma 4's layers need, checked after every tensor is bound: each layer's part of the
// per-layer inputs (when the model has them, and only then), k and its norm in the layers with
// keys, k for v where v is absent, the values' unweighted norm, rope_freqs for the full layers.
mint_status mint_model_bind_gemma4(mint_model *m, mint_err *err);

// Keeps p (a buffer made at load: a widened norm, Gemma 4's pattern) until the model closes
// (m->owned); on failure, and for p NULL (a failed allocation), frees it and fails with
// MINT_E_NOMEM (runtime/engine/residency.c).
mint_status mint_model_keep(mint_model *m, void *p, mint_err *err);

// Locks [p, p + n) in RAM when m->mlock (runtime/engine/residency.c); a refusal is recorded in
// m->lock_failed_bytes and m->lock_error, and is not an error.
void mint_model_lock(mint_model *m, const void *p, size_t n);
// Locks the file's memory as opened (every map) and tensor data it holds outside its maps.
void mint_model_lock_file(mint_model *m);

// Whether layer l sees only the last hp->swa_window keys (Gemma's local layers).
static inline bool mint_layer_windowed(const mint_hparams *hp, int l) {
    if (hp->swa_layers) return hp->swa_window > 0 && hp->swa_layers[l];
    return hp->swa_window > 0 && l % hp->swa_period < hp->swa_period - 1;
}

// The window layer l's queries see (hp->swa_window), or 0 for every key.
static inline int32_t mint_layer_window(const mint_hparams *hp, int l) {
    return mint_layer_windowed(hp, l) ? hp->swa_window : 0;
}

// Rows of every matrix of w together (n_out times the experts stacked).
static inline int64_t mint_weight_all_rows(const mint_weight *w) {
    return w->n_mat > 1 ? w->n_out * w->n_mat : w->n_out;
}

// The packed rows of w, or NULL while (or when) it has none.
static inline const void *mint_weight_packed(const mint_weight *w) {
    return __atomic_load_n(&w->packed, __ATOMIC_ACQUIRE);
}

// Matrix e of a stack (one expert's [n_in, n_out]) as a weight of its own: its rows in the map,
// in the moved copy and, when the stack is packed (every expert a whole number of 16-row
// groups: runtime/engine/repack.c), in the packed copy.
static inline mint_weight mint_weight_expert(const mint_weight *w, int64_t e) {
    mint_weight x = *w;
    const size_t rows = (size_t)e * (size_t)w->n_out;
    const void *packed = mint_weight_packed(w);
    const void *moved = __atomic_load_n(&w->moved, __ATOMIC_ACQUIRE);
    x.n_mat = 1;
    x.data = (const char *)w->data + rows * w->row_bytes;
    x.moved = moved ? (const char *)moved + rows * w->row_bytes : NULL;
    x.packed = packed ? (const char *)packed + rows / 16 * w->pack_stride : NULL;
    return x;
}

// The rows of w in the file's layout: the moved copy once there is one, else the map's. The
// same bytes either way.
static inline const void *mint_weight_rows(const mint_weight *w) {
    const void *moved = __atomic_load_n(&w->moved, __ATOMIC_ACQUIRE);
    return moved ? moved : w->data;
}

#endif // MINT_MODEL_H
