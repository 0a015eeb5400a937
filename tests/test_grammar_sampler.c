// test_grammar_sampler.c - grammars in generation (runtime/text/sampler.c's mask, generate.c's
// step) on stories260K: 50 seeded sampled generations all match their grammar (checked again by
// POSIX regular expressions, an independent matcher); greedy picks the same tokens with and
// without asking about the argmax alone first; lazy grammars leave the text free (the tokens of an
// unconstrained run) until the trigger and constrain it from there; the failures come back from
// mint_gen_step in one line.
#include "base/error.h"
#include "helpers/helpers.h"
#include "runtime/text/grammar.h"
#include "runtime/text/sampler_internal.h"

#include <criterion/criterion.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mint_model *model;
static mint_ctx *ctx;
static int32_t n_vocab;

static void open_model(void) {
    mint_err e;
    cr_assert_eq(mint_model_open(mt_data_path("stories260K.gguf"), NULL, &model, &e), MINT_OK, "%s",
                 e.msg);
    mint_model_desc d;
    mint_model_describe(model, &d);
    n_vocab = d.n_vocab;
    mint_ctx_params cp = mint_ctx_default_params();
    cp.n_threads = 1;
    cp.n_ctx = 256;
    cr_assert_eq(mint_ctx_create(model, &cp, &ctx, &e), MINT_OK, "%s", e.msg);
}

static void close_model(void) {
    mint_ctx_free(ctx);
    mint_model_close(model);
}

TestSuite(grammar_gen, .init = open_model, .fini = close_model);

typedef struct run {
    int32_t tok[160];   // generated tokens (an end-of-generation token included)
    int n;              // how many
    char text[2048];    // their pieces, special tokens rendered (what the grammar reads), no EOG
    size_t len;         // its length
    mint_finish finish; // how it ended
    int n_masked;       // steps whose sample_info says the grammar's mask was computed
    int n_argmax;       // steps where greedy's argmax was allowed alone
} run;

static mint_grammar *make_grammar(const char *text, const mint_grammar_params *p) {
    mint_grammar *g;
    mint_err e;
    cr_assert_eq(mint_grammar_create(model, text, strlen(text), p, &g, &e), MINT_OK, "%s", e.msg);
    return g;
}

// Generates after `prompt` with sampler parameters sp and grammar g (may be NULL) attached;
// returns the status of the step that ended it (*e its message).
static mint_status generate(const char *prompt, mint_sampler_params sp, mint_grammar *g,
                            bool argmax_first, int max_tokens, bool ignore_eos, run *r,
                            mint_err *e) {
    memset(r, 0, sizeof *r);
    int32_t ids[64];
    size_t n = 0;
    cr_assert_eq(mint_tokenize(model, prompt, strlen(prompt), true, false, ids, 64, &n, e),
                 MINT_OK);
    cr_assert_eq(mint_eval(ctx, ids, (int32_t)n, 0, false, e), MINT_OK, "%s", e->msg);
    mint_sampler *s;
    cr_assert_eq(mint_sampler_create(&sp, n_vocab, &s, e), MINT_OK, "%s", e->msg);
    for (size_t i = 0; i < n; i++) mint_sampler_accept(s, ids[i]);
    mint_sampler_set_grammar(s, g);
    mint_sampler_set_argmax_first(s, argmax_first);
    mint_gen_params gp = mint_gen_default_params();
    gp.max_tokens = max_tokens;
    gp.sample_info = true;
    gp.ignore_eos = ignore_eos;
    mint_gen *gen;
    cr_assert_eq(mint_gen_create(model, s, &gp, &gen, e), MINT_OK, "%s", e->msg);
    int32_t pos = (int32_t)n;
    mint_status st = MINT_OK;
    for (;;) {
        mint_gen_token o;
        if ((st = mint_gen_step(gen, mint_get_logits(ctx, -1), &o, e)) != MINT_OK) break;
        cr_assert_lt(r->n, 160);
        r->tok[r->n++] = o.token;
        r->n_argmax += o.info.n_grammar == -1;
        r->n_masked += o.info.n_grammar >= 0 && o.info.n_grammar < n_vocab;
        if (o.finish == MINT_FINISH_EOS) {
            r->finish = o.finish;
            break;
        }
        r->len += mint_token_to_piece(model, o.token, true, r->text + r->len,
                                      sizeof r->text - 1 - r->len);
        if (o.finish != MINT_FINISH_NONE) {
            r->finish = o.finish;
            break;
        }
        cr_assert_eq(mint_eval(ctx, &o.token, 1, pos++, false, e), MINT_OK, "%s", e->msg);
    }
    r->text[r->len] = '\0';
    mint_gen_free(gen);
    mint_sampler_free(s);
    return st;
}

static bool regex_full(const char *re, const char *text) {
    regex_t rx;
    cr_assert_eq(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB), 0, "%s", re);
    const bool ok = regexec(&rx, text, 0, NULL, 0) == 0;
    regfree(&rx);
    return ok;
}

// Whether text is a complete match (or, when !complete, a prefix of one) of the grammar.
static bool grammar_says(const char *grammar, const char *text, bool complete) {
    mint_grammar *g = make_grammar(grammar, NULL);
    mint_err e;
    const bool alive = mint_grammar_accept_text(g, text, strlen(text), &e) == MINT_OK;
    const bool ok = alive && (!complete || mint_grammar_can_end(g));
    mint_grammar_free(g);
    return ok;
}

static const struct {
    const char *grammar, *regex;
} SHAPES[] = {
    {"root ::= (\",\" | \" \" [a-zA-Z]+){4,30} \".\"", "^(,| [a-zA-Z]+){4,30}\\.$"},
    {"root ::= \" {\" ws \"\\\"\" [a-z]+ \"\\\":\" ws [0-9]{1,6} ws \"}\"\nws ::= \" \"?",
     "^ \\{ ?\"[a-z]+\": ?[0-9]{1,6} ?\\}$"},
};

Test(grammar_gen, fifty_seeded_generations_match_their_grammar, .timeout = 600) {
    int n_runs = 0;
    for (size_t k = 0; k < 2; k++) {
        for (uint64_t seed = 1; seed <= 25; seed++) {
            mint_sampler_params sp = mint_sampler_default_params();
            sp.seed = seed;
            mint_grammar *g = make_grammar(SHAPES[k].grammar, NULL);
            run r;
            mint_err e;
            cr_assert_eq(generate("Once upon a time", sp, g, true, 150, false, &r, &e), MINT_OK,
                         "%s", e.msg);
            cr_assert_eq(r.finish, MINT_FINISH_EOS, "shape %zu seed %llu: '%s'", k,
                         (unsigned long long)seed, r.text);
            cr_assert(regex_full(SHAPES[k].regex, r.text), "shape %zu seed %llu: '%s'", k,
                      (unsigned long long)seed, r.text);
            cr_assert(grammar_says(SHAPES[k].grammar, r.text, true), "'%s'", r.text);
            cr_assert_eq(r.n_masked, r.n, "every sampled step masks first");
            mint_grammar_free(g);
            n_runs++;
        }
    }
    cr_assert_eq(n_runs, 50);
}

Test(grammar_gen, greedy_picks_the_same_with_and_without_the_argmax_shortcut) {
    mint_sampler_params sp = mint_sampler_default_params();
    sp.temp = 0;
    int shortcut = 0, masked = 0;
    for (size_t k = 0; k < 2; k++) {
        for (int variant = 0; variant < 2; variant++) {
            const char *prompt = variant ? "Lily and Tom" : "Once upon a time";
            run a, b;
            mint_err e;
            mint_grammar *g = make_grammar(SHAPES[k].grammar, NULL);
            cr_assert_eq(generate(prompt, sp, g, true, 100, false, &a, &e), MINT_OK, "%s", e.msg);
            mint_grammar_reset(g);
            cr_assert_eq(generate(prompt, sp, g, false, 100, false, &b, &e), MINT_OK, "%s", e.msg);
            cr_assert_eq(a.n, b.n);
            cr_assert(memcmp(a.tok, b.tok, (size_t)a.n * sizeof *a.tok) == 0, "'%s' vs '%s'",
                      a.text, b.text);
            cr_assert_eq(b.n_argmax, 0);
            shortcut += a.n_argmax;
            masked += a.n_masked;
            mint_grammar_free(g);
        }
    }
    cr_assert(shortcut > 10 && masked > 10, "both paths taken: %d argmax alone, %d masked",
              shortcut, masked);
}

// Lazy: free until " Lily" (the greedy text says "... a little girl named Lily."), constrained
// from there. The tokens before the trigger are an unconstrained run's.
Test(grammar_gen, lazy_triggers_start_constraining_at_the_trigger) {
    const char *grammar = "root ::= \" Lily\" (\" \" [a-z]+){2} \"!\"";
    mint_sampler_params sp = mint_sampler_default_params();
    sp.temp = 0;
    run free_run;
    mint_err e;
    cr_assert_eq(generate("Once upon a time", sp, NULL, true, 40, false, &free_run, &e), MINT_OK);
    const char *at = strstr(free_run.text, " Lily");
    cr_assert_not_null(at, "'%s'", free_run.text);
    int32_t lily = -1; // the token " Lily"
    for (int i = 0; i < free_run.n; i++) {
        char piece[32];
        const size_t k = mint_token_to_piece(model, free_run.tok[i], true, piece, sizeof piece);
        if (k == 5 && memcmp(piece, " Lily", 5) == 0) lily = free_run.tok[i];
    }
    cr_assert_geq(lily, 0, "' Lily' is one token of this vocabulary");
    const char *word[] = {" Lily"}, *pattern[] = {"named( Li)"};
    for (int kind = 0; kind < 3; kind++) {
        mint_grammar_params p = mint_grammar_default_params();
        if (kind == 0) p.trigger_words = word, p.n_trigger_words = 1;
        if (kind == 1) p.trigger_patterns = pattern, p.n_trigger_patterns = 1;
        if (kind == 2) p.trigger_tokens = &lily, p.n_trigger_tokens = 1;
        mint_grammar *g = make_grammar(grammar, &p);
        run r;
        cr_assert_eq(generate("Once upon a time", sp, g, true, 40, false, &r, &e), MINT_OK, "%s",
                     e.msg);
        const char *start = strstr(r.text, " Lily");
        cr_assert_not_null(start, "kind %d: '%s'", kind, r.text);
        const size_t before = (size_t)(start - r.text);
        cr_assert_eq(before, (size_t)(at - free_run.text), "kind %d", kind);
        cr_assert(memcmp(r.text, free_run.text, before) == 0, "kind %d: free until the trigger",
                  kind);
        cr_assert(regex_full("^ Lily( [a-z]+){2}!$", start), "kind %d: '%s'", kind, start);
        cr_assert_eq(r.finish, MINT_FINISH_EOS, "kind %d: the grammar ends it", kind);
        mint_grammar_free(g);
    }
}

Test(grammar_gen, failures_and_the_end_come_back_from_the_step) {
    mint_sampler_params sp = mint_sampler_default_params();
    sp.temp = 0;
    run r;
    mint_err e;
    // Nothing can be generated: an end-of-generation token as a token terminal is never allowed
    // (only an empty stack allows one).
    char text[64];
    snprintf(text, sizeof text, "root ::= <[%d]>", 2);
    mint_grammar *g = make_grammar(text, NULL);
    cr_assert_eq(generate("Once", sp, g, true, 10, false, &r, &e), MINT_E_ARG);
    cr_assert_str_eq(e.msg, "grammar: no token of the vocabulary can continue the text here");
    mint_grammar_free(g);
    // Complete after one word: the end follows, even with ignore_eos.
    g = make_grammar("root ::= \" upon\"", NULL);
    cr_assert_eq(generate("Once", sp, g, true, 10, true, &r, &e), MINT_OK, "%s", e.msg);
    cr_assert_eq(r.finish, MINT_FINISH_EOS);
    cr_assert_str_eq(r.text, " upon");
    cr_assert_eq(r.n, 2);
    mint_grammar_free(g);
    // A grammar whose stacks explode after its first character: the step fails with the bound's
    // line.
    const char *boom = "root ::= [a-z ] r0 \"b\"\nr0 ::= r1 r1\nr1 ::= r2 r2\nr2 ::= r3 r3\n"
                       "r3 ::= r4 r4\nr4 ::= r5 r5\nr5 ::= r6 r6\nr6 ::= r7 r7\nr7 ::= r8 r8\n"
                       "r8 ::= r9 r9\nr9 ::= ra ra\nra ::= rb rb\nrb ::= rc rc\nrc ::= [a-z ]?\n";
    g = make_grammar(boom, NULL);
    sp.temp = 0.8f;
    const mint_status st = generate("Once", sp, g, true, 100, false, &r, &e);
    cr_assert_eq(st, MINT_E_LIMIT, "%d: %s ('%s')", st, e.msg, r.text);
    cr_assert(strncmp(e.msg, "grammar: ", 9) == 0 && !strchr(e.msg, '\n'), "%s", e.msg);
    mint_grammar_free(g);
}

Test(grammar_gen, sample_info_counts_the_grammars_candidates) {
    mint_grammar *g = make_grammar("root ::= [0-9]+", NULL);
    const uint8_t *allowed;
    const int32_t count = mint_grammar_mask(g, &allowed);
    cr_assert_gt(count, 5);
    mint_sampler_params sp = mint_sampler_default_params();
    mint_sampler *s;
    mint_err e;
    cr_assert_eq(mint_sampler_create(&sp, n_vocab, &s, &e), MINT_OK);
    float *logits = calloc((size_t)n_vocab, sizeof *logits);
    mint_sampler_set_grammar(s, g);
    mint_sample_info info;
    const int32_t t = mint_sampler_sample_info(s, logits, &info);
    cr_assert_eq(info.n_grammar, count);
    cr_assert(allowed[t], "the pick %d is allowed", t);
    cr_assert_leq(info.n_top_k, count);
    mint_sampler_set_grammar(s, NULL);
    mint_sampler_sample_info(s, logits, &info);
    cr_assert_eq(info.n_grammar, n_vocab);
    free(logits);
    mint_sampler_free(s);
    mint_grammar_free(g);
}
