// test_quant_q1q2.c - Q1_0 and Q2_0 (ggml types 41 and 42): the layouts, ggml's bytes on fixed
// inputs with and without an importance (tests/reference/quant_q1q2.json, hashes made by ggml;
// tests/reference/README.md says how), blocks whose answer is known, the dequantizers, the dot
// with Q8_0 against a double-precision twin, and NVFP4 (40) still unknown between them.
#include "helpers/helpers.h"
#include "helpers/inputs.h"
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/kernels.h"
#include "quant/ref.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The reference's input generator (its "inputs" text, quant_imatrix.json's): splitmix64 and a
// sum of four uniforms in [0, 1) minus 2.
static uint64_t sm_state;

static const mint_kernels *ref_table(void) {
    const mint_kernels *k = mint_kernels_for(MINT_ISA_REF);
    cr_assert_not_null(k);
    return k;
}

static int jint(json_object *o, const char *key) {
    return json_object_get_int(mt_jget(o, key));
}

Test(q1q2, type_table_and_layouts) {
    const mint_type_traits *q1 = mint_type_get(MINT_TYPE_Q1_0), *q2 = mint_type_get(MINT_TYPE_Q2_0);
    cr_assert(q1 && q2);
    cr_expect_str_eq(q1->name, "Q1_0");
    cr_expect_str_eq(q2->name, "Q2_0");
    cr_expect(q1->blck == 128 && q1->size == sizeof(mint_block_q1_0) && q1->computable);
    cr_expect(q2->blck == 64 && q2->size == sizeof(mint_block_q2_0) && q2->computable);
    cr_expect_eq(mint_type_from_name("q1_0"), MINT_TYPE_Q1_0);
    cr_expect_eq(mint_type_from_name("Q2_0"), MINT_TYPE_Q2_0);
    // 40 (NVFP4) sits between known codes and stays unknown, as do the codes past Q2_0.
    cr_expect_null(mint_type_get(40));
    cr_expect_null(mint_type_get(43));
    cr_expect_eq(mint_row_size(40, 64), 0);
    cr_expect_eq(mint_row_size(MINT_TYPE_Q1_0, 256), 36);
    cr_expect_eq(mint_row_size(MINT_TYPE_Q1_0, 192), 0); // not a whole block
    cr_expect_eq(mint_row_size(MINT_TYPE_Q2_0, 192), 54);
    const mint_kernels *k = ref_table();
    cr_expect_eq(k->t[MINT_TYPE_Q1_0].vec_dot_type, MINT_TYPE_Q8_0); // ggml-cpu.c's type traits
    cr_expect_eq(k->t[MINT_TYPE_Q2_0].vec_dot_type, MINT_TYPE_Q8_0);
}

// Every case of the reference, both types: mint's output hashes to what ggml's hashed to.
Test(q1q2, ggml_bytes) {
    json_object *ref = mt_json_source("tests/reference/quant_q1q2.json");
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
            cr_assert(t == MINT_TYPE_Q1_0 || t == MINT_TYPE_Q2_0, "%s", tname);
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
    cr_assert_eq(checked, 14); // 7 cases x 2 types
}

// Q1_0: the scale is the mean |x| and each bit the sign (x >= 0, so -0 counts as positive).
Test(q1q2, q1_0_known_block) {
    float x[128], y[128];
    for (int e = 0; e < 128; e++) x[e] = (e % 3 == 0 ? -1.0f : 3.0f) * (e % 2 ? 1.0f : 0.5f);
    x[5] = -0.0f;
    double mean = 0;
    for (int e = 0; e < 128; e++) mean += fabs(x[e]);
    mean /= 128;
    mint_block_q1_0 b;
    quantize_row_q1_0_ref(x, &b, 128);
    cr_expect_eq(mint_f16_to_f32(b.d), mint_f16_to_f32(mint_f32_to_f16((float)mean)));
    for (int e = 0; e < 128; e++)
        cr_expect_eq((b.qs[e / 8] >> (e % 8)) & 1, x[e] >= 0.0f, "bit %d", e);
    ref_table()->t[MINT_TYPE_Q1_0].to_float(&b, y, 128);
    const float d = mint_f16_to_f32(b.d);
    for (int e = 0; e < 128; e++) cr_expect_eq(y[e], x[e] >= 0.0f ? d : -d, "element %d", e);
}

// Q2_0: d is the largest |x|; x/d rounds half away from zero to -1, 0, 1 (code q - 1 in bits
// 2 (e % 4) of byte e / 4); a block too small for 1/d (inf) writes code 0, as ggml on x86.
Test(q1q2, q2_0_known_block) {
    float x[64] = {2.0f, 1.0f, -1.0f, 0.98f, -2.0f, 0.0f, -0.0f, 0.5f};
    mint_block_q2_0 b;
    quantize_row_q2_0_ref(x, &b, 64);
    cr_expect_eq(mint_f16_to_f32(b.d), 2.0f);
    // codes: 2 -> 2, 1 (0.5 d) -> 2, -1 -> 0, 0.98 -> 1 | -2 -> 0, 0 -> 1, -0 -> 1, 0.5 -> 1
    cr_expect_eq(b.qs[0], 2 | 2 << 2 | 0 << 4 | 1 << 6);
    cr_expect_eq(b.qs[1], 0 | 1 << 2 | 1 << 4 | 1 << 6);
    for (int j = 2; j < 16; j++) cr_expect_eq(b.qs[j], 0x55, "byte %d (zeros are code 1)", j);
    float y[64];
    ref_table()->t[MINT_TYPE_Q2_0].to_float(&b, y, 64);
    cr_expect(y[0] == 2.0f && y[1] == 2.0f && y[2] == -2.0f && y[3] == 0.0f && y[4] == -2.0f);
    b.qs[0] = 3; // code 3 (level 2), which no finite input writes, still decodes as 2 d
    ref_table()->t[MINT_TYPE_Q2_0].to_float(&b, y, 64);
    cr_expect_eq(y[0], 4.0f);
    float tiny[64];
    for (int e = 0; e < 64; e++) tiny[e] = e % 2 ? 1e-45f : -1e-45f; // 1 / 1e-45 is inf
    quantize_row_q2_0_ref(tiny, &b, 64);
    cr_expect_eq(b.d, 0);
    for (int j = 0; j < 16; j++) cr_expect_eq(b.qs[j], 0, "byte %d", j);
    float allzero[64] = {0};
    quantize_row_q2_0_ref(allzero, &b, 64);
    cr_expect_eq(b.d, 0);
    for (int j = 0; j < 16; j++) cr_expect_eq(b.qs[j], 0x55, "byte %d", j);
}

// The importance changes nothing (ggml's quantize_q1_0 / quantize_q2_0 do not read it).
Test(q1q2, importance_is_ignored) {
    enum { NROW = 3, N = 512 };
    float x[NROW * N], imp[N];
    sm_state = 11;
    for (int i = 0; i < NROW * N; i++) x[i] = (float)mt_bell(&sm_state);
    for (int j = 0; j < N; j++) imp[j] = (float)(j % 5);
    const mint_type ts[] = {MINT_TYPE_Q1_0, MINT_TYPE_Q2_0};
    for (int k = 0; k < 2; k++) {
        unsigned char a[NROW * N], b[NROW * N];
        const size_t sz = (size_t)mint_row_size(ts[k], N) * NROW;
        cr_assert(mint_quantize_rows_ref(ts[k], x, a, NROW, N, imp));
        cr_assert(mint_quantize_rows_ref(ts[k], x, b, NROW, N, NULL));
        cr_expect(memcmp(a, b, sz) == 0, "%s", mint_type_name(ts[k]));
    }
}

// The dot with Q8_0 against a double-precision twin over the dequantized rows.
Test(q1q2, dot_matches_double_twin) {
    enum { N = 1024 };
    const mint_kernels *k = ref_table();
    float x[N], a[N], wf[N], af[N];
    sm_state = 21;
    const mint_type ts[] = {MINT_TYPE_Q1_0, MINT_TYPE_Q2_0};
    for (int rep = 0; rep < 8; rep++)
        for (int ti = 0; ti < 2; ti++) {
            for (int i = 0; i < N; i++)
                x[i] = (float)mt_bell(&sm_state), a[i] = (float)(mt_bell(&sm_state) * 3);
            unsigned char wq[N], aq[N * 2];
            mint_quantizer_ref(ts[ti])(x, wq, N);
            k->t[MINT_TYPE_Q8_0].from_float(a, aq, N);
            k->t[ts[ti]].to_float(wq, wf, N);
            k->t[MINT_TYPE_Q8_0].to_float(aq, af, N);
            double want = 0, mag = 0;
            for (int i = 0; i < N; i++) want += (double)wf[i] * af[i], mag += fabs(wf[i] * af[i]);
            float got;
            k->t[ts[ti]].vec_dot(N, &got, wq, aq);
            cr_expect_leq(fabs(got - want), 1e-6 * mag, "%s: %.9g vs %.9g", mint_type_name(ts[ti]),
                          got, want);
        }
}
