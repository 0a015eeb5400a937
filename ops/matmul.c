// matmul.c - y = W x as llama.cpp computes it on a CPU: the activations are converted once to
// the weight type's vec_dot_type (mint_convert), then every output element is one dot product
// of a weight row with a converted activation row, integer inside each block (mint_gemm_tile).
// How a matmul's output is cut into tiles for the threads is the executor's business
// (runtime/engine/exec.c); each element is computed by one call in a fixed order, and gemm
// equals vec_dot per element, so no split changes a bit.
#include "ops/ops.h"

// y[r] = x[r] converted   for r in [r0, r1)
void mint_convert(mint_from_float_fn from_float, const float *x, size_t x_stride, void *y,
                  size_t y_stride, int64_t n, long r0, long r1) {
    for (long r = r0; r < r1; r++)
        from_float((const float *)((const char *)x + (size_t)r * x_stride),
                   (char *)y + (size_t)r * y_stride, n);
}

// y[c * y_stride + r] = W[r] . a[c]   for r < nr, c < nc
void mint_gemm_tile(const mint_type_kernels *tk, int64_t n, const void *w, size_t w_stride, int nr,
                    const void *a, size_t a_stride, int nc, float *y, size_t y_stride) {
    if (tk->gemm) {
        tk->gemm(n, w, w_stride, nr, a, a_stride, nc, y, y_stride);
        return;
    }
    for (int c = 0; c < nc; c++)
        for (int r = 0; r < nr; r++)
            tk->vec_dot(n, &y[(size_t)c * y_stride + r], (const char *)w + (size_t)r * w_stride,
                        (const char *)a + (size_t)c * a_stride);
}
