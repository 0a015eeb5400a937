// test_safetensors.c - the safetensors writer round trip, and hostile headers: every one refused
// with a message naming the problem, truncations at every byte, no crash (CI runs this under
// ASan/UBSan).
#include "formats/safetensors.h"
#include "helpers/helpers.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Round trip

typedef struct fixture {
    float f32[6];     // [2, 3] in PyTorch order
    uint16_t f16[4];  // [4]
    uint16_t bf16[8]; // [2, 2, 2]
    int32_t i32[5];   // [5]
    double f64[2];    // [2]
    int8_t i8[16];    // [2, 2, 2, 2]
} fixture;

static void fill(fixture *x) {
    for (int i = 0; i < 6; i++) x->f32[i] = 0.5f * (float)i - 1.0f;
    for (int i = 0; i < 4; i++) x->f16[i] = (uint16_t)(0x3c00 + i);
    for (int i = 0; i < 8; i++) x->bf16[i] = (uint16_t)(0x3f80 + 3 * i);
    for (int i = 0; i < 5; i++) x->i32[i] = -7 * i;
    x->f64[0] = 1e300;
    x->f64[1] = -2.5;
    for (int i = 0; i < 16; i++) x->i8[i] = (int8_t)(i - 8);
}

static mint_st_writer *fixture_writer(const fixture *x) {
    mint_st_writer *w = mint_st_writer_create();
    mint_err err;
    cr_assert_eq(mint_st_writer_add_meta(w, "format", "pt"), MINT_OK);
    cr_assert_eq(mint_st_writer_add_meta(w, "note", "a/b \"quoted\""), MINT_OK);
    cr_assert_eq(mint_st_writer_add(w, "w.f32", MINT_TYPE_F32, 2, (int64_t[]){3, 2}, x->f32,
                                    sizeof x->f32, &err),
                 MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_st_writer_add(w, "v.f16", MINT_TYPE_F16, 1, (int64_t[]){4}, x->f16,
                                    sizeof x->f16, &err),
                 MINT_OK);
    cr_assert_eq(mint_st_writer_add(w, "b.bf16", MINT_TYPE_BF16, 3, (int64_t[]){2, 2, 2}, x->bf16,
                                    sizeof x->bf16, &err),
                 MINT_OK);
    cr_assert_eq(
        mint_st_writer_add(w, "ids", MINT_TYPE_I32, 1, (int64_t[]){5}, x->i32, sizeof x->i32, &err),
        MINT_OK);
    cr_assert_eq(
        mint_st_writer_add(w, "d", MINT_TYPE_F64, 1, (int64_t[]){2}, x->f64, sizeof x->f64, &err),
        MINT_OK);
    cr_assert_eq(mint_st_writer_add(w, "q/4d", MINT_TYPE_I8, 4, (int64_t[]){2, 2, 2, 2}, x->i8,
                                    sizeof x->i8, &err),
                 MINT_OK);
    return w;
}

static void check_tensor(const mint_file *f, const char *name, uint32_t type, uint32_t n_dims,
                         const int64_t *ne, const void *data, size_t nbytes) {
    mint_tensor_info t;
    cr_assert_eq(mint_file_find_tensor(f, name, &t), MINT_OK, "tensor %s missing", name);
    cr_assert_eq(t.type, type, "%s type", name);
    cr_assert_eq(t.n_dims, n_dims, "%s n_dims", name);
    for (uint32_t d = 0; d < 4; d++)
        cr_assert_eq(t.ne[d], d < n_dims ? ne[d] : 1, "%s ne[%u]", name, d);
    cr_assert_eq(t.nbytes, nbytes, "%s nbytes", name);
    cr_assert(memcmp(t.data, data, nbytes) == 0, "%s bytes", name);
    uint32_t elem = (uint32_t)mint_type_nbytes(type, 1);
    cr_assert_eq((uintptr_t)t.data % elem, 0, "%s is not aligned to its element size", name);
}

static void check_fixture(const mint_file *f, const fixture *x) {
    mint_file_info info;
    mint_file_get_info(f, &info);
    cr_assert_eq(info.format, MINT_FORMAT_SAFETENSORS);
    cr_assert_eq(info.n_tensors, 6);
    cr_assert_eq(info.data_offset % 8, 0, "the header is padded to 8 bytes");
    check_tensor(f, "w.f32", MINT_TYPE_F32, 2, (int64_t[]){3, 2}, x->f32, sizeof x->f32);
    check_tensor(f, "v.f16", MINT_TYPE_F16, 1, (int64_t[]){4}, x->f16, sizeof x->f16);
    check_tensor(f, "b.bf16", MINT_TYPE_BF16, 3, (int64_t[]){2, 2, 2}, x->bf16, sizeof x->bf16);
    check_tensor(f, "ids", MINT_TYPE_I32, 1, (int64_t[]){5}, x->i32, sizeof x->i32);
    check_tensor(f, "d", MINT_TYPE_F64, 1, (int64_t[]){2}, x->f64, sizeof x->f64);
    check_tensor(f, "q/4d", MINT_TYPE_I8, 4, (int64_t[]){2, 2, 2, 2}, x->i8, sizeof x->i8);
    const char *s;
    uint64_t len;
    mint_err err;
    cr_assert_eq(mint_file_get_str(f, "format", &s, &len, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(len, 2);
    cr_assert(memcmp(s, "pt", 2) == 0);
    cr_assert_eq(mint_file_get_str(f, "note", &s, &len, &err), MINT_OK);
    cr_assert_str_eq(s, "a/b \"quoted\"");
    // Reference order: 8-byte elements first, then by name.
    mint_tensor_info t0;
    mint_file_tensor(f, 0, &t0);
    cr_assert_str_eq(t0.name, "d");
    cr_assert_eq(t0.offset, 0);
}

Test(safetensors, writer_round_trip_in_memory) {
    fixture x;
    fill(&x);
    mint_st_writer *w = fixture_writer(&x);
    uint8_t *buf;
    size_t len;
    mint_err err;
    cr_assert_eq(mint_st_writer_write_mem(w, &buf, &len, &err), MINT_OK, "%s", err.msg);
    mint_file *f;
    cr_assert_eq(mint_safetensors_parse(buf, len, "mem", &f, &err), MINT_OK, "%s", err.msg);
    check_fixture(f, &x);
    mint_file_close(f);
    free(buf);
    mint_st_writer_free(w);
}

Test(safetensors, writer_round_trip_through_mint_file_open) {
    fixture x;
    fill(&x);
    mint_st_writer *w = fixture_writer(&x);
    mint_err err;
    const char *path = mt_path(mt_tmpdir(), "x.safetensors");
    cr_assert_eq(mint_st_writer_write_file(w, path, &err), MINT_OK, "%s", err.msg);
    mint_st_writer_free(w);
    mint_file *f;
    cr_assert_eq(mint_file_open(path, &f, &err), MINT_OK, "%s", err.msg);
    check_fixture(f, &x);
    mint_file_close(f);
}

Test(safetensors, writer_refuses_what_it_cannot_write) {
    mint_st_writer *w = mint_st_writer_create();
    mint_err err;
    uint8_t q[18] = {0};
    cr_assert_eq(mint_st_writer_add(w, "q", MINT_TYPE_Q4_0, 1, (int64_t[]){32}, q, 18, &err),
                 MINT_E_UNSUPPORTED);
    cr_assert(strstr(err.msg, "Q4_0"), "%s", err.msg);
    float v[2] = {0};
    cr_assert_eq(mint_st_writer_add(w, "a", MINT_TYPE_F32, 1, (int64_t[]){2}, v, 8, &err), MINT_OK);
    cr_assert_eq(mint_st_writer_add(w, "a", MINT_TYPE_F32, 1, (int64_t[]){2}, v, 8, &err),
                 MINT_E_ARG);
    cr_assert_eq(mint_st_writer_add(w, "b", MINT_TYPE_F32, 1, (int64_t[]){3}, v, 8, &err),
                 MINT_E_ARG);
    mint_st_writer_free(w);
}

// ---------------------------------------------------------------------------------------------
// Hostile headers

// A file image: u64 length, the header text (as given, no padding), data_len zero bytes.
static uint8_t *image(const char *header, size_t data_len, size_t *len) {
    size_t n = strlen(header);
    *len = 8 + n + data_len;
    uint8_t *b = calloc(1, *len);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)n >> (8 * i));
    memcpy(b + 8, header, n);
    return b;
}

// Parses header + data_len bytes from an exactly-sized buffer and expects `code` with a message
// containing `needle`.
static void expect(const char *header, size_t data_len, mint_status code, const char *needle) {
    size_t len;
    uint8_t *b = image(header, data_len, &len);
    mint_file *f = NULL;
    mint_err err = {0};
    mint_status st = mint_safetensors_parse(b, len, "hostile", &f, &err);
    cr_assert_eq(st, code, "header %s: status %d (%s), expected %d", header, st, err.msg, code);
    if (code != MINT_OK) {
        cr_assert_null(f);
        cr_assert(strstr(err.msg, needle), "header %s: message '%s' lacks '%s'", header, err.msg,
                  needle);
    }
    mint_file_close(f);
    free(b);
}

#define T1_BODY "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}"
#define T1      "{" T1_BODY

Test(safetensors, valid_minimal_headers) {
    expect(T1 "}", 8, MINT_OK, "");
    expect("{}", 0, MINT_OK, "");
    expect("  {\"__metadata__\":{}} \n ", 0, MINT_OK, "");
    // An empty tensor (a zero dimension) and a 0-d scalar are legal.
    expect("{\"e\":{\"dtype\":\"F16\",\"shape\":[0,5],\"data_offsets\":[0,0]},"
           "\"s\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}",
           4, MINT_OK, "");
    // Unknown members are ignored, as serde does; gaps between tensors are tolerated.
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8],\"x\":1}}", 8, MINT_OK,
           "");
}

Test(safetensors, header_length_problems) {
    uint8_t small[5] = {1, 0, 0, 0, 0};
    mint_file *f;
    mint_err err;
    cr_assert_eq(mint_safetensors_parse(small, sizeof small, "tiny", &f, &err), MINT_E_FORMAT);
    cr_assert(strstr(err.msg, "fewer than the 8-byte"), "%s", err.msg);

    size_t len;
    uint8_t *b = image(T1 "}", 8, &len);
    b[0] = 0xff; // header length 255 > bytes that follow
    cr_assert_eq(mint_safetensors_parse(b, len, "past", &f, &err), MINT_E_FORMAT);
    cr_assert(strstr(err.msg, "past the end of the file"), "%s", err.msg);
    uint64_t big = 100000001;
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(big >> (8 * i));
    cr_assert_eq(mint_safetensors_parse(b, len, "big", &f, &err), MINT_E_FORMAT);
    cr_assert(strstr(err.msg, "exceeds the limit of 100000000"), "%s", err.msg);
    memset(b, 0xff, 8);
    cr_assert_eq(mint_safetensors_parse(b, len, "huge", &f, &err), MINT_E_FORMAT);
    free(b);
}

Test(safetensors, json_problems) {
    expect("{\"a\":", 0, MINT_E_FORMAT, "JSON ends early");
    expect("{\"a\":1,}", 0, MINT_E_FORMAT, "bad JSON");
    // json-c's strict mode still takes these; the raw scan refuses them.
    expect("{'a':1}", 0, MINT_E_FORMAT, "unexpected character");
    expect("{\"a\":NaN}", 0, MINT_E_FORMAT, "not a JSON number or literal");
    expect("{\"a\":1.}", 0, MINT_E_FORMAT, "not a JSON number");
    expect("{\"a\n\":1}", 0, MINT_E_FORMAT, "control character 0x0a");
    expect("[1,2]", 0, MINT_E_FORMAT, "a JSON array, expected an object");
    expect("\"x\"", 0, MINT_E_FORMAT, "expected an object");
    expect("{} x", 0, MINT_E_FORMAT, "bad JSON at byte 11");
    expect("{\"a\xff\":1}", 0, MINT_E_FORMAT, "bad JSON");
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}\0", 4, MINT_OK, "");
    size_t len;
    uint8_t *b = image("{\"a\":1}", 0, &len);
    b[11] = '\0'; // a NUL inside the header
    mint_file *f;
    mint_err err;
    cr_assert_eq(mint_safetensors_parse(b, len, "nul", &f, &err), MINT_E_FORMAT);
    cr_assert(strstr(err.msg, "NUL byte at byte 11"), "%s", err.msg);
    free(b);
    expect("{\"a\\u0000b\":1}", 0, MINT_E_FORMAT, "\\u0000");
    expect("{\"a\":\"x\",\"a\":\"y\"}", 0, MINT_E_FORMAT, "duplicate key \"a\"");
}

Test(safetensors, tensor_entry_problems) {
    expect("{\"a\":[]}", 0, MINT_E_FORMAT, "tensor 'a': entry is a array");
    expect("{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, MINT_E_FORMAT,
           "\"dtype\" is missing");
    expect("{\"a\":{\"dtype\":\"F17\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, MINT_E_FORMAT,
           "dtype \"F17\" is not a safetensors dtype");
    expect("{\"a\":{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, MINT_E_FORMAT,
           "not a safetensors dtype");
    expect("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1, MINT_E_UNSUPPORTED,
           "dtype U8 has no ggml type");
    expect("{\"a\":{\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
           MINT_E_UNSUPPORTED, "BOOL");
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":1,\"data_offsets\":[0,4]}}", 4, MINT_E_FORMAT,
           "\"shape\" is int, expected an array");
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, MINT_E_FORMAT,
           "\"data_offsets\" is missing");
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, MINT_E_FORMAT,
           "shape[0] = -2 is negative");
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", 8, MINT_E_FORMAT,
           "shape[0] is a double");
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1],\"data_offsets\":[0,4]}}", 4,
           MINT_E_UNSUPPORTED, "5 dimensions");
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4],\"data_offsets\":[0,4]}}",
           4, MINT_E_FORMAT, "overflows");
    expect("{\"a\":{\"dtype\":\"F64\",\"shape\":[2305843009213693952],\"data_offsets\":[0,4]}}", 4,
           MINT_E_FORMAT, "overflow the byte size");
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[0,9223372036854775807,2],"
           "\"data_offsets\":[0,0]}}",
           0, MINT_E_FORMAT, "overflows");
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 12, MINT_E_FORMAT,
           "hold 8 bytes, the dtype and shape need 12");
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, MINT_E_FORMAT,
           "end before begin");
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8, MINT_E_FORMAT,
           "expected [begin, end]");
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,-8]}}", 8, MINT_E_FORMAT,
           "not a non-negative integer");
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 8, MINT_E_FORMAT,
           "past the end of the 8-byte data buffer");
    expect("{\"\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, MINT_E_FORMAT,
           "name length 0");
    expect("{\"__metadata__\":{\"k\":1}}", 0, MINT_E_FORMAT, "expected a string");
    expect("{\"__metadata__\":[]}", 0, MINT_E_FORMAT, "\"__metadata__\" is a array");
}

Test(safetensors, overlaps_and_duplicates) {
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
           "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
           12, MINT_E_FORMAT, "tensor 'b' [4, 12) overlaps tensor 'a' [0, 8)");
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
           "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
           8, MINT_E_FORMAT, "overlaps");
    // An empty tensor inside another tensor's bytes is an overlap too (the reference demands an
    // exact tiling).
    expect("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
           "\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]}}",
           8, MINT_E_FORMAT, "overlaps");
    expect(T1 "," T1_BODY "}", 8, MINT_E_FORMAT, "duplicate key \"a\"");
    // The same name spelled with an escape is the same key.
    expect(T1 ",\"\\u0061\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 16,
           MINT_E_FORMAT, "duplicate key \"a\"");
    expect("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
           MINT_E_FORMAT, "duplicate key \"dtype\"");
}

// A tensor placed at an odd file offset is copied into aligned memory with the same bytes.
Test(safetensors, unaligned_tensor_is_copied_aligned) {
    const char *h = "{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[1,13]}} ";
    size_t len;
    uint8_t *b = image(h, 13, &len);
    size_t data = 8 + strlen(h);
    float want[3] = {1.5f, -2.0f, 3.25f};
    memcpy(b + data + 1, want, sizeof want);
    mint_file *f;
    mint_err err;
    cr_assert_eq(mint_safetensors_parse(b, len, "unaligned", &f, &err), MINT_OK, "%s", err.msg);
    mint_tensor_info t;
    cr_assert_eq(mint_file_find_tensor(f, "x", &t), MINT_OK);
    cr_assert_eq((uintptr_t)t.data % 4, 0);
    cr_assert(memcmp(t.data, want, sizeof want) == 0);
    cr_assert_eq(t.file_offset, data + 1);
    mint_file_close(f);
    free(b);
}

// Every proper prefix of a small valid file fails with a message; every single-byte change of
// its header either parses or fails with a message. Buffers are exactly sized for ASan.
Test(safetensors, truncation_and_corruption_of_every_header_byte) {
    fixture x;
    fill(&x);
    mint_st_writer *w = fixture_writer(&x);
    uint8_t *buf;
    size_t len;
    mint_err err;
    cr_assert_eq(mint_st_writer_write_mem(w, &buf, &len, &err), MINT_OK);
    mint_st_writer_free(w);
    for (size_t k = 0; k < len; k++) {
        uint8_t *cut = malloc(k ? k : 1);
        memcpy(cut, buf, k);
        mint_file *f = NULL;
        err.msg[0] = '\0';
        mint_status st = mint_safetensors_parse(cut, k, "cut", &f, &err);
        cr_assert_eq(st, MINT_E_FORMAT, "prefix of %zu bytes: status %d", k, st);
        cr_assert(err.msg[0]);
        free(cut);
    }
    uint64_t n = 0;
    for (int i = 0; i < 8; i++) n |= (uint64_t)buf[i] << (8 * i);
    static const uint8_t repl[] = {0x00, '"', '{', '}',  '[',  ']',  ',',
                                   ':',  '-', '9', '\\', 0xc3, 0xff, ' '};
    uint8_t *work = malloc(len);
    for (size_t i = 0; i < 8 + n; i++) {
        for (size_t r = 0; r < sizeof repl; r++) {
            memcpy(work, buf, len);
            if (work[i] == repl[r]) continue;
            work[i] = repl[r];
            mint_file *f = NULL;
            err.msg[0] = '\0';
            if (mint_safetensors_parse(work, len, "flip", &f, &err) == MINT_OK)
                mint_file_close(f);
            else
                cr_assert(err.msg[0], "byte %zu -> %02x: failure without a message", i, repl[r]);
        }
    }
    free(work);
    free(buf);
}

Test(safetensors, sniffing) {
    uint8_t st[9] = {2, 0, 0, 0, 0, 0, 0, 0, '{'};
    cr_assert(mint_safetensors_sniff(st, 9));
    cr_assert(!mint_safetensors_sniff(st, 8));
    uint8_t gguf[9] = {'G', 'G', 'U', 'F', 3, 0, 0, 0, '{'};
    cr_assert(!mint_safetensors_sniff(gguf, 9));
    // A non-GGUF, non-safetensors file keeps the GGUF reader's message.
    const char *path = mt_path(mt_tmpdir(), "junk.bin");
    cr_assert(mt_write_file(path, "not a model at all", 18));
    mint_file *f;
    mint_err err;
    cr_assert_eq(mint_file_open(path, &f, &err), MINT_E_FORMAT);
    cr_assert(strstr(err.msg, "\"GGUF\""), "%s", err.msg);
}

// Found by tests/fuzz/fuzz_safetensors: tensor names and metadata keys are quoted in messages,
// and JSON escapes can put control characters in them; a message must still be one line.
Test(safetensors, messages_stay_on_one_line) {
    static const char *const headers[] = {
        "{\"a\\nb\":{\"dtype\":\"X\",\"shape\":[],\"data_offsets\":[0,0]}}",
        "{\"__metadata__\":{\"k\\r\\n\":1}}",
        "{\"\\u001b[2J\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,8]}}",
        "{\"a\\n\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
        "\"b\\t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[2,6]}}",
    };
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
        size_t len;
        uint8_t *b = image(headers[i], 8, &len);
        mint_file *f = NULL;
        mint_err err = {0};
        cr_assert_neq(mint_safetensors_parse(b, len, "hostile", &f, &err), MINT_OK, "%s",
                      headers[i]);
        for (const char *p = err.msg; *p; p++)
            cr_assert((unsigned char)*p >= 0x20 && *p != 0x7f,
                      "header %zu: control byte 0x%02x in message '%s'", i, (unsigned char)*p,
                      err.msg);
        free(b);
    }
}
