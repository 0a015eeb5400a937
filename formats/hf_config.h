// hf_config.h - a checkpoint's config.json read for the class it names (hf_arch.h), and the GGUF
// "<arch>.*" keys llama.cpp's converter makes of it (docs/formats.md 8.2).
#ifndef MINT_HF_CONFIG_H
#define MINT_HF_CONFIG_H

#include "formats/hf_arch.h"
#include "formats/tensor_dir.h"
#include "mint.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

enum { MINT_HF_MAX_ROPE_FACTORS = 4096 }; // LongRoPE factors per list (head size / 2)

typedef struct mint_hf_config {
    const mint_hf_arch *a;   // the class's row
    uint32_t n_embd;         // hidden_size (GPT-2: n_embd)
    uint32_t n_layer;        // num_hidden_layers (n_layer)
    uint32_t n_head;         // num_attention_heads (n_head)
    uint32_t n_head_kv;      // num_key_value_heads, else n_head
    bool has_kv;             // num_key_value_heads was given
    uint32_t n_ff;           // intermediate_size (GPT-2: n_inner, else 4 x n_embd)
    uint32_t n_ctx;          // max_position_embeddings (n_ctx, n_positions), else the row's default
    uint32_t head_dim;       // head_dim, else n_embd / n_head
    bool has_head_dim;       // head_dim was given
    uint32_t n_vocab;        // vocab_size, else the embedding's row count (set by the caller)
    bool has_vocab;          // vocab_size was given
    float eps;               // rms_norm_eps (GPT-2: layer_norm_epsilon)
    float theta;             // rope_theta, else the row's default
    bool has_theta;          // rope_theta was given
    float theta_swa;         // rope_local_base_freq: the window layers' RoPE base
    bool has_theta_swa;      // it was given
    float rope_factor;       // rope_scaling factor of linear scaling; 0 = none
    float attn_softcap;      // attn_logit_softcapping (Gemma 2)
    float final_softcap;     // final_logit_softcapping; 0 = none
    uint32_t window;         // sliding_window; 0 = none
    bool has_window;         // the attention.sliding_window key is written
    uint32_t window_pattern; // sliding_window_pattern: every Nth layer global; 0 = not given
    uint32_t n_ctx_orig;     // Phi-3: original_max_position_embeddings
    uint32_t n_factors;      // Phi-3: LongRoPE factors per list (head size / 2); 0 = none
    float *long_factors;     // [n_factors] rope_scaling.long_factor (malloc'd; mint_hf_config_free)
    float *short_factors;    // [n_factors] rope_scaling.short_factor
    float attn_factor;       // Phi-3: LongRoPE's sqrt(1 + ln s / ln n_ctx_orig), s = n_ctx / orig
} mint_hf_config;

// Reads config.json (an object) for its "architectures"[0]. MINT_E_UNSUPPORTED naming the class
// and the supported ones for another class (Gemma 3's vision checkpoint included) or a
// rope_scaling mint does not compute; MINT_E_FORMAT for a missing or malformed value.
mint_status mint_hf_read_config(json_object *cfg, mint_hf_config *c, mint_err *err);
void mint_hf_config_free(mint_hf_config *c);

// Adds general.architecture, general.name and the class's "<arch>.*" keys to f.
mint_status mint_hf_add_arch_keys(mint_file *f, const char *name, const mint_hf_config *c,
                                  mint_err *err);

#endif // MINT_HF_CONFIG_H
