// fuzz_jinja.c - libFuzzer harness for the Jinja engine (runtime/template/jinja*.c): the input is a
// template's text, rendered with a fixed conversation through mint_chat_apply, under the
// engine's bounds (work, output, memory, nesting). Invariants: no crash, leak or hang; the
// status is OK (text NUL-terminated at its length), FORMAT (a template error) or ARG (the
// template's raise_exception), with a one-line message; rendering is deterministic.
#include "fuzz_util.h"
#include "mint.h"

static const mint_chat_msg conv[] = {
    {"system", "You are a helpful assistant."},
    {"user", "Hello {{ x }} \xc3\xa9"},
    {"assistant", " Hi! "},
    {"user", "Tell me a joke."},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *tmpl = malloc(size + 1);
    if (!tmpl) return 0;
    if (size) memcpy(tmpl, data, size);
    tmpl[size] = '\0';
    char *out = NULL, *again = NULL;
    size_t len = 0, len2 = 0;
    mint_err err, err2;
    mint_status st = mint_chat_apply(tmpl, conv, 4, true, "<s>", "</s>", &out, &len, &err);
    FUZZ_CHECK(st == MINT_OK || st == MINT_E_FORMAT || st == MINT_E_ARG);
    if (st == MINT_OK) {
        FUZZ_CHECK(out != NULL && out[len] == '\0');
    } else {
        FUZZ_CHECK(out == NULL && err.code == st && strchr(err.msg, '\n') == NULL ||
                   st == MINT_E_ARG);
    }
    // Deterministic (no time-dependent global is in the seeds' conversation path other than
    // strftime_now, which a second render in the same second reproduces).
    if (size < 256) {
        mint_status st2 = mint_chat_apply(tmpl, conv, 4, true, "<s>", "</s>", &again, &len2, &err2);
        FUZZ_CHECK(st2 == st);
        if (st == MINT_OK && !strstr(tmpl, "strftime_now"))
            FUZZ_CHECK(len2 == len && memcmp(out, again, len) == 0);
    }
    mint_chat_free(out);
    mint_chat_free(again);
    free(tmpl);
    return 0;
}
