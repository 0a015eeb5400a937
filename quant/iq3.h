// iq3.h - the lattices of IQ3_XXS and IQ3_S (quant/iq3_grid.c) and how a block's fields select
// points, signs and scales from them (quant/blocks.h, docs/formats.md 2.7). Internal to quant/:
// the reference (quant/quant_iq3_ref.c) and the SIMD kernels read the same definitions.
#ifndef MINT_QUANT_IQ3_H
#define MINT_QUANT_IQ3_H

#include "quant/blocks.h"

#include <stdint.h>

// [256] IQ3_XXS's points and [512] IQ3_S's: 4 magnitudes per entry, element 0 in the low byte.
extern const uint32_t mint_iq3xxs_grid[256];
extern const uint32_t mint_iq3s_grid[512];

// Magnitude j (0..3) of a grid point.
static inline int mint_iq3_coord(uint32_t point, int j) {
    return (int)(point >> 8 * j & 0xFF);
}

// IQ3_XXS's 8 sign bits of a group from its 7 stored ones: bit 7 is set when bits 0..6 hold an
// odd count, so every group has an even number of negative elements.
static inline unsigned mint_iq3xxs_signs(unsigned s7) {
    unsigned p = s7 & 0x7F;
    p ^= p >> 4;
    p ^= p >> 2;
    p ^= p >> 1;
    return (s7 & 0x7F) | (p & 1) << 7;
}

// IQ3_XXS sub-block ib's (0..7) word: sign groups in bits 0..27, the scale ls in 28..31.
static inline uint32_t mint_iq3xxs_aux(const mint_block_iq3_xxs *b, int ib) {
    const uint8_t *p = b->qs + MINT_QK_K / 4 + 4 * ib;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// IQ3_S's grid index of group g (0..63) of a super-block: 8 bits from qs, the 9th from qh.
static inline int mint_iq3s_index(const mint_block_iq3_s *b, int g) {
    return b->qs[g] | (b->qh[g / 8] >> (g % 8) & 1) << 8;
}

// IQ3_S sub-block ib's 4-bit scale ls (the multiplier is 1 + 2 * ls).
static inline int mint_iq3s_scale(const mint_block_iq3_s *b, int ib) {
    return b->scales[ib / 2] >> 4 * (ib % 2) & 0xF;
}

#endif // MINT_QUANT_IQ3_H
