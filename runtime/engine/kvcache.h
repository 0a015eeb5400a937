// kvcache.h - the KV cache as an explicit object: per layer, the keys of every position and the
// values transposed, in f32 or f16.
//
// Layout of layer l, with kv_dim = n_head_kv * head_dim and n_pad = n_ctx rounded up to
// MINT_KV_PAD positions:
//   K[l]: [n_pad][kv_dim]   one row of keys per position (a head's keys: kv_dim-strided rows)
//   V[l]: [kv_dim][n_pad]   transposed: one row per value dimension, one column per position
// Transposed values make "probabilities times V" a dot product over positions, the same kernel
// as every matmul. Positions are padded to MINT_KV_PAD so that attention can run its dots over a
// length that depends only on the position (see ops/attention.c); pad rows start zeroed.
// Positions 0 .. n_past-1 are valid; mint_eval appends the batch at pos .. pos+n-1 and refuses
// (changing nothing) when that passes n_ctx.
#ifndef MINT_KVCACHE_H
#define MINT_KVCACHE_H

#include "mint.h"
#include "ops/attention.h"

#include <stddef.h>
#include <stdint.h>

typedef struct mint_kvcache {
    mint_kv_type type; // MINT_KV_F32 or MINT_KV_F16
    int32_t n_layer;   // blocks
    int32_t n_ctx;     // usable positions
    int32_t n_pad;     // allocated positions (n_ctx rounded up to MINT_KV_PAD)
    int64_t kv_dim;    // elements per position (n_head_kv * head_dim)
    size_t elem;       // bytes per element (4 or 2)
    void *k;           // [n_layer][n_pad][kv_dim]
    void *v;           // [n_layer][kv_dim][n_pad]
    int32_t n_past;    // valid positions
} mint_kvcache;

// Bytes the cache needs, or 0 when the product overflows.
uint64_t mint_kvcache_bytes(mint_kv_type type, int32_t n_layer, int32_t n_ctx, int64_t kv_dim);
mint_status mint_kvcache_init(mint_kvcache *kv, mint_kv_type type, int32_t n_layer, int32_t n_ctx,
                              int64_t kv_dim, mint_err *err);
void mint_kvcache_free(mint_kvcache *kv);

// Layer l as the attention ops see it.
mint_kv_view mint_kvcache_layer(const mint_kvcache *kv, int32_t l);

#endif // MINT_KVCACHE_H
