// metrics.c - /metrics in Prometheus's text format: requests by endpoint and status, tokens,
// queue length and busy slots, and histograms of request latency and time to first token
// (mint_*), then llama-server's own series under its names (llamacpp:*, see
// print_llamacpp), so that a dashboard made for llama-server reads mint-serve unchanged.
#include "serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { N_BUCKETS = 12, MAX_SERIES = 64 };
static const double buckets[N_BUCKETS] = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};

typedef struct histogram {
    uint64_t count[N_BUCKETS + 1]; // per bucket (not cumulative); the last is +Inf
    double sum;
    uint64_t n;
} histogram;

typedef struct series {
    char endpoint[48];
    int status;
    uint64_t n;
} series;

struct serve_metrics {
    pthread_mutex_t mu;
    series req[MAX_SERIES]; // requests by (endpoint, status)
    int n_req;
    uint64_t tok_prompt, tok_reused, tok_gen; // prompt tokens evaluated, found cached, generated
    histogram latency, ttft;
    double prompt_s, gen_s; // seconds of prompt evaluation / of generation after the first token
    uint64_t gen_steps;     // generated tokens that cost a decode step (all but each first)
    uint64_t n_decode;      // mint_decode calls of the scheduler
    uint64_t busy_sum;      // busy slots summed over those calls
    uint64_t n_tokens_max;  // longest sequence seen (prompt + generated positions)
    int64_t t_start;        // when the server started (Unix seconds: llama-server's header)
};

serve_metrics *metrics_new(void) {
    serve_metrics *m = calloc(1, sizeof *m);
    if (m) {
        pthread_mutex_init(&m->mu, NULL);
        m->t_start = (int64_t)time(NULL);
    }
    return m;
}

void metrics_free(serve_metrics *m) {
    if (!m) return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

void metrics_request(serve_metrics *m, const char *endpoint, int status) {
    pthread_mutex_lock(&m->mu);
    int i = 0;
    while (i < m->n_req && (m->req[i].status != status || strcmp(m->req[i].endpoint, endpoint)))
        i++;
    if (i == m->n_req && m->n_req < MAX_SERIES) {
        snprintf(m->req[i].endpoint, sizeof m->req[i].endpoint, "%s", endpoint);
        m->req[i].status = status;
        m->n_req++;
    }
    if (i < m->n_req) m->req[i].n++;
    pthread_mutex_unlock(&m->mu);
}

void metrics_tokens(serve_metrics *m, uint64_t prompt, uint64_t reused, uint64_t generated,
                    double prompt_s, double gen_s) {
    pthread_mutex_lock(&m->mu);
    m->tok_prompt += prompt;
    m->tok_reused += reused;
    m->tok_gen += generated;
    m->prompt_s += prompt_s;
    m->gen_s += gen_s;
    m->gen_steps += generated > 0 ? generated - 1 : 0;
    pthread_mutex_unlock(&m->mu);
}

void metrics_decode(serve_metrics *m, int busy, int64_t longest) {
    pthread_mutex_lock(&m->mu);
    m->n_decode++;
    m->busy_sum += (uint64_t)busy;
    if (longest > 0 && (uint64_t)longest > m->n_tokens_max) m->n_tokens_max = (uint64_t)longest;
    pthread_mutex_unlock(&m->mu);
}

int64_t metrics_start_time(const serve_metrics *m) {
    return m->t_start;
}

static void observe(histogram *h, double v) {
    int b = 0;
    while (b < N_BUCKETS && v > buckets[b]) b++;
    h->count[b]++;
    h->sum += v;
    h->n++;
}

void metrics_latency(serve_metrics *m, double total, double ttft) {
    pthread_mutex_lock(&m->mu);
    observe(&m->latency, total);
    if (ttft >= 0) observe(&m->ttft, ttft);
    pthread_mutex_unlock(&m->mu);
}

static void print_histogram(FILE *f, const char *name, const char *help, const histogram *h) {
    fprintf(f, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    uint64_t cum = 0;
    for (int b = 0; b < N_BUCKETS; b++) {
        cum += h->count[b];
        fprintf(f, "%s_bucket{le=\"%g\"} %llu\n", name, buckets[b], (unsigned long long)cum);
    }
    cum += h->count[N_BUCKETS];
    fprintf(f, "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.6f\n%s_count %llu\n", name,
            (unsigned long long)cum, name, h->sum, name, (unsigned long long)h->n);
}

// llama-server's series, with its names, help texts and types (tools/server/server-task.cpp
// of llama.cpp lists them). The two rates are over the whole run (llama-server's reset at each
// read); generation counts decode steps, so each request's first token (it comes with the
// prompt's last batch) does not inflate the rate.
static void print_llamacpp(FILE *f, const serve_metrics *m, int queue, int busy) {
    static const struct {
        const char *name, *help;
        bool counter;
    } items[] = {
        {"prompt_tokens_total", "Number of prompt tokens processed, excluding cached tokens", 1},
        {"prompt_tokens_cached_total", "Number of prompt tokens reused from the cache", 1},
        {"prompt_seconds_total", "Total time spent processing prompts", 1},
        {"tokens_predicted_total", "Number of generation tokens processed", 1},
        {"tokens_predicted_seconds_total", "Total time spent generating tokens", 1},
        {"n_decode_total", "Total number of decode calls (mint_decode) of the scheduler", 1},
        {"n_tokens_max", "Largest observed sequence length (prompt + generation)", 1},
        {"spec_decode_num_draft_tokens_total", "Speculative: draft tokens (none in mint-serve)", 1},
        {"spec_decode_num_accepted_tokens_total", "Speculative: accepted draft tokens", 1},
        {"spec_decode_num_drafts_total", "Speculative: verification steps", 1},
        {"prompt_tokens_seconds", "Average prompt throughput in tokens/s", 0},
        {"predicted_tokens_seconds", "Average generation throughput in tokens/s", 0},
        {"requests_processing", "Number of requests processing", 0},
        {"requests_deferred", "Number of requests deferred", 0},
        {"n_busy_slots_per_decode", "Average number of busy slots per decode call", 0},
    };
    const double v[] = {
        (double)m->tok_prompt,
        (double)m->tok_reused,
        m->prompt_s,
        (double)m->tok_gen,
        m->gen_s,
        (double)m->n_decode,
        (double)m->n_tokens_max,
        0,
        0,
        0,
        m->prompt_s > 0 ? (double)m->tok_prompt / m->prompt_s : 0,
        m->gen_s > 0 ? (double)m->gen_steps / m->gen_s : 0,
        busy,
        queue,
        (double)m->busy_sum / (double)(m->n_decode > 0 ? m->n_decode : 1),
    };
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++)
        fprintf(f, "# HELP llamacpp:%s %s\n# TYPE llamacpp:%s %s\nllamacpp:%s %.17g\n",
                items[i].name, items[i].help, items[i].name, items[i].counter ? "counter" : "gauge",
                items[i].name, v[i]);
}

char *metrics_text(serve_metrics *m, int queue, int busy, int slots) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    pthread_mutex_lock(&m->mu);
    fprintf(f, "# HELP mint_requests_total HTTP requests by endpoint and status.\n"
               "# TYPE mint_requests_total counter\n");
    for (int i = 0; i < m->n_req; i++)
        fprintf(f, "mint_requests_total{endpoint=\"%s\",status=\"%d\"} %llu\n", m->req[i].endpoint,
                m->req[i].status, (unsigned long long)m->req[i].n);
    fprintf(f,
            "# HELP mint_prompt_tokens_total Prompt tokens evaluated.\n"
            "# TYPE mint_prompt_tokens_total counter\nmint_prompt_tokens_total %llu\n"
            "# HELP mint_prompt_tokens_reused_total Prompt tokens found in the KV cache.\n"
            "# TYPE mint_prompt_tokens_reused_total counter\nmint_prompt_tokens_reused_total %llu\n"
            "# HELP mint_generated_tokens_total Tokens generated.\n"
            "# TYPE mint_generated_tokens_total counter\nmint_generated_tokens_total %llu\n"
            "# HELP mint_queue_length Requests waiting for a slot.\n"
            "# TYPE mint_queue_length gauge\nmint_queue_length %d\n"
            "# HELP mint_slots_busy Slots decoding a request.\n"
            "# TYPE mint_slots_busy gauge\nmint_slots_busy %d\n"
            "# HELP mint_slots Slots (--parallel).\n# TYPE mint_slots gauge\nmint_slots %d\n",
            (unsigned long long)m->tok_prompt, (unsigned long long)m->tok_reused,
            (unsigned long long)m->tok_gen, queue, busy, slots);
    print_histogram(f, "mint_request_duration_seconds",
                    "Time from a generation request's arrival to its last token.", &m->latency);
    print_histogram(f, "mint_time_to_first_token_seconds",
                    "Time from a generation request's arrival to its first token.", &m->ttft);
    print_llamacpp(f, m, queue, busy);
    pthread_mutex_unlock(&m->mu);
    fclose(f);
    return buf;
}
