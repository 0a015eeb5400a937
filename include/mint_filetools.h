// mint_filetools.h - the file tools of mint's public API (runtime/filetools/): quantizing a model
// to a GGUF of a file type, and writing synthetic models (random weights with real shapes).
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

#ifdef __cplusplus
}
#endif

#endif // MINT_FILETOOLS_H
