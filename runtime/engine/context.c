// context.c - creating a context (parameters checked, memory planned and allocated once) and
// the public evaluation API.
#include "runtime/engine/context.h"

#include "base/error.h"
#include "quant/kernels.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    MAX_CTX = 1 << 20,      // positions; far beyond any llama-family training context
    DEFAULT_MAX_CTX = 4096, // default n_ctx is the model's, capped here
    DEFAULT_BATCH = 512,    // default tokens per batch (llama.cpp's n_batch)
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
    p.n_batch = 0;   // 0 = DEFAULT_BATCH, at most n_ctx
    p.kv_type = MINT_KV_F32;
    return p;
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
    if (p->n_batch == 0) p->n_batch = DEFAULT_BATCH;
    if (p->n_batch < 1 || p->n_batch > MAX_CTX)
        return mint_fail(err, MINT_E_ARG, "batch size %d is outside 1..%d", p->n_batch, MAX_CTX);
    if (p->n_batch > p->n_ctx) p->n_batch = p->n_ctx;
    if (p->kv_type != MINT_KV_F32 && p->kv_type != MINT_KV_F16)
        return mint_fail(err, MINT_E_ARG, "KV cache type %d is neither f32 (0) nor f16 (1)",
                         (int)p->kv_type);
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
    return (mint_attn_shape){hp->n_head, hp->n_head_kv, hp->head_dim, hp->attn_scale};
}

// Sizes every buffer from the graph and checks the total against the machine's memory before
// anything is allocated.
static mint_status plan_memory(mint_ctx *c, mint_err *err) {
    const mint_hparams *hp = &c->model->hp;
    const mint_ctx_params *p = &c->params;
    uint64_t total = mint_kvcache_bytes(p->kv_type, hp->n_layer, p->n_ctx,
                                        (int64_t)hp->n_head_kv * hp->head_dim);
    if (total == 0) return mint_fail(err, MINT_E_LIMIT, "KV cache size overflows");
    for (int b = 0; b < MINT_BUF_COUNT; b++) {
        uint64_t w = (uint64_t)c->graph.width[b];
        uint64_t bytes = b == MINT_BUF_XQ ? w : w * sizeof(float);
        c->stride[b] = round_up((size_t)bytes, ROW_ALIGN);
        total += (uint64_t)c->stride[b] * (uint64_t)p->n_batch;
    }
    const mint_attn_shape sh = attn_shape(hp);
    c->att_scratch_bytes = mint_attention_scratch_bytes(&sh, p->n_ctx);
    total += (uint64_t)p->n_threads * (uint64_t)c->att_scratch_bytes;
    uint64_t mem = p->max_memory ? p->max_memory : phys_mem();
    if (total > mem)
        return mint_fail(err, MINT_E_LIMIT,
                         "context needs %.2f GiB (KV cache for %d positions + buffers for a "
                         "batch of %d), more than the %.2f GiB %s; lower -c or -b",
                         total / 1073741824.0, p->n_ctx, p->n_batch, mem / 1073741824.0,
                         p->max_memory ? "allowed" : "of the machine's memory");
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
    mint_status st = resolve_params(m, params, &c->params, err);
    if (st) goto fail;
    c->k = params && params->isa ? mint_kernels_for((mint_isa)mint_isa_from_name(params->isa))
                                 : mint_kernels_get();
    if ((st = mint_graph_build(m, c->k, &c->graph, err))) goto fail;
    if ((st = plan_memory(c, err))) goto fail;
    const mint_hparams *hp = &m->hp;
    const mint_ctx_params *p = &c->params;
    if ((st = mint_kvcache_init(&c->kv, p->kv_type, hp->n_layer, p->n_ctx,
                                (int64_t)hp->n_head_kv * hp->head_dim, err)))
        goto fail;
    for (int b = 0; b < MINT_BUF_COUNT; b++) {
        size_t bytes = c->stride[b] * (size_t)p->n_batch;
        c->buf[b] = bytes ? aligned_alloc(ROW_ALIGN, bytes) : NULL;
        if (bytes && !c->buf[b]) {
            st = mint_fail(err, MINT_E_NOMEM, "cannot allocate the %s buffer (%zu bytes)",
                           mint_buf_name(b), bytes);
            goto fail;
        }
    }
    c->att_scratch = aligned_alloc(ROW_ALIGN, (size_t)p->n_threads * c->att_scratch_bytes);
    c->chunk = calloc((size_t)c->graph.n_nodes, sizeof *c->chunk);
    c->pos = calloc((size_t)p->n_batch, sizeof *c->pos);
    if (!c->att_scratch || !c->chunk || !c->pos) {
        st = mint_fail(err, MINT_E_NOMEM, "out of memory");
        goto fail;
    }
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
    free(c->chunk);
    free(c->pos);
    free(c->graph_text);
    mint_kvcache_free(&c->kv);
    mint_graph_free(&c->graph);
    free(c);
}

// Runs the graph for one batch of n <= n_batch tokens at positions pos .. pos+n-1.
static void exec_batch(mint_ctx *c, const int32_t *ids, int32_t n, int32_t pos, int32_t out_first) {
    for (int32_t t = 0; t < n; t++) c->pos[t] = pos + t;
    mint_exec e = {
        .hp = &c->model->hp,
        .k = c->k,
        .attn = attn_shape(&c->model->hp),
        .n_tokens = n,
        .pos0 = pos,
        .pos = c->pos,
        .ids = ids,
        .out_first = out_first,
        .kv = &c->kv,
        .attn_naive = c->params.naive_attention,
        .att_scratch = c->att_scratch,
        .att_scratch_bytes = c->att_scratch_bytes,
        .chunk = c->chunk,
    };
    for (int b = 0; b < MINT_BUF_COUNT; b++) {
        e.buf[b] = c->buf[b];
        e.stride[b] = c->stride[b];
    }
    mint_exec_graph(&c->graph, &e, c->pool);
}

mint_status mint_eval(mint_ctx *c, const int32_t *ids, int32_t n, int32_t pos, bool all_logits,
                      mint_err *err) {
    mint_err_clear(err);
    const int32_t n_vocab = c->model->hp.n_vocab;
    if (n < 1) return mint_fail(err, MINT_E_ARG, "no tokens to evaluate (n = %d)", n);
    if (pos < 0 || pos > c->kv.n_past)
        return mint_fail(err, MINT_E_ARG, "position %d is outside 0..%d (tokens in the cache)", pos,
                         c->kv.n_past);
    if ((int64_t)pos + n > c->params.n_ctx)
        return mint_fail(err, MINT_E_LIMIT,
                         "context is full: %d tokens at position %d exceed the context length %d",
                         n, pos, c->params.n_ctx);
    if (all_logits && n > c->params.n_batch)
        return mint_fail(err, MINT_E_ARG,
                         "all logits requested for %d tokens, more than the batch size %d", n,
                         c->params.n_batch);
    for (int32_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= n_vocab)
            return mint_fail(err, MINT_E_ARG, "token id %d at index %d is outside 0..%d", ids[i], i,
                             n_vocab - 1);
    c->kv.n_past = pos; // evaluating at pos drops anything cached after it
    for (int32_t off = 0; off < n; off += c->params.n_batch) {
        int32_t len = n - off < c->params.n_batch ? n - off : c->params.n_batch;
        bool last = off + len == n;
        // Logits rows wanted in this batch: all of them, the last one, or none.
        int32_t out_first = all_logits ? 0 : last ? len - 1 : len;
        exec_batch(c, ids + off, len, pos + off, out_first);
        c->kv.n_past = pos + off + len;
        c->n_evaluated += (uint64_t)len;
    }
    c->n_logits = all_logits ? n : 1;
    return MINT_OK;
}

const float *mint_get_logits(const mint_ctx *c, int32_t i) {
    if (i < 0) i = c->n_logits - 1;
    if (i < 0 || i >= c->n_logits) return NULL;
    return (const float *)((const char *)c->buf[MINT_BUF_LOGITS] +
                           (size_t)i * c->stride[MINT_BUF_LOGITS]);
}

int32_t mint_ctx_n_past(const mint_ctx *c) {
    return c->kv.n_past;
}
int32_t mint_ctx_n_ctx(const mint_ctx *c) {
    return c->params.n_ctx;
}
int32_t mint_ctx_n_threads(const mint_ctx *c) {
    return c->params.n_threads;
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

const char *mint_isa_name(void) {
    return mint_kernels_get()->name;
}
