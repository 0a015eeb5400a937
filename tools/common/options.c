// options.c - see options.h. One pass over argv; every value goes through store(), which is
// also how the table's defaults are applied, so a default is checked like a typed value.
#include "options.h"

#include "cli.h"
#include "mint.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HELP_COLUMN 26 // where the help text starts in --help
#define HELP_WIDTH  96 // where continuation lines of a list of names wrap

// The commit --version names: CMake writes the one the programs were built from into
// mint_git_commit.h at every build (tools/cmake/git_commit.cmake).
#ifdef MINT_HAVE_GIT_COMMIT_H
#include "mint_git_commit.h"
#endif
#ifndef MINT_GIT_COMMIT
#define MINT_GIT_COMMIT "unknown"
#endif

int opt_name_index(const char *const *names, const char *name) {
    for (int i = 0; names && names[i]; i++)
        if (strcasecmp(names[i], name) == 0) return i;
    return -1;
}

// "a, b or c" into buf: how a message lists the accepted names.
static void join_names(const char *const *names, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; names[i] && len < cap; i++) {
        const char *sep = i == 0 ? "" : names[i + 1] ? ", " : " or ";
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", sep, names[i]);
    }
}

// Whether spelling a is one of the space-separated spellings of e. An '_' in a flag matches '-'
// ("--backend_sampling" is "--backend-sampling"), as llama.cpp's parser has it.
static bool spelled(const opt *e, const char *a) {
    const size_t n = strlen(a);
    for (const char *s = e->flags; s && *s;) {
        const char *end = strchr(s, ' ');
        size_t k = end ? (size_t)(end - s) : strlen(s);
        bool same = k == n;
        for (size_t i = 0; same && i < n; i++)
            same = s[i] == a[i] || (s[i] == '-' && a[i] == '_' && i > 0);
        if (same) return true;
        s = end ? end + 1 : s + k;
    }
    return false;
}

static void store_int(void *field, size_t size, long long v) {
    if (size == sizeof(int64_t)) {
        int64_t x = v;
        memcpy(field, &x, size);
    } else if (size == sizeof(int32_t)) {
        int32_t x = (int32_t)v;
        memcpy(field, &x, size);
    } else if (size == sizeof(bool)) {
        bool x = v != 0;
        memcpy(field, &x, size);
    }
}

static bool bad_name(const opt *e, const char *who, const char *v, const char *how, char *err,
                     size_t errlen) {
    char list[512];
    join_names(e->names, list, sizeof list);
    if (!e->flags)
        snprintf(err, errlen, "%s '%s' is unknown; valid: %s", e->noun ? e->noun : e->arg, v, list);
    else
        snprintf(err, errlen, "%s expects %s%s, got '%s'", who, how, list, v);
    return false;
}

// One comma-separated element of an OPT_INTS or OPT_NAMES value, into *out (a number, or a
// name's index).
static bool list_item(const opt *e, const char *who, const char *item, long long *out, char *err,
                      size_t errlen) {
    if (!e->names) return cli_parse_int(who, item, e->min, e->max, out, err, errlen);
    *out = opt_name_index(e->names, item);
    return *out >= 0 || bad_name(e, who, item, "a comma-separated list of ", err, errlen);
}

// A comma-separated list (OPT_INTS, OPT_NAMES) into its field; the list replaces an earlier one.
static bool store_list(const opt *e, const char *who, const char *v, void *field, char *err,
                       size_t errlen) {
    const int cap = e->kind == OPT_INTS                   ? OPT_INTS_MAX
                    : e->max > 0 && e->max < OPT_STRS_MAX ? (int)e->max
                                                          : OPT_STRS_MAX;
    opt_ints *ints = field;
    opt_strs *strs = field;
    int n = 0;
    for (const char *s = v;; n++) {
        const char *comma = strchr(s, ',');
        size_t k = comma ? (size_t)(comma - s) : strlen(s);
        char item[64];
        if (n == cap) {
            snprintf(err, errlen, "%s: at most %d values", who, cap);
            return false;
        }
        // An item longer than any name or number is reported by its first 60 bytes.
        if (k < sizeof item)
            snprintf(item, sizeof item, "%.*s", (int)k, s);
        else
            snprintf(item, sizeof item, "%.60s...", s);
        long long x;
        if (!list_item(e, who, item, &x, err, errlen)) return false;
        if (e->kind == OPT_INTS)
            ints->v[n] = (int)x;
        else
            strs->v[n] = e->names[x];
        if (!comma) break;
        s = comma + 1;
    }
    if (e->kind == OPT_INTS)
        ints->n = n + 1;
    else
        strs->n = n + 1;
    return true;
}

// Checks an OPT_NUMS value: numbers in [fmin, fmax] separated by ',' or '/' (llama.cpp's
// --tensor-split "3,1").
static bool check_nums(const opt *e, const char *who, const char *v, char *err, size_t errlen) {
    const char *s = v;
    do {
        const size_t k = strcspn(s, ",/");
        char item[64];
        double x;
        snprintf(item, sizeof item, "%.*s", (int)(k < sizeof item - 1 ? k : sizeof item - 1), s);
        if (k >= sizeof item - 1 ||
            !cli_parse_float(who, item, e->fmin, e->fmax, &x, err, errlen)) {
            snprintf(err, errlen, "%s expects numbers in %g..%g separated by ',' or '/', got '%s'",
                     who, e->fmin, e->fmax, v);
            return false;
        }
        s += k;
    } while (*s++);
    return true;
}

// Puts value v (given as `who`: the flag as typed, or a positional's name) into e's field; a row
// without one (a compatibility flag's .note) has v checked and put in scratch.
static bool store(const opt *e, const char *who, const char *v, void *options, char *err,
                  size_t errlen) {
    union {
        opt_ints ints;
        opt_strs strs;
        long long ll;
        double d;
    } scratch = {0};
    void *field = e->size ? (char *)options + e->offset : (void *)&scratch;
    const size_t size = e->size ? e->size : sizeof scratch.ll;
    long long iv;
    double fv;
    int k;
    switch (e->kind) {
    case OPT_HELP:
    case OPT_VERSION:
    case OPT_SECTION:
        return true;
    case OPT_FLAG:
        store_int(field, size, 1);
        return true;
    case OPT_INT:
        if (!cli_parse_int(who, v, e->min, e->max, &iv, err, errlen)) return false;
        store_int(field, size, iv);
        return true;
    case OPT_FLOAT:
        if (!cli_parse_float(who, v, e->fmin, e->fmax, &fv, err, errlen)) return false;
        if (size == sizeof(float)) {
            float f = (float)fv;
            memcpy(field, &f, sizeof f);
        } else {
            memcpy(field, &fv, sizeof fv);
        }
        return true;
    case OPT_NUMS:
        if (!check_nums(e, who, v, err, errlen)) return false;
        memcpy(field, &v, sizeof v);
        return true;
    case OPT_STRING:
        memcpy(field, &v, sizeof v);
        return true;
    case OPT_STRS: {
        opt_strs *s = field;
        int most = e->max > 0 && e->max < OPT_STRS_MAX ? (int)e->max : OPT_STRS_MAX;
        if (s->n == most) {
            snprintf(err, errlen, "%s: at most %d values", who, most);
            return false;
        }
        s->v[s->n++] = v;
        return true;
    }
    case OPT_ENUM:
    case OPT_CHOICE:
        k = opt_name_index(e->names, v);
        if (k < 0) return bad_name(e, who, v, "", err, errlen);
        if (e->kind == OPT_ENUM)
            store_int(field, size, k);
        else
            memcpy(field, &e->names[k], sizeof(char *));
        return true;
    case OPT_INTS:
    case OPT_NAMES:
        return store_list(e, who, v, field, err, errlen);
    }
    return true;
}

// The first spelling of e (for messages about a default).
static void first_flag(const opt *e, char *buf, size_t cap) {
    const char *s = e->flags ? e->flags : e->arg;
    size_t k = strcspn(s, " ");
    snprintf(buf, cap, "%.*s", (int)k, s);
}

static bool takes_value(const opt *e) {
    return e->kind != OPT_HELP && e->kind != OPT_VERSION && e->kind != OPT_SECTION &&
           e->kind != OPT_FLAG;
}

// Whether argv[i], a flag whose value is optional, is followed by one.
static bool has_value(int argc, char **argv, int i) {
    return i + 1 < argc && argv[i + 1][0] != '-';
}

// opt_parse, also noting in used[k] (when not NULL) the argv index of the last use of row k.
static opt_result parse(const opt_program *p, int argc, char **argv, void *options, char *err,
                        size_t errlen, int *used) {
    // Defaults: zero, then each entry's .def as if it were given.
    const opt *last = p->opts + p->n_opts;
    for (const opt *e = p->opts; e < last; e++)
        if (e->size) memset((char *)options + e->offset, 0, e->size);
    for (const opt *e = p->opts; e < last; e++) {
        if (!e->def) continue;
        char who[64];
        first_flag(e, who, sizeof who);
        if (!store(e, who, e->def, options, err, errlen)) return OPT_BAD; // a table bug
    }
    const opt *next_pos = p->opts; // positionals are filled in table order
    const char *prev_pos = NULL;   // the last positional argument (for "more than one")
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] != '\0') {
            const opt *e = p->opts;
            while (e < last && !(e->flags && spelled(e, a))) e++;
            if (e == last) {
                snprintf(err, errlen, "unknown option '%s' (see --help)", a);
                return OPT_BAD;
            }
            if (e->kind == OPT_HELP) return OPT_HELP_ASKED;
            if (e->kind == OPT_VERSION) return OPT_VERSION_ASKED;
            if (used) used[e - p->opts] = i;
            if (!takes_value(e)) {
                store(e, a, NULL, options, err, errlen);
                continue;
            }
            if (e->bare && !has_value(argc, argv, i)) {
                if (!store(e, a, e->bare, options, err, errlen)) return OPT_BAD; // a table bug
                continue;
            }
            if (i + 1 >= argc) {
                snprintf(err, errlen, "%s needs a value (see --help)", a);
                return OPT_BAD;
            }
            if (!store(e, a, argv[++i], options, err, errlen)) return OPT_BAD;
            continue;
        }
        while (next_pos < last && (next_pos->flags || next_pos->kind == OPT_SECTION)) next_pos++;
        if (next_pos == last) {
            int n_pos = 0;
            const opt *only = NULL;
            for (const opt *e = p->opts; e < last; e++)
                if (!e->flags && e->kind != OPT_SECTION) n_pos++, only = e;
            if (n_pos == 0)
                snprintf(err, errlen, "unexpected argument '%s' (see --help)", a);
            else if (n_pos == 1)
                snprintf(err, errlen, "more than one %s given ('%s' and '%s')",
                         only->noun ? only->noun : only->arg, prev_pos, a);
            else
                snprintf(err, errlen, "too many arguments ('%s'); see --help", a);
            return OPT_BAD;
        }
        if (!store(next_pos, next_pos->arg, a, options, err, errlen)) return OPT_BAD;
        prev_pos = a;
        next_pos++;
    }
    if (p->check && !p->check(options, err, errlen)) return OPT_BAD;
    return OPT_OK;
}

opt_result opt_parse(const opt_program *p, int argc, char **argv, void *options, char *err,
                     size_t errlen) {
    return parse(p, argc, argv, options, err, errlen, NULL);
}

// ---------------------------------------------------------------------------------------------
// --help

// Writes s (continuation lines after '\n' indented to the help column).
static void help_text(FILE *out, const char *s) {
    for (; *s; s++) {
        fputc(*s, out);
        if (*s == '\n') fprintf(out, "%*s", HELP_COLUMN, "");
    }
}

// The names of e, wrapped under the help column: "auto | naive | rowwise | flash".
static void help_names(FILE *out, const opt *e) {
    int col = HELP_COLUMN;
    for (int i = 0; e->names[i]; i++) {
        const int w = (int)strlen(e->names[i]) + (i ? 3 : 0);
        if (i && col + w > HELP_WIDTH) {
            fprintf(out, " |\n%*s", HELP_COLUMN, "");
            col = HELP_COLUMN;
        } else if (i) {
            fputs(" | ", out);
        }
        col += fprintf(out, "%s", e->names[i]) + (i ? 3 : 0);
    }
}

// Whether an earlier entry of p lists the same names (then --help lists them once).
static bool names_shown(const opt_program *p, const opt *e) {
    for (const opt *x = p->opts; x < e; x++)
        if (x->names == e->names && x->arg) return true;
    return false;
}

void opt_help(const opt_program *p, FILE *out) {
    fprintf(out, "usage: %s\n", p->usage);
    if (p->about) fprintf(out, "\n%s\n", p->about);
    fprintf(out, "\n");
    for (const opt *e = p->opts; e < p->opts + p->n_opts; e++) {
        if (e->kind == OPT_SECTION) {
            fprintf(out, "%s\n", e->help);
            continue;
        }
        char lead[160];
        size_t len = 0;
        if (!e->flags) {
            len = (size_t)snprintf(lead, sizeof lead, "  %s", e->arg);
        } else {
            // "-m, --model FILE": a short spelling first; long-only options line up after it.
            len = (size_t)snprintf(lead, sizeof lead, "  %s", e->flags[1] == '-' ? "    " : "");
            for (const char *s = e->flags; *s && len < sizeof lead; s++)
                len += (size_t)snprintf(lead + len, sizeof lead - len, "%s",
                                        *s == ' ' ? ", " : (char[]){*s, 0});
            if (takes_value(e) && len < sizeof lead && e->bare) {
                for (int i = 0; e->names[i] && len < sizeof lead; i++)
                    len += (size_t)snprintf(lead + len, sizeof lead - len, "%s%s", i ? "|" : " [",
                                            e->names[i]);
                if (len < sizeof lead) len += (size_t)snprintf(lead + len, sizeof lead - len, "]");
            } else if (takes_value(e) && len < sizeof lead) {
                if (e->arg)
                    len += (size_t)snprintf(lead + len, sizeof lead - len, " %s", e->arg);
                else
                    for (int i = 0; e->names && e->names[i] && len < sizeof lead; i++)
                        len += (size_t)snprintf(lead + len, sizeof lead - len, "%s%s",
                                                i ? "|" : " ", e->names[i]);
            }
        }
        if (len >= sizeof lead) len = sizeof lead - 1;
        fputs(lead, out);
        if (len + 2 > HELP_COLUMN)
            fprintf(out, "\n%*s", HELP_COLUMN, "");
        else
            fprintf(out, "%*s", (int)(HELP_COLUMN - len), "");
        help_text(out, e->help ? e->help : e->note ? e->note : "");
        if (e->def && takes_value(e)) fprintf(out, " (default %s)", e->def);
        if (e->names && e->names[0] && e->arg && !names_shown(p, e)) {
            fprintf(out, ":\n%*s", HELP_COLUMN, "");
            help_names(out, e);
        }
        fputc('\n', out);
    }
    if (p->epilogue) fprintf(out, "\n%s", p->epilogue);
}

void opt_version(const opt_program *p, FILE *out) {
    fprintf(out, "%s %s (commit %s, kernels %s)\n", p->name, mint_version(), MINT_GIT_COMMIT,
            mint_isa_name());
}

int opt_main(const opt_program *p, int argc, char **argv, void *options) {
    char err[700];
    int *used = calloc(p->n_opts, sizeof *used);
    if (!used) {
        fprintf(stderr, "%s: out of memory\n", p->name);
        return 1;
    }
    const opt_result r = parse(p, argc, argv, options, err, sizeof err, used);
    int rc = 2;
    if (r == OPT_OK) {
        // One line per compatibility flag given (its last use), in table order.
        for (size_t k = 0; k < p->n_opts; k++) {
            const opt *e = &p->opts[k];
            if (!e->note || !used[k]) continue;
            const int i = used[k];
            const bool valued = takes_value(e) && (e->bare ? has_value(argc, argv, i) : true);
            fprintf(stderr, "%s: %s%s%s %s\n", p->name, argv[i], valued ? " " : "",
                    valued ? argv[i + 1] : "", e->note);
        }
        rc = -1;
    } else if (r == OPT_HELP_ASKED || r == OPT_VERSION_ASKED) {
        if (r == OPT_HELP_ASKED)
            opt_help(p, stdout);
        else
            opt_version(p, stdout);
        rc = fflush(stdout) == 0 ? 0 : 1;
    } else {
        fprintf(stderr, "%s: %s\n", p->name, err);
    }
    free(used);
    return rc;
}
