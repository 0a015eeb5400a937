// context.c - creating a context: parameters checked, memory planned and allocated once.
// Evaluation and sequences are in decode.c.
#include "runtime/engine/context.h"

#include "base/error.h"
#include "quant/kernels.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum {
    MAX_CTX = 1 << 20,      // positions; far beyond any llama-family training context
    DEFAULT_MAX_CTX = 4096, // default n_ctx is the model's, capped here
    DEFAULT_BATCH = 512,    // default tokens per batch (llama.cpp's n_batch)
    DEFAULT_KV_BLOCK = 32,  // positions per KV block
    MAX_KV_BLOCK = 4096,    // largest block accepted
    MAX_SEQ = 256,          // sequences per context
    ROW_ALIGN = 64,         // activation rows start on cache lines
};

static int online_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

mint_ctx_params mint_ctx_default_params(void) {
    mint_ctx_params p = {0};
    p.n_threads = 0; // 0 = online CPUs
    p.n_ctx = 0;     // 0 = the model's training context, at most DEFAULT_MAX_CTX
    p.n_batch = 0;   // 0 = DEFAULT_BATCH, at most n_ctx * n_seq_max
    p.n_seq_max = 1;
    p.kv_block = 0; // 0 = DEFAULT_KV_BLOCK
    p.kv_size = 0;  // 0 = n_ctx * n_seq_max
    p.kv_type = MINT_KV_F32;
    p.attention = MINT_ATTENTION_AUTO;
    return p;
}

static const char *const attention_names[] = {"auto", "naive", "rowwise", "flash"};

const char *mint_attention_name(mint_attention a) {
    return a >= MINT_ATTENTION_AUTO && a <= MINT_ATTENTION_FLASH ? attention_names[a] : "?";
}

int mint_attention_from_name(const char *name) {
    for (int i = 0; name && i < 4; i++)
        if (strcasecmp(name, attention_names[i]) == 0) return i;
    return -1;
}

static uint64_t phys_mem(void) {
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : UINT64_MAX;
}

// Fills defaults and checks ranges; MINT_E_ARG names the parameter, value and range.
static mint_status resolve_params(const mint_model *m, const mint_ctx_params *in,
                                  mint_ctx_params *p, mint_err *err) {
    *p = in ? *in : mint_ctx_default_params();
    if (p->n_threads == 0) p->n_threads = online_cpus();
    if (p->n_threads < 1 || p->n_threads > MINT_POOL_MAX_THREADS)
        return mint_fail(err, MINT_E_ARG, "thread count %d is outside 1..%d", p->n_threads,
                         MINT_POOL_MAX_THREADS);
    if (p->n_ctx == 0)
        p->n_ctx = m->hp.n_ctx_train < DEFAULT_MAX_CTX ? m->hp.n_ctx_train : DEFAULT_MAX_CTX;
    if (p->n_ctx < 1 || p->n_ctx > MAX_CTX)
        return mint_fail(err, MINT_E_ARG, "context length %d is outside 1..%d", p->n_ctx, MAX_CTX);
    // Learned positions (GPT-2) exist only for the positions the model was trained on.
    if (m->desc->pos == MINT_POS_LEARNED && p->n_ctx > m->hp.n_ctx_train)
        return mint_fail(err, MINT_E_ARG,
                         "context length %d is more than the %d positions the model has learned "
                         "(position_embd)",
                         p->n_ctx, m->hp.n_ctx_train);
    if (p->n_seq_max == 0) p->n_seq_max = 1;
    if (p->n_seq_max < 1 || p->n_seq_max > MAX_SEQ)
        return mint_fail(err, MINT_E_ARG, "sequence count %d is outside 1..%d", p->n_seq_max,
                         MAX_SEQ);
    if (p->kv_block == 0) p->kv_block = DEFAULT_KV_BLOCK;
    if (p->kv_block < 1 || p->kv_block > MAX_KV_BLOCK)
        return mint_fail(err, MINT_E_ARG, "KV block size %d is outside 1..%d", p->kv_block,
                         MAX_KV_BLOCK);
    const int64_t all = (int64_t)p->n_ctx * p->n_seq_max;
    if (p->kv_size == 0) p->kv_size = all > MAX_CTX ? MAX_CTX : (int32_t)all;
    if (p->kv_size < 1 || p->kv_size > MAX_CTX)
        return mint_fail(err, MINT_E_ARG, "KV cache size %d positions is outside 1..%d", p->kv_size,
                         MAX_CTX);
    if (p->n_batch == 0) p->n_batch = DEFAULT_BATCH;
    if (p->n_batch < 1 || p->n_batch > MAX_CTX)
        return mint_fail(err, MINT_E_ARG, "batch size %d is outside 1..%d", p->n_batch, MAX_CTX);
    if (p->n_batch > all) p->n_batch = (int32_t)all;
    if (p->kv_type < MINT_KV_F32 || p->kv_type > MINT_KV_Q4_0)
        return mint_fail(err, MINT_E_ARG,
                         "KV cache type %d is none of f32 (0), f16 (1), q8_0 (2), q4_0 (3)",
                         (int)p->kv_type);
    // A quantized cache quantizes each head's keys and values in blocks of 32 (a score is one
    // block dot product per head), as llama.cpp requires of a quantized K in flash attention.
    if ((p->kv_type == MINT_KV_Q8_0 || p->kv_type == MINT_KV_Q4_0) &&
        (m->hp.head_dim % 32 != 0 || m->hp.head_dim_swa % 32 != 0 ||
         m->hp.head_dim > MINT_ATTN_PROBS_MAX_HD))
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "a %s KV cache needs a head size that is a multiple of 32 (up to %d); "
                         "this model's is %d",
                         p->kv_type == MINT_KV_Q8_0 ? "q8_0" : "q4_0", MINT_ATTN_PROBS_MAX_HD,
                         (int)m->hp.head_dim);
    if (p->attention < MINT_ATTENTION_AUTO || p->attention > MINT_ATTENTION_FLASH)
        return mint_fail(err, MINT_E_ARG,
                         "attention algorithm %d is none of auto (0), naive (1), rowwise (2), "
                         "flash (3)",
                         (int)p->attention);
    if (p->isa) {
        int isa = mint_isa_from_name(p->isa);
        if (isa < 0)
            return mint_fail(err, MINT_E_ARG,
                             "unknown kernel level '%s' (ref, avx2, avx512, avx512vnni, neon, "
                             "neondot)",
                             p->isa);
        if (!mint_kernels_for((mint_isa)isa))
            return mint_fail(err, MINT_E_UNSUPPORTED,
                             "kernel level %s is not available on this CPU (best: %s)", p->isa,
                             mint_isa_str(mint_isa_detect()));
        p->isa = NULL; // the caller's string need not outlive the call; c->k names the level
    }
    return MINT_OK;
}

static size_t round_up(size_t x, size_t a) {
    return (x + a - 1) / a * a;
}

static mint_attn_shape attn_shape(const mint_hparams *hp) {
    return (mint_attn_shape){hp->n_head, hp->n_head_kv, hp->head_dim, hp->attn_scale,
                             hp->attn_softcap};
}

// Auto chooses between naive and row-wise, which give the same bits (ops/attention.c), so the
// choice may follow the batch's shape; it never chooses flash, whose bits differ, so that a
// query gets the same bits in any batch. Measured on TinyLlama's shapes (32 heads on 4 KV heads
// of 64, AVX-512, one thread): row-wise, whose items hold the 8 heads of a KV head, is twice as
// fast as naive for single tokens and at least as fast for runs of fewer than 16 tokens; naive
// is 3-6% faster for longer runs while its score matrix stays small (512 x 1024: 38.5 vs
// 40.1 ms a layer), and loses once the matrix outgrows the caches. So: naive for runs of 16
// tokens or more whose score matrix holds at most AUTO_NAIVE_SCORES elements, with enough items
// for the threads; row-wise otherwise. Flash is as fast as row-wise within measurement noise
// (it is kept for memory: it needs no score row).
enum {
    AUTO_NAIVE_ROWS = 16,        // tokens per run, on average, from which auto takes naive
    AUTO_NAIVE_SCORES = 1 << 20, // naive's score matrix under auto: at most 4 MiB per thread
};

// The algorithms a context may run: its choice, or every one auto may pick.
static bool may_use(const mint_ctx_params *p, mint_attn_algo a) {
    switch (p->attention) {
    case MINT_ATTENTION_NAIVE:
        return a == MINT_ATTN_ALGO_NAIVE;
    case MINT_ATTENTION_ROWWISE:
        return a == MINT_ATTN_ALGO_ROWWISE;
    case MINT_ATTENTION_FLASH:
        return a == MINT_ATTN_ALGO_FLASH;
    default:
        return a == MINT_ATTN_ALGO_NAIVE || a == MINT_ATTN_ALGO_ROWWISE;
    }
}

// Positions naive is planned for: all of n_ctx when chosen, else (auto) as many as keep the
// score matrix of a full batch within AUTO_NAIVE_SCORES.
static int32_t naive_ctx(const mint_ctx_params *p) {
    if (p->attention == MINT_ATTENTION_NAIVE) return p->n_ctx;
    const int32_t fit = AUTO_NAIVE_SCORES / p->n_batch;
    return fit < p->kv_block ? p->kv_block : fit < p->n_ctx ? fit : p->n_ctx;
}

mint_attn_algo mint_ctx_choose_attention(const mint_ctx *c, const mint_attn_run *runs,
                                         int32_t n_runs) {
    switch (c->params.attention) {
    case MINT_ATTENTION_NAIVE:
        return MINT_ATTN_ALGO_NAIVE;
    case MINT_ATTENTION_ROWWISE:
        return MINT_ATTN_ALGO_ROWWISE;
    case MINT_ATTENTION_FLASH:
        return MINT_ATTN_ALGO_FLASH;
    default:
        break;
    }
    int32_t rows = 0, max_rows = 0, max_pos = 0;
    for (int32_t r = 0; r < n_runs; r++) {
        rows += runs[r].n;
        if (runs[r].n > max_rows) max_rows = runs[r].n;
        if (runs[r].pos0 + runs[r].n > max_pos) max_pos = runs[r].pos0 + runs[r].n;
    }
    const mint_hparams *hp = &c->model->hp;
    const mint_attn_shape sh = {hp->n_head, hp->n_head_kv, hp->head_dim, hp->attn_scale,
                                hp->attn_softcap};
    const bool long_runs = rows >= AUTO_NAIVE_ROWS * n_runs;
    const bool fits = mint_attention_scratch_bytes(MINT_ATTN_ALGO_NAIVE, &sh, max_rows, max_pos,
                                                   c->params.kv_block) <=
                      mint_attention_scratch_bytes(MINT_ATTN_ALGO_NAIVE, &sh, c->params.n_batch,
                                                   naive_ctx(&c->params), c->params.kv_block);
    const bool busy = (int64_t)n_runs * hp->n_head >= 2 * (int64_t)c->params.n_threads;
    return long_runs && fits && busy ? MINT_ATTN_ALGO_NAIVE : MINT_ATTN_ALGO_ROWWISE;
}

// The KV pool's blocks: the positions asked for, plus one block per sequence for a partly
// filled last block and its copy on write, plus what the prefix-cache budget buys (bb bytes a
// block); all within the pool's int32 block ids.
static int64_t kv_blocks(const mint_ctx_params *p, uint64_t bb) {
    const int64_t own = ((int64_t)p->kv_size + p->kv_block - 1) / p->kv_block + p->n_seq_max;
    const uint64_t extra = bb ? p->prefix_cache_bytes / bb : 0;
    return extra > (uint64_t)(INT32_MAX - own) ? INT32_MAX : own + (int64_t)extra;
}

// Layers the KV cache holds: the attention layers (at least one, so that a block has a size).
static int32_t kv_layers(const mint_hparams *hp) {
    return hp->n_layer_kv > 0 ? hp->n_layer_kv : 1;
}

// Checkpoints of the recurrent state kept per sequence, and snapshots after full KV blocks kept
// for the prefix cache (runtime/engine/rstate.h): at most 8 and 64, fewer when a state is large
// (Qwen3.5-2B's is 19 MiB), within about 64 MiB per sequence and 256 MiB of snapshots.
static int32_t rs_count(uint64_t state_bytes, uint64_t budget, int32_t lo, int32_t hi) {
    const uint64_t n = state_bytes ? budget / state_bytes : (uint64_t)hi;
    return n < (uint64_t)lo ? lo : n > (uint64_t)hi ? hi : (int32_t)n;
}

// Floats of one recurrent layer's state of one sequence: a short convolution's last L - 1 inputs
// per channel (LFM2: n_embd channels); a delta net's, over its q, k and v channels, and its
// [S][S] matrix per value head (runtime/engine/exec.c reads them in that order).
static size_t rs_layer_floats(const mint_hparams *hp) {
    if (hp->n_conv <= 1) return 0;
    if (hp->ssm_s == 0) return (size_t)(hp->n_conv - 1) * (size_t)hp->n_embd;
    const size_t s = (size_t)hp->ssm_s,
                 channels = (2 * (size_t)hp->ssm_k_heads + (size_t)hp->ssm_v_heads) * s;
    return (size_t)(hp->n_conv - 1) * channels + (size_t)hp->ssm_v_heads * s * s;
}

// Sizes every buffer from the graph and checks the total against the machine's memory before
// anything is allocated.
static mint_status plan_memory(mint_ctx *c, mint_err *err) {
    const mint_hparams *hp = &c->model->hp;
    const mint_ctx_params *p = &c->params;
    uint64_t bb = mint_kv_block_bytes(p->kv_type, kv_layers(hp),
                                      (int64_t)hp->n_head_kv * hp->head_dim, p->kv_block),
             total;
    if (bb == 0) return mint_fail(err, MINT_E_LIMIT, "KV cache size overflows");
    c->kv_blocks = (int32_t)kv_blocks(p, bb);
    if (__builtin_mul_overflow(bb, (uint64_t)c->kv_blocks, &total))
        return mint_fail(err, MINT_E_LIMIT, "KV cache size overflows");
    for (int b = 0; b < MINT_BUF_COUNT; b++) {
        uint64_t w = (uint64_t)c->graph.width[b];
        uint64_t bytes = b == MINT_BUF_XQ ? w : w * sizeof(float);
        c->stride[b] = round_up((size_t)bytes, ROW_ALIGN);
        total += (uint64_t)c->stride[b] * (uint64_t)p->n_batch;
    }
    const mint_attn_shape sh = attn_shape(hp);
    c->att_scratch_bytes = 0;
    for (int a = 0; a < MINT_ATTN_ALGO_COUNT; a++) {
        if (!may_use(p, (mint_attn_algo)a)) continue;
        const int32_t ctx = a == MINT_ATTN_ALGO_NAIVE ? naive_ctx(p) : p->n_ctx;
        size_t s =
            mint_attention_scratch_bytes((mint_attn_algo)a, &sh, p->n_batch, ctx, p->kv_block);
        if (s > c->att_scratch_bytes) c->att_scratch_bytes = round_up(s, ROW_ALIGN);
    }
    total += (uint64_t)p->n_threads * (uint64_t)c->att_scratch_bytes;
    if (hp->n_expert > 0) { // a mixture's tiles gather inputs of at most 4 bytes an element
        const size_t widest = (size_t)(hp->n_embd > hp->n_ff_exp ? hp->n_embd : hp->n_ff_exp);
        c->moe.scratch_bytes = round_up(mint_moe_scratch_bytes(4 * widest), ROW_ALIGN);
        total += (uint64_t)p->n_threads * c->moe.scratch_bytes +
                 (uint64_t)p->n_batch * (uint64_t)hp->n_expert_used * sizeof(int32_t);
    }
    const uint64_t state = (uint64_t)hp->n_layer_rs * rs_layer_floats(hp) * sizeof(float);
    c->rs_ckpt = rs_count(state, 64ull << 20, 3, 8);
    c->rs_snap = rs_count(state, 256ull << 20, 4, 64);
    total += ((uint64_t)p->n_seq_max * (1 + (uint64_t)c->rs_ckpt) + (uint64_t)c->rs_snap) * state;
    uint64_t mem = p->max_memory ? p->max_memory : phys_mem();
    if (total > mem)
        return mint_fail(err, MINT_E_LIMIT,
                         "context needs %.2f GiB (KV cache for %d positions%s + buffers for a "
                         "batch of %d), more than the %.2f GiB %s; lower -c or -b",
                         total / 1073741824.0, p->kv_size,
                         p->prefix_cache_bytes ? " and the prefix cache's budget" : "", p->n_batch,
                         mem / 1073741824.0, p->max_memory ? "allowed" : "of the machine's memory");
    return MINT_OK;
}

mint_status mint_ctx_create(mint_model *m, const mint_ctx_params *params, mint_ctx **out,
                            mint_err *err) {
    *out = NULL;
    mint_err_clear(err);
    if (m->vocab_only)
        return mint_fail(err, MINT_E_ARG, "the model was opened vocab-only; it has no weights");
    mint_ctx *c = calloc(1, sizeof *c);
    if (!c) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    c->model = m;
    c->last_algo = -1;
    mint_status st = resolve_params(m, params, &c->params, err);
    if (st) goto fail;
    c->k = params && params->isa ? mint_kernels_for((mint_isa)mint_isa_from_name(params->isa))
                                 : mint_kernels_get();
    if ((st = mint_graph_build(m, c->k, c->params.n_ctx, &c->graph, err))) goto fail;
    if ((st = plan_memory(c, err))) goto fail;
    const mint_hparams *hp = &m->hp;
    const mint_ctx_params *p = &c->params;
    if ((st = mint_kv_init(&c->kv, p->kv_type, kv_layers(hp), (int64_t)hp->n_head_kv * hp->head_dim,
                           p->kv_block, p->n_ctx, p->n_seq_max, c->kv_blocks, err)) ||
        (st = mint_rs_init(&c->rs, p->n_seq_max, hp->n_layer_rs, rs_layer_floats(hp), c->rs_ckpt,
                           c->rs_snap, err)))
        goto fail;
    if (c->rs.n_layer && !(c->snap_reqs = calloc((size_t)c->rs.n_snap / 2, sizeof *c->snap_reqs))) {
        st = mint_fail(err, MINT_E_NOMEM, "out of memory");
        goto fail;
    }
    for (int b = 0; b < MINT_BUF_COUNT; b++) {
        size_t bytes = c->stride[b] * (size_t)p->n_batch;
        c->buf[b] = bytes ? aligned_alloc(ROW_ALIGN, bytes) : NULL;
        if (bytes && !c->buf[b]) {
            st = mint_fail(err, MINT_E_NOMEM, "cannot allocate the %s buffer (%zu bytes)",
                           mint_buf_name(b), bytes);
            goto fail;
        }
    }
    const size_t nb = (size_t)p->n_batch, ns = (size_t)p->n_seq_max;
    c->att_scratch = aligned_alloc(ROW_ALIGN, (size_t)p->n_threads * c->att_scratch_bytes);
    if (hp->n_expert > 0) {
        c->moe.rows = calloc(nb * (size_t)hp->n_expert_used, sizeof *c->moe.rows);
        c->moe.start = calloc((size_t)hp->n_expert + 1, sizeof *c->moe.start);
        c->moe.active = calloc((size_t)hp->n_expert, sizeof *c->moe.active);
        c->moe.n_active = calloc(1, sizeof *c->moe.n_active);
        c->moe.scratch = aligned_alloc(ROW_ALIGN, (size_t)p->n_threads * c->moe.scratch_bytes);
        if (!c->moe.rows || !c->moe.start || !c->moe.active || !c->moe.n_active ||
            !c->moe.scratch) {
            st = mint_fail(err, MINT_E_NOMEM, "out of memory for the experts' lists");
            goto fail;
        }
    }
    c->chunk = calloc(mint_exec_counters(c->graph.n_nodes, p->n_threads), sizeof *c->chunk);
    c->ids = calloc(nb, sizeof *c->ids);
    c->pos = calloc(nb, sizeof *c->pos);
    c->seq = calloc(nb, sizeof *c->seq);
    c->out_rows = calloc(nb, sizeof *c->out_rows);
    c->scratch_i32 = calloc(nb, sizeof *c->scratch_i32);
    c->runs = calloc(nb, sizeof *c->runs);
    c->entries = calloc(nb, sizeof *c->entries);
    c->seq_kv = calloc(ns, sizeof *c->seq_kv);
    c->seq_next = calloc(ns, sizeof *c->seq_next);
    c->seq_count = calloc(ns, sizeof *c->seq_count);
    c->trace_t = calloc((size_t)c->graph.n_nodes + 1, sizeof *c->trace_t);
    c->trace_nodes = calloc((size_t)c->graph.n_nodes, sizeof *c->trace_nodes);
    if (!c->att_scratch || !c->chunk || !c->ids || !c->pos || !c->seq || !c->out_rows ||
        !c->scratch_i32 || !c->runs || !c->entries || !c->seq_kv || !c->seq_next || !c->seq_count ||
        !c->trace_t || !c->trace_nodes) {
        st = mint_fail(err, MINT_E_NOMEM, "out of memory");
        goto fail;
    }
    for (int32_t s = 0; s < p->n_seq_max; s++) c->seq_kv[s] = mint_kv_seq_view(&c->kv, s);
    if ((st = mint_pool_create(p->n_threads, &c->pool, err))) goto fail;
    *out = c;
    return MINT_OK;
fail:
    mint_ctx_free(c);
    return st;
}

void mint_ctx_free(mint_ctx *c) {
    if (!c) return;
    mint_pool_free(c->pool);
    for (int b = 0; b < MINT_BUF_COUNT; b++) free(c->buf[b]);
    free(c->att_scratch);
    free(c->moe.rows);
    free(c->moe.start);
    free(c->moe.active);
    free(c->moe.n_active);
    free(c->moe.scratch);
    free(c->chunk);
    free(c->ids);
    free(c->pos);
    free(c->seq);
    free(c->out_rows);
    free(c->scratch_i32);
    free(c->runs);
    free(c->entries);
    free(c->seq_kv);
    free(c->seq_next);
    free(c->seq_count);
    free(c->trace_t);
    free(c->trace_nodes);
    free(c->graph_text);
    free(c->imx.node);
    mint_kv_free(&c->kv);
    mint_rs_free(&c->rs);
    free(c->snap_reqs);
    mint_graph_free(&c->graph);
    free(c);
}

int32_t mint_ctx_n_ctx(const mint_ctx *c) {
    return c->params.n_ctx;
}
int32_t mint_ctx_n_seq(const mint_ctx *c) {
    return c->params.n_seq_max;
}
int32_t mint_ctx_n_batch(const mint_ctx *c) {
    return c->params.n_batch;
}
int32_t mint_ctx_n_threads(const mint_ctx *c) {
    return c->params.n_threads;
}
uint64_t mint_ctx_attention_scratch(const mint_ctx *c) {
    return c->att_scratch_bytes;
}
uint64_t mint_ctx_n_evaluated(const mint_ctx *c) {
    return c->n_evaluated;
}

const char *mint_ctx_graph_text(mint_ctx *c) {
    if (!c->graph_text) c->graph_text = mint_graph_describe(&c->graph, c->model);
    return c->graph_text ? c->graph_text : "";
}

const char *mint_ctx_isa_name(const mint_ctx *c) {
    return c->k->name;
}

const char *mint_ctx_attention_name(const mint_ctx *c) {
    if (c->params.attention != MINT_ATTENTION_AUTO || c->last_algo < 0)
        return mint_attention_name(c->params.attention);
    return mint_attn_algo_name((mint_attn_algo)c->last_algo);
}

const char *mint_isa_name(void) {
    return mint_kernels_get()->name;
}

void mint_ctx_cache_info(const mint_ctx *c, mint_cache_info *out) {
    mint_kv_stats s;
    mint_kv_get_stats(&c->kv, &s);
    *out = (mint_cache_info){
        .block = s.block,
        .blocks_used = s.blocks_used,
        .blocks_cached = s.blocks_cached,
        .blocks_free = s.blocks_free,
        .blocks_max = s.max_blocks,
        .bytes_block = c->kv.block_bytes,
        .bytes_alloc = s.bytes_alloc,
        .prefix_hits = s.prefix_hits,
        .copies = s.copies,
        .evictions = s.evictions,
        .bytes_state = mint_rs_bytes(&c->rs),
        .state_restores = c->rs.restores,
        .state_replayed = c->rs.replayed,
    };
}

mint_status mint_ctx_set_imatrix(mint_ctx *c, mint_imatrix *im, bool output, mint_err *err) {
    free(c->imx.node);
    c->imx = (mint_imx_state){0};
    if (!im) return MINT_OK;
    if (im->legacy)
        return mint_fail(err, MINT_E_ARG,
                         "imatrix: a legacy file read in cannot collect (combine it into one made "
                         "by mint_imatrix_create)");
    c->imx.node = malloc((size_t)(c->graph.n_nodes ? c->graph.n_nodes : 1) * sizeof *c->imx.node);
    if (!c->imx.node) return mint_fail(err, MINT_E_NOMEM, "imatrix: out of memory");
    mint_imx_plan(&c->graph, output, c->imx.node);
    c->imx.im = im;
    return MINT_OK;
}
