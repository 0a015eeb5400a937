// handlers_infill.c - llama-server's POST /infill (fill-in-the-middle, what editor plugins such as
// llama.vim call): the body is checked and its prompt built by tools/common/infill_prompt.c (in
// llama-server's order and budgets), then goes through /completion's flow as a prompt of token
// ids: the same fields, jobs, stream and answer. A vocabulary without the FIM prefix, suffix or
// middle token answers 501, as llama-server does, before the body is read.
#include "gen.h"
#include "infill_prompt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum MHD_Result handle_infill(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    const mint_fim_tokens fim = mint_vocab_fim_tokens(sched_model(h->e));
    if (fim.pre < 0 || fim.suf < 0 || fim.mid < 0) // llama-server checks this before the body
        return reply_error(c, 501, "not_supported_error", NULL,
                           "Infill is not supported by this model:%s%s%s",
                           fim.pre < 0 ? " prefix token is missing." : "",
                           fim.suf < 0 ? " suffix token is missing." : "",
                           fim.mid < 0 ? " middle token is missing." : "");
    enum MHD_Result ret;
    json_object *o = reply_body_object(c, r->body, r->len, &ret);
    if (!o) return ret;
    const char *param = NULL, *bad = infill_check(o, h->n_vocab, &param);
    if (bad) {
        json_object_put(o);
        return reply_error(c, 400, "invalid_request_error", param, "%s", bad);
    }
    const infill_limits lim = {h->cfg->n_batch, h->cfg->n_ctx, h->cfg->n_predict,
                               h->cfg->spm_infill};
    int32_t *t = NULL;
    int n = 0;
    char msg[MINT_ERR_MSG_MAX];
    if (!infill_tokens(sched_model(h->e), &fim, o, &lim, &t, &n, msg, sizeof msg)) {
        json_object_put(o);
        return reply_error(c, 400, "invalid_request_error", NULL, "%s", msg);
    }
    // /completion's body with the sequence as its prompt.
    json_object *ids = json_object_new_array();
    for (int k = 0; k < n; k++) json_object_array_add(ids, json_object_new_int(t[k]));
    free(t);
    json_object_object_del(o, "input_prefix");
    json_object_object_del(o, "input_suffix");
    json_object_object_del(o, "input_extra");
    json_object_object_add(o, "prompt", ids);
    const char *body = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    const serve_call call = {r->method, r->url, body, strlen(body)};
    ret = gen_request(h, c, &call, GEN_NATIVE);
    json_object_put(o);
    return ret;
}
