// run_args.c - mint-run's flags, named as llama.cpp's llama-cli names them.
#include "run_args.h"

#include "cli.h"
#include "mint.h"

#include <string.h>

void run_usage(FILE *out) {
    fprintf(out,
            "usage: mint-run -m MODEL [options]\n"
            "\n"
            "Generates text with a llama-family GGUF model. Tokens stream to stdout as they are\n"
            "produced; a timing summary goes to stderr.\n"
            "\n"
            "input:\n"
            "  -m, --model FILE        model file (GGUF)\n"
            "  -p, --prompt TEXT       prompt (BOS is added as the vocabulary asks)\n"
            "  -f, --file FILE         read the prompt from a file\n"
            "      --prompt-ids LIST   token ids instead of text, e.g. 1,15,200\n"
            "generation:\n"
            "  -n, --n-predict N       tokens to generate (-1: until EOS or the context is full;"
            " default -1)\n"
            "  -c, --ctx-size N        context length (default: the model's, at most 4096)\n"
            "  -t, --threads N         threads (default: all online CPUs)\n"
            "  -b, --batch-size N      prompt tokens evaluated per batch (default 512)\n"
            "      --kv-type f32|f16   KV cache storage (default f32)\n"
            "      --no-kv-cache       naive mode: recompute the whole sequence at every step,\n"
            "                          then re-time it with the cache and report both speeds\n"
            "      --ignore-eos        keep generating after end-of-sequence\n"
            "      --attention NAME    auto | naive | rowwise | flash (default auto)\n"
            "      --kv-block N        positions per KV cache block (default 32)\n"
            "decoding strategies (one at a time):\n"
            "      --beams N           beam search with N beams; prints the best beam\n"
            "      --length-penalty F  beams score logprob / length^F (default 1)\n"
            "      --draft FILE        speculative decoding: FILE drafts, MODEL verifies\n"
            "      --draft-n K         tokens drafted per verification (default 8)\n"
            "      --lookup N          speculative decoding without a draft model: drafts copy\n"
            "                          what followed the last n-gram (n <= N) earlier in the text\n"
            "      --n-parallel N      N sampled completions of one prompt, decoded together\n"
            "sampling (applied in this order):\n"
            "      --repeat-penalty F  1. penalise the last --repeat-last-n tokens (default 1.0 ="
            " off)\n"
            "      --repeat-last-n N      window of that penalty (default 64)\n"
            "      --top-k N           2. keep the N most likely tokens (default 40; 0 = all)\n"
            "      --top-p F           3. keep the smallest set with probability >= F (default"
            " 0.95)\n"
            "      --min-p F           4. drop tokens below F x p(best) (default 0.05)\n"
            "      --temp F            5. temperature (default 0.8; 0 = greedy argmax)\n"
            "  -s, --seed N            6. draw with this RNG seed (default: from the clock)\n"
            "chat:\n"
            "  -cnv, --chat            interactive chat: one user turn per stdin line\n"
            "      --chat-template NAME  zephyr | llama2 | chatml (default: from the model)\n"
            "      --chat-template-file FILE  a Jinja chat template to use instead\n"
            "      --system TEXT       system message\n"
            "output:\n"
            "      --json              one JSON object per generated token: id, piece, logprob\n"
            "      --n-probs K         with --json: the K most likely alternatives too\n"
            "      --dump-graph        print the op graph with shapes and types, then exit\n"
            "      --trace             each evaluated batch's nodes (shapes, types, bytes read,\n"
            "                          time, threads), the KV cache fill and the sampler's steps\n"
            "      --trace-json FILE   the same as JSON lines\n"
            "      --report FILE.html  a self-contained page: the text coloured by probability,\n"
            "                          alternatives, attention heatmaps, KV growth, latency, ops\n"
            "      --compare-model F   with --report: a second model (e.g. a quantized file) on\n"
            "                          the same tokens: per-token KL divergence, top-1 changes\n"
            "  -v, --verbose           model description, kernel level, per-turn statistics\n"
            "  -h, --help              this help\n");
}

static void defaults(run_options *o) {
    memset(o, 0, sizeof *o);
    o->n_predict = -1;
    o->seed = -1;
    o->temp = 0.8f;
    o->top_k = 40;
    o->top_p = 0.95f;
    o->min_p = 0.05f;
    o->repeat_penalty = 1.0f;
    o->repeat_last_n = 64;
    o->length_penalty = 1.0f;
    o->draft_n = 8;
}

static bool is(const char *a, const char *s, const char *l) {
    return (s && strcmp(a, s) == 0) || (l && strcmp(a, l) == 0);
}

// The flags that take a value, so that an unknown flag at the end of the line is reported as
// unknown rather than as missing its value.
static bool takes_value(const char *a) {
    static const char *const flags[] = {
        "-m",
        "--model",
        "-p",
        "--prompt",
        "-f",
        "--file",
        "--prompt-ids",
        "--chat-template",
        "--chat-template-file",
        "--system",
        "--kv-type",
        "-n",
        "--n-predict",
        "-c",
        "--ctx-size",
        "-t",
        "--threads",
        "-b",
        "--batch-size",
        "-s",
        "--seed",
        "--top-k",
        "--repeat-last-n",
        "--n-probs",
        "--temp",
        "--top-p",
        "--min-p",
        "--repeat-penalty",
        "--attention",
        "--kv-block",
        "--beams",
        "--length-penalty",
        "--draft",
        "--draft-n",
        "--lookup",
        "--n-parallel",
        "--trace-json",
        "--report",
        "--compare-model",
    };
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if (strcmp(a, flags[i]) == 0) return true;
    return false;
}

bool run_parse_args(int argc, char **argv, run_options *o, char *err, size_t errlen) {
    defaults(o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long long iv;
        double fv;
        // Flags without a value.
        if (is(a, "-h", "--help")) {
            o->help = true;
            return true;
        }
        if (is(a, "-cnv", "--chat") || is(a, "--conversation", NULL)) {
            o->chat = true;
            continue;
        }
        if (is(a, "--no-kv-cache", NULL)) {
            o->no_kv_cache = true;
            continue;
        }
        if (is(a, "--json", NULL)) {
            o->json = true;
            continue;
        }
        if (is(a, "--dump-graph", NULL)) {
            o->dump_graph = true;
            continue;
        }
        if (is(a, "-v", "--verbose")) {
            o->verbose = true;
            continue;
        }
        if (is(a, "--trace", NULL)) {
            o->trace = true;
            continue;
        }
        if (is(a, "--ignore-eos", NULL)) {
            o->ignore_eos = true;
            continue;
        }
        // Flags with a value.
        if (a[0] != '-') {
            snprintf(err, errlen, "unexpected argument '%s' (see --help)", a);
            return false;
        }
        if (!takes_value(a)) {
            snprintf(err, errlen, "unknown option '%s' (see --help)", a);
            return false;
        }
        if (i + 1 >= argc) {
            snprintf(err, errlen, "%s needs a value (see --help)", a);
            return false;
        }
        const char *v = argv[++i];
        if (is(a, "-m", "--model"))
            o->model = v;
        else if (is(a, "-p", "--prompt"))
            o->prompt = v;
        else if (is(a, "-f", "--file"))
            o->prompt_file = v;
        else if (is(a, "--prompt-ids", NULL))
            o->prompt_ids = v;
        else if (is(a, "--chat-template", NULL)) {
            if (mint_chat_from_name(v) == MINT_CHAT_UNKNOWN) {
                snprintf(err, errlen, "--chat-template expects zephyr, llama2 or chatml, got '%s'",
                         v);
                return false;
            }
            o->chat_template = v;
        } else if (is(a, "--chat-template-file", NULL))
            o->chat_template_file = v;
        else if (is(a, "--system", NULL))
            o->system = v;
        else if (is(a, "--kv-type", NULL)) {
            if (strcmp(v, "f16") == 0)
                o->kv_f16 = true;
            else if (strcmp(v, "f32") == 0)
                o->kv_f16 = false;
            else {
                snprintf(err, errlen, "--kv-type expects f32 or f16, got '%s'", v);
                return false;
            }
        } else if (is(a, "-n", "--n-predict")) {
            if (!cli_parse_int(a, v, -1, 1 << 24, &iv, err, errlen)) return false;
            o->n_predict = (int)iv;
        } else if (is(a, "-c", "--ctx-size")) {
            if (!cli_parse_int(a, v, 0, 1 << 20, &iv, err, errlen)) return false;
            o->n_ctx = (int)iv;
        } else if (is(a, "-t", "--threads")) {
            if (!cli_parse_int(a, v, 1, 256, &iv, err, errlen)) return false;
            o->n_threads = (int)iv;
        } else if (is(a, "-b", "--batch-size")) {
            if (!cli_parse_int(a, v, 1, 1 << 20, &iv, err, errlen)) return false;
            o->n_batch = (int)iv;
        } else if (is(a, "-s", "--seed")) {
            if (!cli_parse_int(a, v, -1, INT64_MAX, &iv, err, errlen)) return false;
            o->seed = iv;
        } else if (is(a, "--top-k", NULL)) {
            if (!cli_parse_int(a, v, 0, 1 << 30, &iv, err, errlen)) return false;
            o->top_k = (int)iv;
        } else if (is(a, "--repeat-last-n", NULL)) {
            if (!cli_parse_int(a, v, 0, 1 << 20, &iv, err, errlen)) return false;
            o->repeat_last_n = (int)iv;
        } else if (is(a, "--n-probs", NULL)) {
            if (!cli_parse_int(a, v, 0, 1000, &iv, err, errlen)) return false;
            o->n_probs = (int)iv;
        } else if (is(a, "--temp", NULL)) {
            if (!cli_parse_float(a, v, 0, 1e6, &fv, err, errlen)) return false;
            o->temp = (float)fv;
        } else if (is(a, "--top-p", NULL)) {
            if (!cli_parse_float(a, v, 0, 1, &fv, err, errlen)) return false;
            o->top_p = (float)fv;
        } else if (is(a, "--min-p", NULL)) {
            if (!cli_parse_float(a, v, 0, 1, &fv, err, errlen)) return false;
            o->min_p = (float)fv;
        } else if (is(a, "--attention", NULL)) {
            int k = mint_attention_from_name(v);
            if (k < 0) {
                snprintf(err, errlen, "--attention expects auto, naive, rowwise or flash, got '%s'",
                         v);
                return false;
            }
            o->attention = k;
        } else if (is(a, "--kv-block", NULL)) {
            if (!cli_parse_int(a, v, 1, 4096, &iv, err, errlen)) return false;
            o->kv_block = (int)iv;
        } else if (is(a, "--beams", NULL)) {
            if (!cli_parse_int(a, v, 1, 64, &iv, err, errlen)) return false;
            o->beams = (int)iv;
        } else if (is(a, "--length-penalty", NULL)) {
            if (!cli_parse_float(a, v, -10, 10, &fv, err, errlen)) return false;
            o->length_penalty = (float)fv;
        } else if (is(a, "--draft", NULL)) {
            o->draft = v;
        } else if (is(a, "--draft-n", NULL)) {
            if (!cli_parse_int(a, v, 1, 64, &iv, err, errlen)) return false;
            o->draft_n = (int)iv;
        } else if (is(a, "--lookup", NULL)) {
            if (!cli_parse_int(a, v, 1, 32, &iv, err, errlen)) return false;
            o->lookup = (int)iv;
        } else if (is(a, "--n-parallel", NULL)) {
            if (!cli_parse_int(a, v, 1, 256, &iv, err, errlen)) return false;
            o->n_parallel = (int)iv;
        } else if (is(a, "--trace-json", NULL)) {
            o->trace_json = v;
        } else if (is(a, "--report", NULL)) {
            o->report = v;
        } else if (is(a, "--compare-model", NULL)) {
            o->compare_model = v;
        } else if (is(a, "--repeat-penalty", NULL)) {
            if (!cli_parse_float(a, v, 1e-3, 1e3, &fv, err, errlen)) return false;
            o->repeat_penalty = (float)fv;
        } else {
            snprintf(err, errlen, "unknown option '%s' (see --help)", a);
            return false;
        }
    }
    if (!o->model) {
        snprintf(err, errlen, "no model given: use -m MODEL (see --help)");
        return false;
    }
    int sources = !!o->prompt + !!o->prompt_file + !!o->prompt_ids;
    if (sources > 1) {
        snprintf(err, errlen, "give only one of -p, -f and --prompt-ids");
        return false;
    }
    if (o->chat_template && o->chat_template_file) {
        snprintf(err, errlen, "give one of --chat-template and --chat-template-file");
        return false;
    }
    if (o->chat && o->prompt_ids) {
        snprintf(err, errlen, "--prompt-ids cannot be used with --chat");
        return false;
    }
    if (o->chat && o->no_kv_cache) {
        snprintf(err, errlen, "--no-kv-cache cannot be used with --chat");
        return false;
    }
    const int modes =
        !!o->beams + !!o->draft + !!o->lookup + !!o->n_parallel + !!o->chat + !!o->no_kv_cache;
    if (modes > 1) {
        snprintf(err, errlen,
                 "choose one of --beams, --draft, --lookup, --n-parallel, --chat, --no-kv-cache");
        return false;
    }
    if (o->json && (o->beams || o->draft || o->lookup || o->n_parallel)) {
        snprintf(err, errlen, "--json works with plain generation only");
        return false;
    }
    if ((o->trace || o->trace_json || o->report) && modes > 0) {
        snprintf(err, errlen, "--trace, --trace-json and --report work with plain generation only");
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
    return true;
}
