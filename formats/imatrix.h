// imatrix.h - importance matrices as llama.cpp's llama-imatrix writes them, and what
// llama-quantize makes of them (docs/formats.md 11).
//
// An importance matrix holds, per weight matrix W of a model, the sum over the calibration
// tokens of the squares of W's f32 inputs, per input column (in_sum2), and how many input rows
// were summed (counts): one count for a dense matrix, one per expert for a stack of experts.
// llama-quantize weighs the quantization error of column j by in_sum2[j] / count.
//
// Two file layouts are read:
//   GGUF    general.type = "imatrix", imatrix.datasets (string array), imatrix.chunk_count and
//           imatrix.chunk_size (u32), and per matrix the F32 tensors "<name>.in_sum2"
//           [n_per_row, n_mat] and "<name>.counts" [1, n_mat] (raw sums and counts);
//   legacy  .dat: i32 n_entries, then per entry i32 name length, the name, i32 ncall, i32 nval,
//           nval f32 values (already divided by the count and multiplied by ncall), then an
//           optional trailer: i32 chunk count, i32 dataset name length, the name.
// Both are written (GGUF through formats/gguf_write.c; both atomically).
#ifndef MINT_IMATRIX_H
#define MINT_IMATRIX_H

#include "mint.h"

#include <stdbool.h>
#include <stdint.h>

// Caps on what a file may declare, checked before anything is allocated for it.
#define MINT_IMATRIX_MAX_ENTRIES (1 << 20)          // matrices per file
#define MINT_IMATRIX_MAX_NAME    4096               // bytes of a legacy entry's name
#define MINT_IMATRIX_MAX_VALUES  ((int64_t)1 << 31) // values of one entry (ne[0] * n_mat)

// One matrix's sums. Row m of sums (n_per_row values) belongs to count m.
typedef struct mint_imx_entry {
    char *name;       // the weight's name, e.g. "blk.0.attn_q.weight" (owned)
    int64_t n_vals;   // values in sums (n_counts * per row)
    int64_t n_counts; // counts: 1 (dense, or legacy), or n_mat (a stack of experts)
    float *sums;      // [n_vals] sums of squared inputs (legacy: as stored in the .dat)
    int64_t *counts;  // [n_counts] rows summed (legacy: ncall)
} mint_imx_entry;

struct mint_imatrix {
    mint_imx_entry **e;   // [n] entries, sorted by name (strcmp), each owned
    int64_t n;            // number of entries
    int64_t cap;          // slots allocated in e
    char **datasets;      // [n_datasets] dataset names, owned
    int64_t n_datasets;   // number of datasets
    uint32_t chunk_count; // chunks the sums were made from (as read, or computed on save)
    uint32_t chunk_size;  // tokens per chunk (GGUF's imatrix.chunk_size; 0 for legacy)
    bool legacy;          // read from the .dat layout: sums are (sum / count) * ncall
    bool has_metadata;    // GGUF: datasets, chunk_count and chunk_size were all present
    bool collector;       // made by mint_imatrix_create: chunk_count follows the counts
};

// The entry named `name`, or NULL.
mint_imx_entry *mint_imatrix_lookup(const mint_imatrix *im, const char *name);

// The entry named `name`, created with n_counts counts and n_vals zero sums when absent.
// MINT_E_LIMIT when an existing entry has another number of values (llama-imatrix's
// "inconsistent size").
mint_status mint_imatrix_get_or_add(mint_imatrix *im, const char *name, int64_t n_vals,
                                    int64_t n_counts, mint_imx_entry **out, mint_err *err);

#endif // MINT_IMATRIX_H
