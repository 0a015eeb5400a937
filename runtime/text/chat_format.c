// chat_format.c - chat formats: which family of reasoning and tool call syntax a template writes
// (mint_chat_format_detect, by the markers in its source, in the order llama.cpp's
// common/chat.cpp tests them), and rendering a conversation with tools, reasoning and keyword
// arguments through the template the way llama-server does (mint_chat_apply_ex). The output
// side, reading the model's text back, is chat_parse.c's.
//
// What llama-server does to a request before its template sees it, and mint does alike:
//   - messages as OpenAI writes them, every content a string ("" for null), reasoning_content,
//     name and tool_call_id when given, tool calls as {"type": "function", "function": {"name",
//     "arguments"}, "id"};
//   - a tool call's arguments given to the template as an object when the template reads them as
//     one, else as the JSON text (a probe render decides, below);
//   - a leading system message merged into the next message ("system\nuser") when the template
//     drops the system role (a probe render decides), "developer" renamed "system" (not for
//     gpt-oss, whose template knows the developer role);
//   - the variables tools (when there are any), enable_thinking, date_string and datetime (today,
//     as llama.cpp's "%d %b %Y" and "%b %d %Y"), then the request's keyword arguments.
#include "runtime/template/jinja_render.h"
#include "base/error.h"
#include "formats/json_doc.h"
#include "mint.h"
#include "runtime/text/chat.h"
#include "runtime/text/chat_parse.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

// ---------------------------------------------------------------------------------------------
// Names and detection

static const char *const format_names[MINT_CHAT_FORMAT_COUNT] = {
    [MINT_CHAT_FORMAT_CONTENT_ONLY] = "content-only",
    [MINT_CHAT_FORMAT_HERMES] = "hermes",
    [MINT_CHAT_FORMAT_LLAMA3] = "llama3",
    [MINT_CHAT_FORMAT_MISTRAL_NEMO] = "mistral-nemo",
    [MINT_CHAT_FORMAT_MAGISTRAL] = "magistral",
    [MINT_CHAT_FORMAT_DEEPSEEK_R1] = "deepseek-r1",
    [MINT_CHAT_FORMAT_DEEPSEEK_V3_1] = "deepseek-v3.1",
    [MINT_CHAT_FORMAT_FUNCTIONARY_V3_1] = "functionary-v3.1",
    [MINT_CHAT_FORMAT_FUNCTIONARY_V3_2] = "functionary-v3.2",
    [MINT_CHAT_FORMAT_FIREFUNCTION_V2] = "firefunction-v2",
    [MINT_CHAT_FORMAT_COMMAND_R7B] = "command-r7b",
    [MINT_CHAT_FORMAT_GPT_OSS] = "gpt-oss",
    [MINT_CHAT_FORMAT_QWEN3_CODER] = "qwen3-coder",
    [MINT_CHAT_FORMAT_SEED_OSS] = "seed-oss",
    [MINT_CHAT_FORMAT_KIMI_K2] = "kimi-k2",
    [MINT_CHAT_FORMAT_GLM_4_5] = "glm-4.5",
    [MINT_CHAT_FORMAT_MINIMAX_M2] = "minimax-m2",
    [MINT_CHAT_FORMAT_APRIEL] = "apriel",
    [MINT_CHAT_FORMAT_GRANITE] = "granite",
    [MINT_CHAT_FORMAT_APERTUS] = "apertus",
    [MINT_CHAT_FORMAT_NEMOTRON_V2] = "nemotron-v2",
};

const char *mint_chat_format_name(mint_chat_format f) {
    return (unsigned)f < MINT_CHAT_FORMAT_COUNT ? format_names[f] : "unknown";
}

static bool has(const char *s, const char *sub) {
    return strstr(s, sub) != NULL;
}

mint_chat_format mint_chat_format_detect(const char *src) {
    if (!src) return MINT_CHAT_FORMAT_CONTENT_ONLY;
    // Formats with markers no other template writes come first.
    if (has(src, "<|channel|>")) return MINT_CHAT_FORMAT_GPT_OSS;
    if (has(src, ">>>all")) return MINT_CHAT_FORMAT_FUNCTIONARY_V3_2;
    if (has(src, "<|START_ACTION|>") && has(src, "<|START_RESPONSE|>"))
        return MINT_CHAT_FORMAT_COMMAND_R7B;
    if (has(src, "<|tool_calls_section_begin|>")) return MINT_CHAT_FORMAT_KIMI_K2;
    if (has(src, "<\xef\xbd\x9c"
                 "tool\xe2\x96\x81"
                 "calls\xe2\x96\x81"
                 "begin\xef\xbd\x9c>")) {
        // R1's calls are "function<｜tool▁sep｜>name\n```json\n{...}\n```"; V3.1's
        // "name<｜tool▁sep｜>{...}".
        if (has(src, "```json")) return MINT_CHAT_FORMAT_DEEPSEEK_R1;
        return MINT_CHAT_FORMAT_DEEPSEEK_V3_1;
    }
    if (has(src, "<seed:tool_call>")) return MINT_CHAT_FORMAT_SEED_OSS;
    if (has(src, "<minimax:tool_call>")) return MINT_CHAT_FORMAT_MINIMAX_M2;
    if (has(src, "<tool_call>") && has(src, "<function=") && has(src, "<parameter="))
        return MINT_CHAT_FORMAT_QWEN3_CODER;
    if (has(src, "<tool_call>") && has(src, "<arg_key>") && has(src, "<arg_value>"))
        return MINT_CHAT_FORMAT_GLM_4_5;
    if (has(src, "[TOOL_CALLS]"))
        return has(src, "[ARGS]") ? MINT_CHAT_FORMAT_MAGISTRAL : MINT_CHAT_FORMAT_MISTRAL_NEMO;
    if (has(src, " functools[")) return MINT_CHAT_FORMAT_FIREFUNCTION_V2;
    if (has(src, "<|tools_prefix|>")) return MINT_CHAT_FORMAT_APERTUS;
    if (has(src, "<TOOLCALL>")) return MINT_CHAT_FORMAT_NEMOTRON_V2;
    if (has(src, "<|tool_call|>")) return MINT_CHAT_FORMAT_GRANITE;
    if (has(src, "<tool_calls>") && has(src, "</tool_calls>")) return MINT_CHAT_FORMAT_APRIEL;
    // Functionary v3.1 is a Llama 3.1 template that writes calls as <function=name>.
    if (has(src, "<function=") && has(src, "<|start_header_id|>"))
        return MINT_CHAT_FORMAT_FUNCTIONARY_V3_1;
    if (has(src, "<tool_call>") && !has(src, "]<]minimax[>[")) return MINT_CHAT_FORMAT_HERMES;
    if (has(src, "<|start_header_id|>") && has(src, "ipython")) return MINT_CHAT_FORMAT_LLAMA3;
    return MINT_CHAT_FORMAT_CONTENT_ONLY;
}

bool mint_chat_format_reasons(const char *src) {
    if (!src) return false;
    mint_chat_format f = mint_chat_format_detect(src);
    const cp_spec *s = cp_spec_of(f);
    if (f == MINT_CHAT_FORMAT_GPT_OSS || has(src, "enable_thinking")) return true;
    return s->think_open && has(src, s->think_open);
}

// ---------------------------------------------------------------------------------------------
// Options

mint_chat_opts mint_chat_default_opts(void) {
    return (mint_chat_opts){.add_generation_prompt = true, .reasoning = MINT_REASONING_AUTO};
}

// ---------------------------------------------------------------------------------------------
// Probes: what the template does with a tool call's arguments and with a system message,
// learnt by rendering small conversations (the markers are unlikely in any template).

#define PROBE_VALUE "mint-probe-value-7f3a"
#define PROBE_SYS   "mint-probe-system-7f3a"

static bool probe(const char *src, const char *json, const char *want, const char *refuse) {
    jinja_vars v = {NULL, 0, true, "", "", json, strlen(json), 0};
    char *text = NULL, msg[256];
    size_t len = 0;
    bool yes = false;
    if (jinja_render(src, strlen(src), &v, &text, &len, msg, sizeof msg) == 0)
        yes = strstr(text, want) && !(refuse && strstr(text, refuse));
    free(text);
    return yes;
}

// Reads arguments as an object: given one, it shows the value (bare, quoted or in JSON text) and
// does not print the dict as Python does ({'arg': '...'}, what a template that expects the JSON
// text shows).
static bool object_arguments(const char *src) {
    return probe(src,
                 "{\"messages\": [{\"role\": \"user\", \"content\": \"u\"}, {\"role\": "
                 "\"assistant\", \"content\": \"\", \"tool_calls\": [{\"id\": \"call00001\", "
                 "\"type\": \"function\", \"function\": {\"name\": \"tool1\", \"arguments\": "
                 "{\"arg\": \"" PROBE_VALUE "\"}}}]}, {\"role\": \"tool\", \"content\": \"r\", "
                 "\"tool_call_id\": \"call00001\"}], \"tools\": [{\"type\": \"function\", "
                 "\"function\": {\"name\": \"tool1\", \"description\": \"d\", \"parameters\": "
                 "{\"type\": \"object\", \"properties\": {\"arg\": {\"type\": \"string\"}}, "
                 "\"required\": [\"arg\"]}}}]}",
                 PROBE_VALUE, "{'arg': '" PROBE_VALUE "'}");
}

static bool system_role(const char *src) {
    return probe(src,
                 "{\"messages\": [{\"role\": \"system\", \"content\": \"" PROBE_SYS "\"}, "
                 "{\"role\": \"user\", \"content\": \"u\"}]}",
                 PROBE_SYS, NULL);
}

// ---------------------------------------------------------------------------------------------
// The variables

static mint_status parse_json(const char *text, const char *what, json_type want, json_object **out,
                              mint_err *err) {
    mint_err e2;
    if (mint_json_parse(text, strlen(text), what, 0, out, &e2) != MINT_OK)
        return mint_fail(err, MINT_E_ARG, "%s", e2.msg);
    if (!json_object_is_type(*out, want)) {
        json_object_put(*out);
        *out = NULL;
        return mint_fail(err, MINT_E_ARG, "%s: expected a JSON %s", what,
                         want == json_type_array ? "array" : "object");
    }
    return MINT_OK;
}

static void add_str(json_object *o, const char *key, const char *s) {
    json_object_object_add(o, key, json_object_new_string(s ? s : ""));
}

// One tool call in the shape llama-server gives templates; arguments as an object when the
// template reads objects and the text is a JSON object.
static mint_status tool_call(json_object *in, bool object_args, size_t mi, size_t ci,
                             json_object **out, mint_err *err) {
    json_object *fn = NULL, *name = NULL, *args = NULL, *id = NULL;
    if (!json_object_is_type(in, json_type_object) ||
        !json_object_object_get_ex(in, "function", &fn) ||
        !json_object_is_type(fn, json_type_object) ||
        !json_object_object_get_ex(fn, "name", &name) ||
        !json_object_is_type(name, json_type_string))
        return mint_fail(err, MINT_E_ARG,
                         "messages[%zu].tool_calls[%zu]: expected {\"type\": \"function\", "
                         "\"function\": {\"name\": ..., \"arguments\": ...}}",
                         mi, ci);
    json_object_object_get_ex(fn, "arguments", &args);
    json_object *o = json_object_new_object(), *f = json_object_new_object();
    json_object_object_add(o, "type", json_object_new_string("function"));
    json_object_object_add(f, "name", json_object_get(name));
    json_object *a = NULL;
    if (args && json_object_is_type(args, json_type_string) && object_args) {
        mint_err e2;
        const char *t = json_object_get_string(args);
        if (mint_json_parse(t, strlen(t), "arguments", 0, &a, &e2) != MINT_OK) {
            json_object_put(o);
            json_object_put(f);
            return mint_fail(err, MINT_E_ARG, "messages[%zu].tool_calls[%zu].arguments: %s", mi, ci,
                             e2.msg);
        }
    } else if (args && !json_object_is_type(args, json_type_string) && !object_args) {
        // A caller's object given to a template that prints text: its JSON text, as OpenAI
        // sends it.
        a = json_object_new_string(json_object_to_json_string_ext(
            args, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    } else {
        a = args ? json_object_get(args) : json_object_new_string("{}");
    }
    json_object_object_add(f, "arguments", a);
    json_object_object_add(o, "function", f);
    if (json_object_object_get_ex(in, "id", &id) && json_object_is_type(id, json_type_string))
        json_object_object_add(o, "id", json_object_get(id));
    *out = o;
    return MINT_OK;
}

static mint_status messages(const mint_chat_msg_ex *msgs, size_t n, bool object_args,
                            bool system_ok, bool keep_developer, json_object **out, mint_err *err) {
    json_object *list = json_object_new_array();
    size_t first = 0;
    const char *merged_system = NULL;
    if (n > 0 && !system_ok && msgs[0].role &&
        (!strcmp(msgs[0].role, "system") ||
         (!keep_developer && !strcmp(msgs[0].role, "developer")))) {
        merged_system = msgs[0].content ? msgs[0].content : "";
        first = 1;
    }
    for (size_t i = first; i < n; i++) {
        const mint_chat_msg_ex *m = &msgs[i];
        json_object *o = json_object_new_object();
        const char *role = m->role ? m->role : "";
        if (!keep_developer && !strcmp(role, "developer")) role = "system";
        add_str(o, "role", role);
        if (merged_system && i == first) {
            const char *c = m->content ? m->content : "";
            size_t a = strlen(merged_system), b = strlen(c);
            char *s = malloc(a + b + 2);
            if (!s) {
                json_object_put(o);
                json_object_put(list);
                return mint_fail(err, MINT_E_NOMEM, "chat: out of memory");
            }
            memcpy(s, merged_system, a);
            s[a] = '\n';
            memcpy(s + a + 1, c, b + 1);
            add_str(o, "content", s);
            free(s);
        } else {
            add_str(o, "content", m->content);
        }
        if (m->reasoning_content && m->reasoning_content[0])
            add_str(o, "reasoning_content", m->reasoning_content);
        if (m->name && m->name[0]) add_str(o, "name", m->name);
        if (m->tool_call_id && m->tool_call_id[0]) add_str(o, "tool_call_id", m->tool_call_id);
        json_object_array_add(list, o);
        if (m->tool_calls) {
            char what[64];
            snprintf(what, sizeof what, "messages[%zu].tool_calls", i);
            json_object *calls = NULL, *norm = json_object_new_array();
            json_object_object_add(o, "tool_calls", norm);
            mint_status st = parse_json(m->tool_calls, what, json_type_array, &calls, err);
            for (size_t k = 0; st == MINT_OK && k < json_object_array_length(calls); k++) {
                json_object *c = NULL;
                st = tool_call(json_object_array_get_idx(calls, k), object_args, i, k, &c, err);
                if (st == MINT_OK) json_object_array_add(norm, c);
            }
            json_object_put(calls);
            if (st != MINT_OK) {
                json_object_put(list);
                return st;
            }
        }
    }
    // A lone system message the template cannot show is dropped, as llama-server does.
    *out = list;
    return MINT_OK;
}

static void add_date(json_object *vars, const char *key, const char *fmt, time_t now) {
    struct tm tm;
    char buf[64];
    localtime_r(&now, &tm);
    size_t k = strftime(buf, sizeof buf, fmt, &tm);
    json_object_object_add(vars, key, json_object_new_string_len(buf, (int)k));
}

// The variables of a render as one JSON object (NULL msgs allowed when n == 0).
static mint_status build_vars(const char *jinja, const mint_chat_msg_ex *msgs, size_t n,
                              const mint_chat_opts *opts, json_object **out, mint_err *err) {
    json_object *tools = NULL, *kwargs = NULL, *list = NULL;
    mint_status st = MINT_OK;
    if (opts->tools) st = parse_json(opts->tools, "tools", json_type_array, &tools, err);
    if (st == MINT_OK && opts->kwargs)
        st = parse_json(opts->kwargs, "chat_template_kwargs", json_type_object, &kwargs, err);
    bool gpt_oss = mint_chat_format_detect(jinja) == MINT_CHAT_FORMAT_GPT_OSS;
    if (st == MINT_OK)
        st = messages(msgs, n, object_arguments(jinja), system_role(jinja), gpt_oss, &list, err);
    if (st != MINT_OK) {
        json_object_put(tools);
        json_object_put(kwargs);
        return st;
    }
    json_object *vars = json_object_new_object();
    json_object_object_add(vars, "messages", list);
    if (tools && json_object_array_length(tools) > 0)
        json_object_object_add(vars, "tools", json_object_get(tools));
    json_object_object_add(vars, "add_generation_prompt",
                           json_object_new_boolean(opts->add_generation_prompt));
    add_str(vars, "bos_token", opts->bos);
    add_str(vars, "eos_token", opts->eos);
    bool thinking = opts->reasoning == MINT_REASONING_ON ||
                    (opts->reasoning == MINT_REASONING_AUTO && mint_chat_format_reasons(jinja));
    json_object_object_add(vars, "enable_thinking", json_object_new_boolean(thinking));
    time_t now = opts->now ? (time_t)opts->now : time(NULL);
    add_date(vars, "datetime", "%b %d %Y", now);
    add_date(vars, "date_string", "%d %b %Y", now);
    if (kwargs) {
        json_object_object_foreach(kwargs, k, v)
            json_object_object_add(vars, k, json_object_get(v));
    }
    json_object_put(tools);
    json_object_put(kwargs);
    *out = vars;
    return MINT_OK;
}

static mint_status check_args(const char *jinja, const mint_chat_msg_ex *msgs, size_t n, char **out,
                              mint_err *err) {
    if (!out || (!msgs && n > 0))
        return mint_fail(err, MINT_E_ARG, "mint_chat_apply_ex: out is NULL or msgs is NULL");
    if (!jinja) {
        // The same refusal as mint_chat_apply's.
        char *t = NULL;
        return mint_chat_apply(NULL, NULL, 0, false, NULL, NULL, &t, NULL, err);
    }
    return MINT_OK;
}

mint_status mint_chat_vars_json(const char *jinja, const mint_chat_msg_ex *msgs, size_t n,
                                const mint_chat_opts *o, char **out, mint_err *err) {
    mint_err_clear(err);
    if (out) *out = NULL;
    mint_status st = check_args(jinja, msgs, n, out, err);
    if (st != MINT_OK) return st;
    mint_chat_opts opts = o ? *o : mint_chat_default_opts();
    json_object *vars = NULL;
    st = build_vars(jinja, msgs, n, &opts, &vars, err);
    if (st != MINT_OK) return st;
    const char *text = json_object_to_json_string_ext(vars, JSON_C_TO_STRING_PLAIN |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE);
    *out = strdup(text);
    json_object_put(vars);
    return *out ? MINT_OK : mint_fail(err, MINT_E_NOMEM, "chat: out of memory");
}

mint_status mint_chat_apply_ex(const char *jinja, const mint_chat_msg_ex *msgs, size_t n,
                               const mint_chat_opts *o, char **out, size_t *out_len,
                               mint_err *err) {
    mint_err scratch;
    if (!err) err = &scratch;
    size_t len_scratch;
    if (!out_len) out_len = &len_scratch;
    mint_err_clear(err);
    if (out) *out = NULL;
    *out_len = 0;
    mint_status st = check_args(jinja, msgs, n, out, err);
    if (st != MINT_OK) return st;
    mint_chat_opts opts = o ? *o : mint_chat_default_opts();
    json_object *vars = NULL;
    st = build_vars(jinja, msgs, n, &opts, &vars, err);
    if (st != MINT_OK) return st;
    const char *text = json_object_to_json_string_ext(vars, JSON_C_TO_STRING_PLAIN |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE);
    int64_t now = opts.now ? opts.now : (int64_t)time(NULL);
    jinja_vars v = {NULL,         0,  opts.add_generation_prompt, opts.bos, opts.eos, text,
                    strlen(text), now};
    char msg[MINT_ERR_MSG_MAX - 16];
    int rc = jinja_render(jinja, strlen(jinja), &v, out, out_len, msg, sizeof msg);
    json_object_put(vars);
    if (rc == 0) return MINT_OK;
    if (rc == 2) return mint_fail(err, MINT_E_ARG, "%s", msg);
    mint_fail(err, MINT_E_FORMAT, "chat template: %s", msg);
    mint_err_one_line(err);
    return MINT_E_FORMAT;
}

// ---------------------------------------------------------------------------------------------
// The generation prompt's reasoning block

bool mint_chat_prompt_opens_reasoning(mint_chat_format f, const char *prompt, size_t len) {
    const cp_spec *s = cp_spec_of(f);
    if (!prompt || !s->think_open) return false;
    while (len > 0 && (prompt[len - 1] == ' ' || prompt[len - 1] == '\n' ||
                       prompt[len - 1] == '\t' || prompt[len - 1] == '\r'))
        len--;
    size_t k = strlen(s->think_open);
    return len >= k && memcmp(prompt + len - k, s->think_open, k) == 0;
}
