// hybrid.c - which layers of a hybrid model mix tokens by a recurrence and which by attention,
// and the hyper-parameters of its recurrent mixer, from the file's metadata.
//
// LFM2's converter writes attention.head_count_kv as an array with an entry per layer, 0 for a
// convolution layer (llama.cpp's is_recurrent(il) is n_head_kv(il) == 0). mint keeps one number
// of KV heads for the model, so the attention layers' entries must agree; the KV cache then holds
// only the attention layers (kv_slot) and the recurrent state only the others (rs_slot).
#include "base/error.h"
#include "runtime/engine/model.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int64_t mint_meta_arr_int(mint_value_type t, const void *data, uint64_t i) {
    switch (t) {
    case MINT_VAL_BOOL:
    case MINT_VAL_U8:
        return ((const uint8_t *)data)[i];
    case MINT_VAL_I8:
        return ((const int8_t *)data)[i];
    case MINT_VAL_U16:
        return ((const uint16_t *)data)[i];
    case MINT_VAL_I16:
        return ((const int16_t *)data)[i];
    case MINT_VAL_U32:
        return ((const uint32_t *)data)[i];
    case MINT_VAL_I32:
        return ((const int32_t *)data)[i];
    case MINT_VAL_U64:
        return ((const uint64_t *)data)[i] > INT32_MAX ? INT32_MAX
                                                       : (int64_t)((const uint64_t *)data)[i];
    case MINT_VAL_I64:
        return ((const int64_t *)data)[i];
    default:
        return -1;
    }
}

mint_status mint_model_read_mixers(mint_model *m, mint_err *err) {
    mint_hparams *hp = &m->hp;
    const mint_arch *d = m->desc;
    const char *a = m->arch;
    char key[128];
    hp->n_layer_kv = hp->n_layer;
    hp->n_layer_rs = 0;
    hp->n_conv = hp->ssm_k_heads = hp->ssm_v_heads = hp->ssm_s = 0;
    for (int l = 0; l < hp->n_layer; l++) {
        m->layers[l].mixer = MINT_MIXER_ATTENTION;
        m->layers[l].kv_slot = l;
        m->layers[l].rs_slot = -1;
    }
    if (d->recurrent == MINT_MIXER_ATTENTION) return MINT_OK;
    if (d->recurrent_no_kv) {
        mint_arch_key_name(key, sizeof key, a, MINT_KEY_HEAD_COUNT_KV);
        mint_value_type t;
        uint64_t n = 0;
        const void *data = NULL;
        mint_status st = mint_file_get_arr(m->file, key, &t, &n, &data, err);
        if (st == MINT_E_NOT_FOUND || st == MINT_E_TYPE)
            return mint_fail(err, MINT_E_FORMAT,
                             "metadata %s must be an array with an entry per layer (0 for a "
                             "recurrent layer)",
                             key);
        if (st) return st;
        if (n != (uint64_t)hp->n_layer)
            return mint_fail(err, MINT_E_FORMAT,
                             "metadata %s has %" PRIu64 " entries for %d layers", key, n,
                             hp->n_layer);
        int32_t heads = 0;
        for (int l = 0; l < hp->n_layer; l++) {
            const int64_t v = mint_meta_arr_int(t, data, (uint64_t)l);
            if (v < 0 || v > hp->n_head)
                return mint_fail(err, MINT_E_FORMAT,
                                 "metadata %s[%d] = %" PRId64 " is outside 0..%d (head_count)", key,
                                 l, v, hp->n_head);
            if (v == 0) {
                m->layers[l].mixer = d->recurrent;
                continue;
            }
            if (heads && v != heads)
                return mint_fail(err, MINT_E_UNSUPPORTED,
                                 "metadata %s: layers %d and earlier have %d and %" PRId64
                                 " KV heads (mint needs one number)",
                                 key, l, heads, v);
            heads = (int32_t)v;
        }
        hp->n_head_kv = heads ? heads : hp->n_head; // (no attention layer: any divisor will do)
    }
    if (d->recurrent_interval) { // Qwen3.5: attention in every interval-th layer
        uint32_t every = 4;
        mint_arch_key_name(key, sizeof key, a, MINT_KEY_FULL_ATTN_INTERVAL);
        mint_status st = mint_file_get_u32(m->file, key, &every, err);
        if (st != MINT_OK && st != MINT_E_NOT_FOUND) return st;
        if (every < 1 || every > (uint32_t)hp->n_layer)
            return mint_fail(err, MINT_E_FORMAT, "metadata %s = %u is outside 1..%d", key, every,
                             hp->n_layer);
        for (int l = 0; l < hp->n_layer; l++)
            if ((l + 1) % (int)every != 0) m->layers[l].mixer = d->recurrent;
    }
    int32_t kv = 0, rs = 0;
    for (int l = 0; l < hp->n_layer; l++) {
        mint_layer *L = &m->layers[l];
        L->kv_slot = L->mixer == MINT_MIXER_ATTENTION ? kv++ : -1;
        L->rs_slot = L->mixer == MINT_MIXER_ATTENTION ? -1 : rs++;
    }
    hp->n_layer_kv = kv;
    hp->n_layer_rs = rs;
    if (d->recurrent == MINT_MIXER_SHORTCONV) {
        uint32_t taps = 0;
        mint_arch_key_name(key, sizeof key, a, MINT_KEY_SHORTCONV_L);
        mint_status st = mint_file_get_u32(m->file, key, &taps, err);
        if (st == MINT_E_NOT_FOUND)
            return mint_fail(err, MINT_E_FORMAT, "metadata %s is missing", key);
        if (st) return st;
        if (taps < 2 || taps > 64)
            return mint_fail(err, MINT_E_UNSUPPORTED, "metadata %s = %u is outside 2..64", key,
                             taps);
        hp->n_conv = (int32_t)taps;
    }
    if (d->recurrent == MINT_MIXER_DELTA_NET) { // llama.cpp's ssm.* keys, all required
        static const mint_key keys[5] = {MINT_KEY_SSM_CONV, MINT_KEY_SSM_GROUPS,
                                         MINT_KEY_SSM_DT_RANK, MINT_KEY_SSM_STATE,
                                         MINT_KEY_SSM_INNER};
        uint32_t v[5];
        for (int i = 0; i < 5; i++) {
            mint_arch_key_name(key, sizeof key, a, keys[i]);
            mint_status st = mint_file_get_u32(m->file, key, &v[i], err);
            if (st == MINT_E_NOT_FOUND)
                return mint_fail(err, MINT_E_FORMAT, "metadata %s is missing", key);
            if (st) return st;
            if (v[i] < 1 || v[i] > (1u << 16))
                return mint_fail(err, MINT_E_FORMAT, "metadata %s = %u is outside 1..65536", key,
                                 v[i]);
        }
        if (v[0] < 2 || v[0] > 64)
            return mint_fail(err, MINT_E_UNSUPPORTED,
                             "metadata %s.ssm.conv_kernel = %u is outside "
                             "2..64",
                             a, v[0]);
        if (v[2] % v[1] != 0)
            return mint_fail(err, MINT_E_FORMAT,
                             "metadata %s.ssm.time_step_rank %u (value heads) is not a multiple of "
                             "ssm.group_count %u (key heads)",
                             a, v[2], v[1]);
        if ((uint64_t)v[2] * v[3] != v[4])
            return mint_fail(err, MINT_E_UNSUPPORTED,
                             "metadata %s.ssm.inner_size %u is not ssm.time_step_rank %u times "
                             "ssm.state_size %u (mint needs value heads of the key heads' size)",
                             a, v[4], v[2], v[3]);
        if (v[3] > 512)
            return mint_fail(err, MINT_E_UNSUPPORTED,
                             "metadata %s.ssm.state_size %u is larger than mint's limit of 512", a,
                             v[3]);
        hp->n_conv = (int32_t)v[0];
        hp->ssm_k_heads = (int32_t)v[1];
        hp->ssm_v_heads = (int32_t)v[2];
        hp->ssm_s = (int32_t)v[3];
    }
    char sw[128];
    mint_arch_key_name(sw, sizeof sw, a, MINT_KEY_SWA_WINDOW);
    uint32_t window = 0;
    if (mint_file_get_u32(m->file, sw, &window, NULL) == MINT_OK && window > 0)
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "metadata %s = %u: a hybrid's windowed attention is not supported", sw,
                         window);
    return MINT_OK;
}
