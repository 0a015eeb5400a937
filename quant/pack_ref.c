// pack_ref.c - the repacked layout of quant/pack.h, byte by byte.
#include "quant/pack.h"

#include <string.h>

// Body and rest of every block type mint computes with (quant/blocks.h): the 32-element types
// keep d (MXFP4: its exponent) first as their rest, the K-quants with an odd half-dword keep it
// last.
static const mint_pack_layout layouts[MINT_TYPE_COUNT] = {
    [MINT_TYPE_Q4_0] = {18, 2, 4, 0, 2},      // d | qs[16]
    [MINT_TYPE_Q4_1] = {20, 0, 5, -1, 0},     // d m | qs[16]
    [MINT_TYPE_Q5_0] = {22, 2, 5, 0, 2},      // d | qh[4] qs[16]
    [MINT_TYPE_Q5_1] = {24, 0, 6, -1, 0},     // d m | qh[4] qs[16]
    [MINT_TYPE_Q8_0] = {34, 2, 8, 0, 2},      // d | qs[32]
    [MINT_TYPE_MXFP4] = {17, 1, 4, 0, 1},     // e | qs[16]
    [MINT_TYPE_IQ4_NL] = {18, 2, 4, 0, 2},    // d | qs[16], as Q4_0
    [MINT_TYPE_Q2_K] = {84, 0, 21, -1, 0},    // scales[16] qs[64] d dmin
    [MINT_TYPE_Q3_K] = {110, 0, 27, 108, 2},  // hmask[32] qs[64] scales[12] | d
    [MINT_TYPE_Q4_K] = {144, 0, 36, -1, 0},   // d dmin scales[12] qs[128]
    [MINT_TYPE_Q5_K] = {176, 0, 44, -1, 0},   // d dmin scales[12] qh[32] qs[128]
    [MINT_TYPE_Q6_K] = {210, 0, 52, 208, 2},  // ql[128] qh[64] scales[16] | d
    [MINT_TYPE_IQ4_XS] = {136, 0, 34, -1, 0}, // d scales_h scales_l[4] qs[128]
    [MINT_TYPE_TQ2_0] = {66, 0, 16, 64, 2},   // qs[64] | d
    [MINT_TYPE_TQ1_0] = {54, 0, 13, 52, 2},   // qs[48] qh[4] | d
};

const mint_pack_layout *mint_pack_layout_of(mint_type t) {
    if ((unsigned)t >= MINT_TYPE_COUNT || layouts[t].bs == 0) return NULL;
    return &layouts[t];
}

size_t mint_pack_float_size(mint_type t, int64_t n) {
    if (n <= 0 || n % 16) return 0;
    switch (t) {
    case MINT_TYPE_F32:
        return 4;
    case MINT_TYPE_F16:
    case MINT_TYPE_BF16:
        return 2;
    default:
        return 0;
    }
}

size_t mint_pack_group_bytes(mint_type t, int64_t n) {
    const size_t es = mint_pack_float_size(t, n);
    if (es) return MINT_PACK_ROWS * (size_t)n * es; // 16 chunks of 16 elements: a multiple of 64
    const mint_pack_layout *L = mint_pack_layout_of(t);
    if (!L) return 0;
    const mint_type_traits *tt = mint_type_get(t);
    const size_t nb = (size_t)(n / tt->blck);
    return (MINT_PACK_ROWS * nb * (size_t)L->bs + 63) / 64 * 64;
}

size_t mint_pack_bytes(mint_type t, int64_t n, int64_t nr) {
    const size_t groups = (size_t)((nr + MINT_PACK_ROWS - 1) / MINT_PACK_ROWS);
    return groups * mint_pack_group_bytes(t, n);
}

void mint_pack_rows_ref(mint_type t, int64_t n, const void *w, size_t w_stride, int64_t nr,
                        void *dst) {
    const size_t gb = mint_pack_group_bytes(t, n);
    uint8_t *out = dst;
    memset(out, 0, mint_pack_bytes(t, n, nr));
    const size_t es = mint_pack_float_size(t, n);
    if (es) {
        for (int64_t g = 0; g * MINT_PACK_ROWS < nr; g++)
            for (int r = 0; r < MINT_PACK_ROWS && g * MINT_PACK_ROWS + r < nr; r++) {
                const uint8_t *row =
                    (const uint8_t *)w + (size_t)(g * MINT_PACK_ROWS + r) * w_stride;
                for (int64_t k = 0; k < n / 16; k++)
                    memcpy(out + (size_t)g * gb + mint_pack_chunk_at(es, k, r),
                           row + (size_t)k * 16 * es, 16 * es);
            }
        return;
    }
    const mint_pack_layout *L = mint_pack_layout_of(t);
    const size_t nb = (size_t)(n / mint_type_get(t)->blck);
    for (int64_t g = 0; g * MINT_PACK_ROWS < nr; g++) {
        uint8_t *grp = out + (size_t)g * gb;
        for (int r = 0; r < MINT_PACK_ROWS && g * MINT_PACK_ROWS + r < nr; r++) {
            const uint8_t *row = (const uint8_t *)w + (size_t)(g * MINT_PACK_ROWS + r) * w_stride;
            for (size_t b = 0; b < nb; b++) {
                const uint8_t *blk = row + b * (size_t)L->bs;
                const int nd = L->body_dwords, rb = L->rest_bytes;
                const size_t at = mint_pack_body_at(nd, rb, (int64_t)nb, (int64_t)b);
                for (int j = 0; j < nd; j++)
                    memcpy(grp + at + (size_t)j * 64 + 4 * (size_t)r, blk + L->body_off + 4 * j, 4);
                if (rb)
                    memcpy(grp + mint_pack_rest_at(nd, rb, (int64_t)nb, (int64_t)b) +
                               (size_t)rb * (size_t)r,
                           blk + L->rest_off, (size_t)rb);
            }
        }
    }
}
