// pretokenize.c - the pre-tokenizer table and the PCRE2 splitter (see pretokenize.h).
//
// The regexes are the ones llama.cpp lists per pre-tokenizer type in src/llama-vocab.cpp (its
// "adapted" forms, where (?i:'s|...) is spelled '[sS]|...). Two differences from how llama.cpp
// runs them, both chosen so that the result equals the reference tokenizers':
//   - llama.cpp runs the common sets through hand-written matchers and the others through
//     std::regex on a text where every character is collapsed to its Unicode category; PCRE2
//     with UCP evaluates \p{L}, \p{N}, \s ... on the characters themselves.
//   - PCRE2's \s is Unicode's space separators plus \t \n \v \f \r; llama.cpp's (and Unicode's
//     White_Space) also holds U+0085, so every \s and \S is widened by it when compiling.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "runtime/text/pretokenize.h"

#include "base/error.h"

#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Regex sets

#define RX_CONTRACTIONS "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
#define RX_GPT2         "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"

enum rx_set {
    RX_DEFAULT,
    RX_LLAMA3,
    RX_QWEN2,
    RX_QWEN35,
    RX_GPT2_SET,
    RX_STARCODER,
    RX_FALCON,
    RX_DEEPSEEK_LLM,
    RX_DEEPSEEK_CODER,
    RX_NEWLINES,
    RX_GPT4O,
    RX_COUNT
};

enum { MAX_RX = 6 }; // most regexes in one set

// Each set's regexes in the order they apply; NULL ends a set.
static const char *const rx_sets[RX_COUNT][MAX_RX + 1] = {
    [RX_DEFAULT] = {"[\\p{P}\\$\\+<=>\\^~\\|]+", RX_GPT2, "\\p{N}+", "[0-9][0-9][0-9]", NULL},
    [RX_LLAMA3] = {RX_CONTRACTIONS
                   "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
                   "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
                   NULL},
    [RX_QWEN2] = {RX_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+"
                                  "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
                  NULL},
    [RX_QWEN35] = {RX_CONTRACTIONS "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}"
                                   "\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
                   NULL},
    [RX_GPT2_SET] = {RX_GPT2, NULL},
    [RX_STARCODER] = {"\\p{N}", RX_GPT2, NULL},
    [RX_FALCON] = {"[\\p{P}\\$\\+<=>\\^~\\|`]+", RX_GPT2, "[0-9][0-9][0-9]", NULL},
    [RX_DEEPSEEK_LLM] =
        {"[\r\n]",
         "\\s?[A-Za-z\xC2\xB5\xC3\x80-\xC3\x96\xC3\x98-\xC3\xB6\xC3\xB8-\xC6\xBA\xC6\xBC-\xC6\xBF"
         "\xC7\x84-\xCA\x93\xCA\x95-\xCA\xAF\xCD\xB0-\xCD\xB3\xCD\xB6\xCD\xB7\xCD\xBB-\xCD\xBD"
         "\xCD\xBF\xCE\x86\xCE\x88-\xCE\x8A\xCE\x8C\xCE\x8E-\xCE\xA1\xCE\xA3-\xCF\xB5\xCF\xB7-"
         "\xD2\x81\xD2\x8A-\xD4\xAF\xD4\xB1-\xD5\x96\xE1\x82\xA0-\xE1\x83\x85\xE1\x8E\xA0-\xE1"
         "\x8F\xB5\xE1\x8F\xB8-\xE1\x8F\xBD\xE1\xB2\x90-\xE1\xB2\xBA\xE1\xB2\xBD-\xE1\xB2\xBF\xE1"
         "\xB4\x80-\xE1\xB4\xAB\xE1\xB5\xAB-\xE1\xB5\xB7\xE1\xB5\xB9-\xE1\xB6\x9A\xE1\xB8\x80-"
         "\xE1\xBC\x95\xE1\xBC\x98-\xE1\xBC\x9D\xE1\xBC\xA0-\xE1\xBD\x85\xE1\xBD\x88-\xE1\xBD\x8D"
         "\xE1\xBD\x90-\xE1\xBD\x97\xE1\xBD\x99\xE1\xBD\x9B\xE1\xBD\x9D\xE1\xBD\x9F-\xE1\xBD\xBD"
         "\xE1\xBE\x80-\xE1\xBE\xB4\xE1\xBE\xB6-\xE1\xBE\xBC\xE1\xBE\xBE\xE1\xBF\x82-\xE1\xBF\x84"
         "\xE1\xBF\x86-\xE1\xBF\x8C\xE1\xBF\x90-\xE1\xBF\x93\xE1\xBF\x96-\xE1\xBF\x9B\xE1\xBF\xA0-"
         "\xE1\xBF\xAC\xE1\xBF\xB2-\xE1\xBF\xB4\xE1\xBF\xB6-\xE1\xBF\xBC\xE2\x84\x82\xE2\x84\x87"
         "\xE2\x84\x8A-\xE2\x84\x93\xE2\x84\x95\xE2\x84\x99-\xE2\x84\x9D\xE2\x84\xA4\xE2\x84\xA6"
         "\xE2\x84\xA8\xE2\x84\xAA-\xE2\x84\xAD\xE2\x84\xAF-\xE2\x84\xB4\xE2\x84\xB9\xE2\x84\xBC-"
         "\xE2\x84\xBF\xE2\x85\x85-\xE2\x85\x89\xE2\x85\x8E\xE2\x86\x83\xE2\x86\x84\xE2\xB0\x80-"
         "\xE2\xB1\xBB\xE2\xB1\xBE-\xE2\xB3\xA4\xE2\xB3\xAB-\xE2\xB3\xAE\xE2\xB3\xB2\xE2\xB3\xB3"
         "\xEA\x99\x80-\xEA\x99\xAD\xEA\x9A\x80-\xEA\x9A\x9B\xEA\x9C\xA2-\xEA\x9D\xAF\xEA\x9D\xB1-"
         "\xEA\x9E\x87\xEA\x9E\x8B-\xEA\x9E\x8E\xEA\xAD\xB0-\xEA\xAE\xBF\xEF\xAC\x80-\xEF\xAC\x86"
         "\xEF\xAC\x93-\xEF\xAC\x97\xEF\xBC\xA1-\xEF\xBC\xBA\xEF\xBD\x81-\xEF\xBD\x9A\xF0\x90\x90"
         "\x80-\xF0\x90\x91\x8F\xF0\x90\x92\xB0-\xF0\x90\x93\x93\xF0\x90\x93\x98-\xF0\x90\x93\xBB"
         "\xF0\x90\xB2\x80-\xF0\x90\xB2\xB2\xF0\x90\xB3\x80-\xF0\x90\xB3\xB2\xF0\x91\xA2\xA0-\xF0"
         "\x91\xA3\x9F\xF0\x9E\xA4\x80-\xF0\x9E\xA5\x83]+",
         "\\s?[!-/:-~\xEF\xBC\x81-\xEF\xBC\x8F\xEF\xBC\x9A-\xEF\xBD\x9E\xE2\x80\x98-\xE2\x80\x9F"
         "\xE3\x80\x80-\xE3\x80\x82]+",
         "\\s+$", "[\xE4\xB8\x80-\xE9\xBE\xA5\xE0\xA0\x80-\xE4\xB8\x80\xEA\xB0\x80-\xED\x9F\xBF]+",
         "\\p{N}+", NULL},
    [RX_DEEPSEEK_CODER] =
        {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+",
         "[\xE4\xB8\x80-\xE9\xBE\xA5\xE0\xA0\x80-\xE4\xB8\x80\xEA\xB0\x80-\xED\x9F"
         "\xBF]+",
         "\\p{N}", NULL},
    [RX_NEWLINES] = {"[^\\n]+|[\\n]+", NULL},
    // o200k (gpt-oss, Llama 4): tokenizer.json's regex as llama.cpp rewrites it for its engine
    // (an upper-case run is a letter not in a-z, a lower-case run a letter not in A-Z), so that
    // non-ASCII letters split as llama.cpp splits them
    [RX_GPT4O] =
        {"[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+" RX_CONTRACTIONS
         "?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*" RX_CONTRACTIONS
         "?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
         NULL},
};

// ---------------------------------------------------------------------------------------------
// The name table: every tokenizer.ggml.pre value llama.cpp maps to one of the sets above, with
// the flags it sets alongside.

enum {
    IGNORE = MINT_PRE_IGNORE_MERGES,
    BOS = MINT_PRE_ADD_BOS,
    KEEP = MINT_PRE_KEEP_SPACES,
    NOBOS = MINT_PRE_NO_BOS,
    SPM_STYLE = MINT_PRE_ESCAPE,
    MASK = MINT_PRE_MASK_LSTRIP,
};

static const struct pre_name {
    const char *name; // tokenizer.ggml.pre
    uint8_t set;      // enum rx_set
    uint16_t flags;   // MINT_PRE_* bits
} pre_names[] = {
    {"default", RX_DEFAULT, 0},
    {"llama3", RX_LLAMA3, IGNORE | BOS},
    {"llama-v3", RX_LLAMA3, IGNORE | BOS},
    {"llama-bpe", RX_LLAMA3, IGNORE | BOS},
    {"falcon3", RX_LLAMA3, IGNORE | BOS},
    {"falcon-h1", RX_LLAMA3, IGNORE | BOS},
    {"pixtral", RX_LLAMA3, IGNORE | BOS},
    {"midm-2.0", RX_LLAMA3, IGNORE | BOS},
    {"lfm2", RX_LLAMA3, IGNORE | BOS},
    {"jina-v5-nano", RX_LLAMA3, IGNORE | BOS},
    {"dbrx", RX_LLAMA3, 0},
    {"smaug-bpe", RX_LLAMA3, 0},
    {"glm4", RX_LLAMA3, NOBOS},
    {"chatglm-bpe", RX_LLAMA3, NOBOS},
    {"qwen2", RX_QWEN2, KEEP},
    {"deepseek-r1-qwen", RX_QWEN2, KEEP},
    {"kormo", RX_QWEN2, KEEP},
    {"f2llmv2", RX_QWEN2, KEEP},
    {"stablelm2", RX_QWEN2, 0},
    {"megrez", RX_QWEN2, 0},
    {"hunyuan", RX_QWEN2, KEEP},
    {"solar-open", RX_QWEN2, KEEP},
    {"grok-2", RX_QWEN2, KEEP},
    {"qwen35", RX_QWEN35, KEEP},
    {"gpt-2", RX_GPT2_SET, 0},
    {"phi-2", RX_GPT2_SET, 0},
    {"jina-es", RX_GPT2_SET, 0},
    {"jina-de", RX_GPT2_SET, 0},
    {"gigachat", RX_GPT2_SET, 0},
    {"jina-v2-es", RX_GPT2_SET, MASK},
    {"jina-v2-de", RX_GPT2_SET, MASK},
    {"jina-v2-code", RX_GPT2_SET, MASK},
    {"jina-v1-en", RX_GPT2_SET, 0},
    {"roberta-bpe", RX_GPT2_SET, 0},
    {"a.x-4.0", RX_GPT2_SET, 0},
    {"mellum", RX_GPT2_SET, 0},
    {"modern-bert", RX_GPT2_SET, 0},
    {"exaone4", RX_GPT2_SET, 0},
    {"mpt", RX_GPT2_SET, 0},
    {"olmo", RX_GPT2_SET, 0},
    {"jais", RX_GPT2_SET, 0},
    {"trillion", RX_GPT2_SET, KEEP},
    {"granite-docling", RX_GPT2_SET, KEEP},
    {"starcoder", RX_STARCODER, 0},
    {"refact", RX_STARCODER, 0},
    {"codeshell", RX_STARCODER, 0},
    {"exaone", RX_STARCODER, 0},
    {"minerva-7b", RX_STARCODER, 0},
    {"mellum2", RX_STARCODER, 0},
    {"command-r", RX_STARCODER, KEEP},
    {"smollm", RX_STARCODER, KEEP},
    {"falcon", RX_FALCON, 0},
    {"deepseek-llm", RX_DEEPSEEK_LLM, KEEP},
    {"deepseek-coder", RX_DEEPSEEK_CODER, KEEP},
    {"gemma4", RX_NEWLINES, SPM_STYLE | MINT_PRE_NEWLINE_WORD | MINT_PRE_FORCE_BOS},
    {"granite-embed-multi-311m", RX_NEWLINES,
     SPM_STYLE | MINT_PRE_NEWLINE_WORD | MINT_PRE_FORCE_BOS},
    {"sarvam-moe", RX_NEWLINES, SPM_STYLE | KEEP},
    {"gpt-4o", RX_GPT4O, KEEP},
    {"llama4", RX_GPT4O, KEEP},
    {"kanana2", RX_GPT4O, KEEP},
    {"talkie", RX_GPT4O, KEEP},
};

struct mint_pretok {
    pcre2_code *code[MAX_RX]; // [n] compiled regexes, in order
    int n;                    // number of regexes
    int set;                  // enum rx_set (for messages)
};

// ---------------------------------------------------------------------------------------------
// Compiling

// Copies pattern to out (at most cap bytes with the NUL) with every \s and \S widened by U+0085.
static bool widen_spaces(const char *pattern, char *out, size_t cap) {
    size_t o = 0;
    bool in_class = false;
    for (const char *p = pattern; *p; p++) {
        const char *add = NULL;
        char one[3] = {p[0], 0, 0};
        if (p[0] == '\\' && p[1]) {
            one[1] = p[1];
            if (p[1] == 's') add = in_class ? "\\s\\x{85}" : "[\\s\\x{85}]";
            if (p[1] == 'S' && !in_class) add = "[^\\s\\x{85}]";
            p++;
        } else if (p[0] == '[' && !in_class) {
            in_class = true;
        } else if (p[0] == ']' && in_class) {
            in_class = false;
        }
        if (!add) add = one;
        size_t k = strlen(add);
        if (o + k + 1 > cap) return false;
        memcpy(out + o, add, k);
        o += k;
    }
    out[o] = '\0';
    return true;
}

void mint_pretok_free(mint_pretok *p) {
    if (!p) return;
    for (int i = 0; i < p->n; i++) pcre2_code_free(p->code[i]);
    free(p);
}

// "mint knows: a, b, ..." cut to fit a message.
static void known_names(char *out, size_t cap) {
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof pre_names / sizeof pre_names[0]; i++) {
        int k = snprintf(out + o, cap - o, "%s%s", i ? ", " : "", pre_names[i].name);
        if (k < 0 || (size_t)k >= cap - o - 4) {
            snprintf(out + o, cap - o, ", ...");
            return;
        }
        o += (size_t)k;
    }
}

mint_status mint_pretok_create(const char *name, size_t name_len, mint_pretok **out,
                               uint32_t *flags, mint_err *err) {
    *out = NULL;
    *flags = 0;
    const struct pre_name *e = NULL;
    if (!name || name_len == 0) {
        e = &pre_names[0]; // llama.cpp falls back to "default" (with a warning)
    } else {
        for (size_t i = 0; i < sizeof pre_names / sizeof pre_names[0] && !e; i++)
            if (strlen(pre_names[i].name) == name_len && !memcmp(pre_names[i].name, name, name_len))
                e = &pre_names[i];
    }
    if (!e) {
        char list[360], shown[64];
        size_t k = name_len < 40 ? name_len : 40;
        for (size_t i = 0; i < k; i++) {
            unsigned char c = (unsigned char)name[i];
            shown[i] = c < 0x20 || c == 0x7F ? '?' : (char)c;
        }
        shown[k] = '\0';
        known_names(list, sizeof list);
        return mint_fail(err, MINT_E_UNSUPPORTED, "tokenizer.ggml.pre is '%s%s'; mint knows: %s",
                         shown, name_len > 40 ? "..." : "", list);
    }
    mint_pretok *p = calloc(1, sizeof *p);
    if (!p) return mint_fail(err, MINT_E_NOMEM, "out of memory compiling a pre-tokenizer");
    p->set = e->set;
    for (int i = 0; rx_sets[e->set][i]; i++) {
        char pattern[2048];
        if (!widen_spaces(rx_sets[e->set][i], pattern, sizeof pattern)) {
            mint_pretok_free(p);
            return mint_fail(err, MINT_E_LIMIT, "pre-tokenizer '%s': regex %d is too long", e->name,
                             i);
        }
        int code;
        PCRE2_SIZE at;
        pcre2_code *c =
            pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                          PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &code, &at, NULL);
        if (!c) {
            PCRE2_UCHAR msg[160];
            pcre2_get_error_message(code, msg, sizeof msg);
            mint_pretok_free(p);
            return mint_fail(err, MINT_E_UNSUPPORTED,
                             "pre-tokenizer '%s': PCRE2 cannot compile regex %d (at %zu: %s)",
                             e->name, i, (size_t)at, (const char *)msg);
        }
        // Without a JIT (some platforms) pcre2_match interprets; results are the same.
        (void)pcre2_jit_compile(c, PCRE2_JIT_COMPLETE);
        p->code[p->n++] = c;
    }
    *flags = e->flags;
    *out = p;
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Splitting

void mint_pretok_work_free(mint_pretok_work *w) {
    pcre2_match_data_free((pcre2_match_data *)w->match);
    free(w->cut);
    free(w->prev);
    memset(w, 0, sizeof *w);
}

static bool push_cut(mint_pretok_work *w, uint32_t end) {
    if (w->n_cut == w->cap_cut) {
        size_t cap = w->cap_cut ? 2 * w->cap_cut : 256;
        uint32_t *c = realloc(w->cut, cap * sizeof *c);
        if (!c) return false;
        w->cut = c;
        w->cap_cut = cap;
    }
    w->cut[w->n_cut++] = end;
    return true;
}

static uint32_t utf8_len(unsigned char c) {
    static const uint8_t len[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return len[c >> 4];
}

// Cuts text[a..b) with one regex: each match is a piece, and so is each gap between matches.
static mint_status cut_piece(const mint_pretok *p, int r, mint_pretok_work *w, const char *text,
                             uint32_t a, uint32_t b, mint_err *err) {
    pcre2_match_data *md = w->match;
    uint32_t pos = a, gap = a;
    while (pos < b) {
        int rc = pcre2_match(p->code[r], (PCRE2_SPTR)(text + a), b - a, pos - a, PCRE2_NO_UTF_CHECK,
                             md, NULL);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT) // deep backtracking: the interpreter uses the heap
            rc = pcre2_match(p->code[r], (PCRE2_SPTR)(text + a), b - a, pos - a,
                             PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md, NULL);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            PCRE2_UCHAR msg[120];
            pcre2_get_error_message(rc, msg, sizeof msg);
            return mint_fail(err, MINT_E_LIMIT,
                             "pre-tokenizer regex %d fails on a %u-byte piece of text: %s", r,
                             b - a, (const char *)msg);
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        uint32_t ms = a + (uint32_t)ov[0], me = a + (uint32_t)ov[1];
        if (me == ms) { // an empty match cuts nothing: look again one character further
            pos = ms + utf8_len((unsigned char)text[ms]);
            continue;
        }
        if ((ms > gap && !push_cut(w, ms)) || !push_cut(w, me))
            return mint_fail(err, MINT_E_NOMEM, "out of memory splitting text");
        gap = pos = me;
    }
    if (gap < b && !push_cut(w, b))
        return mint_fail(err, MINT_E_NOMEM, "out of memory splitting text");
    return MINT_OK;
}

mint_status mint_pretok_split(const mint_pretok *p, mint_pretok_work *w, const char *text,
                              size_t len, mint_err *err) {
    w->n_cut = 0;
    if (len == 0) return MINT_OK;
    if (len > UINT32_MAX)
        return mint_fail(err, MINT_E_LIMIT, "a text fragment of %zu bytes is too long to split",
                         len);
    if (!w->match && !(w->match = pcre2_match_data_create(1, NULL)))
        return mint_fail(err, MINT_E_NOMEM, "out of memory splitting text");
    mint_status st = cut_piece(p, 0, w, text, 0, (uint32_t)len, err);
    for (int r = 1; r < p->n && st == MINT_OK; r++) {
        // The pieces so far move to prev; this regex cuts each of them into cut.
        size_t n = w->n_cut;
        if (n > w->cap_prev) {
            uint32_t *q = realloc(w->prev, n * sizeof *q);
            if (!q) return mint_fail(err, MINT_E_NOMEM, "out of memory splitting text");
            w->prev = q;
            w->cap_prev = n;
        }
        memcpy(w->prev, w->cut, n * sizeof *w->prev);
        w->n_cut = 0;
        for (size_t i = 0; i < n && st == MINT_OK; i++)
            st = cut_piece(p, r, w, text, i ? w->prev[i - 1] : 0, w->prev[i], err);
    }
    return st;
}
