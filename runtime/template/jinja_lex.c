// jinja_lex.c - template text to tokens, with jinja2's whitespace rules as Hugging Face sets
// them: one trailing newline of the template dropped, newlines normalised to \n, `{%-`/`-%}`
// (and `{{-`, `{#-`) strip all whitespace on that side, trim_blocks drops the first newline after
// a block or comment tag, lstrip_blocks drops the spaces and tabs between a line's start and a
// block or comment tag (`{%+` keeps them, `+%}` keeps the newline).
#include "runtime/template/jinja.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct lexer {
    jj_ctx *c;
    const char *s; // normalised template
    size_t n;      // its length
    size_t pos;    // cursor
    int line;      // line at pos
    jj_tok *toks;  // [n_tok] output
    size_t n_tok, cap;
} lexer;

static bool is_ws(unsigned char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f' ||
           (ch >= 0x1c && ch <= 0x1f);
}

static void emit(lexer *L, jj_tok t) {
    if (L->n_tok == L->cap) {
        size_t cap = L->cap ? 2 * L->cap : 256;
        jj_tok *nt = jj_alloc(L->c, cap * sizeof *nt);
        if (L->n_tok) memcpy(nt, L->toks, L->n_tok * sizeof *nt);
        L->toks = nt;
        L->cap = cap;
    }
    L->toks[L->n_tok++] = t;
}

static void advance(lexer *L, size_t to) {
    for (size_t i = L->pos; i < to; i++)
        if (L->s[i] == '\n') L->line++;
    L->pos = to;
}

static void emit_data(lexer *L, size_t from, size_t to, int line) {
    if (to > from) emit(L, (jj_tok){.t = TK_DATA, .s = {L->s + from, to - from}, .line = line});
}

// Appends code point cp as UTF-8.
static size_t put_utf8(char *d, unsigned long cp) {
    if (cp < 0x80) {
        d[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (char)(0xC0 | (cp >> 6));
        d[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (char)(0xE0 | (cp >> 12));
        d[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        d[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    d[0] = (char)(0xF0 | (cp >> 18));
    d[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    d[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    d[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static int hexval(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

// A string literal's body with Python's escapes (unicode-escape) decoded.
static jj_str unescape(lexer *L, const char *p, size_t n, int line) {
    char *d = jj_alloc(L->c, n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '\\' || i + 1 >= n) {
            d[k++] = p[i];
            continue;
        }
        char e = p[++i];
        int digits = 0;
        switch (e) {
        case '\n':
            break;
        case '\\':
        case '\'':
        case '"':
            d[k++] = e;
            break;
        case 'a':
            d[k++] = 7;
            break;
        case 'b':
            d[k++] = 8;
            break;
        case 'f':
            d[k++] = 12;
            break;
        case 'n':
            d[k++] = 10;
            break;
        case 'r':
            d[k++] = 13;
            break;
        case 't':
            d[k++] = 9;
            break;
        case 'v':
            d[k++] = 11;
            break;
        case 'x':
            digits = 2;
            break;
        case 'u':
            digits = 4;
            break;
        case 'U':
            digits = 8;
            break;
        default:
            if (e >= '0' && e <= '7') {
                unsigned long cp = (unsigned long)(e - '0');
                for (int j = 0; j < 2 && i + 1 < n && p[i + 1] >= '0' && p[i + 1] <= '7'; j++)
                    cp = cp * 8 + (unsigned long)(p[++i] - '0');
                k += put_utf8(d + k, cp);
            } else {
                d[k++] = '\\';
                d[k++] = e;
            }
        }
        if (digits) {
            unsigned long cp = 0;
            for (int j = 0; j < digits; j++) {
                if (i + 1 >= n || hexval(p[i + 1]) < 0)
                    jj_fail(L->c, "template line %d: truncated \\%c escape in a string", line, e);
                cp = cp * 16 + (unsigned long)hexval(p[++i]);
            }
            if (cp > 0x10FFFF)
                jj_fail(L->c, "template line %d: escape \\%c out of range in a string", line, e);
            k += put_utf8(d + k, cp); // at most 4 bytes for at least 4 source bytes
        }
    }
    return (jj_str){d, k};
}

static const char *const ops[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*",
                                  "/",  "%",  "~",  "(",  ")",  "[",  "]", "{", "}",
                                  ",",  ".",  ":",  "|",  "=",  "<",  ">", ";"};

// Tokens inside {% %} or {{ }} up to the end tag; returns after the end tag.
static void lex_tag(lexer *L, bool block, int open_line) {
    int depth = 0; // open ( [ {: end tags count only outside them, as in jinja2
    const char *end = block ? "%}" : "}}";
    for (;;) {
        while (L->pos < L->n && is_ws((unsigned char)L->s[L->pos])) advance(L, L->pos + 1);
        if (L->pos >= L->n)
            jj_fail(L->c, "template line %d: unexpected end of template, expected '%s'", open_line,
                    end);
        const char *p = L->s + L->pos;
        size_t left = L->n - L->pos;
        if (depth == 0) {
            size_t sign = (p[0] == '-' || p[0] == '+') ? 1 : 0;
            if (left >= sign + 2 && memcmp(p + sign, end, 2) == 0) {
                emit(L, (jj_tok){.t = block ? TK_BLOCK_END : TK_VAR_END, .line = L->line});
                advance(L, L->pos + sign + 2);
                if (sign && p[0] == '-') {
                    while (L->pos < L->n && is_ws((unsigned char)L->s[L->pos]))
                        advance(L, L->pos + 1);
                } else if (block && !sign && L->pos < L->n && L->s[L->pos] == '\n')
                    advance(L, L->pos + 1);
                return;
            }
        }
        unsigned char ch = (unsigned char)p[0];
        if (ch == '_' || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z')) {
            size_t k = 1;
            while (k < left && (p[k] == '_' || (p[k] >= '0' && p[k] <= '9') ||
                                ((p[k] | 0x20) >= 'a' && (p[k] | 0x20) <= 'z')))
                k++;
            emit(L, (jj_tok){.t = TK_NAME, .s = {p, k}, .line = L->line});
            advance(L, L->pos + k);
            continue;
        }
        if (ch >= '0' && ch <= '9') {
            size_t k = 0;
            char num[64];
            size_t m = 0;
            bool is_float = false;
            while (k < left && ((p[k] >= '0' && p[k] <= '9') || p[k] == '_')) {
                if (p[k] != '_' && m < 60) num[m++] = p[k];
                k++;
            }
            if (k + 1 < left && p[k] == '.' && p[k + 1] >= '0' && p[k + 1] <= '9') {
                is_float = true;
                num[m++] = p[k++];
                while (k < left && ((p[k] >= '0' && p[k] <= '9') || p[k] == '_')) {
                    if (p[k] != '_' && m < 60) num[m++] = p[k];
                    k++;
                }
            }
            if (k < left && (p[k] == 'e' || p[k] == 'E')) {
                size_t j = k + 1;
                if (j < left && (p[j] == '+' || p[j] == '-')) j++;
                if (j < left && p[j] >= '0' && p[j] <= '9') {
                    is_float = true;
                    num[m++] = 'e';
                    if (p[k + 1] == '-') num[m++] = '-';
                    k = j;
                    while (k < left && p[k] >= '0' && p[k] <= '9') {
                        if (m < 62) num[m++] = p[k];
                        k++;
                    }
                }
            }
            num[m] = '\0';
            jj_tok t = {.t = is_float ? TK_FLOAT : TK_INT, .s = {p, k}, .line = L->line};
            if (is_float)
                t.f = strtod(num, NULL);
            else {
                errno = 0;
                long long v = strtoll(num, NULL, 10);
                if (errno || m > 19)
                    jj_fail(L->c, "template line %d: integer %.*s is too large", L->line,
                            (int)(m > 30 ? 30 : m), num);
                t.i = v;
            }
            emit(L, t);
            advance(L, L->pos + k);
            continue;
        }
        if (ch == '\'' || ch == '"') {
            size_t k = 1;
            while (k < left && p[k] != (char)ch) k += p[k] == '\\' ? 2 : 1;
            if (k >= left) jj_fail(L->c, "template line %d: unterminated string", L->line);
            jj_tok t = {.t = TK_STRING, .line = L->line};
            t.s = unescape(L, p + 1, k - 1, L->line);
            emit(L, t);
            advance(L, L->pos + k + 1);
            continue;
        }
        size_t i;
        for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
            size_t k = strlen(ops[i]);
            if (left >= k && memcmp(p, ops[i], k) == 0) break;
        }
        if (i == sizeof ops / sizeof ops[0])
            jj_fail(L->c, "template line %d: unexpected character '%c'", L->line,
                    ch >= 0x20 && ch < 0x7f ? ch : '?');
        size_t k = strlen(ops[i]);
        if (p[0] == '(' || p[0] == '[' || p[0] == '{') depth++;
        if ((p[0] == ')' || p[0] == ']' || p[0] == '}') && depth > 0) depth--;
        emit(L, (jj_tok){.t = TK_OP, .s = {p, k}, .line = L->line});
        advance(L, L->pos + k);
    }
}

// Matches "{%[-+]? *NAME *[-+]?%}" at p; returns its length, 0 if not.
static size_t match_tag(const char *p, size_t left, const char *name) {
    size_t k = 2, nl = strlen(name);
    if (left < 2 || p[0] != '{' || p[1] != '%') return 0;
    if (k < left && (p[k] == '-' || p[k] == '+')) k++;
    while (k < left && is_ws((unsigned char)p[k])) k++;
    if (left - k < nl || memcmp(p + k, name, nl) != 0) return 0;
    k += nl;
    while (k < left && is_ws((unsigned char)p[k])) k++;
    if (k < left && (p[k] == '-' || p[k] == '+')) k++;
    if (left - k < 2 || p[k] != '%' || p[k + 1] != '}') return 0;
    return k + 2;
}

jj_tok *jj_lex(jj_ctx *c, const char *src, size_t n, size_t *n_tok) {
    // Newlines to \n, then one trailing newline dropped (jinja2's keep_trailing_newline=False).
    char *s = jj_alloc(c, n + 1);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (src[i] == '\r') {
            s[m++] = '\n';
            if (i + 1 < n && src[i + 1] == '\n') i++;
        } else
            s[m++] = src[i];
    }
    if (m > 0 && s[m - 1] == '\n') m--;
    s[m] = '\0';
    lexer L = {.c = c, .s = s, .n = m, .line = 1};
    bool line_starting = true;
    while (L.pos < L.n) {
        // Next tag start.
        size_t k = L.pos;
        const char *p = NULL;
        while (k + 1 < L.n) {
            if (s[k] == '{' && (s[k + 1] == '{' || s[k + 1] == '%' || s[k + 1] == '#')) {
                p = s + k;
                break;
            }
            k++;
        }
        if (!p) {
            emit_data(&L, L.pos, L.n, L.line);
            advance(&L, L.n);
            break;
        }
        char kind = p[1], sign = k + 2 < L.n ? p[2] : 0;
        size_t text_end = k;
        if (sign == '-') {
            while (text_end > L.pos && is_ws((unsigned char)s[text_end - 1])) text_end--;
        } else if (sign != '+' && kind != '{') {
            // lstrip_blocks: only spaces between the line's start and the tag.
            size_t l = text_end;
            while (l > L.pos && s[l - 1] != '\n') l--;
            bool blank = l < text_end;
            for (size_t i = l; i < text_end && blank; i++) blank = is_ws((unsigned char)s[i]);
            if ((l > L.pos || line_starting) && blank) text_end = l;
        }
        int line = L.line;
        emit_data(&L, L.pos, text_end, line);
        advance(&L, k);
        size_t left = L.n - L.pos;
        if (kind == '#') {
            const char *e = NULL;
            for (size_t i = L.pos + 2; i + 1 < L.n; i++)
                if (s[i] == '#' && s[i + 1] == '}') {
                    e = s + i;
                    break;
                }
            if (!e) jj_fail(c, "template line %d: unterminated comment", L.line);
            size_t after = (size_t)(e - s) + 2;
            bool minus = e > s + L.pos + 2 && e[-1] == '-',
                 plus = e > s + L.pos + 2 && e[-1] == '+';
            advance(&L, after);
            if (minus)
                while (L.pos < L.n && is_ws((unsigned char)s[L.pos])) advance(&L, L.pos + 1);
            else if (!plus && L.pos < L.n && s[L.pos] == '\n')
                advance(&L, L.pos + 1);
            line_starting = L.pos > 0 && s[L.pos - 1] == '\n';
            continue;
        }
        size_t raw = kind == '%' ? match_tag(p, left, "raw") : 0;
        if (raw) {
            bool minus_end = p[raw - 3] == '-';
            advance(&L, L.pos + raw);
            if (minus_end)
                while (L.pos < L.n && is_ws((unsigned char)s[L.pos])) advance(&L, L.pos + 1);
            size_t j = L.pos, endlen = 0;
            for (; j < L.n; j++)
                if ((endlen = match_tag(s + j, L.n - j, "endraw")) > 0) break;
            if (!endlen) jj_fail(c, "template line %d: missing endraw", line);
            size_t body_end = j;
            if (s[j + 2] == '-')
                while (body_end > L.pos && is_ws((unsigned char)s[body_end - 1])) body_end--;
            emit_data(&L, L.pos, body_end, L.line);
            bool minus = s[j + endlen - 3] == '-', plus = s[j + endlen - 3] == '+';
            advance(&L, j + endlen);
            if (minus)
                while (L.pos < L.n && is_ws((unsigned char)s[L.pos])) advance(&L, L.pos + 1);
            else if (!plus && L.pos < L.n && s[L.pos] == '\n')
                advance(&L, L.pos + 1);
            line_starting = L.pos > 0 && s[L.pos - 1] == '\n';
            continue;
        }
        int open_line = L.line;
        emit(&L, (jj_tok){.t = kind == '%' ? TK_BLOCK_BEGIN : TK_VAR_BEGIN, .line = L.line});
        advance(&L, L.pos + 2 + (sign == '-' || sign == '+'));
        lex_tag(&L, kind == '%', open_line);
        line_starting = L.pos > 0 && s[L.pos - 1] == '\n';
    }
    emit(&L, (jj_tok){.t = TK_EOF, .line = L.line});
    *n_tok = L.n_tok;
    return L.toks;
}
