// gbnf_parse.c - GBNF text to flat rules (gbnf.h).
//
// The syntax is llama.cpp's (its GBNF guide): `name ::= alternatives` rules, one per
// line, where a newline may also follow `|` and anything inside parentheses; "literals", [classes]
// with ranges and ^, `.`, rule names (letters, digits and '-'), (groups), the repetitions * + ?
// {m} {m,} {m,n}, token references <[id]> <text> and their negation !<...>, # comments. It is
// read as llama.cpp reads it, down to its quirks, so a grammar means the same in both: a
// repetition applies to the whole literal or class before it; `[]` matches the empty text; a
// maximum above 2000 means no maximum; a rule defined twice keeps its last definition; the
// grammar's own characters are decoded from UTF-8 without validation. Groups and repetitions
// become generated rules in llama.cpp's order, so both number rules alike.
//
// Where llama.cpp would hang or run out of memory, mint refuses in one line instead: {m,n} with
// m > n, groups nested deeper than GBNF_MAX_NESTING, more than GBNF_MAX_ELEMS elements, and left
// recursion through rules that derive the empty text only indirectly when the stacks grow on the
// way round (llama.cpp's check sees an empty alternative only, and its expansion then never ends).
#include "runtime/text/gbnf.h"

#include "base/error.h"
#include "base/strmap.h"
#include "runtime/text/vocab.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_MAX UINT64_MAX // a repetition without a maximum

typedef struct elems {
    gbnf_elem *e; // [cap] a rule's elements
    uint32_t n;   // used
    uint32_t cap; // allocated
} elems;

typedef struct symbol {
    const char *name; // the rule's name in the text, or NULL for a generated rule
    uint32_t len;     // its length
    uint32_t base;    // generated: the written rule it was made for (names it in messages)
    size_t ref_at;    // offset of its first reference (named in "undefined rule")
    size_t def_at;    // offset of its definition
    bool defined;     // its body was parsed
    elems body;       // its elements, END included
} symbol;

typedef struct parser {
    const char *s;       // the text, NUL-terminated (a copy)
    size_t n;            // its length
    const mint_vocab *v; // resolves <text> and bounds ids; may be NULL
    symbol *sym;         // [n_sym] rules by id
    uint32_t n_sym, cap_sym;
    mint_strmap names; // written rule name -> id (keys point into s)
    gbnf_class *cls;   // [n_cls] classes so far
    uint32_t n_cls, cap_cls;
    uint32_t *range; // [2 * n_range] their pairs
    uint32_t n_range, cap_range;
    uint64_t n_elems; // elements in all bodies so far (against GBNF_MAX_ELEMS)
    int depth;        // groups open
    bool failed;      // an error was recorded in err
    mint_err *err;    // where it goes
    mint_status st;   // its code
} parser;

// ---------------------------------------------------------------------------------------------
// Errors: one line, "grammar: LINE:COL: what, near 'text'".

static void where(const parser *P, const char *p, int *line, int *col) {
    *line = 1;
    *col = 1;
    for (const char *q = P->s; q < p; q++) {
        if (*q == '\n') {
            ++*line;
            *col = 1;
        } else if (((unsigned char)*q & 0xC0) != 0x80) {
            ++*col; // columns count code points
        }
    }
}

static const char *fail_code(parser *P, mint_status code, const char *p, const char *fmt, ...)
    MINT_PRINTF(4, 5);
static const char *fail_code(parser *P, mint_status code, const char *p, const char *fmt, ...) {
    if (P->failed) return NULL;
    char what[256], near[48];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    P->failed = true;
    P->st = code;
    if (code == MINT_E_NOMEM) {
        mint_fail(P->err, code, "grammar: out of memory");
        return NULL;
    }
    int line, col;
    where(P, p, &line, &col);
    size_t k = 0;
    for (const char *q = p; *q && *q != '\n' && *q != '\r' && k < 20; q++) near[k++] = *q;
    near[k] = '\0';
    if (k)
        mint_fail(P->err, code, "grammar: %d:%d: %s, near '%s'", line, col, what, near);
    else
        mint_fail(P->err, code, "grammar: %d:%d: %s, at the end of %s", line, col, what,
                  *p ? "the line" : "the text");
    mint_err_one_line(P->err);
    return NULL;
}

#define fail(P, p, ...) fail_code(P, MINT_E_FORMAT, p, __VA_ARGS__)
#define nomem(P)        fail_code(P, MINT_E_NOMEM, (P)->s, "out of memory")

// ---------------------------------------------------------------------------------------------
// Storage

static bool push(parser *P, elems *r, uint32_t op, uint32_t arg) {
    if (P->failed) return false;
    if (++P->n_elems > GBNF_MAX_ELEMS) {
        fail(P, P->s + P->n,
             "the grammar expands to more than %d elements (repetitions written out)",
             GBNF_MAX_ELEMS);
        return false;
    }
    if (r->n == r->cap) {
        uint32_t cap = r->cap ? 2 * r->cap : 16;
        gbnf_elem *e = realloc(r->e, cap * sizeof *e);
        if (!e) return nomem(P), false;
        r->e = e;
        r->cap = cap;
    }
    r->e[r->n++] = (gbnf_elem){op, arg};
    return true;
}

// A new rule id (no name: a group or a repetition of rule `base`).
static uint32_t new_symbol(parser *P, uint32_t base) {
    if (P->n_sym == P->cap_sym) {
        uint32_t cap = P->cap_sym ? 2 * P->cap_sym : 32;
        symbol *s = realloc(P->sym, cap * sizeof *s);
        if (!s) return nomem(P), 0;
        P->sym = s;
        P->cap_sym = cap;
    }
    P->sym[P->n_sym] = (symbol){.base = base};
    return P->n_sym++;
}

// The id of a written rule name, made on first sight (at offset `at`).
static uint32_t name_symbol(parser *P, const char *name, size_t len, size_t at) {
    int32_t id = mint_strmap_get(&P->names, name, len);
    if (id >= 0) return (uint32_t)id;
    uint32_t k = new_symbol(P, 0);
    if (P->failed) return 0;
    P->sym[k].name = name;
    P->sym[k].len = (uint32_t)len;
    P->sym[k].base = k;
    P->sym[k].ref_at = at;
    if (mint_strmap_put(&P->names, name, len, (int32_t)k, NULL) != MINT_OK) return nomem(P), 0;
    return k;
}

// Stores r as rule id's body (a later definition replaces an earlier one, as in llama.cpp).
static void set_body(parser *P, uint32_t id, elems *r) {
    symbol *s = &P->sym[id];
    if (s->defined) P->n_elems -= s->body.n;
    free(s->body.e);
    s->body = *r;
    s->defined = true;
    *r = (elems){0};
}

static uint32_t add_class(parser *P, const uint32_t *pairs, uint32_t n, bool negated) {
    if (P->n_range + n > P->cap_range) {
        uint32_t cap = P->cap_range ? P->cap_range : 64;
        while (cap < P->n_range + n) cap *= 2;
        uint32_t *r = realloc(P->range, 2 * (size_t)cap * sizeof *r);
        if (!r) return nomem(P), 0;
        P->range = r;
        P->cap_range = cap;
    }
    if (P->n_cls == P->cap_cls) {
        uint32_t cap = P->cap_cls ? 2 * P->cap_cls : 16;
        gbnf_class *c = realloc(P->cls, cap * sizeof *c);
        if (!c) return nomem(P), 0;
        P->cls = c;
        P->cap_cls = cap;
    }
    memcpy(P->range + 2 * (size_t)P->n_range, pairs, 2 * (size_t)n * sizeof *pairs);
    P->cls[P->n_cls] = (gbnf_class){P->n_range, n, negated};
    P->n_range += n;
    return P->n_cls++;
}

// ---------------------------------------------------------------------------------------------
// Lexical pieces

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

static bool is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || is_digit(c);
}

// Skips blanks and # comments, and line ends when newline_ok.
static const char *space(const char *p, bool newline_ok) {
    for (;;) {
        if (*p == ' ' || *p == '\t' || (newline_ok && (*p == '\r' || *p == '\n'))) {
            p++;
        } else if (*p == '#') {
            while (*p && *p != '\r' && *p != '\n') p++;
        } else {
            return p;
        }
    }
}

// A decimal number into *v (saturating at NO_MAX); NULL when there is no digit.
static const char *number(const char *p, uint64_t *v) {
    if (!is_digit(*p)) return NULL;
    *v = 0;
    for (; is_digit(*p); p++) *v = *v > (NO_MAX - 9) / 10 ? NO_MAX : *v * 10 + (uint64_t)(*p - '0');
    return p;
}

// One code point of the grammar's UTF-8, decoded as llama.cpp decodes it (the lead byte's
// length, then up to that many following bytes without checking them).
static const char *utf8_char(const char *p, uint32_t *c) {
    static const uint8_t len_of[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    const uint8_t b = (uint8_t)*p;
    const int len = len_of[b >> 4];
    uint32_t v = b & ((1u << (8 - len)) - 1);
    const char *end = p + len;
    for (p++; p < end && *p; p++) v = (v << 6) + ((uint8_t)*p & 0x3F);
    *c = v;
    return p;
}

static const char *hex(parser *P, const char *p, int digits, uint32_t *c) {
    const char *start = p - 2;
    uint32_t v = 0;
    for (int i = 0; i < digits; i++, p++) {
        const char h = *p;
        int d = h >= '0' && h <= '9'   ? h - '0'
                : h >= 'a' && h <= 'f' ? h - 'a' + 10
                : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                       : -1;
        if (d < 0) return fail(P, start, "'\\%c' needs %d hex digits", start[1], digits);
        v = (v << 4) | (uint32_t)d;
    }
    *c = v;
    return p;
}

// One character of a literal or class: an escape or a UTF-8 code point.
static const char *character(parser *P, const char *p, uint32_t *c) {
    if (*p == '\\') {
        switch (p[1]) {
        case 'x':
            return hex(P, p + 2, 2, c);
        case 'u':
            return hex(P, p + 2, 4, c);
        case 'U':
            return hex(P, p + 2, 8, c);
        case 't':
            *c = '\t';
            return p + 2;
        case 'r':
            *c = '\r';
            return p + 2;
        case 'n':
            *c = '\n';
            return p + 2;
        case '\\':
        case '"':
        case '[':
        case ']':
        case '-':
            *c = (uint8_t)p[1];
            return p + 2;
        default:
            if (!p[1]) return fail(P, p, "a '\\' ends the text");
            return fail(P, p, "unknown escape '\\%c'", p[1]);
        }
    }
    if (!*p) return fail(P, p, "the text ends inside a literal or class");
    return utf8_char(p, c);
}

// ---------------------------------------------------------------------------------------------
// Grammar

static const char *alternatives(parser *P, const char *p, uint32_t rule_id, bool nested);

// <[id]> or <text> after an optional '!' (already skipped); *id gets the token.
static const char *token_ref(parser *P, const char *p, uint32_t *id) {
    if (*p != '<') return fail(P, p, "expecting '<' after '!'");
    const int64_t n_vocab = P->v ? P->v->n : (int64_t)INT32_MAX + 1;
    if (p[1] == '[') {
        uint64_t v;
        const char *q = number(p + 2, &v);
        if (!q) return fail(P, p + 2, "expecting a token id in <[...]>");
        if (*q != ']') return fail(P, q, "expecting ']' after the token id");
        if (q[1] != '>') return fail(P, q + 1, "expecting '>' after ']'");
        if (v >= (uint64_t)n_vocab)
            return fail(P, p, "token id %llu is outside the vocabulary (%lld tokens)",
                        (unsigned long long)v, (long long)n_vocab);
        *id = (uint32_t)v;
        return q + 2;
    }
    const char *q = p + 1;
    while (*q && *q != '>') q++;
    if (*q != '>') return fail(P, p, "a token reference '<' is not closed by '>'");
    q++;
    if (!P->v) return fail(P, p, "a token given by its text needs a vocabulary");
    int32_t ids[2];
    size_t n = 0;
    mint_err e;
    mint_status st = mint_vocab_tokenize(P->v, p, (size_t)(q - p), false, true, ids, 2, &n, &e);
    if ((st != MINT_OK && st != MINT_E_LIMIT) || n != 1)
        return fail(P, p, "'%.*s' is not one token of the vocabulary (it tokenizes to %zu)",
                    (int)(q - p > 64 ? 64 : q - p), p, n);
    *id = (uint32_t)ids[0];
    return q;
}

// Rewrites the last item of r (from `last`) repeated min..max times, as llama.cpp does:
// S{m,n} -> S written m times, then n-m nested optional rules S'(k) ::= S S'(k-1) |; without a
// maximum one rule S' ::= S S' |. *n_prev counts the rules the item stands for.
static bool repeat(parser *P, const char *p, elems *r, uint32_t last, uint32_t rule_id,
                   uint64_t min, uint64_t max, uint64_t *n_prev) {
    if (last == r->n) return fail(P, p, "a repetition has nothing before it to repeat"), false;
    if (max != NO_MAX && min > max)
        return fail(P, p, "repetition {%llu,%llu} has its minimum above its maximum",
                    (unsigned long long)min, (unsigned long long)max),
               false;
    const uint64_t total = max != NO_MAX && max > 0 ? max : min > 0 ? min : 1;
    if (*n_prev * total >= GBNF_MAX_REPEAT)
        return fail(P, p, "a repetition makes %llu rules or more (the limit is %d)",
                    (unsigned long long)(*n_prev * total), GBNF_MAX_REPEAT),
               false;
    const uint32_t item_n = r->n - last;
    elems item = {malloc(item_n * sizeof *item.e), item_n, item_n};
    if (!item.e) return nomem(P), false;
    memcpy(item.e, r->e + last, item_n * sizeof *item.e);
    if (min == 0) {
        P->n_elems -= item_n;
        r->n = last;
    }
    for (uint64_t i = 1; i < min && !P->failed; i++)
        for (uint32_t k = 0; k < item_n && push(P, r, item.e[k].op, item.e[k].arg); k++) {}
    const uint64_t n_opt = max == NO_MAX ? 1 : max - min;
    uint32_t prev_rule = 0;
    for (uint64_t i = 0; i < n_opt && !P->failed; i++) {
        const uint32_t id = new_symbol(P, P->sym[rule_id].base);
        elems rec = {0};
        for (uint32_t k = 0; k < item_n && push(P, &rec, item.e[k].op, item.e[k].arg); k++) {}
        if (i > 0 || max == NO_MAX) push(P, &rec, GBNF_RULE, max == NO_MAX ? id : prev_rule);
        push(P, &rec, GBNF_ALT, 0);
        push(P, &rec, GBNF_END, 0);
        if (P->failed) {
            free(rec.e);
            break;
        }
        set_body(P, id, &rec);
        prev_rule = id;
    }
    free(item.e);
    if (n_opt > 0) push(P, r, GBNF_RULE, prev_rule);
    *n_prev *= total;
    return !P->failed;
}

// A character class after its '[': its pairs become one class element (none for "[]").
static const char *char_class(parser *P, const char *p, elems *r) {
    const char *open = p - 1;
    bool negated = false;
    if (*p == '^') negated = true, p++;
    uint32_t *pairs = NULL, n = 0, cap = 0;
    while (*p != ']') {
        if (!*p) {
            free(pairs);
            return fail(P, open, "a character class '[' is not closed by ']'");
        }
        uint32_t lo, hi;
        if (!(p = character(P, p, &lo))) break;
        hi = lo;
        if (p[0] == '-' && p[1] != ']') {
            if (!p[1]) {
                free(pairs);
                return fail(P, open, "a character class '[' is not closed by ']'");
            }
            if (!(p = character(P, p + 1, &hi))) break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            uint32_t *q = realloc(pairs, 2 * (size_t)cap * sizeof *q);
            if (!q) {
                free(pairs);
                return nomem(P);
            }
            pairs = q;
        }
        pairs[2 * n] = lo;
        pairs[2 * n + 1] = hi;
        n++;
    }
    if (!P->failed && n > 0) {
        const uint32_t k = add_class(P, pairs, n, negated);
        push(P, r, GBNF_CLASS, k);
    }
    free(pairs);
    return P->failed ? NULL : p + 1;
}

// A sequence of items (with their repetitions) appended to r, up to '|', ')', a line end or the
// end. rule_id is the rule being written, whose base names generated rules.
static const char *sequence(parser *P, const char *p, elems *r, uint32_t rule_id, bool nested) {
    uint32_t last = r->n; // where the last item starts
    uint64_t n_prev = 1;  // rules that item stands for (a group's, for the repetition limit)
    while (*p && !P->failed) {
        const char *at = p;
        if (*p == '"') {
            last = r->n;
            n_prev = 1;
            for (p++; *p != '"';) {
                uint32_t c;
                if (!*p) return fail(P, at, "a literal '\"' is not closed");
                if (!(p = character(P, p, &c)) || !push(P, r, GBNF_CHAR, c)) return NULL;
            }
            p = space(p + 1, nested);
        } else if (*p == '[') {
            last = r->n;
            n_prev = 1;
            if (!(p = char_class(P, p + 1, r))) return NULL;
            p = space(p, nested);
        } else if (*p == '<' || *p == '!') {
            const uint32_t op = *p == '!' ? GBNF_NOT_TOKEN : GBNF_TOKEN;
            uint32_t id;
            if (!(p = token_ref(P, p + (*p == '!'), &id))) return NULL;
            last = r->n;
            n_prev = 1;
            if (!push(P, r, op, id)) return NULL;
            p = space(p, nested);
        } else if (is_word(*p)) {
            const char *end = p;
            while (is_word(*end)) end++;
            const uint32_t id = name_symbol(P, p, (size_t)(end - p), (size_t)(p - P->s));
            p = space(end, nested);
            last = r->n;
            n_prev = 1;
            if (P->failed || !push(P, r, GBNF_RULE, id)) return NULL;
        } else if (*p == '(') {
            if (++P->depth > GBNF_MAX_NESTING)
                return fail(P, p, "groups are nested deeper than %d", GBNF_MAX_NESTING);
            p = space(p + 1, true);
            const uint32_t before = P->n_sym;
            const uint32_t sub = new_symbol(P, P->sym[rule_id].base);
            if (P->failed || !(p = alternatives(P, p, sub, true))) return NULL;
            P->depth--;
            n_prev = P->n_sym - before > 1 ? P->n_sym - before : 1;
            last = r->n;
            if (!push(P, r, GBNF_RULE, sub)) return NULL;
            if (*p != ')') return fail(P, at, "a group '(' is not closed by ')'");
            p = space(p + 1, nested);
        } else if (*p == '.') {
            last = r->n;
            n_prev = 1;
            if (!push(P, r, GBNF_ANY, 0)) return NULL;
            p = space(p + 1, nested);
        } else if (*p == '*' || *p == '+' || *p == '?') {
            const char op = *p;
            p = space(p + 1, nested);
            const uint64_t min = op == '+' ? 1 : 0, max = op == '?' ? 1 : NO_MAX;
            if (!repeat(P, at, r, last, rule_id, min, max, &n_prev)) return NULL;
        } else if (*p == '{') {
            uint64_t min, max = NO_MAX;
            p = space(p + 1, nested);
            if (!(p = number(p, &min))) return fail(P, at, "expecting a number after '{'");
            p = space(p, nested);
            if (*p == ',') {
                p = space(p + 1, nested);
                const char *q = number(p, &max);
                if (q)
                    p = space(q, nested);
                else
                    max = NO_MAX;
            } else if (*p == '}') {
                max = min;
            } else {
                return fail(P, p, "expecting ',' or '}' in a repetition");
            }
            if (*p != '}') return fail(P, p, "expecting '}' to close the repetition");
            p = space(p + 1, nested);
            if (min > GBNF_MAX_REPEAT)
                return fail(P, at, "repetition count %llu is above %d", (unsigned long long)min,
                            GBNF_MAX_REPEAT);
            if (max != NO_MAX && max > GBNF_MAX_REPEAT) max = NO_MAX; // llama.cpp's rule
            if (!repeat(P, at, r, last, rule_id, min, max, &n_prev)) return NULL;
        } else {
            break;
        }
    }
    return P->failed ? NULL : p;
}

// Alternatives separated by '|' into rule rule_id's body.
static const char *alternatives(parser *P, const char *p, uint32_t rule_id, bool nested) {
    elems r = {0};
    p = sequence(P, p, &r, rule_id, nested);
    while (p && *p == '|') {
        if (!push(P, &r, GBNF_ALT, 0)) break;
        p = sequence(P, space(p + 1, true), &r, rule_id, nested);
    }
    if (p && push(P, &r, GBNF_END, 0)) {
        set_body(P, rule_id, &r);
        return p;
    }
    free(r.e);
    return NULL;
}

// name ::= alternatives, then a line end or the end of the text.
static const char *rule(parser *P, const char *p) {
    const char *end = p;
    while (is_word(*end)) end++;
    if (end == p) return fail(P, p, "expecting a rule name");
    const uint32_t id = name_symbol(P, p, (size_t)(end - p), (size_t)(p - P->s));
    if (P->failed) return NULL;
    P->sym[id].def_at = (size_t)(p - P->s);
    const char *q = space(end, false);
    if (strncmp(q, "::=", 3) != 0)
        return fail(P, q, "expecting '::=' after the rule name '%.*s'", (int)(end - p), p);
    if (!(q = alternatives(P, space(q + 3, true), id, false))) return NULL;
    if (*q == '\r')
        q += q[1] == '\n' ? 2 : 1;
    else if (*q == '\n')
        q++;
    else if (*q)
        return fail(P, q, "unexpected '%c' in rule '%.*s' (expecting a line end)", *q,
                    (int)(end - p), p);
    return space(q, true);
}

// ---------------------------------------------------------------------------------------------
// Checks after parsing

// Names rule k in messages: a written rule by its name, a generated one by the rule it is part of.
static void rule_name(const parser *P, uint32_t k, const char **name, int *len) {
    const symbol *s = &P->sym[P->sym[k].base];
    *name = s->name ? s->name : "?";
    *len = s->name ? (int)s->len : 1;
}

// Left recursion (runtime/text/gbnf_check.c says which cycles are refused), in one line naming
// the rule.
static bool check_left_recursion(parser *P, const gbnf *g) {
    uint32_t bad;
    if (gbnf_find_left_recursion(g, &bad) != MINT_OK) return nomem(P), false;
    if (bad == UINT32_MAX) return true;
    const char *name;
    int len, line, col;
    rule_name(P, bad, &name, &len);
    where(P, P->s + P->sym[P->sym[bad].base].def_at, &line, &col);
    mint_fail(P->err, MINT_E_FORMAT,
              "grammar: %d:%d: rule '%.*s' is left-recursive (it can reach itself before matching "
              "any text)",
              line, col, len, name);
    mint_err_one_line(P->err);
    P->failed = true;
    P->st = MINT_E_FORMAT;
    return false;
}

// ---------------------------------------------------------------------------------------------
// Entry points

void gbnf_free(gbnf *g) {
    if (!g) return;
    free(g->elem);
    free(g->rule);
    free(g->cls);
    free(g->range);
    memset(g, 0, sizeof *g);
}

static mint_status finish(parser *P, const char *root, gbnf *g) {
    for (uint32_t k = 0; k < P->n_sym; k++) {
        if (!P->sym[k].defined) {
            fail(P, P->s + P->sym[k].ref_at, "undefined rule '%.*s'", (int)P->sym[k].len,
                 P->sym[k].name);
            return P->st;
        }
    }
    const int32_t r = mint_strmap_get(&P->names, root, strlen(root));
    if (r < 0) {
        mint_fail(P->err, MINT_E_FORMAT, "grammar: no rule named '%s' (the start rule)", root);
        mint_err_one_line(P->err);
        return MINT_E_FORMAT;
    }
    g->n_rules = P->n_sym;
    g->n_elem = (uint32_t)P->n_elems;
    g->elem = malloc((size_t)g->n_elem * sizeof *g->elem);
    g->rule = malloc((size_t)g->n_rules * sizeof *g->rule);
    if (!g->elem || !g->rule) return nomem(P), P->st;
    uint32_t at = 0;
    for (uint32_t k = 0; k < P->n_sym; k++) {
        g->rule[k] = at;
        memcpy(g->elem + at, P->sym[k].body.e, P->sym[k].body.n * sizeof *g->elem);
        at += P->sym[k].body.n;
    }
    MINT_ASSERT(at == g->n_elem);
    g->cls = P->cls, g->n_cls = P->n_cls, P->cls = NULL;
    g->range = P->range, g->n_range = P->n_range, P->range = NULL;
    g->root = (uint32_t)r;
    if (!check_left_recursion(P, g)) return P->st;
    return MINT_OK;
}

mint_status gbnf_parse(const char *text, size_t len, const char *root, const mint_vocab *v,
                       gbnf *out, mint_err *err) {
    mint_err_clear(err);
    memset(out, 0, sizeof *out);
    if (!text && len) return mint_fail(err, MINT_E_ARG, "grammar: text is NULL");
    parser P = {.v = v, .err = err};
    char *s = malloc(len + 1);
    if (!s || mint_strmap_init(&P.names, 64) != MINT_OK) {
        free(s);
        return mint_fail(err, MINT_E_NOMEM, "grammar: out of memory");
    }
    if (len) memcpy(s, text, len);
    s[len] = '\0';
    P.s = s;
    P.n = len;
    const char *nul = memchr(s, '\0', len);
    if (nul) {
        fail(&P, nul, "the text holds a NUL byte");
    } else {
        const char *p = space(s, true);
        if (!*p) fail(&P, p, "the grammar has no rule");
        while (p && *p) p = rule(&P, p);
    }
    mint_status st = P.failed ? P.st : finish(&P, root ? root : "root", out);
    if (P.failed) st = P.st;
    for (uint32_t k = 0; k < P.n_sym; k++) free(P.sym[k].body.e);
    free(P.sym);
    free(P.cls);
    free(P.range);
    mint_strmap_free(&P.names);
    free(s);
    if (st != MINT_OK) gbnf_free(out);
    return st;
}

// ---------------------------------------------------------------------------------------------
// Matching one terminal

bool gbnf_class_has(const gbnf *g, uint32_t k, uint32_t c) {
    const gbnf_class *cl = &g->cls[k];
    const uint32_t *r = g->range + 2 * (size_t)cl->first;
    bool in = false;
    for (uint32_t i = 0; i < cl->n && !in; i++) in = r[2 * i] <= c && c <= r[2 * i + 1];
    return in != cl->negated;
}

bool gbnf_match(const gbnf *g, const gbnf_elem *e, uint32_t c) {
    switch (e->op) {
    case GBNF_CHAR:
        return e->arg == c;
    case GBNF_CLASS:
        return gbnf_class_has(g, e->arg, c);
    case GBNF_ANY:
        return true;
    default:
        return false;
    }
}

bool gbnf_match_partial(const gbnf *g, const gbnf_elem *e, uint32_t value, int n_remain) {
    if (n_remain < 0 || (n_remain == 1 && value < 2)) return false;
    // The code points the missing bytes can complete to; from a zero lead, the smallest one that
    // is not overlong (llama.cpp's bounds).
    uint32_t lo = value << (6 * n_remain);
    const uint32_t hi = lo | ((1u << (6 * n_remain)) - 1);
    if (lo == 0 && n_remain == 2) lo = 1u << 11;
    if (lo == 0 && n_remain == 3) lo = 1u << 16;
    switch (e->op) {
    case GBNF_ANY:
        return true;
    case GBNF_CHAR:
        return lo <= e->arg && e->arg <= hi;
    case GBNF_CLASS: {
        const gbnf_class *cl = &g->cls[e->arg];
        const uint32_t *r = g->range + 2 * (size_t)cl->first;
        for (uint32_t i = 0; i < cl->n; i++)
            if (r[2 * i] <= hi && lo <= r[2 * i + 1]) return !cl->negated;
        return cl->negated;
    }
    default:
        return false;
    }
}
