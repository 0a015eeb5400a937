// mint-bench - prompt-processing and generation speed, measured the way llama-bench measures
// it, plus what llama-bench does not show: the memory bandwidth generation achieves and its
// share of what this machine can deliver (measured here, at the same thread count).
//
//   pp<N>  one batch of N random tokens at position 0 (logits for the last one), tokens/s
//   tg<N>  N single-token evaluations from an empty cache, tokens/s
// Each test gets one warm-up run, then -r repetitions from an empty KV cache; figures are
// mean +- standard deviation over the repetitions (as llama-bench prints them) and the median,
// which the bandwidth columns use: on a shared machine one slow repetition moves the mean.
#include "cli.h"
#include "mint.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TOOL     "mint-bench"
#define MAX_LIST 16

typedef struct options {
    const char *models[MAX_LIST]; // -m
    int n_models;
    int threads[MAX_LIST]; // -t
    int n_threads;
    int pp[MAX_LIST]; // -p
    int n_pp;
    int tg[MAX_LIST]; // -n
    int n_tg;
    int reps;         // -r
    bool json;        // -o json
    bool kv_f16;      // --kv-type f16
    double membw_gib; // --membw-gib (0 = skip the probe)
    bool warmup;      // false with --no-warmup
} options;

static void usage(FILE *out) {
    fprintf(out, "usage: mint-bench -m MODEL [-m MODEL ...] [options]\n"
                 "\n"
                 "  -m, --model FILE     model to measure (repeatable)\n"
                 "  -t, --threads LIST   thread counts, e.g. 1,2 (default 1,2)\n"
                 "  -p, --n-prompt LIST  prompt lengths for pp tests (default 512; 0 = none)\n"
                 "  -n, --n-gen LIST     generated tokens for tg tests (default 128; 0 = none)\n"
                 "  -r, --repetitions N  repetitions per test (default 5)\n"
                 "  -o, --output FMT     md (default) or json\n"
                 "      --kv-type T      f32 (default) or f16\n"
                 "      --membw-gib G    buffer size of the bandwidth probe (default 1; 0 = skip)\n"
                 "      --no-warmup      skip the warm-up run\n"
                 "  -h, --help           this help\n");
}

static bool parse_list(const char *flag, const char *s, int lo, int hi, int *out, int *n, char *err,
                       size_t errlen) {
    *n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        long long v;
        if (*n == MAX_LIST) {
            snprintf(err, errlen, "%s: at most %d values", flag, MAX_LIST);
            return false;
        }
        if (!cli_parse_int(flag, tok, lo, hi, &v, err, errlen)) return false;
        out[(*n)++] = (int)v;
    }
    if (*n == 0) {
        snprintf(err, errlen, "%s expects a comma-separated list, got '%s'", flag, s);
        return false;
    }
    return true;
}

static bool parse_args(int argc, char **argv, options *o, char *err, size_t errlen) {
    memset(o, 0, sizeof *o);
    o->threads[0] = 1, o->threads[1] = 2, o->n_threads = 2;
    o->pp[0] = 512, o->n_pp = 1;
    o->tg[0] = 128, o->n_tg = 1;
    o->reps = 5;
    o->membw_gib = 1;
    o->warmup = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(a, "--no-warmup")) {
            o->warmup = false;
            continue;
        }
        if (i + 1 >= argc) {
            snprintf(err, errlen, "%s needs a value (see --help)", a);
            return false;
        }
        const char *v = argv[++i];
        long long iv;
        double fv;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) {
            if (o->n_models == MAX_LIST) {
                snprintf(err, errlen, "at most %d models", MAX_LIST);
                return false;
            }
            o->models[o->n_models++] = v;
        } else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) {
            if (!parse_list(a, v, 1, 256, o->threads, &o->n_threads, err, errlen)) return false;
        } else if (!strcmp(a, "-p") || !strcmp(a, "--n-prompt")) {
            if (!parse_list(a, v, 0, 1 << 16, o->pp, &o->n_pp, err, errlen)) return false;
        } else if (!strcmp(a, "-n") || !strcmp(a, "--n-gen")) {
            if (!parse_list(a, v, 0, 1 << 16, o->tg, &o->n_tg, err, errlen)) return false;
        } else if (!strcmp(a, "-r") || !strcmp(a, "--repetitions")) {
            if (!cli_parse_int(a, v, 1, 1000, &iv, err, errlen)) return false;
            o->reps = (int)iv;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (strcmp(v, "md") && strcmp(v, "json")) {
                snprintf(err, errlen, "%s expects md or json, got '%s'", a, v);
                return false;
            }
            o->json = !strcmp(v, "json");
        } else if (!strcmp(a, "--kv-type")) {
            if (strcmp(v, "f32") && strcmp(v, "f16")) {
                snprintf(err, errlen, "--kv-type expects f32 or f16, got '%s'", v);
                return false;
            }
            o->kv_f16 = !strcmp(v, "f16");
        } else if (!strcmp(a, "--membw-gib")) {
            if (!cli_parse_float(a, v, 0, 64, &fv, err, errlen)) return false;
            o->membw_gib = fv;
        } else {
            snprintf(err, errlen, "unknown option '%s' (see --help)", a);
            return false;
        }
    }
    if (o->n_models == 0) {
        snprintf(err, errlen, "no model given: use -m MODEL (see --help)");
        return false;
    }
    return true;
}

// A small deterministic generator for the random tokens (the same prompt for every run).
static uint32_t next_rand(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

typedef struct result {
    const char *model; // path
    int threads;       // thread count
    char test[16];     // "pp512" / "tg128"
    double mean, sd;   // tokens per second
    double median;     // tokens per second
    double gbps;       // achieved bandwidth at the median (tg only), GB/s
    double bw_share;   // gbps / measured read bandwidth (tg only; 0 if not measured)
} result;

static double stddev(const double *x, int n, double mean) {
    if (n < 2) return 0;
    double s = 0;
    for (int i = 0; i < n; i++) s += (x[i] - mean) * (x[i] - mean);
    return sqrt(s / (n - 1));
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Median of x[0..n-1] (n >= 1); sorts x.
static double median(double *x, int n) {
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

// Times one test: pp (n tokens in one batch) or tg (n single tokens). Returns seconds.
static double run_once(mint_ctx *ctx, const int32_t *toks, int n, bool pp, mint_err *err,
                       bool *ok) {
    double t0 = cli_now();
    if (pp) {
        *ok = mint_eval(ctx, toks, n, 0, false, err) == MINT_OK;
    } else {
        *ok = true;
        for (int i = 0; i < n && *ok; i++)
            *ok = mint_eval(ctx, toks + i, 1, i, false, err) == MINT_OK;
    }
    return cli_now() - t0;
}

static bool bench_model(const options *o, const char *path, result *res, int *n_res,
                        const double *membw) {
    mint_err err;
    mint_model *m;
    if (mint_model_open(path, NULL, &m, &err) != MINT_OK) {
        fprintf(stderr, TOOL ": %s\n", err.msg);
        return false;
    }
    mint_model_desc d;
    mint_model_describe(m, &d);
    struct stat st;
    uint64_t fsize = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
    if (!o->json)
        fprintf(stderr,
                TOOL ": %s: %.2f GiB file, %.3f B params, types %s, kernels %s, %.1f MB read per "
                     "generated token\n",
                path, fsize / 1073741824.0, d.n_params / 1e9, d.types, mint_isa_name(),
                d.bytes_per_token / 1e6);
    int max_n = 1;
    for (int i = 0; i < o->n_pp; i++) max_n = o->pp[i] > max_n ? o->pp[i] : max_n;
    for (int i = 0; i < o->n_tg; i++) max_n = o->tg[i] > max_n ? o->tg[i] : max_n;
    int32_t *toks = malloc((size_t)max_n * sizeof *toks);
    uint64_t seed = 42;
    for (int i = 0; i < max_n; i++) toks[i] = (int32_t)(next_rand(&seed) % (uint32_t)d.n_vocab);
    if (d.bos >= 0) toks[0] = d.bos;
    bool ok = true;
    for (int ti = 0; ti < o->n_threads && ok; ti++) {
        mint_ctx_params cp = mint_ctx_default_params();
        cp.n_threads = o->threads[ti];
        cp.n_ctx = max_n;
        cp.n_batch = max_n;
        cp.kv_type = o->kv_f16 ? MINT_KV_F16 : MINT_KV_F32;
        mint_ctx *ctx;
        if (mint_ctx_create(m, &cp, &ctx, &err) != MINT_OK) {
            fprintf(stderr, TOOL ": %s\n", err.msg);
            ok = false;
            break;
        }
        for (int kind = 0; kind < 2 && ok; kind++) {
            bool pp = kind == 0;
            const int *lens = pp ? o->pp : o->tg;
            int n_lens = pp ? o->n_pp : o->n_tg;
            for (int li = 0; li < n_lens && ok; li++) {
                int n = lens[li];
                if (n == 0) continue;
                if (o->warmup) run_once(ctx, toks, pp ? n : 1, pp, &err, &ok);
                double tps[1000];
                for (int r = 0; r < o->reps && ok; r++)
                    tps[r] = n / run_once(ctx, toks, n, pp, &err, &ok);
                if (!ok) {
                    fprintf(stderr, TOOL ": %s\n", err.msg);
                    break;
                }
                result *rr = &res[(*n_res)++];
                memset(rr, 0, sizeof *rr);
                rr->model = path;
                rr->threads = o->threads[ti];
                snprintf(rr->test, sizeof rr->test, "%s%d", pp ? "pp" : "tg", n);
                double sum = 0;
                for (int r = 0; r < o->reps; r++) sum += tps[r];
                rr->mean = sum / o->reps;
                rr->sd = stddev(tps, o->reps, rr->mean);
                rr->median = median(tps, o->reps);
                if (!pp) {
                    rr->gbps = rr->median * (double)d.bytes_per_token / 1e9;
                    rr->bw_share = membw[ti] > 0 ? rr->gbps / membw[ti] : 0;
                }
                if (!o->json)
                    fprintf(stderr, TOOL ": %s t=%d %s: %.2f +- %.2f tokens/s, median %.2f\n", path,
                            rr->threads, rr->test, rr->mean, rr->sd, rr->median);
            }
        }
        mint_ctx_free(ctx);
    }
    if (!o->json && ok) {
        printf("\n| model | size | params | types | kernels | threads | test | t/s | median | "
               "GB/s | of bw |\n|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|\n");
        for (int i = 0; i < *n_res; i++) {
            const result *r = &res[i];
            if (r->model != path) continue;
            const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
            printf("| %s | %.2f GiB | %.2f B | %s | %s | %d | %s | %.2f ± %.2f | %.2f | ", base,
                   fsize / 1073741824.0, d.n_params / 1e9, d.types, mint_isa_name(), r->threads,
                   r->test, r->mean, r->sd, r->median);
            if (r->gbps > 0)
                printf("%.1f | ", r->gbps);
            else
                printf("- | ");
            if (r->bw_share > 0)
                printf("%.0f%% |\n", 100 * r->bw_share);
            else
                printf("- |\n");
        }
    }
    free(toks);
    mint_model_close(m);
    return ok;
}

int main(int argc, char **argv) {
    options o;
    char msg[600];
    if (!parse_args(argc, argv, &o, msg, sizeof msg)) {
        fprintf(stderr, TOOL ": %s\n", msg);
        return 2;
    }
    // The bandwidth bound, per thread count, before any model is loaded.
    double membw[MAX_LIST] = {0};
    for (int ti = 0; ti < o.n_threads && o.membw_gib > 0; ti++) {
        mint_err err;
        size_t bytes = (size_t)(o.membw_gib * 1073741824.0);
        if (mint_measure_read_bandwidth(o.threads[ti], bytes, 5, &membw[ti], &err) != MINT_OK) {
            fprintf(stderr, TOOL ": %s\n", err.msg);
            return 1;
        }
        if (!o.json)
            fprintf(stderr, TOOL ": memory read bandwidth with %d thread%s: %.1f GB/s\n",
                    o.threads[ti], o.threads[ti] > 1 ? "s" : "", membw[ti]);
    }
    result *res = calloc((size_t)MAX_LIST * MAX_LIST * MAX_LIST * 2, sizeof *res);
    int n_res = 0;
    int rc = 0;
    for (int i = 0; i < o.n_models; i++)
        if (!bench_model(&o, o.models[i], res, &n_res, membw)) rc = 1;
    if (o.json) {
        printf("[");
        for (int i = 0; i < n_res; i++) {
            const result *r = &res[i];
            int ti = 0;
            while (ti < o.n_threads && o.threads[ti] != r->threads) ti++;
            printf("%s\n {\"model\":", i ? "," : "");
            cli_json_str(stdout, r->model, strlen(r->model));
            printf(",\"kernels\":\"%s\",\"threads\":%d,\"test\":\"%s\",\"tps_mean\":%.4f,"
                   "\"tps_sd\":%.4f,\"tps_median\":%.4f,\"reps\":%d,\"gbps\":%.3f,"
                   "\"membw_gbps\":%.3f,\"bw_share\":%.4f}",
                   mint_isa_name(), r->threads, r->test, r->mean, r->sd, r->median, o.reps, r->gbps,
                   ti < o.n_threads ? membw[ti] : 0.0, r->bw_share);
        }
        printf("\n]\n");
    }
    free(res);
    return rc;
}
