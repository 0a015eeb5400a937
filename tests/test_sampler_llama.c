// test_sampler_llama.c - the sampler draws as llama.cpp's does: std::mt19937 and libstdc++'s
// uniform double (base/mt19937.h) against values a C++ program printed, and seeded generations
// on stories260K token for token equal to llama.cpp's (tests/reference/llama_sampled.json: 80
// cases, four prompts, four seeds, five sampler settings, made by llama-server with flash
// attention off and an f32 cache, whose logits are the ones mint computes; how in
// tests/reference/README.md).
#include "base/mt19937.h"
#include "helpers/helpers.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Test(sampler_llama, mt19937_and_its_uniform_double_are_the_standard_ones) {
    mint_mt19937 r;
    mint_mt_seed(&r, 5489); // std::mt19937's default seed
    uint32_t v = 0;
    for (int i = 0; i < 10000; i++) v = mint_mt_next(&r);
    cr_assert_eq(v, 4123659995u, "C++ [rand.predef]: the 10000th output of mt19937");
    // std::uniform_real_distribution<double>(0, 1) over std::mt19937(42) and (0), libstdc++
    // (g++ 12), printed with %.17g.
    static const double want42[] = {0.79654298428784598, 0.18343478789336848, 0.77969099761266125};
    mint_mt_seed(&r, 42);
    for (int i = 0; i < 3; i++) cr_assert_eq(mint_mt_uniform(&r), want42[i], "draw %d", i);
    static const double want0[] = {0.59284461651668263, 0.84426574425659828};
    mint_mt_seed(&r, 0);
    for (int i = 0; i < 2; i++) cr_assert_eq(mint_mt_uniform(&r), want0[i], "draw %d", i);
}

static double num(json_object *o, const char *k, double def) {
    json_object *v;
    return json_object_object_get_ex(o, k, &v) ? json_object_get_double(v) : def;
}

Test(sampler_llama, seeded_generations_equal_llama_cpp_token_for_token, .timeout = 300) {
    json_object *ref = mt_json_source("tests/reference/llama_sampled.json");
    mint_model *m;
    mint_err err;
    cr_assert_eq(mint_model_open(mt_data_path("stories260K.gguf"), NULL, &m, &err), MINT_OK, "%s",
                 err.msg);
    mint_model_desc d;
    mint_model_describe(m, &d);
    json_object *cases = mt_jget(ref, "cases");
    const size_t n_cases = json_object_array_length(cases);
    cr_assert_eq(n_cases, 80);
    int same = 0;
    for (size_t ci = 0; ci < n_cases; ci++) {
        json_object *c = mt_jidx(cases, ci), *sp = mt_jget(c, "sampler"),
                    *want = mt_jget(c, "tokens");
        const char *prompt = json_object_get_string(mt_jget(c, "prompt"));
        int32_t ids[64];
        size_t n = 0;
        cr_assert_eq(mint_tokenize(m, prompt, strlen(prompt), true, false, ids, 64, &n, &err),
                     MINT_OK);
        // llama-server's defaults where the case gives none (mint's defaults are the same).
        mint_sampler_params p = mint_sampler_default_params();
        p.temp = (float)num(sp, "temperature", 0.8);
        p.top_k = (int32_t)num(sp, "top_k", 40);
        p.top_p = (float)num(sp, "top_p", 0.95);
        p.min_p = (float)num(sp, "min_p", 0.05);
        p.seed = (uint64_t)json_object_get_int64(mt_jget(c, "seed"));
        mint_sampler *s;
        cr_assert_eq(mint_sampler_create(&p, d.n_vocab, &s, &err), MINT_OK);
        mint_gen_params gp = mint_gen_default_params();
        gp.max_tokens = 48;
        mint_gen *g;
        cr_assert_eq(mint_gen_create(m, s, &gp, &g, &err), MINT_OK);
        mint_ctx_params cp = mint_ctx_default_params();
        cp.n_threads = 1;
        cp.n_ctx = 128;
        mint_ctx *ctx;
        cr_assert_eq(mint_ctx_create(m, &cp, &ctx, &err), MINT_OK, "%s", err.msg);
        cr_assert_eq(mint_eval(ctx, ids, (int)n, 0, false, &err), MINT_OK, "%s", err.msg);
        int32_t got[64];
        int k = 0;
        for (;;) {
            mint_gen_token t;
            cr_assert_eq(mint_gen_step(g, mint_get_logits(ctx, -1), &t, &err), MINT_OK);
            if (t.finish == MINT_FINISH_EOS) break;
            got[k++] = t.token;
            if (t.finish != MINT_FINISH_NONE) break;
            cr_assert_eq(mint_eval(ctx, &t.token, 1, (int)n + k - 1, false, &err), MINT_OK);
        }
        bool eq = (size_t)k == json_object_array_length(want);
        for (int i = 0; eq && i < k; i++)
            eq = got[i] == json_object_get_int(mt_jidx(want, (size_t)i));
        same += eq;
        cr_expect(eq, "case %zu (%s, seed %lld, %s): mint's %d tokens differ from llama.cpp's", ci,
                  prompt, (long long)p.seed, json_object_to_json_string(sp), k);
        mint_ctx_free(ctx);
        mint_gen_free(g);
        mint_sampler_free(s);
    }
    cr_assert_eq(same, (int)n_cases);
    mint_model_close(m);
    json_object_put(ref);
}
