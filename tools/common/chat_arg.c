// chat_arg.c - --chat-template's value: a name of the library's presets or a Jinja template's
// text (chat_arg.h).
#include "chat_arg.h"

#include "mint.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *cli_chat_names[CLI_CHAT_NAMES_MAX + 1];

void cli_chat_names_init(void) {
    size_t i = 0;
    for (const char *name; i < CLI_CHAT_NAMES_MAX && (name = mint_chat_preset_name(i)); i++)
        cli_chat_names[i] = name;
    cli_chat_names[i] = NULL;
}

bool cli_chat_is_jinja(const char *value) {
    return value && (strstr(value, "{%") || strstr(value, "{{"));
}

// The library's spelling of a name given in any case, or NULL.
static const char *known_name(const char *value) {
    const char *name;
    for (size_t i = 0; (name = mint_chat_preset_name(i)) != NULL; i++)
        if (strcasecmp(name, value) == 0) return name;
    return NULL;
}

bool cli_chat_check(const char **value, bool any_text, char *err, size_t errlen) {
    const char *name = known_name(*value);
    if (name) {
        *value = name;
        return true;
    }
    // A name wins over a template: none holds "{%" or "{{", so the order only matters in theory.
    if (any_text || cli_chat_is_jinja(*value)) return true;
    snprintf(err, errlen,
             "--chat-template expects one of llama.cpp's built-in template names (--help lists "
             "them) or a Jinja template's text, got '%.60s'",
             *value);
    return false;
}

const char *cli_chat_source(const char *value) {
    const char *src = value ? mint_chat_preset(value) : NULL;
    return src ? src : value; // a checked value that is no name is a template's text
}

const char *cli_chat_label(const char *value) {
    return value && !mint_chat_preset(value) ? "given by --chat-template" : value;
}
