// quant_legacy_ref.c - reference (de)quantizers of the 32-element blocks Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0 and Q8_1 (docs/formats.md 2.3).
//
// The quantizers are llama.cpp's reference quantizers (ggml-quants.c quantize_row_*_ref, which
// llama-quantize uses when there is no importance matrix) and, at the end, its weighted ones
// (quantize_row_*_impl, used when there is one; Q8_0 ignores an importance matrix): same
// formulas, same f32 operation order, same truncations, so they write the same bytes. The
// conversions `(int)(v + 8.5f)` etc. truncate toward zero on a value that is never negative, i.e.
// they round v half up.
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/ref.h"
#include "quant/search.h"
#include "quant/unpack.h"

#include <float.h>
#include <math.h>

// The signed value of largest magnitude in x[0..n); the first one wins a tie (strict >).
static float signed_absmax(const float *x, int n) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; j++) {
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    return max;
}

static void min_max(const float *x, int n, float *min, float *max) {
    *min = FLT_MAX;
    *max = -FLT_MAX;
    for (int j = 0; j < n; j++) {
        if (x[j] < *min) *min = x[j];
        if (x[j] > *max) *max = x[j];
    }
}

// ---------------------------------------------------------------------------------------------
// Dequantizers: y = f(q) per element, exactly as ggml's to_float.

void dequantize_row_q4_0_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_q4_0 *x = vx;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, y += MINT_QK) {
        float d = mint_f16_to_f32(x[ib].d);
        for (int e = 0; e < MINT_QK; e++) y[e] = (float)(mint_nibble(x[ib].qs, e) - 8) * d;
    }
}

void dequantize_row_q4_1_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_q4_1 *x = vx;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, y += MINT_QK) {
        float d = mint_f16_to_f32(x[ib].d), m = mint_f16_to_f32(x[ib].m);
        for (int e = 0; e < MINT_QK; e++) y[e] = (float)mint_nibble(x[ib].qs, e) * d + m;
    }
}

void dequantize_row_q5_0_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_q5_0 *x = vx;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, y += MINT_QK) {
        float d = mint_f16_to_f32(x[ib].d);
        uint32_t qh = mint_load_u32_le(x[ib].qh);
        for (int e = 0; e < MINT_QK; e++) {
            int q = mint_nibble(x[ib].qs, e) | (int)((qh >> e) & 1) << 4;
            y[e] = (float)(q - 16) * d;
        }
    }
}

void dequantize_row_q5_1_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_q5_1 *x = vx;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, y += MINT_QK) {
        float d = mint_f16_to_f32(x[ib].d), m = mint_f16_to_f32(x[ib].m);
        uint32_t qh = mint_load_u32_le(x[ib].qh);
        for (int e = 0; e < MINT_QK; e++) {
            int q = mint_nibble(x[ib].qs, e) | (int)((qh >> e) & 1) << 4;
            y[e] = (float)q * d + m;
        }
    }
}

void dequantize_row_q8_0_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_q8_0 *x = vx;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, y += MINT_QK) {
        float d = mint_f16_to_f32(x[ib].d);
        for (int e = 0; e < MINT_QK; e++) y[e] = (float)x[ib].qs[e] * d;
    }
}

// The s field is not needed to dequantize (it only feeds the *_1 dot products).
void dequantize_row_q8_1_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_q8_1 *x = vx;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, y += MINT_QK) {
        float d = mint_f16_to_f32(x[ib].d);
        for (int e = 0; e < MINT_QK; e++) y[e] = (float)x[ib].qs[e] * d;
    }
}

// ---------------------------------------------------------------------------------------------
// Weight quantizers. The scale is computed and used in f32; only the stored copy is rounded to
// f16 (the quants are chosen with the unrounded scale, as in ggml).

// Q4_0: d = max / -8 where max is the signed value of largest |x|, so that value maps to q = 0
// exactly and the other side gets the extra level; q = min(15, trunc(x/d + 8.5)).
void quantize_row_q4_0_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q4_0 *y = vy;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK) {
        float d = signed_absmax(x, MINT_QK) / -8;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = mint_f32_to_f16(d);
        for (int j = 0; j < MINT_QK / 2; j++) {
            int q0 = (int)(x[j] * id + 8.5f), q1 = (int)(x[j + 16] * id + 8.5f);
            q0 = q0 < 15 ? q0 : 15;
            q1 = q1 < 15 ? q1 : 15;
            y[ib].qs[j] = (uint8_t)(q0 | q1 << 4);
        }
    }
}

// Q4_1: d = (max - min) / 15, m = min; q = min(15, trunc((x - min)/d + 0.5)).
void quantize_row_q4_1_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q4_1 *y = vy;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK) {
        float min, max;
        min_max(x, MINT_QK, &min, &max);
        float d = (max - min) / 15;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = mint_f32_to_f16(d);
        y[ib].m = mint_f32_to_f16(min);
        for (int j = 0; j < MINT_QK / 2; j++) {
            int q0 = (int)((x[j] - min) * id + 0.5f), q1 = (int)((x[j + 16] - min) * id + 0.5f);
            q0 = q0 < 15 ? q0 : 15;
            q1 = q1 < 15 ? q1 : 15;
            y[ib].qs[j] = (uint8_t)(q0 | q1 << 4);
        }
    }
}

// Q5_0: as Q4_0 with 32 levels: d = max / -16, q = min(31, trunc(x/d + 16.5)).
void quantize_row_q5_0_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q5_0 *y = vy;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK) {
        float d = signed_absmax(x, MINT_QK) / -16;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = mint_f32_to_f16(d);
        uint32_t qh = 0;
        for (int j = 0; j < MINT_QK / 2; j++) {
            int q0 = (int)(x[j] * id + 16.5f), q1 = (int)(x[j + 16] * id + 16.5f);
            q0 = q0 < 31 ? q0 : 31;
            q1 = q1 < 31 ? q1 : 31;
            y[ib].qs[j] = (uint8_t)((q0 & 0xF) | (q1 & 0xF) << 4);
            qh |= (uint32_t)(q0 >> 4) << j | (uint32_t)(q1 >> 4) << (j + 16);
        }
        mint_store_u32_le(y[ib].qh, qh);
    }
}

// Q5_1: as Q4_1 with 32 levels and no clamp: q = trunc((x - min)/d + 0.5), at most 31.
void quantize_row_q5_1_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q5_1 *y = vy;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK) {
        float min, max;
        min_max(x, MINT_QK, &min, &max);
        float d = (max - min) / 31;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = mint_f32_to_f16(d);
        y[ib].m = mint_f32_to_f16(min);
        uint32_t qh = 0;
        for (int j = 0; j < MINT_QK / 2; j++) {
            // ggml stores these through a uint8_t; (x - min)/d never exceeds 31.5, so the low
            // 5 bits are all there is.
            int q0 = (uint8_t)(int)((x[j] - min) * id + 0.5f);
            int q1 = (uint8_t)(int)((x[j + 16] - min) * id + 0.5f);
            y[ib].qs[j] = (uint8_t)((q0 & 0xF) | (q1 & 0xF) << 4);
            qh |= (uint32_t)((q0 >> 4) & 1) << j | (uint32_t)((q1 >> 4) & 1) << (j + 16);
        }
        mint_store_u32_le(y[ib].qh, qh);
    }
}

// Q8_0 weights: d = amax / 127, q = roundf(x * (1/d)) (halves away from zero). Activations use
// quantize_row_q8_0_act_ref instead, which rounds differently.
void quantize_row_q8_0_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q8_0 *y = vy;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK) {
        float amax = 0.0f;
        for (int j = 0; j < MINT_QK; j++) amax = amax > fabsf(x[j]) ? amax : fabsf(x[j]);
        float d = amax / 127;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = mint_f32_to_f16(d);
        for (int j = 0; j < MINT_QK; j++) y[ib].qs[j] = (int8_t)roundf(x[j] * id);
    }
}

// ---------------------------------------------------------------------------------------------
// Weighted quantizers (ggml's quantize_row_<t>_impl, what llama-quantize runs given an importance
// matrix): each 32-value block's levels and scale (and min) come from a weighted search instead
// of the block's extremes, the weight of value j being qw_j * sqrt(sigma2 + x_j^2), qw the
// column's importance and sigma2 the mean square of the whole row. n is one row.

static float row_mean_square(const float *x, int64_t n) {
    float sum_x2 = 0;
    for (int64_t j = 0; j < n; j++) sum_x2 += x[j] * x[j];
    return sum_x2 / (float)n;
}

static void block_weights(const float *xb, const float *qw, float sigma2, float *w) {
    for (int j = 0; j < MINT_QK; j++) w[j] = qw[j] * sqrtf(sigma2 + xb[j] * xb[j]);
}

// Q4_0: symmetric levels -8..7 from make_qx_quants; d is the fitted scale.
void quantize_row_q4_0_imat_ref(const float *restrict x, void *restrict vy, int64_t n,
                                const float *restrict qw) {
    mint_block_q4_0 *y = vy;
    const float sigma2 = row_mean_square(x, n);
    float w[MINT_QK];
    int8_t L[MINT_QK];
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK, qw += MINT_QK) {
        block_weights(x, qw, sigma2, w);
        y[ib].d = mint_f32_to_f16(mint_make_qx_quants(MINT_QK, 8, x, L, w));
        for (int j = 0; j < MINT_QK / 2; j++) y[ib].qs[j] = (uint8_t)(L[j] | L[j + 16] << 4);
    }
}

// Q4_1: levels 0..15 and a min from the asymmetric search (37 grids from rmin -0.9, squared
// error); m is the (non-positive) min.
void quantize_row_q4_1_imat_ref(const float *restrict x, void *restrict vy, int64_t n,
                                const float *restrict qw) {
    mint_block_q4_1 *y = vy;
    const float sigma2 = row_mean_square(x, n);
    float w[MINT_QK];
    uint8_t L[MINT_QK], Laux[MINT_QK];
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK, qw += MINT_QK) {
        block_weights(x, qw, sigma2, w);
        float min;
        float d = mint_make_qkx_quants(MINT_QK, 15, x, w, L, &min, Laux, -0.9f, 0.05f, 36, false);
        y[ib].d = mint_f32_to_f16(d);
        y[ib].m = mint_f32_to_f16(-min);
        for (int j = 0; j < MINT_QK / 2; j++) y[ib].qs[j] = (uint8_t)(L[j] | L[j + 16] << 4);
    }
}

// Q5_0/Q5_1's packing of 5-bit levels: low nibbles in qs, bit 4 of element e in bit e of qh.
static void pack_5bit(const uint8_t *L, uint8_t *qs, uint8_t *qh_bytes) {
    uint32_t qh = 0;
    for (int j = 0; j < MINT_QK / 2; j++) {
        qs[j] = (uint8_t)((L[j] & 0xF) | (L[j + 16] & 0xF) << 4);
        qh |= (uint32_t)((L[j] >> 4) & 1) << j | (uint32_t)((L[j + 16] >> 4) & 1) << (j + 16);
    }
    mint_store_u32_le(qh_bytes, qh);
}

// Q5_0: symmetric levels -16..15 from make_qx_quants.
void quantize_row_q5_0_imat_ref(const float *restrict x, void *restrict vy, int64_t n,
                                const float *restrict qw) {
    mint_block_q5_0 *y = vy;
    const float sigma2 = row_mean_square(x, n);
    float w[MINT_QK];
    int8_t L[MINT_QK];
    uint8_t U[MINT_QK];
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK, qw += MINT_QK) {
        block_weights(x, qw, sigma2, w);
        y[ib].d = mint_f32_to_f16(mint_make_qx_quants(MINT_QK, 16, x, L, w));
        for (int j = 0; j < MINT_QK; j++) U[j] = (uint8_t)L[j];
        pack_5bit(U, y[ib].qs, y[ib].qh);
    }
}

// Q5_1: levels 0..31 and a min from the asymmetric search, as Q4_1.
void quantize_row_q5_1_imat_ref(const float *restrict x, void *restrict vy, int64_t n,
                                const float *restrict qw) {
    mint_block_q5_1 *y = vy;
    const float sigma2 = row_mean_square(x, n);
    float w[MINT_QK];
    uint8_t L[MINT_QK], Laux[MINT_QK];
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK, qw += MINT_QK) {
        block_weights(x, qw, sigma2, w);
        float min;
        float d = mint_make_qkx_quants(MINT_QK, 31, x, w, L, &min, Laux, -0.9f, 0.05f, 36, false);
        y[ib].d = mint_f32_to_f16(d);
        y[ib].m = mint_f32_to_f16(-min);
        pack_5bit(L, y[ib].qs, y[ib].qh);
    }
}
