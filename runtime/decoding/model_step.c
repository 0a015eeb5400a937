// model_step.c - the generation step and the space-prefix flag of a model's vocabulary: the model
// lives a floor above the step (runtime/text/generate.c), so the public entry points that take a
// mint_model are here and hand its vocabulary down.
#include "runtime/engine/model.h"
#include "runtime/text/generate.h"

mint_status mint_gen_create(const mint_model *m, mint_sampler *s, const mint_gen_params *p,
                            mint_gen **out, mint_err *err) {
    return mint_gen_create_vocab(m ? m->vocab : NULL, s, p, out, err);
}

bool mint_vocab_adds_space_prefix(const mint_model *m) {
    return mint_vocab_add_space_prefix(m->vocab);
}
