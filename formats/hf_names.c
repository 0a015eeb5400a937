// hf_names.c - the name table and the row permutation of hf_names.h.
#include "formats/hf_names.h"

#include <stdio.h>
#include <string.h>

typedef struct name_pair {
    const char *hf;    // HF name or per-layer suffix
    const char *gguf;  // GGUF name or per-layer suffix
    mint_hf_perm perm; // row permutation applied on the way to GGUF
} name_pair;

static const name_pair global_names[] = {
    {"model.embed_tokens.weight", "token_embd.weight", MINT_HF_PERM_NONE},
    {"model.norm.weight", "output_norm.weight", MINT_HF_PERM_NONE},
    {"lm_head.weight", "output.weight", MINT_HF_PERM_NONE},
};

// Suffixes after "model.layers.N." / "blk.N.".
static const name_pair layer_names[] = {
    {"input_layernorm.weight", "attn_norm.weight", MINT_HF_PERM_NONE},
    {"self_attn.q_proj.weight", "attn_q.weight", MINT_HF_PERM_Q},
    {"self_attn.k_proj.weight", "attn_k.weight", MINT_HF_PERM_K},
    {"self_attn.v_proj.weight", "attn_v.weight", MINT_HF_PERM_NONE},
    {"self_attn.o_proj.weight", "attn_output.weight", MINT_HF_PERM_NONE},
    {"post_attention_layernorm.weight", "ffn_norm.weight", MINT_HF_PERM_NONE},
    {"mlp.gate_proj.weight", "ffn_gate.weight", MINT_HF_PERM_NONE},
    {"mlp.up_proj.weight", "ffn_up.weight", MINT_HF_PERM_NONE},
    {"mlp.down_proj.weight", "ffn_down.weight", MINT_HF_PERM_NONE},
    {"self_attn.q_proj.bias", "attn_q.bias", MINT_HF_PERM_Q},
    {"self_attn.k_proj.bias", "attn_k.bias", MINT_HF_PERM_K},
    {"self_attn.v_proj.bias", "attn_v.bias", MINT_HF_PERM_NONE},
    {"self_attn.o_proj.bias", "attn_output.bias", MINT_HF_PERM_NONE},
    {"mlp.gate_proj.bias", "ffn_gate.bias", MINT_HF_PERM_NONE},
    {"mlp.up_proj.bias", "ffn_up.bias", MINT_HF_PERM_NONE},
    {"mlp.down_proj.bias", "ffn_down.bias", MINT_HF_PERM_NONE},
};

#define LAYER_MAX 99999 // far beyond any Llama (80 layers) and short enough for GGUF names

// Parses "<prefix><N>.<rest>" with N a decimal without leading zeros; returns rest or NULL.
static const char *split_layer(const char *name, const char *prefix, int *layer) {
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n) != 0) return NULL;
    const char *p = name + n;
    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] != '.')) return NULL;
    long v = 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (*p - '0');
        if (v > LAYER_MAX) return NULL;
        p++;
    }
    if (*p != '.') return NULL;
    *layer = (int)v;
    return p + 1;
}

static mint_hf_name_result map_name(const char *name, char *out, size_t cap, mint_hf_perm *perm,
                                    int *layer, bool to_gguf) {
    *perm = MINT_HF_PERM_NONE;
    *layer = -1;
    for (size_t i = 0; i < sizeof global_names / sizeof global_names[0]; i++) {
        const name_pair *e = &global_names[i];
        if (strcmp(name, to_gguf ? e->hf : e->gguf) != 0) continue;
        snprintf(out, cap, "%s", to_gguf ? e->gguf : e->hf);
        return MINT_HF_NAME_MAPPED;
    }
    int n;
    const char *rest = split_layer(name, to_gguf ? "model.layers." : "blk.", &n);
    if (!rest) return MINT_HF_NAME_UNKNOWN;
    if (to_gguf && strcmp(rest, "self_attn.rotary_emb.inv_freq") == 0) {
        *layer = n;
        return MINT_HF_NAME_DROP;
    }
    for (size_t i = 0; i < sizeof layer_names / sizeof layer_names[0]; i++) {
        const name_pair *e = &layer_names[i];
        if (strcmp(rest, to_gguf ? e->hf : e->gguf) != 0) continue;
        snprintf(out, cap, to_gguf ? "blk.%d.%s" : "model.layers.%d.%s", n,
                 to_gguf ? e->gguf : e->hf);
        *perm = e->perm;
        *layer = n;
        return MINT_HF_NAME_MAPPED;
    }
    return MINT_HF_NAME_UNKNOWN;
}

mint_hf_name_result mint_hf_name_to_gguf(const char *hf, char *out, size_t cap, mint_hf_perm *perm,
                                         int *layer) {
    return map_name(hf, out, cap, perm, layer, true);
}

mint_hf_name_result mint_gguf_name_to_hf(const char *gguf, char *out, size_t cap,
                                         mint_hf_perm *perm, int *layer) {
    return map_name(gguf, out, cap, perm, layer, false);
}

void mint_qk_permute(const void *src, void *dst, uint64_t n_rows, size_t row_bytes,
                     uint32_t n_groups, bool to_gguf) {
    const unsigned char *s = src;
    unsigned char *d = dst;
    uint64_t hd = n_rows / n_groups, half = hd / 2;
    for (uint64_t g = 0; g < n_groups; g++) {
        for (uint64_t i = 0; i < half; i++) {
            for (uint64_t j = 0; j < 2; j++) {
                uint64_t gguf_row = g * hd + 2 * i + j;  // adjacent pairs
                uint64_t hf_row = g * hd + j * half + i; // halves
                uint64_t to = to_gguf ? gguf_row : hf_row, from = to_gguf ? hf_row : gguf_row;
                memcpy(d + to * row_bytes, s + from * row_bytes, row_bytes);
            }
        }
    }
}
