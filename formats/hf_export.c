// hf_export.c - a mint_file of a class of the table (hf_arch.h) written as a Hugging Face
// checkpoint folder: the inverse of hf_checkpoint.c (GGUF names -> HF names with the table's
// operations undone: Llama's q/k rows back to rotate-half order, GPT-2's Conv1D weights back to
// [in, out], Gemma's norms back to w; "<arch>.*" keys -> config.json; tokenizer.* ->
// tokenizer_config.json and tokenizer.model (SentencePiece) or tokenizer.json (byte-level BPE,
// hf_bpe.c)).
#include "formats/hf_checkpoint.h"

#include "base/error.h"
#include "formats/hf_bpe.h"
#include "formats/hf_names.h"
#include "formats/json_doc.h"
#include "formats/safetensors.h"
#include "formats/sentencepiece.h"
#include "quant/types.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct export_hp {
    const mint_hf_arch *a; // the class written
    uint32_t n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx, head_dim, n_vocab; // <arch>.*
    float eps;               // layer_norm_rms_epsilon (GPT-2: layer_norm_epsilon)
    bool has_theta;          // freq_base present
    float theta;             // freq_base
    bool has_head_dim;       // key_length present (written as head_dim)
    float rope_factor;       // linear scaling factor; 0 = none
    bool has_theta_swa;      // freq_base_swa present
    float theta_swa;         // freq_base_swa (rope_local_base_freq)
    float attn_softcap;      // attn_logit_softcapping; 0 = absent
    float final_softcap;     // final_logit_softcapping; 0 = absent
    bool has_window;         // attention.sliding_window present
    uint32_t window;         // its value
    uint32_t window_pattern; // attention.sliding_window_pattern; 0 = absent
    uint32_t n_ctx_orig;     // rope.scaling.original_context_length; 0 = absent
} export_hp;

// "<arch>.<suffix>" lookups that leave *out alone when the key is absent.
static bool opt_u32(const mint_file *f, const char *arch, const char *suffix, uint32_t *out) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    return mint_file_get_u32(f, key, out, NULL) == MINT_OK;
}

static bool opt_f32(const mint_file *f, const char *arch, const char *suffix, float *out) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    return mint_file_get_f32(f, key, out, NULL) == MINT_OK;
}

static mint_status need_u32(const mint_file *f, const char *arch, const char *suffix, uint32_t *out,
                            mint_err *err) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    return mint_file_get_u32(f, key, out, err);
}

static mint_status read_hparams(const mint_file *f, export_hp *h, mint_err *err) {
    memset(h, 0, sizeof *h);
    const char *arch;
    uint64_t len;
    mint_status st = mint_file_get_str(f, "general.architecture", &arch, &len, err);
    if (st != MINT_OK) return st;
    h->a = mint_hf_arch_by_gguf(arch, len);
    if (!h->a)
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "hf export: architecture '%.*s' has no Hugging Face class in mint's "
                         "table",
                         (int)(len < 64 ? len : 64), arch);
    const char *A = h->a->arch;
    const bool ln = h->a->keys & MINT_HF_K_LAYER_NORM;
    st = need_u32(f, A, "embedding_length", &h->n_embd, err);
    if (st == MINT_OK) st = need_u32(f, A, "block_count", &h->n_layer, err);
    if (st == MINT_OK) st = need_u32(f, A, "attention.head_count", &h->n_head, err);
    if (st == MINT_OK) st = need_u32(f, A, "feed_forward_length", &h->n_ff, err);
    if (st == MINT_OK) st = need_u32(f, A, "context_length", &h->n_ctx, err);
    if (st == MINT_OK) {
        char key[128];
        snprintf(key, sizeof key, "%s.attention.%s", A,
                 ln ? "layer_norm_epsilon" : "layer_norm_rms_epsilon");
        st = mint_file_get_f32(f, key, &h->eps, err);
    }
    if (st != MINT_OK) return st;
    if (!opt_u32(f, A, "attention.head_count_kv", &h->n_head_kv)) h->n_head_kv = h->n_head;
    h->has_theta = opt_f32(f, A, "rope.freq_base", &h->theta);
    h->has_theta_swa = opt_f32(f, A, "rope.freq_base_swa", &h->theta_swa);
    h->has_head_dim = opt_u32(f, A, "attention.key_length", &h->head_dim);
    if (!h->has_head_dim) h->head_dim = h->n_head ? h->n_embd / h->n_head : 0;
    char key[128];
    const char *scaling;
    snprintf(key, sizeof key, "%s.rope.scaling.type", A);
    if (mint_file_get_str(f, key, &scaling, &len, NULL) == MINT_OK && len == 6 &&
        memcmp(scaling, "linear", 6) == 0)
        (void)opt_f32(f, A, "rope.scaling.factor", &h->rope_factor);
    (void)opt_f32(f, A, "attn_logit_softcapping", &h->attn_softcap);
    (void)opt_f32(f, A, "final_logit_softcapping", &h->final_softcap);
    h->has_window = opt_u32(f, A, "attention.sliding_window", &h->window);
    (void)opt_u32(f, A, "attention.sliding_window_pattern", &h->window_pattern);
    (void)opt_u32(f, A, "rope.scaling.original_context_length", &h->n_ctx_orig);
    if (h->n_head == 0 || h->n_head_kv == 0 || h->n_head % h->n_head_kv || (h->head_dim % 2 && !ln))
        return mint_fail(err, MINT_E_FORMAT,
                         "hf export: head_count %u, head_count_kv %u, head size %u do not fit "
                         "together",
                         h->n_head, h->n_head_kv, h->head_dim);
    const mint_tdesc *emb = mint_file_find(f, "token_embd.weight");
    uint64_t n_tok;
    if (opt_u32(f, A, "vocab_size", &h->n_vocab)) return MINT_OK;
    if (emb)
        h->n_vocab = (uint32_t)emb->ne[1];
    else if (mint_file_get_arr(f, "tokenizer.ggml.tokens", NULL, &n_tok, NULL, NULL) == MINT_OK)
        h->n_vocab = (uint32_t)n_tok;
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// JSON helpers

// The shortest decimal that reads back as the same float, always with a '.' or exponent so
// Python reads a float ("1e-05", "10000.0").
static json_object *json_float(float x) {
    char buf[48];
    for (int prec = 6; prec <= 9; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, (double)x);
        if ((float)strtod(buf, NULL) == x) break;
    }
    if (!strpbrk(buf, ".eEn")) strcat(buf, ".0");
    return json_object_new_double_s((double)x, buf);
}

static void put_int(json_object *o, const char *key, int64_t v) {
    json_object_object_add(o, key, json_object_new_int64(v));
}

// A special token id from tokenizer.ggml.*, or -1 (absent, "none" 0xFFFFFFFF, or out of range).
static int64_t token_id(const mint_file *f, const char *key, uint32_t n_vocab) {
    uint32_t id;
    if (mint_file_get_u32(f, key, &id, NULL) != MINT_OK || id >= n_vocab) return -1;
    return id;
}

static const char *torch_dtype(const mint_file *f) {
    const mint_tdesc *emb = mint_file_find(f, "token_embd.weight");
    if (emb && emb->type == MINT_TYPE_F16) return "float16";
    if (emb && emb->type == MINT_TYPE_BF16) return "bfloat16";
    return "float32";
}

static void put_float(json_object *o, const char *key, float v) {
    json_object_object_add(o, key, json_float(v));
}

// A float list from an F32 tensor of f (Phi-3's LongRoPE factors), or NULL.
static json_object *factor_list(const mint_file *f, const char *name) {
    const mint_tdesc *t = mint_file_find(f, name);
    if (!t || t->type != MINT_TYPE_F32 || t->n_dims != 1) return NULL;
    json_object *l = json_object_new_array();
    for (int64_t i = 0; i < t->ne[0]; i++)
        json_object_array_add(l, json_float(((const float *)t->data)[i]));
    return l;
}

// The dimensions under GPT2Config's names.
static void gpt2_dims(json_object *o, const export_hp *h) {
    put_int(o, "n_embd", h->n_embd);
    put_int(o, "n_layer", h->n_layer);
    put_int(o, "n_head", h->n_head);
    put_int(o, "n_ctx", h->n_ctx);
    put_int(o, "n_positions", h->n_ctx);
    if (h->n_ff == 4 * h->n_embd)
        json_object_object_add(o, "n_inner", NULL);
    else
        put_int(o, "n_inner", h->n_ff);
    put_float(o, "layer_norm_epsilon", h->eps);
    json_object_object_add(o, "activation_function", json_object_new_string("gelu_new"));
}

// The dimensions under the Llama-style names, and each class's additions (its row's key bits,
// read backwards).
static void llama_style_dims(const mint_file *f, json_object *o, const export_hp *h) {
    const uint32_t keys = h->a->keys;
    put_int(o, "hidden_size", h->n_embd);
    put_int(o, "intermediate_size", h->n_ff);
    put_int(o, "num_hidden_layers", h->n_layer);
    put_int(o, "num_attention_heads", h->n_head);
    put_int(o, "num_key_value_heads", h->n_head_kv);
    if (h->has_head_dim) put_int(o, "head_dim", h->head_dim);
    put_int(o, "max_position_embeddings", h->n_ctx);
    put_float(o, "rms_norm_eps", h->eps);
    if (h->has_theta) put_float(o, "rope_theta", h->theta);
    if (h->has_theta_swa) put_float(o, "rope_local_base_freq", h->theta_swa);
    if (h->rope_factor > 0) {
        json_object *rs = json_object_new_object();
        json_object_object_add(rs, "type", json_object_new_string("linear"));
        put_float(rs, "factor", h->rope_factor);
        json_object_object_add(o, "rope_scaling", rs);
    }
    if (keys & (MINT_HF_K_SOFTCAPS | MINT_HF_K_FINAL_SOFTCAP)) { // Gemma
        json_object_object_add(o, "hidden_activation", json_object_new_string("gelu_pytorch_tanh"));
        put_int(o, "query_pre_attn_scalar", h->head_dim);
        if (h->attn_softcap > 0) put_float(o, "attn_logit_softcapping", h->attn_softcap);
        if (h->final_softcap > 0) put_float(o, "final_logit_softcapping", h->final_softcap);
    }
    if (h->has_window) put_int(o, "sliding_window", h->window);
    if (h->window_pattern) put_int(o, "sliding_window_pattern", h->window_pattern);
    if (keys & MINT_HF_K_LONGROPE) {
        put_int(o, "original_max_position_embeddings", h->n_ctx_orig ? h->n_ctx_orig : h->n_ctx);
        json_object *lf = factor_list(f, "rope_factors_long.weight");
        json_object *sf = factor_list(f, "rope_factors_short.weight");
        if (lf && sf) {
            json_object *rs = json_object_new_object();
            json_object_object_add(rs, "type", json_object_new_string("longrope"));
            json_object_object_add(rs, "long_factor", lf);
            json_object_object_add(rs, "short_factor", sf);
            json_object_object_add(o, "rope_scaling", rs);
        } else {
            json_object_put(lf);
            json_object_put(sf);
        }
    }
}

static mint_status write_config(const mint_file *f, const export_hp *h, const char *dir,
                                mint_err *err) {
    json_object *o = json_object_new_object();
    if (!o) return mint_fail(err, MINT_E_NOMEM, "hf export: out of memory");
    json_object *arch = json_object_new_array();
    json_object_array_add(arch, json_object_new_string(h->a->hf_class));
    json_object_object_add(o, "architectures", arch);
    json_object_object_add(o, "model_type", json_object_new_string(h->a->model_type));
    if (h->a->keys & MINT_HF_K_LAYER_NORM)
        gpt2_dims(o, h);
    else
        llama_style_dims(f, o, h);
    put_int(o, "vocab_size", h->n_vocab);
    json_object_object_add(o, "tie_word_embeddings",
                           json_object_new_boolean(mint_file_find(f, "output.weight") == NULL));
    static const char *const ids[][2] = {{"tokenizer.ggml.bos_token_id", "bos_token_id"},
                                         {"tokenizer.ggml.eos_token_id", "eos_token_id"},
                                         {"tokenizer.ggml.padding_token_id", "pad_token_id"}};
    for (int i = 0; i < 3; i++) {
        int64_t id = token_id(f, ids[i][0], h->n_vocab);
        if (id >= 0) put_int(o, ids[i][1], id);
    }
    json_object_object_add(o, "torch_dtype", json_object_new_string(torch_dtype(f)));
    mint_status st = mint_json_write_file(o, dir, "config.json", err);
    json_object_put(o);
    return st;
}

// Whether f's vocabulary is byte-level BPE (tokenizer.ggml.model "gpt2").
static bool is_bpe(const mint_file *f) {
    const mint_kv *model = mint_file_find_kv(f, "tokenizer.ggml.model");
    return model && model->type == MINT_VAL_STRING && strcmp(model->str, "gpt2") == 0;
}

static mint_status write_tokenizer_config(const mint_file *f, uint32_t n_vocab, uint32_t n_ctx,
                                          const char *dir, mint_err *err) {
    json_object *o = json_object_new_object();
    if (!o) return mint_fail(err, MINT_E_NOMEM, "hf export: out of memory");
    static const char *const flags[][2] = {{"tokenizer.ggml.add_bos_token", "add_bos_token"},
                                           {"tokenizer.ggml.add_eos_token", "add_eos_token"},
                                           {"tokenizer.ggml.add_space_prefix", "add_prefix_space"}};
    for (int i = 0; i < 3; i++) {
        bool b;
        if (mint_file_get_bool(f, flags[i][0], &b, NULL) == MINT_OK)
            json_object_object_add(o, flags[i][1], json_object_new_boolean(b));
    }
    static const char *const toks[][2] = {{"tokenizer.ggml.bos_token_id", "bos_token"},
                                          {"tokenizer.ggml.eos_token_id", "eos_token"},
                                          {"tokenizer.ggml.unknown_token_id", "unk_token"},
                                          {"tokenizer.ggml.padding_token_id", "pad_token"}};
    for (int i = 0; i < 4; i++) {
        int64_t id = token_id(f, toks[i][0], n_vocab);
        const char *s;
        uint64_t len;
        if (id >= 0 && mint_file_get_arr_str(f, "tokenizer.ggml.tokens", (uint64_t)id, &s, &len,
                                             NULL) == MINT_OK)
            json_object_object_add(o, toks[i][1], json_object_new_string_len(s, (int)len));
    }
    const char *tmpl;
    uint64_t len;
    if (mint_file_get_str(f, "tokenizer.chat_template", &tmpl, &len, NULL) == MINT_OK)
        json_object_object_add(o, "chat_template", json_object_new_string_len(tmpl, (int)len));
    if (n_ctx) json_object_object_add(o, "model_max_length", json_object_new_int64(n_ctx));
    json_object_object_add(
        o, "tokenizer_class",
        json_object_new_string(is_bpe(f) ? "PreTrainedTokenizerFast" : "LlamaTokenizer"));
    mint_status st = mint_json_write_file(o, dir, "tokenizer_config.json", err);
    json_object_put(o);
    return st;
}

// ---------------------------------------------------------------------------------------------
// tokenizer.model

static mint_status write_spm(const mint_file *f, const char *dir, mint_err *err) {
    const mint_kv *model = mint_file_find_kv(f, "tokenizer.ggml.model");
    const mint_kv *tokens = mint_file_find_kv(f, "tokenizer.ggml.tokens");
    if (!model || model->type != MINT_VAL_STRING || strcmp(model->str, "llama") != 0 || !tokens ||
        tokens->type != MINT_VAL_ARRAY || tokens->elem_type != MINT_VAL_STRING)
        return MINT_OK; // not a SentencePiece vocabulary: nothing to write
    const mint_kv *scores = mint_file_find_kv(f, "tokenizer.ggml.scores");
    const mint_kv *types = mint_file_find_kv(f, "tokenizer.ggml.token_type");
    bool have_scores = scores && scores->type == MINT_VAL_ARRAY &&
                       scores->elem_type == MINT_VAL_F32 && scores->n == tokens->n;
    bool have_types = types && types->type == MINT_VAL_ARRAY && types->elem_type == MINT_VAL_I32 &&
                      types->n == tokens->n;
    mint_spm_model m = {0};
    m.n_pieces = (uint32_t)tokens->n;
    m.pieces = calloc(tokens->n ? tokens->n : 1, sizeof *m.pieces);
    if (!m.pieces) return mint_fail(err, MINT_E_NOMEM, "hf export: out of memory");
    const mint_str *text = tokens->arr;
    for (uint32_t i = 0; i < m.n_pieces; i++) {
        int32_t t = have_types ? ((const int32_t *)types->arr)[i] : MINT_SPM_NORMAL;
        m.pieces[i].text = text[i];
        m.pieces[i].score = have_scores ? ((const float *)scores->arr)[i] : 0.0f;
        m.pieces[i].type = t >= MINT_SPM_NORMAL && t <= MINT_SPM_BYTE ? t : MINT_SPM_NORMAL;
        m.byte_fallback |= m.pieces[i].type == MINT_SPM_BYTE;
    }
    m.model_type = 2; // BPE: what tokenizer.ggml.model "llama" means
    m.vocab_size = (int32_t)m.n_pieces;
    uint32_t n = m.n_pieces;
    m.unk_id = (int32_t)token_id(f, "tokenizer.ggml.unknown_token_id", n);
    m.bos_id = (int32_t)token_id(f, "tokenizer.ggml.bos_token_id", n);
    m.eos_id = (int32_t)token_id(f, "tokenizer.ggml.eos_token_id", n);
    m.pad_id = (int32_t)token_id(f, "tokenizer.ggml.padding_token_id", n);
    bool prefix = true;
    (void)mint_file_get_bool(f, "tokenizer.ggml.add_space_prefix", &prefix, NULL);
    m.normalizer_name = (mint_str){"identity", 8};
    m.add_dummy_prefix = prefix;
    m.remove_extra_whitespaces = false;
    m.escape_whitespaces = true;
    char path[PATH_MAX];
    mint_status st = MINT_OK;
    if (snprintf(path, sizeof path, "%s/tokenizer.model", dir) >= (int)sizeof path)
        st = mint_fail(err, MINT_E_ARG, "hf export: path too long in %s", dir);
    if (st == MINT_OK) st = mint_spm_write_file(&m, path, err);
    free(m.pieces);
    return st;
}

// ---------------------------------------------------------------------------------------------
// Weights

typedef struct out_tensor {
    char name[96];       // HF name
    const mint_tdesc *t; // source
    int64_t ne[4];       // shape written (GPT-2's Conv1D weights transposed back)
    const void *data;    // bytes to write (the source, or a converted copy)
    void *copy;          // owned copy, or NULL
    int shard;           // output shard; -1: not written (Phi-3's factors go to config.json)
} out_tensor;

// The table's operations undone: q/k rows back to HF order, GPT-2's [out, in] back to [in, out],
// Gemma's 1 + w back to w.
static mint_status prepare_tensor(const mint_tdesc *t, const export_hp *h, out_tensor *o,
                                  mint_err *err) {
    unsigned ops;
    int layer;
    o->t = t;
    o->data = t->data;
    memcpy(o->ne, t->ne, sizeof o->ne);
    if ((h->a->keys & MINT_HF_K_LONGROPE) && (strcmp(t->name, "rope_factors_long.weight") == 0 ||
                                              strcmp(t->name, "rope_factors_short.weight") == 0)) {
        o->shard = -1;
        return MINT_OK;
    }
    if (mint_gguf_name_to_hf(h->a, t->name, o->name, sizeof o->name, &ops, &layer) !=
        MINT_HF_NAME_MAPPED)
        return mint_fail(err, MINT_E_UNSUPPORTED, "hf export: tensor '%s' has no %s name", t->name,
                         h->a->hf_class);
    const mint_st_dtype *dt = mint_st_dtype_of_type(t->type);
    if (ops == 0 || t->nbytes == 0 || !dt) return MINT_OK; // a bad type is refused by the caller
    o->copy = malloc((size_t)t->nbytes);
    if (!o->copy) return mint_fail(err, MINT_E_NOMEM, "hf export: out of memory");
    o->data = o->copy;
    if (ops & (MINT_HF_OP_PERM_Q | MINT_HF_OP_PERM_K)) {
        uint32_t groups = ops & MINT_HF_OP_PERM_Q ? h->n_head : h->n_head_kv;
        uint64_t rows = t->n_dims == 1 ? (uint64_t)t->ne[0] : (uint64_t)t->ne[1];
        if (t->n_dims > 2 || rows != (uint64_t)groups * h->head_dim)
            return mint_fail(err, MINT_E_FORMAT,
                             "hf export: tensor '%s' has %" PRIu64 " rows, expected %u heads x %u",
                             t->name, rows, groups, h->head_dim);
        mint_qk_permute(t->data, o->copy, rows, (size_t)(t->nbytes / rows), groups, false);
    } else if (ops & MINT_HF_OP_TRANSPOSE) {
        if (t->n_dims != 2)
            return mint_fail(err, MINT_E_FORMAT, "hf export: tensor '%s' is not a matrix", t->name);
        mint_hf_transpose(t->data, o->copy, (uint64_t)t->ne[1], (uint64_t)t->ne[0], dt->size);
        o->ne[0] = t->ne[1];
        o->ne[1] = t->ne[0];
    } else if (ops & MINT_HF_OP_PLUS_ONE) {
        if (!mint_hf_add_scalar(t->data, o->copy, t->type, t->nbytes / dt->size, -1.0f))
            return mint_fail(err, MINT_E_UNSUPPORTED,
                             "hf export: tensor '%s': cannot subtract 1 "
                             "from %s values",
                             t->name, mint_type_name(t->type));
    }
    return MINT_OK;
}

static mint_status write_shard(const out_tensor *ts, size_t n, int shard, const char *path,
                               mint_err *err) {
    mint_st_writer *w = mint_st_writer_create();
    if (!w) return mint_fail(err, MINT_E_NOMEM, "hf export: out of memory");
    mint_status st = mint_st_writer_add_meta(w, "format", "pt");
    if (st != MINT_OK) st = mint_fail(err, st, "hf export: out of memory");
    for (size_t i = 0; i < n && st == MINT_OK; i++) {
        const mint_tdesc *t = ts[i].t;
        if (ts[i].shard == shard)
            st = mint_st_writer_add(w, ts[i].name, t->type, t->n_dims, ts[i].ne, ts[i].data,
                                    t->nbytes, err);
    }
    if (st == MINT_OK) st = mint_st_writer_write_file(w, path, err);
    mint_st_writer_free(w);
    return st;
}

static mint_status write_weights(const mint_file *f, const export_hp *h, const char *dir,
                                 uint64_t max_shard, mint_err *err) {
    out_tensor *ts = calloc(f->n_tensors + 1, sizeof *ts);
    if (!ts) return mint_fail(err, MINT_E_NOMEM, "hf export: out of memory");
    mint_status st = MINT_OK;
    int n_shards = 1;
    uint64_t in_shard = 0, total = 0;
    for (uint64_t i = 0; i < f->n_tensors && st == MINT_OK; i++) {
        st = prepare_tensor(&f->t[i], h, &ts[i], err);
        if (st == MINT_OK && ts[i].shard < 0) continue; // not a checkpoint tensor
        if (st == MINT_OK && !mint_st_dtype_of_type(f->t[i].type))
            st = mint_fail(err, MINT_E_UNSUPPORTED,
                           "hf export: tensor '%s' is %s; a checkpoint holds F32, F16 or BF16",
                           f->t[i].name, mint_type_name(f->t[i].type));
        // Greedy sharding in file order: a new shard when this tensor would overflow the limit.
        if (max_shard && in_shard > 0 && in_shard + f->t[i].nbytes > max_shard) {
            n_shards++;
            in_shard = 0;
        }
        ts[i].shard = n_shards - 1;
        in_shard += f->t[i].nbytes;
        total += f->t[i].nbytes;
    }
    char path[PATH_MAX], file[64];
    json_object *index = NULL, *wm = NULL;
    if (st == MINT_OK && n_shards > 1) {
        index = json_object_new_object();
        json_object *meta = json_object_new_object();
        wm = json_object_new_object();
        json_object_object_add(meta, "total_size", json_object_new_int64((int64_t)total));
        json_object_object_add(index, "metadata", meta);
        json_object_object_add(index, "weight_map", wm);
    }
    for (int s = 0; s < n_shards && st == MINT_OK; s++) {
        if (n_shards == 1)
            snprintf(file, sizeof file, "model.safetensors");
        else
            snprintf(file, sizeof file, "model-%05d-of-%05d.safetensors", s + 1, n_shards);
        if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path)
            st = mint_fail(err, MINT_E_ARG, "hf export: path too long in %s", dir);
        if (st == MINT_OK) st = write_shard(ts, f->n_tensors, s, path, err);
        for (uint64_t i = 0; i < f->n_tensors && wm; i++)
            if (ts[i].shard == s)
                json_object_object_add(wm, ts[i].name, json_object_new_string(file));
    }
    // A folder holds one layout: drop what an earlier export of the other kind left behind.
    if (st == MINT_OK && index) {
        st = mint_json_write_file(index, dir, "model.safetensors.index.json", err);
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
    } else {
        snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    }
    if (st == MINT_OK && unlink(path) != 0 && errno != ENOENT)
        st = mint_fail(err, MINT_E_IO, "hf export: cannot remove %s: %s", path, strerror(errno));
    json_object_put(index);
    for (uint64_t i = 0; i < f->n_tensors; i++) free(ts[i].copy);
    free(ts);
    return st;
}

mint_status mint_hf_export(const mint_file *f, const char *dir, const mint_hf_export_opts *opts,
                           mint_err *err) {
    mint_hf_export_opts defaults = {0};
    if (!opts) opts = &defaults;
    export_hp h;
    mint_status st = read_hparams(f, &h, err);
    if (st != MINT_OK) return st;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return mint_fail(err, MINT_E_IO, "hf export: cannot create %s: %s", dir, strerror(errno));
    st = write_weights(f, &h, dir, opts->max_shard_bytes, err);
    if (st == MINT_OK) st = write_config(f, &h, dir, err);
    if (st == MINT_OK) st = write_tokenizer_config(f, h.n_vocab, h.n_ctx, dir, err);
    if (st == MINT_OK && opts->write_tokenizer)
        st = is_bpe(f) ? mint_hf_bpe_write(f, dir, err) : write_spm(f, dir, err);
    return st;
}

mint_status mint_hf_export_tokenizer(const mint_file *f, const char *dir, mint_err *err) {
    uint64_t n = 0;
    mint_status st = mint_file_get_arr(f, "tokenizer.ggml.tokens", NULL, &n, NULL, err);
    if (st != MINT_OK) return st;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return mint_fail(err, MINT_E_IO, "hf export: cannot create %s: %s", dir, strerror(errno));
    st = write_tokenizer_config(f, (uint32_t)n, 0, dir, err);
    if (st == MINT_OK) st = is_bpe(f) ? mint_hf_bpe_write(f, dir, err) : write_spm(f, dir, err);
    return st;
}
