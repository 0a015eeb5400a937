// serve_request.c - parsing and checking an OpenAI-style request body with json-c (strict JSON,
// UTF-8 validated), field by field.
#include "serve_request.h"

#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    char *msg;
    size_t cap;
    const char **param;
} parser;

static bool fail(parser *p, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail(parser *p, const char *param, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->msg, p->cap, fmt, ap);
    va_end(ap);
    *p->param = param;
    return false;
}

static char *dup_str(json_object *o) {
    const char *s = json_object_get_string(o);
    size_t n = (size_t)json_object_get_string_len(o);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

// A JSON string with U+0000 in it ("\u0000"): its C copy would end there (a stop string of
// "\u0000x" would become "", a prompt would lose its tail), so such strings are refused.
static bool has_nul(json_object *o) {
    return memchr(json_object_get_string(o), '\0', (size_t)json_object_get_string_len(o)) != NULL;
}

// Whether o is the JSON string s (not null, not another type).
static bool is_string(json_object *o, const char *s) {
    return json_object_is_type(o, json_type_string) && !strcmp(json_object_get_string(o), s);
}

// A number field in [lo, hi]; absent or null leaves *out alone.
static bool number(parser *p, json_object *req, const char *key, double lo, double hi,
                   double *out) {
    json_object *v;
    if (!json_object_object_get_ex(req, key, &v) || v == NULL) return true;
    if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
        return fail(p, key, "'%s' must be a number", key);
    const double d = json_object_get_double(v);
    if (!isfinite(d) || d < lo || d > hi)
        return fail(p, key, "'%s' is %g; it must be between %g and %g", key, d, lo, hi);
    *out = d;
    return true;
}

static bool integer(parser *p, json_object *req, const char *key, long lo, long hi, int *out) {
    json_object *v;
    if (!json_object_object_get_ex(req, key, &v) || v == NULL) return true;
    if (!json_object_is_type(v, json_type_int)) return fail(p, key, "'%s' must be an integer", key);
    const int64_t i = json_object_get_int64(v);
    if (i < lo || i > hi)
        return fail(p, key, "'%s' is %lld; it must be between %ld and %ld", key, (long long)i, lo,
                    hi);
    *out = (int)i;
    return true;
}

static bool boolean(parser *p, json_object *req, const char *key, bool *out) {
    json_object *v;
    if (!json_object_object_get_ex(req, key, &v) || v == NULL) return true;
    if (!json_object_is_type(v, json_type_boolean))
        return fail(p, key, "'%s' must be true or false", key);
    *out = json_object_get_boolean(v);
    return true;
}

// Text of a message's content: a string, or OpenAI's list of {type: "text", text} parts, joined
// with a newline between them once there is text (llama-server's join of typed text parts).
static bool content_text(parser *p, json_object *c, char **out) {
    if (json_object_is_type(c, json_type_string)) {
        if (has_nul(c)) return fail(p, "messages", "a message's content contains U+0000");
        *out = dup_str(c);
        return *out || fail(p, "messages", "out of memory");
    }
    if (!json_object_is_type(c, json_type_array))
        return fail(p, "messages", "a message's 'content' must be a string or a list of parts");
    size_t total = 0, n = json_object_array_length(c);
    for (size_t i = 0; i < n; i++) {
        json_object *part = json_object_array_get_idx(c, i), *type, *text;
        if (!json_object_is_type(part, json_type_object) ||
            !json_object_object_get_ex(part, "type", &type) || !is_string(type, "text") ||
            !json_object_object_get_ex(part, "text", &text) ||
            !json_object_is_type(text, json_type_string))
            return fail(p, "messages", "only text content parts are supported");
        if (has_nul(text)) return fail(p, "messages", "a message's content contains U+0000");
        total += (size_t)json_object_get_string_len(text) + 1;
    }
    char *s = malloc(total + 1);
    if (!s) return fail(p, "messages", "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) { // joined with a newline after text so far, as llama-server
        json_object *text;
        json_object_object_get_ex(json_object_array_get_idx(c, i), "text", &text);
        if (k > 0) s[k++] = '\n';
        memcpy(s + k, json_object_get_string(text), (size_t)json_object_get_string_len(text));
        k += (size_t)json_object_get_string_len(text);
    }
    s[k] = '\0';
    *out = s;
    return true;
}

static bool messages(parser *p, json_object *req, serve_request *r) {
    json_object *m;
    if (!json_object_object_get_ex(req, "messages", &m) || !json_object_is_type(m, json_type_array))
        return fail(p, "messages", "'messages' must be a list of {role, content}");
    const size_t n = json_object_array_length(m);
    if (n < 1 || n > SERVE_MAX_MSGS)
        return fail(p, "messages", "'messages' has %zu entries; 1 to %d are allowed", n,
                    SERVE_MAX_MSGS);
    r->msgs = calloc(n, sizeof *r->msgs);
    if (!r->msgs) return fail(p, "messages", "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_object *msg = json_object_array_get_idx(m, i), *role, *content;
        if (!json_object_is_type(msg, json_type_object) ||
            !json_object_object_get_ex(msg, "role", &role) ||
            !json_object_is_type(role, json_type_string))
            return fail(p, "messages", "message %zu has no 'role'", i);
        const char *rs = json_object_get_string(role);
        if (strcmp(rs, "system") && strcmp(rs, "user") && strcmp(rs, "assistant") &&
            strcmp(rs, "developer") && strcmp(rs, "tool"))
            return fail(p, "messages",
                        "message %zu: its role is not system, user, assistant or tool", i);
        serve_msg *sm = &r->msgs[i];
        sm->role = strdup(strcmp(rs, "developer") ? rs : "system");
        r->n_msgs = (int)i + 1;
        json_object *v;
        if (!strcmp(rs, "assistant") && json_object_object_get_ex(msg, "tool_calls", &v) && v) {
            if (!json_object_is_type(v, json_type_array))
                return fail(p, "messages", "message %zu: 'tool_calls' must be a list", i);
            sm->tool_calls = strdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
        }
        static const char *const text_fields[] = {"tool_call_id", "name", "reasoning_content"};
        char **into[] = {&sm->tool_call_id, &sm->name, &sm->reasoning_content};
        for (int k = 0; k < 3; k++)
            if (json_object_object_get_ex(msg, text_fields[k], &v) && v) {
                if (!json_object_is_type(v, json_type_string) || has_nul(v))
                    return fail(p, "messages", "message %zu: '%s' must be text", i, text_fields[k]);
                *into[k] = dup_str(v);
            }
        if (!json_object_object_get_ex(msg, "content", &content) || content == NULL) {
            if (!sm->tool_calls) return fail(p, "messages", "message %zu has no 'content'", i);
            sm->content = strdup(""); // an assistant's message that only calls tools
            if (!sm->content) return fail(p, "messages", "out of memory");
            continue;
        }
        if (!content_text(p, content, &sm->content)) return false;
    }
    return true;
}

static bool prompt(parser *p, json_object *req, serve_request *r) {
    json_object *v;
    if (!json_object_object_get_ex(req, "prompt", &v) || v == NULL)
        return fail(p, "prompt", "'prompt' is required");
    if (json_object_is_type(v, json_type_string)) {
        if (has_nul(v)) return fail(p, "prompt", "'prompt' contains U+0000");
        r->prompt = dup_str(v);
        return r->prompt || fail(p, "prompt", "out of memory");
    }
    if (!json_object_is_type(v, json_type_array))
        return fail(p, "prompt", "'prompt' must be a string or a list of token ids");
    const size_t n = json_object_array_length(v);
    if (n == 1 && json_object_is_type(json_object_array_get_idx(v, 0), json_type_string)) {
        if (has_nul(json_object_array_get_idx(v, 0)))
            return fail(p, "prompt", "'prompt' contains U+0000");
        r->prompt = dup_str(json_object_array_get_idx(v, 0)); // ["text"]: one prompt
        return r->prompt || fail(p, "prompt", "out of memory");
    }
    if (n < 1 || n > (1u << 20)) return fail(p, "prompt", "'prompt' has %zu token ids", n);
    r->prompt_ids = malloc(n * sizeof *r->prompt_ids);
    if (!r->prompt_ids) return fail(p, "prompt", "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_object *t = json_object_array_get_idx(v, i);
        if (!json_object_is_type(t, json_type_int))
            return fail(p, "prompt",
                        "'prompt' must be one string or a list of token ids "
                        "(several prompts in one request are not supported)");
        const int64_t id = json_object_get_int64(t);
        if (id < 0 || id > INT32_MAX) return fail(p, "prompt", "token id %lld", (long long)id);
        r->prompt_ids[i] = (int32_t)id;
    }
    r->n_prompt_ids = (int)n;
    return true;
}

// One /completion prompt part list from a JSON value: a string, a list mixing token ids and
// strings, or {"prompt_string": s} (llama-server's multimodal shape; media are refused).
static bool native_one(parser *p, json_object *v, serve_prompt *out) {
    if (json_object_is_type(v, json_type_object)) {
        json_object *s, *media;
        if (json_object_object_get_ex(v, "multimodal_data", &media) && media &&
            !(json_object_is_type(media, json_type_array) && json_object_array_length(media) == 0))
            return fail(p, "prompt", "this server takes text only: 'multimodal_data' is refused");
        if (!json_object_object_get_ex(v, "prompt_string", &s) ||
            !json_object_is_type(s, json_type_string))
            return fail(p, "prompt", "a prompt object needs 'prompt_string'");
        v = s;
    }
    const bool arr = json_object_is_type(v, json_type_array);
    const size_t n = arr ? json_object_array_length(v) : 1;
    if (!arr && !json_object_is_type(v, json_type_string))
        return fail(p, "prompt", "a prompt is a string, token ids, or a list of them");
    if (n > (1u << 20)) return fail(p, "prompt", "'prompt' has %zu parts", n);
    out->parts = calloc(n ? n : 1, sizeof *out->parts);
    if (!out->parts) return fail(p, "prompt", "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_object *e = arr ? json_object_array_get_idx(v, i) : v;
        serve_part *part = &out->parts[out->n_parts];
        if (json_object_is_type(e, json_type_string)) {
            if (has_nul(e)) return fail(p, "prompt", "'prompt' contains U+0000");
            if (!(part->text = dup_str(e))) return fail(p, "prompt", "out of memory");
            out->n_parts++;
            continue;
        }
        if (!json_object_is_type(e, json_type_int))
            return fail(p, "prompt", "a prompt's list holds token ids and strings only");
        const int64_t id = json_object_get_int64(e);
        if (id < 0 || id > INT32_MAX) return fail(p, "prompt", "token id %lld", (long long)id);
        serve_part *prev = out->n_parts > 0 ? &out->parts[out->n_parts - 1] : NULL;
        if (!prev || prev->text) { // a new run of ids
            part->ids = malloc((n - i) * sizeof *part->ids);
            if (!part->ids) return fail(p, "prompt", "out of memory");
            out->n_parts++;
            prev = part;
        }
        prev->ids[prev->n_ids++] = (int32_t)id;
    }
    return true;
}

// /completion's prompt: one prompt (a string, token ids, ids mixed with strings, an object) or a
// list of such prompts, each answered on its own.
static bool native_prompts(parser *p, json_object *req, serve_request *r) {
    json_object *v;
    if (!json_object_object_get_ex(req, "prompt", &v) || v == NULL)
        return fail(p, "prompt", "'prompt' is required");
    bool many = false;
    if (json_object_is_type(v, json_type_array)) {
        const size_t n = json_object_array_length(v);
        many = n > 0;
        for (size_t i = 0; i < n; i++) // a number at the top makes it one mixed sequence
            if (json_object_is_type(json_object_array_get_idx(v, i), json_type_int)) many = false;
        if (many && n > SERVE_MAX_PROMPTS)
            return fail(p, "prompt", "'prompt' has %zu prompts; at most %d", n, SERVE_MAX_PROMPTS);
        if (n == 0) return fail(p, "prompt", "'prompt' is empty");
    }
    const size_t n = many ? json_object_array_length(v) : 1;
    r->prompts = calloc(n, sizeof *r->prompts);
    if (!r->prompts) return fail(p, "prompt", "out of memory");
    for (size_t i = 0; i < n; i++) {
        r->n_prompts = (int)i + 1;
        if (!native_one(p, many ? json_object_array_get_idx(v, i) : v, &r->prompts[i]))
            return false;
    }
    return true;
}

// logit_bias: OpenAI's {"id": bias} or llama-server's [[id or text, bias or false], ...] and
// {"text": bias}; false bans the token.
static bool logit_bias(parser *p, json_object *req, serve_request *r) {
    json_object *v;
    if (!json_object_object_get_ex(req, "logit_bias", &v) || v == NULL) return true;
    const bool obj = json_object_is_type(v, json_type_object);
    if (!obj && !json_object_is_type(v, json_type_array))
        return fail(p, "logit_bias", "'logit_bias' must be an object or a list of [token, bias]");
    const size_t n = obj ? (size_t)json_object_object_length(v) : json_object_array_length(v);
    if (n > SERVE_MAX_BIAS)
        return fail(p, "logit_bias", "'logit_bias' has %zu entries; at most %d", n, SERVE_MAX_BIAS);
    r->bias = calloc(n ? n : 1, sizeof *r->bias);
    if (!r->bias) return fail(p, "logit_bias", "out of memory");
    json_object *key = NULL, *val = NULL;
    // (json-c's iterator is for objects only: begun on a list it crashes)
    struct json_object_iterator it =
        obj ? json_object_iter_begin(v) : json_object_iter_init_default();
    for (size_t i = 0; i < n; i++) {
        if (obj) {
            key = json_object_new_string(json_object_iter_peek_name(&it));
            val = json_object_iter_peek_value(&it);
            json_object_iter_next(&it);
        } else {
            json_object *e = json_object_array_get_idx(v, i);
            if (!json_object_is_type(e, json_type_array) || json_object_array_length(e) != 2)
                return fail(p, "logit_bias", "a logit_bias entry must be [token, bias]");
            key = json_object_get(json_object_array_get_idx(e, 0));
            val = json_object_array_get_idx(e, 1);
        }
        serve_bias *b = &r->bias[r->n_bias];
        bool ok = true;
        if (json_object_is_type(val, json_type_boolean) && !json_object_get_boolean(val))
            b->bias = -INFINITY;
        else if (json_object_is_type(val, json_type_double) ||
                 json_object_is_type(val, json_type_int))
            b->bias = (float)json_object_get_double(val);
        else
            ok = false;
        ok = ok && (b->bias == -INFINITY || (isfinite(b->bias) && fabsf(b->bias) <= 1e6f));
        // A token id (a number, or in an object's key its digits), or a text to tokenize.
        if (ok && json_object_is_type(key, json_type_int)) {
            const int64_t id = json_object_get_int64(key);
            ok = id >= 0 && id <= INT32_MAX;
            b->id = (int32_t)id;
        } else if (ok && json_object_is_type(key, json_type_string) && !has_nul(key)) {
            const char *ks = json_object_get_string(key);
            size_t digits = 0;
            while (ks[digits] >= '0' && ks[digits] <= '9') digits++;
            if (obj && digits > 0 && digits < 10 && ks[digits] == '\0')
                b->id = (int32_t)atol(ks);
            else
                ok = (b->text = strdup(ks)) != NULL;
        } else {
            ok = false;
        }
        json_object_put(key);
        if (!ok)
            return fail(p, "logit_bias",
                        "logit_bias entry %zu: a token id or text with a number (or false)", i);
        r->n_bias++;
    }
    return true;
}

// /completion's own fields.
static bool native_fields(parser *p, json_object *req, serve_request *r, int cap) {
    json_object *v;
    int n_predict = r->max_tokens;
    if (!integer(p, req, "n_predict", -1, cap, &n_predict)) return false;
    if (n_predict == 0)
        return fail(p, "n_predict", "'n_predict' 0 asks for nothing (give -1 or a count)");
    r->max_tokens = n_predict;
    int n_probs = 0;
    if (!integer(p, req, "n_probs", 0, SERVE_MAX_TOP_LP, &n_probs) ||
        !boolean(p, req, "return_tokens", &r->return_tokens) ||
        !boolean(p, req, "post_sampling_probs", &r->post_sampling_probs) ||
        !integer(p, req, "id_slot", -1, 1 << 20, &r->id_slot))
        return false;
    r->n_probs = n_probs;
    r->logprobs = n_probs > 0;
    r->top_logprobs = n_probs;
    if (json_object_object_get_ex(req, "response_fields", &v) && v) {
        if (!json_object_is_type(v, json_type_array) ||
            json_object_array_length(v) > SERVE_MAX_FIELDS)
            return fail(p, "response_fields",
                        "'response_fields' must be a list of at most %d names", SERVE_MAX_FIELDS);
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *f = json_object_array_get_idx(v, i);
            if (!json_object_is_type(f, json_type_string) || has_nul(f))
                return fail(p, "response_fields", "'response_fields' must hold names");
            r->fields[r->n_fields++] = dup_str(f);
        }
    }
    return true;
}

static bool stops(parser *p, json_object *req, serve_request *r) {
    json_object *v;
    if (!json_object_object_get_ex(req, "stop", &v) || v == NULL) return true;
    if (json_object_is_type(v, json_type_string)) {
        if (json_object_get_string_len(v) == 0) return true;
        if (has_nul(v) || json_object_get_string_len(v) > 256)
            return fail(p, "stop", "a stop sequence must be 1 to 256 bytes without U+0000");
        r->stop[r->n_stop++] = dup_str(v);
        return true;
    }
    if (!json_object_is_type(v, json_type_array))
        return fail(p, "stop", "'stop' must be a string or a list of strings");
    const size_t n = json_object_array_length(v);
    if (n > SERVE_MAX_STOP)
        return fail(p, "stop", "'stop' has %zu strings; at most %d", n, SERVE_MAX_STOP);
    for (size_t i = 0; i < n; i++) {
        json_object *s = json_object_array_get_idx(v, i);
        if (!json_object_is_type(s, json_type_string) || json_object_get_string_len(s) == 0 ||
            json_object_get_string_len(s) > 256 || has_nul(s))
            return fail(p, "stop",
                        "stop sequence %zu must be a string of 1 to 256 bytes without U+0000", i);
        r->stop[r->n_stop++] = dup_str(s);
    }
    return true;
}

// Fields OpenAI knows and mint cannot honour: refused rather than silently ignored.
static bool unsupported(parser *p, json_object *req) {
    static const char *const fields[] = {"functions", "function_call", "audio", "prediction"};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        json_object *v;
        if (!json_object_object_get_ex(req, fields[i], &v) || v == NULL) continue;
        if ((json_object_is_type(v, json_type_object) && json_object_object_length(v) == 0) ||
            (json_object_is_type(v, json_type_array) && json_object_array_length(v) == 0) ||
            is_string(v, "none"))
            continue;
        return fail(p, fields[i], "'%s' is not supported by this server", fields[i]);
    }
    return true;
}

// Tools (OpenAI's function list), tool_choice, parallel_tool_calls and chat_template_kwargs.
static bool tools(parser *p, json_object *req, serve_request *r) {
    json_object *v;
    r->parallel_tool_calls = true;
    if (json_object_object_get_ex(req, "tools", &v) && v) {
        if (!json_object_is_type(v, json_type_array))
            return fail(p, "tools", "'tools' must be a list of functions");
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *t = json_object_array_get_idx(v, i), *fn, *name;
            if (!json_object_is_type(t, json_type_object) ||
                !json_object_object_get_ex(t, "function", &fn) ||
                !json_object_object_get_ex(fn, "name", &name) ||
                !json_object_is_type(name, json_type_string) || !json_object_get_string_len(name))
                return fail(p, "tools", "tool %zu needs function.name", i);
        }
        if (json_object_array_length(v) > 0)
            r->tools = strdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
    }
    if (json_object_object_get_ex(req, "tool_choice", &v) && v) {
        json_object *fn, *name;
        if (is_string(v, "none"))
            r->tool_choice = SERVE_TOOLS_NONE;
        else if (is_string(v, "required"))
            r->tool_choice = SERVE_TOOLS_REQUIRED;
        else if (json_object_is_type(v, json_type_object) &&
                 json_object_object_get_ex(v, "function", &fn) &&
                 json_object_object_get_ex(fn, "name", &name) &&
                 json_object_is_type(name, json_type_string)) {
            r->tool_choice = SERVE_TOOLS_REQUIRED;
            r->tool_name = dup_str(name);
        } else if (!is_string(v, "auto"))
            return fail(p, "tool_choice",
                        "'tool_choice' is auto, none, required or {\"type\": \"function\", "
                        "\"function\": {\"name\": ...}}");
    }
    if ((r->tool_choice == SERVE_TOOLS_REQUIRED) && !r->tools)
        return fail(p, "tool_choice",
                    "'tool_choice' asks for a tool call, but there are no 'tools'");
    if (!boolean(p, req, "parallel_tool_calls", &r->parallel_tool_calls)) return false;
    if (json_object_object_get_ex(req, "chat_template_kwargs", &v) && v) {
        if (!json_object_is_type(v, json_type_object))
            return fail(p, "chat_template_kwargs", "'chat_template_kwargs' must be an object");
        r->template_kwargs = strdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
    }
    return true;
}

// What constrains the output: "grammar" (GBNF text), "json_schema" (a schema), or OpenAI's
// response_format ({"type": "json_object"} any JSON object; {"type": "json_schema",
// "json_schema": {"schema": ...}}; "text" none). One at most.
static bool constraints(parser *p, json_object *req, serve_request *r) {
    json_object *v, *t, *js, *sc;
    if (json_object_object_get_ex(req, "grammar", &v) && v) {
        if (!json_object_is_type(v, json_type_string) || has_nul(v))
            return fail(p, "grammar", "'grammar' must be GBNF text");
        if (json_object_get_string_len(v) > 0 && !(r->grammar = dup_str(v)))
            return fail(p, "grammar", "out of memory");
    }
    json_object *schema = NULL;
    const char *from = "json_schema";
    if (json_object_object_get_ex(req, "json_schema", &v) && v) schema = v;
    if (json_object_object_get_ex(req, "response_format", &v) && v) {
        const char *type =
            json_object_object_get_ex(v, "type", &t) && json_object_is_type(t, json_type_string)
                ? json_object_get_string(t)
                : NULL;
        if (!json_object_is_type(v, json_type_object) || !type)
            return fail(p, "response_format", "'response_format' needs a 'type'");
        if (!strcmp(type, "json_object")) {
            if (!json_object_object_get_ex(v, "schema", &schema) || !schema)
                r->json_schema = strdup("{\"type\":\"object\"}");
            from = "response_format";
        } else if (!strcmp(type, "json_schema")) {
            if (json_object_object_get_ex(v, "json_schema", &js) && js &&
                json_object_object_get_ex(js, "schema", &sc) && sc)
                schema = sc;
            else if (!json_object_object_get_ex(v, "schema", &schema) || !schema)
                return fail(p, "response_format",
                            "'response_format' json_schema needs 'json_schema.schema'");
            from = "response_format";
        } else if (strcmp(type, "text") != 0) {
            return fail(p, "response_format",
                        "'response_format' type must be text, json_object or json_schema");
        }
    }
    if (schema) {
        r->json_schema = strdup(json_object_to_json_string_ext(schema, JSON_C_TO_STRING_PLAIN));
        if (!r->json_schema) return fail(p, from, "out of memory");
    }
    if (r->grammar && r->json_schema)
        return fail(p, "grammar", "give a grammar or a JSON schema, not both");
    return true;
}

// Whether s[0..n) is JSON whitespace only (s need not be NUL-terminated).
static bool only_space(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!strchr(" \t\r\n", s[i]) || s[i] == '\0') return false;
    return true;
}

bool serve_parse_request(const char *body, size_t len, serve_kind kind, const serve_defaults *dflt,
                         serve_request *r, char *msg, size_t cap, const char **param) {
    memset(r, 0, sizeof *r);
    r->kind = kind;
    const int max_tokens_cap = dflt->max_tokens_cap;
    r->max_tokens = dflt->max_tokens;
    r->temperature = dflt->temperature;
    r->top_p = dflt->top_p;
    r->top_k = dflt->top_k;
    r->min_p = dflt->min_p;
    r->repeat_penalty = dflt->repeat_penalty;
    r->ignore_eos = dflt->ignore_eos;
    r->id_slot = -1;
    r->n = 1;
    parser p = {msg, cap, param};
    *param = NULL;
    json_tokener *tok = json_tokener_new();
    if (!tok) return fail(&p, NULL, "out of memory");
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *req =
        len > 0 && len < (size_t)INT32_MAX ? json_tokener_parse_ex(tok, body, (int)len) : NULL;
    const enum json_tokener_error jerr = json_tokener_get_error(tok);
    const size_t used = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    bool ok = false;
    if (!req || jerr != json_tokener_success) {
        // json-c's own words ("null expected" for a body starting with 'n') say what its
        // tokenizer wanted, not what is wrong: name the byte and what the body must be.
        char where[64] = "it is empty";
        if (len > 0 && jerr == json_tokener_continue)
            snprintf(where, sizeof where, "it ends in the middle of a value");
        else if (len > 0)
            snprintf(where, sizeof where, "it stops parsing at byte %zu", used);
        fail(&p, NULL, "the body is not valid JSON (%s): send a JSON object, e.g. %s", where,
             kind == SERVE_CHAT ? "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}"
                                : "{\"prompt\": \"Once upon a time\", \"max_tokens\": 16}");
    } else if (!only_space(body + used, len - used)) {
        fail(&p, NULL, "the body has bytes after its JSON value");
    } else if (!json_object_is_type(req, json_type_object)) {
        fail(&p, NULL, "the body must be a JSON object");
    } else {
        double d;
        json_object *v;
        ok = (kind == SERVE_CHAT         ? messages(&p, req, r)
              : kind == SERVE_COMPLETION ? prompt(&p, req, r)
                                         : native_prompts(&p, req, r)) &&
             unsupported(&p, req) && stops(&p, req, r) && logit_bias(&p, req, r) &&
             constraints(&p, req, r) && (kind != SERVE_CHAT || tools(&p, req, r));
        if (ok && json_object_object_get_ex(req, "model", &v) && v)
            r->model = json_object_is_type(v, json_type_string) ? dup_str(v) : NULL;
        // max_completion_tokens (newer clients) wins over max_tokens.
        ok = ok && integer(&p, req, "max_tokens", 1, max_tokens_cap, &r->max_tokens) &&
             integer(&p, req, "max_completion_tokens", 1, max_tokens_cap, &r->max_tokens);
        ok = ok && (d = r->temperature, number(&p, req, "temperature", 0, 2, &d)) &&
             (r->temperature = (float)d, d = r->top_p, number(&p, req, "top_p", 1e-6, 1, &d)) &&
             (r->top_p = (float)d, d = r->min_p, number(&p, req, "min_p", 0, 1, &d)) &&
             (r->min_p = (float)d, d = r->repeat_penalty,
              number(&p, req, "repeat_penalty", 0.01, 100, &d)) &&
             (r->repeat_penalty = (float)d, true);
        ok = ok && integer(&p, req, "top_k", 0, 1000000, &r->top_k) &&
             integer(&p, req, "n", 1, SERVE_MAX_N, &r->n) &&
             boolean(&p, req, "stream", &r->stream) &&
             boolean(&p, req, "ignore_eos", &r->ignore_eos) &&
             boolean(&p, req, "verbose", &r->verbose) &&
             boolean(&p, req, "return_progress", &r->return_progress) &&
             boolean(&p, req, "timings_per_token", &r->timings_per_token);
        if (ok && json_object_object_get_ex(req, "seed", &v) && v) {
            if (!json_object_is_type(v, json_type_int))
                ok = fail(&p, "seed", "'seed' must be an integer");
            r->has_seed = true;
            r->seed = (uint64_t)json_object_get_int64(v);
        }
        if (ok && kind == SERVE_CHAT) {
            // llama-server's prefill: a last assistant message is continued, unless the request
            // asks for a generation prompt; asking for both is a contradiction.
            bool agp_given = json_object_object_get_ex(req, "add_generation_prompt", NULL);
            bool cfm = false,
                 cfm_given = json_object_object_get_ex(req, "continue_final_message", NULL);
            r->add_generation_prompt = true;
            ok = boolean(&p, req, "add_generation_prompt", &r->add_generation_prompt) &&
                 boolean(&p, req, "continue_final_message", &cfm);
            r->continue_final = cfm_given ? cfm : !(agp_given && r->add_generation_prompt);
            if (ok && cfm && r->add_generation_prompt && agp_given)
                ok = fail(
                    &p, "continue_final_message",
                    "'add_generation_prompt' and 'continue_final_message' cannot both be true");
            // Continuing the last of two assistant messages in a row is a malformed
            // conversation llama-server refuses, not a prefill.
            const int n = r->n_msgs;
            if (ok && r->continue_final && !cfm_given && n >= 2 &&
                !strcmp(r->msgs[n - 1].role, "assistant") &&
                !strcmp(r->msgs[n - 2].role, "assistant"))
                ok = fail(&p, "messages",
                          "cannot have 2 or more assistant messages at the end of the list");
            ok = ok && boolean(&p, req, "logprobs", &r->logprobs) &&
                 integer(&p, req, "top_logprobs", 0, SERVE_MAX_TOP_LP, &r->top_logprobs);
            if (ok && r->top_logprobs > 0 && !r->logprobs)
                ok = fail(&p, "top_logprobs", "'top_logprobs' needs 'logprobs': true");
        } else if (ok && kind == SERVE_NATIVE) {
            ok = native_fields(&p, req, r, max_tokens_cap);
        } else if (ok) { // completions: logprobs is the number of alternatives (0..5)
            int lp = -1;
            ok = integer(&p, req, "logprobs", 0, 5, &lp) && boolean(&p, req, "echo", &r->echo);
            if (lp >= 0) r->logprobs = true, r->top_logprobs = lp;
        }
        json_object *so, *iu;
        if (ok && json_object_object_get_ex(req, "stream_options", &so) && so &&
            json_object_object_get_ex(so, "include_usage", &iu))
            r->include_usage = json_object_get_boolean(iu);
        if (ok && r->n > 1 && r->temperature == 0)
            ok = fail(&p, "n", "'n' > 1 with temperature 0 would give the same choice n times");
    }
    json_object_put(req);
    if (!ok) serve_request_free(r);
    return ok;
}

void serve_request_free(serve_request *r) {
    for (int i = 0; r->msgs && i < r->n_msgs; i++) {
        free(r->msgs[i].role);
        free(r->msgs[i].content);
        free(r->msgs[i].tool_calls);
        free(r->msgs[i].tool_call_id);
        free(r->msgs[i].name);
        free(r->msgs[i].reasoning_content);
    }
    free(r->msgs);
    free(r->prompt);
    free(r->prompt_ids);
    free(r->model);
    for (int i = 0; i < r->n_stop; i++) free(r->stop[i]);
    for (int i = 0; i < r->n_bias; i++) free(r->bias[i].text);
    free(r->bias);
    for (int i = 0; r->prompts && i < r->n_prompts; i++) {
        for (int k = 0; k < r->prompts[i].n_parts; k++) {
            free(r->prompts[i].parts[k].text);
            free(r->prompts[i].parts[k].ids);
        }
        free(r->prompts[i].parts);
    }
    free(r->prompts);
    for (int i = 0; i < r->n_fields; i++) free(r->fields[i]);
    free(r->grammar);
    free(r->json_schema);
    free(r->tools);
    free(r->tool_name);
    free(r->template_kwargs);
    memset(r, 0, sizeof *r);
}
