// gguf_fixtures.c - see gguf_fixtures.h.
#include "gguf_fixtures.h"

#include <criterion/criterion.h>
#include <string.h>

size_t mt_find_bytes(const uint8_t *buf, size_t len, const void *needle, size_t n) {
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(buf + i, needle, n) == 0) return i;
    cr_assert_fail("pattern of %zu bytes not found in a %zu-byte buffer", n, len);
    return 0;
}

mt_tinfo_pos mt_find_tinfo(const uint8_t *buf, size_t len, const char *name) {
    size_t n = strlen(name);
    uint8_t pat[8 + 256];
    cr_assert_leq(n, 256);
    mt_put_u64(pat, 0, n);
    memcpy(pat + 8, name, n);
    mt_tinfo_pos p;
    p.at = mt_find_bytes(buf, len, pat, 8 + n);
    p.n_dims = p.at + 8 + n;
    uint32_t nd = mt_get_u32(buf, p.n_dims);
    p.ne = p.n_dims + 4;
    p.type = p.ne + 8 * (size_t)(nd <= 4 ? nd : 4);
    p.offset = p.type + 4;
    return p;
}

uint32_t mt_get_u32(const uint8_t *buf, size_t at) {
    return (uint32_t)buf[at] | (uint32_t)buf[at + 1] << 8 | (uint32_t)buf[at + 2] << 16 |
           (uint32_t)buf[at + 3] << 24;
}

uint64_t mt_get_u64(const uint8_t *buf, size_t at) {
    return (uint64_t)mt_get_u32(buf, at) | (uint64_t)mt_get_u32(buf, at + 4) << 32;
}

void mt_put_u32(uint8_t *buf, size_t at, uint32_t v) {
    for (int i = 0; i < 4; i++) buf[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

void mt_put_u64(uint8_t *buf, size_t at, uint64_t v) {
    mt_put_u32(buf, at, (uint32_t)v);
    mt_put_u32(buf, at + 4, (uint32_t)(v >> 32));
}

uint64_t mt_rand(uint64_t *state) {
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}
