// mint-perplexity - perplexity of a model on a text, and KL divergence against a base model, by
// llama-perplexity's method so the figures compare (see mint.h, "Perplexity").
//
//   mint-perplexity -m MODEL -f TEXT [-c 512] [--chunks N] [-t N]
//   mint-perplexity -m BASE -f TEXT --kl-divergence-base BASE.kld      (also prints PPL)
//   mint-perplexity -m QUANT --kl-divergence-base BASE.kld --kl-divergence
#include "cli.h"
#include "compat.h"
#include "mint.h"
#include "model_load.h"
#include "options.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL "mint-perplexity"

typedef struct options {
    const char *model;     // -m
    const char *text;      // -f: the text scored
    const char *kld_base;  // --kl-divergence-base FILE
    const char *report;    // --report FILE.html
    int attention;         // --attention (a mint_attention)
    bool kld;              // --kl-divergence: compare with kld_base
    int n_ctx;             // -c: chunk length
    int n_chunks;          // --chunks (0 = all)
    int n_threads;         // -t (0 = all online CPUs)
    int n_batch;           // -b: accepted for llama-perplexity, unused (a chunk is one batch)
    int kv_type;           // --kv-type: a mint_kv_type (the index in kv_types)
    load_options load;     // --no-mmap, --mlock
    compat_options compat; // llama-perplexity's -fa, -ctk, -ctv
} options;

#define F(member) OPT_FIELD(options, member)

static const char *const kv_types[] = {"f32", "f16", "q8_0", "q4_0", NULL}; // mint_kv_type order
static const char *const attentions[] = {"auto", "naive", "rowwise", "flash", NULL};

static const opt opts[] = {
    {"-m --model", OPT_STRING, F(model), "FILE", .help = "model"},
    {"-f --file", OPT_STRING, F(text), "FILE", .help = "text to score"},
    {"-c --ctx-size", OPT_INT, F(n_ctx), "N", 8, 1 << 16, .def = "512", .help = "chunk length"},
    {"--chunks", OPT_INT, F(n_chunks), "N", 1, 1 << 24, .help = "at most N chunks (default all)"},
    {"-t --threads", OPT_INT, F(n_threads), "N", 1, 256,
     .help = "threads (default all online CPUs)"},
    {"-b --batch-size", OPT_INT, F(n_batch), "N", 1, 1 << 20,
     .help = "accepted for llama-perplexity; a chunk is one batch"},
    {"--kv-type", OPT_ENUM, F(kv_type), .names = kv_types, .def = "f32",
     .help = "KV cache storage (q8_0, q4_0: quantized rows, as llama.cpp's quantized cache)"},
    {"--kl-divergence-base", OPT_STRING, F(kld_base), "F",
     .help = "without --kl-divergence: save the model's\n"
             "log-probabilities to F (llama.cpp's format)"},
    {"--kl-divergence", OPT_FLAG, F(kld), .help = "compare with the base file F (no -f needed)"},
    {"--attention", OPT_ENUM, F(attention), "NAME", .names = attentions, .def = "auto",
     .help = "attention algorithm"},
    LOAD_OPTS(options, load),
    {"--report", OPT_STRING, F(report), "FILE.html",
     .help = "a page: the first chunk token by token (coloured\n"
             "by probability, alternatives, attention), the\n"
             "perplexity chunk by chunk, time per op kind"},
    OPT_VERSION_ROW,
    {"-h --help", OPT_HELP, .help = "this help"},
    COMPAT_SECTION,
    COMPAT_FA_OPT(options, compat),
    COMPAT_CACHE_OPTS(options, compat),
    COMPAT_GPU_OPTS,
    COMPAT_NO_WARMUP_OPT,
    COMPAT_LOG_DISABLE_OPT,
};

// Also folds llama-perplexity's -fa, -ctk and -ctv into --attention and --kv-type.
static bool check(void *parsed, char *err, size_t n) {
    struct options *o = parsed;
    if (!o->model) {
        snprintf(err, n, "no model given: use -m MODEL (see --help)");
        return false;
    }
    if (o->kld && !o->kld_base) {
        snprintf(err, n, "--kl-divergence needs --kl-divergence-base FILE");
        return false;
    }
    if (o->report && !o->text) {
        snprintf(err, n, "--report needs the text (-f FILE)");
        return false;
    }
    if (!o->kld && !o->text) {
        snprintf(err, n, "no text given: use -f FILE (see --help)");
        return false;
    }
    return compat_fold(&o->compat, &o->attention, &o->kv_type, err, n);
}

static const opt_program program = {
    .name = TOOL,
    .usage = "mint-perplexity -m MODEL -f TEXT [options]",
    .opts = opts,
    .n_opts = sizeof opts / sizeof *opts,
    .check = check,
};

// The running perplexity after each chunk, for the report.
typedef struct chunks {
    double *ppl; // [n] running perplexity after chunk i + 1
    int n, cap;
} chunks;

static void on_chunk(void *user, int32_t chunk, int32_t n_chunks, double ppl) {
    chunks *c = user;
    if (c && c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        double *p = realloc(c->ppl, (size_t)cap * sizeof *p);
        if (p) c->ppl = p, c->cap = cap;
    }
    if (c && c->n < c->cap) c->ppl[c->n++] = ppl;
    printf("[%d]%.4f,", chunk, ppl);
    if (chunk == n_chunks) printf("\n");
    fflush(stdout);
}

static void print_pct(const char *what, const mint_ppl_percentiles *p, double mul,
                      const char *fmt) {
    // llama-perplexity prints the quartiles for delta-p only.
    bool quartiles = strcmp(what, "KLD") != 0;
    const struct {
        const char *label;
        double v;
        bool quartile;
    } rows[] = {{"Maximum", p->max, 0},    {"99.9%  ", p->p999, 0}, {"99.0%  ", p->p99, 0},
                {"95.0%  ", p->p95, 0},    {"90.0%  ", p->p90, 0},  {"75.0%  ", p->p75, 1},
                {"Median ", p->median, 0}, {"25.0%  ", p->p25, 1},  {"10.0%  ", p->p10, 0},
                {" 5.0%  ", p->p5, 0},     {" 1.0%  ", p->p1, 0},   {" 0.1%  ", p->p01, 0},
                {"Minimum", p->min, 0}};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        if (rows[i].quartile && !quartiles) continue;
        printf("%s %s: ", rows[i].label, what);
        printf(fmt, mul * rows[i].v);
        printf("\n");
    }
}

// Attention bytes the page may hold (see tools/run/report_run.c).
#define ATTENTION_BUDGET (8u << 20)

// The report: the first chunk evaluated again token by token (what llama-perplexity scores is its
// second half, shown bright; the first half is context), the running perplexity of every chunk,
// the time per op kind of that evaluation. Writes into f; the caller commits.
static int write_report(const options *o, mint_model *m, const char *text, size_t len,
                        const chunks *ch, const mint_ppl_result *res, mint_atomic_file *f) {
    mint_err err;
    mint_model_desc d;
    mint_model_describe(m, &d);
    int32_t *ids = malloc((len + 8) * sizeof *ids);
    size_t n_ids = 0;
    mint_status st =
        ids ? mint_tokenize(m, text, len, true, false, ids, len + 8, &n_ids, &err) : MINT_E_NOMEM;
    if (st == MINT_E_LIMIT) { // more tokens than bytes (byte fallback): n_ids is the count
        int32_t *more = realloc(ids, n_ids * sizeof *ids);
        st = more ? mint_tokenize(m, text, len, true, false, more, n_ids, &n_ids, &err)
                  : MINT_E_NOMEM;
        ids = more ? more : ids;
    }
    if (st != MINT_OK) {
        free(ids);
        fprintf(stderr, TOOL ": report: %s\n", st != MINT_E_NOMEM ? err.msg : "out of memory");
        return 1;
    }
    const int n = (int)(n_ids < (size_t)o->n_ctx ? n_ids : (size_t)o->n_ctx);
    mint_ctx_params cp = mint_ctx_default_params();
    cp.n_threads = o->n_threads;
    cp.n_ctx = n;
    cp.n_batch = n;
    cp.kv_type = (mint_kv_type)o->kv_type;
    cp.attention = (mint_attention)o->attention;
    mint_ctx *ctx = NULL;
    report r = {.tool = TOOL, .model_path = o->model, .desc = d};
    r.tok = calloc((size_t)n, sizeof *r.tok);
    const int T = report_attention_positions(d.n_layer, d.n_head, ATTENTION_BUDGET, n);
    float *att = calloc((size_t)d.n_layer * d.n_head * (size_t)T * T, sizeof *att);
    int rc = 0;
    if (!r.tok || !att || mint_ctx_create(m, &cp, &ctx, &err) != MINT_OK ||
        mint_ctx_capture_attention(ctx, att, T, &err) != MINT_OK) {
        fprintf(stderr, TOOL ": report: %s\n", r.tok && att ? err.msg : "out of memory");
        rc = 1;
    }
    if (rc == 0) {
        mint_ctx_set_trace(ctx, true);
        if (mint_eval(ctx, ids, n, 0, true, &err) != MINT_OK) {
            fprintf(stderr, TOOL ": report: %s\n", err.msg);
            rc = 1;
        }
    }
    if (rc == 0) {
        for (int i = 0; i < n; i++) {
            report_token *t = &r.tok[r.n_tok++];
            t->id = ids[i];
            size_t k = mint_token_to_piece(m, ids[i], false, t->piece, sizeof t->piece - 1);
            t->piece[k < sizeof t->piece - 1 ? k : sizeof t->piece - 1] = '\0';
            t->generated = i >= n / 2; // the scored half
            t->p = t->kl = t->ms = t->kv_mib = -1;
            t->cmp_top = -1;
            if (i > 0) report_fill_dist(t, m, mint_get_logits(ctx, i - 1), d.n_vocab);
        }
        const mint_trace_node *nodes;
        const int32_t nn = mint_ctx_last_trace(ctx, &nodes);
        for (int32_t i = 0; i < nn; i++) {
            int k = 0;
            while (k < r.n_ops && strcmp(r.op_name[k], nodes[i].op) != 0) k++;
            if (k == r.n_ops && r.n_ops < 16) r.op_name[r.n_ops++] = nodes[i].op;
            if (k < 16) r.op_seconds[k] += nodes[i].seconds;
        }
        for (int k = 0; k < r.n_ops; k++)
            if (strcmp(r.op_name[k], "ATTENTION") == 0) r.op_name[k] = "ATTENTION*";
        r.isa = mint_ctx_isa_name(ctx);
        r.attention = mint_ctx_attention_name(ctx);
        r.threads = mint_ctx_n_threads(ctx);
        mint_cache_info ci;
        mint_ctx_cache_info(ctx, &ci);
        r.kv_block = ci.block;
        r.att = att;
        r.att_T = T;
        r.chunk_ppl = ch->ppl;
        r.n_chunks = ch->n;
        r.ppl = res->ppl;
        r.ppl_err = res->ppl_err;
        snprintf(r.note, sizeof r.note,
                 "The text is the first chunk (%d tokens): the first half is context, the second "
                 "half (bright) is what perplexity scores. Attention: its first %d tokens, 8-bit. "
                 "Times per op kind are those of this chunk's evaluation; * attention's include "
                 "computing the weights shown here.",
                 n, T);
        if (report_write(&r, f, &err) != MINT_OK) {
            fprintf(stderr, TOOL ": report: %s\n", err.msg);
            rc = 1;
        }
    }
    mint_ctx_free(ctx);
    free(att);
    free(r.tok);
    free(ids);
    return rc;
}

int main(int argc, char **argv) {
    options o = {0};
    char msg[600];
    int done = opt_main(&program, argc, argv, &o);
    if (done >= 0) return done;
    mint_err err;
    mint_model *m;
    if (load_model(TOOL, o.model, &o.load, &m, &err) != MINT_OK) {
        fprintf(stderr, TOOL ": %s\n", err.msg);
        return 1;
    }
    char *text = NULL;
    size_t len = 0;
    if (o.text && (!o.kld || o.report)) {
        text = cli_read_file(o.text, &len, msg, sizeof msg);
        if (!text) {
            fprintf(stderr, TOOL ": %s\n", msg);
            mint_model_close(m);
            return 1;
        }
    }
    mint_ppl_params p = mint_ppl_default_params();
    p.n_ctx = o.n_ctx;
    p.n_chunks = o.n_chunks;
    p.n_threads = o.n_threads;
    p.kv_type = (mint_kv_type)o.kv_type;
    if (o.kld)
        p.kld_base_in = o.kld_base;
    else
        p.kld_base_out = o.kld_base;
    chunks ch = {0};
    p.attention = (mint_attention)o.attention;
    p.on_chunk = on_chunk;
    p.user = &ch;
    mint_atomic_file *report_file = NULL; // begun now: an unwritable path fails before the work
    if (o.report && mint_atomic_file_begin(o.report, &report_file, &err) != MINT_OK) {
        fprintf(stderr, TOOL ": %s\n", err.msg);
        free(text);
        mint_model_close(m);
        return 1;
    }
    fprintf(stderr, TOOL ": %s, kernels %s\n", o.model, mint_isa_name());
    mint_ppl_result r;
    int rc = 0;
    if (mint_perplexity(m, text, len, &p, &r, &err) != MINT_OK) {
        fprintf(stderr, "\n" TOOL ": %s\n", err.msg);
        rc = 1;
    } else if (!r.has_kld) {
        printf("Final estimate: PPL = %.4f +/- %.5f\n", r.ppl, r.ppl_err);
        fprintf(stderr, TOOL ": %d chunk%s of %d, %llu scored token%s, %.2f s (%.1f tokens/s)\n",
                r.n_chunks, cli_plural(r.n_chunks), r.n_ctx, (unsigned long long)r.count,
                cli_plural((long long)r.count), r.seconds,
                r.n_chunks * (double)r.n_ctx / r.seconds);
    } else {
        printf("====== Perplexity statistics ======\n");
        printf("Mean PPL(Q)                   : %10.6f ± %10.6f\n", r.ppl, r.ppl_err);
        printf("Mean PPL(base)                : %10.6f ± %10.6f\n", r.ppl_base, r.ppl_base_err);
        printf("Cor(ln(PPL(Q)), ln(PPL(base))): %6.2f%%\n", 100.0 * r.cor);
        printf("Mean ln(PPL(Q)/PPL(base))     : %10.6f ± %10.6f\n", r.log_ratio, r.log_ratio_err);
        printf("Mean PPL(Q)/PPL(base)         : %10.6f ± %10.6f\n", r.ppl_ratio, r.ppl_ratio_err);
        printf("Mean PPL(Q)-PPL(base)         : %10.6f ± %10.6f\n\n", r.ppl_diff, r.ppl_diff_err);
        printf("====== KL divergence statistics ======\n");
        printf("Mean    KLD: %10.6f ± %10.6f\n", r.kld, r.kld_err);
        print_pct("KLD", &r.kld_pct, 1.0, "%10.6f");
        printf("\n====== Token probability statistics ======\n");
        printf("Mean    Δp: %6.3f ± %5.3f %%\n", 100.0 * r.dp, 100.0 * r.dp_err);
        print_pct("Δp", &r.dp_pct, 100.0, "%6.3f%%");
        printf("RMS Δp    : %6.3f ± %5.3f %%\n", 100.0 * r.dp_rms, 100.0 * r.dp_rms_err);
        printf("Same top p: %6.3f ± %5.3f %%\n", 100.0 * r.same_top, 100.0 * r.same_top_err);
    }
    if (report_file && rc == 0) {
        rc = write_report(&o, m, text, len, &ch, &r, report_file);
        if (rc == 0) {
            const mint_status st = mint_atomic_file_commit(report_file, &err);
            report_file = NULL; // committed, or freed by the failed commit
            if (st != MINT_OK) {
                fprintf(stderr, TOOL ": %s\n", err.msg);
                rc = 1;
            } else { // a file written says where
                fprintf(stderr, TOOL ": report written to %s\n", o.report);
            }
        }
    }
    mint_atomic_file_abort(report_file);
    free(ch.ppl);
    free(text);
    mint_model_close(m);
    return rc;
}
