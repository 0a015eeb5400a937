// test_mix_iq2.c - llama-quantize's mix rules for the 2-bit file types IQ2_XXS, IQ2_XS, IQ2_S
// and IQ2_M (runtime/filetools/mix.c's low-bit branch) on TinyLlama-1.1B's shapes, as
// tests/test_mix.c checks the other file types (kept apart: that file is at its size limit).
// Byte identity with llama-quantize on whole files: tests/test_quantize_imatrix.c.
#include "runtime/filetools/mix.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

// TinyLlama-1.1B: 22 layers, n_embd 2048, n_ff 5632, 32 heads, 4 KV heads (n_gqa 8), vocab 32000,
// its tensors in convert_hf_to_gguf's order (test_mix.c's tinyllama).
#define TL_LAYERS 22
#define TL_N      (3 + 9 * TL_LAYERS)

typedef struct tinyllama {
    mint_mix_tensor t[TL_N]; // the tensors
    char names[TL_N][48];    // storage for the names
    mint_mix_model model;    // its hyper-parameters
} tinyllama;

static void tl_add(tinyllama *m, size_t *n, const char *name, int64_t ne0, int64_t ne1) {
    snprintf(m->names[*n], sizeof m->names[*n], "%s", name);
    m->t[*n] =
        (mint_mix_tensor){m->names[*n], ne1 == 1 ? MINT_TYPE_F32 : MINT_TYPE_F16, {ne0, ne1, 1, 1}};
    (*n)++;
}

static void tinyllama_init(tinyllama *m) {
    static const struct {
        const char *suffix;
        int64_t ne0, ne1;
    } per_layer[] = {
        {"attn_norm", 2048, 1},      {"ffn_down", 5632, 2048}, {"ffn_gate", 2048, 5632},
        {"ffn_up", 2048, 5632},      {"ffn_norm", 2048, 1},    {"attn_k", 2048, 256},
        {"attn_output", 2048, 2048}, {"attn_q", 2048, 2048},   {"attn_v", 2048, 256},
    };
    size_t n = 0;
    char name[48];
    tl_add(m, &n, "token_embd.weight", 2048, 32000);
    for (int l = 0; l < TL_LAYERS; l++)
        for (size_t j = 0; j < sizeof per_layer / sizeof per_layer[0]; j++) {
            snprintf(name, sizeof name, "blk.%d.%s.weight", l, per_layer[j].suffix);
            tl_add(m, &n, name, per_layer[j].ne0, per_layer[j].ne1);
        }
    tl_add(m, &n, "output_norm.weight", 2048, 1);
    tl_add(m, &n, "output.weight", 2048, 32000);
    cr_assert_eq(n, TL_N);
    m->model = (mint_mix_model){.n_layer = TL_LAYERS, .n_head = 32, .n_head_kv = 4};
}

static void tl_plan(const tinyllama *m, const mint_mix_params *p, mint_mix_choice *out) {
    mint_err err;
    cr_assert_eq(mint_mix_plan(&m->model, m->t, TL_N, p, out, NULL, &err), MINT_OK, "%s", err.msg);
}

static const char *tl_type(const tinyllama *m, const mint_mix_choice *out, const char *name) {
    for (size_t i = 0; i < TL_N; i++)
        if (strcmp(m->t[i].name, name) == 0) return mint_type_name(out[i].type);
    cr_assert_fail("no tensor %s", name);
    return NULL;
}

static const char *tl_layer_type(const tinyllama *m, const mint_mix_choice *out, int layer,
                                 const char *what) {
    char name[48];
    snprintf(name, sizeof name, "blk.%d.%s.weight", layer, what);
    return tl_type(m, out, name);
}

// IQ2_XXS, IQ2_XS, IQ2_S, IQ2_M (llama.cpp's low-bit branch), with an importance matrix: n_gqa
// = 8 >= 4, so attn_v is Q4_K; ffn_down is the "more" type (Q2_K, or IQ3_S for IQ2_S / IQ2_M)
// for the first 22/8 = 2 counted; attn_output IQ3_S for IQ2_S / IQ2_M, else the base; output
// Q5_K; token_embd Q2_K or IQ3_S; the rest the base (IQ2_S's is IQ2_XS, IQ2_M's IQ2_S). Without
// one the plan is refused: IQ2_XXS / IQ2_XS / IQ2_S tensors need it (llama.cpp's
// tensor_requires_imatrix).
Test(mix_tinyllama, iq2_mixes) {
    static const struct {
        mint_ftype f;
        const char *base, *more;
    } ft[] = {{MINT_FTYPE_IQ2_XXS, "IQ2_XXS", "Q2_K"},
              {MINT_FTYPE_IQ2_XS, "IQ2_XS", "Q2_K"},
              {MINT_FTYPE_IQ2_S, "IQ2_XS", "IQ3_S"},
              {MINT_FTYPE_IQ2_M, "IQ2_S", "IQ3_S"}};
    for (int f = 0; f < 4; f++) {
        tinyllama m;
        tinyllama_init(&m);
        mint_mix_params p = mint_mix_default_params(ft[f].f);
        mint_mix_choice out[TL_N];
        mint_err err;
        cr_expect_eq(mint_mix_plan(&m.model, m.t, TL_N, &p, out, NULL, &err), MINT_E_ARG);
        cr_expect(strstr(err.msg, "requires an imatrix"), "%s", err.msg);
        p.has_imatrix = true;
        tl_plan(&m, &p, out);
        const char *base = ft[f].base, *attn_out = f >= 2 ? "IQ3_S" : base;
        for (int l = 0; l < TL_LAYERS; l++) {
            cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_v"), "Q4_K", "%s layer %d", base, l);
            cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_down"), l < 2 ? ft[f].more : base,
                             "%s layer %d", base, l);
            cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_output"), attn_out);
            cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_k"), base);
            cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_q"), base);
            cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_up"), base);
            cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_gate"), base);
        }
        cr_expect_str_eq(tl_type(&m, out, "output.weight"), "Q5_K");
        cr_expect_str_eq(tl_type(&m, out, "token_embd.weight"), ft[f].more);
        for (size_t i = 0; i < TL_N; i++) cr_expect_not(out[i].fallback, "%s", m.t[i].name);
    }
}
