// quantize_args.c - mint-quantize's flags, llama-quantize's where they exist.
#include "quantize_args.h"

#include <stdio.h>
#include <strings.h>

#define F(member) OPT_FIELD(quantize_options, member)

// llama-quantize's names (and its short names for the _M mixes) of the file types mint can make
// (Q2_K_S, IQ3_XXS and IQ3_XS only with --imatrix, as llama-quantize).
static const char *const quantize_shapes[] = {"real", "tiny", "micro", NULL};

const char *const quantize_ftypes[] = {
    "F32",    "F16",    "BF16",      "Q8_0",    "Q4_0",   "Q4_1",   "Q5_0",   "Q5_1",
    "Q2_K",   "Q2_K_S", "Q3_K_S",    "Q3_K_M",  "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S",
    "Q5_K_M", "Q6_K",   "MXFP4_MOE", "TQ1_0",   "TQ2_0",  "IQ4_NL", "IQ4_XS", "IQ3_XXS",
    "IQ3_S",  "IQ3_M",  "IQ3_XS",    "IQ2_XXS", "IQ2_XS", "IQ2_S",  "IQ2_M",  "IQ1_S",
    "IQ1_M",  "Q1_0",   "Q2_0",      "Q3_K",    "Q4_K",   "Q5_K",   NULL};

// The file types llama-quantize makes only with an importance matrix (its tensor_requires_imatrix
// on their base types, and Q2_K_S): --compare measures them only with --imatrix.
bool quantize_ftype_needs_imatrix(const char *name) {
    static const char *const need[] = {"Q2_K_S", "IQ3_XXS", "IQ3_XS", "IQ2_XXS", "IQ2_XS",
                                       "IQ2_S",  "IQ2_M",   "IQ1_S",  "IQ1_M"};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        if (strcasecmp(name, need[i]) == 0) return true;
    return false;
}

static const opt opts[] = {
    {.arg = "IN",
     .kind = OPT_STRING,
     F(in),
     .noun = "input",
     .help = "the model: GGUF, safetensors file or Hugging Face folder"},
    {.arg = "OUT", .kind = OPT_STRING, F(out), .noun = "output", .help = "the GGUF to write"},
    {.arg = "TYPE",
     .kind = OPT_CHOICE,
     F(type),
     .names = quantize_ftypes,
     .noun = "file type",
     .help =
         "file type (Q3_K, Q4_K, Q5_K mean the _M mixes; Q2_K_S, IQ3_XXS, IQ3_XS need --imatrix)"},
    {.arg = "NTHREADS",
     .kind = OPT_INT,
     F(n_threads),
     .min = 1,
     .max = 256,
     .help = "threads (as -t)"},
    {.kind = OPT_SECTION, .help = "options:"},
    {"--pure", OPT_FLAG, F(pure), .help = "every quantized tensor gets the base type (no mix)"},
    {"--leave-output-tensor", OPT_FLAG, F(leave_output), .help = "keep output.weight as it is"},
    {"--output-tensor-type", OPT_STRING, F(output_type), "T", .help = "type of output.weight"},
    {"--token-embedding-type", OPT_STRING, F(token_embd_type), "T",
     .help = "type of token_embd.weight"},
    {"--tensor-type", OPT_STRS, F(overrides), "PATTERN=T", .max = QUANTIZE_MAX_OVERRIDES,
     .help = "type of tensors whose name matches the regex (repeatable)"},
    {"--imatrix", OPT_STRING, F(imatrix), "FILE",
     .help = "importance matrix (llama-imatrix's GGUF or .dat): weighted quantization (with "
             "--compare: each type without and with it)"},
    {"--include-weights", OPT_STRS, F(include_weights), "NAME", .max = QUANTIZE_MAX_OVERRIDES,
     .help = "use the importance matrix only for tensors whose name contains NAME (repeatable)"},
    {"--exclude-weights", OPT_STRS, F(exclude_weights), "NAME", .max = QUANTIZE_MAX_OVERRIDES,
     .help = "do not use it for tensors whose name contains NAME (repeatable)"},
    {"--allow-requantize", OPT_FLAG, F(allow_requantize), .help = "allow a quantized source"},
    {"--overwrite", OPT_FLAG, F(overwrite), .help = "replace OUT if it exists (never the input)"},
    {"-t --threads", OPT_INT, F(n_threads), "N", 1, 256,
     .help = "threads (default: all online CPUs)"},
    {"--no-progress", OPT_FLAG, F(no_progress),
     .help = "no progress bar (default: shown on a terminal)"},
    {"-v --verbose", OPT_FLAG, F(verbose), .help = "print each tensor's type and why"},
    OPT_VERSION_ROW,
    {"-h --help", OPT_HELP, .help = "this help"},
    {.kind = OPT_SECTION,
     .help = "synthetic model (random weights, real shapes; its text is noise):"},
    {"--synthetic", OPT_STRING, F(preset), "PRESET",
     .help = "tinyllama (TinyLlama-1.1B shapes), small, mha; llama3, qwen2, qwen3, phi3, gpt2, "
             "gemma2, gemma3 (see --shape)"},
    {"--shape", OPT_CHOICE, F(shape), "SHAPE", .names = quantize_shapes, .noun = "shape",
     .help = "for the architectures: real (Llama-3.2-1B, Qwen2.5-0.5B, Qwen3-0.6B, Phi-3-mini, "
             "GPT-2 124M, Gemma-2-2B, Gemma-3-1B; default), tiny (2 layers, 256 wide) or micro "
             "(1 layer, 8 wide)"},
    {"--type", OPT_CHOICE, F(synth_type), "TYPE", .names = quantize_ftypes,
     .help = "file type (default F32), one of TYPE's"},
    {"--vocab", OPT_STRING, F(vocab), "FILE",
     .help = "vocabulary: a GGUF or a SentencePiece tokenizer.model"},
    {"--seed", OPT_INT, F(seed), "N", 0, INT64_MAX, .def = "1", .help = "weights seed"},
    {"-o --output", OPT_STRING, F(out), "FILE", .help = "where to write"},
    {.kind = OPT_SECTION,
     .help = "comparison (quantize to each type, then perplexity, KL divergence and speed):"},
    {"--compare", OPT_NAMES, F(compare), "LIST", .names = quantize_ftypes,
     .max = QUANTIZE_MAX_COMPARE, .help = "comma-separated types (TYPE's), e.g. F16,Q8_0,Q4_0"},
    {"--text", OPT_STRING, F(text), "FILE", .help = "text for perplexity"},
    {"--ctx", OPT_INT, F(ctx), "N", 8, 1 << 16, .def = "128", .help = "perplexity context"},
    {"--chunks", OPT_INT, F(chunks), "N", 1, 1 << 24, .help = "at most N chunks (default all)"},
    {"--work-dir", OPT_STRING, F(work_dir), "DIR",
     .help = "where the quantized files go (default: a temp folder)"},
    {"--json", OPT_FLAG, F(json), .help = "JSON instead of a markdown table"},
};

// The mode from the flags, and what each mode needs.
static bool check(void *options, char *err, size_t errlen) {
    quantize_options *o = options;
    if (o->preset && o->compare.n) {
        snprintf(err, errlen, "give only one of --synthetic and --compare");
        return false;
    }
    o->mode = o->preset ? QUANTIZE_SYNTHETIC : o->compare.n ? QUANTIZE_COMPARE : QUANTIZE_CONVERT;
    if (o->shape && o->mode != QUANTIZE_SYNTHETIC) {
        snprintf(err, errlen, "--shape is for --synthetic");
        return false;
    }
    if (o->include_weights.n && o->exclude_weights.n) {
        snprintf(err, errlen, "--include-weights and --exclude-weights cannot be used together");
        return false;
    }
    if ((o->include_weights.n || o->exclude_weights.n) && !o->imatrix) {
        snprintf(err, errlen, "--include-weights and --exclude-weights need --imatrix FILE");
        return false;
    }
    if (o->imatrix && o->mode == QUANTIZE_SYNTHETIC) {
        snprintf(err, errlen, "--imatrix is for a conversion (IN OUT TYPE) or --compare");
        return false;
    }
    switch (o->mode) {
    case QUANTIZE_SYNTHETIC:
        if (o->in) {
            snprintf(err, errlen, "--synthetic takes no IN/OUT arguments; write with -o FILE");
            return false;
        }
        if (!o->out) {
            snprintf(err, errlen, "--synthetic needs -o OUT");
            return false;
        }
        o->type = o->synth_type ? o->synth_type : "F32";
        return true;
    case QUANTIZE_COMPARE:
        if (!o->in || o->out) {
            snprintf(err, errlen, "--compare needs exactly one input model");
            return false;
        }
        if (!o->text) {
            snprintf(err, errlen, "--compare needs --text FILE for perplexity");
            return false;
        }
        return true;
    case QUANTIZE_CONVERT:
        if (o->synth_type) {
            snprintf(err, errlen, "--type is for --synthetic; a conversion takes IN OUT TYPE");
            return false;
        }
        if (!o->type) {
            snprintf(err, errlen, "expected IN OUT TYPE [NTHREADS] (see --help)");
            return false;
        }
        return true;
    }
    return true;
}

const opt_program quantize_program = {
    .name = "mint-quantize",
    .usage = "mint-quantize [options] IN OUT TYPE [NTHREADS]\n"
             "       mint-quantize --synthetic PRESET [--type TYPE] [--vocab FILE] [--seed N] -o "
             "OUT\n"
             "       mint-quantize --compare TYPE,TYPE,... --text FILE [--imatrix FILE] [--ctx N] "
             "[--chunks N] IN",
    .about =
        "Converts a model (GGUF, safetensors file, or Hugging Face checkpoint folder) to a GGUF\n"
        "of file type TYPE with llama-quantize's per-tensor mix, through a temporary file that\n"
        "is renamed at the end (an interrupted run leaves no partial output).",
    .opts = opts,
    .n_opts = sizeof opts / sizeof *opts,
    .check = check,
};
