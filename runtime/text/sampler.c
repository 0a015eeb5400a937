// sampler.c - turning logits into a token: a chain of small steps over a candidate array.
//
// The chain follows llama.cpp's default order (common_sampler with its default sampler list):
//   repetition penalty -> top-k -> top-p -> min-p -> temperature -> draw
// so top-p and min-p judge probabilities at temperature 1, and temperature only reshapes the
// distribution over the tokens that survived. temp <= 0 swaps in a shorter chain:
//   repetition penalty -> argmax (lowest id on a tie)
// The filters are skipped there because they never drop the best token, and skipping them keeps
// the tie rule independent of how a filter orders equal logits.
//
// Each step is a function over the candidates (runtime/text/sampler_internal.h) with a one-line
// contract; a step whose parameter turns it off returns at once, as in llama.cpp. The steps
// compute as llama.cpp's do (probabilities and their running sums in float, the draw's weights
// expf in float summed in double, the first candidate whose running sum reaches u * total) and
// the draw takes u from std::mt19937 seeded with the seed's low 32 bits, as llama.cpp's dist
// sampler does (base/mt19937.h): the same seed gives llama.cpp's tokens wherever the logits
// agree. They differ only where llama.cpp leaves a choice open: equal logits are ordered by lower
// id first.
//
// A grammar attached with mint_sampler_set_grammar (runtime/text/grammar.c) comes first: the
// candidates are only the tokens it allows, so every step and the draw see the grammar's tokens
// alone (llama.cpp's common_sampler with grammar_first). The greedy chain first runs on all the
// tokens and asks the grammar about the argmax alone; only when it is refused are the
// candidates masked and the chain run again. That picks the same token: the argmax of all,
// when allowed, is the argmax of the allowed (the lowest id among equal maxima either way, and
// the penalty does not depend on the mask).
//
// Sampling allocates nothing: the candidate array, the penalty history and the penalty's marks
// are sized at create (the grammar's mask is the grammar's).
#include "base/error.h"
#include "base/mt19937.h"
#include "runtime/text/grammar.h"
#include "runtime/text/sampler_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// The longest penalty window accepted, MINT_SAMPLER_LAST_N_MAX (mint.h): far beyond any context
// mint runs, and it bounds the history allocation a caller's typo could ask for.

// Candidates top-p sorts before it knows whether it needs them all (see step_top_p).
#define TOP_P_FIRST_SORT 256

struct mint_sampler {
    mint_sampler_params params; // validated at create
    int32_t n_vocab;            // logits per sample
    mint_candidates cand;       // scratch: cand.data is [n_vocab]
    int32_t *history;           // [params.repeat_last_n] ring of the most recent accepted tokens
    int32_t n_history;          // entries in use, 0 .. repeat_last_n
    int32_t history_next;       // ring slot the next accepted token goes to
    uint32_t *seen;             // [n_vocab] per-token mark: seen[id] == stamp means "in history"
    uint32_t stamp;             // current mark; bumped once per penalty pass
    const struct sampler_chain *chain; // greedy or sampling, chosen from params.temp at create
    mint_mt19937 rng;                  // seeded from params.seed (its low 32 bits), or a reset's
    mint_grammar *grammar;             // attached grammar (borrowed), or NULL
    bool argmax_first;                 // greedy asks the grammar about the argmax alone first
};

// ---------------------------------------------------------------------------------------------
// Candidate ordering: a total order, so every sort gives one answer whatever the algorithm.

// a ranks before b: higher logit first, lower id first among equal logits.
static inline bool cand_before(const mint_candidate *a, const mint_candidate *b) {
    return a->logit > b->logit || (a->logit == b->logit && a->id < b->id);
}

static inline void cand_swap(mint_candidate *a, mint_candidate *b) {
    mint_candidate t = *a;
    *a = *b;
    *b = t;
}

// Restores the heap below node i of a[0..n), a heap whose root ranks last (the "worst").
static void heap_sift_worst(mint_candidate *a, size_t n, size_t i) {
    for (;;) {
        size_t worst = i, l = 2 * i + 1, r = l + 1;
        if (l < n && cand_before(&a[worst], &a[l])) worst = l;
        if (r < n && cand_before(&a[worst], &a[r])) worst = r;
        if (worst == i) return;
        cand_swap(&a[i], &a[worst]);
        i = worst;
    }
}

// Moves the k best candidates to the front, best first (heap select + heap sort: O(n log k),
// in place, no allocation); the order of the rest is unspecified. Requires 1 <= k <= n.
static void candidates_sort_top(mint_candidates *c, size_t k) {
    mint_candidate *a = c->data;
    for (size_t i = k / 2; i-- > 0;) heap_sift_worst(a, k, i);
    for (size_t i = k; i < c->n; i++) {
        if (cand_before(&a[i], &a[0])) {
            cand_swap(&a[i], &a[0]);
            heap_sift_worst(a, k, 0);
        }
    }
    for (size_t end = k; end > 1; end--) {
        cand_swap(&a[0], &a[end - 1]); // the worst of the heap goes to the back
        heap_sift_worst(a, end - 1, 0);
    }
}

// Highest logit among the candidates.
static float candidates_max_logit(const mint_candidates *c) {
    if (c->sorted) return c->data[0].logit;
    float m = c->data[0].logit;
    for (size_t i = 1; i < c->n; i++) m = c->data[i].logit > m ? c->data[i].logit : m;
    return m;
}

// p[i] = exp(logit[i] - max) / sum over the candidates, in float as llama.cpp computes it (so
// that top-p keeps the same tokens).
static void candidates_softmax(mint_candidates *c) {
    float max = candidates_max_logit(c);
    float sum = 0.0f;
    for (size_t i = 0; i < c->n; i++) {
        c->data[i].p = expf(c->data[i].logit - max);
        sum += c->data[i].p;
    }
    for (size_t i = 0; i < c->n; i++) c->data[i].p /= sum;
}

// ---------------------------------------------------------------------------------------------
// The steps. Each takes the sampler (for its parameters and state) and rewrites the candidates.

typedef void (*sampler_step_fn)(mint_sampler *s, mint_candidates *c);

// Marks each distinct token of the history with a fresh stamp in s->seen.
static uint32_t history_mark(mint_sampler *s) {
    if (++s->stamp == 0) { // wrapped after 2^32 passes: old marks could alias, so clear them
        memset(s->seen, 0, (size_t)s->n_vocab * sizeof *s->seen);
        s->stamp = 1;
    }
    for (int32_t i = 0; i < s->n_history; i++) s->seen[s->history[i]] = s->stamp;
    return s->stamp;
}

// Each distinct token among the last repeat_last_n accepted: logit > 0 ? logit / penalty :
// logit * penalty (once, however often it occurred). Off when penalty == 1 or the history is
// empty.
static void step_repeat_penalty(mint_sampler *s, mint_candidates *c) {
    float penalty = s->params.repeat_penalty;
    if (penalty == 1.0f || s->n_history == 0) return;
    uint32_t stamp = history_mark(s);
    for (size_t i = 0; i < c->n; i++) {
        mint_candidate *t = &c->data[i];
        if (s->seen[t->id] != stamp) continue;
        // Dividing a negative logit would raise its probability (the CTRL paper's formula);
        // multiplying pushes it down, as llama.cpp does.
        t->logit = t->logit > 0.0f ? t->logit / penalty : t->logit * penalty;
    }
    c->sorted = false;
}

// Keeps the top_k highest logits (lower id first on ties), sorted. Off when top_k <= 0; a
// top_k above the count keeps everything (and sorts it).
static void step_top_k(mint_sampler *s, mint_candidates *c) {
    if (s->params.top_k <= 0) return;
    size_t k = (size_t)s->params.top_k < c->n ? (size_t)s->params.top_k : c->n;
    if (!c->sorted) candidates_sort_top(c, k);
    c->n = k;
    c->sorted = true;
}

// Takes the softmax, sorts, and keeps the shortest prefix whose probabilities add up to at least
// top_p (at least one token). Off when top_p >= 1.
static void step_top_p(mint_sampler *s, mint_candidates *c) {
    float top_p = s->params.top_p;
    if (top_p >= 1.0f) return;
    candidates_softmax(c);
    // The mass usually sits in a few hundred tokens: sort only the best TOP_P_FIRST_SORT, and
    // sort the rest only when those do not reach top_p (as llama.cpp does). The sorted prefix
    // holds the best candidates, so sorting the rest after it gives the full order.
    size_t n_sorted = c->n;
    if (!c->sorted) {
        n_sorted = c->n < TOP_P_FIRST_SORT ? c->n : TOP_P_FIRST_SORT;
        candidates_sort_top(c, n_sorted);
    }
    float cum = 0.0f; // in float, as llama.cpp sums it
    size_t keep = c->n;
    for (size_t i = 0; i < c->n; i++) {
        if (i == n_sorted) { // the prefix fell short: sort what follows it
            mint_candidates rest = {c->data + n_sorted, c->n - n_sorted, false};
            candidates_sort_top(&rest, rest.n);
            n_sorted = c->n;
        }
        cum += c->data[i].p;
        if (cum >= top_p) {
            keep = i + 1;
            break;
        }
    }
    c->n = keep;
    c->sorted = true;
}

// Keeps the tokens whose probability is at least min_p times the largest one, written on logits
// as llama.cpp does: logit >= max_logit + log(min_p). Order is kept. Off when min_p <= 0.
static void step_min_p(mint_sampler *s, mint_candidates *c) {
    float min_p = s->params.min_p;
    if (min_p <= 0.0f) return;
    float threshold = candidates_max_logit(c) + logf(min_p);
    size_t kept = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->data[i].logit >= threshold) c->data[kept++] = c->data[i];
    }
    c->n = kept; // >= 1: the maximum always passes, since log(min_p) <= 0
}

// logit /= temp for every candidate. Off when temp == 1.
static void step_temperature(mint_sampler *s, mint_candidates *c) {
    float temp = s->params.temp;
    if (temp == 1.0f) return;
    for (size_t i = 0; i < c->n; i++) c->data[i].logit /= temp;
}

// Keeps only the first candidate with the highest logit; candidates are in id order here, so
// that is the lowest id among equal maxima.
static void step_argmax(mint_sampler *s, mint_candidates *c) {
    size_t best = 0;
    for (size_t i = 1; i < c->n; i++) {
        if (c->data[i].logit > c->data[best].logit) best = i;
    }
    c->data[0] = c->data[best];
    c->n = 1;
    c->sorted = true;
}

// ---------------------------------------------------------------------------------------------
// The chains: the order is data. A chain ends in a pick, which reads the survivors.

typedef int32_t (*sampler_pick_fn)(mint_sampler *s, const mint_candidates *c);

// The single survivor of the greedy chain; uses no randomness.
static int32_t pick_only(mint_sampler *s, const mint_candidates *c) {
    return c->data[0].id;
}

// Draws from softmax(logits) over the survivors as llama.cpp's dist sampler does: one uniform u
// in [0, 1) per call, even when one candidate is left (so the i-th sample always uses the i-th
// number of the stream), weights expf(logit - max) in float summed in double, and the first
// candidate whose running sum reaches u * total.
static int32_t pick_draw(mint_sampler *s, const mint_candidates *c) {
    double u = mint_mt_uniform(&s->rng);
    if (c->n == 1) return c->data[0].id;
    float max = candidates_max_logit(c);
    double total = 0.0;
    for (size_t i = 0; i < c->n; i++) total += expf(c->data[i].logit - max);
    double target = u * total, cum = 0.0;
    // The running sum repeats the additions that made `total`, so it reaches target by the
    // end; the fallback only catches logits that are NaN or all -inf.
    for (size_t i = 0; i < c->n; i++) {
        cum += expf(c->data[i].logit - max);
        if (cum >= target) return c->data[i].id;
    }
    return c->data[c->n - 1].id;
}

typedef struct sampler_chain {
    const char *name;             // for debugging ("sampling", "greedy")
    const sampler_step_fn *steps; // [n_steps] applied in order
    int n_steps;                  // entries in steps
    sampler_pick_fn pick;         // chooses the token from what the steps left
} sampler_chain;

static const sampler_step_fn SAMPLING_STEPS[] = {
    step_repeat_penalty, // history -> penalised logits
    step_top_k,          // -> at most top_k candidates, sorted
    step_top_p,          // -> shortest prefix holding top_p of the probability
    step_min_p,          // -> candidates with p >= min_p * p_max
    step_temperature,    // -> logits / temp
};
static const sampler_step_fn GREEDY_STEPS[] = {
    step_repeat_penalty, // history -> penalised logits
    step_argmax,         // -> the one best candidate
};

#define N_STEPS(a) (int)(sizeof(a) / sizeof((a)[0]))

static const sampler_chain SAMPLING_CHAIN = {
    .name = "sampling",
    .steps = SAMPLING_STEPS,
    .n_steps = N_STEPS(SAMPLING_STEPS),
    .pick = pick_draw,
};
static const sampler_chain GREEDY_CHAIN = {
    .name = "greedy",
    .steps = GREEDY_STEPS,
    .n_steps = N_STEPS(GREEDY_STEPS),
    .pick = pick_only,
};

// ---------------------------------------------------------------------------------------------
// Public API

mint_sampler_params mint_sampler_default_params(void) {
    return (mint_sampler_params){
        .temp = 0.8f,
        .top_k = 40,
        .top_p = 0.95f,
        .min_p = 0.05f,
        .repeat_penalty = 1.0f,
        .repeat_last_n = 64,
        .seed = 0xC0FFEE,
    };
}

static mint_status validate_params(const mint_sampler_params *p, int32_t n_vocab, mint_err *err) {
    if (isnan(p->temp)) return mint_fail(err, MINT_E_ARG, "sampler: temp is NaN");
    if (!(p->top_p > 0.0f && p->top_p <= 1.0f))
        return mint_fail(err, MINT_E_ARG, "sampler: top_p %g outside (0, 1]", (double)p->top_p);
    if (!(p->min_p >= 0.0f && p->min_p <= 1.0f))
        return mint_fail(err, MINT_E_ARG, "sampler: min_p %g outside [0, 1]", (double)p->min_p);
    if (!(p->repeat_penalty > 0.0f) || isinf(p->repeat_penalty))
        return mint_fail(err, MINT_E_ARG, "sampler: repeat_penalty %g must be finite and > 0",
                         (double)p->repeat_penalty);
    if (p->repeat_last_n < 0 || p->repeat_last_n > MINT_SAMPLER_LAST_N_MAX)
        return mint_fail(err, MINT_E_ARG, "sampler: repeat_last_n %d outside [0, %d]",
                         (int)p->repeat_last_n, MINT_SAMPLER_LAST_N_MAX);
    if (n_vocab < 1)
        return mint_fail(err, MINT_E_ARG, "sampler: n_vocab %d must be >= 1", (int)n_vocab);
    return MINT_OK;
}

mint_status mint_sampler_params_check(const mint_sampler_params *p, mint_err *err) {
    if (!p) return mint_fail(err, MINT_E_ARG, "sampler: params is NULL");
    // Written so that NaN fails every test.
    if (!(p->temp >= 0.0f && p->temp <= MINT_SAMPLER_TEMP_MAX))
        return mint_fail(err, MINT_E_ARG,
                         "sampler: temp %g is outside [0, %.0f] (0 is greedy argmax)",
                         (double)p->temp, (double)MINT_SAMPLER_TEMP_MAX);
    if (p->top_k < 0 || p->top_k > MINT_SAMPLER_TOP_K_MAX)
        return mint_fail(err, MINT_E_ARG,
                         "sampler: top_k %d is outside [0, %d] (0 keeps all tokens)", (int)p->top_k,
                         MINT_SAMPLER_TOP_K_MAX);
    if (!(p->top_p > 0.0f && p->top_p <= 1.0f))
        return mint_fail(err, MINT_E_ARG, "sampler: top_p %g is outside (0, 1] (1 is off)",
                         (double)p->top_p);
    if (!(p->min_p >= 0.0f && p->min_p <= 1.0f))
        return mint_fail(err, MINT_E_ARG, "sampler: min_p %g is outside [0, 1] (0 is off)",
                         (double)p->min_p);
    if (!(p->repeat_penalty >= MINT_SAMPLER_PENALTY_MIN &&
          p->repeat_penalty <= MINT_SAMPLER_PENALTY_MAX))
        return mint_fail(err, MINT_E_ARG,
                         "sampler: repeat_penalty %g is outside [%g, %g] (1 is off)",
                         (double)p->repeat_penalty, (double)MINT_SAMPLER_PENALTY_MIN,
                         (double)MINT_SAMPLER_PENALTY_MAX);
    if (p->repeat_last_n < 0 || p->repeat_last_n > MINT_SAMPLER_LAST_N_MAX)
        return mint_fail(err, MINT_E_ARG, "sampler: repeat_last_n %d is outside [0, %d]",
                         (int)p->repeat_last_n, MINT_SAMPLER_LAST_N_MAX);
    return MINT_OK;
}

mint_status mint_sampler_create(const mint_sampler_params *params, int32_t n_vocab,
                                mint_sampler **out, mint_err *err) {
    if (!out) return mint_fail(err, MINT_E_ARG, "sampler: out is NULL");
    *out = NULL;
    mint_sampler_params p = params ? *params : mint_sampler_default_params();
    mint_status st = validate_params(&p, n_vocab, err);
    if (st != MINT_OK) return st;

    mint_sampler *s = calloc(1, sizeof *s);
    if (!s) goto nomem;
    s->params = p;
    s->n_vocab = n_vocab;
    s->cand.data = calloc((size_t)n_vocab, sizeof *s->cand.data);
    s->seen = calloc((size_t)n_vocab, sizeof *s->seen);
    // One spare slot so a window of 0 still has a valid (unused) buffer.
    s->history = calloc((size_t)p.repeat_last_n + 1, sizeof *s->history);
    if (!s->cand.data || !s->seen || !s->history) goto nomem;
    s->chain = p.temp > 0.0f ? &SAMPLING_CHAIN : &GREEDY_CHAIN;
    s->argmax_first = true;
    mint_mt_seed(&s->rng, (uint32_t)p.seed);
    *out = s;
    return MINT_OK;

nomem:
    mint_sampler_free(s);
    return mint_fail(err, MINT_E_NOMEM, "sampler: out of memory for n_vocab %d, repeat_last_n %d",
                     (int)n_vocab, (int)p.repeat_last_n);
}

void mint_sampler_free(mint_sampler *s) {
    if (!s) return;
    free(s->cand.data);
    free(s->seen);
    free(s->history);
    free(s);
}

// Every token a candidate, in id order.
static void fill_all(mint_sampler *s, const float *logits) {
    mint_candidates *c = &s->cand;
    for (int32_t i = 0; i < s->n_vocab; i++) c->data[i] = (mint_candidate){i, logits[i], 0.0f};
    c->n = (size_t)s->n_vocab;
    c->sorted = false;
}

// The tokens the grammar allows, in id order; returns their count. When the grammar allows
// none (it failed: a bound reached, or no token can continue), one candidate is left, an
// end-of-generation token, so the chain still picks; mint_gen_step reports the failure.
static int32_t fill_allowed(mint_sampler *s, mint_grammar *g, const float *logits) {
    mint_candidates *c = &s->cand;
    const uint8_t *allowed;
    const int32_t count = mint_grammar_mask(g, &allowed);
    const int32_t nv = mint_grammar_n_vocab(g) < s->n_vocab ? mint_grammar_n_vocab(g) : s->n_vocab;
    size_t n = 0;
    for (int32_t i = 0; i < nv; i++)
        if (allowed[i]) c->data[n++] = (mint_candidate){i, logits[i], 0.0f};
    if (n == 0) {
        const int32_t e = mint_grammar_end_token(g);
        const int32_t id = e >= 0 && e < s->n_vocab ? e : 0;
        c->data[n++] = (mint_candidate){id, logits[id], 0.0f};
    }
    c->n = n;
    c->sorted = false;
    return count;
}

static void run_steps(mint_sampler *s, int32_t *after) {
    mint_candidates *c = &s->cand;
    for (int i = 0; i < s->chain->n_steps; i++) {
        s->chain->steps[i](s, c);
        if (after) after[i] = (int32_t)c->n;
    }
}

// The grammar's mask, then the steps (after[i]: candidates left by step i). *n_grammar gets
// what the grammar allowed: n_vocab without one, -1 when greedy's argmax was allowed alone.
static mint_candidates *run_chain(mint_sampler *s, const float *logits, int32_t *after,
                                  int32_t *n_grammar) {
    mint_grammar *g = s->grammar && mint_grammar_active(s->grammar) ? s->grammar : NULL;
    *n_grammar = s->n_vocab;
    if (g && s->chain == &GREEDY_CHAIN && s->argmax_first) {
        fill_all(s, logits);
        run_steps(s, after);
        if (mint_grammar_allows(g, s->cand.data[0].id)) {
            *n_grammar = -1;
            return &s->cand;
        }
    }
    if (g)
        *n_grammar = fill_allowed(s, g, logits);
    else
        fill_all(s, logits);
    run_steps(s, after);
    return &s->cand;
}

const mint_candidates *mint_sampler_apply_chain(mint_sampler *s, const float *logits) {
    MINT_ASSERT(s && logits);
    int32_t n_grammar;
    return run_chain(s, logits, NULL, &n_grammar);
}

int32_t mint_sampler_sample(mint_sampler *s, const float *logits) {
    const mint_candidates *c = mint_sampler_apply_chain(s, logits);
    return s->chain->pick(s, c);
}

void mint_sampler_set_grammar(mint_sampler *s, mint_grammar *g) {
    if (s) s->grammar = g;
}

mint_grammar *mint_sampler_grammar(const mint_sampler *s) {
    return s->grammar;
}

void mint_sampler_set_argmax_first(mint_sampler *s, bool on) {
    s->argmax_first = on;
}

void mint_sampler_accept(mint_sampler *s, int32_t id) {
    // An id outside the vocabulary cannot be penalised; it is left out of the history rather
    // than indexing past s->seen.
    if (!s || s->params.repeat_last_n == 0 || id < 0 || id >= s->n_vocab) return;
    s->history[s->history_next] = id;
    s->history_next = (s->history_next + 1) % s->params.repeat_last_n;
    if (s->n_history < s->params.repeat_last_n) s->n_history++;
}

void mint_sampler_reset(mint_sampler *s, uint64_t seed) {
    if (!s) return;
    s->n_history = 0;
    s->history_next = 0;
    mint_mt_seed(&s->rng, (uint32_t)seed);
}

void mint_sampler_dist(mint_sampler *s, const float *logits, float *probs) {
    const mint_candidates *c = mint_sampler_apply_chain(s, logits);
    memset(probs, 0, (size_t)s->n_vocab * sizeof *probs);
    if (s->chain == &GREEDY_CHAIN) {
        probs[c->data[0].id] = 1.0f;
        return;
    }
    // The weights pick_draw uses, normalised.
    float max = candidates_max_logit(c);
    double total = 0.0;
    for (size_t i = 0; i < c->n; i++) total += expf(c->data[i].logit - max);
    for (size_t i = 0; i < c->n; i++)
        probs[c->data[i].id] = (float)(expf(c->data[i].logit - max) / total);
}

int32_t mint_sampler_draw(mint_sampler *s, const float *probs) {
    double u = mint_mt_uniform(&s->rng), total = 0.0;
    int32_t last = 0;
    for (int32_t i = 0; i < s->n_vocab; i++) {
        total += probs[i];
        if (probs[i] > 0) last = i;
    }
    const double target = u * total;
    double cum = 0.0;
    for (int32_t i = 0; i < s->n_vocab; i++) {
        cum += probs[i];
        if (probs[i] > 0 && cum > target) return i;
    }
    return last; // rounding left the sum a hair short of the target
}

double mint_sampler_uniform(mint_sampler *s) {
    return mint_mt_uniform(&s->rng);
}

const mint_sampler_params *mint_sampler_get_params(const mint_sampler *s) {
    return &s->params;
}

const mint_candidates *mint_sampler_last(const mint_sampler *s) {
    return &s->cand;
}

int32_t mint_sampler_sample_info(mint_sampler *s, const float *logits, mint_sample_info *info) {
    int32_t after[8] = {0}, n_grammar;
    mint_candidates *c = run_chain(s, logits, after, &n_grammar);
    const int32_t token = s->chain->pick(s, c);
    if (!info) return token;
    const bool greedy = s->chain == &GREEDY_CHAIN;
    // The sampling chain's steps: penalty, top-k, top-p, min-p, temperature.
    *info = (mint_sample_info){.n_vocab = s->n_vocab,
                               .n_top_k = greedy ? 1 : after[1],
                               .n_top_p = greedy ? 1 : after[2],
                               .n_min_p = greedy ? 1 : after[3],
                               .token = token,
                               .p = 1.0f,
                               .greedy = greedy,
                               .n_grammar = n_grammar};
    if (!greedy) {
        float max = candidates_max_logit(c);
        double total = 0.0, mine = 0.0;
        for (size_t i = 0; i < c->n; i++) {
            const double w = expf(c->data[i].logit - max); // pick_draw's weights
            total += w;
            if (c->data[i].id == token) mine = w;
        }
        info->p = (float)(mine / total);
    }
    return token;
}
