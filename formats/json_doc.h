// json_doc.h - strict JSON parsing for the files of a checkpoint (safetensors headers,
// config.json, tokenizer files), on top of json-c, and writing them back.
//
// json-c alone accepts a few things these formats do not: it keeps the last of two equal keys
// (a safetensors header with a name twice would silently lose a tensor), and lenient mode accepts
// non-JSON even in strict mode (single-quoted keys, NaN, "1.", raw control characters in
// strings). mint_json_parse runs json-c in strict mode with UTF-8 validation, demands that the
// text is exactly one value (trailing whitespace allowed), refuses NUL bytes (raw or as \u0000),
// and scans the raw text for those forms and for duplicate keys at every level.
#ifndef MINT_JSON_DOC_H
#define MINT_JSON_DOC_H

#include "mint.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Parses text[len]. On failure returns MINT_E_FORMAT with "<name>: <what> at byte <k>", where k is
// counted from `base_offset` (8 for a safetensors header, so offsets are file offsets). The caller
// puts *out with json_object_put. A text that is just `null` succeeds with *out NULL: json-c's JSON
// null is the NULL pointer, so a caller wanting an object or array checks the type, never only
// the pointer.
mint_status mint_json_parse(const char *text, size_t len, const char *name, size_t base_offset,
                            json_object **out, mint_err *err);

// Reads and parses a whole file of at most max_bytes bytes. MINT_E_IO when it cannot be read,
// MINT_E_LIMIT when it is larger.
mint_status mint_json_load_file(const char *path, size_t max_bytes, json_object **out,
                                mint_err *err);

// The JSON type name of a value ("object", "array", "string", "int", "double", "boolean", "null").
const char *mint_json_type_name(const json_object *o);

// Member `key` of an object as an integer in [lo, hi]. MINT_E_NOT_FOUND when absent (or null),
// MINT_E_FORMAT when it is not an integer (a double with an integral value such as 1e5 or 64.0 is
// accepted, as Python's json writes them) or out of range. `file` names the document in messages.
mint_status mint_json_get_int(json_object *obj, const char *key, int64_t lo, int64_t hi,
                              const char *file, int64_t *out, mint_err *err);
// Member `key` as a number (int or double). Same failures.
mint_status mint_json_get_num(json_object *obj, const char *key, const char *file, double *out,
                              mint_err *err);
// Member `key` as a boolean.
mint_status mint_json_get_bool(json_object *obj, const char *key, const char *file, bool *out,
                               mint_err *err);
// Member `key` as a string (pointer into the json object, NUL-terminated; *len its length).
mint_status mint_json_get_str(json_object *obj, const char *key, const char *file, const char **out,
                              size_t *len, mint_err *err);

// Writes o as dir/name, atomically (base/fileio.h), pretty-printed with a final newline and
// without escaping '/' (the Hugging Face files mint writes: config.json, tokenizer.json, ...).
mint_status mint_json_write_file(json_object *o, const char *dir, const char *name, mint_err *err);

#endif // MINT_JSON_DOC_H
