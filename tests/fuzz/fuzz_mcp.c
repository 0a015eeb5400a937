// fuzz_mcp.c - mint-serve's MCP text side (tools/common/mcp_proto.c) on arbitrary input: the
// first byte picks what is read (even: a configuration, as --mcp-servers-json gives it; odd: a
// line a server wrote, awaited as the answer to id first-byte / 2), the rest is the input, in a
// buffer of exactly its length (no NUL after it), so that a read past the end is caught.
//
// Checked: a configuration is read the same way twice; added on top of itself, it adds nothing
// (every name is taken); on success every server has a name, a non-empty command, its args and
// env entries ("KEY=VALUE"), a time limit in range, and names are unique; on failure the message
// is one non-empty line and the configuration is unchanged. A line is classified the same way
// twice; a result comes only with MCP_LINE_RESULT, an error message only with MCP_LINE_ERROR; a
// result's tools have non-empty names and object parameters, and its call answer is an object
// with exactly one of plain_text_response and error, a string.
#include "fuzz_util.h"
#include "mcp_proto.h"

#include <string.h>

static void check_config(const mcp_config *c) {
    FUZZ_CHECK(c->n >= 0 && c->n <= MCP_MAX_SERVERS);
    for (int i = 0; i < c->n; i++) {
        const mcp_server_conf *s = &c->servers[i];
        FUZZ_CHECK(s->name && s->command && s->command[0]);
        FUZZ_CHECK(s->timeout_ms >= 1 && s->timeout_ms <= MCP_TIMEOUT_MS_MAX);
        FUZZ_CHECK(!s->cwd || s->cwd[0]);
        for (int k = 0; k < s->n_args; k++) FUZZ_CHECK(s->args[k]);
        for (int k = 0; k < s->n_env; k++)
            FUZZ_CHECK(s->env[k] && strchr(s->env[k], '=') > s->env[k]);
        for (int k = 0; k < i; k++) FUZZ_CHECK(strcmp(c->servers[k].name, s->name));
    }
}

static void fuzz_config(const char *text, size_t len) {
    mcp_config a = {0}, b = {0};
    char e1[300], e2[300];
    memset(e1, 0x5A, sizeof e1);
    const bool ok = mcp_config_add(&a, text, len, NULL, NULL, e1, sizeof e1);
    const bool ok2 = mcp_config_add(&b, text, len, NULL, NULL, e2, sizeof e2);
    FUZZ_CHECK(ok == ok2 && a.n == b.n);
    if (ok) {
        check_config(&a);
        const int n = a.n;
        FUZZ_CHECK(mcp_config_add(&a, text, len, NULL, NULL, e1, sizeof e1));
        FUZZ_CHECK(a.n == n);
    } else {
        const size_t n = strnlen(e1, sizeof e1);
        FUZZ_CHECK(n > 0 && n < sizeof e1 && !strchr(e1, '\n') && !strcmp(e1, e2));
        FUZZ_CHECK(a.n == 0 && !a.servers);
    }
    mcp_config_free(&a);
    mcp_config_free(&b);
}

static void fuzz_line(const char *line, size_t len, uint64_t id) {
    json_object *r = NULL, *r2 = NULL;
    char err[300], err2[300];
    const mcp_line_kind k = mcp_read_line(line, len, id, &r, err, sizeof err);
    const mcp_line_kind k2 = mcp_read_line(line, len, id, &r2, err2, sizeof err2);
    FUZZ_CHECK(k == k2 && (r != NULL) == (k == MCP_LINE_RESULT));
    FUZZ_CHECK(k != MCP_LINE_ERROR || (err[0] && !strcmp(err, err2)));
    json_object_put(r2);
    if (!r) return;
    mcp_tool *t;
    const int n = mcp_tools_from_result(r, &t);
    FUZZ_CHECK(n >= 0 && (n == 0) == (t == NULL));
    for (int i = 0; i < n; i++)
        FUZZ_CHECK(t[i].name[0] && t[i].description &&
                   json_object_is_type(t[i].parameters, json_type_object));
    mcp_tools_free(t, n);
    json_object *a = mcp_call_answer(r), *v;
    FUZZ_CHECK(a && json_object_object_length(a) == 1);
    FUZZ_CHECK(json_object_object_get_ex(a, "plain_text_response", &v) ||
               json_object_object_get_ex(a, "error", &v));
    FUZZ_CHECK(json_object_is_type(v, json_type_string));
    json_object_put(a);
    json_object_put(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const size_t len = size - 1;
    char *text = malloc(len ? len : 1); // exactly the input: no NUL after it
    FUZZ_CHECK(text);
    if (len) memcpy(text, data + 1, len);
    if (data[0] % 2 == 0)
        fuzz_config(text, len);
    else
        fuzz_line(text, len, data[0] / 2);
    free(text);
    return 0;
}
