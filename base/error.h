// error.h - filling a caller's mint_err, and the only abort in the library.
//
// Every fallible internal function returns mint_status and takes a `mint_err *err` (may be NULL).
// mint_fail() records the code and a printf-style one-line message and returns the code, so a
// failure is reported in one statement:
//     return mint_fail(err, MINT_E_FORMAT, "gguf: tensor '%s' offset %llu ...", ...);
// MINT_ASSERT is for programmer errors only (a broken invariant, never bad input).
#ifndef MINT_ERROR_H
#define MINT_ERROR_H

#include "mint.h"

#include <stdio.h>
#include <stdlib.h>

#if defined(__GNUC__)
#define MINT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define MINT_PRINTF(a, b)
#endif

// Records `code` and the formatted message in err (when not NULL) and returns `code`.
mint_status mint_fail(mint_err *err, mint_status code, const char *fmt, ...) MINT_PRINTF(3, 4);

// Prefixes err->msg with "prefix: " (for adding context, e.g. the file name, on the way up).
void mint_err_prefix(mint_err *err, const char *fmt, ...) MINT_PRINTF(2, 3);

// Replaces control characters in err->msg by '?': messages quote names and keys taken from files,
// which may hold newlines, and a message must stay one line.
void mint_err_one_line(mint_err *err);

// Clears err to MINT_OK with an empty message.
static inline void mint_err_clear(mint_err *err) {
    if (err) {
        err->code = MINT_OK;
        err->msg[0] = '\0';
    }
}

void mint_assert_fail(const char *expr, const char *file, int line);

#define MINT_ASSERT(x)                                                                             \
    do {                                                                                           \
        if (!(x)) mint_assert_fail(#x, __FILE__, __LINE__);                                        \
    } while (0)

#endif // MINT_ERROR_H
