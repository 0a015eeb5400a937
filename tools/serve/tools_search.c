// tools_search.c - file_glob_search (entries under a directory whose relative path matches a
// glob) and grep_search (lines matching a PCRE2 pattern in the files under a path), with
// llama-server's answers: a "plain_text_response" for the model ending in "Total matches: N",
// plus the entries as JSON for the web UI's picker, at most 100 results.
//
// Globs are agent_glob.h's (linear time); PCRE2 runs with a match limit, so that a pattern from
// the network cannot hold a thread for long.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "agent_glob.h"
#include "reply.h"
#include "tools_builtin.h"

#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SEARCH_MAX_RESULTS 100
#define GLOB_MAX           512                 // bytes of a glob pattern
#define GREP_MAX_FILE      (16u * 1024 * 1024) // bytes of a file grep_search reads
#define GREP_TIME          30.0                // seconds a search may take

// A growing text.
typedef struct text {
    char *s;
    size_t n, cap;
} text;

static void put(text *t, const char *s, size_t n) {
    if (t->n + n + 1 > t->cap) {
        size_t cap = (t->n + n + 1) * 2;
        char *b = realloc(t->s, cap);
        if (!b) return; // out of memory: the text stays as it was
        t->s = b, t->cap = cap;
    }
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = '\0';
}

static void putf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void putf(text *t, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    put(t, buf, n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static bool wanted(const char *rel, const char *include, const char *exclude) {
    return agent_glob_match(include, rel) && !(*exclude && agent_glob_match(exclude, rel));
}

serve_tool_status tool_file_glob_search(json_object *params, const tool_io *io,
                                        serve_tool_stream *st, json_object **result, char *err,
                                        size_t errlen) {
    (void)st;
    const char *path, *include, *exclude, *type;
    int max_depth, limit;
    if (!tool_param_str(params, "path", true, NULL, &path, err, errlen) ||
        !tool_param_str(params, "include", false, "**", &include, err, errlen) ||
        !tool_param_str(params, "exclude", false, "", &exclude, err, errlen) ||
        !tool_param_str(params, "type", false, "file", &type, err, errlen) ||
        !tool_param_int(params, "max_depth", 0, &max_depth, err, errlen) ||
        !tool_param_int(params, "limit", SEARCH_MAX_RESULTS, &limit, err, errlen))
        return SERVE_TOOL_BAD;
    if (limit < 1) {
        *result = tool_error("invalid limit: %d (expected 1 or more)", limit);
        return SERVE_TOOL_OK;
    }
    limit = limit > SEARCH_MAX_RESULTS ? SEARCH_MAX_RESULTS : limit;
    max_depth = max_depth < 0 ? 0 : max_depth;
    const bool files = !strcmp(type, "file") || !strcmp(type, "all");
    const bool dirs = !strcmp(type, "dir") || !strcmp(type, "all");
    if (!files && !dirs) {
        *result = tool_error("invalid type: %.100s (expected \"file\", \"dir\" or \"all\")", type);
        return SERVE_TOOL_OK;
    }
    char *base = tool_io_resolve(io, path);
    tool_list l;
    if (!base || !tool_io_list(io, base, max_depth, files, dirs, &l)) {
        free(base);
        *result = tool_error("path does not exist or is not a directory: %s", path);
        return SERVE_TOOL_OK;
    }
    text out = {0};
    put(&out, "", 0);
    json_object *entries = json_object_new_array();
    size_t total = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (!wanted(l.e[i].rel, include, exclude)) continue;
        if (total++ >= (size_t)limit) continue;
        put(&out, l.e[i].rel, strlen(l.e[i].rel));
        put(&out, l.e[i].dir ? "/\n" : "\n", l.e[i].dir ? 2 : 1);
        json_object *e = json_object_new_object();
        json_object_object_add(e, "path", json_object_new_string(l.e[i].rel));
        json_object_object_add(e, "type", json_object_new_string(l.e[i].dir ? "dir" : "file"));
        json_object_array_add(entries, e);
    }
    putf(&out, "\n---\nTotal matches: %zu\n", total);
    if (total > (size_t)limit)
        putf(&out,
             "[%d results limit reached (%zu total matches). Refine the glob pattern to narrow "
             "the search.]\n",
             limit, total);
    if (l.truncated) put(&out, "[results truncated: time budget or unreadable directory]\n", 57);
    *result = json_object_new_object();
    json_object_object_add(*result, "plain_text_response", reply_utf8_string(out.s, out.n));
    json_object_object_add(*result, "entries", entries);
    json_object_object_add(*result, "base", json_object_new_string(base));
    free(out.s);
    free(base);
    tool_list_free(&l);
    return SERVE_TOOL_OK;
}

// The pattern as PCRE2 source: literal text gets \Q...\E (a "\E" inside it closed and reopened).
static char *grep_source(const char *pattern, bool literal) {
    if (!literal) return strdup(pattern);
    text t = {0};
    put(&t, "\\Q", 2);
    for (const char *p = pattern; *p; p++) {
        if (p[0] == '\\' && p[1] == 'E') {
            put(&t, "\\E\\\\E\\Q", 7);
            p++;
        } else {
            put(&t, p, 1);
        }
    }
    put(&t, "\\E", 2);
    return t.s;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct grep_file {
    char *abs;           // where to read it
    const char *display; // how to show it
} grep_file;

serve_tool_status tool_grep_search(json_object *params, const tool_io *io, serve_tool_stream *st,
                                   json_object **result, char *err, size_t errlen) {
    (void)st;
    const char *path, *pattern, *include, *exclude;
    bool numbers, literal, icase;
    int ctx;
    if (!tool_param_str(params, "path", true, NULL, &path, err, errlen) ||
        !tool_param_str(params, "pattern", true, NULL, &pattern, err, errlen) ||
        !tool_param_str(params, "include", false, "**", &include, err, errlen) ||
        !tool_param_str(params, "exclude", false, "", &exclude, err, errlen) ||
        !tool_param_bool(params, "return_line_numbers", false, &numbers, err, errlen) ||
        !tool_param_bool(params, "literal", false, &literal, err, errlen) ||
        !tool_param_bool(params, "ignore_case", false, &icase, err, errlen) ||
        !tool_param_int(params, "context_lines", 0, &ctx, err, errlen))
        return SERVE_TOOL_BAD;
    ctx = ctx < 0 ? 0 : ctx > 1000 ? 1000 : ctx;
    char *src = grep_source(pattern, literal);
    const bool have_src = src != NULL;
    int code = 0;
    PCRE2_SIZE off = 0;
    pcre2_code *re =
        src ? pcre2_compile((PCRE2_SPTR)src, PCRE2_ZERO_TERMINATED,
                            PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | (icase ? PCRE2_CASELESS : 0),
                            &code, &off, NULL)
            : NULL;
    free(src);
    if (!re) {
        PCRE2_UCHAR msg[256] = "out of memory";
        if (have_src) pcre2_get_error_message(code, msg, sizeof msg);
        *result = tool_error("invalid regex: %s (at offset %zu)", (const char *)msg, (size_t)off);
        return SERVE_TOOL_OK;
    }
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    pcre2_set_match_limit(mc, 1000000); // a catastrophic pattern fails its line, not the server
    pcre2_set_depth_limit(mc, 10000);
    // The files: the path itself, or the wanted files under it.
    grep_file *files = NULL;
    size_t n_files = 0;
    tool_list l = {0};
    char *abs = tool_io_resolve(io, path);
    const tool_kind kind = abs ? tool_io_kind(io, abs) : TOOL_NONE;
    if (kind == TOOL_FILE && (files = malloc(sizeof *files))) {
        files[0] = (grep_file){strdup(abs), path};
        n_files = 1;
    } else if (kind == TOOL_DIR && tool_io_list(io, abs, 0, true, false, &l)) {
        files = calloc(l.n ? l.n : 1, sizeof *files);
        for (size_t i = 0; files && i < l.n; i++) {
            if (!wanted(l.e[i].rel, include, exclude)) continue;
            char *f = malloc(strlen(abs) + strlen(l.e[i].rel) + 2);
            if (f) sprintf(f, "%s/%s", abs, l.e[i].rel);
            files[n_files++] = (grep_file){f, l.e[i].rel};
        }
    }
    text out = {0};
    put(&out, "", 0);
    size_t total = 0;
    bool limit = false;
    const bool show_num = numbers || ctx > 0;
    const double deadline = now_s() + GREP_TIME;
    bool late = false;
    for (size_t f = 0; f < n_files && !limit && !(late = now_s() > deadline); f++) {
        char *data;
        size_t len;
        bool too_big;
        if (!files[f].abs || !tool_io_read(io, files[f].abs, GREP_MAX_FILE, &data, &len, &too_big))
            continue;
        // Line starts, so that context lines before a match can be shown.
        size_t n_lines = 0, cap = 0, *starts = NULL;
        for (size_t p = 0; p < len;) {
            if (n_lines == cap) {
                cap = cap ? cap * 2 : 256;
                size_t *s = realloc(starts, cap * sizeof *s);
                if (!s) break;
                starts = s;
            }
            starts[n_lines++] = p;
            const char *nl = memchr(data + p, '\n', len - p);
            p = nl ? (size_t)(nl - data) + 1 : len;
        }
        for (size_t i = 0; i < n_lines; i++) {
            if (total >= SEARCH_MAX_RESULTS) {
                limit = true;
                break;
            }
            size_t ll = (i + 1 < n_lines ? starts[i + 1] : len) - starts[i];
            if (ll && data[starts[i] + ll - 1] == '\n') ll--;
            if (pcre2_match(re, (PCRE2_SPTR)(data + starts[i]), ll, 0, 0, md, mc) < 0) continue;
            const size_t from = ctx && i > (size_t)ctx ? i - (size_t)ctx : ctx ? 0 : i;
            const size_t to = ctx && i + (size_t)ctx < n_lines ? i + (size_t)ctx
                              : ctx                            ? n_lines - 1
                                                               : i;
            for (size_t j = from; j <= to; j++) {
                size_t jl = (j + 1 < n_lines ? starts[j + 1] : len) - starts[j];
                if (jl && data[starts[j] + jl - 1] == '\n') jl--;
                const char mark = j == i ? ':' : '-';
                put(&out, files[f].display, strlen(files[f].display));
                put(&out, &mark, 1);
                if (show_num) putf(&out, "%zu%c", j + 1, mark);
                put(&out, data + starts[j], jl);
                put(&out, "\n", 1);
            }
            if (ctx > 0) put(&out, "--\n", 3);
            total++;
        }
        free(starts);
        free(data);
    }
    putf(&out, "\n---\nTotal matches: %zu\n", total);
    if (limit)
        putf(&out, "[%d matches limit reached. Narrow the path/pattern/include to see more.]\n",
             SEARCH_MAX_RESULTS);
    if (late) put(&out, "[search stopped: time budget]\n", 30);
    if (l.truncated) put(&out, "[results truncated: time budget or unreadable directory]\n", 57);
    if (kind == TOOL_NONE) {
        *result = tool_error("path does not exist: %s", path);
    } else {
        *result = json_object_new_object();
        json_object_object_add(*result, "plain_text_response", reply_utf8_string(out.s, out.n));
    }
    free(out.s);
    for (size_t f = 0; f < n_files; f++) free(files[f].abs);
    free(files);
    tool_list_free(&l);
    free(abs);
    pcre2_match_context_free(mc);
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    return SERVE_TOOL_OK;
}
