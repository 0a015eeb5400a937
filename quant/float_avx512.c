// float_avx512.c - F32, F16 and BF16 dot products, register-blocked gemm and conversions, with
// AVX-512F (+F16C widths of it): Skylake-X, Ice Lake, Zen 4.
//
// One output element is always accumulated the same way: a single 16-lane f32 accumulator takes
// one fused multiply-add per 16 elements in order (the last, partial group with masked-off lanes
// reading as zero), then x512_hsum adds the lanes. vec_dot, the one-token path and the tiles all
// run exactly this per element, so they agree bit for bit. The tiles reuse each loaded (and
// widened) weight vector for 6 activation rows and each activation vector for 4 weight rows;
// one token over packed rows (quant/pack.h) runs 16 rows' chains side by side.
#include "quant/simd_avx512.h"
#include "quant/fp16.h"
#include "quant/pack.h"

// ---------------------------------------------------------------------------------------------
// Loads: 16 elements of each float type as f32 (exact); lanes >= m read as 0 and touch nothing.

X512_ALWAYS_INLINE __m512 load_f32(const void *p, int64_t i, __mmask16 m) {
    const float *f = (const float *)p + i;
    return m == 0xFFFF ? _mm512_loadu_ps(f) : _mm512_maskz_loadu_ps(m, f);
}

X512_ALWAYS_INLINE __m512 load_f16(const void *p, int64_t i, __mmask16 m) {
    const uint16_t *h = (const uint16_t *)p + i;
    return _mm512_cvtph_ps(m == 0xFFFF ? _mm256_loadu_si256((const __m256i *)h)
                                       : _mm256_maskz_loadu_epi16(m, h));
}

// bf16 is the top half of an f32: widen to 32 bits and shift into place.
X512_ALWAYS_INLINE __m512 load_bf16(const void *p, int64_t i, __mmask16 m) {
    const uint16_t *b = (const uint16_t *)p + i;
    const __m256i h =
        m == 0xFFFF ? _mm256_loadu_si256((const __m256i *)b) : _mm256_maskz_loadu_epi16(m, b);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

typedef __m512 (*load_fn)(const void *p, int64_t i, __mmask16 m);

// ---------------------------------------------------------------------------------------------
// The tile: R weight rows x C activation rows (at most TILE_R x TILE_C), full length n. Rows
// past nr and columns past nc are computed on a clamped (valid) row and not stored, so edge
// tiles need no other code.
enum { TILE_R = 4, TILE_C = 6 };

// acc[r][c] += w row r . a row c over elements i..i+15 (lanes outside m read as 0). Weight row
// r's chunk of elements i..i+15 starts at wr[r] + i / 16 * wstep: wstep is 16 elements in the
// file's layout, 16 rows of 16 elements in a packed group (quant/pack.h).
X512_ALWAYS_INLINE void tile_step(load_fn load, size_t wstep, int R, int C, const char *const *wr,
                                  const char *const *ac, int64_t i, __mmask16 m,
                                  __m512 acc[TILE_R][TILE_C]) {
    // One activation vector at a time: 24 accumulators, 4 weight vectors and 1 activation
    // vector fit the 32 registers (all six activations at once made gcc spill accumulators).
    __m512 wv[TILE_R];
    X512_UNROLL for (int r = 0; r < R; r++) wv[r] = load(wr[r] + (size_t)(i / 16) * wstep, 0, m);
    X512_UNROLL for (int c = 0; c < C; c++) {
        const __m512 av = load(ac[c], i, m);
        X512_UNROLL for (int r = 0; r < R; r++) acc[r][c] = _mm512_fmadd_ps(wv[r], av, acc[r][c]);
    }
}

// y[0..left) (at most 4) = the horizontal sums of quad[0..left), x512_hsum4 adding exactly as
// x512_hsum does.
X512_ALWAYS_INLINE void store_sums4(const __m512 quad[4], float *y, int left) {
    if (left <= 0) return;
    const __m512 s = _mm512_permutexvar_ps(
        _mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), x512_hsum4(quad));
    _mm_mask_storeu_ps(y, (__mmask8)(left >= 4 ? 0xF : (1u << left) - 1),
                       _mm512_castps512_ps128(s));
}

// Row r of the tile starts at w + r * w_stride (its first chunk), its chunks wstep apart.
X512_ALWAYS_INLINE void tile(load_fn load, size_t wstep, int R, int C, int64_t n, const char *w,
                             size_t w_stride, int nr, const char *a, size_t a_stride, int nc,
                             float *y, size_t y_stride) {
    const char *wr[TILE_R], *ac[TILE_C];
    X512_UNROLL for (int r = 0; r < R; r++) wr[r] = w + (size_t)(r < nr ? r : nr - 1) * w_stride;
    X512_UNROLL for (int c = 0; c < C; c++) ac[c] = a + (size_t)(c < nc ? c : nc - 1) * a_stride;
    __m512 acc[TILE_R][TILE_C];
    X512_UNROLL for (int r = 0; r < R; r++) {
        X512_UNROLL for (int c = 0; c < C; c++) acc[r][c] = _mm512_setzero_ps();
    }
    // Whole vectors with plain loads, then the tail (if any) with masked ones: the same sequence
    // of fused multiply-adds as dot_float.
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) tile_step(load, wstep, R, C, wr, ac, i, 0xFFFF, acc);
    if (i < n) tile_step(load, wstep, R, C, wr, ac, i, x512_mask16((int)(n - i)), acc);
    X512_UNROLL for (int c = 0; c < C; c++) {
        if (c >= nc) continue;
        X512_UNROLL for (int r = 0; r < R; r += 4) {
            const __m512 quad[4] = {acc[r][c], acc[r + 1][c], acc[r + 2][c], acc[r + 3][c]};
            store_sums4(quad, y + (size_t)c * y_stride + r, nr - r);
        }
    }
}

X512_ALWAYS_INLINE float dot_float(load_fn load, int64_t n, const void *w, const void *a) {
    __m512 acc = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) acc = _mm512_fmadd_ps(load(w, i, 0xFFFF), load(a, i, 0xFFFF), acc);
    if (i < n) {
        const __mmask16 m = x512_mask16((int)(n - i));
        acc = _mm512_fmadd_ps(load(w, i, m), load(a, i, m), acc);
    }
    return x512_hsum(acc);
}

// The whole gemm contract for one float type over the file's layout (a level's `gemm`; the
// packed form below is what AVX-512 generation reads): one token takes the rows one after
// another (one sequential weight stream), a batch 4 x 6 tiles (24 accumulators). In this layout
// rows read side by side are as many short streams (a TinyLlama F16 row is 4 KB) that the
// hardware prefetcher restarts on every row: two rows side by side, with one chain each, ran at
// a median 7.26 tokens/s (7.18-7.34) against one row's 12.69 (12.29-13.04) (three interleaved
// rounds of `mint-bench -m tinyllama-F16.gguf -t 1 -p 0 -n 64 -r 2`).
// One row at a time is bound instead by its one chain, a fused multiply-add's latency per 16
// elements; the packed layout removes both limits.
X512_ALWAYS_INLINE void gemm_float(load_fn load, size_t es, int64_t n, const void *vw,
                                   size_t w_stride, int nr, const void *va, size_t a_stride, int nc,
                                   float *y, size_t y_stride) {
    const char *w = vw, *a = va;
    if (nc == 1) {
        for (int r = 0; r < nr; r++) y[r] = dot_float(load, n, w + (size_t)r * w_stride, a);
        return;
    }
    for (int c = 0; c < nc; c += TILE_C)
        for (int r = 0; r < nr; r += TILE_R)
            tile(load, 16 * es, TILE_R, TILE_C, n, w + (size_t)r * w_stride, w_stride, nr - r,
                 a + (size_t)c * a_stride, a_stride, nc - c, y + (size_t)c * y_stride + r,
                 y_stride);
}

// Packed float streams ask for the bytes 16 KiB ahead into L2 as they consume a chunk of 16
// rows (512 bytes of F16). F16 generation on TinyLlama's shape, `mint-bench -p 0 -n 64 -r 2`,
// builds interleaved round by round, median tokens/s (range) at t=1 and t=2: no prefetch (6
// rounds) 10.95 (10.70-13.56) and 23.4 (22.1-24.3); 8 KiB into L1 (9) 13.6 (12.5-14.1) and 25.3
// (19.0-26.0); 16 KiB into L2 (6) 14.3 (11.5-14.6) and 25.1 (19.4-27.7); 32 KiB into L2 (3) 11.4
// (10.8-14.5) and 24.1 (16.5-28.1). The machine varied 20-30% between rounds.
enum { FLOAT_PF_AHEAD = 16384 };

// One token over one packed group of 16 rows (quant/pack.h): 16 accumulator chains side by side,
// each row's the chain dot_float runs, fed from one stream through the group. Rows past `rows`
// are the group's zero padding, computed and not stored.
X512_ALWAYS_INLINE void group_one_token(load_fn load, size_t es, int64_t n, const char *g,
                                        const char *a, float *y, int rows) {
    __m512 acc[MINT_PACK_ROWS];
    X512_UNROLL for (int r = 0; r < MINT_PACK_ROWS; r++) acc[r] = _mm512_setzero_ps();
    for (int64_t k = 0; k < n / 16; k++) {
        const __m512 av = load(a, 16 * k, 0xFFFF);
        const char *p = g + mint_pack_chunk_at(es, k, 0);
        for (size_t o = 0; o < mint_pack_chunk_at(es, 1, 0); o += 64)
            _mm_prefetch(p + FLOAT_PF_AHEAD + o, _MM_HINT_T1);
        X512_UNROLL for (int r = 0; r < MINT_PACK_ROWS; r++) acc[r] =
            _mm512_fmadd_ps(load(p + (size_t)r * 16 * es, 0, 0xFFFF), av, acc[r]);
    }
    X512_UNROLL for (int r = 0; r < MINT_PACK_ROWS; r += 4) store_sums4(acc + r, y + r, rows - r);
}

// gemm_float over packed groups (w: the first group, g_stride: bytes per group, n a multiple of
// 16): one token a group at a time, a batch in the same 4 x 6 tiles as the file's layout, four
// rows of a group read with their chunks 16 rows apart.
X512_ALWAYS_INLINE void gemm_float_packed(load_fn load, size_t es, int64_t n, const void *vw,
                                          size_t g_stride, int nr, const void *va, size_t a_stride,
                                          int nc, float *y, size_t y_stride) {
    const char *w = vw, *a = va;
    if (nc == 1) {
        for (int r = 0; r < nr; r += MINT_PACK_ROWS)
            group_one_token(load, es, n, w + (size_t)(r / MINT_PACK_ROWS) * g_stride, a, y + r,
                            nr - r);
        return;
    }
    for (int c = 0; c < nc; c += TILE_C)
        for (int r = 0; r < nr; r += TILE_R)
            tile(load, mint_pack_chunk_at(es, 1, 0), TILE_R, TILE_C, n,
                 w + (size_t)(r / MINT_PACK_ROWS) * g_stride +
                     mint_pack_chunk_at(es, 0, r % MINT_PACK_ROWS),
                 16 * es, nr - r, a + (size_t)c * a_stride, a_stride, nc - c,
                 y + (size_t)c * y_stride + r, y_stride);
}

// ---------------------------------------------------------------------------------------------
// Entry points.

// *s = w . a over f32 (one accumulator chain, then x512_hsum).
void vec_dot_f32_f32_avx512(int64_t n, float *restrict s, const void *restrict w,
                            const void *restrict a) {
    *s = dot_float(load_f32, n, w, a);
}

// *s = w . a over f16, widened with vcvtph2ps.
void vec_dot_f16_f16_avx512(int64_t n, float *restrict s, const void *restrict w,
                            const void *restrict a) {
    *s = dot_float(load_f16, n, w, a);
}

// *s = w . a over bf16, widened by a 16-bit shift.
void vec_dot_bf16_bf16_avx512(int64_t n, float *restrict s, const void *restrict w,
                              const void *restrict a) {
    *s = dot_float(load_bf16, n, w, a);
}

// y[c * y_stride + r] = w row r . a row c, each element as vec_dot_f32_f32_avx512 computes it.
void gemm_f32_f32_avx512(int64_t n, const void *restrict w, size_t w_stride, int nr,
                         const void *restrict a, size_t a_stride, int nc, float *restrict y,
                         size_t y_stride) {
    gemm_float(load_f32, 4, n, w, w_stride, nr, a, a_stride, nc, y, y_stride);
}

// As gemm_f32_f32_avx512 over f16 rows.
void gemm_f16_f16_avx512(int64_t n, const void *restrict w, size_t w_stride, int nr,
                         const void *restrict a, size_t a_stride, int nc, float *restrict y,
                         size_t y_stride) {
    gemm_float(load_f16, 2, n, w, w_stride, nr, a, a_stride, nc, y, y_stride);
}

// As gemm_f32_f32_avx512 over bf16 rows.
void gemm_bf16_bf16_avx512(int64_t n, const void *restrict w, size_t w_stride, int nr,
                           const void *restrict a, size_t a_stride, int nc, float *restrict y,
                           size_t y_stride) {
    gemm_float(load_bf16, 2, n, w, w_stride, nr, a, a_stride, nc, y, y_stride);
}

// gemm_f32_f32_avx512 over rows packed by quant/pack.h (w: the first group, w_stride: bytes per
// group), bit for bit.
void gemm_packed_f32_f32_avx512(int64_t n, const void *restrict w, size_t w_stride, int nr,
                                const void *restrict a, size_t a_stride, int nc, float *restrict y,
                                size_t y_stride) {
    gemm_float_packed(load_f32, 4, n, w, w_stride, nr, a, a_stride, nc, y, y_stride);
}

// gemm_f16_f16_avx512 over packed rows, bit for bit.
void gemm_packed_f16_f16_avx512(int64_t n, const void *restrict w, size_t w_stride, int nr,
                                const void *restrict a, size_t a_stride, int nc, float *restrict y,
                                size_t y_stride) {
    gemm_float_packed(load_f16, 2, n, w, w_stride, nr, a, a_stride, nc, y, y_stride);
}

// gemm_bf16_bf16_avx512 over packed rows, bit for bit.
void gemm_packed_bf16_bf16_avx512(int64_t n, const void *restrict w, size_t w_stride, int nr,
                                  const void *restrict a, size_t a_stride, int nc,
                                  float *restrict y, size_t y_stride) {
    gemm_float_packed(load_bf16, 2, n, w, w_stride, nr, a, a_stride, nc, y, y_stride);
}

// y = f16(x), RNE (vcvtps2ph, imm 0), then NaN lanes rewritten as sign | 0x7E00 because the
// reference (like ggml's software conversion) drops a NaN's payload where the instruction keeps
// its top bits.
void quantize_row_f16_avx512(const float *restrict x, void *restrict vy, int64_t n) {
    uint16_t *y = vy;
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = x512_mask16((int)(n - i < 16 ? n - i : 16));
        const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        if (nan) {
            const __m256i sign = _mm256_and_si256(
                _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_castps_si512(v), 16)),
                _mm256_set1_epi16((short)0x8000));
            h = _mm256_mask_mov_epi16(h, nan, _mm256_or_si256(sign, _mm256_set1_epi16(0x7E00)));
        }
        _mm256_mask_storeu_epi16(y + i, m, h);
    }
}

// y = bf16(x): RNE on the dropped 16 bits in integer arithmetic, NaN forced quiet (bit 6), as
// mint_f32_to_bf16.
void quantize_row_bf16_avx512(const float *restrict x, void *restrict vy, int64_t n) {
    uint16_t *y = vy;
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = x512_mask16((int)(n - i < 16 ? n - i : 16));
        const __m512i u = _mm512_maskz_loadu_epi32(m, x + i);
        const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
        __m512i r = _mm512_srli_epi32(
            _mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7FFF))), 16);
        const __mmask16 nan = _mm512_cmpgt_epu32_mask(
            _mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF)), _mm512_set1_epi32(0x7F800000));
        r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
        _mm256_mask_storeu_epi16(y + i, m, _mm512_cvtepi32_epi16(r));
    }
}

// y = f32(x) for f16 x (exact widening). vcvtph2ps quiets a signalling NaN; mint_f16_to_f32
// keeps its payload as it is (sign | 0x7F800000 | mant << 13), so NaN lanes are rebuilt so.
void dequantize_row_f16_avx512(const void *restrict x, float *restrict y, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = x512_mask16((int)(n - i < 16 ? n - i : 16));
        const __m512i h =
            _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, (const uint16_t *)x + i));
        __m512 v = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(h));
        const __m512i mag = _mm512_and_si512(h, _mm512_set1_epi32(0x7FFF));
        const __mmask16 nan = _mm512_cmpgt_epi32_mask(mag, _mm512_set1_epi32(0x7C00));
        if (nan) {
            const __m512i sign =
                _mm512_slli_epi32(_mm512_and_si512(h, _mm512_set1_epi32(0x8000)), 16);
            const __m512i mant =
                _mm512_slli_epi32(_mm512_and_si512(h, _mm512_set1_epi32(0x3FF)), 13);
            const __m512i bits =
                _mm512_or_si512(_mm512_or_si512(sign, mant), _mm512_set1_epi32(0x7F800000));
            v = _mm512_mask_mov_ps(v, nan, _mm512_castsi512_ps(bits));
        }
        _mm512_mask_storeu_ps(y + i, m, v);
    }
}

// y = f32(x) for bf16 x (exact widening).
void dequantize_row_bf16_avx512(const void *restrict x, float *restrict y, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = x512_mask16((int)(n - i < 16 ? n - i : 16));
        _mm512_mask_storeu_ps(y + i, m, load_bf16(x, i, m));
    }
}
