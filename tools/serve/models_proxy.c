// models_proxy.c - router mode's forwarding: a request goes to its model's child over a
// loopback socket as it came (method, path and query, headers, body) and the child's answer
// comes back with its status and headers, its body passed on as it arrives (a stream's events
// are not held back). Plain HTTP/1.0 to the child: the child then ends its answer by closing
// the connection, never with chunks, so the body needs no decoding on the way through.
#include "models_http.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define HEAD_MAX (64 * 1024) // the child's status line and headers at most

// A growing byte buffer.
typedef struct buf {
    char *p;
    size_t n, cap;
    bool oom;
} buf;

static void put(buf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *g = realloc(b->p, cap);
        if (!g) {
            b->oom = true;
            return;
        }
        b->p = g;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void puts_(buf *b, const char *s) {
    put(b, s, strlen(s));
}

// Headers that describe this hop, not the request: the router writes its own.
static bool hop_header(const char *k) {
    static const char *const hop[] = {
        "host",    "connection", "content-length", "transfer-encoding", "keep-alive", "expect",
        "upgrade", "te",         "trailer",        "proxy-connection",  NULL};
    for (int i = 0; hop[i]; i++)
        if (!strcasecmp(k, hop[i])) return true;
    return false;
}

static enum MHD_Result add_header(void *cls, enum MHD_ValueKind kind, const char *k,
                                  const char *v) {
    (void)kind;
    if (!hop_header(k) && v) {
        puts_(cls, k), puts_(cls, ": "), puts_(cls, v), puts_(cls, "\r\n");
    }
    return MHD_YES;
}

// A query argument, percent-encoded again (libmicrohttpd hands them over decoded).
static void encode(buf *b, const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-_.~", *p)) {
            put(b, (const char *)p, 1);
        } else {
            char hex[4];
            snprintf(hex, sizeof hex, "%%%02X", *p);
            put(b, hex, 3);
        }
    }
}

typedef struct query {
    buf *b;
    bool first;
} query;

static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind, const char *k, const char *v) {
    (void)kind;
    query *q = cls;
    put(q->b, q->first ? "?" : "&", 1);
    q->first = false;
    encode(q->b, k);
    if (v) put(q->b, "=", 1), encode(q->b, v);
    return MHD_YES;
}

// One forwarded answer while its body flows: what came with the headers, then the socket.
typedef struct flow {
    models *r;
    char name[512]; // the model (released when the answer is done)
    int fd;
    char *early; // [n_early] body bytes read with the headers
    size_t n_early, pos;
} flow;

static ssize_t on_read(void *cls, uint64_t pos, char *out, size_t max) {
    flow *f = cls;
    (void)pos;
    if (f->pos < f->n_early) {
        size_t n = f->n_early - f->pos < max ? f->n_early - f->pos : max;
        memcpy(out, f->early + f->pos, n);
        f->pos += n;
        return (ssize_t)n;
    }
    ssize_t n;
    while ((n = recv(f->fd, out, max, 0)) < 0 && errno == EINTR) {}
    if (n > 0) return n;
    return n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void on_done(void *cls) {
    flow *f = cls;
    close(f->fd);
    models_release(f->r, f->name);
    free(f->early);
    free(f);
}

// Sends all of b on fd; false on an error or time-out.
static bool send_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

enum MHD_Result models_forward(models *r, const serve_config *cfg, struct MHD_Connection *c,
                               const serve_call *call, const char *name, bool post) {
    const int port = models_acquire(r, name, post);
    if (!port)
        return reply_error(c, 400, "invalid_request_error", "model", "model '%s' is not running",
                           name);
    buf req = {0};
    puts_(&req, call->method), puts_(&req, " "), puts_(&req, call->url);
    query q = {&req, true};
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_arg, &q);
    char line[160];
    snprintf(line, sizeof line, " HTTP/1.0\r\nHost: %s:%d\r\nConnection: close\r\n",
             MODELS_CHILD_HOST, port);
    puts_(&req, line);
    MHD_get_connection_values(c, MHD_HEADER_KIND, add_header, &req);
    snprintf(line, sizeof line, "Content-Length: %zu\r\n\r\n", call->len);
    puts_(&req, line);
    if (call->len) put(&req, call->body, call->len);
    const int fd = req.oom ? -1 : child_connect(port, cfg->timeout);
    if (fd < 0 || !send_all(fd, req.p, req.n)) {
        free(req.p);
        if (fd >= 0) close(fd);
        models_release(r, name);
        return reply_error(c, 502, "server_error", NULL,
                           "the server of model '%s' did not take the request", name);
    }
    free(req.p);
    // The status line and the headers.
    buf head = {0};
    char chunk[4096];
    char *end = NULL;
    while (!end && head.n < HEAD_MAX) {
        ssize_t n = recv(fd, chunk, sizeof chunk, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        put(&head, chunk, (size_t)n);
        if (head.oom) break;
        end = strstr(head.p, "\r\n\r\n");
    }
    int status = 0;
    if (end && !strncmp(head.p, "HTTP/1.", 7) && head.n > 12) status = atoi(head.p + 9);
    if (status < 100 || status > 599) {
        free(head.p);
        close(fd);
        models_release(r, name);
        return reply_error(c, 502, "server_error", NULL,
                           "the server of model '%s' gave no valid answer", name);
    }
    flow *f = calloc(1, sizeof *f);
    const size_t body_at = (size_t)(end - head.p) + 4;
    if (f && head.n > body_at && !(f->early = malloc(head.n - body_at))) {
        free(f);
        f = NULL;
    }
    if (!f) {
        free(head.p);
        close(fd);
        models_release(r, name);
        return MHD_NO;
    }
    f->r = r;
    snprintf(f->name, sizeof f->name, "%s", name);
    f->fd = fd;
    f->n_early = head.n - body_at;
    if (f->n_early) memcpy(f->early, head.p + body_at, f->n_early);
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, on_read, f, on_done);
    if (!resp) {
        free(head.p);
        on_done(f);
        return MHD_NO;
    }
    // The child's headers, but for this hop's own and the CORS ones the router writes.
    *end = '\0';
    char *save = NULL;
    strtok_r(head.p, "\r\n", &save); // the status line
    for (char *h; (h = strtok_r(NULL, "\r\n", &save));) {
        char *colon = strchr(h, ':');
        if (!colon) continue;
        *colon = '\0';
        const char *v = colon + 1;
        while (*v == ' ' || *v == '\t') v++;
        if (hop_header(h) || !strcasecmp(h, "server") || !strcasecmp(h, "date") ||
            !strncasecmp(h, "access-control-", 15) || !strcasecmp(h, "vary"))
            continue;
        MHD_add_response_header(resp, h, v);
    }
    free(head.p);
    if (reply_cors_origin) {
        MHD_add_response_header(resp, "Access-Control-Allow-Origin", reply_cors_origin);
        MHD_add_response_header(resp, "Access-Control-Allow-Credentials", "true");
        MHD_add_response_header(resp, "Vary", "Origin");
    }
    reply_last_status = (unsigned)status;
    const enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return ret;
}
