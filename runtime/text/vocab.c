// vocab.c - loading a vocabulary from GGUF metadata the way llama.cpp's llama_vocab::impl::load
// does for tokenizer.ggml.model "llama", "gpt2" and "gemma4" (docs/formats.md 4.3, 6.1; merge-rank
// BPE in bpe.h).
#include "runtime/text/vocab.h"

#include "base/error.h"
#include "formats/tensor_dir.h"
#include "runtime/text/bpe.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Metadata helpers: optional keys keep their default when absent, but a key of the wrong type is
// an error (llama.cpp throws there too).

static mint_status get_opt_bool(const mint_file *f, const char *key, bool *val, mint_err *err) {
    mint_err e;
    mint_status st = mint_file_get_bool(f, key, val, &e);
    if (st == MINT_E_NOT_FOUND) return MINT_OK;
    if (st != MINT_OK && err) *err = e;
    return st;
}

static mint_status get_opt_u32(const mint_file *f, const char *key, bool *present, uint32_t *val,
                               mint_err *err) {
    mint_err e;
    mint_status st = mint_file_get_u32(f, key, val, &e);
    *present = st == MINT_OK;
    if (st == MINT_E_NOT_FOUND) return MINT_OK;
    if (st != MINT_OK && err) *err = e;
    return st;
}

// An optional numeric array of exactly n elements of one of the allowed element types.
static mint_status get_opt_arr(const mint_file *f, const char *key, uint64_t n, mint_value_type t1,
                               mint_value_type t2, mint_value_type *type, const void **data,
                               mint_err *err) {
    mint_err e;
    uint64_t len;
    *data = NULL;
    mint_status st = mint_file_get_arr(f, key, type, &len, data, &e);
    if (st == MINT_E_NOT_FOUND) return MINT_OK;
    if (st != MINT_OK) {
        if (err) *err = e;
        return st;
    }
    if (*type != t1 && *type != t2)
        return mint_fail(err, MINT_E_TYPE, "metadata key '%s' is an array of %s, expected %s%s%s",
                         key, mint_value_type_name(*type), mint_value_type_name(t1),
                         t2 != t1 ? " or " : "", t2 != t1 ? mint_value_type_name(t2) : "");
    if (len != n)
        return mint_fail(err, MINT_E_FORMAT,
                         "metadata key '%s' has %" PRIu64 " entries, but tokenizer.ggml.tokens "
                         "has %" PRIu64,
                         key, len, n);
    return MINT_OK;
}

// Token text for a one-line message: control bytes escaped, cut after 40 bytes.
static const char *printable(const char *s, size_t len, char out[200]) {
    size_t o = 0;
    for (size_t i = 0; i < len && o < 170; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i == 40) {
            o += (size_t)snprintf(out + o, 200 - o, "...");
            break;
        }
        if (c < 0x20 || c == 0x7f || c == '\\')
            o += (size_t)snprintf(out + o, 200 - o, "\\x%02X", c);
        else
            out[o++] = (char)c;
    }
    out[o] = '\0';
    return out;
}

// ---------------------------------------------------------------------------------------------
// Special tokens

// GGUF token_type codes -> attribute bits.
static uint16_t attr_of_type(int32_t type) {
    switch (type) {
    case 1:
        return MINT_TOKEN_ATTR_NORMAL;
    case 2:
        return MINT_TOKEN_ATTR_UNKNOWN;
    case 3:
        return MINT_TOKEN_ATTR_CONTROL;
    case 4:
        return MINT_TOKEN_ATTR_USER_DEFINED;
    case 5:
        return MINT_TOKEN_ATTR_UNUSED;
    case 6:
        return MINT_TOKEN_ATTR_BYTE;
    default:
        return MINT_TOKEN_ATTR_UNDEFINED;
    }
}

enum {
    SP_BOS,
    SP_EOS,
    SP_EOT,
    SP_EOM,
    SP_UNK,
    SP_SEP,
    SP_PAD,
    SP_MASK,
    SP_FIM_PRE,
    SP_FIM_SUF,
    SP_FIM_MID,
    SP_FIM_PAD,
    SP_FIM_REP,
    SP_FIM_SEP,
    SP_COUNT
};

// Keys in llama.cpp's reading order; the last three are deprecated spellings of FIM ids.
static const struct {
    const char *key;
    int slot;
} special_keys[] = {
    {"tokenizer.ggml.bos_token_id", SP_BOS},
    {"tokenizer.ggml.eos_token_id", SP_EOS},
    {"tokenizer.ggml.eot_token_id", SP_EOT},
    {"tokenizer.ggml.eom_token_id", SP_EOM},
    {"tokenizer.ggml.unknown_token_id", SP_UNK},
    {"tokenizer.ggml.seperator_token_id", SP_SEP},
    {"tokenizer.ggml.padding_token_id", SP_PAD},
    {"tokenizer.ggml.mask_token_id", SP_MASK},
    {"tokenizer.ggml.fim_pre_token_id", SP_FIM_PRE},
    {"tokenizer.ggml.fim_suf_token_id", SP_FIM_SUF},
    {"tokenizer.ggml.fim_mid_token_id", SP_FIM_MID},
    {"tokenizer.ggml.fim_pad_token_id", SP_FIM_PAD},
    {"tokenizer.ggml.fim_rep_token_id", SP_FIM_REP},
    {"tokenizer.ggml.fim_sep_token_id", SP_FIM_SEP},
    {"tokenizer.ggml.prefix_token_id", SP_FIM_PRE},
    {"tokenizer.ggml.suffix_token_id", SP_FIM_SUF},
    {"tokenizer.ggml.middle_token_id", SP_FIM_MID},
};

// When a file does not give these ids, llama.cpp finds them by text (and makes them CONTROL).
// A NULL ends each list. "\xE2\x96\x81" is U+2581, "\xEF\xBD\x9C" is U+FF5C.
static const char *const eot_texts[] = {"<|eot_id|>",
                                        "<|im_end|>",
                                        "<|end|>",
                                        "<end_of_turn>",
                                        "<|endoftext|>",
                                        "<|end_of_text|>",
                                        "<EOT>",
                                        "_<EOT>",
                                        "[EOT]",
                                        "<\xEF\xBD\x9C"
                                        "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
                                        "<end_of_utterance>",
                                        NULL};
static const char *const eom_texts[] = {"<|eom_id|>", NULL};
static const char *const fim_pre_texts[] = {"<|fim_prefix|>",
                                            "<fim-prefix>",
                                            "<fim_prefix>",
                                            "<\xEF\xBD\x9C"
                                            "fim\xE2\x96\x81"
                                            "begin\xEF\xBD\x9C>",
                                            "<PRE>",
                                            "\xE2\x96\x81<PRE>",
                                            "<|code_prefix|>",
                                            "<|prefix|>",
                                            NULL};
static const char *const fim_suf_texts[] = {"<|fim_suffix|>",
                                            "<fim-suffix>",
                                            "<fim_suffix>",
                                            "<\xEF\xBD\x9C"
                                            "fim\xE2\x96\x81"
                                            "hole\xEF\xBD\x9C>",
                                            "<SUF>",
                                            "\xE2\x96\x81<SUF>",
                                            "<|code_suffix|>",
                                            "<|suffix|>",
                                            NULL};
static const char *const fim_mid_texts[] = {"<|fim_middle|>",
                                            "<fim-middle>",
                                            "<fim_middle>",
                                            "<\xEF\xBD\x9C"
                                            "fim\xE2\x96\x81"
                                            "end\xEF\xBD\x9C>",
                                            "<MID>",
                                            "\xE2\x96\x81<MID>",
                                            "<|code_middle|>",
                                            "<|middle|>",
                                            NULL};
static const char *const fim_pad_texts[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>",
                                            "<PAD>",       "[PAD]",     NULL};
static const char *const fim_rep_texts[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>",
                                            "<REPO>",       "<reponame>",    NULL};
static const char *const fim_sep_texts[] = {"<|file_sep|>", NULL};

// Texts that end generation wherever they appear in a vocabulary.
static const char *const eog_texts[] = {"<|eot_id|>",
                                        "<|im_end|>",
                                        "<|end|>",
                                        "<|return|>",
                                        "<|call|>",
                                        "<|flush|>",
                                        "<|calls|>",
                                        "<end_of_turn>",
                                        "<|endoftext|>",
                                        "</s>",
                                        "<|eom_id|>",
                                        "<EOT>",
                                        "_<EOT>",
                                        "[EOT]",
                                        "[EOS]",
                                        "<|end_of_text|>",
                                        "<end_of_utterance>",
                                        "<eos>",
                                        "<turn|>",
                                        "<|tool_response>",
                                        "<\xEF\xBD\x9C"
                                        "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
                                        "[e~[",
                                        NULL};

static int32_t lookup(const mint_vocab *v, const char *s) {
    return mint_strmap_get(&v->map, s, strlen(s));
}

// The lowest id whose text is in the list, or -1.
static int32_t find_first(const mint_vocab *v, const char *const *texts) {
    int32_t best = -1;
    for (int i = 0; texts[i]; i++) {
        int32_t id = lookup(v, texts[i]);
        if (id >= 0 && (best < 0 || id < best)) best = id;
    }
    return best;
}

// Id of an end-of-generation token with this text, or -1.
static int32_t eog_id(const mint_vocab *v, const char *text) {
    int32_t id = lookup(v, text);
    return id >= 0 && v->tok[id].eog ? id : -1;
}

static void make_control(mint_vocab *v, int32_t id) {
    v->tok[id].attr |= MINT_TOKEN_ATTR_CONTROL;
}

// ids[] holds the kind's defaults on entry (-1 = none).
static mint_status read_special_ids(const mint_file *f, mint_vocab *v, int32_t ids[SP_COUNT],
                                    mint_err *err) {
    for (size_t k = 0; k < sizeof special_keys / sizeof special_keys[0]; k++) {
        int32_t *id = &ids[special_keys[k].slot];
        if (*id >= v->n) *id = -1; // a default outside the vocabulary is disabled
        bool present;
        uint32_t val;
        mint_status st = get_opt_u32(f, special_keys[k].key, &present, &val, err);
        if (st != MINT_OK) return st;
        // An id outside the vocabulary (4294967295 is the usual "none") keeps the default.
        if (present && val < (uint32_t)v->n) *id = (int32_t)val;
    }
    return MINT_OK;
}

// Finds the ids not given by key, builds the end-of-generation set, and marks them CONTROL.
static void detect_special(mint_vocab *v, int32_t ids[SP_COUNT]) {
    static const struct {
        int slot;
        const char *const *texts;
    } by_text[] = {
        {SP_EOT, eot_texts},         {SP_EOM, eom_texts},         {SP_FIM_PRE, fim_pre_texts},
        {SP_FIM_SUF, fim_suf_texts}, {SP_FIM_MID, fim_mid_texts}, {SP_FIM_PAD, fim_pad_texts},
        {SP_FIM_REP, fim_rep_texts}, {SP_FIM_SEP, fim_sep_texts},
    };
    for (size_t k = 0; k < sizeof by_text / sizeof by_text[0]; k++) {
        int32_t *id = &ids[by_text[k].slot];
        if (*id >= 0) continue;
        *id = find_first(v, by_text[k].texts);
        if (*id >= 0) make_control(v, *id);
    }
    for (int i = 0; eog_texts[i]; i++) {
        int32_t id = lookup(v, eog_texts[i]);
        if (id < 0) continue;
        v->tok[id].eog = true;
        make_control(v, id);
    }
    // gpt-oss's channel markers are always rendered (llama.cpp makes them USER_DEFINED).
    const char *const shown[] = {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"};
    for (size_t k = 0; k < sizeof shown / sizeof shown[0]; k++) {
        int32_t id = lookup(v, shown[k]);
        if (id >= 0) v->tok[id].attr = MINT_TOKEN_ATTR_USER_DEFINED;
    }
    const int eog_slots[] = {SP_FIM_PAD, SP_FIM_REP, SP_FIM_SEP, SP_EOS, SP_EOT, SP_EOM};
    for (size_t k = 0; k < sizeof eog_slots / sizeof eog_slots[0]; k++)
        if (ids[eog_slots[k]] >= 0) v->tok[ids[eog_slots[k]]].eog = true;
    // o200k_harmony and solar-open: "<|end|>" is not an end of generation when the vocabulary
    // ends turns with <|return|>/<|call|> or <|calls|>/<|flush|>.
    int32_t end = eog_id(v, "<|end|>");
    bool call = eog_id(v, "<|call|>") >= 0 || eog_id(v, "<|calls|>") >= 0;
    if (end >= 0 && call && (eog_id(v, "<|return|>") >= 0 || eog_id(v, "<|flush|>") >= 0)) {
        v->tok[end].eog = false;
        v->tok[end].attr = MINT_TOKEN_ATTR_USER_DEFINED;
    }
    // Gemma 4 (and paddleocr): with <|tool_response>, "</s>" is ordinary text.
    int32_t s = eog_id(v, "</s>");
    if (s >= 0 && eog_id(v, "<|tool_response>") >= 0) {
        v->tok[s].eog = false;
        v->tok[s].attr = MINT_TOKEN_ATTR_NORMAL;
    }
}

// The special-token list the tokenizer splits out first, longest text first.
typedef struct len_id {
    uint32_t len; // text length
    int32_t id;   // token id
} len_id;

static int cmp_len_desc(const void *a, const void *b) {
    const len_id *x = a, *y = b;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static mint_status build_special_list(mint_vocab *v, mint_err *err) {
    const uint16_t mask =
        MINT_TOKEN_ATTR_CONTROL | MINT_TOKEN_ATTR_USER_DEFINED | MINT_TOKEN_ATTR_UNKNOWN;
    int32_t n = 0;
    for (int32_t i = 0; i < v->n; i++) n += (v->tok[i].attr & mask) != 0;
    len_id *tmp = malloc((size_t)n * sizeof *tmp + 1);
    v->special = malloc((size_t)n * sizeof *v->special + 1);
    if (!tmp || !v->special) {
        free(tmp);
        return mint_fail(err, MINT_E_NOMEM, "out of memory listing %d special tokens", n);
    }
    int32_t k = 0;
    for (int32_t i = 0; i < v->n; i++)
        if (v->tok[i].attr & mask) tmp[k++] = (len_id){v->tok[i].len, i};
    // llama.cpp sorts by length only (std::sort, unstable); the id tie-break makes mint's order
    // deterministic, and equal-length texts can only collide when one equals the other.
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_len_desc);
    for (int32_t i = 0; i < n; i++) v->special[i] = tmp[i].id;
    v->n_special = n;
    free(tmp);
    return MINT_OK;
}

static void set_attr(mint_vocab *v, const char *text, uint16_t set, uint16_t clear) {
    int32_t id = lookup(v, text);
    if (id >= 0) v->tok[id].attr = (uint16_t)((v->tok[id].attr & ~clear) | set);
}

// general.name or general.architecture in lower case ("" when absent).
static void lower_key(const mint_file *f, const char *key, char out[256]) {
    const char *s;
    uint64_t len;
    out[0] = '\0';
    if (mint_file_get_str(f, key, &s, &len, NULL) != MINT_OK) return;
    size_t n = len < 255 ? (size_t)len : 255;
    for (size_t i = 0; i < n; i++) out[i] = (char)tolower((unsigned char)s[i]);
    out[n] = '\0';
}

// llama.cpp's per-model attribute rules. A model whose general.name contains "phi-3" or "phi3":
// special tokens and "</s>" eat whitespace on their right, except <unk>, <s> and
// <|endoftext|>. Jina v2 (by pre-tokenizer), nomic-bert-moe and jina-bert-v3 (by architecture):
// "<mask>" eats whitespace on its left; modern-bert (by name): "[MASK]" does.
static void apply_model_rules(const mint_file *f, mint_vocab *v) {
    char name[256], arch[256];
    lower_key(f, "general.name", name);
    lower_key(f, "general.architecture", arch);
    if ((v->pre_flags & MINT_PRE_MASK_LSTRIP) || strstr(arch, "nomic-bert-moe") ||
        strstr(arch, "jina-bert-v3")) {
        set_attr(v, "<mask>", MINT_TOKEN_ATTR_LSTRIP, 0);
    } else if (strstr(name, "phi-3") || strstr(name, "phi3")) {
        for (int32_t i = 0; i < v->n_special; i++)
            v->tok[v->special[i]].attr |= MINT_TOKEN_ATTR_RSTRIP;
        set_attr(v, "</s>", MINT_TOKEN_ATTR_RSTRIP, 0);
        const char *keep[] = {"<unk>", "<s>", "<|endoftext|>"};
        for (size_t i = 0; i < 3; i++) set_attr(v, keep[i], 0, MINT_TOKEN_ATTR_RSTRIP);
    } else if (strstr(name, "modern-bert")) {
        set_attr(v, "[MASK]", MINT_TOKEN_ATTR_LSTRIP, 0);
    }
}

static void build_byte_table(mint_vocab *v) {
    static const char hex[] = "0123456789ABCDEF";
    for (int b = 0; b < 256; b++) {
        char name[7] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>', 0};
        int32_t id = mint_strmap_get(&v->map, name, 6);
        // llama.cpp's fallback looks the byte up as a C string, so byte 0 never matches.
        if (id < 0 && b != 0) {
            char one = (char)b;
            id = mint_strmap_get(&v->map, &one, 1);
        }
        v->byte_id[b] = id;
    }
}

// True when U+2581 occurs in the text only in a leading run ("▁▁a" yes, "a▁b" no).
static bool spaces_only_leading(const char *s, uint32_t len) {
    uint32_t i = 0;
    while (i + 3 <= len && memcmp(s + i, "\xE2\x96\x81", 3) == 0) i += 3;
    for (; i + 3 <= len; i++)
        if (memcmp(s + i, "\xE2\x96\x81", 3) == 0) return false;
    return true;
}

// ---------------------------------------------------------------------------------------------
// Loading

static mint_status load_tokens(const mint_file *f, mint_vocab *v, uint64_t n, mint_err *err) {
    const char *key = "tokenizer.ggml.tokens";
    // Sizes first, so the texts go into one allocation.
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; i++) {
        const char *s;
        uint64_t len;
        mint_status st = mint_file_get_arr_str(f, key, i, &s, &len, err);
        if (st != MINT_OK) return st;
        total += (len ? len : 32) + 1; // "[EMPTY_<id>]" is at most 19 bytes
    }
    if (total > SIZE_MAX / 2)
        return mint_fail(err, MINT_E_LIMIT, "%s: %" PRIu64 " bytes of token text", key, total);
    v->tok = calloc((size_t)n, sizeof *v->tok);
    v->text_blob = malloc((size_t)total);
    if (!v->tok || !v->text_blob || mint_strmap_init(&v->map, (size_t)n) != MINT_OK)
        return mint_fail(err, MINT_E_NOMEM, "out of memory loading %" PRIu64 " tokens", n);
    v->n = (int32_t)n;
    v->space_runs_lead = true;
    char *p = v->text_blob;
    for (uint64_t i = 0; i < n; i++) {
        const char *s;
        uint64_t len;
        mint_status st = mint_file_get_arr_str(f, key, i, &s, &len, err);
        if (st != MINT_OK) return st;
        if (len > UINT32_MAX)
            return mint_fail(err, MINT_E_LIMIT, "%s: token %" PRIu64 " is %" PRIu64 " bytes long",
                             key, i, len);
        if (len == 0) {
            // llama.cpp renames empty entries so that every text is a distinct, non-empty key.
            len = (uint64_t)sprintf(p, "[EMPTY_%" PRIu64 "]", i);
        } else {
            memcpy(p, s, (size_t)len);
            p[len] = '\0';
        }
        mint_vocab_token *t = &v->tok[i];
        if (!spaces_only_leading(p, (uint32_t)len)) v->space_runs_lead = false;
        t->text = p;
        t->len = (uint32_t)len;
        t->attr = MINT_TOKEN_ATTR_NORMAL;
        if (t->len > v->max_token_len) v->max_token_len = t->len;
        int32_t prev;
        st = mint_strmap_put(&v->map, p, (size_t)len, (int32_t)i, &prev);
        if (st == MINT_E_ARG) {
            char buf[200];
            return mint_fail(err, MINT_E_FORMAT,
                             "%s: token %" PRIu64 " '%s' duplicates token %d (token texts must be "
                             "unique)",
                             key, i, printable(p, (size_t)len, buf), prev);
        }
        if (st != MINT_OK) return mint_fail(err, st, "out of memory indexing tokens");
        p += len + 1;
    }
    return MINT_OK;
}

static mint_status load_scores_and_types(const mint_file *f, mint_vocab *v, mint_err *err) {
    uint64_t n = (uint64_t)v->n;
    mint_value_type type;
    const void *data;
    mint_status st =
        get_opt_arr(f, "tokenizer.ggml.scores", n, MINT_VAL_F32, MINT_VAL_I32, &type, &data, err);
    if (st != MINT_OK) return st;
    for (int32_t i = 0; data && i < v->n; i++)
        v->tok[i].score =
            type == MINT_VAL_F32 ? ((const float *)data)[i] : (float)((const int32_t *)data)[i];
    st = get_opt_arr(f, "tokenizer.ggml.token_type", n, MINT_VAL_I32, MINT_VAL_I32, &type, &data,
                     err);
    if (st != MINT_OK) return st;
    for (int32_t i = 0; data && i < v->n; i++)
        v->tok[i].attr = attr_of_type(((const int32_t *)data)[i]);
    return MINT_OK;
}

// The kind from tokenizer.ggml.model, and for merge-rank BPE the merges and the pre-tokenizer
// (tokenizer.ggml.pre; "gemma4" vocabularies always use Gemma 4's).
static mint_status load_kind(const mint_file *f, mint_vocab *v, bool *gemma4, mint_err *err) {
    const char *model;
    uint64_t model_len;
    mint_status st = mint_file_get_str(f, "tokenizer.ggml.model", &model, &model_len, err);
    if (st != MINT_OK) return st;
    *gemma4 = model_len == 6 && !memcmp(model, "gemma4", 6);
    if (model_len == 5 && !memcmp(model, "llama", 5)) {
        v->kind = MINT_VOCAB_SPM;
        return MINT_OK;
    }
    if (!(model_len == 4 && !memcmp(model, "gpt2", 4)) && !*gemma4) {
        char buf[200];
        return mint_fail(err, MINT_E_UNSUPPORTED,
                         "tokenizer.ggml.model is '%s'; mint knows 'llama' (SentencePiece BPE), "
                         "'gpt2' (byte-level BPE) and 'gemma4'",
                         printable(model, (size_t)model_len, buf));
    }
    v->kind = MINT_VOCAB_BPE;
    const char *pre = "gemma4";
    uint64_t pre_len = 6;
    if (!*gemma4) {
        mint_err e;
        st = mint_file_get_str(f, "tokenizer.ggml.pre", &pre, &pre_len, &e);
        if (st == MINT_E_NOT_FOUND) {
            pre = NULL; // llama.cpp's "default"
            pre_len = 0;
        } else if (st != MINT_OK) {
            if (err) *err = e;
            return st;
        }
    }
    return mint_bpe_load(f, v, pre, (size_t)pre_len, &v->bpe, &v->pre_flags, err);
}

static mint_status load(const mint_file *f, mint_vocab *v, mint_err *err) {
    mint_value_type type;
    uint64_t n;
    mint_status st = mint_file_get_arr(f, "tokenizer.ggml.tokens", &type, &n, NULL, err);
    if (st != MINT_OK) return st;
    if (type != MINT_VAL_STRING)
        return mint_fail(err, MINT_E_TYPE,
                         "metadata key 'tokenizer.ggml.tokens' is an array of %s, expected str",
                         mint_value_type_name(type));
    if (n == 0)
        return mint_fail(err, MINT_E_FORMAT,
                         "tokenizer.ggml.tokens is empty; a vocabulary needs at least 1 token");
    if (n > INT32_MAX - 1)
        return mint_fail(err, MINT_E_LIMIT,
                         "tokenizer.ggml.tokens has %" PRIu64 " tokens, more than int32 ids allow",
                         n);
    if ((st = load_tokens(f, v, n, err)) != MINT_OK) return st;
    bool gemma4;
    if ((st = load_kind(f, v, &gemma4, err)) != MINT_OK) return st;
    if ((st = load_scores_and_types(f, v, err)) != MINT_OK) return st;

    // llama.cpp's defaults per kind, which the keys below may change.
    int32_t ids[SP_COUNT];
    for (int s = 0; s < SP_COUNT; s++) ids[s] = -1;
    const uint32_t pf = v->pre_flags;
    if (v->kind == MINT_VOCAB_SPM) {
        ids[SP_BOS] = 1;
        ids[SP_EOS] = 2;
        ids[SP_UNK] = 0;
        v->add_bos = true;
        v->add_space_prefix = true;
    } else {
        if (!gemma4) ids[SP_BOS] = ids[SP_EOS] = 11;
        if (pf & MINT_PRE_NO_BOS) ids[SP_BOS] = -1;
        v->add_bos = pf & MINT_PRE_ADD_BOS;
        v->clean_spaces = !(pf & MINT_PRE_KEEP_SPACES);
    }
    if ((st = get_opt_bool(f, "tokenizer.ggml.add_space_prefix", &v->add_space_prefix, err)) ||
        (st = get_opt_bool(f, "tokenizer.ggml.add_bos_token", &v->add_bos, err)) ||
        (st = get_opt_bool(f, "tokenizer.ggml.add_eos_token", &v->add_eos, err)))
        return st;
    if (pf & MINT_PRE_FORCE_BOS) v->add_bos = true; // llama.cpp's override for Gemma 4

    if ((st = read_special_ids(f, v, ids, err)) != MINT_OK) return st;
    v->bos = ids[SP_BOS];
    v->eos = ids[SP_EOS];
    v->unk = ids[SP_UNK];
    v->sep = ids[SP_SEP];
    v->pad = ids[SP_PAD];
    if (v->add_bos && v->bos < 0)
        return mint_fail(err, MINT_E_FORMAT,
                         "tokenizer.ggml.add_bos_token is true, but there is no BOS token "
                         "(tokenizer.ggml.bos_token_id unset and no default within %d tokens)",
                         v->n);
    if (v->add_eos && v->eos < 0)
        return mint_fail(err, MINT_E_FORMAT,
                         "tokenizer.ggml.add_eos_token is true, but there is no EOS token "
                         "(tokenizer.ggml.eos_token_id unset and no default within %d tokens)",
                         v->n);
    detect_special(v, ids);
    v->eot = ids[SP_EOT];
    v->eom = ids[SP_EOM];
    for (int k = 0; k < 6; k++) v->fim[k] = ids[SP_FIM_PRE + k];
    if ((st = build_special_list(v, err)) != MINT_OK) return st;
    apply_model_rules(f, v);
    build_byte_table(v);
    return MINT_OK;
}

mint_status mint_vocab_load(const mint_file *f, mint_vocab **out, mint_err *err) {
    *out = NULL;
    mint_err_clear(err);
    mint_vocab *v = calloc(1, sizeof *v);
    if (!v) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    mint_status st = load(f, v, err);
    if (st != MINT_OK) {
        mint_vocab_free(v);
        return st;
    }
    *out = v;
    return MINT_OK;
}

void mint_vocab_free(mint_vocab *v) {
    if (!v) return;
    free(v->tok);
    free(v->text_blob);
    free(v->special);
    mint_bpe_free(v->bpe);
    mint_strmap_free(&v->map);
    free(v);
}

// ---------------------------------------------------------------------------------------------
// Accessors

int32_t mint_vocab_n_tokens(const mint_vocab *v) {
    return v->n;
}
int32_t mint_vocab_bos(const mint_vocab *v) {
    return v->bos;
}
int32_t mint_vocab_eos(const mint_vocab *v) {
    return v->eos;
}
int32_t mint_vocab_eot(const mint_vocab *v) {
    return v->eot;
}
int32_t mint_vocab_fim(const mint_vocab *v, int k) {
    return k >= 0 && k < 6 ? v->fim[k] : -1;
}
int32_t mint_vocab_unk(const mint_vocab *v) {
    return v->unk;
}
bool mint_vocab_add_bos(const mint_vocab *v) {
    return v->add_bos;
}
bool mint_vocab_add_eos(const mint_vocab *v) {
    return v->add_eos;
}
bool mint_vocab_add_space_prefix(const mint_vocab *v) {
    return v->add_space_prefix;
}

const char *mint_vocab_token_text(const mint_vocab *v, int32_t id, size_t *len) {
    if (id < 0 || id >= v->n) return NULL;
    if (len) *len = v->tok[id].len;
    return v->tok[id].text;
}

uint32_t mint_vocab_token_attr(const mint_vocab *v, int32_t id) {
    return id >= 0 && id < v->n ? v->tok[id].attr : MINT_TOKEN_ATTR_UNDEFINED;
}

float mint_vocab_token_score(const mint_vocab *v, int32_t id) {
    return id >= 0 && id < v->n ? v->tok[id].score : 0.0f;
}

bool mint_vocab_is_eog(const mint_vocab *v, int32_t id) {
    return id >= 0 && id < v->n && v->tok[id].eog;
}

int32_t mint_vocab_find(const mint_vocab *v, const char *text, size_t len) {
    return mint_strmap_get(&v->map, text, len);
}

mint_status mint_vocab_same(const mint_vocab *a, const mint_vocab *b, mint_err *err) {
    if (a->n != b->n)
        return mint_fail(err, MINT_E_ARG, "vocabularies of %d and %d tokens differ", a->n, b->n);
    if (a->bos != b->bos || a->eos != b->eos || a->unk != b->unk)
        return mint_fail(err, MINT_E_ARG, "special tokens differ (BOS %d/%d, EOS %d/%d, UNK %d/%d)",
                         a->bos, b->bos, a->eos, b->eos, a->unk, b->unk);
    for (int32_t i = 0; i < a->n; i++)
        if (a->tok[i].len != b->tok[i].len || memcmp(a->tok[i].text, b->tok[i].text, a->tok[i].len))
            return mint_fail(err, MINT_E_ARG, "token %d differs ('%.*s' vs '%.*s')", i,
                             (int)(a->tok[i].len > 40 ? 40 : a->tok[i].len), a->tok[i].text,
                             (int)(b->tok[i].len > 40 ? 40 : b->tok[i].len), b->tok[i].text);
    return MINT_OK;
}
