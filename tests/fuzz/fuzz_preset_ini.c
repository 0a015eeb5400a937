// fuzz_preset_ini.c - router mode's --models-preset reader (tools/common/preset_ini.c) on
// arbitrary bytes, in a buffer of exactly their length (no NUL after it), so that a read past the
// end is caught.
//
// Checked: parsing is deterministic; a failure leaves a non-empty message starting with "line "
// or naming the NUL byte and an empty result; a success gives sections with non-empty names free
// of line breaks and ']', distinct names, keys that are llama.cpp identifiers and appear once per
// section, values without line breaks, ';', '#' or blanks at either end, and preset_ini_get
// finding each key's value.
#include "fuzz_util.h"
#include "preset_ini.h"

#include <string.h>

static bool ident(const char *k) {
    if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || *k == '_')) return false;
    for (k++; *k; k++)
        if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') ||
              *k == '_' || *k == '.' || *k == '-'))
            return false;
    return true;
}

static bool edge_blank(const char *s) {
    const size_t n = strlen(s);
    return n && (s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size ? size : 1);
    FUZZ_CHECK(text);
    if (size) memcpy(text, data, size);
    preset_ini a, b;
    char ea[256] = "", eb[256] = "";
    const bool ok = preset_ini_parse(text, size, &a, ea, sizeof ea);
    const bool ok2 = preset_ini_parse(text, size, &b, eb, sizeof eb);
    FUZZ_CHECK(ok == ok2);
    if (!ok) {
        FUZZ_CHECK(ea[0] && !strcmp(ea, eb));
        FUZZ_CHECK(!strncmp(ea, "line ", 5) || strstr(ea, "NUL"));
        FUZZ_CHECK(a.n_sec == 0 && a.sec == NULL);
    } else {
        FUZZ_CHECK(a.n_sec == b.n_sec);
        for (int i = 0; i < a.n_sec; i++) {
            const preset_ini_section *s = &a.sec[i];
            FUZZ_CHECK(s->name[0] && !strpbrk(s->name, "\r\n]") && !edge_blank(s->name));
            FUZZ_CHECK(!strcmp(s->name, b.sec[i].name) && s->n_pair == b.sec[i].n_pair);
            for (int k = 0; k < i; k++) FUZZ_CHECK(strcmp(a.sec[k].name, s->name));
            for (int k = 0; k < s->n_pair; k++) {
                FUZZ_CHECK(ident(s->pair[k].key));
                FUZZ_CHECK(!strpbrk(s->pair[k].value, "\r\n;#") && !edge_blank(s->pair[k].value));
                FUZZ_CHECK(preset_ini_get(s, s->pair[k].key) == s->pair[k].value);
                for (int j = 0; j < k; j++) FUZZ_CHECK(strcmp(s->pair[j].key, s->pair[k].key));
            }
        }
    }
    preset_ini_free(&a);
    preset_ini_free(&b);
    free(text);
    return 0;
}
