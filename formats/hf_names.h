// hf_names.h - Hugging Face Llama tensor names <-> GGUF names, and the Q/K row permutation.
//
// Names (docs/formats.md 8.3, gguf-py's tensor_mapping.py): model.embed_tokens.weight
// = token_embd.weight, model.norm.weight = output_norm.weight, lm_head.weight = output.weight, and
// per layer N model.layers.N.{input_layernorm, self_attn.{q,k,v,o}_proj,
// post_attention_layernorm, mlp.{gate,up,down}_proj}.{weight,bias} = blk.N.{attn_norm,
// attn_{q,k,v,output}, ffn_norm, ffn_{gate,up,down}}.{weight,bias}. The rotary inv_freq buffer
// some exports carry is dropped (it is derived from the config).
//
// The permutation (docs/formats.md 8.4, convert_hf_to_gguf.py LlamaModel.permute): HF applies RoPE
// as "rotate half" (pairs (i, i + hd/2) of a head), GGUF's llama graph rotates adjacent pairs (2i,
// 2i+1). The converter reorders q_proj rows per head (n_head groups) and k_proj rows per KV head
// (n_head_kv groups) so that the two agree:
//     GGUF row g*hd + 2i + j  =  HF row g*hd + j*(hd/2) + i     (i < hd/2, j in {0, 1})
// Columns are untouched; a bias (one value per row) moves the same way.
#ifndef MINT_HF_NAMES_H
#define MINT_HF_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum mint_hf_perm {
    MINT_HF_PERM_NONE = 0, // copied as is
    MINT_HF_PERM_Q = 1,    // rows permuted in n_head groups
    MINT_HF_PERM_K = 2,    // rows permuted in n_head_kv groups
} mint_hf_perm;

typedef enum mint_hf_name_result {
    MINT_HF_NAME_MAPPED = 0,  // *out holds the other name
    MINT_HF_NAME_DROP = 1,    // a known tensor with no counterpart (rotary inv_freq)
    MINT_HF_NAME_UNKNOWN = 2, // not a Llama tensor name mint knows
} mint_hf_name_result;

// HF -> GGUF. *layer gets N for per-layer tensors and -1 otherwise. `out` needs 64 bytes.
mint_hf_name_result mint_hf_name_to_gguf(const char *hf, char *out, size_t cap, mint_hf_perm *perm,
                                         int *layer);
// GGUF -> HF (never DROP). `out` needs 64 bytes.
mint_hf_name_result mint_gguf_name_to_hf(const char *gguf, char *out, size_t cap,
                                         mint_hf_perm *perm, int *layer);

// Reorders n_rows rows of row_bytes each from src to dst (distinct buffers) in n_groups groups of
// hd = n_rows / n_groups rows: HF order -> GGUF order when to_gguf, else the inverse. The caller
// guarantees n_rows = n_groups * hd with hd even.
void mint_qk_permute(const void *src, void *dst, uint64_t n_rows, size_t row_bytes,
                     uint32_t n_groups, bool to_gguf);

#endif // MINT_HF_NAMES_H
