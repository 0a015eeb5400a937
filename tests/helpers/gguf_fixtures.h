// gguf_fixtures.h - making broken GGUF files in tests: little-endian patching of a written
// buffer, and locating the fields of a tensor-info record by the tensor's name.
#ifndef MINT_TEST_GGUF_FIXTURES_H
#define MINT_TEST_GGUF_FIXTURES_H

#include <stddef.h>
#include <stdint.h>

// Byte positions of one tensor-info record's fields in a GGUF image.
typedef struct mt_tinfo_pos {
    size_t at;     // the name's u64 length field (start of the record)
    size_t n_dims; // u32 n_dims
    size_t ne;     // first u64 of ne[]
    size_t type;   // u32 type code
    size_t offset; // u64 offset
} mt_tinfo_pos;

// Finds the record of tensor `name` (its length-prefixed name must occur once in buf); fails the
// running test when it does not.
mt_tinfo_pos mt_find_tinfo(const uint8_t *buf, size_t len, const char *name);

// Offset of the first occurrence of needle in buf; fails the test when absent.
size_t mt_find_bytes(const uint8_t *buf, size_t len, const void *needle, size_t n);

uint32_t mt_get_u32(const uint8_t *buf, size_t at);
uint64_t mt_get_u64(const uint8_t *buf, size_t at);
void mt_put_u32(uint8_t *buf, size_t at, uint32_t v);
void mt_put_u64(uint8_t *buf, size_t at, uint64_t v);

// xorshift64* for reproducible "random" bytes.
uint64_t mt_rand(uint64_t *state);

#endif // MINT_TEST_GGUF_FIXTURES_H
