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
#include "compat.h"
#include "options.h"
#include "serve.h"

#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define F(member) OPT_FIELD(serve_config, member)

static const char *const kv_types[] = {"f32", "f16", "q8_0", "q4_0", NULL}; // mint_kv_type order

static const opt opts[] = {
    {"-m --model", OPT_STRING, F(model_path), "FILE",
     .help = "model (GGUF, safetensors, Hugging Face folder)"},
    {"--host", OPT_STRING, F(host), "ADDR", .def = "127.0.0.1",
     .help = "IPv4 address to listen on"},
    {"--port", OPT_INT, F(port), "N", 0, 65535, .def = "8080",
     .help = "port (0 = any free one, printed)"},
    {"--parallel", OPT_INT, F(parallel), "N", 1, 256, .def = "4", .help = "slots decoded together"},
    {"--queue", OPT_INT, F(queue), "N", 0, 100000, .def = "64",
     .help = "requests waiting beyond the slots"},
    {"-c --ctx-size", OPT_INT, F(n_ctx), "N", 0, 1 << 20,
     .help = "positions per slot (0: the model's, at most 4096)"},
    {"-t --threads", OPT_INT, F(n_threads), "N", 1, 256,
     .help = "threads (default: all online CPUs)"},
    {"--max-tokens", OPT_INT, F(max_tokens), "N", 1, 1 << 20, .def = "4096",
     .help = "most tokens one request may generate"},
    {"--max-body", OPT_INT, F(max_body), "N", 64, 1 << 30, .def = "1048576",
     .help = "largest request body in bytes"},
    {"--max-header", OPT_INT, F(max_header), "N", 1024, 1 << 24, .def = "32768",
     .help = "memory for a request's headers in bytes"},
    {"--max-connections", OPT_INT, F(max_connections), "N", 1, 100000, .def = "1024",
     .help = "connections at once (each an idle thread while it waits)"},
    {"--timeout", OPT_FLOAT, F(timeout), "S", .fmin = 0.1, .fmax = 86400, .def = "600",
     .help = "seconds a request may take"},
    {"--drain", OPT_FLOAT, F(drain), "S", .fmin = 0.1, .fmax = 86400, .def = "30",
     .help = "seconds in-flight requests get at shutdown"},
    {"--api-key", OPT_STRING, F(api_key), "KEY",
     .help = "require Authorization: Bearer KEY (not for / and /health)"},
    {"--chat-template", OPT_STRING, F(chat_template), "NAME", .names = cli_chat_names,
     .help = "the chat template (default: from the model): one of llama.cpp's\n"
             "built-in names, or a Jinja template's text"},
    {"--chat-template-file", OPT_STRING, F(chat_template_file), "FILE",
     .help = "a Jinja chat template from a file"},
    {"--kv-type", OPT_ENUM, F(kv_type), .names = kv_types, .def = "f32",
     .help = "KV cache storage (q8_0, q4_0: quantized rows, as llama.cpp's quantized cache)"},
    {"--kv-block", OPT_INT, F(kv_block), "N", 1, 4096,
     .help = "positions per KV block (default 32)"},
    {"--cache-ram", OPT_INT, F(cache_ram), "MIB", 0, 1 << 24, .def = "1024",
     .help = "memory for cached prompts beyond the slots, MiB (0: none)"},
    LOAD_OPTS(serve_config, load),
    {"-v --verbose", OPT_FLAG, F(verbose), .help = "a line per request on stderr"},
    OPT_VERSION_ROW,
    {"-h --help", OPT_HELP, .help = "this help"},
    COMPAT_SECTION,
    {"-fa --flash-attn", OPT_ENUM, .names = compat_auto_off_on, .bare = "on",
     .note = "ignored: mint-serve picks the attention algorithm per batch"},
    COMPAT_CACHE_OPTS(serve_config, compat),
    COMPAT_GPU_OPTS,
    COMPAT_NO_WARMUP_OPT,
    COMPAT_LOG_DISABLE_OPT,
};

// Also folds llama-server's -ctk and -ctv into --kv-type.
static bool check(void *options, char *err, size_t n) {
    serve_config *c = options;
    if (!c->model_path) {
        snprintf(err, n, "no model given: use -m MODEL (see --help)");
        return false;
    }
    if (c->api_key && !*c->api_key) {
        snprintf(err, n, "--api-key must not be empty");
        return false;
    }
    if (c->chat_template && c->chat_template_file) {
        snprintf(err, n, "give only one of --chat-template and --chat-template-file");
        return false;
    }
    if (c->chat_template && !cli_chat_check(&c->chat_template, err, n)) return false;
    return compat_fold(&c->compat, NULL, &c->kv_type, err, n);
}

static const opt_program program = {
    .name = SERVE_TOOL,
    .usage = "mint-serve -m MODEL [options]",
    .opts = opts,
    .n_opts = sizeof opts / sizeof *opts,
    .check = check,
};

int main(int argc, char **argv) {
    serve_config cfg = {0};
    char msg[700];
    cli_chat_names_init(); // --chat-template's names, for --help and the check
    int done = opt_main(&program, argc, argv, &cfg);
    if (done >= 0) return done;
    // SIGINT and SIGTERM are taken by sigwait below, in this thread only: block them first, so
    // that every thread started from here inherits the mask.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN);
    // Every connection is a descriptor: a soft limit of 1024 would refuse clients long before
    // --max-connections under a crowd of idle or slow ones. Take what the hard limit allows.
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        const rlim_t want = (rlim_t)cfg.max_connections + 64;
        nofile.rlim_cur = want < nofile.rlim_max ? want : nofile.rlim_max;
        if (nofile.rlim_cur > 1024) setrlimit(RLIMIT_NOFILE, &nofile);
    }

    mint_err err;
    mint_model *m;
    if (load_model(SERVE_TOOL, cfg.model_path, &cfg.load, &m, &err) != MINT_OK) {
        fprintf(stderr, SERVE_TOOL ": %s\n", err.msg);
        return 1;
    }
    const char *slash = strrchr(cfg.model_path, '/');
    cfg.model_name = slash ? slash + 1 : cfg.model_path;
    mint_model_desc d;
    mint_model_describe(m, &d);
    if (cfg.n_ctx == 0) cfg.n_ctx = d.n_ctx_train < 4096 ? d.n_ctx_train : 4096;
    // The chat template's Jinja source: --chat-template's preset (or the template it gives),
    // --chat-template-file's text or the model's own. Without one, chat requests get the library's
    // refusal (mint_chat_apply), the same words mint-run -cnv and the Python binding give;
    // /v1/completions never needs it.
    char *tmpl = NULL;
    const char *tmpl_name = "of the model";
    if (cfg.chat_template) {
        tmpl = strdup(cli_chat_source(cfg.chat_template));
        tmpl_name = cli_chat_label(cfg.chat_template);
    } else if (cfg.chat_template_file) {
        size_t len;
        tmpl = cli_read_file(cfg.chat_template_file, &len, msg, sizeof msg);
        if (!tmpl || strlen(tmpl) != len) {
            fprintf(stderr, SERVE_TOOL ": %s\n",
                    tmpl ? "the chat template file holds a NUL byte" : msg);
            free(tmpl);
            mint_model_close(m);
            return 1;
        }
        tmpl_name = cfg.chat_template_file;
    } else if (d.chat_template) {
        tmpl = strdup(d.chat_template);
    } else
        tmpl_name = "none (chat requests are refused)";
    serve_metrics *metrics = metrics_new();
    serve_sched *e = NULL;
    if (!metrics || sched_start(&cfg, m, metrics, &e, &err) != MINT_OK) {
        fprintf(stderr, SERVE_TOOL ": %s\n", metrics ? err.msg : "out of memory");
        metrics_free(metrics);
        mint_model_close(m);
        free(tmpl);
        return 1;
    }
    serve_http *h = http_start(&cfg, e, metrics, tmpl, msg, sizeof msg);
    if (!h) {
        fprintf(stderr, SERVE_TOOL ": %s\n", msg);
        sched_stop(e, 0);
        metrics_free(metrics);
        mint_model_close(m);
        free(tmpl);
        return 1;
    }
    fprintf(stderr,
            SERVE_TOOL ": %s on http://%s:%d/ (%d slots of %d positions, queue %d, chat "
                       "template %s)\n",
            cfg.model_name, cfg.host, http_port(h), cfg.parallel, cfg.n_ctx, cfg.queue, tmpl_name);
    int sig = 0;
    sigwait(&stop_signals, &sig);
    fprintf(stderr,
            SERVE_TOOL ": %s: no new connections; finishing what is in flight (at most "
                       "%g s)\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM", cfg.drain);
    http_quiesce(h);
    sched_stop(e, cfg.drain);
    http_drain(h, 5); // the answers of the last jobs go out
    http_stop(h);
    metrics_free(metrics);
    mint_model_close(m);
    fprintf(stderr, SERVE_TOOL ": stopped\n");
    free(tmpl);
    return 0;
}
