// test_imatrix_llama.c - importance matrices collected by the engine (mint_ctx_set_imatrix,
// through mint_perplexity's chunks as mint-imatrix runs them) against llama-imatrix's
// (reference/imatrix_llama.json, made by reference/make_imatrix_llama.sh): on three tiny
// synthetic F32 models (dense, a mixture of 16 experts, and one with an output head collected
// with --process-output) and 20000 bytes of WikiText-2 (MINT_TEST_DATA; skipped without it),
// the same matrices, the same counts (per expert too), and sums within docs/tolerances.md's
// budget. Then that the sums do not depend on the thread count or the batch split, and
// mint-imatrix's command line: a run, combining, the legacy format, statistics, bad flags.
#include "formats/imatrix.h"
#include "helpers/helpers.h"
#include "helpers/tool.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Relative difference allowed per column and for a matrix's total (docs/tolerances.md: float
// rounding of the activations; measured at most 1.2e-6).
#define BUDGET_REL 1e-5

static json_object *reference(void) {
    return mt_json_source("tests/reference/imatrix_llama.json");
}

// The case's synthetic model, written and checked against the sha256 the reference ran on.
static const char *model_file(json_object *c) {
    const char *arch = json_object_get_string(mt_jget(c, "synthetic"));
    char name[64];
    snprintf(name, sizeof name, "%s-tiny.gguf", arch);
    const char *path = keep(mt_path(mt_tmpdir(), name));
    mint_synth_params p = {
        .preset = arch, .ftype = "F32", .seed = 1, .n_threads = 2, .shape = "tiny"};
    mint_err err;
    cr_assert_eq(mint_synth_write(&p, path, &err), MINT_OK, "%s: %s", arch, err.msg);
    char cmd[4200], *out = NULL;
    snprintf(cmd, sizeof cmd, "sha256sum '%s'", path);
    cr_assert_eq(mt_run(cmd, &out, NULL), 0);
    const char *want = json_object_get_string(mt_jget(c, "sha256"));
    cr_assert(strncmp(out, want, 64) == 0,
              "%s: the synthetic writer's file changed (sha256 %.64s, the reference ran %s): "
              "remake tests/reference/imatrix_llama.json (make_imatrix_llama.sh)",
              arch, out, want);
    free(out);
    return path;
}

// The calibration text: the first 20000 bytes of wiki.test.raw.
static char *text20k(size_t *len) {
    char *t = (char *)mt_read_file(mt_data_path("wiki.test.raw"), len);
    cr_assert(t);
    if (*len > 20000) *len = 20000;
    return t;
}

// llama-imatrix's run of the case, as mint-imatrix makes it: chunks of 128, 4 of them.
static mint_imatrix *collect(const char *model, bool output, int threads, int batch) {
    size_t len;
    char *text = text20k(&len);
    mint_model *m;
    mint_err err;
    cr_assert_eq(mint_model_open(model, NULL, &m, &err), MINT_OK, "%s", err.msg);
    mint_imatrix *im;
    cr_assert_eq(mint_imatrix_create(128, &im, &err), MINT_OK);
    mint_ppl_params p = mint_ppl_default_params();
    p.n_ctx = 128;
    p.n_chunks = 4;
    p.n_threads = threads;
    p.n_batch = batch;
    p.imatrix = im;
    p.imatrix_output = output;
    mint_ppl_result r;
    cr_assert_eq(mint_perplexity(m, text, len, &p, &r, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(r.n_chunks, 4);
    mint_model_close(m);
    free(text);
    return im;
}

static double rel(double a, double b) {
    return fabs(a - b) / fmax(fabs(b), 1e-30);
}

static void compare_case(int k) {
    json_object *c = mt_jidx(mt_jget(reference(), "cases"), (size_t)k);
    const char *arch = json_object_get_string(mt_jget(c, "synthetic"));
    mint_imatrix *im =
        collect(model_file(c), json_object_get_boolean(mt_jget(c, "process_output")), 2, 0);
    mint_imatrix_info info;
    mint_imatrix_get_info(im, &info);
    cr_assert_eq(info.chunk_count, (uint32_t)json_object_get_int(mt_jget(c, "chunk_count")));
    cr_assert_eq(info.chunk_size, (uint32_t)json_object_get_int(mt_jget(c, "chunk_size")));
    json_object *entries = mt_jget(c, "entries");
    cr_assert_eq(info.n_entries, json_object_object_length(entries), "%s: %lld matrices, llama %d",
                 arch, (long long)info.n_entries, json_object_object_length(entries));
    double worst = 0;
    json_object_object_foreach(entries, name, ref) {
        mint_imatrix_entry e;
        cr_assert_eq(mint_imatrix_find(im, name, &e), MINT_OK, "%s: no %s", arch, name);
        cr_assert_eq(e.n_vals, json_object_get_int64(mt_jget(ref, "n_vals")), "%s", name);
        json_object *counts = mt_jget(ref, "counts");
        cr_assert_eq(e.n_counts, (int64_t)json_object_array_length(counts), "%s", name);
        for (int64_t j = 0; j < e.n_counts; j++)
            cr_assert_eq(e.counts[j], json_object_get_int64(mt_jidx(counts, (size_t)j)),
                         "%s: count %lld", name, (long long)j);
        double sum = 0;
        for (int64_t j = 0; j < e.n_vals; j++) sum += e.sums[j];
        const double want = json_object_get_double(mt_jget(ref, "sum"));
        cr_assert_leq(rel(sum, want), BUDGET_REL, "%s: sum %.9g, llama %.9g", name, sum, want);
        worst = fmax(worst, rel(sum, want));
        json_object *cols = mt_jget(ref, "columns"), *vals = mt_jget(ref, "values");
        for (size_t j = 0; j < json_object_array_length(cols); j++) {
            const int64_t col = json_object_get_int64(mt_jidx(cols, j));
            const double v = json_object_get_double(mt_jidx(vals, j));
            cr_assert_leq(rel(e.sums[col], v), BUDGET_REL, "%s[%lld]: %.9g, llama %.9g", name,
                          (long long)col, e.sums[col], v);
            worst = fmax(worst, rel(e.sums[col], v));
        }
    }
    cr_log_info("%s: %lld matrices, counts equal, largest relative difference %.2e", arch,
                (long long)info.n_entries, worst);
    mint_imatrix_free(im);
}

Test(imatrix_llama, dense_llama3) {
    compare_case(0);
}
Test(imatrix_llama, experts_qwen3moe) {
    compare_case(1);
}
Test(imatrix_llama, output_head_phi3) {
    compare_case(2);
}

// One thread or two, one batch per chunk or chunks in batches of 32 and 64 tokens: the same
// matrices and counts; the same bits for any thread count.
Test(imatrix_llama, threads_and_batches) {
    json_object *c = mt_jidx(mt_jget(reference(), "cases"), 1);
    const char *model = model_file(c);
    mint_imatrix *a = collect(model, false, 1, 0), *b = collect(model, false, 2, 0),
                 *d = collect(model, false, 2, 32);
    mint_imatrix_info ia, id;
    mint_imatrix_get_info(a, &ia);
    mint_imatrix_get_info(d, &id);
    cr_assert_eq(ia.n_entries, id.n_entries);
    for (int64_t i = 0; i < ia.n_entries; i++) {
        mint_imatrix_entry x, y, z;
        cr_assert_eq(mint_imatrix_entry_at(a, i, &x), MINT_OK);
        cr_assert_eq(mint_imatrix_entry_at(b, i, &y), MINT_OK);
        cr_assert_eq(mint_imatrix_entry_at(d, i, &z), MINT_OK);
        cr_assert(memcmp(x.sums, y.sums, (size_t)x.n_vals * sizeof *x.sums) == 0, "%s", x.name);
        cr_assert(memcmp(x.counts, z.counts, (size_t)x.n_counts * sizeof *x.counts) == 0, "%s",
                  x.name);
        for (int64_t j = 0; j < x.n_vals; j++)
            cr_assert_leq(rel(z.sums[j], x.sums[j]), BUDGET_REL, "%s[%lld]", x.name, (long long)j);
    }
    mint_imatrix_free(a);
    mint_imatrix_free(b);
    mint_imatrix_free(d);
}

// mint-imatrix: a run, then combining it with itself, the legacy format, the statistics table.
Test(imatrix_llama, program) {
    json_object *c = mt_jidx(mt_jget(reference(), "cases"), 0);
    const char *model = model_file(c), *dir = keep(mt_tmpdir());
    size_t len;
    char *text = text20k(&len);
    const char *tpath = keep(mt_path(dir, "cal.txt"));
    cr_assert(mt_write_file(tpath, text, len));
    free(text);
    const char *one = keep(mt_path(dir, "one.gguf")), *two = keep(mt_path(dir, "two.gguf"));
    const char *dat = keep(mt_path(dir, "two.dat"));
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-imatrix", "-m '%s' -f '%s' -c 128 --chunks 4 -t 2 -o '%s'",
                      model, tpath, one);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(out, "[1]") && strstr(out, "[4]") && strstr(out, "Final estimate: PPL = "),
              "%s", out);
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-imatrix", "--in-file '%s' --in-file '%s' -c 128 -o '%s'", one,
                  one, two);
    cr_assert_eq(rc, 0, "%s", err);
    free(out);
    free(err);
    rc = run_tool(&out, &err, "mint-imatrix",
                  "--in-file '%s,%s' -c 128 --output-format dat -o '%s'", one, one, dat);
    cr_assert_eq(rc, 0, "%s", err);
    free(out);
    free(err);
    mint_imatrix *a, *b, *d;
    mint_err e;
    cr_assert_eq(mint_imatrix_load(one, &a, &e), MINT_OK, "%s", e.msg);
    cr_assert_eq(mint_imatrix_load(two, &b, &e), MINT_OK, "%s", e.msg);
    cr_assert_eq(mint_imatrix_load(dat, &d, &e), MINT_OK, "%s", e.msg);
    mint_imatrix_info ia, ib, id;
    mint_imatrix_get_info(a, &ia);
    mint_imatrix_get_info(b, &ib);
    mint_imatrix_get_info(d, &id);
    cr_assert(ia.chunk_count == 4 && ib.chunk_count == 8 && id.chunk_count == 8 && id.legacy);
    cr_assert(ia.n_datasets == 1 && ib.n_datasets == 2);
    cr_assert_str_eq(mint_imatrix_dataset(a, 0), tpath);
    for (int64_t i = 0; i < ia.n_entries; i++) {
        mint_imatrix_entry x, y;
        cr_assert_eq(mint_imatrix_entry_at(a, i, &x), MINT_OK);
        cr_assert_eq(mint_imatrix_find(b, x.name, &y), MINT_OK);
        cr_assert_eq(y.counts[0], 2 * x.counts[0]);
        for (int64_t j = 0; j < x.n_vals; j++) cr_assert_eq(y.sums[j], 2 * x.sums[j]);
        float p[1024], q[1024]; // the importance from the GGUF and from the .dat agree
        cr_assert_leq(x.n_vals, 1024);
        cr_assert_eq(mint_imatrix_importance(b, x.name, x.n_vals, 1, 0, p, &e), MINT_OK);
        cr_assert_eq(mint_imatrix_importance(d, x.name, x.n_vals, 1, 0, q, &e), MINT_OK);
        for (int64_t j = 0; j < x.n_vals; j++) cr_assert_leq(rel(q[j], p[j]), 1e-6);
    }
    mint_imatrix_free(a);
    mint_imatrix_free(b);
    mint_imatrix_free(d);

    rc = run_tool(&out, &err, "mint-imatrix", "--in-file '%s' --show-statistics", one);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(out, "Computing statistics for") && strstr(out, "attn_q") &&
                  strstr(out, "Computing weighted average statistics per layer (2 layers)"),
              "%s", out);
    free(out);
    free(err);
    // bad flags and combinations: exit 2 with one line
    static const char *const bad[][2] = {
        {"--output-format xml", "--output-format"},
        {"--show-statistics", "--show-statistics needs exactly one --in-file"},
        {"-c 128", "no text"},
        {"-f x.txt", "no model"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rc = run_tool(&out, &err, "mint-imatrix", "%s", bad[i][0]);
        expect_one_line_error(rc, out, err, bad[i][1], bad[i][0]);
        cr_assert_eq(rc, 2, "%s: exit %d", bad[i][0], rc);
        free(out);
        free(err);
    }
    // a file that is not an imatrix: exit 1 with one line naming it
    rc = run_tool(&out, &err, "mint-imatrix", "--in-file '%s' -o '%s'", tpath, two);
    expect_one_line_error(rc, out, err, tpath, "--in-file of a text");
    cr_assert_eq(rc, 1);
    free(out);
    free(err);
}
