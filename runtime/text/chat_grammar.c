// chat_grammar.c - the GBNF grammar that makes a model write well-formed tool calls in its chat
// format's syntax (mint_chat_tool_grammar), as llama-server builds one for a request with tools
// (llama.cpp's common/chat.cpp): the format's markers around the calls (chat_parse.c's table,
// the same one the parser reads), each function's name as a literal and its arguments held to
// its JSON Schema by mint_json_schema_to_grammar. Each function's schema grammar is its own set
// of rules, renamed under a prefix ("t0-root", "t0-space" ...) so that several live in one
// grammar. For tool_choice "auto" the grammar is lazy: the sampler is free until the model
// writes a call's opening (the triggers), then held to the grammar from there.
//
// Where GBNF cannot say what the format means, the grammar is a little looser or stricter than
// the parser: a text parameter of the XML formats (Qwen3-Coder's <parameter=k>) cannot contain
// "</"; a reasoning block before a required call cannot contain its closing's first two bytes;
// the XML formats' parameters may come in any order and any number (required ones are not
// enforced).
#include "base/error.h"
#include "formats/json_doc.h"
#include "mint.h"
#include "runtime/text/chat_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gb {
    cp_out o; // its oom flag
    cp_buf g; // the grammar text
} gb;

static void put(gb *b, const char *z) {
    cp_puts(&b->o, &b->g, z);
}

// A GBNF string literal of s.
static void lit(gb *b, const char *s) {
    put(b, "\"");
    for (; *s; s++) {
        char e[8];
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            e[0] = '\\';
            e[1] = (char)c;
            e[2] = 0;
        } else if (c == '\n') {
            strcpy(e, "\\n");
        } else if (c == '\r') {
            strcpy(e, "\\r");
        } else if (c == '\t') {
            strcpy(e, "\\t");
        } else if (c < 0x20) {
            snprintf(e, sizeof e, "\\x%02X", c);
        } else {
            e[0] = (char)c;
            e[1] = 0;
        }
        put(b, e);
    }
    put(b, "\"");
}

// A JSON string literal of name as GBNF: "\"name\"".
static void json_lit(gb *b, const char *name) {
    cp_buf q = {0};
    cp_puts(&b->o, &q, "\"");
    cp_put_json_str(&b->o, &q, name, strlen(name));
    cp_puts(&b->o, &q, "\"");
    if (q.p) lit(b, q.p);
    free(q.p);
}

static bool word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

// Appends grammar text g with every rule name prefixed: names are the words outside literals,
// character classes, braces ({m,n}) and comments.
static void renamed(gb *b, const char *g, const char *prefix) {
    for (const char *p = g; *p;) {
        char c = *p;
        if (c == '"' || c == '[') {
            char close = c == '"' ? '"' : ']';
            const char *q = p + 1;
            while (*q && *q != close) q += q[0] == '\\' && q[1] ? 2 : 1;
            if (*q) q++;
            cp_put(&b->o, &b->g, p, (size_t)(q - p));
            p = q;
        } else if (c == '{' || c == '#') {
            const char *q = p;
            while (*q && *q != (c == '{' ? '}' : '\n')) q++;
            if (*q && c == '{') q++;
            cp_put(&b->o, &b->g, p, (size_t)(q - p));
            p = q;
        } else if (word(c)) {
            const char *q = p;
            while (word(*q)) q++;
            put(b, prefix);
            cp_put(&b->o, &b->g, p, (size_t)(q - p));
            p = q;
        } else {
            cp_put(&b->o, &b->g, p, 1);
            p++;
        }
    }
    put(b, "\n");
}

// One function of the request.
typedef struct tool {
    const char *name;    // function.name
    json_object *params; // function.parameters (borrowed), or NULL
} tool;

// The rules of a JSON Schema under prefix (its root is prefix "root").
static mint_status schema_rules(gb *b, json_object *schema, const char *prefix, const char *what,
                                mint_err *err) {
    const char *text = schema ? json_object_to_json_string_ext(
                                    schema, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
                              : "{\"type\": \"object\"}";
    char *g = NULL;
    mint_err e2;
    if (mint_json_schema_to_grammar(text, strlen(text), &g, &e2) != MINT_OK)
        return mint_fail(err, MINT_E_ARG, "%s: %s", what, e2.msg);
    renamed(b, g, prefix);
    mint_grammar_text_free(g);
    return MINT_OK;
}

static bool is_string_schema(json_object *s) {
    json_object *t;
    if (!json_object_object_get_ex(s, "type", &t)) return false;
    if (json_object_is_type(t, json_type_string))
        return !strcmp(json_object_get_string(t), "string");
    if (json_object_is_type(t, json_type_array))
        for (size_t i = 0; i < json_object_array_length(t); i++)
            if (!strcmp(json_object_get_string(json_object_array_get_idx(t, i)), "string"))
                return true;
    return false;
}

// ---------------------------------------------------------------------------------------------
// One call per format

static void json_object_call(gb *b, const cp_spec *s, mint_chat_format f, size_t i, const tool *t) {
    char r[64];
    snprintf(r, sizeof r, "t%zu-root", i);
    if (s->call_open && strcmp(s->call_open, "{") != 0) {
        lit(b, s->call_open);
        put(b, " ws ");
    }
    put(b, "\"{\" ws ");
    if (s->name_is_key) {
        json_lit(b, t->name);
    } else {
        if (f == MINT_CHAT_FORMAT_COMMAND_R7B)
            put(b, "\"\\\"tool_call_id\\\"\" ws \":\" ws \"\\\"\" [0-9]+ \"\\\"\" ws \",\" ws ");
        if (f == MINT_CHAT_FORMAT_LLAMA3)
            put(b, "(\"\\\"type\\\"\" ws \":\" ws \"\\\"function\\\"\" ws \",\" ws)? ");
        json_lit(b, s->name_key);
        put(b, " ws \":\" ws ");
        json_lit(b, t->name);
        put(b, " ws \",\" ws ");
        json_lit(b, s->args_key);
    }
    put(b, " ws \":\" ws ");
    put(b, r);
    if (f == MINT_CHAT_FORMAT_MISTRAL_NEMO)
        put(b, " ws \",\" ws \"\\\"id\\\"\" ws \":\" ws \"\\\"\" [a-zA-Z0-9]{9} \"\\\"\"");
    put(b, " ws \"}\"");
    if (s->call_close) {
        put(b, " ws ");
        lit(b, s->call_close);
    }
}

static void name_args_call(gb *b, const cp_spec *s, mint_chat_format f, size_t i, const tool *t) {
    char r[64];
    snprintf(r, sizeof r, "t%zu-root", i);
    if (f == MINT_CHAT_FORMAT_MAGISTRAL) {
        lit(b, "[TOOL_CALLS]");
        put(b, " ");
    } else if (s->call_open) {
        lit(b, s->call_open);
        put(b, " ");
    }
    if (f == MINT_CHAT_FORMAT_KIMI_K2) put(b, "\"functions.\" ");
    lit(b, t->name);
    if (f == MINT_CHAT_FORMAT_KIMI_K2) put(b, " \":\" [0-9]+");
    if (s->id_open) {
        put(b, " (");
        lit(b, s->id_open);
        put(b, " [a-zA-Z0-9]+)?");
    }
    if (f == MINT_CHAT_FORMAT_DEEPSEEK_R1)
        put(b, " \"\\n```json\\n\" ");
    else {
        put(b, " ");
        lit(b, s->name_close);
        put(b, " ws ");
    }
    put(b, r);
    if (f == MINT_CHAT_FORMAT_DEEPSEEK_R1) {
        put(b, " \"\\n\" ");
        lit(b, s->call_close);
    } else if (s->call_close) {
        put(b, " ws ");
        lit(b, s->call_close);
    }
}

static mint_status xml_call(gb *b, const cp_spec *s, size_t i, const tool *t, mint_err *err) {
    char r[96];
    lit(b, s->call_open);
    put(b, " ");
    lit(b, t->name);
    put(b, " ");
    lit(b, s->name_close);
    if (s->call_open && !strcmp(s->call_open, "<tool_call>")) put(b, "?"); // GLM 4.7: no newline
    json_object *props = NULL;
    size_t n = 0;
    if (t->params && json_object_object_get_ex(t->params, "properties", &props) &&
        json_object_is_type(props, json_type_object))
        n = (size_t)json_object_object_length(props);
    if (n) {
        put(b, " (ws (");
        size_t j = 0;
        json_object_object_foreach(props, key, schema) {
            (void)key;
            (void)schema;
            snprintf(r, sizeof r, "%st%zu-p%zu", j ? " | " : "", i, j);
            put(b, r);
            j++;
        }
        put(b, "))*");
    }
    put(b, " ws ");
    lit(b, s->call_close);
    put(b, "\n");
    // The parameters: a text, or a JSON value held to the property's schema.
    if (!n) return MINT_OK;
    size_t j = 0;
    json_object_object_foreach(props, key, schema) {
        snprintf(r, sizeof r, "t%zu-p%zu ::= ", i, j);
        put(b, r);
        lit(b, s->param_open);
        put(b, " ");
        lit(b, key);
        put(b, " ");
        lit(b, s->param_name_close);
        if (s->value_open) {
            put(b, " ws ");
            lit(b, s->value_open);
        }
        if (is_string_schema(schema)) {
            put(b, " xml-text ");
        } else {
            snprintf(r, sizeof r, " ws t%zu-p%zu-root ws ", i, j);
            put(b, r);
        }
        lit(b, s->param_close);
        put(b, "\n");
        if (!is_string_schema(schema)) {
            char prefix[64], what[300];
            snprintf(prefix, sizeof prefix, "t%zu-p%zu-", i, j);
            snprintf(what, sizeof what, "tools: %s.%s", t->name, key);
            mint_status st = schema_rules(b, schema, prefix, what, err);
            if (st != MINT_OK) return st;
        }
        j++;
    }
    return MINT_OK;
}

// ---------------------------------------------------------------------------------------------
// The whole grammar

// The reasoning block that may precede required calls: its opening (unless the prompt wrote
// it), text without the closing's first two bytes, the closing.
static void reasoning_rule(gb *b, const cp_spec *s, bool open) {
    const char *c = s->think_close;
    char a[8], z[16];
    snprintf(a, sizeof a, "%c", c[0]);
    put(b, "think ::= ");
    if (!open) {
        lit(b, s->think_open);
        put(b, " ");
    }
    // ([^c0] | "c0" [^c1])*
    snprintf(z, sizeof z, "([^\\x%02X] | ", (unsigned char)c[0]);
    put(b, z);
    lit(b, a);
    snprintf(z, sizeof z, " [^\\x%02X])* ", (unsigned char)c[1]);
    put(b, z);
    lit(b, c);
    put(b, " ws\n");
}

static char *dup(const char *s) {
    size_t n = strlen(s);
    char *p = malloc(n + 1);
    if (p) memcpy(p, s, n + 1);
    return p;
}

static void add_trigger(char ***list, int32_t *n, const char *z, bool *oom) {
    char **l = realloc(*list, (size_t)(*n + 1) * sizeof *l);
    if (l) *list = l;
    if (!l || !(l[*n] = dup(z))) {
        *oom = true;
        return;
    }
    ++*n;
}

// A regex-safe copy of a function name (names are [A-Za-z0-9_.-], but quote anything else).
static void re_name(cp_out *o, cp_buf *b, const char *name) {
    for (; *name; name++) {
        if (!word(*name)) cp_puts(o, b, "\\");
        cp_put(o, b, name, 1);
    }
}

static mint_status build(mint_chat_format f, const tool *tools, size_t n, bool required,
                         const mint_chat_grammar_opts *o, mint_chat_grammar *out, mint_err *err) {
    const cp_spec *s = cp_spec_of(f);
    gb b = {0};
    bool lazy = !required;
    // root, then the calls' rule.
    put(&b, "root ::= ");
    if (required && o->reasoning && s->think_open && f != MINT_CHAT_FORMAT_GPT_OSS)
        put(&b, "think? ");
    if (f == MINT_CHAT_FORMAT_GPT_OSS && required)
        put(&b, "(\"<|channel|>analysis<|message|>\" ([^<] | \"<\" [^|])* "
                "\"<|end|><|start|>assistant\")? ");
    bool section = s->section_open &&
                   (s->kind == CP_JSON_ARRAY || (s->kind == CP_NAME_ARGS && s->section_close) ||
                    f == MINT_CHAT_FORMAT_MINIMAX_M2);
    const char *sep = s->kind == CP_JSON_ARRAY ? " ws \",\" ws " : " ws ";
    // Apriel's list may come without brackets (MiniMax M1: one object per line).
    bool apriel = f == MINT_CHAT_FORMAT_APRIEL;
    if (apriel) sep = " ws \",\"? ws ";
    if (f == MINT_CHAT_FORMAT_GPT_OSS) sep = " \"<|call|>\"? \"<|start|>assistant\" ";
    if (f == MINT_CHAT_FORMAT_LLAMA3) sep = " ws (\",\" | \";\")? ws ";
    if (f == MINT_CHAT_FORMAT_FUNCTIONARY_V3_2) sep = " \">>>\" ";
    if (section) {
        lit(&b, s->section_open);
        put(&b, apriel                                        ? " ws \"[\"? ws "
                : s->kind == CP_JSON_ARRAY && !s->name_is_key ? " ws \"[\" ws "
                                                              : " ws ");
        if (f == MINT_CHAT_FORMAT_APERTUS) put(&b, "\"[\" ws ");
    }
    put(&b, "call");
    if (o->parallel) {
        put(&b, " (");
        put(&b, sep);
        put(&b, "call)*");
    }
    if (section) {
        put(&b, apriel ? " ws \"]\"?" : s->kind == CP_JSON_ARRAY ? " ws \"]\"" : "");
        if (s->section_close) {
            put(&b, " ws ");
            lit(&b, s->section_close);
        }
    }
    put(&b, "\ncall ::= ");
    for (size_t i = 0; i < n; i++) {
        char r[32];
        snprintf(r, sizeof r, "%scall%zu", i ? " | " : "", i);
        put(&b, r);
    }
    put(&b, "\nws ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
            "xml-text ::= ([^<] | \"<\" [^/])*\n");
    if (required && o->reasoning && s->think_open && f != MINT_CHAT_FORMAT_GPT_OSS)
        reasoning_rule(&b, s, o->reasoning_open);
    mint_status st = MINT_OK;
    for (size_t i = 0; st == MINT_OK && i < n; i++) {
        char r[128];
        snprintf(r, sizeof r, "call%zu ::= ", i);
        put(&b, r);
        if (f == MINT_CHAT_FORMAT_QWEN3_CODER || f == MINT_CHAT_FORMAT_SEED_OSS) {
            lit(&b, s->section_open); // a section per call
            put(&b, " ws ");
            snprintf(r, sizeof r, "xcall%zu ws ", i);
            put(&b, r);
            lit(&b, s->section_close);
            put(&b, "\n");
            snprintf(r, sizeof r, "xcall%zu ::= ", i);
            put(&b, r);
        }
        switch (s->kind) {
        case CP_JSON_OBJECT:
        case CP_JSON_ARRAY:
            json_object_call(&b, s, f, i, &tools[i]);
            put(&b, "\n");
            break;
        case CP_NAME_ARGS:
            name_args_call(&b, s, f, i, &tools[i]);
            put(&b, "\n");
            break;
        case CP_XML:
            st = xml_call(&b, s, i, &tools[i], err);
            break;
        case CP_SPECIAL:
            if (f == MINT_CHAT_FORMAT_FUNCTIONARY_V3_2) {
                lit(&b, tools[i].name);
                snprintf(r, sizeof r, " \"\\n\" t%zu-root\n", i);
            } else { // gpt-oss
                put(&b, "\"<|channel|>commentary to=functions.\" ");
                lit(&b, tools[i].name);
                snprintf(r, sizeof r, " (\" <|constrain|>json\")? \"<|message|>\" t%zu-root\n", i);
            }
            put(&b, r);
            break;
        case CP_NONE:
            break;
        }
        if (s->kind != CP_XML && st == MINT_OK) {
            char prefix[32], what[300];
            snprintf(prefix, sizeof prefix, "t%zu-", i);
            snprintf(what, sizeof what, "tools: %s's parameters", tools[i].name);
            st = schema_rules(&b, tools[i].params, prefix, what, err);
        }
    }
    if (st != MINT_OK || b.o.oom) {
        free(b.g.p);
        return st != MINT_OK ? st : mint_fail(err, MINT_E_NOMEM, "chat grammar: out of memory");
    }
    out->gbnf = b.g.p;
    out->lazy = lazy;
    if (!lazy) return MINT_OK;
    // The triggers: the format's opening of a call, or a pattern where it has none.
    bool oom = false;
    cp_out tmp = {0};
    cp_buf pat = {0};
    if (f == MINT_CHAT_FORMAT_LLAMA3) {
        add_trigger(&out->trigger_patterns, &out->n_trigger_patterns,
                    "^\\s*(\\{\\s*\"(?:type|name)\")", &oom);
    } else if (f == MINT_CHAT_FORMAT_FUNCTIONARY_V3_2) {
        cp_puts(&tmp, &pat, "(?:^|>>>)((?:");
        for (size_t i = 0; i < n; i++) {
            if (i) cp_puts(&tmp, &pat, "|");
            re_name(&tmp, &pat, tools[i].name);
        }
        cp_puts(&tmp, &pat, ")\\n)");
        if (!tmp.oom) add_trigger(&out->trigger_patterns, &out->n_trigger_patterns, pat.p, &oom);
        oom |= tmp.oom;
    } else if (f == MINT_CHAT_FORMAT_GPT_OSS) {
        add_trigger(&out->trigger_words, &out->n_trigger_words,
                    "<|channel|>commentary to=functions.", &oom);
    } else {
        const char *w = section                           ? s->section_open
                        : f == MINT_CHAT_FORMAT_MAGISTRAL ? "[TOOL_CALLS]"
                        : (f == MINT_CHAT_FORMAT_QWEN3_CODER || f == MINT_CHAT_FORMAT_SEED_OSS)
                            ? s->section_open
                            : s->call_open;
        add_trigger(&out->trigger_words, &out->n_trigger_words, w, &oom);
    }
    free(pat.p);
    if (oom) return mint_fail(err, MINT_E_NOMEM, "chat grammar: out of memory");
    return MINT_OK;
}

mint_status mint_chat_tool_grammar(mint_chat_format f, const mint_chat_grammar_opts *o,
                                   mint_chat_grammar *out, mint_err *err) {
    mint_err_clear(err);
    if (!out || !o) return mint_fail(err, MINT_E_ARG, "mint_chat_tool_grammar: o or out is NULL");
    memset(out, 0, sizeof *out);
    if ((unsigned)f >= MINT_CHAT_FORMAT_COUNT)
        return mint_fail(err, MINT_E_ARG, "mint_chat_tool_grammar: unknown format %d", (int)f);
    const char *choice = o->tool_choice ? o->tool_choice : "auto";
    if (!strcmp(choice, "none") || !o->tools) return MINT_OK;
    bool required = !strcmp(choice, "required");
    const char *named = NULL;
    json_object *tools = NULL, *ch = NULL;
    mint_err e2;
    if (!required && strcmp(choice, "auto") != 0) {
        json_object *fn, *nm;
        if (mint_json_parse(choice, strlen(choice), "tool_choice", 0, &ch, &e2) != MINT_OK ||
            !json_object_object_get_ex(ch, "function", &fn) ||
            !json_object_object_get_ex(fn, "name", &nm) ||
            !json_object_is_type(nm, json_type_string)) {
            json_object_put(ch);
            return mint_fail(err, MINT_E_ARG,
                             "tool_choice: expected \"auto\", \"required\", \"none\" or "
                             "{\"type\": \"function\", \"function\": {\"name\": ...}}");
        }
        named = json_object_get_string(nm);
        required = true;
    }
    bool parsed = mint_json_parse(o->tools, strlen(o->tools), "tools", 0, &tools, &e2) == MINT_OK;
    if (!parsed || !json_object_is_type(tools, json_type_array)) {
        json_object_put(ch);
        json_object_put(tools);
        // Parsed but not an array (`null` parses to NULL, so the status says which).
        return mint_fail(err, MINT_E_ARG, "%s", parsed ? "tools: expected a JSON array" : e2.msg);
    }
    size_t n_all = json_object_array_length(tools), n = 0;
    tool *list = calloc(n_all ? n_all : 1, sizeof *list);
    mint_status st = list ? MINT_OK : mint_fail(err, MINT_E_NOMEM, "chat grammar: out of memory");
    for (size_t i = 0; st == MINT_OK && i < n_all; i++) {
        json_object *t = json_object_array_get_idx(tools, i), *fn, *nm, *ps = NULL;
        if (!json_object_object_get_ex(t, "function", &fn) ||
            !json_object_object_get_ex(fn, "name", &nm) ||
            !json_object_is_type(nm, json_type_string)) {
            st = mint_fail(err, MINT_E_ARG,
                           "tools[%zu]: expected {\"type\": \"function\", "
                           "\"function\": {\"name\": ...}}",
                           i);
            break;
        }
        json_object_object_get_ex(fn, "parameters", &ps);
        if (named && strcmp(json_object_get_string(nm), named)) continue;
        list[n++] = (tool){json_object_get_string(nm), ps};
    }
    if (st == MINT_OK && named && n == 0)
        st = mint_fail(err, MINT_E_ARG, "tool_choice: no tool is named '%s'", named);
    if (st == MINT_OK && n > 0) {
        if (cp_spec_of(f)->kind == CP_NONE)
            st = required ? mint_fail(err, MINT_E_UNSUPPORTED,
                                      "chat format %s has no tool call syntax to require",
                                      mint_chat_format_name(f))
                          : MINT_OK;
        else
            st = build(f, list, n, required, o, out, err);
    }
    free(list);
    json_object_put(tools);
    json_object_put(ch);
    if (st != MINT_OK) mint_chat_grammar_free(out);
    return st;
}

void mint_chat_grammar_free(mint_chat_grammar *g) {
    if (!g) return;
    free(g->gbnf);
    for (int32_t i = 0; i < g->n_trigger_words; i++) free(g->trigger_words[i]);
    for (int32_t i = 0; i < g->n_trigger_patterns; i++) free(g->trigger_patterns[i]);
    free(g->trigger_words);
    free(g->trigger_patterns);
    memset(g, 0, sizeof *g);
}
