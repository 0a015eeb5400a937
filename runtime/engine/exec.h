// exec.h - what the executor hands every node of one batch: buffers, shapes, kernels, rows and
// the sequences they belong to, the cache.
#ifndef MINT_EXEC_H
#define MINT_EXEC_H

#include "formats/imatrix.h"
#include "ops/attention.h"
#include "runtime/engine/graph.h"
#include "runtime/engine/kvcache.h"
#include "runtime/engine/rstate.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// A mixture of experts' batch, grouped per expert by the layer's MOE_GROUP node for its
// MOE_MATMULs: the rows (t, j) that chose expert e are rows[start[e] .. start[e + 1]), each
// t * k + j, in the batch's order; active[0 .. *n_active) the experts with any.
typedef struct mint_moe_groups {
    int32_t *rows;        // [n_batch * n_expert_used]
    int32_t *start;       // [n_expert + 1]
    int32_t *active;      // [n_expert]
    int32_t *n_active;    // [1]
    uint8_t *scratch;     // [n_threads][scratch_bytes]: a tile's gathered inputs and its outputs
    size_t scratch_bytes; // bytes per thread
} mint_moe_groups;

// Collecting an importance matrix (runtime/engine/imatrix.c): per node, the f32 buffer its
// weight's input was converted from, and the weight's entry once made.
typedef struct mint_imx_node {
    mint_buf_id src;       // the node's f32 input rows; MINT_BUF_NONE: not recorded
    mint_imx_entry *entry; // its weight's entry in the matrix, or NULL until the first rows
} mint_imx_node;

typedef struct mint_imx_state {
    mint_imatrix *im;    // where the sums go (not owned)
    mint_imx_node *node; // [n_nodes] of the context's graph
    mint_status status;  // the first failure (a size that differs, a sum not finite), sticky
    mint_err err;        // its message
} mint_imx_state;

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
    mint_moe_groups moe;           // a mixture's per-expert lists (all NULL for a dense model)
    int32_t *route_ids;            // or NULL: the experts chosen for sequence 0's rows, written
                                   // as route_ids[(layer * route_max + pos) * k + j]
    float *route_w;                // ... and their weights, the same way
    int32_t route_max;             // positions captured (rows at pos >= route_max are skipped)
    mint_rstate *rs;               // the sequences' recurrent state (a hybrid's; else empty)
    const mint_rs_snap_req *snaps; // [n_snaps] states to keep as the rows cross block boundaries
    int32_t n_snaps;               // number of them
    int32_t snap_block;            // positions per KV block (where the boundaries are)
    float *state_cap;              // or NULL: each recurrent layer's state norm per head after
                      // sequence 0's rows, state_cap[(slot * heads + h) * state_cap_max
                      // + pos] (heads: H_v, or 1 for LFM2's window)
    int32_t state_cap_max; // positions captured (rows at pos >= it are skipped)
    mint_imx_state *imx;   // or NULL: thread 0 adds each recorded matmul's inputs before it runs
} mint_exec;

// Row r of buffer b.
static inline void *mint_exec_row(const mint_exec *e, mint_buf_id b, int64_t r) {
    return (char *)e->buf[b] + (size_t)r * e->stride[b];
}

// A mixture's tile: up to MINT_MOE_TILE_ROWS rows of one expert against up to
// MINT_MOE_TILE_TOKENS of its rows (t, j) at once.
enum { MINT_MOE_TILE_ROWS = 64, MINT_MOE_TILE_TOKENS = 64 };

// Bytes of a thread's MOE_MATMUL scratch for inputs of in_bytes per row: the gathered inputs
// (64-byte aligned rows) and the tile's outputs.
static inline size_t mint_moe_scratch_bytes(size_t in_bytes) {
    return (size_t)MINT_MOE_TILE_TOKENS * ((in_bytes + 63) / 64 * 64) +
           (size_t)MINT_MOE_TILE_TOKENS * MINT_MOE_TILE_ROWS * sizeof(float);
}

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

// Which nodes of g an importance matrix records (as llama-imatrix: matmuls whose weight is named
// "blk.*", and "output.weight" when output), and their f32 inputs: node[i].src (imatrix.c).
void mint_imx_plan(const mint_graph *g, bool output, mint_imx_node *node);
// Adds node i's input rows to its weight's sums and counts (thread 0, before the node runs; its
// input is complete and no node writes it until the node's barrier).
void mint_imx_collect(const mint_graph *g, int i, const mint_exec *e);

#endif // MINT_EXEC_H
