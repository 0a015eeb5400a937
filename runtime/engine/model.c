// model.c - opening a model: its architecture's row (runtime/engine/arch.c), hyper-parameters from
// metadata, weights bound by name with their expected shapes, the vocabulary, and the public
// mint_model_* / mint_token_* functions.
#include "runtime/engine/model.h"

#include "base/error.h"
#include "quant/kernels.h"
#include "quant/types.h"
#include "runtime/text/token_trie.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

// ---------------------------------------------------------------------------------------------
// Hyper-parameters (docs/formats.md 4.2)

// Keys are named by runtime/engine/arch_keys.c's table (mint_key), never spelled here.

// Reads "<arch>.<key>" as a positive int32; MINT_E_NOT_FOUND passes through when optional.
static mint_status get_dim(const mint_file *f, const char *arch, mint_key k, int32_t *out,
                           mint_err *err) {
    char key[128];
    mint_arch_key_name(key, sizeof key, arch, k);
    uint64_t v;
    mint_status st = mint_file_get_u64(f, key, &v, err);
    if (st != MINT_OK) return st;
    if (v < 1 || v > (1u << 24))
        return mint_fail(err, MINT_E_FORMAT, "metadata %s = %" PRIu64 " is outside 1..%u", key, v,
                         1u << 24);
    *out = (int32_t)v;
    return MINT_OK;
}

static mint_status get_float(const mint_file *f, const char *arch, mint_key k, float *out,
                             mint_err *err) {
    char key[128];
    mint_arch_key_name(key, sizeof key, arch, k);
    mint_status st = mint_file_get_f32(f, key, out, err);
    if (st != MINT_OK) return st;
    if (!isfinite(*out))
        return mint_fail(err, MINT_E_FORMAT, "metadata %s = %g is not finite", key, *out);
    return MINT_OK;
}

// A positive finite "<arch>.<key>" into *out, which keeps its value when the key is absent.
static mint_status get_positive(const mint_file *f, const char *arch, mint_key k, float *out,
                                mint_err *err) {
    float v;
    mint_status st = get_float(f, arch, k, &v, err);
    if (st == MINT_E_NOT_FOUND) return MINT_OK;
    if (st) return st;
    if (!(v > 0))
        return mint_fail(err, MINT_E_FORMAT, "metadata %s.%s = %g must be > 0", arch,
                         mint_arch_key_suffix(k), v);
    *out = v;
    return MINT_OK;
}

// A mixture of experts' numbers (llama.cpp's keys): expert_count and expert_used_count required,
// expert_feed_forward_length defaulting to n_ff / n_expert_used as llama.cpp's loader does (a
// llama file's experts are n_ff wide). A dense row ignores them, as llama.cpp does.
enum { MAX_EXPERTS = 512 }; // llama.cpp's LLAMA_MAX_EXPERTS: its files never have more

static mint_status read_moe_hparams(mint_model *m, mint_err *err) {
    const char *a = m->arch;
    mint_hparams *hp = &m->hp;
    hp->n_expert = hp->n_expert_used = hp->n_ff_exp = hp->n_ff_shexp = 0;
    if (m->desc->ffn != MINT_FFN_MOE) return MINT_OK;
    mint_status st;
    if ((st = get_dim(m->file, a, MINT_KEY_EXPERT_COUNT, &hp->n_expert, err)) ||
        (st = get_dim(m->file, a, MINT_KEY_EXPERT_USED, &hp->n_expert_used, err)))
        return st == MINT_E_NOT_FOUND
                   ? mint_fail(err, MINT_E_FORMAT,
                               "metadata %s.expert_count and %s.expert_used_count are required "
                               "for a mixture of experts",
                               a, a)
                   : st;
    if (hp->n_expert > MAX_EXPERTS)
        return mint_fail(err, MINT_E_UNSUPPORTED, "metadata %s.expert_count = %d is more than %d",
                         a, hp->n_expert, MAX_EXPERTS);
    if (hp->n_expert_used > hp->n_expert)
        return mint_fail(err, MINT_E_FORMAT,
                         "metadata %s.expert_used_count = %d is more than expert_count %d", a,
                         hp->n_expert_used, hp->n_expert);
    hp->n_ff_exp = hp->n_ff / hp->n_expert_used;
    if (m->desc->moe_ff_is_ff) { // llama's experts: feed_forward_length wide
        hp->n_ff_exp = hp->n_ff;
        return MINT_OK;
    }
    st = get_dim(m->file, a, MINT_KEY_EXPERT_FF, &hp->n_ff_exp, err);
    if (st != MINT_OK && st != MINT_E_NOT_FOUND) return st;
    if (m->desc->moe_shared_expert) { // its width, as llama.cpp defaults it: n_ff
        hp->n_ff_shexp = hp->n_ff;
        st = get_dim(m->file, a, MINT_KEY_EXPERT_SHARED_FF, &hp->n_ff_shexp, err);
        if (st != MINT_OK && st != MINT_E_NOT_FOUND) return st;
    }
    if (hp->n_ff_exp < 1)
        return mint_fail(err, MINT_E_FORMAT, "an expert's feed-forward width is 0");
    return MINT_OK;
}

// What the Gemma rows add: the embedding's scale, the soft-caps, the window and its layers'
// RoPE, from the file's keys or the row's defaults (as llama.cpp's loader has them).
static mint_status read_gemma_hparams(mint_model *m, mint_err *err) {
    const mint_arch *d = m->desc;
    const mint_file *f = m->file;
    const char *a = m->arch;
    mint_hparams *hp = &m->hp;
    mint_status st;
    hp->embd_scale = d->embd_scale ? sqrtf((float)hp->n_embd) : 1.0f;
    hp->attn_softcap = d->attn_softcap;
    hp->final_softcap = d->final_softcap;
    if (d->attn_softcap != 0.0f &&
        (st = get_positive(f, a, MINT_KEY_ATTN_SOFTCAP, &hp->attn_softcap, err)))
        return st;
    // Gemma 2 and 3 read the logits' cap, Gemma 3 without a default.
    if (d->final_softcap_key &&
        (st = get_positive(f, a, MINT_KEY_FINAL_SOFTCAP, &hp->final_softcap, err)))
        return st;
    hp->rope_base_swa = hp->rope_base;
    hp->rope_freq_scale_swa = hp->rope_freq_scale;
    if (d->rope_base_swa != 0.0f) { // Gemma 3: the window layers' own base, and no scaling
        hp->rope_base_swa = d->rope_base_swa;
        hp->rope_freq_scale_swa = 1.0f;
    }
    hp->swa_window = 0;
    if (d->swa_period == 0) return MINT_OK;
    hp->swa_window = d->swa_window_default;
    st = get_dim(f, a, MINT_KEY_SWA_WINDOW, &hp->swa_window, err);
    if (st != MINT_OK && st != MINT_E_NOT_FOUND) return st;
    if (hp->swa_window == 0) return MINT_OK; // Gemma 3 without a window: every layer global
    if (hp->swa_window > hp->n_ctx_train)
        return mint_fail(err, MINT_E_FORMAT,
                         "metadata %s.attention.sliding_window = %d is larger than the context "
                         "length %d",
                         a, hp->swa_window, hp->n_ctx_train);
    hp->swa_period = d->swa_period;
    st = get_dim(f, a, MINT_KEY_SWA_PATTERN, &hp->swa_period, err);
    if (st != MINT_OK && st != MINT_E_NOT_FOUND)
        return st == MINT_E_TYPE ? mint_fail(err, MINT_E_UNSUPPORTED,
                                             "metadata %s.attention.sliding_window_pattern is "
                                             "not one number (mint reads a period)",
                                             a)
                                 : st;
    if ((st = get_positive(f, a, MINT_KEY_ROPE_BASE_SWA, &hp->rope_base_swa, err))) return st;
    return MINT_OK;
}

// YaRN (rope.scaling.type yarn: gpt-oss): the extrapolation mix is 1, and the factor of cos and
// sin is llama.cpp's attention factor: get_mscale(s) = 1 + 0.1 ln s (s > 1), times
// 1 / (1 + 0.1 ln s) (which ops/rope.c multiplies back, as ggml's rope does), times
// rope.scaling.attn_factor; each step rounded to f32 as there. llama.cpp reads the yarn_* keys
// (log multiplier, betas) only for other architectures: so does mint, by not reading them.
// Without YaRN, nothing changes.
static mint_status read_yarn(mint_model *m, bool yarn, mint_err *err) {
    mint_hparams *hp = &m->hp;
    hp->rope_ext_factor = 0.0f;
    if (!yarn) return MINT_OK;
    if (!(hp->rope_freq_scale < 1.0f))
        return mint_fail(err, MINT_E_FORMAT, "rope scaling type yarn needs a factor above 1");
    const float factor = 1.0f / hp->rope_freq_scale;
    float attn = 0.1f * logf(factor) + 1.0f; // get_mscale(factor, 1)
    attn *= 1.0f / (1.0f + 0.1f * logf(factor));
    hp->rope_mscale *= attn; // rope.scaling.attn_factor (1 when absent) times the above
    hp->rope_ext_factor = 1.0f;
    return MINT_OK;
}

static mint_status read_hparams(mint_model *m, mint_err *err) {
    const mint_file *f = m->file;
    const char *a = m->arch;
    mint_hparams *hp = &m->hp;
    mint_status st;
    if ((st = get_dim(f, a, MINT_KEY_EMBEDDING_LENGTH, &hp->n_embd, err)) ||
        (st = get_dim(f, a, MINT_KEY_BLOCK_COUNT, &hp->n_layer, err)) ||
        (st = get_dim(f, a, MINT_KEY_HEAD_COUNT, &hp->n_head, err)))
        return st;
    // (Gemma 4's may be an array: runtime/engine/gemma4.c reads it per layer, as head_count_kv)
    const bool per_layer = m->desc->layer_shapes;
    st = get_dim(f, a, MINT_KEY_FEED_FORWARD_LENGTH, &hp->n_ff, err);
    if (st && !(st == MINT_E_TYPE && per_layer)) return st;
    // Every layer has tensors of its own (at least its norm and projections), so a block count
    // above the file's tensor count is a lie; refusing it here keeps a hostile header from
    // sizing the per-layer table (fuzz_gguf found a 4 GiB calloc).
    if ((uint64_t)hp->n_layer > f->n_tensors)
        return mint_fail(err, MINT_E_FORMAT,
                         "metadata %s.block_count = %d but the file has only %llu tensors", a,
                         hp->n_layer, (unsigned long long)f->n_tensors);
    st = get_dim(f, a, MINT_KEY_CONTEXT_LENGTH, &hp->n_ctx_train, err);
    if (st == MINT_E_NOT_FOUND)
        hp->n_ctx_train = 2048;
    else if (st)
        return st;
    // A hybrid's layers and their mixers (runtime/engine/hybrid.c), which may give head_count_kv
    // per layer.
    m->layers = calloc((size_t)hp->n_layer, sizeof *m->layers);
    if (!m->layers) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    hp->n_head_kv = hp->n_head;
    if (m->desc->recurrent_no_kv) {
        if ((st = mint_model_read_mixers(m, err))) return st;
    } else {
        st = get_dim(f, a, MINT_KEY_HEAD_COUNT_KV, &hp->n_head_kv, err);
        if (st != MINT_OK && st != MINT_E_NOT_FOUND && !(st == MINT_E_TYPE && per_layer)) return st;
        if ((st = mint_model_read_mixers(m, err))) return st;
    }
    if (hp->n_head % hp->n_head_kv != 0)
        return mint_fail(err, MINT_E_FORMAT, "head_count %d is not a multiple of head_count_kv %d",
                         hp->n_head, hp->n_head_kv);
    // The head size is attention.key_length when given (Qwen3: 128 with 1024 / 16 = 64), else
    // n_embd / n_head; values have the same size.
    st = get_dim(f, a, MINT_KEY_KEY_LENGTH, &hp->head_dim, err);
    if (st == MINT_E_NOT_FOUND) {
        if (hp->n_embd % hp->n_head != 0)
            return mint_fail(err, MINT_E_FORMAT,
                             "embedding_length %d is not a multiple of head_count %d", hp->n_embd,
                             hp->n_head);
        hp->head_dim = hp->n_embd / hp->n_head;
    } else if (st)
        return st;
    int32_t v_len = hp->head_dim;
    st = get_dim(f, a, MINT_KEY_VALUE_LENGTH, &v_len, err);
    if (st != MINT_OK && st != MINT_E_NOT_FOUND) return st;
    if (v_len != hp->head_dim)
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "attention.value_length %d differs from key_length %d (mint needs one "
                         "head size)",
                         v_len, hp->head_dim);
    if (hp->head_dim > 512)
        return mint_fail(err, MINT_E_UNSUPPORTED, "head size %d is larger than mint's limit of 512",
                         hp->head_dim);
    st = get_dim(f, a, MINT_KEY_ROPE_DIMS, &hp->n_rot, err);
    if (st == MINT_E_NOT_FOUND)
        hp->n_rot = hp->head_dim;
    else if (st)
        return st;
    // RoPE over all of a head, or (NEOX pairs: Qwen3.5) over its first n_rot dimensions.
    const bool partial_ok = m->desc->pos == MINT_POS_ROPE_NEOX && hp->n_rot < hp->head_dim;
    if ((hp->n_rot != hp->head_dim && !partial_ok) || hp->n_rot % 2 != 0)
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "rope.dimension_count %d must equal the head size %d", hp->n_rot,
                         hp->head_dim);
    // The epsilon is required (llama.cpp reads it without a default); LayerNorm has its own key.
    const mint_key eps_key = m->desc->norm == MINT_NORM_LAYER ? MINT_KEY_LN_EPS : MINT_KEY_RMS_EPS;
    if ((st = get_float(f, a, eps_key, &hp->rms_eps, err))) return st;
    if (!(hp->rms_eps > 0 && hp->rms_eps < 1))
        return mint_fail(err, MINT_E_FORMAT, "%s %g is outside (0, 1)",
                         mint_arch_key_suffix(eps_key) + 10, hp->rms_eps);
    st = get_float(f, a, MINT_KEY_ROPE_BASE, &hp->rope_base, err);
    if (st == MINT_E_NOT_FOUND)
        hp->rope_base = 10000.0f;
    else if (st)
        return st;
    if (!(hp->rope_base > 1))
        return mint_fail(err, MINT_E_FORMAT, "rope.freq_base %g must be > 1", hp->rope_base);
    // Linear rope scaling: positions are multiplied by 1/factor. Other scaling types change the
    // frequencies in ways mint does not implement; refuse them instead of computing nonsense.
    hp->rope_freq_scale = 1.0f;
    char key[128];
    mint_arch_key_name(key, sizeof key, a, MINT_KEY_ROPE_SCALING_TYPE);
    const char *stype = NULL;
    uint64_t slen = 0;
    bool has_type = mint_file_get_str(f, key, &stype, &slen, NULL) == MINT_OK;
    const bool yarn = has_type && strcmp(stype, "yarn") == 0;
    if (has_type && strcmp(stype, "none") != 0 && strcmp(stype, "linear") != 0 && !yarn)
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "rope scaling type '%.64s' is not supported "
                         "(mint does none, linear and yarn)",
                         stype);
    float factor = 0;
    st = get_float(f, a, MINT_KEY_ROPE_SCALING_FACTOR, &factor, err);
    if (st == MINT_E_NOT_FOUND) st = get_float(f, a, MINT_KEY_ROPE_SCALE_LINEAR, &factor, err);
    if (st != MINT_OK && st != MINT_E_NOT_FOUND) return st;
    if (st == MINT_OK && !(has_type && strcmp(stype, "none") == 0) && factor != 0) {
        if (!(factor > 0))
            return mint_fail(err, MINT_E_FORMAT, "rope scaling factor %g must be > 0", factor);
        hp->rope_freq_scale = 1.0f / factor;
    }
    // RoPE's cos and sin are scaled by rope.scaling.attn_factor (llama.cpp reads it for every
    // architecture; Phi-3's 128k converters put LongRoPE's sqrt(1 + ln s / ln n_orig) there), and
    // a context longer than the original one takes LongRoPE's long factors.
    hp->rope_mscale = 1.0f;
    if ((st = get_positive(f, a, MINT_KEY_ROPE_ATTN_FACTOR, &hp->rope_mscale, err))) return st;
    hp->n_ctx_orig = hp->n_ctx_train;
    st = get_dim(f, a, MINT_KEY_ROPE_ORIG_CTX, &hp->n_ctx_orig, err);
    if (st != MINT_OK && st != MINT_E_NOT_FOUND) return st;
    if ((st = read_yarn(m, yarn, err))) return st;
    hp->attn_scale = 1.0f / sqrtf((float)hp->head_dim);
    if (hp->n_layer == m->desc->wide_scale_layers) // Gemma 27B: query_pre_attn_scalar
        hp->attn_scale = 1.0f / sqrtf((float)(hp->n_embd / hp->n_head));
    hp->q_scale = 1.0f;
    if (m->desc->q_prescale) { // the same factor on q instead of on the scores
        hp->q_scale = hp->attn_scale;
        hp->attn_scale = 1.0f;
    }
    hp->rope_neox = m->desc->pos == MINT_POS_ROPE_NEOX;
    if ((st = read_gemma_hparams(m, err))) return st;
    if ((st = mint_model_read_layer_shapes(m, err))) return st; // Gemma 4's, else hp's
    if ((st = read_moe_hparams(m, err))) return st;
    mint_err_clear(err);
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Binding weights by name

// Binds tensor `name` as n_mat stacked [n_in, n_out] weights (n_out = 1 for a vector; n_mat 1 for
// one matrix) of a computable type.
static mint_status bind_stack(mint_model *m, mint_weight *w, const char *name, int64_t n_in,
                              int64_t n_out, int64_t n_mat, mint_err *err) {
    const mint_tdesc *t = mint_file_find(m->file, name);
    if (!t) return mint_fail(err, MINT_E_FORMAT, "tensor '%s' is missing", name);
    bool is_vec = n_out == 1 && n_mat == 1;
    if (n_mat > 1 &&
        !(t->n_dims == 3 && t->ne[0] == n_in && t->ne[1] == n_out && t->ne[2] == n_mat))
        return mint_fail(err, MINT_E_FORMAT,
                         "tensor '%s' has shape [%" PRId64 ", %" PRId64 ", %" PRId64
                         "] (%u dims), expected [%" PRId64 ", %" PRId64 ", %" PRId64 "]",
                         name, t->ne[0], t->ne[1], t->n_dims > 2 ? t->ne[2] : 1, t->n_dims, n_in,
                         n_out, n_mat);
    bool shape_ok =
        n_mat > 1 || (is_vec ? (t->n_dims == 1 && t->ne[0] == n_in)
                             : (t->n_dims == 2 && t->ne[0] == n_in && t->ne[1] == n_out));
    if (!shape_ok) {
        if (is_vec)
            return mint_fail(err, MINT_E_FORMAT,
                             "tensor '%s' has shape [%" PRId64 ", %" PRId64 "], expected [%" PRId64
                             "]",
                             name, t->ne[0], t->ne[1], n_in);
        return mint_fail(err, MINT_E_FORMAT,
                         "tensor '%s' has shape [%" PRId64 ", %" PRId64 "] (%u dims), expected "
                         "[%" PRId64 ", %" PRId64 "]",
                         name, t->ne[0], t->ne[1], t->n_dims, n_in, n_out);
    }
    const mint_type_traits *tt = mint_type_get(t->type);
    if (!tt || !tt->computable)
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "tensor '%s' has type %s, which mint cannot compute with", name,
                         mint_type_name(t->type));
    w->name = t->name;
    w->type = t->type;
    w->n_in = n_in;
    w->n_out = n_out;
    w->n_mat = n_mat;
    w->row_bytes = (size_t)mint_row_size(t->type, n_in);
    w->data = t->data;
    // Kernels read f32 scalars and f16 scales in place. A file with a small general.alignment
    // (GGUF allows 1) can leave a tensor at an odd address: copy just that tensor, aligned.
    size_t align = t->type == MINT_TYPE_F32 ? 4 : 2;
    if ((uintptr_t)t->data % align != 0) {
        void *copy = aligned_alloc(64, ((size_t)t->nbytes + 63) / 64 * 64);
        if (!copy) return mint_fail(err, MINT_E_NOMEM, "out of memory copying '%s'", name);
        memcpy(copy, t->data, (size_t)t->nbytes);
        mint_status st = mint_model_keep(m, copy, err);
        if (st) return st;
        w->data = copy;
    }
    if (is_vec && t->type != MINT_TYPE_F32) {
        // Norm weights are used as f32 by every op; widen the rare F16/BF16 ones once here.
        float *x = malloc((size_t)n_in * sizeof *x);
        if (!x) return mint_fail(err, MINT_E_NOMEM, "out of memory");
        const mint_kernels *k = mint_kernels_get();
        k->t[t->type].to_float(w->data, x, n_in);
        mint_status st = mint_model_keep(m, x, err);
        if (st) return st;
        w->data = x;
        w->type = MINT_TYPE_F32;
        w->row_bytes = (size_t)n_in * sizeof(float);
    }
    m->n_params += (uint64_t)n_in * (uint64_t)n_out * (uint64_t)n_mat;
    m->weight_bytes += t->nbytes;
    return MINT_OK;
}

// Binds tensor `name` as a [n_in, n_out] weight (n_out = 1 for a vector).
static mint_status bind(mint_model *m, mint_weight *w, const char *name, int64_t n_in,
                        int64_t n_out, mint_err *err) {
    return bind_stack(m, w, name, n_in, n_out, 1, err);
}

// Binds `name` ([n_in, n_out]) as the architecture's row needs it: a required one must be there,
// an optional one may be, and an absent one must not (its values would be ignored).
static mint_status bind_need(mint_model *m, mint_weight *w, mint_tensor_need need, const char *name,
                             int64_t n_in, int64_t n_out, int64_t n_mat, mint_err *err) {
    bool present = mint_file_find(m->file, name) != NULL;
    if (need == MINT_REQUIRED || (need == MINT_OPTIONAL && present))
        return bind_stack(m, w, name, n_in, n_out, n_mat, err);
    if (present)
        return mint_fail(err, MINT_E_FORMAT,
                         "tensor '%s' is not part of architecture '%s' (mint would ignore it)",
                         name, m->desc->name);
    return MINT_OK;
}

// bind_need for a vector of n elements.
static mint_status bind_extra(mint_model *m, mint_weight *w, mint_tensor_need need,
                              const char *name, int64_t n, mint_err *err) {
    return bind_need(m, w, need, name, n, 1, 1, err);
}

// Binds rows [row0, row0 + n_out) of the matrix w_all (bound whole, [n_in, total]) as w: a view,
// for the fused matrices of some architectures (Phi-3's attn_qkv, its gate and up in ffn_up).
static void bind_view(mint_weight *w, const mint_weight *w_all, int64_t row0, int64_t n_out) {
    *w = *w_all;
    w->data = (const char *)w_all->data + (size_t)row0 * w_all->row_bytes;
    w->n_out = n_out;
}

// Elements [i0, i0 + n) of the F32 vector v_all as w (GPT-2's one q/k/v bias).
static void bind_vector_view(mint_weight *w, const mint_weight *v_all, int64_t i0, int64_t n) {
    *w = *v_all;
    w->data = (const float *)v_all->data + i0;
    w->n_in = n;
}

// A dimension of runtime/engine/arch.h in layer L's numbers.
static int64_t dim_of(const mint_hparams *hp, const mint_layer *L, mint_dim d) {
    const mint_dims x = {hp->n_embd,  L->n_ff,         hp->n_head,      hp->n_head_kv,
                         L->head_dim, hp->n_ff_exp,    hp->n_expert,    hp->n_ff_shexp,
                         hp->n_conv,  hp->ssm_k_heads, hp->ssm_v_heads, hp->ssm_s,
                         hp->n_ple};
    return mint_dim_value(d, &x);
}

// The field of a layer a declared tensor (or view) is bound to.
static mint_weight *slot_of(mint_layer *L, mint_slot s) {
    static const size_t at[MINT_SLOT_COUNT] = {
        [MINT_SLOT_ATTN_NORM] = offsetof(mint_layer, attn_norm),
        [MINT_SLOT_ATTN_NORM_B] = offsetof(mint_layer, attn_norm_b),
        [MINT_SLOT_WQ] = offsetof(mint_layer, wq),
        [MINT_SLOT_WK] = offsetof(mint_layer, wk),
        [MINT_SLOT_WV] = offsetof(mint_layer, wv),
        [MINT_SLOT_BQ] = offsetof(mint_layer, bq),
        [MINT_SLOT_BK] = offsetof(mint_layer, bk),
        [MINT_SLOT_BV] = offsetof(mint_layer, bv),
        [MINT_SLOT_Q_NORM] = offsetof(mint_layer, q_norm),
        [MINT_SLOT_K_NORM] = offsetof(mint_layer, k_norm),
        [MINT_SLOT_WO] = offsetof(mint_layer, wo),
        [MINT_SLOT_BO] = offsetof(mint_layer, bo),
        [MINT_SLOT_ATTN_POST_NORM] = offsetof(mint_layer, attn_post_norm),
        [MINT_SLOT_FFN_NORM] = offsetof(mint_layer, ffn_norm),
        [MINT_SLOT_FFN_NORM_B] = offsetof(mint_layer, ffn_norm_b),
        [MINT_SLOT_W_GATE] = offsetof(mint_layer, w_gate),
        [MINT_SLOT_W_UP] = offsetof(mint_layer, w_up),
        [MINT_SLOT_B_UP] = offsetof(mint_layer, b_up),
        [MINT_SLOT_W_DOWN] = offsetof(mint_layer, w_down),
        [MINT_SLOT_B_DOWN] = offsetof(mint_layer, b_down),
        [MINT_SLOT_FFN_POST_NORM] = offsetof(mint_layer, ffn_post_norm),
        [MINT_SLOT_ROUTER] = offsetof(mint_layer, router),
        [MINT_SLOT_GATE_EXPS] = offsetof(mint_layer, gate_exps),
        [MINT_SLOT_UP_EXPS] = offsetof(mint_layer, up_exps),
        [MINT_SLOT_DOWN_EXPS] = offsetof(mint_layer, down_exps),
        [MINT_SLOT_SHEXP_GATE_INP] = offsetof(mint_layer, shexp_gate_inp),
        [MINT_SLOT_GATE_SHEXP] = offsetof(mint_layer, gate_shexp),
        [MINT_SLOT_UP_SHEXP] = offsetof(mint_layer, up_shexp),
        [MINT_SLOT_DOWN_SHEXP] = offsetof(mint_layer, down_shexp),
        [MINT_SLOT_ATTN_SINKS] = offsetof(mint_layer, attn_sinks),
        [MINT_SLOT_ROUTER_B] = offsetof(mint_layer, router_b),
        [MINT_SLOT_GATE_EXPS_B] = offsetof(mint_layer, gate_exps_b),
        [MINT_SLOT_UP_EXPS_B] = offsetof(mint_layer, up_exps_b),
        [MINT_SLOT_DOWN_EXPS_B] = offsetof(mint_layer, down_exps_b),
        [MINT_SLOT_CONV] = offsetof(mint_layer, conv),
        [MINT_SLOT_CONV_IN] = offsetof(mint_layer, conv_in),
        [MINT_SLOT_CONV_OUT] = offsetof(mint_layer, conv_out),
        [MINT_SLOT_SSM_QKV] = offsetof(mint_layer, ssm_qkv),
        [MINT_SLOT_SSM_Z] = offsetof(mint_layer, ssm_z),
        [MINT_SLOT_SSM_CONV] = offsetof(mint_layer, ssm_conv),
        [MINT_SLOT_SSM_DT] = offsetof(mint_layer, ssm_dt),
        [MINT_SLOT_SSM_A] = offsetof(mint_layer, ssm_a),
        [MINT_SLOT_SSM_BETA] = offsetof(mint_layer, ssm_beta),
        [MINT_SLOT_SSM_ALPHA] = offsetof(mint_layer, ssm_alpha),
        [MINT_SLOT_SSM_NORM] = offsetof(mint_layer, ssm_norm),
        [MINT_SLOT_SSM_OUT] = offsetof(mint_layer, ssm_out),
        [MINT_SLOT_PLE_GATE] = offsetof(mint_layer, ple_gate),
        [MINT_SLOT_PLE_PROJ] = offsetof(mint_layer, ple_proj),
        [MINT_SLOT_PLE_NORM] = offsetof(mint_layer, ple_norm),
        [MINT_SLOT_OUT_SCALE] = offsetof(mint_layer, out_scale),
    };
    return (mint_weight *)((char *)L + at[s]);
}

// Layer l's tensors as the architecture declares them (runtime/engine/arch.c:
// mint_arch_layer_tensors): each bound, checked against its need, or cut into its views.
static mint_status bind_layer(mint_model *m, int l, mint_err *err) {
    const mint_hparams *hp = &m->hp;
    mint_layer *L = &m->layers[l];
    mint_layer_tensor decl[MINT_LAYER_TENSORS_MAX];
    const int n = mint_arch_layer_tensors(m->desc, L->mixer, decl);
    for (int i = 0; i < n; i++) {
        const mint_layer_tensor *t = &decl[i];
        char name[96];
        snprintf(name, sizeof name, "blk.%d.%s", l, t->suffix);
        const int64_t n_in = dim_of(hp, L, t->n_in), n_out = dim_of(hp, L, t->n_out);
        const int64_t n_mat = t->n_mat == MINT_DIM_0 ? 1 : dim_of(hp, L, t->n_mat);
        if (t->slot != MINT_SLOT_FUSED) {
            mint_status st =
                bind_need(m, slot_of(L, t->slot), t->need, name, n_in, n_out, n_mat, err);
            if (st) return st;
            continue;
        }
        mint_weight all = {0}; // bind() leaves packed and pack_stride: the views copy them
        mint_status st = bind_need(m, &all, t->need, name, n_in, n_out, 1, err);
        if (st) return st;
        if (!all.data) continue; // an optional one the file does not have
        for (int v = 0; v < t->n_views; v++) {
            const mint_view *vw = &t->views[v];
            if (t->n_out == MINT_DIM_1)
                bind_vector_view(slot_of(L, vw->slot), &all, dim_of(hp, L, vw->at),
                                 dim_of(hp, L, vw->n));
            else
                bind_view(slot_of(L, vw->slot), &all, dim_of(hp, L, vw->at), dim_of(hp, L, vw->n));
        }
    }
    // The experts' biases are read as f32 rows (runtime/engine/exec.c adds them to outputs).
    const mint_weight *biases[3] = {&L->gate_exps_b, &L->up_exps_b, &L->down_exps_b};
    for (int i = 0; i < 3; i++)
        if (biases[i]->data && biases[i]->type != MINT_TYPE_F32)
            return mint_fail(err, MINT_E_UNSUPPORTED, "tensor '%s' is %s; mint reads it as F32",
                             biases[i]->name, mint_type_name(biases[i]->type));
    return MINT_OK;
}

static mint_status bind_weights(mint_model *m, mint_err *err) {
    const mint_hparams *hp = &m->hp;
    int64_t e = hp->n_embd, V = hp->n_vocab;

    mint_status st;
    if ((st = bind(m, &m->tok_embd, "token_embd.weight", e, V, err)) ||
        (st = bind(m, &m->output_norm,
                   m->desc->output_norm_name ? m->desc->output_norm_name : "output_norm.weight", e,
                   1, err)))
        return st;
    if (mint_file_find(m->file, "output.weight")) {
        if ((st = bind(m, &m->output, "output.weight", e, V, err))) return st;
    } else {
        m->output = m->tok_embd; // tied embeddings: the output projection is token_embd
    }
    for (int l = 0; l < hp->n_layer; l++)
        if ((st = bind_layer(m, l, err))) return st;
    const mint_tensor_need with_ln = m->desc->norm == MINT_NORM_LAYER ? MINT_REQUIRED : MINT_ABSENT;
    if ((st = bind_extra(m, &m->output_norm_b, with_ln, "output_norm.bias", e, err))) return st;
    if (m->desc->pos == MINT_POS_LEARNED &&
        (st = bind(m, &m->pos_embd, "position_embd.weight", e, hp->n_ctx_train, err)))
        return st;
    if ((st = bind_extra(m, &m->rope_freqs, m->desc->rope_freqs, "rope_freqs.weight", hp->n_rot / 2,
                         err)) ||
        (st = bind_extra(m, &m->rope_long, m->desc->longrope, "rope_factors_long.weight",
                         hp->n_rot / 2, err)) ||
        (st = bind_extra(m, &m->rope_short, m->desc->longrope, "rope_factors_short.weight",
                         hp->n_rot / 2, err)))
        return st;
    if (!m->rope_long.data != !m->rope_short.data)
        return mint_fail(err, MINT_E_FORMAT,
                         "tensor %s.weight is missing (LongRoPE needs both "
                         "rope_factors_long and rope_factors_short)",
                         m->rope_long.data ? "rope_factors_short" : "rope_factors_long");
    // Gemma 4's per-layer inputs; runtime/engine/gemma4.c checks each layer's part of them
    const mint_tensor_need ple = hp->n_ple > 0 ? MINT_REQUIRED : MINT_ABSENT;
    const int64_t all = (int64_t)hp->n_ple * hp->n_layer;
    if ((st = bind_need(m, &m->ple_embd, ple, "per_layer_token_embd.weight", all, V, 1, err)) ||
        (st = bind_need(m, &m->ple_model, ple, "per_layer_model_proj.weight", e, all, 1, err)) ||
        (st = bind_extra(m, &m->ple_norm, ple, "per_layer_proj_norm.weight", hp->n_ple, err)))
        return st;
    return mint_model_bind_gemma4(m, err);
}

const mint_weight *mint_model_rope_factors(const mint_model *m, int32_t n_ctx) {
    if (m->rope_freqs.data || !m->rope_long.data) return &m->rope_freqs;
    return n_ctx > m->hp.n_ctx_orig ? &m->rope_long : &m->rope_short;
}

// "F32x9 Q4_Kx25 Q6_Kx5": how many bound matrices/vectors of each type.
static void summarise_types(mint_model *m) {
    int count[MINT_TYPE_COUNT] = {0};
    const mint_file *f = m->file;
    for (uint64_t i = 0; i < f->n_tensors; i++)
        if (f->t[i].type < MINT_TYPE_COUNT) count[f->t[i].type]++;
    size_t len = 0;
    m->types[0] = '\0';
    for (int t = 0; t < MINT_TYPE_COUNT && len < sizeof m->types; t++)
        if (count[t])
            len += (size_t)snprintf(m->types + len, sizeof m->types - len, "%s%sx%d",
                                    len ? " " : "", mint_type_name((uint32_t)t), count[t]);
}

static char *dup_str(const mint_file *f, const char *key, const char *fallback) {
    const char *s = NULL;
    uint64_t len = 0;
    if (mint_file_get_str(f, key, &s, &len, NULL) != MINT_OK) {
        if (!fallback) return NULL;
        s = fallback;
        len = strlen(fallback);
    }
    char *p = malloc((size_t)len + 1);
    if (p) {
        memcpy(p, s, (size_t)len);
        p[len] = '\0';
    }
    return p;
}

mint_status mint_model_open_file(mint_file *f, const char *label, const mint_model_params *params,
                                 mint_model **out, mint_err *err) {
    *out = NULL;
    mint_err_clear(err);
    mint_model *m = calloc(1, sizeof *m);
    if (!m) {
        mint_file_close(f);
        return mint_fail(err, MINT_E_NOMEM, "out of memory");
    }
    m->file = f;
    m->vocab_only = params && params->vocab_only;
    mint_status st;
    m->arch = dup_str(m->file, "general.architecture", NULL);
    if (!m->arch) {
        st = mint_fail(err, MINT_E_FORMAT, "%s: metadata general.architecture is missing", label);
        goto fail;
    }
    // A vocabulary alone (vocab_only) needs no graph: any architecture's tokenizer loads. A
    // file with experts takes its architecture's row for them, when there is one (Mixtral).
    char key[160];
    mint_arch_key_name(key, sizeof key, m->arch, MINT_KEY_EXPERT_COUNT);
    uint64_t n_expert = 0;
    mint_err ignored;
    const bool experts =
        mint_file_get_u64(m->file, key, &n_expert, &ignored) == MINT_OK && n_expert;
    m->desc = mint_arch_for_file(m->arch, experts);
    if (!m->vocab_only && !m->desc) {
        char names[128];
        mint_arch_list(names, sizeof names);
        st = mint_fail(err, MINT_E_UNSUPPORTED,
                       "%s: architecture '%s' is not supported (mint runs %s)", label, m->arch,
                       names);
        goto fail;
    }
    m->name = dup_str(m->file, "general.name", "");
    m->chat_template = dup_str(m->file, "tokenizer.chat_template", NULL);
    if ((st = mint_vocab_load(m->file, &m->vocab, err))) goto fail_prefixed;
    m->hp.n_vocab = mint_vocab_n_tokens(m->vocab);
    summarise_types(m);
    if (m->vocab_only) {
        *out = m;
        return MINT_OK;
    }
    if ((st = read_hparams(m, err))) goto fail_prefixed;
    if ((st = bind_weights(m, err))) goto fail_prefixed;
    m->mlock = params && params->mlock;
    mint_model_lock_file(m); // before repacking, which locks its buffer as it makes it
    if ((st = mint_model_repack(m, params, err))) goto fail_prefixed;
    *out = m;
    return MINT_OK;
fail_prefixed:
    mint_err_prefix(err, "%s", label);
fail:
    mint_model_close(m);
    return st;
}

mint_status mint_model_open(const char *path, const mint_model_params *params, mint_model **out,
                            mint_err *err) {
    *out = NULL;
    mint_err_clear(err);
    mint_file *f;
    mint_status st = mint_file_open_opt(path, params && params->no_mmap, &f, err);
    if (st) return st;
    return mint_model_open_file(f, path, params, out, err);
}

void mint_model_close(mint_model *m) {
    if (!m) return;
    mint_model_repack_stop(m);
    for (int i = 0; i < m->n_owned; i++) free(m->owned[i]);
    if (m->packed_map) munmap(m->packed_map, m->packed_map_bytes);
    free(m->owned);
    free(m->layers);
    mint_token_trie_free(m->token_trie);
    mint_vocab_free(m->vocab);
    mint_file_close(m->file);
    free(m->arch);
    free(m->name);
    free(m->chat_template);
    free(m);
}

void mint_model_describe(const mint_model *m, mint_model_desc *d) {
    memset(d, 0, sizeof *d);
    const mint_hparams *hp = &m->hp;
    d->arch = m->arch;
    d->name = m->name;
    d->n_vocab = hp->n_vocab;
    d->n_ctx_train = hp->n_ctx_train;
    d->n_embd = hp->n_embd;
    d->n_ff = hp->n_ff;
    d->n_layer = hp->n_layer;
    d->n_head = hp->n_head;
    d->n_head_kv = hp->n_head_kv;
    d->head_dim = hp->head_dim;
    d->n_rot = hp->n_rot;
    d->rope_base = hp->rope_base;
    d->rope_freq_scale = hp->rope_freq_scale;
    d->rms_eps = hp->rms_eps;
    d->bos = mint_vocab_bos(m->vocab);
    d->eos = mint_vocab_eos(m->vocab);
    d->add_bos = mint_vocab_add_bos(m->vocab);
    d->n_params = m->n_params;
    d->weight_bytes = m->weight_bytes;
    // Generation reads every matrix once per token, but only one row of the embedding (unless
    // the embedding is also the output matrix, which weight_bytes already counts once).
    uint64_t embd = (uint64_t)m->tok_embd.row_bytes * (uint64_t)m->tok_embd.n_out;
    bool tied = m->output.data == m->tok_embd.data;
    d->bytes_per_token = m->weight_bytes - (tied ? 0 : embd) + m->tok_embd.row_bytes;
    // Gemma 4's per-layer inputs are a second embedding (a row of every layer's inputs per
    // token, most of an E2B file's bytes): one row of it too.
    if (m->ple_embd.data)
        d->bytes_per_token -= (uint64_t)m->ple_embd.row_bytes * (uint64_t)(m->ple_embd.n_out - 1);
    // A mixture reads the rows of the experts it chooses, n_expert_used of n_expert.
    for (int l = 0; hp->n_expert > 0 && l < hp->n_layer; l++) {
        const mint_layer *L = &m->layers[l];
        const mint_weight *ex[3] = {&L->gate_exps, &L->up_exps, &L->down_exps};
        for (int i = 0; i < 3; i++) {
            const uint64_t one = (uint64_t)ex[i]->n_out * ex[i]->row_bytes;
            d->bytes_per_token -= one * (uint64_t)(hp->n_expert - hp->n_expert_used);
        }
    }
    d->chat_template = m->chat_template;
    d->types = m->types;
    d->locked = m->mlock && m->lock_failed_bytes == 0;
    d->lock_error = m->lock_failed_bytes ? m->lock_error : NULL;
    d->n_expert = hp->n_expert;
    d->n_expert_used = hp->n_expert_used;
    d->n_layer_recurrent = hp->n_layer_rs;
    d->n_state_heads = hp->n_layer_rs == 0 ? 0 : hp->ssm_s ? hp->ssm_v_heads : 1;
    if (hp->n_layer_rs > 0) { // as runtime/engine/context.c lays it out
        const uint64_t ch = (uint64_t)(2 * hp->ssm_k_heads + hp->ssm_v_heads) * (uint64_t)hp->ssm_s;
        const uint64_t per = hp->ssm_s ? (uint64_t)(hp->n_conv - 1) * ch +
                                             (uint64_t)hp->ssm_v_heads * hp->ssm_s * hp->ssm_s
                                       : (uint64_t)(hp->n_conv - 1) * (uint64_t)hp->n_embd;
        d->state_bytes = (uint64_t)hp->n_layer_rs * per * sizeof(float);
    }
}

// ---------------------------------------------------------------------------------------------
// Tokens (public wrappers over runtime/text/vocab.h)

mint_status mint_tokenize(const mint_model *m, const char *text, size_t len, bool add_special,
                          bool parse_special, int32_t *ids, size_t cap, size_t *n_out,
                          mint_err *err) {
    return mint_vocab_tokenize(m->vocab, text, len, add_special, parse_special, ids, cap, n_out,
                               err);
}

size_t mint_token_to_piece(const mint_model *m, int32_t id, bool special, char *buf, size_t cap) {
    return mint_vocab_token_to_piece(m->vocab, id, special, 0, buf, cap);
}

const char *mint_token_text(const mint_model *m, int32_t id) {
    return mint_vocab_token_text(m->vocab, id, NULL);
}

bool mint_token_is_eog(const mint_model *m, int32_t id) {
    return mint_vocab_is_eog(m->vocab, id);
}

mint_fim_tokens mint_vocab_fim_tokens(const mint_model *m) {
    const mint_vocab *v = m->vocab;
    return (mint_fim_tokens){mint_vocab_fim(v, 0), mint_vocab_fim(v, 1), mint_vocab_fim(v, 2),
                             mint_vocab_fim(v, 3), mint_vocab_fim(v, 4), mint_vocab_fim(v, 5)};
}

mint_status mint_vocab_compatible(const mint_model *a, const mint_model *b, mint_err *err) {
    mint_err_clear(err);
    mint_status st = mint_vocab_same(a->vocab, b->vocab, err);
    if (st) mint_err_one_line(err); // token texts come from the files
    return st;
}
