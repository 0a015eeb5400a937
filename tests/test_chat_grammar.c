// test_chat_grammar.c - the grammars that force well-formed tool calls (mint_chat_tool_grammar):
// for every family of tests/reference/chat_parse.json, the grammar asked for with
// tool_choice "required" accepts the family's own call texts (one call, parallel calls,
// arguments with escapes and non-ASCII text; the reasoning before them where the family
// reasons) and refuses a call to an unknown function, arguments off their schema and plain
// content; tool_choice "auto" gives the same rules, lazy, with the trigger that opens a call;
// a named function, "none", and bad requests.
#include "helpers/helpers.h"
#include "mint.h"
#include "runtime/text/grammar.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mint_model *small_model(void) {
    static mint_model *m;
    if (!m) m = mt_synth_model("small", "F32");
    return m;
}

// Whether grammar text g accepts text as a whole ("match"), only as a beginning ("prefix"), or
// not at all ("fail").
static const char *verdict(const char *g, const char *text) {
    mint_grammar *gr;
    mint_err e;
    cr_assert_eq(mint_grammar_create(small_model(), g, strlen(g), NULL, &gr, &e), MINT_OK, "%s\n%s",
                 e.msg, g);
    const char *v = mint_grammar_accept_text(gr, text, strlen(text), &e) != MINT_OK ? "fail"
                    : mint_grammar_can_end(gr)                                      ? "match"
                                                                                    : "prefix";
    mint_grammar_free(gr);
    return v;
}

static char *template_source(const char *file) {
    size_t len;
    char *src = (char *)mt_read_file(mt_data_path(mt_path("templates", file)), &len);
    cr_assert_not_null(src);
    src = realloc(src, len + 1);
    src[len] = '\0';
    return src;
}

Test(chat_grammar, required_calls_match_every_family, .timeout = MT_HANG(300)) {
    json_object *ref = mt_json_source("tests/reference/chat_parse.json");
    const char *tools =
        strdup(json_object_to_json_string_ext(mt_jget(ref, "tools"), JSON_C_TO_STRING_PLAIN));
    json_object *cases = mt_jget(ref, "cases");
    size_t n_match = 0, n_families = 0;
    bool seen[MINT_CHAT_FORMAT_COUNT] = {0};
    for (size_t i = 0; i < json_object_array_length(cases); i++) {
        json_object *c = json_object_array_get_idx(cases, i), *texts = mt_jget(c, "texts");
        const char *name = json_object_get_string(mt_jget(c, "name"));
        if (!strstr(name, ":auto")) continue;
        char *src = template_source(json_object_get_string(mt_jget(c, "template")));
        mint_chat_format f = mint_chat_format_detect(src);
        // The reasoning the prompt leaves open, as test_chat_parse works it out.
        mint_chat_msg_ex user = {.role = "user", .content = "Hello"};
        mint_chat_opts ro = mint_chat_default_opts();
        ro.tools = tools;
        char *prompt = NULL;
        size_t plen = 0;
        if (mint_chat_apply_ex(src, &user, 1, &ro, &prompt, &plen, NULL) != MINT_OK) {
            ro.tools = NULL;
            mint_chat_apply_ex(src, &user, 1, &ro, &prompt, &plen, NULL);
        }
        mint_chat_grammar_opts go = {
            .tools = tools,
            .tool_choice = "required",
            .parallel = true,
            .reasoning = mint_chat_format_reasons(src),
            .reasoning_open = prompt && mint_chat_prompt_opens_reasoning(f, prompt, plen)};
        mint_chat_free(prompt);
        mint_chat_grammar g;
        mint_err err;
        mint_status st = mint_chat_tool_grammar(f, &go, &g, &err);
        if (f == MINT_CHAT_FORMAT_CONTENT_ONLY) {
            cr_expect_eq(st, MINT_E_UNSUPPORTED, "%s", name);
            free(src);
            continue;
        }
        cr_assert_eq(st, MINT_OK, "%s: %s", name, err.msg);
        cr_assert(g.gbnf && !g.lazy, "%s", name);
        n_families += !seen[f];
        seen[f] = true;
        for (size_t k = 0; k < json_object_array_length(texts); k++) {
            json_object *t = json_object_array_get_idx(texts, k);
            const char *kind = json_object_get_string(mt_jget(t, "kind"));
            const char *text = json_object_get_string(mt_jget(t, "text"));
            bool call = !strcmp(kind, "call") || !strcmp(kind, "parallel") ||
                        !strcmp(kind, "escapes") ||
                        (!strcmp(kind, "reasoning+call") && f != MINT_CHAT_FORMAT_GPT_OSS);
            if (call) {
                cr_expect_str_eq(verdict(g.gbnf, text), "match", "%s %s: %s", name, kind, text);
                n_match++;
            } else if (!strcmp(kind, "content")) {
                cr_expect_str_eq(verdict(g.gbnf, text), "fail", "%s %s", name, kind);
            }
        }
        mint_chat_grammar_free(&g);
        free(src);
    }
    cr_log_info("%zu call texts of %zu formats match their required grammars", n_match, n_families);
    cr_expect_geq(n_families, 18);
    free((char *)tools);
}

static const char *const TOOLS =
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": "
    "{\"type\": \"object\", \"properties\": {\"location\": {\"type\": \"string\"}, \"days\": "
    "{\"type\": \"integer\"}}, \"required\": [\"location\"]}}}, {\"type\": \"function\", "
    "\"function\": {\"name\": \"search\", \"parameters\": {\"type\": \"object\", "
    "\"properties\": {\"query\": {\"type\": \"string\"}}, \"required\": [\"query\"]}}}]";

Test(chat_grammar, schemas_names_and_choices) {
    mint_chat_grammar_opts go = {.tools = TOOLS, .tool_choice = "required"};
    mint_chat_grammar g;
    mint_err err;
    cr_assert_eq(mint_chat_tool_grammar(MINT_CHAT_FORMAT_HERMES, &go, &g, &err), MINT_OK, "%s",
                 err.msg);
    const char *ok = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": "
                     "\"Paris\", \"days\": 3}}\n</tool_call>";
    cr_expect_str_eq(verdict(g.gbnf, ok), "match");
    // Off the schema: days a string, location missing, an unknown function; two calls when
    // parallel calls are off.
    cr_expect_str_eq(verdict(g.gbnf, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
                                     "{\"location\": \"Paris\", \"days\": \"3\"}}"),
                     "fail");
    cr_expect_str_eq(verdict(g.gbnf, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
                                     "{\"days\": 3}}"),
                     "fail");
    cr_expect_str_eq(verdict(g.gbnf, "<tool_call>\n{\"name\": \"nope\""), "fail");
    char two[512];
    snprintf(two, sizeof two, "%s\n%s", ok, ok);
    cr_expect_str_eq(verdict(g.gbnf, two), "fail");
    mint_chat_grammar_free(&g);
    go.parallel = true;
    cr_assert_eq(mint_chat_tool_grammar(MINT_CHAT_FORMAT_HERMES, &go, &g, &err), MINT_OK);
    cr_expect_str_eq(verdict(g.gbnf, two), "match");
    mint_chat_grammar_free(&g);
    // auto: lazy, started by the call's opening.
    go.tool_choice = "auto";
    cr_assert_eq(mint_chat_tool_grammar(MINT_CHAT_FORMAT_HERMES, &go, &g, &err), MINT_OK);
    cr_expect(g.lazy);
    cr_assert_eq(g.n_trigger_words, 1);
    cr_expect_str_eq(g.trigger_words[0], "<tool_call>");
    cr_expect_str_eq(verdict(g.gbnf, ok), "match");
    mint_chat_grammar_free(&g);
    cr_assert_eq(mint_chat_tool_grammar(MINT_CHAT_FORMAT_LLAMA3, &go, &g, &err), MINT_OK);
    cr_expect(g.lazy && g.n_trigger_patterns == 1 && g.n_trigger_words == 0);
    cr_expect_str_eq(verdict(g.gbnf, "{\"type\": \"function\", \"name\": \"search\", "
                                     "\"parameters\": {\"query\": \"x\"}}"),
                     "match");
    mint_chat_grammar_free(&g);
    // A named function: only it.
    go.tool_choice = "{\"type\": \"function\", \"function\": {\"name\": \"search\"}}";
    cr_assert_eq(mint_chat_tool_grammar(MINT_CHAT_FORMAT_QWEN3_CODER, &go, &g, &err), MINT_OK, "%s",
                 err.msg);
    cr_expect(!g.lazy);
    cr_expect_str_eq(verdict(g.gbnf, "<tool_call>\n<function=search>\n<parameter=query>\nweather "
                                     "in Paris\n</parameter>\n</function>\n</tool_call>"),
                     "match");
    cr_expect_str_eq(verdict(g.gbnf, "<tool_call>\n<function=get_weather>"), "fail");
    mint_chat_grammar_free(&g);
    // The Qwen3-Coder integer parameter is JSON held to its schema.
    go.tool_choice = "required";
    cr_assert_eq(mint_chat_tool_grammar(MINT_CHAT_FORMAT_QWEN3_CODER, &go, &g, &err), MINT_OK);
    const char *xml = "<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n"
                      "</parameter>\n<parameter=days>\n%s\n</parameter>\n</function>\n</tool_call>";
    char buf[512];
    snprintf(buf, sizeof buf, xml, "3");
    cr_expect_str_eq(verdict(g.gbnf, buf), "match");
    snprintf(buf, sizeof buf, xml, "three");
    cr_expect_str_eq(verdict(g.gbnf, buf), "fail");
    mint_chat_grammar_free(&g);
    // none, no tools: no grammar.
    go.tool_choice = "none";
    cr_expect_eq(mint_chat_tool_grammar(MINT_CHAT_FORMAT_HERMES, &go, &g, &err), MINT_OK);
    cr_expect_null(g.gbnf);
    go.tool_choice = "auto";
    go.tools = NULL;
    cr_expect_eq(mint_chat_tool_grammar(MINT_CHAT_FORMAT_HERMES, &go, &g, &err), MINT_OK);
    cr_expect_null(g.gbnf);
    // Bad requests.
    static const struct {
        const char *tools, *choice, *want;
    } bad[] = {
        {"{}", "auto", "tools: expected a JSON array"},
        {"null", "auto", "tools: expected a JSON array"}, // parses, to NULL
        {"nul", "auto", "tools: JSON ends early"},
        {"[{\"type\": \"function\"}]", "auto", "tools[0]"},
        {TOOLS, "sometimes", "tool_choice"},
        {TOOLS, "{\"type\": \"function\", \"function\": {\"name\": \"x\"}}",
         "no tool is named 'x'"},
        {"[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"$ref\": "
         "\"#/nowhere\"}}}]",
         "auto", "tools: f's parameters"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        go.tools = bad[i].tools;
        go.tool_choice = bad[i].choice;
        cr_expect_eq(mint_chat_tool_grammar(MINT_CHAT_FORMAT_HERMES, &go, &g, &err), MINT_E_ARG,
                     "case %zu", i);
        cr_expect(strstr(err.msg, bad[i].want) && !strchr(err.msg, '\n'), "case %zu: %s", i,
                  err.msg);
        cr_expect_null(g.gbnf);
    }
    cr_expect_eq(mint_chat_tool_grammar(MINT_CHAT_FORMAT_COUNT, &go, &g, &err), MINT_E_ARG);
    cr_expect_eq(mint_chat_tool_grammar(MINT_CHAT_FORMAT_HERMES, NULL, &g, &err), MINT_E_ARG);
}
