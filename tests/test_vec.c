// test_vec.c - the float vector kernels of softmax and attention (quant/kernels.h:
// mint_vec_kernels): every level this machine has against the scalar reference with memcmp
// (they are specified to the bit, so the budget is zero), over random data and the edge cases;
// and the reference itself against double precision: mint's e^x within its stated ulp budget,
// the products within a rounding budget.
#include "helpers/hang.h"
#include "mint.h"
#include "quant/fp16.h"
#include "quant/kernels.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x853C49E6748FEA9Bull;
static double uniform(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}
static float frange(double lo, double hi) {
    return (float)(lo + (hi - lo) * uniform());
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

static const mint_vec_kernels *ref(void) {
    return &mint_kernels_for(MINT_ISA_REF)->vec;
}

// Bits equal, or both NaN (a NaN's payload is not specified).
static int same(float a, float b) {
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

// Inputs for e^x: the edges, then random values over the whole useful range and beyond.
enum { N_EXP = 4096 };
static void exp_inputs(float *x) {
    const float edges[] = {
        0.0f,        -0.0f,       INFINITY,   -INFINITY, NAN,         -NAN,        1.0f,
        -1.0f,       0x1p-149f,   -0x1p-149f, 0x1p-126f, 1e-30f,      -1e-30f,     88.72283f,
        88.72284f,   88.7228394f, 88.73f,     89.0f,     89.5f,       100.0f,      1e30f,
        FLT_MAX,     -87.33654f,  -87.3366f,  -100.0f,   -103.27893f, -103.97208f, -103.9721f,
        -104.0f,     -104.5f,     -150.0f,    -1e30f,    -FLT_MAX,    0.34657359f, -0.34657359f,
        0.34657362f, 0.6931472f,  -0.6931472f};
    const int ne = (int)(sizeof edges / sizeof *edges);
    for (int i = 0; i < N_EXP; i++)
        x[i] = i < ne       ? edges[i]
               : i % 3 == 0 ? frange(-110, 95)
               : i % 3 == 1 ? frange(-20, 0)
                            : frange(-1, 1);
}

Test(vec, exp_is_the_reference_bit_for_bit) {
    const mint_kernels *k[MINT_ISA_COUNT];
    const int nk = available(k);
    static float x[N_EXP], want[N_EXP], got[N_EXP];
    exp_inputs(x);
    ref()->exp(x, want, N_EXP);
    for (int ki = 0; ki < nk; ki++)
        for (int n = 0; n <= 70; n++) // every tail length, at an odd offset
            for (int off = 0; off < 2; off++) {
                const int at = off ? 37 : 0;
                for (int i = 0; i < n + 3; i++) got[i] = -7.0f;
                k[ki]->vec.exp(x + at, got, n);
                for (int i = 0; i < n; i++)
                    cr_assert(same(got[i], want[at + i]), "%s exp(%a) = %a, reference %a",
                              k[ki]->name, (double)x[at + i], (double)got[i], (double)want[at + i]);
                for (int i = n; i < n + 3; i++)
                    cr_assert(got[i] == -7.0f, "%s exp wrote past n=%d", k[ki]->name, n);
            }
    for (int ki = 0; ki < nk; ki++) { // all of it, in place
        memcpy(got, x, sizeof got);
        k[ki]->vec.exp(got, got, N_EXP);
        for (int i = 0; i < N_EXP; i++)
            cr_assert(same(got[i], want[i]), "%s exp(%a) in place", k[ki]->name, (double)x[i]);
    }
}

Test(vec, exp_special_values) {
    const mint_kernels *k[MINT_ISA_COUNT + 1];
    int nk = available(k);
    k[nk++] = mint_kernels_for(MINT_ISA_REF);
    const float in[] = {-INFINITY, -1e30f,    -104.0f, -103.9f,  0.0f, -0.0f,
                        88.7228f,  88.72284f, 89.0f,   INFINITY, NAN};
    for (int ki = 0; ki < nk; ki++) {
        float y[11];
        k[ki]->vec.exp(in, y, 11);
        cr_assert(y[0] == 0.0f && !signbit(y[0]), "%s: e^-inf = %a", k[ki]->name, (double)y[0]);
        cr_assert(y[1] == 0.0f && y[2] == 0.0f, "%s: e^-1e30, e^-104 = %a, %a", k[ki]->name,
                  (double)y[1], (double)y[2]);
        cr_assert(y[3] == 0x1p-149f, "%s: e^-103.9 = %a (2^-149, the smallest subnormal)",
                  k[ki]->name, (double)y[3]);
        cr_assert(y[4] == 1.0f && y[5] == 1.0f, "%s: e^0 = %a", k[ki]->name, (double)y[4]);
        cr_assert(isfinite(y[6]) && y[6] > 3.4e38f, "%s: e^88.7228 = %a", k[ki]->name,
                  (double)y[6]);
        cr_assert(isinf(y[7]) && isinf(y[8]) && isinf(y[9]) && y[9] > 0, "%s: overflow",
                  k[ki]->name);
        cr_assert(isnan(y[10]), "%s: e^NaN = %a", k[ki]->name, (double)y[10]);
    }
}

// Distance from the exact e^x in units in the last place of the result's binade (subnormal
// results: units of 2^-149).
static double ulps(float y, double x) {
    const double e = exp(x);
    int ex;
    frexp(e, &ex);
    const double ulp = e < 0x1p-126 ? 0x1p-149 : ldexp(1.0, ex - 24);
    return fabs((double)y - e) / ulp;
}

// Budget: 1.05 ulp for normal results, 1 unit of 2^-149 for subnormal ones (vec_exp.h: measured
// over every float in [-104, 89], the worst are 1.013 and 0.75). Here every 61st float of the
// range (36 million inputs), each level compared with the reference on the same inputs.
Test(vec, exp_within_its_ulp_budget, .timeout = MT_HANG(120)) {
    const mint_kernels *k[MINT_ISA_COUNT];
    const int nk = available(k);
    enum { CHUNK = 4096 };
    static float x[CHUNK], y[CHUNK], z[CHUNK];
    double worst = 0, worst_sub = 0;
    long n_checked = 0;
    for (int neg = 0; neg < 2; neg++) {
        uint32_t u = neg ? 0x80000000u : 0, end = neg ? 0x80000000u | 0x42D00000u /* 104 */
                                                      : 0x42B20000u /* 89 */;
        while (u < end) {
            int n = 0;
            for (; n < CHUNK && u < end; n++, u += 61) x[n] = from_bits(u);
            ref()->exp(x, y, n);
            for (int i = 0; i < n; i++) {
                const double e = exp((double)x[i]);
                if (e > FLT_MAX) {
                    cr_assert(isinf(y[i]) || e < 0x1.ffffffp127, "e^%a = %a", (double)x[i],
                              (double)y[i]);
                    continue;
                }
                const double d = ulps(y[i], x[i]);
                if (e < 0x1p-126)
                    worst_sub = fmax(worst_sub, d);
                else
                    worst = fmax(worst, d);
                cr_assert(d <= (e < 0x1p-126 ? 1.0 : 1.05), "e^%a = %a: %.3f ulp", (double)x[i],
                          (double)y[i], d);
            }
            n_checked += n;
            for (int ki = 0; ki < nk; ki++) {
                k[ki]->vec.exp(x, z, n);
                cr_assert_eq(memcmp(y, z, sizeof(float) * (size_t)n), 0,
                             "%s exp differs from the reference near %a", k[ki]->name,
                             (double)x[0]);
            }
        }
    }
    cr_log_info("exp: %ld inputs, worst %.4f ulp (normal results), %.3f x 2^-149 (subnormal)",
                n_checked, worst, worst_sub);
}

Test(vec, max_is_the_reference_bit_for_bit) {
    const mint_kernels *k[MINT_ISA_COUNT];
    const int nk = available(k);
    float x[300];
    for (int trial = 0; trial < 200; trial++) {
        const int n = trial < 70 ? trial : (int)(uniform() * 300);
        for (int i = 0; i < n; i++) {
            const double u = uniform();
            x[i] = u < 0.1    ? -INFINITY
                   : u < 0.2  ? 0.0f
                   : u < 0.3  ? -0.0f
                   : u < 0.32 ? NAN
                              : frange(-50, 50);
        }
        if (trial % 4 == 1)
            for (int i = 0; i < n; i++) x[i] = i % 2 ? 0.0f : -0.0f; // zeros of both signs only
        const float m0 = trial % 3 == 0 ? -INFINITY : trial % 3 == 1 ? -0.0f : frange(-60, 60);
        const float want = ref()->max(x, n, m0);
        cr_assert(!(want == 0.0f && signbit(want)), "reference max gave -0");
        for (int ki = 0; ki < nk; ki++) {
            const float got = k[ki]->vec.max(x, n, m0);
            cr_assert(same(got, want), "%s max n=%d from %a: %a, reference %a", k[ki]->name, n,
                      (double)m0, (double)got, (double)want);
        }
    }
}

Test(vec, exp_sum_is_the_reference_bit_for_bit) {
    const mint_kernels *k[MINT_ISA_COUNT];
    const int nk = available(k);
    static float x[2100], a[2100], b[2100];
    const int lens[] = {0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 64, 100, 1000, 2049};
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
        for (int kind = 0; kind < 3; kind++) {
            const int n = lens[li];
            for (int i = 0; i < n; i++)
                x[i] = kind == 0 ? frange(-30, 3) : kind == 1 ? frange(-200, 0) : -INFINITY;
            if (kind == 2 && n > 0) x[n / 2] = 0.5f; // one live score among masked ones
            float m = -INFINITY;
            for (int i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
            memcpy(a, x, sizeof(float) * (size_t)n);
            a[n] = -7.0f;
            const double want = ref()->exp_sum(a, n, m);
            double check = 0;
            for (int i = 0; i < n; i++) check += exp((double)x[i] - m);
            cr_assert(fabs(want - check) <= 2e-6 * check, "n=%d: sum %.17g vs %.17g", n, want,
                      check);
            for (int ki = 0; ki < nk; ki++) {
                memcpy(b, x, sizeof(float) * (size_t)n);
                b[n] = -7.0f;
                const double got = k[ki]->vec.exp_sum(b, n, m);
                cr_assert(memcmp(&got, &want, sizeof got) == 0, "%s exp_sum n=%d: %.17g vs %.17g",
                          k[ki]->name, n, got, want);
                cr_assert_eq(memcmp(a, b, sizeof(float) * (size_t)(n + 1)), 0,
                             "%s exp_sum n=%d: values differ", k[ki]->name, n);
            }
        }
}

Test(vec, scale_and_round_f16_are_the_reference_bit_for_bit) {
    const mint_kernels *k[MINT_ISA_COUNT];
    const int nk = available(k);
    float x[200], a[201], b[201];
    for (int n = 0; n <= 200; n += n < 40 ? 1 : 37) {
        for (int i = 0; i < n; i++) {
            const double u = uniform();
            // RNE ties of f16 (an f16 value plus half its ulp), overflow, subnormal f16 range
            x[i] = u < 0.1    ? mint_f16_to_f32((uint16_t)(uniform() * 0x7BFF)) * (1.0f + 0x1p-11f)
                   : u < 0.15 ? 65520.0f
                   : u < 0.2  ? frange(-1e-6, 1e-6)
                   : u < 0.22 ? INFINITY
                              : frange(-100, 100);
        }
        const float c = frange(-3, 3);
        for (int op = 0; op < 2; op++) {
            memcpy(a, x, sizeof(float) * (size_t)n);
            a[n] = -7.0f;
            if (op == 0)
                ref()->scale(a, n, c);
            else
                ref()->round_f16(a, n);
            for (int ki = 0; ki < nk; ki++) {
                memcpy(b, x, sizeof(float) * (size_t)n);
                b[n] = -7.0f;
                if (op == 0)
                    k[ki]->vec.scale(b, n, c);
                else
                    k[ki]->vec.round_f16(b, n);
                cr_assert_eq(memcmp(a, b, sizeof(float) * (size_t)(n + 1)), 0, "%s %s n=%d",
                             k[ki]->name, op ? "round_f16" : "scale", n);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Attention's products

typedef struct tile_case {
    int64_t d;
    int nr, nk;
} tile_case;

static const tile_case tile_cases[] = {
    {64, 8, 32}, {64, 64, 32}, {64, 1, 32}, {64, 13, 33}, {128, 9, 64},
    {8, 7, 7},   {16, 5, 16},  {17, 3, 17}, {1, 4, 1},    {3, 2, 100},
    {64, 6, 48}, {63, 11, 31}, {100, 4, 5}, {48, 12, 20}, {33, 2, 80},
};

// Fills n elements of type f16 / f32 with values in [-2, 2] and returns them as floats too.
static void fill_type(int f16, void *dst, float *as_float, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const float v = frange(-2, 2);
        if (f16) {
            ((uint16_t *)dst)[i] = mint_f32_to_f16(v);
            as_float[i] = mint_f16_to_f32(((uint16_t *)dst)[i]);
        } else {
            ((float *)dst)[i] = v;
            as_float[i] = v;
        }
    }
}

// Budget of one chain of n fused multiply-adds against the exact sum: n roundings of at most
// 2^-24 of a partial sum, each bounded by sum |x y|.
static double chain_budget(int64_t n, double mag) {
    return (double)(n + 1) * 0x1p-24 * mag;
}

Test(vec, attention_products_are_the_reference_bit_for_bit, .timeout = MT_HANG(120)) {
    const mint_kernels *k[MINT_ISA_COUNT];
    const int nk = available(k);
    for (size_t ci = 0; ci < sizeof tile_cases / sizeof *tile_cases; ci++)
        for (int f16 = 0; f16 < 2; f16++) {
            const tile_case tc = tile_cases[ci];
            const size_t el = f16 ? 2 : 4;
            // strides wider than the rows, so a kernel that runs past a row is caught
            const size_t qs = (size_t)tc.d + 3, ks = (size_t)tc.nk + 5, ss = (size_t)tc.nk + 2;
            const size_t vs = (size_t)tc.d + 7, os = (size_t)tc.d + 1, ps = (size_t)tc.nk + 4;
            float *q = malloc(sizeof(float) * qs * (size_t)tc.nr);
            float *kf = malloc(sizeof(float) * ks * (size_t)tc.d);
            float *vf = malloc(sizeof(float) * vs * (size_t)tc.nk);
            void *kt = malloc(el * ks * (size_t)tc.d), *v = malloc(el * vs * (size_t)tc.nk);
            float *p = malloc(sizeof(float) * ps * (size_t)tc.nr);
            float *s0 = malloc(sizeof(float) * ss * (size_t)tc.nr),
                  *s1 = malloc(sizeof(float) * ss * (size_t)tc.nr);
            float *o_in = malloc(sizeof(float) * os * (size_t)tc.nr);
            float *o0 = malloc(sizeof(float) * os * (size_t)tc.nr),
                  *o1 = malloc(sizeof(float) * os * (size_t)tc.nr);
            float a[64];
            for (size_t i = 0; i < qs * (size_t)tc.nr; i++) q[i] = frange(-2, 2);
            fill_type(f16, kt, kf, ks * (size_t)tc.d);
            fill_type(f16, v, vf, vs * (size_t)tc.nk);
            for (size_t i = 0; i < ps * (size_t)tc.nr; i++) p[i] = (float)uniform();
            for (size_t i = 0; i < os * (size_t)tc.nr; i++) o_in[i] = frange(-1, 1);
            for (int r = 0; r < tc.nr; r++)
                a[r] = r % 3 == 0 ? 1.0f : r % 3 == 1 ? 0.0f : (float)uniform();
            const mint_qk_fn qk_ref = f16 ? ref()->qk_f16 : ref()->qk_f32;
            const mint_pv_fn pv_ref = f16 ? ref()->pv_f16 : ref()->pv_f32;
            const float scale = 0.37f;
            for (size_t i = 0; i < ss * (size_t)tc.nr; i++) s0[i] = NAN;
            qk_ref(tc.d, q, qs, tc.nr, kt, ks, tc.nk, scale, s0, ss);
            // the reference against double: a chain of d fused multiply-adds, then the scale
            for (int r = 0; r < tc.nr; r++)
                for (size_t j = 0; j < ss; j++) {
                    const float got = s0[(size_t)r * ss + j];
                    if (j >= (size_t)tc.nk) {
                        cr_assert(isnan(got), "qk reference wrote past nk");
                        continue;
                    }
                    double e = 0, mag = 0;
                    for (int64_t i = 0; i < tc.d; i++) {
                        const double t =
                            (double)q[(size_t)r * qs + (size_t)i] * kf[(size_t)i * ks + j];
                        e += t, mag += fabs(t);
                    }
                    cr_assert(fabs(got - e * scale) <=
                                  (chain_budget(tc.d, mag) + 0x1p-24 * fabs(e)) * scale,
                              "qk reference d=%lld (%d, %zu): %.9g vs %.9g", (long long)tc.d, r, j,
                              (double)got, e * scale);
                }
            for (int with_a = 0; with_a < 2; with_a++) {
                memcpy(o0, o_in, sizeof(float) * os * (size_t)tc.nr);
                pv_ref(tc.d, p, ps, tc.nr, v, vs, tc.nk, with_a ? a : NULL, o0, os);
                for (int r = 0; r < tc.nr; r++)
                    for (size_t i = 0; i < os; i++) {
                        const size_t at = (size_t)r * os + i;
                        if (i >= (size_t)tc.d) {
                            cr_assert(same(o0[at], o_in[at]), "pv reference wrote past d");
                            continue;
                        }
                        double e = 0, mag = 0;
                        for (int j = 0; j < tc.nk; j++) {
                            const double t =
                                (double)p[(size_t)r * ps + (size_t)j] * vf[(size_t)j * vs + i];
                            e += t, mag += fabs(t);
                        }
                        const double base = (double)o_in[at] * (with_a ? a[r] : 1.0);
                        cr_assert(fabs(o0[at] - (base + e)) <=
                                      chain_budget(tc.nk, mag) + 0x1p-24 * (fabs(base + e) + mag),
                                  "pv reference (%d, %zu): %.9g vs %.9g", r, i, (double)o0[at],
                                  base + e);
                    }
                for (int ki = 0; ki < nk; ki++) {
                    const mint_pv_fn pvk = f16 ? k[ki]->vec.pv_f16 : k[ki]->vec.pv_f32;
                    memcpy(o1, o_in, sizeof(float) * os * (size_t)tc.nr);
                    pvk(tc.d, p, ps, tc.nr, v, vs, tc.nk, with_a ? a : NULL, o1, os);
                    cr_assert_eq(memcmp(o0, o1, sizeof(float) * os * (size_t)tc.nr), 0,
                                 "%s pv_%s d=%lld nr=%d nk=%d%s", k[ki]->name, f16 ? "f16" : "f32",
                                 (long long)tc.d, tc.nr, tc.nk, with_a ? " with a" : "");
                }
            }
            for (int ki = 0; ki < nk; ki++) {
                const mint_qk_fn qkk = f16 ? k[ki]->vec.qk_f16 : k[ki]->vec.qk_f32;
                for (size_t i = 0; i < ss * (size_t)tc.nr; i++) s1[i] = NAN;
                qkk(tc.d, q, qs, tc.nr, kt, ks, tc.nk, scale, s1, ss);
                for (size_t i = 0; i < ss * (size_t)tc.nr; i++)
                    cr_assert(same(s0[i], s1[i]), "%s qk_%s d=%lld nr=%d nk=%d [%zu]: %a vs %a",
                              k[ki]->name, f16 ? "f16" : "f32", (long long)tc.d, tc.nr, tc.nk, i,
                              (double)s1[i], (double)s0[i]);
            }
            free(q), free(kf), free(vf), free(kt), free(v), free(p), free(s0), free(s1);
            free(o_in), free(o0), free(o1);
        }
}

// The values of a quantized cache: pv_q8_0 / pv_q4_0 over quantized rows (in place, a stride
// wider than the row) give the bits of the types' to_float into f32 rows and then pv_f32, at the
// reference and at every level. The dequantize-then-multiply path is the plain twin the fused
// kernels replace in ops/attention_quant.c.
Test(vec, quantized_values_are_dequantize_then_pv_f32, .timeout = MT_HANG(120)) {
    const mint_kernels *k[MINT_ISA_COUNT];
    const int nk = available(k);
    const mint_kernels *kr = mint_kernels_for(MINT_ISA_REF);
    static const tile_case qcases[] = {{64, 8, 32},  {64, 1, 32}, {128, 9, 33}, {32, 5, 7},
                                       {96, 13, 16}, {256, 4, 1}, {64, 64, 32}};
    static const mint_type types[] = {MINT_TYPE_Q8_0, MINT_TYPE_Q4_0};
    for (size_t ti = 0; ti < 2; ti++)
        for (size_t ci = 0; ci < sizeof qcases / sizeof *qcases; ci++) {
            const mint_type t = types[ti];
            const tile_case tc = qcases[ci];
            const size_t row = (size_t)mint_row_size(t, tc.d), vs = row + 8; // bytes, 2-aligned
            const size_t ps = (size_t)tc.nk + 3, os = (size_t)tc.d + 5;
            uint8_t *v = calloc(vs * (size_t)tc.nk, 1);
            float *x = malloc(sizeof(float) * (size_t)tc.d);
            float *vf = malloc(sizeof(float) * (size_t)tc.d * (size_t)tc.nk);
            float *p = malloc(sizeof(float) * ps * (size_t)tc.nr);
            float *o_in = malloc(sizeof(float) * os * (size_t)tc.nr);
            float *o0 = malloc(sizeof(float) * os * (size_t)tc.nr);
            float *o1 = malloc(sizeof(float) * os * (size_t)tc.nr);
            float a[64];
            for (int j = 0; j < tc.nk; j++) {
                const double amp = j % 5 == 0 ? 1e-3 : j % 5 == 1 ? 300.0 : 2.0;
                for (int64_t i = 0; i < tc.d; i++) x[i] = frange(-amp, amp);
                mint_quantizer_ref(t)(x, v + (size_t)j * vs, tc.d);
                kr->t[t].to_float(v + (size_t)j * vs, vf + (size_t)j * (size_t)tc.d, tc.d);
            }
            for (size_t i = 0; i < ps * (size_t)tc.nr; i++) p[i] = (float)uniform();
            for (size_t i = 0; i < os * (size_t)tc.nr; i++) o_in[i] = frange(-1, 1);
            for (int r = 0; r < tc.nr; r++) a[r] = r % 2 ? (float)uniform() : 1.0f;
            for (int with_a = 0; with_a < 2; with_a++) {
                memcpy(o0, o_in, sizeof(float) * os * (size_t)tc.nr);
                ref()->pv_f32(tc.d, p, ps, tc.nr, vf, (size_t)tc.d, tc.nk, with_a ? a : NULL, o0,
                              os);
                for (int ki = -1; ki < nk; ki++) {
                    const mint_vec_kernels *vk = ki < 0 ? ref() : &k[ki]->vec;
                    const mint_pv_fn pv = t == MINT_TYPE_Q8_0 ? vk->pv_q8_0 : vk->pv_q4_0;
                    memcpy(o1, o_in, sizeof(float) * os * (size_t)tc.nr);
                    pv(tc.d, p, ps, tc.nr, v, vs, tc.nk, with_a ? a : NULL, o1, os);
                    cr_assert_eq(memcmp(o0, o1, sizeof(float) * os * (size_t)tc.nr), 0,
                                 "%s pv_%s d=%lld nr=%d nk=%d%s", ki < 0 ? "ref" : k[ki]->name,
                                 mint_type_name(t), (long long)tc.d, tc.nr, tc.nk,
                                 with_a ? " with a" : "");
                }
            }
            free(v), free(x), free(vf), free(p), free(o_in), free(o0), free(o1);
        }
}

// The gated delta rule's step (mint_vdelta_fn): every level's state and outputs equal the
// reference's with memcmp, over four tokens in a row (so a differing bit would carry on), for
// head sizes on and off the 16-lane grid and column counts on and off the kernels' groups.
Test(vec, delta_step_is_the_reference_bit_for_bit, .timeout = MT_HANG(120)) {
    const mint_kernels *k[MINT_ISA_COUNT];
    const int nk = available(k);
    static const int shapes[][2] = {{128, 128}, {64, 7},  {100, 5}, {16, 3}, {7, 2},
                                    {1, 1},     {129, 9}, {48, 4},  {32, 6}};
    for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
        const int s_k = shapes[si][0], s_v = shapes[si][1];
        const size_t ns = (size_t)s_k * (size_t)s_v;
        float *s0 = malloc(sizeof(float) * ns), *s1 = malloc(sizeof(float) * ns);
        float *st = malloc(sizeof(float) * ns);
        float *q = malloc(sizeof(float) * (size_t)s_k), *kk = malloc(sizeof(float) * (size_t)s_k);
        float *v = malloc(sizeof(float) * (size_t)s_v);
        float *o0 = malloc(sizeof(float) * (size_t)s_v), *o1 = malloc(sizeof(float) * (size_t)s_v);
        for (size_t i = 0; i < ns; i++) st[i] = frange(-0.5, 0.5);
        for (int ki = -1; ki < nk; ki++) {
            const mint_vdelta_fn step = ki < 0 ? ref()->delta_step : k[ki]->vec.delta_step;
            memcpy(s0, st, sizeof(float) * ns), memcpy(s1, st, sizeof(float) * ns);
            uint64_t keep = rng;
            for (int t = 0; t < 4; t++) {
                const float scale = 1.0f / sqrtf((float)s_k);
                for (int i = 0; i < s_k; i++) q[i] = frange(-1, 1), kk[i] = frange(-1, 1);
                for (int j = 0; j < s_v; j++) v[j] = frange(-2, 2);
                const float decay = t == 3 ? 1.0f : (float)uniform(), beta = (float)uniform();
                ref()->delta_step(s0, s_k, s_v, q, kk, v, decay, beta, scale, o0);
                step(s1, s_k, s_v, q, kk, v, decay, beta, scale, o1);
                cr_assert_eq(memcmp(o0, o1, sizeof(float) * (size_t)s_v), 0,
                             "%s delta_step out, s_k=%d s_v=%d token %d",
                             ki < 0 ? "ref" : k[ki]->name, s_k, s_v, t);
                cr_assert_eq(memcmp(s0, s1, sizeof(float) * ns), 0,
                             "%s delta_step state, s_k=%d s_v=%d token %d",
                             ki < 0 ? "ref" : k[ki]->name, s_k, s_v, t);
            }
            rng = keep; // every level sees the same tokens
        }
        free(s0), free(s1), free(st), free(q), free(kk), free(v), free(o0), free(o1);
    }
}
