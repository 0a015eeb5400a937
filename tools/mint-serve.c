// mint-serve - an OpenAI-compatible HTTP server on mint: /v1/chat/completions and
// /v1/completions (with streaming, logprobs, n, stop, seed), /v1/models, /tokenize, /detokenize,
// /health, /metrics, and a chat page at /. Requests share one context: --parallel slots are
// decoded together in one batch per step (continuous batching), prompts reuse the KV cache's
// shared prefixes, requests beyond the slots wait in a bounded queue (503 + Retry-After when it
// is full). Binds 127.0.0.1 unless --host says otherwise. SIGTERM or SIGINT: stop accepting,
// finish what is in flight (at most --drain seconds), exit 0.
//
// tools/serve/: scheduler.c (batching), router.c (daemon, routing), handlers_*.c (the endpoints),
// reply.c (JSON, SSE and error answers), metrics.c; tools/web/chat.html (the page).
#include "chat_arg.h"
#include "cli.h"
#include "handlers.h"
#include "hf_cache.h"
#include "models_http.h"
#include "mcp_servers.h"
#include "serve.h"
#include "serve_options.h"
#include "serve_tools.h"
#include "tools_builtin.h"

#include <curl/curl.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Router mode's shutdown hook: MCP calls in flight return at once.
static void stop_mcp(void *mcp) {
    mcp_set_stop(mcp);
}

// Runs the server on c, filled from the command line; returns the exit code.
static int serve(serve_config *c, int argc, char **argv) {
    char msg[700];
    cli_chat_names_init(); // --chat-template's names, for --help and the check
    if (serve_refused_flag(argc, argv, msg, sizeof msg)) {
        fprintf(stderr, SERVE_TOOL ": %s\n", msg);
        return 2;
    }
    int done = opt_main(&serve_program, argc, argv, c);
    if (done >= 0) return done;
    // Vertex AI's prediction mode (handlers_gcp.c): AIP_HTTP_PORT is the port, as llama-server.
    const char *aip_port = getenv("AIP_HTTP_PORT");
    if (gcp_enabled() && aip_port && *aip_port) {
        char *end;
        const long p = strtol(aip_port, &end, 10);
        if (*end || p < 0 || p > 65535) {
            fprintf(stderr, SERVE_TOOL ": AIP_HTTP_PORT '%s' is no port\n", aip_port);
            return 2;
        }
        c->port = (int)p;
    }
    // --tools: checked before the model loads (an unknown name is a usage error).
    if (c->tools && !tools_builtin_start(c->tools, c->tools_runtime, msg, sizeof msg)) {
        fprintf(stderr, SERVE_TOOL ": %s\n", msg);
        return 2;
    }
    if (c->tools)
        fprintf(stderr,
                SERVE_TOOL ": warning: --tools %s: HTTP clients may read and write files "
                           "and run commands as this user (CORS origins: %s)\n",
                c->tools, c->cors_origins);
    if (c->ui_mcp_proxy)
        fprintf(stderr, SERVE_TOOL ": warning: --ui-mcp-proxy: /cors-proxy forwards requests to "
                                   "any URL this host reaches\n");
    // SIGINT and SIGTERM are taken by sigwait (here or in router mode), in this thread only:
    // block them before any thread or child starts, so every thread inherits the mask and a
    // signal during the MCP warm-up cannot end mint-serve with its servers left running.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN);
    // MCP servers, before the model as llama-server does: an invalid configuration stops the
    // start; a server that cannot start or answer only loses its tools (each tries at most 10 s).
    mcp_set *mcp = NULL;
    if (c->mcp_config || c->mcp_json) {
        if (!(mcp = mcp_set_new(c->mcp_config, c->mcp_json, msg, sizeof msg))) {
            fprintf(stderr, SERVE_TOOL ": %s\n", msg);
            return 1;
        }
        mcp_set_warm_up(mcp, 10);
        // Named servers turn /tools on, even when none of them answered (llama-server's rule).
        if (mcp_set_servers(mcp) > 0 && !mcp_set_register(mcp)) {
            fprintf(stderr, SERVE_TOOL ": too many sources of tools\n");
            mcp_set_free(mcp);
            return 1;
        }
    }
    if (!c->model_path && !c->hf_repo) { // router mode: a child mint-serve per model
        const int rc = models_router_run(c, argc, argv, stop_mcp, mcp);
        mcp_set_free(mcp);
        serve_tools_clear();
        return rc;
    }
    char hf_path[2048];
    if (c->hf_repo) {
        if (!hf_cache_find(c->hf_repo, c->hf_file, hf_path, sizeof hf_path, msg, sizeof msg)) {
            fprintf(stderr, SERVE_TOOL ": %s\n", msg);
            mcp_set_free(mcp);
            return 1;
        }
        c->model_path = hf_path;
    }
    // Every connection is a descriptor: a soft limit of 1024 would refuse clients long before
    // --max-connections under a crowd of idle or slow ones. Take what the hard limit allows.
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        const rlim_t want = (rlim_t)c->max_connections + 64;
        nofile.rlim_cur = want < nofile.rlim_max ? want : nofile.rlim_max;
        if (nofile.rlim_cur > 1024) setrlimit(RLIMIT_NOFILE, &nofile);
    }

    mint_err err;
    mint_model *m;
    if (load_model(SERVE_TOOL, c->model_path, &c->load, &m, &err) != MINT_OK) {
        fprintf(stderr, SERVE_TOOL ": %s\n", err.msg);
        mcp_set_free(mcp);
        return 1;
    }
    c->model_name = serve_config_name(c, c->model_path);
    mint_model_desc d;
    mint_model_describe(m, &d);
    serve_config_slots(c, d.n_ctx_train);
    // The chat template's Jinja source: --chat-template's preset, --chat-template-file's text, the
    // model's own, or ChatML for a model without one (llama-server's fallback, so that a client
    // written against llama-server gets an answer from the same file).
    char *tmpl = NULL;
    const char *tmpl_name = "of the model";
    if (c->chat_template) {
        tmpl = strdup(cli_chat_source(c->chat_template));
        tmpl_name = cli_chat_label(c->chat_template);
        if (!mint_chat_preset(c->chat_template) && !cli_chat_is_jinja(c->chat_template))
            fprintf(stderr,
                    SERVE_TOOL ": --chat-template '%.40s' is no built-in name and holds no Jinja: "
                               "it is rendered as a template (the prompt is that text)\n",
                    c->chat_template);
    } else if (c->chat_template_file) {
        size_t len;
        tmpl = cli_read_file(c->chat_template_file, &len, msg, sizeof msg);
        if (!tmpl || strlen(tmpl) != len) {
            fprintf(stderr, SERVE_TOOL ": %s\n",
                    tmpl ? "the chat template file holds a NUL byte" : msg);
            free(tmpl);
            mint_model_close(m);
            mcp_set_free(mcp);
            return 1;
        }
        tmpl_name = c->chat_template_file;
    } else if (d.chat_template) {
        tmpl = strdup(d.chat_template);
    } else { // llama-server's fallback for a model without a template
        tmpl = strdup(mint_chat_preset("chatml"));
        tmpl_name = "chatml (the model has none: llama-server's fallback)";
    }
    serve_metrics *metrics = metrics_new();
    serve_sched *e = NULL;
    if (!metrics || sched_start(c, m, metrics, &e, &err) != MINT_OK) {
        fprintf(stderr, SERVE_TOOL ": %s\n", metrics ? err.msg : "out of memory");
        metrics_free(metrics);
        mint_model_close(m);
        free(tmpl);
        mcp_set_free(mcp);
        return 1;
    }
    serve_http *h = http_start(c, e, metrics, tmpl, msg, sizeof msg);
    if (!h) {
        fprintf(stderr, SERVE_TOOL ": %s\n", msg);
        sched_stop(e, 0);
        metrics_free(metrics);
        mint_model_close(m);
        free(tmpl);
        mcp_set_free(mcp);
        return 1;
    }
    fprintf(stderr,
            SERVE_TOOL ": %s on http://%s:%d/ (%d slots of %d positions, queue %d, chat "
                       "template %s)\n",
            c->model_name, c->host, http_port(h), c->parallel, c->n_ctx, c->queue, tmpl_name);
    int sig = 0;
    sigwait(&stop_signals, &sig);
    fprintf(stderr,
            SERVE_TOOL ": %s: no new connections; finishing what is in flight (at most "
                       "%g s)\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM", c->drain);
    mcp_set_stop(mcp); // tool calls in flight return now: a server may take its time
    http_quiesce(h);
    sched_stop(e, c->drain);
    http_drain(h, 5); // the answers of the last jobs go out
    http_stop(h);
    mcp_set_free(mcp); // after the connections: no call holds a server any more
    metrics_free(metrics);
    mint_model_close(m);
    serve_tools_clear();
    fprintf(stderr, SERVE_TOOL ": stopped\n");
    free(tmpl);
    return 0;
}

int main(int argc, char **argv) {
    serve_config cfg = {0};
    curl_global_init(CURL_GLOBAL_DEFAULT); // before any thread: --ui-mcp-proxy's transfers
    const int rc = serve(&cfg, argc, argv);
    serve_config_free(&cfg);
    curl_global_cleanup();
    return rc;
}
