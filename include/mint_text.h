// mint_text.h - text in mint's public API: tokens (text to ids and back), samplers, logits to
// text (log-probabilities, the k most likely tokens, the generation step), chat templates, and
// JSON Schemas to grammars.
// Included by mint.h, whose handles, statuses and conventions it uses; a program includes
// mint.h only.
#ifndef MINT_TEXT_H
#define MINT_TEXT_H

#ifndef MINT_H
#error "include mint.h, which includes this header after the types it uses"
#endif

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------------------------------------
// Tokens: text to ids and back, by the model's vocabulary

// Tokenizes `len` bytes of text. add_special adds BOS/EOS as the vocabulary asks; parse_special
// turns control-token text such as "</s>" into the token. Writes up to cap ids; *n_out gets the
// number of tokens, and MINT_E_LIMIT is returned when cap is too small (call again).
MINT_API mint_status mint_tokenize(const mint_model *m, const char *text, size_t len,
                                   bool add_special, bool parse_special, int32_t *ids, size_t cap,
                                   size_t *n_out, mint_err *err);
// The bytes a token stands for (byte tokens become their byte; control tokens are empty unless
// `special`). Writes at most cap bytes (not NUL-terminated) and returns the length wanted.
MINT_API size_t mint_token_to_piece(const mint_model *m, int32_t id, bool special, char *buf,
                                    size_t cap);
// The token's vocabulary text as stored ("▁Once", "<0x0A>"); NULL for an invalid id.
MINT_API const char *mint_token_text(const mint_model *m, int32_t id);
// Whether a token ends generation (EOS, or other end-of-generation tokens).
MINT_API bool mint_token_is_eog(const mint_model *m, int32_t id);

// ---------------------------------------------------------------------------------------------
// Samplers: a chain over the logits
//
// Order: an attached grammar's mask (mint_sampler_set_grammar) -> repetition penalty (last
// repeat_last_n tokens) -> top-k -> top-p -> min-p -> temperature -> draw from the softmax with
// the seeded RNG. temp <= 0 is greedy argmax (after the penalty); the lowest id wins a tie.

typedef struct mint_sampler_params {
    float temp;            // temperature; <= 0 means argmax (default 0.8)
    int32_t top_k;         // keep the k most likely; <= 0 keeps all (default 40)
    float top_p;           // keep the smallest set with probability >= top_p; 1 = off (0.95)
    float min_p;           // drop tokens below min_p * p(max); 0 = off (default 0.05)
    float repeat_penalty;  // divide positive / multiply negative logits of recent tokens (1.0)
    int32_t repeat_last_n; // how many recent tokens the penalty looks at (default 64)
    uint64_t seed;         // RNG seed (default 0xC0FFEE)
} mint_sampler_params;

MINT_API mint_sampler_params mint_sampler_default_params(void);

// The bounds of the values a user may ask for (mint_sampler_params_check); the programs' option
// tables read them from here. Doubles, not floats: a flag's "0.001" parses to the double 0.001,
// which is below the float 1e-3f widened (0.0010000000475), and must still be accepted.
#define MINT_SAMPLER_TEMP_MAX    1e6       // temp in [0, MAX]
#define MINT_SAMPLER_TOP_K_MAX   (1 << 30) // top_k in [0, MAX]
#define MINT_SAMPLER_PENALTY_MIN 1e-3      // repeat_penalty in [MIN, MAX]
#define MINT_SAMPLER_PENALTY_MAX 1e3
#define MINT_SAMPLER_LAST_N_MAX  (1 << 20) // repeat_last_n in [0, MAX]

// Whether p holds values a user may ask for, the ranges mint-run accepts (mint-serve's are within
// them): temp in [0, 1000000] (0 is greedy), top_k in [0, 2^30] (0 keeps all), top_p in (0, 1],
// min_p in [0, 1], repeat_penalty in [0.001, 1000], repeat_last_n in [0, 2^20]. MINT_E_ARG names
// the first value outside its range and the range. Front ends call it on what a user gave;
// mint_sampler_create itself also takes temp < 0 (greedy) and top_k < 0 (all).
MINT_API mint_status mint_sampler_params_check(const mint_sampler_params *p, mint_err *err);
MINT_API mint_status mint_sampler_create(const mint_sampler_params *p, int32_t n_vocab,
                                         mint_sampler **out, mint_err *err);
MINT_API void mint_sampler_free(mint_sampler *s);
// Picks a token from n_vocab logits (not modified).
MINT_API int32_t mint_sampler_sample(mint_sampler *s, const float *logits);
// What the chain did for one sample: candidates left after each step, and the pick.
typedef struct mint_sample_info {
    int32_t n_vocab;   // candidates at the start
    int32_t n_top_k;   // after top-k
    int32_t n_top_p;   // after top-p
    int32_t n_min_p;   // after min-p (what the draw chooses among)
    int32_t token;     // the token picked
    float p;           // its probability in the distribution drawn from (1 for greedy)
    bool greedy;       // temp <= 0: argmax, the filters skipped
    int32_t n_grammar; // candidates an attached grammar allowed (n_vocab without one, or while
                       // a lazy grammar waits; -1 when greedy's argmax was allowed alone and
                       // the mask was not computed)
} mint_sample_info;

// mint_sampler_sample, also reporting what each step left (info may be NULL).
MINT_API int32_t mint_sampler_sample_info(mint_sampler *s, const float *logits,
                                          mint_sample_info *info);
// Records a token in the penalty history (prompt tokens and generated ones).
MINT_API void mint_sampler_accept(mint_sampler *s, int32_t id);
// Clears the history and reseeds.
MINT_API void mint_sampler_reset(mint_sampler *s, uint64_t seed);

// ---------------------------------------------------------------------------------------------
// Grammars: constrained decoding with llama.cpp's GBNF
//
// A grammar (llama.cpp's GBNF: rules, alternatives, groups, * + ? {m} {m,} {m,n},
// "literals", [classes] with ranges and ^, '.', escapes, # comments, token references <[id]>,
// <text>, !<...>) constrains what a sampler may pick: attached to a sampler, it masks every token
// whose text cannot continue a match, matching on the Unicode code points of the tokens' UTF-8
// (a token may end inside a character; the next must complete it), and end-of-generation tokens
// until the text so far is a complete match. mint_gen_step advances the attached grammar with
// each sampled token. A grammar is one generation's state: use one per sequence (any number at
// once, on any threads: the vocabulary's token trie they walk is built once per model and
// shared).

typedef struct mint_grammar mint_grammar;

typedef struct mint_grammar_params {
    const char *root; // the start rule; NULL means "root"
    // Lazy grammars (llama.cpp's, used for tool calls): when any trigger is given, generation is
    // free until a trigger fires; from then on the grammar constrains it, having been fed the
    // text from the trigger on (a pattern's first non-empty capture group's start if it has one,
    // else the match's start; a word's start; a trigger token itself).
    const char *const *trigger_words;    // [n_trigger_words] literal texts (copied)
    int32_t n_trigger_words;             //   0 .. 64
    const char *const *trigger_patterns; // [n_trigger_patterns] PCRE2 regexes, searched in the
    int32_t n_trigger_patterns;          //   bytes generated so far (copied); 0 .. 64
    const int32_t *trigger_tokens;       // [n_trigger_tokens] token ids (copied)
    int32_t n_trigger_tokens;            //   0 .. 64
} mint_grammar_params;

MINT_API mint_grammar_params mint_grammar_default_params(void);
// Parses GBNF text for model m's vocabulary (p NULL: the defaults). A syntax error, an undefined
// rule, a missing start rule, left recursion or a size limit: MINT_E_FORMAT with one line naming
// it and its line:column; a bad trigger (an invalid regex, a token id outside the vocabulary,
// too many): MINT_E_ARG. The first grammar of a model builds its token trie (tens of ms for a
// 150k vocabulary).
MINT_API mint_status mint_grammar_create(const mint_model *m, const char *gbnf, size_t len,
                                         const mint_grammar_params *p, mint_grammar **out,
                                         mint_err *err);
MINT_API void mint_grammar_free(mint_grammar *g);
// Back to the start (and, for a lazy grammar, waiting for a trigger again).
MINT_API void mint_grammar_reset(mint_grammar *g);
// Whether token could be accepted now (always, while a lazy grammar waits for its trigger).
MINT_API bool mint_grammar_allows(mint_grammar *g, int32_t token);
// Advances the grammar by a token. MINT_E_ARG when it does not allow the token (nothing
// changes) or when a trigger fires on text the grammar does not match; MINT_E_LIMIT when the
// parse stacks outgrow their bounds (a grammar too ambiguous); the message is one line.
MINT_API mint_status mint_grammar_accept(mint_grammar *g, int32_t token, mint_err *err);
// Whether the text so far is a complete match, so an end-of-generation token is allowed (true
// while a lazy grammar waits for its trigger).
MINT_API bool mint_grammar_can_end(const mint_grammar *g);
// Attaches a grammar to a sampler (borrowed: it must outlive the attachment; NULL detaches):
// sampling then drops every token the grammar does not allow before the rest of the chain
// (greedy sampling first checks the argmax alone, which picks the same token). mint_gen_step
// advances it with each sampled token; other callers call mint_grammar_accept themselves.
MINT_API void mint_sampler_set_grammar(mint_sampler *s, mint_grammar *g);

// ---------------------------------------------------------------------------------------------
// Logits to text: log-probabilities, the k most likely tokens, and the generation step
//
// Every program that turns logits into text (mint-run, mint-serve, the Python bindings, beam
// search) goes through these, so that a token's log-probability, its alternatives, the stop
// strings and the first piece's leading space are computed once, the same way everywhere.

// The k most likely tokens of a row of n_vocab logits, best first (the lower id first on a tie):
// writes min(k, n_vocab) ids to ids and returns that count (0 when k <= 0).
MINT_API int32_t mint_top_k(const float *logits, int32_t n_vocab, int32_t k, int32_t *ids);
// Log-softmax of a row of logits at n ids, in double: out[i] = (logits[ids[i]] - max) -
// log(sum_j exp(logits[j] - max)), the sum taken in double in id order (as llama.cpp's reference
// tools compute it). One pass over the row, whatever n is.
MINT_API void mint_log_softmax(const float *logits, int32_t n_vocab, const int32_t *ids, int32_t n,
                               double *out);
// Whether the vocabulary puts a space before the text it tokenizes (SentencePiece's "▁": "a"
// becomes " a"); detokenizing then drops that space from the first piece.
MINT_API bool mint_vocab_adds_space_prefix(const mint_model *m);
// The vocabulary's fill-in-the-middle tokens (what llama-server's /infill builds its prompt
// from): the tokenizer.ggml.fim_*_token_id keys, or the older prefix/suffix/middle_token_id
// ones, else the token with one of llama.cpp's texts for it ("<|fim_prefix|>", "<fim-prefix>",
// "<PRE>", ...); -1 where the vocabulary has none.
typedef struct mint_fim_tokens {
    int32_t pre; // before the text ahead of the gap (<|fim_prefix|>, <PRE>)
    int32_t suf; // before the text after the gap (<|fim_suffix|>, <SUF>)
    int32_t mid; // last: the model writes the gap's text next (<|fim_middle|>, <MID>)
    int32_t pad; // padding (<|fim_pad|>)
    int32_t rep; // repository-level prompts: before the repository's name (<|repo_name|>)
    int32_t sep; // ... and before each file's name (<|file_sep|>)
} mint_fim_tokens;
MINT_API mint_fim_tokens mint_vocab_fim_tokens(const mint_model *m);

// A generation step: sample a token from the caller's logits, end at an end-of-generation token,
// a stop string or max_tokens, and release the text that can no longer be the start of a stop
// string. The caller evaluates each token whose step did not finish (alone, or batched with other
// sequences), then passes the new logits to the next step.
typedef struct mint_gen mint_gen;

#define MINT_GEN_MAX_STOP 16 // stop strings
#define MINT_GEN_MAX_TOP  20 // alternatives per token (OpenAI's top_logprobs limit)

typedef enum mint_finish {
    MINT_FINISH_NONE = 0,   // go on: evaluate the token and step again
    MINT_FINISH_STOP = 1,   // a stop string completed (the text ends where it begins)
    MINT_FINISH_LENGTH = 2, // max_tokens tokens were generated
    MINT_FINISH_EOS = 3,    // an end-of-generation token was sampled (it has no text)
} mint_finish;

typedef struct mint_gen_params {
    int32_t max_tokens;      // tokens to generate at most: the step that reaches it finishes
                             // with MINT_FINISH_LENGTH (a caller wanting none does not step);
                             // < 0: no limit (default -1)
    const char *const *stop; // [n_stop] stop strings, matched on bytes across tokens (copied;
                             // empty ones ignored), or NULL
    int32_t n_stop;          // 0 .. MINT_GEN_MAX_STOP
    int32_t n_top;           // alternatives to report with their log-probabilities, 0 .. 20
    bool logprobs;           // compute the sampled token's log-probability (a pass over the row)
    bool sample_info;        // fill mint_gen_token.info (another pass when sampling is not greedy)
    bool ignore_eos;         // an end-of-generation token is text like any other
    bool after_bos;          // the prompt is BOS alone: the first piece drops the space the
                             // vocabulary puts before a word (llama.cpp's and mint-run's rule)
    bool post_sampling;      // logprob and the alternatives come from the distribution the token
                             // was drawn from (after top-k, top-p, min-p and temperature: only
                             // the candidates left, fewer than n_top when fewer are), not from
                             // temperature 1 over the vocabulary (llama-server's
                             // post_sampling_probs)
} mint_gen_params;

typedef struct mint_gen_token {
    int32_t token;         // the sampled id
    mint_sample_info info; // what the sampler chain did (when params.sample_info)
    const char *piece;     // [n_piece] the token's bytes (leading-space rule applied; nothing for
    size_t n_piece;        //   control tokens and the end-of-generation token); valid until the
                           //   next step
    const char *text;      // [n_text] the text this step releases: earlier held-back bytes and
    size_t n_text;         //   this piece, up to what may still begin a stop string (or up to
                           //   the stop string, at MINT_FINISH_STOP); valid until the next step
    size_t n_held;         // bytes held back after this step (0 once finished)
    double logprob;        // log p(token) at temperature 1 (NAN unless logprobs or n_top)
    int32_t n_top;         // alternatives filled
    int32_t top_id[MINT_GEN_MAX_TOP];     // the most likely tokens, best first
    double top_logprob[MINT_GEN_MAX_TOP]; // their log-probabilities
    mint_finish finish;                   // MINT_FINISH_NONE while generation goes on
    int32_t n_generated;                  // tokens generated so far, this one included
                                          //   (an end-of-generation token is not counted)
} mint_gen_token;

MINT_API mint_gen_params mint_gen_default_params(void);
// A generation over a model's vocabulary drawing with sampler s (borrowed: it must outlive the
// mint_gen; the caller accepts the prompt's tokens into it first, for the repetition penalty).
// MINT_E_ARG for too many stop strings or alternatives.
MINT_API mint_status mint_gen_create(const mint_model *m, mint_sampler *s, const mint_gen_params *p,
                                     mint_gen **out, mint_err *err);
MINT_API void mint_gen_free(mint_gen *g);
// One step over n_vocab logits (not modified): samples, records the token in the sampler's
// history, and fills *out. MINT_E_ARG after generation finished; MINT_E_NOMEM.
MINT_API mint_status mint_gen_step(mint_gen *g, const float *logits, mint_gen_token *out,
                                   mint_err *err);
// Name of a finish reason as OpenAI spells it: "stop" (stop string or end of generation),
// "length", or "" for MINT_FINISH_NONE.
MINT_API const char *mint_finish_name(mint_finish f);

// ---------------------------------------------------------------------------------------------
// Chat templates

// The three families mint recognises in a model's template (mint_chat_detect) and renders
// with their sources as the models ship them (mint_chat_render).
typedef enum mint_chat_template {
    MINT_CHAT_UNKNOWN = 0,
    MINT_CHAT_ZEPHYR = 1, // <|user|>\n{msg}</s>\n ... <|assistant|>\n  (TinyLlama-Chat)
    MINT_CHAT_LLAMA2 = 2, // <s>[INST] <<SYS>>\n{sys}\n<</SYS>>\n\n{msg} [/INST]  (Llama-2-chat)
    MINT_CHAT_CHATML = 3, // <|im_start|>user\n{msg}<|im_end|>\n ... <|im_start|>assistant\n
} mint_chat_template;

typedef struct mint_chat_msg {
    const char *role;    // "system", "user" or "assistant"
    const char *content; // UTF-8 text
} mint_chat_msg;

// Recognises a Jinja chat template by its signature; MINT_CHAT_UNKNOWN when it is none of the
// known ones (or NULL).
MINT_API mint_chat_template mint_chat_detect(const char *jinja);
// The family by its name ("zephyr", "llama2", "chatml"); MINT_CHAT_UNKNOWN when unknown.
MINT_API mint_chat_template mint_chat_from_name(const char *name);
MINT_API const char *mint_chat_name(mint_chat_template t);
// The Jinja source of one of llama.cpp's built-in chat templates by its name (llama-server's
// --chat-template NAME: "chatml", "llama3", "gemma", "mistral-v7", ... every name llama.cpp's
// llama_chat_builtin_templates lists), rendering through mint_chat_apply to the text
// llama_chat_apply_template gives for that name; the sources write no bos_token / eos_token
// (llama.cpp writes none: where its text has "<s>" it is literal). NULL for any other name
// (names are case-sensitive, as llama.cpp's). "zephyr" and "llama2" are llama.cpp's builders,
// not the families' sources that mint_chat_render uses.
MINT_API const char *mint_chat_preset(const char *name);
// The i-th name mint_chat_preset knows, in llama.cpp's (strcmp) order; NULL when i is past the
// last, so a program lists them with for (i = 0; mint_chat_preset_name(i); i++).
MINT_API const char *mint_chat_preset_name(size_t i);
// Renders a conversation with a Jinja chat template (a model's tokenizer.chat_template, a
// template file's text, or a preset's source) exactly as Hugging Face's apply_chat_template
// does: jinja2 semantics with trim_blocks, lstrip_blocks and loop controls; the variables
// messages ([{role, content}]), add_generation_prompt, bos_token / eos_token (the vocabulary's
// texts, "" when NULL) and tools = documents = None. *out gets the text (NUL-terminated, free
// it with mint_chat_free), *out_len its length. jinja NULL (a model without a template):
// MINT_E_NOT_FOUND naming --chat-template / --chat-template-file. The template's own
// raise_exception(msg): MINT_E_ARG with msg verbatim. Any other failure of the template
// (syntax, a construct mint lacks, an undefined value used, a bound on work, output or memory
// reached): MINT_E_FORMAT with the template line.
MINT_API mint_status mint_chat_apply(const char *jinja, const mint_chat_msg *msgs, size_t n,
                                     bool add_generation_prompt, const char *bos, const char *eos,
                                     char **out, size_t *out_len, mint_err *err);
MINT_API void mint_chat_free(char *text);
// A family's template as its models ship it (TinyLlama-Chat's, Meta's Llama-2-chat, OpenHermes'
// ChatML) rendered through mint_chat_apply into buf: writes at most cap-1 bytes and a NUL and
// returns the length wanted; 0 (and "") when t is unknown or the template refuses the
// conversation (Llama-2 raises unless roles alternate user/assistant).
MINT_API size_t mint_chat_render(mint_chat_template t, const mint_chat_msg *msgs, size_t n,
                                 bool add_assistant, const char *bos, const char *eos, char *buf,
                                 size_t cap);

// ---------------------------------------------------------------------------------------------
// JSON Schema: the grammar of the JSON documents a schema accepts

// Converts a JSON Schema (UTF-8 JSON text, len bytes) to GBNF text whose root rule matches
// exactly the JSON documents the schema accepts, as llama.cpp's json_schema_to_grammar (what
// llama-server runs for response_format and json_schema) writes it, rule names and order
// included: types, enum, const, properties / required / additionalProperties, items /
// prefixItems / minItems / maxItems, string minLength / maxLength / pattern / format (date, time,
// date-time, uuid), integer minimum / maximum / exclusive bounds, anyOf / oneOf / allOf, $ref to
// #/definitions, #/$defs or any local JSON pointer. {} and {"type": "object"} give any JSON
// object (response_format json_object); `true` and a schema with no keyword the conversion reads
// ({"description": ...}) give any JSON value. *out gets NUL-terminated text to free with
// mint_grammar_text_free.
// Invalid JSON (duplicate keys included) or a malformed or unsupported schema (a count that is
// not an integer in 0..2^31-1, "properties" that is not an object, a $ref that is not local or
// does not resolve, an invalid regex, bounds no value meets): MINT_E_FORMAT with one line naming
// the keyword and its JSON pointer ("json schema: #/properties/tags/minItems: ..."). Schemas
// nested deeper than 200 (through $ref too) or a grammar past 64 MiB to build: MINT_E_LIMIT.
// Like llama.cpp, the grammar leaves out what it cannot say or llama.cpp does not read: a pattern
// beyond GBNF (\d, \w, lookaround, ...) accepts any string; a number's bounds, uniqueItems,
// minProperties, not, formats other than date / time / date-time / uuid, ... are not held. On
// MINT_OK, err->msg (err not NULL) is "" or one line naming the first such keyword by its JSON
// pointer.
MINT_API mint_status mint_json_schema_to_grammar(const char *schema, size_t len, char **out,
                                                 mint_err *err);
MINT_API void mint_grammar_text_free(char *text);

// ---------------------------------------------------------------------------------------------
// Chat formats: tools and reasoning rendered through a model's template, and the model's output
// parsed back into content, reasoning_content and tool_calls (what llama-server does for
// /v1/chat/completions with --jinja)

// A message with everything OpenAI's chat API gives one. Strings are UTF-8; NULL means absent.
typedef struct mint_chat_msg_ex {
    const char *role;              // "system", "user", "assistant", "tool" ("developer" is
                                   //   rendered as "system", as llama-server does)
    const char *content;           // the text; NULL is rendered as "" (as llama-server does)
    const char *reasoning_content; // an assistant's reasoning (templates that keep it render it)
    const char *tool_calls;        // an assistant's calls: OpenAI's JSON array text
                                   //   [{"id", "type": "function", "function": {"name",
                                   //   "arguments"}}], arguments a JSON text or an object
    const char *tool_call_id;      // role "tool": the id of the call this message answers
    const char *name;              // role "tool": the function's name
} mint_chat_msg_ex;

// Whether the model is asked to reason (llama-server's --reasoning on|off|auto): the template's
// enable_thinking variable (a request's chat_template_kwargs {"enable_thinking": ...} wins).
typedef enum mint_chat_reasoning {
    MINT_REASONING_AUTO = 0, // true when the template's format reasons (mint_chat_format_reasons)
    MINT_REASONING_ON = 1,   // enable_thinking = true
    MINT_REASONING_OFF = 2,  // enable_thinking = false
} mint_chat_reasoning;

typedef struct mint_chat_opts {
    bool add_generation_prompt;    // end with the opening of the assistant's turn (default true)
    const char *bos;               // bos_token's text ("" when NULL)
    const char *eos;               // eos_token's text ("" when NULL)
    const char *tools;             // OpenAI's tools as a JSON array text, or NULL (tools = None)
    const char *kwargs;            // a JSON object text whose members become template variables
                                   //   last (llama-server's --chat-template-kwargs merged with a
                                   //   request's chat_template_kwargs), or NULL
    mint_chat_reasoning reasoning; // enable_thinking (default AUTO)
    int64_t now;                   // the time strftime_now, date_string and datetime show
                                   //   (seconds since the epoch, local time); 0: the clock's
} mint_chat_opts;

MINT_API mint_chat_opts mint_chat_default_opts(void);

// Renders a conversation with tools as llama-server renders it: the template gets messages
// (tool calls with their arguments as an object when the template reads them as one, else as
// the JSON text; a system message merged into the next one when the template ignores the
// system role; developer as system), tools, add_generation_prompt, bos_token, eos_token,
// enable_thinking, date_string / datetime (llama.cpp's) and then kwargs' members; the Jinja
// engine renders as jinja2 (see mint_chat_apply). Invalid JSON in tools, kwargs or a message's
// tool_calls: MINT_E_ARG naming it; template failures as mint_chat_apply's. mint_chat_apply is
// this with role/content messages, no tools and none of the variables after eos_token.
MINT_API mint_status mint_chat_apply_ex(const char *jinja, const mint_chat_msg_ex *msgs, size_t n,
                                        const mint_chat_opts *o, char **out, size_t *out_len,
                                        mint_err *err);

// The families of chat formats mint knows: how a model writes reasoning and tool calls (the
// syntax llama.cpp's common/chat.cpp parses for each). Every format also reads a leading
// <think>...</think> unless it has its own reasoning syntax.
typedef enum mint_chat_format {
    MINT_CHAT_FORMAT_CONTENT_ONLY = 0, // no tool call syntax: everything is content
    MINT_CHAT_FORMAT_HERMES,           // <tool_call>{"name", "arguments"}</tool_call> (Hermes 2
                                       //   Pro / 3, Qwen 2.5 / 3, QwQ, Granite 4, Bielik, MiMo)
    MINT_CHAT_FORMAT_LLAMA3,           // {"name", "parameters"} / <|python_tag|> (Llama 3.x)
    MINT_CHAT_FORMAT_MISTRAL_NEMO,     // [TOOL_CALLS][{"name", "arguments", "id"}]
    MINT_CHAT_FORMAT_MAGISTRAL,        // [THINK]..[/THINK] [TOOL_CALLS]name[ARGS]{...}
                                       //   (Devstral, Ministral 3, Mistral Small 3.2)
    MINT_CHAT_FORMAT_DEEPSEEK_R1, // <think> + <｜tool▁call▁begin｜>function<｜tool▁sep｜>name
                                  //   ```json {...}```<｜tool▁call▁end｜>
    MINT_CHAT_FORMAT_DEEPSEEK_V3_1, // <think> + <｜tool▁call▁begin｜>name<｜tool▁sep｜>{...}
    MINT_CHAT_FORMAT_FUNCTIONARY_V3_1, // <function=name>{...}</function>
    MINT_CHAT_FORMAT_FUNCTIONARY_V3_2, // >>>all\ntext / >>>name\n{...}
    MINT_CHAT_FORMAT_FIREFUNCTION_V2,  //  functools[{"name", "arguments"}]
    MINT_CHAT_FORMAT_COMMAND_R7B,      // <|START_THINKING|> <|START_RESPONSE|> <|START_ACTION|>
    MINT_CHAT_FORMAT_GPT_OSS,          // harmony: <|channel|>analysis / final / commentary
                                       //   to=functions.name
    MINT_CHAT_FORMAT_QWEN3_CODER,      // <tool_call><function=name><parameter=k>v</parameter>
                                       //   (Qwen3-Coder, Qwen 3.5, Nemotron 3 Nano, StepFun 3.5)
    MINT_CHAT_FORMAT_SEED_OSS,         // <seed:think> + <seed:tool_call><function=name>...
    MINT_CHAT_FORMAT_KIMI_K2,          // <|tool_call_begin|>functions.name:0
                                       //   <|tool_call_argument_begin|>{...}<|tool_call_end|>
    MINT_CHAT_FORMAT_GLM_4_5,          // <tool_call>name<arg_key>k</arg_key><arg_value>v...
    MINT_CHAT_FORMAT_MINIMAX_M2,       // <minimax:tool_call><invoke name="f"><parameter name=..
    MINT_CHAT_FORMAT_APRIEL,           // <tool_calls>[{"name", "arguments"}]</tool_calls> (also
                                       //   MiniMax M1's objects without the brackets)
    MINT_CHAT_FORMAT_GRANITE,          // <think>, <|tool_call|>[{"name", "arguments"}]
    MINT_CHAT_FORMAT_APERTUS,          // <|tools_prefix|>[{"name": {...}}]<|tools_suffix|>
    MINT_CHAT_FORMAT_NEMOTRON_V2,      // <think>, <TOOLCALL>[{"name", "arguments"}]</TOOLCALL>
    MINT_CHAT_FORMAT_COUNT,            // (not a format: how many there are)
} mint_chat_format;

// The format a Jinja chat template writes, by the markers in its source (NULL or an unknown
// template: MINT_CHAT_FORMAT_CONTENT_ONLY).
MINT_API mint_chat_format mint_chat_format_detect(const char *jinja);
// Its name ("hermes", "llama3", "gpt-oss", ...; "content-only"); "unknown" when out of range.
MINT_API const char *mint_chat_format_name(mint_chat_format f);
// Whether the template reasons before it answers: it mentions enable_thinking or writes the
// format's reasoning markers (what MINT_REASONING_AUTO turns enable_thinking on for).
MINT_API bool mint_chat_format_reasons(const char *jinja);

// llama-server's --reasoning-format: where the reasoning goes.
typedef enum mint_reasoning_format {
    MINT_REASONING_FORMAT_AUTO = 0,     // as DEEPSEEK (llama-server's default)
    MINT_REASONING_FORMAT_NONE = 1,     // left in content, markers and all
    MINT_REASONING_FORMAT_DEEPSEEK = 2, // to reasoning_content, also in streamed deltas
} mint_reasoning_format;

typedef struct mint_chat_parse_opts {
    mint_reasoning_format reasoning_format; // see above (default AUTO)
    bool reasoning_open; // the prompt ended inside a reasoning block it opened (a template's
                         //   generation prompt ending in "<think>\n"): the text starts with
                         //   reasoning; mint_chat_prompt_opens_reasoning tells
    bool parse_tools;    // tool calls are read (the request had tools and tool_choice is not
                         //   "none"); otherwise their syntax stays in the content (default true)
    const char *tools;   // the request's tools (JSON array text) or NULL: where a format writes
                         //   arguments as text (Qwen3-Coder's <parameter=k>), a parameter whose
                         //   schema type is "string" stays a string, others are read as JSON
} mint_chat_parse_opts;

MINT_API mint_chat_parse_opts mint_chat_default_parse_opts(void);

// Whether a rendered prompt (mint_chat_apply_ex's text) leaves format f's reasoning block open
// at its end, so that the model's text begins inside it: the prompt ends, but for whitespace,
// with the reasoning opening ("<think>", "<|START_THINKING|>", "[THINK]", "<seed:think>").
MINT_API bool mint_chat_prompt_opens_reasoning(mint_chat_format f, const char *prompt, size_t len);

typedef struct mint_chat_tool_call {
    char *id;        // the id the model wrote (Mistral Nemo, Command R7B, Kimi K2), else ""
                     //   (the server makes one, as llama-server does)
    char *name;      // the function's name ("" never: a call is listed once its name is whole)
    char *arguments; // the arguments as JSON text: the model's own text where it writes JSON
                     //   (trailing whitespace dropped), else built compactly ({"k":"v"})
} mint_chat_tool_call;

typedef struct mint_chat_parsed {
    char *content;                   // [content_len] the answer (NUL-terminated)
    size_t content_len;              //
    char *reasoning_content;         // [reasoning_len] the reasoning (NUL-terminated)
    size_t reasoning_len;            //
    mint_chat_tool_call *tool_calls; // [n_tool_calls]
    size_t n_tool_calls;             //
} mint_chat_parsed;

// Parses text[len], the model's output after the prompt, as format f writes it. partial: the
// text may stop anywhere (streaming): the result holds only what no continuation can change
// (a marker's first bytes, whitespace that may be trimmed, an incomplete UTF-8 character, a
// call whose name is not whole are held back), so each partial parse extends the previous one
// (mint_chat_diff) and the final parse extends them all when the text is well formed. A call
// whose JSON is malformed, in a final parse, stays in the content as text (llama-server refuses
// the output instead). Reasoning is trimmed of surrounding whitespace; content of its leading
// whitespace. *out is filled (free it with mint_chat_parsed_free, also after a failure);
// MINT_E_ARG for a bad argument or invalid tools JSON, MINT_E_NOMEM.
MINT_API mint_status mint_chat_parse(mint_chat_format f, const char *text, size_t len, bool partial,
                                     const mint_chat_parse_opts *o, mint_chat_parsed *out,
                                     mint_err *err);
MINT_API void mint_chat_parsed_free(mint_chat_parsed *p);

// One piece of a streamed message (an OpenAI chat.completion.chunk delta): text appended to the
// reasoning, to the content, or to tool call tool_index's arguments (with its id and name the
// first time the call appears).
typedef enum mint_chat_delta_kind {
    MINT_DELTA_REASONING = 0,
    MINT_DELTA_CONTENT = 1,
    MINT_DELTA_TOOL_CALL = 2,
} mint_chat_delta_kind;

typedef struct mint_chat_delta {
    mint_chat_delta_kind kind; // which part grows
    size_t tool_index;         // MINT_DELTA_TOOL_CALL: the call's index in the message
    const char *id;            // MINT_DELTA_TOOL_CALL, first delta of a call: its id and name
    const char *name;          //   (pointers into next); NULL after the first
    const char *text;          // [len] the appended text (a pointer into next)
    size_t len;                //
} mint_chat_delta;

// What next adds to prev (two parses of the same output, prev's text a prefix of next's): at
// most 2 + next->n_tool_calls deltas into out[cap], *n_out of them, in llama-server's order
// (reasoning, content, then the calls). prev NULL is the empty message. MINT_E_ARG when next
// does not extend prev (a final parse that turned a malformed call back into text), MINT_E_LIMIT
// when cap is too small.
MINT_API mint_status mint_chat_diff(const mint_chat_parsed *prev, const mint_chat_parsed *next,
                                    mint_chat_delta *out, size_t cap, size_t *n_out, mint_err *err);

// The grammar (GBNF, for mint_grammar_create) that makes a model write well-formed calls in its
// format's syntax, each call's arguments held to its function's JSON Schema
// (mint_json_schema_to_grammar), as llama-server builds one for a request with tools.
typedef struct mint_chat_grammar_opts {
    const char *tools;       // OpenAI's tools, a JSON array text
    const char *tool_choice; // "auto" (or NULL): a lazy grammar that starts when the model opens
                             //   a call; "required": a call and nothing else (but a reasoning
                             //   block); "none": no grammar; or OpenAI's named function as JSON
                             //   text {"type": "function", "function": {"name": ...}}: as
                             //   "required", with that function only
    bool parallel;           // parallel_tool_calls: one or more calls (else exactly one)
    bool reasoning;          // a reasoning block may come before the calls (a model that reasons)
    bool reasoning_open;     // ... and the prompt opened it (mint_chat_prompt_opens_reasoning)
} mint_chat_grammar_opts;

typedef struct mint_chat_grammar {
    char *gbnf;                 // the grammar (root rule "root"), NULL when none applies
    bool lazy;                  // it constrains only once a trigger fires (give the triggers to
                                //   mint_grammar_params)
    char **trigger_words;       // [n_trigger_words] the texts that open a call
    int32_t n_trigger_words;    //
    char **trigger_patterns;    // [n_trigger_patterns] PCRE2 patterns (the grammar starts at
    int32_t n_trigger_patterns; //   the first capture group) for calls without an opening
} mint_chat_grammar;

// The grammar for format f and o (tool_choice "none", or no tools: gbnf NULL, MINT_OK). A format
// with no call syntax (content-only) asked for a call: MINT_E_UNSUPPORTED. Invalid tools JSON, a
// named function that is not among them, a tool whose parameters are not a valid JSON Schema:
// MINT_E_ARG naming it. Free *out with mint_chat_grammar_free (also after a failure).
MINT_API mint_status mint_chat_tool_grammar(mint_chat_format f, const mint_chat_grammar_opts *o,
                                            mint_chat_grammar *out, mint_err *err);
MINT_API void mint_chat_grammar_free(mint_chat_grammar *g);

#ifdef __cplusplus
}
#endif

#endif // MINT_TEXT_H
