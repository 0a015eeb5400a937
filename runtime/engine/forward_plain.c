// forward_plain.c - the forward pass of one token, as one plain function: start reading here.
//
// mint_plain_forward computes the logits of one token at one position straight from the weights
// runtime/engine/model.c bound, top to bottom, the way llama2.c's forward() reads: the embedding,
// then for each layer attention (RMSNorm, q/k/v, RoPE, the cache store, per head the scores, their
// softmax and the weighted sum of the values, the output projection, the residual) and the
// feed-forward (RMSNorm, gate and up, SwiGLU, down, the residual), then the final norm and the
// output head. There is no graph, no thread pool and no paged cache: the keys and values of every
// position are kept in two float arrays [n_layer][n_ctx][kv_dim]. (Gemma 4 adds each layer's own
// input, made once per token and gated into the layer's output, and layers that read an earlier
// layer's keys and values; its window layers use the first part of each smaller-headed row.)
//
// The arithmetic is llama.cpp's, step for step as the graph does it (runtime/engine/graph.c lists
// the same steps as nodes; runtime/engine/exec.c runs them through ops/ on the thread pool). Every
// matmul converts its input to the weight type's vec_dot_type and calls the scalar reference dot
// product of quant/ (docs/formats.md 2.5); attention uses the reference float vector kernels for
// the softmax. So with the context forced to the reference kernels (mint_ctx_params.isa = "ref"),
// naive attention and a KV block holding the whole sequence, mint_eval gives these logits bit for
// bit; tests/test_forward_plain.c checks that, and the budgets of the other cases.
//
// The cost of plainness: one token at a time, one thread, every dot product scalar. It is for
// reading and for checking the fast path, not for speed.
#include "base/error.h"
#include "mint.h"
#include "ops/attention.h"
#include "ops/delta_net.h"
#include "ops/ops.h"
#include "quant/kernels.h"
#include "runtime/engine/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_PLAIN_CTX = 4096 }; // default and largest n_ctx (the KV arrays are allocated whole)

// The run state (llama2.c's RunState): activations of the one token being computed, and the cache.
struct mint_plain {
    const mint_model *m;       // the weights and hyper-parameters (not owned)
    const mint_kernels *ref;   // the scalar reference kernels (quant/kernels_ref.c)
    int32_t n_ctx;             // positions the KV arrays hold
    const float *rope_factors; // [n_rot / 2] RoPE divisors for this n_ctx, or NULL (none)
    int32_t n_past;            // positions 0 .. n_past-1 hold keys and values
    float *x;                  // [n_embd] the residual stream
    float *xb;                 // [n_embd] the residual, normalised
    float *q;                  // [n_head * head_dim] queries
    float *k;                  // [n_head_kv * head_dim] this position's keys
    float *v;                  // [n_head_kv * head_dim] this position's values
    float *att;                // [n_head * head_dim] attention output, head after head
    float *hb;                 // [max(n_ff, n_ff_exp)] ffn gate, then silu(gate) * up
    float *hb2;                // [max(n_ff, n_ff_exp)] ffn up
    float *probs;              // [n_expert] a mixture's router logits, then probabilities
    int32_t *expert_ids;       // [n_expert_used] the experts chosen, the best first
    float *expert_w;           // [n_expert_used] their weights
    float *expert_out;         // [n_expert_used][n_embd] each chosen expert's output
    float *tmp;                // [n_embd] a projection's output before the residual add
    float *scores;             // [n_ctx] one head's scores, then its attention weights
    void *xq;                  // [4 * widest row] bytes: a matmul's input in its vec_dot_type
    float *key_cache;          // [n_layer][n_ctx][n_head_kv * head_dim]
    float *value_cache;        // [n_layer][n_ctx][n_head_kv * head_dim]
    float *mix;                // a recurrent layer's projection (LFM2: b, c, x [3 n_embd]; a delta
                               // net's q, k, v [C]), or Qwen3.5's queries with their gates
    float *gate;               // [max(q_dim, H_v S)] Qwen3.5's attention gates, a delta net's z
    float *conv;               // [C] a delta net's q, k, v after the convolution
    float *alpha, *beta;       // [H_v] a delta net's decays and write strengths
                               // convolution state [C][L - 1] and delta state [H_v][S][S]
    size_t state_floats;       // floats of one recurrent layer's state
    float *state;              // [n_layer][state_floats] each recurrent layer's state (NULL
                               // without): a short convolution's last inputs bx [n_conv - 1]
                               // [n_embd], oldest first; a delta net's (below)
    float *ple;                // [2][n_layer * n_ple] Gemma 4: this token's input of each layer,
                               // then the projection it is made with (NULL without)
};

// ---------------------------------------------------------------------------------------------
// The building blocks

// out[0..n) = x / sqrt(mean(x^2) + eps) * w, as ggml: squares summed in double, the scale in f32,
// and x times the scale rounded before the weight multiplies it (docs/formats.md 5.2).
static void rmsnorm(float *out, const float *x, const float *w, int64_t n, float eps) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double)(x[i] * x[i]);
    const float mean = (float)(sum / (double)n);
    const float scale = 1.0f / sqrtf(mean + eps);
    for (int64_t i = 0; i < n; i++) out[i] = (x[i] * scale) * w[i];
}

// out[0..w->n_out) = W x, as llama.cpp computes it on a CPU: x is converted once to the weight
// type's vec_dot_type (F32 weights read it as it is; F16 rounds it to f16, Q4_0 to Q8_0 blocks,
// K-quants to Q8_K ...), then each output is the reference dot product of one weight row with it.
static void matmul(const mint_plain *p, float *out, const float *x, const mint_weight *w) {
    const mint_type_kernels *wk = &p->ref->t[w->type];
    const void *in = x;
    if (wk->vec_dot_type != MINT_TYPE_F32) {
        p->ref->t[wk->vec_dot_type].from_float(x, p->xq, w->n_in);
        in = p->xq;
    }
    for (int64_t r = 0; r < w->n_out; r++)
        wk->vec_dot(w->n_in, &out[r], (const char *)w->data + (size_t)r * w->row_bytes, in);
}

// x[0..n_heads*head_dim) rotated in place for position pos (docs/formats.md 5.3). Pair i of a
// head turns by pos * base^(-2i/n_rot) / ff_i * freq_scale, where ff_i is Llama 3's frequency
// factor or LongRoPE's for this context's length (1 without either), and cos and sin are scaled
// by rope.scaling.attn_factor (1 but for LongRoPE). Llama's pairs are adjacent, (x[2i], x[2i+1]);
// NEOX's (Qwen) are half a head apart, (x[i], x[i + n_rot/2]). The angle is ggml's running product
// (theta *= base^(-2/n_rot)), not a fresh power per pair, and the rotation is two fused
// multiply-adds (ggml is built with FP contraction).
static void rope(float *x, int n_heads, const mint_plain *p, int l, int32_t pos) {
    const mint_hparams *hp = &p->m->hp;
    const bool local = mint_layer_windowed(hp, l); // Gemma's window layers have their own base
    const int n_rot = local ? hp->n_rot_swa : hp->n_rot, hd = p->m->layers[l].head_dim;
    // (Gemma 4's rope_freqs turn only its full layers)
    const float *ff = local && p->m->desc->layer_shapes ? NULL : p->rope_factors;
    const int half = n_rot / 2;
    const float base = local ? hp->rope_base_swa : hp->rope_base;
    const float freq_scale = local ? hp->rope_freq_scale_swa : hp->rope_freq_scale;
    const float theta_scale = powf(base, -2.0f / (float)n_rot);
    float corr[2] = {0.0f, 0.0f}; // YaRN's ramp (gpt-oss): ops/ops.h mint_rope_angle
    if (hp->rope_ext_factor != 0.0f) mint_rope_yarn_corr_dims(n_rot, hp->n_ctx_orig, base, corr);
    float theta = (float)pos;
    for (int i = 0; i < half; i++) {
        float ms = hp->rope_mscale;
        const float angle = mint_rope_angle(ff ? theta / ff[i] : theta, i, freq_scale,
                                            hp->rope_ext_factor, corr, &ms);
        const float c = cosf(angle) * ms, s = sinf(angle) * ms;
        for (int h = 0; h < n_heads; h++) {
            float *head = x + (size_t)h * hd;
            float *a = hp->rope_neox ? head + i : head + 2 * i;
            float *b = hp->rope_neox ? head + i + half : head + 2 * i + 1;
            const float x0 = *a, x1 = *b;
            *a = fmaf(x0, c, -(x1 * s));
            *b = fmaf(x0, s, x1 * c);
        }
        theta *= theta_scale;
    }
}

// out[0..n) = (x - mean) / sqrt(variance + eps) * w + b: GPT-2's LayerNorm, as ggml computes it
// (norm, then mul, then add): the sum in double rounded to f32 and divided by n, the squared
// deviations summed in double, the scale in f32.
static void layernorm(float *out, const float *x, const float *w, const float *b, int64_t n,
                      float eps) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double)x[i];
    const float mean = (float)sum / (float)n;
    double sq = 0.0;
    for (int64_t i = 0; i < n; i++) sq += (double)((x[i] - mean) * (x[i] - mean));
    const float scale = 1.0f / sqrtf((float)(sq / (double)n) + eps);
    for (int64_t i = 0; i < n; i++) out[i] = ((x[i] - mean) * scale) * w[i] + b[i];
}

// The norm of the architecture: RMSNorm, or LayerNorm when the layer has a norm bias.
static void norm(float *out, const float *x, const mint_weight *w, const mint_weight *b,
                 const mint_hparams *hp) {
    if (b->data)
        layernorm(out, x, w->data, b->data, hp->n_embd, hp->rms_eps);
    else
        rmsnorm(out, x, w->data, hp->n_embd, hp->rms_eps);
}

// x[0..n) += bias, when the layer has that bias (Qwen2's q, k, v).
static void add_bias(float *x, const mint_weight *bias, int64_t n) {
    if (!bias->data) return;
    const float *b = bias->data;
    for (int64_t i = 0; i < n; i++) x[i] += b[i];
}

// Each of the n_heads heads of x RMS-normalised in place, times w, when the layer has w (Qwen3's
// q and k norms); a w of the whole row's length normalises the row as one (OLMoE's).
static void head_norm(float *x, const mint_weight *w, int n_heads, int hd, const mint_hparams *hp) {
    if (!w->data) return;
    const int64_t len = w->n_in; // head_dim, or n_heads * head_dim
    for (int64_t at = 0; at < (int64_t)n_heads * hd; at += len)
        rmsnorm(x + at, x + at, w->data, len, hp->rms_eps);
}

// s[0..n) = softmax(s) with the reference float vector kernels (ops/elementwise.c): the maximum,
// e^(s - max) with mint's exp (quant/vec_exp.h) summed in double, then times 1 / sum (ggml's
// soft_max), a sink's e^(sink - max) in the sum when the layer has sinks.
static void softmax(const mint_plain *p, float *s, int32_t n, const float *sink) {
    if (sink) // gpt-oss: the head's sink logit joins the softmax, weighing no value
        mint_softmax_sink(&p->ref->vec, s, n, *sink);
    else
        mint_softmax(&p->ref->vec, s, n);
}
// ---------------------------------------------------------------------------------------------
// The forward pass

// The block kinds, in the order a token meets them (runtime/engine/arch.h's description): the
// embedding, per layer the attention block and the feed-forward block, each adding to the
// residual stream x, then the output head.

// x[0..n_embd) = the embedding of `token` at `pos`: its row of token_embd, dequantized exactly
// (no activation rounding); plus the learned row of the position (GPT-2); times sqrt(n_embd)
// (Gemma).
static void embed(mint_plain *p, int32_t token, int32_t pos) {
    const mint_model *m = p->m;
    const mint_hparams *hp = &m->hp;
    p->ref->t[m->tok_embd.type].to_float(
        (const char *)m->tok_embd.data + (size_t)token * m->tok_embd.row_bytes, p->x, hp->n_embd);
    if (m->desc->pos == MINT_POS_LEARNED) {
        p->ref->t[m->pos_embd.type].to_float((const char *)m->pos_embd.data +
                                                 (size_t)pos * m->pos_embd.row_bytes,
                                             p->tmp, hp->n_embd);
        for (int i = 0; i < hp->n_embd; i++) p->x[i] += p->tmp[i];
    }
    if (hp->embd_scale != 1.0f)
        for (int i = 0; i < hp->n_embd; i++) p->x[i] *= hp->embd_scale;
}

// x += the attention block of layer l at position `pos` (x [n_embd]; the layer's cache holds
// positions 0 .. pos-1 and gets pos): normalise, project to queries, keys and values [n_head *
// head_dim], [n_head_kv * head_dim] x2, turn q and k by position, attend, project back.
static void attention(mint_plain *p, int l, int32_t pos) {
    const mint_model *m = p->m;
    const mint_hparams *hp = &m->hp;
    const mint_layer *L = &m->layers[l];
    const int hd = L->head_dim; // Gemma 4's window layers have a smaller one
    const int kv_dim = hp->n_head_kv * hd;
    const int row = hp->n_head_kv * hp->head_dim; // the cache's rows: the largest heads
    const int group = hp->n_head / hp->n_head_kv; // query heads sharing one key/value head
    // Gemma 4's last layers compute no keys or values: they read an earlier layer's (kv_slot)
    const int cache_layer = L->kv_shared ? L->kv_slot : l;

    norm(p->xb, p->x, &L->attn_norm, &L->attn_norm_b, hp);
    const bool q_gate = m->desc->q_gate; // Qwen3.5: each head's queries, then as many gates
    matmul(p, q_gate ? p->mix : p->q, p->xb, &L->wq);
    for (int h = 0; q_gate && h < hp->n_head; h++) {
        memcpy(p->q + (size_t)h * hd, p->mix + (size_t)h * 2 * hd, (size_t)hd * sizeof(float));
        memcpy(p->gate + (size_t)h * hd, p->mix + ((size_t)h * 2 + 1) * hd,
               (size_t)hd * sizeof(float));
    }
    add_bias(p->q, &L->bq, (int64_t)hp->n_head * hd); // what some architectures add
    head_norm(p->q, &L->q_norm, hp->n_head, hd, hp);
    if (!L->kv_shared) {
        matmul(p, p->k, p->xb, &L->wk);
        matmul(p, p->v, p->xb, &L->wv);
        add_bias(p->k, &L->bk, kv_dim);
        add_bias(p->v, &L->bv, kv_dim);
        head_norm(p->k, &L->k_norm, hp->n_head_kv, hd, hp);
        head_norm(p->v, &L->v_norm, hp->n_head_kv, hd, hp); // Gemma 4: a weight of ones
    }
    if (m->desc->pos != MINT_POS_LEARNED) { // RoPE; GPT-2's positions came with the embedding
        rope(p->q, hp->n_head, p, l, pos);
        if (!L->kv_shared) rope(p->k, hp->n_head_kv, p, l, pos);
    }
    if (hp->q_scale != 1.0f) // Phi-3 and Gemma scale the queries instead of the scores
        for (int i = 0; i < hp->n_head * hd; i++) p->q[i] *= hp->q_scale;

    // Store this position's key and value in the cache.
    float *key_layer = p->key_cache + (size_t)cache_layer * p->n_ctx * row;
    float *value_layer = p->value_cache + (size_t)cache_layer * p->n_ctx * row;
    if (!L->kv_shared) {
        memcpy(key_layer + (size_t)pos * row, p->k, (size_t)kv_dim * sizeof(float));
        memcpy(value_layer + (size_t)pos * row, p->v, (size_t)kv_dim * sizeof(float));
    }

    // Each query head attends over positions 0 .. pos of its key/value head (grouped-query
    // attention: head h reads key/value head h / group).
    // Gemma's local layers see only the last swa_window positions: the first one is lo.
    const int32_t lo = mint_attn_first_key(mint_layer_window(hp, l), pos);
    for (int h = 0; h < hp->n_head; h++) {
        const float *q = p->q + (size_t)h * hd;
        const int kvh = h / group;
        // The scores q . k / sqrt(head_dim): each dot one chain of fused multiply-adds from
        // +0 in dimension order, then times the scale.
        for (int32_t t = 0; t <= pos; t++) {
            const float *k = key_layer + (size_t)t * row + (size_t)kvh * hd;
            float dot = 0.0f;
            for (int i = 0; i < hd; i++) dot = fmaf(q[i], k[i], dot);
            p->scores[t] = dot * hp->attn_scale;
            if (hp->attn_softcap != 0.0f) // Gemma 2: c tanh(s / c), as ggml: scale, tanh, scale
                p->scores[t] = tanhf(p->scores[t] * (1.0f / hp->attn_softcap)) * hp->attn_softcap;
        }
        // The weights: softmax over the positions seen so far (this is the causal mask), or
        // over the window's; the positions before it weigh 0.
        softmax(p, p->scores + lo, pos + 1 - lo,
                L->attn_sinks.data ? (const float *)L->attn_sinks.data + h : NULL);
        for (int32_t t = 0; t < lo; t++) p->scores[t] = 0.0f;
        // The output: the values weighted by them, per element one chain of fused
        // multiply-adds from +0 in position order.
        float *out = p->att + (size_t)h * hd;
        for (int i = 0; i < hd; i++) {
            float acc = 0.0f;
            for (int32_t t = 0; t <= pos; t++)
                acc = fmaf(p->scores[t], value_layer[(size_t)t * row + (size_t)kvh * hd + i], acc);
            out[i] = acc;
        }
    }

    if (q_gate) // the output gated: att * sigmoid(gate)
        mint_sigmoid_gate(p->att, 0, p->gate, 0, (size_t)hd, hp->n_head, hd, 0, 1);
    // Project the heads back to the residual width and add to the residual stream.
    matmul(p, p->tmp, p->att, &L->wo);
    add_bias(p->tmp, &L->bo, hp->n_embd);
    if (L->attn_post_norm.data) // Gemma normalises the output again before the residual add
        rmsnorm(p->tmp, p->tmp, L->attn_post_norm.data, hp->n_embd, hp->rms_eps);
    for (int i = 0; i < hp->n_embd; i++) p->x[i] += p->tmp[i];
}

// tmp[0..n_embd) = the mixture of experts of layer l on xb [n_embd]: the router's logits
// [n_expert], its choice of n_expert_used experts and their weights (ops/moe.c), each chosen
// expert's SwiGLU (gate and up [n_ff_exp], down [n_embd]) as a dense feed-forward's, then their
// outputs weighted and summed.
// y[0..n) += row e of the experts' biases b, when the layer has them.
static void expert_bias(float *y, const mint_weight *b, int32_t e, int64_t n) {
    if (b->data) mint_add(y, 0, (const float *)b->data + (size_t)e * (size_t)n, 0, n, 0, 1);
}

static void mixture_of_experts(mint_plain *p, const mint_layer *L) {
    const mint_hparams *hp = &p->m->hp;
    const int32_t k = hp->n_expert_used;
    const mint_arch *a = p->m->desc;
    matmul(p, p->probs, p->xb, &L->router);
    add_bias(p->probs, &L->router_b, hp->n_expert); // gpt-oss
    const mint_moe_weights how = a->moe_gating == MINT_MOE_SOFTMAX_TOPK ? MINT_MOE_TOPK_SOFTMAX
                                 : a->moe_norm_weights                  ? MINT_MOE_PROBS_NORM
                                                                        : MINT_MOE_PROBS;
    mint_moe_route(&p->ref->vec, p->probs, hp->n_expert, k, how, p->expert_ids, p->expert_w);
    for (int32_t j = 0; j < k; j++) {
        const int32_t e = p->expert_ids[j];
        const mint_weight gate = mint_weight_expert(&L->gate_exps, e);
        const mint_weight up = mint_weight_expert(&L->up_exps, e);
        const mint_weight down = mint_weight_expert(&L->down_exps, e);
        float *out = p->expert_out + (size_t)j * hp->n_embd;
        matmul(p, p->hb, p->xb, &gate);
        matmul(p, p->hb2, p->xb, &up);
        expert_bias(p->hb, &L->gate_exps_b, e, hp->n_ff_exp); // gpt-oss's experts have biases
        expert_bias(p->hb2, &L->up_exps_b, e, hp->n_ff_exp);
        if (a->moe_act == MINT_MOE_SWIGLU_OAI)
            mint_swiglu_oai(p->hb, 0, p->hb2, 0, hp->n_ff_exp, 0, 1);
        else
            mint_silu_mul(p->hb, 0, p->hb2, 0, hp->n_ff_exp, 0, 1);
        matmul(p, out, p->hb, &down);
        expert_bias(out, &L->down_exps_b, e, hp->n_embd);
    }
    mint_moe_sum(p->tmp, p->expert_out, (size_t)hp->n_embd * sizeof(float), p->expert_w, k,
                 hp->n_embd);
    if (!L->gate_shexp.data) return;
    // The shared expert every token takes (Qwen2-MoE): a dense SwiGLU [n_ff_shexp], times the
    // sigmoid of its gate's logit (one dot product with a vector).
    matmul(p, p->hb, p->xb, &L->gate_shexp);
    matmul(p, p->hb2, p->xb, &L->up_shexp);
    mint_silu_mul(p->hb, 0, p->hb2, 0, hp->n_ff_shexp, 0, 1);
    matmul(p, p->expert_out, p->hb, &L->down_shexp);
    float logit;
    matmul(p, &logit, p->xb, &L->shexp_gate_inp);
    mint_moe_shared_add(p->tmp, p->expert_out, logit, hp->n_embd);
}

// x += the feed-forward block of layer l (x [n_embd], hidden [n_ff]): normalise, the block's
// kind (runtime/engine/arch.h: SwiGLU, GeGLU, GPT-2's GELU, each then down; or a mixture of
// experts), residual.
static void feed_forward(mint_plain *p, int l) {
    const mint_model *m = p->m;
    const mint_hparams *hp = &m->hp;
    const mint_layer *L = &m->layers[l];
    norm(p->xb, p->x, &L->ffn_norm, &L->ffn_norm_b, hp);
    switch (m->desc->ffn) {
    case MINT_FFN_GELU: // up (+ bias), GELU
        matmul(p, p->hb, p->xb, &L->w_up);
        add_bias(p->hb, &L->b_up, hp->n_ff);
        for (int i = 0; i < hp->n_ff; i++) p->hb[i] = mint_gelu_one(p->hb[i]); // ops/elementwise.c
        break;
    case MINT_FFN_GEGLU: // gelu(gate) * up, ggml's GELU table (ops/elementwise.c)
        matmul(p, p->hb, p->xb, &L->w_gate);
        matmul(p, p->hb2, p->xb, &L->w_up);
        mint_gelu_mul(p->hb, 0, p->hb2, 0, L->n_ff, 0, 1); // (Gemma 4's width varies by layer)
        break;
    case MINT_FFN_SWIGLU: // silu(gate) * up
        matmul(p, p->hb, p->xb, &L->w_gate);
        matmul(p, p->hb2, p->xb, &L->w_up);
        for (int i = 0; i < hp->n_ff; i++)
            p->hb[i] = p->hb[i] / (1.0f + expf(-p->hb[i])) * p->hb2[i];
        break;
    case MINT_FFN_MOE: // the experts have their own downs
        mixture_of_experts(p, L);
        break;
    }
    if (m->desc->ffn != MINT_FFN_MOE) {
        matmul(p, p->tmp, p->hb, &L->w_down);
        add_bias(p->tmp, &L->b_down, hp->n_embd);
    }
    if (L->ffn_post_norm.data)
        rmsnorm(p->tmp, p->tmp, L->ffn_post_norm.data, hp->n_embd, hp->rms_eps);
    for (int i = 0; i < hp->n_embd; i++) p->x[i] += p->tmp[i];
}

// logits[0..n_vocab) = the output head of x: the final norm, one logit per vocabulary entry,
// soft-capped (Gemma 2).
static void head(mint_plain *p, float *logits) {
    const mint_model *m = p->m;
    const mint_hparams *hp = &m->hp;
    norm(p->xb, p->x, &m->output_norm, &m->output_norm_b, hp);
    matmul(p, logits, p->xb, &m->output);
    if (hp->final_softcap != 0.0f) // c tanh(logit / c)
        for (int i = 0; i < hp->n_vocab; i++)
            logits[i] = tanhf(logits[i] * (1.0f / hp->final_softcap)) * hp->final_softcap;
}

// LFM2's short convolution in place of attention (ops/shortconv.c is the same, for a run of
// rows): b, c, x = in_proj(norm(x)); each channel convolves its last n_conv values of b * x (the
// state holds the n_conv - 1 before this token); the output gated by c, projected, added.
static void short_convolution(mint_plain *p, int l) {
    const mint_model *m = p->m;
    const mint_hparams *hp = &m->hp;
    const mint_layer *L = &m->layers[l];
    const int64_t n = hp->n_embd;
    const int taps = hp->n_conv;
    float *state = p->state + (size_t)l * p->state_floats;
    norm(p->xb, p->x, &L->attn_norm, &L->attn_norm_b, hp);
    matmul(p, p->mix, p->xb, &L->conv_in); // [b | c | x]
    for (int64_t ch = 0; ch < n; ch++) {
        const float bx = p->mix[ch] * p->mix[2 * n + ch];
        const float *w = (const float *)L->conv.data + ch * taps;
        float sum = 0.0f; // oldest input first, fused multiply-adds, as ggml's ssm_conv
        for (int k = 0; k < taps - 1; k++) sum = fmaf(state[(size_t)k * n + ch], w[k], sum);
        sum = fmaf(bx, w[taps - 1], sum);
        p->att[ch] = p->mix[n + ch] * sum;
        for (int k = 0; k + 1 < taps - 1; k++) // the window moves on by one input
            state[(size_t)k * n + ch] = state[(size_t)(k + 1) * n + ch];
        state[(size_t)(taps - 2) * n + ch] = bx;
    }
    matmul(p, p->tmp, p->att, &L->conv_out);
    for (int64_t i = 0; i < n; i++) p->x[i] += p->tmp[i];
}

// Qwen3.5's gated delta net in place of attention (ops/delta_net.h): q, k, v, z, beta and alpha
// projected from norm(x); the decay g = softplus(alpha + dt) * a and beta = sigmoid(beta); q, k,
// v through the causal convolution (the state holds the last L - 1 inputs) and SiLU; q and k
// L2-normalised per head; per value head the delta rule on its [S][S] state (decay, correct
// towards v along k with strength beta, read out along q); the output RMS-normalised per head and
// gated by silu(z); projected, added.
static void delta_net(mint_plain *p, int l) {
    const mint_model *m = p->m;
    const mint_hparams *hp = &m->hp;
    const mint_layer *L = &m->layers[l];
    const int s = hp->ssm_s, kh = hp->ssm_k_heads, vh = hp->ssm_v_heads;
    const int channels = (2 * kh + vh) * s;
    float *conv_state = p->state + (size_t)l * p->state_floats;
    float *state = conv_state + (size_t)channels * (size_t)(hp->n_conv - 1);
    norm(p->xb, p->x, &L->attn_norm, &L->attn_norm_b, hp);
    matmul(p, p->mix, p->xb, &L->ssm_qkv);
    matmul(p, p->gate, p->xb, &L->ssm_z);
    matmul(p, p->beta, p->xb, &L->ssm_beta);
    matmul(p, p->alpha, p->xb, &L->ssm_alpha);
    mint_delta_gates(p->alpha, 0, p->beta, 0, L->ssm_dt.data, L->ssm_a.data, vh, 0, 1);
    mint_conv1d_causal(p->mix, 0, 1, L->ssm_conv.data, hp->n_conv, conv_state, p->conv, 0, true, 0,
                       channels);
    mint_l2_norm_heads(p->conv, 0, 2 * kh, s, hp->rms_eps, 0, 1);
    const mint_delta_dims d = {kh, vh, s, s, 1.0f / sqrtf((float)s)};
    const mint_delta_seq one = {.n_tokens = 1,
                                .q = p->conv,
                                .k = p->conv + (size_t)kh * s,
                                .v = p->conv + (size_t)2 * kh * s,
                                .g = p->alpha,
                                .beta = p->beta,
                                .out = p->att,
                                .state = state};
    mint_delta_net_recurrent(p->ref, &d, &one, 0, vh);
    mint_rms_norm_gated(p->att, 0, p->gate, 0, L->ssm_norm.data, vh, s, hp->rms_eps, 0, 1);
    matmul(p, p->tmp, p->att, &L->ssm_out);
    for (int64_t i = 0; i < hp->n_embd; i++) p->x[i] += p->tmp[i];
}

// Gemma 4: ple[0..n_layer * n_ple) = each layer's own input for `token`, from its rows of
// per_layer_token_embd times sqrt(n_ple) and the projection of the (scaled) embedding x times
// 1/sqrt(n_embd), RMS-normalised per layer: their sum times 1/sqrt(2).
static void per_layer_inputs(mint_plain *p, int32_t token) {
    const mint_model *m = p->m;
    const mint_hparams *hp = &m->hp;
    const int64_t all = (int64_t)hp->n_ple * hp->n_layer;
    float *proj = p->ple + all;
    p->ref->t[m->ple_embd.type].to_float(
        (const char *)m->ple_embd.data + (size_t)token * m->ple_embd.row_bytes, p->ple, all);
    const float tok_scale = sqrtf((float)hp->n_ple), proj_scale = 1.0f / sqrtf((float)hp->n_embd);
    matmul(p, proj, p->x, &m->ple_model);
    for (int64_t i = 0; i < all; i++) {
        p->ple[i] *= tok_scale;
        proj[i] *= proj_scale;
    }
    for (int64_t at = 0; at < all; at += hp->n_ple)
        rmsnorm(proj + at, proj + at, m->ple_norm.data, hp->n_ple, hp->rms_eps);
    for (int64_t i = 0; i < all; i++) p->ple[i] = (p->ple[i] + proj[i]) * (1.0f / sqrtf(2.0f));
}

// x += layer l's own input, gated by gelu(inp_gate x), projected, RMS-normalised; then x times
// the layer's output scale (Gemma 4; either may be absent).
static void per_layer_output(mint_plain *p, int l) {
    const mint_hparams *hp = &p->m->hp;
    const mint_layer *L = &p->m->layers[l];
    if (L->ple_gate.data) {
        matmul(p, p->hb, p->x, &L->ple_gate);
        mint_gelu_mul(p->hb, 0, p->ple + (size_t)l * (size_t)hp->n_ple, 0, hp->n_ple, 0, 1);
        matmul(p, p->tmp, p->hb, &L->ple_proj);
        rmsnorm(p->tmp, p->tmp, L->ple_norm.data, hp->n_embd, hp->rms_eps);
        for (int i = 0; i < hp->n_embd; i++) p->x[i] += p->tmp[i];
    }
    if (L->out_scale.data) {
        const float s = *(const float *)L->out_scale.data;
        for (int i = 0; i < hp->n_embd; i++) p->x[i] *= s;
    }
}

// logits[0..n_vocab) for `token` at position `pos`, with positions 0 .. pos-1 already in the cache.
static void forward(mint_plain *p, int32_t token, int32_t pos, float *logits) {
    embed(p, token, pos);
    if (p->ple) per_layer_inputs(p, token);
    for (int l = 0; l < p->m->hp.n_layer; l++) {
        if (p->m->layers[l].mixer == MINT_MIXER_SHORTCONV)
            short_convolution(p, l);
        else if (p->m->layers[l].mixer == MINT_MIXER_DELTA_NET)
            delta_net(p, l);
        else
            attention(p, l, pos);
        feed_forward(p, l);
        per_layer_output(p, l);
    }
    head(p, logits);
}

// ---------------------------------------------------------------------------------------------
// The public functions (mint.h): state, argument checks, the cache's fill level

mint_status mint_plain_create(const mint_model *m, int32_t n_ctx, mint_plain **out, mint_err *err) {
    *out = NULL;
    mint_err_clear(err);
    if (m->vocab_only)
        return mint_fail(err, MINT_E_ARG, "the model was opened vocab-only: it has no weights");
    const mint_hparams *hp = &m->hp;
    if (n_ctx == 0) n_ctx = hp->n_ctx_train < MAX_PLAIN_CTX ? hp->n_ctx_train : MAX_PLAIN_CTX;
    if (n_ctx < 1 || n_ctx > MAX_PLAIN_CTX)
        return mint_fail(err, MINT_E_ARG, "context length %d is outside 1..%d", n_ctx,
                         MAX_PLAIN_CTX);
    if (m->desc->pos == MINT_POS_LEARNED && n_ctx > hp->n_ctx_train)
        return mint_fail(err, MINT_E_ARG,
                         "context length %d is more than the %d positions the model has learned",
                         n_ctx, hp->n_ctx_train);
    const mint_kernels *ref = mint_kernels_for(MINT_ISA_REF);
    mint_plain *p = calloc(1, sizeof *p);
    if (!p || !ref) {
        free(p);
        return mint_fail(err, MINT_E_NOMEM, "out of memory");
    }
    p->m = m;
    p->ref = ref;
    p->n_ctx = n_ctx;
    p->rope_factors = mint_model_rope_factors(m, n_ctx)->data;
    const size_t q_dim = (size_t)hp->n_head * hp->head_dim;
    const size_t kv_dim = (size_t)hp->n_head_kv * hp->head_dim;
    size_t widest = (size_t)hp->n_embd; // a converted row takes at most 4 bytes per element
    if (q_dim > widest) widest = q_dim;
    if ((size_t)hp->n_ff > widest) widest = (size_t)hp->n_ff;
    size_t hidden = (size_t)(hp->n_ff > hp->n_ff_exp ? hp->n_ff : hp->n_ff_exp);
    if ((size_t)hp->n_ff_shexp > hidden) hidden = (size_t)hp->n_ff_shexp;
    if (hidden > widest) widest = hidden;
    if ((size_t)hp->ssm_v_heads * (size_t)hp->ssm_s > widest) // a delta net's output projection
        widest = (size_t)hp->ssm_v_heads * (size_t)hp->ssm_s;
    const size_t n_exp = hp->n_expert > 0 ? (size_t)hp->n_expert : 1;
    const size_t n_used = hp->n_expert_used > 0 ? (size_t)hp->n_expert_used : 1;
    const size_t cache = (size_t)hp->n_layer * (size_t)n_ctx * kv_dim;
    p->x = malloc((size_t)hp->n_embd * sizeof(float));
    p->xb = malloc((size_t)hp->n_embd * sizeof(float));
    p->q = malloc(q_dim * sizeof(float));
    p->k = malloc(kv_dim * sizeof(float));
    p->v = malloc(kv_dim * sizeof(float));
    size_t att = q_dim > (size_t)hp->n_embd ? q_dim : (size_t)hp->n_embd;
    if ((size_t)hp->ssm_v_heads * (size_t)hp->ssm_s > att)
        att = (size_t)hp->ssm_v_heads * (size_t)hp->ssm_s;
    p->att = malloc(att * sizeof(float));
    p->hb = malloc(hidden * sizeof(float));
    p->hb2 = malloc(hidden * sizeof(float));
    p->probs = malloc(n_exp * sizeof(float));
    p->expert_ids = malloc(n_used * sizeof(int32_t));
    p->expert_w = malloc(n_used * sizeof(float));
    p->expert_out = malloc(n_used * (size_t)hp->n_embd * sizeof(float));
    p->tmp = malloc((size_t)hp->n_embd * sizeof(float));
    p->scores = malloc((size_t)n_ctx * sizeof(float));
    p->xq = malloc(widest * sizeof(float));
    p->key_cache = calloc(cache, sizeof(float));
    p->value_cache = calloc(cache, sizeof(float));
    // A hybrid's recurrent state and its buffers (as runtime/engine/context.c sizes them).
    const size_t v_dim = (size_t)hp->ssm_v_heads * (size_t)hp->ssm_s;
    const size_t channels = 2 * (size_t)hp->ssm_k_heads * (size_t)hp->ssm_s + v_dim;
    size_t mix = 3 * (size_t)hp->n_embd;
    if (channels > mix) mix = channels;
    if (2 * q_dim > mix) mix = 2 * q_dim;
    p->mix = malloc(mix * sizeof(float));
    p->gate = malloc((q_dim > v_dim ? q_dim : v_dim) * sizeof(float));
    p->conv = malloc((channels ? channels : 1) * sizeof(float));
    p->alpha = malloc((hp->ssm_v_heads ? (size_t)hp->ssm_v_heads : 1) * sizeof(float));
    p->beta = malloc((hp->ssm_v_heads ? (size_t)hp->ssm_v_heads : 1) * sizeof(float));
    if (hp->n_conv > 1)
        p->state_floats = hp->ssm_s ? (size_t)(hp->n_conv - 1) * channels + v_dim * hp->ssm_s
                                    : (size_t)(hp->n_conv - 1) * (size_t)hp->n_embd;
    if (p->state_floats) p->state = calloc((size_t)hp->n_layer * p->state_floats, sizeof(float));
    if (m->ple_embd.data)
        p->ple = malloc(2 * (size_t)hp->n_ple * (size_t)hp->n_layer * sizeof(float));
    if ((p->state_floats && !p->state) || (m->ple_embd.data && !p->ple) || !p->mix || !p->gate ||
        !p->conv || !p->alpha || !p->beta || !p->x || !p->xb || !p->q || !p->k || !p->v ||
        !p->att || !p->hb || !p->hb2 || !p->probs || !p->expert_ids || !p->expert_w ||
        !p->expert_out || !p->tmp || !p->scores || !p->xq || !p->key_cache || !p->value_cache) {
        mint_plain_free(p);
        return mint_fail(err, MINT_E_NOMEM, "out of memory for a plain pass of %d positions",
                         n_ctx);
    }
    *out = p;
    return MINT_OK;
}

mint_status mint_plain_forward(mint_plain *p, int32_t token, int32_t pos, float *logits,
                               mint_err *err) {
    mint_err_clear(err);
    if (token < 0 || token >= p->m->hp.n_vocab)
        return mint_fail(err, MINT_E_ARG, "token %d is outside 0..%d", token, p->m->hp.n_vocab - 1);
    if (pos < 0 || pos >= p->n_ctx)
        return mint_fail(err, MINT_E_LIMIT, "position %d is outside 0..%d (the context length)",
                         pos, p->n_ctx - 1);
    if (pos > p->n_past)
        return mint_fail(err, MINT_E_ARG, "position %d skips positions: the next one is %d", pos,
                         p->n_past);
    if (p->state && pos != p->n_past && pos != 0) // a recurrent state cannot go back
        return mint_fail(err, MINT_E_ARG,
                         "position %d goes back in a hybrid model's plain pass: only %d (the "
                         "next) or 0 (start again)",
                         pos, p->n_past);
    if (p->state && pos == 0)
        memset(p->state, 0, (size_t)p->m->hp.n_layer * p->state_floats * sizeof(float));
    forward(p, token, pos, logits);
    p->n_past = pos + 1; // a position written again drops those after it
    return MINT_OK;
}

void mint_plain_free(mint_plain *p) {
    if (!p) return;
    free(p->x);
    free(p->xb);
    free(p->q);
    free(p->k);
    free(p->v);
    free(p->att);
    free(p->hb);
    free(p->hb2);
    free(p->probs);
    free(p->expert_ids);
    free(p->expert_w);
    free(p->expert_out);
    free(p->tmp);
    free(p->scores);
    free(p->xq);
    free(p->key_cache);
    free(p->value_cache);
    free(p->mix);
    free(p->state);
    free(p->gate);
    free(p->conv);
    free(p->alpha);
    free(p->beta);
    free(p->ple);
    free(p);
}
