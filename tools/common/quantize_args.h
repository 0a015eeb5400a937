// quantize_args.h - mint-quantize's options and their table (apart from main, so the fuzz
// harnesses and tests/test_options.c can drive it).
#ifndef MINT_QUANTIZE_ARGS_H
#define MINT_QUANTIZE_ARGS_H

#include "options.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QUANTIZE_MAX_OVERRIDES 64
#define QUANTIZE_MAX_COMPARE   32

typedef enum quantize_mode {
    QUANTIZE_CONVERT = 0,   // IN OUT TYPE: quantize / convert a model
    QUANTIZE_SYNTHETIC = 1, // --synthetic PRESET -o OUT: write a random-weight model
    QUANTIZE_COMPARE = 2,   // --compare TYPES IN: quantize to each type and compare
} quantize_mode;

typedef struct quantize_options {
    quantize_mode mode;          // from the flags (set by the table's check)
    const char *in;              // IN: source model (GGUF, safetensors, HF folder)
    const char *out;             // OUT, or -o for --synthetic: the GGUF written
    const char *type;            // TYPE (or --type): one of quantize_ftypes (its spelling there)
    const char *synth_type;      // --type (synthetic; the check copies it into type)
    int n_threads;               // -t / trailing NTHREADS (0 = all online CPUs)
    bool pure;                   // --pure
    bool leave_output;           // --leave-output-tensor
    bool allow_requantize;       // --allow-requantize
    bool overwrite;              // --overwrite: allow replacing an existing OUT
    const char *output_type;     // --output-tensor-type
    const char *token_embd_type; // --token-embedding-type
    opt_strs overrides;          // --tensor-type PATTERN=TYPE, one per occurrence (<= 64)
    const char *imatrix;         // --imatrix FILE: importance matrix (llama-imatrix's); with
                                 // --compare, each type is measured without and with it
    opt_strs include_weights;    // --include-weights NAME: use the matrix only for these (<= 64)
    opt_strs exclude_weights;    // --exclude-weights NAME: do not use it for these (<= 64)
    const char *preset;          // --synthetic PRESET
    const char *shape;           // --shape real|tiny (synthetic; NULL: real)
    const char *vocab;           // --vocab FILE (synthetic)
    int64_t seed;                // --seed (synthetic; default 1)
    opt_strs compare;            // --compare TYPE,TYPE,...: quantize_ftypes spellings (<= 32)
    const char *text;            // --text FILE (compare: perplexity text)
    int ctx;                     // --ctx N (compare: perplexity context; default 128)
    int chunks;                  // --chunks N (compare: default all)
    const char *work_dir;        // --work-dir DIR (compare: where quantized files go)
    bool json;                   // --json (compare)
    bool verbose;                // -v: per-tensor decisions
    bool no_progress;            // --no-progress (the bar is shown only on a terminal anyway)
} quantize_options;

// The file types mint-quantize makes, as llama-quantize names them (NULL-ended): --help, the
// README and the unknown-type message all list this one table.
extern const char *const quantize_ftypes[];

// Whether llama-quantize makes file type `name` (a quantize_ftypes spelling) only with an
// importance matrix (Q2_K_S, IQ3_XXS, IQ3_XS, the IQ2 and IQ1 types): --compare measures such a
// type only with --imatrix's matrix.
bool quantize_ftype_needs_imatrix(const char *name);

// mint-quantize's table, usage and mode rules.
extern const opt_program quantize_program;

#endif // MINT_QUANTIZE_ARGS_H
