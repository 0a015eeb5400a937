// reply.c - mint-serve's answers (reply.h): JSON bodies, OpenAI's errors, text, 503 busy, 405,
// server-sent events, and UTF-8 cleaning of token bytes.
#include "reply.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Thread_local unsigned reply_last_status;
_Thread_local const char *reply_cors_origin;

// Headers every answer carries: CORS, when the request came from an allowed page's origin.
static enum MHD_Result queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *r) {
    if (reply_cors_origin) {
        MHD_add_response_header(r, "Access-Control-Allow-Origin", reply_cors_origin);
        MHD_add_response_header(r, "Access-Control-Allow-Credentials", "true");
        MHD_add_response_header(r, "Vary", "Origin");
    }
    return MHD_queue_response(c, status, r);
}

enum MHD_Result reply_json(struct MHD_Connection *c, unsigned status, json_object *body) {
    reply_last_status = status;
    size_t n;
    const char *s = json_object_to_json_string_length(body, JSON_C_TO_STRING_PLAIN, &n);
    struct MHD_Response *r = MHD_create_response_from_buffer(n, (void *)s, MHD_RESPMEM_MUST_COPY);
    json_object_put(body);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = queue(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

// OpenAI's error shape, with llama-server's code: the HTTP status.
static json_object *error_shape(const char *msg, const char *type, const char *param,
                                unsigned status) {
    json_object *e = json_object_new_object();
    json_object_object_add(e, "message", json_object_new_string(msg));
    json_object_object_add(e, "type", json_object_new_string(type));
    json_object_object_add(e, "param", param ? json_object_new_string(param) : NULL);
    json_object_object_add(e, "code", json_object_new_int((int)status));
    json_object *o = json_object_new_object();
    json_object_object_add(o, "error", e);
    return o;
}

enum MHD_Result reply_error(struct MHD_Connection *c, unsigned status, const char *type,
                            const char *param, const char *fmt, ...) {
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return reply_json(c, status, error_shape(msg, type, param, status));
}

enum MHD_Result reply_exceed_context(struct MHD_Connection *c, const char *param, int n_prompt,
                                     int n_ctx) {
    char msg[300];
    snprintf(msg, sizeof msg,
             "the request exceeds the available context size: the prompt has %d tokens; a slot "
             "holds %d (leave room for the reply)",
             n_prompt, n_ctx);
    json_object *o = error_shape(msg, "exceed_context_size_error", param, 400), *e;
    json_object_object_get_ex(o, "error", &e);
    json_object_object_add(e, "n_prompt_tokens", json_object_new_int(n_prompt));
    json_object_object_add(e, "n_ctx", json_object_new_int(n_ctx));
    return reply_json(c, 400, o);
}

json_object *reply_error_object(const char *msg) {
    return error_shape(msg, "server_error", NULL, 500);
}

enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *type,
                           const char *s, size_t n) {
    reply_last_status = status;
    struct MHD_Response *r = MHD_create_response_from_buffer(n, (void *)s, MHD_RESPMEM_MUST_COPY);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    enum MHD_Result ret = queue(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

enum MHD_Result reply_queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *r) {
    reply_last_status = status;
    return queue(c, status, r);
}

enum MHD_Result reply_busy(struct MHD_Connection *c) {
    const char *msg = "{\"error\":{\"message\":\"the server is busy: every slot and the queue "
                      "are full; retry shortly\",\"type\":\"server_error\",\"param\":null,"
                      "\"code\":null}}";
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(msg), (void *)msg, MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "application/json");
    MHD_add_response_header(r, "Retry-After", "1");
    reply_last_status = 503;
    enum MHD_Result ret = queue(c, 503, r);
    MHD_destroy_response(r);
    return ret;
}

enum MHD_Result reply_not_allowed(struct MHD_Connection *c, const char *method, const char *url,
                                  const char *allow) {
    char msg[600];
    snprintf(msg, sizeof msg, "%s takes %s, not %s", url, allow, method);
    json_object *o = error_shape(msg, "invalid_request_error", NULL, 405);
    size_t n;
    const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);
    struct MHD_Response *r = MHD_create_response_from_buffer(n, (void *)s, MHD_RESPMEM_MUST_COPY);
    json_object_put(o);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "application/json");
    MHD_add_response_header(r, "Allow", allow);
    reply_last_status = 405;
    enum MHD_Result ret = queue(c, 405, r);
    MHD_destroy_response(r);
    return ret;
}

json_object *reply_body_object(struct MHD_Connection *c, const char *body, size_t len,
                               enum MHD_Result *ret) {
    json_tokener *tok = json_tokener_new();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = len ? json_tokener_parse_ex(tok, body, (int)len) : NULL;
    const bool ok = o && json_tokener_get_error(tok) == json_tokener_success &&
                    json_object_is_type(o, json_type_object);
    json_tokener_free(tok);
    if (ok) return o;
    json_object_put(o);
    *ret = reply_error(c, 400, "invalid_request_error", NULL, "the body must be a JSON object");
    return NULL;
}

// ---------------------------------------------------------------------------------------------
// Server-sent events

void reply_sse_raw(reply_sse *s, const char *p, size_t n) {
    char *b = realloc(s->out, s->len + n + 1);
    if (!b) return;
    s->out = b;
    memcpy(s->out + s->len, p, n);
    s->len += n;
}

void reply_sse_event(reply_sse *s, json_object *o) {
    size_t n;
    const char *p = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);
    reply_sse_raw(s, "data: ", 6);
    reply_sse_raw(s, p, n);
    reply_sse_raw(s, "\n\n", 2);
    json_object_put(o);
}

size_t reply_sse_take(reply_sse *s, char *buf, size_t max) {
    if (s->pos >= s->len) return 0;
    size_t n = s->len - s->pos < max ? s->len - s->pos : max;
    memcpy(buf, s->out + s->pos, n);
    s->pos += n;
    if (s->pos == s->len) s->pos = s->len = 0;
    return n;
}

void reply_sse_free(reply_sse *s) {
    free(s->out);
    s->out = NULL;
    s->len = s->pos = 0;
}

enum MHD_Result reply_stream(struct MHD_Connection *c, MHD_ContentReaderCallback reader, void *cls,
                             MHD_ContentReaderFreeCallback done) {
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, reader, cls, done);
    if (!r) {
        done(cls);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-cache");
    MHD_add_response_header(r, "X-Accel-Buffering", "no"); // nginx: do not buffer
    reply_last_status = 200;
    enum MHD_Result ret = queue(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

enum MHD_Result reply_stream_status(struct MHD_Connection *c, unsigned status, const char *type,
                                    MHD_ContentReaderCallback reader, void *cls,
                                    MHD_ContentReaderFreeCallback done) {
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, reader, cls, done);
    if (!r) {
        done(cls);
        return MHD_NO;
    }
    if (type) MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "X-Accel-Buffering", "no"); // nginx: do not buffer
    reply_last_status = status;
    enum MHD_Result ret = queue(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

// ---------------------------------------------------------------------------------------------
// UTF-8

// Bytes of the well-formed UTF-8 character at s[0..n), or 0.
static size_t utf8_char(const unsigned char *s, size_t n) {
    if (s[0] < 0x80) return 1;
    size_t k = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
    if (k == 0 || k > n) return 0;
    for (size_t i = 1; i < k; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    if (k == 3 && ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0))) return 0;
    if (k == 4 && ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90))) return 0;
    return k;
}

json_object *reply_utf8_string(const char *s, size_t n) {
    char *out = malloc(n * 3 + 1);
    if (!out) return json_object_new_string("");
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t c = utf8_char((const unsigned char *)s + i, n - i);
        if (c) {
            memcpy(out + k, s + i, c);
            k += c;
            i += c;
        } else {
            memcpy(out + k, "\xEF\xBF\xBD", 3); // U+FFFD
            k += 3;
            i++;
        }
    }
    json_object *o = json_object_new_string_len(out, (int)k);
    free(out);
    return o;
}

size_t reply_utf8_complete(const char *s, size_t n) {
    // A lead byte in the last three whose character runs past the end is held back.
    for (size_t back = 1; back <= 3 && back <= n; back++) {
        const unsigned char b = (unsigned char)s[n - back];
        if ((b & 0xC0) == 0x80) continue; // continuation: look further back
        const size_t want = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
        return want > back ? n - back : n;
    }
    return n;
}
