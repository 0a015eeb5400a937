// handlers_agent.c - llama-server's agent tools endpoint: GET /tools lists the registered tools
// (serve_tools.h), POST /tools runs one. Off unless a source of tools is registered (--tools,
// MCP servers): 403 "feature_disabled", as llama-server, because running commands and writing
// files on behalf of whoever can reach the port is dangerous.
//
// A streamed call ("stream": true) runs in a worker thread that queues {"chunk": TEXT} events;
// this connection's thread hands them to libmicrohttpd and ends with {"done": true} (and
// "error" when the call failed). When the client goes away the worker's next push answers false,
// the tool kills what it runs, and the worker is joined before the connection's state is freed:
// nothing outlives the request.
#include "agent_request.h"
#include "handlers.h"
#include "serve_tools.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum MHD_Result reply_feature_disabled(struct MHD_Connection *c) {
    json_object *e = json_object_new_object();
    json_object_object_add(e, "message", json_object_new_string("this feature is disabled"));
    json_object_object_add(e, "type", json_object_new_string("feature_disabled"));
    json_object *o = json_object_new_object();
    json_object_object_add(o, "error", e);
    return reply_json(c, 403, o);
}

// A streamed call between its worker and the connection's thread.
typedef struct agent_stream {
    serve_tool_stream st; // what the tool pushes to (st.cls: this)
    agent_request req;
    pthread_t worker;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    reply_sse sse; // events not yet handed out (under mu)
    bool done;     // the worker has queued its last event (under mu)
    bool gone;     // the client is gone: pushes answer false (under mu)
    bool ended;    // the last event was handed out
    int fd;        // the client's socket, watched for a hang-up (-1: unknown)
} agent_stream;

static bool stream_push(serve_tool_stream *s, const char *chunk, size_t n) {
    agent_stream *a = s->cls;
    if (n == 0) { // a probe
        pthread_mutex_lock(&a->mu);
        const bool gone = a->gone;
        pthread_mutex_unlock(&a->mu);
        return !gone;
    }
    json_object *o = json_object_new_object();
    json_object_object_add(o, "chunk", reply_utf8_string(chunk, n));
    pthread_mutex_lock(&a->mu);
    const bool gone = a->gone;
    if (!gone) reply_sse_event(&a->sse, o);
    pthread_cond_signal(&a->cv);
    pthread_mutex_unlock(&a->mu);
    if (gone) json_object_put(o);
    return !gone;
}

static void *stream_work(void *cls) {
    agent_stream *a = cls;
    char err[512] = "";
    json_object *result = NULL;
    const serve_tool_status st =
        serve_tools_call(a->req.tool, a->req.params, &a->st, &result, err, sizeof err);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "done", json_object_new_boolean(1));
    json_object *e;
    if (st != SERVE_TOOL_OK)
        json_object_object_add(o, "error",
                               json_object_new_string(err[0] ? err : "the call failed"));
    else if (result && json_object_object_get_ex(result, "error", &e))
        json_object_object_add(o, "error", json_object_get(e));
    json_object_put(result);
    pthread_mutex_lock(&a->mu);
    reply_sse_event(&a->sse, o);
    a->done = true;
    pthread_cond_signal(&a->cv);
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

static bool client_gone(int fd) {
    if (fd < 0) return false;
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max) {
    agent_stream *a = cls;
    (void)pos;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        const size_t n = reply_sse_take(&a->sse, buf, max);
        if (n > 0) {
            pthread_mutex_unlock(&a->mu);
            return (ssize_t)n;
        }
        if (a->done) {
            pthread_mutex_unlock(&a->mu);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        if (client_gone(a->fd)) {
            a->gone = true;
            pthread_mutex_unlock(&a->mu);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        // Wake now and then to watch the client even while the tool prints nothing.
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 100 * 1000 * 1000;
        if (t.tv_nsec >= 1000000000) t.tv_sec++, t.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&a->cv, &a->mu, &t);
    }
}

static void stream_free(void *cls) {
    agent_stream *a = cls;
    pthread_mutex_lock(&a->mu);
    a->gone = true; // the tool stops at its next push, or at its own time limit
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->worker, NULL);
    reply_sse_free(&a->sse);
    agent_request_free(&a->req);
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    free(a);
}

static enum MHD_Result start_stream(struct MHD_Connection *c, agent_request *req) {
    agent_stream *a = calloc(1, sizeof *a);
    if (!a) {
        agent_request_free(req);
        return reply_error(c, 500, "server_error", NULL, "out of memory");
    }
    a->req = *req;
    a->st.push = stream_push;
    a->st.cls = a;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    a->fd = ci ? ci->connect_fd : -1;
    if (pthread_create(&a->worker, NULL, stream_work, a) != 0) {
        agent_request_free(&a->req);
        pthread_mutex_destroy(&a->mu);
        pthread_cond_destroy(&a->cv);
        free(a);
        return reply_error(c, 500, "server_error", NULL, "cannot start a thread for the tool");
    }
    return reply_stream(c, stream_reader, a, stream_free);
}

static const char *header(struct MHD_Connection *c, const char *name) {
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name); // names match in any case
}

enum MHD_Result handle_tools(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    (void)h;
    return tools_answer(c, r);
}

enum MHD_Result tools_answer(struct MHD_Connection *c, const serve_call *r) {
    if (!serve_tools_enabled()) return reply_feature_disabled(c);
    if (strcmp(r->method, "POST")) return reply_json(c, 200, serve_tools_list());
    agent_request req;
    char err[512];
    if (!agent_request_parse(r->body, r->len, header(c, "x-tool-cwd"), header(c, "x-tool-runtime"),
                             header(c, "x-resp-type"), &req, err, sizeof err))
        return reply_error(c, 400, "invalid_request_error", NULL, "%s", err);
    if (req.stream) {
        // Whether the tool exists and streams is known before the 200 of a stream goes out.
        json_object *list = serve_tools_list();
        bool known = false;
        for (size_t i = 0; i < json_object_array_length(list) && !known; i++) {
            json_object *t;
            known = json_object_object_get_ex(json_object_array_get_idx(list, i), "tool", &t) &&
                    !strcmp(json_object_get_string(t), req.tool);
        }
        json_object_put(list);
        if (!known) {
            enum MHD_Result ret =
                reply_error(c, 404, "invalid_request_error", NULL, "unknown tool \"%s\"", req.tool);
            agent_request_free(&req);
            return ret;
        }
        return start_stream(c, &req);
    }
    json_object *result = NULL;
    const serve_tool_status st =
        serve_tools_call(req.tool, req.params, NULL, &result, err, sizeof err);
    enum MHD_Result ret;
    switch (st) {
    case SERVE_TOOL_OK:
        ret = reply_json(c, 200, result ? result : json_object_new_object());
        break;
    case SERVE_TOOL_NOT_MINE:
        ret = reply_error(c, 404, "invalid_request_error", NULL, "unknown tool \"%s\"", req.tool);
        break;
    case SERVE_TOOL_NO_STREAM:
        ret = reply_error(c, 404, "invalid_request_error", NULL,
                          "tool \"%s\" does not support stream = true", req.tool);
        break;
    case SERVE_TOOL_BAD:
        ret = reply_error(c, 400, "invalid_request_error", NULL, "%s", err);
        break;
    default:
        ret = reply_error(c, 500, "server_error", NULL, "%s", err);
        break;
    }
    agent_request_free(&req);
    return ret;
}
