// fileio.c - temp + fsync + rename, with O_TMPFILE where the file system has it.
#include "base/fileio.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct mint_atomic_file {
    int fd;         // open temporary file
    char *path;     // target path
    char *dir;      // folder of the target
    char *tmp_name; // named temporary (fallback), or NULL with O_TMPFILE
};

static char *dir_of(const char *path) {
    char *copy = strdup(path);
    if (!copy) return NULL;
    char *d = strdup(dirname(copy));
    free(copy);
    return d;
}

mint_status mint_atomic_file_begin(const char *path, mint_atomic_file **out, mint_err *err) {
    *out = NULL;
    mint_atomic_file *f = calloc(1, sizeof *f);
    if (!f) return mint_fail(err, MINT_E_NOMEM, "%s: out of memory", path);
    f->fd = -1;
    f->path = strdup(path);
    f->dir = dir_of(path);
    if (!f->path || !f->dir) {
        mint_atomic_file_abort(f);
        return mint_fail(err, MINT_E_NOMEM, "%s: out of memory", path);
    }
#ifdef O_TMPFILE
    f->fd = open(f->dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
#endif
    if (f->fd < 0) {
        size_t n = strlen(path) + 16;
        f->tmp_name = malloc(n);
        if (!f->tmp_name) {
            mint_atomic_file_abort(f);
            return mint_fail(err, MINT_E_NOMEM, "%s: out of memory", path);
        }
        snprintf(f->tmp_name, n, "%s.tmp.XXXXXX", path);
        f->fd = mkstemp(f->tmp_name);
        if (f->fd < 0) {
            int e = errno;
            mint_atomic_file_abort(f);
            return mint_fail(err, MINT_E_IO, "%s: cannot create a temporary file: %s", path,
                             strerror(e));
        }
        (void)fchmod(f->fd, 0644);
    }
    *out = f;
    return MINT_OK;
}

mint_status mint_atomic_file_write(mint_atomic_file *f, const void *p, size_t n, mint_err *err) {
    const char *b = p;
    while (n > 0) {
        ssize_t k = write(f->fd, b, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return mint_fail(err, MINT_E_IO, "%s: write failed: %s", f->path, strerror(errno));
        }
        b += k;
        n -= (size_t)k;
    }
    return MINT_OK;
}

mint_status mint_atomic_file_pwrite(mint_atomic_file *f, uint64_t off, const void *p, size_t n,
                                    mint_err *err) {
    const char *b = p;
    while (n > 0) {
        ssize_t k = pwrite(f->fd, b, n, (off_t)off);
        if (k < 0) {
            if (errno == EINTR) continue;
            return mint_fail(err, MINT_E_IO, "%s: write failed: %s", f->path, strerror(errno));
        }
        b += k;
        off += (uint64_t)k;
        n -= (size_t)k;
    }
    return MINT_OK;
}

mint_status mint_atomic_file_commit(mint_atomic_file *f, mint_err *err) {
    mint_status st = MINT_OK;
    if (fsync(f->fd) != 0) {
        st = mint_fail(err, MINT_E_IO, "%s: fsync failed: %s", f->path, strerror(errno));
        goto done;
    }
    if (!f->tmp_name) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", f->fd);
        // No target yet: give the unnamed file its final name in one step. linkat never
        // replaces, so a process killed at any moment leaves either no file or the whole one,
        // and never a temporary name.
        if (linkat(AT_FDCWD, proc, AT_FDCWD, f->path, AT_SYMLINK_FOLLOW) == 0) {
            int fd = f->fd;
            f->fd = -1;
            if (close(fd) != 0) {
                st = mint_fail(err, MINT_E_IO, "%s: close failed: %s", f->path, strerror(errno));
                unlink(f->path); // ours: the link just made it; failure leaves no file
                goto done;
            }
            goto sync_dir;
        }
        // The target exists (or linking failed, and the path below reports why): link the file
        // under a temporary name, then rename it over the target, as linkat cannot replace. A
        // kill between the two leaves that name behind; the window is a few system calls.
        size_t n = strlen(f->path) + 32;
        f->tmp_name = malloc(n);
        if (!f->tmp_name) {
            st = mint_fail(err, MINT_E_NOMEM, "%s: out of memory", f->path);
            goto done;
        }
        for (int attempt = 0;; attempt++) {
            snprintf(f->tmp_name, n, "%s.tmp.%d.%d", f->path, (int)getpid(), attempt);
            if (linkat(AT_FDCWD, proc, AT_FDCWD, f->tmp_name, AT_SYMLINK_FOLLOW) == 0) break;
            if (errno != EEXIST || attempt > 100) {
                st = mint_fail(err, MINT_E_IO, "%s: cannot name the temporary file: %s", f->path,
                               strerror(errno));
                free(f->tmp_name);
                f->tmp_name = NULL;
                goto done;
            }
        }
    }
    if (close(f->fd) != 0) {
        f->fd = -1;
        st = mint_fail(err, MINT_E_IO, "%s: close failed: %s", f->path, strerror(errno));
        goto done;
    }
    f->fd = -1;
    if (rename(f->tmp_name, f->path) != 0) {
        st = mint_fail(err, MINT_E_IO, "%s: rename failed: %s", f->path, strerror(errno));
        goto done;
    }
    free(f->tmp_name);
    f->tmp_name = NULL;
sync_dir:;
    int dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
done:
    mint_atomic_file_abort(f);
    return st;
}

void mint_atomic_file_abort(mint_atomic_file *f) {
    if (!f) return;
    if (f->fd >= 0) close(f->fd);
    if (f->tmp_name) unlink(f->tmp_name);
    free(f->tmp_name);
    free(f->path);
    free(f->dir);
    free(f);
}
