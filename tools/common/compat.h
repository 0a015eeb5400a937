// compat.h - llama.cpp's common flags in mint's programs, so that a llama.cpp command line runs:
// the table rows the programs share for the flags that mean nothing on a CPU-only runtime (each
// prints one line saying so: see options.h, .note), and the three mint can honour in other
// words: -fa as --attention, -ctk and -ctv as --kv-type (mint keeps K and V in one type).
#ifndef MINT_COMPAT_H
#define MINT_COMPAT_H

#include "options.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COMPAT_CPU_ONLY "ignored: mint runs on the CPU only"

// What -fa, -ctk and -ctv asked for.
typedef struct compat_options {
    int flash_attn;      // -fa: the index in compat_auto_off_on (0, auto: as if not given)
    const char *cache_k; // -ctk: a KV type name, or NULL
    const char *cache_v; // -ctv: a KV type name, or NULL
} compat_options;

extern const char *const compat_auto_off_on[]; // "auto", "off", "on": -fa's and --color's values
extern const char *const compat_cache_types[]; // mint_kv_type's names, in its order
extern const char *const compat_split_modes[]; // "none", "layer", "row": -sm's values

// The heading row of the section.
#define COMPAT_SECTION                                                                             \
    { .kind = OPT_SECTION, .help = OPT_COMPAT_HEADING }

// llama.cpp's GPU placement flags, as llama-cli, llama-server and llama-perplexity take them.
// clang-format off
#define COMPAT_GPU_OPTS                                                                            \
    {"-ngl --gpu-layers --n-gpu-layers", OPT_INT, .arg = "N", .min = -1, .max = INT32_MAX,         \
     .note = COMPAT_CPU_ONLY},                                                                     \
    {"-mg --main-gpu", OPT_INT, .arg = "INDEX", .min = -1, .max = INT32_MAX,                       \
     .note = COMPAT_CPU_ONLY},                                                                     \
    {"-sm --split-mode", OPT_ENUM, .names = compat_split_modes, .note = COMPAT_CPU_ONLY},          \
    {"-ts --tensor-split", OPT_NUMS, .arg = "N0,N1,...", .fmin = 0, .fmax = 1e9,                   \
     .note = COMPAT_CPU_ONLY},                                                                     \
    {"-nkvo --no-kv-offload", OPT_FLAG, .note = "ignored: the KV cache is in RAM already"}

// -fa into the compat_options member `member` of struct `type`.
#define COMPAT_FA_OPT(type, member)                                                                \
    {"-fa --flash-attn", OPT_ENUM, OPT_FIELD(type, member.flash_attn),                             \
     .names = compat_auto_off_on, .bare = "on",                                                     \
     .help = "on: --attention flash; off, auto: mint's choice (never\n"                            \
             "flash unless --attention says so); alone: on"}

// -ctk and -ctv into the compat_options member `member` of struct `type`.
#define COMPAT_CACHE_OPTS(type, member)                                                            \
    {"-ctk --cache-type-k", OPT_CHOICE, OPT_FIELD(type, member.cache_k), "T",                      \
     .names = compat_cache_types,                                                                  \
     .help = "with -ctv: --kv-type T (K and V are one type in mint;\n"                             \
             "the one not given is llama.cpp's f16)"},                                             \
    {"-ctv --cache-type-v", OPT_CHOICE, OPT_FIELD(type, member.cache_v), "T",                      \
     .names = compat_cache_types, .help = "with -ctk: --kv-type T"}

// Flags of llama.cpp's programs that mint's do not need: no warm-up run, no log.
#define COMPAT_NO_WARMUP_OPT                                                                       \
    {"--no-warmup", OPT_FLAG, .note = "ignored: mint does no warm-up run"}
#define COMPAT_LOG_DISABLE_OPT                                                                     \
    {"--log-disable", OPT_FLAG, .note = "ignored: mint has no log to disable"}
// clang-format on

// Folds -fa into *attention (a mint_attention; NULL: the program has no choice of algorithm)
// and -ctk / -ctv into *kv_type (a mint_kv_type); false and one line in err when they cannot be
// honoured (K and V of different types, or a disagreement with --attention or --kv-type).
bool compat_fold(const compat_options *c, int *attention, int *kv_type, char *err, size_t errlen);

#endif // MINT_COMPAT_H
