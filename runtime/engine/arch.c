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
};

const mint_arch *mint_arch_find(const char *name) {
    for (size_t i = 0; name && i < sizeof arches / sizeof *arches; i++)
        if (strcmp(arches[i].name, name) == 0) return &arches[i];
    return NULL;
}

void mint_arch_describe(const mint_arch *a, char *buf, size_t cap) {
    static const char *const norms[] = {
        [MINT_NORM_RMS] = "RMSNorm", [MINT_NORM_LAYER] = "LayerNorm with biases"};
    static const char *const pos[] = {[MINT_POS_ROPE] = "RoPE (pairs 2i, 2i+1)",
                                      [MINT_POS_ROPE_NEOX] = "RoPE (NEOX pairs i, i + n_rot/2)",
                                      [MINT_POS_LEARNED] = "learned positions"};
    static const char *const ffn[] = {[MINT_FFN_SWIGLU] = "SwiGLU feed-forward",
                                      [MINT_FFN_GEGLU] = "GeGLU feed-forward",
                                      [MINT_FFN_GELU] = "GELU feed-forward with biases"};
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
                   {a->qk_norm, "per-head q/k norms"},
                   {a->rope_freqs, "rope_freqs"},
                   {a->longrope, "LongRoPE factors"}};
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
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", arches[i].name);
}
