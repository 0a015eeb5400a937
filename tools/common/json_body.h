// json_body.h - a request body as one strict JSON object, for the translators of other APIs'
// bodies (anthropic.c, responses.c) that mint-serve and their fuzz harnesses share.
#ifndef MINT_JSON_BODY_H
#define MINT_JSON_BODY_H

#include <json-c/json.h>
#include <stddef.h>

// body[0..len) parsed strictly (json-c's strict mode, UTF-8 checked, nothing after the value):
// the object (the caller puts it), or NULL when it is no single JSON object.
json_object *json_body_object(const char *body, size_t len);

#endif // MINT_JSON_BODY_H
