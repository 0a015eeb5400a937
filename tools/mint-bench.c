// mint-bench - prompt-processing and generation speed, measured the way llama-bench measures
// it, plus what llama-bench does not show: the memory bandwidth generation achieves and its
// share of what this machine can deliver (measured here, at the same thread count).
//
//   pp<N>        one batch of N random tokens (logits for the last one), tokens/s
//   tg<N>        N single-token evaluations, tokens/s
//   ... @ d<D>   the same with D tokens already in the KV cache (llama-bench's -d): the cache
//                is filled once, untimed, and every repetition starts from it
//   tg<N> x<S>   S sequences decoded together (--n-seq), each after its own prompt of
//                --seq-prompt tokens: S tokens per step in one batch, aggregate tokens/s (what
//                llama-batched-bench reports as its generation speed)
// Each test gets one warm-up run, then -r repetitions; figures are mean +- standard deviation
// over the repetitions (as llama-bench prints them) and the median, which the bandwidth columns
// use: on a shared machine one slow repetition moves the mean.
//
// The bandwidth share compares with a probe that streams a buffer larger than the caches. When a
// token's reads fit in cache, a share of memory bandwidth means nothing: the table says "fits in
// cache" and the JSON carries "in_cache": true next to the same numbers. A token fits when its
// bytes are within the last-level cache (its size from sysfs), or, where sysfs does not say, when
// one thread reads that many bytes at least 1.5x faster than it reads the probe's buffer. A share
// above 100% otherwise shows as "n/a (cache)". Sizes print in the unit that fits.
#include "cli.h"
#include "compat.h"
#include "mint.h"
#include "model_load.h"
#include "options.h"

#include <glob.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TOOL     "mint-bench"
#define MAX_LIST 16

typedef struct options {
    opt_strs models;     // -m (repeatable, at most MAX_LIST)
    opt_ints threads;    // -t
    opt_ints pp;         // -p: prompt lengths
    opt_ints tg;         // -n: generated tokens
    opt_ints depth;      // -d: tokens already in the KV cache
    opt_ints attn;       // --attention (mint_attention values)
    opt_ints n_seq;      // --n-seq
    int seq_prompt;      // --seq-prompt
    int kv_block;        // --kv-block (0 = the library's default)
    int reps;            // -r
    bool json;           // -o json (index 1 of md, json)
    int kv_type;         // --kv-type: a mint_kv_type (the index in kv_types)
    double membw_gib;    // --membw-gib (0 = skip the probe)
    bool no_warmup;      // --no-warmup
    bool no_repack_wait; // --no-repack-wait
    int mmap;            // -mmp: 1 maps the model, 0 reads it into memory (llama-bench's -mmp)
    load_options load;   // --no-mmap (the same as -mmp 0), --mlock
} options;

#define F(member) OPT_FIELD(options, member)

static const char *const formats[] = {"md", "json", NULL};
static const char *const kv_types[] = {"f32", "f16", "q8_0", "q4_0", NULL}; // mint_kv_type order
// Bytes per element of each --kv-type (a Q8_0 block: 34 bytes per 32, Q4_0: 18 per 32).
static const double kv_elem_bytes[] = {4.0, 2.0, 34.0 / 32, 18.0 / 32};
// In mint_attention's order: the index is the enum value.
static const char *const attentions[] = {"auto", "naive", "rowwise", "flash", NULL};

static const opt opts[] = {
    {"-m --model", OPT_STRS, F(models), "FILE", .max = MAX_LIST,
     .help = "model to measure (repeatable)"},
    {"-t --threads", OPT_INTS, F(threads), "LIST", 1, 256, .def = "1,2",
     .help = "thread counts, e.g. 1,2"},
    {"-p --n-prompt", OPT_INTS, F(pp), "LIST", 0, 1 << 16, .def = "512",
     .help = "prompt lengths for pp tests (0 = none)"},
    {"-n --n-gen", OPT_INTS, F(tg), "LIST", 0, 1 << 16, .def = "128",
     .help = "generated tokens for tg tests (0 = none)"},
    {"-d --depth", OPT_INTS, F(depth), "LIST", 0, 1 << 20, .def = "0",
     .help = "tokens already in the KV cache"},
    {"-r --repetitions", OPT_INT, F(reps), "N", 1, 1000, .def = "5",
     .help = "repetitions per test"},
    {"--attention", OPT_INTS, F(attn), "LIST", .names = attentions, .def = "auto",
     .help = "attention algorithms, comma-separated"},
    {"--n-seq", OPT_INTS, F(n_seq), "LIST", 1, 256,
     .help = "also: that many sequences decoded together (tg only)"},
    {"--seq-prompt", OPT_INT, F(seq_prompt), "N", 1, 1 << 16, .def = "128",
     .help = "each sequence's own prompt for --n-seq"},
    {"--kv-block", OPT_INT, F(kv_block), "N", 1, 4096,
     .help = "positions per KV block (default: the library's, 32)"},
    {"-o --output", OPT_ENUM, F(json), "FMT", .names = formats, .def = "md",
     .help = "output format"},
    {"--kv-type", OPT_ENUM, F(kv_type), "T", .names = kv_types, .def = "f32",
     .help = "KV cache storage (q8_0, q4_0: quantized rows, as llama.cpp's quantized cache)"},
    {"--membw-gib", OPT_FLOAT, F(membw_gib), "G", .fmin = 0, .fmax = 64, .def = "1",
     .help = "buffer size of the bandwidth probe (0 = skip)"},
    {"-mmp --mmap", OPT_INT, F(mmap), "0|1", 0, 1, .def = "1",
     .help = "1: map the model; 0: read it into memory (= --no-mmap)"},
    LOAD_OPTS(options, load),
    {"--no-warmup", OPT_FLAG, F(no_warmup), .help = "skip the warm-up run"},
    {"--no-repack-wait", OPT_FLAG, F(no_repack_wait),
     .help = "time from the moment the model is open, while its\n"
             "matrices are still being repacked in the background\n"
             "(default: wait, and time the steady state)"},
    OPT_VERSION_ROW,
    {"-h --help", OPT_HELP, .help = "this help"},
    // llama-bench's GPU and cache flags (lists, as it takes them).
    COMPAT_SECTION,
    {"-ngl --n-gpu-layers", OPT_INTS, .arg = "LIST", .min = -1, .max = INT32_MAX,
     .note = COMPAT_CPU_ONLY},
    {"-mg --main-gpu", OPT_INTS, .arg = "LIST", .min = -1, .max = INT32_MAX,
     .note = COMPAT_CPU_ONLY},
    {"-sm --split-mode", OPT_NAMES, .arg = "LIST", .names = compat_split_modes,
     .note = COMPAT_CPU_ONLY},
    {"-ts --tensor-split", OPT_NUMS, .arg = "LIST", .fmin = 0, .fmax = 1e9,
     .note = COMPAT_CPU_ONLY},
    {"-nkvo --no-kv-offload", OPT_INTS, .arg = "0|1", .min = 0, .max = 1,
     .note = "ignored: the KV cache is in RAM already"},
    {"-fa --flash-attn", OPT_INTS, .arg = "0|1", .min = 0, .max = 1,
     .note = "ignored: mint-bench measures each algorithm of --attention (flash among them)"},
    {"-ctk --cache-type-k", OPT_NAMES, .arg = "LIST", .names = compat_cache_types,
     .note = "ignored: mint-bench's --kv-type sets the K and V caches together"},
    {"-ctv --cache-type-v", OPT_NAMES, .arg = "LIST", .names = compat_cache_types,
     .note = "ignored: mint-bench's --kv-type sets the K and V caches together"},
};

static bool check(void *parsed, char *err, size_t errlen) {
    const struct options *o = parsed;
    if (o->models.n == 0) {
        snprintf(err, errlen, "no model given: use -m MODEL (see --help)");
        return false;
    }
    return true;
}

static const opt_program program = {
    .name = TOOL,
    .usage = "mint-bench -m MODEL [-m MODEL ...] [options]",
    .opts = opts,
    .n_opts = sizeof opts / sizeof *opts,
    .check = check,
};

// A small deterministic generator for the random tokens (the same prompt for every run).
static uint32_t next_rand(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

typedef struct result {
    const char *model;     // path
    int threads;           // thread count
    const char *attention; // attention algorithm asked for ("auto", ...)
    const char *used;      // the one that ran (auto resolved)
    int depth;             // tokens in the cache before the test
    int n_seq;             // sequences decoded together (1 for pp/tg)
    char test[32];         // "pp512" / "tg128" / "tg64 x8"
    double mean, sd;       // tokens per second
    double median;         // tokens per second
    double bytes;          // bytes read per generated token (single-sequence tg only)
    double kv_pos_bytes;   // bytes of the KV cache per position (all layers, K and V)
    double gbps;           // achieved bandwidth at the median (single-sequence tg only), GB/s
    double bw_share;       // gbps / measured read bandwidth (0 if not measured)
    bool fits_cache;       // the token's reads stay in cache (see the top of the file)
    bool in_cache;         // fits_cache, or bw_share > 1: the share means nothing
} result;

// Writes bytes in the binary unit that keeps it readable: "1.13 MiB", "3.80 GiB", "512 B".
static const char *fmt_bytes(double bytes, char *buf, size_t n) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) bytes /= 1024, u++;
    snprintf(buf, n, u ? "%.2f %s" : "%.0f %s", bytes, units[u]);
    return buf;
}

// Writes a count with a decimal suffix, as llama-bench's params column: "292.42 K", "7.24 B".
static const char *fmt_count(double x, char *buf, size_t n) {
    static const char *const units[] = {"", " K", " M", " B", " T"};
    int u = 0;
    while (x >= 1000 && u < 4) x /= 1000, u++;
    snprintf(buf, n, u ? "%.2f%s" : "%.0f%s", x, units[u]);
    return buf;
}

// Bytes of the highest-level data or unified cache cpu0 has, from sysfs; 0 when unknown.
static uint64_t llc_bytes(void) {
    glob_t g;
    if (glob("/sys/devices/system/cpu/cpu0/cache/index*", 0, NULL, &g) != 0) return 0;
    int best_level = 0;
    uint64_t best = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char path[512], type[32] = "", unit = 0;
        int level = 0;
        unsigned long long size = 0;
        snprintf(path, sizeof path, "%s/type", g.gl_pathv[i]);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%31s", type) != 1) type[0] = 0;
            fclose(f);
        }
        if (strcmp(type, "Data") != 0 && strcmp(type, "Unified") != 0) continue;
        snprintf(path, sizeof path, "%s/level", g.gl_pathv[i]);
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%d", &level) != 1) level = 0;
            fclose(f);
        }
        snprintf(path, sizeof path, "%s/size", g.gl_pathv[i]);
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%llu%c", &size, &unit) < 1) size = 0;
            fclose(f);
        }
        size <<= unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 0;
        if (level > best_level && size > 0) best_level = level, best = size;
    }
    globfree(&g);
    return best;
}

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

// Times one test from depth d: pp (n tokens in one batch) or tg (n single tokens). Returns
// seconds; the cache is cut back to its first d positions first (untimed).
static double run_once(mint_ctx *ctx, const int32_t *toks, int d, int n, bool pp, mint_err *err,
                       bool *ok) {
    *ok = mint_seq_truncate(ctx, 0, d, err) == MINT_OK;
    if (!*ok) return 1;
    double t0 = cli_now();
    if (pp) {
        *ok = mint_eval(ctx, toks + d, n, d, false, err) == MINT_OK;
    } else {
        for (int i = 0; i < n && *ok; i++)
            *ok = mint_eval(ctx, toks + d + i, 1, d + i, false, err) == MINT_OK;
    }
    return cli_now() - t0;
}

// Times n generation steps of n_seq sequences decoded together, each after its own prompt of p
// tokens (evaluated untimed, one sequence at a time). Returns seconds.
static double run_seqs(mint_ctx *ctx, const int32_t *toks, int n_seq, int p, int n,
                       mint_batch_entry *e, mint_err *err, bool *ok) {
    *ok = true;
    for (int s = 0; s < n_seq && *ok; s++) {
        *ok = mint_seq_truncate(ctx, s, 0, err) == MINT_OK;
        const int nb = mint_ctx_n_batch(ctx);
        for (int off = 0; off < p && *ok; off += nb) {
            const int len = p - off < nb ? p - off : nb;
            for (int i = 0; i < len; i++)
                e[i] = (mint_batch_entry){toks[s + off + i], off + i, s, off + i == p - 1};
            *ok = mint_decode(ctx, e, len, err) == MINT_OK;
        }
    }
    double t0 = cli_now();
    for (int i = 0; i < n && *ok; i++) {
        for (int s = 0; s < n_seq; s++)
            e[s] = (mint_batch_entry){toks[(s * 7 + i) % (p + 1)], p + i, s, true};
        *ok = mint_decode(ctx, e, n_seq, err) == MINT_OK;
    }
    return cli_now() - t0;
}

static int max_of(const int *x, int n, int floor) {
    for (int i = 0; i < n; i++) floor = x[i] > floor ? x[i] : floor;
    return floor;
}

// Fills a result from the repetitions' tokens/s.
static void summarise(result *rr, double *tps, int reps) {
    double sum = 0;
    for (int r = 0; r < reps; r++) sum += tps[r];
    rr->mean = sum / reps;
    rr->sd = stddev(tps, reps, rr->mean);
    rr->median = median(tps, reps);
}

// How much faster than the memory probe a probe of a token's bytes must read for those bytes to
// count as cache-resident (caches read 2-4x faster than memory).
#define CACHE_SPEEDUP 1.5

typedef struct bench {
    const options *o;
    const char *path;
    const mint_model_desc *d;
    const double *membw; // [threads] measured read bandwidth
    uint64_t llc;        // last-level cache bytes (0 = unknown)
    double cache_gbps;   // one thread reading the most bytes a token reads (0 = not measured)
    double membw1;       // one thread reading the memory probe's buffer (0 = not measured)
    result *res;         // results so far
    int *n_res;
} bench;

// Bytes a generated token reads, on average over a tg test of n tokens from depth d: every
// weight once (mint_model_desc.bytes_per_token) and the K and V rows of every layer for the
// positions it attends to (d + i + 1 for token i, d + (n + 1) / 2 on average).
static double tg_bytes_per_token(const bench *b, int d, int n) {
    const mint_model_desc *m = b->d;
    const double kv_row = (double)m->n_head_kv * m->head_dim * kv_elem_bytes[b->o->kv_type];
    return (double)m->bytes_per_token + 2.0 * m->n_layer * kv_row * (d + (n + 1) / 2.0);
}

static result *add_result(bench *b, int ti, int ai, mint_ctx *ctx, int depth, int n_seq,
                          const char *test, double *tps) {
    result *rr = &b->res[(*b->n_res)++];
    memset(rr, 0, sizeof *rr);
    rr->model = b->path;
    rr->threads = b->o->threads.v[ti];
    rr->attention = mint_attention_name((mint_attention)b->o->attn.v[ai]);
    rr->used = mint_ctx_attention_name(ctx);
    rr->depth = depth;
    rr->n_seq = n_seq;
    snprintf(rr->test, sizeof rr->test, "%s", test);
    summarise(rr, tps, b->o->reps);
    if (!b->o->json)
        fprintf(stderr,
                TOOL ": %s t=%d %s%s%.0d attention %s: %.2f +- %.2f tokens/s, median %.2f\n",
                b->path, rr->threads, rr->test, depth ? " @ d" : "", depth, rr->used, rr->mean,
                rr->sd, rr->median);
    return rr;
}

// Every test of one context (thread count, attention algorithm).
static bool bench_ctx(bench *b, int ti, int ai, mint_ctx *ctx, const int32_t *toks,
                      mint_batch_entry *e) {
    const options *o = b->o;
    mint_err err;
    bool ok = true;
    double tps[1000];
    for (int di = 0; di < o->depth.n && ok; di++) {
        const int depth = o->depth.v[di];
        if (depth > 0) ok = mint_eval(ctx, toks, depth, 0, false, &err) == MINT_OK;
        for (int kind = 0; kind < 2 && ok; kind++) {
            const bool pp = kind == 0;
            const int *lens = pp ? o->pp.v : o->tg.v;
            for (int li = 0; li < (pp ? o->pp.n : o->tg.n) && ok; li++) {
                const int n = lens[li];
                if (n == 0) continue;
                if (!o->no_warmup) run_once(ctx, toks, depth, pp ? n : 1, pp, &err, &ok);
                for (int r = 0; r < o->reps && ok; r++)
                    tps[r] = n / run_once(ctx, toks, depth, n, pp, &err, &ok);
                if (!ok) break;
                char test[32];
                snprintf(test, sizeof test, "%s%d", pp ? "pp" : "tg", n);
                result *rr = add_result(b, ti, ai, ctx, depth, 1, test, tps);
                if (!pp) {
                    rr->bytes = tg_bytes_per_token(b, depth, n);
                    rr->kv_pos_bytes = tg_bytes_per_token(b, 1, 1) - tg_bytes_per_token(b, 0, 1);
                    rr->gbps = rr->median * rr->bytes / 1e9;
                    rr->bw_share = b->membw[ti] > 0 ? rr->gbps / b->membw[ti] : 0;
                    rr->fits_cache = b->llc ? rr->bytes <= (double)b->llc
                                            : b->cache_gbps > CACHE_SPEEDUP * b->membw1;
                    rr->in_cache = rr->fits_cache || rr->bw_share > 1;
                }
            }
        }
    }
    for (int si = 0; si < o->n_seq.n && ok; si++)
        for (int li = 0; li < o->tg.n && ok; li++) {
            const int S = o->n_seq.v[si], n = o->tg.v[li];
            if (n == 0) continue;
            if (!o->no_warmup) run_seqs(ctx, toks, S, o->seq_prompt, 1, e, &err, &ok);
            for (int r = 0; r < o->reps && ok; r++)
                tps[r] = (double)S * n / run_seqs(ctx, toks, S, o->seq_prompt, n, e, &err, &ok);
            if (!ok) break;
            char test[32];
            snprintf(test, sizeof test, "tg%d x%d", n, S);
            add_result(b, ti, ai, ctx, 0, S, test, tps);
        }
    if (!ok) fprintf(stderr, TOOL ": %s\n", err.msg);
    return ok;
}

static const char *base_name(const char *path) {
    return strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
}

// Benchmarks one model; *membw1 is the one-thread memory probe, measured on first need.
static bool bench_model(const options *o, const char *path, result *res, int *n_res,
                        const double *membw, uint64_t llc, double *membw1) {
    mint_err err;
    mint_model *m;
    load_options lo = o->load;
    lo.no_mmap = lo.no_mmap || o->mmap == 0;
    if (load_model(TOOL, path, &lo, &m, &err) != MINT_OK) {
        fprintf(stderr, TOOL ": %s\n", err.msg);
        return false;
    }
    if (!o->no_repack_wait) mint_model_repack_wait(m);
    mint_model_desc d;
    mint_model_describe(m, &d);
    struct stat st;
    uint64_t fsize = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
    char size[32], params[32];
    fmt_bytes((double)fsize, size, sizeof size);
    fmt_count((double)d.n_params, params, sizeof params);
    if (!o->json)
        fprintf(stderr,
                TOOL ": %s: %s file (%s%s), %s params, types %s, kernels %s, %.2f MB read per "
                     "generated token\n",
                path, size, lo.no_mmap ? "read into memory" : "mapped", d.locked ? ", locked" : "",
                params, d.types, mint_isa_name(), d.bytes_per_token / 1e6);
    const int max_len = max_of(o->pp.v, o->pp.n, max_of(o->tg.v, o->tg.n, 1));
    const int max_seq = o->n_seq.n ? max_of(o->n_seq.v, o->n_seq.n, 1) : 1;
    int n_ctx = max_of(o->depth.v, o->depth.n, 0) + max_len;
    if (o->n_seq.n && o->seq_prompt + max_of(o->tg.v, o->tg.n, 1) > n_ctx)
        n_ctx = o->seq_prompt + max_of(o->tg.v, o->tg.n, 1);
    const int n_toks = n_ctx + max_seq;
    int32_t *toks = malloc((size_t)n_toks * sizeof *toks);
    mint_batch_entry *e = malloc((size_t)(max_len > max_seq ? max_len : max_seq) * sizeof *e);
    uint64_t seed = 42;
    for (int i = 0; i < n_toks; i++) toks[i] = (int32_t)(next_rand(&seed) % (uint32_t)d.n_vocab);
    if (d.bos >= 0) toks[0] = d.bos;
    bench b = {o, path, &d, membw, llc, 0, 0, res, n_res};
    // Without the cache's size from sysfs, whether a token's reads stay in cache is measured: one
    // thread reading the most bytes a token reads, against one thread reading the probe's buffer
    // (more threads only add cache, and over a buffer this small they time their own wake-ups).
    // Only for tokens well under the probe's buffer: a larger one is no cache's, and its probe
    // would hold another copy of the weights.
    const double probe_bytes = o->membw_gib * 1073741824.0;
    const double tg_max =
        tg_bytes_per_token(&b, max_of(o->depth.v, o->depth.n, 0), max_of(o->tg.v, o->tg.n, 1));
    if (!llc && probe_bytes > 0 && 2 * tg_max <= probe_bytes && tg_max >= 4096) {
        for (int ti = 0; ti < o->threads.n && *membw1 == 0; ti++)
            if (o->threads.v[ti] == 1) *membw1 = membw[ti];
        if (*membw1 == 0 &&
            mint_measure_read_bandwidth(1, (size_t)probe_bytes, 5, membw1, &err) == MINT_OK &&
            !o->json)
            fprintf(stderr,
                    TOOL ": memory read bandwidth with 1 thread (for the cache probe): "
                         "%.1f GB/s\n",
                    *membw1);
        // More passes for small sizes, where one pass takes microseconds (the median of them).
        const int reps = tg_max * 50 < 268435456.0  ? 50
                         : tg_max * 5 > 268435456.0 ? 5
                                                    : (int)(268435456.0 / tg_max);
        if (*membw1 > 0 &&
            mint_measure_read_bandwidth(1, (size_t)tg_max, reps, &b.cache_gbps, &err) == MINT_OK)
            b.membw1 = *membw1;
        else
            b.cache_gbps = 0; // no verdict: the share stands as measured
    }
    bool ok = toks && e;
    for (int ti = 0; ti < o->threads.n && ok; ti++)
        for (int ai = 0; ai < o->attn.n && ok; ai++) {
            mint_ctx_params cp = mint_ctx_default_params();
            cp.n_threads = o->threads.v[ti];
            cp.n_ctx = n_ctx;
            cp.n_batch = max_len > max_seq ? max_len : max_seq;
            cp.n_seq_max = max_seq;
            cp.kv_block = o->kv_block;
            cp.kv_type = (mint_kv_type)o->kv_type;
            cp.attention = (mint_attention)o->attn.v[ai];
            mint_ctx *ctx;
            if (mint_ctx_create(m, &cp, &ctx, &err) != MINT_OK) {
                fprintf(stderr, TOOL ": %s\n", err.msg);
                ok = false;
                break;
            }
            ok = bench_ctx(&b, ti, ai, ctx, toks, e);
            mint_ctx_free(ctx);
        }
    if (!o->json && ok) {
        const result *cached = NULL; // the first row whose share does not apply
        printf(
            "\n| model | size | params | types | kernels | threads | attention | test | t/s | "
            "median | GB/s | of bw |\n|---|---:|---:|---|---|---:|---|---:|---:|---:|---:|---:|\n");
        for (int i = 0; i < *n_res; i++) {
            const result *r = &res[i];
            if (r->model != path) continue;
            const char *base = base_name(path);
            char test[48];
            snprintf(test, sizeof test, "%s%s%.0d", r->test, r->depth ? " @ d" : "", r->depth);
            printf("| %s | %s | %s | %s | %s | %d | %s | %s | %.2f ± %.2f | %.2f | ", base, size,
                   params, d.types, mint_isa_name(), r->threads, r->used, test, r->mean, r->sd,
                   r->median);
            if (r->gbps > 0)
                printf("%.1f | ", r->gbps);
            else
                printf("- | ");
            if (r->fits_cache)
                printf("fits in cache |\n");
            else if (r->in_cache)
                printf("n/a (cache) |\n");
            else if (r->bw_share > 0)
                printf("%.0f%% |\n", 100 * r->bw_share);
            else
                printf("- |\n");
            if (r->in_cache && !cached) cached = r;
        }
        if (cached) {
            char why[160];
            if (llc)
                snprintf(why, sizeof why, "within the %.1f MB last-level cache", llc / 1e6);
            else if (cached->fits_cache)
                snprintf(why, sizeof why,
                         "which one thread reads at %.1f GB/s (from memory: %.1f GB/s)",
                         b.cache_gbps, b.membw1);
            else
                snprintf(why, sizeof why, "read faster than the memory probe");
            fprintf(stderr,
                    TOOL ": %s: a generated token reads %.2f MB, %s: the weights come from cache, "
                         "so a share of memory bandwidth does not apply\n",
                    base_name(path), cached->bytes / 1e6, why);
        }
    }
    free(toks);
    free(e);
    mint_model_close(m);
    return ok;
}

int main(int argc, char **argv) {
    options o;
    int done = opt_main(&program, argc, argv, &o);
    if (done >= 0) return done;
    // Every model is opened and checked before the bandwidth probe, so a wrong path fails at
    // once instead of after seconds of measuring (the file only: no weights are loaded here).
    for (int i = 0; i < o.models.n; i++) {
        mint_err err;
        mint_file *f;
        if (mint_file_open(o.models.v[i], &f, &err) != MINT_OK) {
            fprintf(stderr, TOOL ": %s\n", err.msg);
            return 1;
        }
        mint_file_close(f);
    }
    // The bandwidth bound, per thread count, before any model is loaded: the median of
    // MEMBW_PASSES probes, each on a buffer of its own (so the spread includes where the pages
    // landed, as the weights' placement varies from load to load), and the slowest and fastest.
    enum { MEMBW_PASSES = 5 };
    double membw[MAX_LIST] = {0}, membw_min[MAX_LIST] = {0}, membw_max[MAX_LIST] = {0};
    for (int ti = 0; ti < o.threads.n && o.membw_gib > 0; ti++) {
        mint_err err;
        size_t bytes = (size_t)(o.membw_gib * 1073741824.0);
        double pass[MEMBW_PASSES];
        for (int k = 0; k < MEMBW_PASSES; k++)
            if (mint_measure_read_bandwidth(o.threads.v[ti], bytes, 1, &pass[k], &err) != MINT_OK) {
                fprintf(stderr, TOOL ": %s\n", err.msg);
                return 1;
            }
        membw[ti] = median(pass, MEMBW_PASSES); // sorts pass
        membw_min[ti] = pass[0];
        membw_max[ti] = pass[MEMBW_PASSES - 1];
        if (!o.json)
            fprintf(stderr,
                    TOOL ": memory read bandwidth with %d thread%s: %.1f GB/s (median of %d "
                         "passes, %.1f-%.1f)\n",
                    o.threads.v[ti], o.threads.v[ti] > 1 ? "s" : "", membw[ti], MEMBW_PASSES,
                    membw_min[ti], membw_max[ti]);
    }
    const uint64_t llc = llc_bytes();
    double membw1 = 0; // one thread's memory probe, when a cache probe needs it
    if (!o.json && llc) fprintf(stderr, TOOL ": last-level cache: %.1f MB\n", (double)llc / 1e6);
    // Every (model, threads, attention) gets pp and tg tests per depth, and tg tests per n_seq.
    const size_t max_res = (size_t)o.models.n * o.threads.n * o.attn.n *
                           ((size_t)o.depth.n * (o.pp.n + o.tg.n) + (size_t)o.n_seq.n * o.tg.n);
    result *res = calloc(max_res + 1, sizeof *res);
    int n_res = 0;
    int rc = 0;
    for (int i = 0; i < o.models.n; i++)
        if (!bench_model(&o, o.models.v[i], res, &n_res, membw, llc, &membw1)) rc = 1;
    if (o.json) {
        printf("[");
        for (int i = 0; i < n_res; i++) {
            const result *r = &res[i];
            int ti = 0;
            while (ti < o.threads.n && o.threads.v[ti] != r->threads) ti++;
            printf("%s\n {\"model\":", i ? "," : "");
            cli_json_str(stdout, r->model, strlen(r->model));
            printf(",\"kernels\":\"%s\",\"threads\":%d,\"attention\":\"%s\","
                   "\"attention_used\":\"%s\",\"depth\":%d,\"n_seq\":%d,\"test\":\"%s\","
                   "\"tps_mean\":%.4f,\"tps_sd\":%.4f,\"tps_median\":%.4f,\"reps\":%d,"
                   "\"bytes_per_token\":%.0f,\"kv_bytes_per_position\":%.0f,\"gbps\":%.3f,"
                   "\"membw_gbps\":%.3f,\"membw_min_gbps\":%.3f,\"membw_max_gbps\":%.3f,"
                   "\"bw_share\":%.4f,\"llc_bytes\":%" PRIu64 ",\"in_cache\":%s}",
                   mint_isa_name(), r->threads, r->attention, r->used, r->depth, r->n_seq, r->test,
                   r->mean, r->sd, r->median, o.reps, r->bytes, r->kv_pos_bytes, r->gbps,
                   ti < o.threads.n ? membw[ti] : 0.0, ti < o.threads.n ? membw_min[ti] : 0.0,
                   ti < o.threads.n ? membw_max[ti] : 0.0, r->bw_share, llc,
                   r->in_cache ? "true" : "false");
        }
        printf("\n]\n");
    }
    free(res);
    return rc;
}
