// embed.c - the token embedding lookup: a dequantized row of token_embd per token.
#include "ops/ops.h"

// dst[r] = to_float(table row ids[r])   for r in [r0, r1)
void mint_get_rows(mint_to_float_fn to_float, const void *table, size_t table_row_bytes,
                   int64_t n_in, const int32_t *ids, float *dst, size_t dst_stride, long r0,
                   long r1) {
    for (long r = r0; r < r1; r++)
        to_float((const char *)table + (size_t)ids[r] * table_row_bytes,
                 (float *)((char *)dst + (size_t)r * dst_stride), n_in);
}
