// test_kernels.c - every instruction-set table against the scalar reference, for every weight
// type: activation conversion byte for byte, dot products within a float budget (the integer
// sums are exact; only the order of the float accumulation over blocks may differ), and gemm
// bit-identical to the same table's vec_dot for every element of every tile shape.
#include "helpers/hang.h"
#include "mint.h"
#include "quant/kernels.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const mint_type weight_types[] = {
    MINT_TYPE_F32,     MINT_TYPE_F16,    MINT_TYPE_BF16,   MINT_TYPE_Q4_0,    MINT_TYPE_Q4_1,
    MINT_TYPE_Q5_0,    MINT_TYPE_Q5_1,   MINT_TYPE_Q8_0,   MINT_TYPE_Q2_K,    MINT_TYPE_Q3_K,
    MINT_TYPE_Q4_K,    MINT_TYPE_Q5_K,   MINT_TYPE_Q6_K,   MINT_TYPE_MXFP4,   MINT_TYPE_TQ1_0,
    MINT_TYPE_TQ2_0,   MINT_TYPE_IQ4_NL, MINT_TYPE_IQ4_XS, MINT_TYPE_IQ3_XXS, MINT_TYPE_IQ3_S,
    MINT_TYPE_IQ2_XXS, MINT_TYPE_IQ2_XS, MINT_TYPE_IQ2_S,  MINT_TYPE_IQ1_S,   MINT_TYPE_IQ1_M,
    MINT_TYPE_Q1_0,    MINT_TYPE_Q2_0,
};
#define N_WEIGHT_TYPES (sizeof weight_types / sizeof *weight_types)

static const mint_type act_types[] = {MINT_TYPE_F32,  MINT_TYPE_F16,  MINT_TYPE_BF16,
                                      MINT_TYPE_Q8_0, MINT_TYPE_Q8_1, MINT_TYPE_Q8_K};

// Deterministic data: a mix of Gaussian-ish values and a few outliers, as activations have.
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static float frand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    double u = (double)(rng >> 11) / 9007199254740992.0;
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    double v = (double)(rng >> 11) / 9007199254740992.0;
    double g = sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
    return (float)(v < 0.01 ? 8.0 * g : g);
}

static void fill(float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] = frand();
}

// The levels above the reference that this machine can run.
static int available(const mint_kernels **out) {
    int n = 0;
    for (int isa = 1; isa < MINT_ISA_COUNT; isa++) {
        const mint_kernels *k = mint_kernels_for((mint_isa)isa);
        if (k) out[n++] = k;
    }
    return n;
}

Test(kernels, reference_table_is_complete) {
    const mint_kernels *ref = mint_kernels_for(MINT_ISA_REF);
    cr_assert_not_null(ref);
    for (size_t i = 0; i < N_WEIGHT_TYPES; i++) {
        const mint_type_kernels *t = &ref->t[weight_types[i]];
        cr_assert(t->to_float && t->vec_dot, "%s", mint_type_name(weight_types[i]));
        cr_assert_not_null(ref->t[t->vec_dot_type].from_float, "%s",
                           mint_type_name(weight_types[i]));
    }
    cr_assert_not_null(mint_kernels_get());
}

Test(kernels, activation_conversion_is_byte_identical) {
    const mint_kernels *ref = mint_kernels_for(MINT_ISA_REF), *k[MINT_ISA_COUNT];
    int nk = available(k);
    const int64_t sizes[] = {256, 512, 2048, 5632};
    float *x = malloc(5632 * sizeof *x);
    uint8_t *a = malloc(5632 * 8), *b = malloc(5632 * 8);
    for (int ki = 0; ki < nk; ki++)
        for (size_t ai = 0; ai < sizeof act_types / sizeof *act_types; ai++)
            for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
                mint_type t = act_types[ai];
                int64_t n = sizes[si];
                if (n % mint_type_block_size(t)) continue;
                fill(x, n);
                size_t bytes = (size_t)mint_type_nbytes(t, (uint64_t)n);
                memset(a, 0xAA, bytes);
                memset(b, 0x55, bytes);
                ref->t[t].from_float(x, a, n);
                k[ki]->t[t].from_float(x, b, n);
                cr_assert_eq(memcmp(a, b, bytes), 0, "%s from_float %s n=%lld", k[ki]->name,
                             mint_type_name(t), (long long)n);
            }
    free(x);
    free(a);
    free(b);
}

typedef struct operands {
    int64_t n;      // row length
    int rows, cols; // weight rows, activation rows
    uint8_t *w;     // [rows] weight rows of the type
    uint8_t *a;     // [cols] activation rows of the vec_dot_type
    size_t w_stride, a_stride;
    double *mag; // [rows * cols] sum of |w_i a_i| (the scale of the float error)
} operands;

static operands make_operands(mint_type wt, int64_t n, int rows, int cols) {
    const mint_kernels *ref = mint_kernels_for(MINT_ISA_REF);
    mint_type at = ref->t[wt].vec_dot_type;
    operands o = {n, rows, cols, NULL, NULL, 0, 0, NULL};
    o.w_stride = (size_t)mint_type_nbytes(wt, (uint64_t)n);
    o.a_stride = (size_t)mint_type_nbytes(at, (uint64_t)n);
    o.w = malloc(o.w_stride * (size_t)rows);
    o.a = malloc(o.a_stride * (size_t)cols);
    o.mag = calloc((size_t)rows * (size_t)cols, sizeof *o.mag);
    float *x = malloc((size_t)n * sizeof *x), *wf = malloc((size_t)n * rows * sizeof *wf),
          *af = malloc((size_t)n * cols * sizeof *af);
    for (int r = 0; r < rows; r++) {
        fill(x, n);
        mint_quantizer_ref(wt)(x, o.w + r * o.w_stride, n);
        ref->t[wt].to_float(o.w + r * o.w_stride, wf + (size_t)r * n, n);
    }
    for (int c = 0; c < cols; c++) {
        fill(x, n);
        ref->t[at].from_float(x, o.a + c * o.a_stride, n);
        ref->t[at].to_float(o.a + c * o.a_stride, af + (size_t)c * n, n);
    }
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            for (int64_t i = 0; i < n; i++)
                o.mag[r * cols + c] += fabs((double)wf[(size_t)r * n + i] * af[(size_t)c * n + i]);
    free(x);
    free(wf);
    free(af);
    return o;
}

static void free_operands(operands *o) {
    free(o->w);
    free(o->a);
    free(o->mag);
}

Test(kernels, vec_dot_matches_reference_within_budget, .timeout = MT_HANG(120)) {
    const mint_kernels *ref = mint_kernels_for(MINT_ISA_REF), *k[MINT_ISA_COUNT];
    int nk = available(k);
    // Budget: 2^-18 of sum |w a|, about 30x float epsilon: the blocks' float partial sums are
    // added in another order (and vector lanes), each addition rounding once.
    const double budget = 1.0 / (1 << 18);
    for (int ki = 0; ki < nk; ki++)
        for (size_t ti = 0; ti < N_WEIGHT_TYPES; ti++) {
            mint_type wt = weight_types[ti];
            cr_assert_eq(k[ki]->t[wt].vec_dot_type, ref->t[wt].vec_dot_type);
            const int64_t sizes[] = {256, 768, 2048, 5632};
            for (size_t si = 0; si < 4; si++) {
                operands o = make_operands(wt, sizes[si], 3, 3);
                for (int r = 0; r < 3; r++)
                    for (int c = 0; c < 3; c++) {
                        float s_ref, s;
                        ref->t[wt].vec_dot(o.n, &s_ref, o.w + r * o.w_stride, o.a + c * o.a_stride);
                        k[ki]->t[wt].vec_dot(o.n, &s, o.w + r * o.w_stride, o.a + c * o.a_stride);
                        double err = fabs((double)s - s_ref), lim = budget * o.mag[r * 3 + c];
                        cr_assert_leq(err, lim, "%s %s n=%lld: %.9g vs ref %.9g (budget %g)",
                                      k[ki]->name, mint_type_name(wt), (long long)o.n, s, s_ref,
                                      lim);
                    }
                free_operands(&o);
            }
        }
}

Test(kernels, gemm_equals_vec_dot_bit_for_bit, .timeout = MT_HANG(120)) {
    const mint_kernels *k[MINT_ISA_COUNT + 1];
    int nk = available(k);
    k[nk++] = mint_kernels_for(MINT_ISA_REF);
    for (int ki = 0; ki < nk; ki++)
        for (size_t ti = 0; ti < N_WEIGHT_TYPES; ti++) {
            mint_type wt = weight_types[ti];
            const mint_type_kernels *tk = &k[ki]->t[wt];
            if (!tk->gemm) continue;
            operands o = make_operands(wt, 512, 19, 13);
            float *y = malloc(sizeof(float) * 32 * 32);
            // Every tile shape from 1x1 to 19x13, at an offset, with a wider output stride
            // (under the sanitizers, several times slower, a third of them: every nr and every nc
            // still; the Release run takes all).
            for (int nr = 1; nr <= 19; nr++)
                for (int nc = 1; nc <= 13; nc++) {
                    if (sizeof MINT_SANITIZE_FLAGS > 1 && (nr + nc) % 3) continue;
                    const size_t y_stride = 29;
                    for (int i = 0; i < 32 * 32; i++) y[i] = NAN;
                    tk->gemm(o.n, o.w, o.w_stride, nr, o.a, o.a_stride, nc, y, y_stride);
                    for (int c = 0; c < nc; c++)
                        for (int r = 0; r < nr; r++) {
                            float s;
                            tk->vec_dot(o.n, &s, o.w + r * o.w_stride, o.a + c * o.a_stride);
                            float g = y[c * y_stride + r];
                            cr_assert(memcmp(&g, &s, sizeof s) == 0,
                                      "%s %s gemm %dx%d element (%d,%d): %.9g vs vec_dot %.9g",
                                      k[ki]->name, mint_type_name(wt), nr, nc, r, c, g, s);
                        }
                    // Nothing outside the tile is written.
                    for (int c = 0; c < 32; c++)
                        for (int r = 0; r < 29; r++)
                            if (c >= nc || r >= nr)
                                cr_assert(isnan(y[c * y_stride + r]), "%s %s wrote outside",
                                          k[ki]->name, mint_type_name(wt));
                }
            free(y);
            free_operands(&o);
        }
}

Test(kernels, to_float_matches_reference) {
    const mint_kernels *ref = mint_kernels_for(MINT_ISA_REF), *k[MINT_ISA_COUNT];
    int nk = available(k);
    for (int ki = 0; ki < nk; ki++)
        for (size_t ti = 0; ti < N_WEIGHT_TYPES; ti++) {
            mint_type wt = weight_types[ti];
            operands o = make_operands(wt, 2048, 1, 1);
            float *a = malloc(2048 * sizeof *a), *b = malloc(2048 * sizeof *b);
            ref->t[wt].to_float(o.w, a, 2048);
            k[ki]->t[wt].to_float(o.w, b, 2048);
            cr_assert_eq(memcmp(a, b, 2048 * sizeof *a), 0, "%s %s to_float", k[ki]->name,
                         mint_type_name(wt));
            free(a);
            free(b);
            free_operands(&o);
        }
}

Test(kernels, isa_override_only_lowers) {
    // MINT_ISA picks a level at start-up; mint_kernels_for ignores it. Whatever was chosen is
    // a level this CPU has.
    const mint_kernels *k = mint_kernels_get();
    cr_assert_not_null(mint_kernels_for(k->isa));
    cr_assert_leq((int)k->isa, (int)mint_isa_detect());
}

// Compares one gemm call of a level with that level's vec_dot, element by element (bit-exact),
// and checks that nothing outside the tile was written.
static void check_tile(const mint_kernels *k, mint_type wt, const operands *o, int nr, int nc) {
    const mint_type_kernels *tk = &k->t[wt];
    const size_t y_stride = (size_t)nr + 3;
    const size_t ny = y_stride * (size_t)(nc + 1);
    float *y = malloc(ny * sizeof *y);
    for (size_t i = 0; i < ny; i++) y[i] = NAN;
    tk->gemm(o->n, o->w, o->w_stride, nr, o->a, o->a_stride, nc, y, y_stride);
    for (int c = 0; c < nc; c++)
        for (int r = 0; r < nr; r++) {
            float s;
            tk->vec_dot(o->n, &s, o->w + r * o->w_stride, o->a + c * o->a_stride);
            float g = y[c * y_stride + r];
            cr_assert(memcmp(&g, &s, sizeof s) == 0,
                      "%s %s n=%lld gemm %dx%d element (%d,%d): %.9g vs vec_dot %.9g", k->name,
                      mint_type_name(wt), (long long)o->n, nr, nc, r, c, g, s);
        }
    for (size_t i = 0; i < ny; i++)
        if (i % y_stride >= (size_t)nr || i / y_stride >= (size_t)nc)
            cr_assert(isnan(y[i]), "%s %s wrote outside the tile", k->name, mint_type_name(wt));
    free(y);
}

// Long rows cross the kernels' K chunks (the partial sums go through y between chunks), and a
// full 64 x 64 tile, a one-token column of many rows and odd shapes cross their row groups and
// column blocks.
Test(kernels, gemm_equals_vec_dot_on_long_rows_and_full_tiles, .timeout = MT_HANG(240)) {
    const mint_kernels *k[MINT_ISA_COUNT + 1];
    int nk = available(k);
    const int shapes[][2] = {{64, 64}, {45, 1}, {1, 9}, {21, 7}};
    for (int ki = 0; ki < nk; ki++)
        for (size_t ti = 0; ti < N_WEIGHT_TYPES; ti++) {
            mint_type wt = weight_types[ti];
            if (!k[ki]->t[wt].gemm) continue;
            operands o = make_operands(wt, 2816, 64, 64);
            for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
                check_tile(k[ki], wt, &o, shapes[si][0], shapes[si][1]);
            free_operands(&o);
        }
}

// Rows of 128K elements (longer than a one-token K chunk of the AVX-512 kernels): the one-token
// path still equals vec_dot, and both stay within the budget of the reference.
Test(kernels, one_token_rows_of_128k_elements, .timeout = MT_HANG(120)) {
    const mint_kernels *ref = mint_kernels_for(MINT_ISA_REF), *k[MINT_ISA_COUNT];
    int nk = available(k);
    const mint_type types[] = {
        MINT_TYPE_Q4_0,   MINT_TYPE_Q4_1,   MINT_TYPE_Q8_0,    MINT_TYPE_Q4_K,  MINT_TYPE_MXFP4,
        MINT_TYPE_IQ4_NL, MINT_TYPE_IQ4_XS, MINT_TYPE_IQ3_XXS, MINT_TYPE_IQ3_S, MINT_TYPE_IQ2_XXS,
        MINT_TYPE_IQ2_XS, MINT_TYPE_IQ2_S,  MINT_TYPE_IQ1_M};
    for (int ki = 0; ki < nk; ki++)
        for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
            if (!k[ki]->t[types[ti]].gemm) continue;
            operands o = make_operands(types[ti], 131072 + 512, 3, 1);
            check_tile(k[ki], types[ti], &o, 3, 1);
            for (int r = 0; r < 3; r++) {
                float s_ref, s;
                ref->t[types[ti]].vec_dot(o.n, &s_ref, o.w + r * o.w_stride, o.a);
                k[ki]->t[types[ti]].vec_dot(o.n, &s, o.w + r * o.w_stride, o.a);
                cr_assert_leq(fabs((double)s - s_ref), o.mag[r] / (1 << 18), "%s %s row %d",
                              k[ki]->name, mint_type_name(types[ti]), r);
            }
            free_operands(&o);
        }
}

// The shortest rows a type allows (one block or super-block, and a few), where a kernel's first
// window is also its last and only partly inside the row.
Test(kernels, gemm_equals_vec_dot_on_the_shortest_rows) {
    const mint_kernels *ref = mint_kernels_for(MINT_ISA_REF), *k[MINT_ISA_COUNT];
    int nk = available(k);
    for (int ki = 0; ki < nk; ki++)
        for (size_t ti = 0; ti < N_WEIGHT_TYPES; ti++) {
            mint_type wt = weight_types[ti];
            if (!k[ki]->t[wt].gemm) continue;
            const int64_t blk = mint_type_block_size(wt);
            for (int64_t nb = 1; nb <= 3; nb++) {
                operands o = make_operands(wt, (blk > 1 ? blk : 16) * nb, 18, 10);
                check_tile(k[ki], wt, &o, 18, 10);
                check_tile(k[ki], wt, &o, 17, 1);
                float s_ref, s;
                ref->t[wt].vec_dot(o.n, &s_ref, o.w, o.a);
                k[ki]->t[wt].vec_dot(o.n, &s, o.w, o.a);
                cr_assert_leq(fabs((double)s - s_ref), o.mag[0] / (1 << 18), "%s %s n=%lld",
                              k[ki]->name, mint_type_name(wt), (long long)o.n);
                free_operands(&o);
            }
        }
}

// A tile's output may end at the end of a buffer: gemm must not read y past its last column
// (the K-chunked tiles carry partial sums through y, and their micro-tiles are wider than the
// last columns). y is placed so that it ends where an inaccessible page begins.
Test(kernels, gemm_reads_no_output_past_its_tile, .timeout = MT_HANG(120)) {
    const mint_kernels *k[MINT_ISA_COUNT + 1];
    int nk = available(k);
    const long page = sysconf(_SC_PAGESIZE);
    uint8_t *map = mmap(NULL, 2 * (size_t)page + (1 << 20), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(map, MAP_FAILED);
    uint8_t *guard = map + (1 << 20) + page;
    cr_assert_eq(mprotect(guard, (size_t)page, PROT_NONE), 0);
    for (int ki = 0; ki < nk; ki++)
        for (size_t ti = 0; ti < N_WEIGHT_TYPES; ti++) {
            mint_type wt = weight_types[ti];
            if (!k[ki]->t[wt].gemm) continue;
            operands o = make_operands(wt, 2560, 32, 13); // several K chunks of every kernel
            for (int nc = 2; nc <= 13; nc++) {
                const int nr = 32;
                float *y = (float *)guard - (size_t)(nc - 1) * nr - nr;
                k[ki]->t[wt].gemm(o.n, o.w, o.w_stride, nr, o.a, o.a_stride, nc, y, (size_t)nr);
            }
            free_operands(&o);
        }
    munmap(map, 2 * (size_t)page + (1 << 20));
}
