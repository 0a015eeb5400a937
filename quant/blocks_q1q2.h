// blocks_q1q2.h - the byte layouts of ggml's sign and 2-bit types Q1_0 (type 41) and Q2_0 (type
// 42), byte for byte ggml's (src/ggml-common.h), included by quant/blocks.h. Both are one f16
// scale and packed codes, with no zero point and no sub-block scales.
#ifndef MINT_QUANT_BLOCKS_Q1Q2_H
#define MINT_QUANT_BLOCKS_Q1Q2_H

#include <stddef.h>
#include <stdint.h>

enum { MINT_QK1_0 = 128, MINT_QK2_0 = 64 }; // elements per block of Q1_0 and of Q2_0

// Q1_0: 128 signs and one scale, y = bit ? d : -d. Bit e % 8 of qs[e / 8] is element e's (set:
// x >= 0). d is the block's mean |x|.
typedef struct mint_block_q1_0 {
    uint16_t d;                 // f16 scale (mean |x| of the block)
    uint8_t qs[MINT_QK1_0 / 8]; // [16] one sign bit per element, little-endian bit order
} mint_block_q1_0;

// Q2_0: 64 two-bit codes q and one scale, y = (q - 1) * d (levels -1, 0, 1, 2). Bits
// 2 (e % 4) .. 2 (e % 4) + 1 of qs[e / 4] are element e's code. d is the block's largest |x|.
typedef struct mint_block_q2_0 {
    uint16_t d;                 // f16 scale (largest |x| of the block)
    uint8_t qs[MINT_QK2_0 / 4]; // [16] four codes per byte, element e in bits 2(e%4)
} mint_block_q2_0;

_Static_assert(sizeof(mint_block_q1_0) == 18, "q1_0 size");
_Static_assert(offsetof(mint_block_q1_0, qs) == 2, "q1_0 qs");
_Static_assert(sizeof(mint_block_q2_0) == 18, "q2_0 size");
_Static_assert(offsetof(mint_block_q2_0, qs) == 2, "q2_0 qs");

#endif // MINT_QUANT_BLOCKS_Q1Q2_H
