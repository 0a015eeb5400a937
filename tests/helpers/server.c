// server.c - see server.h.
#include "server.h"

#include "helpers.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void mt_server_start(mt_server *s, const char *fmt, ...) {
    static int n_started;
    char args[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    memset(s, 0, sizeof *s);
    char name[64];
    snprintf(name, sizeof name, "serve-%d.log", n_started++);
    snprintf(s->log, sizeof s->log, "%s", mt_path(mt_tmpdir(), name));
    char cmd[12800];
    snprintf(cmd, sizeof cmd, "exec '%s' %s --port 0 2>'%s' >/dev/null </dev/null",
             mt_bin("mint-serve"), args, s->log);
    const pid_t pid = mt_spawn(cmd); // dies with the test
    s->pid = pid;
    for (double until = now() + MT_HANG(60); now() < until; nap(20)) {
        char *log = (char *)mt_read_file(s->log, NULL);
        const char *at = log ? strstr(log, " on http://127.0.0.1:") : NULL;
        if (at) {
            s->port = atoi(at + strlen(" on http://127.0.0.1:"));
            free(log);
            cr_assert_gt(s->port, 0);
            snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d", s->port);
            return;
        }
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            s->pid = 0;
            cr_assert_fail("mint-serve %s exited before listening: %s", args, log ? log : "");
        }
        free(log);
    }
    kill(pid, SIGKILL);
    cr_assert_fail("mint-serve %s did not start listening within %d s", args, MT_HANG(60));
}

int mt_server_stop(mt_server *s, int sig, double seconds) {
    cr_assert_gt(s->pid, 0, "no server to stop");
    kill(s->pid, sig);
    for (double until = now() + seconds; now() < until; nap(10)) {
        int st;
        if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
            s->pid = 0;
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
    }
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->pid = 0;
    cr_assert_fail("mint-serve did not exit within %g s of signal %d", seconds, sig);
    return -1;
}

char *mt_server_log(const mt_server *s) {
    char *log = (char *)mt_read_file(s->log, NULL);
    return log ? log : strdup("");
}

mt_resp mt_http(const mt_server *s, const char *method, const char *path, const char *body,
                const char *curl_args) {
    static int n_req;
    char name[64];
    const int k = n_req++;
    snprintf(name, sizeof name, "req-%d.body", k);
    char *in = strdup(mt_path(mt_tmpdir(), name));
    snprintf(name, sizeof name, "req-%d.out", k);
    char *out = strdup(mt_path(mt_tmpdir(), name));
    snprintf(name, sizeof name, "req-%d.hdr", k);
    char *hdr = strdup(mt_path(mt_tmpdir(), name));
    if (body) cr_assert(mt_write_file(in, body, strlen(body)));
    char data[4200] = "";
    if (body)
        snprintf(data, sizeof data, "-H 'Content-Type: application/json' --data-binary '@%s'", in);
    char cmd[12800];
    snprintf(cmd, sizeof cmd,
             "curl -sS -N -m %d -X %s %s %s -o '%s' -D '%s' -w '%%{http_code}' '%s%s' "
             "2>/dev/null",
             MT_HANG(120), method, data, curl_args ? curl_args : "", out, hdr, s->url, path);
    char *code;
    mt_resp r = {0};
    r.curl_rc = mt_run(cmd, &code, NULL);
    r.status = atoi(code);
    free(code);
    r.body = (char *)mt_read_file(out, NULL);
    r.headers = (char *)mt_read_file(hdr, NULL);
    if (!r.body) r.body = strdup("");
    if (!r.headers) r.headers = strdup("");
    unlink(in);
    unlink(out);
    unlink(hdr);
    free(in);
    free(out);
    free(hdr);
    return r;
}

void mt_resp_free(mt_resp *r) {
    free(r->body);
    free(r->headers);
    memset(r, 0, sizeof *r);
}

json_object *mt_post_json(const mt_server *s, const char *path, const char *body) {
    mt_resp r = mt_http(s, "POST", path, body, NULL);
    cr_assert_eq(r.status, 200, "POST %s %s: %d %s", path, body, r.status, r.body);
    json_object *o = json_tokener_parse(r.body);
    cr_assert(o && json_object_is_type(o, json_type_object), "POST %s: not a JSON object: %s", path,
              r.body);
    mt_resp_free(&r);
    return o;
}

double mt_metric(const mt_server *s, const char *name) {
    mt_resp r = mt_http(s, "GET", "/metrics", NULL, NULL);
    cr_assert_eq(r.status, 200, "/metrics: %d", r.status);
    double v = -1;
    const size_t n = strlen(name);
    for (const char *l = r.body; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, name, n) && l[n] == ' ') {
            v = strtod(l + n + 1, NULL);
            break;
        }
    mt_resp_free(&r);
    return v;
}

double mt_metric_wait(const mt_server *s, const char *name, double want, double seconds) {
    double v = mt_metric(s, name);
    for (double until = now() + seconds; v != want && now() < until; nap(20))
        v = mt_metric(s, name);
    return v;
}

const char *mt_jstr(json_object *o, const char *key) {
    json_object *v;
    if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return "";
    return json_object_get_string(v);
}

pid_t mt_spawn(const char *cmdline) {
    const pid_t parent = getpid();
    const pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork failed");
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        execl("/bin/sh", "sh", "-c", cmdline, (char *)NULL);
        _exit(127);
    }
    return pid;
}

int mt_wait(pid_t pid, double seconds) {
    for (double until = now() + seconds; now() < until; nap(10)) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    cr_assert_fail("a background command did not end within %g s", seconds);
    return -1;
}
