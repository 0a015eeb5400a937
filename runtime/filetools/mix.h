// mix.h - which type each tensor gets when a model is quantized to a file type.
//
// This module only DECIDES types; converting the bytes is elsewhere. The decisions are
// llama.cpp's (src/llama-quant.cpp, llama_model_quantize_impl and llama_tensor_get_type), so
// that `mint-quantize MODEL Q4_K_M` writes the same mix of types as `llama-quantize MODEL
// Q4_K_M`. For one tensor, in this order:
//
//   1. Is it quantized at all? Only tensors whose name ends in "weight", with at least two
//      dimensions larger than one (ggml_n_dims >= 2), that are not norms ("_norm.weight") nor in
//      llama.cpp's short list of small tensors, and not output.weight under leave_output.
//      Anything else keeps its source type (norms stay F32).
//   2. output_type / token_embd_type, when given, win outright (no fallback: a type that does
//      not fit the row is an error).
//   3. When the file type's base type is a block format (every type but F32/F16/BF16):
//      a. the first override whose regex is found in the name gives the type ("manual");
//      b. otherwise, unless pure, the mix rules of the file type (see mix.c: output.weight is
//         Q6_K, attn_v / ffn_down get more bits in some layers, ...);
//      c. then the shape fallback: a type whose block does not divide the row (ne[0]) is
//         replaced: Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, Q2_K/Q3_K -> Q4_0,
//         IQ4_XS -> IQ4_NL, a 32-element type -> F16; and F16 when even the replacement does
//         not fit.
//      For F32/F16/BF16 file types every quantized tensor simply becomes the base type, and
//      overrides are ignored, as llama.cpp does.
//
// The per-layer rules count tensors of a category in llama-quantize's processing order (its
// weights map: tensors outside blocks first, then by block number, then by name), so the
// planner visits tensors in that order too and reports it: it is also the order llama-quantize
// writes them in.
//
// MXFP4_MOE replaces 3b by its own rule: output.weight (and a tied token_embd) Q8_0, a tensor of
// more than one matrix (ne[2] > 1: the experts' stacks) MXFP4, every other one Q8_0.
//
// With an importance matrix (has_imatrix) llama.cpp changes two things: Q4_0 and Q5_0 files give
// ffn_down of the first n_layer/8 layers Q4_1 / Q5_1, and Q2_K_S can be made (without one its
// Q2_K tensors are refused, MINT_E_ARG, as llama-quantize refuses them).
//
// Not covered, because mint has no use for them yet: architectures mint does not run (Falcon's
// rules), IQ file types other than IQ4_NL and IQ4_XS.
#ifndef MINT_FILETOOLS_MIX_H
#define MINT_FILETOOLS_MIX_H

#include "mint.h"
#include "runtime/engine/arch.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// ---------------------------------------------------------------------------------------------
// File types

// llama.cpp's LLAMA_FTYPE numbers (llama.h); the value is what general.file_type holds. Only
// those whose tensor types mint can compute are listed.
typedef enum mint_ftype {
    MINT_FTYPE_F32 = 0,        // ALL_F32
    MINT_FTYPE_F16 = 1,        // MOSTLY_F16
    MINT_FTYPE_Q4_0 = 2,       // MOSTLY_Q4_0
    MINT_FTYPE_Q4_1 = 3,       // MOSTLY_Q4_1
    MINT_FTYPE_Q8_0 = 7,       // MOSTLY_Q8_0
    MINT_FTYPE_Q5_0 = 8,       // MOSTLY_Q5_0
    MINT_FTYPE_Q5_1 = 9,       // MOSTLY_Q5_1
    MINT_FTYPE_Q2_K = 10,      // MOSTLY_Q2_K
    MINT_FTYPE_Q3_K_S = 11,    // MOSTLY_Q3_K_S
    MINT_FTYPE_Q3_K_M = 12,    // MOSTLY_Q3_K_M
    MINT_FTYPE_Q3_K_L = 13,    // MOSTLY_Q3_K_L
    MINT_FTYPE_Q4_K_S = 14,    // MOSTLY_Q4_K_S
    MINT_FTYPE_Q4_K_M = 15,    // MOSTLY_Q4_K_M
    MINT_FTYPE_Q5_K_S = 16,    // MOSTLY_Q5_K_S
    MINT_FTYPE_Q5_K_M = 17,    // MOSTLY_Q5_K_M
    MINT_FTYPE_Q6_K = 18,      // MOSTLY_Q6_K
    MINT_FTYPE_IQ2_XXS = 19,   // MOSTLY_IQ2_XXS (needs an importance matrix)
    MINT_FTYPE_IQ2_XS = 20,    // MOSTLY_IQ2_XS (needs an importance matrix)
    MINT_FTYPE_Q2_K_S = 21,    // MOSTLY_Q2_K_S (needs an importance matrix, see above)
    MINT_FTYPE_IQ3_XS = 22,    // MOSTLY_IQ3_XS (its IQ3_XXS tensors need an importance matrix)
    MINT_FTYPE_IQ3_XXS = 23,   // MOSTLY_IQ3_XXS (needs an importance matrix; attn_q/k IQ2_S)
    MINT_FTYPE_IQ1_S = 24,     // MOSTLY_IQ1_S: the low-bit rules of mix.c (needs an imatrix)
    MINT_FTYPE_IQ2_S = 28,     // MOSTLY_IQ2_S: base IQ2_XS, IQ3_S in places (needs an imatrix)
    MINT_FTYPE_IQ2_M = 29,     // MOSTLY_IQ2_M: base IQ2_S, IQ3_S in places (needs an imatrix)
    MINT_FTYPE_IQ1_M = 31,     // MOSTLY_IQ1_M: the low-bit rules of mix.c (needs an imatrix)
    MINT_FTYPE_IQ4_NL = 25,    // MOSTLY_IQ4_NL
    MINT_FTYPE_IQ3_S = 26,     // MOSTLY_IQ3_S
    MINT_FTYPE_IQ3_M = 27,     // MOSTLY_IQ3_M
    MINT_FTYPE_IQ4_XS = 30,    // MOSTLY_IQ4_XS
    MINT_FTYPE_BF16 = 32,      // MOSTLY_BF16
    MINT_FTYPE_TQ1_0 = 36,     // MOSTLY_TQ1_0: ternary, 1.69 bits per weight
    MINT_FTYPE_TQ2_0 = 37,     // MOSTLY_TQ2_0: ternary, 2.06 bits per weight
    MINT_FTYPE_MXFP4_MOE = 38, // MOSTLY_MXFP4_MOE: experts MXFP4, every other matrix Q8_0
    MINT_FTYPE_Q1_0 = 40,      // MOSTLY_Q1_0: signs times the mean |x|, 1.125 bits per weight
    MINT_FTYPE_Q2_0 = 41,      // MOSTLY_Q2_0: 2-bit codes per 64, 2.25 bits per weight
} mint_ftype;

// Parses a file type the way llama-quantize's type argument does: a name, case-insensitively
// ("Q4_K_M", "q4_k_m", "F16"), the aliases "Q3_K" / "Q4_K" / "Q5_K" (= Q3_K_M / Q4_K_M /
// Q5_K_M), or the decimal number ("15"). A name llama-quantize knows but mint cannot compute
// ("IQ2_XXS", "COPY", ...) is MINT_E_UNSUPPORTED; anything else is MINT_E_ARG, and the message
// lists the valid names.
mint_status mint_ftype_from_name(const char *name, mint_ftype *out, mint_err *err);

// Canonical name ("Q4_K_M", "F16"); NULL for a value that is not a mint_ftype.
const char *mint_ftype_name(int ftype);

// The base ("default") tensor type of a file type: Q4_K for Q4_K_S/M, Q3_K for Q3_K_*, Q2_K for
// Q2_K/Q2_K_S, F16 for F16, ...; -1 for a value that is not a mint_ftype.
int mint_ftype_base_type(int ftype);
// llama-quantize's tensor_requires_imatrix: a tensor quantized to `type` in a file of `ftype`
// needs an importance matrix (IQ3_XXS, IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M, and Q2_K in a Q2_K_S
// file), except the token embeddings and the output, which the callers leave out. Wider than
// quant/kernels.h's mint_quantize_needs_imatrix (the types whose search cannot run without one).
bool mint_mix_requires_imatrix(int type, int ftype);

// The value llama-quantize writes to general.file_type: the ftype number itself (also with
// --pure). Returns UINT32_MAX for a value that is not a mint_ftype.
uint32_t mint_ftype_file_type(int ftype);

// ---------------------------------------------------------------------------------------------
// Parameters

#define MINT_MIX_PATTERN_MAX 256 // bytes of an override pattern, NUL included
#define MINT_MIX_REASON_MAX  160 // bytes of a reason string, NUL included

// One --tensor-type PATTERN=TYPE. The pattern is a regular expression searched anywhere in the
// tensor name (llama.cpp: std::regex_search), so "attn_v" matches blk.N.attn_v.weight. mint
// compiles it as a POSIX extended regex, after turning \d / \D into [0-9] / [^0-9].
typedef struct mint_mix_override {
    char pattern[MINT_MIX_PATTERN_MAX]; // NUL-terminated regex
    int type;                           // mint_type code; must be one mint can compute
} mint_mix_override;

typedef struct mint_mix_params {
    mint_ftype ftype;                   // target file type
    bool pure;                          // --pure: no mix rules, every tensor the base type
    bool leave_output;                  // --leave-output-tensor: output.weight keeps its type
    int output_type;                    // --output-tensor-type; -1 = rule
    int token_embd_type;                // --token-embedding-type; -1 = rule
    const mint_mix_override *overrides; // [n_overrides] --tensor-type, first match wins
    size_t n_overrides;                 // number of overrides
    bool has_imatrix;                   // an importance matrix with at least one entry is used
} mint_mix_params;

// Defaults for a file type: no pure, no overrides, rule types for output and token_embd.
mint_mix_params mint_mix_default_params(mint_ftype ftype);

// Parses "PATTERN=TYPE" as llama-quantize's --tensor-type does: split at the first '=', the
// pattern lower-cased, the type a ggml type name in any case ("q8_0"). MINT_E_ARG for a missing
// '=', an empty side, an unknown type (the message lists the valid ones) or a regex that does
// not compile; MINT_E_UNSUPPORTED for a type mint cannot compute; MINT_E_LIMIT for a pattern
// longer than MINT_MIX_PATTERN_MAX - 1 bytes.
mint_status mint_mix_override_parse(const char *arg, mint_mix_override *out, mint_err *err);

// ---------------------------------------------------------------------------------------------
// The planner

// What the rules need to know about the model besides its tensor names and shapes; the
// metadata llama.cpp reads (<arch>.block_count, .attention.head_count, .head_count_kv) and what
// it knows of the architecture.
typedef struct mint_mix_model {
    int32_t n_layer;       // transformer blocks (the per-layer rules count against it)
    int32_t n_head;        // query heads (layer 0)
    int32_t n_head_kv;     // key/value heads (layer 0); n_gqa = n_head / n_head_kv
    const mint_arch *arch; // its row of runtime/engine/arch.c (NULL: llama's)
    int32_t n_expert;      // expert_count of a mixture of experts (0: dense); llama.cpp gives
                           // 8-expert models (Mixtral) more bits in attention
} mint_mix_model;

// Reads mint_mix_model from a GGUF's metadata (head_count_kv defaults to head_count when absent,
// as in llama.cpp; expert_count to 0). MINT_E_UNSUPPORTED for an architecture not in
// runtime/engine/arch.c's table (the message lists those that are).
mint_status mint_mix_model_from_file(const mint_file *f, mint_mix_model *out, mint_err *err);

typedef struct mint_mix_tensor {
    const char *name; // tensor name, NUL-terminated
    uint32_t type;    // its type in the source file
    int64_t ne[4];    // shape, ne[0] innermost (the row length); unused dims are 1
} mint_mix_tensor;

typedef struct mint_mix_choice {
    uint32_t type;                    // the type the tensor is written with
    bool quantize;                    // type differs from the source type (convert it)
    bool fallback;                    // the shape fallback replaced the type the rules chose
    char reason[MINT_MIX_REASON_MAX]; // why, one line, e.g. "attn_v: use_more_bits(2, 4) -> Q6_K"
} mint_mix_choice;

// Decides the type of each of the n tensors: out[i] is for tensors[i]. When order is not NULL it
// gets the n indexes in llama-quantize's processing (and writing) order. Fails with MINT_E_ARG
// for bad parameters (unknown ftype, a type mint cannot compute, a regex that does not compile,
// an output/token_embd type whose block does not divide the row), MINT_E_FORMAT when the model
// has attn_v tensors but not one per layer; MINT_E_ARG for Q2_K_S without has_imatrix (see
// above).
mint_status mint_mix_plan(const mint_mix_model *model, const mint_mix_tensor *tensors, size_t n,
                          const mint_mix_params *params, mint_mix_choice *out, size_t *order,
                          mint_err *err);

// mint_mix_plan over every tensor of an opened file (out and order have f's n_tensors entries,
// in the file's tensor order), with the model read by mint_mix_model_from_file.
mint_status mint_mix_plan_file(const mint_file *f, const mint_mix_params *params,
                               mint_mix_choice *out, size_t *order, mint_err *err);

#endif // MINT_FILETOOLS_MIX_H
