// test_chat_presets.c - llama.cpp's built-in chat template names (runtime/text/chat_presets.c):
// every name llama.cpp lists resolves, mint lists exactly those names, and each preset rendered
// by mint_chat_apply equals llama_chat_apply_template's text for that name, byte for byte, on
// every conversation of tests/reference/chat_presets.json with and without the generation
// prompt (tests/reference/README.md says how llama.cpp made it).
#include "helpers/helpers.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
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
