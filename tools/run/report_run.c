// report_run.c - mint-run --report: gathering a run for the HTML page (tools/common/report.c).
//
// Opened before generation (so that an unwritable path, a compare model that cannot be opened or
// has another vocabulary, fail before any work): the output file is begun, attention capture is
// set on the context, tracing is switched on for the time per op kind. During the run: the
// prompt's tokens with the probability the model gave each (the prompt is evaluated with every
// row's logits), then each generated token with its distribution, the time of the step that
// produced it and the KV cache after it. At the end the compare model scores the same tokens
// (teacher-forced): per-token KL divergence and its most likely token.
#include "report.h"
#include "run.h"

#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Attention bytes the page may hold (8-bit weights of the causal triangles of every layer and
// head): the positions shown are the most that fit.
#define ATTENTION_BUDGET (8u << 20)
// A mixture of experts' routing is shown for at most this many tokens (every layer, the k
// experts each chose and their weights: 48 layers x 8 experts x 512 tokens is about 2 MB of JSON).
#define ROUTING_MAX 512

struct run_report {
    report r;               // what the page shows
    int cap;                // tokens allocated in r.tok
    mint_atomic_file *file; // the page, begun at open
    float *att;             // capture buffer [layers][heads][T][T]
    mint_model *cmp;        // compare model, or NULL
    double op_sum[16];      // seconds per op kind
    int32_t *route_ids;     // [layers][route_T][k] the experts chosen (a mixture), or NULL
    float *route_w;         // [layers][route_T][k] their weights
    int route_T;            // positions the routing capture holds
    float *state;           // [recurrent layers][heads][state_T] a hybrid's state norms, or NULL
    int state_T;            // positions the state capture holds
    char *chat_prompt;      // the last chat turn's rendered prompt (malloc), or NULL
};

static report_token *add_token(run_report *rr) {
    if (rr->r.n_tok == rr->cap) {
        int cap = rr->cap ? 2 * rr->cap : 256;
        report_token *t = realloc(rr->r.tok, (size_t)cap * sizeof *t);
        if (!t) return NULL;
        rr->r.tok = t;
        rr->cap = cap;
    }
    report_token *t = &rr->r.tok[rr->r.n_tok++];
    memset(t, 0, sizeof *t);
    t->p = t->kl = t->ms = t->kv_mib = -1;
    t->cmp_top = -1;
    return t;
}

void run_report_free(run_report *rr) {
    if (!rr) return;
    mint_atomic_file_abort(rr->file);
    mint_model_close(rr->cmp);
    free(rr->att);
    free(rr->route_ids);
    free(rr->state);
    free(rr->route_w);
    free(rr->r.tok);
    free(rr->chat_prompt);
    free(rr);
}

int run_report_open(session *s, run_report **out) {
    *out = NULL;
    const run_options *o = s->o;
    if (!o->report) return 0;
    run_report *rr = calloc(1, sizeof *rr);
    if (!rr) return run_fail("out of memory");
    mint_err err;
    if (mint_atomic_file_begin(o->report, &rr->file, &err) != MINT_OK) {
        run_report_free(rr);
        return run_fail(err.msg);
    }
    if (o->compare_model) {
        if (load_model(TOOL, o->compare_model, &o->load, &rr->cmp, &err) != MINT_OK ||
            mint_vocab_compatible(s->m, rr->cmp, &err) != MINT_OK) {
            char msg[700];
            snprintf(msg, sizeof msg, "--compare-model %s: %s", o->compare_model, err.msg);
            run_report_free(rr);
            return run_fail(msg);
        }
    }
    report *r = &rr->r;
    r->tool = TOOL;
    r->model_path = o->model;
    r->compare_path = o->compare_model;
    mint_model_describe(s->m, &r->desc);
    r->isa = mint_ctx_isa_name(s->ctx);
    r->threads = mint_ctx_n_threads(s->ctx);
    mint_cache_info ci;
    mint_ctx_cache_info(s->ctx, &ci);
    r->kv_block = ci.block;
    const int T = report_attention_positions(r->desc.n_layer, r->desc.n_head, ATTENTION_BUDGET,
                                             mint_ctx_n_ctx(s->ctx));
    rr->att = calloc((size_t)r->desc.n_layer * r->desc.n_head * (size_t)T * T, sizeof *rr->att);
    if (T > 0 && rr->att && mint_ctx_capture_attention(s->ctx, rr->att, T, &err) == MINT_OK)
        r->att_T = T;
    if (r->desc.n_expert > 0) { // a mixture: the routing of up to ROUTING_MAX tokens
        const int n_ctx = mint_ctx_n_ctx(s->ctx);
        const int RT = n_ctx < ROUTING_MAX ? n_ctx : ROUTING_MAX;
        const size_t n = (size_t)r->desc.n_layer * (size_t)RT * (size_t)r->desc.n_expert_used;
        rr->route_ids = calloc(n, sizeof *rr->route_ids);
        rr->route_w = calloc(n, sizeof *rr->route_w);
        if (rr->route_ids && rr->route_w &&
            mint_ctx_capture_routing(s->ctx, rr->route_ids, rr->route_w, RT, &err) == MINT_OK)
            rr->route_T = RT;
    }
    if (r->desc.n_layer_recurrent > 0) { // a hybrid: its states' norms for as many tokens
        const int n_ctx = mint_ctx_n_ctx(s->ctx);
        const int ST = n_ctx < ROUTING_MAX ? n_ctx : ROUTING_MAX;
        const size_t n =
            (size_t)r->desc.n_layer_recurrent * (size_t)r->desc.n_state_heads * (size_t)ST;
        rr->state = calloc(n, sizeof *rr->state);
        if (rr->state && mint_ctx_capture_state(s->ctx, rr->state, ST, &err) == MINT_OK)
            rr->state_T = ST;
    }
    mint_ctx_set_trace(s->ctx, true);
    *out = rr;
    return 0;
}

// Adds the last evaluation's node times to the per-op sums.
static void add_op_times(session *s, run_report *rr) {
    const mint_trace_node *nodes;
    const int32_t n = mint_ctx_last_trace(s->ctx, &nodes);
    report *r = &rr->r;
    for (int32_t i = 0; i < n; i++) {
        int k = 0;
        while (k < r->n_ops && strcmp(r->op_name[k], nodes[i].op) != 0) k++;
        if (k == r->n_ops) {
            if (r->n_ops == 16) continue;
            r->op_name[r->n_ops++] = nodes[i].op;
        }
        rr->op_sum[k] += nodes[i].seconds;
    }
}

static void kv_after(session *s, report_token *t) {
    mint_cache_info ci;
    mint_ctx_cache_info(s->ctx, &ci);
    t->kv_blocks = ci.blocks_used;
    t->kv_mib = (float)(ci.bytes_alloc / 1048576.0);
}

static void set_piece(const mint_model *m, int32_t id, char *buf, size_t cap) {
    size_t n = mint_token_to_piece(m, id, false, buf, cap - 1);
    buf[n < cap - 1 ? n : cap - 1] = '\0';
}

void run_report_prompt(session *s, run_report *rr, const int32_t *ids, int n, bool all_logits,
                       double seconds) {
    if (!rr) return;
    add_op_times(s, rr);
    for (int i = 0; i < n; i++) {
        report_token *t = add_token(rr);
        if (!t) return;
        t->id = ids[i];
        set_piece(s->m, ids[i], t->piece, sizeof t->piece);
        if (i > 0 && all_logits)
            report_fill_dist(t, s->m, mint_get_logits(s->ctx, i - 1), s->n_vocab);
        if (i == n - 1) t->ms = (float)(seconds * 1e3);
        kv_after(s, t);
    }
}

void run_report_chat_prompt(run_report *rr, const char *text) {
    if (!rr) return;
    free(rr->chat_prompt);
    rr->chat_prompt = strdup(text);
    rr->r.chat_prompt = rr->chat_prompt;
}

void run_report_token(session *s, run_report *rr, const float *logits, int32_t id) {
    if (!rr) return;
    report_token *t = add_token(rr);
    if (!t) return;
    t->id = id;
    t->generated = true;
    set_piece(s->m, id, t->piece, sizeof t->piece);
    report_fill_dist(t, s->m, logits, s->n_vocab);
}

void run_report_step(session *s, run_report *rr, double seconds) {
    if (!rr || rr->r.n_tok == 0) return;
    report_token *t = &rr->r.tok[rr->r.n_tok - 1];
    t->ms = (float)(seconds * 1e3);
    kv_after(s, t);
    add_op_times(s, rr);
}

// The compare model on the same tokens, teacher-forced: its distribution at each position
// against the main model's (recomputed here in batches with every row's logits).
static int compare(session *s, run_report *rr) {
    report *r = &rr->r;
    mint_err err;
    mint_ctx_params cp = mint_ctx_default_params();
    cp.n_threads = mint_ctx_n_threads(s->ctx);
    cp.n_ctx = mint_ctx_n_ctx(s->ctx);
    mint_ctx *a = NULL, *b = NULL;
    if (mint_ctx_create(s->m, &cp, &a, &err) != MINT_OK ||
        mint_ctx_create(rr->cmp, &cp, &b, &err) != MINT_OK) {
        mint_ctx_free(a);
        return run_fail(err.msg);
    }
    int32_t *ids = malloc((size_t)r->n_tok * sizeof *ids);
    for (int i = 0; ids && i < r->n_tok; i++) ids[i] = r->tok[i].id;
    const int nb = mint_ctx_n_batch(a);
    int rc = ids ? 0 : run_fail("out of memory");
    for (int off = 0; rc == 0 && off < r->n_tok - 1; off += nb) {
        const int len = r->n_tok - 1 - off < nb ? r->n_tok - 1 - off : nb;
        if (mint_eval(a, ids + off, len, off, true, &err) != MINT_OK ||
            mint_eval(b, ids + off, len, off, true, &err) != MINT_OK) {
            rc = run_fail(err.msg);
            break;
        }
        for (int i = 0; i < len; i++) { // row i predicts token off + i + 1
            report_token *t = &r->tok[off + i + 1];
            t->kl = (float)report_kl(mint_get_logits(a, i), mint_get_logits(b, i), s->n_vocab,
                                     &t->cmp_top);
            set_piece(s->m, t->cmp_top, t->cmp_piece, sizeof t->cmp_piece);
        }
    }
    free(ids);
    mint_ctx_free(a);
    mint_ctx_free(b);
    return rc;
}

int run_report_close(session *s, run_report *rr, bool ok) {
    if (!rr) return 0;
    mint_ctx_capture_attention(s->ctx, NULL, 0, NULL);
    if (rr->route_T > 0) mint_ctx_capture_routing(s->ctx, NULL, NULL, 0, NULL);
    if (rr->state_T > 0) mint_ctx_capture_state(s->ctx, NULL, 0, NULL);
    mint_ctx_set_trace(s->ctx, false);
    report *r = &rr->r;
    int rc = 0;
    if (ok && rr->cmp) rc = compare(s, rr);
    if (ok && rc == 0) {
        r->attention = mint_ctx_attention_name(s->ctx);
        r->att = r->att_T > 0 ? rr->att : NULL;
        if (r->att_T > r->n_tok) r->att_T = r->n_tok;
        if (rr->route_T > 0) {
            r->route_ids = rr->route_ids;
            r->route_w = rr->route_w;
            r->route_stride = rr->route_T;
            r->route_T = rr->route_T < r->n_tok ? rr->route_T : r->n_tok;
        }
        if (rr->state_T > 0) {
            r->state_norm = rr->state;
            r->state_stride = rr->state_T;
            r->state_T = rr->state_T < r->n_tok ? rr->state_T : r->n_tok;
        }
        for (int k = 0; k < r->n_ops; k++) {
            r->op_seconds[k] = rr->op_sum[k];
            if (r->att_T > 0 && strcmp(r->op_name[k], "ATTENTION") == 0)
                r->op_name[k] = "ATTENTION*"; // the weights this page shows are computed there
        }
        snprintf(
            r->note, sizeof r->note,
            "Attention: the weights of the first %d of %d token%s (8-bit, at most %u MiB of "
            "the page for all %d layers x %d heads; longer runs are cut there). Times per op "
            "kind are sums over every evaluation of the run; * attention's include computing the "
            "weights shown here (the plain double-precision loop of ops/attention_probs.c).",
            r->att_T, r->n_tok, cli_plural(r->n_tok), ATTENTION_BUDGET >> 20, r->desc.n_layer,
            r->desc.n_head);
        // The capture buffer is laid out for the T it was set with; report_write reads it with
        // att_T, so shrink it in place row by row when the run was shorter.
        const int T0 = report_attention_positions(r->desc.n_layer, r->desc.n_head, ATTENTION_BUDGET,
                                                  mint_ctx_n_ctx(s->ctx));
        if (r->att && r->att_T < T0) {
            const size_t L = (size_t)r->desc.n_layer * r->desc.n_head, T = (size_t)r->att_T;
            for (size_t m = 0; m < L; m++)
                for (size_t q = 0; q < T; q++)
                    memmove(rr->att + (m * T + q) * T, rr->att + (m * T0 + q) * T0,
                            T * sizeof *rr->att);
        }
        mint_err err;
        if (report_write(r, rr->file, &err) != MINT_OK) {
            rc = run_fail(err.msg);
        } else {
            mint_status st = mint_atomic_file_commit(rr->file, &err);
            rr->file = NULL; // committed, or freed by the failed commit
            if (st != MINT_OK) rc = run_fail(err.msg);
        }
        if (rc == 0 && s->o->verbose)
            fprintf(stderr, TOOL ": report written to %s (%d token%s)\n", s->o->report, r->n_tok,
                    cli_plural(r->n_tok));
        else if (rc == 0) // a file written says where
            fprintf(stderr, TOOL ": report written to %s\n", s->o->report);
    }
    run_report_free(rr);
    return ok ? rc : 1;
}
