// test_mix_lowbit.c - the 1-bit file types' per-tensor plan (runtime/filetools/mix.c, llama.cpp's
// low-bit branch) on TinyLlama-1.1B's shapes (tests/helpers/mix_tinyllama.h); whole files are
// held to llama-quantize's bytes by tests/test_quantize_imatrix.c.
#include "helpers/helpers.h"
#include "helpers/mix_tinyllama.h"
#include "quant/types.h"
#include "runtime/filetools/mix.h"

#include <criterion/criterion.h>
#include <string.h>

// IQ1_S and IQ1_M (llama.cpp's low-bit branch), with an importance matrix: n_gqa = 8 >= 4, so
// attn_v is Q4_K; ffn_down Q2_K for the first 22/8 = 2 counted; attn_output IQ2_XXS; output
// Q5_K; token_embd Q2_K; the rest the base type. Without one the plan is refused (IQ1_S and
// IQ1_M tensors need it: llama.cpp's tensor_requires_imatrix).
Test(mix_tinyllama, iq1_mixes) {
    static const mint_ftype ft[] = {MINT_FTYPE_IQ1_S, MINT_FTYPE_IQ1_M};
    for (int f = 0; f < 2; f++) {
        tinyllama m;
        tinyllama_init(&m);
        mint_mix_params p = mint_mix_default_params(ft[f]);
        mint_mix_choice out[TL_N];
        mint_err err;
        cr_expect_eq(mint_mix_plan(&m.model, m.t, TL_N, &p, out, NULL, &err), MINT_E_ARG);
        cr_expect(strstr(err.msg, "requires an imatrix"), "%s", err.msg);
        p.has_imatrix = true;
        tl_plan(&m, &p, out);
        const char *base = f ? "IQ1_M" : "IQ1_S";
        for (int l = 0; l < TL_LAYERS; l++) {
            cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_v"), "Q4_K", "%s layer %d", base, l);
            cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_down"), l < 2 ? "Q2_K" : base,
                             "%s layer %d", base, l);
            cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_output"), "IQ2_XXS");
            cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_k"), base);
            cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_q"), base);
            cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_up"), base);
            cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_gate"), base);
        }
        cr_expect_str_eq(tl_type(&m, out, "output.weight"), "Q5_K");
        cr_expect_str_eq(tl_type(&m, out, "token_embd.weight"), "Q2_K");
        int counts[MINT_TYPE_COUNT];
        tl_count(out, counts);
        cr_expect_eq(counts[ft[f] == MINT_FTYPE_IQ1_S ? MINT_TYPE_IQ1_S : MINT_TYPE_IQ1_M],
                     22 * 5 - 2, "%s", base);
        for (size_t i = 0; i < TL_N; i++) cr_expect_not(out[i].fallback, "%s", m.t[i].name);
    }
}
