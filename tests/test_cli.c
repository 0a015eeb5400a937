// test_cli.c - the tools as a user runs them: mint-run (generation, JSON output, the naive mode,
// sampling seeds, chat, errors), mint-perplexity, mint-quantize and mint-bench, each started as a
// separate process through the shell. Expected text comes from llama.cpp's greedy reference
// (reference/stories260K.json, run f32kv) and from the llama2.c golden story
// (shared/data/README.md), decoded with mint's own detokenizer.
//
// Errors must end with a non-zero exit status and exactly one line on stderr, never a signal.
#include "helpers/helpers.h"
#include "helpers/tool.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STORIES "stories260K.gguf"

// ---------------------------------------------------------------------------------------------
// Helpers

// The repository's README: a text every checkout has (mint-perplexity needs one).
static const char *own_text_path(void) {
    static char path[4200];
    const char *src = getenv("MINT_SOURCE_DIR");
    cr_assert(src, "MINT_SOURCE_DIR is not set (ctest sets it)");
    snprintf(path, sizeof path, "%s/README.md", src);
    return path;
}

static mint_model *open_stories(void) {
    mint_model *m;
    mint_err err;
    cr_assert_eq(mint_model_open(mt_data_path(STORIES), NULL, &m, &err), MINT_OK, "%s", err.msg);
    return m;
}

// Appends token pieces to a malloc'd string, as mint-run prints them.
static char *decode(const mint_model *m, const int32_t *ids, size_t n, bool drop_first_space) {
    size_t cap = 16 * n + 16, len = 0;
    char *s = malloc(cap);
    cr_assert(s);
    for (size_t i = 0; i < n; i++) {
        char buf[64];
        size_t k = mint_token_to_piece(m, ids[i], false, buf, sizeof buf);
        cr_assert_lt(k, sizeof buf);
        const char *b = buf;
        if (i == 0 && drop_first_space && k > 0 && buf[0] == ' ') b++, k--;
        memcpy(s + len, b, k);
        len += k;
    }
    s[len] = '\0';
    return s;
}

// The reference's greedy run after "Once upon a time" (200 tokens) and its log-probabilities.
typedef struct greedy {
    int32_t ids[256];
    double logprob[256];
    int n;
    int32_t top_ids[10]; // top-10 after the prompt
    double top_lp[10];
} greedy;

static greedy reference_greedy(void) {
    json_object *ref = mt_json_data("reference/stories260K.json");
    json_object *p = mt_jidx(mt_jget(mt_jget(mt_jget(ref, "runs"), "f32kv"), "prompts"), 0);
    cr_assert_str_eq(json_object_get_string(mt_jget(p, "name")), "once");
    cr_assert_str_eq(json_object_get_string(mt_jget(p, "text")), "Once upon a time");
    json_object *g = mt_jget(p, "greedy");
    json_object *t = mt_jget(g, "tokens"), *lp = mt_jget(g, "logprobs");
    greedy r = {0};
    r.n = (int)json_object_array_length(t);
    cr_assert_eq(r.n, 200);
    for (int i = 0; i < r.n; i++) {
        r.ids[i] = json_object_get_int(mt_jidx(t, (size_t)i));
        r.logprob[i] = json_object_get_double(mt_jidx(lp, (size_t)i));
    }
    json_object *top = mt_jget(p, "top");
    for (size_t i = 0; i < 10; i++) {
        r.top_ids[i] = json_object_get_int(mt_jget(mt_jidx(top, i), "id"));
        r.top_lp[i] = json_object_get_double(mt_jget(mt_jidx(top, i), "logprob"));
    }
    json_object_put(ref);
    return r;
}

// ---------------------------------------------------------------------------------------------
// mint-run: text

Test(mint_run, greedy_text_is_llama_cpp_s) {
    greedy g = reference_greedy();
    mint_model *m = open_stories();
    char *gen = decode(m, g.ids, (size_t)g.n, false);
    mint_model_close(m);
    char *want = malloc(strlen(gen) + 64);
    sprintf(want, "Once upon a time%s\n", gen);
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run", "-m '%s' -p 'Once upon a time' -n 200 --temp 0 -t 1",
                      mt_data_path(STORIES));
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, want);
    // The timing summary: prompt and generation, each with tokens per second.
    cr_assert_eq(token_count(err, "prompt eval"), 5);
    cr_assert_eq(token_count(err, "generation"), 200);
    cr_assert_gt(tokens_per_second(err, "prompt eval"), 0);
    cr_assert_gt(tokens_per_second(err, "generation"), 0);
    free(gen);
    free(want);
    free(out);
    free(err);
}

// The fenced block after "### Golden output" in shared/data/README.md.
static char *golden_story(void) {
    char *readme = (char *)mt_read_file(mt_data_path("README.md"), NULL);
    cr_assert(readme);
    const char *h = strstr(readme, "### Golden output");
    cr_assert(h);
    const char *open = strstr(h, "```\n");
    cr_assert(open);
    open += 4;
    const char *close = strstr(open, "```");
    cr_assert(close);
    char *s = strndup(open, (size_t)(close - open));
    free(readme);
    return s;
}

Test(mint_run, golden_story_from_bos) {
    char *want = golden_story();
    cr_assert(strncmp(want, "Once upon a time, there was a little girl named Lily.", 52) == 0);
    cr_assert_eq(count_lines(want), 4);
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run", "-m '%s' --prompt-ids 1 -n 256 --temp 0 -t 1",
                      mt_data_path(STORIES));
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, want);
    cr_assert_eq(token_count(err, "generation"), 256);
    free(want);
    free(out);
    free(err);
}

Test(mint_run, json_tokens_with_alternatives) {
    greedy g = reference_greedy();
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run",
                      "-m '%s' -p 'Once upon a time' --json -n 5 --n-probs 3 --temp 0 -t 1",
                      mt_data_path(STORIES));
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(count_lines(out), 5, "%s", out);
    mint_model *m = open_stories();
    char *line = out;
    for (int i = 0; i < 5; i++) {
        char *nl = strchr(line, '\n');
        *nl = '\0';
        json_object *o = json_tokener_parse(line);
        cr_assert(o, "line %d is not JSON: %s", i, line);
        int id = json_object_get_int(mt_jget(o, "id"));
        cr_assert_eq(id, g.ids[i], "token %d: %d, llama.cpp %d", i, id, g.ids[i]);
        char piece[64];
        size_t k = mint_token_to_piece(m, id, false, piece, sizeof piece);
        piece[k] = '\0';
        cr_assert_str_eq(json_object_get_string(mt_jget(o, "piece")), piece);
        double lp = json_object_get_double(mt_jget(o, "logprob"));
        cr_assert_leq(fabs(lp - g.logprob[i]), 1e-4, "token %d: logprob %.9f, llama.cpp %.9f", i,
                      lp, g.logprob[i]);
        json_object *top = mt_jget(o, "top");
        cr_assert_eq(json_object_array_length(top), 3);
        double prev = 0;
        for (size_t j = 0; j < 3; j++) {
            json_object *e = mt_jidx(top, j);
            double tlp = json_object_get_double(mt_jget(e, "logprob"));
            int tid = json_object_get_int(mt_jget(e, "id"));
            cr_assert(json_object_is_type(mt_jget(e, "piece"), json_type_string));
            if (j == 0) cr_assert_eq(tid, id, "the greedy token heads the list");
            if (j > 0) cr_assert_leq(tlp, prev, "alternatives in order");
            if (i == 0) { // after the prompt, llama.cpp's top-10 is known
                cr_assert_eq(tid, g.top_ids[j]);
                cr_assert_leq(fabs(tlp - g.top_lp[j]), 1e-4, "%.9f vs %.9f", tlp, g.top_lp[j]);
            }
            prev = tlp;
        }
        json_object_put(o);
        line = nl + 1;
    }
    mint_model_close(m);
    free(out);
    free(err);
}

Test(mint_run, no_kv_cache_gives_the_same_text) {
    char *with, *e1, *without, *e2;
    const char *model = keep(mt_synth("small", "F32"));
    cr_assert_eq(run_tool(&with, &e1, "mint-run",
                          "-m '%s' -p 'Once upon a time' -n 30 --temp 0 -t 1", model),
                 0, "%s", e1);
    cr_assert_eq(run_tool(&without, &e2, "mint-run",
                          "-m '%s' -p 'Once upon a time' -n 30 --temp 0 -t 1 --no-kv-cache", model),
                 0, "%s", e2);
    cr_assert_str_eq(without, with);
    cr_assert_eq(token_count(e2, "naive gen"), 30);
    cr_assert_eq(token_count(e2, "kv-cache gen"), 30);
    cr_assert_gt(tokens_per_second(e2, "naive gen"), 0);
    cr_assert_gt(tokens_per_second(e2, "kv-cache gen"), 0);
    cr_assert(strstr(e2, "speed-up"), "%s", e2);
    cr_assert(strstr(e2, "greedy tokens  = identical in both modes"), "%s", e2);
    free(with);
    free(without);
    free(e1);
    free(e2);
}

Test(mint_run, seed_reproduces_sampling) {
    const char *model = keep(mt_synth("small", "F32"));
    char *a, *b, *c, *err;
    const char *args = "-m '%s' -p 'Once upon a time' -n 60 --temp 0.8 -t 1 -s %d";
    cr_assert_eq(run_tool(&a, &err, "mint-run", args, model, 42), 0, "%s", err);
    free(err);
    cr_assert_eq(run_tool(&b, &err, "mint-run", args, model, 42), 0, "%s", err);
    free(err);
    cr_assert_eq(run_tool(&c, &err, "mint-run", args, model, 7), 0, "%s", err);
    free(err);
    cr_assert_str_eq(a, b, "the same seed gave different text");
    cr_assert_str_neq(a, c, "seeds 42 and 7 gave the same 60 tokens");
    // Greedy does not depend on the seed.
    char *g1, *g2;
    cr_assert_eq(run_tool(&g1, &err, "mint-run", "-m '%s' -n 20 --temp 0 -t 1 -s 1", model), 0);
    free(err);
    cr_assert_eq(run_tool(&g2, &err, "mint-run", "-m '%s' -n 20 --temp 0 -t 1 -s 2", model), 0);
    free(err);
    cr_assert_str_eq(g1, g2);
    free(a);
    free(b);
    free(c);
    free(g1);
    free(g2);
}

Test(mint_run, full_context_stops_cleanly) {
    greedy g = reference_greedy();
    mint_model *m = open_stories();
    char *gen = decode(m, g.ids, 11, false); // 16 cells - 5 prompt tokens
    mint_model_close(m);
    char *out, *err;
    int rc =
        run_tool(&out, &err, "mint-run", "-m '%s' -p 'Once upon a time' -c 16 -n 100 --temp 0 -t 1",
                 mt_data_path(STORIES));
    cr_assert_eq(rc, 0, "%s", err);
    char want[512];
    snprintf(want, sizeof want, "Once upon a time%s\n", gen);
    cr_assert_str_eq(out, want);
    cr_assert(strstr(err, "context full (16 tokens); stopping"), "%s", err);
    cr_assert_eq(token_count(err, "generation"), 11);
    // A prompt that does not fit at all is an error.
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-run", "-m '%s' -p 'Once upon a time' -c 5 -n 10 --temp 0 -t 1",
                  mt_data_path(STORIES));
    cr_assert(rc != 0 && rc < 128);
    cr_assert(strstr(err, "raise -c"), "%s", err);
    free(gen);
    free(out);
    free(err);
}

Test(mint_run, dump_graph_lists_the_nodes) {
    char *out, *err;
    int rc =
        run_tool(&out, &err, "mint-run", "-m '%s' --dump-graph -t 1", mt_synth("small", "F32"));
    cr_assert_eq(rc, 0, "%s", err);
    // First the architecture's description (runtime/engine/arch.c), then the metadata keys it
    // reads (runtime/engine/arch_keys.c), a line each, then the nodes.
    cr_assert(!strncmp(out,
                       "# architecture llama: RMSNorm, RoPE (pairs 2i, 2i+1), SwiGLU feed-forward;",
                       74),
              "%s", out);
    const char *keys = strstr(out, "\n# metadata keys:\n");
    cr_assert_not_null(keys, "%s", out);
    cr_assert(strstr(keys, "\n#  llama.embedding_length (uint, required): "), "%s", out);
    cr_assert(strstr(keys, "\n#  llama.context_length (uint, optional; absent: 2048): "), "%s",
              out);
    int n_keys = 0;
    const char *line = keys + 1;
    while ((line = strchr(line, '\n')) && !strncmp(line + 1, "#  ", 3)) {
        n_keys++;
        line++;
    }
    cr_assert_not_null(line);
    int n_nodes = 0;
    cr_assert_eq(sscanf(line + 1, "# %d nodes", &n_nodes), 1, "%s", out);
    // 4 layers of 16 nodes, the embedding lookup, the gather of the wanted rows, the final norm
    // and the output matmul.
    cr_assert_eq(n_nodes, 4 * 16 + 4);
    cr_assert_gt(n_keys, 10);
    cr_assert_eq(count_lines(out), n_nodes + 3 + n_keys);
    cr_assert(strstr(out, "GET_ROWS  token_embd"), "%s", out);
    cr_assert(strstr(out, "MATMUL    blk.0.attn_q         xb -> q [256]  W F32 [256, 256]"), "%s",
              out);
    cr_assert(strstr(out, "ATTENTION blk.3.attn"), "%s", out);
    cr_assert(strstr(out, "GATHER    out_rows"), "%s", out);
    cr_assert(strstr(out, "blk.3.ffn_down"), "%s", out);
    cr_assert(strstr(out, "output"), "%s", out);
    free(out);
    free(err);
}

// ---------------------------------------------------------------------------------------------
// mint-run: errors

Test(mint_run, bad_arguments_are_one_line_errors) {
    char readme[4200];
    snprintf(readme, sizeof readme, "%s/README.md", getenv("MINT_SOURCE_DIR"));
    const char *model = keep(mt_synth("small", "F32"));
    static const struct {
        const char *args; // its one %s is the model path
        const char *needle;
    } cases[] = {
        {"-m '%s' -n abc", "-n expects an integer"},
        {"-m '%s' -n -2", "-n expects an integer"},
        {"-m '%s' -t 0", "-t expects an integer"},
        {"-m '%s' -t 1.5", "-t expects an integer"},
        {"-m '%s' --top-p 2", "--top-p expects a number"},
        {"-m '%s' --temp -1", "--temp expects a number"},
        {"-m '%s' --temp nan", "--temp expects a number"},
        {"-m '%s' --min-p x", "--min-p expects a number"},
        {"-m '%s' -c 99999999999", "-c expects an integer"},
        {"-m '%s' -s x", "-s expects an integer"},
        {"-m '%s' --bogus", "unknown option '--bogus'"},
        {"-m '%s' --bogus 3", "unknown option '--bogus'"},
        {"-m '%s' stray", "unexpected argument 'stray'"},
        {"-m '%s' -n", "-n needs a value"},
        {"-m '%s' -p", "-p needs a value"},
        {"-m '%s' --kv-type f8", "--kv-type expects f32, f16, q8_0 or q4_0"},
        {"-m '%s' -p hi --prompt-ids 1", "only one of"},
        {"-m '%s' --prompt-ids 1,x", "--prompt-ids expects"},
        {"-m '%s' --prompt-ids 1,512 -n 1", "token id 512 is outside 0..511"},
        {"-m '%s' --n-probs 3", "--n-probs needs --json"},
        {"-m '%s' -cnv --chat-template nope", "--chat-template expects"},
        {"-m '%s' -cnv --no-kv-cache --chat-template zephyr", "cannot be used with --chat"},
        {"-m '%s' -f /nonexistent/prompt.txt", "/nonexistent/prompt.txt"},
        {"-m '%s.missing'", ".missing"},
        {"-m '%s' -m", "-m needs a value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char args[4400];
        snprintf(args, sizeof args, cases[i].args, model);
        char *out, *err;
        int rc = run_tool(&out, &err, "mint-run", "-t 1 %s < /dev/null", args);
        expect_one_line_error(rc, out, err, cases[i].needle, args);
        free(out);
        free(err);
    }
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-run", "-n 5 < /dev/null");
    expect_one_line_error(rc, out, err, "no model given", "no -m");
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-run", "-m '%s' -n 5 < /dev/null", readme);
    expect_one_line_error(rc, out, err, "GGUF", "not a model");
    free(out);
    free(err);
}

// ---------------------------------------------------------------------------------------------
// mint-run: chat

static size_t n_tokens(const mint_model *m, const char *text, bool add_special) {
    int32_t ids[512];
    size_t n;
    mint_err err;
    cr_assert_eq(mint_tokenize(m, text, strlen(text), add_special, true, ids, 512, &n, &err),
                 MINT_OK, "%s", err.msg);
    return n;
}

Test(mint_run, chat_reuses_the_cache) {
    static const char *u1 = "Hello there", *u2 = "Tell me a story about a cat";
    char input[256];
    snprintf(input, sizeof input, "%s\n%s\n", u1, u2);
    char args[4400];
    snprintf(args, sizeof args, "-m '%s' --chat-template zephyr -cnv -v -n 8 --temp 0 -t 1",
             mt_data_path(STORIES));
    char *out, *err;
    int rc = run_tool_stdin(&out, &err, input, "mint-run", args);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(err, "chat template zephyr"), "%s", err);
    cr_assert_eq(count_lines(out), 2, "one reply line per turn:\n%s", out);

    // Turn 1: the whole rendered prompt, BOS first. Turn 2: only the text after turn 1's reply
    // (its end of turn, the new user message, the assistant header), everything before reused.
    // (llama.cpp's "zephyr" ends a turn with the text <|endoftext|>, not the vocabulary's EOS.)
    mint_model *m = open_stories();
    char turn1[256], delta[256];
    snprintf(turn1, sizeof turn1, "<|user|>\n%s<|endoftext|>\n<|assistant|>\n", u1);
    snprintf(delta, sizeof delta, "<|endoftext|>\n<|user|>\n%s<|endoftext|>\n<|assistant|>\n", u2);
    const long want1 = (long)n_tokens(m, turn1, true), want2 = (long)n_tokens(m, delta, false);
    mint_model_close(m);
    long e1, r1, e2, r2;
    mt_turn_counts(err, 1, &e1, &r1);
    mt_turn_counts(err, 2, &e2, &r2);
    cr_assert_eq(e1, want1, "turn 1 evaluated %ld tokens, expected %ld", e1, want1);
    cr_assert_eq(r1, 0);
    // Each reply is 8 tokens (-n 8; stories260K does not emit EOS), and all of turn 1's stay in
    // the cache.
    cr_assert_eq(token_count(err, "generation"), 16);
    cr_assert_eq(r2, e1 + 8, "turn 2 reused %ld tokens, turn 1 left %ld in the cache", r2, e1 + 8);
    cr_assert_eq(e2, want2, "turn 2 evaluated %ld tokens, its new text is %ld", e2, want2);
    cr_assert_eq(token_count(err, "prompt eval"), e1 + e2);
    free(out);
    free(err);
}

Test(mint_run, chat_without_a_template_is_an_error) {
    char args[4400];
    snprintf(args, sizeof args, "-m '%s' -cnv -n 4 -t 1", mt_data_path(STORIES));
    char *out, *err;
    int rc = run_tool_stdin(&out, &err, "hello\n", "mint-run", args);
    expect_one_line_error(rc, out, err, "the model has no chat template", "chat");
    cr_assert(strstr(err, "--chat-template"), "%s", err);
    free(out);
    free(err);
}

// ---------------------------------------------------------------------------------------------
// mint-perplexity

Test(mint_perplexity, bad_arguments_are_one_line_errors) {
    const char *model = keep(mt_synth("small", "F32"));
    const char *text = keep(own_text_path());
    char a[20][4400];
    const char *needle[20];
    int n = 0;
    snprintf(a[n], 4400, "%s", "");
    needle[n++] = "no model given";
    snprintf(a[n], 4400, "-m '%s'", model);
    needle[n++] = "no text given";
    snprintf(a[n], 4400, "-m '%s' -f /nonexistent/text.txt", model);
    needle[n++] = "/nonexistent/text.txt";
    snprintf(a[n], 4400, "-m /nonexistent/m.gguf -f '%s'", text);
    needle[n++] = "/nonexistent/m.gguf";
    snprintf(a[n], 4400, "-m '%s' -f '%s' --bogus", model, text);
    needle[n++] = "unknown option '--bogus'";
    snprintf(a[n], 4400, "-m '%s' -f '%s' stray", model, text);
    needle[n++] = "unexpected argument 'stray'";
    snprintf(a[n], 4400, "-m '%s' -f '%s' -c abc", model, text);
    needle[n++] = "-c expects an integer";
    snprintf(a[n], 4400, "-m '%s' -f '%s' -c 4", model, text);
    needle[n++] = "-c expects an integer";
    snprintf(a[n], 4400, "-m '%s' -f '%s' --chunks 0", model, text);
    needle[n++] = "--chunks expects an integer";
    snprintf(a[n], 4400, "-m '%s' -f '%s' -t", model, text);
    needle[n++] = "-t needs a value";
    snprintf(a[n], 4400, "-m '%s' -f '%s' --kv-type q8", model, text);
    needle[n++] = "--kv-type expects";
    snprintf(a[n], 4400, "-m '%s' --kl-divergence", model);
    needle[n++] = "--kl-divergence needs --kl-divergence-base";
    for (int i = 0; i < n; i++) {
        char *out, *err;
        int rc = run_tool(&out, &err, "mint-perplexity", "%s", a[i]);
        expect_one_line_error(rc, out, err, needle[i], a[i]);
        free(out);
        free(err);
    }
}

Test(mint_perplexity, text_too_short) {
    const char *path = keep(mt_path(mt_tmpdir(), "short.txt"));
    cr_assert(mt_write_file(path, "Once upon a time.", 17));
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-perplexity", "-m '%s' -f '%s' -c 128 -t 1",
                      mt_synth("small", "F32"), path);
    cr_assert(rc != 0 && rc < 128, "status %d", rc);
    cr_assert(strstr(err, "needs at least 256"), "%s", err);
    cr_assert_null(strstr(out, "Final estimate"));
    free(out);
    free(err);
}

Test(mint_perplexity, ten_chunks) {
    char *out, *err;
    const char *model = keep(mt_data_path(STORIES));
    const char *text = keep(mt_data_path("tinystories_val.txt"));
    int rc = run_tool(&out, &err, "mint-perplexity", "-m '%s' -f '%s' -c 128 --chunks 10 -t 1",
                      model, text);
    cr_assert_eq(rc, 0, "%s", err);
    const char *f = strstr(out, "Final estimate: PPL = ");
    cr_assert(f, "%s", out);
    double ppl, pm;
    cr_assert_eq(sscanf(f, "Final estimate: PPL = %lf +/- %lf", &ppl, &pm), 2, "%s", f);
    cr_assert(strstr(out, "[10]"), "per-chunk progress: %s", out);
    // The library's figure for the same run, printed the same way.
    mint_model *m = open_stories();
    size_t len;
    char *t = (char *)mt_read_file(text, &len);
    mint_ppl_params p = mint_ppl_default_params();
    p.n_ctx = 128;
    p.n_chunks = 10;
    p.n_threads = 1;
    mint_ppl_result r;
    mint_err e;
    cr_assert_eq(mint_perplexity(m, t, len, &p, &r, &e), MINT_OK, "%s", e.msg);
    char want[128];
    snprintf(want, sizeof want, "Final estimate: PPL = %.4f +/- %.5f\n", r.ppl, r.ppl_err);
    cr_assert(strstr(out, want), "wanted '%s' in:\n%s", want, out);
    cr_assert_gt(ppl, 2);
    cr_assert_lt(ppl, 8);
    free(t);
    mint_model_close(m);
    free(out);
    free(err);
}

// ---------------------------------------------------------------------------------------------
// mint-quantize

Test(mint_quantize, bad_arguments_are_one_line_errors) {
    const char *model = keep(mt_synth("small", "F32"));
    const char *out_path = keep(mt_path(mt_tmpdir(), "q.gguf"));
    char a[20][4400];
    const char *needle[20];
    int n = 0;
    snprintf(a[n], 4400, "%s", "");
    needle[n++] = "expected IN OUT TYPE";
    snprintf(a[n], 4400, "'%s' '%s'", model, out_path);
    needle[n++] = "expected IN OUT TYPE";
    snprintf(a[n], 4400, "--bogus");
    needle[n++] = "unknown option '--bogus'";
    snprintf(a[n], 4400, "'%s' '%s' Q4_X", model, out_path);
    needle[n++] = "file type 'Q4_X' is unknown";
    snprintf(a[n], 4400, "'%s' '%s' IQ2_XXS", model, out_path);
    needle[n++] = "IQ2_XXS";
    snprintf(a[n], 4400, "'%s' '%s' Q4_0 -t 0", model, out_path);
    needle[n++] = "-t expects an integer";
    snprintf(a[n], 4400, "'%s' '%s' Q4_0 0", model, out_path);
    needle[n++] = "NTHREADS expects an integer";
    snprintf(a[n], 4400, "'%s' '%s' Q4_0 --tensor-type attn_v", model, out_path);
    needle[n++] = "expected PATTERN=TYPE";
    snprintf(a[n], 4400, "'%s' '%s' Q4_0 --output-tensor-type Q9", model, out_path);
    needle[n++] = "--output-tensor-type 'Q9'";
    snprintf(a[n], 4400, "/nonexistent/in.gguf '%s' Q4_0", out_path);
    needle[n++] = "/nonexistent/in.gguf";
    snprintf(a[n], 4400, "'%s' '%s' Q4_0", mt_synth("small", "Q8_0"), out_path);
    needle[n++] = "--allow-requantize";
    snprintf(a[n], 4400, "'%s' '%s' Q4_0 --overwrite", model, model);
    needle[n++] = "refusing to write over the input";
    snprintf(a[n], 4400, "--synthetic small");
    needle[n++] = "--synthetic needs -o OUT";
    snprintf(a[n], 4400, "--synthetic huge -o '%s'", out_path);
    needle[n++] = "huge";
    snprintf(a[n], 4400, "--synthetic small --type Q4_X -o '%s'", out_path);
    needle[n++] = "Q4_X";
    for (int i = 0; i < n; i++) {
        char *out, *err;
        int rc = run_tool(&out, &err, "mint-quantize", "%s --no-progress", a[i]);
        expect_one_line_error(rc, out, err, needle[i], a[i]);
        cr_assert(access(out_path, F_OK) != 0, "%s: left %s behind", a[i], out_path);
        free(out);
        free(err);
    }
}

Test(mint_quantize, existing_output_needs_overwrite) {
    const char *model = keep(mt_synth("small", "F32"));
    char out_path[4200];
    snprintf(out_path, sizeof out_path, "%s", mt_path(mt_tmpdir(), "q.gguf"));
    cr_assert(mt_write_file(out_path, "old", 3));
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-quantize", "--no-progress '%s' '%s' Q8_0", model, out_path);
    expect_one_line_error(rc, out, err, "--overwrite", "existing OUT");
    size_t n;
    uint8_t *b = mt_read_file(out_path, &n);
    cr_assert(b && n == 3 && !memcmp(b, "old", 3), "OUT was changed");
    free(b);
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-quantize", "--no-progress --overwrite '%s' '%s' Q8_0 1", model,
                  out_path);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(err, "wrote"), "%s", err);
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-inspect", "--verify '%s'", out_path);
    cr_assert_eq(rc, 0, "%s", err);
    free(out);
    free(err);
}

Test(mint_quantize, synthetic_model_runs) {
    char path[4200];
    snprintf(path, sizeof path, "%s", mt_path(mt_tmpdir(), "syn.gguf"));
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-quantize",
                      "--synthetic small --type Q4_K_M -t 1 --no-progress -o '%s'", path);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(err, "random weights"), "%s", err);
    free(out);
    free(err);
    mint_file *f;
    mint_err e;
    cr_assert_eq(mint_file_open(path, &f, &e), MINT_OK, "%s", e.msg);
    uint32_t ft;
    cr_assert_eq(mint_file_get_u32(f, "general.file_type", &ft, &e), MINT_OK, "%s", e.msg);
    cr_assert_eq(ft, 15, "MOSTLY_Q4_K_M");
    mint_file_close(f);
    rc = run_tool(&out, &err, "mint-run", "-m '%s' --prompt-ids 1,100,200 -n 8 --temp 0 -t 1 -v",
                  path);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(token_count(err, "generation"), 8);
    cr_assert(strstr(err, "Q4_K"), "%s", err);
    free(out);
    free(err);
}

// ---------------------------------------------------------------------------------------------
// mint-bench: a short run of every test kind (figures are not asserted: speed is measured, not
// tested), and its argument errors.

Test(mint_bench, json_has_every_test_and_thread_count) {
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-bench",
                      "-m '%s' -t 1,2 -p 16 -n 8 -r 3 --membw-gib 0.01 -o json",
                      mt_synth("small", "F32"));
    cr_assert_eq(rc, 0, "status %d: %s", rc, err);
    int n = 0;
    for (const char *s = out; (s = strstr(s, "\"tps_median\":")) != NULL; s++) n++;
    cr_assert_eq(n, 4, "pp16 and tg8 at 1 and 2 threads:\n%s", out);
    cr_assert(strstr(out, "\"test\":\"pp16\""), "%s", out);
    cr_assert(strstr(out, "\"test\":\"tg8\""), "%s", out);
    cr_assert(strstr(out, "\"threads\":2"), "%s", out);
    cr_assert(strstr(out, "\"reps\":3"), "%s", out);
    free(out);
    free(err);
}

// The md table's cells of the row of `model` whose test column is `test`: cells[i] points into
// a copy owned by the caller (*buf), trimmed; returns the count.
static int table_row(const char *out, const char *model, const char *test, char **buf,
                     char *cells[16]) {
    char head[128];
    snprintf(head, sizeof head, "| %s |", model);
    for (const char *line = out; line && *line;
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, head, strlen(head)) != 0) continue;
        size_t len = strcspn(line, "\n");
        *buf = strndup(line, len);
        int n = 0;
        for (char *save, *c = strtok_r(*buf, "|", &save); c && n < 16;
             c = strtok_r(NULL, "|", &save)) {
            while (*c == ' ') c++;
            char *end = c + strlen(c);
            while (end > c && end[-1] == ' ') *--end = 0;
            cells[n++] = c;
        }
        if (n > 7 && strcmp(cells[7], test) == 0) return n;
        free(*buf);
    }
    cr_assert_fail("no row for %s %s in:\n%s", model, test, out);
    return 0;
}

// Issue 30: stories260K (about 1 MB) printed "0.00 GiB", "0.00 B" and "of bw 193%". Sizes now take
// the unit that fits, and a token whose reads fit in the last-level cache (or outrun the memory
// probe) gets no share of memory bandwidth above 100%; the JSON flags the same rows.
Test(mint_bench, a_tiny_model_shows_its_size_and_no_share_above_the_memory_bound) {
    const char *model = keep(mt_data_path(STORIES));
    char *out, *err;
    int rc =
        run_tool(&out, &err, "mint-bench", "-m '%s' -p 0 -n 64 -r 3 -t 1 --membw-gib 0.25", model);
    cr_assert_eq(rc, 0, "status %d: %s", rc, err);
    char *buf, *cells[16];
    int n = table_row(out, STORIES, "tg64", &buf, cells);
    cr_assert_eq(n, 12, "%s", out);
    // The file is 1185376 bytes: 1.13 MiB. Its parameters: 292 K (llama-bench's K/M/B).
    cr_assert_str_eq(cells[1], "1.13 MiB", "%s", out);
    size_t pl = strlen(cells[2]);
    cr_assert(pl > 2 && strcmp(cells[2] + pl - 2, " K") == 0 && strncmp(cells[2], "0.00", 4) != 0,
              "params cell '%s'", cells[2]);
    const char *share = cells[11];
    if (strcmp(share, "fits in cache") != 0 && strcmp(share, "n/a (cache)") != 0) {
        double pct = 0;
        cr_assert_eq(sscanf(share, "%lf%%", &pct), 1, "share cell '%s'", share);
        cr_assert_leq(pct, 100.0, "a share above the memory bound: %s", out);
    } else {
        cr_assert(strstr(err, "the weights come from cache"), "%s", err);
    }
    cr_assert(strstr(err, "1.13 MiB file"), "%s", err);
    cr_assert_null(strstr(out, "0.00 GiB"), "%s", out);
    free(buf);
    free(out);
    free(err);

    // JSON: the same numbers as before, and in_cache wherever the share exceeds the bound.
    rc = run_tool(&out, &err, "mint-bench", "-m '%s' -p 0 -n 64 -r 3 -t 1 --membw-gib 0.25 -o json",
                  model);
    cr_assert_eq(rc, 0, "status %d: %s", rc, err);
    const char *at = strstr(out, "\"bw_share\":");
    cr_assert_not_null(at, "%s", out);
    double bw_share = atof(at + strlen("\"bw_share\":"));
    cr_assert(strstr(out, "\"llc_bytes\":"), "%s", out);
    const bool in_cache = strstr(out, "\"in_cache\":true") != NULL;
    cr_assert(in_cache || strstr(out, "\"in_cache\":false"), "%s", out);
    cr_assert(in_cache || bw_share <= 1.0, "share %g above the bound without in_cache: %s",
              bw_share, out);
    free(out);
    free(err);
}

Test(mint_bench, bad_arguments_are_one_line_errors) {
    const char *model = keep(mt_synth("small", "F32"));
    char a[12][4400];
    const char *needle[12];
    int n = 0;
    snprintf(a[n], 4400, "%s", "");
    needle[n++] = "no model given";
    snprintf(a[n], 4400, "-m /nonexistent/m.gguf --membw-gib 0");
    needle[n++] = "/nonexistent/m.gguf";
    snprintf(a[n], 4400, "-m '%s' -t 0", model);
    needle[n++] = "-t expects an integer";
    snprintf(a[n], 4400, "-m '%s' -t 1,x", model);
    needle[n++] = "-t expects an integer";
    snprintf(a[n], 4400, "-m '%s' -r 0", model);
    needle[n++] = "-r expects an integer";
    snprintf(a[n], 4400, "-m '%s' -p -5", model);
    needle[n++] = "-p expects an integer";
    snprintf(a[n], 4400, "-m '%s' -o xml", model);
    needle[n++] = "-o expects md or json";
    snprintf(a[n], 4400, "-m '%s' --kv-type q8", model);
    needle[n++] = "--kv-type expects";
    snprintf(a[n], 4400, "-m '%s' --membw-gib 100", model);
    needle[n++] = "--membw-gib";
    snprintf(a[n], 4400, "-m '%s' --bogus 1", model);
    needle[n++] = "unknown option '--bogus'";
    snprintf(a[n], 4400, "-m '%s' -r", model);
    needle[n++] = "-r needs a value";
    for (int i = 0; i < n; i++) {
        char *out, *err;
        int rc = run_tool(&out, &err, "mint-bench", "%s", a[i]);
        expect_one_line_error(rc, out, err, needle[i], a[i]);
        free(out);
        free(err);
    }
}
