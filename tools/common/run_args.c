// run_args.c - mint-run's flags, named as llama.cpp's llama-cli names them.
#include "run_args.h"

#include "chat_arg.h"
#include "cli.h"

#include <stdlib.h>

#define F(member) OPT_FIELD(run_options, member)

static const char *const kv_types[] = {"f32", "f16", "q8_0", "q4_0", NULL}; // mint_kv_type order
// In mint_attention's order: the index is the enum value.
static const char *const attentions[] = {"auto", "naive", "rowwise", "flash", NULL};

static const opt opts[] = {
    {.kind = OPT_SECTION, .help = "input:"},
    {"-m --model", OPT_STRING, F(model), "FILE", .help = "model file (GGUF)"},
    {"-p --prompt", OPT_STRING, F(prompt), "TEXT",
     .help = "prompt (BOS is added as the vocabulary asks); with -cnv,\n"
             "the first user turn, answered before stdin is read"},
    {"-f --file", OPT_STRING, F(prompt_file), "FILE", .help = "read the prompt from a file"},
    {"--prompt-ids", OPT_STRING, F(prompt_ids), "LIST",
     .help = "token ids instead of text, e.g. 1,15,200"},
    LOAD_OPTS(run_options, load),
    {.kind = OPT_SECTION, .help = "generation:"},
    {"-n --n-predict", OPT_INT, F(n_predict), "N", -1, 1 << 24, .def = "-1",
     .help = "tokens to generate (-1: until EOS or the context is full)"},
    {"-c --ctx-size", OPT_INT, F(n_ctx), "N", 0, 1 << 20,
     .help = "context length (0: the model's, at most 4096)"},
    {"-t --threads", OPT_INT, F(n_threads), "N", 1, 256,
     .help = "threads (default: all online CPUs)"},
    {"-b --batch-size", OPT_INT, F(n_batch), "N", 1, 1 << 20,
     .help = "prompt tokens evaluated per batch (default 512)"},
    {"--kv-type", OPT_ENUM, F(kv_type), .names = kv_types, .def = "f32",
     .help = "KV cache storage (q8_0, q4_0: quantized rows, as llama.cpp's quantized cache)"},
    {"--no-kv-cache", OPT_FLAG, F(no_kv_cache),
     .help = "naive mode: recompute the whole sequence at every step,\n"
             "then re-time it with the cache and report both speeds"},
    {"--ignore-eos", OPT_FLAG, F(ignore_eos), .help = "keep generating after end-of-sequence"},
    {"--attention", OPT_ENUM, F(attention), "NAME", .names = attentions, .def = "auto",
     .help = "attention algorithm"},
    {"--kv-block", OPT_INT, F(kv_block), "N", 1, 4096,
     .help = "positions per KV cache block (default 32)"},
    {.kind = OPT_SECTION, .help = "decoding strategies (one at a time):"},
    {"--beams", OPT_INT, F(beams), "N", 1, 64,
     .help = "beam search with N beams; prints the best beam"},
    {"--length-penalty", OPT_FLOAT, F(length_penalty), "F", .fmin = -10, .fmax = 10, .def = "1",
     .help = "beams score logprob / length^F"},
    {"--draft", OPT_STRING, F(draft), "FILE",
     .help = "speculative decoding: FILE drafts, MODEL verifies"},
    {"--draft-n", OPT_INT, F(draft_n), "K", 1, 64, .def = "8",
     .help = "tokens drafted per verification"},
    {"--lookup", OPT_INT, F(lookup), "N", 1, 32,
     .help = "speculative decoding without a draft model: drafts copy\n"
             "what followed the last n-gram (n <= N) earlier in the text"},
    {"--n-parallel", OPT_INT, F(n_parallel), "N", 1, 256,
     .help = "N sampled completions of one prompt, decoded together"},
    {.kind = OPT_SECTION, .help = "sampling (applied in this order):"},
    {"--repeat-penalty", OPT_FLOAT, F(repeat_penalty), "F", .fmin = MINT_SAMPLER_PENALTY_MIN,
     .fmax = MINT_SAMPLER_PENALTY_MAX, .def = "1.0",
     .help = "1. penalise the last --repeat-last-n tokens (1 = off)"},
    {"--repeat-last-n", OPT_INT, F(repeat_last_n), "N", 0, MINT_SAMPLER_LAST_N_MAX, .def = "64",
     .help = "   window of that penalty"},
    {"--top-k", OPT_INT, F(top_k), "N", 0, MINT_SAMPLER_TOP_K_MAX, .def = "40",
     .help = "2. keep the N most likely tokens (0 = all)"},
    {"--top-p", OPT_FLOAT, F(top_p), "F", .fmin = 0, .fmax = 1, .def = "0.95",
     .help = "3. keep the smallest set with probability >= F"},
    {"--min-p", OPT_FLOAT, F(min_p), "F", .fmin = 0, .fmax = 1, .def = "0.05",
     .help = "4. drop tokens below F x p(best)"},
    {"--temp", OPT_FLOAT, F(temp), "F", .fmin = 0, .fmax = MINT_SAMPLER_TEMP_MAX, .def = "0.8",
     .help = "5. temperature (0 = greedy argmax)"},
    {"-s --seed", OPT_INT, F(seed), "N", -1, INT64_MAX, .def = "-1",
     .help = "6. draw with this RNG seed (-1: from the clock)"},
    {.kind = OPT_SECTION, .help = "constrained output:"},
    {"--grammar", OPT_STRING, F(grammar), "GBNF",
     .help = "only text this grammar matches (llama.cpp's GBNF, start rule\n"
             "root); the end comes once the text is a complete match"},
    {"--grammar-file", OPT_STRING, F(grammar_file), "FILE", .help = "the grammar from a file"},
    {"-j --json-schema", OPT_STRING, F(json_schema), "SCHEMA",
     .help = "only JSON this schema accepts (llama.cpp's conversion to a grammar)"},
    {"-jf --json-schema-file", OPT_STRING, F(json_schema_file), "FILE",
     .help = "the JSON schema from a file"},
    {.kind = OPT_SECTION, .help = "chat:"},
    {"-cnv --chat --conversation", OPT_FLAG, F(chat),
     .help = "interactive chat: one user turn per stdin line"},
    {"--chat-template", OPT_STRING, F(chat_template), "NAME", .names = cli_chat_names,
     .help = "the chat template (default: from the model): one of llama.cpp's\n"
             "built-in names, or a Jinja template's text"},
    {"--chat-template-file", OPT_STRING, F(chat_template_file), "FILE",
     .help = "a Jinja chat template from a file"},
    {"--system", OPT_STRING, F(system), "TEXT", .help = "system message"},
    {.kind = OPT_SECTION, .help = "output:"},
    {"--json", OPT_FLAG, F(json),
     .help = "one JSON object per generated token: id, piece, logprob"},
    {"--n-probs", OPT_INT, F(n_probs), "K", 0, 1000,
     .help = "with --json: the K most likely alternatives too"},
    {"--dump-graph", OPT_FLAG, F(dump_graph),
     .help = "print the op graph with shapes and types, then exit"},
    {"--trace", OPT_FLAG, F(trace),
     .help = "each evaluated batch's nodes (shapes, types, bytes read,\n"
             "time, threads), the KV cache fill and the sampler's steps"},
    {"--trace-json", OPT_STRING, F(trace_json), "FILE", .help = "the same as JSON lines"},
    {"--report", OPT_STRING, F(report), "FILE.html",
     .help = "a self-contained page: the text coloured by probability,\n"
             "alternatives, attention heatmaps, KV growth, latency, ops"},
    {"--compare-model", OPT_STRING, F(compare_model), "F",
     .help = "with --report: a second model (e.g. a quantized file) on\n"
             "the same tokens: per-token KL divergence, top-1 changes"},
    {"-v --verbose", OPT_FLAG, F(verbose),
     .help = "model description, kernel level, per-turn statistics"},
    OPT_VERSION_ROW,
    {"-h --help", OPT_HELP, .help = "this help"},
    COMPAT_SECTION,
    {"-sys --system-prompt", OPT_STRING, F(system), "TEXT", .help = "the same as --system"},
    {"-e --escape", OPT_FLAG, F(escape),
     .help = "turn \\n \\r \\t \\' \\\" \\\\ \\xHH in -p, -f and --system into\n"
             "the bytes (llama.cpp's default; mint's is --no-escape)"},
    {"--no-escape", OPT_FLAG, F(no_escape), .help = "take the text as typed (mint's default)"},
    {"--no-display-prompt", OPT_FLAG, F(no_display_prompt),
     .help = "print only the generated text, not the prompt"},
    {"-no-cnv --no-conversation", OPT_FLAG, F(no_chat),
     .help = "plain generation (mint-run's default)"},
    COMPAT_FA_OPT(run_options, compat),
    COMPAT_CACHE_OPTS(run_options, compat),
    COMPAT_GPU_OPTS,
    {"-ngld --gpu-layers-draft --n-gpu-layers-draft", OPT_INT, .arg = "N", .min = -1,
     .max = INT32_MAX, .note = COMPAT_CPU_ONLY},
    {"-co --color", OPT_ENUM, .names = compat_auto_off_on, .bare = "on",
     .note = "ignored: mint-run prints plain text"},
    COMPAT_NO_WARMUP_OPT,
    COMPAT_LOG_DISABLE_OPT,
};

// The rules between flags (each value alone was checked by the table).
// Also folds llama-cli's -fa, -ctk and -ctv into --attention and --kv-type.
static bool check(void *options, char *err, size_t errlen) {
    run_options *o = options;
    if (!o->model) {
        snprintf(err, errlen, "no model given: use -m MODEL (see --help)");
        return false;
    }
    int sources = !!o->prompt + !!o->prompt_file + !!o->prompt_ids;
    if (sources > 1) {
        snprintf(err, errlen, "give only one of -p, -f and --prompt-ids");
        return false;
    }
    if (o->prompt_ids) { // the list's form here; the ids against the vocabulary at run time
        size_t n;
        int32_t *ids = cli_parse_ids("--prompt-ids", o->prompt_ids, &n, err, errlen);
        if (!ids) return false;
        free(ids);
    }
    if (o->chat && o->prompt_ids) {
        snprintf(err, errlen, "--prompt-ids cannot be used with --chat");
        return false;
    }
    if (o->chat && o->no_kv_cache) {
        snprintf(err, errlen, "--no-kv-cache cannot be used with --chat");
        return false;
    }
    if (o->chat_template && o->chat_template_file) {
        snprintf(err, errlen, "give only one of --chat-template and --chat-template-file");
        return false;
    }
    if (o->chat_template && !cli_chat_check(&o->chat_template, false, err, errlen)) return false;
    const int modes =
        !!o->beams + !!o->draft + !!o->lookup + !!o->n_parallel + !!o->chat + !!o->no_kv_cache;
    if (modes > 1) {
        snprintf(err, errlen,
                 "choose one of --beams, --draft, --lookup, --n-parallel, --chat, --no-kv-cache");
        return false;
    }
    if ((o->grammar != NULL) + (o->grammar_file != NULL) + (o->json_schema != NULL) +
            (o->json_schema_file != NULL) >
        1) {
        snprintf(
            err, errlen,
            "give only one of --grammar, --grammar-file, --json-schema and --json-schema-file");
        return false;
    }
    if ((o->grammar || o->grammar_file || o->json_schema || o->json_schema_file) &&
        (o->beams || o->draft || o->lookup || o->n_parallel)) {
        snprintf(err, errlen,
                 "--grammar and --grammar-file work with plain generation and --chat "
                 "only");
        return false;
    }
    if (o->json && (o->beams || o->draft || o->lookup || o->n_parallel)) {
        snprintf(err, errlen, "--json works with plain generation only");
        return false;
    }
    if ((o->trace || o->trace_json) && modes > 0) {
        snprintf(err, errlen, "--trace and --trace-json work with plain generation only");
        return false;
    }
    if (o->report && modes > 0 && !o->chat) {
        snprintf(err, errlen, "--report works with plain generation and --chat only");
        return false;
    }
    if (o->compare_model && !o->report) {
        snprintf(err, errlen, "--compare-model needs --report");
        return false;
    }
    if (o->n_probs > 0 && !o->json) {
        snprintf(err, errlen, "--n-probs needs --json");
        return false;
    }
    if (o->escape && o->no_escape) {
        snprintf(err, errlen, "give only one of -e and --no-escape");
        return false;
    }
    if (o->chat && o->no_chat) {
        snprintf(err, errlen, "give only one of -cnv and -no-cnv");
        return false;
    }
    return compat_fold(&o->compat, &o->attention, &o->kv_type, err, errlen);
}

const opt_program run_program = {
    .name = "mint-run",
    .usage = "mint-run -m MODEL [options]",
    .about = "Generates text with a llama-family GGUF model. Tokens stream to stdout as they are\n"
             "produced; a timing summary goes to stderr. Without -p, -f or --prompt-ids it\n"
             "generates from BOS alone. llama-cli's GPU and display flags are accepted at the\n"
             "end of this list: each says on stderr what mint does instead.",
    .opts = opts,
    .n_opts = sizeof opts / sizeof *opts,
    .check = check,
};
