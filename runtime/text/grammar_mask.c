// grammar_mask.c - which tokens of the vocabulary a grammar allows: one depth-first pass over
// the token trie (token_trie.h) carrying the set of parse stacks along each prefix.
//
// Each trie node extends its parent's prefix by one byte. The byte feeds a UTF-8 decoder that
// reads as llama.cpp's grammar reads a token (runtime/text/grammar.c explains the rules); when
// it completes a code point the set of stacks steps on it (grammar_match.h: mostly a table
// lookup). A dead set, or a byte the decoder refuses, rejects every token below the node, so the
// walk jumps over its subtree. A token ending at a node is allowed when its last code point was
// whole, or when some stack could still match a completion of its last, partial one.
//
// When the walk starts on a character boundary, a node on one whose set leads back to itself on
// every code point the pieces below it complete (token_trie.h's summary, gm_closure), and whose
// pieces hold no refused byte, allows its whole subtree: every token below ends on a boundary
// (the trie keeps the others out) with the set alive. Its tokens are contiguous in the trie's
// order, so they are marked in one loop and the subtree skipped. Inside a JSON string this
// leaves only the subtrees holding '"', '\\', controls or bad bytes to walk.
#include "runtime/text/grammar.h"

// Bytes after a lead byte (by its high nibble); -1: it cannot lead.
static const int8_t EXTRA[16] = {0, 0, 0, 0, 0, 0, 0, 0, -1, -1, -1, -1, 1, 1, 2, 3};
// The lead byte's bits kept, by the bytes after it (llama.cpp's masks).
static const uint8_t LEAD_BITS[4] = {0x7F, 0x3F, 0x1F, 0x0F};

// Subtrees smaller than this are walked node by node (not worth a set's closure).
#define MIN_SUBTREE 8

uint32_t grammar_mask_walk(gmatch *m, const mint_token_trie *t, uint32_t set, uint32_t value,
                           int n_remain, const grammar_walk *w, uint8_t *allowed) {
    const uint8_t *byte = t->byte;
    const uint16_t *depth = t->depth;
    const uint32_t *skip = t->skip, *tok_at = t->tok_at;
    const int32_t *tok = t->tok;
    uint32_t *S = w->set, *V = w->value;
    int8_t *R = w->remain;
    uint8_t *C = w->cont;
    S[0] = set;
    V[0] = value;
    R[0] = (int8_t)(n_remain > 0 ? n_remain : 0);
    C[0] = n_remain > 0;
    uint32_t visited = 0;
    const bool fresh = n_remain <= 0;
    for (uint32_t i = 1, n = t->n_nodes; i < n;) {
        visited++;
        const uint32_t d = depth[i];
        const uint8_t b = byte[i];
        uint32_t s = S[d - 1], v = V[d - 1];
        int r = R[d - 1];
        uint8_t c = C[d - 1];
        if (r > 0) { // a continuation byte
            if (c && (b & 0xC0) != 0x80) {
                i = skip[i]; // llama.cpp checks the bytes that finish the grammar's pending ones
                continue;
            }
            v = (v << 6) + (b & 0x3Fu);
            if (--r == 0) {
                c = 0;
                if ((s = gm_step(m, s, v)) == GM_DEAD) {
                    i = skip[i];
                    continue;
                }
            }
        } else { // a lead byte
            const int k = EXTRA[b >> 4];
            if (k < 0) {
                i = skip[i];
                continue;
            }
            v = b & LEAD_BITS[k];
            r = k;
            c = 0;
            if (k == 0 && (s = gm_step(m, s, v)) == GM_DEAD) {
                i = skip[i];
                continue;
            }
        }
        const uint32_t end = skip[i];
        if (fresh && r == 0 && end - i >= MIN_SUBTREE && !(t->sub[i] & MINT_SUB_INVALID)) {
            gm_closure(m, s);
            const gm_set *set_s = &m->set[s];
            if (set_s->closure && (t->asc[2 * i] & ~set_s->loops[0]) == 0 &&
                (t->asc[2 * i + 1] & ~set_s->loops[1]) == 0 &&
                (set_s->loops_high || !(t->sub[i] & MINT_SUB_NONASCII))) {
                for (uint32_t k = tok_at[i], e = tok_at[end]; k < e; k++) allowed[tok[k]] = 1;
                i = end;
                continue;
            }
        }
        S[d] = s;
        V[d] = v;
        R[d] = (int8_t)r;
        C[d] = c;
        const uint32_t a = tok_at[i], e = tok_at[i + 1];
        if (a != e && (r == 0 || gm_partial(m, s, v, r)))
            for (uint32_t k = a; k < e; k++) allowed[tok[k]] = 1;
        i++;
    }
    return visited;
}
