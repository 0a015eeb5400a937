// model_load.h - how the programs load a model's weights: the flags every program that opens a
// model shares (--no-mmap, --mlock, as llama.cpp's programs have them) and the open that
// applies them and warns once when the weights could not be locked.
#ifndef MINT_MODEL_LOAD_H
#define MINT_MODEL_LOAD_H

#include "mint.h"
#include "options.h"

#include <stdbool.h>

typedef struct load_options {
    bool no_mmap; // --no-mmap: read the file into memory instead of mapping it
    bool mlock;   // --mlock: lock the weights in RAM
} load_options;

// The two rows of an options table that fill the load_options member `member` of struct `type`.
// clang-format off
#define LOAD_OPTS(type, member)                                                                    \
    {"--no-mmap", OPT_FLAG, OPT_FIELD(type, member.no_mmap),                                       \
     .help = "read the model into memory instead of mapping it\n"                                  \
             "(mapped weights slow down within a run on some VMs)"},                               \
    {"--mlock", OPT_FLAG, OPT_FIELD(type, member.mlock),                                           \
     .help = "lock the weights in RAM so they are never paged out\n"                               \
             "(a warning, not an error, when the memlock limit forbids it)"}
// clang-format on

// mint_model_open with lo's flags (lo may be NULL: the defaults). When --mlock could not lock the
// weights, prints one line "TOOL: warning: ..." on stderr and succeeds.
mint_status load_model(const char *tool, const char *path, const load_options *lo, mint_model **out,
                       mint_err *err);

#endif // MINT_MODEL_LOAD_H
