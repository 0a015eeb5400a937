// vocab_test.h - the vocabulary suites' shared steps (test_tokenizer.c, test_vocabs.c): load a
// vocabulary from a MINT_TEST_DATA file, tokenize and detokenize into malloc'd buffers, failing
// the test on any error.
#ifndef MINT_TEST_VOCAB_H
#define MINT_TEST_VOCAB_H

#include "runtime/text/vocab.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// The vocabulary of a file under MINT_TEST_DATA (skipping or failing like mt_data_path).
mint_vocab *mt_vocab_load(const char *rel);
// The ids of text in a malloc'd array; *n gets the count.
int32_t *mt_vocab_tok(const mint_vocab *v, const char *text, size_t len, bool add_special,
                      bool parse_special, size_t *n);
// The text of ids in a malloc'd NUL-terminated string; *len gets its length (the first call's
// length is only an upper bound when the vocabulary cleans spaces).
char *mt_vocab_detok(const mint_vocab *v, const int32_t *ids, size_t n, bool remove_special,
                     bool unparse_special, size_t *len);

#endif // MINT_TEST_VOCAB_H
