// tokenizer.c - the tokenizer's shared front and the SentencePiece merge, exactly as llama.cpp
// does them (src/llama-vocab.cpp: tokenizer_st_partition, impl::tokenize,
// llm_tokenizer_spm_session, token_to_piece, detokenize; docs/formats.md 6.2-6.4).
//
// Encoding has three stages:
//   1. partition (every kind): the text is cut into raw fragments and special tokens (CONTROL /
//      UNKNOWN texts only with parse_special; USER_DEFINED texts always), longest text first;
//   2. SentencePiece: each raw fragment gets a leading space when it starts the text or follows
//      a special token, has its spaces replaced by U+2581, and
//   3. is merged by BPE: start from one symbol per UTF-8 character and repeatedly merge the
//      adjacent pair whose concatenation is the highest-scoring token (leftmost on ties); a
//      final symbol that is not a token becomes one <0xXX> byte token per byte.
// Merge-rank BPE vocabularies do stages 2 and 3 their own way (bpe.c).
#include "base/error.h"
#include "runtime/text/bpe.h"
#include "runtime/text/vocab.h"

#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Stage 1: special-token partition

typedef struct fragment {
    int32_t id; // special token id, or -1 for raw text
    size_t off; // raw text: first byte in the input
    size_t len; // raw text: length in bytes (> 0)
} fragment;

typedef struct frag_list {
    fragment *f; // [n] fragments in text order
    size_t n;    // number of fragments
    size_t cap;  // allocated entries
} frag_list;

static bool frag_push(frag_list *l, fragment fr) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        fragment *f = realloc(l->f, cap * sizeof *f);
        if (!f) return false;
        l->f = f;
        l->cap = cap;
    }
    l->f[l->n++] = fr;
    return true;
}

static bool is_ascii_space(unsigned char c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static const char *find_bytes(const char *hay, size_t n, const char *needle, size_t m) {
    return m <= n ? memmem(hay, n, needle, m) : NULL;
}

// Splits every raw fragment of `in` at each occurrence of token `id` (left to right) into
// [raw left][token][raw right], appending to `out`. Empty raw pieces are dropped; LSTRIP /
// RSTRIP tokens also drop the whitespace next to them.
static bool split_at_token(const mint_vocab *v, const char *text, int32_t id, const frag_list *in,
                           frag_list *out) {
    const mint_vocab_token *t = &v->tok[id];
    out->n = 0;
    for (size_t i = 0; i < in->n; i++) {
        fragment fr = in->f[i];
        if (fr.id >= 0) {
            if (!frag_push(out, fr)) return false;
            continue;
        }
        size_t off = fr.off, end = fr.off + fr.len;
        while (off < end) {
            const char *m = find_bytes(text + off, end - off, t->text, t->len);
            if (!m) break;
            size_t at = (size_t)(m - text), left = at;
            if (t->attr & MINT_TOKEN_ATTR_LSTRIP)
                while (left > off && is_ascii_space((unsigned char)text[left - 1])) left--;
            if (left > off && !frag_push(out, (fragment){-1, off, left - off})) return false;
            if (!frag_push(out, (fragment){id, 0, 0})) return false;
            off = at + t->len;
            if (t->attr & MINT_TOKEN_ATTR_RSTRIP)
                while (off < end && is_ascii_space((unsigned char)text[off])) off++;
        }
        if (off < end && !frag_push(out, (fragment){-1, off, end - off})) return false;
    }
    return true;
}

static mint_status partition(const mint_vocab *v, const char *text, size_t len, bool parse_special,
                             frag_list *out, mint_err *err) {
    frag_list tmp = {0};
    out->n = 0;
    if (len > 0 && !frag_push(out, (fragment){-1, 0, len})) goto nomem;
    for (int32_t k = 0; k < v->n_special && out->n > 0; k++) {
        int32_t id = v->special[k];
        uint16_t attr = v->tok[id].attr;
        // Without parse_special only USER_DEFINED texts are split out (as HF tokenizers do).
        if (!parse_special && (attr & (MINT_TOKEN_ATTR_CONTROL | MINT_TOKEN_ATTR_UNKNOWN)))
            continue;
        if (!split_at_token(v, text, id, out, &tmp)) goto nomem;
        frag_list swap = *out;
        *out = tmp;
        tmp = swap;
    }
    free(tmp.f);
    return MINT_OK;
nomem:
    free(tmp.f);
    return mint_fail(err, MINT_E_NOMEM, "out of memory splitting %zu bytes of text", len);
}

// ---------------------------------------------------------------------------------------------
// Stage 3: BPE merge of one raw fragment

typedef struct symbol {
    int32_t prev; // index of the previous live symbol, -1 at the start
    int32_t next; // index of the next live symbol, -1 at the end
    uint32_t off; // first byte in the escaped fragment
    uint32_t n;   // bytes; 0 once merged into its left neighbour
} symbol;

typedef struct bigram {
    float score;   // score of the token the two symbols would form
    int32_t left;  // left symbol index
    int32_t right; // right symbol index (left's next when pushed)
    uint32_t size; // bytes of the pair when pushed; a mismatch later means it is stale
} bigram;

typedef struct spm_work {
    char *buf;       // [buf_cap] the escaped fragment
    size_t buf_cap;  // bytes allocated
    symbol *sym;     // [sym_cap] symbols
    size_t sym_cap;  // entries allocated
    bigram *heap;    // [heap_n] max-heap of merge candidates
    size_t heap_n;   // entries in use
    size_t heap_cap; // entries allocated
} spm_work;

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return true;
    size_t cap2 = *cap ? *cap : 64;
    while (cap2 < need) cap2 *= 2;
    void *q = realloc(*p, cap2 * elem);
    if (!q) return false;
    *p = q;
    *cap = cap2;
    return true;
}

// a pops before b: higher score, then smaller left index (llama.cpp's llm_bigram_spm order).
static bool pops_before(const bigram *a, const bigram *b) {
    return b->score < a->score || (b->score == a->score && b->left > a->left);
}

static bool heap_push(spm_work *w, bigram g) {
    if (!grow((void **)&w->heap, &w->heap_cap, w->heap_n + 1, sizeof g)) return false;
    size_t i = w->heap_n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!pops_before(&g, &w->heap[parent])) break;
        w->heap[i] = w->heap[parent];
        i = parent;
    }
    w->heap[i] = g;
    return true;
}

static bigram heap_pop(spm_work *w) {
    bigram top = w->heap[0], last = w->heap[--w->heap_n];
    size_t i = 0, n = w->heap_n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && pops_before(&w->heap[c + 1], &w->heap[c])) c++;
        if (!pops_before(&w->heap[c], &last)) break;
        w->heap[i] = w->heap[c];
        i = c;
    }
    if (n > 0) w->heap[i] = last;
    return top;
}

// Queues the pair (left, right) when their concatenation is a token. The type of the token is
// not checked (llama.cpp does not either).
static bool try_pair(const mint_vocab *v, spm_work *w, int32_t left, int32_t right) {
    if (left < 0 || right < 0) return true;
    uint32_t size = w->sym[left].n + w->sym[right].n;
    if (size > v->max_token_len) return true; // cannot be a token; keeps lookups O(1)
    int32_t id = mint_strmap_get(&v->map, w->buf + w->sym[left].off, size);
    if (id < 0) return true;
    return heap_push(w, (bigram){v->tok[id].score, left, right, size});
}

// Merges the symbols [lo, hi), linked among themselves, highest-scoring pair first.
static bool bpe_merge(const mint_vocab *v, spm_work *w, int32_t lo, int32_t hi) {
    w->heap_n = 0;
    for (int32_t i = lo + 1; i < hi; i++)
        if (!try_pair(v, w, i - 1, i)) return false;
    while (w->heap_n > 0) {
        bigram g = heap_pop(w);
        symbol *l = &w->sym[g.left], *r = &w->sym[g.right];
        if (l->n == 0 || r->n == 0 || l->n + r->n != g.size) continue; // stale
        l->n += r->n;
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0) w->sym[r->next].prev = g.left;
        if (!try_pair(v, w, l->prev, g.left) || !try_pair(v, w, g.left, l->next)) return false;
    }
    return true;
}

// Emits the merged symbols linked from lo: a symbol that is a token gives its id; any other
// (a single character missing from the vocabulary) falls back to one byte token per byte.
static mint_status emit_symbols(const mint_vocab *v, const spm_work *w, int32_t lo, mint_id_out *o,
                                mint_err *err) {
    for (int32_t i = lo; i >= 0; i = w->sym[i].next) {
        const symbol *s = &w->sym[i];
        int32_t id = mint_strmap_get(&v->map, w->buf + s->off, s->n);
        if (id >= 0) {
            mint_id_out_put(o, id);
            continue;
        }
        for (uint32_t j = 0; j < s->n; j++) {
            unsigned char b = (unsigned char)w->buf[s->off + j];
            if (v->byte_id[b] < 0)
                return mint_fail(err, MINT_E_UNSUPPORTED,
                                 "cannot tokenize byte 0x%02X: the vocabulary has neither "
                                 "<0x%02X> nor the byte itself as a token",
                                 b, b);
            mint_id_out_put(o, v->byte_id[b]);
        }
    }
    return MINT_OK;
}

// Whether initial symbol i is "▁" with something other than "▁" before it. When every "▁" in
// every token sits in a leading run (mint_vocab.space_runs_lead), no token can contain the
// bytes on both sides of such a point: a token that did would hold a "▁" at offset > 0 that
// is not preceded by "▁". Merges never cross it then, and since merges on either side do not
// interact and keep their relative order, BPE over each word alone gives exactly the result of
// BPE over the whole fragment, with heaps that stay small.
static bool starts_word(const spm_work *w, int32_t i) {
    const symbol *s = &w->sym[i];
    return s->n == 3 && memcmp(w->buf + s->off, "\xE2\x96\x81", 3) == 0 &&
           (s->off < 3 || memcmp(w->buf + s->off - 3, "\xE2\x96\x81", 3) != 0);
}

// UTF-8 sequence length from the lead byte's high nibble; a stray continuation byte is 1.
static uint32_t utf8_len(unsigned char c) {
    static const uint8_t len[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return len[c >> 4];
}

static mint_status spm_encode(const mint_vocab *v, spm_work *w, const char *src, size_t len,
                              bool space_prefix, mint_id_out *o, mint_err *err) {
    // Escape: optional leading space, then every ' ' becomes U+2581 (E2 96 81). Symbol indices
    // are int32, which bounds the fragment length.
    if (len > (INT32_MAX - 3) / 3)
        return mint_fail(err, MINT_E_LIMIT,
                         "a text fragment of %zu bytes is too long to tokenize (at most %d bytes "
                         "between special tokens)",
                         len, (INT32_MAX - 3) / 3);
    if (!grow((void **)&w->buf, &w->buf_cap, 3 * (len + 1), 1)) goto nomem;
    size_t n = 0;
    for (size_t i = 0; i < len + space_prefix; i++) {
        char c = i < (size_t)space_prefix ? ' ' : src[i - space_prefix];
        if (c == ' ') {
            memcpy(w->buf + n, "\xE2\x96\x81", 3);
            n += 3;
        } else {
            w->buf[n++] = c;
        }
    }
    // One symbol per UTF-8 character, clipped at the end.
    if (!grow((void **)&w->sym, &w->sym_cap, n, sizeof(symbol))) goto nomem;
    int32_t n_sym = 0;
    for (size_t off = 0; off < n; n_sym++) {
        uint32_t k = utf8_len((unsigned char)w->buf[off]);
        if (k > n - off) k = (uint32_t)(n - off);
        w->sym[n_sym] = (symbol){n_sym - 1, -1, (uint32_t)off, k};
        off += k;
        if (off < n) w->sym[n_sym].next = n_sym + 1;
    }
    // Merge word by word when the vocabulary allows it (see starts_word), else all at once.
    for (int32_t lo = 0, hi; lo < n_sym; lo = hi) {
        hi = lo + 1;
        while (hi < n_sym && !(v->space_runs_lead && starts_word(w, hi))) hi++;
        w->sym[lo].prev = -1;
        w->sym[hi - 1].next = -1;
        if (!bpe_merge(v, w, lo, hi)) goto nomem;
        mint_status st = emit_symbols(v, w, lo, o, err);
        if (st != MINT_OK) return st;
    }
    return MINT_OK;
nomem:
    return mint_fail(err, MINT_E_NOMEM, "out of memory tokenizing %zu bytes", len);
}

// ---------------------------------------------------------------------------------------------
// Encoding

mint_status mint_vocab_tokenize(const mint_vocab *v, const char *text, size_t len, bool add_special,
                                bool parse_special, int32_t *ids, size_t cap, size_t *n_out,
                                mint_err *err) {
    *n_out = 0;
    if (len > 0 && !text) return mint_fail(err, MINT_E_ARG, "tokenize: text is NULL, len %zu", len);
    if (cap > 0 && !ids) return mint_fail(err, MINT_E_ARG, "tokenize: ids is NULL, cap %zu", cap);
    frag_list frags = {0};
    mint_status st = partition(v, text, len, parse_special, &frags, err);
    if (st != MINT_OK) return st;

    mint_id_out o = {ids, cap, 0};
    spm_work w = {0};
    mint_bpe_work bw = {0};
    // The first raw fragment gets the space prefix too: it "follows" the start of the text.
    bool prev_special = true;
    if (add_special && v->add_bos && v->bos >= 0) mint_id_out_put(&o, v->bos);
    for (size_t i = 0; i < frags.n && st == MINT_OK; i++) {
        const fragment *fr = &frags.f[i];
        if (fr->id >= 0) {
            mint_id_out_put(&o, fr->id);
            prev_special = true;
        } else if (v->kind == MINT_VOCAB_BPE) {
            st = mint_bpe_encode(v, &bw, text + fr->off, fr->len, &o, err);
        } else {
            st = spm_encode(v, &w, text + fr->off, fr->len, v->add_space_prefix && prev_special, &o,
                            err);
            prev_special = false;
        }
    }
    if (add_special && v->add_eos && v->eos >= 0) mint_id_out_put(&o, v->eos);
    free(frags.f);
    free(w.buf);
    free(w.sym);
    free(w.heap);
    mint_bpe_work_free(&bw);
    if (st != MINT_OK) return st;
    *n_out = o.n;
    if (o.n > cap)
        return mint_fail(err, MINT_E_LIMIT,
                         "tokenize: the text needs %zu token%s, the buffer holds %zu", o.n,
                         o.n == 1 ? "" : "s", cap);
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Decoding

// The byte of a <0xXX> token: hex digits from its 4th character on, read like strtol would
// (llama.cpp parses text.substr(3, 2) with strtol).
static unsigned char byte_of_token(const mint_vocab_token *t) {
    unsigned v = 0;
    for (uint32_t i = 3; i < t->len && i < 5; i++) {
        char c = t->text[i];
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (d == 16) break;
        v = v * 16 + d;
    }
    return (unsigned char)v;
}

// Copies src[n] to dst (at most cap bytes written, only when all fit) after dropping up to
// lstrip leading spaces; returns the piece length.
static size_t put_piece(const char *src, size_t n, int lstrip, char *dst, size_t cap) {
    for (int i = 0; i < lstrip && n > 0 && *src == ' '; i++) {
        src++;
        n--;
    }
    if (n <= cap && n > 0) memcpy(dst, src, n);
    return n;
}

// A NORMAL token's text with every U+2581 turned into a space, minus up to lstrip leading
// spaces; written to dst when it is not NULL. Returns the length.
static size_t unescape(const char *s, uint32_t len, int lstrip, char *dst) {
    size_t n = 0;
    bool leading = true;
    for (uint32_t i = 0; i < len; i++) {
        char c = s[i];
        if (i + 2 < len && memcmp(s + i, "\xE2\x96\x81", 3) == 0) {
            c = ' ';
            i += 2;
        }
        if (leading && c == ' ' && lstrip > 0) {
            lstrip--;
            continue;
        }
        leading = false;
        if (dst) dst[n] = c;
        n++;
    }
    return n;
}

size_t mint_vocab_token_to_piece(const mint_vocab *v, int32_t id, bool special, int lstrip,
                                 char *buf, size_t cap) {
    if (id < 0 || id >= v->n) return 0;
    const mint_vocab_token *t = &v->tok[id];
    const uint16_t special_attr = MINT_TOKEN_ATTR_UNKNOWN | MINT_TOKEN_ATTR_CONTROL;
    if (!special && (t->attr & special_attr)) return 0;
    if (t->attr & (special_attr | MINT_TOKEN_ATTR_USER_DEFINED))
        return put_piece(t->text, t->len, lstrip, buf, cap);
    if ((t->attr & MINT_TOKEN_ATTR_NORMAL) && v->kind == MINT_VOCAB_BPE &&
        !(v->pre_flags & MINT_PRE_ESCAPE)) {
        size_t n = mint_bpe_decode_text(t->text, t->len, lstrip, NULL);
        if (n <= cap && n > 0) mint_bpe_decode_text(t->text, t->len, lstrip, buf);
        return n;
    }
    if (t->attr & MINT_TOKEN_ATTR_NORMAL) {
        size_t n = unescape(t->text, t->len, lstrip, NULL);
        if (n <= cap) unescape(t->text, t->len, lstrip, buf);
        return n;
    }
    if (t->attr & MINT_TOKEN_ATTR_BYTE) {
        char b = (char)byte_of_token(t);
        return put_piece(&b, 1, lstrip, buf, cap);
    }
    return 0; // UNUSED and UNDEFINED tokens have no text
}

// llama.cpp's clean_up_tokenization_spaces, three passes in place over t[0..n), each keeping
// the first byte and returning the new length. Each pass reads t[i - 1] and t[i + 1] before
// anything at or after i - 1 is overwritten, so it sees the text as the pass found it, except
// where noted.

// " ?", " !", " .", " ," lose the space.
static size_t clean_punctuation(char *t, size_t n) {
    size_t o = n ? 1 : 0;
    for (size_t i = 1; i < n; i++) {
        char x = t[i];
        if (t[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ','))
            o--; // overwrite the space
        t[o++] = x;
    }
    return o;
}

// " ' " becomes "'". The space after is zeroed as it is skipped (llama.cpp does the same), so
// the character after it does not see a space before itself.
static size_t clean_lone_quote(char *t, size_t n) {
    size_t o = n ? 1 : 0;
    for (size_t i = 1; i < n; i++) {
        char x = t[i];
        if (x == '\'' && i + 1 < n && t[i - 1] == ' ' && t[i + 1] == ' ') {
            o--;
            t[++i] = '\0';
        }
        t[o++] = x;
    }
    return o;
}

// " 's", " 'm", " 're", " 've" lose the space (" 't", " 'd", " 'll" keep it).
static size_t clean_contractions(char *t, size_t n) {
    size_t o = n ? 1 : 0;
    for (size_t i = 1; i < n; i++) {
        char x = t[i];
        if (t[i - 1] == ' ' && x == '\'' && i + 1 < n) {
            char a = t[i + 1], b = i + 2 < n ? t[i + 2] : '\0';
            if (a == 's' || a == 'm' || ((a == 'r' || a == 'v') && b == 'e')) o--;
        }
        t[o++] = x;
    }
    return o;
}

size_t mint_vocab_detokenize(const mint_vocab *v, const int32_t *ids, size_t n, bool remove_special,
                             bool unparse_special, char *buf, size_t cap) {
    // The space prefix added when encoding is removed from the first piece, unless a BOS was
    // dropped in front of it (llama.cpp's rule; docs/formats.md 6.4).
    bool remove_space = v->add_space_prefix;
    if (remove_special && v->add_bos && n > 0 && ids[0] == v->bos) {
        remove_space = false;
        ids++;
        n--;
    }
    if (remove_special && v->add_eos && n > 0 && ids[n - 1] == v->eos) n--;
    size_t total = 0;
    bool full = !buf; // once a piece did not fit, nothing more is written
    for (size_t i = 0; i < n; i++) {
        size_t avail = full ? 0 : cap - total;
        size_t k = mint_vocab_token_to_piece(v, ids[i], unparse_special, remove_space,
                                             full ? NULL : buf + total, avail);
        remove_space = false;
        if (k > avail) full = true;
        total += k;
    }
    if (v->clean_spaces && !full) // only once every piece is there, as in llama.cpp
        total = clean_contractions(buf, clean_lone_quote(buf, clean_punctuation(buf, total)));
    return total;
}
