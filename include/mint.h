// mint.h - the public header of mint, a small CPU runtime for LLMs: the one a program includes.
// It declares what every part of the API shares (the conventions below, statuses and errors, the
// handles) and includes at its end the parts, one header per concern:
//   mint_file.h       model files: open, validate, inspect; ggml's type names, XXH3 hashing,
//                     files written whole or not at all;
//   mint_inference.h  models, the plain forward pass, contexts (the paged KV cache, batches,
//                     sequences, tracing), decoding on several sequences, perplexity;
//   mint_text.h       tokens, samplers, logits to text (log-probabilities, the generation step),
//                     chat templates;
//   mint_filetools.h  quantizing, synthetic models.
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

// Every function these headers mark MINT_API is exported from libmint.so; everything else in the
// library is hidden.
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
// The handles (what each one is: above); their functions are in the headers below

typedef struct mint_file mint_file;
typedef struct mint_model mint_model;
typedef struct mint_ctx mint_ctx;
typedef struct mint_sampler mint_sampler;
typedef struct mint_imatrix mint_imatrix; // an importance matrix (mint_filetools.h)

#ifdef __cplusplus
}
#endif

// The API by concern, one header each (they need the declarations above).
#include "mint_file.h"
#include "mint_inference.h"
#include "mint_text.h"
#include "mint_filetools.h"

#endif // MINT_H
