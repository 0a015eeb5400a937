// fuzz_json_schema.c - libFuzzer harness for the JSON Schema to GBNF converter
// (runtime/text/json_schema*.c): the input is a schema's text. Invariants: no crash, leak or hang
// within the converter's bounds; the status is OK (a NUL-terminated grammar with a root rule),
// FORMAT (a bad schema) or LIMIT (nesting, size), with one line naming the problem; on OK the
// message is empty or one warning line; the same schema gives the same grammar again.
#include "fuzz_util.h"
#include "mint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *out = NULL, *again = NULL;
    mint_err err, err2;
    mint_status st = mint_json_schema_to_grammar((const char *)data, size, &out, &err);
    FUZZ_CHECK(st == MINT_OK || st == MINT_E_FORMAT || st == MINT_E_LIMIT);
    FUZZ_CHECK(strchr(err.msg, '\n') == NULL);
    if (st == MINT_OK) {
        FUZZ_CHECK(out != NULL && err.code == MINT_OK);
        FUZZ_CHECK(strncmp(out, "root ::= ", 9) == 0 || strstr(out, "\nroot ::= ") != NULL);
        FUZZ_CHECK(strstr(out, "\nspace ::= ") != NULL || strncmp(out, "space ::= ", 10) == 0);
        size_t n = strlen(out);
        FUZZ_CHECK(n > 0 && out[n - 1] == '\n');
    } else {
        FUZZ_CHECK(out == NULL && err.code == st && strncmp(err.msg, "json schema: ", 13) == 0);
    }
    if (size < 2048) {
        mint_status st2 = mint_json_schema_to_grammar((const char *)data, size, &again, &err2);
        FUZZ_CHECK(st2 == st);
        if (st == MINT_OK) FUZZ_CHECK(strcmp(out, again) == 0 && strcmp(err.msg, err2.msg) == 0);
    }
    mint_grammar_text_free(out);
    mint_grammar_text_free(again);
    return 0;
}
