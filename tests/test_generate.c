// test_generate.c - the library's "logits to text" (runtime/text/logprobs.c, generate.c):
// mint_top_k and mint_log_softmax against a double-precision twin; mint_gen's stop strings across
// token boundaries with the held-back text, the first piece's leading space, finish reasons, and
// the tokens mint-run printed on stories260K before the generation loop moved into the library.
//
// Crafted logits (one token far above the rest) drive a greedy sampler through a chosen token
// sequence, so the stop-string cases do not depend on what the model would say.
#include "helpers/helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Top-k and log-softmax

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

Test(logprobs, top_k_and_log_softmax_match_a_double_precision_twin) {
    enum { N = 1000 };
    float l[N];
    for (int rep = 0; rep < 20; rep++) {
        for (int i = 0; i < N; i++) l[i] = (float)(uniform() * 20 - 10);
        l[N - 1] = l[3]; // a tie: the lower id comes first
        for (int k = 0; k <= 40; k += 7) {
            int32_t ids[64];
            const int32_t n = mint_top_k(l, N, k, ids);
            cr_assert_eq(n, k);
            // The twin: every id not chosen is not better than the last chosen one, the chosen
            // ones are in descending order with the lower id first on a tie.
            for (int j = 1; j < n; j++)
                cr_assert(l[ids[j - 1]] > l[ids[j]] ||
                          (l[ids[j - 1]] == l[ids[j]] && ids[j - 1] < ids[j]));
            for (int i = 0; i < N && n > 0; i++) {
                bool chosen = false;
                for (int j = 0; j < n; j++) chosen |= ids[j] == i;
                if (!chosen)
                    cr_assert(l[i] < l[ids[n - 1]] || (l[i] == l[ids[n - 1]] && i > ids[n - 1]),
                              "id %d (%g) should be among the top %d", i, l[i], k);
            }
            // log-softmax in long double, the plain formula, against the library's.
            double lp[64];
            mint_log_softmax(l, N, ids, n, lp);
            long double sum = 0;
            for (int i = 0; i < N; i++) sum += expl((long double)l[i]);
            for (int j = 0; j < n; j++) {
                const double want = (double)((long double)l[ids[j]] - logl(sum));
                cr_assert(fabs(lp[j] - want) < 1e-12, "lp %.17g vs twin %.17g", lp[j], want);
            }
        }
    }
    int32_t ids[4];
    cr_assert_eq(mint_top_k(l, 3, 10, ids), 3); // k beyond the vocabulary: all of it
    cr_assert_eq(mint_top_k(l, N, -1, ids), 0);
}

Test(logprobs, log_softmax_sums_to_one) {
    float l[300];
    int32_t ids[300];
    double lp[300];
    for (int i = 0; i < 300; i++) l[i] = (float)(uniform() * 40 - 30), ids[i] = i;
    mint_log_softmax(l, 300, ids, 300, lp);
    double total = 0;
    for (int i = 0; i < 300; i++) total += exp(lp[i]);
    cr_assert(fabs(total - 1) < 1e-12, "sum %.17g", total);
}

// ---------------------------------------------------------------------------------------------
// The generation step on stories260K's vocabulary

static mint_model *model;
static int32_t n_vocab;

static void open_model(void) {
    mint_err err;
    mint_model_params mp = {.vocab_only = false};
    cr_assert_eq(mint_model_open(mt_data_path("stories260K.gguf"), &mp, &model, &err), MINT_OK,
                 "%s", err.msg);
    mint_model_desc d;
    mint_model_describe(model, &d);
    n_vocab = d.n_vocab;
}

static void close_model(void) {
    mint_model_close(model);
}

static int32_t tok(const char *text) { // the token whose piece is exactly this text
    char buf[64];
    for (int32_t i = 0; i < n_vocab; i++) {
        const size_t k = mint_token_to_piece(model, i, false, buf, sizeof buf);
        if (k == strlen(text) && memcmp(buf, text, k) == 0) return i;
    }
    cr_assert_fail("no token '%s'", text);
    return -1;
}

// Logits whose argmax is t.
static const float *one_hot(int32_t t) {
    static float l[4096];
    cr_assert(n_vocab <= 4096);
    for (int32_t i = 0; i < n_vocab; i++) l[i] = (float)(i % 7) * 0.01f;
    l[t] = 10;
    return l;
}

static mint_gen *greedy_gen(mint_sampler **s, const mint_gen_params *p) {
    mint_sampler_params sp = mint_sampler_default_params();
    sp.temp = 0;
    mint_err err;
    cr_assert_eq(mint_sampler_create(&sp, n_vocab, s, &err), MINT_OK, "%s", err.msg);
    mint_gen *g;
    cr_assert_eq(mint_gen_create(model, *s, p, &g, &err), MINT_OK, "%s", err.msg);
    return g;
}

static mint_gen_token step(mint_gen *g, int32_t t) {
    mint_gen_token out;
    mint_err err;
    cr_assert_eq(mint_gen_step(g, one_hot(t), &out, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(out.token, t);
    return out;
}

static void expect_text(const mint_gen_token *o, const char *want) {
    cr_assert_eq(o->n_text, strlen(want), "released '%.*s', expected '%s'", (int)o->n_text, o->text,
                 want);
    cr_assert(memcmp(o->text, want, o->n_text) == 0, "released '%.*s', expected '%s'",
              (int)o->n_text, o->text, want);
}

TestSuite(gen, .init = open_model, .fini = close_model);

Test(gen, stop_string_across_tokens_is_held_back_then_cut) {
    const char *stop[] = {" little g"};
    mint_gen_params p = mint_gen_default_params();
    p.stop = stop;
    p.n_stop = 1;
    mint_sampler *s;
    mint_gen *g = greedy_gen(&s, &p);
    mint_gen_token o = step(g, tok(","));
    expect_text(&o, ",");
    o = step(g, tok(" there"));
    expect_text(&o, " there");
    o = step(g, tok(" little")); // " little" may begin the stop string: held back
    expect_text(&o, "");
    cr_assert_eq(o.n_held, strlen(" little"));
    cr_assert_eq(o.finish, MINT_FINISH_NONE);
    o = step(g, tok(" g")); // completes it: the text ends where it began
    expect_text(&o, "");
    cr_assert_eq(o.finish, MINT_FINISH_STOP);
    cr_assert_str_eq(mint_finish_name(o.finish), "stop");
    cr_assert_eq(o.n_generated, 4);
    mint_err err;
    cr_assert_eq(mint_gen_step(g, one_hot(tok(",")), &o, &err), MINT_E_ARG); // finished
    mint_gen_free(g);
    mint_sampler_free(s);
}

Test(gen, held_text_is_released_when_it_cannot_begin_a_stop_string) {
    const char *stop[] = {" little boy", "xyz", ""}; // an empty stop string is ignored
    mint_gen_params p = mint_gen_default_params();
    p.stop = stop;
    p.n_stop = 3;
    mint_sampler *s;
    mint_gen *g = greedy_gen(&s, &p);
    mint_gen_token o = step(g, tok(" little"));
    expect_text(&o, "");
    o = step(g, tok(" g")); // " little g" is no beginning of " little boy": all of it goes out
    expect_text(&o, " little g");
    cr_assert_eq(o.n_held, 0);
    o = step(g, tok("x")); // may begin "xyz"
    expect_text(&o, "");
    cr_assert_eq(o.n_held, 1);
    o = step(g, tok(",")); // "x," does not
    expect_text(&o, "x,");
    cr_assert_eq(o.n_held, 0);
    mint_gen_free(g);
    mint_sampler_free(s);
}

Test(gen, stop_string_inside_one_piece_and_the_earliest_wins) {
    const char *stop[] = {"ere", "th"};
    mint_gen_params p = mint_gen_default_params();
    p.stop = stop;
    p.n_stop = 2;
    mint_sampler *s;
    mint_gen *g = greedy_gen(&s, &p);
    mint_gen_token o = step(g, tok(" there")); // "th" begins before "ere"
    expect_text(&o, " ");
    cr_assert_eq(o.finish, MINT_FINISH_STOP);
    mint_gen_free(g);
    mint_sampler_free(s);
}

Test(gen, end_of_generation_releases_what_was_held) {
    const char *stop[] = {" little boy"};
    mint_gen_params p = mint_gen_default_params();
    p.stop = stop;
    p.n_stop = 1;
    p.logprobs = true;
    mint_sampler *s;
    mint_gen *g = greedy_gen(&s, &p);
    mint_gen_token o = step(g, tok(" little"));
    expect_text(&o, "");
    mint_model_desc d;
    mint_model_describe(model, &d);
    o = step(g, d.eos);
    cr_assert_eq(o.finish, MINT_FINISH_EOS);
    cr_assert_str_eq(mint_finish_name(o.finish), "stop");
    cr_assert_eq(o.n_piece, 0);
    expect_text(&o, " little");
    cr_assert_eq(o.n_generated, 1); // the end-of-generation token is not counted
    cr_assert(o.logprob < 0 && o.logprob > -0.1, "the one-hot EOS is likely: %g", o.logprob);
    mint_gen_free(g);
    mint_sampler_free(s);
}

Test(gen, ignore_eos_and_length) {
    mint_model_desc d;
    mint_model_describe(model, &d);
    mint_gen_params p = mint_gen_default_params();
    p.ignore_eos = true;
    p.max_tokens = 3;
    mint_sampler *s;
    mint_gen *g = greedy_gen(&s, &p);
    mint_gen_token o = step(g, d.eos);
    cr_assert_eq(o.finish, MINT_FINISH_NONE);
    cr_assert_eq(o.n_piece, 0); // a control token has no text
    o = step(g, tok(","));
    cr_assert_eq(o.finish, MINT_FINISH_NONE);
    cr_assert(isnan(o.logprob)); // not asked for
    o = step(g, tok(","));
    cr_assert_eq(o.finish, MINT_FINISH_LENGTH);
    cr_assert_str_eq(mint_finish_name(o.finish), "length");
    cr_assert_eq(o.n_generated, 3);
    mint_gen_free(g);
    mint_sampler_free(s);
}

Test(gen, first_piece_after_a_lone_bos_drops_its_space) {
    for (int after = 0; after < 2; after++) {
        mint_gen_params p = mint_gen_default_params();
        p.after_bos = after;
        mint_sampler *s;
        mint_gen *g = greedy_gen(&s, &p);
        mint_gen_token o = step(g, tok(" Once"));
        expect_text(&o, after ? "Once" : " Once");
        cr_assert_eq(o.n_piece, after ? 4 : 5);
        o = step(g, tok(" upon")); // only the first piece
        expect_text(&o, " upon");
        mint_gen_free(g);
        mint_sampler_free(s);
    }
    cr_assert(mint_vocab_adds_space_prefix(model)); // SentencePiece: "a" is " a"
}

Test(gen, top_alternatives_and_bad_parameters) {
    mint_gen_params p = mint_gen_default_params();
    p.n_top = 3;
    mint_sampler *s;
    mint_gen *g = greedy_gen(&s, &p);
    const int32_t t = tok(",");
    mint_gen_token o = step(g, t);
    cr_assert_eq(o.n_top, 3);
    cr_assert_eq(o.top_id[0], t);
    cr_assert_eq(o.top_logprob[0], o.logprob);
    int32_t ids[3];
    double lp[3];
    mint_top_k(one_hot(t), n_vocab, 3, ids);
    mint_log_softmax(one_hot(t), n_vocab, ids, 3, lp);
    for (int k = 0; k < 3; k++) cr_assert(o.top_id[k] == ids[k] && o.top_logprob[k] == lp[k]);
    mint_gen_free(g);
    p.n_top = MINT_GEN_MAX_TOP + 1;
    mint_err err;
    cr_assert_eq(mint_gen_create(model, s, &p, &g, &err), MINT_E_ARG);
    cr_assert(strstr(err.msg, "n_top") != NULL, "%s", err.msg);
    p.n_top = 0;
    p.n_stop = MINT_GEN_MAX_STOP + 1;
    cr_assert_eq(mint_gen_create(model, s, &p, &g, &err), MINT_E_ARG);
    cr_assert(strstr(err.msg, "n_stop") != NULL, "%s", err.msg);
    mint_sampler_free(s);
}

// post_sampling: the probabilities of the distribution drawn from (top-k 5 at temperature 0.5:
// softmax of the 5 best logits / 0.5), against a double-precision twin; fewer alternatives
// than asked when fewer candidates are left.
Test(gen, post_sampling_probabilities_are_the_drawn_distribution) {
    float l[4096];
    cr_assert(n_vocab <= 4096);
    for (int32_t i = 0; i < n_vocab; i++) l[i] = (float)((i * 37) % 101) * 0.05f;
    mint_sampler_params sp = mint_sampler_default_params();
    sp.temp = 0.5f;
    sp.top_k = 5;
    sp.top_p = 1.0f;
    sp.min_p = 0.0f;
    sp.seed = 3;
    mint_sampler *s;
    mint_err err;
    cr_assert_eq(mint_sampler_create(&sp, n_vocab, &s, &err), MINT_OK, "%s", err.msg);
    mint_gen_params p = mint_gen_default_params();
    p.n_top = 8;
    p.post_sampling = true;
    mint_gen *g;
    cr_assert_eq(mint_gen_create(model, s, &p, &g, &err), MINT_OK, "%s", err.msg);
    mint_gen_token o;
    cr_assert_eq(mint_gen_step(g, l, &o, &err), MINT_OK, "%s", err.msg);
    int32_t ids[5];
    mint_top_k(l, n_vocab, 5, ids);
    double w[5], total = 0;
    for (int k = 0; k < 5; k++) total += w[k] = exp(((double)l[ids[k]] - l[ids[0]]) / 0.5);
    cr_assert_eq(o.n_top, 5, "only the 5 candidates top-k left");
    double sum = 0;
    for (int k = 0; k < 5; k++) {
        cr_assert_eq(o.top_id[k], ids[k]);
        cr_assert_float_eq(exp(o.top_logprob[k]), w[k] / total, 1e-6, "candidate %d", k);
        sum += exp(o.top_logprob[k]);
        if (o.token == ids[k]) cr_assert_float_eq(o.logprob, o.top_logprob[k], 1e-12);
    }
    cr_assert_float_eq(sum, 1.0, 1e-6);
    mint_gen_free(g);
    mint_sampler_free(s);
}

// mint-run -m stories260K.gguf -p "Once upon a time" -n 64 --temp 0, captured before mint-run
// called the library's step (the prompt echo left out).
static const char MINT_RUN_64[] =
    ", there was a little girl named Lily. She loved to play outside in the park. One day, she "
    "saw a big, red ball. She wanted to play with it, but it was too high.\nLily's mom said";

Test(gen, greedy_text_on_stories260k_is_mint_runs) {
    mint_err err;
    mint_ctx_params cp = mint_ctx_default_params();
    cp.n_threads = 1;
    cp.n_ctx = 256;
    mint_ctx *c;
    cr_assert_eq(mint_ctx_create(model, &cp, &c, &err), MINT_OK, "%s", err.msg);
    int32_t ids[16];
    size_t n = 0;
    cr_assert_eq(mint_tokenize(model, "Once upon a time", 16, true, false, ids, 16, &n, &err),
                 MINT_OK);
    cr_assert_eq(mint_eval(c, ids, (int32_t)n, 0, false, &err), MINT_OK, "%s", err.msg);
    mint_gen_params p = mint_gen_default_params();
    p.max_tokens = 64;
    p.logprobs = true;
    mint_sampler *s;
    mint_gen *g = greedy_gen(&s, &p);
    char text[1024] = "";
    size_t len = 0;
    int32_t pos = (int32_t)n, steps = 0;
    for (;;) {
        mint_gen_token o;
        cr_assert_eq(mint_gen_step(g, mint_get_logits(c, -1), &o, &err), MINT_OK, "%s", err.msg);
        cr_assert(o.logprob <= 0);
        memcpy(text + len, o.text, o.n_text);
        len += o.n_text;
        steps++;
        if (o.finish != MINT_FINISH_NONE) {
            cr_assert_eq(o.finish, MINT_FINISH_LENGTH);
            break;
        }
        cr_assert_eq(mint_eval(c, &o.token, 1, pos++, false, &err), MINT_OK, "%s", err.msg);
    }
    text[len] = '\0';
    cr_assert_eq(steps, 64);
    cr_assert_str_eq(text, MINT_RUN_64);
    mint_gen_free(g);
    mint_sampler_free(s);
    mint_ctx_free(c);
}
