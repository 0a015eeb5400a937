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

bool mint_quantize_rows_ref(mint_type t, const float *restrict x, void *restrict y, int64_t nrow,
                            int64_t n_per_row, const float *imatrix) {
    const size_t in_row = (size_t)n_per_row, out_row = (size_t)mint_row_size(t, n_per_row);
    // The i-quants: the weighted search is the only quantizer, the importance optional.
    void (*weighted)(const float *restrict, void *restrict, int64_t, const float *) = NULL;
    switch (t) {
    case MINT_TYPE_IQ4_NL:
        weighted = quantize_iq4_nl_ref;
        break;
    case MINT_TYPE_IQ4_XS:
        weighted = quantize_iq4_xs_ref;
        break;
    default:
        break;
    }
    if (weighted) {
        for (int64_t i = 0; i < nrow; i++)
            weighted(x + (size_t)i * in_row, (unsigned char *)y + (size_t)i * out_row, n_per_row,
                     imatrix);
        return true;
    }
    // Every other type has no weighted quantizer yet: it quantizes as without an importance.
    const mint_quantize_row_fn row = mint_quantizer_ref(t);
    if (!row) return false;
    for (int64_t i = 0; i < nrow; i++)
        row(x + (size_t)i * in_row, (unsigned char *)y + (size_t)i * out_row, n_per_row);
    return true;
}

bool mint_quantize_needs_imatrix(mint_type t) {
    (void)t;
    return false;
}
