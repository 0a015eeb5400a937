// mint_inference.h - inference in mint's public API: models (weights and vocabulary), the plain
// forward pass, contexts (a paged KV cache for several sequences, batches, tracing), decoding on
// several sequences (beam search, speculative decoding), and perplexity.
// Included by mint.h, whose handles, statuses and conventions it uses; a program includes
// mint.h only.
#ifndef MINT_INFERENCE_H
#define MINT_INFERENCE_H

#ifndef MINT_H
#error "include mint.h, which includes this header after the types it uses"
#endif

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------------------------------------
// Models: weights bound to the llama graph, and the vocabulary (its tokens: mint_text.h)

typedef struct mint_model_params {
    bool vocab_only; // load only the tokenizer (a vocab-only GGUF has no tensors)
    bool no_repack;  // keep only the file's layout (no background repacking of the matrices
                     // for the kernels; also the environment variable MINT_REPACK=0)
    bool no_mmap;    // read the file (every shard) with pread(2) into anonymous memory instead
                     // of mapping it (llama.cpp's --no-mmap): the weights then never go back to
                     // the page cache, where mapped pages slow down within a run; costs the
                     // read at open, and that copy stays beside the repacked one (up to twice
                     // the weights' memory; no_repack keeps one)
    bool mlock;      // lock the weights in RAM (mlock(2): the file's memory, mapped or read,
                     // and the repacked matrices), so they are never paged out (llama.cpp's
                     // --mlock). Every page is brought in at open. Not being allowed to lock
                     // (RLIMIT_MEMLOCK) does not fail the open: mint_model_desc says so
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
                               // and one row of each embedding table, Gemma 4's per-layer one
                               // too): the memory traffic that bounds generation
    const char *chat_template; // tokenizer.chat_template, or NULL
    const char *types;         // per-type tensor counts, e.g. "F32x9 Q4_Kx25 Q6_Kx5"
    bool locked;               // mlock was asked and every byte of the weights is locked
    const char *lock_error;    // mlock was asked and (some of) the weights could not be locked:
                               // one line saying how much, why and what to raise (the model
                               // works, unlocked); NULL otherwise. Programs print it as a warning
    int32_t n_expert;          // experts of a mixture-of-experts feed-forward (0: dense)
    int32_t n_expert_used;     // experts each token takes (0: dense); bytes_per_token counts
                               // only theirs
    int32_t n_layer_recurrent; // a hybrid's layers whose past is a state (0: a transformer)
    int32_t n_state_heads;     // heads of each such layer's state: a delta net's value heads
                               // (an S x S matrix each), 1 for LFM2's convolution window
    uint64_t state_bytes;      // bytes of one sequence's recurrent state, every such layer
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
    uint64_t prefix_cache_bytes; // memory for KV blocks beyond those the sequences can hold
                                 // (default 0): blocks of finished prompts stay in the prefix
                                 // cache up to this budget, least recently used given back
                                 // first, so a prompt seen before starts from its cached
                                 // blocks (llama-server's --cache-ram; mint-serve's too)
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
// Empties seq and drops from the prefix cache the blocks only it held, so that their positions
// are evaluated again when next asked for (a server's "erase this slot").
MINT_API mint_status mint_seq_forget(mint_ctx *c, int32_t seq, mint_err *err);
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
    // A hybrid's recurrent state beside it (zeros for a transformer): each sequence's live state
    // and its checkpoints (runtime/engine/rstate.h), and going back to a checkpoint.
    uint64_t bytes_state;    // bytes of every sequence's state and checkpoints
    uint64_t state_restores; // checkpoints restored since creation (truncation, prefix reuse)
    uint64_t state_replayed; // tokens evaluated again after a restore since creation
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
// A mixture of experts' routing, for looking at it: while ids is set, every evaluation writes,
// for each row of sequence 0 at a position pos < max_pos and each layer, the experts its router
// chose, the best first, and their weights as the layer used them: ids[(layer * max_pos + pos) *
// k + j] and weights[(same)], k = mint_model_desc.n_expert_used (the rest of both is left
// alone). NULL turns it off. MINT_E_ARG for a dense model or max_pos outside 1..n_ctx.
// A hybrid's recurrent state, for looking at it: while buf is set, every evaluation writes, for
// each row of sequence 0 at a position pos < max_pos, the L2 norm of each recurrent layer's
// state per head once the row has gone through it: buf[(r * heads + h) * max_pos + pos], r the
// recurrent layer's index among them (0 .. n_layer_recurrent - 1), heads = n_state_heads
// (mint_model_desc); for LFM2's convolution the one head is its window of the last inputs b * x.
// NULL turns it off. MINT_E_ARG for a model without recurrent layers or max_pos outside 1..n_ctx.
MINT_API mint_status mint_ctx_capture_state(mint_ctx *c, float *buf, int32_t max_pos,
                                            mint_err *err);
MINT_API mint_status mint_ctx_capture_routing(mint_ctx *c, int32_t *ids, float *weights,
                                              int32_t max_pos, mint_err *err);
// Collects an importance matrix (mint_filetools.h) while this context evaluates, as
// llama-imatrix does (docs/formats.md 11.5): every matmul of a weight named "blk.*" (and
// "output.weight" when output_tensor) over at least 16 rows adds its f32 inputs' squares per
// column to the weight's sums and its rows to the count; an expert stack, per token and routing
// slot, to the chosen expert's. Sums are made in row order on one thread (the same for any thread
// count). NULL stops collecting; the matrix must outlive the collection. A size that differs
// from an entry already in the matrix, or a sum that is no longer finite, makes the evaluation
// fail with that message (and every later one, until collection is set again). MINT_E_ARG for a
// legacy file read in.
MINT_API mint_status mint_ctx_set_imatrix(mint_ctx *c, mint_imatrix *im, bool output_tensor,
                                          mint_err *err);
// The nodes of the last evaluation (when tracing was on), and their number; 0 if none.
MINT_API int32_t mint_ctx_last_trace(const mint_ctx *c, const mint_trace_node **nodes);

// Memory read bandwidth as a one-token matmul reaches it (membw.c): n_threads threads stream a
// `bytes` buffer as they stream weights; the median of `reps` passes after a warm-up, in GB/s.
MINT_API mint_status mint_measure_read_bandwidth(int n_threads, size_t bytes, int reps,
                                                 double *gb_per_s, mint_err *err);

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
    int32_t n_batch;          // tokens per evaluation (<= 0 or >= n_ctx: a chunk is one)
    mint_imatrix *imatrix;    // or NULL: collect into it (mint_ctx_set_imatrix) as
                              // llama-imatrix does: every token of every chunk
    bool imatrix_output;      // ... and output.weight too (llama-imatrix --process-output)
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

#ifdef __cplusplus
}
#endif

#endif // MINT_INFERENCE_H
