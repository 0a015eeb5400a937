// common.c - mint-run's shared pieces: token lists, the prompt, the timing summary.
#include "run.h"

#include "cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int run_fail(const char *msg) {
    fprintf(stderr, TOOL ": %s\n", msg);
    return 1;
}

bool tokens_push(tokens *t, int32_t id) {
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

mint_status tokens_from_text(const mint_model *m, const char *text, size_t len, bool add_special,
                             bool parse_special, tokens *t, mint_err *err) {
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
        if (!tokens_push(t, ids[i])) st = MINT_E_NOMEM;
    free(ids);
    return st;
}

size_t run_piece(const mint_model *m, int32_t id, char *buf, size_t cap) {
    size_t n = mint_token_to_piece(m, id, false, buf, cap);
    return n < cap ? n : cap;
}

void run_print_tokens(const mint_model *m, const int32_t *ids, size_t n, bool after_bos) {
    char buf[256];
    for (size_t i = 0; i < n; i++) {
        size_t k = run_piece(m, ids[i], buf, sizeof buf);
        const char *b = buf;
        if (i == 0 && after_bos && k > 0 && buf[0] == ' ') b++, k--;
        fwrite(b, 1, k, stdout);
    }
    fflush(stdout);
}

int run_prompt_text(const run_options *o, char **text, size_t *len) {
    char msg[600];
    *text = NULL;
    *len = 0;
    if (o->prompt_file) {
        *text = cli_read_file(o->prompt_file, len, msg, sizeof msg);
        if (!*text) return run_fail(msg);
    } else if (o->prompt) {
        *text = strdup(o->prompt);
        if (!*text) return run_fail("out of memory");
        *len = strlen(*text);
    }
    if (*text && o->escape) {
        *len = cli_unescape(*text, *len);
        (*text)[*len] = '\0';
    }
    return 0;
}

int run_read_prompt(session *s, tokens *seq) {
    const run_options *o = s->o;
    mint_err err;
    char msg[600];
    mint_model_desc d;
    mint_model_describe(s->m, &d);
    char *text = NULL; // -p or -f: echoed as given once the prompt is known to fit
    size_t len = 0;
    if (o->prompt_ids) {
        size_t n;
        int32_t *ids = cli_parse_ids("--prompt-ids", o->prompt_ids, &n, msg, sizeof msg);
        if (!ids) return run_fail(msg);
        for (size_t i = 0; i < n; i++) {
            if (ids[i] >= s->n_vocab) {
                snprintf(msg, sizeof msg, "--prompt-ids: token id %d is outside 0..%d", ids[i],
                         s->n_vocab - 1);
                free(ids);
                run_fail(msg);
                return 2; // a bad argument, found once the vocabulary is known
            }
            if (!tokens_push(seq, ids[i])) {
                free(ids);
                return run_fail("out of memory");
            }
        }
        free(ids);
    } else {
        if (run_prompt_text(o, &text, &len)) return 1;
        if (!text) { // say what a bare -m MODEL does
            if (o->n_predict < 0)
                fprintf(stderr, TOOL ": no prompt given: generating from BOS until EOS or the "
                                     "context is full\n");
            else
                fprintf(stderr, TOOL ": no prompt given: generating from BOS for %d token%s\n",
                        o->n_predict, cli_plural(o->n_predict));
        }
        mint_status st = tokens_from_text(s->m, text ? text : "", len, true, false, seq, &err);
        if (st != MINT_OK) {
            free(text);
            return run_fail(err.msg);
        }
        if (seq->n == 0 && d.bos >= 0) tokens_push(seq, d.bos);
    }
    if (seq->n == 0) {
        free(text);
        return run_fail("the prompt is empty and the vocabulary has no BOS token");
    }
    const int32_t n_ctx = mint_ctx_n_ctx(s->ctx);
    if ((int64_t)seq->n >= n_ctx) {
        snprintf(msg, sizeof msg,
                 "the prompt has %zu token%s, which leaves no room in the context of %d (raise -c)",
                 seq->n, cli_plural((long long)seq->n), n_ctx);
        free(text);
        return run_fail(msg);
    }
    if (!o->json && !o->no_display_prompt) {
        if (text) {
            fwrite(text, 1, len, stdout);
        } else if (o->prompt_ids) {
            // Show what the ids say, as the detokenizer would (no BOS, no leading space).
            const bool bos = seq->id[0] == d.bos;
            run_print_tokens(s->m, seq->id + bos, seq->n - bos, true);
        }
        fflush(stdout);
    }
    free(text);
    return 0;
}

void run_print_rate(const char *what, double secs, uint64_t n) {
    fprintf(stderr,
            "%-14s = %10.2f ms / %6" PRIu64 " token%-1s (%8.2f ms per token, %9.2f tokens "
            "per second)\n",
            what, secs * 1e3, n, cli_plural((long long)n), n ? secs * 1e3 / (double)n : 0.0,
            secs > 0 ? (double)n / secs : 0.0);
}

void run_print_summary(const stats *st) {
    fprintf(stderr, "%-14s = %10.2f ms\n", "load time", st->t_load * 1e3);
    run_print_rate("prompt eval", st->t_prompt, st->n_prompt);
    run_print_rate("generation", st->t_gen, st->n_gen);
}
