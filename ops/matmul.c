// matmul.c - y = W x as llama.cpp computes it on a CPU: the activations are converted once to
// the weight type's vec_dot_type (CONVERT), then every output element is one dot product of a
// weight row with a converted activation row, integer inside each block (MATMUL).
//
// Work split. One token (generation): each thread takes a contiguous range of weight rows and
// streams it once. A batch (prompt): the output is cut into tiles of ROW_BLOCK weight rows by
// TOKEN_BLOCK tokens, handed out through an atomic counter; the gemm kernel register-blocks
// inside a tile. Either way each element is computed by one call in a fixed order, and gemm
// equals vec_dot per element, so the result does not depend on the thread count or the split.
#include "ops/ops.h"

// Tile sizes for the batched path: ROW_BLOCK weight rows stay in L2 while TOKEN_BLOCK converted
// activation rows are reused against them.
enum { ROW_BLOCK = 64, TOKEN_BLOCK = 64 };

// dst[t] = src[t] converted to n->type   rows split across threads
void op_convert(const mint_node *n, const mint_exec *e, int ith, int nth) {
    const mint_from_float_fn from_float = e->k->t[n->type].from_float;
    const int32_t first = mint_first_row(e, n);
    long lo, hi;
    mint_split(e->n_tokens - first, ith, nth, &lo, &hi);
    for (long t = first + lo; t < first + hi; t++)
        from_float(mint_row(e, n->src, t), mint_row(e, n->dst, t), n->width);
}

// Output row of token t: the logits buffer holds only the wanted rows.
static float *dst_row(const mint_exec *e, const mint_node *n, int64_t t) {
    return mint_row(e, n->dst, n->dst == MINT_BUF_LOGITS ? t - e->out_first : t);
}

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

// y[c * y_stride + r] = W[r0 + r] . a[c] for a tile of the weight.
static void tile(const mint_type_kernels *tk, const mint_weight *w, int64_t r0, int nr,
                 const char *a, size_t a_stride, int nc, float *y, size_t y_stride) {
    const char *wr = (const char *)w->data + (size_t)r0 * w->row_bytes;
    mint_gemm_tile(tk, w->n_in, wr, w->row_bytes, nr, a, a_stride, nc, y, y_stride);
}

// dst[t][r] = W[r] . src[t]   split by weight rows (one token) or by tiles (a batch)
void op_matmul(const mint_node *n, const mint_exec *e, int ith, int nth) {
    const mint_weight *w = n->w;
    const mint_type_kernels *tk = &e->k->t[w->type];
    const int32_t first = mint_first_row(e, n);
    const int64_t n_tok = e->n_tokens - first;
    const char *a = mint_row(e, n->src, first);
    const size_t a_stride = e->stride[n->src];
    float *y = dst_row(e, n, first);
    const size_t y_stride = e->stride[n->dst] / sizeof(float);

    if (n_tok == 1) {
        long lo, hi;
        mint_split(w->n_out, ith, nth, &lo, &hi);
        if (hi > lo) tile(tk, w, lo, (int)(hi - lo), a, a_stride, 1, y + lo, y_stride);
        return;
    }
    const int64_t row_blocks = (w->n_out + ROW_BLOCK - 1) / ROW_BLOCK;
    const int64_t tok_blocks = (n_tok + TOKEN_BLOCK - 1) / TOKEN_BLOCK;
    const int64_t n_tiles = row_blocks * tok_blocks;
    atomic_int *counter = &e->chunk[e->node_index];
    for (int64_t i = atomic_fetch_add(counter, 1); i < n_tiles; i = atomic_fetch_add(counter, 1)) {
        // Token blocks inner: consecutive tiles reuse the same weight rows from cache.
        const int64_t rb = i / tok_blocks, tb = i % tok_blocks;
        const int64_t r0 = rb * ROW_BLOCK, c0 = tb * TOKEN_BLOCK;
        const int nr = (int)(w->n_out - r0 < ROW_BLOCK ? w->n_out - r0 : ROW_BLOCK);
        const int nc = (int)(n_tok - c0 < TOKEN_BLOCK ? n_tok - c0 : TOKEN_BLOCK);
        tile(tk, w, r0, nr, a + (size_t)c0 * a_stride, a_stride, nc, y + (size_t)c0 * y_stride + r0,
             y_stride);
    }
}
