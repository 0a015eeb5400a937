// mcp_client.h - one MCP server's process and its JSON-RPC session over the process's stdin and
// stdout (one message per line), as llama-server's --mcp-servers-json runs them: the process is
// started with pipes on its standard streams, initialized once (initialize, then the
// notifications/initialized notification), and asked tools/list or tools/call. Every wait is a
// poll in short slices bounded by the request's time limit and the owner's stop flag, so that no
// server (slow, silent, or with a grandchild holding its pipes open) can hold a thread.
#ifndef MINT_SERVE_MCP_CLIENT_H
#define MINT_SERVE_MCP_CLIENT_H

#include "mcp_proto.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct mcp_client mcp_client;

// Starts conf's command (conf must outlive the client) in a process group of its own, so that
// what it starts ends with it. stop: a flag that, once set, makes every wait return at once
// (shared with the owner; may be NULL). NULL with one line in err when the program cannot run.
mcp_client *mcp_client_start(const mcp_server_conf *conf, const atomic_bool *stop, char *err,
                             size_t errlen);
// Whether the process still runs and its pipes work (never waits behind a request in flight).
bool mcp_client_alive(mcp_client *c);
// Its tools, initializing the session first when needed. max_s: a limit in seconds on the whole
// exchange below the server's own timeout_ms (0: none). Returns how many (*out: see
// mcp_tools_from_result), or -1 with one line in err.
int mcp_client_list(mcp_client *c, double max_s, mcp_tool **out, char *err, size_t errlen);
// Calls one tool with args (a JSON object, or NULL): POST /tools' answer, {"plain_text_response"}
// or {"error"} (mcp_call_answer), never NULL but when out of memory. Concurrent calls take turns.
json_object *mcp_client_call(mcp_client *c, const char *tool, json_object *args);
// Adds a holder; mcp_client_release drops one: at the last, the process is asked to end (its
// stdin closed), then terminated, then killed with its group, reaped, and c freed.
void mcp_client_ref(mcp_client *c);
void mcp_client_release(mcp_client *c);

#endif // MINT_SERVE_MCP_CLIENT_H
