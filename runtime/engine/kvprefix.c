// kvprefix.c - the prefix cache's map: full blocks keyed by a hash chain over their tokens.
//
// key(block i) = XXH3-64 of block i's token ids, seeded with key(block i-1) (MINT_KV_ROOT_KEY
// before the first), so a key names the whole prefix up to the block's end, as vLLM's
// automatic prefix caching does. The map is open addressing with linear probing; a hit is
// confirmed against the stored parent key and tokens, so a 64-bit collision can only cost a
// miss, never wrong keys and values. Deletion shifts later entries back (no tombstones), so
// probe chains stay as short as the load factor (at most one half) makes them.
#include "base/hash.h"
#include "runtime/engine/kvcache.h"

#include <string.h>

uint64_t mint_kv_chain_key(uint64_t parent, const int32_t *tokens, int32_t block) {
    return mint_hash64_seeded(tokens, (size_t)block * sizeof *tokens, parent);
}

static size_t home(const mint_kvcache *kv, uint64_t key) {
    return (size_t)(key ^ (key >> 29)) & (kv->map_cap - 1);
}

static bool same_block(const mint_kvcache *kv, int32_t b, uint64_t parent, const int32_t *tokens) {
    return kv->blk_parent[b] == parent && memcmp(kv->blk_tokens + (size_t)b * kv->block, tokens,
                                                 (size_t)kv->block * sizeof *tokens) == 0;
}

int32_t mint_kv_lookup(const mint_kvcache *kv, uint64_t key, uint64_t parent,
                       const int32_t *tokens) {
    for (size_t i = home(kv, key);; i = (i + 1) & (kv->map_cap - 1)) {
        const int32_t b = kv->map_val[i];
        if (b < 0) return -1;
        if (kv->map_key[i] == key) return same_block(kv, b, parent, tokens) ? b : -1;
    }
}

int32_t mint_kv_register(mint_kvcache *kv, int32_t b, uint64_t key, uint64_t parent,
                         const int32_t *tokens) {
    size_t i = home(kv, key);
    for (; kv->map_val[i] >= 0; i = (i + 1) & (kv->map_cap - 1))
        if (kv->map_key[i] == key) // cached already (or a collision: then b stays uncached)
            return same_block(kv, kv->map_val[i], parent, tokens) ? kv->map_val[i] : b;
    kv->map_key[i] = key;
    kv->map_val[i] = b;
    kv->blk[b].cached = true;
    kv->blk[b].key = key;
    kv->blk_parent[b] = parent;
    memcpy(kv->blk_tokens + (size_t)b * kv->block, tokens, (size_t)kv->block * sizeof *tokens);
    return b;
}

void mint_kv_unregister(mint_kvcache *kv, int32_t b) {
    if (!kv->blk[b].cached) return;
    kv->blk[b].cached = false;
    const size_t mask = kv->map_cap - 1;
    size_t i = home(kv, kv->blk[b].key);
    while (kv->map_val[i] != b) i = (i + 1) & mask;
    // Backward-shift deletion: move up every later entry of the cluster whose home lies at or
    // before the hole (cyclically), so that every remaining key stays reachable from its home.
    for (size_t j = (i + 1) & mask; kv->map_val[j] >= 0; j = (j + 1) & mask) {
        const size_t h = home(kv, kv->map_key[j]);
        const bool movable = i <= j ? (h <= i || h > j) : (h <= i && h > j);
        if (movable) {
            kv->map_key[i] = kv->map_key[j];
            kv->map_val[i] = kv->map_val[j];
            i = j;
        }
    }
    kv->map_val[i] = -1;
}
