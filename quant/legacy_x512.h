// legacy_x512.h - Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, MXFP4 and IQ4_NL dot products and gemm for AVX-512,
// as one source compiled twice: quant/legacy_avx512.c (vpmaddubsw emulation of u8 x s8 dots) and
// quant/legacy_avx512vnni.c (vpdpbusd). Included only by those two files.
//
// Layout: "lanes = rows". Sixteen weight rows are loaded in 64-byte windows that start at a
// block, and a 16x16 dword transpose puts dword k of every row's window into lane r of one
// register. From those registers each block yields, lanes = rows:
//   q[8]  its 32 levels as unsigned bytes, dword j = elements 4j..4j+3 (low nibbles of qs bytes
//         0..15 are elements 0..15, high nibbles 16..31, plus the 5th bit for Q5_x);
//   d, m  its f16 scale (and offset) widened to f32 (MXFP4: its E8M0 half-scale).
// MXFP4's codes become levels by one vpshufb from the E2M1 table (quant/unpack.h) plus 12, so
// that they are unsigned (0..24) like Q4_0's nibbles, and the offset 12 is taken off as below.
// Dword j of an activation block's quants is then the same for all 16 rows: one broadcast, one
// vpdpbusd advances 16 exact block sums by 4 products. The unsigned levels carry an offset
// (Q4_0: 8, Q5_0: 16, MXFP4: 12, Q8_0 under VNNI: 128 after flipping the sign bit), subtracted as
// offset * sum(activation block), which is computed once per activation block; that form is
// also immune to GCC 12's miscompilation of (u8 - k) * s8 sums (see dot_ref.c).
//
// Float order of one output element, the same in every path: acc = 0, then for each block in
// order acc = fma((float)sumi, d_w * d_a, acc) (and, for Q4_1/Q5_1, acc = fma(m_w, s_a, acc)).
// For MXFP4 d_w is a power of two, so d_w * d_a is the reference's d_a * d_w bit for bit.
//
// IQ4_NL (Q4_0's layout) looks its nibbles up as its signed levels (-127..113, quant/unpack.h)
// and from there is multiplied as Q8_0's signed bytes are: w ^ 0x80 with the offset 128 under
// VNNI, the split of dot_w in the emulation.
// vec_dot is the one-token path with one row, so it agrees with gemm by construction.
//
// The including file defines MINT_LEVEL_NAME (quant/kernels.h), which names the entry points.
#include "quant/simd_avx512.h"
#include "quant/pack.h"
#include "quant/unpack.h"

// ---------------------------------------------------------------------------------------------
// Block formats as constants (each kernel is instantiated with one of these, and the compiler
// folds the fields).

typedef struct ltype {
    int bs;     // bytes per block
    int q_off;  // offset of qs (16 nibble bytes, or 32 int8 for Q8_0)
    int m_off;  // offset of the f16 m (Q4_1, Q5_1), 0 if none
    int h_off;  // offset of the 32 5th bits (Q5_0, Q5_1), 0 if none
    int wide;   // 1: Q8_0 (signed bytes) instead of nibbles
    int offset; // level offset subtracted as offset * sum(a)
    int per;    // whole blocks in one window
    int win;    // 64-byte loads per row per window
    int mx;     // 1: MXFP4 (E8M0 exponent byte first, nibbles are E2M1 codes looked up)
    int nl;     // 1: IQ4_NL (nibbles are indices of signed levels, multiplied as Q8_0's bytes)
} ltype;

#if defined(__AVX512VNNI__)
#define Q8_OFFSET 128 // vpdpbusd takes w ^ 0x80 = w + 128 as unsigned
#else
#define Q8_OFFSET 0 // the emulation multiplies the signed bytes directly (dot_w)
#endif

static const ltype LT_Q4_0 = {18, 2, 0, 0, 0, 8, 7, 2, 0, 0};
static const ltype LT_Q4_1 = {20, 4, 2, 0, 0, 0, 6, 2, 0, 0};
static const ltype LT_Q5_0 = {22, 6, 0, 2, 0, 16, 5, 2, 0, 0};
static const ltype LT_Q5_1 = {24, 8, 2, 4, 0, 0, 5, 2, 0, 0};
static const ltype LT_Q8_0 = {34, 2, 0, 0, 1, Q8_OFFSET, 5, 3, 0, 0};
static const ltype LT_MXFP4 = {17, 1, 0, 0, 0, 12, 7, 2, 1, 0};
static const ltype LT_IQ4_NL = {18, 2, 0, 0, 0, Q8_OFFSET, 7, 2, 0, 1};

// MXFP4's E2M1 table (quant/unpack.h: mint_mxfp4_table, the values doubled) plus the offset 12:
// the levels 0..24 are unsigned bytes, what vpdpbusd (and vpmaddubsw) multiply without overflow.
static const int8_t MX_LUT[16] = {12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0};

// Blocks per K chunk of the tile path and activation rows per column chunk: the panels
// (2 x 16 rows x KB blocks x 640 bytes) and the activation block data stay in L1/L2; together
// about 80 KB of stack in gemm (the thread pool's threads have the default 8 MB). One token uses
// K chunks of GEMV_KB blocks (one chunk for any row up to 73K elements).
enum { KB = 32, CC = 64, CW = CC + 8, GEMV_KB = KB * CW };

// One block of 16 rows, lanes = rows.
typedef struct panel {
    __m512i q[8]; // levels of elements 4j..4j+3 (Q8_0: the signed bytes, or w ^ 0x80 under VNNI)
    __m512 d;     // d_w
    __m512 m;     // m_w (Q4_1, Q5_1)
} panel;

// Per activation block: what the block dot needs besides the quants. Entry j * cw + c is block j
// of the chunk, column c: block-major, so that the 8 columns of a micro-tile sit at constant
// offsets from one pointer (cw = CW for the tiles, whose last 8 slots repeat the last column so
// that edge micro-tiles read valid data; cw = 1 for the single column of one token).
typedef struct act_info {
    int32_t off[KB * CW]; // -offset * sum(a.qs)
    float d[KB * CW];     // d_a
    float s[KB * CW];     // s_a (Q8_1)
} act_info;

// ---------------------------------------------------------------------------------------------
// From transposed windows to block panels.

// The dword of each lane that starts at byte `off` of the window (MXFP4's 17-byte blocks put
// it at any offset mod 4, the other types at an even one).
X512_ALWAYS_INLINE __m512i dword_at(const __m512i *tb, int off) {
    if (off % 4 == 0) return tb[off / 4];
    if (off % 4 == 2) return x512_shift16(tb[off / 4], tb[off / 4 + 1]);
    return _mm512_or_si512(_mm512_srli_epi32(tb[off / 4], 8 * (off % 4)),
                           _mm512_slli_epi32(tb[off / 4 + 1], 32 - 8 * (off % 4)));
}

// MXFP4's E8M0 exponents (0..255, one per dword lane) as f32 half-scales 2^(e - 128), bit for bit
// mint_e8m0_half_to_f32 (quant/fp16.h): (e - 1) << 23, and the subnormals 2^-128, 2^-127 for
// e = 0, 1.
X512_ALWAYS_INLINE __m512 e8m0_half(__m512i e) {
    const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
    const __m512i sub = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
    const __mmask16 small = _mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(2));
    return _mm512_castsi512_ps(_mm512_mask_mov_epi32(normal, small, sub));
}

// The levels of 64 E2M1 codes (bytes 0..15), as MX_LUT gives them.
X512_ALWAYS_INLINE __m512i mx_levels(__m512i codes) {
    const __m512i lut =
        _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)MX_LUT));
    return _mm512_shuffle_epi8(lut, codes);
}

// IQ4_NL's levels of 64 indices (bytes 0..15), as the bytes dot_w multiplies: the signed level,
// or under VNNI the level ^ 0x80 (level + 128, unsigned).
X512_ALWAYS_INLINE __m512i nl_levels(__m512i idx) {
    const __m512i lut =
        _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)mint_iq4nl_table()));
    const __m512i v = _mm512_shuffle_epi8(lut, idx);
    return Q8_OFFSET ? _mm512_xor_si512(v, _mm512_set1_epi8((char)0x80)) : v;
}

// The levels of a 4-bit type's 64 nibble values as its panel holds them.
X512_ALWAYS_INLINE __m512i nibble_levels(ltype T, __m512i v) {
    return T.mx ? mx_levels(v) : T.nl ? nl_levels(v) : v;
}

X512_ALWAYS_INLINE __m512 f16_at(const __m512i *tb, int off) {
    return off % 4 == 0 ? x512_f16_lo(tb[off / 4]) : x512_f16_hi(tb[off / 4]);
}

// Byte i of entry x is 16 when bit i of x is set: a 4-bit group of qh spread over 4 bytes by
// vpermd (which reads only the low 4 bits of each index).
static const int32_t HBIT_LUT[16] = {
    0x00000000, 0x00000010, 0x00001000, 0x00001010, 0x00100000, 0x00100010, 0x00101000, 0x00101010,
    0x10000000, 0x10000010, 0x10001000, 0x10001010, 0x10100000, 0x10100010, 0x10101000, 0x10101010,
};

// The panel of block i of a window (tb: the transposed window, 16 * win dwords per lane).
X512_ALWAYS_INLINE void make_panel(ltype T, const __m512i *tb, int i, panel *p) {
    const int o = i * T.bs;
    if (T.mx) { // the exponent byte at o
        p->d = e8m0_half(
            _mm512_and_si512(_mm512_srli_epi32(tb[o / 4], 8 * (o % 4)), _mm512_set1_epi32(0xFF)));
        p->m = _mm512_setzero_ps();
    } else {
        p->d = f16_at(tb, o);
        p->m = T.m_off ? f16_at(tb, o + T.m_off) : _mm512_setzero_ps();
    }
    if (T.wide) {
        X512_UNROLL for (int j = 0; j < 8; j++) {
            const __m512i v = dword_at(tb, o + T.q_off + 4 * j);
            p->q[j] = Q8_OFFSET ? _mm512_xor_si512(v, _mm512_set1_epi8((char)0x80)) : v;
        }
        return;
    }
    X512_UNROLL for (int j = 0; j < 4; j++) {
        const __m512i v = dword_at(tb, o + T.q_off + 4 * j);
        p->q[j] = nibble_levels(T, x512_lo4(v));
        p->q[4 + j] = nibble_levels(T, x512_hi4(v));
    }
    if (T.h_off) {
        const __m512i lut = _mm512_loadu_si512(HBIT_LUT);
        const __m512i qh = dword_at(tb, o + T.h_off);
        X512_UNROLL for (int j = 0; j < 8; j++) {
            const __m512i bits = _mm512_permutexvar_epi32(_mm512_srli_epi32(qh, 4 * j), lut);
            p->q[j] = _mm512_or_si512(p->q[j], bits);
        }
    }
}

// Loads and transposes the window of blocks b .. b + T.per - 1 of rows 0..nr-1 (inline for one
// token, where the transposed registers feed the dots directly; out of line for the tiles).
X512_ALWAYS_INLINE void load_window(int out_of_line, ltype T, __m512i *tb, const uint8_t *w,
                                    size_t w_stride, int nr, int64_t b, size_t row_bytes) {
    if (out_of_line)
        x512_load_window_call(tb, w, w_stride, nr, (size_t)b * T.bs, row_bytes, T.win);
    else
        x512_load_window(tb, w, w_stride, nr, (size_t)b * T.bs, row_bytes, T.win);
}

// ---------------------------------------------------------------------------------------------
// The packed layout (quant/pack.h): body vectors already lanes = rows, d in the rest.

// First byte of the body in a block (the bytes of the rest before it: 2 for d, 1 for MXFP4's
// exponent), and its dwords.
X512_ALWAYS_INLINE int pk_off(ltype T) {
    return T.bs % 4;
}
X512_ALWAYS_INLINE int pk_nd(ltype T) {
    return (T.bs - pk_off(T)) / 4;
}

// Block b of a packed group g (nb blocks per row): its body vectors, and its rest (NULL when d
// is in the body).
X512_ALWAYS_INLINE const __m512i *pk_body(ltype T, const uint8_t *g, int64_t nb, int64_t b) {
    return (const __m512i *)(g + mint_pack_body_at(pk_nd(T), pk_off(T), nb, b));
}
X512_ALWAYS_INLINE const uint8_t *pk_rest(ltype T, const uint8_t *g, int64_t nb, int64_t b) {
    return pk_off(T) ? g + mint_pack_rest_at(pk_nd(T), pk_off(T), nb, b) : NULL;
}

// The d (and m) of one block's panel from its body vectors and its rest.
X512_ALWAYS_INLINE void scales_packed(ltype T, const __m512i *body, const uint8_t *rest, panel *p) {
    if (T.mx) { // 16 bytes: the rows' exponents
        p->d = e8m0_half(_mm512_cvtepu8_epi32(_mm_load_si128((const __m128i *)rest)));
        p->m = _mm512_setzero_ps();
    } else if (pk_off(T)) { // 32 bytes: the rows' f16 d
        p->d = _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)rest));
        p->m = _mm512_setzero_ps();
    } else { // d and m are the f16 halves of body dword 0
        p->d = x512_f16_lo(body[0]);
        p->m = T.m_off ? x512_f16_hi(body[0]) : _mm512_setzero_ps();
    }
}

// The panel of one block from its body vectors and its rest.
X512_ALWAYS_INLINE void make_panel_packed(ltype T, const __m512i *body, const uint8_t *rest,
                                          panel *p) {
    const int off = pk_off(T), qd = (T.q_off - off) / 4;
    scales_packed(T, body, rest, p);
    if (T.wide) {
        X512_UNROLL for (int j = 0; j < 8; j++) {
            const __m512i v = _mm512_load_si512(body + qd + j);
            p->q[j] = Q8_OFFSET ? _mm512_xor_si512(v, _mm512_set1_epi8((char)0x80)) : v;
        }
        return;
    }
    X512_UNROLL for (int j = 0; j < 4; j++) {
        const __m512i v = _mm512_load_si512(body + qd + j);
        p->q[j] = nibble_levels(T, x512_lo4(v));
        p->q[4 + j] = nibble_levels(T, x512_hi4(v));
    }
    if (T.h_off) {
        const __m512i lut = _mm512_loadu_si512(HBIT_LUT);
        const __m512i qh = _mm512_load_si512(body + (T.h_off - off) / 4);
        X512_UNROLL for (int j = 0; j < 8; j++) {
            const __m512i bits = _mm512_permutexvar_epi32(_mm512_srli_epi32(qh, 4 * j), lut);
            p->q[j] = _mm512_or_si512(p->q[j], bits);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Activation side.

// Sum of the 32 signed quants at q.
X512_ALWAYS_INLINE int32_t sum_i8x32(const int8_t *q) {
    const __m256i v = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)q),
                                       _mm256_set1_epi8((char)0x80)); // q + 128, unsigned
    const __m256i s = _mm256_sad_epu8(v, _mm256_setzero_si256());
    const __m128i h = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    return (int32_t)(_mm_cvtsi128_si64(h) + _mm_extract_epi64(h, 1)) - 32 * 128;
}

// The entries of activation rows c < nfill (rows >= nc repeat row nc - 1), blocks b0 + j for
// j < nb, with column stride cw (f16 widened by F16C, exact
// like mint_f16_to_f32 but one instruction: this runs for every block of every tile).
X512_ALWAYS_INLINE void fill_act_info(ltype T, act_info *info, int cw, int nfill, const uint8_t *a,
                                      size_t a_stride, int nc, int64_t b0, int nb) {
    for (int c = 0; c < nfill; c++) {
        const uint8_t *row = a + (size_t)(c < nc ? c : nc - 1) * a_stride;
        for (int j = 0; j < nb; j++) {
            const int e = j * cw + c;
            if (T.m_off) { // Q8_1 activations: no level offset, s instead
                const mint_block_q8_1 *blk = (const mint_block_q8_1 *)row + b0 + j;
                info->d[e] = _cvtsh_ss(blk->d);
                info->s[e] = _cvtsh_ss(blk->s);
                info->off[e] = 0;
            } else {
                const mint_block_q8_0 *blk = (const mint_block_q8_0 *)row + b0 + j;
                info->d[e] = _cvtsh_ss(blk->d);
                info->off[e] = T.offset ? -T.offset * sum_i8x32(blk->qs) : 0;
            }
        }
    }
}

// fill_act_info for the tiles, 16 columns at a time with the columns in lanes: block j of 16
// activation rows is loaded and transposed like weight rows, its scale(s) are the f16 halves of
// dword 0, and the sum of its quants is 9 vpdpbusd against a mask of ones that skips the scale
// bytes (the block is 34 bytes from a dword boundary: d, then 32 quants). The entries of 16
// columns of a block are then contiguous stores. About 2.5 times fewer instructions than the
// scalar fill, which matters because the tiles gather this once per 64 weight rows.
X512_ALWAYS_INLINE void fill_act_info_lanes(ltype T, act_info *info, int nfill, const uint8_t *a,
                                            size_t a_stride, int nc, int64_t b0, int nb) {
    const int bs = T.m_off ? (int)sizeof(mint_block_q8_1) : (int)sizeof(mint_block_q8_0);
    for (int c = 0; c < nc; c += 16) {
        const int cols = nc - c < 16 ? nc - c : 16;
        const uint8_t *ac = a + (size_t)c * a_stride;
        for (int j = 0; j < nb; j++) {
            __m512i t[16];
            // Exactly the block's bytes (masked loads): nothing past the row is touched.
            x512_load_rows(t, ac, a_stride, cols, (size_t)(b0 + j) * bs, bs);
            float *d = &info->d[j * CW + c];
            if (T.m_off) {
                _mm512_storeu_ps(d, x512_f16_lo(t[0]));
                _mm512_storeu_ps(&info->s[j * CW + c], x512_f16_hi(t[0]));
                _mm512_storeu_si512(&info->off[j * CW + c], _mm512_setzero_si512());
                continue;
            }
            _mm512_storeu_ps(d, x512_f16_lo(t[0]));
            if (!T.offset) {
                _mm512_storeu_si512(&info->off[j * CW + c], _mm512_setzero_si512());
                continue;
            }
            // Bytes 2..33 of the block: dword 0 without its low half, dwords 1..7, and the low
            // half of dword 8.
            __m512i sum =
                x512_dot_u8s8(_mm512_setzero_si512(), _mm512_set1_epi32(0x01010000), t[0]);
            X512_UNROLL for (int k = 1; k < 8; k++) sum =
                x512_dot_u8s8(sum, _mm512_set1_epi8(1), t[k]);
            sum = x512_dot_u8s8(sum, _mm512_set1_epi32(0x00000101), t[8]);
            _mm512_storeu_si512(&info->off[j * CW + c],
                                _mm512_mullo_epi32(sum, _mm512_set1_epi32(-T.offset)));
        }
    }
    for (int c = nc; c < nfill; c++) // the repeated last column of edge micro-tiles
        for (int j = 0; j < nb; j++) {
            info->d[j * CW + c] = info->d[j * CW + nc - 1];
            info->s[j * CW + c] = info->s[j * CW + nc - 1];
            info->off[j * CW + c] = info->off[j * CW + nc - 1];
        }
}

// Address of quant dword j of activation block b in row a (Q8_0 or Q8_1 layout).
X512_ALWAYS_INLINE const void *act_q(ltype T, const uint8_t *a, int64_t b, int j) {
    return T.m_off ? (const void *)(((const mint_block_q8_1 *)a)[b].qs + 4 * j)
                   : (const void *)(((const mint_block_q8_0 *)a)[b].qs + 4 * j);
}

// acc + the 4-product sums of signed weight bytes w and activation bytes a. Under VNNI the
// weights arrive as w ^ 0x80 and x512_dot_u8s8 applies; the emulation cannot take w + 128 (pair
// sums would saturate), so it splits w = (w & 0x7F) - (w & 0x80) into two u8 x s8 dots.
X512_ALWAYS_INLINE __m512i dot_w(ltype T, __m512i acc, __m512i w, __m512i a) {
#if !defined(__AVX512VNNI__)
    if (T.wide || T.nl) {
        const __m512i lo = _mm512_and_si512(w, _mm512_set1_epi8(0x7F));
        const __m512i hi = _mm512_and_si512(w, _mm512_set1_epi8((char)0x80));
        acc = _mm512_add_epi32(
            acc, _mm512_madd_epi16(_mm512_maddubs_epi16(lo, a), _mm512_set1_epi16(1)));
        return _mm512_add_epi32(
            acc, _mm512_madd_epi16(_mm512_maddubs_epi16(hi, a), _mm512_set1_epi16(-1)));
    }
#endif
    return x512_dot_u8s8(acc, w, a);
}

// ---------------------------------------------------------------------------------------------
// Block steps.

#if defined(__AVX512VNNI__)
#define HI16 1
#else
#define HI16 0
#endif

// s + the exact sum of levels * activations of block i of a window of a 4-bit type, for one
// token under VNNI: the high nibbles are taken in place (byte & 0xF0, 16 times the level) into
// a second sum that is shifted back once, and a quant dword that starts 2 bytes into a lane is
// assembled and masked by one vpternlogd per half. Saves the shifts the panels need.
X512_ALWAYS_INLINE __m512i nibble_sum_hi16(ltype T, const __m512i *tb, int i, const uint8_t *a,
                                           int64_t b, __m512i s) {
    const int off = i * T.bs + T.q_off;
    __m512i s16 = _mm512_setzero_si512();
    X512_UNROLL for (int m = 0; m < 4; m++) {
        const int o = off + 4 * m;
        __m512i x, y; // the dword is (x | y)
        if (o % 4 == 0) {
            x = tb[o / 4];
            y = _mm512_setzero_si512();
        } else {
            x = _mm512_srli_epi32(tb[o / 4], 16);
            y = _mm512_slli_epi32(tb[o / 4 + 1], 16);
        }
        // (x | y) & mask: vpternlogd 0xA8 = (A | B) & C.
        const __m512i lo = _mm512_ternarylogic_epi32(x, y, _mm512_set1_epi8(0x0F), 0xA8);
        const __m512i hi = _mm512_ternarylogic_epi32(x, y, _mm512_set1_epi8((char)0xF0), 0xA8);
        s = x512_dot_u8s8(s, lo, x512_bcast32(act_q(T, a, b, m)));
        s16 = x512_dot_u8s8(s16, hi, x512_bcast32(act_q(T, a, b, 4 + m)));
    }
    return _mm512_add_epi32(s, _mm512_srai_epi32(s16, 4));
}

// The float step of one block, shared by every path: acc = fma(sumi, d_w * d_a, acc), then
// acc = fma(m_w, s_a, acc) for the types with an offset m.
X512_ALWAYS_INLINE __m512 block_float(ltype T, __m512i sumi, const panel *p, const float *da,
                                      const float *sa, __m512 acc) {
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sumi), _mm512_mul_ps(p->d, x512_bcastf(da)), acc);
    if (T.m_off) acc = _mm512_fmadd_ps(p->m, x512_bcastf(sa), acc);
    return acc;
}

// One token: rows 16 at a time, each group streamed once through its windows; the 16 sums stay
// in one register per group (a K chunk boundary round-trips them through y, losslessly).
X512_ALWAYS_INLINE void gemv(ltype T, int64_t n, const uint8_t *w, size_t w_stride, int nr,
                             const uint8_t *a, float *y) {
    const int64_t nb = n / MINT_QK;
    const size_t row_bytes = (size_t)nb * T.bs;
    act_info info;
    for (int64_t k0 = 0; k0 < nb; k0 += GEMV_KB) {
        const int nk = (int)(nb - k0 < GEMV_KB ? nb - k0 : GEMV_KB);
        fill_act_info(T, &info, 1, 1, a, 0, 1, k0, nk);
        for (int r0 = 0; r0 < nr; r0 += 16) {
            const int rows = nr - r0 < 16 ? nr - r0 : 16;
            const __mmask16 rm = x512_mask16(rows);
            __m512 acc = k0 == 0 ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(rm, y + r0);
            const uint8_t *wr = w + (size_t)r0 * w_stride;
            for (int j = 0; j < nk; j += T.per) {
                __m512i tb[48];
                load_window(0, T, tb, wr, w_stride, rows, k0 + j, row_bytes);
                X512_UNROLL for (int i = 0; i < T.per; i++) {
                    if (j + i >= nk) break;
                    // A slice of the next group per block: the prefetches stay spread out.
                    if (r0 + 16 < nr)
                        x512_prefetch_slice(wr + 16 * w_stride, 16 * w_stride, j + i, nk);
                    panel p;
                    __m512i s = _mm512_set1_epi32(info.off[j + i]);
                    if (HI16 && !T.wide && !T.h_off && !T.mx &&
                        !T.nl) { // (MXFP4's and IQ4_NL's nibbles are looked up whole)
                        s = nibble_sum_hi16(T, tb, i, a, k0 + j + i, s);
                        p.d = f16_at(tb, i * T.bs);
                        p.m = T.m_off ? f16_at(tb, i * T.bs + T.m_off) : _mm512_setzero_ps();
                    } else {
                        make_panel(T, tb, i, &p);
                        X512_UNROLL for (int k = 0; k < 8; k++) s =
                            dot_w(T, s, p.q[k], x512_bcast32(act_q(T, a, k0 + j + i, k)));
                    }
                    acc = block_float(T, s, &p, &info.d[j + i], &info.s[j + i], acc);
                }
            }
            _mm512_mask_storeu_ps(y + r0, rm, acc);
        }
    }
}

// The block steps of C columns (C <= 8, fixed at compile time) against one packed 16-row group
// g over blocks k0 .. k0 + nk - 1: each block is loaded and unpacked once and its dot products
// with the C columns follow (ar[c]: column c's activation row; info entries j * cw + c0 + c).
// Per column these are exactly the steps of one token, so a column's sums, and the float order
// of its accumulator acc[c], do not depend on C or on the other columns.
X512_ALWAYS_INLINE void group_cols(ltype T, int C, const uint8_t *g, int64_t nb, int64_t k0, int nk,
                                   const uint8_t *const *ar, const act_info *info, int cw, int c0,
                                   __m512 *acc) {
    const int nd = pk_nd(T), qd = (T.q_off - pk_off(T)) / 4;
    const int hi16 = HI16 && !T.wide && !T.h_off && !T.mx && !T.nl;
    for (int j = 0; j < nk; j++) {
        const int64_t b = k0 + j;
        const __m512i *bb = pk_body(T, g, nb, b);
        const uint8_t *rest = pk_rest(T, g, nb, b);
        x512_prefetch_ahead(bb, (size_t)(nd * 64 + 16 * pk_off(T)));
        panel p;
        __m512i lo[4], hi[4];
        if (hi16) {
            // Low nibbles as they are, high ones in place as 16 * level, shifted back once.
            X512_UNROLL for (int m = 0; m < 4; m++) {
                const __m512i v = _mm512_load_si512(bb + qd + m);
                lo[m] = x512_lo4(v);
                hi[m] = _mm512_and_si512(v, _mm512_set1_epi8((char)0xF0));
            }
            scales_packed(T, bb, rest, &p);
        } else {
            make_panel_packed(T, bb, rest, &p);
        }
        X512_UNROLL for (int c = 0; c < C; c++) {
            const int e = j * cw + c0 + c;
            __m512i s = _mm512_set1_epi32(info->off[e]);
            if (hi16) {
                __m512i s16 = _mm512_setzero_si512();
                X512_UNROLL for (int m = 0; m < 4; m++) {
                    s = x512_dot_u8s8(s, lo[m], x512_bcast32(act_q(T, ar[c], b, m)));
                    s16 = x512_dot_u8s8(s16, hi[m], x512_bcast32(act_q(T, ar[c], b, 4 + m)));
                }
                s = _mm512_add_epi32(s, _mm512_srai_epi32(s16, 4));
            } else {
                X512_UNROLL for (int k = 0; k < 8; k++) s =
                    dot_w(T, s, p.q[k], x512_bcast32(act_q(T, ar[c], b, k)));
            }
            acc[c] = block_float(T, s, &p, &info->d[e], &info->s[e], acc[c]);
        }
    }
}

// Columns c0 .. c0 + C - 1 of one group's rows r0 .. r0 + rows - 1 over one K chunk: the
// accumulators start at 0 (first chunk) or from y (lossless), and go back to y.
X512_ALWAYS_INLINE void group_pass(ltype T, int C, const uint8_t *g, int64_t nb, int64_t k0, int nk,
                                   const uint8_t *a, size_t a_stride, const act_info *info, int cw,
                                   int c0, float *y, size_t y_stride, __mmask16 rm) {
    const uint8_t *ar[8];
    __m512 acc[8];
    X512_UNROLL for (int c = 0; c < C; c++) {
        ar[c] = a + (size_t)(c0 + c) * a_stride;
        float *yc = y + (size_t)(c0 + c) * y_stride;
        acc[c] = k0 == 0 ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(rm, yc);
    }
    group_cols(T, C, g, nb, k0, nk, ar, info, cw, c0, acc);
    X512_UNROLL for (int c = 0; c < C; c++)
        _mm512_mask_storeu_ps(y + (size_t)(c0 + c) * y_stride, rm, acc[c]);
}

// One token, or a few (nc <= SMALL_COLS: a step of several sequences, a speculative check), over
// packed rows (w: the first group, gb bytes per group), the groups one sequential stream: every
// weight block is read and unpacked once per group and K chunk, and its dot products with all
// the columns follow, in passes of 8, 4, 2 and 1 columns that find the group in L1. Each column
// gets the bits of one token alone (group_cols).
enum { SMALL_COLS = 16 };
X512_ALWAYS_INLINE void gemv_packed(ltype T, int64_t n, const uint8_t *w, size_t gb, int nr,
                                    const uint8_t *a, size_t a_stride, int nc, float *y,
                                    size_t y_stride) {
    const int64_t nb = n / MINT_QK;
    if (nc < 1) return;
    const int64_t kb = GEMV_KB / nc; // info holds every column's entries of a chunk
    act_info info;
    for (int64_t k0 = 0; k0 < nb; k0 += kb) {
        const int nk = (int)(nb - k0 < kb ? nb - k0 : kb);
        fill_act_info(T, &info, nc, nc, a, a_stride, nc, k0, nk);
        for (int r0 = 0; r0 < nr; r0 += 16) {
            const int rows = nr - r0 < 16 ? nr - r0 : 16;
            const __mmask16 rm = x512_mask16(rows);
            const uint8_t *g = w + (size_t)(r0 / 16) * gb;
            float *yr = y + r0;
            int c0 = 0;
            for (; nc - c0 >= 8; c0 += 8)
                group_pass(T, 8, g, nb, k0, nk, a, a_stride, &info, nc, c0, yr, y_stride, rm);
            if (nc - c0 >= 4) {
                group_pass(T, 4, g, nb, k0, nk, a, a_stride, &info, nc, c0, yr, y_stride, rm);
                c0 += 4;
            }
            if (nc - c0 >= 2) {
                group_pass(T, 2, g, nb, k0, nk, a, a_stride, &info, nc, c0, yr, y_stride, rm);
                c0 += 2;
            }
            if (nc - c0 >= 1)
                group_pass(T, 1, g, nb, k0, nk, a, a_stride, &info, nc, c0, yr, y_stride, rm);
        }
    }
}

// C activation rows (columns) against the panels of G 16-row groups (pan[g], G = 1 or 2) over
// blocks k0..k0+nk-1; acc starts at 0 (first chunk) or at y. With two groups every activation
// broadcast feeds two vpdpbusd. Columns >= ncols repeat the last one and are not stored.
X512_ALWAYS_INLINE void micro(ltype T, int G, int C, const panel *const *pan, int nk,
                              const uint8_t *a, size_t a_stride, int64_t k0, const act_info *info,
                              int c0, int ncols, float *y, size_t y_stride, const __mmask16 *rm,
                              int first) {
    const uint8_t *ar[8];
    __m512 acc[2][8];
    X512_UNROLL for (int c = 0; c < C; c++) {
        ar[c] = a + (size_t)(c < ncols ? c : ncols - 1) * a_stride;
        X512_UNROLL for (int g = 0; g < G; g++) {
            // Columns past ncols are not stored, and their y may lie past the buffer's end.
            acc[g][c] = first || c >= ncols
                            ? _mm512_setzero_ps()
                            : _mm512_maskz_loadu_ps(rm[g], y + (size_t)c * y_stride + 16 * g);
        }
    }
    for (int j = 0; j < nk; j++) {
        __m512i s[2][8];
        X512_UNROLL for (int c = 0; c < C; c++) {
            const __m512i off = _mm512_set1_epi32(info->off[j * CW + c0 + c]);
            X512_UNROLL for (int g = 0; g < G; g++) s[g][c] = off;
        }
        X512_UNROLL for (int k = 0; k < 8; k++) {
            __m512i wq[2];
            X512_UNROLL for (int g = 0; g < G; g++) wq[g] = pan[g][j].q[k];
            X512_UNROLL for (int c = 0; c < C; c++) {
                const __m512i av = x512_bcast32(act_q(T, ar[c], k0 + j, k));
                X512_UNROLL for (int g = 0; g < G; g++) s[g][c] = dot_w(T, s[g][c], wq[g], av);
            }
        }
        X512_UNROLL for (int c = 0; c < C; c++) {
            const int e = j * CW + c0 + c;
            X512_UNROLL for (int g = 0; g < G; g++) {
                acc[g][c] =
                    block_float(T, s[g][c], &pan[g][j], &info->d[e], &info->s[e], acc[g][c]);
            }
        }
    }
    X512_UNROLL for (int c = 0; c < C; c++) {
        if (c >= ncols) continue;
        X512_UNROLL for (int g = 0; g < G; g++) {
            _mm512_mask_storeu_ps(y + (size_t)c * y_stride + 16 * g, rm[g], acc[g][c]);
        }
    }
}

// The gemm contract for one type: one token goes to gemv (gemv_packed, which also takes up to
// SMALL_COLS tokens over packed rows: the panels below do not repay their building for a few
// columns); a larger batch is cut into K chunks of KB
// blocks and column chunks of CC activation rows; per chunk the activation block data is
// gathered once, the panels of each pair of 16-row groups are built once, and 4 columns at a
// time run against the pair (8 against a lone last group).
// With `packed`, w holds packed groups and w_stride is the bytes of one group.
X512_ALWAYS_INLINE void gemm(ltype T, int packed, int64_t n, const void *vw, size_t w_stride,
                             int nr, const void *va, size_t a_stride, int nc, float *y,
                             size_t y_stride) {
    const uint8_t *w = vw, *a = va;
    if (nc == 1) {
        if (packed)
            gemv_packed(T, n, w, w_stride, nr, a, a_stride, 1, y, y_stride);
        else
            gemv(T, n, w, w_stride, nr, a, y);
        return;
    }
    if (packed && nc <= SMALL_COLS) {
        gemv_packed(T, n, w, w_stride, nr, a, a_stride, nc, y, y_stride);
        return;
    }
    const int64_t nb = n / MINT_QK;
    const size_t row_bytes = (size_t)nb * T.bs;
    act_info info;
    panel pan[2][KB + 8];
    const panel *pp[2] = {pan[0], pan[1]};
    for (int c0 = 0; c0 < nc; c0 += CC) {
        const int ncc = nc - c0 < CC ? nc - c0 : CC;
        const uint8_t *ac = a + (size_t)c0 * a_stride;
        for (int64_t k0 = 0; k0 < nb; k0 += KB) {
            const int nk = (int)(nb - k0 < KB ? nb - k0 : KB);
            fill_act_info_lanes(T, &info, ncc + 8 < CW ? ncc + 8 : CW, ac, a_stride, ncc, k0, nk);
            for (int r0 = 0; r0 < nr; r0 += 32) {
                const int groups = nr - r0 > 16 ? 2 : 1;
                __mmask16 rm[2];
                for (int g = 0; g < groups; g++) {
                    const int rows = nr - r0 - 16 * g < 16 ? nr - r0 - 16 * g : 16;
                    rm[g] = x512_mask16(rows);
                    if (packed) {
                        const uint8_t *gp = w + (size_t)((r0 + 16 * g) / 16) * w_stride;
                        for (int j = 0; j < nk; j++)
                            make_panel_packed(T, pk_body(T, gp, nb, k0 + j),
                                              pk_rest(T, gp, nb, k0 + j), &pan[g][j]);
                        continue;
                    }
                    const uint8_t *wr = w + (size_t)(r0 + 16 * g) * w_stride;
                    for (int j = 0; j < nk; j += T.per) {
                        __m512i tb[48];
                        load_window(1, T, tb, wr, w_stride, rows, k0 + j, row_bytes);
                        X512_UNROLL for (int i = 0; i < T.per; i++)
                            make_panel(T, tb, i, &pan[g][j + i]);
                    }
                }
                float *yr = y + (size_t)c0 * y_stride + r0;
                for (int c = 0; c < ncc; c += groups == 2 ? 4 : 8) {
                    const int left = ncc - c;
                    if (groups == 2)
                        micro(T, 2, 4, pp, nk, ac + (size_t)c * a_stride, a_stride, k0, &info, c,
                              left < 4 ? left : 4, yr + (size_t)c * y_stride, y_stride, rm,
                              k0 == 0);
                    else
                        micro(T, 1, 8, pp, nk, ac + (size_t)c * a_stride, a_stride, k0, &info, c,
                              left < 8 ? left : 8, yr + (size_t)c * y_stride, y_stride, rm,
                              k0 == 0);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Entry points (quant/simd_avx512.h: X512_KERNELS).

// y = tile of Q4_0 rows . Q8_0 activations; *s = one of them.
X512_KERNELS(q4_0_q8_0, gemm, LT_Q4_0)
// Q4_1 . Q8_1.
X512_KERNELS(q4_1_q8_1, gemm, LT_Q4_1)
// Q5_0 . Q8_0.
X512_KERNELS(q5_0_q8_0, gemm, LT_Q5_0)
// Q5_1 . Q8_1.
X512_KERNELS(q5_1_q8_1, gemm, LT_Q5_1)
// Q8_0 . Q8_0.
X512_KERNELS(q8_0_q8_0, gemm, LT_Q8_0)
// MXFP4 . Q8_0.
X512_KERNELS(mxfp4_q8_0, gemm, LT_MXFP4)
// IQ4_NL . Q8_0.
X512_KERNELS(iq4_nl_q8_0, gemm, LT_IQ4_NL)
