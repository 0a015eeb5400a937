// sentencepiece.h - SentencePiece's tokenizer.model (a protobuf ModelProto): a validating reader
// and a writer.
//
// Schema (google/sentencepiece:src/sentencepiece_model.proto; only the fields mint uses):
//   ModelProto     { repeated SentencePiece pieces = 1; TrainerSpec trainer_spec = 2;
//                    NormalizerSpec normalizer_spec = 3; }
//   SentencePiece  { string piece = 1; float score = 2; Type type = 3 [default NORMAL]; }
//                  Type: NORMAL 1, UNKNOWN 2, CONTROL 3, USER_DEFINED 4, UNUSED 5, BYTE 6
//                  (the same numbers as GGUF's tokenizer.ggml.token_type)
//   TrainerSpec    { ModelType model_type = 3 [UNIGRAM 1, BPE 2, WORD 3, CHAR 4; default 1];
//                    int32 vocab_size = 4; bool byte_fallback = 35; int32 unk_id = 40 [0];
//                    int32 bos_id = 41 [1]; int32 eos_id = 42 [2]; int32 pad_id = 43 [-1]; }
//   NormalizerSpec { string name = 1; bool add_dummy_prefix = 3 [true];
//                    bool remove_extra_whitespaces = 4 [true]; bool escape_whitespaces = 5 [true];
//                    }
// Every other field is skipped. A piece id is its index in `pieces`.
#ifndef MINT_SENTENCEPIECE_H
#define MINT_SENTENCEPIECE_H

#include "base/arena.h"
#include "formats/tensor_dir.h"
#include "mint.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum mint_spm_type {
    MINT_SPM_NORMAL = 1,
    MINT_SPM_UNKNOWN = 2,
    MINT_SPM_CONTROL = 3,
    MINT_SPM_USER_DEFINED = 4,
    MINT_SPM_UNUSED = 5,
    MINT_SPM_BYTE = 6,
} mint_spm_type;

typedef struct mint_spm_piece {
    mint_str text; // piece bytes (arena; NUL-terminated past len), U+2581 for spaces
    float score;   // merge priority (BPE) or log probability (unigram)
    int32_t type;  // mint_spm_type
} mint_spm_piece;

typedef struct mint_spm_model {
    mint_spm_piece *pieces;        // [n_pieces] in id order
    uint32_t n_pieces;             // vocabulary size
    int32_t model_type;            // trainer_spec.model_type: 1 unigram, 2 BPE, 3 word, 4 char
    int32_t vocab_size;            // trainer_spec.vocab_size as written (informational)
    bool byte_fallback;            // trainer_spec.byte_fallback
    int32_t unk_id;                // trainer_spec ids; -1 = none
    int32_t bos_id;                //
    int32_t eos_id;                //
    int32_t pad_id;                //
    mint_str normalizer_name;      // normalizer_spec.name ("identity", "nmt_nfkc", ...)
    bool add_dummy_prefix;         // normalizer_spec: prepend U+2581 to the text
    bool remove_extra_whitespaces; // normalizer_spec: squeeze whitespace
    bool escape_whitespaces;       // normalizer_spec: spaces become U+2581
    mint_arena arena;              // owns pieces and their text
} mint_spm_model;

// Largest tokenizer.model mint reads (Llama's is 0.5 MB; Gemma's 4 MB).
#define MINT_SPM_MAX_FILE (256ull << 20)

// Parses a ModelProto held in data[size]; nothing points into `data` afterwards. Fails with
// MINT_E_FORMAT naming the message, field and byte offset for truncated or malformed protobuf, a
// missing trainer_spec or normalizer_spec (which is how a cut-off file shows), no pieces, an empty
// or duplicate piece, a type outside 1..6, or a special id outside -1..n_pieces-1. `name` prefixes
// messages. On failure *out is left empty (safe to free).
mint_status mint_spm_parse(const void *data, size_t size, const char *name, mint_spm_model *out,
                           mint_err *err);

// Maps `path` and parses it.
mint_status mint_spm_load(const char *path, mint_spm_model *out, mint_err *err);

void mint_spm_free(mint_spm_model *m);

// Encodes the fields listed above (pieces; trainer_spec model_type, vocab_size, byte_fallback and
// the four ids; normalizer_spec name and the three flags). *buf is malloc'd, owned by the caller.
mint_status mint_spm_encode(const mint_spm_model *m, uint8_t **buf, size_t *len, mint_err *err);

// Encodes and writes atomically (temp + fsync + rename).
mint_status mint_spm_write_file(const mint_spm_model *m, const char *path, mint_err *err);

#endif // MINT_SENTENCEPIECE_H
