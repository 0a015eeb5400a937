// grammar_match.c - interned parse stacks and sets of them, and their steps (grammar_match.h).
//
// The expansion of a stack follows llama.cpp's llama_grammar_advance_stack: while a rule
// reference is on top, replace the stack by one stack per alternative of the rule (the reference
// popped, the element after it pushed unless it ends its alternative, the alternative's first
// element pushed unless the alternative is empty); a stack with a terminal on top, or the empty
// stack, is a result. Left recursion is refused at parse time, so this ends; a stack seen twice
// in one expansion is expanded once.
#include "runtime/text/grammar_match.h"

#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNSET UINT32_MAX

static uint32_t dead(gmatch *m, mint_status code, const char *fmt, ...) MINT_PRINTF(3, 4);
static uint32_t dead(gmatch *m, mint_status code, const char *fmt, ...) {
    if (m->failed == MINT_OK) {
        m->failed = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m->msg, sizeof m->msg, fmt, ap);
        va_end(ap);
    }
    return GM_DEAD;
}

#define nomem(m) dead(m, MINT_E_NOMEM, "grammar: out of memory for the parse stacks")

// ---------------------------------------------------------------------------------------------
// Hash maps from 64-bit keys to 32-bit values (open addressing, linear probing, no removal).

static inline uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static bool map_grow(gm_map *t) {
    const size_t cap = t->cap ? 2 * t->cap : 1024;
    uint64_t *key = calloc(cap, sizeof *key);
    uint32_t *val = malloc(cap * sizeof *val);
    if (!key || !val) {
        free(key), free(val);
        return false;
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->key[i]) continue;
        size_t j = mix(t->key[i]) & (cap - 1);
        while (key[j]) j = (j + 1) & (cap - 1);
        key[j] = t->key[i];
        val[j] = t->val[i];
    }
    free(t->key), free(t->val);
    t->key = key, t->val = val, t->cap = cap;
    return true;
}

static uint32_t map_get(const gm_map *t, uint64_t key) {
    if (!t->cap) return UNSET;
    key++;
    for (size_t j = mix(key) & (t->cap - 1);; j = (j + 1) & (t->cap - 1)) {
        if (t->key[j] == key) return t->val[j];
        if (!t->key[j]) return UNSET;
    }
}

// Adds key -> val (duplicate keys allowed: a later get finds the first).
static bool map_put(gm_map *t, uint64_t key, uint32_t val) {
    if (2 * (t->n + 1) > t->cap && !map_grow(t)) return false;
    key++;
    size_t j = mix(key) & (t->cap - 1);
    while (t->key[j]) j = (j + 1) & (t->cap - 1);
    t->key[j] = key;
    t->val[j] = val;
    t->n++;
    return true;
}

static void map_free(gm_map *t) {
    free(t->key), free(t->val);
    memset(t, 0, sizeof *t);
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

// ---------------------------------------------------------------------------------------------
// Stacks

static inline bool end_of_alt(const gbnf *g, uint32_t pos) {
    return g->elem[pos].op == GBNF_END || g->elem[pos].op == GBNF_ALT;
}

static inline bool is_token_op(uint32_t op) {
    return op == GBNF_TOKEN || op == GBNF_NOT_TOKEN;
}

// The node for (pos, parent), made when new.
static uint32_t node(gmatch *m, uint32_t pos, uint32_t parent) {
    const uint64_t key = (uint64_t)pos << 32 | parent;
    uint32_t id = map_get(&m->node_map, key);
    if (id != UNSET) return id;
    if (m->failed) return UNSET;
    if (m->n_node >= GM_MAX_NODES)
        return dead(m, MINT_E_LIMIT, "grammar: more than %u parse stack nodes at once",
                    GM_MAX_NODES),
               UNSET;
    if (m->n_node == m->cap_node) {
        const uint32_t cap = m->cap_node * 2;
        gm_node *n = realloc(m->node, cap * sizeof *n);
        if (n) m->node = n;
        uint32_t *s = n ? realloc(m->seen, cap * sizeof *s) : NULL;
        if (!s) return nomem(m), UNSET;
        memset(s + m->cap_node, 0, (cap - m->cap_node) * sizeof *s);
        m->seen = s;
        m->cap_node = cap;
    }
    id = m->n_node++;
    m->node[id] = (gm_node){pos, parent, UNSET};
    if (!map_put(&m->node_map, key, id)) return nomem(m), UNSET;
    return id;
}

static bool buf_push(gmatch *m, uint32_t x) {
    if (!grow((void **)&m->buf, &m->cap_buf, m->n_buf + 1, sizeof *m->buf)) return nomem(m), false;
    m->buf[m->n_buf++] = x;
    return true;
}

// Appends to m->buf the stacks that expanding stack x gives (terminal or nothing on top).
static bool expand(gmatch *m, uint32_t x) {
    const gbnf *g = m->g;
    if (++m->stamp == 0) {
        memset(m->seen, 0, m->cap_node * sizeof *m->seen);
        m->stamp = 1;
    }
    size_t n_todo = 0, visits = 0;
    m->todo[n_todo++] = x;
    while (n_todo > 0) {
        x = m->todo[--n_todo];
        if (m->seen[x] == m->stamp) continue;
        m->seen[x] = m->stamp;
        if (++visits > GM_MAX_EXPAND)
            return dead(m, MINT_E_LIMIT,
                        "grammar: expanding one parse stack visited more than %u stacks (the "
                        "grammar is too ambiguous)",
                        GM_MAX_EXPAND),
                   false;
        const uint32_t pos = m->node[x].pos;
        if (x == GM_EMPTY_STACK || g->elem[pos].op != GBNF_RULE) {
            if (!buf_push(m, x)) return false;
            continue;
        }
        uint32_t base = m->node[x].parent;
        if (!end_of_alt(g, pos + 1) && (base = node(m, pos + 1, base)) == UNSET) return false;
        // One stack per alternative of the rule.
        for (uint32_t a = g->rule[g->elem[pos].arg];;) {
            uint32_t y = base;
            if (!end_of_alt(g, a) && (y = node(m, a, base)) == UNSET) return false;
            if (!grow((void **)&m->todo, &m->cap_todo, n_todo + 1, sizeof *m->todo))
                return nomem(m), false;
            m->todo[n_todo++] = y;
            while (!end_of_alt(g, a)) a++;
            if (g->elem[a].op == GBNF_END) break;
            a++;
        }
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Sets

static int cmp_u32(const void *a, const void *b) {
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

// The set of the node ids in m->buf (sorted and deduplicated here), made when new.
static uint32_t intern_buf(gmatch *m) {
    if (m->failed) return GM_DEAD;
    uint32_t *b = m->buf;
    size_t n = m->n_buf;
    if (n == 0) return GM_DEAD;
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            const uint32_t v = b[i];
            size_t j = i;
            for (; j > 0 && b[j - 1] > v; j--) b[j] = b[j - 1];
            b[j] = v;
        }
    } else {
        qsort(b, n, sizeof *b, cmp_u32);
    }
    size_t k = 1;
    for (size_t i = 1; i < n; i++)
        if (b[i] != b[k - 1]) b[k++] = b[i];
    n = k;
    if (n > GM_MAX_STACKS)
        return dead(m, MINT_E_LIMIT,
                    "grammar: more than %d parse stacks at once (the grammar is too ambiguous "
                    "here)",
                    GM_MAX_STACKS);
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ n;
    for (size_t i = 0; i < n; i++) h = mix(h ^ b[i]);
    const gm_map *t = &m->set_map;
    for (size_t j = t->cap ? mix(h + 1) & (t->cap - 1) : 0; t->cap && t->key[j];
         j = (j + 1) & (t->cap - 1)) {
        if (t->key[j] != h + 1) continue;
        const gm_set *s = &m->set[t->val[j]];
        if (s->n == n && memcmp(m->items + s->first, b, n * sizeof *b) == 0) return t->val[j];
    }
    if (!grow((void **)&m->items, &m->cap_items, m->n_items + n, sizeof *m->items)) return nomem(m);
    size_t cap = m->cap_set;
    if (!grow((void **)&m->set, &cap, (size_t)m->n_set + 1, sizeof *m->set)) return nomem(m);
    m->cap_set = (uint32_t)cap;
    uint8_t flags = 0;
    for (size_t i = 0; i < n; i++) {
        if (b[i] == GM_EMPTY_STACK)
            flags |= GM_HAS_EMPTY;
        else
            flags |= is_token_op(m->g->elem[m->node[b[i]].pos].op) ? GM_HAS_TOKEN : GM_HAS_CHAR;
    }
    memcpy(m->items + m->n_items, b, n * sizeof *b);
    const uint32_t id = m->n_set++;
    m->set[id] = (gm_set){.first = (uint32_t)m->n_items,
                          .n = (uint32_t)n,
                          .ascii = UNSET,
                          .part = UNSET,
                          .chars = UNSET,
                          .flags = flags};
    m->n_items += n;
    if (!map_put(&m->set_map, h, id)) return nomem(m);
    return id;
}

// The set after stack x's terminal is matched.
static uint32_t succ(gmatch *m, uint32_t x) {
    if (m->node[x].succ != UNSET) return m->node[x].succ;
    const uint32_t pos = m->node[x].pos + 1;
    uint32_t y = m->node[x].parent;
    if (!end_of_alt(m->g, pos) && (y = node(m, pos, y)) == UNSET) return GM_DEAD;
    m->n_buf = 0;
    if (!expand(m, y)) return GM_DEAD;
    const uint32_t s = intern_buf(m);
    if (!m->failed) m->node[x].succ = s;
    return s;
}

// The union of the sets in pick[0..n).
static uint32_t union_of(gmatch *m, const uint32_t *pick, size_t n) {
    if (n == 0) return GM_DEAD;
    if (n == 1) return pick[0];
    m->n_buf = 0;
    for (size_t i = 0; i < n; i++) {
        const gm_set s = m->set[pick[i]];
        for (uint32_t k = 0; k < s.n; k++)
            if (!buf_push(m, m->items[s.first + k])) return GM_DEAD;
    }
    return intern_buf(m);
}

uint32_t gm_union(gmatch *m, uint32_t a, uint32_t b) {
    if (a == GM_DEAD || a == b) return b;
    if (b == GM_DEAD) return a;
    const uint32_t pick[2] = {a, b};
    return union_of(m, pick, 2);
}

// The successors of the set's stacks for which keep(terminal) holds, united.
typedef bool (*keep_fn)(const gbnf *g, const gbnf_elem *e, uint32_t arg);

static uint32_t step_by(gmatch *m, uint32_t set, keep_fn keep, uint32_t arg) {
    const uint32_t n = m->set[set].n, first = m->set[set].first;
    if (!grow((void **)&m->pick, &m->cap_pick, n + 1, sizeof *m->pick)) return nomem(m);
    size_t k = 0;
    for (uint32_t i = 0; i < n && !m->failed; i++) {
        const uint32_t x = m->items[first + i];
        if (x == GM_EMPTY_STACK || !keep(m->g, &m->g->elem[m->node[x].pos], arg)) continue;
        const uint32_t s = succ(m, x);
        if (s != GM_DEAD) m->pick[k++] = s;
    }
    return m->failed ? GM_DEAD : union_of(m, m->pick, k);
}

static bool keep_char(const gbnf *g, const gbnf_elem *e, uint32_t c) {
    return gbnf_match(g, e, c);
}

static bool keep_token(const gbnf *g, const gbnf_elem *e, uint32_t id) {
    (void)g;
    return (e->op == GBNF_TOKEN && e->arg == id) || (e->op == GBNF_NOT_TOKEN && e->arg != id);
}

// Cuts the code points into the intervals where the set's terminals match alike: the bounds
// of every range of its code point terminals.
static bool partition(gmatch *m, uint32_t set) {
    const gm_set s = m->set[set];
    m->n_buf = 0;
    if (!buf_push(m, 0)) return false;
    for (uint32_t i = 0; i < s.n; i++) {
        const uint32_t x = m->items[s.first + i];
        if (x == GM_EMPTY_STACK) continue;
        const gbnf_elem *e = &m->g->elem[m->node[x].pos];
        if (e->op == GBNF_CHAR) {
            if (!buf_push(m, e->arg) || (e->arg < UINT32_MAX && !buf_push(m, e->arg + 1)))
                return false;
        } else if (e->op == GBNF_CLASS) {
            const gbnf_class *cl = &m->g->cls[e->arg];
            for (uint32_t k = 0; k < cl->n; k++) {
                const uint32_t lo = m->g->range[2 * (cl->first + k)];
                const uint32_t hi = m->g->range[2 * (cl->first + k) + 1];
                if (lo > hi) continue;
                if (!buf_push(m, lo) || (hi < UINT32_MAX && !buf_push(m, hi + 1))) return false;
            }
        }
    }
    qsort(m->buf, m->n_buf, sizeof *m->buf, cmp_u32);
    size_t n = 1;
    for (size_t i = 1; i < m->n_buf; i++)
        if (m->buf[i] != m->buf[n - 1]) m->buf[n++] = m->buf[i];
    if (!grow((void **)&m->bound, &m->cap_bound, m->n_bound + n, sizeof *m->bound)) {
        nomem(m);
        return false;
    }
    size_t cap = m->cap_bound; // part_next is sized as bound
    int32_t *next = realloc(m->part_next, cap * sizeof *next);
    if (!next) {
        nomem(m);
        return false;
    }
    m->part_next = next;
    memcpy(m->bound + m->n_bound, m->buf, n * sizeof *m->bound);
    memset(m->part_next + m->n_bound, 0xFF, n * sizeof *m->part_next);
    m->set[set].part = (uint32_t)m->n_bound;
    m->set[set].n_part = (uint32_t)n;
    m->n_bound += n;
    return true;
}

uint32_t gm_step_slow(gmatch *m, uint32_t set, uint32_t c) {
    if (m->failed || set == GM_DEAD) return GM_DEAD;
    if (m->set[set].part == UNSET && !partition(m, set)) return GM_DEAD;
    const gm_set s = m->set[set];
    uint32_t lo = 0, hi = s.n_part;
    while (hi - lo > 1) {
        const uint32_t mid = (lo + hi) / 2;
        if (m->bound[s.part + mid] <= c)
            lo = mid;
        else
            hi = mid;
    }
    int32_t r = m->part_next[s.part + lo];
    if (r < 0) {
        r = (int32_t)step_by(m, set, keep_char, c);
        if (m->failed) return GM_DEAD;
        m->part_next[m->set[set].part + lo] = r;
    }
    if (c < 128) {
        if (m->set[set].ascii == UNSET) {
            if (!grow((void **)&m->ascii, &m->cap_ascii, m->n_ascii + 128, sizeof *m->ascii))
                return nomem(m);
            memset(m->ascii + m->n_ascii, 0xFF, 128 * sizeof *m->ascii);
            m->set[set].ascii = (uint32_t)m->n_ascii;
            m->n_ascii += 128;
        }
        m->ascii[m->set[set].ascii + c] = r;
    }
    return (uint32_t)r;
}

// The largest code point llama.cpp's decoder can make (a 0xF8..0xFF lead keeps 4 bits).
#define MAX_DECODED 0x3FFFFFu

void gm_closure(gmatch *m, uint32_t set) {
    if (m->set[set].closure) return;
    uint64_t loops[2] = {0, 0};
    for (uint32_t c = 0; c < 128; c++)
        if (gm_step(m, set, c) == set) loops[c >> 6] |= 1ull << (c & 63);
    bool high = true;
    // Every interval above ASCII (gm_step made the partition) must lead back.
    const uint32_t part = m->set[set].part, n_part = m->set[set].n_part;
    for (uint32_t j = 0; high && j < n_part && !m->failed; j++) {
        const uint32_t lo = m->bound[part + j];
        const uint32_t last = j + 1 < n_part ? m->bound[part + j + 1] - 1 : UINT32_MAX;
        if (last < 128 || lo > MAX_DECODED) continue;
        high = gm_step(m, set, lo < 128 ? 128 : lo) == set;
    }
    if (m->failed) return;
    gm_set *s = &m->set[set];
    s->loops[0] = loops[0];
    s->loops[1] = loops[1];
    s->loops_high = high;
    s->closure = 1;
}

uint32_t gm_step_token(gmatch *m, uint32_t set, int32_t id) {
    if (m->failed || !(m->set[set].flags & GM_HAS_TOKEN)) return GM_DEAD;
    return step_by(m, set, keep_token, (uint32_t)id);
}

bool gm_token_matches(const gmatch *m, uint32_t set, int32_t id) {
    const gm_set *s = &m->set[set];
    if (!(s->flags & GM_HAS_TOKEN)) return false;
    for (uint32_t i = 0; i < s->n; i++) {
        const uint32_t x = m->items[s->first + i];
        if (x != GM_EMPTY_STACK && keep_token(m->g, &m->g->elem[m->node[x].pos], (uint32_t)id))
            return true;
    }
    return false;
}

void gm_tokens(const gmatch *m, uint32_t set, void (*f)(uint32_t op, uint32_t tok, void *ctx),
               void *ctx) {
    const gm_set *s = &m->set[set];
    if (!(s->flags & GM_HAS_TOKEN)) return;
    for (uint32_t i = 0; i < s->n; i++) {
        const uint32_t x = m->items[s->first + i];
        if (x == GM_EMPTY_STACK) continue;
        const gbnf_elem *e = &m->g->elem[m->node[x].pos];
        if (is_token_op(e->op)) f(e->op, e->arg, ctx);
    }
}

uint32_t gm_chars(gmatch *m, uint32_t set) {
    if (m->set[set].chars != UNSET) return m->set[set].chars;
    uint32_t r = set;
    if ((m->set[set].flags & (GM_HAS_EMPTY | GM_HAS_TOKEN)) != 0) {
        m->n_buf = 0;
        const gm_set s = m->set[set];
        for (uint32_t i = 0; i < s.n; i++) {
            const uint32_t x = m->items[s.first + i];
            if (x != GM_EMPTY_STACK && !is_token_op(m->g->elem[m->node[x].pos].op) &&
                !buf_push(m, x))
                return GM_DEAD;
        }
        r = intern_buf(m);
    }
    if (!m->failed) m->set[set].chars = r;
    return r;
}

bool gm_partial(const gmatch *m, uint32_t set, uint32_t value, int n_remain) {
    const gm_set *s = &m->set[set];
    for (uint32_t i = 0; i < s->n; i++) {
        const uint32_t x = m->items[s->first + i];
        if (x == GM_EMPTY_STACK) continue;
        const gbnf_elem *e = &m->g->elem[m->node[x].pos];
        if (!is_token_op(e->op) && gbnf_match_partial(m->g, e, value, n_remain)) return true;
    }
    return false;
}

uint32_t gm_start(gmatch *m, uint32_t root) {
    const gbnf *g = m->g;
    uint32_t *starts = NULL;
    size_t n = 0, cap = 0;
    // Each alternative of the start rule, expanded.
    for (uint32_t a = g->rule[root];;) {
        uint32_t x = GM_EMPTY_STACK;
        if (!end_of_alt(g, a) && (x = node(m, a, GM_EMPTY_STACK)) == UNSET) break;
        if (!grow((void **)&starts, &cap, n + 1, sizeof *starts)) {
            nomem(m);
            break;
        }
        starts[n++] = x;
        while (!end_of_alt(g, a)) a++;
        if (g->elem[a].op == GBNF_END) break;
        a++;
    }
    uint32_t set = GM_DEAD;
    for (size_t i = 0; i < n && !m->failed; i++) {
        m->n_buf = 0;
        if (!expand(m, starts[i])) break;
        set = gm_union(m, set, intern_buf(m));
    }
    free(starts);
    return m->failed ? GM_DEAD : set;
}

// ---------------------------------------------------------------------------------------------
// Life cycle

mint_status gm_init(gmatch *m, const gbnf *g, mint_err *err) {
    memset(m, 0, sizeof *m);
    m->g = g;
    m->cap_node = 1024;
    m->node = malloc(m->cap_node * sizeof *m->node);
    m->seen = calloc(m->cap_node, sizeof *m->seen);
    m->cap_todo = 256;
    m->todo = malloc(m->cap_todo * sizeof *m->todo);
    m->cap_set = 256;
    m->set = malloc(m->cap_set * sizeof *m->set);
    if (!m->node || !m->seen || !m->todo || !m->set) {
        gm_free(m);
        return mint_fail(err, MINT_E_NOMEM, "grammar: out of memory for the parse stacks");
    }
    m->node[0] = (gm_node){UINT32_MAX, UINT32_MAX, UNSET}; // the empty stack
    m->n_node = 1;
    m->set[0] = (gm_set){.ascii = UNSET, .part = UNSET}; // the dead set: its chars are itself
    m->n_set = 1;
    return MINT_OK;
}

void gm_free(gmatch *m) {
    free(m->node);
    free(m->seen);
    free(m->todo);
    free(m->buf);
    free(m->set);
    free(m->items);
    free(m->ascii);
    free(m->bound);
    free(m->part_next);
    free(m->pick);
    map_free(&m->node_map);
    map_free(&m->set_map);
    memset(m, 0, sizeof *m);
}

uint32_t gm_compact(gmatch *m, uint32_t set) {
    gmatch fresh;
    if (m->failed) return GM_DEAD;
    if (gm_init(&fresh, m->g, NULL) != MINT_OK) return nomem(m);
    uint32_t *path = NULL;
    size_t cap = 0;
    const gm_set s = m->set[set];
    for (uint32_t i = 0; i < s.n && !fresh.failed; i++) {
        // Copy stack x bottom up: its positions from the top down, then interned from the end.
        size_t depth = 0;
        for (uint32_t x = m->items[s.first + i]; x != GM_EMPTY_STACK; x = m->node[x].parent) {
            if (!grow((void **)&path, &cap, depth + 1, sizeof *path)) {
                nomem(&fresh);
                break;
            }
            path[depth++] = m->node[x].pos;
        }
        uint32_t y = GM_EMPTY_STACK;
        while (depth > 0 && y != UNSET) y = node(&fresh, path[--depth], y);
        if (y != UNSET) buf_push(&fresh, y);
    }
    free(path);
    const uint32_t r = intern_buf(&fresh);
    if (fresh.failed) {
        const mint_status code = fresh.failed;
        char msg[sizeof m->msg];
        memcpy(msg, fresh.msg, sizeof msg);
        gm_free(&fresh);
        dead(m, code, "%s", msg);
        return GM_DEAD;
    }
    gm_free(m);
    *m = fresh;
    return r;
}
