// hf_bpe.c - byte-level BPE tokenizer.json: naming its pre-tokenizer and writing one from a
// "gpt2" GGUF vocabulary (hf_bpe.h). Reading the vocabulary itself is hf_tokenizer.c's.
#include "formats/hf_bpe.h"

#include "base/error.h"
#include "formats/json_doc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The Split regexes as tokenizer.json spells them (after JSON unescaping). They are the regexes
// runtime/text/pretokenize.c runs for the same names, in HF's (?i:...) form.
#define CONTRACTIONS "(?i:'s|'t|'re|'ve|'m|'ll|'d)"
#define RX_QWEN2                                                                                   \
    CONTRACTIONS                                                                                   \
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"          \
    "\\s+(?!\\S)|\\s+"
#define RX_LLAMA3                                                                                  \
    CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"      \
                 "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

static const struct pre_shape {
    const char *pre;   // tokenizer.ggml.pre
    const char *regex; // the Split regex before a regex-less ByteLevel; NULL: ByteLevel alone
} shapes[] = {
    {"gpt-2", NULL},
    {"qwen2", RX_QWEN2},
    {"llama-bpe", RX_LLAMA3},
};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };

static const char *type_of(json_object *o) {
    json_object *t = NULL;
    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "type", &t) ||
        !json_object_is_type(t, json_type_string))
        return "";
    return json_object_get_string(t);
}

// A ByteLevel pre-tokenizer's use_regex (true when absent, as in HF).
static bool uses_regex(json_object *bl) {
    json_object *u = NULL;
    return !json_object_object_get_ex(bl, "use_regex", &u) || json_object_get_boolean(u);
}

// The Split's regex when `split` is {"type": "Split", "pattern": {"Regex": R}, "behavior":
// "Isolated", "invert": false}, else NULL.
static const char *split_regex(json_object *split) {
    json_object *pat = NULL, *rx = NULL, *beh = NULL, *inv = NULL;
    if (strcmp(type_of(split), "Split") != 0 ||
        !json_object_object_get_ex(split, "pattern", &pat) ||
        !json_object_object_get_ex(pat, "Regex", &rx) || !json_object_is_type(rx, json_type_string))
        return NULL;
    if (!json_object_object_get_ex(split, "behavior", &beh) ||
        strcmp(json_object_get_string(beh), "Isolated") != 0)
        return NULL;
    if (json_object_object_get_ex(split, "invert", &inv) && json_object_get_boolean(inv))
        return NULL;
    return json_object_get_string(rx);
}

mint_status mint_hf_bpe_pre_name(json_object *tj, const char **pre, mint_err *err) {
    json_object *p = NULL;
    const char *regex = NULL;
    bool ok = false;
    if (json_object_object_get_ex(tj, "pre_tokenizer", &p)) {
        if (strcmp(type_of(p), "ByteLevel") == 0) {
            ok = uses_regex(p);
        } else if (strcmp(type_of(p), "Sequence") == 0) {
            json_object *list = NULL;
            if (json_object_object_get_ex(p, "pretokenizers", &list) &&
                json_object_is_type(list, json_type_array) && json_object_array_length(list) == 2 &&
                strcmp(type_of(json_object_array_get_idx(list, 1)), "ByteLevel") == 0 &&
                !uses_regex(json_object_array_get_idx(list, 1))) {
                regex = split_regex(json_object_array_get_idx(list, 0));
                ok = regex != NULL;
            }
        }
    }
    for (int i = 0; ok && i < N_SHAPES; i++) {
        if ((regex == NULL) != (shapes[i].regex == NULL)) continue;
        if (regex && strcmp(regex, shapes[i].regex) != 0) continue;
        *pre = shapes[i].pre;
        return MINT_OK;
    }
    const char *shown = p ? json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN) : "none";
    return mint_fail(err, MINT_E_UNSUPPORTED,
                     "tokenizer.json: byte-level BPE with the pre-tokenizer %.120s%s is not one "
                     "mint can name (it knows GPT-2's ByteLevel, Qwen2's and Llama 3's Split "
                     "regexes)",
                     shown, strlen(shown) > 120 ? "..." : "");
}

// ---------------------------------------------------------------------------------------------
// Writing

static json_object *byte_level(bool regex) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "type", json_object_new_string("ByteLevel"));
    json_object_object_add(o, "add_prefix_space", json_object_new_boolean(0));
    json_object_object_add(o, "trim_offsets", json_object_new_boolean(!regex ? 0 : 1));
    json_object_object_add(o, "use_regex", json_object_new_boolean(regex));
    return o;
}

static json_object *pre_tokenizer(const struct pre_shape *s) {
    if (!s->regex) return byte_level(true);
    json_object *split = json_object_new_object(), *pat = json_object_new_object();
    json_object_object_add(pat, "Regex", json_object_new_string(s->regex));
    json_object_object_add(split, "type", json_object_new_string("Split"));
    json_object_object_add(split, "pattern", pat);
    json_object_object_add(split, "behavior", json_object_new_string("Isolated"));
    json_object_object_add(split, "invert", json_object_new_boolean(0));
    json_object *list = json_object_new_array();
    json_object_array_add(list, split);
    json_object_array_add(list, byte_level(false));
    json_object *seq = json_object_new_object();
    json_object_object_add(seq, "type", json_object_new_string("Sequence"));
    json_object_object_add(seq, "pretokenizers", list);
    return seq;
}

static const mint_kv *array_kv(const mint_file *f, const char *key, mint_value_type elem,
                               uint64_t n) {
    const mint_kv *kv = mint_file_find_kv(f, key);
    if (!kv || kv->type != MINT_VAL_ARRAY || kv->elem_type != elem) return NULL;
    return n == UINT64_MAX || kv->n == n ? kv : NULL;
}

enum { T_NORMAL = 1, T_UNKNOWN = 2, T_CONTROL = 3, T_USER = 4, T_UNUSED = 5, T_BYTE = 6 };

// model.vocab (NORMAL, UNKNOWN and BYTE tokens) and added_tokens (CONTROL and USER_DEFINED).
// UNUSED tokens are left out: the reader pads their ids as "[PAD<id>]", as the converter does.
static mint_status add_vocab(json_object *model, json_object *root, const mint_kv *tok,
                             const mint_kv *typ, mint_err *err) {
    json_object *vocab = json_object_new_object(), *added = json_object_new_array();
    json_object_object_add(model, "vocab", vocab);
    json_object_object_add(root, "added_tokens", added);
    const mint_str *text = tok->arr;
    const int32_t *type = typ->arr;
    for (uint64_t i = 0; i < tok->n; i++) {
        if (type[i] == T_UNUSED) continue;
        // json-c's object keys are C strings: a token with a NUL byte cannot be a key.
        if (memchr(text[i].p, 0, text[i].len))
            return mint_fail(err, MINT_E_UNSUPPORTED,
                             "hf export: token %" PRIu64 " has a NUL byte; tokenizer.json cannot "
                             "hold it",
                             i);
        json_object *s = json_object_new_string_len(text[i].p, (int)text[i].len);
        if (type[i] != T_CONTROL && type[i] != T_USER) {
            json_object_object_add(vocab, json_object_get_string(s),
                                   json_object_new_int64((int64_t)i));
            json_object_put(s);
            continue;
        }
        json_object *a = json_object_new_object();
        json_object_object_add(a, "id", json_object_new_int64((int64_t)i));
        json_object_object_add(a, "content", s);
        json_object_object_add(a, "single_word", json_object_new_boolean(0));
        json_object_object_add(a, "lstrip", json_object_new_boolean(0));
        json_object_object_add(a, "rstrip", json_object_new_boolean(0));
        json_object_object_add(a, "normalized", json_object_new_boolean(type[i] == T_USER));
        json_object_object_add(a, "special", json_object_new_boolean(type[i] == T_CONTROL));
        json_object_array_add(added, a);
    }
    return MINT_OK;
}

// GGUF merges "a b" -> HF's [a, b] pairs (split at the first space: byte-level pieces have none).
static mint_status add_merges(json_object *model, const mint_kv *merges, mint_err *err) {
    json_object *list = json_object_new_array();
    json_object_object_add(model, "merges", list);
    const mint_str *m = merges ? merges->arr : NULL;
    for (uint64_t i = 0; merges && i < merges->n; i++) {
        const char *sp = memchr(m[i].p, ' ', m[i].len);
        if (!sp || sp == m[i].p || sp + 1 == m[i].p + m[i].len)
            return mint_fail(err, MINT_E_FORMAT, "hf export: merge %" PRIu64 " is not \"a b\"", i);
        json_object *pair = json_object_new_array();
        json_object_array_add(pair, json_object_new_string_len(m[i].p, (int)(sp - m[i].p)));
        json_object_array_add(pair, json_object_new_string_len(
                                        sp + 1, (int)(m[i].len - (uint64_t)(sp + 1 - m[i].p))));
        json_object_array_add(list, pair);
    }
    return MINT_OK;
}

mint_status mint_hf_bpe_write(const mint_file *f, const char *dir, mint_err *err) {
    const mint_kv *pre = mint_file_find_kv(f, "tokenizer.ggml.pre");
    const struct pre_shape *shape = NULL;
    for (int i = 0; pre && pre->type == MINT_VAL_STRING && i < N_SHAPES; i++)
        if (strcmp(pre->str, shapes[i].pre) == 0) shape = &shapes[i];
    if (!shape)
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "hf export: tokenizer.ggml.pre '%.64s' has no tokenizer.json "
                         "pre-tokenizer mint can write (gpt-2, qwen2, llama-bpe)",
                         pre && pre->type == MINT_VAL_STRING ? pre->str : "(none)");
    const mint_kv *tok = array_kv(f, "tokenizer.ggml.tokens", MINT_VAL_STRING, UINT64_MAX);
    const mint_kv *typ =
        tok ? array_kv(f, "tokenizer.ggml.token_type", MINT_VAL_I32, tok->n) : NULL;
    const mint_kv *merges = array_kv(f, "tokenizer.ggml.merges", MINT_VAL_STRING, UINT64_MAX);
    if (!tok || !typ)
        return mint_fail(err, MINT_E_FORMAT,
                         "hf export: the vocabulary lacks tokens or token types of the same "
                         "length");
    json_object *root = json_object_new_object(), *model = json_object_new_object();
    if (!root || !model) {
        json_object_put(root);
        json_object_put(model);
        return mint_fail(err, MINT_E_NOMEM, "hf export: out of memory");
    }
    json_object_object_add(root, "version", json_object_new_string("1.0"));
    json_object_object_add(root, "normalizer", NULL);
    json_object_object_add(root, "pre_tokenizer", pre_tokenizer(shape));
    json_object_object_add(root, "post_processor", byte_level(false));
    json_object_object_add(root, "decoder", byte_level(true));
    json_object_object_add(model, "type", json_object_new_string("BPE"));
    json_object_object_add(model, "dropout", NULL);
    json_object_object_add(model, "unk_token", NULL);
    json_object_object_add(model, "byte_fallback", json_object_new_boolean(0));
    json_object_object_add(root, "model", model);
    mint_status st = add_vocab(model, root, tok, typ, err);
    if (st == MINT_OK) st = add_merges(model, merges, err);
    if (st == MINT_OK) st = mint_json_write_file(root, dir, "tokenizer.json", err);
    json_object_put(root);
    return st;
}
