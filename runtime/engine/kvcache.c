// kvcache.c - allocation with overflow-checked sizes.
#include "runtime/engine/kvcache.h"

#include "base/error.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int32_t padded(int32_t n_ctx) {
    return (int32_t)(((int64_t)n_ctx + MINT_KV_PAD - 1) / MINT_KV_PAD * MINT_KV_PAD);
}

uint64_t mint_kvcache_bytes(mint_kv_type type, int32_t n_layer, int32_t n_ctx, int64_t kv_dim) {
    uint64_t elem = type == MINT_KV_F16 ? 2 : 4, n;
    if (n_layer < 0 || n_ctx < 0 || n_ctx > INT32_MAX - MINT_KV_PAD || kv_dim < 0) return 0;
    if (__builtin_mul_overflow((uint64_t)n_layer, (uint64_t)padded(n_ctx), &n) ||
        __builtin_mul_overflow(n, (uint64_t)kv_dim, &n) || __builtin_mul_overflow(n, elem, &n) ||
        __builtin_mul_overflow(n, (uint64_t)2, &n))
        return 0;
    return n;
}

mint_status mint_kvcache_init(mint_kvcache *kv, mint_kv_type type, int32_t n_layer, int32_t n_ctx,
                              int64_t kv_dim, mint_err *err) {
    memset(kv, 0, sizeof *kv);
    uint64_t total = mint_kvcache_bytes(type, n_layer, n_ctx, kv_dim);
    if (total == 0 || total / 2 > SIZE_MAX)
        return mint_fail(err, MINT_E_LIMIT, "KV cache size overflows (%d layers x %d positions)",
                         n_layer, n_ctx);
    kv->type = type;
    kv->n_layer = n_layer;
    kv->n_ctx = n_ctx;
    kv->n_pad = padded(n_ctx);
    kv->kv_dim = kv_dim;
    kv->elem = type == MINT_KV_F16 ? 2 : 4;
    // calloc: untouched pages cost nothing until the context actually fills up.
    kv->k = calloc(1, (size_t)(total / 2));
    kv->v = calloc(1, (size_t)(total / 2));
    if (!kv->k || !kv->v) {
        mint_kvcache_free(kv);
        return mint_fail(err, MINT_E_NOMEM, "cannot allocate the KV cache (%" PRIu64 " bytes)",
                         total);
    }
    return MINT_OK;
}

void mint_kvcache_free(mint_kvcache *kv) {
    free(kv->k);
    free(kv->v);
    memset(kv, 0, sizeof *kv);
}

mint_kv_view mint_kvcache_layer(const mint_kvcache *kv, int32_t l) {
    const size_t layer_bytes = (size_t)kv->n_pad * (size_t)kv->kv_dim * kv->elem;
    return (mint_kv_view){
        .type = kv->type == MINT_KV_F16 ? MINT_TYPE_F16 : MINT_TYPE_F32,
        .elem = kv->elem,
        .kv_dim = kv->kv_dim,
        .n_pad = kv->n_pad,
        .k = (char *)kv->k + (size_t)l * layer_bytes,
        .vt = (char *)kv->v + (size_t)l * layer_bytes,
    };
}
