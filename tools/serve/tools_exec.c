// tools_exec.c - exec_shell_command (sh -c COMMAND in the request's working directory and
// runtime, its output and exit code; streamed as it comes when asked) and get_info (uname -a and
// the working directory), with llama-server's limits: at most 60 s (default 10) and 16 KiB of
// output. The process handling (time limit, group kill, reaping) is tools_proc.c's.
#include "reply.h"
#include "tools_builtin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXEC_MAX_OUTPUT (16 * 1024) // bytes of a command's output kept
#define EXEC_MAX_TIME   60          // seconds a command may run
#define INFO_TIME       5           // seconds for uname and pwd

static bool push_chunk(void *cls, const char *s, size_t n) {
    serve_tool_stream *st = cls;
    return st->push(st, s, n);
}

serve_tool_status tool_exec_shell_command(json_object *params, const tool_io *io,
                                          serve_tool_stream *st, json_object **result, char *err,
                                          size_t errlen) {
    const char *command;
    int timeout, max_output;
    if (!tool_param_str(params, "command", true, NULL, &command, err, errlen) ||
        !tool_param_int(params, "timeout", 10, &timeout, err, errlen) ||
        !tool_param_int(params, "max_output_size", EXEC_MAX_OUTPUT, &max_output, err, errlen))
        return SERVE_TOOL_BAD;
    timeout = timeout < 1 ? 1 : timeout > EXEC_MAX_TIME ? EXEC_MAX_TIME : timeout;
    max_output = max_output < 0 ? 0 : max_output > EXEC_MAX_OUTPUT ? EXEC_MAX_OUTPUT : max_output;
    const char *argv[] = {"sh", "-c", command, NULL};
    tool_run_result r;
    if (!tool_io_run(io, argv, (size_t)max_output, timeout, st ? push_chunk : NULL, st, &r, err,
                     errlen))
        return SERVE_TOOL_FAILED;
    char tail[96];
    snprintf(tail, sizeof tail, "%s\n[exit code: %d]%s", r.truncated ? "\n[output truncated]" : "",
             r.exit_code, r.timed_out ? " [exit due to timed out]" : "");
    if (st) { // the output went out as it came; only the tail is left
        if (!r.stopped) st->push(st, tail, strlen(tail));
        tool_run_result_free(&r);
        return SERVE_TOOL_OK;
    }
    char *text = malloc(r.len + strlen(tail) + 1);
    if (!text) {
        tool_run_result_free(&r);
        snprintf(err, errlen, "out of memory");
        return SERVE_TOOL_FAILED;
    }
    memcpy(text, r.out, r.len);
    strcpy(text + r.len, tail);
    *result = json_object_new_object();
    // Bytes as the command wrote them: NULs kept, invalid UTF-8 shown as U+FFFD.
    json_object_object_add(*result, "plain_text_response",
                           reply_utf8_string(text, r.len + strlen(tail)));
    free(text);
    tool_run_result_free(&r);
    return SERVE_TOOL_OK;
}

// s without its leading and trailing white space (in place).
static char *strip(char *s) {
    while (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

serve_tool_status tool_get_info(json_object *params, const tool_io *io, serve_tool_stream *st,
                                json_object **result, char *err, size_t errlen) {
    (void)params, (void)st;
    const char *uname[] = {"uname", "-a", NULL}, *pwd[] = {"pwd", NULL};
    tool_run_result r = {0};
    char msg[256];
    const bool ok = tool_io_run(io, uname, 4096, INFO_TIME, NULL, NULL, &r, msg, sizeof msg);
    *result = json_object_new_object();
    json_object_object_add(
        *result, "os",
        json_object_new_string(ok && r.exit_code == 0 && !r.timed_out ? strip(r.out) : "unknown"));
    tool_run_result_free(&r);
    char here[4096];
    const char *cwd = io->cwd;
    if (!cwd && io->rt.kind == AGENT_RUNTIME_HOST) cwd = getcwd(here, sizeof here);
    if (!cwd && io->rt.kind != AGENT_RUNTIME_HOST &&
        tool_io_run(io, pwd, 4096, INFO_TIME, NULL, NULL, &r, msg, sizeof msg) &&
        r.exit_code == 0 && !r.timed_out) {
        snprintf(here, sizeof here, "%s", strip(r.out));
        cwd = here;
    }
    tool_run_result_free(&r);
    json_object_object_add(*result, "cwd", json_object_new_string(cwd ? cwd : "unknown"));
    (void)err, (void)errlen;
    return SERVE_TOOL_OK;
}
