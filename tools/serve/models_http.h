// models_http.h - router mode's HTTP side (models_http.c: the daemon and the router's own
// endpoints; models_proxy.c: forwarding to a child). Internal to router mode; mint-serve's main
// calls models_router_run only.
#ifndef MINT_SERVE_MODELS_HTTP_H
#define MINT_SERVE_MODELS_HTTP_H

#include "handlers.h"
#include "models.h"

// Forwards the request to the child of model name (loaded: see models_ready) and queues its
// answer on c, its body streamed through; post: the request counts as a use (LRU order).
enum MHD_Result models_forward(models *r, const serve_config *cfg, struct MHD_Connection *c,
                               const serve_call *call, const char *name, bool post);

// Runs router mode until SIGTERM or SIGINT (blocked by the caller, taken with sigwait); returns
// the exit code. on_stop(stop_cls), when given, runs as soon as the signal comes, before
// connections are waited for (mint-serve ends MCP calls in flight there).
int models_router_run(const serve_config *cfg, int argc, char **argv, void (*on_stop)(void *),
                      void *stop_cls);

#endif // MINT_SERVE_MODELS_HTTP_H
