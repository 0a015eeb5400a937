// test_gguf_write.c - the GGUF writer: round trips of every metadata value type and several
// tensor types through memory and a file at several alignments, and copies of real files that
// must come out byte for byte identical.
#include "formats/gguf.h"
#include "helpers/gguf_fixtures.h"
#include "helpers/helpers.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static mint_file *open_data(const char *rel) {
    mint_err err = {0};
    mint_file *f = NULL;
    mint_status st = mint_file_open(mt_data_path(rel), &f, &err);
    cr_assert_eq(st, MINT_OK, "%s: %s", rel, err.msg);
    return f;
}

// ---------------------------------------------------------------------------------------------
// Writer round trips

static uint64_t align_up(uint64_t x, uint64_t a) {
    return (x + a - 1) / a * a;
}

static void fill_random(uint8_t *p, size_t n, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(mt_rand(&s) >> 56);
}

// The tensors of the round-trip file: several types with the byte sizes ggml gives them.
static const struct {
    const char *name;
    uint32_t type;
    uint32_t n_dims;
    int64_t ne[4];
    uint64_t nbytes;
} rt_tensors[] = {
    {"t.f32", MINT_TYPE_F32, 2, {16, 3, 1, 1}, 192},      // 48 x 4
    {"t.f16", MINT_TYPE_F16, 1, {10, 1, 1, 1}, 20},       // 10 x 2, not a multiple of 32
    {"t.q4_0", MINT_TYPE_Q4_0, 2, {64, 2, 1, 1}, 72},     // 4 blocks x 18
    {"t.q8_0", MINT_TYPE_Q8_0, 3, {32, 3, 1, 1}, 102},    // 3 blocks x 34
    {"t.q4_k", MINT_TYPE_Q4_K, 4, {256, 2, 1, 1}, 288},   // 2 super-blocks x 144
    {"t.bf16", MINT_TYPE_BF16, 2, {8, 1, 1, 1}, 16},      // 8 x 2
    {"t.zeros", MINT_TYPE_F32, 1, {5, 1, 1, 1}, 20},      // data NULL: written as zeros
    {"t.filled", MINT_TYPE_Q6_K, 1, {256, 1, 1, 1}, 210}, // produced by a fill callback
};
#define RT_N (sizeof rt_tensors / sizeof *rt_tensors)

static mint_status fill_pattern(void *user, uint64_t index, void *dst, uint64_t nbytes,
                                mint_err *err) {
    cr_assert_eq(*(int *)user, 42);
    fill_random(dst, (size_t)nbytes, 1000 + index);
    return MINT_OK;
}

typedef struct rt_file {
    mint_gguf_writer *w;
    uint8_t *data[RT_N]; // tensor bytes handed to the writer
    int user;            // fill callback context
} rt_file;

static const uint8_t rt_u8[] = {0, 1, 255};
static const int8_t rt_i8[] = {-128, 0, 127};
static const uint16_t rt_u16[] = {0, 1, 65535};
static const int16_t rt_i16[] = {-32768, 0, 32767};
static const uint32_t rt_u32[] = {0, 1, 4294967295u};
static const int32_t rt_i32[] = {INT32_MIN, 0, INT32_MAX};
static const float rt_f32[] = {-0.0f, 1.5f, 3.4028235e38f};
static const uint8_t rt_bool[] = {1, 0, 1};
static const uint64_t rt_u64[] = {0, 1, UINT64_MAX};
static const int64_t rt_i64[] = {INT64_MIN, 0, INT64_MAX};
static const double rt_f64[] = {-1.5e300, 0.1, 4.9e-324};
static const mint_str rt_strs[] = {{"alpha", 5}, {"", 0}, {"g\xc3\xa9", 3}, {"a\nb", 3}};

static void rt_build(rt_file *r, uint32_t alignment) {
    r->w = mint_gguf_writer_create();
    mint_gguf_writer *w = r->w;
    cr_assert_not_null(w);
    cr_assert_eq(mint_gguf_add_str(w, "general.architecture", "llama"), MINT_OK);
    if (alignment) cr_assert_eq(mint_gguf_add_u32(w, "general.alignment", alignment), MINT_OK);
    uint8_t u8 = 200;
    int8_t i8 = -100;
    uint16_t u16 = 60000;
    int16_t i16 = -30000;
    int32_t i32 = -2000000000;
    uint64_t u64 = (1ull << 63) + 5;
    int64_t i64 = -(1ll << 62) - 3;
    double f64 = -1.5e300;
    cr_assert_eq(mint_gguf_add_scalar(w, "s.u8", MINT_VAL_U8, &u8), MINT_OK);
    cr_assert_eq(mint_gguf_add_scalar(w, "s.i8", MINT_VAL_I8, &i8), MINT_OK);
    cr_assert_eq(mint_gguf_add_scalar(w, "s.u16", MINT_VAL_U16, &u16), MINT_OK);
    cr_assert_eq(mint_gguf_add_scalar(w, "s.i16", MINT_VAL_I16, &i16), MINT_OK);
    cr_assert_eq(mint_gguf_add_u32(w, "s.u32", 4000000000u), MINT_OK);
    cr_assert_eq(mint_gguf_add_scalar(w, "s.i32", MINT_VAL_I32, &i32), MINT_OK);
    cr_assert_eq(mint_gguf_add_f32(w, "s.f32", 3.25f), MINT_OK);
    cr_assert_eq(mint_gguf_add_bool(w, "s.bool", true), MINT_OK);
    cr_assert_eq(mint_gguf_add_str(w, "s.str", "h\xc3\xa9llo \"x\"\n"), MINT_OK);
    cr_assert_eq(mint_gguf_add_scalar(w, "s.u64", MINT_VAL_U64, &u64), MINT_OK);
    cr_assert_eq(mint_gguf_add_scalar(w, "s.i64", MINT_VAL_I64, &i64), MINT_OK);
    cr_assert_eq(mint_gguf_add_scalar(w, "s.f64", MINT_VAL_F64, &f64), MINT_OK);
    cr_assert_eq(mint_gguf_add_str(w, "s.empty", ""), MINT_OK);
    cr_assert_eq(mint_gguf_add_arr(w, "a.u8", MINT_VAL_U8, rt_u8, 3), MINT_OK);
    cr_assert_eq(mint_gguf_add_arr(w, "a.i8", MINT_VAL_I8, rt_i8, 3), MINT_OK);
    cr_assert_eq(mint_gguf_add_arr(w, "a.u16", MINT_VAL_U16, rt_u16, 3), MINT_OK);
    cr_assert_eq(mint_gguf_add_arr(w, "a.i16", MINT_VAL_I16, rt_i16, 3), MINT_OK);
    cr_assert_eq(mint_gguf_add_arr(w, "a.u32", MINT_VAL_U32, rt_u32, 3), MINT_OK);
    cr_assert_eq(mint_gguf_add_arr(w, "a.i32", MINT_VAL_I32, rt_i32, 3), MINT_OK);
    cr_assert_eq(mint_gguf_add_arr(w, "a.f32", MINT_VAL_F32, rt_f32, 3), MINT_OK);
    cr_assert_eq(mint_gguf_add_arr(w, "a.bool", MINT_VAL_BOOL, rt_bool, 3), MINT_OK);
    cr_assert_eq(mint_gguf_add_arr(w, "a.u64", MINT_VAL_U64, rt_u64, 3), MINT_OK);
    cr_assert_eq(mint_gguf_add_arr(w, "a.i64", MINT_VAL_I64, rt_i64, 3), MINT_OK);
    cr_assert_eq(mint_gguf_add_arr(w, "a.f64", MINT_VAL_F64, rt_f64, 3), MINT_OK);
    cr_assert_eq(mint_gguf_add_arr_str(w, "a.str", rt_strs, 4), MINT_OK);
    cr_assert_eq(mint_gguf_add_arr(w, "a.empty", MINT_VAL_U32, NULL, 0), MINT_OK);
    cr_assert_eq(mint_gguf_add_arr_str(w, "a.empty_str", NULL, 0), MINT_OK);
    r->user = 42;
    for (size_t i = 0; i < RT_N; i++) {
        cr_assert_eq(mint_type_nbytes(rt_tensors[i].type,
                                      (uint64_t)(rt_tensors[i].ne[0] * rt_tensors[i].ne[1] *
                                                 rt_tensors[i].ne[2] * rt_tensors[i].ne[3])),
                     rt_tensors[i].nbytes, "%s", rt_tensors[i].name);
        r->data[i] = NULL;
        if (strcmp(rt_tensors[i].name, "t.filled") == 0) {
            cr_assert_eq(mint_gguf_add_tensor_fill(w, rt_tensors[i].name, rt_tensors[i].type,
                                                   rt_tensors[i].n_dims, rt_tensors[i].ne,
                                                   rt_tensors[i].nbytes, fill_pattern, &r->user,
                                                   (uint64_t)i),
                         MINT_OK);
            continue;
        }
        if (strcmp(rt_tensors[i].name, "t.zeros") != 0) {
            r->data[i] = malloc(rt_tensors[i].nbytes);
            fill_random(r->data[i], rt_tensors[i].nbytes, i);
        }
        cr_assert_eq(mint_gguf_add_tensor(w, rt_tensors[i].name, rt_tensors[i].type,
                                          rt_tensors[i].n_dims, rt_tensors[i].ne, r->data[i],
                                          rt_tensors[i].nbytes),
                     MINT_OK);
    }
}

static void rt_free(rt_file *r) {
    for (size_t i = 0; i < RT_N; i++) free(r->data[i]);
    mint_gguf_writer_free(r->w);
}

static void expect_arr(const mint_file *f, const char *key, mint_value_type et, const void *want,
                       size_t es) {
    mint_value_type got_et;
    uint64_t n;
    const void *data;
    cr_assert_eq(mint_file_get_arr(f, key, &got_et, &n, &data, NULL), MINT_OK, "%s", key);
    cr_assert_eq(got_et, et, "%s", key);
    cr_assert_eq(n, 3, "%s", key);
    cr_assert_eq(((uintptr_t)data) % es, 0, "%s is not aligned", key);
    cr_assert_eq(memcmp(data, want, 3 * es), 0, "%s", key);
}

// Reads back what rt_build wrote, from an image of `len` bytes.
static void rt_check(const rt_file *r, const mint_file *f, const uint8_t *img, size_t len,
                     uint32_t alignment) {
    uint32_t a = alignment ? alignment : 32;
    mint_file_info info;
    mint_file_get_info(f, &info);
    cr_assert_eq(info.version, 3);
    cr_assert_eq(info.alignment, a);
    cr_assert_eq(info.n_kv, alignment ? 29 : 28);
    cr_assert_eq(info.n_tensors, RT_N);
    cr_assert_eq(info.data_offset % a, 0);
    cr_assert_eq(info.data_offset, align_up(info.header_size, a));
    for (uint64_t i = info.header_size; i < info.data_offset; i++) cr_assert_eq(img[i], 0);

    const struct {
        const char *key;
        mint_value_type type;
    } types[] = {{"s.u8", MINT_VAL_U8},        {"s.i8", MINT_VAL_I8},
                 {"s.u16", MINT_VAL_U16},      {"s.i16", MINT_VAL_I16},
                 {"s.u32", MINT_VAL_U32},      {"s.i32", MINT_VAL_I32},
                 {"s.f32", MINT_VAL_F32},      {"s.bool", MINT_VAL_BOOL},
                 {"s.str", MINT_VAL_STRING},   {"s.u64", MINT_VAL_U64},
                 {"s.i64", MINT_VAL_I64},      {"s.f64", MINT_VAL_F64},
                 {"s.empty", MINT_VAL_STRING}, {"a.u8", MINT_VAL_ARRAY},
                 {"a.empty", MINT_VAL_ARRAY},  {"a.empty_str", MINT_VAL_ARRAY},
                 {"a.str", MINT_VAL_ARRAY},    {"general.architecture", MINT_VAL_STRING}};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        const mint_kv *kv = mint_file_find_kv(f, types[i].key);
        cr_assert_not_null(kv, "%s", types[i].key);
        cr_assert_eq(kv->type, types[i].type, "%s", types[i].key);
    }
    cr_assert_eq(mint_file_find_kv(f, "s.u8")->v.u, 200);
    cr_assert_eq(mint_file_find_kv(f, "s.i8")->v.i, -100);
    cr_assert_eq(mint_file_find_kv(f, "s.u16")->v.u, 60000);
    cr_assert_eq(mint_file_find_kv(f, "s.i16")->v.i, -30000);
    cr_assert_eq(mint_file_find_kv(f, "s.i32")->v.i, -2000000000);
    cr_assert_eq(mint_file_find_kv(f, "s.f64")->v.f, -1.5e300);
    uint32_t u32;
    int32_t i32;
    uint64_t u64;
    float f32;
    bool b;
    const char *s;
    uint64_t slen;
    cr_assert_eq(mint_file_get_u32(f, "s.u32", &u32, NULL), MINT_OK);
    cr_assert_eq(u32, 4000000000u);
    cr_assert_eq(mint_file_get_i32(f, "s.i16", &i32, NULL), MINT_OK);
    cr_assert_eq(i32, -30000);
    cr_assert_eq(mint_file_get_u64(f, "s.u64", &u64, NULL), MINT_OK);
    cr_assert_eq(u64, (1ull << 63) + 5);
    cr_assert_eq(mint_file_get_u64(f, "s.i64", &u64, NULL), MINT_E_TYPE); // negative
    cr_assert_eq(mint_file_find_kv(f, "s.i64")->v.i, -(1ll << 62) - 3);
    cr_assert_eq(mint_file_get_f32(f, "s.f32", &f32, NULL), MINT_OK);
    cr_assert_eq(f32, 3.25f);
    cr_assert_eq(mint_file_get_bool(f, "s.bool", &b, NULL), MINT_OK);
    cr_assert(b);
    cr_assert_eq(mint_file_get_str(f, "s.str", &s, &slen, NULL), MINT_OK);
    cr_assert_eq(slen, 11);
    cr_assert_eq(memcmp(s, "h\xc3\xa9llo \"x\"\n", 11), 0);
    cr_assert_eq(mint_file_get_str(f, "s.empty", &s, &slen, NULL), MINT_OK);
    cr_assert_eq(slen, 0);
    cr_assert_str_eq(s, "");

    expect_arr(f, "a.u8", MINT_VAL_U8, rt_u8, 1);
    expect_arr(f, "a.i8", MINT_VAL_I8, rt_i8, 1);
    expect_arr(f, "a.u16", MINT_VAL_U16, rt_u16, 2);
    expect_arr(f, "a.i16", MINT_VAL_I16, rt_i16, 2);
    expect_arr(f, "a.u32", MINT_VAL_U32, rt_u32, 4);
    expect_arr(f, "a.i32", MINT_VAL_I32, rt_i32, 4);
    expect_arr(f, "a.f32", MINT_VAL_F32, rt_f32, 4);
    expect_arr(f, "a.bool", MINT_VAL_BOOL, rt_bool, 1);
    expect_arr(f, "a.u64", MINT_VAL_U64, rt_u64, 8);
    expect_arr(f, "a.i64", MINT_VAL_I64, rt_i64, 8);
    expect_arr(f, "a.f64", MINT_VAL_F64, rt_f64, 8);
    mint_value_type et;
    uint64_t n;
    cr_assert_eq(mint_file_get_arr(f, "a.empty", &et, &n, NULL, NULL), MINT_OK);
    cr_assert_eq(et, MINT_VAL_U32);
    cr_assert_eq(n, 0);
    cr_assert_eq(mint_file_get_arr(f, "a.empty_str", &et, &n, NULL, NULL), MINT_OK);
    cr_assert_eq(et, MINT_VAL_STRING);
    cr_assert_eq(n, 0);
    cr_assert_eq(mint_file_get_arr(f, "a.str", &et, &n, NULL, NULL), MINT_OK);
    cr_assert_eq(n, 4);
    for (uint64_t i = 0; i < 4; i++) {
        cr_assert_eq(mint_file_get_arr_str(f, "a.str", i, &s, &slen, NULL), MINT_OK);
        cr_assert_eq(slen, rt_strs[i].len);
        cr_assert_eq(memcmp(s, rt_strs[i].p, slen), 0);
    }

    uint64_t off = 0;
    for (uint64_t i = 0; i < RT_N; i++) {
        mint_tensor_info t;
        cr_assert_eq(mint_file_tensor(f, i, &t), MINT_OK);
        cr_assert_str_eq(t.name, rt_tensors[i].name);
        cr_assert_eq(t.type, rt_tensors[i].type);
        cr_assert_eq(t.n_dims, rt_tensors[i].n_dims);
        for (int d = 0; d < 4; d++) cr_assert_eq(t.ne[d], rt_tensors[i].ne[d]);
        cr_assert_eq(t.nbytes, rt_tensors[i].nbytes);
        cr_assert_eq(t.offset, off, "%s at %llu, expected %llu", t.name,
                     (unsigned long long)t.offset, (unsigned long long)off);
        cr_assert_eq(t.offset % a, 0);
        cr_assert_eq(t.file_offset, info.data_offset + t.offset);
        cr_assert_eq((const uint8_t *)t.data, img + t.file_offset);
        if (r->data[i]) {
            cr_assert_eq(memcmp(t.data, r->data[i], t.nbytes), 0, "%s bytes", t.name);
        } else {
            uint8_t *want = calloc(1, t.nbytes);
            if (strcmp(t.name, "t.filled") == 0) fill_random(want, t.nbytes, 1000 + i);
            cr_assert_eq(memcmp(t.data, want, t.nbytes), 0, "%s bytes", t.name);
            free(want);
        }
        // Padding after each tensor is zeros, up to the next aligned offset.
        for (uint64_t p = t.offset + t.nbytes; p < align_up(t.offset + t.nbytes, a); p++)
            cr_assert_eq(img[info.data_offset + p], 0);
        off = align_up(off + t.nbytes, a);
    }
    mint_tensor_info last;
    mint_file_tensor(f, RT_N - 1, &last);
    cr_assert_eq(info.data_size, last.offset + last.nbytes);
    cr_assert_eq(len, info.data_offset + off); // the last tensor is padded too
}

static void round_trip(uint32_t alignment) {
    rt_file r;
    rt_build(&r, alignment);
    uint8_t *buf;
    size_t len;
    mint_err err = {0};
    cr_assert_eq(mint_gguf_writer_write_mem(r.w, &buf, &len, &err), MINT_OK, "%s", err.msg);
    mint_file *f;
    cr_assert_eq(mint_gguf_parse(buf, len, "mem", &f, &err), MINT_OK, "%s", err.msg);
    rt_check(&r, f, buf, len, alignment);
    mint_file_close(f);

    // The same through a file: identical bytes, and identical when read back from the map.
    const char *path = mt_path(mt_tmpdir(), "rt.gguf");
    cr_assert_eq(mint_gguf_writer_write_file(r.w, path, &err), MINT_OK, "%s", err.msg);
    size_t flen;
    uint8_t *fbytes = mt_read_file(path, &flen);
    cr_assert_eq(flen, len);
    cr_assert_eq(memcmp(fbytes, buf, len), 0);
    cr_assert_eq(mint_file_open(path, &f, &err), MINT_OK, "%s", err.msg);
    mint_tensor_info t0;
    mint_file_tensor(f, 0, &t0);
    rt_check(&r, f, (const uint8_t *)t0.data - t0.file_offset, flen, alignment);
    mint_file_close(f);
    free(fbytes);
    free(buf);
    rt_free(&r);
}

Test(gguf_writer, round_trip_every_type) {
    round_trip(0);
}

Test(gguf_writer, round_trip_alignment_64) {
    round_trip(64);
    // Offsets with 64: 0, 192, 256, 384, 512, 832 (800 rounded up), ...
    rt_file r;
    rt_build(&r, 64);
    uint8_t *buf;
    size_t len;
    cr_assert_eq(mint_gguf_writer_write_mem(r.w, &buf, &len, NULL), MINT_OK);
    mint_file *f;
    cr_assert_eq(mint_gguf_parse(buf, len, "mem", &f, NULL), MINT_OK);
    const uint64_t want[] = {0, 192, 256, 384, 512, 832, 896, 960};
    for (uint64_t i = 0; i < RT_N; i++)
        cr_assert_eq(f->t[i].offset, want[i], "tensor %llu", (unsigned long long)i);
    mint_file_close(f);
    free(buf);
    rt_free(&r);
}

Test(gguf_writer, round_trip_alignment_1) {
    round_trip(1);
}

// Padding longer than the writer's 4096-byte block of zeros (it once read past that block).
Test(gguf_writer, round_trip_alignment_8192) {
    round_trip(8192);
}

// Rewriting every metadata entry with add_kv_from and every tensor with its bytes reproduces
// llama.cpp's files byte for byte.
static void copy_file(const char *rel) {
    const char *path = mt_data_path(rel);
    mint_file *f = open_data(rel);
    mint_gguf_writer *w = mint_gguf_writer_create();
    for (uint64_t i = 0; i < f->n_kv; i++) cr_assert_eq(mint_gguf_add_kv_from(w, f, i), MINT_OK);
    cr_assert_eq(mint_gguf_add_kv_from(w, f, f->n_kv), MINT_E_ARG);
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        const mint_tdesc *t = &f->t[i];
        cr_assert_eq(
            mint_gguf_add_tensor(w, t->name, t->type, t->n_dims, t->ne, t->data, t->nbytes),
            MINT_OK);
    }
    uint8_t *buf;
    size_t len;
    mint_err err = {0};
    cr_assert_eq(mint_gguf_writer_write_mem(w, &buf, &len, &err), MINT_OK, "%s", err.msg);
    size_t olen;
    uint8_t *orig = mt_read_file(path, &olen);
    cr_assert_eq(len, olen, "%s: wrote %zu bytes, the original has %zu", rel, len, olen);
    size_t first = 0;
    while (first < len && buf[first] == orig[first]) first++;
    cr_assert_eq(first, len, "%s: first difference at byte %zu", rel, first);
    free(orig);
    free(buf);
    mint_gguf_writer_free(w);
    mint_file_close(f);
}

Test(gguf_writer, copy_stories260K_byte_for_byte) {
    copy_file("stories260K.gguf");
}

Test(gguf_writer, copy_vocab_byte_for_byte) {
    copy_file("ggml-vocab-llama-spm.gguf");
}

Test(gguf_writer, copy_tiny_random_byte_for_byte) {
    copy_file("llama-2-tiny-random.gguf");
}

// A type ggml knows but mint cannot compute with is accepted by the reader and marked.
Test(gguf_writer, uncomputable_type_is_listed) {
    mint_gguf_writer *w = mint_gguf_writer_create();
    int64_t ne[2] = {256, 2};
    cr_assert_eq(mint_gguf_add_tensor(w, "w.q8k", MINT_TYPE_Q8_K, 2, ne, NULL, 584), MINT_OK);
    uint8_t *buf;
    size_t len;
    cr_assert_eq(mint_gguf_writer_write_mem(w, &buf, &len, NULL), MINT_OK);
    mint_file *f;
    mint_err err = {0};
    cr_assert_eq(mint_gguf_parse(buf, len, "mem", &f, &err), MINT_OK, "%s", err.msg);
    mint_tensor_info t;
    cr_assert_eq(mint_file_tensor(f, 0, &t), MINT_OK);
    cr_assert_eq(t.type, 15);
    cr_assert_str_eq(mint_type_name(t.type), "Q8_K");
    cr_assert(t.type_known);
    cr_assert(!t.type_computable);
    cr_assert_eq(t.nbytes, 584); // 2 blocks of 292 bytes
    mint_file_close(f);
    free(buf);
    mint_gguf_writer_free(w);
}
