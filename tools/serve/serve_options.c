// serve_options.c - mint-serve's command line: its own flags, and llama-server's, so that a
// llama-server command line starts mint-serve unchanged. Each llama-server flag is honoured
// (the same meaning: -c is the whole context split over the slots, --temp a request's default,
// -hf a file of the Hugging Face cache) or accepted with one line saying what mint does instead
// (.note: -ngl on a CPU runtime); the few whose silent acceptance would mislead (TLS, LoRA,
// downloading) are refused with a line naming the way out.
#include "chat_arg.h"
#include <json-c/json.h>
#include "cli.h"
#include "serve.h"
#include "serve_options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F(member) OPT_FIELD(serve_config, member)

// In mint_chat_reasoning's and mint_reasoning_format's orders.
static const char *const reasoning_modes[] = {"auto", "on", "off", NULL};
static const char *const reasoning_formats[] = {"auto", "none", "deepseek", NULL};

static const char *const kv_types[] = {"f32", "f16", "q8_0", "q4_0", NULL}; // mint_kv_type order

#define IGNORED_SAMPLER "ignored: not a step of mint's sampler chain"
#define IGNORED_CPU     "ignored: mint-serve's threads take the CPUs the system gives them"
#define IGNORED_SPEC    "ignored: mint-serve decodes without a draft (mint-run --draft has one)"
#define IGNORED_MEDIA   "ignored: mint-serve takes text only"
#define IGNORED_ROPE    "ignored: mint takes RoPE and YaRN settings from the model file"
#define IGNORED_LOG     "ignored: mint-serve logs one line per event on stderr (-v: per request)"

// A llama-server flag with a value mint does not use, and one without a value.
#define NOTE_V(flags, what)                                                                        \
    { flags, OPT_STRING, .arg = "V", .note = what }
#define NOTE_F(flags, what)                                                                        \
    { flags, OPT_FLAG, .note = what }

static const opt opts[] = {
    {.kind = OPT_SECTION, .help = "model:"},
    {"-m --model", OPT_STRING, F(model_path), "FILE",
     .help = "model (GGUF, safetensors, Hugging Face folder)"},
    {"-hf -hfr --hf-repo", OPT_STRING, F(hf_repo), "OWNER/NAME[:QUANT]",
     .help = "a model of the Hugging Face cache (LLAMA_CACHE, HF_HOME, ...;\n"
             "the file named by :QUANT, Q4_K_M if none; never downloaded)"},
    {"-hff --hf-file", OPT_STRING, F(hf_file), "FILE", .help = "the file of -hf's repository"},
    {"-a --alias", OPT_STRING, F(alias), "NAME[,NAME...]",
     .help = "the model's names (answers use the first in byte order)"},
    {"--tags", OPT_STRING, F(tags), "TAG[,TAG...]", .help = "tags /v1/models lists"},
    {.kind = OPT_SECTION, .help = "server:"},
    {"--host", OPT_STRING, F(host), "ADDR", .def = "127.0.0.1",
     .help = "IPv4 address to listen on"},
    {"--port", OPT_INT, F(port), "N", 0, 65535, .def = "8080",
     .help = "port (0 = any free one, printed)"},
    {"-np --parallel", OPT_INT, F(parallel), "N", -1, 256, .def = "4",
     .help = "slots decoded together (-1: 4)"},
    {"--queue", OPT_INT, F(queue), "N", 0, 100000, .def = "64",
     .help = "requests waiting beyond the slots"},
    {"-c --ctx-size", OPT_INT, F(ctx_size), "N", 0, 1 << 24,
     .help = "positions of the context, split over the slots as\n"
             "llama-server splits it (0: the model's, at most 4096 a slot)"},
    {"-kvu --kv-unified", OPT_FLAG, F(kv_unified),
     .help = "every slot may use the whole -c (one shared KV pool)"},
    {"-no-kvu --no-kv-unified", OPT_FLAG, F(no_kv_unified), .help = "-c split over the slots"},
    {"-t --threads", OPT_INT, F(n_threads), "N", 1, 256,
     .help = "threads (default: all online CPUs)"},
    {"--max-tokens", OPT_INT, F(max_tokens), "N", 1, 1 << 20, .def = "4096",
     .help = "most tokens one request may generate"},
    {"--max-body", OPT_INT, F(max_body), "N", 64, 1 << 30, .def = "1048576",
     .help = "largest request body in bytes"},
    {"--max-header", OPT_INT, F(max_header), "N", 1024, 1 << 24, .def = "32768",
     .help = "memory for a request's headers in bytes"},
    {"--max-connections", OPT_INT, F(max_connections), "N", 1, 100000, .def = "1024",
     .help = "connections at once (each an idle thread while it waits)"},
    {"-to --timeout", OPT_FLOAT, F(timeout), "S", .fmin = 0.1, .fmax = 86400, .def = "600",
     .help = "seconds a request may take"},
    {"--drain", OPT_FLOAT, F(drain), "S", .fmin = 0.1, .fmax = 86400, .def = "30",
     .help = "seconds in-flight requests get at shutdown"},
    {"--api-key", OPT_STRING, F(api_key), "KEY[,KEY...]",
     .help = "require Authorization: Bearer KEY (or X-Api-Key);\n"
             "not for / and /health"},
    {"--api-key-file", OPT_STRING, F(api_key_file), "FILE", .help = "API keys, one per line"},
    {"--cors-origins", OPT_STRING, F(cors_origins), "LIST",
     .help = "origins a browser page may call from (',' separated; default *,\n"
             "or localhost with --tools)"},
    {"--tools", OPT_STRING, F(tools), "all|NAME[,NAME...]",
     .help = "DANGEROUS, off by default: let HTTP clients run built-in agent\n"
             "tools (POST /tools) that read and write files and run shell\n"
             "commands as this user: read_file, file_glob_search, grep_search,\n"
             "exec_shell_command, write_file, edit_file, get_info; --cors-origins\n"
             "becomes localhost unless given; never on an untrusted network"},
    {"--tools-runtime", OPT_STRING, F(tools_runtime), "RUNTIME",
     .help = "run --tools in docker-container:ID, podman-container:ID or\n"
             "ssh:TARGET (key-based) instead of on this host"},
    {"--ui-mcp-proxy --webui-mcp-proxy", OPT_FLAG, F(ui_mcp_proxy),
     .help = "DANGEROUS, off by default: GET/POST /cors-proxy?url=URL forwards\n"
             "requests to any URL this host reaches (the web UI's MCP proxy)"},
    {"--no-ui-mcp-proxy --no-webui-mcp-proxy", OPT_FLAG, F(no_ui_mcp_proxy),
     .help = "no /cors-proxy (the default)"},
    {"--slots", OPT_FLAG, F(slots), .help = "answer GET /slots (the default)"},
    {"--no-slots", OPT_FLAG, F(no_slots), .help = "no /slots endpoint"},
    {"--props", OPT_FLAG, F(props), .help = "let POST /props change settings"},
    {"--no-ui --no-webui", OPT_FLAG, F(no_ui), .help = "no chat page at /"},
    {"--cache-ram -cram", OPT_INT, F(cache_ram), "MIB", -1, 1 << 24, .def = "1024",
     .help = "memory for cached prompts beyond the slots, MiB\n(0: none; -1: 1024)"},
    {"--kv-type", OPT_ENUM, F(kv_type), .names = kv_types, .def = "f32",
     .help = "KV cache storage (q8_0, q4_0: quantized rows, as llama.cpp's quantized cache)"},
    {"--kv-block", OPT_INT, F(kv_block), "N", 1, 4096,
     .help = "positions per KV block (default 32)"},
    {"--slot-save-path", OPT_STRING, F(slot_save_path), "DIR",
     .help = "where POST /slots/N?action=save|restore keeps slot files (off without it)"},
    {"-b --batch-size", OPT_INT, F(n_batch), "N", 1, 1 << 16,
     .help = "tokens evaluated per step, over all slots (default 512): a long prompt\n"
             "is evaluated this many at a time, between the other slots' tokens"},
    {"--spm-infill", OPT_FLAG, F(spm_infill),
     .help = "/infill puts the suffix before the prefix (suffix-prefix-middle order)"},
    LOAD_OPTS(serve_config, load),
    {"-v --verbose --log-verbose", OPT_FLAG, F(verbose), .help = "a line per request on stderr"},
    {.kind = OPT_SECTION, .help = "a request's defaults:"},
    {"-n --predict --n-predict", OPT_INT, F(n_predict), "N", -1, 1 << 24, .def = "-1",
     .help = "tokens to generate (-1: until the end or the context)"},
    {"--temp --temperature", OPT_FLOAT, F(sampling.temp), "F", .fmin = 0,
     .fmax = MINT_SAMPLER_TEMP_MAX, .def = "0.8", .help = "temperature (0: greedy)"},
    {"--top-k", OPT_INT, F(sampling.top_k), "N", 0, MINT_SAMPLER_TOP_K_MAX, .def = "40",
     .help = "keep the k most likely (0: all)"},
    {"--top-p", OPT_FLOAT, F(sampling.top_p), "F", .fmin = 0, .fmax = 1, .def = "0.95",
     .help = "nucleus"},
    {"--min-p", OPT_FLOAT, F(sampling.min_p), "F", .fmin = 0, .fmax = 1, .def = "0.05",
     .help = "drop tokens below min-p times the best"},
    {"--repeat-penalty", OPT_FLOAT, F(sampling.repeat_penalty), "F",
     .fmin = MINT_SAMPLER_PENALTY_MIN, .fmax = MINT_SAMPLER_PENALTY_MAX, .def = "1",
     .help = "penalty on recent tokens (1: off)"},
    {"--repeat-last-n", OPT_INT, F(sampling.repeat_last_n), "N", 0, MINT_SAMPLER_LAST_N_MAX,
     .def = "64", .help = "recent tokens the penalty sees"},
    {"-s --seed", OPT_INT, F(seed), "N", -1, INT64_MAX, .def = "-1",
     .help = "seed (-1: a new one per request)"},
    {"--ignore-eos", OPT_FLAG, F(ignore_eos), .help = "go on past end-of-generation tokens"},
    {.kind = OPT_SECTION, .help = "chat:"},
    {"--chat-template", OPT_STRING, F(chat_template), "NAME", .names = cli_chat_names,
     .help = "the chat template (default: from the model): one of llama.cpp's\n"
             "built-in names, or a Jinja template's text"},
    {"--chat-template-file", OPT_STRING, F(chat_template_file), "FILE",
     .help = "a Jinja chat template from a file"},
    {"--chat-template-kwargs", OPT_STRING, F(chat_template_kwargs), "JSON",
     .help = "variables for the template, a JSON object ({\"enable_thinking\": false})"},
    {"-rea --reasoning", OPT_ENUM, F(reasoning), "auto|on|off", .names = reasoning_modes,
     .def = "auto", .help = "whether the model reasons (the template's enable_thinking)"},
    {"--reasoning-format", OPT_ENUM, F(reasoning_format), "FMT", .names = reasoning_formats,
     .def = "auto",
     .help = "reasoning into reasoning_content (auto, deepseek) or\n"
             "left in the content (none)"},
    {.kind = OPT_SECTION,
     .help = "router mode (no -m and no -hf: a server per model, started on demand):"},
    {"--models-dir", OPT_STRING, F(models_dir), "DIR",
     .help = "serve the .gguf files of DIR (and of its folders) too"},
    {"--models-preset", OPT_STRING, F(models_preset), "FILE",
     .help = "an INI file of models and their flags ([name], key = value)"},
    {"--models-max", OPT_INT, F(models_max), "N", 0, 4096, .def = "4",
     .help = "models loaded at once (0: no limit); the least recently\n"
             "used idle one makes room"},
    {"--models-autoload", OPT_FLAG, F(models_autoload),
     .help = "a request starts its model (the default)"},
    {"--no-models-autoload", OPT_FLAG, F(no_models_autoload),
     .help = "only POST /models/load starts a model"},
    {.kind = OPT_SECTION, .help = "MCP servers (their tools at GET/POST /tools):"},
    {"--mcp-servers-config", OPT_STRING, F(mcp_config), "FILE",
     .help = "MCP servers to run, from a JSON file: {\"mcpServers\": {NAME:\n"
             "{\"command\", \"args\", \"env\", \"cwd\", \"timeout_ms\"}}} (only commands\n"
             "you trust: they run as mint-serve's user)"},
    {"--mcp-servers-json", OPT_STRING, F(mcp_json), "JSON",
     .help = "the same, inline (added after the file's)"},
    OPT_VERSION_ROW,
    {"-h --help", OPT_HELP, .help = "this help"},
    COMPAT_SECTION,
    {"--metrics", OPT_FLAG, F(metrics), .note = "noted: /metrics is always on in mint-serve"},
    {"--ui --webui", OPT_FLAG, .note = "noted: the chat page at / is on by default"},
    {"--jinja", OPT_FLAG, .note = "noted: mint renders every chat template with its Jinja engine"},
    {"--no-jinja", OPT_FLAG, F(no_jinja),
     .note = "noted: mint renders every chat template with its Jinja engine (and\n"
             "--chat-template takes only built-in names and Jinja text)"},
    {"-fa --flash-attn", OPT_ENUM, .names = compat_auto_off_on, .bare = "on",
     .note = "ignored: mint-serve picks the attention algorithm per batch"},
    COMPAT_CACHE_OPTS(serve_config, compat),
    COMPAT_GPU_OPTS,
    COMPAT_NO_WARMUP_OPT,
    COMPAT_LOG_DISABLE_OPT,
    NOTE_F("--offline", "noted: mint never downloads"),
    NOTE_V("-hft --hf-token", "ignored: mint never downloads"),
    NOTE_V("-tb --threads-batch", "ignored: one thread count (-t) for prompts and generation"),
    NOTE_V("-C --cpu-mask", IGNORED_CPU),
    NOTE_V("-Cr --cpu-range", IGNORED_CPU),
    NOTE_V("--cpu-strict", IGNORED_CPU),
    NOTE_V("--prio", IGNORED_CPU),
    NOTE_V("--poll", IGNORED_CPU),
    NOTE_V("-Cb --cpu-mask-batch", IGNORED_CPU),
    NOTE_V("-Crb --cpu-range-batch", IGNORED_CPU),
    NOTE_V("--cpu-strict-batch", IGNORED_CPU),
    NOTE_V("--prio-batch", IGNORED_CPU),
    NOTE_V("--poll-batch", IGNORED_CPU),
    NOTE_V("--numa", IGNORED_CPU),
    NOTE_V("-ub --ubatch-size", "ignored: mint-serve batches every step itself"),
    NOTE_V("--keep", "ignored: mint does not shift the context (a full one ends the reply)"),
    NOTE_F("--context-shift", "ignored: a full context ends the reply (finish_reason length)"),
    NOTE_F("--no-context-shift", "noted: a full context ends the reply, as this asks"),
    NOTE_F("--swa-full", "noted: mint keeps every position of sliding-window layers"),
    NOTE_V("-ctxcp --ctx-checkpoints --swa-checkpoints", "ignored: mint needs no checkpoints"),
    NOTE_V("-cms --checkpoint-min-step", "ignored: mint needs no checkpoints"),
    NOTE_V("--kv-unified-per-slot", "ignored: use -c and -kvu"),
    NOTE_F("--cache-idle-slots", "noted: finished prompts stay cached (--cache-ram)"),
    NOTE_F("--no-cache-idle-slots", "ignored: finished prompts stay cached (--cache-ram 0: not)"),
    NOTE_F("--cache-prompt", "noted: prompts reuse the cache"),
    NOTE_F("--no-cache-prompt", "ignored: prompts reuse the cache (same results either way)"),
    NOTE_V("--cache-reuse", "ignored: mint reuses a prompt's cached prefix, not shifted chunks"),
    NOTE_F("-cb --cont-batching", "noted: mint-serve always batches continuously"),
    NOTE_F("-nocb --no-cont-batching", "ignored: mint-serve always batches continuously"),
    NOTE_F("--perf", IGNORED_LOG),
    NOTE_F("--no-perf", IGNORED_LOG),
    NOTE_V("-p --prompt", "ignored: prompts come with the requests"),
    NOTE_V("-f --file", "ignored: prompts come with the requests"),
    NOTE_V("-bf --binary-file", "ignored: prompts come with the requests"),
    NOTE_F("-e --escape", "ignored: prompts come with the requests"),
    NOTE_F("--no-escape", "ignored: prompts come with the requests"),
    NOTE_V("-r --reverse-prompt", "ignored: requests give their own 'stop'"),
    NOTE_F("-sp --special", "ignored: special tokens are not text in mint-serve's replies"),
    NOTE_F("--warmup", "ignored: mint does no warm-up run"),
    NOTE_V("--samplers", IGNORED_SAMPLER),
    NOTE_V("--sampler-seq --sampling-seq", IGNORED_SAMPLER),
    NOTE_V("--top-nsigma --top-n-sigma", IGNORED_SAMPLER),
    NOTE_V("--xtc-probability", IGNORED_SAMPLER),
    NOTE_V("--xtc-threshold", IGNORED_SAMPLER),
    NOTE_V("--typical --typical-p", IGNORED_SAMPLER),
    NOTE_V("--presence-penalty", IGNORED_SAMPLER),
    NOTE_V("--frequency-penalty", IGNORED_SAMPLER),
    NOTE_V("--dry-multiplier", IGNORED_SAMPLER),
    NOTE_V("--dry-base", IGNORED_SAMPLER),
    NOTE_V("--dry-allowed-length", IGNORED_SAMPLER),
    NOTE_V("--dry-penalty-last-n", IGNORED_SAMPLER),
    NOTE_V("--dry-sequence-breaker", IGNORED_SAMPLER),
    NOTE_V("--adaptive-target", IGNORED_SAMPLER),
    NOTE_V("--adaptive-decay", IGNORED_SAMPLER),
    NOTE_V("--dynatemp-range", IGNORED_SAMPLER),
    NOTE_V("--dynatemp-exp", IGNORED_SAMPLER),
    NOTE_V("--mirostat", IGNORED_SAMPLER),
    NOTE_V("--mirostat-lr", IGNORED_SAMPLER),
    NOTE_V("--mirostat-ent", IGNORED_SAMPLER),
    NOTE_V("-l --logit-bias", "ignored: give logit_bias in a request"),
    NOTE_F("-bs --backend-sampling", "ignored: mint samples on the CPU"),
    NOTE_V("--grammar", "ignored: give 'grammar' in a request"),
    NOTE_V("--grammar-file", "ignored: give 'grammar' in a request"),
    NOTE_V("-j --json-schema", "ignored: give 'json_schema' in a request"),
    NOTE_V("-jf --json-schema-file", "ignored: give 'json_schema' in a request"),
    NOTE_V("--pooling", "ignored: mint-serve has no embedding endpoint"),
    NOTE_F("--embedding --embeddings", "ignored: mint-serve has no embedding endpoint"),
    NOTE_F("--rerank --reranking", "ignored: mint-serve has no reranking endpoint"),
    NOTE_V("--embd-normalize", "ignored: mint-serve has no embedding endpoint"),
    NOTE_V("--rope-scaling", IGNORED_ROPE),
    NOTE_V("--rope-scale", IGNORED_ROPE),
    NOTE_V("--rope-freq-base", IGNORED_ROPE),
    NOTE_V("--rope-freq-scale", IGNORED_ROPE),
    NOTE_V("--yarn-orig-ctx", IGNORED_ROPE),
    NOTE_V("--yarn-ext-factor", IGNORED_ROPE),
    NOTE_V("--yarn-attn-factor", IGNORED_ROPE),
    NOTE_V("--yarn-beta-slow", IGNORED_ROPE),
    NOTE_V("--yarn-beta-fast", IGNORED_ROPE),
    NOTE_F("-kvo --kv-offload", COMPAT_CPU_ONLY),
    NOTE_F("--repack", "noted: mint repacks quantized weights at load"),
    NOTE_F("-nr --no-repack", "ignored: mint repacks quantized weights at load"),
    NOTE_F("--no-host", COMPAT_CPU_ONLY),
    NOTE_V("-dt --defrag-thold", "ignored: mint's KV cache is paged"),
    NOTE_V("-mm --mmproj", IGNORED_MEDIA),
    NOTE_V("-mmu --mmproj-url", IGNORED_MEDIA),
    NOTE_F("--mmproj-auto", IGNORED_MEDIA),
    NOTE_F("--no-mmproj --no-mmproj-auto", IGNORED_MEDIA),
    NOTE_F("--mmproj-offload", IGNORED_MEDIA),
    NOTE_F("--no-mmproj-offload", IGNORED_MEDIA),
    NOTE_V("--image-min-tokens", IGNORED_MEDIA),
    NOTE_V("--image-max-tokens", IGNORED_MEDIA),
    NOTE_V("--mtmd-batch-max-tokens", IGNORED_MEDIA),
    NOTE_V("--video-fps", IGNORED_MEDIA),
    NOTE_V("--video-timestamp-interval", IGNORED_MEDIA),
    NOTE_V("--video-ffmpeg-dir", IGNORED_MEDIA),
    NOTE_V("--media-path", IGNORED_MEDIA),
    NOTE_V("--rpc", COMPAT_CPU_ONLY),
    NOTE_F("--mmap", "noted: weights are mapped (--no-mmap: read)"),
    NOTE_F("-dio --direct-io", "ignored: mint maps or reads the file"),
    NOTE_F("-ndio --no-direct-io", "noted: mint maps or reads the file"),
    NOTE_V("-lm --load-mode", "ignored: mint maps or reads the file (--no-mmap)"),
    NOTE_V("-lzm --lazy-mode", "ignored: mint maps or reads the file (--no-mmap)"),
    NOTE_V("-dev --device", COMPAT_CPU_ONLY),
    NOTE_F("--list-devices", COMPAT_CPU_ONLY),
    NOTE_V("-ot --override-tensor", COMPAT_CPU_ONLY),
    NOTE_F("-cmoe --cpu-moe", COMPAT_CPU_ONLY),
    NOTE_V("-ncmoe --n-cpu-moe", COMPAT_CPU_ONLY),
    NOTE_V("-ncffn --n-cpu-ffn", COMPAT_CPU_ONLY),
    NOTE_V("-fit --fit", COMPAT_CPU_ONLY),
    NOTE_V("-fitt --fit-target", COMPAT_CPU_ONLY),
    NOTE_V("-fitc --fit-ctx", COMPAT_CPU_ONLY),
    NOTE_F("--check-tensors", "noted: mint checks tensor shapes and sizes at load"),
    NOTE_V("--override-kv", "ignored: mint reads the file's metadata as written"),
    NOTE_F("--op-offload", COMPAT_CPU_ONLY),
    NOTE_F("--no-op-offload", COMPAT_CPU_ONLY),
    NOTE_F("--reuse-port", "ignored: one mint-serve process per port (deploy/nginx.conf)"),
    NOTE_V("--path", "ignored: the page at / is built in"),
    NOTE_V("--api-prefix", "ignored: mint-serve answers at / (a proxy may add a prefix)"),
    NOTE_V("--cors-methods", "noted: preflights allow GET, POST, DELETE and OPTIONS"),
    NOTE_V("--cors-headers", "noted: preflights allow the headers they ask for"),
    NOTE_F("--cors-credentials", "ignored: credentials are the API key's"),
    NOTE_F("--no-cors-credentials", "noted: credentials are the API key's"),
    NOTE_V("--ui-config --webui-config", "ignored: the page has no settings file"),
    NOTE_V("--ui-config-file --webui-config-file", "ignored: the page has no settings file"),
    NOTE_F("-ag --agent", "ignored: give --tools all and --ui-mcp-proxy (both dangerous)"),
    NOTE_F("-no-ag --no-agent", "noted: tools and the proxy are off unless asked for"),
    NOTE_V("--sse-ping-interval", "ignored: streams send every token as it comes"),
    NOTE_V("--threads-http", "ignored: one thread per connection (--max-connections)"),
    NOTE_V("--reasoning-effort", "ignored: give reasoning_effort in a request"),
    NOTE_V("--reasoning-budget", "ignored: mint does not cut a reply's thinking short"),
    NOTE_V("--reasoning-budget-message", "ignored: mint does not cut a reply's thinking short"),
    NOTE_F("--reasoning-preserve", "ignored: the template decides what earlier thinking stays"),
    NOTE_F("--no-reasoning-preserve", "noted: the template decides what earlier thinking stays"),
    NOTE_F("--skip-chat-parsing", "ignored: replies are parsed by the template's family"),
    NOTE_F("--no-skip-chat-parsing", "noted: replies are parsed by the template's family"),
    NOTE_F("--prefill-assistant", "noted: a last assistant message is continued"),
    NOTE_F("--no-prefill-assistant", "ignored: a last assistant message is continued"),
    NOTE_V("-sps --slot-prompt-similarity", "ignored: a request takes the slot with its prefix"),
    NOTE_V("--sleep-idle-seconds", "ignored: mint-serve keeps the model loaded"),
    NOTE_F("--log-file", IGNORED_LOG),
    NOTE_V("--log-prompts-dir", IGNORED_LOG),
    NOTE_F("--log-colors", IGNORED_LOG),
    NOTE_V("-lv --verbosity --log-verbosity", IGNORED_LOG),
    NOTE_F("--log-prefix", IGNORED_LOG),
    NOTE_F("--no-log-prefix", IGNORED_LOG),
    NOTE_F("--log-timestamps", IGNORED_LOG),
    NOTE_F("--no-log-timestamps", IGNORED_LOG),
    NOTE_V("-lcs --lookup-cache-static", IGNORED_SPEC),
    NOTE_V("-lcd --lookup-cache-dynamic", IGNORED_SPEC),
    NOTE_V("-md --model-draft --spec-draft-model", IGNORED_SPEC),
    NOTE_V("-hfd -hfrd --hf-repo-draft --spec-draft-hf", IGNORED_SPEC),
    NOTE_V("--spec-type", IGNORED_SPEC),
    NOTE_V("--spec-draft-n-max", IGNORED_SPEC),
    NOTE_V("--spec-draft-n-min", IGNORED_SPEC),
    NOTE_V("--spec-synth-len", IGNORED_SPEC),
    NOTE_V("--spec-synth-rates", IGNORED_SPEC),
    NOTE_V("--spec-draft-p-split --draft-p-split", IGNORED_SPEC),
    NOTE_V("--spec-draft-p-min --draft-p-min", IGNORED_SPEC),
    NOTE_V("-td --threads-draft --spec-draft-threads", IGNORED_SPEC),
    NOTE_V("-ngld --gpu-layers-draft --n-gpu-layers-draft --spec-draft-ngl", IGNORED_SPEC),
    NOTE_V("-ctkd --cache-type-k-draft --spec-draft-type-k", IGNORED_SPEC),
    NOTE_V("-ctvd --cache-type-v-draft --spec-draft-type-v", IGNORED_SPEC),
    NOTE_V("-devd --device-draft --spec-draft-device", IGNORED_SPEC),
};

// Refused rather than noted: accepting them silently would leave the user with something else
// than asked (a plain-text server where TLS was wanted, a model without its adapter, a download).
static const struct {
    const char *flag, *why;
} refused[] = {
    {"--ssl-key-file", "mint-serve has no TLS: put it behind nginx (deploy/nginx.conf)"},
    {"--ssl-cert-file", "mint-serve has no TLS: put it behind nginx (deploy/nginx.conf)"},
    {"--lora", "mint has no LoRA adapters: merge the adapter into the model first"},
    {"--lora-scaled", "mint has no LoRA adapters: merge the adapter into the model first"},
    {"--control-vector", "mint has no control vectors"},
    {"--control-vector-scaled", "mint has no control vectors"},
    {"-mu", "mint does not download models: download it, then give it with -m"},
    {"--model-url", "mint does not download models: download it, then give it with -m"},
};

bool serve_refused_flag(int argc, char **argv, char *err, size_t errlen) {
    for (int i = 1; i < argc; i++)
        for (size_t k = 0; k < sizeof refused / sizeof *refused; k++)
            if (!strcmp(argv[i], refused[k].flag) ||
                (!strncmp(argv[i], "--", 2) && strstr(argv[i], "-default") &&
                 (strstr(argv[i], "--fim-") || strstr(argv[i], "--gpt-oss-") ||
                  strstr(argv[i], "--vision-") || strstr(argv[i], "--embd-") ||
                  !strcmp(argv[i], "--spec-default")))) {
                snprintf(err, errlen, "%s: %s", argv[i],
                         !strcmp(argv[i], refused[k].flag)
                             ? refused[k].why
                             : "a preset that downloads a model: mint does not download; give "
                               "the model with -m");
                return true;
            }
    return false;
}

// Splits ',' separated keys (and a key file's lines) into cfg->api_keys.
static bool add_keys(serve_config *c, const char *list, char sep, char *err, size_t n) {
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, sep == ',' ? "," : "\r\n");
        while (k > 0 && (p[k - 1] == ' ' || p[k - 1] == '\t')) k--;
        const char *start = p;
        while (k > 0 && (*start == ' ' || *start == '\t')) start++, k--;
        if (k > 0) {
            if (k > 512) {
                snprintf(err, n, "an API key is longer than 512 bytes");
                return false;
            }
            char **keys = realloc(c->api_keys, (size_t)(c->n_api_keys + 1) * sizeof *keys);
            if (!keys || !(keys[c->n_api_keys] = strndup(start, k))) {
                if (keys) c->api_keys = keys;
                snprintf(err, n, "out of memory");
                return false;
            }
            c->api_keys = keys;
            c->n_api_keys++;
        }
        p += strcspn(p, sep == ',' ? "," : "\r\n");
        while (*p == ',' || *p == '\r' || *p == '\n') p++;
    }
    return true;
}

// Also folds llama-server's -ctk and -ctv into --kv-type and reads the API keys (-hf is looked up
// in the cache by mint-serve's main: a missing file is not a usage error).
static bool check(void *options, char *err, size_t n) {
    serve_config *c = options;
    if (c->model_path && c->hf_repo) {
        snprintf(err, n, "give only one of -m and -hf");
        return false;
    }
    if (c->hf_file && !c->hf_repo) {
        snprintf(err, n, "--hf-file needs -hf OWNER/NAME (the repository it is in)");
        return false;
    }
    if (c->no_ui_mcp_proxy) c->ui_mcp_proxy = false;
    // No model: router mode (tools/serve/models.h).
    if ((c->model_path || c->hf_repo) && (c->models_dir || c->models_preset)) {
        snprintf(err, n, "--models-dir and --models-preset are for router mode (no -m, no -hf)");
        return false;
    }
    if (c->api_key && !*c->api_key) {
        snprintf(err, n, "--api-key must not be empty");
        return false;
    }
    if (c->chat_template && c->chat_template_file) {
        snprintf(err, n, "give only one of --chat-template and --chat-template-file");
        return false;
    }
    // With Jinja on (llama-server's default; --no-jinja turns it off) a value that is no name is a
    // template, even without Jinja markup (it renders as itself).
    if (c->chat_template && !cli_chat_check(&c->chat_template, !c->no_jinja, err, n)) return false;
    if (c->chat_template_kwargs) {
        json_object *o = json_tokener_parse(c->chat_template_kwargs);
        const bool obj = o && json_object_is_type(o, json_type_object);
        json_object_put(o);
        if (!obj) {
            snprintf(err, n, "--chat-template-kwargs must be a JSON object");
            return false;
        }
    }
    if (c->parallel == 0) {
        snprintf(err, n, "--parallel must be at least 1 (or -1: 4 slots)");
        return false;
    }
    if (c->parallel < 0) c->parallel = 4, c->kv_unified = !c->no_kv_unified;
    if (c->cache_ram < 0) c->cache_ram = 1024;
    if (c->api_key && !add_keys(c, c->api_key, ',', err, n)) return false;
    if (c->api_key_file) {
        size_t len;
        char msg[600];
        char *text = cli_read_file(c->api_key_file, &len, msg, sizeof msg);
        if (!text) {
            snprintf(err, n, "--api-key-file: %s", msg);
            return false;
        }
        const bool ok = add_keys(c, text, '\n', err, n);
        free(text);
        if (!ok) return false;
        if (c->n_api_keys == 0) {
            snprintf(err, n, "--api-key-file %s holds no key", c->api_key_file);
            return false;
        }
    }
    // Tools run commands for whoever calls: a page of another site must not (llama-server's rule).
    if (!c->cors_origins)
        c->cors_origins = c->tools || c->mcp_config || c->mcp_json ? "localhost" : "*";
    return compat_fold(&c->compat, NULL, &c->kv_type, err, n);
}

const opt_program serve_program = {
    .name = SERVE_TOOL,
    .usage = "mint-serve -m MODEL [options]\n"
             "       mint-serve -hf OWNER/NAME[:QUANT] [--hf-file FILE] [options]\n"
             "       mint-serve [--models-dir DIR] [--models-preset FILE] [options]  (router mode)",
    .opts = opts,
    .n_opts = sizeof opts / sizeof *opts,
    .check = check,
};

const char *serve_config_name(serve_config *c, const char *path) {
    static char first[256];
    if (!c->alias) {
        const char *slash = strrchr(path, '/');
        return slash ? slash + 1 : path;
    }
    // The first alias in byte order (llama-server keeps them in a sorted set).
    first[0] = '\0';
    for (const char *p = c->alias; *p;) {
        const size_t n = strcspn(p, ",");
        if (n && n < sizeof first &&
            (!first[0] || strncmp(p, first, n) < 0 ||
             (strncmp(p, first, n) == 0 && strlen(first) > n)))
            snprintf(first, sizeof first, "%.*s", (int)n, p);
        p += n + (p[n] == ',');
    }
    return first[0] ? first : c->alias;
}

void serve_config_slots(serve_config *c, int n_ctx_train) {
    const int model = n_ctx_train > 0 && n_ctx_train < 4096 ? n_ctx_train : 4096;
    if (c->ctx_size == 0)
        c->n_ctx = model; // llama-server takes the model's whole context; mint caps a slot
    else if (c->kv_unified)
        c->n_ctx = c->ctx_size;
    else
        c->n_ctx = c->ctx_size / c->parallel > 0 ? c->ctx_size / c->parallel : 1;
}

void serve_config_free(serve_config *c) {
    for (int i = 0; i < c->n_api_keys; i++) free(c->api_keys[i]);
    free(c->api_keys);
    c->api_keys = NULL;
    c->n_api_keys = 0;
}
