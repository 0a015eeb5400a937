// hf_checkpoint.c - reading a Hugging Face Llama checkpoint folder: config.json -> llama.* keys,
// safetensors shards -> tensors with GGUF names (q/k permuted), tokenizer -> tokenizer.* keys
// (hf_tokenizer.c).
#include "formats/hf_checkpoint.h"

#include "base/error.h"
#include "base/strmap.h"
#include "formats/hf_names.h"
#include "formats/json_doc.h"
#include "formats/safetensors.h"
#include "quant/types.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// ---------------------------------------------------------------------------------------------
// config.json

typedef struct hf_config {
    uint32_t n_embd;    // hidden_size
    uint32_t n_layer;   // num_hidden_layers
    uint32_t n_head;    // num_attention_heads
    uint32_t n_head_kv; // num_key_value_heads (default n_head)
    uint32_t n_ff;      // intermediate_size
    uint32_t n_ctx;     // max_position_embeddings (default 2048, HF LlamaConfig's)
    uint32_t head_dim;  // head_dim, else n_embd / n_head
    bool has_head_dim;  // head_dim was given (then key_length / value_length are written)
    uint32_t n_vocab;   // vocab_size, else the embedding's row count
    bool has_vocab;     // vocab_size was given
    float eps;          // rms_norm_eps (default 1e-6, HF LlamaConfig's)
    float theta;        // rope_theta
    bool has_theta;     // rope_theta was given (convert writes freq_base only then)
    float rope_factor;  // rope_scaling.factor for linear scaling; 0 = none
} hf_config;

static const char *const CONFIG = "config.json";

// An integer hyperparameter in 1..hi. A missing key takes `def`; with def == 0 it is required
// (MINT_E_FORMAT) unless `optional`, which returns MINT_E_NOT_FOUND for the caller to handle.
static mint_status get_dim(json_object *cfg, const char *key, uint32_t hi, uint32_t def,
                           bool optional, uint32_t *out, mint_err *err) {
    int64_t v;
    mint_status st = mint_json_get_int(cfg, key, 1, hi, CONFIG, &v, err);
    if (st == MINT_E_NOT_FOUND && def) {
        *out = def;
        return MINT_OK;
    }
    if (st == MINT_E_NOT_FOUND && !optional)
        return mint_fail(err, MINT_E_FORMAT, "%s: \"%s\" is missing", CONFIG, key);
    if (st == MINT_OK) *out = (uint32_t)v;
    return st;
}

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

static mint_status check_architecture(json_object *cfg, mint_err *err) {
    json_object *arch = NULL;
    if (!json_object_object_get_ex(cfg, "architectures", &arch) ||
        !json_object_is_type(arch, json_type_array) || json_object_array_length(arch) == 0)
        return mint_fail(err, MINT_E_FORMAT,
                         "%s: \"architectures\" is missing or not a non-empty list", CONFIG);
    // convert_hf_to_gguf.py goes by the first entry; LLaMAForCausalLM is the old spelling.
    json_object *a0 = json_object_array_get_idx(arch, 0);
    const char *name = json_object_is_type(a0, json_type_string) ? json_object_get_string(a0) : "";
    if (strcmp(name, "LlamaForCausalLM") != 0 && strcmp(name, "LLaMAForCausalLM") != 0)
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "%s: architecture '%.64s' is not supported (mint reads LlamaForCausalLM)",
                         CONFIG, json_object_get_string(a0));
    return MINT_OK;
}

static mint_status read_rope_scaling(json_object *cfg, hf_config *c, mint_err *err) {
    json_object *rs = NULL;
    if (!json_object_object_get_ex(cfg, "rope_scaling", &rs) ||
        json_object_is_type(rs, json_type_null))
        return MINT_OK;
    if (!json_object_is_type(rs, json_type_object))
        return mint_fail(err, MINT_E_FORMAT, "%s: \"rope_scaling\" is a %s, expected an object",
                         CONFIG, mint_json_type_name(rs));
    // Older configs say "type", newer ones "rope_type".
    const char *type = NULL;
    mint_status st = mint_json_get_str(rs, "type", CONFIG, &type, NULL, err);
    if (st == MINT_E_NOT_FOUND) st = mint_json_get_str(rs, "rope_type", CONFIG, &type, NULL, err);
    if (st == MINT_E_NOT_FOUND)
        return mint_fail(err, MINT_E_FORMAT, "%s: \"rope_scaling\" has no \"type\"", CONFIG);
    if (st != MINT_OK) return st;
    if (strcmp(type, "default") == 0) return MINT_OK;
    if (strcmp(type, "linear") != 0)
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "%s: rope_scaling type '%.32s' is not supported (only linear)", CONFIG,
                         type);
    double factor;
    st = mint_json_get_num(rs, "factor", CONFIG, &factor, err);
    if (st != MINT_OK) return st;
    if (!(factor > 0) || factor > 1e6)
        return mint_fail(err, MINT_E_FORMAT, "%s: rope_scaling factor %g is outside (0, 1e6]",
                         CONFIG, factor);
    c->rope_factor = (float)factor;
    return MINT_OK;
}

static mint_status read_config(json_object *cfg, hf_config *c, mint_err *err) {
    memset(c, 0, sizeof *c);
    mint_status st = check_architecture(cfg, err);
    if (st == MINT_OK) st = get_dim(cfg, "hidden_size", 1u << 20, 0, false, &c->n_embd, err);
    if (st == MINT_OK) st = get_dim(cfg, "num_hidden_layers", 99999, 0, false, &c->n_layer, err);
    if (st == MINT_OK)
        st = get_dim(cfg, "num_attention_heads", 1u << 16, 0, false, &c->n_head, err);
    if (st == MINT_OK)
        st = get_dim(cfg, "num_key_value_heads", 1u << 16, c->n_head, false, &c->n_head_kv, err);
    if (st == MINT_OK) st = get_dim(cfg, "intermediate_size", 1u << 24, 0, false, &c->n_ff, err);
    if (st == MINT_OK)
        st = get_dim(cfg, "max_position_embeddings", UINT32_MAX, 2048, false, &c->n_ctx, err);
    if (st == MINT_OK) {
        st = get_dim(cfg, "head_dim", 1u << 16, 0, true, &c->head_dim, err);
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
        st = get_dim(cfg, "vocab_size", INT32_MAX, 0, true, &c->n_vocab, err);
        c->has_vocab = st == MINT_OK;
        if (st == MINT_E_NOT_FOUND) st = MINT_OK;
    }
    if (st == MINT_OK) st = get_float(cfg, "rms_norm_eps", 1e-6f, NULL, &c->eps, err);
    if (st == MINT_OK) st = get_float(cfg, "rope_theta", 10000.0f, &c->has_theta, &c->theta, err);
    if (st == MINT_OK) st = read_rope_scaling(cfg, c, err);
    if (st != MINT_OK) return st;
    if (c->n_head % c->n_head_kv != 0)
        return mint_fail(err, MINT_E_FORMAT,
                         "%s: num_attention_heads %u is not a multiple of num_key_value_heads %u",
                         CONFIG, c->n_head, c->n_head_kv);
    if (c->head_dim % 2 != 0)
        return mint_fail(err, MINT_E_FORMAT, "%s: head size %u is odd; RoPE needs pairs", CONFIG,
                         c->head_dim);
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Paths and shards

static mint_status join(const char *dir, const char *name, char *out, mint_err *err) {
    int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);
    if (n < 0 || n >= PATH_MAX)
        return mint_fail(err, MINT_E_ARG, "path %s/%s is longer than %d bytes", dir, name,
                         PATH_MAX);
    return MINT_OK;
}

static bool exists(const char *dir, const char *name) {
    char p[PATH_MAX];
    struct stat st;
    return join(dir, name, p, NULL) == MINT_OK && stat(p, &st) == 0;
}

// A shard named in the index must be a plain file name in the folder: no separators, no "..".
static bool plain_file_name(const char *s) {
    return s[0] && strchr(s, '/') == NULL && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

// Maps shard i into f->maps[i] and appends its tensors (HF names).
static mint_status load_shard(mint_file *f, const char *dir, const char *file, int i,
                              mint_err *err) {
    char path[PATH_MAX];
    mint_status st = join(dir, file, path, err);
    if (st == MINT_OK) st = mint_mapped_file_load(path, f->no_mmap, &f->maps[i], err);
    if (st != MINT_OK) return st;
    f->n_maps = i + 1;
    const mint_mapped_file *m = &f->maps[i];
    uint64_t data_start = 0, before = f->n_tensors;
    st = mint_safetensors_parse_into(f, m->data ? m->data : (const uint8_t *)"", m->size, i, path,
                                     false, &data_start, err);
    if (st != MINT_OK) return st;
    f->file_size += m->size;
    if (i == 0) f->data_offset = data_start;
    uint64_t extent = 0;
    for (uint64_t k = before; k < f->n_tensors; k++)
        if (f->t[k].offset + f->t[k].nbytes > extent) extent = f->t[k].offset + f->t[k].nbytes;
    f->data_size += extent; // summed over shards: the bytes of tensor data the folder holds
    return MINT_OK;
}

// Checks that the tensors found are exactly the index's weight_map, each in its listed shard.
static mint_status check_weight_map(mint_file *f, json_object *wm, const char *const *files,
                                    const char *index_path, mint_err *err) {
    mint_strmap seen;
    if (mint_strmap_init(&seen, f->n_tensors) != MINT_OK)
        return mint_fail(err, MINT_E_NOMEM, "out of memory");
    mint_status st = MINT_OK;
    for (uint64_t i = 0; i < f->n_tensors && st == MINT_OK; i++) {
        const mint_tdesc *t = &f->t[i];
        int32_t prev;
        st = mint_strmap_put(&seen, t->name, strlen(t->name), (int32_t)i, &prev);
        if (st == MINT_E_ARG) {
            st = mint_fail(err, MINT_E_FORMAT, "tensor '%s' is in both %s and %s", t->name,
                           files[f->t[prev].shard], files[t->shard]);
            break;
        }
        json_object *where = NULL;
        if (!json_object_object_get_ex(wm, t->name, &where))
            st = mint_fail(err, MINT_E_FORMAT, "%s: tensor '%s' of %s is not in the weight_map",
                           index_path, t->name, files[t->shard]);
        else if (strcmp(json_object_get_string(where), files[t->shard]) != 0)
            st = mint_fail(err, MINT_E_FORMAT,
                           "%s: the weight_map puts '%s' in %.128s, but it is in %s", index_path,
                           t->name, json_object_get_string(where), files[t->shard]);
    }
    if (st == MINT_OK) {
        json_object_object_foreach(wm, name, file) {
            (void)file;
            if (mint_strmap_get(&seen, name, strlen(name)) >= 0) continue;
            st = mint_fail(err, MINT_E_FORMAT, "%s: tensor '%s' is in none of the shards",
                           index_path, name);
            break;
        }
    }
    mint_strmap_free(&seen);
    return st;
}

static mint_status load_sharded(mint_file *f, const char *dir, mint_err *err) {
    char index_path[PATH_MAX];
    mint_status st = join(dir, "model.safetensors.index.json", index_path, err);
    json_object *index = NULL;
    if (st == MINT_OK) st = mint_json_load_file(index_path, MINT_HF_MAX_INDEX, &index, err);
    if (st != MINT_OK) return st;
    json_object *wm = NULL;
    const char **files = NULL;
    size_t n_files = 0;
    if (!json_object_object_get_ex(index, "weight_map", &wm) ||
        !json_object_is_type(wm, json_type_object)) {
        st = mint_fail(err, MINT_E_FORMAT, "%s: \"weight_map\" is missing or not an object",
                       index_path);
        goto done;
    }
    // The distinct shard files, sorted, so shard numbers do not depend on the JSON order.
    files = malloc(((size_t)json_object_object_length(wm) + 1) * sizeof *files);
    if (!files) {
        st = mint_fail(err, MINT_E_NOMEM, "out of memory");
        goto done;
    }
    json_object_object_foreach(wm, name, file) {
        if (!json_object_is_type(file, json_type_string) ||
            !plain_file_name(json_object_get_string(file))) {
            st = mint_fail(err, MINT_E_FORMAT,
                           "%s: weight_map entry '%s' is %s, expected a file name in the folder",
                           index_path, name, json_object_to_json_string(file));
            goto done;
        }
        files[n_files++] = json_object_get_string(file);
    }
    qsort(files, n_files, sizeof *files, cmp_str);
    size_t n_unique = 0;
    for (size_t i = 0; i < n_files; i++)
        if (n_unique == 0 || strcmp(files[n_unique - 1], files[i]) != 0)
            files[n_unique++] = files[i];
    if (n_unique == 0 || n_unique > MINT_HF_MAX_SHARDS) {
        st = mint_fail(err, MINT_E_FORMAT, "%s: %zu shard files (allowed 1..%d)", index_path,
                       n_unique, MINT_HF_MAX_SHARDS);
        goto done;
    }
    f->maps = calloc(n_unique, sizeof *f->maps);
    if (!f->maps) {
        st = mint_fail(err, MINT_E_NOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_unique && st == MINT_OK; i++)
        st = load_shard(f, dir, files[i], (int)i, err);
    if (st == MINT_OK) st = check_weight_map(f, wm, files, index_path, err);
done:
    free(files);
    json_object_put(index);
    return st;
}

static mint_status load_weights(mint_file *f, const char *dir, mint_err *err) {
    if (exists(dir, "model.safetensors.index.json")) return load_sharded(f, dir, err);
    if (exists(dir, "model.safetensors")) {
        f->maps = calloc(1, sizeof *f->maps);
        if (!f->maps) return mint_fail(err, MINT_E_NOMEM, "out of memory");
        return load_shard(f, dir, "model.safetensors", 0, err);
    }
    if (exists(dir, "pytorch_model.bin") || exists(dir, "pytorch_model.bin.index.json"))
        return mint_fail(
            err, MINT_E_UNSUPPORTED,
            "the weights are PyTorch pickles (pytorch_model*.bin), which mint does not "
            "load; convert them to safetensors");
    return mint_fail(err, MINT_E_FORMAT,
                     "no model.safetensors or model.safetensors.index.json in the folder");
}

// ---------------------------------------------------------------------------------------------
// Tensors: GGUF names and the q/k permutation

static mint_status permute_tensor(mint_file *f, mint_tdesc *t, const char *hf_name,
                                  mint_hf_perm perm, const hf_config *c, mint_err *err) {
    uint32_t groups = perm == MINT_HF_PERM_Q ? c->n_head : c->n_head_kv;
    uint64_t want = (uint64_t)groups * c->head_dim;
    // A weight [n_embd, rows] (ggml order) or a bias [rows].
    uint64_t rows = t->n_dims == 1 ? (uint64_t)t->ne[0] : (uint64_t)t->ne[1];
    if (t->n_dims > 2 || rows != want)
        return mint_fail(err, MINT_E_FORMAT,
                         "tensor '%s': %" PRIu64 " rows (n_dims %u), the config says %u heads x "
                         "%u = %" PRIu64,
                         hf_name, rows, t->n_dims, groups, c->head_dim, want);
    if (t->nbytes == 0) return MINT_OK;
    void *dst = malloc((size_t)t->nbytes);
    if (!dst) return mint_fail(err, MINT_E_NOMEM, "tensor '%s': out of memory", hf_name);
    mint_qk_permute(t->data, dst, rows, (size_t)(t->nbytes / rows), groups, true);
    t->data = dst;
    return mint_file_own(f, dst, err);
}

static mint_status map_tensors(mint_file *f, const hf_config *c, mint_err *err) {
    uint64_t kept = 0;
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        mint_tdesc t = f->t[i];
        char gguf[64];
        mint_hf_perm perm;
        int layer;
        mint_hf_name_result r = mint_hf_name_to_gguf(t.name, gguf, sizeof gguf, &perm, &layer);
        if (r == MINT_HF_NAME_UNKNOWN)
            return mint_fail(err, MINT_E_UNSUPPORTED,
                             "tensor '%s' is not a Llama tensor mint knows", t.name);
        if (layer >= 0 && (uint32_t)layer >= c->n_layer)
            return mint_fail(err, MINT_E_FORMAT,
                             "tensor '%s': layer %d, but num_hidden_layers is %u", t.name, layer,
                             c->n_layer);
        if (r == MINT_HF_NAME_DROP) continue;
        if (perm != MINT_HF_PERM_NONE) {
            mint_status st = permute_tensor(f, &t, t.name, perm, c, err);
            if (st != MINT_OK) return st;
        }
        t.name = mint_arena_strndup(&f->arena, gguf, strlen(gguf));
        if (!t.name) return mint_fail(err, MINT_E_NOMEM, "out of memory");
        f->t[kept++] = t;
    }
    f->n_tensors = kept;
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Metadata

static mint_status add_u32(mint_file *f, const char *key, uint32_t v, mint_err *err) {
    return mint_file_add_kv(f, key, MINT_VAL_U32, MINT_VAL_U32, 1, &v, err);
}

static mint_status add_f32(mint_file *f, const char *key, float v, mint_err *err) {
    return mint_file_add_kv(f, key, MINT_VAL_F32, MINT_VAL_F32, 1, &v, err);
}

static mint_status add_str(mint_file *f, const char *key, const char *s, mint_err *err) {
    return mint_file_add_kv(f, key, MINT_VAL_STRING, MINT_VAL_STRING, strlen(s), s, err);
}

// The folder's own name, as convert_hf_to_gguf.py falls back to it for general.name.
static void folder_name(const char *dir, char *out, size_t cap) {
    char real[PATH_MAX];
    const char *p = realpath(dir, real) ? real : dir;
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && p[b - 1] != '/') b--;
    snprintf(out, cap, "%.*s", (int)(n - b), p + b);
}

static mint_status add_llama_keys(mint_file *f, const char *dir, const hf_config *c,
                                  mint_err *err) {
    char name[256];
    folder_name(dir, name, sizeof name);
    mint_status st = add_str(f, "general.architecture", "llama", err);
    if (st == MINT_OK) st = add_str(f, "general.name", name, err);
    if (st == MINT_OK) st = add_u32(f, "llama.context_length", c->n_ctx, err);
    if (st == MINT_OK) st = add_u32(f, "llama.embedding_length", c->n_embd, err);
    if (st == MINT_OK) st = add_u32(f, "llama.feed_forward_length", c->n_ff, err);
    if (st == MINT_OK) st = add_u32(f, "llama.block_count", c->n_layer, err);
    if (st == MINT_OK) st = add_u32(f, "llama.attention.head_count", c->n_head, err);
    if (st == MINT_OK) st = add_u32(f, "llama.attention.head_count_kv", c->n_head_kv, err);
    if (st == MINT_OK) st = add_f32(f, "llama.attention.layer_norm_rms_epsilon", c->eps, err);
    if (st == MINT_OK && c->has_theta) st = add_f32(f, "llama.rope.freq_base", c->theta, err);
    if (st == MINT_OK) st = add_u32(f, "llama.rope.dimension_count", c->head_dim, err);
    if (st == MINT_OK && c->has_head_dim) {
        st = add_u32(f, "llama.attention.key_length", c->head_dim, err);
        if (st == MINT_OK) st = add_u32(f, "llama.attention.value_length", c->head_dim, err);
    }
    if (st == MINT_OK && c->rope_factor > 0) {
        st = add_str(f, "llama.rope.scaling.type", "linear", err);
        if (st == MINT_OK) st = add_f32(f, "llama.rope.scaling.factor", c->rope_factor, err);
    }
    if (st == MINT_OK) st = add_u32(f, "llama.vocab_size", c->n_vocab, err);
    return st;
}

// ---------------------------------------------------------------------------------------------
// Open

static mint_status open_folder(const char *dir, mint_file *f, mint_err *err) {
    char path[PATH_MAX];
    json_object *cfg = NULL;
    hf_config c;
    mint_status st = join(dir, CONFIG, path, err);
    if (st == MINT_OK) st = mint_json_load_file(path, MINT_HF_MAX_CONFIG, &cfg, err);
    if (st == MINT_OK && !json_object_is_type(cfg, json_type_object))
        st = mint_fail(err, MINT_E_FORMAT, "%s: the JSON is a %s, expected an object", CONFIG,
                       mint_json_type_name(cfg));
    if (st == MINT_OK) st = read_config(cfg, &c, err);
    if (st == MINT_OK) st = load_weights(f, dir, err);
    if (st == MINT_OK) st = map_tensors(f, &c, err);
    if (st == MINT_OK) st = mint_file_build_index(f, err);
    if (st == MINT_OK) {
        const mint_tdesc *emb = mint_file_find(f, "token_embd.weight");
        if (!emb)
            st = mint_fail(err, MINT_E_FORMAT, "no model.embed_tokens.weight in the checkpoint");
        else if (emb->n_dims != 2 || emb->ne[0] != c.n_embd)
            st = mint_fail(err, MINT_E_FORMAT,
                           "model.embed_tokens.weight has shape [%" PRId64 ", %" PRId64
                           "] (ggml order), expected [hidden_size %u, vocab]",
                           emb->ne[0], emb->ne[1], c.n_embd);
        else if (!c.has_vocab)
            c.n_vocab = (uint32_t)emb->ne[1];
        else if ((uint64_t)emb->ne[1] != c.n_vocab)
            st = mint_fail(err, MINT_E_FORMAT,
                           "%s: vocab_size %u, but model.embed_tokens.weight has %" PRId64 " rows",
                           CONFIG, c.n_vocab, emb->ne[1]);
    }
    if (st == MINT_OK) st = add_llama_keys(f, dir, &c, err);
    if (st == MINT_OK) st = mint_hf_add_tokenizer(f, dir, cfg, c.n_vocab, err);
    if (st == MINT_OK) st = mint_file_build_index(f, err);
    json_object_put(cfg);
    return st;
}

mint_status mint_hf_open(const char *dir, bool no_mmap, mint_file **out, mint_err *err) {
    *out = NULL;
    mint_file *f = mint_file_new(MINT_FORMAT_HF_DIR);
    if (!f) return mint_fail(err, MINT_E_NOMEM, "%s: out of memory", dir);
    f->no_mmap = no_mmap; // every shard is read into memory instead of mapped
    mint_status st = open_folder(dir, f, err);
    if (st != MINT_OK) {
        mint_err_prefix(err, "hf checkpoint %s", dir);
        mint_file_close(f);
        return st;
    }
    *out = f;
    return MINT_OK;
}
