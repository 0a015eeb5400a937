// attn_elem.h - one element of an attention operand matrix in any of the cache's storage types,
// as f32: the scalar definition that the reference products (quant/attn_tile_ref.c) and the SIMD
// levels' one-at-a-time columns (quant/attn_tile.h) share.
//
// Row k of the matrix starts at element k * stride of an f32 or f16 array, or at byte k * stride
// of Q8_0 / Q4_0 rows (a quantized cache's rows, quant/types.h's block layouts). A quantized
// element is its block's quant times the block's f16 scale widened to f32, one rounding: what
// the types' to_float (dequantize_row_q8_0 / _q4_0) writes, so a product over a quantized
// matrix is the same product over its dequantized rows, bit for bit.
#ifndef MINT_QUANT_ATTN_ELEM_H
#define MINT_QUANT_ATTN_ELEM_H

#include "quant/blocks.h"
#include "quant/fp16.h"

#include <stddef.h>
#include <stdint.h>

typedef enum mint_attn_elem {
    MINT_ATTN_F32 = 0,
    MINT_ATTN_F16 = 1,
    MINT_ATTN_Q8_0 = 2, // blocks of 32: f16 d, 32 int8 (34 bytes)
    MINT_ATTN_Q4_0 = 3, // blocks of 32: f16 d, 16 bytes; element i < 16 the low nibble of byte i,
                        // i >= 16 the high nibble of byte i - 16, minus 8
} mint_attn_elem;

// The block holding element (k, c) of quantized rows m (element c % 32 of it).
static inline const uint8_t *mint_attn_block_at(mint_attn_elem e, const void *m, size_t stride,
                                                size_t k, size_t c) {
    const size_t bs = e == MINT_ATTN_Q8_0 ? sizeof(mint_block_q8_0) : sizeof(mint_block_q4_0);
    return (const uint8_t *)m + k * stride + c / 32 * bs;
}

// Element (k, c) of m.
static inline float mint_attn_elem_at(mint_attn_elem e, const void *m, size_t stride, size_t k,
                                      size_t c) {
    if (e == MINT_ATTN_F32) return ((const float *)m)[k * stride + c];
    if (e == MINT_ATTN_F16) return mint_f16_to_f32(((const uint16_t *)m)[k * stride + c]);
    const uint8_t *blk = mint_attn_block_at(e, m, stride, k, c);
    const size_t i = c % 32;
    const float d = mint_f16_to_f32((uint16_t)(blk[0] | blk[1] << 8));
    if (e == MINT_ATTN_Q8_0) return (float)(int8_t)blk[2 + i] * d;
    const int q = i < 16 ? (blk[2 + i] & 0x0F) : (blk[2 + i - 16] >> 4);
    return (float)(q - 8) * d;
}

#endif // MINT_QUANT_ATTN_ELEM_H
