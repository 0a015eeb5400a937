// test_cli_edges.c - the sharp edges a new user met in the programs (issue 30), as a user runs
// them: mint-tokenize parses control-token text by default as llama-tokenize does; mint-run
// prints nothing but the error for a prompt that does not fit, takes llama-cli's -e and
// --no-display-prompt. (llama.cpp's flags that mean nothing on a CPU and --version:
// tests/test_options.c.)
#include "helpers/helpers.h"
#include "helpers/tool.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STORIES "stories260K.gguf"

// ---------------------------------------------------------------------------------------------
// mint-run: prompts and counts

// A prompt that does not fit the context is refused before anything is printed: the error is the
// only output (the prompt used to be echoed first).
Test(mint_run, a_prompt_that_does_not_fit_prints_nothing) {
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run", "-m '%s' -p 'Once upon a time' -c 5 -n 10 -t 1",
                      mt_data_path(STORIES));
    expect_one_line_error(rc, out, err, "the prompt has 5 tokens, which leaves no room", "-c 5");
    cr_assert_eq(rc, 1);
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-run", "-m '%s' --prompt-ids 1,403,407 -c 3 -n 10 -t 1",
                  mt_data_path(STORIES));
    expect_one_line_error(rc, out, err, "the prompt has 3 tokens", "--prompt-ids, -c 3");
    free(out);
    free(err);
}

// llama-cli's -e: \t, \xHH and \\ in the prompt become the bytes (mint's default, like
// --no-escape, takes the text as typed); --no-display-prompt prints only what is generated.
Test(mint_run, escape_and_display_prompt_flags) {
    const char *model = keep(mt_data_path(STORIES));
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run", "-m '%s' -p 'a\\tb\\x41\\\\n' -n 0 -t 1", model);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, "a\\tb\\x41\\\\n\n", "as typed by default");
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-run", "-m '%s' -p 'a\\tb\\x41\\\\n' -n 0 -t 1 -e", model);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, "a\tbA\\n\n", "-e: a tab, 'A', then a backslash and 'n'");
    free(out);
    free(err);
    // The escaped prompt is what is tokenized: the same greedy text as the bytes themselves.
    char *typed, *escaped;
    rc = run_tool(&typed, &err, "mint-run", "-m '%s' -p 'Once upon a time\n' -n 8 --temp 0 -t 1",
                  model);
    cr_assert_eq(rc, 0, "%s", err);
    free(err);
    rc = run_tool(&escaped, &err, "mint-run",
                  "-m '%s' -p 'Once upon a time\\n' -n 8 --temp 0 -t 1 --escape", model);
    cr_assert_eq(rc, 0, "%s", err);
    free(err);
    cr_assert_str_eq(escaped, typed);
    // --no-display-prompt: the generated text alone.
    rc = run_tool(&out, &err, "mint-run",
                  "-m '%s' -p 'Once upon a time\n' -n 8 --temp 0 -t 1 --no-display-prompt", model);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, typed + strlen("Once upon a time\n"));
    free(out);
    free(err);
    free(typed);
    free(escaped);
}

// ---------------------------------------------------------------------------------------------
// mint-tokenize: control-token text is parsed into its token by default, as llama-tokenize does.

Test(mint_tokenize, special_tokens_are_parsed_by_default) {
    const char *vocab = keep(mt_data_path("vocab/ggml-vocab-qwen2.gguf"));
    const char *text = keep(mt_path(mt_tmpdir(), "chatml.txt"));
    static const char src[] = "<|im_start|>user\nhello<|im_end|>";
    cr_assert(mt_write_file(text, src, strlen(src)));
    char *out, *err;
    // <|im_start|> user \n hello <|im_end|>: llama-tokenize's five ids.
    static const char *parsed = "[151644, 872, 198, 14990, 151645]\n";
    int rc = run_tool(&out, &err, "mint-tokenize", "-m '%s' -f '%s' --ids", vocab, text);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, parsed);
    free(out);
    free(err);
    rc =
        run_tool(&out, &err, "mint-tokenize", "-m '%s' -f '%s' --ids --parse-special", vocab, text);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, parsed, "--parse-special is still taken (the default)");
    free(out);
    free(err);
    // --no-parse-special (llama-tokenize's flag): the control-token text as plain text.
    rc = run_tool(&out, &err, "mint-tokenize", "-m '%s' -f '%s' --ids --no-parse-special", vocab,
                  text);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, "[27, 91, 318, 4906, 91, 29, 872, 198, 14990, 27, 91, 318, 6213, 91, "
                          "29]\n");
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-tokenize", "-m '%s' -p x --parse-special --no-parse-special",
                  vocab);
    expect_one_line_error(rc, out, err, "give only one of --parse-special and --no-parse-special",
                          "both");
    cr_assert_eq(rc, 2);
    free(out);
    free(err);
}
