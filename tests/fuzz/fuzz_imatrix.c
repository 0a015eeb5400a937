// fuzz_imatrix.c - the importance-matrix reader (formats/imatrix.c) on arbitrary bytes: a GGUF
// when the input starts with "GGUF", else llama-imatrix's legacy .dat. The input is the whole
// file image.
//
// A rejected file must come with a one-line message that starts with the file's name. An
// accepted one is walked completely: every entry in name order (its values a whole number of
// rows per count, its counts not negative), the importance of every matrix of every entry (one
// matrix of all its values, and one per count), finite or refused with MINT_E_FORMAT; then it is
// combined twice into a fresh collection (sums and counts double).
#include "formats/imatrix.h"
#include "fuzz_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void walk(const mint_imatrix *im) {
    mint_imatrix_info info;
    mint_imatrix_get_info(im, &info);
    FUZZ_CHECK(info.n_entries >= 1);
    for (int64_t i = 0; i < info.n_datasets; i++) FUZZ_CHECK(mint_imatrix_dataset(im, i) != NULL);
    FUZZ_CHECK(mint_imatrix_dataset(im, info.n_datasets) == NULL);
    const char *prev = NULL;
    for (int64_t i = 0; i < info.n_entries; i++) {
        mint_imatrix_entry e, f;
        FUZZ_CHECK(mint_imatrix_entry_at(im, i, &e) == MINT_OK);
        FUZZ_CHECK(prev == NULL || strcmp(prev, e.name) < 0);
        prev = e.name;
        FUZZ_CHECK(mint_imatrix_find(im, e.name, &f) == MINT_OK && f.sums == e.sums);
        FUZZ_CHECK(e.n_counts >= 1 && e.n_vals >= 1 && e.n_vals % e.n_counts == 0);
        for (int64_t j = 0; j < e.n_counts; j++) FUZZ_CHECK(info.legacy || e.counts[j] >= 0);
        float *out = malloc((size_t)e.n_vals * sizeof *out);
        FUZZ_CHECK(out);
        mint_err err;
        const int64_t shapes[2][2] = {{e.n_vals, 1}, {e.n_vals / e.n_counts, e.n_counts}};
        for (int s = 0; s < 2; s++) {
            for (int64_t m = 0; m < shapes[s][1]; m++) {
                mint_status st =
                    mint_imatrix_importance(im, e.name, shapes[s][0], shapes[s][1], m, out, &err);
                FUZZ_CHECK(st == MINT_OK || st == MINT_E_FORMAT);
                for (int64_t j = 0; st == MINT_OK && j < shapes[s][0]; j++)
                    FUZZ_CHECK(isfinite(out[j]));
            }
        }
        FUZZ_CHECK(mint_imatrix_importance(im, e.name, e.n_vals + 1, 1, 0, out, &err) ==
                   MINT_E_LIMIT);
        free(out);
    }
}

static void combine(const mint_imatrix *im) {
    mint_imatrix *dst = NULL;
    mint_err err;
    FUZZ_CHECK(mint_imatrix_create(512, &dst, &err) == MINT_OK);
    FUZZ_CHECK(mint_imatrix_combine(dst, im, &err) == MINT_OK);
    FUZZ_CHECK(mint_imatrix_combine(dst, im, &err) == MINT_OK);
    mint_imatrix_info a, b;
    mint_imatrix_get_info(im, &a);
    mint_imatrix_get_info(dst, &b);
    FUZZ_CHECK(a.n_entries == b.n_entries && b.n_datasets == 2 * a.n_datasets);
    for (int64_t i = 0; i < a.n_entries && !a.legacy; i++) {
        mint_imatrix_entry x, y;
        FUZZ_CHECK(mint_imatrix_entry_at(im, i, &x) == MINT_OK);
        FUZZ_CHECK(mint_imatrix_entry_at(dst, i, &y) == MINT_OK);
        for (int64_t j = 0; j < x.n_counts; j++) FUZZ_CHECK(y.counts[j] == 2 * x.counts[j]);
    }
    mint_imatrix_free(dst);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mint_imatrix *im = NULL;
    mint_err err;
    mint_status st = mint_imatrix_parse(data, size, "fuzz.imatrix", &im, &err);
    if (st != MINT_OK) {
        FUZZ_CHECK(im == NULL && err.code == st);
        FUZZ_CHECK(strncmp(err.msg, "fuzz.imatrix", 12) == 0 && !strchr(err.msg, '\n'));
        return 0;
    }
    FUZZ_CHECK(im != NULL);
    walk(im);
    combine(im);
    mint_imatrix_free(im);
    return 0;
}
