// hf_compare.h - Criterion checks that two opened files (a GGUF and the Hugging Face folder made
// of it, tests/test_hf.c and tests/test_hf_classes.c) hold the same tensors and vocabulary.
#ifndef MINT_TEST_HF_COMPARE_H
#define MINT_TEST_HF_COMPARE_H

#include "formats/tensor_dir.h"

#include <stdbool.h>

// Every tensor of g is in h under the same name with the same type, shape and bytes, and h has
// no other.
void mt_same_tensors(const mint_file *g, const mint_file *h);
// tokenizer.ggml.tokens, scores and token_type are the same arrays in g and h.
void mt_same_vocab(const mint_file *g, const mint_file *h);
// Two scalar or string entries have the same type and value (F32 compared as float).
bool mt_same_kv_value(const mint_kv *a, const mint_kv *b);

#endif // MINT_TEST_HF_COMPARE_H
