// tools_params.c - the param readers and the error answer every built-in tool uses
// (tools_builtin.h): a param of the wrong type is named in one line, an absent optional one takes
// its default.
#include "tools_builtin.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

bool tool_param_str(json_object *params, const char *key, bool required, const char *def,
                    const char **out, char *err, size_t errlen) {
    json_object *v;
    if (!json_object_object_get_ex(params, key, &v) || !v) {
        if (required) {
            snprintf(err, errlen, "missing param \"%s\"", key);
            return false;
        }
        *out = def;
        return true;
    }
    if (!json_object_is_type(v, json_type_string)) {
        snprintf(err, errlen, "param \"%s\" must be a string", key);
        return false;
    }
    *out = json_object_get_string(v);
    return true;
}

bool tool_param_int(json_object *params, const char *key, int def, int *out, char *err,
                    size_t errlen) {
    json_object *v;
    if (!json_object_object_get_ex(params, key, &v) || !v) {
        *out = def;
        return true;
    }
    if (!json_object_is_type(v, json_type_int)) {
        snprintf(err, errlen, "param \"%s\" must be an integer", key);
        return false;
    }
    const int64_t x = json_object_get_int64(v);
    *out = x > 1 << 30 ? 1 << 30 : x < -(1 << 30) ? -(1 << 30) : (int)x;
    return true;
}

bool tool_param_bool(json_object *params, const char *key, bool def, bool *out, char *err,
                     size_t errlen) {
    json_object *v;
    if (!json_object_object_get_ex(params, key, &v) || !v) {
        *out = def;
        return true;
    }
    if (!json_object_is_type(v, json_type_boolean)) {
        snprintf(err, errlen, "param \"%s\" must be true or false", key);
        return false;
    }
    *out = json_object_get_boolean(v);
    return true;
}

json_object *tool_error(const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "error", json_object_new_string(msg));
    return o;
}
