// kv_view.h - a sequence's keys and values in the paged cache, as attention reads them: the
// layout of a block and the view (mint_kv_view) with its address helpers. Below both
// ops/attention.h and ops/attention_quant.h, so that attention over a quantized cache
// (ops/attention_quant.c) needs nothing of ops/attention.c, which calls it.
//
// The cache is paged (runtime/engine/kvcache.c owns it): a sequence's positions live in blocks
// of `block` positions; its block table maps logical block b (positions b*block ..) to a
// physical block. A physical block holds, for every layer, the keys transposed (one row per key
// dimension, one column per position) and then the values one row per position. Both products of
// attention then read contiguous rows and put independent results in the vector lanes: the
// scores q.k take a dimension's `block` keys at a time, "probabilities times V" takes a
// position's value row at a time (quant/kernels.h: mint_qk_fn, mint_pv_fn). A quantized cache
// (Q8_0, Q4_0: llama.cpp's -ctk/-ctv) keeps the keys as rows too, one quantized row per position
// ([block][kv_dim], quantized along the row in 32-element blocks, as llama.cpp's cache), since a
// score is then one block dot product per head (ops/attention_quant.c).
#ifndef MINT_KV_VIEW_H
#define MINT_KV_VIEW_H

#include "quant/types.h"

#include <stddef.h>
#include <stdint.h>

// A sequence's keys and values, for any layer.
typedef struct mint_kv_view {
    mint_type type;       // MINT_TYPE_F32, F16, Q8_0 or Q4_0
    size_t elem;          // bytes per element of a float cache (4 or 2), 0 for a quantized one
    size_t row_bytes;     // bytes of one position's keys (or values): mint_row_size(type, kv_dim)
    int64_t kv_dim;       // elements per position (n_head_kv * head_dim)
    int32_t block;        // positions per block
    size_t layer_bytes;   // bytes of one layer in a block: transposed keys, then values
    uint8_t *const *mem;  // [physical block] base address of each block
    const int32_t *table; // [logical block] physical block of this sequence
} mint_kv_view;

// Whether the cache holds quantized rows (Q8_0, Q4_0) rather than f32 / f16 elements.
static inline int mint_kv_quantized(const mint_kv_view *kv) {
    return kv->elem == 0;
}
// Keys of logical block b in layer l: transposed, [kv_dim][block] elements, in a float cache;
// [block] rows of row_bytes in a quantized one.
static inline uint8_t *mint_kv_block_kt(const mint_kv_view *kv, int32_t l, int32_t b) {
    return kv->mem[kv->table[b]] + (size_t)l * kv->layer_bytes;
}
// Values of logical block b in layer l: [block] rows of row_bytes ([block][kv_dim] elements).
static inline uint8_t *mint_kv_block_v(const mint_kv_view *kv, int32_t l, int32_t b) {
    return mint_kv_block_kt(kv, l, b) + (size_t)kv->block * kv->row_bytes;
}
// A quantized cache: the key row of position pos in layer l (row_bytes).
static inline uint8_t *mint_kv_key_row(const mint_kv_view *kv, int32_t l, int32_t pos) {
    return mint_kv_block_kt(kv, l, pos / kv->block) + (size_t)(pos % kv->block) * kv->row_bytes;
}
// The value row of position pos in layer l (row_bytes), for any cache type.
static inline uint8_t *mint_kv_value_row(const mint_kv_view *kv, int32_t l, int32_t pos) {
    return mint_kv_block_v(kv, l, pos / kv->block) + (size_t)(pos % kv->block) * kv->row_bytes;
}

#endif // MINT_KV_VIEW_H
