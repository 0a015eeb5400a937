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
// token_to_piece and detokenize. The types (mint_vocab, its token table, mint_id_out) are in
// vocab_types.h, which bpe.h reads too. A vocabulary is immutable once loaded, so one may be
// shared by threads.
#ifndef MINT_VOCAB_H
#define MINT_VOCAB_H

#include "mint.h"
#include "runtime/text/vocab_types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
// Fill-in-the-middle id k (0 prefix, 1 suffix, 2 middle, 3 pad, 4 repo, 5 file separator): the
// tokenizer.ggml.fim_* key (or the older prefix/suffix/middle ones), else found by text; -1.
int32_t mint_vocab_fim(const mint_vocab *v, int k);
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
