// mint-run - generate text with a llama-family model: prompt in, tokens streamed out.
//
// One token's path: the prompt is tokenized and evaluated as one batch (mint_eval), then each
// step samples a token from the last logits (mint_sampler_sample), prints its piece, and
// evaluates it at the next position, reusing the KV cache. --no-kv-cache recomputes the whole
// sequence at every step instead (the naive way) and then re-times the same tokens with the
// cache, so both speeds are shown. -cnv runs a multi-turn chat that evaluates only each turn's
// new tokens. Uses the public API (mint.h) only.
#include "cli.h"
#include "mint.h"
#include "run_args.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TOOL "mint-run"

static int fail(const char *msg) {
    fprintf(stderr, TOOL ": %s\n", msg);
    return 1;
}

// ---------------------------------------------------------------------------------------------
// Token lists

typedef struct tokens {
    int32_t *id; // [n]
    size_t n;    // used
    size_t cap;  // allocated
} tokens;

static bool push(tokens *t, int32_t id) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 256;
        int32_t *p = realloc(t->id, cap * sizeof *p);
        if (!p) return false;
        t->id = p;
        t->cap = cap;
    }
    t->id[t->n++] = id;
    return true;
}

// Tokenizes text and appends the ids to t.
static mint_status tokenize_into(const mint_model *m, const char *text, size_t len,
                                 bool add_special, bool parse_special, tokens *t, mint_err *err) {
    size_t need = 0, cap = len + 8;
    int32_t *ids = malloc(cap * sizeof *ids);
    if (!ids) return MINT_E_NOMEM;
    mint_status st = mint_tokenize(m, text, len, add_special, parse_special, ids, cap, &need, err);
    if (st == MINT_E_LIMIT) {
        int32_t *p = realloc(ids, need * sizeof *ids);
        if (!p) {
            free(ids);
            return MINT_E_NOMEM;
        }
        ids = p;
        st = mint_tokenize(m, text, len, add_special, parse_special, ids, need, &need, err);
    }
    for (size_t i = 0; st == MINT_OK && i < need; i++)
        if (!push(t, ids[i])) st = MINT_E_NOMEM;
    free(ids);
    return st;
}

// The bytes of a token (not NUL-terminated) in buf; returns the length.
static size_t piece(const mint_model *m, int32_t id, char *buf, size_t cap) {
    size_t n = mint_token_to_piece(m, id, false, buf, cap);
    return n < cap ? n : cap;
}

// ---------------------------------------------------------------------------------------------
// Output

typedef struct stats {
    double t_load;     // seconds to open the model
    double t_prompt;   // seconds evaluating prompts
    double t_gen;      // seconds generating (sampling + evaluating)
    uint64_t n_prompt; // prompt tokens evaluated
    uint64_t n_gen;    // tokens generated
} stats;

static void print_rate(const char *what, double secs, uint64_t n) {
    fprintf(stderr,
            "%-14s = %10.2f ms / %6" PRIu64 " tokens (%8.2f ms per token, %9.2f tokens "
            "per second)\n",
            what, secs * 1e3, n, n ? secs * 1e3 / (double)n : 0.0,
            secs > 0 ? (double)n / secs : 0.0);
}

// The timing summary on stderr, printed once the work is done (so that an error before it
// stays the only line on stderr).
static void print_summary(const stats *st) {
    fprintf(stderr, "%-14s = %10.2f ms\n", "load time", st->t_load * 1e3);
    print_rate("prompt eval", st->t_prompt, st->n_prompt);
    print_rate("generation", st->t_gen, st->n_gen);
}

// log-softmax of one logit, in double (as llama.cpp's reference tools compute it).
static double logprob(const float *logits, int32_t n_vocab, int32_t id) {
    float max = logits[0];
    for (int32_t i = 1; i < n_vocab; i++) max = logits[i] > max ? logits[i] : max;
    double sum = 0;
    for (int32_t i = 0; i < n_vocab; i++) sum += exp((double)logits[i] - max);
    return (double)logits[id] - max - log(sum);
}

// One JSON line for a generated token: id, piece, logprob, and the k best alternatives.
static void print_json_token(const mint_model *m, const float *logits, int32_t n_vocab, int32_t id,
                             int n_probs) {
    char buf[256];
    size_t n = piece(m, id, buf, sizeof buf);
    printf("{\"id\":%d,\"piece\":", id);
    cli_json_str(stdout, buf, n);
    printf(",\"logprob\":%.9g", logprob(logits, n_vocab, id));
    if (n_probs > 0) {
        int32_t best[1000];
        int k = 0;
        // Insertion into a small sorted list: highest logit first, lower id on ties.
        for (int32_t i = 0; i < n_vocab; i++) {
            int j = k < n_probs ? k++ : n_probs;
            if (j == n_probs && !(logits[i] > logits[best[n_probs - 1]])) continue;
            if (j == n_probs) j = n_probs - 1;
            while (j > 0 && logits[i] > logits[best[j - 1]]) {
                best[j] = best[j - 1];
                j--;
            }
            best[j] = i;
        }
        printf(",\"top\":[");
        for (int j = 0; j < k; j++) {
            size_t pn = piece(m, best[j], buf, sizeof buf);
            printf("%s{\"id\":%d,\"piece\":", j ? "," : "", best[j]);
            cli_json_str(stdout, buf, pn);
            printf(",\"logprob\":%.9g}", logprob(logits, n_vocab, best[j]));
        }
        printf("]");
    }
    printf("}\n");
    fflush(stdout);
}

// ---------------------------------------------------------------------------------------------
// Plain generation

typedef struct session {
    const run_options *o; // flags
    mint_model *m;        // model
    mint_ctx *ctx;        // context
    mint_sampler *smpl;   // sampler
    int32_t n_vocab;      // vocabulary size
    stats st;             // timings
} session;

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
        const float *l = mint_get_logits(s->ctx, -1);
        int32_t best = 0;
        for (int32_t v = 1; v < s->n_vocab; v++) best = l[v] > l[best] ? v : best;
        if (best != seq->id[i]) mismatches++;
        // The last token is not evaluated, as in the timed naive loop.
        if (i + 1 < seq->n && mint_eval(s->ctx, seq->id + i, 1, (int32_t)i, false, &err) != MINT_OK)
            return;
    }
    double t2 = cli_now();
    uint64_t n_gen = seq->n - n_prompt;
    fprintf(stderr, "\nnaive (no KV cache) vs KV cache, same %" PRIu64 " tokens:\n", n_gen);
    print_rate("naive gen", s->st.t_gen, s->st.n_gen);
    print_rate("kv-cache gen", t2 - t1, n_gen);
    fprintf(stderr, "speed-up       = %10.2fx\n",
            s->st.t_gen > 0 && t2 > t1 ? s->st.t_gen / (t2 - t1) : 0.0);
    if (s->o->temp <= 0)
        fprintf(stderr, "greedy tokens  = %s\n",
                mismatches ? "DIFFER between the two modes" : "identical in both modes");
}

static int generate(session *s) {
    const run_options *o = s->o;
    mint_err err;
    tokens seq = {0};
    char msg[600];
    int rc = 0;
    // The prompt: ids, text, a file, or nothing (BOS alone).
    if (o->prompt_ids) {
        size_t n;
        int32_t *ids = cli_parse_ids("--prompt-ids", o->prompt_ids, &n, msg, sizeof msg);
        if (!ids) return fail(msg);
        for (size_t i = 0; i < n; i++) {
            if (ids[i] >= s->n_vocab) {
                snprintf(msg, sizeof msg, "--prompt-ids: token id %d is outside 0..%d", ids[i],
                         s->n_vocab - 1);
                free(ids);
                free(seq.id);
                return fail(msg);
            }
            if (!push(&seq, ids[i])) {
                free(ids);
                free(seq.id);
                return fail("out of memory");
            }
        }
        free(ids);
    } else {
        char *text = NULL;
        size_t len = 0;
        if (o->prompt_file) {
            text = cli_read_file(o->prompt_file, &len, msg, sizeof msg);
            if (!text) return fail(msg);
        }
        const char *p = text ? text : o->prompt ? o->prompt : "";
        if (!text) len = strlen(p);
        mint_status st = tokenize_into(s->m, p, len, true, false, &seq, &err);
        if (st == MINT_OK && seq.n == 0) {
            mint_model_desc d;
            mint_model_describe(s->m, &d);
            if (d.bos >= 0) push(&seq, d.bos);
        }
        if (!o->json) fwrite(p, 1, len, stdout);
        free(text);
        if (st != MINT_OK) return fail(err.msg);
    }
    if (seq.n == 0) return fail("the prompt is empty and the vocabulary has no BOS token");
    const size_t n_prompt = seq.n;
    const int32_t n_ctx = mint_ctx_n_ctx(s->ctx);
    if ((int64_t)n_prompt >= n_ctx) {
        snprintf(msg, sizeof msg,
                 "the prompt has %zu tokens, which leaves no room in the context of %d (raise -c)",
                 n_prompt, n_ctx);
        free(seq.id);
        return fail(msg);
    }
    mint_model_desc d;
    mint_model_describe(s->m, &d);
    if (o->prompt_ids && !o->json) {
        // Show what the ids say, as the detokenizer would (no BOS, no leading space).
        char buf[256];
        for (size_t i = 0; i < n_prompt; i++) {
            size_t n = piece(s->m, seq.id[i], buf, sizeof buf);
            bool after_bos = i == 0 || (i == 1 && seq.id[0] == d.bos);
            const char *b = buf;
            if (after_bos && n > 0 && buf[0] == ' ') b++, n--;
            fwrite(b, 1, n, stdout);
        }
    }
    fflush(stdout);
    for (size_t i = 0; i < n_prompt; i++) mint_sampler_accept(s->smpl, seq.id[i]);

    double t0 = cli_now();
    if (mint_eval(s->ctx, seq.id, (int32_t)n_prompt, 0, false, &err) != MINT_OK) {
        free(seq.id);
        return fail(err.msg);
    }
    s->st.t_prompt = cli_now() - t0;
    s->st.n_prompt = n_prompt;

    // Generation: sample, print, evaluate the new token, until EOS, -n or a full context.
    double t1 = cli_now();
    bool bos_only = n_prompt == 1 && seq.id[0] == d.bos;
    for (int i = 0; o->n_predict < 0 || i < o->n_predict; i++) {
        const float *logits = mint_get_logits(s->ctx, -1);
        int32_t id = mint_sampler_sample(s->smpl, logits);
        if (o->json) print_json_token(s->m, logits, s->n_vocab, id, o->n_probs);
        if (mint_token_is_eog(s->m, id) && !o->ignore_eos) break;
        mint_sampler_accept(s->smpl, id);
        if (!push(&seq, id)) {
            rc = fail("out of memory");
            break;
        }
        s->st.n_gen++;
        if (!o->json) {
            char buf[256];
            size_t n = piece(s->m, id, buf, sizeof buf);
            const char *b = buf;
            // After a lone BOS the first word loses its leading space (SentencePiece's rule).
            if (i == 0 && bos_only && n > 0 && buf[0] == ' ') b++, n--;
            fwrite(b, 1, n, stdout);
            fflush(stdout);
        }
        if ((int64_t)seq.n >= n_ctx) {
            fprintf(stderr, "\n" TOOL ": context full (%d tokens); stopping\n", n_ctx);
            break;
        }
        if (o->n_predict >= 0 && i + 1 >= o->n_predict) break; // no need to evaluate the last
        if (step_eval(s, &seq, &err) != MINT_OK) {
            rc = fail(err.msg);
            break;
        }
    }
    s->st.t_gen = cli_now() - t1;
    if (!o->json) printf("\n");
    fflush(stdout);
    print_summary(&s->st);
    if (o->no_kv_cache && rc == 0 && s->st.n_gen > 0) retime_with_cache(s, &seq, n_prompt);
    free(seq.id);
    return rc;
}

// ---------------------------------------------------------------------------------------------
// Chat

typedef struct chat {
    mint_chat_msg *msgs; // [n] conversation so far
    char **owned;        // [n] copies of the message texts
    size_t n, cap;       // used / allocated
} chat;

static bool chat_add(chat *c, const char *role, const char *text, size_t len) {
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        mint_chat_msg *m = realloc(c->msgs, cap * sizeof *m);
        char **o = m ? realloc(c->owned, cap * sizeof *o) : NULL;
        if (m) c->msgs = m;
        if (!o) return false;
        c->owned = o;
        c->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) return false;
    memcpy(copy, text, len);
    copy[len] = '\0';
    c->owned[c->n] = copy;
    c->msgs[c->n] = (mint_chat_msg){role, copy};
    c->n++;
    return true;
}

static char *render(mint_chat_template t, const chat *c, const char *bos, const char *eos) {
    size_t need = mint_chat_render(t, c->msgs, c->n, true, bos, eos, NULL, 0);
    char *buf = malloc(need + 1);
    if (buf) mint_chat_render(t, c->msgs, c->n, true, bos, eos, buf, need + 1);
    return buf;
}

// The chat template: --chat-template (checked by the parser), else the model's own; NULL and a
// message in msg when there is none mint knows.
static mint_chat_template chat_template(const run_options *o, const mint_model *m,
                                        const char **msg) {
    if (o->chat_template) return mint_chat_from_name(o->chat_template);
    mint_model_desc d;
    mint_model_describe(m, &d);
    mint_chat_template t = mint_chat_detect(d.chat_template);
    if (t == MINT_CHAT_UNKNOWN)
        *msg = d.chat_template ? "the model's chat template is not one mint recognises (zephyr, "
                                 "llama2, chatml); choose one with --chat-template NAME"
                               : "the model has no chat template; choose one with --chat-template "
                                 "NAME (zephyr, llama2, chatml)";
    return t;
}

static int chat_loop(session *s, mint_chat_template t) {
    const run_options *o = s->o;
    mint_model_desc d;
    mint_model_describe(s->m, &d);
    const char *bos = d.bos >= 0 ? mint_token_text(s->m, d.bos) : "";
    const char *eos = d.eos >= 0 ? mint_token_text(s->m, d.eos) : "";
    if (o->verbose) fprintf(stderr, TOOL ": chat template %s\n", mint_chat_name(t));
    chat c = {0};
    if (o->system) chat_add(&c, "system", o->system, strlen(o->system));
    char *cached = NULL; // rendered text whose tokens are in the KV cache
    size_t n_cached = 0; // tokens in the KV cache
    char *line = NULL;
    size_t line_cap = 0;
    int rc = 0, turn = 0;
    bool tty = isatty(STDIN_FILENO);
    mint_err err;
    for (;;) {
        if (tty) fprintf(stderr, "> ");
        ssize_t len = getline(&line, &line_cap, stdin);
        if (len < 0) break;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (len == 0) continue;
        if (!chat_add(&c, "user", line, (size_t)len)) {
            rc = fail("out of memory");
            break;
        }
        char *full = render(t, &c, bos, eos);
        if (!full) {
            rc = fail("out of memory");
            break;
        }
        // Evaluate only what follows the cached text; if the template rewrote history (it
        // normally does not), start over from an empty cache.
        size_t cl = cached ? strlen(cached) : 0;
        bool reuse = cached && n_cached > 0 && strncmp(full, cached, cl) == 0;
        const char *delta = reuse ? full + cl : full;
        bool add_bos = !reuse && strncmp(full, bos, strlen(bos)) != 0;
        tokens nt = {0};
        mint_status st = tokenize_into(s->m, delta, strlen(delta), add_bos, true, &nt, &err);
        int32_t pos = reuse ? (int32_t)n_cached : 0;
        if (st == MINT_OK && nt.n == 0)
            st = MINT_OK;
        else if (st == MINT_OK) {
            double t0 = cli_now();
            st = mint_eval(s->ctx, nt.id, (int32_t)nt.n, pos, false, &err);
            s->st.t_prompt += cli_now() - t0;
            s->st.n_prompt += nt.n;
        }
        if (st != MINT_OK) {
            free(full);
            free(nt.id);
            rc = fail(err.msg);
            break;
        }
        n_cached = (size_t)pos + nt.n;
        turn++;
        if (o->verbose)
            fprintf(stderr, "[turn %d: %zu new tokens evaluated, %d reused from the cache]\n", turn,
                    nt.n, pos);
        for (size_t i = 0; i < nt.n; i++) mint_sampler_accept(s->smpl, nt.id[i]);
        free(nt.id);
        // The reply.
        size_t rcap = 256, rlen = 0;
        char *reply = malloc(rcap);
        double t1 = cli_now();
        for (int i = 0; reply && (o->n_predict < 0 || i < o->n_predict); i++) {
            int32_t id = mint_sampler_sample(s->smpl, mint_get_logits(s->ctx, -1));
            if (mint_token_is_eog(s->m, id)) break;
            mint_sampler_accept(s->smpl, id);
            s->st.n_gen++;
            char buf[256];
            size_t n = piece(s->m, id, buf, sizeof buf);
            fwrite(buf, 1, n, stdout);
            fflush(stdout);
            if (rlen + n + 1 > rcap) {
                char *r = realloc(reply, 2 * (rlen + n + 1));
                if (!r) break;
                reply = r;
                rcap = 2 * (rlen + n + 1);
            }
            memcpy(reply + rlen, buf, n);
            rlen += n;
            if ((int32_t)n_cached + 1 >= mint_ctx_n_ctx(s->ctx)) {
                fprintf(stderr, "\n" TOOL ": context full; ending the chat\n");
                rc = 1;
                break;
            }
            if (mint_eval(s->ctx, &id, 1, (int32_t)n_cached, false, &err) != MINT_OK) {
                rc = fail(err.msg);
                break;
            }
            n_cached++;
        }
        s->st.t_gen += cli_now() - t1;
        printf("\n");
        fflush(stdout);
        if (!reply) {
            free(full);
            rc = fail("out of memory");
            break;
        }
        // The cache now holds the prompt text plus the reply's tokens.
        free(cached);
        cached = malloc(strlen(full) + rlen + 1);
        if (cached) {
            strcpy(cached, full);
            memcpy(cached + strlen(full), reply, rlen);
            cached[strlen(full) + rlen] = '\0';
        }
        chat_add(&c, "assistant", reply, rlen);
        free(reply);
        free(full);
        if (rc) break;
    }
    free(line);
    free(cached);
    for (size_t i = 0; i < c.n; i++) free(c.owned[i]);
    free(c.owned);
    free(c.msgs);
    print_summary(&s->st);
    return rc;
}

// ---------------------------------------------------------------------------------------------

static void describe(const mint_model *m, const mint_ctx *ctx, uint64_t seed) {
    mint_model_desc d;
    mint_model_describe(m, &d);
    fprintf(stderr,
            TOOL ": %s '%s': %d layers, n_embd %d, n_ff %d, heads %d/%d (kv), head_dim %d, "
                 "vocab %d, ctx_train %d\n",
            d.arch, d.name, d.n_layer, d.n_embd, d.n_ff, d.n_head, d.n_head_kv, d.head_dim,
            d.n_vocab, d.n_ctx_train);
    fprintf(stderr,
            TOOL ": rope base %g scale %g, rms eps %g, %" PRIu64 " parameters, %.2f MiB, types "
                 "%s\n",
            d.rope_base, d.rope_freq_scale, d.rms_eps, d.n_params, d.weight_bytes / 1048576.0,
            d.types);
    fprintf(stderr, TOOL ": kernels %s, %d threads, context %d, seed %" PRIu64 "\n",
            mint_isa_name(), mint_ctx_n_threads(ctx), mint_ctx_n_ctx(ctx), seed);
}

int main(int argc, char **argv) {
    run_options o;
    char msg[600];
    if (!run_parse_args(argc, argv, &o, msg, sizeof msg)) {
        fprintf(stderr, TOOL ": %s\n", msg);
        return 2;
    }
    if (o.help) {
        run_usage(stdout);
        return 0;
    }
    session s = {.o = &o};
    mint_err err;
    double t0 = cli_now();
    if (mint_model_open(o.model, NULL, &s.m, &err) != MINT_OK) return fail(err.msg);
    s.st.t_load = cli_now() - t0;
    mint_model_desc d;
    mint_model_describe(s.m, &d);
    s.n_vocab = d.n_vocab;
    mint_chat_template tmpl = MINT_CHAT_UNKNOWN;
    if (o.chat) {
        const char *why = NULL;
        tmpl = chat_template(&o, s.m, &why);
        if (tmpl == MINT_CHAT_UNKNOWN) {
            mint_model_close(s.m);
            return fail(why);
        }
    }

    mint_ctx_params cp = mint_ctx_default_params();
    cp.n_threads = o.n_threads;
    cp.n_ctx = o.n_ctx;
    cp.n_batch = o.n_batch;
    cp.kv_type = o.kv_f16 ? MINT_KV_F16 : MINT_KV_F32;
    if (mint_ctx_create(s.m, &cp, &s.ctx, &err) != MINT_OK) {
        mint_model_close(s.m);
        return fail(err.msg);
    }
    if (o.dump_graph) {
        fputs(mint_ctx_graph_text(s.ctx), stdout);
        mint_ctx_free(s.ctx);
        mint_model_close(s.m);
        return 0;
    }
    mint_sampler_params sp = mint_sampler_default_params();
    sp.temp = o.temp;
    sp.top_k = o.top_k;
    sp.top_p = o.top_p;
    sp.min_p = o.min_p;
    sp.repeat_penalty = o.repeat_penalty;
    sp.repeat_last_n = o.repeat_last_n;
    sp.seed = o.seed >= 0 ? (uint64_t)o.seed : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    if (mint_sampler_create(&sp, d.n_vocab, &s.smpl, &err) != MINT_OK) {
        mint_ctx_free(s.ctx);
        mint_model_close(s.m);
        return fail(err.msg);
    }
    if (o.verbose) describe(s.m, s.ctx, sp.seed);
    int rc = o.chat ? chat_loop(&s, tmpl) : generate(&s);
    mint_sampler_free(s.smpl);
    mint_ctx_free(s.ctx);
    mint_model_close(s.m);
    return rc;
}
