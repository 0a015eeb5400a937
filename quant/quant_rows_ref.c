// quant_rows_ref.c - a whole matrix quantized as llama-quantize does it, with or without an
// importance matrix (quant/kernels.h: mint_quantize_rows_ref).
//
// llama-quantize hands each tensor (or each expert of a stack) to one function per type that
// takes the per-column importance. For most types that function is the plain row quantizer when
// the importance is absent and a weighted search when it is present; for the i-quants the
// weighted search is the only quantizer. This file is the one switch over the types: each
// weighted quantizer lives beside its type's plain one (quant_*_ref.c).
#include "quant/kernels.h"
#include "quant/ref.h"
#include "quant/types.h"

// The weighted row quantizer of t, used when an importance is given (by the i-quants always);
// NULL for a type whose quantizer ignores it (F32, F16, BF16, Q8_0, MXFP4, TQ1_0, TQ2_0, Q1_0,
// Q2_0: llama.cpp's quantize_q8_0, quantize_mxfp4, quantize_tq*_0 and quantize_q1_0 /
// quantize_q2_0 take the importance and do not read it).
static mint_quantize_imat_fn weighted_quantizer(mint_type t) {
    switch (t) {
    case MINT_TYPE_Q4_0:
        return quantize_row_q4_0_imat_ref;
    case MINT_TYPE_Q4_1:
        return quantize_row_q4_1_imat_ref;
    case MINT_TYPE_Q5_0:
        return quantize_row_q5_0_imat_ref;
    case MINT_TYPE_Q5_1:
        return quantize_row_q5_1_imat_ref;
    case MINT_TYPE_Q2_K:
        return quantize_row_q2_K_imat_ref;
    case MINT_TYPE_Q3_K:
        return quantize_row_q3_K_imat_ref;
    case MINT_TYPE_Q4_K:
        return quantize_row_q4_K_imat_ref;
    case MINT_TYPE_Q5_K:
        return quantize_row_q5_K_imat_ref;
    case MINT_TYPE_Q6_K:
        return quantize_row_q6_K_imat_ref;
    case MINT_TYPE_IQ4_NL:
        return quantize_iq4_nl_ref;
    case MINT_TYPE_IQ4_XS:
        return quantize_iq4_xs_ref;
    case MINT_TYPE_IQ3_XXS:
        return quantize_iq3_xxs_ref;
    case MINT_TYPE_IQ3_S:
        return quantize_iq3_s_ref;
    case MINT_TYPE_IQ1_S:
        return quantize_iq1_s_ref;
    case MINT_TYPE_IQ1_M:
        return quantize_iq1_m_ref;
    case MINT_TYPE_IQ2_XXS:
        return quantize_iq2_xxs_ref;
    case MINT_TYPE_IQ2_XS:
        return quantize_iq2_xs_ref;
    case MINT_TYPE_IQ2_S:
        return quantize_iq2_s_ref;
    default:
        return NULL;
    }
}

bool mint_quantize_rows_ref(mint_type t, const float *restrict x, void *restrict y, int64_t nrow,
                            int64_t n_per_row, const float *imatrix) {
    const mint_quantize_row_fn row = mint_quantizer_ref(t);
    if (!row) return false;
    // The i-quants' weighted search is their only quantizer (the importance optional); the other
    // types search with weights only when they are given an importance.
    const bool iquant = t == MINT_TYPE_IQ4_NL || t == MINT_TYPE_IQ4_XS || t == MINT_TYPE_IQ3_XXS ||
                        t == MINT_TYPE_IQ3_S || t == MINT_TYPE_IQ2_XXS || t == MINT_TYPE_IQ2_XS ||
                        t == MINT_TYPE_IQ2_S || t == MINT_TYPE_IQ1_S || t == MINT_TYPE_IQ1_M;
    const mint_quantize_imat_fn weighted = imatrix || iquant ? weighted_quantizer(t) : NULL;
    const size_t in_row = (size_t)n_per_row, out_row = (size_t)mint_row_size(t, n_per_row);
    for (int64_t i = 0; i < nrow; i++) {
        const float *xi = x + (size_t)i * in_row;
        unsigned char *yi = (unsigned char *)y + (size_t)i * out_row;
        if (weighted)
            weighted(xi, yi, n_per_row, imatrix);
        else
            row(xi, yi, n_per_row);
    }
    return true;
}

// ggml_quantize_requires_imatrix (ggml.c): the types whose search llama.cpp runs only with one
// (IQ1_M's weighs by x^2 without one). llama-quantize's wider per-tensor rule,
// tensor_requires_imatrix, is runtime/filetools/ftype.c's mint_mix_requires_imatrix.
bool mint_quantize_needs_imatrix(mint_type t) {
    return t == MINT_TYPE_IQ2_XXS || t == MINT_TYPE_IQ2_XS || t == MINT_TYPE_IQ1_S;
}
