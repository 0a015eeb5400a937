// attention_quant.h - the key and value access of attention over a quantized cache (Q8_0, Q4_0
// rows, ops/kv_view.h), as llama.cpp's CPU flash attention does it
// (ggml-cpu/ops.cpp: ggml_compute_forward_flash_attn_ext_f16_one_chunk): the query converted to
// K's vec_dot_type (Q8_0) once, each score the type's block dot product times the scale, each
// value row dequantized to f32 (here inside the product, quant/attn_elem.h).
#ifndef MINT_ATTENTION_QUANT_H
#define MINT_ATTENTION_QUANT_H

#include "ops/kv_view.h"
#include "quant/kernels.h"

#include <stddef.h>
#include <stdint.h>

// dst = row x[0..n) quantized as llama.cpp stores f32 into a `type` cache (Q8_0 or Q4_0).
void mint_kvq_store_row(mint_type type, const float *x, void *dst, int64_t n);
// dst (mint_row_size(Q8_0, hd) bytes) = q[0..hd) converted to Q8_0 with the table's from_float.
void mint_kvq_put_query(const mint_kernels *k, const float *q, void *dst, int hd);
// s[c * s_stride + j] = scale * vec_dot(key of block slot j, head kvh; query row c) for c < nc,
// j < block, over logical block blk of layer l; query rows (Q8_0) q_stride bytes apart.
void mint_kvq_block_scores(const mint_kernels *k, const mint_kv_view *kv, int32_t l, int32_t blk,
                           int kvh, int hd, float scale, const uint8_t *q, size_t q_stride, int nc,
                           float *s, size_t s_stride);
// o[c * hd + i] = fma(o[c * hd + i], a[c], sum_j P[c * p_stride + j] * deq(v_j)[i]) for c < nc,
// i < hd, over the values v_j (head kvh, slot j < block) of logical block blk of layer l: the
// pv product of the dequantized rows, read in place (quant/kernels.h: pv_q8_0, pv_q4_0).
void mint_kvq_block_values(const mint_kernels *k, const mint_kv_view *kv, int32_t l, int32_t blk,
                           int kvh, int hd, const float *P, size_t p_stride, int nc, const float *a,
                           float *o);

#endif // MINT_ATTENTION_QUANT_H
