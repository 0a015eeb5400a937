// token_trie.c - building the vocabulary's byte trie (token_trie.h).
//
// The pieces are sorted as byte strings; in that order each piece adds the nodes for its bytes
// past the prefix it shares with the one before, which lays the trie out depth-first with
// children by byte, and puts every node's tokens (equal pieces are neighbours) in node order.
#include "runtime/text/token_trie.h"

#include "base/error.h"
#include "runtime/text/vocab.h"

#include <stdlib.h>
#include <string.h>

void mint_token_trie_free(mint_token_trie *t) {
    if (!t) return;
    free(t->byte);
    free(t->depth);
    free(t->skip);
    free(t->tok_at);
    free(t->tok);
    free(t->piece_at);
    free(t->blob);
    free(t->flags);
    free(t->eog);
    free(t->outside);
    free(t->asc);
    free(t->sub);
    free(t);
}

// Bytes after a lead byte (by its high nibble), as llama.cpp's grammar decodes; -1: cannot lead.
static const int8_t EXTRA[16] = {0, 0, 0, 0, 0, 0, 0, 0, -1, -1, -1, -1, 1, 1, 2, 3};
static const uint8_t LEAD_BITS[4] = {0x7F, 0x3F, 0x1F, 0x0F};

// MINT_TRIE_CP and MINT_TRIE_CUT of a piece decoded alone as llama.cpp's grammar decodes it (a
// lead byte, then as many following bytes as it says, unchecked).
static uint8_t decode_flags(const uint8_t *p, size_t n) {
    size_t cps = 0, i = 0;
    while (i < n) {
        const int k = EXTRA[p[i] >> 4];
        if (k < 0) return 0;
        if (i + 1 + (size_t)k > n) return cps ? MINT_TRIE_CP | MINT_TRIE_CUT : MINT_TRIE_CUT;
        cps++;
        i += 1 + (size_t)k;
    }
    return cps ? MINT_TRIE_CP : 0;
}

typedef struct piece_ref {
    const char *p; // the piece's bytes
    uint32_t len;  // its length
    int32_t id;    // the token
} piece_ref;

static int cmp_piece(const void *a, const void *b) {
    const piece_ref *x = a, *y = b;
    const int c = memcmp(x->p, y->p, x->len < y->len ? x->len : y->len);
    if (c) return c;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

// The pieces, their flags and the end-of-generation list.
static bool read_pieces(const mint_vocab *v, mint_token_trie *t) {
    const int32_t n = v->n;
    size_t total = 0;
    for (int32_t i = 0; i < n; i++) total += mint_vocab_token_to_piece(v, i, true, 0, NULL, 0);
    t->piece_at = malloc(((size_t)n + 1) * sizeof *t->piece_at);
    t->blob = malloc(total + 1);
    t->flags = calloc((size_t)n, 1);
    t->eog = malloc(((size_t)n + 1) * sizeof *t->eog);
    if (!t->piece_at || !t->blob || !t->flags || !t->eog || total > UINT32_MAX) return false;
    size_t at = 0;
    for (int32_t i = 0; i < n; i++) {
        t->piece_at[i] = (uint32_t)at;
        if (v->tok[i].eog) {
            t->flags[i] |= MINT_TRIE_EOG;
            t->eog[t->n_eog++] = i;
        }
        size_t k = mint_vocab_token_to_piece(v, i, true, 0, t->blob + at, total - at);
        const char *nul = memchr(t->blob + at, '\0', k);
        if (nul) k = (size_t)(nul - (t->blob + at)); // llama.cpp reads up to a NUL
        t->flags[i] |= decode_flags((const uint8_t *)t->blob + at, k);
        at += k;
    }
    t->piece_at[n] = (uint32_t)at;
    return true;
}

// Each node's summary of its subtree (token_trie.h): the pieces' code points, read from the start
// along each path, gathered bottom-up.
static bool summarise(mint_token_trie *t) {
    const uint32_t n = t->n_nodes;
    t->asc = calloc(2 * (size_t)n, sizeof *t->asc);
    t->sub = calloc(n, 1);
    uint32_t *parent = malloc(n * sizeof *parent);
    int32_t *cp = malloc(n * sizeof *cp); // the code point node i completes, -1 none, -2 invalid
    uint32_t at[MINT_TRIE_MAX_DEPTH + 1]; // the node at each depth on the current path
    uint32_t value[MINT_TRIE_MAX_DEPTH + 1];
    int8_t remain[MINT_TRIE_MAX_DEPTH + 1];
    if (!t->asc || !t->sub || !parent || !cp) {
        free(parent), free(cp);
        return false;
    }
    at[0] = 0;
    value[0] = 0;
    remain[0] = 0;
    for (uint32_t i = 1; i < n; i++) {
        const uint32_t d = t->depth[i];
        const uint8_t b = t->byte[i];
        parent[i] = at[d - 1];
        at[d] = i;
        uint32_t v = value[d - 1];
        int r = remain[d - 1];
        cp[i] = -1;
        if (r < 0) { // below a refused byte
            cp[i] = -2;
        } else if (r > 0) {
            v = (v << 6) + (b & 0x3Fu);
            if (--r == 0) cp[i] = (int32_t)(v & 0x7FFFFFFF);
        } else if (EXTRA[b >> 4] < 0) {
            cp[i] = -2;
            r = -1;
        } else {
            r = EXTRA[b >> 4];
            v = b & LEAD_BITS[r];
            if (r == 0) cp[i] = (int32_t)v;
        }
        value[d] = v;
        remain[d] = (int8_t)r;
    }
    for (uint32_t i = n - 1; i >= 1; i--) {
        const uint32_t p = parent[i];
        t->asc[2 * p] |= t->asc[2 * i];
        t->asc[2 * p + 1] |= t->asc[2 * i + 1];
        t->sub[p] |= t->sub[i];
        if (cp[i] == -2)
            t->sub[p] |= MINT_SUB_INVALID;
        else if (cp[i] >= 128)
            t->sub[p] |= MINT_SUB_NONASCII;
        else if (cp[i] >= 0)
            t->asc[2 * p + (cp[i] >> 6)] |= 1ull << (cp[i] & 63);
    }
    free(parent);
    free(cp);
    return true;
}

mint_status mint_token_trie_build(const mint_vocab *v, mint_token_trie **out, mint_err *err) {
    *out = NULL;
    mint_token_trie *t = calloc(1, sizeof *t);
    piece_ref *order = NULL;
    uint32_t *open = NULL;
    if (!t) goto nomem;
    t->n_vocab = v->n;
    if (!read_pieces(v, t)) goto nomem;
    order = malloc((size_t)v->n * sizeof *order);
    t->outside = malloc((size_t)v->n * sizeof *t->outside);
    if (!order || !t->outside) goto nomem;
    size_t n_order = 0, piece_bytes = 0;
    for (int32_t i = 0; i < v->n; i++) {
        const uint32_t len = t->piece_at[i + 1] - t->piece_at[i];
        if (len == 0 || (t->flags[i] & MINT_TRIE_EOG)) continue;
        if (len > MINT_TRIE_MAX_DEPTH || (t->flags[i] & MINT_TRIE_CUT)) {
            t->outside[t->n_outside++] = i;
            continue;
        }
        order[n_order++] = (piece_ref){t->blob + t->piece_at[i], len, i};
        piece_bytes += len;
    }
    qsort(order, n_order, sizeof *order, cmp_piece);

    // At most one node per piece byte, plus the root.
    const size_t cap = piece_bytes + 1;
    t->byte = malloc(cap);
    t->depth = malloc(cap * sizeof *t->depth);
    t->skip = malloc(cap * sizeof *t->skip);
    t->tok_at = malloc((cap + 1) * sizeof *t->tok_at);
    t->tok = malloc((n_order ? n_order : 1) * sizeof *t->tok);
    uint32_t path[MINT_TRIE_MAX_DEPTH + 1]; // path[d]: the node at depth d on the last piece
    if (!t->byte || !t->depth || !t->skip || !t->tok_at || !t->tok) goto nomem;
    t->byte[0] = 0;
    t->depth[0] = 0;
    t->tok_at[0] = 0;
    t->n_nodes = 1;
    path[0] = 0;
    const char *prev = "";
    size_t prev_len = 0;
    for (size_t k = 0; k < n_order; k++) {
        const int32_t id = order[k].id;
        const char *p = order[k].p;
        const size_t len = order[k].len;
        size_t lcp = 0;
        while (lcp < len && lcp < prev_len && p[lcp] == prev[lcp]) lcp++;
        for (size_t d = lcp + 1; d <= len; d++) {
            const uint32_t i = t->n_nodes++;
            t->byte[i] = (uint8_t)p[d - 1];
            t->depth[i] = (uint16_t)d;
            t->tok_at[i] = t->n_in;
            path[d] = i;
        }
        MINT_ASSERT(path[len] == t->n_nodes - 1); // tokens arrive in node order
        t->tok[t->n_in++] = id;
        if (len > t->max_depth) t->max_depth = (uint16_t)len;
        prev = p;
        prev_len = len;
    }
    t->tok_at[t->n_nodes] = t->n_in;
    // skip[i]: the first later node no deeper than i.
    open = malloc(((size_t)t->max_depth + 2) * sizeof *open);
    if (!open) goto nomem;
    size_t n_open = 0;
    for (uint32_t i = 0; i < t->n_nodes; i++) {
        while (n_open > 0 && t->depth[open[n_open - 1]] >= t->depth[i]) t->skip[open[--n_open]] = i;
        open[n_open++] = i;
    }
    while (n_open > 0) t->skip[open[--n_open]] = t->n_nodes;
    free(open);
    open = NULL;
    if (!summarise(t)) goto nomem;
    free(order);
    *out = t;
    return MINT_OK;

nomem:
    free(open);
    free(order);
    mint_token_trie_free(t);
    return mint_fail(err, MINT_E_NOMEM, "grammar: out of memory for the token trie of %d tokens",
                     (int)v->n);
}
