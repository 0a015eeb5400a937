// jinja_calls.c - calling the methods of values: str (split, strip, startswith, replace, find,
// format ...), dict (get, items, keys, values), list (index, count) and loop.cycle, with
// Python's argument conventions and results.
#include "runtime/template/jinja.h"

#include <stdio.h>
#include <string.h>

typedef struct margs {
    jj_env *e;
    const char *name; // method name (for errors)
    jj_value self;    // the object
    jj_value *a;      // [n] positional
    size_t n;
    jj_str *kn; // [nk] keyword names
    jj_value *kv;
    size_t nk;
    int line;
} margs;

// Argument i by position or keyword `kw`; `dflt` when absent.
static jj_value arg(const margs *m, size_t i, const char *kw, jj_value dflt) {
    if (i < m->n) return m->a[i];
    for (size_t k = 0; kw && k < m->nk; k++)
        if (m->kn[k].n == strlen(kw) && memcmp(m->kn[k].p, kw, m->kn[k].n) == 0) return m->kv[k];
    return dflt;
}

_Noreturn static void bad_arg(const margs *m, const char *what) {
    jj_fail(m->e->c, "template line %d: %s.%s(): %s", m->line, jj_type_name(m->self), m->name,
            what);
}

static jj_str str_arg(const margs *m, size_t i, const char *kw) {
    jj_value v = arg(m, i, kw, JJ_UNDEF);
    if (v.t != JV_STR) bad_arg(m, "expects a string argument");
    return v.s;
}

static bool match_affix(const margs *m, jj_str s, jj_value p, bool end) {
    if (p.t == JV_LIST && p.l->kind == JL_TUPLE) {
        for (size_t i = 0; i < p.l->n; i++)
            if (match_affix(m, s, p.l->v[i], end)) return true;
        return false;
    }
    if (p.t != JV_STR) bad_arg(m, "expects a string or a tuple of strings");
    if (p.s.n > s.n) return false;
    return memcmp(end ? s.p + s.n - p.s.n : s.p, p.s.p, p.s.n) == 0;
}

static bool is_ws_byte(char ch) {
    return ch == ' ' || (ch >= 0x09 && ch <= 0x0D) || (ch >= 0x1C && ch <= 0x1F);
}

static jj_value split(const margs *m, jj_str s, bool from_right) {
    jj_ctx *c = m->e->c;
    jj_value sepv = arg(m, 0, "sep", JJ_NONE), maxv = arg(m, 1, "maxsplit", jj_int(-1));
    if (maxv.t != JV_INT) bad_arg(m, "maxsplit must be an integer");
    int64_t max = maxv.i;
    jj_value out = jj_list_new(c, JL_LIST);
    jj_list *parts = out.l;
    if (sepv.t == JV_NONE) {
        // Runs of whitespace; ASCII whitespace (and the C1/Unicode spaces via strip).
        size_t i = 0, n = s.n;
        if (!from_right) {
            while (i < n) {
                while (i < n && is_ws_byte(s.p[i])) i++;
                if (i >= n) break;
                if (max >= 0 && (int64_t)parts->n == max) {
                    jj_value rest = jj_s_strip(c, (jj_str){s.p + i, n - i}, NULL, false, true);
                    jj_list_push(c, parts, rest);
                    break;
                }
                size_t j = i;
                while (j < n && !is_ws_byte(s.p[j])) j++;
                jj_list_push(c, parts, (jj_value){.t = JV_STR, .s = {s.p + i, j - i}});
                i = j;
            }
            return out;
        }
        jj_value rev = jj_list_new(c, JL_LIST);
        size_t j = n;
        while (j > 0) {
            while (j > 0 && is_ws_byte(s.p[j - 1])) j--;
            if (j == 0) break;
            if (max >= 0 && (int64_t)rev.l->n == max) {
                jj_list_push(c, rev.l, jj_s_strip(c, (jj_str){s.p, j}, NULL, true, false));
                break;
            }
            size_t k = j;
            while (k > 0 && !is_ws_byte(s.p[k - 1])) k--;
            jj_list_push(c, rev.l, (jj_value){.t = JV_STR, .s = {s.p + k, j - k}});
            j = k;
        }
        for (size_t i2 = rev.l->n; i2 > 0; i2--) jj_list_push(c, parts, rev.l->v[i2 - 1]);
        return out;
    }
    if (sepv.t != JV_STR) bad_arg(m, "sep must be a string or None");
    jj_str sep = sepv.s;
    if (sep.n == 0) bad_arg(m, "empty separator");
    if (!from_right) {
        size_t i = 0;
        for (;;) {
            size_t at;
            jj_str rest = {s.p + i, s.n - i};
            if ((max >= 0 && (int64_t)parts->n == max) || !jj_s_has(rest, sep, &at)) {
                jj_list_push(c, parts, (jj_value){.t = JV_STR, .s = rest});
                return out;
            }
            jj_list_push(c, parts, (jj_value){.t = JV_STR, .s = {s.p + i, at}});
            i += at + sep.n;
        }
    }
    jj_value rev = jj_list_new(c, JL_LIST);
    size_t end = s.n;
    for (;;) {
        size_t k = end;
        bool found = false;
        while (k >= sep.n && !(max >= 0 && (int64_t)rev.l->n == max)) {
            if (memcmp(s.p + k - sep.n, sep.p, sep.n) == 0) {
                found = true;
                break;
            }
            k--;
        }
        if (!found) {
            jj_list_push(c, rev.l, (jj_value){.t = JV_STR, .s = {s.p, end}});
            break;
        }
        jj_list_push(c, rev.l, (jj_value){.t = JV_STR, .s = {s.p + k, end - k}});
        end = k - sep.n;
    }
    for (size_t i = rev.l->n; i > 0; i--) jj_list_push(c, parts, rev.l->v[i - 1]);
    return out;
}

// str.format with {} / {0} / {name} fields (no format specs or conversions).
static jj_value format(const margs *m, jj_str s) {
    jj_ctx *c = m->e->c;
    jj_buf b = {0};
    jj_buf_put(c, &b, "", 0);
    size_t auto_i = 0;
    for (size_t i = 0; i < s.n; i++) {
        char ch = s.p[i];
        if (ch == '}' && i + 1 < s.n && s.p[i + 1] == '}') {
            jj_buf_put(c, &b, "}", 1);
            i++;
            continue;
        }
        if (ch != '{') {
            jj_buf_put(c, &b, &ch, 1);
            continue;
        }
        if (i + 1 < s.n && s.p[i + 1] == '{') {
            jj_buf_put(c, &b, "{", 1);
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < s.n && s.p[j] != '}') j++;
        if (j >= s.n) bad_arg(m, "Single '{' encountered in format string");
        jj_str field = {s.p + i + 1, j - i - 1};
        if (memchr(field.p, ':', field.n) || memchr(field.p, '!', field.n) ||
            memchr(field.p, '.', field.n) || memchr(field.p, '[', field.n))
            jj_fail(c, "template line %d: unsupported construct 'format spec in str.format'",
                    m->line);
        jj_value v;
        if (field.n == 0) {
            if (auto_i >= m->n) bad_arg(m, "Replacement index out of range");
            v = m->a[auto_i++];
        } else if (field.p[0] >= '0' && field.p[0] <= '9') {
            size_t k = 0;
            for (size_t t = 0; t < field.n; t++) k = k * 10 + (size_t)(field.p[t] - '0');
            if (k >= m->n) bad_arg(m, "Replacement index out of range");
            v = m->a[k];
        } else {
            size_t k;
            for (k = 0; k < m->nk; k++)
                if (m->kn[k].n == field.n && memcmp(m->kn[k].p, field.p, field.n) == 0) break;
            if (k == m->nk) bad_arg(m, "missing keyword argument");
            v = m->kv[k];
        }
        jj_str_of(c, &b, v);
        i = j;
    }
    return jj_buf_value(&b);
}

static jj_value str_method(const margs *m, jj_str s) {
    jj_ctx *c = m->e->c;
    const char *n = m->name;
    if (!strcmp(n, "startswith") || !strcmp(n, "endswith")) {
        if (m->n != 1) bad_arg(m, "takes exactly one argument");
        return jj_bool(match_affix(m, s, m->a[0], n[0] == 'e'));
    }
    if (!strcmp(n, "strip") || !strcmp(n, "lstrip") || !strcmp(n, "rstrip")) {
        jj_value ch = arg(m, 0, "chars", JJ_NONE);
        if (ch.t != JV_NONE && ch.t != JV_STR) bad_arg(m, "arg must be None or str");
        return jj_s_strip(c, s, ch.t == JV_STR ? &ch.s : NULL, n[0] != 'r', n[0] != 'l');
    }
    if (!strcmp(n, "split")) return split(m, s, false);
    if (!strcmp(n, "rsplit")) return split(m, s, true);
    if (!strcmp(n, "upper")) return jj_s_upper(c, s);
    if (!strcmp(n, "lower") || !strcmp(n, "casefold")) return jj_s_lower(c, s);
    if (!strcmp(n, "capitalize")) return jj_s_capitalize(c, s);
    if (!strcmp(n, "title")) {
        // Python's title: upper after an uncased character, lower after a cased one.
        jj_value r = jj_strn(c, s.p, s.n);
        char *d = (char *)r.s.p;
        bool prev = false;
        for (size_t i = 0; i < s.n; i++) {
            char ch = d[i];
            bool lo = ch >= 'a' && ch <= 'z', up = ch >= 'A' && ch <= 'Z';
            if (lo && !prev) d[i] = (char)(ch - 32);
            if (up && prev) d[i] = (char)(ch + 32);
            prev = lo || up;
        }
        return r;
    }
    if (!strcmp(n, "replace")) {
        jj_value cnt = arg(m, 2, "count", jj_int(-1));
        if (cnt.t != JV_INT) bad_arg(m, "count must be an integer");
        return jj_s_replace(c, s, str_arg(m, 0, "old"), str_arg(m, 1, "new"), cnt.i);
    }
    if (!strcmp(n, "find") || !strcmp(n, "rfind") || !strcmp(n, "index") || !strcmp(n, "rindex") ||
        !strcmp(n, "count")) {
        jj_str sub = str_arg(m, 0, NULL);
        if (m->n > 1)
            jj_fail(c, "template line %d: unsupported construct 'str.%s with start'", m->line, n);
        // Positions are in code points, as Python's.
        int64_t first = -1, last = -1, count = 0, cps = 0;
        size_t i = 0;
        for (;;) {
            if (i + sub.n <= s.n && memcmp(s.p + i, sub.p, sub.n) == 0) {
                if (first < 0) first = cps;
                last = cps;
                count++;
                if (sub.n > 0 && !strcmp(n, "count")) {
                    for (size_t k = 0; k < sub.n; k++)
                        if (((unsigned char)s.p[i + k] & 0xC0) != 0x80) cps++;
                    i += sub.n;
                    continue;
                }
            }
            if (i >= s.n) break;
            i++;
            while (i < s.n && ((unsigned char)s.p[i] & 0xC0) == 0x80) i++;
            cps++;
        }
        if (n[0] == 'c') return jj_int(count);
        int64_t r = n[0] == 'r' ? last : first;
        if (r < 0 && (!strcmp(n, "index") || !strcmp(n, "rindex")))
            bad_arg(m, "substring not found");
        return jj_int(r);
    }
    if (!strcmp(n, "join")) {
        jj_list *l = jj_iterate(c, arg(m, 0, NULL, JJ_UNDEF));
        jj_buf b = {0};
        jj_buf_put(c, &b, "", 0);
        for (size_t i = 0; i < l->n; i++) {
            if (l->v[i].t != JV_STR) bad_arg(m, "sequence item is not a string");
            if (i) jj_buf_put(c, &b, s.p, s.n);
            jj_buf_put(c, &b, l->v[i].s.p, l->v[i].s.n);
        }
        return jj_buf_value(&b);
    }
    if (!strcmp(n, "format")) return format(m, s);
    if (!strcmp(n, "removeprefix") || !strcmp(n, "removesuffix")) {
        jj_str a = str_arg(m, 0, NULL);
        bool end = n[6] == 's';
        if (a.n <= s.n && memcmp(end ? s.p + s.n - a.n : s.p, a.p, a.n) == 0)
            return (jj_value){.t = JV_STR, .s = {end ? s.p : s.p + a.n, s.n - a.n}};
        return (jj_value){.t = JV_STR, .s = s};
    }
    if (!strncmp(n, "is", 2) && strcmp(n, "istitle") && strcmp(n, "isidentifier") &&
        strcmp(n, "isprintable")) {
        bool any = false, all = s.n > 0, cased = false;
        for (size_t i = 0; i < s.n; i++) {
            char ch = s.p[i];
            bool dig = ch >= '0' && ch <= '9', lo = ch >= 'a' && ch <= 'z',
                 up = ch >= 'A' && ch <= 'Z';
            bool ok = !strcmp(n, "isdigit") || !strcmp(n, "isdecimal") || !strcmp(n, "isnumeric")
                          ? dig
                      : !strcmp(n, "isalpha") ? lo || up
                      : !strcmp(n, "isalnum") ? lo || up || dig
                      : !strcmp(n, "isspace") ? is_ws_byte(ch)
                      : !strcmp(n, "isascii") ? (unsigned char)ch < 0x80
                      : !strcmp(n, "islower") ? !up
                                              : !lo;
            if (lo || up) cased = true;
            if (!strcmp(n, "islower") && lo) any = true;
            if (!strcmp(n, "isupper") && up) any = true;
            all = all && ok;
        }
        if (!strcmp(n, "isascii")) return jj_bool(all || s.n == 0);
        if (!strcmp(n, "islower") || !strcmp(n, "isupper")) return jj_bool(all && cased && any);
        return jj_bool(all);
    }
    jj_fail(c, "template line %d: unsupported construct 'str.%s()'", m->line, n);
}

static jj_value dict_method(const margs *m, jj_dict *d) {
    jj_ctx *c = m->e->c;
    const char *n = m->name;
    if (!strcmp(n, "get")) {
        if (m->n < 1 || m->n > 2) bad_arg(m, "expects 1 or 2 arguments");
        jj_value *v = jj_dict_get(d, m->a[0]);
        return v ? *v : m->n > 1 ? m->a[1] : JJ_NONE;
    }
    if (!strcmp(n, "items") || !strcmp(n, "keys") || !strcmp(n, "values")) {
        jj_value l = jj_list_new(c, JL_LIST);
        for (size_t i = 0; i < d->n; i++) {
            if (n[0] == 'i') {
                jj_value t = jj_list_new(c, JL_TUPLE);
                jj_list_push(c, t.l, d->k[i]);
                jj_list_push(c, t.l, d->v[i]);
                jj_list_push(c, l.l, t);
            } else
                jj_list_push(c, l.l, n[0] == 'k' ? d->k[i] : d->v[i]);
        }
        return l;
    }
    if (!strcmp(n, "copy")) {
        jj_value r = jj_dict_new(c);
        for (size_t i = 0; i < d->n; i++) jj_dict_set(c, r.d, d->k[i], d->v[i]);
        return r;
    }
    jj_fail(c, "template line %d: unsupported construct 'dict.%s()'", m->line, n);
}

jj_value jj_call_method(jj_env *e, jj_value self, const char *name, jj_value *args, size_t n,
                        jj_str *kw_names, jj_value *kw_vals, size_t n_kw, int line) {
    margs m = {e, name, self, args, n, kw_names, kw_vals, n_kw, line};
    switch (self.t) {
    case JV_STR:
        return str_method(&m, self.s);
    case JV_DICT:
        return dict_method(&m, self.d);
    case JV_LIST:
        if (!strcmp(name, "index") || !strcmp(name, "count")) {
            int64_t cnt = 0;
            if (n != 1) bad_arg(&m, "takes exactly one argument");
            for (size_t i = 0; i < self.l->n; i++)
                if (jj_equal(self.l->v[i], args[0])) {
                    if (name[0] == 'i') return jj_int((int64_t)i);
                    cnt++;
                }
            if (name[0] == 'i') bad_arg(&m, "value is not in list");
            return jj_int(cnt);
        }
        if (!strcmp(name, "copy")) {
            jj_value r = jj_list_new(e->c, JL_LIST);
            for (size_t i = 0; i < self.l->n; i++) jj_list_push(e->c, r.l, self.l->v[i]);
            return r;
        }
        break;
    case JV_LOOP:
        if (n == 0) bad_arg(&m, "no items for cycling given");
        return args[self.lp->i % n];
    default:
        break;
    }
    jj_fail(e->c, "template line %d: unsupported construct '%s.%s()'", line, jj_type_name(self),
            name);
}
