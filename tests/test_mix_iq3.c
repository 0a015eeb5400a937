// test_mix_iq3.c - the per-tensor type choice of runtime/filetools/mix.c for llama-quantize's IQ3
// file types (IQ3_XXS, IQ3_S, IQ3_M, IQ3_XS) on TinyLlama-1.1B's shapes, against llama.cpp's rules
// as each test states them (the tiny files' choices are held to llama-quantize's own output by
// test_quantize_arch.c and test_quantize_imatrix.c). Kept beside test_mix.c, whose TinyLlama
// model it rebuilds, to keep both under 800 lines.
#include "helpers/helpers.h"
#include "runtime/filetools/mix.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

// TinyLlama-1.1B: 22 layers, n_embd 2048, n_ff 5632, 32 heads, 4 KV heads (n_gqa 8), vocab 32000
// (test_mix.c's model, in convert_hf_to_gguf's order).

#define TL_LAYERS 22
#define TL_N      (3 + 9 * TL_LAYERS)

typedef struct tinyllama {
    mint_mix_tensor t[TL_N]; // in the order convert_hf_to_gguf writes them
    char names[TL_N][48];    // storage for the names
    mint_mix_model model;    // its hyper-parameters
} tinyllama;

static void tl_add(tinyllama *m, size_t *n, const char *name, int64_t ne0, int64_t ne1) {
    snprintf(m->names[*n], sizeof m->names[*n], "%s", name);
    m->t[*n] = (mint_mix_tensor){m->names[*n], MINT_TYPE_F16, {ne0, ne1, 1, 1}};
    if (ne1 == 1) m->t[*n].type = MINT_TYPE_F32;
    (*n)++;
}

static void tinyllama_init(tinyllama *m) {
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

// The IQ3 file types (llama.cpp's rules for them) on TinyLlama: n_gqa = 8 >= 4, so attn_v is Q4_K
// in every layer of each; output.weight Q6_K (IQ3_XXS: Q5_K). IQ3_S: the rest IQ3_S. IQ3_M:
// ffn_down Q4_K for layer < 22/8 = 2, attn_output Q4_K. IQ3_XS: attn_q and attn_k IQ3_XXS, and
// ffn_gate / ffn_up in layers 2 .. 18 (n/8 <= layer < 7n/8 = 19). IQ3_XXS: token_embd IQ3_S,
// attn_q / attn_k IQ2_S, attn_output IQ3_S, and without an importance matrix ffn_down Q4_K for
// layer < 2, else Q3_K (with one, the base type); llama-quantize makes IQ3_XXS and IQ3_XS only
// with an importance matrix, and so does the planner.
Test(mix_iq3, tinyllama_rules) {
    static const mint_ftype ft[] = {MINT_FTYPE_IQ3_S, MINT_FTYPE_IQ3_M, MINT_FTYPE_IQ3_XS,
                                    MINT_FTYPE_IQ3_XXS};
    for (int f = 0; f < 4; f++) {
        for (int imat = 0; imat < 2; imat++) {
            tinyllama m;
            tinyllama_init(&m);
            mint_mix_params p = mint_mix_default_params(ft[f]);
            p.has_imatrix = imat;
            mint_mix_choice out[TL_N];
            mint_err err;
            const char *name = mint_ftype_name(ft[f]);
            if (ft[f] == MINT_FTYPE_IQ3_XXS && !imat) {
                // refused without an importance (its IQ3_XXS and attn_q / attn_k IQ2_S tensors)
                const mint_status st = mint_mix_plan(&m.model, m.t, TL_N, &p, out, NULL, &err);
                cr_expect_eq(st, MINT_E_ARG, "%s: %s", name, err.msg);
                cr_expect(strstr(err.msg, "importance matrix"), "%s", err.msg);
                continue;
            } else if (ft[f] == MINT_FTYPE_IQ3_XS && !imat) {
                cr_expect_eq(mint_mix_plan(&m.model, m.t, TL_N, &p, out, NULL, &err), MINT_E_ARG);
                cr_expect(strstr(err.msg, "importance matrix") && strstr(err.msg, "IQ3_XXS"), "%s",
                          err.msg);
                continue;
            }
            cr_assert_eq(mint_mix_plan(&m.model, m.t, TL_N, &p, out, NULL, &err), MINT_OK, "%s: %s",
                         name, err.msg);
            const bool xxs = ft[f] == MINT_FTYPE_IQ3_XXS, xs = ft[f] == MINT_FTYPE_IQ3_XS;
            const bool mm = ft[f] == MINT_FTYPE_IQ3_M;
            const char *base = xxs ? "IQ3_XXS" : "IQ3_S";
            for (int l = 0; l < TL_LAYERS; l++) {
                const bool mid = l >= 2 && l < 19;
                cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_v"), "Q4_K", "%s %d", name, l);
                cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_down"), mm && l < 2 ? "Q4_K" : base,
                                 "%s %d", name, l);
                cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_output"),
                                 mm    ? "Q4_K"
                                 : xxs ? "IQ3_S"
                                       : base,
                                 "%s %d", name, l);
                cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_q"),
                                 xs    ? "IQ3_XXS"
                                 : xxs ? "IQ2_S"
                                       : base,
                                 "%s %d", name, l);
                cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_k"),
                                 xs    ? "IQ3_XXS"
                                 : xxs ? "IQ2_S"
                                       : base,
                                 "%s %d", name, l);
                cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_gate"),
                                 xs && mid ? "IQ3_XXS" : base, "%s %d", name, l);
                cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_up"), xs && mid ? "IQ3_XXS" : base,
                                 "%s %d", name, l);
            }
            cr_expect_str_eq(tl_type(&m, out, "output.weight"), xxs ? "Q5_K" : "Q6_K", "%s", name);
            cr_expect_str_eq(tl_type(&m, out, "token_embd.weight"), "IQ3_S", "%s", name);
            for (size_t i = 0; i < TL_N; i++) cr_expect_not(out[i].fallback, "%s", m.t[i].name);
        }
    }
    // IQ3_XXS's own ffn_down rule without an importance: Q4_K below n/8, then Q3_K (every
    // IQ3_XXS tensor overridden, so that nothing needs one).
    tinyllama m;
    tinyllama_init(&m);
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_IQ3_XXS);
    static const mint_mix_override ov[] = {
        {.pattern = "attn_[qk]|ffn_gate|ffn_up", .type = MINT_TYPE_Q4_K}};
    p.overrides = ov;
    p.n_overrides = 1;
    mint_mix_choice out[TL_N];
    mint_err err;
    cr_assert_eq(mint_mix_plan(&m.model, m.t, TL_N, &p, out, NULL, &err), MINT_OK, "%s", err.msg);
    for (int l = 0; l < TL_LAYERS; l++) {
        cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_down"), l < 2 ? "Q4_K" : "Q3_K", "%d", l);
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_v"), "Q4_K", "%d", l);
    }
}

// The names and numbers llama-quantize takes for them, their base types and general.file_type.
Test(mix_iq3, file_type_names) {
    static const struct {
        const char *name;
        mint_ftype ft;
        int base;
    } ok[] = {
        {"iq3_xxs", MINT_FTYPE_IQ3_XXS, MINT_TYPE_IQ3_XXS},
        {"23", MINT_FTYPE_IQ3_XXS, MINT_TYPE_IQ3_XXS},
        {"IQ3_S", MINT_FTYPE_IQ3_S, MINT_TYPE_IQ3_S},
        {"26", MINT_FTYPE_IQ3_S, MINT_TYPE_IQ3_S},
        {"IQ3_M", MINT_FTYPE_IQ3_M, MINT_TYPE_IQ3_S},
        {"27", MINT_FTYPE_IQ3_M, MINT_TYPE_IQ3_S},
        {"iq3_xs", MINT_FTYPE_IQ3_XS, MINT_TYPE_IQ3_S},
        {"22", MINT_FTYPE_IQ3_XS, MINT_TYPE_IQ3_S},
    };
    mint_err err;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        mint_ftype ft;
        cr_expect_eq(mint_ftype_from_name(ok[i].name, &ft, &err), MINT_OK, "%s", ok[i].name);
        cr_expect_eq(ft, ok[i].ft, "%s", ok[i].name);
        cr_expect_eq(mint_ftype_base_type(ft), ok[i].base, "%s", ok[i].name);
        cr_expect_eq(mint_ftype_file_type(ft), (uint32_t)ok[i].ft, "%s", ok[i].name);
    }
}
