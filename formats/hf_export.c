// hf_export.c - a llama mint_file written as a Hugging Face checkpoint folder: the inverse of
// hf_checkpoint.c (GGUF names -> HF names, q/k rows back to HF's rotate-half order, llama.* keys
// -> config.json, tokenizer.* -> tokenizer_config.json and tokenizer.model).
#include "formats/hf_checkpoint.h"

#include "base/error.h"
#include "base/fileio.h"
#include "formats/hf_names.h"
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

typedef struct llama_hp {
    uint32_t n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx, head_dim, n_vocab; // llama.*
    float eps;         // layer_norm_rms_epsilon
    bool has_theta;    // freq_base present
    float theta;       // freq_base
    bool has_head_dim; // key_length present (written as head_dim)
    float rope_factor; // linear scaling factor; 0 = none
} llama_hp;

static mint_status read_hparams(const mint_file *f, llama_hp *h, mint_err *err) {
    memset(h, 0, sizeof *h);
    const char *arch;
    uint64_t len;
    mint_status st = mint_file_get_str(f, "general.architecture", &arch, &len, err);
    if (st != MINT_OK) return st;
    if (len != 5 || memcmp(arch, "llama", 5) != 0)
        return mint_fail(err, MINT_E_UNSUPPORTED, "hf export: architecture '%.*s' is not llama",
                         (int)(len < 64 ? len : 64), arch);
    st = mint_file_get_u32(f, "llama.embedding_length", &h->n_embd, err);
    if (st == MINT_OK) st = mint_file_get_u32(f, "llama.block_count", &h->n_layer, err);
    if (st == MINT_OK) st = mint_file_get_u32(f, "llama.attention.head_count", &h->n_head, err);
    if (st == MINT_OK) st = mint_file_get_u32(f, "llama.feed_forward_length", &h->n_ff, err);
    if (st == MINT_OK) st = mint_file_get_u32(f, "llama.context_length", &h->n_ctx, err);
    if (st == MINT_OK)
        st = mint_file_get_f32(f, "llama.attention.layer_norm_rms_epsilon", &h->eps, err);
    if (st != MINT_OK) return st;
    if (mint_file_get_u32(f, "llama.attention.head_count_kv", &h->n_head_kv, NULL) != MINT_OK)
        h->n_head_kv = h->n_head;
    h->has_theta = mint_file_get_f32(f, "llama.rope.freq_base", &h->theta, NULL) == MINT_OK;
    h->has_head_dim =
        mint_file_get_u32(f, "llama.attention.key_length", &h->head_dim, NULL) == MINT_OK;
    if (!h->has_head_dim) h->head_dim = h->n_head ? h->n_embd / h->n_head : 0;
    const char *scaling;
    if (mint_file_get_str(f, "llama.rope.scaling.type", &scaling, &len, NULL) == MINT_OK &&
        len == 6 && memcmp(scaling, "linear", 6) == 0)
        (void)mint_file_get_f32(f, "llama.rope.scaling.factor", &h->rope_factor, NULL);
    if (h->n_head == 0 || h->n_head_kv == 0 || h->n_head % h->n_head_kv || h->head_dim % 2)
        return mint_fail(err, MINT_E_FORMAT,
                         "hf export: head_count %u, head_count_kv %u, head size %u do not fit "
                         "together",
                         h->n_head, h->n_head_kv, h->head_dim);
    const mint_tdesc *emb = mint_file_find(f, "token_embd.weight");
    uint64_t n_tok;
    if (mint_file_get_u32(f, "llama.vocab_size", &h->n_vocab, NULL) == MINT_OK) return MINT_OK;
    if (mint_file_get_arr(f, "tokenizer.ggml.tokens", NULL, &n_tok, NULL, NULL) == MINT_OK)
        h->n_vocab = (uint32_t)n_tok;
    else if (emb)
        h->n_vocab = (uint32_t)emb->ne[1];
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

static mint_status write_json(json_object *o, const char *dir, const char *name, mint_err *err) {
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return mint_fail(err, MINT_E_ARG, "hf export: path too long in %s", dir);
    size_t len = 0;
    const char *text = json_object_to_json_string_length(
        o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE,
        &len);
    if (!text) return mint_fail(err, MINT_E_NOMEM, "hf export: out of memory");
    mint_atomic_file *af = NULL;
    mint_status st = mint_atomic_file_begin(path, &af, err);
    if (st == MINT_OK) st = mint_atomic_file_write(af, text, len, err);
    if (st == MINT_OK) st = mint_atomic_file_write(af, "\n", 1, err);
    if (st == MINT_OK) return mint_atomic_file_commit(af, err);
    mint_atomic_file_abort(af);
    return st;
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

static mint_status write_config(const mint_file *f, const llama_hp *h, const char *dir,
                                mint_err *err) {
    json_object *o = json_object_new_object();
    if (!o) return mint_fail(err, MINT_E_NOMEM, "hf export: out of memory");
    json_object *arch = json_object_new_array();
    json_object_array_add(arch, json_object_new_string("LlamaForCausalLM"));
    json_object_object_add(o, "architectures", arch);
    json_object_object_add(o, "model_type", json_object_new_string("llama"));
    put_int(o, "hidden_size", h->n_embd);
    put_int(o, "intermediate_size", h->n_ff);
    put_int(o, "num_hidden_layers", h->n_layer);
    put_int(o, "num_attention_heads", h->n_head);
    put_int(o, "num_key_value_heads", h->n_head_kv);
    if (h->has_head_dim) put_int(o, "head_dim", h->head_dim);
    put_int(o, "max_position_embeddings", h->n_ctx);
    json_object_object_add(o, "rms_norm_eps", json_float(h->eps));
    if (h->has_theta) json_object_object_add(o, "rope_theta", json_float(h->theta));
    if (h->rope_factor > 0) {
        json_object *rs = json_object_new_object();
        json_object_object_add(rs, "type", json_object_new_string("linear"));
        json_object_object_add(rs, "factor", json_float(h->rope_factor));
        json_object_object_add(o, "rope_scaling", rs);
    }
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
    mint_status st = write_json(o, dir, "config.json", err);
    json_object_put(o);
    return st;
}

static mint_status write_tokenizer_config(const mint_file *f, const llama_hp *h, const char *dir,
                                          mint_err *err) {
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
        int64_t id = token_id(f, toks[i][0], h->n_vocab);
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
    json_object_object_add(o, "model_max_length", json_object_new_int64(h->n_ctx));
    json_object_object_add(o, "tokenizer_class", json_object_new_string("LlamaTokenizer"));
    mint_status st = write_json(o, dir, "tokenizer_config.json", err);
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
    char name[64];       // HF name
    const mint_tdesc *t; // source
    const void *data;    // bytes to write (the source, or an un-permuted copy)
    void *copy;          // owned copy, or NULL
    int shard;           // output shard
} out_tensor;

static mint_status prepare_tensor(const mint_tdesc *t, const llama_hp *h, out_tensor *o,
                                  mint_err *err) {
    mint_hf_perm perm;
    int layer;
    o->t = t;
    o->data = t->data;
    if (mint_gguf_name_to_hf(t->name, o->name, sizeof o->name, &perm, &layer) !=
        MINT_HF_NAME_MAPPED)
        return mint_fail(err, MINT_E_UNSUPPORTED, "hf export: tensor '%s' has no HF name", t->name);
    if (perm == MINT_HF_PERM_NONE || t->nbytes == 0) return MINT_OK;
    uint32_t groups = perm == MINT_HF_PERM_Q ? h->n_head : h->n_head_kv;
    uint64_t rows = t->n_dims == 1 ? (uint64_t)t->ne[0] : (uint64_t)t->ne[1];
    if (t->n_dims > 2 || rows != (uint64_t)groups * h->head_dim)
        return mint_fail(err, MINT_E_FORMAT,
                         "hf export: tensor '%s' has %" PRIu64 " rows, expected %u heads x %u",
                         t->name, rows, groups, h->head_dim);
    o->copy = malloc((size_t)t->nbytes);
    if (!o->copy) return mint_fail(err, MINT_E_NOMEM, "hf export: out of memory");
    mint_qk_permute(t->data, o->copy, rows, (size_t)(t->nbytes / rows), groups, false);
    o->data = o->copy;
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
            st = mint_st_writer_add(w, ts[i].name, t->type, t->n_dims, t->ne, ts[i].data, t->nbytes,
                                    err);
    }
    if (st == MINT_OK) st = mint_st_writer_write_file(w, path, err);
    mint_st_writer_free(w);
    return st;
}

static mint_status write_weights(const mint_file *f, const llama_hp *h, const char *dir,
                                 uint64_t max_shard, mint_err *err) {
    out_tensor *ts = calloc(f->n_tensors + 1, sizeof *ts);
    if (!ts) return mint_fail(err, MINT_E_NOMEM, "hf export: out of memory");
    mint_status st = MINT_OK;
    int n_shards = 1;
    uint64_t in_shard = 0, total = 0;
    for (uint64_t i = 0; i < f->n_tensors && st == MINT_OK; i++) {
        st = prepare_tensor(&f->t[i], h, &ts[i], err);
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
        st = write_json(index, dir, "model.safetensors.index.json", err);
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
    llama_hp h;
    mint_status st = read_hparams(f, &h, err);
    if (st != MINT_OK) return st;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return mint_fail(err, MINT_E_IO, "hf export: cannot create %s: %s", dir, strerror(errno));
    st = write_weights(f, &h, dir, opts->max_shard_bytes, err);
    if (st == MINT_OK) st = write_config(f, &h, dir, err);
    if (st == MINT_OK) st = write_tokenizer_config(f, &h, dir, err);
    if (st == MINT_OK && opts->write_tokenizer) st = write_spm(f, dir, err);
    return st;
}
