// vocab_test.c - see vocab_test.h.
#include "vocab_test.h"

#include "helpers.h"

#include <criterion/criterion.h>
#include <stdlib.h>

mint_vocab *mt_vocab_load(const char *rel) {
    mint_err err;
    mint_file *f = NULL;
    cr_assert_eq(mint_file_open(mt_data_path(rel), &f, &err), MINT_OK, "%s", err.msg);
    mint_vocab *v = NULL;
    cr_assert_eq(mint_vocab_load(f, &v, &err), MINT_OK, "%s: %s", rel, err.msg);
    mint_file_close(f); // the vocabulary keeps its own copy of everything
    return v;
}

int32_t *mt_vocab_tok(const mint_vocab *v, const char *text, size_t len, bool add_special,
                      bool parse_special, size_t *n) {
    mint_err err;
    size_t need = 0;
    mint_status st =
        mint_vocab_tokenize(v, text, len, add_special, parse_special, NULL, 0, &need, &err);
    cr_assert(st == MINT_OK || st == MINT_E_LIMIT, "%s", err.msg);
    int32_t *ids = malloc((need + 1) * sizeof *ids);
    cr_assert_eq(mint_vocab_tokenize(v, text, len, add_special, parse_special, ids, need, n, &err),
                 MINT_OK, "%s", err.msg);
    cr_assert_eq(*n, need);
    return ids;
}

char *mt_vocab_detok(const mint_vocab *v, const int32_t *ids, size_t n, bool remove_special,
                     bool unparse_special, size_t *len) {
    size_t want = mint_vocab_detokenize(v, ids, n, remove_special, unparse_special, NULL, 0);
    char *s = malloc(want + 1);
    *len = mint_vocab_detokenize(v, ids, n, remove_special, unparse_special, s, want);
    cr_assert_leq(*len, want);
    s[*len] = '\0';
    return s;
}
