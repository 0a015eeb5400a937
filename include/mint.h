// mint.h - the one public header of mint, a small CPU runtime for LLMs (it includes
// mint_filetools.h, the file tools, at its end).
//
// Everything a program needs goes through the opaque handles declared here:
//   mint_file     a validated model file (GGUF, safetensors, or a Hugging Face checkpoint folder),
//                 for inspection: metadata, tensor table, raw bytes;
//   mint_model    weights bound to a llama graph, plus the vocabulary;
//   mint_ctx      one inference session: KV cache, scratch, thread pool;
//   mint_sampler  a chain of sampling steps with its own seeded RNG.
//
// Conventions
// - Functions that can fail return mint_status and, when `err` is not NULL, fill the caller-owned
//   mint_err with the same code and a one-line message naming the field, the value and the limit.
// - The library never prints and never exits; tools print err.msg.
// - Handles are created by *_open / *_create and released by the matching *_close / *_free, which
//   accept NULL. Strings returned as `const char *` live as long as the handle they came from.
// - Token ids are int32_t; tensor shapes use ggml's order (ne[0] is the innermost dimension).
#ifndef MINT_H
#define MINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Every function below is exported from libmint.so; everything else in the library is hidden.
#if defined(__GNUC__)
#define MINT_API __attribute__((visibility("default")))
#else
#define MINT_API
#endif

// ---------------------------------------------------------------------------------------------
// Status and errors

typedef enum mint_status {
    MINT_OK = 0,
    MINT_E_IO = 1,          // open / read / write / mmap / rename failed
    MINT_E_FORMAT = 2,      // the file is malformed (bad magic, count past the end, ...)
    MINT_E_UNSUPPORTED = 3, // well-formed, but mint cannot do it (tensor type, architecture)
    MINT_E_NOMEM = 4,       // an allocation failed
    MINT_E_ARG = 5,         // a bad argument from the caller (flag value, out-of-range index)
    MINT_E_LIMIT = 6,       // a limit was reached (context full, buffer too small, too large)
    MINT_E_NOT_FOUND = 7,   // a metadata key or tensor is absent
    MINT_E_TYPE = 8,        // a metadata key holds a value of another type
} mint_status;

#define MINT_ERR_MSG_MAX 512

typedef struct mint_err {
    mint_status code;           // same value the failing call returned
    char msg[MINT_ERR_MSG_MAX]; // one line, no trailing newline
} mint_err;

// Short stable name of a status ("ok", "io", "format", ...).
MINT_API const char *mint_status_name(mint_status s);

// Version string of the library, e.g. "0.1.0".
MINT_API const char *mint_version(void);

// ---------------------------------------------------------------------------------------------
// Model files: open, validate, inspect

typedef struct mint_file mint_file;

typedef enum mint_file_format {
    MINT_FORMAT_GGUF = 0,
    MINT_FORMAT_SAFETENSORS = 1, // one .safetensors file
    MINT_FORMAT_HF_DIR = 2,      // a Hugging Face checkpoint folder (config.json + safetensors)
} mint_file_format;

// Metadata value types; the numbers are GGUF's value type codes.
typedef enum mint_value_type {
    MINT_VAL_U8 = 0,
    MINT_VAL_I8 = 1,
    MINT_VAL_U16 = 2,
    MINT_VAL_I16 = 3,
    MINT_VAL_U32 = 4,
    MINT_VAL_I32 = 5,
    MINT_VAL_F32 = 6,
    MINT_VAL_BOOL = 7,
    MINT_VAL_STRING = 8,
    MINT_VAL_ARRAY = 9,
    MINT_VAL_U64 = 10,
    MINT_VAL_I64 = 11,
    MINT_VAL_F64 = 12,
} mint_value_type;

typedef struct mint_file_info {
    mint_file_format format;
    uint32_t version;     // GGUF version (2 or 3); 0 for safetensors
    uint64_t file_size;   // bytes (sum over shards for a checkpoint folder)
    uint64_t n_kv;        // metadata entries
    uint64_t n_tensors;   // tensors
    uint32_t alignment;   // GGUF data alignment (general.alignment or 32); 0 for safetensors
    uint64_t header_size; // bytes before the data section's padding (GGUF: header + metadata +
                          // tensor infos; safetensors: 8 + JSON header)
    uint64_t data_offset; // byte offset of the data section in the (first) file
    uint64_t data_size;   // bytes from data_offset to the end of the last tensor (summed over
                          // the shards of a checkpoint folder)
} mint_file_info;

typedef struct mint_tensor_info {
    const char *name;     // NUL-terminated
    uint32_t type;        // ggml type code (mint_type_name() names it)
    bool type_known;      // false for a code mint has no layout for (never in an opened file)
    bool type_computable; // mint has kernels for it (F32, F16, BF16, Q4_0 ... Q6_K)
    uint32_t n_dims;      // 1..4
    int64_t ne[4];        // elements per dimension, ne[0] innermost; unused dims are 1
    uint64_t offset;      // byte offset relative to the data section
    uint64_t file_offset; // absolute byte offset in its file
    uint64_t nbytes;      // bytes of tensor data
    const void *data;     // into the read-only map, or memory the file owns (q/k rows of a
                          // HF checkpoint, reordered; unaligned safetensors data, copied)
} mint_tensor_info;

typedef struct mint_kv_info {
    const char *key;           // NUL-terminated
    mint_value_type type;      // value type
    mint_value_type elem_type; // element type when type == MINT_VAL_ARRAY
    uint64_t n;                // array length (1 for a scalar, string length for a string)
    uint64_t file_offset;      // where the key/value record starts in the file (0 if synthesised)
} mint_kv_info;

// Open and validate a model file: every count, length, type code, shape and offset is checked
// here, once. Returns MINT_E_FORMAT / MINT_E_IO / MINT_E_UNSUPPORTED with a message naming the
// field, value, limit and byte offset. Tensor types mint cannot compute with are accepted here.
MINT_API mint_status mint_file_open(const char *path, mint_file **out, mint_err *err);
MINT_API void mint_file_close(mint_file *f);

MINT_API void mint_file_get_info(const mint_file *f, mint_file_info *out);
MINT_API mint_status mint_file_tensor(const mint_file *f, uint64_t i, mint_tensor_info *out);
MINT_API mint_status mint_file_find_tensor(const mint_file *f, const char *name,
                                           mint_tensor_info *out);
MINT_API mint_status mint_file_kv(const mint_file *f, uint64_t i, mint_kv_info *out);

// Typed metadata access by key. MINT_E_NOT_FOUND when absent, MINT_E_TYPE when the stored type
// differs (the integer getters accept any integer type whose value fits).
MINT_API mint_status mint_file_get_u32(const mint_file *f, const char *key, uint32_t *out,
                                       mint_err *err);
MINT_API mint_status mint_file_get_i32(const mint_file *f, const char *key, int32_t *out,
                                       mint_err *err);
MINT_API mint_status mint_file_get_u64(const mint_file *f, const char *key, uint64_t *out,
                                       mint_err *err);
MINT_API mint_status mint_file_get_f32(const mint_file *f, const char *key, float *out,
                                       mint_err *err);
MINT_API mint_status mint_file_get_bool(const mint_file *f, const char *key, bool *out,
                                        mint_err *err);
// A string value: pointer to its bytes (not NUL-terminated) and length.
MINT_API mint_status mint_file_get_str(const mint_file *f, const char *key, const char **s,
                                       uint64_t *len, mint_err *err);
// An array value: element type, length, and for non-string element types a pointer to the
// elements in native layout (aligned). String elements are read with mint_file_get_arr_str.
MINT_API mint_status mint_file_get_arr(const mint_file *f, const char *key,
                                       mint_value_type *elem_type, uint64_t *n, const void **data,
                                       mint_err *err);
MINT_API mint_status mint_file_get_arr_str(const mint_file *f, const char *key, uint64_t i,
                                           const char **s, uint64_t *len, mint_err *err);

// Writes a short human-readable rendering of metadata entry i into buf (always NUL-terminated):
// scalars in full, strings quoted and escaped (cut after max_str bytes), arrays summarised as
// "[type; n] first items...". Returns the length it wanted to write.
MINT_API size_t mint_file_kv_format(const mint_file *f, uint64_t i, char *buf, size_t cap,
                                    size_t max_str, size_t max_items);

// Name of a ggml type code ("F32", "Q4_K", ...), or "type<N>" in a static buffer for unknown codes.
MINT_API const char *mint_type_name(uint32_t type);
// Size of `n` elements of a type in bytes; 0 if unknown or n not a multiple of the block.
MINT_API uint64_t mint_type_nbytes(uint32_t type, uint64_t n);
// Elements per block of a type (1 for F32/F16/BF16, 32, 256); 0 if unknown.
MINT_API uint32_t mint_type_block_size(uint32_t type);

// XXH3-64 of a byte range (the hash mint-inspect --hash prints and mint-quantize records).
MINT_API uint64_t mint_hash64(const void *data, size_t n);

// Files written whole or not at all: the bytes go to an unnamed temporary file in the target's
// folder; commit fsyncs it and renames it over the target (so an error, a crash or a kill leaves
// the old file or none, never half of one); abort discards it. begin fails at once when the
// folder cannot be written, before any work that would be lost.
typedef struct mint_atomic_file mint_atomic_file;

MINT_API mint_status mint_atomic_file_begin(const char *path, mint_atomic_file **out,
                                            mint_err *err);
// Writes all n bytes.
MINT_API mint_status mint_atomic_file_write(mint_atomic_file *f, const void *p, size_t n,
                                            mint_err *err);
// fsync + rename over the target + fsync of the folder; frees f in every case.
MINT_API mint_status mint_atomic_file_commit(mint_atomic_file *f, mint_err *err);
// Discards the temporary file; frees f. Accepts NULL.
MINT_API void mint_atomic_file_abort(mint_atomic_file *f);

// ---------------------------------------------------------------------------------------------
// Models: weights bound to the llama graph, and the vocabulary

typedef struct mint_model mint_model;

typedef struct mint_model_params {
    bool vocab_only; // load only the tokenizer (a vocab-only GGUF has no tensors)
    bool no_repack;  // keep only the file's layout (no background repacking of the matrices
                     // for the kernels; also the environment variable MINT_REPACK=0)
    bool no_mmap;    // read the file (every shard) into anonymous memory instead of mapping
                     // it (llama.cpp's --no-mmap): mapped pages slow down within a run on some
                     // machines; the copy stays beside the repacked one (up to twice the file)
    bool mlock;      // lock the weights in RAM (file memory and repacked matrices; llama.cpp's
                     // --mlock); a refused lock (RLIMIT_MEMLOCK) does not fail the open:
                     // mint_model_desc.lock_error says why
} mint_model_params;

typedef struct mint_model_desc {
    const char *arch;          // general.architecture ("llama")
    const char *name;          // general.name, or "" when absent
    int32_t n_vocab;           // tokens in the vocabulary
    int32_t n_ctx_train;       // llama.context_length
    int32_t n_embd;            // embedding width
    int32_t n_ff;              // feed-forward width
    int32_t n_layer;           // transformer blocks
    int32_t n_head;            // query heads
    int32_t n_head_kv;         // key/value heads (GQA when < n_head)
    int32_t head_dim;          // n_embd / n_head
    int32_t n_rot;             // rotary dimensions
    float rope_base;           // rope frequency base
    float rope_freq_scale;     // 1 / linear scaling factor
    float rms_eps;             // RMSNorm epsilon
    int32_t bos, eos;          // special token ids (-1 if none)
    bool add_bos;              // tokenizer adds BOS
    uint64_t n_params;         // elements in the bound weights
    uint64_t weight_bytes;     // bytes of the bound weights
    uint64_t bytes_per_token;  // weight bytes one generated token reads (all matrices, the norms
                               // and one embedding row): the memory traffic that bounds generation
    const char *chat_template; // tokenizer.chat_template, or NULL
    const char *types;         // per-type tensor counts, e.g. "F32x9 Q4_Kx25 Q6_Kx5"
    bool locked;               // mlock was asked and every byte of the weights is locked
    const char *lock_error;    // mlock was asked and failed: one line (how much, why, what to
                               // raise; the model works unlocked), else NULL
    int32_t n_expert;          // experts of a mixture-of-experts feed-forward (0: dense)
    int32_t n_expert_used;     // experts each token takes (0: dense)
} mint_model_desc;

// Opens a model file (see mint_file_open), reads the llama hyper-parameters and binds every
// weight by name, checking its shape and type; a missing or mis-shaped tensor, or a type mint
// cannot compute with, is an error naming it. params may be NULL.
MINT_API mint_status mint_model_open(const char *path, const mint_model_params *params,
                                     mint_model **out, mint_err *err);
// The weight matrices are repacked for the kernels in the background after mint_model_open
// returns (a low-priority thread; evaluations meanwhile read the file's layout and give the
// same bits). Blocks until that is done, helping on the calling thread; returns at once when
// there is nothing (left) to do. Benchmarks call it so that they time the steady state.
MINT_API void mint_model_repack_wait(mint_model *m);
MINT_API void mint_model_close(mint_model *m);
MINT_API void mint_model_describe(const mint_model *m, mint_model_desc *out);

// Tokenizes `len` bytes of text. add_special adds BOS/EOS as the vocabulary asks; parse_special
// turns control-token text such as "</s>" into the token. Writes up to cap ids; *n_out gets the
// number of tokens, and MINT_E_LIMIT is returned when cap is too small (call again).
MINT_API mint_status mint_tokenize(const mint_model *m, const char *text, size_t len,
                                   bool add_special, bool parse_special, int32_t *ids, size_t cap,
                                   size_t *n_out, mint_err *err);
// The bytes a token stands for (byte tokens become their byte; control tokens are empty unless
// `special`). Writes at most cap bytes (not NUL-terminated) and returns the length wanted.
MINT_API size_t mint_token_to_piece(const mint_model *m, int32_t id, bool special, char *buf,
                                    size_t cap);
// The token's vocabulary text as stored ("▁Once", "<0x0A>"); NULL for an invalid id.
MINT_API const char *mint_token_text(const mint_model *m, int32_t id);
// Whether a token ends generation (EOS, or other end-of-generation tokens).
MINT_API bool mint_token_is_eog(const mint_model *m, int32_t id);

// ---------------------------------------------------------------------------------------------
// The plain forward pass (runtime/engine/forward_plain.c): one token at a time, one thread, the
// scalar reference kernels, a float KV cache per position; no graph. The version to read, and
// the twin the graph is tested against (tests/test_forward_plain.c). Not for speed.

typedef struct mint_plain mint_plain;

// A plain pass over model m (which must outlive it) with KV arrays for n_ctx positions (0 = the
// model's context length, at most 4096).
MINT_API mint_status mint_plain_create(const mint_model *m, int32_t n_ctx, mint_plain **out,
                                       mint_err *err);
// logits[0..n_vocab) of `token` at position `pos`. Positions 0 .. pos-1 must have been computed
// (pos may repeat or go back: the positions after it are then dropped).
MINT_API mint_status mint_plain_forward(mint_plain *p, int32_t token, int32_t pos, float *logits,
                                        mint_err *err);
MINT_API void mint_plain_free(mint_plain *p);

// ---------------------------------------------------------------------------------------------
// Contexts: a paged KV cache for several sequences, scratch and a thread pool
//
// A context holds up to n_seq_max sequences (ids 0 .. n_seq_max-1), each a list of positions
// 0 .. n_past-1 whose keys and values live in blocks of kv_block positions from one pool. Blocks
// are shared: mint_seq_fork gives one sequence another's blocks without a copy (the first write
// into a shared, partly filled block copies it), and full blocks are remembered by their tokens
// so that a sequence starting with the same tokens reuses them (mint_seq_prefix) instead of
// evaluating them again. Memory grows with the blocks in use, up to kv_size positions.

typedef struct mint_ctx mint_ctx;

typedef enum mint_kv_type {
    MINT_KV_F32 = 0,  // K and V kept in f32 (matches llama.cpp's f32kv runs)
    MINT_KV_F16 = 1,  // K and V rounded to f16 when stored (half the memory)
    MINT_KV_Q8_0 = 2, // K and V rows quantized to Q8_0 (llama.cpp's -ctk/-ctv q8_0: 34 bytes per 32
                      // elements, 0.27 of f32); needs head_dim a multiple of 32
    MINT_KV_Q4_0 = 3, // K and V rows quantized to Q4_0 (-ctk/-ctv q4_0: 18 bytes per 32 elements,
                      // 0.14 of f32); needs head_dim a multiple of 32
} mint_kv_type;

// Attention algorithms; all three give the same result to rounding (about 1e-7 relative with an
// f32 cache), each gives a query the same bits alone or in any batch, and naive and row-wise give
// each other's bits.
typedef enum mint_attention {
    MINT_ATTENTION_AUTO = 0,    // naive or row-wise, whichever is faster for the batch's shape
    MINT_ATTENTION_NAIVE = 1,   // per head, the whole score matrix (queries x keys), softmax, x V
    MINT_ATTENTION_ROWWISE = 2, // per query, the score rows of the heads sharing a KV head
    MINT_ATTENTION_FLASH = 3,   // keys and values in steps with a running max and sum (online
                                // softmax); no score row is kept
} mint_attention;

// "auto", "naive", "rowwise", "flash"; and back (-1 for an unknown name).
MINT_API const char *mint_attention_name(mint_attention a);
MINT_API int mint_attention_from_name(const char *name);

typedef struct mint_ctx_params {
    int32_t n_threads;        // worker threads including the caller (default: online CPUs, max 64)
    int32_t n_ctx;            // positions per sequence (default: the model's, at most 4096)
    int32_t n_batch;          // most entries per mint_decode (tokens per mint_eval batch; 512)
    int32_t n_seq_max;        // sequences held at once (default 1, at most 256)
    int32_t kv_block;         // positions per KV block (default 32; 1 .. 4096)
    int32_t kv_size;          // positions the KV pool holds over all sequences, shared blocks
                              // counted once (default n_ctx * n_seq_max)
    mint_kv_type kv_type;     // KV cache storage (default F32)
    mint_attention attention; // attention algorithm (default auto)
    uint64_t max_memory;      // refuse a context needing more bytes than this (0 = the
                              // machine's physical memory); checked before anything is allocated
    const char *isa;          // kernel level for this context ("ref", "avx2", "avx512",
                              // "avx512vnni", "neon", "neondot"); NULL = the process's choice
                              // (the best the CPU has, or MINT_ISA). A level the CPU lacks is
                              // an error.
    uint64_t prefix_cache_bytes; // KV memory beyond the sequences' own (default 0): blocks of
                                 // finished prompts stay cached within it (--cache-ram)
} mint_ctx_params;

MINT_API mint_ctx_params mint_ctx_default_params(void);
MINT_API mint_status mint_ctx_create(mint_model *m, const mint_ctx_params *params, mint_ctx **out,
                                     mint_err *err);
MINT_API void mint_ctx_free(mint_ctx *c);

// One entry of a batch: a token at a position of a sequence.
typedef struct mint_batch_entry {
    int32_t token; // token id
    int32_t pos;   // its position in the sequence
    int32_t seq;   // sequence id, 0 .. n_seq_max-1
    bool logits;   // keep this entry's logits (mint_get_logits)
} mint_batch_entry;

// Evaluates n entries (1 .. n_batch) in one forward pass: every matmul over all rows at once,
// attention of each row over its own sequence. A sequence's entries must continue it: its first
// entry at position mint_seq_n_past, the next ones at the following positions, in order
// (entries of different sequences may interleave). The logits of the entries that ask for them
// are rows 0, 1, ... of mint_get_logits, in entry order. On any error (bad token, sequence or
// position, the context length, no free KV blocks) nothing changes.
MINT_API mint_status mint_decode(mint_ctx *c, const mint_batch_entry *entries, int32_t n,
                                 mint_err *err);

// Sequence 0 only: evaluates n tokens at positions pos .. pos+n-1 (batches of n_batch), which
// must follow positions 0 .. pos-1 already held (pos <= mint_ctx_n_past; a smaller pos drops the
// positions past it first). Logits are kept for the last token, or for every token when
// all_logits. Fails with MINT_E_LIMIT, changing nothing, when pos + n exceeds n_ctx.
MINT_API mint_status mint_eval(mint_ctx *c, const int32_t *ids, int32_t n, int32_t pos,
                               bool all_logits, mint_err *err);
// Logits of row i of the last evaluation (i = -1: the last row); n_vocab floats, or NULL.
MINT_API const float *mint_get_logits(const mint_ctx *c, int32_t i);
// Rows of logits the last evaluation kept.
MINT_API int32_t mint_get_n_logits(const mint_ctx *c);

// Positions sequence seq holds (-1 for an id out of range), and their tokens.
MINT_API int32_t mint_seq_n_past(const mint_ctx *c, int32_t seq);
MINT_API const int32_t *mint_seq_tokens(const mint_ctx *c, int32_t seq);
// dst drops what it held and shares every block of src (nothing is copied).
MINT_API mint_status mint_seq_fork(mint_ctx *c, int32_t src, int32_t dst, mint_err *err);
// Keeps positions 0 .. n_keep-1 of seq and releases the rest (speculative rollback, a new turn);
// 0 empties it.
MINT_API mint_status mint_seq_truncate(mint_ctx *c, int32_t seq, int32_t n_keep, mint_err *err);
// Makes seq hold the longest prefix of tokens[0..n) available without evaluating: what it holds
// already that matches, or full blocks of the prefix cache (left by any sequence) when those
// reach further. At most n - 1 positions, so the last token is always evaluated. *n_held gets
// the positions held; the caller evaluates tokens n_held .. n-1.
MINT_API mint_status mint_seq_prefix(mint_ctx *c, int32_t seq, const int32_t *tokens, int32_t n,
                                     int32_t *n_held, mint_err *err);

typedef struct mint_cache_info {
    int32_t block;         // positions per block
    int32_t blocks_used;   // held by at least one sequence
    int32_t blocks_cached; // held by none, kept for prefix reuse (evicted least recently used)
    int32_t blocks_free;   // allocated, neither held nor cached
    int32_t blocks_max;    // the pool's cap
    uint64_t bytes_block;  // bytes of one block (every layer's keys and values)
    uint64_t bytes_alloc;  // bytes allocated so far
    uint64_t prefix_hits;  // blocks reused from the prefix cache since creation
    uint64_t copies;       // copy-on-write copies since creation
    uint64_t evictions;    // cached blocks evicted since creation
} mint_cache_info;

MINT_API void mint_ctx_cache_info(const mint_ctx *c, mint_cache_info *out);

// Tokens held by sequence 0 (mint_eval's sequence).
MINT_API int32_t mint_ctx_n_past(const mint_ctx *c);
MINT_API int32_t mint_ctx_n_ctx(const mint_ctx *c);
MINT_API int32_t mint_ctx_n_seq(const mint_ctx *c);
MINT_API int32_t mint_ctx_n_batch(const mint_ctx *c);
MINT_API int32_t mint_ctx_n_threads(const mint_ctx *c);
// Kernel level the context computes with ("avx512vnni", "ref", ...).
MINT_API const char *mint_ctx_isa_name(const mint_ctx *c);
// The attention algorithm chosen ("naive", "rowwise", "flash"; with auto, the one the last
// evaluation used, or "auto" before any).
MINT_API const char *mint_ctx_attention_name(const mint_ctx *c);
// Attention work space per thread, in bytes (the algorithms differ: naive keeps a whole score
// matrix, row-wise one row, flash a block).
MINT_API uint64_t mint_ctx_attention_scratch(const mint_ctx *c);
// Number of tokens evaluated since the context was created (for tests and stats).
MINT_API uint64_t mint_ctx_n_evaluated(const mint_ctx *c);
// The op graph as text, one node per line with shapes and types (mint-run --dump-graph).
MINT_API const char *mint_ctx_graph_text(mint_ctx *c);
// Name of the kernel level in use ("avx512vnni", "ref", ...).
MINT_API const char *mint_isa_name(void);

// Tracing: with tracing on, each evaluation records every node of the graph it ran, in order.
typedef struct mint_trace_node {
    const char *name;        // "blk.3.attn_q", "output", ...
    const char *op;          // "MATMUL", "ATTENTION", ...
    int32_t rows;            // rows of the batch the node ran on
    int64_t width;           // elements per output row
    const char *weight_type; // the weight's type ("Q4_K", "F32"), or "" when it has none
    int64_t weight_ne[2];    // the weight's shape [n_in, n_out] (0, 0 when none)
    const char *act_type;    // the activation type a matmul reads ("Q8_K", "F32"), or ""
    uint64_t bytes_read;     // bytes the node reads: weights, activations, keys and values
    double seconds;          // wall time from the end of the node before (the barrier included)
    int32_t threads;         // threads that had a share of its work
} mint_trace_node;

MINT_API void mint_ctx_set_trace(mint_ctx *c, bool on);

// Attention weights, for looking at them: while buf is set, every evaluation writes, for each
// row of sequence 0 at a position pos < max_pos, the weight each head of each layer gives each
// key: buf[((layer * n_head + head) * max_pos + pos) * max_pos + key] for key <= pos (the rest
// of buf is left alone). The weights are recomputed from the row's query and the cache in double
// (the algorithms agree with them to about 1e-7). NULL turns it off.
MINT_API mint_status mint_ctx_capture_attention(mint_ctx *c, float *buf, int32_t max_pos,
                                                mint_err *err);
// The nodes of the last evaluation (when tracing was on), and their number; 0 if none.
MINT_API int32_t mint_ctx_last_trace(const mint_ctx *c, const mint_trace_node **nodes);

// Memory read bandwidth as a one-token matmul reaches it (membw.c): n_threads threads stream a
// `bytes` buffer as they stream weights; the median of `reps` passes after a warm-up, in GB/s.
MINT_API mint_status mint_measure_read_bandwidth(int n_threads, size_t bytes, int reps,
                                                 double *gb_per_s, mint_err *err);

// ---------------------------------------------------------------------------------------------
// Samplers: a chain over the logits
//
// Order: repetition penalty (last repeat_last_n tokens) -> top-k -> top-p -> min-p ->
// temperature -> draw from the softmax with the seeded RNG. temp <= 0 is greedy argmax (after
// the penalty); the lowest id wins a tie.

typedef struct mint_sampler mint_sampler;

typedef struct mint_sampler_params {
    float temp;            // temperature; <= 0 means argmax (default 0.8)
    int32_t top_k;         // keep the k most likely; <= 0 keeps all (default 40)
    float top_p;           // keep the smallest set with probability >= top_p; 1 = off (0.95)
    float min_p;           // drop tokens below min_p * p(max); 0 = off (default 0.05)
    float repeat_penalty;  // divide positive / multiply negative logits of recent tokens (1.0)
    int32_t repeat_last_n; // how many recent tokens the penalty looks at (default 64)
    uint64_t seed;         // RNG seed (default 0xC0FFEE)
} mint_sampler_params;

MINT_API mint_sampler_params mint_sampler_default_params(void);

// The bounds of the values a user may ask for (mint_sampler_params_check); the programs' option
// tables read them from here. Doubles, not floats: a flag's "0.001" parses to the double 0.001,
// which is below the float 1e-3f widened (0.0010000000475), and must still be accepted.
#define MINT_SAMPLER_TEMP_MAX    1e6       // temp in [0, MAX]
#define MINT_SAMPLER_TOP_K_MAX   (1 << 30) // top_k in [0, MAX]
#define MINT_SAMPLER_PENALTY_MIN 1e-3      // repeat_penalty in [MIN, MAX]
#define MINT_SAMPLER_PENALTY_MAX 1e3
#define MINT_SAMPLER_LAST_N_MAX  (1 << 20) // repeat_last_n in [0, MAX]

// Whether p holds values a user may ask for, the ranges mint-run accepts (mint-serve's are within
// them): temp in [0, 1000000] (0 is greedy), top_k in [0, 2^30] (0 keeps all), top_p in (0, 1],
// min_p in [0, 1], repeat_penalty in [0.001, 1000], repeat_last_n in [0, 2^20]. MINT_E_ARG names
// the first value outside its range and the range. Front ends call it on what a user gave;
// mint_sampler_create itself also takes temp < 0 (greedy) and top_k < 0 (all).
MINT_API mint_status mint_sampler_params_check(const mint_sampler_params *p, mint_err *err);
MINT_API mint_status mint_sampler_create(const mint_sampler_params *p, int32_t n_vocab,
                                         mint_sampler **out, mint_err *err);
MINT_API void mint_sampler_free(mint_sampler *s);
// Picks a token from n_vocab logits (not modified).
MINT_API int32_t mint_sampler_sample(mint_sampler *s, const float *logits);
// What the chain did for one sample: candidates left after each step, and the pick.
typedef struct mint_sample_info {
    int32_t n_vocab; // candidates at the start
    int32_t n_top_k; // after top-k
    int32_t n_top_p; // after top-p
    int32_t n_min_p; // after min-p (what the draw chooses among)
    int32_t token;   // the token picked
    float p;         // its probability in the distribution drawn from (1 for greedy)
    bool greedy;     // temp <= 0: argmax, the filters skipped
} mint_sample_info;

// mint_sampler_sample, also reporting what each step left (info may be NULL).
MINT_API int32_t mint_sampler_sample_info(mint_sampler *s, const float *logits,
                                          mint_sample_info *info);
// Records a token in the penalty history (prompt tokens and generated ones).
MINT_API void mint_sampler_accept(mint_sampler *s, int32_t id);
// Clears the history and reseeds.
MINT_API void mint_sampler_reset(mint_sampler *s, uint64_t seed);

// ---------------------------------------------------------------------------------------------
// Logits to text: log-probabilities, the k most likely tokens, and the generation step
//
// Every program that turns logits into text (mint-run, mint-serve, the Python bindings, beam
// search) goes through these, so that a token's log-probability, its alternatives, the stop
// strings and the first piece's leading space are computed once, the same way everywhere.

// The k most likely tokens of a row of n_vocab logits, best first (the lower id first on a tie):
// writes min(k, n_vocab) ids to ids and returns that count (0 when k <= 0).
MINT_API int32_t mint_top_k(const float *logits, int32_t n_vocab, int32_t k, int32_t *ids);
// Log-softmax of a row of logits at n ids, in double: out[i] = (logits[ids[i]] - max) -
// log(sum_j exp(logits[j] - max)), the sum taken in double in id order (as llama.cpp's reference
// tools compute it). One pass over the row, whatever n is.
MINT_API void mint_log_softmax(const float *logits, int32_t n_vocab, const int32_t *ids, int32_t n,
                               double *out);
// Whether the vocabulary puts a space before the text it tokenizes (SentencePiece's "▁": "a"
// becomes " a"); detokenizing then drops that space from the first piece.
MINT_API bool mint_vocab_adds_space_prefix(const mint_model *m);

// A generation step: sample a token from the caller's logits, end at an end-of-generation token,
// a stop string or max_tokens, and release the text that can no longer be the start of a stop
// string. The caller evaluates each token whose step did not finish (alone, or batched with other
// sequences), then passes the new logits to the next step.
typedef struct mint_gen mint_gen;

#define MINT_GEN_MAX_STOP 16 // stop strings
#define MINT_GEN_MAX_TOP  20 // alternatives per token (OpenAI's top_logprobs limit)

typedef enum mint_finish {
    MINT_FINISH_NONE = 0,   // go on: evaluate the token and step again
    MINT_FINISH_STOP = 1,   // a stop string completed (the text ends where it begins)
    MINT_FINISH_LENGTH = 2, // max_tokens tokens were generated
    MINT_FINISH_EOS = 3,    // an end-of-generation token was sampled (it has no text)
} mint_finish;

typedef struct mint_gen_params {
    int32_t max_tokens;      // tokens to generate at most: the step that reaches it finishes
                             // with MINT_FINISH_LENGTH (a caller wanting none does not step);
                             // < 0: no limit (default -1)
    const char *const *stop; // [n_stop] stop strings, matched on bytes across tokens (copied;
                             // empty ones ignored), or NULL
    int32_t n_stop;          // 0 .. MINT_GEN_MAX_STOP
    int32_t n_top;           // alternatives to report with their log-probabilities, 0 .. 20
    bool logprobs;           // compute the sampled token's log-probability (a pass over the row)
    bool sample_info;        // fill mint_gen_token.info (another pass when sampling is not greedy)
    bool ignore_eos;         // an end-of-generation token is text like any other
    bool after_bos;          // the prompt is BOS alone: the first piece drops the space the
                             // vocabulary puts before a word (llama.cpp's and mint-run's rule)
} mint_gen_params;

typedef struct mint_gen_token {
    int32_t token;         // the sampled id
    mint_sample_info info; // what the sampler chain did (when params.sample_info)
    const char *piece;     // [n_piece] the token's bytes (leading-space rule applied; nothing for
    size_t n_piece;        //   control tokens and the end-of-generation token); valid until the
                           //   next step
    const char *text;      // [n_text] the text this step releases: earlier held-back bytes and
    size_t n_text;         //   this piece, up to what may still begin a stop string (or up to
                           //   the stop string, at MINT_FINISH_STOP); valid until the next step
    size_t n_held;         // bytes held back after this step (0 once finished)
    double logprob;        // log p(token) at temperature 1 (NAN unless logprobs or n_top)
    int32_t n_top;         // alternatives filled
    int32_t top_id[MINT_GEN_MAX_TOP];     // the most likely tokens, best first
    double top_logprob[MINT_GEN_MAX_TOP]; // their log-probabilities
    mint_finish finish;                   // MINT_FINISH_NONE while generation goes on
    int32_t n_generated;                  // tokens generated so far, this one included
                                          //   (an end-of-generation token is not counted)
} mint_gen_token;

MINT_API mint_gen_params mint_gen_default_params(void);
// A generation over a model's vocabulary drawing with sampler s (borrowed: it must outlive the
// mint_gen; the caller accepts the prompt's tokens into it first, for the repetition penalty).
// MINT_E_ARG for too many stop strings or alternatives.
MINT_API mint_status mint_gen_create(const mint_model *m, mint_sampler *s, const mint_gen_params *p,
                                     mint_gen **out, mint_err *err);
MINT_API void mint_gen_free(mint_gen *g);
// One step over n_vocab logits (not modified): samples, records the token in the sampler's
// history, and fills *out. MINT_E_ARG after generation finished; MINT_E_NOMEM.
MINT_API mint_status mint_gen_step(mint_gen *g, const float *logits, mint_gen_token *out,
                                   mint_err *err);
// Name of a finish reason as OpenAI spells it: "stop" (stop string or end of generation),
// "length", or "" for MINT_FINISH_NONE.
MINT_API const char *mint_finish_name(mint_finish f);

// ---------------------------------------------------------------------------------------------
// Decoding on several sequences: beam search and speculative decoding

typedef struct mint_beam_params {
    int32_t n_beams;      // beams kept (1 = greedy); the context needs n_seq_max >= n_beams
    float length_penalty; // a finished beam scores logprob / length^length_penalty (Hugging
                          // Face's; default 1; 0 ranks by total log-probability)
    int32_t max_tokens;   // tokens generated at most (default 64)
    bool ignore_eos;      // an end-of-generation token does not finish a beam
} mint_beam_params;

MINT_API mint_beam_params mint_beam_default_params(void);

// Beam search after a prompt: keeps the n_beams partial continuations of highest total
// log-probability, expanding each by its n_beams best tokens per step (all beams evaluated in one
// batch, sharing the prompt's and their common prefix's KV blocks); a beam finishes at an
// end-of-generation token. The result is the finished (or, at max_tokens, unfinished) beam of
// best score: up to cap tokens in out, *n_out of them, its total log-probability in *logprob.
// Uses sequences 0 .. n_beams-1 of the context (what they held is dropped).
MINT_API mint_status mint_beam_search(mint_ctx *c, const int32_t *prompt, int32_t n_prompt,
                                      const mint_beam_params *p, int32_t *out, int32_t cap,
                                      int32_t *n_out, double *logprob, mint_err *err);

typedef struct mint_spec_params {
    mint_ctx *draft;    // the draft model's context (same vocabulary), or NULL: prompt lookup,
                        // drafts copied from the context itself
    int32_t n_draft;    // tokens drafted per target pass (K; default 8)
    int32_t lookup_n;   // prompt lookup: longest n-gram matched (tries n .. 1; default 3)
    int32_t max_tokens; // tokens to generate (default 64)
    bool ignore_eos;    // keep going after an end-of-generation token
    // Called with each accepted token in order (may be NULL); returning false stops.
    bool (*on_token)(void *user, int32_t token);
    void *user;
} mint_spec_params;

typedef struct mint_spec_stats {
    uint64_t generated;     // tokens produced
    uint64_t drafted;       // tokens proposed by the draft (or the lookup)
    uint64_t accepted;      // of those, accepted by the target
    uint64_t target_passes; // target evaluations after the prompt (tokens per pass =
                            // generated / target_passes)
    double seconds;         // time spent after the prompt
} mint_spec_stats;

MINT_API mint_spec_params mint_spec_default_params(void);

// Speculative decoding: the draft proposes up to n_draft tokens, the target evaluates them all in
// one batch and keeps the longest run it agrees with, plus one token of its own. With a greedy
// sampler (temp <= 0) the output is the target's greedy output token for token; otherwise each
// draft token is accepted with probability min(1, p/q) and a rejection is replaced by a draw
// from norm(max(0, p - q)), so the tokens follow the target's distribution exactly (Leviathan
// et al. 2023). Sequence 0 of both contexts is used. MINT_E_ARG when the vocabularies differ,
// or the sampler uses a repetition penalty (not supported here).
MINT_API mint_status mint_speculative(mint_ctx *target, mint_sampler *s, const int32_t *prompt,
                                      int32_t n_prompt, const mint_spec_params *p,
                                      mint_spec_stats *stats, mint_err *err);

// Whether two models' vocabularies are the same for decoding together (the same size, special
// tokens and token texts); MINT_E_ARG naming the first difference.
MINT_API mint_status mint_vocab_compatible(const mint_model *a, const mint_model *b, mint_err *err);

// ---------------------------------------------------------------------------------------------
// Perplexity and KL divergence, by llama-perplexity's method
//
// The text is tokenized once (BOS first); chunk i is tokens [i*n_ctx, (i+1)*n_ctx) evaluated as
// one batch in an empty cache with its first token replaced by BOS; the logits of positions
// n_ctx/2 .. n_ctx-2 score the next token. PPL = exp(mean NLL), +- PPL * sd(NLL)/sqrt(count-1).
// The KL base file is llama.cpp's format (interchangeable with llama-perplexity's
// --kl-divergence-base): "_logits_", n_ctx, n_vocab, n_chunk, the tokens, then per scored token
// the log-probabilities as uint16 over a 16-nat window below the maximum.

typedef struct mint_ppl_params {
    int32_t n_ctx;            // chunk length (default 512)
    int32_t n_chunks;         // at most this many chunks; <= 0: all
    int32_t n_threads;        // 0 = all online CPUs
    mint_kv_type kv_type;     // KV cache type (default F32)
    mint_attention attention; // attention algorithm (default auto)
    const char *kld_base_out; // write the base log-probabilities here (atomically)
    const char *kld_base_in;  // compare against this base file (its tokens replace the text)
    // Called after every chunk with the running perplexity (may be NULL).
    void (*on_chunk)(void *user, int32_t chunk, int32_t n_chunks, double ppl);
    void *user;
} mint_ppl_params;

typedef struct mint_ppl_percentiles {
    double max, p999, p99, p95, p90, p75, median, p25, p10, p5, p1, p01, min;
} mint_ppl_percentiles;

typedef struct mint_ppl_result {
    int32_t n_ctx, n_chunks;         // chunks evaluated
    uint64_t n_text_tokens;          // tokens of the whole text
    uint64_t count;                  // scored tokens
    double ppl, ppl_err;             // Final estimate: PPL = ppl +/- ppl_err
    double seconds;                  // evaluation time
    bool has_kld;                    // the fields below are set (kld_base_in was given)
    double ppl_base, ppl_base_err;   // Mean PPL(base), from the base file
    double cor;                      // Cor(ln PPL(Q), ln PPL(base))
    double log_ratio, log_ratio_err; // Mean ln(PPL(Q)/PPL(base))
    double ppl_ratio, ppl_ratio_err; // Mean PPL(Q)/PPL(base)
    double ppl_diff, ppl_diff_err;   // Mean PPL(Q)-PPL(base)
    double kld, kld_err;             // Mean KLD
    mint_ppl_percentiles kld_pct;    // KLD percentiles (p75 / p25 unused)
    double dp, dp_err;               // Mean delta-p (probability of the right token)
    mint_ppl_percentiles dp_pct;     // delta-p percentiles
    double dp_rms, dp_rms_err;       // RMS delta-p
    double same_top, same_top_err;   // share of steps with the same argmax
} mint_ppl_result;

MINT_API mint_ppl_params mint_ppl_default_params(void);
// Computes perplexity (and KL divergence against a base file) of `len` bytes of text.
MINT_API mint_status mint_perplexity(mint_model *m, const char *text, size_t len,
                                     const mint_ppl_params *p, mint_ppl_result *out, mint_err *err);

// ---------------------------------------------------------------------------------------------
// Chat templates

typedef enum mint_chat_template {
    MINT_CHAT_UNKNOWN = 0,
    MINT_CHAT_ZEPHYR = 1, // <|user|>\n{msg}</s>\n ... <|assistant|>\n  (TinyLlama-Chat)
    MINT_CHAT_LLAMA2 = 2, // <s>[INST] <<SYS>>\n{sys}\n<</SYS>>\n\n{msg} [/INST]
    MINT_CHAT_CHATML = 3, // <|im_start|>user\n{msg}<|im_end|>\n ... <|im_start|>assistant\n
} mint_chat_template;

typedef struct mint_chat_msg {
    const char *role;    // "system", "user" or "assistant"
    const char *content; // UTF-8 text
} mint_chat_msg;

// Recognises a Jinja chat template by its signature; MINT_CHAT_UNKNOWN when it is none of the
// known ones (or NULL).
MINT_API mint_chat_template mint_chat_detect(const char *jinja);
// Template by name ("zephyr", "llama2", "chatml"); MINT_CHAT_UNKNOWN when unknown.
MINT_API mint_chat_template mint_chat_from_name(const char *name);
MINT_API const char *mint_chat_name(mint_chat_template t);
// The Jinja source of a named preset ("zephyr", "llama2", "chatml"), as those models ship it;
// NULL for any other name.
MINT_API const char *mint_chat_preset(const char *name);
// Renders a conversation with a Jinja chat template (a model's tokenizer.chat_template, a
// template file's text, or a preset's source) exactly as Hugging Face's apply_chat_template
// does: jinja2 semantics with trim_blocks, lstrip_blocks and loop controls; the variables
// messages ([{role, content}]), add_generation_prompt, bos_token / eos_token (the vocabulary's
// texts, "" when NULL) and tools = documents = None. *out gets the text (NUL-terminated, free
// it with mint_chat_free), *out_len its length. jinja NULL (a model without a template):
// MINT_E_NOT_FOUND naming --chat-template / --chat-template-file. The template's own
// raise_exception(msg): MINT_E_ARG with msg verbatim. Any other failure of the template
// (syntax, a construct mint lacks, an undefined value used, a bound on work, output or memory
// reached): MINT_E_FORMAT with the template line.
MINT_API mint_status mint_chat_apply(const char *jinja, const mint_chat_msg *msgs, size_t n,
                                     bool add_generation_prompt, const char *bos, const char *eos,
                                     char **out, size_t *out_len, mint_err *err);
MINT_API void mint_chat_free(char *text);
// A preset rendered through mint_chat_apply into buf: writes at most cap-1 bytes and a NUL and
// returns the length wanted; 0 (and "") when t is unknown or the template refuses the
// conversation (Llama-2 raises unless roles alternate user/assistant).
MINT_API size_t mint_chat_render(mint_chat_template t, const mint_chat_msg *msgs, size_t n,
                                 bool add_assistant, const char *bos, const char *eos, char *buf,
                                 size_t cap);

#ifdef __cplusplus
}
#endif

// File tools (quantizing, synthetic models) are declared beside this header, by concern.
#include "mint_filetools.h"

#endif // MINT_H
