// test_json_schema.c - mint_json_schema_to_grammar against llama.cpp's json_schema_to_grammar
// (the converter llama-server runs): for every schema of tests/reference/json_schema_cases.json
// (llama.cpp's own test schemas and mint's corpus; tests/reference/README.md says how it was
// made) the identical grammar text, rule names and order included, or a refusal in one line
// naming the keyword's JSON pointer; plus the bounds that keep a hostile schema from taking the
// machine (nesting, the size of what is built).
#include "helpers/helpers.h"
#include "mint.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_object *cases(void) {
    return mt_jget(mt_json_source("tests/reference/json_schema_cases.json"), "cases");
}

// Decodes base64 text (the reference's grammars that are not UTF-8) into a NUL-terminated buffer.
static char *unbase64(const char *s) {
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s);
    char *out = malloc(n + 1), *o = out;
    cr_assert_not_null(out);
    unsigned acc = 0;
    int bits = 0;
    for (; *s && *s != '='; s++) {
        const char *p = strchr(abc, *s);
        cr_assert_not_null(p, "bad base64");
        acc = (acc << 6) | (unsigned)(p - abc);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            *o++ = (char)((acc >> bits) & 0xFF);
        }
    }
    *o = '\0';
    return out;
}

static const char *opt_str(json_object *o, const char *key) {
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

Test(json_schema, every_reference_case_gives_llama_cpp_s_grammar_or_a_refusal) {
    json_object *all = cases();
    size_t n = json_object_array_length(all), n_same = 0, n_refused = 0;
    cr_assert_gt(n, 150, "the reference holds %zu cases", n);
    for (size_t i = 0; i < n; i++) {
        json_object *c = mt_jidx(all, i);
        const char *name = json_object_get_string(mt_jget(c, "name"));
        const char *schema = json_object_get_string(mt_jget(c, "schema"));
        size_t len = (size_t)json_object_get_string_len(mt_jget(c, "schema"));
        bool ok = json_object_get_boolean(mt_jget(c, "ok"));
        char *out = (char *)"unchanged";
        mint_err err;
        mint_status st = mint_json_schema_to_grammar(schema, len, &out, &err);
        cr_assert(strchr(err.msg, '\n') == NULL, "%s: message of more than one line: %s", name,
                  err.msg);
        if (ok) {
            cr_assert_eq(st, MINT_OK, "%s: %s (%s)\nschema: %s", name, mint_status_name(st),
                         err.msg, schema);
            const char *b64 = opt_str(c, "grammar_base64");
            char *want = b64 ? unbase64(b64) : strdup(opt_str(c, "grammar"));
            cr_assert_str_eq(out, want, "%s: not llama.cpp's grammar\nschema: %s", name, schema);
            free(want);
            // The warning llama.cpp prints (a pattern beyond GBNF), or mint's own (a keyword the
            // grammar does not hold, which llama.cpp drops silently), or none.
            if (opt_str(c, "warning"))
                cr_assert(strstr(err.msg, "is not supported") != NULL, "%s: no warning: '%s'", name,
                          err.msg);
            else
                cr_assert(!err.msg[0] || strstr(err.msg, "not held by the grammar"),
                          "%s: unexpected warning: %s", name, err.msg);
            mint_grammar_text_free(out);
            n_same++;
        } else {
            const char *status = json_object_get_string(mt_jget(c, "status"));
            cr_assert_str_eq(mint_status_name(st), status, "%s: %s, expected %s (%s)", name,
                             mint_status_name(st), status, err.msg);
            cr_assert_null(out, "%s: output on failure", name);
            cr_assert_eq(err.code, st);
            cr_assert(strncmp(err.msg, "json schema: ", 13) == 0, "%s: %s", name, err.msg);
            const char *has = opt_str(c, "error_has");
            if (has)
                cr_assert(strstr(err.msg, has) != NULL, "%s: '%s' lacks '%s'", name, err.msg, has);
            n_refused++;
        }
    }
    cr_log_info("json schema: %zu cases, %zu identical grammars, %zu refusals", n, n_same,
                n_refused);
}

// response_format {"type": "json_object"}: any JSON object, from {} or {"type": "object"}.
Test(json_schema, any_object_for_json_object_mode) {
    const char *schemas[] = {"{\"type\":\"object\"}", "{}", " { } \n"};
    for (size_t i = 0; i < 3; i++) {
        char *g = NULL;
        mint_err err;
        cr_assert_eq(mint_json_schema_to_grammar(schemas[i], strlen(schemas[i]), &g, &err), MINT_OK,
                     "%s", err.msg);
        cr_assert(strstr(g, "root ::= object\n") != NULL, "%s", g);
        cr_assert(strstr(g, "object ::= \"{\" space ( string \":\" space value") != NULL, "%s", g);
        cr_assert(strstr(g, "value ::= object | array | string | number | boolean | null\n"), "%s",
                  g);
        mint_grammar_text_free(g);
    }
}

Test(json_schema, arguments_and_lengths) {
    char *g = (char *)"x";
    mint_err err;
    cr_assert_eq(mint_json_schema_to_grammar(NULL, 0, &g, &err), MINT_E_ARG);
    cr_assert_null(g);
    cr_assert_eq(mint_json_schema_to_grammar("{}", 2, NULL, &err), MINT_E_ARG);
    // len bounds the text: what follows is not read.
    cr_assert_eq(mint_json_schema_to_grammar("{\"type\":\"string\"}garbage", 17, &g, NULL),
                 MINT_OK);
    cr_assert(strstr(g, "root ::= \"\\\"\" char* \"\\\"\"\n") != NULL, "%s", g);
    mint_grammar_text_free(g);
    cr_assert_eq(mint_json_schema_to_grammar("", 0, &g, &err), MINT_E_FORMAT);
    const char *nul = "{\"const\":\"a\\u0000b\"}";
    cr_assert_eq(mint_json_schema_to_grammar(nul, strlen(nul), &g, &err), MINT_E_FORMAT, "%s",
                 err.msg);
    mint_grammar_text_free(NULL);
}

// Schemas nested through $ref deeper than the walk's bound, and a grammar whose rule names grow
// with every level (a 100 kB property name, nested 15 deep: the names of the deepest rules alone
// would take hundreds of MiB), are refused in bounded time and memory.
Test(json_schema, bounds_on_nesting_and_size, .timeout = MT_HANG(60)) {
    char *g = NULL;
    mint_err err;
    size_t cap = 64 << 10;
    char *s = malloc(cap);
    cr_assert_not_null(s);
    size_t n = (size_t)snprintf(s, cap, "{\"$defs\":{");
    for (int i = 0; i < 300; i++)
        n += (size_t)snprintf(s + n, cap - n, "\"d%d\":{\"$ref\":\"#/$defs/d%d\"},", i, i + 1);
    n += (size_t)snprintf(s + n, cap - n,
                          "\"d300\":{\"type\":\"string\"}},\"$ref\":\"#/$defs/d0\"}");
    cr_assert_eq(mint_json_schema_to_grammar(s, n, &g, &err), MINT_E_LIMIT, "%s", err.msg);
    cr_assert(strstr(err.msg, "deeper than 200") != NULL, "%s", err.msg);
    cr_assert_null(g);
    free(s);

    size_t key = 100 << 10, depth = 15;
    cap = depth * (key + 64) + 64;
    s = malloc(cap);
    cr_assert_not_null(s);
    n = 0;
    for (size_t d = 0; d < depth; d++) {
        n += (size_t)snprintf(s + n, cap - n, "{\"type\":\"object\",\"properties\":{\"");
        memset(s + n, 'a' + (int)d, key);
        n += key;
        n += (size_t)snprintf(s + n, cap - n, "\":");
    }
    n += (size_t)snprintf(s + n, cap - n, "{\"type\":\"string\"}");
    for (size_t d = 0; d < depth; d++) n += (size_t)snprintf(s + n, cap - n, "}}");
    cr_assert_eq(mint_json_schema_to_grammar(s, n, &g, &err), MINT_E_LIMIT, "%s", err.msg);
    cr_assert(strstr(err.msg, "MiB") != NULL, "%s", err.msg);
    free(s);
}

// Property names that all make the same rule name ("a.b", "a,b", ... become "a-b"), each with its
// own body: llama.cpp numbers them on (a-b0, a-b1, ..., probing from 0 each time); mint stops at
// 4096 of one name rather than spend quadratic time.
Test(json_schema, bound_on_rules_of_one_name, .timeout = MT_HANG(60)) {
    size_t cap = 5000 * 40, n = 0;
    char *s = malloc(cap), *g = NULL;
    cr_assert_not_null(s);
    n += (size_t)snprintf(s + n, cap - n, "{\"properties\":{");
    for (int i = 0; i < 5000; i++) { // "a" + four of .,;:!?*()~ spelling i + "b": all "a-b"
        char run[5];
        for (int d = 0, v = i; d < 4; d++, v /= 10) run[d] = ".,;:!?*()~"[v % 10];
        run[4] = '\0';
        n += (size_t)snprintf(s + n, cap - n, "%s\"a%sb\":{\"const\":%d}", i ? "," : "", run, i);
    }
    n += (size_t)snprintf(s + n, cap - n, "}}");
    mint_err err;
    cr_assert_eq(mint_json_schema_to_grammar(s, n, &g, &err), MINT_E_LIMIT, "%s", err.msg);
    cr_assert(strstr(err.msg, "more than 4096 different rules named a-b") != NULL, "%s", err.msg);
    free(s);
}

// Keywords the grammar does not hold (llama.cpp's converter drops them silently) are named in
// err.msg on MINT_OK; those that restrict nothing, or that the rule holds, are not.
Test(json_schema, warns_about_keywords_the_grammar_does_not_hold) {
    static const struct {
        const char *schema; // the schema
        const char *warn;   // a part of the warning, "" for none
    } cases[] = {
        {"{\"type\":\"number\",\"minimum\":0}", "#/minimum: not held by the grammar"},
        {"{\"properties\":{\"e\":{\"type\":\"string\",\"format\":\"email\"}}}",
         "#/properties/e/format: not held"},
        {"{\"type\":\"array\",\"items\":{},\"uniqueItems\":true}", "#/uniqueItems: not held"},
        {"{\"type\":\"object\",\"minProperties\":1}", "#/minProperties: not held"},
        {"{\"$ref\":\"#/$defs/a\",\"$defs\":{\"a\":{}},\"not\":{}}", "#/not: not held"},
        {"{\"type\":\"string\",\"pattern\":\"^a$\",\"maxLength\":3}", "#/maxLength: not held"},
        {"{\"type\":\"string\",\"pattern\":\"^\\\\w$\"}",
         "#/pattern: pattern ^\\w$ is not supported"},
        {"{\"type\":\"object\",\"additionalProperties\":true}", ""},
        {"{\"type\":\"array\",\"items\":{},\"uniqueItems\":false}", ""},
        {"{\"type\":[\"string\",\"null\"],\"maxLength\":3}", ""},
        {"{\"type\":\"integer\",\"minimum\":0,\"maximum\":9,\"title\":\"digit\"}", ""},
        {"{\"type\":\"string\",\"format\":\"date\",\"description\":\"day\"}", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *g = NULL;
        mint_err err;
        mint_status st =
            mint_json_schema_to_grammar(cases[i].schema, strlen(cases[i].schema), &g, &err);
        cr_assert_eq(st, MINT_OK, "%s: %s", cases[i].schema, err.msg);
        if (cases[i].warn[0])
            cr_assert(strstr(err.msg, cases[i].warn) != NULL, "%s: '%s'", cases[i].schema, err.msg);
        else
            cr_assert_str_empty(err.msg, "%s", cases[i].schema);
        mint_grammar_text_free(g);
    }
}

// The same schema twice gives the same text (no state survives a call).
Test(json_schema, deterministic) {
    const char *s =
        "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"pattern\":"
        "\"^(ab){2,3}.$\"},\"b\":{\"type\":\"integer\",\"minimum\":-5,\"maximum\":300}},"
        "\"additionalProperties\":true}";
    char *a = NULL, *b = NULL;
    cr_assert_eq(mint_json_schema_to_grammar(s, strlen(s), &a, NULL), MINT_OK);
    cr_assert_eq(mint_json_schema_to_grammar(s, strlen(s), &b, NULL), MINT_OK);
    cr_assert_str_eq(a, b);
    mint_grammar_text_free(a);
    mint_grammar_text_free(b);
}
