// test_gguf_malformed.c - every validation rule of the GGUF reader, each with a broken file made
// by the writer or by patching the bytes of a written one, rejected with MINT_E_FORMAT and a
// message naming the record, the field, the value and the limit or byte offset. Then the header
// of stories260K.gguf cut at every byte, and a few thousand random byte flips.
//
// Every parse runs on a malloc'd copy of exactly the image's bytes, so AddressSanitizer catches
// a read past the end.
#include "formats/gguf.h"
#include "helpers/gguf_fixtures.h"
#include "helpers/helpers.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct image {
    uint8_t *p; // [len] malloc'd
    size_t len; // bytes
} image;

static image write_image(mint_gguf_writer *w) {
    image m;
    mint_err err = {0};
    cr_assert_eq(mint_gguf_writer_write_mem(w, &m.p, &m.len, &err), MINT_OK, "%s", err.msg);
    mint_gguf_writer_free(w);
    return m;
}

// Parses an exact-size copy of the first n bytes; returns the status and fills err.
static mint_status parse_copy(const uint8_t *p, size_t n, mint_err *err) {
    uint8_t *copy = n ? malloc(n) : NULL;
    if (n) memcpy(copy, p, n);
    mint_file *f = NULL;
    mint_status st = mint_gguf_parse(copy, n, "bad.gguf", &f, err);
    if (st == MINT_OK) {
        cr_assert_not_null(f);
        mint_file_close(f);
    } else {
        cr_assert_null(f);
    }
    free(copy);
    return st;
}

// Asserts the image is rejected as malformed with a one-line message holding every given
// substring (a NULL-terminated list of printf formats, each expanded with its own arguments is
// too clumsy, so callers pass finished strings).
static void expect_reject(const image *m, ...) {
    mint_err err = {0};
    mint_status st = parse_copy(m->p, m->len, &err);
    cr_assert_eq(st, MINT_E_FORMAT, "status %d (%s), message: %s", st, mint_status_name(st),
                 err.msg);
    cr_assert_eq(err.code, MINT_E_FORMAT);
    cr_assert_null(strchr(err.msg, '\n'), "multi-line message: %s", err.msg);
    cr_assert_eq(strncmp(err.msg, "bad.gguf: ", 10), 0, "message lacks the file name: %s", err.msg);
    va_list ap;
    va_start(ap, m);
    for (const char *want; (want = va_arg(ap, const char *));)
        cr_assert(strstr(err.msg, want), "message lacks \"%s\": %s", want, err.msg);
    va_end(ap);
}

static void expect_ok(const image *m) {
    mint_err err = {0};
    cr_assert_eq(parse_copy(m->p, m->len, &err), MINT_OK, "%s", err.msg);
}

// printf into a rotating static buffer, for building expected substrings.
static const char *fmt(const char *f, ...) {
    static char bufs[8][256];
    static int next;
    char *b = bufs[next++ % 8];
    va_list ap;
    va_start(ap, f);
    vsnprintf(b, 256, f, ap);
    va_end(ap);
    return b;
}

// ---------------------------------------------------------------------------------------------
// The base file: four metadata entries and three tensors.
//   general.architecture = "llama"  at byte 24 (45 bytes)
//   m.u32 = 7                       at byte 69 (21 bytes)
//   m.arr = [u32; 3]                at byte 90
//   m.str = "hello"                 after it
//   tensor.alpha F32 [8, 4] (128 bytes), tensor.beta Q4_0 [32, 2] (36), tensor.gamma F32 [16] (64)

static void add_base_kv(mint_gguf_writer *w) {
    static const uint32_t arr[3] = {1, 2, 3};
    cr_assert_eq(mint_gguf_add_str(w, "general.architecture", "llama"), MINT_OK);
    cr_assert_eq(mint_gguf_add_u32(w, "m.u32", 7), MINT_OK);
    cr_assert_eq(mint_gguf_add_arr(w, "m.arr", MINT_VAL_U32, arr, 3), MINT_OK);
    cr_assert_eq(mint_gguf_add_str(w, "m.str", "hello"), MINT_OK);
}

static void add_base_tensors(mint_gguf_writer *w) {
    int64_t a[2] = {8, 4}, b[2] = {32, 2}, g[1] = {16};
    cr_assert_eq(mint_gguf_add_tensor(w, "tensor.alpha", MINT_TYPE_F32, 2, a, NULL, 128), MINT_OK);
    cr_assert_eq(mint_gguf_add_tensor(w, "tensor.beta", MINT_TYPE_Q4_0, 2, b, NULL, 36), MINT_OK);
    cr_assert_eq(mint_gguf_add_tensor(w, "tensor.gamma", MINT_TYPE_F32, 1, g, NULL, 64), MINT_OK);
}

static image base_image(void) {
    mint_gguf_writer *w = mint_gguf_writer_create();
    add_base_kv(w);
    add_base_tensors(w);
    return write_image(w);
}

// An image with the base metadata and one tensor of the given description.
static image one_tensor(const char *name, uint32_t type, uint32_t n_dims, const int64_t *ne,
                        uint64_t nbytes) {
    mint_gguf_writer *w = mint_gguf_writer_create();
    add_base_kv(w);
    cr_assert_eq(mint_gguf_add_tensor(w, name, type, n_dims, ne, NULL, nbytes), MINT_OK);
    return write_image(w);
}

// Byte positions of a metadata record's fields, from a parse of the intact image.
typedef struct kv_pos {
    size_t at;    // record start (key length field)
    size_t type;  // u32 value type
    size_t value; // value (for arrays: the u32 element type)
} kv_pos;

static kv_pos find_kv(const image *m, const char *key) {
    mint_file *f;
    mint_err err = {0};
    cr_assert_eq(mint_gguf_parse(m->p, m->len, "base", &f, &err), MINT_OK, "%s", err.msg);
    const mint_kv *kv = mint_file_find_kv(f, key);
    cr_assert_not_null(kv, "%s", key);
    kv_pos p = {.at = kv->file_offset};
    p.type = p.at + 8 + strlen(key);
    p.value = p.type + 4;
    mint_file_close(f);
    return p;
}

// Start of the record of `key`, found by its length-prefixed bytes (works on broken images).
static size_t find_key_raw(const image *m, const char *key) {
    uint8_t pat[8 + 64];
    size_t n = strlen(key);
    cr_assert_leq(n, 64);
    mt_put_u64(pat, 0, n);
    memcpy(pat + 8, key, n);
    return mt_find_bytes(m->p, m->len, pat, 8 + n);
}

Test(gguf_malformed, base_image_is_valid) {
    image m = base_image();
    expect_ok(&m);
    cr_assert_eq(find_kv(&m, "general.architecture").at, 24);
    cr_assert_eq(find_kv(&m, "m.u32").at, 69);
    cr_assert_eq(find_kv(&m, "m.arr").at, 90);
    free(m.p);
}

// ---------------------------------------------------------------------------------------------
// Header

Test(gguf_malformed, bad_magic) {
    image m = base_image();
    m.p[3] = 'X';
    expect_reject(&m, "header: magic 47 47 55 58 at byte 0", "\"GGUF\" (47 47 55 46)", NULL);
    memcpy(m.p,
           "\x7f"
           "ELF",
           4);
    expect_reject(&m, "magic 7f 45 4c 46", NULL);
    free(m.p);
}

static image with_version(uint32_t v) {
    mint_gguf_writer *w = mint_gguf_writer_create();
    add_base_kv(w);
    add_base_tensors(w);
    mint_gguf_writer_set_version(w, v);
    return write_image(w);
}

Test(gguf_malformed, versions) {
    image m = with_version(0);
    expect_reject(&m, "header: version 0 at byte 4 is unsupported", "versions 2 and 3", NULL);
    free(m.p);
    m = with_version(1);
    expect_reject(&m, "header: version 1 at byte 4 is unsupported", "32-bit", NULL);
    free(m.p);
    m = with_version(4);
    expect_reject(&m, "header: version 4 at byte 4 is unsupported", "versions 2 and 3", NULL);
    free(m.p);
    m = with_version(0x03000000); // v3 written big-endian
    expect_reject(&m, "version 0x03000000 at byte 4 looks byte-swapped", "big-endian", NULL);
    free(m.p);
    m = with_version(2); // v2 has the same layout on little-endian hosts
    expect_ok(&m);
    free(m.p);
}

Test(gguf_malformed, counts_larger_than_the_bytes_allow) {
    image m = base_image();
    uint64_t rem = m.len - 24;
    uint64_t kv_limit = rem / 14;
    mt_put_u64(m.p, 16, 1ull << 40);
    expect_reject(&m, "header: metadata count 1099511627776 at byte 16",
                  fmt("exceeds the limit of %" PRIu64 " (%" PRIu64 " bytes remain", kv_limit, rem),
                  NULL);
    mt_put_u64(m.p, 16, UINT64_MAX);
    expect_reject(&m, "metadata count 18446744073709551615 at byte 16", NULL);
    mt_put_u64(m.p, 16, 4);
    uint64_t t_limit = (rem - 4 * 14) / 33;
    mt_put_u64(m.p, 8, t_limit + 1);
    expect_reject(&m, fmt("header: tensor count %" PRIu64 " at byte 8", t_limit + 1),
                  fmt("exceeds the limit of %" PRIu64, t_limit), NULL);
    mt_put_u64(m.p, 8, 1ull << 63);
    expect_reject(&m, "tensor count 9223372036854775808 at byte 8", NULL);
    free(m.p);
}

// ---------------------------------------------------------------------------------------------
// Metadata

Test(gguf_malformed, string_length_past_the_end) {
    image m = base_image();
    kv_pos p = find_kv(&m, "m.str");
    mt_put_u64(m.p, p.value, 1000000);
    expect_reject(&m,
                  fmt("metadata 'm.str': string length 1000000 at byte %zu runs past the end of "
                      "the file (%zu bytes remain)",
                      p.value, m.len - p.value - 8),
                  NULL);
    mt_put_u64(m.p, p.value, (1ull << 30) + 1);
    expect_reject(
        &m, fmt("string length 1073741825 at byte %zu exceeds the limit of 1073741824", p.value),
        NULL);
    free(m.p);
}

Test(gguf_malformed, key_length_huge) {
    image m = base_image();
    mt_put_u64(m.p, 69, 1ull << 40);
    expect_reject(&m,
                  "metadata entry 1: key length 1099511627776 at byte 69 exceeds the limit of "
                  "65535",
                  NULL);
    mt_put_u64(m.p, 69, 60000); // under the limit, past the end
    expect_reject(&m, "metadata entry 1: key length 60000 at byte 69 runs past the end", NULL);
    free(m.p);
}

Test(gguf_malformed, empty_key_and_nul_in_key) {
    mint_gguf_writer *w = mint_gguf_writer_create();
    add_base_kv(w);
    cr_assert_eq(mint_gguf_add_u32(w, "", 1), MINT_OK);
    image m = write_image(w);
    expect_reject(&m, "metadata entry 4: key at byte", "is empty", NULL);
    free(m.p);
    m = base_image();
    m.p[69 + 8 + 1] = '\0'; // "m\0u32"
    expect_reject(&m, "metadata entry 1: key at byte 69 contains a NUL byte", NULL);
    free(m.p);
}

Test(gguf_malformed, duplicate_key) {
    mint_gguf_writer *w = mint_gguf_writer_create();
    cr_assert_eq(mint_gguf_add_str(w, "general.architecture", "llama"), MINT_OK);
    cr_assert_eq(mint_gguf_add_u32(w, "m.dup", 1), MINT_OK);
    cr_assert_eq(mint_gguf_add_f32(w, "m.dup", 2.0f), MINT_OK);
    image m = write_image(w);
    // Entries: 24 (45 bytes), 69 (8 + 5 + 4 + 4 = 21 bytes), 90.
    expect_reject(&m, "metadata entry 2: key 'm.dup' at byte 90 duplicates metadata entry 1", NULL);
    free(m.p);
    // A key from the file is printed on one line whatever it holds.
    w = mint_gguf_writer_create();
    cr_assert_eq(mint_gguf_add_u32(w, "bad\nkey\x1b", 1), MINT_OK);
    cr_assert_eq(mint_gguf_add_u32(w, "bad\nkey\x1b", 1), MINT_OK);
    m = write_image(w);
    expect_reject(&m, "key 'bad?key?' at byte", NULL);
    free(m.p);
}

Test(gguf_malformed, unknown_value_type) {
    image m = base_image();
    kv_pos p = find_kv(&m, "m.u32");
    mt_put_u32(m.p, p.type, 13);
    expect_reject(&m,
                  fmt("metadata 'm.u32': value type 13 at byte %zu is not a GGUF value type "
                      "(0..12)",
                      p.type),
                  NULL);
    mt_put_u32(m.p, p.type, UINT32_MAX);
    expect_reject(&m, fmt("value type 4294967295 at byte %zu", p.type), NULL);
    free(m.p);
}

Test(gguf_malformed, unknown_array_element_type_and_nested_array) {
    image m = base_image();
    kv_pos p = find_kv(&m, "m.arr");
    mt_put_u32(m.p, p.value, 13);
    expect_reject(&m,
                  fmt("metadata 'm.arr': array element type 13 at byte %zu is not a GGUF value "
                      "type (0..12)",
                      p.value),
                  NULL);
    mt_put_u32(m.p, p.value, MINT_VAL_ARRAY);
    expect_reject(&m,
                  fmt("metadata 'm.arr': array element type 9 (arr) at byte %zu: arrays of arrays "
                      "are not supported",
                      p.value),
                  NULL);
    free(m.p);
}

Test(gguf_malformed, array_length_past_the_end) {
    image m = base_image();
    kv_pos p = find_kv(&m, "m.arr");
    size_t n_at = p.value + 4;
    mt_put_u64(m.p, n_at, 1u << 29);
    expect_reject(&m,
                  fmt("metadata 'm.arr': array length 536870912 at byte %zu needs at least "
                      "2147483648 bytes of u32, only %zu remain",
                      n_at, m.len - n_at - 8),
                  NULL);
    mt_put_u64(m.p, n_at, (1ull << 30) + 1);
    expect_reject(
        &m, fmt("array length 1073741825 at byte %zu exceeds the limit of 1073741824", n_at), NULL);
    free(m.p);

    // Strings: the count is bounded by 8 bytes per element, then each length by the bytes left.
    mint_gguf_writer *w = mint_gguf_writer_create();
    const mint_str strs[2] = {{"ab", 2}, {"cde", 3}};
    cr_assert_eq(mint_gguf_add_arr_str(w, "m.strs", strs, 2), MINT_OK);
    m = write_image(w);
    p = find_kv(&m, "m.strs");
    n_at = p.value + 4;
    mt_put_u64(m.p, n_at, 1000);
    expect_reject(&m, fmt("array length 1000 at byte %zu needs at least 8000 bytes of str", n_at),
                  NULL);
    mt_put_u64(m.p, n_at, 2);
    size_t second = n_at + 8 + 8 + 2;
    mt_put_u64(m.p, second, 99);
    expect_reject(&m,
                  fmt("metadata 'm.strs': element 1 length 99 at byte %zu runs past the end of "
                      "the file (3 bytes remain)",
                      second),
                  NULL);
    free(m.p);
}

Test(gguf_malformed, truncated_scalar_value) {
    mint_gguf_writer *w = mint_gguf_writer_create();
    add_base_kv(w); // no tensors, so the counts allow the cut
    image m = write_image(w);
    kv_pos p = find_kv(&m, "m.u32");
    m.len = p.value + 2;
    expect_reject(&m,
                  fmt("file is truncated: it ends at byte %zu, inside the metadata at entry 1 of "
                      "the 4 the header claims (metadata 'm.u32': u32 value at byte %zu needs 4 "
                      "bytes, only 2 remain)",
                      m.len, p.value),
                  NULL);
    free(m.p);
}

static image with_alignment_kv(mint_value_type type, const void *v) {
    mint_gguf_writer *w = mint_gguf_writer_create();
    add_base_kv(w);
    if (type == MINT_VAL_STRING)
        cr_assert_eq(mint_gguf_add_str(w, "general.alignment", v), MINT_OK);
    else
        cr_assert_eq(mint_gguf_add_scalar(w, "general.alignment", type, v), MINT_OK);
    add_base_tensors(w);
    return write_image(w);
}

Test(gguf_malformed, general_alignment) {
    const uint32_t bad[] = {48, 0, 3, 1u << 25};
    for (size_t i = 0; i < 4; i++) {
        image m = with_alignment_kv(MINT_VAL_U32, &bad[i]);
        size_t at = find_key_raw(&m, "general.alignment");
        expect_reject(&m,
                      fmt("metadata 'general.alignment' at byte %zu: value %" PRIu32
                          " is not a power of two in 1..16777216",
                          at, bad[i]),
                      NULL);
        free(m.p);
    }
    uint64_t a64 = 32;
    image m = with_alignment_kv(MINT_VAL_U64, &a64);
    expect_reject(&m, "metadata 'general.alignment' at byte", ": type u64, must be u32", NULL);
    free(m.p);
    m = with_alignment_kv(MINT_VAL_STRING, "32");
    expect_reject(&m, ": type str, must be u32", NULL);
    free(m.p);
    uint32_t good = 64;
    m = with_alignment_kv(MINT_VAL_U32, &good);
    expect_ok(&m);
    free(m.p);
}

// ---------------------------------------------------------------------------------------------
// Tensor infos

Test(gguf_malformed, n_dims_0_and_5) {
    int64_t ne[5] = {8, 1, 1, 1, 1};
    image m = one_tensor("tensor.alpha", MINT_TYPE_F32, 0, ne, 32);
    mt_tinfo_pos p = mt_find_tinfo(m.p, m.len, "tensor.alpha");
    expect_reject(&m, fmt("tensor 'tensor.alpha': n_dims 0 at byte %zu is outside 1..4", p.n_dims),
                  NULL);
    free(m.p);
    m = one_tensor("tensor.alpha", MINT_TYPE_F32, 4, ne, 32);
    p = mt_find_tinfo(m.p, m.len, "tensor.alpha");
    mt_put_u32(m.p, p.n_dims, 5);
    expect_reject(&m, fmt("tensor 'tensor.alpha': n_dims 5 at byte %zu is outside 1..4", p.n_dims),
                  NULL);
    free(m.p);
}

Test(gguf_malformed, ne_zero_and_negative) {
    int64_t ne[2] = {8, 0};
    image m = one_tensor("tensor.alpha", MINT_TYPE_F32, 2, ne, 0);
    mt_tinfo_pos p = mt_find_tinfo(m.p, m.len, "tensor.alpha");
    expect_reject(&m,
                  fmt("tensor 'tensor.alpha': ne[1] = 0 at byte %zu is outside "
                      "1..9223372036854775807",
                      p.ne + 8),
                  NULL);
    mt_put_u64(m.p, p.ne, UINT64_MAX);
    expect_reject(&m, fmt("ne[0] = -1 at byte %zu is outside", p.ne), NULL);
    free(m.p);
}

Test(gguf_malformed, element_and_byte_count_overflow) {
    int64_t ne[2] = {1ll << 40, 1ll << 40};
    image m = one_tensor("tensor.alpha", MINT_TYPE_F32, 2, ne, 0);
    mt_tinfo_pos p = mt_find_tinfo(m.p, m.len, "tensor.alpha");
    expect_reject(&m,
                  fmt("tensor 'tensor.alpha': ne[1] = 1099511627776 at byte %zu makes the element "
                      "count overflow the limit of 9223372036854775807",
                      p.ne + 8),
                  NULL);
    free(m.p);
    // 2^62 elements fit int64, but not their 2^64 bytes.
    int64_t ne2[2] = {1ll << 32, 1ll << 30};
    m = one_tensor("tensor.alpha", MINT_TYPE_F32, 2, ne2, 0);
    expect_reject(&m,
                  "tensor 'tensor.alpha': byte size of 1073741824 rows of 17179869184 bytes "
                  "overflows",
                  NULL);
    free(m.p);
}

Test(gguf_malformed, unknown_tensor_type) {
    int64_t ne[1] = {32};
    // 40 is NVFP4, between types mint knows (MXFP4 39, Q1_0 41): refused like an unknown code.
    const uint32_t codes[] = {4, 5, 31, 37, 40, 43, 99, UINT32_MAX};
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++) {
        image m = one_tensor("tensor.alpha", codes[i], 1, ne, 128);
        mt_tinfo_pos p = mt_find_tinfo(m.p, m.len, "tensor.alpha");
        expect_reject(&m,
                      fmt("tensor 'tensor.alpha': type code %" PRIu32 " at byte %zu is not a ggml "
                          "type with a known layout (codes 0..42, less removed ones and 40, NVFP4)",
                          codes[i], p.type),
                      NULL);
        free(m.p);
    }
}

Test(gguf_malformed, row_length_not_a_multiple_of_the_block) {
    int64_t ne[2] = {33, 2};
    image m = one_tensor("tensor.beta", MINT_TYPE_Q4_0, 2, ne, 36);
    expect_reject(&m,
                  "tensor 'tensor.beta': row length ne[0] = 33 is not a multiple of the Q4_0 "
                  "block size 32",
                  NULL);
    free(m.p);
    int64_t ne2[1] = {32};
    m = one_tensor("tensor.k", MINT_TYPE_Q4_K, 1, ne2, 144);
    expect_reject(&m, "ne[0] = 32 is not a multiple of the Q4_K block size 256", NULL);
    free(m.p);
    int64_t ne3[3] = {48, 2, 4}; // an expert stack of MXFP4 rows 48 long
    m = one_tensor("blk.0.ffn_up_exps.weight", MINT_TYPE_MXFP4, 3, ne3, 17 * 12);
    expect_reject(&m,
                  "tensor 'blk.0.ffn_up_exps.weight': row length ne[0] = 48 is not a multiple of "
                  "the MXFP4 block size 32",
                  NULL);
    free(m.p);
}

Test(gguf_malformed, tensor_name_too_long_empty_nul) {
    char name[65];
    memset(name, 'n', 64);
    name[64] = '\0';
    int64_t ne[1] = {8};
    image m = one_tensor(name, MINT_TYPE_F32, 1, ne, 32);
    mt_tinfo_pos p = mt_find_tinfo(m.p, m.len, name);
    expect_reject(&m, fmt("tensor 0: name length 64 at byte %zu exceeds the limit of 63", p.at),
                  NULL);
    free(m.p);
    name[63] = '\0'; // 63 bytes is ggml's longest
    m = one_tensor(name, MINT_TYPE_F32, 1, ne, 32);
    expect_ok(&m);
    free(m.p);
    m = one_tensor("", MINT_TYPE_F32, 1, ne, 32);
    size_t at = find_key_raw(&m, "m.str") + 8 + 5 + 4 + 8 + 5; // the first tensor info
    expect_reject(&m, fmt("tensor 0: name at byte %zu is empty (length 0)", at), NULL);
    free(m.p);
    m = one_tensor("tensor.alpha", MINT_TYPE_F32, 1, ne, 32);
    p = mt_find_tinfo(m.p, m.len, "tensor.alpha");
    m.p[p.at + 8 + 3] = '\0';
    expect_reject(&m, fmt("tensor 0: name at byte %zu contains a NUL byte", p.at), NULL);
    free(m.p);
}

Test(gguf_malformed, duplicate_tensor_names) {
    mint_gguf_writer *w = mint_gguf_writer_create();
    add_base_kv(w);
    add_base_tensors(w);
    int64_t ne[1] = {8};
    cr_assert_eq(mint_gguf_add_tensor(w, "tensor.beta", MINT_TYPE_F32, 1, ne, NULL, 32), MINT_OK);
    image m = write_image(w);
    mt_tinfo_pos first = mt_find_tinfo(m.p, m.len, "tensor.beta");
    size_t second = first.offset + 8 + (8 + 12 + 4 + 8 + 4 + 8); // after gamma's record
    cr_assert_eq(mt_get_u64(m.p, second), 11);
    expect_reject(&m, fmt("tensor 3: name 'tensor.beta' at byte %zu duplicates tensor 1", second),
                  NULL);
    free(m.p);
}

// ---------------------------------------------------------------------------------------------
// Data section

Test(gguf_malformed, misaligned_offset) {
    image m = base_image();
    mt_tinfo_pos p = mt_find_tinfo(m.p, m.len, "tensor.beta");
    cr_assert_eq(mt_get_u64(m.p, p.offset), 128);
    mt_put_u64(m.p, p.offset, 132);
    expect_reject(&m,
                  fmt("tensor 'tensor.beta': offset 132 at byte %zu is not a multiple of the "
                      "alignment 32",
                      p.offset),
                  NULL);
    free(m.p);
    // With general.alignment = 64 the writer puts beta at 128; 160 is 32- but not 64-aligned.
    uint32_t a = 64;
    m = with_alignment_kv(MINT_VAL_U32, &a);
    p = mt_find_tinfo(m.p, m.len, "tensor.beta");
    mt_put_u64(m.p, p.offset, 160);
    expect_reject(&m, "offset 160", "is not a multiple of the alignment 64", NULL);
    free(m.p);
}

Test(gguf_malformed, offset_plus_size_past_the_end) {
    image m = base_image();
    mint_file *f;
    cr_assert_eq(mint_gguf_parse(m.p, m.len, "base", &f, NULL), MINT_OK);
    uint64_t data_start = f->data_offset, avail = m.len - data_start;
    mint_file_close(f);
    mt_tinfo_pos p = mt_find_tinfo(m.p, m.len, "tensor.gamma");
    mt_put_u64(m.p, p.offset, 1ull << 40);
    expect_reject(&m,
                  fmt("tensor 'tensor.gamma': offset 1099511627776 at byte %zu + 64 bytes runs "
                      "past the end of the data section (the data section holds %" PRIu64
                      " bytes from byte %" PRIu64 ")",
                      p.offset, avail, data_start),
                  NULL);
    mt_put_u64(m.p, p.offset, UINT64_MAX - 31); // aligned; offset + size wraps around
    expect_reject(&m, "offset 18446744073709551584", "runs past the end", NULL);
    mt_put_u64(m.p, p.offset, avail - 32); // starts inside, ends 32 bytes past the end
    expect_reject(&m, fmt("offset %" PRIu64 " at byte %zu + 64 bytes", avail - 32, p.offset), NULL);
    free(m.p);
    // A tensor whose shape needs more bytes than the writer was given, where a writer puts it
    // (the first): the file ends inside its data.
    int64_t ne[2] = {64, 64};
    m = one_tensor("tensor.big", MINT_TYPE_F32, 2, ne, 64);
    expect_reject(&m,
                  fmt("file is truncated: it ends at byte %zu, inside the data of tensor "
                      "'tensor.big' (offset 0 at byte",
                      m.len),
                  "+ 16384 bytes: the data section holds 64 bytes", NULL);
    free(m.p);
}

Test(gguf_malformed, overlapping_tensors) {
    image m = base_image();
    mt_tinfo_pos p = mt_find_tinfo(m.p, m.len, "tensor.beta");
    mt_put_u64(m.p, p.offset, 96);
    expect_reject(&m,
                  "tensors 'tensor.alpha' (offset 0, 128 bytes) and 'tensor.beta' (offset 96, 36 "
                  "bytes) overlap in the data section",
                  NULL);
    mt_put_u64(m.p, p.offset, 0);
    expect_reject(&m, "(offset 0, 36 bytes)", "overlap", NULL);
    // Any order is fine as long as nothing overlaps: swap beta and gamma.
    mt_tinfo_pos g = mt_find_tinfo(m.p, m.len, "tensor.gamma");
    mt_put_u64(m.p, p.offset, 192);
    mt_put_u64(m.p, g.offset, 128);
    expect_ok(&m);
    free(m.p);
}

Test(gguf_malformed, data_section_past_the_end) {
    image m = base_image();
    mint_file *f;
    cr_assert_eq(mint_gguf_parse(m.p, m.len, "base", &f, NULL), MINT_OK);
    uint64_t header = f->header_size, data = f->data_offset;
    mint_file_close(f);
    cr_assert_gt(data, header); // the base file has padding to cut into
    m.len = (size_t)header + 1;
    expect_reject(&m,
                  fmt("file is truncated: it ends at byte %zu, before the data section, which "
                      "would start at byte %" PRIu64 " (header end %" PRIu64 " aligned to 32)",
                      m.len, data, header),
                  NULL);
    free(m.p);
}

// ---------------------------------------------------------------------------------------------
// Real header, cut and flipped

Test(gguf_malformed, stories260K_cut_at_every_byte) {
    size_t len;
    uint8_t *file = mt_read_file(mt_data_path("stories260K.gguf"), &len);
    cr_assert_not_null(file);
    for (size_t n = 0; n <= 14176; n++) {
        mint_err err = {0};
        mint_status st = parse_copy(file, n, &err);
        cr_assert_eq(st, MINT_E_FORMAT, "cut at %zu: status %d", n, st);
        cr_assert_gt(strlen(err.msg), 10, "cut at %zu: empty message", n);
        cr_assert_null(strchr(err.msg, '\n'));
        // Every cut is called what it is, with where the file ends.
        cr_assert(strstr(err.msg, fmt("file is truncated: it ends at byte %zu, ", n)),
                  "cut at %zu: %s", n, err.msg);
        if (n < 4) cr_assert(strstr(err.msg, "magic at byte 0 needs 4 bytes"), "%s", err.msg);
        if (n >= 14152 && n < 14176)
            cr_assert(strstr(err.msg, "before the data section, which would start at byte 14176"),
                      "%s", err.msg);
    }
    mint_err err = {0};
    cr_assert_eq(parse_copy(file, len, &err), MINT_OK, "%s", err.msg);
    free(file);
}

// The tensor of f whose data holds byte `at` of the file.
static const mint_tdesc *tensor_at(const mint_file *f, uint64_t at) {
    for (uint64_t i = 0; i < f->n_tensors; i++)
        if (f->t[i].file_offset <= at && at < f->t[i].file_offset + f->t[i].nbytes) return &f->t[i];
    cr_assert_fail("no tensor holds byte %" PRIu64, at);
    return NULL;
}

// Issue 30: the first 100 bytes of a real file said "tensor count 48 at byte 8 exceeds the limit of
// 21". A file cut in the header, the metadata, the tensor table, the padding or the data now says
// it is truncated, where it ends and inside what; counts no complete file could hold keep the
// limit message.
Test(gguf_malformed, stories260K_cut_in_each_section_says_truncated_and_where) {
    size_t len;
    uint8_t *file = mt_read_file(mt_data_path("stories260K.gguf"), &len);
    cr_assert_not_null(file);
    mint_file *f;
    mint_err err = {0};
    cr_assert_eq(mint_gguf_parse(file, len, "stories", &f, &err), MINT_OK, "%s", err.msg);
    const uint64_t n_kv = f->n_kv;
    cr_assert_eq(f->n_tensors, 48);
    image m = {file, len};

    // The header: cut inside the metadata count.
    m.len = 20;
    expect_reject(&m,
                  "bad.gguf: file is truncated: it ends at byte 20, inside the header (header: "
                  "metadata count at byte 16 needs 8 bytes, only 4 remain)",
                  NULL);
    // The metadata: byte 100 is inside the last record that starts before it.
    uint64_t k = 0;
    while (k + 1 < n_kv && f->kv[k + 1].file_offset < 100) k++;
    m.len = 100;
    expect_reject(&m,
                  fmt("bad.gguf: file is truncated: it ends at byte 100, inside the metadata at "
                      "entry %" PRIu64 " of the %" PRIu64 " the header claims (metadata",
                      k, n_kv),
                  NULL);
    // Inside the last metadata record.
    m.len = (size_t)f->kv[n_kv - 1].file_offset + 30;
    expect_reject(&m,
                  fmt("file is truncated: it ends at byte %zu, inside the metadata at entry "
                      "%" PRIu64 " of the %" PRIu64 " the header claims",
                      m.len, n_kv - 1, n_kv),
                  NULL);
    // Right after the metadata: the tensor table has not begun.
    mt_tinfo_pos first = mt_find_tinfo(file, len, f->t[0].name);
    m.len = first.at;
    expect_reject(&m,
                  fmt("file is truncated: it ends at byte %zu, inside the tensor table at tensor 0 "
                      "of the 48 the header claims (tensor 0 at byte %zu: 0 bytes remain, the "
                      "smallest tensor info takes 33)",
                      m.len, m.len),
                  NULL);
    // Inside one tensor info's type field.
    uint64_t ti = 0;
    while (strcmp(f->t[ti].name, "blk.2.attn_v.weight") != 0) ti++;
    mt_tinfo_pos tp = mt_find_tinfo(file, len, "blk.2.attn_v.weight");
    m.len = tp.type + 2;
    expect_reject(&m,
                  fmt("file is truncated: it ends at byte %zu, inside the tensor table at tensor "
                      "%" PRIu64 " of the 48 the header claims (tensor 'blk.2.attn_v.weight': "
                      "type at byte %zu needs 4 bytes, only 2 remain)",
                      m.len, ti, tp.type),
                  NULL);
    // In the padding before the data section.
    m.len = (size_t)f->header_size + 1;
    expect_reject(&m,
                  fmt("file is truncated: it ends at byte %zu, before the data section, which "
                      "would start at byte %" PRIu64,
                      m.len, f->data_offset),
                  NULL);
    // In the data: halfway, and one byte short of the end.
    const size_t cuts[] = {len / 2, len - 1};
    for (int i = 0; i < 2; i++) {
        const mint_tdesc *t = tensor_at(f, cuts[i]);
        m.len = cuts[i];
        expect_reject(&m,
                      fmt("file is truncated: it ends at byte %zu, inside the data of tensor '%s' "
                          "(offset %" PRIu64 " at byte",
                          m.len, t->name, t->file_offset - f->data_offset),
                      NULL);
    }

    // Complete files with counts they cannot hold: the limit, not truncation.
    m.len = len;
    const uint64_t rem = len - 24, kv_limit = rem / 14;
    mt_put_u64(file, 16, kv_limit + 1); // under the hard limit of 2^20, over what the bytes hold
    expect_reject(&m,
                  fmt("header: metadata count %" PRIu64 " at byte 16 exceeds the limit of %" PRIu64,
                      kv_limit + 1, kv_limit),
                  NULL);
    mt_put_u64(file, 16, n_kv);
    const uint64_t t_limit = (rem - n_kv * 14) / 33;
    mt_put_u64(file, 8, t_limit + 1);
    expect_reject(&m,
                  fmt("header: tensor count %" PRIu64 " at byte 8 exceeds the limit of %" PRIu64,
                      t_limit + 1, t_limit),
                  NULL);
    mt_put_u64(file, 8, (1u << 20) + 1); // over the hard limit
    expect_reject(&m, "header: tensor count 1048577 at byte 8 exceeds the limit", NULL);
    mt_put_u64(file, 8, 48);
    expect_ok(&m);
    mint_file_close(f);
    free(file);
}

Test(gguf_malformed, stories260K_random_byte_flips) {
    size_t len;
    uint8_t *file = mt_read_file(mt_data_path("stories260K.gguf"), &len);
    cr_assert_not_null(file);
    uint8_t *img = malloc(len); // exactly the file's size, for ASan
    memcpy(img, file, len);
    uint64_t seed = 0x67756675ull;
    int ok = 0, rejected = 0;
    for (int iter = 0; iter < 4000; iter++) {
        // Half the flips land in the fields after the vocabulary strings (counts, types, the
        // short records and the tensor infos), where they matter most.
        size_t pos[4];
        int k = 1 + (int)(mt_rand(&seed) % 4);
        for (int j = 0; j < k; j++) {
            uint64_t r = mt_rand(&seed);
            pos[j] = r & 1 ? (size_t)((r >> 8) % 14176) : 10600 + (size_t)((r >> 8) % 3576);
            uint8_t v = (uint8_t)(r >> 40);
            img[pos[j]] = (r >> 2) & 1 ? v : (uint8_t)(img[pos[j]] ^ (1u << (v & 7)));
        }
        mint_file *f = NULL;
        mint_err err = {0};
        mint_status st = mint_gguf_parse(img, len, "flip", &f, &err);
        if (st == MINT_OK) {
            ok++;
            for (uint64_t i = 0; i < f->n_tensors; i++) {
                const mint_tdesc *t = &f->t[i];
                cr_assert_geq((const uint8_t *)t->data, img + f->data_offset);
                cr_assert_leq(t->file_offset + t->nbytes, len);
            }
            mint_file_close(f);
        } else {
            rejected++;
            cr_assert_eq(st, MINT_E_FORMAT, "iteration %d: %s", iter, err.msg);
            cr_assert_gt(strlen(err.msg), 10);
            cr_assert_null(strchr(err.msg, '\n'));
        }
        for (int j = k - 1; j >= 0; j--) img[pos[j]] = file[pos[j]];
    }
    cr_assert_eq(memcmp(img, file, len), 0);
    cr_assert_gt(rejected, 500, "only %d of 4000 flips were rejected", rejected);
    cr_assert_gt(ok, 100, "only %d of 4000 flips were harmless", ok);
    free(img);
    free(file);
}
