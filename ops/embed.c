// embed.c - the token embedding lookup: a dequantized row of token_embd per token.
#include "ops/ops.h"

// dst[t] = to_float(W row ids[t])   rows split across threads; no activation rounding (ggml's
// get_rows dequantizes the row exactly)
void op_get_rows(const mint_node *n, const mint_exec *e, int ith, int nth) {
    const mint_weight *w = n->w;
    const mint_to_float_fn to_float = e->k->t[w->type].to_float;
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    for (long t = lo; t < hi; t++) {
        const char *row = (const char *)w->data + (size_t)e->ids[t] * w->row_bytes;
        to_float(row, mint_row(e, n->dst, t), w->n_in);
    }
}
