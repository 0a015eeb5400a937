// agent_request.h - the untrusted inputs of llama-server's agent tools endpoint (POST /tools),
// parsed and checked apart from the server so that a fuzz harness can drive them
// (tests/fuzz/fuzz_agent_request.c): the request body, and a tool runtime's name (the
// x-tool-runtime header or --tools-runtime), which becomes part of a command line.
//
// Runtimes, as llama-server names them: "docker-container:ID" and "podman-container:ID" run the
// tools in a running container (`ENGINE exec ID ...`), "docker:IMAGE" and "podman:IMAGE" start a
// container from an image (--tools-runtime only: a request may only attach), "ssh:TARGET" runs
// them on a host reached over ssh (key-based, BatchMode). An ID, IMAGE or TARGET that could be
// read as an option (a leading '-') or holds anything outside its character set is refused, and
// so is any other scheme: a request that asked for an isolate never falls back to the host.
#ifndef MINT_AGENT_REQUEST_H
#define MINT_AGENT_REQUEST_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

// A POST /tools body: {"tool": NAME, "params": {...}, "stream": bool}.
typedef struct agent_request {
    char *tool;          // the tool's name (malloc'd)
    json_object *params; // an object (owned): the client's params without "cwd", "runtime" and
                         // "resp_type", then those from the headers (agent_request_parse)
    bool stream;         // answer with server-sent events as output comes
} agent_request;

// Parses body[0..len) (no NUL needed). cwd, runtime and resp_type are the request's
// x-tool-cwd, x-tool-runtime (else --tools-runtime's) and x-resp-type values, NULL or "" when
// absent. False with one line in err when the body is not such an object.
bool agent_request_parse(const char *body, size_t len, const char *cwd, const char *runtime,
                         const char *resp_type, agent_request *out, char *err, size_t errlen);
void agent_request_free(agent_request *r);

typedef enum agent_runtime_kind {
    AGENT_RUNTIME_HOST,      // no runtime: the tools run here
    AGENT_RUNTIME_CONTAINER, // ENGINE exec ID
    AGENT_RUNTIME_IMAGE,     // ENGINE run IMAGE (--tools-runtime's own container)
    AGENT_RUNTIME_SSH,       // ssh TARGET
} agent_runtime_kind;

#define AGENT_RUNTIME_ARG_MAX 256

typedef struct agent_runtime {
    agent_runtime_kind kind;
    char engine[8];                  // "docker" or "podman" (CONTAINER, IMAGE)
    char arg[AGENT_RUNTIME_ARG_MAX]; // the container id, image or ssh target
} agent_runtime;

// Parses a runtime's name (NULL or "": the host). False with err naming the problem, in
// llama-server's words where a client checks them: "unknown tool runtime: ...", "invalid
// container id: ...", "invalid ssh target: ...".
bool agent_runtime_parse(const char *spec, agent_runtime *out, char *err, size_t errlen);

// The command line that runs inner (argc NULL-terminated words) in the runtime: inner itself on
// the host, ENGINE exec [-i] ID inner..., or ssh's options, [-n], TARGET and inner quoted into
// one word for the remote shell. stdin: the command reads its standard input. Returns a
// malloc'd NULL-terminated array of malloc'd words (agent_argv_free), NULL when out of memory
// or for an IMAGE runtime (which must first be started).
char **agent_runtime_argv(const agent_runtime *rt, const char *const *inner, bool stdin);
void agent_argv_free(char **argv);

// words quoted for a POSIX shell ('...' each, a ' as '\''), joined by spaces (malloc'd).
char *agent_shell_quote(const char *const *words);

#endif // MINT_AGENT_REQUEST_H
