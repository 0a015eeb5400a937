// preset_ini.h - the INI files of llama-server's --models-preset (router mode): sections of
// "key = value" lines, one section per model ("[name]"), "[*]" for every model. The syntax is
// llama.cpp's (common/preset.cpp's grammar): a line is a header "[ name ]", a pair
// "key = value" (key: a letter or '_', then letters, digits, '_', '.', '-'), a comment (';' or
// '#' after optional blanks) or blank; a value ends at ';', '#' or the line's end, blanks around it
// dropped; "\r\n", "\n" and "\r" end lines. Pairs before the first header belong to the section
// "default". A header met again starts its section afresh; a key met again keeps the last value.
// Anything else fails the whole file, naming the line.
#ifndef MINT_PRESET_INI_H
#define MINT_PRESET_INI_H

#include <stdbool.h>
#include <stddef.h>

typedef struct preset_ini_pair {
    char *key;   // as written (no dashes added or removed)
    char *value; // may be empty
} preset_ini_pair;

typedef struct preset_ini_section {
    char *name;            // the header's text, blanks around it dropped ("default" before any)
    preset_ini_pair *pair; // [n_pair] in first-seen order of their keys
    int n_pair;
} preset_ini_section;

typedef struct preset_ini {
    preset_ini_section *sec; // [n_sec] in first-seen order
    int n_sec;
} preset_ini;

// Parses len bytes of text (NUL bytes are an error) into out (zeroed first); false with one line
// in err ("line N: ...") and out empty.
bool preset_ini_parse(const char *text, size_t len, preset_ini *out, char *err, size_t errlen);
// The value of key in sec, or NULL.
const char *preset_ini_get(const preset_ini_section *sec, const char *key);
void preset_ini_free(preset_ini *d);

#endif // MINT_PRESET_INI_H
