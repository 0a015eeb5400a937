// test_hf.c - Hugging Face Llama checkpoint folders (the other classes: test_hf_classes.c): the Q/K
// permutation, GGUF -> folder -> mint_file round trips (single file and shards), tokenizers
// (tokenizer.model, tokenizer.json, tokenizer_config.json) and refused folders.
#include "formats/hf_checkpoint.h"
#include "formats/hf_names.h"
#include "formats/safetensors.h"
#include "formats/sentencepiece.h"
#include "helpers/helpers.h"
#include "helpers/hf_compare.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// ---------------------------------------------------------------------------------------------
// The permutation (docs/formats.md 8.4): GGUF row g*hd + 2i + j = HF row g*hd + j*(hd/2) + i.

Test(hf_permute, rows_move_as_formats_md_says) {
    uint8_t hf[8] = {0, 1, 2, 3, 4, 5, 6, 7}, gguf[8], back[8];
    // Two heads of 4 rows: each head's halves [0,1 | 2,3] interleave to 0,2,1,3.
    mint_qk_permute(hf, gguf, 8, 1, 2, true);
    cr_assert_arr_eq(gguf, ((uint8_t[]){0, 2, 1, 3, 4, 6, 5, 7}), 8);
    mint_qk_permute(gguf, back, 8, 1, 2, false);
    cr_assert_arr_eq(back, hf, 8);
    // One head of 8 rows: GGUF rows = HF 0,4,1,5,2,6,3,7.
    mint_qk_permute(hf, gguf, 8, 1, 1, true);
    cr_assert_arr_eq(gguf, ((uint8_t[]){0, 4, 1, 5, 2, 6, 3, 7}), 8);
    mint_qk_permute(gguf, back, 8, 1, 1, false);
    cr_assert_arr_eq(back, hf, 8);
    // Rows of several bytes move whole.
    uint16_t wide[4][3], out[4][3];
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 3; c++) wide[r][c] = (uint16_t)(r * 100 + c);
    mint_qk_permute(wide, out, 4, sizeof wide[0], 1, true);
    int want[4] = {0, 2, 1, 3};
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 3; c++) cr_assert_eq(out[r][c], want[r] * 100 + c);
}

Test(hf_permute, names_map_both_ways) {
    const mint_hf_arch *llama = mint_hf_arch_by_class("LlamaForCausalLM");
    char out[96];
    unsigned ops;
    int layer;
    cr_assert_eq(mint_hf_name_to_gguf(llama, "model.layers.12.self_attn.k_proj.weight", out, 64,
                                      &ops, &layer),
                 MINT_HF_NAME_MAPPED);
    cr_assert_str_eq(out, "blk.12.attn_k.weight");
    cr_assert_eq(ops, MINT_HF_OP_PERM_K);
    cr_assert_eq(layer, 12);
    cr_assert_eq(mint_gguf_name_to_hf(llama, "blk.3.ffn_down.weight", out, 96, &ops, &layer),
                 MINT_HF_NAME_MAPPED);
    cr_assert_str_eq(out, "model.layers.3.mlp.down_proj.weight");
    cr_assert_eq(mint_hf_name_to_gguf(llama, "lm_head.weight", out, 64, &ops, &layer),
                 MINT_HF_NAME_MAPPED);
    cr_assert_str_eq(out, "output.weight");
    cr_assert_eq(mint_hf_name_to_gguf(llama, "model.layers.0.self_attn.rotary_emb.inv_freq", out,
                                      64, &ops, &layer),
                 MINT_HF_NAME_DROP);
    cr_assert_eq(
        mint_hf_name_to_gguf(llama, "model.layers.01.mlp.up_proj.weight", out, 64, &ops, &layer),
        MINT_HF_NAME_UNKNOWN);
    cr_assert_eq(mint_hf_name_to_gguf(llama, "model.layers.0.mlp.experts.0.w1.weight", out, 64,
                                      &ops, &layer),
                 MINT_HF_NAME_UNKNOWN);
    // The other classes: their own names, operations and drops (hf_arch.c).
    const mint_hf_arch *qwen3 = mint_hf_arch_by_class("Qwen3ForCausalLM");
    cr_assert_eq(mint_hf_name_to_gguf(qwen3, "model.layers.1.self_attn.q_norm.weight", out, 64,
                                      &ops, &layer),
                 MINT_HF_NAME_MAPPED);
    cr_assert_str_eq(out, "blk.1.attn_q_norm.weight");
    cr_assert_eq(mint_hf_name_to_gguf(qwen3, "model.layers.1.self_attn.q_proj.weight", out, 64,
                                      &ops, &layer),
                 MINT_HF_NAME_MAPPED);
    cr_assert_eq(ops, 0); // only Llama's rows are permuted
    const mint_hf_arch *gemma2 = mint_hf_arch_by_class("Gemma2ForCausalLM");
    cr_assert_eq(mint_hf_name_to_gguf(gemma2, "model.layers.0.post_attention_layernorm.weight", out,
                                      64, &ops, &layer),
                 MINT_HF_NAME_MAPPED);
    cr_assert_str_eq(out, "blk.0.post_attention_norm.weight");
    cr_assert_eq(ops, MINT_HF_OP_PLUS_ONE);
    cr_assert_eq(mint_hf_name_to_gguf(gemma2, "lm_head.weight", out, 64, &ops, &layer),
                 MINT_HF_NAME_DROP);
    const mint_hf_arch *gpt2 = mint_hf_arch_by_class("GPT2LMHeadModel");
    cr_assert_eq(mint_hf_name_to_gguf(gpt2, "h.4.mlp.c_fc.weight", out, 64, &ops, &layer),
                 MINT_HF_NAME_MAPPED); // GPT-2's own files lack the "transformer." root
    cr_assert_str_eq(out, "blk.4.ffn_up.weight");
    cr_assert_eq(ops, MINT_HF_OP_TRANSPOSE);
    cr_assert_eq(
        mint_hf_name_to_gguf(gpt2, "transformer.h.0.attn.masked_bias", out, 64, &ops, &layer),
        MINT_HF_NAME_DROP);
    cr_assert_eq(mint_gguf_name_to_hf(gpt2, "position_embd.weight", out, 96, &ops, &layer),
                 MINT_HF_NAME_MAPPED);
    cr_assert_str_eq(out, "transformer.wpe.weight");
    const mint_hf_arch *phi3 = mint_hf_arch_by_class("Phi3ForCausalLM");
    cr_assert_eq(mint_gguf_name_to_hf(phi3, "blk.2.attn_qkv.weight", out, 96, &ops, &layer),
                 MINT_HF_NAME_MAPPED);
    cr_assert_str_eq(out, "model.layers.2.self_attn.qkv_proj.weight");
    cr_assert_null(mint_hf_arch_by_class("MistralForCausalLM"));
}

// ---------------------------------------------------------------------------------------------
// A tiny hand-made checkpoint: hidden 8, 2 heads of 4, 1 KV head, ffn 16, 1 layer, vocab 16.
// Element (r, c) of a [rows, cols] weight is tag*10000 + r*100 + c, so rows can be recognised.

typedef struct tiny {
    const char *hf; // HF name
    int rows, cols; // PyTorch shape [rows, cols]; cols 0 for a vector
    float *data;    // [rows * max(cols, 1)]
} tiny;

static tiny tiny_tensors[] = {
    {"model.embed_tokens.weight", 16, 8, NULL},
    {"model.norm.weight", 8, 0, NULL},
    {"model.layers.0.input_layernorm.weight", 8, 0, NULL},
    {"model.layers.0.self_attn.q_proj.weight", 8, 8, NULL},
    {"model.layers.0.self_attn.k_proj.weight", 4, 8, NULL},
    {"model.layers.0.self_attn.v_proj.weight", 4, 8, NULL},
    {"model.layers.0.self_attn.o_proj.weight", 8, 8, NULL},
    {"model.layers.0.post_attention_layernorm.weight", 8, 0, NULL},
    {"model.layers.0.mlp.gate_proj.weight", 16, 8, NULL},
    {"model.layers.0.mlp.up_proj.weight", 16, 8, NULL},
    {"model.layers.0.mlp.down_proj.weight", 8, 16, NULL},
};
enum { N_TINY = sizeof tiny_tensors / sizeof tiny_tensors[0] };

#define TINY_CONFIG                                                                                \
    "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 8, \"intermediate_size\": 16, "  \
    "\"num_hidden_layers\": 1, \"num_attention_heads\": 2, \"num_key_value_heads\": 1, "           \
    "\"max_position_embeddings\": 64, \"rms_norm_eps\": 1e-06, \"rope_theta\": 500000.0, "         \
    "\"vocab_size\": 16, \"bos_token_id\": 1, \"eos_token_id\": 2"

static void write_text(const char *dir, const char *name, const char *text) {
    cr_assert(mt_write_file(mt_path(dir, name), text, strlen(text)), "cannot write %s", name);
}

// A fresh folder under the test's tmpdir.
static const char *fresh_dir(const char *name) {
    const char *d = mt_path(mt_tmpdir(), name);
    cr_assert(mkdir(d, 0755) == 0, "mkdir %s", d);
    return d;
}

// Writes the tiny weights (optionally one extra tensor name) as model.safetensors.
static void write_tiny_weights(const char *dir, const char *extra) {
    mint_st_writer *w = mint_st_writer_create();
    mint_err err;
    for (int t = 0; t < N_TINY; t++) {
        tiny *e = &tiny_tensors[t];
        int cols = e->cols ? e->cols : 1;
        if (!e->data) e->data = malloc(sizeof(float) * (size_t)(e->rows * cols));
        for (int r = 0; r < e->rows; r++)
            for (int c = 0; c < cols; c++) e->data[r * cols + c] = (float)(t * 10000 + r * 100 + c);
        int64_t ne[2] = {e->cols ? e->cols : e->rows, e->rows};
        cr_assert_eq(mint_st_writer_add(w, e->hf, MINT_TYPE_F32, e->cols ? 2 : 1, ne, e->data,
                                        sizeof(float) * (size_t)(e->rows * cols), &err),
                     MINT_OK, "%s", err.msg);
    }
    float one[8] = {0};
    if (extra)
        cr_assert_eq(
            mint_st_writer_add(w, extra, MINT_TYPE_F32, 1, (int64_t[]){8}, one, sizeof one, &err),
            MINT_OK);
    cr_assert_eq(mint_st_writer_write_file(w, mt_path(dir, "model.safetensors"), &err), MINT_OK,
                 "%s", err.msg);
    mint_st_writer_free(w);
}

static const char *tiny_folder(const char *name, const char *config_tail) {
    const char *d = fresh_dir(name);
    char cfg[2048];
    snprintf(cfg, sizeof cfg, "%s%s}", TINY_CONFIG, config_tail ? config_tail : "");
    write_text(d, "config.json", cfg);
    write_tiny_weights(d, NULL);
    return d;
}

static mint_file *open_ok(const char *path) {
    mint_file *f = NULL;
    mint_err err;
    cr_assert_eq(mint_file_open(path, &f, &err), MINT_OK, "%s: %s", path, err.msg);
    return f;
}

static void open_fails(const char *path, mint_status code, const char *needle) {
    mint_file *f = NULL;
    mint_err err = {0};
    mint_status st = mint_file_open(path, &f, &err);
    cr_assert_eq(st, code, "%s: status %d (%s), expected %d", path, st, err.msg, code);
    cr_assert(strstr(err.msg, needle), "message '%s' lacks '%s'", err.msg, needle);
    cr_assert_null(f);
}

static uint32_t get_u32(const mint_file *f, const char *key) {
    uint32_t v;
    mint_err err;
    cr_assert_eq(mint_file_get_u32(f, key, &v, &err), MINT_OK, "%s", err.msg);
    return v;
}

Test(hf_folder, tiny_checkpoint_permutes_q_and_k_rows) {
    const char *d = tiny_folder("tiny", NULL);
    mint_file *f = open_ok(d);
    mint_file_info info;
    mint_file_get_info(f, &info);
    cr_assert_eq(info.format, MINT_FORMAT_HF_DIR);
    cr_assert_eq(info.n_tensors, N_TINY); // no lm_head: tied, so no output.weight
    mint_tensor_info q, k, v;
    cr_assert_eq(mint_file_find_tensor(f, "blk.0.attn_q.weight", &q), MINT_OK);
    cr_assert_eq(mint_file_find_tensor(f, "blk.0.attn_k.weight", &k), MINT_OK);
    cr_assert_eq(mint_file_find_tensor(f, "blk.0.attn_v.weight", &v), MINT_OK);
    cr_assert_eq(mint_file_find_tensor(f, "output.weight", &v), MINT_E_NOT_FOUND);
    cr_assert_eq(q.ne[0], 8);
    cr_assert_eq(q.ne[1], 8);
    // q: 2 heads of 4 rows -> HF rows 0,2,1,3,4,6,5,7; k: 1 KV head -> 0,2,1,3; columns intact.
    const float *qd = q.data, *kd = k.data;
    int qrows[8] = {0, 2, 1, 3, 4, 6, 5, 7}, krows[4] = {0, 2, 1, 3};
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 8; c++) cr_assert_eq(qd[r * 8 + c], 30000 + qrows[r] * 100 + c);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 8; c++) cr_assert_eq(kd[r * 8 + c], 40000 + krows[r] * 100 + c);
    // Everything else points into the map unchanged.
    mint_file_find_tensor(f, "blk.0.attn_v.weight", &v);
    cr_assert_eq(((const float *)v.data)[1 * 8 + 2], 50000 + 102);
    cr_assert_eq(get_u32(f, "llama.embedding_length"), 8);
    cr_assert_eq(get_u32(f, "llama.attention.head_count_kv"), 1);
    cr_assert_eq(get_u32(f, "llama.rope.dimension_count"), 4);
    cr_assert_eq(get_u32(f, "llama.context_length"), 64);
    cr_assert_eq(get_u32(f, "llama.vocab_size"), 16);
    float theta;
    mint_err err;
    cr_assert_eq(mint_file_get_f32(f, "llama.rope.freq_base", &theta, &err), MINT_OK);
    cr_assert_eq(theta, 500000.0f);
    const char *name;
    cr_assert_eq(mint_file_get_str(f, "general.name", &name, NULL, &err), MINT_OK);
    cr_assert_str_eq(name, "tiny");
    cr_assert_null(mint_file_find_kv(f, "tokenizer.ggml.tokens")); // no tokenizer in the folder
    mint_file_close(f);
}

Test(hf_folder, config_variants) {
    const char *d = tiny_folder("linear", ", \"rope_scaling\": {\"type\": \"linear\", "
                                          "\"factor\": 2.0}, \"head_dim\": 4");
    mint_file *f = open_ok(d);
    const char *s;
    float x;
    mint_err err;
    cr_assert_eq(mint_file_get_str(f, "llama.rope.scaling.type", &s, NULL, &err), MINT_OK);
    cr_assert_str_eq(s, "linear");
    cr_assert_eq(mint_file_get_f32(f, "llama.rope.scaling.factor", &x, &err), MINT_OK);
    cr_assert_eq(x, 2.0f);
    cr_assert_eq(get_u32(f, "llama.attention.key_length"), 4);
    mint_file_close(f);
    open_fails(tiny_folder("llama3", ", \"rope_scaling\": {\"rope_type\": \"llama3\", "
                                     "\"factor\": 8.0}"),
               MINT_E_UNSUPPORTED, "rope_scaling type 'llama3'");
    open_fails(tiny_folder("headdim", ", \"head_dim\": 2"), MINT_E_FORMAT,
               "rows (n_dims 2), the config says 1 heads x 2 = 2");
}

Test(hf_folder, refused_folders) {
    const char *d = fresh_dir("mistral");
    write_text(d, "config.json", "{\"architectures\": [\"MistralForCausalLM\"]}");
    open_fails(d, MINT_E_UNSUPPORTED, "architecture 'MistralForCausalLM' is not supported");

    d = fresh_dir("noconfig");
    open_fails(d, MINT_E_IO, "config.json");

    d = fresh_dir("nohidden");
    write_text(d, "config.json", "{\"architectures\": [\"LlamaForCausalLM\"]}");
    open_fails(d, MINT_E_FORMAT, "\"hidden_size\" is missing");

    d = fresh_dir("pickle");
    write_text(d, "config.json", TINY_CONFIG "}");
    write_text(d, "pytorch_model.bin", "PK");
    open_fails(d, MINT_E_UNSUPPORTED, "pytorch_model");

    d = fresh_dir("noweights");
    write_text(d, "config.json", TINY_CONFIG "}");
    open_fails(d, MINT_E_FORMAT, "no model.safetensors");

    d = fresh_dir("vocab");
    write_text(d, "config.json",
               "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 8, "
               "\"intermediate_size\": 16, \"num_hidden_layers\": 1, "
               "\"num_attention_heads\": 2, \"num_key_value_heads\": 1, "
               "\"vocab_size\": 17}");
    write_tiny_weights(d, NULL);
    open_fails(d, MINT_E_FORMAT, "vocab_size 17, but model.embed_tokens.weight has 16 rows");

    d = fresh_dir("unknown");
    write_text(d, "config.json", TINY_CONFIG "}");
    write_tiny_weights(d, "model.layers.0.mlp.experts.0.w1.weight");
    open_fails(d, MINT_E_UNSUPPORTED, "not a LlamaForCausalLM tensor mint knows");

    d = fresh_dir("layer");
    write_text(d, "config.json", TINY_CONFIG "}");
    write_tiny_weights(d, "model.layers.3.input_layernorm.weight");
    open_fails(d, MINT_E_FORMAT, "layer 3, but num_hidden_layers is 1");

    d = fresh_dir("inv_freq");
    write_text(d, "config.json", TINY_CONFIG "}");
    write_tiny_weights(d, "model.layers.0.self_attn.rotary_emb.inv_freq");
    mint_file *f = open_ok(d); // dropped, as the converter does
    mint_file_info info;
    mint_file_get_info(f, &info);
    cr_assert_eq(info.n_tensors, N_TINY);
    mint_file_close(f);
}

// An index whose weight_map disagrees with the shards, or names a path outside the folder.
Test(hf_folder, index_must_match_the_shards) {
    const char *d = tiny_folder("idx_escape", NULL);
    write_text(d, "model.safetensors.index.json",
               "{\"weight_map\": {\"model.norm.weight\": \"../model.safetensors\"}}");
    open_fails(d, MINT_E_FORMAT, "expected a file name in the folder");

    d = tiny_folder("idx_missing", NULL);
    write_text(d, "model.safetensors.index.json",
               "{\"weight_map\": {\"model.norm.weight\": \"model.safetensors\"}}");
    open_fails(d, MINT_E_FORMAT, "is not in the weight_map");

    // Every tensor listed, plus one that no shard has.
    char buf[4096] = "{\"metadata\": {}, \"weight_map\": {";
    for (int t = 0; t < N_TINY; t++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "\"%s\": \"model.safetensors\", ",
                 tiny_tensors[t].hf);
    char good[4096];
    snprintf(good, sizeof good, "%s\"lm_head.weight\": \"model.safetensors\"}}", buf);
    d = tiny_folder("idx_extra", NULL);
    write_text(d, "model.safetensors.index.json", good);
    open_fails(d, MINT_E_FORMAT, "tensor 'lm_head.weight' is in none of the shards");

    // The same index without the extra entry is fine.
    buf[strlen(buf) - 2] = '\0';
    snprintf(good, sizeof good, "%s}}", buf);
    d = tiny_folder("idx_ok", NULL);
    write_text(d, "model.safetensors.index.json", good);
    mint_file *f = open_ok(d);
    mint_file_close(f);
}

// ---------------------------------------------------------------------------------------------
// GGUF -> folder -> mint_file round trips

// Every llama.* entry of g is in h with the same type and value (h may have more, e.g.
// llama.vocab_size).
static void assert_same_llama_keys(const mint_file *g, const mint_file *h) {
    int n = 0;
    for (uint64_t i = 0; i < g->n_kv; i++) {
        const mint_kv *a = &g->kv[i];
        if (strncmp(a->key, "llama.", 6) != 0 && strcmp(a->key, "general.architecture") != 0)
            continue;
        const mint_kv *b = mint_file_find_kv(h, a->key);
        cr_assert_not_null(b, "%s missing", a->key);
        cr_assert_eq(a->type, b->type, "%s type", a->key);
        if (a->type == MINT_VAL_STRING)
            cr_assert_str_eq(a->str, b->str, "%s", a->key);
        else if (a->type == MINT_VAL_F32 || a->type == MINT_VAL_F64)
            cr_assert_eq((float)a->v.f, (float)b->v.f, "%s: %g vs %g", a->key, a->v.f, b->v.f);
        else
            cr_assert_eq(a->v.u, b->v.u, "%s", a->key);
        n++;
    }
    cr_assert_geq(n, 9);
}

Test(hf_roundtrip, stories260K_single_file) {
    mint_file *g = open_ok(mt_data_path("stories260K.gguf"));
    const char *d = mt_path(mt_tmpdir(), "stories260K-hf");
    mint_hf_export_opts o = {.write_tokenizer = true};
    mint_err err;
    cr_assert_eq(mint_hf_export(g, d, &o, &err), MINT_OK, "%s", err.msg);
    mint_file *h = open_ok(d);
    mt_same_tensors(g, h);
    assert_same_llama_keys(g, h);
    mt_same_vocab(g, h);
    cr_assert_eq(get_u32(h, "llama.vocab_size"), 512);
    cr_assert_eq(get_u32(h, "tokenizer.ggml.bos_token_id"), 1);
    cr_assert_eq(get_u32(h, "tokenizer.ggml.eos_token_id"), 2);
    cr_assert_eq(get_u32(h, "tokenizer.ggml.unknown_token_id"), 0);
    cr_assert_null(mint_file_find_kv(h, "llama.rope.freq_base")); // absent in the GGUF too
    // On disk q/k are in HF order: the inverse permutation of the GGUF rows.
    mint_file *st = open_ok(mt_path(d, "model.safetensors"));
    const mint_tdesc *q = mint_file_find(g, "blk.2.attn_q.weight");
    const mint_tdesc *k = mint_file_find(g, "blk.2.attn_k.weight");
    const mint_tdesc *hq = mint_file_find(st, "model.layers.2.self_attn.q_proj.weight");
    const mint_tdesc *hk = mint_file_find(st, "model.layers.2.self_attn.k_proj.weight");
    cr_assert(q && k && hq && hk);
    uint8_t *want = malloc(q->nbytes);
    mint_qk_permute(q->data, want, 64, 64 * 4, 8, false);
    cr_assert(memcmp(hq->data, want, q->nbytes) == 0);
    cr_assert(memcmp(hq->data, q->data, q->nbytes) != 0, "the permutation is not the identity");
    mint_qk_permute(k->data, want, 32, 64 * 4, 4, false);
    cr_assert(memcmp(hk->data, want, k->nbytes) == 0);
    free(want);
    mint_file_close(st);
    mint_file_close(h);
    mint_file_close(g);
}

Test(hf_roundtrip, stories260K_two_shards_and_index) {
    mint_file *g = open_ok(mt_data_path("stories260K.gguf"));
    const char *d = mt_path(mt_tmpdir(), "stories260K-sharded");
    // 1,171,200 bytes of tensors; 700,000 per shard splits after block 1.
    mint_hf_export_opts o = {.max_shard_bytes = 700000, .write_tokenizer = true};
    mint_err err;
    cr_assert_eq(mint_hf_export(g, d, &o, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(access(mt_path(d, "model-00001-of-00002.safetensors"), R_OK), 0);
    cr_assert_eq(access(mt_path(d, "model-00002-of-00002.safetensors"), R_OK), 0);
    cr_assert_eq(access(mt_path(d, "model.safetensors.index.json"), R_OK), 0);
    cr_assert_neq(access(mt_path(d, "model.safetensors"), R_OK), 0);
    mint_file *h = open_ok(d);
    cr_assert_eq(h->n_maps, 2);
    bool used[2] = {false, false};
    for (uint64_t i = 0; i < h->n_tensors; i++) used[h->t[i].shard] = true;
    cr_assert(used[0] && used[1]);
    mt_same_tensors(g, h);
    assert_same_llama_keys(g, h);
    mt_same_vocab(g, h);
    mint_file_close(h);
    mint_file_close(g);
}

// llama-2-tiny-random (F16 matrices, 32000 tokens) exported without a tokenizer, then given the
// real tokenizer.model: the vocabulary equals llama.cpp's ggml-vocab-llama-spm.gguf.
Test(hf_roundtrip, f16_model_with_the_llama_tokenizer_model) {
    mint_file *g = open_ok(mt_data_path("llama-2-tiny-random.gguf"));
    mint_file *vocab = open_ok(mt_data_path("ggml-vocab-llama-spm.gguf"));
    const char *d = mt_path(mt_tmpdir(), "tiny-random-hf");
    mint_err err;
    cr_assert_eq(mint_hf_export(g, d, NULL, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(symlink(mt_data_path("tokenizer.model"), mt_path(d, "tokenizer.model")), 0);
    mint_file *h = open_ok(d);
    mt_same_tensors(g, h);
    assert_same_llama_keys(g, h);
    mt_same_vocab(vocab, h);
    mt_same_vocab(g, h);
    cr_assert_eq(get_u32(h, "tokenizer.ggml.bos_token_id"), 1);
    cr_assert_eq(get_u32(h, "tokenizer.ggml.eos_token_id"), 2);
    cr_assert_eq(get_u32(h, "tokenizer.ggml.unknown_token_id"), 0);
    cr_assert_null(mint_file_find_kv(h, "tokenizer.ggml.padding_token_id"));
    bool b;
    cr_assert_eq(mint_file_get_bool(h, "tokenizer.ggml.add_space_prefix", &b, &err), MINT_OK);
    cr_assert(b);
    mint_tensor_info t;
    cr_assert_eq(mint_file_find_tensor(h, "blk.0.attn_q.weight", &t), MINT_OK);
    cr_assert_eq(t.type, MINT_TYPE_F16);
    // A folder whose vocab_size is smaller than the tokenizer is refused.
    const char *small = tiny_folder("small_vocab", NULL);
    cr_assert_eq(symlink(mt_data_path("tokenizer.model"), mt_path(small, "tokenizer.model")), 0);
    open_fails(small, MINT_E_FORMAT, "32000 pieces, more than vocab_size 16");
    mint_file_close(h);
    mint_file_close(vocab);
    mint_file_close(g);
}

// ---------------------------------------------------------------------------------------------
// Tokenizer side files

// A 10-piece tokenizer.model for the tiny folder.
static void write_tiny_spm(const char *dir) {
    static const char *const pieces[] = {"<unk>",
                                         "<s>",
                                         "</s>",
                                         "<0x41>",
                                         "\xe2\x96\x81"
                                         "a",
                                         "b",
                                         "c",
                                         "ab",
                                         "bc",
                                         "abc"};
    mint_spm_model m = {0};
    mint_spm_piece p[10];
    for (int i = 0; i < 10; i++) {
        p[i].text = (mint_str){pieces[i], strlen(pieces[i])};
        p[i].score = -(float)i;
        p[i].type = i == 0   ? MINT_SPM_UNKNOWN
                    : i < 3  ? MINT_SPM_CONTROL
                    : i == 3 ? MINT_SPM_BYTE
                    : i == 9 ? MINT_SPM_USER_DEFINED
                             : MINT_SPM_NORMAL;
    }
    m.pieces = p;
    m.n_pieces = 10;
    m.model_type = 2;
    m.vocab_size = 10;
    m.bos_id = 1;
    m.eos_id = 2;
    m.pad_id = -1;
    m.add_dummy_prefix = true;
    mint_err err;
    cr_assert_eq(mint_spm_write_file(&m, mt_path(dir, "tokenizer.model"), &err), MINT_OK, "%s",
                 err.msg);
}

static void expect_token(const mint_file *f, uint32_t id, const char *text, float score,
                         int32_t type) {
    const char *s;
    uint64_t len;
    mint_err err;
    const void *scores, *types;
    cr_assert_eq(mint_file_get_arr_str(f, "tokenizer.ggml.tokens", id, &s, &len, &err), MINT_OK);
    cr_assert(len == strlen(text) && memcmp(s, text, len) == 0, "token %u is '%.*s', want '%s'", id,
              (int)len, s, text);
    mint_file_get_arr(f, "tokenizer.ggml.scores", NULL, NULL, &scores, &err);
    mint_file_get_arr(f, "tokenizer.ggml.token_type", NULL, NULL, &types, &err);
    cr_assert_eq(((const float *)scores)[id], score, "token %u score", id);
    cr_assert_eq(((const int32_t *)types)[id], type, "token %u type", id);
}

Test(hf_tokenizer, model_config_and_added_tokens) {
    const char *d = tiny_folder("tok", ", \"pad_token_id\": 5");
    write_tiny_spm(d);
    write_text(d, "added_tokens.json", "{\"extra\": 6, \"too_far\": 99}");
    write_text(d, "tokenizer_config.json",
               "{\"add_bos_token\": false, \"add_eos_token\": true, \"add_prefix_space\": false, "
               "\"chat_template\": \"{{ messages }}\", \"added_tokens_decoder\": {"
               "\"7\": {\"content\": \"<|im_end|>\", \"special\": false}, "
               "\"8\": {\"content\": \"my\xe2\x96\x81tok\", \"special\": false}, "
               "\"12\": {\"content\": \"<sys>\", \"special\": true}}}");
    mint_file *f = open_ok(d);
    expect_token(f, 0, "<unk>", 0.0f, 2);
    expect_token(f, 3, "<0x41>", -3.0f, 6);
    expect_token(f, 4,
                 "\xe2\x96\x81"
                 "a",
                 -4.0f, 1);
    expect_token(f, 9, "abc", -9.0f, 1);           // USER_DEFINED in the proto -> NORMAL
    expect_token(f, 6, "extra", -1000.0f, 4);      // added_tokens.json
    expect_token(f, 7, "<|im_end|>", -1000.0f, 3); // looks special
    expect_token(f, 8, "my tok", -1000.0f, 4);     // user-defined: U+2581 -> space
    expect_token(f, 12, "<sys>", -1000.0f, 3);
    expect_token(f, 10, "[PAD10]", -10000.0f, 5); // padding up to vocab_size 16
    expect_token(f, 15, "[PAD15]", -10000.0f, 5);
    cr_assert_eq(get_u32(f, "tokenizer.ggml.bos_token_id"), 1);
    cr_assert_eq(get_u32(f, "tokenizer.ggml.padding_token_id"), 5);
    cr_assert_eq(get_u32(f, "tokenizer.ggml.unknown_token_id"), 0);
    bool b;
    mint_err err;
    cr_assert_eq(mint_file_get_bool(f, "tokenizer.ggml.add_bos_token", &b, &err), MINT_OK);
    cr_assert(!b);
    cr_assert_eq(mint_file_get_bool(f, "tokenizer.ggml.add_eos_token", &b, &err), MINT_OK);
    cr_assert(b);
    cr_assert_eq(mint_file_get_bool(f, "tokenizer.ggml.add_space_prefix", &b, &err), MINT_OK);
    cr_assert(!b);
    const char *s;
    cr_assert_eq(mint_file_get_str(f, "tokenizer.chat_template", &s, NULL, &err), MINT_OK);
    cr_assert_str_eq(s, "{{ messages }}");
    mint_file_close(f);
}

Test(hf_tokenizer, unigram_tokenizer_json) {
    const char *d = tiny_folder("unigram", NULL);
    write_text(d, "tokenizer.json",
               "{\"model\": {\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": [[\"<unk>\", 0.0], "
               "[\"<s>\", 0.0], [\"</s>\", 0.0], [\"\xe2\x96\x81"
               "a\", -1.5], [\"b\", -2.25], "
               "[\"<0x41>\", 0]]}, \"added_tokens\": [{\"id\": 1, \"content\": \"<s>\", "
               "\"special\": true}], \"pre_tokenizer\": {\"type\": \"Metaspace\", "
               "\"replacement\": \"\xe2\x96\x81\", \"prepend_scheme\": \"first\"}}");
    write_text(d, "tokenizer_config.json", "{\"bos_token\": \"<s>\"}");
    mint_file *f = open_ok(d);
    expect_token(f, 0, "<unk>", 0.0f, 2);
    expect_token(f, 1, "<s>", -1000.0f, 3);
    expect_token(f, 3,
                 "\xe2\x96\x81"
                 "a",
                 -1.5f, 1);
    expect_token(f, 4, "b", -2.25f, 1);
    expect_token(f, 5, "<0x41>", 0.0f, 6);
    expect_token(f, 6, "[PAD6]", -10000.0f, 5);
    cr_assert_eq(get_u32(f, "tokenizer.ggml.bos_token_id"), 1);
    bool b;
    mint_err err;
    cr_assert_eq(mint_file_get_bool(f, "tokenizer.ggml.add_space_prefix", &b, &err), MINT_OK);
    cr_assert(b);
    mint_file_close(f);

    d = tiny_folder("gpt2", NULL);
    write_text(d, "tokenizer.json",
               "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}}");
    open_fails(d, MINT_E_UNSUPPORTED, "byte-level BPE");
    d = tiny_folder("wordpiece", NULL);
    write_text(d, "tokenizer.json", "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}");
    open_fails(d, MINT_E_UNSUPPORTED, "model type 'WordPiece'");
}

// A SentencePiece-style BPE tokenizer.json built from stories260K's vocabulary: each merged piece
// gets one merge, in id order, so merge rank r = id - 259 and the derived score -r equals the
// SentencePiece score stories260K carries.
Test(hf_tokenizer, bpe_tokenizer_json_scores_follow_merge_ranks) {
    mint_file *g = open_ok(mt_data_path("stories260K.gguf"));
    const char *d = mt_path(mt_tmpdir(), "stories-bpe");
    mint_err err;
    cr_assert_eq(mint_hf_export(g, d, NULL, &err), MINT_OK, "%s", err.msg);
    const mint_kv *tok = mint_file_find_kv(g, "tokenizer.ggml.tokens");
    const mint_kv *typ = mint_file_find_kv(g, "tokenizer.ggml.token_type");
    const mint_str *text = tok->arr;
    const int32_t *type = typ->arr;
    json_object *vocab = json_object_new_object(), *merges = json_object_new_array();
    // GGUF array strings point into the map and are not NUL-terminated.
    char(*names)[64] = calloc(tok->n, 64);
    for (uint64_t i = 0; i < tok->n; i++) {
        snprintf(names[i], 64, "%.*s", (int)text[i].len, text[i].p);
        json_object_object_add(vocab, names[i], json_object_new_int64((int64_t)i));
    }
    bool *merged = calloc(tok->n, 1);
    for (uint64_t i = 0; i < tok->n; i++) {
        if (type[i] != 1) continue;
        for (uint64_t cut = 1; cut < text[i].len; cut++) {
            if (((unsigned char)text[i].p[cut] & 0xc0) == 0x80) continue; // inside a character
            char a[64], b[64];
            snprintf(a, sizeof a, "%.*s", (int)cut, names[i]);
            snprintf(b, sizeof b, "%s", names[i] + cut);
            json_object *ja, *jb;
            if (!json_object_object_get_ex(vocab, a, &ja) ||
                !json_object_object_get_ex(vocab, b, &jb))
                continue;
            json_object *pair = json_object_new_array();
            json_object_array_add(pair, json_object_new_string(a));
            json_object_array_add(pair, json_object_new_string(b));
            json_object_array_add(merges, pair);
            merged[i] = true;
            break;
        }
    }
    json_object *model = json_object_new_object(), *root = json_object_new_object();
    json_object_object_add(model, "type", json_object_new_string("BPE"));
    json_object_object_add(model, "byte_fallback", json_object_new_boolean(1));
    json_object_object_add(model, "unk_token", json_object_new_string("<unk>"));
    json_object_object_add(model, "vocab", vocab);
    json_object_object_add(model, "merges", merges);
    json_object_object_add(root, "model", model);
    json_object *added = json_object_new_array();
    for (int i = 0; i < 3; i++) {
        json_object *a = json_object_new_object();
        json_object_object_add(a, "id", json_object_new_int(i));
        json_object_object_add(a, "content", json_object_new_string(names[i]));
        json_object_object_add(a, "special", json_object_new_boolean(1));
        json_object_array_add(added, a);
    }
    json_object_object_add(root, "added_tokens", added);
    json_object_to_file_ext(mt_path(d, "tokenizer.json"), root, JSON_C_TO_STRING_PLAIN);
    json_object_put(root);

    mint_file *h = open_ok(d);
    const void *gs, *hs, *hy;
    mint_file_get_arr(g, "tokenizer.ggml.scores", NULL, NULL, &gs, &err);
    mint_file_get_arr(h, "tokenizer.ggml.scores", NULL, NULL, &hs, &err);
    mint_file_get_arr(h, "tokenizer.ggml.token_type", NULL, NULL, &hy, &err);
    int n_merged = 0;
    for (uint64_t i = 3; i < tok->n; i++) {
        cr_assert_eq(((const int32_t *)hy)[i], type[i], "type %" PRIu64, i);
        if (type[i] == 6 || merged[i]) {
            cr_assert_eq(((const float *)hs)[i], ((const float *)gs)[i], "score of %" PRIu64, i);
            n_merged += merged[i];
        }
    }
    // stories260K: 253 NORMAL pieces, of which 151 are merges and 102 single characters (which
    // no merge makes, so their score is 0 instead of SentencePiece's).
    cr_assert_eq(n_merged, 151, "merged pieces with a split: %d", n_merged);
    for (uint64_t i = 3; i < tok->n; i++) {
        if (type[i] != 1 || merged[i]) continue;
        unsigned char c0 = (unsigned char)text[i].p[0];
        size_t char_len = c0 < 0x80 ? 1 : c0 >= 0xf0 ? 4 : c0 >= 0xe0 ? 3 : 2;
        cr_assert_eq(text[i].len, char_len, "piece %" PRIu64 " without a merge", i);
        cr_assert_eq(((const float *)hs)[i], 0.0f);
    }
    for (int i = 0; i < 3; i++) expect_token(h, (uint32_t)i, names[i], -1000.0f, 3);
    cr_assert_eq(get_u32(h, "tokenizer.ggml.unknown_token_id"), 0);
    cr_assert_eq(get_u32(h, "tokenizer.ggml.bos_token_id"), 1); // config.json bos_token_id
    free(merged);
    free(names);
    mint_file_close(h);
    mint_file_close(g);
}

// mint-inspect shows a folder as the GGUF it stands for.
Test(hf_folder, mint_inspect_reads_a_folder) {
    const char *d = tiny_folder("inspect", NULL);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "%s --hash %s", mt_bin("mint-inspect"), d);
    char *out = NULL;
    cr_assert_eq(mt_run(cmd, &out, NULL), 0);
    cr_assert(strstr(out, "format:      hf-checkpoint"), "%s", out);
    cr_assert(strstr(out, "blk.0.attn_q.weight"), "%s", out);
    free(out);
}

// Refusals: one line naming what is not read.
Test(hf_folder, refused_classes_and_pre_tokenizers) {
    const char *d = fresh_dir("gemma3_vision");
    write_text(d, "config.json",
               "{\"architectures\": [\"Gemma3ForConditionalGeneration\"], \"text_config\": {}}");
    open_fails(d, MINT_E_UNSUPPORTED, "'Gemma3ForConditionalGeneration' (Gemma 3 with its vision");
    d = fresh_dir("t5");
    write_text(d, "config.json", "{\"architectures\": [\"T5ForConditionalGeneration\"]}");
    open_fails(d, MINT_E_UNSUPPORTED,
               "architecture 'T5ForConditionalGeneration' is not supported (mint reads "
               "LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Gemma2ForCausalLM, "
               "Gemma3ForCausalLM, Phi3ForCausalLM, GPT2LMHeadModel)");
    // A class name with an escaped newline stays one line ('?' for the control byte; found by
    // tests/fuzz/fuzz_hf.c).
    d = fresh_dir("newline_class");
    write_text(d, "config.json", "{\"architectures\": [\"T5\\nX\"]}");
    open_fails(d, MINT_E_UNSUPPORTED, "architecture 'T5?X' is not supported");
    // A byte-level BPE whose Split regex is none mint knows.
    d = tiny_folder("odd_pre", NULL);
    write_text(d, "tokenizer.json",
               "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}, "
               "\"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": "
               "\"Split\", \"pattern\": {\"Regex\": \"\\\\p{L}+\"}, \"behavior\": \"Isolated\", "
               "\"invert\": false}, {\"type\": \"ByteLevel\", \"use_regex\": false}]}}");
    open_fails(d, MINT_E_UNSUPPORTED, "is not one mint can name");
    // The same vocabulary under GPT-2's ByteLevel opens as a "gpt2" vocabulary.
    d = tiny_folder("gpt2_pre", NULL);
    write_text(d, "tokenizer.json",
               "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2}, "
               "\"merges\": [[\"a\", \"b\"]]}, \"pre_tokenizer\": {\"type\": \"ByteLevel\"}}");
    mint_file *f = open_ok(d);
    const char *s;
    mint_err err;
    cr_assert_eq(mint_file_get_str(f, "tokenizer.ggml.model", &s, NULL, &err), MINT_OK);
    cr_assert_str_eq(s, "gpt2");
    cr_assert_eq(mint_file_get_arr_str(f, "tokenizer.ggml.merges", 0, &s, NULL, &err), MINT_OK);
    cr_assert(strncmp(s, "a b", 3) == 0);
    mint_file_close(f);
    // Phi-3's LongRoPE factors must be head size / 2 long.
    d = fresh_dir("phi3_factors");
    write_text(d, "config.json",
               "{\"architectures\": [\"Phi3ForCausalLM\"], \"hidden_size\": 8, "
               "\"intermediate_size\": 16, \"num_hidden_layers\": 1, \"num_attention_heads\": 2, "
               "\"max_position_embeddings\": 64, \"original_max_position_embeddings\": 32, "
               "\"rope_scaling\": {\"type\": \"longrope\", \"long_factor\": [1.0], "
               "\"short_factor\": [1.0, 1.0]}}");
    open_fails(d, MINT_E_FORMAT, "rope_scaling.long_factor has 1 factors, the head size 4 needs 2");
}
