// test_quantize_arch.c - mint_quantize_file against llama-quantize on every architecture mint
// runs: each one's tiny synthetic F32 file quantized to every file type of `mint-quantize --help`
// gives, byte for byte, the file llama-quantize wrote from the same file: its tensors in its order
// with its types, the whole data section's XXH3-64 (and for Q8_0, Q4_0, Q4_K_M, Q6_K, MXFP4_MOE,
// IQ4_NL, IQ4_XS, IQ3_S and IQ3_M each tensor's), its metadata keys in its order and the same
// general.file_type. The mixtures have MXFP4_MOE too (their experts' stacks MXFP4); on a dense
// model it is plain Q8_0.
//
// The reference is tests/reference/arch_quant.json (tests/reference/README.md says how it was
// made): llama-quantize's output is not kept, only its hashes, so this runs on a fresh clone.
// The source files are the ones tests/reference/arch_tiny.json was made on; their sha256 is
// checked first, so a change of the synthetic writer is told apart from a change of the mix.
#include "formats/gguf.h"
#include "helpers/hang.h"
#include "helpers/helpers.h"
#include "helpers/tool.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_object *reference(void) {
    return mt_json_source("tests/reference/arch_quant.json");
}

// The tiny F32 file of an architecture, written into the test's folder, checked against the
// sha256 llama-quantize ran on.
static const char *tiny_file(const char *arch, json_object *entry) {
    char name[64];
    snprintf(name, sizeof name, "%s-f32.gguf", arch);
    static char path[4200];
    snprintf(path, sizeof path, "%s", mt_path(mt_tmpdir(), name));
    mint_synth_params p = {
        .preset = arch, .ftype = "F32", .seed = 1, .n_threads = 1, .shape = "tiny"};
    mint_err err;
    cr_assert_eq(mint_synth_write(&p, path, &err), MINT_OK, "%s: %s", arch, err.msg);
    char cmd[4400], *out = NULL;
    snprintf(cmd, sizeof cmd, "sha256sum '%s'", path);
    cr_assert_eq(mt_run(cmd, &out, NULL), 0);
    const char *want = json_object_get_string(mt_jget(entry, "sha256"));
    cr_assert(strncmp(out, want, 64) == 0,
              "%s: the synthetic writer's file changed (sha256 %.64s, llama-quantize ran on %s): "
              "remake tests/reference/arch_quant.json (tests/reference/README.md)",
              arch, out, want);
    free(out);
    return path;
}

static void hex64(uint64_t v, char out[17]) {
    snprintf(out, 17, "%016" PRIx64, v);
}

// One architecture, every file type of the reference: the 25 of every architecture (IQ4_NL,
// IQ4_XS, IQ3_S, IQ3_M, Q1_0 and Q2_0 with each tensor's hash), and MXFP4_MOE for a mixture of
// experts.
//
// Under the sanitizers (several times slower) every fourth file type, a different quarter for each
// architecture (by its name), so that every type still runs on some; the Release run checks all.
static void check_arch(const char *arch, bool moe) {
    json_object *entry = mt_jget(mt_jget(reference(), "files"), arch);
    const char *src = tiny_file(arch, entry);
    json_object *types = mt_jget(entry, "types");
    const int step = sizeof MINT_SANITIZE_FLAGS > 1 ? 4 : 1;
    int checked = 0, phase = 0;
    for (const char *c = arch; *c; c++) phase += (unsigned char)*c;
    json_object_object_foreach(types, ftype, want) {
        if ((checked++ + phase) % step) continue;
        char name[96];
        snprintf(name, sizeof name, "%s-%s.gguf", arch, ftype);
        const char *out = mt_path(mt_tmpdir(), name);
        char out_path[4200];
        snprintf(out_path, sizeof out_path, "%s", out);
        mint_quantize_params p;
        memset(&p, 0, sizeof p);
        p.ftype = ftype;
        p.n_threads = 1;
        mint_err err;
        cr_assert_eq(mint_quantize_file(src, out_path, &p, &err), MINT_OK, "%s %s: %s", arch, ftype,
                     err.msg);
        mint_file *f;
        cr_assert_eq(mint_file_open(out_path, &f, &err), MINT_OK, "%s", err.msg);
        mint_file_info info;
        mint_file_get_info(f, &info);

        // Tensors: llama-quantize's, in its order, with its types and bytes.
        json_object *tensors = mt_jget(want, "tensors");
        const size_t n_fields = json_object_array_length(
            json_object_array_get_idx(tensors, 0)); // 3: with each tensor's hash
        cr_assert_eq(info.n_tensors, json_object_array_length(tensors),
                     "%s %s: %" PRIu64 " tensors, llama-quantize wrote %zu", arch, ftype,
                     info.n_tensors, json_object_array_length(tensors));
        for (uint64_t i = 0; i < info.n_tensors; i++) {
            json_object *t = json_object_array_get_idx(tensors, (size_t)i);
            const char *wname = json_object_get_string(json_object_array_get_idx(t, 0));
            const char *wtype = json_object_get_string(json_object_array_get_idx(t, 1));
            mint_tensor_info ti;
            cr_assert_eq(mint_file_tensor(f, i, &ti), MINT_OK);
            cr_assert_str_eq(ti.name, wname, "%s %s: tensor %" PRIu64, arch, ftype, i);
            cr_assert_str_eq(mint_type_name(ti.type), wtype,
                             "%s %s: %s is %s, llama-quantize wrote %s", arch, ftype, ti.name,
                             mint_type_name(ti.type), wtype);
            if (n_fields < 3) continue;
            char h[17];
            hex64(mint_hash64(ti.data, (size_t)ti.nbytes), h);
            cr_assert_str_eq(h, json_object_get_string(json_object_array_get_idx(t, 2)),
                             "%s %s: %s (%s) has other bytes than llama-quantize's", arch, ftype,
                             ti.name, wtype);
        }

        // The data section as a whole, padding included.
        size_t len;
        uint8_t *bytes = mt_read_file(out_path, &len);
        cr_assert(bytes, "cannot read %s", out_path);
        cr_assert_eq((int64_t)info.data_size, json_object_get_int64(mt_jget(want, "data_size")),
                     "%s %s: data section size", arch, ftype);
        char h[17];
        hex64(mint_hash64(bytes + info.data_offset, len - info.data_offset), h);
        cr_assert_str_eq(h, json_object_get_string(mt_jget(want, "data_xxh3")),
                         "%s %s: data sections differ", arch, ftype);
        free(bytes);

        // Metadata: llama-quantize's keys in its order (mint's own two aside), its file type.
        json_object *keys = mt_jget(entry, "keys");
        size_t j = 0;
        for (uint64_t i = 0; i < info.n_kv; i++) {
            mint_kv_info kv;
            cr_assert_eq(mint_file_kv(f, i, &kv), MINT_OK);
            if (!strncmp(kv.key, "mint.quantize.", 14)) continue;
            cr_assert_lt(j, json_object_array_length(keys), "%s %s: extra key %s", arch, ftype,
                         kv.key);
            cr_assert_str_eq(kv.key, json_object_get_string(json_object_array_get_idx(keys, j)),
                             "%s %s: metadata entry %zu", arch, ftype, j);
            j++;
        }
        cr_assert_eq(j, json_object_array_length(keys), "%s %s: metadata keys", arch, ftype);
        uint32_t file_type = 0;
        cr_assert_eq(mint_file_get_u32(f, "general.file_type", &file_type, &err), MINT_OK, "%s",
                     err.msg);
        cr_assert_eq((int64_t)file_type, json_object_get_int64(mt_jget(want, "file_type")),
                     "%s %s: general.file_type", arch, ftype);
        mint_file_close(f);
    }
    // File types llama-quantize refused on this file (gemma4's 64-wide proj has no Q1_0 fallback):
    // mint refuses them too, saying why.
    json_object *refused =
        json_object_object_get_ex(entry, "refused", NULL) ? mt_jget(entry, "refused") : NULL;
    if (refused) {
        json_object_object_foreach(refused, rtype, why_llama) {
            char name[96];
            snprintf(name, sizeof name, "%s-%s-refused.gguf", arch, rtype);
            char out_path[4200];
            snprintf(out_path, sizeof out_path, "%s", mt_path(mt_tmpdir(), name));
            mint_quantize_params p;
            memset(&p, 0, sizeof p);
            p.ftype = rtype;
            p.n_threads = 1;
            mint_err err;
            cr_assert_neq(mint_quantize_file(src, out_path, &p, &err), MINT_OK,
                          "%s %s: llama-quantize refuses (%s)", arch, rtype,
                          json_object_get_string(why_llama));
            cr_expect(strstr(err.msg, "no fallback"), "%s %s: %s", arch, rtype, err.msg);
            checked++;
        }
    }
    cr_assert_eq(checked, moe ? 26 : 25, "%s: %d file types in the reference", arch, checked);
}

Test(quantize_arch, llama3) {
    check_arch("llama3", false);
}
Test(quantize_arch, qwen2) {
    check_arch("qwen2", false);
}
Test(quantize_arch, qwen3) {
    check_arch("qwen3", false);
}
Test(quantize_arch, phi3) {
    check_arch("phi3", false);
}
Test(quantize_arch, gpt2) {
    check_arch("gpt2", false);
}
Test(quantize_arch, gemma2) {
    check_arch("gemma2", false);
}
Test(quantize_arch, gemma3) {
    check_arch("gemma3", false);
}
Test(quantize_arch, qwen3moe) { // experts stacked in 3-D tensors; the router kept F32
    check_arch("qwen3moe", true);
}
Test(quantize_arch, olmoe) {
    check_arch("olmoe", true);
}
Test(quantize_arch, qwen2moe) { // and a shared expert's tensors
    check_arch("qwen2moe", true);
}
Test(quantize_arch, mixtral) { // a llama file with 8 experts: llama.cpp's 8-expert rules
    check_arch("mixtral", true);
}
Test(quantize_arch, gpt_oss) { // biases (1-D and per expert) and sinks kept F32
    check_arch("gpt-oss", true);
}
Test(quantize_arch, lfm2) { // a hybrid: 1 attn_v for 4 layers, the convolution taps kept F32
    check_arch("lfm2", false);
}
Test(quantize_arch, qwen35) { // a delta net's tensors: ssm_conv1d F32, ssm_a and the biases 1-D
    check_arch("qwen35", false);
}
Test(quantize_arch, gemma4) { // per-layer inputs (per_layer_model_proj kept), layers without k/v
    check_arch("gemma4", false);
}

// `mint-quantize --compare` on each architecture's tiny file: a table row per type, the source's
// perplexity beside the quantized one's (the architecture's rules applied to each).
Test(quantize_arch, compare_runs_on_every_architecture, .timeout = MT_HANG(300)) {
    const char *text = mt_path(mt_tmpdir(), "text.txt");
    char text_path[4200];
    snprintf(text_path, sizeof text_path, "%s", text);
    static const char words[] = "once upon a time there was a little fox who liked the snow. ";
    char buf[4096] = "";
    for (int i = 0; i < 40; i++) strcat(buf, words);
    cr_assert(mt_write_file(text_path, buf, strlen(buf)));
    json_object_object_foreach(mt_jget(reference(), "files"), arch, entry) {
        const char *src = keep(tiny_file(arch, entry));
        char *out = NULL, *err = NULL;
        const int rc = run_tool(&out, &err, "mint-quantize",
                                "--compare Q8_0,Q4_K_M --text '%s' --ctx 64 --chunks 1 -t 1 '%s'",
                                text_path, src);
        cr_assert_eq(rc, 0, "%s: --compare exited %d: %s", arch, rc, err);
        cr_assert(strstr(out, "| source |") && strstr(out, "| Q8_0 |") && strstr(out, "| Q4_K_M |"),
                  "%s: --compare printed %s", arch, out);
        free(out);
        free(err);
    }
}

// `mint-quantize --compare ... --imatrix FILE`: each type twice, without and with the matrix (an
// "imatrix" column in the table, an "imatrix" member in --json), Q2_K_S only with it (it needs
// one); the matrix is llama-imatrix's for the tiny llama3 (tests/reference/imatrix_quant/).
Test(quantize_arch, compare_with_and_without_an_imatrix, .timeout = MT_HANG(300)) {
    char text_path[4200], imatrix[4200], src[4200];
    snprintf(text_path, sizeof text_path, "%s", mt_path(mt_tmpdir(), "text.txt"));
    static const char words[] = "once upon a time there was a little fox who liked the snow. ";
    char buf[4096] = "";
    for (int i = 0; i < 40; i++) strcat(buf, words);
    cr_assert(mt_write_file(text_path, buf, strlen(buf)));
    const char *sd = getenv("MINT_SOURCE_DIR");
    snprintf(imatrix, sizeof imatrix, "%s/tests/reference/imatrix_quant/llama3-tiny.imatrix.gguf",
             sd ? sd : ".");
    snprintf(src, sizeof src, "%s",
             tiny_file("llama3", mt_jget(mt_jget(reference(), "files"), "llama3")));
    char *out = NULL, *err = NULL;
    int rc = run_tool(&out, &err, "mint-quantize",
                      "--compare Q4_0,Q2_K_S --imatrix '%s' --text '%s' --ctx 64 --chunks 1 -t 1 "
                      "'%s'",
                      imatrix, text_path, src);
    cr_assert_eq(rc, 0, "--compare --imatrix exited %d: %s", rc, err);
    cr_assert(strstr(out, "| type | imatrix | size |"), "%s", out);
    cr_assert(strstr(out, "| source | - |") && strstr(out, "| Q4_0 | no |") &&
                  strstr(out, "| Q4_0 | yes |") && strstr(out, "| Q2_K_S | yes |"),
              "%s", out);
    cr_assert_null(strstr(out, "| Q2_K_S | no |"), "Q2_K_S needs an imatrix: %s", out);
    cr_assert(strstr(out, "; imatrix: "), "%s", out);
    free(out);
    free(err);

    // --json: the same rows with "imatrix"; the matrix changes Q4_0's weights (another KLD).
    rc = run_tool(&out, &err, "mint-quantize",
                  "--compare Q4_0 --imatrix '%s' --text '%s' --ctx 64 --chunks 1 -t 1 --json '%s'",
                  imatrix, text_path, src);
    cr_assert_eq(rc, 0, "%s", err);
    json_object *j = json_tokener_parse(out);
    cr_assert(j && json_object_is_type(j, json_type_array), "%s", out);
    cr_assert_eq(json_object_array_length(j), 3, "%s", out);
    const char *types[] = {"source", "Q4_0", "Q4_0"};
    const bool with[] = {false, false, true};
    for (size_t i = 0; i < 3; i++) {
        json_object *r = json_object_array_get_idx(j, i);
        cr_expect_str_eq(json_object_get_string(mt_jget(r, "type")), types[i]);
        cr_expect_eq(json_object_get_boolean(mt_jget(r, "imatrix")), with[i], "row %zu", i);
    }
    const double kld_plain =
        json_object_get_double(mt_jget(json_object_array_get_idx(j, 1), "kld"));
    const double kld_imat = json_object_get_double(mt_jget(json_object_array_get_idx(j, 2), "kld"));
    cr_expect(kld_plain > 0 && kld_imat > 0 && kld_plain != kld_imat, "KLD %g and %g", kld_plain,
              kld_imat);
    json_object_put(j);
    free(out);
    free(err);

    // Without --imatrix the table is as before: no imatrix column, one row per type.
    rc = run_tool(&out, &err, "mint-quantize",
                  "--compare Q4_0 --text '%s' --ctx 64 --chunks 1 -t 1 '%s'", text_path, src);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(out, "| type | size |") && strstr(out, "| Q4_0 | "), "%s", out);
    cr_assert(!strstr(out, "| imatrix |") && !strstr(out, "; imatrix: "), "%s", out);
    free(out);
    free(err);
}

// Every architecture of the reference has its test above.
Test(quantize_arch, every_reference_file_is_covered) {
    const char *covered[] = {"llama3",   "qwen2",   "qwen3",    "phi3",    "gpt2",
                             "gemma2",   "gemma3",  "qwen3moe", "mixtral", "olmoe",
                             "qwen2moe", "gpt-oss", "lfm2",     "qwen35",  "gemma4"};
    json_object_object_foreach(mt_jget(reference(), "files"), arch, entry) {
        (void)entry;
        bool found = false;
        for (size_t i = 0; i < sizeof covered / sizeof *covered; i++)
            found = found || strcmp(covered[i], arch) == 0;
        cr_assert(found, "%s in arch_quant.json has no test", arch);
    }
}
