// golden_table.h - recorded XXH3-64 hashes of fixture logits (tests/test_golden.c), per model,
// kernel level and mode. Regenerate with MINT_GOLDEN_PRINT=1 only for a change meant to alter
// the arithmetic.
#ifndef MINT_TEST_GOLDEN_TABLE_H
#define MINT_TEST_GOLDEN_TABLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct golden_entry {
    const char *model; // path under MINT_TEST_DATA
    const char *isa;   // kernel level
    const char *mode;  // "f32", "f16" (KV cache type) or "f32-naive" (plain attention)
    uint64_t hash;     // XXH3-64 of the row hashes
} golden_entry;

extern const golden_entry golden_table[];
extern const size_t golden_table_len;

#endif // MINT_TEST_GOLDEN_TABLE_H
