// serve_options.h - mint-serve's command line (serve_options.c): its flags and llama-server's.
#ifndef MINT_SERVE_OPTIONS_H
#define MINT_SERVE_OPTIONS_H

#include "options.h"
#include "serve.h"

#include <stdbool.h>
#include <stddef.h>

// The table: parsed into a serve_config by opt_main.
extern const opt_program serve_program;

// Whether argv holds a llama-server flag mint-serve refuses (TLS, LoRA, control vectors,
// downloading): true with one line in err naming it and the way out.
bool serve_refused_flag(int argc, char **argv, char *err, size_t errlen);

// Positions per slot (c->n_ctx) from -c, --parallel and -kvu as llama-server computes them: -c
// split over the slots, or the whole -c for each with -kvu; -c 0: the model's training context,
// at most 4096.
void serve_config_slots(serve_config *c, int n_ctx_train);

// The model's name in answers: the first of --alias's names in byte order, else the file's name.
const char *serve_config_name(serve_config *c, const char *path);

// Frees what check() allocated (the API keys).
void serve_config_free(serve_config *c);

#endif // MINT_SERVE_OPTIONS_H
