// handlers_native.c - llama-server's own completion shape, POST /completion: its prompts (text,
// token ids, both mixed in one sequence, or a list of prompts answered one by one), its answer
// ({content, tokens, stop, stop_type, timings, generation_settings, completion_probabilities,
// ...}, trimmed to response_fields when asked) and its streamed events. The request flow (jobs,
// the scheduler, waiting, streaming) is handlers_gen.c's; this file only translates.
#include "gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

bool native_prompt_tokens(gen *g, int i, int32_t **ids, int *n, char *msg, size_t cap) {
    const mint_model *m = sched_model(g->h->e);
    const serve_prompt *p = &g->req.prompts[i];
    size_t total = 0, have = 0;
    int32_t *out = NULL;
    for (int k = 0; k < p->n_parts; k++) {
        const serve_part *part = &p->parts[k];
        int32_t *t = part->ids;
        size_t nt = (size_t)part->n_ids;
        mint_err err;
        if (part->text) { // BOS only before the first part of the sequence (llama-server's rule)
            if (serve_tokenize(m, part->text, strlen(part->text), k == 0, true, &t, &nt, &err) !=
                MINT_OK) {
                snprintf(msg, cap, "%s", err.msg);
                free(out);
                return false;
            }
        } else {
            for (size_t x = 0; x < nt; x++)
                if (t[x] >= g->h->n_vocab) {
                    snprintf(msg, cap, "token id %d is outside 0..%d", t[x], g->h->n_vocab - 1);
                    free(out);
                    return false;
                }
        }
        if (have + nt > total) {
            total = (have + nt) * 2;
            int32_t *o = realloc(out, total * sizeof *o);
            if (!o) {
                if (part->text) free(t);
                free(out);
                return false;
            }
            out = o;
        }
        if (nt) memcpy(out + have, t, nt * sizeof *t);
        have += nt;
        if (part->text) free(t);
    }
    // "prompt" in the answer: the tokens as text, special ones written out ("<s> I believe").
    char *text = gen_tokens_text(m, out, (int)have);
    g->prompt_text[i] = text;
    *ids = out;
    *n = (int)have;
    return true;
}

bool gen_resolve_bias(gen *g, int32_t **ids, float **bias, int *n, char *msg, size_t cap) {
    const mint_model *m = sched_model(g->h->e);
    int have = 0, room = 0;
    int32_t *oi = NULL;
    float *ob = NULL;
    for (int k = 0; k < g->req.n_bias; k++) {
        const serve_bias *b = &g->req.bias[k];
        int32_t one = b->id, *t = &one;
        size_t nt = 1;
        mint_err err;
        if (b->text &&
            serve_tokenize(m, b->text, strlen(b->text), false, false, &t, &nt, &err) != MINT_OK) {
            snprintf(msg, cap, "logit_bias: %s", err.msg);
            goto fail;
        }
        if (!b->text && one >= g->h->n_vocab) {
            snprintf(msg, cap, "logit_bias: token id %d is outside 0..%d", one, g->h->n_vocab - 1);
            goto fail;
        }
        if (have + (int)nt > room) {
            room = (have + (int)nt) * 2;
            int32_t *i2 = realloc(oi, (size_t)room * sizeof *i2);
            if (i2) oi = i2;
            float *b2 = realloc(ob, (size_t)room * sizeof *b2);
            if (b2) ob = b2;
            if (!i2 || !b2) {
                if (b->text) free(t);
                snprintf(msg, cap, "out of memory");
                goto fail;
            }
        }
        for (size_t x = 0; x < nt; x++) oi[have] = t[x], ob[have++] = b->bias;
        if (b->text) free(t);
    }
    *ids = oi;
    *bias = ob;
    *n = have;
    return true;
fail:
    free(oi);
    free(ob);
    return false;
}

// ---------------------------------------------------------------------------------------------
// The answer

static const char *stop_type(const job *j) {
    if (strcmp(j->finish, "stop") != 0) return "limit";
    return j->stop_word >= 0 ? "word" : "eos";
}

static json_object *settings(const gen *g, const job *j) {
    json_object *o = json_object_new_object(), *stop = json_object_new_array();
    json_object_object_add(o, "seed", json_object_new_int64((int64_t)j->sp.seed));
    json_object_object_add(o, "temperature", json_object_new_double(j->sp.temp));
    json_object_object_add(o, "top_k", json_object_new_int(j->sp.top_k));
    json_object_object_add(o, "top_p", json_object_new_double(j->sp.top_p));
    json_object_object_add(o, "min_p", json_object_new_double(j->sp.min_p));
    json_object_object_add(o, "repeat_last_n", json_object_new_int(j->sp.repeat_last_n));
    json_object_object_add(o, "repeat_penalty", json_object_new_double(j->sp.repeat_penalty));
    // Samplers mint does not have, reported as off (llama-server's values for "off").
    json_object_object_add(o, "presence_penalty", json_object_new_double(0));
    json_object_object_add(o, "frequency_penalty", json_object_new_double(0));
    json_object_object_add(o, "mirostat", json_object_new_int(0));
    json_object_object_add(o, "adaptive_target", json_object_new_double(-1));
    json_object_object_add(o, "adaptive_decay", json_object_new_double(0.9));
    for (int k = 0; k < j->n_stop; k++)
        json_object_array_add(stop, json_object_new_string(j->stop[k]));
    json_object_object_add(o, "stop", stop);
    json_object_object_add(o, "max_tokens", json_object_new_int(j->max_tokens));
    json_object_object_add(o, "n_predict", json_object_new_int(j->max_tokens));
    json_object_object_add(o, "stream", json_object_new_boolean(g->stream));
    json_object_object_add(o, "n_probs", json_object_new_int(g->req.n_probs));
    json_object_object_add(o, "post_sampling_probs",
                           json_object_new_boolean(g->req.post_sampling_probs));
    json_object_object_add(o, "samplers", json_object_new_array());
    json_object *bias = json_object_new_array(); // -inf written as null, as llama-server does
    for (int k = 0; k < j->n_bias; k++) {
        json_object *b = json_object_new_object();
        json_object_object_add(b, "token", json_object_new_int(j->bias_id[k]));
        json_object_object_add(b, "bias",
                               isinf(j->bias[k]) ? NULL : json_object_new_double(j->bias[k]));
        json_object_array_add(bias, b);
    }
    json_object_object_add(o, "logit_bias", bias);
    json_object_object_add(o, "ignore_eos", json_object_new_boolean(g->req.ignore_eos));
    return o;
}

// The members named by response_fields ("a/b" reaches into a member), each under its name as
// given; a name the answer does not have is left out (llama-server's rule).
static json_object *pick_fields(const gen *g, json_object *full) {
    if (g->req.n_fields == 0) return full;
    json_object *o = json_object_new_object();
    for (int f = 0; f < g->req.n_fields; f++) {
        json_object *v = full;
        char path[256];
        snprintf(path, sizeof path, "%s", g->req.fields[f]);
        for (char *save = NULL, *part = strtok_r(path, "/", &save); part && v;
             part = strtok_r(NULL, "/", &save))
            if (!json_object_is_type(v, json_type_object) ||
                !json_object_object_get_ex(v, part, &v))
                v = NULL;
        if (v) json_object_object_add(o, g->req.fields[f], json_object_get(v));
    }
    json_object_put(full);
    return o;
}

static json_object *token_ids(const job *j, int from, int to) {
    json_object *a = json_object_new_array();
    for (int t = from; t < to; t++) json_object_array_add(a, json_object_new_int(j->tok[t].id));
    return a;
}

json_object *native_result(const gen *g, int i) {
    const job *j = g->jobs[i];
    int n_in = 0; // the tokens inside the text (a stop string cut the rest)
    while (n_in < j->n_tok && j->tok[n_in].text_end <= j->text_len) n_in++;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "index", json_object_new_int(i));
    // A stream sent the text already: its last event has none (llama-server's).
    json_object_object_add(o, "content",
                           g->stream ? json_object_new_string("")
                                     : reply_utf8_string(j->text, j->text_len));
    json_object_object_add(o, "tokens",
                           g->req.return_tokens && !g->stream ? token_ids(j, 0, n_in)
                                                              : json_object_new_array());
    json_object_object_add(o, "id_slot", json_object_new_int(j->slot));
    json_object_object_add(o, "stop", json_object_new_boolean(true));
    json_object_object_add(o, "model", json_object_new_string(g->h->cfg->model_name));
    json_object_object_add(o, "tokens_predicted", json_object_new_int(j->n_tok));
    json_object_object_add(o, "tokens_evaluated", json_object_new_int(j->n_prompt));
    json_object_object_add(o, "generation_settings", settings(g, j));
    json_object_object_add(o, "prompt",
                           json_object_new_string(g->prompt_text[i] ? g->prompt_text[i] : ""));
    json_object_object_add(
        o, "has_new_line",
        json_object_new_boolean(j->text_len && memchr(j->text, '\n', j->text_len)));
    json_object_object_add(o, "truncated", json_object_new_boolean(false));
    json_object_object_add(o, "stop_type", json_object_new_string(stop_type(j)));
    json_object_object_add(o, "stopping_word",
                           json_object_new_string(j->stop_word >= 0 ? j->stop[j->stop_word] : ""));
    json_object_object_add(o, "tokens_cached", json_object_new_int(j->n_prompt + j->n_tok));
    json_object_object_add(o, "timings", gen_timings(j));
    if (!g->stream && g->req.n_probs > 0)
        json_object_object_add(o, "completion_probabilities", gen_logprob_items(g, j, 0, n_in));
    return pick_fields(g, o);
}

json_object *native_partial(const gen *g, int i, size_t from, size_t to, int t0, int t1) {
    const job *j = g->jobs[i];
    json_object *o = json_object_new_object();
    json_object_object_add(o, "index", json_object_new_int(i));
    json_object_object_add(o, "content", reply_utf8_string(j->text + from, to - from));
    json_object_object_add(o, "tokens", token_ids(j, t0, t1));
    json_object_object_add(o, "stop", json_object_new_boolean(false));
    json_object_object_add(o, "id_slot", json_object_new_int(j->slot));
    json_object_object_add(o, "tokens_predicted", json_object_new_int(t1));
    json_object_object_add(o, "tokens_evaluated", json_object_new_int(j->n_prompt));
    if (g->req.n_probs > 0)
        json_object_object_add(o, "completion_probabilities", gen_logprob_items(g, j, t0, t1));
    return o;
}
