// simd_avx512.h - what the AVX-512 kernel files share: static inline helpers, the entry points
// of the integer kernels and the kernels' prototypes (Skylake-X, Ice Lake, Zen 4).
//
// Included only by files whose names end in _avx512.c or _avx512vnni.c: it needs their compiler
// flags. The integer dot products are written once for both levels; x512_dot_u8s8 is vpdpbusd
// where the file is compiled with AVX-512 VNNI and a three-instruction emulation where it is not.
//
// The integer kernels keep 16 weight rows in the 16 dword lanes of a zmm register ("lanes = rows"):
// a row's bytes are turned into lanes by 16x16 dword transposes, each activation dword is
// broadcast, and one vpdpbusd then advances 16 dot products by 4 elements. The float accumulation
// of an output element is then one sequential chain over its blocks, the same whether the
// element came from a 64x64 tile or a single token, which is what makes gemm and vec_dot agree
// bit for bit.
//
// Why this layout: with a block's bytes across the lanes (llama.cpp's AVX2 code), keeping each
// block's integer sum exact costs a horizontal reduction per block and per output element. With
// rows in lanes there is none; the transposes are paid once per 16 weight rows (shared by every
// token of a tile), and activations are used as they are (Q8 blocks, dword broadcasts).
#ifndef MINT_QUANT_SIMD_AVX512_H
#define MINT_QUANT_SIMD_AVX512_H

#include "quant/blocks.h"
#include "quant/kernels.h"

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#define X512_ALWAYS_INLINE static inline __attribute__((always_inline))
// Loops over register-array indices must unroll fully so that the arrays live in registers.
#define X512_UNROLL _Pragma("GCC unroll 64")

// acc + per dword lane sum of the 4 products u8(w) * s8(a). Exact when every w <= 128 and every
// a >= -127 (then the 16-bit pair sums of the emulation, at most 2 * 128 * 127, cannot saturate);
// all callers keep to that (weight levels are at most 63, activations are RNE of |x| <= 127;
// Q8_0's signed weights take another route, legacy_x512.h dot_w).
X512_ALWAYS_INLINE __m512i x512_dot_u8s8(__m512i acc, __m512i w, __m512i a) {
#if defined(__AVX512VNNI__)
    return _mm512_dpbusd_epi32(acc, w, a);
#else
    const __m512i p = _mm512_maddubs_epi16(w, a);
    return _mm512_add_epi32(acc, _mm512_madd_epi16(p, _mm512_set1_epi16(1)));
#endif
}

// acc + per dword lane sum of the 2 products s16(w) * s16(a) (vpdpwssd, or vpmaddwd + add).
X512_ALWAYS_INLINE __m512i x512_dot_s16(__m512i acc, __m512i w, __m512i a) {
#if defined(__AVX512VNNI__)
    return _mm512_dpwssd_epi32(acc, w, a);
#else
    return _mm512_add_epi32(acc, _mm512_madd_epi16(w, a));
#endif
}

// The dword at p, in all 16 lanes (GCC emits vpbroadcastd from memory; on Zen 4 that plus a
// register vpdpbusd beats vpdpbusd with an embedded {1to16} operand, measured 1.1 vs 2.7 cycles).
X512_ALWAYS_INLINE __m512i x512_bcast32(const void *p) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return _mm512_set1_epi32(v);
}

X512_ALWAYS_INLINE __m512 x512_bcastf(const float *p) {
    return _mm512_set1_ps(*p);
}

// r[i] lane j <-> r[j] lane i for 16 vectors of 16 dwords: two rounds of unpacks transpose the
// 4x4 blocks inside each 128-bit lane, two rounds of 128-bit shuffles move the blocks. 64 shuffles
// for 1 KiB, the cost of bringing 16 rows into lanes.
X512_ALWAYS_INLINE void x512_transpose16(__m512i r[16]) {
    __m512i t[16];
    X512_UNROLL for (int q = 0; q < 4; q++) {
        const __m512i a0 = _mm512_unpacklo_epi32(r[4 * q], r[4 * q + 1]);
        const __m512i a1 = _mm512_unpackhi_epi32(r[4 * q], r[4 * q + 1]);
        const __m512i a2 = _mm512_unpacklo_epi32(r[4 * q + 2], r[4 * q + 3]);
        const __m512i a3 = _mm512_unpackhi_epi32(r[4 * q + 2], r[4 * q + 3]);
        t[4 * q + 0] = _mm512_unpacklo_epi64(a0, a2); // column 4l + 0 of rows 4q..4q+3
        t[4 * q + 1] = _mm512_unpackhi_epi64(a0, a2);
        t[4 * q + 2] = _mm512_unpacklo_epi64(a1, a3);
        t[4 * q + 3] = _mm512_unpackhi_epi64(a1, a3);
    }
    X512_UNROLL for (int m = 0; m < 4; m++) {
        const __m512i c0 = _mm512_shuffle_i32x4(t[m], t[4 + m], 0x44);
        const __m512i c1 = _mm512_shuffle_i32x4(t[m], t[4 + m], 0xEE);
        const __m512i c2 = _mm512_shuffle_i32x4(t[8 + m], t[12 + m], 0x44);
        const __m512i c3 = _mm512_shuffle_i32x4(t[8 + m], t[12 + m], 0xEE);
        r[m] = _mm512_shuffle_i32x4(c0, c2, 0x88);
        r[4 + m] = _mm512_shuffle_i32x4(c0, c2, 0xDD);
        r[8 + m] = _mm512_shuffle_i32x4(c1, c3, 0x88);
        r[12 + m] = _mm512_shuffle_i32x4(c1, c3, 0xDD);
    }
}

// Loads 64 bytes at offset off of each of the rows 0..nr-1 (row r at w + r * stride), only the
// first `bytes` of them (masked: nothing past a row's end is touched), and transposes them:
// on return t[k] lane r holds bytes 4k..4k+3 of row r's window (zero for rows >= nr).
// A window wholly past the rows' end is zero without a transpose: short rows (a 64-element
// head of a quantized KV cache, 68 bytes, in a window of 192) would otherwise pay for it.
X512_ALWAYS_INLINE void x512_load_rows(__m512i t[16], const uint8_t *w, size_t stride, int nr,
                                       size_t off, int bytes) {
    if (bytes <= 0) {
        X512_UNROLL for (int r = 0; r < 16; r++) t[r] = _mm512_setzero_si512();
        return;
    }
    const __mmask64 m = bytes >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << bytes) - 1);
    X512_UNROLL for (int r = 0; r < 16; r++) t[r] =
        r < nr ? _mm512_maskz_loadu_epi8(m, w + (size_t)r * stride + off) : _mm512_setzero_si512();
    x512_transpose16(t);
}

// x512_load_rows for `win` consecutive 64-byte pieces from byte `start` of each row (rows end at
// row_bytes): tb[16k + j] lane r = dword j of piece k of row r.
X512_ALWAYS_INLINE void x512_load_window(__m512i *tb, const uint8_t *w, size_t stride, int nr,
                                         size_t start, size_t row_bytes, int win) {
    X512_UNROLL for (int k = 0; k < win; k++) {
        const size_t off = start + 64 * (size_t)k;
        const int bytes = off >= row_bytes ? 0 : (int)(row_bytes - off < 64 ? row_bytes - off : 64);
        x512_load_rows(tb + 16 * k, w, stride, nr, off, bytes);
    }
}

// The same out of line, for the tile paths: there a window is transposed once per 16 rows and
// then serves every column, so one copy per file does instead of one per kernel.
static __attribute__((noinline, unused)) void x512_load_window_call(__m512i *tb, const uint8_t *w,
                                                                    size_t stride, int nr,
                                                                    size_t start, size_t row_bytes,
                                                                    int win) {
    for (int k = 0; k < win; k++) {
        const size_t off = start + 64 * (size_t)k;
        const int bytes = off >= row_bytes ? 0 : (int)(row_bytes - off < 64 ? row_bytes - off : 64);
        x512_load_rows(tb + 16 * k, w, stride, nr, off, bytes);
    }
}

// One-token streaming: while a group of 16 rows is consumed block by block, its 16 rows'
// interleaved loads look like 16 short streams to the hardware prefetchers, which then fetch the
// next group late. So step i of n also asks for slice i of the next group's bytes
// [next, next + group_bytes) into L2, one group ahead of use. Small slices spread over the steps
// work better than one burst per window (measured: Q4_K from DRAM 10 -> 18 GB/s on one core).
X512_ALWAYS_INLINE void x512_prefetch_slice(const uint8_t *next, size_t group_bytes, int i, int n) {
    const size_t span = (group_bytes / (size_t)n + 127) & ~(size_t)63;
    const uint8_t *p = next + (size_t)i * span;
    for (size_t o = 0; o < span; o += 64) _mm_prefetch((const char *)(p + o), _MM_HINT_T1);
}

// Packed one-token streams (quant/pack.h): asks for the bytes [p + X512_PF_AHEAD, + len) as the
// `len` bytes at p are consumed. A packed matrix is one forward stream, but a block's vectors are
// not read in address order (Q6_K's levels revisit its low-bit vectors), which the hardware
// prefetchers follow badly: Q6_K from DRAM went from about 5 to 10 GB/s on one busy core, Q4_K
// from 11 to 15 (medians over interleaved runs); 4 and 8 KiB ahead did no better for one token.
// A pass of several tokens (a speculative check, a step of many sequences) spends longer on each
// block, so the stream needs more in flight: 8 KiB ahead, against 2 and 16, three interleaved
// rounds of `mint-bench -t 1,2 -p 1,5 -n 0 -d 128 -r 5` on TinyLlama-shaped files, median ms of
// a 5-token pass: Q4_0 t=1 42.6 / 33.7 / 34.2, t=2 25.0 / 23.4 / 22.2; Q4_K_M t=2 29.8 / 23.8 /
// 26.3; one token no slower (Q4_0 t=2 15.3 / 14.9 / 15.1, Q4_K_M 13.1 / 11.4 / 13.2). Defined
// from outside (-DX512_PF_AHEAD=N) to measure other distances.
#ifndef X512_PF_AHEAD
#define X512_PF_AHEAD 8192
#endif
X512_ALWAYS_INLINE void x512_prefetch_ahead(const void *p, size_t len) {
    const char *q = (const char *)p + X512_PF_AHEAD;
    for (size_t o = 0; o < len; o += 64) _mm_prefetch(q + o, _MM_HINT_T0);
}

// Bytes 2..5 of the 8 bytes lo:hi (per dword lane): a dword that starts 2 bytes into a dword
// lane, for the blocks whose quants start at an offset of 2 mod 4.
X512_ALWAYS_INLINE __m512i x512_shift16(__m512i lo, __m512i hi) {
    return _mm512_or_si512(_mm512_srli_epi32(lo, 16), _mm512_slli_epi32(hi, 16));
}

// Low / high f16 of each dword lane, widened to f32 (exact).
X512_ALWAYS_INLINE __m512 x512_f16_lo(__m512i v) {
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(v));
}
X512_ALWAYS_INLINE __m512 x512_f16_hi(__m512i v) {
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(v, 16)));
}

// Nibbles of each byte, as bytes 0..15.
X512_ALWAYS_INLINE __m512i x512_lo4(__m512i v) {
    return _mm512_and_si512(v, _mm512_set1_epi8(0x0F));
}
X512_ALWAYS_INLINE __m512i x512_hi4(__m512i v) {
    return _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0F));
}

// Sum of the 16 lanes in a fixed order (pairs 8 apart, then 4, 2, 1): every caller that must agree
// bit for bit with another uses this one function.
X512_ALWAYS_INLINE float x512_hsum(__m512 v) {
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    q = _mm_add_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
}

// The x512_hsum of each of a[0..3], as lanes 0, 4, 8 and 12 of the result: the same additions
// in the same pairs (lanes 8 apart, then 4, 2, 1), done for four accumulators at once. A tile
// over short rows (attention's head_dim of 64 is 4 multiply-adds per element) would otherwise
// spend most of its time in one horizontal sum per element.
X512_ALWAYS_INLINE __m512 x512_hsum4(const __m512 a[4]) {
    const __m512 h01 = _mm512_add_ps(_mm512_shuffle_f32x4(a[0], a[1], 0x44),
                                     _mm512_shuffle_f32x4(a[0], a[1], 0xEE));
    const __m512 h23 = _mm512_add_ps(_mm512_shuffle_f32x4(a[2], a[3], 0x44),
                                     _mm512_shuffle_f32x4(a[2], a[3], 0xEE));
    const __m512 q =
        _mm512_add_ps(_mm512_shuffle_f32x4(h01, h23, 0x88), _mm512_shuffle_f32x4(h01, h23, 0xDD));
    const __m512 r = _mm512_add_ps(q, _mm512_permute_ps(q, 0x4E));
    return _mm512_add_ps(r, _mm512_permute_ps(r, 0xB1));
}

// Masks of the first n lanes.
X512_ALWAYS_INLINE __mmask16 x512_mask16(int n) {
    return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
}

// ---------------------------------------------------------------------------------------------
// Entry points of one integer type from its driver (legacy_x512.h gemm, kquant_x512.h kgemm) and
// block format T: gemm over the file's rows, gemm_packed over rows repacked by quant/pack.h, and
// vec_dot as the one-token path on a single row, so that it equals gemm bit for bit. The file
// that compiles the driver for a level defines MINT_LEVEL_NAME (quant/kernels.h).
#define X512_KERNELS(name, driver, T)                                                              \
    void MINT_LEVEL_NAME(gemm_##name)(int64_t n, const void *restrict w, size_t w_stride, int nr,  \
                                      const void *restrict a, size_t a_stride, int nc,             \
                                      float *restrict y, size_t y_stride) {                        \
        driver(T, 0, n, w, w_stride, nr, a, a_stride, nc, y, y_stride);                            \
    }                                                                                              \
    void MINT_LEVEL_NAME(gemm_packed_##name)(int64_t n, const void *restrict w, size_t w_stride,   \
                                             int nr, const void *restrict a, size_t a_stride,      \
                                             int nc, float *restrict y, size_t y_stride) {         \
        driver(T, 1, n, w, w_stride, nr, a, a_stride, nc, y, y_stride);                            \
    }                                                                                              \
    void MINT_LEVEL_NAME(vec_dot_##name)(int64_t n, float *restrict s, const void *restrict w,     \
                                         const void *restrict a) {                                 \
        MINT_LEVEL_NAME(gemm_##name)(n, w, 0, 1, a, 0, 1, s, 1);                                   \
    }

// ---------------------------------------------------------------------------------------------
// Tokens per batched tile for the grid i-quants (quant/iquant_x512.h): their panels cost
// gathers to build, so a tile of 256 tokens builds each once where 64 would build it 4 times.
enum { MINT_IQ_TOKEN_BLOCK = 256 };

// The kernels (signatures of quant/kernels.h). The float kernels, activation conversions and
// vector kernels exist once, at the avx512 level; the integer kernels are compiled for both.

MINT_DECLARE_DOT(f32_f32, avx512) // quant/float_avx512.c
MINT_DECLARE_DOT(f16_f16, avx512)
MINT_DECLARE_DOT(bf16_bf16, avx512)
MINT_DECLARE_GEMM_PACKED(f32_f32, avx512)
MINT_DECLARE_GEMM_PACKED(f16_f16, avx512)
MINT_DECLARE_GEMM_PACKED(bf16_bf16, avx512)
void quantize_row_f16_avx512(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_bf16_avx512(const float *restrict x, void *restrict y, int64_t n);
void dequantize_row_f16_avx512(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_bf16_avx512(const void *restrict x, float *restrict y, int64_t n);

// Activation conversions (quant/act_avx512.c), byte-identical to the reference.
void quantize_row_q8_0_act_avx512(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_q8_1_act_avx512(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_q8_K_avx512(const float *restrict x, void *restrict y, int64_t n);

// Float vector kernels (quant/vec_avx512.c, quant/attn_tile_avx512.c), equal to the reference
// bit for bit (quant/kernels.h: mint_vec_kernels).
void vec_exp_avx512(const float *x, float *y, int64_t n);
float vec_max_avx512(const float *x, int64_t n, float m);
double vec_exp_sum_avx512(float *x, int64_t n, float m);
void vec_scale_avx512(float *x, int64_t n, float c);
void vec_round_f16_avx512(float *x, int64_t n);
void vec_delta_step_avx512(float *st, int s_k, int s_v, const float *q, const float *k,
                           const float *v, float decay, float beta, float scale, float *out);
MINT_DECLARE_ATTN(avx512)

// Integer kernels: quant/legacy_x512.h through legacy_avx512.c / legacy_avx512vnni.c, and
// quant/kquant_x512.h through kquant_avx512.c / kquant_avx512vnni.c.
MINT_DECLARE_DOT(q4_0_q8_0, avx512)
MINT_DECLARE_DOT(q4_1_q8_1, avx512)
MINT_DECLARE_DOT(q5_0_q8_0, avx512)
MINT_DECLARE_DOT(q5_1_q8_1, avx512)
MINT_DECLARE_DOT(q8_0_q8_0, avx512)
MINT_DECLARE_DOT(mxfp4_q8_0, avx512)
MINT_DECLARE_DOT(iq4_nl_q8_0, avx512)
MINT_DECLARE_DOT(q2_K_q8_K, avx512)
MINT_DECLARE_DOT(q3_K_q8_K, avx512)
MINT_DECLARE_DOT(q4_K_q8_K, avx512)
MINT_DECLARE_DOT(q5_K_q8_K, avx512)
MINT_DECLARE_DOT(q6_K_q8_K, avx512)
MINT_DECLARE_DOT(tq2_0_q8_K, avx512)
MINT_DECLARE_DOT(tq1_0_q8_K, avx512)
MINT_DECLARE_DOT(iq3_xxs_q8_K, avx512) // quant/iquant_x512.h
MINT_DECLARE_DOT(iq3_s_q8_K, avx512)
MINT_DECLARE_DOT(iq2_xxs_q8_K, avx512)
MINT_DECLARE_DOT(iq2_xs_q8_K, avx512)
MINT_DECLARE_DOT(iq2_s_q8_K, avx512)
MINT_DECLARE_GEMM_PACKED(q4_0_q8_0, avx512)
MINT_DECLARE_GEMM_PACKED(q4_1_q8_1, avx512)
MINT_DECLARE_GEMM_PACKED(q5_0_q8_0, avx512)
MINT_DECLARE_GEMM_PACKED(q5_1_q8_1, avx512)
MINT_DECLARE_GEMM_PACKED(q8_0_q8_0, avx512)
MINT_DECLARE_GEMM_PACKED(mxfp4_q8_0, avx512)
MINT_DECLARE_GEMM_PACKED(iq4_nl_q8_0, avx512)
MINT_DECLARE_GEMM_PACKED(q2_K_q8_K, avx512)
MINT_DECLARE_GEMM_PACKED(q3_K_q8_K, avx512)
MINT_DECLARE_GEMM_PACKED(q4_K_q8_K, avx512)
MINT_DECLARE_GEMM_PACKED(q5_K_q8_K, avx512)
MINT_DECLARE_GEMM_PACKED(q6_K_q8_K, avx512)
MINT_DECLARE_GEMM_PACKED(tq2_0_q8_K, avx512)
MINT_DECLARE_GEMM_PACKED(tq1_0_q8_K, avx512)
MINT_DECLARE_DOT(q4_0_q8_0, avx512vnni)
MINT_DECLARE_DOT(q4_1_q8_1, avx512vnni)
MINT_DECLARE_DOT(q5_0_q8_0, avx512vnni)
MINT_DECLARE_DOT(q5_1_q8_1, avx512vnni)
MINT_DECLARE_DOT(q8_0_q8_0, avx512vnni)
MINT_DECLARE_DOT(mxfp4_q8_0, avx512vnni)
MINT_DECLARE_DOT(iq4_nl_q8_0, avx512vnni)
MINT_DECLARE_DOT(iq4_xs_q8_K, avx512vnni)
MINT_DECLARE_DOT(q2_K_q8_K, avx512vnni)
MINT_DECLARE_DOT(q3_K_q8_K, avx512vnni)
MINT_DECLARE_DOT(q4_K_q8_K, avx512vnni)
MINT_DECLARE_DOT(q5_K_q8_K, avx512vnni)
MINT_DECLARE_DOT(q6_K_q8_K, avx512vnni)
MINT_DECLARE_DOT(tq2_0_q8_K, avx512vnni)
MINT_DECLARE_DOT(tq1_0_q8_K, avx512vnni)
MINT_DECLARE_DOT(iq3_xxs_q8_K, avx512vnni) // quant/iquant_x512.h
MINT_DECLARE_DOT(iq3_s_q8_K, avx512vnni)
MINT_DECLARE_DOT(iq2_xxs_q8_K, avx512vnni)
MINT_DECLARE_DOT(iq2_xs_q8_K, avx512vnni)
MINT_DECLARE_DOT(iq2_s_q8_K, avx512vnni)
MINT_DECLARE_GEMM_PACKED(q4_0_q8_0, avx512vnni)
MINT_DECLARE_GEMM_PACKED(q4_1_q8_1, avx512vnni)
MINT_DECLARE_GEMM_PACKED(q5_0_q8_0, avx512vnni)
MINT_DECLARE_GEMM_PACKED(q5_1_q8_1, avx512vnni)
MINT_DECLARE_GEMM_PACKED(q8_0_q8_0, avx512vnni)
MINT_DECLARE_GEMM_PACKED(mxfp4_q8_0, avx512vnni)
MINT_DECLARE_GEMM_PACKED(iq4_nl_q8_0, avx512vnni)
MINT_DECLARE_GEMM_PACKED(iq4_xs_q8_K, avx512vnni)
MINT_DECLARE_GEMM_PACKED(q2_K_q8_K, avx512vnni)
MINT_DECLARE_GEMM_PACKED(q3_K_q8_K, avx512vnni)
MINT_DECLARE_GEMM_PACKED(q4_K_q8_K, avx512vnni)
MINT_DECLARE_GEMM_PACKED(q5_K_q8_K, avx512vnni)
MINT_DECLARE_GEMM_PACKED(q6_K_q8_K, avx512vnni)
MINT_DECLARE_GEMM_PACKED(tq2_0_q8_K, avx512vnni)
MINT_DECLARE_GEMM_PACKED(tq1_0_q8_K, avx512vnni)

#endif // MINT_QUANT_SIMD_AVX512_H
