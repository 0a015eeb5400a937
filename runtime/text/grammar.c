// grammar.c - the grammar object: a parsed GBNF grammar, the current set of parse stacks and
// the pending UTF-8 bytes, lazy triggers (mint_text.h "Grammars").
//
// What a token means to a grammar is what it means to llama.cpp's grammar engine, so a
// grammar allows the same tokens in both:
//   - its text is its piece with special tokens rendered, up to a NUL (token_trie.h);
//   - an end-of-generation token is allowed exactly when a stack is empty (the text so far is a
//     complete match), and accepting it changes nothing;
//   - a token with an empty piece is never allowed;
//   - the piece is decoded as llama.cpp decodes it: bytes finishing a character the previous
//     token began must be continuation bytes, a byte that cannot lead refuses the token, the
//     bytes after a lead byte are not checked, and a piece may end inside a character, which
//     is allowed when some stack could match a completion of it (gbnf_match_partial);
//   - a stack with a token terminal on top takes the token by its id, when the piece decodes
//     without a refused byte to at least one whole character; a token terminal reached inside a
//     token's text takes nothing (there llama.cpp's mask allows a token its own accept then
//     refuses).
// Accepting a token steps the stacks as llama.cpp's llama_grammar_accept_token does; it is
// refused unless mint_grammar_allows says yes, so the stacks never run empty.
#include "runtime/text/grammar.h"

#include "base/error.h"
#include "runtime/text/gbnf.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdlib.h>
#include <string.h>

// Compact the matcher's caches when they grow past these (a long generation through many
// distinct parse states); the next mask then recomputes the steps it needs.
#define COMPACT_NODES (1u << 18)
#define COMPACT_ITEMS (1u << 21)
#define COMPACT_ASCII (1u << 22)

typedef struct trigger_pos {
    int32_t tok;       // a token generated while waiting
    size_t start, end; // its piece's bytes in mint_grammar.buf
} trigger_pos;

struct mint_grammar {
    const mint_vocab *v;      // the vocabulary (borrowed)
    const mint_token_trie *t; // its pieces and trie (borrowed)
    gbnf g;                   // the rules
    gmatch m;                 // the stacks and sets
    uint32_t cur;             // the set of stacks now
    uint32_t value;           // pending UTF-8 bits of the text so far
    int remain;               // bytes still missing to finish that character (0: none)
    bool lazy;                // waits for a trigger at the start
    bool awaiting;            // ... and has not seen one yet
    char **word;              // [n_word] literal trigger texts
    size_t *word_len;         // [n_word] their lengths
    int32_t n_word;
    pcre2_code **pat;      // [n_pat] trigger patterns
    pcre2_match_data **md; // [n_pat] their match data
    int32_t n_pat;
    int32_t *trig_tok; // [n_trig_tok] trigger tokens
    int32_t n_trig_tok;
    char *buf; // [n_buf] text generated while waiting (cap_buf allocated)
    size_t n_buf, cap_buf;
    trigger_pos *pos; // [n_pos] the tokens of buf (cap_pos allocated)
    size_t n_pos, cap_pos;
    uint8_t *allowed;  // [t->n_vocab] the last mask
    grammar_walk walk; // the trie walk's scratch
    mint_err fail;     // MINT_OK, or why the grammar cannot go on
};

// ---------------------------------------------------------------------------------------------
// Decoding a piece as llama.cpp's grammar does

#define DEC_NEED (-1) // no whole code point yet
#define DEC_BAD  (-2) // a byte llama.cpp refuses

typedef struct utf8_dec {
    uint32_t value; // bits so far
    int remain;     // bytes still missing
    bool cont;      // they finish a character an earlier token began (must be 10xxxxxx)
} utf8_dec;

static int64_t dec_byte(utf8_dec *d, uint8_t b) {
    static const int8_t extra[16] = {0, 0, 0, 0, 0, 0, 0, 0, -1, -1, -1, -1, 1, 1, 2, 3};
    static const uint8_t bits[4] = {0x7F, 0x3F, 0x1F, 0x0F};
    if (d->remain > 0) {
        if (d->cont && (b & 0xC0) != 0x80) return DEC_BAD;
        d->value = (d->value << 6) + (b & 0x3Fu);
        if (--d->remain > 0) return DEC_NEED;
        d->cont = false;
        return d->value;
    }
    const int k = extra[b >> 4];
    if (k < 0) return DEC_BAD;
    d->value = b & bits[k];
    d->remain = k;
    d->cont = false;
    return k == 0 ? (int64_t)d->value : DEC_NEED;
}

static const char *piece_of(const mint_grammar *g, int32_t id, size_t *n) {
    *n = g->t->piece_at[id + 1] - g->t->piece_at[id];
    return g->t->blob + g->t->piece_at[id];
}

// Steps set through the code points of p[0..n) from the pending bytes d (updated). Returns the
// set after them; *bad when the decoder refused a byte (the set is then meaningless).
static uint32_t feed(mint_grammar *g, uint32_t set, const char *p, size_t n, utf8_dec *d, bool *bad,
                     size_t *n_cp) {
    *bad = false;
    *n_cp = 0;
    for (size_t i = 0; i < n; i++) {
        const int64_t c = dec_byte(d, (uint8_t)p[i]);
        if (c == DEC_BAD) {
            *bad = true;
            return GM_DEAD;
        }
        if (c == DEC_NEED) continue;
        ++*n_cp;
        if (set != GM_DEAD) set = gm_step(&g->m, set, (uint32_t)c);
    }
    return set;
}

static utf8_dec pending(const mint_grammar *g) {
    return (utf8_dec){g->value, g->remain, g->remain > 0};
}

// Whether a stack with a token terminal on top may take token id (besides its id matching):
// its piece decodes from the pending bytes without a refused byte to a whole code point.
static bool whole_token(mint_grammar *g, int32_t id) {
    if (g->t->flags[id] & MINT_TRIE_EOG) return false;
    size_t n;
    const char *p = piece_of(g, id, &n);
    if (n == 0) return false;
    if (g->remain == 0) return (g->t->flags[id] & MINT_TRIE_CP) != 0;
    utf8_dec d = pending(g);
    bool bad;
    size_t n_cp;
    (void)feed(g, GM_DEAD, p, n, &d, &bad, &n_cp);
    return !bad && n_cp > 0;
}

// Whether the stacks with a code point on top take the whole piece of token id.
static bool chars_allow(mint_grammar *g, int32_t id) {
    size_t n;
    const char *p = piece_of(g, id, &n);
    const uint32_t start = gm_chars(&g->m, g->cur);
    if (n == 0 || start == GM_DEAD) return false;
    utf8_dec d = pending(g);
    bool bad;
    size_t n_cp;
    const uint32_t set = feed(g, start, p, n, &d, &bad, &n_cp);
    if (bad || set == GM_DEAD) return false;
    return d.remain == 0 || gm_partial(&g->m, set, d.value, d.remain);
}

// ---------------------------------------------------------------------------------------------
// State

static mint_status set_fail(mint_grammar *g, mint_status code, const char *msg) {
    if (g->fail.code == MINT_OK) {
        g->fail.code = code;
        snprintf(g->fail.msg, sizeof g->fail.msg, "%s", msg);
    }
    return code;
}

// Records the matcher's failure, if any, as the grammar's.
static mint_status check_matcher(mint_grammar *g) {
    if (g->m.failed) return set_fail(g, g->m.failed, g->m.msg);
    return g->fail.code;
}

static mint_status restart(mint_grammar *g) {
    gm_free(&g->m);
    if (gm_init(&g->m, &g->g, NULL) != MINT_OK)
        return set_fail(g, MINT_E_NOMEM, "grammar: out of memory for the parse stacks");
    g->cur = gm_start(&g->m, g->g.root);
    g->value = 0;
    g->remain = 0;
    g->awaiting = g->lazy;
    g->n_buf = 0;
    g->n_pos = 0;
    return check_matcher(g);
}

// Advances by token id read as the bytes p[0..n) (its piece, or the part of it a trigger
// kept), as llama.cpp's llama_grammar_accept_token: token terminals take the id, the other
// stacks the code points; an undecodable piece leaves them as they are.
static mint_status step_piece(mint_grammar *g, int32_t id, const char *p, size_t n,
                              const char *what) {
    gmatch *m = &g->m;
    const uint32_t by_id = gm_step_token(m, g->cur, id);
    const uint32_t start = gm_chars(m, g->cur);
    utf8_dec d = pending(g);
    bool bad;
    size_t n_cp;
    uint32_t by_text = feed(g, start, p, n, &d, &bad, &n_cp);
    if (bad) {
        by_text = start;
        d = (utf8_dec){0, 0, false};
    }
    const uint32_t next = gm_union(m, by_id, by_text);
    if (check_matcher(g) != MINT_OK) return g->fail.code;
    if (next == GM_DEAD) {
        char msg[160];
        snprintf(msg, sizeof msg, "grammar: %s '%.*s' does not match the grammar", what,
                 (int)(n > 60 ? 60 : n), p);
        mint_err e = {0};
        mint_fail(&e, MINT_E_ARG, "%s", msg);
        mint_err_one_line(&e);
        return set_fail(g, MINT_E_ARG, e.msg);
    }
    g->cur = next;
    g->value = d.value;
    g->remain = d.remain;
    if (m->n_node > COMPACT_NODES || m->n_items > COMPACT_ITEMS ||
        m->n_ascii + m->n_bound > COMPACT_ASCII) {
        g->cur = gm_compact(m, g->cur);
        return check_matcher(g);
    }
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// Lazy triggers

// Where in buf the grammar starts, or SIZE_MAX when no trigger has fired.
static size_t find_trigger(mint_grammar *g) {
    size_t best = SIZE_MAX;
    for (int32_t k = 0; k < g->n_word; k++) {
        const char *hit = memmem(g->buf, g->n_buf, g->word[k], g->word_len[k]);
        if (hit && (size_t)(hit - g->buf) < best) best = (size_t)(hit - g->buf);
    }
    if (best != SIZE_MAX) return best;
    for (int32_t k = 0; k < g->n_pat; k++) {
        const int rc = pcre2_match(g->pat[k], (PCRE2_SPTR)g->buf, g->n_buf, 0, 0, g->md[k], NULL);
        if (rc <= 0) continue;
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(g->md[k]);
        // The first capture group that matched something, else the whole match.
        for (int i = 1; i < rc; i++)
            if (ov[2 * i] != PCRE2_UNSET && ov[2 * i + 1] > ov[2 * i]) return ov[2 * i];
        return ov[0];
    }
    return SIZE_MAX;
}

static mint_status lazy_accept(mint_grammar *g, int32_t id, mint_err *err) {
    size_t n;
    const char *p = piece_of(g, id, &n);
    for (int32_t k = 0; k < g->n_trig_tok; k++) {
        if (g->trig_tok[k] != id) continue;
        g->awaiting = false;
        g->n_buf = g->n_pos = 0;
        mint_status st = step_piece(g, id, p, n, "the trigger token");
        return st ? mint_fail(err, st, "%s", g->fail.msg) : MINT_OK;
    }
    if (g->n_buf + n > g->cap_buf) {
        size_t cap = g->cap_buf ? 2 * g->cap_buf : 256;
        while (cap < g->n_buf + n) cap *= 2;
        char *b = realloc(g->buf, cap);
        if (!b) return mint_fail(err, MINT_E_NOMEM, "grammar: out of memory");
        g->buf = b;
        g->cap_buf = cap;
    }
    if (g->n_pos == g->cap_pos) {
        size_t cap = g->cap_pos ? 2 * g->cap_pos : 64;
        trigger_pos *q = realloc(g->pos, cap * sizeof *q);
        if (!q) return mint_fail(err, MINT_E_NOMEM, "grammar: out of memory");
        g->pos = q;
        g->cap_pos = cap;
    }
    memcpy(g->buf + g->n_buf, p, n);
    g->pos[g->n_pos++] = (trigger_pos){id, g->n_buf, g->n_buf + n};
    g->n_buf += n;
    const size_t start = find_trigger(g);
    if (start == SIZE_MAX) return MINT_OK;
    // Feed the text from the trigger on, token by token (the first one from the trigger's start).
    g->awaiting = false;
    mint_status st = MINT_OK;
    for (size_t i = 0; i < g->n_pos && st == MINT_OK; i++) {
        const trigger_pos q = g->pos[i];
        if (q.end <= start) continue;
        const size_t from = q.start < start ? start : q.start;
        st = step_piece(g, q.tok, g->buf + from, q.end - from, "the text from the trigger");
    }
    g->n_buf = g->n_pos = 0;
    return st ? mint_fail(err, st, "%s", g->fail.msg) : MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// The API

mint_grammar_params mint_grammar_default_params(void) {
    return (mint_grammar_params){0};
}

void mint_grammar_free(mint_grammar *g) {
    if (!g) return;
    gm_free(&g->m);
    gbnf_free(&g->g);
    for (int32_t k = 0; k < g->n_word; k++) free(g->word[k]);
    free(g->word);
    free(g->word_len);
    for (int32_t k = 0; k < g->n_pat; k++) {
        pcre2_code_free(g->pat[k]);
        pcre2_match_data_free(g->md[k]);
    }
    free(g->pat);
    free(g->md);
    free(g->trig_tok);
    free(g->buf);
    free(g->pos);
    free(g->allowed);
    free(g->walk.set);
    free(g->walk.value);
    free(g->walk.remain);
    free(g->walk.cont);
    free(g);
}

static mint_status check_params(const mint_vocab *v, const mint_grammar_params *p, mint_err *err) {
    const struct {
        const char *name;
        int32_t n;
        const void *list;
    } kinds[] = {{"trigger words", p->n_trigger_words, p->trigger_words},
                 {"trigger patterns", p->n_trigger_patterns, p->trigger_patterns},
                 {"trigger tokens", p->n_trigger_tokens, p->trigger_tokens}};
    for (int i = 0; i < 3; i++)
        if (kinds[i].n < 0 || kinds[i].n > MINT_GRAMMAR_MAX_TRIGGERS ||
            (kinds[i].n > 0 && !kinds[i].list))
            return mint_fail(err, MINT_E_ARG,
                             "grammar: %d %s (0 .. %d, and a list for more than 0)",
                             (int)kinds[i].n, kinds[i].name, MINT_GRAMMAR_MAX_TRIGGERS);
    for (int32_t k = 0; k < p->n_trigger_words; k++)
        if (!p->trigger_words[k] || !p->trigger_words[k][0])
            return mint_fail(err, MINT_E_ARG, "grammar: trigger word %d is empty", (int)k);
    for (int32_t k = 0; k < p->n_trigger_patterns; k++)
        if (!p->trigger_patterns[k])
            return mint_fail(err, MINT_E_ARG, "grammar: trigger pattern %d is NULL", (int)k);
    for (int32_t k = 0; k < p->n_trigger_tokens; k++)
        if (p->trigger_tokens[k] < 0 || p->trigger_tokens[k] >= v->n)
            return mint_fail(err, MINT_E_ARG,
                             "grammar: trigger token %d is outside the vocabulary (0 .. %d)",
                             (int)p->trigger_tokens[k], (int)v->n - 1);
    return MINT_OK;
}

static mint_status set_triggers(mint_grammar *g, const mint_grammar_params *p, mint_err *err) {
    const size_t nw = (size_t)p->n_trigger_words, np = (size_t)p->n_trigger_patterns;
    const size_t nt = (size_t)p->n_trigger_tokens;
    g->word = calloc(nw + 1, sizeof *g->word);
    g->word_len = calloc(nw + 1, sizeof *g->word_len);
    g->pat = calloc(np + 1, sizeof *g->pat);
    g->md = calloc(np + 1, sizeof *g->md);
    g->trig_tok = malloc((nt + 1) * sizeof *g->trig_tok);
    if (!g->word || !g->word_len || !g->pat || !g->md || !g->trig_tok)
        return mint_fail(err, MINT_E_NOMEM, "grammar: out of memory");
    for (; g->n_word < (int32_t)nw; g->n_word++) {
        const int32_t k = g->n_word;
        if (!(g->word[k] = strdup(p->trigger_words[k])))
            return mint_fail(err, MINT_E_NOMEM, "grammar: out of memory");
        g->word_len[k] = strlen(g->word[k]);
    }
    for (; g->n_pat < (int32_t)np; g->n_pat++) {
        const int32_t k = g->n_pat;
        int code;
        PCRE2_SIZE off;
        // Bytes, not UTF-8 (the text may end inside a character), and '$' only at the end, as
        // llama.cpp's std::regex reads a pattern.
        g->pat[k] = pcre2_compile((PCRE2_SPTR)p->trigger_patterns[k], PCRE2_ZERO_TERMINATED,
                                  PCRE2_DOLLAR_ENDONLY, &code, &off, NULL);
        if (!g->pat[k]) {
            PCRE2_UCHAR why[120];
            pcre2_get_error_message(code, why, sizeof why);
            mint_fail(err, MINT_E_ARG,
                      "grammar: trigger pattern %d is not a valid regex: %s at "
                      "offset %zu",
                      (int)k, (const char *)why, (size_t)off);
            mint_err_one_line(err);
            return MINT_E_ARG;
        }
        if (!(g->md[k] = pcre2_match_data_create_from_pattern(g->pat[k], NULL)))
            return mint_fail(err, MINT_E_NOMEM, "grammar: out of memory");
    }
    if (nt) memcpy(g->trig_tok, p->trigger_tokens, nt * sizeof *g->trig_tok);
    g->n_trig_tok = (int32_t)nt;
    g->lazy = nw + np + nt > 0;
    return MINT_OK;
}

mint_status mint_grammar_create_vocab(const mint_vocab *v, const mint_token_trie *trie,
                                      const char *text, size_t len, const mint_grammar_params *p,
                                      mint_grammar **out, mint_err *err) {
    mint_err_clear(err);
    if (!out) return mint_fail(err, MINT_E_ARG, "grammar: out is NULL");
    *out = NULL;
    if (!v || !trie) return mint_fail(err, MINT_E_ARG, "grammar: no model");
    const mint_grammar_params q = p ? *p : mint_grammar_default_params();
    mint_status st = check_params(v, &q, err);
    if (st) return st;
    mint_grammar *g = calloc(1, sizeof *g);
    if (!g) return mint_fail(err, MINT_E_NOMEM, "grammar: out of memory");
    g->v = v;
    g->t = trie;
    if ((st = gbnf_parse(text, len, q.root, v, &g->g, err)) || (st = set_triggers(g, &q, err)))
        goto fail;
    const size_t depth = (size_t)trie->max_depth + 1;
    g->allowed = malloc((size_t)trie->n_vocab);
    g->walk.set = malloc(depth * sizeof *g->walk.set);
    g->walk.value = malloc(depth * sizeof *g->walk.value);
    g->walk.remain = malloc(depth);
    g->walk.cont = malloc(depth);
    if (!g->allowed || !g->walk.set || !g->walk.value || !g->walk.remain || !g->walk.cont) {
        st = mint_fail(err, MINT_E_NOMEM, "grammar: out of memory");
        goto fail;
    }
    if ((st = restart(g)) != MINT_OK) {
        mint_fail(err, st, "%s", g->fail.msg);
        goto fail;
    }
    *out = g;
    return MINT_OK;
fail:
    mint_grammar_free(g);
    return st;
}

void mint_grammar_reset(mint_grammar *g) {
    if (!g) return;
    mint_err_clear(&g->fail);
    (void)restart(g);
}

bool mint_grammar_active(const mint_grammar *g) {
    return g && !g->awaiting;
}

bool mint_grammar_can_end(const mint_grammar *g) {
    return g && (g->awaiting || (gm_flags(&g->m, g->cur) & GM_HAS_EMPTY));
}

bool mint_grammar_allows(mint_grammar *g, int32_t id) {
    if (!g || id < 0 || id >= g->t->n_vocab) return false;
    if (g->awaiting) return true;
    if (g->fail.code) return false;
    if (g->t->flags[id] & MINT_TRIE_EOG) return mint_grammar_can_end(g);
    if (gm_token_matches(&g->m, g->cur, id) && whole_token(g, id)) return true;
    const bool ok = chars_allow(g, id);
    check_matcher(g);
    return ok && !g->fail.code;
}

mint_status mint_grammar_accept(mint_grammar *g, int32_t id, mint_err *err) {
    mint_err_clear(err);
    if (!g) return mint_fail(err, MINT_E_ARG, "grammar: NULL");
    if (g->fail.code) return mint_fail(err, g->fail.code, "%s", g->fail.msg);
    if (id < 0 || id >= g->t->n_vocab)
        return mint_fail(err, MINT_E_ARG, "grammar: token %d is outside the vocabulary (0 .. %d)",
                         (int)id, (int)g->t->n_vocab - 1);
    if (g->awaiting) return lazy_accept(g, id, err);
    if (!mint_grammar_allows(g, id)) {
        if (g->fail.code) return mint_fail(err, g->fail.code, "%s", g->fail.msg);
        size_t n;
        const char *p = piece_of(g, id, &n);
        mint_fail(err, MINT_E_ARG, "grammar: token %d ('%.*s') is not allowed here", (int)id,
                  (int)(n > 60 ? 60 : n), p);
        mint_err_one_line(err);
        return MINT_E_ARG;
    }
    if (g->t->flags[id] & MINT_TRIE_EOG) return MINT_OK;
    size_t n;
    const char *p = piece_of(g, id, &n);
    const mint_status st = step_piece(g, id, p, n, "the token");
    return st ? mint_fail(err, st, "%s", g->fail.msg) : MINT_OK;
}

mint_status mint_grammar_accept_text(mint_grammar *g, const char *text, size_t len, mint_err *err) {
    mint_err_clear(err);
    if (g->fail.code) return mint_fail(err, g->fail.code, "%s", g->fail.msg);
    utf8_dec d = pending(g);
    bool bad;
    size_t n_cp;
    const uint32_t set = feed(g, g->cur, text, len, &d, &bad, &n_cp);
    if (check_matcher(g) != MINT_OK) return mint_fail(err, g->fail.code, "%s", g->fail.msg);
    if (bad) { // llama.cpp feeds no code point of it
        g->value = 0;
        g->remain = 0;
        return MINT_OK;
    }
    if (set == GM_DEAD) {
        mint_fail(err, MINT_E_ARG, "grammar: the text '%.*s' does not match the grammar",
                  (int)(len > 60 ? 60 : len), text);
        mint_err_one_line(err);
        return MINT_E_ARG;
    }
    g->cur = set;
    g->value = d.value;
    g->remain = d.remain;
    return MINT_OK;
}

mint_status mint_grammar_compact(mint_grammar *g) {
    if (g->fail.code) return g->fail.code;
    g->cur = gm_compact(&g->m, g->cur);
    return check_matcher(g);
}

// Marks the tokens a token terminal on top of a stack takes.
static void mark_tokens(uint32_t op, uint32_t tok, void *ctx) {
    mint_grammar *g = ctx;
    if (op == GBNF_TOKEN) {
        if (whole_token(g, (int32_t)tok)) g->allowed[tok] = 1;
        return;
    }
    for (int32_t id = 0; id < g->t->n_vocab; id++)
        if (id != (int32_t)tok && !g->allowed[id] && whole_token(g, id)) g->allowed[id] = 1;
}

int32_t mint_grammar_mask(mint_grammar *g, const uint8_t **allowed) {
    const int32_t n = g->t->n_vocab;
    *allowed = g->allowed;
    if (g->awaiting && !g->fail.code) {
        memset(g->allowed, 1, (size_t)n);
        return n;
    }
    memset(g->allowed, 0, (size_t)n);
    if (g->fail.code) return 0;
    const uint32_t chars = gm_chars(&g->m, g->cur);
    if (chars != GM_DEAD)
        grammar_mask_walk(&g->m, g->t, chars, g->value, g->remain, &g->walk, g->allowed);
    for (int32_t k = 0; k < g->t->n_outside; k++) // pieces too long, or ending inside a character
        if (chars_allow(g, g->t->outside[k])) g->allowed[g->t->outside[k]] = 1;
    gm_tokens(&g->m, g->cur, mark_tokens, g);
    const uint8_t end = (gm_flags(&g->m, g->cur) & GM_HAS_EMPTY) != 0;
    for (int32_t k = 0; k < g->t->n_eog; k++) g->allowed[g->t->eog[k]] = end;
    if (check_matcher(g) != MINT_OK) {
        memset(g->allowed, 0, (size_t)n);
        return 0;
    }
    int32_t count = 0;
    for (int32_t id = 0; id < n; id++) count += g->allowed[id];
    if (count == 0)
        set_fail(g, MINT_E_ARG, "grammar: no token of the vocabulary can continue the text here");
    return count;
}

int32_t mint_grammar_n_vocab(const mint_grammar *g) {
    return g->t->n_vocab;
}

bool mint_grammar_is_eog(const mint_grammar *g, int32_t id) {
    return id >= 0 && id < g->t->n_vocab && (g->t->flags[id] & MINT_TRIE_EOG);
}

int32_t mint_grammar_end_token(const mint_grammar *g) {
    return g->t->n_eog > 0 ? g->t->eog[0] : -1;
}

mint_status mint_grammar_failure(const mint_grammar *g, mint_err *err) {
    if (g->fail.code && err) *err = g->fail;
    return g->fail.code;
}
