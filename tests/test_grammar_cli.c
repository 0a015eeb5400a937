// test_grammar_cli.c - mint-run's --grammar and --grammar-file as a user runs them on stories260K:
// the text generated matches the grammar (a POSIX regex twin checks it) and ends where the grammar
// does; a grammar that does not parse stops mint-run with its one line (exit 1) before any work;
// misused flags are usage errors (exit 2).
#include "helpers/helpers.h"
#include "helpers/tool.h"

#include <criterion/criterion.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STORIES "stories260K.gguf"

static bool regex_full(const char *re, const char *text) {
    regex_t rx;
    cr_assert_eq(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB), 0, "%s", re);
    const bool ok = regexec(&rx, text, 0, NULL, 0) == 0;
    regfree(&rx);
    return ok;
}

// mint-run prints the prompt, the generated text, then a newline.
static const char *generated(const char *out, const char *prompt) {
    cr_assert(strncmp(out, prompt, strlen(prompt)) == 0, "output '%s'", out);
    return out + strlen(prompt);
}

Test(grammar_cli, generation_follows_the_grammar) {
    static const char *const grammar = "root ::= (\" \" [a-z]+){4,6} \".\"";
    for (int sampled = 0; sampled < 2; sampled++) {
        char *out, *err;
        int rc = run_tool(&out, &err, "mint-run",
                          "-m '%s' -p 'Once upon a time' -n 60 -t 1 %s --grammar '%s'",
                          mt_data_path(STORIES), sampled ? "--temp 0.8 -s 7" : "--temp 0", grammar);
        cr_assert_eq(rc, 0, "%s", err);
        cr_assert(regex_full("^( [a-z]+){4,6}\\.\n$", generated(out, "Once upon a time")),
                  "generated: '%s'", out);
        free(out);
        free(err);
    }
    // The same grammar from a file.
    const char *path = keep(mt_path(mt_tmpdir(), "g.gbnf"));
    cr_assert(mt_write_file(path, grammar, strlen(grammar)));
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run",
                      "-m '%s' -p 'Once upon a time' -n 60 -t 1 --temp 0 "
                      "--grammar-file '%s'",
                      mt_data_path(STORIES), path);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(regex_full("^( [a-z]+){4,6}\\.\n$", generated(out, "Once upon a time")), "'%s'", out);
    free(out);
    free(err);
}

Test(grammar_cli, a_bad_grammar_is_one_line_and_exit_1) {
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run", "-m '%s' -p 'Once' -n 5 -t 1 --grammar 'root ::= x'",
                      mt_data_path(STORIES));
    expect_one_line_error(rc, out, err, "mint-run: grammar: 1:10: undefined rule 'x'", "--grammar");
    cr_assert_eq(rc, 1);
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-run", "-m '%s' -p 'Once' -n 5 -t 1 --grammar-file '%s'",
                  mt_data_path(STORIES), mt_path(mt_tmpdir(), "missing.gbnf"));
    expect_one_line_error(rc, out, err, "missing.gbnf", "--grammar-file missing");
    cr_assert_eq(rc, 1);
    free(out);
    free(err);
}

Test(grammar_cli, misused_flags_are_usage_errors) {
    static const char *const args[] = {
        "--grammar 'root ::= \"a\"' --grammar-file g.gbnf",
        "--grammar 'root ::= \"a\"' --beams 2",
        "--grammar 'root ::= \"a\"' --n-parallel 2",
        "--grammar-file g.gbnf --lookup 2",
    };
    for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
        char *out, *err;
        int rc = run_tool(&out, &err, "mint-run", "-m '%s' -p 'Once' -n 5 %s",
                          mt_data_path(STORIES), args[i]);
        expect_one_line_error(rc, out, err, "grammar", args[i]);
        cr_assert_eq(rc, 2, "%s: %s", args[i], err);
        free(out);
        free(err);
    }
}

// -j / --json-schema and -jf: the text is JSON the schema accepts (llama.cpp's conversion to a
// grammar); a bad schema is one line and exit 1.
Test(grammar_cli, json_schema_output_fits_the_schema) {
    static const char *const schema =
        "{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"},\"n\":{\"type\":"
        "\"integer\",\"minimum\":0,\"maximum\":9}},\"required\":[\"ok\",\"n\"],"
        "\"additionalProperties\":false}";
    for (int seed = 0; seed < 4; seed++) {
        char *out, *err;
        int rc = run_tool(&out, &err, "mint-run", "-m '%s' -p 'Once' -n 80 -t 1 -s %d -j '%s'",
                          mt_data_path(STORIES), seed, schema);
        cr_assert_eq(rc, 0, "%s", err);
        // {"ok": true|false, "n": digit} with the converter's optional spaces, in either order
        cr_assert(regex_full("^ ?\\{ ?(\"ok\" ?: ?(true|false) ?, ?\"n\" ?: ?[0-9]) ?\\} ?\n$",
                             generated(out, "Once")),
                  "seed %d: '%s'", seed, out);
        free(out);
        free(err);
    }
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run", "-m '%s' -p 'Once' -n 5 -t 1 -j '{\"$ref\":1}'",
                      mt_data_path(STORIES));
    expect_one_line_error(rc, out, err, "json schema", "-j with a bad schema");
    cr_assert_eq(rc, 1);
    free(out);
    free(err);
}
