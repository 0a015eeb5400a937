// cors_proxy.c - llama-server's CORS proxy for its web UI's MCP client (--ui-mcp-proxy): GET or
// POST /cors-proxy?url=URL makes the same request to URL and answers with its status, its
// Content-Type and its body, so that a page can reach an MCP server that sends no CORS headers.
// Off by default (403): it lets whoever reaches this port make requests from this host.
//
// Only what the client names explicitly goes on: a header "x-llama-server-proxy-header-NAME: V"
// is sent as "NAME: V"; the request's own headers (its Authorization for mint-serve, cookies,
// proxy credentials) never are. Only http and https, no credentials in the URL, no redirects
// followed (a 3xx is answered as it is), bounded by --timeout. The answer streams as it
// arrives (an MCP server may answer with server-sent events): libcurl's multi interface is
// driven from this connection's reader callback, so no thread is added.
#include "handlers.h"

#include <curl/curl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PROXY_PREFIX    "x-llama-server-proxy-header-"
#define PROXY_BUF_MAX   (1u << 20) // bytes held before the client takes them
#define PROXY_CONNECT_S 10L        // seconds to connect

typedef struct proxy {
    CURLM *multi;
    CURL *easy;
    struct curl_slist *headers; // the explicit proxy headers
    char *body;                 // [body_len] the POST body (libcurl reads it during the transfer)
    size_t body_len;
    char *buf; // [len] received, from pos not yet handed out
    size_t len, pos, cap;
    bool headers_done; // the final response's headers are in
    bool finished;     // the transfer ended (result says how)
    CURLcode result;
    char content_type[256]; // the answer's Content-Type ("" when none)
    int fd;                 // the client's socket (-1: unknown)
    double deadline;        // --timeout from the start
    bool client_gone;
} proxy;

static size_t on_body(char *s, size_t size, size_t n, void *cls) {
    proxy *p = cls;
    const size_t k = size * n;
    if (p->pos == p->len) p->pos = p->len = 0;
    if (p->len + k > p->cap) {
        const size_t cap = (p->len + k) * 2;
        char *b = realloc(p->buf, cap);
        if (!b) return 0; // aborts the transfer
        p->buf = b, p->cap = cap;
    }
    memcpy(p->buf + p->len, s, k);
    p->len += k;
    p->headers_done = true;
    return k;
}

static size_t on_header(char *s, size_t size, size_t n, void *cls) {
    proxy *p = cls;
    const size_t k = size * n;
    if (k >= 13 && !strncasecmp(s, "content-type:", 13)) {
        size_t a = 13, b = k;
        while (a < b && (s[a] == ' ' || s[a] == '\t')) a++;
        while (b > a && (s[b - 1] == '\r' || s[b - 1] == '\n' || s[b - 1] == ' ')) b--;
        snprintf(p->content_type, sizeof p->content_type, "%.*s", (int)(b - a), s + a);
    }
    if ((k == 2 && s[0] == '\r') || (k == 1 && s[0] == '\n')) { // the end of a header block
        long code = 0;
        curl_easy_getinfo(p->easy, CURLINFO_RESPONSE_CODE, &code);
        if (code >= 200) p->headers_done = true; // a 1xx block is followed by the real one
    }
    return k;
}

static bool client_gone(int fd) {
    if (fd < 0) return false;
    struct pollfd q = {.fd = fd, .events = POLLRDHUP};
    return poll(&q, 1, 0) > 0 && (q.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

// Drives the transfer until the headers are in (headers) or more body is there, or it ends.
static void pump(proxy *p, bool headers) {
    while (!p->finished && (headers ? !p->headers_done : p->pos == p->len)) {
        int running = 0;
        curl_multi_perform(p->multi, &running);
        CURLMsg *m;
        int left;
        while ((m = curl_multi_info_read(p->multi, &left)))
            if (m->msg == CURLMSG_DONE) p->finished = true, p->result = m->data.result;
        if (!running) p->finished = true;
        if (p->finished) break;
        if (serve_now() > p->deadline) {
            p->finished = true, p->result = CURLE_OPERATION_TIMEDOUT;
            break;
        }
        if (client_gone(p->fd)) {
            p->finished = p->client_gone = true, p->result = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        curl_multi_poll(p->multi, NULL, 0, 100, NULL);
    }
}

static void proxy_free(void *cls) {
    proxy *p = cls;
    if (p->multi && p->easy) curl_multi_remove_handle(p->multi, p->easy);
    if (p->easy) curl_easy_cleanup(p->easy);
    if (p->multi) curl_multi_cleanup(p->multi);
    curl_slist_free_all(p->headers);
    free(p->body);
    free(p->buf);
    free(p);
}

static ssize_t proxy_reader(void *cls, uint64_t at, char *out, size_t max) {
    proxy *p = cls;
    (void)at;
    pump(p, false);
    if (p->pos < p->len) {
        const size_t k = p->len - p->pos < max ? p->len - p->pos : max;
        memcpy(out, p->buf + p->pos, k);
        p->pos += k;
        return (ssize_t)k;
    }
    return p->result == CURLE_OK ? MHD_CONTENT_READER_END_OF_STREAM
                                 : MHD_CONTENT_READER_END_WITH_ERROR;
}

// Adds "NAME: V" for each "x-llama-server-proxy-header-NAME: V" of the request.
static enum MHD_Result add_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value) {
    proxy *p = cls;
    (void)kind;
    const size_t n = strlen(PROXY_PREFIX);
    if (strncasecmp(key, PROXY_PREFIX, n) || !key[n]) return MHD_YES;
    const char *v = value ? value : "";
    if (strpbrk(key + n, "\r\n:") || strpbrk(v, "\r\n")) return MHD_YES; // no header splitting
    char *line = malloc(strlen(key + n) + strlen(v) + 3);
    if (!line) return MHD_YES;
    // "NAME;" is libcurl's way to send a header with an empty value.
    if (*v)
        sprintf(line, "%s: %s", key + n, v);
    else
        sprintf(line, "%s;", key + n);
    struct curl_slist *l = curl_slist_append(p->headers, line);
    if (l) p->headers = l;
    free(line);
    return MHD_YES;
}

// Whether the list names header (case-insensitive) already.
static bool has_header(const struct curl_slist *l, const char *name) {
    const size_t n = strlen(name);
    for (; l; l = l->next)
        if (!strncasecmp(l->data, name, n) && (l->data[n] == ':' || l->data[n] == ';')) return true;
    return false;
}

// Checks the target: http or https, a host, no user name or password. NULL when fine, else why.
static const char *check_url(const char *url) {
    CURLU *u = curl_url();
    if (!u) return "out of memory";
    const char *why = NULL;
    char *scheme = NULL, *host = NULL, *user = NULL, *pass = NULL;
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK)
        why = "invalid target URL";
    else if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
             (strcasecmp(scheme, "http") && strcasecmp(scheme, "https")))
        why = "unsupported URL scheme in target URL (http and https only)";
    else if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host)
        why = "invalid target URL: missing host";
    else if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK ||
             curl_url_get(u, CURLUPART_PASSWORD, &pass, 0) == CURLUE_OK)
        why = "authentication in target URL is not supported";
    curl_free(scheme), curl_free(host), curl_free(user), curl_free(pass);
    curl_url_cleanup(u);
    return why;
}

enum MHD_Result handle_cors_proxy(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    return cors_proxy_answer(h->cfg, c, r);
}

enum MHD_Result cors_proxy_answer(const serve_config *cfg, struct MHD_Connection *c,
                                  const serve_call *r) {
    if (!cfg->ui_mcp_proxy) return reply_feature_disabled(c);
    const char *url = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "url");
    if (!url || !*url)
        return reply_error(c, 400, "invalid_request_error", "url",
                           "give the target as /cors-proxy?url=URL");
    const char *why = check_url(url);
    if (why) return reply_error(c, 400, "invalid_request_error", "url", "%s", why);
    proxy *p = calloc(1, sizeof *p);
    if (!p || !(p->multi = curl_multi_init()) || !(p->easy = curl_easy_init())) {
        if (p) proxy_free(p);
        return reply_error(c, 500, "server_error", NULL, "out of memory");
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    p->fd = ci ? ci->connect_fd : -1;
    p->deadline = serve_now() + cfg->timeout;
    MHD_get_connection_values(c, MHD_HEADER_KIND, add_header, p);
    // libcurl's own defaults would add headers the client did not ask for: ask for none.
    if (!has_header(p->headers, "Accept")) p->headers = curl_slist_append(p->headers, "Accept:");
    const bool post = !strcmp(r->method, "POST");
    if (post && !has_header(p->headers, "Content-Type"))
        p->headers = curl_slist_append(p->headers, "Content-Type:");
    if (post && !has_header(p->headers, "Expect"))
        p->headers = curl_slist_append(p->headers, "Expect:");
    CURL *e = p->easy;
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, PROXY_CONNECT_S);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, p->headers);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, p);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, p);
    if (post) {
        p->body_len = r->len;
        p->body = malloc(r->len + 1);
        if (p->body && r->len) memcpy(p->body, r->body, r->len);
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, p->body ? p->body : "");
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(p->body ? p->body_len : 0));
    }
    curl_multi_add_handle(p->multi, e);
    pump(p, true);
    long status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    if (!p->headers_done || status < 200) {
        char msg[CURL_ERROR_SIZE + 64];
        snprintf(msg, sizeof msg, "cannot reach the target URL: %s",
                 p->result != CURLE_OK ? curl_easy_strerror(p->result) : "no answer");
        proxy_free(p);
        return reply_error(c, 502, "server_error", NULL, "%s", msg);
    }
    const char *type = p->content_type[0] ? p->content_type : NULL;
    if (status == 204 || status == 304 || (p->finished && p->pos == p->len)) {
        enum MHD_Result ret = reply_text(c, (unsigned)status, type ? type : "text/plain", "", 0);
        proxy_free(p);
        return ret;
    }
    return reply_stream_status(c, (unsigned)status, type, proxy_reader, p, proxy_free);
}
