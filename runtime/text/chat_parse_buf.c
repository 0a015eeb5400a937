// chat_parse_buf.c - the bottom of mint_chat_parse (chat_parse.h): the output buffers a parse
// writes (text, JSON strings, calls) and the scanning helpers over its input (markers, prefixes
// of markers that partial text may stop inside, whitespace, UTF-8 tails, plain content), which
// every format's parser calls and which call nothing of theirs.
#include "runtime/text/chat_parse.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cp_put(cp_out *o, cp_buf *b, const char *p, size_t n) {
    if (o->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            o->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void cp_puts(cp_out *o, cp_buf *b, const char *z) {
    cp_put(o, b, z, strlen(z));
}

void cp_put_json_str(cp_out *o, cp_buf *b, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && (unsigned char)s[j] >= 0x20 && s[j] != '"' && s[j] != '\\') j++;
        cp_put(o, b, s + i, j - i);
        if (j >= n) break;
        char e[8];
        unsigned char c = (unsigned char)s[j];
        const char *z = c == '"'    ? "\\\""
                        : c == '\\' ? "\\\\"
                        : c == '\b' ? "\\b"
                        : c == '\f' ? "\\f"
                        : c == '\n' ? "\\n"
                        : c == '\r' ? "\\r"
                        : c == '\t' ? "\\t"
                                    : NULL;
        if (!z) {
            snprintf(e, sizeof e, "\\u%04x", c);
            z = e;
        }
        cp_puts(o, b, z);
        i = j + 1;
    }
}

cp_call *cp_new_call(cp_out *o) {
    if (o->oom) return NULL;
    if (o->n_calls == o->cap_calls) {
        size_t cap = o->cap_calls ? 2 * o->cap_calls : 4;
        cp_call *c = realloc(o->calls, cap * sizeof *c);
        if (!c) {
            o->oom = true;
            return NULL;
        }
        o->calls = c;
        o->cap_calls = cap;
    }
    cp_call *c = &o->calls[o->n_calls++];
    memset(c, 0, sizeof *c);
    cp_put(o, &c->id, "", 0);
    cp_put(o, &c->name, "", 0);
    cp_put(o, &c->args, "", 0);
    return o->oom ? NULL : c;
}

void cp_drop_calls(cp_out *o, size_t keep) {
    while (o->n_calls > keep) {
        cp_call *c = &o->calls[--o->n_calls];
        free(c->id.p);
        free(c->name.p);
        free(c->args.p);
    }
}

// ---------------------------------------------------------------------------------------------
// Scanning

bool cp_at(const cp_in *in, size_t at, const char *z) {
    size_t k = strlen(z);
    return at <= in->n && in->n - at >= k && memcmp(in->s + at, z, k) == 0;
}

bool cp_at_prefix(const cp_in *in, size_t at, const char *z) {
    size_t k = strlen(z), have = in->n - at;
    return at < in->n && have < k && memcmp(in->s + at, z, have) == 0;
}

size_t cp_find(const cp_in *in, size_t from, const char *z) {
    size_t k = strlen(z);
    if (k == 0 || from > in->n) return SIZE_MAX;
    for (size_t i = from; i + k <= in->n; i++) {
        const char *p = memchr(in->s + i, z[0], in->n - i - k + 1);
        if (!p) return SIZE_MAX;
        i = (size_t)(p - in->s);
        if (memcmp(p, z, k) == 0) return i;
    }
    return SIZE_MAX;
}

bool cp_ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

size_t cp_skip_ws(const cp_in *in, size_t at) {
    while (at < in->n && cp_ws(in->s[at])) at++;
    return at;
}

size_t cp_utf8_tail(const char *s, size_t from, size_t to) {
    // Walk back over continuation bytes to a lead byte; incomplete if it wants more.
    size_t k = 0;
    while (k < 3 && to - k > from && ((unsigned char)s[to - k - 1] & 0xC0) == 0x80) k++;
    if (to - k == from) return 0;
    unsigned char b = (unsigned char)s[to - k - 1];
    size_t want = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    return want > k + 1 ? k + 1 : 0;
}

// Where partial text may be stopping inside one of the markers: the first position p in
// [from, to) such that s[p..to) is a proper prefix of a marker (to when none).
size_t cp_held_from(const cp_in *in, size_t from, size_t to, const char *const *marks,
                    size_t n_marks) {
    for (size_t p = from; p < to; p++)
        for (size_t m = 0; m < n_marks; m++) {
            if (!marks[m] || !marks[m][0]) continue;
            size_t k = strlen(marks[m]), have = to - p;
            if (have < k && memcmp(in->s + p, marks[m], have) == 0) return p;
        }
    return to;
}

void cp_content(const cp_in *in, size_t from, size_t to, cp_out *out) {
    const cp_spec *s = in->spec;
    while (from < to) {
        if (out->content.n == 0)
            while (from < to && cp_ws(in->s[from])) from++;
        // Drop the answer's own markers.
        size_t next = to, len = 0;
        const char *drop[2] = {s->content_open, s->content_close};
        for (int d = 0; d < 2; d++) {
            if (!drop[d]) continue;
            size_t at = cp_find(in, from, drop[d]);
            if (at < next && at + strlen(drop[d]) <= to) {
                next = at;
                len = strlen(drop[d]);
            }
        }
        cp_put(out, &out->content, in->s + from, next - from);
        from = next + len;
    }
}
