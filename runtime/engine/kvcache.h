// kvcache.h - the paged KV cache: keys and values in fixed-size blocks from one pool, a block
// table per sequence, blocks shared between sequences by reference counts, and a prefix cache of
// full blocks keyed by their tokens (vLLM's PagedAttention and automatic prefix caching).
//
// A physical block holds `block` positions of every layer (ops/kv_view.h gives the layout). A
// sequence is a list of logical blocks, each naming a physical one; positions are appended in
// order. Memory grows with the blocks in use, up to max_blocks (the cap given at creation);
// freed blocks are kept for reuse, not returned.
//
// Sharing. mint_kv_fork gives a sequence another's blocks (counts go up). A block is written
// only when exactly one sequence holds it and it is not in the prefix cache; before a write into
// any other block (a shared or cached, partly filled last block) the writer gets a copy (copy on
// write). Full blocks are never written again.
//
// Prefix cache. When a block fills, it is registered under key = XXH3-64(key of the previous
// block, its token ids): a chain, so equal keys mean equal prefixes (kvprefix.c). A block that no
// sequence holds stays cached until the pool needs it, least recently used first. mint_kv_prefix
// lets a sequence start from the longest run of cached blocks matching its tokens.
#ifndef MINT_KVCACHE_H
#define MINT_KVCACHE_H

#include "mint.h"
#include "ops/attention.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mint_kv_block {
    int32_t ref;  // sequences holding it
    bool cached;  // registered in the prefix cache under key
    uint64_t key; // prefix-chain key (valid when cached)
    int32_t prev; // LRU neighbours while evictable (cached and ref == 0), else -1
    int32_t next; //
} mint_kv_block;

typedef struct mint_kv_seq {
    int32_t *table;   // [max_seq_blocks] physical block of each logical block
    int32_t n_blocks; // logical blocks in use
    int32_t n_past;   // positions held (0 .. n_past-1)
    int32_t *tokens;  // [n_ctx] token id at each held position
    uint64_t *keys;   // [max_seq_blocks] prefix-chain key of each full logical block
} mint_kv_seq;

typedef struct mint_kv_stats {
    int32_t blocks_used;   // blocks held by at least one sequence
    int32_t blocks_cached; // held by none, kept for the prefix cache
    int32_t blocks_free;   // allocated, neither held nor cached
    int32_t blocks_alloc;  // allocated so far (memory grows to this)
    int32_t max_blocks;    // the cap
    int32_t block;         // positions per block
    uint64_t bytes_alloc;  // bytes of block memory allocated
    uint64_t prefix_hits;  // blocks reused from the prefix cache since creation
    uint64_t copies;       // copy-on-write copies since creation
    uint64_t evictions;    // cached blocks evicted since creation
} mint_kv_stats;

typedef struct mint_kvcache {
    mint_kv_type type;      // MINT_KV_F32, F16, Q8_0 or Q4_0
    size_t elem;            // bytes per element of a float cache (4 or 2), 0 for a quantized one
    size_t row_bytes;       // bytes of one position's keys (or values) in one layer
    int32_t n_layer;        // layers
    int64_t kv_dim;         // elements per position (n_head_kv * head_dim)
    int32_t block;          // positions per block
    size_t layer_bytes;     // one layer of a block: keys [block][kv_dim] + values [kv_dim][block]
    size_t block_bytes;     // n_layer * layer_bytes
    int32_t n_ctx;          // positions per sequence
    int32_t max_seq_blocks; // logical blocks per sequence (n_ctx / block, rounded up)
    int32_t max_blocks;     // physical blocks in the pool, at most
    int32_t n_alloc;        // physical blocks allocated so far
    uint8_t **mem;          // [max_blocks] block memory (NULL until allocated)
    mint_kv_block *blk;     // [max_blocks] block state
    int32_t *free_list;     // [max_blocks] allocated blocks neither held nor cached
    int32_t n_free;         // entries in free_list
    int32_t lru_head;       // least recently released evictable block, or -1
    int32_t lru_tail;       // most recently released evictable block, or -1
    int32_t n_lru;          // evictable blocks
    int32_t *blk_tokens;    // [max_blocks][block] tokens of each cached block (to confirm a hit)
    uint64_t *blk_parent;   // [max_blocks] key of the block before it in its chain
    uint64_t *map_key;      // [map_cap] prefix map: key ... (open addressing, linear probing)
    int32_t *map_val;       // [map_cap] ... -> physical block, -1 empty, -2 deleted
    size_t map_cap;         // a power of two, at least 2 * max_blocks
    mint_kv_seq *seq;       // [n_seq] sequences
    int32_t n_seq;          // sequence ids are 0 .. n_seq-1
    mint_kv_stats stats;    // counters (the block counts are filled by mint_kv_get_stats)
} mint_kvcache;

// The element type of a cache type (MINT_KV_Q8_0 -> MINT_TYPE_Q8_0, ...).
mint_type mint_kv_elem_type(mint_kv_type type);
// Bytes of one block (0 also when kv_dim is not a multiple of a quantized type's block), and the
// metadata bound for `max_blocks`; 0 when the sizes overflow.
uint64_t mint_kv_block_bytes(mint_kv_type type, int32_t n_layer, int64_t kv_dim, int32_t block);

mint_status mint_kv_init(mint_kvcache *kv, mint_kv_type type, int32_t n_layer, int64_t kv_dim,
                         int32_t block, int32_t n_ctx, int32_t n_seq, int32_t max_blocks,
                         mint_err *err);
void mint_kv_free(mint_kvcache *kv);

// The sequence's view for the attention ops (valid until its table changes).
mint_kv_view mint_kv_seq_view(const mint_kvcache *kv, int32_t seq);

// Physical blocks appending n positions to seq needs: new blocks plus a copy of its last block
// when that is shared or cached and partly filled.
int32_t mint_kv_blocks_needed(const mint_kvcache *kv, int32_t seq, int32_t n);
// Blocks the pool can still hand out: free, not yet allocated, or evictable.
int32_t mint_kv_blocks_available(const mint_kvcache *kv);
// Makes positions n_past .. n_past+n-1 of seq writable (allocating, evicting, copying on write).
// MINT_E_NOMEM or MINT_E_LIMIT leave what was done in place, so check mint_kv_blocks_needed
// against mint_kv_blocks_available first when the call must change nothing on failure.
mint_status mint_kv_reserve(mint_kvcache *kv, int32_t seq, int32_t n, mint_err *err);
// Records n evaluated tokens at positions n_past .. n_past+n-1 and registers the blocks they
// filled in the prefix cache (a block equal to one already cached is replaced by it).
void mint_kv_commit(mint_kvcache *kv, int32_t seq, const int32_t *tokens, int32_t n);

// dst drops what it held and shares all of src's blocks.
void mint_kv_fork(mint_kvcache *kv, int32_t src, int32_t dst);
// Keeps positions 0 .. n_keep-1 of seq (n_keep <= n_past), releasing the blocks past them.
void mint_kv_truncate(mint_kvcache *kv, int32_t seq, int32_t n_keep);
// Empties seq, and takes the blocks no other sequence holds out of the prefix cache, so that no
// later prefix lookup finds them (llama-server's slot erase).
void mint_kv_forget(mint_kvcache *kv, int32_t seq);

// Makes seq hold the longest prefix of tokens[0..n) it can without evaluating: what it already
// holds that matches, or a chain of cached blocks when that is longer. At most n - 1 positions,
// so that the last token is evaluated (its logits are wanted). Returns the positions held.
int32_t mint_kv_prefix(mint_kvcache *kv, int32_t seq, const int32_t *tokens, int32_t n);

void mint_kv_get_stats(const mint_kvcache *kv, mint_kv_stats *out);

// ---- internal to kvcache.c / kvprefix.c ----------------------------------------------------
// Drops one reference to block b (to the LRU list when cached, else to the free list at 0).
void mint_kv_release(mint_kvcache *kv, int32_t b);
// Takes one reference to block b (out of the LRU list if it was there).
void mint_kv_retain(mint_kvcache *kv, int32_t b);
// Key of a full block after the one keyed `parent`.
uint64_t mint_kv_chain_key(uint64_t parent, const int32_t *tokens, int32_t block);
// Cached block with this key, parent and tokens, or -1.
int32_t mint_kv_lookup(const mint_kvcache *kv, uint64_t key, uint64_t parent,
                       const int32_t *tokens);
// Registers block b (full) under key; returns b, or the block already cached under that key.
int32_t mint_kv_register(mint_kvcache *kv, int32_t b, uint64_t key, uint64_t parent,
                         const int32_t *tokens);
// Removes block b from the map (before it is evicted and reused).
void mint_kv_unregister(mint_kvcache *kv, int32_t b);

// The key before a sequence's first block.
#define MINT_KV_ROOT_KEY 0x6d696e742d6b7631ull // "mint-kv1"

#endif // MINT_KVCACHE_H
