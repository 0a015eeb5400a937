// fuzz_agent_request.c - the untrusted inputs of mint-serve's agent tools endpoint
// (tools/common/agent_request.c, agent_glob.c): a POST /tools body with its x-tool-cwd,
// x-tool-runtime and x-resp-type headers, and a glob pattern with a path. The input's NUL bytes
// separate the fields: body, cwd, runtime, resp_type, pattern, path.
//
// Checked: parsing is deterministic; a failure leaves a non-empty message; a success gives a
// tool name and a params object whose "cwd", "runtime" and "resp_type" are exactly the headers'
// (never the body's own); an accepted runtime's argument never starts with '-' and holds only
// its allowed characters, its command line ends with the inner words (or, for ssh, one word that
// unquotes back to them); a glob of the path's own bytes (when it has no special character)
// matches it, "**" matches everything, and matching a long hostile pattern terminates (linear
// time: libFuzzer's timeout catches a blow-up).
#include "agent_glob.h"
#include "agent_request.h"
#include "fuzz_util.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

// The params' string member key, or NULL.
static const char *member(json_object *o, const char *key) {
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v)) return NULL;
    FUZZ_CHECK(json_object_is_type(v, json_type_string));
    return json_object_get_string(v);
}

static void check_header(json_object *params, const char *key, const char *hdr) {
    const char *v = member(params, key);
    if (hdr && *hdr)
        FUZZ_CHECK(v && !strcmp(v, hdr));
    else
        FUZZ_CHECK(!v);
}

// Undoes agent_shell_quote: 'a' 'b'\''c' -> words; true when the text is such a quoting of words.
static bool unquote_equals(const char *q, const char *const *words) {
    size_t w = 0;
    while (*q) {
        if (w && *q++ != ' ') return false;
        if (*q++ != '\'') return false;
        const char *word = words[w];
        if (!word) return false;
        size_t k = 0;
        for (;;) {
            if (!strncmp(q, "'\\''", 4)) {
                if (word[k++] != '\'') return false;
                q += 4;
            } else if (*q == '\'') {
                q++;
                break;
            } else if (!*q) {
                return false;
            } else if (word[k++] != *q++) {
                return false;
            }
        }
        if (word[k]) return false;
        w++;
    }
    return words[w] == NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_fields f;
    if (!fuzz_split(data, size, 6, &f)) return 0;
    const char *empty = "";
    const char *body = f.field[0], *cwd = f.n > 1 ? f.field[1] : NULL;
    const char *runtime = f.n > 2 ? f.field[2] : NULL, *resp = f.n > 3 ? f.field[3] : NULL;
    const char *pattern = f.n > 4 ? f.field[4] : empty, *path = f.n > 5 ? f.field[5] : empty;

    // The body: a copy of exactly its length, so that a read past the end is caught.
    char *exact = malloc(f.len[0] ? f.len[0] : 1);
    if (exact && f.len[0]) memcpy(exact, body, f.len[0]);
    agent_request a, b;
    char ea[512], eb[512];
    const bool ok = agent_request_parse(exact, f.len[0], cwd, runtime, resp, &a, ea, sizeof ea);
    const bool ok2 = agent_request_parse(exact, f.len[0], cwd, runtime, resp, &b, eb, sizeof eb);
    FUZZ_CHECK(ok == ok2);
    if (ok) {
        FUZZ_CHECK(a.tool && !strcmp(a.tool, b.tool) && a.stream == b.stream);
        FUZZ_CHECK(json_object_is_type(a.params, json_type_object));
        check_header(a.params, "cwd", cwd);
        check_header(a.params, "runtime", runtime);
        check_header(a.params, "resp_type", resp);
        agent_request_free(&a);
        agent_request_free(&b);
    } else {
        FUZZ_CHECK(ea[0] && !strcmp(ea, eb));
    }
    free(exact);

    // The runtime name.
    agent_runtime rt;
    char err[256];
    if (agent_runtime_parse(runtime, &rt, err, sizeof err)) {
        if (rt.kind != AGENT_RUNTIME_HOST) {
            FUZZ_CHECK(rt.arg[0] && rt.arg[0] != '-');
            for (const char *p = rt.arg; *p; p++)
                FUZZ_CHECK(isalnum((unsigned char)*p) || strchr(".-_@/:", *p));
        }
        const char *inner[] = {"sh", "-c", pattern, "_", path, NULL};
        char **argv = agent_runtime_argv(&rt, inner, size % 2);
        if (rt.kind == AGENT_RUNTIME_IMAGE) {
            FUZZ_CHECK(!argv);
        } else if (argv) {
            size_t n = 0;
            while (argv[n]) n++;
            if (rt.kind == AGENT_RUNTIME_SSH) {
                FUZZ_CHECK(n >= 2 && !strcmp(argv[n - 2], rt.arg));
                FUZZ_CHECK(unquote_equals(argv[n - 1], inner));
            } else {
                FUZZ_CHECK(n >= 5);
                for (size_t i = 0; i < 5; i++) FUZZ_CHECK(!strcmp(argv[n - 5 + i], inner[i]));
            }
            agent_argv_free(argv);
        }
    } else {
        FUZZ_CHECK(err[0]);
    }

    // Globs.
    const bool m = agent_glob_match(pattern, path);
    FUZZ_CHECK(m == agent_glob_match(pattern, path));
    FUZZ_CHECK(agent_glob_match("**", path));
    if (!strpbrk(path, "*?[") && *path && path[0] != '/' && strlen(path) < AGENT_GLOB_MAX)
        FUZZ_CHECK(agent_glob_match(path, path));
    free(f.buf);
    free(f.field);
    free(f.len);
    return 0;
}
