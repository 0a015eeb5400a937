// iquant_x512.h - the grid i-quants (IQ3_XXS, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S) as panels of
// quant/kquant_x512.h: included by it, after its own formats, so that these types run in the
// K-quants' lanes-are-rows machinery (16 weight rows in the 16 dword lanes, a 16-row panel of a
// super-block built once and used by every column of a tile). The formats are in quant/blocks.h,
// quant/iq3.h, quant/iq2_tables.h and docs/formats.md 2.7-2.8.
//
// A panel's level vector k (elements 4k..4k+3 of each row) is made in four steps:
//   1. the grid index of each lane, from the transposed window's bytes (shifts and masks);
//   2. vpgatherdd of the 4 magnitudes from the grid (IQ3: one dword per point; IQ2: the low or
//      high dword of an 8-byte point, index 2 * point + half), all tables a few KiB, in L1;
//   3. the 4 sign bits of each lane (explicit, or IQ2_XXS / IQ2_XS / IQ3_XXS's 7 stored bits and
//      their parity) spread into a 64-bit byte mask (vpshufb, vptestmb);
//   4. level = offset + magnitude, minus twice the magnitude where negative: an unsigned byte
//      (offset 16 for IQ3_S, whose magnitudes are at most 15; 64 for the others, at most 62),
//      what vpdpbusd takes and at most 126, within its emulation's bound.
// The offset comes off each super-block's sum as Q3_K's and Q6_K's does: pairs of sub-block
// scales against the Q8_K bsums, times the offset (a shift). The sub-block scales are the odd
// multipliers 2 ls + 1, per 32 elements (IQ3_XXS, IQ3_S, IQ2_XXS) or 16 (IQ2_XS, IQ2_S).
//
// So every output element gets the reference's exact integer isum per super-block, and then the
// reference's float steps, which are not the K-quants' fused multiply-add: acc + (d_w * d_a) *
// isum, each rounded (quant/quant_iq3_ref.c, quant/quant_iq2_ref.c), and at the end IQ3_XXS's
// 0.25 or the IQ2 types' 0.125 (kiq_final). Bit for bit the reference, at any tile shape.
//
// Why panels pay: a tile of 64 rows x 256 tokens (MINT_IQ_TOKEN_BLOCK: the executor's default 64
// rebuilt each panel 8 times for a 512-token prompt, a quarter of the time) builds each 16-row
// panel once per K chunk and runs every column against it, where row-wise kernels (AVX2's,
// quant/dot_iq3_avx2.c) decode each row again for every 8 columns, with scalar grid loads.
// TinyLlama-shaped IQ3_S, one thread, pp128 against the row-wise AVX-512 VNNI kernel this
// replaced: about 5 times as fast (IQ2_XXS 7 times); one token about 2 times (IQ2_XXS 1.1), the
// gathers doing what scalar loads did.
#include "quant/iq2_tables.h"
#include "quant/iq3.h"

// Byte `byte` of each lane's super-block (0..255 in the dword).
X512_ALWAYS_INLINE __m512i kiq_byte(const __m512i *tb, int byte) {
    return byte_u(tb[byte / 4], byte % 4);
}

// The 16-bit word at byte `byte` (even) of each lane's super-block.
X512_ALWAYS_INLINE __m512i kiq_word(const __m512i *tb, int byte) {
    return _mm512_and_si512(_mm512_srli_epi32(tb[byte / 4], 8 * (byte % 4)),
                            _mm512_set1_epi32(0xFFFF));
}

// The little-endian word at byte `byte` (2 mod 4) of each lane's super-block.
X512_ALWAYS_INLINE __m512i kiq_dword2(const __m512i *tb, int byte) {
    return x512_shift16(tb[byte / 4], tb[byte / 4 + 1]);
}

// 8 stored sign bits -> with bit 7 the parity of bits 0..6 (the count of negatives even).
X512_ALWAYS_INLINE __m512i kiq_parity7(__m512i s7) {
    __m512i p = _mm512_xor_si512(s7, _mm512_srli_epi32(s7, 4));
    p = _mm512_xor_si512(p, _mm512_srli_epi32(p, 2));
    p = _mm512_xor_si512(p, _mm512_srli_epi32(p, 1));
    return _mm512_ternarylogic_epi32(s7, _mm512_slli_epi32(p, 7), _mm512_set1_epi32(0x80), 0xF8);
}

// The byte mask of negative elements: bits 4h..4h+3 of byte `at` (0..3) of each dword lane of v
// are the signs of the lane's 4 bytes.
X512_ALWAYS_INLINE __mmask64 kiq_signs(__m512i v, int at, int h) {
    const __m512i rep = _mm512_add_epi8(
        _mm512_set1_epi8((char)at),
        _mm512_broadcast_i32x4(_mm_set_epi8(12, 12, 12, 12, 8, 8, 8, 8, 4, 4, 4, 4, 0, 0, 0, 0)));
    const __m512i bit = _mm512_set1_epi32((int)(0x08040201u << 4 * h));
    return _mm512_test_epi8_mask(_mm512_shuffle_epi8(v, rep), bit);
}

// offset + magnitude where positive, offset - magnitude where negative (bytes).
X512_ALWAYS_INLINE __m512i kiq_level(__m512i mag, __mmask64 neg, int offset) {
    const __m512i off = _mm512_set1_epi8((char)offset);
    return _mm512_mask_sub_epi8(_mm512_add_epi8(off, mag), neg, off, mag);
}

// The odd multiplier 2 ls + 1 of a 4-bit ls at bit `shift` of v (int32 lanes).
X512_ALWAYS_INLINE __m512i kiq_odd(__m512i v, int shift) {
    const __m512i ls = _mm512_and_si512(shl(v, -shift), _mm512_set1_epi32(0xF));
    return _mm512_add_epi32(_mm512_slli_epi32(ls, 1), _mm512_set1_epi32(1));
}

// Pairs (sc, sc) or (sc_2q, sc_2q+1) of 16-bit scales against bsums dword q.
X512_ALWAYS_INLINE __m512i kiq_pair(__m512i lo, __m512i hi) {
    return _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16));
}

// Scales of the 8-sub-block types from sc[0..7]: pr[b] = (sc_b, sc_b).
X512_ALWAYS_INLINE void kiq_pairs8(kpanel *p) {
    X512_UNROLL for (int b = 0; b < 8; b++) p->pr[b] = kiq_pair(p->sc[b], p->sc[b]);
}
// ... of the 16-sub-block types: pr[q] = (sc_2q, sc_2q+1).
X512_ALWAYS_INLINE void kiq_pairs16(kpanel *p) {
    X512_UNROLL for (int q = 0; q < 8; q++) p->pr[q] = kiq_pair(p->sc[2 * q], p->sc[2 * q + 1]);
}

// IQ3_XXS: d, qs[96] from byte 2: bytes 2..65 the grid indices (group k of 4 elements), bytes
// 66 + 4 ib.. sub-block ib's word (sign groups of 8 in bits 7 g.., ls in 28..31).
X512_ALWAYS_INLINE void kscales_iq3_xxs(kpanel *p, const __m512i *tb) {
    p->d = x512_f16_lo(tb[0]);
    p->dmin = _mm512_setzero_ps();
    X512_UNROLL for (int ib = 0; ib < 8; ib++) p->sc[ib] = kiq_odd(kiq_dword2(tb, 66 + 4 * ib), 28);
    kiq_pairs8(p);
}
X512_ALWAYS_INLINE __m512i klevel_iq3_xxs(const __m512i *tb, int k) {
    const __m512i mag = _mm512_i32gather_epi32(kiq_byte(tb, 2 + k), mint_iq3xxs_grid, 4);
    const int ib = k / 8, g8 = (k % 8) / 2;
    const __m512i s7 = _mm512_and_si512(_mm512_srli_epi32(kiq_dword2(tb, 66 + 4 * ib), 7 * g8),
                                        _mm512_set1_epi32(0x7F));
    return kiq_level(mag, kiq_signs(kiq_parity7(s7), 0, k % 2), 64);
}

// IQ3_S: d, qs[64] (byte 2 + k: the low 8 bits of group k's index), qh[8] (byte 66 + k / 8, bit
// k % 8: its 9th bit), signs[32] (byte 74 + k / 2, bits 4 (k % 2)..), scales[4] (byte 106 + ib / 2,
// nibble ib % 2).
X512_ALWAYS_INLINE void kscales_iq3_s(kpanel *p, const __m512i *tb) {
    p->d = x512_f16_lo(tb[0]);
    p->dmin = _mm512_setzero_ps();
    X512_UNROLL for (int ib = 0; ib < 8; ib++) {
        p->sc[ib] = kiq_odd(kiq_byte(tb, 106 + ib / 2), 4 * (ib % 2));
    }
    kiq_pairs8(p);
}
X512_ALWAYS_INLINE __m512i klevel_iq3_s(const __m512i *tb, int k) {
    const int hb = 66 + k / 8; // qh byte; its bit k % 8 goes to bit 8
    const __m512i idx =
        merge(kiq_byte(tb, 2 + k), shl(tb[hb / 4], 8 - (8 * (hb % 4) + k % 8)), 0x100);
    const __m512i mag = _mm512_i32gather_epi32(idx, mint_iq3s_grid, 4);
    const int sb = 74 + k / 2;
    return kiq_level(mag, kiq_signs(tb[sb / 4], sb % 4, k % 2), 16);
}

// IQ2_XXS: d, then per sub-block ib two words from byte 2 + 8 ib: the 4 groups' grid indices
// (byte l) and their 7-bit sign fields (bits 7 l..) with ls in bits 28..31. Group l of 8 elements
// is level vectors k = 8 ib + 2 l + half.
X512_ALWAYS_INLINE void kscales_iq2_xxs(kpanel *p, const __m512i *tb) {
    p->d = x512_f16_lo(tb[0]);
    p->dmin = _mm512_setzero_ps();
    X512_UNROLL for (int ib = 0; ib < 8; ib++) p->sc[ib] = kiq_odd(kiq_dword2(tb, 6 + 8 * ib), 28);
    kiq_pairs8(p);
}
// The two level vectors (halves 0 and 1) of a group of 8 elements whose 16 lanes' points are
// idx: two 8-lane qword gathers of the whole points (8 loads each, where dword gathers would take
// 16 per half) and two dword permutes into lanes = rows.
X512_ALWAYS_INLINE void kiq2_points(__m512i idx, const uint64_t *grid, __m512i mag[2]) {
    const __m512i lo = _mm512_i32gather_epi64(_mm512_castsi512_si256(idx), grid, 8);
    const __m512i hi = _mm512_i32gather_epi64(_mm512_extracti64x4_epi64(idx, 1), grid, 8);
    const __m512i even =
        _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    mag[0] = _mm512_permutex2var_epi32(lo, even, hi);
    mag[1] = _mm512_permutex2var_epi32(lo, _mm512_add_epi32(even, _mm512_set1_epi32(1)), hi);
}

// Levels 2 l, 2 l + 1 from group l's points, its sign byte (byte `at` of each lane of signs).
X512_ALWAYS_INLINE void kiq2_group(kpanel *p, int l, __m512i idx, const uint64_t *grid,
                                   __m512i signs, int at) {
    __m512i mag[2];
    kiq2_points(idx, grid, mag);
    X512_UNROLL for (int h = 0; h < 2; h++) p->q[2 * l + h] =
        kiq_level(mag[h], kiq_signs(signs, at, h), 64);
}

X512_ALWAYS_INLINE void klevels_iq2_xxs(kpanel *p, const __m512i *tb) {
    X512_UNROLL for (int ib = 0; ib < 8; ib++) {
        const __m512i aux0 = kiq_dword2(tb, 2 + 8 * ib), aux1 = kiq_dword2(tb, 6 + 8 * ib);
        X512_UNROLL for (int l = 0; l < 4; l++) {
            const __m512i s7 =
                _mm512_and_si512(_mm512_srli_epi32(aux1, 7 * l), _mm512_set1_epi32(0x7F));
            kiq2_group(p, 4 * ib + l, byte_u(aux0, l), mint_iq2xxs_grid, kiq_parity7(s7), 0);
        }
    }
}

// IQ2_XS and IQ2_S's scales: bytes 66 / 74 + ib, the 16-element halves' ls in the nibbles.
X512_ALWAYS_INLINE void kscales_iq2_16(kpanel *p, const __m512i *tb, int at) {
    p->d = x512_f16_lo(tb[0]);
    p->dmin = _mm512_setzero_ps();
    X512_UNROLL for (int s = 0; s < 16; s++) p->sc[s] =
        kiq_odd(kiq_byte(tb, at + s / 2), 4 * (s % 2));
    kiq_pairs16(p);
}

// IQ2_XS: d, qs[32] words from byte 2 (group l: 9-bit index | 7 sign bits << 9), scales[8].
X512_ALWAYS_INLINE void klevels_iq2_xs(kpanel *p, const __m512i *tb) {
    X512_UNROLL for (int l = 0; l < 32; l++) {
        const __m512i q = kiq_word(tb, 2 + 2 * l);
        kiq2_group(p, l, _mm512_and_si512(q, _mm512_set1_epi32(0x1FF)), mint_iq2xs_grid,
                   kiq_parity7(_mm512_srli_epi32(q, 9)), 0);
    }
}

// IQ2_S: d, qs[64] from byte 2 (bytes 2 + g: group g's low 8 index bits; 34 + g: its 8 signs),
// qh[8] from byte 66 (bits 2 (g % 4).. of byte 66 + g / 4: the high 2 index bits), scales[8].
X512_ALWAYS_INLINE void klevels_iq2_s(kpanel *p, const __m512i *tb) {
    X512_UNROLL for (int g = 0; g < 32; g++) {
        const int hb = 66 + g / 4, sb = 34 + g;
        const __m512i idx =
            merge(kiq_byte(tb, 2 + g), shl(tb[hb / 4], 8 - (8 * (hb % 4) + 2 * (g % 4))), 0x300);
        kiq2_group(p, g, idx, mint_iq2s_grid, tb[sb / 4], sb % 4);
    }
}

// The panel of one super-block (tb: its transposed window).
X512_ALWAYS_INLINE void kiq_panel(ktype T, kpanel *p, const __m512i *tb) {
    switch (T.kind) {
    case K_IQ3XXS:
        kscales_iq3_xxs(p, tb);
        X512_UNROLL for (int k = 0; k < 64; k++) p->q[k] = klevel_iq3_xxs(tb, k);
        break;
    case K_IQ3S:
        kscales_iq3_s(p, tb);
        X512_UNROLL for (int k = 0; k < 64; k++) p->q[k] = klevel_iq3_s(tb, k);
        break;
    case K_IQ2XXS:
        kscales_iq2_xxs(p, tb);
        klevels_iq2_xxs(p, tb);
        break;
    case K_IQ2XS:
        kscales_iq2_16(p, tb, 66);
        klevels_iq2_xs(p, tb);
        break;
    default:
        kscales_iq2_16(p, tb, 74);
        klevels_iq2_s(p, tb);
        break;
    }
}

// Whether T is one of these types, its offset's shift, and its final factor.
X512_ALWAYS_INLINE int kiq(ktype T) {
    return T.kind == K_IQ3XXS || T.kind == K_IQ3S || T.kind == K_IQ2XXS || T.kind == K_IQ2XS ||
           T.kind == K_IQ2S;
}
X512_ALWAYS_INLINE int kiq_shift(ktype T) {
    return T.kind == K_IQ3S ? 4 : 6;
}
X512_ALWAYS_INLINE __m512 kiq_final(ktype T, __m512 acc) {
    if (!kiq(T) || T.kind == K_IQ3S) return acc;
    return _mm512_mul_ps(acc, _mm512_set1_ps(T.kind == K_IQ3XXS ? 0.25f : 0.125f));
}
