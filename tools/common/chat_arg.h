// chat_arg.h - the value of --chat-template (mint-run, mint-serve), as llama-server reads it: one
// of llama.cpp's built-in template names, the list coming from the library
// (mint_chat_preset_name) so no program keeps its own copy, or, when it is no name but looks like
// a Jinja template (it holds "{%" or "{{"), the template's text itself.
#ifndef MINT_CHAT_ARG_H
#define MINT_CHAT_ARG_H

#include <stdbool.h>
#include <stddef.h>

#define CLI_CHAT_NAMES_MAX 255 // names the list below holds at most (the library has 54)

// The library's preset names, NULL-ended: what an option table shows in --help (.names). Empty
// until cli_chat_names_init fills it; a program calls that before parsing its arguments.
extern const char *cli_chat_names[CLI_CHAT_NAMES_MAX + 1];

// Fills cli_chat_names from mint_chat_preset_name (again is harmless).
void cli_chat_names_init(void);

// Whether a --chat-template value is a Jinja template's text rather than a name.
bool cli_chat_is_jinja(const char *value);

// Checks a --chat-template value: a built-in name in any case (*value then becomes the
// library's spelling) or a template's text (with any_text, any text that is no name: llama-server
// with Jinja on renders such a value as a template, so plain text renders as itself); otherwise
// false and one line in err naming the value.
bool cli_chat_check(const char **value, bool any_text, char *err, size_t errlen);

// The Jinja source a checked --chat-template value stands for: the preset's, or the value itself.
const char *cli_chat_source(const char *value);

// How a message names the template a value gives: the name, or "given by --chat-template".
const char *cli_chat_label(const char *value);

#endif // MINT_CHAT_ARG_H
