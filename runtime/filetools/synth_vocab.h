// synth_vocab.h - the vocabularies a synthetic GGUF (runtime/filetools/synth.c) is written with:
// a built-in one of byte tokens and letter pieces, or one taken from a GGUF or a SentencePiece
// tokenizer.model.
#ifndef MINT_FILETOOLS_SYNTH_VOCAB_H
#define MINT_FILETOOLS_SYNTH_VOCAB_H

#include "formats/gguf.h"

#include <stdbool.h>
#include <stdint.h>

// The built-in vocabulary: <unk>, <s>, </s>, the 256 byte tokens, then lower-case letter pieces
// ("▁a".."▁z", "aa".., "▁aa"..) until n_vocab, so random output prints as letters.
mint_status mint_synth_byte_vocab(mint_gguf_writer *w, int32_t n_vocab, mint_err *err);
// Copies the tokenizer.* entries of the GGUF at path (its vocabulary) and returns its size.
mint_status mint_synth_gguf_vocab(mint_gguf_writer *w, const char *path, int32_t *n_vocab,
                                  mint_err *err);
// A SentencePiece tokenizer.model turned into tokenizer.ggml.* entries (types as stored).
mint_status mint_synth_spm_vocab(mint_gguf_writer *w, const char *path, int32_t *n_vocab,
                                 mint_err *err);
// Whether the file at path starts with GGUF's magic.
bool mint_synth_is_gguf(const char *path);

#endif // MINT_FILETOOLS_SYNTH_VOCAB_H
