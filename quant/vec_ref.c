// vec_ref.c - the reference float vector kernels of softmax and attention (quant/kernels.h):
// plain loops, one IEEE operation per step. They are the specification the SIMD levels match bit
// for bit.
#include "quant/fp16.h"
#include "quant/ref.h"
#include "quant/vec_delta.h"
#include "quant/vec_exp.h"

#include <stddef.h>

void vec_exp_ref(const float *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = mint_exp1(x[i]);
}

float vec_max_ref(const float *x, int64_t n, float m) {
    for (int64_t i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
    return m + 0.0f; // -0 -> +0: the vector levels may meet the zeros in another order
}

double vec_exp_sum_ref(float *x, int64_t n, float m) {
    double acc[16] = {0};
    for (int64_t i = 0; i < n; i++) {
        const float d = x[i] - m;
        x[i] = mint_exp1(d);
        acc[i % 16] += (double)x[i];
    }
    for (int w = 8; w >= 2; w /= 2)
        for (int l = 0; l < w; l++) acc[l] += acc[l + w];
    return acc[0] + acc[1];
}

void vec_scale_ref(float *x, int64_t n, float c) {
    for (int64_t i = 0; i < n; i++) x[i] *= c;
}

void vec_round_f16_ref(float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] = mint_f16_to_f32(mint_f32_to_f16(x[i]));
}

// The gated delta rule, one token of one value head (quant/vec_delta.h): per column j of the
// state, the decay and the dot with k, the write of d_j = (v_j - dot) beta, the dot with q.
// ggml's gated_delta_net scales the whole state, then makes three passes over it (dots with k,
// the rank-one update, dots with q); column j of each pass needs only column j of the pass
// before, so one pass per column does the same operations on the same values.
void vec_delta_step_ref(float *st, int s_k, int s_v, const float *q, const float *k, const float *v,
                        float decay, float beta, float scale, float *out) {
    for (int j = 0; j < s_v; j++) {
        float *col = st + (size_t)j * (size_t)s_k;
        float acc[MINT_DELTA_LANES] = {0};
        int i = 0;
        for (; i + MINT_DELTA_LANES <= s_k; i += MINT_DELTA_LANES)
            mint_delta_tail_decay_dot(col, k, decay, i, i + MINT_DELTA_LANES, acc);
        mint_delta_tail_decay_dot(col, k, decay, i, s_k, acc);
        const float dj = (v[j] - mint_delta_combine16(acc)) * beta;
        float acq[MINT_DELTA_LANES] = {0};
        for (i = 0; i + MINT_DELTA_LANES <= s_k; i += MINT_DELTA_LANES)
            mint_delta_tail_update_dot(col, k, q, dj, i, i + MINT_DELTA_LANES, acq);
        mint_delta_tail_update_dot(col, k, q, dj, i, s_k, acq);
        out[j] = mint_delta_combine16(acq) * scale;
    }
}
