// mapped_file.c - open + fstat + mmap read-only.
#include "formats/mapped_file.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

mint_status mint_mapped_file_open(const char *path, mint_mapped_file *out, mint_err *err) {
    memset(out, 0, sizeof *out);
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
    size_t size = (size_t)st.st_size;
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
    out->data = data;
    out->size = size;
    out->path = strdup(path);
    if (!out->path) {
        mint_mapped_file_close(out);
        return mint_fail(err, MINT_E_NOMEM, "%s: out of memory", path);
    }
    return MINT_OK;
}

void mint_mapped_file_close(mint_mapped_file *f) {
    if (!f) return;
    if (f->data) munmap((void *)f->data, f->size);
    free(f->path);
    memset(f, 0, sizeof *f);
}
