// synth_vocab.c - the vocabularies of synthetic files (runtime/filetools/synth_vocab.h).
#include "runtime/filetools/synth_vocab.h"

#include "base/error.h"
#include "formats/sentencepiece.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The built-in vocabulary: <unk>, <s>, </s>, the 256 byte tokens, then lower-case letter pieces
// ("▁a".."▁z", "aa".., "▁aa"..) until the preset's size, so random output prints as letters.
mint_status mint_synth_byte_vocab(mint_gguf_writer *w, int32_t n_vocab, mint_err *err) {
    mint_str *tok = calloc((size_t)n_vocab, sizeof *tok);
    float *score = calloc((size_t)n_vocab, sizeof *score);
    int32_t *type = calloc((size_t)n_vocab, sizeof *type);
    char *text = calloc((size_t)n_vocab, 16);
    if (!tok || !score || !type || !text) {
        free(tok), free(score), free(type), free(text);
        return mint_fail(err, MINT_E_NOMEM, "out of memory");
    }
    int32_t i = 0;
    const char *special[3] = {"<unk>", "<s>", "</s>"};
    const int32_t special_type[3] = {2, 3, 3}; // UNKNOWN, CONTROL, CONTROL
    for (; i < 3 && i < n_vocab; i++) {
        snprintf(text + 16 * i, 16, "%s", special[i]);
        type[i] = special_type[i];
    }
    for (int b = 0; b < 256 && i < n_vocab; b++, i++) {
        snprintf(text + 16 * i, 16, "<0x%02X>", b);
        type[i] = 6; // BYTE
    }
    // Letter pieces of growing length, with and without the word-start mark U+2581.
    for (int len = 1; i < n_vocab && len <= 4; len++)
        for (int space = 1; space >= 0 && i < n_vocab; space--) {
            long combos = 1;
            for (int k = 0; k < len; k++) combos *= 26;
            for (long c = 0; c < combos && i < n_vocab; c++, i++) {
                char *p = text + 16 * i;
                int o = 0;
                if (space) o += snprintf(p, 16, "\xE2\x96\x81");
                long v = c;
                for (int k = 0; k < len; k++, v /= 26) p[o++] = (char)('a' + v % 26);
                p[o] = '\0';
                type[i] = 1; // NORMAL
                score[i] = -(float)(i - 259);
            }
        }
    for (int32_t k = 0; k < n_vocab; k++) tok[k] = (mint_str){text + 16 * k, strlen(text + 16 * k)};
    mint_status st = mint_gguf_add_str(w, "tokenizer.ggml.model", "llama");
    if (!st) st = mint_gguf_add_arr_str(w, "tokenizer.ggml.tokens", tok, (uint64_t)n_vocab);
    if (!st)
        st = mint_gguf_add_arr(w, "tokenizer.ggml.scores", MINT_VAL_F32, score, (uint64_t)n_vocab);
    if (!st)
        st = mint_gguf_add_arr(w, "tokenizer.ggml.token_type", MINT_VAL_I32, type,
                               (uint64_t)n_vocab);
    if (!st) st = mint_gguf_add_u32(w, "tokenizer.ggml.bos_token_id", 1);
    if (!st) st = mint_gguf_add_u32(w, "tokenizer.ggml.eos_token_id", 2);
    if (!st) st = mint_gguf_add_u32(w, "tokenizer.ggml.unknown_token_id", 0);
    free(tok), free(score), free(type), free(text);
    return st ? mint_fail(err, st, "out of memory writing the vocabulary") : MINT_OK;
}

// Copies the tokenizer.* entries of a GGUF (its vocabulary) and returns its size.
mint_status mint_synth_gguf_vocab(mint_gguf_writer *w, const char *path, int32_t *n_vocab,
                                  mint_err *err) {
    mint_file *f;
    mint_status st = mint_file_open(path, &f, err);
    if (st) return st;
    uint64_t n = 0;
    st = mint_file_get_arr(f, "tokenizer.ggml.tokens", NULL, &n, NULL, err);
    for (uint64_t i = 0; st == MINT_OK && i < f->n_kv; i++)
        if (strncmp(f->kv[i].key, "tokenizer.", 10) == 0) st = mint_gguf_add_kv_from(w, f, i);
    mint_file_close(f);
    if (st) {
        mint_err_prefix(err, "vocabulary %s", path);
        return st;
    }
    if (n < 3 || n > (1u << 24))
        return mint_fail(err, MINT_E_FORMAT, "vocabulary %s: %" PRIu64 " tokens", path, n);
    *n_vocab = (int32_t)n;
    return MINT_OK;
}

// A SentencePiece tokenizer.model turned into tokenizer.ggml.* entries (types as stored).
mint_status mint_synth_spm_vocab(mint_gguf_writer *w, const char *path, int32_t *n_vocab,
                                 mint_err *err) {
    mint_spm_model sp;
    mint_status st = mint_spm_load(path, &sp, err);
    if (st) return st;
    uint32_t n = sp.n_pieces;
    mint_str *tok = calloc(n, sizeof *tok);
    float *score = calloc(n, sizeof *score);
    int32_t *type = calloc(n, sizeof *type);
    if (!tok || !score || !type) st = mint_fail(err, MINT_E_NOMEM, "out of memory");
    for (uint32_t i = 0; !st && i < n; i++) {
        tok[i] = sp.pieces[i].text;
        score[i] = sp.pieces[i].score;
        type[i] = sp.pieces[i].type;
    }
    if (!st) st = mint_gguf_add_str(w, "tokenizer.ggml.model", "llama");
    if (!st) st = mint_gguf_add_arr_str(w, "tokenizer.ggml.tokens", tok, n);
    if (!st) st = mint_gguf_add_arr(w, "tokenizer.ggml.scores", MINT_VAL_F32, score, n);
    if (!st) st = mint_gguf_add_arr(w, "tokenizer.ggml.token_type", MINT_VAL_I32, type, n);
    const struct {
        const char *key;
        int32_t id;
    } ids[] = {{"tokenizer.ggml.bos_token_id", sp.bos_id},
               {"tokenizer.ggml.eos_token_id", sp.eos_id},
               {"tokenizer.ggml.unknown_token_id", sp.unk_id}};
    for (size_t i = 0; !st && i < 3; i++)
        if (ids[i].id >= 0) st = mint_gguf_add_u32(w, ids[i].key, (uint32_t)ids[i].id);
    if (st == MINT_E_NOMEM && err && err->code != MINT_E_NOMEM)
        st = mint_fail(err, st, "out of memory writing the vocabulary");
    free(tok), free(score), free(type);
    mint_spm_free(&sp);
    *n_vocab = (int32_t)n;
    return st;
}

bool mint_synth_is_gguf(const char *path) {
    FILE *fp = fopen(path, "rb");
    char magic[4] = {0};
    bool yes = fp && fread(magic, 1, 4, fp) == 4 && memcmp(magic, "GGUF", 4) == 0;
    if (fp) fclose(fp);
    return yes;
}
