// tiles.c - covering a gemm with register tiles (quant/tiles.h). Plain C, built with baseline
// flags: the tile functions it calls carry the instruction set.
#include "quant/tiles.h"

// Rows are the inner loop: the cmax activation rows of a column group stay in L1 while the
// weight rows stream past them (a 64-row tile of weights sits in L2). One column (token
// generation) is a sweep of rmax-row tiles down the thread's rows, rmax weight streams at once.
void mint_tile_gemm(const mint_tile_fn *tiles, int cols, int rmax, int cmax, int64_t n,
                    const void *w, size_t w_stride, int nr, const void *a, size_t a_stride, int nc,
                    float *y, size_t y_stride) {
    for (int c0 = 0; c0 < nc; c0 += cmax) {
        const int cc = nc - c0 < cmax ? nc - c0 : cmax;
        for (int r0 = 0; r0 < nr; r0 += rmax) {
            const int rr = nr - r0 < rmax ? nr - r0 : rmax;
            const mint_tile t = {
                .n = n,
                .w = (const uint8_t *)w + (size_t)r0 * w_stride,
                .w_stride = w_stride,
                .a = (const uint8_t *)a + (size_t)c0 * a_stride,
                .a_stride = a_stride,
                .y = y + (size_t)c0 * y_stride + (size_t)r0,
                .y_stride = y_stride,
            };
            tiles[(rr - 1) * cols + (cc - 1)](&t);
        }
    }
}
