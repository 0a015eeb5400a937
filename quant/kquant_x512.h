// kquant_x512.h - Q2_K, Q3_K, Q4_K, Q5_K and Q6_K dot products and gemm for AVX-512, one source
// compiled twice: quant/kquant_avx512.c (u8 x s8 dots emulated) and quant/kquant_avx512vnni.c
// (vpdpbusd, vpdpwssd). Included only by those two files.
//
// As for the 32-element blocks (legacy_x512.h), 16 weight rows sit in the 16 dword lanes: each
// row's super-blocks are loaded in 64-byte windows, transposed 16x16, and every super-block
// becomes a panel, lanes = rows:
//   q[64]   levels of elements 4k..4k+3 as unsigned bytes (Q3_K 0..7, Q6_K 0..63, ...), so that
//           dword k of the activation's quants pairs with q[k] for every type;
//   sc[16]  the integer sub-block scales (8 sub-blocks of 32, or 16 of 16);
//   pr[8]   16-bit pairs that meet the Q8_K bsums dword p (bsums 2p, 2p+1) in one vpdpwssd:
//           the mins (Q2_K, Q4_K, Q5_K) or the scales (Q3_K, Q6_K, whose levels carry an offset);
//   d, dmin the f16 super-block scales widened to f32.
// Per super-block and activation row the integer part is exact:
//   isum = sum over sub-blocks of sc * (sum of level * a)        (vpdpbusd, then vpmulld)
//   pair = sum over p of pr . bsums dword p                      (vpdpwssd)
// then, in f32, acc = fma(isum, d_w * d_a, acc) and acc = fma(-pair, dmin_w * d_a, acc) for the
// types with mins; for Q3_K / Q6_K isum -= offset * pair first (offset 4 / 32) and only the first
// fma remains. Every path (one token, tiles, vec_dot = one token on one row) runs this per element
// in super-block order, so they agree bit for bit. (Q6_K's one-token steps, kstep_q6, fold the
// offset into the sub-block sums instead of using pairs: the same integers.)
//
// IQ4_XS (VNNI only) rides the same machinery: its nibbles are indices looked up as the signed
// non-linear levels plus 128 (unsigned, 1..241, what vpdpbusd takes; the emulation's vpmaddubsw
// would saturate on them, so the avx512 level keeps AVX2's kernel), its 8 six-bit scales minus 32
// are the sub-block scales, and the offset 128 comes off as Q3_K's / Q6_K's does (pairs of
// scales against the bsums).
//
// TQ2_0 and TQ1_0 ride it too: their trits 0..2 are the levels (TQ2_0's 2-bit fields in Q2_K's
// layout, TQ1_0's base-3 digits taken out by 16-bit multiplies as quant/dot_ternary_avx2.c
// does), their 8 sub-blocks of 32 have no scale, and the offset 1 (weight = trit - 1) comes off
// as the sum of all 16 bsums (pairs of ones). The integer part of a super-block is exact, as
// the reference's sumi, so one fma per super-block gives the same terms.
//
// The including file defines MINT_LEVEL_NAME (quant/kernels.h), which names the entry points.
#include "quant/simd_avx512.h"
#include "quant/pack.h"
#include "quant/unpack.h"

typedef enum kkind {
    K_Q2,
    K_Q3,
    K_Q4,
    K_Q5,
    K_Q6,
    K_IQ4XS,
    K_TQ2,
    K_TQ1,
    K_IQ3XXS, // the grid i-quants: quant/iquant_x512.h
    K_IQ3S,
    K_IQ2XXS,
    K_IQ2XS,
    K_IQ2S,
} kkind;

typedef struct ktype {
    kkind kind;
    int bs;  // bytes per super-block
    int per; // super-blocks per window (their offsets in it are all 0 mod 4)
    int win; // 64-byte loads per row per window
} ktype;

static const ktype KT_Q2 = {K_Q2, 84, 3, 4};
static const ktype KT_Q3 = {K_Q3, 110, 1, 2};
static const ktype KT_Q4 = {K_Q4, 144, 4, 9};
static const ktype KT_Q5 = {K_Q5, 176, 4, 11};
static const ktype KT_Q6 = {K_Q6, 210, 1, 4};
static const ktype KT_IQ4XS = {K_IQ4XS, 136, 4, 9};
static const ktype KT_TQ2 = {K_TQ2, 66, 1, 2};
static const ktype KT_TQ1 = {K_TQ1, 54, 1, 1};
static const ktype KT_IQ3XXS = {K_IQ3XXS, 98, 1, 2};
static const ktype KT_IQ3S = {K_IQ3S, 110, 1, 2};
static const ktype KT_IQ2XXS = {K_IQ2XXS, 66, 1, 2};
static const ktype KT_IQ2XS = {K_IQ2XS, 74, 1, 2};
static const ktype KT_IQ2S = {K_IQ2S, 82, 1, 2};

// Super-blocks per K chunk of the tile path (panels: 16 rows x KSB x 5.8 KB).
enum { KSB = 4 };

typedef struct kpanel {
    __m512i q[64];  // levels, dword k = elements 4k..4k+3
    __m512i sc[16]; // sub-block scales (int32; the first 8 for Q4_K / Q5_K)
    __m512i pr[8];  // 16-bit pairs against bsums dword p
    __m512 d, dmin; // super-block scales
} kpanel;

// Sub-blocks and the dwords of each.
X512_ALWAYS_INLINE int nsub(ktype T) {
    return T.kind == K_Q4 || T.kind == K_Q5 || T.kind == K_IQ4XS || T.kind == K_TQ2 ||
                   T.kind == K_TQ1 || T.kind == K_IQ3XXS || T.kind == K_IQ3S || T.kind == K_IQ2XXS
               ? 8
               : 16;
}

// ---------------------------------------------------------------------------------------------
// Scales.

// Byte i of each lane as an unsigned / signed int32.
X512_ALWAYS_INLINE __m512i byte_u(__m512i v, int i) {
    return _mm512_and_si512(_mm512_srli_epi32(v, 8 * i), _mm512_set1_epi32(0xFF));
}
X512_ALWAYS_INLINE __m512i byte_s(__m512i v, int i) {
    return _mm512_srai_epi32(_mm512_slli_epi32(v, 24 - 8 * i), 24);
}

// Bytes (2i, 2i+1) of each lane as the 16-bit pair (lo, hi), sign-extended or not.
X512_ALWAYS_INLINE __m512i byte_pair(__m512i v, int i, int sign) {
    const __m512i b0 = sign ? byte_s(v, 2 * i) : byte_u(v, 2 * i);
    const __m512i b1 = sign ? byte_s(v, 2 * i + 1) : byte_u(v, 2 * i + 1);
    return _mm512_or_si512(_mm512_and_si512(b0, _mm512_set1_epi32(0xFFFF)),
                           _mm512_slli_epi32(b1, 16));
}

// v | (h & m): the fields of two registers merged under a mask (one vpternlogd).
X512_ALWAYS_INLINE __m512i merge(__m512i v, __m512i h, int32_t m) {
    return _mm512_ternarylogic_epi32(v, h, _mm512_set1_epi32(m), 0xF8);
}

// Shift left by s bits (right when negative).
X512_ALWAYS_INLINE __m512i shl(__m512i v, int s) {
    return s >= 0 ? _mm512_slli_epi32(v, s) : _mm512_srli_epi32(v, -s);
}

// Q4_K / Q5_K: 8 six-bit scales and mins from the 12 bytes s0|s1|s2 (see mint_k4_scale_min):
// bytes 0..3 of s0 / s1 hold scales / mins 0..3 in their low 6 bits; scales / mins 4..7 are the
// low / high nibbles of s2 with the top 2 bits of s0 / s1 above them.
X512_ALWAYS_INLINE void k4_scales(kpanel *p, __m512i s0, __m512i s1, __m512i s2) {
    const __m512i m6 = _mm512_set1_epi32(0x3F3F3F3F);
    const __m512i sc_lo = _mm512_and_si512(s0, m6), mn_lo = _mm512_and_si512(s1, m6);
    const __m512i sc_hi = merge(_mm512_and_si512(s2, _mm512_set1_epi32(0x0F0F0F0F)),
                                _mm512_srli_epi32(s0, 2), 0x30303030);
    const __m512i mn_hi =
        merge(_mm512_and_si512(_mm512_srli_epi32(s2, 4), _mm512_set1_epi32(0x0F0F0F0F)),
              _mm512_srli_epi32(s1, 2), 0x30303030);
    X512_UNROLL for (int b = 0; b < 8; b++) {
        p->sc[b] = byte_u(b < 4 ? sc_lo : sc_hi, b % 4);
        const __m512i m = byte_u(b < 4 ? mn_lo : mn_hi, b % 4);
        p->pr[b] = _mm512_or_si512(m, _mm512_slli_epi32(m, 16)); // (m_b, m_b) . bsums 2b, 2b+1
    }
}

// Q3_K / Q6_K: 16 signed 8-bit scales in the bytes of v[0..3]; pairs (sc_2p, sc_2p+1).
X512_ALWAYS_INLINE void signed_scales(kpanel *p, const __m512i v[4]) {
    X512_UNROLL for (int k = 0; k < 16; k++) p->sc[k] = byte_s(v[k / 4], k % 4);
    X512_UNROLL for (int q = 0; q < 8; q++) p->pr[q] = byte_pair(v[q / 2], q % 2, 1);
}

// ---------------------------------------------------------------------------------------------
// Panels, per format: kscales_* fills sc, pr, d, dmin; klevel_* is level vector k (tb: the
// transposed window; g: the super-block's first dword). With hi16, Q4_K's odd sub-blocks come
// as (byte & 0xF0), 16 times the level, which saves a shift when the caller scales back.

// Q2_K: scales[16] (low nibble scale, high nibble min), qs[64], d, dmin. Element
// 128n + 32j + l: bits 2j.. of qs byte 32n + l.
X512_ALWAYS_INLINE void kscales_q2_K(kpanel *p, const __m512i *tb, int g) {
    p->d = x512_f16_lo(tb[g + 20]);
    p->dmin = x512_f16_hi(tb[g + 20]);
    X512_UNROLL for (int k = 0; k < 16; k++) {
        p->sc[k] = _mm512_and_si512(byte_u(tb[g + k / 4], k % 4), _mm512_set1_epi32(0xF));
    }
    X512_UNROLL for (int q = 0; q < 8; q++) {
        const __m512i mins =
            _mm512_and_si512(_mm512_srli_epi32(tb[g + q / 2], 4), _mm512_set1_epi32(0x0F0F0F0F));
        p->pr[q] = byte_pair(mins, q % 2, 0);
    }
}
X512_ALWAYS_INLINE __m512i klevel_q2_K(const __m512i *tb, int g, int k) {
    const int e = 4 * k, n = e / 128, j = (e % 128) / 32, l = e % 32;
    return _mm512_and_si512(_mm512_srli_epi32(tb[g + 4 + (32 * n + l) / 4], 2 * j),
                            _mm512_set1_epi32(0x03030303));
}

// Q3_K: hmask[32], qs[64], scales[12] (16 six-bit, biased by 32), d. Level of element
// 128n + 32j + l: bits 2j.. of qs byte 32n + l, plus bit 4n + j of hmask[l] as bit 2.
X512_ALWAYS_INLINE void kscales_q3_K(kpanel *p, const __m512i *tb, int g, const uint8_t *rest) {
    p->d =
        rest ? _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)rest)) : x512_f16_lo(tb[g + 27]);
    p->dmin = _mm512_setzero_ps();
    const __m512i s0 = tb[g + 24], s1 = tb[g + 25], s2 = tb[g + 26];
    const __m512i lo = _mm512_set1_epi32(0x0F0F0F0F);
    __m512i v[4];
    v[0] = merge(_mm512_and_si512(s0, lo), _mm512_slli_epi32(s2, 4), 0x30303030);
    v[1] = merge(_mm512_and_si512(s1, lo), _mm512_slli_epi32(s2, 2), 0x30303030);
    v[2] = merge(_mm512_and_si512(_mm512_srli_epi32(s0, 4), lo), s2, 0x30303030);
    v[3] =
        merge(_mm512_and_si512(_mm512_srli_epi32(s1, 4), lo), _mm512_srli_epi32(s2, 2), 0x30303030);
    X512_UNROLL for (int i = 0; i < 4; i++) v[i] = _mm512_sub_epi8(v[i], _mm512_set1_epi8(32));
    signed_scales(p, v);
}
X512_ALWAYS_INLINE __m512i klevel_q3_K(const __m512i *tb, int g, int k) {
    const int e = 4 * k, n = e / 128, j = (e % 128) / 32, l = e % 32;
    const __m512i q2 = _mm512_and_si512(_mm512_srli_epi32(tb[g + 8 + (32 * n + l) / 4], 2 * j),
                                        _mm512_set1_epi32(0x03030303));
    return merge(q2, shl(tb[g + l / 4], 2 - (4 * n + j)), 0x04040404);
}

// Q4_K: d, dmin, scales[12], qs[128]. Sub-block 2i / 2i+1 are the low / high nibbles of qs
// bytes 32i..32i+31.
X512_ALWAYS_INLINE void kscales_q4_K(kpanel *p, const __m512i *tb, int g) {
    p->d = x512_f16_lo(tb[g]);
    p->dmin = x512_f16_hi(tb[g]);
    k4_scales(p, tb[g + 1], tb[g + 2], tb[g + 3]);
}
X512_ALWAYS_INLINE __m512i klevel_q4_K(const __m512i *tb, int g, int k, int hi16) {
    const int i = k / 16, odd = (k / 8) % 2, jj = k % 8;
    const __m512i v = tb[g + 4 + 8 * i + jj];
    if (!odd) return x512_lo4(v);
    return hi16 ? _mm512_and_si512(v, _mm512_set1_epi8((char)0xF0)) : x512_hi4(v);
}

// Q5_K: as Q4_K with qh[32] before qs: bit b of qh[l] is the 5th bit of sub-block b, element l.
X512_ALWAYS_INLINE __m512i klevel_q5_K(const __m512i *tb, int g, int k) {
    const int i = k / 16, odd = (k / 8) % 2, jj = k % 8;
    const __m512i v = tb[g + 12 + 8 * i + jj], h = tb[g + 4 + jj];
    return odd ? merge(x512_hi4(v), shl(h, 3 - 2 * i), 0x10101010)
               : merge(x512_lo4(v), shl(h, 4 - 2 * i), 0x10101010);
}

// Q6_K: ql[128], qh[64], scales[16] (int8), d. Element 128h + 32t + l: low 4 bits in ql byte
// 64h + 32(t&1) + l (high nibble for t >= 2), high 2 bits in bits 2t.. of qh byte 32h + l.
X512_ALWAYS_INLINE void kscales_q6_K(kpanel *p, const __m512i *tb, int g, const uint8_t *rest) {
    p->d =
        rest ? _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)rest)) : x512_f16_lo(tb[g + 52]);
    p->dmin = _mm512_setzero_ps();
    signed_scales(p, &tb[g + 48]);
}
X512_ALWAYS_INLINE __m512i klevel_q6_K(const __m512i *tb, int g, int k) {
    const int e = 4 * k, h = e / 128, t = (e % 128) / 32, l = e % 32;
    const __m512i ql = tb[g + (64 * h + 32 * (t & 1) + l) / 4];
    const __m512i qh = tb[g + 32 + (32 * h + l) / 4];
    return merge(t < 2 ? x512_lo4(ql) : x512_hi4(ql), shl(qh, 4 - 2 * t), 0x30303030);
}

// IQ4_XS: d, scales_h (dword 0), scales_l[4] (dword 1), qs[128]: sub-block b's 16 bytes hold its
// elements 0..15 in their low nibbles and 16..31 in their high ones. Scale b: nibble b of
// scales_l, bits 2b.. of scales_h above it, minus 32; the pairs (sc_b, sc_b) meet bsums 2b, 2b+1.
X512_ALWAYS_INLINE void kscales_iq4_xs(kpanel *p, const __m512i *tb, int g) {
    p->d = x512_f16_lo(tb[g]);
    p->dmin = _mm512_setzero_ps();
    const __m512i sh = _mm512_srli_epi32(tb[g], 16), sl = tb[g + 1];
    X512_UNROLL for (int b = 0; b < 8; b++) {
        const __m512i lo = _mm512_and_si512(_mm512_srli_epi32(sl, 4 * b), _mm512_set1_epi32(0xF));
        const __m512i hi = _mm512_and_si512(shl(sh, 4 - 2 * b), _mm512_set1_epi32(0x30));
        p->sc[b] = _mm512_sub_epi32(_mm512_or_si512(lo, hi), _mm512_set1_epi32(32));
        p->pr[b] = _mm512_or_si512(_mm512_and_si512(p->sc[b], _mm512_set1_epi32(0xFFFF)),
                                   _mm512_slli_epi32(p->sc[b], 16));
    }
}
X512_ALWAYS_INLINE __m512i klevel_iq4_xs(const __m512i *tb, int g, int k) {
    const int b = k / 8, hi = (k % 8) / 4, jj = k % 4;
    const __m512i v = tb[g + 2 + 4 * b + jj];
    const __m512i lut = _mm512_broadcast_i32x4(
        _mm_xor_si128(_mm_loadu_si128((const __m128i *)(const void *)mint_iq4nl_table()),
                      _mm_set1_epi8((char)0x80)));
    return _mm512_shuffle_epi8(lut, hi ? x512_hi4(v) : x512_lo4(v));
}

// TQ2_0: qs[64] (element 128n + 32j + l: bits 2j.. of byte 32n + l, as Q2_K's qs), d. No
// sub-block scales (ksub skips them); the pairs (1, 1) meet every bsums dword, so pair is the sum
// of the activations, taken off once (the offset 1).
X512_ALWAYS_INLINE void kscales_tq2_0(kpanel *p, const __m512i *tb, int g, const uint8_t *rest) {
    p->d =
        rest ? _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)rest)) : x512_f16_lo(tb[g + 16]);
    p->dmin = _mm512_setzero_ps();
    X512_UNROLL for (int q = 0; q < 8; q++) p->pr[q] = _mm512_set1_epi32(0x00010001);
}
X512_ALWAYS_INLINE __m512i klevel_tq2_0(const __m512i *tb, int g, int k) {
    const int e = 4 * k, n = e / 128, j = (e % 128) / 32, l = e % 32;
    return _mm512_and_si512(_mm512_srli_epi32(tb[g + (32 * n + l) / 4], 2 * j),
                            _mm512_set1_epi32(0x03030303));
}

// TQ1_0: qs[48] (dwords 0..11), qh[4] (dword 12), d (the low half of dword 13). Element e:
// e < 160, trit e / 32 of qs[e % 32]; e < 240, trit (e - 160) / 16 of qs[32 + (e - 160) % 16];
// else trit (e - 240) / 4 of qh[(e - 240) % 4] (quant/blocks.h). So level vector k (elements
// 4k..4k+3) is one trit of one dword: trit k / 8 of dword k % 8 for k < 40, trit (k - 40) / 4
// of dword 8 + (k - 40) % 4 for k < 60, trit k - 60 of dword 12. The trit t of a byte b is
// ((b * 3^t mod 256) * 3) >> 8: the even and odd bytes of each 16-bit lane multiplied apart.
X512_ALWAYS_INLINE void kscales_tq1_0(kpanel *p, const __m512i *tb, int g, const uint8_t *rest) {
    p->d =
        rest ? _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)rest)) : x512_f16_lo(tb[g + 13]);
    p->dmin = _mm512_setzero_ps();
    X512_UNROLL for (int q = 0; q < 8; q++) p->pr[q] = _mm512_set1_epi32(0x00010001);
}
X512_ALWAYS_INLINE __m512i klevel_tq1_0(const __m512i *tb, int g, int k) {
    static const short pow3[5] = {1, 3, 9, 27, 81};
    const int dw = k < 40 ? k % 8 : k < 60 ? 8 + (k - 40) % 4 : 12;
    const int t = k < 40 ? k / 8 : k < 60 ? (k - 40) / 4 : k - 60;
    const __m512i b = tb[g + dw], pw = _mm512_set1_epi16(pow3[t]);
    const __m512i lo = _mm512_set1_epi16(0x00FF), three = _mm512_set1_epi16(3);
    const __m512i even = _mm512_slli_epi16(_mm512_mullo_epi16(_mm512_and_si512(b, lo), pw), 8);
    const __m512i odd = _mm512_andnot_si512(lo, _mm512_mullo_epi16(_mm512_andnot_si512(lo, b), pw));
    return _mm512_or_si512(_mm512_mulhi_epu16(even, three),
                           _mm512_slli_epi16(_mm512_mulhi_epu16(odd, three), 8));
}

#include "quant/iquant_x512.h"

// rest: the 16 f16 d of a packed Q3_K / Q6_K / TQ2_0 / TQ1_0 super-block (quant/pack.h), NULL for a
// window.
X512_ALWAYS_INLINE void kscales(ktype T, kpanel *p, const __m512i *tb, int g, const uint8_t *rest) {
    switch (T.kind) {
    case K_Q2:
        kscales_q2_K(p, tb, g);
        break;
    case K_Q3:
        kscales_q3_K(p, tb, g, rest);
        break;
    case K_Q4:
    case K_Q5:
        kscales_q4_K(p, tb, g);
        break;
    case K_Q6:
        kscales_q6_K(p, tb, g, rest);
        break;
    case K_IQ4XS:
        kscales_iq4_xs(p, tb, g);
        break;
    case K_TQ2:
        kscales_tq2_0(p, tb, g, rest);
        break;
    case K_TQ1:
        kscales_tq1_0(p, tb, g, rest);
        break;
    default: // the grid i-quants build whole panels (kiq_panel)
        break;
    }
}

X512_ALWAYS_INLINE __m512i klevel(ktype T, const __m512i *tb, int g, int k, int hi16) {
    switch (T.kind) {
    case K_Q2:
        return klevel_q2_K(tb, g, k);
    case K_Q3:
        return klevel_q3_K(tb, g, k);
    case K_Q4:
        return klevel_q4_K(tb, g, k, hi16);
    case K_Q5:
        return klevel_q5_K(tb, g, k);
    case K_IQ4XS:
        return klevel_iq4_xs(tb, g, k);
    case K_TQ2:
        return klevel_tq2_0(tb, g, k);
    case K_TQ1:
        return klevel_tq1_0(tb, g, k);
    default:
        return klevel_q6_K(tb, g, k);
    }
}

// The panel of super-block i of a window, for the tiles.
X512_ALWAYS_INLINE void make_kpanel(ktype T, kpanel *p, const __m512i *tb, int i,
                                    const uint8_t *rest) {
    const __m512i *sbp = tb + i * T.bs / 4; // super-block offsets in a window are 0 mod 4
    if (kiq(T)) {
        kiq_panel(T, p, sbp);
        return;
    }
    kscales(T, p, sbp, 0, rest);
    X512_UNROLL for (int k = 0; k < 64; k++) p->q[k] = klevel(T, sbp, 0, k, 0);
}

// Loads and transposes the window of super-blocks b .. b + T.per - 1 of rows 0..nr-1 (inline
// for one token, out of line for the tiles).
X512_ALWAYS_INLINE void load_kwindow(int out_of_line, ktype T, __m512i *tb, const uint8_t *w,
                                     size_t w_stride, int nr, int64_t b, size_t row_bytes) {
    if (out_of_line)
        x512_load_window_call(tb, w, w_stride, nr, (size_t)b * T.bs, row_bytes, T.win);
    else
        x512_load_window(tb, w, w_stride, nr, (size_t)b * T.bs, row_bytes, T.win);
}

// ---------------------------------------------------------------------------------------------
// Dot products.

// Sub-block sb of one super-block for C activation rows: s = sum of level * a, then
// isum += sc * s (into isum16 for Q4_K's odd sub-blocks taken as 16 * level).
X512_ALWAYS_INLINE void ksub(ktype T, int C, const kpanel *p, const __m512i *tb, int g,
                             const mint_block_q8_K *const *ar, int64_t b, int sb, int hi16,
                             __m512i *isum, __m512i *isum16) {
    const int dps = 64 / nsub(T);
    __m512i s[8];
    X512_UNROLL for (int c = 0; c < C; c++) s[c] = _mm512_setzero_si512();
    X512_UNROLL for (int jj = 0; jj < dps; jj++) {
        const int k = sb * dps + jj;
        const __m512i wq = tb ? klevel(T, tb, g, k, hi16) : p->q[k];
        X512_UNROLL for (int c = 0; c < C; c++) {
            s[c] = x512_dot_u8s8(s[c], wq, x512_bcast32(ar[c][b].qs + 4 * k));
        }
    }
    X512_UNROLL for (int c = 0; c < C; c++) {
        if (T.kind == K_TQ2 || T.kind == K_TQ1) { // no sub-block scales
            isum[c] = _mm512_add_epi32(isum[c], s[c]);
            continue;
        }
        const __m512i t = _mm512_mullo_epi32(s[c], p->sc[sb]);
        if (hi16 && sb % 2)
            isum16[c] = _mm512_add_epi32(isum16[c], t);
        else
            isum[c] = _mm512_add_epi32(isum[c], t);
    }
}

// C activation rows against one super-block (b of each row ar[c]): acc[c] += its terms. The
// levels come from the panel p, or (tb != NULL, one token) straight from the transposed window
// at dword g, skipping the panel's store and reload; under VNNI Q4_K then takes its odd
// sub-blocks as 16 * level into a second sum that is shifted back once (exact: every term is a
// multiple of 16).
X512_ALWAYS_INLINE void kstep(ktype T, int C, const kpanel *p, const __m512i *tb, int g,
                              const mint_block_q8_K *const *ar, int64_t b, __m512 *acc) {
    const int ns = nsub(T);
#if defined(__AVX512VNNI__)
    const int hi16 = tb && T.kind == K_Q4;
#else
    const int hi16 = 0;
#endif
    __m512i isum[8], isum16[8];
    X512_UNROLL for (int c = 0; c < C; c++) {
        isum[c] = _mm512_setzero_si512();
        isum16[c] = _mm512_setzero_si512();
    }
    // Unrolled when the levels are built here (their shifts depend on the sub-block), a plain
    // loop over a panel.
    if (tb) {
        X512_UNROLL for (int sb = 0; sb < ns; sb++)
            ksub(T, C, p, tb, g, ar, b, sb, hi16, isum, isum16);
    } else {
        for (int sb = 0; sb < ns; sb++) ksub(T, C, p, tb, g, ar, b, sb, hi16, isum, isum16);
    }
    X512_UNROLL for (int c = 0; c < C; c++) {
        if (hi16) isum[c] = _mm512_add_epi32(isum[c], _mm512_srai_epi32(isum16[c], 4));
        const mint_block_q8_K *blk = &ar[c][b];
        __m512i pair = _mm512_setzero_si512();
        X512_UNROLL for (int q = 0; q < 8; q++) {
            pair = x512_dot_s16(pair, p->pr[q], x512_bcast32(blk->bsums + 2 * q));
        }
        const __m512 da = x512_bcastf(&blk->d);
        if (kiq(T)) { // the reference's unfused steps (quant/iquant_x512.h)
            isum[c] = _mm512_sub_epi32(isum[c], _mm512_slli_epi32(pair, kiq_shift(T)));
            acc[c] = _mm512_add_ps(
                acc[c], _mm512_mul_ps(_mm512_mul_ps(p->d, da), _mm512_cvtepi32_ps(isum[c])));
        } else if (T.kind == K_Q3 || T.kind == K_Q6 || T.kind == K_IQ4XS || T.kind == K_TQ2 ||
                   T.kind == K_TQ1) {
            // offset 4, 32, 128 or 1
            const int sh = T.kind == K_Q3 ? 2 : T.kind == K_Q6 ? 5 : T.kind == K_IQ4XS ? 7 : 0;
            isum[c] = _mm512_sub_epi32(isum[c], _mm512_slli_epi32(pair, sh));
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[c]), _mm512_mul_ps(p->d, da), acc[c]);
        } else {
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[c]), _mm512_mul_ps(p->d, da), acc[c]);
            acc[c] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(pair), _mm512_mul_ps(p->dmin, da), acc[c]);
        }
    }
}

// Q6_K, one token or a few (C <= 4 columns): the levels straight from the super-block's vectors
// tb (a transposed window or a packed body), the same exact isum as kstep in fewer instructions
// (a memory-bound stream is limited by instructions per byte; a few columns are compute-bound):
//   - the vectors are read in address order, each qh vector once with the two ql vectors that
//     share its elements (levels t = 0..3 of elements l..l+3), not once per level;
//   - the offset 32 is folded into each sub-block's start: s = -32 * bsums[sb] broadcast, then
//     s += level . a, so sc * s = sc * sum (level - 32) * a and no scale pairs are built;
//   - each sub-block scale is extracted next to its multiply instead of all up front in a panel,
//     which GCC spilled.
// Integer sums are exact in any order, so the bits are kstep's. Against kstep with the same
// prefetch, from DRAM on one thread: 1.02 times as fast for one token, 1.1 for 2 columns, 1.17
// for 4.
X512_ALWAYS_INLINE void kstep_q6(int C, const __m512i *tb, __m512 d,
                                 const mint_block_q8_K *const *ar, int64_t b, __m512 *acc) {
    _Alignas(64) int32_t off[4][16];
    X512_UNROLL for (int c = 0; c < C; c++) {
        const __m512i bs =
            _mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)ar[c][b].bsums));
        _mm512_store_si512(off[c],
                           _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(bs, 5)));
    }
    // Read back from memory (vpbroadcastd loads): kept in a register, GCC would extract each
    // dword with shuffles instead.
    const int32_t(*offp)[16] = off;
    __asm__("" : "+r"(offp));
    const __m512i m30 = _mm512_set1_epi32(0x30303030);
    __m512i isum[4];
    X512_UNROLL for (int c = 0; c < C; c++) isum[c] = _mm512_setzero_si512();
    X512_UNROLL for (int h = 0; h < 2; h++) {
        X512_UNROLL for (int half = 0; half < 2; half++) {
            // Sub-blocks 8h + 2t + half, t = 0..3: elements 128h + 32t + 16half .. + 15.
            __m512i s[4][4];
            X512_UNROLL for (int t = 0; t < 4; t++) {
                X512_UNROLL for (int c = 0; c < C; c++) s[t][c] =
                    _mm512_set1_epi32(offp[c][8 * h + 2 * t + half]);
            }
            X512_UNROLL for (int j = 0; j < 4; j++) {
                const int l8 = 4 * half + j; // dword of the 32 elements of each t
                const __m512i l0 = tb[16 * h + l8], l1 = tb[16 * h + 8 + l8];
                const __m512i qh = tb[32 + 8 * h + l8];
                __m512i v[4];
                v[0] = merge(x512_lo4(l0), _mm512_slli_epi32(qh, 4), 0x30303030);
                v[1] = merge(x512_lo4(l1), _mm512_slli_epi32(qh, 2), 0x30303030);
                v[2] = _mm512_ternarylogic_epi32(x512_hi4(l0), qh, m30, 0xF8);
                v[3] = merge(x512_hi4(l1), _mm512_srli_epi32(qh, 2), 0x30303030);
                X512_UNROLL for (int t = 0; t < 4; t++) {
                    const int k = 32 * h + 8 * t + l8;
                    X512_UNROLL for (int c = 0; c < C; c++) s[t][c] =
                        x512_dot_u8s8(s[t][c], v[t], x512_bcast32(ar[c][b].qs + 4 * k));
                }
            }
            X512_UNROLL for (int t = 0; t < 4; t++) {
                const int sb = 8 * h + 2 * t + half;
                const __m512i sc = byte_s(tb[48 + sb / 4], sb % 4);
                X512_UNROLL for (int c = 0; c < C; c++) isum[c] =
                    _mm512_add_epi32(isum[c], _mm512_mullo_epi32(s[t][c], sc));
            }
        }
    }
    X512_UNROLL for (int c = 0; c < C; c++) {
        const __m512 da = x512_bcastf(&ar[c][b].d);
        acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[c]), _mm512_mul_ps(d, da), acc[c]);
    }
}

// Q6_K's d: from the packed rest, or the low f16 of dword 52 of a window.
X512_ALWAYS_INLINE __m512 kq6_d(const __m512i *tb, const uint8_t *rest) {
    return rest ? _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)rest)) : x512_f16_lo(tb[52]);
}

// Packed Q6_K streams: as x512_prefetch_ahead, but 12 KiB ahead (3.7 super-blocks of 16 rows)
// instead of 2 KiB, less than one (3360 bytes), which left too little time for DRAM's latency.
// One thread, a TinyLlama-shaped token from DRAM (huge pages, as the repacker maps them),
// medians of interleaved rounds against the old kernel: 2 KiB 1.02-1.05 times its speed, 4 to
// 16 KiB 1.1-1.45 (8 and 12 KiB best, within noise of each other), 24 KiB 1.1, 48 KiB 0.87;
// the gain is largest when other processes load the machine. It stays a loop: the same 53
// prefetches unrolled into one burst ran at 0.7-0.9 times the old speed, spread over the
// super-block's steps at 0.9-1.0. Later passes over a group (several columns) find it in cache
// and skip it.
#define KQ6_PF_AHEAD 12288
X512_ALWAYS_INLINE void kq6_prefetch(const void *p) {
    const char *q = (const char *)p + KQ6_PF_AHEAD;
    for (size_t o = 0; o < 52 * 64 + 32; o += 64) _mm_prefetch(q + o, _MM_HINT_T0);
}

// One token: 16 rows at a time through their windows, the sums in one register per group.
X512_ALWAYS_INLINE void kgemv(ktype T, int64_t n, const uint8_t *w, size_t w_stride, int nr,
                              const void *a, float *y) {
    const int64_t nb = n / MINT_QK_K;
    const size_t row_bytes = (size_t)nb * T.bs;
    const mint_block_q8_K *ar[1] = {a};
    for (int r0 = 0; r0 < nr; r0 += 16) {
        const int rows = nr - r0 < 16 ? nr - r0 : 16;
        __m512 acc[1] = {_mm512_setzero_ps()};
        const uint8_t *wr = w + (size_t)r0 * w_stride;
        for (int64_t b = 0; b < nb; b += T.per) {
            __m512i tb[176];
            load_kwindow(0, T, tb, wr, w_stride, rows, b, row_bytes);
            X512_UNROLL for (int i = 0; i < T.per; i++) { // constant offsets into tb
                if (b + i >= nb) break;
                // A slice per super-block (not per window): the prefetches stay spread out.
                if (r0 + 16 < nr)
                    x512_prefetch_slice(wr + 16 * w_stride, 16 * w_stride, (int)(b + i), (int)nb);
                const __m512i *sbp = tb + i * T.bs / 4;
                if (T.kind == K_Q6) {
                    kstep_q6(1, sbp, kq6_d(sbp, NULL), ar, b + i, acc);
                    continue;
                }
                if (kiq(T)) { // whole panels: their levels are made a group at a time
                    kpanel p;
                    make_kpanel(T, &p, tb, i, NULL);
                    kstep(T, 1, &p, NULL, 0, ar, b + i, acc);
                    continue;
                }
                kpanel p; // scales only: the levels come from the window
                kscales(T, &p, sbp, 0, NULL);
                kstep(T, 1, &p, sbp, 0, ar, b + i, acc);
            }
        }
        _mm512_mask_storeu_ps(y + r0, x512_mask16(rows), kiq_final(T, acc[0]));
    }
}

// A packed super-block (quant/pack.h): its body, the same vectors a window's transpose gives
// (bs / 4 of them), and for Q3_K / Q6_K / TQ2_0 / TQ1_0 its rest, the 32 bytes of d.
X512_ALWAYS_INLINE int kpk_nd(ktype T) {
    return T.bs / 4;
}
X512_ALWAYS_INLINE const __m512i *kpk_body(ktype T, const uint8_t *g, int64_t nb, int64_t b) {
    return (const __m512i *)(g + mint_pack_body_at(kpk_nd(T), T.bs % 4, nb, b));
}
X512_ALWAYS_INLINE const uint8_t *kpk_rest(ktype T, const uint8_t *g, int64_t nb, int64_t b) {
    return T.bs % 4 ? g + mint_pack_rest_at(kpk_nd(T), T.bs % 4, nb, b) : NULL;
}

// Columns c0 .. c0 + C - 1 (C <= 8, fixed at compile time) of one packed 16-row group g: each
// super-block's scales are decoded once and its levels loaded as they are, for every column (in
// steps of up to 4, whose sums fit the registers). Per column these are the steps of one token
// (kstep), so each column gets the bits it would get alone.
X512_ALWAYS_INLINE void kgroup_pass(ktype T, int C, const uint8_t *g, int64_t nb, const uint8_t *a,
                                    size_t a_stride, int c0, float *y, size_t y_stride,
                                    __mmask16 rm) {
    const mint_block_q8_K *ar[8];
    __m512 acc[8];
    X512_UNROLL for (int c = 0; c < C; c++) {
        ar[c] = (const mint_block_q8_K *)(a + (size_t)(c0 + c) * a_stride);
        acc[c] = _mm512_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++) {
        const __m512i *sbp = kpk_body(T, g, nb, b);
        if (T.kind == K_Q6) {
            if (c0 == 0) kq6_prefetch(sbp); // later passes find the group in cache
            const __m512 d = kq6_d(sbp, kpk_rest(T, g, nb, b));
            X512_UNROLL for (int c = 0; c < C; c += 4)
                kstep_q6(C - c < 4 ? C - c : 4, sbp, d, ar + c, b, acc + c);
            continue;
        }
        x512_prefetch_ahead(sbp, (size_t)kpk_nd(T) * 64 + (T.bs % 4 ? 32 : 0));
        kpanel p; // scales only: the levels come from the packed vectors
        kscales(T, &p, sbp, 0, kpk_rest(T, g, nb, b));
        X512_UNROLL for (int c = 0; c < C; c += 4)
            kstep(T, C - c < 4 ? C - c : 4, &p, sbp, 0, ar + c, b, acc + c);
    }
    X512_UNROLL for (int c = 0; c < C; c++)
        _mm512_mask_storeu_ps(y + (size_t)(c0 + c) * y_stride, rm, kiq_final(T, acc[c]));
}

// One token, or a few (nc <= KSMALL_COLS: a step of several sequences, a speculative check), over
// packed rows (w: the first group, gb bytes per group), each group one sequential stream read
// once for all the columns, in passes of 8, 4, 2 and 1 columns that find the group in L1/L2.
enum { KSMALL_COLS = 16 };
X512_ALWAYS_INLINE void kgemv_packed(ktype T, int64_t n, const uint8_t *w, size_t gb, int nr,
                                     const uint8_t *a, size_t a_stride, int nc, float *y,
                                     size_t y_stride) {
    const int64_t nb = n / MINT_QK_K;
    for (int r0 = 0; r0 < nr; r0 += 16) {
        const int rows = nr - r0 < 16 ? nr - r0 : 16;
        const __mmask16 rm = x512_mask16(rows);
        const uint8_t *g = w + (size_t)(r0 / 16) * gb;
        float *yr = y + r0;
        int c0 = 0;
        for (; nc - c0 >= 4; c0 += 4) kgroup_pass(T, 4, g, nb, a, a_stride, c0, yr, y_stride, rm);
        if (nc - c0 >= 2) {
            kgroup_pass(T, 2, g, nb, a, a_stride, c0, yr, y_stride, rm);
            c0 += 2;
        }
        if (nc - c0 >= 1) kgroup_pass(T, 1, g, nb, a, a_stride, c0, yr, y_stride, rm);
    }
}

// C columns (activation rows from a, ncols valid; the rest repeat the last one and are not
// stored) against panels of super-blocks k0..k0+nk-1; acc starts at 0 or at y.
X512_ALWAYS_INLINE void kmicro(ktype T, int C, const kpanel *pan, int nk, const uint8_t *a,
                               size_t a_stride, int64_t k0, int ncols, float *y, size_t y_stride,
                               __mmask16 rm, int first, int last) {
    const mint_block_q8_K *ar[8];
    __m512 acc[8];
    X512_UNROLL for (int c = 0; c < C; c++) {
        ar[c] = (const mint_block_q8_K *)(a + (size_t)(c < ncols ? c : ncols - 1) * a_stride);
        // Columns past ncols are not stored, and their y may lie past the end of the buffer.
        acc[c] = first || c >= ncols ? _mm512_setzero_ps()
                                     : _mm512_maskz_loadu_ps(rm, y + (size_t)c * y_stride);
    }
    for (int j = 0; j < nk; j++) kstep(T, C, &pan[j], NULL, 0, ar, k0 + j, acc);
    X512_UNROLL for (int c = 0; c < C; c++) {
        if (c < ncols)
            _mm512_mask_storeu_ps(y + (size_t)c * y_stride, rm,
                                  last ? kiq_final(T, acc[c]) : acc[c]);
    }
}

// The gemm contract: one token goes to kgemv (kgemv_packed, which also takes up to KSMALL_COLS
// tokens over packed rows: panels do not repay their building for a few columns); a batch is cut
// into K chunks of KSB super-blocks; each 16-row group's panels are built once per chunk and 6
// columns at a time run against them. With `packed`, w holds packed groups and w_stride is the
// bytes of one group.
X512_ALWAYS_INLINE void kgemm(ktype T, int packed, int64_t n, const void *vw, size_t w_stride,
                              int nr, const void *va, size_t a_stride, int nc, float *y,
                              size_t y_stride) {
    const uint8_t *w = vw, *a = va;
    if (nc == 1 && !packed) {
        kgemv(T, n, w, w_stride, nr, a, y);
        return;
    }
    if (packed && nc <= KSMALL_COLS) {
        kgemv_packed(T, n, w, w_stride, nr, a, a_stride, nc, y, y_stride);
        return;
    }
    const int64_t nb = n / MINT_QK_K;
    const size_t row_bytes = (size_t)nb * T.bs;
    kpanel pan[KSB];
    for (int64_t k0 = 0; k0 < nb; k0 += KSB) {
        const int nk = (int)(nb - k0 < KSB ? nb - k0 : KSB);
        for (int r0 = 0; r0 < nr; r0 += 16) {
            const int rows = nr - r0 < 16 ? nr - r0 : 16;
            if (packed) {
                const uint8_t *g = w + (size_t)(r0 / 16) * w_stride;
                for (int j = 0; j < nk; j++)
                    make_kpanel(T, &pan[j], kpk_body(T, g, nb, k0 + j), 0,
                                kpk_rest(T, g, nb, k0 + j));
            } else {
                const uint8_t *wr = w + (size_t)r0 * w_stride;
                for (int j = 0; j < nk; j += T.per) {
                    __m512i tb[176];
                    load_kwindow(1, T, tb, wr, w_stride, rows, k0 + j, row_bytes);
                    for (int i = 0; i < T.per && j + i < nk; i++)
                        make_kpanel(T, &pan[j + i], tb, i, NULL);
                }
            }
            for (int c = 0; c < nc; c += 6)
                kmicro(T, 6, pan, nk, a + (size_t)c * a_stride, a_stride, k0,
                       nc - c < 6 ? nc - c : 6, y + (size_t)c * y_stride + r0, y_stride,
                       x512_mask16(rows), k0 == 0, k0 + nk == nb);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Entry points (quant/simd_avx512.h: X512_KERNELS).

// y = tile of Q2_K rows . Q8_K activations; *s = one of them.
X512_KERNELS(q2_K_q8_K, kgemm, KT_Q2)
// Q3_K . Q8_K.
X512_KERNELS(q3_K_q8_K, kgemm, KT_Q3)
// Q4_K . Q8_K.
X512_KERNELS(q4_K_q8_K, kgemm, KT_Q4)
// Q5_K . Q8_K.
X512_KERNELS(q5_K_q8_K, kgemm, KT_Q5)
// Q6_K . Q8_K.
X512_KERNELS(q6_K_q8_K, kgemm, KT_Q6)
// TQ2_0 . Q8_K.
X512_KERNELS(tq2_0_q8_K, kgemm, KT_TQ2)
// TQ1_0 . Q8_K.
X512_KERNELS(tq1_0_q8_K, kgemm, KT_TQ1)
// IQ3_XXS, IQ3_S, IQ2_XXS, IQ2_XS, IQ2_S . Q8_K (quant/iquant_x512.h): no packed layout (their
// panels come from windows; a group's levels cost gathers either way).
#define KIQ_KERNELS(name, T)                                                                       \
    void MINT_LEVEL_NAME(gemm_##name)(int64_t n, const void *restrict w, size_t w_stride, int nr,  \
                                      const void *restrict a, size_t a_stride, int nc,             \
                                      float *restrict y, size_t y_stride) {                        \
        kgemm(T, 0, n, w, w_stride, nr, a, a_stride, nc, y, y_stride);                             \
    }                                                                                              \
    void MINT_LEVEL_NAME(vec_dot_##name)(int64_t n, float *restrict s, const void *restrict w,     \
                                         const void *restrict a) {                                 \
        MINT_LEVEL_NAME(gemm_##name)(n, w, 0, 1, a, 0, 1, s, 1);                                   \
    }
KIQ_KERNELS(iq3_xxs_q8_K, KT_IQ3XXS)
KIQ_KERNELS(iq3_s_q8_K, KT_IQ3S)
KIQ_KERNELS(iq2_xxs_q8_K, KT_IQ2XXS)
KIQ_KERNELS(iq2_xs_q8_K, KT_IQ2XS)
KIQ_KERNELS(iq2_s_q8_K, KT_IQ2S)
#if defined(__AVX512VNNI__)
// IQ4_XS . Q8_K (VNNI only: see the file comment).
X512_KERNELS(iq4_xs_q8_K, kgemm, KT_IQ4XS)
#endif
