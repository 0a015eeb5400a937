// exec.c - running the graph: every thread walks the same node list, does its share of each
// node, and meets the others at a barrier before the next node.
#include "runtime/context.h"

static const mint_op_fn op_table[MINT_OP_COUNT] = {
    [MINT_OP_GET_ROWS] = op_get_rows,   [MINT_OP_RMS_NORM] = op_rms_norm,
    [MINT_OP_CONVERT] = op_convert,     [MINT_OP_MATMUL] = op_matmul,
    [MINT_OP_ROPE] = op_rope,           [MINT_OP_KV_STORE] = op_kv_store,
    [MINT_OP_ATTENTION] = op_attention, [MINT_OP_ADD] = op_add,
    [MINT_OP_SILU_MUL] = op_silu_mul,
};

typedef struct run {
    mint_ctx *c; // context
    mint_exec e; // what every op reads (shared, read-only during the run)
} run;

static void run_graph(void *arg, int ith, int nth) {
    run *r = arg;
    const mint_graph *g = &r->c->graph;
    mint_exec e = r->e; // a private copy: node_index differs per step
    for (int i = 0; i < g->n_nodes; i++) {
        e.node_index = i;
        op_table[g->nodes[i].op](&g->nodes[i], &e, ith, nth);
        mint_pool_barrier(r->c->pool);
    }
}

void mint_exec_batch(mint_ctx *c, const int32_t *ids, int32_t n, int32_t pos, int32_t out_first) {
    run r = {c, {0}};
    mint_exec *e = &r.e;
    e->hp = &c->model->hp;
    e->k = mint_kernels_get();
    e->n_tokens = n;
    e->pos = pos;
    e->ids = ids;
    e->out_first = out_first;
    for (int b = 0; b < MINT_BUF_COUNT; b++) {
        e->buf[b] = c->buf[b];
        e->stride[b] = c->stride[b];
    }
    e->kv = &c->kv;
    e->att_scratch = c->att_scratch;
    e->att_scratch_bytes = c->att_scratch_bytes;
    e->attn_naive = c->params.naive_attention;
    e->chunk = c->chunk;
    for (int i = 0; i < c->graph.n_nodes; i++) atomic_store(&c->chunk[i], 0);
    mint_pool_run(c->pool, run_graph, &r);
}
