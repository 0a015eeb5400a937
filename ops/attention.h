// attention.h - storing keys and values in a paged cache, and causal grouped-query attention
// over it in three algorithms: naive, row-wise and flash.
//
// The cache's layout, and the view of one sequence's keys and values the functions below take,
// are in ops/kv_view.h (shared with ops/attention_quant.h, which reads a quantized cache for
// ops/attention.c). ops/attention.c says why all three algorithms give a query the same bits
// whether it comes alone, in a batch, or in a batch of several sequences.
#ifndef MINT_ATTENTION_H
#define MINT_ATTENTION_H

#include "ops/kv_view.h"
#include "quant/kernels.h"

#include <stddef.h>
#include <stdint.h>

typedef struct mint_attn_shape {
    int n_head;    // query heads
    int n_head_kv; // key/value heads (n_head % n_head_kv == 0; a KV head serves n_head / n_head_kv)
    int head_dim;  // elements per head
    float scale;   // 1 / sqrt(head_dim)
    float softcap; // scores become softcap * tanh(score / softcap) before the softmax (Gemma 2),
                   // or 0 for none
} mint_attn_shape;

// The first key a query at position p sees under a window of `window` keys: p - window + 1, or 0
// (also without a window, window = 0).
static inline int32_t mint_attn_first_key(int32_t window, int32_t p) {
    return window > 0 && p - window + 1 > 0 ? p - window + 1 : 0;
}

// layer l, position pos of the sequence = (k, v), rounded to the cache type (a quantized cache:
// each row quantized as llama.cpp's CPU backend copies f32 into such a cache). The position's
// block must exist and be writable (the cache's business).
void mint_kv_store(const mint_kv_view *kv, int32_t l, int32_t pos, const float *k, const float *v);

typedef enum mint_attn_algo {
    MINT_ATTN_ALGO_NAIVE = 0,   // per head, the whole score matrix (queries x keys), softmax, x V
    MINT_ATTN_ALGO_ROWWISE = 1, // per (query, KV head), the score row of each head, softmax, x V
    MINT_ATTN_ALGO_FLASH = 2,   // per (query block, KV head), keys in steps, online softmax
    MINT_ATTN_ALGO_COUNT = 3,
} mint_attn_algo;

const char *mint_attn_algo_name(mint_attn_algo a);

// A run: consecutive rows of a batch that belong to one sequence, at consecutive positions.
typedef struct mint_attn_run {
    mint_kv_view kv; // the sequence's cache, holding positions 0 .. pos0 + n - 1
    int32_t row0;    // first row of the run in q and out
    int32_t n;       // rows
    int32_t pos0;    // position of the first row
    int32_t item0;   // first work item of the run (mint_attention_plan fills it)
} mint_attn_run;

// One layer's attention over a batch: every run's queries against its own sequence.
typedef struct mint_attn_batch {
    const mint_kernels *k;     // kernel table (its float vector kernels)
    const mint_attn_shape *sh; // head shapes
    mint_attn_algo algo;       // which algorithm
    int32_t layer;             // layer index into the cache
    const float *q;            // [rows] n_head * head_dim queries per row
    size_t q_stride;           // bytes between query rows
    float *out;                // [rows] n_head * head_dim outputs per row
    size_t out_stride;         // bytes between output rows
    mint_attn_run *runs;       // [n_runs] the runs of the batch
    int32_t n_runs;            // number of runs
    int32_t window;            // a query at position p sees keys p - window + 1 .. p (Gemma's
                               // local layers), or 0: every key up to p
    const float *sinks;        // [n_head] each head's sink logit (gpt-oss), or NULL: a term
                               // e^(sink - max) joins the softmax's sum and weighs no value
} mint_attn_batch;

// Cuts the batch into independent work items (sets every run's item0) and returns their count.
// The algorithm's item: naive (run, head); row-wise (row, KV head); flash (a block of queries of
// a run, KV head). Depends only on the runs, not on the layer.
int32_t mint_attention_plan(mint_attn_batch *b);
// Computes item i (0 <= i < the plan's count) with `scratch` of mint_attention_scratch_bytes.
void mint_attention_item(const mint_attn_batch *b, int32_t i, uint8_t *scratch);

// Scratch one thread needs for an algorithm, with at most n_rows queries per run and n_ctx
// positions per sequence in blocks of `block` (all f32):
//   naive:   the queries, S (n_rows x n_ctx, its rows become the probabilities) and the outputs
//            of one head;
//   rowwise: the same for the heads of one KV head and one query;
//   flash:   per query row of the item (at most 64), its query, one step of scores, its output,
//            running maximum and sum;
// and for all three, one block of one head's values dequantized (used by a quantized cache).
size_t mint_attention_scratch_bytes(mint_attn_algo algo, const mint_attn_shape *sh, int32_t n_rows,
                                    int32_t n_ctx, int32_t block);

// out[0..n_keys) = the attention weights of query q (one head) over the keys of KV head kvh in
// layer l: softmax(q . k * scale) over keys lo .. n_keys - 1 (0 before lo: outside a window),
// soft-capped when sh says so, with the head's sink logit in the sum when sink is not NULL, sums
// in double (ops/attention_probs.c). A quantized cache: q is converted to Q8_0 first, and
// head_dim must be at most MINT_ATTN_PROBS_MAX_HD.
#define MINT_ATTN_PROBS_MAX_HD 1024
void mint_attention_probs(const mint_kv_view *kv, int32_t l, const mint_attn_shape *sh,
                          const float *q, int kvh, int32_t lo, int32_t n_keys, const float *sink,
                          float *out);

#endif // MINT_ATTENTION_H
