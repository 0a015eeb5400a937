// scheduler.c - continuous batching: one thread owns the context and, step after step, evaluates
// the next tokens of every busy slot in one mint_decode.
//
// A step: finish the slots whose client left or whose time ran out; admit queued jobs into free
// slots (each starts from the longest prefix of its prompt the KV cache already holds: what the
// slot kept from its last request, or the shared prefix cache); build one batch of every
// generating slot's next token plus prompt tokens of the slots still reading their prompt (up to
// n_batch in all, so one long prompt cannot stall the others for long); decode; sample each
// slot whose row has logits with the library's generation step (mint_gen: sampling, stop strings,
// log-probabilities); post the token to its job. A job joins or leaves between steps.
#include "serve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct slot {
    job *j;            // the job in it, or NULL when free
    mint_sampler *smp; // its sampler
    mint_gen *step;    // its generation step (over smp)
    int n_eval;        // prompt tokens in the cache so far
    int32_t next;      // generating: the token to evaluate next
    bool gen;          // the prompt is done: generating
    int row;           // its row of logits (mint_get_logits) in this step's batch, or -1
    bool prompt_step;  // this step's batch holds some of its prompt
    // For /slots, written by the scheduler and read by any thread:
    atomic_ullong task;   // the job's request id + 1 (0: free)
    atomic_int n_past;    // positions of the sequence after the last step
    atomic_int n_decoded; // tokens generated
    atomic_int n_prompt;  // the job's prompt tokens
} slot;

struct serve_sched {
    const serve_config *cfg;
    mint_model *m;
    mint_ctx *ctx;
    serve_metrics *metrics;
    int32_t n_vocab, n_batch;
    float *biased; // [n_vocab] a row of logits with a job's logit_bias added
    pthread_t thread;
    pthread_mutex_t mu; // the queue and the flags
    pthread_cond_t cv;  // work arrived / stop
    job **queue;        // [queue cap] ring
    int q_head, q_len, q_cap;
    bool closed; // no more submissions
    bool quit;   // the thread ends after this step
    slot *slots; // [parallel]
    int n_slots;
    atomic_int busy;         // slots holding a job
    mint_batch_entry *batch; // [n_batch]
    char err[MINT_ERR_MSG_MAX];
};

double serve_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// ---------------------------------------------------------------------------------------------
// Jobs

job *job_new(void) {
    job *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    j->refs = 1;
    j->slot = -1;
    j->want_slot = -1;
    j->stop_word = -1;
    j->t_created = serve_now();
    return j;
}

void job_release(job *j) {
    if (!j) return;
    pthread_mutex_lock(&j->mu);
    const int left = --j->refs;
    pthread_mutex_unlock(&j->mu);
    if (left > 0) return;
    for (int i = 0; i < j->n_stop; i++) free(j->stop[i]);
    free(j->prompt);
    free(j->tok);
    free(j->text);
    free(j->peek_p);
    free(j->peek_id);
    free(j->peek_logit);
    free(j->bias_id);
    free(j->bias);
    free(j->prog_done);
    free(j->saved);
    free(j->prog_t);
    mint_grammar_free(j->grammar);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j);
}

bool job_add_text(job *j, const char *s, size_t n) {
    if (j->text_len + n + 1 > j->text_cap) {
        size_t cap = (j->text_len + n + 1) * 2;
        char *t = realloc(j->text, cap);
        if (!t) return false;
        j->text = t;
        j->text_cap = cap;
    }
    memcpy(j->text + j->text_len, s, n);
    j->text_len += n;
    j->text[j->text_len] = '\0';
    return true;
}

// Records (under j->mu) that `done` prompt positions are in the KV cache, for a job that asked
// for progress; a failed allocation only loses the record.
static void progress_locked(job *j, int done) {
    if (!j->progress) return;
    if (j->n_prog == j->cap_prog) {
        const int cap = j->cap_prog ? 2 * j->cap_prog : 8;
        int *d = realloc(j->prog_done, (size_t)cap * sizeof *d);
        if (d) j->prog_done = d;
        double *t = d ? realloc(j->prog_t, (size_t)cap * sizeof *t) : NULL;
        if (t) j->prog_t = t;
        if (!d || !t) return;
        j->cap_prog = cap;
    }
    j->prog_done[j->n_prog] = done;
    j->prog_t[j->n_prog++] = serve_now();
    pthread_cond_broadcast(&j->cv);
}

// Marks j done with a reason (under j->mu) and wakes its connection.
static void finish_locked(serve_sched *e, job *j, const char *why) {
    j->state = JOB_DONE;
    j->finish = why;
    j->t_done = serve_now();
    j->visible = j->text_len;
    pthread_cond_broadcast(&j->cv);
    if (j->action != JOB_GENERATE) return; // slot actions are no generation requests
    const double t0 = j->t_started > 0 ? j->t_started : j->t_done;
    const double t1 = j->t_first > 0 ? j->t_first : j->t_done;
    metrics_tokens(e->metrics, (uint64_t)(j->n_prompt - j->n_reused), (uint64_t)j->n_reused,
                   (uint64_t)j->n_tok, t1 - t0, j->t_done - t1);
    metrics_latency(e->metrics, j->t_done - j->t_created,
                    j->t_first > 0 ? j->t_first - j->t_created : -1);
}

// ---------------------------------------------------------------------------------------------
// Slots

static void free_slot(serve_sched *e, slot *s) {
    mint_gen_free(s->step);
    s->step = NULL;
    mint_sampler_free(s->smp);
    s->smp = NULL;
    job_release(s->j);
    s->j = NULL;
    atomic_store(&s->task, 0);
    atomic_fetch_sub(&e->busy, 1);
}

// Takes a queued job into slot index si: its sampler, and the part of its prompt already cached.
static void admit(serve_sched *e, int si, job *j) {
    slot *s = &e->slots[si];
    s->smp = NULL;
    s->step = NULL;
    s->n_eval = 0;
    s->next = 0;
    s->gen = false;
    s->j = j;
    s->row = -1;
    atomic_store(&s->task, j->id + 1);
    atomic_store(&s->n_decoded, 0);
    atomic_store(&s->n_prompt, j->n_prompt);
    if (j->action == JOB_SLOT_SAVE || j->action == JOB_SLOT_ERASE) { // done at once, here
        const int32_t n = mint_seq_n_past(e->ctx, si);
        pthread_mutex_lock(&j->mu);
        j->slot = si;
        j->t_started = serve_now();
        j->n_saved = n;
        if (j->action == JOB_SLOT_SAVE && n > 0) {
            j->saved = malloc((size_t)n * sizeof *j->saved);
            if (j->saved)
                memcpy(j->saved, mint_seq_tokens(e->ctx, si), (size_t)n * sizeof *j->saved);
            else
                snprintf(j->error, sizeof j->error, "out of memory");
        }
        if (j->action == JOB_SLOT_ERASE) mint_seq_forget(e->ctx, si, NULL);
        finish_locked(e, j, j->action == JOB_SLOT_SAVE && n > 0 && !j->saved ? "error" : "stop");
        pthread_mutex_unlock(&j->mu);
        free_slot(e, s);
        return;
    }
    mint_err err;
    mint_gen_params gp = mint_gen_default_params();
    gp.max_tokens = j->max_tokens;
    gp.stop = (const char *const *)j->stop;
    gp.n_stop = j->n_stop;
    gp.n_top = j->top_logprobs;
    gp.logprobs = true;
    gp.ignore_eos = j->ignore_eos;
    if (mint_sampler_create(&j->sp, e->n_vocab, &s->smp, &err) != MINT_OK ||
        (j->peek == 0 && mint_gen_create(e->m, s->smp, &gp, &s->step, &err) != MINT_OK)) {
        pthread_mutex_lock(&j->mu);
        snprintf(j->error, sizeof j->error, "%s", err.msg);
        finish_locked(e, j, "error");
        pthread_mutex_unlock(&j->mu);
        free_slot(e, s);
        return;
    }
    if (j->grammar) mint_sampler_set_grammar(s->smp, j->grammar); // mint_gen_step advances it
    for (int i = 0; i < j->n_prompt; i++) mint_sampler_accept(s->smp, j->prompt[i]);
    int32_t held = 0;
    mint_seq_prefix(e->ctx, si, j->prompt, j->n_prompt, &held, NULL);
    s->n_eval = held;
    pthread_mutex_lock(&j->mu);
    j->n_reused = held;
    j->slot = si;
    j->t_started = serve_now();
    j->state = JOB_RUNNING;
    progress_locked(j, held); // before any evaluation: the cached part (llama-server's 0%)
    pthread_mutex_unlock(&j->mu);
}

// The step's token goes to the job: its text (all of it in j->text, the part no stop string
// may still claim up to j->visible), its log-probabilities, and the finish. Returns true when the
// job is finished.
static bool post_token(serve_sched *e, slot *s, int si, const mint_gen_token *out) {
    job *j = s->j;
    serve_token tk = {.id = out->token, .logprob = (float)out->logprob, .n_top = out->n_top};
    for (int k = 0; k < out->n_top; k++) {
        tk.top_id[k] = out->top_id[k];
        tk.top_lp[k] = (float)out->top_logprob[k];
    }
    pthread_mutex_lock(&j->mu);
    bool done = out->finish != MINT_FINISH_NONE;
    if (out->finish == MINT_FINISH_EOS) {
        finish_locked(e, j, "stop");
        pthread_mutex_unlock(&j->mu);
        return true;
    }
    if (j->t_first == 0) j->t_first = serve_now();
    job_add_text(j, out->piece, out->n_piece);
    j->visible += out->n_text;
    if (out->finish == MINT_FINISH_STOP) { // the text ends where the stop string begins
        for (int k = 0; k < j->n_stop && j->stop_word < 0; k++) {
            const size_t n = strlen(j->stop[k]);
            if (j->visible + n <= j->text_len && !memcmp(j->text + j->visible, j->stop[k], n))
                j->stop_word = k;
        }
        j->text_len = j->visible;
        j->text[j->text_len] = '\0';
    }
    if (j->n_tok == j->cap_tok) {
        int cap = j->cap_tok ? 2 * j->cap_tok : 64;
        serve_token *p = realloc(j->tok, (size_t)cap * sizeof *p);
        if (p) j->tok = p, j->cap_tok = cap;
    }
    if (j->n_tok < j->cap_tok) {
        tk.text_end = j->text_len;
        j->tok[j->n_tok++] = tk;
    }
    if (!done && mint_seq_n_past(e->ctx, si) + 1 >= mint_ctx_n_ctx(e->ctx)) {
        done = true; // the context is full (max_tokens is clamped to the room, so rarely here)
        finish_locked(e, j, "length");
    } else if (done) {
        finish_locked(e, j, mint_finish_name(out->finish));
    } else {
        pthread_cond_broadcast(&j->cv);
    }
    pthread_mutex_unlock(&j->mu);
    return done;
}

// peek: the next token's most likely candidates, for the page.
static void post_peek(serve_sched *e, job *j, const float *logits) {
    pthread_mutex_lock(&j->mu);
    j->peek_id = malloc((size_t)j->peek * sizeof *j->peek_id);
    j->peek_p = malloc((size_t)j->peek * sizeof *j->peek_p);
    j->peek_logit = malloc((size_t)j->peek * sizeof *j->peek_logit);
    double *lp = malloc((size_t)j->peek * sizeof *lp);
    if (j->peek_id && j->peek_p && j->peek_logit && lp) {
        const int n = mint_top_k(logits, e->n_vocab, j->peek, j->peek_id);
        mint_log_softmax(logits, e->n_vocab, j->peek_id, n, lp);
        for (int i = 0; i < n; i++) {
            j->peek_logit[i] = logits[j->peek_id[i]];
            j->peek_p[i] = expf((float)lp[i]);
        }
    }
    free(lp);
    finish_locked(e, j, "stop");
    pthread_mutex_unlock(&j->mu);
}

// ---------------------------------------------------------------------------------------------
// The engine thread

// One step. Returns false when there was nothing to do.
static bool step(serve_sched *e) {
    const double now = serve_now();
    int n = 0, n_rows = 0, budget = e->n_batch; // entries, and the ones with logits
    for (int si = 0; si < e->n_slots; si++) {   // clients gone, time up
        slot *s = &e->slots[si];
        s->row = -1;
        s->prompt_step = false;
        if (!s->j) continue;
        pthread_mutex_lock(&s->j->mu);
        const bool gone = s->j->cancelled, late = now > s->j->deadline;
        if (gone || late) finish_locked(e, s->j, gone ? "cancelled" : "timeout");
        pthread_mutex_unlock(&s->j->mu);
        if (gone || late) free_slot(e, s);
    }
    for (int si = 0; si < e->n_slots; si++) { // generating slots: one token each
        slot *s = &e->slots[si];
        if (!s->j || !s->gen || n == budget) continue;
        s->row = n_rows++;
        e->batch[n++] = (mint_batch_entry){s->next, mint_seq_n_past(e->ctx, si), si, true};
    }
    for (int si = 0; si < e->n_slots && n < budget; si++) { // prompts, as far as the batch goes
        slot *s = &e->slots[si];
        if (!s->j || s->gen) continue;
        const job *j = s->j;
        const int k = j->n_prompt - s->n_eval < budget - n ? j->n_prompt - s->n_eval : budget - n;
        for (int i = 0; i < k; i++) {
            const bool last = s->n_eval + i == j->n_prompt - 1;
            if (last) s->row = n_rows++;
            e->batch[n++] = (mint_batch_entry){j->prompt[s->n_eval + i], s->n_eval + i, si, last};
        }
        s->n_eval += k;
        s->prompt_step = k > 0;
    }
    if (n == 0) return false;
    mint_err err;
    if (mint_decode(e->ctx, e->batch, n, &err) != MINT_OK) {
        for (int si = 0; si < e->n_slots; si++) { // what was in this batch fails
            slot *s = &e->slots[si];
            if (!s->j) continue;
            pthread_mutex_lock(&s->j->mu);
            snprintf(s->j->error, sizeof s->j->error, "%s", err.msg);
            finish_locked(e, s->j, "error");
            pthread_mutex_unlock(&s->j->mu);
            mint_seq_truncate(e->ctx, si, 0, NULL);
            free_slot(e, s);
        }
        return true;
    }
    int32_t longest = 0;
    for (int si = 0; si < e->n_slots; si++)
        if (mint_seq_n_past(e->ctx, si) > longest) longest = mint_seq_n_past(e->ctx, si);
    metrics_decode(e->metrics, atomic_load(&e->busy), longest);
    for (int si = 0; si < e->n_slots; si++) { // prompt progress, before the first token
        slot *s = &e->slots[si];
        if (!s->j || !s->prompt_step || !s->j->progress) continue;
        pthread_mutex_lock(&s->j->mu);
        progress_locked(s->j, s->n_eval);
        pthread_mutex_unlock(&s->j->mu);
    }
    for (int si = 0; si < e->n_slots; si++) {
        slot *s = &e->slots[si];
        if (!s->j || s->row < 0) continue;
        const float *logits = mint_get_logits(e->ctx, s->row);
        if (s->j->action == JOB_SLOT_RESTORE) { // its tokens are in the slot: nothing to sample
            pthread_mutex_lock(&s->j->mu);
            finish_locked(e, s->j, "stop");
            pthread_mutex_unlock(&s->j->mu);
            free_slot(e, s);
            continue;
        }
        if (s->j->peek > 0) {
            post_peek(e, s->j, logits);
            free_slot(e, s);
            continue;
        }
        if (s->j->n_bias > 0) { // logit_bias: the job's row, changed
            memcpy(e->biased, logits, (size_t)e->n_vocab * sizeof *logits);
            for (int k = 0; k < s->j->n_bias; k++) e->biased[s->j->bias_id[k]] += s->j->bias[k];
            logits = e->biased;
        }
        mint_gen_token out;
        if (mint_gen_step(s->step, logits, &out, &err) != MINT_OK) {
            pthread_mutex_lock(&s->j->mu);
            snprintf(s->j->error, sizeof s->j->error, "%s", err.msg);
            finish_locked(e, s->j, "error");
            pthread_mutex_unlock(&s->j->mu);
            free_slot(e, s);
        } else if (post_token(e, s, si, &out)) {
            free_slot(e, s);
        } else {
            s->next = out.token;
            s->gen = true;
            atomic_store(&s->n_decoded, out.n_generated);
        }
    }
    for (int si = 0; si < e->n_slots; si++)
        atomic_store(&e->slots[si].n_past, mint_seq_n_past(e->ctx, si));
    return true;
}

static void *sched_main(void *arg) {
    serve_sched *e = arg;
    for (;;) {
        pthread_mutex_lock(&e->mu);
        while (!e->quit && e->q_len == 0 && atomic_load(&e->busy) == 0)
            pthread_cond_wait(&e->cv, &e->mu);
        if (e->quit) {
            pthread_mutex_unlock(&e->mu);
            break;
        }
        // Admit queued jobs into free slots, oldest first. A job that must run in one slot
        // (id_slot, a slot action) waits for that slot without holding back the jobs behind it.
        int admit_idx[256], n_admit = 0, kept = 0;
        job *admit_job[256];
        for (int q = 0; q < e->q_len; q++) {
            job *j = e->queue[(e->q_head + q) % e->q_cap];
            int si = -1;
            if (j->want_slot >= 0 && j->want_slot < e->n_slots) {
                if (!e->slots[j->want_slot].j) si = j->want_slot;
            } else {
                for (int k = 0; k < e->n_slots && si < 0; k++)
                    if (!e->slots[k].j) si = k;
            }
            if (si < 0 || n_admit == 256) { // stays queued, in order (kept <= q: no overlap)
                e->queue[(e->q_head + kept++) % e->q_cap] = j;
                continue;
            }
            admit_job[n_admit] = j;
            admit_idx[n_admit++] = si;
            e->slots[si].j = j; // reserved
            atomic_fetch_add(&e->busy, 1);
        }
        e->q_len = kept;
        pthread_mutex_unlock(&e->mu);
        for (int i = 0; i < n_admit; i++) admit(e, admit_idx[i], admit_job[i]);
        step(e);
    }
    // Whatever is left when the thread ends is cancelled.
    for (int si = 0; si < e->n_slots; si++) {
        slot *s = &e->slots[si];
        if (!s->j) continue;
        pthread_mutex_lock(&s->j->mu);
        finish_locked(e, s->j, "cancelled");
        pthread_mutex_unlock(&s->j->mu);
        free_slot(e, s);
    }
    return NULL;
}

mint_status sched_start(const serve_config *cfg, mint_model *m, serve_metrics *metrics,
                        serve_sched **out, mint_err *err) {
    *out = NULL;
    serve_sched *e = calloc(1, sizeof *e);
    if (!e) return MINT_E_NOMEM;
    e->cfg = cfg;
    e->m = m;
    e->metrics = metrics;
    mint_ctx_params cp = mint_ctx_default_params();
    cp.n_threads = cfg->n_threads;
    cp.n_ctx = cfg->n_ctx;
    cp.n_seq_max = cfg->parallel;
    if (cfg->kv_unified && cfg->ctx_size > 0) cp.kv_size = cfg->ctx_size; // one pool of -c
    cp.kv_block = cfg->kv_block;
    if (cfg->n_batch > 0) cp.n_batch = cfg->n_batch;
    cp.kv_type = (mint_kv_type)cfg->kv_type;
    cp.prefix_cache_bytes = (uint64_t)cfg->cache_ram << 20;
    mint_status st = mint_ctx_create(m, &cp, &e->ctx, err);
    if (st) {
        free(e);
        return st;
    }
    mint_model_desc d;
    mint_model_describe(m, &d);
    e->n_vocab = d.n_vocab;
    e->n_batch = mint_ctx_n_batch(e->ctx);
    e->n_slots = cfg->parallel;
    e->q_cap = cfg->queue + SERVE_MAX_JOBS; // room for one request's jobs beyond the limit
    e->slots = calloc((size_t)e->n_slots, sizeof *e->slots);
    e->queue = calloc((size_t)e->q_cap, sizeof *e->queue);
    e->batch = calloc((size_t)e->n_batch, sizeof *e->batch);
    e->biased = malloc((size_t)e->n_vocab * sizeof *e->biased);
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    if (!e->slots || !e->queue || !e->batch || !e->biased ||
        pthread_create(&e->thread, NULL, sched_main, e) != 0) {
        mint_ctx_free(e->ctx);
        free(e->slots);
        free(e->queue);
        free(e->batch);
        free(e->biased);
        free(e);
        return MINT_E_NOMEM;
    }
    *out = e;
    return MINT_OK;
}

bool sched_submit(serve_sched *e, job *const *jobs, int n) {
    pthread_mutex_lock(&e->mu);
    // The queue limit counts requests waiting beyond the free slots.
    const int free_slots = e->n_slots - atomic_load(&e->busy);
    const bool ok = !e->closed &&
                    e->q_len + n <= e->cfg->queue + (free_slots > 0 ? free_slots : 0) &&
                    e->q_len + n <= e->q_cap;
    for (int i = 0; ok && i < n; i++) {
        pthread_mutex_lock(&jobs[i]->mu);
        jobs[i]->refs++; // the engine's reference
        pthread_mutex_unlock(&jobs[i]->mu);
        e->queue[(e->q_head + e->q_len++) % e->q_cap] = jobs[i];
    }
    if (ok) pthread_cond_signal(&e->cv);
    pthread_mutex_unlock(&e->mu);
    return ok;
}

int sched_queue_length(serve_sched *e) {
    pthread_mutex_lock(&e->mu);
    const int n = e->q_len;
    pthread_mutex_unlock(&e->mu);
    return n;
}

int sched_busy_slots(serve_sched *e) {
    return atomic_load(&e->busy);
}

const mint_model *sched_model(const serve_sched *e) {
    return e->m;
}

void sched_stop(serve_sched *e, double seconds) {
    pthread_mutex_lock(&e->mu);
    e->closed = true;
    pthread_mutex_unlock(&e->mu);
    const double until = serve_now() + seconds;
    while (serve_now() < until && (sched_queue_length(e) > 0 || sched_busy_slots(e) > 0)) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    pthread_mutex_lock(&e->mu);
    while (e->q_len > 0) { // never admitted: cancelled
        job *j = e->queue[e->q_head];
        e->q_head = (e->q_head + 1) % e->q_cap;
        e->q_len--;
        pthread_mutex_lock(&j->mu);
        finish_locked(e, j, "cancelled");
        pthread_mutex_unlock(&j->mu);
        job_release(j);
    }
    e->quit = true;
    pthread_cond_signal(&e->cv);
    pthread_mutex_unlock(&e->mu);
    pthread_join(e->thread, NULL);
    mint_ctx_free(e->ctx);
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
    free(e->slots);
    free(e->queue);
    free(e->batch);
    free(e->biased);
    free(e);
}

int sched_slot_info(serve_sched *e, serve_slot_info *info, int cap) {
    const int n = e->n_slots < cap ? e->n_slots : cap;
    for (int si = 0; si < n; si++) {
        const slot *s = &e->slots[si];
        const unsigned long long task = atomic_load(&s->task);
        info[si] = (serve_slot_info){.busy = task != 0,
                                     .task = task ? task - 1 : 0,
                                     .n_past = atomic_load(&s->n_past),
                                     .n_prompt = task ? atomic_load(&s->n_prompt) : 0,
                                     .n_decoded = task ? atomic_load(&s->n_decoded) : 0};
    }
    return n;
}
