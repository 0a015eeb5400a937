// models_registry.c - router mode's models and their children: which is unloaded, loading or
// loaded, starting and stopping children, and --models-max. Its rules are llama-server's
// (tools/server/server-models.cpp): a model serving a request is never evicted; when every
// slot is taken, a request waits in a FIFO queue in which requests for the same model share one
// entry (so they cost one eviction together); an idle model is evicted for the head of the queue;
// a client that leaves the queue gives its claim up. One mutex guards everything, one condition
// variable announces every change.
//
// Each child has a watcher thread that starts it (so the child dies with that thread:
// models_child.c), polls its /health until it answers 200, and reaps it.
#include "models.h"
#include "serve_options.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_QUEUE  256 // models waited for at once
#define MAX_EVENTS 128 // events kept for /models/sse clients that fall behind

typedef struct entry {
    model_spec spec;     // from the sources (replaced by a reload; used at the next start)
    model_status status; // the child's state
    pid_t pid;           // the child (0: none)
    int port;            // its port while running
    char **argv;         // [argc] its command line (NULL-ended), kept for GET /models
    int argc;
    int exit_code;    // of the last child
    bool failed;      // the last child exited non-zero without being asked to stop
    bool stop;        // a stop was asked
    bool removed;     // no longer in the sources: not listed, not served
    int busy;         // requests being forwarded to it
    double last_used; // for the LRU order
    int stop_timeout; // the running child's stop-timeout
} entry;

// Requests waiting for one model to get a --models-max slot.
typedef struct waiting {
    char name[512];
    int n_waiters;     // requests waiting for it
    bool slot_pending; // a model is being evicted for it already
    bool loading;      // one of its waiters is loading it now
} waiting;

struct models {
    const serve_config *cfg;
    char exe[4096]; // this program (/proc/self/exe), which each child runs
    char **pass;    // [n_pass] the router's flags that children get too
    int n_pass;
    bool fake_timing; // LLAMA_SERVER_DEBUG_FAKE_TIMING (llama.cpp's test hook): 2 s delays
    pthread_mutex_t mu;
    pthread_cond_t cv; // any change: a status, the queue, an event, a watcher ending
    entry **e;         // [n] every model ever listed (pointers stay valid for watchers)
    int n;
    waiting q[MAX_QUEUE]; // [n_q] the --models-max queue, oldest first
    int n_q;
    int watchers;         // watcher threads alive
    bool closing;         // the router stops: no more loads, waiters give up
    char *ev[MAX_EVENTS]; // the last events, ev[seq % MAX_EVENTS]
    unsigned long ev_seq; // events so far (the next gets ev_seq + 1)
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void nap(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static const char *status_name(model_status s) {
    return s == MODEL_LOADED ? "loaded" : s == MODEL_LOADING ? "loading" : "unloaded";
}

// Records an event for /models/sse (under mu).
static void event(models *r, const char *name, const char *what, json_object *data) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "model", json_object_new_string(name));
    json_object_object_add(o, "event", json_object_new_string(what));
    if (data) json_object_object_add(o, "data", data);
    const unsigned long seq = ++r->ev_seq;
    free(r->ev[seq % MAX_EVENTS]);
    r->ev[seq % MAX_EVENTS] = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
    json_object_put(o);
    pthread_cond_broadcast(&r->cv);
}

static void set_status(models *r, entry *e, model_status s) {
    e->status = s;
    json_object *d = json_object_new_object();
    json_object_object_add(d, "status", json_object_new_string(status_name(s)));
    if (s == MODEL_UNLOADED)
        json_object_object_add(d, "exit_code", json_object_new_int(e->exit_code));
    event(r, e->spec.name, "status_change", d);
}

static entry *find(models *r, const char *name) {
    for (int i = 0; i < r->n; i++)
        if (!r->e[i]->removed && !strcmp(r->e[i]->spec.name, name)) return r->e[i];
    for (int i = 0; i < r->n; i++)
        for (int a = 0; !r->e[i]->removed && a < r->e[i]->spec.n_aliases; a++)
            if (!strcmp(r->e[i]->spec.aliases[a], name)) return r->e[i];
    return NULL;
}

static int running(const models *r) {
    int n = 0;
    for (int i = 0; i < r->n; i++) n += r->e[i]->status != MODEL_UNLOADED;
    return n;
}

static bool has_room(const models *r) {
    return r->cfg->models_max <= 0 || running(r) < r->cfg->models_max;
}

// The least recently used model that is loaded and idle, other than except; NULL when none.
static entry *victim(models *r, const entry *except) {
    entry *best = NULL;
    for (int i = 0; i < r->n; i++) {
        entry *e = r->e[i];
        if (e == except || e->busy || e->status != MODEL_LOADED || e->stop) continue;
        if (!best || e->last_used < best->last_used) best = e;
    }
    return best;
}

// Asks e's child to stop (under mu); its watcher reaps it. A child still loading is killed:
// it has no request to finish.
static void stop(entry *e) {
    if (e->status == MODEL_UNLOADED || e->stop) return;
    e->stop = true;
    if (e->pid > 0) kill(e->pid, e->status == MODEL_LOADING ? SIGKILL : SIGTERM);
}

static void *watch(void *arg);

typedef struct watch_arg {
    models *r;
    entry *e;
} watch_arg;

static void free_argv(entry *e) {
    for (int i = 0; i < e->argc; i++) free(e->argv[i]);
    free(e->argv);
    e->argv = NULL;
    e->argc = 0;
}

// Starts e's child (under mu): its command line, a port, the watcher thread.
static bool start(models *r, entry *e, char *err, size_t errlen) {
    const int port = child_free_port();
    if (port <= 0) {
        snprintf(err, errlen, "no free loopback port for a child");
        return false;
    }
    free_argv(e);
    const int n = 1 + e->spec.n_args + r->n_pass + 6;
    e->argv = calloc((size_t)n + 1, sizeof *e->argv);
    if (!e->argv) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int k = 0;
    e->argv[k++] = strdup(r->exe);
    for (int i = 0; i < e->spec.n_args; i++) e->argv[k++] = strdup(e->spec.args[i]);
    for (int i = 0; i < r->n_pass; i++) e->argv[k++] = strdup(r->pass[i]);
    const char *tail[] = {"--alias", e->spec.name, "--host", MODELS_CHILD_HOST, "--port", ps};
    for (int i = 0; i < 6; i++) e->argv[k++] = strdup(tail[i]);
    e->argc = k;
    e->port = port;
    e->pid = 0;
    e->stop = false;
    e->failed = false;
    e->exit_code = 0;
    e->last_used = now_s();
    e->stop_timeout = e->spec.stop_timeout;
    e->status = MODEL_LOADING;
    watch_arg *a = malloc(sizeof *a);
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (!a || (*a = (watch_arg){r, e}, pthread_create(&th, &at, watch, a)) != 0) {
        pthread_attr_destroy(&at);
        free(a);
        e->status = MODEL_UNLOADED;
        snprintf(err, errlen, "cannot start a thread for the child");
        return false;
    }
    pthread_attr_destroy(&at);
    r->watchers++;
    set_status(r, e, MODEL_LOADING);
    fprintf(stderr, SERVE_TOOL ": router: starting %s on port %d\n", e->spec.name, port);
    return true;
}

static void *watch(void *arg) {
    watch_arg a = *(watch_arg *)arg;
    free(arg);
    models *r = a.r;
    entry *e = a.e;
    char err[600];
    pthread_mutex_lock(&r->mu);
    const int port = e->port;
    pid_t pid = child_spawn(e->argv, err, sizeof err);
    e->pid = pid > 0 ? pid : 0;
    if (pid > 0 && e->stop) kill(pid, SIGKILL); // unloaded before it was even started
    pthread_mutex_unlock(&r->mu);
    int code = 127;
    if (pid < 0) fprintf(stderr, SERVE_TOOL ": router: %s\n", err);
    double deadline = 0;
    bool signalled = false;
    while (pid > 0) {
        int st;
        const pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            break;
        }
        pthread_mutex_lock(&r->mu);
        const bool loading = e->status == MODEL_LOADING && !e->stop;
        pthread_mutex_unlock(&r->mu);
        if (loading && child_health(port) == 200) {
            pthread_mutex_lock(&r->mu);
            if (e->status == MODEL_LOADING && !e->stop) {
                set_status(r, e, MODEL_LOADED);
                fprintf(stderr, SERVE_TOOL ": router: %s is loaded\n", e->spec.name);
            }
            pthread_mutex_unlock(&r->mu);
        }
        pthread_mutex_lock(&r->mu);
        if (e->stop && !signalled) signalled = true, deadline = now_s() + e->stop_timeout;
        if (signalled && now_s() > deadline) kill(pid, SIGKILL); // it had its stop-timeout
        pthread_mutex_unlock(&r->mu);
        nap(loading ? 0.05 : 0.02);
    }
    pthread_mutex_lock(&r->mu);
    e->exit_code = code;
    e->failed = code != 0 && !e->stop;
    e->pid = 0;
    e->busy = 0;
    set_status(r, e, MODEL_UNLOADED);
    fprintf(stderr, SERVE_TOOL ": router: %s stopped (exit code %d)\n", e->spec.name, code);
    e->stop = false;
    r->watchers--;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

// Adopts a new list: known names take their new spec (used at their next start; a running child
// whose spec changed is stopped, as llama-server does), new names are added, gone ones removed.
static void adopt(models *r, model_specs *s) {
    for (int i = 0; i < r->n; i++) {
        entry *e = r->e[i];
        if (e->removed) continue;
        int k = 0;
        while (k < s->n && (!s->v[k].name || strcmp(s->v[k].name, e->spec.name))) k++;
        bool same = k < s->n && s->v[k].n_args == e->spec.n_args;
        for (int a = 0; same && a < e->spec.n_args; a++)
            same = !strcmp(s->v[k].args[a], e->spec.args[a]);
        if (!same) stop(e);
        if (k == s->n) {
            e->removed = true;
            continue;
        }
        model_spec keep = s->v[k];
        memset(&s->v[k], 0, sizeof s->v[k]);
        models_spec_free(&e->spec);
        e->spec = keep;
    }
    for (int k = 0; k < s->n; k++) {
        if (!s->v[k].name) continue; // adopted above
        entry **g = realloc(r->e, (size_t)(r->n + 1) * sizeof *g);
        entry *e = calloc(1, sizeof *e);
        if (!g || !e) {
            free(e);
            if (g) r->e = g;
            continue;
        }
        r->e = g;
        e->spec = s->v[k];
        memset(&s->v[k], 0, sizeof s->v[k]);
        r->e[r->n++] = e;
    }
    models_list_free(s);
}

models *models_new(const serve_config *cfg, int argc, char **argv, char *err, size_t errlen) {
    models *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    r->cfg = cfg;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    const ssize_t n = readlink("/proc/self/exe", r->exe, sizeof r->exe - 1);
    if (n <= 0) snprintf(r->exe, sizeof r->exe, "%s", argv[0]);
    const char *fake = getenv("LLAMA_SERVER_DEBUG_FAKE_TIMING");
    r->fake_timing = fake && *fake;
    r->pass = calloc((size_t)argc + 1, sizeof *r->pass);
    for (int i = 1; r->pass && i < argc;) {
        const int skip = models_list_reserved(argc, argv, i);
        if (skip) {
            i += skip;
            continue;
        }
        r->pass[r->n_pass++] = argv[i++];
    }
    model_specs s;
    if (!r->pass || !models_list_build(cfg, &s, err, errlen)) {
        if (!r->pass) snprintf(err, errlen, "out of memory");
        models_free(r);
        return NULL;
    }
    adopt(r, &s);
    int startup = 0;
    for (int i = 0; i < r->n; i++) startup += r->e[i]->spec.startup;
    if (cfg->models_max > 0 && startup > cfg->models_max) {
        snprintf(err, errlen, "%d models load on startup, more than --models-max %d", startup,
                 cfg->models_max);
        models_free(r);
        return NULL;
    }
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < r->n; i++)
        if (r->e[i]->spec.startup && !start(r, r->e[i], err, errlen))
            fprintf(stderr, SERVE_TOOL ": router: %s\n", err);
    pthread_mutex_unlock(&r->mu);
    return r;
}

void models_stop_all(models *r) {
    pthread_mutex_lock(&r->mu);
    r->closing = true;
    for (int i = 0; i < r->n; i++) stop(r->e[i]);
    while (r->watchers > 0) pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
}

void models_free(models *r) {
    if (!r) return;
    models_stop_all(r);
    for (int i = 0; i < r->n; i++) {
        models_spec_free(&r->e[i]->spec);
        free_argv(r->e[i]);
        free(r->e[i]);
    }
    for (int i = 0; i < MAX_EVENTS; i++) free(r->ev[i]);
    free(r->e);
    free(r->pass);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
}

bool models_reload(models *r, char *err, size_t errlen) {
    model_specs s;
    if (!models_list_build(r->cfg, &s, err, errlen)) return false;
    pthread_mutex_lock(&r->mu);
    adopt(r, &s);
    event(r, "*", "models_reload", NULL);
    pthread_mutex_unlock(&r->mu);
    return true;
}

static json_object *strings(char **v, int n) {
    json_object *a = json_object_new_array();
    for (int i = 0; i < n; i++) json_object_array_add(a, json_object_new_string(v[i]));
    return a;
}

json_object *models_json(models *r) {
    static const char *const sources[] = {"preset", "models_dir", "cache"};
    json_object *data = json_object_new_array();
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < r->n; i++) {
        const entry *e = r->e[i];
        if (e->removed || e->spec.hidden) continue;
        json_object *st = json_object_new_object();
        json_object_object_add(st, "value", json_object_new_string(status_name(e->status)));
        json_object_object_add(st, "args", strings(e->argv, e->argc));
        if (e->spec.ini) json_object_object_add(st, "preset", json_object_new_string(e->spec.ini));
        if (e->status == MODEL_UNLOADED && e->failed) {
            json_object_object_add(st, "exit_code", json_object_new_int(e->exit_code));
            json_object_object_add(st, "failed", json_object_new_boolean(true));
        }
        json_object *arch = json_object_new_object();
        json_object_object_add(arch, "input_modalities", strings((char *[]){"text"}, 1));
        json_object_object_add(arch, "output_modalities", strings((char *[]){"text"}, 1));
        json_object *m = json_object_new_object();
        json_object_object_add(m, "id", json_object_new_string(e->spec.name));
        json_object_object_add(m, "aliases", strings(e->spec.aliases, e->spec.n_aliases));
        json_object_object_add(m, "tags", strings(e->spec.tags, e->spec.n_tags));
        json_object_object_add(m, "object", json_object_new_string("model"));
        json_object_object_add(m, "owned_by", json_object_new_string("mint"));
        json_object_object_add(m, "created", json_object_new_int64((int64_t)time(NULL)));
        json_object_object_add(m, "status", st);
        json_object_object_add(m, "architecture", arch);
        json_object_object_add(m, "source", json_object_new_string(sources[e->spec.source]));
        json_object_object_add(m, "can_remove", json_object_new_boolean(false));
        json_object_array_add(data, m);
    }
    pthread_mutex_unlock(&r->mu);
    return data;
}

bool models_resolve(models *r, const char *name, char *out, size_t cap) {
    pthread_mutex_lock(&r->mu);
    const entry *e = find(r, name);
    if (e) snprintf(out, cap, "%s", e->spec.name);
    pthread_mutex_unlock(&r->mu);
    return e != NULL;
}

bool models_running(models *r, const char *name) {
    pthread_mutex_lock(&r->mu);
    const entry *e = find(r, name);
    const bool run = e && e->status != MODEL_UNLOADED;
    pthread_mutex_unlock(&r->mu);
    return run;
}

// llama-server's load: at --models-max, the least recently used idle model is stopped first
// (and waited for); then the child starts unless the model runs already. Under mu.
static bool load_locked(models *r, const char *name, char *err, size_t errlen) {
    entry *e = find(r, name);
    if (!e) {
        snprintf(err, errlen, "model '%s' not found", name);
        return false;
    }
    if (!has_room(r)) {
        entry *v = victim(r, e);
        if (v) {
            fprintf(stderr, SERVE_TOOL ": router: --models-max %d reached, stopping %s\n",
                    r->cfg->models_max, v->spec.name);
            stop(v);
            while (v->status != MODEL_UNLOADED) pthread_cond_wait(&r->cv, &r->mu);
        }
    }
    if (e->status != MODEL_UNLOADED) return true;
    if (r->closing) {
        snprintf(err, errlen, "the server is stopping");
        return false;
    }
    if (!has_room(r)) {
        snprintf(err, errlen, "model limit reached (--models-max %d), try again later",
                 r->cfg->models_max);
        return false;
    }
    return start(r, e, err, errlen);
}

static bool load(models *r, const char *name, char *err, size_t errlen) {
    if (r->fake_timing) nap(2); // llama.cpp's test hook, outside the lock as there
    pthread_mutex_lock(&r->mu);
    const bool ok = load_locked(r, name, err, errlen);
    pthread_mutex_unlock(&r->mu);
    return ok;
}

bool models_load(models *r, const char *name, char *err, size_t errlen) {
    pthread_mutex_lock(&r->mu);
    const entry *e = find(r, name);
    const bool run = e && e->status != MODEL_UNLOADED;
    char canon[512] = "";
    if (e) snprintf(canon, sizeof canon, "%s", e->spec.name);
    pthread_mutex_unlock(&r->mu);
    if (!e) {
        snprintf(err, errlen, "model '%s' not found", name);
        return false;
    }
    if (run) {
        snprintf(err, errlen, "model '%s' is already running", name);
        return false;
    }
    return load(r, canon, err, errlen);
}

bool models_unload(models *r, const char *name, char *err, size_t errlen) {
    pthread_mutex_lock(&r->mu);
    entry *e = find(r, name);
    const bool run = e && e->status != MODEL_UNLOADED;
    if (run) stop(e);
    pthread_mutex_unlock(&r->mu);
    if (!run) snprintf(err, errlen, e ? "model is not running" : "model is not found");
    return run;
}

static waiting *queued(models *r, const char *name) {
    for (int i = 0; i < r->n_q; i++)
        if (!strcmp(r->q[i].name, name)) return &r->q[i];
    return NULL;
}

static void dequeue(models *r, const char *name, bool all) {
    for (int i = 0; i < r->n_q; i++)
        if (!strcmp(r->q[i].name, name)) {
            if (!all && --r->q[i].n_waiters > 0) return;
            memmove(&r->q[i], &r->q[i + 1], (size_t)(r->n_q - i - 1) * sizeof r->q[0]);
            r->n_q--;
            pthread_cond_broadcast(&r->cv);
            return;
        }
}

bool models_ready(models *r, const char *name, bool (*gone)(void *), void *ctx, char *err,
                  size_t errlen) {
    pthread_mutex_lock(&r->mu);
    entry *e = find(r, name);
    if (!e) {
        pthread_mutex_unlock(&r->mu);
        snprintf(err, errlen, "model '%s' not found", name);
        return false;
    }
    if (e->status == MODEL_LOADED) {
        pthread_mutex_unlock(&r->mu);
        return true;
    }
    bool in_queue = false, did_load = false, saw_loading = false, ok = true;
    entry *v = NULL;
    if (e->status == MODEL_UNLOADED) {
        if (has_room(r) && r->n_q == 0) {
            pthread_mutex_unlock(&r->mu);
            ok = load(r, name, err, errlen);
            pthread_mutex_lock(&r->mu);
            did_load = true;
        } else {
            // Queued also when a slot looks free but others wait already: they came first.
            waiting *w = queued(r, name);
            if (w) {
                w->n_waiters++;
            } else if (r->n_q < MAX_QUEUE) {
                r->q[r->n_q++] = (waiting){.n_waiters = 1};
                snprintf(r->q[r->n_q - 1].name, sizeof r->q[0].name, "%s", name);
            } else {
                snprintf(err, errlen, "too many models waited for at once");
                ok = false;
            }
            in_queue = ok;
            if (ok && !has_room(r) && (v = victim(r, e)) != NULL) {
                queued(r, name)->slot_pending = true;
                fprintf(stderr, SERVE_TOOL ": router: stopping idle %s to make room for %s\n",
                        v->spec.name, name);
                stop(v);
            }
        }
    }
    while (ok) {
        if (e->removed) break;
        if (e->status == MODEL_LOADED) break;
        if (e->status == MODEL_LOADING) {
            saw_loading = true;
        } else if (did_load || saw_loading) {
            if (e->failed)
                snprintf(err, errlen, "model '%s' failed to load (exit code %d)", name,
                         e->exit_code);
            else
                snprintf(err, errlen, "model '%s' was unloaded while it loaded", name);
            ok = false;
            break;
        } else if (!in_queue) {
            snprintf(err, errlen, "model '%s' is not running", name);
            ok = false;
            break;
        }
        if (r->closing) {
            snprintf(err, errlen, "the server is stopping");
            ok = false;
            break;
        }
        if (gone && gone(ctx)) {
            snprintf(err, errlen, "the client left while model '%s' was loaded", name);
            ok = false;
            break;
        }
        // Our turn: our model heads the queue, nobody is loading it, and a slot is free.
        waiting *w = in_queue ? queued(r, name) : NULL;
        if (e->status == MODEL_UNLOADED && w && w == &r->q[0] && !w->loading && has_room(r)) {
            w->loading = true;
            pthread_mutex_unlock(&r->mu);
            char why[600];
            const bool loaded = load(r, name, why, sizeof why);
            pthread_mutex_lock(&r->mu);
            if ((w = queued(r, name)) != NULL) w->loading = false;
            if (loaded) {
                dequeue(r, name, true); // the other waiters watch the status now
                in_queue = false;
                did_load = true;
            }
            continue;
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 200 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000) until.tv_sec++, until.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&r->cv, &r->mu, &until);
    }
    if (in_queue) dequeue(r, name, false);
    if (ok && e->removed) {
        snprintf(err, errlen, "model '%s' was removed from the list", name);
        ok = false;
    }
    pthread_mutex_unlock(&r->mu);
    return ok;
}

int models_acquire(models *r, const char *name, bool post) {
    pthread_mutex_lock(&r->mu);
    entry *e = find(r, name);
    const int port = e && e->status != MODEL_UNLOADED ? e->port : 0;
    if (port) {
        e->busy++;
        if (post) e->last_used = now_s();
    }
    pthread_mutex_unlock(&r->mu);
    // llama.cpp's test hook: the model counts as busy for 2 s before the request goes on.
    if (port && r->fake_timing) nap(2);
    return port;
}

// name went idle: when a queued request needs a slot and none is on its way, this model gives
// its slot up (unless a queued request wants it). Under mu.
static void idle(models *r, entry *e) {
    if (r->cfg->models_max <= 0 || r->n_q == 0) return;
    int promised = 0;
    bool unserved = false;
    for (int i = 0; i < r->n_q; i++) {
        if (!r->q[i].slot_pending && !r->q[i].loading)
            unserved = true;
        else
            promised++;
    }
    if (!unserved || running(r) - promised < r->cfg->models_max) return;
    if (queued(r, e->spec.name) || e->busy || e->status != MODEL_LOADED) return;
    for (int i = 0; i < r->n_q; i++)
        if (!r->q[i].slot_pending && !r->q[i].loading) {
            r->q[i].slot_pending = true;
            break;
        }
    fprintf(stderr, SERVE_TOOL ": router: %s went idle, giving its slot to a queued request\n",
            e->spec.name);
    stop(e);
}

void models_release(models *r, const char *name) {
    pthread_mutex_lock(&r->mu);
    entry *e = find(r, name);
    if (e && e->busy > 0 && --e->busy == 0) idle(r, e);
    pthread_mutex_unlock(&r->mu);
}

char *models_next_event(models *r, unsigned long *seq, double seconds) {
    pthread_mutex_lock(&r->mu);
    if (*seq == 0) *seq = r->ev_seq;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)seconds;
    while (r->ev_seq == *seq)
        if (pthread_cond_timedwait(&r->cv, &r->mu, &until) != 0) break;
    char *out = NULL;
    if (r->ev_seq > *seq) {
        if (r->ev_seq - *seq > MAX_EVENTS) *seq = r->ev_seq - MAX_EVENTS; // fell behind
        *seq += 1;
        out = r->ev[*seq % MAX_EVENTS] ? strdup(r->ev[*seq % MAX_EVENTS]) : NULL;
    }
    pthread_mutex_unlock(&r->mu);
    return out;
}

int models_max(const models *r) {
    return r->cfg->models_max;
}
