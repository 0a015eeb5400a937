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
    return gen_input_tokens(h, c, r, responses_to_openai, "server_error", "input");
}
