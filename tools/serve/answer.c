// answer.c - the pieces every generation answer is made of, below the endpoints that assemble
// them (handlers_gen.c's OpenAI shapes, handlers_native.c's /completion, handlers_anthropic.c,
// handlers_tools.c): a token's text and bytes, log-probability entries, llama-server's timings,
// a prompt's tokens as text, the usage object and the envelope of an answer or a chunk. They
// call nothing of the handlers.
#include "gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_object *gen_token_str(const mint_model *m, int32_t id) {
    char b[256];
    size_t n = mint_token_to_piece(m, id, false, b, sizeof b);
    return reply_utf8_string(b, n < sizeof b ? n : 0);
}

json_object *gen_token_bytes(const mint_model *m, int32_t id) {
    char b[256];
    size_t n = mint_token_to_piece(m, id, false, b, sizeof b);
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < n && i < sizeof b; i++)
        json_object_array_add(a, json_object_new_int((unsigned char)b[i]));
    return a;
}

// Chat: {"content": [{id, token, logprob, bytes, top_logprobs: [{id, token, logprob, bytes}]}]}
// "id" (the token id) is an extension, as in llama-server's: clients ignore it, the chat page
// shows it. With post_sampling_probs (llama-server's), the numbers are probabilities in the
// distribution drawn from, named prob and top_probs.
json_object *gen_logprob_items(const gen *g, const job *j, int from, int to) {
    const mint_model *m = sched_model(g->h->e);
    const bool post = j->post_sampling;
    json_object *content = json_object_new_array();
    for (int t = from; t < to; t++) {
        const serve_token *k = &j->tok[t];
        json_object *o = json_object_new_object(), *top = json_object_new_array();
        json_object_object_add(o, "id", json_object_new_int(k->id));
        json_object_object_add(o, "token", gen_token_str(m, k->id));
        if (post)
            json_object_object_add(o, "prob", json_object_new_double(exp(k->logprob)));
        else
            json_object_object_add(o, "logprob", json_object_new_double(k->logprob));
        json_object_object_add(o, "bytes", gen_token_bytes(m, k->id));
        for (int a = 0; a < k->n_top; a++) {
            json_object *x = json_object_new_object();
            json_object_object_add(x, "id", json_object_new_int(k->top_id[a]));
            json_object_object_add(x, "token", gen_token_str(m, k->top_id[a]));
            if (post)
                json_object_object_add(x, "prob", json_object_new_double(exp(k->top_lp[a])));
            else
                json_object_object_add(x, "logprob", json_object_new_double(k->top_lp[a]));
            json_object_object_add(x, "bytes", gen_token_bytes(m, k->top_id[a]));
            json_object_array_add(top, x);
        }
        json_object_object_add(o, post ? "top_probs" : "top_logprobs", top);
        json_object_array_add(content, o);
    }
    return content;
}

// llama-server's timings object. The generation rate is over decode steps: the first token
// comes with the prompt's last batch, so n tokens cost n - 1 steps (llama-server's definition).
static json_object *timings(int cache_n, int prompt_n, double prompt_ms, int predicted_n,
                            double gen_ms) {
    const int steps = predicted_n > 0 ? predicted_n - 1 : 0;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "cache_n", json_object_new_int(cache_n));
    json_object_object_add(o, "prompt_n", json_object_new_int(prompt_n));
    json_object_object_add(o, "prompt_ms", json_object_new_double(prompt_ms));
    json_object_object_add(o, "prompt_per_token_ms",
                           json_object_new_double(prompt_n > 0 ? prompt_ms / prompt_n : 0));
    json_object_object_add(o, "prompt_per_second",
                           json_object_new_double(prompt_ms > 0 ? 1e3 * prompt_n / prompt_ms : 0));
    json_object_object_add(o, "predicted_n", json_object_new_int(predicted_n));
    json_object_object_add(o, "predicted_ms", json_object_new_double(gen_ms));
    json_object_object_add(o, "predicted_per_token_ms",
                           json_object_new_double(steps > 0 ? gen_ms / steps : 0));
    json_object_object_add(o, "predicted_per_second",
                           json_object_new_double(gen_ms > 0 ? 1e3 * steps / gen_ms : 0));
    return o;
}

json_object *gen_timings(const job *j) {
    const double t0 = j->t_started > 0 ? j->t_started : j->t_created;
    const double t1 = j->t_first > 0 ? j->t_first : j->t_done > 0 ? j->t_done : t0;
    const double end = j->t_done > 0 ? j->t_done : serve_now();
    return timings(j->n_reused, j->n_prompt - j->n_reused, (t1 - t0) * 1e3, j->n_tok,
                   (end - t1) * 1e3);
}

json_object *gen_progress_timings(const job *j, int k) {
    const double prompt_ms = k > 0 ? (j->prog_t[k] - j->t_started) * 1e3 : 0;
    return timings(j->n_reused, j->prog_done[k] - j->n_reused, prompt_ms, 0, 0);
}

char *gen_tokens_text(const mint_model *m, const int32_t *ids, int n) {
    size_t len = 0, tcap = 64;
    char *text = malloc(tcap);
    for (int x = 0; text && x < n; x++) {
        char piece[256];
        size_t k = mint_token_to_piece(m, ids[x], true, piece, sizeof piece);
        if (k > sizeof piece) k = 0;
        if (len + k + 1 > tcap) {
            tcap = (len + k + 1) * 2;
            char *t2 = realloc(text, tcap);
            if (!t2) {
                free(text);
                return NULL;
            }
            text = t2;
        }
        memcpy(text + len, piece, k);
        len += k;
    }
    if (text) text[len] = '\0';
    return text;
}

json_object *gen_usage(const gen *g) {
    int prompt = 0, gen_tok = 0, cached = 0;
    for (int i = 0; i < g->n; i++) {
        prompt = g->jobs[i]->n_prompt; // the same prompt for every choice
        gen_tok += g->jobs[i]->n_tok;
        cached = g->jobs[i]->n_reused > cached ? g->jobs[i]->n_reused : cached;
    }
    json_object *u = json_object_new_object(), *d = json_object_new_object();
    json_object_object_add(u, "prompt_tokens", json_object_new_int(prompt));
    json_object_object_add(u, "completion_tokens", json_object_new_int(gen_tok));
    json_object_object_add(u, "total_tokens", json_object_new_int(prompt + gen_tok));
    json_object_object_add(d, "cached_tokens", json_object_new_int(cached));
    json_object_object_add(u, "prompt_tokens_details", d);
    return u;
}

json_object *gen_envelope(const gen *g, const char *object) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_string(g->id));
    json_object_object_add(o, "object", json_object_new_string(object));
    json_object_object_add(o, "created", json_object_new_int64(g->created));
    json_object_object_add(o, "model", json_object_new_string(g->h->cfg->model_name));
    // llama-server's "b<build>-<commit>"; OpenAI's clients pass it through.
    char fp[64];
    snprintf(fp, sizeof fp, "b%s-mint", mint_version());
    json_object_object_add(o, "system_fingerprint", json_object_new_string(fp));
    return o;
}
