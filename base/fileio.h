// fileio.h - writing a file so that its path holds either the old file or the whole new one.
//
// The bytes go to an unnamed temporary file in the target's folder (O_TMPFILE, so a process
// killed mid-write leaves nothing behind; a named ".tmp" file where the file system lacks it);
// commit fsyncs it, gives it a name and renames it over the target, then fsyncs the folder.
#ifndef MINT_FILEIO_H
#define MINT_FILEIO_H

#include "mint.h"

#include <stddef.h>

typedef struct mint_atomic_file mint_atomic_file;

mint_status mint_atomic_file_begin(const char *path, mint_atomic_file **out, mint_err *err);
// Writes all n bytes (retrying short writes and EINTR).
mint_status mint_atomic_file_write(mint_atomic_file *f, const void *p, size_t n, mint_err *err);
// Overwrites n bytes at offset off of what was written so far (patching a header).
mint_status mint_atomic_file_pwrite(mint_atomic_file *f, uint64_t off, const void *p, size_t n,
                                    mint_err *err);
// fsync + rename over the target + fsync of the folder; frees f in every case.
mint_status mint_atomic_file_commit(mint_atomic_file *f, mint_err *err);
// Discards the temporary file; frees f. Accepts NULL.
void mint_atomic_file_abort(mint_atomic_file *f);

#endif // MINT_FILEIO_H
