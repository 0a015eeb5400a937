// handlers.h - mint-serve's endpoints, one function per endpoint, in three families:
// handlers_info.c (the page, /health, /v1/models, /metrics), handlers_tokens.c (/tokenize,
// /detokenize) and handlers_gen.c (/v1/completions, /v1/chat/completions, /v1/next). The router
// (router.c) picks one by method and path; a handler answers through reply.h and never calls
// back into the router.
#ifndef MINT_SERVE_HANDLERS_H
#define MINT_SERVE_HANDLERS_H

#include "reply.h"
#include "serve.h"

// The server's state that the router owns and the handlers read.
struct serve_http {
    const serve_config *cfg;
    serve_sched *e;
    serve_metrics *m;
    const char *tmpl;        // chat template's Jinja source (owned by main), NULL: chat refused
    mint_chat_format format; // how the template writes tool calls and reasoning
    bool reasons;            // the template reasons before answering (mint_chat_format_reasons)
    struct MHD_Daemon *d;
    int port;              // bound port
    atomic_bool stopping;  // shutting down: /health says so, new requests are refused
    atomic_ullong next_id; // request ids
    int32_t n_vocab;
    atomic_int active; // requests begun and not yet done with (their answer written or not)
    bool space_prefix; // the vocabulary puts a space before the text (mint_vocab_adds_space_prefix)
    int32_t *eog;      // [n_eog] the end-of-generation tokens (ignore_eos bans them)
    int n_eog;
    atomic_bool listening; // the daemon has started: libmicrohttpd's messages are printed, not kept
    char http_msg[256];    // libmicrohttpd's last message before it listened (why it could not)
};

// One request as the router hands it over: the body received (NUL-terminated; NULL when none).
typedef struct serve_call {
    const char *method; // "GET", "POST", ...
    const char *url;    // the path
    const char *body;   // [len] bytes
    size_t len;
} serve_call;

typedef enum MHD_Result (*serve_handler)(serve_http *h, struct MHD_Connection *c,
                                         const serve_call *r);

// handlers_info.c
enum MHD_Result handle_page(serve_http *h, struct MHD_Connection *c, const serve_call *r);
enum MHD_Result handle_favicon(serve_http *h, struct MHD_Connection *c, const serve_call *r);
enum MHD_Result handle_health(serve_http *h, struct MHD_Connection *c, const serve_call *r);
enum MHD_Result handle_models(serve_http *h, struct MHD_Connection *c, const serve_call *r);
enum MHD_Result handle_metrics(serve_http *h, struct MHD_Connection *c, const serve_call *r);
// handlers_anthropic.c
enum MHD_Result handle_messages(serve_http *h, struct MHD_Connection *c, const serve_call *r);
enum MHD_Result handle_count_tokens(serve_http *h, struct MHD_Connection *c, const serve_call *r);
// handlers_responses_http.c
enum MHD_Result handle_responses(serve_http *h, struct MHD_Connection *c, const serve_call *r);
enum MHD_Result handle_responses_tokens(serve_http *h, struct MHD_Connection *c,
                                        const serve_call *r);
// handlers_props.c
enum MHD_Result handle_props(serve_http *h, struct MHD_Connection *c, const serve_call *r);
enum MHD_Result handle_slots(serve_http *h, struct MHD_Connection *c, const serve_call *r);
// handlers_gcp.c: Vertex AI's prediction route (AIP_MODE=PREDICTION). paths: the POST endpoints
// an instance may name, in the order their camelCase names are matched.
bool gcp_enabled(void);
bool gcp_is_predict(const char *url);
bool gcp_is_health(const char *url);
// port: this server's (the instances are posted to it).
enum MHD_Result handle_gcp_predict(int port, struct MHD_Connection *c, const serve_call *r,
                                   const char *const *paths, int n_paths);
// handlers_slots.c: POST /slots/N?action=save|restore|erase
enum MHD_Result handle_slot_action(serve_http *h, struct MHD_Connection *c, const serve_call *r);
enum MHD_Result handle_apply_template(serve_http *h, struct MHD_Connection *c, const serve_call *r);
// handlers_tokens.c
enum MHD_Result handle_tokenize(serve_http *h, struct MHD_Connection *c, const serve_call *r);
enum MHD_Result handle_detokenize(serve_http *h, struct MHD_Connection *c, const serve_call *r);
// handlers_gen.c
enum MHD_Result handle_completions(serve_http *h, struct MHD_Connection *c, const serve_call *r);
enum MHD_Result handle_chat(serve_http *h, struct MHD_Connection *c, const serve_call *r);
enum MHD_Result handle_next(serve_http *h, struct MHD_Connection *c, const serve_call *r);
enum MHD_Result handle_input_tokens(serve_http *h, struct MHD_Connection *c, const serve_call *r);
enum MHD_Result handle_completion_native(serve_http *h, struct MHD_Connection *c,
                                         const serve_call *r);

// handlers_infill.c: POST /infill (fill-in-the-middle), answered in /completion's shape.
enum MHD_Result handle_infill(serve_http *h, struct MHD_Connection *c, const serve_call *r);

// handlers_agent.c: GET/POST /tools (403 without tools), and the 403 of a feature turned off.
enum MHD_Result handle_tools(serve_http *h, struct MHD_Connection *c, const serve_call *r);
enum MHD_Result reply_feature_disabled(struct MHD_Connection *c);
// cors_proxy.c: GET/POST /cors-proxy?url= (403 without --ui-mcp-proxy).
enum MHD_Result handle_cors_proxy(serve_http *h, struct MHD_Connection *c, const serve_call *r);
// The same two for router mode's daemon (models_http.c), which has no serve_http: the router
// answers /tools and /cors-proxy itself, as llama-server's does.
enum MHD_Result tools_answer(struct MHD_Connection *c, const serve_call *r);
enum MHD_Result cors_proxy_answer(const serve_config *cfg, struct MHD_Connection *c,
                                  const serve_call *r);

// handlers_tokens.c: a text's ids in a malloc'd array, however many tokens it takes.
mint_status serve_tokenize(const mint_model *m, const char *text, size_t len, bool add_special,
                           bool special, int32_t **ids, size_t *n, mint_err *err);

// router.c, for router mode's own daemon (models_http.c), which has no serve_http: whether the
// request carries an API key of cfg, the origin its answers may allow (CORS), a preflight's answer.
bool http_authorized_by(const serve_config *cfg, struct MHD_Connection *c);
const char *http_cors_origin_for(const serve_config *cfg, struct MHD_Connection *c);
enum MHD_Result http_preflight(struct MHD_Connection *c);

#endif // MINT_SERVE_HANDLERS_H
