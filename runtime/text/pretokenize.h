// pretokenize.h - the pre-tokenizers of byte-level BPE vocabularies: the regex sets llama.cpp
// selects by tokenizer.ggml.pre (src/llama-vocab.cpp's llm_tokenizer_bpe), run with PCRE2
// (UTF + UCP, JIT-compiled where the platform has a JIT).
//
// A pre-tokenizer cuts a text fragment into words. Its regexes apply one after the other: the
// first cuts the fragment into its matches and the gaps between them, each regex after that
// cuts every piece the same way (Hugging Face's "Isolated" split). BPE then merges inside each
// word only (bpe.c).
//
// The table in pretokenize.c maps each tokenizer.ggml.pre name to a regex set and the flags
// llama.cpp sets with it; adding a name that uses a known regex set is one line there.
#ifndef MINT_PRETOKENIZE_H
#define MINT_PRETOKENIZE_H

#include "mint.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// What llama.cpp sets together with a pre-tokenizer name.
enum {
    MINT_PRE_IGNORE_MERGES = 1 << 0, // a word that is a token as a whole is that token
    MINT_PRE_ADD_BOS = 1 << 1,       // add_bos defaults to true (the key may still say false)
    MINT_PRE_FORCE_BOS = 1 << 2,     // add_bos is true whatever the key says (Gemma 4)
    MINT_PRE_KEEP_SPACES = 1 << 3,   // no clean-up of spaces when detokenizing
    MINT_PRE_NO_BOS = 1 << 4,        // no default BOS id (the key may still give one)
    MINT_PRE_ESCAPE = 1 << 5,        // SentencePiece-style: ' ' becomes U+2581 before the split,
                                     // words stay raw UTF-8 (no byte map), <0xXX> byte fallback
    MINT_PRE_NEWLINE_WORD = 1 << 6,  // a word made only of '\n' that is a token is that token
    MINT_PRE_MASK_LSTRIP = 1 << 7,   // the "<mask>" token eats the whitespace on its left
};

typedef struct mint_pretok mint_pretok; // compiled regexes of one set (immutable, shareable)

// Compiles the pre-tokenizer named `name` (tokenizer.ggml.pre; "" or NULL = llama.cpp's
// "default"). *flags gets its MINT_PRE_* bits. MINT_E_UNSUPPORTED names the value and the names
// mint knows when the name is not in the table.
mint_status mint_pretok_create(const char *name, size_t name_len, mint_pretok **out,
                               uint32_t *flags, mint_err *err);
void mint_pretok_free(mint_pretok *p);

// Per-call state: PCRE2 match data and the piece lists (not shareable between threads).
typedef struct mint_pretok_work {
    void *match;     // pcre2_match_data_8 *, one ovector pair
    uint32_t *cut;   // [n_cut] word end offsets in the text, ascending, the last = text length
    size_t n_cut;    // number of words
    size_t cap_cut;  // entries allocated in cut
    uint32_t *prev;  // [cap_prev] the previous regex's pieces while the next one cuts them
    size_t cap_prev; // entries allocated in prev
} mint_pretok_work;

void mint_pretok_work_free(mint_pretok_work *w);

// Cuts text[0..len) (valid UTF-8, at most UINT32_MAX bytes) into words: w->cut[0..w->n_cut)
// get the word end offsets. MINT_E_NOMEM, or MINT_E_LIMIT when PCRE2 gives up on a match
// (its limits), with a message naming the regex.
mint_status mint_pretok_split(const mint_pretok *p, mint_pretok_work *w, const char *text,
                              size_t len, mint_err *err);

#endif // MINT_PRETOKENIZE_H
