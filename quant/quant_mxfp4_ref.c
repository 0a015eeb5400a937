// quant_mxfp4_ref.c - reference (de)quantizer of MXFP4 (ggml type 39, quant/blocks.h): 32 E2M1
// values under one E8M0 power-of-two scale, the format of gpt-oss's expert weights.
//
// The quantizer is llama.cpp's reference one (what llama-quantize writes for an MXFP4 tensor,
// importance matrix or not), operation for operation, so that it writes the same bytes:
//   e = floor(log2(amax)) - 2 + 127 (amax = the largest |x| of the block, 0 for an all-zero one),
//       computed in f32 with the C library's log2f, then converted to a byte the way x86 converts
//       an f32 to an integer (truncation; an out-of-range or non-finite value wraps: see
//       e8m0_of);
//   d = 2^(e - 128) (quant/fp16.h: half the scale, the table being doubled);
//   q = the first code i of the table (quant/unpack.h) with the smallest |value(i) * d - x|.
// The exponent leaves the largest |x| between 4 and 8 times the scale, so it maps near the
// table's top (6 = code 7's value over 2); values past 6 * 2^(e-127) clamp to +-6 by the search.
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/ref.h"
#include "quant/unpack.h"

#include <math.h>

// y = value(q) * 2^(e - 128) per element (ggml's to_float: an int8 times the f32 half-scale).
void dequantize_row_mxfp4_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_mxfp4 *x = vx;
    for (int64_t i = 0; i < n / MINT_QK; i++) {
        const float d = mint_e8m0_half_to_f32(x[i].e);
        for (int e = 0; e < MINT_QK; e++)
            y[i * MINT_QK + e] = (float)mint_mxfp4_value(mint_nibble(x[i].qs, e)) * d;
    }
}

// The byte an f32 exponent value becomes through a C (uint8_t) cast as x86 compilers emit it:
// cvttss2si to a 32-bit integer (0x80000000 for NaN, infinities and anything out of range), then
// its low byte. Only reached out of [0, 255] for blocks whose largest |x| is below 2^-125 or
// infinite; written out so the reference has no undefined conversion.
static uint8_t e8m0_of(float v) {
    int32_t i = v >= -2147483648.0f && v < 2147483648.0f ? (int32_t)v : INT32_MIN;
    return (uint8_t)((uint32_t)i & 0xFF);
}

// The code whose value times d is nearest to x; the first one wins a tie (strict <), so 0 (code
// 0, not 8) for zeros, and code 0 for a NaN x (no comparison with NaN is true).
static int nearest_code(float x, float d) {
    int best = 0;
    float best_err = fabsf((float)mint_mxfp4_value(0) * d - x);
    for (int q = 1; q < 16; q++) {
        const float err = fabsf((float)mint_mxfp4_value(q) * d - x);
        if (err < best_err) {
            best = q;
            best_err = err;
        }
    }
    return best;
}

void quantize_row_mxfp4_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_mxfp4 *y = vy;
    for (int64_t i = 0; i < n / MINT_QK; i++) {
        const float *xb = x + i * MINT_QK;
        float amax = 0.0f;
        for (int j = 0; j < MINT_QK; j++)
            if (amax < fabsf(xb[j])) amax = fabsf(xb[j]);
        // f32 arithmetic as written: floorf's result minus 2 plus 127, each step exact.
        y[i].e = amax > 0.0f ? e8m0_of(floorf(log2f(amax)) - 2 + 127) : 0;
        const float d = mint_e8m0_half_to_f32(y[i].e);
        for (int j = 0; j < MINT_QK / 2; j++)
            y[i].qs[j] =
                (uint8_t)(nearest_code(xb[j], d) | nearest_code(xb[j + MINT_QK / 2], d) << 4);
    }
}
