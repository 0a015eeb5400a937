// fuzz_grammar.c - GBNF grammars on arbitrary bytes: the parser, then a few steps of matching.
//
// An input is a grammar, optionally followed by a NUL and bytes that steer the steps. The
// grammar is parsed alone (no vocabulary) and as a grammar over a small vocabulary made here with
// the GGUF writer (the 256 byte tokens, letters, digits, punctuation, a few words, an
// end-of-generation and a control token), whose token trie is built once at start-up. Checked: a
// refusal is one line starting "grammar: "; parsing with and without the vocabulary agree when the
// text has no <text> token reference; then for up to 16 steps the mask is computed and agrees
// with mint_grammar_allows on every token, its count is right, and a token it allows (chosen by
// the steering bytes) is accepted; a refused token changes nothing; the steering bytes fed as
// text never crash; a reset gives the first mask back.
#include "formats/gguf.h"
#include "fuzz_util.h"
#include "runtime/text/gbnf.h"
#include "runtime/text/grammar.h"
#include "runtime/text/token_trie.h"
#include "runtime/text/vocab.h"

#include <stdio.h>
#include <string.h>

static mint_vocab *vocab;     // the small vocabulary
static mint_token_trie *trie; // its trie
static mint_file *vocab_file; // the file it was read from
static uint8_t *vocab_image;  // its GGUF image
static uint8_t *first_mask;   // [vocab->n] scratch: the mask at the start

static mint_file *builtin_vocab(void) {
    enum { MAX_TOK = 400 };
    static char bytes[256][7];
    static char chars[96][2];
    static const char *const words[] = {
        "\xE2\x96\x81", "\xE2\x96\x81the", "true", "false", "null", "\":", "{\"", "\"}", "日本",
        "\xC3"};
    mint_str tok[MAX_TOK];
    float score[MAX_TOK];
    int32_t type[MAX_TOK];
    int n = 0;
    const char *specials[] = {"<unk>", "<s>", "</s>", "<|tool|>"};
    const int32_t special_types[] = {2, 3, 3, 3};
    for (int i = 0; i < 4; i++) {
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
    for (int c = 33; c < 127; c++) {
        chars[c - 33][0] = (char)c;
        tok[n] = (mint_str){chars[c - 33], 1};
        score[n] = -1.0f - (float)c;
        type[n++] = 1;
    }
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        tok[n] = (mint_str){words[i], strlen(words[i])};
        score[n] = -(float)i;
        type[n++] = 1;
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
    mint_err err;
    vocab_file = builtin_vocab();
    FUZZ_CHECK(vocab_file && mint_vocab_load(vocab_file, &vocab, &err) == MINT_OK);
    FUZZ_CHECK(mint_token_trie_build(vocab, &trie, &err) == MINT_OK);
    first_mask = malloc((size_t)vocab->n);
    FUZZ_CHECK(first_mask);
    return 0;
}

static void check_message(const mint_err *e) {
    FUZZ_CHECK(strncmp(e->msg, "grammar: ", 9) == 0);
    FUZZ_CHECK(!strpbrk(e->msg, "\r\n"));
}

// The mask agrees with the grammar's answer for every token, and with its count.
static int32_t check_mask(mint_grammar *g) {
    const uint8_t *allowed;
    const int32_t count = mint_grammar_mask(g, &allowed);
    mint_err e;
    if (mint_grammar_failure(g, &e) != MINT_OK) {
        check_message(&e);
        return -1;
    }
    int32_t n = 0;
    for (int32_t id = 0; id < vocab->n; id++) {
        n += allowed[id];
        FUZZ_CHECK(mint_grammar_allows(g, id) == (allowed[id] != 0) ||
                   mint_grammar_failure(g, &e) != MINT_OK);
    }
    FUZZ_CHECK(n == count);
    return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_fields in;
    if (!fuzz_split(data, size, 2, &in)) return 0;
    const char *text = in.field[0];
    const size_t len = in.len[0];
    const uint8_t *steer = in.n > 1 ? (const uint8_t *)in.field[1] : (const uint8_t *)"";
    const size_t n_steer = in.n > 1 ? in.len[1] : 0;

    mint_err e;
    gbnf alone;
    const mint_status st_alone = gbnf_parse(text, len, NULL, NULL, &alone, &e);
    if (st_alone == MINT_OK)
        gbnf_free(&alone);
    else
        check_message(&e);

    mint_grammar *g = NULL;
    const mint_status st = mint_grammar_create_vocab(vocab, trie, text, len, NULL, &g, &e);
    if (st != MINT_OK) {
        check_message(&e);
        FUZZ_CHECK(st == MINT_E_FORMAT || st == MINT_E_LIMIT || st == MINT_E_NOMEM);
        // Without a token given by its text, the vocabulary changes nothing but ids' bounds.
        if (!memchr(text, '<', len) && st == MINT_E_FORMAT) FUZZ_CHECK(st_alone != MINT_OK);
        fuzz_fields_free(&in);
        return 0;
    }
    int32_t count = check_mask(g);
    if (count >= 0) {
        const uint8_t *allowed;
        mint_grammar_mask(g, &allowed);
        memcpy(first_mask, allowed, (size_t)vocab->n);
    }
    for (size_t step = 0; step < 16 && count > 0; step++) {
        const uint8_t *allowed;
        mint_grammar_mask(g, &allowed);
        // A refused token (if any) changes nothing.
        for (int32_t id = 0; id < vocab->n; id++) {
            if (allowed[id]) continue;
            FUZZ_CHECK(mint_grammar_accept(g, id, &e) != MINT_OK);
            break;
        }
        // The k-th allowed token, k from the steering bytes.
        int32_t k = (int32_t)((step < n_steer ? steer[step] : step * 7) % (size_t)count), pick = -1;
        mint_grammar_mask(g, &allowed);
        for (int32_t id = 0; id < vocab->n && pick < 0; id++)
            if (allowed[id] && k-- == 0) pick = id;
        FUZZ_CHECK(pick >= 0);
        const mint_status sa = mint_grammar_accept(g, pick, &e);
        if (sa != MINT_OK) { // only a bound reached may refuse an allowed token
            check_message(&e);
            FUZZ_CHECK(sa == MINT_E_LIMIT || sa == MINT_E_NOMEM);
            break;
        }
        if (mint_grammar_is_eog(g, pick)) break;
        count = check_mask(g);
    }
    // The steering bytes as text: any answer, one line when refused.
    mint_grammar_reset(g);
    if (mint_grammar_accept_text(g, (const char *)steer, n_steer, &e) != MINT_OK) check_message(&e);
    (void)mint_grammar_can_end(g);
    // A reset gives the first mask back.
    mint_grammar_reset(g);
    const uint8_t *again;
    if (mint_grammar_mask(g, &again) >= 0 && mint_grammar_failure(g, &e) == MINT_OK)
        FUZZ_CHECK(memcmp(again, first_mask, (size_t)vocab->n) == 0);
    mint_grammar_free(g);
    fuzz_fields_free(&in);
    return 0;
}
