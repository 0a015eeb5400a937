// generate.h - the generation step over a vocabulary (runtime/text/generate.c). The public
// mint_gen_create takes a model; runtime/decoding/model_step.c hands its vocabulary to this one.
#ifndef MINT_TEXT_GENERATE_H
#define MINT_TEXT_GENERATE_H

#include "mint.h"
#include "runtime/text/vocab.h"

mint_status mint_gen_create_vocab(const mint_vocab *v, mint_sampler *s, const mint_gen_params *p,
                                  mint_gen **out, mint_err *err);

#endif // MINT_TEXT_GENERATE_H
