// jinja_eval.c - evaluates the syntax tree: expressions with Python's operators and jinja2's
// Undefined, statements with jinja2's scopes (a for loop and a macro call open a scope, if does
// not; namespace() objects carry values out of loops), macros, loop controls and the globals
// jinja2 and Hugging Face define (range, dict, namespace, raise_exception, strftime_now).
#include "runtime/template/jinja.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void jj_emit(jj_env *e, jj_buf *out, const char *p, size_t n) {
    jj_ctx *c = e->c;
    c->out_len += n;
    if (c->out_len > JJ_MAX_OUTPUT)
        jj_fail(c, "the template writes more than %u MiB", JJ_MAX_OUTPUT >> 20);
    jj_step(c);
    jj_buf_put(c, out, p, n);
}

static jj_frame *frame_new(jj_env *e, jj_frame *parent) {
    jj_frame *f = jj_alloc(e->c, sizeof *f);
    f->parent = parent;
    f->vars = jj_dict_new(e->c).d;
    return f;
}

static jj_value str_value(jj_str s) {
    return (jj_value){.t = JV_STR, .s = s};
}

static jj_value undef_named(jj_str name) {
    return (jj_value){.t = JV_UNDEF, .s = name};
}

_Noreturn static void fail_undefined(jj_env *e, jj_value v, int line) {
    if (v.s.n) jj_fail(e->c, "template line %d: %.*s", line, (int)v.s.n, v.s.p);
    jj_fail(e->c, "template line %d: a value is undefined", line);
}

static const char *const global_funcs[] = {"range",        "dict",   "namespace", "raise_exception",
                                           "strftime_now", "cycler", "joiner",    "lipsum"};

static jj_value lookup(jj_env *e, jj_frame *f, jj_str name) {
    jj_value key = str_value(name);
    for (; f; f = f->parent) {
        jj_value *v = jj_dict_get(f->vars, key);
        if (v) return *v;
    }
    for (size_t i = 0; i < sizeof global_funcs / sizeof global_funcs[0]; i++)
        if (strlen(global_funcs[i]) == name.n && memcmp(global_funcs[i], name.p, name.n) == 0)
            return (jj_value){.t = JV_FUNC, .fn = {global_funcs[i], NULL}};
    jj_buf b = {0};
    jj_buf_puts(e->c, &b, "'");
    jj_buf_put(e->c, &b, name.p, name.n);
    jj_buf_puts(e->c, &b, "' is undefined");
    return undef_named((jj_str){b.p, b.n});
}

// ---------------------------------------------------------------------------------------------
// Operators

static int64_t as_int(jj_value v) {
    return v.t == JV_BOOL ? v.b : v.i;
}

static bool is_intlike(jj_value v) {
    return v.t == JV_INT || v.t == JV_BOOL;
}

_Noreturn static void bad_operands(jj_env *e, const char *op, jj_value a, jj_value b, int line) {
    if (a.t == JV_UNDEF) fail_undefined(e, a, line);
    if (b.t == JV_UNDEF) fail_undefined(e, b, line);
    jj_fail(e->c, "template line %d: unsupported operand type(s) for %s: '%s' and '%s'", line, op,
            jj_type_name(a), jj_type_name(b));
}

static jj_value repeat(jj_env *e, jj_value seq, int64_t times) {
    if (times < 0) times = 0;
    if (seq.t == JV_STR) {
        if (times > 0 && seq.s.n * (uint64_t)times > JJ_MAX_OUTPUT)
            jj_fail(e->c, "a repeated string is longer than %u MiB", JJ_MAX_OUTPUT >> 20);
        jj_buf b = {0};
        for (int64_t i = 0; i < times; i++) jj_buf_put(e->c, &b, seq.s.p, seq.s.n);
        return jj_buf_value(&b);
    }
    jj_value r = jj_list_new(e->c, seq.l->kind);
    if (times > 0 && seq.l->n * (uint64_t)times > JJ_MAX_RANGE)
        jj_fail(e->c, "a repeated list has more than %d items", JJ_MAX_RANGE);
    for (int64_t i = 0; i < times; i++)
        for (size_t j = 0; j < seq.l->n; j++) jj_list_push(e->c, r.l, seq.l->v[j]);
    return r;
}

static jj_value binop(jj_env *e, const char *op, jj_value a, jj_value b, int line) {
    bool nums = jj_is_number(a) && jj_is_number(b);
    bool ints = nums && is_intlike(a) && is_intlike(b);
    int64_t x = ints ? as_int(a) : 0, y = ints ? as_int(b) : 0, r;
    char o0 = op[0], o1 = op[1];
    if (o0 == '+' && !o1) {
        if (ints) {
            if (__builtin_add_overflow(x, y, &r)) jj_fail(e->c, "integer overflow in +");
            return jj_int(r);
        }
        if (nums) return jj_float(jj_num(a) + jj_num(b));
        // A string plus undefined or None: jinja2 raises, llama.cpp's engine (the one llama-server
        // renders with) joins as if the missing side were empty, and templates written for it
        // rely on that (firefunction-v2 adds an undefined `functions`). A template that renders
        // under jinja2 never reaches here, so its text is unchanged.
        if (a.t == JV_STR && (b.t == JV_UNDEF || b.t == JV_NONE)) return a;
        if (b.t == JV_STR && (a.t == JV_UNDEF || a.t == JV_NONE)) return b;
        if (a.t == JV_STR && b.t == JV_STR) {
            // Markup + str escapes the str (markupsafe's __add__ and __radd__).
            bool safe = a.safe || b.safe;
            if (safe && !a.safe) a = jj_html_escape(e->c, a.s);
            if (safe && !b.safe) b = jj_html_escape(e->c, b.s);
            jj_buf s = {0};
            jj_buf_put(e->c, &s, a.s.p, a.s.n);
            jj_buf_put(e->c, &s, b.s.p, b.s.n);
            jj_value joined = jj_buf_value(&s);
            joined.safe = safe;
            return joined;
        }
        if (a.t == JV_LIST && b.t == JV_LIST && a.l->kind == b.l->kind && a.l->kind != JL_GEN) {
            jj_value l = jj_list_new(e->c, a.l->kind);
            for (size_t i = 0; i < a.l->n; i++) jj_list_push(e->c, l.l, a.l->v[i]);
            for (size_t i = 0; i < b.l->n; i++) jj_list_push(e->c, l.l, b.l->v[i]);
            return l;
        }
    } else if (o0 == '-') {
        if (ints) {
            if (__builtin_sub_overflow(x, y, &r)) jj_fail(e->c, "integer overflow in -");
            return jj_int(r);
        }
        if (nums) return jj_float(jj_num(a) - jj_num(b));
    } else if (o0 == '*' && !o1) {
        if (ints) {
            if (__builtin_mul_overflow(x, y, &r)) jj_fail(e->c, "integer overflow in *");
            return jj_int(r);
        }
        if (nums) return jj_float(jj_num(a) * jj_num(b));
        if ((a.t == JV_STR || (a.t == JV_LIST && a.l->kind != JL_GEN)) && is_intlike(b))
            return repeat(e, a, as_int(b));
        if ((b.t == JV_STR || (b.t == JV_LIST && b.l->kind != JL_GEN)) && is_intlike(a))
            return repeat(e, b, as_int(a));
    } else if (o0 == '*') { // **
        if (ints && y >= 0) {
            int64_t acc = 1;
            for (int64_t i = 0; i < y; i++) {
                if (__builtin_mul_overflow(acc, x, &acc)) jj_fail(e->c, "integer overflow in **");
                if (acc == 0 || acc == 1) break;
                if (acc == -1) {
                    acc = (y - i - 1) % 2 ? -acc : acc;
                    break;
                }
            }
            return jj_int(acc);
        }
        if (nums) return jj_float(pow(jj_num(a), jj_num(b)));
    } else if (o0 == '/' && !o1) {
        if (nums) {
            if (jj_num(b) == 0) jj_fail(e->c, "template line %d: division by zero", line);
            return jj_float(jj_num(a) / jj_num(b));
        }
    } else if (o0 == '/' || o0 == '%') {
        if (nums && jj_num(b) == 0)
            jj_fail(e->c, "template line %d: integer division or modulo by zero", line);
        if (ints) {
            if (x == INT64_MIN && y == -1) jj_fail(e->c, "integer overflow in %s", op);
            int64_t q = x / y, m = x % y;
            if (m != 0 && ((m < 0) != (y < 0))) {
                q--;
                m += y;
            }
            return jj_int(o0 == '%' ? m : q);
        }
        if (nums) {
            double p = jj_num(a), d = jj_num(b), m = fmod(p, d);
            if (m != 0 && ((m < 0) != (d < 0))) m += d;
            return jj_float(o0 == '%' ? m : floor((p - m) / d + 0.5));
        }
        if (o0 == '%' && a.t == JV_STR)
            jj_fail(e->c, "template line %d: unsupported construct 'printf-style %%'", line);
    }
    bad_operands(e, op, a, b, line);
}

static bool contains(jj_env *e, jj_value hay, jj_value needle, int line) {
    switch (hay.t) {
    case JV_STR:
        if (needle.t != JV_STR)
            jj_fail(e->c, "template line %d: 'in <string>' requires string as left operand, not %s",
                    line, jj_type_name(needle));
        if (needle.s.n == 0) return true;
        for (size_t i = 0; i + needle.s.n <= hay.s.n; i++)
            if (memcmp(hay.s.p + i, needle.s.p, needle.s.n) == 0) return true;
        return false;
    case JV_DICT:
        if (hay.d->ns) break;
        return jj_dict_get(hay.d, needle) != NULL;
    case JV_LIST:
    case JV_UNDEF: {
        jj_list *l = jj_iterate(e->c, hay);
        for (size_t i = 0; i < l->n; i++)
            if (jj_equal(l->v[i], needle)) return true;
        return false;
    }
    default:
        break;
    }
    jj_fail(e->c, "template line %d: argument of type '%s' is not iterable", line,
            jj_type_name(hay));
}

static bool compare(jj_env *e, jj_str op, jj_value a, jj_value b, int line) {
    char o0 = op.p[0];
    if (op.n == 2 && o0 == '=') return jj_equal(a, b);
    if (o0 == '!') return !jj_equal(a, b);
    if (o0 == 'i') return contains(e, b, a, line);
    if (o0 == 'n') return !contains(e, b, a, line);
    char ops[3] = {o0, op.n > 1 ? op.p[1] : 0, 0};
    if (a.t == JV_UNDEF || b.t == JV_UNDEF) bad_operands(e, ops, a, b, line);
    int r = jj_compare(e->c, a, b, ops);
    if (o0 == '<') return op.n == 2 ? r <= 0 : r < 0;
    return op.n == 2 ? r >= 0 : r > 0;
}

// ---------------------------------------------------------------------------------------------
// Calls

typedef struct call_args {
    jj_value *args;   // [n] positional
    size_t n;         // count
    jj_str *kw_names; // [n_kw] keyword names
    jj_value *kw;     // [n_kw] keyword values
    size_t n_kw;      // count
} call_args;

static void eval_args(jj_env *e, jj_frame *f, jj_node *call, call_args *a) {
    a->args = jj_alloc(e->c, (call->n_kids + 1) * sizeof *a->args);
    a->kw = jj_alloc(e->c, (call->n_kids + 1) * sizeof *a->kw);
    a->kw_names = jj_alloc(e->c, (call->n_kids + 1) * sizeof *a->kw_names);
    a->n = a->n_kw = 0;
    for (size_t i = 0; i < call->n_kids; i++) {
        jj_node *k = call->kids[i];
        if (k->t == N_KWARG) {
            a->kw_names[a->n_kw] = k->s;
            a->kw[a->n_kw++] = jj_eval(e, f, k->a);
        } else
            a->args[a->n++] = jj_eval(e, f, k);
    }
}

static jj_value call_macro(jj_env *e, jj_macro *m, jj_value *args, size_t n, jj_str *kw_names,
                           jj_value *kw, size_t n_kw, int line) {
    jj_node *def = m->def;
    jj_value caller = e->caller;
    e->caller = JJ_UNDEF;
    if (n > def->n_kids)
        jj_fail(e->c, "template line %d: macro '%.*s' takes not more than %zu argument(s)", line,
                (int)def->s.n, def->s.p, def->n_kids);
    jj_enter(e->c);
    jj_frame *mf = frame_new(e, m->closure);
    bool *given = jj_alloc(e->c, (def->n_kids + 1) * sizeof *given);
    for (size_t i = 0; i < n; i++) {
        jj_dict_set(e->c, mf->vars, str_value(def->kids[i]->s), args[i]);
        given[i] = true;
    }
    for (size_t k = 0; k < n_kw; k++) {
        size_t i;
        for (i = 0; i < def->n_kids; i++)
            if (def->kids[i]->s.n == kw_names[k].n &&
                memcmp(def->kids[i]->s.p, kw_names[k].p, kw_names[k].n) == 0)
                break;
        if (i == def->n_kids)
            jj_fail(e->c, "template line %d: macro '%.*s' takes no keyword argument '%.*s'", line,
                    (int)def->s.n, def->s.p, (int)kw_names[k].n, kw_names[k].p);
        jj_dict_set(e->c, mf->vars, str_value(def->kids[i]->s), kw[k]);
        given[i] = true;
    }
    for (size_t i = 0; i < def->n_kids; i++) {
        if (given[i]) continue;
        jj_node *p = def->kids[i];
        jj_value v;
        if (p->a)
            v = jj_eval(e, mf, p->a);
        else {
            jj_buf b = {0};
            jj_buf_puts(e->c, &b, "parameter '");
            jj_buf_put(e->c, &b, p->s.p, p->s.n);
            jj_buf_puts(e->c, &b, "' was not provided");
            v = undef_named((jj_str){b.p, b.n});
        }
        jj_dict_set(e->c, mf->vars, str_value(p->s), v);
    }
    if (caller.t != JV_UNDEF) jj_dict_set(e->c, mf->vars, jj_strz("caller"), caller);
    jj_buf out = {0};
    jj_exec(e, mf, def->b, &out);
    jj_leave(e->c);
    return jj_buf_value(&out);
}

static jj_value kwarg(call_args *a, const char *name) {
    for (size_t i = 0; i < a->n_kw; i++)
        if (a->kw_names[i].n == strlen(name) &&
            memcmp(a->kw_names[i].p, name, a->kw_names[i].n) == 0)
            return a->kw[i];
    return JJ_UNDEF;
}

static jj_value call_global(jj_env *e, const char *name, call_args *a, int line) {
    jj_ctx *c = e->c;
    if (!strcmp(name, "raise_exception")) {
        jj_value msg = a->n ? a->args[0] : kwarg(a, "message");
        jj_str s = jj_to_str(c, msg);
        snprintf(c->err, sizeof c->err, "%.*s", (int)s.n, s.p);
        c->raised = true;
        longjmp(c->fail, 1);
    }
    if (!strcmp(name, "strftime_now")) {
        jj_value fmt = a->n ? a->args[0] : kwarg(a, "format");
        if (fmt.t != JV_STR) jj_fail(c, "template line %d: strftime_now needs a format", line);
        char z[256], out[512];
        snprintf(z, sizeof z, "%.*s", (int)fmt.s.n, fmt.s.p);
        time_t now = c->now ? (time_t)c->now : time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        size_t n = strftime(out, sizeof out, z, &tm);
        return jj_strn(c, out, n);
    }
    if (!strcmp(name, "range")) {
        int64_t v[3] = {0, 0, 1};
        if (a->n < 1 || a->n > 3 || a->n_kw)
            jj_fail(c, "template line %d: range expects 1 to 3 integer arguments", line);
        for (size_t i = 0; i < a->n; i++) {
            if (!is_intlike(a->args[i]))
                jj_fail(c, "template line %d: '%s' object cannot be interpreted as an integer",
                        line, jj_type_name(a->args[i]));
        }
        if (a->n == 1)
            v[1] = as_int(a->args[0]);
        else {
            v[0] = as_int(a->args[0]);
            v[1] = as_int(a->args[1]);
            if (a->n == 3) v[2] = as_int(a->args[2]);
        }
        if (v[2] == 0) jj_fail(c, "template line %d: range() arg 3 must not be zero", line);
        jj_value l = jj_list_new(c, JL_LIST);
        for (int64_t i = v[0]; v[2] > 0 ? i < v[1] : i > v[1]; i += v[2]) {
            if (l.l->n >= JJ_MAX_RANGE)
                jj_fail(c, "template line %d: range too big (more than %d items)", line,
                        JJ_MAX_RANGE);
            jj_list_push(c, l.l, jj_int(i));
        }
        return l;
    }
    if (!strcmp(name, "dict") || !strcmp(name, "namespace")) {
        jj_value d = jj_dict_new(c);
        d.d->ns = name[0] == 'n';
        for (size_t i = 0; i < a->n; i++) {
            if (a->args[i].t != JV_DICT)
                jj_fail(c, "template line %d: %s() takes keyword arguments or a dict", line, name);
            for (size_t j = 0; j < a->args[i].d->n; j++)
                jj_dict_set(c, d.d, a->args[i].d->k[j], a->args[i].d->v[j]);
        }
        for (size_t i = 0; i < a->n_kw; i++)
            jj_dict_set(c, d.d, str_value(a->kw_names[i]), a->kw[i]);
        return d;
    }
    jj_fail(c, "template line %d: unsupported construct '%s()'", line, name);
}

jj_value jj_call_value(jj_env *e, jj_frame *f, jj_value fn, jj_value *args, size_t n_args,
                       jj_str *kw_names, jj_value *kw_vals, size_t n_kw, int line) {
    (void)f;
    jj_step(e->c);
    if (fn.t == JV_MACRO) return call_macro(e, fn.m, args, n_args, kw_names, kw_vals, n_kw, line);
    if (fn.t == JV_FUNC && fn.fn.self)
        return jj_call_method(e, *fn.fn.self, fn.fn.name, args, n_args, kw_names, kw_vals, n_kw,
                              line);
    if (fn.t == JV_FUNC) {
        call_args a = {args, n_args, kw_names, kw_vals, n_kw};
        return call_global(e, fn.fn.name, &a, line);
    }
    if (fn.t == JV_UNDEF) fail_undefined(e, fn, line);
    jj_fail(e->c, "template line %d: '%s' object is not callable", line, jj_type_name(fn));
}

// ---------------------------------------------------------------------------------------------
// Expressions

static int64_t slice_index(jj_env *e, jj_value v, int line) {
    if (!is_intlike(v))
        jj_fail(e->c, "template line %d: slice indices must be integers or None", line);
    return as_int(v);
}

static jj_value eval_slice(jj_env *e, jj_frame *f, jj_node *n) {
    jj_value obj = jj_eval(e, f, n->a);
    jj_value parts[3];
    jj_node *nodes[3] = {n->b, n->c, n->d};
    for (int i = 0; i < 3; i++) parts[i] = nodes[i] ? jj_eval(e, f, nodes[i]) : JJ_NONE;
    int64_t step = parts[2].t == JV_NONE ? 1 : slice_index(e, parts[2], n->line);
    if (step == 0) jj_fail(e->c, "template line %d: slice step cannot be zero", n->line);
    jj_list *items;
    if (obj.t == JV_STR)
        items = jj_iterate(e->c, obj);
    else if (obj.t == JV_LIST && obj.l->kind != JL_GEN)
        items = obj.l;
    else if (obj.t == JV_UNDEF)
        fail_undefined(e, obj, n->line);
    else
        jj_fail(e->c, "template line %d: '%s' object is not subscriptable", n->line,
                jj_type_name(obj));
    int64_t len = (int64_t)items->n, lo, hi;
    // Python's slice.indices().
    if (step > 0) {
        lo = parts[0].t == JV_NONE ? 0 : slice_index(e, parts[0], n->line);
        hi = parts[1].t == JV_NONE ? len : slice_index(e, parts[1], n->line);
        if (lo < 0) lo = lo + len < 0 ? 0 : lo + len;
        if (lo > len) lo = len;
        if (hi < 0) hi = hi + len < 0 ? 0 : hi + len;
        if (hi > len) hi = len;
    } else {
        lo = parts[0].t == JV_NONE ? len - 1 : slice_index(e, parts[0], n->line);
        hi = parts[1].t == JV_NONE ? -1 : slice_index(e, parts[1], n->line);
        if (parts[0].t != JV_NONE) {
            if (lo < 0) lo = lo + len < 0 ? -1 : lo + len;
            if (lo >= len) lo = len - 1;
        }
        if (parts[1].t != JV_NONE) {
            if (hi < 0) hi = hi + len < 0 ? -1 : hi + len;
            if (hi >= len) hi = len - 1;
        }
    }
    if (obj.t == JV_STR) {
        jj_buf b = {0};
        for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step)
            jj_buf_put(e->c, &b, items->v[i].s.p, items->v[i].s.n);
        return jj_buf_value(&b);
    }
    jj_value r = jj_list_new(e->c, obj.l->kind);
    for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step)
        jj_list_push(e->c, r.l, items->v[i]);
    return r;
}

static jj_value eval_node(jj_env *e, jj_frame *f, jj_node *n);

jj_value jj_eval(jj_env *e, jj_frame *f, jj_node *n) {
    jj_enter(e->c);
    jj_value v = eval_node(e, f, n);
    jj_leave(e->c);
    return v;
}

static jj_value eval_node(jj_env *e, jj_frame *f, jj_node *n) {
    jj_ctx *c = e->c;
    jj_value a, b;
    switch (n->t) {
    case N_CONST:
        return n->v;
    case N_NAME:
        return lookup(e, f, n->s);
    case N_ATTR:
        return jj_getattr(e, jj_eval(e, f, n->a), n->s, n->line);
    case N_ITEM:
        a = jj_eval(e, f, n->a);
        return jj_getitem(e, a, jj_eval(e, f, n->b), n->line);
    case N_SLICE:
        return eval_slice(e, f, n);
    case N_CALL: {
        jj_value fn = jj_eval(e, f, n->a);
        call_args ca;
        eval_args(e, f, n, &ca);
        return jj_call_value(e, f, fn, ca.args, ca.n, ca.kw_names, ca.kw, ca.n_kw, n->line);
    }
    case N_FILTER: {
        if (n->v.t == JV_BOOL)
            jj_fail(c, "template line %d: no filter named '%.*s' found", n->line, (int)n->s.n,
                    n->s.p);
        a = jj_eval(e, f, n->a);
        call_args ca;
        eval_args(e, f, n, &ca);
        return jj_filter(e, f, n->s, a, ca.args, ca.n, ca.kw_names, ca.kw, ca.n_kw, n->line);
    }
    case N_TEST: {
        if (n->v.t == JV_BOOL)
            jj_fail(c, "template line %d: no test named '%.*s' found", n->line, (int)n->s.n,
                    n->s.p);
        a = jj_eval(e, f, n->a);
        call_args ca;
        eval_args(e, f, n, &ca);
        bool r = jj_test(e, n->s, a, ca.args, ca.n, n->line);
        return jj_bool(n->flag ? !r : r);
    }
    case N_BINOP: {
        a = jj_eval(e, f, n->a);
        b = jj_eval(e, f, n->b);
        char op[3] = {n->s.p[0], n->s.n > 1 ? n->s.p[1] : 0, 0};
        return binop(e, op, a, b, n->line);
    }
    case N_UNARY:
        a = jj_eval(e, f, n->a);
        if (!jj_is_number(a)) {
            if (a.t == JV_UNDEF) fail_undefined(e, a, n->line);
            jj_fail(c, "template line %d: bad operand type for unary %c: '%s'", n->line, n->s.p[0],
                    jj_type_name(a));
        }
        if (n->s.p[0] == '+') return a.t == JV_BOOL ? jj_int(a.b) : a;
        if (a.t == JV_FLOAT) return jj_float(-a.f);
        if (as_int(a) == INT64_MIN) jj_fail(c, "integer overflow in unary -");
        return jj_int(-as_int(a));
    case N_AND:
        a = jj_eval(e, f, n->a);
        return jj_truthy(a) ? jj_eval(e, f, n->b) : a;
    case N_OR:
        a = jj_eval(e, f, n->a);
        return jj_truthy(a) ? a : jj_eval(e, f, n->b);
    case N_NOT:
        return jj_bool(!jj_truthy(jj_eval(e, f, n->a)));
    case N_COMPARE:
        a = jj_eval(e, f, n->a);
        for (size_t i = 0; i < n->n_kids; i++) {
            b = jj_eval(e, f, n->kids[i]->a);
            if (!compare(e, n->kids[i]->s, a, b, n->line)) return jj_bool(false);
            a = b;
        }
        return jj_bool(true);
    case N_COND:
        if (jj_truthy(jj_eval(e, f, n->a))) return jj_eval(e, f, n->b);
        return n->c ? jj_eval(e, f, n->c) : JJ_UNDEF;
    case N_LIST:
    case N_TUPLE:
        a = jj_list_new(c, n->t == N_LIST ? JL_LIST : JL_TUPLE);
        for (size_t i = 0; i < n->n_kids; i++) jj_list_push(c, a.l, jj_eval(e, f, n->kids[i]));
        return a;
    case N_DICT:
        a = jj_dict_new(c);
        for (size_t i = 0; i + 1 < n->n_kids; i += 2) {
            jj_value k = jj_eval(e, f, n->kids[i]);
            if (k.t == JV_LIST && k.l->kind != JL_TUPLE)
                jj_fail(c, "template line %d: unhashable type: 'list'", n->line);
            if (k.t == JV_DICT) jj_fail(c, "template line %d: unhashable type: 'dict'", n->line);
            jj_dict_set(c, a.d, k, jj_eval(e, f, n->kids[i + 1]));
        }
        return a;
    case N_CONCAT: {
        jj_buf s = {0};
        for (size_t i = 0; i < n->n_kids; i++) jj_str_of(c, &s, jj_eval(e, f, n->kids[i]));
        return jj_buf_value(&s);
    }
    default:
        jj_fail(c, "template line %d: not an expression", n->line);
    }
}

// ---------------------------------------------------------------------------------------------
// Statements

static void assign(jj_env *e, jj_frame *f, jj_node *target, jj_value v) {
    if (target->t == N_NAME) {
        jj_dict_set(e->c, f->vars, str_value(target->s), v);
        return;
    }
    if (target->t == N_ATTR) {
        jj_value ns = lookup(e, f, target->a->s);
        if (ns.t != JV_DICT || !ns.d->ns)
            jj_fail(e->c, "template line %d: cannot assign attribute on non-namespace object",
                    target->line);
        jj_dict_set(e->c, ns.d, str_value(target->s), v);
        return;
    }
    // Tuple unpacking.
    if (v.t == JV_UNDEF) fail_undefined(e, v, target->line);
    jj_list *items = jj_iterate(e->c, v);
    if (items->n != target->n_kids)
        jj_fail(e->c, "template line %d: %s values to unpack (expected %zu, got %zu)", target->line,
                items->n > target->n_kids ? "too many" : "not enough", target->n_kids, items->n);
    for (size_t i = 0; i < target->n_kids; i++) assign(e, f, target->kids[i], items->v[i]);
}

static jj_value apply_chain(jj_env *e, jj_frame *f, jj_node *chain, jj_value v) {
    if (!chain) return v;
    v = apply_chain(e, f, chain->a, v);
    call_args ca;
    eval_args(e, f, chain, &ca);
    return jj_filter(e, f, chain->s, v, ca.args, ca.n, ca.kw_names, ca.kw, ca.n_kw, chain->line);
}

static void exec_for(jj_env *e, jj_frame *f, jj_node *n, jj_buf *out) {
    jj_ctx *c = e->c;
    jj_value it = jj_eval(e, f, n->b);
    jj_list *items = jj_iterate(c, it);
    jj_frame *lf = frame_new(e, f);
    if (n->c) {
        jj_value kept = jj_list_new(c, JL_LIST);
        for (size_t i = 0; i < items->n; i++) {
            jj_step(c);
            assign(e, lf, n->a, items->v[i]);
            if (jj_truthy(jj_eval(e, lf, n->c))) jj_list_push(c, kept.l, items->v[i]);
        }
        items = kept.l;
    }
    jj_loop *lp = jj_alloc(c, sizeof *lp);
    lp->items = items;
    jj_value loopv = {.t = JV_LOOP, .lp = lp};
    for (size_t i = 0; i < items->n; i++) {
        jj_step(c);
        lp->i = i;
        assign(e, lf, n->a, items->v[i]);
        jj_dict_set(c, lf->vars, jj_strz("loop"), loopv);
        jj_exec(e, lf, n->d, out);
        if (e->ctl == 1) {
            e->ctl = 0;
            break;
        }
        e->ctl = 0;
    }
    if (items->n == 0 && n->e) jj_exec(e, lf, n->e, out);
}

void jj_exec(jj_env *e, jj_frame *f, jj_node *n, jj_buf *out) {
    jj_ctx *c = e->c;
    switch (n->t) {
    case N_BODY:
        jj_enter(c);
        for (size_t i = 0; i < n->n_kids && !e->ctl; i++) jj_exec(e, f, n->kids[i], out);
        jj_leave(c);
        return;
    case N_DATA:
        jj_emit(e, out, n->s.p, n->s.n);
        return;
    case N_OUTPUT: {
        jj_value v = jj_eval(e, f, n->a);
        jj_str s = jj_to_str(c, v);
        jj_emit(e, out, s.p, s.n);
        return;
    }
    case N_IF:
        if (jj_truthy(jj_eval(e, f, n->a)))
            jj_exec(e, f, n->b, out);
        else if (n->c)
            jj_exec(e, f, n->c, out);
        return;
    case N_FOR:
        exec_for(e, f, n, out);
        return;
    case N_SET:
        assign(e, f, n->a, jj_eval(e, f, n->b));
        return;
    case N_SETBLOCK: {
        jj_buf b = {0};
        jj_exec(e, f, n->b, &b);
        assign(e, f, n->a, apply_chain(e, f, n->c, jj_buf_value(&b)));
        return;
    }
    case N_MACRO: {
        jj_macro *m = jj_alloc(c, sizeof *m);
        m->def = n;
        m->closure = f;
        jj_dict_set(c, f->vars, str_value(n->s), (jj_value){.t = JV_MACRO, .m = m});
        return;
    }
    case N_CALLBLOCK: {
        jj_macro *m = jj_alloc(c, sizeof *m);
        m->def = n->b;
        m->closure = f;
        jj_value fn = jj_eval(e, f, n->a->a);
        call_args ca;
        eval_args(e, f, n->a, &ca);
        e->caller = (jj_value){.t = JV_MACRO, .m = m};
        jj_value r = jj_call_value(e, f, fn, ca.args, ca.n, ca.kw_names, ca.kw, ca.n_kw, n->line);
        e->caller = JJ_UNDEF;
        jj_str s = jj_to_str(c, r);
        jj_emit(e, out, s.p, s.n);
        return;
    }
    case N_FILTERBLOCK: {
        jj_buf b = {0};
        jj_exec(e, f, n->b, &b);
        jj_str s = jj_to_str(c, apply_chain(e, f, n->a, jj_buf_value(&b)));
        jj_emit(e, out, s.p, s.n);
        return;
    }
    case N_BREAK:
        e->ctl = 1;
        return;
    case N_CONTINUE:
        e->ctl = 2;
        return;
    default:
        jj_fail(c, "template line %d: not a statement", n->line);
    }
}
