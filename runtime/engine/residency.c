// residency.c - keeping the weights in RAM: mint_model_params.mlock (llama.cpp's --mlock).
//
// What is locked: the file's memory as opened (its map, or the anonymous copy no_mmap reads),
// tensor data the file holds outside its maps (tensors converted at open), and the buffer of
// repacked matrices when it is made (runtime/engine/repack.c, which also unlocks a matrix's
// file pages when it drops them after packing). mlock(2) brings every page in, so the cost of
// reading the file (or of zeroing the packed buffer) is paid at open instead of on first use.
//
// Being refused is not an error: without CAP_IPC_LOCK a process may lock at most RLIMIT_MEMLOCK
// bytes (often 8 MiB). The model then works unlocked, and lock_error says how much could not be
// locked and why, for the programs to print as a warning (the library never prints).
//
// And the buffers the model makes at load and owns (mint_model_keep): the model frees them at
// close.
#include "runtime/engine/model.h"

#include "base/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

// "8 MiB", "unlimited": the soft RLIMIT_MEMLOCK, for the message.
static void memlock_limit(char *buf, size_t cap) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0)
        snprintf(buf, cap, "unknown");
    else if (rl.rlim_cur == RLIM_INFINITY)
        snprintf(buf, cap, "unlimited");
    else
        snprintf(buf, cap, "%.1f MiB", (double)rl.rlim_cur / 1048576.0);
}

void mint_model_lock(mint_model *m, const void *p, size_t n) {
    if (!m->mlock || !p || n == 0) return;
    if (mlock(p, n) == 0) return;
    const int e = errno;
    m->lock_failed_bytes += n;
    char limit[32];
    memlock_limit(limit, sizeof limit);
    snprintf(m->lock_error, sizeof m->lock_error,
             "could not lock %.1f MiB of the weights in RAM (mlock: %s; RLIMIT_MEMLOCK is %s: "
             "raise it, e.g. ulimit -l unlimited, or run with CAP_IPC_LOCK); they may be paged out",
             (double)m->lock_failed_bytes / 1048576.0, strerror(e), limit);
}

// Whether [p, p + n) lies inside one of the file's maps.
static bool in_maps(const mint_file *f, const void *p, size_t n) {
    const uintptr_t a = (uintptr_t)p;
    for (int i = 0; i < f->n_maps; i++) {
        const uintptr_t s = (uintptr_t)f->maps[i].data;
        if (a >= s && a + n <= s + f->maps[i].size) return true;
    }
    return false;
}

void mint_model_lock_file(mint_model *m) {
    if (!m->mlock) return;
    const mint_file *f = m->file;
    for (int i = 0; i < f->n_maps; i++) mint_model_lock(m, f->maps[i].data, f->maps[i].size);
    for (uint64_t i = 0; i < f->n_tensors; i++)
        if (f->t[i].data && !in_maps(f, f->t[i].data, f->t[i].nbytes))
            mint_model_lock(m, f->t[i].data, f->t[i].nbytes);
}

mint_status mint_model_keep(mint_model *m, void *p, mint_err *err) {
    void **owned = p ? realloc(m->owned, (size_t)(m->n_owned + 1) * sizeof *owned) : NULL;
    if (!owned) {
        free(p);
        return mint_fail(err, MINT_E_NOMEM, "out of memory");
    }
    m->owned = owned;
    m->owned[m->n_owned++] = p;
    return MINT_OK;
}
