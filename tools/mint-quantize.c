// mint-quantize - convert and quantize models; write synthetic ones.
//
// Modes (see --help): IN OUT TYPE quantizes a model with llama-quantize's per-tensor mixes;
// --synthetic writes a random-weight model with real shapes (for speed and format tests; its
// text is noise); --compare quantizes to several types and compares them.
#include "cli.h"
#include "mint.h"
#include "quantize_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL "mint-quantize"

static int synthetic(const quantize_options *o) {
    mint_synth_params p = {o->preset, o->type, o->vocab, o->seed, o->n_threads};
    mint_err err;
    double t0 = cli_now();
    if (mint_synth_write(&p, o->out, &err) != MINT_OK) {
        fprintf(stderr, TOOL ": %s\n", err.msg);
        return 1;
    }
    fprintf(stderr,
            TOOL ": wrote %s (synthetic %s, %s, random weights: its text is noise) in %.1f s\n",
            o->out, o->preset, o->type, cli_now() - t0);
    return 0;
}

int main(int argc, char **argv) {
    quantize_options o;
    char msg[600];
    if (!quantize_parse_args(argc, argv, &o, msg, sizeof msg)) {
        fprintf(stderr, TOOL ": %s\n", msg);
        return 2;
    }
    if (o.help) {
        quantize_usage(stdout);
        return 0;
    }
    switch (o.mode) {
    case QUANTIZE_SYNTHETIC:
        return synthetic(&o);
    default:
        fprintf(stderr, TOOL ": this mode is not implemented yet\n");
        return 1;
    }
}
