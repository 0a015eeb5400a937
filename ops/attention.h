// attention.h - storing keys and values, and causal grouped-query attention over them.
//
// The keys and values of one layer are seen through a mint_kv_view: keys one row per position,
// values transposed (one row per value dimension, one column per position), so that both the
// scores q.k and "probabilities times V" are dot products over contiguous memory, computed by
// the same gemm kernels as every matmul (see ops/attention.c for why the results are
// bit-identical whether a query comes in a batch or alone).
#ifndef MINT_ATTENTION_H
#define MINT_ATTENTION_H

#include "quant/kernels.h"

#include <stddef.h>
#include <stdint.h>

// Positions are allocated in multiples of MINT_KV_PAD; attention's dots run over a length that
// depends only on the query's position, rounded up to it.
#define MINT_KV_PAD 64

typedef struct mint_kv_view {
    mint_type type; // MINT_TYPE_F32 or MINT_TYPE_F16 elements
    size_t elem;    // bytes per element (4 or 2)
    int64_t kv_dim; // elements per position (n_head_kv * head_dim)
    int32_t n_pad;  // positions allocated (a multiple of MINT_KV_PAD)
    void *k;        // [n_pad][kv_dim] keys, one row per position
    void *vt;       // [kv_dim][n_pad] values, one row per value dimension
} mint_kv_view;

typedef struct mint_attn_shape {
    int n_head;    // query heads
    int n_head_kv; // key/value heads (n_head % n_head_kv == 0; a KV head serves n_head / n_head_kv)
    int head_dim;  // elements per head
    float scale;   // 1 / sqrt(head_dim)
} mint_attn_shape;

// Keys of position pos (kv_dim elements).
static inline void *mint_kv_k_row(const mint_kv_view *kv, int32_t pos) {
    return (char *)kv->k + (size_t)pos * (size_t)kv->kv_dim * kv->elem;
}
// Values of dimension d over all positions (n_pad elements).
static inline void *mint_kv_vt_row(const mint_kv_view *kv, int64_t d) {
    return (char *)kv->vt + (size_t)d * (size_t)kv->n_pad * kv->elem;
}

// cache position pos = (k, v), rounded to the cache type
void mint_kv_store(const mint_kv_view *kv, const float *k, const float *v, int32_t pos);

// out[0..head_dim) = softmax(q . K[0..n_keys) * scale) . V for KV head kvh: the plain version,
// one (query, head) pair, every sum in double. s: scratch of n_keys floats.
void mint_attention_plain(const mint_kv_view *kv, const mint_attn_shape *sh, const float *q,
                          int kvh, int32_t n_keys, float *s, float *out);

// The tiled version works in items: a block of consecutive queries of the batch and one KV head,
// with all the query heads of that KV head, as two gemm tiles. Queries are rows of `q`
// (q_stride bytes apart, all heads) at positions pos0, pos0 + 1, ...; outputs go to the same
// rows of `out`. Items are independent; the latest (most keys) come first, so a dynamic split
// balances.
typedef struct mint_attn_batch {
    const mint_kernels *k;     // kernel table (the gemm of the cache type)
    const mint_kv_view *kv;    // the layer's cache, holding positions 0 .. pos0 + n_tokens - 1
    const mint_attn_shape *sh; // head shapes
    const float *q;            // [n_tokens] rows of n_head * head_dim queries
    size_t q_stride;           // bytes between query rows
    float *out;                // [n_tokens] rows of n_head * head_dim outputs
    size_t out_stride;         // bytes between output rows
    int32_t pos0;              // position of row 0
    int32_t n_tokens;          // rows
} mint_attn_batch;

int32_t mint_attention_tiled_items(const mint_attn_batch *b);
// Computes item i with `scratch` of mint_attention_scratch_bytes bytes.
void mint_attention_tiled_item(const mint_attn_batch *b, int32_t i, uint8_t *scratch);
// Scratch one thread needs for either version with a cache of n_ctx positions.
size_t mint_attention_scratch_bytes(const mint_attn_shape *sh, int32_t n_ctx);

#endif // MINT_ATTENTION_H
