// tools_proc.c - child processes of the agent tools (tool_run in tools_builtin.h). A tool's
// command comes from the network, so every child is bounded: a time limit after which its whole
// process group is killed (a shell's own children too), an output cap past which bytes are read
// and dropped (a child blocked on a full pipe would never end), and a waitpid before returning,
// so no zombie and no orphan stays behind. The caller's on_chunk sees output as it comes (a
// streamed exec_shell_command) and can stop the child (the client went away).
//
// fork, then only async-signal-safe calls in the child (the server is multi-threaded): the
// program's path is found in the parent, the child sets its group, its descriptors and its
// directory, and execs.
#include "tools_builtin.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double mono(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

// The program's file: name itself when it holds a '/', else the first executable in $PATH.
static char *find_program(const char *name) {
    if (strchr(name, '/')) return strdup(name);
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const size_t n = strcspn(p, ":");
        char *f = malloc(n + strlen(name) + 2);
        if (!f) return NULL;
        snprintf(f, n + strlen(name) + 2, "%.*s/%s", (int)n, p, name);
        if (n && access(f, X_OK) == 0) return f;
        free(f);
        p += n + (p[n] == ':');
    }
    return NULL;
}

static bool append(tool_run_result *r, size_t *cap, const char *s, size_t n) {
    if (r->len + n + 1 > *cap) {
        size_t c = (r->len + n + 1) * 2;
        char *b = realloc(r->out, c);
        if (!b) return false;
        r->out = b;
        *cap = c;
    }
    memcpy(r->out + r->len, s, n);
    r->len += n;
    r->out[r->len] = '\0';
    return true;
}

bool tool_run(char *const *argv, const char *cwd, const char *in, size_t in_len, bool separate_err,
              size_t max_output, int timeout_s, tool_chunk_fn on_chunk, void *cls,
              tool_run_result *res, char *err, size_t errlen) {
    memset(res, 0, sizeof *res);
    res->exit_code = -1;
    size_t cap = 0;
    if (!append(res, &cap, "", 0)) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    char *prog = find_program(argv[0]);
    if (!prog) {
        snprintf(err, errlen, "failed to spawn process: %s not found", argv[0]);
        return false;
    }
    int out[2], inp[2], null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd < 0 || pipe2(out, O_CLOEXEC)) {
        if (null_fd >= 0) close(null_fd);
        free(prog);
        snprintf(err, errlen, "failed to spawn process: %s", strerror(errno));
        return false;
    }
    if (pipe2(inp, O_CLOEXEC)) {
        close(out[0]), close(out[1]), close(null_fd);
        free(prog);
        snprintf(err, errlen, "failed to spawn process: %s", strerror(errno));
        return false;
    }
    const pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0); // its own group: the time limit kills the shell's children too
        signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL); // the server blocks SIGINT/SIGTERM in its threads
        dup2(inp[0], 0);
        dup2(out[1], 1);
        dup2(separate_err ? null_fd : out[1], 2);
        if (cwd && chdir(cwd) != 0) {
            static const char msg[] = "cannot enter the working directory\n";
            if (write(1, msg, sizeof msg - 1) < 0) _exit(127);
            _exit(127); // what a shell answers for a command it could not run
        }
        execve(prog, argv, environ);
        _exit(127);
    }
    close(out[1]), close(inp[0]), close(null_fd);
    free(prog);
    if (pid < 0) {
        close(out[0]), close(inp[1]);
        snprintf(err, errlen, "failed to spawn process: %s", strerror(errno));
        return false;
    }
    setpgid(pid, pid); // also here: no window where a kill of the group misses it
    fcntl(inp[1], F_SETFL, O_NONBLOCK);
    int in_fd = inp[1];
    size_t in_pos = 0;
    if (!in || in_len == 0) close(in_fd), in_fd = -1; // EOF at once: nothing waits on stdin
    const double deadline = mono() + (timeout_s > 0 ? timeout_s : 1);
    char buf[4096];
    bool open_out = true;
    while (open_out) {
        const double left = deadline - mono();
        if (left <= 0) {
            res->timed_out = true;
            break;
        }
        struct pollfd p[2] = {{out[0], POLLIN, 0}, {in_fd, POLLOUT, 0}};
        const int np = in_fd >= 0 ? 2 : 1;
        const int wait_ms = left > 0.1 ? 100 : (int)(left * 1000) + 1;
        if (poll(p, (nfds_t)np, wait_ms) < 0 && errno != EINTR) break;
        if (on_chunk && !(p[0].revents & POLLIN) && !on_chunk(cls, buf, 0)) { // still wanted?
            res->stopped = true;
            break;
        }
        if (in_fd >= 0 && (p[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
            const ssize_t w = write(in_fd, in + in_pos, in_len - in_pos);
            if (w > 0) in_pos += (size_t)w;
            if (w < 0 && errno != EAGAIN && errno != EINTR) in_pos = in_len;
            if (in_pos >= in_len) close(in_fd), in_fd = -1;
        }
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            const ssize_t n = read(out[0], buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                open_out = false;
                break;
            }
            size_t keep = (size_t)n;
            if (res->len + keep > max_output) {
                keep = max_output > res->len ? max_output - res->len : 0;
                res->truncated = true;
            }
            if (keep && !append(res, &cap, buf, keep)) res->truncated = true;
            if (keep && on_chunk && !on_chunk(cls, buf, keep)) {
                res->stopped = true;
                break;
            }
        }
    }
    if (in_fd >= 0) close(in_fd);
    close(out[0]);
    // Its output is closed or no longer wanted: give it a moment to exit on its own, then kill
    // the group. Either way it is reaped here.
    int status = 0;
    pid_t w = 0;
    if (open_out || res->timed_out || res->stopped) {
        kill(-pid, SIGKILL);
    } else {
        for (double until = mono() + (deadline - mono() > 0 ? deadline - mono() : 0);
             (w = waitpid(pid, &status, WNOHANG)) == 0 && mono() < until;)
            nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
        if (w == 0) {
            res->timed_out = true;
            kill(-pid, SIGKILL);
        }
    }
    if (w != pid)
        while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {}
    if (w == pid && WIFEXITED(status)) res->exit_code = WEXITSTATUS(status);
    kill(-pid, SIGKILL); // what it left running in the background (its group outlives it)
    return true;
}

void tool_run_result_free(tool_run_result *r) {
    free(r->out);
    memset(r, 0, sizeof *r);
}
