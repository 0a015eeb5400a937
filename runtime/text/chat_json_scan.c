// chat_json_scan.c - JSON in a model's output, which may stop anywhere while it streams: whether
// a text is a whole value, the beginning of one, or neither (strict RFC 8259 JSON, nested up to
// 512 levels), the members of an object, and a string's decoded text.
#include "runtime/text/chat_parse.h"

#include <string.h>

#define MAX_DEPTH 512

static bool is_ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

static bool is_hex(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// A string at s[i] == '"'.
static cp_res string(const char *s, size_t n, size_t i, size_t *end) {
    i++;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"') {
            *end = i + 1;
            return CP_OK;
        }
        if (c < 0x20) return CP_BAD;
        if (c != '\\') {
            i++;
            continue;
        }
        if (i + 1 >= n) return CP_MORE;
        char e = s[i + 1];
        if (e == 'u') {
            for (size_t k = 0; k < 4; k++) {
                if (i + 2 + k >= n) return CP_MORE;
                if (!is_hex(s[i + 2 + k])) return CP_BAD;
            }
            i += 6;
        } else if (strchr("\"\\/bfnrt", e) && e) {
            i += 2;
        } else {
            return CP_BAD;
        }
    }
    return CP_MORE;
}

// A number at s[i]. At the end of the text a number that could take more digits is unfinished,
// unless end_ok (the caller knows the text ends there).
static cp_res number(const char *s, size_t n, size_t i, size_t *end, bool end_ok) {
    if (s[i] == '-') i++;
    if (i >= n) return CP_MORE;
    if (s[i] == '0')
        i++;
    else if (is_digit(s[i]))
        while (i < n && is_digit(s[i])) i++;
    else
        return CP_BAD;
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n) return CP_MORE;
        if (!is_digit(s[i])) return CP_BAD;
        while (i < n && is_digit(s[i])) i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= n) return CP_MORE;
        if (!is_digit(s[i])) return CP_BAD;
        while (i < n && is_digit(s[i])) i++;
    }
    if (i >= n && !end_ok) return CP_MORE; // more digits may follow
    *end = i;
    return CP_OK;
}

static cp_res literal(const char *s, size_t n, size_t i, size_t *end) {
    static const char *const lits[] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        size_t len = strlen(lits[k]), have = n - i < len ? n - i : len;
        if (memcmp(s + i, lits[k], have) != 0) continue;
        if (have < len) return CP_MORE;
        *end = i + len;
        return CP_OK;
    }
    return CP_BAD;
}

// Containers are walked with an explicit stack of what each open one expects next.
enum expect { E_VALUE_OR_CLOSE, E_VALUE, E_KEY_OR_CLOSE, E_KEY, E_COLON, E_COMMA_OR_CLOSE };

cp_res cp_json_value(const char *s, size_t n, size_t i, size_t *end) {
    char stack[MAX_DEPTH]; // '[' or '{' per open container
    enum expect want[MAX_DEPTH];
    int depth = 0;
    enum expect top = E_VALUE; // what the outermost level expects
    for (;;) {
        while (i < n && is_ws(s[i])) i++;
        if (i >= n) return CP_MORE;
        char c = s[i];
        enum expect *w = depth ? &want[depth - 1] : &top;
        if (*w == E_COLON) {
            if (c != ':') return CP_BAD;
            i++;
            *w = E_VALUE;
            continue;
        }
        if (*w == E_COMMA_OR_CLOSE) {
            char close = stack[depth - 1] == '[' ? ']' : '}';
            if (c == ',') {
                *w = stack[depth - 1] == '[' ? E_VALUE : E_KEY;
                i++;
                continue;
            }
            if (c != close) return CP_BAD;
            i++;
            depth--;
            if (depth == 0) {
                *end = i;
                return CP_OK;
            }
            continue;
        }
        if ((*w == E_VALUE_OR_CLOSE && c == ']') || (*w == E_KEY_OR_CLOSE && c == '}')) {
            i++;
            depth--;
            if (depth == 0) {
                *end = i;
                return CP_OK;
            }
            continue;
        }
        if (*w == E_KEY_OR_CLOSE || *w == E_KEY) {
            if (c != '"') return CP_BAD;
            size_t e;
            cp_res r = string(s, n, i, &e);
            if (r != CP_OK) return r;
            i = e;
            *w = E_COLON;
            continue;
        }
        // A value.
        if (c == '[' || c == '{') {
            if (depth == MAX_DEPTH) return CP_BAD;
            *w = E_COMMA_OR_CLOSE; // for the enclosing level, once this one closes
            stack[depth] = c;
            want[depth++] = c == '[' ? E_VALUE_OR_CLOSE : E_KEY_OR_CLOSE;
            i++;
            continue;
        }
        size_t e;
        cp_res r = c == '"'                             ? string(s, n, i, &e)
                   : (c == '-' || is_digit(c))          ? number(s, n, i, &e, false)
                   : (c == 't' || c == 'f' || c == 'n') ? literal(s, n, i, &e)
                                                        : CP_BAD;
        if (r != CP_OK) return r;
        i = e;
        if (depth == 0) {
            *end = i;
            return CP_OK;
        }
        *w = E_COMMA_OR_CLOSE;
    }
}

cp_res cp_json_object(const char *s, size_t n, size_t i, cp_jobject *o) {
    o->n_m = 0;
    if (i >= n) return CP_MORE;
    if (s[i] != '{') return CP_BAD;
    i++;
    bool first = true;
    for (;;) {
        while (i < n && is_ws(s[i])) i++;
        if (i >= n) return CP_MORE;
        if (s[i] == '}') {
            o->end = i + 1;
            return CP_OK;
        }
        if (!first) {
            if (s[i] != ',') return CP_BAD;
            i++;
            while (i < n && is_ws(s[i])) i++;
            if (i >= n) return CP_MORE;
        }
        if (s[i] != '"') return CP_BAD;
        size_t ke;
        cp_res r = string(s, n, i, &ke);
        if (r != CP_OK) return r;
        size_t k_at = i + 1, k_len = ke - i - 2;
        i = ke;
        while (i < n && is_ws(s[i])) i++;
        if (i >= n) return CP_MORE;
        if (s[i] != ':') return CP_BAD;
        i++;
        while (i < n && is_ws(s[i])) i++;
        if (i >= n) return CP_MORE;
        cp_jmember *m = o->n_m < CP_MAX_MEMBERS ? &o->m[o->n_m++] : NULL;
        size_t ve;
        r = cp_json_value(s, n, i, &ve);
        if (m) *m = (cp_jmember){k_at, k_len, i, r == CP_OK ? ve : n, r == CP_OK};
        if (r != CP_OK) return r;
        i = ve;
        first = false;
    }
}

const cp_jmember *cp_jmember_get(const char *s, const cp_jobject *o, const char *key) {
    size_t k = strlen(key);
    for (size_t i = 0; i < o->n_m; i++)
        if (o->m[i].k_len == k && memcmp(s + o->m[i].k_at, key, k) == 0) return &o->m[i];
    return NULL;
}

static unsigned hex4(const char *p) {
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = p[k];
        v = v * 16 + (unsigned)(is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return v;
}

void cp_json_unquote(cp_out *o, cp_buf *b, const char *s, size_t i, size_t end) {
    i++;
    end--; // inside the quotes
    while (i < end) {
        size_t j = i;
        while (j < end && s[j] != '\\') j++;
        cp_put(o, b, s + i, j - i);
        if (j >= end) break;
        char e = s[j + 1];
        if (e != 'u') {
            char c = e == 'b'   ? '\b'
                     : e == 'f' ? '\f'
                     : e == 'n' ? '\n'
                     : e == 'r' ? '\r'
                     : e == 't' ? '\t'
                                : e;
            cp_put(o, b, &c, 1);
            i = j + 2;
            continue;
        }
        unsigned cp = hex4(s + j + 2);
        i = j + 6;
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 <= end && s[i] == '\\' && s[i + 1] == 'u') {
            unsigned lo = hex4(s + i + 2);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
            }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
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
        cp_put(o, b, u, k);
    }
}

bool cp_json_whole(const char *s, size_t a, size_t b) {
    while (a < b && is_ws(s[a])) a++;
    while (b > a && is_ws(s[b - 1])) b--;
    if (a == b) return false;
    size_t e;
    cp_res r =
        s[a] == '-' || is_digit(s[a]) ? number(s, b, a, &e, true) : cp_json_value(s, b, a, &e);
    return r == CP_OK && e == b;
}
