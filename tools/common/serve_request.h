// serve_request.h - an OpenAI-style request body, parsed and checked: what mint-serve turns into a
// generation job. Kept apart from the server so that the fuzz harness can drive it (fuzz_serve).
//
// Fields follow OpenAI's chat and completions APIs (llama-server's extensions top_k, min_p and
// repeat_penalty too). Unknown fields are ignored; a known field with a value mint cannot honour
// is refused, naming the field, in OpenAI's error shape (param = the field).
#ifndef MINT_SERVE_REQUEST_H
#define MINT_SERVE_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SERVE_MAX_STOP   4  // stop strings
#define SERVE_MAX_N      8  // choices per request
#define SERVE_MAX_TOP_LP 20 // top_logprobs
#define SERVE_MAX_MSGS   1024

typedef enum serve_kind {
    SERVE_CHAT = 0,       // POST /v1/chat/completions
    SERVE_COMPLETION = 1, // POST /v1/completions
    SERVE_NATIVE = 2,     // POST /completion (llama-server's own shape)
} serve_kind;

#define SERVE_MAX_PROMPTS 16   // prompts of one /completion request
#define SERVE_MAX_BIAS    4096 // logit_bias entries
#define SERVE_MAX_FIELDS  32   // response_fields

// A piece of a /completion prompt: text, or token ids (llama-server mixes them in one sequence).
typedef struct serve_part {
    char *text;   // UTF-8, or NULL for ids
    int32_t *ids; // [n_ids] token ids when text is NULL
    int n_ids;
} serve_part;

// One /completion prompt: its parts in order.
typedef struct serve_prompt {
    serve_part *parts; // [n_parts]
    int n_parts;
} serve_prompt;

// A logit_bias entry: a token id, or a text whose tokens all get the bias.
typedef struct serve_bias {
    int32_t id; // the token, when text is NULL
    char *text; // or a text to tokenize (without BOS)
    float bias; // added to the logit; -INFINITY bans the token
} serve_bias;

typedef struct serve_msg {
    char *role;              // "system", "user", "assistant" or "tool"
    char *content;           // UTF-8 ("" for an assistant's message that only calls tools)
    char *tool_calls;        // an assistant's tool_calls as JSON text, or NULL
    char *tool_call_id;      // role "tool": the call it answers, or NULL
    char *name;              // role "tool": the function's name, or NULL
    char *reasoning_content; // an assistant's earlier reasoning, or NULL
} serve_msg;

typedef enum serve_tool_choice {
    SERVE_TOOLS_AUTO = 0,     // the model may call a tool ("auto", the default with tools)
    SERVE_TOOLS_NONE = 1,     // it may not ("none"): calls stay text
    SERVE_TOOLS_REQUIRED = 2, // it must call one ("required"; a named function: tool_name)
} serve_tool_choice;

typedef struct serve_request {
    serve_kind kind;
    char *model;     // as sent (any name is accepted; the server has one model)
    serve_msg *msgs; // [n_msgs] chat messages
    int n_msgs;
    char *prompt;        // completion prompt text, or NULL when given as token ids
    int32_t *prompt_ids; // [n_prompt_ids] completion prompt as token ids
    int n_prompt_ids;
    int max_tokens;             // tokens to generate at most (-1: the server's limit)
    float temperature;          // default 1 (OpenAI's); 0 = greedy
    float top_p;                // default 1
    int top_k;                  // default 0 (off)
    float min_p;                // default 0 (off)
    float repeat_penalty;       // default 1 (off)
    bool has_seed;              // seed given
    uint64_t seed;              // sampling seed
    char *stop[SERVE_MAX_STOP]; // stop strings (not included in the output)
    int n_stop;
    int n;                      // choices (1 .. SERVE_MAX_N)
    bool stream;                // server-sent events
    bool include_usage;         // stream_options.include_usage
    bool logprobs;              // return log-probabilities of the sampled tokens
    int top_logprobs;           // and of this many alternatives (0 .. 20)
    bool echo;                  // completions: the prompt's text precedes the completion
    bool ignore_eos;            // extension: keep going past an end-of-generation token
    bool add_generation_prompt; // chat: end the prompt with the assistant's opening (true)
    bool continue_final;        // chat: a last assistant message is continued, not answered (true
                                // unless continue_final_message or add_generation_prompt say no)
    bool verbose;               // "verbose": answer with "__verbose" (the prompt as tokens' text)
    bool return_progress;       // stream: chunks saying how much of the prompt is evaluated
    bool timings_per_token;     // stream: every chunk carries "timings"
    char *tools;                // chat: OpenAI's tools as JSON array text, or NULL
    serve_tool_choice tool_choice; // chat: tool_choice
    char *tool_name;               // chat: tool_choice {"function": {"name"}}: that one, or NULL
    bool parallel_tool_calls;      // chat: several calls in one answer (default true)
    char *template_kwargs;         // chat: chat_template_kwargs as JSON object text, or NULL
    char *grammar;                 // GBNF text the output must match ("grammar"), or NULL
    char *json_schema;             // a JSON Schema the output must match ("json_schema",
                                   // response_format), as JSON text, or NULL
    serve_bias *bias;              // [n_bias] logit_bias
    int n_bias;
    // POST /completion (SERVE_NATIVE) only:
    serve_prompt *prompts; // [n_prompts] the prompts, each answered on its own
    int n_prompts;
    int n_probs;                    // alternatives per token (0 .. 20)
    bool return_tokens;             // "tokens": the generated ids
    bool post_sampling_probs;       // probabilities after the sampler chain
    int id_slot;                    // the slot asked for (-1: any)
    char *fields[SERVE_MAX_FIELDS]; // response_fields: the members to answer with
    int n_fields;
} serve_request;

// What a request gets for the fields it leaves out (llama-server's: the server's own sampling
// flags), and the bound on what it may ask.
typedef struct serve_defaults {
    int max_tokens_cap;   // max_tokens above this is refused
    int max_tokens;       // when the request gives none (-1: the server's limit)
    float temperature;    // --temp
    float top_p;          // --top-p
    int top_k;            // --top-k
    float min_p;          // --min-p
    float repeat_penalty; // --repeat-penalty
    bool ignore_eos;      // --ignore-eos
} serve_defaults;

// Parses body as a request of this kind. Returns true, or false with one line in msg and the
// offending field in *param (NULL when the body itself is at fault: not JSON, not an object,
// invalid UTF-8).
bool serve_parse_request(const char *body, size_t len, serve_kind kind, const serve_defaults *d,
                         serve_request *out, char *msg, size_t cap, const char **param);
void serve_request_free(serve_request *r);

#endif // MINT_SERVE_REQUEST_H
