// trace.c - what tracing reports about the last evaluation: each node with its shapes, types,
// the bytes it reads, its time and how many threads had work in it.
//
// The times come from the executor: thread 0 notes the clock when each node's barrier releases
// (runtime/engine/exec.c), so a node's time includes waiting for its slowest thread. The bytes
// are worked out from the shapes: a matmul reads its whole weight and its converted activations;
// attention reads, for every run of rows, the keys and values of all the positions it attends.
#include "runtime/engine/context.h"

#include "quant/types.h"

#include <string.h>

// Threads that get a share of n items split over nth.
static int32_t busy(int64_t n, int nth) {
    return n < nth ? (int32_t)n : nth;
}

void mint_trace_fill(mint_ctx *c, const mint_exec *x) {
    const mint_graph *g = &c->graph;
    const int nth = c->params.n_threads;
    const size_t kv_row = (size_t)c->kv.row_bytes;
    uint64_t kv_bytes = 0; // keys and values one attention node reads
    for (int32_t r = 0; r < x->n_runs; r++)
        kv_bytes += (uint64_t)(x->runs[r].pos0 + x->runs[r].n) * kv_row * 2;
    for (int i = 0; i < g->n_nodes; i++) {
        const mint_node *n = &g->nodes[i];
        const int32_t rows = n->out_only ? x->n_out : x->n_tokens;
        const uint64_t row_f32 = (uint64_t)n->width * 4;
        mint_trace_node *t = &c->trace_nodes[i];
        memset(t, 0, sizeof *t);
        t->name = n->name;
        t->op = mint_op_name(n->op);
        t->rows = rows;
        t->width = n->width;
        t->weight_type = n->w ? mint_type_name(n->w->type) : "";
        t->act_type =
            n->op == MINT_OP_MATMUL || n->op == MINT_OP_CONVERT ? mint_type_name(n->type) : "";
        if (n->w) t->weight_ne[0] = n->w->n_in, t->weight_ne[1] = n->w->n_out;
        t->seconds = c->trace_t[i + 1] - c->trace_t[i];
        t->threads = busy(rows, nth);
        switch (n->op) {
        case MINT_OP_GET_ROWS:
            t->bytes_read = (uint64_t)rows * n->w->row_bytes;
            break;
        case MINT_OP_RMS_NORM:
            t->bytes_read = (uint64_t)rows * row_f32 + row_f32;
            break;
        case MINT_OP_CONVERT:
            t->bytes_read = (uint64_t)rows * row_f32;
            break;
        case MINT_OP_MATMUL: {
            const uint64_t act = mint_row_size(n->type, n->w->n_in);
            t->bytes_read = (uint64_t)n->w->n_out * n->w->row_bytes + (uint64_t)rows * act;
            const int64_t items =
                rows == 1 ? n->w->n_out : (n->w->n_out + 63) / 64 * ((rows + 63) / 64);
            t->threads = busy(items, nth);
            break;
        }
        case MINT_OP_KV_STORE:
            t->bytes_read = (uint64_t)rows * row_f32 * 2;
            break;
        case MINT_OP_ATTENTION:
            t->bytes_read = kv_bytes + (uint64_t)rows * row_f32;
            t->threads = busy(x->n_attn_items, nth);
            break;
        default:
            t->bytes_read = (uint64_t)rows * row_f32 * 2;
            break;
        }
    }
    c->n_trace = g->n_nodes;
}

void mint_ctx_set_trace(mint_ctx *c, bool on) {
    c->trace = on;
    if (!on) c->n_trace = 0;
}

int32_t mint_ctx_last_trace(const mint_ctx *c, const mint_trace_node **nodes) {
    if (nodes) *nodes = c->n_trace ? c->trace_nodes : NULL;
    return c->n_trace;
}
