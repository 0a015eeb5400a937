// attention_quant.c - storing into a quantized cache and reading its keys and values
// (ops/attention_quant.h).
//
// Rounding when storing, as ggml's CPU backend copies f32 rows into the cache (GGML_OP_SET_ROWS /
// CPY call the destination type's CPU from_float): Q8_0 -> quantize_row_q8_0, which on x86 (AVX,
// AVX2) and NEON multiplies by 127/amax and rounds half to even; that is mint's Q8_0 activation
// conversion (the kernel table's from_float, quant/act_ref.c), not the roundf of ggml's weight
// quantizer quantize_row_q8_0_ref (what ggml's generic C build would use). Q4_0 ->
// quantize_row_q4_0, which is quantize_row_q4_0_ref on every platform:
// mint_quantizer_ref(MINT_TYPE_Q4_0).
#include "ops/attention_quant.h"

#include "ops/ops.h"

#include "quant/types.h"

void mint_kvq_store_row(mint_type type, const float *x, void *dst, int64_t n) {
    if (type == MINT_TYPE_Q8_0)
        mint_kernels_ref.t[MINT_TYPE_Q8_0].from_float(x, dst, n); // same bytes on every level
    else
        mint_quantizer_ref(type)(x, dst, n);
}

void mint_kvq_put_query(const mint_kernels *k, const float *q, void *dst, int hd) {
    k->t[MINT_TYPE_Q8_0].from_float(q, dst, hd);
}

// Bytes from a row's start to head kvh (hd a multiple of the type's block).
static size_t head_offset(const mint_kv_view *kv, int kvh, int hd) {
    const mint_type_traits *t = mint_type_get(kv->type);
    return (size_t)kvh * (size_t)(hd / (int)t->blck) * t->size;
}

void mint_kvq_block_scores(const mint_kernels *k, const mint_kv_view *kv, int32_t l, int32_t blk,
                           int kvh, int hd, float scale, const uint8_t *q, size_t q_stride, int nc,
                           float *s, size_t s_stride) {
    // One gemm over the block's keys (rows) and the queries (columns): each element is the
    // type's vec_dot bit for bit (quant/kernels.h), without a call per key.
    const size_t head = head_offset(kv, kvh, hd);
    const uint8_t *K = mint_kv_block_kt(kv, l, blk) + head;
    mint_gemm_tile(&k->t[kv->type], hd, K, kv->row_bytes, kv->block, q, q_stride, nc, s, s_stride);
    for (int c = 0; c < nc; c++) k->vec.scale(s + (size_t)c * s_stride, kv->block, scale);
}

void mint_kvq_block_values(const mint_kernels *k, const mint_kv_view *kv, int32_t l, int32_t blk,
                           int kvh, int hd, const float *P, size_t p_stride, int nc, const float *a,
                           float *o) {
    const uint8_t *V = mint_kv_block_v(kv, l, blk) + head_offset(kv, kvh, hd);
    const mint_pv_fn pv = kv->type == MINT_TYPE_Q8_0 ? k->vec.pv_q8_0 : k->vec.pv_q4_0;
    pv(hd, P, p_stride, nc, V, kv->row_bytes, kv->block, a, o, (size_t)hd);
}
