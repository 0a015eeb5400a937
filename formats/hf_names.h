// hf_names.h - Hugging Face tensor names <-> GGUF names by the table of classes (hf_arch.h), and
// the Q/K row permutation of Llama checkpoints.
//
// Names (docs/formats.md 8.3, gguf-py's tensor_mapping.py): a class's whole names (e.g. Llama's
// model.embed_tokens.weight = token_embd.weight, lm_head.weight = output.weight) and its
// per-layer suffixes (root + layer prefix + "N." + suffix = "blk.N." + suffix, e.g.
// model.layers.3.mlp.down_proj.weight = blk.3.ffn_down.weight). A few HF tensors have no GGUF
// counterpart and are dropped (rotary inv_freq buffers, derived from the config; GPT-2's causal
// masks). GPT-2's files are also read without the "transformer." root.
//
// The permutation (docs/formats.md 8.4, convert_hf_to_gguf.py LlamaModel.permute): HF applies RoPE
// as "rotate half" (pairs (i, i + hd/2) of a head), GGUF's llama graph rotates adjacent pairs (2i,
// 2i+1). The converter reorders q_proj rows per head (n_head groups) and k_proj rows per KV head
// (n_head_kv groups) so that the two agree:
//     GGUF row g*hd + 2i + j  =  HF row g*hd + j*(hd/2) + i     (i < hd/2, j in {0, 1})
// Columns are untouched; a bias (one value per row) moves the same way. Only Llama's rows are
// permuted: every other class's GGUF graph rotates halves as HF does.
#ifndef MINT_HF_NAMES_H
#define MINT_HF_NAMES_H

#include "formats/hf_arch.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum mint_hf_name_result {
    MINT_HF_NAME_MAPPED = 0,  // *out holds the other name
    MINT_HF_NAME_DROP = 1,    // a known HF tensor with no GGUF counterpart
    MINT_HF_NAME_UNKNOWN = 2, // not a tensor name of the class
} mint_hf_name_result;

// HF -> GGUF for class a. *ops gets the MINT_HF_OP_* bits of the tensor, *layer N for per-layer
// tensors and -1 otherwise. `out` needs 64 bytes.
mint_hf_name_result mint_hf_name_to_gguf(const mint_hf_arch *a, const char *hf, char *out,
                                         size_t cap, unsigned *ops, int *layer);
// GGUF -> HF (never DROP); HF names are written with the class's root. `out` needs 96 bytes.
mint_hf_name_result mint_gguf_name_to_hf(const mint_hf_arch *a, const char *gguf, char *out,
                                         size_t cap, unsigned *ops, int *layer);

// Reorders n_rows rows of row_bytes each from src to dst (distinct buffers) in n_groups groups of
// hd = n_rows / n_groups rows: HF order -> GGUF order when to_gguf, else the inverse. The caller
// guarantees n_rows = n_groups * hd with hd even.
void mint_qk_permute(const void *src, void *dst, uint64_t n_rows, size_t row_bytes,
                     uint32_t n_groups, bool to_gguf);

// Transposes a [rows][cols] matrix of elem_size-byte elements from src into dst [cols][rows]
// (GPT-2's Conv1D weights, both ways).
void mint_hf_transpose(const void *src, void *dst, uint64_t rows, uint64_t cols, size_t elem_size);

// dst[i] = src[i] + delta for n elements of type (F32, F16 or BF16; 16-bit values are computed
// in f32 and rounded to nearest even, as torch does): Gemma's norms, +1 on the way to GGUF and
// -1 back. Returns false for another type.
bool mint_hf_add_scalar(const void *src, void *dst, uint32_t type, uint64_t n, float delta);

#endif // MINT_HF_NAMES_H
