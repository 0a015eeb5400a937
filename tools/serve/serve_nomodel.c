// serve_nomodel.c - STAND-IN, to be replaced by router mode (branch router-mode): mint-serve
// started without -m/-hf but with --tools or --ui-mcp-proxy (llama.cpp's suite starts its tools
// and proxy tests so, as its router preset with no model) listens with no model: /health,
// /tools, /cors-proxy and CORS preflights answer; every other endpoint answers 503 "no model
// loaded" (router.c's dispatch checks that). Kept to this file and two checks (router.c's
// dispatch, serve_options.c's check) so that router mode can take its place.
#include "handlers.h"

#include <signal.h>
#include <stdio.h>

int serve_no_model(serve_config *c, sigset_t *stop_signals) {
    char msg[700];
    serve_metrics *metrics = metrics_new();
    serve_http *h = metrics ? http_start(c, NULL, metrics, NULL, msg, sizeof msg) : NULL;
    if (!h) {
        fprintf(stderr, SERVE_TOOL ": %s\n", metrics ? msg : "out of memory");
        metrics_free(metrics);
        return 1;
    }
    fprintf(stderr, SERVE_TOOL ": no model on http://%s:%d/ (only /health, /tools, /cors-proxy)\n",
            c->host, http_port(h));
    int sig = 0;
    sigwait(stop_signals, &sig);
    http_quiesce(h);
    http_drain(h, 5);
    http_stop(h);
    metrics_free(metrics);
    fprintf(stderr, SERVE_TOOL ": stopped\n");
    return 0;
}
