// mcp_proto.c - MCP's configuration and JSON-RPC lines (mcp_proto.h). The configuration's rules
// follow llama-server's reading of it (tools/server/server-mcp.cpp in llama.cpp): what it skips
// is skipped here, what makes it refuse to start (a value of the wrong type) is refused here, with
// the field named.
#include "mcp_proto.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A message stays one line: a name or a server's text with control characters in it is shown
// with spaces in their place.
static void one_line(char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20) *s = ' ';
}

static bool fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (errlen) vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    if (errlen) one_line(err);
    return false;
}

static bool only_space(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') return false;
    return true;
}

// A JSON text parsed whole (strict JSON, valid UTF-8, nothing after the value), or NULL.
static json_object *parse_whole(const char *text, size_t len, char *why, size_t whylen) {
    if (len == 0 || len >= (size_t)INT32_MAX) {
        snprintf(why, whylen, len ? "it is too long" : "it is empty");
        return NULL;
    }
    json_tokener *tok = json_tokener_new();
    if (!tok) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(tok, text, (int)len);
    const enum json_tokener_error jerr = json_tokener_get_error(tok);
    const size_t used = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (jerr == json_tokener_continue)
        snprintf(why, whylen, "it ends in the middle of a value");
    else if (jerr != json_tokener_success)
        snprintf(why, whylen, "it stops parsing at byte %zu", used);
    else if (!only_space(text + used, len - used))
        snprintf(why, whylen, "bytes follow its value at byte %zu", used);
    else
        return o;
    json_object_put(o);
    return NULL;
}

// A copy of a JSON string member: true with *out (malloc'd), or true with *out NULL when absent;
// false when present but not a string (or holding a NUL byte, which no C string can carry).
static bool get_string(json_object *o, const char *key, const char *server, char **out, char *err,
                       size_t errlen) {
    *out = NULL;
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v)) return true;
    if (!json_object_is_type(v, json_type_string))
        return fail(err, errlen, "MCP server '%s': \"%s\" must be a string", server, key);
    const char *s = json_object_get_string(v);
    if (strlen(s) != (size_t)json_object_get_string_len(v))
        return fail(err, errlen, "MCP server '%s': \"%s\" holds a NUL byte", server, key);
    *out = strdup(s);
    return *out ? true : fail(err, errlen, "out of memory");
}

static void conf_free(mcp_server_conf *s) {
    free(s->name);
    free(s->command);
    free(s->cwd);
    for (int i = 0; i < s->n_args; i++) free(s->args[i]);
    for (int i = 0; i < s->n_env; i++) free(s->env[i]);
    free(s->args);
    free(s->env);
    memset(s, 0, sizeof *s);
}

// "args": an array of strings (anything else in its place is ignored, as llama-server does).
static bool get_args(json_object *o, mcp_server_conf *s, char *err, size_t errlen) {
    json_object *a;
    if (!json_object_object_get_ex(o, "args", &a) || !json_object_is_type(a, json_type_array))
        return true;
    const size_t n = json_object_array_length(a);
    if (n > MCP_MAX_ARGS)
        return fail(err, errlen, "MCP server '%s': more than %d \"args\"", s->name, MCP_MAX_ARGS);
    s->args = calloc(n ? n : 1, sizeof *s->args);
    if (!s->args) return fail(err, errlen, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_object *v = json_object_array_get_idx(a, i);
        const char *str = json_object_get_string(v);
        if (!json_object_is_type(v, json_type_string))
            return fail(err, errlen, "MCP server '%s': \"args\"[%zu] must be a string", s->name, i);
        if (strlen(str) != (size_t)json_object_get_string_len(v))
            return fail(err, errlen, "MCP server '%s': \"args\"[%zu] holds a NUL byte", s->name, i);
        if (!(s->args[s->n_args++] = strdup(str))) return fail(err, errlen, "out of memory");
    }
    return true;
}

// "env": an object of strings, kept as "KEY=VALUE" for the child's environment.
static bool get_env(json_object *o, mcp_server_conf *s, char *err, size_t errlen) {
    json_object *e;
    if (!json_object_object_get_ex(o, "env", &e) || !json_object_is_type(e, json_type_object))
        return true;
    const int n = json_object_object_length(e);
    if (n > MCP_MAX_ARGS)
        return fail(err, errlen, "MCP server '%s': more than %d \"env\" entries", s->name,
                    MCP_MAX_ARGS);
    s->env = calloc(n ? (size_t)n : 1, sizeof *s->env);
    if (!s->env) return fail(err, errlen, "out of memory");
    json_object_object_foreach(e, k, v) {
        if (!json_object_is_type(v, json_type_string))
            return fail(err, errlen, "MCP server '%s': \"env\".%s must be a string", s->name, k);
        const char *val = json_object_get_string(v);
        // A key with '=' or an empty one would set another variable than the one named.
        if (!k[0] || strchr(k, '='))
            return fail(err, errlen, "MCP server '%s': \"env\" key '%s' is not a variable name",
                        s->name, k);
        if (strlen(val) != (size_t)json_object_get_string_len(v))
            return fail(err, errlen, "MCP server '%s': \"env\".%s holds a NUL byte", s->name, k);
        const size_t len = strlen(k) + strlen(val) + 2;
        char *kv = malloc(len);
        if (!kv) return fail(err, errlen, "out of memory");
        snprintf(kv, len, "%s=%s", k, val);
        s->env[s->n_env++] = kv;
    }
    return true;
}

// One entry of "mcpServers": false with err for a wrong type; true with s->command NULL for an
// entry to skip.
static bool parse_server(const char *name, json_object *o, mcp_server_conf *s, char *err,
                         size_t errlen) {
    memset(s, 0, sizeof *s);
    s->timeout_ms = MCP_TIMEOUT_MS_DEFAULT;
    if (!json_object_is_type(o, json_type_object))
        return fail(err, errlen, "MCP server '%s' must be a JSON object", name);
    if (!(s->name = strdup(name))) return fail(err, errlen, "out of memory");
    if (!get_string(o, "command", name, &s->command, err, errlen) ||
        !get_string(o, "cwd", name, &s->cwd, err, errlen) || !get_args(o, s, err, errlen) ||
        !get_env(o, s, err, errlen))
        return false;
    json_object *t;
    if (json_object_object_get_ex(o, "timeout_ms", &t)) {
        const bool num =
            json_object_is_type(t, json_type_int) || json_object_is_type(t, json_type_double);
        const double ms = num ? json_object_get_double(t) : 0;
        if (!num || !(ms >= 1 && ms <= MCP_TIMEOUT_MS_MAX))
            return fail(err, errlen,
                        "MCP server '%s': \"timeout_ms\" must be a number of milliseconds from 1 "
                        "to %d",
                        name, MCP_TIMEOUT_MS_MAX);
        s->timeout_ms = (int)ms;
    }
    if (s->cwd && !s->cwd[0]) { // "" is llama-server's "not set"
        free(s->cwd);
        s->cwd = NULL;
    }
    if (s->command && !s->command[0]) {
        free(s->command);
        s->command = NULL;
    }
    return true;
}

static bool taken(const mcp_config *cfg, const mcp_server_conf *add, int n_add, const char *name) {
    for (int i = 0; i < cfg->n; i++)
        if (!strcmp(cfg->servers[i].name, name)) return true;
    for (int i = 0; i < n_add; i++)
        if (!strcmp(add[i].name, name)) return true;
    return false;
}

static void notef(mcp_note_fn note, void *ctx, const char *fmt, ...) {
    if (!note) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    one_line(line);
    note(ctx, line);
}

bool mcp_config_add(mcp_config *cfg, const char *text, size_t len, mcp_note_fn note, void *ctx,
                    char *err, size_t errlen) {
    char why[96];
    json_object *root = parse_whole(text, len, why, sizeof why);
    if (!root) return fail(err, errlen, "the MCP configuration is not valid JSON (%s)", why);
    json_object *list = NULL;
    if (!json_object_is_type(root, json_type_object) ||
        !json_object_object_get_ex(root, "mcpServers", &list) ||
        !json_object_is_type(list, json_type_object) || json_object_object_length(list) == 0) {
        notef(note, ctx, "the MCP configuration names no server (no \"mcpServers\" object)");
        json_object_put(root);
        return true;
    }
    const int n = json_object_object_length(list);
    mcp_server_conf *add = calloc((size_t)n, sizeof *add);
    if (!add) {
        json_object_put(root);
        return fail(err, errlen, "out of memory");
    }
    int n_add = 0;
    bool ok = true;
    json_object_object_foreach(list, name, entry) {
        mcp_server_conf s;
        if (!parse_server(name, entry, &s, err, errlen)) {
            conf_free(&s);
            ok = false;
            break;
        }
        if (!s.command) {
            notef(note, ctx, "MCP server '%s' has no command: skipped", name);
            conf_free(&s);
        } else if (taken(cfg, add, n_add, name)) {
            notef(note, ctx, "MCP server '%s' is named twice: the second is skipped", name);
            conf_free(&s);
        } else {
            add[n_add++] = s;
        }
    }
    json_object_put(root);
    if (ok && cfg->n + n_add > MCP_MAX_SERVERS)
        ok = fail(err, errlen, "more than %d MCP servers", MCP_MAX_SERVERS);
    mcp_server_conf *grown =
        ok && n_add ? realloc(cfg->servers, (size_t)(cfg->n + n_add) * sizeof *grown) : NULL;
    if (ok && n_add && !grown) ok = fail(err, errlen, "out of memory");
    if (!ok) {
        for (int i = 0; i < n_add; i++) conf_free(&add[i]);
        free(add);
        return false;
    }
    if (n_add) {
        memcpy(grown + cfg->n, add, (size_t)n_add * sizeof *add);
        cfg->servers = grown;
        cfg->n += n_add;
    }
    free(add);
    return true;
}

void mcp_config_free(mcp_config *cfg) {
    for (int i = 0; i < cfg->n; i++) conf_free(&cfg->servers[i]);
    free(cfg->servers);
    cfg->servers = NULL;
    cfg->n = 0;
}

// ---- JSON-RPC lines ----

// o as one line (owned: put here).
static char *line_of(json_object *o) {
    char *s = o ? strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                               JSON_C_TO_STRING_NOSLASHESCAPE))
                : NULL;
    json_object_put(o);
    return s;
}

static json_object *request(uint64_t id, const char *method, json_object *params) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(o, "id", json_object_new_int64((int64_t)id));
    json_object_object_add(o, "method", json_object_new_string(method));
    if (params) json_object_object_add(o, "params", params);
    return o;
}

char *mcp_msg_initialize(uint64_t id, const char *client_name, const char *client_version) {
    json_object *p = json_object_new_object(), *info = json_object_new_object();
    json_object_object_add(p, "protocolVersion", json_object_new_string(MCP_PROTOCOL_VERSION));
    json_object_object_add(p, "capabilities", json_object_new_object());
    json_object_object_add(info, "name", json_object_new_string(client_name));
    json_object_object_add(info, "version", json_object_new_string(client_version));
    json_object_object_add(p, "clientInfo", info);
    return line_of(request(id, "initialize", p));
}

char *mcp_msg_initialized(void) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(o, "method", json_object_new_string("notifications/initialized"));
    return line_of(o);
}

char *mcp_msg_list_tools(uint64_t id) {
    return line_of(request(id, "tools/list", NULL));
}

char *mcp_msg_call(uint64_t id, const char *tool, json_object *args) {
    json_object *p = json_object_new_object();
    json_object_object_add(p, "name", json_object_new_string(tool));
    json_object_object_add(p, "arguments", args ? json_object_get(args) : json_object_new_object());
    return line_of(request(id, "tools/call", p));
}

// Whether a message's "id" is id: a whole number equal to it (a server may write it as 3.0).
static bool same_id(json_object *v, uint64_t id) {
    if (json_object_is_type(v, json_type_int))
        return json_object_get_int64(v) >= 0 && (uint64_t)json_object_get_int64(v) == id;
    if (json_object_is_type(v, json_type_double)) return json_object_get_double(v) == (double)id;
    return false;
}

mcp_line_kind mcp_read_line(const char *line, size_t len, uint64_t id, json_object **result,
                            char *err, size_t errlen) {
    *result = NULL;
    if (errlen) err[0] = '\0';
    char why[96];
    json_object *o = parse_whole(line, len, why, sizeof why);
    if (!o || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        return MCP_LINE_JUNK;
    }
    json_object *v, *e;
    // No id: a notification. Another id: a request of the server's, or the late answer to a call
    // that timed out (ids only grow, so it is never a later call's).
    if (!json_object_object_get_ex(o, "id", &v) || !same_id(v, id) ||
        json_object_object_get_ex(o, "method", NULL)) {
        json_object_put(o);
        return MCP_LINE_OTHER;
    }
    if (json_object_object_get_ex(o, "error", &e)) {
        json_object *m;
        const char *msg = "unknown error";
        if (json_object_is_type(e, json_type_string))
            msg = json_object_get_string(e);
        else if (json_object_is_type(e, json_type_object) &&
                 json_object_object_get_ex(e, "message", &m) &&
                 json_object_is_type(m, json_type_string))
            msg = json_object_get_string(m);
        fail(err, errlen, "%s", msg[0] ? msg : "unknown error");
        json_object_put(o);
        return MCP_LINE_ERROR;
    }
    if (!json_object_object_get_ex(o, "result", &v)) {
        fail(err, errlen, "an answer with neither result nor error");
        json_object_put(o);
        return MCP_LINE_ERROR;
    }
    // "result": null is json-c's NULL: an empty object stands for it (an answer all the same).
    *result = v ? json_object_get(v) : json_object_new_object();
    json_object_put(o);
    return *result ? MCP_LINE_RESULT : MCP_LINE_JUNK;
}

// A string member's value, or NULL when absent or not a string.
static const char *member_string(json_object *o, const char *key) {
    json_object *v;
    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) ||
        !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

int mcp_tools_from_result(json_object *result, mcp_tool **out) {
    *out = NULL;
    json_object *list;
    if (!json_object_is_type(result, json_type_object) ||
        !json_object_object_get_ex(result, "tools", &list) ||
        !json_object_is_type(list, json_type_array))
        return 0;
    const size_t n = json_object_array_length(list);
    mcp_tool *t = n ? calloc(n, sizeof *t) : NULL;
    if (!t) return 0;
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(list, i), *schema;
        const char *name = member_string(e, "name");
        const char *desc = member_string(e, "description");
        if (!name || !name[0]) continue;
        if (!json_object_object_get_ex(e, "inputSchema", &schema) ||
            !json_object_is_type(schema, json_type_object))
            schema = NULL;
        t[k].name = strdup(name);
        t[k].description = strdup(desc ? desc : "");
        t[k].parameters = schema ? json_object_get(schema) : json_object_new_object();
        if (!t[k].name || !t[k].description || !t[k].parameters) {
            mcp_tools_free(t, k + 1);
            return 0;
        }
        k++;
    }
    if (k == 0) {
        free(t);
        return 0;
    }
    *out = t;
    return k;
}

void mcp_tools_free(mcp_tool *t, int n) {
    for (int i = 0; t && i < n; i++) {
        free(t[i].name);
        free(t[i].description);
        json_object_put(t[i].parameters);
    }
    free(t);
}

json_object *mcp_call_answer(json_object *result) {
    // The text parts of "content", one per line: what a model reads back (images and resources
    // have no text form here, as in llama-server).
    size_t len = 0;
    json_object *content = NULL, *flag;
    if (json_object_is_type(result, json_type_object))
        json_object_object_get_ex(result, "content", &content);
    const size_t n =
        json_object_is_type(content, json_type_array) ? json_object_array_length(content) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *part = json_object_array_get_idx(content, i);
        const char *type = member_string(part, "type"), *text = member_string(part, "text");
        if (type && !strcmp(type, "text")) len += (text ? strlen(text) : 0) + 1;
    }
    char *buf = malloc(len + 1), *p = buf;
    if (!buf) return NULL;
    for (size_t i = 0; i < n; i++) {
        json_object *part = json_object_array_get_idx(content, i);
        const char *type = member_string(part, "type"), *text = member_string(part, "text");
        if (!type || strcmp(type, "text")) continue;
        if (p != buf) *p++ = '\n';
        const size_t k = text ? strlen(text) : 0;
        memcpy(p, text ? text : "", k);
        p += k;
    }
    *p = '\0';
    const bool is_error = json_object_is_type(result, json_type_object) &&
                          json_object_object_get_ex(result, "isError", &flag) &&
                          json_object_is_type(flag, json_type_boolean) &&
                          json_object_get_boolean(flag);
    json_object *o = json_object_new_object();
    if (is_error)
        json_object_object_add(o, "error",
                               json_object_new_string(buf[0] ? buf : "the MCP tool failed"));
    else
        json_object_object_add(o, "plain_text_response", json_object_new_string(buf));
    free(buf);
    return o;
}
