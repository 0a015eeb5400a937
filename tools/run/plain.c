// plain.c - plain generation: the prompt is evaluated as one batch, then each step samples a
// token from the last logits, prints its piece and evaluates it at the next position, reusing
// the KV cache. --no-kv-cache recomputes the whole sequence at every step instead (the naive
// way) and then re-times the same tokens with the cache, so both speeds are shown. --json
// prints one object per token with its log-probability and alternatives.
#include "run.h"

#include "cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// One JSON line for a generated token: id, piece, logprob, and the n_probs best alternatives
// (the library's top-k and log-softmax).
static void print_json_token(const mint_model *m, const float *logits, int32_t n_vocab, int32_t id,
                             int n_probs) {
    char buf[256];
    int32_t *ids = malloc((size_t)(n_probs + 1) * sizeof *ids);
    double *lp = malloc((size_t)(n_probs + 1) * sizeof *lp);
    if (!ids || !lp) {
        free(ids);
        free(lp);
        return;
    }
    ids[0] = id;
    const int k = mint_top_k(logits, n_vocab, n_probs, ids + 1);
    mint_log_softmax(logits, n_vocab, ids, k + 1, lp);
    size_t n = run_piece(m, id, buf, sizeof buf);
    printf("{\"id\":%d,\"piece\":", id);
    cli_json_str(stdout, buf, n);
    printf(",\"logprob\":%.9g", lp[0]);
    if (n_probs > 0) {
        printf(",\"top\":[");
        for (int j = 1; j <= k; j++) {
            size_t pn = run_piece(m, ids[j], buf, sizeof buf);
            printf("%s{\"id\":%d,\"piece\":", j > 1 ? "," : "", ids[j]);
            cli_json_str(stdout, buf, pn);
            printf(",\"logprob\":%.9g}", lp[j]);
        }
        printf("]");
    }
    printf("}\n");
    fflush(stdout);
    free(ids);
    free(lp);
}

// ---------------------------------------------------------------------------------------------
// Plain generation

// Evaluates the sequence for the next step: only the newest token with the cache, or the whole
// sequence from position 0 in naive mode.
static mint_status step_eval(session *s, const tokens *seq, mint_err *err) {
    if (s->o->no_kv_cache) return mint_eval(s->ctx, seq->id, (int32_t)seq->n, 0, false, err);
    return mint_eval(s->ctx, seq->id + seq->n - 1, 1, (int32_t)seq->n - 1, false, err);
}

// In naive mode: re-evaluates prompt + generated tokens with the KV cache, times it, and checks
// that greedy decoding would pick the same tokens.
static void retime_with_cache(session *s, const tokens *seq, size_t n_prompt) {
    mint_err err;
    if (mint_eval(s->ctx, seq->id, (int32_t)n_prompt, 0, false, &err) != MINT_OK) return;
    double t1 = cli_now();
    int mismatches = 0;
    for (size_t i = n_prompt; i < seq->n; i++) {
        int32_t best = 0;
        mint_top_k(mint_get_logits(s->ctx, -1), s->n_vocab, 1, &best);
        if (best != seq->id[i]) mismatches++;
        // The last token is not evaluated, as in the timed naive loop.
        if (i + 1 < seq->n && mint_eval(s->ctx, seq->id + i, 1, (int32_t)i, false, &err) != MINT_OK)
            return;
    }
    double t2 = cli_now();
    uint64_t n_gen = seq->n - n_prompt;
    fprintf(stderr, "\nnaive (no KV cache) vs KV cache, same %" PRIu64 " token%s:\n", n_gen,
            cli_plural((long long)n_gen));
    run_print_rate("naive gen", s->st.t_gen, s->st.n_gen);
    run_print_rate("kv-cache gen", t2 - t1, n_gen);
    fprintf(stderr, "speed-up       = %10.2fx\n",
            s->st.t_gen > 0 && t2 > t1 ? s->st.t_gen / (t2 - t1) : 0.0);
    if (s->o->temp <= 0)
        fprintf(stderr, "greedy tokens  = %s\n",
                mismatches ? "DIFFER between the two modes" : "identical in both modes");
}

int run_generate(session *s) {
    const run_options *o = s->o;
    mint_err err;
    tokens seq = {0};
    run_trace *tr = NULL;
    run_report *rep = NULL;
    // Outputs first: a path that cannot be written fails before any work.
    int rc = run_trace_open(s, &tr);
    if (rc == 0) rc = run_report_open(s, &rep);
    if (rc == 0) rc = run_read_prompt(s, &seq);
    if (rc) {
        run_trace_close(tr, false);
        run_report_free(rep);
        free(seq.id);
        return rc;
    }
    const size_t n_prompt = seq.n;
    const int32_t n_ctx = mint_ctx_n_ctx(s->ctx);
    mint_model_desc d;
    mint_model_describe(s->m, &d);
    for (size_t i = 0; i < n_prompt; i++) mint_sampler_accept(s->smpl, seq.id[i]);

    // With a report, every prompt row's logits: the page shows how likely each prompt token was.
    const bool all_logits = rep && n_prompt <= (size_t)mint_ctx_n_batch(s->ctx);
    double t0 = cli_now();
    if (mint_eval(s->ctx, seq.id, (int32_t)n_prompt, 0, all_logits, &err) != MINT_OK) {
        run_trace_close(tr, false);
        run_report_free(rep);
        free(seq.id);
        return run_fail(err.msg);
    }
    s->st.t_prompt = cli_now() - t0;
    s->st.n_prompt = n_prompt;
    run_trace_batch(s, tr, 0, (int32_t)n_prompt);
    run_report_prompt(s, rep, seq.id, (int)n_prompt, all_logits, s->st.t_prompt);

    // Generation: the library's step (sample, end of generation, -n, the first piece's space),
    // then print and evaluate the new token, until it finishes or the context is full.
    mint_gen_params gp = mint_gen_default_params();
    gp.max_tokens = o->n_predict;
    gp.sample_info = tr != NULL;
    gp.ignore_eos = o->ignore_eos;
    gp.after_bos = n_prompt == 1 && seq.id[0] == d.bos;
    mint_gen *g = NULL;
    if (o->n_predict != 0 && mint_gen_create(s->m, s->smpl, &gp, &g, &err) != MINT_OK)
        rc = run_fail(err.msg);
    double t1 = cli_now();
    while (g && rc == 0) {
        const float *logits = mint_get_logits(s->ctx, -1);
        mint_gen_token out;
        if (mint_gen_step(g, logits, &out, &err) != MINT_OK) {
            rc = run_fail(err.msg);
            break;
        }
        run_trace_sample(s, tr, &out.info);
        if (o->json) print_json_token(s->m, logits, s->n_vocab, out.token, o->n_probs);
        if (out.finish == MINT_FINISH_EOS) break;
        run_report_token(s, rep, logits, out.token);
        if (!tokens_push(&seq, out.token)) {
            rc = run_fail("out of memory");
            break;
        }
        s->st.n_gen++;
        if (!o->json) {
            fwrite(out.text, 1, out.n_text, stdout);
            fflush(stdout);
        }
        if ((int64_t)seq.n >= n_ctx) {
            fprintf(stderr, "\n" TOOL ": context full (%d token%s); stopping\n", n_ctx,
                    cli_plural(n_ctx));
            break;
        }
        if (out.finish != MINT_FINISH_NONE) break; // -n reached: the last token is not evaluated
        const double ts = cli_now();
        if (step_eval(s, &seq, &err) != MINT_OK) {
            rc = run_fail(err.msg);
            break;
        }
        run_report_step(s, rep, cli_now() - ts);
        run_trace_batch(s, tr, (int32_t)seq.n - 1, 1);
    }
    mint_gen_free(g);
    s->st.t_gen = cli_now() - t1;
    if (!o->json) printf("\n");
    fflush(stdout);
    if (run_trace_close(tr, rc == 0)) rc = 1;
    if (run_report_close(s, rep, rc == 0)) rc = 1;
    run_print_summary(&s->st);
    if (o->no_kv_cache && rc == 0 && s->st.n_gen > 0) retime_with_cache(s, &seq, n_prompt);
    free(seq.id);
    return rc;
}
