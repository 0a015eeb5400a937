// mix_tinyllama.h - TinyLlama-1.1B's tensor list for the mix tests (tests/test_mix.c,
// tests/test_mix_lowbit.c): shapes no fixture file has, planned by runtime/filetools/mix.c and
// read back by name. Static inline: each test file takes what it uses.
#ifndef MINT_TESTS_MIX_TINYLLAMA_H
#define MINT_TESTS_MIX_TINYLLAMA_H

#include "quant/types.h"
#include "runtime/filetools/mix.h"

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

// TinyLlama-1.1B: 22 layers, n_embd 2048, n_ff 5632, 32 heads, 4 KV heads (n_gqa 8), vocab 32000

#define TL_LAYERS 22
#define TL_N      (3 + 9 * TL_LAYERS)

typedef struct tinyllama {
    mint_mix_tensor t[TL_N]; // in the order convert_hf_to_gguf writes them
    char names[TL_N][48];    // storage for the names
    mint_mix_model model;    // its hyper-parameters
} tinyllama;

static inline void tl_add(tinyllama *m, size_t *n, const char *name, int64_t ne0, int64_t ne1) {
    snprintf(m->names[*n], sizeof m->names[*n], "%s", name);
    m->t[*n] = (mint_mix_tensor){m->names[*n], MINT_TYPE_F16, {ne0, ne1, 1, 1}};
    if (ne1 == 1) m->t[*n].type = MINT_TYPE_F32;
    (*n)++;
}

static inline void tinyllama_init(tinyllama *m) {
    size_t n = 0;
    char name[48];
    tl_add(m, &n, "token_embd.weight", 2048, 32000);
    for (int l = 0; l < TL_LAYERS; l++) {
        static const struct {
            const char *suffix;
            int64_t ne0, ne1;
        } per_layer[] = {
            {"attn_norm", 2048, 1},      {"ffn_down", 5632, 2048}, {"ffn_gate", 2048, 5632},
            {"ffn_up", 2048, 5632},      {"ffn_norm", 2048, 1},    {"attn_k", 2048, 256},
            {"attn_output", 2048, 2048}, {"attn_q", 2048, 2048},   {"attn_v", 2048, 256},
        };
        for (size_t j = 0; j < sizeof per_layer / sizeof per_layer[0]; j++) {
            snprintf(name, sizeof name, "blk.%d.%s.weight", l, per_layer[j].suffix);
            tl_add(m, &n, name, per_layer[j].ne0, per_layer[j].ne1);
        }
    }
    tl_add(m, &n, "output_norm.weight", 2048, 1);
    tl_add(m, &n, "output.weight", 2048, 32000);
    cr_assert_eq(n, TL_N);
    m->model = (mint_mix_model){.n_layer = TL_LAYERS, .n_head = 32, .n_head_kv = 4};
}

static inline void tl_plan(const tinyllama *m, const mint_mix_params *p, mint_mix_choice *out) {
    mint_err err;
    cr_assert_eq(mint_mix_plan(&m->model, m->t, TL_N, p, out, NULL, &err), MINT_OK, "%s", err.msg);
}

static inline const char *tl_type(const tinyllama *m, const mint_mix_choice *out,
                                  const char *name) {
    for (size_t i = 0; i < TL_N; i++)
        if (strcmp(m->t[i].name, name) == 0) return mint_type_name(out[i].type);
    cr_assert_fail("no tensor %s", name);
    return NULL;
}

static inline const char *tl_layer_type(const tinyllama *m, const mint_mix_choice *out, int layer,
                                        const char *what) {
    char name[48];
    snprintf(name, sizeof name, "blk.%d.%s.weight", layer, what);
    return tl_type(m, out, name);
}

// The layers use_more_bits(i, 22) picks: i < 22/8 = 2, i >= 7*22/8 = 19, or (i - 2) % 3 == 2.
static inline bool tl_more_bits(int i) {
    static const int layers[] = {0, 1, 4, 7, 10, 13, 16, 19, 20, 21};
    for (size_t k = 0; k < sizeof layers / sizeof layers[0]; k++)
        if (layers[k] == i) return true;
    return false;
}

static inline void tl_count(const mint_mix_choice *out, int counts[MINT_TYPE_COUNT]) {
    memset(counts, 0, MINT_TYPE_COUNT * sizeof counts[0]);
    for (size_t i = 0; i < TL_N; i++) counts[out[i].type]++;
}

#endif // MINT_TESTS_MIX_TINYLLAMA_H
