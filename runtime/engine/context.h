// context.h - struct mint_ctx: everything one sequence needs, planned and allocated once at
// creation (the graph, activation buffers, KV cache, thread pool); mint_eval allocates nothing.
#ifndef MINT_CONTEXT_H
#define MINT_CONTEXT_H

#include "runtime/engine/exec.h"
#include "runtime/engine/graph.h"
#include "runtime/engine/kvcache.h"
#include "runtime/engine/model.h"
#include "runtime/engine/pool.h"

#include <stdatomic.h>

struct mint_ctx {
    mint_model *model;             // weights and vocabulary (not owned)
    mint_ctx_params params;        // resolved parameters
    const mint_kernels *k;         // kernel table of the chosen level
    mint_graph graph;              // the forward pass as nodes
    char *graph_text;              // mint_ctx_graph_text, made on first request
    mint_kvcache kv;               // keys and values of positions 0..n_past-1
    mint_pool *pool;               // n_threads workers (the caller is worker 0)
    void *buf[MINT_BUF_COUNT];     // activation buffers, [n_batch] rows each
    size_t stride[MINT_BUF_COUNT]; // bytes per row (rounded up to 64)
    uint8_t *att_scratch;          // [n_threads][att_scratch_bytes] attention work space
    size_t att_scratch_bytes;      // bytes per thread
    atomic_int *chunk;             // [n_nodes] dynamic work counters
    int32_t *pos;                  // [n_batch] positions of the rows of a batch
    int32_t n_logits;              // rows of logits from the last eval
    uint64_t n_evaluated;          // tokens evaluated since creation
};

#endif // MINT_CONTEXT_H
