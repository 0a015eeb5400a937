// hf_arch.c - the table of Hugging Face classes (hf_arch.h). Names follow gguf-py's
// tensor_mapping.py; the key bits follow each class's set_gguf_parameters in llama.cpp's
// converter (docs/formats.md section 8 lists both).
#include "formats/hf_arch.h"

#include <stdio.h>
#include <string.h>

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

enum {
    PQ = MINT_HF_OP_PERM_Q,
    PK = MINT_HF_OP_PERM_K,
    TR = MINT_HF_OP_TRANSPOSE,
    P1 = MINT_HF_OP_PLUS_ONE,
};

// ---------------------------------------------------------------------------------------------
// The model's own tensors

static const mint_hf_name llama_globals[] = {
    {"model.embed_tokens.weight", "token_embd.weight", 0},
    {"model.norm.weight", "output_norm.weight", 0},
    {"lm_head.weight", "output.weight", 0},
};

// Gemma's final norm is one of its 1 + w norms; the converter skips lm_head (Gemma ties the
// output to the embedding; some quantizers still save a copy).
static const mint_hf_name gemma_globals[] = {
    {"model.embed_tokens.weight", "token_embd.weight", 0},
    {"model.norm.weight", "output_norm.weight", P1},
    {"lm_head.weight", NULL, 0},
};

static const mint_hf_name gpt2_globals[] = {
    {"transformer.wte.weight", "token_embd.weight", 0},
    {"transformer.wpe.weight", "position_embd.weight", 0},
    {"transformer.ln_f.weight", "output_norm.weight", 0},
    {"transformer.ln_f.bias", "output_norm.bias", 0},
    {"lm_head.weight", "output.weight", 0},
};

// ---------------------------------------------------------------------------------------------
// Per-layer tensors (after "model.layers.N." / "transformer.h.N.")

// Llama: q and k rows permuted (the only permuted tensors of any class, hf_names.h).
static const mint_hf_name llama_layers[] = {
    {"input_layernorm.weight", "attn_norm.weight", 0},
    {"self_attn.q_proj.weight", "attn_q.weight", PQ},
    {"self_attn.k_proj.weight", "attn_k.weight", PK},
    {"self_attn.v_proj.weight", "attn_v.weight", 0},
    {"self_attn.o_proj.weight", "attn_output.weight", 0},
    {"post_attention_layernorm.weight", "ffn_norm.weight", 0},
    {"mlp.gate_proj.weight", "ffn_gate.weight", 0},
    {"mlp.up_proj.weight", "ffn_up.weight", 0},
    {"mlp.down_proj.weight", "ffn_down.weight", 0},
    {"self_attn.q_proj.bias", "attn_q.bias", PQ},
    {"self_attn.k_proj.bias", "attn_k.bias", PK},
    {"self_attn.v_proj.bias", "attn_v.bias", 0},
    {"self_attn.o_proj.bias", "attn_output.bias", 0},
    {"mlp.gate_proj.bias", "ffn_gate.bias", 0},
    {"mlp.up_proj.bias", "ffn_up.bias", 0},
    {"mlp.down_proj.bias", "ffn_down.bias", 0},
    {"self_attn.rotary_emb.inv_freq", NULL, 0},
};

// Qwen2 / Qwen3: Llama's names, rows as stored (their graph rotates halves, as HF does).
static const mint_hf_name qwen_layers[] = {
    {"input_layernorm.weight", "attn_norm.weight", 0},
    {"self_attn.q_proj.weight", "attn_q.weight", 0},
    {"self_attn.k_proj.weight", "attn_k.weight", 0},
    {"self_attn.v_proj.weight", "attn_v.weight", 0},
    {"self_attn.o_proj.weight", "attn_output.weight", 0},
    {"post_attention_layernorm.weight", "ffn_norm.weight", 0},
    {"mlp.gate_proj.weight", "ffn_gate.weight", 0},
    {"mlp.up_proj.weight", "ffn_up.weight", 0},
    {"mlp.down_proj.weight", "ffn_down.weight", 0},
    {"self_attn.q_proj.bias", "attn_q.bias", 0},
    {"self_attn.k_proj.bias", "attn_k.bias", 0},
    {"self_attn.v_proj.bias", "attn_v.bias", 0},
    {"self_attn.rotary_emb.inv_freq", NULL, 0},
};

static const mint_hf_name qk_norm_layers[] = {
    {"self_attn.q_norm.weight", "attn_q_norm.weight", 0},
    {"self_attn.k_norm.weight", "attn_k_norm.weight", 0},
};

// Gemma 2 / 3: four norms per layer, every one stored as w (HF adds 1 when computing).
static const mint_hf_name gemma_layers[] = {
    {"input_layernorm.weight", "attn_norm.weight", P1},
    {"self_attn.q_proj.weight", "attn_q.weight", 0},
    {"self_attn.k_proj.weight", "attn_k.weight", 0},
    {"self_attn.v_proj.weight", "attn_v.weight", 0},
    {"self_attn.o_proj.weight", "attn_output.weight", 0},
    {"post_attention_layernorm.weight", "post_attention_norm.weight", P1},
    {"pre_feedforward_layernorm.weight", "ffn_norm.weight", P1},
    {"post_feedforward_layernorm.weight", "post_ffw_norm.weight", P1},
    {"mlp.gate_proj.weight", "ffn_gate.weight", 0},
    {"mlp.up_proj.weight", "ffn_up.weight", 0},
    {"mlp.down_proj.weight", "ffn_down.weight", 0},
    {"self_attn.rotary_emb.inv_freq", NULL, 0},
};

// Gemma 3's per-head q/k norms are Gemma norms too (1 + w).
static const mint_hf_name gemma_qk_norm_layers[] = {
    {"self_attn.q_norm.weight", "attn_q_norm.weight", P1},
    {"self_attn.k_norm.weight", "attn_k_norm.weight", P1},
};

// Phi-3: q/k/v in one matrix and gate/up in another, kept fused (GGUF's ffn_up holds gate then
// up, as HF's gate_up_proj does).
static const mint_hf_name phi3_layers[] = {
    {"input_layernorm.weight", "attn_norm.weight", 0},
    {"self_attn.qkv_proj.weight", "attn_qkv.weight", 0},
    {"self_attn.o_proj.weight", "attn_output.weight", 0},
    {"post_attention_layernorm.weight", "ffn_norm.weight", 0},
    {"mlp.gate_up_proj.weight", "ffn_up.weight", 0},
    {"mlp.down_proj.weight", "ffn_down.weight", 0},
    {"self_attn.rotary_emb.inv_freq", NULL, 0},
};

// GPT-2: Conv1D matrices stored [in, out]; the attention's causal mask buffers are dropped.
static const mint_hf_name gpt2_layers[] = {
    {"ln_1.weight", "attn_norm.weight", 0},
    {"ln_1.bias", "attn_norm.bias", 0},
    {"attn.c_attn.weight", "attn_qkv.weight", TR},
    {"attn.c_attn.bias", "attn_qkv.bias", 0},
    {"attn.c_proj.weight", "attn_output.weight", TR},
    {"attn.c_proj.bias", "attn_output.bias", 0},
    {"ln_2.weight", "ffn_norm.weight", 0},
    {"ln_2.bias", "ffn_norm.bias", 0},
    {"mlp.c_fc.weight", "ffn_up.weight", TR},
    {"mlp.c_fc.bias", "ffn_up.bias", 0},
    {"mlp.c_proj.weight", "ffn_down.weight", TR},
    {"mlp.c_proj.bias", "ffn_down.bias", 0},
    {"attn.bias", NULL, 0},
    {"attn.masked_bias", NULL, 0},
};

// ---------------------------------------------------------------------------------------------
// The classes

#define LLAMA_KEYS                                                                                 \
    (MINT_HF_K_KV_ALWAYS | MINT_HF_K_ROPE_DIMS | MINT_HF_K_VOCAB_SIZE | MINT_HF_K_ROPE_LINEAR)

static const mint_hf_arch rows[] = {
    // LlamaModel: the converter's own keys (head_count_kv, rope.dimension_count, vocab_size) and
    // HF LlamaConfig's default context of 2048. LLaMAForCausalLM is the old spelling.
    {"LlamaForCausalLM",
     "llama",
     "llama",
     "model.",
     0,
     "layers.",
     llama_globals,
     N(llama_globals),
     {llama_layers, NULL},
     {N(llama_layers), 0},
     LLAMA_KEYS,
     2048,
     0.0f},
    {"LLaMAForCausalLM",
     "llama",
     "llama",
     "model.",
     0,
     "layers.",
     llama_globals,
     N(llama_globals),
     {llama_layers, NULL},
     {N(llama_layers), 0},
     LLAMA_KEYS,
     2048,
     0.0f},
    // Qwen2 / Qwen2.5 and Qwen3: the converter's generic keys (head_count_kv and key_length only
    // when config.json has them).
    {"Qwen2ForCausalLM",
     "qwen2",
     "qwen2",
     "model.",
     0,
     "layers.",
     llama_globals,
     N(llama_globals),
     {qwen_layers, NULL},
     {N(qwen_layers), 0},
     MINT_HF_K_ROPE_LINEAR,
     0,
     0.0f},
    {"Qwen3ForCausalLM",
     "qwen3",
     "qwen3",
     "model.",
     0,
     "layers.",
     llama_globals,
     N(llama_globals),
     {qwen_layers, qk_norm_layers},
     {N(qwen_layers), N(qk_norm_layers)},
     MINT_HF_K_ROPE_LINEAR,
     0,
     0.0f},
    // Gemma 2: its own key list (no RoPE keys: llama.cpp's defaults are HF's), soft-caps and the
    // window required.
    {"Gemma2ForCausalLM",
     "gemma2",
     "gemma2",
     "model.",
     0,
     "layers.",
     gemma_globals,
     N(gemma_globals),
     {gemma_layers, NULL},
     {N(gemma_layers), 0},
     MINT_HF_K_KV_ALWAYS | MINT_HF_K_HEAD_DIM_ALWAYS | MINT_HF_K_NO_FREQ_BASE | MINT_HF_K_SOFTCAPS |
         MINT_HF_K_WINDOW | MINT_HF_K_NO_SPACE_PREFIX,
     0,
     0.0f},
    // Gemma 3 (text-only checkpoints): the generic keys plus its defaults (context 131072,
    // rope_theta 1e6), the logits' soft-cap when set, the window unless every layer is global.
    {"Gemma3ForCausalLM",
     "gemma3",
     "gemma3_text",
     "model.",
     0,
     "layers.",
     gemma_globals,
     N(gemma_globals),
     {gemma_layers, gemma_qk_norm_layers},
     {N(gemma_layers), N(gemma_qk_norm_layers)},
     MINT_HF_K_KV_ALWAYS | MINT_HF_K_HEAD_DIM_ALWAYS | MINT_HF_K_FREQ_BASE_DEFAULT |
         MINT_HF_K_FINAL_SOFTCAP | MINT_HF_K_WINDOW | MINT_HF_K_ROPE_LINEAR |
         MINT_HF_K_NO_SPACE_PREFIX,
     131072,
     1e6f},
    // Phi-3 / Phi-3.5: LongRoPE's original context, factors and attention factor; a window of 0
    // when config.json has none.
    {"Phi3ForCausalLM",
     "phi3",
     "phi3",
     "model.",
     0,
     "layers.",
     llama_globals,
     N(llama_globals),
     {phi3_layers, NULL},
     {N(phi3_layers), 0},
     MINT_HF_K_KV_ALWAYS | MINT_HF_K_ROPE_DIMS | MINT_HF_K_FREQ_BASE_DEFAULT |
         MINT_HF_K_WINDOW_OR_0 | MINT_HF_K_LONGROPE,
     0,
     1e4f},
    // GPT-2: LayerNorm, learned positions, GPT2Config's names (n_embd, n_layer, n_head, n_ctx).
    {"GPT2LMHeadModel",
     "gpt2",
     "gpt2",
     "transformer.",
     1,
     "h.",
     gpt2_globals,
     N(gpt2_globals),
     {gpt2_layers, NULL},
     {N(gpt2_layers), 0},
     MINT_HF_K_LAYER_NORM | MINT_HF_K_FF_4X,
     0,
     0.0f},
};

const mint_hf_arch *mint_hf_arch_by_class(const char *hf_class) {
    for (int i = 0; hf_class && i < N(rows); i++)
        if (strcmp(rows[i].hf_class, hf_class) == 0) return &rows[i];
    return NULL;
}

const mint_hf_arch *mint_hf_arch_by_gguf(const char *arch, size_t len) {
    for (int i = 0; arch && i < N(rows); i++)
        if (strlen(rows[i].arch) == len && memcmp(rows[i].arch, arch, len) == 0) return &rows[i];
    return NULL;
}

void mint_hf_arch_list(char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < N(rows) && len < cap; i++) {
        if (strcmp(rows[i].hf_class, "LLaMAForCausalLM") == 0) continue; // a spelling, not a class
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", rows[i].hf_class);
    }
}
