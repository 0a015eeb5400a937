// hf_names.c - the name lookups and the row permutation of hf_names.h, over the tables of
// hf_arch.c.
#include "formats/hf_names.h"

#include "quant/fp16.h"
#include "quant/types.h"

#include <stdio.h>
#include <string.h>

#define LAYER_MAX 99999 // far beyond any model (126 layers) and short enough for GGUF names

// Parses "<prefix><N>.<rest>" with N a decimal without leading zeros; returns rest or NULL.
static const char *split_layer(const char *name, const char *prefix, size_t n, int *layer) {
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

// Looks `name` up in the class's tables; `name` has the root already (HF side).
static mint_hf_name_result map_name(const mint_hf_arch *a, const char *name, char *out, size_t cap,
                                    unsigned *ops, int *layer, bool to_gguf) {
    for (int i = 0; i < a->n_globals; i++) {
        const mint_hf_name *e = &a->globals[i];
        if (!to_gguf && !e->gguf) continue;
        if (strcmp(name, to_gguf ? e->hf : e->gguf) != 0) continue;
        *ops = e->ops;
        if (to_gguf && !e->gguf) return MINT_HF_NAME_DROP;
        snprintf(out, cap, "%s", to_gguf ? e->gguf : e->hf);
        return MINT_HF_NAME_MAPPED;
    }
    char prefix[64];
    if (to_gguf)
        snprintf(prefix, sizeof prefix, "%s%s", a->root, a->layer_prefix);
    else
        snprintf(prefix, sizeof prefix, "blk.");
    int n;
    const char *rest = split_layer(name, prefix, strlen(prefix), &n);
    if (!rest) return MINT_HF_NAME_UNKNOWN;
    for (int k = 0; k < MINT_HF_MAX_NAME_TABLES; k++) {
        for (int i = 0; i < a->n_layers[k]; i++) {
            const mint_hf_name *e = &a->layers[k][i];
            if (!to_gguf && !e->gguf) continue;
            if (strcmp(rest, to_gguf ? e->hf : e->gguf) != 0) continue;
            *ops = e->ops;
            *layer = n;
            if (to_gguf && !e->gguf) return MINT_HF_NAME_DROP;
            if (to_gguf)
                snprintf(out, cap, "blk.%d.%s", n, e->gguf);
            else
                snprintf(out, cap, "%s%s%d.%s", a->root, a->layer_prefix, n, e->hf);
            return MINT_HF_NAME_MAPPED;
        }
    }
    return MINT_HF_NAME_UNKNOWN;
}

mint_hf_name_result mint_hf_name_to_gguf(const mint_hf_arch *a, const char *hf, char *out,
                                         size_t cap, unsigned *ops, int *layer) {
    *ops = 0;
    *layer = -1;
    mint_hf_name_result r = map_name(a, hf, out, cap, ops, layer, true);
    size_t root = strlen(a->root);
    if (r != MINT_HF_NAME_UNKNOWN || !a->root_optional || strncmp(hf, a->root, root) == 0) return r;
    // GPT-2's own files name the model's tensors without "transformer.".
    char full[160];
    if ((size_t)snprintf(full, sizeof full, "%s%s", a->root, hf) >= sizeof full)
        return MINT_HF_NAME_UNKNOWN;
    return map_name(a, full, out, cap, ops, layer, true);
}

mint_hf_name_result mint_gguf_name_to_hf(const mint_hf_arch *a, const char *gguf, char *out,
                                         size_t cap, unsigned *ops, int *layer) {
    *ops = 0;
    *layer = -1;
    return map_name(a, gguf, out, cap, ops, layer, false);
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

void mint_hf_transpose(const void *src, void *dst, uint64_t rows, uint64_t cols, size_t elem_size) {
    const unsigned char *s = src;
    unsigned char *d = dst;
    for (uint64_t r = 0; r < rows; r++)
        for (uint64_t c = 0; c < cols; c++)
            memcpy(d + (c * rows + r) * elem_size, s + (r * cols + c) * elem_size, elem_size);
}

bool mint_hf_add_scalar(const void *src, void *dst, uint32_t type, uint64_t n, float delta) {
    if (type == MINT_TYPE_F32) {
        const float *s = src;
        float *d = dst;
        for (uint64_t i = 0; i < n; i++) d[i] = s[i] + delta;
        return true;
    }
    if (type != MINT_TYPE_F16 && type != MINT_TYPE_BF16) return false;
    const uint16_t *s = src;
    uint16_t *d = dst;
    for (uint64_t i = 0; i < n; i++)
        d[i] = type == MINT_TYPE_F16 ? mint_f32_to_f16(mint_f16_to_f32(s[i]) + delta)
                                     : mint_f32_to_bf16(mint_bf16_to_f32(s[i]) + delta);
    return true;
}
