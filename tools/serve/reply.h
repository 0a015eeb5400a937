// reply.h - mint-serve's answers: a JSON body, OpenAI's error shape, plain text, the busy answer,
// server-sent events, and the UTF-8 care a token's bytes need. The bottom of the HTTP side: the
// handlers and the router call these; these call nothing of theirs.
#ifndef MINT_SERVE_REPLY_H
#define MINT_SERVE_REPLY_H

#include <json-c/json.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

// The status of the last response queued by this thread (thread per connection: this request's),
// for /metrics and -v.
extern _Thread_local unsigned reply_last_status;
// The origin to allow in this thread's answers (CORS), set by the router per request; NULL: none.
extern _Thread_local const char *reply_cors_origin;

// Sends a JSON body (consumed) with a status; returns MHD's answer.
enum MHD_Result reply_json(struct MHD_Connection *c, unsigned status, json_object *body);
// Sends OpenAI's error shape: {"error": {"message", "type", "param", "code"}}, code being the
// status as llama-server sends it.
enum MHD_Result reply_error(struct MHD_Connection *c, unsigned status, const char *type,
                            const char *param, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
// 400 exceed_context_size_error (llama-server's), with n_prompt_tokens and n_ctx.
enum MHD_Result reply_exceed_context(struct MHD_Connection *c, const char *param, int n_prompt,
                                     int n_ctx);
// The same shape as an object (for a stream's error event or a body), type "server_error".
json_object *reply_error_object(const char *msg);
// Sends n bytes of text with a content type.
// Queues a response the caller built (headers of its own), with the CORS headers of every answer.
enum MHD_Result reply_queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *r);
enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *type,
                           const char *s, size_t n);
// 503 with Retry-After: every slot and the queue are full.
enum MHD_Result reply_busy(struct MHD_Connection *c);
// 405 for a known path asked with another method; allow lists the methods it takes ("GET, HEAD").
enum MHD_Result reply_not_allowed(struct MHD_Connection *c, const char *method, const char *url,
                                  const char *allow);

// The body as a JSON object (strict, UTF-8 checked), or NULL after a 400 answer (*ret set).
json_object *reply_body_object(struct MHD_Connection *c, const char *body, size_t len,
                               enum MHD_Result *ret);

// Server-sent events: bytes waiting to go out, taken by a libmicrohttpd reader callback.
typedef struct reply_sse {
    char *out;       // [len] bytes queued (malloc'd)
    size_t len, pos; // queued, and already handed out
} reply_sse;

// Queues "data: <json>\n\n" (o consumed).
void reply_sse_event(reply_sse *s, json_object *o);
// Queues raw bytes ("data: [DONE]\n\n").
void reply_sse_raw(reply_sse *s, const char *p, size_t n);
// Copies up to max queued bytes to buf; returns how many (0: nothing queued).
size_t reply_sse_take(reply_sse *s, char *buf, size_t max);
void reply_sse_free(reply_sse *s);
// Queues a 200 text/event-stream response fed by reader (cls freed by done); MHD_NO on failure
// (done is then called).
enum MHD_Result reply_stream(struct MHD_Connection *c, MHD_ContentReaderCallback reader, void *cls,
                             MHD_ContentReaderFreeCallback done);
// The same with another status and Content-Type (NULL: none), for a body passed through as it
// arrives (the CORS proxy's).
enum MHD_Result reply_stream_status(struct MHD_Connection *c, unsigned status, const char *type,
                                    MHD_ContentReaderCallback reader, void *cls,
                                    MHD_ContentReaderFreeCallback done);

// A JSON string of bytes that may hold invalid UTF-8 (a token can end inside a character):
// invalid bytes become U+FFFD.
json_object *reply_utf8_string(const char *s, size_t n);
// The end of the longest prefix of s[0..n) that does not stop inside a UTF-8 character.
size_t reply_utf8_complete(const char *s, size_t n);

#endif // MINT_SERVE_REPLY_H
