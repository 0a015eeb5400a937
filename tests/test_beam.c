// test_beam.c - beam search (runtime/decoding/beam.c): one beam is greedy search token for token;
// more beams find a continuation at least as likely as greedy's on stories260K's reference
// prompts; bad parameters are clear errors.
#include "helpers/helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static mint_ctx *ctx_of(mint_model *m, int n_seq) {
    mint_ctx_params p = mint_ctx_default_params();
    p.n_threads = 2;
    p.n_ctx = 256;
    p.n_seq_max = n_seq;
    mint_ctx *c;
    mint_err err;
    cr_assert_eq(mint_ctx_create(m, &p, &c, &err), MINT_OK, "%s", err.msg);
    return c;
}

static int beam(mint_model *m, int n_beams, float alpha, const int32_t *prompt, int n_prompt, int n,
                int32_t *out, double *lp) {
    mint_ctx *c = ctx_of(m, n_beams);
    mint_beam_params p = mint_beam_default_params();
    p.n_beams = n_beams;
    p.length_penalty = alpha;
    p.max_tokens = n;
    int32_t n_out;
    mint_err err;
    cr_assert_eq(mint_beam_search(c, prompt, n_prompt, &p, out, n, &n_out, lp, &err), MINT_OK, "%s",
                 err.msg);
    mint_ctx_free(c);
    return n_out;
}

Test(beam, one_beam_is_greedy, .timeout = MT_HANG(60)) {
    mint_model *m = mt_synth_model("small", "Q8_0");
    const int32_t prompt[] = {1, 40, 41, 42, 300, 17};
    int32_t g[40], b[40];
    double lg, lb;
    int ng = mt_greedy(m, 2, prompt, 6, 40, g, &lg);
    int nb = beam(m, 1, 1.0f, prompt, 6, 40, b, &lb);
    cr_assert_eq(nb, ng);
    for (int i = 0; i < ng; i++) cr_assert_eq(b[i], g[i], "token %d", i);
    cr_assert_float_eq(lb, lg, 1e-9 * fabs(lg), "log-probability %g vs %g", lb, lg);
    mint_model_close(m);
}

// Tokens of a text prompt (BOS first).
static int tok(mint_model *m, const char *text, int32_t *ids, int cap) {
    size_t n;
    mint_err err;
    cr_assert_eq(mint_tokenize(m, text, strlen(text), true, false, ids, (size_t)cap, &n, &err),
                 MINT_OK, "%s", err.msg);
    return (int)n;
}

Test(beam, more_beams_are_at_least_as_likely_as_greedy_on_stories, .timeout = MT_HANG(120)) {
    // stories260K's reference prompts (reference/prompts_stories.json); 24 tokens, ranked by total
    // log-probability (length penalty 0; the model rarely emits EOS this early).
    static const char *const prompts[] = {"Once upon a time", "The little dog", "Lily wanted to",
                                          "One day, a",       "Tom and Sue",    ""};
    json_object *ref = mt_json_data("reference/prompts_stories.json");
    cr_assert_eq(json_object_array_length(ref), 6);
    for (size_t i = 0; i < 6; i++)
        cr_assert_str_eq(json_object_get_string(mt_jget(mt_jidx(ref, i), "text")), prompts[i]);
    json_object_put(ref);
    mint_model *m;
    mint_err err;
    cr_assert_eq(mint_model_open(mt_data_path("stories260K.gguf"), NULL, &m, &err), MINT_OK);
    for (int i = 0; i < 6; i++) {
        int32_t prompt[64], g[24], b[24];
        const int n = tok(m, prompts[i], prompt, 64);
        double lg, lb1, lb4;
        int ng = mt_greedy(m, 2, prompt, n, 24, g, &lg);
        int n1 = beam(m, 1, 0.0f, prompt, n, 24, b, &lb1);
        cr_assert_eq(n1, ng, "'%s'", prompts[i]);
        for (int k = 0; k < ng; k++)
            cr_assert_eq(b[k], g[k], "'%s': beams 1, token %d", prompts[i], k);
        int n4 = beam(m, 4, 0.0f, prompt, n, 24, b, &lb4);
        cr_log_info("'%s': greedy log p %.4f (%d tokens), 4 beams %.4f (%d tokens)", prompts[i], lg,
                    ng, lb4, n4);
        if (n4 == ng) cr_assert_geq(lb4, lg - 1e-9, "'%s': %g < greedy %g", prompts[i], lb4, lg);
    }
    mint_model_close(m);
}

Test(beam, bad_parameters_are_errors) {
    mint_model *m = mt_synth_model("small", "F32");
    mint_ctx *c = ctx_of(m, 2);
    mint_beam_params p = mint_beam_default_params();
    p.n_beams = 3;
    const int32_t prompt[] = {1, 5};
    int32_t out[8], n;
    double lp;
    mint_err err;
    cr_assert_eq(mint_beam_search(c, prompt, 2, &p, out, 8, &n, &lp, &err), MINT_E_ARG);
    cr_assert(strstr(err.msg, "3 beams") && strstr(err.msg, "has 2"), "%s", err.msg);
    p.n_beams = 2;
    p.max_tokens = 1000;
    cr_assert_eq(mint_beam_search(c, prompt, 2, &p, out, 8, &n, &lp, &err), MINT_E_LIMIT);
    mint_ctx_free(c);
    mint_model_close(m);
}
