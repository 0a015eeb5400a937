// run.h - what mint-run's parts share: the session (model, context, sampler, flags), token
// lists, prompt reading and the timing summary. mint-run.c sets the session up and picks the
// mode; plain.c (plain, naive), chat.c (-cnv) and decoding.c (beams, speculative, parallel)
// run it. Everything goes through the public API (mint.h).
#ifndef MINT_RUN_H
#define MINT_RUN_H

#include "mint.h"
#include "run_args.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOOL "mint-run"

typedef struct tokens {
    int32_t *id; // [n]
    size_t n;    // used
    size_t cap;  // allocated
} tokens;

typedef struct stats {
    double t_load;     // seconds to open the model
    double t_prompt;   // seconds evaluating prompts
    double t_gen;      // seconds generating (sampling + evaluating)
    uint64_t n_prompt; // prompt tokens evaluated
    uint64_t n_reused; // prompt tokens found in the KV cache instead (chat turns)
    uint64_t n_gen;    // tokens generated
} stats;

typedef struct session {
    const run_options *o;   // flags
    mint_model *m;          // model
    mint_ctx *ctx;          // context
    mint_sampler *smpl;     // sampler
    mint_grammar *grammar;  // --grammar / --grammar-file, attached to smpl, or NULL
    mint_sampler_params sp; // its parameters (seeded)
    int32_t n_vocab;        // vocabulary size
    stats st;               // timings
} session;

// Prints msg as mint-run's one error line; returns 1.
int run_fail(const char *msg);

bool tokens_push(tokens *t, int32_t id);
// Tokenizes text and appends the ids to t.
mint_status tokens_from_text(const mint_model *m, const char *text, size_t len, bool add_special,
                             bool parse_special, tokens *t, mint_err *err);
// The bytes of a token (not NUL-terminated) in buf; returns the length.
size_t run_piece(const mint_model *m, int32_t id, char *buf, size_t cap);
// Prints tokens as text: the first piece after a lone BOS loses its leading space.
void run_print_tokens(const mint_model *m, const int32_t *ids, size_t n, bool after_bos);

// The text of -p or -f (malloc'd, escapes turned into bytes with -e) into *text and *len; *text
// NULL when neither was given. Returns 0, or run_fail's 1 (a file that cannot be read).
int run_prompt_text(const run_options *o, char **text, size_t *len);

// The prompt from -p, -f or --prompt-ids (BOS alone when empty), echoed to stdout unless --json
// or --no-display-prompt, once it is known to fit the context. Returns 0, or run_fail's 1 after
// printing the error (2 for a --prompt-ids id outside the vocabulary: a bad argument).
int run_read_prompt(session *s, tokens *seq);

void run_print_rate(const char *what, double secs, uint64_t n);
// The timing summary on stderr (after the work, so an earlier error stays the only line).
void run_print_summary(const stats *st);

// trace.c: --trace and --trace-json. open returns 0 or run_fail's 1 (an unwritable path); the
// others do nothing when *t is NULL (no tracing asked for).
typedef struct run_trace run_trace;
int run_trace_open(session *s, run_trace **t);
// After an evaluation of n tokens at pos0 (sequence 0).
void run_trace_batch(session *s, run_trace *t, int32_t pos0, int32_t n);
void run_trace_sample(session *s, run_trace *t, const mint_sample_info *info);
// Commits the JSON file (ok) or discards it; returns 0 or 1 after an error line.
int run_trace_close(run_trace *t, bool ok);

// report_run.c: --report. open returns 0 or 1 after an error line (an unwritable path, a compare
// model that cannot be opened or has another vocabulary); the rest do nothing when *r is NULL.
typedef struct run_report run_report;
int run_report_open(session *s, run_report **r);
// The prompt just evaluated (with every row's logits when all_logits) in `seconds`.
void run_report_prompt(session *s, run_report *r, const int32_t *ids, int n, bool all_logits,
                       double seconds);
// mint-run -cnv: the turn's prompt as the chat template rendered it (the page shows the last).
void run_report_chat_prompt(run_report *r, const char *text);
// A generated token, with the logits it was drawn from.
void run_report_token(session *s, run_report *r, const float *logits, int32_t id);
// The evaluation of the last generated token took `seconds`.
void run_report_step(session *s, run_report *r, double seconds);
// Writes the page (when ok) and frees r; returns 0 or 1 after an error line.
int run_report_close(session *s, run_report *r, bool ok);
void run_report_free(run_report *r);

int run_generate(session *s);               // plain.c: plain generation, --no-kv-cache
int run_chat(session *s, const char *tmpl); // chat.c
// The chat template's Jinja source (malloc): --chat-template's preset, --chat-template-file's
// text, else the model's own, once it has rendered the conversation's start (--system and a
// user turn); NULL and the one-line reason in msg when there is none, the file cannot be read or
// the template fails, so a bad template stops mint-run before the first turn is read.
char *run_chat_template(const run_options *o, const mint_model *m, char *msg, size_t cap);
int run_beams(session *s);       // decoding.c: --beams
int run_speculative(session *s); // decoding.c: --draft / --lookup
int run_parallel(session *s);    // decoding.c: --n-parallel

#endif // MINT_RUN_H
