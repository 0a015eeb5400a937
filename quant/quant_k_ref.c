// quant_k_ref.c - reference (de)quantizers of the 256-element K-quant super-blocks Q2_K, Q3_K,
// Q4_K, Q5_K, Q6_K (and the Q8_K dequantizer), docs/formats.md 2.4.
//
// The quantizers are llama.cpp's reference quantizers (ggml-quants.c quantize_row_*_ref, used by
// llama-quantize when there is no importance matrix) and its weighted ones (quantize_row_*_impl,
// used when there is one). They search for good sub-block scales with the helpers of
// quant/search.h, then quantize the scales themselves to 4, 6 or 8 bits, then re-quantize the
// values with the scales as stored. To write
// the same bytes, every f32 expression keeps ggml's operation order (a*b*c is (a*b)*c, with ints
// converted to float first) and every narrowing conversion happens where ggml's does.
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/ref.h"
#include "quant/search.h"
#include "quant/unpack.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Quantizers. Each type has a plain search (quantize_row_<t>_ref: llama-quantize without an
// importance matrix) and a weighted one (quantize_row_<t>_imat_ref: ggml's
// quantize_row_<t>_impl given the columns' importance qw); both end the same way, in the shared
// tails below: re-quantize the values against the scales as stored, then pack.

// The importance weights of a super-block's values in the weighted searches: qw_i *
// sqrt(sigma2 + x_i^2), sigma2 a multiple of the super-block's mean square.
static void importance_weights(const float *x, const float *qw, float sigma2, int n, float *w) {
    for (int l = 0; l < n; l++) w[l] = qw[l] * sqrtf(sigma2 + x[l] * x[l]);
}

static float sum_squares(const float *x, int n) {
    float s = 0;
    for (int l = 0; l < n; l++) s += x[l] * x[l];
    return s;
}

// Q2_K's tail: levels 0..3 against the stored 4-bit scale and min (a zero scale keeps the
// search's levels), then the 2-bit packing.
static void q2_K_finish(mint_block_q2_K *y, const float *x, uint8_t *L) {
    for (int j = 0; j < 16; j++) {
        float d = mint_f16_to_f32(y->d) * (float)(y->scales[j] & 0xF);
        if (d == 0.0f) continue;
        float dm = mint_f16_to_f32(y->dmin) * (float)(y->scales[j] >> 4);
        for (int ii = 0; ii < 16; ii++)
            L[16 * j + ii] =
                (uint8_t)mint_clampi(mint_nearest_int((x[16 * j + ii] + dm) / d), 0, 3);
    }
    mint_pack_2bit(y->qs, L);
}

// Q2_K: per 16 values, (scale, min) from make_qkx2_quants (3 levels + 0, weights |x|, mean
// absolute error); scales and mins quantized to 4 bits against their maxima.
void quantize_row_q2_K_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q2_K *y = vy;
    uint8_t L[MINT_QK_K], Laux[16];
    float w[16], mins[16], scales[16];
    for (int64_t i = 0; i < n / MINT_QK_K; i++, x += MINT_QK_K) {
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < 16; j++) {
            for (int l = 0; l < 16; l++) w[l] = fabsf(x[16 * j + l]);
            scales[j] = mint_make_qkx_quants(16, 3, x + 16 * j, w, L + 16 * j, &mins[j], Laux,
                                             -0.5f, 0.1f, 15, true);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        if (max_scale > 0) {
            float iscale = 15.0f / max_scale;
            for (int j = 0; j < 16; j++)
                y[i].scales[j] = (uint8_t)mint_nearest_int(iscale * scales[j]);
            y[i].d = mint_f32_to_f16(max_scale / 15.0f);
        } else {
            for (int j = 0; j < 16; j++) y[i].scales[j] = 0;
            y[i].d = mint_f32_to_f16(0.0f);
        }
        if (max_min > 0) {
            float iscale = 15.0f / max_min;
            for (int j = 0; j < 16; j++)
                y[i].scales[j] |= (uint8_t)(mint_nearest_int(iscale * mins[j]) << 4);
            y[i].dmin = mint_f32_to_f16(max_min / 15.0f);
        } else {
            y[i].dmin = mint_f32_to_f16(0.0f);
        }
        q2_K_finish(&y[i], x, L);
    }
}

// Q2_K weighted: per 16 values, (scale, min) from the asymmetric search with weights
// qw * sqrt(mean square + x^2) (squared error, 37 grids from rmin -0.9); the 16 scales and the
// 16 mins each quantized to 4 bits by make_qp_quants weighted by the sub-blocks' weight sums.
void quantize_row_q2_K_imat_ref(const float *restrict x, void *restrict vy, int64_t n,
                                const float *restrict qw) {
    mint_block_q2_K *y = vy;
    uint8_t L[MINT_QK_K], Laux[16], Ls[16], Lm[16];
    float w[16], sw[16], mins[16], scales[16];
    for (int64_t i = 0; i < n / MINT_QK_K; i++, x += MINT_QK_K, qw += MINT_QK_K) {
        const float sigma2 = sum_squares(x, MINT_QK_K) / MINT_QK_K;
        for (int j = 0; j < 16; j++) {
            importance_weights(x + 16 * j, qw + 16 * j, sigma2, 16, w);
            sw[j] = 0;
            for (int l = 0; l < 16; l++) sw[j] += w[l];
            scales[j] = mint_make_qkx_quants(16, 3, x + 16 * j, w, L + 16 * j, &mins[j], Laux,
                                             -0.9f, 0.05f, 36, false);
        }
        y[i].d = mint_f32_to_f16(mint_make_qp_quants(16, 15, scales, Ls, sw));
        y[i].dmin = mint_f32_to_f16(mint_make_qp_quants(16, 15, mins, Lm, sw));
        for (int j = 0; j < 16; j++) y[i].scales[j] = (uint8_t)(Ls[j] | Lm[j] << 4);
        q2_K_finish(&y[i], x, L);
    }
}

// Stores Q3_K's 6-bit scale l (0..63) of sub-block j: low 4 bits in a nibble of bytes 0..7,
// high 2 bits in bytes 8..11 (quant/unpack.h mint_q3_scale reads it back).
static void q3_K_set_scale(uint8_t *s, int j, int l) {
    if (j < 8)
        s[j] = (uint8_t)(l & 0xF);
    else
        s[j - 8] |= (uint8_t)((l & 0xF) << 4);
    s[j % 4 + 8] |= (uint8_t)((l >> 4) << (2 * (j / 4)));
}

// Q3_K's tail: levels -4..3 against the stored scales (a zero scale keeps the search's levels,
// already biased by 4); levels 4..7 set the high bit, bit e/32 of hmask[e%32], the low 2 bits go
// to qs.
static void q3_K_finish(mint_block_q3_K *y, const float *x, int8_t *L) {
    for (int j = 0; j < 16; j++) {
        float d = mint_f16_to_f32(y->d) * (float)(mint_q3_scale(y->scales, j) - 32);
        if (d == 0.0f) continue;
        for (int ii = 0; ii < 16; ii++)
            L[16 * j + ii] = (int8_t)(mint_clampi(mint_nearest_int(x[16 * j + ii] / d), -4, 3) + 4);
    }
    uint8_t L2[MINT_QK_K];
    memset(y->hmask, 0, sizeof y->hmask);
    for (int e = 0; e < MINT_QK_K; e++) {
        int l = L[e];
        if (l > 3) {
            y->hmask[e % 32] |= (uint8_t)(1 << (e / 32));
            l -= 4;
        }
        L2[e] = (uint8_t)l;
    }
    mint_pack_2bit(y->qs, L2);
}

// Q3_K: per 16 values, a symmetric scale from make_q3_quants (levels -4..3); the 16 scales
// quantized to 6 bits (biased by 32) against the one of largest magnitude.
void quantize_row_q3_K_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q3_K *y = vy;
    int8_t L[MINT_QK_K];
    float scales[16];
    for (int64_t i = 0; i < n / MINT_QK_K; i++, x += MINT_QK_K) {
        float max_scale = 0, amax = 0;
        for (int j = 0; j < 16; j++) {
            scales[j] = mint_make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
            if (fabsf(scales[j]) > amax) {
                amax = fabsf(scales[j]);
                max_scale = scales[j];
            }
        }
        memset(y[i].scales, 0, sizeof y[i].scales);
        if (max_scale != 0.0f) {
            float iscale = -32.0f / max_scale;
            for (int j = 0; j < 16; j++) {
                int8_t l8 = (int8_t)mint_nearest_int(iscale * scales[j]); // ggml narrows first
                q3_K_set_scale(y[i].scales, j, mint_clampi(l8, -32, 31) + 32);
            }
            y[i].d = mint_f32_to_f16(1 / iscale);
        } else {
            y[i].d = mint_f32_to_f16(0.0f);
        }
        q3_K_finish(&y[i], x, L);
    }
}

// Q3_K weighted: per 16 values a symmetric scale from make_qx_quants (levels -4..3) weighted by
// qw * sqrt(2 * mean square + x^2); the 16 scales themselves quantized to 6 bits by the same
// search (levels -32..31) weighted by the sub-blocks' weight sums.
void quantize_row_q3_K_imat_ref(const float *restrict x, void *restrict vy, int64_t n,
                                const float *restrict qw) {
    mint_block_q3_K *y = vy;
    int8_t L[MINT_QK_K], Ls[16];
    float w[16], sw[16], scales[16];
    for (int64_t i = 0; i < n / MINT_QK_K; i++, x += MINT_QK_K, qw += MINT_QK_K) {
        const float sigma2 = 2 * sum_squares(x, MINT_QK_K) / MINT_QK_K;
        for (int j = 0; j < 16; j++) {
            importance_weights(x + 16 * j, qw + 16 * j, sigma2, 16, w);
            sw[j] = 0;
            for (int l = 0; l < 16; l++) sw[j] += w[l];
            scales[j] = mint_make_qx_quants(16, 4, x + 16 * j, L + 16 * j, w);
        }
        memset(y[i].scales, 0, sizeof y[i].scales);
        const float d_block = mint_make_qx_quants(16, 32, scales, Ls, sw);
        for (int j = 0; j < 16; j++) q3_K_set_scale(y[i].scales, j, Ls[j]);
        y[i].d = mint_f32_to_f16(d_block);
        q3_K_finish(&y[i], x, L);
    }
}

// Q4_K/Q5_K's tail: the values re-quantized to 0..nmax against the stored scales and mins (a
// zero scale keeps the search's levels).
static void k4_requantize(const float *x, int nmax, uint16_t d16, uint16_t dmin16,
                          const uint8_t *scales, uint8_t *L) {
    for (int j = 0; j < 8; j++) {
        int sc, m;
        mint_k4_scale_min(j, scales, &sc, &m);
        float d = mint_f16_to_f32(d16) * (float)sc;
        if (d == 0.0f) continue;
        float dm = mint_f16_to_f32(dmin16) * (float)m;
        for (int ii = 0; ii < 32; ii++)
            L[32 * j + ii] =
                (uint8_t)mint_clampi(mint_nearest_int((x[32 * j + ii] + dm) / d), 0, nmax);
    }
}

// Shared by Q4_K and Q5_K: per 32 values, (scale, min) from make_qkx2_quants with weights
// rms(x) + |x_i|; the 8 scales and 8 mins quantized to 6 bits against their maxima, then the
// values re-quantized. Writes d, dmin, scales and L.
static void quantize_k4_common(const float *restrict x, int nmax, float rmin, int nstep,
                               uint16_t *d_out, uint16_t *dmin_out, uint8_t *scales_out,
                               uint8_t *restrict L) {
    uint8_t Laux[32], ls[8], lm[8];
    float w[32], mins[8], scales[8];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; j++) {
        float av_x = sqrtf(sum_squares(x + 32 * j, 32) / 32);
        for (int l = 0; l < 32; l++) w[l] = av_x + fabsf(x[32 * j + l]);
        scales[j] = mint_make_qkx_quants(32, nmax, x + 32 * j, w, L + 32 * j, &mins[j], Laux, rmin,
                                         0.1f, nstep, false);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
    float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
    for (int j = 0; j < 8; j++) {
        // ggml narrows to uint8_t before clamping to 63.
        uint8_t s = (uint8_t)mint_nearest_int(inv_scale * scales[j]);
        uint8_t m = (uint8_t)mint_nearest_int(inv_min * mins[j]);
        ls[j] = s < 63 ? s : 63;
        lm[j] = m < 63 ? m : 63;
    }
    mint_k4_pack_scale_min(scales_out, ls, lm);
    *d_out = mint_f32_to_f16(max_scale / 63.0f);
    *dmin_out = mint_f32_to_f16(max_min / 63.0f);
    k4_requantize(x, nmax, *d_out, *dmin_out, scales_out, L);
}

// Shared by weighted Q4_K and Q5_K: per 32 values, (scale, min) from the asymmetric search
// weighted by qw * sqrt(2 * mean square + x^2) (37 grids from rmin -0.9, squared error); the 8
// scales and 8 mins quantized to 6 bits by make_qp_quants weighted by the sub-blocks' weight
// sums. Q5_K clamps the 6-bit levels to 63 before packing them (clamp63), Q4_K does not (its
// levels never pass 63 unless a scale was negative, whose byte then wraps as in ggml).
static void quantize_k4_imat(const float *restrict x, const float *restrict qw, int nmax,
                             bool clamp63, uint16_t *d_out, uint16_t *dmin_out, uint8_t *scales_out,
                             uint8_t *restrict L) {
    uint8_t Laux[32], ls[8], lm[8];
    float w[32], sw[8], mins[8], scales[8];
    const float sigma2 = 2 * sum_squares(x, MINT_QK_K) / MINT_QK_K;
    for (int j = 0; j < 8; j++) {
        importance_weights(x + 32 * j, qw + 32 * j, sigma2, 32, w);
        sw[j] = 0;
        for (int l = 0; l < 32; l++) sw[j] += w[l];
        scales[j] = mint_make_qkx_quants(32, nmax, x + 32 * j, w, L + 32 * j, &mins[j], Laux, -0.9f,
                                         0.05f, 36, false);
    }
    const float d_block = mint_make_qp_quants(8, 63, scales, ls, sw);
    const float m_block = mint_make_qp_quants(8, 63, mins, lm, sw);
    if (clamp63) {
        for (int j = 0; j < 8; j++) {
            ls[j] = ls[j] < 63 ? ls[j] : 63;
            lm[j] = lm[j] < 63 ? lm[j] : 63;
        }
    }
    memset(scales_out, 0, 12);
    mint_k4_pack_scale_min(scales_out, ls, lm);
    *d_out = mint_f32_to_f16(d_block);
    *dmin_out = mint_f32_to_f16(m_block);
    k4_requantize(x, nmax, *d_out, *dmin_out, scales_out, L);
}

// Q4_K's packing: qs byte 32c + l holds element 64c + l (low nibble) and 64c + 32 + l (high).
static void q4_K_pack(mint_block_q4_K *y, const uint8_t *L) {
    for (int c = 0; c < 4; c++)
        for (int l = 0; l < 32; l++)
            y->qs[32 * c + l] = (uint8_t)(L[64 * c + l] | L[64 * c + 32 + l] << 4);
}

// Q5_K's packing: the low 4 bits as Q4_K, bit 4 of element 64c + l in bit 2c of qh[l], of
// 64c + 32 + l in bit 2c + 1.
static void q5_K_pack(mint_block_q5_K *y, const uint8_t *L) {
    memset(y->qh, 0, sizeof y->qh);
    for (int c = 0; c < 4; c++) {
        for (int l = 0; l < 32; l++) {
            int l1 = L[64 * c + l], l2 = L[64 * c + 32 + l];
            y->qh[l] |= (uint8_t)((l1 >> 4) << (2 * c) | (l2 >> 4) << (2 * c + 1));
            y->qs[32 * c + l] = (uint8_t)((l1 & 0xF) | (l2 & 0xF) << 4);
        }
    }
}

// Q4_K: 16 levels, make_qkx2_quants(rmin -1, rdelta 0.1, 20 steps, squared error).
void quantize_row_q4_K_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q4_K *y = vy;
    uint8_t L[MINT_QK_K];
    for (int64_t i = 0; i < n / MINT_QK_K; i++, x += MINT_QK_K) {
        quantize_k4_common(x, 15, -1.0f, 20, &y[i].d, &y[i].dmin, y[i].scales, L);
        q4_K_pack(&y[i], L);
    }
}

void quantize_row_q4_K_imat_ref(const float *restrict x, void *restrict vy, int64_t n,
                                const float *restrict qw) {
    mint_block_q4_K *y = vy;
    uint8_t L[MINT_QK_K];
    for (int64_t i = 0; i < n / MINT_QK_K; i++, x += MINT_QK_K, qw += MINT_QK_K) {
        quantize_k4_imat(x, qw, 15, false, &y[i].d, &y[i].dmin, y[i].scales, L);
        q4_K_pack(&y[i], L);
    }
}

// Q5_K: 32 levels, make_qkx2_quants(rmin -0.5, rdelta 0.1, 15 steps).
void quantize_row_q5_K_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q5_K *y = vy;
    uint8_t L[MINT_QK_K];
    for (int64_t i = 0; i < n / MINT_QK_K; i++, x += MINT_QK_K) {
        quantize_k4_common(x, 31, -0.5f, 15, &y[i].d, &y[i].dmin, y[i].scales, L);
        q5_K_pack(&y[i], L);
    }
}

void quantize_row_q5_K_imat_ref(const float *restrict x, void *restrict vy, int64_t n,
                                const float *restrict qw) {
    mint_block_q5_K *y = vy;
    uint8_t L[MINT_QK_K];
    for (int64_t i = 0; i < n / MINT_QK_K; i++, x += MINT_QK_K, qw += MINT_QK_K) {
        quantize_k4_imat(x, qw, 31, true, &y[i].d, &y[i].dmin, y[i].scales, L);
        q5_K_pack(&y[i], L);
    }
}

// Q6_K: per 16 values a symmetric scale from make_qx_quants (levels -32..31), weights x^2 or,
// given an importance, qw itself (ggml passes the raw importance here, not the sigma-scaled
// weights of the other types); the 16 scales quantized to signed 8 bits against the one of
// largest magnitude (which becomes -128). qw NULL is the plain quantizer.
static void quantize_q6_K(const float *restrict x, mint_block_q6_K *restrict y, int64_t n,
                          const float *restrict qw) {
    int8_t L[MINT_QK_K];
    float scales[16];
    for (int64_t i = 0; i < n / MINT_QK_K; i++, x += MINT_QK_K) {
        float max_scale = 0, max_abs_scale = 0;
        for (int ib = 0; ib < 16; ib++) {
            const float *w = qw ? qw + i * MINT_QK_K + 16 * ib : NULL;
            scales[ib] = mint_make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib, w);
            if (fabsf(scales[ib]) > max_abs_scale) {
                max_abs_scale = fabsf(scales[ib]);
                max_scale = scales[ib];
            }
        }
        if (max_abs_scale < MINT_GROUP_MAX_EPS) {
            memset(&y[i], 0, sizeof y[i]);
            continue;
        }
        float iscale = -128.0f / max_scale;
        y[i].d = mint_f32_to_f16(1 / iscale);
        for (int ib = 0; ib < 16; ib++) {
            int s = mint_nearest_int(iscale * scales[ib]);
            y[i].scales[ib] = (int8_t)(s < 127 ? s : 127);
        }
        for (int j = 0; j < 16; j++) {
            float d = mint_f16_to_f32(y[i].d) * (float)y[i].scales[j];
            if (d == 0.0f) continue;
            for (int ii = 0; ii < 16; ii++)
                L[16 * j + ii] =
                    (int8_t)(mint_clampi(mint_nearest_int(x[16 * j + ii] / d), -32, 31) + 32);
        }
        // Element 128h + 32t + l: low nibble in ql[64h + l + 32(t&1)] (low for t < 2, high for
        // t >= 2), high 2 bits in qh[32h + l] bits 2t..2t+1.
        for (int h = 0; h < 2; h++) {
            const int8_t *Lh = L + 128 * h;
            uint8_t *ql = y[i].ql + 64 * h, *qh = y[i].qh + 32 * h;
            for (int l = 0; l < 32; l++) {
                ql[l] = (uint8_t)((Lh[l] & 0xF) | (Lh[l + 64] & 0xF) << 4);
                ql[l + 32] = (uint8_t)((Lh[l + 32] & 0xF) | (Lh[l + 96] & 0xF) << 4);
                qh[l] = (uint8_t)(Lh[l] >> 4 | (Lh[l + 32] >> 4) << 2 | (Lh[l + 64] >> 4) << 4 |
                                  (Lh[l + 96] >> 4) << 6);
            }
        }
    }
}

void quantize_row_q6_K_ref(const float *restrict x, void *restrict vy, int64_t n) {
    quantize_q6_K(x, vy, n, NULL);
}

void quantize_row_q6_K_imat_ref(const float *restrict x, void *restrict vy, int64_t n,
                                const float *restrict qw) {
    quantize_q6_K(x, vy, n, qw);
}

// ---------------------------------------------------------------------------------------------
// Dequantizers (docs/formats.md 2.4 element maps), with ggml's f32 operation order.

void dequantize_row_q2_K_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_q2_K *x = vx;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        float d = mint_f16_to_f32(x[i].d), dmin = mint_f16_to_f32(x[i].dmin);
        for (int e = 0; e < MINT_QK_K; e++) {
            int sc = x[i].scales[e / 16];
            float dl = d * (float)(sc & 0xF), ml = dmin * (float)(sc >> 4);
            *y++ = dl * (float)mint_q2_bits(x[i].qs, e) - ml;
        }
    }
}

void dequantize_row_q3_K_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_q3_K *x = vx;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        float d = mint_f16_to_f32(x[i].d);
        for (int e = 0; e < MINT_QK_K; e++) {
            int q = mint_q2_bits(x[i].qs, e) - (mint_q3_hbit(x[i].hmask, e) ? 0 : 4);
            float dl = d * (float)(mint_q3_scale(x[i].scales, e / 16) - 32);
            *y++ = dl * (float)q;
        }
    }
}

void dequantize_row_q4_K_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_q4_K *x = vx;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        float d = mint_f16_to_f32(x[i].d), dmin = mint_f16_to_f32(x[i].dmin);
        for (int b = 0; b < 8; b++) { // sub-block b = elements 32b..32b+31
            int sc, m;
            mint_k4_scale_min(b, x[i].scales, &sc, &m);
            float d1 = d * (float)sc, m1 = dmin * (float)m;
            for (int l = 0; l < 32; l++) *y++ = d1 * (float)mint_k4_nibble(x[i].qs, b, l) - m1;
        }
    }
}

void dequantize_row_q5_K_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_q5_K *x = vx;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        float d = mint_f16_to_f32(x[i].d), dmin = mint_f16_to_f32(x[i].dmin);
        for (int b = 0; b < 8; b++) {
            int sc, m;
            mint_k4_scale_min(b, x[i].scales, &sc, &m);
            float d1 = d * (float)sc, m1 = dmin * (float)m;
            for (int l = 0; l < 32; l++) {
                int q = mint_k4_nibble(x[i].qs, b, l) | ((x[i].qh[l] >> b) & 1) << 4;
                *y++ = d1 * (float)q - m1;
            }
        }
    }
}

void dequantize_row_q6_K_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_q6_K *x = vx;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        float d = mint_f16_to_f32(x[i].d);
        for (int e = 0; e < MINT_QK_K; e++) {
            int q = mint_q6_level(x[i].ql, x[i].qh, e) - 32;
            *y++ = d * (float)x[i].scales[e / 16] * (float)q;
        }
    }
}

void dequantize_row_q8_K_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_q8_K *x = vx;
    for (int64_t i = 0; i < n / MINT_QK_K; i++)
        for (int e = 0; e < MINT_QK_K; e++) *y++ = x[i].d * (float)x[i].qs[e];
}
