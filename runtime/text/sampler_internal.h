// sampler_internal.h - the sampler's candidate array, for the chain's steps and for tests.
//
// A sample starts from one candidate per vocabulary entry, in id order; each step of the chain
// (runtime/text/sampler.c) rewrites logits, reorders, or shortens the array; the last step draws
// one candidate. Tests call mint_sampler_apply_chain to see which candidates survive the filters.
#ifndef MINT_SAMPLER_INTERNAL_H
#define MINT_SAMPLER_INTERNAL_H

#include "mint.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mint_candidate {
    int32_t id;  // token id
    float logit; // current logit (after the penalty; divided by temp once that step ran)
    float p;     // probability; meaningful only right after a step that computed a softmax
} mint_candidate;

typedef struct mint_candidates {
    mint_candidate *data; // [n] candidates; the sampler's scratch, n_vocab long
    size_t n;             // candidates still in play, 1 .. n_vocab
    bool sorted;          // data is ordered by logit, highest first (lower id first on ties)
} mint_candidates;

// Runs every step of the chain except the draw on a copy of `logits` (n_vocab floats, not
// modified) and returns the surviving candidates: all of them for no filters, one (the argmax)
// when temp <= 0. The array lives in the sampler and is overwritten by the next call to this or
// mint_sampler_sample. The penalty history is read, not changed; the RNG is not touched.
const mint_candidates *mint_sampler_apply_chain(mint_sampler *s, const float *logits);

// The candidates the last sample drew from (its chain's survivors, their logits after the
// temperature), valid until the next sample or chain run.
const mint_candidates *mint_sampler_last(const mint_sampler *s);

// The distribution the sampler draws from, over the whole vocabulary: probs[i] is the probability
// of token i after the chain (0 for a token a filter dropped); for a greedy sampler, 1 on the
// argmax. The penalty history is read; the RNG is not touched. (Speculative decoding compares
// the target's and the draft's distributions token by token.)
void mint_sampler_dist(mint_sampler *s, const float *logits, float *probs);
// Draws a token from n_vocab weights (any may be 0; not all) with the sampler's RNG: one uniform
// number per call, the first token whose running sum passes u * total.
int32_t mint_sampler_draw(mint_sampler *s, const float *probs);
// A uniform number in [0, 1) from the sampler's RNG.
double mint_sampler_uniform(mint_sampler *s);
// The parameters the sampler was created with.
const mint_sampler_params *mint_sampler_get_params(const mint_sampler *s);
// The attached grammar, or NULL.
mint_grammar *mint_sampler_grammar(const mint_sampler *s);
// Greedy sampling with a grammar asks about the argmax alone first (on, the default) or masks
// every time (off): both pick the same tokens, which tests check.
void mint_sampler_set_argmax_first(mint_sampler *s, bool on);

#endif // MINT_SAMPLER_INTERNAL_H
