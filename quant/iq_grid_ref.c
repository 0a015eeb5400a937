// iq_grid_ref.c - builds the nearest-point search data of the grid i-quants (quant/iq_grid.h).
#include "quant/iq_grid.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

// Per kind: the grid size, the neighbour list depth, and the table byte of each level 0..2.
static const struct {
    int n_points;     // points in the grid
    int nwant;        // distinct distances a neighbour list spans
    uint8_t level[3]; // table byte of levels 0, 1, 2
} kinds[MINT_IQ_GRID_KIND_COUNT] = {
    [MINT_IQ_GRID_IQ2_XXS] = {256, 2, {0x08, 0x19, 0x2b}},
    [MINT_IQ_GRID_IQ2_XS] = {512, 2, {0x08, 0x19, 0x2b}},
    [MINT_IQ_GRID_IQ2_S] = {1024, 1, {0x08, 0x19, 0x2b}},
    [MINT_IQ_GRID_IQ1_S] = {2048, 3, {0xff, 0x00, 0x01}},
};

static mint_iq_grid grids[MINT_IQ_GRID_KIND_COUNT];
static _Atomic(const mint_iq_grid *) built[MINT_IQ_GRID_KIND_COUNT];
static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;

// The packed coordinates (2l+1 per byte) of a key.
static void key_coords(int key, int8_t pos[8]) {
    for (int i = 0; i < 8; i++) pos[i] = (int8_t)(2 * ((key >> 2 * i) & 3) + 1);
}

// Squared distances d2[j] from pos to every point, then the nwant smallest distinct values in
// thr[0..*nthr-1], ascending.
static void distances(const uint64_t *points, int n, const int8_t pos[8], int nwant, int *d2,
                      int thr[3], int *nthr) {
    int m = 0;
    for (int j = 0; j < n; j++) {
        int d = 0;
        for (int i = 0; i < 8; i++) {
            const int c = (int8_t)(points[j] >> 8 * i) - pos[i];
            d += c * c;
        }
        d2[j] = d;
        // Insert d into the sorted distinct thresholds, keeping the nwant smallest.
        int at = 0;
        while (at < m && thr[at] < d) at++;
        if (at < m && thr[at] == d) continue;
        if (at >= nwant) continue;
        m = m < nwant ? m + 1 : nwant;
        for (int t = m - 1; t > at; t--) thr[t] = thr[t - 1];
        thr[at] = d;
    }
    *nthr = m;
}

static bool build(mint_iq_grid_kind kind, const uint64_t *table) {
    const int n = kinds[kind].n_points, nwant = kinds[kind].nwant;
    uint64_t *points = malloc((size_t)n * sizeof *points);
    int32_t *map = malloc(MINT_IQ_GRID_KEYS * sizeof *map);
    int *d2 = malloc((size_t)n * sizeof *d2);
    uint16_t *nb = NULL;
    if (!points || !map || !d2) goto fail;
    for (int k = 0; k < MINT_IQ_GRID_KEYS; k++) map[k] = -1;
    for (int j = 0; j < n; j++) {
        uint64_t p = 0;
        int key = 0;
        for (int i = 0; i < 8; i++) {
            const uint8_t b = (uint8_t)(table[j] >> 8 * i);
            int l = 0;
            while (l < 3 && kinds[kind].level[l] != b) l++;
            if (l == 3) goto fail;
            p |= (uint64_t)(2 * l + 1) << 8 * i;
            key |= l << 2 * i;
        }
        points[j] = p;
        map[key] = j;
    }
    // Pass 1 counts each off-grid key's list; pass 2 writes it. Within the kept distances the
    // points go nearest first, by index among equals: the order a (distance, index) sort gives.
    size_t total = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && !(nb = malloc(total * sizeof *nb))) goto fail;
        size_t at = 0;
        for (int key = 0; key < MINT_IQ_GRID_KEYS; key++) {
            if (map[key] >= 0) continue; // a grid point (pass 2 has set only keys already done)
            int8_t pos[8];
            int thr[3], nthr;
            key_coords(key, pos);
            distances(points, n, pos, nwant, d2, thr, &nthr);
            const size_t start = at++;
            for (int t = 0; t < nthr; t++)
                for (int j = 0; j < n; j++)
                    if (d2[j] == thr[t]) {
                        if (pass == 1) nb[at] = (uint16_t)j;
                        at++;
                    }
            if (pass == 1) {
                nb[start] = (uint16_t)(at - start - 1);
                map[key] = -(int32_t)start - 1;
            }
        }
        total = at;
    }
    free(d2);
    grids[kind] = (mint_iq_grid){n, points, map, nb};
    return true;
fail:
    free(points);
    free(map);
    free(d2);
    free(nb);
    return false;
}

const mint_iq_grid *mint_iq_grid_get(mint_iq_grid_kind kind, const uint64_t *table) {
    if ((int)kind < 0 || kind >= MINT_IQ_GRID_KIND_COUNT || !table) return NULL;
    const mint_iq_grid *g = atomic_load_explicit(&built[kind], memory_order_acquire);
    if (g) return g;
    pthread_mutex_lock(&build_lock);
    g = atomic_load_explicit(&built[kind], memory_order_relaxed);
    if (!g && build(kind, table)) {
        g = &grids[kind];
        atomic_store_explicit(&built[kind], g, memory_order_release);
    }
    pthread_mutex_unlock(&build_lock);
    return g;
}
