// json_schema_object.c - objects: "properties" / "required" / "additionalProperties", and
// "allOf" merged into one object (or into the values its parts' "enum"s share), laid out as
// llama.cpp's converter builds an object's rule: required properties in order, then the optional
// ones as a chain where each may be left out, then any other key (when additional properties are
// allowed) through a rule that matches every string but the declared names.
#include "runtime/text/json_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A property to lay out: its name, its schema, and where it was written (for messages).
typedef struct js_prop {
    const char *key;     // the property's name (owned by the document)
    json_object *schema; // its schema (owned by the document)
    const char *at;      // JSON pointer of the schema, in the arena
} js_prop;

// A list of properties and the set of required names.
typedef struct props {
    js_prop *v;           // [n] in the order met
    size_t n;             // count
    size_t cap;           // allocated
    mint_strmap required; // names that must be present (keys owned by the document)
} props;

static bool add_prop(js_conv *c, props *p, const char *key, json_object *schema, bool required) {
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        js_prop *v = realloc(p->v, cap * sizeof *v);
        if (!v) return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
        p->v = v;
        p->cap = cap;
    }
    size_t mark = js_path_push(c, key);
    const char *at = js_path_save(c);
    js_path_pop(c, mark);
    if (!at) return false;
    p->v[p->n++] = (js_prop){key, schema, at};
    if (required && mint_strmap_put(&p->required, key, strlen(key), 0, NULL) == MINT_E_NOMEM)
        return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
    return true;
}

// The properties of schema s's "properties" (an object), all required when `required`.
static bool add_props(js_conv *c, props *p, json_object *s, bool required) {
    json_object *v = NULL;
    js_get(s, "properties", &v);
    if (!json_object_is_type(v, json_type_object))
        return js_fail_at(c, "properties", "must be an object, not %s", js_show(c, v)), false;
    size_t mark = js_path_push(c, "properties");
    bool ok = true;
    json_object_object_foreach(v, key, schema) {
        if (!(ok = add_prop(c, p, key, schema, required))) break;
    }
    js_path_pop(c, mark);
    return ok;
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

// name-or-empty + "-" + s, the stem of a sub-rule ("" + s at the root).
static char *stem(js_conv *c, const char *name, const char *s) {
    return js_cat(c, name, name[0] ? "-" : "", s, NULL);
}

// Visits a schema written at pointer `at`.
static const char *visit_at(js_conv *c, json_object *schema, const char *name, const char *at) {
    char *saved = js_path_save(c);
    if (!saved || !name) return NULL;
    js_path_set(c, at);
    const char *r = js_visit(c, schema, name);
    js_path_set(c, saved);
    return r;
}

// Looks a name up in the key -> kv-rule table (the last rule given to a name wins).
typedef struct kv_table {
    mint_strmap idx;   // name -> index in rule
    const char **rule; // [n] kv rule names
    size_t n;          // count
} kv_table;

static bool kv_set(js_conv *c, kv_table *t, const char *key, const char *rule) {
    if (!rule) return false;
    int32_t k = mint_strmap_get(&t->idx, key, strlen(key));
    if (k >= 0) {
        t->rule[k] = rule;
        return true;
    }
    t->rule[t->n] = rule;
    if (mint_strmap_put(&t->idx, key, strlen(key), (int32_t)t->n, NULL) != MINT_OK)
        return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
    t->n++;
    return true;
}

static const char *kv_get(const kv_table *t, const char *key) {
    return t->rule[mint_strmap_get(&t->idx, key, strlen(key))];
}

// The body of the object rule (additional: NULL, false, true or a schema for other keys).
static char *object_rule(js_conv *c, const props *p, const char *name, json_object *additional) {
    size_t n = p->n;
    kv_table kv = {0};
    const char **req = malloc((n + 1) * sizeof *req), **opt = malloc((n + 1) * sizeof *opt);
    const char **names = malloc((n + 1) * sizeof *names);
    const char **rest = malloc((n + 1) * sizeof *rest);
    kv.rule = malloc((n + 1) * sizeof *kv.rule);
    char *rule = NULL;
    size_t n_req = 0, n_opt = 0;
    if (!req || !opt || !names || !rest || !kv.rule || mint_strmap_init(&kv.idx, n + 1)) {
        js_fail(c, MINT_E_NOMEM, "json schema: out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        const char *key = p->v[i].key;
        const char *prop_rule = visit_at(c, p->v[i].schema, stem(c, name, key), p->v[i].at);
        char *lit = js_dump_string(c, key, strlen(key));
        lit = lit ? js_literal(c, lit, strlen(lit)) : NULL;
        char *kv_name = stem(c, name, key);
        kv_name = kv_name ? js_cat(c, kv_name, "-kv", NULL) : NULL;
        char *body =
            lit && prop_rule ? js_cat(c, lit, " space \":\" space ", prop_rule, NULL) : NULL;
        if (!kv_name || !body || !kv_set(c, &kv, key, js_add_rule(c, kv_name, body))) goto out;
        if (mint_strmap_get(&p->required, key, strlen(key)) >= 0)
            req[n_req++] = key;
        else
            opt[n_opt++] = key;
        names[i] = key;
    }
    bool any =
        json_object_is_type(additional, json_type_object) ||
        (json_object_is_type(additional, json_type_boolean) && json_object_get_boolean(additional));
    if (any) {
        char *sub = stem(c, name, "additional");
        const char *value;
        if (json_object_is_type(additional, json_type_object)) {
            size_t mark = js_path_push(c, "additionalProperties");
            value = js_visit(c, additional, sub ? js_cat(c, sub, "-value", NULL) : NULL);
            js_path_pop(c, mark);
        } else {
            value = js_add_builtin(c, "value", "value");
        }
        const char *key_rule;
        if (n == 0)
            key_rule = js_add_builtin(c, "string", "string");
        else
            key_rule =
                sub ? js_add_rule(c, js_cat(c, sub, "-k", NULL), not_strings(c, names, n)) : NULL;
        char *body = key_rule && value ? js_cat(c, key_rule, " \":\" space ", value, NULL) : NULL;
        if (!sub || !body ||
            !kv_set(c, &kv, "*", js_add_rule(c, js_cat(c, sub, "-kv", NULL), body)))
            goto out;
        opt[n_opt++] = "*";
    }
    if (n_req == 0 && n_opt == 0) {
        rule = js_strndup(c, "\"{\" space \"}\"", 13);
        goto out;
    }
    js_buf b = {0};
    js_buf_adds(c, &b, "\"{\" space ");
    for (size_t i = 0; i < n_req; i++) {
        if (i) js_buf_adds(c, &b, " \",\" space ");
        js_buf_adds(c, &b, kv_get(&kv, req[i]));
    }
    if (n_opt) {
        js_buf_adds(c, &b, " (");
        if (n_req) js_buf_adds(c, &b, " \",\" space ( ");
        // rest[j]: the optional properties from j on, each after a comma and each optional,
        // named after the one before j. llama.cpp makes them innermost first.
        for (size_t j = n_opt - 1; j >= 1 && c->st == MINT_OK; j--) {
            const char *k = opt[j], *more = j + 1 < n_opt ? rest[j + 1] : "";
            char *body = js_cat(c, "( \",\" space ", kv_get(&kv, k), " )",
                                strcmp(k, "*") == 0 ? "*" : "?", more[0] ? " " : "", more, NULL);
            char *rn = stem(c, name, opt[j - 1]);
            rest[j] = rn && body ? js_add_rule(c, js_cat(c, rn, "-rest", NULL), body) : NULL;
            if (!rest[j]) break;
        }
        for (size_t i = 0; i < n_opt && c->st == MINT_OK; i++) {
            const char *k = opt[i], *kr = kv_get(&kv, k);
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
    rule = c->st == MINT_OK ? js_buf_done(c, &b) : (js_buf_drop(c, &b), NULL);
out:
    free(req), free(opt), free(names), free(rest), free(kv.rule);
    mint_strmap_free(&kv.idx);
    return rule;
}

const char *js_object_schema(js_conv *c, json_object *s, const char *rule_name, const char *name) {
    props p = {0};
    const char *r = NULL;
    if (mint_strmap_init(&p.required, 16) != MINT_OK)
        return js_fail(c, MINT_E_NOMEM, "json schema: out of memory");
    json_object *v = NULL, *additional = NULL;
    if (js_get(s, "required", &v)) {
        if (!json_object_is_type(v, json_type_array)) {
            js_fail_at(c, "required", "must be an array of names, not %s", js_show(c, v));
            goto out;
        }
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *k = json_object_array_get_idx(v, i);
            if (!js_is_str(k)) {
                js_fail_at(c, "required", "must be an array of names, not %s", js_show(c, v));
                goto out;
            }
            if (mint_strmap_put(&p.required, json_object_get_string(k),
                                (size_t)json_object_get_string_len(k), 0, NULL) == MINT_E_NOMEM) {
                js_fail(c, MINT_E_NOMEM, "json schema: out of memory");
                goto out;
            }
        }
    }
    if (js_get(s, "properties", &v) && !add_props(c, &p, s, false)) goto out;
    if (js_get(s, "additionalProperties", &additional) &&
        !json_object_is_type(additional, json_type_object) &&
        !json_object_is_type(additional, json_type_boolean)) {
        js_fail_at(c, "additionalProperties", "must be a schema or a boolean, not %s",
                   js_show(c, additional));
        goto out;
    }
    r = js_add_rule(c, rule_name, object_rule(c, &p, name, additional));
out:
    free(p.v);
    mint_strmap_free(&p.required);
    return r;
}

// ---------------------------------------------------------------------------------------------
// allOf

enum { MAX_REF_CHAIN = 64 }; // a part that is a $ref to a $ref to ...

// An "enum" value's literal and how many parts listed it.
typedef struct enum_count {
    char *lit;    // the value's GBNF literal (in the arena)
    size_t count; // parts (and repeats within one) that listed it
} enum_count;

typedef struct all_of {
    props p;           // properties of the parts
    enum_count *e;     // [n_e] values of the parts' enums
    size_t n_e;        // count
    size_t cap_e;      // allocated
    mint_strmap e_idx; // literal -> index in e
} all_of;

static bool add_enum_value(js_conv *c, all_of *a, json_object *v) {
    char *d = js_dump(c, v);
    char *lit = d ? js_literal(c, d, strlen(d)) : NULL;
    if (!lit) return false;
    int32_t k = mint_strmap_get(&a->e_idx, lit, strlen(lit));
    if (k >= 0) {
        a->e[k].count++;
        return true;
    }
    if (a->n_e == a->cap_e) {
        size_t cap = a->cap_e ? 2 * a->cap_e : 16;
        enum_count *e = realloc(a->e, cap * sizeof *e);
        if (!e) return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
        a->e = e;
        a->cap_e = cap;
    }
    a->e[a->n_e] = (enum_count){lit, 1};
    if (mint_strmap_put(&a->e_idx, lit, strlen(lit), (int32_t)a->n_e, NULL) != MINT_OK)
        return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
    a->n_e++;
    return true;
}

// One part: a $ref is followed; then its properties, or else its enum's values, count.
static bool add_part(js_conv *c, all_of *a, json_object *part, bool required, int chain) {
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
        bool ok = add_part(c, a, target, required, chain + 1);
        js_path_set(c, saved);
        return ok;
    }
    if (js_get(part, "properties", &v)) return add_props(c, &a->p, part, required);
    if (js_get(part, "enum", &v)) {
        if (!json_object_is_type(v, json_type_array))
            return js_fail_at(c, "enum", "must be an array, not %s", js_show(c, v)), false;
        for (size_t i = 0; i < json_object_array_length(v); i++)
            if (!add_enum_value(c, a, json_object_array_get_idx(v, i))) return false;
    }
    return true;
}

static int cmp_lit(const void *x, const void *y) {
    const enum_count *a = x, *b = y;
    size_t na = strlen(a->lit), nb = strlen(b->lit);
    int r = memcmp(a->lit, b->lit, na < nb ? na : nb);
    return r ? r : (na > nb) - (na < nb);
}

const char *js_all_of(js_conv *c, json_object *s, const char *rule_name, const char *name) {
    all_of a = {0};
    const char *r = NULL;
    json_object *parts = NULL;
    js_get(s, "allOf", &parts);
    if (!json_object_is_type(parts, json_type_array))
        return js_fail_at(c, "allOf", "must be an array, not %s", js_show(c, parts));
    size_t n = json_object_array_length(parts), top = js_path_push(c, "allOf");
    if (mint_strmap_init(&a.p.required, 16) != MINT_OK || mint_strmap_init(&a.e_idx, 16) != MINT_OK)
        js_fail(c, MINT_E_NOMEM, "json schema: out of memory");
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
                bool ok = add_part(c, &a, json_object_array_get_idx(any, k), false, 0);
                js_path_pop(c, m3);
                if (!ok) break;
            }
            js_path_pop(c, m2);
        } else {
            add_part(c, &a, t, true, 0);
        }
        js_path_pop(c, mark);
    }
    js_path_pop(c, top);
    if (c->st != MINT_OK) goto out;
    if (a.n_e) { // the values every part listed (a value listed twice by one part counts twice)
        qsort(a.e, a.n_e, sizeof *a.e, cmp_lit);
        js_buf b = {0};
        size_t k = 0;
        for (size_t i = 0; i < a.n_e; i++) {
            if (a.e[i].count != n) continue;
            js_buf_adds(c, &b, k++ ? " | " : "(");
            js_buf_adds(c, &b, a.e[i].lit);
        }
        if (k) {
            js_buf_addc(c, &b, ')');
            r = js_add_rule(c, rule_name, js_buf_done(c, &b));
            goto out;
        }
        js_buf_drop(c, &b);
    }
    r = js_add_rule(c, rule_name, object_rule(c, &a.p, name, NULL));
out:
    free(a.p.v);
    free(a.e);
    mint_strmap_free(&a.p.required);
    mint_strmap_free(&a.e_idx);
    return r;
}
