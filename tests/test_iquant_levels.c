// test_iquant_levels.c - every kernel level computes the i-quants' dot products with exactly the
// reference's bits: IQ3_XXS, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M against Q8_K.
//
// Their reference (quant/quant_iq3_ref.c, quant/quant_iq2_ref.c, quant/quant_iq1_ref.c) sums
// each super-block exactly in integers and then takes unfused f32 steps in super-block order;
// the SIMD levels keep both (the AVX-512 panels of quant/iquant_x512.h, the row-wise AVX2 and
// NEON kernels), so vec_dot and every gemm element must equal the reference's vec_dot with
// memcmp, for one token (the gemv paths, rows crossing 16-row groups and a partial last one),
// small batches, and a tile of 256 tokens over several K chunks.
#include "helpers/helpers.h"
#include "helpers/inputs.h"
#include "quant/kernels.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static uint64_t sm_state;

static const mint_type iq_types[] = {MINT_TYPE_IQ3_XXS, MINT_TYPE_IQ3_S, MINT_TYPE_IQ2_XXS,
                                     MINT_TYPE_IQ2_XS,  MINT_TYPE_IQ2_S, MINT_TYPE_IQ1_S,
                                     MINT_TYPE_IQ1_M};

typedef struct operands {
    int64_t n;            // elements per row
    int rows, cols;       // weight rows, activation rows
    unsigned char *w, *a; // [rows][ws] weight rows, [cols][as] Q8_K rows
    size_t ws, as;        // bytes per row
} operands;

static operands make(mint_type t, int64_t n, int rows, int cols) {
    operands o = {n,
                  rows,
                  cols,
                  NULL,
                  NULL,
                  (size_t)mint_row_size(t, n),
                  (size_t)mint_row_size(MINT_TYPE_Q8_K, n)};
    const mint_kernels *ref = mint_kernels_for(MINT_ISA_REF);
    float *x = malloc(sizeof(float) * (size_t)n);
    o.w = malloc(o.ws * (size_t)rows);
    o.a = malloc(o.as * (size_t)cols);
    for (int r = 0; r < rows; r++) {
        // Some rows with a scale far from the others, so that sub-block scales vary.
        const double s = r % 5 == 0 ? 8.0 : 1.0;
        for (int64_t i = 0; i < n; i++)
            x[i] = (float)(mt_bell(&sm_state) * (i % 97 == 0 ? 6 * s : s));
        mint_quantizer_ref(t)(x, o.w + (size_t)r * o.ws, n);
    }
    for (int c = 0; c < cols; c++) {
        for (int64_t i = 0; i < n; i++) x[i] = (float)(mt_bell(&sm_state) * (c + 1));
        ref->t[MINT_TYPE_Q8_K].from_float(x, o.a + (size_t)c * o.as, n);
    }
    free(x);
    return o;
}

static void free_operands(operands *o) {
    free(o->w);
    free(o->a);
}

// Every level's vec_dot, and its gemm over rows x nc for each nc of ncs[0..n_ncs) (at most
// cols), against the reference.
static void check(mint_type t, const operands *o, const int *ncs, int n_ncs) {
    const mint_kernels *ref = mint_kernels_for(MINT_ISA_REF);
    float *want = malloc(sizeof(float) * (size_t)o->rows * (size_t)o->cols);
    float *y = malloc(sizeof(float) * (size_t)o->rows * (size_t)o->cols);
    for (int c = 0; c < o->cols; c++)
        for (int r = 0; r < o->rows; r++)
            ref->t[t].vec_dot(o->n, &want[c * o->rows + r], o->w + (size_t)r * o->ws,
                              o->a + (size_t)c * o->as);
    for (int isa = 0; isa < MINT_ISA_COUNT; isa++) {
        const mint_kernels *k = mint_kernels_for((mint_isa)isa);
        if (!k) continue;
        const mint_type_kernels *tk = &k->t[t];
        cr_assert(tk->vec_dot, "%s has no %s kernel", k->name, mint_type_name(t));
        for (int r = 0; r < o->rows; r += 7) {
            float s;
            tk->vec_dot(o->n, &s, o->w + (size_t)r * o->ws, o->a);
            cr_assert(!memcmp(&s, &want[r], sizeof s), "%s %s vec_dot n=%lld row %d: %.9g vs %.9g",
                      k->name, mint_type_name(t), (long long)o->n, r, s, want[r]);
        }
        if (!tk->gemm) continue;
        for (int j = 0; j < n_ncs; j++) {
            const int ncols = ncs[j];
            memset(y, 0xFF, sizeof(float) * (size_t)o->rows * (size_t)o->cols);
            tk->gemm(o->n, o->w, o->ws, o->rows, o->a, o->as, ncols, y, (size_t)o->rows);
            for (int c = 0; c < ncols; c++)
                for (int r = 0; r < o->rows; r++) {
                    const size_t i = (size_t)c * (size_t)o->rows + (size_t)r;
                    cr_assert(!memcmp(&y[i], &want[i], sizeof *y),
                              "%s %s gemm n=%lld %dx%d at (%d, %d): %.9g vs %.9g", k->name,
                              mint_type_name(t), (long long)o->n, o->rows, ncols, r, c, y[i],
                              want[i]);
                }
        }
    }
    free(want);
    free(y);
}

Test(iquant_levels, one_token_and_small_batches_cross_row_groups, .timeout = MT_HANG(240)) {
    const int64_t sizes[] = {256, 1280}; // one super-block; five, past a 4-block K chunk
    sm_state = 7;
    for (size_t ti = 0; ti < sizeof iq_types / sizeof *iq_types; ti++)
        for (size_t si = 0; si < 2; si++) {
            operands o = make(iq_types[ti], sizes[si], 37, 13);
            check(iq_types[ti], &o, (const int[]){1, 2, 3, 4, 5, 6, 7, 9, 13}, 9);
            free_operands(&o);
        }
}

// 40 rows (two groups of 16 and a partial one) by up to 256 tokens: the AVX-512 levels take the
// grid i-quants' batches in tiles of 256 (MINT_IQ_TOKEN_BLOCK, quant/simd_avx512.h).
Test(iquant_levels, a_full_tile_over_several_k_chunks, .timeout = MT_HANG(240)) {
    sm_state = 11;
    for (size_t ti = 0; ti < sizeof iq_types / sizeof *iq_types; ti++) {
        operands o = make(iq_types[ti], 9 * 256, 40, 256);
        check(iq_types[ti], &o, (const int[]){1, 79, 256}, 3);
        free_operands(&o);
    }
}
