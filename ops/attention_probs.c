// attention_probs.c - the attention weights of one query and head, for showing them (mint-run
// --report): the softmax over the keys in the cache of q . k * scale, from the real query and
// the real cache, every sum in double. The three attention algorithms compute the same weights
// to rounding (about 1e-7); this plain loop is what a learner reads. With a quantized cache the
// query is converted to Q8_0 and the key row dequantized, as the algorithms multiply them (both
// dequantize exactly to f32, so their products are exact in double).
#include "ops/attention.h"

#include "ops/attention_quant.h"
#include "quant/fp16.h"
#include "quant/types.h"

#include <math.h>

// out[j] = softmax_j(cap(q . k_j * scale)) for lo <= j < n_keys (a sink's term in the sum), and 0
// for j < lo (outside a window), for KV head kvh of layer l
void mint_attention_probs(const mint_kv_view *kv, int32_t l, const mint_attn_shape *sh,
                          const float *q, int kvh, int32_t lo, int32_t n_keys, const float *sink,
                          float *out) {
    const int hd = sh->head_dim;
    const bool f16 = kv->type == MINT_TYPE_F16, quant = mint_kv_quantized(kv);
    double max = -INFINITY;
    float qd[MINT_ATTN_PROBS_MAX_HD], kd[MINT_ATTN_PROBS_MAX_HD]; // quantized: q and k dequantized
    uint8_t qq[MINT_ATTN_PROBS_MAX_HD / 32 * 34];                 // q as Q8_0
    if (quant) {
        const mint_kernels *ref = &mint_kernels_ref;
        mint_kvq_put_query(ref, q, qq, hd);
        ref->t[MINT_TYPE_Q8_0].to_float(qq, qd, hd);
    }
    for (int32_t j = 0; j < lo; j++) out[j] = 0.0f;
    for (int32_t j = lo; j < n_keys; j++) {
        if (quant) { // a row per position: dequantize head kvh's segment
            const mint_type_traits *t = mint_type_get(kv->type);
            const size_t off = (size_t)kvh * (size_t)(hd / (int)t->blck) * t->size;
            mint_kernels_ref.t[kv->type].to_float(mint_kv_key_row(kv, l, j) + off, kd, hd);
            double d = 0;
            for (int i = 0; i < hd; i++) d += (double)qd[i] * kd[i];
            out[j] = (float)(d * sh->scale);
            if (sh->softcap != 0.0f) out[j] = (float)(tanh(out[j] / sh->softcap) * sh->softcap);
            if (out[j] > max) max = out[j];
            continue;
        }
        // keys are stored transposed per block: dimension i of slot s at [i * block + s]
        const uint8_t *kt = mint_kv_block_kt(kv, l, j / kv->block);
        const size_t slot = (size_t)(j % kv->block), row = (size_t)kv->block;
        const size_t d0 = (size_t)kvh * (size_t)hd;
        double d = 0;
        for (int i = 0; i < hd; i++) { // an f16 cache multiplies f16-rounded queries
            const size_t at = (d0 + (size_t)i) * row + slot;
            d += f16 ? (double)mint_f16_to_f32(mint_f32_to_f16(q[i])) *
                           mint_f16_to_f32(((const uint16_t *)kt)[at])
                     : (double)q[i] * ((const float *)kt)[at];
        }
        out[j] = (float)(d * sh->scale);
        if (sh->softcap != 0.0f) out[j] = (float)(tanh(out[j] / sh->softcap) * sh->softcap);
        if (out[j] > max) max = out[j];
    }
    if (sink && *sink > max) max = *sink;
    double sum = sink ? exp((double)*sink - max) : 0; // the sink weighs no value
    for (int32_t j = lo; j < n_keys; j++) sum += exp((double)out[j] - max);
    for (int32_t j = lo; j < n_keys; j++) out[j] = (float)(exp((double)out[j] - max) / sum);
}
