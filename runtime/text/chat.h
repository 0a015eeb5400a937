// chat.h - chat templates beyond the public mint_chat_* calls: rendering only the new part of
// a conversation, for multi-turn chat that evaluates each turn's new tokens only.
//
// Every template here closes a turn with an end-of-turn token: Zephyr and Llama-2 with EOS
// ("</s>"), ChatML with "<|im_end|>". The tokenizer restarts cleanly right after a special
// token (the next raw fragment gets its space prefix whether or not the token is in the same
// string), so a rendering cut right after such a token tokenizes to exactly the tokens of the
// whole. mint_chat_render_range renders from such a cut:
//
//   full  = mint_chat_render(t, msgs, n, add_assistant, ...)
//   tail  = mint_chat_render_range(t, msgs, n, k, add_assistant, ...)
//   head  = full minus tail (ends with the end-of-turn token closing message k-1)
//   tokens(full) == tokens(head) ++ tokens(tail, add_special = false)   (parse_special on)
//
// when the end-of-turn token is a special token of the vocabulary. In a chat loop, head is
// what the context already holds when message k-1 is the assistant's reply: the previous
// prompt, the reply's tokens and the EOS that ended it. So each turn evaluates only
// tokens(tail). For Llama-2 this needs the reply's tokens to be those of " {reply} </s>" (the
// template adds the spaces); Zephyr and ChatML close the reply directly with the token.
#ifndef MINT_CHAT_H
#define MINT_CHAT_H

#include "mint.h"

#include <stdbool.h>
#include <stddef.h>

// Renders messages [from, n) of the conversation msgs[0..n): the text of the full rendering
// (as mint_chat_render) from the end of message from-1 on, where a message ends right after its
// end-of-turn token (Zephyr / ChatML put the newline that follows into the next message), or at
// the end of its own text when it has none (a Llama-2 user turn). from = 0 is the full
// rendering. Output like snprintf: at most cap-1 bytes and a NUL; returns the length wanted.
// The Jinja source of a family as its models ship it (TinyLlama-Chat's Zephyr, Meta's Llama-2-chat,
// OpenHermes' ChatML): what mint_chat_render renders and mint_chat_detect recognises; NULL for
// MINT_CHAT_UNKNOWN. (mint_chat_preset's names are llama.cpp's built-ins, not these.)
const char *mint_chat_family_jinja(mint_chat_template t);

size_t mint_chat_render_range(mint_chat_template t, const mint_chat_msg *msgs, size_t n,
                              size_t from, bool add_assistant, const char *bos, const char *eos,
                              char *buf, size_t cap);

// The variables mint_chat_apply_ex gives the template, as one JSON object text (malloc; the
// tests hand it to jinja2). Same failures as mint_chat_apply_ex before it renders.
mint_status mint_chat_vars_json(const char *jinja, const mint_chat_msg_ex *msgs, size_t n,
                                const mint_chat_opts *o, char **out, mint_err *err);

#endif // MINT_CHAT_H
