// responses.c - see responses.h.
#include "responses.h"
#include "json_body.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdint.h>
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

// Member key of o when it is a string (NULL otherwise, o not an object included).
static json_object *str_member(json_object *o, const char *key) {
    json_object *v;
    return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) &&
                   json_object_is_type(v, json_type_string)
               ? v
               : NULL;
}

static bool str_is(json_object *o, const char *key, const char *want) {
    json_object *v = str_member(o, key);
    return v && !strcmp(json_object_get_string(v), want);
}

// One chat text part {type: "text", text}.
static json_object *text_part(json_object *text) {
    json_object *p = json_object_new_object();
    json_object_object_add(p, "type", json_object_new_string("text"));
    json_object_object_add(p, "text", json_object_get(text));
    return p;
}

#define IMAGES_REFUSED                                                                             \
    "image input is not supported: this model has no vision projector (mint-serve takes text)"

// A message item's content (a string, or parts) as chat text parts appended to out: input_text,
// and in an assistant's message output_text and refusal too.
static bool parts(json_object *c, bool assistant, size_t k, json_object *out, char *msg, size_t cap,
                  int *status) {
    if (json_object_is_type(c, json_type_string)) {
        json_object_array_add(out, text_part(c));
        return true;
    }
    if (!json_object_is_type(c, json_type_array))
        return fail(msg, cap, status, 400,
                    "input item %zu: 'content' must be a string or a list of parts", k);
    for (size_t i = 0; i < json_object_array_length(c); i++) {
        json_object *p = json_object_array_get_idx(c, i), *t = str_member(p, "type");
        const char *type = t ? json_object_get_string(t) : "";
        json_object *text = str_member(p, "text");
        if (!strcmp(type, "input_image")) return fail(msg, cap, status, 500, IMAGES_REFUSED);
        if (!strcmp(type, "input_file") || !strcmp(type, "input_audio"))
            return fail(msg, cap, status, 400, "input item %zu: '%s' is not supported", k, type);
        if (assistant && !strcmp(type, "refusal")) text = str_member(p, "refusal");
        const bool known =
            !strcmp(type, "input_text") ||
            (assistant && (!strcmp(type, "output_text") || !strcmp(type, "refusal")));
        if (!known)
            return fail(msg, cap, status, 400,
                        "input item %zu: a content part's type must be input_text%s", k,
                        assistant ? ", output_text or refusal" : "");
        if (!text)
            return fail(msg, cap, status, 400, "input item %zu: a '%s' part needs its text", k,
                        type);
        json_object_array_add(out, text_part(text));
    }
    return true;
}

// The last chat message when it is an assistant's: the items that continue its turn (text,
// calls, reasoning) join it, as llama-server merges them.
static json_object *open_assistant(json_object *msgs) {
    const size_t n = json_object_array_length(msgs);
    json_object *last = n ? json_object_array_get_idx(msgs, n - 1) : NULL;
    return last && str_is(last, "role", "assistant") ? last : NULL;
}

static json_object *new_message(json_object *msgs, const char *role) {
    json_object *m = json_object_new_object();
    json_object_object_add(m, "role", json_object_new_string(role));
    json_object_array_add(msgs, m);
    return m;
}

// The list member key of m, made empty when m has none.
static json_object *list_of(json_object *m, const char *key) {
    json_object *v;
    if (json_object_object_get_ex(m, key, &v) && json_object_is_type(v, json_type_array)) return v;
    v = json_object_new_array();
    json_object_object_add(m, key, v);
    return v;
}

// Input item k as chat messages appended to msgs.
static bool item(json_object *it, size_t k, json_object *msgs, char *msg, size_t cap, int *status) {
    if (!json_object_is_type(it, json_type_object))
        return fail(msg, cap, status, 400, "input item %zu is not an object", k);
    json_object *type = str_member(it, "type"), *role = str_member(it, "role"), *c = NULL;
    const char *t = type ? json_object_get_string(type) : NULL;
    if (role && (!t || !strcmp(t, "message"))) {
        const char *r = json_object_get_string(role);
        const bool assistant = !strcmp(r, "assistant");
        if (!assistant && strcmp(r, "user") && strcmp(r, "system") && strcmp(r, "developer"))
            return fail(msg, cap, status, 400,
                        "input item %zu: its role must be user, system, developer or assistant", k);
        if (!json_object_object_get_ex(it, "content", &c) || !c)
            return fail(msg, cap, status, 400, "input item %zu: a message needs 'content'", k);
        json_object *m = assistant ? open_assistant(msgs) : NULL;
        if (!m) m = new_message(msgs, r);
        return parts(c, assistant, k, list_of(m, "content"), msg, cap, status);
    }
    if (t && !strcmp(t, "function_call")) {
        json_object *id = str_member(it, "call_id"), *name = str_member(it, "name"),
                    *args = str_member(it, "arguments");
        if (!id || !name || !args)
            return fail(msg, cap, status, 400,
                        "input item %zu: a function_call needs 'call_id', 'name' and "
                        "'arguments' strings",
                        k);
        json_object *call = json_object_new_object(), *fn = json_object_new_object();
        json_object_object_add(call, "id", json_object_get(id));
        json_object_object_add(call, "type", json_object_new_string("function"));
        json_object_object_add(fn, "name", json_object_get(name));
        json_object_object_add(fn, "arguments", json_object_get(args));
        json_object_object_add(call, "function", fn);
        json_object *m = open_assistant(msgs);
        if (!m) m = new_message(msgs, "assistant");
        json_object_array_add(list_of(m, "tool_calls"), call);
        return true;
    }
    if (t && !strcmp(t, "function_call_output")) {
        json_object *id = str_member(it, "call_id"), *out = NULL;
        json_object_object_get_ex(it, "output", &out);
        if (!id || !out ||
            (!json_object_is_type(out, json_type_string) &&
             !json_object_is_type(out, json_type_array)))
            return fail(msg, cap, status, 400,
                        "input item %zu: a function_call_output needs 'call_id' and 'output'", k);
        json_object *m = new_message(msgs, "tool");
        json_object_object_add(m, "tool_call_id", json_object_get(id));
        return parts(out, false, k, list_of(m, "content"), msg, cap, status);
    }
    if (t && !strcmp(t, "reasoning")) {
        // Its text (content[0].text) goes back to the template as the turn's reasoning; a
        // reasoning item with only a summary or encrypted content has nothing to give it.
        json_object *list = NULL, *text = NULL;
        if (json_object_object_get_ex(it, "content", &list) &&
            json_object_is_type(list, json_type_array) && json_object_array_length(list) > 0)
            text = str_member(json_object_array_get_idx(list, 0), "text");
        if (!text) return true;
        json_object *m = open_assistant(msgs);
        if (!m) {
            m = new_message(msgs, "assistant");
            list_of(m, "content");
        }
        json_object_object_add(m, "reasoning_content", json_object_get(text));
        return true;
    }
    if (t) {
        // The type as the message quotes it: 40 bytes at most, control bytes as '?' (one line).
        char shown[41];
        size_t n = 0;
        for (; t[n] && n < sizeof shown - 1; n++)
            shown[n] = (unsigned char)t[n] < 0x20 ? '?' : t[n];
        shown[n] = '\0';
        return fail(msg, cap, status, 400, "input item %zu: type '%s' is not supported", k, shown);
    }
    return fail(msg, cap, status, 400, "input item %zu has neither a 'role' nor a 'type'", k);
}

// tools: the flat function tools ({type: "function", name, description, parameters, strict})
// nested as chat's {type: "function", function: {...}}; the built-in ones (web search, files)
// have no chat form and are left out, as llama-server leaves them.
static bool tools(json_object *v, json_object *o, char *msg, size_t cap, int *status) {
    if (!json_object_is_type(v, json_type_array))
        return fail(msg, cap, status, 400, "'tools' must be a list of tools");
    json_object *list = json_object_new_array();
    json_object_object_add(o, "tools", list);
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        json_object *t = json_object_array_get_idx(v, i);
        if (!str_is(t, "type", "function")) continue;
        if (!str_member(t, "name"))
            return fail(msg, cap, status, 400, "tool %zu: a function tool needs a 'name'", i);
        json_object *fn = json_object_new_object(), *w = json_object_new_object();
        json_object_object_foreach(t, key, val) {
            if (strcmp(key, "type")) json_object_object_add(fn, key, json_object_get(val));
        }
        json_object_object_add(w, "type", json_object_new_string("function"));
        json_object_object_add(w, "function", fn);
        json_object_array_add(list, w);
    }
    if (json_object_array_length(list) == 0) json_object_object_del(o, "tools");
    return true;
}

// tool_choice: auto, none, required, or {type: "function", name} (chat's named function).
static bool tool_choice(json_object *v, json_object *o, char *msg, size_t cap, int *status) {
    if (json_object_is_type(v, json_type_string)) {
        const char *s = json_object_get_string(v);
        if (strcmp(s, "auto") && strcmp(s, "none") && strcmp(s, "required"))
            return fail(msg, cap, status, 400,
                        "'tool_choice' must be auto, none, required or {\"type\": \"function\", "
                        "\"name\": ...}");
        json_object_object_add(o, "tool_choice", json_object_get(v));
        return true;
    }
    json_object *name = str_member(v, "name");
    if (!str_is(v, "type", "function") || !name)
        return fail(msg, cap, status, 400,
                    "'tool_choice' must be auto, none, required or {\"type\": \"function\", "
                    "\"name\": ...}");
    json_object *c = json_object_new_object(), *fn = json_object_new_object();
    json_object_object_add(fn, "name", json_object_get(name));
    json_object_object_add(c, "type", json_object_new_string("function"));
    json_object_object_add(c, "function", fn);
    json_object_object_add(o, "tool_choice", c);
    return true;
}

// text.format: "text" (no constraint), "json_object", or "json_schema" with its schema (chat's
// response_format).
static bool text_format(json_object *text, json_object *o, char *msg, size_t cap, int *status) {
    json_object *f = NULL, *schema = NULL, *v;
    if (!json_object_is_type(text, json_type_object) ||
        !json_object_object_get_ex(text, "format", &f) || !f)
        return true;
    if (str_is(f, "type", "text")) return true;
    json_object *rf = json_object_new_object();
    json_object_object_add(o, "response_format", rf);
    if (str_is(f, "type", "json_object")) {
        json_object_object_add(rf, "type", json_object_new_string("json_object"));
        return true;
    }
    if (!str_is(f, "type", "json_schema"))
        return fail(msg, cap, status, 400,
                    "'text.format' must be of type text, json_object or json_schema");
    if (!json_object_object_get_ex(f, "schema", &schema) ||
        !json_object_is_type(schema, json_type_object))
        return fail(msg, cap, status, 400, "'text.format' json_schema needs a 'schema' object");
    json_object *js = json_object_new_object();
    json_object_object_add(js, "schema", json_object_get(schema));
    if ((v = str_member(f, "name"))) json_object_object_add(js, "name", json_object_get(v));
    if (json_object_object_get_ex(f, "strict", &v))
        json_object_object_add(js, "strict", json_object_get(v));
    json_object_object_add(rf, "type", json_object_new_string("json_schema"));
    json_object_object_add(rf, "json_schema", js);
    return true;
}

// The Responses fields translated here or with no meaning to a chat: not passed on.
static const char *const TAKEN[] = {"input",
                                    "instructions",
                                    "tools",
                                    "tool_choice",
                                    "max_output_tokens",
                                    "reasoning",
                                    "text",
                                    "messages",
                                    "store",
                                    "include",
                                    "metadata",
                                    "truncation",
                                    "prompt",
                                    "user",
                                    "background",
                                    "top_logprobs",
                                    "previous_response_id",
                                    "service_tier",
                                    "prompt_cache_key",
                                    "safety_identifier",
                                    "max_tool_calls",
                                    "conversation",
                                    "n"};

static bool translate(json_object *req, json_object *o, char *msg, size_t cap, int *status) {
    json_object *v;
    json_object_object_foreach(req, key, val) {
        bool taken = false;
        for (size_t i = 0; i < sizeof TAKEN / sizeof *TAKEN && !taken; i++)
            taken = !strcmp(key, TAKEN[i]);
        if (!taken) json_object_object_add(o, key, json_object_get(val));
    }
    if ((v = str_member(req, "previous_response_id")) && json_object_get_string_len(v) > 0)
        return fail(msg, cap, status, 400,
                    "'previous_response_id' is not supported: mint-serve keeps no responses "
                    "(send the whole conversation in 'input')");
    if (json_object_object_get_ex(req, "conversation", &v) && v)
        return fail(msg, cap, status, 400,
                    "'conversation' is not supported: mint-serve keeps no conversations (send "
                    "the whole conversation in 'input')");
    if (json_object_object_get_ex(req, "background", &v) && json_object_get_boolean(v))
        return fail(msg, cap, status, 400, "'background' responses are not supported");
    json_object *msgs = json_object_new_array();
    json_object_object_add(o, "messages", msgs);
    if (json_object_object_get_ex(req, "instructions", &v) && v) {
        if (!json_object_is_type(v, json_type_string))
            return fail(msg, cap, status, 400, "'instructions' must be a string");
        json_object_object_add(new_message(msgs, "system"), "content", json_object_get(v));
    }
    json_object *input = NULL;
    if (!json_object_object_get_ex(req, "input", &input) || !input)
        return fail(msg, cap, status, 400, "'input' is required");
    if (json_object_is_type(input, json_type_string)) {
        json_object_object_add(new_message(msgs, "user"), "content", json_object_get(input));
    } else if (json_object_is_type(input, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(input); i++)
            if (!item(json_object_array_get_idx(input, i), i, msgs, msg, cap, status)) return false;
    } else {
        return fail(msg, cap, status, 400, "'input' must be a string or a list of items");
    }
    if (json_object_object_get_ex(req, "tools", &v) && v && !tools(v, o, msg, cap, status))
        return false;
    if (json_object_object_get_ex(req, "tool_choice", &v) && v &&
        !tool_choice(v, o, msg, cap, status))
        return false;
    if (json_object_object_get_ex(req, "max_output_tokens", &v) && v)
        json_object_object_add(o, "max_tokens", json_object_get(v));
    if (json_object_object_get_ex(req, "reasoning", &v) && json_object_is_type(v, json_type_object))
        if ((v = str_member(v, "effort")))
            json_object_object_add(o, "reasoning_effort", json_object_get(v));
    if (json_object_object_get_ex(req, "text", &v) && v && !text_format(v, o, msg, cap, status))
        return false;
    return true;
}

bool responses_to_openai(const char *body, size_t len, char **out, char *msg, size_t cap,
                         int *status) {
    *out = NULL;
    json_object *req = json_body_object(body, len);
    if (!req) return fail(msg, cap, status, 400, "the body must be one JSON object");
    json_object *o = json_object_new_object();
    bool ok = translate(req, o, msg, cap, status);
    if (ok) *out = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    if (ok && !*out) ok = fail(msg, cap, status, 500, "out of memory");
    json_object_put(o);
    json_object_put(req);
    return ok;
}
