// handlers_tools.c - tool calls and reasoning in the chat endpoint, as llama-server does them with
// --jinja: the request's tools go through the model's own template (handlers_gen.c renders with
// mint_chat_apply_ex), the model's text is parsed back by its template's format
// (mint_chat_parse: content, reasoning_content, tool_calls), streamed as deltas of successive
// partial parses (mint_chat_diff), and tool_choice "required" or a named function is enforced
// with a grammar for the formats whose calls are JSON (llama.cpp's schema-to-grammar of
// {"name", "arguments"} under the format's opening and closing text).
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *tools_kwargs(const char *server, const char *request) {
    if (!server && !request) return NULL;
    json_object *a = server ? json_tokener_parse(server) : json_object_new_object();
    json_object *b = request ? json_tokener_parse(request) : NULL;
    if (!a || !json_object_is_type(a, json_type_object)) {
        json_object_put(a);
        a = json_object_new_object();
    }
    if (b && json_object_is_type(b, json_type_object)) { // the request's win
        json_object_object_foreach(b, k, v) json_object_object_add(a, k, json_object_get(v));
    }
    char *out = strdup(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN));
    json_object_put(a);
    json_object_put(b);
    return out;
}

bool tools_active(const gen *g) {
    const serve_request *r = &g->req;
    if (!g->chat || g->anthropic || g->peek) return false;
    const bool calls = r->tools && r->tool_choice != SERVE_TOOLS_NONE;
    const bool reasons = g->h->cfg->reasoning_format != MINT_REASONING_FORMAT_NONE &&
                         (g->reasoning_open || g->h->reasons);
    return calls || reasons;
}

static mint_chat_parse_opts parse_opts(const gen *g) {
    mint_chat_parse_opts o = mint_chat_default_parse_opts();
    o.reasoning_format = (mint_reasoning_format)g->h->cfg->reasoning_format;
    o.reasoning_open = g->reasoning_open;
    o.parse_tools = g->req.tools && g->req.tool_choice != SERVE_TOOLS_NONE;
    o.tools = g->req.tools;
    return o;
}

// A call's id: the model's, else one made from the request's id (llama-server makes random ones).
static json_object *call_json(const gen *g, size_t k, const mint_chat_tool_call *c) {
    json_object *o = json_object_new_object(), *fn = json_object_new_object();
    char id[96];
    if (c->id && c->id[0])
        snprintf(id, sizeof id, "%s", c->id);
    else
        snprintf(id, sizeof id, "call_%s_%zu", g->id, k);
    json_object_object_add(o, "id", json_object_new_string(id));
    json_object_object_add(o, "type", json_object_new_string("function"));
    json_object_object_add(fn, "name", json_object_new_string(c->name));
    json_object_object_add(fn, "arguments", json_object_new_string(c->arguments));
    json_object_object_add(o, "function", fn);
    return o;
}

bool tools_message(const gen *g, const job *j, json_object *msg) {
    mint_chat_parse_opts o = parse_opts(g);
    mint_chat_parsed p;
    mint_err err;
    if (mint_chat_parse(g->h->format, j->text, j->text_len, false, &o, &p, &err) != MINT_OK) {
        mint_chat_parsed_free(&p);
        json_object_object_add(msg, "content", reply_utf8_string(j->text, j->text_len));
        return false;
    }
    json_object_object_add(
        msg, "content",
        p.content_len || !p.n_tool_calls ? reply_utf8_string(p.content, p.content_len) : NULL);
    if (p.reasoning_len)
        json_object_object_add(msg, "reasoning_content",
                               reply_utf8_string(p.reasoning_content, p.reasoning_len));
    if (p.n_tool_calls) {
        json_object *calls = json_object_new_array();
        for (size_t k = 0; k < p.n_tool_calls; k++)
            json_object_array_add(calls, call_json(g, k, &p.tool_calls[k]));
        json_object_object_add(msg, "tool_calls", calls);
    }
    const bool called = p.n_tool_calls > 0;
    mint_chat_parsed_free(&p);
    return called;
}

// One delta chunk of choice i.
static void delta_chunk(gen *g, int i, const mint_chat_delta *d) {
    json_object *o = gen_envelope(g, "chat.completion.chunk"), *choices = json_object_new_array();
    json_object *ch = json_object_new_object(), *delta = json_object_new_object();
    json_object_object_add(ch, "index", json_object_new_int(i));
    if (d->kind == MINT_DELTA_CONTENT)
        json_object_object_add(delta, "content", reply_utf8_string(d->text, d->len));
    else if (d->kind == MINT_DELTA_REASONING)
        json_object_object_add(delta, "reasoning_content", reply_utf8_string(d->text, d->len));
    else {
        json_object *calls = json_object_new_array(), *c = json_object_new_object(),
                    *fn = json_object_new_object();
        json_object_object_add(c, "index", json_object_new_int((int)d->tool_index));
        if (d->name) {
            char id[96];
            if (d->id && d->id[0])
                snprintf(id, sizeof id, "%s", d->id);
            else
                snprintf(id, sizeof id, "call_%s_%zu", g->id, d->tool_index);
            json_object_object_add(c, "id", json_object_new_string(id));
            json_object_object_add(c, "type", json_object_new_string("function"));
            json_object_object_add(fn, "name", json_object_new_string(d->name));
        }
        json_object_object_add(fn, "arguments", reply_utf8_string(d->text, d->len));
        json_object_object_add(c, "function", fn);
        json_object_array_add(calls, c);
        json_object_object_add(delta, "tool_calls", calls);
    }
    json_object_object_add(ch, "delta", delta);
    json_object_object_add(ch, "logprobs", NULL);
    json_object_object_add(ch, "finish_reason", NULL);
    json_object_array_add(choices, ch);
    json_object_object_add(o, "choices", choices);
    reply_sse_event(&g->sse, o);
}

size_t tools_diff(gen *g, int i, size_t vis, bool done, mint_chat_delta *d, size_t cap) {
    const job *j = g->jobs[i];
    mint_chat_parse_opts o = parse_opts(g);
    mint_chat_parsed next;
    mint_err err;
    if (mint_chat_parse(g->h->format, j->text, vis, !done, &o, &next, &err) != MINT_OK) {
        mint_chat_parsed_free(&next);
        return 0;
    }
    size_t n = 0;
    if (next.n_tool_calls + 2 <= cap && mint_chat_diff(g->parsed_ok[i] ? &g->parsed[i] : NULL,
                                                       &next, d, cap, &n, &err) == MINT_OK) {
        if (g->parsed_ok[i]) mint_chat_parsed_free(&g->parsed[i]);
        g->parsed[i] = next; // the deltas point into it
        g->parsed_ok[i] = true;
        return n;
    }
    mint_chat_parsed_free(&next); // the final parse took a malformed call back as text: the
                                  // deltas already sent stand
    return 0;
}

void tools_stream(gen *g, int i, size_t vis, bool done) {
    mint_chat_delta d[2 + 64];
    const size_t n = tools_diff(g, i, vis, done, d, 2 + 64);
    for (size_t k = 0; k < n; k++)
        if (d[k].len > 0 || d[k].name) delta_chunk(g, i, &d[k]);
}

bool tools_grammar(const gen *g, mint_chat_grammar *cg) {
    const serve_request *r = &g->req;
    memset(cg, 0, sizeof *cg);
    if (r->tool_choice == SERVE_TOOLS_NONE || !r->tools) return false;
    // The library's grammar for the template's format (every format with a call syntax):
    // a call and nothing else (but a reasoning block), each call's arguments held to its
    // function's JSON Schema.
    char named[512];
    if (r->tool_name) {
        json_object *name = json_object_new_string(r->tool_name);
        snprintf(named, sizeof named, "{\"type\":\"function\",\"function\":{\"name\":%s}}",
                 json_object_to_json_string(name));
        json_object_put(name);
    }
    mint_chat_grammar_opts o = {.tools = r->tools,
                                .tool_choice = r->tool_name                             ? named
                                               : r->tool_choice == SERVE_TOOLS_REQUIRED ? "required"
                                                                                        : "auto",
                                .parallel = r->parallel_tool_calls,
                                .reasoning = g->h->reasons,
                                .reasoning_open = g->reasoning_open};
    mint_err err;
    if (mint_chat_tool_grammar(g->h->format, &o, cg, &err) == MINT_OK && cg->gbnf) return true;
    mint_chat_grammar_free(cg); // a format without a call syntax: nothing to enforce
    memset(cg, 0, sizeof *cg);
    return false;
}
