// types.c - the type table: names, block sizes and bytes per block of every ggml type code.
#include "quant/types.h"

#include "mint.h"

#include <stdio.h>
#include <strings.h>

// Block sizes and bytes per block are ggml's (src/ggml.c type_traits[]); the block layouts of the
// computable ones are in quant/blocks.h, which pins them with static_asserts.
static const mint_type_traits type_table[MINT_TYPE_COUNT] = {
    [MINT_TYPE_F32] = {"F32", 1, 4, true, false},
    [MINT_TYPE_F16] = {"F16", 1, 2, true, false},
    [MINT_TYPE_Q4_0] = {"Q4_0", 32, 18, true, true},
    [MINT_TYPE_Q4_1] = {"Q4_1", 32, 20, true, true},
    [MINT_TYPE_Q5_0] = {"Q5_0", 32, 22, true, true},
    [MINT_TYPE_Q5_1] = {"Q5_1", 32, 24, true, true},
    [MINT_TYPE_Q8_0] = {"Q8_0", 32, 34, true, true},
    [MINT_TYPE_Q8_1] = {"Q8_1", 32, 36, false, true},
    [MINT_TYPE_Q2_K] = {"Q2_K", 256, 84, true, true},
    [MINT_TYPE_Q3_K] = {"Q3_K", 256, 110, true, true},
    [MINT_TYPE_Q4_K] = {"Q4_K", 256, 144, true, true},
    [MINT_TYPE_Q5_K] = {"Q5_K", 256, 176, true, true},
    [MINT_TYPE_Q6_K] = {"Q6_K", 256, 210, true, true},
    [MINT_TYPE_Q8_K] = {"Q8_K", 256, 292, false, true},
    [MINT_TYPE_IQ2_XXS] = {"IQ2_XXS", 256, 66, true, true},
    [MINT_TYPE_IQ2_XS] = {"IQ2_XS", 256, 74, true, true},
    [MINT_TYPE_IQ3_XXS] = {"IQ3_XXS", 256, 98, true, true},
    [MINT_TYPE_IQ1_S] = {"IQ1_S", 256, 50, true, true},
    [MINT_TYPE_IQ4_NL] = {"IQ4_NL", 32, 18, true, true},
    [MINT_TYPE_IQ3_S] = {"IQ3_S", 256, 110, true, true},
    [MINT_TYPE_IQ2_S] = {"IQ2_S", 256, 82, true, true},
    [MINT_TYPE_IQ4_XS] = {"IQ4_XS", 256, 136, true, true},
    [MINT_TYPE_I8] = {"I8", 1, 1, false, false},
    [MINT_TYPE_I16] = {"I16", 1, 2, false, false},
    [MINT_TYPE_I32] = {"I32", 1, 4, false, false},
    [MINT_TYPE_I64] = {"I64", 1, 8, false, false},
    [MINT_TYPE_F64] = {"F64", 1, 8, false, false},
    [MINT_TYPE_IQ1_M] = {"IQ1_M", 256, 56, true, true},
    [MINT_TYPE_BF16] = {"BF16", 1, 2, true, false},
    [MINT_TYPE_TQ1_0] = {"TQ1_0", 256, 54, true, true},
    [MINT_TYPE_TQ2_0] = {"TQ2_0", 256, 66, true, true},
    [MINT_TYPE_MXFP4] = {"MXFP4", 32, 17, true, true},
    [MINT_TYPE_Q1_0] = {"Q1_0", 128, 18, true, true},
    [MINT_TYPE_Q2_0] = {"Q2_0", 64, 18, true, true},
};

const mint_type_traits *mint_type_get(uint32_t type) {
    if (type >= MINT_TYPE_COUNT || !type_table[type].name) return NULL;
    return &type_table[type];
}

uint64_t mint_row_size(uint32_t type, int64_t ne0) {
    const mint_type_traits *t = mint_type_get(type);
    if (!t || ne0 < 0 || ne0 % t->blck != 0) return 0;
    return (uint64_t)(ne0 / t->blck) * t->size;
}

int mint_type_from_name(const char *name) {
    for (int i = 0; i < MINT_TYPE_COUNT; i++)
        if (type_table[i].name && strcasecmp(type_table[i].name, name) == 0) return i;
    return -1;
}

// ---- public wrappers (mint.h) ---------------------------------------------------------------

const char *mint_type_name(uint32_t type) {
    const mint_type_traits *t = mint_type_get(type);
    if (t) return t->name;
    // Unknown codes are named by number; a thread-local buffer keeps concurrent callers apart.
    static _Thread_local char buf[24];
    snprintf(buf, sizeof buf, "type%u", type);
    return buf;
}

uint64_t mint_type_nbytes(uint32_t type, uint64_t n) {
    const mint_type_traits *t = mint_type_get(type);
    if (!t || n % t->blck != 0) return 0;
    return n / t->blck * t->size;
}

uint32_t mint_type_block_size(uint32_t type) {
    const mint_type_traits *t = mint_type_get(type);
    return t ? t->blck : 0;
}
