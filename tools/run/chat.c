// chat.c - mint-run -cnv: a multi-turn chat, one user turn per stdin line, rendered with the
// model's chat template; each turn evaluates only what is new since the KV cache.
#include "run.h"

#include "chat_arg.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

// The conversation rendered with the chat template by the library (mint_chat_apply); NULL and
// the error in *err when the template refuses it.
static char *render(const char *tmpl, const chat *c, const char *bos, const char *eos,
                    mint_err *err) {
    char *text = NULL;
    size_t len;
    if (mint_chat_apply(tmpl, c->msgs, c->n, true, bos, eos, &text, &len, err) != MINT_OK)
        return NULL;
    return text;
}

// The template's source as --chat-template-file or the model gave it (malloc); NULL and the reason
// in msg when there is none or the file cannot be read.
static char *template_source(const run_options *o, const mint_model *m, char *msg, size_t cap) {
    if (o->chat_template) return strdup(cli_chat_source(o->chat_template));
    if (o->chat_template_file) {
        size_t len;
        char *text = cli_read_file(o->chat_template_file, &len, msg, cap);
        if (text && strlen(text) != len) {
            snprintf(msg, cap, "%s: the chat template holds a NUL byte", o->chat_template_file);
            free(text);
            return NULL;
        }
        return text;
    }
    mint_model_desc d;
    mint_model_describe(m, &d);
    if (d.chat_template) return strdup(d.chat_template);
    // The library's refusal, the same words mint-serve and the Python binding give.
    mint_err err;
    char *none = NULL;
    mint_chat_apply(NULL, NULL, 0, true, "", "", &none, NULL, &err);
    snprintf(msg, cap, "%s", err.msg);
    return NULL;
}

char *run_chat_template(const run_options *o, const mint_model *m, char *msg, size_t cap) {
    char *tmpl = template_source(o, m, msg, cap);
    if (!tmpl) return NULL;
    // The start of every conversation this run can have: the system message, a user turn.
    mint_model_desc d;
    mint_model_describe(m, &d);
    const char *bos = d.bos >= 0 ? mint_token_text(m, d.bos) : "";
    const char *eos = d.eos >= 0 ? mint_token_text(m, d.eos) : "";
    mint_chat_msg probe[2];
    size_t n = 0;
    if (o->system) probe[n++] = (mint_chat_msg){"system", o->system};
    probe[n++] = (mint_chat_msg){"user", "hello"};
    char *text = NULL;
    mint_err err;
    if (mint_chat_apply(tmpl, probe, n, true, bos ? bos : "", eos ? eos : "", &text, NULL, &err) !=
        MINT_OK) {
        snprintf(msg, cap, "%s: %s",
                 o->chat_template        ? cli_chat_label(o->chat_template)
                 : o->chat_template_file ? o->chat_template_file
                                         : "the model's chat template",
                 err.msg);
        free(tmpl);
        return NULL;
    }
    mint_chat_free(text);
    return tmpl;
}

int run_chat(session *s, const char *t) {
    const run_options *o = s->o;
    mint_model_desc d;
    mint_model_describe(s->m, &d);
    const char *bos = d.bos >= 0 ? mint_token_text(s->m, d.bos) : "";
    const char *eos = d.eos >= 0 ? mint_token_text(s->m, d.eos) : "";
    if (o->verbose)
        fprintf(stderr, TOOL ": chat template %s\n",
                o->chat_template        ? cli_chat_label(o->chat_template)
                : o->chat_template_file ? o->chat_template_file
                                        : "of the model (tokenizer.chat_template)");
    // --report: the whole conversation's tokens (each turn's new prompt tokens, then the reply's
    // with their distributions) and the last turn's rendered prompt.
    run_report *rep = NULL;
    if (run_report_open(s, &rep)) return 1;
    // -p or -f: the first user turn, answered before stdin is read (as llama-cli does).
    char *first = NULL;
    size_t first_len = 0;
    if (run_prompt_text(o, &first, &first_len)) {
        run_report_free(rep);
        return 1;
    }
    chat c = {0};
    if (o->system) {
        char *sys = strdup(o->system);
        const size_t n = sys && o->escape ? cli_unescape(sys, strlen(sys)) : sys ? strlen(sys) : 0;
        if (!sys || !chat_add(&c, "system", sys, n)) {
            free(sys);
            free(first);
            run_report_free(rep);
            return run_fail("out of memory");
        }
        free(sys);
    }
    char *cached = NULL; // rendered text whose tokens are in the KV cache
    size_t n_cached = 0; // tokens in the KV cache
    char *line = NULL;
    size_t line_cap = 0;
    int rc = 0, turn = 0;
    bool tty = isatty(STDIN_FILENO);
    mint_err err;
    for (;;) {
        ssize_t len;
        if (first) { // llama-cli drops one trailing newline of -f's text
            len = (ssize_t)first_len;
            if (len > 0 && first[len - 1] == '\n') first[--len] = '\0';
            free(line);
            line = first;
            line_cap = first_len + 1;
            first = NULL;
        } else {
            if (tty) fprintf(stderr, "> ");
            len = getline(&line, &line_cap, stdin);
            if (len < 0) break;
            while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        }
        if (len == 0) continue;
        if (!chat_add(&c, "user", line, (size_t)len)) {
            rc = run_fail("out of memory");
            break;
        }
        char *full = render(t, &c, bos, eos, &err);
        if (!full) {
            rc = run_fail(err.msg);
            break;
        }
        // The turn's tokens: when the rendered text extends what the cache holds (the usual
        // case), the held tokens and then the new text's; otherwise the whole text afresh.
        // mint_seq_prefix keeps whatever of them the cache already holds (or has in its prefix
        // cache), and only the rest is evaluated.
        size_t cl = cached ? strlen(cached) : 0;
        bool extend = cached && n_cached > 0 && strncmp(full, cached, cl) == 0;
        const char *delta = extend ? full + cl : full;
        bool add_bos = !extend && strncmp(full, bos, strlen(bos)) != 0;
        tokens nt = {0};
        if (extend)
            for (size_t i = 0; i < n_cached; i++) tokens_push(&nt, mint_seq_tokens(s->ctx, 0)[i]);
        mint_status st = tokens_from_text(s->m, delta, strlen(delta), add_bos, true, &nt, &err);
        int32_t held = 0;
        if (st == MINT_OK && nt.n > 0 && (int64_t)nt.n >= mint_ctx_n_ctx(s->ctx)) {
            st = MINT_E_LIMIT;
            snprintf(err.msg, sizeof err.msg,
                     "the conversation (%zu token%s) fills the context of %d", nt.n,
                     cli_plural((long long)nt.n), mint_ctx_n_ctx(s->ctx));
        }
        if (st == MINT_OK && nt.n > 0)
            st = mint_seq_prefix(s->ctx, 0, nt.id, (int32_t)nt.n, &held, &err);
        if (st == MINT_OK && nt.n > 0) {
            double t0 = cli_now();
            st = mint_eval(s->ctx, nt.id + held, (int32_t)nt.n - held, held, false, &err);
            s->st.t_prompt += cli_now() - t0;
            if (st == MINT_OK) {
                run_report_chat_prompt(rep, full);
                run_report_prompt(s, rep, nt.id + held, (int)nt.n - held, false, cli_now() - t0);
            }
            s->st.n_prompt += nt.n - (size_t)held;
            s->st.n_reused += (size_t)held;
        }
        if (st != MINT_OK) {
            free(full);
            free(nt.id);
            rc = run_fail(err.msg);
            break;
        }
        n_cached = nt.n;
        turn++;
        if (o->verbose)
            fprintf(stderr, "[turn %d: %zu new token%s evaluated, %d reused from the cache]\n",
                    turn, nt.n - (size_t)held, cli_plural((long long)(nt.n - (size_t)held)), held);
        for (size_t i = (size_t)held; i < nt.n; i++) mint_sampler_accept(s->smpl, nt.id[i]);
        free(nt.id);
        // The reply.
        size_t rcap = 256, rlen = 0;
        char *reply = malloc(rcap);
        double t1 = cli_now();
        // The library's generation step: sampling, end of turn, -n.
        mint_gen_params gp = mint_gen_default_params();
        gp.max_tokens = o->n_predict;
        mint_grammar_reset(s->grammar); // each reply matches the grammar from its start
        mint_gen *g = NULL;
        if (o->n_predict != 0 && mint_gen_create(s->m, s->smpl, &gp, &g, &err) != MINT_OK)
            rc = run_fail(err.msg);
        for (mint_gen_token out = {0}; reply && g && out.finish == MINT_FINISH_NONE;) {
            if (mint_gen_step(g, mint_get_logits(s->ctx, -1), &out, &err) != MINT_OK) {
                rc = run_fail(err.msg);
                break;
            }
            if (out.finish == MINT_FINISH_EOS) break;
            const int32_t id = out.token;
            run_report_token(s, rep, mint_get_logits(s->ctx, -1), id);
            s->st.n_gen++;
            const char *buf = out.text;
            const size_t n = out.n_text;
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
            const double ts = cli_now();
            if (mint_eval(s->ctx, &id, 1, (int32_t)n_cached, false, &err) != MINT_OK) {
                rc = run_fail(err.msg);
                break;
            }
            run_report_step(s, rep, cli_now() - ts);
            n_cached++;
        }
        mint_gen_free(g);
        s->st.t_gen += cli_now() - t1;
        printf("\n");
        fflush(stdout);
        if (!reply) {
            free(full);
            rc = run_fail("out of memory");
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
    if (run_report_close(s, rep, rc == 0)) rc = 1;
    free(line);
    free(cached);
    for (size_t i = 0; i < c.n; i++) free(c.owned[i]);
    free(c.owned);
    free(c.msgs);
    // A failure before anything was evaluated stays the only line (no timing of zeros).
    if (rc == 0 || turn > 0) run_print_summary(&s->st);
    return rc;
}
