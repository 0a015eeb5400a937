// test_chat_presets.c - llama.cpp's built-in chat template names (runtime/text/chat_presets.c):
// every name llama.cpp lists resolves, mint lists exactly those names, and each preset rendered
// by mint_chat_apply equals llama_chat_apply_template's text for that name, byte for byte, on
// every conversation of tests/reference/chat_presets.json with and without the generation
// prompt (tests/reference/README.md says how llama.cpp made it). And the programs: mint-run and
// mint-serve take every name (in any case) and a Jinja template's text as --chat-template, as
// llama-server does, and refuse anything else.
#include "helpers/helpers.h"
#include "helpers/server.h"
#include "helpers/tool.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MSGS 16 // messages of a reference conversation at most

static json_object *reference(void) {
    return mt_json_source("tests/reference/chat_presets.json");
}

// Conversation c of the reference as mint_chat_msg (pointing into the JSON); returns its length.
static size_t conversation(json_object *ref, size_t c, mint_chat_msg *msgs) {
    json_object *conv = mt_jidx(mt_jget(ref, "conversations"), c);
    size_t n = json_object_array_length(conv);
    cr_assert_leq(n, MAX_MSGS);
    for (size_t i = 0; i < n; i++) {
        json_object *m = mt_jidx(conv, i);
        msgs[i].role = json_object_get_string(mt_jget(m, "role"));
        msgs[i].content = json_object_get_string(mt_jget(m, "content"));
    }
    return n;
}

Test(chat_presets, every_llama_cpp_name_resolves_and_mint_lists_exactly_them) {
    json_object *names = mt_jget(reference(), "llama_cpp_names");
    size_t n = json_object_array_length(names);
    cr_assert_geq(n, 54, "llama.cpp lists %zu names", n);
    for (size_t i = 0; i < n; i++) {
        const char *name = json_object_get_string(mt_jidx(names, i));
        cr_expect_not_null(mint_chat_preset(name), "llama.cpp's '%s' is not a preset", name);
        // The same order as llama_chat_builtin_templates (strcmp's).
        const char *mine = mint_chat_preset_name(i);
        cr_expect(mine && strcmp(mine, name) == 0, "name %zu: mint '%s', llama.cpp '%s'", i,
                  mine ? mine : "(none)", name);
    }
    cr_expect_null(mint_chat_preset_name(n), "mint lists more names than llama.cpp");
    cr_expect_null(mint_chat_preset_name((size_t)-1));
    cr_expect_null(mint_chat_preset("nope"));
    cr_expect_null(mint_chat_preset("ChatML"), "names are case-sensitive, as llama.cpp's");
    cr_expect_null(mint_chat_preset(""));
    cr_expect_null(mint_chat_preset(NULL));
}

// Every case of the reference: mint's text equals llama.cpp's. Also with other BOS/EOS texts,
// which must change nothing (llama.cpp writes neither; a literal "<s>" is part of a preset).
Test(chat_presets, every_preset_renders_as_llama_cpp, .timeout = MT_HANG(120)) {
    json_object *ref = reference(), *cases = mt_jget(ref, "cases");
    const size_t n_cases = json_object_array_length(cases);
    cr_assert_geq(n_cases, 54 * 2 * 8, "the reference has %zu cases", n_cases);
    size_t n_bad = 0, n_names = 0;
    const char *last = "";
    for (size_t k = 0; k < n_cases; k++) {
        json_object *c = mt_jidx(cases, k);
        const char *name = json_object_get_string(mt_jget(c, "name"));
        const size_t conv = (size_t)json_object_get_int(mt_jget(c, "conversation"));
        const bool add = json_object_get_boolean(mt_jget(c, "add_ass"));
        const char *want = json_object_get_string(mt_jget(c, "text"));
        const size_t want_len = (size_t)json_object_get_string_len(mt_jget(c, "text"));
        if (strcmp(name, last) != 0) n_names++;
        last = name;
        mint_chat_msg msgs[MAX_MSGS];
        const size_t n = conversation(ref, conv, msgs);
        const char *src = mint_chat_preset(name);
        cr_assert_not_null(src, "%s: no preset", name);
        const char *bos[] = {"<s>", "", "<BOS>"}, *eos[] = {"</s>", "", "<EOS>"};
        for (int v = 0; v < 3; v++) {
            char *out = NULL;
            size_t len = 0;
            mint_err err;
            mint_status st =
                mint_chat_apply(src, n ? msgs : NULL, n, add, bos[v], eos[v], &out, &len, &err);
            const bool same = st == MINT_OK && len == want_len && memcmp(out, want, len) == 0;
            if (!same && n_bad++ < 10)
                cr_log_error("%s, conversation %zu, add_ass %d, bos '%s': llama.cpp [%s], "
                             "mint [%s]",
                             name, conv, add, bos[v], want, st == MINT_OK ? out : err.msg);
            mint_chat_free(out);
        }
    }
    cr_log_info("%zu names, %zu cases x 3 BOS/EOS texts: %zu differ", n_names, n_cases, n_bad);
    cr_expect_eq(n_bad, 0);
}

// ---------------------------------------------------------------------------------------------
// The programs

// A template given as --chat-template's text (no single quote: it goes through a shell).
#define JINJA_ARG                                                                                  \
    "{% for m in messages %}{{ m.role + \": \" + m.content + \"\\n\" }}{% endfor %}"               \
    "{% if add_generation_prompt %}{{ \"bot:\" }}{% endif %}"

// The prompt tokens mint-run -cnv and mint-serve make of one user turn with template src: the
// rendering, BOS added unless the text starts with the BOS text, control tokens parsed.
static long prompt_tokens(const char *src, const char *user) {
    mint_model *m = NULL;
    mint_err err;
    cr_assert_eq(mint_model_open(mt_data_path("stories260K.gguf"), NULL, &m, &err), MINT_OK, "%s",
                 err.msg);
    mint_model_desc d;
    mint_model_describe(m, &d);
    const char *bos = mint_token_text(m, d.bos), *eos = mint_token_text(m, d.eos);
    const mint_chat_msg msg = {"user", user};
    char *text = NULL;
    cr_assert_eq(mint_chat_apply(src, &msg, 1, true, bos, eos, &text, NULL, &err), MINT_OK, "%s",
                 err.msg);
    const bool add_bos = strncmp(text, bos, strlen(bos)) != 0;
    int32_t ids[1024];
    size_t n = 0;
    cr_assert_eq(mint_tokenize(m, text, strlen(text), add_bos, true, ids, 1024, &n, &err), MINT_OK,
                 "%s", err.msg);
    mint_chat_free(text);
    mint_model_close(m);
    return (long)n;
}

// mint-run -cnv: a name (any case) or a template's text renders the first turn with that
// template (the turn evaluates exactly its tokens); "gigachat" writes "<s>" itself, so no BOS is
// added before it.
Test(chat_presets, mint_run_takes_every_name_and_a_template, .timeout = MT_HANG(120)) {
    const char *args[] = {"llama3", "GEMMA", "mistral-v7", "gigachat", JINJA_ARG};
    const char *srcs[] = {mint_chat_preset("llama3"), mint_chat_preset("gemma"),
                          mint_chat_preset("mistral-v7"), mint_chat_preset("gigachat"), JINJA_ARG};
    const char *labels[] = {"chat template llama3", "chat template gemma",
                            "chat template mistral-v7", "chat template gigachat",
                            "chat template given by --chat-template"};
    for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
        char cmd[4400], *out, *err;
        snprintf(cmd, sizeof cmd,
                 "-m '%s' -cnv --chat-template '%s' -p 'Hello there' -v -n 1 --temp 0 -t 1",
                 mt_data_path("stories260K.gguf"), args[i]);
        int rc = run_tool_stdin(&out, &err, "", "mint-run", cmd);
        cr_assert_eq(rc, 0, "%s: %s", args[i], err);
        long evaluated, reused;
        mt_turn_counts(err, 1, &evaluated, &reused);
        const long want = prompt_tokens(srcs[i], "Hello there");
        cr_expect_eq(evaluated, want, "%s: turn 1 evaluated %ld tokens, the rendering has %ld",
                     args[i], evaluated, want);
        cr_expect(strstr(err, labels[i]), "%s: -v does not say '%s':\n%s", args[i], labels[i], err);
        free(out);
        free(err);
    }
    // Neither a name nor a template: a usage error naming the value (exit 2).
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run", "-m '%s' -cnv --chat-template 'llama-9' -t 1",
                      mt_data_path("stories260K.gguf"));
    expect_one_line_error(rc, out, err, "--chat-template expects", "an unknown name");
    cr_assert(strstr(err, "'llama-9'"), "%s", err);
    cr_assert_eq(rc, 2);
    free(out);
    free(err);
    // A template that does not render: refused at start-up (exit 1), named as given.
    rc = run_tool(&out, &err, "mint-run", "-m '%s' -cnv --chat-template '{{ broken' -t 1",
                  mt_data_path("stories260K.gguf"));
    expect_one_line_error(rc, out, err, "given by --chat-template: chat template: template line",
                          "a broken template");
    cr_assert_eq(rc, 1);
    free(out);
    free(err);
    // --help lists the library's names.
    rc = run_tool(&out, &err, "mint-run", "--help");
    cr_assert_eq(rc, 0);
    for (size_t i = 0; mint_chat_preset_name(i); i++)
        cr_expect(strstr(out, mint_chat_preset_name(i)), "--help lacks %s",
                  mint_chat_preset_name(i));
    free(out);
    free(err);
}

// mint-serve: the same values, and (Jinja on, llama-server's default) any other text as a
// template of its own, rendering as itself; a chat request's prompt is the template's rendering.
Test(chat_presets, mint_serve_takes_a_name_and_a_template, .timeout = MT_HANG(120)) {
    const char *args[] = {"Phi3", JINJA_ARG, "This is not a chat template, it is"};
    const char *srcs[] = {mint_chat_preset("phi3"), JINJA_ARG, args[2]};
    for (size_t i = 0; i < 3; i++) {
        mt_server s;
        mt_server_start(&s, "-m '%s' --chat-template '%s' -t 1", mt_data_path("stories260K.gguf"),
                        args[i]);
        json_object *o = mt_post_json(&s, "/v1/chat/completions",
                                      "{\"messages\":[{\"role\":\"user\",\"content\":"
                                      "\"Hello there\"}],\"max_tokens\":1}");
        json_object *usage = mt_jget(o, "usage");
        const long got = json_object_get_int(mt_jget(usage, "prompt_tokens"));
        cr_expect_eq(got, prompt_tokens(srcs[i], "Hello there"), "%s", args[i]);
        json_object_put(o);
        if (i == 2) {
            char *log = mt_server_log(&s);
            cr_expect(strstr(log, "is no built-in name and holds no Jinja"), "%s", log);
            free(log);
        }
        cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
    }
    char *out, *err; // with --no-jinja only names and Jinja text
    int rc = run_tool(&out, &err, "mint-serve", "-m '%s' --chat-template nope --no-jinja",
                      mt_data_path("stories260K.gguf"));
    expect_one_line_error(rc, out, err, "--chat-template expects", "an unknown name");
    cr_assert_eq(rc, 2);
    free(out);
    free(err);
}
