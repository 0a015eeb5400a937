// test_kvcache.c - the paged KV cache and the batch API: block placement, fork, prefix reuse,
// batches of several sequences, memory that grows with use, eviction, and errors that change
// nothing. Every equality is bit for bit (memcmp of logits). Runs on mint's synthetic small
// model (written by the test; no shared data needed).
#include "helpers/helpers.h"
#include "runtime/engine/context.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum { NV = 512 }; // the synthetic small model's vocabulary

static mint_ctx *ctx_of(mint_model *m, int n_seq, int n_ctx, int block, int kv_size) {
    mint_ctx_params p = mint_ctx_default_params();
    p.n_threads = 2;
    p.n_ctx = n_ctx;
    p.n_batch = 64;
    p.n_seq_max = n_seq;
    p.kv_block = block;
    p.kv_size = kv_size;
    mint_ctx *c;
    mint_err err;
    cr_assert_eq(mint_ctx_create(m, &p, &c, &err), MINT_OK, "%s", err.msg);
    return c;
}

// A deterministic token sequence: seed picks the stream.
static void tokens(int32_t *t, int n, int seed) {
    for (int i = 0; i < n; i++) t[i] = i == 0 ? 1 : 3 + (i * 37 + seed * 101) % 500;
}

// Appends t[0..n) to sequence seq (chunks of the batch size) and copies the last logits.
static void feed(mint_ctx *c, int seq, const int32_t *t, int n, float *logits) {
    mint_batch_entry e[64];
    mint_err err;
    int pos = mint_seq_n_past(c, seq);
    for (int off = 0; off < n; off += 64) {
        int len = n - off < 64 ? n - off : 64;
        for (int i = 0; i < len; i++)
            e[i] = (mint_batch_entry){t[off + i], pos + off + i, seq, i == len - 1};
        cr_assert_eq(mint_decode(c, e, len, &err), MINT_OK, "%s", err.msg);
    }
    if (logits) memcpy(logits, mint_get_logits(c, -1), NV * sizeof(float));
}

static void same(const float *a, const float *b, const char *what) {
    cr_assert_eq(memcmp(a, b, NV * sizeof(float)), 0, "%s: logits differ", what);
}

// The cold reference: t[0..n) evaluated alone in a fresh context with blocks of `block` (the
// block size is part of the arithmetic: P.V is summed block by block).
static void cold_b(mint_model *m, const int32_t *t, int n, int block, float *logits) {
    mint_ctx *c = ctx_of(m, 1, 256, block, 0);
    feed(c, 0, t, n, logits);
    mint_ctx_free(c);
}

static void cold(mint_model *m, const int32_t *t, int n, float *logits) {
    cold_b(m, t, n, 32, logits);
}

// Empties the prefix cache (all blocks unheld) and lays the free list out so that blocks are handed
// out from the highest index down: otherwise a sequence that refills a block equal to a cached
// one would be given that very block back (the cache dedupes), in its old place.
static void forget_prefix_cache(mint_ctx *c) {
    mint_kvcache *kv = &c->kv;
    kv->n_lru = 0;
    kv->lru_head = kv->lru_tail = -1;
    kv->n_free = 0;
    for (int32_t i = 0; i < kv->n_alloc; i++) {
        cr_assert_eq(kv->blk[i].ref, 0, "block %d still held", i);
        kv->blk[i].cached = false;
        kv->blk[i].prev = kv->blk[i].next = -1;
        kv->free_list[kv->n_free++] = i; // popped from the end: the highest index first
    }
    for (size_t i = 0; i < kv->map_cap; i++) kv->map_val[i] = -1;
}

Test(kvcache, scattered_blocks_equal_contiguous_ones, .timeout = MT_HANG(60)) {
    // A fresh context lays a sequence's blocks out in order (0, 1, 2, ...): the contiguous layout.
    // Churn (three sequences growing, then released in an order) leaves the free list scrambled, so
    // the same sequence evaluated again lands on scattered blocks; its logits must not change.
    mint_model *m = mt_synth_model("small", "F32");
    int32_t t[200], junk[100];
    tokens(t, 200, 1);
    float a[NV], b[NV];
    mint_ctx *c = ctx_of(m, 4, 256, 16, 0);
    feed(c, 0, t, 200, a);
    const int32_t *tab = c->kv.seq[0].table;
    for (int i = 0; i < c->kv.seq[0].n_blocks; i++) cr_assert_eq(tab[i], i, "fresh: block %d", i);
    for (int s = 1; s < 4; s++) {
        tokens(junk, 100, s + 10);
        feed(c, s, junk, 100 - 13 * s, NULL);
    }
    mint_err err;
    cr_assert_eq(mint_seq_truncate(c, 0, 0, &err), MINT_OK);
    cr_assert_eq(mint_seq_truncate(c, 2, 0, &err), MINT_OK);
    cr_assert_eq(mint_seq_truncate(c, 1, 0, &err), MINT_OK);
    cr_assert_eq(mint_seq_truncate(c, 3, 0, &err), MINT_OK);
    forget_prefix_cache(c);
    feed(c, 3, t, 200, b);
    bool in_order = true;
    for (int i = 0; i < c->kv.seq[3].n_blocks; i++) in_order &= c->kv.seq[3].table[i] == i;
    cr_assert(!in_order, "the second evaluation should land on scattered blocks");
    same(a, b, "scattered vs contiguous blocks");
    mint_ctx_free(c);
    mint_model_close(m);
}

Test(kvcache, forked_sequence_continues_as_from_scratch, .timeout = MT_HANG(60)) {
    mint_model *m = mt_synth_model("small", "F32");
    int32_t t[120];
    tokens(t, 120, 2);
    float want[NV], got[NV], other[NV];
    cold(m, t, 120, want);
    mint_ctx *c = ctx_of(m, 3, 256, 32, 0);
    mint_err err;
    feed(c, 0, t, 70, NULL); // 70: the fork shares a partly filled third block
    cr_assert_eq(mint_seq_fork(c, 0, 1, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_seq_n_past(c, 1), 70);
    mint_cache_info info;
    mint_ctx_cache_info(c, &info);
    const int used_before = info.blocks_used;
    feed(c, 1, t + 70, 50, got);
    same(want, got, "forked sequence");
    mint_ctx_cache_info(c, &info);
    cr_assert_eq(info.copies, 1, "one copy on write of the shared partial block");
    cr_assert_eq(info.blocks_used, used_before + 2, "the copy and one new block");
    // The source continues on its own, differently, unaffected by its fork's writes.
    int32_t u[50];
    tokens(u, 50, 9);
    feed(c, 0, u, 50, other);
    int32_t ref[120];
    memcpy(ref, t, 70 * sizeof *t);
    memcpy(ref + 70, u, 50 * sizeof *u);
    cold(m, ref, 120, want);
    same(want, other, "source after the fork");
    mint_ctx_free(c);
    mint_model_close(m);
}

Test(kvcache, prefix_cache_hit_equals_cold_evaluation, .timeout = MT_HANG(60)) {
    mint_model *m = mt_synth_model("small", "F32");
    int32_t t[150], alt[150];
    tokens(t, 150, 3);
    memcpy(alt, t, 100 * sizeof *t); // shares 100 tokens (3 full blocks of 32) with t
    tokens(alt + 100, 50, 4);
    float want[NV], got[NV];
    cold(m, alt, 150, want);
    mint_ctx *c = ctx_of(m, 2, 256, 32, 0);
    mint_err err;
    feed(c, 0, t, 150, NULL);
    cr_assert_eq(mint_seq_truncate(c, 0, 0, &err), MINT_OK); // blocks stay cached, unheld
    int32_t held = -1;
    cr_assert_eq(mint_seq_prefix(c, 1, alt, 150, &held, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(held, 96, "three full blocks reused");
    uint64_t before = mint_ctx_n_evaluated(c);
    feed(c, 1, alt + held, 150 - held, got);
    cr_assert_eq(mint_ctx_n_evaluated(c) - before, 150 - 96);
    same(want, got, "prefix-cache hit");
    mint_cache_info info;
    mint_ctx_cache_info(c, &info);
    cr_assert_eq(info.prefix_hits, 3);
    // The whole of a prompt in the cache: all but its last token are reused.
    cr_assert_eq(mint_seq_prefix(c, 0, alt, 96, &held, &err), MINT_OK);
    cr_assert_eq(held, 95);
    // Forgotten, a sequence's blocks that no other one holds are no longer found: sequence 1
    // shares its first three blocks with sequence 0 (kept), its own last blocks are dropped.
    cr_assert_eq(mint_seq_forget(c, 1, &err), MINT_OK);
    cr_assert_eq(mint_seq_n_past(c, 1), 0);
    cr_assert_eq(mint_seq_prefix(c, 1, alt, 150, &held, &err), MINT_OK);
    cr_assert_eq(held, 96, "the blocks sequence 0 holds are still there: %d", held);
    cr_assert_eq(mint_seq_forget(c, 0, &err), MINT_OK);
    cr_assert_eq(mint_seq_forget(c, 1, &err), MINT_OK);
    cr_assert_eq(mint_seq_prefix(c, 1, alt, 150, &held, &err), MINT_OK);
    cr_assert_eq(held, 0, "nothing of alt is cached any more");
    cr_assert_eq(mint_seq_forget(c, 7, &err), MINT_E_ARG, "no sequence 7");
    mint_ctx_free(c);
    mint_model_close(m);
}

Test(kvcache, batch_of_sequences_equals_each_alone, .timeout = MT_HANG(60)) {
    mint_model *m = mt_synth_model("small", "Q4_K_M");
    enum { S = 4 };
    const int len[S] = {40, 77, 9, 64};
    int32_t t[S][80];
    float alone[S][NV];
    for (int s = 0; s < S; s++) {
        tokens(t[s], len[s], 20 + s);
        mint_ctx *c = ctx_of(m, 1, 256, 32, 0);
        feed(c, 0, t[s], len[s] - 1, NULL);
        feed(c, 0, t[s] + len[s] - 1, 1, alone[s]);
        mint_ctx_free(c);
    }
    // All prompts but their last tokens, interleaved in batches; then the last tokens of all four
    // in one batch of four entries (a generation step).
    mint_ctx *c = ctx_of(m, S, 256, 32, 0);
    mint_batch_entry e[64];
    mint_err err;
    int done[S] = {0};
    for (;;) {
        int n = 0;
        for (int s = 0; s < S; s++)
            for (int k = 0; k < 7 && done[s] < len[s] - 1 && n < 64; k++, done[s]++)
                e[n++] = (mint_batch_entry){t[s][done[s]], done[s], s, false};
        if (n == 0) break;
        cr_assert_eq(mint_decode(c, e, n, &err), MINT_OK, "%s", err.msg);
    }
    // Entries in reverse sequence order: logits rows follow the entries.
    for (int i = 0; i < S; i++) {
        const int s = S - 1 - i;
        e[i] = (mint_batch_entry){t[s][len[s] - 1], len[s] - 1, s, true};
    }
    cr_assert_eq(mint_decode(c, e, S, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_get_n_logits(c), S);
    for (int i = 0; i < S; i++)
        same(alone[S - 1 - i], mint_get_logits(c, i), "sequence in a batch");
    mint_ctx_free(c);
    mint_model_close(m);
}

Test(kvcache, memory_grows_with_use_and_truncation_frees, .timeout = MT_HANG(60)) {
    mint_model *m = mt_synth_model("small", "F32");
    mint_ctx *c = ctx_of(m, 2, 512, 32, 0);
    mint_cache_info info;
    mint_ctx_cache_info(c, &info);
    cr_assert_eq(info.bytes_alloc, 0, "nothing allocated before the first token");
    cr_assert_eq(info.blocks_max, 2 * 512 / 32 + 2);
    int32_t t[100];
    tokens(t, 100, 5);
    feed(c, 0, t, 100, NULL);
    mint_ctx_cache_info(c, &info);
    cr_assert_eq(info.blocks_used, 4);
    cr_assert_eq(info.bytes_alloc, 4 * info.bytes_block);
    mint_err err;
    cr_assert_eq(mint_seq_truncate(c, 0, 33, &err), MINT_OK); // speculative rollback
    mint_ctx_cache_info(c, &info);
    cr_assert_eq(info.blocks_used, 2);
    cr_assert_eq(info.blocks_cached + info.blocks_free, 2, "released blocks are kept for reuse");
    // Back to 100: the second block, partly filled now but cached, is copied before it is
    // written (the cached one stays intact for whoever shares that prefix).
    feed(c, 0, t + 33, 67, NULL);
    mint_ctx_cache_info(c, &info);
    cr_assert_eq(info.copies, 1);
    cr_assert_eq(info.blocks_used, 4);
    mint_ctx_free(c);
    mint_model_close(m);
}

Test(kvcache, least_recently_used_blocks_are_evicted, .timeout = MT_HANG(60)) {
    mint_model *m = mt_synth_model("small", "F32");
    // A pool of 4 + 1 blocks of 16: one sequence of 64 tokens fills it.
    mint_ctx *c = ctx_of(m, 1, 128, 16, 64);
    int32_t a[64], b[64];
    tokens(a, 64, 6);
    tokens(b, 64, 7);
    mint_err err;
    feed(c, 0, a, 64, NULL); // four cached blocks of a
    cr_assert_eq(mint_seq_truncate(c, 0, 0, &err), MINT_OK);
    feed(c, 0, b, 48, NULL); // needs 3 blocks: the spare one, then the two oldest of a
    mint_cache_info info;
    mint_ctx_cache_info(c, &info);
    cr_assert_eq(info.evictions, 2, "%" PRIu64 " evictions", info.evictions);
    cr_assert_eq(mint_seq_truncate(c, 0, 0, &err), MINT_OK);
    int32_t held;
    cr_assert_eq(mint_seq_prefix(c, 0, a, 64, &held, &err), MINT_OK);
    cr_assert_eq(held, 0, "a's first blocks were evicted, so no prefix of a remains");
    cr_assert_eq(mint_seq_prefix(c, 0, b, 64, &held, &err), MINT_OK);
    cr_assert_eq(held, 48, "b's three blocks are cached");
    mint_ctx_free(c);
    mint_model_close(m);
}

// The prefix cache's budget (mint_ctx_params.prefix_cache_bytes, mint-serve's --cache-ram):
// the same pool as above plus room for four more blocks, so that the prompt before keeps its
// blocks, and a repeat of it starts from them with the bits of a cold evaluation; the pool
// grows only as blocks are used, and never past the budget.
Test(kvcache, prefix_cache_budget_keeps_prompts_beyond_the_pool, .timeout = MT_HANG(60)) {
    mint_model *m = mt_synth_model("small", "F32");
    mint_ctx_params p = mint_ctx_default_params();
    p.n_threads = 2;
    p.n_ctx = 128;
    p.kv_block = 16;
    p.kv_size = 64;
    mint_ctx *c;
    mint_err err;
    cr_assert_eq(mint_ctx_create(m, &p, &c, &err), MINT_OK, "%s", err.msg);
    mint_cache_info info;
    mint_ctx_cache_info(c, &info);
    const uint64_t bb = info.bytes_block;
    const int32_t own = info.blocks_max;
    mint_ctx_free(c);
    p.prefix_cache_bytes = 4 * bb + bb / 2; // four blocks and a half: four
    cr_assert_eq(mint_ctx_create(m, &p, &c, &err), MINT_OK, "%s", err.msg);
    mint_ctx_cache_info(c, &info);
    cr_assert_eq(info.blocks_max, own + 4, "%d blocks, %d without the budget", info.blocks_max,
                 own);
    cr_assert_eq(info.bytes_alloc, 0, "nothing allocated before use");
    int32_t a[64], b[64];
    tokens(a, 64, 6);
    tokens(b, 64, 7);
    feed(c, 0, a, 64, NULL);
    cr_assert_eq(mint_seq_truncate(c, 0, 0, &err), MINT_OK);
    feed(c, 0, b, 64, NULL); // the budget's blocks: nothing of a is evicted
    mint_ctx_cache_info(c, &info);
    cr_assert_eq(info.evictions, 0, "%" PRIu64 " evictions", info.evictions);
    cr_assert(info.bytes_alloc <= (uint64_t)info.blocks_max * bb);
    cr_assert_eq(mint_seq_truncate(c, 0, 0, &err), MINT_OK);
    int32_t held;
    cr_assert_eq(mint_seq_prefix(c, 0, a, 64, &held, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(held, 63, "a repeated prompt starts from its cached blocks (%d held)", held);
    float got[NV], want[NV];
    feed(c, 0, a + held, 64 - held, got);
    cold_b(m, a, 64, 16, want);
    same(want, got, "a prompt from the budget's blocks");
    mint_ctx_free(c);
    // A budget beyond the machine is refused in one line before anything is allocated.
    p.prefix_cache_bytes = UINT64_MAX / 2;
    cr_assert_eq(mint_ctx_create(m, &p, &c, &err), MINT_E_LIMIT);
    cr_assert(strstr(err.msg, "prefix cache"), "%s", err.msg);
    mint_model_close(m);
}

Test(kvcache, bad_batches_change_nothing, .timeout = MT_HANG(60)) {
    mint_model *m = mt_synth_model("small", "F32");
    mint_ctx *c = ctx_of(m, 2, 128, 16, 96);
    int32_t t[80];
    tokens(t, 80, 8);
    float before[NV], after[NV];
    feed(c, 1, t, 40, before);
    mint_err err;
    mint_batch_entry e[3] = {{5, 0, 0, true}, {6, 1, 0, true}, {7, 0, 2, true}};
    cr_assert_eq(mint_decode(c, e, 3, &err), MINT_E_ARG); // sequence id 2 of 0..1
    cr_assert(strstr(err.msg, "sequence id 2 is outside 0..1"), "%s", err.msg);
    e[2] = (mint_batch_entry){7, 5, 1, true};
    cr_assert_eq(mint_decode(c, e, 3, &err), MINT_E_ARG); // sequence 1 continues at 40
    cr_assert(strstr(err.msg, "continues at position 40, not 5"), "%s", err.msg);
    e[2] = (mint_batch_entry){NV, 40, 1, true};
    cr_assert_eq(mint_decode(c, e, 3, &err), MINT_E_ARG); // token out of range
    cr_assert_eq(mint_decode(c, e, 0, &err), MINT_E_ARG);
    // More positions than the pool holds (96 + one spare block per sequence): refused whole.
    mint_batch_entry big[64];
    for (int i = 0; i < 64; i++) big[i] = (mint_batch_entry){t[i % 80], i, 0, false};
    cr_assert_eq(mint_decode(c, big, 64, &err), MINT_OK, "%s", err.msg);
    for (int i = 0; i < 64; i++) big[i] = (mint_batch_entry){t[i % 80], 64 + i, 0, false};
    cr_assert_eq(mint_decode(c, big, 64, &err), MINT_E_LIMIT);
    cr_assert(strstr(err.msg, "KV cache is full"), "%s", err.msg);
    cr_assert_eq(mint_seq_n_past(c, 0), 64, "the refused batch added nothing");
    cr_assert_eq(mint_seq_n_past(c, 1), 40);
    // Sequence 1 still continues exactly as a cold evaluation does.
    feed(c, 1, t + 40, 1, after);
    float want[NV];
    cold_b(m, t, 41, 16, want);
    same(want, after, "sequence 1 after the errors");
    (void)before;
    cr_assert_eq(mint_seq_fork(c, 0, 5, &err), MINT_E_ARG);
    cr_assert_eq(mint_seq_truncate(c, 1, 99, &err), MINT_E_ARG);
    mint_ctx_free(c);
    mint_model_close(m);
}
