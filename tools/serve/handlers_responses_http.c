// handlers_responses_http.c - the Responses API's endpoints: POST /v1/responses (and
// /responses), a generation through handlers_gen.c's flow answered by handlers_responses.c, and
// POST /v1/responses/input_tokens (and /responses/input_tokens), the prompt's token count of the
// same body as the chat endpoint would render it. Apart from handlers_responses.c because calls go
// one way (handlers_gen.c -> handlers_responses.c).
#include "gen.h"
#include "responses.h"

#include <stdlib.h>
#include <string.h>

enum MHD_Result handle_responses(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    return gen_request(h, c, r, GEN_RESPONSES);
}

enum MHD_Result handle_responses_tokens(serve_http *h, struct MHD_Connection *c,
                                        const serve_call *r) {
    char *body = NULL, msg[600];
    int status = 400;
    if (!responses_to_openai(r->body, r->len, &body, msg, sizeof msg, &status))
        return reply_error(c, (unsigned)status,
                           status == 400 ? "invalid_request_error" : "server_error", NULL, "%s",
                           msg);
    const serve_call chat = {r->method, r->url, body, strlen(body)};
    int32_t *ids = NULL;
    int n = 0;
    const bool ok = gen_chat_tokens(h, &chat, &ids, &n, msg, sizeof msg);
    free(body);
    free(ids);
    if (!ok) return reply_error(c, 400, "invalid_request_error", "input", "%s", msg);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "input_tokens", json_object_new_int(n));
    return reply_json(c, 200, o);
}
