// serve.h - mint-serve's parts: jobs (one generation each), the scheduler that decodes all busy
// slots together in one batch per step (scheduler.c), the HTTP side on libmicrohttpd (router.c
// routes to the handlers_*.c, which answer through reply.c), the counters and histograms of
// /metrics (metrics.c). Uses the public API (mint.h) only. The calls go one way:
// router -> handlers -> reply, and handlers -> scheduler -> metrics; nothing calls back up.
//
// Threads: libmicrohttpd runs one thread per connection; each turns its request into jobs,
// queues them, and waits on them. One scheduler thread owns the context: it admits queued jobs
// into free slots (sequences of the context), evaluates every slot's next tokens in one
// mint_decode, runs each slot's generation step (mint_gen_step), and posts the tokens to the
// jobs. A job is shared by its connection and the scheduler under its mutex, and freed by
// whichever releases it last.
#ifndef MINT_SERVE_H
#define MINT_SERVE_H

#include "compat.h"
#include "mint.h"
#include "model_load.h"
#include "serve_request.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SERVE_TOOL     "mint-serve"
#define SERVE_MAX_JOBS 16 // jobs of one request: its choices (n) or its prompts (/completion)

typedef struct serve_config {
    const char *model_path; // -m, or the file -hf / --hf-file found in the cache
    const char *model_name; // the id /v1/models reports (--alias, else the file's name)
    const char *alias;      // -a --alias: a name, or several separated by ',', or NULL
    const char *tags;       // --tags: ',' separated, or NULL
    const char *hf_repo;    // -hf owner/name[:quant], or NULL
    const char *hf_file;    // --hf-file, or NULL
    const char *model_url;  // --model-url (refused: mint does not download)
    const char *host;       // --host (default 127.0.0.1)
    int port;               // --port (default 8080; 0 = any free port, printed)
    int parallel;           // --parallel: slots decoded together (-1: llama-server's auto, 4)
    int queue;              // --queue: requests waiting beyond the slots
    int ctx_size;           // -c as given: positions of the whole context (llama-server's
                            // meaning), split over the slots unless --kv-unified; 0: the model's
    bool kv_unified;        // -kvu: every slot may use the whole context (one shared pool)
    bool no_kv_unified;     // -no-kvu
    int n_ctx;              // positions per slot (from -c, --parallel and -kvu at start-up)
    int n_threads;          // -t
    int max_tokens;         // --max-tokens: cap on max_tokens
    int n_predict;          // -n: tokens a request generates when it does not say (-1: up
                            // to the context); a request's own limit is capped by it too
    mint_sampler_params sampling; // --temp --top-k --top-p --min-p --repeat-penalty
                                  // --repeat-last-n: a request's defaults
    int64_t seed;                 // -s --seed: a request's default seed (-1: a new one each time)
    bool ignore_eos;              // --ignore-eos: every request's default
    size_t max_body;              // --max-body bytes
    size_t max_header;            // --max-header bytes (all headers of a request)
    int max_connections;          // --max-connections
    double timeout;               // --timeout: seconds a request may take
    double drain;                 // --drain: seconds in-flight requests get at shutdown
    const char *api_key;      // --api-key: one key or several separated by ',' (Bearer), or NULL
    const char *api_key_file; // --api-key-file: one key per line, or NULL
    char **api_keys;          // [n_api_keys] every accepted key (from both), filled at start-up
    int n_api_keys;
    const char *cors_origins;  // --cors-origins: allowed origins, ',' separated ("*" default;
                               // "localhost" with --tools)
    const char *chat_template; // --chat-template, or NULL (the model's)
    bool no_jinja;             // --no-jinja: --chat-template's value must be a name or Jinja text
    const char *chat_template_kwargs; // --chat-template-kwargs: a JSON object, or NULL
    int reasoning;                    // -rea --reasoning: a mint_chat_reasoning (auto, on, off)
    int reasoning_format; // --reasoning-format: a mint_reasoning_format (auto, none, deepseek)
    bool slots;           // --slots (the default: /slots answers)
    bool no_slots;        // --no-slots: /slots answers 501
    bool props;           // --props: POST /props may change settings
    bool metrics;         // --metrics (/metrics answers either way)
    bool no_ui;           // --no-ui / --no-webui: no page at /
    int kv_block;         // --kv-block (0 = default)
    int n_batch;          // -b --batch-size: tokens per scheduler step (0 = the context's)
    bool spm_infill;      // --spm-infill: /infill puts the suffix before the prefix
    const char *slot_save_path; // --slot-save-path: the folder of slot files, or NULL (off)
    int kv_type;                // --kv-type: a mint_kv_type (the index in kv_types)
    int cache_ram;              // --cache-ram: MiB of KV blocks kept for the prompt cache beyond
                                // the slots' own (mint_ctx_params.prefix_cache_bytes)
    bool verbose;               // -v: a line per request
    // --chat-template-file: a Jinja chat template to read, or NULL
    const char *chat_template_file;
    const char *tools;         // --tools: built-in agent tools ("all" or ',' separated), or NULL
    const char *tools_runtime; // --tools-runtime: where the tools run (docker-container:ID, ...)
    bool ui_mcp_proxy;         // --ui-mcp-proxy: GET/POST /cors-proxy forwards to ?url=
    const char *mcp_config;    // --mcp-servers-config: a JSON file of MCP servers, or NULL
    const char *mcp_json;      // --mcp-servers-json: the same configuration inline, or NULL
    load_options load;         // --no-mmap, --mlock: how the weights are loaded
    compat_options compat;     // llama-server's -ctk, -ctv (folded into kv_type)
    // Router mode (no -m and no -hf: models.h)
    const char *models_dir;    // --models-dir: a folder of .gguf files (and folders of them)
    const char *models_preset; // --models-preset: an INI file of models and their flags
    int models_max;            // --models-max: children at once (0: no limit)
    bool models_autoload;      // --models-autoload (the default)
    bool no_models_autoload;   // --no-models-autoload: a request never starts a child
    bool no_ui_mcp_proxy;      // --no-ui-mcp-proxy: no proxy, whatever else says
} serve_config;

// One token as a job's client sees it.
typedef struct serve_token {
    int32_t id;                       // token id
    float logprob;                    // log-probability under the model (temperature 1)
    int n_top;                        // alternatives filled
    int32_t top_id[SERVE_MAX_TOP_LP]; // the most likely tokens there, best first
    float top_lp[SERVE_MAX_TOP_LP];   // their log-probabilities
    size_t text_end;                  // bytes of the job's text this token ends at
} serve_token;

typedef enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE } job_state;

// What a job does in its slot: generate, or one of llama-server's slot actions (/slots/N).
typedef enum job_action {
    JOB_GENERATE,     // evaluate the prompt, then generate
    JOB_SLOT_SAVE,    // copy the slot's tokens into the job (n_saved, saved)
    JOB_SLOT_RESTORE, // evaluate the prompt into the slot (a saved file's tokens), no generation
    JOB_SLOT_ERASE,   // empty the slot (n_saved: the positions it held)
} job_action;

typedef struct job {
    // Set when the job is made, then read-only.
    uint64_t id;     // request id (for logs)
    int32_t *prompt; // [n_prompt] tokens
    int n_prompt;
    int max_tokens;             // tokens to generate at most
    mint_sampler_params sp;     // sampling
    char *stop[SERVE_MAX_STOP]; // stop strings
    int n_stop;
    int top_logprobs;   // alternatives per token (0..20)
    bool ignore_eos;    // keep going past an end-of-generation token
    bool post_sampling; // log-probabilities from the distribution drawn from (post_sampling_probs)
    int peek;           // > 0: no generation; report this many candidates for the
                        // next token (the page's sampler view)
    mint_grammar *grammar; // what the output must match (owned; attached to the slot's
                           // sampler), or NULL
    int32_t *bias_id;      // [n_bias] logit_bias: tokens ...
    float *bias;           // ... and what is added to their logits (-INFINITY: banned)
    int n_bias;
    double t_created; // seconds (monotonic)
    double deadline;  // the request's time limit
    int want_slot;    // the slot it must run in (id_slot, a slot action), or -1: any free one
    job_action action;
    // Shared with the scheduler, under mu.
    pthread_mutex_t mu;
    pthread_cond_t cv; // signalled on every change
    job_state state;
    serve_token *tok; // [n_tok] generated tokens
    int n_tok, cap_tok;
    char *text; // [text_len] generated text
    size_t text_len, text_cap;
    size_t visible;               // text the client may see (a stop string's start is held back)
    const char *finish;           // "stop", "length", "cancelled", "error"
    char error[MINT_ERR_MSG_MAX]; // when finish is "error"
    bool cancelled;               // the client is gone, or the server stops
    int n_reused;                 // prompt tokens found in the KV cache
    int slot;                     // the slot it ran in (-1: not admitted)
    int stop_word;                // the stop string that ended it (index in stop), or -1
    double t_started;             // when a slot took it (0: not yet)
    double t_first;               // when the first token came (0: not yet)
    double t_done;                // when it finished
    float *peek_p;                // peek: [peek] probabilities (temperature 1) ...
    int32_t *peek_id;             // ... of the most likely next tokens, best first
    float *peek_logit;            // ... and their logits
    bool progress;                // set at creation: record prompt progress (return_progress)
    int *prog_done;               // [n_prog] prompt positions in the KV cache after each step
    double *prog_t; // [n_prog] ... and when (the first: at admission, the cached part)
    int n_prog, cap_prog;
    int32_t *saved; // JOB_SLOT_SAVE: [n_saved] the slot's tokens
    int n_saved;    // ... (JOB_SLOT_ERASE: the positions the slot held)
    int refs;       // holders (connection, scheduler)
} job;

job *job_new(void);
void job_release(job *j); // drops a reference; frees at zero
// Appends text under j->mu (scheduler side).
bool job_add_text(job *j, const char *s, size_t n);

typedef struct serve_metrics serve_metrics;

typedef struct serve_sched serve_sched;

// scheduler.c: starts the scheduler thread on a context made for cfg (parallel slots).
mint_status sched_start(const serve_config *cfg, mint_model *m, serve_metrics *metrics,
                        serve_sched **out, mint_err *err);
// Queues jobs (all or none): false when the queue cannot take n more.
bool sched_submit(serve_sched *e, job *const *jobs, int n);
int sched_queue_length(serve_sched *e);
int sched_busy_slots(serve_sched *e);
// A slot as GET /slots shows it (read without stopping the scheduler: a snapshot).
typedef struct serve_slot_info {
    bool busy;     // a job is in it
    uint64_t task; // its job's request id (0 when free)
    int n_past;    // positions of its sequence in the KV cache
    int n_prompt;  // its job's prompt tokens
    int n_decoded; // tokens generated so far
} serve_slot_info;
// Fills info[0 .. slots) (cap at least the --parallel count) and returns how many.
int sched_slot_info(serve_sched *e, serve_slot_info *info, int cap);
// Stops admitting; waits up to `seconds` for queued and running jobs, cancels what is left, and
// joins the thread.
void sched_stop(serve_sched *e, double seconds);
const mint_model *sched_model(const serve_sched *e);

// metrics.c
serve_metrics *metrics_new(void);
void metrics_free(serve_metrics *m);
void metrics_request(serve_metrics *m, const char *endpoint, int status);
// A finished request: prompt tokens evaluated and found cached, tokens generated, seconds spent
// on its prompt and on its generation after the first token.
void metrics_tokens(serve_metrics *m, uint64_t prompt, uint64_t reused, uint64_t generated,
                    double prompt_s, double gen_s);
// One mint_decode of the scheduler: slots busy in it, the longest sequence after it.
void metrics_decode(serve_metrics *m, int busy, int64_t longest);
// Unix time the server started (the Process-Start-Time-Unix header of /metrics).
int64_t metrics_start_time(const serve_metrics *m);
void metrics_latency(serve_metrics *m, double total, double ttft);
// The Prometheus text exposition (malloc'd).
char *metrics_text(serve_metrics *m, int queue, int busy, int slots);

// router.c
typedef struct serve_http serve_http;
serve_http *http_start(const serve_config *cfg, serve_sched *e, serve_metrics *m, const char *tmpl,
                       char *err, size_t errlen);
int http_port(const serve_http *h);
// Stops accepting connections (the listening socket closes); requests in flight go on.
void http_quiesce(serve_http *h);
// Waits up to `seconds` until no request is in progress: the answers of jobs that just finished
// are written before the daemon stops (which cuts every connection still open).
void http_drain(serve_http *h, double seconds);
void http_stop(serve_http *h);

double serve_now(void);

#endif // MINT_SERVE_H
