// test_forward_plain.c - the plain forward pass (runtime/engine/forward_plain.c) against the graph
// executor (mint_eval) and against llama.cpp's reference runs, on every model file of
// MINT_TEST_DATA.
//
// Against the graph. Each file: three text prompts, each followed by 64 greedy steps chosen by the
// plain pass; the same token sequence then goes through a context token by token, every
// position's logits are compared, and every step's argmax is compared with the plain pass's token
// (the first step where they differ is where the two would part generating greedily). Three
// contexts, all with naive attention and an F32 cache:
//   ref_whole  isa "ref", one KV block holding the whole sequence: bit-identical logits and all
//              64 greedy tokens of every prompt identical, on every file. The graph then does
//              exactly the plain pass's operations in the same order: the same reference dot
//              products on the same converted activations, RMSNorm, RoPE, SwiGLU and the softmax
//              kernels, and each attention output one chain of fused multiply-adds over the
//              positions.
//   ref_blocks isa "ref", the default blocks of 32 positions: attention's weighted sum of the
//              values is then one chain per block, the parts added in block order, which rounds
//              differently once a sequence passes 32 positions.
//   best       the CPU's best kernel level, blocks of 32: the SIMD dot products also sum in
//              another order (quant/kernels.h).
// The last two are held to a budget on max |dlogit| / max |logit| over the whole run, by the
// weight types (BUDGET_* below, with the measured figures), and their argmax must be the plain
// pass's token at every greedy step that is not a near tie: a step whose top-1/top-2 gap in the
// plain pass is below twice the budget, which the allowed difference could flip (as
// tests/test_model_quant.c treats llama.cpp's near ties). How many of all 192 greedy tokens are
// the same is logged.
//
// Against llama.cpp. The plain pass alone replays every prompt of the file's reference run
// (f32kv: F32 cache, plain attention) and meets the limits the graph meets in tests/test_model.c
// and tests/test_model_quant.c (MINT_TEST_DATA/reference/README.md 5.2): F32 files every logit
// within 2e-4, every log-probability within 1e-4 and all greedy tokens identical; F16/BF16 and
// quantized files teacher-forced within their max / mean |dlogit|, KL and top-1 limits, and
// free-running greedy tokens identical up to llama.cpp's first near tie.
#include "helpers/helpers.h"
#include "helpers/reference.h"
#include "quant/kernels.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N_CTX = 256, N_GREEDY = 64, MAX_SEQ = 128 };

// Budgets on max |dlogit| / max |logit| (of the plain pass) over all positions of a file, for
// ref_blocks and best. A few ulp of difference in an attention sum or a dot product carry through
// the layers as they are only while every matmul reads f32 activations. With F16/BF16 weights the
// activations are rounded to f16/bf16 first, and with quantized ones to Q8 blocks: one element
// rounding to the neighbouring step (a relative change of 2^-11, 2^-8, or 1/127 of its block's
// largest value) is the smallest change there is, and these small random-weight models with their
// sharp output heads (tiny256: logit scale 16) amplify it; the same effect is why
// tests/test_model_quant.c allows tiny256 quants 3.0 |dlogit| against llama.cpp. Measured (x86,
// AVX-512 VNNI best level): F32 weights at most 2.8e-7 (ref_blocks) and 4.3e-7 (best); F16/BF16
// 3.0e-3 and 3.7e-3 (tiny256-bf16); quantized 1.4e-2 and 1.8e-2 (tiny256-q2_k-pure).
#define BUDGET_F32   4e-6
#define BUDGET_HALF  1e-2
#define BUDGET_QUANT 4e-2

// Limits against llama.cpp's reference run, as tests/test_model.c and test_model_quant.c hold the
// graph to them.
typedef struct ref_limits {
    double max_dlogit;  // max |dlogit| over the compared logits
    double mean_dlogit; // mean |dlogit|
    double kl;          // KL(llama.cpp || mint) at the step with full logits (mean over prompts)
    double top1;        // share of teacher-forced steps whose argmax is llama.cpp's token
    bool exact_greedy;  // F32: every free-running greedy token identical, log-probs within 1e-4
} ref_limits;

static const ref_limits f32_lim = {2e-4, 2e-4, 1e-6, 1.0, true};
static const ref_limits stories_f16 = {0.03, 0.005, 1e-6, 1.0, false};
static const ref_limits tiny_f16 = {0.1, 0.015, 2e-5, 1.0, false};
static const ref_limits tiny_bf16 = {0.6, 0.08, 1e-3, 0.98, false};
static const ref_limits stories_quant = {0.8, 0.1, 3e-3, 0.97, false};
static const ref_limits tiny_quant = {3.0, 0.5, 0.09, 0.90, false};

typedef struct model_file {
    const char *path;      // relative to MINT_TEST_DATA
    const char *ref;       // reference JSON relative to MINT_TEST_DATA, or NULL
    double budget;         // BUDGET_F32, _HALF or _QUANT: the widest type its matrices read
    const ref_limits *lim; // limits against the reference, or NULL
} model_file;

static const model_file files[] = {
    {"stories260K.gguf", "reference/stories260K.json", BUDGET_F32, &f32_lim},
    {"llama-2-tiny-random.gguf", NULL, BUDGET_HALF, NULL},
    {"quant/stories260K-f16.gguf", "reference/stories260K-f16.json", BUDGET_HALF, &stories_f16},
    {"quant/stories260K-q8_0.gguf", "reference/stories260K-q8_0.json", BUDGET_QUANT,
     &stories_quant},
    {"quant/stories260K-q4_0.gguf", "reference/stories260K-q4_0.json", BUDGET_QUANT,
     &stories_quant},
    {"quant/stories260K-q4_1.gguf", "reference/stories260K-q4_1.json", BUDGET_QUANT,
     &stories_quant},
    {"quant/stories260K-q5_0.gguf", "reference/stories260K-q5_0.json", BUDGET_QUANT,
     &stories_quant},
    {"quant/stories260K-q5_1.gguf", "reference/stories260K-q5_1.json", BUDGET_QUANT,
     &stories_quant},
    {"quant/tiny256-f32.gguf", "reference/tiny256-f32.json", BUDGET_F32, &f32_lim},
    {"quant/tiny256-f16.gguf", "reference/tiny256-f16.json", BUDGET_HALF, &tiny_f16},
    {"quant/tiny256-bf16.gguf", "reference/tiny256-bf16.json", BUDGET_HALF, &tiny_bf16},
    {"quant/tiny256-q8_0.gguf", "reference/tiny256-q8_0.json", BUDGET_QUANT, &tiny_quant},
    {"quant/tiny256-q4_0.gguf", "reference/tiny256-q4_0.json", BUDGET_QUANT, &tiny_quant},
    {"quant/tiny256-q4_1.gguf", "reference/tiny256-q4_1.json", BUDGET_QUANT, &tiny_quant},
    {"quant/tiny256-q5_0.gguf", "reference/tiny256-q5_0.json", BUDGET_QUANT, &tiny_quant},
    {"quant/tiny256-q5_1.gguf", "reference/tiny256-q5_1.json", BUDGET_QUANT, &tiny_quant},
    {"quant/tiny256-q2_k.gguf", "reference/tiny256-q2_k.json", BUDGET_QUANT, &tiny_quant},
    {"quant/tiny256-q3_k_m.gguf", "reference/tiny256-q3_k_m.json", BUDGET_QUANT, &tiny_quant},
    {"quant/tiny256-q4_k_m.gguf", "reference/tiny256-q4_k_m.json", BUDGET_QUANT, &tiny_quant},
    {"quant/tiny256-q5_k_m.gguf", "reference/tiny256-q5_k_m.json", BUDGET_QUANT, &tiny_quant},
    {"quant/tiny256-q6_k.gguf", "reference/tiny256-q6_k.json", BUDGET_QUANT, &tiny_quant},
    {"quant/tiny256-q2_k-pure.gguf", "reference/tiny256-q2_k-pure.json", BUDGET_QUANT, &tiny_quant},
    {"quant/tiny256-q3_k-pure.gguf", "reference/tiny256-q3_k-pure.json", BUDGET_QUANT, &tiny_quant},
    {"quant/tiny256-q4_k-pure.gguf", "reference/tiny256-q4_k-pure.json", BUDGET_QUANT, &tiny_quant},
    {"quant/tiny256-q5_k-pure.gguf", "reference/tiny256-q5_k-pure.json", BUDGET_QUANT, &tiny_quant},
};
#define N_FILES (sizeof files / sizeof files[0])

static const char *const prompts[] = {"Once upon a time", "The little dog", "Lily wanted to"};
#define N_PROMPTS (sizeof prompts / sizeof prompts[0])

static mint_model *open_model(const char *rel) {
    mint_model *m;
    mint_err err;
    cr_assert_eq(mint_model_open(mt_data_path(rel), NULL, &m, &err), MINT_OK, "%s", err.msg);
    return m;
}

// ---------------------------------------------------------------------------------------------
// The plain pass against the graph

// One prompt and its greedy continuation by the plain pass: the tokens, and every position's
// logits.
typedef struct plain_run {
    int32_t tokens[MAX_SEQ]; // prompt, then the greedy tokens
    int n_prompt, n;         // prompt length, total length
    float *logits;           // [n][n_vocab]: logits after each position
} plain_run;

static plain_run run_plain(mint_model *m, mint_plain *p, int n_vocab, const char *text) {
    plain_run r;
    mint_err err;
    size_t n;
    cr_assert_eq(mint_tokenize(m, text, strlen(text), true, false, r.tokens, MAX_SEQ, &n, &err),
                 MINT_OK, "%s", err.msg);
    r.n_prompt = (int)n;
    r.n = r.n_prompt + N_GREEDY;
    cr_assert_leq(r.n, MAX_SEQ);
    r.logits = malloc((size_t)r.n * (size_t)n_vocab * sizeof(float));
    cr_assert(r.logits);
    for (int i = 0; i < r.n; i++) {
        float *l = r.logits + (size_t)i * n_vocab;
        cr_assert_eq(mint_plain_forward(p, r.tokens[i], i, l, &err), MINT_OK, "%s", err.msg);
        if (i + 1 >= r.n_prompt && i + 1 < r.n) r.tokens[i + 1] = ref_argmax(l, n_vocab);
    }
    return r;
}

// How a context's logits compare with the plain pass's over some runs.
typedef struct cmp {
    double max_d;    // max |dlogit|
    bool identical;  // every logit bit-identical
    int greedy_same; // greedy steps whose argmax is the plain pass's token
    int greedy;      // greedy steps
    int clear_same;  // of those that are no near tie, the ones whose argmax is the plain's token
    int clear;       // greedy steps that are no near tie
} cmp;

// l[top] minus the largest other logit.
static double gap(const float *l, int n, int top) {
    double second = -INFINITY;
    for (int v = 0; v < n; v++)
        if (v != top && l[v] > second) second = l[v];
    return (double)l[top] - second;
}

// The runs' token sequences through a context token by token, compared with the plain pass;
// a greedy step is a near tie when its plain top-1/top-2 gap is below near_tie.
static void compare_graph(mint_model *m, const char *isa, int kv_block, const plain_run *runs,
                          int n_runs, int n_vocab, double near_tie, cmp *c) {
    memset(c, 0, sizeof *c);
    c->identical = true;
    mint_ctx_params cp = mint_ctx_default_params();
    cp.n_threads = 2;
    cp.n_ctx = N_CTX;
    cp.kv_block = kv_block;
    cp.attention = MINT_ATTENTION_NAIVE;
    cp.kv_type = MINT_KV_F32;
    cp.isa = isa;
    mint_ctx *ctx;
    mint_err err;
    cr_assert_eq(mint_ctx_create(m, &cp, &ctx, &err), MINT_OK, "%s", err.msg);
    for (int ri = 0; ri < n_runs; ri++) {
        const plain_run *r = &runs[ri];
        for (int i = 0; i < r->n; i++) {
            cr_assert_eq(mint_eval(ctx, &r->tokens[i], 1, i, false, &err), MINT_OK, "%s", err.msg);
            const float *g = mint_get_logits(ctx, -1);
            const float *pl = r->logits + (size_t)i * n_vocab;
            if (memcmp(g, pl, (size_t)n_vocab * sizeof(float)) != 0) c->identical = false;
            for (int v = 0; v < n_vocab; v++) {
                const double d = fabs((double)g[v] - pl[v]);
                if (!(d <= c->max_d)) c->max_d = d; // NaN counts as the largest difference
            }
            if (i + 1 < r->n_prompt || i + 1 >= r->n) continue;
            const bool same = ref_argmax(g, n_vocab) == r->tokens[i + 1];
            c->greedy++;
            c->greedy_same += same;
            if (gap(pl, n_vocab, r->tokens[i + 1]) < near_tie) continue;
            c->clear++;
            c->clear_same += same;
        }
    }
    mint_ctx_free(ctx);
}

static void check_against_graph(const model_file *f) {
    mint_model *m = open_model(f->path);
    mint_model_desc d;
    mint_model_describe(m, &d);
    mint_plain *p;
    mint_err err;
    cr_assert_eq(mint_plain_create(m, N_CTX, &p, &err), MINT_OK, "%s", err.msg);
    plain_run runs[N_PROMPTS];
    double max_logit = 0;
    for (size_t i = 0; i < N_PROMPTS; i++) {
        runs[i] = run_plain(m, p, d.n_vocab, prompts[i]);
        for (size_t j = 0; j < (size_t)runs[i].n * (size_t)d.n_vocab; j++)
            max_logit = fmax(max_logit, fabs(runs[i].logits[j]));
    }
    mint_plain_free(p);

    const char *best = mint_isa_str(mint_isa_detect());
    const double near_tie = 2 * f->budget * max_logit;
    cmp whole, blocks, fast;
    compare_graph(m, "ref", N_CTX, runs, N_PROMPTS, d.n_vocab, 0, &whole);
    compare_graph(m, "ref", 32, runs, N_PROMPTS, d.n_vocab, near_tie, &blocks);
    compare_graph(m, best, 32, runs, N_PROMPTS, d.n_vocab, near_tie, &fast);
    cr_log_info("%s (%s), max |logit| %.3g: ref_whole %s, greedy %d/%d same; ref_blocks %.3g "
                "relative%s, greedy %d/%d same (%d/%d of no near tie); %s %.3g relative%s, "
                "greedy %d/%d same (%d/%d)",
                f->path, d.types, max_logit, whole.identical ? "bit-identical" : "DIFFERS",
                whole.greedy_same, whole.greedy, blocks.max_d / max_logit,
                blocks.identical ? " (bit-identical)" : "", blocks.greedy_same, blocks.greedy,
                blocks.clear_same, blocks.clear, best, fast.max_d / max_logit,
                fast.identical ? " (bit-identical)" : "", fast.greedy_same, fast.greedy,
                fast.clear_same, fast.clear);

    cr_assert(whole.identical, "%s: graph at ref, one KV block: max |dlogit| %g, not 0", f->path,
              whole.max_d);
    cr_assert_eq(whole.greedy, (int)N_PROMPTS * N_GREEDY);
    cr_assert_eq(whole.greedy_same, whole.greedy, "%s", f->path);
    cr_assert_leq(blocks.max_d, f->budget * max_logit,
                  "%s: graph at ref, blocks of 32: max |dlogit| %g of max |logit| %g", f->path,
                  blocks.max_d, max_logit);
    cr_assert_leq(fast.max_d, f->budget * max_logit,
                  "%s: graph at %s: max |dlogit| %g of max |logit| %g", f->path, best, fast.max_d,
                  max_logit);
    cr_assert_eq(blocks.clear_same, blocks.clear, "%s", f->path);
    cr_assert_eq(fast.clear_same, fast.clear, "%s: greedy tokens at %s", f->path, best);
    for (size_t i = 0; i < N_PROMPTS; i++) free(runs[i].logits);
    mint_model_close(m);
}

// Under the sanitizers (several times slower) every third file: the Release run covers them all.
static size_t sample_files(int *idx) {
    const size_t step = sizeof MINT_SANITIZE_FLAGS > 1 ? 3 : 1;
    size_t n = 0;
    for (size_t i = 0; i < N_FILES; i += step) idx[n++] = (int)i;
    return n;
}

ParameterizedTestParameters(forward_plain, equals_the_graph) {
    static int idx[N_FILES];
    return cr_make_param_array(int, idx, sample_files(idx));
}

ParameterizedTest(int *i, forward_plain, equals_the_graph, .timeout = MT_HANG(300)) {
    check_against_graph(&files[*i]);
}

// ---------------------------------------------------------------------------------------------
// The plain pass against llama.cpp

// KL(ref || mine) of two full logit vectors, in double.
static double kl(const float *ref, const float *mine, int n) {
    double mr = ref[0], mm = mine[0];
    for (int i = 1; i < n; i++) {
        mr = ref[i] > mr ? ref[i] : mr;
        mm = mine[i] > mm ? mine[i] : mm;
    }
    double zr = 0, zm = 0;
    for (int i = 0; i < n; i++) {
        zr += exp(ref[i] - mr);
        zm += exp(mine[i] - mm);
    }
    double k = 0;
    for (int i = 0; i < n; i++) {
        const double lr = ref[i] - mr - log(zr), lm = mine[i] - mm - log(zm);
        k += exp(lr) * (lr - lm);
    }
    return k;
}

static void add_dlogit(ref_stats *s, double d) {
    d = fabs(d);
    if (!(d <= s->max_dlogit)) s->max_dlogit = d;
    s->sum_dlogit += d;
    s->n_dlogit++;
}

// Every prompt of the reference's f32kv run through the plain pass (positions from 0 again for
// each): the top-10 and full logits after the prompt, then the greedy steps, teacher-forced on
// llama.cpp's tokens or free-running on the plain pass's own (stopping a prompt at llama.cpp's
// first top-1/top-2 gap below gap_stop, where the two may part).
static ref_stats plain_vs_reference(mint_model *m, int n_vocab, const char *ref_rel,
                                    bool free_running, double gap_stop) {
    ref_stats s;
    memset(&s, 0, sizeof s);
    s.first_divergence = -1;
    json_object *ref = mt_json_data(ref_rel);
    json_object *prompts_j = mt_jget(mt_jget(mt_jget(ref, "runs"), "f32kv"), "prompts");
    mint_plain *p;
    mint_err err;
    cr_assert_eq(mint_plain_create(m, N_CTX, &p, &err), MINT_OK, "%s", err.msg);
    float *l = malloc((size_t)n_vocab * sizeof *l);
    cr_assert(l);
    for (size_t pi = 0; pi < json_object_array_length(prompts_j); pi++) {
        json_object *pr = mt_jidx(prompts_j, pi);
        json_object *toks = mt_jget(pr, "tokens");
        const int n_prompt = (int)json_object_array_length(toks);
        for (int i = 0; i < n_prompt; i++)
            cr_assert_eq(mint_plain_forward(p, json_object_get_int(mt_jidx(toks, i)), i, l, &err),
                         MINT_OK, "%s", err.msg);
        json_object *top = mt_jget(pr, "top"), *last;
        for (size_t k = 0; k < json_object_array_length(top); k++) {
            json_object *e = mt_jidx(top, k);
            add_dlogit(&s, l[json_object_get_int(mt_jget(e, "id"))] -
                               json_object_get_double(mt_jget(e, "logit")));
        }
        if (json_object_object_get_ex(pr, "last_logits", &last)) {
            cr_assert_eq((int)json_object_array_length(last), n_vocab);
            float *rl = malloc((size_t)n_vocab * sizeof *rl);
            cr_assert(rl);
            for (int i = 0; i < n_vocab; i++) {
                rl[i] = (float)json_object_get_double(mt_jidx(last, i));
                add_dlogit(&s, l[i] - rl[i]);
            }
            s.sum_kl += kl(rl, l, n_vocab);
            s.n_kl++;
            free(rl);
        }
        json_object *g = mt_jget(pr, "greedy");
        json_object *gt = mt_jget(g, "tokens"), *glp = mt_jget(g, "logprobs"),
                    *gap = mt_jget(g, "gap");
        const int n_gen = (int)json_object_array_length(gt);
        for (int st = 0; st < n_gen; st++) {
            if (free_running && gap_stop > 0 && json_object_get_double(mt_jidx(gap, st)) < gap_stop)
                break;
            const int want = json_object_get_int(mt_jidx(gt, st)), got = ref_argmax(l, n_vocab);
            const double dlp =
                fabs(ref_logprob(l, n_vocab, want) - json_object_get_double(mt_jidx(glp, st)));
            if (dlp > s.max_dlogprob) s.max_dlogprob = dlp;
            s.steps++;
            if (got == want)
                s.top1_agree++;
            else if (free_running && s.first_divergence < 0)
                s.first_divergence = s.steps - 1;
            if (st + 1 == n_gen) break;
            cr_assert_eq(mint_plain_forward(p, free_running ? got : want, n_prompt + st, l, &err),
                         MINT_OK, "%s", err.msg);
        }
    }
    free(l);
    mint_plain_free(p);
    json_object_put(ref);
    return s;
}

static void check_against_llama_cpp(const model_file *f) {
    if (!f->ref) return; // no reference run for this file (llama-2-tiny-random)
    mint_model *m = open_model(f->path);
    mint_model_desc d;
    mint_model_describe(m, &d);
    const ref_limits *lim = f->lim;
    ref_stats s = plain_vs_reference(m, d.n_vocab, f->ref, lim->exact_greedy, 0);
    const double mean = s.sum_dlogit / (double)s.n_dlogit, k = s.sum_kl / (double)s.n_kl;
    const double top1 = (double)s.top1_agree / (double)s.steps;
    cr_log_info("%s vs llama.cpp: max |dlogit| %.3g, mean %.3g, KL %.3g, top-1 %ld/%ld, max "
                "|dlogprob| %.3g",
                f->path, s.max_dlogit, mean, k, s.top1_agree, s.steps, s.max_dlogprob);
    cr_assert_leq(s.max_dlogit, lim->max_dlogit, "%s: max |dlogit| %g", f->path, s.max_dlogit);
    cr_assert_leq(mean, lim->mean_dlogit, "%s: mean |dlogit| %g", f->path, mean);
    cr_assert_leq(k, lim->kl, "%s: KL %g", f->path, k);
    cr_assert_geq(top1, lim->top1, "%s: top-1 agreement %g", f->path, top1);
    if (lim->exact_greedy) {
        cr_assert_lt(s.max_dlogprob, 1e-4, "%s: max |dlogprob| %g", f->path, s.max_dlogprob);
        cr_assert_eq(s.first_divergence, -1, "%s: greedy tokens differ at step %ld", f->path,
                     s.first_divergence);
    } else {
        ref_stats fr = plain_vs_reference(m, d.n_vocab, f->ref, true, 2 * lim->max_dlogit);
        cr_log_info("%s vs llama.cpp, free-running: %ld steps before the first near tie, first "
                    "divergence %ld",
                    f->path, fr.steps, fr.first_divergence);
        cr_assert_eq(fr.first_divergence, -1, "%s: greedy tokens differ at step %ld", f->path,
                     fr.first_divergence);
    }
    mint_model_close(m);
}

ParameterizedTestParameters(forward_plain, matches_llama_cpp) {
    static int idx[N_FILES];
    return cr_make_param_array(int, idx, sample_files(idx));
}

ParameterizedTest(int *i, forward_plain, matches_llama_cpp, .timeout = MT_HANG(300)) {
    check_against_llama_cpp(&files[*i]);
}

// ---------------------------------------------------------------------------------------------
// Arguments

Test(forward_plain, bad_arguments_are_refused_with_one_line) {
    mint_model *m = open_model("stories260K.gguf");
    mint_plain *p;
    mint_err err;
    cr_assert_eq(mint_plain_create(m, 5000, &p, &err), MINT_E_ARG);
    cr_assert(strstr(err.msg, "5000"), "%s", err.msg);
    cr_assert_eq(mint_plain_create(m, 8, &p, &err), MINT_OK, "%s", err.msg);
    float l[512];
    cr_assert_eq(mint_plain_forward(p, 512, 0, l, &err), MINT_E_ARG);
    cr_assert(strstr(err.msg, "token 512"), "%s", err.msg);
    cr_assert_eq(mint_plain_forward(p, 1, 1, l, &err), MINT_E_ARG); // position 0 not computed
    cr_assert(strstr(err.msg, "position 1"), "%s", err.msg);
    for (int i = 0; i < 8; i++) cr_assert_eq(mint_plain_forward(p, 1, i, l, &err), MINT_OK);
    cr_assert_eq(mint_plain_forward(p, 1, 8, l, &err), MINT_E_LIMIT);
    cr_assert(strstr(err.msg, "position 8"), "%s", err.msg);
    // Going back to position 0 starts over: the same logits as the first time.
    float a[512], b[512];
    cr_assert_eq(mint_plain_forward(p, 1, 0, a, &err), MINT_OK);
    cr_assert_eq(mint_plain_forward(p, 400, 1, a, &err), MINT_OK);
    cr_assert_eq(mint_plain_forward(p, 1, 0, b, &err), MINT_OK);
    cr_assert_eq(mint_plain_forward(p, 400, 1, b, &err), MINT_OK);
    cr_assert_arr_eq(a, b, sizeof a);
    mint_plain_free(p);
    mint_plain_free(NULL);
    mint_model_close(m);

    mint_model_params vp = {.vocab_only = true};
    cr_assert_eq(mint_model_open(mt_data_path("stories260K.gguf"), &vp, &m, &err), MINT_OK);
    cr_assert_eq(mint_plain_create(m, 0, &p, &err), MINT_E_ARG);
    cr_assert(strstr(err.msg, "vocab-only"), "%s", err.msg);
    mint_model_close(m);
}
