// test_quant_iq3.c - IQ3_XXS and IQ3_S, the 3-bit lattice types (quant/quant_iq3_ref.c,
// quant/iq3.h, docs/formats.md 2.7): the grids and sign rule, element maps on hand-made blocks,
// the quantizers' bytes against ggml's on fixed inputs (tests/reference/quant_iq3.json, hashes
// made by ggml_quantize_chunk; tests/reference/README.md says how), ggml's zero-sub-block quirk,
// the round-trip error on Gaussian rows, the importance lowering the error it weighs, and
// mint_quantize_rows_ref's switch. The byte identity was also checked outside the tree on tens of
// thousands of rows against libggml-base (the commit that added the types says how many);
// test_quant.c / test_kernels.c cover the dot products.
#include "helpers/helpers.h"
#include "helpers/inputs.h"
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/iq3.h"
#include "quant/kernels.h"
#include "quant/ref.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const mint_type iq3_types[2] = {MINT_TYPE_IQ3_XXS, MINT_TYPE_IQ3_S};

// quant_imatrix.json's input generator (its "inputs" text): splitmix64 and a rough bell curve.
static uint64_t sm_state;

static int jint(json_object *o, const char *key) {
    return json_object_get_int(mt_jget(o, key));
}

// The grids: distinct points, ascending in their packed levels, every coordinate one of the
// type's 8 levels; the quantizer's maps and neighbour lists come out the reserved sizes.
Test(iq3, grids) {
    static const int xxs_levels[8] = {4, 12, 20, 28, 36, 44, 52, 62};
    const uint32_t *grids[2] = {mint_iq3xxs_grid, mint_iq3s_grid};
    const int sizes[2] = {256, 512};
    for (int t = 0; t < 2; t++) {
        int prev = -1;
        for (int k = 0; k < sizes[t]; k++) {
            int packed = 0;
            for (int j = 0; j < 4; j++) {
                const int c = mint_iq3_coord(grids[t][k], j);
                int l = -1;
                for (int m = 0; m < 8; m++)
                    if (c == (t == 0 ? xxs_levels[m] : 2 * m + 1)) l = m;
                cr_assert_geq(l, 0, "grid %d point %d coordinate %d: %d", t, k, j, c);
                packed |= l << 3 * j;
            }
            cr_assert_gt(packed, prev, "grid %d point %d", t, k);
            prev = packed;
        }
    }
    cr_assert(mint_iq3_lattices_ok());
}

// IQ3_XXS's sign groups: bit 7 makes the count of set bits even (ggml's ksigns_iq2xs).
Test(iq3, xxs_sign_parity) {
    cr_expect_eq(mint_iq3xxs_signs(0), 0);
    cr_expect_eq(mint_iq3xxs_signs(1), 129);
    cr_expect_eq(mint_iq3xxs_signs(3), 3);
    cr_expect_eq(mint_iq3xxs_signs(127), 255);
    for (unsigned s = 0; s < 128; s++) {
        const unsigned v = mint_iq3xxs_signs(s);
        cr_expect_eq(v & 127, s);
        cr_expect_eq(__builtin_popcount(v) % 2, 0, "%u", s);
    }
}

// IQ3_XXS: sub-block ib's indices are qs[8ib..8ib+7], its word at qs[64 + 4ib]: sign group g
// (8 elements) in bits 7g.., the scale in bits 28..31; y = d * (0.5 + ls) * 0.5 * grid * sign.
Test(iq3, xxs_element_map) {
    mint_block_iq3_xxs b;
    memset(&b, 0, sizeof b);
    b.d = mint_f32_to_f16(0.5f);
    for (int i = 0; i < 64; i++) b.qs[i] = (uint8_t)(i * 37 + 11);
    for (int ib = 0; ib < 8; ib++) {
        const uint32_t word = (uint32_t)(ib * 0x1234567 + 0x89ABC) & 0x0FFFFFFF;
        const uint32_t aux = word | (uint32_t)(ib * 2 + 1) << 28;
        for (int k = 0; k < 4; k++) b.qs[64 + 4 * ib + k] = (uint8_t)(aux >> 8 * k);
    }
    float y[256];
    dequantize_row_iq3_xxs_ref(&b, y, 256);
    for (int e = 0; e < 256; e++) {
        const int ib = e / 32, g = e % 32 / 4, j = e % 4;
        const uint32_t aux = b.qs[64 + 4 * ib] | b.qs[65 + 4 * ib] << 8 | b.qs[66 + 4 * ib] << 16 |
                             (uint32_t)b.qs[67 + 4 * ib] << 24;
        const unsigned s7 = aux >> 7 * (e % 32 / 8) & 127;
        const int bit = e % 8;
        const int neg = bit < 7 ? s7 >> bit & 1 : __builtin_popcount(s7) & 1;
        const float mag = (float)(mint_iq3xxs_grid[b.qs[8 * ib + g]] >> 8 * j & 0xFF);
        const float want = 0.5f * (0.5f + (float)(aux >> 28)) * 0.5f * mag;
        cr_expect_eq(y[e], neg ? -want : want, "element %d", e);
    }
}

// IQ3_S: group g of the super-block (4 elements) has index qs[g] | bit g%8 of qh[g/8] << 8,
// element e's sign is bit e%8 of signs[e/8], sub-block ib's scale the nibble ib%2 of
// scales[ib/2]: y = d * (1 + 2 ls) * grid * sign.
Test(iq3, s_element_map) {
    mint_block_iq3_s b;
    b.d = mint_f32_to_f16(0.25f);
    for (int i = 0; i < 64; i++) b.qs[i] = (uint8_t)(i * 53 + 7);
    for (int i = 0; i < 8; i++) b.qh[i] = (uint8_t)(0xA5 ^ i * 29);
    for (int i = 0; i < 32; i++) b.signs[i] = (uint8_t)(i * 71 + 3);
    for (int i = 0; i < 4; i++) b.scales[i] = (uint8_t)(i * 0x37 + 0x1F);
    float y[256];
    dequantize_row_iq3_s_ref(&b, y, 256);
    for (int e = 0; e < 256; e++) {
        const int g = e / 4, ib = e / 32;
        const int index = b.qs[g] | (b.qh[g / 8] >> (g % 8) & 1) << 8;
        const int ls = b.scales[ib / 2] >> 4 * (ib % 2) & 0xF;
        const float mag = (float)(mint_iq3s_grid[index] >> 8 * (e % 4) & 0xFF);
        const float want = 0.25f * (float)(1 + 2 * ls) * mag;
        cr_expect_eq(y[e], b.signs[e / 8] >> (e % 8) & 1 ? -want : want, "element %d", e);
    }
}

// An all-zero super-block is all zero bytes (d = +0) in both types.
Test(iq3, zeros) {
    float x[256] = {0};
    unsigned char q[110], zero[110] = {0};
    memset(q, 0xAA, sizeof q);
    quantize_row_iq3_xxs_ref(x, q, 256);
    cr_expect_eq(memcmp(q, zero, 98), 0);
    memset(q, 0xAA, sizeof q);
    quantize_row_iq3_s_ref(x, q, 256);
    cr_expect_eq(memcmp(q, zero, 110), 0);
}

// ggml's IQ3_S quirk: an all-zero sub-block does not advance where qs and signs are written, so
// sub-block 3's land in sub-block 2's place when sub-block 2 is zero, and the last slot stays 0;
// qh and the scales stay in place.
Test(iq3, s_zero_subblock_shifts_qs_and_signs) {
    float x[256];
    sm_state = 77;
    for (int i = 0; i < 256; i++) x[i] = i / 32 == 2 ? 0.0f : (float)mt_bell(&sm_state);
    mint_block_iq3_s with, alone;
    quantize_row_iq3_s_ref(x, &with, 256);
    for (int i = 64; i < 96; i++) x[i] = 0.5f; // a non-zero sub-block 2, the others unchanged
    quantize_row_iq3_s_ref(x, &alone, 256);
    cr_expect_eq(memcmp(with.qs + 16, alone.qs + 24, 40), 0);
    cr_expect_eq(memcmp(with.signs + 8, alone.signs + 12, 20), 0);
    for (int i = 56; i < 64; i++) cr_expect_eq(with.qs[i], 0);
    for (int i = 28; i < 32; i++) cr_expect_eq(with.signs[i], 0);
    cr_expect_eq(with.qh[2], 0);
    cr_expect_eq(with.scales[1] & 0xF, 0);
}

// Every case of the reference, both types: mint's output hashes to what ggml's hashed to.
Test(iq3, ggml_bytes) {
    json_object *ref = mt_json_source("tests/reference/quant_iq3.json");
    json_object *cases = mt_jget(ref, "cases");
    int checked = 0;
    for (size_t c = 0; c < json_object_array_length(cases); c++) {
        json_object *k = json_object_array_get_idx(cases, c);
        const char *name = json_object_get_string(mt_jget(k, "name"));
        const int nrow = jint(k, "nrow"), n = jint(k, "n"), zero_row = jint(k, "zero_row");
        const int outlier_every = jint(k, "outlier_every");
        const int zero_cols_every = jint(k, "zero_cols_every");
        const int zero_sub = jint(k, "zero_subblock_every");
        const double scale = json_object_get_double(mt_jget(k, "scale"));
        const bool use_imatrix = json_object_get_boolean(mt_jget(k, "imatrix"));
        const size_t nx = (size_t)nrow * (size_t)n;
        float *x = malloc(nx * sizeof *x), *w = malloc((size_t)n * sizeof *w);
        cr_assert(x && w);
        sm_state = (uint64_t)json_object_get_int64(mt_jget(k, "seed"));
        for (size_t i = 0; i < nx; i++) x[i] = (float)(mt_bell(&sm_state) * scale);
        for (int j = 0; j < n; j++) {
            const double g = mt_bell(&sm_state);
            w[j] = (float)(g * g);
        }
        if (zero_row >= 0) memset(x + (size_t)zero_row * (size_t)n, 0, (size_t)n * sizeof *x);
        if (outlier_every > 0)
            for (size_t i = 0; i < nx; i += (size_t)outlier_every) x[i] = x[i] * 1e4f;
        if (zero_cols_every > 0)
            for (int j = 0; j < n; j += zero_cols_every) w[j] = 0;
        if (zero_sub > 0)
            for (size_t i = 0; i < nx; i++)
                if (i / 32 % (size_t)zero_sub == 1) x[i] = 0;
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
    cr_assert_eq(checked, 18); // 9 cases x 2 types
}

// Relative RMS round-trip error of one row (weighted by imatrix when weigh).
static double rt_rel_rms(mint_type t, const float *imatrix, const float *x, int64_t n, bool weigh) {
    uint8_t *q = malloc((size_t)mint_row_size(t, n));
    float *y = malloc((size_t)n * sizeof *y);
    cr_assert(mint_quantize_rows_ref(t, x, q, 1, n, imatrix));
    mint_kernels_for(MINT_ISA_REF)->t[t].to_float(q, y, n);
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        const double w = weigh ? imatrix[i] : 1.0, d = (double)y[i] - x[i];
        num += w * d * d;
        den += w * (double)x[i] * x[i];
    }
    free(q), free(y);
    return sqrt(num / den);
}

// Round trip on bell-curve rows: RMS error over RMS value. Measured 2026-12-07 on 32 rows of
// 2048 (worst): IQ3_XXS 0.2200, IQ3_S 0.1660; budget 0.24.
Test(iq3, round_trip_error_on_bell_rows) {
    enum { N = 2048, ROWS = 32 };
    float *x = malloc(N * sizeof *x);
    for (int ti = 0; ti < 2; ti++) {
        double worst = 0;
        for (int r = 0; r < ROWS; r++) {
            sm_state = 1000 + (uint64_t)r;
            for (int i = 0; i < N; i++) x[i] = (float)mt_bell(&sm_state);
            const double e = rt_rel_rms(iq3_types[ti], NULL, x, N, false);
            if (e > worst) worst = e;
        }
        cr_log_info("%s: relative RMS error worst %.4f", mint_type_name(iq3_types[ti]), worst);
        cr_expect_leq(worst, 0.24, "%s: %g", mint_type_name(iq3_types[ti]), worst);
    }
    free(x);
}

// With an importance the search lowers the error it weighs: summed over rows, below the
// weighted error of the unweighted quantization.
Test(iq3, an_importance_lowers_the_error_it_weighs) {
    enum { N = 1024, ROWS = 16 };
    float *x = malloc(N * sizeof *x), *imp = malloc(N * sizeof *imp);
    float *y = malloc(N * sizeof *y);
    for (int ti = 0; ti < 2; ti++) {
        const mint_type t = iq3_types[ti];
        uint8_t *q = malloc((size_t)mint_row_size(t, N));
        double with = 0, without = 0;
        for (int r = 0; r < ROWS; r++) {
            sm_state = 7000 + (uint64_t)r;
            for (int i = 0; i < N; i++) x[i] = (float)mt_bell(&sm_state);
            for (int i = 0; i < N; i++) {
                const double g = mt_bell(&sm_state);
                imp[i] = (float)(g * g) * (i % 8 == 0 ? 50.0f : 1.0f);
            }
            with += rt_rel_rms(t, imp, x, N, true);
            mint_quantizer_ref(t)(x, q, N);
            mint_kernels_for(MINT_ISA_REF)->t[t].to_float(q, y, N);
            double num = 0, den = 0;
            for (int i = 0; i < N; i++) {
                num += imp[i] * ((double)y[i] - x[i]) * ((double)y[i] - x[i]);
                den += imp[i] * (double)x[i] * x[i];
            }
            without += sqrt(num / den);
        }
        cr_log_info("%s: weighted error with the importance %.4f, without %.4f", mint_type_name(t),
                    with / ROWS, without / ROWS);
        cr_expect_lt(with, 0.95 * without, "%s: %g vs %g", mint_type_name(t), with, without);
        free(q);
    }
    free(x), free(imp), free(y);
}

// mint_quantize_rows_ref: without an importance the row quantizer's bytes row by row, with one
// the weighted search's (which differ).
Test(iq3, quantize_rows_is_the_row_quantizer) {
    enum { N = 512, ROWS = 3 };
    float *x = malloc(ROWS * N * sizeof *x), imp[N];
    sm_state = 42;
    for (int i = 0; i < ROWS * N; i++) x[i] = (float)mt_bell(&sm_state);
    for (int i = 0; i < N; i++) imp[i] = 0.5f + (float)(i % 13);
    for (int ti = 0; ti < 2; ti++) {
        const mint_type t = iq3_types[ti];
        const size_t row = (size_t)mint_row_size(t, N);
        uint8_t *a = malloc(ROWS * row), *b = malloc(ROWS * row);
        // Neither quantizer needs an importance (llama-quantize still refuses IQ3_XXS tensors
        // without one: runtime/filetools/ftype.c's mint_mix_requires_imatrix, test_mix_iq3).
        cr_assert(!mint_quantize_needs_imatrix(t));
        cr_assert(mint_quantize_rows_ref(t, x, a, ROWS, N, NULL));
        for (int r = 0; r < ROWS; r++) mint_quantizer_ref(t)(x + r * N, b + r * row, N);
        cr_expect_eq(memcmp(a, b, ROWS * row), 0, "%s without importance", mint_type_name(t));
        cr_assert(mint_quantize_rows_ref(t, x, a, ROWS, N, imp));
        for (int r = 0; r < ROWS; r++) {
            if (t == MINT_TYPE_IQ3_XXS)
                quantize_iq3_xxs_ref(x + r * N, b + r * row, N, imp);
            else
                quantize_iq3_s_ref(x + r * N, b + r * row, N, imp);
        }
        cr_expect_eq(memcmp(a, b, ROWS * row), 0, "%s with importance", mint_type_name(t));
        for (int r = 0; r < ROWS; r++) mint_quantizer_ref(t)(x + r * N, b + r * row, N);
        cr_expect_neq(memcmp(a, b, ROWS * row), 0, "%s: importance ignored", mint_type_name(t));
        free(a), free(b);
    }
    free(x);
}
