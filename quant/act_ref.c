// act_ref.c - reference activation quantizers: how f32 activations are converted to Q8_0, Q8_1
// and Q8_K before a matmul with a quantized weight (docs/formats.md 2.5).
//
// This rounding is the largest single difference between "dequantize and multiply in f32" and
// what llama.cpp computes (about 0.5 % per dot product), so it is reproduced exactly. For Q8_0
// and Q8_1 mint follows llama.cpp's x86 CPU backend (AVX/AVX2 quantize_row_q8_0/q8_1), which the
// reference outputs were made with: the multiplier is 127/amax and the rounding is RNE. ggml's
// generic C (and hence its *weight* quantizer, quantize_row_q8_0_ref) uses 1/d and roundf
// instead, which differs in about 1 element in 40 000. Q8_K uses ggml's reference formula on
// every platform.
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/ref.h"

#include <math.h>

// Largest |x| over n values.
static float absmax(const float *x, int n) {
    float amax = 0.0f;
    for (int j = 0; j < n; j++) amax = amax > fabsf(x[j]) ? amax : fabsf(x[j]);
    return amax;
}

// d = amax/127 (stored as f16), q = RNE(x * (127/amax)) in f32; an all-zero block gives d = 0,
// q = 0. |x * 127/amax| <= 127 up to one rounding, which RNE brings back to 127.
void quantize_row_q8_0_act_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q8_0 *y = vy;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK) {
        float amax = absmax(x, MINT_QK);
        float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[ib].d = mint_f32_to_f16(amax / 127.0f);
        for (int j = 0; j < MINT_QK; j++) y[ib].qs[j] = (int8_t)mint_nearest_int(x[j] * id);
    }
}

// As Q8_0, plus s = f16(d * sum(q)) with the unrounded f32 d (the *_1 dots add m_w * s, so the
// f16 rounding of s is part of what llama.cpp computes).
void quantize_row_q8_1_act_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q8_1 *y = vy;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++, x += MINT_QK) {
        float amax = absmax(x, MINT_QK);
        float d = amax / 127.0f;
        float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[ib].d = mint_f32_to_f16(d);
        int sum = 0;
        for (int j = 0; j < MINT_QK; j++) {
            y[ib].qs[j] = (int8_t)mint_nearest_int(x[j] * id);
            sum += y[ib].qs[j];
        }
        y[ib].s = mint_f32_to_f16(d * (float)sum);
    }
}

// max = the signed value of largest |x| (first on ties), iscale = -127/max,
// q = min(127, RNE(iscale * x)), d = 1/iscale as f32 (negative when max > 0: d * q is what
// counts), bsums = sums of each 16 quants. An all-zero block gives d = 0 and zero quants; ggml
// leaves its bsums unwritten there, mint writes zeros so that the bytes are defined.
void quantize_row_q8_K_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q8_K *y = vy;
    for (int64_t i = 0; i < n / MINT_QK_K; i++, x += MINT_QK_K) {
        float max = 0, amax = 0;
        for (int j = 0; j < MINT_QK_K; j++) {
            if (fabsf(x[j]) > amax) {
                amax = fabsf(x[j]);
                max = x[j];
            }
        }
        if (amax == 0.0f) {
            memset(&y[i], 0, sizeof y[i]);
            continue;
        }
        float iscale = -127.0f / max;
        for (int j = 0; j < MINT_QK_K; j++) {
            int v = mint_nearest_int(iscale * x[j]);
            y[i].qs[j] = (int8_t)(v < 127 ? v : 127);
        }
        for (int g = 0; g < MINT_QK_K / 16; g++) {
            int sum = 0;
            for (int l = 0; l < 16; l++) sum += y[i].qs[16 * g + l];
            y[i].bsums[g] = (int16_t)sum;
        }
        y[i].d = 1 / iscale;
    }
}
