// arch_keys.c - the metadata keys of an architecture's files (runtime/engine/arch.h): every
// "<arch>.<suffix>" key the model binder reads is a row of `keys` below, named there once, and
// whether a row of the architecture table requires it, reads it when present, or knows it and
// leaves it unread follows from that row's block kinds (mint_arch_key_need), as its tensors do
// (mint_arch_layer_tensors). The binder (model.c, hybrid.c, gemma4.c) builds key names only
// through mint_arch_key_name; mint-run --dump-graph prints the list; tests/test_arch_keys.c
// holds every synthetic file's keys and the binder's behaviour to it.
#include "runtime/engine/arch.h"

#include <stdio.h>
#include <string.h>

typedef struct key_decl {
    const char *suffix; // after "<arch>."
    const char *form;   // the value's GGUF form, as text
    const char *absent; // what the binder takes when an optional key is absent
    const char *what;   // what the binder makes of it
} key_decl;

static const key_decl keys[MINT_KEY_COUNT] = {
    [MINT_KEY_EMBEDDING_LENGTH] = {"embedding_length", "uint", NULL, "n_embd, the residual width"},
    [MINT_KEY_BLOCK_COUNT] = {"block_count", "uint", NULL, "layers"},
    [MINT_KEY_CONTEXT_LENGTH] = {"context_length", "uint", "2048", "the training context"},
    [MINT_KEY_FEED_FORWARD_LENGTH] = {"feed_forward_length", "uint, or uint[n_layer]", NULL,
                                      "n_ff, the feed-forward width (per layer: Gemma 4)"},
    [MINT_KEY_HEAD_COUNT] = {"attention.head_count", "uint", NULL, "query heads"},
    [MINT_KEY_HEAD_COUNT_KV] = {"attention.head_count_kv", "uint, or uint[n_layer]", "head_count",
                                "key/value heads (0 in a layer: a recurrent one)"},
    [MINT_KEY_KEY_LENGTH] = {"attention.key_length", "uint", "embedding_length / head_count",
                             "head size"},
    [MINT_KEY_VALUE_LENGTH] = {"attention.value_length", "uint", "key_length",
                               "a value head's size (must equal key_length)"},
    [MINT_KEY_ROPE_DIMS] = {"rope.dimension_count", "uint", "key_length",
                            "dimensions RoPE turns (fewer than a head: NEOX pairs only)"},
    [MINT_KEY_ROPE_BASE] = {"rope.freq_base", "float", "10000", "RoPE's base"},
    [MINT_KEY_ROPE_SCALING_TYPE] = {"rope.scaling.type", "string", "none",
                                    "none, linear or yarn (others refused)"},
    [MINT_KEY_ROPE_SCALING_FACTOR] = {"rope.scaling.factor", "float", "rope.scale_linear, else 1",
                                      "positions divided by it (linear), YaRN's factor"},
    [MINT_KEY_ROPE_SCALE_LINEAR] = {"rope.scale_linear", "float", "1", "the factor's older name"},
    [MINT_KEY_ROPE_ATTN_FACTOR] = {"rope.scaling.attn_factor", "float", "1",
                                   "RoPE's cos and sin times it"},
    [MINT_KEY_ROPE_ORIG_CTX] = {"rope.scaling.original_context_length", "uint", "context_length",
                                "beyond it LongRoPE's long factors; YaRN's range"},
    [MINT_KEY_RMS_EPS] = {"attention.layer_norm_rms_epsilon", "float", NULL, "RMSNorm's epsilon"},
    [MINT_KEY_LN_EPS] = {"attention.layer_norm_epsilon", "float", NULL, "LayerNorm's epsilon"},
    [MINT_KEY_SWA_WINDOW] = {"attention.sliding_window", "uint", "the row's window",
                             "keys a window layer sees (a hybrid refuses one above 0)"},
    [MINT_KEY_SWA_PATTERN] = {"attention.sliding_window_pattern", "uint, or bool[n_layer]",
                              "the row's period", "which layers are windowed"},
    [MINT_KEY_ROPE_BASE_SWA] = {"rope.freq_base_swa", "float",
                                "the row's base, else rope.freq_base", "window layers' RoPE base"},
    [MINT_KEY_ATTN_SOFTCAP] = {"attn_logit_softcapping", "float", "the row's cap",
                               "scores' soft-cap"},
    [MINT_KEY_FINAL_SOFTCAP] = {"final_logit_softcapping", "float", "the row's cap (or none)",
                                "logits' soft-cap"},
    [MINT_KEY_EXPERT_COUNT] = {"expert_count", "uint", "0", "experts"},
    [MINT_KEY_EXPERT_USED] = {"expert_used_count", "uint", NULL, "experts each token takes"},
    [MINT_KEY_EXPERT_FF] = {"expert_feed_forward_length", "uint",
                            "feed_forward_length / expert_used_count", "an expert's width"},
    [MINT_KEY_EXPERT_SHARED_FF] = {"expert_shared_feed_forward_length", "uint",
                                   "feed_forward_length", "the shared expert's width"},
    [MINT_KEY_SHORTCONV_L] = {"shortconv.l_cache", "uint", NULL, "a short convolution's taps"},
    [MINT_KEY_SSM_CONV] = {"ssm.conv_kernel", "uint", NULL, "a delta net's convolution taps"},
    [MINT_KEY_SSM_STATE] = {"ssm.state_size", "uint", NULL, "its head size S"},
    [MINT_KEY_SSM_GROUPS] = {"ssm.group_count", "uint", NULL, "its key heads H_k"},
    [MINT_KEY_SSM_DT_RANK] = {"ssm.time_step_rank", "uint", NULL, "its value heads H_v"},
    [MINT_KEY_SSM_INNER] = {"ssm.inner_size", "uint", NULL, "H_v S (checked)"},
    [MINT_KEY_FULL_ATTN_INTERVAL] = {"full_attention_interval", "uint", "4",
                                     "every this many layers, one with attention"},
    [MINT_KEY_ROPE_SECTIONS] = {"rope.dimension_sections", "uint[4]", NULL,
                                "M-RoPE's sections (a text position turns them alike)"},
    [MINT_KEY_KEY_LENGTH_SWA] = {"attention.key_length_swa", "uint", NULL,
                                 "window layers' head size"},
    [MINT_KEY_VALUE_LENGTH_SWA] = {"attention.value_length_swa", "uint", NULL,
                                   "window layers' value size (must equal theirs)"},
    [MINT_KEY_ROPE_DIMS_SWA] = {"rope.dimension_count_swa", "uint", "rope.dimension_count",
                                "window layers' RoPE dimensions (must equal their head size)"},
    [MINT_KEY_SHARED_KV_LAYERS] = {"attention.shared_kv_layers", "uint", "0",
                                   "the last layers reading earlier layers' keys and values"},
    [MINT_KEY_PLE_WIDTH] = {"embedding_length_per_layer_input", "uint", NULL,
                            "a layer's own input width"},
};

const char *mint_arch_key_suffix(mint_key k) {
    return (unsigned)k < MINT_KEY_COUNT ? keys[k].suffix : NULL;
}

void mint_arch_key_name(char *buf, size_t cap, const char *arch, mint_key k) {
    snprintf(buf, cap, "%s.%s", arch, mint_arch_key_suffix(k));
}

mint_key mint_arch_key_find(const char *suffix) {
    for (int k = 0; suffix && k < MINT_KEY_COUNT; k++)
        if (strcmp(keys[k].suffix, suffix) == 0) return (mint_key)k;
    return MINT_KEY_COUNT;
}

// A key the row reads when present, one it requires, or one that does not concern it.
static mint_key_need if_(bool cond, mint_key_need need) {
    return cond ? need : MINT_KEY_ABSENT;
}

mint_key_need mint_arch_key_need(const mint_arch *a, mint_key k) {
    const bool moe = a->ffn == MINT_FFN_MOE, hybrid = a->recurrent != MINT_MIXER_ATTENTION;
    const bool window = a->swa_period > 0 || a->layer_shapes;
    switch (k) {
    case MINT_KEY_EMBEDDING_LENGTH:
    case MINT_KEY_BLOCK_COUNT:
    case MINT_KEY_HEAD_COUNT:
    case MINT_KEY_FEED_FORWARD_LENGTH:
        return MINT_KEY_REQUIRED;
    case MINT_KEY_HEAD_COUNT_KV: // LFM2's array says which layers are recurrent
        return a->recurrent_no_kv ? MINT_KEY_REQUIRED : MINT_KEY_OPTIONAL;
    case MINT_KEY_CONTEXT_LENGTH:
    case MINT_KEY_KEY_LENGTH:
    case MINT_KEY_VALUE_LENGTH:
    case MINT_KEY_ROPE_DIMS:
    case MINT_KEY_ROPE_BASE:
    case MINT_KEY_ROPE_SCALING_TYPE:
    case MINT_KEY_ROPE_SCALING_FACTOR:
    case MINT_KEY_ROPE_SCALE_LINEAR:
    case MINT_KEY_ROPE_ATTN_FACTOR:
    case MINT_KEY_ROPE_ORIG_CTX:
        return MINT_KEY_OPTIONAL;
    case MINT_KEY_RMS_EPS:
        return if_(a->norm == MINT_NORM_RMS, MINT_KEY_REQUIRED);
    case MINT_KEY_LN_EPS:
        return if_(a->norm == MINT_NORM_LAYER, MINT_KEY_REQUIRED);
    case MINT_KEY_SWA_WINDOW:
        // Gemma 4 needs it; a hybrid refuses one above 0; a row without windows leaves it unread
        // as llama.cpp does (Phi-3's files carry one).
        return a->layer_shapes    ? MINT_KEY_REQUIRED
               : window || hybrid ? MINT_KEY_OPTIONAL
                                  : MINT_KEY_IGNORED;
    case MINT_KEY_SWA_PATTERN:
        return a->layer_shapes ? MINT_KEY_REQUIRED : if_(window, MINT_KEY_OPTIONAL);
    case MINT_KEY_ROPE_BASE_SWA:
        return if_(window, MINT_KEY_OPTIONAL);
    case MINT_KEY_ATTN_SOFTCAP:
        return if_(a->attn_softcap != 0.0f, MINT_KEY_OPTIONAL);
    case MINT_KEY_FINAL_SOFTCAP:
        return if_(a->final_softcap_key, MINT_KEY_OPTIONAL);
    case MINT_KEY_EXPERT_COUNT:
        // A mixture needs it; above 0 it picks a dense row's experts' variant (llama: Mixtral)
        // or is refused (Gemma 4's 26B-A4B).
        return moe                                                         ? MINT_KEY_REQUIRED
               : mint_arch_for_file(a->name, true) != a || a->layer_shapes ? MINT_KEY_OPTIONAL
                                                                           : MINT_KEY_ABSENT;
    case MINT_KEY_EXPERT_USED:
        return if_(moe, MINT_KEY_REQUIRED);
    case MINT_KEY_EXPERT_FF: // llama's experts are feed_forward_length wide
        return if_(moe, a->moe_ff_is_ff ? MINT_KEY_IGNORED : MINT_KEY_OPTIONAL);
    case MINT_KEY_EXPERT_SHARED_FF:
        return if_(a->moe_shared_expert, MINT_KEY_OPTIONAL);
    case MINT_KEY_SHORTCONV_L:
        return if_(a->recurrent == MINT_MIXER_SHORTCONV, MINT_KEY_REQUIRED);
    case MINT_KEY_SSM_CONV:
    case MINT_KEY_SSM_STATE:
    case MINT_KEY_SSM_GROUPS:
    case MINT_KEY_SSM_DT_RANK:
    case MINT_KEY_SSM_INNER:
        return if_(a->recurrent == MINT_MIXER_DELTA_NET, MINT_KEY_REQUIRED);
    case MINT_KEY_FULL_ATTN_INTERVAL:
        return if_(a->recurrent_interval, MINT_KEY_OPTIONAL);
    case MINT_KEY_ROPE_SECTIONS:
        return if_(a->recurrent == MINT_MIXER_DELTA_NET, MINT_KEY_IGNORED);
    case MINT_KEY_KEY_LENGTH_SWA:
    case MINT_KEY_VALUE_LENGTH_SWA:
    case MINT_KEY_PLE_WIDTH:
        return if_(a->layer_shapes, MINT_KEY_REQUIRED);
    case MINT_KEY_ROPE_DIMS_SWA:
    case MINT_KEY_SHARED_KV_LAYERS:
        return if_(a->layer_shapes, MINT_KEY_OPTIONAL);
    case MINT_KEY_COUNT:
        break;
    }
    return MINT_KEY_ABSENT;
}

void mint_arch_describe_keys(const mint_arch *a, char *buf, size_t cap) {
    static const char *const need[] = {[MINT_KEY_ABSENT] = NULL,
                                       [MINT_KEY_IGNORED] = "known, not read",
                                       [MINT_KEY_OPTIONAL] = "optional",
                                       [MINT_KEY_REQUIRED] = "required"};
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < MINT_KEY_COUNT && len < cap; k++) {
        const mint_key_need n = mint_arch_key_need(a, (mint_key)k);
        if (n == MINT_KEY_ABSENT) continue;
        const key_decl *d = &keys[k];
        int w =
            snprintf(buf + len, cap - len, "  %s.%s (%s, %s", a->name, d->suffix, d->form, need[n]);
        if (w > 0) len += (size_t)w;
        if (len < cap && n == MINT_KEY_OPTIONAL && d->absent)
            if ((w = snprintf(buf + len, cap - len, "; absent: %s", d->absent)) > 0)
                len += (size_t)w;
        if (len < cap && (w = snprintf(buf + len, cap - len, "): %s\n", d->what)) > 0)
            len += (size_t)w;
    }
}
