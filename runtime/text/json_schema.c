// json_schema.c - mint_json_schema_to_grammar: a JSON Schema to the GBNF grammar of the JSON
// documents it accepts, as llama.cpp's json_schema_to_grammar (what llama-server runs for
// response_format and json_schema) writes it, rule for rule.
//
// The walk is llama.cpp's visit: the first of these a schema has decides its rule: $ref, oneOf /
// anyOf, a list of types, const, enum, an object's properties (json_schema_object.c), allOf,
// items / prefixItems, pattern (json_schema_pattern.c), the uuid / date / time / date-time
// formats, minLength / maxLength, an integer's bounds (json_schema_ranges.c), any object ({} and
// type object), any value (no type), a primitive type. Where llama.cpp reads a malformed keyword
// loosely (a count that is a string or a fraction, a "properties" that is an array), mint refuses
// it in one line naming the keyword's JSON pointer; tests/reference/README.md lists every
// difference.
#include "runtime/text/json_schema.h"

#include "formats/json_doc.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The name of the rule for `schema` (an object, or true), visited as llama.cpp's visit does with
// `name` ("" for the root) as the stem of the rules it adds.
static const char *js_visit(js_conv *c, json_object *schema, const char *name);

// The whitespace rule every grammar starts with (llama.cpp's SPACE_RULE).
static const char SPACE_RULE[] = "| \" \" | \"\\n\"{1,2} [ \\t]{0,20}";

// ---------------------------------------------------------------------------------------------
// Before the walk: numbers the server's JSON library would read differently, and every $ref

// strtoull's reading of a JSON pointer's array index as std::stoull makes it (blanks and a sign
// first, anything after the digits ignored); false when there is no number or it overflows.
static bool read_index(const char *s, size_t *out) {
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno == ERANGE) return false;
    *out = v > SIZE_MAX ? SIZE_MAX : (size_t)v;
    return true;
}

// Resolves one local reference ("#/a/b/0"), token by token without ~0 / ~1 decoding, as
// llama.cpp does, and records it.
static bool resolve(js_conv *c, json_object *root, const char *ref) {
    if (mint_strmap_get(&c->ref_idx, ref, strlen(ref)) >= 0) return true;
    if (strncmp(ref, "https://", 8) == 0 || strncmp(ref, "http://", 7) == 0)
        return js_fail_at(c, "$ref", "remote reference %s: only local ones (#/...) are read", ref),
               false;
    if (strncmp(ref, "#/", 2) != 0)
        return js_fail_at(c, "$ref", "unsupported reference %s: only #/... ones are read", ref),
               false;
    json_object *target = root;
    const char *tok = ref + 2;
    for (;;) {
        const char *slash = strchr(tok, '/');
        size_t n = slash ? (size_t)(slash - tok) : strlen(tok);
        char *sel = js_strndup(c, tok, n);
        if (!sel) return false;
        json_object *next = NULL;
        size_t idx;
        if (json_object_is_type(target, json_type_object) &&
            json_object_object_get_ex(target, sel, &next)) {
            target = next;
        } else if (json_object_is_type(target, json_type_array) && read_index(sel, &idx) &&
                   idx < json_object_array_length(target)) {
            target = json_object_array_get_idx(target, idx);
        } else {
            return js_fail_at(c, "$ref", "cannot resolve %s: no \"%s\" in %s", ref, sel,
                              js_show(c, target)),
                   false;
        }
        if (!slash) break;
        tok = slash + 1;
    }
    if (c->n_refs % 64 == 0) {
        js_ref *r = realloc(c->refs, (c->n_refs + 64) * sizeof *r);
        if (!r) return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
        c->refs = r;
    }
    c->refs[c->n_refs] = (js_ref){ref, target};
    if (mint_strmap_put(&c->ref_idx, ref, strlen(ref), (int32_t)c->n_refs, NULL) != MINT_OK)
        return js_fail(c, MINT_E_NOMEM, "json schema: out of memory"), false;
    c->n_refs++;
    return true;
}

// Walks the whole document: refuses numbers json-c saturated (beyond int64 / uint64) or read as
// infinite, and resolves every "$ref" member of every object. llama.cpp looks no further into an
// object once it has a $ref, so a $ref inside one that is itself a $ref (a root "$ref" next to
// "$defs") stays unresolved there and becomes any object; mint resolves it.
static bool scan(js_conv *c, json_object *root, json_object *v) {
    switch (json_object_get_type(v)) {
    case json_type_int: {
        int64_t i = json_object_get_int64(v);
        if (i == INT64_MIN || (i == INT64_MAX && json_object_get_uint64(v) == UINT64_MAX))
            return js_fail_at(c, NULL, "integer %s is out of range (-2^63, 2^64-1)",
                              json_object_to_json_string(v)),
                   false;
        return true;
    }
    case json_type_double:
        if (!isfinite(json_object_get_double(v)))
            return js_fail_at(c, NULL, "number %s overflows a double", js_show(c, v)), false;
        return true;
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            size_t mark = js_path_push_index(c, i);
            bool ok = scan(c, root, json_object_array_get_idx(v, i));
            js_path_pop(c, mark);
            if (!ok) return false;
        }
        return true;
    case json_type_object: {
        // Any object's "$ref" member, as in llama.cpp (a property named "$ref" too).
        json_object *ref = NULL;
        if (js_get(v, "$ref", &ref)) {
            if (!js_is_str(ref))
                return js_fail_at(c, "$ref", "must be a string, not %s", js_show(c, ref)), false;
            if (!resolve(c, root, json_object_get_string(ref))) return false;
        }
        json_object_object_foreach(v, key, val) {
            size_t mark = js_path_push(c, key);
            bool ok = scan(c, root, val);
            js_path_pop(c, mark);
            if (!ok) return false;
        }
        return true;
    }
    default:
        return true;
    }
}

// The rule a $ref stands for: "ref" + its pointer made a name ("#/$defs/a" -> ref-defs-a),
// visited unless a rule of that name exists or the ref is being visited (recursion: the name
// then stands for the rule its first visit is making).
static const char *ref_rule(js_conv *c, const char *ref) {
    const char *hash = strchr(ref, '#');
    char *name = js_cat(c, "ref", hash ? hash + 1 : ref, NULL);
    name = name ? js_safe_name(c, name) : NULL;
    if (!name) return NULL;
    if (js_has_rule(c, name)) return name;
    for (size_t i = 0; i < c->n_resolving; i++)
        if (strcmp(c->resolving[i], ref) == 0) return name;
    if (c->n_resolving == c->cap_resolving) {
        size_t cap = c->cap_resolving ? 2 * c->cap_resolving : 16;
        const char **r = realloc(c->resolving, cap * sizeof *r);
        if (!r) return js_fail(c, MINT_E_NOMEM, "json schema: out of memory");
        c->resolving = r;
        c->cap_resolving = cap;
    }
    c->resolving[c->n_resolving++] = ref;
    char *saved = js_path_save(c);
    js_path_set(c, hash ? hash + 1 : "");
    const char *r = saved ? js_visit(c, js_ref_target(c, ref), name) : NULL;
    js_path_set(c, saved);
    c->n_resolving--;
    return r;
}

// A count keyword (minItems, maxItems, minLength, maxLength): an integer in 0..2^31-1 (llama.cpp
// reads them as an int), or dflt when absent.
static bool get_count(js_conv *c, json_object *s, const char *key, int64_t dflt, int64_t *out) {
    json_object *v;
    *out = dflt;
    if (!js_get(s, key, &v)) return true;
    if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
        json_object_get_int64(v) > JS_MAX_COUNT)
        return js_fail_at(c, key, "%s is not a count (an integer in 0..%d)", js_show(c, v),
                          JS_MAX_COUNT),
               false;
    *out = json_object_get_int64(v);
    return true;
}

// An integer bound: an integer, or a number with an integral value, within int64.
static bool get_bound(js_conv *c, json_object *s, const char *key, int64_t *out) {
    json_object *v;
    js_get(s, key, &v);
    if (json_object_is_type(v, json_type_int)) {
        int64_t i = json_object_get_int64(v);
        if (i != INT64_MAX || json_object_get_uint64(v) == (uint64_t)INT64_MAX) {
            *out = i;
            return true;
        }
    } else if (json_object_is_type(v, json_type_double)) {
        double d = json_object_get_double(v);
        if (d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
            *out = (int64_t)d;
            return true;
        }
    }
    return js_fail_at(c, key, "%s is not an integer bound (within -2^63..2^63-1)", js_show(c, v)),
           false;
}

// An integer with bounds: minimum (else exclusiveMinimum + 1), maximum (else exclusiveMaximum -
// 1); -2^63 and 2^63-1 mean no bound, as in llama.cpp.
static const char *integer_rule(js_conv *c, json_object *s, const char *rule_name) {
    json_object *v;
    int64_t min = INT64_MIN, max = INT64_MAX, b;
    if (js_get(s, "minimum", &v)) {
        if (!get_bound(c, s, "minimum", &min)) return NULL;
    } else if (js_get(s, "exclusiveMinimum", &v)) {
        if (!get_bound(c, s, "exclusiveMinimum", &b)) return NULL;
        if (b == INT64_MAX) return js_fail_at(c, "exclusiveMinimum", "no integer is above 2^63-1");
        min = b + 1;
    }
    if (js_get(s, "maximum", &v)) {
        if (!get_bound(c, s, "maximum", &max)) return NULL;
    } else if (js_get(s, "exclusiveMaximum", &v)) {
        if (!get_bound(c, s, "exclusiveMaximum", &b)) return NULL;
        if (b == INT64_MIN) return js_fail_at(c, "exclusiveMaximum", "no integer is below -2^63");
        max = b - 1;
    }
    if (max == INT64_MIN) return js_fail_at(c, "maximum", "-2^63 is not a supported maximum");
    if (min != INT64_MIN && max != INT64_MAX && min > max)
        return js_fail_at(c, js_get(s, "minimum", &v) ? "minimum" : "exclusiveMinimum",
                          "no integer lies between %" PRId64 " and %" PRId64, min, max);
    return js_add_rule(c, rule_name, js_int_range(c, min, max));
}

// Visits a schema written at pointer `at` (a property's, gathered before).
static const char *visit_at(js_conv *c, json_object *schema, const char *name, const char *at) {
    char *saved = js_path_save(c);
    if (!saved || !name) return NULL;
    js_path_set(c, at);
    const char *r = js_visit(c, schema, name);
    js_path_set(c, saved);
    return r;
}

// The rule of an object whose properties o holds: each property's value visited then its kv rule
// added, then the other keys' rule (additional: true or a schema; NULL or false: none).
static const char *object_rule(js_conv *c, js_object *o, const char *rule_name, const char *name,
                               json_object *additional) {
    for (size_t i = 0; i < o->n; i++) {
        const char *r = visit_at(c, o->v[i].schema, js_stem(c, name, o->v[i].key), o->v[i].at);
        if (!js_object_kv(c, o, i, r, name)) return NULL;
    }
    const char *value = NULL;
    if (json_object_is_type(additional, json_type_object)) {
        size_t mark = js_path_push(c, "additionalProperties");
        char *sub = js_stem(c, name, "additional");
        value = js_visit(c, additional, sub ? js_cat(c, sub, "-value", NULL) : NULL);
        js_path_pop(c, mark);
        if (!value) return NULL;
    } else if (json_object_is_type(additional, json_type_boolean) &&
               json_object_get_boolean(additional)) {
        value = js_add_builtin(c, "value", "value");
    }
    if (value && !js_object_other_keys(c, o, value, name)) return NULL;
    return js_add_rule(c, rule_name, js_object_body(c, o, name));
}

// A schema with "properties" or a restricting "additionalProperties".
static const char *object_schema(js_conv *c, json_object *s, const char *rule_name,
                                 const char *name) {
    js_object o;
    json_object *additional = NULL;
    const char *r = NULL;
    js_get(s, "additionalProperties", &additional);
    if (js_object_init(c, &o) && js_object_gather(c, &o, s))
        r = object_rule(c, &o, rule_name, name, additional);
    js_object_free(&o);
    return r;
}

// A schema with "allOf": its parts' properties as one object (no other keys), or the values all
// its parts' enums list.
static const char *all_of(js_conv *c, json_object *s, const char *rule_name, const char *name) {
    js_object o;
    const char *r = NULL;
    if (js_object_init(c, &o) && js_all_of_gather(c, &o, s))
        r = o.enum_body ? js_add_rule(c, rule_name, o.enum_body)
                        : object_rule(c, &o, rule_name, name, NULL);
    js_object_free(&o);
    return r;
}

// "[" ... "]": a tuple (items, or prefixItems, as an array) or items repeated minItems..maxItems
// times with commas.
static const char *array_rule(js_conv *c, json_object *s, const char *rule_name, const char *name) {
    json_object *items;
    const char *kw = js_get(s, "items", &items) ? "items" : "prefixItems";
    js_get(s, kw, &items);
    size_t top = js_path_push(c, kw);
    if (json_object_is_type(items, json_type_array)) {
        js_buf b = {0};
        js_buf_adds(c, &b, "\"[\" space ");
        for (size_t i = 0; i < json_object_array_length(items) && c->st == MINT_OK; i++) {
            char num[32];
            snprintf(num, sizeof num, "tuple-%zu", i);
            size_t mark = js_path_push_index(c, i);
            const char *r = js_visit(c, json_object_array_get_idx(items, i), js_stem(c, name, num));
            js_path_pop(c, mark);
            if (i) js_buf_adds(c, &b, " \",\" space ");
            if (r) js_buf_adds(c, &b, r);
        }
        js_buf_adds(c, &b, " space \"]\"");
        js_path_pop(c, top);
        if (c->st != MINT_OK) return js_buf_drop(c, &b), NULL;
        return js_add_rule(c, rule_name, js_buf_done(c, &b));
    }
    const char *item = js_visit(c, items, js_stem(c, name, "item"));
    js_path_pop(c, top);
    int64_t min, max;
    if (!item || !get_count(c, s, "minItems", 0, &min) ||
        !get_count(c, s, "maxItems", JS_MAX_COUNT, &max))
        return NULL;
    if (min > max)
        return js_fail_at(c, "minItems", "%" PRId64 " is above maxItems %" PRId64, min, max);
    char *rep = js_repetition(c, item, min, max, "\",\" space");
    return js_add_rule(c, rule_name,
                       rep ? js_cat(c, "\"[\" space ", rep, " space \"]\"", NULL) : NULL);
}

// A string of minLength..maxLength characters.
static const char *length_rule(js_conv *c, json_object *s, const char *rule_name) {
    const char *ch = js_add_builtin(c, "char", "char");
    int64_t min, max;
    if (!ch || !get_count(c, s, "minLength", 0, &min) ||
        !get_count(c, s, "maxLength", JS_MAX_COUNT, &max))
        return NULL;
    if (min > max)
        return js_fail_at(c, "minLength", "%" PRId64 " is above maxLength %" PRId64, min, max);
    char *rep = js_repetition(c, ch, min, max, "");
    return js_add_rule(c, rule_name, rep ? js_cat(c, "\"\\\"\" ", rep, " \"\\\"\"", NULL) : NULL);
}

static const char *visit_typed(js_conv *c, json_object *s, const char *name, bool override,
                               json_object *type);

// The alternatives (oneOf / anyOf, or the types of a "type" list when `types`), each visited as
// NAME-i ("alternative-i" at the root), joined by " | ".
static char *union_rule(js_conv *c, json_object *s, json_object *alts, const char *name,
                        const char *keyword, bool types) {
    if (!json_object_is_type(alts, json_type_array))
        return js_fail_at(c, keyword, "must be an array, not %s", js_show(c, alts));
    js_buf b = {0};
    for (size_t i = 0; i < json_object_array_length(alts) && c->st == MINT_OK; i++) {
        char num[48];
        snprintf(num, sizeof num, "%s%zu", name[0] ? "-" : "alternative-", i);
        char *alt_name = js_cat(c, name, num, NULL);
        json_object *alt = json_object_array_get_idx(alts, i);
        const char *r;
        if (types) {
            r = visit_typed(c, s, alt_name, true, alt);
        } else {
            size_t mark = js_path_push(c, keyword);
            js_path_push_index(c, i);
            r = js_visit(c, alt, alt_name);
            js_path_pop(c, mark);
        }
        if (i) js_buf_adds(c, &b, " | ");
        if (r) js_buf_adds(c, &b, r);
    }
    js_buf_add(c, &b, "", 0);
    if (c->st != MINT_OK) return js_buf_drop(c, &b), NULL;
    return js_buf_done(c, &b);
}

// Whether format is "uuid" or "uuid1".."uuid5".
static bool is_uuid(const char *format) {
    return strncmp(format, "uuid", 4) == 0 &&
           (format[4] == '\0' || (format[4] >= '1' && format[4] <= '5' && format[5] == '\0'));
}

// Keywords that restrict the values a schema accepts, by the kind of value they apply to: a rule
// that does not hold one the schema has gets a warning (llama.cpp's converter drops them
// silently), so that a caller can tell the grammar accepts more than the schema.
enum { K_NUMBER = 1, K_STRING = 2, K_ARRAY = 4, K_OBJECT = 8, K_ANY = 16, K_ALL = 31 };

static const struct {
    const char *key; // the keyword
    unsigned kind;   // the values it applies to
} RESTRICTING[] = {
    {"minimum", K_NUMBER},
    {"maximum", K_NUMBER},
    {"exclusiveMinimum", K_NUMBER},
    {"exclusiveMaximum", K_NUMBER},
    {"multipleOf", K_NUMBER},
    {"minLength", K_STRING},
    {"maxLength", K_STRING},
    {"pattern", K_STRING},
    {"format", K_STRING},
    {"items", K_ARRAY},
    {"prefixItems", K_ARRAY},
    {"minItems", K_ARRAY},
    {"maxItems", K_ARRAY},
    {"uniqueItems", K_ARRAY},
    {"contains", K_ARRAY},
    {"minContains", K_ARRAY},
    {"maxContains", K_ARRAY},
    {"additionalItems", K_ARRAY},
    {"unevaluatedItems", K_ARRAY},
    {"properties", K_OBJECT},
    {"required", K_OBJECT},
    {"additionalProperties", K_OBJECT},
    {"patternProperties", K_OBJECT},
    {"propertyNames", K_OBJECT},
    {"minProperties", K_OBJECT},
    {"maxProperties", K_OBJECT},
    {"dependentRequired", K_OBJECT},
    {"dependentSchemas", K_OBJECT},
    {"dependencies", K_OBJECT},
    {"unevaluatedProperties", K_OBJECT},
    {"not", K_ANY},
    {"if", K_ANY},
    {"then", K_ANY},
    {"else", K_ANY},
    {"allOf", K_ANY},
    {"anyOf", K_ANY},
    {"oneOf", K_ANY},
    {"$ref", K_ANY},
    {"enum", K_ANY},
    {"const", K_ANY},
};

// Warns about the first keyword of s of the given kinds that the rule made does not hold (those
// listed in `held`, space-separated, excepted; false and empty values restrict nothing); returns
// rule.
static const char *held_by(js_conv *c, json_object *s, unsigned kinds, const char *held,
                           const char *rule) {
    if (!rule || c->warning[0]) return rule;
    json_object_object_foreach(s, key, val) {
        unsigned kind = 0;
        for (size_t i = 0; i < sizeof RESTRICTING / sizeof RESTRICTING[0] && !kind; i++)
            if (strcmp(RESTRICTING[i].key, key) == 0) kind = RESTRICTING[i].kind;
        if (!(kind & kinds) || json_object_is_type(val, json_type_null)) continue;
        // A boolean that lets everything through: uniqueItems / not false, the others true.
        bool lax = strcmp(key, "uniqueItems") != 0 && strcmp(key, "not") != 0;
        if (json_object_is_type(val, json_type_boolean) && json_object_get_boolean(val) == lax)
            continue;
        size_t n = strlen(key);
        const char *h = held;
        bool is_held = false;
        while ((h = strstr(h, key)) != NULL && !is_held) {
            is_held = (h == held || h[-1] == ' ') && (h[n] == ' ' || h[n] == '\0');
            h += n;
        }
        if (!is_held) {
            js_warn(c, key,
                    "not held by the grammar, which accepts more than the schema (as "
                    "llama.cpp's converter does)");
            break;
        }
    }
    return rule;
}

// llama.cpp's visit of an object schema s (as if its "type" were `type` when `override`).
static const char *visit_object(js_conv *c, json_object *s, const char *name, const char *rule_name,
                                bool override, json_object *type) {
    json_object *v, *w;
    if (!override) js_get(s, "type", &type);
    const char *format = "";
    if (js_get(s, "format", &v)) {
        if (!js_is_str(v))
            return js_fail_at(c, "format", "must be a string, not %s", js_show(c, v));
        format = json_object_get_string(v);
    }
    bool untyped = type == NULL;
    bool t_object = js_str_is(type, "object"), t_string = js_str_is(type, "string");
    if (js_get(s, "$ref", &v)) {
        if (!js_is_str(v)) return js_fail_at(c, "$ref", "must be a string, not %s", js_show(c, v));
        return held_by(c, s, K_ALL, "$ref",
                       js_add_rule(c, rule_name, ref_rule(c, json_object_get_string(v))));
    }
    bool one = js_get(s, "oneOf", &v);
    if (one || js_get(s, "anyOf", &v))
        return held_by(
            c, s, K_ALL, one ? "oneOf" : "anyOf",
            js_add_rule(c, rule_name, union_rule(c, s, v, name, one ? "oneOf" : "anyOf", false)));
    if (json_object_is_type(type, json_type_array))
        return js_add_rule(c, rule_name, union_rule(c, s, type, name, "type", true));
    if (js_get(s, "const", &v)) {
        char *d = js_dump(c, v);
        return js_add_rule(c, rule_name, d ? js_literal(c, d, strlen(d)) : NULL);
    }
    if (js_get(s, "enum", &v)) {
        if (!json_object_is_type(v, json_type_array))
            return js_fail_at(c, "enum", "must be an array, not %s", js_show(c, v));
        js_buf b = {0};
        js_buf_addc(c, &b, '(');
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            char *d = js_dump(c, json_object_array_get_idx(v, i));
            char *lit = d ? js_literal(c, d, strlen(d)) : NULL;
            if (i) js_buf_adds(c, &b, " | ");
            if (lit) js_buf_adds(c, &b, lit);
        }
        js_buf_addc(c, &b, ')');
        return js_add_rule(c, rule_name, js_buf_done(c, &b));
    }
    if ((untyped || t_object) &&
        (js_get(s, "properties", &v) ||
         (js_get(s, "additionalProperties", &w) &&
          !(json_object_is_type(w, json_type_boolean) && json_object_get_boolean(w)))))
        return held_by(c, s, K_OBJECT | K_ANY, "properties required additionalProperties",
                       object_schema(c, s, rule_name, name));
    if ((untyped || t_object || t_string) && js_get(s, "allOf", &v))
        return held_by(c, s, K_ANY | (t_string ? K_STRING : K_OBJECT), "allOf",
                       all_of(c, s, rule_name, name));
    if ((untyped || js_str_is(type, "array")) &&
        (js_get(s, "items", &v) || js_get(s, "prefixItems", &v))) {
        bool tuple = json_object_is_type(v, json_type_array);
        json_object *items;
        const char *kw = js_get(s, "items", &items) ? "items" : "prefixItems";
        return held_by(c, s, K_ARRAY | K_ANY,
                       tuple                 ? kw
                       : strcmp(kw, "items") ? "prefixItems minItems maxItems"
                                             : "items minItems maxItems",
                       array_rule(c, s, rule_name, name));
    }
    if ((untyped || t_string) && js_get(s, "pattern", &v)) {
        if (!js_is_str(v))
            return js_fail_at(c, "pattern", "must be a string, not %s", js_show(c, v));
        return held_by(c, s, K_STRING | K_ANY, "pattern",
                       js_pattern_rule(c, json_object_get_string(v), rule_name));
    }
    if ((untyped || t_string) && is_uuid(format))
        return held_by(c, s, K_STRING | K_ANY, "format",
                       js_add_builtin(c, strcmp(rule_name, "root") == 0 ? "root" : format, "uuid"));
    if ((untyped || t_string) && (strcmp(format, "date") == 0 || strcmp(format, "time") == 0 ||
                                  strcmp(format, "date-time") == 0)) {
        char *builtin = js_cat(c, format, "-string", NULL);
        return held_by(c, s, K_STRING | K_ANY, "format",
                       builtin ? js_add_rule(c, rule_name, js_add_builtin(c, builtin, builtin))
                               : NULL);
    }
    if (t_string && (js_get(s, "minLength", &v) || js_get(s, "maxLength", &v)))
        return held_by(c, s, K_STRING | K_ANY, "minLength maxLength", length_rule(c, s, rule_name));
    if (js_str_is(type, "integer") &&
        (js_get(s, "minimum", &v) || js_get(s, "exclusiveMinimum", &v) ||
         js_get(s, "maximum", &v) || js_get(s, "exclusiveMaximum", &v)))
        return held_by(
            c, s, K_NUMBER | K_ANY,
            js_get(s, "minimum", &v)
                ? (js_get(s, "maximum", &w) ? "minimum maximum" : "minimum exclusiveMaximum")
                : (js_get(s, "maximum", &w) ? "exclusiveMinimum maximum"
                                            : "exclusiveMinimum exclusiveMaximum"),
            integer_rule(c, s, rule_name));
    if ((json_object_object_length(s) == 0 && !override) || t_object)
        return held_by(c, s, K_OBJECT | K_ANY, "",
                       js_add_rule(c, rule_name, js_add_builtin(c, "object", "object")));
    if (untyped) // no type and nothing this walk reads (a description...): any value
        return held_by(c, s, K_ALL, "",
                       js_add_rule(c, rule_name, js_add_builtin(c, "value", "value")));
    if (!js_is_str(type) || !js_is_primitive(json_object_get_string(type)))
        return js_fail_at(c, "type", "unknown type %s", js_show(c, type));
    const char *t = json_object_get_string(type);
    unsigned kinds = strcmp(t, "string") == 0                                ? K_STRING
                     : strcmp(t, "number") == 0 || strcmp(t, "integer") == 0 ? K_NUMBER
                     : strcmp(t, "array") == 0                               ? K_ARRAY
                     : strcmp(t, "boolean") == 0 || strcmp(t, "null") == 0   ? 0
                                                                             : K_ALL;
    return held_by(c, s, kinds | K_ANY, "",
                   js_add_builtin(c, strcmp(rule_name, "root") == 0 ? "root" : t, t));
}

static const char *visit_typed(js_conv *c, json_object *s, const char *name, bool override,
                               json_object *type) {
    if (c->st != MINT_OK || !name) return NULL;
    if (c->depth >= JS_MAX_DEPTH)
        return js_fail(c, MINT_E_LIMIT, "json schema: #%s: schemas nested deeper than %d",
                       c->path.p ? c->path.p : "", JS_MAX_DEPTH);
    c->depth++;
    const char *rule_name = js_is_reserved(name) ? js_cat(c, name, "-", NULL)
                            : name[0]            ? name
                                                 : "root";
    const char *r = NULL;
    if (json_object_is_type(s, json_type_object)) {
        r = visit_object(c, s, name, rule_name, override, type);
    } else if (json_object_is_type(s, json_type_boolean) && json_object_get_boolean(s)) {
        // true accepts anything: the rule of a schema without keywords llama.cpp reads.
        r = js_add_rule(c, rule_name, js_add_builtin(c, "value", "value"));
    } else {
        js_fail_at(c, NULL, "a schema must be an object or true, not %s", js_show(c, s));
    }
    c->depth--;
    return r;
}

static const char *js_visit(js_conv *c, json_object *schema, const char *name) {
    return visit_typed(c, schema, name, false, NULL);
}

// ---------------------------------------------------------------------------------------------
// The API

mint_status mint_json_schema_to_grammar(const char *schema, size_t len, char **out, mint_err *err) {
    if (out) *out = NULL;
    mint_err_clear(err);
    if (!schema || !out) return mint_fail(err, MINT_E_ARG, "json schema: NULL schema or output");
    json_object *doc = NULL;
    mint_status st = mint_json_parse(schema, len, "json schema", 0, &doc, err);
    if (st != MINT_OK) return st;
    js_conv c = {.err = err};
    if (mint_strmap_init(&c.by_name, 64) != MINT_OK || mint_strmap_init(&c.ref_idx, 16) != MINT_OK)
        js_fail(&c, MINT_E_NOMEM, "json schema: out of memory");
    js_buf_add(&c, &c.path, "", 0);
    js_add_rule(&c, "space", SPACE_RULE);
    size_t len_out = 0;
    char *grammar = NULL;
    if (scan(&c, doc, doc)) {
        js_path_pop(&c, 0);
        js_visit(&c, doc, "");
        grammar = js_format_grammar(&c, &len_out);
    }
    st = c.st;
    if (st == MINT_OK && c.warning[0] && err) { // accepted, with what the grammar does not hold
        memcpy(err->msg, c.warning, sizeof err->msg);
        mint_err_one_line(err);
    }
    js_buf_drop(&c, &c.path);
    free(c.rules);
    free(c.refs);
    free(c.resolving);
    mint_strmap_free(&c.by_name);
    mint_strmap_free(&c.ref_idx);
    mint_arena_free(&c.arena);
    json_object_put(doc);
    if (st != MINT_OK) {
        free(grammar);
        return st;
    }
    *out = grammar;
    return MINT_OK;
}

void mint_grammar_text_free(char *text) {
    free(text);
}
