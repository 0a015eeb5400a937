// http.c - mint-serve's HTTP side on libmicrohttpd (Debian's libmicrohttpd-dev: a maintained,
// widely deployed C HTTP/1.1 server library whose thread-per-connection mode lets a request's
// thread block while its tokens are generated, and which limits connections, header memory and
// time itself). Routing, authentication, body limits and the small endpoints live here; the
// generation endpoints in gen.c.
#include "http.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern const char mint_web_chat_html[];
extern const char mint_web_views_js[];

// One request's state while its body arrives.
typedef struct conn {
    char *body; // [len] bytes received
    size_t len, cap;
    bool too_big; // the body passed --max-body: the rest is dropped and 413 sent
    // For -v: what the request was and how it was answered, logged when the connection is done
    // with it (so a line means the whole answer was written, or says it was not).
    char method[8], url[64], rid[64]; // rid: the client's X-Request-Id (printable), or "-"
    unsigned status;
} conn;

_Thread_local unsigned http_last_status;

enum MHD_Result http_json(struct MHD_Connection *c, unsigned status, json_object *body) {
    http_last_status = status;
    size_t n;
    const char *s = json_object_to_json_string_length(body, JSON_C_TO_STRING_PLAIN, &n);
    struct MHD_Response *r = MHD_create_response_from_buffer(n, (void *)s, MHD_RESPMEM_MUST_COPY);
    json_object_put(body);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

enum MHD_Result http_error(struct MHD_Connection *c, unsigned status, const char *type,
                           const char *param, const char *fmt, ...) {
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_object *e = json_object_new_object();
    json_object_object_add(e, "message", json_object_new_string(msg));
    json_object_object_add(e, "type", json_object_new_string(type));
    json_object_object_add(e, "param", param ? json_object_new_string(param) : NULL);
    json_object_object_add(e, "code", NULL);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "error", e);
    return http_json(c, status, o);
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *type,
                            const char *s, size_t n) {
    http_last_status = status;
    struct MHD_Response *r = MHD_create_response_from_buffer(n, (void *)s, MHD_RESPMEM_MUST_COPY);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
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

json_object *http_utf8_string(const char *s, size_t n) {
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

size_t http_utf8_complete(const char *s, size_t n) {
    // A lead byte in the last three whose character runs past the end is held back.
    for (size_t back = 1; back <= 3 && back <= n; back++) {
        const unsigned char b = (unsigned char)s[n - back];
        if ((b & 0xC0) == 0x80) continue; // continuation: look further back
        const size_t want = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
        return want > back ? n - back : n;
    }
    return n;
}

// ---------------------------------------------------------------------------------------------
// Small endpoints

static enum MHD_Result models(serve_http *h, struct MHD_Connection *c) {
    json_object *m = json_object_new_object();
    json_object_object_add(m, "id", json_object_new_string(h->cfg->model_name));
    json_object_object_add(m, "object", json_object_new_string("model"));
    json_object_object_add(m, "created", json_object_new_int64(0));
    json_object_object_add(m, "owned_by", json_object_new_string("mint"));
    json_object *data = json_object_new_array();
    json_object_array_add(data, m);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "object", json_object_new_string("list"));
    json_object_object_add(o, "data", data);
    return http_json(c, 200, o);
}

// A JSON object body, or an error answer already sent (*ret set).
static json_object *body_object(struct MHD_Connection *c, const char *body, size_t len,
                                enum MHD_Result *ret) {
    json_tokener *tok = json_tokener_new();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = len ? json_tokener_parse_ex(tok, body, (int)len) : NULL;
    const bool ok = o && json_tokener_get_error(tok) == json_tokener_success &&
                    json_object_is_type(o, json_type_object);
    json_tokener_free(tok);
    if (ok) return o;
    json_object_put(o);
    *ret = http_error(c, 400, "invalid_request_error", NULL, "the body must be a JSON object");
    return NULL;
}

static enum MHD_Result tokenize(serve_http *h, struct MHD_Connection *c, const char *body,
                                size_t len) {
    enum MHD_Result ret;
    json_object *o = body_object(c, body, len, &ret), *content, *v;
    if (!o) return ret;
    if (!json_object_object_get_ex(o, "content", &content) ||
        !json_object_is_type(content, json_type_string)) {
        json_object_put(o);
        return http_error(c, 400, "invalid_request_error", "content", "'content' must be a string");
    }
    const bool add_special =
        json_object_object_get_ex(o, "add_special", &v) && json_object_get_boolean(v);
    const bool pieces =
        json_object_object_get_ex(o, "with_pieces", &v) && json_object_get_boolean(v);
    const size_t n = (size_t)json_object_get_string_len(content);
    int32_t *ids = malloc((n + 8) * sizeof *ids);
    size_t k = 0;
    mint_err err;
    const mint_model *m = engine_model(h->e);
    if (!ids || mint_tokenize(m, json_object_get_string(content), n, add_special, false, ids, n + 8,
                              &k, &err) != MINT_OK) {
        free(ids);
        json_object_put(o);
        return http_error(c, 400, "invalid_request_error", "content", "%s",
                          ids ? err.msg : "out of memory");
    }
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < k; i++) {
        if (!pieces) {
            json_object_array_add(arr, json_object_new_int(ids[i]));
            continue;
        }
        char buf[256];
        size_t pn = mint_token_to_piece(m, ids[i], true, buf, sizeof buf);
        json_object *t = json_object_new_object();
        json_object_object_add(t, "id", json_object_new_int(ids[i]));
        json_object_object_add(t, "piece", http_utf8_string(buf, pn < sizeof buf ? pn : 0));
        json_object_array_add(arr, t);
    }
    free(ids);
    json_object_put(o);
    json_object *out = json_object_new_object();
    json_object_object_add(out, "tokens", arr);
    return http_json(c, 200, out);
}

static enum MHD_Result detokenize(serve_http *h, struct MHD_Connection *c, const char *body,
                                  size_t len) {
    enum MHD_Result ret;
    json_object *o = body_object(c, body, len, &ret), *toks;
    if (!o) return ret;
    if (!json_object_object_get_ex(o, "tokens", &toks) ||
        !json_object_is_type(toks, json_type_array)) {
        json_object_put(o);
        return http_error(c, 400, "invalid_request_error", "tokens",
                          "'tokens' must be a list of token ids");
    }
    const mint_model *m = engine_model(h->e);
    char *s = NULL;
    size_t sl = 0;
    FILE *f = open_memstream(&s, &sl);
    bool ok = f != NULL;
    // A vocabulary that puts a space before the text (SentencePiece's "▁") gives the first
    // word's piece a space the text did not have: dropped, so that /detokenize undoes /tokenize
    // (as llama.cpp does).
    bool strip_space = h->space_prefix;
    for (size_t i = 0; ok && i < json_object_array_length(toks); i++) {
        json_object *t = json_object_array_get_idx(toks, i);
        const int64_t id = json_object_get_int64(t);
        if (!json_object_is_type(t, json_type_int) || id < 0 || id >= h->n_vocab) {
            ok = false;
            fclose(f);
            free(s);
            json_object_put(o);
            return http_error(c, 400, "invalid_request_error", "tokens",
                              "token %zu is not an id in 0..%d", i, h->n_vocab - 1);
        }
        char buf[256];
        size_t pn = mint_token_to_piece(m, (int32_t)id, false, buf, sizeof buf);
        pn = pn < sizeof buf ? pn : 0;
        const size_t skip = strip_space && pn > 0 && buf[0] == ' ';
        if (pn > 0) strip_space = false;
        fwrite(buf + skip, 1, pn - skip, f);
    }
    if (f) fclose(f);
    json_object *out = json_object_new_object();
    json_object_object_add(out, "content", http_utf8_string(s ? s : "", sl));
    free(s);
    json_object_put(o);
    return http_json(c, 200, out);
}

static enum MHD_Result page(struct MHD_Connection *c) {
    // The page with the shared views inlined where its marker is.
    static const char mark[] = "/*MINT_VIEWS*/";
    const char *at = strstr(mint_web_chat_html, mark);
    if (!at) return text(c, 500, "text/plain", "page template broken\n", 21);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f) return MHD_NO;
    fwrite(mint_web_chat_html, 1, (size_t)(at - mint_web_chat_html), f);
    fputs(mint_web_views_js, f);
    fputs(at + strlen(mark), f);
    fclose(f);
    enum MHD_Result r = text(c, 200, "text/html; charset=utf-8", buf, n);
    free(buf);
    return r;
}

// ---------------------------------------------------------------------------------------------
// Routing

// Constant-time comparison of the Authorization header with "Bearer <key>".
static bool authorized(const serve_http *h, struct MHD_Connection *c) {
    if (!h->cfg->api_key) return true;
    const char *got = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    char want[600];
    snprintf(want, sizeof want, "Bearer %s", h->cfg->api_key);
    const size_t wl = strlen(want), gl = got ? strlen(got) : 0;
    unsigned diff = (unsigned)(wl ^ gl);
    for (size_t i = 0; i < wl; i++)
        diff |= (unsigned char)want[i] ^ (unsigned char)(i < gl ? got[i] : 0);
    return diff == 0;
}

static enum MHD_Result route(serve_http *h, struct MHD_Connection *c, const char *url,
                             const char *method, const conn *k, const char **endpoint,
                             unsigned *status_hint) {
    const bool get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    const bool post = !strcmp(method, "POST");
    *endpoint = url;
    if (get && !strcmp(url, "/")) return page(c);
    if (get && !strcmp(url, "/favicon.ico")) { // browsers ask for it: no icon, and no 404
        *status_hint = 204;
        return text(c, 204, "image/x-icon", "", 0);
    }
    if (get && !strcmp(url, "/health")) {
        const bool down = atomic_load(&h->stopping);
        json_object *o = json_object_new_object();
        json_object_object_add(o, "status", json_object_new_string(down ? "shutting down" : "ok"));
        *status_hint = down ? 503 : 200;
        return http_json(c, *status_hint, o);
    }
    if (!authorized(h, c)) {
        *status_hint = 401;
        return http_error(c, 401, "authentication_error", NULL,
                          "a valid API key is needed (Authorization: Bearer KEY)");
    }
    if (get && !strcmp(url, "/v1/models")) return models(h, c);
    if (get && !strcmp(url, "/metrics")) {
        char *t = metrics_text(h->m, engine_queue_length(h->e), engine_busy_slots(h->e),
                               h->cfg->parallel);
        enum MHD_Result r =
            text(c, 200, "text/plain; version=0.0.4", t ? t : "", t ? strlen(t) : 0);
        free(t);
        return r;
    }
    if (k->too_big) {
        *status_hint = 413;
        return http_error(c, 413, "invalid_request_error", NULL,
                          "the body is larger than the %zu bytes allowed", h->cfg->max_body);
    }
    if (post && !strcmp(url, "/tokenize")) return tokenize(h, c, k->body, k->len);
    if (post && !strcmp(url, "/detokenize")) return detokenize(h, c, k->body, k->len);
    if (post && (!strcmp(url, "/v1/chat/completions") || !strcmp(url, "/v1/completions") ||
                 !strcmp(url, "/v1/next"))) {
        if (atomic_load(&h->stopping)) {
            *status_hint = 503;
            return http_error(c, 503, "server_error", NULL, "the server is shutting down");
        }
        return gen_handle(h, c, url, k->body, k->len);
    }
    *status_hint = 404;
    *endpoint = "other";
    return http_error(c, 404, "invalid_request_error", NULL, "no endpoint %s %s", method, url);
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
        *con_cls = k;
        atomic_fetch_add(&h->active, 1);
        return MHD_YES;
    }
    if (*upload_size) {
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
    unsigned status = 200;
    http_last_status = 0;
    enum MHD_Result r = route(h, c, url, method, k, &endpoint, &status);
    k->status = http_last_status ? http_last_status : status;
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

serve_http *http_start(const serve_config *cfg, serve_engine *e, serve_metrics *m, const char *tmpl,
                       char *err, size_t errlen) {
    serve_http *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->cfg = cfg;
    h->e = e;
    h->m = m;
    h->tmpl = tmpl;
    mint_model_desc d;
    mint_model_describe(engine_model(e), &d);
    h->n_vocab = d.n_vocab;
    // Whether the tokenizer puts a space before the text: "a" becomes " a".
    int32_t ids[8];
    size_t n_ids = 0;
    mint_err merr;
    char piece[16];
    h->space_prefix =
        mint_tokenize(engine_model(e), "a", 1, false, false, ids, 8, &n_ids, &merr) == MINT_OK &&
        n_ids > 0 && mint_token_to_piece(engine_model(e), ids[0], false, piece, sizeof piece) > 0 &&
        piece[0] == ' ';
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)cfg->port)};
    if (inet_pton(AF_INET, cfg->host, &addr.sin_addr) != 1) {
        snprintf(err, errlen, "--host '%s' is not an IPv4 address", cfg->host);
        free(h);
        return NULL;
    }
    h->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                                MHD_USE_ITC | MHD_USE_ERROR_LOG,
                            (uint16_t)cfg->port, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR,
                            (const struct sockaddr *)&addr, MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)cfg->max_connections, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                            cfg->max_header, MHD_OPTION_CONNECTION_TIMEOUT,
                            (unsigned)(cfg->timeout + 30), MHD_OPTION_NOTIFY_COMPLETED,
                            on_completed, h, MHD_OPTION_END);
    if (!h->d) {
        snprintf(err, errlen, "cannot listen on %s:%d (in use, or not allowed)", cfg->host,
                 cfg->port);
        free(h);
        return NULL;
    }
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
    free(h);
}
