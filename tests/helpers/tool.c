// tool.c - see tool.h.
#include "tool.h"

#include "helpers.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Runs a tool with printf-style arguments under a 60-second timeout; returns the exit status
// (128+signal for a signal, 124 for the timeout).
int run_tool(char **out, char **err, const char *tool, const char *fmt, ...) {
    char args[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char cmd[12288];
    snprintf(cmd, sizeof cmd, "timeout %d '%s' %s", MT_HANG(60), mt_bin(tool), args);
    int rc = mt_run(cmd, out, err);
    cr_assert_neq(rc, 124, "timed out: %s", cmd);
    return rc;
}

// The same with stdin from a string (through printf %s, so no shell quoting is needed in it).
int run_tool_stdin(char **out, char **err, const char *input, const char *tool, const char *args) {
    char *in_path = strdup(mt_path(mt_tmpdir(), "stdin.txt"));
    cr_assert(mt_write_file(in_path, input, strlen(input)));
    char cmd[12288];
    snprintf(cmd, sizeof cmd, "timeout %d '%s' %s < '%s'", MT_HANG(60), mt_bin(tool), args,
             in_path);
    free(in_path);
    int rc = mt_run(cmd, out, err);
    cr_assert_neq(rc, 124, "timed out: %s", cmd);
    return rc;
}

// A lasting copy of a path (16 per test): mt_data_path, mt_path and mt_bin share 8 rotating
// buffers, and run_tool calls mt_bin each time. Each test runs in its own process and keeps a few
// paths.
const char *keep(const char *path) {
    static char kept[16][4200];
    static int n;
    cr_assert_lt(n, 16, "keep(): more than 16 paths in one test");
    snprintf(kept[n], sizeof kept[0], "%s", path);
    return kept[n++];
}

int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

// A failing run: non-zero status that is not a signal, nothing on stdout, one line on stderr.
void expect_one_line_error(int rc, const char *out, const char *err, const char *needle,
                           const char *what) {
    cr_assert(rc != 0 && rc < 128, "%s: exit status %d", what, rc);
    cr_assert_str_eq(out, "", "%s: stdout: %s", what, out);
    cr_assert_eq(count_lines(err), 1, "%s: stderr is not one line:\n%s", what, err);
    cr_assert_eq(err[strlen(err) - 1], '\n', "%s", what);
    if (needle) cr_assert(strstr(err, needle), "%s: stderr lacks '%s': %s", what, needle, err);
}

// A number on a stderr line "LABEL = ... (... ms per token, X tokens per second)".
double tokens_per_second(const char *err, const char *label) {
    const char *l = strstr(err, label);
    cr_assert(l, "stderr lacks '%s':\n%s", label, err);
    const char *tps = strstr(l, " tokens per second)");
    const char *eol = strchr(l, '\n');
    cr_assert(tps && (!eol || tps < eol), "no tokens per second on the '%s' line:\n%s", label, err);
    const char *start = tps;
    while (start > l && start[-1] != ',') start--;
    return strtod(start, NULL);
}

// The token count on a stderr line "LABEL = ... ms / N tokens (...".
long token_count(const char *err, const char *label) {
    const char *l = strstr(err, label);
    cr_assert(l, "stderr lacks '%s':\n%s", label, err);
    const char *slash = strstr(l, " / ");
    cr_assert(slash, "%s", err);
    return strtol(slash + 3, NULL, 10);
}
