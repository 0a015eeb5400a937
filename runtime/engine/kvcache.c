// kvcache.c - the block pool and the sequences' block tables: allocation, reference counts,
// copy on write, fork and truncation. The prefix cache's map is in kvprefix.c.
#include "runtime/engine/kvcache.h"

#include "base/error.h"
#include "quant/types.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

mint_type mint_kv_elem_type(mint_kv_type type) {
    switch (type) {
    case MINT_KV_F16:
        return MINT_TYPE_F16;
    case MINT_KV_Q8_0:
        return MINT_TYPE_Q8_0;
    case MINT_KV_Q4_0:
        return MINT_TYPE_Q4_0;
    default:
        return MINT_TYPE_F32;
    }
}

uint64_t mint_kv_block_bytes(mint_kv_type type, int32_t n_layer, int64_t kv_dim, int32_t block) {
    uint64_t n;
    const mint_type t = mint_kv_elem_type(type);
    if (n_layer < 1 || kv_dim < 1 || block < 1) return 0;
    if (mint_type_get(t)->blck > 1 && kv_dim % mint_type_get(t)->blck) return 0;
    const uint64_t row = mint_row_size(t, kv_dim); // one position's keys (or values)
    // keys and values of every layer
    if (__builtin_mul_overflow(row, (uint64_t)block, &n) || __builtin_mul_overflow(n, 2, &n) ||
        __builtin_mul_overflow(n, (uint64_t)n_layer, &n))
        return 0;
    return n;
}

static void *zalloc(size_t n, size_t size) {
    return n ? calloc(n, size) : NULL;
}

mint_status mint_kv_init(mint_kvcache *kv, mint_kv_type type, int32_t n_layer, int64_t kv_dim,
                         int32_t block, int32_t n_ctx, int32_t n_seq, int32_t max_blocks,
                         mint_err *err) {
    memset(kv, 0, sizeof *kv);
    uint64_t bb = mint_kv_block_bytes(type, n_layer, kv_dim, block);
    if (bb == 0 || bb > SIZE_MAX / 2 || n_ctx < 1 || n_seq < 1 || max_blocks < 1)
        return mint_fail(err, MINT_E_LIMIT,
                         "KV cache shape out of range (%d layers, %" PRId64 " per position, "
                         "blocks of %d, %d blocks)",
                         n_layer, kv_dim, block, max_blocks);
    kv->type = type;
    kv->elem = type == MINT_KV_F16 ? 2 : type == MINT_KV_F32 ? 4 : 0;
    kv->row_bytes = (size_t)mint_row_size(mint_kv_elem_type(type), kv_dim);
    kv->n_layer = n_layer;
    kv->kv_dim = kv_dim;
    kv->block = block;
    kv->layer_bytes = (size_t)bb / (size_t)n_layer;
    kv->block_bytes = (size_t)bb;
    kv->n_ctx = n_ctx;
    kv->max_seq_blocks = (int32_t)(((int64_t)n_ctx + block - 1) / block);
    kv->max_blocks = max_blocks;
    kv->lru_head = kv->lru_tail = -1;
    kv->n_seq = n_seq;
    kv->stats.max_blocks = max_blocks;
    kv->stats.block = block;
    size_t cap = 16;
    while (cap < 2 * (size_t)max_blocks) cap *= 2;
    kv->map_cap = cap;
    kv->mem = zalloc((size_t)max_blocks, sizeof *kv->mem);
    kv->blk = zalloc((size_t)max_blocks, sizeof *kv->blk);
    kv->free_list = zalloc((size_t)max_blocks, sizeof *kv->free_list);
    kv->blk_tokens = zalloc((size_t)max_blocks * (size_t)block, sizeof *kv->blk_tokens);
    kv->blk_parent = zalloc((size_t)max_blocks, sizeof *kv->blk_parent);
    kv->map_key = zalloc(cap, sizeof *kv->map_key);
    kv->map_val = malloc(cap * sizeof *kv->map_val);
    kv->seq = zalloc((size_t)n_seq, sizeof *kv->seq);
    bool ok = kv->mem && kv->blk && kv->free_list && kv->blk_tokens && kv->blk_parent &&
              kv->map_key && kv->map_val && kv->seq;
    for (int32_t s = 0; ok && s < n_seq; s++) {
        mint_kv_seq *q = &kv->seq[s];
        q->table = malloc((size_t)kv->max_seq_blocks * sizeof *q->table);
        q->keys = malloc((size_t)kv->max_seq_blocks * sizeof *q->keys);
        q->tokens = malloc((size_t)n_ctx * sizeof *q->tokens);
        ok = q->table && q->keys && q->tokens;
    }
    if (!ok) {
        mint_kv_free(kv);
        return mint_fail(err, MINT_E_NOMEM, "cannot allocate the KV cache's tables (%d blocks)",
                         max_blocks);
    }
    for (size_t i = 0; i < cap; i++) kv->map_val[i] = -1;
    for (int32_t b = 0; b < max_blocks; b++) kv->blk[b].prev = kv->blk[b].next = -1;
    return MINT_OK;
}

void mint_kv_free(mint_kvcache *kv) {
    if (kv->mem)
        for (int32_t b = 0; b < kv->n_alloc; b++) free(kv->mem[b]);
    if (kv->seq)
        for (int32_t s = 0; s < kv->n_seq; s++) {
            free(kv->seq[s].table);
            free(kv->seq[s].keys);
            free(kv->seq[s].tokens);
        }
    free(kv->mem);
    free(kv->blk);
    free(kv->free_list);
    free(kv->blk_tokens);
    free(kv->blk_parent);
    free(kv->map_key);
    free(kv->map_val);
    free(kv->seq);
    memset(kv, 0, sizeof *kv);
}

mint_kv_view mint_kv_seq_view(const mint_kvcache *kv, int32_t seq) {
    return (mint_kv_view){
        .type = mint_kv_elem_type(kv->type),
        .elem = kv->elem,
        .row_bytes = kv->row_bytes,
        .kv_dim = kv->kv_dim,
        .block = kv->block,
        .layer_bytes = kv->layer_bytes,
        .mem = kv->mem,
        .table = kv->seq[seq].table,
    };
}

// ---------------------------------------------------------------------------------------------
// The LRU list of evictable blocks (cached, held by no sequence)

static void lru_remove(mint_kvcache *kv, int32_t b) {
    mint_kv_block *k = &kv->blk[b];
    if (k->prev >= 0)
        kv->blk[k->prev].next = k->next;
    else
        kv->lru_head = k->next;
    if (k->next >= 0)
        kv->blk[k->next].prev = k->prev;
    else
        kv->lru_tail = k->prev;
    k->prev = k->next = -1;
    kv->n_lru--;
}

static void lru_append(mint_kvcache *kv, int32_t b) {
    mint_kv_block *k = &kv->blk[b];
    k->prev = kv->lru_tail;
    k->next = -1;
    if (kv->lru_tail >= 0)
        kv->blk[kv->lru_tail].next = b;
    else
        kv->lru_head = b;
    kv->lru_tail = b;
    kv->n_lru++;
}

void mint_kv_release(mint_kvcache *kv, int32_t b) {
    if (--kv->blk[b].ref > 0) return;
    if (kv->blk[b].cached)
        lru_append(kv, b);
    else
        kv->free_list[kv->n_free++] = b;
}

void mint_kv_retain(mint_kvcache *kv, int32_t b) {
    if (kv->blk[b].ref == 0 && kv->blk[b].cached) lru_remove(kv, b);
    kv->blk[b].ref++;
}

// A block for one more writer: free, new, or the least recently used cached one.
static mint_status alloc_block(mint_kvcache *kv, int32_t *out, mint_err *err) {
    int32_t b;
    if (kv->n_free > 0) {
        b = kv->free_list[--kv->n_free];
    } else if (kv->n_alloc < kv->max_blocks) {
        // Zeroed: attention reads whole blocks (with zero weights past a query's position), and
        // zeros keep what it reads finite.
        void *m = aligned_alloc(64, kv->block_bytes);
        if (!m)
            return mint_fail(err, MINT_E_NOMEM, "cannot allocate a KV block (%zu bytes)",
                             kv->block_bytes);
        memset(m, 0, kv->block_bytes);
        b = kv->n_alloc++;
        kv->mem[b] = m;
        kv->stats.bytes_alloc += kv->block_bytes;
    } else if (kv->lru_head >= 0) {
        b = kv->lru_head;
        lru_remove(kv, b);
        mint_kv_unregister(kv, b);
        kv->stats.evictions++;
    } else {
        return mint_fail(err, MINT_E_LIMIT,
                         "the KV cache is full: all %d blocks of %d positions are in use",
                         kv->max_blocks, kv->block);
    }
    kv->blk[b].ref = 1;
    kv->blk[b].cached = false;
    *out = b;
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Sequences

// The last logical block is partly filled and may not be written in place.
static bool last_needs_copy(const mint_kvcache *kv, const mint_kv_seq *s) {
    if (s->n_past % kv->block == 0) return false;
    const mint_kv_block *b = &kv->blk[s->table[s->n_blocks - 1]];
    return b->ref > 1 || b->cached;
}

int32_t mint_kv_blocks_needed(const mint_kvcache *kv, int32_t seq, int32_t n) {
    const mint_kv_seq *s = &kv->seq[seq];
    if (n <= 0) return 0;
    const int32_t want = (int32_t)(((int64_t)s->n_past + n + kv->block - 1) / kv->block);
    return want - s->n_blocks + (last_needs_copy(kv, s) ? 1 : 0);
}

int32_t mint_kv_blocks_available(const mint_kvcache *kv) {
    return kv->n_free + (kv->max_blocks - kv->n_alloc) + kv->n_lru;
}

mint_status mint_kv_reserve(mint_kvcache *kv, int32_t seq, int32_t n, mint_err *err) {
    mint_kv_seq *s = &kv->seq[seq];
    mint_status st;
    if (n > 0 && last_needs_copy(kv, s)) { // copy on write
        int32_t old = s->table[s->n_blocks - 1], nb;
        if ((st = alloc_block(kv, &nb, err))) return st;
        memcpy(kv->mem[nb], kv->mem[old], kv->block_bytes);
        s->table[s->n_blocks - 1] = nb;
        mint_kv_release(kv, old);
        kv->stats.copies++;
    }
    while ((int64_t)s->n_blocks * kv->block < (int64_t)s->n_past + n) {
        int32_t nb;
        if ((st = alloc_block(kv, &nb, err))) return st;
        s->table[s->n_blocks++] = nb;
    }
    return MINT_OK;
}

void mint_kv_commit(mint_kvcache *kv, int32_t seq, const int32_t *tokens, int32_t n) {
    mint_kv_seq *s = &kv->seq[seq];
    const int32_t B = kv->block, old = s->n_past;
    memcpy(s->tokens + old, tokens, (size_t)n * sizeof *tokens);
    s->n_past += n;
    for (int32_t b = old / B; (b + 1) * B <= s->n_past; b++) { // the blocks this filled
        const uint64_t parent = b == 0 ? MINT_KV_ROOT_KEY : s->keys[b - 1];
        const int32_t *t = s->tokens + (size_t)b * B;
        s->keys[b] = mint_kv_chain_key(parent, t, B);
        const int32_t mine = s->table[b];
        const int32_t got = mint_kv_register(kv, mine, s->keys[b], parent, t);
        if (got != mine) { // the same tokens were cached before: share that block
            mint_kv_retain(kv, got);
            s->table[b] = got;
            mint_kv_release(kv, mine);
        }
    }
}

void mint_kv_truncate(mint_kvcache *kv, int32_t seq, int32_t n_keep) {
    mint_kv_seq *s = &kv->seq[seq];
    if (n_keep < 0) n_keep = 0;
    if (n_keep >= s->n_past) return;
    const int32_t keep = (n_keep + kv->block - 1) / kv->block;
    for (int32_t b = keep; b < s->n_blocks; b++) mint_kv_release(kv, s->table[b]);
    s->n_blocks = keep;
    s->n_past = n_keep;
}

void mint_kv_forget(mint_kvcache *kv, int32_t seq) {
    mint_kv_seq *s = &kv->seq[seq];
    for (int32_t b = 0; b < s->n_blocks; b++)
        if (kv->blk[s->table[b]].ref == 1) mint_kv_unregister(kv, s->table[b]);
    mint_kv_truncate(kv, seq, 0);
}

void mint_kv_fork(mint_kvcache *kv, int32_t src, int32_t dst) {
    if (src == dst) return;
    mint_kv_truncate(kv, dst, 0);
    const mint_kv_seq *a = &kv->seq[src];
    mint_kv_seq *b = &kv->seq[dst];
    for (int32_t i = 0; i < a->n_blocks; i++) mint_kv_retain(kv, a->table[i]);
    memcpy(b->table, a->table, (size_t)a->n_blocks * sizeof *a->table);
    memcpy(b->keys, a->keys, (size_t)a->n_blocks * sizeof *a->keys);
    memcpy(b->tokens, a->tokens, (size_t)a->n_past * sizeof *a->tokens);
    b->n_blocks = a->n_blocks;
    b->n_past = a->n_past;
}

int32_t mint_kv_prefix(mint_kvcache *kv, int32_t seq, const int32_t *tokens, int32_t n) {
    mint_kv_seq *s = &kv->seq[seq];
    const int32_t B = kv->block, limit = n > 0 ? n - 1 : 0;
    int32_t common = 0;
    while (common < s->n_past && common < n && s->tokens[common] == tokens[common]) common++;
    if (common > limit) common = limit;
    // Cached full blocks that continue the part held in whole blocks.
    const int32_t k = common / B;
    const uint64_t root = k == 0 ? MINT_KV_ROOT_KEY : s->keys[k - 1];
    int32_t m = 0;
    for (uint64_t p = root; k + m < kv->max_seq_blocks && (int64_t)(k + m + 1) * B <= n; m++) {
        const int32_t *t = tokens + (size_t)(k + m) * B;
        const uint64_t key = mint_kv_chain_key(p, t, B);
        if (mint_kv_lookup(kv, key, p, t) < 0) break;
        p = key;
    }
    if ((int64_t)(k + m) * B > common) {
        mint_kv_truncate(kv, seq, k * B);
        uint64_t p = root;
        for (int32_t j = 0; j < m; j++) {
            const int32_t *t = tokens + (size_t)(k + j) * B;
            const uint64_t key = mint_kv_chain_key(p, t, B);
            const int32_t b = mint_kv_lookup(kv, key, p, t);
            mint_kv_retain(kv, b);
            s->table[k + j] = b;
            s->keys[k + j] = key;
            p = key;
        }
        memcpy(s->tokens + (size_t)k * B, tokens + (size_t)k * B, (size_t)m * B * sizeof *tokens);
        s->n_blocks = k + m;
        s->n_past = (k + m) * B;
        kv->stats.prefix_hits += (uint64_t)m;
    } else {
        mint_kv_truncate(kv, seq, common);
    }
    mint_kv_truncate(kv, seq, limit); // the last token is always evaluated
    return s->n_past;
}

void mint_kv_get_stats(const mint_kvcache *kv, mint_kv_stats *out) {
    *out = kv->stats;
    out->blocks_alloc = kv->n_alloc;
    out->blocks_free = kv->n_free;
    out->blocks_cached = kv->n_lru;
    out->blocks_used = kv->n_alloc - kv->n_free - kv->n_lru;
}
