// json_schema_text.c - the converter's strings: growing buffers and the arena under the byte
// bound, failures and warnings with the JSON pointer, the table of rules (names made safe, a
// clash numbered, snapshots for a pattern that falls back), llama.cpp's built-in rules, GBNF
// literals, and JSON text written as llama.cpp's JSON library (nlohmann's) writes it.
#include "runtime/text/json_schema.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Buffers and the arena

// Takes n bytes off the budget; false (failure recorded) when it would pass JS_MAX_BYTES.
static bool charge(js_conv *c, size_t n) {
    if (c->st != MINT_OK) return false;
    if (n > (size_t)JS_MAX_BYTES - c->used) {
        js_fail(c, MINT_E_LIMIT,
                "json schema: the grammar would take more than %d MiB to build; simplify the "
                "schema",
                JS_MAX_BYTES >> 20);
        return false;
    }
    c->used += n;
    return true;
}

void js_buf_add(js_conv *c, js_buf *b, const char *s, size_t n) {
    if (b->full) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = charge(c, cap - b->cap) ? realloc(b->p, cap) : NULL;
        if (!p) {
            if (c->st == MINT_OK) js_fail(c, MINT_E_NOMEM, "json schema: out of memory");
            b->full = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void js_buf_adds(js_conv *c, js_buf *b, const char *s) {
    js_buf_add(c, b, s, strlen(s));
}

void js_buf_addc(js_conv *c, js_buf *b, char ch) {
    js_buf_add(c, b, &ch, 1);
}

char *js_buf_done(js_conv *c, js_buf *b) {
    char *s = b->full ? NULL : js_strndup(c, b->p ? b->p : "", b->n);
    js_buf_drop(c, b);
    return s;
}

void js_buf_drop(js_conv *c, js_buf *b) {
    c->used -= b->cap; // the bytes come back to the budget
    free(b->p);
    *b = (js_buf){0};
}

char *js_strndup(js_conv *c, const char *s, size_t n) {
    if (!charge(c, n + 1)) return NULL;
    char *p = mint_arena_strndup(&c->arena, s, n);
    if (!p) js_fail(c, MINT_E_NOMEM, "json schema: out of memory");
    return p;
}

char *js_cat(js_conv *c, ...) {
    js_buf b = {0};
    va_list ap;
    va_start(ap, c);
    for (const char *s; (s = va_arg(ap, const char *));) js_buf_adds(c, &b, s);
    va_end(ap);
    return js_buf_done(c, &b);
}

// ---------------------------------------------------------------------------------------------
// The document

bool js_get(json_object *o, const char *key, json_object **v) {
    *v = NULL;
    return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, v);
}

bool js_is_str(json_object *v) {
    return json_object_is_type(v, json_type_string);
}

bool js_str_is(json_object *v, const char *s) {
    return js_is_str(v) && strcmp(json_object_get_string(v), s) == 0;
}

json_object *js_ref_target(js_conv *c, const char *ref) {
    int32_t k = mint_strmap_get(&c->ref_idx, ref, strlen(ref));
    return k >= 0 ? c->refs[k].target : NULL;
}

char *js_stem(js_conv *c, const char *name, const char *s) {
    return js_cat(c, name, name[0] ? "-" : "", s, NULL);
}

// ---------------------------------------------------------------------------------------------
// Failures, warnings and the JSON pointer

void *js_fail(js_conv *c, mint_status code, const char *fmt, ...) {
    if (c->st != MINT_OK) return NULL;
    c->st = code;
    if (c->err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err->msg, sizeof c->err->msg, fmt, ap);
        va_end(ap);
        c->err->code = code;
        mint_err_one_line(c->err);
    }
    return NULL;
}

void *js_fail_at(js_conv *c, const char *keyword, const char *fmt, ...) {
    if (c->st != MINT_OK) return NULL;
    char what[MINT_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return js_fail(c, MINT_E_FORMAT, "json schema: #%s%s%s: %s", c->path.p ? c->path.p : "",
                   keyword ? "/" : "", keyword ? keyword : "", what);
}

void js_warn(js_conv *c, const char *keyword, const char *fmt, ...) {
    if (c->warning[0]) return;
    char what[MINT_ERR_MSG_MAX / 2]; // the pointer and the words around take the rest
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(c->warning, sizeof c->warning, "json schema: #%s%s%s: %s", c->path.p ? c->path.p : "",
             keyword ? "/" : "", keyword ? keyword : "", what);
}

size_t js_path_push(js_conv *c, const char *key) {
    size_t mark = c->path.n;
    js_buf_addc(c, &c->path, '/');
    for (const char *k = key; *k; k++) {
        if (*k == '~')
            js_buf_add(c, &c->path, "~0", 2);
        else if (*k == '/')
            js_buf_add(c, &c->path, "~1", 2);
        else
            js_buf_addc(c, &c->path, *k);
    }
    return mark;
}

size_t js_path_push_index(js_conv *c, size_t index) {
    char num[32];
    snprintf(num, sizeof num, "%zu", index);
    return js_path_push(c, num);
}

char *js_path_save(js_conv *c) {
    return js_strndup(c, c->path.p ? c->path.p : "", c->path.n);
}

void js_path_set(js_conv *c, const char *pointer) {
    js_path_pop(c, 0);
    js_buf_adds(c, &c->path, pointer ? pointer : "");
}

void js_path_pop(js_conv *c, size_t mark) {
    if (c->path.p && mark <= c->path.n) {
        c->path.n = mark;
        c->path.p[mark] = '\0';
    }
}

const char *js_show(js_conv *c, json_object *v) {
    const char *s = v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
                                                              JSON_C_TO_STRING_NOSLASHESCAPE)
                      : "null";
    size_t n = strlen(s);
    if (n <= 48) return s;
    js_buf b = {0};
    js_buf_add(c, &b, s, 45);
    js_buf_adds(c, &b, "...");
    char *cut = js_buf_done(c, &b);
    return cut ? cut : "(value)";
}

// ---------------------------------------------------------------------------------------------
// The table of rules

// The index of the rule called name[len], or -1.
static int32_t find_rule(const js_conv *c, const char *name, size_t len) {
    return mint_strmap_get(&c->by_name, name, len);
}

bool js_has_rule(const js_conv *c, const char *name) {
    return find_rule(c, name, strlen(name)) >= 0;
}

// Whether the rule called name[len] is absent or already has this body (then it may be used).
static bool usable(const js_conv *c, const char *name, size_t len, const char *body,
                   uint64_t hash) {
    int32_t i = find_rule(c, name, len);
    return i < 0 || (c->rules[i].hash == hash && strcmp(c->rules[i].body, body) == 0);
}

// Stores name -> body (a new rule, or the same body again).
static bool put_rule(js_conv *c, const char *name, size_t len, const char *body, uint64_t hash) {
    if (find_rule(c, name, len) >= 0) return true;
    if (c->n_rules == c->cap_rules) {
        size_t cap = c->cap_rules ? 2 * c->cap_rules : 64;
        js_rule *r = realloc(c->rules, cap * sizeof *r);
        if (!r || !charge(c, (cap - c->cap_rules) * sizeof *r)) {
            if (r) c->rules = r;
            return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
        }
        c->rules = r;
        c->cap_rules = cap;
    }
    if (len > INT32_MAX || c->n_rules >= INT32_MAX)
        return js_fail(c, MINT_E_LIMIT, "json schema: too many rules"), false;
    c->rules[c->n_rules] = (js_rule){name, len, body, hash};
    if (mint_strmap_put(&c->by_name, name, len, (int32_t)c->n_rules, NULL) != MINT_OK)
        return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
    c->n_rules++;
    return true;
}

static bool name_char(char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '-';
}

// name with every run of characters outside [a-zA-Z0-9-] made one "-", in b.
static void safe_name(js_conv *c, js_buf *b, const char *name) {
    js_buf_add(c, b, "", 0);
    for (const char *p = name; *p;) {
        if (name_char(*p)) {
            js_buf_addc(c, b, *p++);
            continue;
        }
        while (*p && !name_char(*p)) p++;
        js_buf_addc(c, b, '-');
    }
}

char *js_safe_name(js_conv *c, const char *name) {
    js_buf b = {0};
    safe_name(c, &b, name);
    return js_buf_done(c, &b);
}

const char *js_add_rule(js_conv *c, const char *name, const char *body) {
    if (c->st != MINT_OK || !name || !body) return NULL;
    js_buf b = {0};
    safe_name(c, &b, name);
    if (b.full) return js_buf_done(c, &b);
    size_t base = b.n;
    uint64_t hash = mint_hash64(body, strlen(body));
    if (!usable(c, b.p, base, body, hash)) {
        for (unsigned i = 0;; i++) {
            char num[24];
            if (i == JS_MAX_SUFFIX) { // llama.cpp counts on; a schema this repetitive is hostile
                js_fail(c, MINT_E_LIMIT, "json schema: more than %d different rules named %.*s",
                        JS_MAX_SUFFIX, base < 64 ? (int)base : 64, b.p);
                break;
            }
            b.n = base;
            snprintf(num, sizeof num, "%u", i);
            js_buf_adds(c, &b, num);
            if (b.full || usable(c, b.p, b.n, body, hash)) break;
        }
    }
    char *key = js_buf_done(c, &b);
    if (!key || !put_rule(c, key, strlen(key), body, hash)) return NULL;
    return key;
}

size_t js_rules_mark(const js_conv *c) {
    return c->n_rules;
}

void js_rules_reset(js_conv *c, size_t mark) {
    if (mark >= c->n_rules) return;
    c->n_rules = mark;
    // The map has no removal: rebuild it from the rules kept (rare: a pattern that fell back).
    mint_strmap_free(&c->by_name);
    if (mint_strmap_init(&c->by_name, c->n_rules + 16) != MINT_OK) {
        js_fail(c, MINT_E_NOMEM, "json schema: out of memory");
        return;
    }
    for (size_t i = 0; i < c->n_rules; i++)
        if (mint_strmap_put(&c->by_name, c->rules[i].name, c->rules[i].name_len, (int32_t)i,
                            NULL) != MINT_OK) {
            js_fail(c, MINT_E_NOMEM, "json schema: out of memory");
            return;
        }
}

static int cmp_rules(const void *a, const void *b) {
    const js_rule *x = a, *y = b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int r = memcmp(x->name, y->name, n);
    if (r) return r;
    return x->name_len < y->name_len ? -1 : x->name_len > y->name_len;
}

char *js_format_grammar(js_conv *c, size_t *len) {
    if (c->st != MINT_OK) return NULL;
    js_rule *sorted = malloc((c->n_rules ? c->n_rules : 1) * sizeof *sorted);
    if (!sorted) return js_fail(c, MINT_E_NOMEM, "json schema: out of memory");
    memcpy(sorted, c->rules, c->n_rules * sizeof *sorted);
    qsort(sorted, c->n_rules, sizeof *sorted, cmp_rules);
    js_buf b = {0};
    for (size_t i = 0; i < c->n_rules; i++) {
        js_buf_add(c, &b, sorted[i].name, sorted[i].name_len);
        js_buf_adds(c, &b, " ::= ");
        js_buf_adds(c, &b, sorted[i].body);
        js_buf_addc(c, &b, '\n');
    }
    free(sorted);
    js_buf_add(c, &b, "", 0);
    if (b.full) return js_buf_done(c, &b);
    // The caller owns the text: hand over the malloc'd buffer itself.
    char *out = b.p;
    *len = b.n;
    c->used -= b.cap;
    return out;
}

// ---------------------------------------------------------------------------------------------
// llama.cpp's built-in rules (its converter's primitive and string-format rules): their bodies must
// be byte for byte the same for the grammars to be.

typedef struct builtin {
    const char *name;    // the rule's name
    const char *body;    // its body
    const char *deps[6]; // built-in rules the body uses (NULL-terminated)
    bool primitive;      // a primitive (may be a schema's "type"), not a string format
} builtin;

static const builtin BUILTINS[] = {
    {"boolean", "(\"true\" | \"false\")", {NULL}, true},
    {"decimal-part", "[0-9]{1,16}", {NULL}, true},
    {"integral-part", "[0] | [1-9] [0-9]{0,15}", {NULL}, true},
    {"number",
     "(\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)?",
     {"integral-part", "decimal-part", NULL},
     true},
    {"integer", "(\"-\"? integral-part)", {"integral-part", NULL}, true},
    {"value",
     "object | array | string | number | boolean | null",
     {"object", "array", "string", "number", "boolean", "null"},
     true},
    {"object",
     "\"{\" space ( string \":\" space value (\",\" space string \":\" space value)* )? space "
     "\"}\"",
     {"string", "value", NULL},
     true},
    {"array", "\"[\" space ( value (\",\" space value)* )? space \"]\"", {"value", NULL}, true},
    {"uuid",
     "\"\\\"\" [0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} "
     "\"-\" [0-9a-fA-F]{12} \"\\\"\"",
     {NULL},
     true},
    {"char",
     "[^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})",
     {NULL},
     true},
    {"string", "\"\\\"\" char* \"\\\"\"", {"char", NULL}, true},
    {"null", "\"null\"", {NULL}, true},
    {"date",
     "[0-9]{4} \"-\" ( \"0\" [1-9] | \"1\" [0-2] ) \"-\" ( \"0\" [1-9] | [1-2] [0-9] | \"3\" "
     "[0-1] )",
     {NULL},
     false},
    {"time",
     "([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] ( \".\" [0-9]{3} )? ( "
     "\"Z\" | ( \"+\" | \"-\" ) ( [01] [0-9] | \"2\" [0-3] ) \":\" [0-5] [0-9] )",
     {NULL},
     false},
    {"date-time", "date \"T\" time", {"date", "time", NULL}, false},
    {"date-string", "\"\\\"\" date \"\\\"\"", {"date", NULL}, false},
    {"time-string", "\"\\\"\" time \"\\\"\"", {"time", NULL}, false},
    {"date-time-string", "\"\\\"\" date-time \"\\\"\"", {"date-time", NULL}, false},
};

static const builtin *find_builtin(const char *name) {
    for (size_t i = 0; i < sizeof BUILTINS / sizeof BUILTINS[0]; i++)
        if (strcmp(BUILTINS[i].name, name) == 0) return &BUILTINS[i];
    return NULL;
}

bool js_is_primitive(const char *type) {
    const builtin *b = find_builtin(type);
    return b && b->primitive;
}

bool js_is_reserved(const char *name) {
    return strcmp(name, "root") == 0 || find_builtin(name) != NULL;
}

const char *js_add_builtin(js_conv *c, const char *name, const char *which) {
    const builtin *b = find_builtin(which);
    if (!b) return js_fail(c, MINT_E_FORMAT, "json schema: no built-in rule '%s'", which);
    const char *n = js_add_rule(c, name, b->body);
    for (int i = 0; n && i < 6 && b->deps[i]; i++)
        if (!js_has_rule(c, b->deps[i]) && !js_add_builtin(c, b->deps[i], b->deps[i])) return NULL;
    return n;
}

// ---------------------------------------------------------------------------------------------
// Literals and JSON text

char *js_literal(js_conv *c, const char *s, size_t n) {
    js_buf b = {0};
    js_buf_addc(c, &b, '"');
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '\r':
            js_buf_add(c, &b, "\\r", 2);
            break;
        case '\n':
            js_buf_add(c, &b, "\\n", 2);
            break;
        case '"':
            js_buf_add(c, &b, "\\\"", 2);
            break;
        case '\\':
            js_buf_add(c, &b, "\\\\", 2);
            break;
        default:
            js_buf_addc(c, &b, s[i]);
        }
    }
    js_buf_addc(c, &b, '"');
    return js_buf_done(c, &b);
}

// A JSON string: quotes, backslash and control characters escaped (\b \f \n \r \t, the rest as
// \u00xx in lower case), every other byte as it is.
static void dump_string(js_conv *c, js_buf *b, const char *s, size_t n) {
    js_buf_addc(c, b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        char esc[8];
        switch (ch) {
        case '"':
            js_buf_add(c, b, "\\\"", 2);
            break;
        case '\\':
            js_buf_add(c, b, "\\\\", 2);
            break;
        case '\b':
            js_buf_add(c, b, "\\b", 2);
            break;
        case '\f':
            js_buf_add(c, b, "\\f", 2);
            break;
        case '\n':
            js_buf_add(c, b, "\\n", 2);
            break;
        case '\r':
            js_buf_add(c, b, "\\r", 2);
            break;
        case '\t':
            js_buf_add(c, b, "\\t", 2);
            break;
        default:
            if (ch < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", ch);
                js_buf_adds(c, b, esc);
            } else {
                js_buf_addc(c, b, (char)ch);
            }
        }
    }
    js_buf_addc(c, b, '"');
}

// A finite double as nlohmann's to_chars writes it: Grisu2's digits (json_schema_double.c) laid
// out like "%g" with the point kept (1.0, 0.001, 1e-05, 1.5e+15).
static void dump_double(js_conv *c, js_buf *b, double x) {
    if (signbit(x)) {
        js_buf_addc(c, b, '-');
        x = -x;
    }
    if (x == 0) {
        js_buf_adds(c, b, "0.0");
        return;
    }
    char digits[32];
    int exp10 = 0;
    int k = js_grisu2(x, digits, &exp10);
    int n = k + exp10; // where the point goes, counted from the first digit
    char out[64];
    int o = 0;
    if (k <= n && n <= 15) {
        memcpy(out, digits, (size_t)k), o = k;
        while (o < n) out[o++] = '0';
        out[o++] = '.', out[o++] = '0';
    } else if (0 < n && n <= 15) {
        memcpy(out, digits, (size_t)n), o = n;
        out[o++] = '.';
        memcpy(out + o, digits + n, (size_t)(k - n)), o += k - n;
    } else if (-4 < n && n <= 0) {
        out[o++] = '0', out[o++] = '.';
        for (int z = 0; z < -n; z++) out[o++] = '0';
        memcpy(out + o, digits, (size_t)k), o += k;
    } else {
        out[o++] = digits[0];
        if (k > 1) {
            out[o++] = '.';
            memcpy(out + o, digits + 1, (size_t)(k - 1)), o += k - 1;
        }
        o +=
            snprintf(out + o, sizeof out - (size_t)o, "e%c%02d", n - 1 < 0 ? '-' : '+', abs(n - 1));
    }
    js_buf_add(c, b, out, (size_t)o);
}

static void dump_value(js_conv *c, js_buf *b, json_object *v) {
    char num[32];
    switch (json_object_get_type(v)) {
    case json_type_null:
        js_buf_adds(c, b, "null");
        break;
    case json_type_boolean:
        js_buf_adds(c, b, json_object_get_boolean(v) ? "true" : "false");
        break;
    case json_type_int:
        // json-c keeps integers above INT64_MAX as uint64 (the walk refused the saturated ones).
        if (json_object_get_int64(v) == INT64_MAX)
            snprintf(num, sizeof num, "%llu", (unsigned long long)json_object_get_uint64(v));
        else
            snprintf(num, sizeof num, "%lld", (long long)json_object_get_int64(v));
        js_buf_adds(c, b, num);
        break;
    case json_type_double:
        dump_double(c, b, json_object_get_double(v));
        break;
    case json_type_string:
        dump_string(c, b, json_object_get_string(v), (size_t)json_object_get_string_len(v));
        break;
    case json_type_array: {
        js_buf_addc(c, b, '[');
        size_t n = json_object_array_length(v);
        for (size_t i = 0; i < n; i++) {
            if (i) js_buf_addc(c, b, ',');
            dump_value(c, b, json_object_array_get_idx(v, i));
        }
        js_buf_addc(c, b, ']');
        break;
    }
    case json_type_object: {
        js_buf_addc(c, b, '{');
        bool first = true;
        json_object_object_foreach(v, key, val) {
            if (!first) js_buf_addc(c, b, ',');
            first = false;
            dump_string(c, b, key, strlen(key));
            js_buf_addc(c, b, ':');
            dump_value(c, b, val);
        }
        js_buf_addc(c, b, '}');
        break;
    }
    }
}

char *js_dump_string(js_conv *c, const char *s, size_t n) {
    js_buf b = {0};
    dump_string(c, &b, s, n);
    return js_buf_done(c, &b);
}

char *js_dump(js_conv *c, json_object *v) {
    js_buf b = {0};
    dump_value(c, &b, v);
    return js_buf_done(c, &b);
}
