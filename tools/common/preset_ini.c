// preset_ini.c - see preset_ini.h. A line-at-a-time reader: the grammar has no construct that
// spans lines, so each line is classified on its own and the first one that fits no form fails
// the file (llama.cpp refuses such a file whole too, rather than guessing what was meant).
#include "preset_ini.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool blank(char c) {
    return c == ' ' || c == '\t';
}

static bool ident_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool ident_char(char c) {
    return ident_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

// The section named name (added when new; restarted when met again, as llama.cpp's reader does).
static preset_ini_section *section(preset_ini *d, const char *name, size_t n, bool restart) {
    for (int i = 0; i < d->n_sec; i++)
        if (strlen(d->sec[i].name) == n && !memcmp(d->sec[i].name, name, n)) {
            preset_ini_section *s = &d->sec[i];
            if (restart) {
                for (int k = 0; k < s->n_pair; k++) free(s->pair[k].key), free(s->pair[k].value);
                s->n_pair = 0;
            }
            return s;
        }
    preset_ini_section *grown = realloc(d->sec, (size_t)(d->n_sec + 1) * sizeof *grown);
    if (!grown) return NULL;
    d->sec = grown;
    preset_ini_section *s = &d->sec[d->n_sec];
    memset(s, 0, sizeof *s);
    if (!(s->name = strndup(name, n))) return NULL;
    d->n_sec++;
    return s;
}

static bool set(preset_ini_section *s, const char *k, size_t kn, const char *v, size_t vn) {
    char *value = strndup(v, vn);
    if (!value) return false;
    for (int i = 0; i < s->n_pair; i++)
        if (strlen(s->pair[i].key) == kn && !memcmp(s->pair[i].key, k, kn)) {
            free(s->pair[i].value);
            s->pair[i].value = value;
            return true;
        }
    preset_ini_pair *grown = realloc(s->pair, (size_t)(s->n_pair + 1) * sizeof *grown);
    if (!grown || !(grown[s->n_pair].key = strndup(k, kn))) {
        if (grown) s->pair = grown;
        free(value);
        return false;
    }
    s->pair = grown;
    s->pair[s->n_pair++].value = value;
    return true;
}

bool preset_ini_parse(const char *text, size_t len, preset_ini *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    const char *what = NULL;
    int line = 0;
    preset_ini_section *cur = NULL;
    if (memchr(text, '\0', len)) {
        snprintf(err, errlen, "the preset file holds a NUL byte");
        return false;
    }
    for (size_t p = 0; p < len && !what;) {
        line++;
        size_t end = p;
        while (end < len && text[end] != '\n' && text[end] != '\r') end++;
        const char *l = text + p;
        size_t n = end - p, i = 0;
        p = end < len && text[end] == '\r' && end + 1 < len && text[end + 1] == '\n' ? end + 2
                                                                                     : end + 1;
        while (i < n && blank(l[i])) i++;
        if (i == n || l[i] == ';' || l[i] == '#') continue; // blank or comment line
        if (l[i] == '[') {
            const char *close = memchr(l + i, ']', n - i);
            if (!close) {
                what = "a section header without ']'";
                break;
            }
            size_t a = i + 1, b = (size_t)(close - l);
            while (a < b && blank(l[a])) a++;
            while (b > a && blank(l[b - 1])) b--;
            size_t after = (size_t)(close - l) + 1;
            while (after < n && blank(l[after])) after++;
            if (a == b)
                what = "an empty section name";
            else if (after < n && l[after] != ';' && l[after] != '#')
                what = "text after a section header";
            else if (!(cur = section(out, l + a, b - a, true)))
                what = "out of memory";
            continue;
        }
        if (!ident_start(l[i])) {
            what = "a line that is neither a section header, a key = value pair nor a comment";
            break;
        }
        const size_t k0 = i;
        while (i < n && ident_char(l[i])) i++;
        const size_t k1 = i;
        while (i < n && blank(l[i])) i++;
        if (i == n || l[i] != '=') {
            what = "a key without '=' (or with a character a key cannot hold)";
            break;
        }
        i++;
        while (i < n && blank(l[i])) i++;
        size_t v1 = i;
        while (v1 < n && l[v1] != ';' && l[v1] != '#') v1++;
        while (v1 > i && blank(l[v1 - 1])) v1--;
        if (!cur && !(cur = section(out, "default", 7, false)))
            what = "out of memory";
        else if (!set(cur, l + k0, k1 - k0, l + i, v1 - i))
            what = "out of memory";
    }
    if (what) {
        snprintf(err, errlen, "line %d: %s", line, what);
        preset_ini_free(out);
        return false;
    }
    return true;
}

const char *preset_ini_get(const preset_ini_section *sec, const char *key) {
    for (int i = 0; sec && i < sec->n_pair; i++)
        if (!strcmp(sec->pair[i].key, key)) return sec->pair[i].value;
    return NULL;
}

void preset_ini_free(preset_ini *d) {
    for (int i = 0; i < d->n_sec; i++) {
        for (int k = 0; k < d->sec[i].n_pair; k++)
            free(d->sec[i].pair[k].key), free(d->sec[i].pair[k].value);
        free(d->sec[i].pair);
        free(d->sec[i].name);
    }
    free(d->sec);
    memset(d, 0, sizeof *d);
}
