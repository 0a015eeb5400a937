// test_report.c - seeing inside a run: mint-run --trace / --trace-json, and the HTML reports of
// mint-run and mint-perplexity, checked in a real browser (headless Chromium): the page renders
// its text and a heatmap with ink in it, with no script error, from a single file with nothing
// to fetch; a screenshot of each is saved in the build folder. Bad paths and models fail before
// any work. The synthetic small model needs no shared data; stories260K adds a compare model.
#include "helpers/browser.h"
#include "helpers/helpers.h"
#include "helpers/tool.h"
#include "report.h"

#include <criterion/criterion.h>
#include <math.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// The page holds everything itself: no script, style, font or image from elsewhere.
static void expect_self_contained(const char *html, const char *path) {
    static const char *const outside[] = {"<script src", "<link",   "@import",
                                          "url(",        "http://", "https://"};
    for (size_t i = 0; i < sizeof outside / sizeof *outside; i++)
        cr_assert_null(strstr(html, outside[i]), "%s refers to something outside it: '%s'", path,
                       outside[i]);
}

// Opens the page headless with #selftest and saves a screenshot next to the tests.
static void expect_renders(const char *path, const char *shot_name) {
    char url[4200];
    snprintf(url, sizeof url, "file://%s#selftest", path);
    char *dom = mt_chromium_dom(url);
    cr_assert(strstr(dom, "<title>SELFTEST OK</title>"), "the page's self-test: %.300s",
              strstr(dom, "<title>") ? strstr(dom, "<title>") : dom);
    cr_assert(strstr(dom, "class=\"tok"), "no token spans in the rendered page");
    free(dom);
    char png[4200];
    snprintf(png, sizeof png, "%s/%s", getenv("MINT_BIN_DIR"), shot_name);
    snprintf(url, sizeof url, "file://%s", path);
    mt_chromium_screenshot(url, png, 1200, 1600);
    cr_log_info("screenshot: %s", png);
}

static char *read_text(const char *path) {
    size_t n;
    char *s = (char *)mt_read_file(path, &n);
    cr_assert(s, "cannot read %s", path);
    return s;
}

Test(report, mint_run_page_renders_in_chromium, .timeout = MT_HANG(180)) {
    const char *model = keep(mt_synth("small", "F32"));
    const char *html = keep(mt_path(mt_tmpdir(), "run.html"));
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run",
                      "-m '%s' -p 'the cat sat on the mat' -n 24 --temp 0 -t 1 --report '%s' -v",
                      model, html);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(err, "report written to"), "%s", err);
    free(out);
    free(err);
    char *page = read_text(html);
    expect_self_contained(page, html);
    cr_assert(strstr(page, "\"tool\":\"mint-run\"") && strstr(page, "\"att\":{\"layers\":4"),
              "the data block is missing");
    free(page);
    expect_renders(html, "report-mint-run.png");
}

// A chat run's page shows what the model was given: the last turn's prompt as the template
// rendered it (JSON-escaped in the data block: < and > as \u003c, \u003e; a newline as \u000a),
// and the conversation's tokens, replies included.
Test(report, chat_run_page_shows_the_rendered_prompt, .timeout = MT_HANG(180)) {
    const char *model = keep(mt_data_path("stories260K.gguf"));
    const char *html = keep(mt_path(mt_tmpdir(), "chat.html"));
    char args[8400];
    snprintf(args, sizeof args,
             "-m '%s' -cnv --chat-template zephyr -n 12 --temp 0 -t 1 --report '%s' -v", model,
             html);
    char *out, *err;
    int rc = run_tool_stdin(&out, &err, "Tell me a story\nAnd then?\n", "mint-run", args);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(err, "report written to"), "%s", err);
    free(out);
    free(err);
    char *page = read_text(html);
    expect_self_contained(page, html);
    cr_assert(strstr(page, "\"chat_prompt\":\"\\u003c|user|\\u003e\\u000aTell me a "
                           "story\\u003c|endoftext|\\u003e"),
              "the first turn is not in the page's chat prompt");
    cr_assert(strstr(page, "\\u003c|user|\\u003e\\u000aAnd then?\\u003c|endoftext|\\u003e\\u000a"
                           "\\u003c|assistant|\\u003e\\u000a\""),
              "the chat prompt does not end with the last turn's assistant header");
    cr_assert(strstr(page, "\"generated\":true") || strstr(page, "\"g\":1") ||
                  strstr(page, "\"tokens\":["),
              "no tokens in the page");
    free(page);
    expect_renders(html, "report-mint-run-chat.png");
}

Test(report, compare_model_marks_disagreements, .timeout = MT_HANG(180)) {
    const char *model = keep(mt_data_path("stories260K.gguf"));
    const char *cmp = keep(mt_data_path("quant/stories260K-q4_0.gguf"));
    const char *html = keep(mt_path(mt_tmpdir(), "cmp.html"));
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run",
                      "-m '%s' -p 'Once upon a time' -n 60 --temp 0 -t 1 --report '%s' "
                      "--compare-model '%s'",
                      model, html, cmp);
    cr_assert_eq(rc, 0, "%s", err);
    free(out);
    free(err);
    char *page = read_text(html);
    cr_assert(strstr(page, "\"compare\":") && strstr(page, "\"kl\":0."), "no compare data");
    cr_assert(strstr(page, "\"cmp\":"), "no compare top-1");
    free(page);
    expect_renders(html, "report-compare.png");
}

// A Gemma 2 run's page: the tiny synthetic Gemma 2 (a window of 8 keys on layer 0; its text is
// noise) renders with its heatmap, which holds the window (test_arch checks the weights it draws).
Test(report, gemma2_page_renders_in_chromium, .timeout = MT_HANG(180)) {
    const char *model = keep(mt_path(mt_tmpdir(), "gemma2-tiny.gguf"));
    mint_synth_params p = {
        .preset = "gemma2", .ftype = "Q8_0", .seed = 1, .n_threads = 2, .shape = "tiny"};
    mint_err e;
    cr_assert_eq(mint_synth_write(&p, model, &e), MINT_OK, "%s", e.msg);
    const char *html = keep(mt_path(mt_tmpdir(), "gemma2.html"));
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run",
                      "-m '%s' -p 'one day a little girl named Lily found a needle' -n 16 --temp 0 "
                      "-t 1 --report '%s'",
                      model, html);
    cr_assert_eq(rc, 0, "%s", err);
    free(out);
    free(err);
    char *page = read_text(html);
    cr_assert(strstr(page, "\"arch\":\"gemma2\"") && strstr(page, "\"att\":{\"layers\":2"),
              "the data block lacks the architecture or the attention");
    free(page);
    expect_renders(html, "report-gemma2.png");
}

// The page of `mint-run --report` for 8 tokens of a tiny synthetic file of `preset` (random
// weights: its text is noise), written at the preset's name; returns the page's path.
static const char *tiny_run_report(const char *preset, const char *ftype) {
    char name[64];
    snprintf(name, sizeof name, "%s-tiny.gguf", preset);
    const char *model = keep(mt_path(mt_tmpdir(), name));
    mint_synth_params p = {
        .preset = preset, .ftype = ftype, .seed = 1, .n_threads = 2, .shape = "tiny"};
    mint_err e;
    cr_assert_eq(mint_synth_write(&p, model, &e), MINT_OK, "%s", e.msg);
    snprintf(name, sizeof name, "%s.html", preset);
    const char *html = keep(mt_path(mt_tmpdir(), name));
    char *out, *err;
    int rc =
        run_tool(&out, &err, "mint-run",
                 "-m '%s' -p 'Once upon a time' -n 8 --temp 0 -t 2 --report '%s'", model, html);
    cr_assert_eq(rc, 0, "%s", err);
    free(out);
    free(err);
    return html;
}

// A mixture of experts' page: the tiny synthetic Qwen3-MoE (its text is noise) shows, per
// token and layer, the 4 of 16 experts its router chose with their weights, which sum to 1
// (renormalised); the page's self-test checks the table has a row per token.
Test(report, moe_page_shows_the_routing, .timeout = MT_HANG(180)) {
    const char *html = tiny_run_report("qwen3moe", "Q8_0");
    char *page = read_text(html);
    const char *rt = strstr(page, "\"routing\":{\"layers\":2,\"k\":4,\"n_expert\":16,\"T\":");
    cr_assert(rt, "the data block lacks the routing");
    const char *w = strstr(rt, "\"w\":[");
    cr_assert(w);
    double sum = 0; // the first token's weights in layer 0
    const char *at = w + 5;
    for (int j = 0; j < 4; j++) {
        char *end;
        sum += strtod(at, &end);
        at = end + 1;
    }
    cr_assert(fabs(sum - 1.0) < 2e-3, "layer 0's weights sum to %g", sum);
    free(page);
    expect_renders(html, "report-qwen3moe.png");
}

// A hybrid (Qwen3.5: three delta-net layers of 4 value heads) shows its recurrent state's norm
// per layer and head after each token (the first token's is above zero: the state starts at
// zero and every token writes into it); the page's self-test checks a row per layer and head.
Test(report, hybrid_page_shows_the_recurrent_state, .timeout = MT_HANG(180)) {
    const char *html = tiny_run_report("qwen35", "F32");
    char *page = read_text(html);
    const char *st = strstr(page, "\"state\":{\"layers\":3,\"heads\":4,\"T\":");
    cr_assert(st, "the data block lacks the recurrent state");
    const char *norm = strstr(st, "\"norm\":[");
    cr_assert(norm);
    char *end;
    const double first = strtod(norm + 8, &end); // layer 0, head 0, the first token
    cr_assert(first > 0 && isfinite(first), "the first norm is %g", first);
    free(page);
    expect_renders(html, "report-qwen35.png");
}

Test(report, mint_perplexity_page_renders_in_chromium, .timeout = MT_HANG(180)) {
    const char *model = keep(mt_synth("small", "F32"));
    char text[4200];
    snprintf(text, sizeof text, "%s/README.md", getenv("MINT_SOURCE_DIR"));
    const char *html = keep(mt_path(mt_tmpdir(), "ppl.html"));
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-perplexity",
                      "-m '%s' -f '%s' -c 64 --chunks 6 -t 1 --report '%s'", model, text, html);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(out, "Final estimate: PPL = "), "%s", out);
    free(out);
    free(err);
    char *page = read_text(html);
    expect_self_contained(page, html);
    cr_assert(strstr(page, "\"tool\":\"mint-perplexity\"") && strstr(page, "\"chunks\":[") &&
                  !strstr(page, "\"chunks\":[]"),
              "no per-chunk perplexity");
    free(page);
    expect_renders(html, "report-mint-perplexity.png");
}

Test(report, bad_paths_and_models_fail_before_generating, .timeout = MT_HANG(60)) {
    const char *model = keep(mt_synth("small", "F32"));
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run", "-m '%s' -p hello -n 8 --report /nonexistent/r.html",
                      model);
    expect_one_line_error(rc, out, err, "/nonexistent/r.html", "unwritable report");
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-run", "-m '%s' -p hello -n 8 --trace-json /nonexistent/t.jsonl",
                  model);
    expect_one_line_error(rc, out, err, "/nonexistent/t.jsonl", "unwritable trace");
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-run", "-m '%s' -p hi -n 8 --report '%s' --compare-model '%s'",
                  keep(mt_data_path("stories260K.gguf")), keep(mt_path(mt_tmpdir(), "x.html")),
                  keep(mt_data_path("llama-2-tiny-random.gguf")));
    expect_one_line_error(rc, out, err, "vocabularies of 512 and 32000 tokens differ",
                          "compare model with another vocabulary");
    cr_assert_neq(access(mt_path(mt_tmpdir(), "x.html"), F_OK), 0, "a report was left behind");
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-run", "-m '%s' --compare-model '%s'", model, model);
    expect_one_line_error(rc, out, err, "--compare-model needs --report", "compare alone");
    free(out);
    free(err);
    rc =
        run_tool(&out, &err, "mint-perplexity", "-m '%s' -f '%s' --attention sparse", model, model);
    cr_assert_eq(rc, 2);
    cr_assert(strstr(err, "auto, naive, rowwise or flash"), "%s", err);
    free(out);
    free(err);
}

Test(report, trace_json_has_every_batch_node_and_sample, .timeout = MT_HANG(60)) {
    const char *model = keep(mt_synth("small", "Q4_0"));
    const char *path = keep(mt_path(mt_tmpdir(), "trace.jsonl"));
    char *out, *err;
    int rc =
        run_tool(&out, &err, "mint-run",
                 "-m '%s' -p 'the cat sat' -n 6 --temp 0.7 -s 3 -t 2 --trace --trace-json '%s'",
                 model, path);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(err, "[trace] batch 1:") && strstr(err, "MATMUL    blk.0.attn_q"), "%s", err);
    cr_assert(strstr(err, "-> top-k ") && strstr(err, "[trace] kv cache:"), "%s", err);
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-run", "-m '%s' --dump-graph", model);
    int n_nodes = 0;
    const char *graph = strstr(out, " nodes; rows are tokens"); // after the metadata keys
    while (graph && graph > out && graph[-1] != '\n') graph--;
    if (graph) graph--; // at the newline before "# N nodes"
    cr_assert(graph && sscanf(graph + 1, "# %d nodes", &n_nodes) == 1, "%s", out);
    free(out);
    free(err);
    char *text = read_text(path), *save = NULL;
    int batches = 0, samples = 0;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_object *j = json_tokener_parse(line);
        cr_assert_not_null(j, "not JSON: %s", line);
        const char *ev = json_object_get_string(mt_jget(j, "event"));
        if (strcmp(ev, "batch") == 0) {
            batches++;
            json_object *nodes = mt_jget(j, "nodes");
            cr_assert_eq(json_object_array_length(nodes), (size_t)n_nodes,
                         "every node of the graph");
            json_object *mm = mt_jidx(nodes, 3); // token_embd, attn_norm, attn_in (CONVERT), attn_q
            cr_assert_str_eq(json_object_get_string(mt_jget(mm, "op")), "MATMUL");
            cr_assert_str_eq(json_object_get_string(mt_jget(mm, "weight_type")), "Q4_0");
            cr_assert_str_eq(json_object_get_string(mt_jget(mm, "act_type")), "Q8_0");
            cr_assert_gt(json_object_get_int64(mt_jget(mm, "bytes_read")), 256 * 144);
            cr_assert_geq(json_object_get_double(mt_jget(mm, "seconds")), 0);
            cr_assert_gt(json_object_get_int(mt_jget(mt_jget(j, "kv"), "blocks_used")), 0);
        } else {
            cr_assert_str_eq(ev, "sample");
            samples++;
            const int k = json_object_get_int(mt_jget(j, "top_k"));
            const int p = json_object_get_int(mt_jget(j, "top_p"));
            const int m = json_object_get_int(mt_jget(j, "min_p"));
            cr_assert(k == 40 && p >= 1 && p <= k && m >= 1 && m <= p,
                      "top-k %d, top-p %d, min-p %d", k, p, m);
            const double pr = json_object_get_double(mt_jget(j, "p"));
            cr_assert(pr > 0 && pr <= 1, "p %g", pr);
        }
        json_object_put(j);
    }
    cr_assert_eq(samples, 6);
    cr_assert_eq(batches, 1 + 5, "the prompt, then every generated token but the last");
    free(text);
}

Test(report, attention_kept_under_the_budget) {
    // TinyLlama's 22 layers x 32 heads under 8 MiB: the largest T whose causal triangles fit.
    const size_t budget = 8u << 20;
    const int T = report_attention_positions(22, 32, budget, 2048);
    cr_assert_leq((size_t)22 * 32 * T * (T + 1) / 2, budget);
    cr_assert_gt((size_t)22 * 32 * (T + 1) * (T + 2) / 2, budget);
    cr_assert_eq(T, 153);
    cr_assert_eq(report_attention_positions(5, 8, budget, 300), 300, "stories260K: all of a run");
}
