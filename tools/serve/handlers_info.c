// handlers_info.c - the endpoints that say what the server is: the chat page at /, /favicon.ico,
// /health, /v1/models and /metrics.
#include "handlers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char mint_web_chat_html[];
extern const char mint_web_views_js[];

enum MHD_Result handle_page(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    (void)r;
    if (h->cfg->no_ui)
        return reply_error(c, 404, "not_found_error", NULL, "no page here (started with --no-ui)");
    // The page with the shared views inlined where its marker is.
    static const char mark[] = "/*MINT_VIEWS*/";
    const char *at = strstr(mint_web_chat_html, mark);
    if (!at) return reply_text(c, 500, "text/plain", "page template broken\n", 21);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f) return MHD_NO;
    fwrite(mint_web_chat_html, 1, (size_t)(at - mint_web_chat_html), f);
    fputs(mint_web_views_js, f);
    fputs(at + strlen(mark), f);
    fclose(f);
    enum MHD_Result ret = reply_text(c, 200, "text/html; charset=utf-8", buf, n);
    free(buf);
    return ret;
}

enum MHD_Result handle_favicon(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    (void)h, (void)r; // browsers ask for it: no icon, and no 404
    return reply_text(c, 204, "image/x-icon", "", 0);
}

enum MHD_Result handle_health(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    (void)r;
    const bool down = atomic_load(&h->stopping);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "status", json_object_new_string(down ? "shutting down" : "ok"));
    return reply_json(c, down ? 503 : 200, o);
}

enum MHD_Result handle_models(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    (void)r;
    json_object *m = json_object_new_object();
    json_object_object_add(m, "id", json_object_new_string(h->cfg->model_name));
    json_object_object_add(m, "object", json_object_new_string("model"));
    json_object_object_add(m, "created", json_object_new_int64(0));
    json_object_object_add(m, "owned_by", json_object_new_string("mint"));
    // llama-server's --alias A,B,C and --tags X,Y: every alias, and the tags.
    json_object *aliases = json_object_new_array(), *tags = json_object_new_array();
    const char *lists[2] = {h->cfg->alias ? h->cfg->alias : h->cfg->model_name, h->cfg->tags};
    json_object *into[2] = {aliases, tags};
    for (int k = 0; k < 2; k++)
        for (const char *p = lists[k]; p && *p;) {
            const size_t n = strcspn(p, ",");
            if (n) json_object_array_add(into[k], json_object_new_string_len(p, (int)n));
            p += n + (p[n] == ',');
        }
    json_object_object_add(m, "aliases", aliases);
    json_object_object_add(m, "tags", tags);
    json_object *data = json_object_new_array();
    json_object_array_add(data, m);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "object", json_object_new_string("list"));
    json_object_object_add(o, "data", data);
    return reply_json(c, 200, o);
}

enum MHD_Result handle_metrics(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    (void)r;
    char *t =
        metrics_text(h->m, sched_queue_length(h->e), sched_busy_slots(h->e), h->cfg->parallel);
    struct MHD_Response *res =
        MHD_create_response_from_buffer(t ? strlen(t) : 0, t ? t : "", MHD_RESPMEM_MUST_COPY);
    free(t);
    if (!res) return MHD_NO;
    char start[32];
    snprintf(start, sizeof start, "%lld", (long long)metrics_start_time(h->m));
    MHD_add_response_header(res, "Content-Type", "text/plain; version=0.0.4");
    MHD_add_response_header(res, "Process-Start-Time-Unix", start); // llama-server's header
    enum MHD_Result ret = reply_queue(c, 200, res);
    MHD_destroy_response(res);
    return ret;
}
