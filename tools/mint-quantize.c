// mint-quantize - convert and quantize models; write synthetic ones.
//
// Modes (see --help): IN OUT TYPE quantizes a model with llama-quantize's per-tensor mixes;
// --synthetic writes a random-weight model with real shapes (for speed and format tests; its
// text is noise); --compare quantizes to several types and compares them.
#include "cli.h"
#include "mint.h"
#include "quantize_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOOL "mint-quantize"

// Refuses to replace an existing OUT unless --overwrite (the library never writes over the
// input either way).
static bool may_write(const quantize_options *o) {
    if (o->overwrite || access(o->out, F_OK) != 0) return true;
    fprintf(stderr, TOOL ": %s exists; pass --overwrite to replace it\n", o->out);
    return false;
}

static int synthetic(const quantize_options *o) {
    if (!may_write(o)) return 1;
    mint_synth_params p = {o->preset, o->type, o->vocab, (uint64_t)o->seed, o->n_threads, o->shape};
    mint_err err;
    double t0 = cli_now();
    if (mint_synth_write(&p, o->out, &err) != MINT_OK) {
        fprintf(stderr, TOOL ": %s\n", err.msg);
        return 1;
    }
    fprintf(stderr,
            TOOL ": wrote %s (synthetic %s, %s, random weights: its text is noise) in %.1f s\n",
            o->out, o->preset, o->type, cli_now() - t0);
    return 0;
}

// A progress bar on stderr, redrawn when the percentage changes.
static void progress(void *user, uint64_t done, uint64_t total) {
    int *last = user;
    int pct = total ? (int)(100 * done / total) : 100;
    if (pct == *last) return;
    *last = pct;
    char bar[41];
    int fill = pct * 40 / 100;
    for (int i = 0; i < 40; i++) bar[i] = i < fill ? '#' : '.';
    bar[40] = '\0';
    fprintf(stderr, "\r[%s] %3d%%  %.1f / %.1f MiB", bar, pct, done / 1048576.0, total / 1048576.0);
    if (done == total) fprintf(stderr, "\n");
}

static void on_tensor(void *user, const char *name, const char *from, const char *to,
                      const char *reason) {
    (void)user;
    fprintf(stderr, "  %-32s %-5s -> %-5s  %s\n", name, from, to, reason);
}

static int convert(const quantize_options *o) {
    if (!may_write(o)) return 1;
    mint_quantize_params p = {0};
    int last = -1;
    p.ftype = o->type;
    p.pure = o->pure;
    p.leave_output = o->leave_output;
    p.allow_requantize = o->allow_requantize;
    p.output_type = o->output_type;
    p.token_embd_type = o->token_embd_type;
    p.overrides = o->overrides.v;
    p.n_overrides = o->overrides.n;
    p.n_threads = o->n_threads;
    if (!o->no_progress && isatty(STDERR_FILENO)) p.progress = progress;
    if (o->verbose) p.on_tensor = on_tensor;
    p.user = &last;
    mint_err err;
    mint_imatrix *im = NULL;
    if (o->imatrix) {
        if (mint_imatrix_load(o->imatrix, &im, &err) != MINT_OK) {
            fprintf(stderr, TOOL ": %s\n", err.msg);
            return 1;
        }
        p.imatrix = im;
        p.imatrix_file = o->imatrix;
        p.include_weights = o->include_weights.v;
        p.n_include_weights = o->include_weights.n;
        p.exclude_weights = o->exclude_weights.v;
        p.n_exclude_weights = o->exclude_weights.n;
    }
    double t0 = cli_now();
    mint_status st = mint_quantize_file(o->in, o->out, &p, &err);
    mint_imatrix_free(im);
    if (st != MINT_OK) {
        if (last >= 0) fprintf(stderr, "\n");
        fprintf(stderr, TOOL ": %s\n", err.msg);
        return 1;
    }
    fprintf(stderr, TOOL ": wrote %s (%s) in %.1f s\n", o->out, o->type, cli_now() - t0);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// --compare: quantize to each type, then perplexity, KL divergence against the source, and
// generation speed, in one table.

typedef struct row {
    const char *type;    // file type, or "source"
    bool imatrix;        // quantized with --compare's importance matrix
    uint64_t bytes;      // tensor bytes
    uint64_t params;     // parameters
    mint_ppl_result ppl; // perplexity (and KLD for the quantized rows)
    double tg;           // generation tokens/s
    bool ok;             // measured
} row;

// Generation speed: 64 single-token evaluations from an empty cache (mint-bench's tg64).
static double measure_tg(mint_model *m, int threads) {
    mint_ctx_params cp = mint_ctx_default_params();
    cp.n_threads = threads;
    cp.n_ctx = 80;
    mint_ctx *c;
    mint_err err;
    if (mint_ctx_create(m, &cp, &c, &err) != MINT_OK) return 0;
    mint_model_desc d;
    mint_model_describe(m, &d);
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = cli_now();
        for (int i = 0; i < 64; i++) {
            int32_t tok = (int32_t)((uint32_t)(i * 2654435761u) % (uint32_t)d.n_vocab);
            if (mint_eval(c, &tok, 1, i, false, &err) != MINT_OK) break;
        }
        double tps = 64 / (cli_now() - t0);
        best = tps > best ? tps : best;
    }
    mint_ctx_free(c);
    return best;
}

static bool measure(const char *path, const char *text, size_t len, const quantize_options *o,
                    const char *kld_out, const char *kld_in, row *r) {
    mint_err err;
    mint_model *m;
    if (mint_model_open(path, NULL, &m, &err) != MINT_OK) {
        fprintf(stderr, TOOL ": %s\n", err.msg);
        return false;
    }
    mint_model_desc d;
    mint_model_describe(m, &d);
    r->bytes = d.weight_bytes;
    r->params = d.n_params;
    mint_ppl_params p = mint_ppl_default_params();
    p.n_ctx = o->ctx;
    p.n_chunks = o->chunks;
    p.n_threads = o->n_threads;
    p.kld_base_out = kld_out;
    p.kld_base_in = kld_in;
    bool ok = mint_perplexity(m, text, len, &p, &r->ppl, &err) == MINT_OK;
    if (!ok)
        fprintf(stderr, TOOL ": %s: %s\n", path, err.msg);
    else
        r->tg = measure_tg(m, o->n_threads);
    mint_model_close(m);
    r->ok = ok;
    return ok;
}

// The rows of --compare, in order: each type without the importance matrix, then (with
// --imatrix) with it; a type that needs one (Q2_K_S) only with it.
static int plan_rows(const quantize_options *o, row *rows) {
    int n = 0;
    for (int i = 0; i < o->compare.n; i++) {
        const char *t = o->compare.v[i];
        if (!quantize_ftype_needs_imatrix(t) || !o->imatrix)
            rows[n++] = (row){.type = t, .imatrix = false};
        if (o->imatrix) rows[n++] = (row){.type = t, .imatrix = true};
    }
    return n;
}

// Quantizes IN to r's type (with the matrix when r says so) and measures it against the source.
static bool quantize_and_measure(const quantize_options *o, const mint_imatrix *im, const char *dir,
                                 const char *base, row *r) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s%s.gguf", dir, r->type, r->imatrix ? "-imatrix" : "");
    mint_quantize_params qp = {0};
    qp.ftype = r->type;
    qp.n_threads = o->n_threads;
    qp.pure = o->pure;
    if (r->imatrix) {
        qp.imatrix = im;
        qp.imatrix_file = o->imatrix;
        qp.include_weights = o->include_weights.v;
        qp.n_include_weights = o->include_weights.n;
        qp.exclude_weights = o->exclude_weights.v;
        qp.n_exclude_weights = o->exclude_weights.n;
    }
    mint_err err;
    fprintf(stderr, TOOL ": %s%s: quantize, perplexity, KL divergence, speed ...\n", r->type,
            r->imatrix ? " with the importance matrix" : "");
    if (mint_quantize_file(o->in, path, &qp, &err) != MINT_OK) {
        fprintf(stderr, TOOL ": %s%s: %s\n", r->type, r->imatrix ? " (imatrix)" : "", err.msg);
        return false;
    }
    const bool ok = measure(path, NULL, 0, o, NULL, base, r); // a failure's line is printed
    if (!o->work_dir) unlink(path);
    return ok;
}

static void print_json(const quantize_options *o, const row *rows, int n) {
    const row *src = &rows[0];
    printf("[");
    for (int i = 0; i < n; i++) {
        const row *r = &rows[i];
        if (!r->ok) continue;
        printf("%s\n {\"type\":\"%s\",", i ? "," : "", r->type);
        if (o->imatrix) printf("\"imatrix\":%s,", r->imatrix ? "true" : "false");
        printf("\"bytes\":%llu,\"bpw\":%.4f,\"ppl\":%.6f,\"ppl_err\":%.6f,"
               "\"dppl_pct\":%.4f,\"kld\":%.6f,\"kld_err\":%.6f,\"same_top_pct\":%.4f,"
               "\"tg_tps\":%.2f}",
               (unsigned long long)r->bytes, 8.0 * r->bytes / r->params, r->ppl.ppl, r->ppl.ppl_err,
               100.0 * (r->ppl.ppl / src->ppl.ppl - 1), r->ppl.has_kld ? r->ppl.kld : 0.0,
               r->ppl.has_kld ? r->ppl.kld_err : 0.0,
               r->ppl.has_kld ? 100.0 * r->ppl.same_top : 100.0, r->tg);
    }
    printf("\n]\n");
}

// The markdown table; with --imatrix a column says which rows used the matrix.
static void print_table(const quantize_options *o, const row *rows, int n) {
    const row *src = &rows[0];
    if (o->imatrix)
        printf("\n| type | imatrix | size | bits/weight | PPL | ΔPPL | mean KLD | same top-1 | gen "
               "t/s "
               "|\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    else
        printf("\n| type | size | bits/weight | PPL | ΔPPL | mean KLD | same top-1 | gen t/s |\n"
               "|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < n; i++) {
        const row *r = &rows[i];
        if (!r->ok) continue;
        printf("| %s | ", r->type);
        if (o->imatrix) printf("%s | ", i == 0 ? "-" : r->imatrix ? "yes" : "no");
        printf("%.2f MiB | %.3f | %.4f ± %.4f | ", r->bytes / 1048576.0, 8.0 * r->bytes / r->params,
               r->ppl.ppl, r->ppl.ppl_err);
        if (i == 0)
            printf("- | - | - | %.1f |\n", r->tg);
        else
            printf("%+.3f%% | %.6f ± %.6f | %.2f%% ± %.2f | %.1f |\n",
                   100.0 * (r->ppl.ppl / src->ppl.ppl - 1), r->ppl.kld, r->ppl.kld_err,
                   100.0 * r->ppl.same_top, 100.0 * r->ppl.same_top_err, r->tg);
    }
    printf("\nPPL: %s, context %d, %d chunks; KLD and same top-1 against the source; gen: 64 "
           "single-token steps, best of 3, %s kernels",
           o->text, o->ctx, src->ppl.n_chunks, mint_isa_name());
    if (o->imatrix) printf("; imatrix: %s", o->imatrix);
    printf("\n");
}

static int compare(const quantize_options *o) {
    char msg[600], dir[256], base[512];
    size_t len;
    mint_err err;
    mint_imatrix *im = NULL;
    if (o->imatrix && mint_imatrix_load(o->imatrix, &im, &err) != MINT_OK) {
        fprintf(stderr, TOOL ": %s\n", err.msg);
        return 1;
    }
    char *text = cli_read_file(o->text, &len, msg, sizeof msg);
    if (!text) {
        fprintf(stderr, TOOL ": %s\n", msg);
        mint_imatrix_free(im);
        return 1;
    }
    if (o->work_dir)
        snprintf(dir, sizeof dir, "%s", o->work_dir);
    else {
        snprintf(dir, sizeof dir, "/tmp/mint-compare-XXXXXX");
        if (!mkdtemp(dir)) {
            fprintf(stderr, TOOL ": cannot create a temporary folder\n");
            free(text);
            mint_imatrix_free(im);
            return 1;
        }
    }
    row rows[2 * QUANTIZE_MAX_COMPARE + 1];
    memset(rows, 0, sizeof rows);
    const int n = 1 + plan_rows(o, rows + 1);
    snprintf(base, sizeof base, "%s/base.kld", dir);
    rows[0].type = "source";
    fprintf(stderr, TOOL ": source %s: perplexity on %s (c=%d) ...\n", o->in, o->text, o->ctx);
    int rc = measure(o->in, text, len, o, base, NULL, &rows[0]) ? 0 : 1;
    for (int i = 1; i < n && rc == 0; i++)
        if (!quantize_and_measure(o, im, dir, base, &rows[i])) rc = 1;
    if (!o->work_dir) {
        unlink(base);
        rmdir(dir);
    }
    free(text);
    mint_imatrix_free(im);
    if (o->json)
        print_json(o, rows, n);
    else
        print_table(o, rows, n);
    return rc;
}

int main(int argc, char **argv) {
    quantize_options o;
    int done = opt_main(&quantize_program, argc, argv, &o);
    if (done >= 0) return done;
    switch (o.mode) {
    case QUANTIZE_SYNTHETIC:
        return synthetic(&o);
    case QUANTIZE_CONVERT:
        return convert(&o);
    case QUANTIZE_COMPARE:
        return compare(&o);
    }
    return 1;
}
