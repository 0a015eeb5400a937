// gbnf_check.c - the left recursion gbnf_parse refuses (gbnf.h).
//
// Expanding a rule reference at the top of a stack replaces it by the element
// after it (unless its alternative ends there) and the first element of one of the rule's
// alternatives, so a rule that can reach itself before any terminal (through rules that may
// match the empty text) is expanded again and again. llama.cpp refuses such a cycle when every
// rule it passes on the way may be empty by an empty alternative of its own; mint refuses the
// same (a grammar llama.cpp refuses is refused), and also a cycle through rules that are empty
// only indirectly when it pushes an element on the way round: the stacks then grow without end,
// where llama.cpp hangs. A cycle that pushes nothing comes back to the same stack, which the
// expansion sees once (llama.cpp accepts it too: root ::= ("a"?)*).
#include "runtime/text/gbnf.h"

#include <stdbool.h>
#include <stdlib.h>

typedef struct lr_edge {
    uint32_t to; // the rule reached
    bool grows;  // the reference has an element after it in its alternative
    bool llama;  // every reference before it in the alternative has an empty alternative
} lr_edge;

typedef struct lr_graph {
    uint32_t n;    // rules
    uint32_t *off; // [n + 1] rule r's edges are e[off[r] .. off[r + 1])
    lr_edge *e;    // the edges: r -> a rule it can start with
} lr_graph;

// Strongly connected components of the graph (edges with llama set only, when llama_only), by
// Tarjan's algorithm without recursion; comp[r] gets r's component.
static bool components(const lr_graph *G, bool llama_only, uint32_t *comp) {
    const uint32_t n = G->n, NONE = UINT32_MAX;
    uint32_t *index = malloc(n * sizeof *index), *low = malloc(n * sizeof *low);
    uint32_t *stack = malloc(n * sizeof *stack), *call = malloc(n * sizeof *call);
    uint32_t *edge = malloc(n * sizeof *edge);
    bool *on = calloc(n, sizeof *on);
    bool ok = index && low && stack && call && edge && on;
    uint32_t counter = 0, n_comp = 0, top = 0;
    for (uint32_t r = 0; ok && r < n; r++) index[r] = NONE;
    for (uint32_t root = 0; ok && root < n; root++) {
        if (index[root] != NONE) continue;
        uint32_t depth = 0;
        call[depth++] = root;
        index[root] = low[root] = counter++;
        edge[root] = G->off[root];
        stack[top++] = root;
        on[root] = true;
        while (depth > 0) {
            const uint32_t v = call[depth - 1];
            if (edge[v] < G->off[v + 1]) {
                const lr_edge *x = &G->e[edge[v]++];
                if (llama_only && !x->llama) continue;
                const uint32_t w = x->to;
                if (index[w] == NONE) {
                    index[w] = low[w] = counter++;
                    edge[w] = G->off[w];
                    stack[top++] = w;
                    on[w] = true;
                    call[depth++] = w;
                } else if (on[w] && index[w] < low[v]) {
                    low[v] = index[w];
                }
                continue;
            }
            if (low[v] == index[v]) {
                uint32_t w;
                do {
                    w = stack[--top];
                    on[w] = false;
                    comp[w] = n_comp;
                } while (w != v);
                n_comp++;
            }
            if (--depth > 0 && low[v] < low[call[depth - 1]]) low[call[depth - 1]] = low[v];
        }
    }
    free(index), free(low), free(stack), free(call), free(edge), free(on);
    return ok;
}

mint_status gbnf_find_left_recursion(const gbnf *g, uint32_t *rule) {
    const uint32_t n = g->n_rules;
    bool *nullable = calloc(n, sizeof *nullable);   // may match the empty text
    bool *empty_alt = calloc(n, sizeof *empty_alt); // has an empty alternative (llama.cpp's test)
    lr_graph G = {n, malloc(((size_t)n + 1) * sizeof *G.off), NULL};
    uint32_t *comp = malloc((size_t)n * sizeof *comp), *comp_l = malloc((size_t)n * sizeof *comp);
    G.e = malloc(((size_t)g->n_elem + 1) * sizeof *G.e);
    bool ok = nullable && empty_alt && G.off && G.e && comp && comp_l;
    for (uint32_t k = 0; ok && k < n; k++) {
        const gbnf_elem *e = g->elem + g->rule[k];
        empty_alt[k] = e[0].op == GBNF_END || e[0].op == GBNF_ALT;
        for (uint32_t i = 1; !empty_alt[k] && e[i - 1].op != GBNF_END; i++)
            empty_alt[k] = e[i - 1].op == GBNF_ALT && (e[i].op == GBNF_ALT || e[i].op == GBNF_END);
    }
    for (bool changed = ok; changed;) { // nullable to a fixed point
        changed = false;
        for (uint32_t k = 0; k < n; k++) {
            if (nullable[k]) continue;
            bool empty_so_far = true;
            for (const gbnf_elem *e = g->elem + g->rule[k];; e++) {
                if (e->op == GBNF_END || e->op == GBNF_ALT) {
                    if (empty_so_far) nullable[k] = changed = true;
                    if (empty_so_far || e->op == GBNF_END) break;
                    empty_so_far = true;
                } else if (e->op != GBNF_RULE || !nullable[e->arg]) {
                    empty_so_far = false;
                }
            }
        }
    }
    // The edges: from each alternative, the references up to its first non-nullable element.
    uint32_t n_e = 0;
    for (uint32_t k = 0; ok && k < n; k++) {
        G.off[k] = n_e;
        bool full = true, llama = true;
        for (uint32_t i = g->rule[k];; i++) {
            const gbnf_elem *e = &g->elem[i];
            if (e->op == GBNF_END) break;
            if (e->op == GBNF_ALT) {
                full = llama = true;
                continue;
            }
            if (!full) continue;
            if (e->op != GBNF_RULE) {
                full = llama = false;
                continue;
            }
            const gbnf_elem *next = e + 1;
            G.e[n_e++] = (lr_edge){e->arg, next->op != GBNF_END && next->op != GBNF_ALT, llama};
            full = nullable[e->arg];
            llama = llama && empty_alt[e->arg];
        }
    }
    if (ok) G.off[n] = n_e;
    ok = ok && components(&G, false, comp) && components(&G, true, comp_l);
    uint32_t bad = UINT32_MAX;
    for (uint32_t k = 0; ok && k < n && bad == UINT32_MAX; k++)
        for (uint32_t i = G.off[k]; i < G.off[k + 1]; i++) {
            const lr_edge *x = &G.e[i];
            if ((x->llama && comp_l[x->to] == comp_l[k]) || (x->grows && comp[x->to] == comp[k])) {
                bad = k;
                break;
            }
        }
    free(nullable), free(empty_alt), free(G.off), free(G.e), free(comp), free(comp_l);
    if (!ok) return MINT_E_NOMEM;
    *rule = bad;
    return MINT_OK;
}
