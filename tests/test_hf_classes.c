// test_hf_classes.c - every Hugging Face class of formats/hf_arch.c but Llama (tests/test_hf.c):
// the tiny synthetic GGUF of each architecture (runtime/filetools/synth.c) exported as a
// checkpoint folder and read back is the same file and the same model; and byte-level BPE
// tokenizer.json (formats/hf_bpe.h) written from llama.cpp's vocab files and read back.
#include "formats/hf_checkpoint.h"
#include "helpers/helpers.h"
#include "helpers/hf_compare.h"
#include "mint_filetools.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static mint_file *open_ok(const char *path) {
    mint_file *f = NULL;
    mint_err err;
    cr_assert_eq(mint_file_open(path, &f, &err), MINT_OK, "%s: %s", path, err.msg);
    return f;
}

static uint32_t get_u32(const mint_file *f, const char *key) {
    uint32_t v;
    mint_err err;
    cr_assert_eq(mint_file_get_u32(f, key, &v, &err), MINT_OK, "%s", err.msg);
    return v;
}

// ---------------------------------------------------------------------------------------------
// Every class of the table (formats/hf_arch.c): the tiny synthetic GGUF of its architecture
// (runtime/filetools/synth.c) written as a checkpoint and read back is the same file and the
// same model.

// Keys the synthetic GGUF has that the class's converter does not write, each of which
// llama.cpp (and mint) derives to the same value when absent: the RoPE dimension count (the
// head size) and Gemma 2's RoPE base (10000).
static bool converter_omits(const char *arch, const char *suffix) {
    if (strcmp(suffix, "rope.dimension_count") == 0)
        return strcmp(arch, "qwen2") == 0 || strcmp(arch, "qwen3") == 0 ||
               strncmp(arch, "gemma", 5) == 0;
    return strcmp(arch, "gemma2") == 0 && strcmp(suffix, "rope.freq_base") == 0;
}

// The "<arch>.*" keys of g and h are the same set with the same types and values, but for the
// ones converter_omits.
static void assert_same_arch_keys(const mint_file *g, const mint_file *h, const char *arch) {
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%s.", arch);
    size_t n = strlen(prefix);
    int checked = 0;
    for (uint64_t i = 0; i < g->n_kv; i++) {
        const mint_kv *a = &g->kv[i];
        if (strncmp(a->key, prefix, n) != 0) continue;
        const mint_kv *b = mint_file_find_kv(h, a->key);
        if (converter_omits(arch, a->key + n)) {
            cr_assert_null(b, "%s: the converter does not write it", a->key);
            continue;
        }
        cr_assert_not_null(b, "%s missing", a->key);
        cr_assert(mt_same_kv_value(a, b), "%s differs (type %d / %d)", a->key, a->type, b->type);
        checked++;
    }
    for (uint64_t i = 0; i < h->n_kv; i++)
        if (strncmp(h->kv[i].key, prefix, n) == 0)
            cr_assert_not_null(mint_file_find_kv(g, h->kv[i].key), "%s is new", h->kv[i].key);
    cr_assert_geq(checked, 6);
}

// Logits of every position of a short prompt, from the GGUF and from the folder: bit-equal, as
// the weights are the same bytes.
static void assert_same_logits(const char *gguf, const char *dir) {
    const int32_t ids[] = {1, 300, 301, 287, 400, 5, 260, 511};
    const int n = (int)(sizeof ids / sizeof ids[0]);
    mint_model *m[2];
    mint_ctx *c[2];
    mint_err err;
    const char *paths[2] = {gguf, dir};
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(mint_model_open(paths[k], NULL, &m[k], &err), MINT_OK, "%s: %s", paths[k],
                     err.msg);
        mint_ctx_params p = mint_ctx_default_params();
        p.n_threads = 2;
        p.n_ctx = 64;
        cr_assert_eq(mint_ctx_create(m[k], &p, &c[k], &err), MINT_OK, "%s", err.msg);
        cr_assert_eq(mint_eval(c[k], ids, n, 0, true, &err), MINT_OK, "%s", err.msg);
    }
    mint_model_desc d;
    mint_model_describe(m[0], &d);
    cr_assert_eq(mint_get_n_logits(c[0]), n);
    cr_assert_eq(mint_get_n_logits(c[1]), n);
    for (int i = 0; i < n; i++)
        cr_assert(memcmp(mint_get_logits(c[0], i), mint_get_logits(c[1], i),
                         (size_t)d.n_vocab * sizeof(float)) == 0,
                  "logits of position %d differ", i);
    for (int k = 0; k < 2; k++) {
        mint_ctx_free(c[k]);
        mint_model_close(m[k]);
    }
}

static void roundtrip_class(const char *preset, const char *hf_class) {
    char name[64];
    snprintf(name, sizeof name, "%s-tiny.gguf", preset);
    const char *gguf = mt_path(mt_tmpdir(), name);
    mint_synth_params p = {
        .preset = preset, .ftype = "F32", .seed = 1, .n_threads = 2, .shape = "tiny"};
    mint_err err;
    cr_assert_eq(mint_synth_write(&p, gguf, &err), MINT_OK, "%s: %s", preset, err.msg);
    mint_file *g = open_ok(gguf);
    snprintf(name, sizeof name, "%s-hf", preset);
    const char *d = mt_path(mt_tmpdir(), name);
    mint_hf_export_opts o = {.write_tokenizer = true};
    cr_assert_eq(mint_hf_export(g, d, &o, &err), MINT_OK, "%s", err.msg);
    size_t len = 0;
    uint8_t *cfg = mt_read_file(mt_path(d, "config.json"), &len);
    char want[96];
    snprintf(want, sizeof want, "\"%s\"", hf_class);
    cr_assert(cfg && memmem(cfg, len, want, strlen(want)), "config.json does not name %s",
              hf_class);
    free(cfg);
    mint_file *h = open_ok(d);
    const char *arch;
    cr_assert_eq(mint_file_get_str(g, "general.architecture", &arch, NULL, &err), MINT_OK);
    const char *harch;
    cr_assert_eq(mint_file_get_str(h, "general.architecture", &harch, NULL, &err), MINT_OK);
    cr_assert_str_eq(harch, arch);
    mt_same_tensors(g, h);
    assert_same_arch_keys(g, h, arch);
    mt_same_vocab(g, h);
    mint_file_close(h);
    mint_file_close(g);
    assert_same_logits(gguf, d);
}

Test(hf_classes, qwen2) {
    roundtrip_class("qwen2", "Qwen2ForCausalLM");
}
Test(hf_classes, qwen3) {
    roundtrip_class("qwen3", "Qwen3ForCausalLM");
}
Test(hf_classes, gemma2) {
    roundtrip_class("gemma2", "Gemma2ForCausalLM");
}
Test(hf_classes, gemma3) {
    roundtrip_class("gemma3", "Gemma3ForCausalLM");
}
Test(hf_classes, phi3) {
    roundtrip_class("phi3", "Phi3ForCausalLM");
}
Test(hf_classes, gpt2) {
    roundtrip_class("gpt2", "GPT2LMHeadModel");
}

// ---------------------------------------------------------------------------------------------
// Byte-level BPE tokenizer.json (formats/hf_bpe.h): llama.cpp's vocab-only GGUFs written as
// tokenizer files and read back give the same tokenizer.ggml.* entries.

static void assert_same_kv(const mint_file *g, const mint_file *h, const char *key) {
    const mint_kv *a = mint_file_find_kv(g, key), *b = mint_file_find_kv(h, key);
    cr_assert_not_null(a, "%s missing in the GGUF", key);
    cr_assert_not_null(b, "%s missing in the folder", key);
    cr_assert_eq(a->type, b->type, "%s type", key);
    if (a->type != MINT_VAL_ARRAY) {
        cr_assert(mt_same_kv_value(a, b), "%s differs", key);
        return;
    }
    cr_assert_eq(a->elem_type, b->elem_type, "%s element type", key);
    cr_assert_eq(a->n, b->n, "%s: %" PRIu64 " vs %" PRIu64 " elements", key, a->n, b->n);
    for (uint64_t i = 0; i < a->n; i++) {
        if (a->elem_type == MINT_VAL_STRING) {
            const mint_str *x = (const mint_str *)a->arr + i, *y = (const mint_str *)b->arr + i;
            cr_assert(x->len == y->len && memcmp(x->p, y->p, x->len) == 0,
                      "%s[%" PRIu64 "]: '%.*s' vs '%.*s'", key, i, (int)x->len, x->p, (int)y->len,
                      y->p);
        } else {
            cr_assert_eq(((const int32_t *)a->arr)[i], ((const int32_t *)b->arr)[i],
                         "%s[%" PRIu64 "]", key, i);
        }
    }
}

static void bpe_roundtrip(const char *vocab_file, const char *pre) {
    char path[512];
    snprintf(path, sizeof path, "vocab/%s", vocab_file);
    mint_file *g = open_ok(mt_data_path(path));
    const char *d = mt_path(mt_tmpdir(), vocab_file);
    mint_err err;
    cr_assert_eq(mint_hf_export_tokenizer(g, d, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(access(mt_path(d, "tokenizer.json"), R_OK), 0);
    const mint_kv *tok = mint_file_find_kv(g, "tokenizer.ggml.tokens");
    // The folder's config.json: the special ids, as the converter also reads them from there.
    char cfg[256];
    snprintf(cfg, sizeof cfg, "{\"vocab_size\": %" PRIu64 ", \"bos_token_id\": %u}", tok->n,
             get_u32(g, "tokenizer.ggml.bos_token_id"));
    json_object *config = json_tokener_parse(cfg);
    mint_file *h = mint_file_new(MINT_FORMAT_HF_DIR);
    cr_assert_eq(mint_hf_add_tokenizer(h, d, config, mint_hf_arch_by_class("Qwen2ForCausalLM"),
                                       (uint32_t)tok->n, &err),
                 MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_file_build_index(h, &err), MINT_OK, "%s", err.msg);
    const char *s;
    cr_assert_eq(mint_file_get_str(h, "tokenizer.ggml.pre", &s, NULL, &err), MINT_OK);
    cr_assert_str_eq(s, pre);
    static const char *const keys[] = {"tokenizer.ggml.model",        "tokenizer.ggml.pre",
                                       "tokenizer.ggml.tokens",       "tokenizer.ggml.token_type",
                                       "tokenizer.ggml.merges",       "tokenizer.ggml.bos_token_id",
                                       "tokenizer.ggml.eos_token_id", "tokenizer.chat_template"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (mint_file_find_kv(g, keys[i])) assert_same_kv(g, h, keys[i]);
    cr_assert_null(mint_file_find_kv(h, "tokenizer.ggml.scores"));
    json_object_put(config);
    mint_file_close(h);
    mint_file_close(g);
}

Test(hf_tokenizer, byte_level_bpe_gpt2) {
    bpe_roundtrip("ggml-vocab-gpt-2.gguf", "gpt-2");
}

Test(hf_tokenizer, byte_level_bpe_qwen2) {
    bpe_roundtrip("ggml-vocab-qwen2.gguf", "qwen2");
}

Test(hf_tokenizer, byte_level_bpe_llama3) {
    bpe_roundtrip("ggml-vocab-llama-bpe.gguf", "llama-bpe");
}
