// models.h - mint-serve's router mode (llama-server's "router"): started without a model, it
// lists the models it can serve (the Hugging Face cache, --models-dir, --models-preset), runs
// one child mint-serve per model on demand (this same program on a loopback port) and forwards
// each request to the child of its "model". Not to be confused with router.c, the URL dispatcher
// of a single-model server.
//
// The parts, one way: models_http.c (its daemon and endpoints) -> models_proxy.c (forwarding to a
// child) and models_registry.c (the models' states, loading, unloading, the --models-max queue)
// -> models_list.c (the model list and a child's command line) and models_child.c (processes,
// ports, health checks).
#ifndef MINT_SERVE_MODELS_H
#define MINT_SERVE_MODELS_H

#include "serve.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <sys/types.h>

#define MODELS_CHILD_HOST "127.0.0.1" // children listen on loopback whatever --host says

typedef enum model_source {
    MODEL_SOURCE_PRESET,
    MODEL_SOURCE_DIR,
    MODEL_SOURCE_CACHE
} model_source;

// One model the router can serve, as its sources describe it.
typedef struct model_spec {
    char *name;          // the id clients ask for ("owner/name:QUANT", a file's stem, a section)
    model_source source; // where it came from (a preset section over a cache entry wins)
    char **args;         // [n_args] the child's flags for the model (-m / -hf, the preset's)
    int n_args;
    char **aliases; // [n_aliases] other names that route to it (preset "alias")
    int n_aliases;
    char **tags; // [n_tags] informational (preset "tags")
    int n_tags;
    char *ini;        // the preset's section as INI text (GET /models shows it), or NULL
    char *path;       // the model file it resolves to (for dedup-cache-models), or NULL
    bool hidden;      // left out of GET /models (dedup-cache-models), still served
    bool startup;     // load-on-startup
    bool dedup;       // this preset hides the cache entry of the same file
    int stop_timeout; // seconds a child gets to stop before it is killed
} model_spec;

typedef struct model_specs {
    model_spec *v; // [n] sorted by name
    int n;
} model_specs;

// models_list.c: reads every source of cfg (the preset file anew each time); false with one line
// in err on a malformed or unreadable preset, an unknown preset key, a --models-dir that is not a
// folder, or two models claiming one name.
bool models_list_build(const serve_config *cfg, model_specs *out, char *err, size_t errlen);
void models_list_free(model_specs *s);
void models_spec_free(model_spec *m); // and zeroes it
// The router's own flags that a child must not get (listening, keys, the models options): the
// number of arguments argv[i] takes up with its value (1 or 2), or 0 when it is passed on.
int models_list_reserved(int argc, char **argv, int i);

// models_child.c: processes.
// A loopback port free now (the kernel's pick; the child binds it a moment later).
int child_free_port(void);
// Starts argv[0] with argv in a new process that is killed when the calling thread ends (so a
// child never outlives its router); -1 with err on failure.
pid_t child_spawn(char *const *argv, char *err, size_t errlen);
// The HTTP status of GET /health on the child's port (0: nothing answers yet).
int child_health(int port);
// A connected socket to the child's port with send/receive time-outs of `seconds`; -1 on failure.
int child_connect(int port, double seconds);

typedef enum model_status {
    MODEL_UNLOADED,
    MODEL_LOADING,
    MODEL_LOADED,
} model_status;

typedef struct models models;

// models_registry.c: the models and their children.
models *models_new(const serve_config *cfg, int argc, char **argv, char *err, size_t errlen);
// Stops every child (SIGTERM, then SIGKILL after its stop-timeout) and waits until all are
// reaped; requests waiting for a model give up.
void models_stop_all(models *r);
// models_stop_all, then frees everything.
void models_free(models *r);
// Re-reads the sources (POST /models/reload, GET /models?reload=1): children of models removed
// or changed are stopped; false with err when the new list is bad (the old one stays).
bool models_reload(models *r, char *err, size_t errlen);
// GET /models's list (a new array).
json_object *models_json(models *r);
// Resolves name or an alias to the model's name in out; false when unknown.
bool models_resolve(models *r, const char *name, char *out, size_t cap);
bool models_running(models *r, const char *name); // loading or loaded
// Starts the child (POST /models/load); false with err (unknown, running, no room).
bool models_load(models *r, const char *name, char *err, size_t errlen);
// Stops the child (POST /models/unload); false with err when it is not running.
bool models_unload(models *r, const char *name, char *err, size_t errlen);
// Waits until name is loaded, loading it (and queueing for a --models-max slot) as needed;
// gone(ctx) says whether the client left. false with err when it failed or the client left.
bool models_ready(models *r, const char *name, bool (*gone)(void *), void *ctx, char *err,
                  size_t errlen);
// A request is forwarded to name's child: its port, and the model counts as busy until
// models_release (never evicted while busy). post: a POST, which counts as a use for the LRU
// order. 0 when the model is not running.
int models_acquire(models *r, const char *name, bool post);
void models_release(models *r, const char *name);
// Waits up to `seconds` for an event after *seq (status changes, reloads) and returns it as
// {"model", "event", "data"} text (malloc'd), or NULL when none came.
char *models_next_event(models *r, unsigned long *seq, double seconds);
int models_max(const models *r);

#endif // MINT_SERVE_MODELS_H
