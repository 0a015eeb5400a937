// test_serve_tools.c - mint-serve's agent tools (--tools: GET/POST /tools) and CORS proxy
// (--ui-mcp-proxy: /cors-proxy), as llama-server's web UI meets them, against a live server on
// loopback: off by default (403), the tool list's shape, each file tool on a temporary folder
// (the file system itself is the oracle: what was written is read back with the C library),
// the working-directory header, shell commands (exit code, streaming, a time limit that kills
// the whole process group), runtime names that would inject options refused, bad bodies
// answered with JSON errors, the proxy forwarding only explicit headers (a python3 http.server
// records what arrives), router mode answering them itself, and the runtime-name parser and
// shell quoting (sh is the oracle).
#include "agent_glob.h"
#include "agent_request.h"
#include "helpers/helpers.h"
#include "helpers/server.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *stories(void) {
    static char path[4096];
    snprintf(path, sizeof path, "%s", mt_data_path("stories260K.gguf"));
    return path;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// POST /tools {"tool": tool, "params": params}; the parsed answer (status 200 asserted).
static json_object *call(const mt_server *s, const char *tool, const char *params,
                         const char *headers) {
    char body[8192];
    snprintf(body, sizeof body, "{\"tool\":\"%s\",\"params\":%s}", tool, params);
    mt_resp r = mt_http(s, "POST", "/tools", body, headers);
    cr_assert_eq(r.status, 200, "%s %s: %d %s", tool, params, r.status, r.body);
    json_object *o = json_tokener_parse(r.body);
    cr_assert(o, "%s", r.body);
    mt_resp_free(&r);
    return o;
}

static const char *text_of(json_object *o) {
    const char *t = mt_jstr(o, "plain_text_response");
    cr_assert(json_object_object_get_ex(o, "plain_text_response", NULL), "%s",
              json_object_to_json_string(o));
    return t;
}

Test(serve_tools, off_by_default_403, .timeout = MT_HANG(120)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' -np 1", stories());
    const char *paths[] = {"/tools", "/cors-proxy?url=http://127.0.0.1:1/"};
    for (int i = 0; i < 2; i++) {
        mt_resp r = mt_http(&s, "GET", paths[i], NULL, NULL);
        cr_assert_eq(r.status, 403, "%s: %s", paths[i], r.body);
        cr_assert(strstr(r.body, "\"feature_disabled\"") && strstr(r.body, "disabled"), "%s",
                  r.body);
        mt_resp_free(&r);
    }
    mt_resp r = mt_http(&s, "POST", "/tools",
                        "{\"tool\":\"exec_shell_command\",\"params\":"
                        "{\"command\":\"echo hi\"}}",
                        NULL);
    cr_assert_eq(r.status, 403, "%s", r.body);
    mt_resp_free(&r);
    // Without --tools any page may call (*); with it only this machine's pages (llama-server).
    r = mt_http(&s, "OPTIONS", "/v1/models", NULL, "-H 'Origin: http://evil.com'");
    cr_assert(strstr(r.headers, "Access-Control-Allow-Origin: http://evil.com"), "%s", r.headers);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve_tools, list_and_file_tools_on_a_temporary_folder, .timeout = MT_HANG(180)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' -np 1 --tools all", stories());
    mt_resp r = mt_http(&s, "GET", "/tools", NULL, NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    json_object *list = json_tokener_parse(r.body);
    mt_resp_free(&r);
    const char *names[] = {"read_file",  "file_glob_search", "grep_search", "exec_shell_command",
                           "write_file", "edit_file",        "get_info"};
    cr_assert_eq(json_object_array_length(list), 7);
    for (size_t i = 0; i < 7; i++) {
        json_object *e = json_object_array_get_idx(list, i);
        cr_assert_str_eq(mt_jstr(e, "tool"), names[i]);
        cr_assert_str_eq(mt_jpath_str(e, "definition.type"), "function");
        cr_assert_str_eq(mt_jpath_str(e, "definition.function.name"), names[i]);
        cr_assert_str_eq(mt_jpath_str(e, "definition.function.parameters.type"), "object");
        cr_assert(mt_jpath(e, "definition.function.parameters.properties"));
        cr_assert_str_eq(mt_jstr(e, "type"), "server");
    }
    json_object_put(list);

    char dir[2048]; // a folder of its own (mt_tmpdir() holds the requests' files)
    snprintf(dir, sizeof dir, "%s", mt_path(mt_tmpdir(), "work"));
    mkdir(dir, 0755);
    char params[4096], hdr[4200];
    snprintf(params, sizeof params, "{\"path\":\"%s/sub/a.txt\",\"content\":\"one\\ntwo\\n\"}",
             dir);
    json_object *o = call(&s, "write_file", params, NULL);
    cr_assert_str_eq(mt_jstr(o, "result"), "file written successfully");
    json_object_put(o);
    size_t len;
    char *got = (char *)mt_read_file(mt_path(dir, "sub/a.txt"), &len);
    cr_assert(got && !strcmp(got, "one\ntwo\n"), "the parent folder is made, the bytes written");
    free(got);
    // Relative paths resolve under x-tool-cwd, which overrides a "cwd" the model put in params.
    snprintf(hdr, sizeof hdr, "-H 'x-tool-cwd: %s'", dir);
    o = call(&s, "read_file",
             "{\"path\":\"sub/../sub/a.txt\",\"append_loc\":true,\"cwd\":\"/nonexistent\"}", hdr);
    cr_assert_str_eq(text_of(o), "1\xe2\x86\x92one\n2\xe2\x86\x92two\n");
    json_object_put(o);
    o = call(&s, "read_file", "{\"path\":\"sub/a.txt\",\"start_line\":2,\"end_line\":2}", hdr);
    cr_assert_str_eq(text_of(o), "two\n");
    json_object_put(o);
    snprintf(hdr, sizeof hdr, "-H 'x-tool-cwd: %s' -H 'x-resp-type: base64'", dir);
    o = call(&s, "read_file", "{\"path\":\"sub/a.txt\"}", hdr);
    cr_assert_str_eq(mt_jstr(o, "base64"), "b25lCnR3bwo=", "base64 of \"one\\ntwo\\n\"");
    cr_assert_eq(mt_jpath_int(o, "size_bytes"), 8);
    json_object_put(o);

    // edit_file: exact, unique, against the original, never overlapping.
    snprintf(hdr, sizeof hdr, "-H 'x-tool-cwd: %s'", dir);
    o = call(
        &s, "edit_file",
        "{\"path\":\"sub/a.txt\",\"edits\":[{\"old_text\":\"two\\n\",\"new_text\":\"2\\n3\\n\"},"
        "{\"old_text\":\"one\",\"new_text\":\"1\"}]}",
        hdr);
    cr_assert_str_eq(mt_jstr(o, "result"), "file edited successfully");
    cr_assert_eq(mt_jpath_int(o, "edits_applied"), 2);
    json_object_put(o);
    got = (char *)mt_read_file(mt_path(dir, "sub/a.txt"), &len);
    cr_assert_str_eq(got, "1\n2\n3\n");
    free(got);
    o = call(&s, "edit_file",
             "{\"path\":\"sub/a.txt\",\"edits\":[{\"old_text\":\"\\n\",\"new_text\":\"x\"}]}", hdr);
    cr_assert(strstr(mt_jstr(o, "error"), "unique"), "%s", json_object_to_json_string(o));
    json_object_put(o);
    o = call(&s, "edit_file",
             "{\"path\":\"sub/a.txt\",\"edits\":[{\"old_text\":\"1\\n2\",\"new_text\":\"a\"},"
             "{\"old_text\":\"2\\n3\",\"new_text\":\"b\"}]}",
             hdr);
    cr_assert(strstr(mt_jstr(o, "error"), "overlap"), "%s", json_object_to_json_string(o));
    json_object_put(o);
    o = call(&s, "edit_file",
             "{\"path\":\"sub/a.txt\",\"edits\":[{\"old_text\":\"nothere\",\"new_text\":\"a\"}]}",
             hdr);
    cr_assert(strstr(mt_jstr(o, "error"), "could not find"), "%s", json_object_to_json_string(o));
    json_object_put(o);
    got = (char *)mt_read_file(mt_path(dir, "sub/a.txt"), &len);
    cr_assert_str_eq(got, "1\n2\n3\n", "a refused edit leaves the file as it was");
    free(got);

    // Text copied with its trailing blanks lost or its quotes made typographic is found on the
    // lines normalized; the lines no edit touches keep their bytes. The expected files are what
    // llama-server's edit_file made of the same requests.
    cr_assert(mt_write_file(mt_path(dir, "f.txt"),
                            "a = 1;   \nb = \xe2\x80\x9cx\xe2\x80\x9d;  \nc\n", 27));
    o = call(&s, "edit_file",
             "{\"path\":\"f.txt\",\"edits\":[{\"old_text\":\"b = \\\"x\\\";\",\"new_text\":\"b = "
             "2;\"}]}",
             hdr);
    cr_assert_str_eq(mt_jstr(o, "result"), "file edited successfully");
    json_object_put(o);
    got = (char *)mt_read_file(mt_path(dir, "f.txt"), &len);
    cr_assert_str_eq(got, "a = 1;   \nb = 2;\nc\n");
    free(got);
    cr_assert(mt_write_file(mt_path(dir, "h.txt"), "l1  \nl2\nl3 \nl4\n", 15));
    o = call(&s, "edit_file",
             "{\"path\":\"h.txt\",\"edits\":[{\"old_text\":\"l4\",\"new_text\":\"L4\"},"
             "{\"old_text\":\"l2\\nl3\\n\",\"new_text\":\"L23\\n\"}]}",
             hdr);
    cr_assert_eq(mt_jpath_int(o, "edits_applied"), 2);
    json_object_put(o);
    got = (char *)mt_read_file(mt_path(dir, "h.txt"), &len);
    cr_assert_str_eq(got, "l1  \nL23\nL4\n");
    free(got);
    o = call(&s, "grep_search", "{\"path\":\"h.txt\",\"pattern\":\"L\",\"context_lines\":1}", hdr);
    cr_assert_str_eq(text_of(o), "h.txt-1-l1  \nh.txt:2:L23\nh.txt-3-L4\n--\nh.txt-2-L23\nh.txt:3:"
                                 "L4\n--\n\n---\nTotal matches: 2\n"); // llama-server's answer
    json_object_put(o);
    cr_assert(mt_write_file(mt_path(dir, "g.txt"), "dup \ndup\n", 9));
    o = call(&s, "edit_file",
             "{\"path\":\"g.txt\",\"edits\":[{\"old_text\":\"dup\\n\",\"new_text\":\"x\"}]}", hdr);
    cr_assert(strstr(mt_jstr(o, "error"), "found 2 occurrences"), "blanks do not make it unique");
    json_object_put(o);
    unlink(mt_path(dir, "f.txt")), unlink(mt_path(dir, "g.txt")), unlink(mt_path(dir, "h.txt"));

    // file_glob_search: a tree with a junk folder (listed, never entered) and depths.
    mkdir(mt_path(dir, "build"), 0755);
    mkdir(mt_path(dir, "sub/deep"), 0755);
    cr_assert(mt_write_file(mt_path(dir, "build/x.c"), "int x;\n", 7));
    cr_assert(mt_write_file(mt_path(dir, "sub/deep/y.c"), "int y; // needle\n", 17));
    cr_assert(mt_write_file(mt_path(dir, "top.c"), "Needle here\nint z;\n", 19));
    o = call(&s, "file_glob_search", "{\"path\":\".\",\"include\":\"*.c\"}", hdr);
    const char *t = text_of(o);
    cr_assert(strstr(t, "sub/deep/y.c\n") && strstr(t, "top.c\n") && !strstr(t, "build/x.c") &&
                  strstr(t, "Total matches: 2\n"),
              "%s", t);
    cr_assert_str_eq(mt_jstr(o, "base"), dir);
    json_object_put(o);
    o = call(&s, "file_glob_search", "{\"path\":\".\",\"type\":\"dir\",\"max_depth\":1}", hdr);
    t = text_of(o);
    cr_assert(strstr(t, "build/\n") && strstr(t, "sub/\n") && !strstr(t, "deep"), "%s", t);
    json_object_put(o);
    o = call(&s, "file_glob_search", "{\"path\":\".\",\"limit\":1}", hdr);
    cr_assert_eq(json_object_array_length(mt_jpath(o, "entries")), 1);
    cr_assert(strstr(text_of(o), "Total matches: 3\n"), "%s", text_of(o)); // a.txt, y.c, top.c
    json_object_put(o);
    o = call(&s, "file_glob_search", "{\"path\":\".\",\"type\":\"bogus\"}", hdr);
    cr_assert(strstr(mt_jstr(o, "error"), "invalid type"));
    json_object_put(o);
    // A glob that would take exponential time by backtracking answers at once.
    const double t0 = now();
    o = call(&s, "file_glob_search",
             "{\"path\":\".\",\"include\":\"**a**a**a**a**a**a**a**a**a**a**a**a**b\"}", hdr);
    cr_assert(now() - t0 < 10, "glob matching is not exponential");
    json_object_put(o);

    // Inside a git work tree the files are git's (what .gitignore leaves), as llama-server's.
    char cmd[8192], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir g && cd g && git init -q . && printf '*.log\\n' >.gitignore && "
             "echo x >kept.c && echo y >dropped.log",
             dir);
    if (mt_run(cmd, &out, NULL) == 0) {
        o = call(&s, "file_glob_search", "{\"path\":\"g\"}", hdr);
        t = text_of(o);
        cr_assert(strstr(t, "kept.c\n") && !strstr(t, "dropped.log"), "%s", t);
        json_object_put(o);
    }
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf '%s/g'", dir);
    mt_run(cmd, &out, NULL);
    free(out);

    // grep_search: PCRE2, case folding, literal text, line numbers and context.
    o = call(&s, "grep_search",
             "{\"path\":\".\",\"pattern\":\"needle\",\"ignore_case\":true,"
             "\"return_line_numbers\":true}",
             hdr);
    t = text_of(o);
    cr_assert(strstr(t, "top.c:1:Needle here\n") &&
                  strstr(t, "sub/deep/y.c:1:int y; // needle\n") && strstr(t, "Total matches: 2\n"),
              "%s", t);
    json_object_put(o);
    o = call(&s, "grep_search", "{\"path\":\"top.c\",\"pattern\":\"Needle\",\"context_lines\":1}",
             hdr);
    cr_assert_str_eq(text_of(o),
                     "top.c:1:Needle here\ntop.c-2-int z;\n--\n\n---\nTotal matches: 1\n");
    json_object_put(o);
    o = call(&s, "grep_search", "{\"path\":\".\",\"pattern\":\"y;\",\"literal\":true}", hdr);
    cr_assert(strstr(text_of(o), "Total matches: 1\n"), "%s", text_of(o));
    json_object_put(o);
    o = call(&s, "grep_search", "{\"path\":\".\",\"pattern\":\"(\"}", hdr);
    cr_assert(strstr(mt_jstr(o, "error"), "invalid regex"));
    json_object_put(o);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve_tools, shell_commands_bounded_streamed_and_reaped, .timeout = MT_HANG(180)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' -np 1 --tools exec_shell_command,get_info", stories());
    const char *dir = mt_tmpdir();
    char hdr[4200];
    snprintf(hdr, sizeof hdr, "-H 'x-tool-cwd: %s'", dir);
    json_object *o =
        call(&s, "exec_shell_command", "{\"command\":\"echo hello > m.txt; pwd; exit 3\"}", hdr);
    char want[4200];
    snprintf(want, sizeof want, "%s\n\n[exit code: 3]", dir);
    cr_assert_str_eq(text_of(o), want);
    json_object_put(o);
    cr_assert(access(mt_path(dir, "m.txt"), F_OK) == 0, "ran in x-tool-cwd");
    // A command past its time limit: killed with its background children, answered in time.
    const double t0 = now();
    o = call(&s, "exec_shell_command",
             "{\"command\":\"sleep 31.25 & sleep 31.25; echo never\",\"timeout\":1}", NULL);
    cr_assert(now() - t0 < 10, "took %.1f s", now() - t0);
    cr_assert(strstr(text_of(o), "[exit due to timed out]") && !strstr(text_of(o), "never"), "%s",
              text_of(o));
    json_object_put(o);
    char *out = NULL;
    mt_run("pgrep -f 'sleep 31[.]25' || true", &out, NULL); // [.]: not pgrep's own shell
    cr_assert_str_eq(out, "", "the process group is gone: %s", out);
    free(out);
    // Output past max_output_size is cut, and said so.
    o = call(&s, "exec_shell_command",
             "{\"command\":\"yes | head -c 100000\",\"max_output_size\":10}", NULL);
    cr_assert_str_eq(text_of(o), "y\ny\ny\ny\ny\n\n[output truncated]\n[exit code: 0]");
    json_object_put(o);
    // Streamed: {"chunk"} events as output comes, then {"done": true}.
    mt_resp r = mt_http(&s, "POST", "/tools",
                        "{\"tool\":\"exec_shell_command\",\"params\":{\"command\":\"echo a; "
                        "sleep 0.2; echo b\"},\"stream\":true}",
                        NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.headers, "text/event-stream"), "%s", r.headers);
    cr_assert_str_eq(r.body,
                     "data: {\"chunk\":\"a\\n\"}\n\ndata: {\"chunk\":\"b\\n\"}\n\n"
                     "data: {\"chunk\":\"\\n[exit code: 0]\"}\n\ndata: {\"done\":true}\n\n");
    mt_resp_free(&r);
    // A client that leaves a silent streamed command stops it (curl gives up after 1 s).
    r = mt_http(&s, "POST", "/tools",
                "{\"tool\":\"exec_shell_command\",\"params\":{\"command\":\"sleep 32.5\","
                "\"timeout\":60},\"stream\":true}",
                "-m 1");
    mt_resp_free(&r);
    bool gone = false;
    for (double until = now() + 10; !gone && now() < until;) {
        nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
        out = NULL;
        mt_run("pgrep -f 'sleep 32[.]5' || true", &out, NULL);
        gone = !strcmp(out, "");
        free(out);
    }
    cr_assert(gone, "the command of a client that left is killed");
    r = mt_http(&s, "POST", "/tools", "{\"tool\":\"get_info\",\"params\":{},\"stream\":true}",
                NULL);
    cr_assert(strstr(r.body, "does not support stream"), "%s", r.body);
    mt_resp_free(&r);
    o = call(&s, "get_info", "{}", hdr);
    cr_assert_str_eq(mt_jstr(o, "cwd"), dir);
    cr_assert(strstr(mt_jstr(o, "os"), "Linux"), "%s", mt_jstr(o, "os"));
    json_object_put(o);
    // Not enabled, unknown, malformed: JSON errors with their status, the server still up.
    struct {
        const char *body, *hdr;
        int status;
        const char *msg;
    } bad[] = {
        {"{\"tool\":\"read_file\",\"params\":{\"path\":\"x\"}}", NULL, 404, "unknown tool"},
        {"not json", NULL, 400, "not a JSON object"},
        {"{\"tool\":7}", NULL, 400, "\\\"tool\\\" must be a string"},
        {"{\"tool\":\"get_info\",\"params\":[]}", NULL, 400, "must be an object"},
        {"{\"tool\":\"exec_shell_command\",\"params\":{}}", NULL, 400, "missing param"},
        {"{\"tool\":\"exec_shell_command\",\"params\":{\"command\":\"touch /tmp/mint-pwned\"}}",
         "-H 'x-tool-runtime: ssh:-oProxyCommand=touch /tmp/mint-pwned'", 500,
         "invalid ssh target"},
        {"{\"tool\":\"exec_shell_command\",\"params\":{\"command\":\"echo\"}}",
         "-H 'x-tool-runtime: docker-container:--privileged'", 500, "invalid container id"},
        {"{\"tool\":\"exec_shell_command\",\"params\":{\"command\":\"echo\"}}",
         "-H 'x-tool-runtime: podman:busybox'", 500, "must name a running container"},
        {"{\"tool\":\"exec_shell_command\",\"params\":{\"command\":\"echo\"}}",
         "-H 'x-tool-runtime: fake:x'", 500, "unknown tool runtime"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = mt_http(&s, "POST", "/tools", bad[i].body, bad[i].hdr);
        cr_assert_eq(r.status, bad[i].status, "%s: %d %s", bad[i].body, r.status, r.body);
        cr_assert(strstr(r.body, bad[i].msg), "%s: %s", bad[i].body, r.body);
        mt_resp_free(&r);
    }
    cr_assert(access("/tmp/mint-pwned", F_OK) != 0, "no option reached ssh");
    // With --tools, CORS is this machine's pages only.
    r = mt_http(&s, "OPTIONS", "/tools", NULL, "-H 'Origin: http://evil.com'");
    cr_assert_null(strstr(r.headers, "Access-Control-Allow-Origin"), "%s", r.headers);
    mt_resp_free(&r);
    r = mt_http(&s, "OPTIONS", "/tools", NULL, "-H 'Origin: http://localhost:5173'");
    cr_assert(strstr(r.headers, "Access-Control-Allow-Origin: http://localhost:5173"), "%s",
              r.headers);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve_tools, bad_tool_names_and_runtimes_are_usage_errors) {
    const char *args[][2] = {{"--tools read_file,bogus", "unknown tool \"bogus\""},
                             {"--tools all --tools-runtime ssh:-x", "invalid ssh target"},
                             {"--tools all --tools-runtime lxc:a", "unknown tool runtime"}};
    for (size_t i = 0; i < 3; i++) {
        char cmd[8192], *out = NULL, *err = NULL;
        snprintf(cmd, sizeof cmd, "'%s' -m '%s' %s --port 0", mt_bin("mint-serve"), stories(),
                 args[i][0]);
        cr_assert_eq(mt_run(cmd, &out, &err), 2, "%s: %s", args[i][0], err);
        cr_assert(strstr(err, args[i][1]), "%s", err);
        free(out), free(err);
    }
}

// A python3 http.server on a free port that records each request's headers in a file and
// answers 200 "ok" (GET) or 204 (POST); returns its port.
// The JSON the target recorded.
static json_object *recorded(const char *rec) {
    char *text = (char *)mt_read_file(rec, NULL);
    cr_assert(text, "the target recorded nothing");
    json_object *o = json_tokener_parse(text);
    free(text);
    cr_assert(o);
    return o;
}

static int start_target(pid_t *pid, const char *record) {
    const char *script = mt_path(mt_tmpdir(), "target.py");
    const char *src =
        "import http.server, json, sys\n"
        "class H(http.server.BaseHTTPRequestHandler):\n"
        "    def do_GET(self):\n"
        "        open(sys.argv[1], 'w').write(json.dumps({k.lower(): v for k, v in "
        "self.headers.items()}))\n"
        "        self.send_response(200); self.send_header('Content-Type', 'text/x-test')\n"
        "        self.end_headers(); self.wfile.write(b'ok')\n"
        "    def do_POST(self):\n"
        "        n = int(self.headers.get('Content-Length', 0)); body = self.rfile.read(n)\n"
        "        open(sys.argv[1], 'w').write(json.dumps({'body': body.decode()}))\n"
        "        self.send_response(204); self.end_headers()\n"
        "    def log_message(self, *a): pass\n"
        "s = http.server.HTTPServer(('127.0.0.1', 0), H)\n"
        "open(sys.argv[1] + '.port', 'w').write(str(s.server_address[1]))\n"
        "s.serve_forever()\n";
    cr_assert(mt_write_file(script, src, strlen(src)));
    char cmd[8192], port_file[4300];
    snprintf(cmd, sizeof cmd, "exec python3 '%s' '%s' >/dev/null 2>&1", script, record);
    *pid = mt_spawn(cmd);
    snprintf(port_file, sizeof port_file, "%s.port", record);
    for (double until = now() + MT_HANG(30); now() < until;) {
        char *p = (char *)mt_read_file(port_file, NULL);
        if (p && atoi(p) > 0) {
            const int port = atoi(p);
            free(p);
            return port;
        }
        free(p);
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    cr_assert_fail("the python target did not start");
    return 0;
}

Test(serve_tools, cors_proxy_forwards_only_explicit_headers, .timeout = MT_HANG(120)) {
    const char *record = mt_path(mt_tmpdir(), "headers.json");
    char rec[4200];
    snprintf(rec, sizeof rec, "%s", record);
    pid_t target;
    const int port = start_target(&target, rec);
    mt_server s;
    mt_server_start(&s, "-m '%s' -np 1 --ui-mcp-proxy --api-key k1", stories());
    char path[256];
    snprintf(path, sizeof path, "/cors-proxy?url=http://127.0.0.1:%d/capture", port);
    mt_resp r = mt_http(&s, "GET", path, NULL,
                        "-H 'Authorization: Bearer k1' -H 'Cookie: session=secret' "
                        "-H 'X-Api-Key: k1' -H 'x-llama-server-proxy-header-accept: app/json' "
                        "-H 'X-Llama-Server-Proxy-Header-Authorization: Bearer explicit'");
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(r.body, "ok");
    cr_assert(strstr(r.headers, "Content-Type: text/x-test"), "%s", r.headers);
    mt_resp_free(&r);
    json_object *h = recorded(rec);
    cr_assert(h);
    cr_assert_str_eq(mt_jstr(h, "accept"), "app/json");
    cr_assert_str_eq(mt_jstr(h, "authorization"), "Bearer explicit");
    cr_assert(!json_object_object_get_ex(h, "cookie", NULL) &&
                  !json_object_object_get_ex(h, "x-api-key", NULL),
              "%s", json_object_to_json_string(h));
    json_object_put(h);
    // POST: the body goes on; a 204 comes back as it is, without a body.
    snprintf(path, sizeof path, "/cors-proxy?url=http://127.0.0.1:%d/", port);
    r = mt_http(&s, "POST", path, "{\"x\":1}", "-H 'Authorization: Bearer k1'");
    cr_assert_eq(r.status, 204, "%s", r.body);
    cr_assert_str_eq(r.body, "");
    mt_resp_free(&r);
    h = recorded(rec);
    cr_assert_str_eq(mt_jstr(h, "body"), "{\"x\":1}");
    json_object_put(h);
    // The proxy is behind the API key; bad targets are 400, an unreachable one 502.
    r = mt_http(&s, "GET", path, NULL, NULL);
    cr_assert_eq(r.status, 401);
    mt_resp_free(&r);
    const char *bad[] = {"/cors-proxy", "/cors-proxy?url=file:///etc/passwd",
                         "/cors-proxy?url=http://u:p@127.0.0.1:1/", "/cors-proxy?url=nohost"};
    for (size_t i = 0; i < 4; i++) {
        r = mt_http(&s, "GET", bad[i], NULL, "-H 'Authorization: Bearer k1'");
        cr_assert_eq(r.status, 400, "%s: %s", bad[i], r.body);
        mt_resp_free(&r);
    }
    r = mt_http(&s, "GET", "/cors-proxy?url=http://127.0.0.1:1/", NULL,
                "-H 'Authorization: Bearer k1'");
    cr_assert_eq(r.status, 502, "%s", r.body);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
    kill(target, SIGTERM);
    mt_wait(target, 10);
}

// Router mode (no model) answers /tools and /cors-proxy itself, as llama-server's router does
// (llama.cpp's tests start their tools so).
Test(serve_tools, router_mode_answers_tools_itself, .timeout = MT_HANG(60)) {
    mt_server s;
    mt_server_start(&s, "--tools get_info --models-dir '%s'", mt_tmpdir());
    mt_resp r = mt_http(&s, "GET", "/tools", NULL, NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert(strstr(r.body, "\"tool\":\"get_info\""), "%s", r.body);
    mt_resp_free(&r);
    json_object *o = call(&s, "get_info", "{}", "-H 'x-tool-cwd: /'");
    cr_assert_str_eq(mt_jstr(o, "cwd"), "/");
    json_object_put(o);
    r = mt_http(&s, "GET", "/cors-proxy?url=http://127.0.0.1:1/", NULL, NULL);
    cr_assert_eq(r.status, 403, "no --ui-mcp-proxy: %s", r.body);
    mt_resp_free(&r);
    r = mt_http(&s, "OPTIONS", "/tools", NULL, "-H 'Origin: http://evil.com'");
    cr_assert_null(strstr(r.headers, "Access-Control-Allow-Origin"), "%s", r.headers);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

// The runtime names: what is accepted, and each word of the command line it makes, read back
// by sh (the oracle for the ssh command's quoting).
Test(serve_tools, runtime_names_and_their_command_lines) {
    agent_runtime rt;
    char err[256];
    const char *refused[] = {"ssh:-oProxyCommand=x",
                             "ssh:a b",
                             "ssh:",
                             "docker-container:-it",
                             "podman-container:a;b",
                             "docker:-v",
                             "lxc:x",
                             "docker",
                             "ssh:a\nb"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        cr_assert_not(agent_runtime_parse(refused[i], &rt, err, sizeof err), "%s", refused[i]);
    cr_assert(agent_runtime_parse("", &rt, err, sizeof err) && rt.kind == AGENT_RUNTIME_HOST);
    cr_assert(agent_runtime_parse("podman-container:ab12_c.d-e", &rt, err, sizeof err));
    const char *inner[] = {"sh", "-c", "echo 'x' \"$1\"", "_", "a b", NULL};
    char **argv = agent_runtime_argv(&rt, inner, true);
    const char *want[] = {"podman",          "exec", "-i",  "ab12_c.d-e", "sh", "-c",
                          "echo 'x' \"$1\"", "_",    "a b", NULL};
    for (size_t i = 0; want[i]; i++) cr_assert_str_eq(argv[i], want[i]);
    cr_assert_null(argv[9]);
    agent_argv_free(argv);
    cr_assert(agent_runtime_parse("ssh:me@host.example", &rt, err, sizeof err));
    argv = agent_runtime_argv(&rt, inner, false);
    size_t n = 0;
    while (argv[n]) n++;
    cr_assert_str_eq(argv[0], "ssh");
    cr_assert_str_eq(argv[n - 3], "-n");
    cr_assert_str_eq(argv[n - 2], "me@host.example");
    // sh parses the one remote word back into the same words.
    const char *path = mt_path(mt_tmpdir(), "quoted.sh");
    char script[4096];
    snprintf(script, sizeof script, "printf '%%s|' %s", argv[n - 1]);
    cr_assert(mt_write_file(path, script, strlen(script)));
    char cmd[4200], *out = NULL;
    snprintf(cmd, sizeof cmd, "sh '%s'", path);
    cr_assert_eq(mt_run(cmd, &out, NULL), 0);
    cr_assert_str_eq(out, "sh|-c|echo 'x' \"$1\"|_|a b|");
    free(out);
    agent_argv_free(argv);
}

// include/exclude globs: llama-server's rules (a pattern without '/' is the last component's;
// '*' within one component, "**" across), and "**/" also matching no folder.
Test(serve_tools, globs) {
    const struct {
        const char *pattern, *path;
        bool match;
    } cases[] = {
        {"*.c", "a/b.c", true},
        {"*.c", "a/b.h", false},
        {"b.?", "a/b.c", true},
        {"[a-c].c", "x/b.c", true},
        {"[!a-c].c", "x/b.c", false},
        {"src/*.c", "src/a.c", true},
        {"src/*.c", "lib/src/a.c", true},
        {"src/*.c", "src/x/a.c", false},
        {"src/**/*.c", "src/x/y/a.c", true},
        {"src/**/*.c", "src/a.c", true},
        {"**", "any/thing", true},
        {"/top/*.c", "top/a.c", false},
        {"*", "a/b", true},
        {"a*b", "a/b", false},
        {"[", "x/[", true},
        {"**a**a**a**a**a**a**b", "aaaaaaaaaaaaaaaaaaaaaaaaaaac", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_assert_eq(agent_glob_match(cases[i].pattern, cases[i].path), cases[i].match, "%s %s",
                     cases[i].pattern, cases[i].path);
    // The longest pattern with a '/' is matched with "**/" in front: 2 tokens more than its
    // bytes, none of them cut (the fuzzer's find: a 511-byte path did not match itself).
    char longest[AGENT_GLOB_MAX];
    memset(longest, 'b', sizeof longest - 1);
    memcpy(longest, "a/", 2);
    longest[sizeof longest - 1] = '\0';
    cr_assert(agent_glob_match(longest, longest));
    longest[sizeof longest - 2] = 'c';
    cr_assert_not(agent_glob_match(longest, "a/bbb"));
}
