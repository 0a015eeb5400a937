// decoding.c - mint-run's decoding strategies over several sequences: --beams (beam search),
// --draft / --lookup (speculative decoding) and --n-parallel (several sampled completions of one
// prompt, sharing its KV blocks and decoded in one batch per step).
#include "run.h"

#include "cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Tokens to generate: -n, or what the context leaves.
static int budget(const session *s, size_t n_prompt) {
    const int room = mint_ctx_n_ctx(s->ctx) - (int)n_prompt;
    return s->o->n_predict >= 0 && s->o->n_predict < room ? s->o->n_predict : room;
}

// ---------------------------------------------------------------------------------------------
// Beam search

int run_beams(session *s) {
    tokens seq = {0};
    int rc = run_read_prompt(s, &seq);
    mint_beam_params p = mint_beam_default_params();
    p.n_beams = s->o->beams;
    p.length_penalty = s->o->length_penalty;
    p.max_tokens = budget(s, seq.n);
    p.ignore_eos = s->o->ignore_eos;
    int32_t *out =
        rc == 0 ? malloc((size_t)(p.max_tokens > 0 ? p.max_tokens : 1) * sizeof *out) : NULL;
    int32_t n_out = 0;
    double lp = 0;
    mint_err err;
    const double t0 = cli_now();
    if (rc == 0 && !out) rc = run_fail("out of memory");
    if (rc == 0 && p.max_tokens < 1) rc = run_fail("no room left in the context (raise -c)");
    if (rc == 0 && mint_beam_search(s->ctx, seq.id, (int32_t)seq.n, &p, out, p.max_tokens, &n_out,
                                    &lp, &err) != MINT_OK)
        rc = run_fail(err.msg);
    if (rc == 0) {
        s->st.t_gen = cli_now() - t0; // the prompt included (inside the search)
        int32_t shown = n_out;
        if (shown > 0 && mint_token_is_eog(s->m, out[shown - 1]) && !s->o->ignore_eos) shown--;
        mint_model_desc d;
        mint_model_describe(s->m, &d);
        run_print_tokens(s->m, out, (size_t)shown, seq.n == 1 && seq.id[0] == d.bos);
        printf("\n");
        fflush(stdout);
        s->st.n_gen = (uint64_t)n_out;
        if (s->o->verbose)
            fprintf(stderr,
                    TOOL ": beam search, %d beam%s: best of %d token%s, log-probability %.4f, "
                         "length penalty %g\n",
                    p.n_beams, cli_plural(p.n_beams), n_out, cli_plural(n_out), lp,
                    (double)p.length_penalty);
        run_print_summary(&s->st);
    }
    free(out);
    free(seq.id);
    return rc;
}

// ---------------------------------------------------------------------------------------------
// Speculative decoding

typedef struct printer {
    const mint_model *m;
    bool first_after_bos; // the next piece is the first after a lone BOS
} printer;

static bool print_token(void *user, int32_t t) {
    printer *p = user;
    if (mint_token_is_eog(p->m, t)) return true;
    run_print_tokens(p->m, &t, 1, p->first_after_bos);
    p->first_after_bos = false;
    return true;
}

int run_speculative(session *s) {
    const run_options *o = s->o;
    mint_err err;
    mint_model *dm = NULL;
    mint_ctx *dc = NULL;
    if (o->draft) { // the draft model, with the target's context length and threads
        if (load_model(TOOL, o->draft, &o->load, &dm, &err) != MINT_OK) return run_fail(err.msg);
        if (mint_vocab_compatible(s->m, dm, &err) != MINT_OK) {
            char msg[700];
            snprintf(msg, sizeof msg, "--draft %s: its vocabulary differs from the model's: %s",
                     o->draft, err.msg);
            mint_model_close(dm);
            return run_fail(msg);
        }
        mint_ctx_params cp = mint_ctx_default_params();
        cp.n_threads = mint_ctx_n_threads(s->ctx);
        cp.n_ctx = mint_ctx_n_ctx(s->ctx);
        cp.kv_type = (mint_kv_type)o->kv_type;
        if (mint_ctx_create(dm, &cp, &dc, &err) != MINT_OK) {
            mint_model_close(dm);
            return run_fail(err.msg);
        }
    }
    tokens seq = {0};
    int rc = run_read_prompt(s, &seq);
    mint_model_desc d;
    mint_model_describe(s->m, &d);
    printer pr = {s->m, seq.n == 1 && seq.id[0] == d.bos};
    mint_spec_params p = mint_spec_default_params();
    p.draft = dc;
    p.n_draft = o->draft_n;
    p.lookup_n = o->lookup > 0 ? o->lookup : 3;
    p.max_tokens = budget(s, seq.n);
    p.ignore_eos = o->ignore_eos;
    p.on_token = print_token;
    p.user = &pr;
    mint_spec_stats st = {0};
    const double t0 = cli_now();
    if (rc == 0 && p.max_tokens < 1) rc = run_fail("no room left in the context (raise -c)");
    if (rc == 0 && mint_speculative(s->ctx, s->smpl, seq.id, (int32_t)seq.n, &p, &st, &err))
        rc = run_fail(err.msg);
    if (rc == 0) {
        printf("\n");
        fflush(stdout);
        s->st.n_prompt = seq.n;
        s->st.t_prompt = cli_now() - t0 - st.seconds;
        s->st.t_gen = st.seconds;
        s->st.n_gen = st.generated;
        if (o->verbose)
            fprintf(stderr,
                    TOOL ": speculative decoding (%s, up to %d drafted per pass): %" PRIu64
                         " drafted, %" PRIu64 " accepted (acceptance %.1f%%), %" PRIu64
                         " target passes, %.2f tokens per target pass\n",
                    o->draft ? "draft model" : "prompt lookup", p.n_draft, st.drafted, st.accepted,
                    st.drafted ? 100.0 * (double)st.accepted / (double)st.drafted : 0.0,
                    st.target_passes,
                    st.target_passes ? (double)st.generated / (double)st.target_passes : 0.0);
        run_print_summary(&s->st);
    }
    free(seq.id);
    mint_ctx_free(dc);
    mint_model_close(dm);
    return rc;
}

// ---------------------------------------------------------------------------------------------
// Parallel samples

int run_parallel(session *s) {
    const run_options *o = s->o;
    const int N = o->n_parallel;
    tokens seq = {0};
    int rc = run_read_prompt(s, &seq);
    if (rc) {
        free(seq.id);
        return rc;
    }
    printf("\n");
    mint_err err;
    const int n_max = budget(s, seq.n);
    mint_model_desc d;
    mint_model_describe(s->m, &d);
    mint_sampler **smpl = calloc((size_t)N, sizeof *smpl);
    mint_gen **gen = calloc((size_t)N, sizeof *gen); // each sequence's generation step
    char **text = calloc((size_t)N, sizeof *text);   // [len[i]] each sequence's text
    size_t *len = calloc((size_t)N, sizeof *len);
    bool *done = calloc((size_t)N, sizeof *done);
    int32_t *row = calloc((size_t)N, sizeof *row); // logits row of each sequence
    mint_batch_entry *e = calloc((size_t)N, sizeof *e);
    if (!smpl || !gen || !text || !len || !done || !row || !e) rc = run_fail("out of memory");
    mint_gen_params gp = mint_gen_default_params();
    gp.max_tokens = n_max;
    gp.ignore_eos = o->ignore_eos;
    gp.after_bos = seq.n == 1 && seq.id[0] == d.bos;
    for (int i = 0; rc == 0 && i < N; i++) { // seeds seed, seed+1, ...: different draws
        mint_sampler_params sp = s->sp;
        sp.seed += (uint64_t)i;
        if (mint_sampler_create(&sp, s->n_vocab, &smpl[i], &err) != MINT_OK ||
            mint_gen_create(s->m, smpl[i], &gp, &gen[i], &err) != MINT_OK)
            rc = run_fail(err.msg);
        for (size_t k = 0; rc == 0 && k < seq.n; k++) mint_sampler_accept(smpl[i], seq.id[k]);
    }
    // The prompt once, in sequence 0; the others share its blocks.
    double t0 = cli_now();
    if (rc == 0 && mint_eval(s->ctx, seq.id, (int32_t)seq.n, 0, false, &err) != MINT_OK)
        rc = run_fail(err.msg);
    for (int i = 1; rc == 0 && i < N; i++)
        if (mint_seq_fork(s->ctx, 0, i, &err) != MINT_OK) rc = run_fail(err.msg);
    s->st.t_prompt = cli_now() - t0;
    s->st.n_prompt = seq.n;
    const double t1 = cli_now();
    for (int step = 0; rc == 0 && step < n_max; step++) {
        int n = 0;
        for (int i = 0; i < N; i++) {
            if (done[i]) continue;
            mint_gen_token out;
            if (mint_gen_step(gen[i], mint_get_logits(s->ctx, step ? row[i] : 0), &out, &err)) {
                rc = run_fail(err.msg);
                break;
            }
            char *t = out.finish == MINT_FINISH_EOS ? NULL : realloc(text[i], len[i] + out.n_text);
            if (!t && out.n_text > 0) {
                done[i] = true;
                continue;
            }
            if (t) text[i] = t;
            if (out.n_text) memcpy(text[i] + len[i], out.text, out.n_text);
            len[i] += out.n_text;
            if (out.finish == MINT_FINISH_EOS) {
                done[i] = true;
                continue;
            }
            s->st.n_gen++;
            if (out.finish != MINT_FINISH_NONE) continue; // the last tokens need no logits
            row[i] = n;
            e[n++] = (mint_batch_entry){out.token, (int32_t)seq.n + step, i, true};
        }
        if (n == 0 || rc) break;
        if (mint_decode(s->ctx, e, n, &err) != MINT_OK) rc = run_fail(err.msg);
    }
    s->st.t_gen = cli_now() - t1;
    for (int i = 0; rc == 0 && i < N; i++) {
        printf("[%d] ", i + 1);
        if (len[i]) fwrite(text[i], 1, len[i], stdout);
        printf("\n");
    }
    fflush(stdout);
    if (rc == 0) {
        if (o->verbose) {
            mint_cache_info ci;
            mint_ctx_cache_info(s->ctx, &ci);
            fprintf(stderr,
                    TOOL ": %d completions decoded together; KV cache: %d blocks of %d positions "
                         "in use (%d copied on write), the prompt's shared\n",
                    N, ci.blocks_used, ci.block, (int)ci.copies);
        }
        run_print_summary(&s->st);
    }
    for (int i = 0; i < N; i++) {
        if (gen) mint_gen_free(gen[i]);
        if (smpl) mint_sampler_free(smpl[i]);
        if (text) free(text[i]);
    }
    free(smpl);
    free(gen);
    free(text);
    free(len);
    free(done);
    free(row);
    free(e);
    free(seq.id);
    return rc;
}
