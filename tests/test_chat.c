// test_chat.c - chat templates: detection from the Jinja strings models ship, rendering
// exactly as Hugging Face's Jinja renders them (the families' sources through the Jinja engine
// and the direct C rendering of chat.h, which must agree), the token ids of a TinyLlama-Chat
// prompt, and the multi-turn property: rendering only the new turn gives the tokens the full
// rendering has.
#include "formats/gguf.h"
#include "helpers/helpers.h"
#include "runtime/text/chat.h"
#include "runtime/text/vocab.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

// The templates as the models ship them: the library holds the families' exact sources
// (runtime/text/chat.c), which test_jinja renders against jinja2.
#define zephyr_jinja mint_chat_family_jinja(MINT_CHAT_ZEPHYR)
#define llama2_jinja mint_chat_family_jinja(MINT_CHAT_LLAMA2)
#define chatml_jinja mint_chat_family_jinja(MINT_CHAT_CHATML)

Test(chat, detects_the_three_families) {
    cr_assert_eq(mint_chat_detect(zephyr_jinja), MINT_CHAT_ZEPHYR);
    cr_assert_eq(mint_chat_detect(llama2_jinja), MINT_CHAT_LLAMA2);
    cr_assert_eq(mint_chat_detect(chatml_jinja), MINT_CHAT_CHATML);
}

Test(chat, look_alikes_and_unknown_templates_are_unknown) {
    const char *others[] = {
        // mistralai/Mistral-7B-Instruct-v0.2: [INST] without <<SYS>>, no BOS per turn
        "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] "
        "' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ "
        "message['content'] + eos_token}}{% endif %}{% endfor %}",
        // Mistral v7 with a system prompt block
        "{% if message['role'] == 'system' %}{{ '[SYSTEM_PROMPT] ' + message['content'] + "
        "'[/SYSTEM_PROMPT]' }}{% endif %}[INST] <<SYS>> [/INST]",
        // Phi-3: <|user|> ... <|end|>
        "{{ bos_token }}{% for message in messages %}{{'<|' + message['role'] + '|>' + '\n' + "
        "message['content'] + '<|end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ "
        "'<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}",
        // GLM-Edge: no end-of-turn token at all
        "{% for item in messages %}{% if item['role'] == 'user' %}<|user|>\n{{ item['content'] "
        "}}{% elif item['role'] == 'assistant' %}<|assistant|>\n{{ item['content'] }}{% endif "
        "%}{% endfor %}<|assistant|>",
        // ChatGLM4
        "[gMASK]<sop>{% for item in messages %}<|{{ item['role'] }}|>\n{{ item['content'] }}{% "
        "endfor %}<|user|><|assistant|>{{ eos_token }}",
        // Phi-4: <|im_start|> with <|im_sep|>
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '<|im_sep|>' + "
        "message['content'] + '<|im_end|>'}}{% endfor %}",
        // Llama-3
        "{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + "
        "'<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' }}{% endfor %}",
        // Gemma
        "{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}",
        "",
        "not a template",
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        cr_assert_eq(mint_chat_detect(others[i]), MINT_CHAT_UNKNOWN, "template %zu", i);
    cr_assert_eq(mint_chat_detect(NULL), MINT_CHAT_UNKNOWN);
}

Test(chat, names) {
    const mint_chat_template all[] = {MINT_CHAT_ZEPHYR, MINT_CHAT_LLAMA2, MINT_CHAT_CHATML};
    for (int i = 0; i < 3; i++) cr_assert_eq(mint_chat_from_name(mint_chat_name(all[i])), all[i]);
    cr_assert_str_eq(mint_chat_name(MINT_CHAT_ZEPHYR), "zephyr");
    cr_assert_str_eq(mint_chat_name(MINT_CHAT_UNKNOWN), "unknown");
    cr_assert_eq(mint_chat_from_name("vicuna"), MINT_CHAT_UNKNOWN);
    cr_assert_eq(mint_chat_from_name(NULL), MINT_CHAT_UNKNOWN);
}

// ---------------------------------------------------------------------------------------------
// Rendering

static char *render_range(mint_chat_template t, const mint_chat_msg *m, size_t n, size_t from,
                          bool add) {
    size_t len = mint_chat_render_range(t, m, n, from, add, "<s>", "</s>", NULL, 0);
    char *buf = malloc(len + 1);
    cr_assert_eq(mint_chat_render_range(t, m, n, from, add, "<s>", "</s>", buf, len + 1), len);
    cr_assert_eq(strlen(buf), len);
    return buf;
}

// The whole conversation: chat.h's direct C rendering, which must equal the preset's Jinja
// source rendered by the Jinja engine (mint_chat_render), so every expected text below checks
// both.
static char *render(mint_chat_template t, const mint_chat_msg *m, size_t n, bool add) {
    char *s = render_range(t, m, n, 0, add);
    size_t len = mint_chat_render(t, m, n, add, "<s>", "</s>", NULL, 0);
    char *j = malloc(len + 1);
    mint_chat_render(t, m, n, add, "<s>", "</s>", j, len + 1);
    cr_assert_str_eq(j, s, "%s: the Jinja preset and the C rendering differ", mint_chat_name(t));
    free(j);
    return s;
}

// The conversation llama.cpp's test-chat-template uses.
static const mint_chat_msg conv[] = {
    {"system", "You are a helpful assistant"},
    {"user", "Hello"},
    {"assistant", "Hi there"},
    {"user", "Who are you"},
    {"assistant", "   I am an assistant   "},
    {"user", "Another question"},
};

Test(chat, zephyr_system_and_user_prompt) {
    const mint_chat_msg m[] = {{"system", "You are a friendly chatbot."}, {"user", "Hello!"}};
    char *s = render(MINT_CHAT_ZEPHYR, m, 2, true);
    cr_assert_str_eq(s, "<|system|>\nYou are a friendly chatbot.</s>\n<|user|>\nHello!</s>\n"
                        "<|assistant|>\n");
    free(s);
    s = render(MINT_CHAT_ZEPHYR, m, 2, false);
    cr_assert_str_eq(s, "<|system|>\nYou are a friendly chatbot.</s>\n<|user|>\nHello!</s>\n");
    free(s);
}

Test(chat, zephyr_conversation) {
    char *s = render(MINT_CHAT_ZEPHYR, conv, 6, true);
    cr_assert_str_eq(s, "<|system|>\nYou are a helpful assistant</s>\n<|user|>\nHello</s>\n"
                        "<|assistant|>\nHi there</s>\n<|user|>\nWho are you</s>\n"
                        "<|assistant|>\n   I am an assistant   </s>\n<|user|>\nAnother "
                        "question</s>\n<|assistant|>\n");
    free(s);
    // A role the template does not know renders nothing; no messages render nothing at all.
    const mint_chat_msg odd[] = {{"tool", "x"}, {"user", "Hi"}};
    s = render(MINT_CHAT_ZEPHYR, odd, 2, true);
    cr_assert_str_eq(s, "<|user|>\nHi</s>\n<|assistant|>\n");
    free(s);
    s = render(MINT_CHAT_ZEPHYR, NULL, 0, true);
    cr_assert_str_eq(s, "");
    free(s);
}

// Llama-2 as Meta's Jinja renders it: the same layout as llama.cpp's test expects from the
// Jinja engine for the vigogne variant of this template, with a BOS before every [INST].
Test(chat, llama2_conversation) {
    char *s = render(MINT_CHAT_LLAMA2, conv, 6, true);
    cr_assert_str_eq(s, "<s>[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello "
                        "[/INST] Hi there </s><s>[INST] Who are you [/INST] I am an assistant "
                        "</s><s>[INST] Another question [/INST]");
    free(s);
    s = render(MINT_CHAT_LLAMA2, conv + 1, 5, false); // no system message
    cr_assert_str_eq(s, "<s>[INST] Hello [/INST] Hi there </s><s>[INST] Who are you [/INST] I am "
                        "an assistant </s><s>[INST] Another question [/INST]");
    free(s);
}

// content.strip() is Python's: Unicode whitespace too. With a system block the strip can only
// reach the message's right side (and the blank lines when the message is blank).
Test(chat, llama2_strips_like_python) {
    const mint_chat_msg m[] = {
        {"user", "\xE3\x80\x80 \t hi there\xC2\xA0\n"}, // U+3000 ... U+00A0
        {"assistant", "\xE2\x80\x89ok\xE2\x80\xA8"},    // U+2009 ... U+2028
    };
    char *s = render(MINT_CHAT_LLAMA2, m, 2, true);
    cr_assert_str_eq(s, "<s>[INST] hi there [/INST] ok </s>");
    free(s);
    const mint_chat_msg sys[] = {{"system", " S "}, {"user", "  u  "}};
    s = render(MINT_CHAT_LLAMA2, sys, 2, true);
    cr_assert_str_eq(s, "<s>[INST] <<SYS>>\n S \n<</SYS>>\n\n  u [/INST]");
    free(s);
    const mint_chat_msg blank[] = {{"system", "S"}, {"user", " \n "}};
    s = render(MINT_CHAT_LLAMA2, blank, 2, true);
    cr_assert_str_eq(s, "<s>[INST] <<SYS>>\nS\n<</SYS>> [/INST]");
    free(s);
}

Test(chat, chatml_conversation) {
    char *s = render(MINT_CHAT_CHATML, conv, 6, true);
    cr_assert_str_eq(s, "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>"
                        "user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n"
                        "<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n   I am "
                        "an assistant   <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>"
                        "\n<|im_start|>assistant\n");
    free(s);
    s = render(MINT_CHAT_CHATML, NULL, 0, true);
    cr_assert_str_eq(s, "<|im_start|>assistant\n");
    free(s);
}

Test(chat, small_buffers_and_unknown_template) {
    const mint_chat_msg m[] = {{"user", "Hello"}};
    char buf[8];
    size_t n = mint_chat_render(MINT_CHAT_ZEPHYR, m, 1, true, "<s>", "</s>", buf, sizeof buf);
    cr_assert_eq(n, strlen("<|user|>\nHello</s>\n<|assistant|>\n"));
    cr_assert_str_eq(buf, "<|user|"); // cap-1 bytes and a NUL, like snprintf
    cr_assert_eq(mint_chat_render(MINT_CHAT_ZEPHYR, m, 1, true, "<s>", "</s>", NULL, 0), n);
    cr_assert_eq(mint_chat_render(MINT_CHAT_UNKNOWN, m, 1, true, "<s>", "</s>", buf, 8), 0);
    cr_assert_str_eq(buf, "");
    // A range past the end is the text after the last message's end-of-turn.
    char *s = render_range(MINT_CHAT_ZEPHYR, m, 1, 5, true);
    cr_assert_str_eq(s, "\n<|assistant|>\n");
    free(s);
}

// ---------------------------------------------------------------------------------------------
// Tokens

static mint_vocab *load_vocab(const char *rel) {
    mint_err err;
    mint_file *f = NULL;
    cr_assert_eq(mint_file_open(mt_data_path(rel), &f, &err), MINT_OK, "%s", err.msg);
    mint_vocab *v = NULL;
    cr_assert_eq(mint_vocab_load(f, &v, &err), MINT_OK, "%s", err.msg);
    mint_file_close(f);
    return v;
}

static int32_t *tok(const mint_vocab *v, const char *text, bool add_special, size_t *n) {
    mint_err err;
    size_t len = strlen(text), need = 0;
    mint_status st = mint_vocab_tokenize(v, text, len, add_special, true, NULL, 0, &need, &err);
    cr_assert(st == MINT_OK || st == MINT_E_LIMIT, "%s", err.msg);
    int32_t *ids = malloc((need + 1) * sizeof *ids);
    cr_assert_eq(mint_vocab_tokenize(v, text, len, add_special, true, ids, need, n, &err), MINT_OK,
                 "%s", err.msg);
    return ids;
}

static int32_t id_of(const mint_vocab *v, const char *text) {
    int32_t id = mint_vocab_find(v, text, strlen(text));
    cr_assert_geq(id, 0, "'%s' is not in the vocabulary", text);
    return id;
}

// The TinyLlama-Chat prompt for a system and a user message, tokenized with BOS and
// parse_special as a chat front-end does. </s> becomes EOS (2); <|...|> are plain text; the
// text after each </s> gets the space prefix, so "\n" there is "▁" + <0x0A>.
Test(chat, zephyr_prompt_token_ids) {
    mint_vocab *v = load_vocab("ggml-vocab-llama-spm.gguf");
    const mint_chat_msg m[] = {{"system", "You are a friendly chatbot."}, {"user", "Hello!"}};
    char *text = render(MINT_CHAT_ZEPHYR, m, 2, true);
    size_t n;
    int32_t *ids = tok(v, text, true, &n);
    const int32_t want[] = {1,     529,   29989, 5205,  29989, 29958, 13,    3492, 526,
                            263,   19780, 13563, 7451,  29889, 2,     29871, 13,   29966,
                            29989, 1792,  29989, 29958, 13,    10994, 29991, 2,    29871,
                            13,    29966, 29989, 465,   22137, 29989, 29958, 13};
    cr_assert_eq(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n; i++) cr_assert_eq(ids[i], want[i], "token %zu", i);
    // The key ids, looked up by their text.
    cr_assert_eq(want[0], mint_vocab_bos(v));
    cr_assert_eq(want[14], id_of(v, "</s>"));
    cr_assert_eq(want[25], mint_vocab_eos(v));
    cr_assert_eq(want[1], id_of(v, "\xE2\x96\x81<")); // "▁<": the prompt starts a raw fragment
    cr_assert_eq(want[2], id_of(v, "|"));
    cr_assert_eq(want[5], id_of(v, ">"));
    cr_assert_eq(want[6], id_of(v, "<0x0A>"));
    cr_assert_eq(want[15], id_of(v, "\xE2\x96\x81"));
    cr_assert_eq(want[17], id_of(v, "<")); // "<|user|>" follows "\n": no "▁"
    cr_assert_eq(want[19], id_of(v, "user"));
    free(ids);
    free(text);
    mint_vocab_free(v);
}

// The 32000-token vocabulary with <|im_start|> and <|im_end|> added as CONTROL tokens, as a
// ChatML model's vocabulary has them.
static mint_vocab *chatml_vocab(uint8_t **image, mint_file **file) {
    mint_err err;
    mint_file *f = NULL;
    cr_assert_eq(mint_file_open(mt_data_path("ggml-vocab-llama-spm.gguf"), &f, &err), MINT_OK);
    uint64_t n;
    mint_value_type t;
    const void *scores, *types;
    cr_assert_eq(mint_file_get_arr(f, "tokenizer.ggml.tokens", &t, &n, NULL, &err), MINT_OK);
    cr_assert_eq(mint_file_get_arr(f, "tokenizer.ggml.scores", &t, NULL, &scores, &err), MINT_OK);
    cr_assert_eq(mint_file_get_arr(f, "tokenizer.ggml.token_type", &t, NULL, &types, &err),
                 MINT_OK);
    mint_str *strs = calloc(n + 2, sizeof *strs);
    float *sc = calloc(n + 2, sizeof *sc);
    int32_t *ty = calloc(n + 2, sizeof *ty);
    for (uint64_t i = 0; i < n; i++) {
        mint_file_get_arr_str(f, "tokenizer.ggml.tokens", i, &strs[i].p, &strs[i].len, &err);
        sc[i] = ((const float *)scores)[i];
        ty[i] = ((const int32_t *)types)[i];
    }
    strs[n] = (mint_str){"<|im_start|>", 12};
    strs[n + 1] = (mint_str){"<|im_end|>", 10};
    ty[n] = ty[n + 1] = 3;
    mint_gguf_writer *w = mint_gguf_writer_create();
    mint_gguf_add_str(w, "tokenizer.ggml.model", "llama");
    mint_gguf_add_arr_str(w, "tokenizer.ggml.tokens", strs, n + 2);
    mint_gguf_add_arr(w, "tokenizer.ggml.scores", MINT_VAL_F32, sc, n + 2);
    mint_gguf_add_arr(w, "tokenizer.ggml.token_type", MINT_VAL_I32, ty, n + 2);
    size_t len;
    cr_assert_eq(mint_gguf_writer_write_mem(w, image, &len, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_gguf_parse(*image, len, "chatml-vocab", file, &err), MINT_OK, "%s", err.msg);
    mint_vocab *v = NULL;
    cr_assert_eq(mint_vocab_load(*file, &v, &err), MINT_OK, "%s", err.msg);
    mint_gguf_writer_free(w);
    free(strs);
    free(sc);
    free(ty);
    mint_file_close(f);
    return v;
}

static bool ids_equal(const int32_t *a, size_t na, const int32_t *b, size_t nb) {
    return na == nb && (na == 0 || memcmp(a, b, na * sizeof *a) == 0);
}

// For every cut k after an end-of-turn token:
//   - the text rendered from k is the tail of the full rendering;
//   - tokens(full) == tokens(head) ++ tokens(tail) (tail without BOS);
//   - when message k-1 is the assistant's reply, the prompt that asked for it (messages before
//     it, with the generation prompt) tokenizes to a prefix of tokens(head), followed by the
//     reply's own tokens and the end-of-turn token: what a chat loop holds in its context
//     after generating the reply. Evaluating tokens(tail) then continues it exactly.
static void check_turns(const mint_vocab *v, mint_chat_template t, int32_t eot,
                        const char *(*reply_text)(const char *, char *)) {
    // Llama-2's rendering starts with "<s>" itself: no BOS is added in front of it.
    bool add_bos = t != MINT_CHAT_LLAMA2;
    for (int add = 0; add < 2; add++) {
        char *full = render(t, conv, 6, add);
        size_t n_full, full_len = strlen(full);
        int32_t *full_ids = tok(v, full, add_bos, &n_full);
        if (!add_bos) cr_assert_eq(full_ids[0], mint_vocab_bos(v));
        for (size_t k = 1; k <= 6; k++) {
            if (t == MINT_CHAT_LLAMA2 && strcmp(conv[k - 1].role, "assistant") != 0) continue;
            char *tail = render_range(t, conv, 6, k, add);
            size_t tail_len = strlen(tail);
            cr_assert_leq(tail_len, full_len);
            cr_assert_str_eq(full + full_len - tail_len, tail, "cut %zu", k);
            char *head = strndup(full, full_len - tail_len);
            size_t n_head, n_tail;
            int32_t *head_ids = tok(v, head, add_bos, &n_head);
            int32_t *tail_ids = tok(v, tail, false, &n_tail);
            cr_assert_eq(n_head + n_tail, n_full, "%s cut %zu", mint_chat_name(t), k);
            cr_assert(ids_equal(head_ids, n_head, full_ids, n_head), "%s cut %zu: head",
                      mint_chat_name(t), k);
            cr_assert(ids_equal(tail_ids, n_tail, full_ids + n_head, n_tail), "%s cut %zu: tail",
                      mint_chat_name(t), k);
            if (strcmp(conv[k - 1].role, "assistant") == 0) {
                cr_assert_eq(head_ids[n_head - 1], eot, "%s cut %zu", mint_chat_name(t), k);
                char *prompt = render(t, conv, k - 1, true);
                size_t n_prompt;
                int32_t *prompt_ids = tok(v, prompt, add_bos, &n_prompt);
                cr_assert(n_prompt < n_head && ids_equal(prompt_ids, n_prompt, head_ids, n_prompt),
                          "%s cut %zu: the prompt's tokens are not a prefix", mint_chat_name(t), k);
                // Between them: the reply's tokens, whose pieces spell the reply as rendered.
                char want[128], got[128];
                const char *w = reply_text(conv[k - 1].content, want);
                size_t len = 0;
                for (size_t i = n_prompt; i + 1 < n_head; i++)
                    len += mint_vocab_token_to_piece(v, head_ids[i], false, 0, got + len,
                                                     sizeof got - len);
                got[len] = '\0';
                cr_assert_str_eq(got, w, "%s cut %zu", mint_chat_name(t), k);
                free(prompt_ids);
                free(prompt);
            }
            free(head_ids);
            free(tail_ids);
            free(head);
            free(tail);
        }
        free(full_ids);
        free(full);
    }
}

static const char *reply_as_is(const char *content, char *buf) {
    strcpy(buf, content);
    return buf;
}

// Llama-2 renders an assistant message as " " + content.strip() + " " before </s>.
static const char *reply_llama2(const char *content, char *buf) {
    size_t a = strspn(content, " "), n = strlen(content + a);
    while (n > 0 && content[a + n - 1] == ' ') n--;
    buf[0] = ' ';
    memcpy(buf + 1, content + a, n);
    strcpy(buf + 1 + n, " ");
    return buf;
}

Test(chat, zephyr_turns_tokenize_like_the_whole) {
    mint_vocab *v = load_vocab("ggml-vocab-llama-spm.gguf");
    check_turns(v, MINT_CHAT_ZEPHYR, mint_vocab_eos(v), reply_as_is);
    mint_vocab_free(v);
}

Test(chat, llama2_turns_tokenize_like_the_whole) {
    mint_vocab *v = load_vocab("ggml-vocab-llama-spm.gguf");
    check_turns(v, MINT_CHAT_LLAMA2, mint_vocab_eos(v), reply_llama2);
    mint_vocab_free(v);
}

Test(chat, chatml_turns_tokenize_like_the_whole) {
    uint8_t *image = NULL;
    mint_file *f = NULL;
    mint_vocab *v = chatml_vocab(&image, &f);
    int32_t im_end = id_of(v, "<|im_end|>");
    cr_assert_eq(im_end, 32001);
    cr_assert(mint_vocab_is_eog(v, im_end)); // found by its text, as llama.cpp does
    cr_assert_eq(mint_vocab_eot(v), im_end);
    check_turns(v, MINT_CHAT_CHATML, im_end, reply_as_is);
    mint_vocab_free(v);
    mint_file_close(f);
    free(image);
}
