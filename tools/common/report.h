// report.h - the self-contained HTML report (mint-run --report, mint-perplexity --report): one
// file with the data as JSON and the page's script and style inline (tools/web/report.html and
// views.js, embedded at build time), so it opens from disk with no network.
#ifndef MINT_REPORT_H
#define MINT_REPORT_H

#include "mint.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REPORT_ALTS 5

typedef struct report_token {
    int32_t id;                      // token id
    char piece[64];                  // its text (cut at 63 bytes)
    bool generated;                  // false for prompt (or scored text) tokens
    float p;                         // probability the model gave it (< 0: none, the first token)
    float entropy;                   // entropy of that distribution, nats
    int32_t alt_id[REPORT_ALTS];     // the most likely tokens there, best first
    float alt_p[REPORT_ALTS];        // their probabilities
    char alt_piece[REPORT_ALTS][32]; // their text
    int n_alt;                       // alternatives filled
    float kl;                        // KL(model || compare model) there (< 0: none)
    int32_t cmp_top;                 // the compare model's most likely token (-1: none)
    char cmp_piece[32];              // its text
    float ms;                        // time of the evaluation that produced it (< 0: none)
    int32_t kv_blocks;               // KV blocks in use after evaluating it
    float kv_mib;                    // KV memory allocated then, MiB
} report_token;

typedef struct report {
    const char *tool;         // "mint-run" or "mint-perplexity"
    const char *model_path;   // the model file
    const char *compare_path; // the compare model, or NULL
    mint_model_desc desc;     // its facts
    const char *isa;          // kernel level
    const char *attention;    // attention algorithm
    int threads;              // threads
    int kv_block;             // positions per KV block
    report_token *tok;        // [n_tok] the tokens, in order
    int n_tok;
    const float *att;         // [layers][heads][att_T][att_T] weights (mint_ctx_capture_attention),
                              // or NULL
    int att_T;                // positions captured
    const int32_t *route_ids; // [layers][route_stride][k] experts chosen (a mixture of experts:
                              // mint_ctx_capture_routing), or NULL
    const float *route_w;     // [layers][route_stride][k] their weights
    int route_T;              // positions to show
    int route_stride;         // positions per layer in the two arrays
    const float *state_norm;  // [recurrent layers][heads][state_stride] a hybrid's state norms
                              // (mint_ctx_capture_state), or NULL
    int state_T;              // positions to show
    int state_stride;         // positions per head in the array
    const char *op_name[16];  // time per op kind, over the run
    double op_seconds[16];
    int n_ops;
    const double *chunk_ppl; // [n_chunks] running perplexity per chunk (mint-perplexity)
    int n_chunks;
    double ppl, ppl_err;     // final estimate (mint-perplexity), else 0
    char note[512];          // what was summarised or capped, said on the page
    const char *chat_prompt; // mint-run -cnv: the last turn's prompt as the chat template rendered
                             // it (what the model was given), or NULL
} report;

// Writes the page into f (begun by the caller with mint_atomic_file_begin, so that an
// unwritable path fails before the work); does not commit.
mint_status report_write(const report *r, mint_atomic_file *f, mint_err *err);

// Fills t's probability, entropy and alternatives from a row of logits (t->id already set).
void report_fill_dist(report_token *t, const mint_model *m, const float *logits, int32_t n_vocab);
// KL(p || q) of the softmaxes of two rows of logits, and q's argmax.
double report_kl(const float *p_logits, const float *q_logits, int32_t n_vocab, int32_t *q_top);
// The largest T with layers * heads * T * (T + 1) / 2 <= budget bytes, at most cap.
int report_attention_positions(int layers, int heads, size_t budget, int cap);

#endif // MINT_REPORT_H
