// fuzz_bpe.c - the byte-level BPE tokenizer (pre-tokenizer regexes, merges, byte map) on
// arbitrary bytes, invalid UTF-8 included.
//
// The vocabulary is loaded once, at start-up: MINT_TEST_DATA's vocab/ggml-vocab-llama-bpe.gguf
// (Llama 3: 128256 tokens, 280147 merges, the llama3 regex), else a small "gpt2" vocabulary
// made here with the GGUF writer (the 256 byte characters, a few merges, a control and a
// user-defined token, the "default" pre-tokenizer's four regexes).
//
// Each input is tokenized plain (add_special and parse_special off) and as a chat prompt (both
// on). Checked: the call succeeds; a too-small id buffer gives MINT_E_LIMIT, the same count and
// a prefix of the ids; every id is in range; BOS is first when the vocabulary adds it. Plain
// tokens' pieces, concatenated, are exactly the input as llama.cpp reads it (each invalid byte
// as U+FFFD): byte-level BPE loses nothing. detokenize's first answer bounds the second, and
// equals the pieces' total before the clean-up.
#include "formats/gguf.h"
#include "fuzz_util.h"
#include "runtime/text/byte_unicode.h"
#include "runtime/text/vocab.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static mint_vocab *vocab;     // loaded once
static mint_file *vocab_file; // the file it was loaded from
static uint8_t *vocab_image;  // the built-in vocabulary's GGUF image, when used

static mint_file *open_data_file(const char *name) {
    const char *dir = getenv("MINT_TEST_DATA");
    if (!dir || !*dir) return NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    mint_file *f = NULL;
    mint_err err;
    return mint_gguf_open(path, false, &f, &err) == MINT_OK ? f : NULL;
}

// The 256 byte characters (ids 0..255), merges that build " the", "hello" and "\n\n", a control
// token and a user-defined one.
static mint_file *builtin_vocab(void) {
    static char chars[256][4];
    static const char *const extra[] = {"\xC4\xA0t", "he",    "\xC4\xA0the",      "ll",
                                        "hell",      "hello", "\xC4\x8A\xC4\x8A", "<|eot|>",
                                        "<tool>"};
    static const char *const merges[] = {"\xC4\xA0 t", "h e",    "\xC4\xA0t he",     "l l",
                                         "he ll",      "hell o", "\xC4\x8A \xC4\x8A"};
    enum { N_EXTRA = 9, N_MERGES = 7 };
    mint_str tok[256 + N_EXTRA], mer[N_MERGES];
    int32_t type[256 + N_EXTRA];
    for (int b = 0; b < 256; b++) {
        uint32_t k = mint_utf8_encode(mint_byte_to_cp((uint8_t)b), chars[b]);
        tok[b] = (mint_str){chars[b], k};
        type[b] = 1;
    }
    for (int i = 0; i < N_EXTRA; i++) {
        tok[256 + i] = (mint_str){extra[i], strlen(extra[i])};
        type[256 + i] = 1;
    }
    type[256 + 7] = 3; // <|eot|>: CONTROL
    type[256 + 8] = 4; // <tool>: USER_DEFINED
    for (int i = 0; i < N_MERGES; i++) mer[i] = (mint_str){merges[i], strlen(merges[i])};
    mint_gguf_writer *w = mint_gguf_writer_create();
    if (!w) return NULL;
    mint_gguf_add_str(w, "general.architecture", "gpt2");
    mint_gguf_add_str(w, "tokenizer.ggml.model", "gpt2");
    mint_gguf_add_str(w, "tokenizer.ggml.pre", "default");
    mint_gguf_add_arr_str(w, "tokenizer.ggml.tokens", tok, 256 + N_EXTRA);
    mint_gguf_add_arr(w, "tokenizer.ggml.token_type", MINT_VAL_I32, type, 256 + N_EXTRA);
    mint_gguf_add_arr_str(w, "tokenizer.ggml.merges", mer, N_MERGES);
    mint_gguf_add_u32(w, "tokenizer.ggml.bos_token_id", 256 + 7);
    mint_gguf_add_bool(w, "tokenizer.ggml.add_bos_token", true);
    size_t len;
    mint_err err;
    mint_file *f = NULL;
    if (mint_gguf_writer_write_mem(w, &vocab_image, &len, &err) == MINT_OK)
        (void)mint_gguf_parse(vocab_image, len, "builtin-bpe.gguf", &f, &err);
    mint_gguf_writer_free(w);
    return f;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    mint_err err;
    vocab_file = open_data_file("vocab/ggml-vocab-llama-bpe.gguf");
    if (vocab_file && mint_vocab_load(vocab_file, &vocab, &err) != MINT_OK) {
        mint_file_close(vocab_file);
        vocab_file = NULL;
    }
    if (!vocab) {
        vocab_file = builtin_vocab();
        FUZZ_CHECK(vocab_file && mint_vocab_load(vocab_file, &vocab, &err) == MINT_OK);
    }
    FUZZ_CHECK(vocab->kind == MINT_VOCAB_BPE);
    return 0;
}

// Tokenizes into a malloc'd array, first into a deliberately short buffer.
static int32_t *tokenize(const char *text, size_t len, bool add_special, bool parse_special,
                         size_t *n) {
    mint_err err;
    size_t cap = len / 3 + 1;
    int32_t *ids = malloc(cap * sizeof *ids);
    FUZZ_CHECK(ids);
    mint_status st =
        mint_vocab_tokenize(vocab, text, len, add_special, parse_special, ids, cap, n, &err);
    FUZZ_CHECK(st == MINT_OK || st == MINT_E_LIMIT);
    FUZZ_CHECK((st == MINT_E_LIMIT) == (*n > cap));
    if (st == MINT_E_LIMIT) {
        size_t want = *n;
        int32_t *first = ids;
        ids = malloc(want * sizeof *ids);
        FUZZ_CHECK(ids);
        st = mint_vocab_tokenize(vocab, text, len, add_special, parse_special, ids, want, n, &err);
        FUZZ_CHECK(st == MINT_OK && *n == want);
        FUZZ_CHECK(memcmp(first, ids, cap * sizeof *ids) == 0);
        free(first);
    }
    for (size_t i = 0; i < *n; i++) FUZZ_CHECK(ids[i] >= 0 && ids[i] < vocab->n);
    if (add_special && vocab->add_bos) FUZZ_CHECK(*n >= 1 && ids[0] == vocab->bos);
    return ids;
}

// The input as llama.cpp reads it: each invalid byte becomes U+FFFD.
static char *as_read(const char *s, size_t n, size_t *out_len) {
    char *out = malloc(3 * n + 1);
    FUZZ_CHECK(out);
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        uint32_t k, cp = mint_utf8_decode(s + i, n - i, &k);
        o += mint_utf8_encode(cp, out + o);
        i += k;
    }
    *out_len = o;
    return out;
}

// Concatenated pieces (unparse_special) equal `want`; detokenize's two answers agree with them.
static void check_text(const int32_t *ids, size_t n, const char *want, size_t want_len) {
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += mint_vocab_token_to_piece(vocab, ids[i], true, 0, NULL, 0);
    char *text = malloc(total + 1), *p = text;
    FUZZ_CHECK(text);
    for (size_t i = 0; i < n; i++) {
        size_t k = mint_vocab_token_to_piece(vocab, ids[i], true, 0, p, total - (size_t)(p - text));
        p += k;
    }
    if (want) FUZZ_CHECK(total == want_len && memcmp(text, want, total) == 0);
    size_t bound = mint_vocab_detokenize(vocab, ids, n, false, true, NULL, 0);
    FUZZ_CHECK(bound == total || (vocab->add_space_prefix && bound + 1 == total));
    char *out = malloc(bound + 1);
    FUZZ_CHECK(out);
    size_t got = mint_vocab_detokenize(vocab, ids, n, false, true, out, bound);
    FUZZ_CHECK(got <= bound);
    if (!vocab->clean_spaces) FUZZ_CHECK(got == bound && memcmp(out, text, got) == 0);
    free(out);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    size_t n = 0, want_len;

    int32_t *ids = tokenize(text, size, false, false, &n);
    FUZZ_CHECK(size == 0 || n > 0);
    char *want = as_read(text, size, &want_len);
    check_text(ids, n, want, want_len);
    free(want);
    free(ids);

    ids = tokenize(text, size, true, true, &n);
    check_text(ids, n, NULL, 0);
    free(ids);
    return 0;
}
