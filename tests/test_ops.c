// test_ops.c - the plain ops (ops/ops.h) and attention (ops/attention.h) against naive
// double-precision loops written here. Every check states its budget and why; the measured
// worst errors are logged with cr_log_info (run with --verbose) so a drift shows before it
// fails. Data come from a fixed-seed generator; no test data directory is needed.
#include "helpers/hang.h"
#include "base/rng.h"
#include "ops/attention.h"
#include "ops/ops.h"
#include "quant/fp16.h"
#include "quant/kernels.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define UNIT 0x1p-24 // unit roundoff of f32 (half an ulp of 1)

static mint_rng rng;

// Standard normal by Box-Muller, reproducible for a seed.
static double gauss(void) {
    double u = mint_rng_uniform(&rng), v = mint_rng_uniform(&rng);
    return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

static void fill(float *x, int64_t n, double scale) {
    for (int64_t i = 0; i < n; i++) x[i] = (float)(scale * gauss());
}

static int same_bits(float a, float b) {
    return memcmp(&a, &b, sizeof a) == 0;
}

static float round_f16(float x) {
    return mint_f16_to_f32(mint_f32_to_f16(x));
}

// ---------------------------------------------------------------------------------------------
// RMSNorm

static void rms_norm_ref(const float *x, const float *w, double *y, int64_t n, float eps) {
    double ss = 0;
    for (int64_t i = 0; i < n; i++) ss += (double)x[i] * x[i];
    const double scale = 1.0 / sqrt(ss / (double)n + eps);
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * scale * w[i];
}

// Budget 1e-6 relative per element: mint rounds each square, the mean, mean + eps, sqrtf, the
// reciprocal, x * scale and * w to f32, seven roundings of at most 2^-24 (6e-8), the two under
// the square root halved: under 4.5e-7 in the worst case.
Test(ops, rms_norm_matches_double) {
    const int64_t widths[] = {1, 7, 64, 2048};
    // Ordinary activations; small rows where eps dominates (1e-30: the f32 squares even flush to
    // zero); large rows whose squares still fit in f32 (a row with |x| > 1.8e19 overflows x * x
    // to inf and comes out as zeros, exactly as ggml's f32 squares do).
    const double mags[] = {1.0, 1e-3, 1e-30, 1e4, 1e18};
    const float epss[] = {1e-5f, 1e-6f};
    float *x = malloc(2048 * sizeof *x), *w = malloc(2048 * sizeof *w),
          *y = malloc(2048 * sizeof *y);
    double *ref = malloc(2048 * sizeof *ref), worst = 0;
    mint_rng_seed(&rng, 1);
    for (size_t wi = 0; wi < 4; wi++)
        for (size_t mi = 0; mi < 5; mi++)
            for (size_t ei = 0; ei < 2; ei++) {
                const int64_t n = widths[wi];
                fill(x, n, mags[mi]);
                for (int64_t i = 0; i < n; i++) w[i] = (float)(1.0 + 0.3 * gauss());
                mint_rms_norm_row(x, w, y, n, epss[ei]);
                rms_norm_ref(x, w, ref, n, epss[ei]);
                for (int64_t i = 0; i < n; i++) {
                    const double err = fabs(y[i] - ref[i]);
                    cr_assert(err <= 1e-6 * fabs(ref[i]),
                              "n=%lld mag %g eps %g [%lld]: %.9g vs %.9g", (long long)n, mags[mi],
                              (double)epss[ei], (long long)i, (double)y[i], ref[i]);
                    if (ref[i] != 0) worst = fmax(worst, err / fabs(ref[i]));
                }
            }
    cr_log_info("rms_norm: max relative error %.3g (budget 1e-6)", worst);
    free(x), free(w), free(y), free(ref);
}

// The executor splits rows across threads, so a range must write exactly its rows, each the same
// bits as the single-row function, and nothing in between (strides wider than a row).
Test(ops, rms_norm_range_touches_only_its_rows) {
    enum { N = 64, ROWS = 6, XS = 80, YS = 72, R0 = 2, R1 = 5 }; // strides in floats
    static float x[ROWS * XS], y[ROWS * YS], w[N], row[N];
    const float sentinel = -12345.5f;
    mint_rng_seed(&rng, 2);
    fill(x, ROWS * XS, 3.0);
    fill(w, N, 1.0);
    for (int i = 0; i < ROWS * YS; i++) y[i] = sentinel;
    mint_rms_norm(x, XS * sizeof(float), w, y, YS * sizeof(float), N, 1e-5f, R0, R1);
    for (int r = 0; r < ROWS; r++) {
        const int in = r >= R0 && r < R1;
        if (in) mint_rms_norm_row(x + r * XS, w, row, N, 1e-5f);
        for (int i = 0; i < YS; i++) {
            const float want = in && i < N ? row[i] : sentinel;
            cr_assert(same_bits(y[r * YS + i], want), "row %d [%d]: %.9g, want %.9g", r, i,
                      (double)y[r * YS + i], (double)want);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// RoPE

// NORMAL RoPE in double with a fresh power per pair (dims past n_rot are kept).
// Pair i of a head: (2i, 2i+1) in llama's NORMAL mode, (i, i + hd/2) in NEOX mode.
static void pair_of(bool neox, int hd, int i, int *a, int *b) {
    *a = neox ? i : 2 * i;
    *b = neox ? i + hd / 2 : 2 * i + 1;
}

// The double twin: pair i turned by pos * base^(-2i/hd) / ff[i] * fs.
static void rope_ref(const float *x, double *y, int n_heads, int hd, int32_t pos, double base,
                     double fs, const float *ff, bool neox, double ms) {
    for (int h = 0; h < n_heads; h++)
        for (int i = 0; i < hd / 2; i++) {
            int a, b;
            pair_of(neox, hd, i, &a, &b);
            const double x0 = x[h * hd + a], x1 = x[h * hd + b];
            const double th = pos * pow(base, -2.0 * i / hd) / (ff ? ff[i] : 1.0) * fs;
            y[h * hd + a] = ms * (x0 * cos(th) - x1 * sin(th));
            y[h * hd + b] = ms * (x0 * sin(th) + x1 * cos(th));
        }
}

// Budget per pair, relative to the pair's norm: (8 * pos * freq_scale + 8) * 2^-24.
// mint's angle is pos * freq_scale * ts^i in f32 (ggml's running product, ops/rope.c) with
// ts = powf(base, -2/n_rot): powf is within 1 ulp (2 * 2^-24 relative), which the i-th power
// multiplies by i, each of the i products rounds by 2^-24, and so does the product with
// freq_scale: theta_i is off by up to about (3i + 1) * 2^-24 * theta_i. With theta_i =
// pos * fs * r^i (r = base^(-2/n_rot) <= 0.75 for head_dim <= 64 and base 1e4), (3i + 1) * r^i
// peaks at 4.2, so the angle error is below 4.2 * pos * fs * 2^-24: the first term, with a
// factor 2 to spare. A frequency factor (>= 1 in Llama 3's files) adds one division's rounding
// to an angle it makes smaller. A rotation turns an angle error into the same relative
// displacement of the pair. The constant covers cosf, sinf (< 1 ulp each) and the two FMAs. At
// pos 4095 that is 2e-3; at pos 1, 1e-6. Both pairings (NORMAL, NEOX) are checked, with and
// without factors, and with LongRoPE's mscale (Phi-3.5-mini's 1.19: the error and the pair's
// length are then measured against |x| * mscale; its product with cos and sin adds one rounding).
Test(ops, rope_matches_double) {
    const int hds[] = {8, 64};
    const int32_t positions[] = {0, 1, 17, 511, 4095};
    const float fss[] = {1.0f, 0.25f};
    enum { HEADS = 3 };
    float x[HEADS * 64], y[HEADS * 64], factors[32];
    // Llama 3's shape of factors: 1 for the fast pairs, up to 8 for the slow ones.
    for (int i = 0; i < 32; i++) factors[i] = 1.0f + 7.0f * (float)i / 31.0f;
    double ref[HEADS * 64], worst_rel[5] = {0}, worst_ratio = 0, worst_norm = 0;
    mint_rng_seed(&rng, 3);
    for (int mode = 0; mode < 4; mode++)
        for (int hi = 0; hi < 2; hi++)
            for (int pi = 0; pi < 5; pi++)
                for (int fi = 0; fi < 2; fi++)
                    for (int rep = 0; rep < 4; rep++) {
                        const int hd = hds[hi], n = HEADS * hd;
                        const int32_t pos = positions[pi];
                        const bool neox = mode & 1;
                        const float ms = rep == 2 ? 1.19f : 1.0f;
                        const mint_rope_cfg cfg = {
                            hd,   10000.0f, fss[fi], mode & 2 ? factors : NULL,
                            neox, ms,       0.0f,    {0.0f, 0.0f}};
                        fill(x, n, rep == 3 ? 1e3 : 1.0);
                        memcpy(y, x, sizeof(float) * (size_t)n);
                        mint_rope_row(y, HEADS, hd, &cfg, pos);
                        rope_ref(x, ref, HEADS, hd, pos, 10000.0, fss[fi], cfg.freq_factors, neox,
                                 ms);
                        const double budget = (8.0 * pos * fss[fi] + 8.0) * UNIT;
                        for (int h = 0; h < HEADS; h++)
                            for (int i = 0; i < hd / 2; i++) {
                                int a, b;
                                pair_of(neox, hd, i, &a, &b);
                                a += h * hd, b += h * hd;
                                if (pos == 0 && ms == 1.0f) // the identity: cos 0 = 1, sin 0 = 0
                                    cr_assert(y[a] == x[a] && y[b] == x[b], "pos 0 moved [%d]", a);
                                const double nx = ms * hypot(x[a], x[b]), ny = hypot(y[a], y[b]);
                                const double d = hypot(y[a] - ref[a], y[b] - ref[b]) / nx;
                                cr_assert(d <= budget,
                                          "mode %d hd %d pos %d fs %g pair %d: %.3g > %.3g", mode,
                                          hd, pos, (double)fss[fi], i, d, budget);
                                // A rotation keeps the pair's length (times mscale): f32 cos^2 +
                                // sin^2 = 1 to ~2^-23, and the two FMAs round once each (and the
                                // product with mscale). Budget 1e-6.
                                cr_assert(fabs(ny - nx) <= 1e-6 * nx,
                                          "norm of pair %d changed: %.9g vs %.9g", i, ny, nx);
                                worst_rel[pi] = fmax(worst_rel[pi], d);
                                worst_ratio = fmax(worst_ratio, d / budget);
                                worst_norm = fmax(worst_norm, fabs(ny - nx) / nx);
                            }
                    }
    for (int pi = 0; pi < 5; pi++)
        cr_log_info("rope pos %4d: max |dy| / |x| %.3g (budget %.3g at fs 1)", positions[pi],
                    worst_rel[pi], (8.0 * positions[pi] + 8.0) * UNIT);
    cr_log_info("rope: max error / budget %.3f; max pair-norm change %.3g (budget 1e-6)",
                worst_ratio, worst_norm);
}

// mint_rope rotates row r by pos[r], for the rows of its range only.
Test(ops, rope_rows_use_their_positions) {
    enum { HD = 64, HEADS = 2, N = HD * HEADS, S = N + 5, ROWS = 5 };
    static float x[ROWS * S], orig[ROWS * S], row[N];
    const int32_t pos[ROWS] = {7, 4095, 0, 17, 1};
    mint_rng_seed(&rng, 4);
    fill(x, ROWS * S, 1.0);
    memcpy(orig, x, sizeof x);
    const mint_rope_cfg cfg = {HD, 10000.0f, 1.0f, NULL, false, 1.0f, 0.0f, {0.0f, 0.0f}};
    mint_rope(x, S * sizeof(float), pos, HEADS, HD, &cfg, 1, 4);
    for (int r = 0; r < ROWS; r++) {
        memcpy(row, orig + r * S, sizeof row);
        if (r >= 1 && r < 4) mint_rope_row(row, HEADS, HD, &cfg, pos[r]);
        for (int i = 0; i < S; i++) {
            const float want = i < N ? row[i] : orig[r * S + i];
            cr_assert(same_bits(x[r * S + i], want), "row %d (pos %d) [%d]", r, pos[r], i);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Softmax

static void softmax_ref(const float *s, double *p, int n) {
    double m = -INFINITY, sum = 0;
    for (int j = 0; j < n; j++) m = fmax(m, s[j]);
    for (int j = 0; j < n; j++) sum += p[j] = exp((double)s[j] - m);
    for (int j = 0; j < n; j++) p[j] /= sum;
}

// Checks mint_softmax on s[0..n) against the double softmax; returns max relative error.
// Budget per element, relative: (|d_j| + Ed + 6) * 2^-24 * 1.5, d_j = s_j - max. The f32
// difference rounds by up to |d_j| * 2^-24, which exp turns into a relative error; expf adds
// 2^-23; the sum's relative error is the p-weighted mean of its terms' (Ed + 2) * 2^-24, with Ed =
// sum p_j |d_j|; 1 / sum and the product round once each; 1.5 for second-order terms.
static double check_softmax(float *s, int n, double *worst_ratio) {
    double *p = malloc(sizeof(double) * (size_t)n), m = -INFINITY, ed = 0, worst = 0, sum = 0;
    softmax_ref(s, p, n);
    for (int j = 0; j < n; j++) m = fmax(m, s[j]);
    for (int j = 0; j < n; j++)
        if (p[j] > 0) ed += p[j] * fabs(s[j] - m);
    float *in = malloc(sizeof(float) * (size_t)n);
    memcpy(in, s, sizeof(float) * (size_t)n);
    mint_softmax(&mint_kernels_get()->vec, s, n);
    for (int j = 0; j < n; j++) {
        if (in[j] == -INFINITY) { // masked: exactly zero
            cr_assert(s[j] == 0.0f, "n=%d: masked [%d] gave %.9g", n, j, (double)s[j]);
            continue;
        }
        const double err = fabs(s[j] - p[j]);
        const double budget = (fabs(in[j] - m) + ed + 6) * UNIT * 1.5 * p[j];
        cr_assert(isfinite(s[j]) && err <= budget, "n=%d [%d] (logit %.9g): %.9g vs %.9g", n, j,
                  (double)in[j], (double)s[j], p[j]);
        if (p[j] > 0) worst = fmax(worst, err / p[j]);
        if (budget > 0) *worst_ratio = fmax(*worst_ratio, err / budget);
        sum += s[j];
    }
    // The sum of the f32 results, each off by < 1e-6 relative: 1 within 1e-6.
    cr_assert(fabs(sum - 1.0) <= 1e-6, "n=%d: sum %.12g", n, sum);
    free(p), free(in);
    return worst;
}

Test(ops, softmax_matches_double) {
    const int lens[] = {1, 2, 33, 1000};
    float s[1000];
    double worst = 0, worst_ratio = 0;
    mint_rng_seed(&rng, 5);
    for (int li = 0; li < 4; li++)
        for (int kind = 0; kind < 3; kind++) { // plain, masked, large logits
            const int n = lens[li];
            fill(s, n, 3.0);
            if (kind == 1)
                for (int j = 1; j < n; j += 3) s[j] = -INFINITY; // s[0] is never masked
            if (kind == 2)
                for (int j = 0; j < n; j++) s[j] += j % 2 ? 1e4f : -1e4f;
            worst = fmax(worst, check_softmax(s, n, &worst_ratio));
            if (n == 1) cr_assert_eq(s[0], 1.0f);
        }
    // All-large logits: e^(1e4) overflows any float, so only the max subtraction keeps this
    // finite.
    for (int j = 0; j < 33; j++) s[j] = 1e4f + (float)j;
    worst = fmax(worst, check_softmax(s, 33, &worst_ratio));
    cr_log_info("softmax: max relative error %.3g, max error / budget %.3f", worst, worst_ratio);
}

// ---------------------------------------------------------------------------------------------
// Residual add, SwiGLU

Test(ops, add_and_silu_mul_match_plain_loops) {
    enum { N = 257, S = 260, ROWS = 4 };
    static float x[ROWS * S], y[ROWS * S], x0[ROWS * S];
    mint_rng_seed(&rng, 6);
    fill(x, ROWS * S, 4.0);
    fill(y, ROWS * S, 4.0);
    memcpy(x0, x, sizeof x);
    // add: one f32 addition per element, the same operation as here: bit-identical. Rows 1, 2.
    mint_add(x, S * sizeof(float), y, S * sizeof(float), N, 1, 3);
    for (int r = 0; r < ROWS; r++)
        for (int i = 0; i < S; i++) {
            const float want =
                r >= 1 && r < 3 && i < N ? x0[r * S + i] + y[r * S + i] : x0[r * S + i];
            cr_assert(same_bits(x[r * S + i], want), "add row %d [%d]", r, i);
        }
    // silu_mul: expf (< 1 ulp), 1 + e, the division and the product round once each, and
    // 1 + e^-g has no cancellation: under 5 * 2^-24 = 3e-7 relative. Budget 1e-6. The gate
    // spreads over [-16, 16] (std 4), so no result is an f32 subnormal.
    memcpy(x, x0, sizeof x);
    mint_silu_mul(x, S * sizeof(float), y, S * sizeof(float), N, 0, ROWS);
    double worst = 0;
    for (int r = 0; r < ROWS; r++)
        for (int i = 0; i < S; i++) {
            const double g = x0[r * S + i], ref = g / (1 + exp(-g)) * y[r * S + i];
            if (i >= N) {
                cr_assert(same_bits(x[r * S + i], x0[r * S + i]), "silu wrote past the row");
                continue;
            }
            cr_assert(fabs(x[r * S + i] - ref) <= 1e-6 * fabs(ref),
                      "silu(%.9g) * %.9g: %.9g vs %.9g", g, (double)y[r * S + i],
                      (double)x[r * S + i], ref);
            worst = fmax(worst, fabs(x[r * S + i] - ref) / fabs(ref));
        }
    // Saturation: e^100 overflows f32, so silu(-100) is -100 / inf = -0 (the true value, -4e-42, is
    // below f32's normal range anyway); silu(100) = 100 exactly. Nothing becomes NaN.
    float g[4] = {-100.0f, 100.0f, -88.8f, 0.0f}, u[4] = {1.5f, 1.5f, 2.0f, 3.0f};
    mint_silu_mul(g, sizeof g, u, sizeof u, 4, 0, 1);
    cr_assert(g[0] == 0.0f && g[1] == 150.0f && g[2] == 0.0f && g[3] == 0.0f,
              "saturated silu: %g %g %g %g", (double)g[0], (double)g[1], (double)g[2],
              (double)g[3]);
    cr_log_info("silu_mul: max relative error %.3g (budget 1e-6); add bit-identical", worst);
}

// ---------------------------------------------------------------------------------------------
// Embedding lookup

Test(ops, get_rows_f32_and_f16) {
    enum { V = 10, N = 48, DS = 50, ROWS = 5 };
    const mint_kernels *k = mint_kernels_get();
    const int32_t ids[ROWS] = {3, 0, 9, 3, 7};
    static float table[V * N], dst[ROWS * DS];
    static uint16_t table16[V * N];
    mint_rng_seed(&rng, 7);
    fill(table, V * N, 2.0);
    k->t[MINT_TYPE_F16].from_float(table, table16, V * N);
    for (int i = 0; i < V * N; i++) { // the table's conversion is RNE, as mint_f32_to_f16
        cr_assert_eq(table16[i], mint_f32_to_f16(table[i]), "f16 [%d]", i);
        cr_assert(fabs(mint_f16_to_f32(table16[i]) - table[i]) <= 0x1p-11 * fabs(table[i]));
    }
    for (int f16 = 0; f16 <= 1; f16++) {
        for (int i = 0; i < ROWS * DS; i++) dst[i] = NAN;
        if (f16)
            mint_get_rows(k->t[MINT_TYPE_F16].to_float, table16, N * 2, N, ids, dst,
                          DS * sizeof(float), 1, ROWS);
        else
            mint_get_rows(k->t[MINT_TYPE_F32].to_float, table, N * 4, N, ids, dst,
                          DS * sizeof(float), 1, ROWS);
        // Widening is exact, so every element is the table's value bit for bit; row 0 (outside
        // the range) and the padding stay untouched.
        for (int r = 0; r < ROWS; r++)
            for (int i = 0; i < DS; i++) {
                const float got = dst[r * DS + i];
                if (r == 0 || i >= N) {
                    cr_assert(isnan(got), "%s: wrote row %d [%d]", f16 ? "f16" : "f32", r, i);
                    continue;
                }
                const float want =
                    f16 ? mint_f16_to_f32(table16[ids[r] * N + i]) : table[ids[r] * N + i];
                cr_assert(same_bits(got, want), "%s row %d (id %d) [%d]: %.9g vs %.9g",
                          f16 ? "f16" : "f32", r, ids[r], i, (double)got, (double)want);
            }
    }
}

// ---------------------------------------------------------------------------------------------
// Matmul: mint_convert + mint_gemm_tile

// Budget 1e-5 of sum |w a|: the f32 kernels sum in f32 (in 16 lanes, then across them), each
// addition rounding by 2^-24 of a partial sum bounded by sum |w a|; for n = 1000 that is at most
// 1000 / 16 + 4 roundings, 4e-6, and typically far fewer. The products of f16 operands are exact.
Test(ops, convert_and_gemm_tile_match_double, .timeout = MT_HANG(60)) {
    enum { NR = 13, NC = 7, YS = NR + 3 };
    const int64_t ns[] = {1, 17, 256, 1000};
    const mint_type types[] = {MINT_TYPE_F32, MINT_TYPE_F16};
    float *wf = malloc(sizeof(float) * NR * 1000), *xf = malloc(sizeof(float) * NC * 1000);
    uint8_t *w = malloc(4 * NR * 1000), *a = malloc(4 * NC * 1000);
    float y[NC * YS];
    double worst = 0;
    mint_rng_seed(&rng, 8);
    for (int isa = 0; isa < MINT_ISA_COUNT; isa++) {
        const mint_kernels *k = mint_kernels_for((mint_isa)isa);
        if (!k) continue;
        for (int ti = 0; ti < 2; ti++)
            for (int ni = 0; ni < 4; ni++) {
                const mint_type wt = types[ti];
                const mint_type_kernels *tk = &k->t[wt];
                const int64_t n = ns[ni];
                const size_t el = wt == MINT_TYPE_F32 ? 4 : 2, row = el * (size_t)n;
                cr_assert_eq(tk->vec_dot_type, wt); // plain floats multiply their own type
                fill(wf, NR * n, 1.0);
                fill(xf, NC * n, 1.0);
                mint_convert(k->t[wt].from_float, wf, n * sizeof(float), w, row, n, 0, NR);
                mint_convert(k->t[wt].from_float, xf, n * sizeof(float), a, row, n, 0, NC);
                for (int64_t i = 0; i < NC * n; i++) { // conversion: a copy or RNE f16
                    const float back =
                        wt == MINT_TYPE_F32 ? ((float *)a)[i] : mint_f16_to_f32(((uint16_t *)a)[i]);
                    cr_assert(same_bits(back, wt == MINT_TYPE_F32 ? xf[i] : round_f16(xf[i])));
                }
                for (int i = 0; i < NC * YS; i++) y[i] = NAN;
                mint_gemm_tile(tk, n, w, row, NR, a, row, NC, y, YS);
                for (int c = 0; c < NC; c++)
                    for (int r = 0; r < YS; r++) {
                        if (r >= NR) {
                            cr_assert(isnan(y[c * YS + r]), "gemm wrote outside the tile");
                            continue;
                        }
                        double ref = 0, mag = 0;
                        for (int64_t i = 0; i < n; i++) {
                            const double wi =
                                wt == MINT_TYPE_F32 ? wf[r * n + i] : round_f16(wf[r * n + i]);
                            const double ai =
                                wt == MINT_TYPE_F32 ? xf[c * n + i] : round_f16(xf[c * n + i]);
                            ref += wi * ai, mag += fabs(wi * ai);
                        }
                        float s;
                        tk->vec_dot(n, &s, w + (size_t)r * row, a + (size_t)c * row);
                        cr_assert(same_bits(y[c * YS + r], s),
                                  "%s %s n=%lld (%d,%d): gemm %.9g, vec_dot %.9g", k->name,
                                  wt == MINT_TYPE_F32 ? "f32" : "f16", (long long)n, r, c,
                                  (double)y[c * YS + r], (double)s);
                        const double err = fabs(s - ref);
                        cr_assert(err <= 1e-5 * mag, "%s n=%lld (%d,%d): %.9g vs %.9g", k->name,
                                  (long long)n, r, c, (double)s, ref);
                        worst = fmax(worst, err / mag);
                    }
            }
    }
    cr_log_info("gemm_tile: max |y - ref| / sum|w a| %.3g (budget 1e-5), every level and type",
                worst);
    free(wf), free(xf), free(w), free(a);
}

// ---------------------------------------------------------------------------------------------
// Attention

// out[t][h] = softmax_j<=t(scale * q_th . k_j) . v_j in double. For an f16 cache, k, v and q are
// rounded to f16 and so are the probabilities (ops/attention.c), as mint does.
// Query t sees keys lo .. t, lo = t - window + 1 with a window (else 0); scores soft-capped.
static void attention_ref(int f16, const mint_attn_shape *sh, int window, const float *sinks,
                          const float *q, const float *k, const float *v, int n, double *out) {
    const int hd = sh->head_dim, group = sh->n_head / sh->n_head_kv, qd = sh->n_head * hd;
    const int kvd = sh->n_head_kv * hd;
    double *s = malloc(sizeof(double) * (size_t)n);
    for (int t = 0; t < n; t++)
        for (int h = 0; h < sh->n_head; h++) {
            const int off = (h / group) * hd;
            double m = -INFINITY, sum = 0;
            const int lo = window > 0 && t - window + 1 > 0 ? t - window + 1 : 0;
            for (int j = 0; j < lo; j++) s[j] = 0;
            for (int j = lo; j <= t; j++) {
                double d = 0;
                for (int i = 0; i < hd; i++) {
                    const float qi = q[t * qd + h * hd + i], ki = k[j * kvd + off + i];
                    d += f16 ? (double)round_f16(qi) * round_f16(ki) : (double)qi * ki;
                }
                s[j] = d * sh->scale;
                if (sh->softcap != 0) s[j] = tanh(s[j] / sh->softcap) * sh->softcap;
                m = fmax(m, s[j]);
            }
            if (sinks) m = fmax(m, sinks[h]); // a sink: one more term of the sum, no value
            if (sinks) sum = exp(sinks[h] - m);
            for (int j = lo; j <= t; j++) sum += s[j] = exp(s[j] - m);
            for (int j = lo; j <= t; j++) s[j] = f16 ? round_f16((float)(s[j] / sum)) : s[j] / sum;
            for (int i = 0; i < hd; i++) {
                double o = 0;
                for (int j = 0; j <= t; j++) {
                    const float vi = v[j * kvd + off + i];
                    o += s[j] * (f16 ? round_f16(vi) : vi);
                }
                out[(size_t)t * qd + h * hd + i] = o;
            }
        }
    free(s);
}

// A paged cache of n_blk blocks of `block` positions for one layer, its logical blocks placed
// on physical blocks in reverse order (so nothing depends on blocks lying in order).
typedef struct paged {
    mint_kv_view kv;
    uint8_t *mem[64];  // physical blocks
    int32_t table[64]; // logical -> physical
} paged;

static void paged_init(paged *pc, mint_type type, int kvd, int32_t block, int n_blk) {
    const size_t elem = type == MINT_TYPE_F16 ? 2 : 4;
    cr_assert(n_blk <= 64);
    for (int i = 0; i < n_blk; i++) {
        // calloc: attention weighs the positions past a query (by zero), so they must be finite,
        // as the cache's zeroed blocks are.
        pc->mem[i] = calloc((size_t)block * (size_t)kvd * 2, elem);
        pc->table[i] = n_blk - 1 - i;
    }
    pc->kv = (mint_kv_view){.type = type,
                            .elem = elem,
                            .row_bytes = (size_t)kvd * elem,
                            .kv_dim = kvd,
                            .block = block,
                            .layer_bytes = (size_t)block * (size_t)kvd * 2 * elem,
                            .mem = pc->mem,
                            .table = pc->table};
}

// Runs every item of the batch, first to last or last to first (as threads may take them), with
// a poisoned scratch (NaN bytes: the op must not read scratch it did not write).
static void run_items(mint_attn_batch *b, uint8_t *scratch, size_t scratch_bytes, int reverse) {
    const int32_t items = mint_attention_plan(b);
    cr_assert(items >= 1);
    for (int32_t k = 0; k < items; k++) {
        memset(scratch, 0xFF, scratch_bytes);
        mint_attention_item(b, reverse ? items - 1 - k : k, scratch);
    }
}

// Runs every item of `algo` over the rows [t0, t0 + n) as one run.
static void run_algo(const mint_attn_batch *proto, mint_attn_algo algo, int32_t t0, int32_t n,
                     uint8_t *scratch, size_t scratch_bytes) {
    mint_attn_batch b = *proto;
    mint_attn_run run = {.kv = proto->runs[0].kv, .row0 = t0, .n = n, .pos0 = t0};
    b.algo = algo;
    b.runs = &run;
    b.n_runs = 1;
    run_items(&b, scratch, scratch_bytes, 0);
}

// Largest |out - ref| over the batch, relative to max |v|.
static double max_err(const float *out, const double *ref, size_t len, double vmax) {
    double e = 0;
    for (size_t i = 0; i < len; i++) {
        cr_assert(isfinite(out[i]), "output [%zu] not written or not finite", i);
        e = fmax(e, fabs(out[i] - ref[i]));
    }
    return e / vmax;
}

// N tokens in blocks of `block` positions: the batch ends partway through a block, and flash's
// query blocks (64 rows: 16 queries of MHA, 8 of a group of 8) and steps (at least 64 positions)
// end partway through the batch.
static void check_attention_wcs(mint_type type, int n_head, int n_head_kv, int hd, int32_t block,
                                int N, double budget, int window, float softcap,
                                const float *sinks) {
    const int f16 = type == MINT_TYPE_F16;
    const mint_attn_shape sh = {n_head, n_head_kv, hd, (float)(1.0 / sqrt(hd)), softcap};
    const int qd = n_head * hd, kvd = n_head_kv * hd;
    const int n_blk = (N + block - 1) / block;
    paged pc;
    paged_init(&pc, type, kvd, block, n_blk);
    const mint_kv_view *kv = &pc.kv;
    float *q = malloc(sizeof(float) * N * qd), *k = malloc(sizeof(float) * N * kvd),
          *v = malloc(sizeof(float) * N * kvd), *out = malloc(sizeof(float) * N * qd),
          *out1 = malloc(sizeof(float) * N * qd), *naive = malloc(sizeof(float) * N * qd);
    double *ref = malloc(sizeof(double) * N * qd), vmax = 0;
    mint_rng_seed(&rng, 9 + (uint64_t)type * 100 + (uint64_t)n_head + (uint64_t)block * 7);
    fill(q, N * qd, 1.5); // std 1.5 q, std 1 k: scores of std 1.5, some sharp softmax rows
    fill(k, N * kvd, 1.0);
    fill(v, N * kvd, 1.0);
    for (int j = 0; j < N; j++) mint_kv_store(kv, 0, j, k + j * kvd, v + j * kvd);
    for (int j = 0; j < N; j++) // stored as a column of keys, a row of values, rounded to the type
        for (int i = 0; i < kvd; i++) {
            const uint8_t *kr = mint_kv_block_kt(kv, 0, j / block) + (size_t)i * block * kv->elem;
            const uint8_t *vr =
                mint_kv_block_v(kv, 0, j / block) + (size_t)(j % block) * kvd * kv->elem;
            const int s = j % block;
            const float kk =
                f16 ? mint_f16_to_f32(((const uint16_t *)kr)[s]) : ((const float *)kr)[s];
            const float vv =
                f16 ? mint_f16_to_f32(((const uint16_t *)vr)[i]) : ((const float *)vr)[i];
            const float ek = k[j * kvd + i], ev = v[j * kvd + i];
            cr_assert(same_bits(kk, f16 ? round_f16(ek) : ek) &&
                          same_bits(vv, f16 ? round_f16(ev) : ev),
                      "kv_store pos %d [%d]", j, i);
            vmax = fmax(vmax, fabs(vv));
        }
    attention_ref(f16, &sh, window, sinks, q, k, v, N, ref);

    size_t scratch_bytes = 0;
    for (int a = 0; a < MINT_ATTN_ALGO_COUNT; a++) {
        size_t sb = mint_attention_scratch_bytes((mint_attn_algo)a, &sh, N, N, block);
        if (sb > scratch_bytes) scratch_bytes = sb;
    }
    scratch_bytes = (scratch_bytes + 63) / 64 * 64;
    uint8_t *scratch = aligned_alloc(64, scratch_bytes);
    mint_attn_run run0 = {.kv = *kv};
    const mint_attn_batch b = {.k = mint_kernels_get(),
                               .sh = &sh,
                               .layer = 0,
                               .q = q,
                               .q_stride = qd * sizeof(float),
                               .out = out,
                               .out_stride = qd * sizeof(float),
                               .runs = &run0,
                               .n_runs = 1,
                               .window = window,
                               .sinks = sinks};
    double worst[MINT_ATTN_ALGO_COUNT];
    for (int a = 0; a < MINT_ATTN_ALGO_COUNT; a++) {
        // (a) the whole batch against the double-precision reference
        for (int i = 0; i < N * qd; i++) out[i] = NAN;
        run_algo(&b, (mint_attn_algo)a, 0, N, scratch, scratch_bytes);
        worst[a] = max_err(out, ref, (size_t)N * qd, vmax);
        cr_assert(worst[a] <= budget, "%s: %.3g > %.3g", mint_attn_algo_name((mint_attn_algo)a),
                  worst[a], budget);
        // (b) the same queries one token at a time, then in two chunks split mid-block: the
        // same bits
        mint_attn_batch b1 = b;
        b1.out = out1;
        for (int i = 0; i < N * qd; i++) out1[i] = NAN;
        for (int t = 0; t < N; t++) run_algo(&b1, (mint_attn_algo)a, t, 1, scratch, scratch_bytes);
        cr_assert_eq(memcmp(out, out1, sizeof(float) * N * qd), 0, "%s: token by token differs",
                     mint_attn_algo_name((mint_attn_algo)a));
        for (int i = 0; i < N * qd; i++) out1[i] = NAN;
        run_algo(&b1, (mint_attn_algo)a, 0, 29, scratch, scratch_bytes);
        run_algo(&b1, (mint_attn_algo)a, 29, N - 29, scratch, scratch_bytes);
        cr_assert_eq(memcmp(out, out1, sizeof(float) * N * qd), 0, "%s: chunks 29 + 41 differ",
                     mint_attn_algo_name((mint_attn_algo)a));
        // (c) every kernel level, items taken last to first: the same bits (the float vector
        // kernels are the reference's on every level)
        for (int isa = 0; isa < MINT_ISA_COUNT; isa++) {
            if (!mint_kernels_for((mint_isa)isa)) continue;
            mint_attn_run run = {.kv = *kv, .row0 = 0, .n = N, .pos0 = 0};
            mint_attn_batch bl = b1;
            bl.k = mint_kernels_for((mint_isa)isa);
            bl.algo = (mint_attn_algo)a;
            bl.runs = &run;
            for (int i = 0; i < N * qd; i++) out1[i] = NAN;
            run_items(&bl, scratch, scratch_bytes, 1);
            cr_assert_eq(memcmp(out, out1, sizeof(float) * N * qd), 0, "%s: level %s differs",
                         mint_attn_algo_name((mint_attn_algo)a), bl.k->name);
        }
        // (d) naive and row-wise: the same bits
        if (a == MINT_ATTN_ALGO_NAIVE) memcpy(naive, out, sizeof(float) * N * qd);
        if (a == MINT_ATTN_ALGO_ROWWISE)
            cr_assert_eq(memcmp(out, naive, sizeof(float) * N * qd), 0,
                         "rowwise differs from naive");
    }
    cr_log_info("attention %s %d/%d heads hd %d, %d tokens in blocks of %d, window %d, cap %g%s: "
                "max |out - ref| / max|v|: naive %.3g, rowwise %.3g, flash %.3g (budget %g)",
                f16 ? "f16" : "f32", n_head, n_head_kv, hd, N, block, window, (double)softcap,
                sinks ? ", sinks" : "", worst[0], worst[1], worst[2], budget);
    for (int i = 0; i < n_blk; i++) free(pc.mem[i]);
    free(q), free(k), free(v), free(out), free(out1), free(naive), free(ref);
    free(scratch);
}

static void check_attention_wc(mint_type type, int n_head, int n_head_kv, int hd, int32_t block,
                               int N, double budget, int window, float softcap) {
    check_attention_wcs(type, n_head, n_head_kv, hd, block, N, budget, window, softcap, NULL);
}

static void check_attention(mint_type type, int n_head, int n_head_kv, int hd, int32_t block, int N,
                            double budget) {
    check_attention_wc(type, n_head, n_head_kv, hd, block, N, budget, 0, 0.0f);
}

// Budgets, relative to max |v| (the output is a convex combination of values).
// f32, 2e-6: a score is a chain of head_dim fused multiply-adds, a block's part of P.V a chain of
// `block` of them (quant/kernels.h), the parts added block by block in f32; the softmax is within
// 1e-6 relative per probability (test softmax_matches_double); flash rescales its running output
// and sum by e^(m_old - m_new) once per step, a few more 2^-24 roundings.
// f16, 1e-3: the reference rounds k, v, q and p to f16 as mint does, but a probability that lands
// near the midpoint of two f16 values can round the other way than the reference's, an error of
// 2^-11 (4.9e-4) of that probability; flash rounds its unnormalised weights e^(s - m) instead,
// the same size of error; summed over all probabilities < 4.9e-4 max|v|.
Test(ops, attention_f32_mha, .timeout = MT_HANG(60)) {
    check_attention(MINT_TYPE_F32, 4, 4, 16, 16, 70, 2e-6);
}
Test(ops, attention_f32_gqa, .timeout = MT_HANG(60)) {
    check_attention(MINT_TYPE_F32, 8, 1, 64, 32, 70, 2e-6);
}
Test(ops, attention_f32_odd_blocks, .timeout = MT_HANG(60)) {
    check_attention(MINT_TYPE_F32, 8, 2, 64, 7, 70, 2e-6);
}
// Gemma's local layers and Gemma 2's soft-cap: a window of 9 keys (shorter than a block, so
// flash meets steps wholly outside some rows' windows) and of 100 (longer than a flash step),
// scores capped at 50 (and at 2, where the cap bends every score); same budgets.
Test(ops, attention_f32_window_softcap, .timeout = MT_HANG(60)) {
    check_attention_wc(MINT_TYPE_F32, 8, 2, 64, 7, 200, 2e-6, 9, 50.0f);
    check_attention_wc(MINT_TYPE_F32, 8, 2, 64, 32, 200, 2e-6, 100, 2.0f);
    check_attention_wc(MINT_TYPE_F32, 4, 4, 16, 16, 70, 2e-6, 1, 0.0f);
}
// gpt-oss's sinks: per head a logit in the softmax's sum that weighs no value; some far above
// every score (they take almost all the weight, and flash meets a sink above its running
// maximum), some far below, with and without a window.
Test(ops, attention_sinks, .timeout = MT_HANG(60)) {
    const float sinks[8] = {0.0f, 3.0f, -2.0f, 40.0f, 1.5f, -30.0f, 0.5f, 6.0f};
    check_attention_wcs(MINT_TYPE_F32, 8, 2, 64, 7, 200, 2e-6, 0, 0.0f, sinks);
    check_attention_wcs(MINT_TYPE_F32, 8, 2, 64, 32, 200, 2e-6, 9, 0.0f, sinks);
    check_attention_wcs(MINT_TYPE_F16, 8, 2, 64, 7, 200, 1e-3, 0, 0.0f, sinks);
}
Test(ops, attention_f16_window, .timeout = MT_HANG(60)) {
    check_attention_wc(MINT_TYPE_F16, 8, 2, 64, 7, 200, 1e-3, 9, 50.0f);
}
// 200 tokens: flash's steps of ten 7-position blocks, three of them and a partial one.
Test(ops, attention_f32_long_odd_blocks, .timeout = MT_HANG(60)) {
    check_attention(MINT_TYPE_F32, 8, 2, 64, 7, 200, 2e-6);
}
// stories260K's heads: 8 of head_dim 8 on 4 KV heads, shorter than one vector of any level.
Test(ops, attention_f32_tiny_heads, .timeout = MT_HANG(60)) {
    check_attention(MINT_TYPE_F32, 8, 4, 8, 32, 150, 2e-6);
}
Test(ops, attention_f16_mha, .timeout = MT_HANG(60)) {
    check_attention(MINT_TYPE_F16, 4, 4, 16, 16, 70, 1e-3);
}
Test(ops, attention_f16_gqa, .timeout = MT_HANG(60)) {
    check_attention(MINT_TYPE_F16, 8, 2, 64, 32, 70, 1e-3);
}
Test(ops, attention_f16_long_odd_blocks, .timeout = MT_HANG(60)) {
    check_attention(MINT_TYPE_F16, 4, 1, 24, 5, 150, 1e-3);
}

// One batch of several runs, as mint_decode makes them: a run of sequence A, a run of sequence B
// (its first tokens), then A's next run. Every query must get the bits it gets alone, for every
// algorithm and with the items taken in either order.
Test(ops, attention_runs_of_several_sequences, .timeout = MT_HANG(60)) {
    enum { NA = 90, NB = 45, HEADS = 8, KVH = 2, HD = 64, BLOCK = 16, ROWS = 30 + NB + 40 };
    const int qd = HEADS * HD, kvd = KVH * HD;
    const mint_attn_shape sh = {HEADS, KVH, HD, 0.125f, 0.0f};
    paged pa, pb;
    paged_init(&pa, MINT_TYPE_F32, kvd, BLOCK, (NA + BLOCK - 1) / BLOCK);
    paged_init(&pb, MINT_TYPE_F32, kvd, BLOCK, (NB + BLOCK - 1) / BLOCK);
    float *kv = malloc(sizeof(float) * (size_t)kvd * 2), *q = malloc(sizeof(float) * ROWS * qd);
    float *out = malloc(sizeof(float) * ROWS * qd), *one = malloc(sizeof(float) * ROWS * qd);
    mint_rng_seed(&rng, 10);
    for (int j = 0; j < NA + NB; j++) {
        fill(kv, 2 * kvd, 1.0);
        mint_kv_store(j < NA ? &pa.kv : &pb.kv, 0, j < NA ? j : j - NA, kv, kv + kvd);
    }
    fill(q, ROWS * qd, 1.5);
    mint_attn_run runs[3] = {{.kv = pa.kv, .row0 = 0, .n = 30, .pos0 = 20},
                             {.kv = pb.kv, .row0 = 30, .n = NB, .pos0 = 0},
                             {.kv = pa.kv, .row0 = 30 + NB, .n = 40, .pos0 = 50}};
    size_t scratch_bytes = 0;
    for (int a = 0; a < MINT_ATTN_ALGO_COUNT; a++) {
        size_t sb = mint_attention_scratch_bytes((mint_attn_algo)a, &sh, NB, NA, BLOCK);
        if (sb > scratch_bytes) scratch_bytes = sb;
    }
    scratch_bytes = (scratch_bytes + 63) / 64 * 64;
    uint8_t *scratch = aligned_alloc(64, scratch_bytes);
    for (int a = 0; a < MINT_ATTN_ALGO_COUNT; a++)
        for (int reverse = 0; reverse < 2; reverse++) {
            mint_attn_batch b = {.k = mint_kernels_get(),
                                 .sh = &sh,
                                 .algo = (mint_attn_algo)a,
                                 .q = q,
                                 .q_stride = qd * sizeof(float),
                                 .out = out,
                                 .out_stride = qd * sizeof(float),
                                 .runs = runs,
                                 .n_runs = 3};
            for (int i = 0; i < ROWS * qd; i++) out[i] = NAN;
            run_items(&b, scratch, scratch_bytes, reverse);
            for (int r = 0; r < 3; r++)
                for (int32_t i = 0; i < runs[r].n; i++) { // each query alone
                    mint_attn_run alone = {.kv = runs[r].kv,
                                           .row0 = runs[r].row0 + i,
                                           .n = 1,
                                           .pos0 = runs[r].pos0 + i};
                    mint_attn_batch b1 = b;
                    b1.out = one;
                    b1.runs = &alone;
                    b1.n_runs = 1;
                    run_items(&b1, scratch, scratch_bytes, 0);
                    const size_t at = (size_t)(runs[r].row0 + i) * qd;
                    cr_assert_eq(memcmp(out + at, one + at, sizeof(float) * qd), 0,
                                 "%s: run %d query %d differs from itself alone",
                                 mint_attn_algo_name((mint_attn_algo)a), r, i);
                }
        }
    for (int i = 0; i < (NA + BLOCK - 1) / BLOCK; i++) free(pa.mem[i]);
    for (int i = 0; i < (NB + BLOCK - 1) / BLOCK; i++) free(pb.mem[i]);
    free(kv), free(q), free(out), free(one), free(scratch);
}
