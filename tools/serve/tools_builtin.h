// tools_builtin.h - mint-serve's built-in agent tools (--tools), llama-server's set: read_file,
// file_glob_search, grep_search, exec_shell_command, write_file, edit_file, get_info. The source
// (tools_builtin.c) registers them with serve_tools.h; the tools are in tools_files.c (read,
// write, edit), tools_search.c (glob, grep) and tools_exec.c (shell, info), on top of
// tools_io.c (where files and commands are: the host, a container or an ssh host) and
// tools_proc.c (child processes, bounded in time and output, always reaped); tools_params.c
// reads their params.
#ifndef MINT_SERVE_TOOLS_BUILTIN_H
#define MINT_SERVE_TOOLS_BUILTIN_H

#include "agent_request.h"
#include "serve_tools.h"

#include <stdbool.h>
#include <stddef.h>

#define TOOLS_BUILTIN_NAMES                                                                        \
    "read_file, file_glob_search, grep_search, exec_shell_command, write_file, edit_file, "        \
    "get_info"

// Registers the tools named in `names` ("all", or ',' separated names) with serve_tools.h, run
// in `runtime` (--tools-runtime, or NULL: the host) unless a request names its own. False with
// err when a name or the runtime is unknown (a usage error).
bool tools_builtin_start(const char *names, const char *runtime, char *err, size_t errlen);

// ---- internal: between the parts of the built-in tools ----

// Where a call's files and commands are: its working directory and runtime.
typedef struct tool_io {
    const char *cwd;  // x-tool-cwd, or NULL: the server's own
    agent_runtime rt; // AGENT_RUNTIME_HOST, _CONTAINER or _SSH
} tool_io;

typedef enum tool_kind { TOOL_NONE, TOOL_FILE, TOOL_DIR } tool_kind;

// A child process's result.
typedef struct tool_run_result {
    char *out; // [len] its output (stdout, and stderr unless kept apart), malloc'd
    size_t len;
    int exit_code;  // its exit status (-1: killed by a signal or never started)
    bool timed_out; // killed at the time limit
    bool stopped;   // killed because on_chunk answered false
    bool truncated; // output beyond max_output was dropped
} tool_run_result;

// Called with each piece of output as it arrives, and with n = 0 while none does (about every
// 100 ms); false stops (kills) the process.
typedef bool (*tool_chunk_fn)(void *cls, const char *s, size_t n);

// tools_proc.c: runs argv (argv[0] looked up in PATH) in cwd (NULL: here) with `in` on its
// standard input (NULL: none), stderr merged unless separate_err, for at most timeout_s seconds
// (then SIGKILL to its process group); output past max_output is read and dropped. The child is
// always reaped before this returns. False with err when it cannot start.
bool tool_run(char *const *argv, const char *cwd, const char *in, size_t in_len, bool separate_err,
              size_t max_output, int timeout_s, tool_chunk_fn on_chunk, void *cls,
              tool_run_result *res, char *err, size_t errlen);
void tool_run_result_free(tool_run_result *r);

// tools_io.c
// The call's io from params' "cwd" and "runtime" (default_rt: --tools-runtime's, or NULL):
// SERVE_TOOL_FAILED with err for an unknown or unsafe runtime.
serve_tool_status tool_io_open(json_object *params, const char *default_rt, tool_io *io, char *err,
                               size_t errlen);
// path made absolute (a leading ~ is $HOME on the host; relative: under cwd), "." and ".."
// folded away; malloc'd.
char *tool_io_resolve(const tool_io *io, const char *path);
tool_kind tool_io_kind(const tool_io *io, const char *path);
// Reads at most max bytes (more: false with *too_big set); *data is NUL-terminated.
bool tool_io_read(const tool_io *io, const char *path, size_t max, char **data, size_t *len,
                  bool *too_big);
bool tool_io_size(const tool_io *io, const char *path, size_t *size);
// Writes data, making the missing parent directories.
bool tool_io_write(const tool_io *io, const char *path, const char *data, size_t len);
// Runs inner (NULL-terminated) in the io's place and working directory.
bool tool_io_run(const tool_io *io, const char *const *inner, size_t max_output, int timeout_s,
                 tool_chunk_fn on_chunk, void *cls, tool_run_result *res, char *err, size_t errlen);

// One entry of a listing: a path relative to its base, '/' separated.
typedef struct tool_entry {
    char *rel;
    bool dir;
} tool_entry;
typedef struct tool_list {
    tool_entry *e; // [n]
    size_t n, cap;
    bool truncated; // the walk ran out of time, or a directory could not be read
} tool_list;
// Lists base (absolute) down to max_depth levels (0: all) as files, dirs or both; junk
// directories (.git, node_modules, build, ...) are listed but never entered, links never
// followed. False when base is not a directory.
bool tool_io_list(const tool_io *io, const char *base, int max_depth, bool files, bool dirs,
                  tool_list *out);
void tool_list_free(tool_list *l);
// The tools: each fills *result (a JSON object; {"error": ...} for a failure of the tool's
// own) or returns SERVE_TOOL_BAD / _FAILED with err.
typedef serve_tool_status (*tool_fn)(json_object *params, const tool_io *io,
                                     serve_tool_stream *stream, json_object **result, char *err,
                                     size_t errlen);
serve_tool_status tool_read_file(json_object *, const tool_io *, serve_tool_stream *,
                                 json_object **, char *, size_t);
serve_tool_status tool_write_file(json_object *, const tool_io *, serve_tool_stream *,
                                  json_object **, char *, size_t);
serve_tool_status tool_edit_file(json_object *, const tool_io *, serve_tool_stream *,
                                 json_object **, char *, size_t);
serve_tool_status tool_file_glob_search(json_object *, const tool_io *, serve_tool_stream *,
                                        json_object **, char *, size_t);
serve_tool_status tool_grep_search(json_object *, const tool_io *, serve_tool_stream *,
                                   json_object **, char *, size_t);
serve_tool_status tool_exec_shell_command(json_object *, const tool_io *, serve_tool_stream *,
                                          json_object **, char *, size_t);
serve_tool_status tool_get_info(json_object *, const tool_io *, serve_tool_stream *, json_object **,
                                char *, size_t);

// Param readers: false with err ("missing or not a string: \"path\"") when a required one is
// absent or of another type; an optional one takes def when absent.
bool tool_param_str(json_object *params, const char *key, bool required, const char *def,
                    const char **out, char *err, size_t errlen);
bool tool_param_int(json_object *params, const char *key, int def, int *out, char *err,
                    size_t errlen);
bool tool_param_bool(json_object *params, const char *key, bool def, bool *out, char *err,
                     size_t errlen);
// {"error": msg} (printf-style).
json_object *tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif // MINT_SERVE_TOOLS_BUILTIN_H
