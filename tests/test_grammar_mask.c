// test_grammar_mask.c - which tokens a grammar allows (runtime/text/grammar_mask.c, the token trie
// walk) on real vocabularies of MINT_TEST_DATA: equal to llama.cpp's mask after the same prefixes
// (tests/reference/grammar_cases.json, "masks" and "lazy"), and to a brute-force twin that asks
// about every token alone (mint_grammar_allows: its piece fed through the matcher, no trie), and
// spot-checked by accepting tokens into a fresh grammar.
#include "base/error.h"
#include "helpers/helpers.h"
#include "runtime/text/grammar.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CASES "tests/reference/grammar_cases.json"

// Vocabulary-only models, opened once per test process.
static mint_model *vocab_model(const char *rel) {
    static struct {
        char rel[128];
        mint_model *m;
    } open_models[8];
    for (int i = 0; i < 8; i++)
        if (open_models[i].m && strcmp(open_models[i].rel, rel) == 0) return open_models[i].m;
    const char *path = mt_data_path(rel);
    mint_model_params mp = {.vocab_only = true};
    mint_model *m = NULL;
    mint_err e;
    cr_assert_eq(mint_model_open(path, &mp, &m, &e), MINT_OK, "%s: %s", rel, e.msg);
    for (int i = 0; i < 8; i++)
        if (!open_models[i].m) {
            snprintf(open_models[i].rel, sizeof open_models[i].rel, "%s", rel);
            open_models[i].m = m;
            break;
        }
    return m;
}

static const char *jstr(json_object *o, const char *key) {
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

// A grammar of case c (its vocabulary, text, triggers), fed its prefix.
static mint_grammar *grammar_of(json_object *c, mint_model **model) {
    *model = vocab_model(jstr(c, "vocab"));
    const char *text = jstr(c, "grammar");
    const char *words[8], *pats[8];
    int32_t toks[8];
    mint_grammar_params p = mint_grammar_default_params();
    json_object *a;
    if (json_object_object_get_ex(c, "words", &a)) {
        p.n_trigger_words = (int32_t)json_object_array_length(a);
        for (int32_t i = 0; i < p.n_trigger_words; i++)
            words[i] = json_object_get_string(mt_jidx(a, (size_t)i));
        p.trigger_words = words;
    }
    if (json_object_object_get_ex(c, "patterns", &a)) {
        p.n_trigger_patterns = (int32_t)json_object_array_length(a);
        for (int32_t i = 0; i < p.n_trigger_patterns; i++)
            pats[i] = json_object_get_string(mt_jidx(a, (size_t)i));
        p.trigger_patterns = pats;
    }
    if (json_object_object_get_ex(c, "tokens", &a)) {
        p.n_trigger_tokens = (int32_t)json_object_array_length(a);
        for (int32_t i = 0; i < p.n_trigger_tokens; i++)
            toks[i] = json_object_get_int(mt_jidx(a, (size_t)i));
        p.trigger_tokens = toks;
    }
    mint_grammar *g;
    mint_err e;
    cr_assert_eq(mint_grammar_create(*model, text, strlen(text), &p, &g, &e), MINT_OK, "%s", e.msg);
    const char *pt = jstr(c, "prefix_text");
    if (pt)
        cr_assert_eq(mint_grammar_accept_text(g, pt, strlen(pt), &e), MINT_OK, "'%s': %s", pt,
                     e.msg);
    json_object *prefix;
    if (json_object_object_get_ex(c, "prefix", &prefix))
        for (size_t i = 0; i < json_object_array_length(prefix); i++) {
            const int32_t id = json_object_get_int(mt_jidx(prefix, i));
            cr_assert_eq(mint_grammar_accept(g, id, &e), MINT_OK, "prefix token %zu (%d): %s", i,
                         id, e.msg);
        }
    return g;
}

// Compares a mask with the reference's count and ranges (or hash); `what` names the case.
static void assert_mask(json_object *c, const uint8_t *allowed, int32_t n_vocab, int32_t count,
                        const char *what) {
    const int32_t want = json_object_get_int(mt_jget(c, "count"));
    int32_t recount = 0;
    for (int32_t i = 0; i < n_vocab; i++) recount += allowed[i];
    cr_assert_eq(recount, count, "%s: the mask's count", what);
    json_object *r;
    const bool is_allowed = json_object_object_get_ex(c, "allowed", &r);
    if (is_allowed || json_object_object_get_ex(c, "rejected", &r)) {
        uint8_t *ref = calloc((size_t)n_vocab, 1);
        for (size_t k = 0; k < json_object_array_length(r); k++) {
            json_object *pair = mt_jidx(r, k);
            for (int32_t i = json_object_get_int(mt_jidx(pair, 0));
                 i <= json_object_get_int(mt_jidx(pair, 1)); i++)
                ref[i] = 1;
        }
        for (int32_t i = 0; i < n_vocab; i++) {
            const uint8_t want_i = is_allowed ? ref[i] : !ref[i];
            cr_assert_eq(allowed[i], want_i, "%s: token %d is %s by llama.cpp, %s by mint", what, i,
                         want_i ? "allowed" : "refused", allowed[i] ? "allowed" : "refused");
        }
        free(ref);
    } else {
        int32_t *ids = malloc((size_t)(count ? count : 1) * sizeof *ids);
        int32_t n = 0;
        for (int32_t i = 0; i < n_vocab; i++)
            if (allowed[i]) ids[n++] = i;
        char hex[32];
        snprintf(hex, sizeof hex, "%016llx",
                 (unsigned long long)mint_hash64(ids, (size_t)n * sizeof *ids));
        cr_assert_str_eq(hex, json_object_get_string(mt_jget(c, "xxh3")), "%s: allowed ids' hash",
                         what);
        free(ids);
    }
    cr_assert_eq(count, want, "%s: %d allowed by mint, %d by llama.cpp", what, count, want);
}

static void describe(json_object *c, size_t i, char *buf, size_t cap) {
    const char *note = jstr(c, "prefix_note") ? jstr(c, "prefix_note") : jstr(c, "prefix_text");
    snprintf(buf, cap, "case %zu (%s, grammar '%.30s...', prefix '%s')", i, jstr(c, "vocab"),
             jstr(c, "grammar"), note ? note : "");
    for (char *p = buf; *p; p++)
        if (*p == '\n') *p = ' ';
}

Test(grammar_mask, equals_llama_cpp_and_the_brute_force_twin, .timeout = 900) {
    json_object *cases = mt_jget(mt_json_source(CASES), "masks");
    const size_t n = json_object_array_length(cases);
    cr_assert_gt(n, 100);
    for (size_t i = 0; i < n; i++) {
        json_object *c = mt_jidx(cases, i);
        char what[256];
        describe(c, i, what, sizeof what);
        mint_model *m;
        mint_grammar *g = grammar_of(c, &m);
        const uint8_t *allowed;
        const int32_t count = mint_grammar_mask(g, &allowed);
        const int32_t nv = mint_grammar_n_vocab(g);
        cr_assert_eq(mint_grammar_can_end(g), json_object_get_boolean(mt_jget(c, "can_end")), "%s",
                     what);
        assert_mask(c, allowed, nv, count, what);
        // The twin: every token alone.
        for (int32_t id = 0; id < nv; id++)
            cr_assert_eq(mint_grammar_allows(g, id), allowed[id] != 0,
                         "%s: token %d: the trie walk says %d, the token alone %d", what, id,
                         allowed[id], mint_grammar_allows(g, id));
        // Accepting: some allowed tokens into a fresh grammar (same prefix) succeed, a refused one
        // fails and changes nothing.
        int checked = 0;
        for (int32_t id = (int32_t)(i * 7919 % 97); id < nv && checked < 6; id += 97) {
            if (!allowed[id]) continue;
            mint_grammar *h = grammar_of(c, &m);
            mint_err e;
            cr_assert_eq(mint_grammar_accept(h, id, &e), MINT_OK, "%s: token %d: %s", what, id,
                         e.msg);
            mint_grammar_free(h);
            checked++;
        }
        for (int32_t id = 0; id < nv; id++) {
            if (allowed[id]) continue;
            mint_err e;
            cr_assert_eq(mint_grammar_accept(g, id, &e), MINT_E_ARG, "%s: refused token %d", what,
                         id);
            cr_assert(!strpbrk(e.msg, "\r\n"), "%s", e.msg);
            const uint8_t *again;
            cr_assert_eq(mint_grammar_mask(g, &again), count, "%s: a refusal changed the state",
                         what);
            break;
        }
        mint_grammar_free(g);
    }
}

Test(grammar_mask, lazy_triggers_as_llama_cpp) {
    json_object *cases = mt_jget(mt_json_source(CASES), "lazy");
    const size_t n = json_object_array_length(cases);
    cr_assert_geq(n, 5);
    for (size_t i = 0; i < n; i++) {
        json_object *c = mt_jidx(cases, i);
        mint_model *m;
        mint_grammar *g = grammar_of(c, &m);
        cr_assert_not(mint_grammar_active(g), "case %zu waits at the start", i);
        cr_assert(mint_grammar_can_end(g));
        json_object *seq = mt_jget(c, "sequence"), *awaiting = mt_jget(c, "awaiting");
        for (size_t k = 0; k < json_object_array_length(seq); k++) {
            const int32_t id = json_object_get_int(mt_jidx(seq, k));
            mint_err e;
            cr_assert(mint_grammar_allows(g, id) || mint_grammar_active(g));
            cr_assert_eq(mint_grammar_accept(g, id, &e), MINT_OK, "case %zu token %zu: %s", i, k,
                         e.msg);
            cr_assert_eq(!mint_grammar_active(g), json_object_get_boolean(mt_jidx(awaiting, k)),
                         "case %zu: after token %zu (%d) llama.cpp %s", i, k, id,
                         json_object_get_boolean(mt_jidx(awaiting, k)) ? "still waits"
                                                                       : "has triggered");
        }
        const uint8_t *allowed;
        const int32_t count = mint_grammar_mask(g, &allowed);
        char what[64];
        snprintf(what, sizeof what, "lazy case %zu", i);
        assert_mask(c, allowed, mint_grammar_n_vocab(g), count, what);
        // Reset: waiting again.
        mint_grammar_reset(g);
        cr_assert_not(mint_grammar_active(g));
        mint_grammar_free(g);
    }
}

// Grammars share the model's trie: many at once, each its own state, on two threads.
#include <pthread.h>

typedef struct worker {
    mint_model *m;    // the shared model
    const char *text; // grammar
    const char *feed; // text fed before the mask
    int32_t count;    // allowed tokens found, every round the same
    bool same;        // every round gave the same count
} worker;

static void *work(void *arg) {
    worker *w = arg;
    w->same = true;
    for (int round = 0; round < 8; round++) {
        mint_grammar *g;
        mint_err e;
        if (mint_grammar_create(w->m, w->text, strlen(w->text), NULL, &g, &e) != MINT_OK) {
            w->same = false;
            return NULL;
        }
        mint_grammar_accept_text(g, w->feed, strlen(w->feed), &e);
        const uint8_t *allowed;
        const int32_t c = mint_grammar_mask(g, &allowed);
        if (round == 0) w->count = c;
        w->same &= c == w->count;
        mint_grammar_free(g);
    }
    return NULL;
}

Test(grammar_mask, grammars_share_the_trie_across_threads) {
    mint_model_params mp = {.vocab_only = true};
    mint_model *m;
    mint_err e;
    cr_assert_eq(mint_model_open(mt_data_path("vocab/ggml-vocab-llama-bpe.gguf"), &mp, &m, &e),
                 MINT_OK, "%s", e.msg);
    worker w[2] = {{m, "root ::= \"{\" [a-z\" ]* \"}\"", "{ \"ab", 0, false},
                   {m, "root ::= [0-9]+ (\".\" [0-9]+)?", "12", 0, false}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, work, &w[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++)
        cr_assert(w[i].same && w[i].count > 10, "worker %d: %d", i, w[i].count);
    mint_model_close(m);
}
