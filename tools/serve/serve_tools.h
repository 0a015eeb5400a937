// serve_tools.h - the registry of agent tools behind GET/POST /tools (llama-server's
// experimental tools endpoint, which its web UI's agent calls). Tools come from sources: the
// built-in ones of --tools (tools_builtin.c) and any other provider (an MCP client listing its
// servers' tools as "<server>_<tool>"). A source registers itself once at start-up, before the
// HTTP daemon starts; from then on the registry is read-only, so the connection threads read it
// without a lock. A source's list and call may be called from several connection threads at
// once: it must be thread-safe itself.
//
// GET /tools answers the JSON array of every source's entries, in registration order; a name
// already listed by an earlier source is dropped (llama-server keeps the built-in tool when an
// MCP tool has the same name). POST /tools {"tool": NAME, "params": {...}, "stream": bool} asks
// each source in turn until one knows NAME (serve_tools_call). Without any source registered,
// both answer 403 (the feature is off).
#ifndef MINT_SERVE_TOOLS_H
#define MINT_SERVE_TOOLS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#define SERVE_TOOLS_MAX_SOURCES 8

// Where a streaming call (POST /tools with "stream": true) sends its output as it comes: each
// push becomes one server-sent event {"chunk": TEXT}. push returns false once the client is gone:
// the tool should stop (kill what it runs) and return. A push of 0 bytes sends nothing: a tool
// waiting on silent work probes with it now and then.
typedef struct serve_tool_stream {
    bool (*push)(struct serve_tool_stream *s, const char *chunk, size_t n);
    void *cls; // the HTTP side's state
} serve_tool_stream;

typedef enum serve_tool_status {
    SERVE_TOOL_OK,        // *result set (a JSON object the caller owns); a tool that ran and
                          // failed answers {"error": "..."} here (HTTP 200, as llama-server)
    SERVE_TOOL_NOT_MINE,  // this source has no tool of that name: the next source is asked
    SERVE_TOOL_NO_STREAM, // the tool cannot stream (HTTP 404)
    SERVE_TOOL_BAD,       // err set: the params do not have the tool's shape (HTTP 400)
    SERVE_TOOL_FAILED,    // err set: the call could not be made (HTTP 500): an unknown
                          // runtime, a process that could not start, an MCP server gone
} serve_tool_status;

// One source of tools. Copied by serve_tools_register; self stays the source's own.
typedef struct serve_tool_source {
    const char *name; // for log lines ("builtin", "mcp")
    // Appends one entry per tool to `list` (a JSON array), each in GET /tools' shape (see
    // serve_tool_entry).
    void (*list)(void *self, json_object *list);
    // Runs `tool` with `params` (a JSON object, borrowed; it holds "cwd" and "runtime" when the
    // request's x-tool-cwd / x-tool-runtime headers or --tools-runtime gave them, and
    // "resp_type" from x-resp-type; the client's own values of those keys are removed first).
    // stream is NULL for a plain call; when set, output goes through it and *result may be
    // left NULL. err holds errlen bytes.
    serve_tool_status (*call)(void *self, const char *tool, json_object *params,
                              serve_tool_stream *stream, json_object **result, char *err,
                              size_t errlen);
    void *self;
} serve_tool_source;

// Adds a source (before the HTTP daemon starts); false when SERVE_TOOLS_MAX_SOURCES are taken.
bool serve_tools_register(const serve_tool_source *src);
// Forgets every source (at shutdown, and between tests).
void serve_tools_clear(void);
// Whether any source is registered (else /tools answers 403).
bool serve_tools_enabled(void);

// One entry of GET /tools: {"display_name", "tool", "type" ("server" for the built-in ones,
// "mcp"), "permissions": {"write"}, "uses_cwd", "definition"}, definition (consumed) being
// OpenAI's function shape {"type": "function", "function": {"name", "description",
// "parameters"}}.
json_object *serve_tool_entry(const char *tool, const char *display_name, const char *type,
                              bool write, bool uses_cwd, json_object *definition);
// {"type": "function", "function": {"name", "description", "parameters"}} (parameters consumed;
// NULL: an object schema without properties).
json_object *serve_tool_definition(const char *name, const char *description,
                                   json_object *parameters);

// Every source's entries (a new array; names listed once, the first source's kept).
json_object *serve_tools_list(void);
// Runs `tool` through the first source that lists it: SERVE_TOOL_NOT_MINE when none does.
serve_tool_status serve_tools_call(const char *tool, json_object *params, serve_tool_stream *stream,
                                   json_object **result, char *err, size_t errlen);

#endif // MINT_SERVE_TOOLS_H
