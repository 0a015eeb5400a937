// handlers_responses.c - OpenAI's Responses API: POST /v1/responses (and /responses) answered in
// its shape ({object: "response", status, output: [reasoning item, message item with output_text,
// function_call items], usage}) and its stream (response.created, response.in_progress, then per
// item response.output_item.added, response.content_part.added, response.output_text.delta... or
// response.reasoning_text.delta... or response.function_call_arguments.delta..., and at the end
// response.output_text.done, response.content_part.done, response.output_item.done for each item
// and response.completed: llama-server's events in its order, each an SSE event named by its
// type, no [DONE]). The request becomes an OpenAI chat (tools/common/responses.c) and runs
// through handlers_gen.c's flow (handlers_responses_http.c has the endpoints); this file only
// translates the answers.
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// An id of this request's: prefix and the request's number ("resp_7", "msg_7").
static json_object *rid(const gen *g, const char *prefix) {
    const char *dash = strchr(g->id, '-');
    char id[96];
    snprintf(id, sizeof id, "%s%s", prefix, dash ? dash + 1 : g->id);
    return json_object_new_string(id);
}

static json_object *str(const char *s) {
    return json_object_new_string(s);
}

static json_object *usage(const job *j) {
    json_object *u = json_object_new_object(), *d = json_object_new_object();
    json_object_object_add(u, "input_tokens", json_object_new_int(j->n_prompt));
    json_object_object_add(u, "output_tokens", json_object_new_int(j->n_tok));
    json_object_object_add(u, "total_tokens", json_object_new_int(j->n_prompt + j->n_tok));
    json_object_object_add(d, "cached_tokens", json_object_new_int(j->n_reused));
    json_object_object_add(u, "input_tokens_details", d);
    return u;
}

// The answer's message as chat has it (content, reasoning_content, tool_calls): parsed by the
// template's format when tools or reasoning are on, else the text as it is.
static json_object *chat_message(const gen *g) {
    const job *j = g->jobs[0];
    json_object *m = json_object_new_object();
    if (tools_active(g))
        tools_message(g, j, m);
    else
        json_object_object_add(m, "content", reply_utf8_string(j->text, j->text_len));
    return m;
}

static const char *member(json_object *o, const char *key) {
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : "";
}

static json_object *reasoning_item(const gen *g, const char *text, const char *status) {
    json_object *it = json_object_new_object(), *content = json_object_new_array();
    json_object_object_add(it, "id", rid(g, "rs_"));
    json_object_object_add(it, "type", str("reasoning"));
    json_object_object_add(it, "summary", json_object_new_array());
    if (text) {
        json_object *p = json_object_new_object();
        json_object_object_add(p, "type", str("reasoning_text"));
        json_object_object_add(p, "text", str(text));
        json_object_array_add(content, p);
    }
    json_object_object_add(it, "content", content);
    json_object_object_add(it, "encrypted_content", str(""));
    json_object_object_add(it, "status", str(status));
    return it;
}

static json_object *text_part(const char *text) {
    json_object *p = json_object_new_object();
    json_object_object_add(p, "type", str("output_text"));
    json_object_object_add(p, "annotations", json_object_new_array());
    json_object_object_add(p, "logprobs", json_object_new_array());
    json_object_object_add(p, "text", str(text));
    return p;
}

static json_object *message_item(const gen *g, json_object *content, const char *status) {
    json_object *it = json_object_new_object();
    json_object_object_add(it, "id", rid(g, "msg_"));
    json_object_object_add(it, "type", str("message"));
    json_object_object_add(it, "role", str("assistant"));
    json_object_object_add(it, "status", str(status));
    json_object_object_add(it, "content", content);
    return it;
}

// A function_call item: its id "fc_" + the call's id, which is its call_id.
static json_object *call_item(const char *id, const char *name, const char *args,
                              const char *status) {
    json_object *it = json_object_new_object();
    char fc[128];
    snprintf(fc, sizeof fc, "fc_%s", id);
    json_object_object_add(it, "id", str(fc));
    json_object_object_add(it, "type", str("function_call"));
    json_object_object_add(it, "status", str(status));
    json_object_object_add(it, "arguments", str(args));
    json_object_object_add(it, "call_id", str(id));
    json_object_object_add(it, "name", str(name));
    return it;
}

// The output items of the chat message m: reasoning, the message, the calls; with each its
// output_item.done event (and the text's done events) when g streams.
static json_object *output(gen *g, json_object *m, bool events);

json_object *responses_result(gen *g) {
    const job *j = g->jobs[0];
    json_object *m = chat_message(g), *o = json_object_new_object();
    json_object_object_add(o, "id", rid(g, "resp_"));
    json_object_object_add(o, "object", str("response"));
    json_object_object_add(o, "created_at", json_object_new_int64(g->created));
    json_object_object_add(o, "completed_at", json_object_new_int64(g->created));
    json_object_object_add(o, "status", str("completed"));
    json_object_object_add(o, "model", str(g->h->cfg->model_name));
    json_object_object_add(o, "output", output(g, m, false));
    json_object_object_add(o, "usage", usage(j));
    json_object_put(m);
    return o;
}

// ---------------------------------------------------------------------------------------------
// The stream

// An event "event: TYPE" + "data: {...}" (o consumed; its "type" is TYPE).
static void event(gen *g, json_object *o) {
    json_object *t;
    json_object_object_get_ex(o, "type", &t);
    char head[96];
    const int n = snprintf(head, sizeof head, "event: %s\n", json_object_get_string(t));
    reply_sse_raw(&g->sse, head, (size_t)n);
    reply_sse_event(&g->sse, o);
}

static json_object *typed(const char *type) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "type", str(type));
    return o;
}

// {type, response: {id, object, status: "in_progress"}}
static json_object *progress(const gen *g, const char *type) {
    json_object *o = typed(type), *r = json_object_new_object();
    json_object_object_add(r, "id", rid(g, "resp_"));
    json_object_object_add(r, "object", str("response"));
    json_object_object_add(r, "status", str("in_progress"));
    json_object_object_add(o, "response", r);
    return o;
}

void responses_stream_start(gen *g) {
    event(g, progress(g, "response.created"));
    event(g, progress(g, "response.in_progress"));
}

json_object *responses_progress(gen *g) {
    reply_sse_raw(&g->sse, "event: response.in_progress\n", 28);
    return progress(g, "response.in_progress");
}

static void added(gen *g, json_object *item) {
    json_object *o = typed("response.output_item.added");
    json_object_object_add(o, "item", item);
    event(g, o);
}

// A delta event of the given type for item_id (timings_per_token: with the job's timings).
static void delta(gen *g, const char *type, json_object *item_id, const char *s, size_t n) {
    json_object *o = typed(type);
    json_object_object_add(o, "item_id", item_id);
    json_object_object_add(o, "delta", reply_utf8_string(s, n));
    if (g->req.timings_per_token) json_object_object_add(o, "timings", gen_timings(g->jobs[0]));
    event(g, o);
}

static void stream_delta(gen *g, const mint_chat_delta *d) {
    if (d->kind == MINT_DELTA_REASONING && d->len > 0) {
        if (!g->resp_reasoning) added(g, reasoning_item(g, NULL, "in_progress"));
        g->resp_reasoning = true;
        delta(g, "response.reasoning_text.delta", rid(g, "rs_"), d->text, d->len);
    } else if (d->kind == MINT_DELTA_CONTENT && d->len > 0) {
        if (!g->resp_text) {
            added(g, message_item(g, json_object_new_array(), "in_progress"));
            json_object *o = typed("response.content_part.added"), *p = typed("output_text");
            json_object_object_add(o, "item_id", rid(g, "msg_"));
            json_object_object_add(p, "text", str(""));
            json_object_object_add(o, "part", p);
            event(g, o);
        }
        g->resp_text = true;
        delta(g, "response.output_text.delta", rid(g, "msg_"), d->text, d->len);
    } else if (d->kind == MINT_DELTA_TOOL_CALL) {
        if (d->name) {
            if (d->id && d->id[0])
                snprintf(g->resp_call, sizeof g->resp_call, "%s", d->id);
            else
                snprintf(g->resp_call, sizeof g->resp_call, "call_%s_%zu", g->id, d->tool_index);
            added(g, call_item(g->resp_call, d->name, "", "in_progress"));
        }
        char fc[128];
        snprintf(fc, sizeof fc, "fc_%s", g->resp_call);
        if (d->len > 0)
            delta(g, "response.function_call_arguments.delta", str(fc), d->text, d->len);
    }
}

void responses_stream_text(gen *g, size_t from, size_t to) {
    const mint_chat_delta d = {
        .kind = MINT_DELTA_CONTENT, .text = g->jobs[0]->text + from, .len = to - from};
    stream_delta(g, &d);
}

void responses_stream_parsed(gen *g, int i, size_t vis, bool done) {
    mint_chat_delta d[2 + 64];
    const size_t n = tools_diff(g, i, vis, done, d, 2 + 64);
    for (size_t k = 0; k < n; k++) stream_delta(g, &d[k]);
}

static void item_done(gen *g, json_object *item) {
    json_object *o = typed("response.output_item.done");
    json_object_object_add(o, "item", json_object_get(item));
    event(g, o);
}

static json_object *output(gen *g, json_object *m, bool events) {
    json_object *list = json_object_new_array(), *calls;
    const char *reasoning = member(m, "reasoning_content"), *content = member(m, "content");
    if (reasoning[0]) {
        json_object *it = reasoning_item(g, reasoning, "completed");
        if (events) item_done(g, it);
        json_object_array_add(list, it);
    }
    if (content[0]) {
        if (events) {
            json_object *o = typed("response.output_text.done");
            json_object_object_add(o, "item_id", rid(g, "msg_"));
            json_object_object_add(o, "text", str(content));
            event(g, o);
            o = typed("response.content_part.done");
            json_object_object_add(o, "item_id", rid(g, "msg_"));
            json_object_object_add(o, "part", text_part(content));
            event(g, o);
        }
        json_object *parts = json_object_new_array();
        json_object_array_add(parts, text_part(content));
        json_object *it = message_item(g, parts, "completed");
        if (events) item_done(g, it);
        json_object_array_add(list, it);
    }
    for (size_t k = 0;
         json_object_object_get_ex(m, "tool_calls", &calls) && k < json_object_array_length(calls);
         k++) {
        json_object *c = json_object_array_get_idx(calls, k), *fn;
        json_object_object_get_ex(c, "function", &fn);
        json_object *it =
            call_item(member(c, "id"), member(fn, "name"), member(fn, "arguments"), "completed");
        if (events) item_done(g, it);
        json_object_array_add(list, it);
    }
    return list;
}

void responses_stream_end(gen *g) {
    const job *j = g->jobs[0];
    json_object *m = chat_message(g), *o = typed("response.completed"),
                *r = json_object_new_object();
    json_object *out = output(g, m, true);
    json_object_put(m);
    json_object_object_add(r, "id", rid(g, "resp_"));
    json_object_object_add(r, "object", str("response"));
    json_object_object_add(r, "created_at", json_object_new_int64(g->created));
    json_object_object_add(r, "status", str("completed"));
    json_object_object_add(r, "model", str(g->h->cfg->model_name));
    json_object_object_add(r, "output", out);
    json_object_object_add(r, "usage", usage(j));
    json_object_object_add(o, "response", r);
    json_object_object_add(o, "timings", gen_timings(j));
    event(g, o);
}
