// strmap.c - linear probing; the table doubles when it becomes half full.
#include "base/strmap.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

mint_status mint_strmap_init(mint_strmap *m, size_t n_expected) {
    size_t cap = 16;
    while (cap < 2 * n_expected + 2) {
        if (cap > SIZE_MAX / 4 / sizeof(mint_strmap_slot)) return MINT_E_NOMEM;
        cap *= 2;
    }
    m->slots = calloc(cap, sizeof *m->slots);
    if (!m->slots) return MINT_E_NOMEM;
    m->cap = cap;
    m->n = 0;
    return MINT_OK;
}

void mint_strmap_free(mint_strmap *m) {
    free(m->slots);
    memset(m, 0, sizeof *m);
}

static mint_strmap_slot *find_slot(mint_strmap_slot *slots, size_t cap, const char *key, size_t len,
                                   uint64_t h) {
    size_t mask = cap - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        mint_strmap_slot *s = &slots[i];
        if (!s->key) return s;
        if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0) return s;
    }
}

static mint_status grow(mint_strmap *m) {
    size_t cap = m->cap * 2;
    mint_strmap_slot *slots = calloc(cap, sizeof *slots);
    if (!slots) return MINT_E_NOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        mint_strmap_slot *s = &m->slots[i];
        if (s->key) *find_slot(slots, cap, s->key, s->len, s->hash) = *s;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return MINT_OK;
}

mint_status mint_strmap_put(mint_strmap *m, const char *key, size_t len, int32_t value,
                            int32_t *existing) {
    if (len > UINT32_MAX) return MINT_E_ARG;
    if (2 * (m->n + 1) > m->cap) {
        mint_status st = grow(m);
        if (st != MINT_OK) return st;
    }
    uint64_t h = XXH3_64bits(key, len);
    mint_strmap_slot *s = find_slot(m->slots, m->cap, key, len, h);
    if (s->key) {
        if (existing) *existing = s->value;
        return MINT_E_ARG;
    }
    s->key = key;
    s->len = (uint32_t)len;
    s->value = value;
    s->hash = h;
    m->n++;
    return MINT_OK;
}

int32_t mint_strmap_get(const mint_strmap *m, const char *key, size_t len) {
    if (!m->slots || len > UINT32_MAX) return -1;
    uint64_t h = XXH3_64bits(key, len);
    const mint_strmap_slot *s = find_slot(m->slots, m->cap, key, len, h);
    return s->key ? s->value : -1;
}
