// test_chat_parse.c - chat formats, the output side: model outputs in every family's syntax parsed
// by mint_chat_parse and held to llama.cpp's common_chat_parse (tests/reference/chat_parse.json,
// made by a program over libllama-common: tests/reference/README.md), each text also cut at every
// byte to check that partial parses only grow (what a server streams as deltas, mint_chat_diff)
// and end in the final parse; then the corners one by one.
#include "helpers/helpers.h"
#include "mint.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Where llama.cpp's answer is not what the text means and mint follows the text: (template,
// kind) and why. Outputs llama.cpp refuses ("does not match the expected format") and malformed
// calls (which llama.cpp refuses or returns as arguments that are not JSON; mint keeps them as
// content) are held to what the text means too.
static const struct {
    const char *template, *kind, *why;
} deviations[] = {
    {"ibm-granite-granite-3.3-2B-Instruct.jinja", "call",
     "llama.cpp reads no calls for Granite 3.3"},
    {"ibm-granite-granite-3.3-2B-Instruct.jinja", "parallel", "(same)"},
    {"ibm-granite-granite-3.3-2B-Instruct.jinja", "escapes", "(same)"},
    {"ibm-granite-granite-3.3-2B-Instruct.jinja", "content+call", "(same)"},
    {"ibm-granite-granite-3.3-2B-Instruct.jinja", "reasoning+call", "(same)"},
    {"deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja", "call",
     "llama.cpp reads no calls for this R1 template (it does not describe tools)"},
    {"deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja", "parallel", "(same)"},
    {"deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja", "escapes", "(same)"},
    {"deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja", "content+call", "(same)"},
    {"meetkai-functionary-medium-v3.2.jinja", "content+call",
     "llama.cpp leaves a call after >>>all text in the content"},
    {"openai-gpt-oss-120b.jinja", "parallel", "llama.cpp reads the first of two calls only"},
};

#define N_DEVIATIONS (sizeof deviations / sizeof deviations[0])

static bool deviates(const char *tmpl, const char *kind, size_t *hits) {
    for (size_t i = 0; i < N_DEVIATIONS; i++)
        if (!strcmp(deviations[i].template, tmpl) && !strcmp(deviations[i].kind, kind)) {
            hits[i]++;
            return true;
        }
    return false;
}

// Text compared without surrounding whitespace, and "<think>\n" as "<think>" (where the prompt
// opened the reasoning and the reasoning stays in the content, llama.cpp puts back the prompt's
// own opening, newline and all).
static char *norm_text(const char *s) {
    size_t n = strlen(s);
    char *o = malloc(n + 1), *w = o;
    for (size_t i = 0; i < n;) {
        if (!strncmp(s + i, "<think>\n", 8)) {
            memcpy(w, "<think>", 7);
            w += 7;
            i += 8;
        } else {
            *w++ = s[i++];
        }
    }
    *w = '\0';
    char *a = o;
    while (*a == ' ' || *a == '\n' || *a == '\t' || *a == '\r') a++;
    char *e = a + strlen(a);
    while (e > a && (e[-1] == ' ' || e[-1] == '\n' || e[-1] == '\t' || e[-1] == '\r')) e--;
    *e = '\0';
    memmove(o, a, (size_t)(e - a) + 1);
    return o;
}

// Whether p is what `want` says ({content, reasoning_content, tool_calls: [{name, arguments
// (JSON text or object), id}]}); a missing content / reasoning_content is not compared; an id
// only when want's is not empty. *why gets the first difference.
static bool same(const mint_chat_parsed *p, json_object *want, char *why, size_t cap) {
    json_object *v;
    const char *fields[2] = {"content", "reasoning_content"};
    const char *got[2] = {p->content, p->reasoning_content};
    for (int k = 0; k < 2; k++) {
        if (!json_object_object_get_ex(want, fields[k], &v)) continue;
        char *a = norm_text(got[k]), *b = norm_text(json_object_get_string(v));
        bool eq = !strcmp(a, b);
        if (!eq) snprintf(why, cap, "%s: mint '%s', want '%s'", fields[k], a, b);
        free(a);
        free(b);
        if (!eq) return false;
    }
    json_object *calls = mt_jget(want, "tool_calls");
    if (json_object_array_length(calls) != p->n_tool_calls) {
        snprintf(why, cap, "%zu tool calls, want %zu", p->n_tool_calls,
                 json_object_array_length(calls));
        return false;
    }
    for (size_t i = 0; i < p->n_tool_calls; i++) {
        json_object *c = json_object_array_get_idx(calls, i), *wa = mt_jget(c, "arguments");
        const mint_chat_tool_call *t = &p->tool_calls[i];
        if (strcmp(t->name, json_object_get_string(mt_jget(c, "name")))) {
            snprintf(why, cap, "call %zu: name '%s'", i, t->name);
            return false;
        }
        json_object *ga = json_tokener_parse(t->arguments), *wj = wa;
        if (json_object_is_type(wa, json_type_string))
            wj = json_tokener_parse(json_object_get_string(wa));
        bool eq = ga && wj && json_object_equal(ga, wj);
        if (!eq)
            snprintf(why, cap, "call %zu (%s): arguments %s, want %s", i, t->name, t->arguments,
                     json_object_to_json_string(wa));
        json_object_put(ga);
        if (wj != wa) json_object_put(wj);
        if (!eq) return false;
        if (json_object_object_get_ex(c, "id", &v) && json_object_get_string_len(v) &&
            strcmp(t->id, json_object_get_string(v))) {
            snprintf(why, cap, "call %zu: id '%s', want '%s'", i, t->id, json_object_get_string(v));
            return false;
        }
    }
    return true;
}

// A case of the reference: its template's format and parse options, the reasoning left open as
// mint renders the prompt (c_plain with the tools; without them where jinja2 cannot show them).
typedef struct ref_case {
    mint_chat_format f;
    mint_chat_parse_opts po;
    const char *file;
} ref_case;

static ref_case setup(json_object *c, const char *tools) {
    ref_case r = {.file = json_object_get_string(mt_jget(c, "template"))};
    size_t len;
    char *src = (char *)mt_read_file(mt_data_path(mt_path("templates", r.file)), &len);
    cr_assert_not_null(src);
    src = realloc(src, len + 1);
    src[len] = '\0';
    r.f = mint_chat_format_detect(src);
    mint_chat_msg_ex user = {.role = "user", .content = "Hello"};
    mint_chat_opts o = mint_chat_default_opts();
    o.tools = tools;
    char *prompt = NULL;
    size_t plen = 0;
    if (mint_chat_apply_ex(src, &user, 1, &o, &prompt, &plen, NULL) != MINT_OK) {
        o.tools = NULL;
        mint_chat_apply_ex(src, &user, 1, &o, &prompt, &plen, NULL);
    }
    r.po = mint_chat_default_parse_opts();
    r.po.tools = tools;
    r.po.reasoning_open = prompt && mint_chat_prompt_opens_reasoning(r.f, prompt, plen);
    if (!strcmp(json_object_get_string(mt_jget(c, "reasoning_format")), "none"))
        r.po.reasoning_format = MINT_REASONING_FORMAT_NONE;
    mint_chat_free(prompt);
    free(src);
    return r;
}

Test(chat_parse, parses_as_llama_cpp, .timeout = MT_HANG(120)) {
    json_object *ref = mt_json_source("tests/reference/chat_parse.json");
    const char *tools =
        strdup(json_object_to_json_string_ext(mt_jget(ref, "tools"), JSON_C_TO_STRING_PLAIN));
    json_object *cases = mt_jget(ref, "cases");
    size_t n_llama = 0, n_meant = 0, n_bad = 0, n_dev = 0, hits[N_DEVIATIONS] = {0};
    for (size_t i = 0; i < json_object_array_length(cases); i++) {
        json_object *c = json_object_array_get_idx(cases, i), *texts = mt_jget(c, "texts");
        ref_case r = setup(c, tools);
        for (size_t k = 0; k < json_object_array_length(texts); k++) {
            json_object *t = json_object_array_get_idx(texts, k), *want = NULL;
            const char *kind = json_object_get_string(mt_jget(t, "kind"));
            const char *text = json_object_get_string(mt_jget(t, "text"));
            bool dev = deviates(r.file, kind, hits);
            n_dev += dev;
            bool llama =
                !dev && strcmp(kind, "malformed") && json_object_object_get_ex(t, "expect", &want);
            if (!llama) want = mt_jget(t, "intent");
            mint_chat_parsed p;
            mint_err err;
            cr_assert_eq(mint_chat_parse(r.f, text, strlen(text), false, &r.po, &p, &err), MINT_OK,
                         "%s", err.msg);
            char why[1024] = "";
            if (!same(&p, want, why, sizeof why)) {
                n_bad++;
                cr_log_error("%s %s (%s, %s): %s", json_object_get_string(mt_jget(c, "name")), kind,
                             mint_chat_format_name(r.f), llama ? "llama.cpp" : "meant", why);
            }
            n_llama += llama;
            n_meant += !llama;
            mint_chat_parsed_free(&p);
        }
    }
    cr_log_info("%zu texts as llama.cpp parses them, %zu as they mean (llama.cpp refuses or "
                "differs: %zu listed deviations); %zu differ",
                n_llama, n_meant, n_dev, n_bad);
    cr_expect_eq(n_bad, 0);
    for (size_t i = 0; i < N_DEVIATIONS; i++)
        cr_expect_gt(hits[i], 0, "deviation %s %s is in no case", deviations[i].template,
                     deviations[i].kind);
    cr_expect_gt(n_llama, 300);
    free((char *)tools);
}

// Feeds every prefix of text as partial, then the whole as final: each parse must extend the
// one before (mint_chat_diff accepts it) and the deltas must add up to the final parse. A
// malformed call contradicts once, where the text shows the arguments cannot be JSON (its call,
// streamed so far, turns into text): the check stops there.
static void stream(mint_chat_format f, const mint_chat_parse_opts *po, const char *text,
                   bool malformed, const char *what) {
    size_t n = strlen(text);
    mint_chat_parsed prev = {0}, cur;
    bool have_prev = false;
    char *content = calloc(1, n * 8 + 64), *reasoning = calloc(1, n * 8 + 64);
    size_t lc = 0, lr = 0;
    for (size_t k = 0; k <= n; k++) {
        mint_err err;
        cr_assert_eq(mint_chat_parse(f, text, k, k < n, po, &cur, &err), MINT_OK, "%s", err.msg);
        mint_chat_delta d[64];
        size_t nd = 0;
        mint_status st = mint_chat_diff(have_prev ? &prev : NULL, &cur, d, 64, &nd, &err);
        if (st != MINT_OK) {
            cr_expect(malformed, "%s: cut at %zu of %zu: %s", what, k, n, err.msg);
            mint_chat_parsed_free(&cur);
            break;
        }
        for (size_t i = 0; i < nd; i++) {
            if (d[i].kind == MINT_DELTA_CONTENT) {
                memcpy(content + lc, d[i].text, d[i].len);
                lc += d[i].len;
            } else if (d[i].kind == MINT_DELTA_REASONING) {
                memcpy(reasoning + lr, d[i].text, d[i].len);
                lr += d[i].len;
            } else {
                cr_expect(d[i].tool_index < cur.n_tool_calls);
                cr_expect((d[i].name != NULL) ==
                              (!have_prev || d[i].tool_index >= prev.n_tool_calls),
                          "%s: a call's name comes with its first delta", what);
            }
        }
        if (have_prev) mint_chat_parsed_free(&prev);
        prev = cur;
        have_prev = true;
    }
    if (have_prev) {
        if (!malformed) {
            cr_expect(lc == prev.content_len && !memcmp(content, prev.content, lc),
                      "%s: streamed content '%.*s', final '%s'", what, (int)lc, content,
                      prev.content);
            cr_expect(lr == prev.reasoning_len && !memcmp(reasoning, prev.reasoning_content, lr),
                      "%s: streamed reasoning '%.*s'", what, (int)lr, reasoning);
        }
        mint_chat_parsed_free(&prev);
    }
    free(content);
    free(reasoning);
}

Test(chat_parse, partial_parses_only_grow, .timeout = MT_HANG(300)) {
    json_object *ref = mt_json_source("tests/reference/chat_parse.json");
    const char *tools =
        strdup(json_object_to_json_string_ext(mt_jget(ref, "tools"), JSON_C_TO_STRING_PLAIN));
    json_object *cases = mt_jget(ref, "cases");
    size_t n = 0;
    for (size_t i = 0; i < json_object_array_length(cases); i++) {
        json_object *c = json_object_array_get_idx(cases, i), *texts = mt_jget(c, "texts");
        ref_case r = setup(c, tools);
        for (size_t k = 0; k < json_object_array_length(texts); k++, n++) {
            json_object *t = json_object_array_get_idx(texts, k);
            const char *kind = json_object_get_string(mt_jget(t, "kind"));
            char what[512];
            snprintf(what, sizeof what, "%s %s", json_object_get_string(mt_jget(c, "name")), kind);
            stream(r.f, &r.po, json_object_get_string(mt_jget(t, "text")),
                   !strcmp(kind, "malformed"), what);
        }
    }
    cr_log_info("%zu texts streamed byte by byte", n);
    free((char *)tools);
}

// ---------------------------------------------------------------------------------------------
// Corners

static mint_chat_parsed parse(mint_chat_format f, const char *text, bool partial,
                              const mint_chat_parse_opts *po) {
    mint_chat_parsed p;
    mint_err err;
    cr_assert_eq(mint_chat_parse(f, text, strlen(text), partial, po, &p, &err), MINT_OK, "%s",
                 err.msg);
    return p;
}

// One call named `name` with arguments `args` (exact text), content and reasoning as given.
static void expect_msg(mint_chat_parsed *p, const char *content, const char *reasoning,
                       const char *name, const char *args) {
    cr_expect_str_eq(p->content, content);
    cr_expect_eq(p->content_len, strlen(content));
    cr_expect_str_eq(p->reasoning_content, reasoning);
    cr_expect_eq(p->n_tool_calls, name ? 1u : 0u);
    if (name && p->n_tool_calls == 1) {
        cr_expect_str_eq(p->tool_calls[0].name, name);
        cr_expect_str_eq(p->tool_calls[0].arguments, args);
    }
    mint_chat_parsed_free(p);
}

static const char *const CALL =
    "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>";

Test(chat_parse, tools_off_or_malformed_stay_text) {
    mint_chat_parse_opts po = mint_chat_default_parse_opts();
    mint_chat_parsed p = parse(MINT_CHAT_FORMAT_HERMES, CALL, false, &po);
    expect_msg(&p, "", "", "f", "{\"a\": 1}");
    po.parse_tools = false; // tool_choice "none", or no tools
    p = parse(MINT_CHAT_FORMAT_HERMES, CALL, false, &po);
    expect_msg(&p, CALL, "", NULL, NULL);
    po = mint_chat_default_parse_opts();
    const char *bad =
        "Sure <tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1,}}</tool_call> ok";
    p = parse(MINT_CHAT_FORMAT_HERMES, bad, false, &po);
    expect_msg(&p, bad, "", NULL, NULL);
    // The arguments as a string holding JSON are read too; a string that is not JSON is not.
    p = parse(MINT_CHAT_FORMAT_HERMES,
              "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>", false,
              &po);
    expect_msg(&p, "", "", "f", "{\"a\": 1}");
    p = parse(MINT_CHAT_FORMAT_HERMES,
              "<tool_call>{\"name\": \"f\", \"arguments\": \"x\"}</tool_call>", false, &po);
    cr_expect_eq(p.n_tool_calls, 0);
    mint_chat_parsed_free(&p);
    // Partial: the marker's first bytes and the call before its name is whole are held back.
    p = parse(MINT_CHAT_FORMAT_HERMES, "Sure <tool_c", true, &po);
    expect_msg(&p, "Sure ", "", NULL, NULL);
    p = parse(MINT_CHAT_FORMAT_HERMES, "<tool_call>\n{\"name\": \"f", true, &po);
    expect_msg(&p, "", "", NULL, NULL);
    p = parse(MINT_CHAT_FORMAT_HERMES,
              "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": ", true, &po);
    expect_msg(&p, "", "", "f", "{\"a\":");
}

Test(chat_parse, reasoning_blocks) {
    mint_chat_parse_opts po = mint_chat_default_parse_opts();
    mint_chat_parsed p =
        parse(MINT_CHAT_FORMAT_HERMES, "<think>\n a b \n</think>\n\nHi", false, &po);
    expect_msg(&p, "Hi", "a b", NULL, NULL);
    // Opened by the prompt: the text starts inside (the model may repeat the opening).
    po.reasoning_open = true;
    p = parse(MINT_CHAT_FORMAT_DEEPSEEK_R1, "a b</think>Hi", false, &po);
    expect_msg(&p, "Hi", "a b", NULL, NULL);
    p = parse(MINT_CHAT_FORMAT_DEEPSEEK_R1, "<think>a b</think>Hi", false, &po);
    expect_msg(&p, "Hi", "a b", NULL, NULL);
    // Never closed: all reasoning (partial: the trailing whitespace and "</thi" held back).
    p = parse(MINT_CHAT_FORMAT_DEEPSEEK_R1, "a b ", false, &po);
    expect_msg(&p, "", "a b", NULL, NULL);
    p = parse(MINT_CHAT_FORMAT_DEEPSEEK_R1, "a b\n</thi", true, &po);
    expect_msg(&p, "", "a b", NULL, NULL);
    // --reasoning-format none: the text as written, the prompt's opening put back.
    po.reasoning_format = MINT_REASONING_FORMAT_NONE;
    p = parse(MINT_CHAT_FORMAT_DEEPSEEK_R1, "a b</think>Hi", false, &po);
    expect_msg(&p, "<think>a b</think>Hi", "", NULL, NULL);
    // Each family's own markers.
    po = mint_chat_default_parse_opts();
    p = parse(MINT_CHAT_FORMAT_COMMAND_R7B,
              "<|START_THINKING|>t<|END_THINKING|><|START_RESPONSE|>Hi<|END_RESPONSE|>", false,
              &po);
    expect_msg(&p, "Hi", "t", NULL, NULL);
    p = parse(MINT_CHAT_FORMAT_MAGISTRAL, "[THINK]t[/THINK]Hi", false, &po);
    expect_msg(&p, "Hi", "t", NULL, NULL);
    p = parse(MINT_CHAT_FORMAT_SEED_OSS, "<seed:think>t</seed:think>Hi", false, &po);
    expect_msg(&p, "Hi", "t", NULL, NULL);
    // A UTF-8 character cut by the end of partial text is held back.
    p = parse(MINT_CHAT_FORMAT_CONTENT_ONLY, "caf\xc3", true, &po);
    expect_msg(&p, "caf", "", NULL, NULL);
    p = parse(MINT_CHAT_FORMAT_CONTENT_ONLY, "<thi", true, &po);
    expect_msg(&p, "", "", NULL, NULL);
}

Test(chat_parse, harmony_channels) {
    mint_chat_parse_opts po = mint_chat_default_parse_opts();
    const char *t = "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>"
                    "commentary to=functions.f <|constrain|>json<|message|>{\"a\": 1}<|call|>";
    mint_chat_parsed p = parse(MINT_CHAT_FORMAT_GPT_OSS, t, false, &po);
    expect_msg(&p, "", "Think.", "f", "{\"a\": 1}");
    // The recipient before the channel, as gpt-oss also writes it.
    p = parse(MINT_CHAT_FORMAT_GPT_OSS,
              " to=functions.f<|channel|>commentary json<|message|>{\"a\": 1}", false, &po);
    expect_msg(&p, "", "", "f", "{\"a\": 1}");
    po.reasoning_format = MINT_REASONING_FORMAT_NONE;
    p = parse(
        MINT_CHAT_FORMAT_GPT_OSS,
        "<|channel|>analysis<|message|>T<|end|><|start|>assistant<|channel|>final<|message|>Hi",
        false, &po);
    expect_msg(&p, "<|channel|>analysis<|message|>T<|end|>Hi", "", NULL, NULL);
}

Test(chat_parse, calls_of_every_shape) {
    mint_chat_parse_opts po = mint_chat_default_parse_opts();
    po.tools = "[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": "
               "{\"type\": \"object\", \"properties\": {\"s\": {\"type\": \"string\"}, \"n\": "
               "{\"type\": \"integer\"}}}}}]";
    // Qwen3-Coder: a parameter the schema calls a string stays one; others are read as JSON, or
    // as a string when they are not JSON.
    mint_chat_parsed p = parse(MINT_CHAT_FORMAT_QWEN3_CODER,
                               "<tool_call>\n<function=f>\n<parameter=s>\n3\n</parameter>\n"
                               "<parameter=n>\n3\n</parameter>\n<parameter=x>\n[1, true]\n"
                               "</parameter>\n<parameter=y>\nnot json\n</parameter>\n</function>\n"
                               "</tool_call>",
                               false, &po);
    expect_msg(&p, "", "", "f", "{\"s\":\"3\",\"n\":3,\"x\":[1, true],\"y\":\"not json\"}");
    // A string streams as it comes; a number waits for its closing.
    p = parse(MINT_CHAT_FORMAT_QWEN3_CODER, "<tool_call>\n<function=f>\n<parameter=s>\nab", true,
              &po);
    expect_msg(&p, "", "", "f", "{\"s\":\"ab");
    p = parse(MINT_CHAT_FORMAT_QWEN3_CODER,
              "<tool_call>\n<function=f>\n<parameter=s>\na\n</parameter>\n<parameter=n>\n12", true,
              &po);
    expect_msg(&p, "", "", "f", "{\"s\":\"a\"");
    // Llama 3: a built-in tool after <|python_tag|>, Python code, a bare JSON call.
    p = parse(MINT_CHAT_FORMAT_LLAMA3,
              "<|python_tag|>brave_search.call(query=\"a \\\"b\\\"\", n=2)", false, &po);
    expect_msg(&p, "", "", "brave_search", "{\"query\":\"a \\\\\\\"b\\\\\\\"\",\"n\":2}");
    p = parse(MINT_CHAT_FORMAT_LLAMA3, "<|python_tag|>print(\"hi\")\n", false, &po);
    expect_msg(&p, "", "", "python", "{\"code\":\"print(\\\"hi\\\")\\n\"}");
    p = parse(MINT_CHAT_FORMAT_LLAMA3,
              "{\"type\": \"function\", \"name\": \"f\", \"parameters\": {}}", false, &po);
    expect_msg(&p, "", "", "f", "{}");
    // Content that only looks like JSON.
    p = parse(MINT_CHAT_FORMAT_LLAMA3, "Use {x} or {\"a\": 1}.", false, &po);
    expect_msg(&p, "Use {x} or {\"a\": 1}.", "", NULL, NULL);
    // Ids: Mistral Nemo's, written after the arguments (a partial parse has none yet).
    const char *nemo = "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}, \"id\": \"abc123def\"}]";
    p = parse(MINT_CHAT_FORMAT_MISTRAL_NEMO, nemo, false, &po);
    cr_expect_str_eq(p.tool_calls[0].id, "abc123def");
    mint_chat_parsed_free(&p);
    mint_chat_parsed q = parse(MINT_CHAT_FORMAT_MISTRAL_NEMO,
                               "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}", true, &po);
    cr_expect_str_eq(q.tool_calls[0].id, "");
    p = parse(MINT_CHAT_FORMAT_MISTRAL_NEMO, nemo, false, &po);
    mint_chat_delta d[4];
    size_t nd;
    cr_expect_eq(mint_chat_diff(&q, &p, d, 4, &nd, NULL), MINT_OK);
    mint_chat_parsed_free(&q);
    mint_chat_parsed_free(&p);
    // Kimi K2: the name inside the id.
    p = parse(MINT_CHAT_FORMAT_KIMI_K2,
              "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_x:3"
              "<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>",
              false, &po);
    cr_expect_str_eq(p.tool_calls[0].id, "functions.get_x:3");
    expect_msg(&p, "", "", "get_x", "{}");
    // Functionary v3.2: the prompt ends with ">>>"; text after "all" is content.
    p = parse(MINT_CHAT_FORMAT_FUNCTIONARY_V3_2, "all\nHi>>>f\n{\"a\": 1}", false, &po);
    expect_msg(&p, "Hi", "", "f", "{\"a\": 1}");
    p = parse(MINT_CHAT_FORMAT_FUNCTIONARY_V3_2, "all\nHi there\nand more", false, &po);
    expect_msg(&p, "Hi there\nand more", "", NULL, NULL);
    // Apertus: the name is the key.
    p = parse(MINT_CHAT_FORMAT_APERTUS, "<|tools_prefix|>[{\"f\": {\"a\": 1}}]<|tools_suffix|>",
              false, &po);
    expect_msg(&p, "", "", "f", "{\"a\": 1}");
}

Test(chat_parse, deltas_and_bad_arguments) {
    mint_chat_parse_opts po = mint_chat_default_parse_opts();
    mint_chat_parsed a = parse(MINT_CHAT_FORMAT_HERMES, "<think>x</think>Hi", true, &po);
    mint_chat_parsed b =
        parse(MINT_CHAT_FORMAT_HERMES,
              "<think>x</think>Hi <tool_call>{\"name\": \"f\", \"arguments\": {}}", true, &po);
    mint_chat_delta d[4];
    size_t nd = 0;
    mint_err err;
    cr_assert_eq(mint_chat_diff(&a, &b, d, 4, &nd, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(nd, 2);
    cr_expect_eq(d[0].kind, MINT_DELTA_CONTENT);
    cr_expect(d[0].len == 1 && d[0].text[0] == ' ');
    cr_expect_eq(d[1].kind, MINT_DELTA_TOOL_CALL);
    cr_expect_str_eq(d[1].name, "f");
    cr_expect_eq(mint_chat_diff(&a, &b, d, 1, &nd, &err), MINT_E_LIMIT);
    cr_expect_eq(mint_chat_diff(&b, &a, d, 4, &nd, &err), MINT_E_ARG); // b does not grow into a
    cr_expect(strstr(err.msg, "does not extend"), "%s", err.msg);
    cr_expect_eq(mint_chat_diff(NULL, &a, d, 4, &nd, &err), MINT_OK);
    cr_expect_eq(nd, 2); // reasoning then content
    mint_chat_parsed_free(&a);
    mint_chat_parsed_free(&b);
    mint_chat_parsed p;
    cr_expect_eq(mint_chat_parse(MINT_CHAT_FORMAT_COUNT, "x", 1, false, &po, &p, &err), MINT_E_ARG);
    cr_expect_eq(mint_chat_parse(MINT_CHAT_FORMAT_HERMES, NULL, 1, false, &po, &p, &err),
                 MINT_E_ARG);
    cr_expect_eq(mint_chat_parse(MINT_CHAT_FORMAT_HERMES, "x", 1, false, &po, NULL, &err),
                 MINT_E_ARG);
    po.tools = "[{";
    cr_expect_eq(mint_chat_parse(MINT_CHAT_FORMAT_HERMES, "x", 1, false, &po, &p, &err),
                 MINT_E_ARG);
    cr_expect(strstr(err.msg, "tools"), "%s", err.msg);
    mint_chat_parsed_free(&p);
    // Text with a NUL byte keeps its length.
    po = mint_chat_default_parse_opts();
    cr_assert_eq(mint_chat_parse(MINT_CHAT_FORMAT_CONTENT_ONLY, "a\0b", 3, false, &po, &p, &err),
                 MINT_OK);
    cr_expect(p.content_len == 3 && !memcmp(p.content, "a\0b", 3));
    mint_chat_parsed_free(&p);
    // Defaults: NULL options are mint_chat_default_parse_opts.
    cr_assert_eq(
        mint_chat_parse(MINT_CHAT_FORMAT_HERMES, CALL, strlen(CALL), false, NULL, &p, NULL),
        MINT_OK);
    cr_expect_eq(p.n_tool_calls, 1);
    mint_chat_parsed_free(&p);
}
