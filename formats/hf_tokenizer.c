// hf_tokenizer.c - the tokenizer files of a Hugging Face checkpoint as GGUF tokenizer.*
// metadata, following convert_hf_to_gguf.py (_create_vocab_sentencepiece, gguf-py SpecialVocab):
//
// - tokenizer.model: pieces, scores and types as SentencePiece reports them (USER_DEFINED counts
//   as NORMAL, as the converter's type mapping has no case for it); the list is padded to
//   vocab_size with "[PAD<id>]" (score -10000, UNUSED); more pieces than vocab_size is an error.
//   added_tokens.json entries become USER_DEFINED (score -1000); tokenizer_config.json's
//   added_tokens_decoder entries become CONTROL when "special" (or when they look special, e.g.
//   <|...|>) and USER_DEFINED otherwise (U+2581 turned back into a space), score -1000.
// - tokenizer.json (only when there is no tokenizer.model): a SentencePiece-style BPE vocabulary
//   (model.type "BPE" with byte_fallback) or a Unigram one. Unigram pieces keep their scores.
//   BPE has merges instead of scores; a piece made by the merge of rank r gets score -r, so
//   llama.cpp's SentencePiece-BPE merging (best score first) applies the merges in HF's order.
//   Pieces no merge makes get 0 when they are a single character, a <0xXX> byte or special, and
//   -1e9 otherwise (merged last). Limits: ties between merges making the same piece follow the
//   leftmost-first rule of SentencePiece, not HF's rank order; WordPiece and WordLevel are
//   refused.
// - byte-level BPE tokenizer.json (model.type "BPE" without byte_fallback: GPT-2, Qwen2,
//   Llama 3): tokenizer.ggml.model "gpt2", pieces as spelled, merges in rank order, no scores,
//   tokenizer.ggml.pre named from the pre-tokenizer's shape (hf_bpe.h; unknown ones refused).
// - special ids: tokenizer_config.json "<x>_token" found among tokenizer.json's added_tokens,
//   else config.json "<x>_token_id", else the SentencePiece model's own ids; ids >= vocab_size
//   are skipped. add_bos_token / add_eos_token and chat_template come from tokenizer_config.json;
//   add_space_prefix from its add_prefix_space, else from the model (add_dummy_prefix).
#include "formats/hf_checkpoint.h"

#include "base/error.h"
#include "base/strmap.h"
#include "formats/hf_bpe.h"
#include "formats/json_doc.h"
#include "formats/sentencepiece.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct vocab {
    mint_str *text;   // [n] piece bytes (into the JSON / SPM model, or the arena)
    float *score;     // [n]
    int32_t *type;    // [n] GGUF token types
    uint32_t n;       // vocab_size
    int32_t unk;      // the tokenizer model's own special ids; -1 = none
    int32_t bos;      //
    int32_t eos;      //
    int32_t pad;      //
    int add_prefix;   // the model prepends U+2581: 1 / 0, -1 unknown
    bool byte_level;  // byte-level BPE (tokenizer.ggml.model "gpt2"): merges, no scores
    const char *pre;  // its tokenizer.ggml.pre (hf_bpe.h)
    mint_str *merges; // [n_merges] "a b" (into the JSON or the arena)
    uint64_t n_merges;
    mint_arena arena; // owns generated texts
} vocab;

enum { T_NORMAL = 1, T_UNKNOWN = 2, T_CONTROL = 3, T_USER = 4, T_UNUSED = 5, T_BYTE = 6 };

static mint_status vocab_init(vocab *v, uint32_t n, mint_err *err) {
    memset(v, 0, sizeof *v);
    v->n = n;
    v->unk = v->bos = v->eos = v->pad = -1;
    v->add_prefix = -1;
    v->text = calloc(n ? n : 1, sizeof *v->text);
    v->score = calloc(n ? n : 1, sizeof *v->score);
    v->type = calloc(n ? n : 1, sizeof *v->type);
    if (!v->text || !v->score || !v->type) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++) {
        char buf[32];
        int len = snprintf(buf, sizeof buf, "[PAD%" PRIu32 "]", i);
        char *p = mint_arena_strndup(&v->arena, buf, (size_t)len);
        if (!p) return mint_fail(err, MINT_E_NOMEM, "out of memory");
        v->text[i] = (mint_str){p, (uint64_t)len};
        v->score[i] = -10000.0f;
        v->type[i] = T_UNUSED;
    }
    return MINT_OK;
}

static void vocab_free(vocab *v) {
    free(v->merges);
    free(v->text);
    free(v->score);
    free(v->type);
    mint_arena_free(&v->arena);
}

static bool file_exists(const char *dir, const char *name, char *path) {
    struct stat st;
    int n = snprintf(path, PATH_MAX, "%s/%s", dir, name);
    return n > 0 && n < PATH_MAX && stat(path, &st) == 0;
}

static bool is_byte_piece(const char *s, size_t n) {
    static const char hex[] = "0123456789abcdefABCDEF";
    return n == 6 && memcmp(s, "<0x", 3) == 0 && s[5] == '>' && s[3] && s[4] && strchr(hex, s[3]) &&
           strchr(hex, s[4]);
}

static bool has_prefix(const char *s, size_t n, const char *p) {
    size_t m = strlen(p);
    return n >= m && memcmp(s, p, m) == 0;
}

static bool has_suffix(const char *s, size_t n, const char *p) {
    size_t m = strlen(p);
    return n >= m && memcmp(s + n - m, p, m) == 0;
}

// convert_hf_to_gguf.py's does_token_look_special: added tokens some models forget to mark.
static bool looks_special(const char *s, size_t n) {
    static const char *const exact[] = {"<pad>", "<mask>", "<2mass>", "[@BOS@]"};
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (n == strlen(exact[i]) && memcmp(s, exact[i], n) == 0) return true;
    return (has_prefix(s, n, "<|") && has_suffix(s, n, "|>")) ||
           (has_prefix(s, n, "<\xef\xbd\x9c") && has_suffix(s, n, "\xef\xbd\x9c>")) ||
           (has_prefix(s, n, "<unused") && has_suffix(s, n, ">"));
}

// An added token's text: user-defined ones get U+2581 turned back into a space.
static mint_status set_added(vocab *v, uint32_t id, const char *s, size_t n, bool special,
                             mint_err *err) {
    if (special || looks_special(s, n)) {
        v->type[id] = T_CONTROL;
        v->text[id] = (mint_str){s, n};
    } else {
        char *out = mint_arena_alloc(&v->arena, n + 1);
        if (!out) return mint_fail(err, MINT_E_NOMEM, "out of memory");
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (i + 2 < n && memcmp(s + i, "\xe2\x96\x81", 3) == 0) {
                out[k++] = ' ';
                i += 2;
            } else {
                out[k++] = s[i];
            }
        }
        out[k] = '\0';
        v->type[id] = T_USER;
        v->text[id] = (mint_str){out, k};
    }
    v->score[id] = -1000.0f;
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// tokenizer.model (+ added_tokens.json, added_tokens_decoder)

static mint_status load_spm(vocab *v, const char *path, mint_spm_model *spm, mint_err *err) {
    mint_status st = mint_spm_load(path, spm, err);
    if (st != MINT_OK) return st;
    if (spm->n_pieces > v->n)
        return mint_fail(err, MINT_E_FORMAT,
                         "%s has %" PRIu32 " pieces, more than vocab_size %" PRIu32, path,
                         spm->n_pieces, v->n);
    for (uint32_t i = 0; i < spm->n_pieces; i++) {
        const mint_spm_piece *p = &spm->pieces[i];
        v->text[i] = p->text;
        v->score[i] = p->score;
        v->type[i] = p->type == MINT_SPM_USER_DEFINED ? T_NORMAL : p->type;
    }
    v->unk = spm->unk_id;
    v->bos = spm->bos_id;
    v->eos = spm->eos_id;
    v->pad = spm->pad_id;
    v->add_prefix = spm->add_dummy_prefix;
    return MINT_OK;
}

static mint_status apply_added_tokens_json(vocab *v, json_object *added, const char *path,
                                           mint_err *err) {
    if (!json_object_is_type(added, json_type_object))
        return mint_fail(err, MINT_E_FORMAT, "%s: expected an object of token -> id", path);
    json_object_object_foreach(added, text, idv) {
        int64_t id = json_object_is_type(idv, json_type_int) ? json_object_get_int64(idv) : -1;
        if (id < 0)
            return mint_fail(err, MINT_E_FORMAT, "%s: token '%.64s' has id %s", path, text,
                             json_object_to_json_string(idv));
        if (id >= v->n) continue; // the converter skips these too
        v->text[id] = (mint_str){text, strlen(text)};
        v->score[id] = -1000.0f;
        v->type[id] = T_USER;
    }
    return MINT_OK;
}

static mint_status apply_added_tokens_decoder(vocab *v, json_object *tc, mint_err *err) {
    static const char WHERE[] = "tokenizer_config.json added_tokens_decoder";
    json_object *dec = NULL;
    if (!tc || !json_object_object_get_ex(tc, "added_tokens_decoder", &dec)) return MINT_OK;
    if (!json_object_is_type(dec, json_type_object))
        return mint_fail(err, MINT_E_FORMAT,
                         "tokenizer_config.json: \"added_tokens_decoder\" is not an object");
    json_object_object_foreach(dec, key, data) {
        char *end;
        unsigned long long id = strtoull(key, &end, 10);
        const char *content;
        size_t len;
        bool special = false;
        if (key[0] < '0' || key[0] > '9' || *end != '\0')
            return mint_fail(err, MINT_E_FORMAT,
                             "tokenizer_config.json: added_tokens_decoder key '%.32s' is not an "
                             "id",
                             key);
        mint_status st =
            mint_json_get_str(data, "content", "tokenizer_config.json", &content, &len, err);
        if (st == MINT_OK) {
            st = mint_json_get_bool(data, "special", "tokenizer_config.json", &special, err);
            if (st == MINT_E_NOT_FOUND) st = MINT_OK;
        }
        if (st == MINT_E_NOT_FOUND) // keep the message, make it a format error
            st = mint_fail(err, MINT_E_FORMAT, "%s: an added token lacks \"id\" or \"content\"",
                           WHERE);
        if (st != MINT_OK) return st;
        if (id >= v->n) continue;
        st = set_added(v, (uint32_t)id, content, len, special, err);
        if (st != MINT_OK) return st;
    }
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// tokenizer.json

static mint_status tj_added_tokens(vocab *v, json_object *tj, mint_err *err) {
    static const char WHERE[] = "tokenizer.json added_tokens";
    json_object *added = NULL;
    if (!json_object_object_get_ex(tj, "added_tokens", &added) ||
        json_object_is_type(added, json_type_null))
        return MINT_OK;
    if (!json_object_is_type(added, json_type_array))
        return mint_fail(err, MINT_E_FORMAT, "tokenizer.json: \"added_tokens\" is not a list");
    size_t n = json_object_array_length(added);
    for (size_t i = 0; i < n; i++) {
        json_object *a = json_object_array_get_idx(added, i);
        int64_t id;
        const char *content;
        size_t len;
        bool special = false;
        mint_status st =
            mint_json_get_int(a, "id", 0, INT32_MAX, "tokenizer.json added_tokens", &id, err);
        if (st == MINT_OK)
            st =
                mint_json_get_str(a, "content", "tokenizer.json added_tokens", &content, &len, err);
        if (st == MINT_OK) {
            st = mint_json_get_bool(a, "special", "tokenizer.json added_tokens", &special, err);
            if (st == MINT_E_NOT_FOUND) st = MINT_OK;
        }
        if (st == MINT_E_NOT_FOUND) // keep the message, make it a format error
            st = mint_fail(err, MINT_E_FORMAT, "%s: an added token lacks \"id\" or \"content\"",
                           WHERE);
        if (st != MINT_OK) return st;
        if (id >= v->n) continue;
        st = set_added(v, (uint32_t)id, content, len, special, err);
        if (st != MINT_OK) return st;
    }
    return MINT_OK;
}

static bool one_utf8_char(const char *s, size_t n) {
    unsigned char c = (unsigned char)s[0];
    size_t want = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    return n == want;
}

// One merge of rank r: "left right" (older files) or ["left", "right"].
static mint_status merge_result(json_object *m, char *buf, size_t cap, size_t *len) {
    const char *a, *b;
    size_t la, lb;
    if (json_object_is_type(m, json_type_string)) {
        const char *s = json_object_get_string(m);
        const char *sp = strchr(s, ' ');
        if (!sp) return MINT_E_FORMAT;
        a = s;
        la = (size_t)(sp - s);
        b = sp + 1;
        lb = strlen(b);
    } else if (json_object_is_type(m, json_type_array) && json_object_array_length(m) == 2 &&
               json_object_is_type(json_object_array_get_idx(m, 0), json_type_string) &&
               json_object_is_type(json_object_array_get_idx(m, 1), json_type_string)) {
        a = json_object_get_string(json_object_array_get_idx(m, 0));
        b = json_object_get_string(json_object_array_get_idx(m, 1));
        la = strlen(a);
        lb = strlen(b);
    } else {
        return MINT_E_FORMAT;
    }
    if (la + lb >= cap) return MINT_E_LIMIT;
    memcpy(buf, a, la);
    memcpy(buf + la, b, lb);
    *len = la + lb;
    return MINT_OK;
}

// Byte-level BPE (GPT-2, Qwen2, Llama 3): pieces are kept in their byte-to-unicode spelling, as
// the converter writes them; every piece is NORMAL (added tokens are typed afterwards) and the
// merges are kept in rank order as "a b" (a space inside a part of the list form becomes U+0120,
// as gguf-py writes it).
static mint_status tj_byte_level(vocab *v, json_object *tj, json_object *model, mint_err *err) {
    const char *F = "tokenizer.json";
    json_object *vocab_o = NULL, *merges = NULL;
    mint_status st = mint_hf_bpe_pre_name(tj, &v->pre, err);
    if (st != MINT_OK) return st;
    if (!json_object_object_get_ex(model, "vocab", &vocab_o) ||
        !json_object_is_type(vocab_o, json_type_object))
        return mint_fail(err, MINT_E_FORMAT, "%s: model.vocab is missing or not an object", F);
    json_object_object_foreach(vocab_o, piece, idv) {
        int64_t id = json_object_is_type(idv, json_type_int) ? json_object_get_int64(idv) : -1;
        if (id < 0 || id >= v->n)
            return mint_fail(err, MINT_E_FORMAT, "%s: piece '%.64s' has id %s, outside 0..%" PRIu32,
                             F, piece, json_object_to_json_string(idv), v->n - 1);
        if (v->type[id] != T_UNUSED)
            return mint_fail(err, MINT_E_FORMAT, "%s: pieces '%.64s' and '%.64s' share id %" PRId64,
                             F, v->text[id].p, piece, id);
        v->text[id] = (mint_str){piece, strlen(piece)};
        v->type[id] = T_NORMAL;
        v->score[id] = 0.0f;
    }
    v->byte_level = true;
    if (!json_object_object_get_ex(model, "merges", &merges) ||
        json_object_is_type(merges, json_type_null))
        return MINT_OK;
    if (!json_object_is_type(merges, json_type_array))
        return mint_fail(err, MINT_E_FORMAT, "%s: model.merges is not a list", F);
    size_t n = json_object_array_length(merges);
    v->merges = calloc(n ? n : 1, sizeof *v->merges);
    if (!v->merges) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    for (size_t r = 0; r < n; r++) {
        json_object *m = json_object_array_get_idx(merges, r);
        if (json_object_is_type(m, json_type_string)) {
            v->merges[r] =
                (mint_str){json_object_get_string(m), (uint64_t)json_object_get_string_len(m)};
            continue;
        }
        if (!json_object_is_type(m, json_type_array) || json_object_array_length(m) != 2 ||
            !json_object_is_type(json_object_array_get_idx(m, 0), json_type_string) ||
            !json_object_is_type(json_object_array_get_idx(m, 1), json_type_string))
            return mint_fail(err, MINT_E_FORMAT, "%s: merge %zu is not \"a b\" or [a, b]", F, r);
        const char *part[2];
        size_t len[2], total = 1;
        for (int k = 0; k < 2; k++) {
            json_object *p = json_object_array_get_idx(m, (size_t)k);
            part[k] = json_object_get_string(p);
            len[k] = (size_t)json_object_get_string_len(p);
            total += 2 * len[k]; // a space may become two bytes
        }
        char *out = mint_arena_alloc(&v->arena, total + 1);
        if (!out) return mint_fail(err, MINT_E_NOMEM, "out of memory");
        size_t o = 0;
        for (int k = 0; k < 2; k++) {
            if (k) out[o++] = ' ';
            for (size_t i = 0; i < len[k]; i++) {
                if (part[k][i] == ' ') {
                    out[o++] = (char)0xc4; // U+0120
                    out[o++] = (char)0xa0;
                } else {
                    out[o++] = part[k][i];
                }
            }
        }
        out[o] = '\0';
        v->merges[r] = (mint_str){out, o};
    }
    v->n_merges = n;
    return MINT_OK;
}

static mint_status tj_bpe(vocab *v, json_object *tj, json_object *model, mint_err *err) {
    const char *F = "tokenizer.json";
    bool byte_fallback = false;
    json_object *vocab_o = NULL, *merges = NULL;
    mint_status st = mint_json_get_bool(model, "byte_fallback", F, &byte_fallback, err);
    if (st != MINT_OK && st != MINT_E_NOT_FOUND) return st;
    if (!byte_fallback) return tj_byte_level(v, tj, model, err);
    if (!json_object_object_get_ex(model, "vocab", &vocab_o) ||
        !json_object_is_type(vocab_o, json_type_object))
        return mint_fail(err, MINT_E_FORMAT, "%s: model.vocab is missing or not an object", F);
    mint_strmap ids;
    if (mint_strmap_init(&ids, (size_t)json_object_object_length(vocab_o)) != MINT_OK)
        return mint_fail(err, MINT_E_NOMEM, "out of memory");
    bool *scored = calloc(v->n ? v->n : 1, 1);
    if (!scored) st = mint_fail(err, MINT_E_NOMEM, "out of memory");
    json_object_object_foreach(vocab_o, piece, idv) {
        if (st != MINT_OK) break;
        int64_t id = json_object_is_type(idv, json_type_int) ? json_object_get_int64(idv) : -1;
        size_t len = strlen(piece);
        if (id < 0 || id >= v->n) {
            st = mint_fail(err, MINT_E_FORMAT, "%s: piece '%.64s' has id %s, outside 0..%" PRIu32,
                           F, piece, json_object_to_json_string(idv), v->n - 1);
        } else if (v->type[id] != T_UNUSED) {
            st = mint_fail(err, MINT_E_FORMAT, "%s: pieces '%.64s' and '%.64s' share id %" PRId64,
                           F, v->text[id].p, piece, id);
        } else {
            v->text[id] = (mint_str){piece, len};
            v->type[id] = is_byte_piece(piece, len) ? T_BYTE : T_NORMAL;
            int32_t prev;
            if (mint_strmap_put(&ids, piece, len, (int32_t)id, &prev) == MINT_E_NOMEM)
                st = mint_fail(err, MINT_E_NOMEM, "out of memory");
        }
    }
    if (st == MINT_OK && json_object_object_get_ex(model, "merges", &merges) &&
        !json_object_is_type(merges, json_type_null)) {
        if (!json_object_is_type(merges, json_type_array)) {
            st = mint_fail(err, MINT_E_FORMAT, "%s: model.merges is not a list", F);
        } else {
            size_t n = json_object_array_length(merges);
            char buf[1024];
            for (size_t r = 0; r < n && st == MINT_OK; r++) {
                size_t len;
                mint_status ms =
                    merge_result(json_object_array_get_idx(merges, r), buf, sizeof buf, &len);
                if (ms == MINT_E_FORMAT)
                    st = mint_fail(err, MINT_E_FORMAT, "%s: merge %zu is not \"a b\" or [a, b]", F,
                                   r);
                if (ms != MINT_OK) continue;
                int32_t id = mint_strmap_get(&ids, buf, len);
                if (id < 0 || scored[id]) continue;
                v->score[id] = -(float)r;
                scored[id] = true;
            }
        }
    }
    for (uint32_t i = 0; i < v->n && st == MINT_OK; i++) {
        if (scored[i] || v->type[i] == T_UNUSED) continue;
        bool plain = v->type[i] == T_BYTE || one_utf8_char(v->text[i].p, v->text[i].len);
        v->score[i] = plain ? 0.0f : -1e9f;
    }
    const char *unk;
    if (st == MINT_OK && mint_json_get_str(model, "unk_token", F, &unk, NULL, NULL) == MINT_OK)
        v->unk = mint_strmap_get(&ids, unk, strlen(unk));
    if (v->unk >= 0) v->type[v->unk] = T_UNKNOWN;
    free(scored);
    mint_strmap_free(&ids);
    return st;
}

static mint_status tj_unigram(vocab *v, json_object *model, mint_err *err) {
    const char *F = "tokenizer.json";
    json_object *list = NULL;
    if (!json_object_object_get_ex(model, "vocab", &list) ||
        !json_object_is_type(list, json_type_array))
        return mint_fail(err, MINT_E_FORMAT, "%s: Unigram model.vocab is not a list", F);
    size_t n = json_object_array_length(list);
    if (n > v->n)
        return mint_fail(err, MINT_E_FORMAT, "%s has %zu pieces, more than vocab_size %" PRIu32, F,
                         n, v->n);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(list, i), *p, *s;
        if (!json_object_is_type(e, json_type_array) || json_object_array_length(e) != 2 ||
            !json_object_is_type(p = json_object_array_get_idx(e, 0), json_type_string) ||
            (!json_object_is_type(s = json_object_array_get_idx(e, 1), json_type_double) &&
             !json_object_is_type(s, json_type_int)))
            return mint_fail(err, MINT_E_FORMAT,
                             "%s: Unigram vocab entry %zu is not [piece, "
                             "score]",
                             F, i);
        size_t len = (size_t)json_object_get_string_len(p);
        v->text[i] = (mint_str){json_object_get_string(p), len};
        v->score[i] = (float)json_object_get_double(s);
        v->type[i] = is_byte_piece(v->text[i].p, len) ? T_BYTE : T_NORMAL;
    }
    int64_t unk;
    if (mint_json_get_int(model, "unk_id", 0, (int64_t)n - 1, F, &unk, NULL) == MINT_OK) {
        v->unk = (int32_t)unk;
        v->type[unk] = T_UNKNOWN;
    }
    return MINT_OK;
}

// Whether the normalizer or pre-tokenizer prepends U+2581 (Llama: Prepend; newer: Metaspace).
static int tj_add_prefix(json_object *tj) {
    json_object *norm = NULL, *pre = NULL;
    const char *s = json_object_object_get_ex(tj, "normalizer", &norm)
                        ? json_object_to_json_string_ext(norm, JSON_C_TO_STRING_PLAIN)
                        : "";
    if (strstr(s, "\"Prepend\"")) return 1;
    s = json_object_object_get_ex(tj, "pre_tokenizer", &pre)
            ? json_object_to_json_string_ext(pre, JSON_C_TO_STRING_PLAIN)
            : "";
    if (strstr(s, "\"Metaspace\""))
        return strstr(s, "\"prepend_scheme\":\"never\"") == NULL &&
               strstr(s, "\"add_prefix_space\":false") == NULL;
    return 0;
}

static mint_status load_tokenizer_json(vocab *v, json_object *tj, mint_err *err) {
    json_object *model = NULL;
    const char *type = NULL;
    if (!json_object_object_get_ex(tj, "model", &model) ||
        mint_json_get_str(model, "type", "tokenizer.json", &type, NULL, NULL) != MINT_OK)
        return mint_fail(err, MINT_E_FORMAT, "tokenizer.json: model.type is missing");
    mint_status st;
    if (strcmp(type, "BPE") == 0)
        st = tj_bpe(v, tj, model, err);
    else if (strcmp(type, "Unigram") == 0)
        st = tj_unigram(v, model, err);
    else
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "tokenizer.json: model type '%.32s' is not supported (BPE or "
                         "Unigram)",
                         type);
    if (st == MINT_OK) st = tj_added_tokens(v, tj, err);
    v->add_prefix = tj_add_prefix(tj);
    return st;
}

// ---------------------------------------------------------------------------------------------
// Special tokens and metadata

static int32_t find_added_id(json_object *tj, const char *content) {
    json_object *added = NULL;
    if (!tj || !json_object_object_get_ex(tj, "added_tokens", &added) ||
        !json_object_is_type(added, json_type_array))
        return -1;
    for (size_t i = 0; i < json_object_array_length(added); i++) {
        json_object *a = json_object_array_get_idx(added, i);
        const char *c;
        int64_t id;
        if (mint_json_get_str(a, "content", "", &c, NULL, NULL) == MINT_OK &&
            strcmp(c, content) == 0 &&
            mint_json_get_int(a, "id", 0, INT32_MAX, "", &id, NULL) == MINT_OK)
            return (int32_t)id;
    }
    return -1;
}

static int64_t special_id(const vocab *v, json_object *cfg, json_object *tc, json_object *tj,
                          const char *typ, int32_t model_id) {
    char key[32];
    json_object *e = NULL;
    snprintf(key, sizeof key, "%s_token", typ);
    if (tc && json_object_object_get_ex(tc, key, &e)) {
        json_object *c = e;
        if (json_object_is_type(e, json_type_object)) json_object_object_get_ex(e, "content", &c);
        if (json_object_is_type(c, json_type_string)) {
            int32_t id = find_added_id(tj, json_object_get_string(c));
            if (id >= 0 && (uint32_t)id < v->n) return id;
        }
    }
    snprintf(key, sizeof key, "%s_token_id", typ);
    int64_t id;
    if (mint_json_get_int(cfg, key, 0, INT32_MAX, "", &id, NULL) == MINT_OK && id < v->n) return id;
    return model_id >= 0 && (uint32_t)model_id < v->n ? model_id : -1;
}

static mint_status add_chat_templates(mint_file *f, json_object *tc, mint_err *err) {
    json_object *t = NULL;
    if (!tc || !json_object_object_get_ex(tc, "chat_template", &t)) return MINT_OK;
    if (json_object_is_type(t, json_type_string))
        return mint_file_add_kv(f, "tokenizer.chat_template", MINT_VAL_STRING, MINT_VAL_STRING,
                                (uint64_t)json_object_get_string_len(t), json_object_get_string(t),
                                err);
    if (!json_object_is_type(t, json_type_array)) return MINT_OK; // the converter ignores these
    // A list of {"name", "template"}: "default" is tokenizer.chat_template, the others
    // tokenizer.chat_template.<name>, as gguf-py writes them.
    for (size_t i = 0; i < json_object_array_length(t); i++) {
        json_object *e = json_object_array_get_idx(t, i);
        const char *name, *tmpl;
        size_t len;
        if (mint_json_get_str(e, "name", "", &name, NULL, NULL) != MINT_OK ||
            mint_json_get_str(e, "template", "", &tmpl, &len, NULL) != MINT_OK)
            return mint_fail(err, MINT_E_FORMAT,
                             "tokenizer_config.json: chat_template entry %zu lacks name/template",
                             i);
        char key[256];
        if (strcmp(name, "default") == 0)
            snprintf(key, sizeof key, "tokenizer.chat_template");
        else
            snprintf(key, sizeof key, "tokenizer.chat_template.%.200s", name);
        if (mint_file_find_kv(f, key)) continue;
        mint_status st = mint_file_add_kv(f, key, MINT_VAL_STRING, MINT_VAL_STRING, len, tmpl, err);
        if (st == MINT_OK) st = mint_file_build_index(f, err);
        if (st != MINT_OK) return st;
    }
    return MINT_OK;
}

// no_prefix: the class forces add_space_prefix false (MINT_HF_K_NO_SPACE_PREFIX).
static mint_status add_keys(mint_file *f, const vocab *v, json_object *cfg, json_object *tc,
                            json_object *tj, bool no_prefix, mint_err *err) {
    static const struct {
        const char *typ, *key;
    } specials[] = {{"bos", "tokenizer.ggml.bos_token_id"},
                    {"eos", "tokenizer.ggml.eos_token_id"},
                    {"unk", "tokenizer.ggml.unknown_token_id"},
                    {"sep", "tokenizer.ggml.seperator_token_id"},
                    {"pad", "tokenizer.ggml.padding_token_id"}};
    const int32_t model_ids[] = {v->bos, v->eos, v->unk, -1, v->pad};
    const char *model = v->byte_level ? "gpt2" : "llama";
    const char *pre = v->byte_level ? v->pre : "default";
    mint_status st = mint_file_add_kv(f, "tokenizer.ggml.model", MINT_VAL_STRING, MINT_VAL_STRING,
                                      strlen(model), model, err);
    if (st == MINT_OK)
        st = mint_file_add_kv(f, "tokenizer.ggml.pre", MINT_VAL_STRING, MINT_VAL_STRING,
                              strlen(pre), pre, err);
    if (st == MINT_OK)
        st = mint_file_add_kv(f, "tokenizer.ggml.tokens", MINT_VAL_ARRAY, MINT_VAL_STRING, v->n,
                              v->text, err);
    if (st == MINT_OK && !v->byte_level) // byte-level BPE ranks by its merges instead
        st = mint_file_add_kv(f, "tokenizer.ggml.scores", MINT_VAL_ARRAY, MINT_VAL_F32, v->n,
                              v->score, err);
    if (st == MINT_OK)
        st = mint_file_add_kv(f, "tokenizer.ggml.token_type", MINT_VAL_ARRAY, MINT_VAL_I32, v->n,
                              v->type, err);
    if (st == MINT_OK && v->n_merges)
        st = mint_file_add_kv(f, "tokenizer.ggml.merges", MINT_VAL_ARRAY, MINT_VAL_STRING,
                              v->n_merges, v->merges, err);
    for (size_t i = 0; i < sizeof specials / sizeof specials[0] && st == MINT_OK; i++) {
        int64_t id = special_id(v, cfg, tc, tj, specials[i].typ, model_ids[i]);
        uint32_t u = (uint32_t)id;
        if (id >= 0)
            st = mint_file_add_kv(f, specials[i].key, MINT_VAL_U32, MINT_VAL_U32, 1, &u, err);
    }
    static const char *const flags[][2] = {{"add_bos_token", "tokenizer.ggml.add_bos_token"},
                                           {"add_eos_token", "tokenizer.ggml.add_eos_token"},
                                           {"add_prefix_space", "tokenizer.ggml.add_space_prefix"}};
    for (size_t i = 0; i < 3 && st == MINT_OK; i++) {
        bool b = false;
        mint_status bs = tc ? mint_json_get_bool(tc, flags[i][0], "", &b, NULL) : MINT_E_NOT_FOUND;
        if (bs != MINT_OK && i == 2 && v->add_prefix >= 0) {
            b = v->add_prefix;
            bs = MINT_OK;
        }
        if (i == 2 && v->byte_level) bs = MINT_E_NOT_FOUND; // the converter writes none then
        if (i == 2 && no_prefix) {
            b = false;
            bs = MINT_OK;
        }
        uint8_t u = b;
        if (bs == MINT_OK)
            st = mint_file_add_kv(f, flags[i][1], MINT_VAL_BOOL, MINT_VAL_BOOL, 1, &u, err);
    }
    if (st == MINT_OK) st = mint_file_build_index(f, err);
    if (st == MINT_OK) st = add_chat_templates(f, tc, err);
    return st;
}

static mint_status load_optional_json(const char *dir, const char *name, size_t max,
                                      json_object **out, mint_err *err) {
    char path[PATH_MAX];
    *out = NULL;
    if (!file_exists(dir, name, path)) return MINT_OK;
    return mint_json_load_file(path, max, out, err);
}

mint_status mint_hf_add_tokenizer(mint_file *f, const char *dir, json_object *config,
                                  const mint_hf_arch *a, uint32_t n_vocab, mint_err *err) {
    char spm_path[PATH_MAX], path[PATH_MAX];
    bool has_spm = file_exists(dir, "tokenizer.model", spm_path);
    if (!has_spm && !file_exists(dir, "tokenizer.json", path)) return MINT_OK;
    vocab v;
    mint_spm_model spm = {0};
    json_object *tj = NULL, *tc = NULL, *added = NULL;
    mint_status st = vocab_init(&v, n_vocab, err);
    if (st == MINT_OK)
        st = load_optional_json(dir, "tokenizer.json", MINT_HF_MAX_TOKENIZER, &tj, err);
    if (st == MINT_OK)
        st = load_optional_json(dir, "tokenizer_config.json", MINT_HF_MAX_TOKENIZER, &tc, err);
    if (st == MINT_OK && tc && !json_object_is_type(tc, json_type_object))
        st = mint_fail(err, MINT_E_FORMAT, "tokenizer_config.json is not a JSON object");
    if (st == MINT_OK && tj && !json_object_is_type(tj, json_type_object))
        st = mint_fail(err, MINT_E_FORMAT, "tokenizer.json is not a JSON object");
    if (st == MINT_OK && has_spm) {
        st = load_spm(&v, spm_path, &spm, err);
        if (st == MINT_OK)
            st = load_optional_json(dir, "added_tokens.json", MINT_HF_MAX_CONFIG, &added, err);
        if (st == MINT_OK && added)
            st = apply_added_tokens_json(&v, added, "added_tokens.json", err);
        if (st == MINT_OK) st = apply_added_tokens_decoder(&v, tc, err);
    } else if (st == MINT_OK) {
        st = load_tokenizer_json(&v, tj, err);
    }
    bool no_prefix = has_spm && a && (a->keys & MINT_HF_K_NO_SPACE_PREFIX);
    if (st == MINT_OK) st = add_keys(f, &v, config, tc, tj, no_prefix, err);
    json_object_put(tj);
    json_object_put(tc);
    json_object_put(added);
    mint_spm_free(&spm);
    vocab_free(&v);
    return st;
}
