// beam.c - beam search over the context's sequences.
//
// Each live beam is a sequence of the context. A step takes the log-softmax of every live beam's
// logits, expands each beam by its n_beams best tokens, and keeps the n_beams expansions of
// highest total log-probability (Hugging Face's ranking during search). An expansion ending in an
// end-of-generation token becomes a finished hypothesis, scored logprob / length^length_penalty,
// and is not expanded further. Surviving expansions take over sequences: the first child of a
// beam continues its parent's sequence, every further child gets a fork of it (the KV blocks are
// shared, the partly filled last block is copied on its first write), and a beam without
// children gives its sequence back. Then all live beams are evaluated in one batch.
//
// The search ends when n_beams hypotheses have finished, or at max_tokens (the live beams then
// count as hypotheses too). With n_beams = 1 every step keeps the single best token: greedy.
#include "base/error.h"
#include "runtime/engine/context.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

mint_beam_params mint_beam_default_params(void) {
    return (mint_beam_params){
        .n_beams = 4, .length_penalty = 1.0f, .max_tokens = 64, .ignore_eos = false};
}

typedef struct beam {
    int32_t seq;     // sequence holding it
    int32_t row;     // its logits row after the last batch
    double logprob;  // total log-probability of its tokens
    int32_t *tokens; // [max_tokens] generated tokens
    int32_t n;       // generated so far
} beam;

typedef struct cand {
    int32_t parent; // index of the beam it extends
    int32_t token;  // the token
    double logprob; // parent's total + log p(token)
} cand;

typedef struct hyp {
    double score;   // logprob / n^length_penalty
    double logprob; // total log-probability
    int32_t n;      // tokens
    int32_t *tokens;
} hyp;

// The k best (token, log p) of a row of logits, in descending order (lower id on ties): the
// library's one top-k and log-softmax (runtime/text/logprobs.c).
static int top_k(const float *logits, int32_t n_vocab, int k, int32_t *ids, double *lp) {
    const int n = mint_top_k(logits, n_vocab, k, ids);
    mint_log_softmax(logits, n_vocab, ids, n, lp);
    return n;
}

static int cmp_cand(const void *a, const void *b) {
    const cand *x = a, *y = b;
    if (x->logprob != y->logprob) return x->logprob < y->logprob ? 1 : -1;
    if (x->parent != y->parent) return x->parent - y->parent;
    return x->token - y->token;
}

static double score_of(double logprob, int32_t n, float length_penalty) {
    return n > 0 ? logprob / pow((double)n, (double)length_penalty) : logprob;
}

mint_status mint_beam_search(mint_ctx *c, const int32_t *prompt, int32_t n_prompt,
                             const mint_beam_params *params, int32_t *out, int32_t cap,
                             int32_t *n_out, double *logprob, mint_err *err) {
    mint_err_clear(err);
    const mint_beam_params p = params ? *params : mint_beam_default_params();
    const int32_t N = p.n_beams, n_vocab = c->model->hp.n_vocab;
    *n_out = 0;
    if (N < 1 || N > c->params.n_seq_max)
        return mint_fail(err, MINT_E_ARG,
                         "beam search with %d beams needs as many sequences; the context has %d", N,
                         c->params.n_seq_max);
    if (N > c->params.n_batch)
        return mint_fail(err, MINT_E_ARG, "%d beams exceed the batch size %d", N,
                         c->params.n_batch);
    if (p.max_tokens < 1 || n_prompt < 1)
        return mint_fail(err, MINT_E_ARG, "beam search needs a prompt and max_tokens >= 1");
    if ((int64_t)n_prompt + p.max_tokens > c->params.n_ctx)
        return mint_fail(err, MINT_E_LIMIT,
                         "a prompt of %d and %d new token%s exceed the context length %d", n_prompt,
                         p.max_tokens, p.max_tokens == 1 ? "" : "s", c->params.n_ctx);
    mint_status st = MINT_OK;
    beam *beams = calloc((size_t)N * 2, sizeof *beams); // live beams, then the next step's
    cand *cands = malloc((size_t)N * N * sizeof *cands);
    hyp *hyps = calloc((size_t)N + (size_t)N, sizeof *hyps);
    int32_t *pool = malloc((size_t)N * 4 * (size_t)p.max_tokens * sizeof *pool);
    int32_t *ids = malloc((size_t)N * sizeof *ids);
    double *lps = malloc((size_t)N * sizeof *lps);
    bool *seq_used = calloc((size_t)c->params.n_seq_max, sizeof *seq_used);
    int32_t *children = malloc((size_t)N * sizeof *children);    // per live beam
    bool *first_taken = malloc((size_t)N * sizeof *first_taken); // its sequence went to a child
    mint_batch_entry *batch = malloc((size_t)N * sizeof *batch);
    if (!beams || !cands || !hyps || !pool || !ids || !lps || !seq_used || !children ||
        !first_taken || !batch) {
        st = mint_fail(err, MINT_E_NOMEM, "beam search: out of memory");
        goto done;
    }
    // Token storage: 2N live/next beams and 2N hypotheses, max_tokens each.
    for (int i = 0; i < 2 * N; i++) beams[i].tokens = pool + (size_t)i * p.max_tokens;
    for (int i = 0; i < 2 * N; i++) hyps[i].tokens = pool + (size_t)(2 * N + i) * p.max_tokens;
    for (int32_t s = 1; s < N; s++) mint_seq_truncate(c, s, 0, NULL);
    int32_t held;
    if ((st = mint_seq_prefix(c, 0, prompt, n_prompt, &held, err)) ||
        (st = mint_eval(c, prompt + held, n_prompt - held, held, false, err)))
        goto done;

    beam *live = beams, *next = beams + N;
    int n_live = 1, n_hyp = 0;
    live[0] = (beam){.seq = 0, .row = 0, .logprob = 0, .tokens = live[0].tokens, .n = 0};
    seq_used[0] = true;
    for (int32_t step = 0; step < p.max_tokens && n_live > 0 && n_hyp < N; step++) {
        int n_cand = 0; // every live beam's N best continuations
        for (int b = 0; b < n_live; b++) {
            int k = top_k(mint_get_logits(c, live[b].row), n_vocab, N, ids, lps);
            for (int j = 0; j < k; j++)
                cands[n_cand++] = (cand){b, ids[j], live[b].logprob + lps[j]};
        }
        qsort(cands, (size_t)n_cand, sizeof *cands, cmp_cand);
        int n_next = 0;
        memset(children, 0, (size_t)N * sizeof *children);
        for (int i = 0; i < n_cand && n_next + n_hyp < N; i++) {
            const cand *k = &cands[i];
            const beam *par = &live[k->parent];
            if (!p.ignore_eos && mint_token_is_eog(c->model, k->token)) { // finished
                hyp *h = &hyps[n_hyp++];
                memcpy(h->tokens, par->tokens, (size_t)par->n * sizeof *h->tokens);
                h->tokens[par->n] = k->token;
                h->n = par->n + 1;
                h->logprob = k->logprob;
                h->score = score_of(k->logprob, h->n, p.length_penalty);
                continue;
            }
            beam *nb = &next[n_next++];
            memcpy(nb->tokens, par->tokens, (size_t)par->n * sizeof *nb->tokens);
            nb->tokens[par->n] = k->token;
            nb->n = par->n + 1;
            nb->logprob = k->logprob;
            nb->row = k->parent; // parent index, resolved to a sequence below
            children[k->parent]++;
        }
        // Sequences: parents without children give theirs back; then the first child of a
        // parent takes the parent's sequence, later ones a fork of it (forks before any write).
        for (int b = 0; b < n_live; b++)
            if (children[b] == 0) {
                mint_seq_truncate(c, live[b].seq, 0, NULL);
                seq_used[live[b].seq] = false;
            }
        memset(first_taken, 0, (size_t)N * sizeof *first_taken);
        for (int i = 0; i < n_next; i++) {
            const int par = next[i].row;
            if (!first_taken[par]) {
                first_taken[par] = true;
                next[i].seq = live[par].seq;
                continue;
            }
            int32_t s = 0;
            while (seq_used[s]) s++;
            seq_used[s] = true;
            mint_seq_fork(c, live[par].seq, s, NULL);
            next[i].seq = s;
        }
        for (int i = 0; i < n_next; i++) {
            batch[i] = (mint_batch_entry){next[i].tokens[next[i].n - 1], n_prompt + step,
                                          next[i].seq, true};
            next[i].row = i;
        }
        // The tokens of the last step are never evaluated: their logits are not needed.
        if (n_next > 0 && step + 1 < p.max_tokens && n_hyp < N &&
            (st = mint_decode(c, batch, n_next, err)))
            goto done;
        beam *t = live;
        live = next;
        next = t;
        n_live = n_next;
    }
    for (int b = 0; b < n_live; b++) { // what is still live competes as it stands
        hyp *h = &hyps[n_hyp++];
        memcpy(h->tokens, live[b].tokens, (size_t)live[b].n * sizeof *h->tokens);
        h->n = live[b].n;
        h->logprob = live[b].logprob;
        h->score = score_of(live[b].logprob, h->n, p.length_penalty);
    }
    int best = 0;
    for (int i = 1; i < n_hyp; i++)
        if (hyps[i].score > hyps[best].score) best = i;
    if (n_hyp > 0) {
        *n_out = hyps[best].n < cap ? hyps[best].n : cap;
        memcpy(out, hyps[best].tokens, (size_t)*n_out * sizeof *out);
        *logprob = hyps[best].logprob;
    }
done:
    free(beams);
    free(cands);
    free(hyps);
    free(pool);
    free(ids);
    free(lps);
    free(seq_used);
    free(children);
    free(first_taken);
    free(batch);
    return st;
}
