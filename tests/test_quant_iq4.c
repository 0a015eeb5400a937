// test_quant_iq4.c - IQ4_NL and IQ4_XS, the 4-bit non-linear types (quant/quant_iq4_ref.c,
// docs/formats.md 2.6): element maps on hand-made blocks, the quantizer's bytes on inputs whose
// answer is known (zeros, rows that are exactly representable), the round-trip error on Gaussian
// rows, the importance matrix lowering the error it weighs, and mint_quantize_rows_ref's switch.
// The quantizers' byte identity with llama.cpp's was checked outside the tree against
// libggml-base (ggml_quantize_chunk); test_quantize_arch.c holds whole files to llama-quantize's
// bytes, and test_quant.c / test_kernels.c cover the dot products.
#include "mint.h"
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/kernels.h"
#include "quant/ref.h"
#include "quant/unpack.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const int8_t levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                  1,    13,   25,  38,  53,  69,  89,  113};

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

Test(iq4, the_level_table_is_ggmls) {
    cr_assert_eq(memcmp(mint_iq4nl_table(), levels, sizeof levels), 0);
}

// IQ4_NL: byte j holds element j (low nibble) and j + 16 (high nibble); y = d * level.
Test(iq4, nl_element_map) {
    mint_block_iq4_nl b;
    b.d = mint_f32_to_f16(0.5f);
    for (int j = 0; j < 16; j++) b.qs[j] = (uint8_t)(j | (15 - j) << 4);
    float y[32];
    dequantize_row_iq4_nl_ref(&b, y, 32);
    for (int j = 0; j < 16; j++) {
        cr_expect_eq(y[j], 0.5f * levels[j], "element %d", j);
        cr_expect_eq(y[j + 16], 0.5f * levels[15 - j], "element %d", j + 16);
    }
}

// IQ4_XS: sub-block g's scale has its low 4 bits in nibble g % 2 of scales_l[g / 2] and its high
// 2 bits at bit 2g of scales_h, biased by 32; its 16 bytes of qs are ordered as IQ4_NL's.
Test(iq4, xs_element_map) {
    mint_block_iq4_xs b;
    memset(&b, 0, sizeof b);
    b.d = mint_f32_to_f16(0.25f);
    static const int ls[8] = {0, 63, 32, 1, 17, 48, 31, 33}; // stored, 0..63
    for (int g = 0; g < 8; g++) {
        b.scales_l[g / 2] |= (uint8_t)((ls[g] & 0xF) << 4 * (g % 2));
        b.scales_h |= (uint16_t)((ls[g] >> 4) << 2 * g);
    }
    for (int i = 0; i < 128; i++) b.qs[i] = (uint8_t)((i * 7) & 0xFF);
    float y[256];
    dequantize_row_iq4_xs_ref(&b, y, 256);
    for (int e = 0; e < 256; e++) {
        const int g = e / 32, l = e % 32;
        const uint8_t byte = b.qs[16 * g + l % 16];
        const int q = l < 16 ? byte & 0xF : byte >> 4;
        cr_expect_eq(y[e], 0.25f * (float)(ls[g] - 32) * levels[q], "element %d", e);
    }
}

// Zeros: IQ4_NL stores d = +0 and every index 8 (level 1, the nearest to 0); IQ4_XS stores the
// super-block scale -0 (0x8000: -max_scale / 32 of a zero max), every 6-bit scale 0 (stored 32:
// scales_l 0, scales_h 0xAAAA) and every index 8.
Test(iq4, zeros) {
    float x[256] = {0};
    mint_block_iq4_nl nl[8];
    quantize_row_iq4_nl_ref(x, nl, 256);
    for (int i = 0; i < 8; i++) {
        cr_expect_eq(nl[i].d, 0);
        for (int j = 0; j < 16; j++) cr_expect_eq(nl[i].qs[j], 0x88);
    }
    mint_block_iq4_xs xs;
    quantize_row_iq4_xs_ref(x, &xs, 256);
    cr_expect_eq(xs.d, 0x8000);
    cr_expect_eq(xs.scales_h, 0xAAAA);
    for (int k = 0; k < 4; k++) cr_expect_eq(xs.scales_l[k], 0);
    for (int j = 0; j < 128; j++) cr_expect_eq(xs.qs[j], 0x88);
}

// A row that is a power-of-two scale times levels, each block holding the level -127 (which the
// search's candidate t = 0 maps onto exactly) comes back unchanged.
Test(iq4, nl_exact_rows_round_trip) {
    float x[256], y[256];
    mint_block_iq4_nl b[8];
    for (int e = 0; e < 256; e++) {
        const int q = e % 32 == 5 ? 0 : (e * 11 + e / 32) % 16;
        x[e] = ldexpf((float)levels[q], -3 - e / 32 % 4) * (e / 64 % 2 ? -1.0f : 1.0f);
    }
    quantize_row_iq4_nl_ref(x, b, 256);
    dequantize_row_iq4_nl_ref(b, y, 256);
    for (int e = 0; e < 256; e++) cr_expect_eq(y[e], x[e], "element %d: %g vs %g", e, y[e], x[e]);
}

// IQ4_XS: sub-block g is d * l_g * level with d = -2^-4 and l_g in -32..31, the largest |l_g|
// being -32, so the super-block scale and every 6-bit scale are recovered exactly, and the
// indices against them.
Test(iq4, xs_exact_rows_round_trip) {
    static const int l[8] = {-32, -17, -5, 1, 7, 19, 31, 12};
    float x[512], y[512];
    mint_block_iq4_xs b[2];
    for (int e = 0; e < 512; e++) {
        const int q = e % 32 == 9 ? 0 : (e * 5 + e / 32) % 16;
        x[e] = -0.0625f * (float)l[e / 32 % 8] * (float)levels[q];
    }
    quantize_row_iq4_xs_ref(x, b, 512);
    cr_expect_eq(mint_f16_to_f32(b[0].d), -0.0625f);
    dequantize_row_iq4_xs_ref(b, y, 512);
    for (int e = 0; e < 512; e++) cr_expect_eq(y[e], x[e], "element %d: %g vs %g", e, y[e], x[e]);
}

// Round trip on Gaussian rows: RMS error over RMS value. Measured 2026-12-07 on 64 rows of 4096
// (mean, worst): IQ4_NL 0.0762, 0.0787; IQ4_XS 0.0768, 0.0792; budget 0.09.
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

Test(iq4, round_trip_error_on_gaussian_rows) {
    enum { N = 4096, ROWS = 64 };
    float *x = malloc(N * sizeof *x);
    const mint_type types[] = {MINT_TYPE_IQ4_NL, MINT_TYPE_IQ4_XS};
    for (int ti = 0; ti < 2; ti++) {
        double worst = 0, sum = 0;
        for (int r = 0; r < ROWS; r++) {
            fill_gaussian(x, N, 1000 + (uint64_t)r);
            const double e = rt_rel_rms(types[ti], NULL, x, N, false);
            sum += e;
            if (e > worst) worst = e;
        }
        cr_log_info("%s: relative RMS error mean %.4f, worst %.4f", mint_type_name(types[ti]),
                    sum / ROWS, worst);
        cr_expect_leq(worst, 0.09, "%s: %g", mint_type_name(types[ti]), worst);
    }
    free(x);
}

// With an importance the search minimises the error it weighs: summed over rows, the weighted
// error with the importance is below the weighted error of the unweighted quantization.
Test(iq4, an_importance_lowers_the_error_it_weighs) {
    enum { N = 1024, ROWS = 32 };
    float *x = malloc(N * sizeof *x), *imp = malloc(N * sizeof *imp);
    const mint_type types[] = {MINT_TYPE_IQ4_NL, MINT_TYPE_IQ4_XS};
    for (int ti = 0; ti < 2; ti++) {
        double with = 0, without = 0;
        for (int r = 0; r < ROWS; r++) {
            fill_gaussian(x, N, 7000 + (uint64_t)r);
            fill_gaussian(imp, N, 9000 + (uint64_t)r);
            for (int i = 0; i < N; i++) imp[i] = imp[i] * imp[i] * (i % 8 == 0 ? 50.0f : 1.0f);
            with += rt_rel_rms(types[ti], imp, x, N, true);
            // The unweighted bytes, scored with the same weights.
            uint8_t *q = malloc((size_t)mint_row_size(types[ti], N));
            float *y = malloc(N * sizeof *y);
            mint_quantizer_ref(types[ti])(x, q, N);
            mint_kernels_for(MINT_ISA_REF)->t[types[ti]].to_float(q, y, N);
            double num = 0, den = 0;
            for (int i = 0; i < N; i++) {
                num += imp[i] * ((double)y[i] - x[i]) * ((double)y[i] - x[i]);
                den += imp[i] * (double)x[i] * x[i];
            }
            without += sqrt(num / den);
            free(q), free(y);
        }
        cr_log_info("%s: weighted error with the importance %.4f, without %.4f",
                    mint_type_name(types[ti]), with / ROWS, without / ROWS);
        cr_expect_lt(with, 0.9 * without, "%s: %g vs %g", mint_type_name(types[ti]), with, without);
    }
    free(x), free(imp);
}

// mint_quantize_rows_ref: without an importance, the row quantizer's bytes row by row; with one,
// the weighted search's, each row weighed by the same importance vector.
Test(iq4, quantize_rows_is_the_row_quantizer) {
    enum { N = 512, ROWS = 3 };
    float *x = malloc(ROWS * N * sizeof *x), *imp = malloc(N * sizeof *imp);
    fill_gaussian(x, ROWS * N, 42);
    for (int i = 0; i < N; i++) imp[i] = 0.5f + (float)(i % 13);
    const mint_type types[] = {MINT_TYPE_IQ4_NL, MINT_TYPE_IQ4_XS};
    for (int ti = 0; ti < 2; ti++) {
        const mint_type t = types[ti];
        const size_t row = (size_t)mint_row_size(t, N);
        uint8_t *a = malloc(ROWS * row), *b = malloc(ROWS * row);
        cr_assert(!mint_quantize_needs_imatrix(t));
        cr_assert(mint_quantize_rows_ref(t, x, a, ROWS, N, NULL));
        for (int r = 0; r < ROWS; r++) mint_quantizer_ref(t)(x + r * N, b + r * row, N);
        cr_expect_eq(memcmp(a, b, ROWS * row), 0, "%s without importance", mint_type_name(t));
        cr_assert(mint_quantize_rows_ref(t, x, a, ROWS, N, imp));
        for (int r = 0; r < ROWS; r++) {
            if (t == MINT_TYPE_IQ4_NL)
                quantize_iq4_nl_ref(x + r * N, b + r * row, N, imp);
            else
                quantize_iq4_xs_ref(x + r * N, b + r * row, N, imp);
        }
        cr_expect_eq(memcmp(a, b, ROWS * row), 0, "%s with importance", mint_type_name(t));
        // An importance changes some bytes (it is not ignored).
        for (int r = 0; r < ROWS; r++) mint_quantizer_ref(t)(x + r * N, b + r * row, N);
        cr_expect_neq(memcmp(a, b, ROWS * row), 0, "%s: importance ignored", mint_type_name(t));
        free(a), free(b);
    }
    free(x), free(imp);
}
