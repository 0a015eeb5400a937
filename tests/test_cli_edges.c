// test_cli_edges.c - the sharp edges a new user met in the programs (issue 30), as a user runs
// them: mint-tokenize parses control-token text by default, as llama-tokenize does.
#include "helpers/helpers.h"
#include "helpers/tool.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STORIES "stories260K.gguf"

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
