// exec.h - what the executor hands every node of one batch: buffers, shapes, kernels, rows and
// the sequences they belong to, the cache.
#ifndef MINT_EXEC_H
#define MINT_EXEC_H

#include "ops/attention.h"
#include "runtime/engine/graph.h"
#include "runtime/engine/kvcache.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mint_exec {
    const mint_hparams *hp;        // model shapes
    const mint_kernels *k;         // kernel table in use
    mint_attn_shape attn;          // head shapes for the attention ops
    int32_t n_tokens;              // rows in this batch
    int32_t n_out;                 // rows whose logits are wanted
    const int32_t *ids;            // [n_tokens] token id of each row
    const int32_t *pos;            // [n_tokens] position of each row in its sequence
    const int32_t *seq;            // [n_tokens] sequence of each row
    const int32_t *out_rows;       // [n_out] the rows whose logits are wanted, in order
    const mint_kv_view *seq_kv;    // [n_seq] each sequence's cache view
    mint_attn_run *runs;           // [n_runs] runs of rows (one sequence, consecutive positions)
    int32_t n_runs;                // number of runs
    mint_attn_algo attn_algo;      // attention algorithm for this batch
    int32_t n_attn_items;          // work items of one layer's attention
    void *buf[MINT_BUF_COUNT];     // buffer base pointers
    size_t stride[MINT_BUF_COUNT]; // bytes per row of each buffer
    uint8_t *att_scratch;          // [nth][att_scratch_bytes] attention work space per thread
    size_t att_scratch_bytes;      // bytes per thread (mint_attention_scratch_bytes)
    atomic_int *chunk;             // work counters of the dynamically split nodes (below)
    int n_threads;                 // threads of the pool
    float *capture;                // or NULL: attention weights of sequence 0's rows, written as
                                   // capture[((layer * n_head + h) * cap_max + pos) * cap_max + j]
    int32_t cap_max;               // positions captured (rows at pos >= cap_max are skipped)
    double *node_end;              // [n_nodes + 1] or NULL: thread 0 stores the start, then the
                                   // time each node's barrier released (tracing)
} mint_exec;

// Work counters, one per 64-byte line: per node, slot 0 hands out a batch's tiles (and
// attention's items), slot 1 + ith the chunks of thread ith's share of a one-token matmul.
enum { MINT_CHUNK_PAD = 16 };
static inline size_t mint_exec_counters(int n_nodes, int n_threads) {
    return (size_t)n_nodes * (size_t)(n_threads + 1) * MINT_CHUNK_PAD;
}
static inline atomic_int *mint_exec_counter(const mint_exec *e, int node, int slot) {
    return &e->chunk[((size_t)node * (size_t)(e->n_threads + 1) + (size_t)slot) * MINT_CHUNK_PAD];
}

// Runs the nodes of g for one batch on the pool: every thread walks the node list, does its
// share of each node, and meets the others at a barrier before the next one.
typedef struct mint_pool mint_pool;
void mint_exec_graph(const mint_graph *g, const mint_exec *e, mint_pool *pool);

#endif // MINT_EXEC_H
