// tools_io.c - where an agent tool's files and commands are (tool_io in tools_builtin.h): the
// host, with relative paths under the request's working directory (x-tool-cwd), or an isolate
// named by a runtime (a running docker/podman container, an ssh host), reached only through
// commands (cat, sh, find) so that nothing of the isolate's files is touched on the host. The
// isolate's commands carry their own `timeout` too: killing the local docker/ssh client does not
// stop what it started on the far side.
#include "tools_builtin.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ISOLATE_TIMEOUT  15                 // seconds for an isolate's helper command
#define LIST_TIMEOUT     15.0               // seconds a listing may walk
#define LIST_MAX_ENTRIES 200000             // entries a listing keeps
#define ISOLATE_LIST_MAX (8u * 1024 * 1024) // bytes of `find` output read

// Directories listed but never entered: they can be enormous and are rarely what is sought.
static const char *const JUNK_DIRS[] = {".git",   "node_modules", "__pycache__", ".venv", "venv",
                                        ".svn",   ".hg",          "dist",        "build", "target",
                                        ".cache", ".idea",        ".vscode"};
#define N_JUNK (sizeof JUNK_DIRS / sizeof JUNK_DIRS[0])

serve_tool_status tool_io_open(json_object *params, const char *default_rt, tool_io *io, char *err,
                               size_t errlen) {
    memset(io, 0, sizeof *io);
    json_object *v;
    if (json_object_object_get_ex(params, "cwd", &v) && json_object_is_type(v, json_type_string) &&
        *json_object_get_string(v))
        io->cwd = json_object_get_string(v);
    const char *rt = default_rt;
    if (json_object_object_get_ex(params, "runtime", &v) &&
        json_object_is_type(v, json_type_string) && *json_object_get_string(v))
        rt = json_object_get_string(v);
    if (!agent_runtime_parse(rt, &io->rt, err, errlen)) return SERVE_TOOL_FAILED;
    if (io->rt.kind == AGENT_RUNTIME_IMAGE) { // a request attaches; only the server spawns
        snprintf(err, errlen, "tool runtime must name a running container: %.200s", rt);
        return SERVE_TOOL_FAILED;
    }
    return SERVE_TOOL_OK;
}

static bool isolated(const tool_io *io) {
    return io->rt.kind != AGENT_RUNTIME_HOST;
}

// Folds "." and ".." and repeated '/' of an absolute path in place. The result p[0..out) grows
// by "/SEGMENT" and never passes the read position (each read segment is followed by its '/').
static void normalize(char *p) {
    char *out = p;
    for (const char *s = p + 1; *s;) {
        const size_t n = strcspn(s, "/");
        const char *next = s + n + (s[n] == '/');
        if (n == 2 && s[0] == '.' && s[1] == '.') {
            while (out > p && *--out != '/') {}
        } else if (n > 0 && !(n == 1 && s[0] == '.')) {
            *out++ = '/';
            memmove(out, s, n);
            out += n;
        }
        s = next;
    }
    if (out == p) *out++ = '/';
    *out = '\0';
}

char *tool_io_resolve(const tool_io *io, const char *path) {
    if (isolated(io)) { // POSIX paths on the far side; its own cwd unless one was given
        if (path[0] == '/' || !io->cwd) return strdup(path);
        char *s = malloc(strlen(io->cwd) + strlen(path) + 2);
        if (s) sprintf(s, "%s/%s", io->cwd, path);
        return s;
    }
    const char *home = getenv("HOME");
    char here[4096];
    const char *base = NULL, *rest = path;
    if (path[0] == '~' && (path[1] == '\0' || path[1] == '/') && home && *home)
        base = home, rest = path + 1;
    else if (path[0] != '/')
        base = io->cwd ? io->cwd : getcwd(here, sizeof here);
    if (!base) base = "/";
    char *s = malloc(strlen(base) + strlen(rest) + 3);
    if (!s) return NULL;
    if (path[0] == '/' && !(rest != path))
        sprintf(s, "%s", path);
    else
        sprintf(s, "%s%s/%s", base[0] == '/' ? "" : "/", base, rest);
    normalize(s);
    return s;
}

// Runs a helper command in the isolate (inner: a POSIX argv).
static bool isolate_exec(const tool_io *io, const char *const *inner, const char *in, size_t in_len,
                         size_t max, tool_run_result *res) {
    char **argv = agent_runtime_argv(&io->rt, inner, in != NULL);
    char err[256];
    if (!argv) return false;
    const bool ok = tool_run(argv, NULL, in, in_len, false, max, ISOLATE_TIMEOUT + 5, NULL, NULL,
                             res, err, sizeof err);
    agent_argv_free(argv);
    return ok;
}

static bool isolate_ok(const tool_io *io, const char *const *inner) {
    tool_run_result r;
    const bool ok = isolate_exec(io, inner, NULL, 0, 4096, &r) && r.exit_code == 0;
    tool_run_result_free(&r);
    return ok;
}

tool_kind tool_io_kind(const tool_io *io, const char *path) {
    char *p = tool_io_resolve(io, path);
    if (!p) return TOOL_NONE;
    tool_kind k = TOOL_NONE;
    if (isolated(io)) {
        const char *f[] = {"sh", "-c", "[ -f \"$1\" ]", "_", p, NULL};
        const char *d[] = {"sh", "-c", "[ -d \"$1\" ]", "_", p, NULL};
        k = isolate_ok(io, f) ? TOOL_FILE : isolate_ok(io, d) ? TOOL_DIR : TOOL_NONE;
    } else {
        struct stat st;
        if (stat(p, &st) == 0)
            k = S_ISREG(st.st_mode) ? TOOL_FILE : S_ISDIR(st.st_mode) ? TOOL_DIR : TOOL_NONE;
    }
    free(p);
    return k;
}

bool tool_io_size(const tool_io *io, const char *path, size_t *size) {
    char *p = tool_io_resolve(io, path);
    if (!p) return false;
    bool ok = false;
    if (isolated(io)) {
        const char *inner[] = {"sh", "-c", "wc -c < \"$1\"", "_", p, NULL};
        tool_run_result r;
        if (isolate_exec(io, inner, NULL, 0, 64, &r) && r.exit_code == 0) {
            char *end;
            const unsigned long long v = strtoull(r.out, &end, 10);
            ok = end != r.out;
            *size = (size_t)v;
        }
        tool_run_result_free(&r);
    } else {
        struct stat st;
        ok = stat(p, &st) == 0 && S_ISREG(st.st_mode);
        if (ok) *size = (size_t)st.st_size;
    }
    free(p);
    return ok;
}

bool tool_io_read(const tool_io *io, const char *path, size_t max, char **data, size_t *len,
                  bool *too_big) {
    *data = NULL, *len = 0, *too_big = false;
    char *p = tool_io_resolve(io, path);
    if (!p) return false;
    bool ok = false;
    if (isolated(io)) {
        const char *inner[] = {"cat", "--", p, NULL};
        tool_run_result r;
        if (isolate_exec(io, inner, NULL, 0, max, &r) && r.exit_code == 0 && !r.timed_out) {
            *too_big = r.truncated;
            ok = !r.truncated;
            *data = r.out, *len = r.len;
            r.out = NULL;
        }
        tool_run_result_free(&r);
    } else {
        const int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK); // a FIFO must not block
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
            if ((size_t)st.st_size > max) {
                *too_big = true;
            } else if ((*data = malloc((size_t)st.st_size + 1))) {
                size_t n = 0;
                ssize_t k;
                while (n < (size_t)st.st_size &&
                       (k = read(fd, *data + n, (size_t)st.st_size - n)) > 0)
                    n += (size_t)k;
                (*data)[n] = '\0';
                *len = n;
                ok = true;
            }
        }
        if (fd >= 0) close(fd);
    }
    if (!ok) free(*data), *data = NULL, *len = 0;
    free(p);
    return ok;
}

// mkdir -p of path's parent directories.
static bool make_parents(char *p) {
    for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        const bool ok = mkdir(p, 0777) == 0 || errno == EEXIST;
        *s = '/';
        if (!ok) return false;
    }
    return true;
}

bool tool_io_write(const tool_io *io, const char *path, const char *data, size_t len) {
    char *p = tool_io_resolve(io, path);
    if (!p) return false;
    bool ok = false;
    if (isolated(io)) { // the content goes on stdin: nothing re-parses it, no host temp file
        const char *inner[] = {"sh", "-c", "mkdir -p \"$(dirname \"$1\")\" && cat > \"$1\"",
                               "_",  p,    NULL};
        tool_run_result r;
        ok = isolate_exec(io, inner, data ? data : "", len, 4096, &r) && r.exit_code == 0 &&
             !r.timed_out;
        tool_run_result_free(&r);
    } else if (make_parents(p)) {
        const int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0666);
        if (fd >= 0) {
            size_t n = 0;
            ssize_t k = 0;
            while (n < len && (k = write(fd, data + n, len - n)) > 0) n += (size_t)k;
            ok = n == len && close(fd) == 0;
            if (n != len) close(fd);
        }
    }
    free(p);
    return ok;
}

bool tool_io_run(const tool_io *io, const char *const *inner, size_t max_output, int timeout_s,
                 tool_chunk_fn on_chunk, void *cls, tool_run_result *res, char *err,
                 size_t errlen) {
    if (!isolated(io))
        return tool_run((char *const *)inner, io->cwd, NULL, 0, false, max_output, timeout_s,
                        on_chunk, cls, res, err, errlen);
    // timeout N sh -c 'cd "$1" || exit 127; shift; exec "$@"' _ CWD inner...
    const char *w[64];
    char secs[16];
    snprintf(secs, sizeof secs, "%ds", timeout_s);
    size_t k = 0;
    w[k++] = "timeout", w[k++] = secs;
    if (io->cwd)
        w[k++] = "sh", w[k++] = "-c", w[k++] = "cd \"$1\" || exit 127; shift; exec \"$@\"",
        w[k++] = "_", w[k++] = io->cwd;
    for (size_t i = 0; inner[i] && k + 1 < 64; i++) w[k++] = inner[i];
    w[k] = NULL;
    char **argv = agent_runtime_argv(&io->rt, w, true);
    if (!argv) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    const bool ok = tool_run(argv, NULL, NULL, 0, false, max_output, timeout_s + 5, on_chunk, cls,
                             res, err, errlen);
    agent_argv_free(argv);
    return ok;
}

static bool add_entry(tool_list *l, const char *rel, size_t n, bool dir) {
    if (l->n == LIST_MAX_ENTRIES) {
        l->truncated = true;
        return false;
    }
    if (l->n == l->cap) {
        const size_t cap = l->cap ? l->cap * 2 : 64;
        tool_entry *e = realloc(l->e, cap * sizeof *e);
        if (!e) return false;
        l->e = e, l->cap = cap;
    }
    if (!(l->e[l->n].rel = strndup(rel, n))) return false;
    l->e[l->n++].dir = dir;
    return true;
}

static bool junk(const char *name) {
    for (size_t i = 0; i < N_JUNK; i++)
        if (!strcmp(name, JUNK_DIRS[i])) return true;
    return false;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

// Depth-first walk of dir (its path relative to the base: rel), depth levels below the base.
static void walk(const char *dir, const char *rel, int depth, int max_depth, bool files, bool dirs,
                 double deadline, tool_list *out) {
    DIR *d = opendir(dir);
    if (!d) {
        out->truncated = true;
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (now_s() > deadline) {
            out->truncated = true;
            break;
        }
        const size_t nd = strlen(dir), nr = strlen(rel), nn = strlen(e->d_name);
        char *path = malloc(nd + nn + 2), *r = malloc(nr + nn + 2);
        if (!path || !r) {
            free(path), free(r);
            break;
        }
        sprintf(path, "%s/%s", dir, e->d_name);
        sprintf(r, "%s%s%s", rel, nr ? "/" : "", e->d_name);
        struct stat st; // lstat: a link is never walked (it may point back up and loop)
        if (lstat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                if (dirs) add_entry(out, r, strlen(r), true);
                if (!junk(e->d_name) && (max_depth == 0 || depth + 1 < max_depth))
                    walk(path, r, depth + 1, max_depth, files, dirs, deadline, out);
            } else if (S_ISREG(st.st_mode) && files) {
                add_entry(out, r, strlen(r), false);
            }
        }
        free(path), free(r);
    }
    closedir(d);
}

// The isolate's listing: one `find` run, junk directories pruned.
static void isolate_find(const tool_io *io, const char *base, int max_depth, bool dirs,
                         tool_list *out) {
    char cmd[1024];
    int k = snprintf(cmd, sizeof cmd, "cd \"$1\" && find . -mindepth 1");
    if (max_depth > 0) k += snprintf(cmd + k, sizeof cmd - (size_t)k, " -maxdepth %d", max_depth);
    k += snprintf(cmd + k, sizeof cmd - (size_t)k, " \\(");
    for (size_t i = 0; i < N_JUNK; i++)
        k += snprintf(cmd + k, sizeof cmd - (size_t)k, "%s -name %s", i ? " -o" : "", JUNK_DIRS[i]);
    snprintf(cmd + k, sizeof cmd - (size_t)k, " \\) -prune %s",
             dirs ? "-print -o -type d -print" : "-o -type f -print");
    const char *inner[] = {"sh", "-c", cmd, "_", base, NULL};
    tool_run_result r;
    if (!isolate_exec(io, inner, NULL, 0, ISOLATE_LIST_MAX, &r)) return;
    out->truncated |= r.timed_out || r.truncated;
    for (const char *s = r.out; *s;) {
        size_t n = strcspn(s, "\n");
        const char *line = s;
        if (n >= 2 && line[0] == '.' && line[1] == '/') line += 2, n -= 2;
        if (n) add_entry(out, line, n, dirs);
        s = line + n + (line[n] == '\n');
    }
    tool_run_result_free(&r);
}

// Inside a git work tree, the files git knows or would add (what .gitignore leaves), as
// llama-server lists them: `git ls-files` (NUL-separated: names are not quoted). False when base
// is not in a work tree or git is missing: the walker lists then.
static bool git_files(const char *base, int max_depth, tool_list *out) {
    const char *argv[] = {
        "git", "-C", base, "ls-files", "-z", "--cached", "--others", "--exclude-standard", NULL};
    tool_run_result r;
    char err[256];
    if (!tool_run((char *const *)argv, NULL, NULL, 0, true, ISOLATE_LIST_MAX, (int)LIST_TIMEOUT,
                  NULL, NULL, &r, err, sizeof err))
        return false;
    const bool ok = r.exit_code == 0 && !r.timed_out;
    for (size_t i = 0; ok && i < r.len;) {
        const char *rel = r.out + i;
        const size_t n = strnlen(rel, r.len - i);
        int depth = 1;
        for (size_t k = 0; k < n; k++) depth += rel[k] == '/';
        char *path = malloc(strlen(base) + n + 2);
        struct stat st;
        if (path) sprintf(path, "%s/%.*s", base, (int)n, rel);
        if (n && path && (max_depth == 0 || depth <= max_depth) && lstat(path, &st) == 0 &&
            S_ISREG(st.st_mode))
            add_entry(out, rel, n, false);
        free(path);
        i += n + 1;
    }
    out->truncated |= r.truncated;
    tool_run_result_free(&r);
    return ok;
}

bool tool_io_list(const tool_io *io, const char *base, int max_depth, bool files, bool dirs,
                  tool_list *out) {
    memset(out, 0, sizeof *out);
    if (tool_io_kind(io, base) != TOOL_DIR) return false;
    if (isolated(io)) {
        if (dirs) isolate_find(io, base, max_depth, true, out);
        if (files) isolate_find(io, base, max_depth, false, out);
        return true;
    }
    if (files && !dirs && git_files(base, max_depth, out)) return true;
    walk(base, "", 0, max_depth, files, dirs, now_s() + LIST_TIMEOUT, out);
    return true;
}

void tool_list_free(tool_list *l) {
    for (size_t i = 0; i < l->n; i++) free(l->e[i].rel);
    free(l->e);
    memset(l, 0, sizeof *l);
}
