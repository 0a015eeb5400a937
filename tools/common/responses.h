// responses.h - OpenAI's Responses API (POST /v1/responses, /responses) in mint-serve: a request
// body turned into the OpenAI chat body mint-serve already parses, as llama-server converts it
// (instructions as the system message; input as one user text or a list of items: messages with
// input_text/output_text parts, function_call items as an assistant's tool_calls,
// function_call_output items as "tool" messages, reasoning items as reasoning_content; the flat
// function tools nested; max_output_tokens as max_tokens; text.format as response_format; the
// other fields passed on). Kept apart from the server so the fuzz harness can drive it.
#ifndef MINT_RESPONSES_H
#define MINT_RESPONSES_H

#include <stdbool.h>
#include <stddef.h>

// *out gets the OpenAI chat body (malloc'd JSON text); false with one line in msg and the HTTP
// status in *status (400 for a malformed or unsupported request, 500 for images, as llama-server
// answers them without a vision projector).
bool responses_to_openai(const char *body, size_t len, char **out, char *msg, size_t cap,
                         int *status);

#endif // MINT_RESPONSES_H
