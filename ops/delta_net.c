// delta_net.c - the non-matmul operations of a gated delta-net layer (ops/delta_net.h): L2 norm
// of q and k heads, the gates, the gated delta rule in its recurrent and chunked forms, the gated
// RMSNorm, the sigmoid gate and the causal depthwise convolution.
//
// The recurrent form follows ggml's CPU gated_delta_net step for step (llama.cpp runs that op for
// prompts too, so it is the form mint's logits can agree with most closely); only its dots sum
// in another order (16 interleaved lanes here, ggml's SIMD width and fused multiply-adds there).
// The chunked form is the algebra of llama.cpp's delta-net chunking (below), organised for a CPU.
#include "ops/delta_net.h"
#include "ops/ops.h"

#include <math.h>
#include <string.h>

// Each head of x[r] divided by its L2 norm   for r in [r0, r1)
void mint_l2_norm_heads(float *x, size_t stride, int n_heads, int head_dim, float eps, long r0,
                        long r1) {
    for (long r = r0; r < r1; r++)
        for (int h = 0; h < n_heads; h++) {
            float *v = (float *)((char *)x + (size_t)r * stride) + (size_t)h * head_dim;
            double sum = 0.0;
            for (int i = 0; i < head_dim; i++) sum += (double)(v[i] * v[i]);
            // ggml passes the double sum to sqrtf: rounded to f32 before the root.
            const float scale = 1.0f / fmaxf(sqrtf((float)sum), eps);
            for (int i = 0; i < head_dim; i++) v[i] *= scale;
        }
}

// alpha = softplus(alpha + dt_bias) * a, beta = sigmoid(beta)   for r in [r0, r1)
void mint_delta_gates(float *alpha, size_t alpha_stride, float *beta, size_t beta_stride,
                      const float *dt_bias, const float *a, int n_heads, long r0, long r1) {
    for (long r = r0; r < r1; r++) {
        float *al = (float *)((char *)alpha + (size_t)r * alpha_stride);
        float *be = (float *)((char *)beta + (size_t)r * beta_stride);
        for (int h = 0; h < n_heads; h++) {
            const float x = al[h] + dt_bias[h];
            const float sp = x > 20.0f ? x : logf(1.0f + expf(x));
            al[h] = sp * a[h];
            be[h] = 1.0f / (1.0f + expf(-be[h]));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The recurrent form: one token of one head is the kernel table's delta_step (quant/vec_ref.c
// is its plain version, and each SIMD level equals it bit for bit: tests/test_vec.c).

// Row `h` (of `width` floats) of token t of a strided array.
static const float *tok_row(const float *p, size_t stride, int t, int h, int width) {
    return (const float *)((const char *)p + (size_t)t * stride) + (size_t)h * width;
}

// The gated delta rule token by token, value heads [h0, h1)
void mint_delta_net_recurrent(const mint_kernels *K, const mint_delta_dims *d,
                              const mint_delta_seq *s, int h0, int h1) {
    const mint_vdelta_fn step = K->vec.delta_step;
    for (int h = h0; h < h1; h++) {
        const int hk = h % d->n_k_heads;
        float *st = s->state + (size_t)h * d->s_v * d->s_k;
        for (int t = 0; t < s->n_tokens; t++)
            step(st, d->s_k, d->s_v, tok_row(s->q, s->q_stride, t, hk, d->s_k),
                 tok_row(s->k, s->k_stride, t, hk, d->s_k),
                 tok_row(s->v, s->v_stride, t, h, d->s_v),
                 expf(*tok_row(s->g, s->g_stride, t, h, 1)),
                 *tok_row(s->beta, s->beta_stride, t, h, 1), d->scale,
                 (float *)tok_row(s->out, s->out_stride, t, h, d->s_v));
    }
}

// ---------------------------------------------------------------------------------------------
// The chunked form. For a chunk of c tokens with state S0 before it, a_t = e^(g_t), the decay of
// token s's write by token t's time D[t][s] = a_{s+1} .. a_t (1 on the diagonal) and of S0
// gam_t = a_0 .. a_t, the recurrence S_t = a_t S_{t-1} + k_t u_t^T has the updates
//   u_t = beta_t (v_t - a_t S_{t-1}^T k_t)
//       = beta_t v_t - beta_t gam_t S0^T k_t - sum_{s<t} beta_t D[t][s] (k_t . k_s) u_s,
// so (I + A) U = diag(beta) V - diag(beta gam) K S0 with A[t][s] = beta_t D[t][s] (k_t . k_s)
// strictly lower triangular. With T = (I + A)^-1 (forward substitution, llama.cpp's solve_tri),
// Vn = T diag(beta) V and W = T diag(beta gam) K (llama.cpp's "k_cumdecay"), then
//   U    = Vn - W S0                     (rows u_t)
//   o_t  = scale (gam_t S0^T q_t + sum_{s<=t} D[t][s] (q_t . k_s) u_s)
//   S_c  = gam_{c-1} S0 + sum_s D[c-1][s] k_s u_s^T.
// The decays are running products of the a_t (no exponential of a difference, no division), so
// that they underflow to 0 gracefully when the gates are strong, as the recurrent form's do.

// Every product of the chunk is one shape, y = x m with x and m row-major (gemm below): the
// state and the keys are transposed into scratch where a product needs them so, which costs a
// copy per chunk but leaves no dot product to reduce across vector lanes.

// The scratch of one chunk, carved from the caller's buffer.
typedef struct chunk_buf {
    float *a;   // [C] e^(g_t)
    float *gam; // [C] gam_t
    float *bet; // [C] beta_t
    float *D;   // [C][C] D[t][s], s <= t
    float *A;   // [C][C] A[t][s] (s < t), then P[t][s] = D[t][s] (q_t . k_s) (s <= t)
    float *T;   // [C][C] (I + A)^-1
    float *K;   // [C][S_k] the chunk's keys
    float *Q;   // [C][S_k] its queries
    float *W;   // [C][S_k] W, then the keys decayed to the chunk's end, D[c-1][s] k_s
    float *U;   // [C][S_v] the values, then Vn, then U
    float *KT;  // [S_k][C] the keys transposed
    float *UT;  // [S_v][C] U transposed
    float *ST;  // [S_k][S_v] the state S0 as S (row i: key dimension i)
    float *Y;   // products before they are used: [S_v][S_k], or [C][S_k], or two [C][S_v]
} chunk_buf;

// Floats of an array of n, rounded up to 16 (64 bytes) so that every array stays aligned.
static size_t pad16(size_t n) {
    return (n + 15) & ~(size_t)15;
}

// Bytes of the arrays of chunk_buf for d, each padded to 64 bytes.
size_t mint_delta_net_chunked_scratch_bytes(const mint_delta_dims *d) {
    const size_t C = MINT_DELTA_CHUNK, sk = (size_t)d->s_k, sv = (size_t)d->s_v;
    const size_t ny = sv * sk > C * sk ? sv * sk : C * sk;
    return (3 * pad16(C) + 3 * pad16(C * C) + 3 * pad16(C * sk) + pad16(C * sv) + pad16(sk * C) +
            pad16(sv * C) + pad16(sk * sv) + pad16(ny > 2 * C * sv ? ny : 2 * C * sv)) *
           sizeof(float);
}

// chunk_buf's arrays, one after the other from scratch, in the sizes counted above.
static chunk_buf carve(const mint_delta_dims *d, void *scratch) {
    const size_t C = MINT_DELTA_CHUNK, sk = (size_t)d->s_k, sv = (size_t)d->s_v;
    float *p = scratch;
    chunk_buf b;
    b.a = p, p += pad16(C);
    b.gam = p, p += pad16(C);
    b.bet = p, p += pad16(C);
    b.D = p, p += pad16(C * C);
    b.A = p, p += pad16(C * C);
    b.T = p, p += pad16(C * C);
    b.K = p, p += pad16(C * sk);
    b.Q = p, p += pad16(C * sk);
    b.W = p, p += pad16(C * sk);
    b.U = p, p += pad16(C * sv);
    b.KT = p, p += pad16(sk * C);
    b.UT = p, p += pad16(sv * C);
    b.ST = p, p += pad16(sk * sv);
    b.Y = p;
    return b;
}

// y[i] += a * x[i] for i < n (each product rounded, then added).
static void axpy(float *restrict y, float a, const float *restrict x, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8)
#pragma GCC unroll 8
        for (int l = 0; l < 8; l++) y[i + l] += a * x[i + l];
    for (; i < n; i++) y[i] += a * x[i];
}

// y[i] = y[i] * a + b[i] for i < n (the product rounded, then the sum).
static void scale_add(float *restrict y, float a, const float *restrict b, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
#pragma GCC unroll 8
        for (int l = 0; l < 8; l++) y[i + l] = y[i + l] * a + b[i + l];
    for (; i < n; i++) y[i] = y[i] * a + b[i];
}

// y[i] = x[i] * a for i < n.
static void scale_to(float *restrict y, const float *restrict x, float a, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
#pragma GCC unroll 8
        for (int l = 0; l < 8; l++) y[i + l] = x[i + l] * a;
    for (; i < n; i++) y[i] = x[i] * a;
}

// y[i] *= a for i < n.
static void scale_in_place(float *restrict y, float a, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
#pragma GCC unroll 8
        for (int l = 0; l < 8; l++) y[i + l] *= a;
    for (; i < n; i++) y[i] *= a;
}

// t[j * rows + i] = x[i * cols + j]: x [rows][cols] transposed, in blocks of 8 x 8 so that both
// sides touch few cache lines at a time.
static void transpose(const float *restrict x, int rows, int cols, float *restrict t) {
    for (int i0 = 0; i0 < rows; i0 += 8)
        for (int j0 = 0; j0 < cols; j0 += 8) {
            const int i1 = rows - i0 < 8 ? rows : i0 + 8, j1 = cols - j0 < 8 ? cols : j0 + 8;
            for (int i = i0; i < i1; i++)
                for (int j = j0; j < j1; j++) t[(size_t)j * rows + i] = x[(size_t)i * cols + j];
        }
}

// y[r * ys + j] = sum over p < np, in the order of p from +0, of x[r * xs + p] * m[p * ms + j],
// for r < nr and j < nj. `tri` says which parts may be skipped: TRI_Y computes only j <= r (the
// lower triangle of y and its diagonal; other columns of a tile may be written too), TRI_X sums
// only p <= r (x lower triangular: its zeros above the diagonal are not read, but those inside a
// tile must be zero). Tiles of 4 rows by 8 columns keep their 32 sums in registers while m's
// rows stream past.
enum { TRI_NONE, TRI_Y, TRI_X };

// y = x m over the parts `tri` names (the contract above).
static void gemm(const float *restrict x, size_t xs, int nr, const float *restrict m, size_t ms,
                 int nj, int np_all, int tri, float *restrict y, size_t ys) {
    for (int r = 0; r < nr; r += 4) {
        const int rn = nr - r < 4 ? nr - r : 4;
        const int jend = tri == TRI_Y && r + rn < nj ? r + rn : nj;
        const int np = tri == TRI_X && r + rn < np_all ? r + rn : np_all;
        for (int j = 0; j < jend; j += 8) {
            const int jn = jend - j < 8 ? jend - j : 8;
            float acc[4][8] = {{0}};
            if (rn == 4 && jn == 8) {
                const float *x0 = x + (size_t)r * xs, *x1 = x0 + xs, *x2 = x1 + xs, *x3 = x2 + xs;
                float a0[8] = {0}, a1[8] = {0}, a2[8] = {0}, a3[8] = {0};
                for (int p = 0; p < np; p++) {
                    const float *mp = m + (size_t)p * ms + j;
                    const float v0 = x0[p], v1 = x1[p], v2 = x2[p], v3 = x3[p];
#pragma GCC unroll 8
                    for (int l = 0; l < 8; l++) a0[l] += v0 * mp[l];
#pragma GCC unroll 8
                    for (int l = 0; l < 8; l++) a1[l] += v1 * mp[l];
#pragma GCC unroll 8
                    for (int l = 0; l < 8; l++) a2[l] += v2 * mp[l];
#pragma GCC unroll 8
                    for (int l = 0; l < 8; l++) a3[l] += v3 * mp[l];
                }
                for (int l = 0; l < 8; l++)
                    acc[0][l] = a0[l], acc[1][l] = a1[l], acc[2][l] = a2[l], acc[3][l] = a3[l];
            } else if (jn == 8) { // the last rows: one at a time
                for (int i = 0; i < rn; i++) {
                    const float *xi = x + (size_t)(r + i) * xs;
                    float a0[8] = {0};
                    for (int p = 0; p < np; p++) {
                        const float *mp = m + (size_t)p * ms + j;
                        const float v0 = xi[p];
#pragma GCC unroll 8
                        for (int l = 0; l < 8; l++) a0[l] += v0 * mp[l];
                    }
                    for (int l = 0; l < 8; l++) acc[i][l] = a0[l];
                }
            } else {
                for (int p = 0; p < np; p++)
                    for (int i = 0; i < rn; i++)
                        for (int l = 0; l < jn; l++)
                            acc[i][l] += x[(size_t)(r + i) * xs + p] * m[(size_t)p * ms + j + l];
            }
            for (int i = 0; i < rn; i++)
                for (int l = 0; l < jn; l++) y[(size_t)(r + i) * ys + j + l] = acc[i][l];
        }
    }
}

// One chunk of c tokens from t0 of value head h (key head hk).
static void chunk_step(const mint_delta_dims *d, const mint_delta_seq *s, const chunk_buf *b, int h,
                       int hk, int t0, int c) {
    const int s_k = d->s_k, s_v = d->s_v, C = MINT_DELTA_CHUNK;
    float *st = s->state + (size_t)h * s_v * s_k;
    for (int t = 0; t < c; t++) {
        memcpy(b->K + (size_t)t * s_k, tok_row(s->k, s->k_stride, t0 + t, hk, s_k),
               (size_t)s_k * sizeof(float));
        memcpy(b->Q + (size_t)t * s_k, tok_row(s->q, s->q_stride, t0 + t, hk, s_k),
               (size_t)s_k * sizeof(float));
        memcpy(b->U + (size_t)t * s_v, tok_row(s->v, s->v_stride, t0 + t, h, s_v),
               (size_t)s_v * sizeof(float));
        b->a[t] = expf(*tok_row(s->g, s->g_stride, t0 + t, h, 1));
        b->bet[t] = *tok_row(s->beta, s->beta_stride, t0 + t, h, 1);
        b->gam[t] = t == 0 ? b->a[0] : b->gam[t - 1] * b->a[t];
        float *Dt = b->D + (size_t)t * C;
        for (int r = 0; r < t; r++) Dt[r] = b->D[(size_t)(t - 1) * C + r] * b->a[t];
        Dt[t] = 1.0f;
    }
    transpose(b->K, c, s_k, b->KT);
    // A[t][s] = beta_t D[t][s] (k_t . k_s), s < t.
    float *A = b->A, *T = b->T;
    gemm(b->K, s_k, c, b->KT, c, c, s_k, TRI_Y, A, C);
    for (int t = 0; t < c; t++)
        for (int r = 0; r < t; r++)
            A[(size_t)t * C + r] = b->bet[t] * A[(size_t)t * C + r] * b->D[(size_t)t * C + r];
    // T = (I + A)^-1 by forward substitution, row t = e_t - sum_{r<t} A[t][r] T_r (rows r of T
    // are zero past column r), zero above the diagonal up to the next multiple of 4 (gemm TRI_X).
    for (int t = 0; t < c; t++) {
        float *Tt = T + (size_t)t * C;
        for (int r = 0; r < C && r < ((t + 4) & ~3); r++) Tt[r] = r == t ? 1.0f : 0.0f;
        for (int r = 0; r < t; r++) axpy(Tt, -A[(size_t)t * C + r], T + (size_t)r * C, r + 1);
    }
    // -W = T diag(-beta gam) K and Vn = T diag(beta) V (llama.cpp's "k_cumdecay" and its v);
    // W is kept negated (exactly: every rounding commutes with the sign) so that U = Vn + (-W) S0
    // is one scale_add.
    for (int t = 0; t < c; t++) {
        const float bg = b->bet[t] * b->gam[t];
        scale_to(b->W + (size_t)t * s_k, b->K + (size_t)t * s_k, -bg, s_k);
        scale_in_place(b->U + (size_t)t * s_v, b->bet[t], s_v);
    }
    gemm(T, C, c, b->W, s_k, s_k, c, TRI_X, b->Y, s_k);
    memcpy(b->W, b->Y, (size_t)c * s_k * sizeof(float));
    gemm(T, C, c, b->U, s_v, s_v, c, TRI_X, b->Y, s_v);
    memcpy(b->U, b->Y, (size_t)c * s_v * sizeof(float));
    // With S0: U = Vn - W S0, and the inter-chunk outputs gam_t S0^T q_t (in Y).
    transpose(st, s_v, s_k, b->ST);
    gemm(b->W, s_k, c, b->ST, s_v, s_v, s_k, TRI_NONE, b->Y, s_v);
    scale_add(b->U, 1.0f, b->Y, (size_t)c * s_v);
    gemm(b->Q, s_k, c, b->ST, s_v, s_v, s_k, TRI_NONE, b->Y, s_v);
    // P[t][s] = D[t][s] (q_t . k_s) for s <= t, 0 above (A's room); the intra-chunk outputs
    // P U (in Y2); o_t = (gam_t (S0^T q_t) + (P U)_t) scale.
    float *P = A, *Y2 = b->Y + (size_t)c * s_v;
    gemm(b->Q, s_k, c, b->KT, c, c, s_k, TRI_Y, P, C);
    for (int t = 0; t < c; t++)
        for (int r = 0; r < C && r < ((t + 4) & ~3); r++)
            P[(size_t)t * C + r] = r <= t ? P[(size_t)t * C + r] * b->D[(size_t)t * C + r] : 0.0f;
    gemm(P, C, c, b->U, s_v, s_v, c, TRI_X, Y2, s_v);
    for (int t = 0; t < c; t++) {
        float *o = (float *)tok_row(s->out, s->out_stride, t0 + t, h, s_v);
        const float *y = b->Y + (size_t)t * s_v, *y2 = Y2 + (size_t)t * s_v;
        for (int j = 0; j < s_v; j++) o[j] = (b->gam[t] * y[j] + y2[j]) * d->scale;
    }
    // The keys decayed to the chunk's end (W's room); the state, column j: S0 col j gam_{c-1} +
    // sum_s U[s][j] (decayed k_s), the sum first (as llama.cpp adds the whole product).
    for (int t = 0; t < c; t++) {
        const float dec = b->D[(size_t)(c - 1) * C + t];
        scale_to(b->W + (size_t)t * s_k, b->K + (size_t)t * s_k, dec, s_k);
    }
    transpose(b->U, c, s_v, b->UT);
    gemm(b->UT, c, s_v, b->W, s_k, s_k, c, TRI_NONE, b->Y, s_k);
    scale_add(st, b->gam[c - 1], b->Y, (size_t)s_v * s_k);
}

// The gated delta rule in chunks, value heads [h0, h1)
void mint_delta_net_chunked(const mint_delta_dims *d, const mint_delta_seq *s, void *scratch,
                            int h0, int h1) {
    const chunk_buf b = carve(d, scratch);
    for (int h = h0; h < h1; h++)
        for (int t0 = 0; t0 < s->n_tokens; t0 += MINT_DELTA_CHUNK) {
            const int c = s->n_tokens - t0 < MINT_DELTA_CHUNK ? s->n_tokens - t0 : MINT_DELTA_CHUNK;
            chunk_step(d, s, &b, h, h % d->n_k_heads, t0, c);
        }
}

// ---------------------------------------------------------------------------------------------
// The output norm and gates, and the convolution.

// silu(x) = x / (1 + e^-x), as ops/elementwise.c computes it.
static float silu(float x) {
    return x / (1.0f + expf(-x));
}

// Each head of x[r] = rmsnorm(x) * w * silu(z)   for r in [r0, r1)
void mint_rms_norm_gated(float *x, size_t x_stride, const float *z, size_t z_stride, const float *w,
                         int n_heads, int head_dim, float eps, long r0, long r1) {
    for (long r = r0; r < r1; r++) {
        float *xr = (float *)((char *)x + (size_t)r * x_stride);
        const float *zr = (const float *)((const char *)z + (size_t)r * z_stride);
        for (int h = 0; h < n_heads; h++) {
            float *v = xr + (size_t)h * head_dim;
            mint_rms_norm_row(v, w, v, head_dim, eps); // reads each x[i] before writing y[i]
        }
        const int64_t n = (int64_t)n_heads * head_dim;
        for (int64_t i = 0; i < n; i++) xr[i] *= silu(zr[i]);
    }
}

// x[r][h][i] *= sigmoid(g[r][h * g_head_stride + i])   for r in [r0, r1)
void mint_sigmoid_gate(float *x, size_t x_stride, const float *g, size_t g_stride,
                       size_t g_head_stride, int n_heads, int head_dim, long r0, long r1) {
    for (long r = r0; r < r1; r++) {
        float *xr = (float *)((char *)x + (size_t)r * x_stride);
        const float *gr = (const float *)((const char *)g + (size_t)r * g_stride);
        for (int h = 0; h < n_heads; h++)
            for (int i = 0; i < head_dim; i++) {
                const float sg = 1.0f / (1.0f + expf(-gr[(size_t)h * g_head_stride + i]));
                xr[(size_t)h * head_dim + i] *= sg;
            }
    }
}

// One output of the convolution: sum_j w[c][j] xx[t + j][c] from j = 0, in f32.
static float conv_one(const float *x, size_t x_stride, const float *wc, int kernel, const float *sc,
                      int t, int c) {
    const int n = kernel - 1;
    float sum = 0.0f;
    for (int j = 0; j < kernel; j++)
        sum += (t + j < n ? sc[t + j] : tok_row(x, x_stride, t + j - n, 0, 0)[c]) * wc[j];
    return sum;
}

#define CONV_BLOCK      64 // channels that go through the tokens together
#define CONV_MAX_KERNEL 16 // longest kernel of the blocked path (longer ones: conv_one alone)

// out[t][c] = sum_j w[c][j] xx[t + j][c] (then silu), state[c] = the last L-1 of xx, c in [c0, c1)
void mint_conv1d_causal(const float *x, size_t x_stride, int n_tokens, const float *w, int kernel,
                        float *state, float *out, size_t out_stride, bool apply_silu, int c0,
                        int c1) {
    const int n = kernel - 1; // inputs carried in the state
    // A block of channels goes through the tokens together so that x is read along its rows (the
    // state's part of xx transposed into st_t first); partial blocks and long kernels take
    // conv_one. Both add the same products in the same order.
    for (int cb = c0; cb < c1; cb += CONV_BLOCK) {
        const int nc = c1 - cb < CONV_BLOCK ? c1 - cb : CONV_BLOCK;
        const bool blocked = nc == CONV_BLOCK && kernel <= CONV_MAX_KERNEL;
        float wt[CONV_MAX_KERNEL][CONV_BLOCK];       // wt[j][i] = w[cb + i][j]
        float st_t[CONV_MAX_KERNEL - 1][CONV_BLOCK]; // st_t[j][i] = state[cb + i][j]
        if (blocked) {
            for (int j = 0; j < kernel; j++)
                for (int i = 0; i < CONV_BLOCK; i++) wt[j][i] = w[(size_t)(cb + i) * kernel + j];
            for (int j = 0; j < n; j++)
                for (int i = 0; i < CONV_BLOCK; i++) st_t[j][i] = state[(size_t)(cb + i) * n + j];
        }
        for (int t = 0; t < n_tokens; t++) {
            float *o = (float *)tok_row(out, out_stride, t, 0, 0) + cb;
            if (blocked) {
                float acc[CONV_BLOCK] = {0};
                for (int j = 0; j < kernel; j++) {
                    const float *xr =
                        t + j < n ? st_t[t + j] : tok_row(x, x_stride, t + j - n, 0, 0) + cb;
                    for (int i = 0; i < CONV_BLOCK; i++) acc[i] += xr[i] * wt[j][i];
                }
                for (int i = 0; i < CONV_BLOCK; i++) o[i] = acc[i];
            } else {
                for (int i = 0; i < nc; i++)
                    o[i] = conv_one(x, x_stride, w + (size_t)(cb + i) * kernel, kernel,
                                    state + (size_t)(cb + i) * n, t, cb + i);
            }
            if (apply_silu)
                for (int i = 0; i < nc; i++) o[i] = silu(o[i]);
        }
        // state[c][j] = xx[n_tokens + j][c]: reading ahead of the writes, so in place is safe.
        for (int c = cb; c < cb + nc; c++) {
            float *sc = state + (size_t)c * n;
            for (int j = 0; j < n; j++)
                sc[j] = n_tokens + j < n ? sc[n_tokens + j]
                                         : tok_row(x, x_stride, n_tokens + j - n, 0, 0)[c];
        }
    }
}
