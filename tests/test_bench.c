// test_bench.c - the read-bandwidth probe behind mint-bench's bound: it runs and reports a
// median within its own spread, in the library and in mint-bench's JSON. Speed is never
// asserted: the machine may be shared.
#include "helpers/hang.h"
#include "helpers/helpers.h"
#include "helpers/tool.h"
#include "runtime/measure/membw.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(const mint_membw *m, int threads) {
    cr_assert(isfinite(m->min) && isfinite(m->max) && isfinite(m->median), "t=%d", threads);
    cr_assert_gt(m->min, 0, "t=%d", threads);
    cr_assert(m->min <= m->median && m->median <= m->max, "t=%d: median %g outside [%g, %g]",
              threads, m->median, m->min, m->max);
}

Test(membw, median_within_the_spread, .timeout = MT_HANG(60)) {
    for (int t = 1; t <= 2; t++) {
        mint_membw m;
        mint_err err;
        cr_assert_eq(mint_membw_measure(t, (size_t)64 << 20, 2, &m, &err), MINT_OK, "%s", err.msg);
        check(&m, t);
    }
}

// A buffer that is not a whole number of groups, split among more threads than it has groups,
// and an odd count of passes (the middle one is the median).
Test(membw, small_and_ragged_buffer, .timeout = MT_HANG(60)) {
    mint_membw m;
    mint_err err;
    cr_assert_eq(mint_membw_measure(4, 40000, 3, &m, &err), MINT_OK, "%s", err.msg);
    check(&m, 4);
}

Test(membw, public_figure_is_the_median, .timeout = MT_HANG(60)) {
    double gbps = -1;
    mint_err err;
    cr_assert_eq(mint_measure_read_bandwidth(1, (size_t)8 << 20, 1, &gbps, &err), MINT_OK, "%s",
                 err.msg);
    cr_assert(isfinite(gbps) && gbps > 0);
}

Test(membw, refuses_what_it_cannot_measure) {
    mint_membw m;
    mint_err err;
    cr_assert_eq(mint_membw_measure(1, 1024, 2, &m, &err), MINT_E_ARG);
    cr_assert_eq(mint_membw_measure(1, 1 << 20, 0, &m, &err), MINT_E_ARG);
    cr_assert_eq(mint_membw_measure(0, 1 << 20, 2, &m, &err), MINT_E_ARG);
    double gbps = -1;
    cr_assert_eq(mint_measure_read_bandwidth(1, 1 << 20, 0, &gbps, &err), MINT_E_ARG);
    cr_assert_eq(gbps, 0);
}

// mint-bench's probe: per thread count, the median of its passes between their slowest and
// fastest, in every JSON row.
Test(mint_bench_probe, json_has_the_median_within_the_spread, .timeout = MT_HANG(120)) {
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-bench",
                      "-m '%s' -t 1,2 -p 0 -n 4 -r 1 --membw-gib 0.0625 -o json",
                      mt_synth("small", "F32"));
    cr_assert_eq(rc, 0, "status %d: %s", rc, err);
    int rows = 0;
    for (const char *s = out; (s = strstr(s, "\"membw_gbps\":")) != NULL; s++, rows++) {
        double med, lo, hi;
        cr_assert_eq(sscanf(s, "\"membw_gbps\":%lf,\"membw_min_gbps\":%lf,\"membw_max_gbps\":%lf",
                            &med, &lo, &hi),
                     3, "%s", out);
        cr_assert(lo > 0 && lo <= med && med <= hi && isfinite(hi), "%s", out);
    }
    cr_assert_eq(rows, 2, "tg4 at 1 and 2 threads:\n%s", out);
    free(out);
    free(err);
}

// The bound's bytes: every matrix once and one row of each embedding table, for a file with a
// second, per-layer embedding (Gemma 4's: most of an E2B file).
Test(bench, bytes_per_token_count_one_row_of_each_embedding, .timeout = MT_HANG(60)) {
    const char *path = mt_path(mt_tmpdir(), "gemma4-tiny.gguf");
    mint_synth_params p = {
        .preset = "gemma4", .shape = "tiny", .ftype = "F32", .seed = 3, .n_threads = 2};
    mint_err err;
    cr_assert_eq(mint_synth_write(&p, path, &err), MINT_OK, "%s", err.msg);
    mint_file *f;
    cr_assert_eq(mint_file_open(path, &f, &err), MINT_OK, "%s", err.msg);
    mint_tensor_info embd, ple, out;
    cr_assert_eq(mint_file_find_tensor(f, "token_embd.weight", &embd), MINT_OK);
    cr_assert_eq(mint_file_find_tensor(f, "per_layer_token_embd.weight", &ple), MINT_OK);
    const bool tied = mint_file_find_tensor(f, "output.weight", &out) != MINT_OK;
    const uint64_t embd_row = embd.nbytes / (uint64_t)embd.ne[1],
                   embd_rest = embd.nbytes - embd_row;
    const uint64_t ple_rest = ple.nbytes - ple.nbytes / (uint64_t)ple.ne[1];
    mint_file_close(f);
    mint_model *m;
    cr_assert_eq(mint_model_open(path, NULL, &m, &err), MINT_OK, "%s", err.msg);
    mint_model_desc d;
    mint_model_describe(m, &d);
    // A tied head reads the whole table as the output matrix, and the lookup's row besides.
    const uint64_t want =
        tied ? d.weight_bytes + embd_row - ple_rest : d.weight_bytes - embd_rest - ple_rest;
    cr_assert_eq(d.bytes_per_token, want,
                 "bytes_per_token %llu, weights %llu, embedding rest %llu (tied %d), per-layer "
                 "embedding rest %llu",
                 (unsigned long long)d.bytes_per_token, (unsigned long long)d.weight_bytes,
                 (unsigned long long)embd_rest, tied, (unsigned long long)ple_rest);
    mint_model_close(m);
}
