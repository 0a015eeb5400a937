// arena.h - a bump allocator for data that lives exactly as long as its owner (a file's keys,
// names and metadata arrays). One free releases everything.
#ifndef MINT_ARENA_H
#define MINT_ARENA_H

#include <stddef.h>

typedef struct mint_arena_block mint_arena_block;

typedef struct mint_arena {
    mint_arena_block *head; // most recent block; blocks are singly linked
    size_t used;            // bytes used in head
    size_t cap;             // bytes available in head
} mint_arena;

// Returns `n` bytes aligned to 16, or NULL when out of memory (or n overflows). Never zeroed
// unless mint_arena_zalloc is used.
void *mint_arena_alloc(mint_arena *a, size_t n);
void *mint_arena_zalloc(mint_arena *a, size_t n);
// Copies n bytes and appends a NUL; NULL when out of memory.
char *mint_arena_strndup(mint_arena *a, const char *s, size_t n);
void mint_arena_free(mint_arena *a);

#endif // MINT_ARENA_H
