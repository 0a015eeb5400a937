// hash.h - XXH3-64 (Debian's libxxhash) for the rest of mint. mint_hash64, one byte range, is
// public (mint.h); this adds the hash of several ranges read as one concatenation.
#ifndef MINT_BASE_HASH_H
#define MINT_BASE_HASH_H

#include "mint.h"

#include <stddef.h>
#include <stdint.h>

// XXH3-64 of data[0][0..len[0]) ++ data[1][0..len[1]) ++ ...: the same value mint_hash64 gives
// for the concatenated bytes. Returns 0 only if the hash state cannot be allocated.
uint64_t mint_hash64_parts(size_t n, const void *const *data, const size_t *len);

// XXH3-64 of data[0..n) with a 64-bit seed: how a chain of hashes is made, each link seeded with
// the previous one (the KV cache's prefix keys).
uint64_t mint_hash64_seeded(const void *data, size_t n, uint64_t seed);

#endif // MINT_BASE_HASH_H
