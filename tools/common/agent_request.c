// agent_request.c - POST /tools bodies and tool runtime names (agent_request.h). Both come from
// the network: the body is parsed strictly (json-c's tokener with a depth bound, one value, no
// trailing bytes), and a runtime name is checked character by character before any part of it
// reaches a command line, because docker, podman and ssh read options from anywhere in argv.
#include "agent_request.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool agent_request_parse(const char *body, size_t len, const char *cwd, const char *runtime,
                         const char *resp_type, agent_request *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (!body || len == 0) {
        snprintf(err, errlen, "the body must be a JSON object {\"tool\": ..., \"params\": ...}");
        return false;
    }
    if (len > (size_t)1 << 30) {
        snprintf(err, errlen, "the body is too large");
        return false;
    }
    json_tokener *tok = json_tokener_new_ex(64);
    if (!tok) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(tok, body, (int)len);
    const bool whole = json_tokener_get_error(tok) == json_tokener_success &&
                       json_tokener_get_parse_end(tok) == len;
    json_tokener_free(tok);
    if (!o || !whole || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        snprintf(err, errlen, "the body is not a JSON object");
        return false;
    }
    json_object *v;
    if (!json_object_object_get_ex(o, "tool", &v) || !json_object_is_type(v, json_type_string)) {
        json_object_put(o);
        snprintf(err, errlen, "\"tool\" must be a string: the tool's name");
        return false;
    }
    out->tool = strdup(json_object_get_string(v));
    if (json_object_object_get_ex(o, "params", &v) && v) {
        if (!json_object_is_type(v, json_type_object)) {
            json_object_put(o);
            agent_request_free(out);
            snprintf(err, errlen, "\"params\" must be an object");
            return false;
        }
        out->params = json_object_get(v);
    } else {
        out->params = json_object_new_object();
    }
    if (json_object_object_get_ex(o, "stream", &v) && v) {
        if (!json_object_is_type(v, json_type_boolean)) {
            json_object_put(o);
            agent_request_free(out);
            snprintf(err, errlen, "\"stream\" must be true or false");
            return false;
        }
        out->stream = json_object_get_boolean(v);
    }
    json_object_put(o);
    if (!out->tool || !out->params) {
        agent_request_free(out);
        snprintf(err, errlen, "out of memory");
        return false;
    }
    // These come from the request's headers (the client's UI), never from the model's own
    // arguments: a model must not pick its working directory or leave its isolate.
    json_object_object_del(out->params, "cwd");
    json_object_object_del(out->params, "runtime");
    json_object_object_del(out->params, "resp_type");
    if (cwd && *cwd) json_object_object_add(out->params, "cwd", json_object_new_string(cwd));
    if (runtime && *runtime)
        json_object_object_add(out->params, "runtime", json_object_new_string(runtime));
    if (resp_type && *resp_type)
        json_object_object_add(out->params, "resp_type", json_object_new_string(resp_type));
    return true;
}

void agent_request_free(agent_request *r) {
    free(r->tool);
    json_object_put(r->params);
    memset(r, 0, sizeof *r);
}

// A container id or image: starts with a letter or digit (never an option), then letters,
// digits, '.', '-', '_' (and, for an image, '/', ':' and '@' of REGISTRY/NAME:TAG@DIGEST).
static bool valid_container_word(const char *s, bool image) {
    if (!isalnum((unsigned char)s[0])) return false;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr(image ? ".-_/:@" : ".-_", *p)) return false;
    return true;
}

// An ssh target USER@HOST: never an option, only the characters of names and addresses.
static bool valid_ssh_target(const char *s) {
    if (!s[0] || s[0] == '-') return false;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr(".-_@", *p)) return false;
    return true;
}

bool agent_runtime_parse(const char *spec, agent_runtime *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (!spec || !*spec) return true; // the host
    static const char *const engines[] = {"docker", "podman"};
    const char *arg = NULL;
    for (size_t i = 0; i < 2 && !arg; i++) {
        const size_t n = strlen(engines[i]);
        if (strncmp(spec, engines[i], n)) continue;
        if (!strncmp(spec + n, "-container:", 11)) {
            out->kind = AGENT_RUNTIME_CONTAINER, arg = spec + n + 11;
        } else if (spec[n] == ':') {
            out->kind = AGENT_RUNTIME_IMAGE, arg = spec + n + 1;
        } else {
            continue;
        }
        snprintf(out->engine, sizeof out->engine, "%s", engines[i]);
    }
    if (!arg && !strncmp(spec, "ssh:", 4)) out->kind = AGENT_RUNTIME_SSH, arg = spec + 4;
    // The spec is echoed in the message: cut to a readable length, control bytes shown as '?'.
    char shown[80];
    size_t k = 0;
    for (const char *p = arg ? arg : spec; *p && k + 1 < sizeof shown; p++)
        shown[k++] = (unsigned char)*p >= ' ' && *p != 127 ? *p : '?';
    shown[k] = '\0';
    if (!arg) {
        snprintf(err, errlen, "unknown tool runtime: %s", shown);
        return false;
    }
    const size_t n = strlen(arg);
    bool ok = n < AGENT_RUNTIME_ARG_MAX;
    if (out->kind == AGENT_RUNTIME_SSH) {
        if (!ok || !valid_ssh_target(arg)) {
            snprintf(err, errlen, "invalid ssh target: %s", shown);
            return false;
        }
    } else if (!ok || !valid_container_word(arg, out->kind == AGENT_RUNTIME_IMAGE)) {
        snprintf(err, errlen, "invalid container %s: %s",
                 out->kind == AGENT_RUNTIME_IMAGE ? "image" : "id", shown);
        return false;
    }
    memcpy(out->arg, arg, n + 1);
    return true;
}

char *agent_shell_quote(const char *const *words) {
    size_t n = 1;
    for (size_t i = 0; words[i]; i++) {
        n += 3;
        for (const char *p = words[i]; *p; p++) n += *p == '\'' ? 4 : 1;
    }
    char *s = malloc(n), *q = s;
    if (!s) return NULL;
    for (size_t i = 0; words[i]; i++) {
        if (i) *q++ = ' ';
        *q++ = '\'';
        for (const char *p = words[i]; *p; p++) {
            if (*p == '\'') { // a quote cannot be escaped inside '...': close, escape, reopen
                memcpy(q, "'\\''", 4);
                q += 4;
            } else {
                *q++ = *p;
            }
        }
        *q++ = '\'';
    }
    *q = '\0';
    return s;
}

void agent_argv_free(char **argv) {
    if (!argv) return;
    for (size_t i = 0; argv[i]; i++) free(argv[i]);
    free(argv);
}

char **agent_runtime_argv(const agent_runtime *rt, const char *const *inner, bool stdin) {
    if (rt->kind == AGENT_RUNTIME_IMAGE) return NULL;
    size_t n_inner = 0;
    while (inner[n_inner]) n_inner++;
    // ssh: no terminal to ask a password or a host key on, so a prompt can never hang a call.
    static const char *const ssh[] = {"ssh",
                                      "-o",
                                      "BatchMode=yes",
                                      "-o",
                                      "PasswordAuthentication=no",
                                      "-o",
                                      "KbdInteractiveAuthentication=no",
                                      "-o",
                                      "StrictHostKeyChecking=yes",
                                      NULL};
    char **argv = calloc(n_inner + 16, sizeof *argv);
    if (!argv) return NULL;
    size_t k = 0;
    bool ok = true;
    if (rt->kind == AGENT_RUNTIME_CONTAINER) {
        ok &= !!(argv[k++] = strdup(rt->engine));
        ok &= !!(argv[k++] = strdup("exec"));
        if (stdin) ok &= !!(argv[k++] = strdup("-i"));
        ok &= !!(argv[k++] = strdup(rt->arg));
    } else if (rt->kind == AGENT_RUNTIME_SSH) {
        for (size_t i = 0; ssh[i]; i++) ok &= !!(argv[k++] = strdup(ssh[i]));
        if (!stdin) ok &= !!(argv[k++] = strdup("-n"));
        ok &= !!(argv[k++] = strdup(rt->arg));
        // The remote shell parses its command line again: inner travels as one quoted word.
        ok &= !!(argv[k++] = agent_shell_quote(inner));
        n_inner = 0;
    }
    for (size_t i = 0; i < n_inner; i++) ok &= !!(argv[k++] = strdup(inner[i]));
    if (!ok) {
        for (size_t i = 0; i < k; i++) free(argv[i]);
        free(argv);
        return NULL;
    }
    return argv;
}
