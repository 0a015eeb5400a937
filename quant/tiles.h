// tiles.h - the register-tile driver and the instantiation of tile kernels, shared by the SIMD
// levels that build their kernels from tile functions (AVX2, NEON, NEON dotprod). A tile function
// computes y[c * y_stride + r] for r < R, c < C from weight rows w + r * w_stride and activation
// rows a + c * a_stride, with R and C fixed at compile time; a level keeps one table of them per
// type, tiles[(R - 1) * cols + (C - 1)].
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

// ---------------------------------------------------------------------------------------------
// Instantiating a type's kernels from its tile function, the same way at every level that uses
// tiles (AVX2, NEON, NEON dotprod). A tile function is an always-inline kernel(R, C, t); each
// shape becomes one function kernel_RxC, and the type's table kernel_tiles
// [MINT_TILE_RMAX][MINT_TILE_CMAX] names the shapes its gemm uses (0 elsewhere: a shape no table
// names is never compiled). The file that expands MINT_TILE_KERNELS defines MINT_LEVEL_NAME
// (quant/kernels.h), which gives the entry points their level's suffix.
enum { MINT_TILE_RMAX = 4, MINT_TILE_CMAX = 8 };

// One shape of a tile function, as the function kernel_RxC.
#define MINT_TILE_SHAPE(kernel, R, C)                                                              \
    __attribute__((unused)) static void kernel##_##R##x##C(const mint_tile *t) {                   \
        kernel(R, C, t);                                                                           \
    }

// Table entry (R, C): kernel_RxC when gemm uses that shape (up to RMAX x CMAX over a batch, up
// to RGEMV x 1 for one token), else 0.
#define MINT_TILE_ENTRY(kernel, R, C, RMAX, CMAX, RGEMV)                                           \
    ((((R) <= (RMAX) && (C) <= (CMAX)) || ((C) == 1 && (R) <= (RGEMV))) ? kernel##_##R##x##C : 0)

// The kernels of one type from its tile function: the shapes, the table, vec_dot_<name>_<level>
// (the 1 x 1 tile, so that gemm equals vec_dot bit for bit) and gemm_<name>_<level>, which
// covers a batch with tiles of up to RMAX x CMAX and one token with tiles of up to RGEMV x 1.
#define MINT_TILE_KERNELS(name, kernel, RMAX, CMAX, RGEMV)                                         \
    MINT_TILE_SHAPE(kernel, 1, 1)                                                                  \
    MINT_TILE_SHAPE(kernel, 1, 2)                                                                  \
    MINT_TILE_SHAPE(kernel, 1, 3)                                                                  \
    MINT_TILE_SHAPE(kernel, 1, 4)                                                                  \
    MINT_TILE_SHAPE(kernel, 1, 5)                                                                  \
    MINT_TILE_SHAPE(kernel, 1, 6)                                                                  \
    MINT_TILE_SHAPE(kernel, 1, 7)                                                                  \
    MINT_TILE_SHAPE(kernel, 1, 8)                                                                  \
    MINT_TILE_SHAPE(kernel, 2, 1)                                                                  \
    MINT_TILE_SHAPE(kernel, 2, 2)                                                                  \
    MINT_TILE_SHAPE(kernel, 2, 3)                                                                  \
    MINT_TILE_SHAPE(kernel, 2, 4)                                                                  \
    MINT_TILE_SHAPE(kernel, 2, 5)                                                                  \
    MINT_TILE_SHAPE(kernel, 2, 6)                                                                  \
    MINT_TILE_SHAPE(kernel, 2, 7)                                                                  \
    MINT_TILE_SHAPE(kernel, 2, 8)                                                                  \
    MINT_TILE_SHAPE(kernel, 3, 1)                                                                  \
    MINT_TILE_SHAPE(kernel, 3, 2)                                                                  \
    MINT_TILE_SHAPE(kernel, 3, 3)                                                                  \
    MINT_TILE_SHAPE(kernel, 3, 4)                                                                  \
    MINT_TILE_SHAPE(kernel, 3, 5)                                                                  \
    MINT_TILE_SHAPE(kernel, 3, 6)                                                                  \
    MINT_TILE_SHAPE(kernel, 3, 7)                                                                  \
    MINT_TILE_SHAPE(kernel, 3, 8)                                                                  \
    MINT_TILE_SHAPE(kernel, 4, 1)                                                                  \
    MINT_TILE_SHAPE(kernel, 4, 2)                                                                  \
    MINT_TILE_SHAPE(kernel, 4, 3)                                                                  \
    MINT_TILE_SHAPE(kernel, 4, 4)                                                                  \
    MINT_TILE_SHAPE(kernel, 4, 5)                                                                  \
    MINT_TILE_SHAPE(kernel, 4, 6)                                                                  \
    MINT_TILE_SHAPE(kernel, 4, 7)                                                                  \
    MINT_TILE_SHAPE(kernel, 4, 8)                                                                  \
    static const mint_tile_fn kernel##_tiles[MINT_TILE_RMAX][MINT_TILE_CMAX] = {                   \
        {MINT_TILE_ENTRY(kernel, 1, 1, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 1, 2, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 1, 3, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 1, 4, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 1, 5, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 1, 6, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 1, 7, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 1, 8, RMAX, CMAX, RGEMV)},                                        \
        {MINT_TILE_ENTRY(kernel, 2, 1, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 2, 2, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 2, 3, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 2, 4, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 2, 5, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 2, 6, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 2, 7, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 2, 8, RMAX, CMAX, RGEMV)},                                        \
        {MINT_TILE_ENTRY(kernel, 3, 1, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 3, 2, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 3, 3, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 3, 4, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 3, 5, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 3, 6, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 3, 7, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 3, 8, RMAX, CMAX, RGEMV)},                                        \
        {MINT_TILE_ENTRY(kernel, 4, 1, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 4, 2, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 4, 3, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 4, 4, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 4, 5, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 4, 6, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 4, 7, RMAX, CMAX, RGEMV),                                         \
         MINT_TILE_ENTRY(kernel, 4, 8, RMAX, CMAX, RGEMV)}};                                       \
    void MINT_LEVEL_NAME(vec_dot_##name)(int64_t n, float *restrict s, const void *restrict w,     \
                                         const void *restrict a) {                                 \
        const mint_tile t = mint_tile_one_by_one(n, s, w, a);                                      \
        kernel(1, 1, &t);                                                                          \
    }                                                                                              \
    void MINT_LEVEL_NAME(gemm_##name)(int64_t n, const void *restrict w, size_t w_stride, int nr,  \
                                      const void *restrict a, size_t a_stride, int nc,             \
                                      float *restrict y, size_t y_stride) {                        \
        mint_tile_gemm(&kernel##_tiles[0][0], MINT_TILE_CMAX, nc == 1 ? (RGEMV) : (RMAX), (CMAX),  \
                       n, w, w_stride, nr, a, a_stride, nc, y, y_stride);                          \
    }

#endif // MINT_QUANT_TILES_H
