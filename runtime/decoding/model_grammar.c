// model_grammar.c - mint_grammar_create over a model: the grammar lives on the text floor
// (runtime/text/grammar.c) and takes a vocabulary and its token trie; the trie is built here by
// the model's first grammar and kept in the model for every later one.
#include "runtime/engine/model.h"
#include "runtime/text/grammar.h"
#include "runtime/text/token_trie.h"

#include "base/error.h"

#include <stdatomic.h>

// The model's token trie, built on first use. Two threads asking at once may both build one;
// the first to publish it wins and the other frees its own.
static const mint_token_trie *model_trie(const mint_model *cm, mint_err *err) {
    mint_model *m = (mint_model *)cm; // the trie is a cache: the model is otherwise unchanged
    mint_token_trie *t = atomic_load_explicit(&m->token_trie, memory_order_acquire);
    if (t) return t;
    mint_token_trie *fresh = NULL;
    if (mint_token_trie_build(m->vocab, &fresh, err) != MINT_OK) return NULL;
    if (atomic_compare_exchange_strong_explicit(&m->token_trie, &t, fresh, memory_order_acq_rel,
                                                memory_order_acquire))
        return fresh;
    mint_token_trie_free(fresh);
    return t;
}

mint_status mint_grammar_create(const mint_model *m, const char *text, size_t len,
                                const mint_grammar_params *p, mint_grammar **out, mint_err *err) {
    mint_err_clear(err);
    if (out) *out = NULL;
    if (!m) return mint_fail(err, MINT_E_ARG, "grammar: model is NULL");
    const mint_token_trie *t = model_trie(m, err);
    if (!t) return err ? err->code : MINT_E_NOMEM;
    return mint_grammar_create_vocab(m->vocab, t, text, len, p, out, err);
}
