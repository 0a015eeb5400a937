// blocks.h - the byte layouts of ggml's block formats, so mint reads and writes the same bytes.
//
// Every struct below is byte-for-byte ggml's (src/ggml-common.h; docs/formats.md 2.3 and 2.4): the
// fields, their order and the absence of padding are pinned by the _Static_asserts, and the sizes
// are the ones quant/types.c lists (tests/test_quant.c cross-checks the two). f16 fields are raw
// uint16_t bits (quant/fp16.h converts them); only Q8_K's d is a plain f32.
//
// Element order inside a block is described once per type in docs/formats.md; the reference
// (de)quantizers in quant/*_ref.c are the executable version of it.
#ifndef MINT_QUANT_BLOCKS_H
#define MINT_QUANT_BLOCKS_H

#include "quant/types.h"

#include <stddef.h>
#include <stdint.h>

// ---------------------------------------------------------------------------------------------
// 32-element ("legacy") blocks. Byte j of qs holds element j in its low nibble and element j+16
// in its high nibble; for the 5-bit types bit e of qh (read little-endian) is element e's 5th bit.

typedef struct mint_block_q4_0 {
    uint16_t d;              // f16 scale: y = (q - 8) * d
    uint8_t qs[MINT_QK / 2]; // [16] two 4-bit quants per byte
} mint_block_q4_0;

typedef struct mint_block_q4_1 {
    uint16_t d;              // f16 scale: y = q * d + m
    uint16_t m;              // f16 offset (the block minimum)
    uint8_t qs[MINT_QK / 2]; // [16] two 4-bit quants per byte
} mint_block_q4_1;

typedef struct mint_block_q5_0 {
    uint16_t d;              // f16 scale: y = (q - 16) * d
    uint8_t qh[4];           // [4] 5th bit of each of the 32 quants (a LE uint32)
    uint8_t qs[MINT_QK / 2]; // [16] low 4 bits, two per byte
} mint_block_q5_0;

typedef struct mint_block_q5_1 {
    uint16_t d;              // f16 scale: y = q * d + m
    uint16_t m;              // f16 offset
    uint8_t qh[4];           // [4] 5th bit of each quant
    uint8_t qs[MINT_QK / 2]; // [16] low 4 bits, two per byte
} mint_block_q5_1;

typedef struct mint_block_q8_0 {
    uint16_t d;         // f16 scale: y = q * d
    int8_t qs[MINT_QK]; // [32] quants
} mint_block_q8_0;

typedef struct mint_block_q8_1 {
    uint16_t d;         // f16 scale: y = q * d
    uint16_t s;         // f16(d * sum(qs)) with the unrounded f32 d (for *_1 dots)
    int8_t qs[MINT_QK]; // [32] quants
} mint_block_q8_1;

// MXFP4 (OCP microscaling FP4): 32 E2M1 values sharing one power-of-two scale. The nibbles are
// indices into the E2M1 table (quant/unpack.h: mint_mxfp4_value, the values doubled so they are
// integers) and the scale is an E8M0 exponent taken at half its value (quant/fp16.h:
// mint_e8m0_half_to_f32), so y = value(q) * 2^(e - 128) (exactly 2^(e-127) times the E2M1 value).
typedef struct mint_block_mxfp4 {
    uint8_t e;               // E8M0 exponent (bias 127)
    uint8_t qs[MINT_QK / 2]; // [16] two 4-bit E2M1 codes per byte, same order as Q4_0
} mint_block_mxfp4;

// IQ4_NL: 32 elements, each a 4-bit index into a fixed non-linear table of 16 int8 levels
// (quant/unpack.h: mint_iq4nl_table, -127 .. 113, denser near zero), times one f16 scale:
// y = d * table[q]. Nibble order as Q4_0.
typedef struct mint_block_iq4_nl {
    uint16_t d;              // f16 scale
    uint8_t qs[MINT_QK / 2]; // [16] two 4-bit table indices per byte
} mint_block_iq4_nl;

// ---------------------------------------------------------------------------------------------
// 256-element super-blocks (K-quants): 16 sub-blocks of 16 (Q2_K, Q3_K, Q6_K) or 8 of 32
// (Q4_K, Q5_K), each with its own quantized scale (and min).

typedef struct mint_block_q2_K {
    uint8_t scales[MINT_QK_K / 16]; // [16] per sub-block: low nibble scale, high nibble min
    uint8_t qs[MINT_QK_K / 4];      // [64] 2-bit quants, four per byte
    uint16_t d;                     // f16 super-block scale of the scales
    uint16_t dmin;                  // f16 super-block scale of the mins
} mint_block_q2_K;

typedef struct mint_block_q3_K {
    uint8_t hmask[MINT_QK_K / 8]; // [32] high (3rd) bit: bit e/32 of hmask[e%32]
    uint8_t qs[MINT_QK_K / 4];    // [64] low 2 bits, four per byte
    uint8_t scales[12];           // 16 six-bit scales (biased by 32), packed
    uint16_t d;                   // f16 super-block scale
} mint_block_q3_K;

typedef struct mint_block_q4_K {
    uint16_t d;                // f16 super-block scale of the scales
    uint16_t dmin;             // f16 super-block scale of the mins
    uint8_t scales[12];        // 8 six-bit scales + 8 six-bit mins, packed
    uint8_t qs[MINT_QK_K / 2]; // [128] 4-bit quants, two per byte
} mint_block_q4_K;

typedef struct mint_block_q5_K {
    uint16_t d;                // f16 super-block scale of the scales
    uint16_t dmin;             // f16 super-block scale of the mins
    uint8_t scales[12];        // 8 six-bit scales + 8 six-bit mins, packed as in Q4_K
    uint8_t qh[MINT_QK_K / 8]; // [32] 5th bits
    uint8_t qs[MINT_QK_K / 2]; // [128] low 4 bits, two per byte
} mint_block_q5_K;

typedef struct mint_block_q6_K {
    uint8_t ql[MINT_QK_K / 2];     // [128] low 4 bits, two per byte
    uint8_t qh[MINT_QK_K / 4];     // [64] high 2 bits, four per byte
    int8_t scales[MINT_QK_K / 16]; // [16] signed 8-bit sub-block scales
    uint16_t d;                    // f16 super-block scale
} mint_block_q6_K;

// Ternary types (BitNet b1.58 and TriLMs' weights, -1 / 0 / +1 times one f16 scale per 256).
// TQ1_0 packs five trits per byte as a fraction of 243 (base 3, most significant trit first,
// scaled up to a byte: byte = ceil(v * 256 / 243) for v < 243), so that trit t of a byte is
// the high "digit" of byte * 3^t (mod 256) times 3: ((uint8_t)(byte * 3^t) * 3) >> 8.
// Element order: qs[m] for m < 32 holds elements m, m+32, .., m+128 (t = 0..4); qs[32 + m] for
// m < 16 holds 160 + m, 176 + m, .. 224 + m; qh[j] holds 240 + j, 244 + j, 248 + j, 252 + j
// (its fifth trit is 0).
typedef struct mint_block_tq1_0 {
    uint8_t qs[48]; // [48] five trits each: elements 0..239
    uint8_t qh[4];  // [4] four trits each: elements 240..255
    uint16_t d;     // f16 scale (the block's largest |x|)
} mint_block_tq1_0;

// TQ2_0: two bits per element holding trit + 1 (0, 1, 2). Byte 32h + m, bits 2l..2l+1: element
// 128h + 32l + m.
typedef struct mint_block_tq2_0 {
    uint8_t qs[MINT_QK_K / 4]; // [64] four elements each
    uint16_t d;                // f16 scale (the block's largest |x|)
} mint_block_tq2_0;

typedef struct mint_block_q8_K {
    float d;                       // f32 scale (negative when the largest |x| is positive)
    int8_t qs[MINT_QK_K];          // [256] quants
    int16_t bsums[MINT_QK_K / 16]; // [16] sum of each group of 16 quants
} mint_block_q8_K;

// IQ4_XS: IQ4_NL's table under a 256-element super-block: 8 sub-blocks of 32, each with a 6-bit
// scale ls (stored biased by 32: low 4 bits in scales_l, high 2 bits in scales_h), so
// y = d * (ls - 32) * table[q]. Each sub-block's 16 bytes of qs are ordered as IQ4_NL's.
typedef struct mint_block_iq4_xs {
    uint16_t d;                       // f16 super-block scale
    uint16_t scales_h;                // bits 2*ib, 2*ib+1: high 2 bits of sub-block ib's scale
    uint8_t scales_l[MINT_QK_K / 64]; // [4] low 4 bits: sub-block 2k in byte k's low nibble,
                                      // 2k+1 in its high nibble
    uint8_t qs[MINT_QK_K / 2];        // [128] 4-bit table indices, 16 bytes per sub-block
} mint_block_iq4_xs;

// IQ3_XXS: 8 sub-blocks of 32, each 8 groups of 4 magnitudes given as one index into the 256
// points of mint_iq3xxs_grid (quant/iq3.h), 8 sign groups of 8 (7 stored sign bits, the 8th
// making their count even) and a 4-bit scale ls: y = d * (0.5 + ls) * 0.5 * grid * sign.
typedef struct mint_block_iq3_xxs {
    uint16_t d;                    // f16 super-block scale
    uint8_t qs[3 * MINT_QK_K / 8]; // [96] bytes 0..63: grid indices, 8 per sub-block; bytes
                                   // 64 + 4 * ib ..: sub-block ib's little-endian word, bits
                                   // 7 * g .. 7 * g + 6 sign group g, bits 28..31 ls
} mint_block_iq3_xxs;

// IQ3_S: 8 sub-blocks of 32, each 8 groups of 4 magnitudes given as a 9-bit index into the 512
// points of mint_iq3s_grid, 32 explicit sign bits and a 4-bit scale ls:
// y = d * (1 + 2 * ls) * grid * sign.
typedef struct mint_block_iq3_s {
    uint16_t d;                     // f16 super-block scale
    uint8_t qs[MINT_QK_K / 4];      // [64] low 8 bits of the grid indices, 8 per sub-block
    uint8_t qh[MINT_QK_K / 32];     // [8] byte ib bit g: the 9th bit of sub-block ib's index g
    uint8_t signs[MINT_QK_K / 8];   // [32] 4 bytes per sub-block, bit j of byte l: element
                                    // 8 * l + j is negative
    uint8_t scales[MINT_QK_K / 64]; // [4] ls of sub-block 2k in byte k's low nibble, 2k+1 high
} mint_block_iq3_s;
// IQ1_S: 256 elements as 32 groups of 8, each an 11-bit index into a lattice of 2048 ternary
// vectors (quant/iq1.h: mint_iq1s_grid); 8 sub-blocks of 32 each carry a 3-bit odd multiplier
// and the sign of a shift delta = +-1/8: y = d * (2s + 1) * (grid[index][j] + delta).
typedef struct mint_block_iq1_s {
    uint16_t d;                  // f16 super-block scale
    uint8_t qs[MINT_QK_K / 8];   // [32] low 8 bits of group g's index
    uint16_t qh[MINT_QK_K / 32]; // [8] sub-block ib: bits 3l..3l+2 the high 3 bits of group
                                 // 4ib+l's index, bits 12..14 the scale s, bit 15 delta < 0
} mint_block_iq1_s;

// IQ1_M: IQ1_S's lattice with a 3-bit multiplier per 16 elements and a shift sign per group of
// 8; the f16 super-block scale is spread over the top nibbles of the 4 scale words.
typedef struct mint_block_iq1_m {
    uint8_t qs[MINT_QK_K / 8];      // [32] low 8 bits of group g's index
    uint8_t qh[MINT_QK_K / 16];     // [16] byte k: groups 2k (low nibble), 2k+1 (high nibble):
                                    // bits 0..2 the index's high 3 bits, bit 3 delta < 0
    uint8_t scales[MINT_QK_K / 32]; // [8] 4 little-endian words: word w bits 3i..3i+2 the
                                    // multiplier of half 4w+i, bits 12..15 nibble w of the f16
} mint_block_iq1_m;

// The 2-bit grid i-quants (docs/formats.md 2.7): each group of 8 elements is one point of a fixed
// grid of 8 magnitudes from {8, 25, 43} (quant/iq2_tables.h), 8 signs of which 7 are stored (the
// 8th makes the count of negatives even; IQ2_S stores all 8), and a group scale
// d * (0.5 + ls) / 4 with a 4-bit ls per 32 (IQ2_XXS) or per 16 elements (IQ2_XS, IQ2_S).
//
// IQ2_XXS: per 32 elements, two 32-bit words qs[4*ib .. 4*ib+3] (little-endian): the first holds
// the four groups' 8-bit grid indices (byte l), the second the four 7-bit sign fields (bits
// 7l .. 7l+6) and ls in its top 4 bits.
typedef struct mint_block_iq2_xxs {
    uint16_t d;                 // f16 super-block scale
    uint16_t qs[MINT_QK_K / 8]; // [32] 4 uint16 per 32 elements, read as 2 uint32 (see above)
} mint_block_iq2_xxs;

// IQ2_XS: per group l of 8, qs[l] = 9-bit grid index | 7 sign bits << 9; scales[ib] holds the
// 32 elements' two ls: the first 16 in the low nibble, the next 16 in the high one.
typedef struct mint_block_iq2_xs {
    uint16_t d;                     // f16 super-block scale
    uint16_t qs[MINT_QK_K / 8];     // [32] index | signs << 9, one per group of 8
    uint8_t scales[MINT_QK_K / 32]; // [8] two 4-bit ls per 32 elements
} mint_block_iq2_xs;

// IQ2_S: per group g of 8 (0..31), a 10-bit grid index: low 8 bits qs[g], high 2 bits in
// qh[g / 4] at bits 2*(g % 4); its 8 sign bits whole in qs[32 + g]; scales as IQ2_XS's.
typedef struct mint_block_iq2_s {
    uint16_t d;                     // f16 super-block scale
    uint8_t qs[MINT_QK_K / 4];      // [64] low index bytes [0..32), sign bytes [32..64)
    uint8_t qh[MINT_QK_K / 32];     // [8] high index bits, four groups per byte
    uint8_t scales[MINT_QK_K / 32]; // [8] two 4-bit ls per 32 elements
} mint_block_iq2_s;

// ---------------------------------------------------------------------------------------------
// Pinned layouts: size and every field offset, as ggml has them (docs/formats.md tables).

_Static_assert(sizeof(mint_block_q4_0) == 18, "q4_0 size");
_Static_assert(offsetof(mint_block_q4_0, qs) == 2, "q4_0 qs");
_Static_assert(sizeof(mint_block_q4_1) == 20, "q4_1 size");
_Static_assert(offsetof(mint_block_q4_1, m) == 2 && offsetof(mint_block_q4_1, qs) == 4, "q4_1");
_Static_assert(sizeof(mint_block_q5_0) == 22, "q5_0 size");
_Static_assert(offsetof(mint_block_q5_0, qh) == 2 && offsetof(mint_block_q5_0, qs) == 6, "q5_0");
_Static_assert(sizeof(mint_block_q5_1) == 24, "q5_1 size");
_Static_assert(offsetof(mint_block_q5_1, m) == 2 && offsetof(mint_block_q5_1, qh) == 4 &&
                   offsetof(mint_block_q5_1, qs) == 8,
               "q5_1");
_Static_assert(sizeof(mint_block_q8_0) == 34, "q8_0 size");
_Static_assert(offsetof(mint_block_q8_0, qs) == 2, "q8_0 qs");
_Static_assert(sizeof(mint_block_q8_1) == 36, "q8_1 size");
_Static_assert(offsetof(mint_block_q8_1, s) == 2 && offsetof(mint_block_q8_1, qs) == 4, "q8_1");

_Static_assert(sizeof(mint_block_mxfp4) == 17, "mxfp4 size");
_Static_assert(offsetof(mint_block_mxfp4, qs) == 1, "mxfp4 qs");

_Static_assert(sizeof(mint_block_iq4_nl) == 18, "iq4_nl size");
_Static_assert(offsetof(mint_block_iq4_nl, qs) == 2, "iq4_nl qs");

_Static_assert(sizeof(mint_block_q2_K) == 84, "q2_K size");
_Static_assert(offsetof(mint_block_q2_K, qs) == 16 && offsetof(mint_block_q2_K, d) == 80 &&
                   offsetof(mint_block_q2_K, dmin) == 82,
               "q2_K");
_Static_assert(sizeof(mint_block_q3_K) == 110, "q3_K size");
_Static_assert(offsetof(mint_block_q3_K, qs) == 32 && offsetof(mint_block_q3_K, scales) == 96 &&
                   offsetof(mint_block_q3_K, d) == 108,
               "q3_K");
_Static_assert(sizeof(mint_block_q4_K) == 144, "q4_K size");
_Static_assert(offsetof(mint_block_q4_K, dmin) == 2 && offsetof(mint_block_q4_K, scales) == 4 &&
                   offsetof(mint_block_q4_K, qs) == 16,
               "q4_K");
_Static_assert(sizeof(mint_block_q5_K) == 176, "q5_K size");
_Static_assert(offsetof(mint_block_q5_K, scales) == 4 && offsetof(mint_block_q5_K, qh) == 16 &&
                   offsetof(mint_block_q5_K, qs) == 48,
               "q5_K");
_Static_assert(sizeof(mint_block_q6_K) == 210, "q6_K size");
_Static_assert(offsetof(mint_block_q6_K, qh) == 128 && offsetof(mint_block_q6_K, scales) == 192 &&
                   offsetof(mint_block_q6_K, d) == 208,
               "q6_K");
_Static_assert(sizeof(mint_block_tq1_0) == 54, "tq1_0 size");
_Static_assert(offsetof(mint_block_tq1_0, qh) == 48 && offsetof(mint_block_tq1_0, d) == 52,
               "tq1_0");
_Static_assert(sizeof(mint_block_tq2_0) == 66, "tq2_0 size");
_Static_assert(offsetof(mint_block_tq2_0, d) == 64, "tq2_0 d");
_Static_assert(sizeof(mint_block_q8_K) == 292, "q8_K size");
_Static_assert(offsetof(mint_block_q8_K, qs) == 4 && offsetof(mint_block_q8_K, bsums) == 260,
               "q8_K");

_Static_assert(sizeof(mint_block_iq4_xs) == 136, "iq4_xs size");
_Static_assert(offsetof(mint_block_iq4_xs, scales_h) == 2 &&
                   offsetof(mint_block_iq4_xs, scales_l) == 4 &&
                   offsetof(mint_block_iq4_xs, qs) == 8,
               "iq4_xs");

_Static_assert(sizeof(mint_block_iq3_xxs) == 98, "iq3_xxs size");
_Static_assert(offsetof(mint_block_iq3_xxs, qs) == 2, "iq3_xxs qs");

_Static_assert(sizeof(mint_block_iq3_s) == 110, "iq3_s size");
_Static_assert(offsetof(mint_block_iq3_s, qs) == 2 && offsetof(mint_block_iq3_s, qh) == 66 &&
                   offsetof(mint_block_iq3_s, signs) == 74 &&
                   offsetof(mint_block_iq3_s, scales) == 106,
               "iq3_s");
_Static_assert(sizeof(mint_block_iq1_s) == 50, "iq1_s size");
_Static_assert(offsetof(mint_block_iq1_s, qs) == 2 && offsetof(mint_block_iq1_s, qh) == 34,
               "iq1_s");
_Static_assert(sizeof(mint_block_iq1_m) == 56, "iq1_m size");
_Static_assert(offsetof(mint_block_iq1_m, qh) == 32 && offsetof(mint_block_iq1_m, scales) == 48,
               "iq1_m");

_Static_assert(sizeof(mint_block_iq2_xxs) == 66, "iq2_xxs size");
_Static_assert(offsetof(mint_block_iq2_xxs, qs) == 2, "iq2_xxs qs");
_Static_assert(sizeof(mint_block_iq2_xs) == 74, "iq2_xs size");
_Static_assert(offsetof(mint_block_iq2_xs, qs) == 2 && offsetof(mint_block_iq2_xs, scales) == 66,
               "iq2_xs");
_Static_assert(sizeof(mint_block_iq2_s) == 82, "iq2_s size");
_Static_assert(offsetof(mint_block_iq2_s, qs) == 2 && offsetof(mint_block_iq2_s, qh) == 66 &&
                   offsetof(mint_block_iq2_s, scales) == 74,
               "iq2_s");
#include "quant/blocks_q1q2.h" // Q1_0, Q2_0

#endif // MINT_QUANT_BLOCKS_H
