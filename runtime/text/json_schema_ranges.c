// json_schema_ranges.c - counted repetitions (minItems / maxItems, minLength / maxLength, a
// pattern's {m,n}) and integer ranges (minimum / maximum) as GBNF, laid out exactly as llama.cpp's
// build_repetition and build_min_max_int write them, so that the grammars are the same text.
#include "runtime/text/json_schema.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

char *js_repetition(js_conv *c, const char *item, int64_t min, int64_t max, const char *sep) {
    if (!item) return NULL;
    bool has_max = max != INT32_MAX;
    if (max == 0) return js_strndup(c, "", 0);
    if (min == 0 && max == 1) return js_cat(c, item, "?", NULL);
    if (!sep[0]) {
        if (min == 1 && !has_max) return js_cat(c, item, "+", NULL);
        if (min == 0 && !has_max) return js_cat(c, item, "*", NULL);
        char counts[64];
        if (has_max)
            snprintf(counts, sizeof counts, "{%" PRId64 ",%" PRId64 "}", min, max);
        else
            snprintf(counts, sizeof counts, "{%" PRId64 ",}", min);
        return js_cat(c, item, counts, NULL);
    }
    // The first item, then the others each after a separator.
    char *more = js_cat(c, "(", sep, " ", item, ")", NULL);
    char *rest =
        more ? js_repetition(c, more, min == 0 ? 0 : min - 1, has_max ? max - 1 : max, "") : NULL;
    char *all = rest ? js_cat(c, item, " ", rest, NULL) : NULL;
    if (all && min == 0) all = js_cat(c, "(", all, ")?", NULL);
    return all;
}

// ---------------------------------------------------------------------------------------------
// Integer ranges: the decimal text of the integers in [min, max], a digit position at a time.

// "[f-t]", or "[f]" when f == t.
static void digit_range(js_conv *c, js_buf *o, char from, char to) {
    js_buf_addc(c, o, '[');
    js_buf_addc(c, o, from);
    if (from != to) {
        js_buf_addc(c, o, '-');
        js_buf_addc(c, o, to);
    }
    js_buf_addc(c, o, ']');
}

// "[0-9]" repeated min..max times ("{min}", "{min,max}"; max INT32_MAX: "{min,}").
static void more_digits(js_conv *c, js_buf *o, int min, int max) {
    js_buf_adds(c, o, "[0-9]");
    if (min == max && min == 1) return;
    char counts[48];
    if (min == max)
        snprintf(counts, sizeof counts, "{%d}", min);
    else if (max != INT32_MAX)
        snprintf(counts, sizeof counts, "{%d,%d}", min, max);
    else
        snprintf(counts, sizeof counts, "{%d,}", min);
    js_buf_adds(c, o, counts);
}

// n copies of the digit d, NUL-terminated, in buf (n < 32).
static const char *same_digits(char *buf, char d, size_t n) {
    memset(buf, d, n);
    buf[n] = '\0';
    return buf;
}

// The numbers from `from` to `to`, two digit strings of the same length.
static void uniform_range(js_conv *c, js_buf *o, const char *from, const char *to) {
    size_t nf = strlen(from), nt = strlen(to), i = 0;
    while (i < nf && i < nt && from[i] == to[i]) i++;
    if (i > 0) {
        js_buf_addc(c, o, '"');
        js_buf_add(c, o, from, i);
        js_buf_addc(c, o, '"');
    }
    if (i >= nf || i >= nt) return;
    if (i > 0) js_buf_addc(c, o, ' ');
    size_t sub_len = nf - i - 1;
    if (sub_len == 0) { // the last digit: always a range, as llama.cpp writes it
        char last[5] = {'[', from[i], '-', to[i], ']'};
        js_buf_add(c, o, last, 5);
        return;
    }
    const char *from_sub = from + i + 1, *to_sub = to + i + 1;
    char zeros[32], nines[32];
    same_digits(zeros, '0', sub_len);
    same_digits(nines, '9', sub_len);
    bool to_reached = false;
    js_buf_addc(c, o, '(');
    if (strcmp(from_sub, zeros) == 0) {
        digit_range(c, o, from[i], (char)(to[i] - 1));
        js_buf_addc(c, o, ' ');
        more_digits(c, o, (int)sub_len, (int)sub_len);
    } else {
        js_buf_addc(c, o, '[');
        js_buf_addc(c, o, from[i]);
        js_buf_adds(c, o, "] (");
        uniform_range(c, o, from_sub, nines);
        js_buf_addc(c, o, ')');
        if (from[i] < to[i] - 1) {
            js_buf_adds(c, o, " | ");
            if (strncmp(to_sub, nines, sub_len) == 0 && strlen(to_sub) == sub_len) {
                digit_range(c, o, (char)(from[i] + 1), to[i]);
                to_reached = true;
            } else {
                digit_range(c, o, (char)(from[i] + 1), (char)(to[i] - 1));
            }
            js_buf_addc(c, o, ' ');
            more_digits(c, o, (int)sub_len, (int)sub_len);
        }
    }
    if (!to_reached) {
        js_buf_adds(c, o, " | ");
        digit_range(c, o, to[i], to[i]);
        js_buf_addc(c, o, ' ');
        uniform_range(c, o, zeros, to_sub);
    }
    js_buf_addc(c, o, ')');
}

static void min_max(js_conv *c, js_buf *o, int64_t min, int64_t max, int decimals_left,
                    bool top_level) {
    bool has_min = min != INT64_MIN, has_max = max != INT64_MAX;
    char min_s[32], max_s[32];
    if (has_min && has_max) {
        if (min < 0 && max < 0) {
            js_buf_adds(c, o, "\"-\" (");
            min_max(c, o, -max, -min, decimals_left, true);
            js_buf_addc(c, o, ')');
            return;
        }
        if (min < 0) {
            js_buf_adds(c, o, "\"-\" (");
            min_max(c, o, 0, -min, decimals_left, true);
            js_buf_adds(c, o, ") | ");
            min = 0;
        }
        snprintf(min_s, sizeof min_s, "%" PRId64, min);
        snprintf(max_s, sizeof max_s, "%" PRId64, max);
        size_t min_digits = strlen(min_s), max_digits = strlen(max_s);
        for (size_t digits = min_digits; digits < max_digits; digits++) {
            char nines[32];
            uniform_range(c, o, min_s, same_digits(nines, '9', digits));
            min_s[0] = '1';
            same_digits(min_s + 1, '0', digits);
            js_buf_adds(c, o, " | ");
        }
        uniform_range(c, o, min_s, max_s);
        return;
    }
    int less_decimals = decimals_left - 1 > 1 ? decimals_left - 1 : 1;
    if (has_min) {
        if (min < 0) {
            js_buf_adds(c, o, "\"-\" (");
            min_max(c, o, INT64_MIN, -min, decimals_left, false);
            js_buf_adds(c, o, ") | [0] | [1-9] ");
            more_digits(c, o, 0, decimals_left - 1);
        } else if (min == 0) {
            if (top_level) {
                js_buf_adds(c, o, "[0] | [1-9] ");
                more_digits(c, o, 0, less_decimals);
            } else {
                more_digits(c, o, 1, decimals_left);
            }
        } else if (min <= 9) {
            char d = (char)('0' + min), start = top_level ? '1' : '0';
            if (d > start) {
                digit_range(c, o, start, (char)(d - 1));
                js_buf_addc(c, o, ' ');
                more_digits(c, o, 1, less_decimals);
                js_buf_adds(c, o, " | ");
            }
            digit_range(c, o, d, '9');
            js_buf_addc(c, o, ' ');
            more_digits(c, o, 0, less_decimals);
        } else {
            snprintf(min_s, sizeof min_s, "%" PRId64, min);
            int len = (int)strlen(min_s);
            char d = min_s[0];
            if (d > '1') {
                digit_range(c, o, top_level ? '1' : '0', (char)(d - 1));
                js_buf_addc(c, o, ' ');
                more_digits(c, o, len, less_decimals);
                js_buf_adds(c, o, " | ");
            }
            digit_range(c, o, d, d);
            js_buf_adds(c, o, " (");
            int64_t tail = 0;
            for (const char *p = min_s + 1; *p; p++) tail = tail * 10 + (*p - '0');
            min_max(c, o, tail, INT64_MAX, less_decimals, false);
            js_buf_addc(c, o, ')');
            if (d < '9') {
                js_buf_adds(c, o, " | ");
                digit_range(c, o, (char)(d + 1), '9');
                js_buf_addc(c, o, ' ');
                more_digits(c, o, len - 1, less_decimals);
            }
        }
        return;
    }
    if (has_max) {
        if (max >= 0) {
            if (top_level) {
                js_buf_adds(c, o, "\"-\" [1-9] ");
                more_digits(c, o, 0, less_decimals);
                js_buf_adds(c, o, " | ");
            }
            min_max(c, o, 0, max, decimals_left, true);
        } else {
            js_buf_adds(c, o, "\"-\" (");
            min_max(c, o, -max, INT64_MAX, decimals_left, false);
            js_buf_addc(c, o, ')');
        }
    }
}

char *js_int_range(js_conv *c, int64_t min, int64_t max) {
    if (min == INT64_MIN && max == INT64_MAX) // llama.cpp's bounds mean "none" and it throws
        return js_fail_at(c, "minimum", "a bound of -2^63 / 2^63-1 is no bound");
    js_buf o = {0};
    js_buf_addc(c, &o, '(');
    min_max(c, &o, min, max, 16, true);
    js_buf_addc(c, &o, ')');
    return js_buf_done(c, &o);
}
