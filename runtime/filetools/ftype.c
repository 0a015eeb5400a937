// ftype.c - llama-quantize's file types: their names, numbers and base types (see mix.h), the
// table mint-quantize's TYPE argument is read against. Which type each tensor of a file type
// gets is mix.c's.
#include "runtime/filetools/mix.h"

#include "base/error.h"
#include "quant/types.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

// ---------------------------------------------------------------------------------------------
// File types

typedef struct ftype_info {
    mint_ftype ftype; // llama.cpp's number
    const char *name; // llama-quantize's name for it
    mint_type base;   // the type most tensors get
} ftype_info;

// LLAMA_FTYPE_MOSTLY_<name> and its base type, in llama-quantize's listing order (for messages).
#define FTYPE(name, base)                                                                          \
    { MINT_FTYPE_##name, #name, MINT_TYPE_##base }
static const ftype_info ftypes[] = {
    FTYPE(Q1_0, Q1_0),     FTYPE(Q2_0, Q2_0),       FTYPE(Q4_0, Q4_0),
    FTYPE(Q4_1, Q4_1),     FTYPE(MXFP4_MOE, MXFP4), FTYPE(Q5_0, Q5_0),
    FTYPE(Q5_1, Q5_1),     FTYPE(IQ2_XXS, IQ2_XXS), FTYPE(IQ2_XS, IQ2_XS),
    FTYPE(IQ2_S, IQ2_XS),  FTYPE(IQ2_M, IQ2_S),     FTYPE(Q2_K, Q2_K),
    FTYPE(Q2_K_S, Q2_K),   FTYPE(Q3_K_S, Q3_K),     FTYPE(Q3_K_M, Q3_K),
    FTYPE(Q3_K_L, Q3_K),   FTYPE(Q4_K_S, Q4_K),     FTYPE(Q4_K_M, Q4_K),
    FTYPE(Q5_K_S, Q5_K),   FTYPE(Q5_K_M, Q5_K),     FTYPE(Q6_K, Q6_K),
    FTYPE(Q8_0, Q8_0),     FTYPE(TQ1_0, TQ1_0),     FTYPE(TQ2_0, TQ2_0),
    FTYPE(IQ4_NL, IQ4_NL), FTYPE(IQ4_XS, IQ4_XS),   FTYPE(IQ3_XXS, IQ3_XXS),
    FTYPE(IQ3_S, IQ3_S),   FTYPE(IQ3_M, IQ3_S),     FTYPE(IQ3_XS, IQ3_S),
    FTYPE(IQ1_S, IQ1_S),   FTYPE(IQ1_M, IQ1_M),     FTYPE(F16, F16),
    FTYPE(BF16, BF16),     FTYPE(F32, F32),
};
#undef FTYPE
#define N_FTYPES (sizeof ftypes / sizeof ftypes[0])

// llama-quantize's short names for the _M mixes.
static const struct {
    const char *name;
    mint_ftype ftype;
} ftype_aliases[] = {
    {"Q3_K", MINT_FTYPE_Q3_K_M},
    {"Q4_K", MINT_FTYPE_Q4_K_M},
    {"Q5_K", MINT_FTYPE_Q5_K_M},
};

// Names (and numbers) llama-quantize accepts whose tensor types mint has no kernels for, so
// that asking for them says "unsupported" rather than "unknown". COPY is a mode, not a type.
static const struct {
    const char *name;
    int number;
} ftypes_foreign[] = {
    {"COPY", -1},
};

static const ftype_info *ftype_find(int ftype) {
    for (size_t i = 0; i < N_FTYPES; i++)
        if ((int)ftypes[i].ftype == ftype) return &ftypes[i];
    return NULL;
}

static void valid_ftype_names(char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_FTYPES && len < cap; i++) {
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? " " : "", ftypes[i].name);
        for (size_t a = 0; a < sizeof ftype_aliases / sizeof ftype_aliases[0] && len < cap; a++)
            if (ftype_aliases[a].ftype == ftypes[i].ftype)
                len += (size_t)snprintf(buf + len, cap - len, " %s", ftype_aliases[a].name);
    }
}

mint_status mint_ftype_from_name(const char *name, mint_ftype *out, mint_err *err) {
    if (!name || !*name) return mint_fail(err, MINT_E_ARG, "file type: empty name");
    for (size_t i = 0; i < N_FTYPES; i++)
        if (strcasecmp(name, ftypes[i].name) == 0) return *out = ftypes[i].ftype, MINT_OK;
    for (size_t i = 0; i < sizeof ftype_aliases / sizeof ftype_aliases[0]; i++)
        if (strcasecmp(name, ftype_aliases[i].name) == 0)
            return *out = ftype_aliases[i].ftype, MINT_OK;

    // A number names the file type directly, as llama-quantize allows ("15" is Q4_K_M).
    bool numeric = true;
    for (const char *c = name; *c; c++) numeric &= isdigit((unsigned char)*c) != 0;
    long number = numeric && strlen(name) < 6 ? strtol(name, NULL, 10) : -2;
    if (numeric) {
        const ftype_info *fi = ftype_find((int)number);
        if (fi) return *out = fi->ftype, MINT_OK;
    }
    for (size_t i = 0; i < sizeof ftypes_foreign / sizeof ftypes_foreign[0]; i++)
        if (strcasecmp(name, ftypes_foreign[i].name) == 0 || number == ftypes_foreign[i].number)
            return mint_fail(err, MINT_E_UNSUPPORTED,
                             "file type '%s' (%s) is known to llama-quantize but mint cannot "
                             "compute its tensor types",
                             name, ftypes_foreign[i].name);
    char valid[256];
    valid_ftype_names(valid, sizeof valid);
    return mint_fail(err, MINT_E_ARG, "file type '%s' is unknown; valid: %s (or their numbers)",
                     name, valid);
}

const char *mint_ftype_name(int ftype) {
    const ftype_info *fi = ftype_find(ftype);
    return fi ? fi->name : NULL;
}

int mint_ftype_base_type(int ftype) {
    const ftype_info *fi = ftype_find(ftype);
    return fi ? (int)fi->base : -1;
}

uint32_t mint_ftype_file_type(int ftype) {
    return ftype_find(ftype) ? (uint32_t)ftype : UINT32_MAX;
}

bool mint_mix_requires_imatrix(int type, int ftype) {
    switch (type) {
    case MINT_TYPE_IQ3_XXS:
    case MINT_TYPE_IQ2_XXS:
    case MINT_TYPE_IQ2_XS:
    case MINT_TYPE_IQ2_S:
    case MINT_TYPE_IQ1_S:
    case MINT_TYPE_IQ1_M:
        return true;
    case MINT_TYPE_Q2_K:
        return ftype == MINT_FTYPE_Q2_K_S;
    default:
        return false;
    }
}
