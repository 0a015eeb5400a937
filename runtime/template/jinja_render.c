// jinja_render.c - one render of a chat template: the variables Hugging Face's
// apply_chat_template gives it (messages, add_generation_prompt, bos_token, eos_token, and
// tools / documents as None, then whatever a JSON object of variables adds or replaces: a
// request's messages with their tool calls, its tools, keyword arguments), the arena set up and
// torn down, errors caught.
#include "runtime/template/jinja_render.h"

#include "runtime/template/jinja.h"

#include <stdlib.h>
#include <string.h>

static jj_value opt_str(jj_ctx *c, const char *s) {
    return s ? jj_strn(c, s, strlen(s)) : JJ_NONE;
}

int jinja_render(const char *tmpl, size_t tlen, const jinja_vars *v, char **out, size_t *out_len,
                 char *err, size_t errlen) {
    *out = NULL;
    *out_len = 0;
    jj_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return 1;
    }
    int rc = 0;
    if (setjmp(c->fail)) {
        rc = c->raised ? 2 : 1;
        snprintf(err, errlen, "%s", c->err);
    } else {
        size_t n_tok;
        jj_tok *toks = jj_lex(c, tmpl, tlen, &n_tok);
        jj_node *root = jj_parse(c, toks, n_tok);
        jj_env e = {.c = c, .caller = JJ_UNDEF};
        jj_frame *g = jj_alloc(c, sizeof *g);
        g->vars = jj_dict_new(c).d;
        e.globals = g;
        jj_value msgs = jj_list_new(c, JL_LIST);
        for (size_t i = 0; i < v->n_msgs; i++) {
            jj_value m = jj_dict_new(c);
            jj_dict_set(c, m.d, jj_strz("role"), opt_str(c, v->msgs[i].role));
            jj_dict_set(c, m.d, jj_strz("content"), opt_str(c, v->msgs[i].content));
            jj_list_push(c, msgs.l, m);
        }
        jj_dict_set(c, g->vars, jj_strz("messages"), msgs);
        jj_dict_set(c, g->vars, jj_strz("tools"), JJ_NONE);
        jj_dict_set(c, g->vars, jj_strz("documents"), JJ_NONE);
        jj_dict_set(c, g->vars, jj_strz("add_generation_prompt"),
                    jj_bool(v->add_generation_prompt));
        jj_dict_set(c, g->vars, jj_strz("bos_token"), jj_strz(v->bos ? v->bos : ""));
        jj_dict_set(c, g->vars, jj_strz("eos_token"), jj_strz(v->eos ? v->eos : ""));
        if (v->json) {
            jj_value o = jj_from_json(c, v->json, v->json_len, "template variables");
            if (o.t != JV_DICT) jj_fail(c, "template variables: not a JSON object");
            for (size_t i = 0; i < o.d->n; i++) jj_dict_set(c, g->vars, o.d->k[i], o.d->v[i]);
        }
        c->now = v->now;
        jj_buf b = {0};
        jj_buf_put(c, &b, "", 0);
        jj_exec(&e, g, root, &b);
        char *s = malloc(b.n + 1);
        if (!s) jj_fail(c, "out of memory");
        memcpy(s, b.p, b.n + 1);
        *out = s;
        *out_len = b.n;
    }
    jj_arena_free(c);
    free(c);
    return rc;
}
