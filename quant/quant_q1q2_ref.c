// quant_q1q2_ref.c - reference (de)quantizers and dot products of Q1_0 and Q2_0 (ggml types 41
// and 42, quant/blocks_q1q2.h).
//
// Q1_0 keeps only each weight's sign, times the block's mean |x| (the least-squares scale of a
// sign code); Q2_0 rounds x / amax to the levels -1, 0, 1, 2 (only the largest weight itself
// reaches +1, so 2 is used by nothing llama-quantize writes from finite input). llama-quantize
// makes both with no search and passes an importance matrix to a quantizer that does not read
// it, so these are its bytes with or without one (quant/quant_rows_ref.c).
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/ref.h"

#include <math.h>

void quantize_row_q1_0_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q1_0 *y = vy;
    for (int64_t i = 0; i < n / MINT_QK1_0; i++) {
        const float *xb = x + i * MINT_QK1_0;
        float sum_abs = 0.0f; // summed in element order, one rounding per add, as ggml does
        for (int j = 0; j < MINT_QK1_0; j++) sum_abs += fabsf(xb[j]);
        y[i].d = mint_f32_to_f16(sum_abs / MINT_QK1_0);
        for (int j = 0; j < MINT_QK1_0 / 8; j++) {
            unsigned b = 0;
            for (int k = 0; k < 8; k++) b |= (unsigned)(xb[8 * j + k] >= 0.0f) << k; // NaN: 0
            y[i].qs[j] = (uint8_t)b;
        }
    }
}

// x * (1 / amax) rounded half away from zero, offset by 1 and clamped to the codes 0..3. A
// product that is not a number or does not fit an int (a block whose amax is so small that its
// inverse is inf) gives code 0: that is what ggml's (int)roundf(..) + 1 gives on x86, where
// the conversion of such a float is INT_MIN, written here without the undefined conversion.
static int q2_code(float x, float id) {
    const float r = roundf(x * id);
    if (!(r >= -2147483648.0f && r < 2147483648.0f)) return 0;
    const int q = (int)r + 1;
    return q < 0 ? 0 : q > 3 ? 3 : q;
}

void quantize_row_q2_0_ref(const float *restrict x, void *restrict vy, int64_t n) {
    mint_block_q2_0 *y = vy;
    for (int64_t i = 0; i < n / MINT_QK2_0; i++) {
        const float *xb = x + i * MINT_QK2_0;
        float amax = 0.0f;
        for (int j = 0; j < MINT_QK2_0; j++) {
            const float a = fabsf(xb[j]);
            if (a > amax) amax = a; // a NaN never replaces the running maximum
        }
        const float id = amax > 0.0f ? 1.0f / amax : 0.0f;
        y[i].d = mint_f32_to_f16(amax);
        for (int j = 0; j < MINT_QK2_0 / 4; j++) {
            unsigned b = 0;
            for (int k = 0; k < 4; k++) b |= (unsigned)q2_code(xb[4 * j + k], id) << (2 * k);
            y[i].qs[j] = (uint8_t)b;
        }
    }
}

void dequantize_row_q1_0_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_q1_0 *x = vx;
    for (int64_t i = 0; i < n / MINT_QK1_0; i++) {
        const float d = mint_f16_to_f32(x[i].d);
        for (int e = 0; e < MINT_QK1_0; e++)
            y[i * MINT_QK1_0 + e] = (x[i].qs[e / 8] >> (e % 8)) & 1 ? d : -d;
    }
}

// y = (q - 1) * d: the integer converted, times the f32 scale (0 * inf is NaN, as in ggml).
void dequantize_row_q2_0_ref(const void *restrict vx, float *restrict y, int64_t n) {
    const mint_block_q2_0 *x = vx;
    for (int64_t i = 0; i < n / MINT_QK2_0; i++) {
        const float d = mint_f16_to_f32(x[i].d);
        for (int e = 0; e < MINT_QK2_0; e++)
            y[i * MINT_QK2_0 + e] = (float)(((x[i].qs[e / 4] >> (2 * (e % 4))) & 3) - 1) * d;
    }
}

// Q1_0 . Q8_0: a Q1_0 block spans four Q8_0 blocks. Per activation block, the exact sum of +-a
// times its d_a is added to the weight block's float sum, which is then scaled by d_w and added
// to the total: ggml's generic order, one rounding per operation.
void vec_dot_q1_0_q8_0_ref(int64_t n, float *restrict s, const void *restrict vw,
                           const void *restrict va) {
    const mint_block_q1_0 *w = vw;
    const mint_block_q8_0 *a = va;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK1_0; i++) {
        float sumb = 0.0f;
        for (int k = 0; k < MINT_QK1_0 / MINT_QK; k++) {
            const mint_block_q8_0 *ab = &a[i * (MINT_QK1_0 / MINT_QK) + k];
            int sumi = 0;
            for (int e = 0; e < MINT_QK; e++) {
                const int bit = (w[i].qs[(MINT_QK * k + e) / 8] >> (e % 8)) & 1;
                sumi += bit ? ab->qs[e] : -ab->qs[e];
            }
            sumb += mint_f16_to_f32(ab->d) * (float)sumi;
        }
        sum += mint_f16_to_f32(w[i].d) * sumb;
    }
    *s = sum;
}

// Q2_0 . Q8_0: a Q2_0 block spans two Q8_0 blocks, summed as Q1_0's four are.
void vec_dot_q2_0_q8_0_ref(int64_t n, float *restrict s, const void *restrict vw,
                           const void *restrict va) {
    const mint_block_q2_0 *w = vw;
    const mint_block_q8_0 *a = va;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK2_0; i++) {
        float sumb = 0.0f;
        for (int k = 0; k < MINT_QK2_0 / MINT_QK; k++) {
            const mint_block_q8_0 *ab = &a[i * (MINT_QK2_0 / MINT_QK) + k];
            int sumi = 0;
            for (int e = 0; e < MINT_QK; e++) {
                const int q = (w[i].qs[(MINT_QK * k + e) / 4] >> (2 * (e % 4))) & 3;
                sumi += (q - 1) * ab->qs[e];
            }
            sumb += mint_f16_to_f32(ab->d) * (float)sumi;
        }
        sum += mint_f16_to_f32(w[i].d) * sumb;
    }
    *s = sum;
}
