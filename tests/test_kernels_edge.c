// test_kernels_edge.c - the kernel rules of tests/test_kernels.c on the inputs random data does
// not reach, for every instruction-set level this machine has: activation conversions of zeros,
// exact rounding ties, infinities, f16 overflow and subnormal ranges, and ties for Q8_K's max;
// f16/bf16 conversions including NaN; plain-float dot products whose length is not a multiple of
// the vector width (attention calls them with the head size); and gemm shapes beyond the small
// tiles (a whole 64 x 64 driver tile, and one token against many rows); MXFP4 blocks with the
// extreme E8M0 exponents, on the file's rows and packed.
#include "helpers/hang.h"
#include "mint.h"
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/kernels.h"
#include "quant/pack.h"
#include "quant/types.h"
#include "quant/unpack.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int available(const mint_kernels **out) {
    int n = 0;
    for (int isa = 1; isa < MINT_ISA_COUNT; isa++) {
        const mint_kernels *k = mint_kernels_for((mint_isa)isa);
        if (k) out[n++] = k;
    }
    return n;
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static float frand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

// Converts x with the reference and with every level, and compares the bytes.
static void check_conversion(mint_type t, const float *x, int64_t n, const char *what) {
    const mint_kernels *ref = mint_kernels_for(MINT_ISA_REF), *k[MINT_ISA_COUNT];
    const int nk = available(k);
    const size_t bytes = (size_t)mint_type_nbytes(t, (uint64_t)n);
    uint8_t *a = malloc(bytes), *b = malloc(bytes);
    for (int ki = 0; ki < nk; ki++) {
        memset(a, 0xAA, bytes);
        memset(b, 0x55, bytes);
        ref->t[t].from_float(x, a, n);
        k[ki]->t[t].from_float(x, b, n);
        size_t at = 0;
        while (at < bytes && a[at] == b[at]) at++;
        cr_assert(at == bytes, "%s from_float %s (%s): first difference at byte %zu: %02x vs %02x",
                  k[ki]->name, mint_type_name(t), what, at, b[at], a[at]);
    }
    free(a);
    free(b);
}

// 256 floats of a pattern: the special value v at a few places among ordinary values.
static void pattern(float *x, float v, int every) {
    for (int i = 0; i < 256; i++) x[i] = i % every == 3 ? v : frand();
}

Test(kernels_edge, q8_conversions_of_special_blocks) {
    const mint_type types[] = {MINT_TYPE_Q8_0, MINT_TYPE_Q8_1, MINT_TYPE_Q8_K};
    float x[256];
    for (size_t ti = 0; ti < 3; ti++) {
        const mint_type t = types[ti];
        memset(x, 0, sizeof x);
        check_conversion(t, x, 256, "zeros");
        for (int i = 0; i < 256; i++) x[i] = i == 77 ? -0.0f : 0.0f;
        check_conversion(t, x, 256, "negative zero");
        // amax = 127 gives a multiplier of exactly 1 (Q8_0/Q8_1): halves are RNE ties.
        for (int i = 0; i < 256; i++) x[i] = i % 32 == 0 ? 127.0f : (float)(i % 64) * 0.5f - 15.75f;
        check_conversion(t, x, 256, "ties");
        for (int i = 0; i < 256; i++) x[i] = (float)(i % 17) - 8.5f;
        check_conversion(t, x, 256, "half-integers");
        pattern(x, INFINITY, 50);
        check_conversion(t, x, 256, "+inf");
        pattern(x, -INFINITY, 70);
        check_conversion(t, x, 256, "-inf");
        pattern(x, 3e38f, 40);
        check_conversion(t, x, 256, "huge");
        for (int i = 0; i < 256; i++) x[i] = frand() * 1e-39f;
        check_conversion(t, x, 256, "f32 subnormals");
        for (int i = 0; i < 256; i++) x[i] = frand() * 1e-6f;
        check_conversion(t, x, 256, "scale in f16's subnormal range");
        for (int i = 0; i < 256; i++) x[i] = frand() * 1e7f;
        check_conversion(t, x, 256, "scale beyond f16's range");
    }
    // Q8_K keeps the first element of largest magnitude, whatever its sign.
    for (int i = 0; i < 256; i++) x[i] = frand();
    x[200] = 4.0f;
    x[9] = -4.0f;
    check_conversion(MINT_TYPE_Q8_K, x, 256, "tie for the max, negative first");
    x[9] = 4.0f;
    x[200] = -4.0f;
    check_conversion(MINT_TYPE_Q8_K, x, 256, "tie for the max, positive first");
}

Test(kernels_edge, f16_and_bf16_conversions_of_special_values) {
    // Every class: zeros, f16 overflow boundary (65504 largest, 65520 rounds to inf), f16
    // subnormals and the values that round into or out of them, ties of both formats, NaNs with
    // payloads, infinities, f32 subnormals. Lengths that are not multiples of the vector width.
    const uint32_t bits[] = {
        0x00000000, 0x80000000, 0x477FE000, 0x477FEFFF, 0x477FF000, 0xC77FF000, 0x7F7FFFFF,
        0x38800000, 0x387FC000, 0x33800000, 0x33000000, 0x33000001, 0x32FFFFFF, 0x00000001,
        0x807FFFFF, 0x3F801000, 0x3F803000, 0x3F808000, 0x3F818000, 0x3F807FFF, 0x7F800000,
        0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FBFFFFF, 0x7FFFFFFF, 0x3F800000,
        0x40490FDB, 0xC0490FDB, 0x3DCCCCCD, 0x2F800000, 0x477FFFFF, 0x387FE000, 0x387FF000,
    };
    const int nb = (int)(sizeof bits / sizeof *bits);
    float x[300];
    for (int i = 0; i < 300; i++) {
        const uint32_t u = bits[(i * 3) % nb]; // 3 is prime to nb: every value occurs
        memcpy(&x[i], &u, sizeof u);
    }
    const int64_t lengths[] = {1, 7, 8, 15, 16, 17, 35, 300};
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++) {
        check_conversion(MINT_TYPE_F16, x, lengths[li], "special values");
        check_conversion(MINT_TYPE_BF16, x, lengths[li], "special values");
    }
}

Test(kernels_edge, f16_and_bf16_widening_of_special_values) {
    const mint_kernels *ref = mint_kernels_for(MINT_ISA_REF), *k[MINT_ISA_COUNT];
    const int nk = available(k);
    // f16: zeros, subnormals, largest, infinities, quiet and signalling NaNs with payloads.
    const uint16_t h[] = {0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00,
                          0xFC00, 0x7E00, 0x7D01, 0xFC01, 0x7FFF, 0x3C00, 0xBC00, 0x3555};
    uint16_t x[64];
    for (int i = 0; i < 64; i++) x[i] = h[(i * 5) % 16];
    const mint_type types[] = {MINT_TYPE_F16, MINT_TYPE_BF16};
    for (int ki = 0; ki < nk; ki++)
        for (int ti = 0; ti < 2; ti++)
            for (int64_t n = 1; n <= 64; n += 9) {
                float a[64], b[64];
                ref->t[types[ti]].to_float(x, a, n);
                k[ki]->t[types[ti]].to_float(x, b, n);
                cr_assert(memcmp(a, b, (size_t)n * sizeof *a) == 0, "%s to_float %s n=%lld",
                          k[ki]->name, mint_type_name(types[ti]), (long long)n);
            }
}

// Weight and activation rows of a type for the dot tests (weights quantized with the reference
// quantizer, activations converted with the reference).
typedef struct rows {
    size_t w_stride, a_stride;
    uint8_t *w, *a;
} rows;

static rows make_rows(mint_type wt, int64_t n, int nr, int nc) {
    const mint_kernels *ref = mint_kernels_for(MINT_ISA_REF);
    const mint_type at = ref->t[wt].vec_dot_type;
    rows o = {(size_t)mint_type_nbytes(wt, (uint64_t)n), (size_t)mint_type_nbytes(at, (uint64_t)n),
              NULL, NULL};
    o.w = malloc(o.w_stride * (size_t)nr);
    o.a = malloc(o.a_stride * (size_t)nc);
    float *x = malloc((size_t)n * sizeof *x);
    for (int r = 0; r < nr; r++) {
        for (int64_t i = 0; i < n; i++) x[i] = frand();
        mint_quantizer_ref(wt)(x, o.w + (size_t)r * o.w_stride, n);
    }
    for (int c = 0; c < nc; c++) {
        for (int64_t i = 0; i < n; i++) x[i] = frand();
        ref->t[at].from_float(x, o.a + (size_t)c * o.a_stride, n);
    }
    free(x);
    return o;
}

// gemm of the whole nr x nc block equals vec_dot per element, and writes only inside.
static void check_gemm(const mint_kernels *k, mint_type wt, int64_t n, int nr, int nc) {
    const mint_type_kernels *tk = &k->t[wt];
    if (!tk->gemm) return;
    rows o = make_rows(wt, n, nr, nc);
    const size_t y_stride = (size_t)nr + 3;
    float *y = malloc(sizeof(float) * y_stride * (size_t)(nc + 1));
    for (size_t i = 0; i < y_stride * (size_t)(nc + 1); i++) y[i] = NAN;
    tk->gemm(n, o.w, o.w_stride, nr, o.a, o.a_stride, nc, y, y_stride);
    for (int c = 0; c < nc + 1; c++)
        for (size_t r = 0; r < y_stride; r++) {
            const float g = y[(size_t)c * y_stride + r];
            if (c == nc || r >= (size_t)nr) {
                cr_assert(isnan(g), "%s %s gemm %dx%d wrote outside", k->name, mint_type_name(wt),
                          nr, nc);
                continue;
            }
            float s;
            tk->vec_dot(n, &s, o.w + r * o.w_stride, o.a + (size_t)c * o.a_stride);
            cr_assert(memcmp(&g, &s, sizeof s) == 0,
                      "%s %s n=%lld gemm %dx%d (%zu,%d): %.9g vs %.9g", k->name, mint_type_name(wt),
                      (long long)n, nr, nc, r, c, g, s);
        }
    free(y);
    free(o.w);
    free(o.a);
}

Test(kernels_edge, float_dots_of_any_length) {
    const mint_kernels *ref = mint_kernels_for(MINT_ISA_REF), *k[MINT_ISA_COUNT];
    const int nk = available(k);
    const mint_type types[] = {MINT_TYPE_F32, MINT_TYPE_F16, MINT_TYPE_BF16};
    for (int ki = 0; ki < nk; ki++)
        for (int ti = 0; ti < 3; ti++)
            for (int64_t n = 1; n <= 70; n++) {
                rows o = make_rows(types[ti], n, 1, 1);
                float s_ref, s;
                ref->t[types[ti]].vec_dot(n, &s_ref, o.w, o.a);
                k[ki]->t[types[ti]].vec_dot(n, &s, o.w, o.a);
                // Budget as in test_kernels.c, against sum |w a| <= n for values in [-1, 1].
                cr_assert_leq(fabs((double)s - s_ref), (double)n / (1 << 18), "%s %s n=%lld",
                              k[ki]->name, mint_type_name(types[ti]), (long long)n);
                free(o.w);
                free(o.a);
                if (n % 5 == 0 || n < 12) check_gemm(k[ki], types[ti], n, 7, 5);
            }
}

Test(kernels_edge, gemm_of_driver_tiles_equals_vec_dot, .timeout = MT_HANG(120)) {
    const mint_kernels *k[MINT_ISA_COUNT];
    const int nk = available(k);
    const mint_type types[] = {
        MINT_TYPE_F32,     MINT_TYPE_F16,    MINT_TYPE_BF16,   MINT_TYPE_Q4_0,    MINT_TYPE_Q4_1,
        MINT_TYPE_Q5_0,    MINT_TYPE_Q5_1,   MINT_TYPE_Q8_0,   MINT_TYPE_Q2_K,    MINT_TYPE_Q3_K,
        MINT_TYPE_Q4_K,    MINT_TYPE_Q5_K,   MINT_TYPE_Q6_K,   MINT_TYPE_MXFP4,   MINT_TYPE_TQ1_0,
        MINT_TYPE_TQ2_0,   MINT_TYPE_IQ4_NL, MINT_TYPE_IQ4_XS, MINT_TYPE_IQ3_XXS, MINT_TYPE_IQ3_S,
        MINT_TYPE_IQ2_XXS, MINT_TYPE_IQ2_XS, MINT_TYPE_IQ2_S,  MINT_TYPE_IQ1_S,   MINT_TYPE_IQ1_M,
        MINT_TYPE_Q1_0,    MINT_TYPE_Q2_0};
    for (int ki = 0; ki < nk; ki++)
        for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
            check_gemm(k[ki], types[ti], 256, 64, 64); // a full prompt tile
            check_gemm(k[ki], types[ti], 512, 203, 1); // one token over a thread's rows
        }
}

// MXFP4 rows whose blocks take the E8M0 exponents the quantizer of ordinary data never writes:
// 0 and 1 (half-scales 2^-128 and 2^-127, f32 subnormals, so the block scales d_w * d_a are
// subnormal too), and up to 254 and 255 (2^126, 2^127; 255 is E8M0's NaN, read as ggml reads it)
// against activations small enough (about 1e-4) that the sums stay finite. Every level's vec_dot
// is within the budget of tests/test_kernels.c of the reference, plus a subnormal's rounding per
// block (the reference rounds d_w * d_a * sumi there, the kernels fuse it into the sum), its
// gemm equals its vec_dot, and its gemm_packed over packed rows equals its gemm, bit for bit.
static void check_mxfp4_exponents(const uint8_t *exps, int ne, float act_scale) {
    const mint_kernels *ref = mint_kernels_for(MINT_ISA_REF), *k[MINT_ISA_COUNT];
    const int nk = available(k);
    enum { NB = 9, N = NB * 32, NR = 21, NC = 5 };
    const size_t ws = sizeof(mint_block_mxfp4) * NB, as = sizeof(mint_block_q8_0) * NB;
    uint8_t *w = malloc(ws * NR), *a = malloc(as * NC);
    for (int r = 0; r < NR; r++) // a third of the rows keep one exponent, the others cycle
        for (int b = 0; b < NB; b++) {
            mint_block_mxfp4 *blk = (mint_block_mxfp4 *)(w + (size_t)r * ws) + b;
            blk->e = exps[(r + b * (r % 3)) % ne];
            for (int i = 0; i < 16; i++) blk->qs[i] = (uint8_t)(frand() * 128.0f + 128.0f);
        }
    float x[N];
    for (int c = 0; c < NC; c++) {
        for (int i = 0; i < N; i++) x[i] = frand() * act_scale;
        ref->t[MINT_TYPE_Q8_0].from_float(x, a + (size_t)c * as, N);
    }
    uint8_t *packed = aligned_alloc(64, mint_pack_bytes(MINT_TYPE_MXFP4, N, NR));
    mint_pack_rows_ref(MINT_TYPE_MXFP4, N, w, ws, NR, packed);
    const size_t gb = mint_pack_group_bytes(MINT_TYPE_MXFP4, N);
    float y[NC][NR], z[NC][NR];
    for (int ki = 0; ki < nk; ki++) {
        const mint_type_kernels *tk = &k[ki]->t[MINT_TYPE_MXFP4];
        const char *name = k[ki]->name;
        for (int nc = 1; nc <= NC; nc += NC - 1) {
            tk->gemm(N, w, ws, NR, a, as, nc, &y[0][0], NR);
            if (tk->gemm_packed) tk->gemm_packed(N, packed, gb, NR, a, as, nc, &z[0][0], NR);
            for (int c = 0; c < nc; c++)
                for (int r = 0; r < NR; r++) {
                    const uint8_t *wr = w + (size_t)r * ws, *ac = a + (size_t)c * as;
                    float s, s_ref;
                    tk->vec_dot(N, &s, wr, ac);
                    ref->t[MINT_TYPE_MXFP4].vec_dot(N, &s_ref, wr, ac);
                    cr_assert(memcmp(&y[c][r], &s, sizeof s) == 0,
                              "%s MXFP4 gemm nc=%d (%d,%d): %.9g vs vec_dot %.9g", name, nc, r, c,
                              y[c][r], s);
                    if (tk->gemm_packed)
                        cr_assert(memcmp(&z[c][r], &s, sizeof s) == 0,
                                  "%s MXFP4 gemm_packed nc=%d (%d,%d): %.9g vs %.9g", name, nc, r,
                                  c, z[c][r], s);
                    // sum |w a| in double (a dequantized weight can exceed f32's range).
                    double mag = 0;
                    for (int b = 0; b < NB; b++) {
                        const mint_block_mxfp4 *wb = (const mint_block_mxfp4 *)wr + b;
                        const mint_block_q8_0 *ab = (const mint_block_q8_0 *)ac + b;
                        const double d = ldexp(1.0, wb->e - 128) * fabs(mint_f16_to_f32(ab->d));
                        for (int e = 0; e < 32; e++)
                            mag += d * abs(mint_mxfp4_value(mint_nibble(wb->qs, e)) * ab->qs[e]);
                    }
                    cr_assert(isfinite(s_ref), "reference not finite: pick smaller activations");
                    const double lim = mag / (1 << 18) + NB * ldexp(1.0, -149);
                    cr_assert_leq(fabs((double)s - s_ref), lim,
                                  "%s MXFP4 row %d col %d: %.9g vs ref %.9g (budget %g)", name, r,
                                  c, s, s_ref, lim);
                }
        }
    }
    free(w);
    free(a);
    free(packed);
}

Test(kernels_edge, mxfp4_extreme_exponents) {
    const uint8_t low[] = {0, 1, 2, 3, 127, 128};
    check_mxfp4_exponents(low, (int)sizeof low, 1.0f);
    const uint8_t high[] = {200, 253, 254, 255};
    check_mxfp4_exponents(high, (int)sizeof high, 1e-4f);
}
