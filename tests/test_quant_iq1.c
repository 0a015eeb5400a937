// test_quant_iq1.c - IQ1_S and IQ1_M, the lattice types (quant/quant_iq1_ref.c,
// quant/quant_iq1_search.c, docs/formats.md 2.9): the lattice against its packing, element maps
// on hand-made blocks, the dot products against a double-precision twin, the quantizers' bytes
// against ggml's on fixed inputs (tests/reference/quant_iq1.json, hashes made by
// ggml_quantize_chunk; tests/reference/README.md says how), the importance lowering the error it
// weighs, and which types need an importance. The quantizers were also checked outside the tree
// against libggml-base row by row; test_kernels.c covers the SIMD kernels.
#include "base/hash.h"
#include "helpers/helpers.h"
#include "helpers/inputs.h"
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/iq1.h"
#include "quant/kernels.h"
#include "quant/ref.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The reference's input generator (quant_iq1.json's "inputs", as test_quant_imatrix.c's).
static uint64_t sm_state;

static int jint(json_object *o, const char *key) {
    return json_object_get_int(mt_jget(o, key));
}

// Every point is 8 bytes in {-1, 0, 1}, all distinct, in ascending order of their packing
// sum (v + 1) << 2j (what the quantizer's map is built from); the first and last are ggml's.
Test(iq1, the_lattice_is_ordered_ternary) {
    int prev = -1;
    for (int k = 0; k < MINT_IQ1_NGRID; k++) {
        const int8_t *p = mint_iq1_point(k);
        int key = 0;
        for (int j = 0; j < 8; j++) {
            cr_assert(p[j] >= -1 && p[j] <= 1, "point %d", k);
            key |= (p[j] + 1) << 2 * j;
        }
        cr_assert_gt(key, prev, "point %d", k);
        prev = key;
    }
    cr_assert_eq(mint_iq1s_grid[0], 0xffffffffffffffffull);
    cr_assert_eq(mint_iq1s_grid[1], 0xffffffffffffff01ull);
    cr_assert_eq(mint_iq1s_grid[MINT_IQ1_NGRID - 1], 0x0101010101010101ull);
}

// IQ1_S: group g's index is qs[g] | 3 bits of qh[g / 4] at 3 * (g % 4); qh bits 12..14 the
// multiplier s (2s + 1), bit 15 the delta's sign.
Test(iq1, s_element_map) {
    mint_block_iq1_s b;
    memset(&b, 0, sizeof b);
    b.d = mint_f32_to_f16(0.5f);
    for (int g = 0; g < 32; g++) b.qs[g] = (uint8_t)(37 * g + 5);
    for (int ib = 0; ib < 8; ib++)
        b.qh[ib] = (uint16_t)((ib * 0x249 & 0xFFF) | (ib % 8) << 12 | (ib % 3 == 0) << 15);
    float y[256];
    dequantize_row_iq1_s_ref(&b, y, 256);
    for (int g = 0; g < 32; g++) {
        const int ib = g / 4, idx = b.qs[g] | ((b.qh[ib] >> 3 * (g % 4)) & 7) << 8;
        const double delta = ib % 3 == 0 ? -0.125 : 0.125, dl = 0.5 * (2 * (ib % 8) + 1);
        for (int j = 0; j < 8; j++) {
            const int8_t v = (int8_t)(mint_iq1s_grid[idx] >> 8 * j);
            cr_expect_eq(y[8 * g + j], (float)(dl * (v + delta)), "element %d", 8 * g + j);
        }
    }
}

// IQ1_M: qh byte k serves groups 2k (low nibble) and 2k + 1 (high): 3 index bits and a sign bit;
// the scales' word w holds the multipliers of halves 4w..4w+3 and nibble w of the f16.
Test(iq1, m_element_map) {
    mint_block_iq1_m b;
    memset(&b, 0, sizeof b);
    const uint16_t d = mint_f32_to_f16(0.25f);
    for (int g = 0; g < 32; g++) b.qs[g] = (uint8_t)(53 * g + 11);
    for (int k = 0; k < 16; k++) b.qh[k] = (uint8_t)(k * 29 + 3);
    static const int ms[16] = {0, 7, 3, 5, 1, 6, 2, 4, 7, 7, 0, 0, 3, 1, 5, 2};
    for (int w = 0; w < 4; w++) {
        unsigned word = (unsigned)(d >> 4 * w & 0xF) << 12;
        for (int i = 0; i < 4; i++) word |= (unsigned)ms[4 * w + i] << 3 * i;
        b.scales[2 * w] = (uint8_t)word;
        b.scales[2 * w + 1] = (uint8_t)(word >> 8);
    }
    cr_assert_eq(mint_iq1m_d(&b), d);
    float y[256];
    dequantize_row_iq1_m_ref(&b, y, 256);
    for (int g = 0; g < 32; g++) {
        const int nib = b.qh[g / 2] >> 4 * (g % 2) & 0xF, idx = b.qs[g] | (nib & 7) << 8;
        const double delta = nib & 8 ? -0.125 : 0.125, dl = 0.25 * (2 * ms[g / 2] + 1);
        for (int j = 0; j < 8; j++) {
            const int8_t v = (int8_t)(mint_iq1s_grid[idx] >> 8 * j);
            cr_expect_eq(y[8 * g + j], (float)(dl * (v + delta)), "element %d", 8 * g + j);
        }
    }
}

// The dot products equal the double-precision sum of dequantized weights times dequantized
// activations within f32 rounding (each super-block's value is exact before its two roundings).
Test(iq1, dot_matches_double_twin) {
    enum { N = 1024 };
    const mint_kernels *k = mint_kernels_for(MINT_ISA_REF);
    float *x = malloc(sizeof(float) * N), *wf = malloc(sizeof(float) * N),
          *af = malloc(sizeof(float) * N);
    unsigned char *wq = malloc(N), *aq = malloc(2 * N);
    const mint_type types[] = {MINT_TYPE_IQ1_S, MINT_TYPE_IQ1_M};
    for (int ti = 0; ti < 2; ti++)
        for (int trial = 0; trial < 8; trial++) {
            sm_state = (uint64_t)(100 * ti + trial);
            for (int i = 0; i < N; i++) x[i] = (float)mt_bell(&sm_state);
            mint_quantizer_ref(types[ti])(x, wq, N);
            k->t[types[ti]].to_float(wq, wf, N);
            for (int i = 0; i < N; i++) x[i] = (float)(mt_bell(&sm_state) * 3);
            k->t[MINT_TYPE_Q8_K].from_float(x, aq, N);
            k->t[MINT_TYPE_Q8_K].to_float(aq, af, N);
            double want = 0, mag = 0;
            for (int i = 0; i < N; i++) {
                want += (double)wf[i] * af[i];
                mag += fabs((double)wf[i] * af[i]);
            }
            float got;
            k->t[types[ti]].vec_dot(N, &got, wq, aq);
            cr_expect_leq(fabs(got - want), 1e-6 * mag, "%s trial %d: %.9g vs %.9g",
                          mint_type_name(types[ti]), trial, got, want);
        }
    free(x);
    free(wf);
    free(af);
    free(wq);
    free(aq);
}

// Every case of the reference: mint's bytes hash to what ggml's hashed to.
Test(iq1, ggml_bytes) {
    json_object *ref = mt_json_source("tests/reference/quant_iq1.json");
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
    cr_assert_eq(checked, 11); // 5 cases x 2 types, IQ1_M without an importance
}

// An all-zero row is all zero bytes but the lattice indices of point 0 (IQ1_S: d = 0; IQ1_M:
// scale 0), and dequantizes to zeros.
Test(iq1, zero_rows) {
    float x[256] = {0}, imp[256], y[256];
    for (int i = 0; i < 256; i++) imp[i] = 1.0f;
    unsigned char q[64];
    const mint_type types[] = {MINT_TYPE_IQ1_S, MINT_TYPE_IQ1_M};
    for (int ti = 0; ti < 2; ti++) {
        memset(q, 0xAB, sizeof q);
        cr_assert(mint_quantize_rows_ref(types[ti], x, q, 1, 256, imp));
        const size_t sz = (size_t)mint_row_size(types[ti], 256);
        for (size_t i = 0; i < sz; i++)
            cr_expect_eq(q[i], 0, "%s byte %zu", mint_type_name(types[ti]), i);
        mint_kernels_for(MINT_ISA_REF)->t[types[ti]].to_float(q, y, 256);
        for (int i = 0; i < 256; i++) cr_expect_eq(fabsf(y[i]), 0.0f);
    }
}

// llama.cpp's ggml_quantize_requires_imatrix: IQ1_S needs an importance, IQ1_M does not.
Test(iq1, which_types_need_an_importance) {
    cr_expect(mint_quantize_needs_imatrix(MINT_TYPE_IQ1_S));
    cr_expect(!mint_quantize_needs_imatrix(MINT_TYPE_IQ1_M));
    cr_expect(!mint_quantize_needs_imatrix(MINT_TYPE_IQ4_XS));
    cr_expect(!mint_quantize_needs_imatrix(MINT_TYPE_Q4_K));
}

// With column importances spread over orders of magnitude, the search given them has a lower
// importance-weighted error than the same search with every importance 1.
Test(iq1, importance_lowers_weighted_error) {
    enum { NROW = 16, N = 512 };
    float *x = malloc(sizeof(float) * NROW * N), imp[N], ones[N], y[N];
    unsigned char *q = malloc(NROW * N);
    sm_state = 7;
    for (int i = 0; i < NROW * N; i++) x[i] = (float)mt_bell(&sm_state);
    for (int j = 0; j < N; j++) {
        imp[j] = (float)pow(10.0, 3 * (mt_bell(&sm_state) + 2) / 4 - 1.5);
        ones[j] = 1.0f;
    }
    const mint_type types[] = {MINT_TYPE_IQ1_S, MINT_TYPE_IQ1_M};
    for (int ti = 0; ti < 2; ti++) {
        double e[2];
        for (int v = 0; v < 2; v++) {
            cr_assert(mint_quantize_rows_ref(types[ti], x, q, NROW, N, v ? imp : ones));
            const size_t rs = (size_t)mint_row_size(types[ti], N);
            e[v] = 0;
            for (int r = 0; r < NROW; r++) {
                mint_kernels_for(MINT_ISA_REF)->t[types[ti]].to_float(q + r * rs, y, N);
                for (int j = 0; j < N; j++) {
                    const double d = (double)x[r * N + j] - y[j];
                    e[v] += imp[j] * d * d;
                }
            }
        }
        cr_expect_lt(e[1], 0.9 * e[0], "%s: %g with the importance, %g without",
                     mint_type_name(types[ti]), e[1], e[0]);
    }
    free(x);
    free(q);
}
