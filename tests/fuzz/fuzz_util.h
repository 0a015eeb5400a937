// fuzz_util.h - what the libFuzzer harnesses share: an invariant check that crashes (so libFuzzer
// records the input) and the splitting of an input into NUL-separated fields.
//
// Harnesses never print: a broken invariant is abort(), and libFuzzer's report (with the
// sanitizer's stack) says where.
#ifndef MINT_FUZZ_UTIL_H
#define MINT_FUZZ_UTIL_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The libFuzzer entry point every harness defines.
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// A failed check names itself on stderr before aborting: fuzz.sh puts that line in its
// summary, which is all a CI log keeps.
#define FUZZ_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FUZZ_CHECK failed: %s:%d: %s\n", __FILE__, __LINE__, #cond);          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

// An input cut at its NUL bytes: a malloc'd copy with a NUL after the last field, and pointers
// to the (NUL-terminated) fields. An input of n NULs has n+1 fields; at most max_fields are kept
// (the rest is dropped).
typedef struct fuzz_fields {
    char *buf;    // [size + 1] the input's bytes and a final NUL
    char **field; // [n] pointers into buf
    size_t *len;  // [n] field lengths in bytes
    size_t n;     // number of fields
} fuzz_fields;

static inline int fuzz_split(const uint8_t *data, size_t size, size_t max_fields,
                             fuzz_fields *out) {
    memset(out, 0, sizeof *out);
    out->buf = malloc(size + 1);
    out->field = malloc((max_fields ? max_fields : 1) * sizeof *out->field);
    out->len = malloc((max_fields ? max_fields : 1) * sizeof *out->len);
    if (!out->buf || !out->field || !out->len) return 0;
    if (size) memcpy(out->buf, data, size);
    out->buf[size] = '\0';
    size_t start = 0;
    for (size_t i = 0; i <= size && out->n < max_fields; i++) {
        if (out->buf[i] != '\0') continue;
        out->field[out->n] = out->buf + start;
        out->len[out->n] = i - start;
        out->n++;
        start = i + 1;
    }
    return 1;
}

static inline void fuzz_fields_free(fuzz_fields *f) {
    free(f->buf);
    free(f->field);
    free(f->len);
}

// For the argument-parser harnesses: argv = {prog, field 0, ..., field n-1, NULL} (argv has room
// for in->n + 2 pointers); returns argc.
static inline int fuzz_argv(const fuzz_fields *in, const char *prog, char **argv) {
    argv[0] = (char *)prog;
    for (size_t i = 0; i < in->n; i++) argv[i + 1] = in->field[i];
    argv[in->n + 1] = NULL;
    return (int)in->n + 1;
}

// Whether s is NULL or one of the fields itself (parsers keep pointers to the arguments).
static inline bool fuzz_is_field(const fuzz_fields *in, const char *s) {
    if (!s) return true;
    for (size_t i = 0; i < in->n; i++)
        if (s == in->field[i]) return true;
    return false;
}

#endif // MINT_FUZZ_UTIL_H
