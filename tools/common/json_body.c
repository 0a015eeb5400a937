// json_body.c - a request body as one strict JSON object (json_body.h).
#include "json_body.h"

#include <stdbool.h>
#include <stdint.h>

json_object *json_body_object(const char *body, size_t len) {
    json_tokener *tok = json_tokener_new();
    if (!tok) return NULL;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o =
        len > 0 && len < (size_t)INT32_MAX ? json_tokener_parse_ex(tok, body, (int)len) : NULL;
    const bool whole = o && json_tokener_get_error(tok) == json_tokener_success &&
                       json_tokener_get_parse_end(tok) == len;
    json_tokener_free(tok);
    if (!whole || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        return NULL;
    }
    return o;
}
