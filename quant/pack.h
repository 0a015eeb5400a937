// pack.h - the repacked weight layout: 16 rows of a block-quantized matrix interleaved so that
// the "lanes = rows" kernels (quant/simd_avx512.h) read each block of 16 rows with plain
// aligned 64-byte loads instead of loading 16 rows and transposing them.
//
// The layout is a pure permutation of the file's bytes (plus zero padding), the same for every
// instruction set; quant/pack_ref.c is its specification. A block of bs bytes is split into its
// body, the bs / 4 dwords from byte body_off, and its rest, the rb = bs % 4 bytes left over when
// bs is not a multiple of 4: the 2-byte f16 d of Q4_0, Q5_0, Q8_0, Q3_K, Q6_K (rb = 2), the
// E8M0 exponent byte of MXFP4 (rb = 1, its 16 bytes of codes the body from byte 1). A rest of 16
// rows is 16 rb bytes, so the rests of R = 4 / rb consecutive blocks (a run: 2 blocks of f16, 4
// of exponents) fill one 64-byte vector. Rows are taken 16 at a time (a group; a last, partial
// group reads as zero rows). In a group of nb blocks per row, block b is
//   its body: for body dword j, 64 bytes: dword r = body dword j of block b of row r
//   its rest (types with one): 16 rb bytes: rest r = the rest of block b of row r
// in block order, the rests of a run together in the 64 bytes after the bodies of its blocks,
// block R p + i's at byte 16 rb i (a last, shorter run: its bodies, then its rests, zero bytes
// to 64), then zero padding to a multiple of 64 bytes. Every vector is 64-byte aligned when the
// packed buffer is (a rest 16 rb-byte aligned), and a group is read front to back as one stream.
//
// The float types (F32, F16, BF16) keep their elements whole: a group interleaves its 16 rows a
// chunk of 16 elements at a time, chunk k of row r at byte (16 k + r) * 16 * element size (the
// chunk k of each of the 16 rows, then chunk k + 1). Their kernels keep one accumulator chain
// per row in the file's order, so the packing changes which rows are read side by side (16
// chains from one stream instead of one chain at a time), never a sum. Rows whose length is not
// a multiple of 16 are not packed.
#ifndef MINT_QUANT_PACK_H
#define MINT_QUANT_PACK_H

#include "quant/types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { MINT_PACK_ROWS = 16 }; // rows per group

typedef struct mint_pack_layout {
    int bs;          // bytes per block
    int body_off;    // first byte of the body in a block
    int body_dwords; // dwords of the body
    int rest_off;    // first byte of the rest in a block, -1 when none
    int rest_bytes;  // bytes of the rest: bs % 4 (0 when none)
} mint_pack_layout;

// The layout of a type, or NULL when the type has none (floats, activation types, ...).
const mint_pack_layout *mint_pack_layout_of(mint_type t);

// Blocks per run of rests for rb rest bytes (quant/pack.h's first layout): 4 / rb.
static inline int64_t mint_pack_run(int rb) {
    return rb == 1 ? 4 : 2;
}

// Byte offsets in a group of block b's body and rest (nd body dwords, rb rest bytes, nb blocks
// per row).
static inline size_t mint_pack_body_at(int nd, int rb, int64_t nb, int64_t b) {
    if (!rb) return (size_t)b * (size_t)nd * 64;
    const int64_t R = mint_pack_run(rb);
    const size_t run = (size_t)(b / R) * ((size_t)R * (size_t)nd + 1) * 64;
    return run + (size_t)(b % R) * (size_t)nd * 64;
}
static inline size_t mint_pack_rest_at(int nd, int rb, int64_t nb, int64_t b) {
    const int64_t R = mint_pack_run(rb), first = b / R * R;
    const int64_t in_run = nb - first < R ? nb - first : R; // blocks in b's run
    const size_t run = (size_t)(b / R) * ((size_t)R * (size_t)nd + 1) * 64;
    return run + (size_t)in_run * (size_t)nd * 64 + (size_t)(b % R) * 16 * (size_t)rb;
}

// The element size of a float type whose rows of n elements pack (quant/pack.h's second
// layout), 0 for every other type or length.
size_t mint_pack_float_size(mint_type t, int64_t n);

// Byte offset in a group of a float type of chunk k (elements 16 k .. 16 k + 15) of row r.
static inline size_t mint_pack_chunk_at(size_t esize, int64_t k, int r) {
    return ((size_t)k * MINT_PACK_ROWS + (size_t)r) * 16 * esize;
}

// Bytes of one group of 16 packed rows of n elements (a multiple of 64), 0 when rows of this
// type and length are not packed.
size_t mint_pack_group_bytes(mint_type t, int64_t n);

// Bytes of nr packed rows: whole groups.
size_t mint_pack_bytes(mint_type t, int64_t n, int64_t nr);

// Packs rows 0..nr-1 of w (row r at w + r * w_stride, n elements each) into
// mint_pack_bytes(t, n, nr) bytes at dst. Scalar: the specification.
void mint_pack_rows_ref(mint_type t, int64_t n, const void *w, size_t w_stride, int64_t nr,
                        void *dst);

#endif // MINT_QUANT_PACK_H
