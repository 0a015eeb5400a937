// cli.h - small helpers the command-line tools share: strict number parsing with messages that
// name the flag, the value and the range; JSON string output; a monotonic clock; reading files.
#ifndef MINT_CLI_H
#define MINT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

// Parses all of s as an integer in [lo, hi]; on failure writes "FLAG expects ..." into err.
bool cli_parse_int(const char *flag, const char *s, long long lo, long long hi, long long *out,
                   char *err, size_t errlen);
// Parses all of s as a finite float in [lo, hi].
bool cli_parse_float(const char *flag, const char *s, double lo, double hi, double *out, char *err,
                     size_t errlen);
// Parses "1,15,200" into a malloc'd array of ids in [0, INT32_MAX]; NULL and err on failure.
int32_t *cli_parse_ids(const char *flag, const char *s, size_t *n, char *err, size_t errlen);

// Turns the escapes llama.cpp's -e turns into bytes (\n \r \t \' \" \\ and \xHH) into them, in
// place; any other backslash stays as typed. Returns the new length.
size_t cli_unescape(char *s, size_t n);

// "s" unless n is 1: "%d token%s" for a count of tokens.
const char *cli_plural(long long n);

// Writes s[0..n) as a JSON string literal (UTF-8 passed through, control bytes escaped, invalid
// UTF-8 bytes written as \u00XX so the output stays valid JSON).
void cli_json_str(FILE *out, const char *s, size_t n);

// Seconds from a monotonic clock.
double cli_now(void);

// Reads a whole file into a malloc'd NUL-terminated buffer; NULL and err on failure.
char *cli_read_file(const char *path, size_t *len, char *err, size_t errlen);

#endif // MINT_CLI_H
