// jinja_filters.c - jinja2's filters and tests with their semantics (select/map/reverse give
// generators: always true, no length), plus transformers' tojson (ensure_ascii=False, indent,
// separators, sort_keys). Every jinja2 filter and test name is known, so a template compiles as
// it does with jinja2; the few not implemented fail with their name when used.
#include "runtime/template/jinja.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const filter_names[] = {
    "abs",    "attr",       "batch",       "capitalize", "center",   "count",
    "d",      "default",    "dictsort",    "e",          "escape",   "filesizeformat",
    "first",  "float",      "forceescape", "format",     "groupby",  "indent",
    "int",    "items",      "join",        "last",       "length",   "list",
    "lower",  "map",        "max",         "min",        "pprint",   "random",
    "reject", "rejectattr", "replace",     "reverse",    "round",    "safe",
    "select", "selectattr", "slice",       "sort",       "string",   "striptags",
    "sum",    "title",      "tojson",      "trim",       "truncate", "unique",
    "upper",  "urlencode",  "urlize",      "wordcount",  "wordwrap", "xmlattr",
    NULL};

static const char *const test_names[] = {
    "boolean", "callable", "defined",  "divisibleby", "eq",       "equalto", "escaped",
    "even",    "false",    "filter",   "float",       "ge",       "gt",      "greaterthan",
    "in",      "integer",  "iterable", "le",          "lessthan", "lower",   "lt",
    "mapping", "ne",       "none",     "number",      "odd",      "sameas",  "sequence",
    "string",  "test",     "true",     "undefined",   "upper",    "==",      "!=",
    "<",       "<=",       ">",        ">=",          NULL};

static bool in_names(const char *const *names, jj_str s) {
    for (size_t i = 0; names[i]; i++)
        if (strlen(names[i]) == s.n && memcmp(names[i], s.p, s.n) == 0) return true;
    return false;
}

bool jj_filter_known(jj_str name) {
    return in_names(filter_names, name);
}

bool jj_test_known(jj_str name) {
    return in_names(test_names, name);
}

static bool is(jj_str s, const char *z) {
    return s.n == strlen(z) && memcmp(s.p, z, s.n) == 0;
}

typedef struct fargs {
    jj_env *e;
    jj_frame *f;
    jj_str name; // filter name
    jj_value *a; // [n] positional arguments after the value
    size_t n;
    jj_str *kn;   // [nk] keyword names
    jj_value *kv; // [nk] keyword values
    size_t nk;
    int line;
} fargs;

static jj_value farg(const fargs *F, size_t i, const char *kw, jj_value dflt) {
    if (i < F->n) return F->a[i];
    for (size_t k = 0; kw && k < F->nk; k++)
        if (is(F->kn[k], kw)) return F->kv[k];
    return dflt;
}

_Noreturn static void ffail(const fargs *F, const char *what) {
    jj_fail(F->e->c, "template line %d: filter '%.*s': %s", F->line, (int)F->name.n, F->name.p,
            what);
}

static jj_str soft_str(jj_ctx *c, jj_value v) {
    return jj_to_str(c, v);
}

// Attribute lookup as jinja2's make_attrgetter: dotted path, integer parts index.
static jj_value attr_path(jj_env *e, jj_value v, jj_value attr, int line) {
    if (attr.t != JV_STR) return jj_getitem(e, v, attr, line);
    jj_str s = attr.s;
    size_t i = 0;
    while (i <= s.n) {
        size_t j = i;
        while (j < s.n && s.p[j] != '.') j++;
        jj_str part = {s.p + i, j - i};
        bool digits = part.n > 0;
        for (size_t k = 0; k < part.n; k++)
            if (part.p[k] < '0' || part.p[k] > '9') digits = false;
        jj_value key =
            digits ? jj_int(strtoll(part.p, NULL, 10)) : (jj_value){.t = JV_STR, .s = part};
        v = jj_getitem(e, v, key, line);
        i = j + 1;
    }
    return v;
}

// Sort key order (case-insensitive strings unless case_sensitive).
typedef struct sort_ctx {
    jj_env *e;
    bool cs;      // case sensitive
    bool reverse; // descending
} sort_ctx;

static int key_cmp(sort_ctx *s, jj_value a, jj_value b) {
    jj_ctx *c = s->e->c;
    if (!s->cs && a.t == JV_STR && b.t == JV_STR) {
        a = jj_s_lower(c, a.s);
        b = jj_s_lower(c, b.s);
    }
    return jj_compare(c, a, b, "<");
}

// Stable merge sort of vals by keys.
static void merge_sort(sort_ctx *s, jj_value *keys, jj_value *vals, size_t n, jj_value *tk,
                       jj_value *tv) {
    if (n < 2) return;
    size_t h = n / 2;
    merge_sort(s, keys, vals, h, tk, tv);
    merge_sort(s, keys + h, vals + h, n - h, tk, tv);
    size_t i = 0, j = h, k = 0;
    while (i < h || j < n) {
        bool take_left;
        if (i >= h)
            take_left = false;
        else if (j >= n)
            take_left = true;
        else {
            int r = key_cmp(s, keys[j], keys[i]);
            take_left = s->reverse ? r <= 0 : r >= 0;
        }
        size_t from = take_left ? i++ : j++;
        tk[k] = keys[from];
        tv[k++] = vals[from];
    }
    memcpy(keys, tk, n * sizeof *keys);
    memcpy(vals, tv, n * sizeof *vals);
}

static jj_value sorted(jj_env *e, jj_list *l, bool cs, bool reverse, jj_value attr, int line,
                       bool by_value_of_pairs, bool pairs) {
    jj_ctx *c = e->c;
    size_t n = l->n;
    jj_value *keys = jj_alloc(c, (n + 1) * sizeof *keys),
             *vals = jj_alloc(c, (n + 1) * sizeof *vals);
    jj_value *tk = jj_alloc(c, (n + 1) * sizeof *tk), *tv = jj_alloc(c, (n + 1) * sizeof *tv);
    for (size_t i = 0; i < n; i++) {
        vals[i] = l->v[i];
        keys[i] = pairs ? l->v[i].l->v[by_value_of_pairs ? 1 : 0]
                  : attr.t != JV_UNDEF && attr.t != JV_NONE ? attr_path(e, l->v[i], attr, line)
                                                            : l->v[i];
    }
    sort_ctx s = {e, cs, reverse};
    merge_sort(&s, keys, vals, n, tk, tv);
    jj_value r = jj_list_new(c, JL_LIST);
    for (size_t i = 0; i < n; i++) jj_list_push(c, r.l, vals[i]);
    return r;
}

static jj_value select_items(const fargs *F, jj_value v, bool attr, bool keep) {
    jj_env *e = F->e;
    jj_value out = jj_list_new(e->c, JL_GEN);
    if (!jj_truthy(v)) return out; // jinja2 yields nothing for a false value
    jj_list *l = jj_iterate(e->c, v);
    size_t first = attr ? 1 : 0;
    jj_value an = attr ? farg(F, 0, NULL, JJ_UNDEF) : JJ_UNDEF;
    jj_value tn = farg(F, first, NULL, JJ_UNDEF);
    if (tn.t != JV_UNDEF && tn.t != JV_STR) ffail(F, "the test name must be a string");
    if (tn.t == JV_STR && !jj_test_known(tn.s))
        jj_fail(e->c, "template line %d: no test named '%.*s'", F->line, (int)tn.s.n, tn.s.p);
    size_t n_targs = F->n > first + 1 ? F->n - first - 1 : 0;
    for (size_t i = 0; i < l->n; i++) {
        jj_value item = attr ? attr_path(e, l->v[i], an, F->line) : l->v[i];
        bool r = tn.t == JV_STR ? jj_test(e, tn.s, item, F->a + first + 1, n_targs, F->line)
                                : jj_truthy(item);
        if (r == keep) jj_list_push(e->c, out.l, l->v[i]);
    }
    return out;
}

static jj_value do_map(const fargs *F, jj_value v) {
    jj_env *e = F->e;
    jj_value out = jj_list_new(e->c, JL_GEN);
    if (!jj_truthy(v)) return out; // jinja2 yields nothing for a false value
    jj_list *l = jj_iterate(e->c, v);
    jj_value attr = farg(F, 99, "attribute", JJ_UNDEF);
    if (attr.t != JV_UNDEF) {
        jj_value dflt = farg(F, 99, "default", JJ_UNDEF);
        for (size_t i = 0; i < l->n; i++) {
            jj_value x = attr_path(e, l->v[i], attr, F->line);
            jj_list_push(e->c, out.l, x.t == JV_UNDEF && dflt.t != JV_UNDEF ? dflt : x);
        }
        return out;
    }
    jj_value name = farg(F, 0, NULL, JJ_UNDEF);
    if (name.t != JV_STR) ffail(F, "expects a filter name or attribute=");
    if (!jj_filter_known(name.s))
        jj_fail(e->c, "template line %d: no filter named '%.*s'", F->line, (int)name.s.n, name.s.p);
    for (size_t i = 0; i < l->n; i++)
        jj_list_push(
            e->c, out.l,
            jj_filter(e, F->f, name.s, l->v[i], F->a + 1, F->n - 1, F->kn, F->kv, F->nk, F->line));
    return out;
}

static jj_value do_indent(const fargs *F, jj_str s) {
    jj_ctx *c = F->e->c;
    jj_value w = farg(F, 0, "width", jj_int(4));
    bool first = jj_truthy(farg(F, 1, "first", jj_bool(false)));
    bool blank = jj_truthy(farg(F, 2, "blank", jj_bool(false)));
    jj_str ind;
    if (w.t == JV_STR)
        ind = w.s;
    else if (w.t == JV_INT && w.i >= 0 && w.i <= 1000) {
        char *sp = jj_alloc(c, (size_t)w.i + 1);
        memset(sp, ' ', (size_t)w.i);
        ind = (jj_str){sp, (size_t)w.i};
    } else
        ffail(F, "width must be a string or a small integer");
    // s + "\n", split into lines (\n, \r\n, \r and the other line boundaries of splitlines).
    jj_value lines = jj_list_new(c, JL_LIST);
    size_t i = 0, start = 0;
    jj_buf t = {0};
    jj_buf_put(c, &t, s.p, s.n);
    jj_buf_put(c, &t, "\n", 1);
    while (i < t.n) {
        unsigned char ch = (unsigned char)t.p[i];
        size_t k = 0;
        if (ch == '\r' && i + 1 < t.n && t.p[i + 1] == '\n')
            k = 2;
        else if (ch == '\n' || ch == '\r' || ch == 0x0b || ch == 0x0c || (ch >= 0x1c && ch <= 0x1e))
            k = 1;
        else if (ch == 0xC2 && i + 1 < t.n && (unsigned char)t.p[i + 1] == 0x85)
            k = 2;
        else if (ch == 0xE2 && i + 2 < t.n && (unsigned char)t.p[i + 1] == 0x80 &&
                 ((unsigned char)t.p[i + 2] == 0xA8 || (unsigned char)t.p[i + 2] == 0xA9))
            k = 3;
        if (k) {
            jj_list_push(c, lines.l, (jj_value){.t = JV_STR, .s = {t.p + start, i - start}});
            i += k;
            start = i;
        } else
            i++;
    }
    if (start < t.n)
        jj_list_push(c, lines.l, (jj_value){.t = JV_STR, .s = {t.p + start, t.n - start}});
    jj_buf b = {0};
    jj_buf_put(c, &b, "", 0);
    if (first) jj_buf_put(c, &b, ind.p, ind.n);
    for (size_t j = 0; j < lines.l->n; j++) {
        jj_str ln = lines.l->v[j].s;
        if (j > 0) {
            jj_buf_put(c, &b, "\n", 1);
            if (blank || ln.n > 0) jj_buf_put(c, &b, ind.p, ind.n);
        }
        jj_buf_put(c, &b, ln.p, ln.n);
    }
    return jj_buf_value(&b);
}

static jj_value do_tojson(const fargs *F, jj_value v) {
    jj_ctx *c = F->e->c;
    jj_value ind = farg(F, 0, "indent", JJ_NONE), seps = farg(F, 1, "separators", JJ_NONE);
    bool sort_keys = jj_truthy(farg(F, 2, "sort_keys", jj_bool(false)));
    int indent = -1;
    if (ind.t == JV_INT)
        indent = ind.i < 0 ? 0 : ind.i > 64 ? 64 : (int)ind.i;
    else if (ind.t != JV_NONE)
        ffail(F, "indent must be an integer or None");
    const char *item = indent >= 0 ? "," : ", ", *key = ": ";
    if (seps.t == JV_LIST && seps.l->n == 2 && seps.l->v[0].t == JV_STR &&
        seps.l->v[1].t == JV_STR) {
        item = jj_strn(c, seps.l->v[0].s.p, seps.l->v[0].s.n).s.p;
        key = jj_strn(c, seps.l->v[1].s.p, seps.l->v[1].s.n).s.p;
    } else if (seps.t != JV_NONE)
        ffail(F, "separators must be a pair of strings");
    jj_buf b = {0};
    jj_buf_put(c, &b, "", 0);
    jj_json(c, &b, v, indent, 0, item, key, sort_keys);
    return jj_buf_value(&b);
}

jj_value jj_html_escape(jj_ctx *c, jj_str s) {
    jj_buf b = {0};
    jj_buf_put(c, &b, "", 0);
    for (size_t i = 0; i < s.n; i++) {
        switch (s.p[i]) {
        case '&':
            jj_buf_puts(c, &b, "&amp;");
            break;
        case '<':
            jj_buf_puts(c, &b, "&lt;");
            break;
        case '>':
            jj_buf_puts(c, &b, "&gt;");
            break;
        case '"':
            jj_buf_puts(c, &b, "&#34;");
            break;
        case '\'':
            jj_buf_puts(c, &b, "&#39;");
            break;
        default:
            jj_buf_put(c, &b, s.p + i, 1);
        }
    }
    return jj_buf_value(&b);
}

// jinja2's title filter: upper-case the first character of each word, where words begin after
// runs of whitespace, '-', '(', '{', '[' or '<'; the rest lower-case.
static jj_value do_title(jj_ctx *c, jj_str s) {
    jj_value r = jj_strn(c, s.p, s.n);
    char *d = (char *)r.s.p;
    bool start = true;
    for (size_t i = 0; i < s.n; i++) {
        char ch = d[i];
        bool sep = ch == ' ' || (ch >= 0x09 && ch <= 0x0D) || ch == '-' || ch == '(' || ch == '{' ||
                   ch == '[' || ch == '<';
        if (sep) {
            start = true;
            continue;
        }
        if (start && ch >= 'a' && ch <= 'z') d[i] = (char)(ch - 32);
        if (!start && ch >= 'A' && ch <= 'Z') d[i] = (char)(ch + 32);
        start = false;
    }
    return r;
}

static jj_value to_int(const fargs *F, jj_value v) {
    jj_value dflt = farg(F, 0, "default", jj_int(0));
    switch (v.t) {
    case JV_INT:
        return v;
    case JV_BOOL:
        return jj_int(v.b);
    case JV_FLOAT:
        if (!isfinite(v.f) || fabs(v.f) > 9e18) return dflt;
        return jj_int((int64_t)v.f);
    case JV_STR: {
        char buf[64];
        jj_value st = jj_s_strip(F->e->c, v.s, NULL, true, true);
        if (st.s.n == 0 || st.s.n >= sizeof buf) return dflt;
        memcpy(buf, st.s.p, st.s.n);
        buf[st.s.n] = '\0';
        char *end;
        long long i = strtoll(buf, &end, 10);
        if (*end == '\0') return jj_int(i);
        double d = strtod(buf, &end);
        if (*end == '\0' && isfinite(d) && fabs(d) < 9e18) return jj_int((int64_t)d);
        return dflt;
    }
    default:
        return dflt;
    }
}

static jj_value to_float(const fargs *F, jj_value v) {
    jj_value dflt = farg(F, 0, "default", jj_float(0));
    if (jj_is_number(v)) return jj_float(jj_num(v));
    if (v.t == JV_STR) {
        char buf[64];
        jj_value st = jj_s_strip(F->e->c, v.s, NULL, true, true);
        if (st.s.n == 0 || st.s.n >= sizeof buf) return dflt;
        memcpy(buf, st.s.p, st.s.n);
        buf[st.s.n] = '\0';
        char *end;
        double d = strtod(buf, &end);
        if (*end == '\0') return jj_float(d);
    }
    return dflt;
}

jj_value jj_filter(jj_env *e, jj_frame *f, jj_str name, jj_value v, jj_value *args, size_t n,
                   jj_str *kw_names, jj_value *kw_vals, size_t n_kw, int line) {
    jj_ctx *c = e->c;
    fargs F = {e, f, name, args, n, kw_names, kw_vals, n_kw, line};
    jj_step(c);
    if (is(name, "safe")) {
        jj_value m = {.t = JV_STR, .s = soft_str(c, v)};
        m.safe = true;
        return m;
    }
    if (is(name, "string")) return (jj_value){.t = JV_STR, .s = soft_str(c, v)};
    if (is(name, "length") || is(name, "count")) return jj_int(jj_length(c, v));
    if (is(name, "default") || is(name, "d")) {
        bool boolean = jj_truthy(farg(&F, 1, "boolean", jj_bool(false)));
        if (v.t == JV_UNDEF || (boolean && !jj_truthy(v)))
            return farg(&F, 0, "default_value", jj_strz(""));
        return v;
    }
    if (is(name, "trim")) {
        jj_value ch = farg(&F, 0, "chars", JJ_NONE);
        return jj_s_strip(c, soft_str(c, v), ch.t == JV_STR ? &ch.s : NULL, true, true);
    }
    if (is(name, "upper")) return jj_s_upper(c, soft_str(c, v));
    if (is(name, "lower")) return jj_s_lower(c, soft_str(c, v));
    if (is(name, "capitalize")) return jj_s_capitalize(c, jj_s_lower(c, soft_str(c, v)).s);
    if (is(name, "title")) return do_title(c, soft_str(c, v));
    if (is(name, "tojson")) return do_tojson(&F, v);
    if (is(name, "indent")) return do_indent(&F, soft_str(c, v));
    if (is(name, "e") || is(name, "escape") || is(name, "forceescape")) {
        if (v.safe && !is(name, "forceescape")) return v;
        jj_value m = jj_html_escape(c, soft_str(c, v));
        m.safe = true;
        return m;
    }
    if (is(name, "replace")) {
        jj_value o = farg(&F, 0, "old", JJ_UNDEF), r = farg(&F, 1, "new", JJ_UNDEF);
        jj_value cnt = farg(&F, 2, "count", JJ_NONE);
        if (o.t != JV_STR || r.t != JV_STR) ffail(&F, "expects two strings");
        return jj_s_replace(c, soft_str(c, v), o.s, r.s, cnt.t == JV_INT ? cnt.i : -1);
    }
    if (is(name, "join")) {
        jj_value d = farg(&F, 0, "d", jj_strz("")), attr = farg(&F, 1, "attribute", JJ_NONE);
        jj_list *l = jj_iterate(c, v);
        jj_buf b = {0};
        jj_buf_put(c, &b, "", 0);
        jj_str sep = soft_str(c, d);
        for (size_t i = 0; i < l->n; i++) {
            if (i) jj_buf_put(c, &b, sep.p, sep.n);
            jj_value x = attr.t != JV_NONE ? attr_path(e, l->v[i], attr, line) : l->v[i];
            jj_str_of(c, &b, x);
        }
        return jj_buf_value(&b);
    }
    if (is(name, "first") || is(name, "last")) {
        jj_list *l = jj_iterate(c, v);
        if (is(name, "last") && v.t == JV_LIST && v.l->kind == JL_GEN)
            ffail(&F, "'generator' object is not reversible");
        if (l->n == 0)
            return (jj_value){.t = JV_UNDEF, .s = {"No first item, sequence was empty.", 33}};
        return name.p[0] == 'f' ? l->v[0] : l->v[l->n - 1];
    }
    if (is(name, "list")) {
        jj_list *l = jj_iterate(c, v);
        jj_value r = jj_list_new(c, JL_LIST);
        for (size_t i = 0; i < l->n; i++) jj_list_push(c, r.l, l->v[i]);
        return r;
    }
    if (is(name, "items")) {
        if (v.t == JV_UNDEF) return jj_list_new(c, JL_GEN);
        if (v.t != JV_DICT || v.d->ns) ffail(&F, "can only get item pairs from a mapping");
        jj_value r = jj_list_new(c, JL_GEN);
        for (size_t i = 0; i < v.d->n; i++) {
            jj_value t = jj_list_new(c, JL_TUPLE);
            jj_list_push(c, t.l, v.d->k[i]);
            jj_list_push(c, t.l, v.d->v[i]);
            jj_list_push(c, r.l, t);
        }
        return r;
    }
    if (is(name, "dictsort")) {
        if (v.t != JV_DICT) ffail(&F, "can only sort a mapping");
        bool cs = jj_truthy(farg(&F, 0, "case_sensitive", jj_bool(false)));
        jj_value by = farg(&F, 1, "by", jj_strz("key"));
        bool rev = jj_truthy(farg(&F, 2, "reverse", jj_bool(false)));
        jj_value pairs = jj_list_new(c, JL_LIST);
        for (size_t i = 0; i < v.d->n; i++) {
            jj_value t = jj_list_new(c, JL_TUPLE);
            jj_list_push(c, t.l, v.d->k[i]);
            jj_list_push(c, t.l, v.d->v[i]);
            jj_list_push(c, pairs.l, t);
        }
        return sorted(e, pairs.l, cs, rev, JJ_UNDEF, line, jj_str_eq(by, "value"), true);
    }
    if (is(name, "sort")) {
        bool rev = jj_truthy(farg(&F, 0, "reverse", jj_bool(false)));
        bool cs = jj_truthy(farg(&F, 1, "case_sensitive", jj_bool(false)));
        return sorted(e, jj_iterate(c, v), cs, rev, farg(&F, 2, "attribute", JJ_NONE), line, false,
                      false);
    }
    if (is(name, "unique")) {
        bool cs = jj_truthy(farg(&F, 0, "case_sensitive", jj_bool(false)));
        jj_value attr = farg(&F, 1, "attribute", JJ_NONE);
        jj_list *l = jj_iterate(c, v);
        jj_value seen = jj_list_new(c, JL_LIST), out = jj_list_new(c, JL_GEN);
        for (size_t i = 0; i < l->n; i++) {
            jj_value k = attr.t != JV_NONE ? attr_path(e, l->v[i], attr, line) : l->v[i];
            if (!cs && k.t == JV_STR) k = jj_s_lower(c, k.s);
            bool dup = false;
            for (size_t j = 0; j < seen.l->n && !dup; j++) dup = jj_equal(seen.l->v[j], k);
            if (dup) continue;
            jj_list_push(c, seen.l, k);
            jj_list_push(c, out.l, l->v[i]);
        }
        return out;
    }
    if (is(name, "reverse")) {
        if (v.t == JV_STR) {
            jj_list *l = jj_iterate(c, v);
            jj_buf b = {0};
            jj_buf_put(c, &b, "", 0);
            for (size_t i = l->n; i > 0; i--) jj_buf_put(c, &b, l->v[i - 1].s.p, l->v[i - 1].s.n);
            return jj_buf_value(&b);
        }
        jj_list *l = jj_iterate(c, v);
        jj_value r = jj_list_new(c, v.t == JV_LIST && v.l->kind == JL_GEN ? JL_LIST : JL_GEN);
        for (size_t i = l->n; i > 0; i--) jj_list_push(c, r.l, l->v[i - 1]);
        return r;
    }
    if (is(name, "map")) return do_map(&F, v);
    if (is(name, "select")) return select_items(&F, v, false, true);
    if (is(name, "reject")) return select_items(&F, v, false, false);
    if (is(name, "selectattr")) return select_items(&F, v, true, true);
    if (is(name, "rejectattr")) return select_items(&F, v, true, false);
    if (is(name, "int")) return to_int(&F, v);
    if (is(name, "float")) return to_float(&F, v);
    if (is(name, "abs")) {
        if (v.t == JV_INT) {
            if (v.i == INT64_MIN) ffail(&F, "integer overflow");
            return jj_int(v.i < 0 ? -v.i : v.i);
        }
        if (v.t == JV_BOOL) return jj_int(v.b);
        if (v.t == JV_FLOAT) return jj_float(fabs(v.f));
        ffail(&F, "bad operand type for abs()");
    }
    if (is(name, "attr")) {
        jj_value a = farg(&F, 0, "name", JJ_UNDEF);
        if (a.t != JV_STR) ffail(&F, "expects an attribute name");
        return jj_getattr(e, v, a.s, line);
    }
    if (is(name, "min") || is(name, "max")) {
        bool cs = jj_truthy(farg(&F, 0, "case_sensitive", jj_bool(false)));
        jj_value attr = farg(&F, 1, "attribute", JJ_NONE);
        jj_list *l = jj_iterate(c, v);
        if (l->n == 0)
            return (jj_value){.t = JV_UNDEF, .s = {"No aggregated item, sequence was empty.", 39}};
        jj_value s = sorted(e, l, cs, false, attr, line, false, false);
        return name.p[1] == 'i' ? s.l->v[0] : s.l->v[s.l->n - 1];
    }
    if (is(name, "sum")) {
        jj_value attr = farg(&F, 0, "attribute", JJ_NONE), acc = farg(&F, 1, "start", jj_int(0));
        jj_list *l = jj_iterate(c, v);
        for (size_t i = 0; i < l->n; i++) {
            jj_value x = attr.t != JV_NONE ? attr_path(e, l->v[i], attr, line) : l->v[i];
            if (!jj_is_number(x) || !jj_is_number(acc)) ffail(&F, "can only sum numbers");
            if (acc.t == JV_FLOAT || x.t == JV_FLOAT)
                acc = jj_float(jj_num(acc) + jj_num(x));
            else if (__builtin_add_overflow(acc.t == JV_BOOL ? acc.b : acc.i,
                                            x.t == JV_BOOL ? x.b : x.i, &acc.i))
                ffail(&F, "integer overflow");
            else
                acc.t = JV_INT;
        }
        return acc;
    }
    if (is(name, "round")) {
        jj_value p = farg(&F, 0, "precision", jj_int(0)),
                 m = farg(&F, 1, "method", jj_strz("common"));
        if (!jj_is_number(v) || p.t != JV_INT || p.i < 0 || p.i > 15) ffail(&F, "bad arguments");
        double s = pow(10, (double)p.i), x = jj_num(v) * s;
        double r = jj_str_eq(m, "floor") ? floor(x) : jj_str_eq(m, "ceil") ? ceil(x) : round(x);
        return jj_float(r / s);
    }
    jj_fail(c, "template line %d: unsupported construct 'filter %.*s'", line, (int)name.n, name.p);
}

bool jj_test(jj_env *e, jj_str name, jj_value v, jj_value *args, size_t n, int line) {
    jj_ctx *c = e->c;
    jj_value a0 = n > 0 ? args[0] : JJ_UNDEF;
    if (is(name, "defined")) return v.t != JV_UNDEF;
    if (is(name, "undefined")) return v.t == JV_UNDEF;
    if (is(name, "none")) return v.t == JV_NONE;
    if (is(name, "boolean")) return v.t == JV_BOOL;
    if (is(name, "false")) return v.t == JV_BOOL && !v.b;
    if (is(name, "true")) return v.t == JV_BOOL && v.b;
    if (is(name, "integer")) return v.t == JV_INT;
    if (is(name, "float")) return v.t == JV_FLOAT;
    if (is(name, "number")) return jj_is_number(v);
    if (is(name, "string")) return v.t == JV_STR;
    if (is(name, "mapping")) return v.t == JV_DICT && !v.d->ns;
    if (is(name, "iterable"))
        return v.t == JV_STR || v.t == JV_LIST || (v.t == JV_DICT && !v.d->ns) || v.t == JV_UNDEF ||
               v.t == JV_LOOP;
    if (is(name, "sequence"))
        return v.t == JV_STR || (v.t == JV_LIST && v.l->kind != JL_GEN) ||
               (v.t == JV_DICT && !v.d->ns);
    if (is(name, "callable")) return v.t == JV_MACRO || v.t == JV_FUNC;
    if (is(name, "escaped")) return false;
    if (is(name, "sameas")) return v.t == a0.t && jj_equal(v, a0);
    if (is(name, "lower") || is(name, "upper")) {
        if (v.t != JV_STR)
            jj_fail(c, "template line %d: test '%.*s' needs a string", line, (int)name.n, name.p);
        jj_value r = name.p[0] == 'l' ? jj_s_lower(c, v.s) : jj_s_upper(c, v.s);
        bool cased = false;
        for (size_t i = 0; i < v.s.n; i++)
            cased |= ((v.s.p[i] | 0x20) >= 'a' && (v.s.p[i] | 0x20) <= 'z');
        return cased && jj_equal(r, v);
    }
    if (is(name, "filter")) return a0.t == JV_STR ? false : false;
    if (is(name, "test")) return a0.t == JV_STR && jj_test_known(a0.s);
    if (is(name, "odd") || is(name, "even") || is(name, "divisibleby")) {
        jj_value d = is(name, "divisibleby") ? a0 : jj_int(2);
        if (!(v.t == JV_INT || v.t == JV_BOOL) || !(d.t == JV_INT || d.t == JV_BOOL))
            jj_fail(c, "template line %d: test '%.*s' needs integers", line, (int)name.n, name.p);
        int64_t x = v.t == JV_INT ? v.i : v.b, y = d.t == JV_INT ? d.i : d.b;
        if (y == 0) jj_fail(c, "template line %d: integer division or modulo by zero", line);
        int64_t m = y == -1 ? 0 : x % y;
        if (is(name, "odd")) return m != 0;
        return m == 0;
    }
    if (is(name, "in")) {
        if (a0.t == JV_STR) {
            if (v.t != JV_STR)
                jj_fail(c, "template line %d: 'in <string>' requires string as left operand", line);
            size_t at;
            return jj_s_has(a0.s, v.s, &at);
        }
        if (a0.t == JV_DICT) return jj_dict_get(a0.d, v) != NULL;
        jj_list *l = jj_iterate(c, a0);
        for (size_t i = 0; i < l->n; i++)
            if (jj_equal(l->v[i], v)) return true;
        return false;
    }
    if (is(name, "eq") || is(name, "equalto") || is(name, "==")) return jj_equal(v, a0);
    if (is(name, "ne") || is(name, "!=")) return !jj_equal(v, a0);
    int r;
    if (v.t == JV_UNDEF || a0.t == JV_UNDEF)
        jj_fail(c, "template line %d: comparison with an undefined value", line);
    r = jj_compare(c, v, a0, "<");
    if (is(name, "lt") || is(name, "lessthan") || is(name, "<")) return r < 0;
    if (is(name, "le") || is(name, "<=")) return r <= 0;
    if (is(name, "gt") || is(name, "greaterthan") || is(name, ">")) return r > 0;
    return r >= 0;
}
