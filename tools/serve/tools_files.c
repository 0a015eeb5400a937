// tools_files.c - the file tools read_file (a line range, numbered lines, or the whole file as
// base64 when the client's x-resp-type asks) and write_file, with llama-server's limits, answers
// and messages (edit_file is tools_edit.c's).
#include "reply.h"
#include "tools_builtin.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READ_MAX        (16u * 1024)        // bytes of text read_file answers
#define READ_MAX_BASE64 (32u * 1024 * 1024) // bytes of a file read_file sends as base64
#define READ_MAX_RANGE  (64u * 1024 * 1024) // bytes of a file a line range is read from

static json_object *text_response(const char *s, size_t n) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "plain_text_response",
                           reply_utf8_string(s, n)); // U+FFFD for bad bytes
    return o;
}

static char *base64(const unsigned char *s, size_t n) {
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((n + 2) / 3 * 4 + 1), *q = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i += 3) {
        const uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) |
                           (i + 2 < n ? s[i + 2] : 0);
        *q++ = tab[v >> 18 & 63];
        *q++ = tab[v >> 12 & 63];
        *q++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
        *q++ = i + 2 < n ? tab[v & 63] : '=';
    }
    *q = '\0';
    return out;
}

serve_tool_status tool_read_file(json_object *params, const tool_io *io, serve_tool_stream *st,
                                 json_object **result, char *err, size_t errlen) {
    (void)st;
    const char *path, *resp;
    int start, end;
    bool loc;
    if (!tool_param_str(params, "path", true, NULL, &path, err, errlen) ||
        !tool_param_int(params, "start_line", 1, &start, err, errlen) ||
        !tool_param_int(params, "end_line", -1, &end, err, errlen) ||
        !tool_param_bool(params, "append_loc", false, &loc, err, errlen) ||
        !tool_param_str(params, "resp_type", false, "", &resp, err, errlen))
        return SERVE_TOOL_BAD;
    size_t size;
    if (!tool_io_size(io, path, &size)) {
        *result = tool_error("cannot stat file: %s", path);
        return SERVE_TOOL_OK;
    }
    const bool as_base64 = !strcmp(resp, "base64"); // the client's header, never the model's
    const size_t max = as_base64 ? READ_MAX_BASE64 : end == -1 ? READ_MAX : READ_MAX_RANGE;
    if (size > max) {
        *result = as_base64 || end != -1
                      ? tool_error("file too large (%zu bytes, max %zu)", size, max)
                      : tool_error("file too large (%zu bytes, max %u). Use "
                                   "start_line/end_line to read a portion.",
                                   size, READ_MAX);
        return SERVE_TOOL_OK;
    }
    char *data;
    size_t len;
    bool too_big;
    if (!tool_io_read(io, path, max, &data, &len, &too_big)) {
        *result = tool_error("failed to open file: %s", path);
        return SERVE_TOOL_OK;
    }
    if (as_base64) {
        char *b = base64((const unsigned char *)data, len);
        free(data);
        if (!b) {
            snprintf(err, errlen, "out of memory");
            return SERVE_TOOL_FAILED;
        }
        *result = json_object_new_object();
        json_object_object_add(*result, "base64", json_object_new_string(b));
        json_object_object_add(*result, "size_bytes", json_object_new_int64((int64_t)len));
        free(b);
        return SERVE_TOOL_OK;
    }
    // Lines start..end (1-based, inclusive), each ending in '\n', up to READ_MAX bytes.
    char *out = malloc(READ_MAX + 64);
    size_t n = 0;
    if (!out) {
        free(data);
        snprintf(err, errlen, "out of memory");
        return SERVE_TOOL_FAILED;
    }
    int lineno = 0;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(data + pos, '\n', len - pos);
        const size_t ll = nl ? (size_t)(nl - (data + pos)) : len - pos;
        lineno++;
        if (end != -1 && lineno > end) break;
        if (lineno >= start) {
            char num[24] = "";
            if (loc) snprintf(num, sizeof num, "%d\xe2\x86\x92", lineno); // "N→"
            const size_t need = strlen(num) + ll + 1;
            if (n + need > READ_MAX) {
                memcpy(out + n, "[output truncated]", 18);
                n += 18;
                break;
            }
            memcpy(out + n, num, strlen(num));
            n += strlen(num);
            memcpy(out + n, data + pos, ll);
            n += ll;
            out[n++] = '\n';
        }
        pos += ll + 1;
    }
    *result = text_response(out, n);
    free(out);
    free(data);
    return SERVE_TOOL_OK;
}

serve_tool_status tool_write_file(json_object *params, const tool_io *io, serve_tool_stream *st,
                                  json_object **result, char *err, size_t errlen) {
    (void)st;
    const char *path;
    json_object *content;
    if (!tool_param_str(params, "path", true, NULL, &path, err, errlen)) return SERVE_TOOL_BAD;
    if (!json_object_object_get_ex(params, "content", &content) ||
        !json_object_is_type(content, json_type_string)) {
        snprintf(err, errlen, "missing param \"content\" (a string)");
        return SERVE_TOOL_BAD;
    }
    const size_t len = (size_t)json_object_get_string_len(content);
    if (!tool_io_write(io, path, json_object_get_string(content), len)) {
        *result = tool_error("failed to write file: %s", path);
        return SERVE_TOOL_OK;
    }
    *result = json_object_new_object();
    json_object_object_add(*result, "result", json_object_new_string("file written successfully"));
    json_object_object_add(*result, "path", json_object_new_string(path));
    json_object_object_add(*result, "bytes", json_object_new_int64((int64_t)len));
    return SERVE_TOOL_OK;
}
