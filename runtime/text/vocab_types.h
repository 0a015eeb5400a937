// vocab_types.h - the vocabulary as data: the token table, the text -> id map, the special ids
// and the settings of its kind (mint_vocab), and where encoders write ids (mint_id_out). vocab.c
// fills a mint_vocab (vocab.h); the encoders read it: bpe.c for merge-rank BPE, tokenizer.c for
// the shared front and SentencePiece. Below both vocab.h and bpe.h, so that bpe.c, which vocab.c
// calls to load the merges, needs nothing of vocab.c.
#ifndef MINT_VOCAB_TYPES_H
#define MINT_VOCAB_TYPES_H

#include "base/strmap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Token attributes: llama.cpp's llama_token_attr bits (one token can carry several). GGUF's
// token_type codes map to them: 1 NORMAL, 2 UNKNOWN, 3 CONTROL, 4 USER_DEFINED, 5 UNUSED,
// 6 BYTE, anything else UNDEFINED (0).
typedef enum mint_token_attr {
    MINT_TOKEN_ATTR_UNDEFINED = 0,
    MINT_TOKEN_ATTR_UNKNOWN = 1 << 0,
    MINT_TOKEN_ATTR_UNUSED = 1 << 1,
    MINT_TOKEN_ATTR_NORMAL = 1 << 2,
    MINT_TOKEN_ATTR_CONTROL = 1 << 3,
    MINT_TOKEN_ATTR_USER_DEFINED = 1 << 4,
    MINT_TOKEN_ATTR_BYTE = 1 << 5,
    MINT_TOKEN_ATTR_LSTRIP = 1 << 7, // splitting it out also eats whitespace on its left
    MINT_TOKEN_ATTR_RSTRIP = 1 << 8, // ... and on its right (set only for phi-3 models)
} mint_token_attr;

typedef struct mint_vocab_token {
    const char *text; // [len] bytes + NUL, in mint_vocab.text_blob
    uint32_t len;     // text length in bytes (>= 1: empty entries are renamed at load)
    float score;      // merge priority: the pair whose merged text scores highest merges first
    uint16_t attr;    // mint_token_attr bits
    bool eog;         // ends generation
} mint_vocab_token;

typedef enum mint_vocab_kind {
    MINT_VOCAB_SPM, // tokenizer.ggml.model "llama": SentencePiece BPE by score
    MINT_VOCAB_BPE, // "gpt2" or "gemma4": BPE by merge rank (bpe.h)
} mint_vocab_kind;

struct mint_bpe;

typedef struct mint_vocab {
    mint_vocab_kind kind;   // which tokenizer
    struct mint_bpe *bpe;   // kind BPE: merges and pre-tokenizer (bpe.c); NULL for SPM
    uint32_t pre_flags;     // kind BPE: the pre-tokenizer's MINT_PRE_* bits (pretokenize.h)
    mint_vocab_token *tok;  // [n] the token table, indexed by id
    int32_t n;              // number of tokens (>= 1)
    char *text_blob;        // every token's text followed by a NUL, in id order
    mint_strmap map;        // text -> id over text_blob
    int32_t *special;       // [n_special] ids split out before BPE: CONTROL, USER_DEFINED and
                            // UNKNOWN tokens, longest text first (ties: lower id first)
    int32_t n_special;      // number of such tokens
    int32_t byte_id[256];   // byte fallback: id of "<0xXX>", else of the 1-byte text, else -1
    uint32_t max_token_len; // longest token text in bytes (no longer pair can be a token)
    bool space_runs_lead;   // every U+2581 in a token text is in a leading run of them, so no
                            // token spans a point just before "▁" that follows other text:
                            // BPE may then merge word by word (same result, small heaps)
    int32_t bos, eos, eot, eom, unk, sep, pad; // special ids, -1 = none
    int32_t fim[6]; // fill-in-the-middle ids, -1 = none: prefix, suffix, middle, pad, repo, file
                    // separator (mint_fim_tokens' order)
    bool add_bos;   // tokenize(add_special) prepends BOS (default true)
    bool add_eos;   // ... and appends EOS (default false)
    bool add_space_prefix; // SPM: a raw fragment at the start or after a special token gets " "
                           // (BPE vocabularies never add it; detokenize removes it for both)
    bool clean_spaces;     // detokenize drops the space before ? ! . , and in contractions
} mint_vocab;

// Where encoders write ids: while they fit, counting them all.
typedef struct mint_id_out {
    int32_t *ids; // [cap] destination
    size_t cap;   // capacity
    size_t n;     // tokens produced so far
} mint_id_out;

static inline void mint_id_out_put(mint_id_out *o, int32_t id) {
    if (o->n < o->cap) o->ids[o->n] = id;
    o->n++;
}

#endif // MINT_VOCAB_TYPES_H
