// test_ops_arch.c - the ops some architectures add to llama's block, each against a
// double-precision twin (or, for NEOX RoPE, against the NORMAL RoPE of tests/test_ops.c): NEOX
// pairs, per-head RMSNorm (Qwen3), LayerNorm and GELU as ggml computes them (GPT-2), soft-capping
// and GeGLU (Gemma), YaRN RoPE and the clamped SwiGLU (gpt-oss). Sliding-window attention and
// gpt-oss's sinks are tested with the other attention cases in tests/test_ops.c.
#include "base/rng.h"
#include "ops/ops.h"
#include "quant/fp16.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <string.h>

#define UNIT 0x1p-24 // unit roundoff of f32 (half an ulp of 1)

static mint_rng rng;

// Values spread like activations: uniform in (-scale, scale) (the twins are exact whatever the
// distribution; the spread only has to exercise signs and magnitudes).
static void fill(float *x, int64_t n, double scale) {
    for (int64_t i = 0; i < n; i++) x[i] = (float)(scale * (2.0 * mint_rng_uniform(&rng) - 1.0));
}

static int same_bits(float a, float b) {
    return memcmp(&a, &b, sizeof a) == 0;
}

// NEOX with no factors at base b equals NORMAL on the same numbers regrouped: pair i moves from
// (2i, 2i+1) to (i, i + hd/2), bit for bit (the same angles, the same two FMAs).
Test(ops_arch, rope_neox_is_normal_regrouped) {
    enum { HD = 64, HEADS = 2, N = HD * HEADS };
    float x[N], normal[N], neox[N];
    mint_rng_seed(&rng, 5);
    fill(x, N, 1.0);
    for (int h = 0; h < HEADS; h++)
        for (int i = 0; i < HD / 2; i++) {
            normal[h * HD + 2 * i] = neox[h * HD + i] = x[h * HD + 2 * i];
            normal[h * HD + 2 * i + 1] = neox[h * HD + i + HD / 2] = x[h * HD + 2 * i + 1];
        }
    const mint_rope_cfg c_normal = {HD, 10000.0f, 1.0f, NULL, false, 1.0f, 0.0f, {0, 0}};
    const mint_rope_cfg c_neox = {HD, 10000.0f, 1.0f, NULL, true, 1.0f, 0.0f, {0, 0}};
    mint_rope_row(normal, HEADS, HD, &c_normal, 123);
    mint_rope_row(neox, HEADS, HD, &c_neox, 123);
    for (int h = 0; h < HEADS; h++)
        for (int i = 0; i < HD / 2; i++) {
            cr_assert(same_bits(normal[h * HD + 2 * i], neox[h * HD + i]));
            cr_assert(same_bits(normal[h * HD + 2 * i + 1], neox[h * HD + i + HD / 2]));
        }
}

// Per-head RMSNorm (Qwen3's q/k norms) against a double twin: each head's mean square over its
// own head_dim, times the weight. Budget 4 * 2^-24 relative to the largest |y| of the head
// (ops/norm.c: squares in double, one f32 scale, two rounded products).
Test(ops_arch, rms_norm_heads_matches_double) {
    enum { HD = 64, HEADS = 3, N = HD * HEADS, ROWS = 3 };
    static float x[ROWS * N], w[HD];
    mint_rng_seed(&rng, 6);
    fill(x, ROWS * N, 1.0);
    fill(w, HD, 1.0);
    for (int i = 0; i < HD; i++) x[N + i] *= 1e3f; // one head of row 1 far larger than the others
    static float orig[ROWS * N];
    memcpy(orig, x, sizeof x);
    mint_rms_norm_heads(x, N * sizeof(float), w, HEADS, HD, 1e-6f, 0, ROWS);
    for (int r = 0; r < ROWS; r++)
        for (int h = 0; h < HEADS; h++) {
            const float *v = orig + r * N + h * HD;
            double ss = 0, ymax = 0, yref[HD];
            for (int i = 0; i < HD; i++) ss += (double)v[i] * v[i];
            const double scale = 1.0 / sqrt(ss / HD + 1e-6);
            for (int i = 0; i < HD; i++) {
                yref[i] = v[i] * scale * w[i];
                if (fabs(yref[i]) > ymax) ymax = fabs(yref[i]);
            }
            for (int i = 0; i < HD; i++)
                cr_assert(fabs(x[r * N + h * HD + i] - yref[i]) <= 4 * UNIT * ymax,
                          "row %d head %d [%d]: %.9g vs %.9g", r, h, i, x[r * N + h * HD + i],
                          yref[i]);
        }
}

// The double twin's mean and variance. (Maxima in this file are taken with comparisons, not
// fmax: gcc 12 for aarch64 stops with an internal error vectorising an fmax reduction.)
static double mean_of(const float *v, int n) {
    double sum = 0;
    for (int i = 0; i < n; i++) sum += v[i];
    return sum / n;
}
static double variance_of(const float *v, int n, double mean) {
    double sum = 0;
    for (int i = 0; i < n; i++) sum += (v[i] - mean) * (v[i] - mean);
    return sum / n;
}

// LayerNorm (GPT-2) against a double twin: (x - mean) / sqrt(var + eps) * w. Budget relative to
// the largest |y| of the row: 8 * 2^-24 for the variance, the scale and the two products, plus
// what the f32 mean costs a row far from zero. Rows with a large offset (mean 100, spread 1)
// check that the deviation is taken before squaring.
Test(ops_arch, layer_norm_matches_double) {
    enum { N = 768, ROWS = 4 };
    static float x[ROWS * N], y[ROWS * N], w[N];
    mint_rng_seed(&rng, 8);
    fill(x, ROWS * N, 1.0);
    fill(w, N, 1.0);
    for (int i = 0; i < N; i++) x[N + i] += 100.0f, x[3 * N + i] *= 1e-3f;
    mint_layer_norm(x, N * sizeof(float), w, y, N * sizeof(float), N, 1e-5f, 0, ROWS);
    double worst = 0;
    for (int r = 0; r < ROWS; r++) {
        const float *v = x + r * N;
        double ref[N], ymax = 0;
        const double mean = mean_of(v, N), var = variance_of(v, N, mean);
        for (int i = 0; i < N; i++) {
            ref[i] = (v[i] - mean) / sqrt(var + 1e-5) * w[i];
            if (fabs(ref[i]) > ymax) ymax = fabs(ref[i]);
        }
        // The f32 mean (ggml's too) is off by up to 2 roundings of |mean|, which moves every
        // x - mean alike: 2 |mean| / std in units of the output, doubled for margin.
        const double budget = (8 + 4 * fabs(mean) / sqrt(var)) * UNIT;
        for (int i = 0; i < N; i++) {
            const double d = fabs(y[r * N + i] - ref[i]) / ymax;
            if (d / budget > worst) worst = d / budget;
            cr_assert_leq(d, budget, "row %d [%d]: %.9g vs %.9g", r, i, y[r * N + i], ref[i]);
        }
    }
    cr_log_info("layer norm: max error / budget %.3f", worst);
}

// GELU against a double twin of what llama.cpp computes: the tanh form at x rounded to f16, in
// double, rounded to f16. mint evaluates the form in f32 (as ggml fills its table), so the two
// can land on either side of an f16 rounding boundary: within one f16 ulp (2^-10 relative), or,
// where f32's 1 + tanh cancels (x well below 0), within |x| 2^-22. Every f16 value in [-10, 10] is
// tried, and the ends: 0 at or below -10, x at or above 10, as ggml's vector GELU does before its
// table.
Test(ops_arch, gelu_matches_double) {
    int exact = 0, total = 0;
    for (uint32_t hb = 0; hb < 0x10000; hb++) {
        const float x = mint_f16_to_f32((uint16_t)hb);
        if (!(x > -10.0f && x < 10.0f)) continue;
        const double g = 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * x * (1.0 + 0.044715 * x * x)));
        const float ref = mint_f16_to_f32(mint_f32_to_f16((float)g));
        const float got = mint_gelu_one(x);
        total++;
        exact += got == ref;
        // f32's 1 + tanh(z) cancels for negative x: an absolute error of about |x| 2^-24.
        cr_assert_leq(fabs((double)got - ref), fmax(fabs(ref) * 0x1p-10, fabs(x) * 0x1p-22),
                      "x %g: %g vs %g", (double)x, (double)got, (double)ref);
    }
    cr_assert_eq(mint_gelu_one(-10.0f), 0.0f);
    cr_assert_eq(mint_gelu_one(-1e30f), 0.0f);
    cr_assert_eq(mint_gelu_one(10.0f), 10.0f);
    cr_assert_eq(mint_gelu_one(12.5f), 12.5f);
    // Inputs that round to one f16 value give one output: the table's property.
    cr_assert_eq(mint_gelu_one(1.0f), mint_gelu_one(1.0f + 0x1p-13f));
    cr_log_info("gelu: %d of %d f16 inputs give the double twin's f16 exactly, the rest one ulp",
                exact, total);
}

// Soft-capping (Gemma 2's scores and logits) against a double twin, c tanh(x / c): within 4 ulps
// of c (x / c rounds once, tanhf is within 2 ulps, the product rounds once), over values from
// well inside the cap to far past it.
Test(ops_arch, softcap_matches_double) {
    enum { N = 4096 };
    static float x[N];
    mint_rng_seed(&rng, 9);
    fill(x, N, 200.0);
    static float y[N];
    memcpy(y, x, sizeof x);
    mint_softcap(y, sizeof y, 30.0f, N, 0, 1);
    for (int i = 0; i < N; i++) {
        const double ref = tanh((double)x[i] / 30.0) * 30.0;
        cr_assert_leq(fabs(y[i] - ref), 4 * 30.0 * 2 * UNIT, "x %g: %.9g vs %.9g", (double)x[i],
                      (double)y[i], ref);
        cr_assert_leq(fabsf(y[i]), 30.0f);
    }
}

// GeGLU (Gemma) is GELU's table value times the up projection, and 0 where the gate is at or
// below -10, as ggml's geglu.
Test(ops_arch, gelu_mul_is_gelu_times_up) {
    enum { N = 1024 };
    static float g[N], u[N], y[N];
    mint_rng_seed(&rng, 10);
    fill(g, N, 12.0);
    fill(u, N, 2.0);
    memcpy(y, g, sizeof g);
    mint_gelu_mul(y, sizeof y, u, sizeof u, N, 0, 1);
    for (int i = 0; i < N; i++)
        cr_assert(same_bits(y[i], g[i] <= -10.0f ? 0.0f : mint_gelu_one(g[i]) * u[i]), "[%d]", i);
}

// YaRN (gpt-oss: factor 32 over 4096 original positions, base 150000, NEOX pairs of a 64-wide
// head): the correction range is the pairs [8, 18] (the formula in double: 8.09 floored, 17.4
// ceiled); pairs below it keep their angle pos theta_i, pairs above it take pos theta_i / 32,
// and the ramp between mixes the two linearly; cos and sin are scaled by 1 + 0.1 ln 32 times the
// attention factor. Against that formula in double: the angle's error is at most pos theta_i's
// (the larger of the two it mixes) as in rope_matches_double, plus the mix's two products and
// sum (3 roundings), so the same budget with a factor 2.
Test(ops, rope_yarn_matches_double) {
    enum { HD = 64, HEADS = 2 };
    mint_rng_seed(&rng, 41);
    const int n_ctx_orig = 4096;
    const double base = 150000.0, factor = 32.0;
    float dims[2];
    mint_rope_yarn_corr_dims(HD, n_ctx_orig, (float)base, dims);
    double want[2];
    for (int j = 0; j < 2; j++)
        want[j] = HD * log(n_ctx_orig / ((j ? 1.0 : 32.0) * 2 * M_PI)) / (2 * log(base));
    cr_assert(dims[0] == floor(want[0]) && dims[1] == ceil(want[1]) && dims[0] == 8.0f &&
                  dims[1] == 18.0f,
              "corr dims %g %g (double %g %g)", dims[0], dims[1], want[0], want[1]);
    const float attn = 0.87f; // any attention factor: it multiplies cos and sin
    const mint_rope_cfg cfg = {HD,   (float)base, (float)(1.0 / factor), NULL, true,
                               attn, 1.0f,        {dims[0], dims[1]}};
    const int32_t positions[] = {0, 1, 17, 511, 4095, 20000};
    float x[HD * HEADS], y[HD * HEADS];
    double worst = 0;
    for (size_t pi = 0; pi < sizeof positions / sizeof *positions; pi++) {
        const int32_t pos = positions[pi];
        fill(x, HD * HEADS, 1.0);
        memcpy(y, x, sizeof x);
        mint_rope_row(y, HEADS, HD, &cfg, pos);
        const double ms = attn * (1.0 + 0.1 * log(factor));
        const double budget = 2.0 * (8.0 * pos + 8.0) * UNIT;
        for (int h = 0; h < HEADS; h++)
            for (int i = 0; i < HD / 2; i++) {
                const double extrap = pos * pow(base, -2.0 * i / HD), interp = extrap / factor;
                const double ramp = 1.0 - fmin(1.0, fmax(0.0, (i - dims[0]) / (dims[1] - dims[0])));
                const double th = interp * (1.0 - ramp) + extrap * ramp;
                const int a = h * HD + i, b = a + HD / 2;
                const double ra = ms * (x[a] * cos(th) - x[b] * sin(th));
                const double rb = ms * (x[a] * sin(th) + x[b] * cos(th));
                const double d = hypot(y[a] - ra, y[b] - rb) / (ms * hypot(x[a], x[b]));
                cr_assert(d <= budget, "pos %d pair %d: %.3g > %.3g", pos, i, d, budget);
                worst = fmax(worst, d / budget);
            }
    }
    cr_log_info("rope yarn: corr dims [%g, %g]; max error / budget %.3f", dims[0], dims[1], worst);
}

// gpt-oss's clamped SwiGLU against its formula in double: min(g, 7) sigmoid(1.702 min(g, 7))
// (clamp(u, -7, 7) + 1), within a few roundings (expf's ulp, a division, a product: 8 units
// relative to the larger of the output and the gate's magnitude times the up factor).
Test(ops, swiglu_oai_matches_double) {
    enum { N = 4096 };
    static float g[N], u[N], out[N];
    mint_rng_seed(&rng, 43);
    fill(g, N, 6.0);
    fill(u, N, 6.0);
    g[0] = 7.0f, g[1] = 30.0f, g[2] = -30.0f, u[3] = -9.0f, u[4] = 9.0f, u[5] = -7.0f;
    memcpy(out, g, sizeof g);
    mint_swiglu_oai(out, 0, u, 0, N, 0, 1);
    for (int i = 0; i < N; i++) {
        const double x = fmin(g[i], 7.0), y = fmin(fmax(u[i], -7.0), 7.0);
        const double want = x / (1.0 + exp(-1.702 * x)) * (y + 1.0);
        const double scale = fabs(x) * (fabs(y) + 1.0) + 1e-30;
        cr_assert(fabs(out[i] - want) <= 8 * UNIT * scale, "[%d] g %g u %g: %.9g vs %.9g", i, g[i],
                  u[i], out[i], want);
    }
}
