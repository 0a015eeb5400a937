// test_quantize_imatrix.c - mint_quantize_file (and mint-quantize) given an importance matrix
// against llama-quantize --imatrix: the tiny synthetic llama3 and qwen3moe files quantized with
// the importance matrices llama-imatrix made for them give, byte for byte, the tensors
// llama-quantize wrote, in its order with its types, its metadata keys in its order and its
// quantize.imatrix.* values; with --include-weights / --exclude-weights, a legacy .dat matrix,
// each expert of a stack weighted by its own importance, and llama-quantize's refusals.
//
// The reference is tests/reference/imatrix_quant/ (its README says how it was made): the
// matrices themselves and cases.json, the hashes of what llama-quantize wrote.
#include "helpers/helpers.h"
#include "helpers/tool.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REF_DIR "tests/reference/imatrix_quant"

static json_object *cases(void) {
    return mt_jget(mt_json_source(REF_DIR "/cases.json"), "cases");
}

// A file of the reference folder, by its bare name.
static const char *ref_file(const char *name) {
    static char path[4200];
    const char *src = getenv("MINT_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/" REF_DIR "/%s", src ? src : ".", name);
    return path;
}

// The tiny F32 file of an architecture, written once into the test's folder and checked
// against the sha256 llama-quantize ran on.
static const char *tiny_file(const char *arch, const char *sha256) {
    static char done[2][64], paths[2][4200]; // written in this test process
    for (int i = 0; i < 2; i++)
        if (!strcmp(done[i], arch)) return paths[i];
    const int slot = done[0][0] ? 1 : 0;
    char name[64];
    snprintf(name, sizeof name, "%s-tiny.gguf", arch);
    char *path = paths[slot];
    snprintf(path, sizeof paths[slot], "%s", mt_path(mt_tmpdir(), name));
    mint_synth_params p = {
        .preset = arch, .ftype = "F32", .seed = 1, .n_threads = 1, .shape = "tiny"};
    mint_err err;
    cr_assert_eq(mint_synth_write(&p, path, &err), MINT_OK, "%s: %s", arch, err.msg);
    char cmd[4400], *out = NULL;
    snprintf(cmd, sizeof cmd, "sha256sum '%s'", path);
    cr_assert_eq(mt_run(cmd, &out, NULL), 0);
    cr_assert(strncmp(out, sha256, 64) == 0,
              "%s: the synthetic writer's file changed (sha256 %.64s, llama-quantize ran on %s): "
              "remake " REF_DIR " (its README)",
              arch, out, sha256);
    free(out);
    snprintf(done[slot], sizeof done[slot], "%s", arch);
    return path;
}

static void hex64(uint64_t v, char out[17]) {
    snprintf(out, 17, "%016" PRIx64, v);
}

// The output against the case: tensors, data section, metadata keys, imatrix values.
static void check_output(const char *path, json_object *c, const char *what) {
    mint_err err;
    mint_file *f;
    cr_assert_eq(mint_file_open(path, &f, &err), MINT_OK, "%s", err.msg);
    mint_file_info info;
    mint_file_get_info(f, &info);
    json_object *tensors = mt_jget(c, "tensors");
    cr_assert_eq(info.n_tensors, json_object_array_length(tensors), "%s: tensor count", what);
    for (uint64_t i = 0; i < info.n_tensors; i++) {
        json_object *t = json_object_array_get_idx(tensors, (size_t)i);
        mint_tensor_info ti;
        cr_assert_eq(mint_file_tensor(f, i, &ti), MINT_OK);
        cr_assert_str_eq(ti.name, json_object_get_string(json_object_array_get_idx(t, 0)),
                         "%s: tensor %" PRIu64, what, i);
        cr_assert_str_eq(mint_type_name(ti.type),
                         json_object_get_string(json_object_array_get_idx(t, 1)), "%s: %s's type",
                         what, ti.name);
        char h[17];
        hex64(mint_hash64(ti.data, (size_t)ti.nbytes), h);
        cr_assert_str_eq(h, json_object_get_string(json_object_array_get_idx(t, 2)),
                         "%s: %s (%s) has other bytes than llama-quantize's", what, ti.name,
                         mint_type_name(ti.type));
    }
    size_t len;
    uint8_t *bytes = mt_read_file(path, &len);
    cr_assert(bytes);
    cr_assert_eq((int64_t)info.data_size, json_object_get_int64(mt_jget(c, "data_size")),
                 "%s: data section size", what);
    char h[17];
    hex64(mint_hash64(bytes + info.data_offset, len - info.data_offset), h);
    cr_assert_str_eq(h, json_object_get_string(mt_jget(c, "data_xxh3")), "%s: data sections", what);
    free(bytes);
    json_object *keys = mt_jget(c, "keys");
    size_t j = 0;
    for (uint64_t i = 0; i < info.n_kv; i++) {
        mint_kv_info kv;
        cr_assert_eq(mint_file_kv(f, i, &kv), MINT_OK);
        if (!strncmp(kv.key, "mint.quantize.", 14)) continue;
        cr_assert_lt(j, json_object_array_length(keys), "%s: extra key %s", what, kv.key);
        cr_assert_str_eq(kv.key, json_object_get_string(json_object_array_get_idx(keys, j)),
                         "%s: metadata entry %zu", what, j);
        j++;
    }
    cr_assert_eq(j, json_object_array_length(keys), "%s: metadata keys", what);
    json_object_object_foreach(mt_jget(c, "imatrix_kv"), key, want) {
        if (json_object_is_type(want, json_type_string)) {
            const char *s;
            uint64_t n;
            cr_assert_eq(mint_file_get_str(f, key, &s, &n, &err), MINT_OK, "%s: %s", what, key);
            cr_assert(n == strlen(json_object_get_string(want)) &&
                          !memcmp(s, json_object_get_string(want), n),
                      "%s: %s is '%.*s', llama-quantize wrote '%s'", what, key, (int)n, s,
                      json_object_get_string(want));
        } else {
            uint32_t v;
            cr_assert_eq(mint_file_get_u32(f, key, &v, &err), MINT_OK, "%s: %s", what, key);
            cr_assert_eq((int64_t)v, json_object_get_int64(want), "%s: %s", what, key);
        }
    }
    uint32_t file_type;
    cr_assert_eq(mint_file_get_u32(f, "general.file_type", &file_type, &err), MINT_OK);
    cr_assert_eq((int64_t)file_type, json_object_get_int64(mt_jget(c, "file_type")),
                 "%s: general.file_type", what);
    mint_file_close(f);
}

// The first tensor type of a case's output mint cannot compute, or NULL.
static const char *uncomputable_type(json_object *c) {
    json_object *tensors = NULL;
    if (!json_object_object_get_ex(c, "tensors", &tensors)) return NULL;
    for (size_t i = 0; i < json_object_array_length(tensors); i++) {
        json_object *t = json_object_array_get_idx(tensors, i);
        const char *name = json_object_get_string(json_object_array_get_idx(t, 1));
        const int type = mint_type_from_name(name);
        if (type < 0 || !mint_type_get((uint32_t)type)->computable) return name;
    }
    return NULL;
}

// Every case of the reference through the library; under the sanitizers (several times slower)
// every third one, the Release run checking all.
static void check_arch(const char *arch) {
    const int step = sizeof MINT_SANITIZE_FLAGS > 1 ? 3 : 1;
    int checked = 0, seen = 0;
    for (size_t k = 0; k < json_object_array_length(cases()); k++) {
        json_object *c = json_object_array_get_idx(cases(), k);
        if (strcmp(json_object_get_string(mt_jget(c, "arch")), arch)) continue;
        if (seen++ % step) continue;
        const char *type = json_object_get_string(mt_jget(c, "type"));
        const char *im_name = json_object_get_string(mt_jget(c, "imatrix"));
        json_object *args = mt_jget(c, "args");
        char what[160];
        snprintf(what, sizeof what, "%s %s with %s%s", arch, type, im_name,
                 json_object_array_length(args) ? " and filters" : "");
        const char *inc[8], *exc[8];
        int n_inc = 0, n_exc = 0;
        bool pure = false;
        for (size_t a = 0; a < json_object_array_length(args); a++) {
            const char *flag = json_object_get_string(json_object_array_get_idx(args, a));
            if (!strcmp(flag, "--pure")) {
                pure = true;
                continue;
            }
            if (a + 1 >= json_object_array_length(args)) break;
            const char *val = json_object_get_string(json_object_array_get_idx(args, ++a));
            if (!strcmp(flag, "--include-weights")) inc[n_inc++] = val;
            if (!strcmp(flag, "--exclude-weights")) exc[n_exc++] = val;
        }
        // A case whose output holds a type mint cannot compute yet (IQ3_S in IQ2_S / IQ2_M
        // files) waits for that type.
        const char *missing = NULL;
        json_object *tensors = NULL;
        if (json_object_object_get_ex(c, "tensors", &tensors))
            for (size_t q = 0; q < json_object_array_length(tensors) && !missing; q++) {
                const char *tt = json_object_get_string(
                    json_object_array_get_idx(json_object_array_get_idx(tensors, q), 1));
                const int ti = mint_type_from_name(tt);
                if (ti < 0 || !mint_type_get((uint32_t)ti)->computable) missing = tt;
            }
        if (missing) {
            cr_log_info("%s: skipped, mint cannot compute %s yet", what, missing);
            continue;
        }
        mint_imatrix *im;
        mint_err err;
        cr_assert_eq(mint_imatrix_load(ref_file(im_name), &im, &err), MINT_OK, "%s", err.msg);
        json_object *src_sha = NULL;
        json_object_object_get_ex(c, "source_sha256", &src_sha);
        const char *src = NULL;
        for (size_t q = 0; !src_sha && q < json_object_array_length(cases()); q++) {
            json_object *o = json_object_array_get_idx(cases(), q);
            if (!strcmp(json_object_get_string(mt_jget(o, "arch")), arch))
                json_object_object_get_ex(o, "source_sha256", &src_sha);
        }
        src = tiny_file(arch, json_object_get_string(src_sha));
        char name[96];
        snprintf(name, sizeof name, "%s-%zu.gguf", arch, k);
        char out[4200];
        snprintf(out, sizeof out, "%s", mt_path(mt_tmpdir(), name));
        mint_quantize_params p;
        memset(&p, 0, sizeof p);
        p.ftype = type;
        p.n_threads = 2;
        p.imatrix = im;
        p.imatrix_file = im_name; // llama-quantize ran beside the matrix: its bare name
        p.include_weights = inc;
        p.n_include_weights = n_inc;
        p.exclude_weights = exc;
        p.n_exclude_weights = n_exc;
        p.pure = pure;
        mint_status st = mint_quantize_file(src, out, &p, &err);
        mint_imatrix_free(im);
        json_object *refused = NULL;
        const char *foreign = uncomputable_type(c);
        if (foreign) {
            // llama-quantize gave a tensor a type mint does not compute yet (IQ3_XXS's attn_q /
            // attn_k IQ2_S): mint refuses the file type; the case is checked once it can.
            cr_expect_eq(st, MINT_E_UNSUPPORTED, "%s: %s", what, err.msg);
            cr_expect(strstr(err.msg, foreign), "%s: %s", what, err.msg);
            cr_log_info("%s: not compared, mint cannot compute %s", what, foreign);
        } else if (json_object_object_get_ex(c, "refused", &refused)) {
            const char *why = json_object_get_string(refused);
            cr_assert_neq(st, MINT_OK, "%s: llama-quantize refused (%s)", what, why);
            if (!strcmp(why, "usage")) {
                cr_expect_eq(st, MINT_E_ARG);
                cr_expect(strstr(err.msg, "cannot be used together"), "%s", err.msg);
            } else {
                // llama-quantize's sentence, after its capital letter.
                cr_expect(strstr(err.msg, why + 1), "%s: %s, llama-quantize: %s", what, err.msg,
                          why);
            }
        } else {
            cr_assert_eq(st, MINT_OK, "%s: %s", what, err.msg);
            check_output(out, c, what);
        }
        checked++;
    }
    cr_assert_gt(checked, 0);
}

Test(quantize_imatrix, llama3, .timeout = MT_HANG(300)) { // 18 file types, filters, a .dat
    check_arch("llama3");
}

Test(quantize_imatrix, qwen3moe, .timeout = MT_HANG(300)) { // each expert its own importance
    check_arch("qwen3moe");
}

// The program: --imatrix FILE with --exclude-weights writes llama-quantize's bytes too, and the
// flags' misuses are one-line errors.
Test(quantize_imatrix, the_program, .timeout = MT_HANG(120)) {
    json_object *c = NULL;
    for (size_t k = 0; k < json_object_array_length(cases()); k++) {
        json_object *o = json_object_array_get_idx(cases(), k);
        json_object *args = mt_jget(o, "args");
        if (json_object_array_length(args) == 2 &&
            !strcmp(json_object_get_string(json_object_array_get_idx(args, 0)),
                    "--exclude-weights"))
            if (!json_object_object_get_ex(o, "refused", NULL)) c = o;
    }
    cr_assert_not_null(c);
    const char *src = tiny_file("llama3", json_object_get_string(mt_jget(c, "source_sha256")));
    // Run beside the matrix, as llama-quantize was, so that the recorded path is its bare name.
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", ref_file(""));
    const char *out = keep(mt_path(mt_tmpdir(), "prog.gguf"));
    char cmd[9000], *o = NULL, *e = NULL;
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s' --imatrix %s --exclude-weights %s '%s' '%s' %s 1 --no-progress", dir,
             mt_bin("mint-quantize"), json_object_get_string(mt_jget(c, "imatrix")),
             json_object_get_string(json_object_array_get_idx(mt_jget(c, "args"), 1)), src, out,
             json_object_get_string(mt_jget(c, "type")));
    cr_assert_eq(mt_run(cmd, &o, &e), 0, "%s", e);
    free(o);
    free(e);
    check_output(out, c, "mint-quantize --imatrix");

    int rc = run_tool(&o, &e, "mint-quantize", "--include-weights attn '%s' '%s' Q4_K_M", src, out);
    expect_one_line_error(rc, o, e, "need --imatrix", "--include-weights without --imatrix");
    free(o);
    free(e);
    rc = run_tool(&o, &e, "mint-quantize",
                  "--imatrix '%s' --include-weights a --exclude-weights b '%s' '%s' Q4_K_M",
                  ref_file("llama3-tiny.imatrix.gguf"), src, out);
    expect_one_line_error(rc, o, e, "cannot be used together", "both filters");
    free(o);
    free(e);
    rc = run_tool(&o, &e, "mint-quantize", "--imatrix '%s' '%s' '%s' Q4_K_M --overwrite",
                  ref_file("no-such.imatrix"), src, out);
    expect_one_line_error(rc, o, e, "no-such.imatrix", "a missing matrix");
    free(o);
    free(e);
}

// An entry of another size than its tensor stops the run (llama-quantize's "imatrix size N is
// different from tensor size M"): the micro model's matrix on the tiny model, same names.
Test(quantize_imatrix, wrong_size_entry_is_refused, .timeout = MT_HANG(120)) {
    json_object *c = json_object_array_get_idx(cases(), 0);
    const char *src = tiny_file("llama3", json_object_get_string(mt_jget(c, "source_sha256")));
    char micro[4200];
    const char *sd = getenv("MINT_SOURCE_DIR");
    snprintf(micro, sizeof micro, "%s/tests/reference/imatrix/micro-imatrix.gguf", sd ? sd : ".");
    mint_imatrix *im;
    mint_err err;
    cr_assert_eq(mint_imatrix_load(micro, &im, &err), MINT_OK, "%s", err.msg);
    mint_quantize_params p;
    memset(&p, 0, sizeof p);
    p.ftype = "Q4_K_M";
    p.imatrix = im;
    p.imatrix_file = "micro-imatrix.gguf";
    const char *out = keep(mt_path(mt_tmpdir(), "wrong.gguf"));
    cr_expect_eq(mint_quantize_file(src, out, &p, &err), MINT_E_LIMIT);
    cr_expect(strstr(err.msg, "is different from tensor size"), "%s", err.msg);
    // Excluding every entry leaves no matrix: quantized as without one, no imatrix keys.
    const char *all[] = {"blk."};
    p.exclude_weights = all;
    p.n_exclude_weights = 1;
    cr_assert_eq(mint_quantize_file(src, out, &p, &err), MINT_OK, "%s", err.msg);
    mint_file *f;
    cr_assert_eq(mint_file_open(out, &f, &err), MINT_OK);
    const char *s;
    uint64_t n;
    cr_expect_eq(mint_file_get_str(f, "quantize.imatrix.file", &s, &n, &err), MINT_E_NOT_FOUND);
    mint_file_close(f);
    mint_imatrix_free(im);
}
