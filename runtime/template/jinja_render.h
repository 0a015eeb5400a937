// jinja_render.h - rendering a chat template with the Jinja engine (runtime/template/jinja.h), as
// Hugging Face's apply_chat_template renders it.
#ifndef MINT_JINJA_RENDER_H
#define MINT_JINJA_RENDER_H

#include "mint.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct jinja_vars {
    const mint_chat_msg *msgs;  // [n_msgs] the conversation: messages = [{role, content}, ...]
    size_t n_msgs;              // count
    bool add_generation_prompt; // the variable of that name
    const char *bos;            // bos_token ("" when NULL)
    const char *eos;            // eos_token ("" when NULL)
    const char *json;           // [json_len] a JSON object whose members become variables after
    size_t json_len;            //   the ones above, replacing them ("messages", "tools", a
                                //   request's keyword arguments ...); NULL for none
    int64_t now;                // strftime_now's time (seconds since the epoch); 0: the clock's
} jinja_vars;

// Renders tmpl[0..tlen) with the variables of v (a JSON text that is not an object, or invalid,
// fails the render naming the byte) into *out (malloc, NUL-terminated, *out_len bytes). Returns 0
// on success, 1 on an error (err: one line, naming the template line where there is one), 2 when
// the template called raise_exception (err: its message verbatim).
int jinja_render(const char *tmpl, size_t tlen, const jinja_vars *v, char **out, size_t *out_len,
                 char *err, size_t errlen);

#endif // MINT_JINJA_RENDER_H
