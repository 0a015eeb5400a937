// mint-serve - an OpenAI-compatible HTTP server on mint: /v1/chat/completions and
// /v1/completions (with streaming, logprobs, n, stop, seed), /v1/models, /tokenize, /detokenize,
// /health, /metrics, and a chat page at /. Requests share one context: --parallel slots are
// decoded together in one batch per step (continuous batching), prompts reuse the KV cache's
// shared prefixes, requests beyond the slots wait in a bounded queue (503 + Retry-After when it
// is full). Binds 127.0.0.1 unless --host says otherwise. SIGTERM or SIGINT: stop accepting,
// finish what is in flight (at most --drain seconds), exit 0.
//
// tools/serve/: engine.c (batching), http.c (routing, small endpoints), gen.c (generation
// responses), metrics.c; tools/web/chat.html (the page).
#include "cli.h"
#include "serve.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *out) {
    fprintf(out,
            "usage: mint-serve -m MODEL [options]\n"
            "\n"
            "  -m, --model FILE        model (GGUF, safetensors, Hugging Face folder)\n"
            "      --host ADDR         IPv4 address to listen on (default 127.0.0.1)\n"
            "      --port N            port (default 8080; 0 = any free one, printed)\n"
            "      --parallel N        slots decoded together (default 4)\n"
            "      --queue N           requests waiting beyond the slots (default 64)\n"
            "  -c, --ctx-size N        positions per slot (default: the model's, at most 4096)\n"
            "  -t, --threads N         threads (default: all online CPUs)\n"
            "      --max-tokens N      most tokens one request may generate (default 4096)\n"
            "      --max-body N        largest request body in bytes (default 1048576)\n"
            "      --max-header N      memory for a request's headers in bytes (default 32768)\n"
            "      --max-connections N (default 256)\n"
            "      --timeout S         seconds a request may take (default 600)\n"
            "      --drain S           seconds in-flight requests get at shutdown (default 30)\n"
            "      --api-key KEY       require Authorization: Bearer KEY (not for / and /health)\n"
            "      --chat-template NAME  zephyr | llama2 | chatml (default: from the model)\n"
            "      --chat-template-file FILE  a Jinja chat template to use instead\n"
            "      --kv-type f32|f16   KV cache storage (default f32)\n"
            "      --kv-block N        positions per KV block (default 32)\n"
            "  -v, --verbose           a line per request on stderr\n"
            "  -h, --help              this help\n");
}

static bool parse(int argc, char **argv, serve_config *c, char *err, size_t n) {
    memset(c, 0, sizeof *c);
    c->host = "127.0.0.1";
    c->port = 8080;
    c->parallel = 4;
    c->queue = 64;
    c->max_tokens = 4096;
    c->max_body = 1 << 20;
    c->max_header = 32 << 10;
    c->max_connections = 256;
    c->timeout = 600;
    c->drain = 30;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long long v;
        double d;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            c->verbose = true;
            continue;
        }
        if (a[0] != '-') {
            snprintf(err, n, "unexpected argument '%s' (see --help)", a);
            return false;
        }
        static const char *const with_value[] = {"-m",
                                                 "--model",
                                                 "--host",
                                                 "--port",
                                                 "--parallel",
                                                 "--queue",
                                                 "-c",
                                                 "--ctx-size",
                                                 "-t",
                                                 "--threads",
                                                 "--max-tokens",
                                                 "--max-body",
                                                 "--max-header",
                                                 "--max-connections",
                                                 "--timeout",
                                                 "--drain",
                                                 "--api-key",
                                                 "--chat-template",
                                                 "--chat-template-file",
                                                 "--kv-type",
                                                 "--kv-block"};
        bool known = false;
        for (size_t k = 0; k < sizeof with_value / sizeof *with_value; k++)
            known |= !strcmp(a, with_value[k]);
        if (!known) {
            snprintf(err, n, "unknown option '%s' (see --help)", a);
            return false;
        }
        if (i + 1 >= argc) {
            snprintf(err, n, "%s needs a value (see --help)", a);
            return false;
        }
        const char *val = argv[++i];
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
            c->model_path = val;
        } else if (!strcmp(a, "--host")) {
            c->host = val;
        } else if (!strcmp(a, "--api-key")) {
            if (!*val) {
                snprintf(err, n, "--api-key must not be empty");
                return false;
            }
            c->api_key = val;
        } else if (!strcmp(a, "--chat-template")) {
            if (mint_chat_from_name(val) == MINT_CHAT_UNKNOWN) {
                snprintf(err, n, "--chat-template expects zephyr, llama2 or chatml, got '%s'", val);
                return false;
            }
            c->chat_template = val;
        } else if (!strcmp(a, "--chat-template-file")) {
            c->chat_template_file = val;
        } else if (!strcmp(a, "--kv-type")) {
            if (strcmp(val, "f32") && strcmp(val, "f16")) {
                snprintf(err, n, "--kv-type expects f32 or f16, got '%s'", val);
                return false;
            }
            c->kv_f16 = !strcmp(val, "f16");
        } else if (!strcmp(a, "--timeout") || !strcmp(a, "--drain")) {
            if (!cli_parse_float(a, val, 0.1, 86400, &d, err, n)) return false;
            *(!strcmp(a, "--timeout") ? &c->timeout : &c->drain) = d;
        } else {
            struct {
                const char *flag, *alt;
                long long lo, hi;
                void *dst;
                bool is_size;
            } ints[] = {{"--port", NULL, 0, 65535, &c->port, false},
                        {"--parallel", NULL, 1, 256, &c->parallel, false},
                        {"--queue", NULL, 0, 100000, &c->queue, false},
                        {"-c", "--ctx-size", 0, 1 << 20, &c->n_ctx, false},
                        {"-t", "--threads", 1, 256, &c->n_threads, false},
                        {"--max-tokens", NULL, 1, 1 << 20, &c->max_tokens, false},
                        {"--max-body", NULL, 64, 1 << 30, &c->max_body, true},
                        {"--max-header", NULL, 1024, 1 << 24, &c->max_header, true},
                        {"--max-connections", NULL, 1, 100000, &c->max_connections, false},
                        {"--kv-block", NULL, 1, 4096, &c->kv_block, false}};
            for (size_t k = 0; k < sizeof ints / sizeof *ints; k++) {
                if (strcmp(a, ints[k].flag) && (!ints[k].alt || strcmp(a, ints[k].alt))) continue;
                if (!cli_parse_int(a, val, ints[k].lo, ints[k].hi, &v, err, n)) return false;
                if (ints[k].is_size)
                    *(size_t *)ints[k].dst = (size_t)v;
                else
                    *(int *)ints[k].dst = (int)v;
            }
        }
    }
    if (!c->model_path) {
        snprintf(err, n, "no model given: use -m MODEL (see --help)");
        return false;
    }
    return true;
}

int main(int argc, char **argv) {
    serve_config cfg;
    char msg[700];
    if (!parse(argc, argv, &cfg, msg, sizeof msg)) {
        fprintf(stderr, SERVE_TOOL ": %s\n", msg);
        return 2;
    }
    // SIGINT and SIGTERM are taken by sigwait below, in this thread only: block them first, so
    // that every thread started from here inherits the mask.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    signal(SIGPIPE, SIG_IGN);

    mint_err err;
    mint_model *m;
    if (mint_model_open(cfg.model_path, NULL, &m, &err) != MINT_OK) {
        fprintf(stderr, SERVE_TOOL ": %s\n", err.msg);
        return 1;
    }
    const char *slash = strrchr(cfg.model_path, '/');
    cfg.model_name = slash ? slash + 1 : cfg.model_path;
    mint_model_desc d;
    mint_model_describe(m, &d);
    if (cfg.n_ctx == 0) cfg.n_ctx = d.n_ctx_train < 4096 ? d.n_ctx_train : 4096;
    // The chat template's Jinja source: --chat-template's preset, --chat-template-file's text or
    // the model's own. Without one, chat requests get the library's refusal (mint_chat_apply),
    // the same words mint-run -cnv and the Python binding give; /v1/completions never needs it.
    char *tmpl = NULL;
    const char *tmpl_name = "of the model";
    if (cfg.chat_template) {
        tmpl = strdup(mint_chat_preset(cfg.chat_template));
        tmpl_name = cfg.chat_template;
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
    serve_engine *e = NULL;
    if (!metrics || engine_start(&cfg, m, metrics, &e, &err) != MINT_OK) {
        fprintf(stderr, SERVE_TOOL ": %s\n", metrics ? err.msg : "out of memory");
        metrics_free(metrics);
        mint_model_close(m);
        return 1;
    }
    serve_http *h = http_start(&cfg, e, metrics, tmpl, msg, sizeof msg);
    if (!h) {
        fprintf(stderr, SERVE_TOOL ": %s\n", msg);
        engine_stop(e, 0);
        metrics_free(metrics);
        mint_model_close(m);
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
    engine_stop(e, cfg.drain);
    http_drain(h, 5); // the answers of the last jobs go out
    http_stop(h);
    metrics_free(metrics);
    mint_model_close(m);
    fprintf(stderr, SERVE_TOOL ": stopped\n");
    free(tmpl);
    return 0;
}
