// gen.h - one generation request while it is answered, shared by the generation endpoints
// (calls go one way: handlers_gen.c -> handlers_native.c, handlers_anthropic.c,
// handlers_tools.c -> answer.c):
// handlers_gen.c (OpenAI's /v1/completions and /v1/chat/completions, the page's /v1/next, and
// the request flow of all of them) and handlers_native.c (llama-server's own POST /completion
// shape). A request becomes one job per choice (n) or per prompt (/completion's prompt lists).
#ifndef MINT_SERVE_GEN_H
#define MINT_SERVE_GEN_H

#include "handlers.h"

typedef enum gen_kind {
    GEN_COMPLETION, // OpenAI's /v1/completions
    GEN_CHAT,       // OpenAI's /v1/chat/completions
    GEN_NEXT,       // the page's /v1/next
    GEN_NATIVE,     // llama-server's /completion
    GEN_ANTHROPIC,  // Anthropic's /v1/messages (one choice)
    GEN_RESPONSES,  // OpenAI's /v1/responses (one choice)
} gen_kind;

typedef struct gen {
    serve_http *h;
    serve_request req;         // the parsed request
    job *jobs[SERVE_MAX_JOBS]; // one per choice, or per prompt
    int n;
    gen_kind kind;
    bool chat, peek, stream, native, anthropic; // the endpoint and the mode
    char id[48];                                // "chatcmpl-…" / "cmpl-…"
    long created;                               // unix seconds
    int fd;                                     // the client's socket
    char *echo;                                 // completions with echo: the prompt's text
    size_t echo_len;
    char *prompt_text[SERVE_MAX_JOBS];       // /completion: each prompt's tokens as text ("prompt")
    bool reasoning_open;                     // chat: the prompt opened a reasoning block
    mint_chat_parsed parsed[SERVE_MAX_JOBS]; // chat streams: each choice's last partial parse
    bool parsed_ok[SERVE_MAX_JOBS];          // ... once there is one
    // streaming
    int sent_tok[SERVE_MAX_JOBS];     // tokens whose logprobs were sent
    size_t sent_text[SERVE_MAX_JOBS]; // text bytes sent
    bool sent_final[SERVE_MAX_JOBS];  // the finish chunk was sent
    int sent_prog[SERVE_MAX_JOBS];    // prompt-progress records sent (return_progress)
    bool ended;                       // [DONE] queued
    reply_sse sse;                    // events waiting to go out
    // /v1/responses (handlers_responses.c): its answer's shape, and what its stream opened
    bool responses;
    bool resp_reasoning, resp_text; // the reasoning item / the message item was announced
    char resp_call[96];             // the id of the function call whose arguments stream now
} gen;

// answer.c: the pieces of every answer
// A token's text as a JSON string (invalid UTF-8 as U+FFFD), and its bytes as a list.
json_object *gen_token_str(const mint_model *m, int32_t id);
json_object *gen_token_bytes(const mint_model *m, int32_t id);
// Tokens [from, to) of j as [{id, token, logprob, bytes, top_logprobs: [...]}] (OpenAI's chat
// log-probabilities' "content", and /completion's "completion_probabilities").
json_object *gen_logprob_items(const gen *g, const job *j, int from, int to);
// llama-server's "timings" of a job: prompt and generation counts, milliseconds and rates.
// OpenAI's usage object of a request (its choices' tokens; the prompt's once).
json_object *gen_usage(const gen *g);
// An answer's or a chunk's outer object: id, object (the given name), created, model,
// system_fingerprint.
json_object *gen_envelope(const gen *g, const char *object);
json_object *gen_timings(const job *j);
// The timings of progress record k of a job (return_progress with timings_per_token): the
// prompt so far, nothing generated yet.
json_object *gen_progress_timings(const job *j, int k);
// Tokens as text with the special ones written out ("<s> I believe"), as llama-server shows a
// prompt (malloc'd; NULL when out of memory).
char *gen_tokens_text(const mint_model *m, const int32_t *ids, int n);

// handlers_gen.c
// A generation request of this kind, from the body to the answer (the endpoints' one flow).
enum MHD_Result gen_request(serve_http *h, struct MHD_Connection *c, const serve_call *r,
                            gen_kind kind);
// A chat body's prompt text as the chat endpoint renders it (malloc'd; NULL and one line in msg).
char *gen_chat_text(serve_http *h, const serve_call *r, char *msg, size_t cap);
// Another API's body turned into an OpenAI chat body (anthropic_to_openai, responses_to_openai):
// false with one line in msg and the status (400, or 5xx) in *status.
typedef bool (*gen_translate)(const char *body, size_t len, char **out, char *msg, size_t cap,
                              int *status);
// Answers {"input_tokens": N}: the prompt tokens of a chat body, or of another API's body through
// translate (NULL: the body is a chat body); type_5xx names a translator's server error, param
// the field a bad conversation is blamed on.
enum MHD_Result gen_input_tokens(serve_http *h, struct MHD_Connection *c, const serve_call *r,
                                 gen_translate translate, const char *type_5xx, const char *param);
// A chat body's prompt tokens as the chat endpoint would make them; false and one line in msg.
bool gen_chat_tokens(serve_http *h, const serve_call *r, int32_t **ids, int *n, char *msg,
                     size_t cap);

// handlers_native.c
// /completion's prompt i as tokens (BOS before a leading text part), its text written to
// g->prompt_text[i]; false and one line in msg for a bad prompt.
bool native_prompt_tokens(gen *g, int i, int32_t **ids, int *n, char *msg, size_t cap);
// The request's logit_bias as token ids and biases (a text's every token biased); false and one
// line in msg for an id outside the vocabulary.
bool gen_resolve_bias(gen *g, int32_t **ids, float **bias, int *n, char *msg, size_t cap);
// /completion's answer for job i: the whole result (non-streamed, or the last
// event of a stream, whose content was sent before), and one streamed event of text bytes
// [from, to) with tokens [t0, t1).
json_object *native_result(const gen *g, int i);
json_object *native_partial(const gen *g, int i, size_t from, size_t to, int t0, int t1);

// handlers_anthropic.c: the answer in Anthropic's shape, and a stream's events (its opening two,
// a text delta of bytes [from, to), and its closing three).
json_object *anthropic_result(const gen *g);
void anthropic_stream_start(gen *g);
void anthropic_stream_text(gen *g, size_t from, size_t to);
void anthropic_stream_end(gen *g);

// handlers_responses.c: the answer in the Responses API's shape, and a stream's events (its
// opening two, a prompt-progress event's start (its "event:" line; the caller adds
// prompt_progress and sends it), the deltas of the parse up to vis (tools_stream's twin) or of
// the raw text bytes [from, to), and the closing ones).
json_object *responses_result(gen *g);
void responses_stream_start(gen *g);
json_object *responses_progress(gen *g);
void responses_stream_parsed(gen *g, int i, size_t vis, bool done);
void responses_stream_text(gen *g, size_t from, size_t to);
void responses_stream_end(gen *g);

// handlers_tools.c: the chat endpoint's tool calls and reasoning.
// --chat-template-kwargs merged with a request's chat_template_kwargs (malloc'd JSON, or NULL).
char *tools_kwargs(const char *server, const char *request);
// Whether the answer is parsed by the template's format (tools offered, or a reasoning template).
bool tools_active(const gen *g);
// Fills an answer's message from job j's text: content, reasoning_content, tool_calls; returns
// whether it holds a tool call (finish_reason "tool_calls").
bool tools_message(const gen *g, const job *j, json_object *msg);
// Queues choice i's deltas for its text up to vis (done: the final parse).
void tools_stream(gen *g, int i, size_t vis, bool done);
// Choice i's deltas for its text up to vis (done: the final parse) into d[cap], their number;
// they point into g->parsed[i], valid until the next call.
size_t tools_diff(gen *g, int i, size_t vis, bool done, mint_chat_delta *d, size_t cap);
// request_grammar.c: what constrains a request's output (its grammar, its JSON Schema, or its
// tools' grammar), compiled once to check it, then once per further job.
typedef struct req_grammar {
    char *gbnf;                 // the JSON Schema's grammar (mint_grammar_text_free), or NULL
    mint_chat_grammar cg;       // the tools' grammar (mint_chat_grammar_free)
    const char *text;           // the GBNF the jobs compile (the request's, gbnf or cg's), or NULL
    mint_grammar_params params; // cg's triggers when it is lazy
    mint_grammar *first;        // compiled when checked; the first job takes it
} req_grammar;
// Fills *rg (always: free it with req_grammar_free); false with the field in *param and one line
// in msg when the grammar or schema is bad.
bool req_grammar_prepare(gen *g, req_grammar *rg, const char **param, char *msg, size_t cap);
// Gives every job of g its grammar; false when one could not be made (out of memory).
bool req_grammar_attach(gen *g, req_grammar *rg);
void req_grammar_free(req_grammar *rg);

// The grammar a request's tools ask for in the template's format, into *cg (free it with
// mint_chat_grammar_free): tool_choice "required" or a named function, a call and nothing else;
// "auto" with tools, a lazy one (free text until the model opens a call, then the call's syntax
// and its arguments' schema, as llama-server does). False (and cg empty) when none applies.
bool tools_grammar(const gen *g, mint_chat_grammar *cg);

#endif // MINT_SERVE_GEN_H
