// test_inspect.c - the mint-inspect program, run as a separate process: its text, JSON and hash
// output on stories260K.gguf, its argument errors, and hostile files, each of which must end
// with exit status 1 and exactly one line on stderr, never a signal and never a hang.
#include "formats/gguf.h"
#include "helpers/gguf_fixtures.h"
#include "helpers/helpers.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

// Runs mint-inspect with the arguments under a 20-second timeout; returns the exit status.
static int inspect(const char *args, char **out, char **err) {
    const char *bin = mt_bin("mint-inspect");
    size_t n = strlen(bin) + strlen(args) + 32;
    char *cmd = malloc(n);
    snprintf(cmd, n, "timeout 20 '%s' %s", bin, args);
    int rc = mt_run(cmd, out, err);
    free(cmd);
    return rc;
}

static void expect_contains(const char *text, const char *want) {
    cr_assert(strstr(text, want), "output lacks:\n%s\n--- output:\n%s", want, text);
}

static int count_lines_starting(const char *text, const char *prefix) {
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, prefix, len) == 0) n++;
    return n;
}

// ---------------------------------------------------------------------------------------------
// stories260K.gguf

Test(inspect, text_output) {
    char *out, *err;
    char args[4200];
    snprintf(args, sizeof args, "'%s'", mt_data_path("stories260K.gguf"));
    cr_assert_eq(inspect(args, &out, &err), 0, "stderr: %s", err);
    cr_assert_str_eq(err, "");
    expect_contains(out, "format:      gguf v3\n");
    expect_contains(out, "size:        1185376 bytes\n");
    expect_contains(out, "header:      14152 bytes (19 metadata entries, 48 tensor infos)\n");
    expect_contains(out, "alignment:   32\n");
    expect_contains(out, "data:        byte 14176, 1171200 bytes\n");
    expect_contains(out, "\nmetadata (19 entries):\n");
    // Arrays are summarised: element type, length, first items.
    expect_contains(out,
                    "  tokenizer.ggml.tokens                        arr  [str; 512] \"<unk>\", "
                    "\"<s>\", \"</s>\", \"<0x00>\", \"<0x01>\", ...\n");
    expect_contains(out, "  tokenizer.ggml.token_type                    arr  [i32; 512] 2, 3, 3, "
                         "6, 6, ...\n");
    expect_contains(out, "  general.architecture                         str  \"llama\"\n");
    expect_contains(out, "  llama.context_length                         u32  2048\n");
    expect_contains(out, "  llama.attention.layer_norm_rms_epsilon       f32  9.99999975e-06\n");
    expect_contains(out, "\ntensors (48):\n");
    expect_contains(out, "  4    blk.0.attn_k.weight              F32      [64, 32]                "
                         "     278784         8192\n");
    expect_contains(out, "  47   blk.4.ffn_norm.weight            F32      [64]                    "
                         "    1170944          256\n");
    expect_contains(out, "  parameters:      292800\n");
    expect_contains(out, "  tensor bytes:    1171200 (1.12 MiB)\n");
    expect_contains(out, "  bits per weight: 32.0000\n");
    expect_contains(out, "  types:           F32x48\n");
    cr_assert_null(strstr(out, "hashes"));
    cr_assert_null(strstr(out, "* = a type"));
    cr_assert_eq(count_lines_starting(out, "  blk."), 0); // rows start with the index
    int rows = 0;
    for (int i = 0; i < 48; i++) {
        char prefix[16];
        snprintf(prefix, sizeof prefix, "  %-4d ", i);
        rows += count_lines_starting(out, prefix);
    }
    cr_assert_eq(rows, 48);
    free(out);
    free(err);
}

Test(inspect, json_output) {
    char *out, *err;
    char args[4200];
    snprintf(args, sizeof args, "--json '%s'", mt_data_path("stories260K.gguf"));
    cr_assert_eq(inspect(args, &out, &err), 0, "stderr: %s", err);
    json_object *j = json_tokener_parse(out);
    cr_assert_not_null(j, "not JSON: %s", out);
    cr_assert_str_eq(json_object_get_string(mt_jget(j, "format")), "gguf");
    cr_assert_eq(json_object_get_int64(mt_jget(j, "version")), 3);
    cr_assert_eq(json_object_get_int64(mt_jget(j, "size")), 1185376);
    cr_assert_eq(json_object_get_int64(mt_jget(j, "header_size")), 14152);
    cr_assert_eq(json_object_get_int64(mt_jget(j, "data_offset")), 14176);
    cr_assert_eq(json_object_get_int64(mt_jget(j, "data_size")), 1171200);
    cr_assert_eq(json_object_get_int64(mt_jget(j, "n_kv")), 19);

    json_object *md = mt_jget(j, "metadata");
    cr_assert_eq(json_object_array_length(md), 19);
    json_object *tokens = mt_jidx(md, 0);
    cr_assert_str_eq(json_object_get_string(mt_jget(tokens, "key")), "tokenizer.ggml.tokens");
    cr_assert_str_eq(json_object_get_string(mt_jget(tokens, "type")), "arr");
    cr_assert_str_eq(json_object_get_string(mt_jget(tokens, "elem_type")), "str");
    cr_assert_eq(json_object_get_int64(mt_jget(tokens, "n")), 512);
    cr_assert_eq(json_object_get_int64(mt_jget(tokens, "offset")), 24);
    json_object *head = mt_jget(tokens, "head");
    cr_assert_eq(json_object_array_length(head), 8);
    cr_assert_str_eq(json_object_get_string(mt_jidx(head, 0)), "<unk>");
    cr_assert_str_eq(json_object_get_string(mt_jidx(head, 2)), "</s>");
    json_object *scores = mt_jget(mt_jidx(md, 1), "head");
    cr_assert(json_object_is_type(mt_jidx(scores, 0), json_type_double) ||
              json_object_is_type(mt_jidx(scores, 0), json_type_int));
    json_object *ctx = mt_jidx(md, 11);
    cr_assert_str_eq(json_object_get_string(mt_jget(ctx, "key")), "llama.context_length");
    cr_assert_str_eq(json_object_get_string(mt_jget(ctx, "type")), "u32");
    cr_assert(json_object_is_type(mt_jget(ctx, "value"), json_type_int));
    cr_assert_eq(json_object_get_int64(mt_jget(ctx, "value")), 2048);
    json_object *eps = mt_jidx(md, 18);
    cr_assert_str_eq(json_object_get_string(mt_jget(eps, "type")), "f32");
    cr_assert_eq((float)json_object_get_double(mt_jget(eps, "value")), 1e-5f);
    cr_assert_str_eq(json_object_get_string(mt_jget(mt_jidx(md, 4), "value")), "llama");
    cr_assert_eq(json_object_get_int64(mt_jget(mt_jidx(md, 9), "value")), 4294967295ll);

    json_object *ts = mt_jget(j, "tensors");
    cr_assert_eq(json_object_array_length(ts), 48);
    json_object *k = mt_jidx(ts, 4);
    cr_assert_str_eq(json_object_get_string(mt_jget(k, "name")), "blk.0.attn_k.weight");
    cr_assert_str_eq(json_object_get_string(mt_jget(k, "type")), "F32");
    cr_assert_eq(json_object_get_int64(mt_jget(k, "type_code")), 0);
    cr_assert(json_object_get_boolean(mt_jget(k, "computable")));
    json_object *ne = mt_jget(k, "ne");
    cr_assert_eq(json_object_array_length(ne), 2);
    cr_assert_eq(json_object_get_int64(mt_jidx(ne, 0)), 64);
    cr_assert_eq(json_object_get_int64(mt_jidx(ne, 1)), 32);
    cr_assert_eq(json_object_get_int64(mt_jget(k, "offset")), 278784);
    cr_assert_eq(json_object_get_int64(mt_jget(k, "bytes")), 8192);
    json_object *x;
    cr_assert(!json_object_object_get_ex(k, "xxh3", &x)); // only with --hash

    json_object *tot = mt_jget(j, "totals");
    cr_assert_eq(json_object_get_int64(mt_jget(tot, "parameters")), 292800);
    cr_assert_eq(json_object_get_int64(mt_jget(tot, "bytes")), 1171200);
    cr_assert_eq(json_object_get_double(mt_jget(tot, "bpw")), 32.0);
    json_object *types = mt_jget(tot, "types");
    cr_assert_eq(json_object_object_length(types), 1);
    cr_assert_eq(json_object_get_int64(mt_jget(types, "F32")), 48);
    json_object_put(j);
    free(out);
    free(err);
}

static void hex_of(uint64_t h, char out[17]) {
    snprintf(out, 17, "%016" PRIx64, h);
}

Test(inspect, hashes_match_the_tensor_bytes) {
    const char *path = mt_data_path("stories260K.gguf");
    size_t len;
    uint8_t *file = mt_read_file(path, &len);
    mint_file *f;
    mint_err e = {0};
    cr_assert_eq(mint_file_open(path, &f, &e), MINT_OK, "%s", e.msg);

    char *out, *err;
    char args[4200];
    snprintf(args, sizeof args, "--hash '%s'", path);
    cr_assert_eq(inspect(args, &out, &err), 0, "stderr: %s", err);
    expect_contains(out, "\nhashes (XXH3-64):\n");
    cr_assert_eq(count_lines_starting(out, "  xxh3 "), 49);
    for (uint64_t i = 0; i < 48; i++) {
        mint_tensor_info t;
        mint_file_tensor(f, i, &t);
        cr_assert_eq(memcmp(t.data, file + 14176 + t.offset, t.nbytes), 0);
        char hex[17], line[160];
        hex_of(mint_hash64(file + t.file_offset, t.nbytes), hex);
        snprintf(line, sizeof line, "  xxh3 %s  %s\n", hex, t.name);
        expect_contains(out, line);
    }
    char hex[17], line[160];
    hex_of(mint_hash64(file + 14176, 1171200), hex);
    snprintf(line, sizeof line, "  xxh3 %s  [data section: byte 14176, 1171200 bytes]\n", hex);
    expect_contains(out, line);
    // Tied weights: token_embd and output hold the same bytes, so the same hash.
    mint_tensor_info emb, outw;
    mint_file_find_tensor(f, "token_embd.weight", &emb);
    mint_file_find_tensor(f, "output.weight", &outw);
    cr_assert_eq(mint_hash64(emb.data, emb.nbytes), mint_hash64(outw.data, outw.nbytes));
    free(out);
    free(err);

    // The same hashes in JSON.
    snprintf(args, sizeof args, "--json --hash '%s'", path);
    cr_assert_eq(inspect(args, &out, &err), 0, "stderr: %s", err);
    json_object *j = json_tokener_parse(out);
    cr_assert_not_null(j);
    json_object *ts = mt_jget(j, "tensors");
    for (uint64_t i = 0; i < 48; i++) {
        mint_tensor_info t;
        mint_file_tensor(f, i, &t);
        hex_of(mint_hash64(t.data, t.nbytes), hex);
        cr_assert_str_eq(json_object_get_string(mt_jget(mt_jidx(ts, i), "xxh3")), hex);
    }
    hex_of(mint_hash64(file + 14176, 1171200), hex);
    cr_assert_str_eq(json_object_get_string(mt_jget(j, "data_xxh3")), hex);
    json_object_put(j);
    free(out);
    free(err);
    mint_file_close(f);
    free(file);
}

Test(inspect, vocab_only_file) {
    char *out, *err;
    char args[4200];
    snprintf(args, sizeof args, "'%s'", mt_data_path("ggml-vocab-llama-spm.gguf"));
    cr_assert_eq(inspect(args, &out, &err), 0, "stderr: %s", err);
    expect_contains(out, "header:      723869 bytes (22 metadata entries, 0 tensor infos)\n");
    expect_contains(out, "  tokenizer.ggml.add_bos_token                 bool true\n");
    expect_contains(out, "\ntensors (0):\n");
    expect_contains(out, "  types:           (none)\n");
    free(out);
    free(err);
}

// ---------------------------------------------------------------------------------------------
// Arguments

static void expect_usage_error(const char *args, const char *want) {
    char *out, *err;
    int rc = inspect(args, &out, &err);
    cr_assert_eq(rc, 2, "'%s': exit %d", args, rc);
    cr_assert_str_eq(out, "");
    size_t n = strlen(err);
    cr_assert(n > 0 && err[n - 1] == '\n' && !memchr(err, '\n', n - 1), "'%s': stderr %s", args,
              err);
    expect_contains(err, want);
    free(out);
    free(err);
}

Test(inspect, bad_arguments) {
    expect_usage_error("--bogus x.gguf", "mint-inspect: unknown option '--bogus'");
    expect_usage_error("-x", "mint-inspect: unknown option '-x'");
    expect_usage_error("", "mint-inspect: no file given");
    expect_usage_error("--json", "mint-inspect: no file given");
    expect_usage_error("a.gguf b.gguf", "mint-inspect: more than one file given");
    char *out, *err;
    cr_assert_eq(inspect("--help", &out, &err), 0);
    const char *usage = "usage: mint-inspect [--json] [--hash] [--verify] FILE|FOLDER\n";
    cr_assert_eq(strncmp(out, usage, strlen(usage)), 0, "%s", out);
    cr_assert_str_eq(err, "");
    free(out);
    free(err);
}

// ---------------------------------------------------------------------------------------------
// Hostile files

// Runs mint-inspect (in the given mode) on path and asserts: exit status 1 (not a signal, not
// the timeout's 124), nothing on stdout, exactly one line on stderr.
static void expect_one_line_failure(const char *path, const char *mode, const char *want) {
    char *out, *err;
    char args[4200];
    snprintf(args, sizeof args, "%s '%s'", mode, path);
    int rc = inspect(args, &out, &err);
    cr_assert_eq(rc, 1, "%s %s: exit status %d, stderr: %s", mode, path, rc, err);
    cr_assert_str_eq(out, "", "%s: stdout not empty", path);
    size_t n = strlen(err);
    cr_assert(n > 20 && err[n - 1] == '\n' && !memchr(err, '\n', n - 1),
              "%s: stderr is not one line: [%s]", path, err);
    cr_assert_eq(strncmp(err, "mint-inspect: ", 14), 0, "%s", err);
    if (want) expect_contains(err, want);
    free(out);
    free(err);
}

static const char *write_tmp(const char *name, const void *p, size_t n) {
    const char *path = mt_path(mt_tmpdir(), name);
    cr_assert(mt_write_file(path, p, n), "cannot write %s", path);
    return path;
}

Test(inspect, hostile_random_bytes) {
    const size_t sizes[] = {1, 7, 24, 100, 4096, 65536};
    uint64_t seed = 12345;
    uint8_t *buf = malloc(65536);
    for (int gguf_prefix = 0; gguf_prefix < 2; gguf_prefix++)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            for (size_t j = 0; j < sizes[i]; j++) buf[j] = (uint8_t)(mt_rand(&seed) >> 56);
            // Half the files start like a real GGUF v3, so the reader gets to the counts.
            if (gguf_prefix && sizes[i] >= 8) memcpy(buf, "GGUF\3\0\0\0", 8);
            char name[64];
            snprintf(name, sizeof name, "random-%d-%zu.gguf", gguf_prefix, sizes[i]);
            expect_one_line_failure(write_tmp(name, buf, sizes[i]), "", NULL);
        }
    free(buf);
}

Test(inspect, hostile_truncations) {
    size_t len;
    uint8_t *file = mt_read_file(mt_data_path("stories260K.gguf"), &len);
    const size_t cuts[] = {3,     4,     8,     23,    24,    100,    6470,   10000,
                           11347, 14100, 14152, 14160, 14176, 600000, 1185375};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        char name[64];
        snprintf(name, sizeof name, "cut-%zu.gguf", cuts[i]);
        const char *path = write_tmp(name, file, cuts[i]);
        expect_one_line_failure(path, "", NULL);
        if (i % 5 == 0) {
            expect_one_line_failure(path, "--json", NULL);
            expect_one_line_failure(path, "--hash", NULL);
        }
    }
    free(file);
}

// stories260K with a few bytes changed.
static const char *patched_stories(const char *name, size_t at, uint64_t v, int width) {
    size_t len;
    uint8_t *file = mt_read_file(mt_data_path("stories260K.gguf"), &len);
    if (width == 4)
        mt_put_u32(file, at, (uint32_t)v);
    else
        mt_put_u64(file, at, v);
    const char *path = write_tmp(name, file, len);
    free(file);
    return path;
}

Test(inspect, hostile_counts_dimensions_offsets) {
    size_t len;
    uint8_t *file = mt_read_file(mt_data_path("stories260K.gguf"), &len);
    mt_tinfo_pos emb = mt_find_tinfo(file, len, "token_embd.weight");
    mt_tinfo_pos last = mt_find_tinfo(file, len, "blk.4.ffn_norm.weight");
    mt_tinfo_pos outw = mt_find_tinfo(file, len, "output.weight");
    free(file);
    expect_one_line_failure(patched_stories("n-tensors.gguf", 8, 1ull << 63, 8), "",
                            "tensor count 9223372036854775808 at byte 8");
    expect_one_line_failure(patched_stories("n-kv.gguf", 16, 1ull << 40, 8), "",
                            "metadata count 1099511627776 at byte 16");
    expect_one_line_failure(patched_stories("n-dims.gguf", emb.n_dims, 77, 4), "--json",
                            "n_dims 77");
    expect_one_line_failure(patched_stories("ne-huge.gguf", emb.ne, 1ull << 62, 8), "",
                            "makes the element count overflow");
    expect_one_line_failure(patched_stories("ne-neg.gguf", emb.ne + 8, UINT64_MAX, 8), "",
                            "ne[1] = -1");
    expect_one_line_failure(patched_stories("type.gguf", emb.type, 99, 4), "--hash",
                            "type code 99");
    expect_one_line_failure(patched_stories("off-far.gguf", emb.offset, 1ull << 40, 8), "--hash",
                            "runs past the end of the data section");
    expect_one_line_failure(patched_stories("off-end.gguf", last.offset, 1170944 + 32, 8), "",
                            "runs past the end of the data section");
    expect_one_line_failure(patched_stories("overlap.gguf", outw.offset, 0, 8), "", "overlap");
    expect_one_line_failure(patched_stories("key-len.gguf", 24, 1ull << 50, 8), "",
                            "key length 1125899906842624 at byte 24 exceeds the limit of 65535");
    expect_one_line_failure(patched_stories("arr-len.gguf", 24 + 8 + 21 + 4 + 4, 1ull << 29, 8), "",
                            "array length 536870912");
    expect_one_line_failure(patched_stories("type-change.gguf", 10705 + 8 + 20, MINT_VAL_U32, 4),
                            "",
                            NULL); // general.architecture turned into a u32: a type change
}

Test(inspect, hostile_keys_and_names_stay_on_one_line) {
    mint_gguf_writer *w = mint_gguf_writer_create();
    cr_assert_eq(mint_gguf_add_u32(w, "evil\nkey\r\x1b[31m", 1), MINT_OK);
    cr_assert_eq(mint_gguf_add_u32(w, "evil\nkey\r\x1b[31m", 2), MINT_OK);
    uint8_t *buf;
    size_t len;
    cr_assert_eq(mint_gguf_writer_write_mem(w, &buf, &len, NULL), MINT_OK);
    mint_gguf_writer_free(w);
    expect_one_line_failure(write_tmp("evil-key.gguf", buf, len), "", "duplicates");
    free(buf);

    w = mint_gguf_writer_create();
    int64_t ne[1] = {8};
    cr_assert_eq(mint_gguf_add_tensor(w, "evil\nname", MINT_TYPE_F32, 1, ne, NULL, 32), MINT_OK);
    cr_assert_eq(mint_gguf_add_tensor(w, "evil\nname", MINT_TYPE_F32, 1, ne, NULL, 32), MINT_OK);
    cr_assert_eq(mint_gguf_writer_write_mem(w, &buf, &len, NULL), MINT_OK);
    mint_gguf_writer_free(w);
    expect_one_line_failure(write_tmp("evil-name.gguf", buf, len), "", "'evil?name'");
    free(buf);
}

Test(inspect, hostile_paths) {
    const char *dir = mt_tmpdir();
    expect_one_line_failure(dir, "", "config.json: cannot open");
    expect_one_line_failure(mt_path(dir, "missing.gguf"), "", "cannot open");
    expect_one_line_failure(write_tmp("empty.gguf", "", 0), "",
                            "header: magic at byte 0 needs 4 bytes, only 0 remain");
    const char *fifo = mt_path(dir, "fifo.gguf");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    expect_one_line_failure(fifo, "", "not a regular file"); // would block in open()
    expect_one_line_failure("/dev/null", "--json", "not a regular file");
}

// ---------------------------------------------------------------------------------------------
// A type ggml knows and mint cannot compute with is listed, marked.

Test(inspect, uncomputable_type_is_marked) {
    mint_gguf_writer *w = mint_gguf_writer_create();
    cr_assert_eq(mint_gguf_add_str(w, "general.architecture", "llama"), MINT_OK);
    int64_t a[1] = {4}, b[2] = {256, 2};
    cr_assert_eq(mint_gguf_add_tensor(w, "norm.weight", MINT_TYPE_F32, 1, a, NULL, 16), MINT_OK);
    // Q8_K: an activation type of ggml's, never computed with as a weight
    cr_assert_eq(mint_gguf_add_tensor(w, "w.q8k", MINT_TYPE_Q8_K, 2, b, NULL, 584), MINT_OK);
    uint8_t *buf;
    size_t len;
    cr_assert_eq(mint_gguf_writer_write_mem(w, &buf, &len, NULL), MINT_OK);
    mint_gguf_writer_free(w);
    const char *path = write_tmp("q8k.gguf", buf, len);
    free(buf);

    char *out, *err;
    char args[4200];
    snprintf(args, sizeof args, "'%s'", path);
    cr_assert_eq(inspect(args, &out, &err), 0, "stderr: %s", err);
    expect_contains(out, "  1    w.q8k                            Q8_K*    [256, 2]                "
                         "         32          584\n");
    expect_contains(out, "  0    norm.weight                      F32      [4]");
    expect_contains(out, "  types:           F32x1 Q8_Kx1\n");
    expect_contains(out, "  * = a type mint lists but has no kernels for");
    expect_contains(out, "  parameters:      516\n");
    free(out);
    free(err);

    snprintf(args, sizeof args, "--json '%s'", path);
    cr_assert_eq(inspect(args, &out, &err), 0, "stderr: %s", err);
    json_object *j = json_tokener_parse(out);
    cr_assert_not_null(j);
    json_object *t = mt_jidx(mt_jget(j, "tensors"), 1);
    cr_assert_str_eq(json_object_get_string(mt_jget(t, "type")), "Q8_K");
    cr_assert_eq(json_object_get_int64(mt_jget(t, "type_code")), 15);
    cr_assert(!json_object_get_boolean(mt_jget(t, "computable")));
    cr_assert(json_object_get_boolean(mt_jget(mt_jidx(mt_jget(j, "tensors"), 0), "computable")));
    json_object_put(j);
    free(out);
    free(err);
}

// Odd but valid values still give valid JSON: control bytes and NUL in strings and keys, NaN and
// infinities, extreme integers, empty arrays and strings.
Test(inspect, json_stays_valid_for_odd_values) {
    mint_gguf_writer *w = mint_gguf_writer_create();
    cr_assert_eq(mint_gguf_add_strn(w, "s.nul", "a\0b\"c\\\x01\x7f\n", 9), MINT_OK);
    cr_assert_eq(mint_gguf_add_str(w, "k\"\\\x02", ""), MINT_OK);
    cr_assert_eq(mint_gguf_add_f32(w, "f.nan", __builtin_nanf("")), MINT_OK);
    cr_assert_eq(mint_gguf_add_f32(w, "f.inf", __builtin_inff()), MINT_OK);
    double ninf = -__builtin_inf();
    cr_assert_eq(mint_gguf_add_scalar(w, "f.ninf", MINT_VAL_F64, &ninf), MINT_OK);
    int64_t i64 = INT64_MIN;
    cr_assert_eq(mint_gguf_add_scalar(w, "i.min", MINT_VAL_I64, &i64), MINT_OK);
    const float fa[3] = {__builtin_nanf(""), -0.0f, 1e-45f};
    cr_assert_eq(mint_gguf_add_arr(w, "a.f32", MINT_VAL_F32, fa, 3), MINT_OK);
    const uint8_t ba[2] = {1, 0};
    cr_assert_eq(mint_gguf_add_arr(w, "a.bool", MINT_VAL_BOOL, ba, 2), MINT_OK);
    cr_assert_eq(mint_gguf_add_arr(w, "a.empty", MINT_VAL_I8, NULL, 0), MINT_OK);
    uint8_t *buf;
    size_t len;
    cr_assert_eq(mint_gguf_writer_write_mem(w, &buf, &len, NULL), MINT_OK);
    mint_gguf_writer_free(w);
    const char *path = write_tmp("odd.gguf", buf, len);
    free(buf);

    char *out, *err;
    char args[4200];
    snprintf(args, sizeof args, "--json --hash '%s'", path);
    cr_assert_eq(inspect(args, &out, &err), 0, "stderr: %s", err);
    json_object *j = json_tokener_parse(out);
    cr_assert_not_null(j, "not JSON: %s", out);
    json_object *md = mt_jget(j, "metadata");
    cr_assert_eq(json_object_array_length(md), 9);
    json_object *s = mt_jget(mt_jidx(md, 0), "value");
    cr_assert_eq(json_object_get_string_len(s), 9);
    cr_assert_eq(memcmp(json_object_get_string(s), "a\0b\"c\\\x01\x7f\n", 9), 0);
    cr_assert_str_eq(json_object_get_string(mt_jget(mt_jidx(md, 1), "key")), "k\"\\\x02");
    cr_assert_str_eq(json_object_get_string(mt_jget(mt_jidx(md, 2), "value")), "nan");
    cr_assert_str_eq(json_object_get_string(mt_jget(mt_jidx(md, 3), "value")), "inf");
    cr_assert_str_eq(json_object_get_string(mt_jget(mt_jidx(md, 4), "value")), "-inf");
    cr_assert_eq(json_object_get_int64(mt_jget(mt_jidx(md, 5), "value")), INT64_MIN);
    json_object *head = mt_jget(mt_jidx(md, 6), "head");
    cr_assert_str_eq(json_object_get_string(mt_jidx(head, 0)), "nan");
    cr_assert_eq((float)json_object_get_double(mt_jidx(head, 2)), 1e-45f);
    cr_assert(json_object_get_boolean(mt_jidx(mt_jget(mt_jidx(md, 7), "head"), 0)));
    cr_assert_eq(json_object_array_length(mt_jget(mt_jidx(md, 8), "head")), 0);
    cr_assert_eq(json_object_array_length(mt_jget(j, "tensors")), 0);
    json_object_put(j);
    free(out);
    free(err);

    // The text form stays one record per line.
    snprintf(args, sizeof args, "'%s'", path);
    cr_assert_eq(inspect(args, &out, &err), 0, "stderr: %s", err);
    expect_contains(out, "  s.nul                                        str  "
                         "\"a\\x00b\\\"c\\\\\\x01\\x7f\\n\"\n");
    expect_contains(out, "  k\"\\?                                         str  \"\"\n");
    expect_contains(out, "  f.nan                                        f32  nan\n");
    free(out);
    free(err);
}
