// anthropic.h - Anthropic's Messages API (POST /v1/messages, /v1/messages/count_tokens) in
// mint-serve: a request body turned into the OpenAI chat body mint-serve already parses (system
// text, user and assistant turns, text blocks joined with a newline, tool_use blocks as an
// assistant's tool_calls, tool_result blocks as "tool" messages, tools and tool_choice, the
// sampling fields, stop_sequences as stop). Kept apart from the server so the fuzz harness can
// drive it.
#ifndef MINT_ANTHROPIC_H
#define MINT_ANTHROPIC_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

// *out gets the OpenAI chat body (malloc'd JSON text); false with one line in msg and the HTTP
// status in *status (400 for a malformed request, 500 for images, as llama-server answers them).
bool anthropic_to_openai(const char *body, size_t len, char **out, char *msg, size_t cap,
                         int *status);

#endif // MINT_ANTHROPIC_H
