// test_model_quant.c - every quantized fixture model against llama.cpp's reference run
// (docs/tolerances.md 3.3, 3.4): teacher-forced logits within the section's limits, and
// free-running greedy tokens identical up to the first step where llama.cpp's own top-1/top-2 gap
// is below twice the max-|dlogit| limit (past such a near tie the two sequences may part).
#include "helpers/helpers.h"
#include "helpers/reference.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct limits {
    double max_dlogit, mean_dlogit, kl, top1;
} limits;

// docs/tolerances.md 3.3's limits. Its KL limit is a mean over all steps; the
// reference files hold the full logits for one step only (prompt 0, after the prompt), and one
// step's KL scatters around the mean by about an order of magnitude (tiny256-q4_1, whose
// faithful-model mean KL is 3.8e-3 in docs/tolerances.md 3.3, gives 0.044 at that
// step), so the single measured KL is held to 3x the limit.
static const limits stories_quant = {0.8, 0.1, 3e-3, 0.97};
static const limits tiny_quant = {3.0, 0.5, 0.09, 0.90};

typedef struct fixture {
    const char *name; // file stem in quant/ and reference/
    bool stories;     // stories260K family (else tiny256)
} fixture;

static const fixture fixtures[] = {
    {"stories260K-q8_0", true},   {"stories260K-q4_0", true},   {"stories260K-q4_1", true},
    {"stories260K-q5_0", true},   {"stories260K-q5_1", true},   {"tiny256-q8_0", false},
    {"tiny256-q4_0", false},      {"tiny256-q4_1", false},      {"tiny256-q5_0", false},
    {"tiny256-q5_1", false},      {"tiny256-q2_k", false},      {"tiny256-q3_k_m", false},
    {"tiny256-q4_k_m", false},    {"tiny256-q5_k_m", false},    {"tiny256-q6_k", false},
    {"tiny256-q2_k-pure", false}, {"tiny256-q3_k-pure", false}, {"tiny256-q4_k-pure", false},
    {"tiny256-q5_k-pure", false},
};
#define N_FIXTURES (sizeof fixtures / sizeof fixtures[0])

static void check(const fixture *fx) {
    char model[128], ref[128];
    snprintf(model, sizeof model, "quant/%s.gguf", fx->name);
    snprintf(ref, sizeof ref, "reference/%s.json", fx->name);
    const limits lim = fx->stories ? stories_quant : tiny_quant;

    ref_opts o = {.run = "f32kv", .n_threads = 2, .kv_type = MINT_KV_F32};
    ref_stats s = ref_compare(model, ref, &o);
    double mean = s.sum_dlogit / (double)s.n_dlogit, kl = s.sum_kl / (double)s.n_kl;
    double top1 = (double)s.top1_agree / (double)s.steps;
    cr_log_info("%s: max |dlogit| %.3g, mean %.3g, KL %.3g, top-1 %.1f%%", fx->name, s.max_dlogit,
                mean, kl, 100 * top1);
    cr_assert_leq(s.max_dlogit, lim.max_dlogit, "%s: max |dlogit| %g", fx->name, s.max_dlogit);
    cr_assert_leq(mean, lim.mean_dlogit, "%s: mean |dlogit| %g", fx->name, mean);
    cr_assert_leq(kl, lim.kl, "%s: KL at the step with full logits %g", fx->name, kl);
    cr_assert_geq(top1, lim.top1, "%s: top-1 agreement %g", fx->name, top1);

    ref_opts fr = {.run = "f32kv",
                   .n_threads = 2,
                   .kv_type = MINT_KV_F32,
                   .free_running = true,
                   .gap_stop = 2 * lim.max_dlogit};
    ref_stats f = ref_compare(model, ref, &fr);
    cr_log_info("%s: free-running, %ld steps before the first near tie, first divergence %ld",
                fx->name, f.steps, f.first_divergence);
    cr_assert_eq(f.first_divergence, -1, "%s: greedy tokens differ at step %ld", fx->name,
                 f.first_divergence);
}

ParameterizedTestParameters(model_quant, matches_llama_cpp) {
    static int idx[N_FIXTURES];
    for (size_t i = 0; i < N_FIXTURES; i++) idx[i] = (int)i;
    return cr_make_param_array(int, idx, N_FIXTURES);
}

ParameterizedTest(int *i, model_quant, matches_llama_cpp, .timeout = MT_HANG(300)) {
    check(&fixtures[*i]);
}

// ---------------------------------------------------------------------------------------------
// Self-consistency on mint's own synthetic model (no reference data): every file type, every
// kernel level against the scalar reference, and quantize-then-run.

static const char *const ftypes[] = {
    "F32",    "F16",     "BF16",   "Q8_0",  "Q4_0",  "Q4_1",  "Q5_0",   "Q5_1",   "Q2_K",
    "Q3_K_M", "Q4_K_M",  "Q5_K_M", "Q6_K",  "TQ1_0", "TQ2_0", "IQ4_NL", "IQ4_XS", "IQ3_S",
    "IQ3_M",  "IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M", "Q1_0",  "Q2_0"};
#define N_FTYPES (sizeof ftypes / sizeof ftypes[0])

enum { N_PROMPT = 16, N_VOCAB_SMALL = 512 };

// Logits of every row of a 16-token prompt, at a kernel level ("ref", "avx2", ...).
static void prompt_logits(mint_model *m, const char *isa, float *out) {
    mint_ctx_params p = mint_ctx_default_params();
    p.n_threads = 2;
    p.n_ctx = 64;
    p.isa = isa;
    mint_ctx *c;
    mint_err err;
    cr_assert_eq(mint_ctx_create(m, &p, &c, &err), MINT_OK, "%s", err.msg);
    int32_t ids[N_PROMPT];
    for (int i = 0; i < N_PROMPT; i++) ids[i] = i == 0 ? 1 : 3 + (i * 131) % 509;
    cr_assert_eq(mint_eval(c, ids, N_PROMPT, 0, true, &err), MINT_OK, "%s", err.msg);
    for (int i = 0; i < N_PROMPT; i++)
        memcpy(out + (size_t)i * N_VOCAB_SMALL, mint_get_logits(c, i),
               N_VOCAB_SMALL * sizeof(float));
    mint_ctx_free(c);
}

// max |a - b| over all rows, relative to max |b|.
static double rel_diff(const float *a, const float *b, size_t n) {
    double d = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]);
        if (e > d) d = e;
        if (fabs((double)b[i]) > m) m = fabs((double)b[i]);
    }
    return d / m;
}

// Mean over rows of KL(p || q) of the softmaxes, in double.
static double mean_kl(const float *p, const float *q) {
    double sum = 0;
    for (int r = 0; r < N_PROMPT; r++) {
        const float *a = p + (size_t)r * N_VOCAB_SMALL, *b = q + (size_t)r * N_VOCAB_SMALL;
        double kl = 0;
        for (int i = 0; i < N_VOCAB_SMALL; i++) {
            double lp = ref_logprob(a, N_VOCAB_SMALL, i), lq = ref_logprob(b, N_VOCAB_SMALL, i);
            kl += exp(lp) * (lp - lq);
        }
        sum += kl;
    }
    return sum / N_PROMPT;
}

// SIMD and reference kernels may differ only in the float order of sums over blocks (a dot is
// within 2^-18 of sum |w a|, tests/test_kernels.c). Most types then agree to ~1e-7 of the
// largest logit. But an activation that moves by one ulp can round to the neighbouring integer
// when the next matmul quantizes it to Q8, and this random-weight model amplifies such a step
// through its layers (Q4_1, Q5_x, Q6_K and Q2_K at some levels reach 1e-2 relative): the
// distributions are what must agree, so the budget is on their KL divergence.
#define LEVEL_KL_BUDGET 3e-3 // largest measured: 1.1e-3 (IQ4_XS at avx512vnni)

Test(model_quant_synthetic, every_kernel_level_matches_the_reference, .timeout = MT_HANG(300)) {
    static const char *const levels[] = {"avx2", "avx512", "avx512vnni", "neon", "neondot"};
    float *ref = malloc(sizeof(float) * N_PROMPT * N_VOCAB_SMALL);
    float *got = malloc(sizeof(float) * N_PROMPT * N_VOCAB_SMALL);
    int compared = 0;
    for (size_t t = 0; t < N_FTYPES; t++) {
        mint_model *m = mt_synth_model("small", ftypes[t]);
        prompt_logits(m, "ref", ref);
        for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
            mint_ctx_params p = mint_ctx_default_params();
            p.isa = levels[l];
            mint_ctx *probe;
            if (mint_ctx_create(m, &p, &probe, NULL) != MINT_OK) continue; // not on this CPU
            mint_ctx_free(probe);
            prompt_logits(m, levels[l], got);
            double d = rel_diff(got, ref, (size_t)N_PROMPT * N_VOCAB_SMALL);
            double kl = mean_kl(ref, got);
            cr_log_info("%s at %s vs ref: max |dlogit| / max |logit| %.3g, mean KL %.3g", ftypes[t],
                        levels[l], d, kl);
            cr_expect_leq(kl, LEVEL_KL_BUDGET, "%s at %s: mean KL %g", ftypes[t], levels[l], kl);
            compared++;
        }
        mint_model_close(m);
    }
    cr_log_info("%d (type, level) pairs compared with the reference", compared);
    free(ref);
    free(got);
}

// Mean KL of each quantization of the synthetic F32 model against it. Random weights make a
// chaotic model (no trained structure damps a perturbation), so these figures are far above
// those of a trained model (stories260K's Q4_0: 0.08); the budgets are this model's own figures
// (measured 2026-12-03) with about 3x margin, and the K-quant ladder must order as its bits do.
typedef struct quant_budget {
    const char *type;
    double kl;
} quant_budget;

// IQ4_NL and IQ4_XS measured 0.246 and 0.199, IQ3_S and IQ3_M 0.901 and 0.704 (2026-12-07).
static const quant_budget quant_budgets[] = {
    {"F16", 1e-5},    {"BF16", 6e-4},   {"Q8_0", 6e-3},   {"Q6_K", 0.05},
    {"Q5_1", 0.15},   {"Q5_0", 0.2},    {"Q5_K_M", 0.15}, {"Q4_1", 0.6},
    {"Q4_0", 0.9},    {"Q4_K_M", 0.55}, {"Q3_K_M", 2.0},  {"Q2_K", 4.5},
    {"IQ4_NL", 0.75}, {"IQ4_XS", 0.6},  {"IQ3_S", 2.7},   {"IQ3_M", 2.1},
};

Test(model_quant_synthetic, quantize_then_run_every_type, .timeout = MT_HANG(300)) {
    char src[4096]; // mt_synth's path lives in a rotating buffer that the loop's mt_path reuses
    snprintf(src, sizeof src, "%s", mt_synth("small", "F32"));
    mint_model *f32 = mt_synth_model("small", "F32");
    float *base = malloc(sizeof(float) * N_PROMPT * N_VOCAB_SMALL);
    float *got = malloc(sizeof(float) * N_PROMPT * N_VOCAB_SMALL);
    prompt_logits(f32, NULL, base);
    double kl_of[sizeof quant_budgets / sizeof quant_budgets[0]];
    for (size_t i = 0; i < sizeof quant_budgets / sizeof quant_budgets[0]; i++) {
        const quant_budget *b = &quant_budgets[i];
        char name[64];
        snprintf(name, sizeof name, "quantized-%s.gguf", b->type);
        const char *out = mt_path(mt_tmpdir(), name);
        mint_quantize_params qp = {.ftype = b->type, .n_threads = 2};
        mint_err err;
        cr_assert_eq(mint_quantize_file(src, out, &qp, &err), MINT_OK, "%s: %s", b->type, err.msg);
        mint_model *m;
        cr_assert_eq(mint_model_open(out, NULL, &m, &err), MINT_OK, "%s: %s", b->type, err.msg);
        prompt_logits(m, NULL, got);
        double kl = mean_kl(base, got);
        cr_log_info("%s of the synthetic F32 model: mean KL %.3g (budget %.0e)", b->type, kl,
                    b->kl);
        cr_expect_leq(kl, b->kl, "%s: mean KL %g", b->type, kl);
        kl_of[i] = kl;
        mint_model_close(m);
    }
    // F16 < Q8_0 < Q6_K < Q5_K_M < Q4_K_M < Q3_K_M < Q2_K (indices into quant_budgets)
    const int ladder[] = {0, 2, 3, 6, 9, 10, 11};
    for (int i = 1; i < 7; i++)
        cr_expect_lt(kl_of[ladder[i - 1]], kl_of[ladder[i]], "%s (KL %g) vs %s (KL %g)",
                     quant_budgets[ladder[i - 1]].type, kl_of[ladder[i - 1]],
                     quant_budgets[ladder[i]].type, kl_of[ladder[i]]);
    mint_model_close(f32);
    free(base);
    free(got);
}

// A mixture of experts whose experts are MXFP4 runs: the tiny qwen3moe quantized to MXFP4_MOE
// (experts MXFP4, every other matrix Q8_0) stays close to its F32 file, closer than the whole
// model in Q4_0 (4.5 bits like MXFP4's 4.25, but on every matrix), and every kernel level gives
// the reference's distribution (the budget: the measured 0.055 with about 3x margin).
Test(model_quant_synthetic, mxfp4_experts_run_close_to_f32, .timeout = MT_HANG(300)) {
    char src[4096], out[4096], q4[4096];
    snprintf(src, sizeof src, "%s", mt_path(mt_tmpdir(), "qwen3moe-tiny-f32.gguf"));
    snprintf(out, sizeof out, "%s", mt_path(mt_tmpdir(), "qwen3moe-tiny-mxfp4_moe.gguf"));
    snprintf(q4, sizeof q4, "%s", mt_path(mt_tmpdir(), "qwen3moe-tiny-q4_0.gguf"));
    mint_synth_params sp = {
        .preset = "qwen3moe", .ftype = "F32", .seed = 1, .n_threads = 2, .shape = "tiny"};
    mint_err err;
    cr_assert_eq(mint_synth_write(&sp, src, &err), MINT_OK, "%s", err.msg);
    mint_quantize_params qp = {.ftype = "MXFP4_MOE", .n_threads = 2};
    cr_assert_eq(mint_quantize_file(src, out, &qp, &err), MINT_OK, "%s", err.msg);
    qp.ftype = "Q4_0";
    cr_assert_eq(mint_quantize_file(src, q4, &qp, &err), MINT_OK, "%s", err.msg);

    mint_file *f;
    cr_assert_eq(mint_file_open(out, &f, &err), MINT_OK, "%s", err.msg);
    mint_tensor_info ti;
    cr_assert_eq(mint_file_find_tensor(f, "blk.1.ffn_down_exps.weight", &ti), MINT_OK);
    cr_assert_str_eq(mint_type_name(ti.type), "MXFP4");
    mint_file_close(f);

    float *base = malloc(sizeof(float) * N_PROMPT * N_VOCAB_SMALL);
    float *got = malloc(sizeof(float) * N_PROMPT * N_VOCAB_SMALL);
    float *lvl = malloc(sizeof(float) * N_PROMPT * N_VOCAB_SMALL);
    mint_model *m;
    cr_assert_eq(mint_model_open(src, NULL, &m, &err), MINT_OK, "%s", err.msg);
    prompt_logits(m, NULL, base);
    mint_model_close(m);
    cr_assert_eq(mint_model_open(q4, NULL, &m, &err), MINT_OK, "%s", err.msg);
    prompt_logits(m, NULL, got);
    const double kl_q4 = mean_kl(base, got);
    mint_model_close(m);
    cr_assert_eq(mint_model_open(out, NULL, &m, &err), MINT_OK, "%s", err.msg);
    prompt_logits(m, "ref", got);
    const double kl = mean_kl(base, got);
    cr_log_info("qwen3moe tiny MXFP4_MOE vs F32: mean KL %.3g (Q4_0: %.3g)", kl, kl_q4);
    cr_expect_leq(kl, 0.15, "MXFP4_MOE: mean KL %g", kl);
    cr_expect_lt(kl, kl_q4, "MXFP4_MOE (KL %g) vs Q4_0 (KL %g)", kl, kl_q4);
    static const char *const levels[] = {"avx2", "avx512", "avx512vnni", "neon", "neondot"};
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
        mint_ctx_params p = mint_ctx_default_params();
        p.isa = levels[l];
        mint_ctx *probe;
        if (mint_ctx_create(m, &p, &probe, NULL) != MINT_OK) continue; // not on this CPU
        mint_ctx_free(probe);
        prompt_logits(m, levels[l], lvl);
        const double kl_level = mean_kl(got, lvl);
        cr_log_info("MXFP4_MOE at %s vs ref: mean KL %.3g", levels[l], kl_level);
        cr_expect_leq(kl_level, LEVEL_KL_BUDGET, "MXFP4_MOE at %s: mean KL %g", levels[l],
                      kl_level);
    }
    mint_model_close(m);
    free(base);
    free(got);
    free(lvl);
}
