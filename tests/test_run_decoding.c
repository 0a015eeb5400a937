// test_run_decoding.c - mint-run's decoding strategies as a user runs them (tools/run/decoding.c):
// --beams 1 and greedy speculative decoding (--draft, --lookup) print exactly the greedy text;
// -v reports beams, acceptance and tokens per target pass; --n-parallel prints N reproducible
// completions sharing the prompt's blocks; mint-bench --n-seq reports aggregate speed; bad flags
// are one-line errors. The synthetic small model (and its Q4_0 file as a draft) needs no data.
#include "helpers/helpers.h"
#include "helpers/tool.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROMPT "-p 'the cat sat on the mat and the cat' -n 40 --temp 0 -t 1"

static char *greedy_text(const char *model) {
    char *out, *err;
    cr_assert_eq(run_tool(&out, &err, "mint-run", "-m '%s' " PROMPT, model), 0, "%s", err);
    free(err);
    return out;
}

Test(mint_run_decoding, one_beam_prints_the_greedy_text, .timeout = MT_HANG(60)) {
    const char *model = keep(mt_synth("small", "F32"));
    char *want = greedy_text(model), *out, *err;
    cr_assert_eq(run_tool(&out, &err, "mint-run", "-m '%s' " PROMPT " --beams 1", model), 0, "%s",
                 err);
    cr_assert_str_eq(out, want);
    free(out);
    free(err);
    cr_assert_eq(run_tool(&out, &err, "mint-run", "-m '%s' " PROMPT " --beams 4 -v", model), 0,
                 "%s", err);
    cr_assert(strstr(err, "beam search, 4 beams: best of 40 tokens, log-probability"), "%s", err);
    cr_assert(strncmp(out, "the cat sat on the mat and the cat", 34) == 0, "%s", out);
    free(out);
    free(err);
    free(want);
}

Test(mint_run_decoding, speculative_greedy_prints_the_greedy_text, .timeout = MT_HANG(60)) {
    const char *model = keep(mt_synth("small", "F32"));
    const char *draft = keep(mt_synth("small", "Q4_0"));
    char *want = greedy_text(model), *out, *err;
    cr_assert_eq(run_tool(&out, &err, "mint-run", "-m '%s' " PROMPT " --draft '%s' --draft-n 4 -v",
                          model, draft),
                 0, "%s", err);
    cr_assert_str_eq(out, want);
    cr_assert(strstr(err, "speculative decoding (draft model, up to 4 drafted per pass)"), "%s",
              err);
    cr_assert(strstr(err, "accepted (acceptance ") && strstr(err, "tokens per target pass"), "%s",
              err);
    cr_assert_eq(token_count(err, "generation"), 40);
    free(out);
    free(err);
    cr_assert_eq(run_tool(&out, &err, "mint-run", "-m '%s' " PROMPT " --lookup 3 -v", model), 0,
                 "%s", err);
    cr_assert_str_eq(out, want);
    cr_assert(strstr(err, "speculative decoding (prompt lookup"), "%s", err);
    free(out);
    free(err);
    free(want);
}

Test(mint_run_decoding, parallel_completions_share_the_prompt, .timeout = MT_HANG(60)) {
    const char *model = keep(mt_synth("small", "F32"));
    char *a, *b, *err;
    const char *args = "-m '%s' -p 'the cat sat' -n 12 --n-parallel 3 -s 11 -t 1 -v";
    cr_assert_eq(run_tool(&a, &err, "mint-run", args, model), 0, "%s", err);
    cr_assert(strstr(err, "3 completions decoded together"), "%s", err);
    cr_assert_eq(token_count(err, "generation"), 36);
    free(err);
    cr_assert_eq(run_tool(&b, &err, "mint-run", args, model), 0, "%s", err);
    free(err);
    cr_assert_str_eq(a, b, "the same seed gave other completions");
    const char *one = strstr(a, "\n[1] "), *two = strstr(a, "\n[2] "), *three = strstr(a, "\n[3] ");
    cr_assert(one && two && three, "%s", a);
    cr_assert_neq(strncmp(one + 5, two + 5, (size_t)(two - one - 5)), 0,
                  "completions 1 and 2 are the same:\n%s", a);
    free(a);
    free(b);
}

Test(mint_run_decoding, draft_with_another_vocabulary_is_refused, .timeout = MT_HANG(60)) {
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run", "-m '%s' -p hi -n 4 --draft '%s'",
                      keep(mt_data_path("stories260K.gguf")),
                      keep(mt_data_path("llama-2-tiny-random.gguf")));
    expect_one_line_error(rc, out, err, "vocabulary differs", "--draft with another vocabulary");
    cr_assert(strstr(err, "512") && strstr(err, "32000"), "%s", err);
    free(out);
    free(err);
}

Test(mint_run_decoding, bad_flags_are_one_line_errors) {
    const char *model = keep(mt_synth("small", "F32"));
    static const struct {
        const char *args; // its %s is the model
        const char *needle;
    } cases[] = {
        {"-m '%s' --beams 0", "--beams expects an integer"},
        {"-m '%s' --beams 65", "--beams expects an integer"},
        {"-m '%s' --draft-n 0", "--draft-n expects an integer"},
        {"-m '%s' --lookup 99", "--lookup expects an integer"},
        {"-m '%s' --n-parallel 0", "--n-parallel expects an integer"},
        {"-m '%s' --length-penalty x", "--length-penalty expects a number"},
        {"-m '%s' --beams 2 --lookup 2", "choose one of"},
        {"-m '%s' --n-parallel 2 -cnv", "choose one of"},
        {"-m '%s' --beams 2 --json", "--json works with plain generation only"},
        {"-m '%s' --attention bogus", "--attention expects auto, naive, rowwise or flash"},
        {"-m '%s' --kv-block 0", "--kv-block expects an integer"},
        {"-m '%s' -p hi --draft /nonexistent/draft.gguf", "/nonexistent/draft.gguf"},
        {"-m '%s' -p hi --lookup 2 --repeat-penalty 1.2", "repetition penalty"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char args[4400];
        snprintf(args, sizeof args, cases[i].args, model);
        char *out, *err;
        int rc = run_tool(&out, &err, "mint-run", "-t 1 -n 4 %s < /dev/null", args);
        // A prompt was echoed before a run-time refusal; the error is still one line.
        if (strstr(cases[i].args, "-p hi")) {
            cr_assert(rc != 0 && rc < 128, "%s: status %d", args, rc);
            cr_assert_eq(count_lines(err), 1, "%s: %s", args, err);
            cr_assert(strstr(err, cases[i].needle), "%s: %s", args, err);
        } else {
            expect_one_line_error(rc, out, err, cases[i].needle, args);
        }
        free(out);
        free(err);
    }
}

Test(mint_bench_decoding, n_seq_reports_aggregate_generation, .timeout = MT_HANG(120)) {
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-bench",
                      "-m '%s' -t 2 -p 0 -n 8 -r 2 --n-seq 1,4 --seq-prompt 16 --membw-gib 0 "
                      "--attention naive,flash -o json",
                      keep(mt_synth("small", "Q4_0")));
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(out, "\"test\":\"tg8 x4\"") && strstr(out, "\"n_seq\":4"), "%s", out);
    cr_assert(strstr(out, "\"attention\":\"naive\"") && strstr(out, "\"attention\":\"flash\""),
              "%s", out);
    int n = 0;
    for (const char *s = out; (s = strstr(s, "\"tps_median\":")) != NULL; s++) n++;
    cr_assert_eq(n, 2 * (1 + 2), "tg8, tg8 x1 and tg8 x4 for two algorithms:\n%s", out);
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-bench", "-m '%s' -d 0,x", keep(mt_synth("small", "Q4_0")));
    expect_one_line_error(rc, out, err, "-d expects an integer", "-d with a bad list");
    free(out);
    free(err);
}
