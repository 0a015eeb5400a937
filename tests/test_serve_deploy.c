// test_serve_deploy.c - mint-serve with real clients and in its deployment: OpenAI's official
// Node client (tests/serve/openai_client.mjs), the chat page in headless Chromium driven by
// playwright-core (tests/serve/page.mjs), and deploy/nginx.conf in front of two processes, one
// of which is killed under load: every request is answered exactly once. The Node packages come
// from tools/scripts/npm-deps.sh (outside the repository), which is also tested here: installs at
// once into one folder, and the repair of a half-finished one. Without node, npm or nginx these
// tests are skipped, or fail when CI is set.
#include "helpers/browser.h"
#include "helpers/helpers.h"
#include "helpers/server.h"
#include "helpers/tool.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void need_program(const char *name, const char *package) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s", name);
    if (mt_run(cmd, NULL, NULL) == 0) return;
    if (getenv("CI"))
        cr_assert_fail("CI is set but %s is missing (apt-get install %s)", name, package);
    cr_skip_test("%s is not installed; skipping", name);
}

// The folder holding node_modules with openai and playwright-core (tools/scripts/npm-deps.sh).
static const char *npm_dir(void) {
    need_program("node", "nodejs");
    need_program("npm", "npm");
    char cmd[4300], *out, *err;
    snprintf(cmd, sizeof cmd, "timeout 300 '%s/tools/scripts/npm-deps.sh'",
             getenv("MINT_SOURCE_DIR"));
    int rc = mt_run(cmd, &out, &err);
    if (rc != 0) {
        if (getenv("CI")) cr_assert_fail("tools/scripts/npm-deps.sh failed: %s", err);
        cr_skip_test("tools/scripts/npm-deps.sh failed (no registry?): %s", err);
    }
    out[strcspn(out, "\n")] = '\0';
    const char *dir = keep(out);
    free(out);
    free(err);
    return dir;
}

// mint-run's temperature-0 text after the prompt (-n tokens), or its -cnv reply to one line.
static char *mint_run(const char *model, const char *prompt, int n, bool chat) {
    char *out, *err, args[4300];
    int rc;
    if (chat) {
        char line[512];
        snprintf(line, sizeof line, "%s\n", prompt);
        snprintf(args, sizeof args, "-m '%s' -cnv --chat-template zephyr --temp 0 -n %d -t 1",
                 model, n);
        rc = run_tool_stdin(&out, &err, line, "mint-run", args);
    } else {
        rc = run_tool(&out, &err, "mint-run", "-m '%s' -p '%s' --temp 0 -n %d -t 1", model, prompt,
                      n);
    }
    cr_assert_eq(rc, 0, "%s", err);
    free(err);
    size_t l = strlen(out);
    if (l && out[l - 1] == '\n') out[--l] = '\0';
    const size_t skip = chat ? 0 : strlen(prompt);
    cr_assert(chat || !strncmp(out, prompt, skip), "%s", out);
    char *t = strdup(out + skip);
    free(out);
    return t;
}

Test(serve_deploy, openai_node_client_gets_mint_run_answers, .timeout = MT_HANG(600)) {
    const char *npm = npm_dir();
    const char *model = keep(mt_data_path("stories260K.gguf"));
    char *completion = mint_run(model, "Once upon a time", 40, false);
    char *chat = mint_run(model, "Tell me a story", 30, true);
    json_object *want = json_object_new_object();
    json_object_object_add(want, "model", json_object_new_string("stories260K.gguf"));
    json_object_object_add(want, "prompt", json_object_new_string("Once upon a time"));
    json_object_object_add(want, "completion", json_object_new_string(completion));
    json_object_object_add(want, "n", json_object_new_int(40));
    json_object_object_add(want, "user", json_object_new_string("Tell me a story"));
    json_object_object_add(want, "chat", json_object_new_string(chat));
    json_object_object_add(want, "chat_n", json_object_new_int(30));
    const char *path = keep(mt_path(mt_tmpdir(), "expect.json"));
    cr_assert_eq(json_object_to_file(path, want), 0);
    json_object_put(want);
    free(completion);
    free(chat);
    mt_server s;
    mt_server_start(&s, "-m '%s' -t 1 --api-key k3y --chat-template zephyr", model);
    char cmd[8192], *out, *err;
    snprintf(cmd, sizeof cmd,
             "timeout 240 node '%s/tests/serve/openai_client.mjs' '%s' %s k3y '%s'",
             getenv("MINT_SOURCE_DIR"), npm, s.url, path);
    int rc = mt_run(cmd, &out, &err);
    cr_assert_eq(rc, 0, "%s%s", out, err);
    cr_assert(strstr(out, " passed, 0 failed"), "%s", out);
    cr_log_info("%s", out);
    free(out);
    free(err);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve_deploy, chat_page_works_in_chromium, .timeout = MT_HANG(600)) {
    const char *npm = npm_dir();
    const char *chromium = keep(mt_chromium());
    mt_server s;
    mt_server_start(&s, "-m '%s' --chat-template zephyr -t 1", mt_data_path("stories260K.gguf"));
    char cmd[8192], *out, *err;
    snprintf(cmd, sizeof cmd,
             "MINT_CHROMIUM='%s' timeout 240 node '%s/tests/serve/page.mjs' '%s' %s "
             "'%s/serve-page.png'",
             chromium, getenv("MINT_SOURCE_DIR"), npm, s.url, getenv("MINT_BIN_DIR"));
    int rc = mt_run(cmd, &out, &err);
    cr_assert_eq(rc, 0, "%s%s", out, err);
    cr_assert(strstr(out, "page: ") && strstr(out, " passed, 0 failed"), "%s", out);
    cr_log_info("%sscreenshot: %s/serve-page.png", out, getenv("MINT_BIN_DIR"));
    free(out);
    free(err);
    cr_assert_eq(mt_metric(&s, "mint_requests_total{endpoint=\"/v1/chat/completions\",status="
                               "\"200\"}"),
                 1);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

// Whether openai and playwright-core load from <dir>/node_modules; node's error in *err.
static bool npm_loads(const char *dir, char **err) {
    char cmd[4300];
    snprintf(cmd, sizeof cmd,
             "timeout 120 node -e 'const r = require(\"node:module\").createRequire("
             "process.argv[1] + \"/node_modules/x.js\"); r(\"openai\"); "
             "r(\"playwright-core\")' '%s'",
             dir);
    return mt_run(cmd, NULL, err) == 0;
}

// Runs tools/scripts/npm-deps.sh into `dir` (MINT_NPM_DIR); fails the test unless it exits 0
// printing `dir`.
static void npm_deps_into(const char *dir) {
    char cmd[8400], *out, *err;
    snprintf(cmd, sizeof cmd, "MINT_NPM_DIR='%s' timeout 300 '%s/tools/scripts/npm-deps.sh'", dir,
             getenv("MINT_SOURCE_DIR"));
    cr_assert_eq(mt_run(cmd, &out, &err), 0, "%s", err);
    cr_assert(!strncmp(out, dir, strlen(dir)) && !strcmp(out + strlen(dir), "\n"), "%s", out);
    free(out);
    free(err);
}

// Three installs into one fresh folder at once end as one usable install (they used to race:
// ENOTEMPTY from npm, then "Cannot find module"); a half-finished install left behind, as a
// killed run leaves it, is installed again by the next run instead of used.
Test(serve_deploy, npm_deps_installs_once_and_repairs_a_broken_install, .timeout = MT_HANG(900)) {
    npm_dir(); // skips without node, npm or a registry; fills npm's own cache
    const char *tmp = keep(mt_tmpdir()), *dir = keep(mt_path(tmp, "npm"));
    char cmd[8400], *out, *err;
    snprintf(cmd, sizeof cmd,
             "cd '%s' && for i in 1 2 3; do MINT_NPM_DIR='%s' timeout 300 "
             "'%s/tools/scripts/npm-deps.sh' >out.$i 2>>err & pids=\"$pids $!\"; done; rc=0; "
             "for p in $pids; do wait $p || rc=1; done; cat out.1 out.2 out.3 err; exit $rc",
             tmp, dir, getenv("MINT_SOURCE_DIR"));
    cr_assert_eq(mt_run(cmd, &out, NULL), 0, "%s", out);
    char three[3 * 4200];
    snprintf(three, sizeof three, "%s\n%s\n%s\n", dir, dir, dir);
    cr_assert(!strncmp(out, three, strlen(three)), "%s", out);
    free(out);
    cr_assert(npm_loads(dir, &err), "%s", err);
    free(err);

    // The state: playwright-core without lib/bootstrap.js, and a killed run's folder.
    snprintf(cmd, sizeof cmd,
             "rm '%s/node_modules/playwright-core/lib/bootstrap.js' && "
             "mkdir -p '%s/.install.killed/node_modules' && touch '%s/.install.killed/x'",
             dir, dir, dir);
    cr_assert_eq(mt_run(cmd, NULL, NULL), 0);
    cr_assert(!npm_loads(dir, &err) && strstr(err, "lib/bootstrap"), "%s", err);
    free(err);
    npm_deps_into(dir);
    cr_assert(npm_loads(dir, &err), "%s", err);
    free(err);
    snprintf(cmd, sizeof cmd, "test ! -e '%s/.install.killed'", dir);
    cr_assert_eq(mt_run(cmd, NULL, NULL), 0, "the killed run's folder is still there");

    // Killed before the marker: only the package.json files (right versions) made it.
    snprintf(cmd, sizeof cmd,
             "cd '%s/node_modules' && rm .mint-npm-deps && "
             "find openai playwright-core -type f ! -path '*/package.json' -delete",
             dir);
    cr_assert_eq(mt_run(cmd, NULL, NULL), 0);
    cr_assert(!npm_loads(dir, &err), "the planted install still loads");
    free(err);
    npm_deps_into(dir);
    cr_assert(npm_loads(dir, &err), "%s", err);
    free(err);
}

// Replaces the one occurrence of `from` in *s by `to` (the deploy file must still have it).
static void replace(char **s, const char *from, const char *to) {
    char *at = strstr(*s, from);
    cr_assert(at, "deploy/nginx.conf no longer has '%s'", from);
    const size_t head = (size_t)(at - *s), fl = strlen(from), tl = strlen(to);
    char *r = malloc(strlen(*s) - fl + tl + 1);
    memcpy(r, *s, head);
    memcpy(r + head, to, tl);
    strcpy(r + head + tl, at + fl);
    free(*s);
    *s = r;
}

static int free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t n = sizeof a;
    cr_assert(bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
              getsockname(fd, (struct sockaddr *)&a, &n) == 0);
    close(fd);
    return ntohs(a.sin_port);
}

// Lines of a backend's -v log saying request `id` was answered in full.
static int answered(const char *log, const char *id) {
    char pat[64];
    snprintf(pat, sizeof pat, " 200 id=%s answered\n", id);
    int n = 0;
    for (const char *p = strstr(log, pat); p; p = strstr(p + 1, pat)) n++;
    return n;
}

Test(serve_deploy, nginx_over_two_processes_survives_losing_one, .timeout = MT_HANG(600)) {
    need_program("nginx", "nginx-light");
    need_program("python3", "python3");
    const char *model = keep(mt_data_path("stories260K.gguf"));
    mt_server a, b;
    mt_server_start(&a, "-m '%s' --chat-template zephyr -t 1 --parallel 4 -v", model);
    mt_server_start(&b, "-m '%s' --chat-template zephyr -t 1 --parallel 4 -v", model);
    // deploy/nginx.conf with loopback ports and every path in the test's folder.
    char src[4300], buf[4300];
    snprintf(src, sizeof src, "%s/deploy/nginx.conf", getenv("MINT_SOURCE_DIR"));
    char *conf = (char *)mt_read_file(src, NULL);
    cr_assert(conf, "cannot read %s", src);
    const char *tmp = keep(mt_tmpdir());
    const int port = free_port();
    replace(&conf, "user www-data;\n", "");
    replace(&conf, "worker_processes auto;", "worker_processes 1;");
    snprintf(buf, sizeof buf, "pid %s/nginx.pid;", tmp);
    replace(&conf, "pid /run/nginx.pid;", buf);
    snprintf(buf, sizeof buf, "error_log %s/error.log", tmp);
    replace(&conf, "error_log /var/log/nginx/error.log", buf);
    snprintf(buf, sizeof buf,
             "access_log %s/access.log;\n    client_body_temp_path %s/body;\n"
             "    proxy_temp_path %s/proxy;\n    fastcgi_temp_path %s/fastcgi;\n"
             "    uwsgi_temp_path %s/uwsgi;\n    scgi_temp_path %s/scgi;",
             tmp, tmp, tmp, tmp, tmp, tmp);
    replace(&conf, "access_log /var/log/nginx/access.log;", buf);
    snprintf(buf, sizeof buf, "server 127.0.0.1:%d ", a.port);
    replace(&conf, "server 127.0.0.1:8081 ", buf);
    snprintf(buf, sizeof buf, "server 127.0.0.1:%d ", b.port);
    replace(&conf, "server 127.0.0.1:8082 ", buf);
    snprintf(buf, sizeof buf, "listen 127.0.0.1:%d;", port);
    replace(&conf, "listen 8080;", buf);
    const char *conf_path = keep(mt_path(tmp, "nginx.conf"));
    cr_assert(mt_write_file(conf_path, conf, strlen(conf)));
    free(conf);
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "exec nginx -p '%s' -c '%s' -e '%s/error.log' -g 'daemon off;' >'%s/nginx.out' 2>&1",
             tmp, conf_path, tmp, tmp);
    pid_t nginx = mt_spawn(cmd);
    mt_server front = {.pid = nginx, .port = port};
    snprintf(front.url, sizeof front.url, "http://127.0.0.1:%d", port);
    int status = 0;
    for (int i = 0; i < 250 && status != 200; i++) {
        mt_resp r = mt_http(&front, "GET", "/health", NULL, "--connect-timeout 1");
        status = r.status;
        mt_resp_free(&r);
        if (status != 200) usleep(40000);
    }
    cr_assert_eq(status, 200, "nginx did not come up: %s/error.log", tmp);
    // 60 streamed requests at concurrency 6, each with its own X-Request-Id, retried by the
    // client on a connection error, a 5xx or a cut stream.
    snprintf(cmd, sizeof cmd,
             "exec timeout 200 python3 '%s/tools/bench/serve-load.py' --url %s -n 60 -c 6 "
             "--max-tokens 128 --retries 4 --id-prefix r --timeout 60 --deadline 150 "
             "--label nginx >'%s/load.out' 2>&1",
             getenv("MINT_SOURCE_DIR"), front.url, tmp);
    pid_t load = mt_spawn(cmd);
    // Kill one backend outright once it has answered a few of them (others are in flight).
    int seen = 0;
    for (int i = 0; i < 3000 && seen < 8; i++) {
        char *log = mt_server_log(&a);
        seen = 0;
        for (const char *p = strstr(log, " 200 id=r"); p; p = strstr(p + 1, " 200 id=r")) {
            const char *q = p + 9;
            while (*q >= '0' && *q <= '9') q++;
            seen += !strncmp(q, " answered\n", 10);
        }
        free(log);
        usleep(20000);
    }
    cr_assert_geq(seen, 8, "backend A answered only %d requests", seen);
    cr_assert_eq(mt_server_stop(&a, SIGKILL, 10), 128 + SIGKILL);
    const int rc = mt_wait(load, 240);
    char *out = (char *)mt_read_file(mt_path(tmp, "load.out"), NULL);
    cr_assert_eq(rc, 0, "the load failed: %s", out);
    cr_assert(strstr(out, ": 60 ok, 0 errors, 0 mismatches"), "%s", out);
    cr_log_info("%s", out);
    free(out);
    // Every request answered exactly once, by one of the two.
    char *log_a = mt_server_log(&a), *log_b = mt_server_log(&b);
    int by_a = 0, by_b = 0;
    for (int i = 0; i < 60; i++) {
        char id[16];
        snprintf(id, sizeof id, "r%d", i);
        const int na = answered(log_a, id), nb = answered(log_b, id);
        cr_assert_eq(na + nb, 1, "request %s answered %d times (A %d, B %d)", id, na + nb, na, nb);
        by_a += na;
        by_b += nb;
    }
    cr_log_info("answered by A (killed): %d, by B: %d", by_a, by_b);
    cr_assert(by_a >= 8 && by_b > 0);
    free(log_a);
    free(log_b);
    kill(nginx, SIGQUIT); // graceful
    cr_assert_eq(mt_wait(nginx, 30), 0);
    cr_assert_eq(mt_server_stop(&b, SIGTERM, 30), 0);
}
