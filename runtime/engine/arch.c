// arch.c - the table of architectures (runtime/engine/arch.h). Every row shares llama's block:
// a norm, attention with grouped key/value heads, a feed-forward, the residual adds, a final norm
// and an output head (or the embedding, tied); by default RMSNorm, RoPE and SwiGLU. A row says
// only what differs.
#include "runtime/engine/arch.h"

#include <stdio.h>
#include <string.h>

static const mint_arch arches[] = {
    // Llama 2, TinyLlama, Llama 3.x, SmolLM2, Mistral-style files: llama.cpp binds the biases and
    // rope_freqs (Llama 3.1+) when present.
    {"llama", .pos = MINT_POS_ROPE, .qkv_bias = MINT_OPTIONAL, .out_bias = MINT_OPTIONAL,
     .rope_freqs = MINT_OPTIONAL, .quant_70b_layers = 80, .quant_70b_gqa = true},
    // Qwen2 and Qwen2.5: biases on q, k and v; NEOX RoPE.
    {"qwen2", .pos = MINT_POS_ROPE_NEOX, .qkv_bias = MINT_REQUIRED, .quant_70b_layers = 80},
    // Qwen3 (dense): no biases; q and k RMS-normalised per head before RoPE; NEOX RoPE.
    {"qwen3", .pos = MINT_POS_ROPE_NEOX, .qk_norm = MINT_REQUIRED},
    // Phi-3 (mini, medium) and Phi-3.5-mini: q/k/v in one matrix, gate and up in another; NEOX
    // RoPE; queries pre-scaled; the 128k files' LongRoPE factors. Its files'
    // attention.sliding_window is ignored, as llama.cpp does.
    {"phi3", .pos = MINT_POS_ROPE_NEOX, .fused_qkv = true, .fused_gate_up = true,
     .q_prescale = true, .longrope = MINT_OPTIONAL},
    // GPT-2 (and the pattern of OPT): LayerNorm, learned positions instead of RoPE, q/k/v fused
    // with one bias, biases on every projection, a GELU feed-forward of two matrices.
    {"gpt2", .norm = MINT_NORM_LAYER, .pos = MINT_POS_LEARNED, .ffn = MINT_FFN_GELU,
     .qkv_bias = MINT_REQUIRED, .out_bias = MINT_REQUIRED, .fused_qkv = true},
    // Gemma 2: GeGLU, the embedding scaled, norms after attention and feed-forward as well,
    // soft-capped scores and logits, a 4096-key window on every other layer, queries pre-scaled;
    // tied embeddings.
    {"gemma2", .pos = MINT_POS_ROPE_NEOX, .ffn = MINT_FFN_GEGLU, .q_prescale = true,
     .embd_scale = true, .post_norms = true, .swa_period = 2, .swa_window_default = 4096,
     .attn_softcap = 50.0f, .final_softcap = 30.0f, .final_softcap_key = true,
     .wide_scale_layers = 46},
    // Gemma 3: Gemma 2's block without the soft-caps, with Qwen3's per-head q/k norms; five of
    // every six layers windowed, those with their own RoPE base (10000).
    {"gemma3", .pos = MINT_POS_ROPE_NEOX, .ffn = MINT_FFN_GEGLU, .qk_norm = MINT_REQUIRED,
     .q_prescale = true, .embd_scale = true, .post_norms = true, .final_softcap_key = true,
     .swa_period = 6, .rope_base_swa = 10000.0f, .wide_scale_layers = 62},
    // Qwen3-MoE (Qwen3-30B-A3B, 235B-A22B): Qwen3's attention; a mixture of experts in place of
    // the feed-forward, the chosen experts' weights renormalised to sum to 1.
    {"qwen3moe", .pos = MINT_POS_ROPE_NEOX, .qk_norm = MINT_REQUIRED, .ffn = MINT_FFN_MOE,
     .moe_norm_weights = true},
    // Qwen1.5-MoE and Qwen2-57B-A14B: Qwen2's attention (q/k/v biases); routed experts, their
    // weights as routed, plus a shared expert behind a sigmoid gate.
    {"qwen2moe", .pos = MINT_POS_ROPE_NEOX, .qkv_bias = MINT_REQUIRED, .ffn = MINT_FFN_MOE,
     .moe_shared_expert = true},
    // OLMoE: q and k RMS-normalised over the whole projection; a mixture of feed_forward_length
    // wide experts, their weights as the router gives them (no renormalising); NEOX RoPE.
    {"olmoe", .pos = MINT_POS_ROPE_NEOX, .qk_norm = MINT_REQUIRED, .qk_norm_whole = true,
     .ffn = MINT_FFN_MOE, .moe_ff_is_ff = true},
    // Mixtral (and llama files with experts): llama's block with a mixture of feed_forward_length
    // wide experts, the chosen ones' weights renormalised (llama.cpp's llama graph with
    // expert_count > 0).
    {"llama", .pos = MINT_POS_ROPE, .qkv_bias = MINT_OPTIONAL, .out_bias = MINT_OPTIONAL,
     .rope_freqs = MINT_OPTIONAL, .quant_70b_layers = 80, .quant_70b_gqa = true,
     .ffn = MINT_FFN_MOE, .moe_norm_weights = true, .moe_variant = true, .moe_ff_is_ff = true},
    // gpt-oss (20b, 120b): biases on q, k, v and the output projection, per-head attention sinks,
    // a window on every other layer (from layer 0), YaRN RoPE over NEOX pairs; the feed-forward
    // norm named post_attention_norm; a mixture whose router and experts have biases, weights a
    // softmax over the chosen k logits, and the clamped SwiGLU of llama.cpp's swiglu_oai.
    {"gpt-oss", .pos = MINT_POS_ROPE_NEOX, .qkv_bias = MINT_REQUIRED, .out_bias = MINT_REQUIRED,
     .ffn = MINT_FFN_MOE, .attn_sinks = MINT_REQUIRED, .ffn_norm_post_attention = true,
     .swa_period = 2, .swa_window_default = 128, .moe_gating = MINT_MOE_SOFTMAX_TOPK,
     .moe_act = MINT_MOE_SWIGLU_OAI, .moe_biases = MINT_REQUIRED},
    // LFM2 (LiquidAI's 350M-2.6B): a hybrid. Most layers mix tokens with a double-gated short
    // convolution (attention.head_count_kv is 0 there), the others with Qwen3-style attention
    // (per-head q/k norms, NEOX RoPE); every layer has a SwiGLU feed-forward. The final norm is
    // stored as token_embd_norm.weight.
    {"lfm2", .pos = MINT_POS_ROPE_NEOX, .qk_norm = MINT_REQUIRED, .recurrent = MINT_MIXER_SHORTCONV,
     .recurrent_no_kv = true, .output_norm_name = "token_embd_norm.weight"},
    // Qwen3.5 (0.8B-9B dense): a hybrid. Three of every four layers mix tokens with a gated
    // delta net, the fourth with attention whose queries carry a sigmoid gate of its output
    // (per-head q/k norms, RoPE over the first rope.dimension_count dimensions of a head, NEOX
    // pairs); the feed-forward's norm is stored as post_attention_norm.
    {"qwen35", .pos = MINT_POS_ROPE_NEOX, .qk_norm = MINT_REQUIRED,
     .recurrent = MINT_MIXER_DELTA_NET, .recurrent_interval = true, .q_gate = true,
     .ffn_norm_post_attention = true},
    // Gemma 4's dense models (E2B, E4B): Gemma 3's block (GeGLU, the embedding scaled, post norms,
    // per-head q/k norms) with shapes per layer (runtime/engine/gemma4.c): window layers by a
    // pattern, with their own head size and RoPE base; full layers' "proportional" RoPE through
    // rope_freqs; the last layers reading earlier layers' keys and values; values RMS-normalised
    // without a weight (k taken as v when attn_v is absent), scores unscaled; an input of its own
    // per layer; an optional factor on each layer's output; soft-capped logits. Its mixture of
    // experts (26B-A4B) is refused.
    {"gemma4", .pos = MINT_POS_ROPE_NEOX, .ffn = MINT_FFN_GEGLU, .qk_norm = MINT_REQUIRED,
     .embd_scale = true, .post_norms = true, .final_softcap_key = true, .rope_freqs = MINT_OPTIONAL,
     .rope_base_swa = 10000.0f, .layer_shapes = true, .v_norm = true, .attn_unscaled = true,
     .per_layer_input = MINT_OPTIONAL, .out_scale = MINT_OPTIONAL},
};

const mint_arch *mint_arch_for_file(const char *name, bool has_experts) {
    for (size_t i = 0; name && i < sizeof arches / sizeof *arches; i++)
        if (arches[i].moe_variant && has_experts && strcmp(arches[i].name, name) == 0)
            return &arches[i];
    return mint_arch_find(name);
}

const mint_arch *mint_arch_find(const char *name) {
    for (size_t i = 0; name && i < sizeof arches / sizeof *arches; i++)
        if (!arches[i].moe_variant && strcmp(arches[i].name, name) == 0) return &arches[i];
    return NULL;
}

int64_t mint_dim_value(mint_dim d, const mint_dims *x) {
    const int64_t q = x->n_head * x->head_dim, kv = x->n_head_kv * x->head_dim;
    switch (d) {
    case MINT_DIM_0:
        return 0;
    case MINT_DIM_1:
        return 1;
    case MINT_DIM_EMBD:
        return x->n_embd;
    case MINT_DIM_FF:
        return x->n_ff;
    case MINT_DIM_FF2:
        return 2 * x->n_ff;
    case MINT_DIM_Q:
        return q;
    case MINT_DIM_KV:
        return kv;
    case MINT_DIM_Q_KV:
        return q + kv;
    case MINT_DIM_QKV:
        return q + 2 * kv;
    case MINT_DIM_HEAD:
        return x->head_dim;
    case MINT_DIM_FF_EXP:
        return x->n_ff_exp;
    case MINT_DIM_EXPERTS:
        return x->n_expert;
    case MINT_DIM_FF_SHEXP:
        return x->n_ff_shexp;
    case MINT_DIM_HEADS:
        return x->n_head;
    case MINT_DIM_CONV:
        return x->n_conv;
    case MINT_DIM_EMBD3:
        return 3 * x->n_embd;
    case MINT_DIM_Q2:
        return 2 * q;
    case MINT_DIM_SSM_QKV:
        return (2 * x->ssm_k_heads + x->ssm_v_heads) * x->ssm_s;
    case MINT_DIM_SSM_V:
        return x->ssm_v_heads * x->ssm_s;
    case MINT_DIM_SSM_VH:
        return x->ssm_v_heads;
    case MINT_DIM_SSM_S:
        return x->ssm_s;
    case MINT_DIM_PLE:
        return x->n_ple;
    }
    return 0;
}

int mint_arch_layer_tensors(const mint_arch *a, mint_mixer_kind mixer, mint_layer_tensor *out) {
    int n = 0;
    // NORM: a norm's weight of len elements (drawn around 1); VEC: a bias (drawn around 0 with
    // the spread given); MAT: a matrix every file has (drawn with spread 1 / sqrt(by)); EXPERTS:
    // one matrix per expert, stacked (drawn with spread 1 / sqrt(in)).
#define NORM(suffix, len, slot, need)                                                              \
    out[n++] = (mint_layer_tensor) {                                                               \
        suffix, len, MINT_DIM_1, need, slot, {{0}}, 0, 1.0f, 0.05f, MINT_DIM_0, MINT_DIM_0         \
    }
#define VEC(suffix, len, slot, need, scale)                                                        \
    out[n++] = (mint_layer_tensor) {                                                               \
        suffix, len, MINT_DIM_1, need, slot, {{0}}, 0, 0.0f, scale, MINT_DIM_0, MINT_DIM_0         \
    }
#define MAT(suffix, in, outd, slot, by)                                                            \
    out[n++] = (mint_layer_tensor) {                                                               \
        suffix, in, outd, MINT_REQUIRED, slot, {{0}}, 0, 0.0f, 1.0f, by, MINT_DIM_0                \
    }
#define EXPERTS(suffix, in, outd, slot)                                                            \
    out[n++] = (mint_layer_tensor) {                                                               \
        suffix, in, outd, MINT_REQUIRED, slot, {{0}}, 0, 0.0f, 1.0f, in, MINT_DIM_EXPERTS          \
    }
    // BIASES: one bias vector of len elements per expert, a [len, n_expert] matrix (drawn around
    // 0 with spread 0.5), when the row has experts' biases.
#define BIASES(suffix, len, slot)                                                                  \
    out[n++] = (mint_layer_tensor) {                                                               \
        suffix, len, MINT_DIM_EXPERTS, a->moe_biases, slot, {{0}}, 0, 0.0f, 0.5f, MINT_DIM_0,      \
            MINT_DIM_0                                                                             \
    }
    const bool ln = a->norm == MINT_NORM_LAYER;
    NORM("attn_norm.weight", MINT_DIM_EMBD, MINT_SLOT_ATTN_NORM, MINT_REQUIRED);
    if (mixer == MINT_MIXER_SHORTCONV) { // LFM2's convolution instead of attention
        // the taps drawn around 0 with spread 1 / sqrt(L), like a trained filter's
        MAT("shortconv.conv.weight", MINT_DIM_CONV, MINT_DIM_EMBD, MINT_SLOT_CONV, MINT_DIM_CONV);
        MAT("shortconv.in_proj.weight", MINT_DIM_EMBD, MINT_DIM_EMBD3, MINT_SLOT_CONV_IN,
            MINT_DIM_EMBD);
        MAT("shortconv.out_proj.weight", MINT_DIM_EMBD, MINT_DIM_EMBD, MINT_SLOT_CONV_OUT,
            MINT_DIM_EMBD);
        goto feed_forward;
    }
    if (mixer == MINT_MIXER_DELTA_NET) { // Qwen3.5's gated delta net instead of attention
        MAT("attn_qkv.weight", MINT_DIM_EMBD, MINT_DIM_SSM_QKV, MINT_SLOT_SSM_QKV, MINT_DIM_EMBD);
        MAT("attn_gate.weight", MINT_DIM_EMBD, MINT_DIM_SSM_V, MINT_SLOT_SSM_Z, MINT_DIM_EMBD);
        MAT("ssm_conv1d.weight", MINT_DIM_CONV, MINT_DIM_SSM_QKV, MINT_SLOT_SSM_CONV,
            MINT_DIM_CONV);
        VEC("ssm_dt.bias", MINT_DIM_SSM_VH, MINT_SLOT_SSM_DT, MINT_REQUIRED, 0.5f);
        // -exp(A_log): negative decay rates, drawn around -1
        out[n++] = (mint_layer_tensor){
            "ssm_a", MINT_DIM_SSM_VH, MINT_DIM_1, MINT_REQUIRED, MINT_SLOT_SSM_A, {{0}},
            0,       -1.0f,           0.3f,       MINT_DIM_0,    MINT_DIM_0};
        MAT("ssm_beta.weight", MINT_DIM_EMBD, MINT_DIM_SSM_VH, MINT_SLOT_SSM_BETA, MINT_DIM_EMBD);
        MAT("ssm_alpha.weight", MINT_DIM_EMBD, MINT_DIM_SSM_VH, MINT_SLOT_SSM_ALPHA, MINT_DIM_EMBD);
        NORM("ssm_norm.weight", MINT_DIM_SSM_S, MINT_SLOT_SSM_NORM, MINT_REQUIRED);
        MAT("ssm_out.weight", MINT_DIM_SSM_V, MINT_DIM_EMBD, MINT_SLOT_SSM_OUT, MINT_DIM_SSM_V);
        goto feed_forward;
    }
    VEC("attn_norm.bias", MINT_DIM_EMBD, MINT_SLOT_ATTN_NORM_B, ln ? MINT_REQUIRED : MINT_ABSENT,
        0.05f);
    if (a->fused_qkv) {
        MAT("attn_qkv.weight", MINT_DIM_EMBD, MINT_DIM_QKV, MINT_SLOT_FUSED, MINT_DIM_EMBD);
        out[n - 1].n_views = 3;
        out[n - 1].views[0] = (mint_view){MINT_SLOT_WQ, MINT_DIM_0, MINT_DIM_Q};
        out[n - 1].views[1] = (mint_view){MINT_SLOT_WK, MINT_DIM_Q, MINT_DIM_KV};
        out[n - 1].views[2] = (mint_view){MINT_SLOT_WV, MINT_DIM_Q_KV, MINT_DIM_KV};
        VEC("attn_qkv.bias", MINT_DIM_QKV, MINT_SLOT_FUSED, a->qkv_bias, 0.5f); // one bias, cut
        out[n - 1].n_views = 3;                                                 // the same way
        out[n - 1].views[0] = (mint_view){MINT_SLOT_BQ, MINT_DIM_0, MINT_DIM_Q};
        out[n - 1].views[1] = (mint_view){MINT_SLOT_BK, MINT_DIM_Q, MINT_DIM_KV};
        out[n - 1].views[2] = (mint_view){MINT_SLOT_BV, MINT_DIM_Q_KV, MINT_DIM_KV};
    } else {
        MAT("attn_q.weight", MINT_DIM_EMBD, a->q_gate ? MINT_DIM_Q2 : MINT_DIM_Q, MINT_SLOT_WQ,
            MINT_DIM_EMBD);
        MAT("attn_k.weight", MINT_DIM_EMBD, MINT_DIM_KV, MINT_SLOT_WK, MINT_DIM_EMBD);
        MAT("attn_v.weight", MINT_DIM_EMBD, MINT_DIM_KV, MINT_SLOT_WV, MINT_DIM_EMBD);
        if (a->layer_shapes) { // Gemma 4: a layer reading another's KV has no k (nor v); v may
            out[n - 2].need = MINT_OPTIONAL; // be absent anyway (k is then v): gemma4.c checks
            out[n - 1].need = MINT_OPTIONAL; // what each layer needs
        }
    }
    // (a fused q/k/v has its one bias above; separate biases would be ignored)
    const mint_tensor_need qkv_bias = a->fused_qkv ? MINT_ABSENT : a->qkv_bias;
    VEC("attn_q.bias", MINT_DIM_Q, MINT_SLOT_BQ, qkv_bias, 0.5f);
    VEC("attn_k.bias", MINT_DIM_KV, MINT_SLOT_BK, qkv_bias, 0.5f);
    VEC("attn_v.bias", MINT_DIM_KV, MINT_SLOT_BV, qkv_bias, 0.5f);
    // per head, or over the whole projection
    NORM("attn_q_norm.weight", a->qk_norm_whole ? MINT_DIM_Q : MINT_DIM_HEAD, MINT_SLOT_Q_NORM,
         a->qk_norm);
    NORM("attn_k_norm.weight", a->qk_norm_whole ? MINT_DIM_KV : MINT_DIM_HEAD, MINT_SLOT_K_NORM,
         a->layer_shapes ? MINT_OPTIONAL : a->qk_norm);
    MAT("attn_output.weight", MINT_DIM_Q, MINT_DIM_EMBD, MINT_SLOT_WO, MINT_DIM_Q);
    VEC("attn_output.bias", MINT_DIM_EMBD, MINT_SLOT_BO, a->out_bias, 0.1f);
    VEC("attn_sinks.weight", MINT_DIM_HEADS, MINT_SLOT_ATTN_SINKS, a->attn_sinks, 1.0f);
feed_forward:
    if (a->ffn_norm_post_attention) // gpt-oss: the feed-forward's norm under this name
        NORM("post_attention_norm.weight", MINT_DIM_EMBD, MINT_SLOT_FFN_NORM, MINT_REQUIRED);
    else
        NORM("post_attention_norm.weight", MINT_DIM_EMBD, MINT_SLOT_ATTN_POST_NORM,
             a->post_norms ? MINT_REQUIRED : MINT_ABSENT);
    NORM("ffn_norm.weight", MINT_DIM_EMBD, MINT_SLOT_FFN_NORM,
         a->ffn_norm_post_attention ? MINT_ABSENT : MINT_REQUIRED);
    VEC("ffn_norm.bias", MINT_DIM_EMBD, MINT_SLOT_FFN_NORM_B, ln ? MINT_REQUIRED : MINT_ABSENT,
        0.05f);
    switch (a->ffn) {
    case MINT_FFN_GELU: // up and down with biases, no gate
        MAT("ffn_up.weight", MINT_DIM_EMBD, MINT_DIM_FF, MINT_SLOT_W_UP, MINT_DIM_EMBD);
        VEC("ffn_up.bias", MINT_DIM_FF, MINT_SLOT_B_UP, MINT_REQUIRED, 0.5f);
        break;
    case MINT_FFN_SWIGLU:
    case MINT_FFN_GEGLU:
        if (a->fused_gate_up) { // ggml's swiglu: act(first half) * second half
            MAT("ffn_up.weight", MINT_DIM_EMBD, MINT_DIM_FF2, MINT_SLOT_FUSED, MINT_DIM_EMBD);
            out[n - 1].n_views = 2;
            out[n - 1].views[0] = (mint_view){MINT_SLOT_W_GATE, MINT_DIM_0, MINT_DIM_FF};
            out[n - 1].views[1] = (mint_view){MINT_SLOT_W_UP, MINT_DIM_FF, MINT_DIM_FF};
        } else {
            MAT("ffn_gate.weight", MINT_DIM_EMBD, MINT_DIM_FF, MINT_SLOT_W_GATE, MINT_DIM_EMBD);
            MAT("ffn_up.weight", MINT_DIM_EMBD, MINT_DIM_FF, MINT_SLOT_W_UP, MINT_DIM_EMBD);
        }
        break;
    case MINT_FFN_MOE: // the router, then each expert's gate, up and down
        MAT("ffn_gate_inp.weight", MINT_DIM_EMBD, MINT_DIM_EXPERTS, MINT_SLOT_ROUTER,
            MINT_DIM_EMBD);
        out[n - 1].scale = 4.0f; // a peaked router, as trained ones are: clear choices
        VEC("ffn_gate_inp.bias", MINT_DIM_EXPERTS, MINT_SLOT_ROUTER_B, a->moe_biases, 0.5f);
        // (gpt-oss's converter writes each bias after its matrix)
        EXPERTS("ffn_gate_exps.weight", MINT_DIM_EMBD, MINT_DIM_FF_EXP, MINT_SLOT_GATE_EXPS);
        BIASES("ffn_gate_exps.bias", MINT_DIM_FF_EXP, MINT_SLOT_GATE_EXPS_B);
        EXPERTS("ffn_up_exps.weight", MINT_DIM_EMBD, MINT_DIM_FF_EXP, MINT_SLOT_UP_EXPS);
        BIASES("ffn_up_exps.bias", MINT_DIM_FF_EXP, MINT_SLOT_UP_EXPS_B);
        EXPERTS("ffn_down_exps.weight", MINT_DIM_FF_EXP, MINT_DIM_EMBD, MINT_SLOT_DOWN_EXPS);
        BIASES("ffn_down_exps.bias", MINT_DIM_EMBD, MINT_SLOT_DOWN_EXPS_B);
        if (!a->moe_shared_expert) break;
        // the shared expert's gate: one logit per token from a vector
        VEC("ffn_gate_inp_shexp.weight", MINT_DIM_EMBD, MINT_SLOT_SHEXP_GATE_INP, MINT_REQUIRED,
            0.1f);
        MAT("ffn_gate_shexp.weight", MINT_DIM_EMBD, MINT_DIM_FF_SHEXP, MINT_SLOT_GATE_SHEXP,
            MINT_DIM_EMBD);
        MAT("ffn_up_shexp.weight", MINT_DIM_EMBD, MINT_DIM_FF_SHEXP, MINT_SLOT_UP_SHEXP,
            MINT_DIM_EMBD);
        MAT("ffn_down_shexp.weight", MINT_DIM_FF_SHEXP, MINT_DIM_EMBD, MINT_SLOT_DOWN_SHEXP,
            MINT_DIM_FF_SHEXP);
        break;
    }
    if (a->ffn != MINT_FFN_MOE)
        MAT("ffn_down.weight", MINT_DIM_FF, MINT_DIM_EMBD, MINT_SLOT_W_DOWN, MINT_DIM_FF);
    if (a->ffn == MINT_FFN_GELU)
        VEC("ffn_down.bias", MINT_DIM_EMBD, MINT_SLOT_B_DOWN, MINT_REQUIRED, 0.1f);
    NORM("post_ffw_norm.weight", MINT_DIM_EMBD, MINT_SLOT_FFN_POST_NORM,
         a->post_norms ? MINT_REQUIRED : MINT_ABSENT);
    // Gemma 4: the layer's own input gated in, and its output's factor (drawn around 1)
    MAT("inp_gate.weight", MINT_DIM_EMBD, MINT_DIM_PLE, MINT_SLOT_PLE_GATE, MINT_DIM_EMBD);
    out[n - 1].need = a->per_layer_input;
    MAT("proj.weight", MINT_DIM_PLE, MINT_DIM_EMBD, MINT_SLOT_PLE_PROJ, MINT_DIM_PLE);
    out[n - 1].need = a->per_layer_input;
    NORM("post_norm.weight", MINT_DIM_EMBD, MINT_SLOT_PLE_NORM, a->per_layer_input);
    NORM("layer_output_scale.weight", MINT_DIM_1, MINT_SLOT_OUT_SCALE, a->out_scale);
#undef NORM
#undef VEC
#undef MAT
#undef EXPERTS
#undef BIASES
    return n;
}

void mint_arch_describe(const mint_arch *a, char *buf, size_t cap) {
    static const char *const norms[] = {
        [MINT_NORM_RMS] = "RMSNorm", [MINT_NORM_LAYER] = "LayerNorm with biases"};
    static const char *const pos[] = {[MINT_POS_ROPE] = "RoPE (pairs 2i, 2i+1)",
                                      [MINT_POS_ROPE_NEOX] = "RoPE (NEOX pairs i, i + n_rot/2)",
                                      [MINT_POS_LEARNED] = "learned positions"};
    static const char *const ffn[] = {[MINT_FFN_SWIGLU] = "SwiGLU feed-forward",
                                      [MINT_FFN_GEGLU] = "GeGLU feed-forward",
                                      [MINT_FFN_GELU] = "GELU feed-forward with biases",
                                      [MINT_FFN_MOE] = "mixture of SwiGLU experts"};
    static const char *const need[] = {
        [MINT_ABSENT] = NULL, [MINT_OPTIONAL] = "optional", [MINT_REQUIRED] = "required"};
    size_t len = 0;
#define OUT(...)                                                                                   \
    do {                                                                                           \
        if (len < cap) len += (size_t)snprintf(buf + len, cap - len, __VA_ARGS__);                 \
    } while (0)
    buf[0] = '\0';
    OUT("architecture %s: %s, %s, %s", a->name, norms[a->norm], pos[a->pos], ffn[a->ffn]);
    const struct {
        mint_tensor_need n;
        const char *what;
    } tensors[] = {{a->qkv_bias, "q/k/v biases"},
                   {a->out_bias, "output projection bias"},
                   {a->qk_norm, a->qk_norm_whole ? "q/k norms over the whole projection"
                                                 : "per-head q/k norms"},
                   {a->rope_freqs, "rope_freqs"},
                   {a->longrope, "LongRoPE factors"},
                   {a->attn_sinks, "attention sinks"},
                   {a->moe_biases, "router and expert biases"}};
    for (size_t i = 0; i < sizeof tensors / sizeof *tensors; i++)
        if (need[tensors[i].n]) OUT("; %s (%s)", tensors[i].what, need[tensors[i].n]);
    if (a->fused_qkv) OUT("; q/k/v fused in attn_qkv");
    if (a->fused_gate_up) OUT("; gate and up fused in ffn_up");
    if (a->q_prescale) OUT("; queries pre-scaled");
    if (a->embd_scale) OUT("; embedding x sqrt(n_embd)");
    if (a->post_norms) OUT("; norms after attention and feed-forward");
    if (a->swa_period)
        OUT("; a window on %d of every %d layers (default %d)", a->swa_period - 1, a->swa_period,
            a->swa_window_default);
    if (a->rope_base_swa != 0.0f) OUT("; window layers' RoPE base %g", a->rope_base_swa);
    if (a->attn_softcap != 0.0f) OUT("; scores soft-capped at %g", a->attn_softcap);
    if (a->final_softcap != 0.0f || a->final_softcap_key)
        OUT("; logits soft-capped at %g%s", a->final_softcap,
            a->final_softcap_key ? " (or final_logit_softcapping)" : "");
    if (a->ffn_norm_post_attention) OUT("; the feed-forward norm named post_attention_norm");
    if (a->ffn == MINT_FFN_MOE && a->moe_gating == MINT_MOE_SOFTMAX_TOPK)
        OUT("; router: top-k logits, a softmax over them");
    else if (a->ffn == MINT_FFN_MOE)
        OUT("; softmax router, the chosen experts' weights %s%s",
            a->moe_norm_weights ? "renormalised" : "as they are",
            a->moe_shared_expert ? "; a shared expert behind a sigmoid gate" : "");
    if (a->moe_act == MINT_MOE_SWIGLU_OAI) OUT("; experts' clamped SwiGLU (swiglu_oai)");
    if (a->recurrent == MINT_MIXER_SHORTCONV)
        OUT("; a hybrid: layers without KV heads mix tokens by a double-gated short convolution "
            "(a state of its last L - 1 inputs per sequence)");
    if (a->recurrent == MINT_MIXER_DELTA_NET)
        OUT("; a hybrid: %s layers mix tokens by a gated delta net (a state of [S][S] per value "
            "head per sequence)",
            a->recurrent_interval ? "all but every full_attention_interval-th" : "some");
    if (a->q_gate) OUT("; the attention's output gated by sigmoid of a second half of attn_q");
    if (a->output_norm_name) OUT("; the final norm named %s", a->output_norm_name);
    if (a->layer_shapes)
        OUT("; shapes per layer: window layers by pattern with their own head size, "
            "feed-forward widths, the last layers reading earlier layers' KV");
    if (a->v_norm) OUT("; values RMS-normalised");
    if (a->attn_unscaled) OUT("; scores unscaled");
    if (need[a->per_layer_input]) OUT("; per-layer inputs (%s)", need[a->per_layer_input]);
    if (need[a->out_scale]) OUT("; layer output scales (%s)", need[a->out_scale]);
    if (a->wide_scale_layers)
        OUT("; %d layers scale queries by n_embd / n_head", a->wide_scale_layers);
    if (a->quant_70b_layers)
        OUT("; llama-quantize's 70B type at %d layers%s", a->quant_70b_layers,
            a->quant_70b_gqa ? " with shared K/V heads" : "");
#undef OUT
}

void mint_arch_list(char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof arches / sizeof *arches && len < cap; i++)
        if (!arches[i].moe_variant) // its name is its dense row's
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", arches[i].name);
}
