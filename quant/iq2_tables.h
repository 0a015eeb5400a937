// iq2_tables.h - the fixed tables of the 2-bit i-quants IQ2_XXS, IQ2_XS, IQ2_S (data in
// quant/iq2_grids.c): their grids of 8-element points and the sign bytes.
//
// Internal to quant/: the reference (quant/quant_iq2_ref.c) and the kernels read them.
#ifndef MINT_QUANT_IQ2_TABLES_H
#define MINT_QUANT_IQ2_TABLES_H

#include <stdint.h>

// Point k of each grid: byte i is element i's magnitude, one of 8, 25, 43.
extern const uint64_t mint_iq2xxs_grid[256]; // IQ2_XXS: 8-bit indices
extern const uint64_t mint_iq2xs_grid[512];  // IQ2_XS: 9-bit indices
extern const uint64_t mint_iq2s_grid[1024];  // IQ2_S: 10-bit indices
// [128] stored 7 sign bits -> the 8 signs (bit i set: element i negative), bit 7 the parity.
extern const uint8_t mint_iq2_ksigns[128];

#endif // MINT_QUANT_IQ2_TABLES_H
