// hf_bpe.h - byte-level BPE tokenizer.json (GPT-2, Qwen2, Llama 3 style: model.type "BPE"
// without byte_fallback under a ByteLevel pre-tokenizer) <-> GGUF tokenizer.ggml.model "gpt2".
//
// llama.cpp's converter names tokenizer.ggml.pre by hashing how the tokenizer splits a test
// text; mint cannot run the HF tokenizer, so it names it by the pre-tokenizer's shape instead:
//   {"type": "ByteLevel"} with its own regex (use_regex true or absent)      -> "gpt-2"
//   Sequence [Split with regex R (Isolated), ByteLevel without regex], where R is
//     Qwen2's (single digits)                                                 -> "qwen2"
//     Llama 3's (digits in threes)                                            -> "llama-bpe"
// Anything else is refused with one line rather than guessed. The writer makes the same shapes
// back, so a "gpt2" vocabulary of these pre names round-trips.
#ifndef MINT_HF_BPE_H
#define MINT_HF_BPE_H

#include "formats/tensor_dir.h"
#include "mint.h"

#include <json-c/json.h>

// The tokenizer.ggml.pre name of tokenizer.json `tj`'s pre_tokenizer (a static string).
// MINT_E_UNSUPPORTED when it is not one of the shapes above.
mint_status mint_hf_bpe_pre_name(json_object *tj, const char **pre, mint_err *err);

// Writes tokenizer.json for a "gpt2" vocabulary of f (tokens, token types, merges, pre) into
// dir. MINT_E_UNSUPPORTED when its tokenizer.ggml.pre is not one of the names above.
mint_status mint_hf_bpe_write(const mint_file *f, const char *dir, mint_err *err);

#endif // MINT_HF_BPE_H
