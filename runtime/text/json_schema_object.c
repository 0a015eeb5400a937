// json_schema_object.c - objects: the properties of "properties" / "required" /
// "additionalProperties", or of "allOf"'s parts merged into one object (or the values its parts'
// "enum"s share), and the object's rule laid out as llama.cpp's converter lays it out: required
// properties in order, then the optional ones as a chain where each may be left out, then any
// other key (when additional properties are allowed) through a rule that matches every string
// but the declared names. The walk (json_schema.c) visits each property's schema between the
// steps here, in llama.cpp's order, so that rule names clash and get numbered as there.
#include "runtime/text/json_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool js_object_init(js_conv *c, js_object *o) {
    *o = (js_object){0};
    if (mint_strmap_init(&o->required, 16) != MINT_OK ||
        mint_strmap_init(&o->kv_idx, 16) != MINT_OK ||
        mint_strmap_init(&o->enum_idx, 16) != MINT_OK)
        return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
    return true;
}

void js_object_free(js_object *o) {
    free(o->v), free(o->kv), free(o->req), free(o->opt), free(o->enums);
    mint_strmap_free(&o->required);
    mint_strmap_free(&o->kv_idx);
    mint_strmap_free(&o->enum_idx);
    *o = (js_object){0};
}

static bool add_prop(js_conv *c, js_object *o, const char *key, json_object *schema,
                     bool required) {
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 16;
        js_prop *v = realloc(o->v, cap * sizeof *v);
        if (!v) return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
        o->v = v;
        o->cap = cap;
    }
    size_t mark = js_path_push(c, key);
    const char *at = js_path_save(c);
    js_path_pop(c, mark);
    if (!at) return false;
    o->v[o->n++] = (js_prop){key, schema, at};
    if (required && mint_strmap_put(&o->required, key, strlen(key), 0, NULL) == MINT_E_NOMEM)
        return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
    return true;
}

// The properties of schema s's "properties" (an object), all required when `required`.
static bool add_props(js_conv *c, js_object *o, json_object *s, bool required) {
    json_object *v = NULL;
    js_get(s, "properties", &v);
    if (!json_object_is_type(v, json_type_object))
        return js_fail_at(c, "properties", "must be an object, not %s", js_show(c, v)), false;
    size_t mark = js_path_push(c, "properties");
    bool ok = true;
    json_object_object_foreach(v, key, schema) {
        if (!(ok = add_prop(c, o, key, schema, required))) break;
    }
    js_path_pop(c, mark);
    return ok;
}

bool js_object_gather(js_conv *c, js_object *o, json_object *s) {
    json_object *v = NULL;
    if (js_get(s, "required", &v)) {
        size_t n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
        for (size_t i = 0; i < n; i++) {
            json_object *k = json_object_array_get_idx(v, i);
            if (!js_is_str(k)) {
                n = 0;
                break;
            }
            if (mint_strmap_put(&o->required, json_object_get_string(k),
                                (size_t)json_object_get_string_len(k), 0, NULL) == MINT_E_NOMEM)
                return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
        }
        if (!json_object_is_type(v, json_type_array) || n != json_object_array_length(v))
            return js_fail_at(c, "required", "must be an array of names, not %s", js_show(c, v)),
                   false;
    }
    if (js_get(s, "properties", &v) && !add_props(c, o, s, false)) return false;
    if (js_get(s, "additionalProperties", &v) && !json_object_is_type(v, json_type_object) &&
        !json_object_is_type(v, json_type_boolean))
        return js_fail_at(c, "additionalProperties", "must be a schema or a boolean, not %s",
                          js_show(c, v)),
               false;
    return true;
}

// ---------------------------------------------------------------------------------------------
// A string that is none of the property names: a trie of the names, each level accepting any
// character but the next one of a name, or that one followed by the rest of the trie.

typedef struct trie_node {
    int32_t child;   // first child (-1: none), children in increasing signed-char order
    int32_t sibling; // next child of the same parent (-1: none)
    char ch;         // the byte leading here
    bool end;        // a name ends here
} trie_node;

typedef struct trie {
    trie_node *v; // [n] nodes; v[0] is the root
    size_t n;     // count
    size_t cap;   // allocated
} trie;

// The child of node `at` for byte ch, made when missing; -1 on failure.
static int32_t trie_child(js_conv *c, trie *t, int32_t at, char ch) {
    int32_t prev = -1, k = t->v[at].child;
    // llama.cpp keys the children by char, signed on x86: bytes >= 0x80 come first.
    while (k >= 0 && (signed char)t->v[k].ch < (signed char)ch) prev = k, k = t->v[k].sibling;
    if (k >= 0 && t->v[k].ch == ch) return k;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        trie_node *v = realloc(t->v, cap * sizeof *v);
        if (!v || t->n >= INT32_MAX) {
            if (v) t->v = v;
            return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), -1;
        }
        t->v = v;
        t->cap = cap;
    }
    int32_t n = (int32_t)t->n++;
    t->v[n] = (trie_node){-1, k, ch, false};
    if (prev < 0)
        t->v[at].child = n;
    else
        t->v[prev].sibling = n;
    return n;
}

// The rule body of a JSON string that is none of names[n] (walked without recursion: a name may
// be as long as the document).
static char *not_strings(js_conv *c, const char *const *names, size_t n) {
    const char *ch_rule = js_add_builtin(c, "char", "char");
    if (!ch_rule) return NULL;
    trie t = {0};
    size_t bytes = 1;
    for (size_t i = 0; i < n; i++) bytes += strlen(names[i]);
    t.v = malloc(bytes * sizeof *t.v);
    int32_t *stack = malloc(2 * bytes * sizeof *stack);
    if (!t.v || !stack) {
        free(t.v), free(stack);
        return js_fail(c, MINT_E_NOMEM, "json schema: out of memory");
    }
    t.cap = bytes;
    t.v[t.n++] = (trie_node){-1, -1, 0, false};
    for (size_t i = 0; i < n && c->st == MINT_OK; i++) {
        int32_t at = 0;
        for (const char *p = names[i]; *p && at >= 0; p++) at = trie_child(c, &t, at, *p);
        if (at >= 0) t.v[at].end = true;
    }
    js_buf b = {0};
    js_buf_adds(c, &b, "[\"] ( ");
    // stack: pairs (node, next child to write); a child is written as "[c]", then its own
    // alternatives in parentheses, or " char+" when a name ends there.
    size_t top = 0;
    stack[0] = 0, stack[1] = t.v[0].child;
    top = 1;
    while (top > 0 && c->st == MINT_OK) {
        int32_t node = stack[2 * (top - 1)], next = stack[2 * (top - 1) + 1];
        if (next >= 0) {
            const trie_node *k = &t.v[next];
            if (next != t.v[node].child) js_buf_adds(c, &b, " | ");
            char cls[3] = {'[', k->ch, ']'};
            js_buf_add(c, &b, cls, 3);
            stack[2 * (top - 1) + 1] = k->sibling;
            if (k->child >= 0) {
                js_buf_adds(c, &b, " (");
                stack[2 * top] = next, stack[2 * top + 1] = k->child;
                top++;
            } else if (k->end) {
                js_buf_addc(c, &b, ' ');
                js_buf_adds(c, &b, ch_rule);
                js_buf_addc(c, &b, '+');
            }
            continue;
        }
        if (t.v[node].child >= 0) { // any other character, then anything
            js_buf_adds(c, &b, " | [^\"");
            for (int32_t k = t.v[node].child; k >= 0; k = t.v[k].sibling)
                js_buf_addc(c, &b, t.v[k].ch);
            js_buf_adds(c, &b, "] ");
            js_buf_adds(c, &b, ch_rule);
            js_buf_addc(c, &b, '*');
        }
        if (--top > 0) js_buf_addc(c, &b, ')');
    }
    js_buf_adds(c, &b, t.v[0].end ? " ) [\"]" : " )? [\"]");
    free(t.v);
    free(stack);
    return js_buf_done(c, &b);
}

// ---------------------------------------------------------------------------------------------
// The object rule

// Records the kv rule of a name (the last one given to a name wins, as in llama.cpp's map).
static bool kv_set(js_conv *c, js_object *o, const char *key, const char *rule) {
    if (!rule) return false;
    int32_t k = mint_strmap_get(&o->kv_idx, key, strlen(key));
    if (k >= 0) {
        o->kv[k] = rule;
        return true;
    }
    if (o->n_kv == o->cap_kv) {
        size_t cap = o->cap_kv ? 2 * o->cap_kv : 16;
        const char **v = realloc(o->kv, cap * sizeof *v);
        if (!v) return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
        o->kv = v;
        o->cap_kv = cap;
    }
    o->kv[o->n_kv] = rule;
    if (mint_strmap_put(&o->kv_idx, key, strlen(key), (int32_t)o->n_kv, NULL) != MINT_OK)
        return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
    o->n_kv++;
    return true;
}

static const char *kv_get(const js_object *o, const char *key) {
    return o->kv[mint_strmap_get(&o->kv_idx, key, strlen(key))];
}

// Appends a name to the required (req) or optional (opt) list.
static bool list_name(js_conv *c, js_object *o, const char *key, bool required) {
    if (!o->req || !o->opt) {
        o->req = malloc((o->n + 1) * sizeof *o->req);
        o->opt = malloc((o->n + 2) * sizeof *o->opt);
        if (!o->req || !o->opt)
            return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
    }
    if (required)
        o->req[o->n_req++] = key;
    else
        o->opt[o->n_opt++] = key;
    return true;
}

bool js_object_kv(js_conv *c, js_object *o, size_t i, const char *rule, const char *name) {
    const char *key = o->v[i].key;
    char *lit = rule ? js_dump_string(c, key, strlen(key)) : NULL;
    lit = lit ? js_literal(c, lit, strlen(lit)) : NULL;
    char *kv_name = lit ? js_stem(c, name, key) : NULL;
    kv_name = kv_name ? js_cat(c, kv_name, "-kv", NULL) : NULL;
    char *body = kv_name ? js_cat(c, lit, " space \":\" space ", rule, NULL) : NULL;
    return body && kv_set(c, o, key, js_add_rule(c, kv_name, body)) &&
           list_name(c, o, key, mint_strmap_get(&o->required, key, strlen(key)) >= 0);
}

bool js_object_other_keys(js_conv *c, js_object *o, const char *value_rule, const char *name) {
    char *sub = value_rule ? js_stem(c, name, "additional") : NULL;
    if (!sub) return false;
    const char *key_rule;
    if (o->n == 0) {
        key_rule = js_add_builtin(c, "string", "string");
    } else {
        const char **names = malloc(o->n * sizeof *names);
        if (!names) return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
        for (size_t i = 0; i < o->n; i++) names[i] = o->v[i].key;
        key_rule = js_add_rule(c, js_cat(c, sub, "-k", NULL), not_strings(c, names, o->n));
        free(names);
    }
    char *body = key_rule ? js_cat(c, key_rule, " \":\" space ", value_rule, NULL) : NULL;
    return body && kv_set(c, o, "*", js_add_rule(c, js_cat(c, sub, "-kv", NULL), body)) &&
           list_name(c, o, "*", false);
}

char *js_object_body(js_conv *c, js_object *o, const char *name) {
    size_t n_req = o->n_req, n_opt = o->n_opt;
    if (c->st != MINT_OK) return NULL;
    if (n_req == 0 && n_opt == 0) return js_strndup(c, "\"{\" space \"}\"", 13);
    const char **rest = malloc((n_opt + 1) * sizeof *rest);
    if (!rest) return js_fail(c, MINT_E_NOMEM, "json schema: out of memory");
    js_buf b = {0};
    js_buf_adds(c, &b, "\"{\" space ");
    for (size_t i = 0; i < n_req; i++) {
        if (i) js_buf_adds(c, &b, " \",\" space ");
        js_buf_adds(c, &b, kv_get(o, o->req[i]));
    }
    if (n_opt) {
        js_buf_adds(c, &b, " (");
        if (n_req) js_buf_adds(c, &b, " \",\" space ( ");
        // rest[j]: the optional properties from j on, each after a comma and each optional,
        // named after the one before j. llama.cpp makes them innermost first.
        for (size_t j = n_opt - 1; j >= 1 && c->st == MINT_OK; j--) {
            const char *k = o->opt[j], *more = j + 1 < n_opt ? rest[j + 1] : "";
            char *body = js_cat(c, "( \",\" space ", kv_get(o, k), " )",
                                strcmp(k, "*") == 0 ? "*" : "?", more[0] ? " " : "", more, NULL);
            char *rn = js_stem(c, name, o->opt[j - 1]);
            rest[j] = rn && body ? js_add_rule(c, js_cat(c, rn, "-rest", NULL), body) : NULL;
            if (!rest[j]) break;
        }
        for (size_t i = 0; i < n_opt && c->st == MINT_OK; i++) {
            const char *k = o->opt[i], *kr = kv_get(o, k);
            if (i) js_buf_adds(c, &b, " | ");
            js_buf_adds(c, &b, kr);
            if (strcmp(k, "*") == 0) {
                js_buf_adds(c, &b, " ( \",\" space ");
                js_buf_adds(c, &b, kr);
                js_buf_adds(c, &b, " )*");
            }
            if (i + 1 < n_opt) {
                js_buf_addc(c, &b, ' ');
                js_buf_adds(c, &b, rest[i + 1]);
            }
        }
        if (n_req) js_buf_adds(c, &b, " )");
        js_buf_adds(c, &b, " )?");
    }
    js_buf_adds(c, &b, " space \"}\"");
    free(rest);
    if (c->st != MINT_OK) return js_buf_drop(c, &b), NULL;
    return js_buf_done(c, &b);
}

// ---------------------------------------------------------------------------------------------
// allOf

enum { MAX_REF_CHAIN = 64 }; // a part that is a $ref to a $ref to ...

static bool add_enum_value(js_conv *c, js_object *o, json_object *v) {
    char *d = js_dump(c, v);
    char *lit = d ? js_literal(c, d, strlen(d)) : NULL;
    if (!lit) return false;
    int32_t k = mint_strmap_get(&o->enum_idx, lit, strlen(lit));
    if (k >= 0) {
        o->enums[k].count++;
        return true;
    }
    if (o->n_enums == o->cap_enums) {
        size_t cap = o->cap_enums ? 2 * o->cap_enums : 16;
        js_enum_count *e = realloc(o->enums, cap * sizeof *e);
        if (!e) return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
        o->enums = e;
        o->cap_enums = cap;
    }
    o->enums[o->n_enums] = (js_enum_count){lit, 1};
    if (mint_strmap_put(&o->enum_idx, lit, strlen(lit), (int32_t)o->n_enums, NULL) != MINT_OK)
        return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
    o->n_enums++;
    return true;
}

// One part: a $ref is followed; then its properties, or else its enum's values, count.
static bool add_part(js_conv *c, js_object *o, json_object *part, bool required, int chain) {
    if (json_object_is_type(part, json_type_boolean) && json_object_get_boolean(part)) return true;
    if (!json_object_is_type(part, json_type_object))
        return js_fail_at(c, NULL, "a part of allOf must be a schema, not %s", js_show(c, part)),
               false;
    json_object *v = NULL;
    if (js_get(part, "$ref", &v)) {
        if (!js_is_str(v))
            return js_fail_at(c, "$ref", "must be a string, not %s", js_show(c, v)), false;
        if (chain >= MAX_REF_CHAIN)
            return js_fail(c, MINT_E_LIMIT, "json schema: #%s: allOf through more than %d $refs",
                           c->path.p ? c->path.p : "", MAX_REF_CHAIN),
                   false;
        json_object *target = js_ref_target(c, json_object_get_string(v));
        if (!target) return true; // an unresolved ref is an empty part, as in llama.cpp
        char *saved = js_path_save(c);
        if (!saved) return false;
        js_path_set(c, json_object_get_string(v) + 1);
        bool ok = add_part(c, o, target, required, chain + 1);
        js_path_set(c, saved);
        return ok;
    }
    if (js_get(part, "properties", &v)) return add_props(c, o, part, required);
    if (js_get(part, "enum", &v)) {
        if (!json_object_is_type(v, json_type_array))
            return js_fail_at(c, "enum", "must be an array, not %s", js_show(c, v)), false;
        for (size_t i = 0; i < json_object_array_length(v); i++)
            if (!add_enum_value(c, o, json_object_array_get_idx(v, i))) return false;
    }
    return true;
}

static int cmp_lit(const void *x, const void *y) {
    const js_enum_count *a = x, *b = y;
    size_t na = strlen(a->lit), nb = strlen(b->lit);
    int r = memcmp(a->lit, b->lit, na < nb ? na : nb);
    return r ? r : (na > nb) - (na < nb);
}

bool js_all_of_gather(js_conv *c, js_object *o, json_object *s) {
    json_object *parts = NULL;
    js_get(s, "allOf", &parts);
    if (!json_object_is_type(parts, json_type_array))
        return js_fail_at(c, "allOf", "must be an array, not %s", js_show(c, parts)), false;
    size_t n = json_object_array_length(parts), top = js_path_push(c, "allOf");
    for (size_t i = 0; i < n && c->st == MINT_OK; i++) {
        json_object *t = json_object_array_get_idx(parts, i), *any = NULL;
        size_t mark = js_path_push_index(c, i);
        if (json_object_is_type(t, json_type_object) && js_get(t, "anyOf", &any)) {
            if (!json_object_is_type(any, json_type_array)) {
                js_fail_at(c, "anyOf", "must be an array, not %s", js_show(c, any));
                break;
            }
            size_t m2 = js_path_push(c, "anyOf");
            for (size_t k = 0; k < json_object_array_length(any); k++) {
                size_t m3 = js_path_push_index(c, k);
                bool ok = add_part(c, o, json_object_array_get_idx(any, k), false, 0);
                js_path_pop(c, m3);
                if (!ok) break;
            }
            js_path_pop(c, m2);
        } else {
            add_part(c, o, t, true, 0);
        }
        js_path_pop(c, mark);
    }
    js_path_pop(c, top);
    if (c->st != MINT_OK) return false;
    if (o->n_enums) { // the values every part listed (one listed twice by a part counts twice)
        qsort(o->enums, o->n_enums, sizeof *o->enums, cmp_lit);
        js_buf b = {0};
        size_t k = 0;
        for (size_t i = 0; i < o->n_enums; i++) {
            if (o->enums[i].count != n) continue;
            js_buf_adds(c, &b, k++ ? " | " : "(");
            js_buf_adds(c, &b, o->enums[i].lit);
        }
        if (k) {
            js_buf_addc(c, &b, ')');
            o->enum_body = js_buf_done(c, &b);
            return o->enum_body != NULL;
        }
        js_buf_drop(c, &b);
    }
    return true;
}
