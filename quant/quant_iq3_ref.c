// quant_iq3_ref.c - reference (de)quantizers and dot products of IQ3_XXS (ggml type 18) and IQ3_S
// (type 21), the 3-bit lattice formats (quant/blocks.h, quant/iq3.h, docs/formats.md 2.7): each
// group of 4 elements is one point of a fixed grid of magnitudes, with signs and a sub-block scale.
//
// The quantizer is llama.cpp's (what llama-quantize writes for these types, importance matrix or
// not), operation for operation in f32, so that it writes the same bytes. Per 32-element
// sub-block:
//   weights  w[j] = imatrix[j] * sqrt(sigma2 + x[j]^2) with an importance (sigma2 = twice the mean
//            square of the super-block), else x[j]^2; the neighbour search weighs by sqrt(w);
//   signs    stripped off into the sign bits (IQ3_XXS: a group of 8 with an odd count of
//            negatives keeps its least important element, w * x^2 smallest, signed, so that the
//            stored count is even);
//   search   for each candidate inverse scale id = (15 + 0.2 t) / max (t = -15..15 for IQ3_XXS,
//            -9..9 for IQ3_S) every 4 magnitudes round to levels l = RNE((id * x - 1) / 2) in
//            0..7; a packed point not on the grid becomes its best neighbour (the grid points at
//            the 2 (IQ3_XXS) or 3 (IQ3_S) smallest squared distances, the one with the least
//            weighted error at scale 1 / id, the first in (distance, index) order on a tie); the
//            scale is the weighted least-squares one of the points, kept when strictly better;
//   refit    the groups that were off the grid (IQ3_S: all groups, when any was) are re-chosen at
//            the best scale, which is then refitted;
// then per super-block d = max scale / 31, each sub-block's ls = RNE((scale / d - 1) / 2) in
// 0..15, stored d times 1.0125 (IQ3_XXS) or 1.033 (IQ3_S). ggml's quirks are kept: an all-zero
// IQ3_S sub-block does not advance the qs and signs it writes, so the next sub-block's land in
// its place (its qh bits and scale stay where they belong).
//
// The dot products are ggml's generic ones (. Q8_K): exact integer sums per sub-block, times the
// sub-block's odd scale 2 * ls + 1, summed per super-block, then one f32 multiply-add per
// super-block (IQ3_XXS's total times 0.25 at the end).
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/iq3.h"
#include "quant/ref.h"

#include <float.h>
#include <pthread.h>
#include <string.h>

#include <math.h>

// ---------------------------------------------------------------------------------------------
// The quantizer's view of a grid: packed points -> grid indices, and neighbour lists.

// Sizes of the neighbour lists (one count, then the indices, per packed point off the grid),
// fixed by the grids; iq3_lattice_build checks them (tests/test_quant_iq3.c).
#define IQ3XXS_NB_LEN 22825
#define IQ3S_NB_LEN   28317

typedef struct iq3_lattice {
    int8_t pos[512][4]; // [grid size][4] point k's coordinates 2l + 1 (1..15)
    int32_t map[4096];  // [4096] packed l0 | l1 << 3 | l2 << 6 | l3 << 9 -> grid index, or
                        // -(o + 1) when off the grid, o: its list's offset in nb
    uint16_t *nb;       // [nb_len] per off-grid point: count n, then n grid indices
    int nb_len;         // entries nb holds
    bool ok;            // the lists filled nb exactly
} iq3_lattice;

static uint16_t nb_xxs[IQ3XXS_NB_LEN], nb_s[IQ3S_NB_LEN];
static iq3_lattice lat_xxs = {.nb = nb_xxs, .nb_len = IQ3XXS_NB_LEN};
static iq3_lattice lat_s = {.nb = nb_s, .nb_len = IQ3S_NB_LEN};
static pthread_once_t lat_once = PTHREAD_ONCE_INIT;

// Fill lat from a grid of size points whose coordinate bytes map to levels by >> shift; an
// off-grid point's neighbours are all grid points at its nwant smallest squared distances, in
// ascending (distance, index) order.
static void iq3_lattice_build(iq3_lattice *lat, const uint32_t *grid, int size, int shift,
                              int nwant) {
    for (int u = 0; u < 4096; u++) lat->map[u] = -1;
    for (int k = 0; k < size; k++) {
        int u = 0;
        for (int j = 0; j < 4; j++) {
            const int l = mint_iq3_coord(grid[k], j) >> shift;
            lat->pos[k][j] = (int8_t)(2 * l + 1);
            u |= l << 3 * j;
        }
        lat->map[u] = k;
    }
    int counter = 0;
    bool ok = true;
    for (int u = 0; u < 4096; u++) {
        if (lat->map[u] >= 0) continue;
        int d2[512], level[3];
        for (int k = 0; k < size; k++) {
            int s = 0;
            for (int j = 0; j < 4; j++) {
                const int diff = lat->pos[k][j] - (2 * (u >> 3 * j & 7) + 1);
                s += diff * diff;
            }
            d2[k] = s;
        }
        int nlev = 0;
        for (; nlev < nwant; nlev++) {
            int best = -1;
            for (int k = 0; k < size; k++)
                if ((nlev == 0 || d2[k] > level[nlev - 1]) && (best < 0 || d2[k] < best))
                    best = d2[k];
            if (best < 0) break;
            level[nlev] = best;
        }
        int n = 0;
        for (int k = 0; k < size; k++) n += d2[k] <= level[nlev - 1];
        if (counter + 1 + n > lat->nb_len) {
            ok = false;
            break;
        }
        lat->map[u] = -(counter + 1);
        lat->nb[counter++] = (uint16_t)n;
        for (int e = 0; e < nlev; e++)
            for (int k = 0; k < size; k++)
                if (d2[k] == level[e]) lat->nb[counter++] = (uint16_t)k;
    }
    lat->ok = ok && counter == lat->nb_len;
}

static void iq3_lattices_init(void) {
    iq3_lattice_build(&lat_xxs, mint_iq3xxs_grid, 256, 3, 2);
    iq3_lattice_build(&lat_s, mint_iq3s_grid, 512, 1, 3);
}

// The lattice of IQ3_XXS (xxs) or IQ3_S, built once, thread-safe.
static const iq3_lattice *iq3_lattice_get(bool xxs) {
    pthread_once(&lat_once, iq3_lattices_init);
    return xxs ? &lat_xxs : &lat_s;
}

bool mint_iq3_lattices_ok(void) {
    return iq3_lattice_get(true)->ok && iq3_lattice_get(false)->ok;
}

// The neighbour of the off-grid packed point u with the least sum w * (scale * q - x)^2 over its
// 4 coordinates (the first on a tie); its levels go to L. Returns its grid index.
static int iq3_best_neighbour(const iq3_lattice *lat, int u, const float *xval, const float *w,
                              float scale, int8_t *L) {
    const uint16_t *nb = lat->nb - lat->map[u] - 1;
    float best_d2 = FLT_MAX;
    int index = nb[1]; // ggml aborts when nothing beats FLT_MAX (NaN input); mint keeps the first
    for (int j = 1; j <= nb[0]; j++) {
        const int8_t *pg = lat->pos[nb[j]];
        float d2 = 0.0f;
        for (int i = 0; i < 4; i++) {
            const float diff = scale * (float)pg[i] - xval[i];
            d2 += w[i] * diff * diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            index = nb[j];
        }
    }
    for (int i = 0; i < 4; i++) L[i] = (int8_t)((lat->pos[index][i] - 1) / 2);
    return index;
}

// The packed point of 4 levels.
static int iq3_pack4(const int8_t *L) {
    return L[0] | L[1] << 3 | L[2] << 6 | L[3] << 9;
}

// The packed point of 4 magnitudes rounded at inverse scale id, levels to L.
static int iq3_round4(const float *xval, float id, int8_t *L) {
    for (int i = 0; i < 4; i++) {
        const int l = mint_nearest_int(0.5f * (id * xval[i] - 1.0f));
        L[i] = (int8_t)(l < 0 ? 0 : l > 7 ? 7 : l);
    }
    return iq3_pack4(L);
}

// sum w * x * q and sum w * q^2 with q = 2l + 1, over a sub-block.
static void iq3_sums(const float *xval, const float *w, const int8_t *L, float *sumqx,
                     float *sumq2) {
    float qx = 0.0f, q2 = 0.0f;
    for (int i = 0; i < MINT_QK; i++) {
        const float q = (float)(2 * L[i] + 1);
        qx += w[i] * xval[i] * q;
        q2 += w[i] * q * q;
    }
    *sumqx = qx;
    *sumq2 = q2;
}

// The scale search of one 32-element sub-block of magnitudes xval (max: their largest), levels
// to L (see the file comment). xxs selects IQ3_XXS's variant. Returns the (signed) scale.
static float iq3_search(const iq3_lattice *lat, bool xxs, const float *xval, const float *w,
                        const float *waux, float max, int8_t *L) {
    int8_t Laux[MINT_QK];
    bool on_grid[8], on_grid_aux[8];
    const int ntry = xxs ? 15 : 9;
    float best = 0.0f, scale = max / 15.0f;
    for (int k = 0; k < 8; k++) on_grid[k] = xxs;
    for (int t = -ntry; t <= ntry; t++) {
        const float id = (15.0f + (float)t * 0.2f) / max;
        const float this_scale = 1.0f / id;
        for (int k = 0; k < 8; k++) {
            const int u = iq3_round4(xval + 4 * k, id, Laux + 4 * k);
            on_grid_aux[k] = lat->map[u] >= 0;
            if (!on_grid_aux[k])
                iq3_best_neighbour(lat, u, xval + 4 * k, waux + 4 * k, this_scale, Laux + 4 * k);
        }
        float sumqx, sumq2;
        iq3_sums(xval, w, Laux, &sumqx, &sumq2);
        if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            memcpy(L, Laux, MINT_QK);
            memcpy(on_grid, on_grid_aux, sizeof on_grid);
        }
    }
    int n_off = 0;
    for (int k = 0; k < 8; k++) n_off += !on_grid[k];
    if (n_off > 0 && scale > 0.0f) {
        const float id = 1.0f / scale;
        for (int k = 0; k < 8; k++) {
            if (xxs && on_grid[k]) continue;
            int8_t l4[4];
            const int u = iq3_round4(xval + 4 * k, id, l4);
            int index = lat->map[u];
            if (index < 0)
                index = iq3_best_neighbour(lat, u, xval + 4 * k, waux + 4 * k, scale, l4);
            for (int i = 0; i < 4; i++) L[4 * k + i] = (int8_t)((lat->pos[index][i] - 1) / 2);
        }
        float sumqx, sumq2;
        iq3_sums(xval, w, L, &sumqx, &sumq2);
        if (sumq2 > 0.0f) scale = sumqx / sumq2;
    }
    return scale;
}

// Weights of a sub-block xb (qw: its slice of the importance, or NULL) and their square roots.
static void iq3_weights(const float *xb, const float *qw, float sigma2, float *w, float *waux) {
    for (int i = 0; i < MINT_QK; i++)
        w[i] = qw ? qw[i] * sqrtf(sigma2 + xb[i] * xb[i]) : xb[i] * xb[i];
    for (int i = 0; i < MINT_QK; i++) waux[i] = sqrtf(w[i]);
}

// sigma2 of a super-block: twice its mean square, in ggml's order.
static float iq3_sigma2(const float *x) {
    float sumx2 = 0.0f;
    for (int i = 0; i < MINT_QK_K; i++) sumx2 += x[i] * x[i];
    return 2.0f * sumx2 / (float)MINT_QK_K;
}

// The 4-bit sub-block scale of scale at inverse super-block step id.
static int iq3_ls(float id, float scale) {
    const int l = mint_nearest_int(0.5f * (id * scale - 1.0f));
    return l < 0 ? 0 : l > 15 ? 15 : l;
}

// ---------------------------------------------------------------------------------------------
// IQ3_XXS

void dequantize_row_iq3_xxs_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_iq3_xxs *x = vx;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float d = mint_f16_to_f32(x[i].d);
        for (int ib = 0; ib < 8; ib++) {
            const uint32_t aux = mint_iq3xxs_aux(&x[i], ib);
            const float db = d * (0.5f + (float)(aux >> 28)) * 0.5f;
            for (int g = 0; g < 8; g++) {
                const uint32_t point = mint_iq3xxs_grid[x[i].qs[8 * ib + g]];
                const unsigned signs = mint_iq3xxs_signs(aux >> 7 * (g / 2));
                for (int j = 0; j < 4; j++) {
                    const float v = db * (float)mint_iq3_coord(point, j);
                    y[32 * ib + 4 * g + j] = signs >> (4 * (g % 2) + j) & 1 ? -v : v;
                }
            }
        }
        y += MINT_QK_K;
    }
}

void quantize_iq3_xxs_ref(const float *restrict x, void *restrict vy, int64_t n,
                          const float *imatrix) {
    const iq3_lattice *lat = iq3_lattice_get(true);
    mint_block_iq3_xxs *y = vy;
    float w[MINT_QK], waux[MINT_QK], xval[MINT_QK], scales[8];
    int8_t L[MINT_QK];
    for (int64_t ibl = 0; ibl < n / MINT_QK_K; ibl++) {
        const float *xbl = x + ibl * MINT_QK_K;
        uint8_t q3[MINT_QK_K / 4];
        uint32_t aux[8];
        memset(q3, 0, sizeof q3);
        memset(aux, 0, sizeof aux);
        const float sigma2 = iq3_sigma2(xbl);
        float max_scale = 0.0f;
        for (int ib = 0; ib < 8; ib++) {
            const float *xb = xbl + 32 * ib;
            iq3_weights(xb, imatrix ? imatrix + ibl * MINT_QK_K + 32 * ib : NULL, sigma2, w, waux);
            uint32_t signs[4];
            for (int k = 0; k < 4; k++) {
                int nflip = 0;
                unsigned s = 0;
                for (int i = 0; i < 8; i++) {
                    if (xb[8 * k + i] >= 0) {
                        xval[8 * k + i] = xb[8 * k + i];
                    } else {
                        xval[8 * k + i] = -xb[8 * k + i];
                        nflip++;
                        s |= 1u << i;
                    }
                }
                if (nflip % 2) {
                    int imin = 0;
                    float min = w[8 * k] * xb[8 * k] * xb[8 * k];
                    for (int i = 1; i < 8; i++) {
                        const float ax = w[8 * k + i] * xb[8 * k + i] * xb[8 * k + i];
                        if (ax < min) {
                            min = ax;
                            imin = i;
                        }
                    }
                    xval[8 * k + imin] = -xval[8 * k + imin];
                    s ^= 1u << imin;
                }
                signs[k] = s & 127;
            }
            float max = xval[0];
            for (int i = 1; i < MINT_QK; i++) max = max > xval[i] ? max : xval[i];
            if (max < 1e-8f) { // ggml's GROUP_MAX_EPS_IQ3_XXS
                scales[ib] = 0.0f;
                continue;
            }
            memset(L, 0, sizeof L);
            float scale = iq3_search(lat, true, xval, w, waux, max, L);
            if (scale < 0.0f) { // ggml's guard: the scale is stored unsigned
                scale = -scale;
                for (int k = 0; k < 4; k++) signs[k] = ~signs[k] & 127;
            }
            for (int k = 0; k < 8; k++) q3[8 * ib + k] = (uint8_t)lat->map[iq3_pack4(L + 4 * k)];
            aux[ib] = signs[0] | signs[1] << 7 | signs[2] << 14 | signs[3] << 21;
            scales[ib] = scale;
            max_scale = max_scale > scale ? max_scale : scale;
        }
        memset(&y[ibl], 0, sizeof y[ibl]); // d = +0: an all-zero super-block stays all zero
        if (!max_scale) continue;
        const float d = max_scale / 31.0f;
        y[ibl].d = mint_f32_to_f16(d * 1.0125f);
        const float id = 1.0f / d;
        memcpy(y[ibl].qs, q3, sizeof q3);
        for (int ib = 0; ib < 8; ib++) {
            const uint32_t word = aux[ib] | (uint32_t)iq3_ls(id, scales[ib]) << 28;
            for (int b = 0; b < 4; b++)
                y[ibl].qs[MINT_QK_K / 4 + 4 * ib + b] = (uint8_t)(word >> 8 * b);
        }
    }
}

void quantize_row_iq3_xxs_ref(const float *restrict x, void *restrict y, int64_t n) {
    quantize_iq3_xxs_ref(x, y, n, NULL);
}

// *s = 0.25 * (sum over super-blocks, in order, of (d_w * d_a) * isum), isum = sum over
// sub-blocks of (2 * ls + 1) * sum(grid * sign * a), exact.
void vec_dot_iq3_xxs_q8_K_ref(int64_t n, float *restrict s, const void *restrict vw,
                              const void *restrict va) {
    const mint_block_iq3_xxs *w = vw;
    const mint_block_q8_K *a = va;
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float d = mint_f16_to_f32(w[i].d) * a[i].d;
        int32_t bsum = 0;
        for (int ib = 0; ib < 8; ib++) {
            const uint32_t aux = mint_iq3xxs_aux(&w[i], ib);
            int32_t sumi = 0;
            for (int g = 0; g < 8; g++) {
                const uint32_t point = mint_iq3xxs_grid[w[i].qs[8 * ib + g]];
                const unsigned signs = mint_iq3xxs_signs(aux >> 7 * (g / 2));
                for (int j = 0; j < 4; j++) {
                    const int v = mint_iq3_coord(point, j) * a[i].qs[32 * ib + 4 * g + j];
                    sumi += signs >> (4 * (g % 2) + j) & 1 ? -v : v;
                }
            }
            bsum += sumi * (int32_t)(2 * (aux >> 28) + 1);
        }
        sumf += d * (float)bsum;
    }
    *s = 0.25f * sumf;
}

// ---------------------------------------------------------------------------------------------
// IQ3_S

void dequantize_row_iq3_s_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_iq3_s *x = vx;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float d = mint_f16_to_f32(x[i].d);
        for (int ib = 0; ib < 8; ib++) {
            const float db = d * (float)(1 + 2 * mint_iq3s_scale(&x[i], ib));
            for (int g = 0; g < 8; g++) {
                const uint32_t point = mint_iq3s_grid[mint_iq3s_index(&x[i], 8 * ib + g)];
                const unsigned signs = x[i].signs[4 * ib + g / 2];
                for (int j = 0; j < 4; j++) {
                    const float v = db * (float)mint_iq3_coord(point, j);
                    y[32 * ib + 4 * g + j] = signs >> (4 * (g % 2) + j) & 1 ? -v : v;
                }
            }
        }
        y += MINT_QK_K;
    }
}

void quantize_iq3_s_ref(const float *restrict x, void *restrict vy, int64_t n,
                        const float *imatrix) {
    const iq3_lattice *lat = iq3_lattice_get(false);
    mint_block_iq3_s *y = vy;
    float w[MINT_QK], waux[MINT_QK], xval[MINT_QK], scales[8];
    int8_t L[MINT_QK];
    for (int64_t ibl = 0; ibl < n / MINT_QK_K; ibl++) {
        const float *xbl = x + ibl * MINT_QK_K;
        mint_block_iq3_s *b = &y[ibl];
        memset(b, 0, sizeof *b);
        // Where the next non-zero sub-block's qs and signs go (see the file comment).
        uint8_t *qs = b->qs, *signs = b->signs;
        const float sigma2 = iq3_sigma2(xbl);
        float max_scale = 0.0f;
        for (int ib = 0; ib < 8; ib++) {
            const float *xb = xbl + 32 * ib;
            iq3_weights(xb, imatrix ? imatrix + ibl * MINT_QK_K + 32 * ib : NULL, sigma2, w, waux);
            uint8_t bsigns[4];
            for (int k = 0; k < 4; k++) {
                unsigned s = 0;
                for (int i = 0; i < 8; i++) {
                    if (xb[8 * k + i] >= 0) {
                        xval[8 * k + i] = xb[8 * k + i];
                    } else {
                        xval[8 * k + i] = -xb[8 * k + i];
                        s |= 1u << i;
                    }
                }
                bsigns[k] = (uint8_t)s;
            }
            float max = xval[0];
            for (int i = 1; i < MINT_QK; i++) max = max > xval[i] ? max : xval[i];
            if (!max) {
                scales[ib] = 0.0f;
                continue;
            }
            memset(L, 0, sizeof L);
            float scale = iq3_search(lat, false, xval, w, waux, max, L);
            if (scale < 0.0f) { // ggml's guard: the scale is stored unsigned
                scale = -scale;
                for (int k = 0; k < 4; k++) bsigns[k] = (uint8_t)~bsigns[k];
            }
            for (int k = 0; k < 8; k++) {
                const int index = lat->map[iq3_pack4(L + 4 * k)];
                qs[k] = (uint8_t)(index & 255);
                b->qh[ib] |= (uint8_t)((index >> 8) << k);
            }
            qs += 8;
            memcpy(signs, bsigns, 4);
            signs += 4;
            scales[ib] = scale;
            max_scale = max_scale > scale ? max_scale : scale;
        }
        if (!max_scale) continue;
        const float d = max_scale / 31.0f;
        b->d = mint_f32_to_f16(d * 1.033f);
        const float id = 1.0f / d;
        for (int ib = 0; ib < 8; ib += 2)
            b->scales[ib / 2] = (uint8_t)(iq3_ls(id, scales[ib]) | iq3_ls(id, scales[ib + 1]) << 4);
    }
}

void quantize_row_iq3_s_ref(const float *restrict x, void *restrict y, int64_t n) {
    quantize_iq3_s_ref(x, y, n, NULL);
}

// *s = sum over super-blocks, in order, of (d_w * d_a) * isum, isum = sum over sub-blocks of
// (2 * ls + 1) * sum(grid * sign * a), exact.
void vec_dot_iq3_s_q8_K_ref(int64_t n, float *restrict s, const void *restrict vw,
                            const void *restrict va) {
    const mint_block_iq3_s *w = vw;
    const mint_block_q8_K *a = va;
    float sumf = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float d = mint_f16_to_f32(w[i].d) * a[i].d;
        int32_t bsum = 0;
        for (int ib = 0; ib < 8; ib++) {
            int32_t sumi = 0;
            for (int g = 0; g < 8; g++) {
                const uint32_t point = mint_iq3s_grid[mint_iq3s_index(&w[i], 8 * ib + g)];
                const unsigned signs = w[i].signs[4 * ib + g / 2];
                for (int j = 0; j < 4; j++) {
                    const int v = mint_iq3_coord(point, j) * a[i].qs[32 * ib + 4 * g + j];
                    sumi += signs >> (4 * (g % 2) + j) & 1 ? -v : v;
                }
            }
            bsum += sumi * (1 + 2 * mint_iq3s_scale(&w[i], ib));
        }
        sumf += d * (float)bsum;
    }
    *s = sumf;
}
