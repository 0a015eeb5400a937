// mapped_file.h - a whole file mapped read-only into memory.
//
// Weights are used in place from this map (no copy). The map is private and read-only, so a
// stray write through a weight pointer faults instead of changing the file.
#ifndef MINT_MAPPED_FILE_H
#define MINT_MAPPED_FILE_H

#include "mint.h"

#include <stddef.h>
#include <stdint.h>

typedef struct mint_mapped_file {
    const uint8_t *data; // [size] bytes of the file; NULL for an empty file
    size_t size;         // file size in bytes
    char *path;          // copy of the path it was opened with
} mint_mapped_file;

// Opens and maps `path`. Fails with MINT_E_IO (naming the path and the OS error) when it cannot
// be opened, is not a regular file, or cannot be mapped. An empty file maps to data == NULL.
mint_status mint_mapped_file_open(const char *path, mint_mapped_file *out, mint_err *err);

// Unmaps and frees; safe on a zeroed struct.
void mint_mapped_file_close(mint_mapped_file *f);

#endif // MINT_MAPPED_FILE_H
