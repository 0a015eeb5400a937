// test_grammar.c - GBNF grammars (runtime/text/gbnf_parse.c, grammar_match.c, grammar.c) against
// llama.cpp's own grammar engine: which grammars parse and which strings each one matches, can
// still complete or refuses (tests/reference/grammar_cases.json, made by grammar_oracle over
// libllama.so; tests/reference/README.md). Then what mint refuses where llama.cpp would hang,
// the one-line messages with their line:column, and the bounds on the parse stacks.
#include "base/error.h"
#include "helpers/helpers.h"
#include "runtime/text/gbnf.h"
#include "runtime/text/grammar.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CASES "tests/reference/grammar_cases.json"

static void assert_one_line(const mint_err *e) {
    cr_assert(strncmp(e->msg, "grammar: ", 9) == 0, "message '%s' does not start with 'grammar: '",
              e->msg);
    cr_assert(!strpbrk(e->msg, "\r\n"), "message '%s' is not one line", e->msg);
}

// Parses text alone (no vocabulary); returns the status, *e the message.
static mint_status parse(const char *text, mint_err *e) {
    gbnf g;
    const mint_status st = gbnf_parse(text, strlen(text), NULL, NULL, &g, e);
    if (st == MINT_OK) gbnf_free(&g);
    return st;
}

// ---------------------------------------------------------------------------------------------
// Parsing against llama.cpp

Test(grammar_parse, accepts_and_refuses_what_llama_cpp_does) {
    json_object *cases = mt_jget(mt_json_source(CASES), "parse");
    const size_t n = json_object_array_length(cases);
    cr_assert_gt(n, 60);
    int n_ok = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *c = mt_jidx(cases, i);
        const char *text = json_object_get_string(mt_jget(c, "text"));
        const bool ok = json_object_get_boolean(mt_jget(c, "ok"));
        mint_err e = {0};
        const mint_status st = parse(text, &e);
        cr_assert_eq(st == MINT_OK, ok, "case %zu: llama.cpp %s, mint %s (%s):\n%s", i,
                     ok ? "parses" : "refuses", st == MINT_OK ? "parses" : "refuses", e.msg, text);
        if (st != MINT_OK) {
            cr_assert_eq(st, MINT_E_FORMAT, "case %zu: %s", i, e.msg);
            assert_one_line(&e);
        }
        n_ok += ok;
    }
    cr_assert(n_ok > 20 && n_ok < (int)n - 20, "both kinds: %d of %zu parse", n_ok, n);
}

// Refusals where llama.cpp would loop or exhaust memory instead of refusing.
Test(grammar_parse, refuses_what_hangs_llama_cpp) {
    static const char *const texts[] = {
        "root ::= \"a\"{5,2}", // llama.cpp counts max - min optional rules: 2^64
        // Left recursion through a rule that derives the empty text only indirectly: llama.cpp
        // sees no empty alternative and its stack expansion then never ends.
        "root ::= e2 root \"x\" | \"y\"\ne2 ::= empty\nempty ::= \"b\" | ",
        "root ::= x \"a\"\nx ::= y x \"b\" | \"c\"\ny ::= z\nz ::= \"q\"?",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        mint_err e = {0};
        cr_assert_eq(parse(texts[i], &e), MINT_E_FORMAT, "%s", texts[i]);
        assert_one_line(&e);
    }
    // A cycle through indirectly empty rules that pushes nothing comes back to the same stack:
    // accepted, as llama.cpp accepts it, and it matches.
    mint_err e = {0};
    cr_assert_eq(parse("root ::= (x)* \"a\"\nx ::= y\ny ::= \"b\"?", &e), MINT_OK, "%s", e.msg);
}

Test(grammar_parse, bounds_nesting_and_size) {
    // Groups nested deeper than GBNF_MAX_NESTING.
    enum { DEEP = GBNF_MAX_NESTING + 5 };
    char *deep = malloc(16 + 2 * DEEP + 8);
    char *p = deep + sprintf(deep, "root ::= ");
    for (int i = 0; i < DEEP; i++) *p++ = '(';
    p += sprintf(p, "\"a\"");
    for (int i = 0; i < DEEP; i++) *p++ = ')';
    *p = '\0';
    mint_err e = {0};
    cr_assert_eq(parse(deep, &e), MINT_E_FORMAT);
    assert_one_line(&e);
    cr_assert(strstr(e.msg, "nested deeper than 128"), "%s", e.msg);
    free(deep);
    // A long literal repeated 1999 times: more than GBNF_MAX_ELEMS elements.
    char *big = malloc(4096);
    p = big + sprintf(big, "root ::= \"");
    for (int i = 0; i < 2000; i++) *p++ = 'a';
    sprintf(p, "\"{1999}");
    const clock_t t0 = clock();
    cr_assert_eq(parse(big, &e), MINT_E_FORMAT);
    cr_assert(strstr(e.msg, "more than 2097152 elements"), "%s", e.msg);
    cr_assert_lt((double)(clock() - t0) / CLOCKS_PER_SEC, 2.0, "the refusal took too long");
    free(big);
    // A NUL inside the given length.
    cr_assert_eq(gbnf_parse("root ::= \"a\"\0x", 14, NULL, NULL, &(gbnf){0}, &e), MINT_E_FORMAT);
    cr_assert(strstr(e.msg, "NUL"), "%s", e.msg);
    // A token id beyond what any vocabulary holds.
    cr_assert_eq(parse("root ::= <[99999999999]>", &e), MINT_E_FORMAT);
    cr_assert(strstr(e.msg, "outside the vocabulary"), "%s", e.msg);
}

Test(grammar_parse, messages_name_the_place) {
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"root ::= \"a\"\nfoo ::= bar", "grammar: 2:9: undefined rule 'bar', near 'bar'"},
        {"foo ::= \"a\"", "grammar: no rule named 'root' (the start rule)"},
        {"root ::= \"a\n", "grammar: 1:10: a literal '\"' is not closed, near '\"a'"},
        {"root ::= [a-", "grammar: 1:10: a character class '[' is not closed by ']', near '[a-'"},
        {"root ::= \"\\q\"", "grammar: 1:11: unknown escape '\\q', near '\\q\"'"},
        {"root \"a\"", "grammar: 1:6: expecting '::=' after the rule name 'root', near '\"a\"'"},
        {"root ::= \"a\"{,10}", "grammar: 1:13: expecting a number after '{', near '{,10}'"},
        {"root ::= \"a\"{5000}",
         "grammar: 1:13: repetition count 5000 is above 2000, near '{5000}'"},
        {"root ::= (\"a\"", "grammar: 1:10: a group '(' is not closed by ')', near '(\"a\"'"},
        {"root ::= \"a\")", "grammar: 1:13: unexpected ')' in rule 'root' (expecting a line end), "
                            "near ')'"},
        {"root ::= *", "grammar: 1:10: a repetition has nothing before it to repeat, near '*'"},
        {"\n\nroot ::= x\nx ::= x \"a\"",
         "grammar: 4:1: rule 'x' is left-recursive (it can reach itself before matching any text)"},
        {"  # nothing\n", "grammar: 2:1: the grammar has no rule, at the end of the text"},
        {"root ::= \"日本\" \"\\x4\"", "grammar: 1:16: '\\x' needs 2 hex digits, near '\\x4\"'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        mint_err e = {0};
        cr_assert_neq(parse(cases[i].text, &e), MINT_OK, "%s", cases[i].text);
        cr_assert_str_eq(e.msg, cases[i].msg, "for: %s", cases[i].text);
    }
    // A control character quoted from the text stays out of the line.
    mint_err e = {0};
    cr_assert_neq(parse("root ::= \"a\" \x01\x02", &e), MINT_OK);
    assert_one_line(&e);
}

// The rewrite of groups and repetitions numbers and shapes rules as llama.cpp does
// (llama.cpp's parser tests expect these two).
Test(grammar_parse, rewrites_repetitions_like_llama_cpp) {
    gbnf g;
    mint_err e;
    // root ::= "a"{0,5000}: a maximum above 2000 means none: root ::= root_1; root_1 ::= a root_1 |
    cr_assert_eq(gbnf_parse("root ::= \"a\"{0,5000}", 20, NULL, NULL, &g, &e), MINT_OK, "%s",
                 e.msg);
    cr_assert_eq(g.n_rules, 2);
    const gbnf_elem want0[] = {{GBNF_RULE, 1}, {GBNF_END, 0}, {GBNF_CHAR, 'a'},
                               {GBNF_RULE, 1}, {GBNF_ALT, 0}, {GBNF_END, 0}};
    cr_assert_eq(g.n_elem, 6);
    cr_assert(memcmp(g.elem, want0, sizeof want0) == 0);
    gbnf_free(&g);
    // root ::= "a"{3,5}: a a a root_2 with root_2 ::= a root_1 | ; root_1 ::= a |
    cr_assert_eq(gbnf_parse("root ::= \"a\"{3,5}", 17, NULL, NULL, &g, &e), MINT_OK, "%s", e.msg);
    const gbnf_elem want1[] = {{GBNF_CHAR, 'a'}, {GBNF_CHAR, 'a'}, {GBNF_CHAR, 'a'}, {GBNF_RULE, 2},
                               {GBNF_END, 0},    {GBNF_CHAR, 'a'}, {GBNF_ALT, 0},    {GBNF_END, 0},
                               {GBNF_CHAR, 'a'}, {GBNF_RULE, 1},   {GBNF_ALT, 0},    {GBNF_END, 0}};
    cr_assert_eq(g.n_rules, 3);
    cr_assert_eq(g.n_elem, sizeof want1 / sizeof *want1);
    cr_assert(memcmp(g.elem, want1, sizeof want1) == 0);
    gbnf_free(&g);
}

// ---------------------------------------------------------------------------------------------
// Matching strings against llama.cpp

static mint_model *small_model(void) {
    static mint_model *m;
    if (!m) m = mt_synth_model("small", "F32");
    return m;
}

// What mint says of text: "match", "prefix" or "fail".
static const char *verdict(mint_grammar *g, const char *text) {
    mint_grammar_reset(g);
    mint_err e;
    if (mint_grammar_accept_text(g, text, strlen(text), &e) != MINT_OK) return "fail";
    return mint_grammar_can_end(g) ? "match" : "prefix";
}

Test(grammar_match, strings_as_llama_cpp_judges_them) {
    json_object *sets = mt_jget(mt_json_source(CASES), "strings");
    const size_t n = json_object_array_length(sets);
    int total = 0, kinds[3] = {0};
    for (size_t i = 0; i < n; i++) {
        json_object *s = mt_jidx(sets, i);
        const char *name = json_object_get_string(mt_jget(s, "name"));
        const char *text = json_object_get_string(mt_jget(s, "grammar"));
        json_object *root = NULL;
        mint_grammar_params p = mint_grammar_default_params();
        if (json_object_object_get_ex(s, "root", &root)) p.root = json_object_get_string(root);
        mint_grammar *g;
        mint_err e;
        cr_assert_eq(mint_grammar_create(small_model(), text, strlen(text), &p, &g, &e), MINT_OK,
                     "%s: %s", name, e.msg);
        json_object *cases = mt_jget(s, "cases");
        for (size_t k = 0; k < json_object_array_length(cases); k++) {
            json_object *c = mt_jidx(cases, k);
            const char *input = json_object_get_string(mt_jidx(c, 0));
            const char *want = json_object_get_string(mt_jidx(c, 1));
            const char *got = verdict(g, input);
            cr_assert_str_eq(got, want, "%s: '%s': llama.cpp says %s, mint %s", name, input, want,
                             got);
            kinds[want[0] == 'm' ? 0 : want[0] == 'p' ? 1 : 2]++;
            total++;
        }
        mint_grammar_free(g);
    }
    cr_assert_gt(total, 800);
    cr_assert(kinds[0] > 100 && kinds[1] > 100 && kinds[2] > 100, "%d match, %d prefix, %d fail",
              kinds[0], kinds[1], kinds[2]);
}

// Code point by code point and in one piece give the same answer (llama.cpp's tests feed one
// code point at a time; mint_grammar_accept_text takes any cut, pending UTF-8 bytes included).
Test(grammar_match, any_cut_of_the_text_gives_the_same_answer) {
    static const char *const text =
        "{\"k\": \"日本語 😀\", \"n\": [1, -2.5e3, true, null], \"o\": {\"x\": \"\\u00e9\"}}";
    mint_grammar *g;
    mint_err e;
    json_object *sets = mt_jget(mt_json_source(CASES), "strings");
    const char *json_g = json_object_get_string(mt_jget(mt_jidx(sets, 0), "grammar"));
    cr_assert_eq(mint_grammar_create(small_model(), json_g, strlen(json_g), NULL, &g, &e), MINT_OK);
    cr_assert_str_eq(verdict(g, text), "match");
    const size_t len = strlen(text);
    for (size_t cut = 1; cut < len; cut++) {
        mint_grammar_reset(g);
        cr_assert_eq(mint_grammar_accept_text(g, text, cut, &e), MINT_OK, "%zu: %s", cut, e.msg);
        cr_assert_eq(mint_grammar_accept_text(g, text + cut, len - cut, &e), MINT_OK, "%zu: %s",
                     cut, e.msg);
        cr_assert(mint_grammar_can_end(g), "cut at %zu", cut);
    }
    // Byte by byte.
    mint_grammar_reset(g);
    for (size_t i = 0; i < len; i++)
        cr_assert_eq(mint_grammar_accept_text(g, text + i, 1, &e), MINT_OK, "byte %zu: %s", i,
                     e.msg);
    cr_assert(mint_grammar_can_end(g));
    mint_grammar_free(g);
}

// Compacting the matcher (done on its own when a long generation fills its caches) changes no
// answer: the masks after it are the masks of a grammar that was never compacted.
Test(grammar_match, compacting_changes_no_answer) {
    json_object *sets = mt_jget(mt_json_source(CASES), "strings");
    const char *json_g = json_object_get_string(mt_jget(mt_jidx(sets, 0), "grammar"));
    static const char *const text =
        "{\"a\": [1, {\"b\": \"x\\u00e9y\"}, [true, null]], \"c\": -2.5}";
    mint_grammar *a, *b;
    mint_err e;
    cr_assert_eq(mint_grammar_create(small_model(), json_g, strlen(json_g), NULL, &a, &e), MINT_OK);
    cr_assert_eq(mint_grammar_create(small_model(), json_g, strlen(json_g), NULL, &b, &e), MINT_OK);
    const int32_t n = mint_grammar_n_vocab(a);
    uint8_t *want = malloc((size_t)n);
    for (size_t i = 0; text[i]; i++) {
        const uint8_t *ma, *mb;
        mint_grammar_mask(a, &ma);
        memcpy(want, ma, (size_t)n);
        cr_assert_eq(mint_grammar_compact(b), MINT_OK);
        mint_grammar_mask(b, &mb);
        cr_assert(memcmp(want, mb, (size_t)n) == 0, "after %zu bytes", i);
        cr_assert_eq(mint_grammar_can_end(a), mint_grammar_can_end(b));
        cr_assert_eq(mint_grammar_accept_text(a, text + i, 1, &e), MINT_OK, "%s", e.msg);
        cr_assert_eq(mint_grammar_accept_text(b, text + i, 1, &e), MINT_OK, "%s", e.msg);
    }
    cr_assert(mint_grammar_can_end(a) && mint_grammar_can_end(b));
    free(want);
    mint_grammar_free(a);
    mint_grammar_free(b);
}

// ---------------------------------------------------------------------------------------------
// Bounds on the parse stacks: an ambiguous grammar fails with one line, quickly, instead of
// growing without end (llama.cpp has no bound).

Test(grammar_match, an_exploding_grammar_fails_in_one_line) {
    // 2^12 ways to place the a's: every level doubles the stacks that can be next.
    const char *text = "root ::= r0 \"b\"\n"
                       "r0 ::= r1 r1\nr1 ::= r2 r2\nr2 ::= r3 r3\nr3 ::= r4 r4\nr4 ::= r5 r5\n"
                       "r5 ::= r6 r6\nr6 ::= r7 r7\nr7 ::= r8 r8\nr8 ::= r9 r9\nr9 ::= ra ra\n"
                       "ra ::= rb rb\nrb ::= rc rc\nrc ::= \"a\"?\n";
    mint_grammar *g = NULL;
    mint_err e = {0};
    const clock_t t0 = clock();
    mint_status st = mint_grammar_create(small_model(), text, strlen(text), NULL, &g, &e);
    for (int i = 0; st == MINT_OK && i < 64; i++) st = mint_grammar_accept_text(g, "a", 1, &e);
    if (st == MINT_OK) {
        const uint8_t *allowed;
        mint_grammar_mask(g, &allowed);
        st = mint_grammar_failure(g, &e);
    }
    cr_assert_eq(st, MINT_E_LIMIT, "status %d: %s", st, e.msg);
    assert_one_line(&e);
    cr_assert(strstr(e.msg, "parse stacks") || strstr(e.msg, "stack nodes"), "%s", e.msg);
    cr_assert_lt((double)(clock() - t0) / CLOCKS_PER_SEC, 10.0, "the failure took too long");
    mint_grammar_free(g);
}

// ---------------------------------------------------------------------------------------------
// The API's edges

Test(grammar_api, parameters_and_misuse) {
    mint_model *m = small_model();
    mint_grammar *g = NULL;
    mint_err e;
    const char *text = "root ::= \"ab\"";
    cr_assert_eq(mint_grammar_create(NULL, text, 13, NULL, &g, &e), MINT_E_ARG);
    cr_assert_null(g);
    mint_grammar_params p = mint_grammar_default_params();
    p.n_trigger_words = 1;
    cr_assert_eq(mint_grammar_create(m, text, 13, &p, &g, &e), MINT_E_ARG, "no list");
    const char *bad[] = {"(unclosed"};
    p = mint_grammar_default_params();
    p.trigger_patterns = bad;
    p.n_trigger_patterns = 1;
    cr_assert_eq(mint_grammar_create(m, text, 13, &p, &g, &e), MINT_E_ARG);
    cr_assert(strstr(e.msg, "trigger pattern 0 is not a valid regex"), "%s", e.msg);
    assert_one_line(&e);
    const int32_t tok[] = {100000};
    p = mint_grammar_default_params();
    p.trigger_tokens = tok;
    p.n_trigger_tokens = 1;
    cr_assert_eq(mint_grammar_create(m, text, 13, &p, &g, &e), MINT_E_ARG);
    cr_assert(strstr(e.msg, "outside the vocabulary"), "%s", e.msg);
    p = mint_grammar_default_params();
    p.root = "nope";
    cr_assert_eq(mint_grammar_create(m, text, 13, &p, &g, &e), MINT_E_FORMAT);
    cr_assert_str_eq(e.msg, "grammar: no rule named 'nope' (the start rule)");

    cr_assert_eq(mint_grammar_create(m, text, 13, NULL, &g, &e), MINT_OK, "%s", e.msg);
    cr_assert_not(mint_grammar_can_end(g));
    cr_assert_not(mint_grammar_allows(g, -1));
    cr_assert_not(mint_grammar_allows(g, 1 << 20));
    cr_assert_eq(mint_grammar_accept(g, -1, &e), MINT_E_ARG);
    cr_assert_eq(mint_grammar_accept_text(g, "x", 1, &e), MINT_E_ARG);
    assert_one_line(&e);
    cr_assert_eq(mint_grammar_accept_text(g, "ab", 2, &e), MINT_OK); // a refusal changed nothing
    cr_assert(mint_grammar_can_end(g));
    mint_grammar_reset(g);
    cr_assert_not(mint_grammar_can_end(g));
    mint_grammar_free(g);
    mint_grammar_free(NULL);
    mint_grammar_reset(NULL);
    mint_sampler_set_grammar(NULL, NULL);
}
