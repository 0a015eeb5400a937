// bpe.h - merge-rank BPE (tokenizer.ggml.model "gpt2" and "gemma4"), as llama.cpp's
// llm_tokenizer_bpe_session does it.
//
// A raw text fragment (special tokens are split out before, by tokenizer.c) is
//   1. read as lenient UTF-8 (byte_unicode.h) and written again, each ' ' becoming U+2581 for
//      SentencePiece-style vocabularies (Gemma 4);
//   2. cut into words by the pre-tokenizer (pretokenize.h);
//   3. per word: the whole word when it is a token and the pre-tokenizer says so (ignore_merges),
//      else BPE: one symbol per character (byte-level: per byte, in the GPT-2 byte map's
//      characters), then repeatedly the adjacent pair with the lowest merge rank (leftmost on
//      ties) is merged. A final symbol that is not a token falls back to one token per byte
//      where one exists (byte-level: the one-byte texts; SentencePiece-style: <0xXX>), and to
//      nothing where none does.
//
// Symbols are numbered: a token's text is the token id; a text that only occurs as a part or
// result of a merge gets an id after the last token. A merge is then a pair of numbers looked up
// in one hash table that also holds the merged symbol's number, so merging does no string work.
#ifndef MINT_BPE_H
#define MINT_BPE_H

#include "mint.h"
#include "runtime/text/pretokenize.h"
#include "runtime/text/vocab_types.h"

typedef struct mint_bpe mint_bpe;

// Reads tokenizer.ggml.merges ("left right", rank = index) for the already loaded tokens of v,
// and compiles the pre-tokenizer `pre` (tokenizer.ggml.pre). *pre_flags gets its MINT_PRE_*
// bits. MINT_E_NOT_FOUND without merges, MINT_E_FORMAT for a merge with no space between two
// non-empty parts, MINT_E_UNSUPPORTED for an unknown pre-tokenizer.
mint_status mint_bpe_load(const mint_file *f, const mint_vocab *v, const char *pre, size_t pre_len,
                          mint_bpe **out, uint32_t *pre_flags, mint_err *err);
void mint_bpe_free(mint_bpe *b);

// Scratch space of one tokenize call; zero-initialise, free with mint_bpe_work_free.
typedef struct mint_bpe_work {
    mint_pretok_work pre; // the pre-tokenizer's state
    char *norm;           // [cap_norm] the fragment as re-encoded UTF-8
    size_t cap_norm;      // bytes allocated
    char *rx;             // [cap_rx] norm with surrogates replaced, for PCRE2 (when present)
    size_t cap_rx;        // bytes allocated
    char *word;           // [cap_word] one word in the byte map's characters
    size_t cap_word;      // bytes allocated
    void *sym;            // symbols of one word (bpe.c's struct)
    size_t cap_sym;       // entries allocated
    void *heap;           // merge candidates of a long word (bpe.c's struct)
    size_t cap_heap;      // entries allocated
} mint_bpe_work;

void mint_bpe_work_free(mint_bpe_work *w);

// Tokenizes one raw fragment of len bytes (any bytes) into o.
mint_status mint_bpe_encode(const mint_vocab *v, mint_bpe_work *w, const char *text, size_t len,
                            mint_id_out *o, mint_err *err);

// The bytes a NORMAL token of a byte-level vocabulary stands for: each character of its text
// mapped back through the GPT-2 byte map. A character outside the map gives, as in llama.cpp,
// "[UNK_BYTE_0x" + its UTF-8 bytes in hex + the whole token text + "]". Up to lstrip leading
// spaces are dropped. Writes to dst when not NULL; returns the length.
size_t mint_bpe_decode_text(const char *text, uint32_t len, int lstrip, char *dst);

#endif // MINT_BPE_H
