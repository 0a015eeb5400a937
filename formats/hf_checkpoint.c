// hf_checkpoint.c - reading a Hugging Face checkpoint folder: config.json -> "<arch>.*" keys
// (hf_config.c), safetensors shards -> tensors with GGUF names and the operations the class's
// row of hf_arch.c asks for, tokenizer -> tokenizer.* keys (hf_tokenizer.c).
#include "formats/hf_checkpoint.h"

#include "base/error.h"
#include "base/strmap.h"
#include "formats/hf_config.h"
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

static const char *const CONFIG = "config.json";

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
// Tensors: GGUF names and the operations of the class's table (hf_arch.h)

// A converted copy of t's bytes that the file owns; t->data points to it.
static mint_status own_copy(mint_file *f, mint_tdesc *t, const char *hf_name, void **out,
                            mint_err *err) {
    *out = malloc(t->nbytes ? (size_t)t->nbytes : 1);
    if (!*out) return mint_fail(err, MINT_E_NOMEM, "tensor '%s': out of memory", hf_name);
    mint_status st = mint_file_own(f, *out, err);
    if (st == MINT_OK) t->data = *out;
    return st;
}

static mint_status permute_tensor(mint_file *f, mint_tdesc *t, const char *hf_name, unsigned ops,
                                  const mint_hf_config *c, mint_err *err) {
    uint32_t groups = ops & MINT_HF_OP_PERM_Q ? c->n_head : c->n_head_kv;
    uint64_t want = (uint64_t)groups * c->head_dim;
    // A weight [n_embd, rows] (ggml order) or a bias [rows].
    uint64_t rows = t->n_dims == 1 ? (uint64_t)t->ne[0] : (uint64_t)t->ne[1];
    if (t->n_dims > 2 || rows != want)
        return mint_fail(err, MINT_E_FORMAT,
                         "tensor '%s': %" PRIu64 " rows (n_dims %u), the config says %u heads x "
                         "%u = %" PRIu64,
                         hf_name, rows, t->n_dims, groups, c->head_dim, want);
    if (t->nbytes == 0) return MINT_OK;
    const void *src = t->data;
    void *dst;
    mint_status st = own_copy(f, t, hf_name, &dst, err);
    if (st == MINT_OK) mint_qk_permute(src, dst, rows, (size_t)(t->nbytes / rows), groups, true);
    return st;
}

// GPT-2's Conv1D weight [in, out] (PyTorch order; ggml ne = {out, in}) becomes [out, in].
static mint_status transpose_tensor(mint_file *f, mint_tdesc *t, const char *hf_name,
                                    mint_err *err) {
    const mint_st_dtype *dt = mint_st_dtype_of_type(t->type);
    if (t->n_dims != 2 || !dt)
        return mint_fail(err, MINT_E_FORMAT,
                         "tensor '%s': a Conv1D weight must be a 2-D float "
                         "matrix (n_dims %u)",
                         hf_name, t->n_dims);
    const void *src = t->data;
    void *dst;
    mint_status st = own_copy(f, t, hf_name, &dst, err);
    if (st != MINT_OK) return st;
    mint_hf_transpose(src, dst, (uint64_t)t->ne[1], (uint64_t)t->ne[0], dt->size);
    int64_t n0 = t->ne[0];
    t->ne[0] = t->ne[1];
    t->ne[1] = n0;
    return MINT_OK;
}

// Gemma's norms: HF keeps w, GGUF 1 + w.
static mint_status plus_one(mint_file *f, mint_tdesc *t, const char *hf_name, mint_err *err) {
    const mint_st_dtype *dt = mint_st_dtype_of_type(t->type);
    const void *src = t->data;
    void *dst;
    if (!dt)
        return mint_fail(err, MINT_E_FORMAT, "tensor '%s': a norm weight must be F32, F16 or BF16",
                         hf_name);
    mint_status st = own_copy(f, t, hf_name, &dst, err);
    if (st == MINT_OK && !mint_hf_add_scalar(src, dst, t->type, t->nbytes / dt->size, 1.0f))
        st = mint_fail(err, MINT_E_UNSUPPORTED, "tensor '%s': cannot add 1 to %s values", hf_name,
                       mint_type_name(t->type));
    return st;
}

static mint_status map_tensors(mint_file *f, const mint_hf_config *c, mint_err *err) {
    uint64_t kept = 0;
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        mint_tdesc t = f->t[i];
        char gguf[64];
        unsigned ops;
        int layer;
        mint_hf_name_result r = mint_hf_name_to_gguf(c->a, t.name, gguf, sizeof gguf, &ops, &layer);
        if (r == MINT_HF_NAME_UNKNOWN)
            return mint_fail(err, MINT_E_UNSUPPORTED, "tensor '%s' is not a %s tensor mint knows",
                             t.name, c->a->hf_class);
        if (layer >= 0 && (uint32_t)layer >= c->n_layer)
            return mint_fail(err, MINT_E_FORMAT,
                             "tensor '%s': layer %d, but num_hidden_layers is %u", t.name, layer,
                             c->n_layer);
        if (r == MINT_HF_NAME_DROP) continue;
        mint_status st = MINT_OK;
        if (ops & (MINT_HF_OP_PERM_Q | MINT_HF_OP_PERM_K))
            st = permute_tensor(f, &t, t.name, ops, c, err);
        if (st == MINT_OK && (ops & MINT_HF_OP_TRANSPOSE))
            st = transpose_tensor(f, &t, t.name, err);
        if (st == MINT_OK && (ops & MINT_HF_OP_PLUS_ONE)) st = plus_one(f, &t, t.name, err);
        if (st != MINT_OK) return st;
        t.name = mint_arena_strndup(&f->arena, gguf, strlen(gguf));
        if (!t.name) return mint_fail(err, MINT_E_NOMEM, "out of memory");
        f->t[kept++] = t;
    }
    f->n_tensors = kept;
    return MINT_OK;
}

// Phi-3's LongRoPE factors live in config.json; the converter writes them as two F32 tensors.
static mint_status add_rope_factors(mint_file *f, const mint_hf_config *c, mint_err *err) {
    if (!c->n_factors) return MINT_OK;
    mint_tdesc *t = realloc(f->t, (size_t)(f->n_tensors + 2) * sizeof *t);
    if (!t) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    f->t = t;
    const char *names[2] = {"rope_factors_long.weight", "rope_factors_short.weight"};
    const float *src[2] = {c->long_factors, c->short_factors};
    for (int k = 0; k < 2; k++) {
        size_t bytes = (size_t)c->n_factors * sizeof(float);
        float *data = malloc(bytes);
        if (!data) return mint_fail(err, MINT_E_NOMEM, "out of memory");
        mint_status st = mint_file_own(f, data, err);
        if (st != MINT_OK) return st;
        memcpy(data, src[k], bytes);
        mint_tdesc d = {0};
        d.name = names[k];
        d.type = MINT_TYPE_F32;
        d.n_dims = 1;
        d.ne[0] = c->n_factors;
        d.ne[1] = d.ne[2] = d.ne[3] = 1;
        d.nbytes = bytes;
        d.data = data;
        f->t[f->n_tensors++] = d;
    }
    return MINT_OK;
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

// The embedding's width must be the config's; its rows give vocab_size when the config has none.
static mint_status check_embedding(const mint_file *f, mint_hf_config *c, mint_err *err) {
    const mint_tdesc *emb = mint_file_find(f, "token_embd.weight");
    if (!emb)
        return mint_fail(err, MINT_E_FORMAT, "no token embedding (%s) in the checkpoint",
                         c->a->globals[0].hf);
    if (emb->n_dims != 2 || emb->ne[0] != c->n_embd)
        return mint_fail(err, MINT_E_FORMAT,
                         "%s has shape [%" PRId64 ", %" PRId64
                         "] (ggml order), expected [hidden_size %u, vocab]",
                         c->a->globals[0].hf, emb->ne[0], emb->ne[1], c->n_embd);
    if (!c->has_vocab)
        c->n_vocab = (uint32_t)emb->ne[1];
    else if ((uint64_t)emb->ne[1] != c->n_vocab)
        return mint_fail(err, MINT_E_FORMAT, "%s: vocab_size %u, but %s has %" PRId64 " rows",
                         CONFIG, c->n_vocab, c->a->globals[0].hf, emb->ne[1]);
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Open

static mint_status open_folder(const char *dir, mint_file *f, mint_err *err) {
    char path[PATH_MAX], name[256];
    json_object *cfg = NULL;
    mint_hf_config c = {0};
    mint_status st = join(dir, CONFIG, path, err);
    if (st == MINT_OK) st = mint_json_load_file(path, MINT_HF_MAX_CONFIG, &cfg, err);
    if (st == MINT_OK && !json_object_is_type(cfg, json_type_object))
        st = mint_fail(err, MINT_E_FORMAT, "%s: the JSON is a %s, expected an object", CONFIG,
                       mint_json_type_name(cfg));
    if (st == MINT_OK) st = mint_hf_read_config(cfg, &c, err);
    if (st == MINT_OK) st = load_weights(f, dir, err);
    if (st == MINT_OK) st = map_tensors(f, &c, err);
    if (st == MINT_OK) st = add_rope_factors(f, &c, err);
    if (st == MINT_OK) st = mint_file_build_index(f, err);
    if (st == MINT_OK) st = check_embedding(f, &c, err);
    if (st == MINT_OK) {
        folder_name(dir, name, sizeof name);
        st = mint_hf_add_arch_keys(f, name, &c, err);
    }
    if (st == MINT_OK) st = mint_hf_add_tokenizer(f, dir, cfg, c.a, c.n_vocab, err);
    if (st == MINT_OK) st = mint_file_build_index(f, err);
    mint_hf_config_free(&c);
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
        mint_err_one_line(err); // JSON strings (class names, keys) may hold escaped control bytes
        mint_file_close(f);
        return st;
    }
    *out = f;
    return MINT_OK;
}
