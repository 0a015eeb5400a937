// test_ops_delta.c - the gated delta-net ops (ops/delta_net.h) against double-precision twins
// written here, the chunked delta rule against the recurrent one, and the splits of heads, rows
// and channels the executor makes. Every check states its budget and why; the measured worst
// errors are logged with cr_log_info (run with --verbose). Data come from fixed seeds.
#include "base/rng.h"
#include "ops/delta_net.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static mint_rng rng;

// Standard normal by Box-Muller, reproducible for a seed.
static double gauss(void) {
    double u = mint_rng_uniform(&rng), v = mint_rng_uniform(&rng);
    return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

static void fill(float *x, int64_t n, double scale) {
    for (int64_t i = 0; i < n; i++) x[i] = (float)(scale * gauss());
}

static double sigmoid_d(double x) {
    return 1.0 / (1.0 + exp(-x));
}

// ---------------------------------------------------------------------------------------------
// L2 norm, gates, gated norm, sigmoid gate

// Budget 1e-6 relative per element: each square rounded to f32 (2^-24), the double sum rounded
// to f32, sqrtf, the reciprocal and x * scale: five roundings of at most 2^-24 (3e-7 together),
// the two under the root halved. Rows of 1e-30 have f32 squares of 0 and come out as x / eps,
// as the double twin's max(norm, eps) does too.
Test(ops_delta, l2_norm_matches_double) {
    enum { H = 3, D = 37, ROWS = 4, STRIDE = H * D + 5 };
    const double mags[] = {1.0, 1e-3, 1e-30, 1e12};
    static float x[ROWS * STRIDE], y[ROWS * STRIDE];
    double worst = 0;
    mint_rng_seed(&rng, 11);
    for (size_t mi = 0; mi < 4; mi++) {
        fill(x, ROWS * STRIDE, mags[mi]);
        memcpy(y, x, sizeof x);
        mint_l2_norm_heads(y, STRIDE * sizeof(float), H, D, 1e-6f, 0, ROWS);
        for (int r = 0; r < ROWS; r++)
            for (int h = 0; h < H; h++) {
                const float *xh = x + r * STRIDE + h * D, *yh = y + r * STRIDE + h * D;
                double ss = 0;
                for (int i = 0; i < D; i++) ss += (double)xh[i] * xh[i];
                const double norm = fmax(sqrt(ss), 1e-6);
                for (int i = 0; i < D; i++) {
                    const double ref = xh[i] / norm, err = fabs(yh[i] - ref);
                    cr_assert(err <= 1e-6 * fabs(ref), "mag %g [%d][%d][%d]: %.9g vs %.9g",
                              mags[mi], r, h, i, (double)yh[i], ref);
                    if (ref != 0) worst = fmax(worst, err / fabs(ref));
                }
            }
        for (int r = 0; r < ROWS; r++) // the gap after the heads is not touched
            for (int i = H * D; i < STRIDE; i++) cr_assert(y[r * STRIDE + i] == x[r * STRIDE + i]);
    }
    cr_log_info("l2_norm: max relative error %.3g (budget 1e-6)", worst);
}

// g = softplus(alpha + dt) * a: f32 rounds alpha + dt, 1 + e^x (an absolute 2^-24 that logf
// turns into an absolute 2^-24 / (1 + e^x) of the softplus, which matters only where the
// softplus is small), expf and logf (about an ulp each) and the product: |dg| <= |a| (1.2e-7 +
// 1e-6 softplus). beta = sigmoid: 1 + e^-x rounded, expf, the division: 1e-6 relative.
Test(ops_delta, gates_match_double) {
    enum { H = 16, ROWS = 50 };
    static float al[ROWS * H], be[ROWS * H], al0[ROWS * H], be0[ROWS * H], dt[H], a[H];
    double worst_g = 0, worst_b = 0;
    mint_rng_seed(&rng, 12);
    fill(al0, ROWS * H, 4.0); // up to about +-16, past the softplus cut at 20 with dt
    fill(be0, ROWS * H, 4.0);
    fill(dt, H, 3.0);
    for (int h = 0; h < H; h++) a[h] = (float)-exp(gauss()); // -exp(A_log)
    memcpy(al, al0, sizeof al), memcpy(be, be0, sizeof be);
    mint_delta_gates(al, H * sizeof(float), be, H * sizeof(float), dt, a, H, 0, ROWS);
    for (int r = 0; r < ROWS; r++)
        for (int h = 0; h < H; h++) {
            const double x = (double)(al0[r * H + h] + dt[h]); // the sum is f32 in ggml too
            const double sp = x > 20.0 ? x : log1p(exp(x));
            const double g = sp * a[h], eg = fabs(al[r * H + h] - g);
            cr_assert(eg <= fabs(a[h]) * (1.2e-7 + 1e-6 * sp), "g[%d][%d] %.9g vs %.9g", r, h,
                      (double)al[r * H + h], g);
            const double b = sigmoid_d(be0[r * H + h]), eb = fabs(be[r * H + h] - b);
            cr_assert(eb <= 1e-6 * b, "beta[%d][%d] %.9g vs %.9g", r, h, (double)be[r * H + h], b);
            worst_g = fmax(worst_g, eg / fabs(a[h])), worst_b = fmax(worst_b, eb / b);
        }
    cr_log_info("gates: max |dg|/|a| %.3g, max relative beta error %.3g", worst_g, worst_b);
}

// rmsnorm(x) * w * silu(z): rms_norm's 4.5e-7 (tests/test_ops.c), silu's expf, 1 + e^-z and the
// division (about 2.5e-7), the last product (6e-8): budget 1e-6 relative.
Test(ops_delta, rms_norm_gated_matches_double) {
    enum { H = 4, D = 24, ROWS = 5, XS = H * D + 3, ZS = H * D + 7 };
    static float x[ROWS * XS], x0[ROWS * XS], z[ROWS * ZS], w[D];
    double worst = 0;
    mint_rng_seed(&rng, 13);
    fill(x0, ROWS * XS, 2.0);
    fill(z, ROWS * ZS, 3.0);
    for (int i = 0; i < D; i++) w[i] = (float)(1.0 + 0.3 * gauss());
    memcpy(x, x0, sizeof x);
    mint_rms_norm_gated(x, XS * sizeof(float), z, ZS * sizeof(float), w, H, D, 1e-6f, 0, ROWS);
    for (int r = 0; r < ROWS; r++)
        for (int h = 0; h < H; h++) {
            const float *xh = x0 + r * XS + h * D;
            double ss = 0;
            for (int i = 0; i < D; i++) ss += (double)xh[i] * xh[i];
            const double sc = 1.0 / sqrt(ss / D + 1e-6);
            for (int i = 0; i < D; i++) {
                const double zi = z[r * ZS + h * D + i];
                const double ref = xh[i] * sc * w[i] * zi * sigmoid_d(zi);
                const double err = fabs(x[r * XS + h * D + i] - ref);
                cr_assert(err <= 1e-6 * fabs(ref), "[%d][%d][%d] %.9g vs %.9g", r, h, i,
                          (double)x[r * XS + h * D + i], ref);
                if (ref != 0) worst = fmax(worst, err / fabs(ref));
            }
        }
    cr_log_info("rms_norm_gated: max relative error %.3g (budget 1e-6)", worst);
}

// x * sigmoid(g), the gate read from every other head_dim run as Qwen3.5's q projection holds
// it: expf, 1 + e^-g, the division and the product, 1e-6 relative.
Test(ops_delta, sigmoid_gate_matches_double) {
    enum { H = 3, D = 20, ROWS = 4, XS = H * D, GS = 2 * H * D + 4 };
    static float x[ROWS * XS], x0[ROWS * XS], qg[ROWS * GS];
    double worst = 0;
    mint_rng_seed(&rng, 14);
    fill(x0, ROWS * XS, 2.0);
    fill(qg, ROWS * GS, 5.0);
    memcpy(x, x0, sizeof x);
    mint_sigmoid_gate(x, XS * sizeof(float), qg + D, GS * sizeof(float), 2 * D, H, D, 0, ROWS);
    for (int r = 0; r < ROWS; r++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < D; i++) {
                const double ref =
                    x0[r * XS + h * D + i] * sigmoid_d(qg[r * GS + 2 * h * D + D + i]);
                const double err = fabs(x[r * XS + h * D + i] - ref);
                cr_assert(err <= 1e-6 * fabs(ref), "[%d][%d][%d]", r, h, i);
                if (ref != 0) worst = fmax(worst, err / fabs(ref));
            }
    cr_log_info("sigmoid_gate: max relative error %.3g (budget 1e-6)", worst);
}

// ---------------------------------------------------------------------------------------------
// The causal convolution

// 150 channels: two blocks of 64 that ops/delta_net.c runs together, and the rest one by one.
enum { CV_C = 150, CV_L = 4, CV_T = 23, CV_XS = CV_C + 3, CV_OS = CV_C + 5 };

// Budget: out is a sum of L = 4 products, each rounded, added in f32: at most 2L roundings of
// the running sum, so |err| <= 8 * 2^-24 * sum_j |w_j xx_j| (5e-7 of the terms' absolute sum);
// silu's derivative is below 1.1 and its own rounding adds 2.5e-7 relative.
static void conv_check(const float *x, const float *w, const float *st0, const float *out,
                       const float *st, int T, int silu, double *worst) {
    for (int c = 0; c < CV_C; c++) {
        for (int t = 0; t < T; t++) {
            double sum = 0, mag = 0;
            for (int j = 0; j < CV_L; j++) {
                const int p = t + j - (CV_L - 1);
                const double xv = p < 0 ? st0[c * (CV_L - 1) + t + j] : x[p * CV_XS + c];
                sum += w[c * CV_L + j] * xv, mag += fabs(w[c * CV_L + j] * xv);
            }
            const double ref = silu ? sum * sigmoid_d(sum) : sum;
            const double err = fabs(out[t * CV_OS + c] - ref);
            const double budget = 1.1 * 5e-7 * mag + 2.5e-7 * fabs(ref);
            cr_assert(err <= budget, "c %d t %d: %.9g vs %.9g", c, t, (double)out[t * CV_OS + c],
                      ref);
            if (mag > 0) *worst = fmax(*worst, err / mag);
        }
        for (int j = 0; j < CV_L - 1; j++) { // the last L-1 inputs, exactly
            const int p = T + j - (CV_L - 1);
            const float want = p < 0 ? st0[c * (CV_L - 1) + T + j] : x[p * CV_XS + c];
            cr_assert(st[c * (CV_L - 1) + j] == want, "state c %d j %d", c, j);
        }
    }
}

Test(ops_delta, conv1d_matches_double) {
    static float x[CV_T * CV_XS], w[CV_C * CV_L], st0[CV_C * (CV_L - 1)], st[CV_C * (CV_L - 1)],
        out[CV_T * CV_OS];
    double worst = 0;
    mint_rng_seed(&rng, 15);
    fill(x, CV_T * CV_XS, 2.0);
    fill(w, CV_C * CV_L, 0.5);
    fill(st0, CV_C * (CV_L - 1), 2.0);
    const int lens[] = {1, 2, 3, CV_T}; // shorter than the state, equal, longer
    for (int li = 0; li < 4; li++)
        for (int silu = 0; silu < 2; silu++) {
            memcpy(st, st0, sizeof st);
            mint_conv1d_causal(x, CV_XS * sizeof(float), lens[li], w, CV_L, st, out,
                               CV_OS * sizeof(float), silu, 0, CV_C);
            conv_check(x, w, st0, out, st, lens[li], silu, &worst);
        }
    cr_log_info("conv1d: max |err| / sum |terms| %.3g (budget 5.5e-7)", worst);
}

// A run cut in two calls (the state carried between them) and channels cut in two ranges give
// the bits of one call; the cut at channel 17 also moves every channel between the blocked path
// and the one-by-one path.
Test(ops_delta, conv1d_splits_are_bit_identical) {
    static float x[CV_T * CV_XS], w[CV_C * CV_L], st0[CV_C * (CV_L - 1)], st1[CV_C * (CV_L - 1)],
        st2[CV_C * (CV_L - 1)], o1[CV_T * CV_OS], o2[CV_T * CV_OS];
    mint_rng_seed(&rng, 16);
    fill(x, CV_T * CV_XS, 2.0);
    fill(w, CV_C * CV_L, 0.5);
    fill(st0, CV_C * (CV_L - 1), 2.0);
    for (int cut = 1; cut < CV_T; cut += 5) {
        memset(o1, 0, sizeof o1), memset(o2, 0, sizeof o2);
        memcpy(st1, st0, sizeof st1), memcpy(st2, st0, sizeof st2);
        mint_conv1d_causal(x, CV_XS * sizeof(float), CV_T, w, CV_L, st1, o1, CV_OS * sizeof(float),
                           true, 0, CV_C);
        mint_conv1d_causal(x, CV_XS * sizeof(float), cut, w, CV_L, st2, o2, CV_OS * sizeof(float),
                           true, 0, 17);
        mint_conv1d_causal(x, CV_XS * sizeof(float), cut, w, CV_L, st2, o2, CV_OS * sizeof(float),
                           true, 17, CV_C);
        mint_conv1d_causal(x + cut * CV_XS, CV_XS * sizeof(float), CV_T - cut, w, CV_L, st2,
                           o2 + cut * CV_OS, CV_OS * sizeof(float), true, 0, CV_C);
        cr_assert(memcmp(o1, o2, sizeof o1) == 0, "cut %d: outputs differ", cut);
        cr_assert(memcmp(st1, st2, sizeof st1) == 0, "cut %d: states differ", cut);
    }
}

// ---------------------------------------------------------------------------------------------
// The delta rule

// A run laid out as Qwen3.5 hands it over: per token one row [q | k | v | gap] (the
// convolution's output) and one row [g | beta], so every stride is wider than its part.
typedef struct problem {
    mint_delta_dims d;
    int T;
    int row;      // floats per qkv row
    int grow;     // floats per g/beta row
    float *qkv;   // [T][row]
    float *gb;    // [T][grow]
    float *state; // [H_v][S_v][S_k], the state before the run
} problem;

static problem make_problem(uint64_t seed, int hk, int hv, int sk, int sv, int T) {
    problem p = {.d = {hk, hv, sk, sv, (float)(1.0 / sqrt((double)sk))}, .T = T};
    p.row = 2 * hk * sk + hv * sv + 3;
    p.grow = 2 * hv + 1;
    p.qkv = malloc((size_t)T * p.row * sizeof(float));
    p.gb = malloc((size_t)T * p.grow * sizeof(float));
    p.state = malloc((size_t)hv * sv * sk * sizeof(float));
    mint_rng_seed(&rng, seed);
    fill(p.qkv, (int64_t)T * p.row, 1.0);
    for (int t = 0; t < T; t++)
        for (int h = 0; h < 2 * hk; h++) { // q and k heads to unit length, in double
            float *x = p.qkv + (size_t)t * p.row + (size_t)h * sk;
            double ss = 0;
            for (int i = 0; i < sk; i++) ss += (double)x[i] * x[i];
            for (int i = 0; i < sk; i++) x[i] = (float)(x[i] / sqrt(ss));
        }
    for (int t = 0; t < T; t++)
        for (int h = 0; h < hv; h++) {
            // log-decays from about -3e-4 (a memory of thousands of tokens) to about -11
            // (almost none), and exactly 0 on some tokens
            const double u = gauss();
            p.gb[t * p.grow + h] = u > 2.2 ? 0.0f : (float)-exp(2.0 * u - 2.0);
            p.gb[t * p.grow + hv + h] = (float)(0.02 + 0.96 * mint_rng_uniform(&rng));
        }
    fill(p.state, (int64_t)hv * sv * sk, 0.3);
    return p;
}

static void free_problem(problem *p) {
    free(p->qkv), free(p->gb), free(p->state);
}

// The run's views, with `out` ([T][H_v][S_v] contiguous) and `state` (a copy of p's) to write.
static mint_delta_seq seq_of(const problem *p, float *out, float *state) {
    const mint_delta_dims *d = &p->d;
    const size_t rs = (size_t)p->row * sizeof(float), gs = (size_t)p->grow * sizeof(float);
    memcpy(state, p->state, (size_t)d->n_v_heads * d->s_v * d->s_k * sizeof(float));
    return (mint_delta_seq){.n_tokens = p->T,
                            .q = p->qkv,
                            .q_stride = rs,
                            .k = p->qkv + (size_t)d->n_k_heads * d->s_k,
                            .k_stride = rs,
                            .v = p->qkv + 2 * (size_t)d->n_k_heads * d->s_k,
                            .v_stride = rs,
                            .g = p->gb,
                            .g_stride = gs,
                            .beta = p->gb + d->n_v_heads,
                            .beta_stride = gs,
                            .out = out,
                            .out_stride = (size_t)d->n_v_heads * d->s_v * sizeof(float),
                            .state = state};
}

// The recurrence in double from the same f32 inputs: per token and value head h (key head
// h % H_k, as ggml's gated_delta_net broadcasts q and k), S = e^g S; d = beta (v - S^T k); S += k
// d^T; out = scale S^T q. Also the scale of each output's rounding errors, mag = scale sum_i
// |S[i][j] q[i]| (an output is a sum of those terms, so a float evaluation errs by a multiple of
// unit roundoff times it, however much the terms cancel), and of each state column's, its largest
// element.
typedef struct twin {
    double *out; // [T][H_v][S_v]
    double *mag; // [T][H_v][S_v]
    double *st;  // [H_v][S_v][S_k]
} twin;

static twin delta_twin(const problem *p) {
    const mint_delta_dims *d = &p->d;
    const int sk = d->s_k, sv = d->s_v;
    const size_t n_out = (size_t)p->T * d->n_v_heads * sv, n_st = (size_t)d->n_v_heads * sv * sk;
    twin w = {malloc(n_out * sizeof(double)), malloc(n_out * sizeof(double)),
              malloc(n_st * sizeof(double))};
    for (size_t i = 0; i < n_st; i++) w.st[i] = p->state[i];
    for (int t = 0; t < p->T; t++)
        for (int h = 0; h < d->n_v_heads; h++) {
            const float *row = p->qkv + (size_t)t * p->row, *gb = p->gb + (size_t)t * p->grow;
            const int hk = h % d->n_k_heads;
            const float *q = row + hk * sk, *k = row + (d->n_k_heads + hk) * sk,
                        *v = row + 2 * d->n_k_heads * sk + h * sv;
            const double decay = exp((double)gb[h]), beta = gb[d->n_v_heads + h];
            for (int j = 0; j < sv; j++) {
                double *col = w.st + ((size_t)h * sv + j) * sk, sk_dot = 0, sq = 0, mag = 0;
                for (int i = 0; i < sk; i++) col[i] *= decay, sk_dot += col[i] * k[i];
                const double dj = beta * (v[j] - sk_dot);
                for (int i = 0; i < sk; i++)
                    col[i] += k[i] * dj, sq += col[i] * q[i], mag += fabs(col[i] * q[i]);
                const size_t o = ((size_t)t * d->n_v_heads + h) * sv + j;
                w.out[o] = d->scale * sq, w.mag[o] = d->scale * mag;
            }
        }
    return w;
}

static void free_twin(twin *w) {
    free(w->out), free(w->mag), free(w->st);
}

// max |a - b| / mag over the outputs (b: f32 or the twin's double).
static double out_err(const float *a, const float *bf, const double *bd, const double *mag,
                      size_t n) {
    double worst = 0;
    for (size_t i = 0; i < n; i++)
        worst = fmax(worst, fabs((double)a[i] - (bf ? (double)bf[i] : bd[i])) / mag[i]);
    return worst;
}

// max over state columns of max |a - b| / the twin's largest |element| of the column.
static double state_err(const float *a, const float *bf, const double *bd, size_t cols, int n) {
    double worst = 0;
    for (size_t c = 0; c < cols; c++) {
        double e = 0, m = 0;
        for (size_t i = c * n; i < (c + 1) * n; i++)
            e = fmax(e, fabs((double)a[i] - (bf ? (double)bf[i] : bd[i]))),
            m = fmax(m, fabs(bd[i]));
        worst = fmax(worst, e / m);
    }
    return worst;
}

// The recurrent form over 40 tokens against the twin. Budget 1e-5 of each output's mag and of
// each state column's largest element: a dot of S_k = 128 terms sums in 16 f32 lanes, so a term
// is rounded at most log2(128 / 16) + 4 = 7 times on its way into an output (5e-7 of mag), and
// the state carries the error of the steps before it; the delta rule with unit keys and beta in
// (0, 1) does not amplify it (I - beta k k^T has norm 1, e^g <= 1), so it grows at most linearly,
// 40 steps of a few roundings of 6e-8 each: 1e-5 holds with a margin (observed: below 1e-6).
Test(ops_delta, recurrent_matches_double) {
    const int shapes[][4] = {{2, 4, 128, 128}, {3, 3, 37, 21}, {1, 2, 16, 40}};
    for (int si = 0; si < 3; si++) {
        const int *sh = shapes[si];
        problem p = make_problem(20 + si, sh[0], sh[1], sh[2], sh[3], 40);
        const size_t n_out = (size_t)p.T * sh[1] * sh[3], n_st = (size_t)sh[1] * sh[3] * sh[2];
        float *out = malloc(n_out * sizeof *out), *st = malloc(n_st * sizeof *st);
        const mint_delta_seq s = seq_of(&p, out, st);
        mint_delta_net_recurrent(mint_kernels_get(), &p.d, &s, 0, sh[1]);
        twin w = delta_twin(&p);
        const double eo = out_err(out, NULL, w.out, w.mag, n_out);
        const double es = state_err(st, NULL, w.st, n_st / sh[2], sh[2]);
        cr_log_info("recurrent H_k %d H_v %d S_k %d S_v %d, 40 tokens: out %.3g, state %.3g "
                    "(budget 1e-5)",
                    sh[0], sh[1], sh[2], sh[3], eo, es);
        cr_assert(eo <= 1e-5 && es <= 1e-5, "shape %d: out %.3g state %.3g", si, eo, es);
        free(out), free(st), free_twin(&w), free_problem(&p);
    }
}

// The chunked form against the recurrent one (and against the twin) over runs shorter than a
// chunk, of one chunk, one more, and several, with two value heads per key head. Budget 2e-5 of
// each output's mag and of each state column's largest element: the chunked form rounds the
// same terms in other ways (decays as running products of up to 64 factors, the inverse of a
// unit triangular 64 x 64 matrix with elements below 1, the state updated once per chunk), about
// twice the recurrent form's roundings per term; observed below 2e-6.
Test(ops_delta, chunked_matches_recurrent) {
    const int lens[] = {1, 7, 64, 65, 200};
    const int shapes[][4] = {{2, 4, 128, 128}, {2, 4, 37, 21}};
    double worst = 0;
    for (int si = 0; si < 2; si++)
        for (int li = 0; li < 5; li++) {
            const int *sh = shapes[si];
            problem p = make_problem(30 + 10 * si + li, sh[0], sh[1], sh[2], sh[3], lens[li]);
            const size_t n_out = (size_t)p.T * sh[1] * sh[3], n_st = (size_t)sh[1] * sh[3] * sh[2];
            float *o1 = malloc(n_out * sizeof *o1), *s1 = malloc(n_st * sizeof *s1);
            float *o2 = malloc(n_out * sizeof *o2), *s2 = malloc(n_st * sizeof *s2);
            void *scratch = aligned_alloc(64, mint_delta_net_chunked_scratch_bytes(&p.d));
            const mint_delta_seq a = seq_of(&p, o1, s1), b = seq_of(&p, o2, s2);
            mint_delta_net_recurrent(mint_kernels_get(), &p.d, &a, 0, sh[1]);
            mint_delta_net_chunked(&p.d, &b, scratch, 0, sh[1]);
            twin w = delta_twin(&p);
            const double eo = out_err(o2, o1, NULL, w.mag, n_out);
            const double es = state_err(s2, s1, w.st, n_st / sh[2], sh[2]);
            const double eo2 = out_err(o2, NULL, w.out, w.mag, n_out);
            const double es2 = state_err(s2, NULL, w.st, n_st / sh[2], sh[2]);
            cr_log_info("chunked S_k %d S_v %d T %3d: vs recurrent out %.3g state %.3g, vs "
                        "double out %.3g state %.3g (budget 2e-5)",
                        sh[2], sh[3], lens[li], eo, es, eo2, es2);
            cr_assert(eo <= 2e-5 && es <= 2e-5, "S_k %d T %d: out %.3g state %.3g", sh[2], lens[li],
                      eo, es);
            cr_assert(eo2 <= 2e-5 && es2 <= 2e-5, "S_k %d T %d vs double: out %.3g state %.3g",
                      sh[2], lens[li], eo2, es2);
            worst = fmax(worst, fmax(eo, es));
            free(o1), free(s1), free(o2), free(s2), free(scratch), free_twin(&w);
            free_problem(&p);
        }
    cr_log_info("chunked vs recurrent: worst %.3g (budget 2e-5)", worst);
}

// The executor splits the value heads: [0, a) and [a, H_v) in two calls write the bits of one
// call, in both forms, and a run cut at a token (the state carried) does in the recurrent form.
Test(ops_delta, head_and_token_splits_are_bit_identical) {
    problem p = make_problem(50, 2, 6, 40, 24, 70);
    const size_t n_out = (size_t)p.T * 6 * 24, n_st = (size_t)6 * 24 * 40;
    float *o1 = calloc(n_out, sizeof *o1), *s1 = malloc(n_st * sizeof *s1);
    float *o2 = calloc(n_out, sizeof *o2), *s2 = malloc(n_st * sizeof *s2);
    void *scratch = aligned_alloc(64, mint_delta_net_chunked_scratch_bytes(&p.d));
    for (int form = 0; form < 2; form++) {
        mint_delta_seq a = seq_of(&p, o1, s1), b = seq_of(&p, o2, s2);
        if (form == 0) {
            mint_delta_net_recurrent(mint_kernels_get(), &p.d, &a, 0, 6);
            mint_delta_net_recurrent(mint_kernels_get(), &p.d, &b, 0, 1);
            mint_delta_net_recurrent(mint_kernels_get(), &p.d, &b, 1, 6);
        } else {
            mint_delta_net_chunked(&p.d, &a, scratch, 0, 6);
            mint_delta_net_chunked(&p.d, &b, scratch, 0, 4);
            mint_delta_net_chunked(&p.d, &b, scratch, 4, 6);
        }
        cr_assert(memcmp(o1, o2, n_out * sizeof *o1) == 0, "form %d: outputs differ", form);
        cr_assert(memcmp(s1, s2, n_st * sizeof *s1) == 0, "form %d: states differ", form);
    }
    // Recurrent, 70 tokens as 33 + 37: token by token, so the same bits.
    mint_delta_seq a = seq_of(&p, o1, s1), b = seq_of(&p, o2, s2);
    mint_delta_net_recurrent(mint_kernels_get(), &p.d, &a, 0, 6);
    b.n_tokens = 33;
    mint_delta_net_recurrent(mint_kernels_get(), &p.d, &b, 0, 6);
    b.n_tokens = 37;
    b.q = (const float *)((const char *)b.q + 33 * b.q_stride);
    b.k = (const float *)((const char *)b.k + 33 * b.k_stride);
    b.v = (const float *)((const char *)b.v + 33 * b.v_stride);
    b.g = (const float *)((const char *)b.g + 33 * b.g_stride);
    b.beta = (const float *)((const char *)b.beta + 33 * b.beta_stride);
    b.out = (float *)((char *)b.out + 33 * b.out_stride);
    mint_delta_net_recurrent(mint_kernels_get(), &p.d, &b, 0, 6);
    cr_assert(memcmp(o1, o2, n_out * sizeof *o1) == 0, "token cut: outputs differ");
    cr_assert(memcmp(s1, s2, n_st * sizeof *s1) == 0, "token cut: states differ");
    free(o1), free(s1), free(o2), free(s2), free(scratch), free_problem(&p);
}
