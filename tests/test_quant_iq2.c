// test_quant_iq2.c - IQ2_XXS, IQ2_XS and IQ2_S, the 2-bit grid i-quants
// (quant/quant_iq2_ref.c, docs/formats.md 2.8): the grids and sign bytes, the nearest-point
// search data (quant/iq_grid.h), element maps on hand-made blocks, zeros, the quantizers' bytes
// against llama.cpp's ggml_quantize_chunk on fixed inputs (tests/reference/quant_iq2.json,
// hashes made by ggml; tests/reference/README.md says how), the round-trip error, and
// mint_quantize_rows_ref's switch and imatrix rule. The byte identity was also checked outside
// the tree on tens of thousands of rows; test_kernels.c covers the dot products.
#include "helpers/helpers.h"
#include "helpers/inputs.h"
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/iq2_tables.h"
#include "quant/iq_grid.h"
#include "quant/kernels.h"
#include "quant/ref.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const mint_type types[3] = {MINT_TYPE_IQ2_XXS, MINT_TYPE_IQ2_XS, MINT_TYPE_IQ2_S};

// The level index (0..2) of a grid byte, -1 for any other byte.
static int level_of(int b) {
    return b == 8 ? 0 : b == 25 ? 1 : b == 43 ? 2 : -1;
}

static int key_of(uint64_t p) {
    int key = 0;
    for (int i = 0; i < 8; i++) key |= level_of((int)(p >> 8 * i & 0xFF)) << 2 * i;
    return key;
}

// Every byte of every point is a level, points are distinct and listed by increasing key, and
// the first is all-8 (the zero group's point); the sign bytes are i plus bit 7 = odd parity.
Test(iq2, grids_and_signs) {
    const uint64_t *grids[3] = {mint_iq2xxs_grid, mint_iq2xs_grid, mint_iq2s_grid};
    const int sizes[3] = {256, 512, 1024};
    for (int t = 0; t < 3; t++) {
        cr_expect_eq(grids[t][0], 0x0808080808080808ull);
        int prev = -1;
        for (int k = 0; k < sizes[t]; k++) {
            for (int i = 0; i < 8; i++)
                cr_assert_geq(level_of((int)(grids[t][k] >> 8 * i & 0xFF)), 0, "grid %d point %d",
                              t, k);
            const int key = key_of(grids[t][k]);
            cr_assert_gt(key, prev, "grid %d point %d out of order", t, k);
            prev = key;
        }
    }
    // Spot values of ggml's tables (ggml-common.h): first and last points, one in the middle.
    cr_expect_eq(mint_iq2xxs_grid[255], 0x2b2b2b1908081908ull);
    cr_expect_eq(mint_iq2xs_grid[511], 0x2b2b2b2b2b2b2b2bull);
    cr_expect_eq(mint_iq2s_grid[1023], 0x2b2b2b2b2b2b2b2bull);
    for (int i = 0; i < 128; i++) {
        int ones = 0;
        for (int b = 0; b < 7; b++) ones += i >> b & 1;
        cr_expect_eq(mint_iq2_ksigns[i], i | (ones % 2) << 7, "sign byte %d", i);
    }
}

// The search data: a grid point's key maps to its index; an off-grid key's list is non-empty,
// its points are at non-decreasing distance and spread over exactly nwant distances (or fewer
// when the grid has fewer), equal distances by increasing index.
Test(iq2, grid_search_data) {
    const uint64_t *grids[3] = {mint_iq2xxs_grid, mint_iq2xs_grid, mint_iq2s_grid};
    const mint_iq_grid_kind kinds[3] = {MINT_IQ_GRID_IQ2_XXS, MINT_IQ_GRID_IQ2_XS,
                                        MINT_IQ_GRID_IQ2_S};
    const int nwant[3] = {2, 2, 1};
    for (int t = 0; t < 3; t++) {
        const mint_iq_grid *g = mint_iq_grid_get(kinds[t], grids[t]);
        cr_assert_not_null(g);
        cr_expect_eq(mint_iq_grid_get(kinds[t], grids[t]), g, "built once");
        for (int k = 0; k < g->n_points; k++) cr_assert_eq(g->map[key_of(grids[t][k])], k);
        long off = 0;
        for (int key = 0; key < MINT_IQ_GRID_KEYS; key++) {
            if (g->map[key] >= 0) continue;
            off++;
            const uint16_t *nb = g->neighbours - g->map[key] - 1;
            cr_assert_gt(nb[0], 0);
            int ndist = 0, prev_d = -1, prev_j = -1;
            for (int j = 1; j <= nb[0]; j++) {
                int d = 0;
                for (int i = 0; i < 8; i++) {
                    const int c =
                        (int8_t)(g->points[nb[j]] >> 8 * i) - (2 * ((key >> 2 * i) & 3) + 1);
                    d += c * c;
                }
                cr_assert_geq(d, prev_d);
                if (d > prev_d)
                    ndist++;
                else
                    cr_assert_gt(nb[j], prev_j);
                prev_d = d;
                prev_j = nb[j];
            }
            cr_assert_eq(ndist, nwant[t], "key %d", key);
        }
        cr_expect_eq(off, MINT_IQ_GRID_KEYS - g->n_points);
    }
    cr_expect_null(mint_iq_grid_get(MINT_IQ_GRID_KIND_COUNT, mint_iq2s_grid));
}

// IQ2_XXS: per 32 elements two words, the first the 4 grid indices (byte l), the second the 4
// 7-bit sign fields and ls on top; y = d * (0.5 + ls) / 4 * grid byte * sign.
Test(iq2, xxs_element_map) {
    mint_block_iq2_xxs b;
    memset(&b, 0, sizeof b);
    b.d = mint_f32_to_f16(0.5f);
    for (int ib = 0; ib < 8; ib++) {
        const uint32_t idx = (uint32_t)(ib * 37 + 1) * 0x01030507u;
        const uint32_t sg = (uint32_t)(ib * 0x1234567) & 0x0FFFFFFF;
        const uint32_t w2 = sg | (uint32_t)(ib * 2 + 1) << 28;
        b.qs[4 * ib] = (uint16_t)idx, b.qs[4 * ib + 1] = (uint16_t)(idx >> 16);
        b.qs[4 * ib + 2] = (uint16_t)w2, b.qs[4 * ib + 3] = (uint16_t)(w2 >> 16);
    }
    float y[256];
    dequantize_row_iq2_xxs_ref(&b, y, 256);
    for (int e = 0; e < 256; e++) {
        const int ib = e / 32, l = e / 8 % 4, j = e % 8;
        const uint32_t idx = (uint32_t)(ib * 37 + 1) * 0x01030507u;
        const uint32_t sg = (uint32_t)(ib * 0x1234567) & 0x0FFFFFFF;
        const int s7 = sg >> 7 * l & 127;
        int neg = s7 >> j & 1;
        if (j == 7) neg = __builtin_popcount((unsigned)s7) & 1;
        const int v = (int)(mint_iq2xxs_grid[idx >> 8 * l & 0xFF] >> 8 * j & 0xFF);
        const float db = 0.5f * (0.5f + (float)(ib * 2 + 1)) * 0.25f;
        cr_expect_eq(y[e], db * (float)v * (neg ? -1.0f : 1.0f), "element %d", e);
    }
}

// IQ2_XS: qs[g] = index | 7 signs << 9; IQ2_S: index low byte qs[g], high bits qh[g/4] at
// 2(g%4), signs qs[32+g]; both: ls of elements 32ib..+15 in scales[ib]'s low nibble, of the
// next 16 in its high nibble.
Test(iq2, xs_and_s_element_maps) {
    mint_block_iq2_xs bx;
    mint_block_iq2_s bs;
    memset(&bx, 0, sizeof bx);
    memset(&bs, 0, sizeof bs);
    bx.d = bs.d = mint_f32_to_f16(0.25f);
    for (int g = 0; g < 32; g++) {
        const int ix = (g * 61 + 3) % 512, is = (g * 97 + 5) % 1024, s = (g * 29 + 7) % 256;
        bx.qs[g] = (uint16_t)(ix | (s & 127) << 9);
        bs.qs[g] = (uint8_t)(is & 255);
        bs.qh[g / 4] |= (uint8_t)((is >> 8) << 2 * (g % 4));
        bs.qs[32 + g] = (uint8_t)s;
    }
    for (int ib = 0; ib < 8; ib++) bx.scales[ib] = bs.scales[ib] = (uint8_t)(ib * 0x1F + 0x30);
    float yx[256], ys[256];
    dequantize_row_iq2_xs_ref(&bx, yx, 256);
    dequantize_row_iq2_s_ref(&bs, ys, 256);
    for (int e = 0; e < 256; e++) {
        const int g = e / 8, j = e % 8, ib = e / 32;
        const int ix = (g * 61 + 3) % 512, is = (g * 97 + 5) % 1024, s = (g * 29 + 7) % 256;
        const int ls = bx.scales[ib] >> 4 * (e / 16 % 2) & 0xF;
        const float db = 0.25f * (0.5f + (float)ls) * 0.25f;
        const int negx = mint_iq2_ksigns[s & 127] >> j & 1, negs = s >> j & 1;
        const int vx = (int)(mint_iq2xs_grid[ix] >> 8 * j & 0xFF);
        const int vs = (int)(mint_iq2s_grid[is] >> 8 * j & 0xFF);
        cr_expect_eq(yx[e], db * (float)vx * (negx ? -1.0f : 1.0f), "xs element %d", e);
        cr_expect_eq(ys[e], db * (float)vs * (negs ? -1.0f : 1.0f), "s element %d", e);
    }
}

// Zeros: d = 0 and every other byte 0 (the all-8 point, index 0, no signs, ls 0).
Test(iq2, zeros) {
    float x[512] = {0};
    for (int t = 0; t < 3; t++) {
        uint8_t q[2 * 82];
        memset(q, 0xA5, sizeof q);
        const size_t sz = (size_t)mint_row_size(types[t], 512);
        cr_assert(mint_quantize_rows_ref(types[t], x, q, 1, 512, NULL));
        for (size_t i = 0; i < sz; i++)
            cr_expect_eq(q[i], 0, "%s byte %zu", mint_type_name(types[t]), i);
    }
}

// The reference's input generator (quant_iq2.json's "inputs", as quant_imatrix.json's).
static uint64_t sm_state;
static int jint(json_object *o, const char *key) {
    return json_object_get_int(mt_jget(o, key));
}

// Every case, every type: mint's bytes hash to what ggml's did.
Test(iq2, ggml_bytes) {
    json_object *ref = mt_json_source("tests/reference/quant_iq2.json");
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
            const double g = mt_bell(&sm_state);
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
    cr_assert_eq(checked, 21); // 7 cases x 3 types
}

// Deterministic N(0, 1) samples (xorshift64* + Box-Muller).
static uint64_t rng_state;
static double rng_uniform(void) { // (0, 1)
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return ((double)((rng_state * 0x2545F4914F6CDD1Dull) >> 11) + 0.5) * 0x1p-53;
}
static void fill_gaussian(float *x, int64_t n, uint64_t seed) {
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)(sqrt(-2.0 * log(rng_uniform())) * cos(6.283185307179586 * rng_uniform()));
}

// Round trip on Gaussian rows without an importance (IQ2_XXS / IQ2_XS: a unit one), relative RMS
// error. Measured 2026-12-07 on 16 rows of 4096 (worst): IQ2_XXS 0.3505, IQ2_XS 0.3052, IQ2_S
// 0.2686 (2.06, 2.31, 2.56 bits per weight).
Test(iq2, round_trip_error_on_gaussian_rows) {
    enum { N = 4096, ROWS = 16 };
    static const double budget[3] = {0.37, 0.32, 0.29};
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    uint8_t *q = malloc((size_t)mint_row_size(MINT_TYPE_IQ2_S, N));
    for (int t = 0; t < 3; t++) {
        double worst = 0;
        for (int r = 0; r < ROWS; r++) {
            fill_gaussian(x, N, 1000 + (uint64_t)r);
            cr_assert(mint_quantize_rows_ref(types[t], x, q, 1, N, NULL));
            mint_kernels_for(MINT_ISA_REF)->t[types[t]].to_float(q, y, N);
            double num = 0, den = 0;
            for (int i = 0; i < N; i++) {
                num += ((double)y[i] - x[i]) * ((double)y[i] - x[i]);
                den += (double)x[i] * x[i];
            }
            if (sqrt(num / den) > worst) worst = sqrt(num / den);
        }
        cr_log_info("%s: worst relative RMS error %.4f", mint_type_name(types[t]), worst);
        cr_expect_leq(worst, budget[t], "%s: %g", mint_type_name(types[t]), worst);
    }
    free(x), free(y), free(q);
}

// mint_quantize_rows_ref: without an importance, the row quantizer's bytes (IQ2_XXS / IQ2_XS:
// the search with a unit importance); with one, the weighted search's. llama-quantize refuses
// IQ2_XXS and IQ2_XS without an importance (ggml_quantize_requires_imatrix), not IQ2_S.
Test(iq2, quantize_rows_and_the_imatrix_rule) {
    enum { N = 512, ROWS = 3 };
    float *x = malloc(ROWS * N * sizeof *x), *imp = malloc(N * sizeof *imp),
          *ones = malloc(N * sizeof *ones);
    fill_gaussian(x, ROWS * N, 42);
    for (int i = 0; i < N; i++) imp[i] = 0.5f + (float)(i % 13), ones[i] = 1.0f;
    void (*weighted[3])(const float *, void *, int64_t, const float *) = {
        quantize_iq2_xxs_ref, quantize_iq2_xs_ref, quantize_iq2_s_ref};
    for (int t = 0; t < 3; t++) {
        const size_t row = (size_t)mint_row_size(types[t], N);
        uint8_t *a = malloc(ROWS * row), *b = malloc(ROWS * row);
        cr_expect_eq(mint_quantize_needs_imatrix(types[t]), t < 2);
        cr_assert(mint_quantize_rows_ref(types[t], x, a, ROWS, N, NULL));
        for (int r = 0; r < ROWS; r++) mint_quantizer_ref(types[t])(x + r * N, b + r * row, N);
        cr_expect_eq(memcmp(a, b, ROWS * row), 0, "%s without", mint_type_name(types[t]));
        if (t < 2) {
            for (int r = 0; r < ROWS; r++) weighted[t](x + r * N, b + r * row, N, ones);
            cr_expect_eq(memcmp(a, b, ROWS * row), 0, "%s: NULL is all 1",
                         mint_type_name(types[t]));
        }
        cr_assert(mint_quantize_rows_ref(types[t], x, a, ROWS, N, imp));
        for (int r = 0; r < ROWS; r++) weighted[t](x + r * N, b + r * row, N, imp);
        cr_expect_eq(memcmp(a, b, ROWS * row), 0, "%s with", mint_type_name(types[t]));
        for (int r = 0; r < ROWS; r++) mint_quantizer_ref(types[t])(x + r * N, b + r * row, N);
        cr_expect_neq(memcmp(a, b, ROWS * row), 0, "%s: importance ignored",
                      mint_type_name(types[t]));
        free(a), free(b);
    }
    free(x), free(imp), free(ones);
}
