// quant_k_ref.c - reference (de)quantizers of the 256-element K-quant super-blocks Q2_K, Q3_K,
// Q4_K, Q5_K, Q6_K (and the Q8_K dequantizer), docs/formats.md 2.4.
//
// The quantizers are llama.cpp's reference quantizers (ggml-quants.c quantize_row_*_ref, used by
// llama-quantize when there is no importance matrix). They search for good sub-block scales with
// three helpers (make_qx_quants, make_q3_quants, make_qkx2_quants), then quantize the scales
// themselves to 4, 6 or 8 bits, then re-quantize the values with the scales as stored. To write
// the same bytes, every f32 expression keeps ggml's operation order (a*b*c is (a*b)*c, with ints
// converted to float first) and every narrowing conversion happens where ggml's does.
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/ref.h"
#include "quant/unpack.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

// Below this, a group's largest |x| counts as zero (ggml's GROUP_MAX_EPS).
#define GROUP_MAX_EPS 1e-15f

static inline int clampi(int v, int lo, int hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

// ---------------------------------------------------------------------------------------------
// Scale search

// Symmetric levels -nmax..nmax-1 for n values, weights w_i = x_i^2 (ggml's make_qx_quants with
// rmse_type 1 and no importance weights). Starts from iscale = -nmax/max (max = signed value of
// largest |x|), then tries iscale = -(nmax + 0.1k)/max for k = -9..9 and keeps the levels with the
// best weighted least-squares fit. Writes L[i] = level + nmax (0..2*nmax-1) and returns the
// scale (x ~ scale * level). An all-zero group gives L = 0 (not nmax) and scale 0.
static float make_qx_quants(int n, int nmax, const float *restrict x, int8_t *restrict L) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; i++) {
        if (fabsf(x[i]) > amax) {
            amax = fabsf(x[i]);
            max = x[i];
        }
    }
    if (amax < GROUP_MAX_EPS) {
        for (int i = 0; i < n; i++) L[i] = 0;
        return 0.0f;
    }
    float iscale = (float)-nmax / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; i++) {
        int l = clampi(mint_nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t)(l + nmax);
        float w = x[i] * x[i];
        sumlx += w * x[i] * (float)l;
        suml2 += w * (float)l * (float)l;
    }
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; is++) {
        if (is == 0) continue;
        iscale = -((float)nmax + 0.1f * (float)is) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; i++) {
            int l = clampi(mint_nearest_int(iscale * x[i]), -nmax, nmax - 1);
            float w = x[i] * x[i];
            sumlx += w * x[i] * (float)l;
            suml2 += w * (float)l * (float)l;
        }
        // Better fit <=> sumlx^2 / suml2 is larger (the explained part of sum w x^2).
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; i++)
                L[i] = (int8_t)(nmax + clampi(mint_nearest_int(iscale * x[i]), -nmax, nmax - 1));
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

// Q3_K's search (ggml's make_q3_quants with do_rmse): levels -nmax..nmax-1 from
// iscale = -nmax/max, weights x_i^2, then up to 5 passes of coordinate descent moving one level
// at a time to the best one for the current fit. Writes L[i] = level + nmax; returns the scale.
static float make_q3_quants(int n, int nmax, const float *restrict x, int8_t *restrict L) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; i++) {
        if (fabsf(x[i]) > amax) {
            amax = fabsf(x[i]);
            max = x[i];
        }
    }
    if (amax < GROUP_MAX_EPS) {
        for (int i = 0; i < n; i++) L[i] = 0;
        return 0.0f;
    }
    float iscale = (float)-nmax / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; i++) {
        int l = clampi(mint_nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t)l;
        float w = x[i] * x[i];
        sumlx += w * x[i] * (float)l;
        suml2 += w * (float)l * (float)l;
    }
    for (int itry = 0; itry < 5; itry++) {
        int n_changed = 0;
        for (int i = 0; i < n; i++) {
            float w = x[i] * x[i];
            // The fit without element i; its best level is then x_i * sl2 / slx.
            float slx = sumlx - w * x[i] * (float)L[i];
            if (slx > 0) {
                float sl2 = suml2 - w * (float)L[i] * (float)L[i];
                int new_l = clampi(mint_nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
                if (new_l != L[i]) {
                    slx += w * x[i] * (float)new_l;
                    sl2 += w * (float)new_l * (float)new_l;
                    if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = (int8_t)new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        n_changed++;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    for (int i = 0; i < n; i++) L[i] = (int8_t)(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Asymmetric levels 0..nmax with a min (ggml's make_qkx2_quants): x ~ scale * L + min, min <= 0.
// Starts from the plain min/max grid, then for nstep+1 candidate grids iscale =
// (rmin + rdelta*is + nmax) / (max - min) fits scale and min by weighted least squares and keeps
// the candidate with the smallest weighted error (|.| if use_mad, else squared). Writes L
// (0..nmax), *the_min = -min (>= 0), returns the scale. Laux is scratch of n bytes.
static float make_qkx2_quants(int n, int nmax, const float *restrict x, const float *restrict w,
                              uint8_t *restrict L, float *restrict the_min, uint8_t *restrict Laux,
                              float rmin, float rdelta, int nstep, bool use_mad) {
    float min = x[0], max = x[0];
    float sum_w = w[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; i++) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        for (int i = 0; i < n; i++) L[i] = 0;
        *the_min = -min;
        return 0.0f;
    }
    float iscale = (float)nmax / (max - min);
    float scale = 1 / iscale;
    float best_error = 0;
    for (int i = 0; i < n; i++) {
        L[i] = (uint8_t)clampi(mint_nearest_int(iscale * (x[i] - min)), 0, nmax);
        float diff = scale * (float)L[i] + min - x[i];
        diff = use_mad ? fabsf(diff) : diff * diff;
        best_error += w[i] * diff;
    }
    for (int is = 0; is <= nstep; is++) {
        iscale = (rmin + rdelta * (float)is + (float)nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; i++) {
            int l = clampi(mint_nearest_int(iscale * (x[i] - min)), 0, nmax);
            Laux[i] = (uint8_t)l;
            sum_l += w[i] * (float)l;
            sum_l2 += w[i] * (float)l * (float)l;
            sum_xl += w[i] * (float)l * x[i];
        }
        float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) { // a positive min is not representable: refit through zero
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = 0;
            for (int i = 0; i < n; i++) {
                float diff = this_scale * (float)Laux[i] + this_min - x[i];
                diff = use_mad ? fabsf(diff) : diff * diff;
                cur_error += w[i] * diff;
            }
            if (cur_error < best_error) {
                memcpy(L, Laux, (size_t)n);
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

// The inverse of mint_k4_scale_min for all 8 sub-blocks. The j < 4 stores write bytes 0..7 whole
// before the j >= 4 ones OR their top 2 bits into them.
static void k4_pack_scale_min(uint8_t *q, const uint8_t *ls, const uint8_t *lm) {
    for (int j = 0; j < 8; j++) {
        if (j < 4) {
            q[j] = ls[j];
            q[j + 4] = lm[j];
        } else {
            q[j + 4] = (uint8_t)((ls[j] & 0xF) | (lm[j] & 0xF) << 4);
            q[j - 4] |= (uint8_t)((ls[j] >> 4) << 6);
            q[j] |= (uint8_t)((lm[j] >> 4) << 6);
        }
    }
}

// Packs 2-bit levels L[0..256) as Q2_K/Q3_K's qs: byte 32n + l holds elements 128n + l + 32j in
// bits 2j..2j+1.
static void pack_2bit(uint8_t *qs, const uint8_t *L) {
    for (int j = 0; j < MINT_QK_K; j += 128)
        for (int l = 0; l < 32; l++)
            qs[j / 4 + l] =
                (uint8_t)(L[j + l] | L[j + l + 32] << 2 | L[j + l + 64] << 4 | L[j + l + 96] << 6);
}

// ---------------------------------------------------------------------------------------------
// Quantizers

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
            scales[j] = make_qkx2_quants(16, 3, x + 16 * j, w, L + 16 * j, &mins[j], Laux, -0.5f,
                                         0.1f, 15, true);
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
        // Re-quantize against the scales as stored; a zero scale keeps the search's levels.
        for (int j = 0; j < 16; j++) {
            float d = mint_f16_to_f32(y[i].d) * (float)(y[i].scales[j] & 0xF);
            if (d == 0.0f) continue;
            float dm = mint_f16_to_f32(y[i].dmin) * (float)(y[i].scales[j] >> 4);
            for (int ii = 0; ii < 16; ii++)
                L[16 * j + ii] = (uint8_t)clampi(mint_nearest_int((x[16 * j + ii] + dm) / d), 0, 3);
        }
        pack_2bit(y[i].qs, L);
    }
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
            scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
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
                int l = clampi(l8, -32, 31) + 32;
                if (j < 8)
                    y[i].scales[j] = (uint8_t)(l & 0xF);
                else
                    y[i].scales[j - 8] |= (uint8_t)((l & 0xF) << 4);
                y[i].scales[j % 4 + 8] |= (uint8_t)((l >> 4) << (2 * (j / 4)));
            }
            y[i].d = mint_f32_to_f16(1 / iscale);
        } else {
            y[i].d = mint_f32_to_f16(0.0f);
        }
        for (int j = 0; j < 16; j++) {
            float d = mint_f16_to_f32(y[i].d) * (float)(mint_q3_scale(y[i].scales, j) - 32);
            if (d == 0.0f) continue;
            for (int ii = 0; ii < 16; ii++)
                L[16 * j + ii] = (int8_t)(clampi(mint_nearest_int(x[16 * j + ii] / d), -4, 3) + 4);
        }
        // Levels 4..7 set the high bit: bit e/32 of hmask[e%32]; the low 2 bits go to qs.
        uint8_t L2[MINT_QK_K];
        memset(y[i].hmask, 0, sizeof y[i].hmask);
        for (int e = 0; e < MINT_QK_K; e++) {
            int l = L[e];
            if (l > 3) {
                y[i].hmask[e % 32] |= (uint8_t)(1 << (e / 32));
                l -= 4;
            }
            L2[e] = (uint8_t)l;
        }
        pack_2bit(y[i].qs, L2);
    }
}

// Shared by Q4_K and Q5_K: per 32 values, (scale, min) from make_qkx2_quants with weights
// rms(x) + |x_i|; the 8 scales and 8 mins quantized to 6 bits against their maxima, then the
// values re-quantized to 0..nmax against the stored scales. Writes d, dmin, scales and L.
static void quantize_k4_common(const float *restrict x, int nmax, float rmin, int nstep,
                               uint16_t *d_out, uint16_t *dmin_out, uint8_t *scales_out,
                               uint8_t *restrict L) {
    uint8_t Laux[32], ls[8], lm[8];
    float w[32], mins[8], scales[8];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; j++) {
        float sum_x2 = 0;
        for (int l = 0; l < 32; l++) sum_x2 += x[32 * j + l] * x[32 * j + l];
        float av_x = sqrtf(sum_x2 / 32);
        for (int l = 0; l < 32; l++) w[l] = av_x + fabsf(x[32 * j + l]);
        scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, w, L + 32 * j, &mins[j], Laux, rmin,
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
    k4_pack_scale_min(scales_out, ls, lm);
    *d_out = mint_f32_to_f16(max_scale / 63.0f);
    *dmin_out = mint_f32_to_f16(max_min / 63.0f);
    for (int j = 0; j < 8; j++) {
        int sc, m;
        mint_k4_scale_min(j, scales_out, &sc, &m);
        float d = mint_f16_to_f32(*d_out) * (float)sc;
        if (d == 0.0f) continue;
        float dm = mint_f16_to_f32(*dmin_out) * (float)m;
        for (int ii = 0; ii < 32; ii++)
            L[32 * j + ii] = (uint8_t)clampi(mint_nearest_int((x[32 * j + ii] + dm) / d), 0, nmax);
    }
}

// Q4_K: 16 levels, make_qkx2_quants(rmin -1, rdelta 0.1, 20 steps, squared error). qs byte
// 32c + l holds element 64c + l (low nibble) and 64c + 32 + l (high nibble).
void quantize_row_q4_K_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q4_K *y = vy;
    uint8_t L[MINT_QK_K];
    for (int64_t i = 0; i < n / MINT_QK_K; i++, x += MINT_QK_K) {
        quantize_k4_common(x, 15, -1.0f, 20, &y[i].d, &y[i].dmin, y[i].scales, L);
        for (int c = 0; c < 4; c++)
            for (int l = 0; l < 32; l++)
                y[i].qs[32 * c + l] = (uint8_t)(L[64 * c + l] | L[64 * c + 32 + l] << 4);
    }
}

// Q5_K: 32 levels, make_qkx2_quants(rmin -0.5, rdelta 0.1, 15 steps); the low 4 bits packed as
// Q4_K, bit 4 of element 64c + l in bit 2c of qh[l], of 64c + 32 + l in bit 2c + 1.
void quantize_row_q5_K_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q5_K *y = vy;
    uint8_t L[MINT_QK_K];
    for (int64_t i = 0; i < n / MINT_QK_K; i++, x += MINT_QK_K) {
        quantize_k4_common(x, 31, -0.5f, 15, &y[i].d, &y[i].dmin, y[i].scales, L);
        memset(y[i].qh, 0, sizeof y[i].qh);
        for (int c = 0; c < 4; c++) {
            for (int l = 0; l < 32; l++) {
                int l1 = L[64 * c + l], l2 = L[64 * c + 32 + l];
                y[i].qh[l] |= (uint8_t)((l1 >> 4) << (2 * c) | (l2 >> 4) << (2 * c + 1));
                y[i].qs[32 * c + l] = (uint8_t)((l1 & 0xF) | (l2 & 0xF) << 4);
            }
        }
    }
}

// Q6_K: per 16 values a symmetric scale from make_qx_quants (levels -32..31); the 16 scales
// quantized to signed 8 bits against the one of largest magnitude (which becomes -128).
void quantize_row_q6_K_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q6_K *y = vy;
    int8_t L[MINT_QK_K];
    float scales[16];
    for (int64_t i = 0; i < n / MINT_QK_K; i++, x += MINT_QK_K) {
        float max_scale = 0, max_abs_scale = 0;
        for (int ib = 0; ib < 16; ib++) {
            scales[ib] = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib);
            if (fabsf(scales[ib]) > max_abs_scale) {
                max_abs_scale = fabsf(scales[ib]);
                max_scale = scales[ib];
            }
        }
        if (max_abs_scale < GROUP_MAX_EPS) {
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
                    (int8_t)(clampi(mint_nearest_int(x[16 * j + ii] / d), -32, 31) + 32);
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
