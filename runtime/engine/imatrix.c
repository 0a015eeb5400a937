// imatrix.c - collecting an importance matrix while the graph runs, as llama-imatrix's
// collect_imatrix does (docs/formats.md 11.5): for a matmul node of a recorded weight, the
// squares of its f32 input rows are added per column to the weight's sums, and the rows to its
// count; for a stack of experts, per routing slot and token, to the chosen expert's.
//
// Thread 0 does it at the start of the node, in row order (slot-major for experts, as
// llama-imatrix), so the sums do not depend on the thread count.
#include "runtime/engine/exec.h"

#include "base/error.h"

#include <math.h>
#include <string.h>

// llama-imatrix skips a matmul (not an expert stack's) of fewer rows than this.
enum { MIN_ROWS = 16 };

void mint_imx_plan(const mint_graph *g, bool output, mint_imx_node *node) {
    for (int i = 0; i < g->n_nodes; i++) {
        const mint_node *n = &g->nodes[i];
        node[i] = (mint_imx_node){.src = MINT_BUF_NONE, .entry = NULL};
        if (n->op != MINT_OP_MATMUL && n->op != MINT_OP_MOE_MATMUL) continue;
        const char *name = n->w && n->w->name ? n->w->name : "";
        if (strncmp(name, "blk.", 4) != 0 && !(output && strcmp(name, "output.weight") == 0))
            continue;
        // The f32 rows: the source of the conversion that made the node's input (the nearest
        // CONVERT before it into that buffer), or the input itself when it needed none (F32).
        mint_buf_id src = n->src;
        for (int j = i - 1; j >= 0; j--) {
            if (g->nodes[j].dst != n->src) continue;
            if (g->nodes[j].op == MINT_OP_CONVERT) src = g->nodes[j].src;
            break;
        }
        // A fused matrix (Phi-3's attn_qkv, its gate and up in ffn_up) runs as one node per
        // part, all of one name on the same input: llama.cpp multiplies it once, so only the
        // first part records.
        bool part = false;
        for (int j = i - 1; j >= 0 && !part; j--) {
            if (g->nodes[j].dst == src) break; // the input was written since
            part = node[j].src == src && strcmp(g->nodes[j].w->name, name) == 0;
        }
        if (!part) node[i].src = src;
    }
}

static void fail(mint_imx_state *s, mint_status st) {
    s->status = st;
}

// Entry of a dense weight, with llama-imatrix's folding of equal per-expert counts into one (an
// entry combined from an older file).
static mint_imx_entry *dense_entry(mint_imx_state *s, mint_imx_node *q, const mint_weight *w) {
    if (!q->entry &&
        (s->status = mint_imatrix_get_or_add(s->im, w->name, w->n_in, 1, &q->entry, &s->err)))
        return NULL;
    mint_imx_entry *e = q->entry;
    if (e->n_vals != w->n_in) {
        fail(s, mint_fail(&s->err, MINT_E_LIMIT, "imatrix: inconsistent size for %s (%lld vs %lld)",
                          w->name, (long long)e->n_vals, (long long)w->n_in));
        return NULL;
    }
    bool equal = true;
    for (int64_t j = 1; j < e->n_counts; j++) equal &= e->counts[j] == e->counts[0];
    if (equal && e->n_counts > 1) e->n_counts = 1;
    return e;
}

static void check_finite(mint_imx_state *s, const float *v, int64_t n, const char *name) {
    for (int64_t j = 0; j < n; j++)
        if (!isfinite(v[j])) {
            fail(s, mint_fail(&s->err, MINT_E_FORMAT, "imatrix: non-finite values detected in %s",
                              name));
            return;
        }
}

static void collect_dense(mint_imx_state *s, mint_imx_node *q, const mint_node *n,
                          const mint_exec *e) {
    const int64_t rows = n->out_only ? e->n_out : e->n_tokens;
    if (rows < MIN_ROWS) return;
    const mint_weight *w = n->w;
    mint_imx_entry *en = dense_entry(s, q, w);
    if (!en) return;
    float *acc = en->sums;
    for (int64_t r = 0; r < rows; r++) {
        const float *x = mint_exec_row(e, q->src, r);
        for (int64_t j = 0; j < w->n_in; j++) acc[j] += x[j] * x[j];
    }
    check_finite(s, acc, en->n_vals, w->name);
    for (int64_t j = 0; j < en->n_counts; j++) en->counts[j] += rows;
}

static void collect_experts(mint_imx_state *s, mint_imx_node *q, const mint_node *n,
                            const mint_exec *e) {
    const mint_weight *w = n->w;
    const int64_t n_as = w->n_mat > 1 ? w->n_mat : 1, ne0 = w->n_in;
    const int32_t k = e->hp->n_expert_used;
    if (!q->entry &&
        (s->status = mint_imatrix_get_or_add(s->im, w->name, ne0 * n_as, n_as, &q->entry, &s->err)))
        return;
    mint_imx_entry *en = q->entry;
    if (en->n_counts == 1 && n_as > 1) { // an older file's single count, copied to every expert
        int64_t *c = realloc(en->counts, (size_t)n_as * sizeof *c);
        if (!c) {
            fail(s, mint_fail(&s->err, MINT_E_NOMEM, "imatrix: out of memory"));
            return;
        }
        for (int64_t j = 1; j < n_as; j++) c[j] = c[0];
        en->counts = c;
        en->n_counts = n_as;
    }
    if (en->n_vals != ne0 * n_as || en->n_counts != n_as) {
        fail(s, mint_fail(&s->err, MINT_E_LIMIT,
                          "imatrix: inconsistent size for %s (%lld values, %lld counts vs %lld, "
                          "%lld)",
                          w->name, (long long)en->n_vals, (long long)en->n_counts,
                          (long long)(ne0 * n_as), (long long)n_as));
        return;
    }
    // Slot by slot, token by token: llama-imatrix's order.
    for (int32_t j = 0; j < k; j++) {
        for (int32_t t = 0; t < e->n_tokens; t++) {
            const float *sel = mint_exec_row(e, MINT_BUF_SEL, t);
            const int64_t ex = (int64_t)sel[j];
            const float *x =
                (const float *)mint_exec_row(e, q->src, t) + (n->per_slot ? j * ne0 : 0);
            float *acc = en->sums + ex * ne0;
            en->counts[ex]++;
            for (int64_t c = 0; c < ne0; c++) acc[c] += x[c] * x[c];
        }
    }
    check_finite(s, en->sums, en->n_vals, w->name);
}

void mint_imx_collect(const mint_graph *g, int i, const mint_exec *e) {
    mint_imx_state *s = e->imx;
    mint_imx_node *q = &s->node[i];
    if (q->src == MINT_BUF_NONE || s->status != MINT_OK) return;
    const mint_node *n = &g->nodes[i];
    if (n->op == MINT_OP_MOE_MATMUL)
        collect_experts(s, q, n, e);
    else
        collect_dense(s, q, n, e);
}
