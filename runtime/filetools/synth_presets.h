// synth_presets.h - the shapes mint-quantize --synthetic writes (runtime/filetools/synth.c):
// per preset name and shape the model's numbers, and for the mixtures their experts' and for the
// hybrids their layers' (runtime/filetools/synth_presets.c holds the tables).
#ifndef MINT_SYNTH_PRESETS_H
#define MINT_SYNTH_PRESETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct preset {
    const char *name;   // --synthetic NAME: "tinyllama", "small", "mha", "llama3", "qwen2", ...
    const char *shape;  // --shape: "real" (the named model's shapes) or "tiny" (for tests)
    const char *arch;   // general.architecture, and the prefix of the metadata keys
    int32_t n_embd;     // residual width
    int32_t n_ff;       // feed-forward width
    int32_t n_layer;    // blocks
    int32_t n_head;     // query heads
    int32_t n_head_kv;  // key/value heads
    int32_t head_dim;   // head size (attention.key_length; may differ from n_embd / n_head)
    int32_t n_ctx;      // training context
    int32_t n_vocab;    // vocabulary size of the built-in vocabulary
    float rope_base;    // rope frequency base
    float rms_eps;      // attention.layer_norm_rms_epsilon
    bool tied;          // no output.weight: the output head is token_embd
    bool rope_freqs;    // Llama 3's rope_freqs.weight (factor 32, low 1, high 4, 8192 original)
    int32_t n_ctx_orig; // LongRoPE's original context (rope_factors_long/short, attn_factor), as
                        // Phi-3-mini-128k and Phi-3.5-mini have it; 0: none
    const char *title;  // the model's word in general.name when not the preset's name (NULL)
    bool window_keys;   // rope.scaling.original_context_length and attention.sliding_window, as
                        // Phi-3's converter writes them (llama.cpp ignores the window)
} preset;

// The mixtures' experts, per preset name and shape (MINT_FFN_MOE rows).
typedef struct moe_shape {
    const char *name;   // preset name
    const char *shape;  // preset shape
    int32_t n_expert;   // expert_count
    int32_t n_used;     // expert_used_count
    int32_t n_ff_exp;   // expert_feed_forward_length
    int32_t n_ff_shexp; // expert_shared_feed_forward_length (0: no shared expert)
} moe_shape;

// YaRN context extension as a preset's converter writes it (rope.scaling.*), per preset name.
typedef struct yarn_scaling {
    const char *name;   // preset name
    float factor;       // rope.scaling.factor
    int32_t n_ctx_orig; // rope.scaling.original_context_length
} yarn_scaling;

// The hybrids' layers, per preset name and shape (rows with a recurrent mixer): which layers
// have attention ('A'; '.' the recurrent mixer), and the short convolution's taps.
typedef struct hybrid_shape {
    const char *name;    // preset name
    const char *shape;   // preset shape
    const char *layers;  // [n_layer] 'A' attention, '.' recurrent
    int32_t n_conv;      // shortconv.l_cache, ssm.conv_kernel
    int32_t interval;    // full_attention_interval (0: the layers say it by their KV heads)
    int32_t n_rot;       // rope.dimension_count when it is less than the head (0: the head)
    int32_t ssm_k_heads; // a delta net's ssm.group_count (0: none)
    int32_t ssm_v_heads; // ssm.time_step_rank
    int32_t ssm_s;       // ssm.state_size
} hybrid_shape;

// Gemma 4's layers, per preset shape (rows with layer_shapes): each layer's kind, 'S' a window
// layer and 'F' a full one, lower case when it reads an earlier layer's keys and values (the last
// ones); the window layers' head size; the per-layer inputs' width; the window; whether the
// layers sharing KV have a feed-forward twice as wide (use_double_wide_mlp); a layer written
// without attn_v (its keys serve as values), or -1.
typedef struct layer_shape {
    const char *shape;    // preset shape
    const char *layers;   // [n_layer] S/F, s/f
    int32_t head_dim_swa; // attention.key_length_swa
    int32_t n_ple;        // embedding_length_per_layer_input
    int32_t window;       // attention.sliding_window
    bool double_wide;     // 2 n_ff in the layers sharing KV
    int32_t no_v;         // the layer without attn_v, or -1
} layer_shape;

// The preset of that name and shape, or NULL; *known_name says whether the name exists at all.
const preset *mint_synth_preset(const char *name, const char *shape, bool *known_name);
// A mixture's experts (NULL for a dense preset).
const moe_shape *moe_of(const preset *p);
// Gemma 4's layers (NULL for a row without layer_shapes).
const layer_shape *layer_shape_of(const preset *p);
// A preset's YaRN keys (NULL when its file has none).
const yarn_scaling *yarn_of(const preset *p);
// A hybrid's layers (NULL for a transformer).
const hybrid_shape *hybrid_of(const preset *p);
// Whether a preset name comes in several shapes (the architectures' presets have a tiny one).
bool has_shapes(const char *name);
// "tinyllama, small, mha, llama3, ...": every preset name once, in the table's order, into buf.
void preset_names(char *buf, size_t cap);

#endif // MINT_SYNTH_PRESETS_H
