// handlers_gen.c - the generation endpoints: a request becomes one job per choice, queued for the
// scheduler (scheduler.c);
// the response is produced by a libmicrohttpd reader callback that waits on the jobs, as one JSON
// body or as server-sent events (one chunk per token), in OpenAI's shapes. While it waits it
// watches the client's socket: a client that leaves cancels its jobs, and the scheduler frees
// their slots at its next step.
#include "anthropic.h"
#include "cli.h"
#include "gen.h"
#include "responses.h"

#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// The client closed its end (or the connection broke).
static bool client_gone(const gen *g) {
    if (g->fd < 0) return false;
    struct pollfd p = {.fd = g->fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static void cancel_all(gen *g) {
    for (int i = 0; i < g->n; i++) {
        if (!g->jobs[i]) continue; // a request refused before its jobs were made
        pthread_mutex_lock(&g->jobs[i]->mu);
        g->jobs[i]->cancelled = true;
        pthread_mutex_unlock(&g->jobs[i]->mu);
    }
}

// Waits up to 50 ms for job i to change.
static void wait_job(job *j) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50 * 1000 * 1000;
    if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
    pthread_mutex_lock(&j->mu);
    if (j->state != JOB_DONE) pthread_cond_timedwait(&j->cv, &j->mu, &ts);
    pthread_mutex_unlock(&j->mu);
}

static const char *finish_reason(const job *j) {
    return !strcmp(j->finish, "stop") ? "stop" : "length";
}

// Why a finished job has no proper answer (its time ran out, the engine failed, the server
// stopped before it was done), with the status that says so; NULL for "stop" and "length".
static const char *job_error(const job *j, unsigned *status) {
    if (!strcmp(j->finish, "timeout")) return *status = 504, "the request took too long";
    if (!strcmp(j->finish, "error")) return *status = 500, j->error;
    if (!strcmp(j->finish, "cancelled")) return *status = 503, "the server is stopping";
    return NULL;
}

// ---------------------------------------------------------------------------------------------
// Log-probabilities in OpenAI's two shapes

static json_object *chat_logprobs(const gen *g, const job *j, int from, int to) {
    json_object *lp = json_object_new_object();
    json_object_object_add(lp, "content", gen_logprob_items(g, j, from, to));
    return lp;
}

// Completions: {"tokens", "token_logprobs", "top_logprobs": [{token: logprob}], "text_offset"}
static json_object *completion_logprobs(const gen *g, const job *j, int from, int to) {
    const mint_model *m = sched_model(g->h->e);
    json_object *tokens = json_object_new_array(), *lps = json_object_new_array(),
                *tops = json_object_new_array(), *offs = json_object_new_array();
    for (int t = from; t < to; t++) {
        const serve_token *k = &j->tok[t];
        json_object_array_add(tokens, gen_token_str(m, k->id));
        json_object_array_add(lps, json_object_new_double(k->logprob));
        json_object *top = json_object_new_object();
        for (int a = 0; a < k->n_top; a++) {
            json_object *s = gen_token_str(m, k->top_id[a]);
            json_object_object_add(top, json_object_get_string(s),
                                   json_object_new_double(k->top_lp[a]));
            json_object_put(s);
        }
        json_object_array_add(tops, top);
        const size_t off = g->echo_len + (t > 0 ? j->tok[t - 1].text_end : 0);
        json_object_array_add(offs, json_object_new_int64((int64_t)off));
    }
    json_object *o = json_object_new_object();
    json_object_object_add(o, "tokens", tokens);
    json_object_object_add(o, "token_logprobs", lps);
    json_object_object_add(o, "top_logprobs", tops);
    json_object_object_add(o, "text_offset", offs);
    return o;
}

// ---------------------------------------------------------------------------------------------
// Streaming

// One chunk: text bytes [from, to) of job i with the logprobs of tokens [t0, t1).
static void chunk(gen *g, int i, const job *j, size_t from, size_t to, int t0, int t1) {
    if (g->anthropic || g->responses) {
        if (to > from) (g->responses ? responses_stream_text : anthropic_stream_text)(g, from, to);
        return;
    }
    if (g->native) {
        json_object *o = native_partial(g, i, from, to, t0, t1);
        if (g->req.timings_per_token) json_object_object_add(o, "timings", gen_timings(j));
        reply_sse_event(&g->sse, o);
        return;
    }
    json_object *o = gen_envelope(g, g->chat ? "chat.completion.chunk" : "text_completion");
    json_object *ch = json_object_new_object(), *choices = json_object_new_array();
    json_object_object_add(ch, "index", json_object_new_int(i));
    json_object *piece = reply_utf8_string(j->text + from, to - from);
    if (g->chat) { // the role came in the stream's first chunk (see gen_request)
        json_object *delta = json_object_new_object();
        json_object_object_add(delta, "content", piece);
        json_object_object_add(ch, "delta", delta);
    } else {
        json_object_object_add(ch, "text", piece);
    }
    json_object_object_add(ch, "logprobs",
                           !g->req.logprobs ? NULL
                           : g->chat        ? chat_logprobs(g, j, t0, t1)
                                            : completion_logprobs(g, j, t0, t1));
    json_object_object_add(ch, "finish_reason", NULL);
    json_object_array_add(choices, ch);
    json_object_object_add(o, "choices", choices);
    if (g->req.timings_per_token) json_object_object_add(o, "timings", gen_timings(j));
    reply_sse_event(&g->sse, o);
}

// A prompt-progress chunk (return_progress): record k of job i, in the endpoint's partial shape
// with llama-server's "prompt_progress" {total, cache, processed, time_ms}.
static void progress_chunk(gen *g, int i, const job *j, int k) {
    json_object *o;
    if (g->native) {
        o = native_partial(g, i, 0, 0, 0, 0);
    } else if (g->responses) {
        o = responses_progress(g);
    } else {
        o = gen_envelope(g, g->chat ? "chat.completion.chunk" : "text_completion");
        json_object *ch = json_object_new_object(), *choices = json_object_new_array();
        json_object_object_add(ch, "index", json_object_new_int(i));
        if (g->chat) { // llama-server opens every progress chunk as the answer's first delta
            json_object *delta = json_object_new_object();
            json_object_object_add(delta, "role", json_object_new_string("assistant"));
            json_object_object_add(delta, "content", NULL);
            json_object_object_add(ch, "delta", delta);
        } else {
            json_object_object_add(ch, "text", json_object_new_string(""));
        }
        json_object_object_add(ch, "finish_reason", NULL);
        json_object_array_add(choices, ch);
        json_object_object_add(o, "choices", choices);
    }
    json_object *p = json_object_new_object();
    json_object_object_add(p, "total", json_object_new_int(j->n_prompt));
    json_object_object_add(p, "cache", json_object_new_int(j->n_reused));
    json_object_object_add(p, "processed", json_object_new_int(j->prog_done[k]));
    json_object_object_add(p, "time_ms",
                           json_object_new_int64((int64_t)((j->prog_t[k] - j->t_started) * 1e3)));
    json_object_object_add(o, "prompt_progress", p);
    if (g->req.timings_per_token) json_object_object_add(o, "timings", gen_progress_timings(j, k));
    reply_sse_event(&g->sse, o);
}

// Adds the chunks for what job i produced since the last call: one per token whose text may be
// shown (a stop string's start and a character cut in two wait), then the finish chunk.
static void stream_job(gen *g, int i) {
    job *j = g->jobs[i];
    pthread_mutex_lock(&j->mu);
    const bool done = j->state == JOB_DONE;
    for (; g->sent_prog[i] < j->n_prog; g->sent_prog[i]++) // prompt progress comes first
        progress_chunk(g, i, j, g->sent_prog[i]);
    const size_t vis = done ? j->text_len : reply_utf8_complete(j->text, j->visible);
    const bool parsed = tools_active(g);
    if (parsed) { // deltas of the parse (content, reasoning, calls), not the raw text
        if (vis > g->sent_text[i] || done)
            (g->responses ? responses_stream_parsed : tools_stream)(g, i, vis, done);
        g->sent_text[i] = vis;
        g->sent_tok[i] = j->n_tok;
    }
    while (!parsed && g->sent_tok[i] < j->n_tok && j->tok[g->sent_tok[i]].text_end <= vis) {
        // Tokens t .. t1 - 1: one token, or as many as a character cut between them needs (byte
        // tokens of one multi-byte character go out together; sent alone, each would show as
        // U+FFFD); a character not yet whole waits for the next call.
        const int t = g->sent_tok[i];
        int t1 = t + 1;
        size_t end = j->tok[t].text_end;
        while (reply_utf8_complete(j->text, end) < end && t1 < j->n_tok &&
               j->tok[t1].text_end <= vis)
            end = j->tok[t1++].text_end;
        if (reply_utf8_complete(j->text, end) < end && !done) break;
        if (end < g->sent_text[i]) end = g->sent_text[i];
        chunk(g, i, j, g->sent_text[i], end, t, t1);
        g->sent_text[i] = end;
        g->sent_tok[i] = t1;
    }
    if (!parsed && done && g->sent_text[i] < j->text_len) { // text past the last whole token
        chunk(g, i, j, g->sent_text[i], j->text_len, g->sent_tok[i], g->sent_tok[i]);
        g->sent_text[i] = j->text_len;
    }
    unsigned status;
    const char *failed = done && !g->sent_final[i] ? job_error(j, &status) : NULL;
    if (failed) { // no finish chunk that would pass for an answer: an error event
        reply_sse_event(&g->sse, reply_error_object(failed));
        g->sent_final[i] = true;
    }
    if (done && !g->sent_final[i] && g->native) {
        reply_sse_event(&g->sse, native_result(g, i));
        g->sent_final[i] = true;
    }
    if (done && !g->sent_final[i] && (g->anthropic || g->responses)) {
        (g->responses ? responses_stream_end : anthropic_stream_end)(g);
        g->sent_final[i] = true;
    }
    if (done && !g->sent_final[i]) {
        json_object *o = gen_envelope(g, g->chat ? "chat.completion.chunk" : "text_completion");
        json_object *ch = json_object_new_object(), *choices = json_object_new_array();
        json_object_object_add(ch, "index", json_object_new_int(i));
        if (g->chat)
            json_object_object_add(ch, "delta", json_object_new_object());
        else
            json_object_object_add(ch, "text", json_object_new_string(""));
        json_object_object_add(ch, "logprobs", NULL);
        const bool called = parsed && g->parsed_ok[i] && g->parsed[i].n_tool_calls > 0;
        json_object_object_add(ch, "finish_reason",
                               json_object_new_string(called ? "tool_calls" : finish_reason(j)));
        json_object_array_add(choices, ch);
        json_object_object_add(o, "choices", choices);
        reply_sse_event(&g->sse, o);
        g->sent_final[i] = true;
    }
    pthread_mutex_unlock(&j->mu);
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max) {
    gen *g = cls;
    (void)pos;
    for (;;) {
        const size_t n = reply_sse_take(&g->sse, buf, max);
        if (n > 0) return (ssize_t)n;
        if (g->ended) return MHD_CONTENT_READER_END_OF_STREAM;
        if (client_gone(g)) {
            cancel_all(g);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        bool all = true;
        for (int i = 0; i < g->n; i++) {
            stream_job(g, i);
            all &= g->sent_final[i];
        }
        if (all) {
            if (g->req.include_usage && !g->native && !g->anthropic && !g->responses) {
                json_object *o =
                    gen_envelope(g, g->chat ? "chat.completion.chunk" : "text_completion");
                json_object_object_add(o, "choices", json_object_new_array());
                json_object_object_add(o, "usage", gen_usage(g));
                json_object_object_add(o, "timings", gen_timings(g->jobs[0]));
                reply_sse_event(&g->sse, o);
            }
            if (!g->native && !g->anthropic && !g->responses)
                reply_sse_raw(&g->sse, "data: [DONE]\n\n", 14);
            g->ended = true;
        } else if (g->sse.len == 0) {
            for (int i = 0; i < g->n; i++)
                if (!g->sent_final[i]) {
                    wait_job(g->jobs[i]);
                    break;
                }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// One body

// The whole answer once every job is done; NULL while one is still running.
static json_object *whole(gen *g, unsigned *status) {
    *status = 200;
    for (int i = 0; i < g->n; i++) {
        const job *j = g->jobs[i];
        if (j->state != JOB_DONE) return NULL;
        const char *failed = job_error(j, status);
        if (failed) return reply_error_object(failed);
    }
    const mint_model *m = sched_model(g->h->e);
    if (g->peek) {
        const job *j = g->jobs[0];
        json_object *arr = json_object_new_array(), *o = json_object_new_object();
        for (int k = 0; j->peek_id && k < j->peek; k++) {
            json_object *c = json_object_new_object();
            json_object_object_add(c, "id", json_object_new_int(j->peek_id[k]));
            json_object_object_add(c, "piece", gen_token_str(m, j->peek_id[k]));
            json_object_object_add(c, "logit", json_object_new_double(j->peek_logit[k]));
            json_object_object_add(c, "p", json_object_new_double(j->peek_p[k]));
            json_object_array_add(arr, c);
        }
        json_object_object_add(o, "candidates", arr);
        json_object_object_add(o, "prompt_tokens", json_object_new_int(j->n_prompt));
        return o;
    }
    if (g->anthropic) return anthropic_result(g);
    if (g->responses) return responses_result(g);
    if (g->native) { // one prompt: its result; several: the list of them
        if (g->n == 1 && g->req.n_prompts <= 1) return native_result(g, 0);
        json_object *list = json_object_new_array();
        for (int i = 0; i < g->n; i++) json_object_array_add(list, native_result(g, i));
        return list;
    }
    json_object *o = gen_envelope(g, g->chat ? "chat.completion" : "text_completion");
    json_object *choices = json_object_new_array();
    for (int i = 0; i < g->n; i++) {
        const job *j = g->jobs[i];
        json_object *ch = json_object_new_object();
        bool called = false; // the answer is tool calls (finish_reason "tool_calls")
        json_object_object_add(ch, "index", json_object_new_int(i));
        if (g->chat) {
            json_object *msg = json_object_new_object();
            json_object_object_add(msg, "role", json_object_new_string("assistant"));
            if (tools_active(g))
                called = tools_message(g, j, msg);
            else
                json_object_object_add(msg, "content", reply_utf8_string(j->text, j->text_len));
            json_object_object_add(ch, "message", msg);
        } else {
            char *t = malloc(g->echo_len + j->text_len + 1);
            if (t && g->echo_len) memcpy(t, g->echo, g->echo_len); // echo and text may be NULL
            if (t && j->text_len) memcpy(t + g->echo_len, j->text, j->text_len);
            json_object_object_add(
                ch, "text", reply_utf8_string(t ? t : "", t ? g->echo_len + j->text_len : 0));
            free(t);
        }
        int n_lp = 0; // the tokens inside the text (a stop string cut the rest)
        while (n_lp < j->n_tok && j->tok[n_lp].text_end <= j->text_len) n_lp++;
        json_object_object_add(ch, "logprobs",
                               !g->req.logprobs ? NULL
                               : g->chat        ? chat_logprobs(g, j, 0, n_lp)
                                                : completion_logprobs(g, j, 0, n_lp));
        json_object_object_add(ch, "finish_reason",
                               json_object_new_string(called ? "tool_calls" : finish_reason(j)));
        json_object_array_add(choices, ch);
    }
    json_object_object_add(o, "choices", choices);
    json_object_object_add(o, "usage", gen_usage(g));
    json_object_object_add(o, "timings", gen_timings(g->jobs[0]));
    if (g->req.verbose) { // llama-server's debugging member: the prompt as its tokens' text
        json_object *v = json_object_new_object();
        char *t = gen_tokens_text(m, g->jobs[0]->prompt, g->jobs[0]->n_prompt);
        json_object_object_add(v, "prompt", json_object_new_string(t ? t : ""));
        free(t);
        json_object_object_add(o, "__verbose", v);
    }
    return o;
}

static void gen_free(void *cls) {
    gen *g = cls;
    cancel_all(g); // a no-op for finished jobs; frees the slots of a client that left
    for (int i = 0; i < g->n; i++) job_release(g->jobs[i]);
    serve_request_free(&g->req);
    for (int i = 0; i < SERVE_MAX_JOBS; i++) {
        free(g->prompt_text[i]);
        if (g->parsed_ok[i]) mint_chat_parsed_free(&g->parsed[i]);
    }
    free(g->echo);
    reply_sse_free(&g->sse);
    free(g);
}

// ---------------------------------------------------------------------------------------------
// The request

// The chat prompt's text: the conversation rendered with the template as llama-server renders
// it (tools, keyword arguments, reasoning switch, prefill); NULL and one line in msg on failure.
static char *chat_prompt(gen *g, char *msg, size_t cap) {
    const mint_model *m = sched_model(g->h->e);
    const serve_request *r = &g->req;
    char *text = NULL;
    mint_model_desc d;
    mint_model_describe(m, &d);
    const char *bos = d.bos >= 0 ? mint_token_text(m, d.bos) : "";
    const char *eos = d.eos >= 0 ? mint_token_text(m, d.eos) : "";
    mint_chat_msg_ex *cm = calloc(r->n_msgs ? (size_t)r->n_msgs : 1, sizeof *cm);
    if (!cm) return NULL;
    for (int i = 0; i < r->n_msgs; i++) {
        const serve_msg *sm = &r->msgs[i];
        cm[i] = (mint_chat_msg_ex){.role = sm->role,
                                   .content = sm->content,
                                   .reasoning_content = sm->reasoning_content,
                                   .tool_calls = sm->tool_calls,
                                   .tool_call_id = sm->tool_call_id,
                                   .name = sm->name};
    }
    size_t tlen;
    mint_err cerr;
    // A conversation ending with the assistant is continued (llama-server's prefill, and
    // continue_final_message): rendered without a generation prompt, and cut right after
    // that message's text, before whatever closes the turn. Its parts, if it has them, are
    // joined as llama-server joins a continued message's (a blank line between them).
    const serve_msg *last = r->n_msgs > 0 ? &r->msgs[r->n_msgs - 1] : NULL;
    const bool prefill = r->continue_final && last && !strcmp(last->role, "assistant");
    const char *cont = !prefill                  ? NULL
                       : last->content_continued ? last->content_continued
                                                 : last->content;
    if (prefill) cm[r->n_msgs - 1].content = cont;
    // Tools, the template's keyword arguments and the reasoning switch, as llama-server
    // renders a request with --jinja (mint_chat_apply_ex).
    mint_chat_opts o = mint_chat_default_opts();
    o.add_generation_prompt = prefill ? false : r->add_generation_prompt;
    o.bos = bos;
    o.eos = eos;
    o.tools = r->tool_choice == SERVE_TOOLS_NONE ? NULL : r->tools;
    char *kwargs = tools_kwargs(g->h->cfg->chat_template_kwargs, r->template_kwargs);
    o.kwargs = kwargs;
    o.reasoning = (mint_chat_reasoning)g->h->cfg->reasoning;
    mint_status cst =
        mint_chat_apply_ex(g->h->tmpl, cm, (size_t)r->n_msgs, &o, &text, &tlen, &cerr);
    free(kwargs);
    free(cm);
    if (cst != MINT_OK) {
        snprintf(msg, cap, "%s", cerr.msg);
        return NULL;
    }
    if (prefill && cont[0]) {
        char *at = NULL;
        for (char *p = strstr(text, cont); p; p = strstr(p + 1, cont)) at = p;
        if (at) at[strlen(cont)] = '\0';
    }
    // The model's text starts inside a reasoning block the prompt opened ("<think>\n").
    g->reasoning_open = text && mint_chat_prompt_opens_reasoning(g->h->format, text, strlen(text));
    return text;
}

// The prompt's tokens: a chat rendered with the template (special tokens parsed, as mint-run -cnv
// does), a completion's text (BOS added as the vocabulary asks) or its token ids as given.
static bool prompt_tokens(gen *g, int32_t **ids, int *n, char *msg, size_t cap) {
    const mint_model *m = sched_model(g->h->e);
    const serve_request *r = &g->req;
    if (r->prompt_ids) {
        for (int i = 0; i < r->n_prompt_ids; i++)
            if (r->prompt_ids[i] >= g->h->n_vocab) {
                snprintf(msg, cap, "token id %d is outside 0..%d", r->prompt_ids[i],
                         g->h->n_vocab - 1);
                return false;
            }
        *ids = malloc((size_t)r->n_prompt_ids * sizeof **ids);
        if (!*ids) return false;
        memcpy(*ids, r->prompt_ids, (size_t)r->n_prompt_ids * sizeof **ids);
        *n = r->n_prompt_ids;
        return true;
    }
    char *text = NULL;
    bool special = false, add_bos = true;
    if (r->msgs) {
        text = chat_prompt(g, msg, cap);
        if (!text) return false;
        mint_model_desc d;
        mint_model_describe(m, &d);
        const char *bos = d.bos >= 0 ? mint_token_text(m, d.bos) : "";
        special = true;
        add_bos = strncmp(text, bos, strlen(bos)) != 0;
    } else {
        text = strdup(r->prompt);
    }
    if (!text) return false;
    const size_t len = strlen(text);
    size_t k = 0;
    mint_err err;
    bool ok = serve_tokenize(m, text, len, add_bos, special, ids, &k, &err) == MINT_OK;
    if (!ok) snprintf(msg, cap, "%s", err.msg);
    if (ok && !r->msgs && r->echo) {
        g->echo = text;
        g->echo_len = len;
        text = NULL;
    }
    free(text);
    *n = (int)k;
    return ok;
}

char *gen_chat_text(serve_http *h, const serve_call *r, char *msg, size_t cap) {
    gen g = {.h = h, .chat = true};
    const serve_defaults d = {.max_tokens_cap = h->cfg->max_tokens, .max_tokens = -1};
    const char *param;
    if (!serve_parse_request(r->body, r->len, SERVE_CHAT, &d, &g.req, msg, cap, &param))
        return NULL;
    char *text = chat_prompt(&g, msg, cap);
    serve_request_free(&g.req);
    return text;
}

bool gen_chat_tokens(serve_http *h, const serve_call *r, int32_t **ids, int *n, char *msg,
                     size_t cap) {
    gen g = {.h = h, .chat = true};
    const serve_defaults d = {.max_tokens_cap = h->cfg->max_tokens, .max_tokens = -1};
    const char *param;
    if (!serve_parse_request(r->body, r->len, SERVE_CHAT, &d, &g.req, msg, cap, &param))
        return false;
    const bool ok = prompt_tokens(&g, ids, n, msg, cap);
    serve_request_free(&g.req);
    return ok;
}

// Whether a /v1/next body is a chat: a JSON object with a "messages" member (the text
// "messages" inside a prompt or a stop string does not make one).
static bool has_messages(const char *body, size_t len) {
    json_tokener *tok = json_tokener_new();
    json_object *o = tok && len ? json_tokener_parse_ex(tok, body, (int)len) : NULL;
    const bool chat = o && json_object_is_type(o, json_type_object) &&
                      json_object_object_get_ex(o, "messages", NULL);
    json_object_put(o);
    json_tokener_free(tok);
    return chat;
}

enum MHD_Result gen_request(serve_http *h, struct MHD_Connection *c, const serve_call *r,
                            gen_kind kind) {
    if (atomic_load(&h->stopping))
        return reply_error(c, 503, "server_error", NULL, "the server is shutting down");
    const char *body = r->body;
    size_t len = r->len;
    char *translated = NULL; // Anthropic's or a Responses body as an OpenAI chat
    if (kind == GEN_ANTHROPIC || kind == GEN_RESPONSES) {
        char why[600];
        int status = 400;
        if (!(kind == GEN_ANTHROPIC ? anthropic_to_openai : responses_to_openai)(
                body, len, &translated, why, sizeof why, &status))
            return reply_error(c, (unsigned)status,
                               status == 400 ? "invalid_request_error" : "api_error", NULL, "%s",
                               why);
        body = translated;
        len = strlen(translated);
    }
    gen *g = calloc(1, sizeof *g);
    if (!g) {
        free(translated);
        return MHD_NO;
    }
    g->h = h;
    g->fd = -1;
    g->kind = kind;
    g->chat = kind == GEN_CHAT;
    g->peek = kind == GEN_NEXT;
    g->native = kind == GEN_NATIVE;
    g->anthropic = kind == GEN_ANTHROPIC;
    g->responses = kind == GEN_RESPONSES;
    g->chat = g->chat || g->anthropic || g->responses;
    // /v1/next takes either shape: messages (a chat) or a prompt.
    const bool as_chat = g->chat || (g->peek && has_messages(body, len));
    char msg[600];
    const char *param = NULL;
    const serve_config *cfg = h->cfg;
    const serve_defaults defaults = {
        .max_tokens_cap = cfg->max_tokens,
        .max_tokens = cfg->n_predict > 0 && cfg->n_predict < cfg->max_tokens ? cfg->n_predict : -1,
        .temperature = cfg->sampling.temp,
        .top_p = cfg->sampling.top_p,
        .top_k = cfg->sampling.top_k,
        .min_p = cfg->sampling.min_p,
        .repeat_penalty = cfg->sampling.repeat_penalty,
        .ignore_eos = cfg->ignore_eos};
    const serve_kind sk = g->native ? SERVE_NATIVE : as_chat ? SERVE_CHAT : SERVE_COMPLETION;
    const bool parsed =
        serve_parse_request(body, len, sk, &defaults, &g->req, msg, sizeof msg, &param);
    free(translated); // the request holds copies of what it needs
    if (!parsed) {
        free(g);
        return reply_error(c, 400, "invalid_request_error", param, "%s", msg);
    }
    g->stream = g->req.stream && !g->peek;
    g->req.verbose |= cfg->verbose; // llama-server's --verbose: every answer shows its prompt
    g->n = g->peek ? 1 : g->native ? g->req.n_prompts : g->req.n;
    // The prompts' tokens: one for every job, or one per job for /completion's prompt lists.
    const int n_arrays = g->native ? g->n : 1, n_ctx = cfg->n_ctx;
    int32_t *ids[SERVE_MAX_JOBS] = {0}, *bias_id = NULL;
    int n_ids[SERVE_MAX_JOBS] = {0}, n_bias = 0, too_long = -1;
    float *bias = NULL;
    const char *pparam = as_chat ? "messages" : "prompt";
    bool ok = true;
    for (int i = 0; i < n_arrays && ok; i++) {
        msg[0] = '\0';
        ok = g->native ? native_prompt_tokens(g, i, &ids[i], &n_ids[i], msg, sizeof msg)
                       : prompt_tokens(g, &ids[i], &n_ids[i], msg, sizeof msg);
        if (ok && n_ids[i] < 1) ok = false, snprintf(msg, sizeof msg, "the prompt is empty");
        if (!ok && !msg[0]) snprintf(msg, sizeof msg, "out of memory");
        if (ok && n_ids[i] >= n_ctx) ok = false, too_long = i;
    }
    if (ok && g->req.n_bias > 0) {
        ok = gen_resolve_bias(g, &bias_id, &bias, &n_bias, msg, sizeof msg);
        if (!ok) pparam = "logit_bias";
    }
    // What constrains the output (request_grammar.c), checked once here.
    req_grammar rg = {0};
    if (ok) ok = req_grammar_prepare(g, &rg, &pparam, msg, sizeof msg);
    if (!ok) {
        req_grammar_free(&rg);
        const int n_long = too_long >= 0 ? n_ids[too_long] : 0;
        for (int i = 0; i < n_arrays; i++) free(ids[i]);
        free(bias_id);
        free(bias);
        gen_free(g);
        if (too_long >= 0) return reply_exceed_context(c, pparam, n_long, n_ctx);
        return reply_error(c, 400, "invalid_request_error", pparam, "%s", msg);
    }
    const uint64_t id = atomic_fetch_add(&h->next_id, 1);
    snprintf(g->id, sizeof g->id, "%s-%llu", g->chat ? "chatcmpl" : "cmpl", (unsigned long long)id);
    g->created = (long)time(NULL);
    for (int i = 0; i < g->n; i++) {
        job *j = g->jobs[i] = job_new();
        if (!j) break;
        const int a = g->native ? i : 0;
        j->id = id;
        j->prompt = malloc((size_t)n_ids[a] * sizeof *ids[a]);
        if (j->prompt) memcpy(j->prompt, ids[a], (size_t)n_ids[a] * sizeof *ids[a]);
        j->n_prompt = n_ids[a];
        // Up to the request's limit (else the server's -n, else --max-tokens), within the room
        // the slot has after the prompt.
        int max_tokens = g->req.max_tokens < 0 ? cfg->max_tokens : g->req.max_tokens;
        if (max_tokens > n_ctx - n_ids[a]) max_tokens = n_ctx - n_ids[a];
        j->max_tokens = max_tokens;
        mint_sampler_params sp = mint_sampler_default_params();
        sp.temp = g->req.temperature;
        sp.top_k = g->req.top_k;
        sp.top_p = g->req.top_p;
        sp.min_p = g->req.min_p;
        sp.repeat_penalty = g->req.repeat_penalty;
        sp.repeat_last_n = cfg->sampling.repeat_last_n;
        const uint64_t seed = g->req.has_seed  ? g->req.seed
                              : cfg->seed >= 0 ? (uint64_t)cfg->seed
                                               : ((uint64_t)time(NULL) << 20) ^ id;
        sp.seed = g->native ? seed : seed + (uint64_t)i; // n choices differ; prompts need not
        j->sp = sp;
        for (int k = 0; k < g->req.n_stop; k++) j->stop[j->n_stop++] = strdup(g->req.stop[k]);
        j->top_logprobs = g->req.logprobs ? g->req.top_logprobs : 0;
        j->post_sampling = g->req.post_sampling_probs;
        j->peek = g->peek ? 64 : 0;
        j->progress = g->stream && g->req.return_progress && !g->anthropic;
        // id_slot pins a single job to a slot (llama-server wraps an id past the last slot).
        if (g->req.id_slot >= 0 && g->n == 1) j->want_slot = g->req.id_slot % cfg->parallel;
        j->deadline = j->t_created + cfg->timeout;
        // ignore_eos as llama-server has it: the end-of-generation tokens are banned (a bias of
        // -inf after the request's own), so they are never drawn.
        const int n_eog = g->req.ignore_eos ? h->n_eog : 0;
        j->ignore_eos = false;
        if (n_bias + n_eog > 0) {
            j->bias_id = malloc((size_t)(n_bias + n_eog) * sizeof *bias_id);
            j->bias = malloc((size_t)(n_bias + n_eog) * sizeof *bias);
            if (j->bias_id && j->bias) {
                if (n_bias) memcpy(j->bias_id, bias_id, (size_t)n_bias * sizeof *bias_id);
                if (n_bias) memcpy(j->bias, bias, (size_t)n_bias * sizeof *bias);
                for (int k = 0; k < n_eog; k++)
                    j->bias_id[n_bias + k] = h->eog[k], j->bias[n_bias + k] = -INFINITY;
                j->n_bias = n_bias + n_eog;
            }
        }
    }
    for (int i = 0; i < n_arrays; i++) free(ids[i]);
    free(bias_id);
    free(bias);
    const bool grammar_ok = req_grammar_attach(g, &rg);
    req_grammar_free(&rg);
    for (int i = 0; i < g->n; i++)
        if (!g->jobs[i] || !g->jobs[i]->prompt || !grammar_ok ||
            ((n_bias || (g->req.ignore_eos && h->n_eog)) && !g->jobs[i]->n_bias)) {
            gen_free(g);
            return reply_error(c, 500, "server_error", NULL, "out of memory");
        }
    if (!sched_submit(h->e, g->jobs, g->n)) {
        gen_free(g);
        return reply_busy(c);
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    g->fd = ci ? ci->connect_fd : -1;
    if (g->stream && g->anthropic) anthropic_stream_start(g);
    if (g->stream && g->responses) responses_stream_start(g);
    for (int i = 0; g->stream && g->chat && !g->anthropic && !g->responses && i < g->n; i++) {
        // OpenAI's first chunk: the role, no content yet (llama-server's too)
        json_object *o = gen_envelope(g, "chat.completion.chunk");
        json_object *ch = json_object_new_object(), *choices = json_object_new_array(),
                    *delta = json_object_new_object();
        json_object_object_add(delta, "role", json_object_new_string("assistant"));
        json_object_object_add(delta, "content", NULL);
        json_object_object_add(ch, "index", json_object_new_int(i));
        json_object_object_add(ch, "delta", delta);
        json_object_object_add(ch, "logprobs", NULL);
        json_object_object_add(ch, "finish_reason", NULL);
        json_object_array_add(choices, ch);
        json_object_object_add(o, "choices", choices);
        reply_sse_event(&g->sse, o);
    }
    if (g->stream) return reply_stream(c, stream_reader, g, gen_free);
    // One body: this connection's thread waits for the jobs (watching the client), then answers.
    for (;;) {
        int open = -1; // a job still running
        for (int i = 0; i < g->n && open < 0; i++) {
            pthread_mutex_lock(&g->jobs[i]->mu);
            if (g->jobs[i]->state != JOB_DONE) open = i;
            pthread_mutex_unlock(&g->jobs[i]->mu);
        }
        if (open < 0) break;
        if (client_gone(g)) {
            gen_free(g);
            return MHD_NO; // nobody to answer
        }
        wait_job(g->jobs[open]);
    }
    unsigned status;
    json_object *o = whole(g, &status);
    gen_free(g);
    return reply_json(c, status, o);
}

enum MHD_Result handle_completions(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    return gen_request(h, c, r, GEN_COMPLETION);
}

enum MHD_Result handle_chat(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    return gen_request(h, c, r, GEN_CHAT);
}

enum MHD_Result gen_input_tokens(serve_http *h, struct MHD_Connection *c, const serve_call *r,
                                 gen_translate translate, const char *type_5xx, const char *param) {
    char *body = NULL, msg[600];
    int status = 400;
    if (translate && !translate(r->body, r->len, &body, msg, sizeof msg, &status))
        return reply_error(c, (unsigned)status, status == 400 ? "invalid_request_error" : type_5xx,
                           NULL, "%s", msg);
    const serve_call chat = {r->method, r->url, body ? body : r->body,
                             body ? strlen(body) : r->len};
    int32_t *ids = NULL;
    int n = 0;
    const bool ok = gen_chat_tokens(h, &chat, &ids, &n, msg, sizeof msg);
    free(body);
    free(ids);
    if (!ok) return reply_error(c, 400, "invalid_request_error", param, "%s", msg);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "input_tokens", json_object_new_int(n));
    return reply_json(c, 200, o);
}

enum MHD_Result handle_input_tokens(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    return gen_input_tokens(h, c, r, NULL, NULL, "messages");
}

enum MHD_Result handle_next(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    return gen_request(h, c, r, GEN_NEXT);
}

enum MHD_Result handle_completion_native(serve_http *h, struct MHD_Connection *c,
                                         const serve_call *r) {
    return gen_request(h, c, r, GEN_NATIVE);
}

enum MHD_Result handle_messages(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    return gen_request(h, c, r, GEN_ANTHROPIC);
}

enum MHD_Result handle_count_tokens(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    return gen_input_tokens(h, c, r, anthropic_to_openai, "api_error", "messages");
}
