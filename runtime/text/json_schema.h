// json_schema.h - the JSON Schema to GBNF converter's shared state, between its files:
// json_schema.c (the walk over the schema: types, objects, arrays, unions, $ref),
// json_schema_text.c (strings, the table of rules, literals, JSON text as the server writes it),
// json_schema_ranges.c (repetitions and integer ranges) and json_schema_pattern.c (a string's
// "pattern" regex to a rule).
//
// The converter reproduces llama.cpp's json_schema_to_grammar (the one llama-server runs) text
// for text: the same rule names, the same rule bodies, the rules sorted by name. Everything it
// builds is a NUL-terminated string in one arena, freed at the end; a bound on the bytes it may
// build (JS_MAX_BYTES) keeps an adversarial schema from exhausting memory.
#ifndef MINT_JSON_SCHEMA_H
#define MINT_JSON_SCHEMA_H

#include "mint.h"

#include "base/arena.h"
#include "base/error.h"
#include "base/strmap.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    JS_MAX_BYTES = 64 << 20,  // every string the conversion builds, in total (MINT_E_LIMIT)
    JS_MAX_DEPTH = 200,       // schemas visited inside one another, through $ref too
    JS_MAX_COUNT = INT32_MAX, // minItems / maxItems / minLength / maxLength (llama.cpp's int)
    JS_MAX_SUFFIX = 4096      // rules of one name told apart by a number ("a-b0" ... "a-b4095")
};

// A growing string; on failure it stops growing and remembers why (js_buf_done reports it).
typedef struct js_buf {
    char *p;    // [n + 1] bytes, NUL-terminated while p != NULL
    size_t n;   // bytes used
    size_t cap; // bytes allocated
    bool full;  // an append failed (out of memory or past JS_MAX_BYTES)
} js_buf;

// One rule of the grammar: its name and its body.
typedef struct js_rule {
    const char *name; // [name_len] in the arena; matches [a-zA-Z0-9-]+ (or a fixed name)
    size_t name_len;  // bytes
    const char *body; // NUL-terminated, in the arena
    uint64_t hash;    // XXH3-64 of body: most comparisons of bodies stop here
} js_rule;

// A name's sub-rule in a pattern ("root-1"), keyed by the text it stands for.
typedef struct js_subrule {
    const char *text; // the group or class the rule stands for (in the arena)
    const char *id;   // its rule's name
} js_subrule;

// A resolved $ref: the reference as written and the value it points to.
typedef struct js_ref {
    const char *ref;     // the "$ref" string (owned by the parsed document)
    json_object *target; // the value found at its JSON pointer (owned by the document)
} js_ref;

typedef struct js_conv {
    mint_arena arena;       // every string below
    size_t used;            // bytes taken from the arena and from js_bufs, against JS_MAX_BYTES
    mint_status st;         // first failure (sticky); MINT_OK while converting
    mint_err *err;          // the caller's, filled at the first failure (may be NULL)
    js_rule *rules;         // [n_rules] in the order they were added
    size_t n_rules;         // count
    size_t cap_rules;       // allocated
    mint_strmap by_name;    // rule name -> index in rules
    js_ref *refs;           // [n_refs] every $ref of the schema, resolved before the walk
    size_t n_refs;          // count
    mint_strmap ref_idx;    // ref string -> index in refs
    const char **resolving; // [n_resolving] the refs being visited (a cycle returns the name)
    size_t n_resolving;     // count
    size_t cap_resolving;   // allocated
    js_buf path;            // the JSON pointer of what is being visited, for messages
    int depth;              // schemas being visited inside one another
    char warning[MINT_ERR_MSG_MAX]; // the first warning ("" if none): what was accepted loosely
} js_conv;

// ---- json_schema_text.c

// Appends n bytes / a C string / one byte / printf text to b (no effect once b is full).
void js_buf_add(js_conv *c, js_buf *b, const char *s, size_t n);
void js_buf_adds(js_conv *c, js_buf *b, const char *s);
void js_buf_addc(js_conv *c, js_buf *b, char ch);
// Moves b's text into the arena and returns it; NULL (failure recorded) when b was full.
char *js_buf_done(js_conv *c, js_buf *b);
// Frees b without using its text.
void js_buf_drop(js_conv *c, js_buf *b);
// A copy of s[n] in the arena, NUL-terminated; NULL on failure (recorded).
char *js_strndup(js_conv *c, const char *s, size_t n);
// The concatenation of the NUL-terminated strings given, ending with NULL; NULL on failure.
char *js_cat(js_conv *c, ...);
// Records a failure (the first one wins) and returns NULL, for `return js_fail(...)`.
void *js_fail(js_conv *c, mint_status code, const char *fmt, ...) MINT_PRINTF(3, 4);
// MINT_E_FORMAT for the schema at the current pointer, or for its keyword when not NULL:
// "json schema: #/properties/tags/minItems: WHAT".
void *js_fail_at(js_conv *c, const char *keyword, const char *fmt, ...) MINT_PRINTF(3, 4);
// Records the first warning (a constraint the grammar does not hold), worded like js_fail_at.
void js_warn(js_conv *c, const char *keyword, const char *fmt, ...) MINT_PRINTF(3, 4);
// Appends "/key" (or "/index") to the current JSON pointer, escaping ~ and / as RFC 6901 does, and
// returns the length to go back to with js_path_pop.
size_t js_path_push(js_conv *c, const char *key);
size_t js_path_push_index(js_conv *c, size_t index);
void js_path_pop(js_conv *c, size_t mark);
// A copy of the current pointer, and making a saved one current again.
char *js_path_save(js_conv *c);
void js_path_set(js_conv *c, const char *pointer);
// The member `key` of object o: true when present (*v NULL for a JSON null).
bool js_get(json_object *o, const char *key, json_object **v);
// Whether v is a JSON string / the string s.
bool js_is_str(json_object *v);
bool js_str_is(json_object *v, const char *s);
// The value a "$ref" points to (every $ref is resolved before the walk); NULL when unknown.
json_object *js_ref_target(js_conv *c, const char *ref);
// name + "-" + s, the stem of a sub-rule (s alone at the root, where name is "").
char *js_stem(js_conv *c, const char *name, const char *s);
// A JSON value's text for a message, cut to a few dozen bytes.
const char *js_show(js_conv *c, json_object *v);

// Adds rule `name` (runs of characters outside [a-zA-Z0-9-] become "-") with body `body` and
// returns the name used: the name itself when free or holding the same body, else the name
// followed by the first number whose rule is free or holds the same body. NULL on failure.
const char *js_add_rule(js_conv *c, const char *name, const char *body);
// name with every run of characters outside [a-zA-Z0-9-] made one "-" (a rule's name).
char *js_safe_name(js_conv *c, const char *name);
// Whether a rule of that exact name exists.
bool js_has_rule(const js_conv *c, const char *name);
// The number of rules (a snapshot), and dropping every rule added after a snapshot.
size_t js_rules_mark(const js_conv *c);
void js_rules_reset(js_conv *c, size_t mark);
// Adds one of llama.cpp's built-in rules ("string", "value", "uuid", "date-string", ...) under
// `name`, and the built-in rules its body uses under their own names (those not yet present).
const char *js_add_builtin(js_conv *c, const char *name, const char *builtin);
// Whether `type` names a primitive rule llama.cpp accepts as a "type" ("string", "integer",
// "value", "char", ...); and whether `name` is reserved (a built-in rule's name or "root").
bool js_is_primitive(const char *type);
bool js_is_reserved(const char *name);
// A GBNF literal for `s`: in quotes, with \r, \n, " and \ escaped.
char *js_literal(js_conv *c, const char *s, size_t n);
// The value's JSON text as the server's JSON library writes it compactly (no spaces, non-ASCII
// bytes as they are, the shortest round-trip double as "%g" would lay it out).
char *js_dump(js_conv *c, json_object *v);
// The JSON text of the string s[n], written the same way.
char *js_dump_string(js_conv *c, const char *s, size_t n);
// The grammar: every rule as "name ::= body\n", sorted by name bytewise.
char *js_format_grammar(js_conv *c, size_t *len);

// ---- json_schema_object.c

// A property to lay out: its name, its schema, and where it was written (for messages).
typedef struct js_prop {
    const char *key;     // the property's name (owned by the document)
    json_object *schema; // its schema (owned by the document)
    const char *at;      // JSON pointer of the schema, in the arena
} js_prop;

// An allOf "enum" value's literal and how many parts listed it.
typedef struct js_enum_count {
    char *lit;    // the value's GBNF literal (in the arena)
    size_t count; // parts (and repeats within one) that listed it
} js_enum_count;

// An object's rule in the making.
typedef struct js_object {
    js_prop *v;           // [n] the properties, in the order met
    size_t n;             // count
    size_t cap;           // allocated
    mint_strmap required; // names that must be present (keys owned by the document)
    const char **kv;      // [n_kv] each name's "NAME-kv" rule (the last one given wins)
    size_t n_kv;          // count
    size_t cap_kv;        // allocated
    mint_strmap kv_idx;   // name -> index in kv ("*": the other keys)
    const char **req;     // [n_req] required names, in order
    size_t n_req;         // count
    const char **opt;     // [n_opt] optional names, in order, "*" last when other keys may be
    size_t n_opt;         //   present; count
    js_enum_count *enums; // [n_enums] allOf: the values of the parts' enums
    size_t n_enums;       // count
    size_t cap_enums;     // allocated
    mint_strmap enum_idx; // literal -> index in enums
    char *enum_body;      // allOf: "(v1 | v2 ...)", the values every part lists, or NULL
} js_object;

bool js_object_init(js_conv *c, js_object *o);
void js_object_free(js_object *o);
// Takes an object schema's "required" and "properties" (checking additionalProperties' type).
bool js_object_gather(js_conv *c, js_object *o, json_object *s);
// Takes the properties of "allOf"'s parts (those of an "anyOf" part optional, a $ref followed),
// and sets enum_body when the parts' enums share values.
bool js_all_of_gather(js_conv *c, js_object *o, json_object *s);
// Adds property i's "NAME-kv" rule, rule being the name of its value's rule (the walk visits the
// value right before, as llama.cpp does, so that clashing names get the same numbers).
bool js_object_kv(js_conv *c, js_object *o, size_t i, const char *rule, const char *name);
// Adds the rule for any other key: a string that is none of the names, then value_rule.
bool js_object_other_keys(js_conv *c, js_object *o, const char *value_rule, const char *name);
// The body of the object's rule (adding the "-rest" rules of the optional chain).
char *js_object_body(js_conv *c, js_object *o, const char *name);

// ---- json_schema_double.c

// The decimal digits of a finite double v > 0 as llama.cpp's JSON library writes them (Grisu2):
// at most 17 digits in buf, their count returned, v = digits * 10^*exp10.
int js_grisu2(double v, char *buf, int *exp10);

// ---- json_schema_ranges.c

// The rule for item repeated min..max times (max == INT32_MAX: no upper bound), items separated
// by `sep` when it is not empty, laid out as llama.cpp's build_repetition does.
char *js_repetition(js_conv *c, const char *item, int64_t min, int64_t max, const char *sep);
// The rule body for the integers in [min, max] (INT64_MIN / INT64_MAX: unbounded on that side),
// digit by digit, as llama.cpp's build_min_max_int writes it.
char *js_int_range(js_conv *c, int64_t min, int64_t max);

// ---- json_schema_pattern.c

// The rule for a string whose content matches `pattern` (an ECMAScript regex anchored with ^ and
// $), named `name`. A pattern that is valid but beyond GBNF falls back to any string with a
// warning, as llama.cpp does; an invalid one fails.
const char *js_pattern_rule(js_conv *c, const char *pattern, const char *name);

#endif // MINT_JSON_SCHEMA_H
