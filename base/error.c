// error.c - status names and the mint_err helpers.
#include "base/error.h"

#include <stdarg.h>
#include <string.h>

const char *mint_status_name(mint_status s) {
    switch (s) {
    case MINT_OK:
        return "ok";
    case MINT_E_IO:
        return "io";
    case MINT_E_FORMAT:
        return "format";
    case MINT_E_UNSUPPORTED:
        return "unsupported";
    case MINT_E_NOMEM:
        return "nomem";
    case MINT_E_ARG:
        return "arg";
    case MINT_E_LIMIT:
        return "limit";
    case MINT_E_NOT_FOUND:
        return "not-found";
    case MINT_E_TYPE:
        return "type";
    }
    return "unknown";
}

// MINT_VERSION_STRING comes from CMakeLists.txt's project(VERSION), as mint.pc's Version does.
const char *mint_version(void) {
    return MINT_VERSION_STRING;
}

mint_status mint_fail(mint_err *err, mint_status code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

void mint_err_prefix(mint_err *err, const char *fmt, ...) {
    if (!err) return;
    char prefix[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    // Build "prefix: old" by hand; truncation at the buffer end is intended.
    char old[MINT_ERR_MSG_MAX];
    memcpy(old, err->msg, sizeof old);
    size_t n = strlen(prefix);
    if (n > sizeof err->msg - 3) n = sizeof err->msg - 3;
    memcpy(err->msg, prefix, n);
    memcpy(err->msg + n, ": ", 2);
    size_t room = sizeof err->msg - n - 3;
    size_t m = strnlen(old, room);
    memcpy(err->msg + n + 2, old, m);
    err->msg[n + 2 + m] = '\0';
}

void mint_err_one_line(mint_err *err) {
    if (!err) return;
    for (char *p = err->msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
}

// The one place the library may stop the process: an internal invariant is broken, which is a
// bug in mint, never a property of the input.
void mint_assert_fail(const char *expr, const char *file, int line) {
    fprintf(stderr, "mint: internal error: %s (%s:%d)\n", expr, file, line);
    abort();
}
