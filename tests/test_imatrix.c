// test_imatrix.c - importance matrices (formats/imatrix.c): llama-imatrix's GGUF and legacy .dat
// layouts read from bytes built here, the importance llama-quantize derives from them (worked
// by hand from tools/quantize/quantize.cpp's rules, docs/formats.md), combining as --in-file
// does, saving both layouts and reading them back, and hostile files (every truncation, and
// fields set past their limits) refused with one line naming the file.
#include "formats/gguf.h"
#include "formats/imatrix.h"
#include "helpers/helpers.h"
#include "helpers/tool.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// A GGUF imatrix in memory: a dense matrix "blk.0.attn_q.weight" of 4 columns (count 10) and a
// stack "blk.0.ffn_up_exps.weight" of 3 experts of 2 columns (counts 4, 0, 6).
static const float dense_sums[4] = {10.0f, 20.0f, 0.5f, 3.0f};
static const float exp_sums[6] = {8.0f, 4.0f, 7.0f, 9.0f, 3.0f, 12.0f};
static const float dense_counts[1] = {10.0f}, exp_counts[3] = {4.0f, 0.0f, 6.0f};

static uint8_t *make_gguf(size_t *len, bool meta) {
    mint_gguf_writer *w = mint_gguf_writer_create();
    cr_assert(w);
    if (meta) {
        mint_str ds[2] = {{"a.txt", 5}, {"b.txt", 5}};
        cr_assert_eq(mint_gguf_add_str(w, "general.type", "imatrix"), MINT_OK);
        cr_assert_eq(mint_gguf_add_arr_str(w, "imatrix.datasets", ds, 2), MINT_OK);
        cr_assert_eq(mint_gguf_add_u32(w, "imatrix.chunk_count", 7), MINT_OK);
        cr_assert_eq(mint_gguf_add_u32(w, "imatrix.chunk_size", 512), MINT_OK);
    }
    const int64_t ne_d[2] = {4, 1}, ne_dc[2] = {1, 1}, ne_e[2] = {2, 3}, ne_ec[2] = {1, 3};
    mint_gguf_add_tensor(w, "blk.0.attn_q.weight.in_sum2", MINT_TYPE_F32, 2, ne_d, dense_sums, 16);
    mint_gguf_add_tensor(w, "blk.0.attn_q.weight.counts", MINT_TYPE_F32, 2, ne_dc, dense_counts, 4);
    mint_gguf_add_tensor(w, "blk.0.ffn_up_exps.weight.counts", MINT_TYPE_F32, 2, ne_ec, exp_counts,
                         12);
    mint_gguf_add_tensor(w, "blk.0.ffn_up_exps.weight.in_sum2", MINT_TYPE_F32, 2, ne_e, exp_sums,
                         24);
    uint8_t *buf;
    mint_err err = {0};
    cr_assert_eq(mint_gguf_writer_write_mem(w, &buf, len, &err), MINT_OK, "%s", err.msg);
    mint_gguf_writer_free(w);
    return buf;
}

static void put_i32(uint8_t *p, size_t *n, int32_t v) {
    memcpy(p + *n, &v, 4);
    *n += 4;
}
static void put_f32(uint8_t *p, size_t *n, float v) {
    memcpy(p + *n, &v, 4);
    *n += 4;
}
static void put_bytes(uint8_t *p, size_t *n, const char *s) {
    memcpy(p + *n, s, strlen(s));
    *n += strlen(s);
}

// A legacy .dat: two entries ("out.w": ncall 3, values 6 and 1.5; "a.b": ncall 0, value 2),
// then the trailer (chunk count 5, dataset "cal.txt"). 63 bytes.
static size_t make_dat(uint8_t *p) {
    size_t n = 0;
    put_i32(p, &n, 2);
    put_i32(p, &n, 5), put_bytes(p, &n, "out.w"), put_i32(p, &n, 3), put_i32(p, &n, 2);
    put_f32(p, &n, 6.0f), put_f32(p, &n, 1.5f);
    put_i32(p, &n, 3), put_bytes(p, &n, "a.b"), put_i32(p, &n, 0), put_i32(p, &n, 1);
    put_f32(p, &n, 2.0f);
    put_i32(p, &n, 5), put_i32(p, &n, 7), put_bytes(p, &n, "cal.txt");
    return n;
}

static mint_imatrix *parse_ok(const void *p, size_t n) {
    mint_imatrix *im = NULL;
    mint_err err = {0};
    cr_assert_eq(mint_imatrix_parse(p, n, "x.imatrix", &im, &err), MINT_OK, "%s", err.msg);
    return im;
}

Test(imatrix, gguf_read_and_importance) {
    size_t len;
    uint8_t *buf = make_gguf(&len, true);
    mint_imatrix *im = parse_ok(buf, len);
    mint_imatrix_info info;
    mint_imatrix_get_info(im, &info);
    cr_assert_eq(info.n_entries, 2);
    cr_assert_eq(info.chunk_count, 7);
    cr_assert_eq(info.chunk_size, 512);
    cr_assert(info.has_metadata && !info.legacy);
    cr_assert_eq(info.n_datasets, 2);
    cr_assert_str_eq(mint_imatrix_dataset(im, 1), "b.txt");
    cr_assert_null(mint_imatrix_dataset(im, 2));

    mint_imatrix_entry e;
    cr_assert_eq(mint_imatrix_find(im, "blk.0.ffn_up_exps.weight", &e), MINT_OK);
    cr_assert_eq(e.n_vals, 6);
    cr_assert_eq(e.n_counts, 3);
    cr_assert_eq(e.counts[2], 6);
    cr_assert_eq(mint_imatrix_entry_at(im, 0, &e), MINT_OK); // name order
    cr_assert_str_eq(e.name, "blk.0.attn_q.weight");

    float out[4];
    mint_err err = {0};
    cr_assert_eq(mint_imatrix_importance(im, "blk.0.attn_q.weight", 4, 1, 0, out, &err), MINT_OK);
    for (int i = 0; i < 4; i++) cr_assert_eq(out[i], dense_sums[i] / 10.0f);
    // expert 0: sums / 4; expert 1 (no token reached it): 1 per column; expert 2: sums / 6
    cr_assert_eq(mint_imatrix_importance(im, "blk.0.ffn_up_exps.weight", 2, 3, 0, out, &err),
                 MINT_OK);
    cr_assert(out[0] == 2.0f && out[1] == 1.0f);
    cr_assert_eq(mint_imatrix_importance(im, "blk.0.ffn_up_exps.weight", 2, 3, 1, out, &err),
                 MINT_OK);
    cr_assert(out[0] == 1.0f && out[1] == 1.0f);
    cr_assert_eq(mint_imatrix_importance(im, "blk.0.ffn_up_exps.weight", 2, 3, 2, out, &err),
                 MINT_OK);
    cr_assert(out[0] == 3.0f / 6.0f && out[1] == 2.0f);
    // absent, wrong size, bad index
    cr_assert_eq(mint_imatrix_importance(im, "output.weight", 4, 1, 0, out, &err),
                 MINT_E_NOT_FOUND);
    cr_assert_eq(mint_imatrix_importance(im, "blk.0.attn_q.weight", 2, 1, 0, out, &err),
                 MINT_E_LIMIT);
    cr_assert(strstr(err.msg, "imatrix size 4 is different from tensor size 2"), "%s", err.msg);
    cr_assert_eq(mint_imatrix_importance(im, "blk.0.attn_q.weight", 4, 1, 1, out, &err),
                 MINT_E_ARG);
    mint_imatrix_free(im);
    free(buf);

    buf = make_gguf(&len, false); // no metadata: read, but flagged (llama-quantize refuses it)
    im = parse_ok(buf, len);
    mint_imatrix_get_info(im, &info);
    cr_assert(!info.has_metadata && info.chunk_size == 0 && info.n_datasets == 0);
    mint_imatrix_free(im);
    free(buf);
}

Test(imatrix, legacy_read_and_importance) {
    uint8_t p[256];
    size_t n = make_dat(p);
    mint_imatrix *im = parse_ok(p, n);
    mint_imatrix_info info;
    mint_imatrix_get_info(im, &info);
    cr_assert(info.legacy && !info.has_metadata);
    cr_assert_eq(info.chunk_count, 5);
    cr_assert_eq(info.n_datasets, 1);
    cr_assert_str_eq(mint_imatrix_dataset(im, 0), "cal.txt");
    float out[2];
    mint_err err = {0};
    cr_assert_eq(mint_imatrix_importance(im, "out.w", 2, 1, 0, out, &err), MINT_OK);
    cr_assert(out[0] == 2.0f && out[1] == 0.5f); // sums / ncall
    cr_assert_eq(mint_imatrix_importance(im, "a.b", 1, 1, 0, out, &err), MINT_OK);
    cr_assert(out[0] == 2.0f); // ncall 0: the sums as stored
    mint_imatrix_free(im);
    // the trailer is optional, and may stop anywhere
    for (size_t cut = n - 15; cut <= n; cut++) {
        im = parse_ok(p, cut);
        mint_imatrix_get_info(im, &info);
        cr_assert_eq(info.n_entries, 2);
        cr_assert_eq(info.n_datasets, cut == n ? 1 : 0);
        mint_imatrix_free(im);
    }
}

Test(imatrix, combine_as_in_file) {
    size_t len;
    uint8_t *buf = make_gguf(&len, true);
    mint_imatrix *a = parse_ok(buf, len), *dst = NULL;
    mint_err err = {0};
    cr_assert_eq(mint_imatrix_create(256, &dst, &err), MINT_OK);
    cr_assert_eq(mint_imatrix_combine(dst, a, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_imatrix_combine(dst, a, &err), MINT_OK, "%s", err.msg);
    mint_imatrix_entry e;
    cr_assert_eq(mint_imatrix_find(dst, "blk.0.ffn_up_exps.weight", &e), MINT_OK);
    for (int i = 0; i < 6; i++) cr_assert_eq(e.sums[i], 2 * exp_sums[i]);
    cr_assert(e.counts[0] == 8 && e.counts[1] == 0 && e.counts[2] == 12);
    mint_imatrix_info info;
    mint_imatrix_get_info(dst, &info);
    cr_assert_eq(info.n_datasets, 4);
    cr_assert_eq(info.chunk_count, 20 / 256); // the largest count in whole chunks
    cr_assert_eq(info.chunk_size, 256);

    uint8_t p[256];
    size_t n = make_dat(p);
    mint_imatrix *l = parse_ok(p, n);
    cr_assert_eq(mint_imatrix_combine(dst, l, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_imatrix_find(dst, "out.w", &e), MINT_OK);
    cr_assert(e.sums[0] == 6.0f * 256 && e.sums[1] == 1.5f * 256 && e.counts[0] == 3 * 256);
    mint_imatrix_get_info(dst, &info);
    cr_assert_eq(info.chunk_count, 3);
    cr_assert_eq(info.n_datasets, 5);

    // sizes that differ: refused, dst unchanged
    mint_imatrix *bad = NULL;
    cr_assert_eq(mint_imatrix_create(256, &bad, &err), MINT_OK);
    mint_imx_entry *x;
    cr_assert_eq(mint_imatrix_get_or_add(bad, "blk.0.attn_q.weight", 5, 1, &x, NULL), MINT_OK);
    cr_assert_eq(mint_imatrix_combine(dst, bad, &err), MINT_E_LIMIT);
    cr_assert(strstr(err.msg, "mismatched sums size for blk.0.attn_q.weight"), "%s", err.msg);
    cr_assert_eq(mint_imatrix_find(dst, "blk.0.attn_q.weight", &e), MINT_OK);
    cr_assert_eq(e.counts[0], 20);
    // into a legacy file: refused
    cr_assert_eq(mint_imatrix_combine(l, a, &err), MINT_E_ARG);
    mint_imatrix_free(bad);
    mint_imatrix_free(l);
    mint_imatrix_free(a);
    mint_imatrix_free(dst);
    free(buf);
}

Test(imatrix, save_and_read_back) {
    size_t len;
    uint8_t *buf = make_gguf(&len, true);
    mint_imatrix *a = parse_ok(buf, len), *dst = NULL;
    mint_err err = {0};
    cr_assert_eq(mint_imatrix_create(4, &dst, &err), MINT_OK);
    cr_assert_eq(mint_imatrix_combine(dst, a, &err), MINT_OK);
    cr_assert_eq(mint_imatrix_add_dataset(dst, "c.txt", &err), MINT_OK);
    const char *g = keep(mt_path(mt_tmpdir(), "x.gguf")), *d = mt_path(mt_tmpdir(), "x.dat");
    cr_assert_eq(mint_imatrix_save(dst, g, MINT_IMATRIX_GGUF, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_imatrix_save(dst, d, MINT_IMATRIX_DAT, &err), MINT_OK, "%s", err.msg);

    mint_imatrix *rg = NULL, *rd = NULL;
    cr_assert_eq(mint_imatrix_load(g, &rg, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_imatrix_load(d, &rd, &err), MINT_OK, "%s", err.msg);
    mint_imatrix_info ig, id;
    mint_imatrix_get_info(rg, &ig);
    mint_imatrix_get_info(rd, &id);
    cr_assert(ig.has_metadata && ig.chunk_size == 4 && ig.chunk_count == 10 / 4);
    cr_assert_eq(ig.n_datasets, 3);
    cr_assert_str_eq(mint_imatrix_dataset(rg, 2), "c.txt");
    cr_assert(id.legacy && id.chunk_count == 2 && id.n_datasets == 1);
    cr_assert_str_eq(mint_imatrix_dataset(rd, 0), "c.txt"); // the last dataset
    mint_imatrix_entry e;
    cr_assert_eq(mint_imatrix_find(rg, "blk.0.ffn_up_exps.weight", &e), MINT_OK);
    cr_assert(e.n_counts == 3 && e.counts[2] == 6 && e.sums[5] == 12.0f);
    // .dat: (sum / count) * ncall with ncall = ceil(max count / chunk size), and 1 * ncall for
    // an expert no token reached
    cr_assert_eq(mint_imatrix_find(rd, "blk.0.ffn_up_exps.weight", &e), MINT_OK);
    cr_assert(e.n_counts == 1 && e.counts[0] == 2);
    cr_assert(e.sums[0] == 8.0f / 4 * 2 && e.sums[2] == 2.0f && e.sums[5] == 12.0f / 6 * 2);
    // The same importance from both, but for the unreached expert (GGUF: 1, .dat: 1 too)
    for (int m = 0; m < 3; m++) {
        float x[2], y[2];
        cr_assert_eq(mint_imatrix_importance(rg, "blk.0.ffn_up_exps.weight", 2, 3, m, x, &err),
                     MINT_OK);
        cr_assert_eq(mint_imatrix_importance(rd, "blk.0.ffn_up_exps.weight", 2, 3, m, y, &err),
                     MINT_OK);
        cr_assert(x[0] == y[0] && x[1] == y[1], "expert %d: %g %g vs %g %g", m, x[0], x[1], y[0],
                  y[1]);
    }
    // a legacy file read in has no raw sums to save
    cr_assert_eq(mint_imatrix_save(rd, d, MINT_IMATRIX_GGUF, &err), MINT_E_ARG);
    mint_imatrix_free(rg);
    mint_imatrix_free(rd);
    mint_imatrix_free(a);
    mint_imatrix_free(dst);
    free(buf);
}

static void expect_refused(const void *p, size_t n, const char *what) {
    mint_imatrix *im = (mint_imatrix *)1;
    mint_err err = {0};
    mint_status st = mint_imatrix_parse(p, n, "x.imatrix", &im, &err);
    cr_assert_neq(st, MINT_OK, "%s accepted", what);
    cr_assert_null(im);
    cr_assert_eq(err.code, st);
    cr_assert(strncmp(err.msg, "x.imatrix", 9) == 0 && !strchr(err.msg, '\n'), "%s: %s", what,
              err.msg);
}

Test(imatrix, hostile_files) {
    size_t len;
    uint8_t *buf = make_gguf(&len, true);
    // every cut before the last tensor's end (the writer pads it to the alignment: 32 bytes,
    // of which its 24 fill 24)
    for (size_t cut = 0; cut < len - 8; cut++) expect_refused(buf, cut, "a cut GGUF");
    free(buf);
    uint8_t p[256];
    const size_t n = make_dat(p);
    for (size_t cut = 0; cut < n - 16; cut++) expect_refused(p, cut, "a cut .dat");
    uint8_t q[256];
    int32_t v;
    memcpy(q, p, n);
    v = 0, memcpy(q, &v, 4), expect_refused(q, n, "0 entries");
    v = 1 << 30, memcpy(q, &v, 4), expect_refused(q, n, "2^30 entries");
    memcpy(q, p, n);
    v = -1, memcpy(q + 4, &v, 4), expect_refused(q, n, "a negative name length");
    memcpy(q, p, n);
    v = 0, memcpy(q + 17, &v, 4), expect_refused(q, n, "0 values");
    v = 1 << 29, memcpy(q + 17, &v, 4), expect_refused(q, n, "values past the end");
    memcpy(q, p, n);
    memcpy(q + 8, "a.b\0\0", 5); // the first entry's name ends at its NUL: the second's
    expect_refused(q, n, "a duplicate name");

    // GGUF: a sum without counts, counts not F32, a count that is not one, sizes that differ
    mint_gguf_writer *w = mint_gguf_writer_create();
    const int64_t ne[2] = {2, 1}, ne1[2] = {1, 1};
    const float two[2] = {1, 2}, bad_count[1] = {-3.0f};
    mint_gguf_add_tensor(w, "a.in_sum2", MINT_TYPE_F32, 2, ne, two, 8);
    uint8_t *img;
    mint_err err = {0};
    cr_assert_eq(mint_gguf_writer_write_mem(w, &img, &len, &err), MINT_OK);
    expect_refused(img, len, "a sum without counts");
    free(img);
    mint_gguf_add_tensor(w, "a.counts", MINT_TYPE_F32, 2, ne1, bad_count, 4);
    cr_assert_eq(mint_gguf_writer_write_mem(w, &img, &len, &err), MINT_OK);
    expect_refused(img, len, "a negative count");
    free(img);
    mint_gguf_writer_free(w);
    w = mint_gguf_writer_create();
    const int64_t ne3[2] = {1, 3};
    const float counts3[3] = {1, 1, 1};
    mint_gguf_add_tensor(w, "a.in_sum2", MINT_TYPE_F32, 2, ne, two, 8);
    mint_gguf_add_tensor(w, "a.counts", MINT_TYPE_F32, 2, ne3, counts3, 12);
    cr_assert_eq(mint_gguf_writer_write_mem(w, &img, &len, &err), MINT_OK);
    expect_refused(img, len, "2 sums for 3 counts");
    free(img);
    mint_gguf_writer_free(w);
    w = mint_gguf_writer_create();
    mint_gguf_add_u32(w, "imatrix.chunk_count", 1);
    cr_assert_eq(mint_gguf_writer_write_mem(w, &img, &len, &err), MINT_OK);
    expect_refused(img, len, "no tensors");
    free(img);
    mint_gguf_writer_free(w);

    mint_imatrix *im = NULL;
    cr_assert_eq(mint_imatrix_load("/nonexistent/x.gguf", &im, &err), MINT_E_IO);
    cr_assert_null(im);
}

// ---------------------------------------------------------------------------------------------
// Files llama-imatrix wrote (tests/reference/imatrix/README.md says how): each GGUF as mint reads
// it, turned into the legacy layout by llama-imatrix's own rules, equals bit for bit the .dat
// llama-imatrix wrote from the same GGUF after reading it with its own loader (--in-file).

static const char *source_path(const char *rel) {
    static char buf[4][1024];
    static int k;
    const char *dir = getenv("MINT_SOURCE_DIR");
    char *b = buf[k++ % 4];
    snprintf(b, sizeof buf[0], "%s/%s", dir ? dir : ".", rel);
    return b;
}

static void check_llama_pair(const char *gguf_rel, const char *dat_rel, int64_t want_entries,
                             bool experts) {
    mint_imatrix *g = NULL, *d = NULL;
    mint_err err = {0};
    cr_assert_eq(mint_imatrix_load(source_path(gguf_rel), &g, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_imatrix_load(source_path(dat_rel), &d, &err), MINT_OK, "%s", err.msg);
    mint_imatrix_info ig, id;
    mint_imatrix_get_info(g, &ig);
    mint_imatrix_get_info(d, &id);
    cr_assert(ig.has_metadata && !ig.legacy && id.legacy);
    cr_assert_eq(ig.chunk_size, 64);
    cr_assert_eq(ig.chunk_count, 3);
    cr_assert_eq(id.chunk_count, ig.chunk_count);
    cr_assert_eq(ig.n_datasets, 1);
    cr_assert_eq(id.n_datasets, 1);
    cr_assert_str_eq(mint_imatrix_dataset(g, 0), mint_imatrix_dataset(d, 0));
    cr_assert_eq(ig.n_entries, want_entries);
    cr_assert_eq(id.n_entries, want_entries);
    bool saw_experts = false;
    for (int64_t i = 0; i < ig.n_entries; i++) {
        mint_imatrix_entry a, b;
        cr_assert_eq(mint_imatrix_entry_at(g, i, &a), MINT_OK);
        cr_assert_eq(mint_imatrix_find(d, a.name, &b), MINT_OK, "%s not in the .dat", a.name);
        cr_assert_eq(a.n_vals, b.n_vals);
        int64_t max = 0;
        for (int64_t j = 0; j < a.n_counts; j++) max = a.counts[j] > max ? a.counts[j] : max;
        cr_assert_gt(max, 0);
        const int64_t ncall = (max + 63) / 64;
        cr_assert_eq(b.counts[0], ncall, "%s", a.name);
        saw_experts |= a.n_counts > 1;
        const int64_t per = a.n_vals / a.n_counts;
        for (int64_t j = 0; j < a.n_vals; j++) {
            float c = (float)a.counts[j / per], v = a.sums[j];
            if (c == 0.0f) v = c = 1.0f;
            const float want = v / c * (float)ncall;
            cr_assert(b.sums[j] == want, "%s[%lld]: %.9g in the .dat, %.9g from the GGUF", a.name,
                      (long long)j, b.sums[j], want);
        }
    }
    cr_assert_eq(saw_experts, experts);
    mint_imatrix_free(g);
    mint_imatrix_free(d);
}

Test(imatrix, llama_imatrix_files) {
    check_llama_pair("tests/reference/imatrix/micro-imatrix.gguf",
                     "tests/reference/imatrix/micro-imatrix.dat", 7, false);
    // a mixture: per-expert counts (router, and gate/up/down stacks of the experts)
    check_llama_pair("tests/reference/imatrix/micro-moe-imatrix.gguf",
                     "tests/reference/imatrix/micro-moe-imatrix.dat", 8, true);
}
