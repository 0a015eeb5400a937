// quant_iq1_search.c - llama.cpp's quantizers of IQ1_S and IQ1_M (what llama-quantize writes with
// an importance matrix), operation for operation in f32 so that they write the same bytes
// (quant/iq1.h for the layouts, docs/formats.md 2.9).
//
// Per super-block of 256: sigma2 = twice its mean square; per sub-block (32 elements for IQ1_S,
// 16 for IQ1_M) the weights w = imatrix * sqrt(sigma2 + x^2) (IQ1_M without an importance: x^2).
//   split    the elements sorted by value (a stable sort: equal values keep their order) are cut
//            at every pair of positions i1 <= i2 into levels 0, 1, 2 (-1, 0, +1); each cut and
//            each shift choice (IQ1_S: one sign for the sub-block; IQ1_M: one per group of 8,
//            4 combinations) scores sumqx^2 / sumq2 with levels v - 1 +- 1/8, and the strictly
//            best wins (its least-squares scale kept, negated with the levels when negative);
//   lattice  each group of 8 levels is looked up in the IQ1 grid's map (quant/iq_grid.h); a
//            group off the lattice takes the listed neighbour with the smallest weighted squared
//            error under the chosen scale (first among equals), and then the sub-block's scale is
//            refitted by least squares over the chosen points;
//   scales   d = largest sub-block scale / 15, each sub-block's multiplier s = RNE((scale / d -
//            1) / 2) in 0..7; IQ1_S stores d * 1.125 as f16; IQ1_M refits d by least squares
//            over all the quantized elements with their multipliers and stores d * 1.1125.
// A sub-block whose largest |x| is below 1e-12 (IQ1_S) or 1e-7 (IQ1_M) is lattice point 0,
// multiplier 1, delta +1/8.
#include "quant/fp16.h"
#include "quant/iq1.h"
#include "quant/iq_grid.h"
#include "quant/ref.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define IQ1S_EPS 1e-12f // ggml's GROUP_MAX_EPS_IQ1_S
#define IQ1M_EPS 1e-7f  // ggml's GROUP_MAX_EPS_IQ1_M

// The levels -1, 0, +1 shifted up (x_p) or down (x_m) by the delta.
static const float x_p[3] = {-1.0f + MINT_IQ1_DELTA, MINT_IQ1_DELTA, 1.0f + MINT_IQ1_DELTA};
static const float x_m[3] = {-1.0f - MINT_IQ1_DELTA, -MINT_IQ1_DELTA, 1.0f - MINT_IQ1_DELTA};

// order[0..n) = the positions of x[0..n) sorted by value, ties in position order (what glibc's
// qsort, a merge sort at this size, gives ggml).
static void iq1_sort(const float *x, int n, int *order) {
    for (int j = 0; j < n; j++) {
        int at = j;
        while (at > 0 && x[order[at - 1]] > x[j]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = j;
    }
}

static float iq1_sigma2(const float *x) {
    float sumx2 = 0.0f;
    for (int i = 0; i < MINT_QK_K; i++) sumx2 += x[i] * x[i];
    return 2.0f * sumx2 / (float)MINT_QK_K;
}

static void iq1_weights(const float *xb, const float *qw, float sigma2, int n, float *w) {
    if (qw)
        for (int i = 0; i < n; i++) w[i] = qw[i] * sqrtf(sigma2 + xb[i] * xb[i]);
    else
        for (int i = 0; i < n; i++) w[i] = xb[i] * xb[i];
}

static float iq1_amax(const float *xb, int n) {
    float max = fabsf(xb[0]);
    for (int i = 1; i < n; i++) max = max > fabsf(xb[i]) ? max : fabsf(xb[i]);
    return max;
}

// Group of 8 levels L (0..2) -> its lattice index: the map's entry, or the neighbour of least
// sum w * (scale * xx[level] - x)^2 (L rewritten to that point's levels). *off is set when the
// group was off the lattice.
static int iq1_lattice(const mint_iq_grid *grid, const float *x, const float *w, float scale,
                       const float *xx, int8_t *L, bool *off) {
    int key = 0;
    for (int j = 0; j < 8; j++) key |= L[j] << 2 * j;
    int index = grid->map[key];
    if (index >= 0) return index;
    *off = true;
    const uint16_t *list = grid->neighbours + (-index - 1);
    float best = FLT_MAX;
    index = -1;
    for (int n = 1; n <= list[0]; n++) {
        const int8_t *p = (const int8_t *)(grid->points + list[n]);
        float d2 = 0.0f;
        for (int j = 0; j < 8; j++) {
            const float diff = scale * xx[(p[j] - 1) / 2] - x[j];
            d2 += w[j] * diff * diff;
        }
        if (d2 < best) {
            best = d2;
            index = list[n];
        }
    }
    // Every error infinite or NaN: ggml aborts here (its whole-grid retry reads past the group);
    // the first neighbour keeps mint defined.
    if (index < 0) index = list[1];
    const int8_t *p = (const int8_t *)(grid->points + index);
    for (int j = 0; j < 8; j++) L[j] = (int8_t)((p[j] - 1) / 2);
    return index;
}

// sum w * q * x and sum w * q^2 over one group of 8 with the lattice point's levels xx[l] * m.
static void iq1_refit(const mint_iq_grid *grid, int index, const float *x, const float *w,
                      const float *xx, float m, float *sumqx, float *sumq2) {
    const int8_t *p = (const int8_t *)(grid->points + index);
    for (int j = 0; j < 8; j++) {
        const float q = xx[(p[j] - 1) / 2] * m;
        *sumqx += w[j] * q * x[j];
        *sumq2 += w[j] * q * q;
    }
}

// ---------------------------------------------------------------------------------------------
// IQ1_S

// One sub-block of 32: its scale (0 when skipped), shift sign (+1 / -1) and 4 lattice indices.
static float iq1s_sub_block(const mint_iq_grid *grid, const float *xb, const float *w, int *shift,
                            uint16_t index[4]) {
    enum { N = 32 };
    *shift = 1;
    index[0] = index[1] = index[2] = index[3] = 0;
    const float max = iq1_amax(xb, N);
    if (max < IQ1S_EPS) return 0.0f;
    int order[N];
    iq1_sort(xb, N, order);
    float sumx[N + 1], sumw[N + 1];
    sumx[0] = sumw[0] = 0.0f;
    for (int j = 0; j < N; j++) {
        sumx[j + 1] = sumx[j] + w[order[j]] * xb[order[j]];
        sumw[j + 1] = sumw[j] + w[order[j]];
    }
    float best = -FLT_MAX, scale = max;
    int i1b = -1, i2b = -1, best_shift = 0;
    for (int i1 = 0; i1 <= N; i1++)
        for (int i2 = i1; i2 <= N; i2++)
            for (int sh = 0; sh < 2; sh++) {
                const float *v = sh == 0 ? x_p : x_m;
                const float sumqx = (sumx[i1] - sumx[0]) * v[0] + (sumx[i2] - sumx[i1]) * v[1] +
                                    (sumx[N] - sumx[i2]) * v[2];
                const float sumq2 = (sumw[i1] - sumw[0]) * v[0] * v[0] +
                                    (sumw[i2] - sumw[i1]) * v[1] * v[1] +
                                    (sumw[N] - sumw[i2]) * v[2] * v[2];
                if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
                    scale = sumqx / sumq2;
                    best = scale * sumqx;
                    i1b = i1;
                    i2b = i2;
                    best_shift = sh == 0 ? 1 : -1;
                }
            }
    if (i1b < 0 || i2b < 0 || best_shift == 0) return 0.0f;
    int8_t L[N];
    for (int j = 0; j < N; j++) L[order[j]] = (int8_t)(j < i1b ? 0 : j < i2b ? 1 : 2);
    if (scale < 0.0f) {
        for (int j = 0; j < N; j++) L[j] = (int8_t)(2 - L[j]);
        scale = -scale;
        best_shift = -best_shift;
    }
    const float *xx = best_shift == 1 ? x_p : x_m;
    bool off = false;
    for (int k = 0; k < N / 8; k++)
        index[k] = (uint16_t)iq1_lattice(grid, xb + 8 * k, w + 8 * k, scale, xx, L + 8 * k, &off);
    if (off) {
        float sumqx = 0.0f, sumq2 = 0.0f;
        for (int k = 0; k < N / 8; k++)
            iq1_refit(grid, index[k], xb + 8 * k, w + 8 * k, xx, 1.0f, &sumqx, &sumq2);
        if (sumqx > 0.0f && sumq2 > 0.0f) scale = sumqx / sumq2;
    }
    *shift = best_shift;
    return scale;
}

void quantize_iq1_s_ref(const float *restrict x, void *restrict vy, int64_t n,
                        const float *imatrix) {
    mint_block_iq1_s *y = vy;
    const mint_iq_grid *grid = mint_iq_grid_get(MINT_IQ_GRID_IQ1_S, mint_iq1s_grid);
    // Without an importance (llama.cpp refuses): every importance 1.
    static const float ones[32] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                   1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    float w[32], scales[8];
    int shifts[8];
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float *xs = x + i * MINT_QK_K;
        memset(&y[i], 0, sizeof y[i]);
        const float sigma2 = iq1_sigma2(xs);
        float max_scale = 0.0f;
        for (int ib = 0; ib < 8; ib++) {
            const float *qw = imatrix ? imatrix + i * MINT_QK_K + 32 * ib : ones;
            iq1_weights(xs + 32 * ib, qw, sigma2, 32, w);
            uint16_t index[4];
            scales[ib] = iq1s_sub_block(grid, xs + 32 * ib, w, &shifts[ib], index);
            uint16_t h = 0;
            for (int k = 0; k < 4; k++) {
                y[i].qs[4 * ib + k] = (uint8_t)(index[k] & 255);
                h |= (uint16_t)((index[k] >> 8) << 3 * k);
            }
            y[i].qh[ib] = h;
            max_scale = max_scale > scales[ib] ? max_scale : scales[ib];
        }
        if (max_scale == 0.0f) continue;
        const float d = max_scale / 15.0f;
        y[i].d = mint_f32_to_f16(d * 1.125f);
        const float id = 1.0f / d;
        for (int ib = 0; ib < 8; ib++) {
            int l = mint_nearest_int(0.5f * (id * scales[ib] - 1.0f));
            l = l < 0 ? 0 : l > 7 ? 7 : l;
            if (shifts[ib] == -1) l |= 8;
            y[i].qh[ib] |= (uint16_t)(l << 12);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// IQ1_M

// The shifted levels of group k (0, 1) of a 16-element half under shift choice c (0..3): bit 1
// of c is the first group's sign, bit 0 the second's (ggml's masks 0x00, 0x80, 0x08, 0x88).
static const float *iq1m_levels(int c, int k) {
    return (k == 0 ? c < 2 : c % 2 == 0) ? x_p : x_m;
}

// One half of 16: its scale (0 when skipped), shift choice and 2 lattice indices.
static float iq1m_half(const mint_iq_grid *grid, const float *xb, const float *w, int *shift,
                       uint16_t index[2]) {
    enum { N = 16 };
    *shift = 0;
    index[0] = index[1] = 0;
    const float max = iq1_amax(xb, N);
    if (max < IQ1M_EPS) return 0.0f;
    int order[N];
    iq1_sort(xb, N, order);
    float best = -FLT_MAX, scale = max;
    int i1b = -1, i2b = -1, best_c = -1;
    for (int i1 = 0; i1 <= N; i1++)
        for (int i2 = i1; i2 <= N; i2++) {
            float sumqx[4] = {0}, sumq2[4] = {0};
            for (int j = 0; j < N; j++) {
                const int i = order[j], t = j < i1 ? 0 : j < i2 ? 1 : 2;
                for (int c = 0; c < 4; c++) {
                    const float v = iq1m_levels(c, i < N / 2 ? 0 : 1)[t];
                    sumqx[c] += w[i] * v * xb[i];
                    sumq2[c] += w[i] * v * v;
                }
            }
            for (int c = 0; c < 4; c++)
                if (sumq2[c] > 0.0f && sumqx[c] * sumqx[c] > best * sumq2[c]) {
                    scale = sumqx[c] / sumq2[c];
                    best = scale * sumqx[c];
                    i1b = i1;
                    i2b = i2;
                    best_c = c;
                }
        }
    if (i1b < 0 || i2b < 0 || best_c < 0) return 0.0f;
    int8_t L[N];
    for (int j = 0; j < N; j++) L[order[j]] = (int8_t)(j < i1b ? 0 : j < i2b ? 1 : 2);
    if (scale < 0.0f) {
        for (int j = 0; j < N; j++) L[j] = (int8_t)(2 - L[j]);
        scale = -scale;
        best_c = 3 - best_c;
    }
    bool off = false;
    for (int k = 0; k < 2; k++)
        index[k] = (uint16_t)iq1_lattice(grid, xb + 8 * k, w + 8 * k, scale, iq1m_levels(best_c, k),
                                         L + 8 * k, &off);
    if (off) {
        float sumqx = 0.0f, sumq2 = 0.0f;
        for (int k = 0; k < 2; k++)
            iq1_refit(grid, index[k], xb + 8 * k, w + 8 * k, iq1m_levels(best_c, k), 1.0f, &sumqx,
                      &sumq2);
        if (sumqx > 0.0f && sumq2 > 0.0f) scale = sumqx / sumq2;
    }
    *shift = best_c;
    return scale;
}

void quantize_iq1_m_ref(const float *restrict x, void *restrict vy, int64_t n,
                        const float *imatrix) {
    static const uint8_t masks[4] = {0x00, 0x80, 0x08, 0x88};
    mint_block_iq1_m *y = vy;
    const mint_iq_grid *grid = mint_iq_grid_get(MINT_IQ_GRID_IQ1_S, mint_iq1s_grid);
    float w[16], scales[16];
    int shifts[16];
    uint16_t index[16][2];
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float *xs = x + i * MINT_QK_K;
        const float *qw = imatrix ? imatrix + i * MINT_QK_K : NULL;
        memset(&y[i], 0, sizeof y[i]);
        const float sigma2 = iq1_sigma2(xs);
        float max_scale = 0.0f;
        for (int ib = 0; ib < 16; ib++) {
            iq1_weights(xs + 16 * ib, qw ? qw + 16 * ib : NULL, sigma2, 16, w);
            scales[ib] = iq1m_half(grid, xs + 16 * ib, w, &shifts[ib], index[ib]);
            y[i].qs[2 * ib] = (uint8_t)(index[ib][0] & 255);
            y[i].qs[2 * ib + 1] = (uint8_t)(index[ib][1] & 255);
            y[i].qh[ib] = (uint8_t)(index[ib][0] >> 8 | (index[ib][1] >> 8) << 4);
            max_scale = max_scale > scales[ib] ? max_scale : scales[ib];
        }
        if (max_scale == 0.0f) continue;
        uint16_t sc[4] = {0, 0, 0, 0};
        float d = max_scale / 15.0f;
        const float id = 1.0f / d;
        float sumqx = 0.0f, sumq2 = 0.0f;
        for (int ib = 0; ib < 16; ib++) {
            int l = mint_nearest_int(0.5f * (id * scales[ib] - 1.0f));
            l = l < 0 ? 0 : l > 7 ? 7 : l;
            sc[ib / 4] |= (uint16_t)(l << 3 * (ib % 4));
            y[i].qh[ib] |= masks[shifts[ib]];
            iq1_weights(xs + 16 * ib, qw ? qw + 16 * ib : NULL, sigma2, 16, w);
            for (int k = 0; k < 2; k++)
                iq1_refit(grid, index[ib][k], xs + 16 * ib + 8 * k, w + 8 * k,
                          iq1m_levels(shifts[ib], k), (float)(2 * l + 1), &sumqx, &sumq2);
        }
        if (sumq2 > 0.0f) d = sumqx / sumq2;
        const uint16_t h = mint_f32_to_f16(d * 1.1125f);
        sc[0] |= (uint16_t)((h & 0x000F) << 12);
        sc[1] |= (uint16_t)((h & 0x00F0) << 8);
        sc[2] |= (uint16_t)((h & 0x0F00) << 4);
        sc[3] |= (uint16_t)(h & 0xF000);
        for (int k = 0; k < 4; k++) {
            y[i].scales[2 * k] = (uint8_t)(sc[k] & 0xFF);
            y[i].scales[2 * k + 1] = (uint8_t)(sc[k] >> 8);
        }
    }
}

void quantize_row_iq1_s_ref(const float *restrict x, void *restrict y, int64_t n) {
    quantize_iq1_s_ref(x, y, n, NULL);
}

void quantize_row_iq1_m_ref(const float *restrict x, void *restrict y, int64_t n) {
    quantize_iq1_m_ref(x, y, n, NULL);
}
