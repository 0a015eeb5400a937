// test_model_quant.c - every quantized fixture model against llama.cpp's reference run
// (reference README 5.2): teacher-forced logits within the section's limits, and free-running
// greedy tokens identical up to the first step where llama.cpp's own top-1/top-2 gap is below
// twice the max-|dlogit| limit (past such a near tie the two sequences may part).
#include "helpers/helpers.h"
#include "helpers/reference.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>

typedef struct limits {
    double max_dlogit, mean_dlogit, kl, top1;
} limits;

// README 5.2's limits. Its KL limit is a mean over all steps; the reference files hold the full
// logits for one step only (prompt 0, after the prompt), and one step's KL scatters around the
// mean by about an order of magnitude (tiny256-q4_1, whose faithful-model mean KL is 3.8e-3 in
// README 5.1, gives 0.044 at that step), so the single measured KL is held to 3x the limit.
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

ParameterizedTest(int *i, model_quant, matches_llama_cpp, .timeout = 300) {
    check(&fixtures[*i]);
}
