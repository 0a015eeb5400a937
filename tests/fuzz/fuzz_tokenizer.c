// fuzz_tokenizer.c - the SentencePiece-BPE tokenizer on arbitrary bytes.
//
// The vocabulary is loaded once, at start-up: MINT_TEST_DATA's ggml-vocab-llama-spm.gguf (the
// 32000-token Llama vocabulary), else its stories260K.gguf (512 tokens), else a small vocabulary
// made here with the GGUF writer (bytes, letters, a few merges, control and user-defined tokens).
//
// Each input is tokenized twice: plain (add_special and parse_special off) and as a chat prompt
// (both on). Checked: the call succeeds (every byte has a fallback token in these vocabularies),
// a too-small id buffer gives MINT_E_LIMIT and the same count, every id is in range, BOS / EOS
// are where the vocabulary asks; each id's piece (up to 64 ids per list) fits the size
// token_to_piece reports and is not written when the buffer is one byte short; detokenize
// (which reads every id's piece) equals the concatenated pieces, and with a short buffer writes
// whole pieces only. And the round trip: plain tokens of valid UTF-8 without U+2581, made only
// of NORMAL and BYTE tokens, detokenize to exactly the input.
#include "formats/gguf.h"
#include "fuzz_util.h"
#include "runtime/text/vocab.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static mint_vocab *vocab;        // loaded once
static mint_file *vocab_file;    // the file it was loaded from (open for the process's life)
static uint8_t *vocab_image;     // the built-in vocabulary's GGUF image, when used
static bool every_byte_fallback; // every byte has a fallback token
static bool has_space_token;     // "▁" is a token, so escaped spaces never fall back to bytes
static char *piece_buf;          // [piece_cap] heap buffer for one piece, written at its end so
static size_t piece_cap;         // that AddressSanitizer's redzone sits right after the piece

// ---------------------------------------------------------------------------------------------
// Start-up: the vocabulary

static mint_file *open_data_file(const char *name) {
    const char *dir = getenv("MINT_TEST_DATA");
    if (!dir || !*dir) return NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    mint_file *f = NULL;
    mint_err err;
    return mint_gguf_open(path, false, &f, &err) == MINT_OK ? f : NULL;
}

// A small "llama" vocabulary: <unk> <s> </s>, the 256 byte tokens, letters and digits, merges
// that build " the", " Hello" and " world", an end-of-turn control token and a user-defined one.
static mint_file *builtin_vocab(void) {
    enum { MAX_TOK = 400 };
    static char bytes[256][7];
    static char chars[62][2];
    static const char *const merges[] = {
        "\xE2\x96\x81",
        "\xE2\x96\x81t",
        "he",
        "\xE2\x96\x81the",
        "in",
        "er",
        "an",
        "on",
        "\xE2\x96\x81w",
        "or",
        "ld",
        "\xE2\x96\x81wor",
        "\xE2\x96\x81world",
        "\xE2\x96\x81H",
        "el",
        "ell",
        "ello",
        "\xE2\x96\x81Hello",
        "\xE2\x96\x81\xE2\x96\x81",
        "\xE2\x96\x81\xE2\x96\x81\xE2\x96\x81\xE2\x96\x81",
        "\xC3\xA9",
    };
    mint_str tok[MAX_TOK];
    float score[MAX_TOK];
    int32_t type[MAX_TOK];
    int n = 0;
    const char *specials[] = {"<unk>", "<s>", "</s>"};
    const int32_t special_types[] = {2, 3, 3};
    for (int i = 0; i < 3; i++) {
        tok[n] = (mint_str){specials[i], strlen(specials[i])};
        score[n] = 0;
        type[n++] = special_types[i];
    }
    for (int b = 0; b < 256; b++) {
        snprintf(bytes[b], sizeof bytes[b], "<0x%02X>", b);
        tok[n] = (mint_str){bytes[b], 6};
        score[n] = 0;
        type[n++] = 6;
    }
    const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (int i = 0; i < 62; i++) {
        chars[i][0] = alnum[i];
        tok[n] = (mint_str){chars[i], 1};
        score[n] = -1000.0f - (float)i;
        type[n++] = 1;
    }
    for (size_t i = 0; i < sizeof merges / sizeof merges[0]; i++) {
        tok[n] = (mint_str){merges[i], strlen(merges[i])};
        score[n] = -(float)i;
        type[n++] = 1;
    }
    const char *extra[] = {"<|im_end|>", "<|user|>"};
    const int32_t extra_types[] = {3, 4};
    for (int i = 0; i < 2; i++) {
        tok[n] = (mint_str){extra[i], strlen(extra[i])};
        score[n] = 0;
        type[n++] = extra_types[i];
    }
    mint_gguf_writer *w = mint_gguf_writer_create();
    if (!w) return NULL;
    mint_gguf_add_str(w, "general.architecture", "llama");
    mint_gguf_add_str(w, "tokenizer.ggml.model", "llama");
    mint_gguf_add_arr_str(w, "tokenizer.ggml.tokens", tok, (uint64_t)n);
    mint_gguf_add_arr(w, "tokenizer.ggml.scores", MINT_VAL_F32, score, (uint64_t)n);
    mint_gguf_add_arr(w, "tokenizer.ggml.token_type", MINT_VAL_I32, type, (uint64_t)n);
    size_t len;
    mint_err err;
    mint_file *f = NULL;
    if (mint_gguf_writer_write_mem(w, &vocab_image, &len, &err) == MINT_OK)
        (void)mint_gguf_parse(vocab_image, len, "builtin-vocab.gguf", &f, &err);
    mint_gguf_writer_free(w);
    return f;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    const char *const names[] = {"ggml-vocab-llama-spm.gguf", "stories260K.gguf"};
    mint_err err;
    for (int i = 0; i < 2 && !vocab; i++) {
        vocab_file = open_data_file(names[i]);
        if (vocab_file && mint_vocab_load(vocab_file, &vocab, &err) != MINT_OK) {
            mint_file_close(vocab_file);
            vocab_file = NULL;
        }
    }
    if (!vocab) {
        vocab_file = builtin_vocab();
        FUZZ_CHECK(vocab_file && mint_vocab_load(vocab_file, &vocab, &err) == MINT_OK);
    }
    every_byte_fallback = true;
    for (int b = 0; b < 256; b++) every_byte_fallback &= vocab->byte_id[b] >= 0;
    has_space_token = mint_vocab_find(vocab, "\xE2\x96\x81", 3) >= 0;
    // No piece is longer than its token's text.
    piece_cap = vocab->max_token_len + 1;
    piece_buf = malloc(piece_cap);
    FUZZ_CHECK(piece_buf);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Checks

// Strict UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
static bool valid_utf8(const uint8_t *s, size_t n) {
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        size_t k = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
        if (c >= 0x80 && (c < 0xC2 || c > 0xF4)) return false;
        if (k > n - i) return false;
        for (size_t j = 1; j < k; j++)
            if ((s[i + j] & 0xC0) != 0x80) return false;
        if (k == 3) {
            uint8_t d = s[i + 1];
            if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d > 0x9F)) return false;
        }
        if (k == 4) {
            uint8_t d = s[i + 1];
            if ((c == 0xF0 && d < 0x90) || (c == 0xF4 && d > 0x8F)) return false;
        }
        i += k;
    }
    return true;
}

// Tokenizes into a malloc'd array (first into a deliberately short buffer when the text is long
// enough for that to matter, which must say MINT_E_LIMIT with the full count).
static int32_t *tokenize(const char *text, size_t len, bool add_special, bool parse_special,
                         size_t *n) {
    mint_err err;
    size_t cap = len / 2 + 1;
    int32_t *ids = malloc(cap * sizeof *ids);
    FUZZ_CHECK(ids);
    mint_status st =
        mint_vocab_tokenize(vocab, text, len, add_special, parse_special, ids, cap, n, &err);
    if (st == MINT_E_UNSUPPORTED) FUZZ_CHECK(!every_byte_fallback);
    if (st == MINT_E_UNSUPPORTED) {
        free(ids);
        return NULL;
    }
    FUZZ_CHECK(st == MINT_OK || st == MINT_E_LIMIT);
    FUZZ_CHECK((st == MINT_E_LIMIT) == (*n > cap));
    if (st == MINT_E_LIMIT) {
        size_t want = *n;
        int32_t *first = ids;
        ids = malloc(want * sizeof *ids);
        FUZZ_CHECK(ids);
        st = mint_vocab_tokenize(vocab, text, len, add_special, parse_special, ids, want, n, &err);
        FUZZ_CHECK(st == MINT_OK && *n == want);
        FUZZ_CHECK(memcmp(first, ids, cap * sizeof *ids) == 0); // the short call wrote a prefix
        free(first);
    }
    for (size_t i = 0; i < *n; i++) FUZZ_CHECK(ids[i] >= 0 && ids[i] < vocab->n);
    if (add_special && vocab->add_bos) FUZZ_CHECK(*n >= 1 && ids[0] == vocab->bos);
    if (add_special && vocab->add_eos) FUZZ_CHECK(*n >= 1 && ids[*n - 1] == vocab->eos);
    return ids;
}

// Every id's piece, with and without special tokens: the reported length is what is written,
// never more than the token's text, and nothing is written into a buffer one byte short. Pieces
// are written at the end of piece_buf, so a byte too many lands in the redzone.
static void check_pieces(const int32_t *ids, size_t n) {
    char *end = piece_buf + piece_cap;
    // At most 64 ids, spread over the list (detokenize reads every id's piece anyway).
    size_t step = n > 64 ? n / 64 : 1;
    for (size_t i = 0; i < n; i += step) {
        size_t tlen;
        FUZZ_CHECK(mint_vocab_token_text(vocab, ids[i], &tlen) != NULL);
        (void)mint_vocab_is_eog(vocab, ids[i]);
        for (int special = 0; special < 2; special++) {
            size_t k = mint_vocab_token_to_piece(vocab, ids[i], special, 0, NULL, 0);
            FUZZ_CHECK(k <= tlen);
            if (k == 0) continue;
            memset(end - k, 0x5A, k);
            FUZZ_CHECK(mint_vocab_token_to_piece(vocab, ids[i], special, 0, end - k + 1, k - 1) ==
                       k);
            for (size_t j = 0; j < k; j++) FUZZ_CHECK((uint8_t)(end - k)[j] == 0x5A);
            FUZZ_CHECK(mint_vocab_token_to_piece(vocab, ids[i], special, 0, end - k, k) == k);
        }
    }
}

// detokenize(remove_special off) against the concatenated pieces (the first one losing one
// leading space when the vocabulary adds a space prefix), into an exact and a short buffer.
// Returns the malloc'd text; *len gets its length.
static char *check_detokenize(const int32_t *ids, size_t n, bool unparse, size_t *len) {
    size_t total = 0;
    size_t *piece = malloc((n ? n : 1) * sizeof *piece);
    FUZZ_CHECK(piece);
    for (size_t i = 0; i < n; i++) {
        int lstrip = i == 0 && vocab->add_space_prefix;
        piece[i] = mint_vocab_token_to_piece(vocab, ids[i], unparse, lstrip, NULL, 0);
        total += piece[i];
    }
    FUZZ_CHECK(mint_vocab_detokenize(vocab, ids, n, false, unparse, NULL, 0) == total);
    char *text = malloc(total + 1);
    FUZZ_CHECK(text);
    FUZZ_CHECK(mint_vocab_detokenize(vocab, ids, n, false, unparse, text, total) == total);
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        int lstrip = i == 0 && vocab->add_space_prefix;
        char *p = piece_buf + piece_cap - piece[i];
        FUZZ_CHECK(mint_vocab_token_to_piece(vocab, ids[i], unparse, lstrip, p, piece[i]) ==
                   piece[i]);
        FUZZ_CHECK(memcmp(text + at, p, piece[i]) == 0);
        at += piece[i];
    }
    // A short buffer takes whole pieces while they fit, then nothing more.
    size_t cap = total / 2;
    char *part = malloc(cap + 1);
    FUZZ_CHECK(part);
    memset(part, 0x5A, cap + 1);
    FUZZ_CHECK(mint_vocab_detokenize(vocab, ids, n, false, unparse, part, cap) == total);
    size_t fit = 0;
    for (size_t i = 0; i < n && fit + piece[i] <= cap; i++) fit += piece[i];
    FUZZ_CHECK(memcmp(part, text, fit) == 0);
    for (size_t j = fit; j <= cap; j++) FUZZ_CHECK((uint8_t)part[j] == 0x5A);
    free(part);
    free(piece);
    *len = total;
    return text;
}

static bool plain_tokens(const int32_t *ids, size_t n) {
    const uint32_t odd = MINT_TOKEN_ATTR_CONTROL | MINT_TOKEN_ATTR_UNKNOWN |
                         MINT_TOKEN_ATTR_USER_DEFINED | MINT_TOKEN_ATTR_UNUSED;
    for (size_t i = 0; i < n; i++) {
        uint32_t a = mint_vocab_token_attr(vocab, ids[i]);
        if ((a & odd) || !(a & (MINT_TOKEN_ATTR_NORMAL | MINT_TOKEN_ATTR_BYTE))) return false;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    size_t n = 0, dlen;

    // Plain text.
    int32_t *ids = tokenize(text, size, false, false, &n);
    if (ids) {
        FUZZ_CHECK(size == 0 || n > 0);
        check_pieces(ids, n);
        char *back = check_detokenize(ids, n, false, &dlen);
        bool round_trip = has_space_token && size > 0 && plain_tokens(ids, n) &&
                          valid_utf8(data, size) && !memmem(data, size, "\xE2\x96\x81", 3);
        if (round_trip) FUZZ_CHECK(dlen == size && memcmp(back, data, size) == 0);
        free(back);
        free(ids);
    }

    // A chat prompt: BOS/EOS added, control-token texts split out.
    ids = tokenize(text, size, true, true, &n);
    if (ids) {
        check_pieces(ids, n);
        char out[64];
        size_t want = mint_vocab_detokenize(vocab, ids, n, true, true, NULL, 0);
        FUZZ_CHECK(mint_vocab_detokenize(vocab, ids, n, true, true, out, sizeof out) == want);
        char *all = malloc(want + 1);
        FUZZ_CHECK(all);
        FUZZ_CHECK(mint_vocab_detokenize(vocab, ids, n, true, true, all, want) == want);
        FUZZ_CHECK(memcmp(out, all, want < sizeof out ? want : 0) == 0);
        free(all);
        free(ids);
    }
    return 0;
}
