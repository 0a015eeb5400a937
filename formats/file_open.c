// file_open.c - mint_file_open: tells the formats apart and hands the path to the reader that
// fills the tensor directory (formats/tensor_dir.h).
//
// It sits above every reader and is called by none of them: the readers use tensor_dir.c's
// construction helpers, and tensor_dir.c knows no reader, so no two files of formats/ call
// each other in a circle (docs/design.md, tools/scripts/check-floors.sh).
#include "base/error.h"
#include "formats/gguf.h"
#include "formats/hf_checkpoint.h"
#include "formats/safetensors.h"
#include "mint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

mint_status mint_file_open(const char *path, mint_file **out, mint_err *err) {
    return mint_file_open_opt(path, false, out, err);
}

mint_status mint_file_open_opt(const char *path, bool no_mmap, mint_file **out, mint_err *err) {
    *out = NULL;
    mint_err_clear(err);
    struct stat st;
    if (stat(path, &st) != 0)
        return mint_fail(err, MINT_E_IO, "%s: cannot open: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) return mint_hf_open(path, no_mmap, out, err);
    // Checked before open(): opening a FIFO would block until a writer appears.
    if (!S_ISREG(st.st_mode)) return mint_fail(err, MINT_E_IO, "%s: not a regular file", path);
    // A file is GGUF unless its first bytes say safetensors (no "GGUF" magic, '{' after the
    // 8-byte header length); anything else goes to the GGUF reader so its messages stay as they
    // are for broken GGUF files.
    uint8_t head[9];
    ssize_t n = -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        n = pread(fd, head, sizeof head, 0);
        close(fd);
    }
    if (n == (ssize_t)sizeof head && mint_safetensors_sniff(head, sizeof head))
        return mint_safetensors_open(path, no_mmap, out, err);
    return mint_gguf_open(path, no_mmap, out, err);
}
