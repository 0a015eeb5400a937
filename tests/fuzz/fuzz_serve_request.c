// fuzz_serve_request.c - mint-serve's request parser (tools/common/serve_request.c) on arbitrary
// bodies, as all three kinds (chat, completions, llama-server's /completion). The first byte
// picks the kind (its value mod 3) and the max_tokens cap (the rest); the body is the bytes after
// it, in a buffer of exactly its length (no NUL after it), so that a read past the end is caught.
//
// Checked: parsing is deterministic; a failure leaves a non-empty NUL-terminated message and a
// param that is NULL or a field's name; a success gives values inside their documented ranges,
// messages (none, or each) with a known role and content (chat) or exactly one prompt form
// (completions), the stop strings non-empty, top_logprobs only with logprobs, and n > 1 only when
// sampling.
#include "fuzz_util.h"
#include "serve_request.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

static bool known_param(const char *p) {
    static const char *const names[] = {"messages",
                                        "prompt",
                                        "stop",
                                        "tools",
                                        "functions",
                                        "tool_choice",
                                        "function_call",
                                        "logit_bias",
                                        "audio",
                                        "prediction",
                                        "response_format",
                                        "max_tokens",
                                        "max_completion_tokens",
                                        "temperature",
                                        "top_p",
                                        "min_p",
                                        "repeat_penalty",
                                        "top_k",
                                        "n",
                                        "stream",
                                        "ignore_eos",
                                        "seed",
                                        "logprobs",
                                        "top_logprobs",
                                        "echo",
                                        "stream_options",
                                        "n_predict",
                                        "n_probs",
                                        "return_tokens",
                                        "post_sampling_probs",
                                        "return_progress",
                                        "timings_per_token",
                                        "id_slot",
                                        "response_fields",
                                        "grammar",
                                        "json_schema",
                                        "parallel_tool_calls",
                                        "chat_template_kwargs",
                                        "continue_final_message",
                                        "add_generation_prompt",
                                        "verbose"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(p, names[i])) return true;
    return false;
}

static void check_ok(const serve_request *r, serve_kind kind, int cap) {
    FUZZ_CHECK(r->kind == kind);
    FUZZ_CHECK(r->max_tokens == -1 || r->max_tokens == 16 ||
               (r->max_tokens >= 1 && r->max_tokens <= cap));
    FUZZ_CHECK(isfinite(r->temperature) && r->temperature >= 0 && r->temperature <= 2);
    FUZZ_CHECK(r->top_p > 0 && r->top_p <= 1 && r->min_p >= 0 && r->min_p <= 1);
    FUZZ_CHECK(r->repeat_penalty >= 0.01f && r->repeat_penalty <= 100);
    FUZZ_CHECK(r->top_k >= 0 && r->n >= 1 && r->n <= SERVE_MAX_N);
    FUZZ_CHECK(r->n == 1 || r->temperature > 0);
    FUZZ_CHECK(r->top_logprobs >= 0 && r->top_logprobs <= SERVE_MAX_TOP_LP);
    FUZZ_CHECK(r->logprobs || r->top_logprobs == 0);
    FUZZ_CHECK(r->n_stop >= 0 && r->n_stop <= SERVE_MAX_STOP);
    for (int i = 0; i < r->n_stop; i++) FUZZ_CHECK(r->stop[i] && r->stop[i][0]);
    FUZZ_CHECK(r->n_bias >= 0 && r->n_bias <= SERVE_MAX_BIAS && (r->bias || !r->n_bias));
    for (int i = 0; i < r->n_bias; i++)
        FUZZ_CHECK((r->bias[i].text || r->bias[i].id >= 0) &&
                   (r->bias[i].bias == -INFINITY || isfinite(r->bias[i].bias)));
    if (kind == SERVE_CHAT) {
        FUZZ_CHECK((r->msgs || r->n_msgs == 0) && r->n_msgs >= 0 && r->n_msgs <= SERVE_MAX_MSGS);
        FUZZ_CHECK(!r->prompt && !r->prompt_ids);
        for (int i = 0; i < r->n_msgs; i++) {
            const char *role = r->msgs[i].role;
            FUZZ_CHECK(role && r->msgs[i].content);
            FUZZ_CHECK(!strcmp(role, "system") || !strcmp(role, "user") ||
                       !strcmp(role, "assistant") || !strcmp(role, "tool"));
            FUZZ_CHECK(!r->msgs[i].tool_calls || !strcmp(role, "assistant"));
        }
        FUZZ_CHECK(!r->echo);
    } else if (kind == SERVE_NATIVE) {
        FUZZ_CHECK(!r->msgs && r->prompts && r->n_prompts >= 1 &&
                   r->n_prompts <= SERVE_MAX_PROMPTS);
        for (int i = 0; i < r->n_prompts; i++)
            for (int k = 0; k < r->prompts[i].n_parts; k++) {
                const serve_part *part = &r->prompts[i].parts[k];
                FUZZ_CHECK((part->text != NULL) != (part->ids != NULL));
                FUZZ_CHECK(part->text || part->n_ids >= 1);
                for (int x = 0; x < part->n_ids; x++) FUZZ_CHECK(part->ids[x] >= 0);
            }
        FUZZ_CHECK(r->n_probs == r->top_logprobs && r->n_fields <= SERVE_MAX_FIELDS);
    } else {
        FUZZ_CHECK(!r->msgs && (r->prompt != NULL) != (r->prompt_ids != NULL));
        FUZZ_CHECK(!r->prompt_ids || r->n_prompt_ids >= 1);
        for (int i = 0; r->prompt_ids && i < r->n_prompt_ids; i++)
            FUZZ_CHECK(r->prompt_ids[i] >= 0);
        FUZZ_CHECK(r->top_logprobs <= 5);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const serve_kind kind = data[0] % 3 == 0   ? SERVE_CHAT
                            : data[0] % 3 == 1 ? SERVE_COMPLETION
                                               : SERVE_NATIVE;
    const int cap = 1 + (data[0] / 3) * 40;
    const size_t len = size - 1;
    char *body = malloc(len ? len : 1); // exactly the body: no NUL after it
    FUZZ_CHECK(body);
    if (len) memcpy(body, data + 1, len);
    serve_request r, again;
    char msg[300], msg2[300];
    const char *param = (const char *)1, *param2 = NULL;
    memset(msg, 0x5A, sizeof msg);
    // OpenAI's defaults (mint-serve passes its command line's).
    const serve_defaults d = {.max_tokens_cap = cap,
                              .max_tokens = kind == SERVE_COMPLETION ? 16 : -1,
                              .temperature = 1.0f,
                              .top_p = 1.0f,
                              .repeat_penalty = 1.0f};
    const bool ok = serve_parse_request(body, len, kind, &d, &r, msg, sizeof msg, &param);
    const bool ok2 = serve_parse_request(body, len, kind, &d, &again, msg2, sizeof msg2, &param2);
    FUZZ_CHECK(ok == ok2);
    if (ok) {
        check_ok(&r, kind, cap);
        FUZZ_CHECK(r.n_msgs == again.n_msgs && r.n_prompt_ids == again.n_prompt_ids &&
                   r.max_tokens == again.max_tokens && r.n == again.n && r.n_stop == again.n_stop &&
                   r.temperature == again.temperature);
        FUZZ_CHECK(param == NULL);
        serve_request_free(&r);
        serve_request_free(&again);
    } else {
        const size_t n = strnlen(msg, sizeof msg);
        FUZZ_CHECK(n > 0 && n < sizeof msg && !strcmp(msg, msg2));
        FUZZ_CHECK(param == param2 && (!param || known_param(param)));
    }
    free(body);
    return 0;
}
