// grammar.h - the grammar object (runtime/text/grammar.c) as the sampler and the generation
// step use it, and its creation over a vocabulary: the public mint_grammar_create takes a model
// and lives a floor up (runtime/decoding/model_grammar.c), which hands down the vocabulary and
// the model's shared token trie.
#ifndef MINT_TEXT_GRAMMAR_H
#define MINT_TEXT_GRAMMAR_H

#include "mint.h"
#include "runtime/text/grammar_match.h"
#include "runtime/text/token_trie.h"
#include "runtime/text/vocab_types.h"

#include <stdbool.h>
#include <stdint.h>

#define MINT_GRAMMAR_MAX_TRIGGERS 64 // of each kind

// trie: the vocabulary's (borrowed; it must outlive the grammar).
mint_status mint_grammar_create_vocab(const mint_vocab *v, const mint_token_trie *trie,
                                      const char *text, size_t len, const mint_grammar_params *p,
                                      mint_grammar **out, mint_err *err);

// Advances the grammar by text that is no token (tests, and a prefix a caller already holds),
// as llama.cpp's llama_grammar_accept_str: its code points step the stacks (token terminals
// take none). MINT_E_ARG when the grammar does not match it (nothing changes).
mint_status mint_grammar_accept_text(mint_grammar *g, const char *text, size_t len, mint_err *err);

// Moves the current stacks into a fresh matcher, dropping every cached step (what accepting does
// on its own once the caches grow past their bounds). For tests.
mint_status mint_grammar_compact(mint_grammar *g);

// Whether the grammar constrains the next token (false while a lazy grammar waits).
bool mint_grammar_active(const mint_grammar *g);
// The tokens allowed now: allowed[id] is 1 or 0 for id < mint_grammar_n_vocab(g) (the grammar's
// array, valid until its next call). Returns how many are allowed. Sets the grammar's failure
// (mint_grammar_failure) when a bound was reached or no token at all is allowed.
int32_t mint_grammar_mask(mint_grammar *g, const uint8_t **allowed);
int32_t mint_grammar_n_vocab(const mint_grammar *g);
// Whether the token ends generation.
bool mint_grammar_is_eog(const mint_grammar *g, int32_t token);
// An end-of-generation token of the vocabulary, or -1 (what a sampler answers when the grammar
// failed: the generation step then reports the failure).
int32_t mint_grammar_end_token(const mint_grammar *g);
// MINT_OK, or the failure the last mask or step met, copied into err.
mint_status mint_grammar_failure(const mint_grammar *g, mint_err *err);

// The walk of the token trie (runtime/text/grammar_mask.c): sets allowed[id] = 1 for every
// token of the trie that the stacks `set` (code point terminals on top) accept after the pending
// UTF-8 bits (value, n_remain: llama.cpp's partial_utf8). depth scratch: [trie->max_depth + 1]
// of each array. Returns the number of trie nodes visited.
typedef struct grammar_walk {
    uint32_t *set;   // [max_depth + 1] the stacks after each prefix byte
    uint32_t *value; // [max_depth + 1] pending UTF-8 bits after it
    int8_t *remain;  // [max_depth + 1] bytes still missing (0: none)
    uint8_t *cont;   // [max_depth + 1] the pending bytes came before the token (must be 10xxxxxx)
} grammar_walk;

uint32_t grammar_mask_walk(gmatch *m, const mint_token_trie *t, uint32_t set, uint32_t value,
                           int n_remain, const grammar_walk *w, uint8_t *allowed);

#endif // MINT_TEXT_GRAMMAR_H
