// context.h - struct mint_ctx: everything evaluation needs, planned and allocated once at
// creation (the graph, activation buffers, the KV cache's tables, the thread pool, per-row
// arrays); mint_decode allocates nothing but KV blocks as sequences grow.
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
    mint_kvcache kv;               // the sequences' keys and values (attention layers')
    mint_rstate rs;                // the sequences' recurrent state (a hybrid's other layers)
    mint_rs_snap_req *snap_reqs;   // [rs.n_snap / 2] a batch's snapshots at block boundaries
    int32_t rs_ckpt;               // checkpoints per sequence (sized by the state's bytes)
    int32_t rs_snap;               // snapshots of the prefix cache's store (likewise)
    mint_pool *pool;               // n_threads workers (the caller is worker 0)
    void *buf[MINT_BUF_COUNT];     // activation buffers, [n_batch] rows each
    size_t stride[MINT_BUF_COUNT]; // bytes per row (rounded up to 64)
    uint8_t *att_scratch;          // [n_threads][att_scratch_bytes] attention work space
    size_t att_scratch_bytes;      // bytes per thread
    mint_moe_groups moe;           // a mixture's per-expert lists and scratch (NULLs if dense)
    int32_t kv_blocks;             // physical KV blocks at most: the sequences' own, plus the
                                   // prefix-cache budget's (params.prefix_cache_bytes)
    atomic_int *chunk;             // [n_nodes] dynamic work counters
    int32_t *ids;                  // [n_batch] token of each row of a batch
    int32_t *pos;                  // [n_batch] position of each row
    int32_t *seq;                  // [n_batch] sequence of each row
    int32_t *out_rows;             // [n_batch] rows whose logits are wanted
    int32_t *scratch_i32;          // [n_batch] tokens of one sequence, gathered for the cache
    mint_attn_run *runs;           // [n_batch] runs of a batch
    mint_kv_view *seq_kv;          // [n_seq_max] each sequence's cache view
    int32_t *seq_next;             // [n_seq_max] validation: next position of each sequence
    int32_t *seq_count;            // [n_seq_max] validation: entries of each sequence
    mint_batch_entry *entries;     // [n_batch] mint_eval's batches
    int last_algo;                 // mint_attn_algo of the last evaluation (-1 before any)
    float *capture;                // attention weights of sequence 0, or NULL (mint.h's layout)
    int32_t cap_max;               // positions captured
    int32_t *route_ids;            // the experts each layer chose for sequence 0, or NULL
                                   // (mint_ctx_capture_routing's layout)
    float *route_w;                // their weights
    float *state_cap;              // a hybrid's state norms of sequence 0, or NULL
                                   // (mint_ctx_capture_state's layout)
    int32_t state_cap_max;         // positions captured
    int32_t route_max;             // positions captured
    bool trace;                    // record the nodes of each evaluation
    double *trace_t;               // [n_nodes + 1] node end times of the last evaluation
    mint_trace_node *trace_nodes;  // [n_nodes] the last evaluation's nodes, when tracing
    int32_t n_trace;               // entries in trace_nodes (0: none)
    int32_t n_logits;              // rows of logits from the last evaluation
    uint64_t n_evaluated;          // tokens evaluated since creation
    mint_imx_state imx;            // the importance matrix being collected (imx.im NULL: none;
                                   // imx.node [graph.n_nodes])
};

// Fills c->trace_nodes from the evaluation just run (runtime/engine/trace.c).
void mint_trace_fill(mint_ctx *c, const mint_exec *x);

// The algorithm a batch of these runs uses (resolves auto: context.c says how).
mint_attn_algo mint_ctx_choose_attention(const mint_ctx *c, const mint_attn_run *runs,
                                         int32_t n_runs);

#endif // MINT_CONTEXT_H
