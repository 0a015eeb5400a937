// jinja_methods.c - attribute and item lookup as jinja2's immutable sandbox does it (a dict's
// methods before its keys for `.name`, keys before methods for `[name]`; a missing one is
// Undefined; the mutating methods of lists and dicts are unsafe), and the methods of str, dict
// and list that templates call, with Python's semantics.
#include "runtime/template/jinja.h"

#include <stdio.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Python's whitespace (str.split() / str.strip() without arguments), on UTF-8.

static size_t ws_at(const unsigned char *s, size_t n) {
    if (n >= 1 && ((s[0] >= 0x09 && s[0] <= 0x0D) || (s[0] >= 0x1C && s[0] <= 0x20))) return 1;
    if (n >= 2 && s[0] == 0xC2 && (s[1] == 0x85 || s[1] == 0xA0)) return 2;
    if (n >= 3) {
        if (s[0] == 0xE1 && s[1] == 0x9A && s[2] == 0x80) return 3;
        if (s[0] == 0xE2 && s[1] == 0x80 &&
            (s[2] <= 0x8A || s[2] == 0xA8 || s[2] == 0xA9 || s[2] == 0xAF))
            return 3;
        if (s[0] == 0xE2 && s[1] == 0x81 && s[2] == 0x9F) return 3;
        if (s[0] == 0xE3 && s[1] == 0x80 && s[2] == 0x80) return 3;
    }
    return 0;
}

static size_t ws_before(const unsigned char *s, size_t n) {
    for (size_t k = 1; k <= 3 && k <= n; k++) {
        size_t w = ws_at(s + n - k, k);
        if (w == k) return k;
    }
    return 0;
}

static size_t cp_len(const char *p, size_t n) {
    unsigned char ch = (unsigned char)p[0];
    size_t k = ch < 0x80 ? 1 : ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : ch >= 0xC0 ? 2 : 1;
    return k > n ? 1 : k;
}

// Is the code point at p (length k) one of chars?
static bool in_chars(const char *p, size_t k, jj_str chars) {
    for (size_t i = 0; i < chars.n;) {
        size_t m = cp_len(chars.p + i, chars.n - i);
        if (m == k && memcmp(chars.p + i, p, k) == 0) return true;
        i += m;
    }
    return false;
}

jj_value jj_s_strip(jj_ctx *c, jj_str s, const jj_str *chars, bool left, bool right) {
    const char *p = s.p;
    size_t n = s.n;
    (void)c;
    if (!chars) {
        size_t k;
        while (left && n > 0 && (k = ws_at((const unsigned char *)p, n)) > 0) p += k, n -= k;
        while (right && n > 0 && (k = ws_before((const unsigned char *)p, n)) > 0) n -= k;
    } else {
        while (left && n > 0) {
            size_t k = cp_len(p, n);
            if (!in_chars(p, k, *chars)) break;
            p += k;
            n -= k;
        }
        while (right && n > 0) {
            size_t k = 1;
            while (k < n && k < 4 && ((unsigned char)p[n - k] & 0xC0) == 0x80) k++;
            if (!in_chars(p + n - k, k, *chars)) break;
            n -= k;
        }
    }
    return (jj_value){.t = JV_STR, .s = {p, n}};
}

static jj_value map_case(jj_ctx *c, jj_str s, int mode) {
    // mode 0 lower, 1 upper, 2 capitalize, 3 Python's str.title
    char *d = jj_alloc(c, s.n + 1);
    bool prev_cased = false;
    for (size_t i = 0; i < s.n; i++) {
        char ch = s.p[i];
        bool lower = ch >= 'a' && ch <= 'z', upper = ch >= 'A' && ch <= 'Z';
        bool up = mode == 1 || (mode == 2 && i == 0) || (mode == 3 && !prev_cased);
        if (up && lower) ch = (char)(ch - 32);
        if (!up && upper) ch = (char)(ch + 32);
        if ((unsigned char)ch >= 0x80)
            prev_cased =
                prev_cased && ((unsigned char)ch & 0xC0) == 0x80 ? true : (unsigned char)ch >= 0xC3;
        else
            prev_cased = lower || upper;
        d[i] = ch;
    }
    return (jj_value){.t = JV_STR, .s = {d, s.n}};
}

jj_value jj_s_upper(jj_ctx *c, jj_str s) {
    return map_case(c, s, 1);
}
jj_value jj_s_lower(jj_ctx *c, jj_str s) {
    return map_case(c, s, 0);
}
jj_value jj_s_capitalize(jj_ctx *c, jj_str s) {
    return map_case(c, s, 2);
}

bool jj_s_has(jj_str s, jj_str sub, size_t *at) {
    if (sub.n == 0) {
        *at = 0;
        return true;
    }
    for (size_t i = 0; i + sub.n <= s.n; i++)
        if (memcmp(s.p + i, sub.p, sub.n) == 0) {
            *at = i;
            return true;
        }
    return false;
}

jj_value jj_s_replace(jj_ctx *c, jj_str s, jj_str old, jj_str rep, int64_t count) {
    jj_buf b = {0};
    jj_buf_put(c, &b, "", 0);
    if (old.n == 0) {
        // Python inserts rep before every character and at the end.
        int64_t done = 0;
        for (size_t i = 0; i <= s.n;) {
            if (count < 0 || done < count) {
                jj_buf_put(c, &b, rep.p, rep.n);
                done++;
            }
            if (i == s.n) break;
            size_t k = cp_len(s.p + i, s.n - i);
            jj_buf_put(c, &b, s.p + i, k);
            i += k;
        }
        return jj_buf_value(&b);
    }
    size_t i = 0;
    int64_t done = 0;
    while (i < s.n) {
        size_t at;
        jj_str rest = {s.p + i, s.n - i};
        if ((count >= 0 && done >= count) || !jj_s_has(rest, old, &at)) break;
        jj_buf_put(c, &b, s.p + i, at);
        jj_buf_put(c, &b, rep.p, rep.n);
        i += at + old.n;
        done++;
    }
    jj_buf_put(c, &b, s.p + i, s.n - i);
    return jj_buf_value(&b);
}

// ---------------------------------------------------------------------------------------------
// Lookup

static const char *const str_methods[] = {
    "capitalize",   "casefold",    "center",    "count",      "encode",       "endswith",
    "expandtabs",   "find",        "format",    "format_map", "index",        "isalnum",
    "isalpha",      "isascii",     "isdecimal", "isdigit",    "isidentifier", "islower",
    "isnumeric",    "isprintable", "isspace",   "istitle",    "isupper",      "join",
    "ljust",        "lower",       "lstrip",    "maketrans",  "partition",    "removeprefix",
    "removesuffix", "replace",     "rfind",     "rindex",     "rjust",        "rpartition",
    "rsplit",       "rstrip",      "split",     "splitlines", "startswith",   "strip",
    "swapcase",     "title",       "translate", "upper",      "zfill",        NULL};
static const char *const dict_methods[] = {"clear",      "copy",   "fromkeys", "get",
                                           "items",      "keys",   "pop",      "popitem",
                                           "setdefault", "update", "values",   NULL};
static const char *const list_methods[] = {"append", "clear",   "copy",   "count",
                                           "extend", "index",   "insert", "pop",
                                           "remove", "reverse", "sort",   NULL};
static const char *const unsafe_methods[] = {"append",  "clear",      "extend",  "insert",
                                             "pop",     "remove",     "reverse", "sort",
                                             "popitem", "setdefault", "update",  NULL};

static const char *find_name(const char *const *names, jj_str name) {
    for (size_t i = 0; names[i]; i++)
        if (strlen(names[i]) == name.n && memcmp(names[i], name.p, name.n) == 0) return names[i];
    return NULL;
}

static jj_value undef_msg(jj_ctx *c, const char *fmt, const char *a, jj_str name) {
    char m[300];
    snprintf(m, sizeof m, fmt, a, (int)name.n, name.p);
    jj_value u = jj_strn(c, m, strlen(m));
    u.t = JV_UNDEF;
    return u;
}

// jinja2's sandbox message for a method that would change a dict or list. (Its own function: the
// name comes before the type here, the other way round from undef_msg's formats; passing it
// through undef_msg read the type's pointer as a length, found by fuzz_jinja.)
static jj_value unsafe_msg(jj_ctx *c, jj_str name, const char *type) {
    char m[300];
    snprintf(m, sizeof m, "access to attribute '%.*s' of '%s' object is unsafe.", (int)name.n,
             name.p, type);
    jj_value u = jj_strn(c, m, strlen(m));
    u.t = JV_UNDEF;
    return u;
}

static jj_value bound(jj_ctx *c, jj_value self, const char *name) {
    jj_value *s = jj_alloc(c, sizeof *s);
    *s = self;
    return (jj_value){.t = JV_FUNC, .fn = {name, s}};
}

static jj_value loop_attr(jj_env *e, jj_loop *lp, jj_str name) {
    size_t n = lp->items->n, i = lp->i;
    const char *k = NULL;
    static const char *const names[] = {"index",  "index0", "revindex", "revindex0", "first",
                                        "last",   "length", "previtem", "nextitem",  "depth",
                                        "depth0", "cycle",  NULL};
    k = find_name(names, name);
    if (!k) return undef_msg(e->c, "'%s' has no attribute '%.*s'", "LoopContext", name);
    if (!strcmp(k, "index")) return jj_int((int64_t)i + 1);
    if (!strcmp(k, "index0")) return jj_int((int64_t)i);
    if (!strcmp(k, "revindex")) return jj_int((int64_t)(n - i));
    if (!strcmp(k, "revindex0")) return jj_int((int64_t)(n - i - 1));
    if (!strcmp(k, "first")) return jj_bool(i == 0);
    if (!strcmp(k, "last")) return jj_bool(i + 1 == n);
    if (!strcmp(k, "length")) return jj_int((int64_t)n);
    if (!strcmp(k, "depth")) return jj_int(1);
    if (!strcmp(k, "depth0")) return jj_int(0);
    if (!strcmp(k, "previtem"))
        return i > 0 ? lp->items->v[i - 1]
                     : undef_msg(e->c, "%sthere is no previous item%.*s", "", (jj_str){"", 0});
    if (!strcmp(k, "nextitem"))
        return i + 1 < n ? lp->items->v[i + 1]
                         : undef_msg(e->c, "%sthere is no next item%.*s", "", (jj_str){"", 0});
    return bound(e->c, (jj_value){.t = JV_LOOP, .lp = lp}, "cycle");
}

jj_value jj_getattr(jj_env *e, jj_value obj, jj_str name, int line) {
    jj_ctx *c = e->c;
    const char *m;
    switch (obj.t) {
    case JV_UNDEF:
        if (obj.s.n) jj_fail(c, "template line %d: %.*s", line, (int)obj.s.n, obj.s.p);
        jj_fail(c, "template line %d: a value is undefined", line);
    case JV_DICT: {
        if (!obj.d->ns && (m = find_name(dict_methods, name)) != NULL) {
            if (find_name(unsafe_methods, name)) return unsafe_msg(c, name, "dict");
            return bound(c, obj, m);
        }
        jj_value *v = jj_dict_get(obj.d, (jj_value){.t = JV_STR, .s = name});
        if (v) return *v;
        return undef_msg(c, "'%s' has no attribute '%.*s'",
                         obj.d->ns ? "jinja2.utils.Namespace object" : "dict object", name);
    }
    case JV_STR:
        if ((m = find_name(str_methods, name)) != NULL) return bound(c, obj, m);
        return undef_msg(c, "'%s' has no attribute '%.*s'", "str object", name);
    case JV_LIST:
        if (obj.l->kind == JL_LIST && (m = find_name(list_methods, name)) != NULL) {
            if (find_name(unsafe_methods, name)) return unsafe_msg(c, name, "list");
            return bound(c, obj, m);
        }
        return undef_msg(c, "'%s' has no attribute '%.*s'", jj_type_name(obj), name);
    case JV_LOOP:
        return loop_attr(e, obj.lp, name);
    case JV_NONE:
        return undef_msg(c, "'%s' has no attribute '%.*s'", "None", name);
    default:
        return undef_msg(c, "'%s' has no attribute '%.*s'", jj_type_name(obj), name);
    }
}

jj_value jj_getitem(jj_env *e, jj_value obj, jj_value key, int line) {
    jj_ctx *c = e->c;
    switch (obj.t) {
    case JV_UNDEF:
        return jj_getattr(e, obj, (jj_str){"", 0}, line);
    case JV_DICT: {
        if (!obj.d->ns) {
            jj_value *v = jj_dict_get(obj.d, key);
            if (v) return *v;
        }
        if (key.t == JV_STR) return jj_getattr(e, obj, key.s, line);
        return undef_msg(c, "'%s' has no attribute '%.*s'", "dict object", jj_to_str(c, key));
    }
    case JV_LIST:
    case JV_STR:
        if (key.t == JV_INT || key.t == JV_BOOL) {
            int64_t i = key.t == JV_INT ? key.i : key.b;
            if (obj.t == JV_LIST && obj.l->kind == JL_GEN)
                return undef_msg(c, "'%s' object has no element %.*s", "generator",
                                 jj_to_str(c, key));
            jj_list *l = jj_iterate(c, obj);
            int64_t n = (int64_t)l->n;
            if (i < 0) i += n;
            if (i < 0 || i >= n)
                return undef_msg(c, "'%s' object has no element %.*s", jj_type_name(obj),
                                 jj_to_str(c, key));
            return l->v[i];
        }
        if (key.t == JV_STR) return jj_getattr(e, obj, key.s, line);
        return undef_msg(c, "'%s' object has no element %.*s", jj_type_name(obj),
                         jj_to_str(c, key));
    case JV_LOOP:
        if (key.t == JV_STR) return jj_getattr(e, obj, key.s, line);
        break;
    default:
        break;
    }
    if (key.t == JV_STR) return jj_getattr(e, obj, key.s, line);
    return undef_msg(c, "'%s' object has no element %.*s", jj_type_name(obj), jj_to_str(c, key));
}
