// exec.c - running the graph: binds each node to its op call and splits the node's rows across
// the threads. Every thread walks the same node list, does its share of each node, and meets
// the others at a barrier before the next node.
//
// Small nodes run on one thread. A node whose work is below SERIAL_WORK (a one-token step of a
// model a few hundred wide: its norms, adds, RoPE, small matmuls) is run by thread 0 alone while
// the others go straight to the next node that is worth splitting; consecutive small nodes then
// need no barrier between them. A barrier costs far more than such a node when a thread has no
// core (a busy machine: the thread the others wait for is descheduled for milliseconds), and a
// graph with no node worth splitting does not wake the workers at all. Results are unchanged: a
// node computed by one thread has the same bits as split (next paragraph).
//
// Splits. Row ops (norms, conversions, RoPE, adds, the KV store) give each thread a contiguous
// range of rows. A matmul of one token gives each thread a contiguous range of weight rows, so
// each streams its part of the weight once; a batch is cut into tiles of ROW_BLOCK weight rows
// by TOKEN_BLOCK tokens handed out through an atomic counter. Attention hands out its items
// (query blocks x KV heads) the same way. No split cuts a dot product, so the results do not
// depend on the thread count.
#include "runtime/engine/exec.h"
#include "runtime/engine/exec_hybrid.h"

#include "base/clock.h"
#include "ops/ops.h"
#include "quant/pack.h"
#include "runtime/engine/pool.h"

#include <string.h>

// Tile sizes for a batched matmul: ROW_BLOCK weight rows stay in L2 while TOKEN_BLOCK converted
// activation rows are reused against them.
enum { ROW_BLOCK = 64, TOKEN_BLOCK = 64 };

// Up to SMALL_BATCH tokens (a step of several sequences, a speculative check), a matmul over
// repacked rows is split like one token's (each thread one stream through its share of the
// weights), and the kernel takes all the tokens against each block it unpacks: the batch tiles
// below build panels per tile, which a few tokens do not repay. Only for repacked matrices, where
// the kernels have that path (AVX-512); elsewhere (float types, AVX2 and NEON, whose tiles take
// up to 8 tokens against each weight block) the tiles serve. Bits are the same either way
// (every gemm equals the one-token kernel per element, quant/kernels.h).
enum { SMALL_BATCH = 16 };

// Row r of buffer b.
static inline void *row(const mint_exec *e, mint_buf_id b, int64_t r) {
    return (char *)e->buf[b] + (size_t)r * e->stride[b];
}

// Rows a node works on: every row of the batch, or the packed wanted ones (final norm, output).
static inline int32_t n_rows(const mint_exec *e, const mint_node *n) {
    return n->out_only ? e->n_out : e->n_tokens;
}

typedef void (*bind_fn)(const mint_node *n, const mint_exec *e, int node, int ith, int nth);

static void run_get_rows(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    mint_get_rows(e->k->t[n->w->type].to_float, n->w->data, n->w->row_bytes, n->w->n_in, e->ids,
                  e->buf[n->dst], e->stride[n->dst], lo, hi);
}

static void run_rms_norm(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(n_rows(e, n), ith, nth, &lo, &hi);
    mint_rms_norm(e->buf[n->src], e->stride[n->src], n->w->data, e->buf[n->dst], e->stride[n->dst],
                  n->width, e->hp->rms_eps, lo, hi);
}

static void run_convert(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(n_rows(e, n), ith, nth, &lo, &hi);
    mint_convert(e->k->t[n->type].from_float, e->buf[n->src], e->stride[n->src], e->buf[n->dst],
                 e->stride[n->dst], n->width, lo, hi);
}

static void run_gather(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_out, ith, nth, &lo, &hi);
    for (long i = lo; i < hi; i++)
        memcpy(row(e, n->dst, i), row(e, n->src, e->out_rows[i]), (size_t)n->width * sizeof(float));
}

// The weight's packed rows if this context's kernels read them (a level without gemm_packed,
// e.g. a context forced to the reference, reads the file's layout), NULL otherwise. Read once
// per tile: a matrix the background packer finishes mid-evaluation switches between tiles,
// which changes no bit (gemm_packed equals gemm).
static inline const char *packed_rows(const mint_type_kernels *tk, const mint_weight *w) {
    return tk->gemm_packed ? mint_weight_packed(w) : NULL;
}

// y[c * y_stride + r] = W[r0 + r] . a[c] for a tile of the weight (r0 a multiple of 16 when
// packed).
static void matmul_tile(const mint_type_kernels *tk, const mint_weight *w, int64_t r0, int nr,
                        const char *a, size_t a_stride, int nc, float *y, size_t y_stride) {
    const char *packed = packed_rows(tk, w);
    if (packed) {
        const char *wg = packed + (size_t)(r0 / MINT_PACK_ROWS) * w->pack_stride;
        tk->gemm_packed(w->n_in, wg, w->pack_stride, nr, a, a_stride, nc, y, y_stride);
        return;
    }
    const char *wr = (const char *)mint_weight_rows(w) + (size_t)r0 * w->row_bytes;
    mint_gemm_tile(tk, w->n_in, wr, w->row_bytes, nr, a, a_stride, nc, y, y_stride);
}

// The next chunk [*u0, *u1) of a node's `units` for thread ith, or false when none is left.
// Each thread owns a contiguous share of the units, taken in about 8 chunks from its own
// counter; a thread done with its share takes what is left of the others' (*v: the owner it is
// on, 0 at the start). On a shared or busy machine one thread is often descheduled for a while:
// the other goes on with its work instead of waiting at the barrier.
static bool next_chunk(const mint_exec *e, int node, int ith, int nth, long units, int *v, long *u0,
                       long *u1) {
    const long share = (units + nth - 1) / nth;
    const long cg = share / 8 > 1 ? share / 8 : 1;
    for (; *v < nth; (*v)++) {
        const int o = (ith + *v) % nth;
        long lo, hi;
        mint_split(units, o, nth, &lo, &hi);
        const long c = atomic_fetch_add(mint_exec_counter(e, node, 1 + o), 1);
        if (lo + c * cg < hi) {
            *u0 = lo + c * cg;
            *u1 = *u0 + cg < hi ? *u0 + cg : hi;
            return true;
        }
    }
    return false;
}

static void run_matmul(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    const mint_weight *w = n->w;
    const mint_type_kernels *tk = &e->k->t[w->type];
    const int64_t n_tok = n_rows(e, n);
    const char *a = e->buf[n->src];
    const size_t a_stride = e->stride[n->src];
    float *y = e->buf[n->dst];
    const size_t y_stride = e->stride[n->dst] / sizeof(float);

    if (n_tok == 0) return; // the output of a batch that wants no logits
    if (n_tok == 1 || (n_tok <= SMALL_BATCH && packed_rows(tk, w))) {
        // Each thread owns a contiguous share of the 16-row groups (the packed layout's unit),
        // one stream through the weights (next_chunk).
        const long groups = (long)((w->n_out + MINT_PACK_ROWS - 1) / MINT_PACK_ROWS);
        long g0, g1;
        for (int v = 0; next_chunk(e, node, ith, nth, groups, &v, &g0, &g1);) {
            const long r0 = g0 * MINT_PACK_ROWS;
            const long r1 = g1 * MINT_PACK_ROWS < w->n_out ? g1 * MINT_PACK_ROWS : (long)w->n_out;
            matmul_tile(tk, w, r0, (int)(r1 - r0), a, a_stride, (int)n_tok, y + r0, y_stride);
        }
        return;
    }
    // A kernel whose panels cost more to build than the K-quants' asks for more tokens per tile.
    const int64_t tok_block = tk->token_block ? tk->token_block : TOKEN_BLOCK;
    const int64_t row_blocks = (w->n_out + ROW_BLOCK - 1) / ROW_BLOCK;
    const int64_t tok_blocks = (n_tok + tok_block - 1) / tok_block;
    const int64_t n_tiles = row_blocks * tok_blocks;
    atomic_int *counter = mint_exec_counter(e, node, 0);
    for (int64_t i = atomic_fetch_add(counter, 1); i < n_tiles; i = atomic_fetch_add(counter, 1)) {
        // Token blocks inner: consecutive tiles reuse the same weight rows from cache.
        const int64_t rb = i / tok_blocks, tb = i % tok_blocks;
        const int64_t r0 = rb * ROW_BLOCK, c0 = tb * tok_block;
        const int nr = (int)(w->n_out - r0 < ROW_BLOCK ? w->n_out - r0 : ROW_BLOCK);
        const int nc = (int)(n_tok - c0 < tok_block ? n_tok - c0 : tok_block);
        matmul_tile(tk, w, r0, nr, a + (size_t)c0 * a_stride, a_stride, nc,
                    y + (size_t)c0 * y_stride + r0, y_stride);
    }
}

static void run_rope(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    const mint_hparams *hp = e->hp;
    const bool local = mint_layer_windowed(hp, n->layer);    // Gemma's window layers: own base
    const int32_t n_rot = local ? hp->n_rot_swa : hp->n_rot; // (and Gemma 4's: own size)
    mint_rope_cfg cfg = {n_rot,
                         local ? hp->rope_base_swa : hp->rope_base,
                         local ? hp->rope_freq_scale_swa : hp->rope_freq_scale,
                         n->w ? n->w->data : NULL,
                         hp->rope_neox,
                         hp->rope_mscale,
                         hp->rope_ext_factor,
                         {0.0f, 0.0f}};
    if (cfg.ext_factor != 0.0f) // YaRN's range depends on the layer's base
        mint_rope_yarn_corr_dims(n_rot, hp->n_ctx_orig, cfg.base, cfg.corr_dims);
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    mint_rope(e->buf[n->dst], e->stride[n->dst], e->pos, (int)(n->width / n->head_dim), n->head_dim,
              &cfg, lo, hi);
}

static void run_add_bias(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(n_rows(e, n), ith, nth, &lo, &hi); // the final LayerNorm's bias: wanted rows
    mint_add(e->buf[n->dst], e->stride[n->dst], n->w->data, 0, n->width, lo, hi); // every row + w
}

// The norm's length is its weight's: a head (Qwen3), or the whole row (OLMoE).
static void run_head_norm(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    const int hd = (int)n->w->n_in;
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    mint_rms_norm_heads(e->buf[n->dst], e->stride[n->dst], n->w->data, (int)(n->width / hd), hd,
                        e->hp->rms_eps, lo, hi);
}

// A layer whose keys and values are narrower than the cache's rows (a Gemma 4 window layer)
// stores its n->width elements at the start of each row.
static void run_kv_store(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    for (long t = lo; t < hi; t++) {
        mint_kv_view kv = e->seq_kv[e->seq[t]];
        kv.kv_dim = n->width;
        mint_kv_store(&kv, n->slot, e->pos[t], row(e, n->src, t), row(e, n->src2, t));
    }
}

// The attention shapes of the layer of node n: its head size (Gemma 4's vary by layer).
static mint_attn_shape layer_shape(const mint_node *n, const mint_exec *e) {
    mint_attn_shape sh = e->attn;
    sh.head_dim = n->head_dim;
    return sh;
}

// The attention weights of sequence 0's rows below cap_max, (row, head) pairs split across
// threads; they read only the queries and the cache, so they run beside the items.
static void capture_attention(const mint_node *n, const mint_exec *e, int ith, int nth) {
    const mint_attn_shape shape = layer_shape(n, e), *sh = &shape;
    const int group = sh->n_head / sh->n_head_kv;
    const size_t cm = (size_t)e->cap_max;
    long lo, hi;
    mint_split((long)e->n_tokens * sh->n_head, ith, nth, &lo, &hi);
    for (long idx = lo; idx < hi; idx++) {
        const int32_t t = (int32_t)(idx / sh->n_head);
        const int h = (int)(idx % sh->n_head);
        if (e->seq[t] != 0 || e->pos[t] >= e->cap_max) continue;
        float *out = e->capture + (((size_t)n->layer * sh->n_head + h) * cm + e->pos[t]) * cm;
        const float *q = (const float *)row(e, n->src, t) + (size_t)h * sh->head_dim;
        const int32_t first = mint_attn_first_key(mint_layer_window(e->hp, n->layer), e->pos[t]);
        const float *sink = n->w ? (const float *)n->w->data + h : NULL;
        mint_attention_probs(&e->seq_kv[0], n->slot, sh, q, h / group, first, e->pos[t] + 1, sink,
                             out);
    }
}

static void run_attention(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    const mint_attn_shape sh = layer_shape(n, e);
    const mint_attn_batch b = {
        .k = e->k,
        .sh = &sh,
        .algo = e->attn_algo,
        .layer = n->slot,
        .q = e->buf[n->src],
        .q_stride = e->stride[n->src],
        .out = e->buf[n->dst],
        .out_stride = e->stride[n->dst],
        .runs = e->runs,
        .n_runs = e->n_runs,
        .window = mint_layer_window(e->hp, n->layer),
        .sinks = n->w ? n->w->data : NULL,
    };
    uint8_t *scratch = e->att_scratch + (size_t)ith * e->att_scratch_bytes;
    atomic_int *counter = mint_exec_counter(e, node, 0);
    for (int32_t i = atomic_fetch_add(counter, 1); i < e->n_attn_items;
         i = atomic_fetch_add(counter, 1))
        mint_attention_item(&b, i, scratch);
    if (e->capture) capture_attention(n, e, ith, nth);
}

static void run_add(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    mint_add(e->buf[n->dst], e->stride[n->dst], e->buf[n->src], e->stride[n->src], n->width, lo,
             hi);
}

static void run_silu_mul(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    mint_silu_mul(e->buf[n->dst], e->stride[n->dst], e->buf[n->src], e->stride[n->src], n->width,
                  lo, hi);
}

static void run_scale(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    mint_scale(e->buf[n->dst], e->stride[n->dst], n->scale, n->width, lo, hi);
}

static void run_layer_norm(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(n_rows(e, n), ith, nth, &lo, &hi);
    mint_layer_norm(e->buf[n->src], e->stride[n->src], n->w->data, e->buf[n->dst],
                    e->stride[n->dst], n->width, e->hp->rms_eps, lo, hi);
}

static void run_gelu(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    mint_gelu(e->buf[n->dst], e->stride[n->dst], n->width, lo, hi);
}

static void run_pos_rows(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    mint_get_rows(e->k->t[n->w->type].to_float, n->w->data, n->w->row_bytes, n->w->n_in, e->pos,
                  e->buf[n->dst], e->stride[n->dst], lo, hi);
}

static void run_gelu_mul(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    mint_gelu_mul(e->buf[n->dst], e->stride[n->dst], (const float *)e->buf[n->src] + n->src_at,
                  e->stride[n->src], n->width, lo, hi);
}

static void run_softcap(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(n_rows(e, n), ith, nth, &lo, &hi);
    mint_softcap(e->buf[n->dst], e->stride[n->dst], n->scale, n->width, lo, hi);
}

// ---------------------------------------------------------------------------------------------
// A mixture of experts (graph.h): the router's choice per row, the rows grouped per expert, each
// expert's rows multiplied with the tokens that chose it, the weighted sum.

static void run_moe_route(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    const int32_t k = e->hp->n_expert_used;
    int32_t ids[512]; // n_expert_used <= n_expert <= 512 (runtime/engine/model.c)
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    for (long t = lo; t < hi; t++) {
        float *sel = row(e, n->dst, t);
        mint_moe_route(&e->k->vec, row(e, n->src, t), e->hp->n_expert, k, (mint_moe_weights)n->type,
                       ids, sel + k);
        for (int32_t j = 0; j < k; j++) sel[j] = (float)ids[j];
        if (e->route_ids && e->seq[t] == 0 && e->pos[t] < e->route_max) { // for looking at it
            const size_t at = ((size_t)n->layer * (size_t)e->route_max + (size_t)e->pos[t]) * k;
            memcpy(e->route_ids + at, ids, (size_t)k * sizeof *ids);
            memcpy(e->route_w + at, sel + k, (size_t)k * sizeof *sel);
        }
    }
}

// One thread (the node is always small): a counting sort of the rows (t, j) by expert.
static void run_moe_group(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    const int32_t k = e->hp->n_expert_used, n_expert = e->hp->n_expert;
    const mint_moe_groups *g = &e->moe;
    memset(g->start, 0, (size_t)(n_expert + 1) * sizeof *g->start);
    for (int32_t t = 0; t < e->n_tokens; t++) {
        const float *sel = row(e, n->src, t);
        for (int32_t j = 0; j < k; j++) g->start[(int32_t)sel[j] + 1]++;
    }
    *g->n_active = 0;
    for (int32_t x = 0; x < n_expert; x++) {
        if (g->start[x + 1] > 0) g->active[(*g->n_active)++] = x;
        g->start[x + 1] += g->start[x];
    }
    // Fill in batch order, each expert's cursor running from its start (start[x] is restored by
    // the end: every cursor ends where the next expert's list begins).
    for (int32_t t = 0; t < e->n_tokens; t++) {
        const float *sel = row(e, n->src, t);
        for (int32_t j = 0; j < k; j++) g->rows[g->start[(int32_t)sel[j]]++] = t * k + j;
    }
    for (int32_t x = n_expert; x > 0; x--) g->start[x] = g->start[x - 1];
    g->start[0] = 0;
}

// Items are (active expert, block of MINT_MOE_TILE_ROWS weight rows), handed out through an
// atomic counter; each multiplies that block with the rows (t, j) that chose the expert,
// MINT_MOE_TILE_TOKENS at a time, gathered into the thread's scratch so that the gemm kernels
// take them against each block they read, the outputs then scattered to dst[t][j]. A lone row of
// a shared input (a token's gate and up: every slot reads the whole row) is read in place: its
// buffer row is as aligned as the scratch, and copying it once per item of a one-token step
// would copy it (experts x blocks) times. Every output is one dot product, whatever the tile.
// One token (a generation step): its k experts' rows as one list of 16-row groups in expert
// order, cut as run_matmul cuts one matrix (next_chunk): a contiguous share per thread, a stream
// through one expert's rows, then the next's. Each run of groups within one expert is one kernel
// call writing straight into the slot's output. Every output is the same dot product as in the
// batched path.
static void moe_matmul_one_token(const mint_node *n, const mint_exec *e, int node, int ith,
                                 int nth) {
    const mint_weight *w = n->w;
    const mint_type_kernels *tk = &e->k->t[w->type];
    const mint_moe_groups *g = &e->moe;
    const int32_t k = e->hp->n_expert_used;
    const size_t in_bytes = (size_t)mint_row_size(n->type, w->n_in);
    const long per_expert = (long)((w->n_out + MINT_PACK_ROWS - 1) / MINT_PACK_ROWS);
    const long groups = (long)*g->n_active * per_expert;
    long c0, c1;
    for (int v = 0; next_chunk(e, node, ith, nth, groups, &v, &c0, &c1);) {
        for (long g0 = c0; g0 < c1;) { // the chunk, cut at experts' ends
            const long xi = g0 / per_expert, end = (xi + 1) * per_expert;
            const long g1 = c1 < end ? c1 : end;
            const int32_t x = g->active[xi], j = g->rows[g->start[x]] % k;
            const mint_weight we = mint_weight_expert(w, x);
            const int64_t r0 = (g0 - xi * per_expert) * MINT_PACK_ROWS;
            const int64_t r1 = (g1 - xi * per_expert) * MINT_PACK_ROWS < w->n_out
                                   ? (g1 - xi * per_expert) * MINT_PACK_ROWS
                                   : w->n_out;
            const char *a =
                (const char *)row(e, n->src, 0) + (n->per_slot ? (size_t)j * in_bytes : 0);
            float *out = (float *)row(e, n->dst, 0) + (size_t)j * w->n_out;
            matmul_tile(tk, &we, r0, (int)(r1 - r0), a, in_bytes, 1, out + r0, 0);
            if (n->bias)
                mint_add(out + r0, 0, (const float *)n->bias->data + (size_t)x * w->n_out + r0, 0,
                         r1 - r0, 0, 1);
            g0 = g1;
        }
    }
}

static void run_moe_matmul(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    if (e->n_tokens == 1) {
        moe_matmul_one_token(n, e, node, ith, nth);
        return;
    }
    const mint_weight *w = n->w;
    const mint_type_kernels *tk = &e->k->t[w->type];
    const mint_moe_groups *g = &e->moe;
    const int32_t k = e->hp->n_expert_used;
    const size_t in_bytes = (size_t)mint_row_size(n->type, w->n_in);
    const size_t panel_stride = (in_bytes + 63) / 64 * 64;
    uint8_t *panel = g->scratch + (size_t)ith * g->scratch_bytes;
    float *ys = (float *)(panel + (size_t)MINT_MOE_TILE_TOKENS * panel_stride);
    const int64_t blocks = (w->n_out + MINT_MOE_TILE_ROWS - 1) / MINT_MOE_TILE_ROWS;
    const int64_t items = (int64_t)*g->n_active * blocks;
    atomic_int *counter = mint_exec_counter(e, node, 0);
    for (int64_t i = atomic_fetch_add(counter, 1); i < items; i = atomic_fetch_add(counter, 1)) {
        const int32_t x = g->active[i / blocks];
        const int64_t r0 = (i % blocks) * MINT_MOE_TILE_ROWS;
        const int nr =
            (int)(w->n_out - r0 < MINT_MOE_TILE_ROWS ? w->n_out - r0 : MINT_MOE_TILE_ROWS);
        const mint_weight we = mint_weight_expert(w, x);
        for (int32_t c0 = g->start[x]; c0 < g->start[x + 1]; c0 += MINT_MOE_TILE_TOKENS) {
            const int nc = g->start[x + 1] - c0 < MINT_MOE_TILE_TOKENS ? g->start[x + 1] - c0
                                                                       : MINT_MOE_TILE_TOKENS;
            const bool in_place = nc == 1 && !n->per_slot;
            const char *a =
                in_place ? (const char *)row(e, n->src, g->rows[c0] / k) : (const char *)panel;
            for (int c = 0; !in_place && c < nc; c++) { // gather the inputs
                const int32_t tj = g->rows[c0 + c];
                const char *in = (const char *)row(e, n->src, tj / k) +
                                 (n->per_slot ? (size_t)(tj % k) * in_bytes : 0);
                memcpy(panel + (size_t)c * panel_stride, in, in_bytes);
            }
            matmul_tile(tk, &we, r0, nr, a, panel_stride, nc, ys, MINT_MOE_TILE_ROWS);
            for (int c = 0; c < nc; c++) { // scatter the outputs (+ the expert's bias)
                const int32_t tj = g->rows[c0 + c];
                float *out = (float *)row(e, n->dst, tj / k) + (size_t)(tj % k) * w->n_out + r0;
                memcpy(out, ys + (size_t)c * MINT_MOE_TILE_ROWS, (size_t)nr * sizeof(float));
                if (n->bias)
                    mint_add(out, 0, (const float *)n->bias->data + (size_t)x * w->n_out + r0, 0,
                             nr, 0, 1);
            }
        }
    }
}

static void run_moe_sum(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    const int32_t k = e->hp->n_expert_used;
    const int64_t width = n->width;
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    for (long t = lo; t < hi; t++)
        mint_moe_sum(row(e, n->dst, t), row(e, n->src, t), (size_t)width * sizeof(float),
                     (const float *)row(e, n->src2, t) + k, k, width);
}

static void run_moe_shared(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    for (long t = lo; t < hi; t++)
        mint_moe_shared_add(row(e, n->dst, t), row(e, n->src, t),
                            *(const float *)row(e, n->src2, t), n->width);
}

static void run_swiglu_oai(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    mint_swiglu_oai(e->buf[n->dst], e->stride[n->dst], e->buf[n->src], e->stride[n->src], n->width,
                    lo, hi);
}

static const bind_fn bind_table[MINT_OP_COUNT] = {
    [MINT_OP_GET_ROWS] = run_get_rows,
    [MINT_OP_RMS_NORM] = run_rms_norm,
    [MINT_OP_CONVERT] = run_convert,
    [MINT_OP_MATMUL] = run_matmul,
    [MINT_OP_ROPE] = run_rope,
    [MINT_OP_KV_STORE] = run_kv_store,
    [MINT_OP_ATTENTION] = run_attention,
    [MINT_OP_ADD] = run_add,
    [MINT_OP_SILU_MUL] = run_silu_mul,
    [MINT_OP_GATHER] = run_gather,
    [MINT_OP_ADD_BIAS] = run_add_bias,
    [MINT_OP_HEAD_NORM] = run_head_norm,
    [MINT_OP_SCALE] = run_scale,
    [MINT_OP_LAYER_NORM] = run_layer_norm,
    [MINT_OP_GELU] = run_gelu,
    [MINT_OP_POS_ROWS] = run_pos_rows,
    [MINT_OP_GELU_MUL] = run_gelu_mul,
    [MINT_OP_SOFTCAP] = run_softcap,
    [MINT_OP_MOE_ROUTE] = run_moe_route,
    [MINT_OP_MOE_GROUP] = run_moe_group,
    [MINT_OP_MOE_MATMUL] = run_moe_matmul,
    [MINT_OP_MOE_SUM] = run_moe_sum,
    [MINT_OP_MOE_SHARED] = run_moe_shared,
    [MINT_OP_SWIGLU_OAI] = run_swiglu_oai,
    [MINT_OP_SHORTCONV] = mint_run_shortconv,
    [MINT_OP_Q_SPLIT] = mint_run_q_split,
    [MINT_OP_SIGMOID_GATE] = mint_run_sigmoid_gate,
    [MINT_OP_DELTA_GATES] = mint_run_delta_gates,
    [MINT_OP_CONV1D] = mint_run_conv1d,
    [MINT_OP_L2_NORM] = mint_run_l2_norm,
    [MINT_OP_DELTA_NET] = mint_run_delta_net,
    [MINT_OP_NORM_GATED] = mint_run_norm_gated,
};

// Work under which a node runs on one thread, in multiply-adds (or elements for row ops): about
// 5-20 us on one core, a few barriers' worth on an idle machine. At TinyLlama's width a one-token
// step splits its matmuls and attention and runs its row ops (2048 elements) on one thread; a
// model 64 wide (stories260K) runs every node of a one-token step on one thread.
enum { SERIAL_WORK = 1 << 16 };

// The work of node n in this batch, saturated at SERIAL_WORK (only "below or not" matters).
static int64_t node_work(const mint_node *n, const mint_exec *e) {
    const int64_t rows = n_rows(e, n);
    switch (n->op) {
    case MINT_OP_MATMUL:
        return rows * n->w->n_in * n->w->n_out;
    case MINT_OP_MOE_MATMUL:
        return rows * e->hp->n_expert_used * n->w->n_in * n->w->n_out;
    case MINT_OP_MOE_GROUP:
        return 0;           // one thread: the lists are one counting sort
    case MINT_OP_DELTA_NET: // per value head and token: a few passes over its [S][S] state
        return rows * e->hp->ssm_v_heads * 4 * (int64_t)e->hp->ssm_s * e->hp->ssm_s;
    case MINT_OP_ATTENTION: {
        // Scores and weighted values: 2 * head_dim per key per query head.
        const int64_t per_key = 2 * (int64_t)e->attn.n_head * e->attn.head_dim;
        if (per_key * rows >= SERIAL_WORK) return SERIAL_WORK;
        int64_t keys = 0;
        for (int32_t t = 0; t < e->n_tokens; t++) keys += e->pos[t] + 1;
        return per_key * keys;
    }
    default:
        return rows * (n->width > 0 ? n->width : 1);
    }
}

// Whether node n runs on thread 0 alone (always, when the pool has one thread).
static bool node_serial(const mint_node *n, const mint_exec *e) {
    if (n->op == MINT_OP_SHORTCONV && e->state_cap) return true; // its norm sums every channel
    return e->n_threads == 1 || node_work(n, e) < SERIAL_WORK;
}

typedef struct run {
    const mint_graph *g; // nodes
    const mint_exec *e;  // what every node reads (shared, read-only during the run)
    mint_pool *pool;     // for the barriers, or NULL when the caller runs the graph alone
} run;

static void run_graph(void *arg, int ith, int nth) {
    const run *r = arg;
    const mint_graph *g = r->g;
    double *t = ith == 0 ? r->e->node_end : NULL;
    if (t) t[0] = mint_now_seconds();
    bool serial = g->n_nodes > 0 && node_serial(&g->nodes[0], r->e);
    for (int i = 0; i < g->n_nodes; i++) {
        const mint_node *n = &g->nodes[i];
        const bool last = i + 1 == g->n_nodes;
        const bool next_serial = !last && node_serial(&g->nodes[i + 1], r->e);
        if (r->e->imx && ith == 0) mint_imx_collect(g, i, r->e); // an importance matrix
        if (!serial)
            bind_table[n->op](n, r->e, i, ith, nth);
        else if (ith == 0)
            bind_table[n->op](n, r->e, i, 0, 1);
        // A split node meets the others unless the next one reads nothing it wrote (q, k and v;
        // gate and up; the two RoPEs) and is split too (a small next node runs on thread 0
        // alone, which must not run ahead of the others' share). A small node is followed by a
        // barrier only before a split node: the small nodes in between are thread 0's alone,
        // and the run's own closing barrier follows the last node.
        const bool barrier = serial ? !last && !next_serial : !(n->no_barrier && !next_serial);
        if (barrier && r->pool) mint_pool_barrier(r->pool);
        if (t) t[i + 1] = mint_now_seconds();
        serial = next_serial;
    }
}

void mint_exec_graph(const mint_graph *g, const mint_exec *e, mint_pool *pool) {
    const size_t n = mint_exec_counters(g->n_nodes, e->n_threads);
    for (size_t i = 0; i < n; i += MINT_CHUNK_PAD)
        atomic_store_explicit(&e->chunk[i], 0, memory_order_relaxed);
    // A batch with no node worth splitting is the caller's alone: the workers stay asleep.
    bool any_split = false;
    for (int i = 0; i < g->n_nodes && !any_split; i++) any_split = !node_serial(&g->nodes[i], e);
    if (!any_split) {
        run r = {g, e, NULL};
        run_graph(&r, 0, 1);
        return;
    }
    run r = {g, e, pool};
    mint_pool_run(pool, run_graph, &r);
}
