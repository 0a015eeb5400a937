// vec_delta.h - the gated delta rule's one-token step (quant/kernels.h: mint_vdelta_fn): the
// scalar pieces every level shares, so that the vector levels run the reference's operations
// and only widen them.
//
// Internal to quant/. A dot of the step sums in 16 interleaved f32 lanes (element i into lane
// i % 16, in i order from +0, each product rounded before it is added: no fused multiply-add),
// and the lanes then combine pairwise, halving: l += l + 8, l += l + 4, then (0 + 2) + (1 + 3).
// A vector level keeps the 16 lanes in its registers (one AVX-512 register, two AVX2 ones, four
// NEON ones) over the whole multiples of 16, and finishes a row whose length is not one in
// scalar code on the spilled lanes (mint_delta_tail_*), so every bit is the reference's.
#ifndef MINT_QUANT_VEC_DELTA_H
#define MINT_QUANT_VEC_DELTA_H

#define MINT_DELTA_LANES 16

// The 16 lanes of a dot combined: (l + (l + 8)), then + (l + 4), then (0 + 2) + (1 + 3).
static inline float mint_delta_combine16(const float *a) {
    float b[8];
    for (int l = 0; l < 8; l++) b[l] = a[l] + a[l + 8];
    for (int l = 0; l < 4; l++) b[l] += b[l + 4];
    return (b[0] + b[2]) + (b[1] + b[3]);
}

// Elements [i0, n) of the first pass over a column: col[i] *= decay, then lane (i - i0) adds
// col[i] * k[i].
static inline void mint_delta_tail_decay_dot(float *col, const float *k, float decay, int i0, int n,
                                             float *acc) {
    for (int i = i0, l = 0; i < n; i++, l++) {
        col[i] *= decay;
        acc[l] += col[i] * k[i];
    }
}

// Elements [i0, n) of the second pass: col[i] += k[i] * dj, then lane (i - i0) adds
// col[i] * q[i].
static inline void mint_delta_tail_update_dot(float *col, const float *k, const float *q, float dj,
                                              int i0, int n, float *acc) {
    for (int i = i0, l = 0; i < n; i++, l++) {
        col[i] += k[i] * dj;
        acc[l] += col[i] * q[i];
    }
}

#endif // MINT_QUANT_VEC_DELTA_H
