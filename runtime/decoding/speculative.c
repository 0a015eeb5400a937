// speculative.c - speculative decoding with a draft model or with prompt lookup.
//
// Invariant at the top of every round: `tok` holds the prompt and every accepted token; the
// target has evaluated all of them but the last (`pending`). A round:
//   1. draft K tokens: with a draft model, it catches up on the tokens it lacks (a batch ending
//      in `pending`), then samples d1 from its distribution q1, evaluates d1, samples d2, ...
//      (K - 1 single-token evaluations); with prompt lookup, d1..dK continue the most recent
//      earlier occurrence of the last n-gram of `tok`, and each q is a point mass;
//   2. the target evaluates [pending, d1 .. dK] in one batch: rows 0..K are p1 .. p(K+1);
//   3. accept: greedy, while d_i is the argmax of p_i; sampled, d_i with probability
//      min(1, p_i(d_i) / q_i(d_i)). The first rejection is replaced by a draw from
//      norm(max(0, p_i - q_i)); when all K pass, one more token comes from p(K+1). So a round
//      yields m + 1 tokens for m accepted, and the tokens follow the target's distribution;
//   4. roll back: the target keeps pending and d1..dm, the draft what of that it evaluated.
// Batch invariance makes the greedy output identical, bit for bit, to the target's own greedy
// decoding: every accepted token is the argmax of the very logits that decoding would compute.
#include "base/clock.h"
#include "base/error.h"
#include "runtime/engine/context.h"
#include "runtime/text/sampler_internal.h"

#include <stdlib.h>
#include <string.h>

mint_spec_params mint_spec_default_params(void) {
    return (mint_spec_params){.draft = NULL, .n_draft = 8, .lookup_n = 3, .max_tokens = 64};
}

enum { MAX_DRAFT = 64 };

typedef struct spec {
    mint_ctx *t, *d; // target, draft (NULL: lookup)
    mint_sampler *s; // the sampling parameters and RNG of both
    const mint_spec_params *p;
    bool greedy;              // the sampler is greedy
    int32_t n_vocab;          // vocabulary size
    int32_t *tok;             // [n_ctx] prompt and accepted tokens
    int32_t n;                // used
    float *q;                 // [MAX_DRAFT][n_vocab] the draft's distribution at each step
    float *pr;                // [n_vocab] the target's distribution at one step
    mint_batch_entry *batch;  // [MAX_DRAFT + 1]
    int32_t draft[MAX_DRAFT]; // this round's drafted tokens
} spec;

// Up to k tokens continuing the most recent earlier occurrence of the last n-gram of tok (n from
// lookup_n down to 1); 0 when there is none.
static int lookup_draft(const spec *x, int k) {
    for (int n = x->p->lookup_n; n >= 1; n--) {
        if (x->n <= n) continue;
        const int32_t *pat = x->tok + x->n - n;
        for (int32_t j = x->n - n - 1; j >= 0; j--) {
            if (memcmp(x->tok + j, pat, (size_t)n * sizeof *pat) != 0) continue;
            int m = 0;
            while (m < k && j + n + m < x->n) {
                ((spec *)x)->draft[m] = x->tok[j + n + m];
                m++;
            }
            if (m > 0) return m;
        }
    }
    return 0;
}

// Drafts up to k tokens with the draft model, filling x->q for each; returns how many.
static mint_status model_draft(spec *x, int k, int *n_drafted, mint_err *err) {
    *n_drafted = 0;
    const int32_t held = mint_seq_n_past(x->d, 0); // catch up on the tokens the draft lacks
    mint_status st = mint_eval(x->d, x->tok + held, x->n - held, held, false, err);
    for (int i = 0; st == MINT_OK && i < k; i++) {
        float *q = x->q + (size_t)i * x->n_vocab;
        mint_sampler_dist(x->s, mint_get_logits(x->d, -1), q);
        x->draft[i] = mint_sampler_draw(x->s, q); // the argmax, for a greedy sampler
        (*n_drafted)++;
        if (i + 1 < k) st = mint_eval(x->d, &x->draft[i], 1, x->n + i, false, err);
    }
    return st;
}

// One round; appends the tokens it yields to x->tok and reports them. *stop when done.
static mint_status round_once(spec *x, mint_spec_stats *stats, bool *stop, mint_err *err) {
    const mint_spec_params *p = x->p;
    int budget = p->max_tokens - (int)stats->generated; // tokens still wanted
    int k = p->n_draft < budget - 1 ? p->n_draft : budget - 1;
    int32_t room = mint_ctx_n_ctx(x->t) - x->n; // positions left for d1..dK (after pending)
    if (k > room) k = room;
    if (x->d && k > mint_ctx_n_ctx(x->d) - x->n) k = mint_ctx_n_ctx(x->d) - x->n;
    if (k < 0) k = 0;
    int n_draft = 0;
    mint_status st = MINT_OK;
    if (k > 0) {
        if (x->d)
            st = model_draft(x, k, &n_draft, err);
        else
            n_draft = lookup_draft(x, k);
    }
    if (st) return st;
    stats->drafted += (uint64_t)n_draft;
    const int32_t base = x->n - 1; // position of pending
    x->batch[0] = (mint_batch_entry){x->tok[base], base, 0, true};
    for (int i = 0; i < n_draft; i++)
        x->batch[i + 1] = (mint_batch_entry){x->draft[i], base + 1 + i, 0, true};
    if ((st = mint_decode(x->t, x->batch, n_draft + 1, err))) return st;
    stats->target_passes++;

    int m = 0; // accepted drafts
    int32_t next = -1;
    for (; m <= n_draft; m++) {
        mint_sampler_dist(x->s, mint_get_logits(x->t, m), x->pr);
        if (m == n_draft) { // every draft passed: one more from the target
            next = mint_sampler_draw(x->s, x->pr);
            break;
        }
        const int32_t d = x->draft[m];
        const float pd = x->pr[d];
        const float qd = x->d ? x->q[(size_t)m * x->n_vocab + d] : 1.0f;
        const bool ok = x->greedy ? pd == 1.0f : mint_sampler_uniform(x->s) * qd < pd;
        if (ok) continue;
        // Rejected: draw from the residual norm(max(0, p - q)) (p itself when they match).
        if (!x->greedy) {
            double sum = 0;
            for (int32_t i = 0; i < x->n_vocab; i++) {
                const float qi = x->d ? x->q[(size_t)m * x->n_vocab + i] : (i == d ? 1.0f : 0.0f);
                x->pr[i] = x->pr[i] > qi ? x->pr[i] - qi : 0.0f;
                sum += x->pr[i];
            }
            if (sum <= 0) mint_sampler_dist(x->s, mint_get_logits(x->t, m), x->pr);
        }
        next = mint_sampler_draw(x->s, x->pr);
        break;
    }
    stats->accepted += (uint64_t)m;
    // Roll back what the target and the draft evaluated past pending and the accepted drafts.
    mint_seq_truncate(x->t, 0, base + 1 + m, NULL);
    if (x->d && mint_seq_n_past(x->d, 0) > base + 1 + m)
        mint_seq_truncate(x->d, 0, base + 1 + m, NULL);
    // Emit d1..dm then next, stopping at an end-of-generation token or when told to.
    for (int i = 0; i <= m && !*stop; i++) {
        const int32_t t = i < m ? x->draft[i] : next;
        x->tok[x->n++] = t;
        stats->generated++;
        if (p->on_token && !p->on_token(p->user, t)) *stop = true;
        if (!p->ignore_eos && mint_token_is_eog(x->t->model, t)) *stop = true;
        if ((int)stats->generated >= p->max_tokens || x->n >= mint_ctx_n_ctx(x->t)) *stop = true;
    }
    if (*stop && x->n - 1 < base + 1 + m) // stopped inside the accepted run: drop the rest
        mint_seq_truncate(x->t, 0, x->n - 1, NULL);
    return MINT_OK;
}

mint_status mint_speculative(mint_ctx *t, mint_sampler *s, const int32_t *prompt, int32_t n_prompt,
                             const mint_spec_params *params, mint_spec_stats *stats,
                             mint_err *err) {
    mint_err_clear(err);
    const mint_spec_params p = params ? *params : mint_spec_default_params();
    memset(stats, 0, sizeof *stats);
    const mint_sampler_params *sp = mint_sampler_get_params(s);
    if (p.draft) {
        mint_status st = mint_vocab_compatible(t->model, p.draft->model, err);
        if (st) {
            mint_err_prefix(err, "the draft model cannot draft for the target");
            return st;
        }
    }
    if (sp->repeat_penalty != 1.0f)
        return mint_fail(err, MINT_E_ARG,
                         "speculative decoding does not support a repetition penalty (%g); use 1",
                         (double)sp->repeat_penalty);
    if (p.n_draft < 1 || p.n_draft > MAX_DRAFT || p.n_draft + 1 > mint_ctx_n_batch(t))
        return mint_fail(err, MINT_E_ARG, "draft length %d is outside 1..%d (and the batch size)",
                         p.n_draft, MAX_DRAFT);
    if (!p.draft && (p.lookup_n < 1 || p.lookup_n > 32))
        return mint_fail(err, MINT_E_ARG, "lookup n-gram length %d is outside 1..32", p.lookup_n);
    if (n_prompt < 1 || p.max_tokens < 1)
        return mint_fail(err, MINT_E_ARG, "speculative decoding needs a prompt and max_tokens");
    if (n_prompt >= mint_ctx_n_ctx(t) || (p.draft && n_prompt >= mint_ctx_n_ctx(p.draft)))
        return mint_fail(err, MINT_E_LIMIT, "the prompt of %d token%s fills the context", n_prompt,
                         n_prompt == 1 ? "" : "s");
    spec x = {.t = t,
              .d = p.draft,
              .s = s,
              .p = &p,
              .greedy = sp->temp <= 0.0f,
              .n_vocab = t->model->hp.n_vocab};
    x.tok = malloc((size_t)mint_ctx_n_ctx(t) * sizeof *x.tok);
    x.q = p.draft ? malloc((size_t)MAX_DRAFT * (size_t)x.n_vocab * sizeof *x.q) : NULL;
    x.pr = malloc((size_t)x.n_vocab * sizeof *x.pr);
    x.batch = malloc((size_t)(MAX_DRAFT + 1) * sizeof *x.batch);
    mint_status st = MINT_OK;
    if (!x.tok || (p.draft && !x.q) || !x.pr || !x.batch) {
        st = mint_fail(err, MINT_E_NOMEM, "speculative decoding: out of memory");
        goto done;
    }
    memcpy(x.tok, prompt, (size_t)n_prompt * sizeof *prompt);
    x.n = n_prompt;
    // The prompt but its last token, in both (what they hold already is reused).
    int32_t held;
    if ((st = mint_seq_prefix(t, 0, prompt, n_prompt - 1, &held, err))) goto done;
    if (held < n_prompt - 1 &&
        (st = mint_eval(t, prompt + held, n_prompt - 1 - held, held, false, err)))
        goto done;
    if (p.draft && (st = mint_seq_prefix(p.draft, 0, prompt, n_prompt - 1, &held, err))) goto done;
    const double t0 = mint_now_seconds();
    bool stop = false;
    while (!stop && (st = round_once(&x, stats, &stop, err)) == MINT_OK) {}
    stats->seconds = mint_now_seconds() - t0;
done:
    free(x.tok);
    free(x.q);
    free(x.pr);
    free(x.batch);
    return st;
}
