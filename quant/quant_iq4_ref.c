// quant_iq4_ref.c - reference (de)quantizers and dot products of IQ4_NL (ggml type 20) and IQ4_XS
// (type 23), the 4-bit non-linear formats (quant/blocks.h, docs/formats.md 2.6): every element is
// an index into the 16 int8 levels of mint_iq4nl_table (quant/unpack.h) times a block scale.
//
// The quantizer is llama.cpp's (what llama-quantize writes for these types, importance matrix or
// not), operation for operation in f32, so that it writes the same bytes. Per 32-element block:
//   weights  w[j] = imatrix[j] * sqrt(sigma2 + x[j]^2) with an importance (sigma2 = twice the mean
//            square of the whole (super-)block), else x[j]^2;
//   search   the scale d minimising sum w * (x - d * level)^2 over 16 candidate inverse scales
//            (the block's signed largest value mapped onto -127, then onto -127 + t for
//            t = -7..7), each candidate's indices being the nearest levels, and d the weighted
//            least-squares scale of those indices; a candidate replaces the best so far only
//            when strictly better;
//   indices  re-chosen as the nearest levels under the final scale (IQ4_NL: the f32 d before
//            its f16 rounding; IQ4_XS: d * l, the f32 super-block scale times the block's
//            rounded 6-bit scale l = RNE(-32 * d_block / d_max) in [-32, 31]).
// The dot products are ggml's generic ones (IQ4_NL . Q8_0 and IQ4_XS . Q8_K, ggml's vec_dot_type):
// exact integer sums per 32 elements, then one f32 multiply-add per 32 elements in order.
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/ref.h"
#include "quant/unpack.h"

#include <math.h>
#include <string.h>

// A block whose largest |x| is below this is all zeros to the search (ggml's GROUP_MAX_EPS).
#define IQ4_EPS 1e-15f

// Candidate offsets t tried on either side of the first guess (ggml's ntry for llama-quantize).
#define IQ4_NTRY 7

// The index of the level nearest x: 0 at or below the lowest, 15 at or above the highest,
// otherwise a bisection to the bracketing pair (lo, hi), of which lo wins only when strictly
// nearer (a NaN x, failing every comparison, gives 15).
static int iq4_nearest(float x) {
    const int8_t *v = mint_iq4nl_table();
    if (x <= v[0]) return 0;
    if (x >= v[15]) return 15;
    int lo = 0, hi = 15;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (x < v[mid])
            hi = mid;
        else
            lo = mid;
    }
    return x - v[hi - 1] < v[hi] - x ? hi - 1 : hi;
}

// sum w * level * x and sum w * level^2 over a block with the indices nearest id * x.
static void iq4_sums(const float *xb, const float *w, float id, float *sumqx, float *sumq2) {
    const int8_t *v = mint_iq4nl_table();
    float qx = 0.0f, q2 = 0.0f;
    for (int j = 0; j < MINT_QK; j++) {
        const float q = v[iq4_nearest(id * xb[j])];
        qx += w[j] * q * xb[j];
        q2 += w[j] * q * q;
    }
    *sumqx = qx;
    *sumq2 = q2;
}

// The f32 scale the search picks for one 32-element block (0 for an all-zero block).
static float iq4_block_scale(const float *xb, const float *w) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < MINT_QK; j++)
        if (fabsf(xb[j]) > amax) {
            amax = fabsf(xb[j]);
            max = xb[j];
        }
    if (amax < IQ4_EPS) return 0.0f;
    const float v0 = mint_iq4nl_table()[0];
    float sumqx, sumq2;
    iq4_sums(xb, w, 1.0f / (-max / v0), &sumqx, &sumq2);
    float d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
    float best = d * sumqx;
    for (int t = -IQ4_NTRY; t <= IQ4_NTRY; t++) {
        iq4_sums(xb, w, (float)(t + mint_iq4nl_table()[0]) / max, &sumqx, &sumq2);
        if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    return d;
}

// sigma2 of a (super-)block x[0..len): twice its mean square, in ggml's order.
static float iq4_sigma2(const float *x, int len) {
    float sigma2 = 0.0f;
    for (int j = 0; j < len; j++) sigma2 += x[j] * x[j];
    return sigma2 * (2.0f / (float)len);
}

// Per-element weights of a 32-element block xb (qw: its slice of the importance, or NULL).
static void iq4_weights(const float *xb, const float *qw, float sigma2, float *w) {
    if (qw)
        for (int j = 0; j < MINT_QK; j++) w[j] = qw[j] * sqrtf(sigma2 + xb[j] * xb[j]);
    else
        for (int j = 0; j < MINT_QK; j++) w[j] = xb[j] * xb[j];
}

// The 16 bytes of one 32-element block's indices nearest id * x.
static void iq4_pack(const float *xb, float id, uint8_t *qs) {
    for (int j = 0; j < MINT_QK / 2; j++)
        qs[j] = (uint8_t)(iq4_nearest(id * xb[j]) | iq4_nearest(id * xb[j + MINT_QK / 2]) << 4);
}

// ---------------------------------------------------------------------------------------------
// IQ4_NL

void dequantize_row_iq4_nl_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_iq4_nl *x = vx;
    const int8_t *v = mint_iq4nl_table();
    for (int64_t i = 0; i < n / MINT_QK; i++) {
        const float d = mint_f16_to_f32(x[i].d);
        for (int e = 0; e < MINT_QK; e++)
            y[i * MINT_QK + e] = d * (float)v[mint_nibble(x[i].qs, e)];
    }
}

void quantize_iq4_nl_ref(const float *restrict x, void *restrict vy, int64_t n,
                         const float *imatrix) {
    mint_block_iq4_nl *y = vy;
    float w[MINT_QK];
    for (int64_t i = 0; i < n / MINT_QK; i++) {
        const float *xb = x + i * MINT_QK;
        iq4_weights(xb, imatrix ? imatrix + i * MINT_QK : NULL, iq4_sigma2(xb, MINT_QK), w);
        const float d = iq4_block_scale(xb, w);
        y[i].d = mint_f32_to_f16(d);
        iq4_pack(xb, d != 0.0f ? 1.0f / d : 0.0f, y[i].qs);
    }
}

void quantize_row_iq4_nl_ref(const float *restrict x, void *restrict y, int64_t n) {
    quantize_iq4_nl_ref(x, y, n, NULL);
}

// *s = sum over blocks, in order, of (d_a * d_w) * sumi with sumi = sum table[q] * a exact.
void vec_dot_iq4_nl_q8_0_ref(int64_t n, float *restrict s, const void *restrict vw,
                             const void *restrict va) {
    const mint_block_iq4_nl *w = vw;
    const mint_block_q8_0 *a = va;
    const int8_t *v = mint_iq4nl_table();
    float sum = 0.0f;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++) {
        int sumi = 0;
        for (int e = 0; e < MINT_QK; e++) sumi += v[mint_nibble(w[ib].qs, e)] * a[ib].qs[e];
        sum += mint_f16_to_f32(a[ib].d) * mint_f16_to_f32(w[ib].d) * (float)sumi;
    }
    *s = sum;
}

// ---------------------------------------------------------------------------------------------
// IQ4_XS

// Sub-block ib's (0..7) stored 6-bit scale, biased by 32.
static int iq4_xs_scale(const mint_block_iq4_xs *b, int ib) {
    return (b->scales_l[ib / 2] >> 4 * (ib % 2) & 0xF) | (b->scales_h >> 2 * ib & 3) << 4;
}

void dequantize_row_iq4_xs_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_iq4_xs *x = vx;
    const int8_t *v = mint_iq4nl_table();
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float d = mint_f16_to_f32(x[i].d);
        for (int ib = 0; ib < MINT_QK_K / MINT_QK; ib++) {
            const float dl = d * (float)(iq4_xs_scale(&x[i], ib) - 32);
            const uint8_t *qs = x[i].qs + ib * MINT_QK / 2;
            for (int e = 0; e < MINT_QK; e++)
                y[i * MINT_QK_K + ib * MINT_QK + e] = dl * (float)v[mint_nibble(qs, e)];
        }
    }
}

void quantize_iq4_xs_ref(const float *restrict x, void *restrict vy, int64_t n,
                         const float *imatrix) {
    enum { NB = MINT_QK_K / MINT_QK };
    mint_block_iq4_xs *y = vy;
    float w[MINT_QK], scales[NB];
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float *xs = x + i * MINT_QK_K;
        const float *qw = imatrix ? imatrix + i * MINT_QK_K : NULL;
        // The largest |scale| keeps its sign: it maps onto -32, the end with the most room.
        const float sigma2 = iq4_sigma2(xs, MINT_QK_K);
        float max_scale = 0.0f, amax_scale = 0.0f;
        for (int ib = 0; ib < NB; ib++) {
            iq4_weights(xs + ib * MINT_QK, qw ? qw + ib * MINT_QK : NULL, sigma2, w);
            scales[ib] = iq4_block_scale(xs + ib * MINT_QK, w);
            if (fabsf(scales[ib]) > amax_scale) {
                amax_scale = fabsf(scales[ib]);
                max_scale = scales[ib];
            }
        }
        // -0.0f for an all-zero super-block, stored as the f16 -0 (0x8000), as ggml does.
        const float d = -max_scale / 32.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = mint_f32_to_f16(d);
        y[i].scales_h = 0;
        memset(y[i].scales_l, 0, sizeof y[i].scales_l);
        for (int ib = 0; ib < NB; ib++) {
            int l = mint_nearest_int(id * scales[ib]);
            l = l < -32 ? -32 : l > 31 ? 31 : l;
            const float dl = d * (float)l;
            iq4_pack(xs + ib * MINT_QK, dl != 0.0f ? 1.0f / dl : 0.0f, y[i].qs + ib * MINT_QK / 2);
            l += 32;
            y[i].scales_l[ib / 2] |= (uint8_t)((l & 0xF) << 4 * (ib % 2));
            y[i].scales_h |= (uint16_t)((l >> 4) << 2 * ib);
        }
    }
}

void quantize_row_iq4_xs_ref(const float *restrict x, void *restrict y, int64_t n) {
    quantize_iq4_xs_ref(x, y, n, NULL);
}

// *s = sum over sub-blocks of 32, in order, of ((d_w * d_a) * (ls - 32)) * sumi, sumi exact.
void vec_dot_iq4_xs_q8_K_ref(int64_t n, float *restrict s, const void *restrict vw,
                             const void *restrict va) {
    const mint_block_iq4_xs *w = vw;
    const mint_block_q8_K *a = va;
    const int8_t *v = mint_iq4nl_table();
    float sum = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float d = mint_f16_to_f32(w[i].d) * a[i].d;
        for (int ib = 0; ib < MINT_QK_K / MINT_QK; ib++) {
            const uint8_t *qs = w[i].qs + ib * MINT_QK / 2;
            const int8_t *q8 = a[i].qs + ib * MINT_QK;
            int sumi = 0;
            for (int e = 0; e < MINT_QK; e++) sumi += v[mint_nibble(qs, e)] * q8[e];
            sum += d * (float)(iq4_xs_scale(&w[i], ib) - 32) * (float)sumi;
        }
    }
    *s = sum;
}
