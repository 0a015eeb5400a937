// handlers_gcp.c - Google Cloud Vertex AI's prediction protocol, as llama-server speaks it when
// AIP_MODE=PREDICTION: POST AIP_PREDICT_ROUTE (default /predict) takes {"instances": [...]},
// each instance a request body naming its endpoint in "@requestFormat" (a path, or its camelCase
// name: "chatCompletions" for /v1/chat/completions, "applyTemplate" for /apply-template), and
// answers {"predictions": [...]}, one answer per instance in order, an instance's failure as
// {"error": ...} in its place. AIP_HTTP_PORT sets the port, AIP_HEALTH_ROUTE adds a health path.
//
// Each instance is sent to this server itself over loopback (HTTP/1.0, the caller's credentials
// passed on), one thread per instance so that they share the slots as separate requests do: the
// endpoints stay written once, for a connection, and /predict adds no second way into them.
#include "handlers.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { MAX_INSTANCES = 128 }; // llama-server's bound

bool gcp_enabled(void) {
    const char *m = getenv("AIP_MODE");
    return m && !strcmp(m, "PREDICTION");
}

// An AIP_*_ROUTE value with its leading '/', or dflt when unset or empty.
static void route_of(const char *var, const char *dflt, char *out, size_t cap) {
    const char *v = getenv(var);
    if (!v || !*v) v = dflt;
    snprintf(out, cap, "%s%s", v[0] == '/' || !v[0] ? "" : "/", v);
}

bool gcp_is_predict(const char *url) {
    char r[256];
    route_of("AIP_PREDICT_ROUTE", "/predict", r, sizeof r);
    return gcp_enabled() && !strcmp(url, r);
}

bool gcp_is_health(const char *url) {
    char r[256];
    route_of("AIP_HEALTH_ROUTE", "", r, sizeof r);
    return gcp_enabled() && r[0] && !strcmp(url, r);
}

// A path's camelCase name: "/v1" and the leading '/' dropped, each '/', '-' or '_' capitalising
// the next letter ("/v1/chat/completions" -> "chatCompletions").
static void camel(const char *path, char *out, size_t cap) {
    if (!strncmp(path, "/v1/", 4)) path += 3;
    if (*path == '/') path++;
    size_t n = 0;
    bool up = false;
    for (; *path && n + 1 < cap; path++) {
        if (*path == '/' || *path == '-' || *path == '_') {
            up = true;
            continue;
        }
        out[n++] = up ? (char)toupper((unsigned char)*path) : *path;
        up = false;
    }
    out[n] = '\0';
}

// One instance and its answer.
typedef struct instance {
    int port;
    const char *auth;    // the caller's Authorization header, or NULL
    const char *xkey;    // the caller's X-Api-Key header, or NULL
    char path[128];      // the endpoint it goes to ("" when the instance is refused)
    char *body;          // the request body (the instance without "@requestFormat")
    json_object *answer; // the endpoint's JSON answer, or an {"error"} object
    pthread_t thread;
    bool started;
} instance;

static json_object *error_of(const char *type, int code, const char *msg) {
    json_object *e = json_object_new_object();
    json_object_object_add(e, "code", json_object_new_int(code));
    json_object_object_add(e, "message", json_object_new_string(msg));
    json_object_object_add(e, "type", json_object_new_string(type));
    json_object *o = json_object_new_object();
    json_object_object_add(o, "error", e);
    return o;
}

static bool send_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        const ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0) return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

// Posts the instance to this server and keeps the JSON of the answer (whatever its status: an
// error answer is the instance's prediction too, as llama-server returns it).
static void *post_instance(void *cls) {
    instance *in = cls;
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)in->port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    char *resp = NULL;
    size_t len = 0, cap = 0;
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
        char head[1024];
        const int h = snprintf(head, sizeof head,
                               "POST %s HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: "
                               "application/json\r\nContent-Length: %zu\r\n%s%s%s%s%s%s\r\n",
                               in->path, strlen(in->body), in->auth ? "Authorization: " : "",
                               in->auth ? in->auth : "", in->auth ? "\r\n" : "",
                               in->xkey ? "X-Api-Key: " : "", in->xkey ? in->xkey : "",
                               in->xkey ? "\r\n" : "");
        if (h > 0 && (size_t)h < sizeof head && send_all(fd, head, (size_t)h) &&
            send_all(fd, in->body, strlen(in->body))) {
            for (;;) { // HTTP/1.0: the answer ends when the server closes
                if (len + 4096 + 1 > cap) {
                    cap = (len + 4096 + 1) * 2;
                    char *r = realloc(resp, cap);
                    if (!r) break;
                    resp = r;
                }
                const ssize_t k = recv(fd, resp + len, cap - len - 1, 0);
                if (k <= 0) break;
                len += (size_t)k;
            }
        }
    }
    if (fd >= 0) close(fd);
    const char *body = resp ? (resp[len] = '\0', strstr(resp, "\r\n\r\n")) : NULL;
    json_object *o = body ? json_tokener_parse(body + 4) : NULL;
    in->answer = o ? o
                   : error_of("server_error", 500,
                              body ? "the endpoint's answer is not JSON (a stream?)"
                                   : "the endpoint did not answer");
    free(resp);
    return NULL;
}

enum MHD_Result handle_gcp_predict(int port, struct MHD_Connection *c, const serve_call *r,
                                   const char *const *paths, int n_paths) {
    json_object *doc = r->body ? json_tokener_parse(r->body) : NULL, *list = NULL;
    if (!json_object_is_type(doc, json_type_object)) {
        json_object_put(doc);
        return reply_error(c, 400, "invalid_request_error", NULL,
                           "request body must be a JSON object");
    }
    if (!json_object_object_get_ex(doc, "instances", &list) ||
        !json_object_is_type(list, json_type_array)) {
        json_object_put(doc);
        return reply_error(c, 400, "invalid_request_error", NULL,
                           "request body must include an array field named instances");
    }
    const size_t n = json_object_array_length(list);
    if (n > MAX_INSTANCES) {
        json_object_put(doc);
        return reply_error(c, 400, "invalid_request_error", NULL,
                           "instances array exceeds maximum size of %d", MAX_INSTANCES);
    }
    instance *ins = calloc(n ? n : 1, sizeof *ins);
    if (!ins) {
        json_object_put(doc);
        return reply_error(c, 500, "server_error", NULL, "out of memory");
    }
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    const char *xkey = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Api-Key");
    for (size_t i = 0; i < n; i++) {
        json_object *it = json_object_array_get_idx(list, i), *fmt = NULL;
        instance *in = &ins[i];
        if (!json_object_is_type(it, json_type_object)) {
            in->answer =
                error_of("invalid_request_error", 400, "each instance must be a JSON object");
            continue;
        }
        if (!json_object_object_get_ex(it, "@requestFormat", &fmt) ||
            !json_object_is_type(fmt, json_type_string)) {
            in->answer = error_of("invalid_request_error", 400,
                                  "each instance must include a string @requestFormat");
            continue;
        }
        const char *want = json_object_get_string(fmt);
        for (int k = 0; k < n_paths && !in->path[0]; k++) { // the first path of a name wins
            char name[128];
            camel(paths[k], name, sizeof name);
            if (!strcmp(want, name) || !strcmp(want, paths[k]))
                snprintf(in->path, sizeof in->path, "%s", paths[k]);
        }
        if (!in->path[0]) {
            char msg[300];
            snprintf(msg, sizeof msg, "no handler registered for @requestFormat: %.200s", want);
            in->answer = error_of("invalid_request_error", 400, msg);
            continue;
        }
        json_object *copy = NULL;
        json_object_deep_copy(it, &copy, NULL);
        json_object_object_del(copy, "@requestFormat");
        json_object_object_add(copy, "stream", json_object_new_boolean(false)); // no streams here
        in->body = strdup(json_object_to_json_string_ext(copy, JSON_C_TO_STRING_PLAIN));
        json_object_put(copy);
        in->port = port;
        in->auth = auth;
        in->xkey = xkey;
        if (!in->body)
            in->answer = error_of("server_error", 500, "out of memory");
        else
            in->started = pthread_create(&in->thread, NULL, post_instance, in) == 0;
        if (in->body && !in->started) post_instance(in); // no thread: in turn, here
    }
    json_object *preds = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        if (ins[i].started) pthread_join(ins[i].thread, NULL);
        json_object_array_add(preds, ins[i].answer);
        free(ins[i].body);
    }
    free(ins);
    json_object_put(doc);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "predictions", preds);
    return reply_json(c, 200, o);
}
