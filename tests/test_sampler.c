// test_sampler.c - the sampling chain: each filter's surviving set on hand-made logits, the
// repetition penalty's arithmetic, greedy ties, seeded reproducibility, the RNG's published test
// vectors, draw frequencies against the analytic softmax (chi-square), and parameter checks.
#include "base/rng.h"
#include "runtime/text/sampler_internal.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Helpers

// Every step off: temperature 1, no filters, no penalty.
static mint_sampler_params params_off(void) {
    mint_sampler_params p = mint_sampler_default_params();
    p.temp = 1.0f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.repeat_penalty = 1.0f;
    p.repeat_last_n = 0;
    p.seed = 1;
    return p;
}

static mint_sampler *make(const mint_sampler_params *p, int32_t n_vocab) {
    mint_sampler *s = NULL;
    mint_err err = {0};
    cr_assert_eq(mint_sampler_create(p, n_vocab, &s, &err), MINT_OK, "%s", err.msg);
    cr_assert_not_null(s);
    return s;
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

// The ids that survive the chain, ascending, as a string such as "1 3" (easy to compare and to
// read in a failure message).
static const char *survivors(mint_sampler *s, const float *logits) {
    static char buf[4096];
    const mint_candidates *c = mint_sampler_apply_chain(s, logits);
    int32_t *ids = malloc(c->n * sizeof *ids);
    for (size_t i = 0; i < c->n; i++) ids[i] = c->data[i].id;
    qsort(ids, c->n, sizeof *ids, cmp_i32);
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->n && len < sizeof buf - 16; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, i ? " %d" : "%d", (int)ids[i]);
    free(ids);
    return buf;
}

static const char *survivors_with(const mint_sampler_params *p, const float *logits, int n) {
    mint_sampler *s = make(p, n);
    const char *r = survivors(s, logits);
    mint_sampler_free(s);
    return r;
}

#define assert_set(got, want)                                                                      \
    cr_assert_str_eq((got), (want), "survivors \"%s\", want \"%s\"", got, want)

// A fixed pseudo-random logit vector in [-scale, scale) (its own tiny LCG, independent of the
// sampler's RNG).
static void fill_logits(float *x, int n, uint64_t seed, float scale) {
    uint64_t st = seed * 2862933555777941757u + 3037000493u;
    for (int i = 0; i < n; i++) {
        st = st * 6364136223846793005u + 1442695040888963407u;
        x[i] = scale * (float)((double)(st >> 11) * 0x1.0p-53 * 2.0 - 1.0);
    }
}

// Probabilities {0.1, 0.4, 0.2, 0.3} for ids 0..3 as logits (log p; the softmax gives p back).
// Sorted: id 1 (0.4), id 3 (0.3), id 2 (0.2), id 0 (0.1); cumulative 0.4, 0.7, 0.9, 1.0.
static void four_probs(float *x) {
    const double p[4] = {0.1, 0.4, 0.2, 0.3};
    for (int i = 0; i < 4; i++) x[i] = (float)log(p[i]);
}

// ---------------------------------------------------------------------------------------------
// RNG

Test(sampler_rng, splitmix64_and_xoshiro256ss_test_vectors) {
    // SplitMix64 from state 0 (the sequence in Vigna's splitmix64.c and most ports).
    uint64_t st = 0;
    cr_assert_eq(mint_splitmix64(&st), 0xe220a8397b1dcdafu);
    cr_assert_eq(mint_splitmix64(&st), 0x6e789e6aa1b965f4u);
    cr_assert_eq(mint_splitmix64(&st), 0x06c45d188009454fu);
    // xoshiro256** from state {1, 2, 3, 4}.
    mint_rng r = {{1, 2, 3, 4}};
    cr_assert_eq(mint_rng_next(&r), 11520u);
    cr_assert_eq(mint_rng_next(&r), 0u);
    cr_assert_eq(mint_rng_next(&r), 1509978240u);
    cr_assert_eq(mint_rng_next(&r), 1215971899390074240u);
    // The default seed's first outputs (computed with an independent Python implementation of
    // the two generators), so a change to seeding is caught.
    mint_rng_seed(&r, 0xC0FFEE);
    cr_assert_eq(mint_rng_next(&r), 0x120e99a6dde4a550u);
    cr_assert_eq(mint_rng_next(&r), 0x8f989ef97733d4b4u);
}

Test(sampler_rng, uniform_in_unit_interval) {
    mint_rng r;
    mint_rng_seed(&r, 42);
    double sum = 0.0;
    const int n = 100000;
    for (int i = 0; i < n; i++) {
        double u = mint_rng_uniform(&r);
        cr_assert(u >= 0.0 && u < 1.0, "u = %g", u);
        sum += u;
    }
    // Mean of n uniforms: 0.5 with standard deviation sqrt(1/12/n) = 0.00091; allow 5 sigma.
    cr_assert(fabs(sum / n - 0.5) < 0.0046, "mean %g", sum / n);
}

// ---------------------------------------------------------------------------------------------
// Greedy (temp <= 0)

Test(sampler_greedy, argmax_and_lowest_id_on_ties) {
    mint_sampler_params p = params_off();
    p.temp = 0.0f;
    const float a[4] = {0.1f, 2.0f, -1.0f, 1.9f};
    const float ties[4] = {1.0f, 3.0f, 3.0f, 2.0f};
    const float flat[5] = {-7.0f, -7.0f, -7.0f, -7.0f, -7.0f};
    mint_sampler *s = make(&p, 4);
    cr_assert_eq(mint_sampler_sample(s, a), 1);
    cr_assert_eq(mint_sampler_sample(s, ties), 1);
    mint_sampler_free(s);
    s = make(&p, 5);
    cr_assert_eq(mint_sampler_sample(s, flat), 0);
    mint_sampler_free(s);
    // A negative temperature is greedy too, and greedy ignores the filters' settings.
    p = mint_sampler_default_params();
    p.temp = -1.0f;
    s = make(&p, 4);
    cr_assert_eq(mint_sampler_sample(s, ties), 1);
    assert_set(survivors(s, ties), "1");
    mint_sampler_free(s);
}

Test(sampler_greedy, argmax_after_repetition_penalty) {
    mint_sampler_params p = params_off();
    p.temp = 0.0f;
    p.repeat_penalty = 1.1f;
    p.repeat_last_n = 8;
    // Positive: 2.0 / 1.1 = 1.818 falls below 1.9.
    const float pos[3] = {2.0f, 1.9f, 0.5f};
    mint_sampler *s = make(&p, 3);
    cr_assert_eq(mint_sampler_sample(s, pos), 0);
    mint_sampler_accept(s, 0);
    cr_assert_eq(mint_sampler_sample(s, pos), 1);
    mint_sampler_free(s);
    // Negative: -1.0 * 1.1 = -1.1 falls below -1.05.
    const float neg[3] = {-1.0f, -1.05f, -3.0f};
    s = make(&p, 3);
    mint_sampler_accept(s, 0);
    cr_assert_eq(mint_sampler_sample(s, neg), 1);
    mint_sampler_free(s);
    // A tie created by the penalty (4 / 2 == 2) goes to the lowest id.
    p.repeat_penalty = 2.0f;
    const float tie[2] = {2.0f, 4.0f};
    s = make(&p, 2);
    mint_sampler_accept(s, 1);
    cr_assert_eq(mint_sampler_sample(s, tie), 0);
    mint_sampler_free(s);
}

// ---------------------------------------------------------------------------------------------
// Repetition penalty

Test(sampler_penalty, divides_positive_multiplies_negative_once_per_token) {
    mint_sampler_params p = params_off();
    p.repeat_penalty = 1.3f;
    p.repeat_last_n = 16;
    const float x[6] = {2.0f, -2.0f, 0.0f, 1.0f, -0.5f, 3.0f};
    mint_sampler *s = make(&p, 6);
    // Token 0 three times, 1 once, 2 once: each is penalised exactly once.
    const int32_t hist[] = {0, 1, 2, 0, 0};
    for (size_t i = 0; i < sizeof hist / sizeof hist[0]; i++) mint_sampler_accept(s, hist[i]);
    const mint_candidates *c = mint_sampler_apply_chain(s, x);
    cr_assert_eq(c->n, 6);
    const float want[6] = {2.0f / 1.3f, -2.0f * 1.3f, 0.0f, 1.0f, -0.5f, 3.0f};
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(c->data[i].id, i); // no filter ran: id order is kept
        cr_assert_eq(c->data[i].logit, want[i], "id %d: %.9g, want %.9g", i,
                     (double)c->data[i].logit, (double)want[i]);
    }
    // The chain reads the history without consuming it: a second pass gives the same logits.
    c = mint_sampler_apply_chain(s, x);
    for (int i = 0; i < 6; i++) cr_assert_eq(c->data[i].logit, want[i]);
    mint_sampler_free(s);
}

Test(sampler_penalty, window_holds_last_n_tokens) {
    mint_sampler_params p = params_off();
    p.repeat_penalty = 2.0f;
    p.repeat_last_n = 3;
    const float x[6] = {2.0f, -2.0f, 0.0f, 1.0f, -0.5f, 3.0f};
    mint_sampler *s = make(&p, 6);
    const int32_t hist[] = {0, 5, 1, 3, 4}; // the window keeps 1, 3, 4
    for (size_t i = 0; i < sizeof hist / sizeof hist[0]; i++) mint_sampler_accept(s, hist[i]);
    const mint_candidates *c = mint_sampler_apply_chain(s, x);
    const float want[6] = {2.0f, -4.0f, 0.0f, 0.5f, -1.0f, 3.0f};
    for (int i = 0; i < 6; i++) cr_assert_eq(c->data[i].logit, want[i], "id %d", i);
    // One more token pushes 1 out and brings 5 in.
    mint_sampler_accept(s, 5);
    c = mint_sampler_apply_chain(s, x);
    const float want2[6] = {2.0f, -2.0f, 0.0f, 0.5f, -1.0f, 1.5f};
    for (int i = 0; i < 6; i++) cr_assert_eq(c->data[i].logit, want2[i], "id %d", i);
    // Ids outside the vocabulary are ignored, not recorded.
    mint_sampler_accept(s, -1);
    mint_sampler_accept(s, 6);
    c = mint_sampler_apply_chain(s, x);
    for (int i = 0; i < 6; i++) cr_assert_eq(c->data[i].logit, want2[i], "id %d", i);
    // Reset forgets the history.
    mint_sampler_reset(s, 1);
    c = mint_sampler_apply_chain(s, x);
    for (int i = 0; i < 6; i++) cr_assert_eq(c->data[i].logit, x[i], "id %d", i);
    mint_sampler_free(s);
}

Test(sampler_penalty, off_when_window_is_zero_or_penalty_is_one) {
    const float x[3] = {2.0f, -2.0f, 1.0f};
    mint_sampler_params p = params_off();
    p.repeat_penalty = 2.0f;
    p.repeat_last_n = 0;
    mint_sampler *s = make(&p, 3);
    mint_sampler_accept(s, 0);
    mint_sampler_accept(s, 1);
    const mint_candidates *c = mint_sampler_apply_chain(s, x);
    for (int i = 0; i < 3; i++) cr_assert_eq(c->data[i].logit, x[i]);
    mint_sampler_free(s);
    p.repeat_penalty = 1.0f;
    p.repeat_last_n = 4;
    s = make(&p, 3);
    mint_sampler_accept(s, 0);
    c = mint_sampler_apply_chain(s, x);
    for (int i = 0; i < 3; i++) cr_assert_eq(c->data[i].logit, x[i]);
    mint_sampler_free(s);
}

// ---------------------------------------------------------------------------------------------
// Filters: the exact surviving sets

Test(sampler_filters, top_k) {
    const float x[5] = {1.0f, 5.0f, 3.0f, 4.0f, 2.0f};
    mint_sampler_params p = params_off();
    p.top_k = 2;
    assert_set(survivors_with(&p, x, 5), "1 3");
    p.top_k = 1;
    assert_set(survivors_with(&p, x, 5), "1");
    p.top_k = 5;
    assert_set(survivors_with(&p, x, 5), "0 1 2 3 4");
    p.top_k = 100; // more than the vocabulary: all
    assert_set(survivors_with(&p, x, 5), "0 1 2 3 4");
    p.top_k = 0; // off
    assert_set(survivors_with(&p, x, 5), "0 1 2 3 4");
    p.top_k = -3; // off
    assert_set(survivors_with(&p, x, 5), "0 1 2 3 4");
    // Equal logits at the cut: the lower ids stay.
    const float ties[5] = {3.0f, 1.0f, 3.0f, 3.0f, 0.0f};
    p.top_k = 2;
    assert_set(survivors_with(&p, ties, 5), "0 2");
}

Test(sampler_filters, top_k_matches_full_sort_and_is_ordered) {
    enum { N = 3000 };
    static float x[N];
    fill_logits(x, N, 7, 10.0f);
    x[100] = x[2000] = x[2999] = 9.5f; // some ties near the top
    const int ks[] = {1, 2, 37, 40, 999, N};
    for (size_t t = 0; t < sizeof ks / sizeof ks[0]; t++) {
        mint_sampler_params p = params_off();
        p.top_k = ks[t];
        mint_sampler *s = make(&p, N);
        const mint_candidates *c = mint_sampler_apply_chain(s, x);
        cr_assert_eq(c->n, (size_t)ks[t]);
        cr_assert(c->sorted);
        // Ordered best first, and nothing outside ranks above the last kept one.
        for (size_t i = 1; i < c->n; i++) {
            const mint_candidate *a = &c->data[i - 1], *b = &c->data[i];
            cr_assert(a->logit > b->logit || (a->logit == b->logit && a->id < b->id),
                      "k=%d: order broken at %zu", ks[t], i);
        }
        const mint_candidate *last = &c->data[c->n - 1];
        int above = 0;
        for (int i = 0; i < N; i++)
            if (x[i] > last->logit || (x[i] == last->logit && i <= last->id)) above++;
        cr_assert_eq(above, ks[t], "k=%d: %d tokens rank at or above the last kept", ks[t], above);
        mint_sampler_free(s);
    }
}

Test(sampler_filters, top_p) {
    float x[4];
    four_probs(x); // cumulative by rank: 0.4 (id 1), 0.7 (+3), 0.9 (+2), 1.0 (+0)
    mint_sampler_params p = params_off();
    p.top_p = 0.35f;
    assert_set(survivors_with(&p, x, 4), "1");
    p.top_p = 0.5f;
    assert_set(survivors_with(&p, x, 4), "1 3");
    p.top_p = 0.65f;
    assert_set(survivors_with(&p, x, 4), "1 3");
    p.top_p = 0.71f;
    assert_set(survivors_with(&p, x, 4), "1 2 3");
    p.top_p = 0.95f;
    assert_set(survivors_with(&p, x, 4), "0 1 2 3");
    p.top_p = 1e-6f; // at least one token
    assert_set(survivors_with(&p, x, 4), "1");
    p.top_p = 1.0f; // off
    assert_set(survivors_with(&p, x, 4), "0 1 2 3");
    // Just below and above each cumulative step.
    const float cuts[][2] = {{0.39f, 1}, {0.41f, 2}, {0.69f, 2},
                             {0.71f, 3}, {0.89f, 3}, {0.91f, 4}};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        p.top_p = cuts[i][0];
        mint_sampler *s = make(&p, 4);
        cr_assert_eq(mint_sampler_apply_chain(s, x)->n, (size_t)cuts[i][1], "top_p %g",
                     (double)cuts[i][0]);
        mint_sampler_free(s);
    }
    // Reaching top_p exactly is enough (llama.cpp's >=): four equal logits give p = 0.25 each,
    // exactly, so top_p 0.5 keeps two of them, the lower ids.
    const float flat[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    p.top_p = 0.5f;
    assert_set(survivors_with(&p, flat, 4), "0 1");
}

Test(sampler_filters, top_p_on_a_large_vocabulary) {
    // A peaked vector (the nucleus fits in the first partial sort of 256) and a flat one (it
    // does not, so the rest is sorted too). Checked against probabilities in double: the kept
    // prefix reaches top_p, the prefix one shorter does not (to 1e-5 for float rounding).
    enum { N = 3000 };
    static float x[N];
    const float scales[] = {25.0f, 2.0f};
    for (size_t t = 0; t < 2; t++) {
        fill_logits(x, N, 11 + t, scales[t]);
        mint_sampler_params p = params_off();
        p.top_p = 0.9f;
        mint_sampler *s = make(&p, N);
        const mint_candidates *c = mint_sampler_apply_chain(s, x);
        if (t == 0) cr_assert_lt(c->n, 256);
        if (t == 1) cr_assert_gt(c->n, 256);
        double max = -INFINITY, z = 0.0, cum = 0.0;
        // Not fmax(max, x[i]): aarch64 GCC 12.2 crashes (internal compiler error in
        // vect_transform_reduction) vectorizing that float-into-double fmax reduction.
        for (int i = 0; i < N; i++)
            if (x[i] > max) max = x[i];
        for (int i = 0; i < N; i++) z += exp(x[i] - max);
        for (size_t i = 0; i < c->n; i++) {
            if (i) cr_assert_geq(c->data[i - 1].logit, c->data[i].logit);
            cum += exp(x[c->data[i].id] - max) / z;
        }
        double last = exp(x[c->data[c->n - 1].id] - max) / z;
        cr_assert_geq(cum, 0.9 - 1e-5, "scale %g: kept %zu hold %.7f", (double)scales[t], c->n,
                      cum);
        cr_assert_lt(cum - last, 0.9 + 1e-5, "scale %g: %zu - 1 already hold %.7f",
                     (double)scales[t], c->n, cum - last);
        // Nothing left out ranks above the last kept candidate.
        int above = 0;
        for (int i = 0; i < N; i++) above += x[i] > c->data[c->n - 1].logit;
        cr_assert_lt((size_t)above, c->n);
        mint_sampler_free(s);
    }
}

Test(sampler_filters, min_p) {
    float x[4];
    four_probs(x); // p_max = 0.4
    mint_sampler_params p = params_off();
    p.min_p = 0.6f; // p >= 0.24
    assert_set(survivors_with(&p, x, 4), "1 3");
    p.min_p = 0.45f; // p >= 0.18
    assert_set(survivors_with(&p, x, 4), "1 2 3");
    p.min_p = 0.2f; // p >= 0.08
    assert_set(survivors_with(&p, x, 4), "0 1 2 3");
    p.min_p = 1.0f; // only the maximum
    assert_set(survivors_with(&p, x, 4), "1");
    p.min_p = 0.0f; // off
    assert_set(survivors_with(&p, x, 4), "0 1 2 3");
}

Test(sampler_filters, each_filter_sees_what_the_previous_left) {
    float x[4];
    four_probs(x);
    mint_sampler_params p = params_off();
    // top-p renormalises over top-k's survivors: 0.4 / 0.7 = 0.57 >= 0.5 keeps id 1 alone,
    // where over all four it needs ids 1 and 3.
    p.top_p = 0.5f;
    assert_set(survivors_with(&p, x, 4), "1 3");
    p.top_k = 2;
    assert_set(survivors_with(&p, x, 4), "1");
    // min-p measures against the penalised maximum: penalising id 1 (logit log 0.4 < 0, times
    // 2 -> p ratio 0.4^2 / 0.3 = 0.53 of the new maximum id 3) lets min_p 0.6 keep 3 and 2.
    p = params_off();
    p.min_p = 0.6f;
    p.repeat_penalty = 2.0f;
    p.repeat_last_n = 4;
    mint_sampler *s = make(&p, 4);
    mint_sampler_accept(s, 1);
    assert_set(survivors(s, x), "2 3"); // 0.2 / 0.3 = 0.67 >= 0.6; 0.16 / 0.3 = 0.53 < 0.6
    mint_sampler_free(s);
}

Test(sampler_filters, temperature_applies_after_the_filters) {
    float x[4];
    four_probs(x);
    // llama.cpp's order: top-p and min-p judge probabilities at temperature 1, so a very low or
    // high temperature does not change which tokens survive.
    const float temps[] = {0.1f, 1.0f, 5.0f};
    for (size_t i = 0; i < 3; i++) {
        mint_sampler_params p = params_off();
        p.temp = temps[i];
        p.top_p = 0.5f;
        assert_set(survivors_with(&p, x, 4), "1 3");
        p = params_off();
        p.temp = temps[i];
        p.min_p = 0.6f;
        assert_set(survivors_with(&p, x, 4), "1 3");
    }
    // The survivors' logits come out divided by temp.
    mint_sampler_params p = params_off();
    p.temp = 0.5f;
    mint_sampler *s = make(&p, 4);
    const mint_candidates *c = mint_sampler_apply_chain(s, x);
    for (size_t i = 0; i < c->n; i++)
        cr_assert_eq(c->data[i].logit, x[c->data[i].id] / 0.5f, "id %d", c->data[i].id);
    mint_sampler_free(s);
}

// ---------------------------------------------------------------------------------------------
// Reproducibility

// Generates n tokens from logits that depend on the step, feeding each token back.
static void generate(mint_sampler *s, int32_t *out, int n, int n_vocab) {
    float *x = malloc((size_t)n_vocab * sizeof *x);
    for (int t = 0; t < n; t++) {
        fill_logits(x, n_vocab, (uint64_t)t + 1, 3.0f);
        out[t] = mint_sampler_sample(s, x);
        cr_assert(out[t] >= 0 && out[t] < n_vocab);
        mint_sampler_accept(s, out[t]);
    }
    free(x);
}

Test(sampler_seed, same_seed_same_tokens_different_seed_different_tokens) {
    enum { N = 200, V = 256 };
    int32_t a[N], b[N], c[N];
    mint_sampler_params p = mint_sampler_default_params();
    p.repeat_penalty = 1.1f;
    p.seed = 1234;
    mint_sampler *s1 = make(&p, V), *s2 = make(&p, V);
    generate(s1, a, N, V);
    generate(s2, b, N, V);
    cr_assert_arr_eq(a, b, sizeof a);
    p.seed = 1235;
    mint_sampler *s3 = make(&p, V);
    generate(s3, c, N, V);
    int differ = 0;
    for (int i = 0; i < N; i++) differ += a[i] != c[i];
    // Each step keeps dozens of candidates, so two seeds agree on a token only now and then.
    cr_assert_gt(differ, N / 2, "only %d of %d tokens differ", differ, N);
    // Reset with the original seed replays the first run, history included.
    mint_sampler_reset(s3, 1234);
    generate(s3, c, N, V);
    cr_assert_arr_eq(a, c, sizeof a);
    mint_sampler_free(s1);
    mint_sampler_free(s2);
    mint_sampler_free(s3);
}

Test(sampler_seed, default_params_on_a_large_vocabulary) {
    enum { V = 32000 };
    static float x[V];
    fill_logits(x, V, 99, 8.0f);
    mint_sampler_params p = mint_sampler_default_params();
    mint_sampler *s = make(&p, V);
    float max = x[0];
    for (int i = 1; i < V; i++) max = x[i] > max ? x[i] : max;
    for (int t = 0; t < 300; t++) {
        int32_t id = mint_sampler_sample(s, x);
        cr_assert(id >= 0 && id < V);
        int rank = 0; // tokens with a higher logit
        for (int i = 0; i < V; i++) rank += x[i] > x[id];
        cr_assert_lt(rank, 40, "token %d ranks %d", id, rank);
        cr_assert_geq(expf(x[id] - max), 0.05f * 0.999f, "token %d below min_p", id);
    }
    mint_sampler_free(s);
}

// ---------------------------------------------------------------------------------------------
// Frequencies: chi-square goodness of fit against the analytic softmax

// Draws n tokens from logits x[0..V) and returns the chi-square statistic against
// softmax(x / temp) restricted to `keep` (ids outside it must never be drawn).
static double chi_square(const mint_sampler_params *p, const float *x, int V, const bool *keep,
                         int n) {
    mint_sampler *s = make(p, V);
    int counts[16] = {0};
    cr_assert_leq(V, 16);
    for (int i = 0; i < n; i++) counts[mint_sampler_sample(s, x)]++;
    mint_sampler_free(s);
    double max = -INFINITY, z = 0.0;
    for (int i = 0; i < V; i++)
        if (keep[i]) max = fmax(max, x[i] / p->temp);
    for (int i = 0; i < V; i++)
        if (keep[i]) z += exp(x[i] / p->temp - max);
    double chi2 = 0.0;
    for (int i = 0; i < V; i++) {
        if (!keep[i]) {
            cr_assert_eq(counts[i], 0, "filtered token %d drawn %d times", i, counts[i]);
            continue;
        }
        double expected = n * exp(x[i] / p->temp - max) / z;
        cr_assert_gt(expected, 5.0); // the chi-square approximation needs it
        chi2 += (counts[i] - expected) * (counts[i] - expected) / expected;
    }
    return chi2;
}

// Critical values of the chi-square distribution at significance 0.001.
#define CHI2_CRIT_DF2 13.816
#define CHI2_CRIT_DF4 18.467

Test(sampler_draw, frequencies_match_softmax_at_temperatures) {
    const float x[5] = {1.0f, 2.0f, 0.5f, -1.0f, 1.5f};
    const bool all[5] = {true, true, true, true, true};
    const float temps[] = {1.0f, 0.5f, 2.0f};
    for (size_t t = 0; t < 3; t++) {
        mint_sampler_params p = params_off();
        p.temp = temps[t];
        p.seed = 2024 + t;
        double chi2 = chi_square(&p, x, 5, all, 200000);
        cr_log_info("temp %g: chi2 %.3f (df 4, critical %.3f)", (double)temps[t], chi2,
                    CHI2_CRIT_DF4);
        cr_assert_lt(chi2, CHI2_CRIT_DF4, "temp %g: chi2 %.3f >= %.3f (df 4, alpha 0.001)",
                     (double)temps[t], chi2, CHI2_CRIT_DF4);
    }
}

Test(sampler_draw, frequencies_renormalise_over_top_k) {
    const float x[5] = {1.0f, 2.0f, 0.5f, -1.0f, 1.5f};
    const bool top3[5] = {true, true, false, false, true}; // logits 2.0, 1.5, 1.0
    mint_sampler_params p = params_off();
    p.top_k = 3;
    p.temp = 2.0f;
    p.seed = 77;
    double chi2 = chi_square(&p, x, 5, top3, 200000);
    cr_log_info("top_k 3, temp 2: chi2 %.3f (df 2, critical %.3f)", chi2, CHI2_CRIT_DF2);
    cr_assert_lt(chi2, CHI2_CRIT_DF2, "chi2 %.3f >= %.3f (df 2, alpha 0.001)", chi2, CHI2_CRIT_DF2);
}

// ---------------------------------------------------------------------------------------------
// Parameters

Test(sampler_params, defaults) {
    mint_sampler_params p = mint_sampler_default_params();
    cr_assert_eq(p.temp, 0.8f);
    cr_assert_eq(p.top_k, 40);
    cr_assert_eq(p.top_p, 0.95f);
    cr_assert_eq(p.min_p, 0.05f);
    cr_assert_eq(p.repeat_penalty, 1.0f);
    cr_assert_eq(p.repeat_last_n, 64);
    cr_assert_eq(p.seed, 0xC0FFEE);
    // NULL params means the defaults.
    mint_sampler *s = make(NULL, 10);
    mint_sampler_free(s);
    mint_sampler_free(NULL);
}

// Expects create to fail with MINT_E_ARG and a message containing `want`.
static void expect_arg_error(const mint_sampler_params *p, int32_t n_vocab, const char *want) {
    mint_sampler *s = (mint_sampler *)(uintptr_t)1;
    mint_err err = {0};
    cr_assert_eq(mint_sampler_create(p, n_vocab, &s, &err), MINT_E_ARG, "want error \"%s\"", want);
    cr_assert_eq(err.code, MINT_E_ARG);
    cr_assert_null(s);
    cr_assert(strstr(err.msg, want), "message \"%s\" lacks \"%s\"", err.msg, want);
}

Test(sampler_params, invalid_values_are_rejected_with_a_message) {
    mint_sampler_params p;
    p = mint_sampler_default_params(), p.temp = NAN;
    expect_arg_error(&p, 10, "temp is NaN");
    p = mint_sampler_default_params(), p.top_p = 0.0f;
    expect_arg_error(&p, 10, "top_p 0 outside (0, 1]");
    p = mint_sampler_default_params(), p.top_p = 1.5f;
    expect_arg_error(&p, 10, "top_p 1.5 outside (0, 1]");
    p = mint_sampler_default_params(), p.top_p = NAN;
    expect_arg_error(&p, 10, "top_p nan");
    p = mint_sampler_default_params(), p.min_p = -0.25f;
    expect_arg_error(&p, 10, "min_p -0.25 outside [0, 1]");
    p = mint_sampler_default_params(), p.min_p = 1.25f;
    expect_arg_error(&p, 10, "min_p 1.25 outside [0, 1]");
    p = mint_sampler_default_params(), p.repeat_penalty = 0.0f;
    expect_arg_error(&p, 10, "repeat_penalty 0 must be finite and > 0");
    p = mint_sampler_default_params(), p.repeat_penalty = -1.0f;
    expect_arg_error(&p, 10, "repeat_penalty -1");
    p = mint_sampler_default_params(), p.repeat_penalty = INFINITY;
    expect_arg_error(&p, 10, "repeat_penalty inf");
    p = mint_sampler_default_params(), p.repeat_last_n = -1;
    expect_arg_error(&p, 10, "repeat_last_n -1 outside [0, 1048576]");
    p = mint_sampler_default_params();
    expect_arg_error(&p, 0, "n_vocab 0 must be >= 1");
    expect_arg_error(&p, -5, "n_vocab -5");
    mint_err err;
    cr_assert_eq(mint_sampler_create(&p, 10, NULL, &err), MINT_E_ARG);
    cr_assert(strstr(err.msg, "out is NULL"));
    // Edge values that are valid: top_p 1, min_p 0 and 1, temp 0 and below, top_k negative.
    p = mint_sampler_default_params();
    p.top_p = 1.0f, p.min_p = 1.0f, p.temp = -2.0f, p.top_k = -1, p.repeat_last_n = 0;
    mint_sampler_free(make(&p, 1));
}

// Expects the user-range check to refuse p with a message containing `want`.
static void expect_check_error(const mint_sampler_params *p, const char *want) {
    mint_err err = {0};
    cr_assert_eq(mint_sampler_params_check(p, &err), MINT_E_ARG, "want error \"%s\"", want);
    cr_assert_eq(err.code, MINT_E_ARG);
    cr_assert(strstr(err.msg, want), "message \"%s\" lacks \"%s\"", err.msg, want);
}

// The ranges mint-run's option table accepts (--temp 0..1e6, --top-k 0..2^30, --top-p, --min-p
// 0..1, --repeat-penalty 0.001..1000, --repeat-last-n 0..2^20; top_p 0 is refused by create):
// what every front end refuses, with the value and the range in the message.
Test(sampler_params, the_user_ranges_are_checked_once_in_the_library) {
    mint_sampler_params p;
    p = mint_sampler_default_params(), p.temp = -2.0f;
    expect_check_error(&p, "temp -2 is outside [0, 1000000]");
    p = mint_sampler_default_params(), p.temp = 2e6f;
    expect_check_error(&p, "temp 2e+06 is outside [0, 1000000]");
    p = mint_sampler_default_params(), p.temp = NAN;
    expect_check_error(&p, "temp nan");
    p = mint_sampler_default_params(), p.temp = INFINITY;
    expect_check_error(&p, "temp inf");
    p = mint_sampler_default_params(), p.top_k = -1;
    expect_check_error(&p, "top_k -1 is outside [0, 1073741824]");
    p = mint_sampler_default_params(), p.top_p = 0.0f;
    expect_check_error(&p, "top_p 0 is outside (0, 1]");
    p = mint_sampler_default_params(), p.top_p = 1.5f;
    expect_check_error(&p, "top_p 1.5 is outside (0, 1]");
    p = mint_sampler_default_params(), p.min_p = -0.5f;
    expect_check_error(&p, "min_p -0.5 is outside [0, 1]");
    p = mint_sampler_default_params(), p.repeat_penalty = 0.0f;
    expect_check_error(&p, "repeat_penalty 0 is outside [0.001, 1000]");
    p = mint_sampler_default_params(), p.repeat_penalty = 1001.0f;
    expect_check_error(&p, "repeat_penalty 1001 is outside [0.001, 1000]");
    p = mint_sampler_default_params(), p.repeat_last_n = -1;
    expect_check_error(&p, "repeat_last_n -1 is outside [0, 1048576]");
    expect_check_error(NULL, "params is NULL");
    // The edges pass, and everything that passes is something create takes.
    mint_sampler_params lo = mint_sampler_default_params(), hi = lo;
    lo.temp = 0, lo.top_k = 0, lo.top_p = 1e-6f, lo.min_p = 0, lo.repeat_penalty = 0.001f;
    lo.repeat_last_n = 0;
    hi.temp = 1e6f, hi.top_k = 1 << 30, hi.top_p = 1, hi.min_p = 1, hi.repeat_penalty = 1000;
    hi.repeat_last_n = 1 << 20;
    const mint_sampler_params ok[] = {mint_sampler_default_params(), lo, hi};
    for (int i = 0; i < 3; i++) {
        mint_err err = {0};
        cr_assert_eq(mint_sampler_params_check(&ok[i], &err), MINT_OK, "%d: %s", i, err.msg);
        mint_sampler_free(make(&ok[i], 8));
    }
}
