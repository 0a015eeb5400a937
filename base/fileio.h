// fileio.h - writing a file so that its path holds either the old file or the whole new one.
//
// The bytes go to an unnamed temporary file in the target's folder (O_TMPFILE, so a process
// killed mid-write leaves nothing behind; a named ".tmp" file where the file system lacks it);
// commit fsyncs it, gives it a name and renames it over the target, then fsyncs the folder.
#ifndef MINT_FILEIO_H
#define MINT_FILEIO_H

#include "mint.h"

#include <stddef.h>

// mint_atomic_file_begin, _write (retrying short writes and EINTR), _commit and _abort are
// public (mint.h); this adds the one call only mint itself needs.

// Overwrites n bytes at offset off of what was written so far (patching a header).
mint_status mint_atomic_file_pwrite(mint_atomic_file *f, uint64_t off, const void *p, size_t n,
                                    mint_err *err);

#endif // MINT_FILEIO_H
