// mcp_servers.c - the set of MCP servers and their tools (mcp_servers.h). One mutex guards which
// process runs each server; a call takes a reference to its server's client under it, then runs
// without it (mcp_client.c serializes calls to one server), so a slow server holds up only its own
// calls, and a client replaced while a call uses it lives until that call is done.
#include "mcp_servers.h"

#include "cli.h"
#include "mcp_client.h"
#include "serve.h"
#include "serve_tools.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COOLDOWN_S 5.0 // a server that could not start is not tried again before this

// A tool of the registry.
typedef struct set_tool {
    int server;    // index in cfg.servers
    char *name;    // "<server>_<tool>"
    mcp_tool tool; // the server's own name, description and parameters
} set_tool;

// A configured server's state.
typedef struct set_server {
    mcp_client *client; // its process, or NULL when not running
    double retry_at;    // after a failed start: when it may be tried again (serve_now)
} set_server;

struct mcp_set {
    mcp_config cfg;       // the servers, as configured
    set_server *srv;      // [cfg.n]
    set_tool *tools;      // [n_tools] found at warm-up, then read-only
    int n_tools;          //
    pthread_mutex_t mu;   // guards srv
    atomic_bool stopping; // mcp_set_stop was called
};

static void print_note(void *ctx, const char *line) {
    (void)ctx;
    fprintf(stderr, SERVE_TOOL ": %s\n", line);
}

mcp_set *mcp_set_new(const char *file, const char *json, char *err, size_t errlen) {
    mcp_set *s = calloc(1, sizeof *s);
    if (!s) return snprintf(err, errlen, "out of memory"), NULL;
    pthread_mutex_init(&s->mu, NULL);
    atomic_init(&s->stopping, false);
    bool ok = true;
    if (file) {
        size_t len;
        char msg[400];
        char *text = cli_read_file(file, &len, msg, sizeof msg);
        if (!text)
            ok = (snprintf(err, errlen, "--mcp-servers-config: %s", msg), false);
        else if (!mcp_config_add(&s->cfg, text, len, print_note, NULL, msg, sizeof msg))
            ok = (snprintf(err, errlen, "--mcp-servers-config %s: %s", file, msg), false);
        free(text);
    }
    if (ok && json) {
        char msg[400];
        if (!mcp_config_add(&s->cfg, json, strlen(json), print_note, NULL, msg, sizeof msg))
            ok = (snprintf(err, errlen, "--mcp-servers-json: %s", msg), false);
    }
    if (ok && s->cfg.n && !(s->srv = calloc((size_t)s->cfg.n, sizeof *s->srv)))
        ok = (snprintf(err, errlen, "out of memory"), false);
    if (!ok) {
        mcp_set_free(s);
        return NULL;
    }
    return s;
}

int mcp_set_servers(const mcp_set *s) {
    return s ? s->cfg.n : 0;
}

static bool name_taken(const mcp_set *s, const char *name) {
    for (int i = 0; i < s->n_tools; i++)
        if (!strcmp(s->tools[i].name, name)) return true;
    return false;
}

// Adds server k's tools to the registry; t is taken over (freed here).
static void add_tools(mcp_set *s, int k, mcp_tool *t, int n) {
    set_tool *grown = n ? realloc(s->tools, (size_t)(s->n_tools + n) * sizeof *grown) : NULL;
    if (grown) s->tools = grown;
    const char *server = s->cfg.servers[k].name;
    for (int i = 0; i < n; i++) {
        const size_t len = strlen(server) + strlen(t[i].name) + 2;
        char *name = grown ? malloc(len) : NULL;
        if (name) snprintf(name, len, "%s_%s", server, t[i].name);
        if (!name || name_taken(s, name)) {
            // "a_b" + "c" and "a" + "b_c" make the same name: the first keeps it (llama-server's
            // rule for a name that collides).
            if (name)
                fprintf(stderr,
                        SERVE_TOOL ": MCP tool '%s' of server '%s' is named like another "
                                   "tool: skipped\n",
                        name, server);
            free(name);
            free(t[i].name);
            free(t[i].description);
            json_object_put(t[i].parameters);
            continue;
        }
        s->tools[s->n_tools++] = (set_tool){.server = k, .name = name, .tool = t[i]};
    }
    free(t);
}

void mcp_set_warm_up(mcp_set *s, double warmup_s) {
    for (int k = 0; k < s->cfg.n && !atomic_load(&s->stopping); k++) {
        const mcp_server_conf *conf = &s->cfg.servers[k];
        char err[600];
        mcp_client *c = mcp_client_start(conf, &s->stopping, err, sizeof err);
        if (!c) {
            fprintf(stderr, SERVE_TOOL ": %s: its tools are left out\n", err);
            continue;
        }
        mcp_tool *t;
        const int n = mcp_client_list(c, warmup_s, &t, err, sizeof err);
        mcp_client_release(c);
        if (n < 0) {
            fprintf(stderr, SERVE_TOOL ": %s: its tools are left out\n", err);
            continue;
        }
        fprintf(stderr, SERVE_TOOL ": MCP server '%s' offers %d tool%s\n", conf->name, n,
                n == 1 ? "" : "s");
        add_tools(s, k, t, n);
    }
}

int mcp_set_tools(const mcp_set *s) {
    return s ? s->n_tools : 0;
}

const char *mcp_set_tool_name(const mcp_set *s, int i) {
    return s->tools[i].name;
}

const char *mcp_set_tool_description(const mcp_set *s, int i) {
    return s->tools[i].tool.description;
}

json_object *mcp_set_tool_definition(const mcp_set *s, int i) {
    json_object *d = json_object_new_object(), *f = json_object_new_object();
    json_object_object_add(f, "name", json_object_new_string(s->tools[i].name));
    json_object_object_add(f, "description", json_object_new_string(s->tools[i].tool.description));
    json_object_object_add(f, "parameters", json_object_get(s->tools[i].tool.parameters));
    json_object_object_add(d, "type", json_object_new_string("function"));
    json_object_object_add(d, "function", f);
    return d;
}

int mcp_set_find(const mcp_set *s, const char *name) {
    for (int i = 0; s && name && i < s->n_tools; i++)
        if (!strcmp(s->tools[i].name, name)) return i;
    return -1;
}

// A reference to server k's running client, started when there is none or it has exited; NULL
// with err while stopping or when it cannot start.
static mcp_client *client_for(mcp_set *s, int k, char *err, size_t errlen) {
    set_server *v = &s->srv[k];
    mcp_client *gone = NULL, *c = NULL;
    pthread_mutex_lock(&s->mu);
    if (atomic_load(&s->stopping)) {
        snprintf(err, errlen, "cancelled: the server stops");
    } else if (v->client && mcp_client_alive(v->client)) {
        c = v->client;
    } else if (serve_now() < v->retry_at) {
        snprintf(err, errlen, "MCP server '%s' is unavailable (it could not start %.0f s ago)",
                 s->cfg.servers[k].name, COOLDOWN_S - (v->retry_at - serve_now()));
    } else {
        gone = v->client; // exited: replaced (it is reaped once its last call lets go)
        if (gone)
            fprintf(stderr, SERVE_TOOL ": MCP server '%s' has exited: starting it again\n",
                    s->cfg.servers[k].name);
        v->client = c = mcp_client_start(&s->cfg.servers[k], &s->stopping, err, errlen);
        if (!c) {
            fprintf(stderr, SERVE_TOOL ": %s\n", err);
            v->retry_at = serve_now() + COOLDOWN_S;
        }
    }
    if (c) mcp_client_ref(c);
    pthread_mutex_unlock(&s->mu);
    mcp_client_release(gone); // may wait for it to end: outside the lock
    return c;
}

json_object *mcp_set_call(mcp_set *s, int i, json_object *params) {
    char err[600];
    mcp_client *c = i >= 0 && i < s->n_tools ? client_for(s, s->tools[i].server, err, sizeof err)
                                             : (snprintf(err, sizeof err, "no such tool"), NULL);
    if (!c) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "error", json_object_new_string(err));
        return o;
    }
    json_object *answer = mcp_client_call(c, s->tools[i].tool.name, params);
    mcp_client_release(c);
    return answer;
}

// serve_tool_source.list: every tool, in GET /tools' shape (llama-server: display name = name,
// no write permission, no working directory).
static void source_list(void *self, json_object *list) {
    const mcp_set *s = self;
    for (int i = 0; i < s->n_tools; i++)
        json_object_array_add(list, serve_tool_entry(s->tools[i].name, s->tools[i].name, "mcp",
                                                     false, false, mcp_set_tool_definition(s, i)));
}

// serve_tool_source.call: the params go to the server as the call's arguments, as they came.
static serve_tool_status source_call(void *self, const char *tool, json_object *params,
                                     serve_tool_stream *stream, json_object **result, char *err,
                                     size_t errlen) {
    mcp_set *s = self;
    const int i = mcp_set_find(s, tool);
    if (i < 0) return SERVE_TOOL_NOT_MINE;
    if (stream) {
        snprintf(err, errlen, "tool \"%s\" does not support stream = true", tool);
        return SERVE_TOOL_NO_STREAM;
    }
    *result = mcp_set_call(s, i, params);
    if (!*result) {
        snprintf(err, errlen, "out of memory");
        return SERVE_TOOL_FAILED;
    }
    return SERVE_TOOL_OK;
}

bool mcp_set_register(mcp_set *s) {
    const serve_tool_source src = {
        .name = "mcp", .list = source_list, .call = source_call, .self = s};
    return serve_tools_register(&src);
}

void mcp_set_stop(mcp_set *s) {
    if (s) atomic_store(&s->stopping, true);
}

void mcp_set_free(mcp_set *s) {
    if (!s) return;
    atomic_store(&s->stopping, true);
    for (int k = 0; s->srv && k < s->cfg.n; k++) mcp_client_release(s->srv[k].client);
    for (int i = 0; i < s->n_tools; i++) {
        free(s->tools[i].name);
        free(s->tools[i].tool.name);
        free(s->tools[i].tool.description);
        json_object_put(s->tools[i].tool.parameters);
    }
    free(s->tools);
    free(s->srv);
    mcp_config_free(&s->cfg);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
