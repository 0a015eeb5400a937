// strmap.h - a map from byte strings to small integers (tensor names, metadata keys, token
// pieces), open addressing over XXH3 hashes. The map stores pointers to the caller's strings;
// they must outlive it.
#ifndef MINT_STRMAP_H
#define MINT_STRMAP_H

#include "mint.h"

#include <stddef.h>
#include <stdint.h>

typedef struct mint_strmap_slot {
    const char *key; // NULL = empty slot
    uint32_t len;    // key length in bytes
    int32_t value;   // caller's value (an index)
    uint64_t hash;   // XXH3-64 of the key
} mint_strmap_slot;

typedef struct mint_strmap {
    mint_strmap_slot *slots; // [cap], cap a power of two, at most half full
    size_t cap;              // number of slots
    size_t n;                // number of keys
} mint_strmap;

// Sizes the table for `n_expected` keys. MINT_E_NOMEM on failure.
mint_status mint_strmap_init(mint_strmap *m, size_t n_expected);
void mint_strmap_free(mint_strmap *m);

// Inserts key -> value. If the key is already present, leaves it and returns its existing value
// in *existing (and MINT_E_ARG); otherwise returns MINT_OK. Grows as needed (MINT_E_NOMEM).
mint_status mint_strmap_put(mint_strmap *m, const char *key, size_t len, int32_t value,
                            int32_t *existing);

// Value for key, or -1 when absent.
int32_t mint_strmap_get(const mint_strmap *m, const char *key, size_t len);

#endif // MINT_STRMAP_H
