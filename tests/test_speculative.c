// test_speculative.c - speculative decoding (runtime/decoding/speculative.c): with a greedy
// sampler the output is the target's greedy output token for token, whatever drafts it (a
// quantized file of the same model, a random model, prompt lookup); sampled, the first token
// follows the target's distribution (a chi-square test over seeded draws); vocabularies that
// differ and repetition penalties are refused.
#include "helpers/helpers.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static mint_ctx *ctx_of(mint_model *m) {
    mint_ctx_params p = mint_ctx_default_params();
    p.n_threads = 1; // these models are tiny: a second thread costs more than it brings
    p.n_ctx = 256;
    p.n_batch = 64;
    mint_ctx *c;
    mint_err err;
    cr_assert_eq(mint_ctx_create(m, &p, &c, &err), MINT_OK, "%s", err.msg);
    return c;
}

static mint_model *open_data(const char *rel) {
    mint_model *m;
    mint_err err;
    cr_assert_eq(mint_model_open(mt_data_path(rel), NULL, &m, &err), MINT_OK, "%s", err.msg);
    return m;
}

typedef struct sink {
    int32_t tok[512];
    int n;
} sink;

static bool collect(void *user, int32_t t) {
    sink *s = user;
    s->tok[s->n++] = t;
    return true;
}

// Speculative greedy continuation; draft NULL = prompt lookup.
static int spec_greedy(mint_model *target, mint_model *draft, const int32_t *prompt, int n_prompt,
                       int n, int k, int32_t *out, mint_spec_stats *st) {
    mint_ctx *t = ctx_of(target), *d = draft ? ctx_of(draft) : NULL;
    mint_model_desc desc;
    mint_model_describe(target, &desc);
    mint_sampler_params sp = mint_sampler_default_params();
    sp.temp = 0;
    mint_sampler *s;
    mint_err err;
    cr_assert_eq(mint_sampler_create(&sp, desc.n_vocab, &s, &err), MINT_OK);
    sink out_tokens = {.n = 0};
    mint_spec_params p = mint_spec_default_params();
    p.draft = d;
    p.n_draft = k;
    p.max_tokens = n;
    p.on_token = collect;
    p.user = &out_tokens;
    cr_assert_eq(mint_speculative(t, s, prompt, n_prompt, &p, st, &err), MINT_OK, "%s", err.msg);
    memcpy(out, out_tokens.tok, (size_t)out_tokens.n * sizeof *out);
    cr_assert_eq((uint64_t)out_tokens.n, st->generated);
    mint_sampler_free(s);
    mint_ctx_free(t);
    mint_ctx_free(d);
    return out_tokens.n;
}

static void expect_greedy_equal(mint_model *target, mint_model *draft, const int32_t *prompt,
                                int n_prompt, int n, const char *what) {
    int32_t want[512], got[512];
    const int nw = mt_greedy(target, 1, prompt, n_prompt, n, want, NULL);
    for (int k = 1; k <= 8; k *= 2) {
        mint_spec_stats st;
        const int ng = spec_greedy(target, draft, prompt, n_prompt, n, k, got, &st);
        cr_assert_eq(ng, nw, "%s, K=%d: %d tokens vs greedy's %d", what, k, ng, nw);
        for (int i = 0; i < nw; i++)
            cr_assert_eq(got[i], want[i], "%s, K=%d: token %d", what, k, i);
        cr_log_info("%s, K=%d: %d tokens in %" PRIu64 " target passes (%.2f per pass), acceptance "
                    "%.1f%% of %" PRIu64 " drafted",
                    what, k, ng, st.target_passes, (double)st.generated / (double)st.target_passes,
                    st.drafted ? 100.0 * (double)st.accepted / (double)st.drafted : 0.0,
                    st.drafted);
    }
}

Test(speculative, greedy_equals_target_on_synthetic_models, .timeout = MT_HANG(120)) {
    // No shared data: the small model's F32 file, drafted by its own Q4_0 file and by lookup.
    mint_model *t = mt_synth_model("small", "F32"), *d = mt_synth_model("small", "Q4_0");
    const int32_t prompt[] = {1, 40, 41, 42, 300, 17, 40, 41, 42};
    expect_greedy_equal(t, d, prompt, 9, 60, "small F32 <- Q4_0");
    expect_greedy_equal(t, NULL, prompt, 9, 60, "small F32 <- lookup");
    mint_model_close(t);
    mint_model_close(d);
}

Test(speculative, greedy_equals_target_on_stories260K, .timeout = MT_HANG(120)) {
    mint_model *t = open_data("stories260K.gguf"), *d = open_data("quant/stories260K-q4_0.gguf");
    int32_t prompt[16];
    size_t n;
    mint_err err;
    cr_assert_eq(mint_tokenize(t, "Once upon a time", 16, true, false, prompt, 16, &n, &err),
                 MINT_OK);
    expect_greedy_equal(t, d, prompt, (int)n, 200, "stories260K F32 <- Q4_0");
    expect_greedy_equal(t, NULL, prompt, (int)n, 200, "stories260K F32 <- lookup");
    mint_model_close(t);
    mint_model_close(d);
}

Test(speculative, greedy_equals_target_on_tiny256, .timeout = MT_HANG(120)) {
    mint_model *t = open_data("quant/tiny256-f32.gguf");
    const char *drafts[] = {"quant/tiny256-q8_0.gguf", "quant/tiny256-q4_k_m.gguf"};
    const int32_t prompt[] = {1, 450, 96, 354, 170, 432};
    for (int i = 0; i < 2; i++) {
        mint_model *d = open_data(drafts[i]);
        expect_greedy_equal(t, d, prompt, 6, 48, drafts[i]);
        mint_model_close(d);
    }
    mint_model_close(t);
}

// Sampled speculative decoding keeps the target's distribution: the first generated token over
// many seeds, against the target's own sampling distribution p (temperature 1, top-k 8 so that
// every bin holds enough draws). Chi-square with 7 degrees of freedom: the 0.999 quantile is
// 24.32, so a correct implementation fails once in a thousand runs of this (seeded, so never).
Test(speculative, sampled_keeps_the_target_distribution, .timeout = MT_HANG(300)) {
    mint_model *t = mt_synth_model("small", "F32"), *d = mt_synth_model("small", "Q2_K");
    const int32_t prompt[] = {1, 40, 41, 42, 300, 17};
    mint_ctx *tc = ctx_of(t), *dc = ctx_of(d);
    mint_sampler_params sp = mint_sampler_default_params();
    sp.temp = 1.0f;
    sp.top_k = 8;
    sp.top_p = 1.0f;
    sp.min_p = 0.0f;
    mint_err err;
    // The target's own distribution after the prompt.
    float p[512];
    {
        mint_sampler *s;
        cr_assert_eq(mint_sampler_create(&sp, 512, &s, &err), MINT_OK);
        cr_assert_eq(mint_eval(tc, prompt, 6, 0, false, &err), MINT_OK);
        const float *l = mint_get_logits(tc, -1);
        // top-8 of the logits, softmax at temperature 1
        int32_t top[8];
        for (int k = 0; k < 8; k++) {
            int32_t best = -1;
            for (int32_t i = 0; i < 512; i++) {
                bool taken = false;
                for (int j = 0; j < k; j++) taken |= top[j] == i;
                if (!taken && (best < 0 || l[i] > l[best])) best = i;
            }
            top[k] = best;
        }
        memset(p, 0, sizeof p);
        double sum = 0;
        for (int k = 0; k < 8; k++) sum += exp((double)l[top[k]] - l[top[0]]);
        for (int k = 0; k < 8; k++) p[top[k]] = (float)(exp((double)l[top[k]] - l[top[0]]) / sum);
        mint_sampler_free(s);
    }
    enum { RUNS = 2000 };
    int count[512] = {0};
    uint64_t drafted = 0, accepted = 0;
    for (int r = 0; r < RUNS; r++) {
        sp.seed = 1000 + (uint64_t)r;
        mint_sampler *s;
        cr_assert_eq(mint_sampler_create(&sp, 512, &s, &err), MINT_OK);
        sink out = {.n = 0};
        mint_spec_params sq = mint_spec_default_params();
        sq.draft = dc;
        sq.n_draft = 4;
        sq.max_tokens = 2;
        sq.on_token = collect;
        sq.user = &out;
        mint_spec_stats st;
        cr_assert_eq(mint_speculative(tc, s, prompt, 6, &sq, &st, &err), MINT_OK, "%s", err.msg);
        count[out.tok[0]]++;
        drafted += st.drafted;
        accepted += st.accepted;
        mint_sampler_free(s);
    }
    double chi2 = 0;
    int bins = 0;
    for (int i = 0; i < 512; i++) {
        if (p[i] == 0) {
            cr_assert_eq(count[i], 0, "token %d was drawn but the target gives it 0", i);
            continue;
        }
        const double e = p[i] * RUNS;
        chi2 += (count[i] - e) * (count[i] - e) / e;
        bins++;
    }
    cr_log_info("sampled speculative, %d runs: chi-square %.2f over %d bins (0.999 quantile "
                "24.32), draft acceptance %.1f%%",
                RUNS, chi2, bins, 100.0 * (double)accepted / (double)drafted);
    cr_assert_eq(bins, 8);
    cr_assert_lt(chi2, 24.32, "chi-square %.2f", chi2);
    cr_assert_gt(accepted, 0);
    mint_ctx_free(tc);
    mint_ctx_free(dc);
    mint_model_close(t);
    mint_model_close(d);
}

Test(speculative, mismatched_vocabularies_and_penalties_are_refused) {
    mint_model *t = mt_synth_model("small", "F32");
    mint_model *other = open_data("llama-2-tiny-random.gguf"); // 32000 tokens, not 512
    mint_ctx *tc = ctx_of(t), *oc = ctx_of(other);
    mint_sampler_params sp = mint_sampler_default_params();
    sp.temp = 0;
    mint_sampler *s;
    mint_err err;
    cr_assert_eq(mint_sampler_create(&sp, 512, &s, &err), MINT_OK);
    const int32_t prompt[] = {1, 40, 41};
    mint_spec_params p = mint_spec_default_params();
    p.draft = oc;
    mint_spec_stats st;
    cr_assert_eq(mint_speculative(tc, s, prompt, 3, &p, &st, &err), MINT_E_ARG);
    cr_assert(strstr(err.msg, "512") && strstr(err.msg, "32000"), "%s", err.msg);
    mint_sampler_free(s);
    sp.repeat_penalty = 1.1f;
    cr_assert_eq(mint_sampler_create(&sp, 512, &s, &err), MINT_OK);
    p.draft = NULL;
    cr_assert_eq(mint_speculative(tc, s, prompt, 3, &p, &st, &err), MINT_E_ARG);
    cr_assert(strstr(err.msg, "repetition penalty"), "%s", err.msg);
    mint_sampler_free(s);
    mint_ctx_free(tc);
    mint_ctx_free(oc);
    mint_model_close(t);
    mint_model_close(other);
}
