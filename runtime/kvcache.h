// kvcache.h - the KV cache as an explicit object: per layer, one row of keys and one row of
// values per position, in f32 or f16.
//
// Layout of layer l: K[l] is [n_ctx][kv_dim], V[l] is [n_ctx][kv_dim], kv_dim = n_head_kv *
// head_dim, rows contiguous. Positions 0 .. n_past-1 are valid; mint_eval appends the batch at
// pos .. pos+n-1 and refuses (changing nothing) when that passes n_ctx.
#ifndef MINT_KVCACHE_H
#define MINT_KVCACHE_H

#include "mint.h"

#include <stddef.h>
#include <stdint.h>

typedef struct mint_kvcache {
    mint_kv_type type; // MINT_KV_F32 or MINT_KV_F16
    int32_t n_layer;   // blocks
    int32_t n_ctx;     // positions per layer
    int64_t kv_dim;    // elements per row (n_head_kv * head_dim)
    size_t elem;       // bytes per element (4 or 2)
    void *k;           // [n_layer][n_ctx][kv_dim]
    void *v;           // [n_layer][n_ctx][kv_dim]
    int32_t n_past;    // valid positions
} mint_kvcache;

// Bytes the cache needs, or 0 when the product overflows.
uint64_t mint_kvcache_bytes(mint_kv_type type, int32_t n_layer, int32_t n_ctx, int64_t kv_dim);
mint_status mint_kvcache_init(mint_kvcache *kv, mint_kv_type type, int32_t n_layer, int32_t n_ctx,
                              int64_t kv_dim, mint_err *err);
void mint_kvcache_free(mint_kvcache *kv);

// Row `pos` of layer `l` of K or V.
static inline void *mint_kv_k_row(const mint_kvcache *kv, int32_t l, int32_t pos) {
    return (char *)kv->k + (((size_t)l * kv->n_ctx + pos) * kv->kv_dim) * kv->elem;
}
static inline void *mint_kv_v_row(const mint_kvcache *kv, int32_t l, int32_t pos) {
    return (char *)kv->v + (((size_t)l * kv->n_ctx + pos) * kv->kv_dim) * kv->elem;
}

#endif // MINT_KVCACHE_H
