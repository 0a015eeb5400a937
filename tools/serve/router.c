// router.c - mint-serve's HTTP side on libmicrohttpd (Debian's libmicrohttpd-dev: a maintained,
// widely deployed C HTTP/1.1 server library whose thread-per-connection mode lets a request's
// thread block while its tokens are generated, and which limits connections, header memory and
// time itself). The daemon, the body limit, authentication, and routing: a request goes to its
// handler by method and path alone (the table below); a known path asked with another method is
// answered 405 with an Allow header, an unknown one 404. Handlers (handlers_*.c) answer through
// reply.c and never call back here.
#include "handlers.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// One request's state while its body arrives.
typedef struct conn {
    char *body; // [len] bytes received
    size_t len, cap;
    bool too_big; // the body passed --max-body: the rest is dropped and 413 sent
    double t0; // monotonic seconds when the headers were in: the body must follow within --timeout
    // For -v: what the request was and how it was answered, logged when the connection is done
    // with it (so a line means the whole answer was written, or says it was not).
    char method[8], url[64], rid[64]; // rid: the client's X-Request-Id (printable), or "-"
    unsigned status;
} conn;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// libmicrohttpd's own messages, in mint-serve's one-line format: before the daemon listens they
// are kept (the last one explains a failure to start, in mint's error line); after, printed.
static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
    serve_http *h = cls;
    char line[sizeof h->http_msg];
    vsnprintf(line, sizeof line, fmt, ap);
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    // Its error pages come quoted in the message: the status says enough.
    char *page = strstr(line, " ('<html>");
    if (page) page[0] = ')', page[1] = '\0';
    size_t n = strlen(line);
    while (n > 0 && line[n - 1] == ' ') line[--n] = '\0';
    if (!atomic_load(&h->listening)) {
        snprintf(h->http_msg, sizeof h->http_msg, "%s", line);
        return;
    }
    fprintf(stderr, SERVE_TOOL ": http: %s\n", line);
}

// Whether got equals want, in time that depends on their lengths only.
static bool same_key(const char *want, const char *got) {
    const size_t wl = strlen(want), gl = got ? strlen(got) : 0;
    unsigned diff = (unsigned)(wl ^ gl);
    for (size_t i = 0; i < wl; i++)
        diff |= (unsigned char)want[i] ^ (unsigned char)(i < gl ? got[i] : 0);
    return diff == 0;
}

// Whether the request carries one of the API keys: "Authorization: Bearer KEY" or "X-Api-Key:
// KEY" (Anthropic's clients send the latter). Every key is compared, whichever matches.
static bool authorized(const serve_http *h, struct MHD_Connection *c) {
    if (h->cfg->n_api_keys == 0) return true;
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    const char *xkey = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Api-Key");
    const char *bearer = auth && !strncmp(auth, "Bearer ", 7) ? auth + 7 : NULL;
    bool ok = false;
    for (int i = 0; i < h->cfg->n_api_keys; i++)
        ok |= same_key(h->cfg->api_keys[i], bearer) | same_key(h->cfg->api_keys[i], xkey);
    return ok;
}

// Whether origin ("http://host:port") is a page served from this machine: host localhost,
// 127.0.0.1 or [::1], any scheme and port (--cors-origins' word "localhost").
static bool local_origin(const char *origin) {
    const char *host = strstr(origin, "://");
    host = host ? host + 3 : origin;
    static const char *const names[] = {"localhost", "127.0.0.1", "[::1]"};
    for (size_t i = 0; i < 3; i++) {
        const size_t n = strlen(names[i]);
        if (!strncmp(host, names[i], n) && (host[n] == '\0' || host[n] == ':' || host[n] == '/'))
            return true;
    }
    return false;
}

// The Origin of a browser's request when --cors-origins allows it (a listed origin, "*" for any,
// "localhost" for this machine's pages), else NULL: the answer then carries no CORS header and
// the browser keeps it from the page.
static const char *cors_origin(const serve_http *h, struct MHD_Connection *c) {
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    const char *allowed = h->cfg->cors_origins;
    if (!origin || !allowed) return NULL;
    for (const char *p = allowed; *p;) {
        const size_t n = strcspn(p, ",");
        if ((n == 1 && *p == '*') || (n == strlen(origin) && !strncmp(p, origin, n)) ||
            (n == 9 && !strncmp(p, "localhost", 9) && local_origin(origin)))
            return origin;
        p += n + (p[n] == ',');
    }
    return NULL;
}

// A CORS preflight (OPTIONS): the methods and the headers asked for, allowed for an allowed
// origin. Answered before authentication: browsers send no credentials with a preflight.
static enum MHD_Result preflight(struct MHD_Connection *c) {
    struct MHD_Response *r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
    if (!r) return MHD_NO;
    if (reply_cors_origin) {
        MHD_add_response_header(r, "Access-Control-Allow-Origin", reply_cors_origin);
        MHD_add_response_header(r, "Access-Control-Allow-Credentials", "true");
        MHD_add_response_header(r, "Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
        MHD_add_response_header(r, "Access-Control-Allow-Headers", "*");
        MHD_add_response_header(r, "Access-Control-Max-Age", "86400");
        MHD_add_response_header(r, "Vary", "Origin");
    }
    reply_last_status = 200; // llama-server's status for a preflight
    enum MHD_Result ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

// The routes. open: answered without the API key; body: the body must be within --max-body.
typedef struct route {
    const char *path;
    const char *allow; // the methods, as the Allow header lists them
    bool post;         // POST (else GET and HEAD)
    bool open, body;
    serve_handler handler;
    const char *endpoint; // its label in /metrics (a POST route whose allow names GET too
                          // answers both)
} route;

static const route ROUTES[] = {
    {"/", "GET, HEAD", false, true, false, handle_page, "/"},
    {"/favicon.ico", "GET, HEAD", false, true, false, handle_favicon, "/favicon.ico"},
    {"/health", "GET, HEAD", false, true, false, handle_health, "/health"},
    {"/v1/models", "GET, HEAD", false, false, false, handle_models, "/v1/models"},
    {"/metrics", "GET, HEAD", false, false, false, handle_metrics, "/metrics"},
    {"/tokenize", "POST", true, false, true, handle_tokenize, "/tokenize"},
    {"/detokenize", "POST", true, false, true, handle_detokenize, "/detokenize"},
    {"/v1/completions", "POST", true, false, true, handle_completions, "/v1/completions"},
    {"/v1/chat/completions", "POST", true, false, true, handle_chat, "/v1/chat/completions"},
    {"/v1/next", "POST", true, false, true, handle_next, "/v1/next"},
    {"/completion", "POST", true, false, true, handle_completion_native, "/completion"},
    {"/props", "GET, HEAD, POST", true, false, true, handle_props, "/props"},
    {"/slots", "GET, HEAD", false, false, false, handle_slots, "/slots"},
    {"/apply-template", "POST", true, false, true, handle_apply_template, "/apply-template"},
    {"/v1/chat/completions/input_tokens", "POST", true, false, true, handle_input_tokens,
     "/v1/chat/completions/input_tokens"},
    {"/chat/completions/input_tokens", "POST", true, false, true, handle_input_tokens,
     "/v1/chat/completions/input_tokens"},
    {"/v1/messages", "POST", true, false, true, handle_messages, "/v1/messages"},
    {"/v1/messages/count_tokens", "POST", true, false, true, handle_count_tokens,
     "/v1/messages/count_tokens"},
    {"/v1/responses", "POST", true, false, true, handle_responses, "/v1/responses"},
    {"/v1/responses/input_tokens", "POST", true, false, true, handle_responses_tokens,
     "/v1/responses/input_tokens"},
    {"/tools", "GET, HEAD, POST", true, false, true, handle_tools, "/tools"},
    {"/cors-proxy", "GET, HEAD, POST", true, false, true, handle_cors_proxy, "/cors-proxy"},
    {"/infill", "POST", true, false, true, handle_infill, "/infill"},
    // llama-server's other names of the same endpoints (counted under the first name; its
    // /completions is its own shape, /completion's, not OpenAI's /v1/completions)
    {"/v1/health", "GET, HEAD", false, true, false, handle_health, "/health"},
    {"/models", "GET, HEAD", false, false, false, handle_models, "/v1/models"},
    {"/completions", "POST", true, false, true, handle_completion_native, "/completion"},
    {"/chat/completions", "POST", true, false, true, handle_chat, "/v1/chat/completions"},
    {"/responses", "POST", true, false, true, handle_responses, "/v1/responses"},
    {"/responses/input_tokens", "POST", true, false, true, handle_responses_tokens,
     "/v1/responses/input_tokens"},
};

static enum MHD_Result dispatch(serve_http *h, struct MHD_Connection *c, const serve_call *r,
                                bool too_big, const char **endpoint) {
    reply_cors_origin = cors_origin(h, c);
    if (!strcmp(r->method, "OPTIONS")) {
        *endpoint = "OPTIONS";
        return preflight(c);
    }
    const bool get = !strcmp(r->method, "GET") || !strcmp(r->method, "HEAD");
    const bool post = !strcmp(r->method, "POST");
    const route *rt = NULL;
    for (size_t i = 0; i < sizeof ROUTES / sizeof ROUTES[0] && !rt; i++)
        if (!strcmp(r->url, ROUTES[i].path)) rt = &ROUTES[i];
    for (size_t i = 0; !rt && gcp_is_health(r->url) && i < sizeof ROUTES / sizeof ROUTES[0]; i++)
        if (!strcmp(ROUTES[i].path, "/health")) rt = &ROUTES[i]; // under AIP_HEALTH_ROUTE too
    if (!rt && post && gcp_is_predict(r->url)) {
        *endpoint = "/predict";
        if (!authorized(h, c))
            return reply_error(c, 401, "authentication_error", NULL,
                               "a valid API key is needed (Authorization: Bearer KEY)");
        if (too_big)
            return reply_error(c, 413, "invalid_request_error", NULL,
                               "the body is larger than the %zu bytes allowed", h->cfg->max_body);
        const char *paths[sizeof ROUTES / sizeof ROUTES[0]];
        int n_paths = 0;
        for (size_t i = 0; i < sizeof ROUTES / sizeof ROUTES[0]; i++)
            if (ROUTES[i].post) paths[n_paths++] = ROUTES[i].path;
        return handle_gcp_predict(h->port, c, r, paths, n_paths);
    }
    static const route slot_action = {"/slots/",          "POST",    true, false, true,
                                      handle_slot_action, "/slots/N"};
    if (!rt && !strncmp(r->url, "/slots/", 7)) rt = &slot_action; // the slot's id in the path
    if (!rt) {
        *endpoint = "other";
        if (!authorized(h, c))
            return reply_error(c, 401, "authentication_error", NULL,
                               "a valid API key is needed (Authorization: Bearer KEY)");
        return reply_error(c, 404, "invalid_request_error", NULL, "no endpoint %s %s", r->method,
                           r->url);
    }
    *endpoint = rt->endpoint;
    if (!rt->open && !authorized(h, c))
        return reply_error(c, 401, "authentication_error", NULL,
                           "a valid API key is needed (Authorization: Bearer KEY)");
    if (rt->post ? !(post || (get && strstr(rt->allow, "GET"))) : !get)
        return reply_not_allowed(c, r->method, r->url, rt->allow);
    if (rt->body && too_big)
        return reply_error(c, 413, "invalid_request_error", NULL,
                           "the body is larger than the %zu bytes allowed", h->cfg->max_body);
    return rt->handler(h, c, r);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls) {
    serve_http *h = cls;
    (void)version;
    conn *k = *con_cls;
    if (!k) { // the headers are in: a body may follow
        k = calloc(1, sizeof *k);
        if (!k) return MHD_NO;
        k->t0 = now_s();
        *con_cls = k;
        atomic_fetch_add(&h->active, 1);
        return MHD_YES;
    }
    if (*upload_size) {
        // A body that trickles in forever (a byte now and then keeps libmicrohttpd's idle
        // timeout from firing) would hold its thread: --timeout bounds the whole request.
        if (now_s() - k->t0 > h->cfg->timeout) {
            metrics_request(h->m, "other", 408);
            fprintf(stderr,
                    SERVE_TOOL ": %s %s: the body did not arrive within --timeout %g s; "
                               "closing the connection\n",
                    method, url, h->cfg->timeout);
            return MHD_NO; // closes the connection; no answer can be sent mid-body
        }
        if (!k->too_big && k->len + *upload_size > h->cfg->max_body) {
            k->too_big = true;
            free(k->body);
            k->body = NULL;
            k->len = k->cap = 0;
        }
        if (!k->too_big) {
            if (k->len + *upload_size + 1 > k->cap) {
                size_t cap = (k->len + *upload_size + 1) * 2;
                cap = cap > h->cfg->max_body + 1 ? h->cfg->max_body + 1 : cap;
                char *b = realloc(k->body, cap);
                if (!b) return MHD_NO;
                k->body = b;
                k->cap = cap;
            }
            memcpy(k->body + k->len, upload, *upload_size);
            k->len += *upload_size;
            k->body[k->len] = '\0';
        }
        *upload_size = 0;
        return MHD_YES;
    }
    const char *endpoint = url;
    reply_last_status = 0;
    const serve_call call = {method, url, k->body, k->len};
    enum MHD_Result r = dispatch(h, c, &call, k->too_big, &endpoint);
    k->status = reply_last_status ? reply_last_status : 200;
    metrics_request(h->m, endpoint, (int)k->status);
    if (h->cfg->verbose) {
        snprintf(k->method, sizeof k->method, "%s", method);
        snprintf(k->url, sizeof k->url, "%s", url);
        const char *rid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Request-Id");
        size_t n = 0;
        for (; rid && rid[n] && n + 1 < sizeof k->rid; n++)
            k->rid[n] = rid[n] > ' ' && rid[n] < 127 ? rid[n] : '?';
        k->rid[n] = '\0';
        if (!n) strcpy(k->rid, "-");
    }
    return r;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    const serve_http *h = cls;
    (void)c;
    conn *k = *con_cls;
    if (!k) return;
    if (h->cfg->verbose && k->method[0])
        fprintf(stderr, SERVE_TOOL ": %s %s %u id=%s %s\n", k->method, k->url, k->status, k->rid,
                toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "answered" : "interrupted");
    free(k->body);
    free(k);
    *con_cls = NULL;
    atomic_fetch_sub(&((serve_http *)cls)->active, 1);
}

serve_http *http_start(const serve_config *cfg, serve_sched *e, serve_metrics *m, const char *tmpl,
                       char *err, size_t errlen) {
    serve_http *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->cfg = cfg;
    h->e = e;
    h->m = m;
    h->tmpl = tmpl;
    h->format = mint_chat_format_detect(tmpl);
    h->reasons = tmpl && mint_chat_format_reasons(tmpl); // once, not per streamed chunk
    mint_model_desc d;
    mint_model_describe(sched_model(e), &d);
    h->n_vocab = d.n_vocab;
    h->space_prefix = mint_vocab_adds_space_prefix(sched_model(e));
    for (int32_t id = 0; id < d.n_vocab; id++) // llama-server's ignore_eos bans these
        if (mint_token_is_eog(sched_model(e), id)) {
            int32_t *g = realloc(h->eog, (size_t)(h->n_eog + 1) * sizeof *g);
            if (!g) break;
            h->eog = g;
            h->eog[h->n_eog++] = id;
        }
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)cfg->port)};
    if (inet_pton(AF_INET, cfg->host, &addr.sin_addr) != 1) {
        snprintf(err, errlen, "--host '%s' is not an IPv4 address", cfg->host);
        free(h->eog);
        free(h);
        return NULL;
    }
    h->d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
            MHD_USE_ERROR_LOG,
        (uint16_t)cfg->port, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR,
        (const struct sockaddr *)&addr, MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_connections,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, cfg->max_header, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)(cfg->timeout + 30), MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h, MHD_OPTION_END);
    if (!h->d) {
        snprintf(err, errlen, "cannot listen on %s:%d: %s", cfg->host, cfg->port,
                 h->http_msg[0] ? h->http_msg : "in use, or not allowed");
        free(h->eog);
        free(h);
        return NULL;
    }
    atomic_store(&h->listening, true);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info ? info->port : cfg->port;
    return h;
}

int http_port(const serve_http *h) {
    return h->port;
}

void http_quiesce(serve_http *h) {
    atomic_store(&h->stopping, true);
    MHD_socket s = MHD_quiesce_daemon(h->d);
    if (s != MHD_INVALID_SOCKET) close(s);
}

void http_drain(serve_http *h, double seconds) {
    for (double until = serve_now() + seconds; atomic_load(&h->active) > 0 && serve_now() < until;)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
}

void http_stop(serve_http *h) {
    if (!h) return;
    MHD_stop_daemon(h->d);
    free(h->eog);
    free(h);
}

// Router mode's daemon (models_http.c) checks keys and origins as this one does: the same
// functions, over a serve_http that holds only the settings.
bool http_authorized_by(const serve_config *cfg, struct MHD_Connection *c) {
    const serve_http h = {.cfg = cfg};
    return authorized(&h, c);
}

const char *http_cors_origin_for(const serve_config *cfg, struct MHD_Connection *c) {
    const serve_http h = {.cfg = cfg};
    return cors_origin(&h, c);
}

enum MHD_Result http_preflight(struct MHD_Connection *c) {
    return preflight(c);
}
