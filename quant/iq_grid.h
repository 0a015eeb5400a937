// iq_grid.h - the nearest-point search data of the grid i-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S,
// IQ1_M): for each of the 4^8 candidate groups of 8 levels, the grid index of that group, or, when
// it is not a grid point, the list of grid points nearest to it. llama.cpp's quantizers of these
// types round a scaled group to levels 0..2 per element, look the group up, and when it is off the
// grid choose among its neighbours the one with the smallest weighted error; the bytes they write
// depend on exactly which neighbours are listed and in which order, so this builds them as
// ggml-quants.c's iq2xs_init_impl does.
//
// A point's key packs its 8 levels l_i (0..2) as sum l_i << 2i (largest 0xAAAA). A neighbour list
// holds the grid points at the nwant smallest distinct squared distances from the key's point
// (coordinates 2l+1), nearest first and by grid index among equals: nwant is 2 for IQ2_XXS and
// IQ2_XS, 1 for IQ2_S, 3 for the IQ1 grid.
//
// Internal to quant/. Built once per kind on first use (thread-safe), never freed.
#ifndef MINT_QUANT_IQ_GRID_H
#define MINT_QUANT_IQ_GRID_H

#include <stdint.h>

typedef enum mint_iq_grid_kind {
    MINT_IQ_GRID_IQ2_XXS, // 256 points (quant/iq2_tables.h: mint_iq2xxs_grid)
    MINT_IQ_GRID_IQ2_XS,  // 512 points (mint_iq2xs_grid)
    MINT_IQ_GRID_IQ2_S,   // 1024 points (mint_iq2s_grid)
    MINT_IQ_GRID_IQ1_S,   // 2048 points, IQ1_S's and IQ1_M's grid (bytes -1, 0, 1)
    MINT_IQ_GRID_KIND_COUNT
} mint_iq_grid_kind;

// Number of keys: every key of 8 base-4 digits with each digit <= 2 is below this.
#define MINT_IQ_GRID_KEYS 43692

typedef struct mint_iq_grid {
    int n_points;               // grid size: 256, 512, 1024 or 2048
    const uint64_t *points;     // [n_points] point k's 8 coordinates 2l+1 (1, 3, 5) as int8
                                // bytes, byte i = element i (what the searches measure)
    const int32_t *map;         // [MINT_IQ_GRID_KEYS] key -> grid index (>= 0) when the key is a
                                // point; else -(o + 1), o the offset of its list in neighbours
    const uint16_t *neighbours; // [total] lists, each a count c then c grid indices
} mint_iq_grid;

// The search data of a grid, built on the first call. table is the type's own grid as its
// dequantizer reads it, n_points uint64 of 8 level bytes: 8, 25, 43 for the IQ2 kinds
// (mint_iq2xxs_grid, ...), 0xff, 0x00, 0x01 (-1, 0, 1) for MINT_IQ_GRID_IQ1_S; every call for
// a kind must pass the same table. Returns NULL on a bad kind, a table whose size or bytes do
// not fit the kind, or a failed allocation.
const mint_iq_grid *mint_iq_grid_get(mint_iq_grid_kind kind, const uint64_t *table);

#endif // MINT_QUANT_IQ_GRID_H
