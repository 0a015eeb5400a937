// mix_file.c - the model facts llama-quantize's mix rules need, read from a GGUF's metadata, and
// the planner over a whole file (runtime/filetools/mix.h).
#include "runtime/filetools/mix.h"

#include "base/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Reading the model from a file

// A head count is a u32, or (newer GGUFs with per-layer counts) an array whose first entry is
// layer 0's, which is what llama.cpp's n_gqa() looks at.
static mint_status head_count(const mint_file *f, const char *key, int32_t *out, mint_err *err) {
    uint32_t v;
    mint_status st = mint_file_get_u32(f, key, &v, err);
    if (st == MINT_E_TYPE) {
        mint_value_type et;
        uint64_t n;
        const void *data;
        st = mint_file_get_arr(f, key, &et, &n, &data, err);
        if (st != MINT_OK) return st;
        if (n == 0 || (et != MINT_VAL_U32 && et != MINT_VAL_I32))
            return mint_fail(err, MINT_E_TYPE, "%s: array of %llu of type %d, want u32/i32", key,
                             (unsigned long long)n, (int)et);
        v = *(const uint32_t *)data;
        mint_err_clear(err);
    } else if (st != MINT_OK) {
        return st;
    }
    if (v > INT32_MAX) return mint_fail(err, MINT_E_FORMAT, "%s = %u, limit %d", key, v, INT32_MAX);
    *out = (int32_t)v;
    return MINT_OK;
}

mint_status mint_mix_model_from_file(const mint_file *f, mint_mix_model *out, mint_err *err) {
    const char *name;
    uint64_t len;
    mint_status st = mint_file_get_str(f, "general.architecture", &name, &len, err);
    if (st != MINT_OK) return st;
    char arch[64];
    snprintf(arch, sizeof arch, "%.*s", (int)(len < sizeof arch ? len : sizeof arch - 1), name);
    out->arch = len < sizeof arch && strlen(arch) == len ? mint_arch_find(arch) : NULL;
    if (!out->arch) {
        char known[256];
        mint_arch_list(known, sizeof known);
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "mix: general.architecture '%s': mint knows llama-quantize's rules for %s",
                         arch, known);
    }
    char key[128];
    uint32_t n_layer;
    mint_arch_key_name(key, sizeof key, arch, MINT_KEY_BLOCK_COUNT);
    st = mint_file_get_u32(f, key, &n_layer, err);
    if (st != MINT_OK) return st;
    if (n_layer > INT32_MAX)
        return mint_fail(err, MINT_E_FORMAT, "%s = %u, limit %d", key, n_layer, INT32_MAX);
    out->n_layer = (int32_t)n_layer;
    mint_arch_key_name(key, sizeof key, arch, MINT_KEY_HEAD_COUNT);
    st = head_count(f, key, &out->n_head, err);
    if (st != MINT_OK) return st;
    mint_arch_key_name(key, sizeof key, arch, MINT_KEY_HEAD_COUNT_KV);
    st = head_count(f, key, &out->n_head_kv, err);
    if (st == MINT_E_NOT_FOUND) {
        out->n_head_kv = out->n_head;
        mint_err_clear(err);
        st = MINT_OK;
    }
    if (st != MINT_OK) return st;
    uint32_t n_expert = 0;
    mint_arch_key_name(key, sizeof key, arch, MINT_KEY_EXPERT_COUNT);
    st = mint_file_get_u32(f, key, &n_expert, err);
    if (st == MINT_E_NOT_FOUND) {
        mint_err_clear(err);
        st = MINT_OK;
    }
    if (n_expert > INT32_MAX)
        return mint_fail(err, MINT_E_FORMAT, "%s = %u, limit %d", key, n_expert, INT32_MAX);
    out->n_expert = (int32_t)n_expert;
    return st;
}

mint_status mint_mix_plan_file(const mint_file *f, const mint_mix_params *params,
                               mint_mix_choice *out, size_t *order, mint_err *err) {
    mint_mix_model model;
    mint_status st = mint_mix_model_from_file(f, &model, err);
    if (st != MINT_OK) return st;
    mint_file_info info;
    mint_file_get_info(f, &info);
    mint_mix_tensor *t = malloc((info.n_tensors ? info.n_tensors : 1) * sizeof *t);
    if (!t)
        return mint_fail(err, MINT_E_NOMEM, "mix: out of memory for %llu tensors",
                         (unsigned long long)info.n_tensors);
    for (uint64_t i = 0; i < info.n_tensors && st == MINT_OK; i++) {
        mint_tensor_info ti;
        st = mint_file_tensor(f, i, &ti);
        t[i] = (mint_mix_tensor){ti.name, ti.type, {ti.ne[0], ti.ne[1], ti.ne[2], ti.ne[3]}};
    }
    if (st == MINT_OK)
        st = mint_mix_plan(&model, t, (size_t)info.n_tensors, params, out, order, err);
    free(t);
    return st;
}
