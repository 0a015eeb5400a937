// float_ref.c - reference conversions for the plain float types F32, F16 and BF16.
//
// Weights and activations round the same way for these types (RNE), so one function serves as
// llama-quantize's F16/BF16 writer and as the activation conversion for F16/BF16 weights.
#include "quant/fp16.h"
#include "quant/ref.h"

#include <string.h>

void dequantize_row_f32_ref(const void *restrict x, float *restrict y, int64_t n) {
    memcpy(y, x, (size_t)n * sizeof(float));
}

void dequantize_row_f16_ref(const void *restrict x, float *restrict y, int64_t n) {
    const uint16_t *h = x;
    for (int64_t i = 0; i < n; i++) y[i] = mint_f16_to_f32(h[i]);
}

void dequantize_row_bf16_ref(const void *restrict x, float *restrict y, int64_t n) {
    const uint16_t *h = x;
    for (int64_t i = 0; i < n; i++) y[i] = mint_bf16_to_f32(h[i]);
}

void quantize_row_f32_ref(const float *restrict x, void *restrict y, int64_t n) {
    memcpy(y, x, (size_t)n * sizeof(float));
}

void quantize_row_f16_ref(const float *restrict x, void *restrict y, int64_t n) {
    uint16_t *h = y;
    for (int64_t i = 0; i < n; i++) h[i] = mint_f32_to_f16(x[i]);
}

void quantize_row_bf16_ref(const float *restrict x, void *restrict y, int64_t n) {
    uint16_t *h = y;
    for (int64_t i = 0; i < n; i++) h[i] = mint_f32_to_bf16(x[i]);
}
