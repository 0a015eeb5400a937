// json_schema_pattern.c - a string schema's "pattern" (a regex anchored with ^ and $) as a GBNF
// rule, by llama.cpp's converter's translation: GBNF's syntax is close to a regex's, so the pattern
// is copied a piece at a time (literal runs merged into one quoted string, classes and groups
// kept, {m,n} on a group or class through a numbered sub-rule "NAME-1"). What GBNF cannot say
// (lookaround, \w \d \s, anchors inside, ...) makes the whole pattern fall back to any string, with
// a warning, as llama.cpp does; a pattern that is not a valid regex (unbalanced parentheses, an
// unterminated class, nothing to repeat, a trailing backslash) is an error.
#include "runtime/text/json_schema.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_PATTERN_DEPTH = 100 }; // nested groups; deeper falls back (llama.cpp's bound)

typedef enum { P_OK, P_UNSUPPORTED, P_INVALID } pat_result;

// One piece of a sequence: text, and whether it is literal text (still to be quoted).
typedef struct piece {
    char *s;      // in the arena
    bool literal; // raw literal characters (escapes already GBNF's) to be merged and quoted
} piece;

typedef struct pat {
    js_conv *c;          // the converter (rules, arena, failures)
    const char *s;       // [len] the pattern without its ^ and $
    size_t len;          // bytes
    size_t i;            // read position
    int depth;           // open groups
    const char *name;    // the rule's name, prefix of its sub-rules
    js_subrule *subs;    // [n_subs] sub-rules made for {m,n} on a group or class
    size_t n_subs;       // count
    size_t cap_subs;     // allocated
    mint_strmap sub_idx; // sub-rule text -> index in subs
    pat_result result;   // P_OK while translating
    char why[96];        // what made it fall back or fail
} pat;

// Records why the pattern cannot be translated (the first reason wins); returns NULL.
static char *stop(pat *p, pat_result r, const char *fmt, ...) MINT_PRINTF(3, 4);
static char *stop(pat *p, pat_result r, const char *fmt, ...) {
    if (p->result == P_OK) {
        p->result = r;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->why, sizeof p->why, fmt, ap);
        va_end(ap);
    }
    return NULL;
}

static bool in_set(const char *set, char ch) {
    return ch != '\0' && strchr(set, ch) != NULL;
}

// Characters that are not literal text on their own, and those a backslash makes literal.
static const char NON_LITERAL[] = "|.()[]{}*+?^$";
static const char ESCAPED_LITERAL[] = "^$.[]()|{}*+?";

// Length of a GBNF-compatible escape at s[pos] (\t \r \n \\ \" \[ \], \xHH, \uHHHH,
// \UHHHHHHHH), or 0 when there is none.
static size_t escape_length(const char *s, size_t len, size_t pos) {
    if (pos + 1 >= len || s[pos] != '\\') return 0;
    size_t n_hex;
    switch (s[pos + 1]) {
    case 'x':
        n_hex = 2;
        break;
    case 'u':
        n_hex = 4;
        break;
    case 'U':
        n_hex = 8;
        break;
    case 't':
    case 'r':
    case 'n':
    case '\\':
    case '"':
    case '[':
    case ']':
        return 2;
    default:
        return 0;
    }
    if (pos + 2 + n_hex > len) return 0;
    for (size_t i = pos + 2; i < pos + 2 + n_hex; i++)
        if (!in_set("0123456789abcdefABCDEF", s[i])) return 0;
    return 2 + n_hex;
}

// The (at most) two bytes at s[i], for messages.
static int two(const pat *p, size_t i) {
    return p->len - i < 2 ? (int)(p->len - i) : 2;
}

typedef struct seq {
    piece *v;   // [n] pieces
    size_t n;   // count
    size_t cap; // allocated
} seq;

static bool push(pat *p, seq *q, char *s, bool literal) {
    if (!s) return false;
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 8;
        piece *v = realloc(q->v, cap * sizeof *v);
        if (!v) return js_fail(p->c, MINT_E_NOMEM, "json schema: out of memory"), false;
        q->v = v;
        q->cap = cap;
    }
    q->v[q->n++] = (piece){s, literal};
    return true;
}

// A piece as GBNF: a literal in quotes, anything else as it is.
static char *to_rule(pat *p, piece x) {
    return x.literal ? js_cat(p->c, "\"", x.s, "\"", NULL) : x.s;
}

// The sequence joined by spaces, runs of literal pieces merged into one quoted string.
static char *join_seq(pat *p, seq *q) {
    js_buf b = {0};
    for (size_t k = 0; k < q->n;) {
        if (k) js_buf_addc(p->c, &b, ' ');
        if (!q->v[k].literal) {
            js_buf_adds(p->c, &b, q->v[k++].s);
            continue;
        }
        js_buf_addc(p->c, &b, '"');
        while (k < q->n && q->v[k].literal) js_buf_adds(p->c, &b, q->v[k++].s);
        js_buf_addc(p->c, &b, '"');
    }
    js_buf_add(p->c, &b, "", 0);
    return js_buf_done(p->c, &b);
}

// std::stoi's reading of a repetition count: optional blanks and sign, digits, anything after
// ignored; false when there is no number or it does not fit an int.
static bool read_count(const char *s, size_t n, int *out) {
    char buf[64];
    if (n >= sizeof buf) n = sizeof buf - 1; // longer text holds no int anyway
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (end == buf || errno == ERANGE || v < INT_MIN || v > INT_MAX) return false;
    *out = (int)v;
    return true;
}

// The name of the sub-rule standing for `text` (made on first use: NAME-<count>).
static char *sub_rule(pat *p, char *text) {
    int32_t k = mint_strmap_get(&p->sub_idx, text, strlen(text));
    if (k >= 0) return (char *)p->subs[k].id;
    if (p->n_subs == p->cap_subs) {
        size_t cap = p->cap_subs ? 2 * p->cap_subs : 8;
        js_subrule *v = realloc(p->subs, cap * sizeof *v);
        if (!v) return js_fail(p->c, MINT_E_NOMEM, "json schema: out of memory");
        p->subs = v;
        p->cap_subs = cap;
    }
    char num[24];
    snprintf(num, sizeof num, "-%zu", p->n_subs + 1);
    char *name = js_cat(p->c, p->name, num, NULL);
    const char *id = name ? js_add_rule(p->c, name, text) : NULL;
    if (!id) return NULL;
    if (mint_strmap_put(&p->sub_idx, text, strlen(text), (int32_t)p->n_subs, NULL) != MINT_OK)
        return js_fail(p->c, MINT_E_NOMEM, "json schema: out of memory");
    p->subs[p->n_subs++] = (js_subrule){text, id};
    return (char *)id;
}

// {m}, {m,}, {,n} or {m,n} applied to the last piece.
static bool repeat_counted(pat *p, seq *q) {
    size_t open = ++p->i;
    while (p->i < p->len && p->s[p->i] != '}') p->i++;
    if (p->i >= p->len) return stop(p, P_UNSUPPORTED, "unterminated curly brackets"), false;
    const char *in = p->s + open;
    size_t n = p->i - open;
    p->i++;
    const char *comma = memchr(in, ',', n);
    int min = 0, max = INT32_MAX;
    if (comma && memchr(comma + 1, ',', n - (size_t)(comma + 1 - in)))
        return stop(p, P_UNSUPPORTED, "wrong number of values in curly brackets"), false;
    bool ok = true;
    if (!comma) {
        ok = read_count(in, n, &min);
        max = min;
    } else {
        size_t n0 = (size_t)(comma - in), n1 = n - n0 - 1;
        if (n0) ok = read_count(in, n0, &min);
        if (ok && n1) ok = read_count(comma + 1, n1, &max);
    }
    if (!ok) return stop(p, P_UNSUPPORTED, "invalid number in curly brackets"), false;
    if (q->n == 0) return stop(p, P_INVALID, "nothing to repeat"), false;
    piece *last = &q->v[q->n - 1];
    char *item = last->literal ? js_cat(p->c, "\"", last->s, "\"", NULL) : sub_rule(p, last->s);
    char *rep = item ? js_repetition(p->c, item, min, max, "") : NULL;
    if (!rep) return false;
    *last = (piece){rep, false};
    return true;
}

// A character class, copied with its GBNF-compatible escapes.
static char *char_class(pat *p) {
    js_buf b = {0};
    js_buf_addc(p->c, &b, '[');
    p->i++;
    while (p->i < p->len && p->s[p->i] != ']') {
        if (p->s[p->i] == '\\') {
            size_t n = escape_length(p->s, p->len, p->i);
            if (n == 0) {
                js_buf_drop(p->c, &b);
                return stop(p, P_UNSUPPORTED, "unsupported escape in character class: %.*s",
                            two(p, p->i), p->s + p->i);
            }
            js_buf_add(p->c, &b, p->s + p->i, n);
            p->i += n;
        } else {
            js_buf_addc(p->c, &b, p->s[p->i++]);
        }
    }
    if (p->i >= p->len) {
        js_buf_drop(p->c, &b);
        return stop(p, P_INVALID, "unterminated character class");
    }
    js_buf_addc(p->c, &b, ']');
    p->i++;
    return js_buf_done(p->c, &b);
}

// A run of literal characters. A character right before a quantifier stays out of the run
// (unless the run is empty), so that the quantifier applies to it alone.
static char *literal_run(pat *p) {
    char first = p->s[p->i];
    js_buf b = {0};
    while (p->i < p->len) {
        const char *s = p->s;
        size_t i = p->i;
        if (s[i] == '\\') {
            if (i == p->len - 1) {
                js_buf_drop(p->c, &b);
                return stop(p, P_INVALID, "trailing backslash");
            }
            if (in_set(ESCAPED_LITERAL, s[i + 1])) {
                js_buf_addc(p->c, &b, s[i + 1]);
                p->i += 2;
            } else {
                size_t n = escape_length(s, p->len, i);
                if (n == 0) {
                    js_buf_drop(p->c, &b);
                    return stop(p, P_UNSUPPORTED, "unsupported escape: %.*s", two(p, i), s + i);
                }
                js_buf_add(p->c, &b, s + i, n);
                p->i += n;
            }
        } else if (s[i] == '"') {
            js_buf_add(p->c, &b, "\\\"", 2);
            p->i++;
        } else if (!in_set(NON_LITERAL, s[i]) && (i == p->len - 1 || b.n == 0 || s[i + 1] == '.' ||
                                                  !in_set(NON_LITERAL, s[i + 1]))) {
            js_buf_addc(p->c, &b, s[i]);
            p->i++;
        } else {
            break;
        }
    }
    if (b.n == 0) {
        js_buf_drop(p->c, &b);
        return stop(p, P_UNSUPPORTED, "unsupported character: %c", first);
    }
    return js_buf_done(p->c, &b);
}

// A sequence up to the ')' that closes the current group (or the end): its GBNF text.
static char *transform(pat *p) {
    seq q = {0};
    char *out = NULL;
    while (p->i < p->len && p->result == P_OK && p->c->st == MINT_OK) {
        char ch = p->s[p->i];
        if (ch == '.') {
            if (!push(p, &q, (char *)js_add_rule(p->c, "dot", "[^\\x0A\\x0D]"), false)) break;
            p->i++;
        } else if (ch == '(') {
            p->i++;
            if (p->i < p->len && p->s[p->i] == '?') {
                if (p->i + 1 < p->len && p->s[p->i + 1] == ':') {
                    p->i += 2; // a non-capturing group is a group
                } else {
                    stop(p, P_UNSUPPORTED, "unsupported group syntax");
                    break;
                }
            }
            if (++p->depth > MAX_PATTERN_DEPTH) {
                stop(p, P_UNSUPPORTED, "pattern nesting too deep");
                break;
            }
            char *inner = transform(p);
            if (!inner || !push(p, &q, js_cat(p->c, "(", inner, ")", NULL), false)) break;
        } else if (ch == ')') {
            p->i++;
            if (p->depth == 0) {
                stop(p, P_INVALID, "unbalanced parentheses");
                break;
            }
            p->depth--;
            out = join_seq(p, &q);
            goto done;
        } else if (ch == '^' || ch == '$') {
            stop(p, P_UNSUPPORTED, "anchor inside the pattern");
            break;
        } else if (ch == '[') {
            if (!push(p, &q, char_class(p), false)) break;
        } else if (ch == '|') {
            if (!push(p, &q, js_strndup(p->c, "|", 1), false)) break;
            p->i++;
        } else if (ch == '*' || ch == '+' || ch == '?') {
            if (q.n == 0) {
                stop(p, P_INVALID, "nothing to repeat");
                break;
            }
            char op[2] = {ch, '\0'};
            char *r = to_rule(p, q.v[q.n - 1]);
            r = r ? js_cat(p->c, r, op, NULL) : NULL;
            if (!r) break;
            q.v[q.n - 1] = (piece){r, false};
            p->i++;
        } else if (ch == '{') {
            if (!repeat_counted(p, &q)) break;
        } else {
            char *lit = literal_run(p);
            if (!lit || !push(p, &q, lit, true)) break;
        }
    }
    if (p->result == P_OK && p->c->st == MINT_OK) out = join_seq(p, &q);
done:
    free(q.v);
    return out;
}

const char *js_pattern_rule(js_conv *c, const char *pattern, const char *name) {
    size_t n = strlen(pattern);
    pat p = {.c = c, .name = name};
    size_t mark = js_rules_mark(c);
    char *rule = NULL;
    if (n < 2 || pattern[0] != '^' || pattern[n - 1] != '$') {
        stop(&p, P_UNSUPPORTED, "not anchored with '^' and '$'");
    } else if (mint_strmap_init(&p.sub_idx, 16) != MINT_OK) {
        return js_fail(c, MINT_E_NOMEM, "json schema: out of memory");
    } else {
        p.s = pattern + 1;
        p.len = n - 2;
        rule = transform(&p);
        if (p.result == P_OK && p.depth != 0) stop(&p, P_INVALID, "unbalanced parentheses");
        free(p.subs);
        mint_strmap_free(&p.sub_idx);
    }
    if (c->st != MINT_OK) return NULL;
    if (p.result == P_OK)
        return js_add_rule(c, name, js_cat(c, "\"\\\"\" (", rule, ") \"\\\"\"", NULL));
    js_rules_reset(c, mark); // the partial translation's rules must not stay
    if (p.result == P_INVALID)
        return js_fail_at(c, "pattern", "invalid pattern %s: %s", pattern, p.why);
    js_warn(c, "pattern", "pattern %s is not supported (%s), accepting any string", pattern, p.why);
    return js_add_rule(c, name, js_add_builtin(c, "string", "string"));
}
