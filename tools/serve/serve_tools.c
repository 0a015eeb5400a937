// serve_tools.c - the registry of agent tool sources (serve_tools.h): filled once before the
// HTTP daemon starts and only read afterwards, so the connection threads need no lock.
#include "serve_tools.h"

#include <string.h>

static serve_tool_source sources[SERVE_TOOLS_MAX_SOURCES]; // [n_sources] in registration order
static int n_sources;

bool serve_tools_register(const serve_tool_source *src) {
    if (!src || !src->list || !src->call || n_sources == SERVE_TOOLS_MAX_SOURCES) return false;
    sources[n_sources++] = *src;
    return true;
}

void serve_tools_clear(void) {
    n_sources = 0;
}

bool serve_tools_enabled(void) {
    return n_sources > 0;
}

json_object *serve_tool_definition(const char *name, const char *description,
                                   json_object *parameters) {
    if (!parameters) {
        parameters = json_object_new_object();
        json_object_object_add(parameters, "type", json_object_new_string("object"));
        json_object_object_add(parameters, "properties", json_object_new_object());
    }
    json_object *fn = json_object_new_object();
    json_object_object_add(fn, "name", json_object_new_string(name));
    json_object_object_add(fn, "description", json_object_new_string(description));
    json_object_object_add(fn, "parameters", parameters);
    json_object *d = json_object_new_object();
    json_object_object_add(d, "type", json_object_new_string("function"));
    json_object_object_add(d, "function", fn);
    return d;
}

json_object *serve_tool_entry(const char *tool, const char *display_name, const char *type,
                              bool write, bool uses_cwd, json_object *definition) {
    json_object *e = json_object_new_object();
    json_object_object_add(e, "display_name", json_object_new_string(display_name));
    json_object_object_add(e, "tool", json_object_new_string(tool));
    json_object_object_add(e, "type", json_object_new_string(type));
    json_object *perm = json_object_new_object();
    json_object_object_add(perm, "write", json_object_new_boolean(write));
    json_object_object_add(e, "permissions", perm);
    json_object_object_add(e, "uses_cwd", json_object_new_boolean(uses_cwd));
    json_object_object_add(e, "definition", definition);
    return e;
}

// The "tool" name of an entry, or "".
static const char *entry_name(json_object *e) {
    json_object *t;
    return json_object_object_get_ex(e, "tool", &t) ? json_object_get_string(t) : "";
}

json_object *serve_tools_list(void) {
    json_object *all = json_object_new_array();
    for (int s = 0; s < n_sources; s++) {
        json_object *mine = json_object_new_array();
        sources[s].list(sources[s].self, mine);
        for (size_t i = 0; i < json_object_array_length(mine); i++) {
            json_object *e = json_object_array_get_idx(mine, i);
            const char *name = entry_name(e);
            bool seen = false; // an earlier source's tool of the same name wins
            for (size_t k = 0; k < json_object_array_length(all) && !seen; k++)
                seen = !strcmp(entry_name(json_object_array_get_idx(all, k)), name);
            if (!seen) json_object_array_add(all, json_object_get(e));
        }
        json_object_put(mine);
    }
    return all;
}

serve_tool_status serve_tools_call(const char *tool, json_object *params, serve_tool_stream *stream,
                                   json_object **result, char *err, size_t errlen) {
    *result = NULL;
    for (int s = 0; s < n_sources; s++) {
        const serve_tool_status st =
            sources[s].call(sources[s].self, tool, params, stream, result, err, errlen);
        if (st != SERVE_TOOL_NOT_MINE) return st;
    }
    return SERVE_TOOL_NOT_MINE;
}
