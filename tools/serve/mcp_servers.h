// mcp_servers.h - the MCP servers of --mcp-servers-config and --mcp-servers-json, and their tools,
// as llama-server offers them: each server is started once at start-up to list its tools (then
// stopped), its tools are named "<server>_<tool>", and a call starts the server again when it is
// not running (a server that exited is replaced; one that cannot start is not tried again for a
// few seconds). A server that cannot start or answer at start-up only loses its tools.
#ifndef MINT_SERVE_MCP_SERVERS_H
#define MINT_SERVE_MCP_SERVERS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct mcp_set mcp_set;

// Reads the configuration: the file (or NULL), then the inline JSON (or NULL). NULL with one line
// in err when a file cannot be read or a configuration is invalid; an empty set when neither
// names a server. Starts nothing.
mcp_set *mcp_set_new(const char *file, const char *json, char *err, size_t errlen);
// How many servers the configuration names.
int mcp_set_servers(const mcp_set *s);
// Starts each server once, lists its tools (at most warmup_s seconds each), stops it. Prints a
// line per server on stderr.
void mcp_set_warm_up(mcp_set *s, double warmup_s);
// The tools found at warm-up, in the servers' order, names unique.
int mcp_set_tools(const mcp_set *s);
const char *mcp_set_tool_name(const mcp_set *s, int i);        // "<server>_<tool>"
const char *mcp_set_tool_description(const mcp_set *s, int i); // the server's words, or ""
// {"type": "function", "function": {"name", "description", "parameters"}}: a new object.
json_object *mcp_set_tool_definition(const mcp_set *s, int i);
// The index of the tool named name, or -1.
int mcp_set_find(const mcp_set *s, const char *name);
// Calls tool i with params (a JSON object, or NULL): {"plain_text_response"} or {"error"}, a new
// object. Safe from any number of threads; calls to one server take turns.
json_object *mcp_set_call(mcp_set *s, int i, json_object *params);
// Registers the tools as a source of GET/POST /tools (serve_tools.h), type "mcp"; false when the
// registry is full. Before the HTTP daemon starts.
bool mcp_set_register(mcp_set *s);
// Makes calls in flight return (cancelled) and refuses new ones; returns at once.
void mcp_set_stop(mcp_set *s);
// Stops every server still running and frees s (after mcp_set_stop, no call in flight).
void mcp_set_free(mcp_set *s);

#endif // MINT_SERVE_MCP_SERVERS_H
