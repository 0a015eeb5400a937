// handlers_props.c - llama-server's endpoints about the server itself: GET /props (the model, the
// slots, the defaults, the chat template), POST /props (accepted with --props; mint has no
// setting to change at run time), GET /slots (each slot's state; 501 with --no-slots) and
// POST /apply-template (a chat rendered with the template, not generated).
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A request's default sampling, as llama-server's "params" of a slot report it.
static json_object *default_params(const serve_config *cfg) {
    json_object *p = json_object_new_object();
    json_object_object_add(p, "seed", json_object_new_int64(cfg->seed));
    json_object_object_add(p, "temperature", json_object_new_double(cfg->sampling.temp));
    json_object_object_add(p, "top_k", json_object_new_int(cfg->sampling.top_k));
    json_object_object_add(p, "top_p", json_object_new_double(cfg->sampling.top_p));
    json_object_object_add(p, "min_p", json_object_new_double(cfg->sampling.min_p));
    json_object_object_add(p, "repeat_last_n", json_object_new_int(cfg->sampling.repeat_last_n));
    json_object_object_add(p, "repeat_penalty",
                           json_object_new_double(cfg->sampling.repeat_penalty));
    json_object_object_add(p, "n_predict", json_object_new_int(cfg->n_predict));
    json_object_object_add(p, "max_tokens", json_object_new_int(cfg->n_predict));
    json_object_object_add(p, "ignore_eos", json_object_new_boolean(cfg->ignore_eos));
    json_object_object_add(p, "stream", json_object_new_boolean(false));
    json_object_object_add(p, "n_probs", json_object_new_int(0));
    return p;
}

static json_object *token_text(const mint_model *m, int32_t id) {
    const char *t = id >= 0 ? mint_token_text(m, id) : NULL;
    return json_object_new_string(t ? t : "");
}

enum MHD_Result handle_props(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    const serve_config *cfg = h->cfg;
    if (!strcmp(r->method, "POST")) {
        if (!cfg->props)
            return reply_error(c, 403, "permission_error", NULL,
                               "POST /props needs --props when the server starts");
        enum MHD_Result ret;
        json_object *body = reply_body_object(c, r->body, r->len, &ret);
        if (!body) return ret;
        json_object_put(body); // nothing mint-serve has can change while it runs
        json_object *o = json_object_new_object();
        json_object_object_add(o, "success", json_object_new_boolean(true));
        return reply_json(c, 200, o);
    }
    const mint_model *m = sched_model(h->e);
    mint_model_desc d;
    mint_model_describe(m, &d);
    json_object *dgs = json_object_new_object();
    json_object_object_add(dgs, "params", default_params(cfg));
    json_object_object_add(dgs, "n_ctx", json_object_new_int(cfg->n_ctx));
    json_object *mod = json_object_new_object();
    json_object_object_add(mod, "vision", json_object_new_boolean(false));
    json_object_object_add(mod, "audio", json_object_new_boolean(false));
    json_object *o = json_object_new_object();
    json_object_object_add(o, "default_generation_settings", dgs);
    json_object_object_add(o, "total_slots", json_object_new_int(cfg->parallel));
    json_object_object_add(o, "model_alias", json_object_new_string(cfg->model_name));
    json_object_object_add(o, "model_path", json_object_new_string(cfg->model_path));
    json_object_object_add(o, "modalities", mod);
    json_object_object_add(o, "endpoint_slots", json_object_new_boolean(!cfg->no_slots));
    json_object_object_add(o, "endpoint_props", json_object_new_boolean(cfg->props));
    json_object_object_add(o, "endpoint_metrics", json_object_new_boolean(true));
    json_object_object_add(o, "ui", json_object_new_boolean(!cfg->no_ui));
    json_object_object_add(o, "chat_template", json_object_new_string(h->tmpl ? h->tmpl : ""));
    json_object_object_add(o, "bos_token", token_text(m, d.bos));
    json_object_object_add(o, "eos_token", token_text(m, d.eos));
    char build[96];
    snprintf(build, sizeof build, "mint %s", mint_version());
    json_object_object_add(o, "build_info", json_object_new_string(build));
    json_object_object_add(o, "is_sleeping", json_object_new_boolean(false));
    return reply_json(c, 200, o);
}

enum MHD_Result handle_slots(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    (void)r;
    const serve_config *cfg = h->cfg;
    if (cfg->no_slots)
        return reply_error(c, 501, "not_supported_error", NULL,
                           "this server does not answer /slots (it was started with --no-slots)");
    serve_slot_info info[256];
    const int n = sched_slot_info(h->e, info, 256);
    const char *fail = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "fail_on_no_slot");
    int n_free = 0;
    json_object *list = json_object_new_array();
    for (int i = 0; i < n; i++) {
        json_object *s = json_object_new_object();
        n_free += !info[i].busy;
        json_object_object_add(s, "id", json_object_new_int(i));
        json_object_object_add(s, "n_ctx", json_object_new_int(cfg->n_ctx));
        json_object_object_add(s, "speculative", json_object_new_boolean(false));
        json_object_object_add(s, "is_processing", json_object_new_boolean(info[i].busy));
        if (info[i].busy) {
            json_object_object_add(s, "id_task", json_object_new_int64((int64_t)info[i].task));
            json_object_object_add(s, "n_prompt_tokens", json_object_new_int(info[i].n_prompt));
            json_object *next = json_object_new_object(), *arr = json_object_new_array();
            json_object_object_add(next, "has_next_token", json_object_new_boolean(true));
            json_object_object_add(next, "n_decoded", json_object_new_int(info[i].n_decoded));
            json_object_array_add(arr, next);
            json_object_object_add(s, "next_token", arr);
        }
        json_object_array_add(list, s);
    }
    if (fail && strcmp(fail, "0") && strcmp(fail, "false") && n_free == 0) {
        json_object_put(list);
        return reply_error(c, 503, "unavailable_error", NULL, "no slot available");
    }
    return reply_json(c, 200, list);
}

enum MHD_Result handle_apply_template(serve_http *h, struct MHD_Connection *c,
                                      const serve_call *r) {
    char msg[600];
    char *text = gen_chat_text(h, r, msg, sizeof msg); // as the chat endpoint renders it
    if (!text) return reply_error(c, 400, "invalid_request_error", "messages", "%s", msg);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "prompt", reply_utf8_string(text, strlen(text)));
    mint_chat_free(text);
    return reply_json(c, 200, o);
}
