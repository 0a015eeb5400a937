// run_args.h - mint-run's options and their table (kept apart from main so the fuzz harnesses
// and tests/test_options.c can drive it).
#ifndef MINT_RUN_ARGS_H
#define MINT_RUN_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compat.h"
#include "model_load.h"
#include "options.h"

typedef struct run_options {
    const char *model;              // -m FILE
    const char *prompt;             // -p TEXT
    const char *prompt_file;        // -f FILE
    const char *prompt_ids;         // --prompt-ids 1,15,200
    int n_predict;                  // -n: tokens to generate; -1 = until EOS or the context is full
    int n_ctx;                      // -c: context length (0 = the model's, at most 4096)
    int n_threads;                  // -t: threads (0 = all online CPUs)
    int n_batch;                    // -b: prompt tokens per batch (0 = 512)
    long long seed;                 // -s: RNG seed; -1 = from the clock
    float temp;                     // --temp
    int top_k;                      // --top-k
    float top_p;                    // --top-p
    float min_p;                    // --min-p
    float repeat_penalty;           // --repeat-penalty
    int repeat_last_n;              // --repeat-last-n
    const char *grammar;            // --grammar GBNF: constrain the output (llama.cpp's GBNF)
    const char *grammar_file;       // --grammar-file FILE: the same from a file
    const char *json_schema;        // -j --json-schema SCHEMA: a JSON Schema the output matches
    const char *json_schema_file;   // -jf --json-schema-file FILE: the same from a file
    bool chat;                      // -cnv / --chat
    const char *chat_template;      // --chat-template NAME
    const char *chat_template_file; // --chat-template-file FILE.jinja
    const char *system;             // --system TEXT
    bool no_kv_cache;               // --no-kv-cache: recompute the whole sequence every step
    int kv_type;                    // --kv-type: a mint_kv_type (the index in kv_types)
    bool json;                      // --json: one object per generated token
    int n_probs;                    // --n-probs K: alternatives in --json
    bool dump_graph;                // --dump-graph
    bool verbose;                   // -v
    bool ignore_eos;                // --ignore-eos
    int attention;                  // --attention: a mint_attention (0 = auto)
    int kv_block;                   // --kv-block: positions per KV block (0 = the library's)
    int beams;                      // --beams N: beam search with N beams (0 = off)
    float length_penalty;           // --length-penalty F (beam search)
    const char *draft;              // --draft FILE: speculative decoding with this draft model
    int draft_n;                    // --draft-n K: tokens drafted per target pass
    int lookup;                // --lookup N: speculative decoding by prompt lookup, n-grams <= N
    int n_parallel;            // --n-parallel N: N completions of one prompt (0 = off)
    bool trace;                // --trace: every evaluated batch's nodes and each sample, on stderr
    const char *trace_json;    // --trace-json FILE: the same as JSON lines
    const char *report;        // --report FILE.html: a self-contained page about the run
    const char *compare_model; // --compare-model FILE: a second model scored on the same tokens
    load_options load;         // --no-mmap, --mlock: how the weights are loaded (every model)
    // llama-cli's spellings (tools/common/compat.h): -fa, -ctk, -ctv; -e (escapes in -p, -f and
    // --system, as llama.cpp processes them), --no-escape, --no-display-prompt, -no-cnv.
    compat_options compat;
    bool escape;            // -e
    bool no_escape;         // --no-escape (mint's default)
    bool no_display_prompt; // --no-display-prompt: the prompt is not echoed to stdout
    bool no_chat;           // -no-cnv (mint's default)
} run_options;

// mint-run's table, usage and combination rules: opt_parse(&run_program, ...) fills a
// run_options.
extern const opt_program run_program;

#endif // MINT_RUN_ARGS_H
