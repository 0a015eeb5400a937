// chat_parse_base.c - what every part of the output parser shares (chat_parse.h): each chat
// format's row (the markers llama.cpp's common/chat.cpp parses for it), the output's buffers,
// scanning the text for markers, and appending content. The parser's files sit above it:
// chat_json_scan.c, chat_parse_calls.c, chat_parse_special.c, then chat_parse.c's driver.
#include "runtime/text/chat_parse.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// The formats' rows

#define THINK .think_open = "<think>", .think_close = "</think>"
#define DS_CALLS                                                                                   \
    "<\xef\xbd\x9c"                                                                                \
    "tool\xe2\x96\x81"                                                                             \
    "calls\xe2\x96\x81"                                                                            \
    "begin\xef\xbd\x9c>"
#define DS_CALLS_END                                                                               \
    "<\xef\xbd\x9c"                                                                                \
    "tool\xe2\x96\x81"                                                                             \
    "calls\xe2\x96\x81"                                                                            \
    "end\xef\xbd\x9c>"
#define DS_CALL                                                                                    \
    "<\xef\xbd\x9c"                                                                                \
    "tool\xe2\x96\x81"                                                                             \
    "call\xe2\x96\x81"                                                                             \
    "begin\xef\xbd\x9c>"
#define DS_CALL_END                                                                                \
    "<\xef\xbd\x9c"                                                                                \
    "tool\xe2\x96\x81"                                                                             \
    "call\xe2\x96\x81"                                                                             \
    "end\xef\xbd\x9c>"
#define DS_SEP                                                                                     \
    "<\xef\xbd\x9c"                                                                                \
    "tool\xe2\x96\x81"                                                                             \
    "sep\xef\xbd\x9c>"

static const cp_spec specs[MINT_CHAT_FORMAT_COUNT] = {
    [MINT_CHAT_FORMAT_CONTENT_ONLY] = {CP_NONE, THINK},
    [MINT_CHAT_FORMAT_HERMES] = {CP_JSON_OBJECT, THINK, .call_open = "<tool_call>",
                                 .call_close = "</tool_call>", .name_key = "name",
                                 .args_key = "arguments"},
    [MINT_CHAT_FORMAT_LLAMA3] = {CP_JSON_OBJECT, THINK, .name_key = "name",
                                 .args_key = "parameters", .args_key2 = "arguments",
                                 .call_open = "{", .python_tag = "<|python_tag|>"},
    [MINT_CHAT_FORMAT_MISTRAL_NEMO] = {CP_JSON_ARRAY, THINK, .section_open = "[TOOL_CALLS]",
                                       .name_key = "name", .args_key = "arguments", .id_key = "id"},
    [MINT_CHAT_FORMAT_MAGISTRAL] = {CP_NAME_ARGS, .think_open = "[THINK]",
                                    .think_close = "[/THINK]", .section_open = "[TOOL_CALLS]",
                                    .call_open = "", .name_close = "[ARGS]", .id_open = "[CALL_ID]",
                                    .repeat_open = true},
    [MINT_CHAT_FORMAT_DEEPSEEK_R1] = {CP_NAME_ARGS, THINK, .section_open = DS_CALLS,
                                      .section_close = DS_CALLS_END,
                                      .call_open = DS_CALL "function" DS_SEP,
                                      .name_close = "```json", .call_close = "```" DS_CALL_END},
    [MINT_CHAT_FORMAT_DEEPSEEK_V3_1] = {CP_NAME_ARGS, THINK, .section_open = DS_CALLS,
                                        .section_close = DS_CALLS_END, .call_open = DS_CALL,
                                        .name_close = DS_SEP, .call_close = DS_CALL_END},
    [MINT_CHAT_FORMAT_FUNCTIONARY_V3_1] = {CP_NAME_ARGS, THINK, .call_open = "<function=",
                                           .name_close = ">", .call_close = "</function>",
                                           .python_tag = "<|python_tag|>"},
    [MINT_CHAT_FORMAT_FUNCTIONARY_V3_2] = {.kind = CP_SPECIAL},
    [MINT_CHAT_FORMAT_FIREFUNCTION_V2] = {CP_JSON_ARRAY, THINK, .section_open = " functools",
                                          .name_key = "name", .args_key = "arguments"},
    [MINT_CHAT_FORMAT_COMMAND_R7B] = {CP_JSON_ARRAY, .think_open = "<|START_THINKING|>",
                                      .think_close = "<|END_THINKING|>",
                                      .content_open = "<|START_RESPONSE|>",
                                      .content_close = "<|END_RESPONSE|>",
                                      .section_open = "<|START_ACTION|>",
                                      .section_close = "<|END_ACTION|>", .name_key = "tool_name",
                                      .args_key = "parameters", .id_key = "tool_call_id"},
    [MINT_CHAT_FORMAT_GPT_OSS] = {CP_SPECIAL, .think_open = "<|channel|>analysis<|message|>",
                                  .think_close = "<|end|>"},
    [MINT_CHAT_FORMAT_QWEN3_CODER] = {CP_XML, THINK, .section_open = "<tool_call>",
                                      .section_close = "</tool_call>", .call_open = "<function=",
                                      .name_close = ">", .call_close = "</function>",
                                      .param_open = "<parameter=", .param_name_close = ">",
                                      .param_close = "</parameter>"},
    [MINT_CHAT_FORMAT_SEED_OSS] =
        {CP_XML, .think_open = "<seed:think>", .think_close = "</seed:think>",
         .section_open = "<seed:tool_call>", .section_close = "</seed:tool_call>",
         .call_open = "<function=", .name_close = ">", .call_close = "</function>",
         .param_open = "<parameter=", .param_name_close = ">", .param_close = "</parameter>"},
    [MINT_CHAT_FORMAT_KIMI_K2] = {CP_NAME_ARGS, THINK,
                                  .section_open = "<|tool_calls_section_begin|>",
                                  .section_close = "<|tool_calls_section_end|>",
                                  .call_open = "<|tool_call_begin|>",
                                  .name_close = "<|tool_call_argument_begin|>",
                                  .call_close = "<|tool_call_end|>", .kimi_ids = true},
    [MINT_CHAT_FORMAT_GLM_4_5] = {CP_XML, THINK, .call_open = "<tool_call>", .name_close = "\n",
                                  .call_close = "</tool_call>", .param_open = "<arg_key>",
                                  .param_name_close = "</arg_key>", .value_open = "<arg_value>",
                                  .param_close = "</arg_value>"},
    [MINT_CHAT_FORMAT_MINIMAX_M2] = {CP_XML, THINK, .section_open = "<minimax:tool_call>",
                                     .section_close = "</minimax:tool_call>",
                                     .call_open = "<invoke name=\"", .name_close = "\">",
                                     .call_close = "</invoke>", .param_open = "<parameter name=\"",
                                     .param_name_close = "\">", .param_close = "</parameter>"},
    [MINT_CHAT_FORMAT_APRIEL] = {CP_JSON_ARRAY, .think_open = "Here are my reasoning steps:",
                                 .think_close = "[BEGIN FINAL RESPONSE]",
                                 .section_open = "<tool_calls>", .section_close = "</tool_calls>",
                                 .name_key = "name", .args_key = "arguments"},
    [MINT_CHAT_FORMAT_GRANITE] = {CP_JSON_ARRAY, THINK, .content_open = "<response>",
                                  .content_close = "</response>", .section_open = "<|tool_call|>",
                                  .name_key = "name", .args_key = "arguments"},
    [MINT_CHAT_FORMAT_APERTUS] = {CP_JSON_ARRAY, .section_open = "<|tools_prefix|>",
                                  .section_close = "<|tools_suffix|>", .name_is_key = true},
    [MINT_CHAT_FORMAT_NEMOTRON_V2] = {CP_JSON_ARRAY, THINK, .section_open = "<TOOLCALL>",
                                      .section_close = "</TOOLCALL>", .name_key = "name",
                                      .args_key = "arguments"},
};

const cp_spec *cp_spec_of(mint_chat_format f) {
    return &specs[(unsigned)f < MINT_CHAT_FORMAT_COUNT ? f : MINT_CHAT_FORMAT_CONTENT_ONLY];
}

// ---------------------------------------------------------------------------------------------
// Output buffers

void cp_put(cp_out *o, cp_buf *b, const char *p, size_t n) {
    if (o->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            o->oom = true;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void cp_puts(cp_out *o, cp_buf *b, const char *z) {
    cp_put(o, b, z, strlen(z));
}

void cp_put_json_str(cp_out *o, cp_buf *b, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && (unsigned char)s[j] >= 0x20 && s[j] != '"' && s[j] != '\\') j++;
        cp_put(o, b, s + i, j - i);
        if (j >= n) break;
        char e[8];
        unsigned char c = (unsigned char)s[j];
        const char *z = c == '"'    ? "\\\""
                        : c == '\\' ? "\\\\"
                        : c == '\b' ? "\\b"
                        : c == '\f' ? "\\f"
                        : c == '\n' ? "\\n"
                        : c == '\r' ? "\\r"
                        : c == '\t' ? "\\t"
                                    : NULL;
        if (!z) {
            snprintf(e, sizeof e, "\\u%04x", c);
            z = e;
        }
        cp_puts(o, b, z);
        i = j + 1;
    }
}

cp_call *cp_new_call(cp_out *o) {
    if (o->oom) return NULL;
    if (o->n_calls == o->cap_calls) {
        size_t cap = o->cap_calls ? 2 * o->cap_calls : 4;
        cp_call *c = realloc(o->calls, cap * sizeof *c);
        if (!c) {
            o->oom = true;
            return NULL;
        }
        o->calls = c;
        o->cap_calls = cap;
    }
    cp_call *c = &o->calls[o->n_calls++];
    memset(c, 0, sizeof *c);
    cp_put(o, &c->id, "", 0);
    cp_put(o, &c->name, "", 0);
    cp_put(o, &c->args, "", 0);
    return o->oom ? NULL : c;
}

void cp_drop_calls(cp_out *o, size_t keep) {
    while (o->n_calls > keep) {
        cp_call *c = &o->calls[--o->n_calls];
        free(c->id.p);
        free(c->name.p);
        free(c->args.p);
    }
}

// ---------------------------------------------------------------------------------------------
// Scanning

bool cp_at(const cp_in *in, size_t at, const char *z) {
    size_t k = strlen(z);
    return at <= in->n && in->n - at >= k && memcmp(in->s + at, z, k) == 0;
}

bool cp_at_prefix(const cp_in *in, size_t at, const char *z) {
    size_t k = strlen(z), have = in->n - at;
    return at < in->n && have < k && memcmp(in->s + at, z, have) == 0;
}

size_t cp_find(const cp_in *in, size_t from, const char *z) {
    size_t k = strlen(z);
    if (k == 0 || from > in->n) return SIZE_MAX;
    for (size_t i = from; i + k <= in->n; i++) {
        const char *p = memchr(in->s + i, z[0], in->n - i - k + 1);
        if (!p) return SIZE_MAX;
        i = (size_t)(p - in->s);
        if (memcmp(p, z, k) == 0) return i;
    }
    return SIZE_MAX;
}

static bool ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

size_t cp_skip_ws(const cp_in *in, size_t at) {
    while (at < in->n && ws(in->s[at])) at++;
    return at;
}

size_t cp_utf8_tail(const char *s, size_t from, size_t to) {
    // Walk back over continuation bytes to a lead byte; incomplete if it wants more.
    size_t k = 0;
    while (k < 3 && to - k > from && ((unsigned char)s[to - k - 1] & 0xC0) == 0x80) k++;
    if (to - k == from) return 0;
    unsigned char b = (unsigned char)s[to - k - 1];
    size_t want = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    return want > k + 1 ? k + 1 : 0;
}

// Where partial text may be stopping inside one of the markers: the first position p in
// [from, to) such that s[p..to) is a proper prefix of a marker (to when none).
size_t cp_held_from(const cp_in *in, size_t from, size_t to, const char *const *marks,
                    size_t n_marks) {
    // Only the last bytes can start a marker that the text stops inside.
    size_t longest = 0;
    for (size_t m = 0; m < n_marks; m++)
        if (marks[m] && strlen(marks[m]) > longest) longest = strlen(marks[m]);
    if (to - from > longest) from = to - longest;
    for (size_t p = from; p < to; p++)
        for (size_t m = 0; m < n_marks; m++) {
            if (!marks[m] || !marks[m][0]) continue;
            size_t k = strlen(marks[m]), have = to - p;
            if (have < k && memcmp(in->s + p, marks[m], have) == 0) return p;
        }
    return to;
}

void cp_content(const cp_in *in, size_t from, size_t to, cp_out *out) {
    const cp_spec *s = in->spec;
    while (from < to) {
        if (out->content.n == 0)
            while (from < to && ws(in->s[from])) from++;
        // Drop the answer's own markers.
        size_t next = to, len = 0;
        const char *drop[2] = {s->content_open, s->content_close};
        for (int d = 0; d < 2; d++) {
            if (!drop[d]) continue;
            size_t at = cp_find(in, from, drop[d]);
            if (at < next && at + strlen(drop[d]) <= to) {
                next = at;
                len = strlen(drop[d]);
            }
        }
        cp_put(out, &out->content, in->s + from, next - from);
        from = next + len;
    }
}
