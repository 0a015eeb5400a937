// hf_config.c - config.json -> struct mint_hf_config -> GGUF "<arch>.*" keys (hf_config.h). What
// each class's converter writes is the row's MINT_HF_K_* bits (hf_arch.c); this file only knows
// where each value lives in config.json and which GGUF key it becomes.
#include "formats/hf_config.h"

#include "base/error.h"
#include "formats/json_doc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const CONFIG = "config.json";

// An integer in 1..hi from the first of keys[] present (NULL-terminated). MINT_E_NOT_FOUND when
// none is (or all are null).
static mint_status get_dim_any(json_object *cfg, const char *const *keys, uint32_t hi,
                               uint32_t *out, mint_err *err) {
    for (; *keys; keys++) {
        int64_t v;
        mint_status st = mint_json_get_int(cfg, *keys, 1, hi, CONFIG, &v, err);
        if (st == MINT_E_NOT_FOUND) continue;
        if (st == MINT_OK) *out = (uint32_t)v;
        return st;
    }
    return MINT_E_NOT_FOUND;
}

// A required dimension (or `def` when def > 0).
static mint_status need_dim(json_object *cfg, const char *const *keys, uint32_t hi, uint32_t def,
                            uint32_t *out, mint_err *err) {
    mint_status st = get_dim_any(cfg, keys, hi, out, err);
    if (st == MINT_E_NOT_FOUND && def) {
        *out = def;
        return MINT_OK;
    }
    if (st == MINT_E_NOT_FOUND)
        return mint_fail(err, MINT_E_FORMAT, "%s: \"%s\" is missing", CONFIG, keys[0]);
    return st;
}

// A positive float; *found says whether it was given (else *out = def).
static mint_status get_float(json_object *cfg, const char *key, float def, bool *found, float *out,
                             mint_err *err) {
    double d;
    mint_status st = mint_json_get_num(cfg, key, CONFIG, &d, err);
    if (found) *found = st == MINT_OK;
    if (st == MINT_E_NOT_FOUND) {
        *out = def;
        return MINT_OK;
    }
    if (st != MINT_OK) return st;
    if (!(d > 0) || d > 3.4e38)
        return mint_fail(err, MINT_E_FORMAT, "%s: \"%s\" = %g must be positive", CONFIG, key, d);
    *out = (float)d;
    return MINT_OK;
}

static mint_status need_float(json_object *cfg, const char *key, float *out, mint_err *err) {
    bool found;
    mint_status st = get_float(cfg, key, 0, &found, out, err);
    if (st == MINT_OK && !found)
        return mint_fail(err, MINT_E_FORMAT, "%s: \"%s\" is missing", CONFIG, key);
    return st;
}

static mint_status find_class(json_object *cfg, const mint_hf_arch **out, mint_err *err) {
    json_object *arch = NULL;
    if (!json_object_object_get_ex(cfg, "architectures", &arch) ||
        !json_object_is_type(arch, json_type_array) || json_object_array_length(arch) == 0)
        return mint_fail(err, MINT_E_FORMAT,
                         "%s: \"architectures\" is missing or not a non-empty list", CONFIG);
    // The converter goes by the first entry.
    json_object *a0 = json_object_array_get_idx(arch, 0);
    const char *name = json_object_is_type(a0, json_type_string) ? json_object_get_string(a0) : "";
    *out = mint_hf_arch_by_class(name);
    if (*out) return MINT_OK;
    char list[512];
    mint_hf_arch_list(list, sizeof list);
    if (strcmp(name, "Gemma3ForConditionalGeneration") == 0)
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "%s: architecture 'Gemma3ForConditionalGeneration' (Gemma 3 with its "
                         "vision tower) is not supported; mint reads text-only checkpoints (%s)",
                         CONFIG, list);
    return mint_fail(err, MINT_E_UNSUPPORTED,
                     "%s: architecture '%.64s' is not supported (mint reads %s)", CONFIG,
                     json_object_get_string(a0), list);
}

// rope_scaling.<key> as a list of n positive floats into a new array.
static mint_status factor_list(json_object *rs, const char *key, uint32_t n, float **out,
                               mint_err *err) {
    json_object *l = NULL;
    if (!json_object_object_get_ex(rs, key, &l) || !json_object_is_type(l, json_type_array))
        return mint_fail(err, MINT_E_FORMAT, "%s: rope_scaling.%s is missing or not a list", CONFIG,
                         key);
    if (json_object_array_length(l) != n)
        return mint_fail(err, MINT_E_FORMAT,
                         "%s: rope_scaling.%s has %zu factors, the head size %u needs %u", CONFIG,
                         key, json_object_array_length(l), 2 * n, n);
    *out = malloc((size_t)n * sizeof **out);
    if (!*out) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        json_object *v = json_object_array_get_idx(l, i);
        double d = json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)
                       ? json_object_get_double(v)
                       : -1;
        if (!(d > 0) || d > 3.4e38)
            return mint_fail(err, MINT_E_FORMAT, "%s: rope_scaling.%s[%u] is not a positive number",
                             CONFIG, key, i);
        (*out)[i] = (float)d;
    }
    return MINT_OK;
}

// Phi-3's LongRoPE: the original context, and with factors the two lists and the attention
// factor its converter derives.
static mint_status read_longrope(json_object *cfg, json_object *rs, mint_hf_config *c,
                                 mint_err *err) {
    static const char *const orig[] = {"original_max_position_embeddings", NULL};
    mint_status st = get_dim_any(cfg, orig, UINT32_MAX, &c->n_ctx_orig, err);
    if (st == MINT_E_NOT_FOUND && rs) st = get_dim_any(rs, orig, UINT32_MAX, &c->n_ctx_orig, err);
    if (st == MINT_E_NOT_FOUND)
        return mint_fail(err, MINT_E_FORMAT, "%s: \"original_max_position_embeddings\" is missing",
                         CONFIG);
    if (st != MINT_OK || !rs || !json_object_object_get_ex(rs, "long_factor", NULL)) return st;
    c->n_factors = c->head_dim / 2;
    if (c->n_factors > MINT_HF_MAX_ROPE_FACTORS)
        return mint_fail(err, MINT_E_FORMAT, "%s: head size %u is too large for LongRoPE", CONFIG,
                         c->head_dim);
    st = factor_list(rs, "long_factor", c->n_factors, &c->long_factors, err);
    if (st == MINT_OK) st = factor_list(rs, "short_factor", c->n_factors, &c->short_factors, err);
    double scale = (double)c->n_ctx / c->n_ctx_orig;
    c->attn_factor = scale > 1.0 && c->n_ctx_orig > 1
                         ? (float)sqrt(1.0 + log(scale) / log((double)c->n_ctx_orig))
                         : 1.0f;
    return st;
}

static mint_status read_rope_scaling(json_object *cfg, mint_hf_config *c, mint_err *err) {
    json_object *rs = NULL;
    if (!json_object_object_get_ex(cfg, "rope_scaling", &rs) ||
        json_object_is_type(rs, json_type_null))
        rs = NULL;
    if (rs && !json_object_is_type(rs, json_type_object))
        return mint_fail(err, MINT_E_FORMAT, "%s: \"rope_scaling\" is a %s, expected an object",
                         CONFIG, mint_json_type_name(rs));
    const char *type = "default";
    if (rs) {
        // Older configs say "type", newer ones "rope_type".
        mint_status st = mint_json_get_str(rs, "type", CONFIG, &type, NULL, err);
        if (st == MINT_E_NOT_FOUND)
            st = mint_json_get_str(rs, "rope_type", CONFIG, &type, NULL, err);
        if (st == MINT_E_NOT_FOUND)
            return mint_fail(err, MINT_E_FORMAT, "%s: \"rope_scaling\" has no \"type\"", CONFIG);
        if (st != MINT_OK) return st;
    }
    const uint32_t keys = c->a->keys;
    if (keys & MINT_HF_K_LONGROPE) {
        if (strcmp(type, "default") != 0 && strcmp(type, "longrope") != 0 &&
            strcmp(type, "su") != 0)
            return mint_fail(err, MINT_E_UNSUPPORTED,
                             "%s: rope_scaling type '%.32s' is not supported (only longrope)",
                             CONFIG, type);
        return read_longrope(cfg, rs, c, err);
    }
    if (strcmp(type, "default") == 0) return MINT_OK;
    if (strcmp(type, "linear") != 0 || !(keys & MINT_HF_K_ROPE_LINEAR))
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "%s: rope_scaling type '%.32s' is not supported (%s)", CONFIG, type,
                         keys & MINT_HF_K_ROPE_LINEAR ? "only linear" : "none for this class");
    double factor;
    mint_status st = mint_json_get_num(rs, "factor", CONFIG, &factor, err);
    if (st != MINT_OK) return st;
    if (!(factor > 0) || factor > 1e6)
        return mint_fail(err, MINT_E_FORMAT, "%s: rope_scaling factor %g is outside (0, 1e6]",
                         CONFIG, factor);
    c->rope_factor = (float)factor;
    return MINT_OK;
}

// Gemma's soft-caps and window, Gemma 3's window pattern.
static mint_status read_window(json_object *cfg, mint_hf_config *c, mint_err *err) {
    const uint32_t keys = c->a->keys;
    static const char *const window[] = {"sliding_window", NULL};
    static const char *const pattern[] = {"sliding_window_pattern", NULL};
    mint_status st = MINT_OK;
    if (keys & MINT_HF_K_SOFTCAPS) {
        st = need_float(cfg, "attn_logit_softcapping", &c->attn_softcap, err);
        if (st == MINT_OK) st = need_float(cfg, "final_logit_softcapping", &c->final_softcap, err);
    } else if (keys & MINT_HF_K_FINAL_SOFTCAP) {
        json_object *v = NULL; // null or 0 mean none
        if (json_object_object_get_ex(cfg, "final_logit_softcapping", &v) &&
            !json_object_is_type(v, json_type_null) && json_object_get_double(v) != 0)
            st = get_float(cfg, "final_logit_softcapping", 0, NULL, &c->final_softcap, err);
    }
    if (st != MINT_OK) return st;
    st = get_dim_any(cfg, pattern, 1u << 16, &c->window_pattern, err);
    if (st != MINT_OK && st != MINT_E_NOT_FOUND) return st;
    if (keys & MINT_HF_K_WINDOW) {
        // Gemma 3 with a pattern of 1 has only global layers, and no window key.
        if (c->window_pattern == 1) return MINT_OK;
        st = need_dim(cfg, window, UINT32_MAX, 0, &c->window, err);
        c->has_window = st == MINT_OK;
        return st;
    }
    if (keys & MINT_HF_K_WINDOW_OR_0) {
        // null (Phi-4 and some Phi-3 configs) is the converter's 0 too.
        st = get_dim_any(cfg, window, UINT32_MAX, &c->window, err);
        if (st == MINT_E_NOT_FOUND) st = MINT_OK;
        c->has_window = st == MINT_OK;
        return st;
    }
    return MINT_OK;
}

mint_status mint_hf_read_config(json_object *cfg, mint_hf_config *c, mint_err *err) {
    memset(c, 0, sizeof *c);
    mint_status st = find_class(cfg, &c->a, err);
    if (st != MINT_OK) return st;
    const uint32_t keys = c->a->keys;
    static const char *const embd[] = {"hidden_size", "n_embd", NULL};
    static const char *const layer[] = {"num_hidden_layers", "n_layer", NULL};
    static const char *const head[] = {"num_attention_heads", "n_head", NULL};
    static const char *const kv[] = {"num_key_value_heads", NULL};
    static const char *const ff[] = {"intermediate_size", NULL};
    static const char *const inner[] = {"n_inner", NULL};
    static const char *const ctx[] = {"max_position_embeddings", "n_ctx", "n_positions", NULL};
    static const char *const hd[] = {"head_dim", NULL};
    static const char *const vocab[] = {"vocab_size", NULL};
    st = need_dim(cfg, embd, 1u << 20, 0, &c->n_embd, err);
    if (st == MINT_OK) st = need_dim(cfg, layer, 99999, 0, &c->n_layer, err);
    if (st == MINT_OK) st = need_dim(cfg, head, 1u << 16, 0, &c->n_head, err);
    if (st == MINT_OK) {
        st = get_dim_any(cfg, kv, 1u << 16, &c->n_head_kv, err);
        c->has_kv = st == MINT_OK;
        if (st == MINT_E_NOT_FOUND) {
            c->n_head_kv = c->n_head;
            st = MINT_OK;
        }
    }
    if (st == MINT_OK && (keys & MINT_HF_K_FF_4X)) {
        // GPT-2's n_inner is null for the usual 4 x n_embd.
        st = get_dim_any(cfg, inner, 1u << 24, &c->n_ff, err);
        if (st == MINT_E_NOT_FOUND) {
            c->n_ff = 4 * c->n_embd;
            st = MINT_OK;
        }
    } else if (st == MINT_OK) {
        st = need_dim(cfg, ff, 1u << 24, 0, &c->n_ff, err);
    }
    if (st == MINT_OK) st = need_dim(cfg, ctx, UINT32_MAX, c->a->default_ctx, &c->n_ctx, err);
    if (st == MINT_OK) {
        st = get_dim_any(cfg, hd, 1u << 16, &c->head_dim, err);
        c->has_head_dim = st == MINT_OK;
        if (st == MINT_E_NOT_FOUND) {
            st = MINT_OK;
            if (c->n_embd % c->n_head != 0)
                return mint_fail(err, MINT_E_FORMAT,
                                 "%s: hidden_size %u is not a multiple of num_attention_heads %u",
                                 CONFIG, c->n_embd, c->n_head);
            c->head_dim = c->n_embd / c->n_head;
        }
    }
    if (st == MINT_OK) {
        st = get_dim_any(cfg, vocab, INT32_MAX, &c->n_vocab, err);
        c->has_vocab = st == MINT_OK;
        if (st == MINT_E_NOT_FOUND) st = MINT_OK;
    }
    if (st == MINT_OK)
        st = keys & MINT_HF_K_LAYER_NORM
                 ? get_float(cfg, "layer_norm_epsilon", 1e-5f, NULL, &c->eps, err)
                 : get_float(cfg, "rms_norm_eps", 1e-6f, NULL, &c->eps, err);
    if (st == MINT_OK)
        st = get_float(cfg, "rope_theta", c->a->default_theta, &c->has_theta, &c->theta, err);
    if (st == MINT_OK)
        st = get_float(cfg, "rope_local_base_freq", 0, &c->has_theta_swa, &c->theta_swa, err);
    if (st == MINT_OK && !(keys & MINT_HF_K_LAYER_NORM)) st = read_rope_scaling(cfg, c, err);
    if (st == MINT_OK) st = read_window(cfg, c, err);
    if (st != MINT_OK) return st;
    if (c->n_head % c->n_head_kv != 0)
        return mint_fail(err, MINT_E_FORMAT,
                         "%s: num_attention_heads %u is not a multiple of num_key_value_heads %u",
                         CONFIG, c->n_head, c->n_head_kv);
    if (c->head_dim % 2 != 0 && !(keys & MINT_HF_K_LAYER_NORM))
        return mint_fail(err, MINT_E_FORMAT, "%s: head size %u is odd; RoPE needs pairs", CONFIG,
                         c->head_dim);
    return MINT_OK;
}

void mint_hf_config_free(mint_hf_config *c) {
    free(c->long_factors);
    free(c->short_factors);
    c->long_factors = c->short_factors = NULL;
}

// ---------------------------------------------------------------------------------------------
// Keys

typedef struct key_writer {
    mint_file *f;     // destination
    const char *arch; // key prefix
    mint_status st;   // first failure
    mint_err *err;    // its message
} key_writer;

static void put_u32(key_writer *w, const char *suffix, uint32_t v) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", w->arch, suffix);
    if (w->st == MINT_OK)
        w->st = mint_file_add_kv(w->f, key, MINT_VAL_U32, MINT_VAL_U32, 1, &v, w->err);
}

static void put_f32(key_writer *w, const char *suffix, float v) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", w->arch, suffix);
    if (w->st == MINT_OK)
        w->st = mint_file_add_kv(w->f, key, MINT_VAL_F32, MINT_VAL_F32, 1, &v, w->err);
}

static void put_str(key_writer *w, const char *key, const char *s) {
    if (w->st == MINT_OK)
        w->st = mint_file_add_kv(w->f, key, MINT_VAL_STRING, MINT_VAL_STRING, strlen(s), s, w->err);
}

mint_status mint_hf_add_arch_keys(mint_file *f, const char *name, const mint_hf_config *c,
                                  mint_err *err) {
    const uint32_t keys = c->a->keys;
    key_writer w = {f, c->a->arch, MINT_OK, err};
    put_str(&w, "general.architecture", c->a->arch);
    put_str(&w, "general.name", name);
    put_u32(&w, "context_length", c->n_ctx);
    put_u32(&w, "embedding_length", c->n_embd);
    put_u32(&w, "feed_forward_length", c->n_ff);
    put_u32(&w, "block_count", c->n_layer);
    put_u32(&w, "attention.head_count", c->n_head);
    if (keys & MINT_HF_K_LAYER_NORM) { // GPT-2: no grouped heads, no RoPE
        put_f32(&w, "attention.layer_norm_epsilon", c->eps);
        return w.st;
    }
    if (c->has_kv || (keys & MINT_HF_K_KV_ALWAYS))
        put_u32(&w, "attention.head_count_kv", c->n_head_kv);
    put_f32(&w, "attention.layer_norm_rms_epsilon", c->eps);
    if (!(keys & MINT_HF_K_NO_FREQ_BASE) && (c->has_theta || (keys & MINT_HF_K_FREQ_BASE_DEFAULT)))
        put_f32(&w, "rope.freq_base", c->theta);
    if (c->has_theta_swa) put_f32(&w, "rope.freq_base_swa", c->theta_swa);
    if (keys & MINT_HF_K_ROPE_DIMS) put_u32(&w, "rope.dimension_count", c->head_dim);
    if (c->has_head_dim || (keys & MINT_HF_K_HEAD_DIM_ALWAYS)) {
        put_u32(&w, "attention.key_length", c->head_dim);
        put_u32(&w, "attention.value_length", c->head_dim);
    }
    if (c->rope_factor > 0) {
        char key[128];
        snprintf(key, sizeof key, "%s.rope.scaling.type", c->a->arch);
        put_str(&w, key, "linear");
        put_f32(&w, "rope.scaling.factor", c->rope_factor);
    }
    if (keys & MINT_HF_K_SOFTCAPS) put_f32(&w, "attn_logit_softcapping", c->attn_softcap);
    if (c->final_softcap > 0) put_f32(&w, "final_logit_softcapping", c->final_softcap);
    if (c->has_window) put_u32(&w, "attention.sliding_window", c->window);
    // Not a key the converter writes (llama.cpp fixes Gemma's period per architecture): mint
    // reads it, so a checkpoint whose config gives another period keeps it.
    if (c->has_window && c->window_pattern && !(keys & MINT_HF_K_WINDOW_OR_0))
        put_u32(&w, "attention.sliding_window_pattern", c->window_pattern);
    if (keys & MINT_HF_K_LONGROPE) {
        put_u32(&w, "rope.scaling.original_context_length", c->n_ctx_orig);
        if (c->n_factors) put_f32(&w, "rope.scaling.attn_factor", c->attn_factor);
    }
    if (keys & MINT_HF_K_VOCAB_SIZE) put_u32(&w, "vocab_size", c->n_vocab);
    return w.st;
}
