// cli.c - see cli.h.
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool cli_parse_int(const char *flag, const char *s, long long lo, long long hi, long long *out,
                   char *err, size_t errlen) {
    char *end;
    errno = 0;
    long long v = s && *s ? strtoll(s, &end, 10) : 0;
    if (!s || !*s || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
        snprintf(err, errlen, "%s expects an integer in %lld..%lld, got '%s'", flag, lo, hi,
                 s ? s : "");
        return false;
    }
    *out = v;
    return true;
}

bool cli_parse_float(const char *flag, const char *s, double lo, double hi, double *out, char *err,
                     size_t errlen) {
    char *end;
    errno = 0;
    double v = s && *s ? strtod(s, &end) : 0;
    if (!s || !*s || *end != '\0' || errno == ERANGE || !isfinite(v) || v < lo || v > hi) {
        snprintf(err, errlen, "%s expects a number in %g..%g, got '%s'", flag, lo, hi, s ? s : "");
        return false;
    }
    *out = v;
    return true;
}

int32_t *cli_parse_ids(const char *flag, const char *s, size_t *n, char *err, size_t errlen) {
    size_t cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    int32_t *ids = malloc(cap * sizeof *ids);
    if (!ids) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    size_t k = 0;
    const char *p = s;
    for (;;) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno == ERANGE || v < 0 || v > INT32_MAX || (*end != ',' && *end != 0)) {
            snprintf(err, errlen, "%s expects comma-separated token ids (e.g. 1,15,200), got '%s'",
                     flag, s);
            free(ids);
            return NULL;
        }
        ids[k++] = (int32_t)v;
        if (*end == 0) break;
        p = end + 1;
    }
    *n = k;
    return ids;
}

size_t cli_unescape(char *s, size_t n) {
    static const char from[] = "nrt'\"\\", to[] = "\n\r\t'\"\\";
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        const char *k = i + 1 < n && s[i] == '\\' ? strchr(from, s[i + 1]) : NULL;
        if (k && *k) {
            s[o++] = to[k - from];
            i++;
        } else if (i + 3 < n && s[i] == '\\' && s[i + 1] == 'x' &&
                   isxdigit((unsigned char)s[i + 2]) && isxdigit((unsigned char)s[i + 3])) {
            const char hex[3] = {s[i + 2], s[i + 3], 0};
            s[o++] = (char)strtol(hex, NULL, 16);
            i += 3;
        } else {
            s[o++] = s[i];
        }
    }
    return o;
}

const char *cli_plural(long long n) {
    return n == 1 ? "" : "s";
}

// Length of the valid UTF-8 sequence at s (1..4), or 0 if the bytes there are not one.
static size_t utf8_len(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || len > n) return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    return len;
}

void cli_json_str(FILE *out, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    fputc('"', out);
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        size_t len = utf8_len(u + i, n - i);
        if (len == 0) {
            fprintf(out, "\\u%04x", c); // a stray byte: keep the JSON valid and the byte visible
            i++;
        } else if (len > 1) {
            fwrite(u + i, 1, len, out);
            i += len;
        } else {
            if (c == '"' || c == '\\')
                fprintf(out, "\\%c", c);
            else if (c == '\n')
                fputs("\\n", out);
            else if (c == '\r')
                fputs("\\r", out);
            else if (c == '\t')
                fputs("\\t", out);
            else if (c < 0x20 || c == 0x7f)
                fprintf(out, "\\u%04x", c);
            else
                fputc(c, out);
            i++;
        }
    }
    fputc('"', out);
}

double cli_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

char *cli_read_file(const char *path, size_t *len, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) break;
        size_t k = fread(buf + n, 1, cap - n - 1, f);
        n += k;
        if (k == 0) break;
        if (cap - n < 2) {
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        snprintf(err, errlen, "%s: %s", path, bad ? "read error" : "out of memory");
        return NULL;
    }
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}
