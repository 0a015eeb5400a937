// gbnf.h - a GBNF grammar (llama.cpp's grammar format) compiled
// to flat rules, as runtime/text/gbnf_parse.c makes it and runtime/text/grammar_match.c runs it.
//
// A rule is a run of elements: its alternatives one after the other, each ended by GBNF_ALT
// except the last, which GBNF_END ends. An element is a terminal (one code point, a character
// class, any code point, a token id or "any token but this id") or a reference to a rule.
// Groups and repetitions become rules of their own at parse time, exactly as llama.cpp
// rewrites them (S* -> S' ::= S S' | ...), so that mint and llama.cpp build the same parse
// stacks from the same text.
#ifndef MINT_GBNF_H
#define MINT_GBNF_H

#include "mint.h"
#include "runtime/text/vocab_types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum gbnf_op {
    GBNF_END = 0,       // end of the rule's last alternative
    GBNF_ALT = 1,       // end of an alternative that another follows
    GBNF_RULE = 2,      // arg: the rule referred to
    GBNF_CHAR = 3,      // arg: the one code point matched
    GBNF_CLASS = 4,     // arg: index of a gbnf_class ([a-z0-9], [^"\\])
    GBNF_ANY = 5,       // any one code point (.)
    GBNF_TOKEN = 6,     // arg: the token id matched (<[id]>, <text>)
    GBNF_NOT_TOKEN = 7, // arg: any one token but this id (!<[id]>)
} gbnf_op;

typedef struct gbnf_elem {
    uint32_t op;  // a gbnf_op
    uint32_t arg; // rule id, code point, class index or token id, as op says
} gbnf_elem;

typedef struct gbnf_class {
    uint32_t first; // index of its first (lo, hi) pair in gbnf.range
    uint32_t n;     // number of pairs (>= 1)
    bool negated;   // [^...]: matches the code points no pair covers
} gbnf_class;

typedef struct gbnf {
    gbnf_elem *elem;  // [n_elem] every rule's elements, rule after rule
    uint32_t n_elem;  // elements in all
    uint32_t *rule;   // [n_rules] index in elem of each rule's first element
    uint32_t n_rules; // rules, the written ones and those groups and repetitions made
    gbnf_class *cls;  // [n_cls] character classes
    uint32_t n_cls;   // classes
    uint32_t *range;  // [2 * n_range] inclusive (lo, hi) code point pairs of the classes
    uint32_t n_range; // pairs
    uint32_t root;    // the start rule
} gbnf;

// Limits on what a grammar may expand to (each refusal is one line naming it).
#define GBNF_MAX_REPEAT  2000      // llama.cpp's: a count above it, or rules x count reaching it
#define GBNF_MAX_NESTING 128       // groups inside groups
#define GBNF_MAX_ELEMS   (1 << 21) // elements once repetitions are written out

// Parses `len` bytes of GBNF text into *out, the start rule being `root` (NULL: "root"). `v`
// resolves token references by text (<think>, which must be one token) and bounds token ids;
// NULL refuses <text> references and bounds ids by INT32_MAX. MINT_E_FORMAT for any syntax
// error, an undefined rule, a missing start rule, left recursion or a limit above, with one
// line naming it and its line:column; MINT_E_NOMEM.
mint_status gbnf_parse(const char *text, size_t len, const char *root, const mint_vocab *v,
                       gbnf *out, mint_err *err);
void gbnf_free(gbnf *g);
// A rule of g that is left-recursive as gbnf_parse refuses it (runtime/text/gbnf_check.c) in
// *rule, or UINT32_MAX when none; MINT_E_NOMEM.
mint_status gbnf_find_left_recursion(const gbnf *g, uint32_t *rule);

// Whether code point c is in class k.
bool gbnf_class_has(const gbnf *g, uint32_t k, uint32_t c);
// Whether the terminal element e (CHAR, CLASS or ANY) matches code point c.
bool gbnf_match(const gbnf *g, const gbnf_elem *e, uint32_t c);
// llama.cpp's test for a token that ends inside a UTF-8 sequence: whether the terminal e could
// match some completion of the `n_remain` bytes still missing after the bits `value` (n_remain
// 1..3; a two-byte lead below 0xC2 and a missing sequence, n_remain < 0, never match). For a
// negated class it answers as llama.cpp does: no when any code point of the completions' range
// is excluded.
bool gbnf_match_partial(const gbnf *g, const gbnf_elem *e, uint32_t value, int n_remain);

#endif // MINT_GBNF_H
