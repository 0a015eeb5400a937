// test_serve_mcp.c - mint-serve's MCP servers (--mcp-servers-config, --mcp-servers-json) as
// llama-server runs them. The text side first, without processes (tools/common/mcp_proto.c: the
// configuration's rules, the lines a server writes, a result made into POST /tools' answer);
// then mint-serve itself with tests/serve/mcp_server.py as the server (each of its modes a way a
// server behaves: plain, noisy lines between answers, slow, exiting, leaving a grandchild):
// GET /tools' entries, POST /tools' answers, a time-out, a respawn, shutdown during a slow call,
// and bad configurations refused at start-up. llama.cpp's own tests of the same
// (unit/test_mcp_servers.py) run through tools/scripts/llama-server-suite.sh.
#include "helpers/helpers.h"
#include "helpers/server.h"
#include "mcp_proto.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// ---- the text side ----

static bool add(mcp_config *c, const char *text, char *err) {
    return mcp_config_add(c, text, strlen(text), NULL, NULL, err, 300);
}

Test(serve_mcp, the_configuration_follows_llama_servers_rules) {
    mcp_config c = {0};
    char err[300];
    cr_assert(add(&c,
                  "{\"mcpServers\": {\"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"x\"], "
                  "\"env\": {\"A\": \"1\"}, \"cwd\": \"/tmp\", \"timeout_ms\": 500}, "
                  "\"skip\": {\"args\": []}, \"b\": {\"command\": \"b\", \"cwd\": \"\"}}}",
                  err),
              "%s", err);
    cr_assert_eq(c.n, 2, "an entry without a command is skipped");
    cr_assert_str_eq(c.servers[0].name, "fs");
    cr_assert_str_eq(c.servers[0].command, "npx");
    cr_assert_eq(c.servers[0].n_args, 2);
    cr_assert_str_eq(c.servers[0].args[1], "x");
    cr_assert_eq(c.servers[0].n_env, 1);
    cr_assert_str_eq(c.servers[0].env[0], "A=1");
    cr_assert_str_eq(c.servers[0].cwd, "/tmp");
    cr_assert_eq(c.servers[0].timeout_ms, 500);
    cr_assert_null(c.servers[1].cwd, "\"\" is no working directory");
    cr_assert_eq(c.servers[1].timeout_ms, 30000, "llama-server's default");
    // A second text (the inline JSON after the file): a name already taken is skipped.
    cr_assert(add(&c,
                  "{\"mcpServers\": {\"fs\": {\"command\": \"other\"}, \"c\": {\"command\": "
                  "\"c\"}}}",
                  err));
    cr_assert_eq(c.n, 3);
    cr_assert_str_eq(c.servers[0].command, "npx");
    cr_assert(add(&c, "[1, 2]", err), "no mcpServers object: no server, not an error");
    cr_assert(add(&c, "{\"mcpServers\": []}", err));
    cr_assert_eq(c.n, 3);
    // Refused, naming the problem; c is unchanged.
    static const char *const bad[][2] = {
        {"not valid json", "not valid JSON"},
        {"{\"mcpServers\": {}} x", "not valid JSON"},
        {"{\"mcpServers\": {\"a\": {\"command\": 3}}}", "\"command\" must be a string"},
        {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": [1]}}}", "\"args\"[0]"},
        {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": {\"K\": 1}}}}", "\"env\".K"},
        {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"env\": {\"K=V\": \"1\"}}}}",
         "not a variable name"},
        {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"timeout_ms\": \"5\"}}}", "timeout_ms"},
        {"{\"mcpServers\": {\"a\": {\"command\": \"x\", \"timeout_ms\": 0}}}", "timeout_ms"},
        {"{\"mcpServers\": {\"a\": {\"command\": \"x\\u0000y\"}}}", "NUL byte"},
        {"{\"mcpServers\": {\"a\": 5}}", "must be a JSON object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_not(add(&c, bad[i][0], err), "%s", bad[i][0]);
        cr_assert(strstr(err, bad[i][1]), "%s: %s", bad[i][0], err);
        cr_assert_eq(c.n, 3);
    }
    mcp_config_free(&c);
}

Test(serve_mcp, a_servers_lines_are_read_for_the_awaited_answer_only) {
    json_object *r;
    char err[200];
#define LINE(s, id) mcp_read_line(s, strlen(s), id, &r, err, sizeof err)
    cr_assert_eq(LINE("not json", 3), MCP_LINE_JUNK);
    cr_assert_eq(LINE("[1]", 3), MCP_LINE_JUNK);
    cr_assert_eq(LINE("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}", 3),
                 MCP_LINE_OTHER, "a notification");
    cr_assert_eq(LINE("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}", 3), MCP_LINE_OTHER,
                 "a late answer to an earlier id");
    cr_assert_eq(LINE("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}", 3), MCP_LINE_OTHER,
                 "a request of the server's, whatever its id");
    cr_assert_eq(LINE("{\"jsonrpc\":\"2.0\",\"id\":\"3\",\"result\":{}}", 3), MCP_LINE_OTHER,
                 "ids are numbers here");
    cr_assert_eq(
        LINE("{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-1,\"message\":\"no\"}}", 3),
        MCP_LINE_ERROR);
    cr_assert_str_eq(err, "no");
    cr_assert_eq(LINE("{\"id\":3}", 3), MCP_LINE_ERROR, "neither result nor error");
    cr_assert_eq(LINE("{\"id\":3.0,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
                      "{\"type\":\"image\"},{\"type\":\"text\",\"text\":\"b\"}]}}",
                      3),
                 MCP_LINE_RESULT);
    json_object *a = mcp_call_answer(r);
    cr_assert_str_eq(json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN),
                     "{\"plain_text_response\":\"a\\nb\"}", "text parts, one per line");
    json_object_put(a);
    json_object_put(r);
    cr_assert_eq(LINE("{\"id\":3,\"result\":{\"isError\":true,\"content\":[]}}", 3),
                 MCP_LINE_RESULT);
    a = mcp_call_answer(r);
    cr_assert(json_object_object_get_ex(a, "error", NULL), "isError: an error answer");
    json_object_put(a);
    json_object_put(r);
    cr_assert_eq(LINE("{\"id\":1,\"result\":{\"tools\":[{\"name\":\"t\",\"inputSchema\":[]},"
                      "{\"description\":\"nameless\"},{\"name\":\"u\",\"description\":\"d\","
                      "\"inputSchema\":{\"type\":\"object\"}}]}}",
                      1),
                 MCP_LINE_RESULT);
#undef LINE
    mcp_tool *t;
    cr_assert_eq(mcp_tools_from_result(r, &t), 2, "a tool without a name is left out");
    cr_assert_str_eq(t[0].name, "t");
    cr_assert_str_eq(t[0].description, "");
    cr_assert_str_eq(json_object_to_json_string(t[0].parameters), "{ }", "not an object: {}");
    cr_assert_str_eq(t[1].description, "d");
    mcp_tools_free(t, 2);
    json_object_put(r);
    char *m = mcp_msg_call(7, "echo", NULL);
    cr_assert_str_eq(m, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{"
                        "\"name\":\"echo\",\"arguments\":{}}}");
    free(m);
}

// ---- mint-serve with MCP servers ----

static const char *python(void) {
    static char path[512];
    char *out = NULL, *err = NULL;
    if (mt_run("command -v python3", &out, &err) != 0 || !out || !out[0]) {
        free(out);
        free(err);
        return NULL;
    }
    snprintf(path, sizeof path, "%.*s", (int)strcspn(out, "\n"), out);
    free(out);
    free(err);
    return path;
}

static const char *fixture(void) {
    static char path[4096];
    const char *src = getenv("MINT_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/tests/serve/mcp_server.py", src ? src : ".");
    return path;
}

// Writes {"mcpServers": ...} naming each (name, mode[, timeout_ms]) server; returns its path.
static const char *config(const char *file, const char *servers) {
    const char *path = mt_path(mt_tmpdir(), file);
    char text[20000];
    snprintf(text, sizeof text, "{\"mcpServers\": {%s}}", servers);
    cr_assert(mt_write_file(path, text, strlen(text)));
    return path;
}

// One server entry running the fixture in mode.
static const char *entry(const char *name, const char *mode, int timeout_ms) {
    static char buf[4][8192];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, sizeof buf[0], "\"%s\": {\"command\": \"%s\", \"args\": [\"%s\", \"%s\"]%s%d}",
             name, python(), fixture(), mode,
             timeout_ms ? ", \"timeout_ms\": " : ", \"_\": ", timeout_ms);
    return b;
}

static void start(mt_server *s, const char *cfg) {
    mt_server_start(s, "-m '%s' -np 1 -c 256 -t 1 --mcp-servers-config '%s'",
                    mt_synth("small", "F32"), cfg);
}

// POST /tools {"tool": tool, "params": params}: the answer (status 200 asserted).
static json_object *call(const mt_server *s, const char *tool, const char *params) {
    char body[1024];
    snprintf(body, sizeof body, "{\"tool\": \"%s\", \"params\": %s}", tool, params);
    return mt_post_json(s, "/tools", body);
}

static const char *answer_of(json_object *o) {
    const char *t = mt_jstr(o, "plain_text_response");
    return t[0] ? t : mt_jstr(o, "error");
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define NEED_PYTHON()                                                                              \
    do {                                                                                           \
        if (!python()) cr_skip("python3 not found (the MCP server fixture is a Python script)");   \
    } while (0)

Test(serve_mcp, tools_are_listed_and_called_and_a_bad_server_loses_only_its_own,
     .timeout = MT_HANG(120)) {
    NEED_PYTHON();
    char servers[18000];
    snprintf(servers, sizeof servers,
             "%s, %s, \"gone\": {\"command\": \"/nonexistent/mcp-server\"}",
             entry("plain", "plain", 0), entry("noisy", "noisy", 0));
    mt_server s;
    start(&s, config("mcp-list.json", servers));
    char *log = mt_server_log(&s);
    cr_assert(strstr(log, "MCP server 'plain' offers 7 tools"), "%s", log);
    cr_assert(strstr(log, "MCP server 'gone': cannot run '/nonexistent/mcp-server'"), "%s", log);
    free(log);
    mt_resp r = mt_http(&s, "GET", "/tools", NULL, NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    json_object *list = json_tokener_parse(r.body);
    cr_assert(json_object_is_type(list, json_type_array), "%s", r.body);
    cr_assert_eq(json_object_array_length(list), 14, "7 tools from each answering server: %s",
                 r.body);
    json_object *e = mt_jidx(list, 0);
    cr_assert_str_eq(mt_jstr(e, "tool"), "plain_echo");
    cr_assert_str_eq(mt_jstr(e, "type"), "mcp");
    cr_assert_str_eq(
        json_object_to_json_string_ext(mt_jget(e, "definition"), JSON_C_TO_STRING_PLAIN),
        "{\"type\":\"function\",\"function\":{\"name\":\"plain_echo\",\"description\":\"Echoes "
        "its message\",\"parameters\":{\"type\":\"object\",\"properties\":{\"message\":{\"type\":"
        "\"string\"}},\"required\":[\"message\"]}}}");
    cr_assert_str_eq(mt_jstr(mt_jidx(list, 7), "tool"), "noisy_echo");
    json_object_put(list);
    mt_resp_free(&r);

    json_object *o = call(&s, "plain_add", "{\"a\": 3, \"b\": 5}");
    cr_assert_str_eq(mt_jstr(o, "plain_text_response"), "8");
    json_object_put(o);
    o = call(&s, "noisy_echo", "{\"message\": \"hi\"}");
    cr_assert_str_eq(answer_of(o), "echo: hi", "notifications, junk and other ids skipped");
    json_object_put(o);
    o = call(&s, "plain_flaky", "{}");
    cr_assert_str_eq(mt_jstr(o, "error"), "flaky: first call fails", "the server's error");
    json_object_put(o);
    o = call(&s, "plain_flaky", "{}");
    cr_assert_str_eq(answer_of(o), "flaky: fine now", "the same process: its state kept");
    json_object_put(o);
    o = call(&s, "plain_oops", "{}");
    cr_assert_str_eq(mt_jstr(o, "error"), "it broke", "isError");
    json_object_put(o);
    r = mt_http(&s, "POST", "/tools", "{\"tool\": \"gone_x\", \"params\": {}}", NULL);
    cr_assert_eq(r.status, 404, "%s", r.body);
    mt_resp_free(&r);
    // Calls at once to one server take turns; each gets its own answer.
    pid_t pids[6];
    char out[6][16];
    for (int i = 0; i < 6; i++) {
        char cmd[1024];
        snprintf(out[i], sizeof out[i], "mcp-call-%d", i);
        snprintf(cmd, sizeof cmd,
                 "curl -s -m 60 %s/tools -d '{\"tool\":\"noisy_echo\",\"params\":{\"message\":"
                 "\"m%d\"}}' >'%s'",
                 s.url, i, mt_path(mt_tmpdir(), out[i]));
        pids[i] = mt_spawn(cmd);
    }
    for (int i = 0; i < 6; i++) cr_assert_eq(mt_wait(pids[i], 60), 0);
    for (int i = 0; i < 6; i++) {
        char *got = (char *)mt_read_file(mt_path(mt_tmpdir(), out[i]), NULL);
        char want[64];
        snprintf(want, sizeof want, "{\"plain_text_response\":\"echo: m%d\"}", i);
        cr_assert(got && strstr(got, want), "%s", got ? got : "(none)");
        free(got);
    }
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve_mcp, a_slow_call_times_out_and_shutdown_does_not_wait_for_one, .timeout = MT_HANG(120)) {
    NEED_PYTHON();
    char servers[18000];
    snprintf(servers, sizeof servers, "%s, %s", entry("quick", "slow", 1500),
             entry("patient", "slow", 60000));
    mt_server s;
    start(&s, config("mcp-slow.json", servers));
    double t0 = now_s();
    json_object *o = call(&s, "quick_nap", "{\"seconds\": 5}");
    const double took = now_s() - t0;
    cr_assert_str_eq(mt_jstr(o, "error"), "MCP server 'quick': no answer within 1500 ms");
    cr_assert_lt(took, 3, "the time limit holds: %.2f s", took);
    json_object_put(o);
    // A call that would take 30 s is in flight when SIGTERM comes: it is cancelled, the server's
    // process ended, and mint-serve exits without waiting for it.
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "curl -s -m 60 %s/tools -d '{\"tool\":\"patient_nap\",\"params\":{\"seconds\":30}}' "
             ">'%s'",
             s.url, mt_path(mt_tmpdir(), "mcp-nap"));
    const pid_t client = mt_spawn(cmd);
    usleep(700 * 1000);
    t0 = now_s();
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
    const double stop = now_s() - t0;
    cr_assert_lt(stop, 10, "shutdown waited %.2f s for a 30 s tool call", stop);
    mt_wait(client, 30);
    char *got = (char *)mt_read_file(mt_path(mt_tmpdir(), "mcp-nap"), NULL);
    cr_assert(!got || !got[0] || strstr(got, "cancelled"), "%s", got);
    free(got);
}

Test(serve_mcp, a_server_that_exited_is_started_again_and_its_group_ends_with_it,
     .timeout = MT_HANG(120)) {
    NEED_PYTHON();
    char servers[18000];
    snprintf(servers, sizeof servers, "%s, %s", entry("ex", "exit", 0),
             entry("gc", "grandchild", 0));
    mt_server s;
    start(&s, config("mcp-exit.json", servers));
    json_object *o = call(&s, "ex_pid", "{}");
    const int first = atoi(mt_jstr(o, "plain_text_response"));
    json_object_put(o);
    cr_assert_gt(first, 0);
    o = call(&s, "ex_bye", "{}");
    cr_assert_str_eq(answer_of(o), "bye");
    json_object_put(o);
    usleep(500 * 1000); // it exits after answering
    o = call(&s, "ex_pid", "{}");
    const int second = atoi(mt_jstr(o, "plain_text_response"));
    json_object_put(o);
    cr_assert(second > 0 && second != first, "a new process: %d after %d", second, first);
    cr_assert(kill(first, 0) != 0 && errno == ESRCH, "the exited one was reaped");
    // A server whose child holds its pipes open: calls work, and at shutdown the child (in the
    // server's process group) ends too, without holding mint-serve up.
    o = call(&s, "gc_pid", "{}");
    const int gc = atoi(mt_jstr(o, "plain_text_response"));
    json_object_put(o);
    cr_assert_gt(gc, 0);
    const double t0 = now_s();
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
    cr_assert_lt(now_s() - t0, 10);
    // Killed at once; reaped by init, which may take a moment (a zombie still answers kill).
    bool gone = false;
    for (int i = 0; i < 100 && !gone; i++, usleep(50 * 1000))
        gone = kill(-gc, 0) != 0 && errno == ESRCH;
    cr_assert(gone, "no process is left in the server's group");
}

Test(serve_mcp, a_bad_configuration_stops_the_start, .timeout = MT_HANG(60)) {
    char cmd[8192], *out = NULL, *err = NULL;
    snprintf(cmd, sizeof cmd, "'%s' -m '%s' --port 0 --mcp-servers-json 'not valid json'",
             mt_bin("mint-serve"), mt_synth("small", "F32"));
    cr_assert_eq(mt_run(cmd, &out, &err), 1);
    cr_assert(strstr(err, "--mcp-servers-json: the MCP configuration is not valid JSON"), "%s",
              err);
    free(out);
    free(err);
    snprintf(cmd, sizeof cmd, "'%s' -m '%s' --port 0 --mcp-servers-config /nonexistent/mcp.json",
             mt_bin("mint-serve"), mt_synth("small", "F32"));
    cr_assert_eq(mt_run(cmd, &out, &err), 1);
    cr_assert(strstr(err, "--mcp-servers-config: ") && strstr(err, "/nonexistent/mcp.json"), "%s",
              err);
    free(out);
    free(err);
}
