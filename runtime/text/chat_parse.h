// chat_parse.h - reading a model's output back into content, reasoning and tool calls
// (internal): each format's syntax as a table row (cp_spec), the output being built (cp_out),
// and the scanners the format parsers share (chat_parse_base.c). chat_parse.c drives a parse
// (reasoning, then content and call blocks); chat_parse_calls.c reads the call blocks of the
// table's kinds;
// chat_parse_special.c the formats that are not a row (harmony, Functionary v3.2, Llama 3's
// python tag); chat_json_scan.c scans JSON that may stop anywhere.
//
// Every parser follows one rule for partial text (mint_chat_parse's `partial`): it adds to the
// output only what no continuation of the text can change. A structure the text stops inside
// reports CP_MORE after adding what is certain of it (a call whose name is whole, with the
// arguments read so far); one that no continuation can complete reports CP_BAD and adds nothing.
#ifndef MINT_CHAT_PARSE_H
#define MINT_CHAT_PARSE_H

#include "mint.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

// How a format writes its calls.
typedef enum cp_kind {
    CP_NONE,        // no calls
    CP_JSON_OBJECT, // one JSON object per call, between call_open and call_close (or bare)
    CP_JSON_ARRAY,  // section_open [{...}, ...] section_close
    CP_NAME_ARGS,   // call_open name name_close {arguments} call_close, in a section or not
    CP_XML,         // call_open name name_close (param_open key param_name_close [value_open]
                    //   value param_close)* call_close, in a section or not
    CP_SPECIAL,     // its own parser (chat_parse_special.c)
} cp_kind;

// A format's syntax. NULL markers are absent.
typedef struct cp_spec {
    cp_kind kind;                 // how calls are written
    const char *think_open;       // the reasoning block's opening ("<think>") and
    const char *think_close;      //   closing ("</think>")
    const char *content_open;     // markers around the answer, dropped from the content
    const char *content_close;    //   (Command R7B's <|START_RESPONSE|>)
    const char *section_open;     // before a group of calls ("[TOOL_CALLS]")
    const char *section_close;    // after it
    const char *call_open;        // before one call ("<tool_call>", "<function=")
    const char *call_close;       // after it
    const char *name_close;       // CP_NAME_ARGS, CP_XML: what ends the name (">")
    const char *id_open;          // CP_NAME_ARGS: between the name and name_close, an id follows
                                  //   this marker (Mistral Small 3.2's [CALL_ID])
    const char *name_key;         // CP_JSON_*: the members holding the name, the arguments (or
    const char *args_key;         //   args_key2) and the id
    const char *args_key2;        //
    const char *id_key;           //
    bool name_is_key;             // CP_JSON_ARRAY: each call is {"name": {arguments}} (Apertus)
    bool kimi_ids;                // CP_NAME_ARGS: the name is "functions.NAME:INDEX", the id all
    bool repeat_open;             // CP_NAME_ARGS: calls in a section without a closing follow one
                                  //   another (Magistral: name[ARGS]{..}name[ARGS]{..})
    const char *param_open;       // CP_XML: a parameter ("<parameter=")
    const char *param_name_close; // ... its key's end (">")
    const char *value_open;       // ... its value's start after the key, or NULL ("<arg_value>")
    const char *param_close;      // ... its end ("</parameter>")
    const char *python_tag;       // Llama 3's "<|python_tag|>": a built-in tool call follows
} cp_spec;

const cp_spec *cp_spec_of(mint_chat_format f);

// ---------------------------------------------------------------------------------------------
// Output

typedef struct cp_buf {
    char *p;       // bytes (NUL-terminated when p != NULL)
    size_t n, cap; // used / allocated
} cp_buf;

typedef struct cp_call {
    cp_buf id, name, args; // as mint_chat_tool_call
} cp_call;

typedef struct cp_out {
    cp_buf content;   // the answer
    cp_buf reasoning; // the reasoning
    cp_call *calls;   // [n_calls]
    size_t n_calls, cap_calls;
    bool oom; // an allocation failed: the parse reports MINT_E_NOMEM
} cp_out;

void cp_put(cp_out *o, cp_buf *b, const char *p, size_t n);
void cp_puts(cp_out *o, cp_buf *b, const char *z);
// Appends s[n] as the inside of a JSON string (quotes, backslashes and control characters
// escaped as nlohmann's dump writes them; UTF-8 kept).
void cp_put_json_str(cp_out *o, cp_buf *b, const char *s, size_t n);
cp_call *cp_new_call(cp_out *o);            // NULL on allocation failure (o->oom set)
void cp_drop_calls(cp_out *o, size_t keep); // back to the first `keep` calls

// ---------------------------------------------------------------------------------------------
// Input

typedef enum cp_res {
    CP_OK,   // the structure is whole; *end is after it
    CP_MORE, // the text stops inside a structure it may still complete
    CP_BAD,  // no continuation completes it
} cp_res;

typedef struct cp_in {
    const char *s;       // [n] the text
    size_t n;            //
    bool partial;        // the text may stop anywhere
    mint_chat_format f;  // the format
    const cp_spec *spec; // its syntax
    json_object *tools;  // the request's tools (parsed), or NULL
} cp_in;

// Whether s[at..n) starts with z (all of it).
bool cp_at(const cp_in *in, size_t at, const char *z);
// Whether s[at..n) is a proper prefix of z (partial text may be stopping inside z).
bool cp_at_prefix(const cp_in *in, size_t at, const char *z);
// The first occurrence of z at or after `from`, or SIZE_MAX.
size_t cp_find(const cp_in *in, size_t from, const char *z);
size_t cp_skip_ws(const cp_in *in, size_t at);
// How many bytes at the end of s[from..to) are an incomplete UTF-8 character.
size_t cp_utf8_tail(const char *s, size_t from, size_t to);
// Where partial text may be stopping inside one of the markers: the first p in [from, to) such
// that s[p..to) is a proper prefix of one (to when none).
size_t cp_held_from(const cp_in *in, size_t from, size_t to, const char *const *marks,
                    size_t n_marks);

// ---------------------------------------------------------------------------------------------
// JSON that may stop anywhere (chat_json_scan.c)

// Scans the JSON value at s[i..n): CP_OK with *end after it; CP_MORE when the text ends inside a
// valid prefix (a number or literal at the very end counts as unfinished); CP_BAD otherwise.
cp_res cp_json_value(const char *s, size_t n, size_t i, size_t *end);

#define CP_MAX_MEMBERS 16

typedef struct cp_jmember {
    size_t k_at, k_len; // the key's raw bytes (between its quotes)
    size_t v_at, v_end; // the value (v_end = n while it is unfinished)
    bool whole;         // the value is complete
} cp_jmember;

typedef struct cp_jobject {
    cp_jmember m[CP_MAX_MEMBERS]; // members seen, in order (a member whose key is not whole
    size_t n_m;                   //   yet is not listed; past CP_MAX_MEMBERS not listed)
    size_t end;                   // CP_OK: after the '}'
} cp_jobject;

// Scans the JSON object at s[i..n) (s[i] == '{'), listing its members.
cp_res cp_json_object(const char *s, size_t n, size_t i, cp_jobject *o);
// The member whose raw key is `key`, or NULL.
const cp_jmember *cp_jmember_get(const char *s, const cp_jobject *o, const char *key);
// Whether s[a..b) is exactly one JSON value (surrounding whitespace aside).
bool cp_json_whole(const char *s, size_t a, size_t b);
// Decodes the JSON string at s[i..end) (quotes included) into b.
void cp_json_unquote(cp_out *o, cp_buf *b, const char *s, size_t i, size_t end);

// ---------------------------------------------------------------------------------------------
// The format parsers

// A call block at `at` (where the format's section or call opening starts); CP_OK sets *end.
cp_res cp_calls_block(const cp_in *in, size_t at, size_t *end, cp_out *out);
// Llama 3's <|python_tag|> at `at`: the rest of the text is one call.
cp_res cp_python_tag(const cp_in *in, size_t at, size_t *end, cp_out *out);
// gpt-oss's harmony messages, Functionary v3.2's >>> segments: the whole text.
void cp_harmony(const cp_in *in, bool reasoning, cp_out *out);
void cp_functionary_v3_2(const cp_in *in, cp_out *out);

// Appends s[from..to) to the content (its leading whitespace dropped while the content is
// empty, the content markers dropped). (chat_parse_base.c)
void cp_content(const cp_in *in, size_t from, size_t to, cp_out *out);

#endif // MINT_CHAT_PARSE_H
