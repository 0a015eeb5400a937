// hf_arch.h - the Hugging Face model classes mint reads and writes, as one table: for each class
// the GGUF architecture it becomes, its tensor names and the operations on them, and which GGUF
// keys llama.cpp's convert_hf_to_gguf.py writes for it (docs/formats.md section 8). The reader
// (hf_checkpoint.c), the writer (hf_export.c) and the name mapping (hf_names.c) go by this table
// alone: adding a class is adding a row.
#ifndef MINT_HF_ARCH_H
#define MINT_HF_ARCH_H

#include <stddef.h>
#include <stdint.h>

// What happens to a tensor between the checkpoint and GGUF (bits of mint_hf_name.ops).
enum {
    MINT_HF_OP_PERM_Q = 1u,    // rows permuted in n_head groups (Llama's q_proj, hf_names.h)
    MINT_HF_OP_PERM_K = 2u,    // rows permuted in n_head_kv groups (Llama's k_proj)
    MINT_HF_OP_TRANSPOSE = 4u, // GPT-2's Conv1D weights: stored [in, out], GGUF wants [out, in]
    MINT_HF_OP_PLUS_ONE = 8u,  // Gemma's RMSNorm weights: HF stores w and computes x * (1 + w);
                               // GGUF stores 1 + w
};

// One tensor name: a whole name (the model's own tensors) or the part after the layer prefix
// and "N." (per-layer tensors; GGUF's side is after "blk.N.").
typedef struct mint_hf_name {
    const char *hf;   // HF name or suffix
    const char *gguf; // GGUF name or suffix; NULL: a known HF tensor the converter drops
                      // (rotary inv_freq buffers, GPT-2's attention masks, Gemma's lm_head)
    uint8_t ops;      // MINT_HF_OP_* bits
} mint_hf_name;

// Which keys the converter writes beyond the common ones (context_length, embedding_length,
// feed_forward_length, block_count, attention.head_count, the norm's epsilon), as bits of
// mint_hf_arch.keys. Each says where its value comes from in config.json.
enum {
    MINT_HF_K_KV_ALWAYS = 1u << 0,       // attention.head_count_kv even when config.json lacks
                                         // num_key_value_heads (then = head_count); otherwise only
                                         // when given
    MINT_HF_K_HEAD_DIM_ALWAYS = 1u << 1, // attention.key_length / value_length always (head_dim,
                                         // else hidden_size / heads); otherwise only when
                                         // head_dim is given
    MINT_HF_K_ROPE_DIMS = 1u << 2,       // rope.dimension_count = the head size
    MINT_HF_K_VOCAB_SIZE = 1u << 3,      // vocab_size (Llama's converter only)
    MINT_HF_K_NO_FREQ_BASE = 1u << 4, // no rope.freq_base even when rope_theta is given (Gemma 2)
    MINT_HF_K_FREQ_BASE_DEFAULT = 1u << 5, // rope.freq_base always, default_theta when absent
    MINT_HF_K_SOFTCAPS = 1u << 6,          // attn_logit_softcapping and final_logit_softcapping
                                           // (required)
    MINT_HF_K_FINAL_SOFTCAP = 1u << 7,     // final_logit_softcapping when given and non-zero
    MINT_HF_K_WINDOW = 1u << 8,            // attention.sliding_window = sliding_window (required)
    MINT_HF_K_WINDOW_OR_0 = 1u << 9,       // attention.sliding_window = sliding_window or 0 (Phi-3)
    MINT_HF_K_LONGROPE = 1u << 10,    // rope.scaling.original_context_length (required), and with
                                      // rope_scaling long/short factors rope.scaling.attn_factor
                                      // and the tensors rope_factors_{long,short}.weight
    MINT_HF_K_LAYER_NORM = 1u << 11,  // LayerNorm: attention.layer_norm_epsilon from
                                      // layer_norm_epsilon (GPT-2), no RoPE keys at all
    MINT_HF_K_FF_4X = 1u << 12,       // feed_forward_length = n_inner, else 4 x n_embd (GPT-2)
    MINT_HF_K_ROPE_LINEAR = 1u << 13, // rope_scaling of type linear -> rope.scaling.type/factor
    MINT_HF_K_NO_SPACE_PREFIX = 1u << 14, // tokenizer.ggml.add_space_prefix false with a
                                          // tokenizer.model, whatever it says (Gemma)
};

enum { MINT_HF_MAX_NAME_TABLES = 2 };

typedef struct mint_hf_arch {
    const char *hf_class;        // config.json "architectures"[0]
    const char *arch;            // GGUF general.architecture and the prefix of its keys
    const char *model_type;      // config.json "model_type" the writer puts
    const char *root;            // prefix of the model's tensors ("model." or "transformer.")
    int root_optional;           // 1: names without the root are read too (GPT-2's own files)
    const char *layer_prefix;    // per-layer HF names: root + layer_prefix + "N." + suffix
    const mint_hf_name *globals; // [n_globals] whole names (with the root)
    int n_globals;
    const mint_hf_name *layers[MINT_HF_MAX_NAME_TABLES]; // per-layer suffix tables (a second
    int n_layers[MINT_HF_MAX_NAME_TABLES];               // one for what a class adds)
    uint32_t keys;                                       // MINT_HF_K_* bits
    uint32_t default_ctx; // context_length when config.json has none; 0: required
    float default_theta;  // rope.freq_base when rope_theta is absent (FREQ_BASE_DEFAULT)
} mint_hf_arch;

// The row of a config.json class, or NULL.
const mint_hf_arch *mint_hf_arch_by_class(const char *hf_class);
// The row of a GGUF architecture (the first, for an architecture two classes share), or NULL.
const mint_hf_arch *mint_hf_arch_by_gguf(const char *arch, size_t len);
// "LlamaForCausalLM, Qwen2ForCausalLM, ...": every class once, for messages.
void mint_hf_arch_list(char *buf, size_t cap);

#endif // MINT_HF_ARCH_H
