// types.h - ggml's tensor type codes, and what mint knows about each.
//
// The codes are GGUF's (ggml.h `enum ggml_type`), so a file's type field is used as is. A type is
// "known" when its block layout is known, which is all the reader needs to validate sizes; it is
// "computable" when mint has a dequantizer and dot products for it.
#ifndef MINT_QUANT_TYPES_H
#define MINT_QUANT_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum mint_type {
    MINT_TYPE_F32 = 0,
    MINT_TYPE_F16 = 1,
    MINT_TYPE_Q4_0 = 2,
    MINT_TYPE_Q4_1 = 3,
    // 4, 5: Q4_2, Q4_3, removed from ggml
    MINT_TYPE_Q5_0 = 6,
    MINT_TYPE_Q5_1 = 7,
    MINT_TYPE_Q8_0 = 8,
    MINT_TYPE_Q8_1 = 9,
    MINT_TYPE_Q2_K = 10,
    MINT_TYPE_Q3_K = 11,
    MINT_TYPE_Q4_K = 12,
    MINT_TYPE_Q5_K = 13,
    MINT_TYPE_Q6_K = 14,
    MINT_TYPE_Q8_K = 15,
    MINT_TYPE_IQ2_XXS = 16,
    MINT_TYPE_IQ2_XS = 17,
    MINT_TYPE_IQ3_XXS = 18,
    MINT_TYPE_IQ1_S = 19,
    MINT_TYPE_IQ4_NL = 20,
    MINT_TYPE_IQ3_S = 21,
    MINT_TYPE_IQ2_S = 22,
    MINT_TYPE_IQ4_XS = 23,
    MINT_TYPE_I8 = 24,
    MINT_TYPE_I16 = 25,
    MINT_TYPE_I32 = 26,
    MINT_TYPE_I64 = 27,
    MINT_TYPE_F64 = 28,
    MINT_TYPE_IQ1_M = 29,
    MINT_TYPE_BF16 = 30,
    // 31..33: Q4_0_4_4 / 4_8 / 8_8, removed (runtime repacking replaced them)
    MINT_TYPE_TQ1_0 = 34,
    MINT_TYPE_TQ2_0 = 35,
    // 36..38: IQ4_NL_4_4 / 4_8 / 8_8, removed
    MINT_TYPE_MXFP4 = 39,
    // 40: NVFP4, not known to mint (no layout in the table: a file holding it is refused)
    MINT_TYPE_Q1_0 = 41,
    MINT_TYPE_Q2_0 = 42,
    MINT_TYPE_COUNT = 43, // codes >= this are unknown to mint
} mint_type;

#define MINT_QK   32  // elements per block of the 32-element ("legacy") formats
#define MINT_QK_K 256 // elements per K-quant super-block

typedef struct mint_type_traits {
    const char *name; // "Q4_K"; NULL for a code with no known layout
    uint32_t blck;    // elements per block (1 for plain floats)
    uint32_t size;    // bytes per block
    bool computable;  // mint can multiply with it (dequantize + dot)
    bool is_quant;    // a block format (blck > 1)
} mint_type_traits;

// Traits of a type code, or NULL when the code is out of range or has no known layout.
const mint_type_traits *mint_type_get(uint32_t type);

// Bytes of one row of ne0 elements; 0 if the type is unknown or ne0 is not a multiple of its
// block. Callers that validated the file can trust the result.
uint64_t mint_row_size(uint32_t type, int64_t ne0);

// Looks a type up by its name, case-insensitively ("q4_k", "F16"); -1 if none.
int mint_type_from_name(const char *name);

#endif // MINT_QUANT_TYPES_H
