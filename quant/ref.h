// ref.h - the scalar reference kernels: the specification every SIMD kernel is tested against.
//
// Internal to quant/ (and the tests). All functions use the generic signatures of
// quant/kernels.h so they go into the kernel table as they are:
//   dequantize_row_<t>_ref(x, y, n)   blocks of type t -> n floats            (to_float)
//   quantize_row_<t>_ref(x, y, n)     n floats -> blocks, llama.cpp's weight quantizer, byte for
//                                     byte (what llama-quantize writes without an imatrix)
//   quantize_row_<t>_act_ref(x, y, n) n floats -> blocks, the way llama.cpp's x86 CPU backend
//                                     converts activations before a matmul    (from_float)
//   vec_dot_<w>_<a>_ref(n, s, w, a)   *s = one row of weight type w . one row of activation type a
// n is always a multiple of the type's block size (32 or 256); callers guarantee it.
//
// Rounding vocabulary (docs/formats.md 2.3/2.4): roundf = C's roundf, halves away from zero (Q8_0
// weights); RNE = round to nearest, ties to even (everything else, via mint_nearest_int or the
// f16/bf16 conversions of quant/fp16.h).
#ifndef MINT_QUANT_REF_H
#define MINT_QUANT_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

// The reference rounds exactly as written, one operation at a time, as ggml's quantizers do (they
// are built without FMA): no contraction of a*b+c into a fused multiply-add. GCC already does not
// contract in ISO C mode (-std=c11); clang contracts by default, so turn it off for every file
// that includes this header.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#include "base/round.h"

// ---- plain floats (quant/float_ref.c) -------------------------------------------------------
void dequantize_row_f32_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_f16_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_bf16_ref(const void *restrict x, float *restrict y, int64_t n);
void quantize_row_f32_ref(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_f16_ref(const float *restrict x, void *restrict y, int64_t n);  // RNE
void quantize_row_bf16_ref(const float *restrict x, void *restrict y, int64_t n); // RNE

// ---- 32-element blocks (quant/quant_legacy_ref.c) -------------------------------------------
void dequantize_row_q4_0_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_q4_1_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_q5_0_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_q5_1_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_q8_0_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_q8_1_ref(const void *restrict x, float *restrict y, int64_t n);
void quantize_row_q4_0_ref(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_q4_1_ref(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_q5_0_ref(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_q5_1_ref(const float *restrict x, void *restrict y, int64_t n);
// Q8_0 as a weight: d = amax/127, q = roundf(x * (1/d)). Not the activation rounding below.
void quantize_row_q8_0_ref(const float *restrict x, void *restrict y, int64_t n);

// ---- TQ1_0, TQ2_0 (quant/quant_ternary_ref.c): -1 / 0 / +1 times the block's largest |x| ------
void dequantize_row_tq1_0_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_tq2_0_ref(const void *restrict x, float *restrict y, int64_t n);
void quantize_row_tq1_0_ref(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_tq2_0_ref(const float *restrict x, void *restrict y, int64_t n);

// ---- Q1_0, Q2_0 (quant/quant_q1q2_ref.c): signs times the mean |x|, 2-bit codes times the amax
// --- Their dots with Q8_0 are there too: per 32-element activation block an exact integer sum,
// scaled by d_a and added in float, then the weight block's sum times d_w (ggml's order).
void dequantize_row_q1_0_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_q2_0_ref(const void *restrict x, float *restrict y, int64_t n);
void quantize_row_q1_0_ref(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_q2_0_ref(const float *restrict x, void *restrict y, int64_t n);
void vec_dot_q1_0_q8_0_ref(int64_t n, float *restrict s, const void *restrict w,
                           const void *restrict a);
void vec_dot_q2_0_q8_0_ref(int64_t n, float *restrict s, const void *restrict w,
                           const void *restrict a);

// ---- MXFP4 (quant/quant_mxfp4_ref.c) -------------------------------------------------------
void dequantize_row_mxfp4_ref(const void *restrict x, float *restrict y, int64_t n);
// llama.cpp's only MXFP4 quantizer (it takes no importance matrix): the E8M0 exponent from the
// block's largest |x|, then the nearest E2M1 code of each value.
void quantize_row_mxfp4_ref(const float *restrict x, void *restrict y, int64_t n);

// ---- IQ4_NL, IQ4_XS (quant/quant_iq4_ref.c) ------------------------------------------------
void dequantize_row_iq4_nl_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_iq4_xs_ref(const void *restrict x, float *restrict y, int64_t n);
// llama.cpp's quantizers of these types (the weighted scale search, its only one), byte for byte:
// imatrix[n] is the importance of each element of the row, or NULL.
void quantize_iq4_nl_ref(const float *restrict x, void *restrict y, int64_t n,
                         const float *imatrix);
void quantize_iq4_xs_ref(const float *restrict x, void *restrict y, int64_t n,
                         const float *imatrix);
// The same without an importance (what llama-quantize writes with no imatrix).
void quantize_row_iq4_nl_ref(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_iq4_xs_ref(const float *restrict x, void *restrict y, int64_t n);
// IQ4_NL . Q8_0: per block (d_a * d_w) * sumi; IQ4_XS . Q8_K: per sub-block of 32
// ((d_w * d_a) * (ls - 32)) * sumi; sumi = sum table[q] * a exact, summed in f32 in order.
void vec_dot_iq4_nl_q8_0_ref(int64_t n, float *restrict s, const void *restrict w,
                             const void *restrict a);
void vec_dot_iq4_xs_q8_K_ref(int64_t n, float *restrict s, const void *restrict w,
                             const void *restrict a);

// ---- IQ3_XXS, IQ3_S (quant/quant_iq3_ref.c) ------------------------------------------------
void dequantize_row_iq3_xxs_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_iq3_s_ref(const void *restrict x, float *restrict y, int64_t n);
// llama.cpp's quantizers of these types (the lattice search, their only one), byte for byte:
// imatrix[n] is the importance of each element of the row, or NULL.
void quantize_iq3_xxs_ref(const float *restrict x, void *restrict y, int64_t n,
                          const float *imatrix);
void quantize_iq3_s_ref(const float *restrict x, void *restrict y, int64_t n, const float *imatrix);
// The same without an importance (what llama-quantize writes with no imatrix).
void quantize_row_iq3_xxs_ref(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_iq3_s_ref(const float *restrict x, void *restrict y, int64_t n);
// . Q8_K: per super-block (d_w * d_a) * sum over sub-blocks of (2 ls + 1) * sumi, sumi exact;
// IQ3_XXS's total times 0.25.
void vec_dot_iq3_xxs_q8_K_ref(int64_t n, float *restrict s, const void *restrict w,
                              const void *restrict a);
void vec_dot_iq3_s_q8_K_ref(int64_t n, float *restrict s, const void *restrict w,
                            const void *restrict a);
// Whether the quantizers' point maps and neighbour lists (built once from the grids) came out
// the sizes quant/quant_iq3_ref.c reserves for them.
bool mint_iq3_lattices_ok(void);
// ---- IQ1_S, IQ1_M (quant/quant_iq1_ref.c, quant/iq1.h) --------------------------------------
void dequantize_row_iq1_s_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_iq1_m_ref(const void *restrict x, float *restrict y, int64_t n);
// llama.cpp's quantizers of these types (its lattice search), byte for byte: imatrix[n] is the
// importance of each element of the row, or NULL: then IQ1_M weighs by x^2 as llama.cpp does,
// and IQ1_S (which llama.cpp refuses to quantize without one) takes every importance as 1
// (quant/quant_iq1_search.c).
void quantize_iq1_s_ref(const float *restrict x, void *restrict y, int64_t n, const float *imatrix);
void quantize_iq1_m_ref(const float *restrict x, void *restrict y, int64_t n, const float *imatrix);
// The same without an importance (tests, synthetic models).
void quantize_row_iq1_s_ref(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_iq1_m_ref(const float *restrict x, void *restrict y, int64_t n);
// IQ1_S / IQ1_M . Q8_K: per super-block (d_w * d_a) * (sumi + sumi1 / 8), sumi the exact
// multiplier-weighted lattice dots, sumi1 the multiplier-weighted signed sums of a.
void vec_dot_iq1_s_q8_K_ref(int64_t n, float *restrict s, const void *restrict w,
                            const void *restrict a);
void vec_dot_iq1_m_q8_K_ref(int64_t n, float *restrict s, const void *restrict w,
                            const void *restrict a);

// ---- IQ2_XXS, IQ2_XS, IQ2_S (quant/quant_iq2_ref.c) ------------------------------------------
void dequantize_row_iq2_xxs_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_iq2_xs_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_iq2_s_ref(const void *restrict x, float *restrict y, int64_t n);
// llama.cpp's quantizers of these types (the grid search, their only one), byte for byte:
// imatrix[n] is the importance of each element of the row. IQ2_S also takes NULL (its own
// weights); llama.cpp has no quantizer of IQ2_XXS / IQ2_XS without one, and NULL here means a
// unit importance (imatrix all 1).
void quantize_iq2_xxs_ref(const float *restrict x, void *restrict y, int64_t n,
                          const float *imatrix);
void quantize_iq2_xs_ref(const float *restrict x, void *restrict y, int64_t n,
                         const float *imatrix);
void quantize_iq2_s_ref(const float *restrict x, void *restrict y, int64_t n, const float *imatrix);
// The same with imatrix NULL.
void quantize_row_iq2_xxs_ref(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_iq2_xs_ref(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_iq2_s_ref(const float *restrict x, void *restrict y, int64_t n);
// . Q8_K: bsum = sum over groups of 32 (IQ2_XXS) / 16 of (2 ls + 1) * sum grid * sign * a,
// exact; per super-block sum += (d_w * d_a) * bsum in f32, in order; *s = 0.125 * sum.
void vec_dot_iq2_xxs_q8_K_ref(int64_t n, float *restrict s, const void *restrict w,
                              const void *restrict a);
void vec_dot_iq2_xs_q8_K_ref(int64_t n, float *restrict s, const void *restrict w,
                             const void *restrict a);
void vec_dot_iq2_s_q8_K_ref(int64_t n, float *restrict s, const void *restrict w,
                            const void *restrict a);

// ---- 256-element super-blocks (quant/quant_k_ref.c) -----------------------------------------
void dequantize_row_q2_K_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_q3_K_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_q4_K_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_q5_K_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_q6_K_ref(const void *restrict x, float *restrict y, int64_t n);
void dequantize_row_q8_K_ref(const void *restrict x, float *restrict y, int64_t n);
void quantize_row_q2_K_ref(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_q3_K_ref(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_q4_K_ref(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_q5_K_ref(const float *restrict x, void *restrict y, int64_t n);
void quantize_row_q6_K_ref(const float *restrict x, void *restrict y, int64_t n);

// ---- weighted quantizers: one row of n values given the importance qw[n] of its columns ----
//   quantize_row_<t>_imat_ref(x, y, n, qw)   llama.cpp's quantize_row_<t>_impl, byte for byte
//                                            (what llama-quantize writes with an imatrix)
// (Q4_0 ... Q5_1 in quant/quant_legacy_ref.c, Q2_K ... Q6_K in quant/quant_k_ref.c; Q8_0,
// MXFP4, TQ1_0 and TQ2_0 have none: llama.cpp ignores the importance for them.)
typedef void (*mint_quantize_imat_fn)(const float *restrict x, void *restrict y, int64_t n,
                                      const float *restrict qw);
void quantize_row_q4_0_imat_ref(const float *restrict x, void *restrict y, int64_t n,
                                const float *restrict qw);
void quantize_row_q4_1_imat_ref(const float *restrict x, void *restrict y, int64_t n,
                                const float *restrict qw);
void quantize_row_q5_0_imat_ref(const float *restrict x, void *restrict y, int64_t n,
                                const float *restrict qw);
void quantize_row_q5_1_imat_ref(const float *restrict x, void *restrict y, int64_t n,
                                const float *restrict qw);
void quantize_row_q2_K_imat_ref(const float *restrict x, void *restrict y, int64_t n,
                                const float *restrict qw);
void quantize_row_q3_K_imat_ref(const float *restrict x, void *restrict y, int64_t n,
                                const float *restrict qw);
void quantize_row_q4_K_imat_ref(const float *restrict x, void *restrict y, int64_t n,
                                const float *restrict qw);
void quantize_row_q5_K_imat_ref(const float *restrict x, void *restrict y, int64_t n,
                                const float *restrict qw);
void quantize_row_q6_K_imat_ref(const float *restrict x, void *restrict y, int64_t n,
                                const float *restrict qw);

// ---- activations (quant/act_ref.c) ----------------------------------------------------------
// Q8_0 activations, x86 llama.cpp semantics: d = f16(amax/127), q = RNE(x * (127/amax)) in f32.
void quantize_row_q8_0_act_ref(const float *restrict x, void *restrict y, int64_t n);
// Q8_1 activations: as Q8_0, plus s = f16(d * sum(q)) with the unrounded f32 d.
void quantize_row_q8_1_act_ref(const float *restrict x, void *restrict y, int64_t n);
// Q8_K (the only Q8_K quantizer, used on every platform): d = 1/iscale with iscale = -127/max,
// q = min(127, RNE(iscale * x)), bsums = sums of 16 quants.
void quantize_row_q8_K_ref(const float *restrict x, void *restrict y, int64_t n);

// ---- dot products (quant/dot_ref.c) ---------------------------------------------------------
// Plain floats: products summed in double (the reference is the most accurate one).
void vec_dot_f32_f32_ref(int64_t n, float *restrict s, const void *restrict w,
                         const void *restrict a);
void vec_dot_f16_f16_ref(int64_t n, float *restrict s, const void *restrict w,
                         const void *restrict a);
void vec_dot_bf16_bf16_ref(int64_t n, float *restrict s, const void *restrict w,
                           const void *restrict a);
// Blocks: exact integer sums per (sub-)block, then ggml's per-block f32 scale arithmetic
// (docs/formats.md 2.5), summed over blocks in f32 in block order.
void vec_dot_q4_0_q8_0_ref(int64_t n, float *restrict s, const void *restrict w,
                           const void *restrict a);
void vec_dot_q4_1_q8_1_ref(int64_t n, float *restrict s, const void *restrict w,
                           const void *restrict a);
void vec_dot_q5_0_q8_0_ref(int64_t n, float *restrict s, const void *restrict w,
                           const void *restrict a);
void vec_dot_q5_1_q8_1_ref(int64_t n, float *restrict s, const void *restrict w,
                           const void *restrict a);
void vec_dot_q8_0_q8_0_ref(int64_t n, float *restrict s, const void *restrict w,
                           const void *restrict a);
// MXFP4 . Q8_0: sumi = sum value(q) * a (exact), then (d_a * 2^(e-128)) * sumi, ggml's order.
void vec_dot_mxfp4_q8_0_ref(int64_t n, float *restrict s, const void *restrict w,
                            const void *restrict a);
void vec_dot_q2_K_q8_K_ref(int64_t n, float *restrict s, const void *restrict w,
                           const void *restrict a);
// TQ1_0 / TQ2_0 . Q8_K: sumi = sum (trit - 1) * a per block (exact), then sumi * (d_w * d_a).
void vec_dot_tq1_0_q8_K_ref(int64_t n, float *restrict s, const void *restrict w,
                            const void *restrict a);
void vec_dot_tq2_0_q8_K_ref(int64_t n, float *restrict s, const void *restrict w,
                            const void *restrict a);
void vec_dot_q3_K_q8_K_ref(int64_t n, float *restrict s, const void *restrict w,
                           const void *restrict a);
void vec_dot_q4_K_q8_K_ref(int64_t n, float *restrict s, const void *restrict w,
                           const void *restrict a);
void vec_dot_q5_K_q8_K_ref(int64_t n, float *restrict s, const void *restrict w,
                           const void *restrict a);
void vec_dot_q6_K_q8_K_ref(int64_t n, float *restrict s, const void *restrict w,
                           const void *restrict a);

// ---- float vectors: softmax and attention (quant/vec_ref.c, quant/attn_tile_ref.c) --------
// The specifications of quant/kernels.h's mint_vec_kernels; these use fused multiply-adds
// (fmaf) exactly where the kernel comments say, and the SIMD levels match them bit for bit.
void vec_exp_ref(const float *x, float *y, int64_t n);
float vec_max_ref(const float *x, int64_t n, float m);
double vec_exp_sum_ref(float *x, int64_t n, float m);
void vec_scale_ref(float *x, int64_t n, float c);
void vec_round_f16_ref(float *x, int64_t n);
void vec_delta_step_ref(float *st, int s_k, int s_v, const float *q, const float *k, const float *v,
                        float decay, float beta, float scale, float *out);
void attn_qk_f32_ref(int64_t d, const float *q, size_t q_stride, int nr, const void *kt,
                     size_t kt_stride, int nk, float scale, float *s, size_t s_stride);
void attn_qk_f16_ref(int64_t d, const float *q, size_t q_stride, int nr, const void *kt,
                     size_t kt_stride, int nk, float scale, float *s, size_t s_stride);
void attn_pv_f32_ref(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                     size_t v_stride, int nk, const float *a, float *o, size_t o_stride);
void attn_pv_f16_ref(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                     size_t v_stride, int nk, const float *a, float *o, size_t o_stride);
void attn_pv_q8_0_ref(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                      size_t v_stride, int nk, const float *a, float *o, size_t o_stride);
void attn_pv_q4_0_ref(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                      size_t v_stride, int nk, const float *a, float *o, size_t o_stride);

#endif // MINT_QUANT_REF_H
