// unpack.h - the element maps of the block formats, written once (docs/formats.md 2.3 / 2.4).
//
// Small static inline readers shared by the reference dequantizers, quantizers and dot products,
// so that "where does element e live" has a single definition. Internal to quant/.
#ifndef MINT_QUANT_UNPACK_H
#define MINT_QUANT_UNPACK_H

#include <stdint.h>

// Element e (0..31) of a 32-element block's 16 nibble bytes: byte e holds element e in its low
// nibble, byte e-16 holds element e in its high nibble.
static inline int mint_nibble(const uint8_t *qs, int e) {
    return e < 16 ? qs[e] & 0xF : qs[e - 16] >> 4;
}

// MXFP4's E2M1 code q (0..15) as twice its value, an integer: codes 0..7 are 0, 0.5, 1, 1.5, 2,
// 3, 4, 6 and 8..15 their negatives (8 is -0). The SIMD kernels look the same 16 bytes up
// (pshufb / tbl) from mint_mxfp4_table.
static inline const int8_t *mint_mxfp4_table(void) {
    static const int8_t table[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
    return table;
}
static inline int mint_mxfp4_value(int q) {
    return mint_mxfp4_table()[q & 0xF];
}

// The 4 qh bytes of Q5_0/Q5_1 as one little-endian word: bit e is element e's 5th bit.
static inline uint32_t mint_load_u32_le(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void mint_store_u32_le(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

// 2-bit field of element e (0..255) in Q2_K/Q3_K's 64-byte qs: e = 128n + 32j + l lives in bits
// 2j..2j+1 of byte 32n + l.
static inline int mint_q2_bits(const uint8_t *qs, int e) {
    return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

// Q3_K's high bit of element e: bit e/32 of hmask[e%32].
static inline int mint_q3_hbit(const uint8_t *hmask, int e) {
    return (hmask[e % 32] >> (e / 32)) & 1;
}

// Q3_K's 6-bit scale k (0..15), still biased by 32: low 4 bits in the nibbles of bytes 0..7
// (k < 8 low, k >= 8 high), high 2 bits in bits 2(k/4).. of byte 8 + k%4.
static inline int mint_q3_scale(const uint8_t *s, int k) {
    int lo = k < 8 ? s[k] & 0xF : s[k - 8] >> 4;
    int hi = (s[8 + k % 4] >> (2 * (k / 4))) & 3;
    return lo | hi << 4;
}

// The 6-bit scale and min of Q4_K/Q5_K sub-block b (0..7) from the 12 packed bytes: b < 4 in the
// low 6 bits of bytes b (scale) and b+4 (min); b >= 4 in the nibbles of byte b+4 plus the top 2
// bits of bytes b-4 (scale) and b (min).
static inline void mint_k4_scale_min(int b, const uint8_t *q, int *sc, int *m) {
    if (b < 4) {
        *sc = q[b] & 63;
        *m = q[b + 4] & 63;
    } else {
        *sc = (q[b + 4] & 0xF) | (q[b - 4] >> 6) << 4;
        *m = (q[b + 4] >> 4) | (q[b] >> 6) << 4;
    }
}

// Q4_K/Q5_K: the low 4 bits of element 32b + l sit in byte 32(b/2) + l of qs, low nibble for
// even b, high nibble for odd b. Q5_K's 5th bit is bit b of qh[l].
static inline int mint_k4_nibble(const uint8_t *qs, int b, int l) {
    return (qs[32 * (b / 2) + l] >> (4 * (b % 2))) & 0xF;
}

// Q6_K's level of element e (0..63, i.e. before subtracting 32): e = 128h + 32t + l has its low
// 4 bits in ql[64h + l + 32(t&1)] (low nibble for t < 2, high for t >= 2) and its high 2 bits in
// bits 2t..2t+1 of qh[32h + l].
static inline int mint_q6_level(const uint8_t *ql, const uint8_t *qh, int e) {
    int h = e / 128, t = (e % 128) / 32, l = e % 32;
    int low = (ql[64 * h + l + 32 * (t & 1)] >> (4 * (t / 2))) & 0xF;
    int high = (qh[32 * h + l] >> (2 * t)) & 3;
    return low | high << 4;
}

// TQ1_0's trit of element e (0..255) as 0, 1, 2 (value + 1), quant/blocks.h's order: the byte
// times 3^t wraps to a byte whose top "digit" in base 3 is trit t, read as (b * 3) >> 8.
static inline int mint_tq1_trit(const uint8_t *qs, const uint8_t *qh, int e) {
    static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
    uint8_t b;
    int t;
    if (e < 160) {
        b = qs[e % 32], t = e / 32;
    } else if (e < 240) {
        b = qs[32 + (e - 160) % 16], t = (e - 160) / 16;
    } else {
        b = qh[(e - 240) % 4], t = (e - 240) / 4;
    }
    const uint8_t q = (uint8_t)(b * pow3[t]);
    return (q * 3) >> 8;
}

#endif // MINT_QUANT_UNPACK_H
