// mcp_client.c - one MCP server's process and JSON-RPC session (mcp_client.h).
//
// No thread of its own: the thread that makes a request writes it and reads the answer, polling
// the server's stdout (and stderr, which must be drained or the server blocks on it) in slices of
// POLL_MS, so the stop flag and the time limit are seen within a slice. Between requests nothing
// reads: a server's notifications wait in the pipe and are skipped at the next request. Lines that
// are not the awaited answer (notifications, noise, late answers to timed-out requests) are
// skipped; what follows the answer in the same read is kept for the next request.
#include "mcp_client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define POLL_MS    50                // how soon a stop or a time limit is seen
#define MAX_LINE   (8u << 20)        // a longer line from a server is dropped
#define TAIL_BYTES 1024              // stderr kept for messages
#define END_WAIT   0.2               // seconds a server gets to exit once its stdin closes
#define TERM_WAIT  0.3               // then after SIGTERM, before SIGKILL
#define CLIENT     "mint-serve", "1" // clientInfo sent with initialize

struct mcp_client {
    const mcp_server_conf *conf; // the configuration it runs (the owner's)
    const atomic_bool *stop;     // the owner's shutdown flag, or NULL
    pid_t pid;                   // the process, also its process group
    int in, out, err;            // our ends of its stdin, stdout, stderr (non-blocking)
    atomic_bool dead;            // its output ended or its input broke: not to be reused
    atomic_int refs;             // holders
    pthread_mutex_t mu;          // one request at a time; guards everything below
    uint64_t next_id;            // the next request's id (from 1)
    bool initialized;            // initialize was answered
    char *buf;                   // [len] stdout bytes after the last full line read
    size_t len, cap;             //
    bool skipping;               // dropping the rest of an over-long line, up to its '\n'
    char tail[TAIL_BYTES];       // the last bytes of stderr, for messages
    size_t tail_len;             //
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool stopping(const mcp_client *c) {
    return c->stop && atomic_load(c->stop);
}

// The environment of the child: ours, with the configuration's variables set over it.
static char **child_env(const mcp_server_conf *conf) {
    size_t n = 0;
    while (environ && environ[n]) n++;
    char **env = malloc((n + (size_t)conf->n_env + 1) * sizeof *env);
    if (!env) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t klen = strcspn(environ[i], "=");
        bool replaced = false;
        for (int j = 0; j < conf->n_env && !replaced; j++)
            replaced = !strncmp(conf->env[j], environ[i], klen) && conf->env[j][klen] == '=';
        if (!replaced) env[k++] = environ[i];
    }
    for (int j = 0; j < conf->n_env; j++) env[k++] = conf->env[j];
    env[k] = NULL;
    return env;
}

static void close_pair(int p[2]) {
    if (p[0] >= 0) close(p[0]);
    if (p[1] >= 0) close(p[1]);
}

mcp_client *mcp_client_start(const mcp_server_conf *conf, const atomic_bool *stop, char *err,
                             size_t errlen) {
    mcp_client *c = calloc(1, sizeof *c);
    char **argv = calloc((size_t)conf->n_args + 2, sizeof *argv);
    char **env = conf->n_env ? child_env(conf) : environ;
    int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1};
    // Close-on-exec everywhere: the child gets these only through the dup2 below, and no other
    // child (another server started at the same time) inherits them and holds them open.
    if (!c || !argv || !env || pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) ||
        pipe2(perr, O_CLOEXEC)) {
        snprintf(err, errlen, "MCP server '%s': cannot make its pipes: %s", conf->name,
                 strerror(errno ? errno : ENOMEM));
        goto fail;
    }
    argv[0] = conf->command;
    for (int i = 0; i < conf->n_args; i++) argv[i + 1] = conf->args[i];
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_adddup2(&fa, pin[0], 0);
    posix_spawn_file_actions_adddup2(&fa, pout[1], 1);
    posix_spawn_file_actions_adddup2(&fa, perr[1], 2);
    if (conf->cwd) posix_spawn_file_actions_addchdir_np(&fa, conf->cwd);
    // mint-serve blocks SIGINT and SIGTERM in every thread (sigwait takes them) and ignores
    // SIGPIPE; a child must start with neither, or it would outlive a SIGTERM or miss EPIPE.
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    const int rc = posix_spawnp(&c->pid, conf->command, &fa, &at, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc != 0) {
        snprintf(err, errlen, "MCP server '%s': cannot run '%s'%s%s%s: %s", conf->name,
                 conf->command, conf->cwd ? " in '" : "", conf->cwd ? conf->cwd : "",
                 conf->cwd ? "'" : "", strerror(rc));
        goto fail;
    }
    close(pin[0]);
    close(pout[1]);
    close(perr[1]);
    c->in = pin[1];
    c->out = pout[0];
    c->err = perr[0];
    fcntl(c->in, F_SETFL, fcntl(c->in, F_GETFL) | O_NONBLOCK);
    fcntl(c->out, F_SETFL, fcntl(c->out, F_GETFL) | O_NONBLOCK);
    fcntl(c->err, F_SETFL, fcntl(c->err, F_GETFL) | O_NONBLOCK);
    c->conf = conf;
    c->stop = stop;
    c->next_id = 1;
    atomic_init(&c->refs, 1);
    atomic_init(&c->dead, false);
    pthread_mutex_init(&c->mu, NULL);
    free(argv);
    if (env != environ) free(env);
    return c;
fail:
    close_pair(pin);
    close_pair(pout);
    close_pair(perr);
    free(argv);
    if (env && env != environ) free(env);
    free(c);
    return NULL;
}

// Whether the process has exited, without reaping it: the pid (and so its process group's id)
// stays ours until mcp_client_release reaps it, so a signal to the group never reaches a stranger.
static bool exited(const mcp_client *c) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0) return true;
    return si.si_pid == c->pid;
}

// Also dead: a server whose stdout has no writer left (POLLHUP), even if it has not exited yet,
// since it can never answer; this catches one that ended right after its last answer.
bool mcp_client_alive(mcp_client *c) {
    struct pollfd pf = {.fd = c->out, .events = POLLIN};
    if (poll(&pf, 1, 0) == 1 && (pf.revents & (POLLHUP | POLLERR | POLLNVAL)))
        atomic_store(&c->dead, true);
    return !atomic_load(&c->dead) && !exited(c);
}

// Keeps the last TAIL_BYTES of what the server wrote on stderr.
static void keep_tail(mcp_client *c, const char *s, size_t n) {
    if (n >= TAIL_BYTES) {
        s += n - TAIL_BYTES;
        n = TAIL_BYTES;
    }
    if (c->tail_len + n > TAIL_BYTES) {
        const size_t drop = c->tail_len + n - TAIL_BYTES;
        memmove(c->tail, c->tail + drop, c->tail_len - drop);
        c->tail_len -= drop;
    }
    memcpy(c->tail + c->tail_len, s, n);
    c->tail_len += n;
}

// Reads what stderr holds now (a server blocked on a full stderr pipe would never answer).
static void drain_err(mcp_client *c) {
    char chunk[4096];
    ssize_t n;
    if (c->err < 0) return;
    while ((n = read(c->err, chunk, sizeof chunk)) > 0) keep_tail(c, chunk, (size_t)n);
    if (n == 0) { // its end: poll would report it at once, every time
        close(c->err);
        c->err = -1;
    }
}

// "...: <why>", with the server's last stderr line when there is one.
static void explain(mcp_client *c, char *err, size_t errlen, const char *why) {
    size_t end = c->tail_len;
    while (end > 0 && (c->tail[end - 1] == '\n' || c->tail[end - 1] == '\r')) end--;
    size_t start = end;
    while (start > 0 && c->tail[start - 1] != '\n') start--;
    if (end > start)
        snprintf(err, errlen, "MCP server '%s': %s (its stderr: %.*s)", c->conf->name, why,
                 (int)(end - start), c->tail + start);
    else
        snprintf(err, errlen, "MCP server '%s': %s", c->conf->name, why);
}

// Writes all of s and a '\n' to the server's stdin, within the deadline and the stop flag.
static bool send_line(mcp_client *c, const char *s, double deadline, char *err, size_t errlen) {
    const size_t len = strlen(s);
    size_t done = 0;
    while (done < len + 1) {
        const char *p = done < len ? s + done : "\n";
        const size_t want = done < len ? len - done : 1;
        const ssize_t n = write(c->in, p, want);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            atomic_store(&c->dead, true);
            drain_err(c);
            explain(c, err, errlen, "its input is closed (it exited)");
            return false;
        }
        if (stopping(c)) return snprintf(err, errlen, "cancelled: the server stops"), false;
        if (now_s() >= deadline) {
            explain(c, err, errlen, "it does not read its input");
            return false;
        }
        struct pollfd pf = {.fd = c->in, .events = POLLOUT};
        poll(&pf, 1, POLL_MS);
    }
    return true;
}

// Takes the next full line out of buf (true, *line and *n set; valid until the next read), or
// false when buf holds no full line. Over-long lines are dropped.
static bool next_line(mcp_client *c, size_t *consumed, const char **line, size_t *n) {
    while (c->buf && *consumed < c->len) {
        char *nl = memchr(c->buf + *consumed, '\n', c->len - *consumed);
        if (!nl) return false;
        const size_t start = *consumed;
        *consumed = (size_t)(nl - c->buf) + 1;
        if (c->skipping) { // the end of a line already dropped
            c->skipping = false;
            continue;
        }
        size_t k = (size_t)(nl - (c->buf + start));
        if (k > 0 && c->buf[start + k - 1] == '\r') k--;
        if (k == 0) continue;
        *line = c->buf + start;
        *n = k;
        return true;
    }
    return false;
}

// Appends what stdout holds now to buf. False at end of output (the server is gone) or on error.
static bool read_out(mcp_client *c) {
    for (;;) {
        if (c->cap - c->len < 4096) {
            const size_t cap = c->cap ? c->cap * 2 : 16384;
            char *b = realloc(c->buf, cap);
            if (!b) return false;
            c->buf = b;
            c->cap = cap;
        }
        const ssize_t n = read(c->out, c->buf + c->len, c->cap - c->len);
        if (n > 0) {
            c->len += (size_t)n;
            // A line that never ends must not grow buf without bound: drop it, and what is left
            // of it up to its '\n'.
            if (c->len > MAX_LINE && !memchr(c->buf, '\n', c->len)) {
                c->len = 0;
                c->skipping = true;
            }
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
}

// Sends one request (id 0: a notification, nothing awaited) and waits for its answer: its result
// (a new reference) or NULL with err.
static json_object *rpc(mcp_client *c, const char *msg, uint64_t id, double deadline, char *err,
                        size_t errlen) {
    if (!msg) return snprintf(err, errlen, "out of memory"), NULL;
    if (atomic_load(&c->dead)) {
        explain(c, err, errlen, "it has exited");
        return NULL;
    }
    if (!send_line(c, msg, deadline, err, errlen) || id == 0) return NULL;
    char gone[512] = ""; // set when its output ended: what is left in buf is read first
    for (;;) {
        size_t used = 0;
        const char *line;
        size_t n;
        json_object *result = NULL;
        mcp_line_kind kind = MCP_LINE_OTHER;
        while (kind != MCP_LINE_RESULT && kind != MCP_LINE_ERROR && next_line(c, &used, &line, &n))
            kind = mcp_read_line(line, n, id, &result, err, errlen);
        if (used) {
            memmove(c->buf, c->buf + used, c->len - used);
            c->len -= used;
        }
        if (kind == MCP_LINE_RESULT) return result;
        if (kind == MCP_LINE_ERROR) return NULL;
        if (gone[0]) return snprintf(err, errlen, "%s", gone), NULL;
        // Checked after the lines already read, so that an answer that came is never lost.
        if (stopping(c)) return snprintf(err, errlen, "cancelled: the server stops"), NULL;
        if (now_s() >= deadline) {
            snprintf(err, errlen, "MCP server '%s': no answer within %d ms", c->conf->name,
                     c->conf->timeout_ms);
            return NULL;
        }
        struct pollfd pf[2] = {{.fd = c->out, .events = POLLIN}, {.fd = c->err, .events = POLLIN}};
        if (poll(pf, 2, POLL_MS) < 0 && errno != EINTR) {
            snprintf(err, errlen, "MCP server '%s': poll: %s", c->conf->name, strerror(errno));
            return NULL;
        }
        if (pf[1].revents) drain_err(c);
        if (pf[0].revents && !read_out(c)) {
            atomic_store(&c->dead, true);
            drain_err(c);
            explain(c, gone, sizeof gone, "it closed its output (it exited)");
        }
    }
}

// The deadline of one request: limit when one is given (the warm-up's: starting an interpreter
// on a busy machine may take longer than a short timeout_ms meant for tool calls), else the
// server's timeout_ms.
static double deadline_of(const mcp_client *c, double limit) {
    return limit > 0 ? limit : now_s() + c->conf->timeout_ms / 1000.0;
}

// initialize, then the notifications/initialized notification; once per process.
static bool ensure_init(mcp_client *c, double limit, char *err, size_t errlen) {
    if (c->initialized) return true;
    const uint64_t id = c->next_id++;
    char *msg = mcp_msg_initialize(id, CLIENT);
    json_object *r = rpc(c, msg, id, deadline_of(c, limit), err, errlen);
    free(msg);
    if (!r) return false;
    json_object_put(r);
    msg = mcp_msg_initialized();
    char ignored[64];
    rpc(c, msg, 0, deadline_of(c, limit), ignored, sizeof ignored);
    free(msg);
    c->initialized = true;
    return true;
}

int mcp_client_list(mcp_client *c, double max_s, mcp_tool **out, char *err, size_t errlen) {
    *out = NULL;
    const double limit = max_s > 0 ? now_s() + max_s : 0;
    pthread_mutex_lock(&c->mu);
    int n = -1;
    if (ensure_init(c, limit, err, errlen)) {
        const uint64_t id = c->next_id++;
        char *msg = mcp_msg_list_tools(id);
        json_object *r = rpc(c, msg, id, deadline_of(c, limit), err, errlen);
        free(msg);
        if (r) n = mcp_tools_from_result(r, out);
        json_object_put(r);
    }
    pthread_mutex_unlock(&c->mu);
    return n;
}

static json_object *error_answer(const char *msg) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "error", json_object_new_string(msg));
    return o;
}

json_object *mcp_client_call(mcp_client *c, const char *tool, json_object *args) {
    char err[600];
    json_object *answer = NULL;
    pthread_mutex_lock(&c->mu);
    if (stopping(c)) { // a call that waited for its turn while the server began to stop
        snprintf(err, sizeof err, "cancelled: the server stops");
    } else if (ensure_init(c, 0, err, sizeof err)) {
        const uint64_t id = c->next_id++;
        char *msg = mcp_msg_call(id, tool, args);
        json_object *r = rpc(c, msg, id, deadline_of(c, 0), err, sizeof err);
        free(msg);
        if (r) answer = mcp_call_answer(r);
        json_object_put(r);
    }
    pthread_mutex_unlock(&c->mu);
    return answer ? answer : error_answer(err);
}

void mcp_client_ref(mcp_client *c) {
    atomic_fetch_add(&c->refs, 1);
}

// Waits up to `seconds` for the process to exit (not reaping it).
static bool wait_exit(const mcp_client *c, double seconds) {
    const double end = now_s() + seconds;
    while (!exited(c)) {
        if (now_s() >= end) return false;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    return true;
}

void mcp_client_release(mcp_client *c) {
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1) return;
    // MCP's way to end a stdio server: close its input, then SIGTERM, then SIGKILL. The group
    // gets the last word either way: a child of the server still holding the pipes ends too.
    close(c->in);
    if (!wait_exit(c, END_WAIT)) {
        kill(-c->pid, SIGTERM);
        wait_exit(c, TERM_WAIT);
    }
    kill(-c->pid, SIGKILL);
    while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR) {}
    close(c->out);
    if (c->err >= 0) close(c->err);
    pthread_mutex_destroy(&c->mu);
    free(c->buf);
    free(c);
}
