// token_trie.h - the vocabulary's pieces as a byte trie, for masking tokens with a grammar
// (runtime/text/grammar_mask.c).
//
// A token's piece here is what llama.cpp's grammar reads: its token_to_piece with special
// tokens rendered ("<|eot_id|>" is text), cut at its first NUL byte (llama.cpp decodes the piece
// as a C string). Tokens whose piece is empty and the end-of-generation tokens are not in the
// trie: the first are never allowed, the second are decided by whether the grammar can end.
//
// The trie is stored in depth-first order with children by byte, so a walk is one pass over
// arrays, and a subtree no parse stack survives is skipped in one jump (skip[i]). Each node also
// summarises its subtree as read from the start of a piece: which ASCII code points the pieces
// below it complete, whether any completes one above ASCII, whether any holds a byte that cannot
// start a character. A grammar state that every such code point leads back to itself (the inside
// of a JSON string) allows the whole subtree at once (grammar_mask.c). It is built once per
// vocabulary and read-only after: any number of grammars, on any threads, walk it.
#ifndef MINT_TOKEN_TRIE_H
#define MINT_TOKEN_TRIE_H

#include "mint.h"
#include "runtime/text/vocab_types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mint_token_trie {
    int32_t n_vocab;    // tokens of the vocabulary
    uint32_t n_nodes;   // trie nodes; node 0 is the root (the empty prefix)
    uint8_t *byte;      // [n_nodes] the byte on the edge into the node
    uint16_t *depth;    // [n_nodes] its depth (bytes from the root)
    uint32_t *skip;     // [n_nodes] the next node in order that is not in its subtree
    uint32_t *tok_at;   // [n_nodes + 1] its tokens are tok[tok_at[i] .. tok_at[i + 1])
    int32_t *tok;       // [n_in] tokens, by node
    uint32_t n_in;      // tokens in the trie
    uint16_t max_depth; // longest piece
    uint32_t *piece_at; // [n_vocab + 1] token i's piece is blob[piece_at[i] .. piece_at[i + 1])
    char *blob;         // the pieces (cut at a NUL; empty for end-of-generation tokens too)
    uint8_t *flags;     // [n_vocab] MINT_TRIE_* bits
    int32_t *eog;       // [n_eog] end-of-generation tokens
    int32_t n_eog;
    int32_t *outside;  // [n_outside] tokens not in the trie but with a piece: too long for it,
    int32_t n_outside; //   or ending inside a UTF-8 sequence; checked alone
    uint64_t *asc;     // [2 * n_nodes] ASCII code points the pieces below node i complete (bits)
    uint8_t *sub;      // [n_nodes] MINT_SUB_* bits of the pieces below node i
} mint_token_trie;

enum {
    MINT_TRIE_EOG = 1, // ends generation
    MINT_TRIE_CP = 2,  // its piece decodes alone (from no pending UTF-8 bytes) without an
                       // invalid byte and to at least one whole code point
    MINT_TRIE_CUT = 4, // ... without an invalid byte, and ends inside a UTF-8 sequence
};

enum {
    MINT_SUB_NONASCII = 1, // a piece below completes a code point above ASCII
    MINT_SUB_INVALID = 2,  // a piece below holds a byte that cannot lead a character
};

// The longest piece put in the trie (a longer one is checked alone; no vocabulary mint reads
// comes near it).
#define MINT_TRIE_MAX_DEPTH 4096

mint_status mint_token_trie_build(const mint_vocab *v, mint_token_trie **out, mint_err *err);
void mint_token_trie_free(mint_token_trie *t);

#endif // MINT_TOKEN_TRIE_H
