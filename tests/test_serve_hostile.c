// test_serve_hostile.c - mint-serve against hostile connections, on loopback, bounded in
// connections and time: 500 idle or byte-at-a-time (slowloris) connections do not stop other
// clients from being served; a body that never ends is cut at --timeout; headers past
// --max-header get 431; a body that is not JSON gets a 400 a person can act on; libmicrohttpd's
// own messages reach stderr in mint-serve's one-line format (a port in use, a header too big).
#include "helpers/helpers.h"
#include "helpers/server.h"
#include "helpers/tool.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N_IDLE 400 // connections that send nothing at all
#define N_SLOW 100 // connections that send their headers a byte at a time

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// A non-blocking TCP connection to the server; -1 when refused.
static int connect_to(const mt_server *s) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert(fd >= 0, "socket: %s", strerror(errno));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

// A curl in the background: METHOD path (body may be NULL), its status code into code_path.
static pid_t curl_bg(const mt_server *s, const char *path, const char *body, const char *code) {
    char cmd[1024];
    if (body)
        snprintf(cmd, sizeof cmd,
                 "exec curl -sS -m 30 -o /dev/null -w '%%{http_code}' -H 'Content-Type: "
                 "application/json' -d '%s' '%s%s' >'%s' 2>/dev/null",
                 body, s->url, path, code);
    else
        snprintf(cmd, sizeof cmd,
                 "exec curl -sS -m 30 -o /dev/null -w '%%{http_code}' '%s%s' >'%s' 2>/dev/null",
                 s->url, path, code);
    return mt_spawn(cmd);
}

Test(serve_hostile, idle_and_slowloris_connections_do_not_stop_other_clients,
     .timeout = MT_HANG(120)) {
    signal(SIGPIPE, SIG_IGN);
    mt_server s;
    mt_server_start(&s, "-m '%s' -t 1 --parallel 2 --max-connections 1024 --chat-template zephyr",
                    mt_data_path("stories260K.gguf"));
    static int fds[N_IDLE + N_SLOW];
    int open_n = 0;
    for (int i = 0; i < N_IDLE + N_SLOW; i++) {
        fds[i] = connect_to(&s);
        cr_assert(fds[i] >= 0, "connection %d of %d was refused", i + 1, N_IDLE + N_SLOW);
        open_n++;
    }
    // While the slow ones trickle their headers, four ordinary clients must be answered.
    const char *req = "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    const char *codes[4];
    pid_t pids[4];
    for (int i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof name, "hostile-%d.code", i);
        codes[i] = keep(mt_path(mt_tmpdir(), name));
    }
    pids[0] = curl_bg(&s, "/health", NULL, codes[0]);
    pids[1] = curl_bg(&s, "/v1/models", NULL, codes[1]);
    pids[2] = curl_bg(&s, "/v1/completions", "{\"prompt\":\"Once upon a time\",\"max_tokens\":8}",
                      codes[2]);
    pids[3] = curl_bg(&s, "/v1/chat/completions",
                      "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":8}",
                      codes[3]);
    const double t0 = now_s();
    int done = 0, status[4] = {-1, -1, -1, -1};
    size_t sent = 0;
    while (done < 4) {
        cr_assert(now_s() - t0 < 60, "ordinary clients were not answered within 60 s");
        for (int i = N_IDLE; i < N_IDLE + N_SLOW; i++) // one more byte of the never-ending headers
            if (write(fds[i], req + sent % strlen(req), 1) < 0 && errno != EAGAIN)
                cr_assert_fail("slow connection %d was closed early: %s", i, strerror(errno));
        sent++;
        for (int i = 0; i < 4; i++) {
            int st;
            if (status[i] < 0 && waitpid(pids[i], &st, WNOHANG) == pids[i]) {
                status[i] = st;
                done++;
            }
        }
        usleep(100 * 1000);
    }
    for (int i = 0; i < 4; i++) {
        char *c = (char *)mt_read_file(codes[i], NULL);
        cr_expect(c && !strcmp(c, "200"), "ordinary request %d under the load answered %s", i,
                  c ? c : "(nothing)");
        free(c);
    }
    cr_log_info("%d hostile connections held; 4 ordinary requests answered in %.2f s", open_n,
                now_s() - t0);
    for (int i = 0; i < N_IDLE + N_SLOW; i++) close(fds[i]);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve_hostile, a_body_that_never_ends_is_cut_at_the_timeout, .timeout = MT_HANG(60)) {
    signal(SIGPIPE, SIG_IGN);
    mt_server s;
    mt_server_start(&s, "-m '%s' -t 1 --timeout 2", mt_data_path("stories260K.gguf"));
    int fd = connect_to(&s);
    cr_assert(fd >= 0);
    const char *head = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                       "application/json\r\nContent-Length: 100000\r\n\r\n{";
    cr_assert_eq(write(fd, head, strlen(head)), (ssize_t)strlen(head));
    const double t0 = now_s();
    bool closed = false;
    while (!closed && now_s() - t0 < 20) {
        if (write(fd, " ", 1) < 0 && errno != EAGAIN) closed = true;
        char b[64];
        ssize_t n = read(fd, b, sizeof b);
        if (n == 0) closed = true;
        usleep(250 * 1000);
    }
    const double took = now_s() - t0;
    close(fd);
    cr_assert(closed, "a body trickling for 20 s was never cut (--timeout 2)");
    cr_expect(took > 1.5 && took < 10, "cut after %.1f s, --timeout 2", took);
    cr_expect_eq(mt_metric(&s, "mint_requests_total{endpoint=\"other\",status=\"408\"}"), 1);
    mt_resp r = mt_http(&s, "GET", "/health", NULL, NULL);
    cr_expect_eq(r.status, 200, "the server after the cut: %d", r.status);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
    char *log = mt_server_log(&s);
    cr_expect(strstr(log, "mint-serve: POST /v1/completions: the body did not arrive within "
                          "--timeout 2 s"),
              "%s", log);
    free(log);
}

Test(serve_hostile, headers_past_the_limit_get_431_and_one_prefixed_line, .timeout = MT_HANG(60)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' -t 1 --max-header 4096", mt_data_path("stories260K.gguf"));
    char *big = malloc(8200);
    memset(big, 'a', 8192);
    big[8192] = '\0';
    char args[8300];
    snprintf(args, sizeof args, "-H 'X-Big: %s'", big);
    free(big);
    mt_resp r = mt_http(&s, "GET", "/health", NULL, args);
    cr_expect_eq(r.status, 431, "%d", r.status);
    mt_resp_free(&r);
    r = mt_http(&s, "GET", "/health", NULL, NULL);
    cr_expect_eq(r.status, 200, "%d", r.status);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
    char *log = mt_server_log(&s);
    // Every line the server wrote carries its name; libmicrohttpd's error page is not quoted.
    for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n"))
        cr_expect(!strncmp(line, "mint-serve: ", 12), "an unprefixed line: %s", line);
    free(log);
    log = mt_server_log(&s);
    cr_expect(strstr(log, "mint-serve: http: ") && strstr(log, "431"), "%s", log);
    cr_expect(!strstr(log, "<html>"), "%s", log);
    free(log);
}

Test(serve_hostile, a_body_that_is_not_json_gets_a_400_a_person_can_act_on,
     .timeout = MT_HANG(60)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' -t 1", mt_data_path("stories260K.gguf"));
    mt_resp r = mt_http(&s, "POST", "/v1/completions", "not json at all", NULL);
    cr_expect_eq(r.status, 400, "%d", r.status);
    cr_expect(strstr(r.body, "not valid JSON (it stops parsing at byte") &&
                  strstr(r.body, "send a JSON object, e.g."),
              "%s", r.body);
    mt_resp_free(&r);
    r = mt_http(&s, "POST", "/v1/chat/completions", "{\"messages\": [", NULL);
    cr_expect_eq(r.status, 400, "%d", r.status);
    cr_expect(strstr(r.body, "ends in the middle of a value") && strstr(r.body, "messages"), "%s",
              r.body);
    mt_resp_free(&r);
    r = mt_http(&s, "GET", "/v1/chat/completions", NULL, NULL);
    cr_expect_eq(r.status, 405, "%d", r.status);
    cr_expect(strstr(r.headers, "Allow: POST"), "%s", r.headers);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve_hostile, a_port_in_use_is_one_line_naming_why, .timeout = MT_HANG(60)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' -t 1", mt_data_path("stories260K.gguf"));
    char *out, *err;
    int rc = run_tool(&out, &err, "mint-serve", "-m '%s' -t 1 --port %d",
                      mt_data_path("stories260K.gguf"), s.port);
    expect_one_line_error(rc, out, err, "Address already in use", "a second server on the port");
    cr_expect(!strncmp(err, "mint-serve: cannot listen on 127.0.0.1:", 39), "%s", err);
    cr_expect_eq(rc, 1, "exit %d", rc);
    free(out);
    free(err);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}
