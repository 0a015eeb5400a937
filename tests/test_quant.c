// test_quant.c - the scalar reference layer: block layouts, f16/bf16 rounding, activation
// quantizers, element maps, round-trip error budgets, dot products against a double-precision
// dot, and the weight quantizers byte for byte against files llama-quantize wrote.
#include "helpers/helpers.h"
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/kernels.h"
#include "quant/ref.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Shared helpers

// Deterministic N(0, 1) samples: xorshift64* + Box-Muller, so every run sees the same data.
static uint64_t rng_state;
static void rng_seed(uint64_t s) {
    rng_state = s * 0x9E3779B97F4A7C15ull + 1;
}
static double rng_uniform(void) { // (0, 1)
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return ((double)((rng_state * 0x2545F4914F6CDD1Dull) >> 11) + 0.5) * 0x1p-53;
}
static void fill_gaussian(float *x, int64_t n, uint64_t seed) {
    rng_seed(seed);
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)(sqrt(-2.0 * log(rng_uniform())) * cos(6.283185307179586 * rng_uniform()));
}

static const mint_kernels *ref_table(void) {
    const mint_kernels *k = mint_kernels_for(MINT_ISA_REF);
    cr_assert_not_null(k);
    return k;
}

// The weight types mint computes with, and their activation types (ggml's rule).
static const struct {
    mint_type w, a;
} weight_types[] = {
    {MINT_TYPE_F32, MINT_TYPE_F32},      {MINT_TYPE_F16, MINT_TYPE_F16},
    {MINT_TYPE_BF16, MINT_TYPE_BF16},    {MINT_TYPE_Q4_0, MINT_TYPE_Q8_0},
    {MINT_TYPE_Q4_1, MINT_TYPE_Q8_1},    {MINT_TYPE_Q5_0, MINT_TYPE_Q8_0},
    {MINT_TYPE_Q5_1, MINT_TYPE_Q8_1},    {MINT_TYPE_Q8_0, MINT_TYPE_Q8_0},
    {MINT_TYPE_Q2_K, MINT_TYPE_Q8_K},    {MINT_TYPE_Q3_K, MINT_TYPE_Q8_K},
    {MINT_TYPE_Q4_K, MINT_TYPE_Q8_K},    {MINT_TYPE_Q5_K, MINT_TYPE_Q8_K},
    {MINT_TYPE_Q6_K, MINT_TYPE_Q8_K},    {MINT_TYPE_MXFP4, MINT_TYPE_Q8_0},
    {MINT_TYPE_TQ1_0, MINT_TYPE_Q8_K},   {MINT_TYPE_TQ2_0, MINT_TYPE_Q8_K},
    {MINT_TYPE_IQ4_NL, MINT_TYPE_Q8_0},  {MINT_TYPE_IQ4_XS, MINT_TYPE_Q8_K},
    {MINT_TYPE_IQ3_XXS, MINT_TYPE_Q8_K}, {MINT_TYPE_IQ3_S, MINT_TYPE_Q8_K},
    {MINT_TYPE_IQ2_XXS, MINT_TYPE_Q8_K}, {MINT_TYPE_IQ2_XS, MINT_TYPE_Q8_K},
    {MINT_TYPE_IQ2_S, MINT_TYPE_Q8_K},   {MINT_TYPE_IQ1_S, MINT_TYPE_Q8_K},
    {MINT_TYPE_IQ1_M, MINT_TYPE_Q8_K},
};
#define N_WEIGHT_TYPES (sizeof weight_types / sizeof weight_types[0])

// ---------------------------------------------------------------------------------------------
// Layouts and the table

Test(blocks, sizes_match_the_type_table) {
    static const struct {
        mint_type t;
        size_t size;
    } sizes[] = {
        {MINT_TYPE_Q4_0, sizeof(mint_block_q4_0)},
        {MINT_TYPE_Q4_1, sizeof(mint_block_q4_1)},
        {MINT_TYPE_Q5_0, sizeof(mint_block_q5_0)},
        {MINT_TYPE_Q5_1, sizeof(mint_block_q5_1)},
        {MINT_TYPE_Q8_0, sizeof(mint_block_q8_0)},
        {MINT_TYPE_Q8_1, sizeof(mint_block_q8_1)},
        {MINT_TYPE_Q2_K, sizeof(mint_block_q2_K)},
        {MINT_TYPE_Q3_K, sizeof(mint_block_q3_K)},
        {MINT_TYPE_Q4_K, sizeof(mint_block_q4_K)},
        {MINT_TYPE_Q5_K, sizeof(mint_block_q5_K)},
        {MINT_TYPE_Q6_K, sizeof(mint_block_q6_K)},
        {MINT_TYPE_Q8_K, sizeof(mint_block_q8_K)},
        {MINT_TYPE_MXFP4, sizeof(mint_block_mxfp4)},
        {MINT_TYPE_TQ1_0, sizeof(mint_block_tq1_0)},
        {MINT_TYPE_TQ2_0, sizeof(mint_block_tq2_0)},
        {MINT_TYPE_IQ4_NL, sizeof(mint_block_iq4_nl)},
        {MINT_TYPE_IQ4_XS, sizeof(mint_block_iq4_xs)},
        {MINT_TYPE_IQ3_XXS, sizeof(mint_block_iq3_xxs)},
        {MINT_TYPE_IQ3_S, sizeof(mint_block_iq3_s)},
        {MINT_TYPE_IQ2_XXS, sizeof(mint_block_iq2_xxs)},
        {MINT_TYPE_IQ2_XS, sizeof(mint_block_iq2_xs)},
        {MINT_TYPE_IQ2_S, sizeof(mint_block_iq2_s)},
        {MINT_TYPE_IQ1_S, sizeof(mint_block_iq1_s)},
        {MINT_TYPE_IQ1_M, sizeof(mint_block_iq1_m)},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const mint_type_traits *tr = mint_type_get(sizes[i].t);
        cr_assert_not_null(tr);
        cr_expect_eq(tr->size, sizes[i].size, "%s: table %u bytes, struct %zu", tr->name, tr->size,
                     sizes[i].size);
        const bool k_quant = (sizes[i].t >= MINT_TYPE_Q2_K && sizes[i].t <= MINT_TYPE_Q8_K) ||
                             sizes[i].t == MINT_TYPE_TQ1_0 || sizes[i].t == MINT_TYPE_TQ2_0 ||
                             sizes[i].t == MINT_TYPE_IQ4_XS ||
                             (sizes[i].t >= MINT_TYPE_IQ2_XXS && sizes[i].t <= MINT_TYPE_IQ2_S &&
                              sizes[i].t != MINT_TYPE_IQ4_NL) ||
                             sizes[i].t == MINT_TYPE_IQ1_M;
        cr_expect_eq(tr->blck, k_quant ? MINT_QK_K : MINT_QK, "%s", tr->name);
    }
}

Test(table, every_computable_weight_type_is_complete) {
    const mint_kernels *k = ref_table();
    cr_assert_str_eq(k->name, "ref");
    for (size_t i = 0; i < N_WEIGHT_TYPES; i++) {
        mint_type w = weight_types[i].w, a = weight_types[i].a;
        const char *name = mint_type_name(w);
        cr_assert(mint_type_get(w)->computable, "%s", name);
        cr_expect_eq(k->t[w].vec_dot_type, a, "%s: vec_dot_type %s", name,
                     mint_type_name(k->t[w].vec_dot_type));
        cr_expect_not_null(k->t[w].to_float, "%s", name);
        cr_expect_not_null(k->t[w].vec_dot, "%s", name);
        cr_expect_null(k->t[w].gemm, "%s", name);
        cr_expect_not_null(k->t[a].from_float, "%s's activations", name);
        cr_expect_not_null(k->t[a].to_float, "%s's activations", name);
        cr_expect_not_null(mint_quantizer_ref(w), "%s", name);
    }
    // Every type types.c calls computable is covered above.
    for (int t = 0; t < MINT_TYPE_COUNT; t++) {
        const mint_type_traits *tr = mint_type_get((uint32_t)t);
        if (tr && tr->computable) cr_expect_not_null(k->t[t].vec_dot, "%s", tr->name);
    }
    cr_expect_null(mint_quantizer_ref(MINT_TYPE_Q8_K));
    cr_expect_null(mint_quantizer_ref(MINT_TYPE_Q8_1));
}

// ---------------------------------------------------------------------------------------------
// f16 / bf16

Test(fp16, f16_known_values_round_to_nearest_even) {
    static const struct {
        float x;
        uint16_t h;
    } cases[] = {
        {0.0f, 0x0000},
        {-0.0f, 0x8000},
        {1.0f, 0x3C00},
        {1.0f + 0x1p-11f, 0x3C00},            // tie between 0x3C00 and 0x3C01: even
        {1.0f + 0x1p-11f + 0x1p-20f, 0x3C01}, // just above the tie
        {1.0f + 0x3p-11f, 0x3C02},            // tie between 0x3C01 and 0x3C02: even
        {-2.5f, 0xC100},
        {65504.0f, 0x7BFF},
        {65519.996f, 0x7BFF},
        {65520.0f, 0x7C00}, // tie between 65504 and 65536 (inf): even is inf
        {1e10f, 0x7C00},
        {-INFINITY, 0xFC00},
        {0x1p-14f, 0x0400},            // smallest normal
        {0x1p-14f - 0x1p-25f, 0x0400}, // tie between 0x03FF and 0x0400: even
        {0x1p-24f, 0x0001},            // smallest subnormal
        {0x1p-25f, 0x0000},            // tie between 0 and 1: even
        {0x1p-25f + 0x1p-40f, 0x0001}, // just above it
        {0x3p-25f, 0x0002},            // 1.5 subnormal units: even
        {-0x5p-25f, 0x8002},           // 2.5 units: even
        {1e-10f, 0x0000},
        {0x1p-149f, 0x0000}, // f32 subnormal
        {0.1f, 0x2E66},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_expect_eq(mint_f32_to_f16(cases[i].x), cases[i].h, "f16(%a) = 0x%04X, want 0x%04X",
                     (double)cases[i].x, mint_f32_to_f16(cases[i].x), cases[i].h);
    // NaN: quiet 0x7E00 with the sign kept, payload dropped (ggml's software conversion).
    cr_expect_eq(mint_f32_to_f16(NAN), 0x7E00);
    cr_expect_eq(mint_f32_to_f16(mint_f32_from_bits(0xFF800001)), 0xFE00);
}

// Every f16 widens exactly and converts back to itself; NaNs stay NaN.
Test(fp16, f16_every_value_round_trips) {
    for (uint32_t h = 0; h < 65536; h++) {
        float f = mint_f16_to_f32((uint16_t)h);
        if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF)) {
            cr_assert(isnan(f), "0x%04X", h);
            continue;
        }
        cr_assert_eq(mint_f32_to_f16(f), h, "0x%04X -> %a -> 0x%04X", h, (double)f,
                     mint_f32_to_f16(f));
    }
    cr_assert_eq(mint_f16_to_f32(0x0001), 0x1p-24f);
    cr_assert_eq(mint_f16_to_f32(0x7BFF), 65504.0f);
    cr_assert_eq(mint_f16_to_f32(0xC100), -2.5f);
}

// RNE by definition on random f32 in and around the f16 range: no neighbour of the result is
// closer, and an exact tie picks the even one.
Test(fp16, f16_rounding_is_nearest_even_on_random_values) {
    rng_seed(7);
    for (int i = 0; i < 1 << 20; i++) {
        uint32_t exp = 127 - 27 + (uint32_t)(rng_uniform() * 44); // 2^-27 .. 2^16
        uint32_t bits = exp << 23 | (uint32_t)(rng_uniform() * (1 << 23));
        float x = mint_f32_from_bits(bits);
        uint16_t h = mint_f32_to_f16(x);
        cr_assert_eq(mint_f32_to_f16(-x), h | 0x8000);
        if (h >= 0x7C00) {
            cr_assert(x >= 65520.0f, "%a -> inf", (double)x);
            continue;
        }
        double err = fabs((double)mint_f16_to_f32(h) - x);
        double below = h > 0 ? fabs((double)mint_f16_to_f32(h - 1) - x) : INFINITY;
        double above = fabs((double)(h + 1 == 0x7C00 ? 65536.0f : mint_f16_to_f32(h + 1)) - x);
        cr_assert(err <= below && err <= above, "%a -> 0x%04X is not nearest", (double)x, h);
        if (err == below || err == above) cr_assert_eq(h & 1, 0, "%a: tie not even", (double)x);
    }
}

Test(fp16, bf16_known_values) {
    static const struct {
        uint32_t f;
        uint16_t h;
    } cases[] = {
        {0x3F800000, 0x3F80}, // 1
        {0x3F808000, 0x3F80}, // 1 + 2^-8: tie, even
        {0x3F818000, 0x3F82}, // 1 + 3 * 2^-8: tie, even
        {0x3F808001, 0x3F81}, // just above the tie
        {0xBF80FFFF, 0xBF81}, // negative, above half
        {0x7F7FFFFF, 0x7F80}, // FLT_MAX rounds to inf
        {0x7F800000, 0x7F80}, // inf
        {0x00018000, 0x0002}, // subnormal kept (not flushed), tie to even
        {0x7F800001, 0x7FC0}, // signalling NaN forced quiet
        {0xFF800001, 0xFFC0}, {0x7FC00000, 0x7FC0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_expect_eq(mint_f32_to_bf16(mint_f32_from_bits(cases[i].f)), cases[i].h,
                     "bf16(0x%08X) = 0x%04X, want 0x%04X", cases[i].f,
                     mint_f32_to_bf16(mint_f32_from_bits(cases[i].f)), cases[i].h);
    cr_expect_eq(mint_f32_bits(mint_bf16_to_f32(0xBF81)), 0xBF810000u);
}

// ---------------------------------------------------------------------------------------------
// Activation quantizers: known values

// A block with amax = 127: the multiplier 127/amax is exactly 1, so the quants are the rounded
// inputs. Activations round ties to even; Q8_0 weights round them away from zero.
Test(act, q8_0_ties_round_to_even_unlike_weights) {
    float x[MINT_QK] = {127.0f, 0.5f, 1.5f, 2.5f, -2.5f, -0.5f, 3.5f, -127.0f, 126.5f, 0.49f};
    static const int8_t act[10] = {127, 0, 2, 2, -2, 0, 4, -127, 126, 0};
    static const int8_t wgt[10] = {127, 1, 2, 3, -3, -1, 4, -127, 127, 0};
    mint_block_q8_0 a, w;
    quantize_row_q8_0_act_ref(x, &a, MINT_QK);
    quantize_row_q8_0_ref(x, &w, MINT_QK);
    cr_assert_eq(a.d, 0x3C00);
    cr_assert_eq(w.d, 0x3C00);
    for (int j = 0; j < 10; j++) {
        cr_expect_eq(a.qs[j], act[j], "act q[%d] = %d, want %d", j, a.qs[j], act[j]);
        cr_expect_eq(w.qs[j], wgt[j], "weight q[%d] = %d, want %d", j, w.qs[j], wgt[j]);
    }
    for (int j = 10; j < MINT_QK; j++) cr_expect_eq(a.qs[j], 0);
}

// The multiplier is 127/amax, not 1/(amax/127): for this amax, x = amax/2 gives exactly 63.5
// (RNE: 64) with x86 llama.cpp's multiplier and 63.499996 (63) with the other one, which is what
// the weight quantizer uses (and rounds with roundf).
Test(act, q8_0_multiplier_is_127_over_amax) {
    float x[MINT_QK] = {0x1.3c1e98p+0f, 0x1.3c1e98p-1f};
    mint_block_q8_0 a, w;
    quantize_row_q8_0_act_ref(x, &a, MINT_QK);
    quantize_row_q8_0_ref(x, &w, MINT_QK);
    cr_expect_eq(a.qs[0], 127);
    cr_expect_eq(a.qs[1], 64);
    cr_expect_eq(w.qs[1], 63);
    cr_expect_eq(a.d, w.d);
    cr_expect_eq(a.d, mint_f32_to_f16(0x1.3c1e98p+0f / 127.0f));
}

// s = f16(d * sum(q)) with the unrounded d. Expected values computed independently (f32
// arithmetic emulated in Python): with f16(d) instead of d, s would be 0x4986.
Test(act, q8_1_sum_uses_the_unrounded_scale) {
    static const int8_t want[MINT_QK] = {-92, -42, 7,   56,  106, -71, -21, 28,  78,  127, -49,
                                         0,   49,  99,  -78, -28, 21,  71,  120, -56, -7,  42,
                                         92,  -85, -35, 14,  64,  113, -64, -14, 35,  85};
    float x[MINT_QK];
    for (int j = 0; j < MINT_QK; j++)
        x[j] = (float)((double)((j * 7) % 32 - 13) / 8.0 * (1.0 + 10.0 / 97.0));
    mint_block_q8_1 b;
    quantize_row_q8_1_act_ref(x, &b, MINT_QK);
    cr_expect_eq(b.d, 0x2501);
    cr_expect_eq(b.s, 0x4985, "s = 0x%04X", b.s);
    cr_expect_arr_eq(b.qs, want, MINT_QK);
    mint_block_q8_0 b0; // the same quants as Q8_0
    quantize_row_q8_0_act_ref(x, &b0, MINT_QK);
    cr_expect_arr_eq(b0.qs, want, MINT_QK);
}

// iscale = -127/max with max the signed value of largest |x|: q = RNE(iscale * x), d = 1/iscale.
Test(act, q8_K_sign_ties_and_bsums) {
    float x[2 * MINT_QK_K] = {0};
    float *pos = x, *neg = x + MINT_QK_K;
    // Block 0: max = +127, iscale = -1.
    pos[0] = 127.0f, pos[1] = 0.5f, pos[2] = 2.5f, pos[3] = -1.5f, pos[17] = 100.0f;
    // Block 1: max = -127 (the first of the two largest), iscale = +1.
    neg[0] = -127.0f, neg[1] = 127.0f, neg[2] = 0.5f, neg[3] = -2.5f, neg[255] = 3.5f;
    mint_block_q8_K b[2];
    quantize_row_q8_K_ref(x, b, 2 * MINT_QK_K);
    cr_expect_eq(b[0].d, -1.0f);
    cr_expect_eq(b[0].qs[0], -127);
    cr_expect_eq(b[0].qs[1], 0);
    cr_expect_eq(b[0].qs[2], -2);
    cr_expect_eq(b[0].qs[3], 2);
    cr_expect_eq(b[0].qs[17], -100);
    cr_expect_eq(b[0].bsums[0], -127 - 2 + 2);
    cr_expect_eq(b[0].bsums[1], -100);
    cr_expect_eq(b[1].d, 1.0f);
    cr_expect_eq(b[1].qs[0], -127);
    cr_expect_eq(b[1].qs[1], 127);
    cr_expect_eq(b[1].qs[2], 0);
    cr_expect_eq(b[1].qs[3], -2);
    cr_expect_eq(b[1].qs[255], 4);
    cr_expect_eq(b[1].bsums[0], -2);
    cr_expect_eq(b[1].bsums[15], 4);
}

Test(act, zero_blocks_give_zero_bytes) {
    float x[MINT_QK_K] = {0};
    uint8_t buf[sizeof(mint_block_q8_K)], zero[sizeof(mint_block_q8_K)] = {0};
    memset(buf, 0xAB, sizeof buf);
    quantize_row_q8_0_act_ref(x, buf, MINT_QK);
    cr_expect_arr_eq(buf, zero, sizeof(mint_block_q8_0));
    memset(buf, 0xAB, sizeof buf);
    quantize_row_q8_1_act_ref(x, buf, MINT_QK);
    cr_expect_arr_eq(buf, zero, sizeof(mint_block_q8_1));
    memset(buf, 0xAB, sizeof buf);
    quantize_row_q8_K_ref(x, buf, MINT_QK_K);
    cr_expect_arr_eq(buf, zero, sizeof(mint_block_q8_K));
}

// ---------------------------------------------------------------------------------------------
// Element maps: hand-made blocks, values worked out from docs/formats.md 2.3 / 2.4

Test(dequant, legacy_blocks_known_values) {
    float y[MINT_QK];
    mint_block_q4_0 b40 = {.d = 0x3800}; // 0.5
    b40.qs[0] = 0x8F, b40.qs[1] = 0x10;
    dequantize_row_q4_0_ref(&b40, y, MINT_QK);
    cr_expect_eq(y[0], 3.5f);   // (15 - 8) * 0.5
    cr_expect_eq(y[16], 0.0f);  // (8 - 8) * 0.5
    cr_expect_eq(y[1], -4.0f);  // (0 - 8) * 0.5
    cr_expect_eq(y[17], -3.5f); // (1 - 8) * 0.5

    mint_block_q4_1 b41 = {.d = 0x4000, .m = 0xBC00}; // d = 2, m = -1
    b41.qs[2] = 0x3F;
    dequantize_row_q4_1_ref(&b41, y, MINT_QK);
    cr_expect_eq(y[2], 29.0f); // 15 * 2 - 1
    cr_expect_eq(y[18], 5.0f); // 3 * 2 - 1
    cr_expect_eq(y[3], -1.0f);

    mint_block_q5_0 b50 = {.d = 0x3C00, .qh = {0x01, 0x00, 0x02, 0x00}}; // bits 0 and 17
    b50.qs[0] = 0x0F, b50.qs[1] = 0x20;
    dequantize_row_q5_0_ref(&b50, y, MINT_QK);
    cr_expect_eq(y[0], 15.0f);  // 15 + 16 - 16
    cr_expect_eq(y[17], 2.0f);  // 2 + 16 - 16
    cr_expect_eq(y[1], -16.0f); // 0 - 16
    cr_expect_eq(y[16], -16.0f);

    mint_block_q5_1 b51 = {.d = 0x3800, .m = 0x3C00, .qh = {0, 0, 0, 0x80}}; // bit 31
    b51.qs[15] = 0xF0;
    dequantize_row_q5_1_ref(&b51, y, MINT_QK);
    cr_expect_eq(y[31], 16.5f); // (15 + 16) * 0.5 + 1
    cr_expect_eq(y[15], 1.0f);

    mint_block_q8_0 b80 = {.d = 0xB800, .qs = {-128, 127}}; // d = -0.5
    dequantize_row_q8_0_ref(&b80, y, MINT_QK);
    cr_expect_eq(y[0], 64.0f);
    cr_expect_eq(y[1], -63.5f);
}

// MXFP4: code q is twice an E2M1 value (0, 0.5, 1, 1.5, 2, 3, 4, 6, then the negatives), the
// E8M0 exponent e scales by 2^(e-127), and the file stores the value doubled against 2^(e-128).
Test(dequant, mxfp4_known_values) {
    float y[MINT_QK];
    mint_block_mxfp4 b = {.e = 127}; // scale 1
    b.qs[0] = 0xF7, b.qs[1] = 0x89, b.qs[15] = 0x15;
    dequantize_row_mxfp4_ref(&b, y, MINT_QK);
    cr_expect_eq(y[0], 6.0f);   // code 7
    cr_expect_eq(y[16], -6.0f); // code 15
    cr_expect_eq(y[1], -0.5f);  // code 9
    cr_expect_eq(y[17], 0.0f);  // code 8 is -0: ggml's int8 table stores 0
    cr_expect_eq(y[15], 3.0f);  // code 5
    cr_expect_eq(y[31], 0.5f);  // code 1
    b.e = 130;                  // scale 8
    dequantize_row_mxfp4_ref(&b, y, MINT_QK);
    cr_expect_eq(y[0], 48.0f);
    // The two exponents below 2 are f32 subnormals; 255 (E8M0's NaN) reads as 2^128.
    cr_expect_eq(mint_e8m0_half_to_f32(0), ldexpf(1.0f, -128));
    cr_expect_eq(mint_e8m0_half_to_f32(1), ldexpf(1.0f, -127));
    cr_expect_eq(mint_e8m0_half_to_f32(2), ldexpf(1.0f, -126));
    cr_expect_eq(mint_e8m0_half_to_f32(254), ldexpf(1.0f, 126));
}

// The MXFP4 quantizer's exponent and rounding on chosen blocks (the random-data byte identity
// with llama-quantize is tests/test_quantize_arch.c's MXFP4_MOE files).
// Ternary blocks: a row that is already -d / 0 / +d comes back exactly in both layouts (every
// trit position of TQ1_0's three byte groups and TQ2_0's bit pairs), halves round away from zero
// (lroundf), and the stored scale is the largest |x|.
Test(quantize, ternary_blocks_round_trip_exact_trits) {
    const mint_kernels *k = ref_table();
    float x[MINT_QK_K], y[MINT_QK_K];
    for (int e = 0; e < MINT_QK_K; e++) x[e] = (float)((e * 7 + e / 3) % 3 - 1) * 0.75f;
    x[17] = -0.75f; // the largest |x| is negative somewhere: d is still |x|
    const mint_type types[] = {MINT_TYPE_TQ1_0, MINT_TYPE_TQ2_0};
    for (int ti = 0; ti < 2; ti++) {
        uint8_t q[66];
        mint_quantizer_ref(types[ti])(x, q, MINT_QK_K);
        const uint16_t d = ti ? ((mint_block_tq2_0 *)q)->d : ((mint_block_tq1_0 *)q)->d;
        cr_expect_eq(mint_f16_to_f32(d), 0.75f);
        k->t[types[ti]].to_float(q, y, MINT_QK_K);
        cr_expect_arr_eq(x, y, sizeof x, "%s", mint_type_name(types[ti]));
    }
    // Halves: 0.5 d rounds to +d, -0.5 d to -d, 0.49 d to 0.
    float h[MINT_QK_K] = {2.0f, 1.0f, -1.0f, 0.98f};
    uint8_t q[66];
    mint_quantizer_ref(MINT_TYPE_TQ2_0)(h, q, MINT_QK_K);
    k->t[MINT_TYPE_TQ2_0].to_float(q, y, MINT_QK_K);
    cr_expect(y[0] == 2.0f && y[1] == 2.0f && y[2] == -2.0f && y[3] == 0.0f, "%g %g %g %g", y[0],
              y[1], y[2], y[3]);
    // TQ1_0's byte for trits (2, 0, 1, 2, 1) (most significant first): v = 2*81 + 0 + 9 + 6 + 1
    // = 178, stored as ceil(178 * 256 / 243) = 188.
    float t[MINT_QK_K] = {0};
    const float trits[5] = {1, -1, 0, 1, 0};
    t[200] = 1.0f; // a scale of 1 elsewhere in the block
    for (int j = 0; j < 5; j++) t[32 * j] = trits[j];
    mint_quantizer_ref(MINT_TYPE_TQ1_0)(t, q, MINT_QK_K);
    cr_expect_eq(q[0], 188);
}

Test(quantize, mxfp4_exponent_and_nearest_code) {
    float x[MINT_QK] = {0};
    mint_block_mxfp4 b;
    quantize_row_mxfp4_ref(x, &b, MINT_QK);
    cr_expect_eq(b.e, 0, "all zeros: exponent 0");
    for (int j = 0; j < 16; j++) cr_expect_eq(b.qs[j], 0);
    // amax = 6: floor(log2 6) = 2, e = 127; the scale is 1 and 6 is code 7 exactly.
    x[0] = 6.0f, x[1] = -0.25f, x[2] = 0.75f, x[16] = 2.5f, x[17] = -5.0f, x[3] = 100.0f / 41;
    quantize_row_mxfp4_ref(x, &b, MINT_QK);
    cr_expect_eq(b.e, 127);
    cr_expect_eq(b.qs[0] & 0xF, 7);
    cr_expect_eq(b.qs[1] & 0xF, 0, "-0.25 ties 0 and -0.5: the first code (0) wins");
    cr_expect_eq(b.qs[2] & 0xF, 1, "0.75 ties 0.5 and 1: the first code (0.5) wins");
    cr_expect_eq(b.qs[0] >> 4, 4, "2.5 ties 2 and 3: code 4 (2) comes first");
    cr_expect_eq(b.qs[1] >> 4, 14, "-5 ties -4 and -6: code 14 (-4) comes first");
    cr_expect_eq(b.qs[3] & 0xF, 4, "2.44 is nearest 2");
    // amax = 8: e = 128, the scale 2; 8 is code 6 (4 * 2).
    x[0] = -8.0f;
    quantize_row_mxfp4_ref(x, &b, MINT_QK);
    cr_expect_eq(b.e, 128);
    cr_expect_eq(b.qs[0] & 0xF, 14);
    // amax = 7.99: still e = 127, and 7.99 clamps to 6 (code 7).
    x[0] = 7.99f;
    quantize_row_mxfp4_ref(x, &b, MINT_QK);
    cr_expect_eq(b.e, 127);
    cr_expect_eq(b.qs[0] & 0xF, 7);
}

Test(dequant, k_quant_blocks_known_values) {
    float y[MINT_QK_K];

    // Q2_K: sub-block 5 (elements 80..95) has scale 3, min 2; element 85 = 128*0 + 32*2 + 21
    // has q = 3 in bits 4..5 of qs[21].
    mint_block_q2_K b2 = {.d = 0x3C00, .dmin = 0x3800};
    b2.scales[5] = 0x23, b2.qs[21] = 0x30;
    dequantize_row_q2_K_ref(&b2, y, MINT_QK_K);
    cr_expect_eq(y[85], 8.0f);  // 1 * 3 * 3 - 0.5 * 2
    cr_expect_eq(y[84], -1.0f); // q = 0
    cr_expect_eq(y[21], 0.0f);  // sub-block 1: scale 0, min 0

    // Q3_K: every 6-bit scale 33 (-> 1) except sub-block 15 (0 -> -32); element 200 has its
    // high bit set (q3 = 0), element 201 = 128 + 64 + 9 has low bits 3 (q3 = 3 - 4).
    mint_block_q3_K b3 = {.d = 0x3C00};
    memset(b3.scales, 0x11, 8);
    memset(b3.scales + 8, 0xAA, 4);
    b3.scales[7] = 0x01, b3.scales[11] = 0x2A;
    b3.hmask[200 % 32] |= 1 << (200 / 32);
    b3.qs[32 + 9] |= 3 << 4;
    dequantize_row_q3_K_ref(&b3, y, MINT_QK_K);
    cr_expect_eq(y[0], -4.0f);
    cr_expect_eq(y[200], 0.0f);
    cr_expect_eq(y[201], -1.0f);
    cr_expect_eq(y[240], 128.0f); // -32 * -4

    // Q4_K: sub-block 5's scale = 1 | 1 << 4 = 17 and min = 2 | 2 << 4 = 34 (high bits in the top
    // of bytes 1 and 5); element 167 = 32*5 + 7 is the high nibble of qs[64 + 7].
    mint_block_q4_K b4 = {.d = 0x3C00, .dmin = 0x3C00};
    b4.scales[9] = 0x21, b4.scales[1] = 0x40, b4.scales[5] = 0x80;
    b4.qs[71] = 0x90;
    dequantize_row_q4_K_ref(&b4, y, MINT_QK_K);
    cr_expect_eq(y[167], 119.0f); // 17 * 9 - 34
    cr_expect_eq(y[160], -34.0f);
    cr_expect_eq(y[39], 0.0f); // sub-block 1: scale and min 0 (the top bits belong to 5)

    // Q5_K: as Q4_K, plus the 5th bit of element 167 = bit 5 of qh[7].
    mint_block_q5_K b5 = {.d = 0x3C00, .dmin = 0x3C00};
    memcpy(b5.scales, b4.scales, 12);
    b5.qs[71] = 0x90, b5.qh[7] = 1 << 5;
    dequantize_row_q5_K_ref(&b5, y, MINT_QK_K);
    cr_expect_eq(y[167], 391.0f); // 17 * 25 - 34
    cr_expect_eq(y[135], 0.0f);   // sub-block 4 shares qs[71] (low nibble 0) and has scale 0

    // Q6_K: element 229 = 128 + 32*3 + 5: low nibble = high half of ql[64 + 32 + 5], high 2 bits
    // = bits 6..7 of qh[32 + 5]; level 7 | 2 << 4 = 39, q = 7; sub-block 14 has scale -3.
    mint_block_q6_K b6 = {.d = 0x3800};
    b6.ql[101] = 0x70, b6.qh[37] = 0x80, b6.scales[14] = -3;
    dequantize_row_q6_K_ref(&b6, y, MINT_QK_K);
    cr_expect_eq(y[229], -10.5f); // 0.5 * -3 * 7
    cr_expect_eq(y[230], 48.0f);  // 0.5 * -3 * -32
    cr_expect_eq(y[0], 0.0f);     // scale 0
}

// ---------------------------------------------------------------------------------------------
// Round trip: dequantize(quantize(x)) on N(0, 1) data, RMSE per type within a stated budget.
// Budgets are about 1.1x the values measured when the reference was written; they catch a broken
// quantizer or element map, whose error would be of order 1.

#define RT_N (64 * MINT_QK_K)

// Measured: F16 2.09e-4, BF16 1.65e-3, Q8_0 5.44e-3, Q4_0 8.69e-2, Q4_1 7.90e-2, Q5_0 4.33e-2,
// Q5_1 3.82e-2, Q2_K 0.303, Q3_K 0.153, Q4_K 7.21e-2, Q5_K 3.65e-2, Q6_K 1.79e-2; TQ1_0 and
// TQ2_0 0.803 (the same values: a Gaussian row keeps little under -d / 0 / +d with d its largest
// |x|; the ternary types are for weights trained ternary).
static const struct {
    mint_type t;
    double rmse_budget; // RMSE over RT_N values of unit variance
} round_trip[] = {
    {MINT_TYPE_F16, 2.3e-4},   {MINT_TYPE_BF16, 1.8e-3}, {MINT_TYPE_Q8_0, 6.0e-3},
    {MINT_TYPE_Q4_0, 9.5e-2},  {MINT_TYPE_Q4_1, 8.7e-2}, {MINT_TYPE_Q5_0, 4.8e-2},
    {MINT_TYPE_Q5_1, 4.2e-2},  {MINT_TYPE_Q2_K, 3.3e-1}, {MINT_TYPE_Q3_K, 1.7e-1},
    {MINT_TYPE_Q4_K, 8.0e-2},  {MINT_TYPE_Q5_K, 4.0e-2}, {MINT_TYPE_Q6_K, 2.0e-2},
    {MINT_TYPE_MXFP4, 1.2e-1}, {MINT_TYPE_TQ1_0, 0.82},  {MINT_TYPE_TQ2_0, 0.82},
};

Test(round_trip, rmse_within_budget) {
    const mint_kernels *k = ref_table();
    float *x = malloc(RT_N * sizeof *x), *y = malloc(RT_N * sizeof *y);
    uint8_t *q = malloc(RT_N * 4);
    fill_gaussian(x, RT_N, 1);
    for (size_t i = 0; i < sizeof round_trip / sizeof round_trip[0]; i++) {
        mint_type t = round_trip[i].t;
        mint_quantizer_ref(t)(x, q, RT_N);
        k->t[t].to_float(q, y, RT_N);
        double se = 0;
        for (int64_t j = 0; j < RT_N; j++) se += ((double)y[j] - x[j]) * ((double)y[j] - x[j]);
        double rmse = sqrt(se / RT_N);
        cr_expect(rmse <= round_trip[i].rmse_budget, "%s: RMSE %.4g > %.4g", mint_type_name(t),
                  rmse, round_trip[i].rmse_budget);
    }
    // F32 is a copy.
    mint_quantizer_ref(MINT_TYPE_F32)(x, q, RT_N);
    k->t[MINT_TYPE_F32].to_float(q, y, RT_N);
    cr_expect_arr_eq(x, y, RT_N * sizeof *x);
    free(x), free(y), free(q);
}

// ---------------------------------------------------------------------------------------------
// Dot products: the reference vec_dot equals the double-precision dot of the dequantized weight
// row and the dequantized activation row; they compute the same thing up to f32 rounding of the
// per-block scale products and of the sum over blocks. Budget: 2^-22 (2.4e-7) of sum |w_i a_i|
// (measured worst over 3 lengths x 16 seeds: 4.3e-8, Q5_K).
// The *_1 types add m_w * s_a with s = f16(d * sum q) (the f16 rounding of s is part of the
// format), so their double reference uses s as stored.

static double q8_1_s_correction(mint_type w, const void *wrow, const void *arow, int64_t n) {
    double c = 0;
    const mint_block_q8_1 *a = arow;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++) {
        uint16_t m = w == MINT_TYPE_Q4_1 ? ((const mint_block_q4_1 *)wrow)[ib].m
                                         : ((const mint_block_q5_1 *)wrow)[ib].m;
        int sum = 0;
        for (int j = 0; j < MINT_QK; j++) sum += a[ib].qs[j];
        // The dequantized dot has m * f16(d) * sum; the kernel has m * s.
        c += (double)mint_f16_to_f32(m) *
             ((double)mint_f16_to_f32(a[ib].s) - (double)mint_f16_to_f32(a[ib].d) * sum);
    }
    return c;
}

Test(dot, ref_equals_double_dot_of_dequantized_rows) {
    const mint_kernels *k = ref_table();
    static const int64_t lengths[] = {256, 1024, 4096};
    float *w = malloc(4096 * sizeof *w), *a = malloc(4096 * sizeof *a);
    float *wd = malloc(4096 * sizeof *wd), *ad = malloc(4096 * sizeof *ad);
    uint8_t *wq = malloc(4096 * 4), *aq = malloc(4096 * 4);
    for (size_t ti = 0; ti < N_WEIGHT_TYPES; ti++) {
        mint_type wt = weight_types[ti].w, at = weight_types[ti].a;
        for (size_t li = 0; li < 3; li++) {
            int64_t n = lengths[li];
            for (uint64_t seed = 0; seed < 16; seed++) {
                fill_gaussian(w, n, 100 + seed);
                fill_gaussian(a, n, 200 + seed);
                for (int64_t i = 0; i < n; i++) a[i] *= 3.0f; // activations of another scale
                mint_quantizer_ref(wt)(w, wq, n);
                k->t[at].from_float(a, aq, n);
                k->t[wt].to_float(wq, wd, n);
                k->t[at].to_float(aq, ad, n);
                double ref = 0, mag = 0;
                for (int64_t i = 0; i < n; i++) {
                    ref += (double)wd[i] * ad[i];
                    mag += fabs((double)wd[i] * ad[i]);
                }
                if (at == MINT_TYPE_Q8_1) ref += q8_1_s_correction(wt, wq, aq, n);
                float s;
                k->t[wt].vec_dot(n, &s, wq, aq);
                double rel = fabs((double)s - ref) / mag;
                cr_expect(rel <= 0x1p-22, "%s . %s, n %lld, seed %llu: |%.9g - %.9g| / %.4g = %.3g",
                          mint_type_name(wt), mint_type_name(at), (long long)n,
                          (unsigned long long)seed, (double)s, ref, mag, rel);
            }
        }
    }
    free(w), free(a), free(wd), free(ad), free(wq), free(aq);
}

// ---------------------------------------------------------------------------------------------
// Byte for byte against llama-quantize: every tensor of every fixture file is re-quantized from
// the F32 source with mint_quantizer_ref(its type in the fixture) and must be identical. The
// mixes (q2_k, q3_k_m, ...) and the F16 / Q8_0 fallbacks of stories260K are read from the fixture
// itself, so this covers whatever per-tensor types llama-quantize chose.

typedef struct fixture {
    char src[32]; // F32 source, relative to MINT_TEST_DATA
    char dst[40]; // llama-quantize's output
} fixture;

static const fixture fixtures[] = {
    {"quant/tiny256-f32.gguf", "quant/tiny256-f16.gguf"},
    {"quant/tiny256-f32.gguf", "quant/tiny256-bf16.gguf"},
    {"quant/tiny256-f32.gguf", "quant/tiny256-q8_0.gguf"},
    {"quant/tiny256-f32.gguf", "quant/tiny256-q4_0.gguf"},
    {"quant/tiny256-f32.gguf", "quant/tiny256-q4_1.gguf"},
    {"quant/tiny256-f32.gguf", "quant/tiny256-q5_0.gguf"},
    {"quant/tiny256-f32.gguf", "quant/tiny256-q5_1.gguf"},
    {"quant/tiny256-f32.gguf", "quant/tiny256-q6_k.gguf"},
    {"quant/tiny256-f32.gguf", "quant/tiny256-q2_k-pure.gguf"},
    {"quant/tiny256-f32.gguf", "quant/tiny256-q3_k-pure.gguf"},
    {"quant/tiny256-f32.gguf", "quant/tiny256-q4_k-pure.gguf"},
    {"quant/tiny256-f32.gguf", "quant/tiny256-q5_k-pure.gguf"},
    {"quant/tiny256-f32.gguf", "quant/tiny256-q2_k.gguf"},
    {"quant/tiny256-f32.gguf", "quant/tiny256-q3_k_m.gguf"},
    {"quant/tiny256-f32.gguf", "quant/tiny256-q4_k_m.gguf"},
    {"quant/tiny256-f32.gguf", "quant/tiny256-q5_k_m.gguf"},
    {"stories260K.gguf", "quant/stories260K-f16.gguf"},
    {"stories260K.gguf", "quant/stories260K-q8_0.gguf"},
    {"stories260K.gguf", "quant/stories260K-q4_0.gguf"},
    {"stories260K.gguf", "quant/stories260K-q4_1.gguf"},
    {"stories260K.gguf", "quant/stories260K-q5_0.gguf"},
    {"stories260K.gguf", "quant/stories260K-q5_1.gguf"},
};

ParameterizedTestParameters(llama_quantize, reference_quantizers_write_the_same_bytes) {
    return cr_make_param_array(fixture, fixtures, sizeof fixtures / sizeof fixtures[0]);
}

ParameterizedTest(fixture *fx, llama_quantize, reference_quantizers_write_the_same_bytes,
                  .timeout = MT_HANG(300)) {
    mint_err err;
    mint_file *src = NULL, *dst = NULL;
    cr_assert_eq(mint_file_open(mt_data_path(fx->src), &src, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_file_open(mt_data_path(fx->dst), &dst, &err), MINT_OK, "%s", err.msg);
    mint_file_info info;
    mint_file_get_info(dst, &info);
    int n_quantized = 0;
    for (uint64_t i = 0; i < info.n_tensors; i++) {
        mint_tensor_info t, s;
        cr_assert_eq(mint_file_tensor(dst, i, &t), MINT_OK);
        cr_assert_eq(mint_file_find_tensor(src, t.name, &s), MINT_OK, "%s: %s not in %s", fx->dst,
                     t.name, fx->src);
        cr_assert_eq(s.type, MINT_TYPE_F32, "%s in %s", t.name, fx->src);
        cr_assert(memcmp(s.ne, t.ne, sizeof s.ne) == 0, "%s: shapes differ", t.name);
        mint_quantize_row_fn quantize = mint_quantizer_ref((mint_type)t.type);
        cr_assert_not_null(quantize, "%s: no reference quantizer for %s", t.name,
                           mint_type_name(t.type));
        int64_t n = t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3];
        uint8_t *out = malloc(t.nbytes);
        quantize(s.data, out, n);
        if (memcmp(out, t.data, t.nbytes) != 0) {
            uint64_t bs = mint_type_get(t.type)->size, first = 0, n_bad = 0;
            for (uint64_t b = t.nbytes / bs; b-- > 0;) {
                if (memcmp(out + b * bs, (const uint8_t *)t.data + b * bs, bs) != 0) {
                    n_bad++;
                    first = b;
                }
            }
            cr_expect_fail("%s: %s (%s): %llu of %llu blocks differ, the first is block %llu",
                           fx->dst, t.name, mint_type_name(t.type), (unsigned long long)n_bad,
                           (unsigned long long)(t.nbytes / bs), (unsigned long long)first);
        }
        free(out);
        if (t.type != MINT_TYPE_F32) n_quantized++;
    }
    cr_expect(n_quantized >= 5, "%s: only %d quantized tensors", fx->dst, n_quantized);
    mint_file_close(src);
    mint_file_close(dst);
}
