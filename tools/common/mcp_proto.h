// mcp_proto.h - the text side of MCP (Model Context Protocol) servers as llama-server runs them
// (--mcp-servers-json, --mcp-servers-config): the "mcpServers" configuration (Cursor's format),
// the JSON-RPC 2.0 messages a client sends over a server's stdin (one per line), and the reading
// of the lines a server writes back (answers, notifications, noise). Pure functions on text, kept
// apart from the processes (tools/serve/mcp_client.c) so that the fuzz harness
// (tests/fuzz/fuzz_mcp.c) drives them: both the configuration and the lines are untrusted input.
#ifndef MINT_MCP_PROTO_H
#define MINT_MCP_PROTO_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MCP_TIMEOUT_MS_DEFAULT 30000        // a call's time limit when "timeout_ms" is absent
#define MCP_TIMEOUT_MS_MAX     86400000     // one day: larger is refused as a mistake
#define MCP_MAX_SERVERS        64           // servers across both flags
#define MCP_MAX_ARGS           4096         // "args" or "env" entries of one server
#define MCP_PROTOCOL_VERSION   "2024-11-05" // the version llama-server announces

// One server of the configuration.
typedef struct mcp_server_conf {
    char *name;     // its key under "mcpServers": the prefix of its tools ("<name>_<tool>")
    char *command;  // the program (looked up on PATH when it has no '/'), never empty
    char **args;    // [n_args] its arguments
    int n_args;     //
    char **env;     // [n_env] "KEY=VALUE" set over mint-serve's environment
    int n_env;      //
    char *cwd;      // its working directory, or NULL: mint-serve's
    int timeout_ms; // how long one request to it may take (1 .. MCP_TIMEOUT_MS_MAX)
} mcp_server_conf;

// The servers of every configuration given, in order, names unique.
typedef struct mcp_config {
    mcp_server_conf *servers; // [n]
    int n;
} mcp_config;

// Called with one line for an entry that is skipped (no command, a name already taken) or a text
// that names no server; the configuration is still valid.
typedef void (*mcp_note_fn)(void *ctx, const char *line);

// Adds the servers of one configuration text ({"mcpServers": {NAME: {"command", "args", "env",
// "cwd", "timeout_ms"}}}) to cfg. Like llama-server: a text without an "mcpServers" object names no
// server, an entry without a command is skipped, a name seen before is skipped. False (cfg
// unchanged, one line in err) for a text that is not JSON or a field of the wrong type.
bool mcp_config_add(mcp_config *cfg, const char *text, size_t len, mcp_note_fn note, void *ctx,
                    char *err, size_t errlen);
void mcp_config_free(mcp_config *cfg);

// The messages a client sends, as one line without its '\n' (malloc'd; NULL: out of memory).
char *mcp_msg_initialize(uint64_t id, const char *client_name, const char *client_version);
char *mcp_msg_initialized(void); // the notification that follows initialize's answer
char *mcp_msg_list_tools(uint64_t id);
// A tools/call with args, a JSON object (NULL: {}).
char *mcp_msg_call(uint64_t id, const char *tool, json_object *args);

// What one line from a server is, for a client waiting for the answer to one id.
typedef enum mcp_line_kind {
    MCP_LINE_JUNK,   // not a JSON object: skipped (a server's stray output)
    MCP_LINE_OTHER,  // a notification, a request of the server, or an answer to another id
    MCP_LINE_RESULT, // the answer, with a "result"
    MCP_LINE_ERROR,  // the answer, with an "error" (or neither: a malformed answer)
} mcp_line_kind;

// Reads one line (len bytes, no NUL needed). For the answer to id: MCP_LINE_RESULT with *result
// its "result" (a new reference, the caller puts it), or MCP_LINE_ERROR with the error's message
// in err. *result is NULL otherwise.
mcp_line_kind mcp_read_line(const char *line, size_t len, uint64_t id, json_object **result,
                            char *err, size_t errlen);

// A tool a server offers.
typedef struct mcp_tool {
    char *name;              // its own name (without the server's prefix), non-empty
    char *description;       // its description ("" when none)
    json_object *parameters; // its inputSchema when an object, else {} (owned)
} mcp_tool;

// The tools of a tools/list result ({"tools": [{"name", "description", "inputSchema"}]}): entries
// without a string name are left out. Returns how many (*out malloc'd, NULL for none).
int mcp_tools_from_result(json_object *result, mcp_tool **out);
void mcp_tools_free(mcp_tool *t, int n);

// What POST /tools answers for a tools/call result: {"plain_text_response": its text parts, one
// per line} or, when the result says isError, {"error": that text}. A new object.
json_object *mcp_call_answer(json_object *result);

#endif // MINT_MCP_PROTO_H
