// quant_iq2_ref.c - reference (de)quantizers and dot products of the 2-bit grid i-quants IQ2_XXS
// (ggml type 16), IQ2_XS (17) and IQ2_S (22) (quant/blocks.h, docs/formats.md 2.7): each group
// of 8 elements is a grid point (quant/iq2_tables.h) with signs, times a group scale.
//
// The quantizers are llama.cpp's, operation for operation in f32, so that they write the same
// bytes. Per group of 32 (IQ2_XXS) or 16 (IQ2_XS, IQ2_S) elements:
//   weights  w = imatrix * sqrt(sigma2 + x^2), sigma2 the super-block's mean square (IQ2_S: twice
//            it; with no importance IQ2_S uses sigma2 / 4 + x^2);
//   signs    taken off: the search sees |x|; IQ2_XXS / IQ2_XS store 7 signs per 8, so when the
//            count of negatives is odd the element with the smallest w * x^2 is flipped;
//   search   for a range of inverse scales, each |x| rounds to a level 0..2 (value 2l+1); a group
//            of 8 levels off the grid becomes its best neighbour (quant/iq_grid.h) under the
//            candidate scale; the candidate with the best weighted least-squares fit wins;
//   scale    the groups' scales rounded to 4 bits against the super-block's largest / 31.
// With no importance IQ2_XXS and IQ2_XS have no llama.cpp quantizer (llama-quantize refuses,
// mint_quantize_needs_imatrix); mint's plain row quantizers of them weigh every column 1 (for
// tests and synthetic files), which ggml's search given an all-ones importance writes too.
// The dot products are ggml's generic ones with Q8_K: an exact integer sum per super-block, then
// sum += (d_w * d_a) * bsum in f32, in order, and 0.125 * sum at the end.
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/iq2_tables.h"
#include "quant/iq_grid.h"
#include "quant/ref.h"
#include "quant/search.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

// The level values of a group: grid byte j of point g times its sign bit j.
static inline int iq2_elem(uint64_t g, uint8_t signs, int j) {
    const int v = (int)(g >> 8 * j & 0xFF);
    return signs >> j & 1 ? -v : v;
}

static inline uint32_t iq2_u32(const uint16_t *q) {
    return (uint32_t)q[0] | (uint32_t)q[1] << 16;
}

// ---------------------------------------------------------------------------------------------
// Dequantization and dot products

void dequantize_row_iq2_xxs_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_iq2_xxs *x = vx;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float d = mint_f16_to_f32(x[i].d);
        for (int ib = 0; ib < MINT_QK_K / 32; ib++) {
            const uint32_t idx = iq2_u32(x[i].qs + 4 * ib), sg = iq2_u32(x[i].qs + 4 * ib + 2);
            const float db = d * (0.5f + (float)(sg >> 28)) * 0.25f;
            for (int l = 0; l < 4; l++) {
                const uint64_t g = mint_iq2xxs_grid[idx >> 8 * l & 0xFF];
                const uint8_t s = mint_iq2_ksigns[sg >> 7 * l & 127];
                for (int j = 0; j < 8; j++)
                    *y++ = db * (float)(g >> 8 * j & 0xFF) * (s >> j & 1 ? -1.0f : 1.0f);
            }
        }
    }
}

void dequantize_row_iq2_xs_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_iq2_xs *x = vx;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float d = mint_f16_to_f32(x[i].d);
        for (int ib = 0; ib < MINT_QK_K / 32; ib++) {
            const float db[2] = {d * (0.5f + (float)(x[i].scales[ib] & 0xF)) * 0.25f,
                                 d * (0.5f + (float)(x[i].scales[ib] >> 4)) * 0.25f};
            for (int l = 0; l < 4; l++) {
                const uint16_t q = x[i].qs[4 * ib + l];
                const uint64_t g = mint_iq2xs_grid[q & 511];
                const uint8_t s = mint_iq2_ksigns[q >> 9];
                for (int j = 0; j < 8; j++)
                    *y++ = db[l / 2] * (float)(g >> 8 * j & 0xFF) * (s >> j & 1 ? -1.0f : 1.0f);
            }
        }
    }
}

// IQ2_S group g's (0..31) 10-bit grid index.
static inline int iq2s_index(const mint_block_iq2_s *b, int g) {
    return b->qs[g] | (b->qh[g / 4] >> 2 * (g % 4) & 3) << 8;
}

void dequantize_row_iq2_s_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_iq2_s *x = vx;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float d = mint_f16_to_f32(x[i].d);
        for (int ib = 0; ib < MINT_QK_K / 32; ib++) {
            const float db[2] = {d * (0.5f + (float)(x[i].scales[ib] & 0xF)) * 0.25f,
                                 d * (0.5f + (float)(x[i].scales[ib] >> 4)) * 0.25f};
            for (int l = 0; l < 4; l++) {
                const uint64_t g = mint_iq2s_grid[iq2s_index(&x[i], 4 * ib + l)];
                const uint8_t s = x[i].qs[MINT_QK_K / 8 + 4 * ib + l];
                for (int j = 0; j < 8; j++)
                    *y++ = db[l / 2] * (float)(g >> 8 * j & 0xFF) * (s >> j & 1 ? -1.0f : 1.0f);
            }
        }
    }
}

// sum over 8 elements of grid value * sign * a (exact).
static inline int iq2_group_dot(uint64_t g, uint8_t s, const int8_t *a) {
    int sum = 0;
    for (int j = 0; j < 8; j++) sum += iq2_elem(g, s, j) * a[j];
    return sum;
}

void vec_dot_iq2_xxs_q8_K_ref(int64_t n, float *restrict s, const void *restrict vw,
                              const void *restrict va) {
    const mint_block_iq2_xxs *w = vw;
    const mint_block_q8_K *a = va;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float d = mint_f16_to_f32(w[i].d) * a[i].d;
        const int8_t *q8 = a[i].qs;
        int32_t bsum = 0;
        for (int ib = 0; ib < MINT_QK_K / 32; ib++) {
            const uint32_t idx = iq2_u32(w[i].qs + 4 * ib), sg = iq2_u32(w[i].qs + 4 * ib + 2);
            int32_t sumi = 0;
            for (int l = 0; l < 4; l++, q8 += 8)
                sumi += iq2_group_dot(mint_iq2xxs_grid[idx >> 8 * l & 0xFF],
                                      mint_iq2_ksigns[sg >> 7 * l & 127], q8);
            bsum += sumi * (int32_t)(2 * (sg >> 28) + 1);
        }
        sum += d * (float)bsum;
    }
    *s = 0.125f * sum;
}

void vec_dot_iq2_xs_q8_K_ref(int64_t n, float *restrict s, const void *restrict vw,
                             const void *restrict va) {
    const mint_block_iq2_xs *w = vw;
    const mint_block_q8_K *a = va;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float d = mint_f16_to_f32(w[i].d) * a[i].d;
        const int8_t *q8 = a[i].qs;
        int32_t bsum = 0;
        for (int ib = 0; ib < MINT_QK_K / 32; ib++) {
            for (int h = 0; h < 2; h++) {
                int32_t sumi = 0;
                for (int l = 2 * h; l < 2 * h + 2; l++, q8 += 8) {
                    const uint16_t q = w[i].qs[4 * ib + l];
                    sumi += iq2_group_dot(mint_iq2xs_grid[q & 511], mint_iq2_ksigns[q >> 9], q8);
                }
                bsum += sumi * (2 * (w[i].scales[ib] >> 4 * h & 0xF) + 1);
            }
        }
        sum += d * (float)bsum;
    }
    *s = 0.125f * sum;
}

void vec_dot_iq2_s_q8_K_ref(int64_t n, float *restrict s, const void *restrict vw,
                            const void *restrict va) {
    const mint_block_iq2_s *w = vw;
    const mint_block_q8_K *a = va;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float d = mint_f16_to_f32(w[i].d) * a[i].d;
        const int8_t *q8 = a[i].qs;
        int32_t bsum = 0;
        for (int ib = 0; ib < MINT_QK_K / 32; ib++) {
            for (int h = 0; h < 2; h++) {
                int32_t sumi = 0;
                for (int l = 2 * h; l < 2 * h + 2; l++, q8 += 8) {
                    const int g = 4 * ib + l;
                    sumi += iq2_group_dot(mint_iq2s_grid[iq2s_index(&w[i], g)],
                                          w[i].qs[MINT_QK_K / 8 + g], q8);
                }
                bsum += sumi * (2 * (w[i].scales[ib] >> 4 * h & 0xF) + 1);
            }
        }
        sum += d * (float)bsum;
    }
    *s = 0.125f * sum;
}

// ---------------------------------------------------------------------------------------------
// Quantization

// The grid of a type's search data.
static const mint_iq_grid *iq2_grid(mint_iq_grid_kind kind) {
    static const uint64_t *const tables[3] = {mint_iq2xxs_grid, mint_iq2xs_grid, mint_iq2s_grid};
    return mint_iq_grid_get(kind, tables[kind]);
}

// The grid point nearest (weight w, scale) to the 8 values xv among a key's neighbour list nb
// (count, then indices; the first strictly best wins); its levels (0..2) go to L.
static int iq2_best_neighbour(const mint_iq_grid *g, const uint16_t *nb, const float *xv,
                              const float *w, float scale, int8_t *L) {
    float best_d2 = FLT_MAX;
    int best = nb[1]; // a list is never empty; keeps a NaN search on a valid point
    for (int j = 1; j <= nb[0]; j++) {
        const int8_t *pg = (const int8_t *)(g->points + nb[j]);
        float d2 = 0.0f;
        for (int i = 0; i < 8; i++) {
            const float diff = scale * (float)pg[i] - xv[i];
            d2 += w[i] * diff * diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            best = nb[j];
        }
    }
    const int8_t *pg = (const int8_t *)(g->points + best);
    for (int i = 0; i < 8; i++) L[i] = (int8_t)((pg[i] - 1) / 2);
    return best;
}

// Rounds the 8 values xv under inverse scale id to levels L (0..2); when that group is off the
// grid, replaces L with its best neighbour under scale. Returns whether it was on the grid.
static bool iq2_round_group(const mint_iq_grid *g, const float *xv, const float *waux, float id,
                            float scale, int8_t *L) {
    int key = 0;
    for (int i = 0; i < 8; i++) {
        L[i] = (int8_t)mint_clampi(mint_nearest_int(0.5f * (id * xv[i] - 1.0f)), 0, 2);
        key |= L[i] << 2 * i;
    }
    if (g->map[key] >= 0) return true;
    iq2_best_neighbour(g, g->neighbours - g->map[key] - 1, xv, waux, scale, L);
    return false;
}

// The grid index of 8 levels known to be on the grid.
static int iq2_index(const mint_iq_grid *g, const int8_t *L) {
    int key = 0;
    for (int i = 0; i < 8; i++) key |= L[i] << 2 * i;
    return g->map[key];
}

// Weighted least-squares sums of the levels L (values 2l+1) against xv over n elements.
static void iq2_sums(int n, const float *xv, const float *w, const int8_t *L, float *sumqx,
                     float *sumq2) {
    float qx = 0.0f, q2 = 0.0f;
    for (int i = 0; i < n; i++) {
        const float q = (float)(2 * L[i] + 1);
        qx += w[i] * xv[i] * q;
        q2 += w[i] * q * q;
    }
    *sumqx = qx;
    *sumq2 = q2;
}

// Takes the signs off n/8 groups of 8 (xv = |x|); with parity, a group with an odd count of
// negatives flips its element of smallest w * x^2 back. signs[k]: group k's sign bits.
static void iq2_signs(int n, const float *xb, const float *w, bool parity, float *xv,
                      uint8_t *signs) {
    for (int k = 0; k < n / 8; k++) {
        int nflip = 0;
        unsigned s = 0;
        for (int i = 0; i < 8; i++) {
            if (xb[8 * k + i] >= 0) {
                xv[8 * k + i] = xb[8 * k + i];
            } else {
                xv[8 * k + i] = -xb[8 * k + i];
                nflip++;
                s |= 1u << i;
            }
        }
        if (parity && nflip % 2) {
            int imin = 0;
            float min = w[8 * k] * xb[8 * k] * xb[8 * k];
            for (int i = 1; i < 8; i++) {
                const float ax = w[8 * k + i] * xb[8 * k + i] * xb[8 * k + i];
                if (ax < min) {
                    min = ax;
                    imin = i;
                }
            }
            xv[8 * k + imin] = -xv[8 * k + imin];
            s ^= 1u << imin;
        }
        signs[k] = (uint8_t)(parity ? s & 127 : s);
    }
}

static float iq2_sumx2(const float *x) {
    float s = 0.0f;
    for (int i = 0; i < MINT_QK_K; i++) s += x[i] * x[i];
    return s;
}

static float iq2_maxf(int n, const float *v) {
    float m = v[0];
    for (int i = 1; i < n; i++) m = m > v[i] ? m : v[i];
    return m;
}

void quantize_iq2_xxs_ref(const float *restrict x, void *restrict vy, int64_t n,
                          const float *imatrix) {
    const mint_iq_grid *g = iq2_grid(MINT_IQ_GRID_IQ2_XXS);
    mint_block_iq2_xxs *y = vy;
    float scales[MINT_QK_K / 32], weight[32], xval[32], waux[32];
    int8_t L[32], Laux[32];
    uint8_t signs[4];
    uint32_t q2[2 * (MINT_QK_K / 32)];
    for (int64_t ibl = 0; ibl < n / MINT_QK_K; ibl++) {
        const float *xbl = x + MINT_QK_K * ibl;
        y[ibl].d = 0;
        memset(q2, 0, sizeof q2);
        float max_scale = 0.0f;
        const float sigma2 = iq2_sumx2(xbl) / MINT_QK_K;
        for (int ib = 0; ib < MINT_QK_K / 32; ib++) {
            const float *xb = xbl + 32 * ib;
            for (int i = 0; i < 32; i++) {
                const float qw = imatrix ? imatrix[MINT_QK_K * ibl + 32 * ib + i] : 1.0f;
                weight[i] = qw * sqrtf(sigma2 + xb[i] * xb[i]);
            }
            for (int i = 0; i < 32; i++) waux[i] = sqrtf(weight[i]);
            iq2_signs(32, xb, weight, true, xval, signs);
            scales[ib] = 0.0f;
            if (iq2_maxf(32, xval) < MINT_GROUP_MAX_EPS) continue;
            float scale = mint_make_qp_quants(32, 4, xval, (uint8_t *)L, weight);
            const float eff_max = scale * 3;
            if (eff_max <= 0) continue;
            float best = 0.0f;
            for (int is = -6; is <= 6; is++) {
                const float id = (5 + is * 0.1f) / eff_max, this_scale = 1 / id;
                for (int k = 0; k < 4; k++)
                    iq2_round_group(g, xval + 8 * k, waux + 8 * k, id, this_scale, Laux + 8 * k);
                float sumqx, sumq2;
                iq2_sums(32, xval, weight, Laux, &sumqx, &sumq2);
                if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                    scale = sumqx / sumq2;
                    best = scale * sumqx;
                    memcpy(L, Laux, 32);
                }
            }
            if (scale > 0) {
                const float id = 1 / scale;
                for (int k = 0; k < 4; k++)
                    iq2_round_group(g, xval + 8 * k, waux + 8 * k, id, scale, L + 8 * k);
                float sumqx, sumq2;
                iq2_sums(32, xval, weight, L, &sumqx, &sumq2);
                if (sumq2 > 0) scale = sumqx / sumq2;
            }
            if (scale < 0) { // ggml's guard; the scale is stored unsigned
                scale = -scale;
                for (int k = 0; k < 4; k++) signs[k] = (uint8_t)(~signs[k] & 127);
            }
            for (int k = 0; k < 4; k++) {
                q2[2 * ib] |= (uint32_t)iq2_index(g, L + 8 * k) << 8 * k;
                q2[2 * ib + 1] |= (uint32_t)signs[k] << 7 * k;
            }
            scales[ib] = scale;
            max_scale = max_scale > scale ? max_scale : scale;
        }
        if (!max_scale) {
            memset(y[ibl].qs, 0, sizeof y[ibl].qs);
            continue;
        }
        const float d = max_scale / 31;
        y[ibl].d = mint_f32_to_f16(d);
        const float id = 1 / d;
        for (int ib = 0; ib < MINT_QK_K / 32; ib++) {
            const int l = mint_clampi(mint_nearest_int(0.5f * (id * scales[ib] - 1)), 0, 15);
            q2[2 * ib + 1] |= (uint32_t)l << 28;
        }
        for (int j = 0; j < MINT_QK_K / 8; j++)
            y[ibl].qs[j] = (uint16_t)(q2[j / 2] >> 16 * (j % 2));
    }
}

// IQ2_XS's and IQ2_S's search of one super-block, groups of 16: each group's scale in scales,
// its two grid indices in index, its two sign bytes in signs; returns the largest scale.
// iq2s selects IQ2_S's variant (sigma2 doubled, weights without an importance, all 8 signs kept,
// a smaller zero threshold).
static float iq2_search16(const mint_iq_grid *g, const float *xbl, const float *qwbl, bool iq2s,
                          float *scales, int *index, uint8_t *signs) {
    float weight[16], xval[16], waux[16];
    int8_t L[16], Laux[16];
    bool on_grid[2], on_grid_aux[2];
    float max_scale = 0.0f;
    const float sumx2 = iq2_sumx2(xbl);
    const float sigma2 = iq2s ? 2 * sumx2 / MINT_QK_K : sumx2 / MINT_QK_K;
    for (int ib = 0; ib < MINT_QK_K / 16; ib++) {
        const float *xb = xbl + 16 * ib;
        for (int i = 0; i < 16; i++) {
            if (qwbl)
                weight[i] = qwbl[16 * ib + i] * sqrtf(sigma2 + xb[i] * xb[i]);
            else if (iq2s)
                weight[i] = 0.25f * sigma2 + xb[i] * xb[i];
            else
                weight[i] = sqrtf(sigma2 + xb[i] * xb[i]); // a unit importance
        }
        for (int i = 0; i < 16; i++) waux[i] = sqrtf(weight[i]);
        uint8_t *sg = signs + 2 * ib;
        iq2_signs(16, xb, weight, !iq2s, xval, sg);
        const float max = iq2_maxf(16, xval);
        memset(L, 0, sizeof L);
        scales[ib] = 0.0f;
        index[2 * ib] = index[2 * ib + 1] = 0;
        if (max < (iq2s ? 1e-8f : MINT_GROUP_MAX_EPS)) { // a zero group stores nothing
            sg[0] = sg[1] = 0;
            continue;
        }
        float best = 0.0f, scale = max / 5;
        on_grid[0] = on_grid[1] = true;
        for (int is = -9; is <= 9; is++) {
            const float id = (5 + is * 0.1f) / max, this_scale = 1 / id;
            for (int k = 0; k < 2; k++)
                on_grid_aux[k] =
                    iq2_round_group(g, xval + 8 * k, waux + 8 * k, id, this_scale, Laux + 8 * k);
            float sumqx, sumq2;
            iq2_sums(16, xval, weight, Laux, &sumqx, &sumq2);
            if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                scale = sumqx / sumq2;
                best = scale * sumqx;
                memcpy(L, Laux, 16);
                on_grid[0] = on_grid_aux[0];
                on_grid[1] = on_grid_aux[1];
            }
        }
        if ((!on_grid[0] || !on_grid[1]) && scale > 0) {
            const float id = 1 / scale;
            for (int k = 0; k < 2; k++)
                if (!on_grid[k])
                    iq2_round_group(g, xval + 8 * k, waux + 8 * k, id, scale, L + 8 * k);
            float sumqx, sumq2;
            iq2_sums(16, xval, weight, L, &sumqx, &sumq2);
            if (sumq2 > 0) scale = sumqx / sumq2;
        }
        if (scale < 0) { // ggml's guard; the scale is stored unsigned
            scale = -scale;
            for (int k = 0; k < 2; k++) sg[k] = (uint8_t)(iq2s ? ~sg[k] : ~sg[k] & 127);
        }
        for (int k = 0; k < 2; k++) index[2 * ib + k] = iq2_index(g, L + 8 * k);
        scales[ib] = scale;
        max_scale = max_scale > scale ? max_scale : scale;
    }
    return max_scale;
}

// The 4-bit ls of each of the 16 group scales against d = max_scale / 31, two per byte.
static void iq2_pack_scales(const float *scales, float d, uint8_t *out) {
    const float id = 1 / d;
    for (int ib = 0; ib < MINT_QK_K / 16; ib++) {
        const int l = mint_clampi(mint_nearest_int(0.5f * (id * scales[ib] - 1)), 0, 15);
        if (ib % 2 == 0)
            out[ib / 2] = (uint8_t)l;
        else
            out[ib / 2] |= (uint8_t)(l << 4);
    }
}

void quantize_iq2_xs_ref(const float *restrict x, void *restrict vy, int64_t n,
                         const float *imatrix) {
    const mint_iq_grid *g = iq2_grid(MINT_IQ_GRID_IQ2_XS);
    mint_block_iq2_xs *y = vy;
    float scales[MINT_QK_K / 16];
    int index[MINT_QK_K / 8];
    uint8_t signs[MINT_QK_K / 8];
    for (int64_t ibl = 0; ibl < n / MINT_QK_K; ibl++) {
        y[ibl].d = 0;
        memset(y[ibl].scales, 0, sizeof y[ibl].scales);
        const float max_scale =
            iq2_search16(g, x + MINT_QK_K * ibl, imatrix ? imatrix + MINT_QK_K * ibl : NULL, false,
                         scales, index, signs);
        if (!max_scale) {
            memset(y[ibl].qs, 0, sizeof y[ibl].qs);
            continue;
        }
        const float d = max_scale / 31;
        y[ibl].d = mint_f32_to_f16(d);
        iq2_pack_scales(scales, d, y[ibl].scales);
        for (int k = 0; k < MINT_QK_K / 8; k++) y[ibl].qs[k] = (uint16_t)(index[k] | signs[k] << 9);
    }
}

void quantize_iq2_s_ref(const float *restrict x, void *restrict vy, int64_t n,
                        const float *imatrix) {
    const mint_iq_grid *g = iq2_grid(MINT_IQ_GRID_IQ2_S);
    mint_block_iq2_s *y = vy;
    float scales[MINT_QK_K / 16];
    int index[MINT_QK_K / 8];
    uint8_t signs[MINT_QK_K / 8];
    for (int64_t ibl = 0; ibl < n / MINT_QK_K; ibl++) {
        memset(&y[ibl], 0, sizeof y[ibl]);
        const float max_scale =
            iq2_search16(g, x + MINT_QK_K * ibl, imatrix ? imatrix + MINT_QK_K * ibl : NULL, true,
                         scales, index, signs);
        // Groups whose search ran store their index and signs even when every scale is 0.
        for (int k = 0; k < MINT_QK_K / 8; k++) {
            y[ibl].qs[k] = (uint8_t)(index[k] & 255);
            y[ibl].qh[k / 4] |= (uint8_t)((index[k] >> 8) << 2 * (k % 4));
            y[ibl].qs[MINT_QK_K / 8 + k] = signs[k];
        }
        if (!max_scale) continue;
        const float d = max_scale / 31;
        y[ibl].d = mint_f32_to_f16(d * 0.9875f);
        iq2_pack_scales(scales, d, y[ibl].scales);
    }
}

void quantize_row_iq2_xxs_ref(const float *restrict x, void *restrict y, int64_t n) {
    quantize_iq2_xxs_ref(x, y, n, NULL);
}

void quantize_row_iq2_xs_ref(const float *restrict x, void *restrict y, int64_t n) {
    quantize_iq2_xs_ref(x, y, n, NULL);
}

void quantize_row_iq2_s_ref(const float *restrict x, void *restrict y, int64_t n) {
    quantize_iq2_s_ref(x, y, n, NULL);
}
