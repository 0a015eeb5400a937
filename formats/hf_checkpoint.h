// hf_checkpoint.h - a Hugging Face checkpoint folder as a struct mint_file, and the inverse (a
// mint_file written as such a folder), for every class of formats/hf_arch.c: Llama, Qwen2,
// Qwen3, Gemma 2, Gemma 3 (text-only), Phi-3 and GPT-2.
//
// Reading (docs/formats.md section 8) presents the folder exactly as the GGUF that
// llama.cpp's convert_hf_to_gguf.py would make of it, without writing one: metadata are the GGUF
// "<arch>.*" keys synthesised from config.json (hf_config.c) and the tokenizer files, tensors
// carry GGUF names, and the class's tensor changes are made (Llama's q / k rows permuted, Gemma's
// norms + 1, GPT-2's Conv1D weights transposed, Phi-3's LongRoPE factors made from the config:
// the only copies; every other tensor points into the mapped safetensors files). Folder
// contents:
//   config.json                       required; "architectures"[0] names a class of the table
//   model.safetensors                 the weights, or
//   model.safetensors.index.json      {"weight_map": {name: shard file}} + the shard files
//   tokenizer.model                   SentencePiece vocabulary (preferred), or
//   tokenizer.json                    HF fast tokenizer: SentencePiece-style BPE, Unigram, or
//                                     byte-level BPE (hf_bpe.h)
//   tokenizer_config.json             optional: chat_template, add_bos/eos_token, special tokens,
//                                     added_tokens_decoder
//   added_tokens.json                 optional (with tokenizer.model)
// A folder without a tokenizer opens with no tokenizer.* keys. pytorch_model*.bin (pickle) is
// refused.
#ifndef MINT_HF_CHECKPOINT_H
#define MINT_HF_CHECKPOINT_H

#include "formats/hf_arch.h"
#include "formats/tensor_dir.h"
#include "mint.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

// File size limits for the JSON side files (config.json is a few KB; tokenizer.json of a 32k
// SentencePiece vocabulary is about 2 MB, of a 256k one about 35 MB).
#define MINT_HF_MAX_CONFIG    (16u << 20)
#define MINT_HF_MAX_INDEX     (64u << 20)
#define MINT_HF_MAX_TOKENIZER (256u << 20)
#define MINT_HF_MAX_SHARDS    4096

// Opens the checkpoint folder `dir` as format MINT_FORMAT_HF_DIR. MINT_E_UNSUPPORTED for a class
// not in the table, a rope_scaling type the class cannot have, tensors that are not the class's,
// pickle weights or a tokenizer.json mint cannot read; MINT_E_FORMAT (naming file, field, value and
// limit) for malformed or inconsistent files; MINT_E_IO when a needed file cannot be read. The
// shards are mapped, or read into memory when no_mmap (formats/mapped_file.h).
mint_status mint_hf_open(const char *dir, bool no_mmap, mint_file **out, mint_err *err);

// Adds the tokenizer.* metadata of the folder to f (hf_tokenizer.c): tokens, scores and types
// padded to n_vocab like convert_hf_to_gguf.py, special ids, add_bos/eos, chat template. Nothing
// is added when the folder has no tokenizer. `config` is the parsed config.json, `a` its class.
mint_status mint_hf_add_tokenizer(mint_file *f, const char *dir, json_object *config,
                                  const mint_hf_arch *a, uint32_t n_vocab, mint_err *err);

typedef struct mint_hf_export_opts {
    uint64_t max_shard_bytes; // 0: one model.safetensors; else shards of at most this many tensor
                              // bytes (a larger tensor gets a shard of its own) plus the index
    bool write_tokenizer;     // also write the tokenizer from tokenizer.ggml.*: tokenizer.model
                              // (model "llama") or tokenizer.json (model "gpt2", hf_bpe.h)
} mint_hf_export_opts;

// Writes f (a general.architecture of the table, tensors F32 / F16 / BF16) as a checkpoint folder
// `dir` (created when missing): config.json, model.safetensors (or shards + index) with HF names
// and the class's tensor changes undone, tokenizer_config.json, and optionally the tokenizer.
// Each file is written atomically; the folder as a whole is not. MINT_E_UNSUPPORTED for another
// architecture, a quantized tensor or a tensor with no HF name.
mint_status mint_hf_export(const mint_file *f, const char *dir, const mint_hf_export_opts *opts,
                           mint_err *err);

// Writes only the tokenizer of f (which may have no tensors, as llama.cpp's vocab-only files):
// tokenizer_config.json and tokenizer.model or tokenizer.json, into dir (created when missing).
mint_status mint_hf_export_tokenizer(const mint_file *f, const char *dir, mint_err *err);

#endif // MINT_HF_CHECKPOINT_H
