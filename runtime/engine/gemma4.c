// gemma4.c - the shapes Gemma 4's dense models (E2B, E4B) give each layer, and the tensors they
// add, read from the file as llama.cpp's gemma4 loader reads them.
//
// A layer is a window layer or a full one by attention.sliding_window_pattern (a bool per layer).
// Window layers have their own head size (attention.key_length_swa, the values' the same), RoPE
// dimensions (rope.dimension_count_swa) and base (rope.freq_base_swa, 10000 when absent, no
// scaling); full layers take attention.key_length and turn their pairs by rope_freqs (the
// converter's "proportional" RoPE: divisors of 1e30 leave the pairs past a quarter unturned).
// feed_forward_length may be an array (wider layers near the end: use_double_wide_mlp).
//
// Shared keys and values: the last attention.shared_kv_layers layers compute no keys or values;
// such a layer l reads those of layer n_kv - 2 when it is a window layer and n_kv - 1 otherwise
// (n_kv = n_layer - shared_kv_layers), llama.cpp's rule for the layers it reuses. The KV cache
// holds the first n_kv layers; the others' kv_slot names the one they read. Each cache row is
// sized for the larger head size: a window layer writes and reads only the first n_head_kv *
// head_dim_swa elements of it, so the numbers are those of a cache of its own size.
#include "base/error.h"
#include "quant/types.h"
#include "runtime/engine/model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// "<arch>.<suffix>": a number, or an array with an entry per layer, into out[n_layer] (each
// 0..max); MINT_E_NOT_FOUND passes through.
static mint_status per_layer(const mint_model *m, mint_key k, int64_t max, int32_t *out,
                             mint_err *err) {
    char key[128];
    mint_arch_key_name(key, sizeof key, m->arch, k);
    const int n_layer = m->hp.n_layer;
    mint_value_type t;
    uint64_t n = 0;
    const void *data = NULL;
    mint_status st = mint_file_get_arr(m->file, key, &t, &n, &data, err);
    if (st == MINT_E_TYPE) { // one value for every layer
        uint64_t v = 0;
        bool b = false;
        if ((st = mint_file_get_u64(m->file, key, &v, NULL)) == MINT_E_TYPE &&
            (st = mint_file_get_bool(m->file, key, &b, err)) == MINT_OK)
            v = b;
        if (st) return st;
        if (v > (uint64_t)max)
            return mint_fail(err, MINT_E_FORMAT, "metadata %s = %" PRIu64 " is outside 0..%" PRId64,
                             key, v, max);
        for (int l = 0; l < n_layer; l++) out[l] = (int32_t)v;
        return MINT_OK;
    }
    if (st) return st;
    if (n != (uint64_t)n_layer)
        return mint_fail(err, MINT_E_FORMAT, "metadata %s has %" PRIu64 " entries for %d layers",
                         key, n, n_layer);
    for (int l = 0; l < n_layer; l++) {
        const int64_t v = mint_meta_arr_int(t, data, (uint64_t)l);
        if (v < 0 || v > max)
            return mint_fail(err, MINT_E_FORMAT,
                             "metadata %s[%d] = %" PRId64 " is outside 0..%" PRId64, key, l, v,
                             max);
        out[l] = (int32_t)v;
    }
    return MINT_OK;
}

// A required "<arch>.<suffix>" of 1..2^24.
static mint_status required(const mint_model *m, mint_key k, int32_t *out, mint_err *err) {
    char key[128];
    mint_arch_key_name(key, sizeof key, m->arch, k);
    uint64_t v = 0;
    mint_status st = mint_file_get_u64(m->file, key, &v, err);
    if (st == MINT_E_NOT_FOUND) return mint_fail(err, MINT_E_FORMAT, "metadata %s is missing", key);
    if (st) return st;
    if (v > (1u << 24))
        return mint_fail(err, MINT_E_FORMAT, "metadata %s = %" PRIu64 " is too large", key, v);
    *out = (int32_t)v;
    return MINT_OK;
}

// Which layer's keys and values a layer past the first n_kv reads (llama.cpp's rule).
static int source_layer(const mint_hparams *hp, int n_kv, int l) {
    return n_kv - (hp->swa_layers[l] ? 2 : 1);
}

// The window, its pattern, head sizes and RoPE of the window layers.
static mint_status read_attention(mint_model *m, int32_t *scratch, mint_err *err) {
    mint_hparams *hp = &m->hp;
    mint_status st;
    if ((st = required(m, MINT_KEY_SWA_WINDOW, &hp->swa_window, err))) return st;
    if (hp->swa_window < 1)
        return mint_fail(err, MINT_E_FORMAT, "metadata %s.attention.sliding_window is 0", m->arch);
    if ((st = per_layer(m, MINT_KEY_SWA_PATTERN, 1, scratch, err)))
        return st == MINT_E_NOT_FOUND
                   ? mint_fail(err, MINT_E_FORMAT,
                               "metadata %s.attention.sliding_window_pattern is missing", m->arch)
                   : st;
    uint8_t *swa = malloc((size_t)hp->n_layer);
    if ((st = mint_model_keep(m, swa, err))) return st;
    for (int l = 0; l < hp->n_layer; l++) swa[l] = (uint8_t)scratch[l];
    hp->swa_layers = swa;
    int32_t v_len = 0;
    if ((st = required(m, MINT_KEY_KEY_LENGTH_SWA, &hp->head_dim_swa, err)) ||
        (st = required(m, MINT_KEY_VALUE_LENGTH_SWA, &v_len, err)))
        return st;
    if (v_len != hp->head_dim_swa || hp->head_dim_swa < 2 || hp->head_dim_swa % 2 != 0 ||
        hp->head_dim_swa > hp->head_dim)
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "window layers' key_length_swa %d and value_length_swa %d: mint needs "
                         "them equal, even, and at most key_length %d",
                         hp->head_dim_swa, v_len, hp->head_dim);
    char key[128];
    mint_arch_key_name(key, sizeof key, m->arch, MINT_KEY_ROPE_DIMS_SWA);
    uint32_t rot = (uint32_t)hp->n_rot;
    st = mint_file_get_u32(m->file, key, &rot, err);
    if (st != MINT_OK && st != MINT_E_NOT_FOUND) return st;
    if (rot != (uint32_t)hp->head_dim_swa)
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "metadata %s = %u must equal the window layers' head size %d", key, rot,
                         hp->head_dim_swa);
    hp->n_rot_swa = (int32_t)rot;
    mint_arch_key_name(key, sizeof key, m->arch, MINT_KEY_ROPE_BASE_SWA);
    float base = hp->rope_base_swa;
    st = mint_file_get_f32(m->file, key, &base, err);
    if (st != MINT_OK && st != MINT_E_NOT_FOUND) return st;
    if (!(base > 1))
        return mint_fail(err, MINT_E_FORMAT, "metadata %s = %g must be > 1", key, base);
    hp->rope_base_swa = base;
    return MINT_OK;
}

// Widths and KV heads per layer, the per-layer input's width, the layers sharing keys and values.
static mint_status read_layers(mint_model *m, int32_t *scratch, mint_err *err) {
    mint_hparams *hp = &m->hp;
    mint_status st = per_layer(m, MINT_KEY_FEED_FORWARD_LENGTH, 1 << 24, scratch, err);
    if (st) return st;
    hp->n_ff = 0;
    for (int l = 0; l < hp->n_layer; l++) {
        if (scratch[l] < 1)
            return mint_fail(err, MINT_E_FORMAT, "metadata %s.feed_forward_length[%d] is 0",
                             m->arch, l);
        m->layers[l].n_ff = scratch[l];
        if (scratch[l] > hp->n_ff) hp->n_ff = scratch[l]; // buffers take the widest
    }
    st = per_layer(m, MINT_KEY_HEAD_COUNT_KV, hp->n_head, scratch, err);
    if (st != MINT_OK && st != MINT_E_NOT_FOUND) return st;
    if (st == MINT_OK) {
        for (int l = 1; l < hp->n_layer; l++)
            if (scratch[l] != scratch[0])
                return mint_fail(err, MINT_E_UNSUPPORTED,
                                 "metadata %s.attention.head_count_kv: layers 0 and %d have %d "
                                 "and %d KV heads (mint needs one number)",
                                 m->arch, l, scratch[0], scratch[l]);
        hp->n_head_kv = scratch[0];
        if (hp->n_head_kv < 1 || hp->n_head % hp->n_head_kv != 0)
            return mint_fail(err, MINT_E_FORMAT,
                             "head_count %d is not a multiple of head_count_kv %d", hp->n_head,
                             hp->n_head_kv);
    }
    if ((st = required(m, MINT_KEY_PLE_WIDTH, &hp->n_ple, err))) return st;
    char key[128];
    mint_arch_key_name(key, sizeof key, m->arch, MINT_KEY_SHARED_KV_LAYERS);
    uint32_t shared = 0;
    st = mint_file_get_u32(m->file, key, &shared, err);
    if (st != MINT_OK && st != MINT_E_NOT_FOUND) return st;
    const int n_kv = hp->n_layer - (int)shared;
    if (shared > 0 && (shared >= (uint32_t)hp->n_layer || n_kv < 2))
        return mint_fail(err, MINT_E_FORMAT,
                         "metadata %s = %u leaves fewer than 2 of %d layers with keys and values",
                         key, shared, hp->n_layer);
    for (int l = 0; l < hp->n_layer; l++) {
        mint_layer *L = &m->layers[l];
        L->kv_slot = l;
        if (l < n_kv) continue;
        const int src = source_layer(hp, n_kv, l);
        if (hp->swa_layers[src] != hp->swa_layers[l])
            return mint_fail(err, MINT_E_UNSUPPORTED,
                             "layer %d (%s) would read the keys and values of layer %d, a %s "
                             "layer",
                             l, hp->swa_layers[l] ? "window" : "full", src,
                             hp->swa_layers[src] ? "window" : "full");
        L->kv_slot = src;
        L->kv_shared = true;
    }
    hp->n_layer_kv = n_kv;
    return MINT_OK;
}

mint_status mint_model_read_layer_shapes(mint_model *m, mint_err *err) {
    mint_hparams *hp = &m->hp;
    hp->swa_layers = NULL;
    hp->head_dim_swa = hp->head_dim;
    hp->n_rot_swa = hp->n_rot;
    hp->n_ple = 0;
    for (int l = 0; l < hp->n_layer; l++) {
        m->layers[l].head_dim = hp->head_dim;
        m->layers[l].n_ff = hp->n_ff;
        m->layers[l].kv_shared = false;
    }
    if (!m->desc->layer_shapes) return MINT_OK;
    char key[128];
    mint_arch_key_name(key, sizeof key, m->arch, MINT_KEY_EXPERT_COUNT);
    uint64_t experts = 0;
    if (mint_file_get_u64(m->file, key, &experts, NULL) == MINT_OK && experts > 0)
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "Gemma 4's mixture of experts (26B-A4B) is not supported; mint runs its "
                         "dense models (E2B, E4B)");
    int32_t *scratch = malloc((size_t)hp->n_layer * sizeof *scratch);
    if (!scratch) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    mint_status st = read_attention(m, scratch, err);
    if (!st) st = read_layers(m, scratch, err);
    free(scratch);
    if (st) return st;
    for (int l = 0; l < hp->n_layer; l++)
        if (hp->swa_layers[l]) m->layers[l].head_dim = hp->head_dim_swa;
    if (m->desc->attn_unscaled) { // scores are q . k
        hp->attn_scale = 1.0f;
        hp->q_scale = 1.0f;
    }
    return MINT_OK;
}

// Fails naming blk.l.<suffix> when w is missing (want) or present (!want).
static mint_status need(const mint_weight *w, bool want, int l, const char *suffix, mint_err *err) {
    if (!w->data == !want) return MINT_OK;
    return mint_fail(err, MINT_E_FORMAT,
                     want ? "tensor 'blk.%d.%s' is missing"
                          : "tensor 'blk.%d.%s' is not expected "
                            "(embedding_length_per_layer_input is 0)",
                     l, suffix);
}

mint_status mint_model_bind_gemma4(mint_model *m, mint_err *err) {
    const mint_hparams *hp = &m->hp;
    if (!m->desc->layer_shapes) return MINT_OK;
    const bool ple = hp->n_ple > 0;
    mint_status st;
    float *ones = malloc((size_t)hp->head_dim * sizeof *ones);
    if ((st = mint_model_keep(m, ones, err))) return st;
    for (int i = 0; i < hp->head_dim; i++) ones[i] = 1.0f;
    bool full = false;
    for (int l = 0; l < hp->n_layer; l++) {
        mint_layer *L = &m->layers[l];
        full |= !hp->swa_layers[l];
        if ((st = need(&L->ple_gate, ple, l, "inp_gate.weight", err)) ||
            (st = need(&L->ple_proj, ple, l, "proj.weight", err)) ||
            (st = need(&L->ple_norm, ple, l, "post_norm.weight", err)))
            return st;
        L->v_norm = (mint_weight){.name = "v_norm (ones)",
                                  .type = MINT_TYPE_F32,
                                  .n_in = L->head_dim,
                                  .n_out = 1,
                                  .row_bytes = (size_t)L->head_dim * sizeof(float),
                                  .data = ones};
        if (L->kv_shared) continue; // its k and v, when the file has them, are never read
        if ((st = need(&L->wk, true, l, "attn_k.weight", err)) ||
            (st = need(&L->k_norm, true, l, "attn_k_norm.weight", err)))
            return st;
        if (!L->wv.data) L->wv = L->wk; // no v_proj: the keys' projection gives the values
    }
    if (full && !m->rope_freqs.data)
        return mint_fail(err, MINT_E_FORMAT,
                         "tensor 'rope_freqs.weight' is missing (the full "
                         "layers' RoPE needs it)");
    return MINT_OK;
}
