// test_attention.c - the three attention algorithms end to end: on F32 models with grouped-query
// (GQA) and multi-head (MHA) attention, contexts up to 2048, a prompt as one batch and tokens one
// at a time, naive, row-wise and flash give logits within 1e-6 of each other (relative to the
// largest logit) and the same greedy tokens; each is batch-invariant bit for bit. The largest
// differences are logged (docs/see-inside-a-run.md's table quotes them).
#include "helpers/helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const mint_attention algos[3] = {MINT_ATTENTION_NAIVE, MINT_ATTENTION_ROWWISE,
                                        MINT_ATTENTION_FLASH};

typedef struct run {
    float *batch_last; // logits of the last prompt token, prompt as one batch (n_batch = n)
    float *tok_last;   // the same, prompt token by token
    int32_t greedy[16];
} run;

// Evaluates n tokens with an algorithm: once as one batch, once one token at a time (the last
// 64 positions; the rest as a batch), then 16 greedy steps.
static run run_algo(mint_model *m, mint_attention a, const int32_t *ids, int n, int n_vocab) {
    run r = {malloc(sizeof(float) * n_vocab), malloc(sizeof(float) * n_vocab), {0}};
    mint_err err;
    for (int mode = 0; mode < 2; mode++) {
        mint_ctx_params p = mint_ctx_default_params();
        p.n_threads = 2;
        p.n_ctx = n + 16;
        p.n_batch = n;
        p.attention = a;
        mint_ctx *c;
        cr_assert_eq(mint_ctx_create(m, &p, &c, &err), MINT_OK, "%s", err.msg);
        if (mode == 0) {
            cr_assert_eq(mint_eval(c, ids, n, 0, false, &err), MINT_OK, "%s", err.msg);
            memcpy(r.batch_last, mint_get_logits(c, -1), sizeof(float) * n_vocab);
            for (int s = 0; s < 16; s++) {
                const float *l = mint_get_logits(c, -1);
                int32_t best = 0;
                for (int32_t i = 1; i < n_vocab; i++) best = l[i] > l[best] ? i : best;
                r.greedy[s] = best;
                cr_assert_eq(mint_eval(c, &best, 1, n + s, false, &err), MINT_OK, "%s", err.msg);
            }
        } else {
            cr_assert_eq(mint_eval(c, ids, n - 64, 0, false, &err), MINT_OK, "%s", err.msg);
            for (int i = n - 64; i < n; i++)
                cr_assert_eq(mint_eval(c, ids + i, 1, i, false, &err), MINT_OK, "%s", err.msg);
            memcpy(r.tok_last, mint_get_logits(c, -1), sizeof(float) * n_vocab);
        }
        mint_ctx_free(c);
    }
    return r;
}

static double rel_diff(const float *a, const float *b, int n) {
    double d = 0, m = 0;
    for (int i = 0; i < n; i++) {
        const double e = fabs((double)a[i] - b[i]);
        if (e > d) d = e;
        if (fabs((double)b[i]) > m) m = fabs((double)b[i]);
    }
    return d / m;
}

static void check(mint_model *m, const char *what, int n) {
    mint_model_desc d;
    mint_model_describe(m, &d);
    int32_t *ids = malloc(sizeof *ids * (size_t)n);
    for (int i = 0; i < n; i++) ids[i] = i == 0 ? 1 : 3 + (i * 131 + i / 7) % (d.n_vocab - 3);
    run r[3];
    for (int a = 0; a < 3; a++) {
        r[a] = run_algo(m, algos[a], ids, n, d.n_vocab);
        cr_assert_eq(memcmp(r[a].batch_last, r[a].tok_last, sizeof(float) * d.n_vocab), 0,
                     "%s, %s: batch and token by token differ", what,
                     mint_attention_name(algos[a]));
    }
    double worst = 0;
    for (int a = 1; a < 3; a++) {
        const double e = rel_diff(r[a].batch_last, r[0].batch_last, d.n_vocab);
        if (e > worst) worst = e;
        for (int s = 0; s < 16; s++)
            cr_assert_eq(r[a].greedy[s], r[0].greedy[s], "%s, %s: greedy token %d", what,
                         mint_attention_name(algos[a]), s);
    }
    cr_log_info("%s, %d positions: naive / rowwise / flash logits within %.3g of the largest "
                "(rowwise vs naive %.3g, flash vs naive %.3g)",
                what, n, worst, rel_diff(r[1].batch_last, r[0].batch_last, d.n_vocab),
                rel_diff(r[2].batch_last, r[0].batch_last, d.n_vocab));
    cr_assert_leq(worst, 1e-6, "%s: %.3g", what, worst);
    for (int a = 0; a < 3; a++) free(r[a].batch_last), free(r[a].tok_last);
    free(ids);
}

Test(attention, algorithms_agree_on_synthetic_gqa, .timeout = MT_HANG(120)) {
    mint_model *m = mt_synth_model("small", "F32");
    check(m, "synthetic small (GQA 4/2)", 496);
    mint_model_close(m);
}

Test(attention, algorithms_agree_on_synthetic_mha, .timeout = MT_HANG(120)) {
    mint_model *m = mt_synth_model("mha", "F32");
    check(m, "synthetic mha (MHA 4/4)", 2032);
    mint_model_close(m);
}

Test(attention, algorithms_agree_on_stories260K, .timeout = MT_HANG(120)) {
    mint_model *m;
    mint_err err;
    cr_assert_eq(mint_model_open(mt_data_path("stories260K.gguf"), NULL, &m, &err), MINT_OK);
    check(m, "stories260K (GQA 8/4)", 2032);
    mint_model_close(m);
}

Test(attention, algorithms_agree_on_llama2_tiny_random, .timeout = MT_HANG(120)) {
    mint_model *m;
    mint_err err;
    cr_assert_eq(mint_model_open(mt_data_path("llama-2-tiny-random.gguf"), NULL, &m, &err),
                 MINT_OK);
    check(m, "llama-2-tiny-random (MHA 2/2, F16 weights)", 2032);
    mint_model_close(m);
}
