// test_quantize.c - mint_quantize_file against llama-quantize, byte for byte, and the promises
// around it: recorded hashes (mint_verify_hashes), never writing over the input, argument
// errors, and an output path that holds either the previous file or the whole new one, even
// when mint-quantize is killed with SIGKILL at a random moment.
//
// The reference: shared/data/quant/ holds what llama-quantize wrote from stories260K.gguf and
// quant/tiny256-f32.gguf (docs/tolerances.md 1.2). Quantizing the same source to the same file
// type must give the same tensors (names, order, types, shapes) and the same data section, byte
// for byte; the metadata must be the source's plus the two mint.quantize.* keys.
#include "formats/gguf.h"
#include "helpers/gguf_fixtures.h"
#include "helpers/helpers.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// ---------------------------------------------------------------------------------------------
// Helpers

static mint_quantize_params params(const char *ftype) {
    mint_quantize_params p;
    memset(&p, 0, sizeof p);
    p.ftype = ftype;
    p.n_threads = 1; // Criterion runs two tests at once on a 2-core machine
    return p;
}

// A path in the test's temporary folder, in a rotation of its own, 32 deep (mt_path's is 8 and
// shared with mt_data_path and mt_bin, too shallow for the paths a test here keeps).
static const char *tmp(const char *name) {
    static char bufs[32][4200];
    static int next;
    char *b = bufs[next];
    next = (next + 1) % 32;
    snprintf(b, sizeof bufs[0], "%s/%s", mt_tmpdir(), name);
    return b;
}

static uint8_t *read_all(const char *path, size_t *len) {
    uint8_t *b = mt_read_file(path, len);
    cr_assert(b, "cannot read %s", path);
    return b;
}

static void copy_file(const char *from, const char *to) {
    size_t n;
    uint8_t *b = read_all(from, &n);
    cr_assert(mt_write_file(to, b, n), "cannot write %s", to);
    free(b);
}

static bool same_bytes(const char *path, const uint8_t *want, size_t n) {
    size_t len;
    uint8_t *b = mt_read_file(path, &len);
    bool same = b && len == n && memcmp(b, want, n) == 0;
    free(b);
    return same;
}

// Names in a folder other than . and .., joined by spaces (for messages and stray-file checks).
static int list_dir(const char *dir, char *buf, size_t cap) {
    DIR *d = opendir(dir);
    cr_assert(d, "opendir %s", dir);
    int n = 0;
    buf[0] = '\0';
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s%s", n ? " " : "", e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

// A metadata entry rendered in full (every string byte and array item).
static char *kv_text(const mint_file *f, uint64_t i) {
    size_t n = mint_file_kv_format(f, i, NULL, 0, SIZE_MAX / 4, SIZE_MAX / 4);
    char *buf = malloc(n + 1);
    cr_assert(buf);
    mint_file_kv_format(f, i, buf, n + 1, SIZE_MAX / 4, SIZE_MAX / 4);
    return buf;
}

// ---------------------------------------------------------------------------------------------
// Every fixture of shared/data/quant, made again

typedef struct fixture {
    const char *file;   // under quant/
    const char *source; // relative to MINT_TEST_DATA
    const char *ftype;  // llama-quantize's type argument
    bool pure;          // --pure
} fixture;

#define STORIES "stories260K.gguf"
#define TINY    "quant/tiny256-f32.gguf"

// Compares mint's output with llama-quantize's file: tensors, data section, metadata, hashes.
static void compare_with_llama(const fixture *fx, const char *mine_path) {
    char want_rel[128];
    snprintf(want_rel, sizeof want_rel, "quant/%s", fx->file);
    char want_path[4200];
    snprintf(want_path, sizeof want_path, "%s", mt_data_path(want_rel));
    mint_file *mine, *want, *src;
    mint_err err;
    cr_assert_eq(mint_file_open(mine_path, &mine, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_file_open(want_path, &want, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_file_open(mt_data_path(fx->source), &src, &err), MINT_OK, "%s", err.msg);
    mint_file_info mi, wi;
    mint_file_get_info(mine, &mi);
    mint_file_get_info(want, &wi);

    // Tensors: same names in the same order, same types and shapes, same bytes.
    cr_assert_eq(mi.n_tensors, wi.n_tensors, "%s: %" PRIu64 " tensors, llama-quantize %" PRIu64,
                 fx->file, mi.n_tensors, wi.n_tensors);
    for (uint64_t i = 0; i < wi.n_tensors; i++) {
        mint_tensor_info a, b;
        cr_assert_eq(mint_file_tensor(mine, i, &a), MINT_OK);
        cr_assert_eq(mint_file_tensor(want, i, &b), MINT_OK);
        cr_assert_str_eq(a.name, b.name, "%s: tensor %" PRIu64, fx->file, i);
        cr_assert_eq(a.type, b.type, "%s: %s is %s, llama-quantize wrote %s", fx->file, a.name,
                     mint_type_name(a.type), mint_type_name(b.type));
        cr_assert_eq(a.n_dims, b.n_dims, "%s: %s n_dims", fx->file, a.name);
        for (int d = 0; d < 4; d++)
            cr_assert_eq(a.ne[d], b.ne[d], "%s: %s ne[%d]", fx->file, a.name, d);
        cr_assert_eq(a.offset, b.offset, "%s: %s offset", fx->file, a.name);
        cr_assert_eq(a.nbytes, b.nbytes, "%s: %s bytes", fx->file, a.name);
        if (memcmp(a.data, b.data, (size_t)a.nbytes) != 0) {
            size_t k = 0;
            while (((const uint8_t *)a.data)[k] == ((const uint8_t *)b.data)[k]) k++;
            cr_assert_fail("%s: tensor %s (%s) differs first at byte %zu of %" PRIu64, fx->file,
                           a.name, mint_type_name(a.type), k, a.nbytes);
        }
    }

    // The data section as a whole, padding included: everything from data_offset to the end.
    size_t ml, wl;
    uint8_t *mb = read_all(mine_path, &ml), *wb = read_all(want_path, &wl);
    cr_assert_eq(mi.data_size, wi.data_size, "%s: data section size", fx->file);
    cr_assert_eq(ml - mi.data_offset, wl - wi.data_offset, "%s: bytes after the header", fx->file);
    cr_assert(memcmp(mb + mi.data_offset, wb + wi.data_offset, wl - wi.data_offset) == 0,
              "%s: data sections differ", fx->file);
    cr_assert_eq(mi.alignment, wi.alignment);

    // Metadata: llama-quantize's entries in its order and with its values, then mint's two.
    cr_assert_eq(mi.n_kv, wi.n_kv + 2, "%s: %" PRIu64 " metadata entries, llama-quantize %" PRIu64,
                 fx->file, mi.n_kv, wi.n_kv);
    uint64_t j = 0;
    for (uint64_t i = 0; i < mi.n_kv; i++) {
        mint_kv_info a;
        cr_assert_eq(mint_file_kv(mine, i, &a), MINT_OK);
        if (!strncmp(a.key, "mint.quantize.", 14)) continue;
        mint_kv_info b;
        cr_assert_eq(mint_file_kv(want, j, &b), MINT_OK);
        cr_assert_str_eq(a.key, b.key, "%s: metadata entry %" PRIu64, fx->file, i);
        char *ta = kv_text(mine, i), *tb = kv_text(want, j);
        cr_assert_str_eq(ta, tb, "%s: %s", fx->file, a.key);
        free(ta);
        free(tb);
        j++;
    }
    cr_assert_eq(j, wi.n_kv);

    // The recorded hashes: every tensor's, and the source file's.
    uint64_t n_checked = 99;
    cr_assert_eq(mint_verify_hashes(mine, &n_checked, &err), MINT_OK, "%s: %s", fx->file, err.msg);
    cr_assert_eq(n_checked, mi.n_tensors);
    size_t sl;
    uint8_t *sb = read_all(mt_data_path(fx->source), &sl);
    uint64_t src_hash = 0;
    cr_assert_eq(mint_file_get_u64(mine, "mint.quantize.source_xxh3", &src_hash, &err), MINT_OK,
                 "%s", err.msg);
    cr_assert_eq(src_hash, mint_hash64(sb, sl), "source hash %016" PRIx64, src_hash);
    free(sb);
    free(mb);
    free(wb);
    mint_file_close(mine);
    mint_file_close(want);
    mint_file_close(src);
}

static void check_fixture(const fixture *fx) {
    mint_quantize_params p = params(fx->ftype);
    p.pure = fx->pure;
    const char *out = tmp(fx->file);
    mint_err err;
    cr_assert_eq(mint_quantize_file(mt_data_path(fx->source), out, &p, &err), MINT_OK, "%s: %s",
                 fx->file, err.msg);
    compare_with_llama(fx, out);
}

#define FIXTURE_TEST(id, file, source, ftype, pure)                                                \
    Test(quantize_vs_llama, id) {                                                                  \
        const fixture fx = {file, source, ftype, pure};                                            \
        check_fixture(&fx);                                                                        \
    }

FIXTURE_TEST(stories_f16, "stories260K-f16.gguf", STORIES, "F16", false)
FIXTURE_TEST(stories_q8_0, "stories260K-q8_0.gguf", STORIES, "Q8_0", false)
FIXTURE_TEST(stories_q4_0, "stories260K-q4_0.gguf", STORIES, "Q4_0", false)
FIXTURE_TEST(stories_q4_1, "stories260K-q4_1.gguf", STORIES, "Q4_1", false)
FIXTURE_TEST(stories_q5_0, "stories260K-q5_0.gguf", STORIES, "Q5_0", false)
FIXTURE_TEST(stories_q5_1, "stories260K-q5_1.gguf", STORIES, "Q5_1", false)
FIXTURE_TEST(tiny_f16, "tiny256-f16.gguf", TINY, "F16", false)
FIXTURE_TEST(tiny_bf16, "tiny256-bf16.gguf", TINY, "BF16", false)
FIXTURE_TEST(tiny_q8_0, "tiny256-q8_0.gguf", TINY, "Q8_0", false)
FIXTURE_TEST(tiny_q4_0, "tiny256-q4_0.gguf", TINY, "Q4_0", false)
FIXTURE_TEST(tiny_q4_1, "tiny256-q4_1.gguf", TINY, "Q4_1", false)
FIXTURE_TEST(tiny_q5_0, "tiny256-q5_0.gguf", TINY, "Q5_0", false)
FIXTURE_TEST(tiny_q5_1, "tiny256-q5_1.gguf", TINY, "Q5_1", false)
FIXTURE_TEST(tiny_q2_k, "tiny256-q2_k.gguf", TINY, "Q2_K", false)
FIXTURE_TEST(tiny_q3_k_m, "tiny256-q3_k_m.gguf", TINY, "Q3_K_M", false)
FIXTURE_TEST(tiny_q4_k_m, "tiny256-q4_k_m.gguf", TINY, "Q4_K_M", false)
FIXTURE_TEST(tiny_q5_k_m, "tiny256-q5_k_m.gguf", TINY, "Q5_K_M", false)
FIXTURE_TEST(tiny_q6_k, "tiny256-q6_k.gguf", TINY, "Q6_K", false)
// Q6_K --pure gave the same file as the Q6_K mix (docs/tolerances.md 1.2).
FIXTURE_TEST(tiny_q6_k_pure, "tiny256-q6_k.gguf", TINY, "Q6_K", true)
FIXTURE_TEST(tiny_q2_k_pure, "tiny256-q2_k-pure.gguf", TINY, "Q2_K", true)
FIXTURE_TEST(tiny_q3_k_pure, "tiny256-q3_k-pure.gguf", TINY, "Q3_K", true)
FIXTURE_TEST(tiny_q4_k_pure, "tiny256-q4_k-pure.gguf", TINY, "Q4_K", true)
FIXTURE_TEST(tiny_q5_k_pure, "tiny256-q5_k-pure.gguf", TINY, "Q5_K", true)

// More threads split the rows differently; the bytes must not change.
Test(quantize_vs_llama, threads_do_not_change_bytes) {
    const fixture fx = {"tiny256-q4_k_m.gguf", TINY, "Q4_K_M", false};
    mint_quantize_params p = params("Q4_K_M");
    p.n_threads = 3;
    const char *out = tmp("threads.gguf");
    mint_err err;
    cr_assert_eq(mint_quantize_file(mt_data_path(TINY), out, &p, &err), MINT_OK, "%s", err.msg);
    compare_with_llama(&fx, out);
}

// Every fixture file is in the list above (a new fixture must get a test).
Test(quantize_vs_llama, every_fixture_is_covered) {
    static const char *covered[] = {
        "stories260K-f16.gguf",   "stories260K-q8_0.gguf",  "stories260K-q4_0.gguf",
        "stories260K-q4_1.gguf",  "stories260K-q5_0.gguf",  "stories260K-q5_1.gguf",
        "tiny256-f32.gguf",       "tiny256-f16.gguf",       "tiny256-bf16.gguf",
        "tiny256-q8_0.gguf",      "tiny256-q4_0.gguf",      "tiny256-q4_1.gguf",
        "tiny256-q5_0.gguf",      "tiny256-q5_1.gguf",      "tiny256-q2_k.gguf",
        "tiny256-q3_k_m.gguf",    "tiny256-q4_k_m.gguf",    "tiny256-q5_k_m.gguf",
        "tiny256-q6_k.gguf",      "tiny256-q2_k-pure.gguf", "tiny256-q3_k-pure.gguf",
        "tiny256-q4_k-pure.gguf", "tiny256-q5_k-pure.gguf",
    };
    const char *dir = mt_data_path("quant");
    DIR *d = opendir(dir);
    cr_assert(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strstr(e->d_name, ".gguf")) continue;
        bool found = false;
        for (size_t i = 0; i < sizeof covered / sizeof *covered; i++)
            found |= strcmp(covered[i], e->d_name) == 0;
        cr_assert(found, "quant/%s has no test here", e->d_name);
        n++;
    }
    closedir(d);
    cr_assert_eq(n, (int)(sizeof covered / sizeof *covered));
}

// ---------------------------------------------------------------------------------------------
// mint_verify_hashes

// Quantizes stories260K to Q4_0 into the temp folder; returns the path.
static const char *make_q4_0(const char *name) {
    mint_quantize_params p = params("Q4_0");
    const char *out = tmp(name);
    mint_err err;
    cr_assert_eq(mint_quantize_file(mt_data_path(STORIES), out, &p, &err), MINT_OK, "%s", err.msg);
    return out;
}

// Flips one byte in the middle of tensor `which` of a copy of `path`; verification must fail
// naming that tensor, after checking exactly the tensors before it.
static void flip_and_verify(const char *path, uint64_t which) {
    mint_file *f;
    mint_err err;
    cr_assert_eq(mint_file_open(path, &f, &err), MINT_OK, "%s", err.msg);
    mint_tensor_info t;
    cr_assert_eq(mint_file_tensor(f, which, &t), MINT_OK);
    char name[256];
    snprintf(name, sizeof name, "%s", t.name);
    uint64_t at = t.file_offset + t.nbytes / 2;
    mint_file_close(f);

    size_t n;
    uint8_t *b = read_all(path, &n);
    b[at] ^= 0x01;
    char copy[64];
    snprintf(copy, sizeof copy, "flipped-%" PRIu64 ".gguf", which);
    cr_assert(mt_write_file(tmp(copy), b, n));
    free(b);

    cr_assert_eq(mint_file_open(tmp(copy), &f, &err), MINT_OK, "%s", err.msg);
    uint64_t checked = 99;
    cr_assert_eq(mint_verify_hashes(f, &checked, &err), MINT_E_FORMAT);
    cr_assert_eq(err.code, MINT_E_FORMAT);
    char want[300];
    snprintf(want, sizeof want, "tensor '%s'", name);
    cr_assert(strstr(err.msg, want), "message does not name %s: %s", name, err.msg);
    cr_assert_eq(checked, which, "checked %" PRIu64 " tensors before the bad one", checked);
    mint_file_close(f);
}

Test(verify_hashes, one_flipped_byte_names_its_tensor) {
    const char *path = make_q4_0("v.gguf");
    mint_file *f;
    mint_err err;
    cr_assert_eq(mint_file_open(path, &f, &err), MINT_OK, "%s", err.msg);
    mint_file_info info;
    mint_file_get_info(f, &info);
    uint64_t checked;
    cr_assert_eq(mint_verify_hashes(f, &checked, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(checked, info.n_tensors);
    mint_file_close(f);
    flip_and_verify(path, 0);
    flip_and_verify(path, info.n_tensors / 2);
    flip_and_verify(path, info.n_tensors - 1);
}

Test(verify_hashes, file_without_hashes_is_not_found) {
    mint_file *f;
    mint_err err;
    cr_assert_eq(mint_file_open(mt_data_path(STORIES), &f, &err), MINT_OK, "%s", err.msg);
    uint64_t checked = 99;
    cr_assert_eq(mint_verify_hashes(f, &checked, &err), MINT_E_NOT_FOUND);
    cr_assert_eq(checked, 0);
    cr_assert(strstr(err.msg, "mint.quantize.tensor_xxh3"), "%s", err.msg);
    mint_file_close(f);
}

// Hash entries of the wrong length or element type are format errors; the right ones pass.
static mint_status verify_built(mint_value_type elem, uint64_t n_hashes, uint64_t *checked,
                                mint_err *err) {
    static const float data[2][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}};
    const int64_t ne[2] = {4, 1};
    uint64_t h[3] = {mint_hash64(data[0], 16), mint_hash64(data[1], 16), 0};
    uint32_t h32[3] = {(uint32_t)h[0], (uint32_t)h[1], 0};
    mint_gguf_writer *w = mint_gguf_writer_create();
    cr_assert(w);
    mint_gguf_add_str(w, "general.architecture", "llama");
    mint_gguf_add_arr(w, "mint.quantize.tensor_xxh3", elem, elem == MINT_VAL_U32 ? (void *)h32 : h,
                      n_hashes);
    mint_gguf_add_tensor(w, "a.weight", 0 /* F32 */, 2, ne, data[0], 16);
    mint_gguf_add_tensor(w, "b.weight", 0 /* F32 */, 2, ne, data[1], 16);
    const char *path = tmp("built.gguf");
    cr_assert_eq(mint_gguf_writer_write_file(w, path, err), MINT_OK, "%s", err->msg);
    mint_gguf_writer_free(w);
    mint_file *f;
    cr_assert_eq(mint_file_open(path, &f, err), MINT_OK, "%s", err->msg);
    *checked = 99;
    mint_status st = mint_verify_hashes(f, checked, err);
    mint_file_close(f);
    return st;
}

Test(verify_hashes, hash_entry_of_wrong_length_or_type) {
    uint64_t checked;
    mint_err err;
    cr_assert_eq(verify_built(MINT_VAL_U64, 2, &checked, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(checked, 2);
    cr_assert_eq(verify_built(MINT_VAL_U64, 1, &checked, &err), MINT_E_FORMAT);
    cr_assert(strstr(err.msg, "mint.quantize.tensor_xxh3") && strstr(err.msg, "1 entries"), "%s",
              err.msg);
    cr_assert_eq(checked, 0);
    cr_assert_eq(verify_built(MINT_VAL_U64, 3, &checked, &err), MINT_E_FORMAT);
    cr_assert_eq(verify_built(MINT_VAL_U32, 2, &checked, &err), MINT_E_FORMAT);
    cr_assert(strstr(err.msg, "u32") || strstr(err.msg, "U32"), "%s", err.msg);
    cr_assert_eq(checked, 0);
}

// mint-inspect --verify reports the same, as a user sees it.
Test(verify_hashes, mint_inspect_verify) {
    const char *path = make_q4_0("inspect.gguf");
    char cmd[4400], *out, *err;
    snprintf(cmd, sizeof cmd, "'%s' --verify '%s'", mt_bin("mint-inspect"), path);
    cr_assert_eq(mt_run(cmd, &out, &err), 0, "%s", err);
    cr_assert(strstr(out, "all 48 tensors match their recorded XXH3-64"), "%s", out);
    free(out);
    free(err);
    flip_and_verify(path, 7);
    snprintf(cmd, sizeof cmd, "'%s' --verify '%s'", mt_bin("mint-inspect"), tmp("flipped-7.gguf"));
    cr_assert_eq(mt_run(cmd, &out, &err), 1);
    cr_assert(strstr(err, "XXH3"), "%s", err);
    cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
    free(out);
    free(err);
}

// ---------------------------------------------------------------------------------------------
// Never over the input

static void expect_refused(const char *in, const char *out, const uint8_t *orig, size_t n) {
    mint_quantize_params p = params("Q8_0");
    mint_err err;
    cr_assert_eq(mint_quantize_file(in, out, &p, &err), MINT_E_ARG, "in %s out %s", in, out);
    cr_assert(strstr(err.msg, "refusing to write over the input"), "%s", err.msg);
    cr_assert(same_bytes(in, orig, n), "the input changed");
}

Test(quantize_guard, refuses_to_write_over_its_input) {
    char in[4200];
    snprintf(in, sizeof in, "%s", tmp("in.gguf"));
    copy_file(mt_data_path(STORIES), in);
    size_t n;
    uint8_t *orig = read_all(in, &n);
    expect_refused(in, in, orig, n); // the same path
    char other[4200];
    snprintf(other, sizeof other, "%s/./in.gguf", mt_tmpdir());
    expect_refused(in, other, orig, n); // another spelling of it
    cr_assert_eq(symlink(in, tmp("sym.gguf")), 0, "%s", strerror(errno));
    expect_refused(in, tmp("sym.gguf"), orig, n); // a symlink to it
    expect_refused(tmp("sym.gguf"), in, orig, n); // reading through the symlink
    cr_assert_eq(link(in, tmp("hard.gguf")), 0, "%s", strerror(errno));
    expect_refused(in, tmp("hard.gguf"), orig, n); // a hard link
    struct stat st;
    cr_assert_eq(lstat(tmp("sym.gguf"), &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the symlink was replaced");
    char names[512];
    cr_assert_eq(list_dir(mt_tmpdir(), names, sizeof names), 3, "folder holds: %s", names);
    free(orig);
}

// ---------------------------------------------------------------------------------------------
// Arguments

static mint_status quantize_args(mint_quantize_params *p, mint_err *err) {
    return mint_quantize_file(mt_data_path(STORIES), tmp("args.gguf"), p, err);
}

Test(quantize_args, bad_file_type_names) {
    static const char *bad[] = {"Q4_X", "", "q4_k_mm", "F64", "99", "-1", "Q4_K_M "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mint_quantize_params p = params(bad[i]);
        mint_err err;
        cr_assert_eq(quantize_args(&p, &err), MINT_E_ARG, "'%s'", bad[i]);
        cr_assert_gt(strlen(err.msg), 10);
    }
    mint_quantize_params p = params(NULL);
    mint_err err;
    cr_assert_eq(quantize_args(&p, &err), MINT_E_ARG);
    // Known to llama-quantize, not something mint can make.
    p = params("COPY");
    cr_assert_eq(quantize_args(&p, &err), MINT_E_UNSUPPORTED);
    cr_assert(strstr(err.msg, "COPY"), "%s", err.msg);
    // Case and the llama-quantize aliases and numbers are accepted.
    p = params("q8_0");
    cr_assert_eq(quantize_args(&p, &err), MINT_OK, "%s", err.msg);
    p = params("7"); // Q8_0
    cr_assert_eq(quantize_args(&p, &err), MINT_OK, "%s", err.msg);
    cr_assert(access(tmp("args.gguf"), R_OK) == 0);
}

Test(quantize_args, bad_overrides) {
    static const struct {
        const char *arg;
        mint_status want;
    } cases[] = {
        {"attn_v", MINT_E_ARG},
        {"=Q8_0", MINT_E_ARG},
        {"attn_v=", MINT_E_ARG},
        {"attn_v=Q9_9", MINT_E_ARG},
        {"attn_v=q4_k_m", MINT_E_ARG},
        {"attn_v(=Q8_0", MINT_E_ARG},
        {"attn_v=F64", MINT_E_UNSUPPORTED},
        {"attn_v=Q8_K", MINT_E_UNSUPPORTED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *ov[] = {"ffn_up=Q8_0", cases[i].arg};
        mint_quantize_params p = params("Q4_0");
        p.overrides = ov;
        p.n_overrides = 2;
        mint_err err;
        cr_assert_eq(quantize_args(&p, &err), cases[i].want, "'%s': %s", cases[i].arg, err.msg);
        cr_assert(strstr(err.msg, "--tensor-type"), "'%s': %s", cases[i].arg, err.msg);
    }
    mint_quantize_params p = params("Q4_0");
    p.n_overrides = -1;
    mint_err err;
    cr_assert_eq(quantize_args(&p, &err), MINT_E_ARG);
}

Test(quantize_args, output_and_embedding_types_mint_cannot_write) {
    static const struct {
        const char *type;
        mint_status want;
    } cases[] = {{"Q9_9", MINT_E_ARG},
                 {"", MINT_E_ARG},
                 {"F64", MINT_E_UNSUPPORTED},
                 {"Q8_K", MINT_E_UNSUPPORTED},
                 {"Q8_1", MINT_E_UNSUPPORTED}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        mint_quantize_params p = params("Q4_0");
        mint_err err;
        p.output_type = cases[i].type;
        cr_assert_eq(quantize_args(&p, &err), cases[i].want, "'%s': %s", cases[i].type, err.msg);
        cr_assert(strstr(err.msg, "--output-tensor-type"), "%s", err.msg);
        p = params("Q4_0");
        p.token_embd_type = cases[i].type;
        cr_assert_eq(quantize_args(&p, &err), cases[i].want, "'%s': %s", cases[i].type, err.msg);
        cr_assert(strstr(err.msg, "--token-embedding-type"), "%s", err.msg);
    }
    cr_assert(access(tmp("args.gguf"), F_OK) != 0, "a failed call left a file");
}

// Overrides and explicit types are applied (the planner itself is tested in test_mix.c).
Test(quantize_args, overrides_are_applied) {
    const char *ov[] = {"attn_v=Q8_0"};
    mint_quantize_params p = params("Q4_0");
    p.overrides = ov;
    p.n_overrides = 1;
    p.output_type = "F16";
    p.token_embd_type = "Q5_0";
    mint_err err;
    cr_assert_eq(quantize_args(&p, &err), MINT_OK, "%s", err.msg);
    mint_file *f;
    cr_assert_eq(mint_file_open(tmp("args.gguf"), &f, &err), MINT_OK, "%s", err.msg);
    mint_tensor_info t;
    cr_assert_eq(mint_file_find_tensor(f, "blk.3.attn_v.weight", &t), MINT_OK);
    cr_assert_str_eq(mint_type_name(t.type), "Q8_0");
    cr_assert_eq(mint_file_find_tensor(f, "blk.3.attn_q.weight", &t), MINT_OK);
    cr_assert_str_eq(mint_type_name(t.type), "Q4_0");
    cr_assert_eq(mint_file_find_tensor(f, "output.weight", &t), MINT_OK);
    cr_assert_str_eq(mint_type_name(t.type), "F16");
    cr_assert_eq(mint_file_find_tensor(f, "token_embd.weight", &t), MINT_OK);
    cr_assert_str_eq(mint_type_name(t.type), "Q5_0");
    uint32_t ft;
    cr_assert_eq(mint_file_get_u32(f, "general.file_type", &ft, &err), MINT_OK);
    cr_assert_eq(ft, 2); // MOSTLY_Q4_0
    mint_file_close(f);
}

// A quantized source is refused unless allow_requantize; F16 sources are not "quantized", and
// tensors that keep their type are plain copies that need no permission.
Test(quantize_args, requantize_needs_permission) {
    mint_quantize_params p = params("Q4_0");
    mint_err err;
    const char *out = tmp("rq.gguf");
    cr_assert_eq(mint_quantize_file(mt_data_path("quant/stories260K-q8_0.gguf"), out, &p, &err),
                 MINT_E_ARG);
    cr_assert(strstr(err.msg, "already Q8_0") && strstr(err.msg, "--allow-requantize"), "%s",
              err.msg);
    cr_assert(access(out, F_OK) != 0, "a refused run left a file");

    p.allow_requantize = true;
    cr_assert_eq(mint_quantize_file(mt_data_path("quant/stories260K-q8_0.gguf"), out, &p, &err),
                 MINT_OK, "%s", err.msg);
    mint_file *f;
    cr_assert_eq(mint_file_open(out, &f, &err), MINT_OK, "%s", err.msg);
    mint_tensor_info t;
    cr_assert_eq(mint_file_find_tensor(f, "blk.0.attn_q.weight", &t), MINT_OK);
    cr_assert_str_eq(mint_type_name(t.type), "Q4_0");
    uint64_t checked;
    cr_assert_eq(mint_verify_hashes(f, &checked, &err), MINT_OK, "%s", err.msg);
    mint_file_close(f);

    // F16 -> Q8_0: not a requantization.
    p = params("Q8_0");
    cr_assert_eq(mint_quantize_file(mt_data_path("quant/stories260K-f16.gguf"), out, &p, &err),
                 MINT_OK, "%s", err.msg);
    // Q8_0 -> Q8_0: every tensor keeps its type, so the data section is the source's.
    cr_assert_eq(mint_quantize_file(mt_data_path("quant/stories260K-q8_0.gguf"), out, &p, &err),
                 MINT_OK, "%s", err.msg);
    const fixture fx = {"stories260K-q8_0.gguf", "quant/stories260K-q8_0.gguf", "Q8_0", false};
    mint_file *a, *b;
    cr_assert_eq(mint_file_open(out, &a, &err), MINT_OK);
    cr_assert_eq(mint_file_open(mt_data_path("quant/stories260K-q8_0.gguf"), &b, &err), MINT_OK);
    mint_file_info ai, bi;
    mint_file_get_info(a, &ai);
    mint_file_get_info(b, &bi);
    cr_assert_eq(ai.data_size, bi.data_size);
    mint_tensor_info t0a, t0b;
    mint_file_tensor(a, 0, &t0a);
    mint_file_tensor(b, 0, &t0b);
    cr_assert(memcmp((const uint8_t *)t0a.data, (const uint8_t *)t0b.data, ai.data_size) == 0,
              "%s: data section changed", fx.file);
    mint_file_close(a);
    mint_file_close(b);
}

Test(quantize_args, missing_input_and_unwritable_output) {
    mint_quantize_params p = params("Q8_0");
    mint_err err;
    cr_assert_eq(mint_quantize_file(tmp("nope.gguf"), tmp("out.gguf"), &p, &err), MINT_E_IO);
    cr_assert(strstr(err.msg, "nope.gguf"), "%s", err.msg);
    cr_assert_eq(mint_quantize_file(mt_data_path(STORIES), tmp("no-such-dir/out.gguf"), &p, &err),
                 MINT_E_IO);
    cr_assert(strstr(err.msg, "no-such-dir"), "%s", err.msg);
    // Not a model: a text file.
    cr_assert_eq(mint_quantize_file(mt_data_path("tinystories_val.txt"), tmp("out.gguf"), &p, &err),
                 MINT_E_FORMAT);
    char names[512];
    cr_assert_eq(list_dir(mt_tmpdir(), names, sizeof names), 0, "folder holds: %s", names);
}

// ---------------------------------------------------------------------------------------------
// Replace only on success

Test(quantize_atomic, failed_run_leaves_previous_output) {
    const char *out = tmp("out.gguf");
    static const char previous[] = "previous contents of OUT\n";
    cr_assert(mt_write_file(out, previous, sizeof previous - 1));
    mint_quantize_params p = params("Q4_0");
    mint_err err;
    // Refused after the source was opened and planned: requantizing without permission.
    cr_assert_eq(mint_quantize_file(mt_data_path("quant/stories260K-q8_0.gguf"), out, &p, &err),
                 MINT_E_ARG);
    cr_assert(same_bytes(out, (const uint8_t *)previous, sizeof previous - 1));
    // Refused for a bad override, before anything was read.
    const char *ov[] = {"attn_v=Q9_9"};
    p.overrides = ov;
    p.n_overrides = 1;
    cr_assert_eq(mint_quantize_file(mt_data_path(STORIES), out, &p, &err), MINT_E_ARG);
    cr_assert(same_bytes(out, (const uint8_t *)previous, sizeof previous - 1));
    char names[512];
    cr_assert_eq(list_dir(mt_tmpdir(), names, sizeof names), 1, "folder holds: %s", names);
    // A successful run replaces it.
    p = params("Q4_0");
    cr_assert_eq(mint_quantize_file(mt_data_path(STORIES), out, &p, &err), MINT_OK, "%s", err.msg);
    const fixture fx = {"stories260K-q4_0.gguf", STORIES, "Q4_0", false};
    compare_with_llama(&fx, out);
    struct stat st;
    cr_assert_eq(stat(out, &st), 0);
    // A new file's usual mode (0644 less the umask), not the temporary file's 0600 default.
    mode_t mask = umask(0);
    umask(mask);
    cr_assert_eq(st.st_mode & 0777, 0644 & ~mask, "mode %o", st.st_mode & 0777);
    cr_assert_eq(list_dir(mt_tmpdir(), names, sizeof names), 1, "folder holds: %s", names);
}

// ---------------------------------------------------------------------------------------------
// SIGKILL at random moments

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// Starts mint-quantize --overwrite IN OUT Q4_K_M on one thread; its stderr goes to `log` (outside
// the folder of OUT, whose listing is checked).
static pid_t spawn_quantize(const char *in, const char *out, const char *log) {
    const char *bin = mt_bin("mint-quantize");
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        int logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
        if (logfd >= 0) dup2(logfd, STDERR_FILENO);
        execl(bin, bin, "-t", "1", "--no-progress", "--overwrite", in, out, "Q4_K_M", (char *)NULL);
        _exit(127);
    }
    return pid;
}

// A small text file's contents for a message (leaks; the test process ends soon).
static const char *file_text(const char *path) {
    size_t n;
    uint8_t *b = mt_read_file(path, &n);
    return b ? (const char *)b : "(no file)";
}

static int wait_status(pid_t pid) {
    int status;
    while (waitpid(pid, &status, 0) < 0) cr_assert_eq(errno, EINTR);
    return status;
}

Test(quantize_atomic, sigkill_leaves_old_or_nothing, .timeout = MT_HANG(120)) {
    char in[4200]; // mt_data_path's buffers rotate: keep a copy
    snprintf(in, sizeof in, "%s", mt_data_path(TINY));
    size_t in_len;
    uint8_t *in_bytes = read_all(in, &in_len);
    const uint64_t in_hash = mint_hash64(in_bytes, in_len);
    free(in_bytes);

    // A full run, timed (best of three) and kept as the expected output.
    char dir[4200], out[4300], log[4300], names[1024];
    snprintf(log, sizeof log, "%s/stderr.txt", mt_tmpdir());
    snprintf(dir, sizeof dir, "%s/full", mt_tmpdir());
    cr_assert_eq(mkdir(dir, 0755), 0);
    snprintf(out, sizeof out, "%s/out.gguf", dir);
    double run_s = 1e9;
    for (int i = 0; i < 3; i++) {
        double t0 = now();
        int status = wait_status(spawn_quantize(in, out, log));
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "mint-quantize failed: %s",
                  file_text(log));
        double t = now() - t0;
        run_s = t < run_s ? t : run_s;
    }
    size_t full_len;
    uint8_t *full = read_all(out, &full_len);
    const fixture fx = {"tiny256-q4_k_m.gguf", TINY, "Q4_K_M", false};
    compare_with_llama(&fx, out);

    // The previous file some runs start with: a valid GGUF (stories260K), not the new output.
    size_t prev_len;
    uint8_t *prev = read_all(mt_data_path(STORIES), &prev_len);

    uint64_t rng = 0x5eed5eedULL;
    int killed = 0, finished = 0;
    const int runs = 20;
    for (int i = 0; i < runs; i++) {
        bool with_previous = i % 2 == 1;
        snprintf(dir, sizeof dir, "%s/run%02d", mt_tmpdir(), i);
        cr_assert_eq(mkdir(dir, 0755), 0);
        snprintf(out, sizeof out, "%s/out.gguf", dir);
        if (with_previous) cr_assert(mt_write_file(out, prev, prev_len));
        // Delays spread uniformly over 0 .. 1.2 x the run's duration.
        double delay = run_s * 1.2 * (double)(mt_rand(&rng) % 10000) / 10000.0;
        pid_t pid = spawn_quantize(in, out, log);
        struct timespec ts = {(time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
        kill(pid, SIGKILL);
        int status = wait_status(pid);
        bool was_killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
        if (!was_killed)
            cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "run %d: status %d: %s", i,
                      status, file_text(log));
        size_t len;
        uint8_t *got = mt_read_file(out, &len);
        int n_names = list_dir(dir, names, sizeof names);
        if (got && len == full_len && memcmp(got, full, len) == 0) {
            finished++; // done before the kill, or killed after the rename
        } else if (with_previous) {
            cr_assert(got && len == prev_len && memcmp(got, prev, len) == 0,
                      "run %d (kill after %.3f s): the target is neither the old file nor the "
                      "new one (%zu bytes)",
                      i, delay, got ? len : 0);
            killed++;
        } else {
            cr_assert_null(got, "run %d (kill after %.3f s): a partial target of %zu bytes", i,
                           delay, len);
            killed++;
        }
        cr_assert_eq(n_names, got ? 1 : 0, "run %d (kill after %.3f s): stray files: %s", i, delay,
                     names);
        free(got);
    }
    // The delays must really interrupt runs, or the test proves nothing.
    cr_assert_geq(killed, runs / 2, "only %d of %d runs were interrupted (run takes %.3f s)",
                  killed, runs, run_s);
    // Runs that finish before their kill are checked too, but how many do depends on the load
    // of the machine, so their number is only reported.
    cr_log_info("SIGKILL: %d runs interrupted, %d complete (a run takes %.3f s)", killed, finished,
                run_s);

    in_bytes = read_all(in, &in_len);
    cr_assert_eq(mint_hash64(in_bytes, in_len), in_hash, "the input changed");
    free(in_bytes);
    free(full);
    free(prev);
}
