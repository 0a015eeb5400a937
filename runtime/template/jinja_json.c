// jinja_json.c - JSON text to the engine's values, as Python's json.loads builds them (what a
// chat template sees when Hugging Face renders it with messages, tools and keyword arguments
// read from a request): objects become dicts in their key order (a repeated key keeps its first
// place and its last value), arrays lists, integers int, numbers with a fraction or an exponent
// float, and strings their decoded UTF-8 (a lone surrogate escape, which Python keeps but cannot
// print, becomes U+FFFD). Strict JSON only: the caller's text is one value, nothing after it
// but whitespace.
#include "runtime/template/jinja.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct jparse {
    jj_ctx *c;        // arena and errors
    const char *p;    // [n] the text
    size_t n;         // length
    size_t i;         // read position
    const char *what; // what the text is, for errors ("tools", "variables")
} jparse;

_Noreturn static void bad(jparse *j, const char *msg) {
    jj_fail(j->c, "%s: invalid JSON: %s at byte %zu", j->what, msg, j->i);
}

static void skip_ws(jparse *j) {
    while (j->i < j->n &&
           (j->p[j->i] == ' ' || j->p[j->i] == '\t' || j->p[j->i] == '\n' || j->p[j->i] == '\r'))
        j->i++;
}

static bool eat(jparse *j, const char *lit) {
    size_t k = strlen(lit);
    if (j->n - j->i < k || memcmp(j->p + j->i, lit, k) != 0) return false;
    j->i += k;
    return true;
}

static int hex4(jparse *j) {
    if (j->n - j->i < 4) bad(j, "short \\u escape");
    int v = 0;
    for (int k = 0; k < 4; k++) {
        char ch = j->p[j->i++];
        int d = ch >= '0' && ch <= '9'   ? ch - '0'
                : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                         : -1;
        if (d < 0) bad(j, "bad \\u escape");
        v = v * 16 + d;
    }
    return v;
}

static void put_utf8(jj_ctx *c, jj_buf *b, unsigned cp) {
    char u[4];
    size_t k;
    if (cp < 0x80) {
        u[0] = (char)cp;
        k = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        k = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        k = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        k = 4;
    }
    jj_buf_put(c, b, u, k);
}

// Length of the valid UTF-8 sequence at s[0..n), or 0.
static size_t utf8_len(const unsigned char *s, size_t n) {
    unsigned char b = s[0];
    size_t k = b < 0x80             ? 1
               : (b & 0xE0) == 0xC0 ? 2
               : (b & 0xF0) == 0xE0 ? 3
               : (b & 0xF8) == 0xF0 ? 4
                                    : 0;
    if (k == 0 || k > n) return 0;
    for (size_t i = 1; i < k; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    unsigned cp = k == 1 ? b : k == 2 ? b & 0x1F : k == 3 ? b & 0x0F : b & 0x07;
    for (size_t i = 1; i < k; i++) cp = (cp << 6) | (s[i] & 0x3F);
    if ((k == 2 && cp < 0x80) || (k == 3 && cp < 0x800) || (k == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return k;
}

static jj_value string(jparse *j) {
    j->i++; // the opening quote
    jj_buf b = {0};
    jj_buf_put(j->c, &b, "", 0);
    for (;;) {
        if (j->i >= j->n) bad(j, "unterminated string");
        unsigned char ch = (unsigned char)j->p[j->i];
        if (ch == '"') {
            j->i++;
            return jj_buf_value(&b);
        }
        if (ch < 0x20) bad(j, "control character in a string");
        if (ch != '\\') {
            size_t k = utf8_len((const unsigned char *)j->p + j->i, j->n - j->i);
            if (k == 0) bad(j, "invalid UTF-8");
            jj_buf_put(j->c, &b, j->p + j->i, k);
            j->i += k;
            continue;
        }
        j->i++;
        if (j->i >= j->n) bad(j, "unterminated escape");
        char e = j->p[j->i++];
        const char *one = e == '"'    ? "\""
                          : e == '\\' ? "\\"
                          : e == '/'  ? "/"
                          : e == 'b'  ? "\b"
                          : e == 'f'  ? "\f"
                          : e == 'n'  ? "\n"
                          : e == 'r'  ? "\r"
                          : e == 't'  ? "\t"
                                      : NULL;
        if (one) {
            jj_buf_put(j->c, &b, one, 1);
            continue;
        }
        if (e != 'u') bad(j, "bad escape");
        unsigned cp = (unsigned)hex4(j);
        if (cp >= 0xD800 && cp <= 0xDBFF && j->n - j->i >= 6 && j->p[j->i] == '\\' &&
            j->p[j->i + 1] == 'u') {
            size_t save = j->i;
            j->i += 2;
            unsigned lo = (unsigned)hex4(j);
            if (lo >= 0xDC00 && lo <= 0xDFFF)
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            else
                j->i = save;
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
        put_utf8(j->c, &b, cp);
    }
}

static jj_value number(jparse *j) {
    size_t s = j->i;
    bool is_float = false;
    if (j->p[j->i] == '-') j->i++;
    if (j->i >= j->n || j->p[j->i] < '0' || j->p[j->i] > '9') bad(j, "bad number");
    if (j->p[j->i] == '0')
        j->i++;
    else
        while (j->i < j->n && j->p[j->i] >= '0' && j->p[j->i] <= '9') j->i++;
    if (j->i < j->n && j->p[j->i] == '.') {
        is_float = true;
        j->i++;
        if (j->i >= j->n || j->p[j->i] < '0' || j->p[j->i] > '9') bad(j, "bad number");
        while (j->i < j->n && j->p[j->i] >= '0' && j->p[j->i] <= '9') j->i++;
    }
    if (j->i < j->n && (j->p[j->i] == 'e' || j->p[j->i] == 'E')) {
        is_float = true;
        j->i++;
        if (j->i < j->n && (j->p[j->i] == '+' || j->p[j->i] == '-')) j->i++;
        if (j->i >= j->n || j->p[j->i] < '0' || j->p[j->i] > '9') bad(j, "bad number");
        while (j->i < j->n && j->p[j->i] >= '0' && j->p[j->i] <= '9') j->i++;
    }
    char tmp[64];
    size_t k = j->i - s;
    if (k >= sizeof tmp) {
        if (!is_float) bad(j, "integer too large");
        k = sizeof tmp - 1; // digits past 63 do not change a double much; keep the exponent
    }
    memcpy(tmp, j->p + s, k);
    tmp[k] = '\0';
    if (!is_float) {
        errno = 0;
        long long v = strtoll(tmp, NULL, 10);
        if (errno == 0) return jj_int(v);
        bad(j, "integer too large");
    }
    return jj_float(strtod(tmp, NULL));
}

static jj_value value(jparse *j);

static jj_value array(jparse *j) {
    j->i++;
    jj_value out = jj_list_new(j->c, JL_LIST);
    skip_ws(j);
    if (j->i < j->n && j->p[j->i] == ']') {
        j->i++;
        return out;
    }
    for (;;) {
        jj_list_push(j->c, out.l, value(j));
        skip_ws(j);
        if (j->i < j->n && j->p[j->i] == ',') {
            j->i++;
            continue;
        }
        if (j->i < j->n && j->p[j->i] == ']') {
            j->i++;
            return out;
        }
        bad(j, "expected ',' or ']'");
    }
}

static jj_value object(jparse *j) {
    j->i++;
    jj_value out = jj_dict_new(j->c);
    skip_ws(j);
    if (j->i < j->n && j->p[j->i] == '}') {
        j->i++;
        return out;
    }
    for (;;) {
        skip_ws(j);
        if (j->i >= j->n || j->p[j->i] != '"') bad(j, "expected a string key");
        jj_value k = string(j);
        skip_ws(j);
        if (j->i >= j->n || j->p[j->i] != ':') bad(j, "expected ':'");
        j->i++;
        jj_dict_set(j->c, out.d, k, value(j));
        skip_ws(j);
        if (j->i < j->n && j->p[j->i] == ',') {
            j->i++;
            continue;
        }
        if (j->i < j->n && j->p[j->i] == '}') {
            j->i++;
            return out;
        }
        bad(j, "expected ',' or '}'");
    }
}

static jj_value value(jparse *j) {
    skip_ws(j);
    if (j->i >= j->n) bad(j, "unexpected end");
    jj_enter(j->c);
    jj_value v;
    char ch = j->p[j->i];
    if (ch == '{')
        v = object(j);
    else if (ch == '[')
        v = array(j);
    else if (ch == '"')
        v = string(j);
    else if (ch == '-' || (ch >= '0' && ch <= '9'))
        v = number(j);
    else if (eat(j, "true"))
        v = jj_bool(true);
    else if (eat(j, "false"))
        v = jj_bool(false);
    else if (eat(j, "null"))
        v = JJ_NONE;
    else
        bad(j, "unexpected character");
    jj_leave(j->c);
    return v;
}

jj_value jj_from_json(jj_ctx *c, const char *text, size_t n, const char *what) {
    jparse j = {c, text, n, 0, what};
    jj_value v = value(&j);
    skip_ws(&j);
    if (j.i != n) bad(&j, "text after the value");
    return v;
}
