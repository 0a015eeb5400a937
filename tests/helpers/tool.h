// tool.h - running mint's programs from a test: a command under a timeout with its output
// captured, one-line error checks, and the figures of mint-run's timing summary.
#ifndef MINT_TEST_TOOL_H
#define MINT_TEST_TOOL_H

#include <stdbool.h>

// Runs a tool (from MINT_BIN_DIR) with printf-style arguments under a 60-second timeout; returns
// the exit status (128+signal for a signal; a timeout fails the test). out/err get malloc'd
// copies of stdout and stderr.
int run_tool(char **out, char **err, const char *tool, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
// The same with stdin from a string.
int run_tool_stdin(char **out, char **err, const char *input, const char *tool, const char *args);
// A lasting copy of a path (mt_data_path, mt_path and mt_bin share 8 rotating buffers); at most
// 8 per test.
const char *keep(const char *path);
int count_lines(const char *s);
// A failing run: non-zero status that is not a signal, nothing on stdout, one line on stderr
// containing needle (when not NULL).
void expect_one_line_error(int rc, const char *out, const char *err, const char *needle,
                           const char *what);
// The tokens per second on a stderr line "LABEL = ... (... ms per token, X tokens per second)".
double tokens_per_second(const char *err, const char *label);
// The token count on a stderr line "LABEL = ... ms / N tokens (...".
long token_count(const char *err, const char *label);

#endif // MINT_TEST_TOOL_H
