// mapped_file.h - a whole file in memory, read-only: mapped from the file (the default), or read
// into anonymous memory (no_mmap, llama.cpp's --no-mmap).
//
// Weights are used in place from this memory (no copy). It is read-only in both modes, so a stray
// write through a weight pointer faults instead of changing the file or the weights.
#ifndef MINT_MAPPED_FILE_H
#define MINT_MAPPED_FILE_H

#include "mint.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mint_mapped_file {
    const uint8_t *data; // [size] bytes of the file; NULL for an empty file
    size_t size;         // file size in bytes
    char *path;          // copy of the path it was opened with
    bool anonymous;      // read into anonymous memory (mint_mapped_file_read): these pages are the
                         // only copy of the bytes, so they must never be dropped (MADV_DONTNEED
                         // would zero them); false for a map of the file, whose pages the kernel
                         // reads back from the page cache
} mint_mapped_file;

// Opens and maps `path`. Fails with MINT_E_IO (naming the path and the OS error) when it cannot
// be opened, is not a regular file, or cannot be mapped. An empty file maps to data == NULL.
mint_status mint_mapped_file_open(const char *path, mint_mapped_file *out, mint_err *err);

// Reads the whole of `path` with pread(2) into fresh page-aligned anonymous memory, then makes it
// read-only. The same failures as mint_mapped_file_open, and MINT_E_IO naming the path when a read
// fails or the file ends early (it shrank while being read); MINT_E_NOMEM when the memory cannot
// be had. An empty file gives data == NULL.
mint_status mint_mapped_file_read(const char *path, mint_mapped_file *out, mint_err *err);

// mint_mapped_file_read when no_mmap, else mint_mapped_file_open.
mint_status mint_mapped_file_load(const char *path, bool no_mmap, mint_mapped_file *out,
                                  mint_err *err);

// Unmaps or frees (either mode); safe on a zeroed struct.
void mint_mapped_file_close(mint_mapped_file *f);

#endif // MINT_MAPPED_FILE_H
