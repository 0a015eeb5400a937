// fuzz_translate.h - the checks of a harness for a translator of another API's request bodies
// into OpenAI chat bodies (tools/common/anthropic.c, responses.c: the gen_translate shape of
// tools/serve/gen.h), run on arbitrary bytes in a buffer of exactly their length (no NUL after
// it), so that a read past the end is caught.
//
// Checked: the translation is deterministic; a failure leaves a non-empty one-line message and a
// status of 400 or 500; a success gives a JSON object whose "messages" is a list.
#ifndef MINT_FUZZ_TRANSLATE_H
#define MINT_FUZZ_TRANSLATE_H

#include "fuzz_util.h"

#include <json-c/json.h>

typedef bool (*fuzz_translator)(const char *body, size_t len, char **out, char *msg, size_t cap,
                                int *status);

static inline void fuzz_translate(fuzz_translator translate, const uint8_t *data, size_t size) {
    char *body = malloc(size ? size : 1);
    FUZZ_CHECK(body);
    if (size) memcpy(body, data, size);
    char *out = NULL, *again = NULL, msg[300], msg2[300];
    int status = 0, status2 = 0;
    const bool ok = translate(body, size, &out, msg, sizeof msg, &status);
    const bool ok2 = translate(body, size, &again, msg2, sizeof msg2, &status2);
    FUZZ_CHECK(ok == ok2);
    if (ok) {
        FUZZ_CHECK(out && again && !strcmp(out, again));
        json_object *o = json_tokener_parse(out), *m;
        FUZZ_CHECK(o && json_object_is_type(o, json_type_object));
        FUZZ_CHECK(json_object_object_get_ex(o, "messages", &m) &&
                   json_object_is_type(m, json_type_array));
        json_object_put(o);
    } else {
        FUZZ_CHECK(!out && msg[0] && !strchr(msg, '\n') && !strcmp(msg, msg2));
        FUZZ_CHECK(status == 400 || status == 500);
    }
    free(out);
    free(again);
    free(body);
}

#endif // MINT_FUZZ_TRANSLATE_H
