// http.h - what http.c (the daemon, routing, small endpoints) and gen.c (the generation endpoints
// and their streams) share.
#ifndef MINT_SERVE_HTTP_H
#define MINT_SERVE_HTTP_H

#include "serve.h"

#include <json-c/json.h>
#include <microhttpd.h>

struct serve_http {
    const serve_config *cfg;
    serve_engine *e;
    serve_metrics *m;
    const char *tmpl; // chat template's Jinja source (owned by main), NULL: chat refused
    struct MHD_Daemon *d;
    int port;              // bound port
    atomic_bool stopping;  // shutting down: /health says so, new requests are refused
    atomic_ullong next_id; // request ids
    int32_t n_vocab;
    atomic_int active; // requests begun and not yet done with (their answer written or not)
    bool space_prefix; // the tokenizer puts a space before the text ("a" -> " a")
};

// The status of the last response queued by this thread (thread per connection: this request's),
// for /metrics.
extern _Thread_local unsigned http_last_status;

// Sends a JSON body (consumed) with a status; returns MHD's answer.
enum MHD_Result http_json(struct MHD_Connection *c, unsigned status, json_object *body);
// Sends OpenAI's error shape: {"error": {"message", "type", "param", "code"}}.
enum MHD_Result http_error(struct MHD_Connection *c, unsigned status, const char *type,
                           const char *param, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

// The generation endpoints (gen.c): POST /v1/chat/completions, /v1/completions, /v1/next.
enum MHD_Result gen_handle(serve_http *h, struct MHD_Connection *c, const char *endpoint,
                           const char *body, size_t len);

// A JSON string of bytes that may hold invalid UTF-8 (a token can end inside a character):
// invalid bytes become U+FFFD.
json_object *http_utf8_string(const char *s, size_t n);
// The end of the longest prefix of s[0..n) that does not stop inside a UTF-8 character.
size_t http_utf8_complete(const char *s, size_t n);

#endif // MINT_SERVE_HTTP_H
