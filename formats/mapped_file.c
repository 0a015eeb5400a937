// mapped_file.c - a whole file in read-only memory: open + fstat, then mmap of the file, or
// pread into anonymous memory (no_mmap).
#include "formats/mapped_file.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

// Bytes asked of one pread: big enough to stream, small enough that a slow disk still returns.
enum { READ_CHUNK = 16 << 20 };

// Opens `path` read-only and gets its size; only a regular file is accepted.
static mint_status open_regular(const char *path, int *fd_out, size_t *size, mint_err *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return mint_fail(err, MINT_E_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return mint_fail(err, MINT_E_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return mint_fail(err, MINT_E_IO, "%s: not a regular file", path);
    }
    *fd_out = fd;
    *size = (size_t)st.st_size;
    return MINT_OK;
}

// Fills out's data, size and path; frees data (of either kind) when the path cannot be copied.
static mint_status finish(const char *path, void *data, size_t size, bool anonymous,
                          mint_mapped_file *out, mint_err *err) {
    out->data = data;
    out->size = size;
    out->anonymous = anonymous;
    out->path = strdup(path);
    if (!out->path) {
        mint_mapped_file_close(out);
        return mint_fail(err, MINT_E_NOMEM, "%s: out of memory", path);
    }
    return MINT_OK;
}

mint_status mint_mapped_file_open(const char *path, mint_mapped_file *out, mint_err *err) {
    memset(out, 0, sizeof *out);
    int fd;
    size_t size;
    mint_status st = open_regular(path, &fd, &size, err);
    if (st != MINT_OK) return st;
    void *data = NULL;
    if (size > 0) {
        data = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (data == MAP_FAILED) {
            int e = errno;
            close(fd);
            return mint_fail(err, MINT_E_IO, "%s: cannot map %zu bytes: %s", path, size,
                             strerror(e));
        }
        // Weights are read front to back once at load and then at random per token; tell the
        // kernel to read ahead generously.
        (void)posix_madvise(data, size, POSIX_MADV_WILLNEED);
    }
    close(fd); // the mapping keeps the file alive
    return finish(path, data, size, false, out, err);
}

// Reads size bytes of fd into p, chunk by chunk; a short read goes on where it stopped and an
// interrupted one is retried. Fails naming the path on an error or an early end of file.
static mint_status read_all(int fd, const char *path, uint8_t *p, size_t size, mint_err *err) {
    size_t off = 0;
    while (off < size) {
        const size_t want = size - off < READ_CHUNK ? size - off : READ_CHUNK;
        const ssize_t got = pread(fd, p + off, want, (off_t)off);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0)
            return mint_fail(err, MINT_E_IO, "%s: cannot read at byte %zu: %s", path, off,
                             strerror(errno));
        if (got == 0)
            return mint_fail(err, MINT_E_IO, "%s: the file ended at byte %zu of %zu while read",
                             path, off, size);
        off += (size_t)got;
    }
    return MINT_OK;
}

mint_status mint_mapped_file_read(const char *path, mint_mapped_file *out, mint_err *err) {
    memset(out, 0, sizeof *out);
    int fd;
    size_t size;
    mint_status st = open_regular(path, &fd, &size, err);
    if (st != MINT_OK) return st;
    void *data = NULL;
    if (size > 0) {
        // Anonymous memory is page-aligned, as a map of the file is, so every tensor keeps the
        // alignment it has in the file.
        data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (data == MAP_FAILED) {
            close(fd);
            return mint_fail(err, MINT_E_NOMEM, "%s: cannot get %zu bytes of memory to read it",
                             path, size);
        }
        (void)madvise(data, size, MADV_HUGEPAGE); // fewer TLB misses where the kernel allows
        st = read_all(fd, path, data, size, err);
        // Read-only from here, as the file's map is: a stray write faults.
        if (st == MINT_OK && mprotect(data, size, PROT_READ) != 0)
            st = mint_fail(err, MINT_E_IO, "%s: cannot make its memory read-only: %s", path,
                           strerror(errno));
        if (st != MINT_OK) {
            munmap(data, size);
            close(fd);
            return st;
        }
    }
    close(fd);
    return finish(path, data, size, true, out, err);
}

mint_status mint_mapped_file_load(const char *path, bool no_mmap, mint_mapped_file *out,
                                  mint_err *err) {
    return no_mmap ? mint_mapped_file_read(path, out, err) : mint_mapped_file_open(path, out, err);
}

void mint_mapped_file_close(mint_mapped_file *f) {
    if (!f) return;
    if (f->data) munmap((void *)f->data, f->size); // a file's map and anonymous memory alike
    free(f->path);
    memset(f, 0, sizeof *f);
}
