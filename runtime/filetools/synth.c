// synth.c - writing a GGUF with random weights: TinyLlama's, Llama-3.2-1B's, Qwen2.5-0.5B's or
// Qwen3-0.6B's exact shapes (or tiny ones for tests) under llama.cpp's tensor names and metadata
// keys, any file type mint computes (llama-quantize's mixes included), and a real vocabulary
// when one is given. For speed, memory and format tests; its text is noise.
//
// Weights are a pure function of (seed, tensor name, element index): a counter-based generator,
// so tensors can be made in any order, in parallel, and the same seed always gives the same file.
#include "base/error.h"
#include "formats/gguf.h"
#include "quant/kernels.h"
#include "runtime/filetools/mix.h"
#include "runtime/filetools/synth_presets.h"
#include "runtime/filetools/synth_vocab.h"
#include "runtime/engine/arch.h"
#include "runtime/engine/pool.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

// ---------------------------------------------------------------------------------------------
// Random values

static uint64_t splitmix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Approximately N(0, 1): the sum of four 16-bit uniforms (Irwin-Hall), centred and scaled.
// Cheap enough for a billion weights, and a smooth bell shape is all a speed test needs.
static float gauss(uint64_t key, uint64_t i) {
    uint64_t r = splitmix(key ^ (i * 0xD1B54A32D192ED03ull));
    float s = (float)(r & 0xFFFF) + (float)((r >> 16) & 0xFFFF) + (float)((r >> 32) & 0xFFFF) +
              (float)(r >> 48);
    return (s - 2.0f * 65535.0f) * (1.7320508f / 65535.0f); // variance of the sum is 4/12
}

typedef struct gen {
    uint64_t key; // from the seed and the tensor name
    float mean;   // added to every value
    float scale;  // standard deviation
} gen;

static void gen_row(const gen *g, int64_t row, int64_t n, float *out) {
    for (int64_t i = 0; i < n; i++)
        out[i] = g->mean + g->scale * gauss(g->key, (uint64_t)(row * n + i));
}

// ---------------------------------------------------------------------------------------------
// Tensors

typedef struct stensor {
    char name[64];   // GGUF name
    int64_t ne[3];   // shape (ne[1] = 1 for vectors; ne[2] experts, else 1)
    uint32_t n_dims; // 1, 2 or 3
    uint32_t type;   // chosen type
    gen g;           // its values
    float *fixed;    // [ne[0]] exact values instead of random ones (rope_freqs), or NULL
} stensor;

typedef struct synth {
    const preset *pr;       // shapes
    float rope_freqs[256];  // [head_dim / 2] Llama 3's frequency factors, when the preset has them
    float longrope[2][256]; // [2][head_dim / 2] LongRoPE's long and short factors, when it has them
    stensor *t;             // [n] tensors in file order
    size_t n;               // number of tensors
    mint_pool *pool;        // quantizes rows in parallel
    uint64_t seed;          // user seed
} synth;

// A tensor of n_mat stacked [n_in, n_out] matrices (n_mat 1: one matrix, or a vector).
static void add_stack(synth *s, const char *name, int64_t n_in, int64_t n_out, int64_t n_mat,
                      float mean, float scale) {
    stensor *t = &s->t[s->n++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ne[0] = n_in;
    t->ne[1] = n_out;
    t->ne[2] = n_mat;
    t->n_dims = n_mat > 1 ? 3 : n_out > 1 ? 2 : 1;
    t->type = MINT_TYPE_F32;
    t->g.key = splitmix(s->seed ^ XXH3_64bits(name, strlen(name)));
    t->g.mean = mean;
    t->g.scale = scale;
}

static void add_tensor(synth *s, const char *name, int64_t n_in, int64_t n_out, float mean,
                       float scale) {
    add_stack(s, name, n_in, n_out, 1, mean, scale);
}

// Llama 3's RoPE frequency factors, as its converter derives them from rope_scaling (factor 32,
// low_freq_factor 1, high_freq_factor 4, original context 8192): pairs whose wavelength is
// short keep their frequency (1), long ones are slowed by the factor, and the band between is
// blended.
static void llama3_rope_freqs(float *out, int n_rot, float base) {
    const double factor = 32, low = 1, high = 4, orig = 8192, pi = 3.14159265358979323846;
    for (int i = 0; i < n_rot / 2; i++) {
        const double freq = 1.0 / pow(base, 2.0 * i / n_rot), wavelen = 2 * pi / freq;
        if (wavelen < orig / high)
            out[i] = 1.0f;
        else if (wavelen > orig / low)
            out[i] = (float)factor;
        else {
            const double smooth = (orig / wavelen - low) / (high - low);
            out[i] = (float)(1.0 / ((1 - smooth) / factor + smooth));
        }
    }
}

// LongRoPE's factors in the shape of Phi-3.5-mini's: rising from 1 for the fast pairs to about 3
// (short) and 60 (long) for the slow ones, with a ripple so that no two pairs share a factor.
static void longrope_factors(float *lng, float *shrt, int half) {
    for (int i = 0; i < half; i++) {
        const double t = half > 1 ? (double)i / (half - 1) : 0, ripple = 0.02 * sin(3.0 * i);
        lng[i] = (float)(1.0 + 59.0 * t * t * t + ripple);
        shrt[i] = (float)(1.0 + 2.0 * t * t + ripple);
    }
}

// Layer l's feed-forward width and head size (Gemma 4's vary by layer).
static int64_t layer_ff(const preset *p, int l) {
    const layer_shape *ls = layer_shape_of(p);
    return ls && ls->double_wide && islower((unsigned char)ls->layers[l]) ? 2 * p->n_ff : p->n_ff;
}
static int64_t layer_head_dim(const preset *p, int l) {
    const layer_shape *ls = layer_shape_of(p);
    return ls && toupper((unsigned char)ls->layers[l]) == 'S' ? ls->head_dim_swa : p->head_dim;
}

// A dimension of runtime/engine/arch.h in the preset's numbers, those of layer l.
static int64_t dim_of(const preset *p, int l, mint_dim d) {
    const moe_shape *moe = moe_of(p);
    const layer_shape *ls = layer_shape_of(p);
    const mint_dims x = {p->n_embd,
                         layer_ff(p, l),
                         p->n_head,
                         p->n_head_kv,
                         layer_head_dim(p, l),
                         moe ? moe->n_ff_exp : 0,
                         moe ? moe->n_expert : 0,
                         moe ? moe->n_ff_shexp : 0,
                         hybrid_of(p) ? hybrid_of(p)->n_conv : 0,
                         hybrid_of(p) ? hybrid_of(p)->ssm_k_heads : 0,
                         hybrid_of(p) ? hybrid_of(p)->ssm_v_heads : 0,
                         hybrid_of(p) ? hybrid_of(p)->ssm_s : 0,
                         ls ? ls->n_ple : 0};
    return mint_dim_value(d, &x);
}

// Whether a Gemma 4 layer's file has the optional tensor of `slot`: k, its norm and v in the
// layers with keys and values of their own (v but in ls->no_v), the per-layer input's tensors
// when it has them, the output scale always.
static bool gemma4_writes(const layer_shape *ls, int l, mint_slot slot) {
    const bool own_kv = isupper((unsigned char)ls->layers[l]);
    switch (slot) {
    case MINT_SLOT_WK:
    case MINT_SLOT_K_NORM:
        return own_kv;
    case MINT_SLOT_WV:
        return own_kv && l != ls->no_v;
    case MINT_SLOT_PLE_GATE:
    case MINT_SLOT_PLE_PROJ:
    case MINT_SLOT_PLE_NORM:
        return ls->n_ple > 0;
    case MINT_SLOT_OUT_SCALE:
        return true;
    default:
        return false;
    }
}

// Gemma 4's model-wide tensors: each layer's own input per token and its projection from the
// embedding, their norm, and the full layers' "proportional" RoPE (a quarter of the pairs turn,
// divisors of 1e30 stop the rest, as its converter writes them).
static void gemma4_tensors(synth *s, const layer_shape *ls) {
    const preset *p = s->pr;
    const int64_t all = (int64_t)ls->n_ple * p->n_layer;
    if (ls->n_ple > 0) {
        add_tensor(s, "per_layer_token_embd.weight", all, p->n_vocab, 0.0f,
                   1.0f / sqrtf((float)ls->n_ple));
        add_tensor(s, "per_layer_model_proj.weight", p->n_embd, all, 0.0f,
                   1.0f / sqrtf((float)p->n_embd));
        add_tensor(s, "per_layer_proj_norm.weight", ls->n_ple, 1, 1.0f, 0.05f);
    }
    add_tensor(s, "rope_freqs.weight", p->head_dim / 2, 1, 0.0f, 0.0f);
    s->t[s->n - 1].fixed = s->rope_freqs;
    for (int i = 0; i < p->head_dim / 2; i++) s->rope_freqs[i] = i < p->head_dim / 8 ? 1.0f : 1e30f;
}

// The tensors of the preset's architecture, in the order its converter writes them: the model's
// own, then per layer those its row declares (runtime/engine/arch.c: mint_arch_layer_tensors).
// Only required ones are written (a llama file without biases, as Llama's are).
static void make_tensors(synth *s) {
    const preset *p = s->pr;
    const mint_arch *d = mint_arch_for_file(p->arch, moe_of(p) != NULL);
    const int64_t e = p->n_embd;
    const float lin = 1.0f / sqrtf((float)e);
    // Tied, the embedding is also the output head: give it the head's scale, so the logits have
    // the spread of an untied model's rather than growing with sqrt(n_embd).
    // Gemma multiplies the embedding by sqrt(n_embd): a smaller one keeps the token's own row
    // from outweighing every layer (which would make each next token a copy of the last).
    add_tensor(s, "token_embd.weight", e, p->n_vocab, 0.0f,
               d->embd_scale ? lin
               : p->tied     ? 4.0f * lin
                             : 1.0f);
    if (d->pos == MINT_POS_LEARNED) add_tensor(s, "position_embd.weight", e, p->n_ctx, 0.0f, 0.1f);
    add_tensor(s, d->output_norm_name ? d->output_norm_name : "output_norm.weight", e, 1, 1.0f,
               0.05f);
    if (d->norm == MINT_NORM_LAYER) add_tensor(s, "output_norm.bias", e, 1, 0.0f, 0.05f);
    // A larger output scale makes the next-token distribution peaked, as trained models are.
    if (!p->tied) add_tensor(s, "output.weight", e, p->n_vocab, 0.0f, 4.0f * lin);
    if (p->rope_freqs) {
        add_tensor(s, "rope_freqs.weight", p->head_dim / 2, 1, 0.0f, 0.0f);
        s->t[s->n - 1].fixed = s->rope_freqs;
        llama3_rope_freqs(s->rope_freqs, p->head_dim, p->rope_base);
    }
    const layer_shape *ls = layer_shape_of(p);
    if (ls) gemma4_tensors(s, ls);
    if (p->n_ctx_orig) {
        add_tensor(s, "rope_factors_long.weight", p->head_dim / 2, 1, 0.0f, 0.0f);
        s->t[s->n - 1].fixed = s->longrope[0];
        add_tensor(s, "rope_factors_short.weight", p->head_dim / 2, 1, 0.0f, 0.0f);
        s->t[s->n - 1].fixed = s->longrope[1];
        longrope_factors(s->longrope[0], s->longrope[1], p->head_dim / 2);
    }
    // Each layer: the tensors the architecture declares (runtime/engine/arch.c), those a file
    // must have, drawn as each declaration says.
    mint_layer_tensor decl[MINT_LAYER_TENSORS_MAX];
    const hybrid_shape *hy = hybrid_of(p);
    for (int l = 0; l < p->n_layer; l++) {
        const bool recurrent = hy && hy->layers[l] != 'A';
        const int n_decl =
            mint_arch_layer_tensors(d, recurrent ? d->recurrent : MINT_MIXER_ATTENTION, decl);
        for (int i = 0; i < n_decl; i++) {
            const mint_layer_tensor *t = &decl[i];
            if (t->need != MINT_REQUIRED &&
                !(t->need == MINT_OPTIONAL && ls && gemma4_writes(ls, l, t->slot)))
                continue;
            char n[96];
            snprintf(n, sizeof n, "blk.%d.%s", l, t->suffix);
            const float scale = t->scale_by == MINT_DIM_0
                                    ? t->scale
                                    : t->scale / sqrtf((float)dim_of(p, l, t->scale_by));
            add_stack(s, n, dim_of(p, l, t->n_in), dim_of(p, l, t->n_out),
                      t->n_mat == MINT_DIM_0 ? 1 : dim_of(p, l, t->n_mat), t->mean, scale);
        }
    }
}

// Per-tensor types from llama.cpp's mix rules for the file type.
static mint_status plan_types(synth *s, mint_ftype ftype, mint_err *err) {
    mint_mix_tensor *mt = calloc(s->n, sizeof *mt);
    mint_mix_choice *ch = calloc(s->n, sizeof *ch);
    if (!mt || !ch) {
        free(mt);
        free(ch);
        return mint_fail(err, MINT_E_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < s->n; i++) {
        mt[i].name = s->t[i].name;
        mt[i].type = MINT_TYPE_F32;
        mt[i].ne[0] = s->t[i].ne[0];
        mt[i].ne[1] = s->t[i].ne[1];
        mt[i].ne[2] = s->t[i].ne[2];
        mt[i].ne[3] = 1;
    }
    const moe_shape *moe = moe_of(s->pr);
    mint_mix_model mm = {s->pr->n_layer, s->pr->n_head, s->pr->n_head_kv,
                         mint_arch_find(s->pr->arch), moe ? moe->n_expert : 0};
    mint_mix_params mp = mint_mix_default_params(ftype);
    // Random weights have no importance matrix to refuse for: the types llama-quantize makes only
    // with one are written by mint_quantizer_ref, which weighs every column 1 (or by its own
    // weights), as under a matrix, so these mixes are planned with mix.c's rules with one.
    mp.has_imatrix = ftype == MINT_FTYPE_IQ2_XXS || ftype == MINT_FTYPE_IQ2_XS ||
                     ftype == MINT_FTYPE_IQ2_S || ftype == MINT_FTYPE_IQ2_M ||
                     ftype == MINT_FTYPE_IQ1_S || ftype == MINT_FTYPE_IQ1_M ||
                     ftype == MINT_FTYPE_IQ3_XXS || ftype == MINT_FTYPE_IQ3_XS;
    mint_status st = mint_mix_plan(&mm, mt, s->n, &mp, ch, NULL, err);
    for (size_t i = 0; st == MINT_OK && i < s->n; i++) s->t[i].type = ch[i].type;
    free(mt);
    free(ch);
    return st;
}

// ---------------------------------------------------------------------------------------------
// Producing a tensor's bytes: rows generated and quantized in parallel.

typedef struct fill_job {
    const stensor *t;       // tensor
    uint8_t *dst;           // [ne[1]][row_bytes]
    size_t row_bytes;       // bytes per row of the chosen type
    mint_quantize_row_fn q; // f32 row -> type
} fill_job;

static void fill_rows(void *arg, int ith, int nth) {
    fill_job *j = arg;
    long lo, hi;
    mint_split((long)(j->t->ne[1] * j->t->ne[2]), ith, nth, &lo, &hi);
    float *row = malloc((size_t)j->t->ne[0] * sizeof *row);
    if (!row) return; // the caller checks nothing here; malloc of one row does not fail in practice
    for (long r = lo; r < hi; r++) {
        if (j->t->fixed)
            memcpy(row, j->t->fixed, (size_t)j->t->ne[0] * sizeof *row);
        else
            gen_row(&j->t->g, r, j->t->ne[0], row);
        j->q(row, j->dst + (size_t)r * j->row_bytes, j->t->ne[0]);
    }
    free(row);
}

static mint_status fill_tensor(void *user, uint64_t index, void *dst, uint64_t nbytes,
                               mint_err *err) {
    synth *s = user;
    const stensor *t = &s->t[index];
    fill_job j = {t, dst, (size_t)mint_row_size(t->type, t->ne[0]), mint_quantizer_ref(t->type)};
    if (!j.q || (uint64_t)j.row_bytes * (uint64_t)(t->ne[1] * t->ne[2]) != nbytes)
        return mint_fail(err, MINT_E_UNSUPPORTED, "synthetic: cannot write %s as %s", t->name,
                         mint_type_name(t->type));
    mint_pool_run(s->pool, fill_rows, &j);
    return MINT_OK;
}

// Gemma 4's keys, as its converter writes them: the window and its pattern (a bool per layer),
// the window layers' head and RoPE sizes and base, the layers sharing keys and values, the
// per-layer inputs' width, a feed-forward width per layer, the logits' soft-cap.
static void gemma4_metadata(mint_gguf_writer *w, const preset *pr, const layer_shape *ls) {
    char key[96];
    uint8_t swa[64];
    int32_t ff[64];
    int shared = 0;
    for (int l = 0; l < pr->n_layer && l < 64; l++) {
        swa[l] = toupper((unsigned char)ls->layers[l]) == 'S';
        ff[l] = (int32_t)layer_ff(pr, l);
        shared += islower((unsigned char)ls->layers[l]) != 0;
    }
    mint_arch_key_name(key, sizeof key, pr->arch,
                       MINT_KEY_FEED_FORWARD_LENGTH); // replaces the number
    mint_gguf_add_arr(w, key, MINT_VAL_I32, ff, (uint64_t)pr->n_layer);
    mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_SWA_PATTERN);
    mint_gguf_add_arr(w, key, MINT_VAL_BOOL, swa, (uint64_t)pr->n_layer);
    const struct {
        mint_key key;
        int32_t v;
    } u[] = {{MINT_KEY_SWA_WINDOW, ls->window},
             {MINT_KEY_KEY_LENGTH_SWA, ls->head_dim_swa},
             {MINT_KEY_VALUE_LENGTH_SWA, ls->head_dim_swa},
             {MINT_KEY_ROPE_DIMS_SWA, ls->head_dim_swa},
             {MINT_KEY_SHARED_KV_LAYERS, shared},
             {MINT_KEY_PLE_WIDTH, ls->n_ple}};
    for (size_t i = 0; i < sizeof u / sizeof *u; i++) {
        mint_arch_key_name(key, sizeof key, pr->arch, u[i].key);
        mint_gguf_add_u32(w, key, (uint32_t)u[i].v);
    }
    mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_ROPE_BASE_SWA);
    mint_gguf_add_f32(w, key, 10000.0f);
    mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_FINAL_SOFTCAP);
    mint_gguf_add_f32(w, key, 30.0f);
}

// ---------------------------------------------------------------------------------------------

mint_status mint_synth_write(const mint_synth_params *p, const char *path, mint_err *err) {
    mint_err_clear(err);
    const char *shape = p->shape ? p->shape : "real";
    bool known_name = false;
    const preset *pr = mint_synth_preset(p->preset, shape, &known_name);
    if (!known_name) {
        char names[256];
        preset_names(names, sizeof names);
        return mint_fail(err, MINT_E_ARG, "unknown synthetic preset '%s' (known: %s)",
                         p->preset ? p->preset : "", names);
    }
    if (!pr)
        return mint_fail(err, MINT_E_ARG, "synthetic preset '%s' has no shape '%s' (%s)", p->preset,
                         shape,
                         has_shapes(p->preset) ? "real, tiny or micro" : "it has one shape: real");
    mint_ftype ftype;
    mint_status st = mint_ftype_from_name(p->ftype ? p->ftype : "F32", &ftype, err);
    if (st) return st;
    synth s = {.pr = pr, .seed = p->seed};
    preset local = *pr;
    s.pr = &local;
    mint_gguf_writer *w = mint_gguf_writer_create();
    s.t = calloc((size_t)(8 + MINT_LAYER_TENSORS_MAX * pr->n_layer), sizeof *s.t); // at most
    if (!w || !s.t) {
        st = mint_fail(err, MINT_E_NOMEM, "out of memory");
        goto done;
    }
    char name[96];
    const char *shown = pr->title ? pr->title : pr->name;
    snprintf(name, sizeof name, "mint synthetic %s%s%s (random weights: its text is noise)", shown,
             has_shapes(pr->name) ? " " : "", has_shapes(pr->name) ? pr->shape : "");
    mint_gguf_add_str(w, "general.architecture", pr->arch);
    mint_gguf_add_str(w, "general.name", name);
    mint_gguf_add_u32(w, "general.file_type", mint_ftype_file_type(ftype));
    mint_gguf_add_u32(w, "general.quantization_version", 2);
    mint_gguf_add_bool(w, "mint.synthetic", true);
    const struct {
        mint_key key;
        uint32_t v;
    } dims[] = {{MINT_KEY_CONTEXT_LENGTH, (uint32_t)pr->n_ctx},
                {MINT_KEY_EMBEDDING_LENGTH, (uint32_t)pr->n_embd},
                {MINT_KEY_FEED_FORWARD_LENGTH, (uint32_t)pr->n_ff},
                {MINT_KEY_BLOCK_COUNT, (uint32_t)pr->n_layer},
                {MINT_KEY_HEAD_COUNT, (uint32_t)pr->n_head},
                {MINT_KEY_HEAD_COUNT_KV, (uint32_t)pr->n_head_kv},
                {MINT_KEY_ROPE_DIMS, (uint32_t)pr->head_dim}};
    char key[96];
    // GPT-2's converter (learned positions) writes neither head_count_kv nor a RoPE dimension.
    const mint_arch *d = mint_arch_for_file(pr->arch, moe_of(pr) != NULL);
    if (d->ffn == MINT_FFN_MOE && !moe_of(pr)) { // the two tables of this file disagree
        st = mint_fail(err, MINT_E_ARG, "synthetic preset '%s' %s has no experts' shape", pr->name,
                       pr->shape);
        goto done;
    }
    const size_t n_dims = d->pos == MINT_POS_LEARNED ? 5 : sizeof dims / sizeof *dims;
    const hybrid_shape *hy = hybrid_of(pr);
    if ((d->recurrent != MINT_MIXER_ATTENTION) != (hy != NULL)) { // the two tables disagree
        st = mint_fail(err, MINT_E_ARG, "synthetic preset '%s' %s has no hybrid layers' shape",
                       pr->name, pr->shape);
        goto done;
    }
    for (size_t i = 0; i < n_dims; i++) {
        mint_arch_key_name(key, sizeof key, pr->arch, dims[i].key);
        if (d->layer_shapes && dims[i].key == MINT_KEY_FEED_FORWARD_LENGTH)
            continue; // an array: gemma4_metadata
        if (hy && d->recurrent_no_kv && dims[i].key == MINT_KEY_HEAD_COUNT_KV) {
            int32_t heads[256]; // LFM2: an entry per layer, 0 for a recurrent one (int32, as
                                // gguf-py writes a list of ints)
            for (int l = 0; l < pr->n_layer && l < 256; l++)
                heads[l] = hy->layers[l] == 'A' ? pr->n_head_kv : 0;
            mint_gguf_add_arr(w, key, MINT_VAL_I32, heads, (uint64_t)pr->n_layer);
            continue;
        }
        const bool rot = dims[i].key == MINT_KEY_ROPE_DIMS && hy && hy->n_rot;
        mint_gguf_add_u32(w, key, rot ? (uint32_t)hy->n_rot : dims[i].v);
    }
    if (hy && d->recurrent == MINT_MIXER_SHORTCONV) {
        mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_SHORTCONV_L);
        mint_gguf_add_u32(w, key, (uint32_t)hy->n_conv);
    }
    if (hy && d->recurrent == MINT_MIXER_DELTA_NET) { // as Qwen3.5's converter writes them
        const struct {
            mint_key key;
            int32_t v;
        } ssm[] = {{MINT_KEY_SSM_CONV, hy->n_conv},
                   {MINT_KEY_SSM_STATE, hy->ssm_s},
                   {MINT_KEY_SSM_GROUPS, hy->ssm_k_heads},
                   {MINT_KEY_SSM_DT_RANK, hy->ssm_v_heads},
                   {MINT_KEY_SSM_INNER, hy->ssm_v_heads * hy->ssm_s},
                   {MINT_KEY_FULL_ATTN_INTERVAL, hy->interval}};
        for (size_t i = 0; i < sizeof ssm / sizeof *ssm; i++) {
            mint_arch_key_name(key, sizeof key, pr->arch, ssm[i].key);
            mint_gguf_add_u32(w, key, (uint32_t)ssm[i].v);
        }
        // M-RoPE's sections of the rotated pairs (text uses one position for all): Qwen3.5's
        // 11, 11, 10 of 32 pairs, scaled to this shape's
        const int32_t pairs = (hy->n_rot ? hy->n_rot : pr->head_dim) / 2;
        int32_t sections[4] = {pairs * 11 / 32, pairs * 11 / 32, 0, 0};
        sections[2] = pairs - sections[0] - sections[1];
        mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_ROPE_SECTIONS);
        mint_gguf_add_arr(w, key, MINT_VAL_I32, sections, 4);
    }
    if (pr->head_dim * pr->n_head != pr->n_embd) { // Qwen3's and Gemma's heads
        mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_KEY_LENGTH);
        mint_gguf_add_u32(w, key, (uint32_t)pr->head_dim);
        mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_VALUE_LENGTH);
        mint_gguf_add_u32(w, key, (uint32_t)pr->head_dim);
    }
    if (pr->window_keys) { // as Phi-3-mini's converted files have them
        mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_ROPE_ORIG_CTX);
        mint_gguf_add_u32(w, key, (uint32_t)(pr->n_ctx_orig ? pr->n_ctx_orig : pr->n_ctx));
        mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_SWA_WINDOW);
        mint_gguf_add_u32(w, key, (uint32_t)pr->n_ctx / 2 - 1);
    }
    if (pr->n_ctx_orig) { // LongRoPE's scale of cos and sin, as Phi-3's converter computes it
        const double ratio = (double)pr->n_ctx / pr->n_ctx_orig;
        mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_ROPE_ATTN_FACTOR);
        mint_gguf_add_f32(w, key, (float)sqrt(1.0 + log(ratio) / log((double)pr->n_ctx_orig)));
    }
    if (d->swa_period) { // the window: Gemma 2's 4096 and Gemma 3's 512 keys; a tiny model's 8,
                         // every other layer (the pattern key llama.cpp reads), so tests cross it
        const bool small = strcmp(pr->shape, "real") != 0;
        mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_SWA_WINDOW);
        mint_gguf_add_u32(w, key,
                          small                   ? 8
                          : d->swa_window_default ? (uint32_t)d->swa_window_default
                                                  : 512);
        if (small) {
            mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_SWA_PATTERN);
            mint_gguf_add_u32(w, key, 2);
        }
        if (d->attn_softcap != 0.0f) { // the row's defaults, written as Gemma 2's files have them
            mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_ATTN_SOFTCAP);
            mint_gguf_add_f32(w, key, d->attn_softcap);
            mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_FINAL_SOFTCAP);
            mint_gguf_add_f32(w, key, d->final_softcap);
        }
        if (d->rope_base_swa != 0.0f) {
            mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_ROPE_BASE_SWA);
            mint_gguf_add_f32(w, key, d->rope_base_swa);
        }
    }
    const layer_shape *ls = layer_shape_of(pr);
    if (ls) gemma4_metadata(w, pr, ls);
    const moe_shape *moe = moe_of(pr);
    if (moe) { // a mixture's numbers, as its converter writes them (Mixtral's experts are
               // feed_forward_length wide: no width of their own)
        const struct {
            mint_key key;
            int32_t v;
        } ek[] = {{MINT_KEY_EXPERT_COUNT, moe->n_expert},
                  {MINT_KEY_EXPERT_USED, moe->n_used},
                  {MINT_KEY_EXPERT_FF, moe->n_ff_exp},
                  {MINT_KEY_EXPERT_SHARED_FF, moe->n_ff_shexp}};
        for (size_t i = 0; i < (d->moe_ff_is_ff ? 2u : moe->n_ff_shexp ? 4u : 3u); i++) {
            mint_arch_key_name(key, sizeof key, pr->arch, ek[i].key);
            mint_gguf_add_u32(w, key, (uint32_t)ek[i].v);
        }
    }
    if (d->pos != MINT_POS_LEARNED) { // GPT-2 has no RoPE
        mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_ROPE_BASE);
        mint_gguf_add_f32(w, key, pr->rope_base);
    }
    const yarn_scaling *yarn = yarn_of(pr);
    if (yarn) { // as the model's converter writes it (runtime/filetools/synth_presets.c)
        mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_ROPE_SCALING_TYPE);
        mint_gguf_add_str(w, key, "yarn");
        mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_ROPE_SCALING_FACTOR);
        mint_gguf_add_f32(w, key, yarn->factor);
        mint_arch_key_name(key, sizeof key, pr->arch, MINT_KEY_ROPE_ORIG_CTX);
        mint_gguf_add_u32(w, key, (uint32_t)yarn->n_ctx_orig);
    }
    mint_arch_key_name(key, sizeof key, pr->arch,
                       d->norm == MINT_NORM_LAYER ? MINT_KEY_LN_EPS : MINT_KEY_RMS_EPS);
    mint_gguf_add_f32(w, key, pr->rms_eps);
    if (!p->vocab)
        st = mint_synth_byte_vocab(w, pr->n_vocab, err);
    else if (mint_synth_is_gguf(p->vocab))
        st = mint_synth_gguf_vocab(w, p->vocab, &local.n_vocab, err);
    else
        st = mint_synth_spm_vocab(w, p->vocab, &local.n_vocab, err);
    if (st) goto done;
    make_tensors(&s);
    if ((st = plan_types(&s, ftype, err))) goto done;
    int threads = p->n_threads > 0 ? p->n_threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if ((st = mint_pool_create(threads < 1 ? 1 : threads > 64 ? 64 : threads, &s.pool, err)))
        goto done;
    for (size_t i = 0; i < s.n; i++) {
        const stensor *t = &s.t[i];
        uint64_t bytes = mint_row_size(t->type, t->ne[0]) * (uint64_t)(t->ne[1] * t->ne[2]);
        st = mint_gguf_add_tensor_fill(w, t->name, t->type, t->n_dims, t->ne, bytes, fill_tensor,
                                       &s, i);
        if (st) {
            st = mint_fail(err, st, "out of memory");
            goto done;
        }
    }
    st = mint_gguf_writer_write_file(w, path, err);
done:
    mint_pool_free(s.pool);
    free(s.t);
    mint_gguf_writer_free(w);
    return st;
}
