// models_http.c - router mode's daemon (libmicrohttpd, thread per connection as in single-model
// mode, so that a request may block while its model loads) and the router's own endpoints, in
// llama-server's shapes: GET /models (?reload=1), POST /models/load, /models/unload,
// /models/reload, GET /models/sse, GET /props (the router's; ?model= asks the model's), GET
// /health. The generation and token endpoints go to the child of the request's "model" (the JSON
// body's, or ?model= for a GET); POST /models and DELETE /models (downloading, removing cached
// files) are refused: mint never downloads.
#include "models_http.h"
#include "cli.h"

#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct router {
    const serve_config *cfg;
    models *r;
    atomic_bool stopping; // SIGTERM came: /models/sse streams end
} router;

// One request's state while its body arrives.
typedef struct body {
    char *p;
    size_t n, cap;
    bool too_big; // past --max-body: dropped, answered 413
} body;

// Whether the client of fd hung up (it gave up waiting for a model).
static bool client_gone(void *ctx) {
    const int fd = *(const int *)ctx;
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};
    return fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static enum MHD_Result props(router *rt, struct MHD_Connection *c) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "role", json_object_new_string("router"));
    json_object_object_add(o, "max_instances", json_object_new_int(rt->cfg->models_max));
    json_object_object_add(o, "models_autoload",
                           json_object_new_boolean(!rt->cfg->no_models_autoload));
    json_object_object_add(o, "model_alias", json_object_new_string(SERVE_TOOL));
    json_object_object_add(o, "model_path", json_object_new_string("none"));
    json_object *dgs = json_object_new_object();
    json_object_object_add(dgs, "params", json_object_new_object());
    json_object_object_add(dgs, "n_ctx", json_object_new_int(0));
    json_object_object_add(o, "default_generation_settings", dgs);
    char build[128];
    // llama-server's build_info starts with "b" (its build number): mint's says "build".
    snprintf(build, sizeof build, "build mint %s", mint_version());
    json_object_object_add(o, "build_info", json_object_new_string(build));
    return reply_json(c, 200, o);
}

static enum MHD_Result list(router *rt, struct MHD_Connection *c) {
    const char *reload = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "reload");
    char err[700];
    if (reload && *reload && !models_reload(rt->r, err, sizeof err))
        return reply_error(c, 400, "invalid_request_error", NULL, "%s", err);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "data", models_json(rt->r));
    json_object_object_add(o, "object", json_object_new_string("list"));
    return reply_json(c, 200, o);
}

static enum MHD_Result success(struct MHD_Connection *c) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "success", json_object_new_boolean(true));
    return reply_json(c, 200, o);
}

// The "model" of a JSON body into out; false after an answer (*ret set).
static bool body_model(struct MHD_Connection *c, const serve_call *call, char *out, size_t cap,
                       enum MHD_Result *ret) {
    json_object *o = reply_body_object(c, call->body, call->len, ret);
    if (!o) return false;
    json_object *m = NULL;
    const bool ok = json_object_object_get_ex(o, "model", &m) &&
                    json_object_is_type(m, json_type_string) && json_object_get_string_len(m) > 0;
    if (ok) snprintf(out, cap, "%s", json_object_get_string(m));
    json_object_put(o);
    if (!ok)
        *ret = reply_error(c, 400, "invalid_request_error", "model",
                           "model name is missing from the request");
    return ok;
}

static enum MHD_Result load_unload(router *rt, struct MHD_Connection *c, const serve_call *call,
                                   bool load) {
    char name[512], err[700];
    enum MHD_Result ret;
    if (!body_model(c, call, name, sizeof name, &ret)) return ret;
    const bool ok = load ? models_load(rt->r, name, err, sizeof err)
                         : models_unload(rt->r, name, err, sizeof err);
    if (!ok) {
        const bool missing = !models_resolve(rt->r, name, err + 600, 100);
        return reply_error(c, missing && load ? 404 : 400,
                           missing && load ? "not_found_error" : "invalid_request_error", "model",
                           "%s", err);
    }
    return success(c);
}

// /models/sse: a stream of the registry's events, one "data: {...}" each.
typedef struct sse {
    router *rt;
    unsigned long seq;
    int fd;
} sse;

static ssize_t sse_read(void *cls, uint64_t pos, char *out, size_t max) {
    sse *s = cls;
    (void)pos;
    for (;;) {
        if (atomic_load(&s->rt->stopping) || client_gone(&s->fd))
            return MHD_CONTENT_READER_END_OF_STREAM;
        char *ev = models_next_event(s->rt->r, &s->seq, 1);
        if (!ev) continue;
        const int n = snprintf(out, max, "data: %s\n\n", ev);
        free(ev);
        if (n > 0 && (size_t)n < max) return n;
    }
}

static enum MHD_Result events(router *rt, struct MHD_Connection *c) {
    sse *s = calloc(1, sizeof *s);
    if (!s) return MHD_NO;
    s->rt = rt;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    s->fd = ci ? ci->connect_fd : -1;
    models_next_event(rt->r, &s->seq, 0); // from now on
    return reply_stream(c, sse_read, s, free);
}

// The endpoints a child answers (llama-server's, whether or not mint-serve has them: the
// child says 404 itself).
static bool forwarded(const char *url, bool post) {
    static const char *const posts[] = {"/completion",
                                        "/completions",
                                        "/v1/completions",
                                        "/chat/completions",
                                        "/v1/chat/completions",
                                        "/v1/responses",
                                        "/responses",
                                        "/v1/messages",
                                        "/v1/messages/count_tokens",
                                        "/infill",
                                        "/embedding",
                                        "/embeddings",
                                        "/v1/embeddings",
                                        "/rerank",
                                        "/reranking",
                                        "/v1/rerank",
                                        "/v1/reranking",
                                        "/tokenize",
                                        "/detokenize",
                                        "/apply-template",
                                        "/v1/chat/completions/input_tokens",
                                        "/chat/completions/input_tokens",
                                        "/v1/responses/input_tokens",
                                        "/props",
                                        "/slots",
                                        "/lora-adapters",
                                        "/v1/next",
                                        "/v1/audio/transcriptions",
                                        NULL};
    static const char *const gets[] = {"/metrics", "/slots", "/props", "/lora-adapters", NULL};
    for (const char *const *p = post ? posts : gets; *p; p++)
        if (!strcmp(url, *p)) return true;
    return false;
}

static enum MHD_Result proxy(router *rt, struct MHD_Connection *c, const serve_call *call,
                             bool post) {
    char want[512], name[512], err[700];
    enum MHD_Result ret;
    if (post) {
        if (!body_model(c, call, want, sizeof want, &ret)) return ret;
    } else {
        const char *m = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "model");
        if (!m || !*m)
            return reply_error(c, 400, "invalid_request_error", "model",
                               "model name is missing from the request");
        snprintf(want, sizeof want, "%s", m);
    }
    if (!models_resolve(rt->r, want, name, sizeof name))
        return reply_error(c, 400, "invalid_request_error", "model", "model '%s' not found", want);
    const char *a = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "autoload");
    const bool autoload =
        a && *a ? !strcmp(a, "true") || !strcmp(a, "1") : !rt->cfg->no_models_autoload;
    if (!autoload && !models_running(rt->r, name))
        return reply_error(c, 400, "invalid_request_error", "model", "model is not loaded");
    if (autoload) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        int fd = ci ? ci->connect_fd : -1;
        if (!models_ready(rt->r, name, client_gone, &fd, err, sizeof err)) {
            if (client_gone(&fd)) return MHD_NO;
            return reply_error(c, 500, "server_error", NULL, "%s", err);
        }
    }
    return models_forward(rt->r, rt->cfg, c, call, name, post);
}

static enum MHD_Result dispatch(router *rt, struct MHD_Connection *c, const serve_call *call,
                                bool too_big) {
    reply_cors_origin = http_cors_origin_for(rt->cfg, c);
    const char *m = call->method, *url = call->url;
    if (!strcmp(m, "OPTIONS")) return http_preflight(c);
    const bool get = !strcmp(m, "GET") || !strcmp(m, "HEAD"), post = !strcmp(m, "POST");
    if (get && (!strcmp(url, "/health") || !strcmp(url, "/v1/health"))) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "status", json_object_new_string("ok"));
        return reply_json(c, 200, o);
    }
    if (!http_authorized_by(rt->cfg, c))
        return reply_error(c, 401, "authentication_error", NULL,
                           "a valid API key is needed (Authorization: Bearer KEY)");
    if (too_big)
        return reply_error(c, 413, "invalid_request_error", NULL,
                           "the body is larger than the %zu bytes allowed", rt->cfg->max_body);
    const bool models_url = !strcmp(url, "/models") || !strcmp(url, "/v1/models");
    if (get && models_url) return list(rt, c);
    if (get && !strcmp(url, "/props") &&
        !MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "model"))
        return props(rt, c);
    if (get && !strcmp(url, "/models/sse")) return events(rt, c);
    if (post && !strcmp(url, "/models/load")) return load_unload(rt, c, call, true);
    if (post && !strcmp(url, "/models/unload")) return load_unload(rt, c, call, false);
    if (post && !strcmp(url, "/models/reload")) {
        char err[700];
        if (!models_reload(rt->r, err, sizeof err))
            return reply_error(c, 400, "invalid_request_error", NULL, "%s", err);
        return success(c);
    }
    if ((post || !strcmp(m, "DELETE")) && models_url)
        return reply_error(c, 501, "not_supported_error", NULL,
                           "mint-serve does not %s models: put the file in the Hugging Face "
                           "cache or --models-dir yourself (e.g. with llama.cpp's -hf)",
                           post ? "download" : "delete");
    if ((get || post) && !strcmp(url, "/tools")) return tools_answer(c, call); // --tools
    if ((get || post) && !strcmp(url, "/cors-proxy"))                          // --ui-mcp-proxy
        return cors_proxy_answer(rt->cfg, c, call);
    if ((get || post) && forwarded(url, post)) return proxy(rt, c, call, post);
    return reply_error(c, 404, "invalid_request_error", NULL, "no endpoint %s %s", m, url);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls) {
    router *rt = cls;
    (void)version;
    body *b = *con_cls;
    if (!b) {
        if (!(b = calloc(1, sizeof *b))) return MHD_NO;
        *con_cls = b;
        return MHD_YES;
    }
    if (*upload_size) {
        if (!b->too_big && b->n + *upload_size > rt->cfg->max_body) {
            b->too_big = true;
            free(b->p);
            b->p = NULL;
            b->n = b->cap = 0;
        }
        if (!b->too_big) {
            if (b->n + *upload_size + 1 > b->cap) {
                const size_t cap = (b->n + *upload_size + 1) * 2;
                char *g = realloc(b->p, cap);
                if (!g) return MHD_NO;
                b->p = g;
                b->cap = cap;
            }
            memcpy(b->p + b->n, upload, *upload_size);
            b->n += *upload_size;
            b->p[b->n] = '\0';
        }
        *upload_size = 0;
        return MHD_YES;
    }
    reply_last_status = 0;
    const serve_call call = {method, url, b->p, b->n};
    const enum MHD_Result r = dispatch(rt, c, &call, b->too_big);
    if (rt->cfg->verbose)
        fprintf(stderr, SERVE_TOOL ": router: %s %s %u\n", method, url,
                reply_last_status ? reply_last_status : 200);
    return r;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)cls, (void)c, (void)toe;
    body *b = *con_cls;
    if (b) free(b->p), free(b);
    *con_cls = NULL;
}

int models_router_run(const serve_config *cfg, int argc, char **argv, void (*on_stop)(void *),
                      void *stop_cls) {
    char err[800];
    router rt = {.cfg = cfg};
    if (!(rt.r = models_new(cfg, argc, argv, err, sizeof err))) {
        fprintf(stderr, SERVE_TOOL ": %s\n", err);
        return 1;
    }
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)cfg->port)};
    if (inet_pton(AF_INET, cfg->host, &addr.sin_addr) != 1) {
        fprintf(stderr, SERVE_TOOL ": --host '%s' is not an IPv4 address\n", cfg->host);
        models_free(rt.r);
        return 1;
    }
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
            MHD_USE_ERROR_LOG,
        (uint16_t)cfg->port, NULL, NULL, on_request, &rt, MHD_OPTION_SOCK_ADDR,
        (const struct sockaddr *)&addr, MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_connections,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, cfg->max_header, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)(cfg->timeout + 30), MHD_OPTION_NOTIFY_COMPLETED, on_completed, &rt,
        MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, SERVE_TOOL ": cannot listen on %s:%d (in use, or not allowed)\n", cfg->host,
                cfg->port);
        models_free(rt.r);
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    fprintf(stderr,
            SERVE_TOOL ": router mode on http://%s:%d/ (models start on demand, at most %d at "
                       "once%s)\n",
            cfg->host, info ? info->port : cfg->port, cfg->models_max,
            cfg->no_models_autoload ? "; only POST /models/load starts one" : "");
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    int sig = 0;
    sigwait(&stop_signals, &sig);
    fprintf(stderr, SERVE_TOOL ": %s: stopping the models' servers\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM");
    atomic_store(&rt.stopping, true);
    if (on_stop) on_stop(stop_cls);
    MHD_socket s = MHD_quiesce_daemon(d);
    if (s != MHD_INVALID_SOCKET) close(s);
    models_stop_all(rt.r); // every child stopped and reaped: forwarded answers end
    MHD_stop_daemon(d);
    models_free(rt.r);
    fprintf(stderr, SERVE_TOOL ": stopped\n");
    return 0;
}
