// chat_parse.c - a model's output read back as content, reasoning_content and tool_calls
// (mint_chat_parse), in the syntax of its chat format (chat_parse_base.c's rows): the driver (a
// reasoning block first, then content and call blocks in turn) and the difference of two parses
// (mint_chat_diff) that a server streams as deltas.
#include "runtime/text/chat_parse.h"

#include "base/error.h"
#include "formats/json_doc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// The driver

static bool ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// The reasoning block at the start; returns where the rest begins (in->n when the text ends
// inside it).
static size_t reasoning(const cp_in *in, bool open, cp_out *out) {
    const cp_spec *s = in->spec;
    size_t p = cp_skip_ws(in, 0);
    if (cp_at(in, p, s->think_open)) {
        p += strlen(s->think_open);
        open = true;
    } else if (!open) {
        // Partial text may stop inside the opening itself: nothing is certain yet.
        return in->partial && cp_at_prefix(in, p, s->think_open) ? in->n : 0;
    }
    size_t e = cp_find(in, p, s->think_close), stop = e, next = in->n;
    if (e == SIZE_MAX) {
        stop = in->n;
        if (in->partial) {
            const char *m[1] = {s->think_close};
            stop = cp_held_from(in, p, in->n, m, 1);
            stop -= cp_utf8_tail(in->s, p, stop);
        }
    } else {
        next = e + strlen(s->think_close);
    }
    // Trimmed of whitespace on both sides (partial text holds its trailing whitespace back
    // until more text shows whether it is inside the reasoning).
    while (p < stop && ws(in->s[p])) p++;
    while (stop > p && ws(in->s[stop - 1])) stop--;
    cp_put(out, &out->reasoning, in->s + p, stop - p);
    return next;
}

// Content and call blocks from p to the end.
static void body(const cp_in *in, size_t p, bool tools, cp_out *out) {
    const cp_spec *s = in->spec;
    const char *starts[3] = {NULL, NULL, NULL};
    if (tools && s->kind != CP_NONE) {
        starts[0] = s->section_open;
        starts[1] =
            s->kind == CP_JSON_ARRAY || (s->call_open && !s->call_open[0]) ? NULL : s->call_open;
        starts[2] = s->python_tag;
    }
    const char *held[5] = {starts[0], starts[1], starts[2], s->content_open, s->content_close};
    bool after_calls = false;
    size_t next[3] = {SIZE_MAX - 1, SIZE_MAX - 1, SIZE_MAX - 1}; // SIZE_MAX - 1: not looked for
    while (p < in->n) {
        // The first call block (each marker's next place is kept until p passes it, so text
        // full of false starts, such as Llama 3's "{", is scanned once).
        size_t m = SIZE_MAX, which = 0;
        for (size_t k = 0; k < 3; k++) {
            if (!starts[k] || !starts[k][0]) continue;
            if (next[k] < p || next[k] == SIZE_MAX - 1) next[k] = cp_find(in, p, starts[k]);
            if (next[k] < m) {
                m = next[k];
                which = k;
            }
        }
        if (after_calls) {
            // Whitespace between or after call blocks is not content; partial text holds it
            // back while what follows may still be another block.
            size_t q = cp_skip_ws(in, p);
            if (q == in->n) return;
            if (q == m) p = q;
            if (m == SIZE_MAX && in->partial && cp_held_from(in, q, in->n, starts, 3) == q) return;
        }
        if (m == SIZE_MAX) {
            size_t stop = in->n;
            if (in->partial) {
                stop = cp_held_from(in, p, in->n, held, 5);
                stop -= cp_utf8_tail(in->s, p, stop);
            }
            cp_content(in, p, stop, out);
            return;
        }
        cp_content(in, p, m, out);
        size_t keep = out->n_calls, end = m;
        cp_res r = starts[which] == s->python_tag ? cp_python_tag(in, m, &end, out)
                                                  : cp_calls_block(in, m, &end, out);
        if (r == CP_OK) {
            p = end;
            after_calls = true;
            continue;
        }
        if (r == CP_MORE && in->partial) return;
        // Not a call after all: the marker is text.
        cp_drop_calls(out, keep);
        size_t k = strlen(starts[which]);
        cp_content(in, m, m + k, out);
        p = m + k;
        after_calls = false;
    }
}

static void parse(const cp_in *in, const mint_chat_parse_opts *o, cp_out *out) {
    bool extract = o->reasoning_format != MINT_REASONING_FORMAT_NONE;
    if (in->f == MINT_CHAT_FORMAT_GPT_OSS) {
        cp_harmony(in, extract, out);
        return;
    }
    if (in->f == MINT_CHAT_FORMAT_FUNCTIONARY_V3_2 && o->parse_tools) {
        cp_functionary_v3_2(in, out);
        return;
    }
    size_t p = 0;
    if (extract && in->spec->think_open) p = reasoning(in, o->reasoning_open, out);
    // Reasoning left in the content keeps the opening the prompt wrote (as llama-server does).
    if (!extract && in->spec->think_open && o->reasoning_open)
        cp_puts(out, &out->content, in->spec->think_open);
    body(in, p, o->parse_tools, out);
}

mint_chat_parse_opts mint_chat_default_parse_opts(void) {
    return (mint_chat_parse_opts){.reasoning_format = MINT_REASONING_FORMAT_AUTO,
                                  .parse_tools = true};
}

static char *take(cp_out *o, cp_buf *b, size_t *len) {
    if (!b->p) cp_put(o, b, "", 0);
    if (len) *len = b->n;
    char *p = b->p;
    b->p = NULL;
    return p;
}

mint_status mint_chat_parse(mint_chat_format f, const char *text, size_t len, bool partial,
                            const mint_chat_parse_opts *o, mint_chat_parsed *out, mint_err *err) {
    mint_err_clear(err);
    if (!out) return mint_fail(err, MINT_E_ARG, "mint_chat_parse: out is NULL");
    memset(out, 0, sizeof *out);
    if (!text && len > 0) return mint_fail(err, MINT_E_ARG, "mint_chat_parse: text is NULL");
    if ((unsigned)f >= MINT_CHAT_FORMAT_COUNT)
        return mint_fail(err, MINT_E_ARG, "mint_chat_parse: unknown format %d", (int)f);
    mint_chat_parse_opts opts = o ? *o : mint_chat_default_parse_opts();
    cp_in in = {text ? text : "", len, partial, f, cp_spec_of(f), NULL};
    if (opts.tools && opts.parse_tools) {
        mint_err e2;
        if (mint_json_parse(opts.tools, strlen(opts.tools), "tools", 0, &in.tools, &e2) != MINT_OK)
            return mint_fail(err, MINT_E_ARG, "%s", e2.msg);
    }
    cp_out w = {0};
    parse(&in, &opts, &w);
    json_object_put(in.tools);
    if (!w.oom) {
        out->content = take(&w, &w.content, &out->content_len);
        out->reasoning_content = take(&w, &w.reasoning, &out->reasoning_len);
    }
    if (!w.oom && w.n_calls) {
        out->tool_calls = calloc(w.n_calls, sizeof *out->tool_calls);
        if (!out->tool_calls) w.oom = true;
        for (size_t i = 0; !w.oom && i < w.n_calls; i++) {
            mint_chat_tool_call *c = &out->tool_calls[i];
            c->id = take(&w, &w.calls[i].id, NULL);
            c->name = take(&w, &w.calls[i].name, NULL);
            c->arguments = take(&w, &w.calls[i].args, NULL);
            out->n_tool_calls = i + 1;
        }
    }
    cp_drop_calls(&w, 0);
    free(w.calls);
    free(w.content.p);
    free(w.reasoning.p);
    if (w.oom) {
        mint_chat_parsed_free(out);
        return mint_fail(err, MINT_E_NOMEM, "mint_chat_parse: out of memory");
    }
    return MINT_OK;
}

void mint_chat_parsed_free(mint_chat_parsed *p) {
    if (!p) return;
    free(p->content);
    free(p->reasoning_content);
    for (size_t i = 0; i < p->n_tool_calls; i++) {
        free(p->tool_calls[i].id);
        free(p->tool_calls[i].name);
        free(p->tool_calls[i].arguments);
    }
    free(p->tool_calls);
    memset(p, 0, sizeof *p);
}

// ---------------------------------------------------------------------------------------------
// Deltas

// next's text[nn] extends prev's text[pn]: the appended part in *d, *dn.
static bool extends(const char *prev, size_t pn, const char *next, size_t nn, const char **d,
                    size_t *dn) {
    if (pn > nn || (pn && memcmp(prev, next, pn) != 0)) return false;
    *d = next + pn;
    *dn = nn - pn;
    return true;
}

mint_status mint_chat_diff(const mint_chat_parsed *prev, const mint_chat_parsed *next,
                           mint_chat_delta *out, size_t cap, size_t *n_out, mint_err *err) {
    mint_err_clear(err);
    static const mint_chat_parsed empty = {"", 0, "", 0, NULL, 0};
    if (!prev) prev = &empty;
    if (!next || !n_out || (!out && cap))
        return mint_fail(err, MINT_E_ARG, "mint_chat_diff: next, out or n_out is NULL");
    *n_out = 0;
    size_t n = 0;
    const char *d;
    size_t dn;
    if (!extends(prev->reasoning_content ? prev->reasoning_content : "", prev->reasoning_len,
                 next->reasoning_content ? next->reasoning_content : "", next->reasoning_len, &d,
                 &dn))
        return mint_fail(err, MINT_E_ARG, "mint_chat_diff: the reasoning does not extend");
    mint_chat_delta tmp[2];
    size_t nt = 0;
    if (dn) tmp[nt++] = (mint_chat_delta){MINT_DELTA_REASONING, 0, NULL, NULL, d, dn};
    if (!extends(prev->content ? prev->content : "", prev->content_len,
                 next->content ? next->content : "", next->content_len, &d, &dn))
        return mint_fail(err, MINT_E_ARG, "mint_chat_diff: the content does not extend");
    if (dn) tmp[nt++] = (mint_chat_delta){MINT_DELTA_CONTENT, 0, NULL, NULL, d, dn};
    if (next->n_tool_calls < prev->n_tool_calls)
        return mint_fail(err, MINT_E_ARG, "mint_chat_diff: %zu tool calls after %zu",
                         next->n_tool_calls, prev->n_tool_calls);
    for (size_t i = 0; i < nt; i++) {
        if (n == cap) return mint_fail(err, MINT_E_LIMIT, "mint_chat_diff: %zu deltas", cap);
        out[n++] = tmp[i];
    }
    for (size_t i = 0; i < next->n_tool_calls; i++) {
        const mint_chat_tool_call *nc = &next->tool_calls[i];
        bool old = i < prev->n_tool_calls;
        const mint_chat_tool_call *pc = old ? &prev->tool_calls[i] : NULL;
        // A call's id may show up after its name (Mistral Nemo writes it last): a server fixes
        // the id when it first streams the call.
        if (old && (strcmp(pc->name, nc->name) != 0 || (pc->id[0] && strcmp(pc->id, nc->id) != 0)))
            return mint_fail(err, MINT_E_ARG, "mint_chat_diff: tool call %zu changed its name", i);
        if (!extends(old ? pc->arguments : "", old ? strlen(pc->arguments) : 0, nc->arguments,
                     strlen(nc->arguments), &d, &dn))
            return mint_fail(err, MINT_E_ARG,
                             "mint_chat_diff: tool call %zu's arguments do not extend", i);
        if (old && dn == 0) continue;
        if (n == cap) return mint_fail(err, MINT_E_LIMIT, "mint_chat_diff: %zu deltas", cap);
        out[n++] = (mint_chat_delta){MINT_DELTA_TOOL_CALL,  i, old ? NULL : nc->id,
                                     old ? NULL : nc->name, d, dn};
    }
    *n_out = n;
    return MINT_OK;
}
