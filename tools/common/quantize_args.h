// quantize_args.h - mint-quantize's options and their parser (apart from main, so the fuzz
// harness can drive it).
#ifndef MINT_QUANTIZE_ARGS_H
#define MINT_QUANTIZE_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define QUANTIZE_MAX_OVERRIDES 64
#define QUANTIZE_MAX_COMPARE   32

typedef enum quantize_mode {
    QUANTIZE_CONVERT = 0,   // IN OUT TYPE: quantize / convert a model
    QUANTIZE_SYNTHETIC = 1, // --synthetic PRESET -o OUT: write a random-weight model
    QUANTIZE_COMPARE = 2,   // --compare TYPES IN: quantize to each type and compare
} quantize_mode;

typedef struct quantize_options {
    quantize_mode mode;
    const char *in;                                // source model (GGUF, safetensors, HF folder)
    const char *out;                               // output GGUF (-o for --synthetic)
    const char *type;                              // file type name (TYPE argument, or --type)
    int n_threads;                                 // -t / trailing NTHREADS (0 = all online CPUs)
    bool pure;                                     // --pure
    bool leave_output;                             // --leave-output-tensor
    bool allow_requantize;                         // --allow-requantize
    bool overwrite;                                // --overwrite: allow replacing an existing OUT
    const char *output_type;                       // --output-tensor-type
    const char *token_embd_type;                   // --token-embedding-type
    const char *overrides[QUANTIZE_MAX_OVERRIDES]; // --tensor-type PATTERN=TYPE
    int n_overrides;
    const char *preset;                        // --synthetic PRESET
    const char *vocab;                         // --vocab FILE (synthetic)
    uint64_t seed;                             // --seed (synthetic; default 1)
    const char *compare[QUANTIZE_MAX_COMPARE]; // --compare TYPE,TYPE,...
    int n_compare;
    char compare_buf[512]; // storage the compare list points into
    const char *text;      // --text FILE (compare: perplexity text)
    int ctx;               // --ctx N (compare: perplexity context; default 128)
    int chunks;            // --chunks N (compare: default all)
    const char *work_dir;  // --work-dir DIR (compare: where quantized files go)
    bool json;             // --json (compare)
    bool verbose;          // -v: per-tensor decisions
    bool progress;         // progress bar (default on a terminal; --no-progress)
    bool help;             // -h
} quantize_options;

bool quantize_parse_args(int argc, char **argv, quantize_options *o, char *err, size_t errlen);
void quantize_usage(FILE *out);

#endif // MINT_QUANTIZE_ARGS_H
