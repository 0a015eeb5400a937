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
    free(t);
}

// Whether a piece decodes alone as llama.cpp's grammar decodes it (a lead byte, then as many
// following bytes as it says, unchecked) without a byte that cannot lead, to >= 1 code point.
static bool decodes_alone(const uint8_t *p, size_t n) {
    static const int8_t extra[16] = {0, 0, 0, 0, 0, 0, 0, 0, -1, -1, -1, -1, 1, 1, 2, 3};
    size_t cps = 0;
    for (size_t i = 0; i < n;) {
        const int k = extra[p[i] >> 4];
        if (k < 0) return false;
        if (i + 1 + (size_t)k <= n) cps++;
        i += 1 + (size_t)k;
    }
    return cps > 0;
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
        if (decodes_alone((const uint8_t *)t->blob + at, k)) t->flags[i] |= MINT_TRIE_CP;
        at += k;
    }
    t->piece_at[n] = (uint32_t)at;
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
        if (len > MINT_TRIE_MAX_DEPTH) {
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
