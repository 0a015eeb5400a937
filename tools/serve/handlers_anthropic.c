// handlers_anthropic.c - Anthropic's Messages API: POST /v1/messages answered in its shape
// ({type: "message", content: [{type: "text", text}], stop_reason, usage}) and its stream
// (message_start, content_block_start, content_block_delta..., content_block_stop,
// message_delta, message_stop, each an SSE event named by its type), and
// /v1/messages/count_tokens. The request becomes an OpenAI chat (tools/common/anthropic.c) and
// runs through handlers_gen.c's flow; this file only translates the answers.
#include "anthropic.h"
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *stop_reason(const job *j) {
    if (strcmp(j->finish, "stop") != 0) return "max_tokens";
    return j->stop_word >= 0 ? "stop_sequence" : "end_turn";
}

static json_object *usage(const job *j, bool with_output) {
    json_object *u = json_object_new_object();
    json_object_object_add(u, "input_tokens", json_object_new_int(j->n_prompt - j->n_reused));
    json_object_object_add(u, "cache_creation_input_tokens", json_object_new_int(0));
    json_object_object_add(u, "cache_read_input_tokens", json_object_new_int(j->n_reused));
    json_object_object_add(u, "output_tokens", json_object_new_int(with_output ? j->n_tok : 0));
    return u;
}

static json_object *message(const gen *g, const job *j, json_object *content) {
    json_object *o = json_object_new_object();
    char id[64];
    snprintf(id, sizeof id, "msg_%s", g->id);
    json_object_object_add(o, "id", json_object_new_string(id));
    json_object_object_add(o, "type", json_object_new_string("message"));
    json_object_object_add(o, "role", json_object_new_string("assistant"));
    json_object_object_add(o, "model", json_object_new_string(g->h->cfg->model_name));
    json_object_object_add(o, "content", content);
    return o;
}

json_object *anthropic_result(const gen *g) {
    const job *j = g->jobs[0];
    json_object *content = json_object_new_array(), *b = json_object_new_object();
    json_object_object_add(b, "type", json_object_new_string("text"));
    json_object_object_add(b, "text", reply_utf8_string(j->text, j->text_len));
    json_object_array_add(content, b);
    json_object *o = message(g, j, content);
    json_object_object_add(o, "stop_reason", json_object_new_string(stop_reason(j)));
    json_object_object_add(o, "stop_sequence",
                           j->stop_word >= 0 ? json_object_new_string(j->stop[j->stop_word])
                                             : NULL);
    json_object_object_add(o, "usage", usage(j, true));
    return o;
}

// An event "event: TYPE" + "data: {...}" (o consumed; its "type" is TYPE).
static void event(gen *g, const char *type, json_object *o) {
    char head[64];
    const int n = snprintf(head, sizeof head, "event: %s\n", type);
    reply_sse_raw(&g->sse, head, (size_t)n);
    reply_sse_event(&g->sse, o);
}

static json_object *typed(const char *type) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "type", json_object_new_string(type));
    return o;
}

void anthropic_stream_start(gen *g) {
    const job *j = g->jobs[0];
    json_object *o = typed("message_start"), *m = message(g, j, json_object_new_array());
    json_object_object_add(m, "stop_reason", NULL);
    json_object_object_add(m, "stop_sequence", NULL);
    // The prompt's tokens are known; how many come from the cache is not until a slot takes it.
    json_object *u = json_object_new_object();
    json_object_object_add(u, "input_tokens", json_object_new_int(j->n_prompt));
    json_object_object_add(u, "output_tokens", json_object_new_int(0));
    json_object_object_add(m, "usage", u);
    json_object_object_add(o, "message", m);
    event(g, "message_start", o);
    o = typed("content_block_start");
    json_object *b = json_object_new_object();
    json_object_object_add(b, "type", json_object_new_string("text"));
    json_object_object_add(b, "text", json_object_new_string(""));
    json_object_object_add(o, "index", json_object_new_int(0));
    json_object_object_add(o, "content_block", b);
    event(g, "content_block_start", o);
}

void anthropic_stream_text(gen *g, size_t from, size_t to) {
    const job *j = g->jobs[0];
    json_object *o = typed("content_block_delta"), *d = json_object_new_object();
    json_object_object_add(o, "index", json_object_new_int(0));
    json_object_object_add(d, "type", json_object_new_string("text_delta"));
    json_object_object_add(d, "text", reply_utf8_string(j->text + from, to - from));
    json_object_object_add(o, "delta", d);
    event(g, "content_block_delta", o);
}

void anthropic_stream_end(gen *g) {
    const job *j = g->jobs[0];
    json_object *o = typed("content_block_stop");
    json_object_object_add(o, "index", json_object_new_int(0));
    event(g, "content_block_stop", o);
    o = typed("message_delta");
    json_object *d = json_object_new_object();
    json_object_object_add(d, "stop_reason", json_object_new_string(stop_reason(j)));
    json_object_object_add(d, "stop_sequence",
                           j->stop_word >= 0 ? json_object_new_string(j->stop[j->stop_word])
                                             : NULL);
    json_object_object_add(o, "delta", d);
    json_object_object_add(o, "usage", usage(j, true));
    event(g, "message_delta", o);
    event(g, "message_stop", typed("message_stop"));
}

enum MHD_Result handle_messages(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    return gen_request(h, c, r, GEN_ANTHROPIC);
}

enum MHD_Result handle_count_tokens(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    char *body = NULL, msg[600];
    int status = 400;
    if (!anthropic_to_openai(r->body, r->len, &body, msg, sizeof msg, &status))
        return reply_error(c, (unsigned)status,
                           status == 400 ? "invalid_request_error" : "api_error", NULL, "%s", msg);
    const serve_call chat = {r->method, r->url, body, strlen(body)};
    int32_t *ids = NULL;
    int n = 0;
    const bool ok = gen_chat_tokens(h, &chat, &ids, &n, msg, sizeof msg);
    free(body);
    free(ids);
    if (!ok) return reply_error(c, 400, "invalid_request_error", "messages", "%s", msg);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "input_tokens", json_object_new_int(n));
    return reply_json(c, 200, o);
}
