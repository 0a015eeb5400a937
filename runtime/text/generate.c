// generate.c - one generation step: logits -> token -> text.
//
// The step samples with the caller's sampler, reports the token's log-probability and its
// alternatives (runtime/text/logprobs.c), ends the generation at an end-of-generation token, a
// stop string or max_tokens, and turns the token into text. Text goes through a hold buffer: the
// bytes at its end that could still begin a stop string are held back, and released as soon as
// the next piece shows they do not (or when the generation ends), so that a stop string split
// across tokens never reaches the client even in part. Stop strings are matched on bytes.
//
// A grammar attached to the sampler (mint_sampler_set_grammar) is advanced with every sampled
// token. While it constrains, an end-of-generation token ends the generation even with
// ignore_eos: the grammar allowed it only because the text is a complete match. A grammar that
// failed (a bound reached, no token able to continue) fails the step with its one line.
#include "runtime/text/generate.h"

#include "base/error.h"
#include "runtime/text/grammar.h"
#include "runtime/text/sampler_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct mint_gen {
    const mint_vocab *v;           // the model's vocabulary (pieces, end-of-generation)
    mint_sampler *s;               // borrowed sampler
    mint_gen_params p;             // parameters (stop points into stops below)
    char *stop[MINT_GEN_MAX_STOP]; // [n_stop] copies of the non-empty stop strings
    size_t stop_len[MINT_GEN_MAX_STOP];
    int32_t n_stop;
    char *piece; // [piece_cap] the last token's bytes
    size_t piece_cap;
    char *hold; // [n_hold] bytes held back, then this step's piece; [hold_cap]
    size_t n_hold, hold_cap;
    char *text; // [text_cap] the bytes released by the last step
    size_t text_cap;
    int32_t n_generated; // tokens generated (end-of-generation not counted)
    bool finished;       // a step returned a finish reason
};

mint_gen_params mint_gen_default_params(void) {
    return (mint_gen_params){.max_tokens = -1};
}

const char *mint_finish_name(mint_finish f) {
    switch (f) {
    case MINT_FINISH_STOP:
    case MINT_FINISH_EOS:
        return "stop";
    case MINT_FINISH_LENGTH:
        return "length";
    default:
        return "";
    }
}

void mint_gen_free(mint_gen *g) {
    if (!g) return;
    for (int32_t i = 0; i < g->n_stop; i++) free(g->stop[i]);
    free(g->piece);
    free(g->hold);
    free(g->text);
    free(g);
}

mint_status mint_gen_create_vocab(const mint_vocab *v, mint_sampler *s, const mint_gen_params *p,
                                  mint_gen **out, mint_err *err) {
    mint_err_clear(err);
    *out = NULL;
    const mint_gen_params q = p ? *p : mint_gen_default_params();
    if (!v || !s) return mint_fail(err, MINT_E_ARG, "mint_gen_create needs a model and a sampler");
    if (q.n_stop < 0 || q.n_stop > MINT_GEN_MAX_STOP || (q.n_stop > 0 && !q.stop))
        return mint_fail(err, MINT_E_ARG, "n_stop %d is outside 0..%d", q.n_stop,
                         MINT_GEN_MAX_STOP);
    if (q.n_top < 0 || q.n_top > MINT_GEN_MAX_TOP)
        return mint_fail(err, MINT_E_ARG, "n_top %d is outside 0..%d", q.n_top, MINT_GEN_MAX_TOP);
    mint_gen *g = calloc(1, sizeof *g);
    if (!g) return mint_fail(err, MINT_E_NOMEM, "mint_gen_create: out of memory");
    g->v = v;
    g->s = s;
    g->p = q;
    g->p.stop = NULL;
    for (int32_t i = 0; i < q.n_stop; i++) {
        if (!q.stop[i] || !q.stop[i][0]) continue;
        if (!(g->stop[g->n_stop] = strdup(q.stop[i]))) {
            mint_gen_free(g);
            return mint_fail(err, MINT_E_NOMEM, "mint_gen_create: out of memory");
        }
        g->stop_len[g->n_stop++] = strlen(q.stop[i]);
    }
    *out = g;
    return MINT_OK;
}

// Grows *buf to hold n bytes.
static bool reserve(char **buf, size_t *cap, size_t n) {
    if (n <= *cap) return true;
    size_t c = *cap ? *cap : 64;
    while (c < n) c *= 2;
    char *b = realloc(*buf, c);
    if (!b) return false;
    *buf = b;
    *cap = c;
    return true;
}

// Moves the first n held bytes to the released text.
static void release(mint_gen *g, size_t n, mint_gen_token *out) {
    memcpy(g->text, g->hold, n);
    out->text = g->text;
    out->n_text = n;
    memmove(g->hold, g->hold + n, g->n_hold - n);
    g->n_hold -= n;
}

// Where the earliest complete stop string begins in the held bytes, or -1.
static ptrdiff_t find_stop(const mint_gen *g) {
    ptrdiff_t best = -1;
    for (int32_t k = 0; k < g->n_stop; k++) {
        const size_t ls = g->stop_len[k];
        for (size_t at = 0; at + ls <= g->n_hold; at++) {
            if (best >= 0 && (ptrdiff_t)at >= best) break;
            if (memcmp(g->hold + at, g->stop[k], ls) == 0) {
                best = (ptrdiff_t)at;
                break;
            }
        }
    }
    return best;
}

// The longest end of the held bytes that is a proper beginning of some stop string.
static size_t stop_prefix(const mint_gen *g) {
    size_t keep = 0;
    for (int32_t k = 0; k < g->n_stop; k++)
        for (size_t n = g->stop_len[k] - 1; n > keep; n--)
            if (n <= g->n_hold && memcmp(g->hold + g->n_hold - n, g->stop[k], n) == 0) {
                keep = n;
                break;
            }
    return keep;
}

static mint_status finish(mint_gen *g, mint_gen_token *out, mint_finish f, size_t n_release) {
    release(g, n_release, out);
    g->n_hold = 0; // at a stop string, what follows its start is dropped
    g->finished = true;
    out->finish = f;
    out->n_held = 0;
    out->n_generated = g->n_generated;
    return MINT_OK;
}

// The token's and the n_top best candidates' log-probabilities in the distribution the sampler
// drew from: pick_draw's weights exp(logit - max), normalised over the candidates left.
static void post_sampling(const mint_candidates *c, int32_t id, int32_t n_top,
                          mint_gen_token *out) {
    float max = -INFINITY;
    for (size_t i = 0; i < c->n; i++)
        if (c->data[i].logit > max) max = c->data[i].logit;
    double total = 0.0, mine = 0.0;
    for (size_t i = 0; i < c->n; i++) {
        const double w = c->n == 1 ? 1.0 : exp((double)c->data[i].logit - max);
        total += w;
        if (c->data[i].id == id) mine = w;
    }
    out->logprob = mine > 0 ? log(mine / total) : -INFINITY;
    // The best n_top by weight (ties: the lower id), by insertion into a short sorted list.
    int32_t n = 0;
    double best[MINT_GEN_MAX_TOP];
    for (size_t i = 0; i < c->n; i++) {
        const double w = c->n == 1 ? 1.0 : exp((double)c->data[i].logit - max);
        const int32_t t = c->data[i].id;
        int32_t k = n < n_top ? n++ : n_top;
        if (k == n_top && (n_top == 0 || w < best[n_top - 1] ||
                           (w == best[n_top - 1] && t > out->top_id[n_top - 1])))
            continue;
        if (k == n_top) k = n_top - 1;
        for (; k > 0 && (w > best[k - 1] || (w == best[k - 1] && t < out->top_id[k - 1])); k--) {
            best[k] = best[k - 1];
            out->top_id[k] = out->top_id[k - 1];
        }
        best[k] = w;
        out->top_id[k] = t;
    }
    out->n_top = n;
    for (int32_t k = 0; k < n; k++) out->top_logprob[k] = log(best[k] / total);
}

mint_status mint_gen_step(mint_gen *g, const float *logits, mint_gen_token *out, mint_err *err) {
    mint_err_clear(err);
    if (g->finished) return mint_fail(err, MINT_E_ARG, "mint_gen_step: the generation finished");
    memset(out, 0, offsetof(mint_gen_token, top_id)); // the arrays are filled as far as n_top
    out->finish = MINT_FINISH_NONE;
    out->n_generated = g->n_generated;
    out->logprob = NAN;
    const int32_t n_vocab = mint_vocab_n_tokens(g->v);
    const int32_t id = mint_sampler_sample_info(g->s, logits, g->p.sample_info ? &out->info : NULL);
    out->token = id;
    mint_grammar *gr = mint_sampler_grammar(g->s);
    mint_status st;
    if (gr && (st = mint_grammar_failure(gr, err)) != MINT_OK) return st;
    if (g->p.post_sampling && (g->p.logprobs || g->p.n_top > 0)) {
        post_sampling(mint_sampler_last(g->s), id, g->p.n_top, out);
    } else if (g->p.logprobs || g->p.n_top > 0) {
        int32_t ids[MINT_GEN_MAX_TOP + 1];
        double lp[MINT_GEN_MAX_TOP + 1];
        out->n_top = mint_top_k(logits, n_vocab, g->p.n_top, out->top_id);
        ids[0] = id;
        memcpy(ids + 1, out->top_id, (size_t)out->n_top * sizeof *ids);
        mint_log_softmax(logits, n_vocab, ids, out->n_top + 1, lp);
        out->logprob = lp[0];
        memcpy(out->top_logprob, lp + 1, (size_t)out->n_top * sizeof *lp);
    }
    // Room for what is held plus the longest piece, in both buffers.
    const size_t want = mint_vocab_token_to_piece(g->v, id, false, 0, NULL, 0);
    if (!reserve(&g->piece, &g->piece_cap, want + 1) ||
        !reserve(&g->hold, &g->hold_cap, g->n_hold + want + 1) ||
        !reserve(&g->text, &g->text_cap, g->n_hold + want + 1))
        return mint_fail(err, MINT_E_NOMEM, "mint_gen_step: out of memory");
    out->piece = g->piece;
    out->text = g->text;
    if ((!g->p.ignore_eos || (gr && mint_grammar_active(gr))) && mint_vocab_is_eog(g->v, id))
        return finish(g, out, MINT_FINISH_EOS, g->n_hold); // its piece is not text
    if (gr && (st = mint_grammar_accept(gr, id, err)) != MINT_OK) return st;
    mint_sampler_accept(g->s, id);
    size_t n = mint_vocab_token_to_piece(g->v, id, false, 0, g->piece, g->piece_cap);
    const char *pc = g->piece;
    // After a lone BOS the first word loses the space SentencePiece put before it.
    if (g->n_generated == 0 && g->p.after_bos && n > 0 && pc[0] == ' ') pc++, n--;
    memmove(g->piece, pc, n);
    out->n_piece = n;
    memcpy(g->hold + g->n_hold, g->piece, n);
    g->n_hold += n;
    g->n_generated++;
    out->n_generated = g->n_generated;
    const ptrdiff_t at = find_stop(g);
    if (at >= 0) return finish(g, out, MINT_FINISH_STOP, (size_t)at);
    if (g->p.max_tokens >= 0 && g->n_generated >= g->p.max_tokens)
        return finish(g, out, MINT_FINISH_LENGTH, g->n_hold);
    release(g, g->n_hold - stop_prefix(g), out);
    out->n_held = g->n_hold;
    return MINT_OK;
}
