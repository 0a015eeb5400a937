// jinja_parse.c - tokens to a syntax tree, with jinja2's grammar and operator precedence
// (lowest first): inline if-else, or, and, not, comparisons and in, + -, ~, * / // %, **,
// unary - +, then primaries with their postfixes (.attr, [item], [a:b:c], calls) and filters
// (| name) and tests (is [not] name). Unknown filters and tests fail here, as jinja2 fails when
// it compiles the template; constructs the engine lacks fail with their name and line.
#include "runtime/template/jinja.h"

#include <stdio.h>
#include <string.h>

typedef struct parser {
    jj_ctx *c;
    const jj_tok *t; // [n] tokens
    size_t n, i;     // count, cursor
} parser;

static const jj_tok *cur(parser *P) {
    return &P->t[P->i];
}

static const jj_tok *peek(parser *P, size_t k) {
    return &P->t[P->i + k < P->n ? P->i + k : P->n - 1];
}

static bool tok_is(const jj_tok *t, jj_tok_type type, const char *s) {
    if (t->t != type) return false;
    if (!s) return true;
    size_t n = strlen(s);
    return t->s.n == n && memcmp(t->s.p, s, n) == 0;
}

static bool is_op(parser *P, const char *op) {
    return tok_is(cur(P), TK_OP, op);
}

static bool is_name(parser *P, const char *name) {
    return tok_is(cur(P), TK_NAME, name);
}

static const char *tok_desc(const jj_tok *t) {
    switch (t->t) {
    case TK_EOF:
        return "end of template";
    case TK_BLOCK_END:
        return "end of statement block";
    case TK_VAR_END:
        return "end of print statement";
    case TK_DATA:
        return "template data";
    default:
        return "token";
    }
}

_Noreturn static void fail_at(parser *P, const char *what) {
    const jj_tok *t = cur(P);
    if (t->t == TK_NAME || t->t == TK_OP)
        jj_fail(P->c, "template line %d: %s, got '%.*s'", t->line, what, (int)t->s.n, t->s.p);
    jj_fail(P->c, "template line %d: %s, got %s", t->line, what, tok_desc(t));
}

static void expect_op(parser *P, const char *op) {
    if (!is_op(P, op)) {
        char m[64];
        snprintf(m, sizeof m, "expected '%s'", op);
        fail_at(P, m);
    }
    P->i++;
}

static void expect_type(parser *P, jj_tok_type type, const char *what) {
    if (cur(P)->t != type) fail_at(P, what);
    P->i++;
}

static jj_node *node(parser *P, jj_node_type t) {
    jj_node *n = jj_alloc(P->c, sizeof *n);
    n->t = t;
    n->line = cur(P)->line;
    return n;
}

static void add_kid(parser *P, jj_node *parent, jj_node *kid) {
    // Children arrays grow by doubling; the capacity is implied by the count.
    size_t n = parent->n_kids;
    if ((n & (n - 1)) == 0) {
        size_t cap = n ? 2 * n : 1;
        jj_node **k = jj_alloc(P->c, cap * sizeof *k);
        if (n) memcpy(k, parent->kids, n * sizeof *k);
        parent->kids = k;
    }
    parent->kids[parent->n_kids++] = kid;
}

static jj_node *parse_expression(parser *P, bool with_condexpr);
static jj_node *parse_or(parser *P);
static jj_node *parse_unary(parser *P, bool with_filter);
static jj_node *parse_primary(parser *P);
static jj_node *parse_postfix(parser *P, jj_node *n);
static jj_node *parse_filter_expr(parser *P, jj_node *n);

static bool tuple_end(parser *P, const char *extra) {
    const jj_tok *t = cur(P);
    if (t->t == TK_VAR_END || t->t == TK_BLOCK_END || t->t == TK_EOF || is_op(P, ")")) return true;
    return extra && tok_is(t, TK_NAME, extra);
}

static jj_node *parse_tuple(parser *P, bool with_condexpr, bool explicit_parens,
                            const char *extra_end) {
    jj_node *tup = node(P, N_TUPLE);
    bool is_tuple = false;
    for (;;) {
        if (tup->n_kids) expect_op(P, ",");
        if (tuple_end(P, extra_end)) break;
        add_kid(P, tup, with_condexpr ? parse_expression(P, true) : parse_or(P));
        if (is_op(P, ","))
            is_tuple = true;
        else
            break;
    }
    if (!is_tuple) {
        if (tup->n_kids) return tup->kids[0];
        if (!explicit_parens) fail_at(P, "expected an expression");
    }
    return tup;
}

static void parse_call_args(parser *P, jj_node *call) {
    expect_op(P, "(");
    while (!is_op(P, ")")) {
        if (call->n_kids) {
            expect_op(P, ",");
            if (is_op(P, ")")) break;
        }
        if (is_op(P, "*") || is_op(P, "**"))
            jj_fail(P->c, "template line %d: unsupported construct '*args' in a call",
                    cur(P)->line);
        if (cur(P)->t == TK_NAME && tok_is(peek(P, 1), TK_OP, "=")) {
            jj_node *kw = node(P, N_KWARG);
            kw->s = cur(P)->s;
            P->i += 2;
            kw->a = parse_expression(P, true);
            add_kid(P, call, kw);
        } else {
            add_kid(P, call, parse_expression(P, true));
        }
    }
    P->i++;
}

static jj_node *parse_subscribed(parser *P) {
    jj_node *parts[3] = {NULL, NULL, NULL};
    int line = cur(P)->line;
    if (!is_op(P, ":")) {
        jj_node *e = parse_expression(P, true);
        if (!is_op(P, ":")) return e;
        parts[0] = e;
    }
    P->i++; // ':'
    if (!is_op(P, "]") && !is_op(P, ",") && !is_op(P, ":")) parts[1] = parse_expression(P, true);
    if (is_op(P, ":")) {
        P->i++;
        if (!is_op(P, "]") && !is_op(P, ",")) parts[2] = parse_expression(P, true);
    }
    jj_node *s = node(P, N_SLICE);
    s->line = line;
    s->b = parts[0];
    s->c = parts[1];
    s->d = parts[2];
    return s;
}

static jj_node *parse_postfix(parser *P, jj_node *n) {
    for (;;) {
        if (is_op(P, ".")) {
            P->i++;
            jj_node *a;
            if (cur(P)->t == TK_NAME) {
                a = node(P, N_ATTR);
                a->s = cur(P)->s;
            } else if (cur(P)->t == TK_INT) {
                a = node(P, N_ITEM);
                a->b = node(P, N_CONST);
                a->b->v = jj_int(cur(P)->i);
            } else
                fail_at(P, "expected a name after '.'");
            P->i++;
            a->a = n;
            n = a;
        } else if (is_op(P, "[")) {
            jj_node *it = node(P, N_ITEM);
            P->i++;
            jj_node *tup = node(P, N_TUPLE);
            while (!is_op(P, "]")) {
                if (tup->n_kids) {
                    expect_op(P, ",");
                    if (is_op(P, "]")) break;
                }
                add_kid(P, tup, parse_subscribed(P));
            }
            P->i++;
            if (tup->n_kids == 0) jj_fail(P->c, "template line %d: empty subscript", it->line);
            // A slice in a tuple (x[1:2, 3]) would have no object (key->a): refuse it.
            for (size_t k = 0; tup->n_kids > 1 && k < tup->n_kids; k++)
                if (tup->kids[k]->t == N_SLICE)
                    jj_fail(P->c, "template line %d: slices in a tuple subscript", it->line);
            jj_node *key = tup->n_kids == 1 ? tup->kids[0] : tup;
            if (key->t == N_SLICE) {
                key->a = n;
                n = key;
            } else {
                it->a = n;
                it->b = key;
                n = it;
            }
        } else if (is_op(P, "(")) {
            jj_node *call = node(P, N_CALL);
            parse_call_args(P, call);
            call->a = n;
            n = call;
        } else
            return n;
    }
}

static jj_str dotted_name(parser *P) {
    if (cur(P)->t != TK_NAME) fail_at(P, "expected a filter or test name");
    jj_str s = cur(P)->s;
    P->i++;
    while (is_op(P, ".") && peek(P, 1)->t == TK_NAME) {
        s.n = (size_t)(peek(P, 1)->s.p + peek(P, 1)->s.n - s.p);
        P->i += 2;
    }
    return s;
}

static jj_node *parse_filter(parser *P, jj_node *n) {
    jj_node *f = node(P, N_FILTER);
    f->s = dotted_name(P);
    if (!jj_filter_known(f->s)) f->v = jj_bool(true); // checked by check_names

    if (is_op(P, "(")) parse_call_args(P, f);
    f->a = n;
    return f;
}

static jj_node *parse_filter_expr(parser *P, jj_node *n) {
    for (;;) {
        if (is_op(P, "|")) {
            P->i++;
            n = parse_filter(P, n);
        } else if (is_name(P, "is")) {
            jj_node *t = node(P, N_TEST);
            P->i++;
            if (is_name(P, "not")) {
                t->flag = true;
                P->i++;
            }
            t->s = dotted_name(P);
            if (!jj_test_known(t->s)) t->v = jj_bool(true); // checked by check_names
            const jj_tok *k = cur(P);
            if (is_op(P, "(")) {
                parse_call_args(P, t);
            } else if ((k->t == TK_NAME || k->t == TK_STRING || k->t == TK_INT ||
                        k->t == TK_FLOAT || is_op(P, "[") || is_op(P, "{")) &&
                       !is_name(P, "else") && !is_name(P, "or") && !is_name(P, "and")) {
                if (is_name(P, "is"))
                    jj_fail(P->c, "template line %d: cannot chain tests with 'is'", k->line);
                add_kid(P, t, parse_postfix(P, parse_primary(P)));
            }
            t->a = n;
            n = t;
        } else if (is_op(P, "(")) {
            jj_node *call = node(P, N_CALL);
            parse_call_args(P, call);
            call->a = n;
            n = call;
        } else
            return n;
    }
}

static jj_node *parse_primary(parser *P) {
    const jj_tok *t = cur(P);
    jj_node *n;
    switch (t->t) {
    case TK_NAME:
        n = node(P, N_CONST);
        if (tok_is(t, TK_NAME, "true") || tok_is(t, TK_NAME, "True"))
            n->v = jj_bool(true);
        else if (tok_is(t, TK_NAME, "false") || tok_is(t, TK_NAME, "False"))
            n->v = jj_bool(false);
        else if (tok_is(t, TK_NAME, "none") || tok_is(t, TK_NAME, "None"))
            n->v = JJ_NONE;
        else {
            n->t = N_NAME;
            n->s = t->s;
        }
        P->i++;
        return n;
    case TK_STRING: {
        n = node(P, N_CONST);
        jj_buf b = {0};
        while (cur(P)->t == TK_STRING) {
            jj_buf_put(P->c, &b, cur(P)->s.p, cur(P)->s.n);
            P->i++;
        }
        n->v = jj_buf_value(&b);
        return n;
    }
    case TK_INT:
        n = node(P, N_CONST);
        n->v = jj_int(t->i);
        P->i++;
        return n;
    case TK_FLOAT:
        n = node(P, N_CONST);
        n->v = jj_float(t->f);
        P->i++;
        return n;
    default:
        break;
    }
    if (is_op(P, "(")) {
        P->i++;
        n = parse_tuple(P, true, true, NULL);
        expect_op(P, ")");
        return n;
    }
    if (is_op(P, "[")) {
        n = node(P, N_LIST);
        P->i++;
        while (!is_op(P, "]")) {
            if (n->n_kids) {
                expect_op(P, ",");
                if (is_op(P, "]")) break;
            }
            add_kid(P, n, parse_expression(P, true));
        }
        P->i++;
        return n;
    }
    if (is_op(P, "{")) {
        n = node(P, N_DICT);
        P->i++;
        while (!is_op(P, "}")) {
            if (n->n_kids) {
                expect_op(P, ",");
                if (is_op(P, "}")) break;
            }
            add_kid(P, n, parse_expression(P, true));
            expect_op(P, ":");
            add_kid(P, n, parse_expression(P, true));
        }
        P->i++;
        return n;
    }
    fail_at(P, "expected an expression");
}

static jj_node *parse_unary(parser *P, bool with_filter) {
    jj_enter(P->c);
    jj_node *n;
    if (is_op(P, "-") || is_op(P, "+")) {
        n = node(P, N_UNARY);
        n->s = cur(P)->s;
        P->i++;
        n->a = parse_unary(P, false);
    } else
        n = parse_primary(P);
    n = parse_postfix(P, n);
    if (with_filter) n = parse_filter_expr(P, n);
    jj_leave(P->c);
    return n;
}

static jj_node *binop(parser *P, jj_node *a, const jj_tok *op, jj_node *b) {
    jj_node *n = node(P, N_BINOP);
    // Left-leaning chains (a + b + c ...) nest without recursion in the parser; bound them.
    n->v.i = (a->t == N_BINOP ? a->v.i : 0) + 1;
    if (n->v.i > JJ_MAX_DEPTH)
        jj_fail(P->c, "template line %d: an expression chains more than %d operators", op->line,
                JJ_MAX_DEPTH);
    n->s = op->s;
    n->line = op->line;
    n->a = a;
    n->b = b;
    return n;
}

static jj_node *parse_pow(parser *P) {
    jj_node *n = parse_unary(P, true);
    while (is_op(P, "**")) {
        const jj_tok *op = cur(P);
        P->i++;
        n = binop(P, n, op, parse_unary(P, true));
    }
    return n;
}

static jj_node *parse_math2(parser *P) {
    jj_node *n = parse_pow(P);
    while (is_op(P, "*") || is_op(P, "/") || is_op(P, "//") || is_op(P, "%")) {
        const jj_tok *op = cur(P);
        P->i++;
        n = binop(P, n, op, parse_pow(P));
    }
    return n;
}

static jj_node *parse_concat(parser *P) {
    jj_node *n = parse_math2(P);
    if (!is_op(P, "~")) return n;
    jj_node *cat = node(P, N_CONCAT);
    add_kid(P, cat, n);
    while (is_op(P, "~")) {
        P->i++;
        add_kid(P, cat, parse_math2(P));
    }
    return cat;
}

static jj_node *parse_math1(parser *P) {
    jj_node *n = parse_concat(P);
    while (is_op(P, "+") || is_op(P, "-")) {
        const jj_tok *op = cur(P);
        P->i++;
        n = binop(P, n, op, parse_concat(P));
    }
    return n;
}

static jj_node *parse_compare(parser *P) {
    jj_node *n = parse_math1(P);
    jj_node *cmp = NULL;
    for (;;) {
        const jj_tok *t = cur(P);
        jj_node *op = NULL;
        if (is_op(P, "==") || is_op(P, "!=") || is_op(P, "<") || is_op(P, "<=") || is_op(P, ">") ||
            is_op(P, ">=") || is_name(P, "in")) {
            op = node(P, N_UNARY);
            op->s = t->s;
            P->i++;
        } else if (is_name(P, "not") && tok_is(peek(P, 1), TK_NAME, "in")) {
            op = node(P, N_UNARY);
            op->s = (jj_str){"notin", 5};
            P->i += 2;
        } else
            break;
        op->a = parse_math1(P);
        if (!cmp) {
            cmp = node(P, N_COMPARE);
            cmp->line = t->line;
            cmp->a = n;
        }
        add_kid(P, cmp, op);
    }
    return cmp ? cmp : n;
}

static jj_node *parse_not(parser *P) {
    if (is_name(P, "not")) {
        jj_node *n = node(P, N_NOT);
        P->i++;
        jj_enter(P->c);
        n->a = parse_not(P);
        jj_leave(P->c);
        return n;
    }
    return parse_compare(P);
}

static jj_node *parse_and(parser *P) {
    jj_node *n = parse_not(P);
    while (is_name(P, "and")) {
        jj_node *a = node(P, N_AND);
        P->i++;
        a->a = n;
        a->b = parse_not(P);
        n = a;
    }
    return n;
}

static jj_node *parse_or(parser *P) {
    jj_node *n = parse_and(P);
    while (is_name(P, "or")) {
        jj_node *o = node(P, N_OR);
        P->i++;
        o->a = n;
        o->b = parse_and(P);
        n = o;
    }
    return n;
}

static jj_node *parse_expression(parser *P, bool with_condexpr) {
    jj_enter(P->c);
    jj_node *n = parse_or(P);
    while (with_condexpr && is_name(P, "if")) {
        jj_node *c = node(P, N_COND);
        P->i++;
        c->a = parse_or(P);
        c->b = n;
        if (is_name(P, "else")) {
            P->i++;
            c->c = parse_expression(P, true);
        }
        n = c;
    }
    jj_leave(P->c);
    return n;
}

// ---------------------------------------------------------------------------------------------
// Statements

static jj_node *parse_body(parser *P, const char *const *ends);

static bool block_named(parser *P, const char *name) {
    return cur(P)->t == TK_BLOCK_BEGIN && tok_is(peek(P, 1), TK_NAME, name);
}

// Consumes "{% name" ... and the block end.
static void end_block(parser *P, const char *name) {
    if (!block_named(P, name)) fail_at(P, "unexpected end of block");
    P->i += 2;
    expect_type(P, TK_BLOCK_END, "expected the end of the statement block");
}

static jj_node *parse_assign_target(parser *P, bool with_namespace) {
    jj_node *tup = node(P, N_TUPLE);
    for (;;) {
        if (cur(P)->t != TK_NAME) fail_at(P, "expected a name to assign to");
        jj_node *n = node(P, N_NAME);
        n->s = cur(P)->s;
        P->i++;
        if (with_namespace && is_op(P, ".") && peek(P, 1)->t == TK_NAME) {
            jj_node *a = node(P, N_ATTR);
            a->a = n;
            a->s = peek(P, 1)->s;
            P->i += 2;
            n = a;
        }
        add_kid(P, tup, n);
        if (!is_op(P, ",")) break;
        P->i++;
    }
    return tup->n_kids == 1 ? tup->kids[0] : tup;
}

static const char *const end_for[] = {"endfor", "else", NULL};
static const char *const end_for2[] = {"endfor", NULL};
static const char *const end_if[] = {"elif", "else", "endif", NULL};
static const char *const end_if2[] = {"endif", NULL};
static const char *const end_set[] = {"endset", NULL};
static const char *const end_macro[] = {"endmacro", NULL};
static const char *const end_filter[] = {"endfilter", NULL};
static const char *const end_gen[] = {"endgeneration", NULL};
static const char *const end_call[] = {"endcall", NULL};

static jj_node *parse_if(parser *P) {
    jj_node *n = node(P, N_IF);
    n->a = parse_tuple(P, false, false, NULL);
    expect_type(P, TK_BLOCK_END, "expected the end of the if block");
    n->b = parse_body(P, end_if);
    if (block_named(P, "elif")) {
        P->i += 2;
        n->c = parse_if(P);
        return n;
    }
    if (block_named(P, "else")) {
        end_block(P, "else");
        n->c = parse_body(P, end_if2);
    }
    end_block(P, "endif");
    return n;
}

static jj_node *parse_statement(parser *P) {
    const jj_tok *kw = cur(P);
    if (kw->t != TK_NAME) fail_at(P, "expected a statement name");
    P->i++;
    jj_node *n;
    if (tok_is(kw, TK_NAME, "if")) return parse_if(P);
    if (tok_is(kw, TK_NAME, "for")) {
        n = node(P, N_FOR);
        n->a = parse_assign_target(P, false);
        if (!is_name(P, "in")) fail_at(P, "expected 'in' in the for statement");
        P->i++;
        n->b = parse_tuple(P, false, false, "recursive");
        if (is_name(P, "if")) {
            P->i++;
            n->c = parse_expression(P, true);
        }
        if (is_name(P, "recursive"))
            jj_fail(P->c, "template line %d: unsupported construct 'recursive' loop", kw->line);
        expect_type(P, TK_BLOCK_END, "expected the end of the for block");
        n->d = parse_body(P, end_for);
        if (block_named(P, "else")) {
            end_block(P, "else");
            n->e = parse_body(P, end_for2);
        }
        end_block(P, "endfor");
        return n;
    }
    if (tok_is(kw, TK_NAME, "set")) {
        jj_node *target = parse_assign_target(P, true);
        if (is_op(P, "=")) {
            P->i++;
            n = node(P, N_SET);
            n->a = target;
            n->b = parse_tuple(P, true, false, NULL);
            expect_type(P, TK_BLOCK_END, "expected the end of the set statement");
            return n;
        }
        n = node(P, N_SETBLOCK);
        n->a = target;
        if (target->t != N_NAME)
            jj_fail(P->c, "template line %d: a block set assigns one name", kw->line);
        jj_node *chain = NULL;
        while (is_op(P, "|")) {
            P->i++;
            chain = parse_filter(P, chain);
        }
        n->c = chain;
        expect_type(P, TK_BLOCK_END, "expected the end of the set statement");
        n->b = parse_body(P, end_set);
        end_block(P, "endset");
        return n;
    }
    if (tok_is(kw, TK_NAME, "macro")) {
        n = node(P, N_MACRO);
        if (cur(P)->t != TK_NAME) fail_at(P, "expected the macro's name");
        n->s = cur(P)->s;
        P->i++;
        expect_op(P, "(");
        while (!is_op(P, ")")) {
            if (n->n_kids) expect_op(P, ",");
            if (cur(P)->t != TK_NAME) fail_at(P, "expected a parameter name");
            jj_node *p = node(P, N_NAME);
            p->s = cur(P)->s;
            P->i++;
            if (is_op(P, "=")) {
                P->i++;
                p->a = parse_expression(P, true);
            }
            add_kid(P, n, p);
        }
        P->i++;
        expect_type(P, TK_BLOCK_END, "expected the end of the macro statement");
        n->b = parse_body(P, end_macro);
        end_block(P, "endmacro");
        return n;
    }
    if (tok_is(kw, TK_NAME, "filter")) {
        n = node(P, N_FILTERBLOCK);
        jj_node *chain = parse_filter(P, NULL);
        while (is_op(P, "|")) {
            P->i++;
            chain = parse_filter(P, chain);
        }
        n->a = chain;
        expect_type(P, TK_BLOCK_END, "expected the end of the filter statement");
        n->b = parse_body(P, end_filter);
        end_block(P, "endfilter");
        return n;
    }
    if (tok_is(kw, TK_NAME, "call")) {
        n = node(P, N_CALLBLOCK);
        jj_node *params = node(P, N_MACRO);
        if (is_op(P, "(")) {
            P->i++;
            while (!is_op(P, ")")) {
                if (params->n_kids) expect_op(P, ",");
                if (cur(P)->t != TK_NAME) fail_at(P, "expected a parameter name");
                jj_node *p = node(P, N_NAME);
                p->s = cur(P)->s;
                P->i++;
                if (is_op(P, "=")) {
                    P->i++;
                    p->a = parse_expression(P, true);
                }
                add_kid(P, params, p);
            }
            P->i++;
        }
        n->a = parse_expression(P, true);
        if (n->a->t != N_CALL) jj_fail(P->c, "template line %d: expected a call", kw->line);
        expect_type(P, TK_BLOCK_END, "expected the end of the call statement");
        params->s = (jj_str){"caller", 6};
        params->b = parse_body(P, end_call);
        n->b = params;
        end_block(P, "endcall");
        return n;
    }
    if (tok_is(kw, TK_NAME, "generation")) {
        // transformers' AssistantTracker: renders its body unchanged.
        expect_type(P, TK_BLOCK_END, "expected the end of the generation statement");
        n = parse_body(P, end_gen);
        end_block(P, "endgeneration");
        return n;
    }
    if (tok_is(kw, TK_NAME, "break") || tok_is(kw, TK_NAME, "continue")) {
        n = node(P, kw->s.p[0] == 'b' ? N_BREAK : N_CONTINUE);
        expect_type(P, TK_BLOCK_END, "expected the end of the statement block");
        return n;
    }
    jj_fail(P->c, "template line %d: unsupported construct '%.*s'", kw->line, (int)kw->s.n,
            kw->s.p);
}

static jj_node *parse_body(parser *P, const char *const *ends) {
    jj_enter(P->c);
    jj_node *body = node(P, N_BODY);
    for (;;) {
        const jj_tok *t = cur(P);
        if (t->t == TK_EOF) {
            if (ends)
                jj_fail(P->c, "template line %d: unexpected end of template, expected '%s'",
                        t->line, ends[0]);
            break;
        }
        if (t->t == TK_DATA) {
            jj_node *d = node(P, N_DATA);
            d->s = t->s;
            add_kid(P, body, d);
            P->i++;
        } else if (t->t == TK_VAR_BEGIN) {
            jj_node *o = node(P, N_OUTPUT);
            P->i++;
            o->a = parse_tuple(P, true, false, NULL);
            expect_type(P, TK_VAR_END, "expected the end of the print statement");
            add_kid(P, body, o);
        } else if (t->t == TK_BLOCK_BEGIN) {
            const jj_tok *name = peek(P, 1);
            bool end = false;
            for (size_t i = 0; ends && ends[i]; i++)
                if (tok_is(name, TK_NAME, ends[i])) end = true;
            if (end) break;
            if (name->t == TK_NAME && name->s.n > 3 && memcmp(name->s.p, "end", 3) == 0)
                jj_fail(P->c, "template line %d: unexpected '%.*s'", name->line, (int)name->s.n,
                        name->s.p);
            if (tok_is(name, TK_NAME, "elif") || tok_is(name, TK_NAME, "else"))
                jj_fail(P->c, "template line %d: unexpected '%.*s'", name->line, (int)name->s.n,
                        name->s.p);
            P->i++;
            add_kid(P, body, parse_statement(P));
        } else
            fail_at(P, "unexpected token");
    }
    jj_leave(P->c);
    return body;
}

// Unknown filters and tests fail the template as jinja2's compiler fails it, except inside an
// if statement or an inline if-else (jinja2's "soft" frames), where they fail only when run.
// A for, macro, call, set or filter block opens a frame that is not soft again.
static void check_names(parser *P, jj_node *n, bool soft) {
    if (!n) return;
    jj_enter(P->c);
    if ((n->t == N_FILTER || n->t == N_TEST) && n->v.t == JV_BOOL && !soft)
        jj_fail(P->c, "template line %d: no %s named '%.*s'", n->line,
                n->t == N_FILTER ? "filter" : "test", (int)n->s.n, n->s.p);
    bool kid_soft = soft || n->t == N_IF || n->t == N_COND;
    switch (n->t) {
    case N_FOR:
        check_names(P, n->a, soft);
        check_names(P, n->b, soft);
        check_names(P, n->c, false);
        check_names(P, n->d, false);
        check_names(P, n->e, false);
        break;
    case N_MACRO:
    case N_SETBLOCK:
    case N_FILTERBLOCK:
    case N_CALLBLOCK:
        check_names(P, n->a, soft);
        check_names(P, n->b, false);
        check_names(P, n->c, soft);
        for (size_t i = 0; i < n->n_kids; i++) check_names(P, n->kids[i], false);
        break;
    default:
        check_names(P, n->a, kid_soft);
        check_names(P, n->b, kid_soft);
        check_names(P, n->c, kid_soft);
        check_names(P, n->d, kid_soft);
        check_names(P, n->e, kid_soft);
        for (size_t i = 0; i < n->n_kids; i++) check_names(P, n->kids[i], kid_soft);
    }
    jj_leave(P->c);
}

jj_node *jj_parse(jj_ctx *c, const jj_tok *toks, size_t n_tok) {
    parser P = {.c = c, .t = toks, .n = n_tok};
    jj_node *root = parse_body(&P, NULL);
    check_names(&P, root, false);
    return root;
}
