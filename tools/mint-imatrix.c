// mint-imatrix - an importance matrix of a model on a calibration text, as llama.cpp's
// llama-imatrix makes it (docs/formats.md 11): the text cut into chunks of -c tokens the way
// mint-perplexity cuts it, every token of every chunk evaluated, the f32 inputs of every "blk.*"
// matmul squared and summed per column; the perplexity of each chunk's second half printed as it
// goes. Also combines files (--in-file, repeatable) and prints a file's statistics.
//
//   mint-imatrix -m MODEL -f TEXT [-o imatrix.gguf] [-c 512] [--chunks N] [--in-file F ...]
//   mint-imatrix --in-file A --in-file B -o combined.gguf
//   mint-imatrix --in-file F --show-statistics
#include "cli.h"
#include "compat.h"
#include "mint.h"
#include "model_load.h"
#include "options.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOOL "mint-imatrix"

typedef struct options {
    const char *model;     // -m
    const char *text;      // -f: the calibration text
    const char *out;       // -o
    opt_strs in_files;     // --in-file (repeatable; each may be a comma-separated list)
    int format;            // --output-format: a mint_imatrix_format
    int n_ctx;             // -c: chunk length
    int n_chunks;          // --chunks (0 = all)
    int n_threads;         // -t (0 = all online CPUs)
    int n_batch;           // -b: tokens per evaluation
    int kv_type;           // --kv-type: a mint_kv_type
    int attention;         // --attention: a mint_attention
    bool process_output;   // --process-output: output.weight too
    bool no_ppl;           // --no-ppl: do not print the perplexity
    bool show_statistics;  // --show-statistics: print one file's statistics and exit
    bool no_progress;      // --no-progress
    load_options load;     // --no-mmap, --mlock
    compat_options compat; // llama-imatrix's -fa, -ctk, -ctv
} options;

#define F(member) OPT_FIELD(options, member)

static const char *const formats[] = {"gguf", "dat", NULL}; // mint_imatrix_format order
static const char *const kv_types[] = {"f32", "f16", "q8_0", "q4_0", NULL};
static const char *const attentions[] = {"auto", "naive", "rowwise", "flash", NULL};

static const opt opts[] = {
    {"-m --model", OPT_STRING, F(model), "FILE", .help = "model"},
    {"-f --file", OPT_STRING, F(text), "FILE", .help = "calibration text"},
    {"-o --output --output-file", OPT_STRING, F(out), "FILE", .def = "imatrix.gguf",
     .help = "where the importance matrix goes (atomically)"},
    {"--output-format", OPT_ENUM, F(format), "{gguf,dat}", .names = formats, .def = "gguf",
     .help = "gguf, or llama-imatrix's legacy dat"},
    {"--in-file", OPT_STRS, F(in_files), "FILE", .max = OPT_STRS_MAX,
     .help = "an imatrix to add in (repeatable, or A,B): sums and\n"
             "counts add; without -f, combine and save only"},
    {"-c --ctx-size", OPT_INT, F(n_ctx), "N", 8, 1 << 16, .def = "512",
     .help = "chunk length (and the chunk size recorded)"},
    {"--chunks", OPT_INT, F(n_chunks), "N", 1, 1 << 24, .help = "at most N chunks (default all)"},
    {"-t --threads", OPT_INT, F(n_threads), "N", 1, 256,
     .help = "threads (default all online CPUs; the sums are the same)"},
    {"-b --batch-size", OPT_INT, F(n_batch), "N", 1, 1 << 20, .def = "2048",
     .help = "tokens per evaluation (a chunk is one when N >= -c)"},
    {"--kv-type", OPT_ENUM, F(kv_type), .names = kv_types, .def = "f32",
     .help = "KV cache storage"},
    {"--attention", OPT_ENUM, F(attention), "NAME", .names = attentions, .def = "auto",
     .help = "attention algorithm"},
    {"--process-output", OPT_FLAG, F(process_output), .help = "collect output.weight's inputs too"},
    {"--no-ppl", OPT_FLAG, F(no_ppl), .help = "do not print the perplexity of each chunk"},
    {"--show-statistics", OPT_FLAG, F(show_statistics),
     .help = "print the statistics of the one --in-file and exit"},
    {"--no-progress", OPT_FLAG, F(no_progress), .help = "no progress bar on a terminal"},
    LOAD_OPTS(options, load),
    OPT_VERSION_ROW,
    {"-h --help", OPT_HELP, .help = "this help"},
    COMPAT_SECTION,
    {"--ppl", OPT_FLAG, .note = "ignored: the perplexity is printed unless --no-ppl"},
    {"-ofreq --output-frequency", OPT_INT, .arg = "N", .min = 0, .max = INT32_MAX,
     .note = "ignored: the file is written once, at the end"},
    {"--save-frequency", OPT_INT, .arg = "N", .min = 0, .max = INT32_MAX,
     .note = "ignored: the file is written once, at the end"},
    COMPAT_FA_OPT(options, compat),
    COMPAT_CACHE_OPTS(options, compat),
    COMPAT_GPU_OPTS,
    COMPAT_NO_WARMUP_OPT,
    COMPAT_LOG_DISABLE_OPT,
};

static bool check(void *parsed, char *err, size_t n) {
    struct options *o = parsed;
    if (o->show_statistics) {
        if (o->in_files.n != 1 || strchr(o->in_files.v[0], ',')) {
            snprintf(err, n, "--show-statistics needs exactly one --in-file");
            return false;
        }
        return true;
    }
    if (!o->text && o->in_files.n == 0) {
        snprintf(err, n, "no text (-f FILE) and no --in-file to combine (see --help)");
        return false;
    }
    if (o->text && !o->model) {
        snprintf(err, n, "no model given: use -m MODEL (see --help)");
        return false;
    }
    return compat_fold(&o->compat, &o->attention, &o->kv_type, err, n);
}

static const opt_program program = {
    .name = TOOL,
    .usage = "mint-imatrix -m MODEL -f TEXT [-o imatrix.gguf] [options]\n"
             "       mint-imatrix --in-file A [--in-file B ...] -o OUT\n"
             "       mint-imatrix --in-file FILE --show-statistics",
    .about = "An importance matrix as llama-imatrix makes it: every token of each chunk of -c\n"
             "tokens is evaluated and the squared inputs of every blk.* matrix summed per column\n"
             "(llama-quantize --imatrix reads the file).",
    .opts = opts,
    .n_opts = sizeof opts / sizeof *opts,
    .check = check,
};

// ---------------------------------------------------------------------------------------------
// Progress and perplexity per chunk

typedef struct progress {
    bool bar;  // draw a bar on stderr (a terminal)
    bool ppl;  // print "[i]ppl," on stdout
    double t0; // start
} progress;

static void on_chunk(void *user, int32_t chunk, int32_t n_chunks, double ppl) {
    const progress *p = user;
    if (p->ppl) {
        printf("[%d]%.4f,", chunk, ppl);
        if (chunk == n_chunks) printf("\n");
        fflush(stdout);
    }
    if (!p->bar) return;
    char bar[31];
    const int fill = (int)((int64_t)chunk * 30 / n_chunks);
    for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '.';
    bar[30] = '\0';
    const double t = cli_now() - p->t0, eta = t / chunk * (n_chunks - chunk);
    fprintf(stderr, "\r[%s] chunk %d/%d  %.0f s, %.0f s left ", bar, chunk, n_chunks, t, eta);
    if (chunk == n_chunks) fprintf(stderr, "\n");
}

// ---------------------------------------------------------------------------------------------
// --show-statistics: llama-imatrix's table (per matrix the per-column means sum / count of the
// experts with a count, their sum, extremes, mean, deviation, share above 1e-5, entropy, share
// more than one deviation above the mean, cosine similarity with the previous block's matrix of
// the same name), then per block the averages weighted by element count. Float sums in order, as
// llama-imatrix makes them.

typedef struct stat {
    const char *name;  // the weight's name
    char layer[16];    // the part after "blk." ("-" if none)
    char tensor[64];   // the part before ".weight" (the name if none)
    int layer_no;      // layer as a number, -1 if none
    const float *sums; // [n_vals] raw sums (for the cosine)
    int64_t n_vals;    // values
    float total, mean, max, min, stddev, active, entropy, zd, cossim;
    int elements; // columns of the experts with a count
} stat;

// Splits "blk.N.NAME.weight" into its layer ("N") and tensor ("NAME") as llama-imatrix does.
static void split_name(const char *name, stat *s) {
    char parts[32][64];
    int n = 0;
    for (const char *p = name; n < 32;) {
        const char *d = strchr(p, '.');
        size_t len = d ? (size_t)(d - p) : strlen(p);
        snprintf(parts[n++], sizeof parts[0], "%.*s", (int)(len < 63 ? len : 63), p);
        if (!d) break;
        p = d + 1;
    }
    strcpy(s->layer, "-");
    snprintf(s->tensor, sizeof s->tensor, "%s", name);
    for (int i = 0; i + 1 < n; i++)
        if (strcmp(parts[i], "blk") == 0) {
            snprintf(s->layer, sizeof s->layer, "%s", parts[i + 1]);
            break;
        }
    for (int i = 1; i < n; i++)
        if (strcmp(parts[i], "weight") == 0) {
            snprintf(s->tensor, sizeof s->tensor, "%s", parts[i - 1]);
            break;
        }
    char *end;
    long v = strtol(s->layer, &end, 10);
    s->layer_no = end != s->layer ? (int)v : -1;
}

static bool compute_stat(const mint_imatrix_entry *e, float *act, stat *s) {
    const int64_t per = e->n_vals / e->n_counts;
    int64_t n = 0;
    for (int64_t i = 0; i < e->n_counts; i++) {
        if (e->counts[i] == 0) continue;
        for (int64_t j = 0; j < per; j++) act[n++] = e->sums[i * per + j] / (float)e->counts[i];
    }
    if (n == 0) {
        fprintf(stderr, TOOL ": all counts are zero for tensor %s, skipping it\n", e->name);
        return false;
    }
    float total = 0, sq = 0, mx = act[0], mn = act[0];
    for (int64_t i = 0; i < n; i++) {
        total += act[i];
        sq += act[i] * act[i];
        mx = act[i] > mx ? act[i] : mx;
        mn = act[i] < mn ? act[i] : mn;
    }
    const float mean = total / (float)n, var = sq / (float)n - mean * mean;
    const float dev = sqrtf(var > 0 ? var : 0);
    int64_t inactive = 0, z = 0;
    float entropy = 0;
    for (int64_t i = 0; i < n; i++) {
        inactive += fabsf(act[i]) <= 1e-5f;
        if (total > 0) {
            const float p = act[i] / total;
            if (p > 0) entropy -= p * log2f(p);
        }
        if (dev > 0 && (act[i] - mean) / dev > 1) z++;
    }
    s->name = e->name;
    s->sums = e->sums;
    s->n_vals = e->n_vals;
    s->total = total;
    s->mean = mean;
    s->max = mx;
    s->min = mn;
    s->stddev = dev;
    s->active = 1 - (float)inactive / (float)n;
    s->entropy = entropy;
    s->elements = (int)n;
    s->zd = (float)z / (float)n;
    split_name(e->name, s);
    return true;
}

// The cosine with the same matrix one block earlier (0 when there is none).
static void cossim(stat *st, int n) {
    for (int i = 0; i < n; i++) {
        stat *s = &st[i];
        s->cossim = 0;
        const char *b = strstr(s->name, "blk.");
        if (!b || s->layer_no <= 0) continue;
        char want[512];
        const char *num = b + 4, *rest = num + strspn(num, "0123456789");
        snprintf(want, sizeof want, "%.*s%d%s", (int)(num - s->name), s->name, s->layer_no - 1,
                 rest);
        for (int j = 0; j < n; j++) {
            if (strcmp(st[j].name, want) != 0 || st[j].n_vals != s->n_vals) continue;
            float dp = 0, a = 0, c = 0;
            for (int64_t k = 0; k < s->n_vals; k++) {
                dp += s->sums[k] * st[j].sums[k];
                a += s->sums[k] * s->sums[k];
                c += st[j].sums[k] * st[j].sums[k];
            }
            s->cossim = dp / (sqrtf(a) * sqrtf(c));
            break;
        }
    }
}

static int by_tensor(const void *x, const void *y) {
    const stat *a = x, *b = y;
    const int c = strcmp(a->tensor, b->tensor);
    if (c) return c;
    return a->total > b->total ? -1 : a->total < b->total ? 1 : 0;
}

static int show_statistics(const char *path, mint_imatrix *im) {
    mint_imatrix_info info;
    mint_imatrix_get_info(im, &info);
    stat *st = calloc((size_t)info.n_entries + 1, sizeof *st);
    int64_t most = 1;
    for (int64_t i = 0; i < info.n_entries; i++) {
        mint_imatrix_entry e;
        mint_imatrix_entry_at(im, i, &e);
        most = e.n_vals > most ? e.n_vals : most;
    }
    float *act = malloc((size_t)most * sizeof *act);
    if (!st || !act) {
        fprintf(stderr, TOOL ": out of memory\n");
        free(st);
        free(act);
        return 1;
    }
    int n = 0;
    for (int64_t i = 0; i < info.n_entries; i++) {
        mint_imatrix_entry e;
        mint_imatrix_entry_at(im, i, &e);
        n += compute_stat(&e, act, &st[n]);
    }
    free(act);
    if (n == 0) {
        fprintf(stderr, TOOL ": cannot compute statistics for %s\n", path);
        free(st);
        return 1;
    }
    cossim(st, n);
    qsort(st, (size_t)n, sizeof *st, by_tensor);
    printf("\nComputing statistics for %s (%d tensors)\n", path, n);
    printf("\n%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", " Layer", "       Tensor",
           "          Σ(Act²)", "  Min", "            Max", "           μ", "   σ", " % Active",
           "N", "   Entropy", "E (norm)", "ZD", "  CosSim");
    for (int i = 0; i < 185; i++) putchar('=');
    putchar('\n');
    // Per block: sums weighted by element count, in block order (llama-imatrix's std::map).
    int max_layer = -1;
    for (int i = 0; i < n; i++) max_layer = st[i].layer_no > max_layer ? st[i].layer_no : max_layer;
    float *wb = calloc((size_t)max_layer + 2, 4 * sizeof *wb);
    for (int i = 0; i < n; i++) {
        const stat *s = &st[i];
        const double en = s->elements > 0 ? 100.0f * (s->entropy / log2((double)s->elements)) : 0;
        printf(
            "%5s\t%-20s\t%10.2f\t%8.4f\t%11.4f\t%6.2f\t%6.2f\t%8.2f%%\t%6d\t%10.4f\t%6.2f%%\t%10."
            "2f%%\t%8.4f\n",
            s->layer, s->tensor, s->total, s->min, s->max, s->mean, s->stddev, s->active * 100.0f,
            s->elements, s->entropy, en, 100.0f * s->zd, s->cossim);
        if (wb && s->layer_no >= 0) {
            float *w = wb + 4 * (size_t)s->layer_no;
            w[0] += (float)s->elements * s->total;
            w[1] += (float)s->elements * s->zd;
            w[2] += (float)s->elements * s->cossim;
            w[3] += (float)s->elements;
        }
    }
    int layers = 0;
    for (int l = 0; wb && l <= max_layer; l++) layers += wb[4 * l + 3] > 0;
    printf("\nComputing weighted average statistics per layer (%d layers)\n", layers);
    printf("\n%s\t%s\t%s\t%s\n", "  Layer", "     μΣ(Act²)", "      μZD", "μCosSim");
    printf("================================================\n");
    for (int l = 0; wb && l <= max_layer; l++) {
        const float *w = wb + 4 * l;
        if (w[3] == 0) continue;
        printf("%5d\t%14.2f\t%10.4f%%\t%6.4f\n", l, w[0] / w[3], 100.0f * w[1] / w[3], w[2] / w[3]);
    }
    printf("\n");
    free(wb);
    free(st);
    return 0;
}

// ---------------------------------------------------------------------------------------------

// Adds every --in-file (each possibly "A,B") into im.
static int add_in_files(const options *o, mint_imatrix *im) {
    for (int i = 0; i < o->in_files.n; i++) {
        char *list = strdup(o->in_files.v[i]), *save = NULL;
        if (!list) return 1;
        for (char *f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
            mint_err err;
            mint_imatrix *in = NULL;
            if (mint_imatrix_load(f, &in, &err) != MINT_OK ||
                mint_imatrix_combine(im, in, &err) != MINT_OK) {
                fprintf(stderr, TOOL ": %s\n", err.msg);
                mint_imatrix_free(in);
                free(list);
                return 1;
            }
            mint_imatrix_free(in);
        }
        free(list);
    }
    return 0;
}

int main(int argc, char **argv) {
    options o = {0};
    int done = opt_main(&program, argc, argv, &o);
    if (done >= 0) return done;
    mint_err err;
    mint_imatrix *im = NULL;
    if (mint_imatrix_create((uint32_t)o.n_ctx, &im, &err) != MINT_OK) {
        fprintf(stderr, TOOL ": %s\n", err.msg);
        return 1;
    }
    int rc = add_in_files(&o, im);
    if (rc == 0 && o.show_statistics) {
        rc = show_statistics(o.in_files.v[0], im);
        mint_imatrix_free(im);
        return rc;
    }
    if (rc == 0 && o.text) {
        mint_model *m = NULL;
        char msg[600];
        size_t len = 0;
        char *text = cli_read_file(o.text, &len, msg, sizeof msg);
        if (!text) {
            fprintf(stderr, TOOL ": %s\n", msg);
            rc = 1;
        } else if (load_model(TOOL, o.model, &o.load, &m, &err) != MINT_OK) {
            fprintf(stderr, TOOL ": %s\n", err.msg);
            rc = 1;
        }
        if (rc == 0) {
            progress pr = {
                .bar = !o.no_progress && isatty(STDERR_FILENO), .ppl = !o.no_ppl, .t0 = cli_now()};
            mint_ppl_params p = mint_ppl_default_params();
            p.n_ctx = o.n_ctx;
            p.n_chunks = o.n_chunks;
            p.n_threads = o.n_threads;
            p.n_batch = o.n_batch;
            p.kv_type = (mint_kv_type)o.kv_type;
            p.attention = (mint_attention)o.attention;
            p.imatrix = im;
            p.imatrix_output = o.process_output;
            p.on_chunk = on_chunk;
            p.user = &pr;
            fprintf(stderr, TOOL ": %s, kernels %s\n", o.model, mint_isa_name());
            mint_ppl_result r;
            if (mint_perplexity(m, text, len, &p, &r, &err) != MINT_OK) {
                fprintf(stderr, "\n" TOOL ": %s\n", err.msg);
                rc = 1;
            } else {
                if (!o.no_ppl) printf("Final estimate: PPL = %.4f +/- %.5f\n", r.ppl, r.ppl_err);
                fprintf(stderr, TOOL ": %d chunk%s of %d tokens, %.2f s (%.1f tokens/s)\n",
                        r.n_chunks, cli_plural(r.n_chunks), r.n_ctx, r.seconds,
                        r.n_chunks * (double)r.n_ctx / r.seconds);
            }
        }
        if (rc == 0 && mint_imatrix_add_dataset(im, o.text, &err) != MINT_OK) {
            fprintf(stderr, TOOL ": %s\n", err.msg);
            rc = 1;
        }
        mint_model_close(m);
        free(text);
    }
    if (rc == 0) {
        if (mint_imatrix_save(im, o.out, (mint_imatrix_format)o.format, &err) != MINT_OK) {
            fprintf(stderr, TOOL ": %s\n", err.msg);
            rc = 1;
        } else {
            mint_imatrix_info info;
            mint_imatrix_get_info(im, &info);
            fprintf(stderr, TOOL ": wrote %s (%lld matri%s, %u chunk%s of %u)\n", o.out,
                    (long long)info.n_entries, info.n_entries == 1 ? "x" : "ces", info.chunk_count,
                    cli_plural(info.chunk_count), info.chunk_size);
        }
    }
    mint_imatrix_free(im);
    return rc;
}
