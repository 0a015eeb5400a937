// test_quant_imatrix.c - the weighted (importance matrix) quantizers behind
// mint_quantize_rows_ref: byte for byte what llama.cpp's ggml_quantize_chunk writes on fixed
// inputs (tests/reference/quant_imatrix.json, hashes made by ggml; tests/reference/README.md
// says how), the importance-weighted error they exist to lower, the types that ignore an
// importance, and small cases whose answer is known.
#include "helpers/helpers.h"
#include "helpers/inputs.h"
#include "quant/blocks.h"
#include "quant/kernels.h"
#include "quant/ref.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Every type mint quantizes that llama-quantize hands an importance to.
static const mint_type weighted_types[] = {MINT_TYPE_Q4_0, MINT_TYPE_Q4_1, MINT_TYPE_Q5_0,
                                           MINT_TYPE_Q5_1, MINT_TYPE_Q2_K, MINT_TYPE_Q3_K,
                                           MINT_TYPE_Q4_K, MINT_TYPE_Q5_K, MINT_TYPE_Q6_K};
#define N_WEIGHTED (sizeof weighted_types / sizeof weighted_types[0])

// The reference's input generator (its "inputs" text): splitmix64, and a sum of four uniforms
// in [0, 1) minus 2 as a rough bell curve.
static uint64_t sm_state;

static const mint_kernels *ref_table(void) {
    const mint_kernels *k = mint_kernels_for(MINT_ISA_REF);
    cr_assert_not_null(k);
    return k;
}

static int jint(json_object *o, const char *key) {
    return json_object_get_int(mt_jget(o, key));
}

// Every case of the reference, every type: mint's output hashes to what ggml's hashed to.
Test(quant_imatrix, ggml_bytes) {
    json_object *ref = mt_json_source("tests/reference/quant_imatrix.json");
    json_object *cases = mt_jget(ref, "cases");
    int checked = 0;
    for (size_t c = 0; c < json_object_array_length(cases); c++) {
        json_object *k = json_object_array_get_idx(cases, c);
        const char *name = json_object_get_string(mt_jget(k, "name"));
        const int nrow = jint(k, "nrow"), n = jint(k, "n"), zero_row = jint(k, "zero_row");
        const int outlier_every = jint(k, "outlier_every");
        const int zero_cols_every = jint(k, "zero_cols_every");
        const double scale = json_object_get_double(mt_jget(k, "scale"));
        const bool use_imatrix = json_object_get_boolean(mt_jget(k, "imatrix"));
        const size_t nx = (size_t)nrow * (size_t)n;
        float *x = malloc(nx * sizeof *x), *w = malloc((size_t)n * sizeof *w);
        cr_assert(x && w);
        sm_state = (uint64_t)json_object_get_int64(mt_jget(k, "seed"));
        for (size_t i = 0; i < nx; i++) x[i] = (float)(mt_bell(&sm_state) * scale);
        for (int j = 0; j < n; j++) {
            double g = mt_bell(&sm_state);
            w[j] = (float)(g * g);
        }
        if (zero_row >= 0) memset(x + (size_t)zero_row * (size_t)n, 0, (size_t)n * sizeof *x);
        if (outlier_every > 0)
            for (size_t i = 0; i < nx; i += (size_t)outlier_every) x[i] = x[i] * 1e4f;
        if (zero_cols_every > 0)
            for (int j = 0; j < n; j += zero_cols_every) w[j] = 0;
        json_object_object_foreach(mt_jget(k, "xxh3"), tname, want) {
            const int t = mint_type_from_name(tname);
            cr_assert_geq(t, 0, "%s", tname);
            const size_t sz = (size_t)mint_row_size((uint32_t)t, n) * (size_t)nrow;
            unsigned char *y = malloc(sz);
            cr_assert(mint_quantize_rows_ref((mint_type)t, x, y, nrow, n, use_imatrix ? w : NULL));
            char got[17];
            snprintf(got, sizeof got, "%016" PRIx64, mint_hash64(y, sz));
            cr_expect_str_eq(got, json_object_get_string(want), "%s, %s: ggml's bytes differ", name,
                             tname);
            free(y);
            checked++;
        }
        free(x);
        free(w);
    }
    cr_assert_eq(checked, 66); // 6 cases x 11 types
}

// Sum over the matrix of importance[j] * (x - dequantized)^2.
static double weighted_error(mint_type t, const float *x, const void *q, int nrow, int n,
                             const float *imp) {
    float *y = malloc((size_t)n * sizeof *y);
    const size_t rs = (size_t)mint_row_size(t, n);
    double e = 0;
    for (int r = 0; r < nrow; r++) {
        ref_table()->t[t].to_float((const unsigned char *)q + (size_t)r * rs, y, n);
        for (int j = 0; j < n; j++) {
            double d = (double)x[(size_t)r * (size_t)n + (size_t)j] - y[j];
            e += imp[j] * d * d;
        }
    }
    free(y);
    return e;
}

// The point of an importance matrix: with columns whose importance varies by orders of
// magnitude (as activations' mean squares do), the weighted search lowers the
// importance-weighted squared error of every type, over the matrix as a whole.
Test(quant_imatrix, lowers_weighted_error) {
    enum { NROW = 64, N = 1024 };
    float *x = malloc(sizeof(float) * NROW * N), imp[N];
    sm_state = 42;
    for (int i = 0; i < NROW * N; i++) x[i] = (float)mt_bell(&sm_state);
    for (int j = 0; j < N; j++) {
        double g = mt_bell(&sm_state);
        imp[j] = (float)(g * g * (j % 7 == 0 ? 100.0 : 1.0)); // a few loud columns
    }
    for (size_t k = 0; k < N_WEIGHTED; k++) {
        const mint_type t = weighted_types[k];
        const size_t sz = (size_t)mint_row_size(t, N) * NROW;
        void *plain = malloc(sz), *weighted = malloc(sz);
        cr_assert(mint_quantize_rows_ref(t, x, plain, NROW, N, NULL));
        cr_assert(mint_quantize_rows_ref(t, x, weighted, NROW, N, imp));
        const double ep = weighted_error(t, x, plain, NROW, N, imp);
        const double ew = weighted_error(t, x, weighted, NROW, N, imp);
        cr_log_info("%s: weighted error %.6g with the importance, %.6g without (%.1f%%)",
                    mint_type_name(t), ew, ep, 100.0 * (ew / ep - 1));
        cr_expect_lt(ew, 0.95 * ep, "%s: %g not below %g", mint_type_name(t), ew, ep);
        free(plain);
        free(weighted);
    }
    free(x);
}

// llama.cpp's Q8_0, MXFP4, TQ1_0 and TQ2_0 quantizers take the importance and do not read it;
// the float types have no search at all.
Test(quant_imatrix, ignored_by_some_types) {
    const mint_type ts[] = {MINT_TYPE_F32,   MINT_TYPE_F16,   MINT_TYPE_BF16, MINT_TYPE_Q8_0,
                            MINT_TYPE_MXFP4, MINT_TYPE_TQ1_0, MINT_TYPE_TQ2_0};
    enum { NROW = 3, N = 256 };
    float x[NROW * N], imp[N];
    sm_state = 7;
    for (int i = 0; i < NROW * N; i++) x[i] = (float)mt_bell(&sm_state);
    for (int j = 0; j < N; j++) imp[j] = (float)(j % 5);
    for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++) {
        const size_t sz = (size_t)mint_row_size(ts[k], N) * NROW;
        unsigned char a[NROW * N * 4], b[NROW * N * 4];
        cr_assert(mint_quantize_rows_ref(ts[k], x, a, NROW, N, imp));
        cr_assert(mint_quantize_rows_ref(ts[k], x, b, NROW, N, NULL));
        cr_expect(memcmp(a, b, sz) == 0, "%s", mint_type_name(ts[k]));
    }
}

// Without an importance, every type writes exactly what its row quantizer writes, row by row
// (the bytes of every file mint-quantize wrote before there were weighted quantizers).
Test(quant_imatrix, none_is_the_row_quantizer) {
    enum { NROW = 5, N = 512 };
    float x[NROW * N];
    sm_state = 9;
    for (int i = 0; i < NROW * N; i++) x[i] = (float)(mt_bell(&sm_state) * 0.1);
    for (uint32_t t = 0; t < MINT_TYPE_COUNT; t++) {
        const mint_quantize_row_fn row = mint_quantizer_ref((mint_type)t);
        if (!row) continue;
        const size_t rs = (size_t)mint_row_size(t, N);
        unsigned char *a = malloc(rs * NROW), *b = malloc(rs * NROW);
        cr_assert(mint_quantize_rows_ref((mint_type)t, x, a, NROW, N, NULL));
        for (int r = 0; r < NROW; r++) row(x + r * N, b + (size_t)r * rs, N);
        cr_expect(memcmp(a, b, rs * NROW) == 0, "%s", mint_type_name(t));
        free(a);
        free(b);
    }
}

// A row of zeros is all zero bytes whatever the importance (every search sees a zero group and
// stores scale 0, min 0 and level 0).
Test(quant_imatrix, zero_row_is_zero_bytes) {
    enum { N = 512 };
    float x[N] = {0}, imp[N];
    for (int j = 0; j < N; j++) imp[j] = (float)(1 + j % 3);
    for (size_t k = 0; k < N_WEIGHTED; k++) {
        const mint_type t = weighted_types[k];
        const size_t rs = (size_t)mint_row_size(t, N);
        unsigned char y[N * 2], zero[N * 2] = {0};
        memset(y, 0xA5, sizeof y);
        cr_assert(mint_quantize_rows_ref(t, x, y, 1, N, imp));
        cr_expect(memcmp(y, zero, rs) == 0, "%s", mint_type_name(t));
    }
}

// Values already on a symmetric type's grid, with a power-of-two step and the grid's most
// negative level present, come back exactly: the weighted fit's scale is that step (every
// weighted sum scales by it exactly), and no other candidate explains more.
Test(quant_imatrix, grid_values_are_exact) {
    const struct {
        mint_type t;
        int lo, hi; // the type's levels
    } cs[] = {{MINT_TYPE_Q4_0, -8, 7}, {MINT_TYPE_Q5_0, -16, 15}, {MINT_TYPE_Q6_K, -32, 31}};
    enum { N = 256 };
    float x[N], y[N], imp[N];
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        sm_state = 100 + c;
        for (int j = 0; j < N; j++) {
            int l =
                cs[c].lo + (int)(mt_splitmix64(&sm_state) % (uint64_t)(cs[c].hi - cs[c].lo + 1));
            if (j % 16 == 3) l = cs[c].lo; // every block (and Q6_K sub-block) reaches the bottom
            x[j] = 0.25f * (float)l;
            imp[j] = (float)(0.5 + mt_bell(&sm_state));
            if (imp[j] < 0) imp[j] = -imp[j];
        }
        unsigned char q[N * 2];
        cr_assert(mint_quantize_rows_ref(cs[c].t, x, q, 1, N, imp));
        ref_table()->t[cs[c].t].to_float(q, y, N);
        for (int j = 0; j < N; j++)
            cr_expect_eq(y[j], x[j], "%s element %d: %g, not %g", mint_type_name(cs[c].t), j, y[j],
                         x[j]);
    }
}
