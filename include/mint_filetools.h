// mint_filetools.h - the file tools of mint's public API (runtime/filetools/): quantizing a model
// to a GGUF of a file type, writing synthetic models (random weights with real shapes), and
// importance matrices (formats/imatrix.c).
// Included by mint.h, whose handles, statuses and conventions it uses; a program includes mint.h
// only.
#ifndef MINT_FILETOOLS_H
#define MINT_FILETOOLS_H

#ifndef MINT_H
#error "include mint.h, which includes this header after the types it uses"
#endif

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------------------------------------
// Quantizing: a model (GGUF, safetensors, Hugging Face folder) to a GGUF of a file type

typedef struct mint_imatrix mint_imatrix; // an importance matrix (below)

typedef struct mint_quantize_params {
    const char *ftype;            // llama-quantize's name: "Q4_K_M", "Q8_0", "F16", ...
    bool pure;                    // every quantized tensor gets the base type
    bool leave_output;            // output.weight keeps its type
    bool allow_requantize;        // a quantized source may be quantized again
    const char *output_type;      // type name for output.weight, or NULL
    const char *token_embd_type;  // type name for token_embd.weight, or NULL
    const char *const *overrides; // [n_overrides] "PATTERN=TYPE", first match wins
    int n_overrides;
    int n_threads; // 0 = all online CPUs
    // Progress (may be NULL): bytes of output written so far out of the total.
    void (*progress)(void *user, uint64_t done, uint64_t total);
    // Each tensor's decision (may be NULL): name, source type, chosen type, one-line reason.
    void (*on_tensor)(void *user, const char *name, const char *from, const char *to,
                      const char *reason);
    void *user;
    // Importance matrix (llama-quantize --imatrix; mint_imatrix_load), or NULL. Its entries
    // whose names contain one of include_weights (when there are any) and none of
    // exclude_weights (substrings, as llama-quantize matches them; giving both is MINT_E_ARG) are
    // used: a tensor with a used entry of its name is quantized with the weighted search, each
    // expert of a stack with its own importance; a tensor without one is quantized as without a
    // matrix. With at least one used entry the mix changes as llama-quantize's does (Q4_0/Q5_0
    // ffn_down, Q2_K_S allowed) and the output records quantize.imatrix.file, .dataset,
    // .entries_count and .chunks_count. MINT_E_FORMAT for a GGUF matrix without its metadata, a
    // non-finite value, or an entry whose size is not its tensor's (token_embd's excepted: it is
    // then quantized without), as llama-quantize refuses them.
    const mint_imatrix *imatrix;
    const char *imatrix_file;           // the path recorded as quantize.imatrix.file
    const char *const *include_weights; // [n_include_weights] name substrings
    int n_include_weights;              // --include-weights given
    const char *const *exclude_weights; // [n_exclude_weights] name substrings
    int n_exclude_weights;              // --exclude-weights given
} mint_quantize_params;

// Writes `out` atomically (temporary file, fsync, rename; an interrupted run leaves no file and
// an existing `out` untouched). Refuses to write over the input. The output's metadata records
// the source's XXH3-64 (mint.quantize.source_xxh3) and every tensor's XXH3-64
// (mint.quantize.tensor_xxh3, in tensor order), which mint_verify_hashes checks.
MINT_API mint_status mint_quantize_file(const char *in, const char *out,
                                        const mint_quantize_params *p, mint_err *err);

// Checks the tensor hashes a mint-quantized file records. *n_checked gets the number of tensors
// compared; MINT_E_FORMAT names the first tensor whose bytes do not match; MINT_E_NOT_FOUND if
// the file records no hashes.
MINT_API mint_status mint_verify_hashes(const mint_file *f, uint64_t *n_checked, mint_err *err);

// ---------------------------------------------------------------------------------------------
// Synthetic models: random weights with real shapes, for speed, memory and format tests

typedef struct mint_synth_params {
    const char *preset; // "tinyllama" (TinyLlama-1.1B's exact shapes), "small" (256 wide, 4 layers,
                        // GQA), "mha" (128 wide, 2 layers, 4 heads each with its own KV, context
                        // 2048), or an architecture with two shapes: "llama3" (Llama-3.2-1B),
                        // "qwen2" (Qwen2.5-0.5B), "qwen3" (Qwen3-0.6B), "phi3" (Phi-3-mini),
                        // "gpt2" (GPT-2 124M), "gemma2" (Gemma-2-2B), "gemma3" (Gemma-3-1B)
    const char *ftype;  // file type as llama-quantize names it: "F32", "F16", "Q4_0", "Q4_K_M", ...
    const char *vocab;  // a GGUF whose tokenizer.* entries to copy, or a SentencePiece
                        // tokenizer.model; NULL: a built-in byte + letters vocabulary
    uint64_t seed;      // weights are a pure function of (seed, tensor name, index)
    int n_threads;      // threads quantizing rows (0 = all online CPUs)
    const char *shape;  // "real" (NULL: the named model's shapes), "tiny" (2 layers, 256 wide) or
                        // "micro" (1 layer, 8 wide, 259 tokens: fuzz seeds)
} mint_synth_params;

// Writes a GGUF with random weights (llama.cpp's per-tensor mix for the file type)
// atomically to path. The text such a model generates is noise.
MINT_API mint_status mint_synth_write(const mint_synth_params *p, const char *path, mint_err *err);

// ---------------------------------------------------------------------------------------------
// Importance matrices: llama-imatrix's files (GGUF, or its legacy .dat), combined, saved, and
// the per-column importance llama-quantize derives from them (docs/formats.md 11). A context
// fills one while it evaluates (mint_ctx_set_imatrix, mint_inference.h).

typedef enum mint_imatrix_format {
    MINT_IMATRIX_GGUF = 0, // general.type "imatrix": raw sums and counts per matrix
    MINT_IMATRIX_DAT = 1,  // llama-imatrix's legacy .dat (--output-format dat)
} mint_imatrix_format;

typedef struct mint_imatrix_info {
    int64_t n_entries;    // matrices
    int64_t n_datasets;   // dataset names (mint_imatrix_dataset)
    uint32_t chunk_count; // chunks summed: as the file says, or (made with mint_imatrix_create)
                          // the largest count divided by chunk_size, as llama-imatrix saves it
    uint32_t chunk_size;  // tokens per chunk (0: a legacy file, which does not record it)
    bool legacy;          // read from a .dat: sums are (sum / count) * ncall, counts = {ncall}
    bool has_metadata;    // a GGUF with imatrix.datasets, .chunk_count and .chunk_size (a legacy
                          // file: false); llama-quantize refuses a GGUF without them
} mint_imatrix_info;

typedef struct mint_imatrix_entry {
    const char *name;      // the weight's name, e.g. "blk.0.ffn_down.weight"
    int64_t n_vals;        // values in sums: n_counts rows of n_vals / n_counts
    int64_t n_counts;      // 1 (a dense matrix, a legacy entry) or one per expert of a stack
    const float *sums;     // [n_vals] sums of the squared inputs per column (row m: count m)
    const int64_t *counts; // [n_counts] input rows summed (legacy: ncall)
} mint_imatrix_entry;

// An empty importance matrix for collecting or combining, with chunks of chunk_size tokens
// (llama-imatrix's n_ctx / n_parallel: legacy files are scaled by it when combined into this).
MINT_API mint_status mint_imatrix_create(uint32_t chunk_size, mint_imatrix **out, mint_err *err);
// Reads a file llama-imatrix (or mint-imatrix) wrote: GGUF when it starts with "GGUF", else the
// legacy layout. A malformed file gives MINT_E_FORMAT (or _IO, _NOMEM) and one line naming the
// file, the field, the value and the limit.
MINT_API mint_status mint_imatrix_load(const char *path, mint_imatrix **out, mint_err *err);
// The same from a file image in memory; `name` starts the messages.
MINT_API mint_status mint_imatrix_parse(const void *data, size_t size, const char *name,
                                        mint_imatrix **out, mint_err *err);
MINT_API void mint_imatrix_free(mint_imatrix *im);

MINT_API void mint_imatrix_get_info(const mint_imatrix *im, mint_imatrix_info *out);
// Dataset i (0 <= i < n_datasets), NUL-terminated; NULL when out of range.
MINT_API const char *mint_imatrix_dataset(const mint_imatrix *im, int64_t i);
// Appends a dataset name (the calibration text's path, as llama-imatrix records it).
MINT_API mint_status mint_imatrix_add_dataset(mint_imatrix *im, const char *name, mint_err *err);
// Entry i in name order (strcmp), or the entry named `name` (MINT_E_NOT_FOUND when absent). The
// pointers live until the matrix is changed or freed.
MINT_API mint_status mint_imatrix_entry_at(const mint_imatrix *im, int64_t i,
                                           mint_imatrix_entry *out);
MINT_API mint_status mint_imatrix_find(const mint_imatrix *im, const char *name,
                                       mint_imatrix_entry *out);

// Adds src into dst as llama-imatrix --in-file does: sums and counts add per entry (a single
// count broadcast to a stack's), datasets are appended; a legacy src is first made raw (values
// and ncall times dst's chunk_size). MINT_E_LIMIT (and dst unchanged) when an
// entry's sizes differ; MINT_E_ARG when dst is a legacy file or has chunk_size 0 and src is
// legacy.
MINT_API mint_status mint_imatrix_combine(mint_imatrix *dst, const mint_imatrix *src,
                                          mint_err *err);

// The importance of the columns of matrix `mat` of weight `name` of ne[0] = n_per_row and
// ne[2] = n_mat (1 for a 2-D weight), into out[n_per_row], exactly as llama-quantize derives
// it: GGUF sums / the matrix's count (1.0 for every column of a count of 0); legacy sums / ncall
// (the sums as stored when ncall <= 0). MINT_E_NOT_FOUND when the file has no entry (llama-
// quantize then quantizes without); MINT_E_LIMIT when the entry holds other than n_per_row *
// n_mat values (llama-quantize stops, except for token_embd.weight, which it quantizes
// without); MINT_E_FORMAT when a value is not finite (llama-quantize stops); MINT_E_ARG when
// mat is out of range.
MINT_API mint_status mint_imatrix_importance(const mint_imatrix *im, const char *name,
                                             int64_t n_per_row, int64_t n_mat, int64_t mat,
                                             float *out, mint_err *err);

// Writes the matrix atomically as llama-imatrix saves it: GGUF (entries in name order, counts as
// F32; chunk_count as mint_imatrix_info says) or the legacy .dat (entries with no count skipped,
// values (sum / count) * ncall with ncall = ceil(max count / chunk_size); a count of 0 stores
// ncall). MINT_E_ARG for a legacy file read in (combine it into a created one first) or a .dat
// without chunk_size.
MINT_API mint_status mint_imatrix_save(const mint_imatrix *im, const char *path,
                                       mint_imatrix_format format, mint_err *err);

#ifdef __cplusplus
}
#endif

#endif // MINT_FILETOOLS_H
