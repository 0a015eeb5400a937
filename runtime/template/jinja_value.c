// jinja_value.c - the values of the Jinja engine: the arena they live in, Python's str() and
// repr() of them (what jinja2 prints), json.dumps as transformers' tojson calls it, truthiness,
// equality and ordering with Python's rules.
#include "runtime/template/jinja.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Arena

struct jj_block {
    jj_block *next; // older block
    size_t used;    // bytes handed out
    size_t cap;     // bytes in data
    _Alignas(16) unsigned char data[];
};

void *jj_alloc(jj_ctx *c, size_t n) {
    n = (n + 15) & ~(size_t)15;
    jj_block *b = c->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > (1u << 16) ? n : (1u << 16);
        if (c->used + cap > JJ_MAX_ARENA)
            jj_fail(c, "the template needs more than %u MiB of memory", JJ_MAX_ARENA >> 20);
        b = malloc(sizeof *b + cap);
        if (!b) jj_fail(c, "out of memory");
        b->next = c->blocks;
        b->used = 0;
        b->cap = cap;
        c->blocks = b;
        c->used += cap;
    }
    void *p = b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

void jj_arena_free(jj_ctx *c) {
    while (c->blocks) {
        jj_block *n = c->blocks->next;
        free(c->blocks);
        c->blocks = n;
    }
    c->used = 0;
}

void jj_fail(jj_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    longjmp(c->fail, 1);
}

void jj_step(jj_ctx *c) {
    if (++c->steps > JJ_MAX_STEPS)
        jj_fail(c, "the template runs more than %d steps (loop iterations, calls, outputs)",
                JJ_MAX_STEPS);
}

void jj_enter(jj_ctx *c) {
    if (++c->depth > JJ_MAX_DEPTH)
        jj_fail(c, "the template nests deeper than %d (macro calls, blocks or expressions)",
                JJ_MAX_DEPTH);
}

void jj_leave(jj_ctx *c) {
    c->depth--;
}

// ---------------------------------------------------------------------------------------------
// Constructors

jj_value jj_bool(bool b) {
    return (jj_value){.t = JV_BOOL, .b = b};
}
jj_value jj_int(int64_t i) {
    return (jj_value){.t = JV_INT, .i = i};
}
jj_value jj_float(double f) {
    return (jj_value){.t = JV_FLOAT, .f = f};
}
jj_value jj_strz(const char *p) {
    return (jj_value){.t = JV_STR, .s = {p, strlen(p)}};
}
jj_value jj_strn(jj_ctx *c, const char *p, size_t n) {
    char *d = jj_alloc(c, n + 1);
    if (n) memcpy(d, p, n);
    return (jj_value){.t = JV_STR, .s = {d, n}};
}

jj_value jj_list_new(jj_ctx *c, jj_list_kind kind) {
    jj_list *l = jj_alloc(c, sizeof *l);
    l->kind = kind;
    return (jj_value){.t = JV_LIST, .l = l};
}

void jj_list_push(jj_ctx *c, jj_list *l, jj_value v) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        jj_value *nv = jj_alloc(c, cap * sizeof *nv);
        if (l->n) memcpy(nv, l->v, l->n * sizeof *nv);
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = v;
}

jj_value jj_dict_new(jj_ctx *c) {
    jj_dict *d = jj_alloc(c, sizeof *d);
    return (jj_value){.t = JV_DICT, .d = d};
}

jj_value *jj_dict_get(jj_dict *d, jj_value k) {
    for (size_t i = 0; i < d->n; i++)
        if (jj_equal(d->k[i], k)) return &d->v[i];
    return NULL;
}

jj_value *jj_dict_getz(jj_dict *d, const char *k) {
    size_t n = strlen(k);
    for (size_t i = 0; i < d->n; i++)
        if (d->k[i].t == JV_STR && d->k[i].s.n == n && memcmp(d->k[i].s.p, k, n) == 0)
            return &d->v[i];
    return NULL;
}

void jj_dict_set(jj_ctx *c, jj_dict *d, jj_value k, jj_value v) {
    jj_value *old = jj_dict_get(d, k);
    if (old) {
        *old = v;
        return;
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 8;
        jj_value *nk = jj_alloc(c, cap * sizeof *nk), *nv = jj_alloc(c, cap * sizeof *nv);
        if (d->n) {
            memcpy(nk, d->k, d->n * sizeof *nk);
            memcpy(nv, d->v, d->n * sizeof *nv);
        }
        d->k = nk;
        d->v = nv;
        d->cap = cap;
    }
    d->k[d->n] = k;
    d->v[d->n++] = v;
}

// ---------------------------------------------------------------------------------------------
// Python semantics

const char *jj_type_name(jj_value v) {
    switch (v.t) {
    case JV_UNDEF:
        return "Undefined";
    case JV_NONE:
        return "NoneType";
    case JV_BOOL:
        return "bool";
    case JV_INT:
        return "int";
    case JV_FLOAT:
        return "float";
    case JV_STR:
        return "str";
    case JV_LIST:
        return v.l->kind == JL_TUPLE ? "tuple" : v.l->kind == JL_GEN ? "generator" : "list";
    case JV_DICT:
        return v.d->ns ? "Namespace" : "dict";
    case JV_MACRO:
        return "Macro";
    case JV_FUNC:
        return v.fn.self ? "builtin_function_or_method" : "function";
    case JV_LOOP:
        return "LoopContext";
    }
    return "object";
}

bool jj_truthy(jj_value v) {
    switch (v.t) {
    case JV_UNDEF:
    case JV_NONE:
        return false;
    case JV_BOOL:
        return v.b;
    case JV_INT:
        return v.i != 0;
    case JV_FLOAT:
        return v.f != 0;
    case JV_STR:
        return v.s.n > 0;
    case JV_LIST:
        return v.l->kind == JL_GEN || v.l->n > 0;
    case JV_DICT:
        return v.d->ns || v.d->n > 0;
    default:
        return true;
    }
}

bool jj_is_number(jj_value v) {
    return v.t == JV_INT || v.t == JV_FLOAT || v.t == JV_BOOL;
}

double jj_num(jj_value v) {
    return v.t == JV_INT ? (double)v.i : v.t == JV_BOOL ? (double)v.b : v.f;
}

bool jj_str_eq(jj_value v, const char *z) {
    size_t n = strlen(z);
    return v.t == JV_STR && v.s.n == n && memcmp(v.s.p, z, n) == 0;
}

static bool equal_at(jj_value a, jj_value b, int depth);

bool jj_equal(jj_value a, jj_value b) {
    return equal_at(a, b, 0);
}

// Lists and dicts nested past JJ_MAX_DEPTH compare unequal rather than recurse without bound.
static bool equal_at(jj_value a, jj_value b, int depth) {
    if (depth > JJ_MAX_DEPTH) return false;
    if (jj_is_number(a) && jj_is_number(b)) {
        if (a.t != JV_FLOAT && b.t != JV_FLOAT) {
            int64_t x = a.t == JV_INT ? a.i : a.b, y = b.t == JV_INT ? b.i : b.b;
            return x == y;
        }
        return jj_num(a) == jj_num(b);
    }
    if (a.t != b.t) return false;
    switch (a.t) {
    case JV_UNDEF:
    case JV_NONE:
        return true;
    case JV_STR:
        return a.s.n == b.s.n && memcmp(a.s.p, b.s.p, a.s.n) == 0;
    case JV_LIST:
        if (a.l == b.l) return true;
        if (a.l->kind == JL_GEN || b.l->kind == JL_GEN) return false;
        if ((a.l->kind == JL_TUPLE) != (b.l->kind == JL_TUPLE) || a.l->n != b.l->n) return false;
        for (size_t i = 0; i < a.l->n; i++)
            if (!equal_at(a.l->v[i], b.l->v[i], depth + 1)) return false;
        return true;
    case JV_DICT:
        if (a.d == b.d) return true;
        if (a.d->ns || b.d->ns || a.d->n != b.d->n) return false;
        for (size_t i = 0; i < a.d->n; i++) {
            jj_value *o = jj_dict_get(b.d, a.d->k[i]);
            if (!o || !equal_at(a.d->v[i], *o, depth + 1)) return false;
        }
        return true;
    case JV_MACRO:
        return a.m == b.m;
    case JV_FUNC:
        return a.fn.name == b.fn.name && a.fn.self == b.fn.self;
    case JV_LOOP:
        return a.lp == b.lp;
    default:
        return false;
    }
}

int jj_compare(jj_ctx *c, jj_value a, jj_value b, const char *op) {
    if (jj_is_number(a) && jj_is_number(b)) {
        if (a.t != JV_FLOAT && b.t != JV_FLOAT) {
            int64_t x = a.t == JV_INT ? a.i : a.b, y = b.t == JV_INT ? b.i : b.b;
            return x < y ? -1 : x > y;
        }
        double x = jj_num(a), y = jj_num(b);
        return x < y ? -1 : x > y;
    }
    if (a.t == JV_STR && b.t == JV_STR) {
        // UTF-8 byte order is code point order, which is Python's.
        size_t n = a.s.n < b.s.n ? a.s.n : b.s.n;
        int r = n ? memcmp(a.s.p, b.s.p, n) : 0;
        if (r) return r < 0 ? -1 : 1;
        return a.s.n < b.s.n ? -1 : a.s.n > b.s.n;
    }
    if (a.t == JV_LIST && b.t == JV_LIST && a.l->kind == b.l->kind && a.l->kind != JL_GEN) {
        for (size_t i = 0; i < a.l->n && i < b.l->n; i++) {
            if (jj_equal(a.l->v[i], b.l->v[i])) continue;
            jj_enter(c);
            int r = jj_compare(c, a.l->v[i], b.l->v[i], op);
            jj_leave(c);
            return r;
        }
        return a.l->n < b.l->n ? -1 : a.l->n > b.l->n;
    }
    jj_fail(c, "'%s' not supported between instances of '%s' and '%s'", op, jj_type_name(a),
            jj_type_name(b));
}

// ---------------------------------------------------------------------------------------------
// Text

void jj_buf_put(jj_ctx *c, jj_buf *b, const char *p, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        while (cap < b->n + n + 1) cap *= 2;
        char *np = jj_alloc(c, cap);
        if (b->n) memcpy(np, b->p, b->n);
        b->p = np;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void jj_buf_puts(jj_ctx *c, jj_buf *b, const char *z) {
    jj_buf_put(c, b, z, strlen(z));
}

jj_value jj_buf_value(jj_buf *b) {
    return (jj_value){.t = JV_STR, .s = {b->p ? b->p : "", b->n}};
}

// Python's repr(float): the shortest text that reads back to the same double, in fixed notation
// for exponents -4..15 (with ".0" when integral), else scientific with a two-digit exponent.
void jj_float_repr(double f, char *out, size_t cap) {
    if (isnan(f)) {
        snprintf(out, cap, "nan");
        return;
    }
    if (isinf(f)) {
        snprintf(out, cap, f < 0 ? "-inf" : "inf");
        return;
    }
    char digits[40];
    int prec;
    for (prec = 1; prec <= 17; prec++) {
        snprintf(digits, sizeof digits, "%.*e", prec - 1, f);
        if (strtod(digits, NULL) == f) break;
    }
    // digits: [-]d[.ddd]e[+-]XX
    char *e = strchr(digits, 'e');
    int exp10 = atoi(e + 1);
    *e = '\0';
    char mant[40];
    size_t m = 0;
    bool neg = digits[0] == '-';
    for (char *p = digits + neg; *p; p++)
        if (*p != '.') mant[m++] = *p;
    mant[m] = '\0';
    while (m > 1 && mant[m - 1] == '0') mant[--m] = '\0';
    char res[64];
    size_t r = 0;
    if (neg) res[r++] = '-';
    if (exp10 >= 16 || exp10 < -4) {
        res[r++] = mant[0];
        if (m > 1) {
            res[r++] = '.';
            for (size_t i = 1; i < m; i++) res[r++] = mant[i];
        }
        r += (size_t)snprintf(res + r, sizeof res - r, "e%c%02d", exp10 < 0 ? '-' : '+',
                              exp10 < 0 ? -exp10 : exp10);
    } else if (exp10 < 0) {
        res[r++] = '0';
        res[r++] = '.';
        for (int i = 0; i < -exp10 - 1; i++) res[r++] = '0';
        for (size_t i = 0; i < m; i++) res[r++] = mant[i];
    } else {
        for (int i = 0; i <= exp10; i++) res[r++] = (size_t)i < m ? mant[i] : '0';
        res[r++] = '.';
        if ((size_t)exp10 + 1 < m)
            for (size_t i = (size_t)exp10 + 1; i < m; i++) res[r++] = mant[i];
        else
            res[r++] = '0';
    }
    res[r] = '\0';
    snprintf(out, cap, "%s", res);
}

static void put_int(jj_ctx *c, jj_buf *b, int64_t i) {
    char t[32];
    snprintf(t, sizeof t, "%lld", (long long)i);
    jj_buf_puts(c, b, t);
}

// Python's repr(str): single quotes unless the text has ' and no ".
static void repr_str(jj_ctx *c, jj_buf *b, jj_str s) {
    bool sq = memchr(s.p, '\'', s.n) != NULL, dq = memchr(s.p, '"', s.n) != NULL;
    char q = sq && !dq ? '"' : '\'';
    jj_buf_put(c, b, &q, 1);
    for (size_t i = 0; i < s.n; i++) {
        unsigned char ch = (unsigned char)s.p[i];
        char t[8];
        if (ch == (unsigned char)q || ch == '\\') {
            t[0] = '\\';
            t[1] = (char)ch;
            jj_buf_put(c, b, t, 2);
        } else if (ch == '\n')
            jj_buf_puts(c, b, "\\n");
        else if (ch == '\r')
            jj_buf_puts(c, b, "\\r");
        else if (ch == '\t')
            jj_buf_puts(c, b, "\\t");
        else if (ch < 0x20 || ch == 0x7f) {
            snprintf(t, sizeof t, "\\x%02x", ch);
            jj_buf_puts(c, b, t);
        } else
            jj_buf_put(c, b, (const char *)&ch, 1);
    }
    jj_buf_put(c, b, &q, 1);
}

static void repr_at(jj_ctx *c, jj_buf *b, jj_value v);

void jj_repr_of(jj_ctx *c, jj_buf *b, jj_value v) {
    jj_enter(c);
    repr_at(c, b, v);
    jj_leave(c);
}

static void repr_at(jj_ctx *c, jj_buf *b, jj_value v) {
    switch (v.t) {
    case JV_STR:
        repr_str(c, b, v.s);
        return;
    case JV_LIST:
        if (v.l->kind == JL_GEN) {
            jj_buf_puts(c, b, "<generator object>");
            return;
        }
        jj_buf_puts(c, b, v.l->kind == JL_TUPLE ? "(" : "[");
        for (size_t i = 0; i < v.l->n; i++) {
            if (i) jj_buf_puts(c, b, ", ");
            jj_repr_of(c, b, v.l->v[i]);
        }
        if (v.l->kind == JL_TUPLE && v.l->n == 1) jj_buf_puts(c, b, ",");
        jj_buf_puts(c, b, v.l->kind == JL_TUPLE ? ")" : "]");
        return;
    case JV_DICT:
        if (v.d->ns) {
            jj_buf_puts(c, b, "<Namespace ");
            jj_buf_puts(c, b, "{");
        } else
            jj_buf_puts(c, b, "{");
        for (size_t i = 0; i < v.d->n; i++) {
            if (i) jj_buf_puts(c, b, ", ");
            jj_repr_of(c, b, v.d->k[i]);
            jj_buf_puts(c, b, ": ");
            jj_repr_of(c, b, v.d->v[i]);
        }
        jj_buf_puts(c, b, v.d->ns ? "}>" : "}");
        return;
    case JV_UNDEF:
        jj_buf_puts(c, b, "Undefined");
        return;
    default:
        jj_str_of(c, b, v);
    }
}

void jj_str_of(jj_ctx *c, jj_buf *b, jj_value v) {
    char t[64];
    switch (v.t) {
    case JV_UNDEF:
        return;
    case JV_NONE:
        jj_buf_puts(c, b, "None");
        return;
    case JV_BOOL:
        jj_buf_puts(c, b, v.b ? "True" : "False");
        return;
    case JV_INT:
        put_int(c, b, v.i);
        return;
    case JV_FLOAT:
        jj_float_repr(v.f, t, sizeof t);
        jj_buf_puts(c, b, t);
        return;
    case JV_STR:
        jj_buf_put(c, b, v.s.p, v.s.n);
        return;
    case JV_LIST:
    case JV_DICT:
        jj_repr_of(c, b, v);
        return;
    case JV_MACRO:
        jj_buf_puts(c, b, "<Macro>");
        return;
    case JV_FUNC:
        jj_buf_puts(c, b, "<function>");
        return;
    case JV_LOOP:
        jj_buf_puts(c, b, "<LoopContext>");
        return;
    }
}

jj_str jj_to_str(jj_ctx *c, jj_value v) {
    if (v.t == JV_STR) return v.s;
    jj_buf b = {0};
    jj_str_of(c, &b, v);
    return (jj_str){b.p ? b.p : "", b.n};
}

// json.dumps(v, ensure_ascii=False, indent=indent (<0: None), separators, sort_keys).
static void json_str(jj_ctx *c, jj_buf *b, jj_str s) {
    jj_buf_puts(c, b, "\"");
    for (size_t i = 0; i < s.n; i++) {
        unsigned char ch = (unsigned char)s.p[i];
        char t[8];
        switch (ch) {
        case '"':
            jj_buf_puts(c, b, "\\\"");
            break;
        case '\\':
            jj_buf_puts(c, b, "\\\\");
            break;
        case '\n':
            jj_buf_puts(c, b, "\\n");
            break;
        case '\r':
            jj_buf_puts(c, b, "\\r");
            break;
        case '\t':
            jj_buf_puts(c, b, "\\t");
            break;
        case '\b':
            jj_buf_puts(c, b, "\\b");
            break;
        case '\f':
            jj_buf_puts(c, b, "\\f");
            break;
        default:
            if (ch < 0x20) {
                snprintf(t, sizeof t, "\\u%04x", ch);
                jj_buf_puts(c, b, t);
            } else
                jj_buf_put(c, b, (const char *)&ch, 1);
        }
    }
    jj_buf_puts(c, b, "\"");
}

static void json_newline(jj_ctx *c, jj_buf *b, int indent, int level) {
    jj_buf_puts(c, b, "\n");
    for (int i = 0; i < indent * level; i++) jj_buf_puts(c, b, " ");
}

static void json_key(jj_ctx *c, jj_buf *b, jj_value k) {
    char t[64];
    switch (k.t) {
    case JV_STR:
        json_str(c, b, k.s);
        return;
    case JV_INT:
        snprintf(t, sizeof t, "\"%lld\"", (long long)k.i);
        jj_buf_puts(c, b, t);
        return;
    case JV_BOOL:
        jj_buf_puts(c, b, k.b ? "\"true\"" : "\"false\"");
        return;
    case JV_NONE:
        jj_buf_puts(c, b, "\"null\"");
        return;
    case JV_FLOAT:
        jj_float_repr(k.f, t, sizeof t);
        jj_buf_puts(c, b, "\"");
        jj_buf_puts(c, b, t);
        jj_buf_puts(c, b, "\"");
        return;
    default:
        jj_fail(c, "keys must be str, int, float, bool or None, not %s", jj_type_name(k));
    }
}

static int key_order(const void *x, const void *y) {
    const jj_value *a = x, *b = y;
    size_t n = a->s.n < b->s.n ? a->s.n : b->s.n;
    int r = n ? memcmp(a->s.p, b->s.p, n) : 0;
    return r ? r : (a->s.n > b->s.n) - (a->s.n < b->s.n);
}

void jj_json(jj_ctx *c, jj_buf *b, jj_value v, int indent, int level, const char *item_sep,
             const char *key_sep, bool sort_keys) {
    jj_enter(c);
    char t[64];
    switch (v.t) {
    case JV_NONE:
        jj_buf_puts(c, b, "null");
        break;
    case JV_BOOL:
        jj_buf_puts(c, b, v.b ? "true" : "false");
        break;
    case JV_INT:
        put_int(c, b, v.i);
        break;
    case JV_FLOAT:
        if (isnan(v.f))
            jj_buf_puts(c, b, "NaN");
        else if (isinf(v.f))
            jj_buf_puts(c, b, v.f < 0 ? "-Infinity" : "Infinity");
        else {
            jj_float_repr(v.f, t, sizeof t);
            jj_buf_puts(c, b, t);
        }
        break;
    case JV_STR:
        json_str(c, b, v.s);
        break;
    case JV_LIST:
        if (v.l->kind == JL_GEN) jj_fail(c, "Object of type generator is not JSON serializable");
        if (v.l->n == 0) {
            jj_buf_puts(c, b, "[]");
            break;
        }
        jj_buf_puts(c, b, "[");
        for (size_t i = 0; i < v.l->n; i++) {
            if (i) jj_buf_puts(c, b, item_sep);
            if (indent >= 0) json_newline(c, b, indent, level + 1);
            jj_json(c, b, v.l->v[i], indent, level + 1, item_sep, key_sep, sort_keys);
        }
        if (indent >= 0) json_newline(c, b, indent, level);
        jj_buf_puts(c, b, "]");
        break;
    case JV_DICT: {
        if (v.d->ns) jj_fail(c, "Object of type Namespace is not JSON serializable");
        if (v.d->n == 0) {
            jj_buf_puts(c, b, "{}");
            break;
        }
        size_t *order = jj_alloc(c, v.d->n * sizeof *order);
        for (size_t i = 0; i < v.d->n; i++) order[i] = i;
        if (sort_keys) {
            jj_value *keys = jj_alloc(c, v.d->n * sizeof *keys);
            for (size_t i = 0; i < v.d->n; i++) {
                if (v.d->k[i].t != JV_STR) jj_fail(c, "tojson: sort_keys needs string keys");
                keys[i] = v.d->k[i];
            }
            qsort(keys, v.d->n, sizeof *keys, key_order);
            for (size_t i = 0; i < v.d->n; i++)
                for (size_t j = 0; j < v.d->n; j++)
                    if (jj_equal(v.d->k[j], keys[i])) order[i] = j;
        }
        jj_buf_puts(c, b, "{");
        for (size_t i = 0; i < v.d->n; i++) {
            if (i) jj_buf_puts(c, b, item_sep);
            if (indent >= 0) json_newline(c, b, indent, level + 1);
            json_key(c, b, v.d->k[order[i]]);
            jj_buf_puts(c, b, key_sep);
            jj_json(c, b, v.d->v[order[i]], indent, level + 1, item_sep, key_sep, sort_keys);
        }
        if (indent >= 0) json_newline(c, b, indent, level);
        jj_buf_puts(c, b, "}");
        break;
    }
    default:
        jj_fail(c, "Object of type %s is not JSON serializable", jj_type_name(v));
    }
    jj_leave(c);
}

// ---------------------------------------------------------------------------------------------
// Iteration and length

// Decodes one UTF-8 character's length (invalid bytes count as one).
static size_t utf8_len(const char *p, size_t n) {
    unsigned char ch = (unsigned char)p[0];
    size_t k = ch < 0x80 ? 1 : ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : ch >= 0xC0 ? 2 : 1;
    return k > n ? 1 : k;
}

jj_list *jj_iterate(jj_ctx *c, jj_value v) {
    jj_value out;
    switch (v.t) {
    case JV_UNDEF:
        return jj_list_new(c, JL_LIST).l;
    case JV_LIST:
        return v.l;
    case JV_DICT:
        if (v.d->ns) break;
        out = jj_list_new(c, JL_LIST);
        for (size_t i = 0; i < v.d->n; i++) jj_list_push(c, out.l, v.d->k[i]);
        return out.l;
    case JV_STR:
        out = jj_list_new(c, JL_LIST);
        for (size_t i = 0; i < v.s.n;) {
            size_t k = utf8_len(v.s.p + i, v.s.n - i);
            jj_list_push(c, out.l, (jj_value){.t = JV_STR, .s = {v.s.p + i, k}});
            i += k;
        }
        return out.l;
    default:
        break;
    }
    jj_fail(c, "'%s' object is not iterable", jj_type_name(v));
}

int64_t jj_length(jj_ctx *c, jj_value v) {
    switch (v.t) {
    case JV_UNDEF:
        return 0;
    case JV_STR: {
        int64_t n = 0;
        for (size_t i = 0; i < v.s.n; i += utf8_len(v.s.p + i, v.s.n - i)) n++;
        return n;
    }
    case JV_LIST:
        if (v.l->kind == JL_GEN) break;
        return (int64_t)v.l->n;
    case JV_DICT:
        if (v.d->ns) break;
        return (int64_t)v.d->n;
    default:
        break;
    }
    jj_fail(c, "object of type '%s' has no len()", jj_type_name(v));
}
