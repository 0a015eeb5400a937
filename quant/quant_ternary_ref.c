// quant_ternary_ref.c - reference (de)quantizers of the ternary types TQ1_0 and TQ2_0 (ggml
// types 34 and 35, quant/blocks.h): every weight is -1, 0 or +1 times one f16 scale per 256,
// as BitNet b1.58 and the TriLMs are trained. The scale is the block's largest |x| and each x
// rounds to the nearest of -d, 0, d (lroundf(x / d): halves away from zero), so a file
// quantized from a ternary model is exact and anything else loses a lot.
//
// The quantizers are llama-quantize's (quantize_tq1_0 / quantize_tq2_0 ignore an importance
// matrix), operation for operation: the same bytes.
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/ref.h"
#include "quant/unpack.h"

#include <math.h>

// The block's largest |x| (0 for zeros), compared as ggml's MAX(amax, |x|) does, so that a NaN
// is kept only until the next element replaces it.
static float block_amax(const float *x) {
    float amax = 0.0f;
    for (int j = 0; j < MINT_QK_K; j++) {
        const float v = fabsf(x[j]);
        amax = amax > v ? amax : v;
    }
    return amax;
}

// x / d rounded to -1, 0, 1 and offset to 0, 1, 2 (id = 1/d, 0 for an all-zero block).
static int trit_of(float x, float id) {
    return (int)lroundf(x * id) + 1;
}

// Five trits (most significant first) as a fraction of 243 scaled to a byte, rounded up so that
// reading trit t back ((b * 3^t mod 256) * 3 >> 8) finds it. The base-3 number is kept in a
// byte as ggml keeps it (only a NaN input makes a "trit" that could wrap it).
static uint8_t pack5(const int *t) {
    uint8_t v = 0;
    for (int k = 0; k < 5; k++) v = (uint8_t)(v * 3 + t[k]);
    return (uint8_t)(((unsigned)v * 256 + 242) / 243);
}

void quantize_row_tq1_0_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_tq1_0 *y = vy;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float *xb = x + i * MINT_QK_K;
        const float d = block_amax(xb), id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = mint_f32_to_f16(d);
        int t[5];
        for (int m = 0; m < 32; m++) { // elements m + 32k
            for (int k = 0; k < 5; k++) t[k] = trit_of(xb[m + 32 * k], id);
            y[i].qs[m] = pack5(t);
        }
        for (int m = 0; m < 16; m++) { // elements 160 + m + 16k
            for (int k = 0; k < 5; k++) t[k] = trit_of(xb[160 + m + 16 * k], id);
            y[i].qs[32 + m] = pack5(t);
        }
        for (int j = 0; j < 4; j++) { // elements 240 + j + 4k, a zero fifth trit
            for (int k = 0; k < 4; k++) t[k] = trit_of(xb[240 + j + 4 * k], id);
            t[4] = 0;
            y[i].qh[j] = pack5(t);
        }
    }
}

void quantize_row_tq2_0_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_tq2_0 *y = vy;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float *xb = x + i * MINT_QK_K;
        const float d = block_amax(xb), id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = mint_f32_to_f16(d);
        for (int h = 0; h < 2; h++)
            for (int m = 0; m < 32; m++) {
                unsigned b = 0;
                for (int l = 0; l < 4; l++)
                    b |= (unsigned)(trit_of(xb[128 * h + 32 * l + m], id) & 3) << (2 * l);
                y[i].qs[32 * h + m] = (uint8_t)b;
            }
    }
}

// y = (trit - 1) * d per element, as ggml's to_float (an integer converted, times the f32 scale).
void dequantize_row_tq1_0_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_tq1_0 *x = vx;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float d = mint_f16_to_f32(x[i].d);
        for (int e = 0; e < MINT_QK_K; e++)
            y[i * MINT_QK_K + e] = (float)(mint_tq1_trit(x[i].qs, x[i].qh, e) - 1) * d;
    }
}

void dequantize_row_tq2_0_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_tq2_0 *x = vx;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        const float d = mint_f16_to_f32(x[i].d);
        for (int e = 0; e < MINT_QK_K; e++)
            y[i * MINT_QK_K + e] = (float)(mint_q2_bits(x[i].qs, e) - 1) * d;
    }
}
