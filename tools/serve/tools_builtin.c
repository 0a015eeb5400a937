// tools_builtin.c - the built-in tools as a source of serve_tools.h: which are on (--tools),
// their GET /tools entries (names, display names, permissions and OpenAI function definitions
// as llama-server lists them, so its web UI's agent sees the same tools), and the runtime they
// run in.
#include "tools_builtin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// One tool. params: its JSON schema's properties and required names (parsed at listing time;
// text, because a schema reads best as the JSON it is).
typedef struct builtin {
    const char *name, *display;
    bool write, stream;
    tool_fn fn;
    const char *description;
    const char *properties; // JSON object text
    const char *required;   // JSON array text
} builtin;

static const builtin BUILTINS[] = {
    {"read_file", "Read file", false, false, tool_read_file,
     "Read the contents of a file. Optionally specify a 1-based line range. If append_loc is "
     "true, each line is prefixed with its line number (e.g. \"1\xe2\x86\x92...\").",
     "{\"path\": {\"type\": \"string\", \"description\": \"Path to the file\"},"
     "\"start_line\": {\"type\": \"integer\", \"description\": \"First line to read, 1-based "
     "(default: 1)\"},"
     "\"end_line\": {\"type\": \"integer\", \"description\": \"Last line to read, 1-based "
     "inclusive (default: end of file)\"},"
     "\"append_loc\": {\"type\": \"boolean\", \"description\": \"Prefix each line with its line "
     "number\"}}",
     "[\"path\"]"},
    {"file_glob_search", "File search", false, false, tool_file_glob_search,
     "Recursively search for files matching a glob pattern under a directory. Skips common junk "
     "directories (.git, node_modules, build, dist, ...). A pattern without '/' (\"*.c\") "
     "matches a file's name at any depth; a pattern with '/' matches the whole relative path "
     "(\"**/\" is put before it unless it starts with \"**\" or '/'). type \"dir\" or \"all\" "
     "lists directories too (shown with a trailing '/').",
     "{\"path\": {\"type\": \"string\", \"description\": \"Base directory to search in\"},"
     "\"include\": {\"type\": \"string\", \"description\": \"Glob pattern of the entries to "
     "include (e.g. \\\"*.c\\\" or \\\"src/**/*.c\\\"; default: **)\"},"
     "\"exclude\": {\"type\": \"string\", \"description\": \"Glob pattern of entries to "
     "leave out\"},"
     "\"type\": {\"type\": \"string\", \"description\": \"Entries to return: \\\"file\\\" "
     "(default), \\\"dir\\\" or \\\"all\\\"\"},"
     "\"max_depth\": {\"type\": \"integer\", \"description\": \"Levels to descend (default 0: "
     "all; 1: the directory's own entries)\"},"
     "\"limit\": {\"type\": \"integer\", \"description\": \"Most results to return, at most "
     "100 (default 100)\"}}",
     "[\"path\"]"},
    {"grep_search", "Grep search", false, false, tool_grep_search,
     "Search for a regular expression (PCRE2) in the files under a path. Returns the matching "
     "lines with their files' paths (relative to the directory searched). Skips common junk "
     "directories. include/exclude: a pattern without '/' matches a file's name at any depth, "
     "one with '/' the whole relative path.",
     "{\"path\": {\"type\": \"string\", \"description\": \"File or directory to search in\"},"
     "\"pattern\": {\"type\": \"string\", \"description\": \"Pattern to search for (a regular "
     "expression unless literal is true)\"},"
     "\"include\": {\"type\": \"string\", \"description\": \"Glob pattern of the files to "
     "search (default: **)\"},"
     "\"exclude\": {\"type\": \"string\", \"description\": \"Glob pattern of files to leave "
     "out\"},"
     "\"return_line_numbers\": {\"type\": \"boolean\", \"description\": \"Show line "
     "numbers\"},"
     "\"literal\": {\"type\": \"boolean\", \"description\": \"The pattern is plain text, not a "
     "regular expression (default: false)\"},"
     "\"ignore_case\": {\"type\": \"boolean\", \"description\": \"Case-insensitive (default: "
     "false)\"},"
     "\"context_lines\": {\"type\": \"integer\", \"description\": \"Lines shown before and "
     "after each match (default: 0)\"}}",
     "[\"path\", \"pattern\"]"},
    {"exec_shell_command", "Execute shell command", true, true, tool_exec_shell_command,
     "Run a shell command and return its output (stdout and stderr together) and exit code.",
     "{\"command\": {\"type\": \"string\", \"description\": \"Shell command to run\"},"
     "\"timeout\": {\"type\": \"integer\", \"description\": \"Time limit in seconds (default "
     "10, at most 60)\"},"
     "\"max_output_size\": {\"type\": \"integer\", \"description\": \"Most bytes of output "
     "kept (default and most 16384)\"}}",
     "[\"command\"]"},
    {"write_file", "Write file", true, false, tool_write_file,
     "Write content to a file, creating it and its parent directories when missing. Use "
     "edit_file to change part of a file.",
     "{\"path\": {\"type\": \"string\", \"description\": \"Path of the file to write\"},"
     "\"content\": {\"type\": \"string\", \"description\": \"Content to write\"}}",
     "[\"path\", \"content\"]"},
    {"edit_file", "Edit file", true, false, tool_edit_file,
     "Edit a file by exact text replacement. Each edits[].old_text must occur exactly once in "
     "the file and is matched against the original content (not after the earlier edits); "
     "edits must not overlap: merge nearby changes into one edit. Use write_file to replace "
     "the whole file.",
     "{\"path\": {\"type\": \"string\", \"description\": \"Path of the file to edit\"},"
     "\"edits\": {\"type\": \"array\", \"description\": \"One or more exact replacements\","
     "\"items\": {\"type\": \"object\", \"properties\": {"
     "\"old_text\": {\"type\": \"string\", \"description\": \"Exact text to find: unique in the "
     "file, not overlapping another edit's\"},"
     "\"new_text\": {\"type\": \"string\", \"description\": \"Text to put in its place\"}},"
     "\"required\": [\"old_text\", \"new_text\"]}}}",
     "[\"path\", \"edits\"]"},
    {"get_info", "Get Runtime Info", false, false, tool_get_info,
     "Returns runtime info: the OS name and version, and the current working directory.", "{}",
     NULL},
};
#define N_BUILTINS (sizeof BUILTINS / sizeof BUILTINS[0])

static bool enabled[N_BUILTINS];  // --tools' choice
static char default_runtime[300]; // --tools-runtime (a container started for it: its id)

static void list(void *self, json_object *out) {
    (void)self;
    for (size_t i = 0; i < N_BUILTINS; i++) {
        if (!enabled[i]) continue;
        const builtin *b = &BUILTINS[i];
        json_object *params = json_object_new_object();
        json_object_object_add(params, "type", json_object_new_string("object"));
        json_object *props = json_tokener_parse(b->properties);
        json_object_object_add(params, "properties", props ? props : json_object_new_object());
        if (b->required)
            json_object_object_add(params, "required", json_tokener_parse(b->required));
        json_object_array_add(
            out, serve_tool_entry(b->name, b->display, "server", b->write, true,
                                  serve_tool_definition(b->name, b->description, params)));
    }
}

static serve_tool_status call(void *self, const char *tool, json_object *params,
                              serve_tool_stream *stream, json_object **result, char *err,
                              size_t errlen) {
    (void)self;
    const builtin *b = NULL;
    for (size_t i = 0; i < N_BUILTINS && !b; i++)
        if (enabled[i] && !strcmp(BUILTINS[i].name, tool)) b = &BUILTINS[i];
    if (!b) return SERVE_TOOL_NOT_MINE;
    if (stream && !b->stream) {
        snprintf(err, errlen, "tool \"%s\" does not support stream = true", tool);
        return SERVE_TOOL_NO_STREAM;
    }
    tool_io io;
    const serve_tool_status st =
        tool_io_open(params, default_runtime[0] ? default_runtime : NULL, &io, err, errlen);
    if (st != SERVE_TOOL_OK) return st;
    return b->fn(params, &io, stream, result, err, errlen);
}

bool tools_builtin_start(const char *names, const char *runtime, char *err, size_t errlen) {
    memset(enabled, 0, sizeof enabled);
    for (const char *p = names; *p;) {
        const size_t n = strcspn(p, ",");
        bool known = n == 3 && !strncmp(p, "all", 3);
        for (size_t i = 0; i < N_BUILTINS; i++)
            if ((n == 3 && !strncmp(p, "all", 3)) ||
                (strlen(BUILTINS[i].name) == n && !strncmp(p, BUILTINS[i].name, n)))
                enabled[i] = known = true;
        if (!known) {
            snprintf(err, errlen, "--tools: unknown tool \"%.*s\" (available tools: %s)",
                     (int)(n > 64 ? 64 : n), p, TOOLS_BUILTIN_NAMES);
            return false;
        }
        p += n + (p[n] == ',');
    }
    default_runtime[0] = '\0';
    if (runtime && *runtime) {
        agent_runtime rt;
        char msg[300];
        if (!agent_runtime_parse(runtime, &rt, msg, sizeof msg)) {
            snprintf(err, errlen, "--tools-runtime: %s", msg);
            return false;
        }
        if (rt.kind == AGENT_RUNTIME_IMAGE) { // see README: attach to a container you start
            snprintf(err, errlen,
                     "--tools-runtime %s:IMAGE: mint-serve does not start containers; start one "
                     "(%s run -d IMAGE sleep infinity) and give %s-container:ID",
                     rt.engine, rt.engine, rt.engine);
            return false;
        }
        snprintf(default_runtime, sizeof default_runtime, "%s", runtime);
    }
    const serve_tool_source src = {"builtin", list, call, NULL};
    if (!serve_tools_register(&src)) {
        snprintf(err, errlen, "too many sources of tools");
        return false;
    }
    return true;
}
