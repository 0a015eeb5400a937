// chat.c - the chat API: any model's Jinja chat template rendered with mint's Jinja engine
// (runtime/template/jinja.h) exactly as Hugging Face's apply_chat_template renders it; the three
// families mint recognises in a model's template (zephyr, llama2, chatml: mint_chat_detect),
// each with its source as the models ship it and a direct C rendering, used only for rendering
// from a cut (mint_chat_render_range in chat.h); test_chat.c checks it equals the Jinja
// rendering of the family's source. The names --chat-template takes (llama.cpp's built-in
// templates, which are not these sources: llama.cpp's "llama2" has no <<SYS>> and no BOS) are
// runtime/text/chat_presets.c's.
//
//   Zephyr (TinyLlama-Chat, docs/formats.md 6.5), per message and after the last one:
//     "<|{role}|>\n{content}{eos}\n" ... "<|assistant|>\n"
//   Llama-2 (meta-llama/Llama-2-*-chat-hf), system folded into the first user turn,
//   contents stripped of whitespace (Python's str.strip):
//     "{bos}[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST] {assistant} {eos}"
//     "{bos}[INST] {user} [/INST]"        (no generation prompt: the text already ends there)
//   ChatML:
//     "<|im_start|>{role}\n{content}<|im_end|>\n" ... "<|im_start|>assistant\n"
#include "runtime/text/chat.h"

#include "runtime/template/jinja_render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// Output: snprintf-like, with a prefix of the text skipped (for rendering from a cut).

typedef struct sink {
    char *buf;   // [cap] destination, may be NULL when cap == 0
    size_t cap;  // bytes available including the NUL
    size_t pos;  // bytes of rendered text so far, skipped ones included
    size_t skip; // the first skip bytes of the text are not written
    size_t mark; // pos right after the last end-of-turn (a cut point)
} sink;

static void put_n(sink *s, const char *p, size_t n) {
    // Text byte pos+i goes to buf[pos + i - skip] when that is inside [0, cap-1).
    size_t lo = s->pos, hi = s->pos + n;
    s->pos = hi;
    if (hi <= s->skip || s->cap == 0) return;
    size_t from = lo > s->skip ? lo : s->skip;
    size_t dst = from - s->skip, room = s->cap - 1;
    if (dst >= room) return;
    size_t k = hi - from;
    if (k > room - dst) k = room - dst;
    memcpy(s->buf + dst, p + (from - lo), k);
}

static void put(sink *s, const char *str) {
    if (str) put_n(s, str, strlen(str));
}

// ---------------------------------------------------------------------------------------------
// Python's str.strip(), on UTF-8: whitespace is U+0009-000D, U+001C-0020, U+0085, U+00A0,
// U+1680, U+2000-200A, U+2028, U+2029, U+202F, U+205F and U+3000.

static bool is_ws3(const unsigned char *p) {
    if (p[0] == 0xE1) return p[1] == 0x9A && p[2] == 0x80;
    if (p[0] == 0xE2 && p[1] == 0x80)
        return p[2] <= 0x8A || p[2] == 0xA8 || p[2] == 0xA9 || p[2] == 0xAF;
    if (p[0] == 0xE2 && p[1] == 0x81) return p[2] == 0x9F;
    return p[0] == 0xE3 && p[1] == 0x80 && p[2] == 0x80;
}

static bool is_ws1(unsigned char c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
}

// Length of the whitespace character starting at s[0..n), or 0.
static size_t ws_at(const unsigned char *s, size_t n) {
    if (n >= 1 && is_ws1(s[0])) return 1;
    if (n >= 2 && s[0] == 0xC2 && (s[1] == 0x85 || s[1] == 0xA0)) return 2;
    if (n >= 3 && is_ws3(s)) return 3;
    return 0;
}

// Length of the whitespace character ending at s[n-1], or 0.
static size_t ws_before(const unsigned char *s, size_t n) {
    if (n >= 1 && is_ws1(s[n - 1])) return 1;
    if (n >= 2 && s[n - 2] == 0xC2 && (s[n - 1] == 0x85 || s[n - 1] == 0xA0)) return 2;
    if (n >= 3 && s[n - 3] >= 0xE1 && is_ws3(s + n - 3)) return 3;
    return 0;
}

// Trims whitespace at the left (when `left`) and at the right of s[*n]; returns the new start.
static const char *strip(const char *str, size_t *n, bool left) {
    const unsigned char *s = (const unsigned char *)str;
    size_t k;
    while (left && *n > 0 && (k = ws_at(s, *n)) > 0) {
        s += k;
        *n -= k;
    }
    while (*n > 0 && (k = ws_before(s, *n)) > 0) *n -= k;
    return (const char *)s;
}

// ---------------------------------------------------------------------------------------------
// Templates. Each renders all messages into the sink and sets s->mark after every end-of-turn;
// `cut` receives the mark as it stands once message from-1 is done (0 when from is 0).

typedef struct render_args {
    const mint_chat_msg *msgs; // [n] the conversation
    size_t n;                  // number of messages
    size_t from;               // first message of the range (for the cut)
    bool add_assistant;        // end with the start of the assistant's turn
    const char *bos;           // BOS text ("<s>")
    const char *eos;           // EOS text ("</s>")
} render_args;

static const char *role_of(const mint_chat_msg *m) {
    return m->role ? m->role : "";
}

static const char *content_of(const mint_chat_msg *m) {
    return m->content ? m->content : "";
}

static bool is_role(const mint_chat_msg *m, const char *role) {
    return strcmp(role_of(m), role) == 0;
}

static void note_cut(const render_args *a, const sink *s, size_t i, size_t *cut) {
    if (i + 1 == a->from) *cut = s->mark;
}

static void render_zephyr(const render_args *a, sink *s, size_t *cut) {
    for (size_t i = 0; i < a->n; i++) {
        const mint_chat_msg *m = &a->msgs[i];
        // The template has branches for these three roles only; others render nothing.
        if (is_role(m, "user") || is_role(m, "system") || is_role(m, "assistant")) {
            put(s, "<|");
            put(s, role_of(m));
            put(s, "|>\n");
            put(s, content_of(m));
            put(s, a->eos);
            s->mark = s->pos;
            put(s, "\n");
        }
        if (i + 1 == a->n && a->add_assistant) put(s, "<|assistant|>\n");
        note_cut(a, s, i, cut);
    }
}

static void render_chatml(const render_args *a, sink *s, size_t *cut) {
    for (size_t i = 0; i < a->n; i++) {
        const mint_chat_msg *m = &a->msgs[i];
        put(s, "<|im_start|>");
        put(s, role_of(m));
        put(s, "\n");
        put(s, content_of(m));
        put(s, "<|im_end|>");
        s->mark = s->pos;
        put(s, "\n");
        note_cut(a, s, i, cut);
    }
    if (a->add_assistant) put(s, "<|im_start|>assistant\n");
}

static void render_llama2(const render_args *a, sink *s, size_t *cut) {
    // A leading system message is not rendered itself but folded into the first turn.
    const char *sys = a->n > 0 && is_role(&a->msgs[0], "system") ? content_of(&a->msgs[0]) : NULL;
    size_t first = sys ? 1 : 0;
    if (sys) note_cut(a, s, 0, cut);
    for (size_t i = first; i < a->n; i++) {
        const mint_chat_msg *m = &a->msgs[i];
        bool user = is_role(m, "user"), assistant = is_role(m, "assistant");
        if (user || assistant) {
            // content = "<<SYS>>\n" + sys + "\n<</SYS>>\n\n" + message on the first turn, then
            // content.strip(): the system block protects the left; the right is the message's.
            const char *c = content_of(m);
            size_t len = strlen(c);
            bool with_sys = sys && i == first;
            c = strip(c, &len, !with_sys);
            if (user) {
                put(s, a->bos);
                put(s, "[INST] ");
            } else {
                put(s, " ");
            }
            if (with_sys) {
                put(s, "<<SYS>>\n");
                put(s, sys);
                put(s, "\n<</SYS>>");
                if (len > 0) put(s, "\n\n");
            }
            put_n(s, c, len);
            put(s, user ? " [/INST]" : " ");
            if (assistant) put(s, a->eos);
            s->mark = s->pos;
        }
        note_cut(a, s, i, cut);
    }
}

static size_t render(mint_chat_template t, const render_args *a, sink *s) {
    size_t cut = 0;
    switch (t) {
    case MINT_CHAT_ZEPHYR:
        render_zephyr(a, s, &cut);
        break;
    case MINT_CHAT_LLAMA2:
        render_llama2(a, s, &cut);
        break;
    case MINT_CHAT_CHATML:
        render_chatml(a, s, &cut);
        break;
    case MINT_CHAT_UNKNOWN:
        break;
    }
    return cut;
}

size_t mint_chat_render_range(mint_chat_template t, const mint_chat_msg *msgs, size_t n,
                              size_t from, bool add_assistant, const char *bos, const char *eos,
                              char *buf, size_t cap) {
    if (!msgs) n = 0;
    render_args a = {msgs, n, from < n ? from : n, add_assistant, bos, eos};
    // Pass 1 finds the cut (nothing is written); pass 2 writes the text after it.
    size_t cut = 0;
    if (a.from > 0) {
        sink probe = {NULL, 0, 0, 0, 0};
        cut = render(t, &a, &probe);
    }
    sink s = {buf, buf ? cap : 0, 0, cut, 0};
    render(t, &a, &s);
    size_t len = s.pos - cut;
    if (s.cap > 0) s.buf[len < s.cap ? len : s.cap - 1] = '\0';
    return len;
}

// ---------------------------------------------------------------------------------------------
// The Jinja API

// The families' sources, as the models ship them in tokenizer_config.json.
// TinyLlama/TinyLlama-1.1B-Chat-v1.0 and HuggingFaceH4/zephyr-7b-beta (docs/formats.md 6.5).
static const char *const zephyr_jinja =
    "{% for message in messages %}\n"
    "{% if message['role'] == 'user' %}\n"
    "{{ '<|user|>\n' + message['content'] + eos_token }}\n"
    "{% elif message['role'] == 'system' %}\n"
    "{{ '<|system|>\n' + message['content'] + eos_token }}\n"
    "{% elif message['role'] == 'assistant' %}\n"
    "{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n"
    "{% endif %}\n"
    "{% if loop.last and add_generation_prompt %}\n"
    "{{ '<|assistant|>' }}\n"
    "{% endif %}\n"
    "{% endfor %}";

// meta-llama/Llama-2-7b-chat-hf.
static const char *const llama2_jinja =
    "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set "
    "system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set "
    "system_message = false %}{% endif %}{% for message in loop_messages %}{% if "
    "(message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation "
    "roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == "
    "0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + "
    "'\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}{% set content = message['content'] "
    "%}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + "
    "' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + "
    "eos_token }}{% endif %}{% endfor %}";

// teknium/OpenHermes-2.5-Mistral-7B (the common ChatML template).
static const char *const chatml_jinja =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ "
    "'<|im_start|>assistant\\n' }}{% endif %}";

const char *mint_chat_family_jinja(mint_chat_template t) {
    switch (t) {
    case MINT_CHAT_ZEPHYR:
        return zephyr_jinja;
    case MINT_CHAT_LLAMA2:
        return llama2_jinja;
    case MINT_CHAT_CHATML:
        return chatml_jinja;
    case MINT_CHAT_UNKNOWN:
        break;
    }
    return NULL;
}

mint_status mint_chat_apply(const char *jinja, const mint_chat_msg *msgs, size_t n,
                            bool add_generation_prompt, const char *bos, const char *eos,
                            char **out, size_t *out_len, mint_err *err) {
    mint_err scratch;
    if (!err) err = &scratch;
    size_t len_scratch;
    if (!out_len) out_len = &len_scratch;
    if (out) *out = NULL;
    *out_len = 0;
    err->code = MINT_OK;
    err->msg[0] = '\0';
    if (!out || (!msgs && n > 0)) {
        err->code = MINT_E_ARG;
        snprintf(err->msg, sizeof err->msg, "mint_chat_apply: out is NULL or msgs is NULL");
        return err->code;
    }
    if (!jinja) {
        err->code = MINT_E_NOT_FOUND;
        snprintf(err->msg, sizeof err->msg,
                 "the model has no chat template (tokenizer.chat_template): give one with "
                 "--chat-template NAME (llama.cpp's built-in names: chatml, llama3, ...) or "
                 "--chat-template-file FILE");
        return err->code;
    }
    jinja_vars v = {msgs, n, add_generation_prompt, bos, eos, NULL, 0, 0};
    char msg[sizeof err->msg - 16]; // room for the "chat template: " prefix
    int rc = jinja_render(jinja, strlen(jinja), &v, out, out_len, msg, sizeof msg);
    if (rc == 0) return MINT_OK;
    // raise_exception's message is the template's own refusal, passed on verbatim.
    err->code = rc == 2 ? MINT_E_ARG : MINT_E_FORMAT;
    snprintf(err->msg, sizeof err->msg, "%s%s", rc == 2 ? "" : "chat template: ", msg);
    // An engine error may quote the template (a name, a literal) with its line breaks in it:
    // the message stays one line.
    if (rc != 2)
        for (char *c = err->msg; *c; c++)
            if ((unsigned char)*c < 0x20) *c = ' ';
    return err->code;
}

void mint_chat_free(char *text) {
    free(text);
}

size_t mint_chat_render(mint_chat_template t, const mint_chat_msg *msgs, size_t n,
                        bool add_assistant, const char *bos, const char *eos, char *buf,
                        size_t cap) {
    char *text = NULL;
    size_t len = 0;
    const char *src = mint_chat_family_jinja(t);
    if (!src || mint_chat_apply(src, msgs, msgs ? n : 0, add_assistant, bos, eos, &text, &len,
                                NULL) != MINT_OK)
        len = 0;
    if (buf && cap > 0) {
        size_t k = len < cap - 1 ? len : cap - 1;
        if (k) memcpy(buf, text, k);
        buf[k] = '\0';
    }
    free(text);
    return len;
}

// ---------------------------------------------------------------------------------------------
// Names and detection

mint_chat_template mint_chat_from_name(const char *name) {
    if (!name) return MINT_CHAT_UNKNOWN;
    if (strcmp(name, "zephyr") == 0) return MINT_CHAT_ZEPHYR;
    if (strcmp(name, "llama2") == 0) return MINT_CHAT_LLAMA2;
    if (strcmp(name, "chatml") == 0) return MINT_CHAT_CHATML;
    return MINT_CHAT_UNKNOWN;
}

const char *mint_chat_name(mint_chat_template t) {
    switch (t) {
    case MINT_CHAT_ZEPHYR:
        return "zephyr";
    case MINT_CHAT_LLAMA2:
        return "llama2";
    case MINT_CHAT_CHATML:
        return "chatml";
    case MINT_CHAT_UNKNOWN:
        break;
    }
    return "unknown";
}

static bool has(const char *s, const char *sub) {
    return strstr(s, sub) != NULL;
}

// Signatures, checked in llama.cpp's order (llm_chat_detect_template), but narrower: a family
// is recognised only when mint renders it exactly, so look-alikes (Phi-4 and SmolVLM use
// <|im_start|>; Mistral uses [INST] without <<SYS>>; Phi-3 and GLM use <|user|>) are UNKNOWN.
mint_chat_template mint_chat_detect(const char *jinja) {
    if (!jinja) return MINT_CHAT_UNKNOWN;
    if (has(jinja, "<|im_start|>")) {
        if (has(jinja, "<|im_sep|>") || has(jinja, "<end_of_utterance>")) return MINT_CHAT_UNKNOWN;
        return has(jinja, "<|im_end|>") ? MINT_CHAT_CHATML : MINT_CHAT_UNKNOWN;
    }
    if (has(jinja, "[INST]")) {
        // Meta's template: system folded in as <<SYS>>, BOS before every [INST], stripped text.
        if (has(jinja, "[SYSTEM_PROMPT]") || has(jinja, "[AVAILABLE_TOOLS]"))
            return MINT_CHAT_UNKNOWN;
        return has(jinja, "<<SYS>>") && has(jinja, "[/INST]") ? MINT_CHAT_LLAMA2
                                                              : MINT_CHAT_UNKNOWN;
    }
    // Zephyr closes every message with eos_token; Phi-3 uses <|end|>, GLM-4 starts with
    // [gMASK], GLM-Edge writes no end token at all.
    if (has(jinja, "<|user|>") && has(jinja, "<|assistant|>") && has(jinja, "eos_token") &&
        !has(jinja, "<|end|>") && !has(jinja, "[gMASK]"))
        return MINT_CHAT_ZEPHYR;
    return MINT_CHAT_UNKNOWN;
}
