// tools_edit.c - edit_file: exact text replacements in a file, as llama-server's tool makes them.
// Every old text must occur once in the file and is looked up in the original content (not after
// the earlier edits); two edits may not overlap. Models copy text with its trailing blanks lost
// or its quotes and dashes "smartened", so when an old text is not in the file as it is, the
// lookup is made on both sides normalized line by line (trailing spaces, tabs and CRs dropped;
// typographic quotes, dashes and spaces made ASCII) and the lines an edit touches are rewritten
// from the normalized text while every other line keeps its original bytes. Uniqueness is
// always judged on normalized text, so a copy that differs only in such details still counts.
#include "tools_builtin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EDIT_MAX (64u * 1024 * 1024) // bytes of a file edit_file takes

// A growing byte string.
typedef struct buf {
    char *s;
    size_t n, cap;
    bool oom;
} buf;

static void put(buf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        const size_t cap = (b->n + n + 1) * 2;
        char *t = realloc(b->s, cap);
        if (!t) {
            b->oom = true;
            return;
        }
        b->s = t, b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

// The typographic characters a model writes for ASCII ones: UTF-8 bytes and their stand-in.
static const struct {
    const char *utf8;
    char ascii;
} TYPO[] = {
    {"\xE2\x80\x98", '\''}, {"\xE2\x80\x99", '\''}, {"\xE2\x80\x9A", '\''}, {"\xE2\x80\x9B", '\''},
    {"\xE2\x80\x9C", '"'},  {"\xE2\x80\x9D", '"'},  {"\xE2\x80\x9E", '"'},  {"\xE2\x80\x9F", '"'},
    {"\xE2\x80\x90", '-'},  {"\xE2\x80\x91", '-'},  {"\xE2\x80\x92", '-'},  {"\xE2\x80\x93", '-'},
    {"\xE2\x80\x94", '-'},  {"\xE2\x80\x95", '-'},  {"\xE2\x88\x92", '-'},  {"\xC2\xA0", ' '},
    {"\xE2\x80\x82", ' '},  {"\xE2\x80\x83", ' '},  {"\xE2\x80\x84", ' '},  {"\xE2\x80\x85", ' '},
    {"\xE2\x80\x86", ' '},  {"\xE2\x80\x87", ' '},  {"\xE2\x80\x88", ' '},  {"\xE2\x80\x89", ' '},
    {"\xE2\x80\x8A", ' '},  {"\xE2\x80\xAF", ' '},  {"\xE2\x81\x9F", ' '},  {"\xE3\x80\x80", ' '},
};

// One line (no '\n') normalized onto b.
static void normalize_line(buf *b, const char *s, size_t n) {
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) n--;
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        for (size_t t = 0; t < sizeof TYPO / sizeof TYPO[0] && !k; t++) {
            const size_t m = strlen(TYPO[t].utf8);
            if (i + m <= n && !memcmp(s + i, TYPO[t].utf8, m)) {
                put(b, &TYPO[t].ascii, 1);
                k = m;
            }
        }
        if (!k) put(b, s + i, 1), k = 1;
        i += k;
    }
}

// s normalized line by line; the line count and the '\n's stay where they were.
static buf normalize(const char *s, size_t n) {
    buf b = {0};
    put(&b, "", 0);
    for (size_t i = 0;;) {
        const char *nl = memchr(s + i, '\n', n - i);
        const size_t ll = nl ? (size_t)(nl - (s + i)) : n - i;
        normalize_line(&b, s + i, ll);
        if (!nl) break;
        put(&b, "\n", 1);
        i += ll + 1;
    }
    return b;
}

// Non-overlapping occurrences of needle[0..m) in s[0..n), and where the first is (or n).
static size_t occurrences(const char *s, size_t n, const char *needle, size_t m, size_t *first) {
    size_t count = 0;
    *first = n;
    for (size_t i = 0; m && i + m <= n;) {
        const char *hit = memmem(s + i, n - i, needle, m);
        if (!hit) break;
        if (!count) *first = (size_t)(hit - s);
        count++;
        i = (size_t)(hit - s) + m;
    }
    return count;
}

typedef struct edit {
    size_t index;    // its place in the request's edits
    const char *old; // [old_len] as asked
    size_t old_len;
    const char *new_text; // [new_len]
    size_t new_len;
    size_t at, len; // where it matched in the base text, and how long
} edit;

static int by_position(const void *a, const void *b) {
    const edit *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

// The line of s[0..n) holding byte `at`: its start (and *end just past its '\n' or at n).
static size_t line_start(const char *s, size_t at, size_t *end, size_t n) {
    size_t a = at;
    while (a > 0 && s[a - 1] != '\n') a--;
    const char *nl = memchr(s + at, '\n', n - at);
    *end = nl ? (size_t)(nl - s) + 1 : n;
    return a;
}

// The edits (sorted, disjoint) applied to base; with fuzzy set, the lines no edit touches are
// copied from orig instead (base being orig normalized: the same lines, in the same order).
static buf apply(const char *orig, size_t orig_len, const char *base, size_t base_len,
                 const edit *e, size_t n, bool fuzzy) {
    buf out = {0};
    put(&out, "", 0);
    size_t pos = 0;    // in base: what is written up to
    size_t o_line = 0; // fuzzy: the original's byte where base's line at pos begins
    for (size_t i = 0; i < n;) {
        size_t from = e[i].at, to = e[i].at + e[i].len, j = i + 1;
        if (fuzzy) { // whole lines, and the edits that share one
            size_t end;
            from = line_start(base, from, &end, base_len);
            line_start(base, to > from ? to - 1 : to, &to, base_len);
            while (j < n && e[j].at < to)
                line_start(base, e[j].at + e[j].len - 1, &to, base_len), j++;
            // Copy the original's lines before the group: as many as base has in [pos, from).
            for (size_t k = pos; k < from; k++)
                if (base[k] == '\n') {
                    const char *nl = memchr(orig + o_line, '\n', orig_len - o_line);
                    const size_t stop = nl ? (size_t)(nl - orig) + 1 : orig_len;
                    put(&out, orig + o_line, stop - o_line);
                    o_line = stop;
                }
        } else {
            put(&out, base + pos, from - pos);
        }
        size_t p = from;
        for (size_t k = i; k < j; k++) {
            put(&out, base + p, e[k].at - p);
            put(&out, e[k].new_text, e[k].new_len);
            p = e[k].at + e[k].len;
        }
        put(&out, base + p, to - p);
        if (fuzzy) // skip the original's lines that the group replaced
            for (size_t k = from; k < to; k++)
                if (base[k] == '\n') {
                    const char *nl = memchr(orig + o_line, '\n', orig_len - o_line);
                    o_line = nl ? (size_t)(nl - orig) + 1 : orig_len;
                }
        if (fuzzy && to == base_len) o_line = orig_len;
        pos = to;
        i = j;
    }
    if (fuzzy)
        put(&out, orig + o_line, orig_len - o_line);
    else
        put(&out, base + pos, base_len - pos);
    return out;
}

serve_tool_status tool_edit_file(json_object *params, const tool_io *io, serve_tool_stream *st,
                                 json_object **result, char *err, size_t errlen) {
    (void)st;
    *result = NULL;
    const char *path;
    json_object *edits;
    if (!tool_param_str(params, "path", true, NULL, &path, err, errlen)) return SERVE_TOOL_BAD;
    if (!json_object_object_get_ex(params, "edits", &edits)) {
        snprintf(err, errlen, "missing param \"edits\"");
        return SERVE_TOOL_BAD;
    }
    const size_t n =
        json_object_is_type(edits, json_type_array) ? json_object_array_length(edits) : 0;
    if (n == 0) {
        *result = tool_error("\"edits\" must be a non-empty array");
        return SERVE_TOOL_OK;
    }
    edit *e = calloc(n, sizeof *e);
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return SERVE_TOOL_FAILED;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *x = json_object_array_get_idx(edits, i), *o, *w;
        if (!json_object_is_type(x, json_type_object) ||
            !json_object_object_get_ex(x, "old_text", &o) ||
            !json_object_object_get_ex(x, "new_text", &w) ||
            !json_object_is_type(o, json_type_string) ||
            !json_object_is_type(w, json_type_string)) {
            free(e);
            snprintf(err, errlen, "edits[%zu] must be {\"old_text\": string, \"new_text\": string}",
                     i);
            return SERVE_TOOL_BAD;
        }
        e[i] = (edit){i,
                      json_object_get_string(o),
                      (size_t)json_object_get_string_len(o),
                      json_object_get_string(w),
                      (size_t)json_object_get_string_len(w),
                      0,
                      0};
        if (e[i].old_len == 0) {
            free(e);
            *result = tool_error("edits[%zu].old_text must not be empty", i);
            return SERVE_TOOL_OK;
        }
    }
    char *data;
    size_t len;
    bool too_big;
    if (!tool_io_read(io, path, EDIT_MAX, &data, &len, &too_big)) {
        free(e);
        *result = too_big ? tool_error("file too large to edit: %s", path)
                          : tool_error("failed to open file: %s", path);
        return SERVE_TOOL_OK;
    }
    buf norm = normalize(data, len), *olds = calloc(n, sizeof *olds);
    bool fuzzy = false;
    for (size_t i = 0; olds && i < n && !*result; i++) {
        olds[i] = normalize(e[i].old, e[i].old_len);
        size_t at;
        if (occurrences(data, len, e[i].old, e[i].old_len, &at)) continue;
        if (!olds[i].n || !occurrences(norm.s, norm.n, olds[i].s, olds[i].n, &at))
            *result = tool_error("could not find edits[%zu].old_text in %s, it must match the "
                                 "file's current content exactly",
                                 i, path);
        fuzzy = true;
    }
    const char *base = fuzzy ? norm.s : data;
    const size_t base_len = fuzzy ? norm.n : len;
    for (size_t i = 0; olds && i < n && !*result; i++) {
        size_t at;
        const size_t k = occurrences(norm.s, norm.n, olds[i].s, olds[i].n, &at);
        if (k > 1) {
            *result = tool_error("found %zu occurrences of edits[%zu].old_text in %s, it must be "
                                 "unique",
                                 k, i, path);
            break;
        }
        const char *needle = fuzzy ? olds[i].s : e[i].old;
        e[i].len = fuzzy ? olds[i].n : e[i].old_len;
        if (!occurrences(base, base_len, needle, e[i].len, &e[i].at))
            *result = tool_error("could not find edits[%zu].old_text in %s, it must match the "
                                 "file's current content exactly",
                                 i, path);
    }
    qsort(e, n, sizeof *e, by_position);
    for (size_t i = 1; i < n && !*result; i++)
        if (e[i - 1].at + e[i - 1].len > e[i].at)
            *result = tool_error("edits[%zu] and edits[%zu] overlap in %s; merge them into one "
                                 "edit or target disjoint regions",
                                 e[i - 1].index, e[i].index, path);
    serve_tool_status status = SERVE_TOOL_OK;
    if (!olds || norm.oom) {
        snprintf(err, errlen, "out of memory");
        status = SERVE_TOOL_FAILED;
    } else if (!*result) {
        buf out = apply(data, len, base, base_len, e, n, fuzzy);
        if (out.oom) {
            snprintf(err, errlen, "out of memory");
            status = SERVE_TOOL_FAILED;
        } else if (out.n == len && !memcmp(out.s, data, len)) {
            *result = tool_error("no changes made: the replacement(s) produced identical content");
        } else if (!tool_io_write(io, path, out.s, out.n)) {
            *result = tool_error("failed to write file: %s", path);
        } else {
            *result = json_object_new_object();
            json_object_object_add(*result, "result",
                                   json_object_new_string("file edited successfully"));
            json_object_object_add(*result, "path", json_object_new_string(path));
            json_object_object_add(*result, "edits_applied", json_object_new_int((int)n));
        }
        free(out.s);
    }
    for (size_t i = 0; olds && i < n; i++) free(olds[i].s);
    free(olds), free(norm.s), free(e), free(data);
    if (status != SERVE_TOOL_OK) json_object_put(*result), *result = NULL;
    return status;
}
