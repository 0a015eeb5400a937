// quantize_args.c - mint-quantize's flags, llama-quantize's where they exist.
#include "quantize_args.h"

#include "cli.h"

#include <string.h>
#include <unistd.h>

void quantize_usage(FILE *out) {
    fprintf(
        out,
        "usage: mint-quantize [options] IN OUT TYPE [NTHREADS]\n"
        "       mint-quantize --synthetic PRESET [--type TYPE] [--vocab FILE] [--seed N] -o OUT\n"
        "       mint-quantize --compare TYPE,TYPE,... --text FILE [--ctx N] [--chunks N] IN\n"
        "\n"
        "Converts a model (GGUF, safetensors file, or Hugging Face checkpoint folder) to a GGUF\n"
        "of file type TYPE with llama-quantize's per-tensor mix, through a temporary file that\n"
        "is renamed at the end (an interrupted run leaves no partial output).\n"
        "\n"
        "types: F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M\n"
        "       Q5_K_S Q5_K_M Q6_K (Q3_K, Q4_K, Q5_K mean the _M mixes)\n"
        "\n"
        "options:\n"
        "  --pure                    every quantized tensor gets the base type (no mix)\n"
        "  --leave-output-tensor     keep output.weight as it is\n"
        "  --output-tensor-type T    type of output.weight\n"
        "  --token-embedding-type T  type of token_embd.weight\n"
        "  --tensor-type PATTERN=T   type of tensors whose name matches the regex (repeatable)\n"
        "  --allow-requantize        allow a quantized source\n"
        "  --overwrite               replace OUT if it exists (never the input)\n"
        "  -t, --threads N           threads (default: all online CPUs)\n"
        "  --no-progress             no progress bar (default: shown on a terminal)\n"
        "  -v, --verbose             print each tensor's type and why\n"
        "synthetic model (random weights, real shapes; its text is noise):\n"
        "  --synthetic PRESET        tinyllama (TinyLlama-1.1B shapes), small or mha\n"
        "  --type TYPE               file type (default F32)\n"
        "  --vocab FILE              vocabulary: a GGUF or a SentencePiece tokenizer.model\n"
        "  --seed N                  weights seed (default 1)\n"
        "  -o, --output FILE         where to write\n"
        "comparison (quantize to each type, then perplexity, KL divergence and speed):\n"
        "  --compare LIST            comma-separated types, e.g. F16,Q8_0,Q4_0\n"
        "  --text FILE               text for perplexity\n"
        "  --ctx N                   perplexity context (default 128)\n"
        "  --chunks N                at most N chunks (default all)\n"
        "  --work-dir DIR            where the quantized files go (default: a temp folder)\n"
        "  --json                    JSON instead of a markdown table\n");
}

static bool is(const char *a, const char *s, const char *l) {
    return (s && strcmp(a, s) == 0) || (l && strcmp(a, l) == 0);
}

// The flags that take a value (an unknown one is reported as unknown, not as lacking a value).
static bool takes_value(const char *a) {
    static const char *const flags[] = {"--output-tensor-type",
                                        "--token-embedding-type",
                                        "--tensor-type",
                                        "-t",
                                        "--threads",
                                        "--synthetic",
                                        "--type",
                                        "--vocab",
                                        "--seed",
                                        "-o",
                                        "--output",
                                        "--compare",
                                        "--text",
                                        "--ctx",
                                        "--chunks",
                                        "--work-dir"};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if (strcmp(a, flags[i]) == 0) return true;
    return false;
}

bool quantize_parse_args(int argc, char **argv, quantize_options *o, char *err, size_t errlen) {
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->ctx = 128;
    o->progress = isatty(STDERR_FILENO);
    const char *pos[4];
    int n_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long long iv;
        if (is(a, "-h", "--help")) {
            o->help = true;
            return true;
        }
        if (is(a, "--pure", NULL))
            o->pure = true;
        else if (is(a, "--leave-output-tensor", NULL))
            o->leave_output = true;
        else if (is(a, "--allow-requantize", NULL))
            o->allow_requantize = true;
        else if (is(a, "--overwrite", NULL))
            o->overwrite = true;
        else if (is(a, "--no-progress", NULL))
            o->progress = false;
        else if (is(a, "--json", NULL))
            o->json = true;
        else if (is(a, "-v", "--verbose"))
            o->verbose = true;
        else if (a[0] == '-' && a[1] != '\0') {
            if (!takes_value(a)) {
                snprintf(err, errlen, "unknown option '%s' (see --help)", a);
                return false;
            }
            if (i + 1 >= argc) {
                snprintf(err, errlen, "%s needs a value (see --help)", a);
                return false;
            }
            const char *v = argv[++i];
            if (is(a, "--output-tensor-type", NULL))
                o->output_type = v;
            else if (is(a, "--token-embedding-type", NULL))
                o->token_embd_type = v;
            else if (is(a, "--tensor-type", NULL)) {
                if (o->n_overrides == QUANTIZE_MAX_OVERRIDES) {
                    snprintf(err, errlen, "at most %d --tensor-type options",
                             QUANTIZE_MAX_OVERRIDES);
                    return false;
                }
                o->overrides[o->n_overrides++] = v;
            } else if (is(a, "-t", "--threads")) {
                if (!cli_parse_int(a, v, 1, 256, &iv, err, errlen)) return false;
                o->n_threads = (int)iv;
            } else if (is(a, "--synthetic", NULL)) {
                o->mode = QUANTIZE_SYNTHETIC;
                o->preset = v;
            } else if (is(a, "--type", NULL))
                o->type = v;
            else if (is(a, "--vocab", NULL))
                o->vocab = v;
            else if (is(a, "--seed", NULL)) {
                if (!cli_parse_int(a, v, 0, INT64_MAX, &iv, err, errlen)) return false;
                o->seed = (uint64_t)iv;
            } else if (is(a, "-o", "--output"))
                o->out = v;
            else if (is(a, "--compare", NULL)) {
                o->mode = QUANTIZE_COMPARE;
                snprintf(o->compare_buf, sizeof o->compare_buf, "%s", v);
                o->n_compare = 0;
                for (char *s = o->compare_buf, *tok; (tok = strtok(s, ",")); s = NULL) {
                    if (o->n_compare == QUANTIZE_MAX_COMPARE) {
                        snprintf(err, errlen, "--compare takes at most %d types",
                                 QUANTIZE_MAX_COMPARE);
                        return false;
                    }
                    o->compare[o->n_compare++] = tok;
                }
                if (o->n_compare == 0) {
                    snprintf(err, errlen, "--compare expects a list of types, got '%s'", v);
                    return false;
                }
            } else if (is(a, "--text", NULL))
                o->text = v;
            else if (is(a, "--ctx", NULL)) {
                if (!cli_parse_int(a, v, 8, 1 << 16, &iv, err, errlen)) return false;
                o->ctx = (int)iv;
            } else if (is(a, "--chunks", NULL)) {
                if (!cli_parse_int(a, v, 1, 1 << 24, &iv, err, errlen)) return false;
                o->chunks = (int)iv;
            } else if (is(a, "--work-dir", NULL))
                o->work_dir = v;
            else {
                snprintf(err, errlen, "unknown option '%s' (see --help)", a);
                return false;
            }
        } else {
            if (n_pos == 4) {
                snprintf(err, errlen, "too many arguments ('%s'); see --help", a);
                return false;
            }
            pos[n_pos++] = a;
        }
    }
    switch (o->mode) {
    case QUANTIZE_SYNTHETIC:
        if (n_pos > 0) {
            snprintf(err, errlen, "--synthetic takes no IN/OUT arguments; write with -o FILE");
            return false;
        }
        if (!o->out) {
            snprintf(err, errlen, "--synthetic needs -o OUT");
            return false;
        }
        if (!o->type) o->type = "F32";
        return true;
    case QUANTIZE_COMPARE:
        if (n_pos != 1) {
            snprintf(err, errlen, "--compare needs exactly one input model");
            return false;
        }
        o->in = pos[0];
        if (!o->text) {
            snprintf(err, errlen, "--compare needs --text FILE for perplexity");
            return false;
        }
        return true;
    case QUANTIZE_CONVERT:
        if (n_pos < 3) {
            snprintf(err, errlen, "expected IN OUT TYPE [NTHREADS] (see --help)");
            return false;
        }
        o->in = pos[0];
        o->out = pos[1];
        o->type = pos[2];
        if (n_pos == 4) {
            long long iv;
            if (!cli_parse_int("NTHREADS", pos[3], 1, 256, &iv, err, errlen)) return false;
            o->n_threads = (int)iv;
        }
        return true;
    }
    return true;
}
