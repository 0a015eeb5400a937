// fuzz_hf.c - a Hugging Face checkpoint folder's JSON files on arbitrary bytes: config.json for
// every class of formats/hf_arch.c, tokenizer.json (SentencePiece-style BPE, Unigram, byte-level
// BPE and its pre-tokenizer naming, formats/hf_bpe.h) and tokenizer_config.json
// (formats/hf_checkpoint.h).
//
// The input is NUL-separated: config.json, then optionally tokenizer.json and
// tokenizer_config.json (an empty field: no such file). They are written into one folder made at
// start-up, which also holds a tiny model.safetensors with Llama's / Qwen2's tensor names
// (hidden 8, 2 heads of 4, 1 KV head, ffn 16, 1 layer, 16 tokens), so a config that agrees with
// it opens and the tokenizer files are read.
//
// Checked: mint_hf_open returns MINT_OK or an error whose message is one line; an opened folder
// has a tokenizer.ggml.tokens array of the config's vocabulary size when it has one, every
// tensor has a GGUF name (no HF name left) and data for its bytes, and it closes cleanly.
#include "formats/hf_checkpoint.h"
#include "formats/safetensors.h"
#include "fuzz_util.h"
#include "quant/types.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char dir[64]; // the folder, made once

static void write_file(const char *name, const char *text, size_t len) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!len) {
        unlink(path);
        return;
    }
    FILE *fp = fopen(path, "wb");
    FUZZ_CHECK(fp && fwrite(text, 1, len, fp) == len && fclose(fp) == 0);
}

static void make_weights(void) {
    static const struct {
        const char *name; // HF name
        int64_t ne[2];    // ggml order
        uint32_t n_dims;  // 1 or 2
    } t[] = {
        {"model.embed_tokens.weight", {8, 16}, 2},
        {"model.norm.weight", {8, 1}, 1},
        {"model.layers.0.input_layernorm.weight", {8, 1}, 1},
        {"model.layers.0.self_attn.q_proj.weight", {8, 8}, 2},
        {"model.layers.0.self_attn.k_proj.weight", {8, 4}, 2},
        {"model.layers.0.self_attn.v_proj.weight", {8, 4}, 2},
        {"model.layers.0.self_attn.o_proj.weight", {8, 8}, 2},
        {"model.layers.0.post_attention_layernorm.weight", {8, 1}, 1},
        {"model.layers.0.mlp.gate_proj.weight", {8, 16}, 2},
        {"model.layers.0.mlp.up_proj.weight", {8, 16}, 2},
        {"model.layers.0.mlp.down_proj.weight", {16, 8}, 2},
    };
    static float data[16 * 8];
    for (int i = 0; i < 16 * 8; i++) data[i] = (float)i / 128.0f;
    mint_st_writer *w = mint_st_writer_create();
    mint_err err;
    FUZZ_CHECK(w != NULL);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        FUZZ_CHECK(mint_st_writer_add(w, t[i].name, MINT_TYPE_F32, t[i].n_dims, t[i].ne, data,
                                      (uint64_t)(t[i].ne[0] * t[i].ne[1]) * sizeof(float),
                                      &err) == MINT_OK);
    char path[128];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    FUZZ_CHECK(mint_st_writer_write_file(w, path, &err) == MINT_OK);
    mint_st_writer_free(w);
}

static void check_open(const mint_file *f) {
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        const mint_tdesc *t = &f->t[i];
        FUZZ_CHECK(t->name && strncmp(t->name, "model.", 6) != 0);
        FUZZ_CHECK(t->nbytes == 0 || t->data != NULL);
    }
    const mint_kv *tok = mint_file_find_kv(f, "tokenizer.ggml.tokens");
    const mint_kv *typ = mint_file_find_kv(f, "tokenizer.ggml.token_type");
    if (tok) {
        FUZZ_CHECK(tok->type == MINT_VAL_ARRAY && tok->elem_type == MINT_VAL_STRING);
        FUZZ_CHECK(typ && typ->n == tok->n);
        const mint_tdesc *emb = mint_file_find(f, "token_embd.weight");
        FUZZ_CHECK(emb && (uint64_t)emb->ne[1] == tok->n);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/fuzz_hf.XXXXXX");
        FUZZ_CHECK(mkdtemp(dir) != NULL);
        make_weights();
    }
    fuzz_fields in;
    FUZZ_CHECK(fuzz_split(data, size, 3, &in));
    static const char *const names[3] = {"config.json", "tokenizer.json", "tokenizer_config.json"};
    for (size_t i = 0; i < 3; i++)
        write_file(names[i], i < in.n ? in.field[i] : "", i < in.n ? in.len[i] : 0);
    mint_file *f = NULL;
    mint_err err = {0};
    mint_status st = mint_hf_open(dir, false, &f, &err);
    if (st == MINT_OK) {
        check_open(f);
        mint_file_close(f);
    } else {
        FUZZ_CHECK(f == NULL && err.msg[0] != '\0' && strchr(err.msg, '\n') == NULL);
    }
    fuzz_fields_free(&in);
    return 0;
}
