// json_doc.c - strict parsing (json-c) plus a raw-text scan for duplicate keys and \u0000.
#include "formats/json_doc.h"

#include "base/error.h"
#include "base/fileio.h"
#include "formats/mapped_file.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// The raw scan. json-c has already checked the syntax when this runs, but even in strict mode it
// accepts a few non-JSON forms (single-quoted keys, NaN / Infinity, "1.", raw control characters
// in strings); the scan refuses those, and finds duplicate keys. It checks every index against
// the length, so it is safe on any input.

typedef struct key_ref {
    const char *p; // key bytes (into the text, or a decoded copy in `owned`)
    size_t len;    // bytes
} key_ref;

typedef struct frame {
    bool is_obj;   // object (keys) or array
    bool want_key; // the next string in this object is a key
    key_ref *keys; // [n] keys seen so far
    size_t n;      // keys
    size_t cap;    // allocated
    size_t at;     // offset of the opening brace
} frame;

enum { MAX_DEPTH = 64 }; // json-c refuses nesting deeper than 32 before the scan runs

typedef struct scan {
    const char *text; // [len] the document
    size_t len;       // bytes
    frame st[MAX_DEPTH];
    int depth;      // frames in use
    char **owned;   // [n_owned] decoded keys
    size_t n_owned; // count
} scan;

static int cmp_key(const void *a, const void *b) {
    const key_ref *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return memcmp(x->p, y->p, x->len);
}

// A key with escapes is compared by its decoded value ("a" and "\u0061" are the same key).
static mint_status decode_key(scan *s, size_t begin, size_t end, key_ref *out) {
    // text[begin] and text[end] are the quotes.
    json_tokener *tok = json_tokener_new();
    if (!tok) return MINT_E_NOMEM;
    json_object *o = json_tokener_parse_ex(tok, s->text + begin, (int)(end - begin + 1));
    json_tokener_free(tok);
    if (!o || !json_object_is_type(o, json_type_string)) {
        json_object_put(o);
        return MINT_E_FORMAT;
    }
    size_t n = (size_t)json_object_get_string_len(o);
    char **owned = realloc(s->owned, (s->n_owned + 1) * sizeof *owned);
    char *copy = malloc(n + 1);
    if (owned) s->owned = owned;
    if (!owned || !copy) {
        free(copy);
        json_object_put(o);
        return MINT_E_NOMEM;
    }
    memcpy(copy, json_object_get_string(o), n + 1);
    json_object_put(o);
    s->owned[s->n_owned++] = copy;
    *out = (key_ref){copy, n};
    return MINT_OK;
}

static mint_status add_key(frame *fr, key_ref k) {
    if (fr->n == fr->cap) {
        size_t cap = fr->cap ? fr->cap * 2 : 16;
        key_ref *keys = realloc(fr->keys, cap * sizeof *keys);
        if (!keys) return MINT_E_NOMEM;
        fr->keys = keys;
        fr->cap = cap;
    }
    fr->keys[fr->n++] = k;
    return MINT_OK;
}

static mint_status close_object(scan *s, frame *fr, const char *name, size_t base, mint_err *err) {
    if (fr->n < 2) return MINT_OK;
    qsort(fr->keys, fr->n, sizeof *fr->keys, cmp_key);
    for (size_t i = 1; i < fr->n; i++) {
        if (cmp_key(&fr->keys[i - 1], &fr->keys[i]) != 0) continue;
        const key_ref *k = &fr->keys[i];
        return mint_fail(err, MINT_E_FORMAT,
                         "%s: duplicate key \"%.*s\" in the object at byte %zu%s", name,
                         (int)(k->len < 80 ? k->len : 80), k->p, base + fr->at,
                         s->depth == 1 ? " (the top level)" : "");
    }
    return MINT_OK;
}

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? ; returns its length or 0.
static size_t number_len(const char *t, size_t n) {
    size_t i = 0;
    if (i < n && t[i] == '-') i++;
    if (i < n && t[i] == '0') {
        i++;
    } else if (i < n && t[i] >= '1' && t[i] <= '9') {
        while (i < n && is_digit(t[i])) i++;
    } else {
        return 0;
    }
    if (i < n && t[i] == '.') {
        i++;
        if (i >= n || !is_digit(t[i])) return 0;
        while (i < n && is_digit(t[i])) i++;
    }
    if (i < n && (t[i] == 'e' || t[i] == 'E')) {
        i++;
        if (i < n && (t[i] == '+' || t[i] == '-')) i++;
        if (i >= n || !is_digit(t[i])) return 0;
        while (i < n && is_digit(t[i])) i++;
    }
    return i;
}

static size_t literal_len(const char *t, size_t n) {
    static const char *const words[] = {"true", "false", "null"};
    for (int w = 0; w < 3; w++) {
        size_t m = strlen(words[w]);
        if (n >= m && memcmp(t, words[w], m) == 0) return m;
    }
    return 0;
}

static mint_status scan_text(scan *s, const char *name, size_t base, mint_err *err) {
    const char *t = s->text;
    size_t n = s->len;
    for (size_t i = 0; i < n;) {
        char c = t[i];
        frame *top = s->depth ? &s->st[s->depth - 1] : NULL;
        if (c == '"') {
            size_t j = i + 1;
            bool escaped = false;
            while (j < n && t[j] != '"') {
                if ((unsigned char)t[j] < 0x20)
                    return mint_fail(err, MINT_E_FORMAT,
                                     "%s: control character 0x%02x inside a string at byte %zu",
                                     name, (unsigned char)t[j], base + j);
                if (t[j] == '\\') {
                    if (j + 5 < n && memcmp(t + j + 1, "u0000", 5) == 0)
                        return mint_fail(err, MINT_E_FORMAT,
                                         "%s: string at byte %zu contains \\u0000 (a NUL "
                                         "character)",
                                         name, base + i);
                    escaped = true;
                    j += 2;
                } else {
                    j++;
                }
            }
            if (j >= n) return mint_fail(err, MINT_E_FORMAT, "%s: unterminated string", name);
            if (top && top->is_obj && top->want_key) {
                key_ref k = {t + i + 1, j - i - 1};
                mint_status st = escaped ? decode_key(s, i, j, &k) : MINT_OK;
                if (st == MINT_OK) st = add_key(top, k);
                if (st == MINT_E_NOMEM) return mint_fail(err, st, "%s: out of memory", name);
                if (st != MINT_OK)
                    return mint_fail(err, st, "%s: bad key at byte %zu", name, base + i);
                top->want_key = false;
            }
            i = j + 1;
            continue;
        }
        if (c == '{' || c == '[') {
            if (s->depth == MAX_DEPTH)
                return mint_fail(err, MINT_E_FORMAT, "%s: nesting deeper than %d at byte %zu", name,
                                 MAX_DEPTH, base + i);
            frame *fr = &s->st[s->depth++];
            memset(fr, 0, sizeof *fr);
            fr->is_obj = c == '{';
            fr->want_key = fr->is_obj;
            fr->at = i;
        } else if (c == ',' && top && top->is_obj) {
            top->want_key = true;
        } else if (c == '-' || is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            size_t k =
                c == '-' || is_digit(c) ? number_len(t + i, n - i) : literal_len(t + i, n - i);
            if (k == 0)
                return mint_fail(err, MINT_E_FORMAT, "%s: not a JSON number or literal at byte %zu",
                                 name, base + i);
            i += k;
            continue;
        } else if (c != ':' && c != ',' && c != ' ' && c != '\t' && c != '\n' && c != '\r' &&
                   c != '}' && c != ']') {
            return mint_fail(err, MINT_E_FORMAT, "%s: unexpected character '%c' at byte %zu", name,
                             c >= 0x20 && c < 0x7f ? c : '?', base + i);
        } else if ((c == '}' || c == ']') && top) {
            mint_status st = top->is_obj ? close_object(s, top, name, base, err) : MINT_OK;
            free(top->keys);
            top->keys = NULL;
            s->depth--;
            if (st != MINT_OK) return st;
        }
        i++;
    }
    return MINT_OK;
}

static mint_status check_duplicates(const char *text, size_t len, const char *name, size_t base,
                                    mint_err *err) {
    scan s = {.text = text, .len = len};
    mint_status st = scan_text(&s, name, base, err);
    for (int d = 0; d < s.depth; d++) free(s.st[d].keys);
    for (size_t i = 0; i < s.n_owned; i++) free(s.owned[i]);
    free(s.owned);
    return st;
}

// ---------------------------------------------------------------------------------------------
// Parsing

static bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

mint_status mint_json_parse(const char *text, size_t len, const char *name, size_t base_offset,
                            json_object **out, mint_err *err) {
    *out = NULL;
    if (len > INT32_MAX)
        return mint_fail(err, MINT_E_LIMIT, "%s: %zu bytes of JSON exceed %d", name, len,
                         INT32_MAX);
    const char *nul = memchr(text, '\0', len);
    if (nul)
        return mint_fail(err, MINT_E_FORMAT, "%s: NUL byte at byte %zu of the JSON", name,
                         base_offset + (size_t)(nul - text));
    while (len > 0 && is_space(text[len - 1])) len--;
    if (len == 0) return mint_fail(err, MINT_E_FORMAT, "%s: empty JSON", name);
    json_tokener *tok = json_tokener_new();
    if (!tok) return mint_fail(err, MINT_E_NOMEM, "%s: out of memory", name);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error je = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (je == json_tokener_continue && end == len) {
        // A number or a literal at the very end ("12", "true": a JSON Schema may be one) is
        // complete only once json-c sees the end; an unfinished object or array stays unfinished.
        o = json_tokener_parse_ex(tok, "", 1);
        je = json_tokener_get_error(tok);
        if (je != json_tokener_success) je = json_tokener_continue;
    }
    json_tokener_free(tok);
    if (je != json_tokener_success) {
        json_object_put(o);
        if (je == json_tokener_continue)
            return mint_fail(err, MINT_E_FORMAT, "%s: JSON ends early (after %zu bytes)", name,
                             len);
        return mint_fail(err, MINT_E_FORMAT, "%s: bad JSON at byte %zu: %s", name,
                         base_offset + end, json_tokener_error_desc(je));
    }
    if (end < len) {
        json_object_put(o);
        return mint_fail(err, MINT_E_FORMAT, "%s: bytes after the JSON value at byte %zu", name,
                         base_offset + end);
    }
    mint_status st = check_duplicates(text, len, name, base_offset, err);
    if (st != MINT_OK) {
        json_object_put(o);
        return st;
    }
    *out = o;
    return MINT_OK;
}

mint_status mint_json_load_file(const char *path, size_t max_bytes, json_object **out,
                                mint_err *err) {
    *out = NULL;
    mint_mapped_file map;
    mint_status st = mint_mapped_file_open(path, &map, err);
    if (st != MINT_OK) return st;
    if (map.size > max_bytes) {
        mint_mapped_file_close(&map);
        return mint_fail(err, MINT_E_LIMIT, "%s: %zu bytes exceed the limit of %zu for this file",
                         path, map.size, max_bytes);
    }
    st = mint_json_parse(map.data ? (const char *)map.data : "", map.size, path, 0, out, err);
    mint_mapped_file_close(&map);
    return st;
}

// ---------------------------------------------------------------------------------------------
// Typed members

const char *mint_json_type_name(const json_object *o) {
    switch (json_object_get_type(o)) {
    case json_type_null:
        return "null";
    case json_type_boolean:
        return "boolean";
    case json_type_double:
        return "double";
    case json_type_int:
        return "int";
    case json_type_object:
        return "object";
    case json_type_array:
        return "array";
    case json_type_string:
        return "string";
    }
    return "?";
}

static json_object *member(json_object *obj, const char *key) {
    json_object *v = NULL;
    if (!json_object_is_type(obj, json_type_object)) return NULL;
    if (!json_object_object_get_ex(obj, key, &v)) return NULL;
    return json_object_is_type(v, json_type_null) ? NULL : v;
}

mint_status mint_json_get_int(json_object *obj, const char *key, int64_t lo, int64_t hi,
                              const char *file, int64_t *out, mint_err *err) {
    json_object *v = member(obj, key);
    if (!v) return mint_fail(err, MINT_E_NOT_FOUND, "%s: \"%s\" is missing", file, key);
    if (json_object_is_type(v, json_type_int)) {
        int64_t x = json_object_get_int64(v);
        // json-c saturates integers beyond int64 at INT64_MAX / INT64_MIN.
        if (x < lo || x > hi || x == INT64_MAX)
            return mint_fail(err, MINT_E_FORMAT, "%s: \"%s\" = %s is outside %" PRId64 "..%" PRId64,
                             file, key, json_object_to_json_string(v), lo, hi);
        *out = x;
        return MINT_OK;
    }
    if (json_object_is_type(v, json_type_double)) {
        double d = json_object_get_double(v);
        if (!isfinite(d) || d != floor(d) || d < (double)lo || d > (double)hi)
            return mint_fail(err, MINT_E_FORMAT,
                             "%s: \"%s\" = %s is not an integer in %" PRId64 "..%" PRId64, file,
                             key, json_object_to_json_string(v), lo, hi);
        *out = (int64_t)d;
        return MINT_OK;
    }
    return mint_fail(err, MINT_E_FORMAT, "%s: \"%s\" is a %s, expected an integer", file, key,
                     mint_json_type_name(v));
}

mint_status mint_json_get_num(json_object *obj, const char *key, const char *file, double *out,
                              mint_err *err) {
    json_object *v = member(obj, key);
    if (!v) return mint_fail(err, MINT_E_NOT_FOUND, "%s: \"%s\" is missing", file, key);
    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
        return mint_fail(err, MINT_E_FORMAT, "%s: \"%s\" is a %s, expected a number", file, key,
                         mint_json_type_name(v));
    *out = json_object_get_double(v);
    if (!isfinite(*out))
        return mint_fail(err, MINT_E_FORMAT, "%s: \"%s\" is not finite", file, key);
    return MINT_OK;
}

mint_status mint_json_get_bool(json_object *obj, const char *key, const char *file, bool *out,
                               mint_err *err) {
    json_object *v = member(obj, key);
    if (!v) return mint_fail(err, MINT_E_NOT_FOUND, "%s: \"%s\" is missing", file, key);
    if (!json_object_is_type(v, json_type_boolean))
        return mint_fail(err, MINT_E_FORMAT, "%s: \"%s\" is a %s, expected true or false", file,
                         key, mint_json_type_name(v));
    *out = json_object_get_boolean(v);
    return MINT_OK;
}

mint_status mint_json_get_str(json_object *obj, const char *key, const char *file, const char **out,
                              size_t *len, mint_err *err) {
    json_object *v = member(obj, key);
    if (!v) return mint_fail(err, MINT_E_NOT_FOUND, "%s: \"%s\" is missing", file, key);
    if (!json_object_is_type(v, json_type_string))
        return mint_fail(err, MINT_E_FORMAT, "%s: \"%s\" is a %s, expected a string", file, key,
                         mint_json_type_name(v));
    *out = json_object_get_string(v);
    if (len) *len = (size_t)json_object_get_string_len(v);
    return MINT_OK;
}

mint_status mint_json_write_file(json_object *o, const char *dir, const char *name, mint_err *err) {
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return mint_fail(err, MINT_E_ARG, "path too long in %s", dir);
    size_t len = 0;
    const char *text = json_object_to_json_string_length(
        o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE,
        &len);
    if (!text) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    mint_atomic_file *af = NULL;
    mint_status st = mint_atomic_file_begin(path, &af, err);
    if (st == MINT_OK) st = mint_atomic_file_write(af, text, len, err);
    if (st == MINT_OK) st = mint_atomic_file_write(af, "\n", 1, err);
    if (st == MINT_OK) return mint_atomic_file_commit(af, err);
    mint_atomic_file_abort(af);
    return st;
}
