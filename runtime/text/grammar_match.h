// grammar_match.h - running a compiled GBNF grammar (gbnf.h) over code points and tokens: the
// parse stacks of llama.cpp's grammar engine, made cheap to compare and to step.
//
// As in llama.cpp, the state of a match is a set of pushdown stacks, each a path of element
// positions whose top is a terminal (a code point, a class, '.', a token) or nothing (the empty
// stack: the text so far is a complete match). Reading a code point replaces every stack whose
// top matches it by the stacks that follow it (pop the terminal, push its next element, expand
// rule references at the top until a terminal is on top), and drops the rest.
//
// Here stacks are hash-consed: a stack is a node (position, the stack below it) interned in a
// table, so one stack is one integer and stacks share their tails. Sets of stacks are interned
// too (a sorted list of node ids), so a set is one integer, and a set's successor on a code
// point is cached. The successor depends only on which of the set's terminals match the code
// point, which is constant between the bounds of their ranges: a set's code points are cut into
// those intervals once, each interval's successor is computed the first time a code point of it
// comes (so a string's [^"\\] state computes one successor for every character above ASCII),
// and a step is then a table lookup (ASCII) or a binary search over a few bounds.
// The token trie walk (runtime/text/grammar_mask.c) steps a set per byte of the vocabulary, and
// most steps are lookups. What a step can grow to is bounded (GM_MAX_STACKS per set, GM_MAX_NODES
// in all, GM_MAX_EXPAND per expansion); past a bound the matcher fails with one line and every
// later step answers the dead set.
#ifndef MINT_GRAMMAR_MATCH_H
#define MINT_GRAMMAR_MATCH_H

#include "mint.h"
#include "runtime/text/gbnf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GM_DEAD        0u         // the empty set of stacks: nothing matches
#define GM_EMPTY_STACK 0u         // node 0: the empty stack
#define GM_MAX_STACKS  4096       // stacks in one set
#define GM_MAX_NODES   (1u << 22) // stack nodes alive at once (a step fails past it)
#define GM_MAX_EXPAND  (1u << 20) // stacks visited while expanding one stack's rule references

typedef struct gm_node {
    uint32_t pos;    // element index of the top (UINT32_MAX for the empty stack)
    uint32_t parent; // the stack below it (a node id)
    uint32_t succ;   // terminal top: the set after it is matched (UINT32_MAX until computed)
} gm_node;

enum {
    GM_HAS_EMPTY = 1, // the set holds the empty stack: the text so far is a complete match
    GM_HAS_TOKEN = 2, // ... a stack with a token terminal on top
    GM_HAS_CHAR = 4,  // ... a stack with a code point terminal on top
};

typedef struct gm_set {
    uint32_t first;    // index of its first node id in gmatch.items
    uint32_t n;        // node ids, ascending
    uint32_t ascii;    // index in gmatch.ascii of its 128 successors on ASCII, or UINT32_MAX
    uint32_t part;     // index in gmatch.bound of its intervals' starts, or UINT32_MAX
    uint32_t n_part;   // intervals (the first starts at 0, the last runs to UINT32_MAX)
    uint32_t chars;    // the set of its stacks with a code point on top (UINT32_MAX until computed)
    uint8_t flags;     // GM_HAS_* bits
    uint8_t closure;   // 0 until gm_closure computed the two fields below
    bool loops_high;   // every code point above ASCII leads back to this set
    uint64_t loops[2]; // bit c: ASCII code point c leads back to this set
} gm_set;

typedef struct gm_map {
    uint64_t *key; // [cap] keys, 0 = empty slot (keys are stored + 1)
    uint32_t *val; // [cap] values
    size_t cap;    // power of two
    size_t n;      // keys
} gm_map;

typedef struct gmatch {
    const gbnf *g; // the grammar (borrowed)
    gm_node *node; // [n_node] stacks
    uint32_t n_node, cap_node;
    gm_map node_map; // (pos, parent) -> node
    gm_set *set;     // [n_set] sets; set 0 is the dead (empty) set
    uint32_t n_set, cap_set;
    uint32_t *items; // [n_items] the sets' node ids
    size_t n_items, cap_items;
    gm_map set_map; // hash of a set's items -> set (chained through equal hashes by probing)
    int32_t *ascii; // [n_ascii] successor tables, -1 = not computed yet
    size_t n_ascii, cap_ascii;
    uint32_t *bound;    // [n_bound] the sets' intervals: where each starts
    int32_t *part_next; // [n_bound] each interval's successor, -1 = not computed yet
    size_t n_bound, cap_bound;
    uint32_t *pick; // [cap_pick] successor sets being united (a step's scratch)
    size_t cap_pick;
    uint32_t *seen; // [cap_node] expansion marks
    uint32_t stamp; // current mark
    uint32_t *todo; // [cap_todo] expansion work list, then the union buffer
    size_t cap_todo;
    uint32_t *buf; // [cap_buf] a set being built
    size_t n_buf, cap_buf;
    mint_status failed; // MINT_OK, or the bound or allocation that failed
    char msg[160];      // its one line
} gmatch;

mint_status gm_init(gmatch *m, const gbnf *g, mint_err *err);
void gm_free(gmatch *m);
// The stacks at the start of rule `root`.
uint32_t gm_start(gmatch *m, uint32_t root);
// The set after code point c.
uint32_t gm_step_slow(gmatch *m, uint32_t set, uint32_t c);
static inline uint32_t gm_step(gmatch *m, uint32_t set, uint32_t c) {
    const gm_set *s = &m->set[set];
    if (c < 128) {
        if (s->ascii != UINT32_MAX) {
            const int32_t next = m->ascii[s->ascii + c];
            if (next >= 0) return (uint32_t)next;
        }
    } else if (s->part != UINT32_MAX) {
        const uint32_t *b = m->bound + s->part;
        uint32_t lo = 0, hi = s->n_part; // the last interval starting at or before c
        while (hi - lo > 1) {
            const uint32_t mid = (lo + hi) / 2;
            if (b[mid] <= c)
                lo = mid;
            else
                hi = mid;
        }
        const int32_t next = m->part_next[s->part + lo];
        if (next >= 0) return (uint32_t)next;
    }
    return gm_step_slow(m, set, c);
}
// The set after token id is matched by the stacks with a token terminal on top (GM_DEAD when
// none matches it).
uint32_t gm_step_token(gmatch *m, uint32_t set, int32_t id);
// Whether a stack of the set with a token terminal on top matches token id.
bool gm_token_matches(const gmatch *m, uint32_t set, int32_t id);
// Fills the set's loops and loops_high (the code points that lead back to it: a JSON string's
// inside is such a set for every character but '"', '\\' and controls).
void gm_closure(gmatch *m, uint32_t set);
// The union of two sets.
uint32_t gm_union(gmatch *m, uint32_t a, uint32_t b);
// The stacks of the set with a code point terminal on top.
uint32_t gm_chars(gmatch *m, uint32_t set);
// Whether a stack of the set could match a code point completing a partial UTF-8 sequence
// (gbnf_match_partial).
bool gm_partial(const gmatch *m, uint32_t set, uint32_t value, int n_remain);
static inline uint8_t gm_flags(const gmatch *m, uint32_t set) {
    return m->set[set].flags;
}
// The token terminals on top of the set's stacks: calls f(op, token, ctx) for each.
void gm_tokens(const gmatch *m, uint32_t set, void (*f)(uint32_t op, uint32_t tok, void *ctx),
               void *ctx);
// Moves `set` into a fresh matcher (dropping every other stack, set and cache): how a long
// generation keeps memory bounded. Returns its id there, or GM_DEAD after a failure.
uint32_t gm_compact(gmatch *m, uint32_t set);

#endif // MINT_GRAMMAR_MATCH_H
