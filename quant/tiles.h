// tiles.h - the register-tile driver shared by the SIMD levels that build their kernels from
// tile functions (AVX2, NEON). A tile function computes y[c * y_stride + r] for r < R, c < C
// from weight rows w + r * w_stride and activation rows a + c * a_stride, with R and C fixed at
// compile time; a level keeps one table of them per type, tiles[(R - 1) * cols + (C - 1)].
#ifndef MINT_QUANT_TILES_H
#define MINT_QUANT_TILES_H

#include <stddef.h>
#include <stdint.h>

typedef struct mint_tile {
    int64_t n;        // elements per row
    const uint8_t *w; // first weight row of the tile
    size_t w_stride;  // bytes between weight rows
    const uint8_t *a; // first activation row of the tile
    size_t a_stride;  // bytes between activation rows
    float *y;         // y[c * y_stride + r]
    size_t y_stride;  // floats between output columns
} mint_tile;

typedef void (*mint_tile_fn)(const mint_tile *t);

// The 1 x 1 tile over one weight row and one activation row: a vec_dot.
static inline mint_tile mint_tile_one_by_one(int64_t n, float *s, const void *w, const void *a) {
    return (mint_tile){n, (const uint8_t *)w, 0, (const uint8_t *)a, 0, s, 0};
}

// Covers an nr x nc gemm with tiles of at most rmax x cmax taken from the table `tiles` (rows of
// `cols` entries): y[c * y_stride + r] = dot(w row r, a row c) for r < nr, c < nc.
void mint_tile_gemm(const mint_tile_fn *tiles, int cols, int rmax, int cmax, int64_t n,
                    const void *w, size_t w_stride, int nr, const void *a, size_t a_stride, int nc,
                    float *y, size_t y_stride);

#endif
