// dot_ref.c - reference dot products: one weight row . one activation row of its vec_dot_type.
//
// For block types the inner sums over quants are exact integers (per block, or per super-block
// with the integer sub-block scales folded in), then each block contributes with ggml's f32 scale
// arithmetic (docs/formats.md 2.5) and the contributions are summed in f32 in block order. SIMD
// versions must give the same integer sums; they may only sum the block contributions in another
// order. The integer super-block sums stay below 2^24 for real data (the bound is 2^27 for Q6_K
// with every quant and scale at its extreme), so their conversion to f32 is exact in practice.
//
// Types whose levels are offset (Q4_0: q - 8, Q5_0: q - 16, Q3_K: level - 4, Q6_K: level - 32)
// sum level * a over the unsigned levels and subtract offset * sum(a) afterwards. It is the same
// integer, and it is what the u8 x s8 SIMD instructions compute, but the reason it is written so
// here is a compiler bug: GCC 12.2 with -mavx512vnni (e.g. -march=native on Zen 4 / Ice Lake)
// vectorizes sum((u8 - 8) * s8) into a u8 x s8 dot product with the difference taken modulo 256,
// returning e.g. 7936 instead of -256 for an all-zero Q4_0 block.
//
// For the plain float types the reference sums in double: it is the accurate answer that SIMD
// versions (which sum in f32) are compared to.
#include "quant/blocks.h"
#include "quant/fp16.h"
#include "quant/ref.h"
#include "quant/unpack.h"

// ---------------------------------------------------------------------------------------------
// Plain floats

// w . a over f32, summed in double.
void vec_dot_f32_f32_ref(int64_t n, float *restrict s, const void *restrict vw,
                         const void *restrict va) {
    const float *w = vw, *a = va;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double)w[i] * (double)a[i];
    *s = (float)sum;
}

// w . a over f16 (both operands already f16), exact products summed in double.
void vec_dot_f16_f16_ref(int64_t n, float *restrict s, const void *restrict vw,
                         const void *restrict va) {
    const uint16_t *w = vw, *a = va;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += (double)mint_f16_to_f32(w[i]) * (double)mint_f16_to_f32(a[i]);
    *s = (float)sum;
}

// w . a over bf16, exact products summed in double.
void vec_dot_bf16_bf16_ref(int64_t n, float *restrict s, const void *restrict vw,
                           const void *restrict va) {
    const uint16_t *w = vw, *a = va;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++)
        sum += (double)mint_bf16_to_f32(w[i]) * (double)mint_bf16_to_f32(a[i]);
    *s = (float)sum;
}

// ---------------------------------------------------------------------------------------------
// 32-element blocks. Per block: sumi = sum_j q_w[j] * q_a[j] (int), then
// (d_w * d_a) * sumi, plus m_w * s_a for the *_1 types.

void vec_dot_q4_0_q8_0_ref(int64_t n, float *restrict s, const void *restrict vw,
                           const void *restrict va) {
    const mint_block_q4_0 *w = vw;
    const mint_block_q8_0 *a = va;
    float sum = 0.0f;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++) {
        int sumqa = 0, suma = 0;
        for (int e = 0; e < MINT_QK; e++) {
            sumqa += mint_nibble(w[ib].qs, e) * a[ib].qs[e];
            suma += a[ib].qs[e];
        }
        int sumi = sumqa - 8 * suma; // sum (q - 8) * a
        sum += mint_f16_to_f32(w[ib].d) * mint_f16_to_f32(a[ib].d) * (float)sumi;
    }
    *s = sum;
}

void vec_dot_q4_1_q8_1_ref(int64_t n, float *restrict s, const void *restrict vw,
                           const void *restrict va) {
    const mint_block_q4_1 *w = vw;
    const mint_block_q8_1 *a = va;
    float sum = 0.0f;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++) {
        int sumi = 0;
        for (int e = 0; e < MINT_QK; e++) sumi += mint_nibble(w[ib].qs, e) * a[ib].qs[e];
        sum += mint_f16_to_f32(w[ib].d) * mint_f16_to_f32(a[ib].d) * (float)sumi +
               mint_f16_to_f32(w[ib].m) * mint_f16_to_f32(a[ib].s);
    }
    *s = sum;
}

void vec_dot_q5_0_q8_0_ref(int64_t n, float *restrict s, const void *restrict vw,
                           const void *restrict va) {
    const mint_block_q5_0 *w = vw;
    const mint_block_q8_0 *a = va;
    float sum = 0.0f;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++) {
        uint32_t qh = mint_load_u32_le(w[ib].qh);
        int sumqa = 0, suma = 0;
        for (int e = 0; e < MINT_QK; e++) {
            int q = mint_nibble(w[ib].qs, e) | (int)((qh >> e) & 1) << 4;
            sumqa += q * a[ib].qs[e];
            suma += a[ib].qs[e];
        }
        int sumi = sumqa - 16 * suma; // sum (q - 16) * a
        sum += mint_f16_to_f32(w[ib].d) * mint_f16_to_f32(a[ib].d) * (float)sumi;
    }
    *s = sum;
}

void vec_dot_q5_1_q8_1_ref(int64_t n, float *restrict s, const void *restrict vw,
                           const void *restrict va) {
    const mint_block_q5_1 *w = vw;
    const mint_block_q8_1 *a = va;
    float sum = 0.0f;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++) {
        uint32_t qh = mint_load_u32_le(w[ib].qh);
        int sumi = 0;
        for (int e = 0; e < MINT_QK; e++) {
            int q = mint_nibble(w[ib].qs, e) | (int)((qh >> e) & 1) << 4;
            sumi += q * a[ib].qs[e];
        }
        sum += mint_f16_to_f32(w[ib].d) * mint_f16_to_f32(a[ib].d) * (float)sumi +
               mint_f16_to_f32(w[ib].m) * mint_f16_to_f32(a[ib].s);
    }
    *s = sum;
}

void vec_dot_q8_0_q8_0_ref(int64_t n, float *restrict s, const void *restrict vw,
                           const void *restrict va) {
    const mint_block_q8_0 *w = vw;
    const mint_block_q8_0 *a = va;
    float sum = 0.0f;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++) {
        int sumi = 0;
        for (int e = 0; e < MINT_QK; e++) sumi += w[ib].qs[e] * a[ib].qs[e];
        sum += mint_f16_to_f32(w[ib].d) * mint_f16_to_f32(a[ib].d) * (float)sumi;
    }
    *s = sum;
}

// The E2M1 values are signed integers (the table doubled), so no offset: sumi is the exact sum of
// value * a, and the block scale is the activation's d times the weight's half-scale, multiplied
// in that order and then by sumi, as ggml's generic kernel does.
void vec_dot_mxfp4_q8_0_ref(int64_t n, float *restrict s, const void *restrict vw,
                            const void *restrict va) {
    const mint_block_mxfp4 *w = vw;
    const mint_block_q8_0 *a = va;
    float sum = 0.0f;
    for (int64_t ib = 0; ib < n / MINT_QK; ib++) {
        int sumi = 0;
        for (int e = 0; e < MINT_QK; e++)
            sumi += mint_mxfp4_value(mint_nibble(w[ib].qs, e)) * a[ib].qs[e];
        sum += mint_f16_to_f32(a[ib].d) * mint_e8m0_half_to_f32(w[ib].e) * (float)sumi;
    }
    *s = sum;
}

// ---------------------------------------------------------------------------------------------
// K-quants . Q8_K. Per super-block: isum = sum over sub-blocks of (integer scale) * (sum of
// q_w * q_a), and for the types with mins summs = sum of (integer min) * (sum of q_a) taken from
// Q8_K's bsums; the block adds (d_w * d_a) * isum - (dmin_w * d_a) * summs.

void vec_dot_q2_K_q8_K_ref(int64_t n, float *restrict s, const void *restrict vw,
                           const void *restrict va) {
    const mint_block_q2_K *w = vw;
    const mint_block_q8_K *a = va;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        int isum = 0, summs = 0;
        for (int sb = 0; sb < 16; sb++) {
            int sc = w[i].scales[sb];
            int sumi = 0;
            for (int e = 16 * sb; e < 16 * sb + 16; e++)
                sumi += mint_q2_bits(w[i].qs, e) * a[i].qs[e];
            isum += (sc & 0xF) * sumi;
            summs += (sc >> 4) * a[i].bsums[sb];
        }
        float dall = a[i].d * mint_f16_to_f32(w[i].d);
        float dmin = a[i].d * mint_f16_to_f32(w[i].dmin);
        sum += dall * (float)isum - dmin * (float)summs;
    }
    *s = sum;
}

void vec_dot_q3_K_q8_K_ref(int64_t n, float *restrict s, const void *restrict vw,
                           const void *restrict va) {
    const mint_block_q3_K *w = vw;
    const mint_block_q8_K *a = va;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        int isum = 0;
        for (int sb = 0; sb < 16; sb++) {
            int scale = mint_q3_scale(w[i].scales, sb) - 32;
            int sumqa = 0; // sum of level * a, level = 2 low bits | high bit << 2 (0..7)
            for (int e = 16 * sb; e < 16 * sb + 16; e++) {
                int level = mint_q2_bits(w[i].qs, e) | mint_q3_hbit(w[i].hmask, e) << 2;
                sumqa += level * a[i].qs[e];
            }
            isum += scale * (sumqa - 4 * a[i].bsums[sb]); // sum (level - 4) * a
        }
        sum += mint_f16_to_f32(w[i].d) * a[i].d * (float)isum;
    }
    *s = sum;
}

void vec_dot_q4_K_q8_K_ref(int64_t n, float *restrict s, const void *restrict vw,
                           const void *restrict va) {
    const mint_block_q4_K *w = vw;
    const mint_block_q8_K *a = va;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        int isum = 0, summs = 0;
        for (int b = 0; b < 8; b++) {
            int sc, m;
            mint_k4_scale_min(b, w[i].scales, &sc, &m);
            const int8_t *q8 = a[i].qs + 32 * b;
            int sumi = 0;
            for (int l = 0; l < 32; l++) sumi += mint_k4_nibble(w[i].qs, b, l) * q8[l];
            isum += sc * sumi;
            summs += m * (a[i].bsums[2 * b] + a[i].bsums[2 * b + 1]);
        }
        float d = mint_f16_to_f32(w[i].d) * a[i].d;
        float dmin = mint_f16_to_f32(w[i].dmin) * a[i].d;
        sum += d * (float)isum - dmin * (float)summs;
    }
    *s = sum;
}

void vec_dot_q5_K_q8_K_ref(int64_t n, float *restrict s, const void *restrict vw,
                           const void *restrict va) {
    const mint_block_q5_K *w = vw;
    const mint_block_q8_K *a = va;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        int isum = 0, summs = 0;
        for (int b = 0; b < 8; b++) {
            int sc, m;
            mint_k4_scale_min(b, w[i].scales, &sc, &m);
            const int8_t *q8 = a[i].qs + 32 * b;
            int sumi = 0;
            for (int l = 0; l < 32; l++) {
                int q = mint_k4_nibble(w[i].qs, b, l) | ((w[i].qh[l] >> b) & 1) << 4;
                sumi += q * q8[l];
            }
            isum += sc * sumi;
            summs += m * (a[i].bsums[2 * b] + a[i].bsums[2 * b + 1]);
        }
        float d = mint_f16_to_f32(w[i].d) * a[i].d;
        float dmin = mint_f16_to_f32(w[i].dmin) * a[i].d;
        sum += d * (float)isum - dmin * (float)summs;
    }
    *s = sum;
}

void vec_dot_q6_K_q8_K_ref(int64_t n, float *restrict s, const void *restrict vw,
                           const void *restrict va) {
    const mint_block_q6_K *w = vw;
    const mint_block_q8_K *a = va;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        int isum = 0;
        for (int sb = 0; sb < 16; sb++) {
            int sumqa = 0;
            for (int e = 16 * sb; e < 16 * sb + 16; e++)
                sumqa += mint_q6_level(w[i].ql, w[i].qh, e) * a[i].qs[e];
            isum += w[i].scales[sb] * (sumqa - 32 * a[i].bsums[sb]); // sum (level - 32) * a
        }
        sum += mint_f16_to_f32(w[i].d) * a[i].d * (float)isum;
    }
    *s = sum;
}

// TQ1_0 / TQ2_0 . Q8_K: sumi = sum (trit - 1) * a over the block (exact), then sumi * (d_w * d_a)
// per block, added in block order: ggml's generic order.
void vec_dot_tq1_0_q8_K_ref(int64_t n, float *restrict s, const void *restrict vw,
                            const void *restrict va) {
    const mint_block_tq1_0 *w = vw;
    const mint_block_q8_K *a = va;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        int sumi = 0;
        for (int e = 0; e < MINT_QK_K; e++)
            sumi += (mint_tq1_trit(w[i].qs, w[i].qh, e) - 1) * a[i].qs[e];
        sum += (float)sumi * (mint_f16_to_f32(w[i].d) * a[i].d);
    }
    *s = sum;
}

void vec_dot_tq2_0_q8_K_ref(int64_t n, float *restrict s, const void *restrict vw,
                            const void *restrict va) {
    const mint_block_tq2_0 *w = vw;
    const mint_block_q8_K *a = va;
    float sum = 0.0f;
    for (int64_t i = 0; i < n / MINT_QK_K; i++) {
        int sumi = 0;
        for (int e = 0; e < MINT_QK_K; e++) sumi += (mint_q2_bits(w[i].qs, e) - 1) * a[i].qs[e];
        sum += (float)sumi * (a[i].d * mint_f16_to_f32(w[i].d));
    }
    *s = sum;
}
