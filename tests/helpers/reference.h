// reference.h - comparing mint against llama.cpp's reference runs (MINT_TEST_DATA/reference/*.json,
// format mint-llama-reference/1; docs/tolerances.md 1.3 says what they hold, 3 the budgets).
#ifndef MINT_TEST_REFERENCE_H
#define MINT_TEST_REFERENCE_H

#include "mint.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

// What a teacher-forced comparison measured, over all prompts and steps of one file.
typedef struct ref_stats {
    double max_dlogit;     // max |logit - ref| over every compared logit
    double sum_dlogit;     // sum of |logit - ref| (mean = sum / n_dlogit)
    long n_dlogit;         // compared logits
    double max_dlogprob;   // max |logprob(ref token) - ref logprob| over all steps
    double sum_kl;         // sum of KL(ref || mint) over steps with full reference logits
    long n_kl;             // such steps
    long top1_agree;       // steps where mint's argmax is the reference's token
    long steps;            // all steps
    long first_divergence; // free-running only: first step whose token differs (-1: none)
} ref_stats;

// Options for one comparison.
typedef struct ref_opts {
    const char *run;      // "f32kv" or "default"
    int n_threads;        // context threads
    mint_kv_type kv_type; // KV cache type
    bool free_running;    // feed mint's own argmax instead of the reference tokens
    double gap_stop;      // free-running: stop a prompt at the first step whose reference
                          // top-1/top-2 logit gap is below this (tokens may then diverge)
} ref_opts;

// Opens the reference JSON (relative to MINT_TEST_DATA) and the model, and compares every
// prompt: the prompt's tokenization (text prompts), the top-10 and (prompt 0) full logits after
// the prompt, and at every greedy step the reference token's log-probability and whether mint's
// argmax agrees. Teacher-forced unless opts.free_running. Fails the test on setup errors.
ref_stats ref_compare(const char *model_rel, const char *ref_rel, const ref_opts *opts);

// Log-softmax of logits[id] in double.
double ref_logprob(const float *logits, int n, int id);
int ref_argmax(const float *logits, int n);

#endif // MINT_TEST_REFERENCE_H
