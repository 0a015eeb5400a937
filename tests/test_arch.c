// test_arch.c - every architecture of the table (runtime/engine/arch.c) against llama.cpp, on the
// tiny synthetic files mint writes (mint_synth_write: random weights, llama.cpp's tensor names and
// metadata keys), and against itself (the plain forward pass, thread counts, batch shapes).
//
// The reference is tests/reference/arch_tiny.json (tests/reference/README.md says how it was
// made): llama.cpp's token ids, top-10 logits and 32 greedy steps for three prompts per file, with
// the sha256 of the file it ran, which is checked first: a writer that changes the file makes the
// reference stale, and this says so instead of comparing different weights. Budgets are those of
// F32 files (docs/tolerances.md 3.1 and 3.9).
#include "helpers/hang.h"
#include "helpers/helpers.h"
#include "mint.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const arches[] = {"llama3",   "qwen2",   "qwen3",    "phi3",    "gpt2",
                                     "gemma2",   "gemma3",  "qwen3moe", "mixtral", "olmoe",
                                     "qwen2moe", "gpt-oss", "lfm2",     "qwen35",  "gemma4"};
enum { N_ARCH = 15, N_CTX = 256, MAX_IDS = 128 };

#define BUDGET_LOGIT   2e-4 // docs/tolerances.md 3.1: |dlogit| of every compared logit
#define BUDGET_LOGPROB 1e-4 // log-probability of llama.cpp's greedy token
// GPT-2's GELU (and Gemma's GeGLU) reads ggml's table at its input rounded to f16: where mint's
// input and llama.cpp's differ by an ulp of f32 across an f16 rounding boundary, the two outputs
// differ by an ulp of f16 (2^-11 relative), which the following layers carry to the logits
// (docs/tolerances.md 3.9: measured 4.6e-4 on the tiny file, 6.4e-4 on GPT-2's real shape;
// 8.8e-4 on the tiny Gemma 4, eight layers of two such GELUs each).
#define BUDGET_GELU 2e-3

static bool uses_gelu(const char *arch) {
    return strcmp(arch, "gpt2") == 0 || strncmp(arch, "gemma", 5) == 0;
}
static double budget_logit(const char *arch) {
    return uses_gelu(arch) ? BUDGET_GELU : BUDGET_LOGIT;
}
static double budget_logprob(const char *arch) {
    return uses_gelu(arch) ? BUDGET_GELU : BUDGET_LOGPROB;
}

static json_object *reference(void) {
    return mt_json_source("tests/reference/arch_tiny.json");
}

// The tiny synthetic file of an architecture, written once per process, checked against the
// sha256 the reference ran on.
static const char *tiny_file(const char *arch) {
    static char paths[N_ARCH][4096];
    int a = 0;
    while (a < N_ARCH - 1 && strcmp(arches[a], arch) != 0) a++;
    if (paths[a][0]) return paths[a];
    char name[64];
    snprintf(name, sizeof name, "%s-tiny.gguf", arch);
    snprintf(paths[a], sizeof paths[a], "%s", mt_path(mt_tmpdir(), name));
    mint_synth_params p = {
        .preset = arch, .ftype = "F32", .seed = 1, .n_threads = 2, .shape = "tiny"};
    mint_err err;
    cr_assert_eq(mint_synth_write(&p, paths[a], &err), MINT_OK, "%s: %s", arch, err.msg);
    char cmd[16384], *out = NULL;
    snprintf(cmd, sizeof cmd, "sha256sum '%s'", paths[a]);
    cr_assert_eq(mt_run(cmd, &out, NULL), 0);
    json_object *f = mt_jget(mt_jget(reference(), "files"), arch);
    const char *want = json_object_get_string(mt_jget(f, "sha256"));
    cr_assert(strncmp(out, want, 64) == 0,
              "%s: the synthetic writer's file changed (sha256 %.64s, the reference ran %s): "
              "remake tests/reference/arch_tiny.json (tests/reference/README.md)",
              arch, out, want);
    free(out);
    return paths[a];
}

static mint_model *open_tiny(const char *arch) {
    mint_model *m;
    mint_err err;
    cr_assert_eq(mint_model_open(tiny_file(arch), NULL, &m, &err), MINT_OK, "%s", err.msg);
    return m;
}

static mint_ctx *new_ctx_n(mint_model *m, int threads, const char *isa, mint_attention algo,
                           int kv_block, int n_ctx) {
    mint_ctx_params p = mint_ctx_default_params();
    p.n_threads = threads;
    p.n_ctx = n_ctx;
    p.isa = isa;
    p.attention = algo;
    if (kv_block) p.kv_block = kv_block;
    mint_ctx *c;
    mint_err err;
    cr_assert_eq(mint_ctx_create(m, &p, &c, &err), MINT_OK, "%s", err.msg);
    return c;
}

static mint_ctx *new_ctx(mint_model *m, int threads, const char *isa, mint_attention algo,
                         int kv_block) {
    return new_ctx_n(m, threads, isa, algo, kv_block, N_CTX);
}

static double logprob(const float *l, int n, int id) {
    double mx = l[0], s = 0;
    for (int i = 1; i < n; i++) mx = l[i] > mx ? l[i] : mx;
    for (int i = 0; i < n; i++) s += exp((double)l[i] - mx);
    return (double)l[id] - mx - log(s);
}

static int argmax(const float *l, int n) {
    int b = 0;
    for (int i = 1; i < n; i++)
        if (l[i] > l[b]) b = i;
    return b;
}

// The prompt's ids as mint tokenizes it (with BOS), checked against llama.cpp's.
static int prompt_ids(mint_model *m, json_object *pr, int32_t *ids) {
    const char *text = json_object_get_string(mt_jget(pr, "prompt"));
    size_t n;
    mint_err err;
    cr_assert_eq(mint_tokenize(m, text, strlen(text), true, false, ids, MAX_IDS, &n, &err), MINT_OK,
                 "%s", err.msg);
    json_object *want = mt_jget(pr, "ids");
    cr_assert_eq(n, json_object_array_length(want), "'%s': %zu ids, llama.cpp %zu", text, n,
                 json_object_array_length(want));
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(ids[i], json_object_get_int(mt_jidx(want, i)), "'%s': id %zu", text, i);
    return (int)n;
}

// The top-10 logits after a prompt against llama.cpp's; returns the largest |dlogit|.
static double check_top(const char *arch, json_object *pr, const float *l) {
    json_object *top = mt_jget(pr, "top");
    double worst = 0;
    for (size_t k = 0; k < json_object_array_length(top); k++) {
        json_object *e = mt_jidx(top, k);
        const int id = json_object_get_int(mt_jidx(e, 0));
        const double d = fabs(l[id] - json_object_get_double(mt_jidx(e, 1)));
        worst = fmax(worst, d);
        cr_assert_leq(d, budget_logit(arch), "%s '%s': logit of %d off by %g", arch,
                      json_object_get_string(mt_jget(pr, "prompt")), id, d);
    }
    return worst;
}

// ---------------------------------------------------------------------------------------------
// Against llama.cpp

ParameterizedTestParameters(arch, matches_llama_cpp) {
    static int idx[N_ARCH] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    return cr_make_param_array(int, idx, N_ARCH);
}

// The reference's prompts in contexts of n_ctx positions: the same ids, the top-10 logits after
// the prompt with each attention algorithm, and the greedy steps with their log-probabilities.
static void compare_prompts(const char *arch, mint_model *m, json_object *prompts, int n_ctx) {
    mint_model_desc d;
    mint_model_describe(m, &d);
    double worst_top = 0, worst_lp = 0;
    int steps = 0;
    for (size_t p = 0; p < json_object_array_length(prompts); p++) {
        json_object *pr = mt_jidx(prompts, p);
        int32_t ids[MAX_IDS];
        const int n = prompt_ids(m, pr, ids);
        mint_err err;
        // Each attention algorithm after the prompt (Gemma's window and soft-cap live in each).
        const mint_attention algos[] = {MINT_ATTENTION_NAIVE, MINT_ATTENTION_ROWWISE,
                                        MINT_ATTENTION_FLASH};
        for (int a = 0; a < 3; a++) {
            mint_ctx *ca = new_ctx_n(m, 2, NULL, algos[a], 0, n_ctx);
            cr_assert_eq(mint_eval(ca, ids, n, 0, false, &err), MINT_OK, "%s", err.msg);
            worst_top = fmax(worst_top, check_top(arch, pr, mint_get_logits(ca, -1)));
            mint_ctx_free(ca);
        }
        mint_ctx *c = new_ctx_n(m, 2, NULL, MINT_ATTENTION_AUTO, 0, n_ctx);
        cr_assert_eq(mint_eval(c, ids, n, 0, false, &err), MINT_OK, "%s", err.msg);
        json_object *st = mt_jget(pr, "steps");
        for (size_t s = 0; s < json_object_array_length(st); s++, steps++) {
            const float *l = mint_get_logits(c, -1);
            const int want = json_object_get_int(mt_jidx(mt_jidx(st, s), 0));
            const int got = argmax(l, d.n_vocab);
            cr_assert_eq(got, want, "%s prompt %zu step %zu: token %d, llama.cpp %d", arch, p, s,
                         got, want);
            const double dl = fabs(logprob(l, d.n_vocab, want) -
                                   json_object_get_double(mt_jidx(mt_jidx(st, s), 1)));
            worst_lp = fmax(worst_lp, dl);
            cr_assert_leq(dl, budget_logprob(arch), "%s prompt %zu step %zu: log-prob off by %g",
                          arch, p, s, dl);
            int32_t t = got;
            cr_assert_eq(mint_eval(c, &t, 1, n + (int32_t)s, false, &err), MINT_OK, "%s", err.msg);
        }
        mint_ctx_free(c);
    }
    cr_log_info("arch %s, context %d: top-10 logits within %.3g, %d greedy steps identical, "
                "log-probs within %.3g",
                arch, n_ctx, worst_top, steps, worst_lp);
}

// Same ids, top-10 logits within 2e-4 (GPT-2: 2e-3), and 32 free-running greedy tokens identical
// with their log-probabilities within 1e-4 (2e-3) (the smallest top-1/top-2 gap of these
// references is 0.0056, phi3, 28 times its logit budget; GPT-2's is 0.012: no near tie).
ParameterizedTest(int *i, arch, matches_llama_cpp, .timeout = MT_HANG(120)) {
    const char *arch = arches[*i];
    mint_model *m = open_tiny(arch);
    compare_prompts(arch, m, mt_jget(mt_jget(mt_jget(reference(), "files"), arch), "prompts"),
                    N_CTX);
    mint_model_close(m);
}

// Phi-3's LongRoPE: the tiny file's original context is 256 positions, so the contexts above (256)
// take its short factors and one of 512 its long ones, as llama.cpp chooses; both scale cos and
// sin by the file's attn_factor. Against llama.cpp in a 512-position context, and the plain pass
// in one as well; the two sets of factors give different logits.
Test(arch, phi3_long_context_takes_long_factors, .timeout = MT_HANG(120)) {
    mint_model *m = open_tiny("phi3");
    json_object *lng = mt_jget(mt_jget(mt_jget(reference(), "files"), "phi3"), "long_context");
    const int n_ctx = json_object_get_int(mt_jget(lng, "n_ctx"));
    cr_assert_eq(n_ctx, 2 * N_CTX);
    compare_prompts("phi3", m, mt_jget(lng, "prompts"), n_ctx);
    mint_model_desc d;
    mint_model_describe(m, &d);
    json_object *pr = mt_jidx(mt_jget(lng, "prompts"), 0);
    int32_t ids[MAX_IDS];
    const int n = prompt_ids(m, pr, ids);
    mint_plain *plain;
    mint_err err;
    cr_assert_eq(mint_plain_create(m, n_ctx, &plain, &err), MINT_OK, "%s", err.msg);
    float *lp = malloc((size_t)d.n_vocab * sizeof *lp);
    for (int pos = 0; pos < n; pos++)
        cr_assert_eq(mint_plain_forward(plain, ids[pos], pos, lp, &err), MINT_OK, "%s", err.msg);
    check_top("phi3", pr, lp);
    mint_ctx *c = new_ctx(m, 2, NULL, MINT_ATTENTION_AUTO, 0); // 256: the short factors
    cr_assert(
        strstr(mint_ctx_graph_text(c), "(NEOX pairs, LongRoPE short factors, cos/sin x 1.118)"),
        "%s", mint_ctx_graph_text(c));
    mint_ctx *c_long = new_ctx_n(m, 1, NULL, MINT_ATTENTION_AUTO, 0, n_ctx);
    cr_assert(strstr(mint_ctx_graph_text(c_long), "LongRoPE long factors"), "%s",
              mint_ctx_graph_text(c_long));
    mint_ctx_free(c_long);
    cr_assert_eq(mint_eval(c, ids, n, 0, false, &err), MINT_OK, "%s", err.msg);
    double diff = 0;
    for (int v = 0; v < d.n_vocab; v++)
        diff = fmax(diff, fabs((double)mint_get_logits(c, -1)[v] - lp[v]));
    cr_assert_gt(diff, 1e-2, "the long and short factors gave the same logits (%g)", diff);
    cr_log_info("phi3: long and short factors differ by up to %.3g in the logits", diff);
    mint_ctx_free(c);
    free(lp);
    mint_plain_free(plain);
    mint_model_close(m);
}

// ---------------------------------------------------------------------------------------------
// Against itself

ParameterizedTestParameters(arch, plain_pass_equals_the_graph) {
    static int idx[N_ARCH] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    return cr_make_param_array(int, idx, N_ARCH);
}

// The plain forward pass (runtime/engine/forward_plain.c) gives the graph's bits on the reference
// kernels with naive attention and one KV block, token by token, for the first prompt and its
// greedy continuation; and it is within the budget of llama.cpp's top-10 on its own.
ParameterizedTest(int *i, arch, plain_pass_equals_the_graph, .timeout = MT_HANG(120)) {
    const char *arch = arches[*i];
    mint_model *m = open_tiny(arch);
    mint_model_desc d;
    mint_model_describe(m, &d);
    json_object *pr = mt_jidx(mt_jget(mt_jget(mt_jget(reference(), "files"), arch), "prompts"), 0);
    int32_t ids[MAX_IDS];
    const int n = prompt_ids(m, pr, ids);
    mint_plain *plain;
    mint_err err;
    cr_assert_eq(mint_plain_create(m, N_CTX, &plain, &err), MINT_OK, "%s", err.msg);
    mint_ctx *c = new_ctx(m, 1, "ref", MINT_ATTENTION_NAIVE, N_CTX);
    float *lp = malloc((size_t)d.n_vocab * sizeof *lp);
    int32_t tok = ids[0];
    for (int pos = 0; pos < n + 16; pos++) {
        if (pos < n) tok = ids[pos];
        cr_assert_eq(mint_plain_forward(plain, tok, pos, lp, &err), MINT_OK, "%s", err.msg);
        cr_assert_eq(mint_eval(c, &tok, 1, pos, false, &err), MINT_OK, "%s", err.msg);
        const float *lg = mint_get_logits(c, -1);
        cr_assert(memcmp(lp, lg, (size_t)d.n_vocab * sizeof *lp) == 0,
                  "%s: plain pass and graph differ at position %d", arch, pos);
        if (pos == n - 1) check_top(arch, pr, lp);
        if (pos >= n - 1) tok = argmax(lp, d.n_vocab);
    }
    free(lp);
    mint_ctx_free(c);
    mint_plain_free(plain);
    mint_model_close(m);
}

ParameterizedTestParameters(arch, bits_do_not_depend_on_threads_or_batch) {
    static int idx[N_ARCH] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    return cr_make_param_array(int, idx, N_ARCH);
}

// With every attention algorithm at the best kernel level: the last prompt's logits evaluated as
// one batch on 1 and 2 threads, and token by token, are the same bits.
ParameterizedTest(int *i, arch, bits_do_not_depend_on_threads_or_batch, .timeout = MT_HANG(120)) {
    const char *arch = arches[*i];
    mint_model *m = open_tiny(arch);
    mint_model_desc d;
    mint_model_describe(m, &d);
    json_object *pr = mt_jidx(mt_jget(mt_jget(mt_jget(reference(), "files"), arch), "prompts"), 2);
    int32_t ids[MAX_IDS];
    const int n = prompt_ids(m, pr, ids);
    const size_t bytes = (size_t)d.n_vocab * sizeof(float);
    const mint_attention algos[] = {MINT_ATTENTION_NAIVE, MINT_ATTENTION_ROWWISE,
                                    MINT_ATTENTION_FLASH};
    for (int a = 0; a < 3; a++) {
        float *first = NULL;
        for (int way = 0; way < 3; way++) { // batch on 1 thread, batch on 2, token by token on 2
            mint_ctx *c = new_ctx(m, way == 0 ? 1 : 2, NULL, algos[a], 0);
            mint_err err;
            if (way < 2)
                cr_assert_eq(mint_eval(c, ids, n, 0, false, &err), MINT_OK, "%s", err.msg);
            else
                for (int t = 0; t < n; t++)
                    cr_assert_eq(mint_eval(c, &ids[t], 1, t, false, &err), MINT_OK, "%s", err.msg);
            const float *l = mint_get_logits(c, -1);
            if (!first) {
                first = malloc(bytes);
                memcpy(first, l, bytes);
            } else
                cr_assert(memcmp(first, l, bytes) == 0, "%s, %s: way %d differs from way 0", arch,
                          mint_attention_name(algos[a]), way);
            mint_ctx_free(c);
        }
        free(first);
    }
    mint_model_close(m);
}

ParameterizedTestParameters(arch, decoding_features_work) {
    static int idx[N_ARCH] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
    return cr_make_param_array(int, idx, N_ARCH);
}

typedef struct sink {
    int32_t tok[64]; // tokens received
    int n;           // how many
} sink;

static bool collect(void *user, int32_t token) {
    sink *s = user;
    if (s->n < 64) s->tok[s->n++] = token;
    return true;
}

// The decoding features over the paged cache, on the third prompt and llama.cpp's greedy tokens
// after it: a sequence forked from another, both a token further in one batch, and a sequence
// that takes the prompt's blocks from the prefix cache (blocks of 8 positions: Gemma's tiny
// window crosses them) give the bits of one fresh context; one beam, and speculative decoding by
// prompt lookup, give llama.cpp's greedy continuation.
ParameterizedTest(int *i, arch, decoding_features_work, .timeout = MT_HANG(120)) {
    enum { N_GEN = 16 };
    const char *arch = arches[*i];
    mint_model *m = open_tiny(arch);
    mint_model_desc d;
    mint_model_describe(m, &d);
    json_object *pr = mt_jidx(mt_jget(mt_jget(mt_jget(reference(), "files"), arch), "prompts"), 2);
    int32_t ids[MAX_IDS + 1], want[N_GEN];
    const int n = prompt_ids(m, pr, ids);
    for (int s = 0; s < N_GEN; s++)
        want[s] = json_object_get_int(mt_jidx(mt_jidx(mt_jget(pr, "steps"), s), 0));
    ids[n] = want[0];
    const size_t bytes = (size_t)d.n_vocab * sizeof(float);
    mint_err err;
    mint_ctx *c = new_ctx(m, 2, NULL, MINT_ATTENTION_AUTO, 8); // blocks as below: the same sums
    cr_assert_eq(mint_eval(c, ids, n + 1, 0, false, &err), MINT_OK, "%s", err.msg);
    float *fresh = malloc(bytes);
    memcpy(fresh, mint_get_logits(c, -1), bytes);
    mint_ctx_free(c);

    mint_ctx_params p = mint_ctx_default_params();
    p.n_threads = 2;
    p.n_ctx = N_CTX;
    p.n_seq_max = 3;
    p.kv_block = 8;
    cr_assert_eq(mint_ctx_create(m, &p, &c, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_eval(c, ids, n, 0, false, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_seq_fork(c, 0, 1, &err), MINT_OK, "%s", err.msg);
    const mint_batch_entry two[2] = {{want[0], n, 0, true}, {want[0], n, 1, true}};
    cr_assert_eq(mint_decode(c, two, 2, &err), MINT_OK, "%s", err.msg);
    for (int r = 0; r < 2; r++)
        cr_assert(memcmp(mint_get_logits(c, r), fresh, bytes) == 0, "%s: sequence %d", arch, r);
    cr_assert_eq(mint_seq_truncate(c, 0, 0, &err), MINT_OK);
    cr_assert_eq(mint_seq_truncate(c, 1, 0, &err), MINT_OK);
    int32_t held = 0;
    cr_assert_eq(mint_seq_prefix(c, 2, ids, n + 1, &held, &err), MINT_OK, "%s", err.msg);
    cr_assert_geq(held, 8, "%s: %d positions from the prefix cache", arch, held);
    mint_batch_entry rest[MAX_IDS + 1];
    for (int t = held; t <= n; t++) rest[t - held] = (mint_batch_entry){ids[t], t, 2, t == n};
    cr_assert_eq(mint_decode(c, rest, n + 1 - held, &err), MINT_OK, "%s", err.msg);
    cr_assert(memcmp(mint_get_logits(c, 0), fresh, bytes) == 0, "%s: prefix cache", arch);
    mint_ctx_free(c);
    free(fresh);

    c = new_ctx(m, 2, NULL, MINT_ATTENTION_AUTO, 0);
    mint_beam_params bp = mint_beam_default_params();
    bp.n_beams = 1;
    bp.max_tokens = N_GEN;
    bp.ignore_eos = true;
    int32_t out[N_GEN], n_out;
    double lp;
    cr_assert_eq(mint_beam_search(c, ids, n, &bp, out, N_GEN, &n_out, &lp, &err), MINT_OK, "%s",
                 err.msg);
    cr_assert_eq(n_out, N_GEN);
    cr_assert(memcmp(out, want, sizeof want) == 0, "%s: one beam is not llama.cpp's greedy", arch);
    mint_ctx_free(c);

    c = new_ctx(m, 2, NULL, MINT_ATTENTION_AUTO, 0);
    mint_sampler_params sp = mint_sampler_default_params();
    sp.temp = 0;
    mint_sampler *s;
    cr_assert_eq(mint_sampler_create(&sp, d.n_vocab, &s, &err), MINT_OK);
    sink got = {.n = 0};
    mint_spec_params sq = mint_spec_default_params();
    sq.max_tokens = N_GEN;
    sq.ignore_eos = true;
    sq.on_token = collect;
    sq.user = &got;
    mint_spec_stats st;
    cr_assert_eq(mint_speculative(c, s, ids, n, &sq, &st, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(got.n, N_GEN);
    cr_assert(memcmp(got.tok, want, sizeof want) == 0, "%s: speculative is not greedy", arch);
    mint_sampler_free(s);
    mint_ctx_free(c);
    mint_model_close(m);
}

// What the report's heatmap draws (mint_ctx_capture_attention) shows Gemma's window: in the tiny
// Gemma 2 (a window of 8 keys on layer 0, none on layer 1) the keys more than 7 positions before
// a row get weight 0 on layer 0 and more than 0 on layer 1; each row's weights sum to 1.
Test(arch, captured_attention_shows_the_window, .timeout = MT_HANG(60)) {
    mint_model *m = open_tiny("gemma2");
    mint_model_desc d;
    mint_model_describe(m, &d);
    json_object *pr =
        mt_jidx(mt_jget(mt_jget(mt_jget(reference(), "files"), "gemma2"), "prompts"), 2);
    int32_t ids[MAX_IDS];
    const int n = prompt_ids(m, pr, ids);
    cr_assert_gt(n, 12);
    mint_ctx *c = new_ctx(m, 2, NULL, MINT_ATTENTION_AUTO, 0);
    const size_t per_head = (size_t)n * n;
    float *w = calloc((size_t)d.n_layer * d.n_head * per_head, sizeof *w);
    mint_err err;
    cr_assert_eq(mint_ctx_capture_attention(c, w, n, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_eval(c, ids, n, 0, false, &err), MINT_OK, "%s", err.msg);
    for (int l = 0; l < 2; l++)
        for (int h = 0; h < d.n_head; h++)
            for (int pos = 0; pos < n; pos++) {
                const float *r = w + ((size_t)l * d.n_head + h) * per_head + (size_t)pos * n;
                double sum = 0;
                for (int k = 0; k <= pos; k++) {
                    sum += r[k];
                    if (l == 0 && k < pos - 7)
                        cr_assert(r[k] == 0.0f, "layer 0 head %d: row %d key %d", h, pos, k);
                    else
                        cr_assert(r[k] > 0.0f, "layer %d head %d: row %d key %d", l, h, pos, k);
                }
                cr_assert(fabs(sum - 1) < 1e-5, "row %d sums to %g", pos, sum);
            }
    free(w);
    mint_ctx_free(c);
    mint_model_close(m);
}

// The tiny file of `arch` with n bytes at `offset` past the first `needle` in it overwritten by
// `bytes`, opened: returns the status, the message in *err.
static mint_status open_altered(const char *arch, const char *needle, size_t offset,
                                const void *bytes, size_t n, mint_err *err) {
    size_t len;
    uint8_t *b = mt_read_file(tiny_file(arch), &len);
    cr_assert_not_null(b);
    uint8_t *at = memmem(b, len, needle, strlen(needle));
    cr_assert_not_null(at, "%s: no '%s'", arch, needle);
    cr_assert_leq((size_t)(at - b) + offset + n, len);
    memcpy(at + offset, bytes, n);
    const char *bad = mt_path(mt_tmpdir(), "altered.gguf");
    cr_assert(mt_write_file(bad, b, len));
    free(b);
    mint_model *m = NULL;
    mint_status st = mint_model_open(bad, NULL, &m, err);
    mint_model_close(m);
    return st;
}

// A file whose layer lacks a tensor its architecture requires, or of an architecture mint lacks,
// is refused in one line naming the tensor or the architecture.
Test(arch, files_that_do_not_fit_their_architecture_are_refused) {
    static const struct {
        const char *arch, *needle, *with; // the first `needle` of the file becomes `with`
        mint_status st;
        const char *msg;
    } cases[] = {
        {"qwen2", "blk.0.attn_q.bias", "blk.0.xttn_q.bias", MINT_E_FORMAT,
         "'blk.0.attn_q.bias' is missing"},
        {"phi3", "blk.1.attn_qkv.weight", "blk.1.xttn_qkv.weight", MINT_E_FORMAT,
         "'blk.1.attn_qkv.weight' is missing"},
        {"gpt2", "blk.0.ffn_norm.bias", "blk.0.xfn_norm.bias", MINT_E_FORMAT,
         "'blk.0.ffn_norm.bias' is missing"},
        {"gemma2", "blk.1.post_ffw_norm", "blk.1.xost_ffw_norm", MINT_E_FORMAT,
         "'blk.1.post_ffw_norm.weight' is missing"},
        {"phi3", "rope_factors_short", "rope_factors_shorx", MINT_E_FORMAT,
         "rope_factors_short.weight is missing (LongRoPE needs both"},
        {"qwen3moe", "blk.1.ffn_up_exps", "blk.1.xfn_up_exps", MINT_E_FORMAT,
         "'blk.1.ffn_up_exps.weight' is missing"},
        {"qwen3moe", "qwen3moe.expert_count", "qwen3moe.expert_xount", MINT_E_FORMAT,
         "qwen3moe.expert_count and qwen3moe.expert_used_count are required"},
        // general.architecture is the first string "qwen2" in the file
        {"qwen2", "qwen2", "phi99", MINT_E_UNSUPPORTED,
         "architecture 'phi99' is not supported (mint runs llama, qwen2, qwen3, phi3, gpt2, "
         "gemma2, gemma3, qwen3moe, qwen2moe, olmoe, gpt-oss, lfm2, qwen35, gemma4)"},
        {"gpt-oss", "blk.1.attn_sinks", "blk.1.attn_sinkx", MINT_E_FORMAT,
         "'blk.1.attn_sinks.weight' is missing"},
        {"gpt-oss", "blk.0.ffn_down_exps.bias", "blk.0.ffn_down_exps.bixs", MINT_E_FORMAT,
         "'blk.0.ffn_down_exps.bias' is missing"},
        {"gpt-oss", "yarn", "yarx", MINT_E_UNSUPPORTED,
         "rope scaling type 'yarx' is not supported (mint does none, linear and yarn)"},
        // the hybrids' own keys and tensors
        {"lfm2", "shortconv.l_cache", "shortconv.l_cachx", MINT_E_FORMAT,
         "metadata lfm2.shortconv.l_cache is missing"},
        {"lfm2", "blk.0.shortconv.in_proj", "blk.0.shortconv.in_proX", MINT_E_FORMAT,
         "'blk.0.shortconv.in_proj.weight' is missing"},
        {"qwen35", "ssm.state_size", "ssm.state_sizx", MINT_E_FORMAT,
         "metadata qwen35.ssm.state_size is missing"},
        {"qwen35", "blk.1.ssm_conv1d", "blk.1.ssm_conv1x", MINT_E_FORMAT,
         "'blk.1.ssm_conv1d.weight' is missing"},
        // a Gemma 4 layer with keys and values of its own needs its k projection
        {"gemma4", "blk.1.attn_k.weight", "blk.1.attn_x.weight", MINT_E_FORMAT,
         "'blk.1.attn_k.weight' is missing"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        mint_err err;
        cr_assert_eq(open_altered(cases[i].arch, cases[i].needle, 0, cases[i].with,
                                  strlen(cases[i].with), &err),
                     cases[i].st, "%s %s", cases[i].arch, cases[i].with);
        cr_assert(strstr(err.msg, cases[i].msg) && !strchr(err.msg, '\n'), "%s", err.msg);
    }
    // Metadata out of range: a window longer than the context, values of another head size.
    static const struct {
        const char *arch, *key; // a u32 (or f32) key of the tiny file
        uint32_t value;         // written in place of its value (the bits of a float for f32)
        mint_status st;
        const char *msg;
    } keys[] = {
        {"gemma2", "gemma2.attention.sliding_window", 5000, MINT_E_FORMAT,
         "sliding_window = 5000 is larger than the context length 1024"},
        {"qwen3", "qwen3.attention.value_length", 64, MINT_E_UNSUPPORTED,
         "value_length 64 differs from key_length 128"},
        // a FLOAT32 key: -1.0f's bits
        {"phi3", "phi3.rope.scaling.attn_factor", 0xbf800000u, MINT_E_FORMAT,
         "phi3.rope.scaling.attn_factor = -1 must be > 0"},
        // a mixture: no experts, more used than there are, more than llama.cpp's 512, experts
        // of another width than their tensors
        {"qwen3moe", "qwen3moe.expert_count", 0, MINT_E_FORMAT,
         "qwen3moe.expert_count = 0 is outside 1.."},
        {"qwen3moe", "qwen3moe.expert_used_count", 17, MINT_E_FORMAT,
         "expert_used_count = 17 is more than expert_count 16"},
        {"qwen3moe", "qwen3moe.expert_count", 600, MINT_E_UNSUPPORTED,
         "expert_count = 600 is more than 512"},
        // Gemma 4: llama.cpp's rule would have a window layer read a full layer's cache; the
        // window layers' heads larger than the full layers'
        {"gemma4", "gemma4.attention.shared_kv_layers", 2, MINT_E_UNSUPPORTED,
         "layer 6 (window) would read the keys and values of layer 4, a full layer"},
        {"gemma4", "gemma4.attention.key_length_swa", 256, MINT_E_UNSUPPORTED,
         "at most key_length 128"},
        {"qwen3moe", "qwen3moe.expert_feed_forward_length", 128, MINT_E_FORMAT,
         "'blk.0.ffn_gate_exps.weight' has shape [256, 256, 16] (3 dims), expected [256, 128, "
         "16]"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        // A u32 or f32 key is its name, its type (4 bytes) and its value.
        mint_err err;
        cr_assert_eq(open_altered(keys[i].arch, keys[i].key, strlen(keys[i].key) + 4,
                                  &keys[i].value, 4, &err),
                     keys[i].st, "%s", keys[i].key);
        cr_assert(strstr(err.msg, keys[i].msg) && !strchr(err.msg, '\n'), "%s", err.msg);
    }
    // GPT-2 asked for more positions than it learned.
    mint_model *m = open_tiny("gpt2");
    mint_ctx_params p = mint_ctx_default_params();
    p.n_ctx = 2048;
    mint_ctx *c;
    mint_err err;
    cr_assert_eq(mint_ctx_create(m, &p, &c, &err), MINT_E_ARG);
    cr_assert(strstr(err.msg, "more than the 1024 positions the model has learned"), "%s", err.msg);
    mint_model_close(m);
}

// The routing capture (mint_ctx_capture_routing) of the tiny Qwen3-MoE: per layer and position
// k distinct experts, the best first, weights summing to 1 (renormalised); the same bits from a
// batch and token by token; refused on a dense model.
Test(arch, routing_capture_shows_the_chosen_experts, .timeout = MT_HANG(60)) {
    mint_model *m = open_tiny("qwen3moe");
    mint_model_desc d;
    mint_model_describe(m, &d);
    cr_assert_eq(d.n_expert, 16);
    cr_assert_eq(d.n_expert_used, 4);
    const int32_t ids[6] = {1, 229, 153, 132, 82, 298}, T = 8, K = 4;
    int32_t got[2][2 * 8 * 4];
    float w[2][2 * 8 * 4];
    for (int way = 0; way < 2; way++) { // the prompt as one batch, then token by token
        mint_ctx *c = new_ctx(m, 2, NULL, MINT_ATTENTION_AUTO, 0);
        mint_err err;
        memset(got[way], 0xff, sizeof got[way]);
        memset(w[way], 0, sizeof w[way]);
        cr_assert_eq(mint_ctx_capture_routing(c, got[way], w[way], T, &err), MINT_OK, "%s",
                     err.msg);
        if (way == 0) cr_assert_eq(mint_eval(c, ids, 6, 0, false, &err), MINT_OK, "%s", err.msg);
        for (int i = 0; way == 1 && i < 6; i++)
            cr_assert_eq(mint_eval(c, &ids[i], 1, i, false, &err), MINT_OK, "%s", err.msg);
        mint_ctx_free(c);
    }
    cr_assert(memcmp(got[0], got[1], sizeof got[0]) == 0 && memcmp(w[0], w[1], sizeof w[0]) == 0,
              "the routing of a batch differs from token by token");
    for (int l = 0; l < 2; l++)
        for (int p = 0; p < 6; p++) {
            const int32_t *e = &got[0][(l * T + p) * K];
            const float *x = &w[0][(l * T + p) * K];
            double sum = 0;
            for (int j = 0; j < K; j++) {
                cr_assert(e[j] >= 0 && e[j] < 16, "layer %d pos %d: expert %d", l, p, e[j]);
                for (int i = 0; i < j; i++) cr_assert_neq(e[i], e[j]);
                if (j) cr_assert_geq(x[j - 1], x[j], "the best first");
                sum += x[j];
            }
            cr_assert(fabs(sum - 1.0) < 1e-6, "layer %d pos %d: weights sum to %g", l, p, sum);
        }
    cr_assert_eq(got[0][(0 * T + 6) * K], -1, "a position past the rows is left alone");
    mint_model *dense = open_tiny("qwen3");
    mint_ctx *c = new_ctx(dense, 1, NULL, MINT_ATTENTION_AUTO, 0);
    mint_err err;
    cr_assert_eq(mint_ctx_capture_routing(c, got[0], w[0], T, &err), MINT_E_ARG);
    cr_assert(strstr(err.msg, "no experts"), "%s", err.msg);
    mint_ctx_free(c);
    mint_model_close(dense);
    mint_model_close(m);
}
