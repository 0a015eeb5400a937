// attention.c - storing keys/values in the cache, and causal grouped-query attention over it.
//
// With an f32 cache the arithmetic is llama.cpp's plain path (its f32kv runs): scores q.k in f32,
// softmax(scale * s + mask) with the exponentials summed in double, then the probabilities times
// V. With an f16 cache it follows llama.cpp's non-flash f16 path: keys and values are rounded to
// f16 when stored, q is rounded to f16 for the q.k dot, and the probabilities are rounded to f16
// before they weight V.
#include "ops/ops.h"

#include "quant/fp16.h"

#include <math.h>

// cache[layer] rows pos..pos+n-1 = k[t], v[t]   rows split across threads
void op_kv_store(const mint_node *n, const mint_exec *e, int ith, int nth) {
    const mint_kvcache *kv = e->kv;
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    for (long t = lo; t < hi; t++) {
        const float *k = mint_row(e, n->src, t), *v = mint_row(e, n->src2, t);
        void *kd = mint_kv_k_row(kv, n->layer, e->pos + (int32_t)t);
        void *vd = mint_kv_v_row(kv, n->layer, e->pos + (int32_t)t);
        if (kv->type == MINT_KV_F32) {
            for (int64_t i = 0; i < kv->kv_dim; i++) ((float *)kd)[i] = k[i];
            for (int64_t i = 0; i < kv->kv_dim; i++) ((float *)vd)[i] = v[i];
        } else {
            for (int64_t i = 0; i < kv->kv_dim; i++) ((uint16_t *)kd)[i] = mint_f32_to_f16(k[i]);
            for (int64_t i = 0; i < kv->kv_dim; i++) ((uint16_t *)vd)[i] = mint_f32_to_f16(v[i]);
        }
    }
}

// Scores of one query head against keys 0..n_keys-1 of KV head kvh, scaled: s[j] = scale * q.k_j
static void scores(const mint_exec *e, int32_t layer, const float *q, int kvh, int32_t n_keys,
                   float *s) {
    const mint_kvcache *kv = e->kv;
    const int hd = e->hp->head_dim;
    const float scale = e->hp->attn_scale;
    if (kv->type == MINT_KV_F32) {
        const mint_vec_dot_fn dot = e->k->t[MINT_TYPE_F32].vec_dot;
        for (int32_t j = 0; j < n_keys; j++) {
            const float *k = (const float *)mint_kv_k_row(kv, layer, j) + (size_t)kvh * hd;
            float d;
            dot(hd, &d, k, q);
            s[j] = d * scale;
        }
    } else {
        uint16_t q16[512];
        for (int i = 0; i < hd; i++) q16[i] = mint_f32_to_f16(q[i]);
        const mint_vec_dot_fn dot = e->k->t[MINT_TYPE_F16].vec_dot;
        for (int32_t j = 0; j < n_keys; j++) {
            const uint16_t *k = (const uint16_t *)mint_kv_k_row(kv, layer, j) + (size_t)kvh * hd;
            float d;
            dot(hd, &d, k, q16);
            s[j] = d * scale;
        }
    }
}

// s[0..n) = softmax(s)   (in place; exponentials summed in double, as ggml's soft_max)
static void softmax(float *s, int32_t n) {
    float max = -INFINITY;
    for (int32_t j = 0; j < n; j++) max = s[j] > max ? s[j] : max;
    double sum = 0.0;
    for (int32_t j = 0; j < n; j++) {
        s[j] = expf(s[j] - max);
        sum += (double)s[j];
    }
    const float inv = (float)(1.0 / sum);
    for (int32_t j = 0; j < n; j++) s[j] *= inv;
}

// out[0..hd) = sum_j p[j] * v_j   over values 0..n-1 of KV head kvh
static void weigh_values(const mint_exec *e, int32_t layer, const float *p, int kvh, int32_t n,
                         float *out) {
    const mint_kvcache *kv = e->kv;
    const int hd = e->hp->head_dim;
    for (int i = 0; i < hd; i++) out[i] = 0.0f;
    for (int32_t j = 0; j < n; j++) {
        if (kv->type == MINT_KV_F32) {
            const float *v = (const float *)mint_kv_v_row(kv, layer, j) + (size_t)kvh * hd;
            for (int i = 0; i < hd; i++) out[i] += p[j] * v[i];
        } else {
            const uint16_t *v = (const uint16_t *)mint_kv_v_row(kv, layer, j) + (size_t)kvh * hd;
            const float pj = mint_f16_to_f32(mint_f32_to_f16(p[j]));
            for (int i = 0; i < hd; i++) out[i] += pj * mint_f16_to_f32(v[i]);
        }
    }
}

// dst[t] head h = softmax(q[t]_h . K[0..pos+t] * scale) . V   (causal; KV head h / group)
// split across threads by (token, head) pairs
void op_attention(const mint_node *n, const mint_exec *e, int ith, int nth) {
    const mint_hparams *hp = e->hp;
    const int hd = hp->head_dim, group = hp->n_head / hp->n_head_kv;
    float *s = e->att_scratch + (size_t)ith * (size_t)e->kv->n_ctx;
    long lo, hi;
    mint_split((long)e->n_tokens * hp->n_head, ith, nth, &lo, &hi);
    for (long idx = lo; idx < hi; idx++) {
        const int32_t t = (int32_t)(idx / hp->n_head);
        const int h = (int)(idx % hp->n_head);
        const int32_t n_keys = e->pos + t + 1; // causal: keys 0..pos+t
        const float *q = (const float *)mint_row(e, n->src, t) + (size_t)h * hd;
        float *out = (float *)mint_row(e, n->dst, t) + (size_t)h * hd;
        scores(e, n->layer, q, h / group, n_keys, s);
        softmax(s, n_keys);
        weigh_values(e, n->layer, s, h / group, n_keys, out);
    }
}
