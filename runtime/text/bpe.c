// bpe.c - merge-rank BPE: loading the merges, and encoding a fragment (see bpe.h).
#include "runtime/text/bpe.h"

#include "base/arena.h"
#include "base/error.h"
#include "base/strmap.h"
#include "formats/tensor_dir.h"
#include "runtime/text/byte_unicode.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// One merge in the pair table, found by its two symbols.
typedef struct pair_slot {
    uint64_t key;   // left symbol << 32 | right symbol; PAIR_EMPTY for a free slot
    int32_t rank;   // merge rank (index in tokenizer.ggml.merges; lower merges first)
    int32_t merged; // the symbol the two become
} pair_slot;

#define PAIR_EMPTY UINT64_MAX

struct mint_bpe {
    mint_pretok *pre;      // the pre-tokenizer
    uint32_t flags;        // its MINT_PRE_* bits
    int32_t n_tokens;      // symbols below this are tokens
    int32_t n_sym;         // symbols numbered so far (tokens + merge-only texts)
    mint_strmap extra;     // merge-only text -> symbol (>= n_tokens)
    mint_arena texts;      // those texts
    pair_slot *pairs;      // [pair_mask + 1] open addressing, at most ~2/3 full
    uint64_t pair_mask;    // slots - 1 (a power of two minus one)
    int32_t byte_sym[256]; // byte-level: symbol of the character byte b stands for, or -1
    int32_t byte_tok[256]; // token whose text is the single byte b, or -1
    int32_t hex_tok[256];  // token "<0xXX>" for byte b, or -1
};

// ---------------------------------------------------------------------------------------------
// Symbols and pairs

static int32_t sym_find(const mint_bpe *b, const mint_vocab *v, const char *s, size_t n) {
    int32_t id = mint_strmap_get(&v->map, s, n);
    return id >= 0 ? id : mint_strmap_get(&b->extra, s, n);
}

// The symbol of a text, numbering it when it is new. -1 when out of memory or numbers.
static int32_t sym_intern(mint_bpe *b, const mint_vocab *v, const char *s, size_t n) {
    int32_t id = sym_find(b, v, s, n);
    if (id >= 0) return id;
    if (b->n_sym == INT32_MAX) return -1;
    char *copy = mint_arena_strndup(&b->texts, s, n);
    if (!copy || mint_strmap_put(&b->extra, copy, n, b->n_sym, NULL) != MINT_OK) return -1;
    return b->n_sym++;
}

static uint64_t pair_hash(uint64_t key) {
    key ^= key >> 29;
    key *= 0x9E3779B97F4A7C15ull;
    return key ^ (key >> 32);
}

static pair_slot *pair_slot_of(const mint_bpe *b, uint64_t key) {
    for (uint64_t i = pair_hash(key) & b->pair_mask;; i = (i + 1) & b->pair_mask) {
        pair_slot *s = &b->pairs[i];
        if (s->key == key || s->key == PAIR_EMPTY) return s;
    }
}

// Rank of merging symbols l and r (and *merged the result), or -1 when they do not merge.
static inline int32_t pair_rank(const mint_bpe *b, int32_t l, int32_t r, int32_t *merged) {
    if (l < 0 || r < 0) return -1;
    const pair_slot *s = pair_slot_of(b, (uint64_t)(uint32_t)l << 32 | (uint32_t)r);
    if (s->key == PAIR_EMPTY) return -1;
    *merged = s->merged;
    return s->rank;
}

// ---------------------------------------------------------------------------------------------
// Loading

static mint_status load_merges(const mint_file *f, const mint_vocab *v, mint_bpe *b,
                               mint_err *err) {
    const char *key = "tokenizer.ggml.merges";
    mint_value_type type;
    uint64_t n;
    mint_err e;
    mint_status st = mint_file_get_arr(f, key, &type, &n, NULL, &e);
    if (st == MINT_E_NOT_FOUND)
        return mint_fail(err, st, "%s is missing; a BPE vocabulary needs its merges", key);
    if (st != MINT_OK) {
        if (err) *err = e;
        return st;
    }
    if (type != MINT_VAL_STRING)
        return mint_fail(err, MINT_E_TYPE, "metadata key '%s' is an array of %s, expected str", key,
                         mint_value_type_name(type));
    if (n > INT32_MAX)
        return mint_fail(err, MINT_E_LIMIT, "%s has %" PRIu64 " entries, more than int32 ranks",
                         key, n);
    uint64_t cap = 16;
    while (cap < n + n / 2 + 1) cap *= 2;
    b->pairs = malloc((size_t)cap * sizeof *b->pairs);
    if (!b->pairs || mint_strmap_init(&b->extra, 1024) != MINT_OK)
        return mint_fail(err, MINT_E_NOMEM, "out of memory loading %" PRIu64 " merges", n);
    for (uint64_t i = 0; i < cap; i++) b->pairs[i].key = PAIR_EMPTY;
    b->pair_mask = cap - 1;
    char *cat = NULL;
    size_t cat_cap = 0;
    for (uint64_t i = 0; i < n; i++) {
        const char *s;
        uint64_t len;
        if ((st = mint_file_get_arr_str(f, key, i, &s, &len, err)) != MINT_OK) break;
        // The parts are split at the first space after the first byte (a part may begin with a
        // space); a merge with an empty right part can never apply, as in llama.cpp.
        const char *sp = len > 1 ? memchr(s + 1, ' ', (size_t)len - 1) : NULL;
        if (!sp) {
            char shown[48];
            int k = (int)(len < 40 ? len : 40);
            for (int j = 0; j < k; j++) shown[j] = (unsigned char)s[j] < 0x20 ? '?' : s[j];
            shown[k] = '\0';
            st = mint_fail(err, MINT_E_FORMAT,
                           "%s[%" PRIu64 "] is '%s%s': no space separates the two parts", key, i,
                           shown, len > 40 ? "..." : "");
            break;
        }
        size_t nl = (size_t)(sp - s), nr = (size_t)len - nl - 1;
        if (nr == 0) continue;
        if (nl + nr > cat_cap) {
            char *c2 = realloc(cat, nl + nr);
            if (!c2) goto nomem;
            cat = c2;
            cat_cap = nl + nr;
        }
        memcpy(cat, s, nl);
        memcpy(cat + nl, sp + 1, nr);
        int32_t l = sym_intern(b, v, s, nl), r = sym_intern(b, v, sp + 1, nr);
        int32_t m = sym_intern(b, v, cat, nl + nr);
        if (l < 0 || r < 0 || m < 0) goto nomem;
        uint64_t k = (uint64_t)(uint32_t)l << 32 | (uint32_t)r;
        pair_slot *slot = pair_slot_of(b, k);
        if (slot->key == PAIR_EMPTY) *slot = (pair_slot){k, (int32_t)i, m}; // first one wins
    }
    free(cat);
    return st;
nomem:
    free(cat);
    return mint_fail(err, MINT_E_NOMEM, "out of memory loading %" PRIu64 " merges", n);
}

mint_status mint_bpe_load(const mint_file *f, const mint_vocab *v, const char *pre, size_t pre_len,
                          mint_bpe **out, uint32_t *pre_flags, mint_err *err) {
    *out = NULL;
    mint_bpe *b = calloc(1, sizeof *b);
    if (!b) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    b->n_tokens = b->n_sym = v->n;
    mint_status st = mint_pretok_create(pre, pre_len, &b->pre, &b->flags, err);
    if (st == MINT_OK) st = load_merges(f, v, b, err);
    if (st != MINT_OK) {
        mint_bpe_free(b);
        return st;
    }
    static const char hex[] = "0123456789ABCDEF";
    for (int c = 0; c < 256; c++) {
        char ch[4], one = (char)c;
        uint32_t k = mint_utf8_encode(mint_byte_to_cp((uint8_t)c), ch);
        b->byte_sym[c] = sym_find(b, v, ch, k);
        b->byte_tok[c] = mint_strmap_get(&v->map, &one, 1);
        char name[6] = {'<', '0', 'x', hex[c >> 4], hex[c & 15], '>'};
        b->hex_tok[c] = mint_strmap_get(&v->map, name, 6);
    }
    *pre_flags = b->flags;
    *out = b;
    return MINT_OK;
}

void mint_bpe_free(mint_bpe *b) {
    if (!b) return;
    mint_pretok_free(b->pre);
    mint_strmap_free(&b->extra);
    mint_arena_free(&b->texts);
    free(b->pairs);
    free(b);
}

// ---------------------------------------------------------------------------------------------
// Encoding

typedef struct bsym {
    int32_t id;   // symbol number, -1 for a character no merge or token knows
    uint32_t off; // first byte in the word
    uint32_t n;   // bytes (0 once merged into the left neighbour)
    int32_t prev; // long words: previous live symbol, -1 at the start
    int32_t next; // long words: next live symbol, -1 at the end
} bsym;

typedef struct cand {
    uint64_t key;  // rank << 32 | left symbol index: the smallest pops first
    int32_t right; // right symbol index when queued
    uint32_t size; // bytes of the pair when queued; a mismatch later means it is stale
} cand;

void mint_bpe_work_free(mint_bpe_work *w) {
    mint_pretok_work_free(&w->pre);
    free(w->norm);
    free(w->rx);
    free(w->word);
    free(w->sym);
    free(w->heap);
    memset(w, 0, sizeof *w);
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return true;
    size_t c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

// Words of up to this many symbols merge by scanning (no heap): the same order, since the
// adjacent pairs that merge are exactly the heap's live entries.
enum { SHORT_WORD = 32 };

// Returns the number of symbols left.
static uint32_t merge_short(const mint_bpe *b, bsym *s, uint32_t n) {
    int32_t rank[SHORT_WORD], merged[SHORT_WORD];
    for (uint32_t i = 0; i + 1 < n; i++) rank[i] = pair_rank(b, s[i].id, s[i + 1].id, &merged[i]);
    while (n > 1) {
        int32_t best = -1;
        for (uint32_t i = 0; i + 1 < n; i++)
            if (rank[i] >= 0 && (best < 0 || rank[i] < rank[best])) best = (int32_t)i;
        if (best < 0) break;
        uint32_t k = (uint32_t)best;
        s[k].id = merged[k];
        s[k].n += s[k + 1].n;
        n--;
        memmove(&s[k + 1], &s[k + 2], (n - k - 1) * sizeof *s);
        memmove(&rank[k + 1], &rank[k + 2], (n > k + 2 ? n - k - 2 : 0) * sizeof *rank);
        memmove(&merged[k + 1], &merged[k + 2], (n > k + 2 ? n - k - 2 : 0) * sizeof *merged);
        if (k > 0) rank[k - 1] = pair_rank(b, s[k - 1].id, s[k].id, &merged[k - 1]);
        if (k + 1 < n) rank[k] = pair_rank(b, s[k].id, s[k + 1].id, &merged[k]);
    }
    return n;
}

static void heap_push(cand *h, size_t *n, cand c) {
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2].key > c.key) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = c;
}

static cand heap_pop(cand *h, size_t *n) {
    cand top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1].key < h[c].key) c++;
        if (h[c].key >= last.key) break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0) h[i] = last;
    return top;
}

static void try_pair(const mint_bpe *b, bsym *s, cand *h, size_t *nh, int32_t l, int32_t r) {
    int32_t m;
    if (l < 0 || r < 0) return;
    int32_t rank = pair_rank(b, s[l].id, s[r].id, &m);
    if (rank >= 0) heap_push(h, nh, (cand){(uint64_t)rank << 32 | (uint32_t)l, r, s[l].n + s[r].n});
}

// Long words: a heap of candidate pairs, stale ones skipped when popped. Every push follows a
// merge, which removes a symbol, so the heap never holds more than 2n entries.
static void merge_long(const mint_bpe *b, bsym *s, uint32_t n, cand *h) {
    size_t nh = 0;
    for (uint32_t i = 0; i < n; i++) {
        s[i].prev = (int32_t)i - 1;
        s[i].next = i + 1 < n ? (int32_t)i + 1 : -1;
    }
    for (uint32_t i = 1; i < n; i++) try_pair(b, s, h, &nh, (int32_t)i - 1, (int32_t)i);
    while (nh > 0) {
        cand c = heap_pop(h, &nh);
        int32_t li = (int32_t)(uint32_t)c.key;
        bsym *l = &s[li], *r = &s[c.right];
        if (l->n == 0 || r->n == 0 || l->next != c.right || l->n + r->n != c.size) continue;
        int32_t m = -1; // the pair is live, so its ids are the ones it was queued with
        (void)pair_rank(b, l->id, r->id, &m);
        l->id = m;
        l->n += r->n;
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0) s[r->next].prev = li;
        try_pair(b, s, h, &nh, l->prev, li);
        try_pair(b, s, h, &nh, li, l->next);
    }
}

// Emits one final symbol: its token, else one token per byte where the vocabulary has one.
static void emit_symbol(const mint_bpe *b, const bsym *s, const char *word, mint_id_out *o) {
    if (s->id >= 0 && s->id < b->n_tokens) {
        mint_id_out_put(o, s->id);
        return;
    }
    for (uint32_t i = 0; i < s->n; i++) {
        uint8_t c = (uint8_t)word[s->off + i];
        if (b->flags & MINT_PRE_ESCAPE) {
            if (b->hex_tok[c] >= 0) mint_id_out_put(o, b->hex_tok[c]);
            continue;
        }
        // Byte-level: llama.cpp looks up each byte of the symbol's text in the byte map's
        // characters as a one-byte token.
        char ch[4];
        uint32_t k = mint_utf8_encode(mint_byte_to_cp(c), ch);
        for (uint32_t j = 0; j < k; j++) {
            int32_t t = b->byte_tok[(uint8_t)ch[j]];
            if (t >= 0) mint_id_out_put(o, t);
        }
    }
}

static uint32_t utf8_len(unsigned char c) {
    static const uint8_t len[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return len[c >> 4];
}

// One word, word[0..n) of the re-encoded text.
static mint_status encode_word(const mint_vocab *v, const mint_bpe *b, mint_bpe_work *w,
                               const char *word, uint32_t n, mint_id_out *o, mint_err *err) {
    const bool escape = b->flags & MINT_PRE_ESCAPE;
    if (b->flags & MINT_PRE_IGNORE_MERGES) {
        const char *text = word;
        size_t tn = n;
        if (!escape) { // the word in the byte map's characters
            if (!grow((void **)&w->word, &w->cap_word, 2 * (size_t)n, 1)) goto nomem;
            tn = 0;
            for (uint32_t i = 0; i < n; i++)
                tn += mint_utf8_encode(mint_byte_to_cp((uint8_t)word[i]), w->word + tn);
            text = w->word;
        }
        int32_t id = tn <= v->max_token_len ? mint_strmap_get(&v->map, text, tn) : -1;
        if (id >= 0) {
            mint_id_out_put(o, id);
            return MINT_OK;
        }
    } else if (b->flags & MINT_PRE_NEWLINE_WORD) {
        uint32_t i = 0;
        while (i < n && word[i] == '\n') i++;
        int32_t id = i == n ? mint_strmap_get(&v->map, word, n) : -1;
        if (id >= 0) {
            mint_id_out_put(o, id);
            return MINT_OK;
        }
    }
    // One symbol per byte (byte-level) or per UTF-8 character (clipped at the word's end).
    if (!grow(&w->sym, &w->cap_sym, n, sizeof(bsym))) goto nomem;
    bsym *s = w->sym;
    uint32_t ns = 0;
    for (uint32_t off = 0; off < n; ns++) {
        uint32_t k = 1;
        int32_t id;
        if (escape) {
            k = utf8_len((unsigned char)word[off]);
            if (k > n - off) k = n - off;
            id = sym_find(b, v, word + off, k);
        } else {
            id = b->byte_sym[(uint8_t)word[off]];
        }
        s[ns] = (bsym){id, off, k, 0, 0};
        off += k;
    }
    if (ns <= SHORT_WORD) {
        ns = merge_short(b, s, ns);
        for (uint32_t i = 0; i < ns; i++) emit_symbol(b, &s[i], word, o);
        return MINT_OK;
    }
    if (!grow(&w->heap, &w->cap_heap, 2 * (size_t)ns, sizeof(cand))) goto nomem;
    merge_long(b, s, ns, w->heap);
    for (int32_t i = 0; i >= 0; i = s[i].next) emit_symbol(b, &s[i], word, o);
    return MINT_OK;
nomem:
    return mint_fail(err, MINT_E_NOMEM, "out of memory tokenizing a %u-byte word", n);
}

// The fragment as llama.cpp tokenizes it: lenient UTF-8 written again, ' ' as U+2581 for
// SentencePiece-style vocabularies. *surrogates tells whether a surrogate code point (which
// PCRE2 does not accept as UTF-8) was written. Returns the length.
static size_t normalize(const char *src, size_t len, bool escape, char *dst, bool *surrogates) {
    size_t o = 0;
    *surrogates = false;
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)src[i];
        if (c < 0x80 && !(escape && c == ' ')) { // ASCII: as it is
            dst[o++] = (char)c;
            i++;
            continue;
        }
        uint32_t k, cp = mint_utf8_decode(src + i, len - i, &k);
        i += k;
        if (escape && cp == ' ') cp = 0x2581;
        if (cp >= 0xD800 && cp <= 0xDFFF) *surrogates = true;
        o += mint_utf8_encode(cp, dst + o);
    }
    return o;
}

mint_status mint_bpe_encode(const mint_vocab *v, mint_bpe_work *w, const char *text, size_t len,
                            mint_id_out *o, mint_err *err) {
    const mint_bpe *b = v->bpe;
    if (len > (UINT32_MAX - 3) / 3)
        return mint_fail(err, MINT_E_LIMIT,
                         "a text fragment of %zu bytes is too long to tokenize (at most %u bytes "
                         "between special tokens)",
                         len, (UINT32_MAX - 3) / 3);
    // Every input byte becomes at most 3 bytes (U+FFFD or U+2581).
    if (!grow((void **)&w->norm, &w->cap_norm, 3 * len + 1, 1))
        return mint_fail(err, MINT_E_NOMEM, "out of memory tokenizing %zu bytes", len);
    bool surrogates;
    size_t n = normalize(text, len, b->flags & MINT_PRE_ESCAPE, w->norm, &surrogates);
    const char *rx = w->norm;
    if (surrogates) { // a private-use character (no category the regexes name) stands in
        if (!grow((void **)&w->rx, &w->cap_rx, n + 1, 1))
            return mint_fail(err, MINT_E_NOMEM, "out of memory tokenizing %zu bytes", len);
        memcpy(w->rx, w->norm, n);
        for (size_t i = 0; i + 2 < n; i++)
            if ((unsigned char)w->rx[i] == 0xED && (unsigned char)w->rx[i + 1] >= 0xA0)
                memcpy(w->rx + i, "\xEE\x80\x80", 3);
        rx = w->rx;
    }
    mint_status st = mint_pretok_split(b->pre, &w->pre, rx, n, err);
    for (size_t i = 0, start = 0; i < w->pre.n_cut && st == MINT_OK; i++) {
        size_t end = w->pre.cut[i];
        st = encode_word(v, b, w, w->norm + start, (uint32_t)(end - start), o, err);
        start = end;
    }
    return st;
}

// ---------------------------------------------------------------------------------------------
// Decoding

size_t mint_bpe_decode_text(const char *text, uint32_t len, int lstrip, char *dst) {
    size_t o = 0;
    for (uint32_t i = 0; i < len;) {
        uint32_t k, cp = mint_utf8_decode(text + i, len - i, &k);
        i += k;
        int byte = mint_cp_to_byte(cp);
        if (byte == ' ' && o == 0 && lstrip > 0) { // leading spaces dropped
            lstrip--;
            continue;
        }
        if (byte >= 0) {
            if (dst) dst[o] = (char)byte;
            o++;
            continue;
        }
        char ch[4], tmp[16];
        uint32_t kn = mint_utf8_encode(cp, ch);
        int hn = snprintf(tmp, sizeof tmp, "[UNK_BYTE_0x");
        if (dst) memcpy(dst + o, tmp, (size_t)hn);
        o += (size_t)hn;
        for (uint32_t j = 0; j < kn; j++) {
            snprintf(tmp, sizeof tmp, "%02x", (unsigned)(uint8_t)ch[j]);
            if (dst) memcpy(dst + o, tmp, 2);
            o += 2;
        }
        if (dst) memcpy(dst + o, text, len);
        o += len;
        if (dst) dst[o] = ']';
        o++;
    }
    return o;
}
