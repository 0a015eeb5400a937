// test_serve.c - mint-serve through HTTP, as a client sees it: a server per test on a free
// loopback port (tests/helpers/server.c), requests through curl. The API's shapes (models,
// completions and chat, one body and server-sent events, logprobs, n, stop, usage, tokenize,
// /v1/next, /metrics), OpenAI's error shape for bad requests, the API key, and temperature-0
// answers equal to mint-run's. The synthetic small model where the text does not matter,
// stories260K (shared data) where it does. Faults and concurrency: test_serve_faults.c.
#include "helpers/helpers.h"
#include "helpers/server.h"
#include "helpers/tool.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *stories(void) {
    return keep(mt_data_path("stories260K.gguf"));
}

// The chunks of a server-sent event stream: every event one line "data: {json}", the last
// "data: [DONE]". Returns an array (the caller puts it).
static json_object *sse_chunks(const char *body) {
    json_object *arr = json_object_new_array();
    bool done = false;
    const char *p = body;
    cr_assert(*p, "empty stream");
    while (*p) {
        const char *end = strstr(p, "\n\n");
        cr_assert(end, "an event does not end with a blank line: %.200s", p);
        cr_assert(!done, "an event after [DONE]: %.200s", p);
        cr_assert(!strncmp(p, "data: ", 6), "not a data line: %.200s", p);
        cr_assert_null(memchr(p, '\n', (size_t)(end - p)), "an event of several lines: %.200s", p);
        if (end - p == 12 && !strncmp(p, "data: [DONE]", 12)) {
            done = true;
        } else {
            json_object *o = json_tokener_parse(p + 6); // stops at the newline
            cr_assert(o && json_object_is_type(o, json_type_object), "bad chunk: %.200s", p);
            json_object_array_add(arr, o);
        }
        p = end + 2;
    }
    cr_assert(done, "the stream does not end with data: [DONE]");
    return arr;
}

// mint-run's text for a prompt at temperature 0 (it prints the prompt first).
static char *mint_run_text(const char *model, const char *prompt, int n) {
    char *out, *err;
    int rc =
        run_tool(&out, &err, "mint-run", "-m '%s' -p '%s' --temp 0 -n %d -t 1", model, prompt, n);
    cr_assert_eq(rc, 0, "%s", err);
    free(err);
    cr_assert(!strncmp(out, prompt, strlen(prompt)), "mint-run: %s", out);
    char *text = strdup(out + strlen(prompt));
    free(out);
    size_t l = strlen(text);
    if (l && text[l - 1] == '\n') text[l - 1] = '\0';
    return text;
}

static char *completion_text(const mt_server *s, const char *prompt, int n) {
    char body[1024];
    snprintf(body, sizeof body, "{\"prompt\":\"%s\",\"max_tokens\":%d,\"temperature\":0}", prompt,
             n);
    json_object *o = mt_post_json(s, "/v1/completions", body);
    char *t = strdup(mt_jpath_str(o, "choices.0.text"));
    json_object_put(o);
    return t;
}

Test(serve, health_models_and_metrics_follow_traffic, .timeout = MT_HANG(120)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' --chat-template zephyr -t 1 --parallel 2",
                    mt_synth("small", "F32"));
    mt_resp r = mt_http(&s, "GET", "/health", NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert_str_eq(r.body, "{\"status\":\"ok\"}");
    mt_resp_free(&r);
    r = mt_http(&s, "GET", "/v1/models", NULL, NULL);
    cr_assert_eq(r.status, 200);
    json_object *o = json_tokener_parse(r.body);
    cr_assert_str_eq(mt_jpath_str(o, "object"), "list");
    cr_assert_str_eq(mt_jpath_str(o, "data.0.id"), "synth-small-F32.gguf");
    cr_assert_str_eq(mt_jpath_str(o, "data.0.object"), "model");
    cr_assert_eq(json_object_array_length(mt_jpath(o, "data")), 1);
    json_object_put(o);
    mt_resp_free(&r);
    r = mt_http(&s, "GET", "/metrics", NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.headers, "text/plain; version=0.0.4"), "%s", r.headers);
    static const char *const need[] = {
        "# TYPE mint_requests_total counter",
        "# TYPE mint_generated_tokens_total counter",
        "# TYPE mint_prompt_tokens_total counter",
        "# TYPE mint_slots_busy gauge",
        "# TYPE mint_queue_length gauge",
        "# TYPE mint_request_duration_seconds histogram",
        "# TYPE mint_time_to_first_token_seconds histogram",
        "mint_request_duration_seconds_bucket{le=\"+Inf\"} 0",
        "mint_slots 2\n",
    };
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        cr_assert(strstr(r.body, need[i]), "/metrics lacks '%s':\n%s", need[i], r.body);
    mt_resp_free(&r);
    cr_assert_eq(mt_metric(&s, "mint_generated_tokens_total"), 0);

    for (int i = 0; i < 3; i++) {
        o = mt_post_json(&s, "/v1/completions",
                         "{\"prompt\":\"the cat\",\"max_tokens\":7,\"ignore_eos\":true}");
        cr_assert_eq(mt_jpath_int(o, "usage.completion_tokens"), 7);
        json_object_put(o);
    }
    r = mt_http(&s, "POST", "/v1/completions", "{\"prompt\":", NULL);
    cr_assert_eq(r.status, 400);
    mt_resp_free(&r);
    cr_assert_eq(mt_metric(&s, "mint_generated_tokens_total"), 21);
    cr_assert_eq(mt_metric(&s, "mint_requests_total{endpoint=\"/v1/completions\",status=\"200\"}"),
                 3);
    cr_assert_eq(mt_metric(&s, "mint_requests_total{endpoint=\"/v1/completions\",status=\"400\"}"),
                 1);
    cr_assert_eq(mt_metric(&s, "mint_request_duration_seconds_count"), 3);
    cr_assert_eq(mt_metric(&s, "mint_request_duration_seconds_bucket{le=\"+Inf\"}"), 3);
    cr_assert_eq(mt_metric(&s, "mint_time_to_first_token_seconds_count"), 3);
    cr_assert_gt(mt_metric(&s, "mint_request_duration_seconds_sum"), 0);
    cr_assert_geq(mt_metric(&s, "mint_prompt_tokens_total"), 1);
    cr_assert_eq(mt_metric(&s, "mint_slots_busy"), 0);
    cr_assert_eq(mt_metric(&s, "mint_queue_length"), 0);
    // llama-server's other names answer the same
    static const char *const aliases[][2] = {{"/v1/health", "/health"}, {"/models", "/v1/models"}};
    for (int i = 0; i < 2; i++) {
        mt_resp a = mt_http(&s, "GET", aliases[i][0], NULL, NULL);
        mt_resp b = mt_http(&s, "GET", aliases[i][1], NULL, NULL);
        cr_assert(a.status == 200 && !strcmp(a.body, b.body), "%s: %d %s", aliases[i][0], a.status,
                  a.body);
        mt_resp_free(&a);
        mt_resp_free(&b);
    }
    // llama-server's /completions is its own shape (/completion's), not OpenAI's
    o = mt_post_json(&s, "/completions", "{\"prompt\":\"Hi\",\"max_tokens\":2}");
    cr_assert(json_object_is_type(mt_jpath(o, "content"), json_type_string));
    json_object_put(o);
    o = mt_post_json(&s, "/chat/completions",
                     "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":2}");
    cr_assert_str_eq(mt_jpath_str(o, "object"), "chat.completion");
    json_object_put(o);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve, completions_equal_mint_run_one_body_and_streamed, .timeout = MT_HANG(180)) {
    const char *model = stories();
    mt_server s;
    mt_server_start(&s, "-m '%s' --chat-template zephyr -t 1 --parallel 2", model);
    static const char *const prompts[] = {"Once upon a time", "The little dog", "Lily and Tom"};
    for (size_t i = 0; i < 3; i++) {
        char *want = mint_run_text(model, prompts[i], 40);
        char body[512];
        snprintf(body, sizeof body,
                 "{\"model\":\"x\",\"prompt\":\"%s\",\"max_tokens\":40,\"temperature\":0}",
                 prompts[i]);
        json_object *o = mt_post_json(&s, "/v1/completions", body);
        cr_assert_str_eq(mt_jpath_str(o, "object"), "text_completion");
        cr_assert(!strncmp(mt_jpath_str(o, "id"), "cmpl-", 5));
        cr_assert_str_eq(mt_jpath_str(o, "model"), "stories260K.gguf");
        cr_assert_str_eq(mt_jpath_str(o, "choices.0.text"), want, "prompt '%s'", prompts[i]);
        cr_assert_eq(mt_jpath_int(o, "choices.0.index"), 0);
        const char *fin = mt_jpath_str(o, "choices.0.finish_reason");
        cr_assert(!strcmp(fin, "length") || !strcmp(fin, "stop"), "%s", fin);
        const int pt = mt_jpath_int(o, "usage.prompt_tokens"),
                  ct = mt_jpath_int(o, "usage.completion_tokens");
        cr_assert_gt(pt, 1);
        cr_assert(ct == 40 || (!strcmp(fin, "stop") && ct < 40), "%d %s", ct, fin);
        cr_assert_eq(mt_jpath_int(o, "usage.total_tokens"), pt + ct);
        json_object_put(o);
        // The same streamed: text_completion chunks whose texts join to the same answer.
        snprintf(body, sizeof body,
                 "{\"prompt\":\"%s\",\"max_tokens\":40,\"temperature\":0,\"stream\":true,"
                 "\"stream_options\":{\"include_usage\":true}}",
                 prompts[i]);
        mt_resp r = mt_http(&s, "POST", "/v1/completions", body, NULL);
        cr_assert_eq(r.status, 200);
        cr_assert(strstr(r.headers, "text/event-stream"), "%s", r.headers);
        json_object *ch = sse_chunks(r.body);
        const size_t n = json_object_array_length(ch);
        cr_assert_geq(n, 3);
        char joined[4096] = "";
        for (size_t k = 0; k + 1 < n; k++) {
            json_object *c = mt_jidx(ch, k);
            cr_assert_str_eq(mt_jpath_str(c, "object"), "text_completion");
            cr_assert_eq(mt_jpath_int(c, "choices.0.index"), 0);
            strncat(joined, mt_jpath_str(c, "choices.0.text"), sizeof joined - strlen(joined) - 1);
            json_object *fr = mt_jpath(c, "choices.0.finish_reason");
            cr_assert(k + 2 == n ? fr != NULL : fr == NULL, "finish_reason on chunk %zu", k);
        }
        cr_assert_str_eq(joined, want);
        json_object *last = mt_jidx(ch, n - 1); // the usage chunk
        cr_assert_eq(json_object_array_length(mt_jpath(last, "choices")), 0);
        cr_assert_eq(mt_jpath_int(last, "usage.completion_tokens"), ct);
        json_object_put(ch);
        mt_resp_free(&r);
        free(want);
    }
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

// The text as a JSON string carries it (tools/serve/reply.h): each byte that does not begin a valid
// UTF-8 character (shortest form, at most U+10FFFF, no surrogate) becomes U+FFFD.
static char *as_json_text(const char *s) {
    const unsigned char *u = (const unsigned char *)s;
    const size_t n = strlen(s);
    char *out = malloc(3 * n + 1), *o = out;
    for (size_t i = 0; i < n;) {
        size_t k = u[i] < 0x80                    ? 1
                   : u[i] >= 0xC2 && u[i] <= 0xDF ? 2
                   : u[i] >= 0xE0 && u[i] <= 0xEF ? 3
                   : u[i] >= 0xF0 && u[i] <= 0xF4 ? 4
                                                  : 0;
        if (k > n - i) k = 0;
        for (size_t j = 1; j < k; j++)
            if ((u[i + j] & 0xC0) != 0x80) k = 0;
        if (k == 3 && ((u[i] == 0xE0 && u[i + 1] < 0xA0) || (u[i] == 0xED && u[i + 1] >= 0xA0)))
            k = 0;
        if (k == 4 && ((u[i] == 0xF0 && u[i + 1] < 0x90) || (u[i] == 0xF4 && u[i + 1] >= 0x90)))
            k = 0;
        if (k) {
            memcpy(o, u + i, k);
            o += k, i += k;
        } else {
            memcpy(o, "\xEF\xBF\xBD", 3);
            o += 3, i++;
        }
    }
    *o = '\0';
    return out;
}

// Every architecture of the table behind mint-serve: a tiny synthetic file of each (random weights,
// the built-in vocabulary, whose byte tokens make text that is not always UTF-8) answers a
// temperature-0 completion with mint-run's text, as JSON carries it.
Test(serve, every_architecture_answers_as_mint_run_does, .timeout = MT_HANG(300)) {
    static const char *const arches[] = {"llama3", "qwen2",  "qwen3", "phi3",
                                         "gpt2",   "gemma2", "gemma3"};
    for (size_t i = 0; i < sizeof arches / sizeof *arches; i++) {
        char name[64], model[4096];
        snprintf(name, sizeof name, "serve-%s-tiny.gguf", arches[i]);
        snprintf(model, sizeof model, "%s", mt_path(mt_tmpdir(), name));
        mint_synth_params p = {
            .preset = arches[i], .ftype = "Q8_0", .seed = 1, .n_threads = 2, .shape = "tiny"};
        mint_err e;
        cr_assert_eq(mint_synth_write(&p, model, &e), MINT_OK, "%s", e.msg);
        char *raw = mint_run_text(model, "Once upon a time", 12), *want = as_json_text(raw);
        free(raw);
        mt_server s;
        mt_server_start(&s, "-m '%s' --chat-template zephyr -t 1", model);
        char *got = completion_text(&s, "Once upon a time", 12);
        cr_assert_str_eq(got, want, "%s: the server and mint-run differ: [%s] [%s]", arches[i], got,
                         want);
        cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
        free(got);
        free(want);
    }
}

// Streamed text equals the one-body text, also where a character is made of several byte tokens
// (the tiny Llama 3 file on stories260K's vocabulary, whose byte-fallback tokens sampled at
// temperature 1 make multi-byte characters: seed 206 gives one; each seed's answer in one body,
// then streamed, the chunks joined).
Test(serve, streamed_text_equals_one_body_for_byte_tokens, .timeout = MT_HANG(180)) {
    char model[4096];
    snprintf(model, sizeof model, "%s", mt_path(mt_tmpdir(), "serve-llama3-stories-vocab.gguf"));
    mint_synth_params p = {.preset = "llama3",
                           .ftype = "F32",
                           .seed = 1,
                           .n_threads = 2,
                           .shape = "tiny",
                           .vocab = stories()};
    mint_err e;
    cr_assert_eq(mint_synth_write(&p, model, &e), MINT_OK, "%s", e.msg);
    mt_server s;
    // No filters (llama-server's defaults, top-k 40 and min-p 0.05, rarely leave a byte token).
    mt_server_start(&s, "-m '%s' --chat-template zephyr -t 1 --top-k 0 --top-p 1 --min-p 0", model);
    int multibyte = 0;
    for (int seed = 200; seed < 216; seed++) {
        char body[512];
        snprintf(body, sizeof body,
                 "{\"prompt\":\"Once upon a time\",\"max_tokens\":30,\"temperature\":1.0,"
                 "\"seed\":%d}",
                 seed);
        json_object *o = mt_post_json(&s, "/v1/completions", body);
        char *want = strdup(mt_jpath_str(o, "choices.0.text"));
        json_object_put(o);
        for (const unsigned char *c = (const unsigned char *)want; *c; c++)
            multibyte += *c >= 0xC0 && !(c[0] == 0xEF && c[1] == 0xBF && c[2] == 0xBD);
        snprintf(body, sizeof body,
                 "{\"prompt\":\"Once upon a time\",\"max_tokens\":30,\"temperature\":1.0,"
                 "\"seed\":%d,\"stream\":true}",
                 seed);
        mt_resp r = mt_http(&s, "POST", "/v1/completions", body, NULL);
        cr_assert_eq(r.status, 200);
        json_object *ch = sse_chunks(r.body);
        char joined[4096] = "";
        for (size_t k = 0; k < json_object_array_length(ch); k++)
            strncat(joined, mt_jpath_str(mt_jidx(ch, k), "choices.0.text"),
                    sizeof joined - strlen(joined) - 1);
        cr_assert_str_eq(joined, want, "seed %d: streamed [%s], one body [%s]", seed, joined, want);
        json_object_put(ch);
        mt_resp_free(&r);
        free(want);
    }
    cr_assert_gt(multibyte, 0, "no seed made a multi-byte character: the test tests nothing");
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

// A message's typed text parts are joined with a newline, as llama-server joins them: the prompt
// of ["What is", "the best book"] has the tokens of "What is\nthe best book".
Test(serve, content_parts_join_with_a_newline, .timeout = MT_HANG(120)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' --chat-template zephyr -t 1", stories());
    json_object *a = mt_post_json(
        &s, "/v1/chat/completions",
        "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"What "
        "is\"},{\"type\":\"text\",\"text\":\"the best book\"}]}],\"max_tokens\":1}");
    json_object *b = mt_post_json(&s, "/v1/chat/completions",
                                  "{\"messages\":[{\"role\":\"user\",\"content\":\"What is\\nthe "
                                  "best book\"}],\"max_tokens\":1}");
    cr_assert_eq(mt_jpath_int(a, "usage.prompt_tokens"), mt_jpath_int(b, "usage.prompt_tokens"));
    json_object_put(a);
    json_object_put(b);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve, chat_equals_mint_run_cnv_one_body_and_streamed, .timeout = MT_HANG(180)) {
    const char *model = stories();
    char *out, *err;
    char args[4300];
    snprintf(args, sizeof args, "-m '%s' -cnv --chat-template zephyr --temp 0 -n 30 -t 1", model);
    int rc = run_tool_stdin(&out, &err, "Tell me a story\n", "mint-run", args);
    cr_assert_eq(rc, 0, "%s", err);
    size_t l = strlen(out);
    if (l && out[l - 1] == '\n') out[--l] = '\0';
    mt_server s;
    mt_server_start(&s, "-m '%s' -t 1 --chat-template zephyr", model);
    const char *msgs = "\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story\"}]";
    char body[512];
    snprintf(body, sizeof body, "{%s,\"max_tokens\":30,\"temperature\":0}", msgs);
    json_object *o = mt_post_json(&s, "/v1/chat/completions", body);
    cr_assert_str_eq(mt_jpath_str(o, "object"), "chat.completion");
    cr_assert(!strncmp(mt_jpath_str(o, "id"), "chatcmpl-", 9));
    cr_assert_str_eq(mt_jpath_str(o, "choices.0.message.role"), "assistant");
    cr_assert_str_eq(mt_jpath_str(o, "choices.0.message.content"), out);
    cr_assert_null(mt_jpath(o, "choices.0.logprobs"));
    json_object_put(o);
    // Streamed: the first delta has the role, the last chunk the finish reason and no content.
    snprintf(body, sizeof body, "{%s,\"max_tokens\":30,\"temperature\":0,\"stream\":true}", msgs);
    mt_resp r = mt_http(&s, "POST", "/v1/chat/completions", body, NULL);
    cr_assert_eq(r.status, 200);
    json_object *ch = sse_chunks(r.body);
    const size_t n = json_object_array_length(ch);
    char joined[4096] = "";
    for (size_t k = 0; k < n; k++) {
        json_object *c = mt_jidx(ch, k), *delta = mt_jpath(c, "choices.0.delta");
        cr_assert_str_eq(mt_jpath_str(c, "object"), "chat.completion.chunk");
        cr_assert_str_eq(mt_jstr(delta, "role"), k == 0 ? "assistant" : "");
        strncat(joined, mt_jstr(delta, "content"), sizeof joined - strlen(joined) - 1);
        if (k + 1 == n) {
            cr_assert_eq(json_object_object_length(delta), 0);
            const char *fin = mt_jpath_str(c, "choices.0.finish_reason");
            cr_assert(!strcmp(fin, "length") || !strcmp(fin, "stop"));
        } else {
            cr_assert_null(mt_jpath(c, "choices.0.finish_reason"));
        }
    }
    cr_assert_str_eq(joined, out);
    json_object_put(ch);
    mt_resp_free(&r);
    free(out);
    free(err);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

// One token's chat logprobs entry: token, logprob <= 0, bytes of the token, k alternatives best
// first, the first of them the token itself (temperature 0).
static void expect_chat_lp(json_object *t, int k) {
    const char *tok = mt_jpath_str(t, "token");
    const double lp = json_object_get_double(mt_jpath(t, "logprob"));
    cr_assert(lp <= 0 && lp > -100, "%g", lp);
    json_object *bytes = mt_jpath(t, "bytes");
    cr_assert_eq(json_object_array_length(bytes), strlen(tok), "'%s'", tok);
    json_object *top = mt_jpath(t, "top_logprobs");
    cr_assert_eq(json_object_array_length(top), (size_t)k);
    double prev = 0;
    for (int a = 0; a < k; a++) {
        const double v = json_object_get_double(mt_jpath(mt_jidx(top, (size_t)a), "logprob"));
        cr_assert(v <= prev + 1e-6, "alternatives not best first");
        prev = v;
        mt_jpath(mt_jidx(top, (size_t)a), "bytes");
    }
    if (k) {
        cr_assert_str_eq(mt_jpath_str(mt_jidx(top, 0), "token"), tok);
        cr_assert_float_eq(json_object_get_double(mt_jpath(mt_jidx(top, 0), "logprob")), lp, 1e-6);
    }
}

Test(serve, logprobs_in_openai_shapes, .timeout = MT_HANG(120)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' --chat-template zephyr -t 1", stories());
    const char *msgs = "\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]";
    char body[512];
    snprintf(body, sizeof body,
             "{%s,\"max_tokens\":12,\"temperature\":0,\"logprobs\":true,\"top_logprobs\":3,"
             "\"ignore_eos\":true}",
             msgs);
    json_object *o = mt_post_json(&s, "/v1/chat/completions", body);
    json_object *content = mt_jpath(o, "choices.0.logprobs.content");
    cr_assert_eq(json_object_array_length(content), 12);
    char joined[1024] = "";
    for (size_t t = 0; t < 12; t++) {
        expect_chat_lp(mt_jidx(content, t), 3);
        strcat(joined, mt_jpath_str(mt_jidx(content, t), "token"));
    }
    cr_assert_str_eq(joined, mt_jpath_str(o, "choices.0.message.content"));
    json_object_put(o);
    // Streamed: the first chunk names the role (no content, no log-probabilities: OpenAI's and
    // llama-server's opening); each content chunk after it carries its tokens' entries.
    snprintf(body, sizeof body,
             "{%s,\"max_tokens\":12,\"temperature\":0,\"logprobs\":true,\"top_logprobs\":2,"
             "\"ignore_eos\":true,\"stream\":true}",
             msgs);
    mt_resp r = mt_http(&s, "POST", "/v1/chat/completions", body, NULL);
    json_object *ch = sse_chunks(r.body);
    size_t n_tok = 0;
    cr_assert_str_eq(mt_jpath_str(mt_jidx(ch, 0), "choices.0.delta.role"), "assistant");
    cr_assert_null(mt_jpath(mt_jidx(ch, 0), "choices.0.delta.content"));
    for (size_t k = 1; k + 1 < json_object_array_length(ch); k++) {
        json_object *c = mt_jpath(mt_jidx(ch, k), "choices.0.logprobs.content");
        for (size_t t = 0; t < json_object_array_length(c); t++, n_tok++)
            expect_chat_lp(mt_jidx(c, t), 2);
    }
    cr_assert_eq(n_tok, 12);
    json_object_put(ch);
    mt_resp_free(&r);
    // Completions: logprobs is a count; tokens, token_logprobs, top_logprobs, text_offset.
    o = mt_post_json(&s, "/v1/completions",
                     "{\"prompt\":\"Once upon a time\",\"max_tokens\":10,\"temperature\":0,"
                     "\"logprobs\":2,\"ignore_eos\":true}");
    json_object *lp = mt_jpath(o, "choices.0.logprobs");
    json_object *toks = mt_jpath(lp, "tokens"), *tlp = mt_jpath(lp, "token_logprobs"),
                *top = mt_jpath(lp, "top_logprobs"), *off = mt_jpath(lp, "text_offset");
    cr_assert_eq(json_object_array_length(toks), 10);
    cr_assert_eq(json_object_array_length(tlp), 10);
    cr_assert_eq(json_object_array_length(top), 10);
    cr_assert_eq(json_object_array_length(off), 10);
    joined[0] = '\0';
    for (size_t t = 0; t < 10; t++) {
        const char *tok = json_object_get_string(mt_jidx(toks, t));
        cr_assert_eq(json_object_get_int(mt_jidx(off, t)), (int)strlen(joined));
        strcat(joined, tok);
        const double v = json_object_get_double(mt_jidx(tlp, t));
        cr_assert(v <= 0, "%g", v);
        json_object *alt = mt_jidx(top, t), *mine;
        cr_assert(json_object_object_length(alt) >= 1 && json_object_object_length(alt) <= 2);
        cr_assert(json_object_object_get_ex(alt, tok, &mine), "'%s' not among its top", tok);
        cr_assert_float_eq(json_object_get_double(mine), v, 1e-6);
    }
    cr_assert_str_eq(joined, mt_jpath_str(o, "choices.0.text"));
    json_object_put(o);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve, n_choices_with_a_seed_repeat, .timeout = MT_HANG(120)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' --chat-template zephyr -t 1 --parallel 4", stories());
    const char *body = "{\"prompt\":\"Once upon a time\",\"max_tokens\":24,\"temperature\":1,"
                       "\"n\":2,\"seed\":42,\"ignore_eos\":true}";
    json_object *a = mt_post_json(&s, "/v1/completions", body);
    json_object *b = mt_post_json(&s, "/v1/completions", body);
    cr_assert_eq(json_object_array_length(mt_jpath(a, "choices")), 2);
    for (int i = 0; i < 2; i++) {
        char p[64];
        snprintf(p, sizeof p, "choices.%d.index", i);
        cr_assert_eq(mt_jpath_int(a, p), i);
        snprintf(p, sizeof p, "choices.%d.text", i);
        cr_assert_str_eq(mt_jpath_str(a, p), mt_jpath_str(b, p),
                         "the same seed gives the same choice %d", i);
    }
    cr_assert_str_neq(mt_jpath_str(a, "choices.0.text"), mt_jpath_str(a, "choices.1.text"));
    cr_assert_eq(mt_jpath_int(a, "usage.completion_tokens"), 48);
    json_object_put(a);
    json_object_put(b);
    // Chat streams both choices, each ending with its own finish chunk.
    mt_resp r = mt_http(&s, "POST", "/v1/chat/completions",
                        "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"n\":2,"
                        "\"seed\":7,\"max_tokens\":8,\"stream\":true}",
                        NULL);
    json_object *ch = sse_chunks(r.body);
    int finished[2] = {0, 0};
    for (size_t k = 0; k < json_object_array_length(ch); k++) {
        json_object *c = mt_jpath(mt_jidx(ch, k), "choices.0");
        const int idx = mt_jpath_int(c, "index");
        cr_assert(idx == 0 || idx == 1);
        if (mt_jpath(c, "finish_reason")) finished[idx]++;
    }
    cr_assert(finished[0] == 1 && finished[1] == 1);
    json_object_put(ch);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve, stop_strings_end_the_text_before_them, .timeout = MT_HANG(120)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' --chat-template zephyr -t 1", stories());
    char *full = completion_text(&s, "Once upon a time", 60);
    const char *stop = "Lily";
    const char *at = strstr(full, stop);
    cr_assert(at, "the reference text has no '%s': %s", stop, full);
    const size_t keep_n = (size_t)(at - full);
    for (int stream = 0; stream < 2; stream++) {
        char body[256];
        snprintf(body, sizeof body,
                 "{\"prompt\":\"Once upon a time\",\"max_tokens\":60,\"temperature\":0,"
                 "\"stop\":[\"zzz\",\"%s\"],\"stream\":%s}",
                 stop, stream ? "true" : "false");
        mt_resp r = mt_http(&s, "POST", "/v1/completions", body, NULL);
        cr_assert_eq(r.status, 200);
        char text[2048] = "";
        const char *fin = NULL;
        json_object *all = stream ? sse_chunks(r.body) : json_tokener_parse(r.body);
        if (stream) {
            for (size_t k = 0; k < json_object_array_length(all); k++) {
                json_object *c = mt_jpath(mt_jidx(all, k), "choices.0");
                strcat(text, mt_jpath_str(c, "text"));
                if (mt_jpath(c, "finish_reason")) fin = mt_jpath_str(c, "finish_reason");
            }
        } else {
            strcat(text, mt_jpath_str(all, "choices.0.text"));
            fin = mt_jpath_str(all, "choices.0.finish_reason");
        }
        cr_assert_eq(strlen(text), keep_n, "stream %d: '%s'", stream, text);
        cr_assert(!strncmp(text, full, keep_n));
        cr_assert_null(strstr(text, stop));
        cr_assert_str_eq(fin, "stop");
        json_object_put(all);
        mt_resp_free(&r);
    }
    free(full);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve, tokenize_detokenize_round_trip_and_next_token, .timeout = MT_HANG(120)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' --chat-template zephyr -t 1", stories());
    json_object *o = mt_post_json(&s, "/tokenize",
                                  "{\"content\":\"Once upon a time, a cat.\",\"with_pieces\":"
                                  "false}");
    json_object *toks = mt_jpath(o, "tokens");
    cr_assert_gt(json_object_array_length(toks), 3);
    char body[1024] = "{\"tokens\":";
    strcat(body, json_object_to_json_string_ext(toks, JSON_C_TO_STRING_PLAIN));
    strcat(body, "}");
    json_object_put(o);
    o = mt_post_json(&s, "/detokenize", body);
    cr_assert_str_eq(mt_jpath_str(o, "content"), "Once upon a time, a cat.");
    json_object_put(o);
    mt_resp r = mt_http(&s, "POST", "/detokenize", "{\"tokens\":[1,999999]}", NULL);
    cr_assert_eq(r.status, 400, "%s", r.body);
    mt_resp_free(&r);
    // /v1/next: the 64 likeliest next tokens, best first, probabilities that sum to at most 1.
    o = mt_post_json(&s, "/v1/next", "{\"prompt\":\"Once upon a\"}");
    json_object *c = mt_jpath(o, "candidates");
    cr_assert_eq(json_object_array_length(c), 64);
    double sum = 0, prev = 1;
    for (size_t i = 0; i < 64; i++) {
        const double p = json_object_get_double(mt_jpath(mt_jidx(c, i), "p"));
        cr_assert(p <= prev + 1e-9 && p >= 0);
        prev = p;
        sum += p;
        mt_jpath(mt_jidx(c, i), "piece");
    }
    cr_assert(sum <= 1 + 1e-5 && sum > 0.5, "%g", sum);
    cr_assert_str_eq(mt_jpath_str(o, "candidates.0.piece"), " time");
    json_object_put(o);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

// Regression: the server once decided "is this a chat" by finding the text "messages" in the
// body, so a completion whose prompt or stop strings held that word was refused with "'messages'
// must be a list". Requests are routed by endpoint; /v1/next looks at the parsed body's members.
Test(serve, the_word_messages_in_a_prompt_or_stop_is_just_text, .timeout = MT_HANG(120)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' -t 1 --chat-template zephyr", stories());
    json_object *o =
        mt_post_json(&s, "/v1/next", "{\"prompt\":\"Once upon\",\"stop\":[\"messages\"]}");
    cr_assert_eq(json_object_array_length(mt_jpath(o, "candidates")), 64);
    json_object_put(o);
    o = mt_post_json(&s, "/v1/next", "{\"prompt\":\"the \\\"messages\\\": [] of a\"}");
    cr_assert_eq(json_object_array_length(mt_jpath(o, "candidates")), 64);
    json_object_put(o);
    o = mt_post_json(&s, "/v1/completions",
                     "{\"prompt\":\"\\\"messages\\\"\",\"max_tokens\":2,\"ignore_eos\":true,"
                     "\"stop\":[\"messages\"]}");
    cr_assert_eq(mt_jpath_int(o, "usage.completion_tokens"), 2);
    json_object_put(o);
    // A chat on /v1/next is still one (its messages member).
    o = mt_post_json(&s, "/v1/next", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
    cr_assert_eq(json_object_array_length(mt_jpath(o, "candidates")), 64);
    json_object_put(o);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

// A known path asked with another method: 405 with the methods it takes in Allow.
Test(serve, wrong_method_gets_405_with_allow, .timeout = MT_HANG(120)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' -t 1", stories());
    mt_resp r = mt_http(&s, "GET", "/v1/completions", NULL, NULL);
    cr_assert_eq(r.status, 405, "%s", r.body);
    cr_assert(strstr(r.headers, "Allow: POST") != NULL, "%s", r.headers);
    cr_assert(strstr(r.body, "\"error\"") != NULL, "%s", r.body);
    mt_resp_free(&r);
    r = mt_http(&s, "POST", "/health", "{}", NULL);
    cr_assert_eq(r.status, 405, "%s", r.body);
    cr_assert(strstr(r.headers, "Allow: GET, HEAD") != NULL, "%s", r.headers);
    mt_resp_free(&r);
    r = mt_http(&s, "GET", "/nowhere", NULL, NULL);
    cr_assert_eq(r.status, 404, "%s", r.body);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

// A request that must fail with status and OpenAI's error shape naming param (NULL: null).
static void expect_error(const mt_server *s, const char *path, const char *body, int status,
                         const char *param, const char *curl_args) {
    mt_resp r = mt_http(s, "POST", path, body, curl_args);
    cr_assert_eq(r.status, status, "%.80s: %d %s", body, r.status, r.body);
    json_object *o = json_tokener_parse(r.body), *e = o ? mt_jpath(o, "error") : NULL;
    cr_assert(e, "not OpenAI's error shape: %s", r.body);
    cr_assert_gt(strlen(mt_jpath_str(e, "message")), 5);
    cr_assert_gt(strlen(mt_jpath_str(e, "type")), 3);
    if (param)
        cr_assert_str_eq(mt_jpath_str(e, "param"), param, "%s", r.body);
    else
        cr_assert_null(mt_jpath(e, "param"), "%s", r.body);
    mt_jpath(e, "code");
    json_object_put(o);
    mt_resp_free(&r);
}

Test(serve, bad_requests_get_openai_errors, .timeout = MT_HANG(120)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' --chat-template zephyr -t 1 -c 64 -np 1 --max-body 4096",
                    mt_synth("small", "F32"));
    // An unknown field is ignored.
    json_object *o = mt_post_json(&s, "/v1/completions",
                                  "{\"prompt\":\"a\",\"max_tokens\":2,\"frobnicate\":{\"x\":1}}");
    cr_assert_eq(mt_jpath_int(o, "usage.completion_tokens"), 2);
    json_object_put(o);
    const char *chat = "/v1/chat/completions", *cmpl = "/v1/completions";
    const char *m = "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";
    char b[512];
    snprintf(b, sizeof b, "{%s,\"tools\":[{\"type\":\"function\"}]}", m);
    expect_error(&s, chat, b, 400, "tools", NULL);
    snprintf(b, sizeof b, "{%s,\"temperature\":5}", m);
    expect_error(&s, chat, b, 400, "temperature", NULL);
    snprintf(b, sizeof b, "{%s,\"n\":2,\"temperature\":0}", m);
    expect_error(&s, chat, b, 400, "n", NULL);
    snprintf(b, sizeof b, "{%s,\"response_format\":{\"type\":\"xml\"}}", m);
    expect_error(&s, chat, b, 400, "response_format", NULL);
    snprintf(b, sizeof b, "{%s,\"grammar\":\"root ::= [\"}", m);
    expect_error(&s, chat, b, 400, "grammar", NULL);
    snprintf(b, sizeof b, "{%s,\"top_logprobs\":3}", m);
    expect_error(&s, chat, b, 400, "top_logprobs", NULL);
    expect_error(&s, chat, "{\"messages\":[{\"role\":\"robot\",\"content\":\"x\"}]}", 400,
                 "messages", NULL);
    expect_error(&s, cmpl, "{\"prompt\":\"a\",\"max_tokens\":0}", 400, "max_tokens", NULL);
    expect_error(&s, cmpl, "{\"prompt\":\"a\",\"logprobs\":9}", 400, "logprobs", NULL);
    expect_error(&s, cmpl, "{\"max_tokens\":3}", 400, "prompt", NULL);
    expect_error(&s, cmpl, "{\"prompt\":[1,99999]}", 400, "prompt", NULL);
    // Regressions: a content part or response_format whose type is null crashed the server
    // (strcmp on NULL); U+0000 cut strings short (a stop of "\u0000x" ended every answer after
    // one byte).
    expect_error(&s, chat, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":null}]}]}",
                 400, "messages", NULL);
    snprintf(b, sizeof b, "{%s,\"response_format\":{\"type\":null}}", m);
    expect_error(&s, chat, b, 400, "response_format", NULL);
    expect_error(&s, cmpl, "{\"prompt\":\"a\",\"stop\":\"\\u0000x\"}", 400, "stop", NULL);
    expect_error(&s, cmpl, "{\"prompt\":\"a\",\"stop\":[\"b\\u0000\"]}", 400, "stop", NULL);
    expect_error(&s, cmpl, "{\"prompt\":\"a\\u0000b\"}", 400, "prompt", NULL);
    expect_error(&s, chat, "{\"messages\":[{\"role\":\"user\",\"content\":\"a\\u0000\"}]}", 400,
                 "messages", NULL);
    // Malformed JSON, other JSON, invalid UTF-8, bytes after the value.
    expect_error(&s, cmpl, "{\"prompt\":\"a\",", 400, NULL, NULL);
    expect_error(&s, cmpl, "[1,2]", 400, NULL, NULL);
    expect_error(&s, cmpl, "{\"prompt\":\"\xff\xfe\"}", 400, NULL, NULL);
    expect_error(&s, cmpl, "{\"prompt\":\"a\"} x", 400, NULL, NULL);
    expect_error(&s, cmpl, "", 400, NULL, NULL);
    // A prompt longer than the context (64 positions).
    char longp[2048] = "{\"prompt\":\"";
    for (int i = 0; i < 100; i++) strcat(longp, "word ");
    strcat(longp, "\"}");
    expect_error(&s, cmpl, longp, 400, "prompt", NULL);
    // A body over --max-body (4096 bytes).
    char *big = malloc(8192);
    strcpy(big, "{\"prompt\":\"");
    memset(big + 11, 'a', 6000);
    strcpy(big + 6011, "\"}");
    expect_error(&s, cmpl, big, 413, NULL, NULL);
    free(big);
    mt_resp r = mt_http(&s, "GET", "/nowhere", NULL, NULL);
    cr_assert_eq(r.status, 404);
    mt_resp_free(&r);
    // The server is still well.
    o = mt_post_json(&s, cmpl, "{\"prompt\":\"a\",\"max_tokens\":3,\"ignore_eos\":true}");
    cr_assert_eq(mt_jpath_int(o, "usage.completion_tokens"), 3);
    json_object_put(o);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve, api_key_guards_all_but_health_and_page, .timeout = MT_HANG(120)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' --chat-template zephyr -t 1 --api-key s3cret",
                    mt_synth("small", "F32"));
    mt_resp r = mt_http(&s, "GET", "/health", NULL, NULL);
    cr_assert_eq(r.status, 200);
    mt_resp_free(&r);
    r = mt_http(&s, "GET", "/", NULL, NULL);
    cr_assert_eq(r.status, 200);
    mt_resp_free(&r);
    const char *body = "{\"prompt\":\"a\",\"max_tokens\":2}";
    expect_error(&s, "/v1/completions", body, 401, NULL, NULL);
    expect_error(&s, "/v1/completions", body, 401, NULL, "-H 'Authorization: Bearer wrong'");
    expect_error(&s, "/v1/completions", body, 401, NULL, "-H 'Authorization: Bearer s3cret2'");
    expect_error(&s, "/v1/completions", body, 401, NULL, "-H 'Authorization: s3cret'");
    r = mt_http(&s, "GET", "/v1/models", NULL, NULL);
    cr_assert_eq(r.status, 401);
    mt_resp_free(&r);
    r = mt_http(&s, "GET", "/v1/models", NULL, "-H 'Authorization: Bearer s3cret'");
    cr_assert_eq(r.status, 200);
    mt_resp_free(&r);
    r = mt_http(&s, "POST", "/v1/completions", body, "-H 'Authorization: Bearer s3cret'");
    cr_assert_eq(r.status, 200, "%s", r.body);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

// The prompt cache beyond the slots (--cache-ram): one slot of 64 positions in blocks of 16 (a
// pool of 5 blocks), three distinct prompts of about 40 tokens, then the first again. Without the
// budget the others evicted its blocks and it is evaluated from scratch (but BOS); with it, it
// starts from its cached blocks (usage.prompt_tokens_details.cached_tokens), and the answer is the
// same.
static int repeat_after_others(const char *extra, char **text) {
    mt_server s;
    mt_server_start(&s, "-m '%s' -t 1 --parallel 1 -c 64 --kv-block 16 %s",
                    mt_synth("small", "F32"), extra);
    static const char *const words[] = {"red", "cat", "dog"};
    int cached = -1;
    for (int i = 0; i < 4; i++) {
        char body[1024] = "{\"max_tokens\":4,\"temperature\":0,\"ignore_eos\":true,\"prompt\":\"";
        for (int k = 0; k < 9; k++) {
            strcat(body, words[i % 3]);
            strcat(body, k % 2 ? " of " : " and ");
        }
        strcat(body, "\"}");
        json_object *o = mt_post_json(&s, "/v1/completions", body);
        cr_assert_gt(mt_jpath_int(o, "usage.prompt_tokens"), 33,
                     "the prompt fills more than 2 blocks");
        if (i == 0) *text = strdup(mt_jpath_str(o, "choices.0.text"));
        if (i == 3) {
            cached = mt_jpath_int(o, "usage.prompt_tokens_details.cached_tokens");
            cr_assert_str_eq(mt_jpath_str(o, "choices.0.text"), *text,
                             "the same answer from the cache");
        }
        json_object_put(o);
    }
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
    return cached;
}

Test(serve, cache_ram_keeps_prompts_beyond_the_slots, .timeout = MT_HANG(120)) {
    char *a = NULL, *b = NULL;
    const int without = repeat_after_others("--cache-ram 0", &a);
    const int with = repeat_after_others("--cache-ram 64", &b);
    cr_assert_leq(without, 1, "without the budget only BOS is shared with the slot (%d)", without);
    cr_assert_geq(with, 32, "with it the prompt starts from its cached blocks (%d)", with);
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
}
