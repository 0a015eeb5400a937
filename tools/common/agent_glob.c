// agent_glob.c - the globs of the agent tools' include/exclude (agent_glob.h). The pattern comes
// from the network, so it is matched by walking a set of pattern positions over the path (an
// NFA simulation), never by backtracking: "**a**a**a**b" costs pattern x path steps, not an
// exponential number.
#include "agent_glob.h"

#include <stdio.h>
#include <string.h>

#define GLOB_MAX AGENT_GLOB_MAX
// Tokens of a pattern: at most its bytes, and the pattern matched may be the caller's with
// "**/" put in front (agent_glob_match), so a pattern of GLOB_MAX - 1 bytes is never cut.
#define GLOB_TOKENS (GLOB_MAX + 4)

// One step of a glob: a literal byte, '?', a class [...], '*' (not '/'), "**" (anything).
typedef struct glob_tok {
    char kind;             // 'c' literal, '?', '[', '*', 'A' ("**")
    char c;                // the literal
    const char *cls, *end; // a class's text [cls, end)
} glob_tok;

// Whether c is in the class text [s, end) ("!x" or "^x" negate; a-z ranges).
static bool in_class(char c, const char *s, const char *end) {
    bool neg = false;
    if (s < end && (*s == '!' || *s == '^')) neg = true, s++;
    bool hit = false;
    if (s < end && (*s == ']' || *s == '-')) hit |= *s == c, s++;
    while (s < end && !hit) {
        if (s + 2 < end && s[1] == '-') {
            hit = c >= s[0] && c <= s[2];
            s += 3;
        } else {
            hit = *s++ == c;
        }
    }
    return neg ? !hit : hit;
}

// Whether pattern matches the whole of s.
static bool glob_whole(const char *pattern, const char *s) {
    glob_tok t[GLOB_TOKENS];
    size_t n = 0;
    for (const char *p = pattern; *p && n < GLOB_TOKENS;) {
        glob_tok k = {0};
        if (p[0] == '*' && p[1] == '*') {
            k.kind = 'A', p += 2;
        } else if (*p == '*' || *p == '?') {
            k.kind = *p++;
        } else if (*p == '[') {
            const char *e = p + 1;
            if (*e == ']' || *e == '-') e++;
            while (*e && *e != ']') e++;
            if (*e == ']') {
                k.kind = '[', k.cls = p + 1, k.end = e, p = e + 1;
            } else {
                k.kind = 'c', k.c = *p++; // an unclosed '[' is itself
            }
        } else {
            k.kind = 'c', k.c = *p++;
        }
        t[n++] = k;
    }
    // on[i]: pattern position i is reachable after the bytes consumed so far.
    bool on[GLOB_TOKENS + 1] = {0}, next[GLOB_TOKENS + 1];
    on[0] = true;
    for (const char *c = s;; c++) {
        for (size_t i = 0; i < n; i++) { // a star may match nothing, "**/" no folder
            if (on[i] && (t[i].kind == '*' || t[i].kind == 'A')) on[i + 1] = true;
            if (on[i] && t[i].kind == 'A' && i + 1 < n && t[i + 1].kind == 'c' && t[i + 1].c == '/')
                on[i + 2] = true;
        }
        if (!*c) return on[n];
        memset(next, 0, sizeof next);
        bool any = false;
        for (size_t i = 0; i < n; i++) {
            if (!on[i]) continue;
            const glob_tok *k = &t[i];
            if ((k->kind == 'c' && k->c == *c) || (k->kind == '?' && *c != '/') ||
                (k->kind == '[' && in_class(*c, k->cls, k->end)))
                next[i + 1] = any = true;
            else if ((k->kind == '*' && *c != '/') || k->kind == 'A')
                next[i] = any = true;
        }
        if (!any) return false;
        memcpy(on, next, sizeof on);
    }
}

bool agent_glob_match(const char *pattern, const char *rel) {
    if (strlen(pattern) >= GLOB_MAX) return false;
    if (!strchr(pattern, '/')) { // the last component
        const char *slash = strrchr(rel, '/');
        return glob_whole(pattern, slash ? slash + 1 : rel);
    }
    if (!strncmp(pattern, "**", 2) || pattern[0] == '/') return glob_whole(pattern, rel);
    char anchored[GLOB_MAX + 4];
    snprintf(anchored, sizeof anchored, "**/%s", pattern);
    return glob_whole(anchored, rel);
}
