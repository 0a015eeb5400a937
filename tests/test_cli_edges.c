// test_cli_edges.c - the sharp edges a new user met in the programs (issue 30), as a user runs
// them: mint-tokenize parses control-token text by default as llama-tokenize does; mint-run -cnv
// takes -p as the first user turn as llama-cli does, refuses a bad chat template before reading
// stdin, prints nothing but the error for a prompt that does not fit, takes llama-cli's -e and
// --no-display-prompt; a count of one is "1 token"; --report says where it wrote the page.
// (llama.cpp's flags that mean nothing on a CPU and --version: tests/test_options.c.)
#include "helpers/helpers.h"
#include "helpers/tool.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STORIES "stories260K.gguf"

static mint_model *open_stories(void) {
    mint_model *m;
    mint_err err;
    cr_assert_eq(mint_model_open(mt_data_path(STORIES), NULL, &m, &err), MINT_OK, "%s", err.msg);
    return m;
}

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

// A count of one is "1 token", wherever a count of tokens is printed.
Test(mint_run, a_count_of_one_is_singular) {
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run", "-m '%s' -n 1 --temp 0 -t 1", mt_data_path(STORIES));
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(err, "mint-run: no prompt given: generating from BOS for 1 token\n"), "%s",
              err);
    cr_assert(strstr(err, " ms /      1 token  (    "), "the prompt eval line:\n%s", err);
    cr_assert_eq(token_count(err, "prompt eval"), 1);
    cr_assert_eq(token_count(err, "generation"), 1);
    cr_assert_null(strstr(err, " 1 tokens"), "%s", err);
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-run", "-m '%s' -p '' -c 1 -n 1 -t 1", mt_data_path(STORIES));
    expect_one_line_error(rc, out, err, "the prompt has 1 token, which leaves no room", "-c 1");
    free(out);
    free(err);
    // The library's message, as mint-perplexity passes it on: an empty text is BOS alone.
    const char *empty = keep(mt_path(mt_tmpdir(), "empty.txt"));
    cr_assert(mt_write_file(empty, "", 0));
    rc = run_tool(&out, &err, "mint-perplexity", "-m '%s' -f '%s' -c 8 -t 1", mt_data_path(STORIES),
                  empty);
    cr_assert_eq(rc, 1, "%s", err);
    cr_assert(strstr(err, "the text has 1 token; perplexity with a context of 8 needs at least 16"),
              "%s", err);
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
// mint-run: chat

// The number of tokens of a conversation rendered with the zephyr preset, as mint-run -cnv
// tokenizes its first turn (BOS added: the preset does not write it).
static long zephyr_tokens(const mint_model *m, const mint_chat_msg *msgs, size_t n) {
    char *text = NULL;
    mint_err err;
    cr_assert_eq(mint_chat_apply(mint_chat_preset("zephyr"), msgs, n, true, "<s>", "</s>", &text,
                                 NULL, &err),
                 MINT_OK, "%s", err.msg);
    int32_t ids[512];
    size_t n_ids;
    cr_assert_eq(mint_tokenize(m, text, strlen(text), true, true, ids, 512, &n_ids, &err), MINT_OK,
                 "%s", err.msg);
    mint_chat_free(text);
    return (long)n_ids;
}

// -cnv -p TEXT: TEXT is the first user turn, answered before stdin is read, as llama-cli takes it
// (-sys / --system is the system message); -p used to be ignored with -cnv.
Test(mint_run, chat_prompt_is_the_first_turn) {
    mint_model *m = open_stories();
    const mint_chat_msg user = {"user", "Hello there"}, sys = {"system", "Be kind"};
    const long alone = zephyr_tokens(m, &user, 1);
    const mint_chat_msg both[] = {sys, user};
    const long with_sys = zephyr_tokens(m, both, 2);
    mint_model_close(m);
    char args[4400];
    snprintf(args, sizeof args,
             "-m '%s' --chat-template zephyr -cnv -p 'Hello there' -v -n 8 --temp 0 -t 1",
             mt_data_path(STORIES));
    char *out, *err;
    int rc = run_tool_stdin(&out, &err, "", "mint-run", args);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(count_lines(out), 1, "one reply, to -p's turn:\n%s", out);
    long e1, r1;
    mt_turn_counts(err, 1, &e1, &r1);
    cr_assert_eq(e1, alone, "turn 1 evaluated %ld tokens, 'Hello there' rendered is %ld", e1,
                 alone);
    cr_assert_eq(token_count(err, "generation"), 8);
    free(out);
    free(err);
    // With -sys (llama-cli's spelling of --system) and a second turn from stdin.
    snprintf(args, sizeof args,
             "-m '%s' --chat-template zephyr -cnv -sys 'Be kind' -p 'Hello there' -v -n 8 "
             "--temp 0 -t 1",
             mt_data_path(STORIES));
    rc = run_tool_stdin(&out, &err, "Tell me a story\n", "mint-run", args);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(count_lines(out), 2, "-p's turn, then stdin's:\n%s", out);
    mt_turn_counts(err, 1, &e1, &r1);
    cr_assert_eq(e1, with_sys, "turn 1 evaluated %ld tokens, system + user rendered is %ld", e1,
                 with_sys);
    mt_turn_counts(err, 2, &e1, &r1);
    cr_assert_eq(r1, with_sys + 8, "turn 2 reuses turn 1 and its reply");
    free(out);
    free(err);
}

// A chat template that cannot render is refused at start-up, before stdin is read: one line,
// exit 1, no timing block (it used to come after the first turn, followed by timings of zeros).
Test(mint_run, bad_chat_template_stops_at_start_up) {
    const char *bad = keep(mt_path(mt_tmpdir(), "bad.jinja"));
    static const char src[] = "{% for m in messages %}{{ m.content }";
    cr_assert(mt_write_file(bad, src, strlen(src)));
    char args[4400];
    snprintf(args, sizeof args, "-m '%s' -cnv --chat-template-file '%s' -n 4 -t 1",
             mt_data_path(STORIES), bad);
    char *out, *err;
    int rc = run_tool_stdin(&out, &err, "hello\n", "mint-run", args);
    expect_one_line_error(rc, out, err, "bad.jinja: chat template: template line 1", "bad jinja");
    cr_assert_eq(rc, 1);
    cr_assert_null(strstr(err, "load time"), "%s", err);
    free(out);
    free(err);
    // One that raises on the conversation's start, too (here: any system message).
    const char *strict = keep(mt_path(mt_tmpdir(), "strict.jinja"));
    static const char src2[] = "{% if messages[0].role == 'system' %}{{ raise_exception('no "
                               "system messages') }}{% endif %}{% for m in messages %}{{ "
                               "m.content }}{% endfor %}";
    cr_assert(mt_write_file(strict, src2, strlen(src2)));
    snprintf(args, sizeof args, "-m '%s' -cnv --chat-template-file '%s' --system hi -n 4 -t 1",
             mt_data_path(STORIES), strict);
    rc = run_tool_stdin(&out, &err, "hello\n", "mint-run", args);
    expect_one_line_error(rc, out, err, "no system messages", "raise_exception");
    free(out);
    free(err);
    // A missing file: the same line, exit 1 (a file that cannot be opened, as everywhere).
    snprintf(args, sizeof args, "-m '%s' -cnv --chat-template-file /nonexistent/t.jinja -n 4 -t 1",
             mt_data_path(STORIES));
    rc = run_tool_stdin(&out, &err, "hello\n", "mint-run", args);
    expect_one_line_error(rc, out, err, "/nonexistent/t.jinja: cannot open", "missing template");
    cr_assert_eq(rc, 1);
    free(out);
    free(err);
}

// --report says where it wrote the page, with or without -v.
Test(mint_run, report_says_where_it_is_written) {
    const char *html = keep(mt_path(mt_tmpdir(), "run.html"));
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run", "-m '%s' -p hi -n 4 --temp 0 -t 1 --report '%s'",
                      mt_data_path(STORIES), html);
    cr_assert_eq(rc, 0, "%s", err);
    char want[4400];
    snprintf(want, sizeof want, "mint-run: report written to %s\n", html);
    cr_assert(strstr(err, want), "wanted '%s' in:\n%s", want, err);
    cr_assert(access(html, F_OK) == 0);
    free(out);
    free(err);
    const char *html2 = keep(mt_path(mt_tmpdir(), "ppl.html"));
    const char *text = keep(mt_data_path("tinystories_val.txt"));
    rc = run_tool(&out, &err, "mint-perplexity",
                  "-m '%s' -f '%s' -c 64 --chunks 2 -t 1 --report '%s'", mt_data_path(STORIES),
                  text, html2);
    cr_assert_eq(rc, 0, "%s", err);
    snprintf(want, sizeof want, "mint-perplexity: report written to %s\n", html2);
    cr_assert(strstr(err, want), "wanted '%s' in:\n%s", want, err);
    cr_assert(access(html2, F_OK) == 0);
    free(out);
    free(err);
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
