// infill_prompt.h - llama-server's fill-in-the-middle prompt (POST /infill, its
// format_prompt_infill) from a request body: input_prefix, input_suffix, optional input_extra
// ([{filename, text}] chunks of other files) and prompt, put around the vocabulary's FIM tokens.
//
// The sequence, each part cut to a budget (n_batch, llama-server's default 2048 when 0):
//   [extra] [BOS] FIM_PRE prefix prompt FIM_SUF suffix FIM_MID
// (spm swaps the two middle parts: FIM_SUF suffix, then FIM_PRE prefix prompt), where
//   extra  = FIM_REP "myproject\n" (when the vocabulary has FIM_REP), then per chunk
//            FIM_SEP filename "\n" text (without FIM_SEP: "\n\n--- snippet ---\n\n" text),
//            then FIM_SEP "filename\n"; its last n_ctx - n_batch - 2 * n_predict tokens are kept
//            (n_predict -1: the whole context less a batch, plus 2);
//   prefix = its last 3 * (n_batch / 4) tokens;
//   suffix = its first n_batch / 4 - 2 - (prompt's tokens) tokens (none when that is < 0).
// BOS comes when the vocabulary adds one. Texts are tokenized without special tokens, the
// prompt with them (llama-server's rules). A prefix or suffix may also be a list of texts and
// token ids, as /completion's prompt.
#ifndef MINT_INFILL_PROMPT_H
#define MINT_INFILL_PROMPT_H

#include "mint.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INFILL_DEFAULT_BATCH 2048 // llama-server's -b when none is given

// The budgets, with llama-server's names (its server flags, not the request's).
typedef struct infill_limits {
    int n_batch;   // -b; 0: INFILL_DEFAULT_BATCH
    int n_ctx;     // positions of a slot
    int n_predict; // -n (-1: no limit)
    bool spm;      // --spm-infill: the suffix before the prefix
} infill_limits;

// The body's first fault, in llama-server's order (prompt not a string, input_prefix or
// input_suffix missing or neither a text nor a list of texts and ids below n_vocab, input_extra
// not a list of {text, filename?} strings), with *param naming the field; NULL when well-formed.
const char *infill_check(json_object *body, int32_t n_vocab, const char **param);
// The prompt of a body infill_check accepted: *ids (malloc'd, [*n]). fim's pre, suf and mid must
// be tokens of m (rep and sep may be -1). False with one line in msg when a text cannot be
// tokenized or memory runs out.
bool infill_tokens(const mint_model *m, const mint_fim_tokens *fim, json_object *body,
                   const infill_limits *lim, int32_t **ids, int *n, char *msg, size_t cap);

#endif // MINT_INFILL_PROMPT_H
