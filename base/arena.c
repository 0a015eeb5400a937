// arena.c - blocks of at least 64 KiB; a request larger than that gets a block of its own.
#include "base/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct mint_arena_block {
    mint_arena_block *next;
    size_t pad; // keeps data 16-byte aligned on 64-bit hosts
    unsigned char data[];
};

enum { ARENA_MIN_BLOCK = 64 * 1024 };

void *mint_arena_alloc(mint_arena *a, size_t n) {
    if (n > SIZE_MAX - 32) return NULL;
    size_t need = (n + 15) & ~(size_t)15;
    if (!a->head || a->cap - a->used < need) {
        size_t cap = need > ARENA_MIN_BLOCK ? need : ARENA_MIN_BLOCK;
        mint_arena_block *b = malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->next = a->head;
        a->head = b;
        a->used = 0;
        a->cap = cap;
    }
    void *p = a->head->data + a->used;
    a->used += need;
    return p;
}

void *mint_arena_zalloc(mint_arena *a, size_t n) {
    void *p = mint_arena_alloc(a, n);
    if (p) memset(p, 0, n);
    return p;
}

char *mint_arena_strndup(mint_arena *a, const char *s, size_t n) {
    if (n == SIZE_MAX) return NULL;
    char *p = mint_arena_alloc(a, n + 1);
    if (!p) return NULL;
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void mint_arena_free(mint_arena *a) {
    mint_arena_block *b = a->head;
    while (b) {
        mint_arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
    a->used = a->cap = 0;
}
