// model_load.c - mint_model_open with the programs' loading flags (model_load.h).
#include "model_load.h"

#include <stdio.h>

mint_status load_model(const char *tool, const char *path, const load_options *lo, mint_model **out,
                       mint_err *err) {
    mint_model_params mp = {0};
    if (lo) {
        mp.no_mmap = lo->no_mmap;
        mp.mlock = lo->mlock;
    }
    mint_status st = mint_model_open(path, &mp, out, err);
    if (st != MINT_OK) return st;
    mint_model_desc d;
    mint_model_describe(*out, &d);
    if (d.lock_error) fprintf(stderr, "%s: warning: --mlock: %s\n", tool, d.lock_error);
    return MINT_OK;
}
