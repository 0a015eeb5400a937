// test_golden.c - the exact bits of every fixture model's logits, per kernel level, recorded
// before a refactoring and checked after it: code that moves must not change a single bit.
//
// For each model of MINT_TEST_DATA (stories260K and the 23 files of quant/) and each kernel
// level this CPU has, a fixed program runs: a 12-token prompt evaluated as one batch with every
// row's logits kept, then 6 greedy steps; the XXH3-64 of all those logits (12 + 6 rows) is the
// figure. It runs three times: F32 KV cache, F16 KV cache (both with the default attention),
// and F32 with the naive attention.
// MINT_GOLDEN_PRINT=1 prints the table instead of checking it (to record it after a change that
// is meant to change the arithmetic; say why in the commit).
#include "helpers/golden_table.h"
#include "helpers/helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const models[] = {
    "stories260K.gguf",
    "quant/stories260K-f16.gguf",
    "quant/stories260K-q4_0.gguf",
    "quant/stories260K-q4_1.gguf",
    "quant/stories260K-q5_0.gguf",
    "quant/stories260K-q5_1.gguf",
    "quant/stories260K-q8_0.gguf",
    "quant/tiny256-bf16.gguf",
    "quant/tiny256-f16.gguf",
    "quant/tiny256-f32.gguf",
    "quant/tiny256-q2_k-pure.gguf",
    "quant/tiny256-q2_k.gguf",
    "quant/tiny256-q3_k-pure.gguf",
    "quant/tiny256-q3_k_m.gguf",
    "quant/tiny256-q4_0.gguf",
    "quant/tiny256-q4_1.gguf",
    "quant/tiny256-q4_k-pure.gguf",
    "quant/tiny256-q4_k_m.gguf",
    "quant/tiny256-q5_0.gguf",
    "quant/tiny256-q5_1.gguf",
    "quant/tiny256-q5_k-pure.gguf",
    "quant/tiny256-q5_k_m.gguf",
    "quant/tiny256-q6_k.gguf",
    "quant/tiny256-q8_0.gguf",
};
enum { N_MODELS = sizeof models / sizeof models[0] };

typedef struct mode {
    const char *name;
    mint_kv_type kv;
    mint_attention attention;
} mode;
static const mode modes[] = {{"f32", MINT_KV_F32, MINT_ATTENTION_AUTO},
                             {"f16", MINT_KV_F16, MINT_ATTENTION_AUTO},
                             {"f32-naive", MINT_KV_F32, MINT_ATTENTION_NAIVE}};

static int argmax(const float *x, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

static uint64_t run_program(mint_model *m, const mode *md) {
    mint_model_desc d;
    mint_model_describe(m, &d);
    mint_ctx_params p = mint_ctx_default_params();
    p.n_threads = 2;
    p.n_ctx = 64;
    p.kv_type = md->kv;
    p.attention = md->attention;
    mint_ctx *c;
    mint_err err;
    cr_assert_eq(mint_ctx_create(m, &p, &c, &err), MINT_OK, "%s", err.msg);
    enum { N_PROMPT = 12, N_STEPS = 6 };
    const int32_t prompt[N_PROMPT] = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315};
    uint64_t row_hash[N_PROMPT + N_STEPS];
    const size_t row_bytes = (size_t)d.n_vocab * sizeof(float);
    cr_assert_eq(mint_eval(c, prompt, N_PROMPT, 0, true, &err), MINT_OK, "%s", err.msg);
    for (int i = 0; i < N_PROMPT; i++) row_hash[i] = mint_hash64(mint_get_logits(c, i), row_bytes);
    for (int s = 0; s < N_STEPS; s++) {
        int32_t t = argmax(mint_get_logits(c, -1), d.n_vocab);
        cr_assert_eq(mint_eval(c, &t, 1, N_PROMPT + s, false, &err), MINT_OK, "%s", err.msg);
        row_hash[N_PROMPT + s] = mint_hash64(mint_get_logits(c, -1), row_bytes);
    }
    mint_ctx_free(c);
    return mint_hash64(row_hash, sizeof row_hash);
}

static const golden_entry *find(const char *model, const char *isa, const char *md) {
    for (size_t i = 0; i < golden_table_len; i++)
        if (!strcmp(golden_table[i].model, model) && !strcmp(golden_table[i].isa, isa) &&
            !strcmp(golden_table[i].mode, md))
            return &golden_table[i];
    return NULL;
}

// One test per kernel level: MINT_ISA must be set before the first kernel lookup, and Criterion
// runs each test in a fresh process.
static void check_level(const char *isa) {
    setenv("MINT_ISA", isa, 1);
    if (strcmp(mint_isa_name(), isa) != 0) cr_skip_test("this CPU has no %s kernels", isa);
    const bool print = getenv("MINT_GOLDEN_PRINT") != NULL;
    if (!print && !find(models[0], isa, "f32")) cr_skip_test("no hashes recorded for %s", isa);
    int checked = 0;
    for (int i = 0; i < N_MODELS; i++) {
        mint_model *m;
        mint_err err;
        cr_assert_eq(mint_model_open(mt_data_path(models[i]), NULL, &m, &err), MINT_OK, "%s",
                     err.msg);
        for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++) {
            uint64_t h = run_program(m, &modes[k]);
            if (print) {
                fprintf(stderr, "    {\"%s\", \"%s\", \"%s\", 0x%016llxull},\n", models[i], isa,
                        modes[k].name, (unsigned long long)h);
                continue;
            }
            const golden_entry *g = find(models[i], isa, modes[k].name);
            cr_assert_not_null(g, "no recorded hash for %s at %s (%s)", models[i], isa,
                               modes[k].name);
            cr_expect_eq(h, g->hash, "%s at %s (%s): logits hash %016llx, recorded %016llx",
                         models[i], isa, modes[k].name, (unsigned long long)h,
                         (unsigned long long)g->hash);
            checked++;
        }
        mint_model_close(m);
    }
    cr_log_info("%s: %d logit hashes checked", isa, checked);
}

Test(golden, ref, .timeout = MT_HANG(300)) {
    check_level("ref");
}
Test(golden, avx2, .timeout = MT_HANG(300)) {
    check_level("avx2");
}
Test(golden, avx512, .timeout = MT_HANG(300)) {
    check_level("avx512");
}
Test(golden, avx512vnni, .timeout = MT_HANG(300)) {
    check_level("avx512vnni");
}
Test(golden, neon, .timeout = MT_HANG(300)) {
    check_level("neon");
}
Test(golden, neondot, .timeout = MT_HANG(300)) {
    check_level("neondot");
}
