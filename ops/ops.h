// ops.h - the operations of the forward pass.
//
// Every op has the signature op_<name>(node, exec, ith, nth): thread ith of nth computes its
// share of the node's output and returns; the executor puts a barrier after every node. Work is
// split by output rows (or heads), never inside a dot product, so each output element is
// computed by exactly one thread in a fixed order and results do not depend on nth.
#ifndef MINT_OPS_H
#define MINT_OPS_H

#include "quant/kernels.h"
#include "runtime/graph.h"
#include "runtime/kvcache.h"
#include "runtime/model.h"
#include "runtime/pool.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mint_exec {
    const mint_hparams *hp;        // model shapes
    const mint_kernels *k;         // kernel table in use
    int32_t n_tokens;              // rows in this batch
    int32_t pos;                   // position of row 0
    const int32_t *ids;            // [n_tokens] token ids
    int32_t out_first;             // first row whose logits are wanted
    void *buf[MINT_BUF_COUNT];     // buffer base pointers
    size_t stride[MINT_BUF_COUNT]; // bytes per row of each buffer
    mint_kvcache *kv;              // the cache
    bool attn_naive;               // attention one (query, head) at a time, the plain way
    uint8_t *att_scratch;          // [nth][att_scratch_bytes] attention work space per thread
    size_t att_scratch_bytes;      // bytes per thread (mint_attention_scratch_bytes)
    atomic_int *chunk;             // [n_nodes] work counters for dynamically split ops
    int node_index;                // index of the node being run (for chunk)
} mint_exec;

// Row r of buffer b.
static inline void *mint_row(const mint_exec *e, mint_buf_id b, int64_t r) {
    return (char *)e->buf[b] + (size_t)r * e->stride[b];
}

// First row an op works on: all rows, or only the wanted ones (final norm, output head).
static inline int32_t mint_first_row(const mint_exec *e, const mint_node *n) {
    return n->last_only ? e->out_first : 0;
}

typedef void (*mint_op_fn)(const mint_node *n, const mint_exec *e, int ith, int nth);

void op_get_rows(const mint_node *n, const mint_exec *e, int ith, int nth);
void op_rms_norm(const mint_node *n, const mint_exec *e, int ith, int nth);
void op_convert(const mint_node *n, const mint_exec *e, int ith, int nth);
void op_matmul(const mint_node *n, const mint_exec *e, int ith, int nth);
void op_rope(const mint_node *n, const mint_exec *e, int ith, int nth);
void op_kv_store(const mint_node *n, const mint_exec *e, int ith, int nth);
void op_attention(const mint_node *n, const mint_exec *e, int ith, int nth);
// Per-thread scratch the attention op needs for a context of n_ctx positions.
size_t mint_attention_scratch_bytes(const mint_hparams *hp, int32_t n_ctx);
void op_add(const mint_node *n, const mint_exec *e, int ith, int nth);
void op_silu_mul(const mint_node *n, const mint_exec *e, int ith, int nth);

// y[c * y_stride + r] = dot(w row r, a row c) for r < nr, c < nc: the kernel's gemm, or vec_dot
// per element when it has none (bit-identical either way).
void mint_gemm_tile(const mint_type_kernels *tk, int64_t n, const void *w, size_t w_stride, int nr,
                    const void *a, size_t a_stride, int nc, float *y, size_t y_stride);

// Plain helpers shared by ops and tests.
void mint_rms_norm_row(const float *x, const float *w, float *y, int64_t n, float eps);
void mint_rope_row(float *x, int n_heads, int head_dim, int n_rot, int32_t pos, float base,
                   float freq_scale);

#endif // MINT_OPS_H
