// vocab.h - the vocabulary of a GGUF file and the tokenizer over it, as llama.cpp implements
// them (docs/formats.md 4.3 and 6). Two kinds:
//   - SentencePiece BPE (tokenizer.ggml.model = "llama"): merges by token score;
//   - merge-rank BPE: byte-level ("gpt2": GPT-2's byte map and a regex pre-tokenizer chosen by
//     tokenizer.ggml.pre) and SentencePiece-style ("gemma4": spaces as U+2581, raw UTF-8).
//
// mint_vocab_load reads the tokenizer.ggml.* keys once, with llama.cpp's defaults for the kind,
// and builds: the token table (text, score, attributes), a text -> id map, the list of special
// tokens the tokenizer splits out first, the byte-fallback table, the end-of-generation set, and
// for merge-rank BPE the merges and the pre-tokenizer (bpe.c, pretokenize.c). vocab.c loads;
// tokenizer.c is the shared front: special-token partition, BOS/EOS, the SentencePiece merge,
// token_to_piece and detokenize. A vocabulary is immutable once loaded, so one may be shared by
// threads.
#ifndef MINT_VOCAB_H
#define MINT_VOCAB_H

#include "base/strmap.h"
#include "mint.h"

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
    bool add_bos;                              // tokenize(add_special) prepends BOS (default true)
    bool add_eos;                              // ... and appends EOS (default false)
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

// Reads the vocabulary of an open file. Fails with MINT_E_UNSUPPORTED when tokenizer.ggml.model
// is not "llama", "gpt2" or "gemma4" or tokenizer.ggml.pre names a pre-tokenizer mint does not
// know (the message names the key and value), MINT_E_FORMAT for an empty token list, score/type
// arrays whose length differs from it, duplicate token texts or add_bos/add_eos without the token,
// MINT_E_TYPE for a key of the wrong type, MINT_E_NOT_FOUND when the model or token keys are
// missing.
mint_status mint_vocab_load(const mint_file *f, mint_vocab **out, mint_err *err);
void mint_vocab_free(mint_vocab *v);

int32_t mint_vocab_n_tokens(const mint_vocab *v);
// Special ids; -1 when the vocabulary has none (BOS/EOS/UNK default to 1/2/0 as in llama.cpp).
int32_t mint_vocab_bos(const mint_vocab *v);
int32_t mint_vocab_eos(const mint_vocab *v);
int32_t mint_vocab_eot(const mint_vocab *v); // end of turn: key, or found by text (<|im_end|> ...)
int32_t mint_vocab_unk(const mint_vocab *v);
bool mint_vocab_add_bos(const mint_vocab *v);          // tokenize(add_special) starts with BOS
bool mint_vocab_add_eos(const mint_vocab *v);          // ... and ends with EOS
bool mint_vocab_add_space_prefix(const mint_vocab *v); // a raw fragment gets a leading space

// The token's text as stored (NUL-terminated, "▁Once", "<0x0A>", "[EMPTY_7]" for an empty
// entry), its length in *len when len is not NULL; NULL for an id out of range.
const char *mint_vocab_token_text(const mint_vocab *v, int32_t id, size_t *len);
// mint_token_attr bits of a token; MINT_TOKEN_ATTR_UNDEFINED for an id out of range.
uint32_t mint_vocab_token_attr(const mint_vocab *v, int32_t id);
float mint_vocab_token_score(const mint_vocab *v, int32_t id);
// Whether a token ends generation: EOS, EOT, EOM, and the end-of-turn texts llama.cpp lists
// (<|eot_id|>, <|im_end|>, <|end|>, <end_of_turn>, <|endoftext|>, ...) when in the vocabulary.
bool mint_vocab_is_eog(const mint_vocab *v, int32_t id);
// Id of the token whose text is exactly these bytes, or -1.
int32_t mint_vocab_find(const mint_vocab *v, const char *text, size_t len);

// Whether two vocabularies tokenize and detokenize alike (the same size, BOS/EOS/UNK ids and
// token texts), as a draft model must for speculative decoding; MINT_E_ARG names the first
// difference.
mint_status mint_vocab_same(const mint_vocab *a, const mint_vocab *b, mint_err *err);

// ---------------------------------------------------------------------------------------------
// Tokenizer (tokenizer.c)

// Tokenizes `len` bytes of text (any bytes). SPM: invalid UTF-8 and NULs go through byte
// fallback. BPE: invalid UTF-8 is read as llama.cpp reads it (byte_unicode.h: each bad byte is
// U+FFFD). add_special adds BOS / EOS as the vocabulary asks; parse_special also splits out CONTROL
// and UNKNOWN token texts such as "</s>" (USER_DEFINED ones always are). Writes up to cap ids;
// *n_out gets the number of tokens, and MINT_E_LIMIT is returned when cap is too small (ids
// then holds the first cap of them). MINT_E_UNSUPPORTED when a byte has no fallback token (SPM;
// BPE drops such bytes as llama.cpp does). Runs in O(n log n) time and O(n) memory.
mint_status mint_vocab_tokenize(const mint_vocab *v, const char *text, size_t len, bool add_special,
                                bool parse_special, int32_t *ids, size_t cap, size_t *n_out,
                                mint_err *err);

// The bytes a token stands for: NORMAL text with "▁" turned into spaces (byte-level BPE: mapped
// back through the byte map, bpe.h), a BYTE token's byte,
// USER_DEFINED text verbatim, CONTROL/UNKNOWN text only when `special` (else nothing), UNUSED
// and UNDEFINED nothing. Up to `lstrip` leading spaces are dropped. Writes the piece only when
// it fits in cap bytes (not NUL-terminated) and returns its length either way; 0 for a bad id.
size_t mint_vocab_token_to_piece(const mint_vocab *v, int32_t id, bool special, int lstrip,
                                 char *buf, size_t cap);

// Text of a token list (docs/formats.md 6.4). The first piece loses one leading space when the
// vocabulary adds a space prefix, except after a leading BOS dropped by remove_special (which
// also drops a trailing EOS when the vocabulary adds one). Control tokens are rendered only
// with unparse_special; ids out of range are skipped. Writes pieces while they fit in cap
// bytes (not NUL-terminated) and returns the total length wanted.
// With clean_spaces (most byte-level vocabularies) the text is then cleaned as llama.cpp does
// (" ?" " !" " ." " ," lose the space, " ' " becomes "'", " 's" " 'm" " 're" " 've" lose the
// space), which only shortens it: the cleaned text is written and its length returned when the
// uncleaned pieces all fit in cap, else the uncleaned length (an upper bound) is returned, as
// llama_detokenize does.
size_t mint_vocab_detokenize(const mint_vocab *v, const int32_t *ids, size_t n, bool remove_special,
                             bool unparse_special, char *buf, size_t cap);

#endif // MINT_VOCAB_H
