// moe.c - the steps of a mixture of experts that are not matmuls: the router's choice, the
// weighted sum of the chosen experts' outputs, gpt-oss's activation (the matmuls in between are the
// gemm kernels of quant/, one expert's rows at a time: runtime/engine/exec.c).
//
// The router and the sum follow the ggml ops llama.cpp's build_moe_ffn chains (soft_max, argsort
// top-k, get_rows, sum_rows, clamp, div; then mul and add), so a choice and its weights are
// llama.cpp's bits.
#include "ops/ops.h"

#include <math.h>

// The router's choice for one token (the contract is in ops/ops.h).
void mint_moe_route(const mint_vec_kernels *vk, float *probs, int32_t n_expert, int32_t k,
                    mint_moe_weights how, int32_t *ids, float *weights) {
    // llama.cpp sorts the probabilities, or for gpt-oss the logits themselves (the rounding of a
    // softmax can tie two logits that differ, so the two are not interchangeable).
    if (how != MINT_MOE_TOPK_SOFTMAX) mint_softmax(vk, probs, n_expert);
    // Top k by probability, the best first (ggml's argsort in descending order, then its first
    // k); a tie goes to the lower id. k is small (8 of 128): k passes of a linear scan.
    for (int32_t j = 0; j < k; j++) {
        int32_t best = -1;
        for (int32_t e = 0; e < n_expert; e++) {
            bool taken = false;
            for (int32_t i = 0; i < j && !taken; i++) taken = ids[i] == e;
            if (!taken && (best < 0 || probs[e] > probs[best])) best = e;
        }
        ids[j] = best;
        weights[j] = probs[best];
    }
    if (how == MINT_MOE_TOPK_SOFTMAX) { // ggml's soft_max over the k chosen logits
        mint_softmax(vk, weights, k);
        return;
    }
    if (how != MINT_MOE_PROBS_NORM) return;
    // Divided by their sum: summed in double and rounded (ggml's sum_rows), kept at least the
    // smallest normal f16 (its clamp against a sum of 0), then one division each.
    double sum = 0.0;
    for (int32_t j = 0; j < k; j++) sum += (double)weights[j];
    float s = (float)sum;
    if (!(s >= 6.103515625e-5f)) s = 6.103515625e-5f;
    for (int32_t j = 0; j < k; j++) weights[j] = weights[j] / s;
}

// dst = sum over j of weights[j] * y[j] (the contract is in ops/ops.h).
void mint_moe_sum(float *dst, const float *y, size_t y_stride, const float *weights, int32_t k,
                  int64_t n) {
    // ggml multiplies every expert's output by its weight (each product rounded), then adds the
    // products in the experts' order: ((y0 w0 + y1 w1) + y2 w2) + ...
    for (int64_t i = 0; i < n; i++) dst[i] = y[i] * weights[0];
    for (int32_t j = 1; j < k; j++) {
        const float *yj = (const float *)((const char *)y + (size_t)j * y_stride);
        for (int64_t i = 0; i < n; i++) {
            const float p = yj[i] * weights[j];
            dst[i] = dst[i] + p;
        }
    }
}

// dst += y * sigmoid(logit) (the contract is in ops/ops.h).
void mint_moe_shared_add(float *dst, const float *y, float logit, int64_t n) {
    // llama.cpp builds the gate as div(silu(x), x): silu rounded, then divided.
    const float silu = logit / (1.0f + expf(-logit));
    const float gate = silu / logit;
    for (int64_t i = 0; i < n; i++) {
        const float p = y[i] * gate;
        dst[i] = dst[i] + p;
    }
}

// gpt-oss's clamped SwiGLU (the contract is in ops/ops.h).
void mint_swiglu_oai(float *g, size_t g_stride, const float *u, size_t u_stride, int64_t n, long r0,
                     long r1) {
    const float alpha = 1.702f, limit = 7.0f; // llama.cpp's constants for gpt-oss
    for (long r = r0; r < r1; r++) {
        float *gr = (float *)((char *)g + (size_t)r * g_stride);
        const float *ur = (const float *)((const char *)u + (size_t)r * u_stride);
        for (int64_t i = 0; i < n; i++) {
            const float x = gr[i] < limit ? gr[i] : limit;
            const float y = ur[i] < -limit ? -limit : ur[i] > limit ? limit : ur[i];
            const float glu = x / (1.0f + expf(alpha * (-x)));
            gr[i] = glu * (y + 1.0f);
        }
    }
}
