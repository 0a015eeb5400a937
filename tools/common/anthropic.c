// anthropic.c - see anthropic.h.
#include "anthropic.h"
#include "json_body.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool fail(char *msg, size_t cap, int *status, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static bool fail(char *msg, size_t cap, int *status, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
    *status = code;
    return false;
}

static bool is_type(json_object *block, const char *type) {
    json_object *t;
    return json_object_is_type(block, json_type_object) &&
           json_object_object_get_ex(block, "type", &t) &&
           json_object_is_type(t, json_type_string) && !strcmp(json_object_get_string(t), type);
}

#define IMAGES_REFUSED                                                                             \
    "image input is not supported: this model has no vision projector (mint-serve takes text)"

// Text of a content value: a string, or blocks of which the text ones are joined with "\n" (an
// image anywhere is refused; other blocks are for the caller).
static bool text_of(json_object *c, json_object **out, char *msg, size_t cap, int *status) {
    if (json_object_is_type(c, json_type_string)) {
        *out = json_object_get(c);
        return true;
    }
    if (!json_object_is_type(c, json_type_array))
        return fail(msg, cap, status, 400, "a message's content must be a string or blocks");
    size_t total = 0;
    for (size_t i = 0; i < json_object_array_length(c); i++) {
        json_object *b = json_object_array_get_idx(c, i), *t;
        if (is_type(b, "image") || is_type(b, "document"))
            return fail(msg, cap, status, 500, IMAGES_REFUSED);
        if (is_type(b, "text") && json_object_object_get_ex(b, "text", &t) &&
            json_object_is_type(t, json_type_string))
            total += (size_t)json_object_get_string_len(t) + 1;
    }
    char *s = malloc(total + 1);
    if (!s) return fail(msg, cap, status, 500, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < json_object_array_length(c); i++) {
        json_object *b = json_object_array_get_idx(c, i), *t;
        if (!is_type(b, "text") || !json_object_object_get_ex(b, "text", &t) ||
            !json_object_is_type(t, json_type_string))
            continue;
        if (k) s[k++] = '\n';
        memcpy(s + k, json_object_get_string(t), (size_t)json_object_get_string_len(t));
        k += (size_t)json_object_get_string_len(t);
    }
    *out = json_object_new_string_len(s, (int)k);
    free(s);
    return true;
}

// One Anthropic message to OpenAI messages appended to list: text, tool_use blocks (an
// assistant's tool_calls), tool_result blocks (one "tool" message each).
static bool message(json_object *m, json_object *list, char *msg, size_t cap, int *status) {
    json_object *role, *content;
    if (!json_object_is_type(m, json_type_object) || !json_object_object_get_ex(m, "role", &role) ||
        !json_object_is_type(role, json_type_string))
        return fail(msg, cap, status, 400, "every message needs a 'role'");
    const char *r = json_object_get_string(role);
    if (strcmp(r, "user") && strcmp(r, "assistant"))
        return fail(msg, cap, status, 400, "a message's role must be user or assistant");
    if (!json_object_object_get_ex(m, "content", &content) || !content)
        return fail(msg, cap, status, 400, "a message has no 'content'");
    json_object *calls = json_object_new_array();
    if (json_object_is_type(content, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(content); i++) {
            json_object *b = json_object_array_get_idx(content, i), *v;
            if (is_type(b, "tool_result")) {
                json_object *t = json_object_new_object(), *text = NULL;
                json_object_object_add(t, "role", json_object_new_string("tool"));
                if (json_object_object_get_ex(b, "tool_use_id", &v))
                    json_object_object_add(t, "tool_call_id", json_object_get(v));
                json_object *c = NULL;
                json_object_object_get_ex(b, "content", &c);
                if (!c)
                    text = json_object_new_string("");
                else if (!text_of(c, &text, msg, cap, status)) {
                    json_object_put(t);
                    json_object_put(calls);
                    return false;
                }
                json_object_object_add(t, "content", text);
                json_object_array_add(list, t);
            } else if (is_type(b, "tool_use")) {
                json_object *call = json_object_new_object(), *fn = json_object_new_object();
                if (json_object_object_get_ex(b, "id", &v))
                    json_object_object_add(call, "id", json_object_get(v));
                json_object_object_add(call, "type", json_object_new_string("function"));
                if (json_object_object_get_ex(b, "name", &v))
                    json_object_object_add(fn, "name", json_object_get(v));
                json_object_object_get_ex(b, "input", &v);
                json_object_object_add(
                    fn, "arguments",
                    json_object_new_string(
                        v ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN) : "{}"));
                json_object_object_add(call, "function", fn);
                json_object_array_add(calls, call);
            }
        }
    }
    json_object *text = NULL;
    if (!text_of(content, &text, msg, cap, status)) {
        json_object_put(calls);
        return false;
    }
    // A user turn made only of tool results has no text of its own: nothing more to add.
    if (json_object_is_type(content, json_type_array) && json_object_get_string_len(text) == 0 &&
        json_object_array_length(calls) == 0) {
        json_object_put(text);
        json_object_put(calls);
        return true;
    }
    json_object *o = json_object_new_object();
    json_object_object_add(o, "role", json_object_new_string(r));
    json_object_object_add(o, "content", text);
    if (json_object_array_length(calls) > 0)
        json_object_object_add(o, "tool_calls", calls);
    else
        json_object_put(calls);
    json_object_array_add(list, o);
    return true;
}

bool anthropic_to_openai(const char *body, size_t len, char **out, char *msg, size_t cap,
                         int *status) {
    *out = NULL;
    json_object *req = json_body_object(body, len);
    if (!req) return fail(msg, cap, status, 400, "the body must be one JSON object");
    json_object *o = json_object_new_object(), *msgs = json_object_new_array(), *v;
    bool ok = true;
    if (json_object_object_get_ex(req, "system", &v) && v) {
        json_object *text = NULL;
        ok = text_of(v, &text, msg, cap, status);
        if (ok) {
            json_object *s = json_object_new_object();
            json_object_object_add(s, "role", json_object_new_string("system"));
            json_object_object_add(s, "content", text);
            json_object_array_add(msgs, s);
        }
    }
    json_object *list = NULL;
    if (ok && (!json_object_object_get_ex(req, "messages", &list) ||
               !json_object_is_type(list, json_type_array)))
        ok = fail(msg, cap, status, 400, "'messages' must be a list");
    for (size_t i = 0; ok && i < json_object_array_length(list); i++)
        ok = message(json_object_array_get_idx(list, i), msgs, msg, cap, status);
    json_object_object_add(o, "messages", msgs);
    // The fields with the same meaning, renamed where Anthropic names them otherwise.
    static const char *const same[][2] = {
        {"model", "model"},  {"max_tokens", "max_tokens"}, {"temperature", "temperature"},
        {"top_p", "top_p"},  {"top_k", "top_k"},           {"stop_sequences", "stop"},
        {"stream", "stream"}};
    for (size_t i = 0; ok && i < sizeof same / sizeof *same; i++)
        if (json_object_object_get_ex(req, same[i][0], &v) && v)
            json_object_object_add(o, same[i][1], json_object_get(v));
    if (ok && json_object_object_get_ex(req, "tools", &v) &&
        json_object_is_type(v, json_type_array)) {
        json_object *tools = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *t = json_object_array_get_idx(v, i), *x, *fn = json_object_new_object();
            if (json_object_object_get_ex(t, "name", &x))
                json_object_object_add(fn, "name", json_object_get(x));
            if (json_object_object_get_ex(t, "description", &x))
                json_object_object_add(fn, "description", json_object_get(x));
            if (json_object_object_get_ex(t, "input_schema", &x))
                json_object_object_add(fn, "parameters", json_object_get(x));
            json_object *w = json_object_new_object();
            json_object_object_add(w, "type", json_object_new_string("function"));
            json_object_object_add(w, "function", fn);
            json_object_array_add(tools, w);
        }
        json_object_object_add(o, "tools", tools);
    }
    if (ok && json_object_object_get_ex(req, "tool_choice", &v) &&
        json_object_is_type(v, json_type_object)) {
        json_object *type, *name;
        const char *t =
            json_object_object_get_ex(v, "type", &type) ? json_object_get_string(type) : "auto";
        if (!strcmp(t, "any"))
            json_object_object_add(o, "tool_choice", json_object_new_string("required"));
        else if (!strcmp(t, "none") || !strcmp(t, "auto"))
            json_object_object_add(o, "tool_choice", json_object_new_string(t));
        else if (!strcmp(t, "tool") && json_object_object_get_ex(v, "name", &name)) {
            json_object *fn = json_object_new_object(), *c = json_object_new_object();
            json_object_object_add(fn, "name", json_object_get(name));
            json_object_object_add(c, "type", json_object_new_string("function"));
            json_object_object_add(c, "function", fn);
            json_object_object_add(o, "tool_choice", c);
        }
    }
    if (ok) *out = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    if (ok && !*out) ok = fail(msg, cap, status, 500, "out of memory");
    json_object_put(o);
    json_object_put(req);
    return ok;
}
