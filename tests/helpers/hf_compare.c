// hf_compare.c - comparing two opened files entry by entry (hf_compare.h).
#include "hf_compare.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <string.h>

void mt_same_tensors(const mint_file *g, const mint_file *h) {
    cr_assert_eq(g->n_tensors, h->n_tensors);
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const mint_tdesc *a = &g->t[i], *b = mint_file_find(h, a->name);
        cr_assert_not_null(b, "tensor %s missing", a->name);
        cr_assert_eq(a->type, b->type, "%s type", a->name);
        cr_assert_eq(a->n_dims, b->n_dims, "%s n_dims", a->name);
        for (int d = 0; d < 4; d++) cr_assert_eq(a->ne[d], b->ne[d], "%s ne[%d]", a->name, d);
        cr_assert_eq(a->nbytes, b->nbytes, "%s nbytes", a->name);
        cr_assert(memcmp(a->data, b->data, a->nbytes) == 0, "%s bytes differ", a->name);
    }
}

void mt_same_vocab(const mint_file *g, const mint_file *h) {
    const mint_kv *gt = mint_file_find_kv(g, "tokenizer.ggml.tokens");
    const mint_kv *ht = mint_file_find_kv(h, "tokenizer.ggml.tokens");
    const mint_kv *gs = mint_file_find_kv(g, "tokenizer.ggml.scores");
    const mint_kv *hs = mint_file_find_kv(h, "tokenizer.ggml.scores");
    const mint_kv *gy = mint_file_find_kv(g, "tokenizer.ggml.token_type");
    const mint_kv *hy = mint_file_find_kv(h, "tokenizer.ggml.token_type");
    cr_assert(gt && ht && gs && hs && gy && hy);
    cr_assert_eq(gt->n, ht->n);
    for (uint64_t i = 0; i < gt->n; i++) {
        const mint_str *a = &((const mint_str *)gt->arr)[i], *b = &((const mint_str *)ht->arr)[i];
        cr_assert(a->len == b->len && memcmp(a->p, b->p, a->len) == 0, "token %" PRIu64, i);
        cr_assert(memcmp((const float *)gs->arr + i, (const float *)hs->arr + i, 4) == 0,
                  "score %" PRIu64, i);
        cr_assert_eq(((const int32_t *)gy->arr)[i], ((const int32_t *)hy->arr)[i], "type %" PRIu64,
                     i);
    }
}

bool mt_same_kv_value(const mint_kv *a, const mint_kv *b) {
    if (a->type != b->type) return false;
    if (a->type == MINT_VAL_STRING) return a->n == b->n && memcmp(a->str, b->str, a->n) == 0;
    if (a->type == MINT_VAL_F32 || a->type == MINT_VAL_F64) return (float)a->v.f == (float)b->v.f;
    return a->v.u == b->v.u;
}
