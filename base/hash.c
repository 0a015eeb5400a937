// hash.c - XXH3-64 over Debian's libxxhash: mint-inspect --hash, the tensor hashes mint-quantize
// records, the prefix cache's block keys and the tests' logit fingerprints.
#include "base/hash.h"

#include <xxhash.h>

uint64_t mint_hash64(const void *data, size_t n) {
    return XXH3_64bits(data, n);
}

uint64_t mint_hash64_parts(size_t n, const void *const *data, const size_t *len) {
    XXH3_state_t *s = XXH3_createState();
    if (!s) return 0;
    XXH3_64bits_reset(s);
    for (size_t i = 0; i < n; i++)
        if (len[i]) XXH3_64bits_update(s, data[i], len[i]);
    uint64_t h = XXH3_64bits_digest(s);
    XXH3_freeState(s);
    return h;
}

uint64_t mint_hash64_seeded(const void *data, size_t n, uint64_t seed) {
    return XXH3_64bits_withSeed(data, n, seed);
}
