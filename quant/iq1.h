// iq1.h - IQ1_S's and IQ1_M's lattice and element maps (docs/formats.md 2.9), written once for
// the reference (quant/quant_iq1_ref.c) and the SIMD kernels (quant/dot_iq1_*.c).
//
// Both types store each group of 8 elements as an 11-bit index into a 2048-point lattice of
// ternary vectors (mint_iq1s_grid) plus a shift bit: element j is
//   scale * (grid[index][j] + delta),  delta = -1/8 if the shift bit is set, else +1/8.
// IQ1_S has one 3-bit scale and one shift bit per 32 elements, IQ1_M a 3-bit scale per 16 and a
// shift bit per 8; the scale s (0..7) stands for the odd multiplier 2s + 1.
#ifndef MINT_QUANT_IQ1_H
#define MINT_QUANT_IQ1_H

#include "quant/blocks.h"

#include <stdint.h>

#define MINT_IQ1_NGRID 2048   // points of the lattice
#define MINT_IQ1_DELTA 0.125f // the shift of every element, + or - (ggml's IQ1S_DELTA / IQ1M_DELTA)

// [2048] point k: 8 int8 in {-1, 0, 1}, byte j = element j (quant/iq1_grid.c).
extern const uint64_t mint_iq1s_grid[MINT_IQ1_NGRID];

// The 8 int8 of lattice point k.
static inline const int8_t *mint_iq1_point(int k) {
    return (const int8_t *)(mint_iq1s_grid + k);
}

// ---- IQ1_S: group g (0..31) of a super-block lies in sub-block ib = g / 4 -------------------
// Its index: 8 low bits in qs[g], 3 high bits in qh[ib] bits 3*(g%4) .. 3*(g%4)+2.
static inline int mint_iq1s_index(const mint_block_iq1_s *b, int g) {
    return b->qs[g] | ((b->qh[g / 4] >> 3 * (g % 4)) & 7) << 8;
}
// Sub-block ib's odd multiplier 2s + 1 (s = qh bits 12..14).
static inline int mint_iq1s_scale(const mint_block_iq1_s *b, int ib) {
    return 2 * ((b->qh[ib] >> 12) & 7) + 1;
}
// Sub-block ib's delta sign: -1 if qh bit 15 is set, else +1.
static inline int mint_iq1s_sign(const mint_block_iq1_s *b, int ib) {
    return b->qh[ib] & 0x8000 ? -1 : 1;
}

// ---- IQ1_M: group g (0..31); qh byte g / 2 serves groups 2k (low nibble) and 2k+1 (high) -----
// The scales' four little-endian 16-bit words (a uint16_t* cast in ggml; bytes here).
static inline unsigned mint_iq1m_word(const mint_block_iq1_m *b, int w) {
    return (unsigned)b->scales[2 * w] | (unsigned)b->scales[2 * w + 1] << 8;
}
// Group g's index: 8 low bits in qs[g], 3 high bits in the low 3 bits of its qh nibble.
static inline int mint_iq1m_index(const mint_block_iq1_m *b, int g) {
    return b->qs[g] | ((b->qh[g / 2] >> 4 * (g % 2)) & 7) << 8;
}
// Group g's delta sign: -1 if bit 3 of its qh nibble is set, else +1.
static inline int mint_iq1m_sign(const mint_block_iq1_m *b, int g) {
    return (b->qh[g / 2] >> 4 * (g % 2)) & 8 ? -1 : 1;
}
// The odd multiplier of 16-element half h (0..15): 3 bits at 3 * (h % 4) of word h / 4.
static inline int mint_iq1m_scale(const mint_block_iq1_m *b, int h) {
    return 2 * ((mint_iq1m_word(b, h / 4) >> 3 * (h % 4)) & 7) + 1;
}
// The f16 super-block scale: its 4 nibbles are the top nibbles of words 0..3, low to high.
static inline uint16_t mint_iq1m_d(const mint_block_iq1_m *b) {
    return (uint16_t)(mint_iq1m_word(b, 0) >> 12 | (mint_iq1m_word(b, 1) >> 8 & 0x00F0) |
                      (mint_iq1m_word(b, 2) >> 4 & 0x0F00) | (mint_iq1m_word(b, 3) & 0xF000));
}

#endif // MINT_QUANT_IQ1_H
