// test_serve_llama.c - mint-serve as a drop-in llama-server, tested as its clients meet it (curl
// against a live server): llama-server's command line (every flag of the suite's start lines
// accepted, -c split over the slots, -hf from the Hugging Face cache), its own POST /completion
// (equal to the OpenAI endpoint's answer for the same request, streamed and not, token ids and
// texts mixed, several prompts, response_fields, n_probs, logit_bias), /props, /slots,
// /apply-template, CORS preflights and API keys (Bearer, X-Api-Key, several, from a file), and its
// errors (exceed_context_size_error). tools/scripts/llama-server-suite.sh runs llama.cpp's own
// suite against it besides.
#include "helpers/helpers.h"
#include "helpers/server.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *stories(void) {
    static char path[4096];
    snprintf(path, sizeof path, "%s", mt_data_path("stories260K.gguf"));
    return path;
}

// A llama-server command line as llama.cpp's server tests start it (their utils.py).
#define SUITE_FLAGS                                                                                \
    "--host 127.0.0.1 --temp 0.8 --seed 42 --alias tinyllama-2 --ctx-size 512 --batch-size 32 "    \
    "--parallel 2 --n-predict 64 --no-slots --no-jinja -t 1"

Test(serve_llama, a_llama_server_command_line_starts_and_says_what_it_ignores,
     .timeout = MT_HANG(120)) {
    mt_server s;
    mt_server_start(&s,
                    "-m '%s' " SUITE_FLAGS " -ngl 99 -fa on --cont-batching --metrics "
                    "--backend_sampling --cache-reuse 256 -ub 16 --jinja --reasoning-format none",
                    stories());
    char *log = mt_server_log(&s);
    cr_assert(strstr(log, "-ngl 99 ignored: mint runs on the CPU only"), "%s", log);
    cr_assert(strstr(log, "--backend_sampling ignored"), "'_' spells '-', as llama.cpp: %s", log);
    // -c 512 over 2 slots: 256 positions each (llama-server's split)
    cr_assert(strstr(log, "2 slots of 256 positions"), "%s", log);
    free(log);
    json_object *o = mt_post_json(&s, "/completion", "{\"prompt\":\"Once\"}");
    cr_assert_eq(mt_jpath_int(o, "generation_settings.n_predict"), 64,
                 "-n 64 is the default limit");
    cr_assert_eq(json_object_get_int64(mt_jpath(o, "generation_settings.seed")), 42, "--seed 42");
    cr_assert_eq(mt_jpath_int(o, "tokens_predicted"), 64);
    cr_assert_str_eq(mt_jpath_str(o, "model"), "tinyllama-2");
    json_object_put(o);
    mt_resp r = mt_http(&s, "GET", "/slots", NULL, NULL);
    cr_assert_eq(r.status, 501, "--no-slots: %s", r.body);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
    // Refused, not silently ignored: TLS, LoRA, downloads.
    char *out = NULL, *err = NULL;
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' -m '%s' --ssl-key-file k.pem", mt_bin("mint-serve"), stories());
    cr_assert_eq(mt_run(cmd, &out, &err), 2);
    cr_assert(strstr(err, "--ssl-key-file: mint-serve has no TLS") &&
                  !strchr(strchr(err, '\n') + 1, '\n'),
              "%s", err);
    free(out);
    free(err);
}

Test(serve_llama, native_completion_equals_the_openai_answer, .timeout = MT_HANG(180)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' " SUITE_FLAGS, stories());
    const char *prompt = "I believe the meaning of life is";
    char body[1024];
    snprintf(body, sizeof body,
             "{\"prompt\":\"%s\",\"n_predict\":8,\"temperature\":0,"
             "\"return_tokens\":true}",
             prompt);
    json_object *n = mt_post_json(&s, "/completion", body);
    snprintf(body, sizeof body, "{\"prompt\":\"%s\",\"max_tokens\":8,\"temperature\":0}", prompt);
    json_object *oai = mt_post_json(&s, "/v1/completions", body);
    cr_assert_str_eq(mt_jpath_str(n, "content"), mt_jpath_str(oai, "choices.0.text"));
    cr_assert_eq(mt_jpath_int(n, "tokens_predicted"), 8);
    cr_assert_eq(json_object_array_length(mt_jpath(n, "tokens")), 8);
    cr_assert_eq(mt_jpath_int(n, "timings.predicted_n"), 8);
    // The prompt as llama-server shows it: BOS written out, the leading space of SentencePiece.
    cr_assert_str_eq(mt_jpath_str(n, "prompt"), "<s> I believe the meaning of life is");
    cr_assert_eq(mt_jpath_int(n, "tokens_evaluated"), mt_jpath_int(oai, "usage.prompt_tokens"));
    cr_assert_str_eq(mt_jpath_str(n, "stop_type"), "limit");
    cr_assert_eq(json_object_get_boolean(mt_jpath(n, "stop")), true);
    // Streamed: the events' text is the body's text, the last event says why it stopped.
    snprintf(body, sizeof body,
             "{\"prompt\":\"%s\",\"n_predict\":8,\"temperature\":0,"
             "\"stream\":true}",
             prompt);
    mt_resp r = mt_http(&s, "POST", "/completion", body, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert_null(strstr(r.body, "[DONE]"), "/completion streams end without [DONE]");
    char joined[2048] = "";
    int events = 0;
    json_object *last = NULL;
    for (char *line = strstr(r.body, "data: "); line; line = strstr(line + 1, "data: ")) {
        char *end = strstr(line, "\n\n");
        cr_assert(end);
        json_object *ev = json_tokener_parse(line + 6);
        cr_assert(ev, "event %d is not JSON", events);
        strncat(joined, mt_jpath_str(ev, "content"), sizeof joined - strlen(joined) - 1);
        json_object_put(last);
        last = ev;
        events++;
    }
    cr_assert_str_eq(joined, mt_jpath_str(n, "content"));
    cr_assert(json_object_get_boolean(mt_jpath(last, "stop")) &&
              mt_jpath_int(last, "timings.predicted_n") == 8);
    json_object_put(last);
    mt_resp_free(&r);
    // A list of prompts (token ids, text), each answered alone; ids mixed with text in one.
    snprintf(body, sizeof body, "{\"content\":\"%s\",\"add_special\":true}", prompt);
    mt_resp t = mt_http(&s, "POST", "/tokenize", body, NULL);
    json_object *tk = json_tokener_parse(t.body), *tokens = mt_jpath(tk, "tokens");
    char ids[512] = "";
    for (size_t i = 0; i < json_object_array_length(tokens); i++)
        snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%d", i ? "," : "",
                 json_object_get_int(mt_jidx(tokens, i)));
    const int n_tokens = (int)json_object_array_length(tokens);
    json_object_put(tk);
    mt_resp_free(&t);
    snprintf(body, sizeof body, "{\"prompt\":[[%s], \"%s\"],\"n_predict\":8,\"temperature\":0}",
             ids, prompt);
    mt_resp many = mt_http(&s, "POST", "/completion", body, NULL);
    json_object *list = json_tokener_parse(many.body);
    cr_assert(json_object_is_type(list, json_type_array) && json_object_array_length(list) == 2,
              "%s", many.body);
    cr_assert_str_eq(mt_jpath_str(list, "0.content"), mt_jpath_str(n, "content"));
    cr_assert_str_eq(mt_jpath_str(list, "1.content"), mt_jpath_str(n, "content"));
    json_object_put(list);
    mt_resp_free(&many);
    snprintf(body, sizeof body, "{\"prompt\":[%s, \"and\", 13],\"n_predict\":2}", ids);
    json_object *mixed = mt_post_json(&s, "/completion", body);
    cr_assert_eq(mt_jpath_int(mixed, "tokens_evaluated"), n_tokens + 2,
                 "the ids, the text's one token (no BOS inside), the id 13");
    json_object_put(mixed);
    json_object_put(n);
    json_object_put(oai);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve_llama, fields_probabilities_and_logit_bias, .timeout = MT_HANG(180)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' " SUITE_FLAGS, stories());
    json_object *o =
        mt_post_json(&s, "/completion",
                     "{\"prompt\":\"Once upon\",\"n_predict\":4,\"temperature\":0,\"n_probs\":3,"
                     "\"return_tokens\":true}");
    json_object *probs = mt_jpath(o, "completion_probabilities");
    cr_assert_eq(json_object_array_length(probs), 4);
    for (int t = 0; t < 4; t++) {
        json_object *p = mt_jidx(probs, (size_t)t);
        cr_assert_eq(json_object_array_length(mt_jpath(p, "top_logprobs")), 3);
        // greedy: the token is the most likely one, with its log-probability
        cr_assert_eq(mt_jpath_int(p, "id"), mt_jpath_int(p, "top_logprobs.0.id"));
        cr_assert_float_eq(json_object_get_double(mt_jpath(p, "logprob")),
                           json_object_get_double(mt_jpath(p, "top_logprobs.0.logprob")), 1e-6);
        cr_assert_eq(mt_jpath_int(p, "id"),
                     json_object_get_int(mt_jidx(mt_jpath(o, "tokens"), (size_t)t)));
    }
    // Banning the first greedy token: another comes first, and the banned one never comes.
    const int first = json_object_get_int(mt_jidx(mt_jpath(o, "tokens"), 0));
    char body[512];
    snprintf(
        body, sizeof body,
        "{\"prompt\":\"Once upon\",\"n_predict\":4,\"temperature\":0,\"return_tokens\":true,"
        "\"logit_bias\":[[%d,false]],\"response_fields\":[\"tokens\",\"timings/predicted_n\"]}",
        first);
    json_object *b = mt_post_json(&s, "/completion", body);
    cr_assert_eq(json_object_object_length(b), 2, "response_fields: only the two asked for");
    cr_assert_eq(mt_jpath_int(b, "timings/predicted_n"), 4);
    for (size_t t = 0; t < 4; t++)
        cr_assert_neq(json_object_get_int(mt_jidx(mt_jpath(b, "tokens"), t)), first);
    json_object_put(b);
    json_object_put(o);
    // A prompt longer than a slot: llama-server's error, with the counts.
    char big[8192] = "{\"prompt\":\"";
    for (int i = 0; i < 60; i++) strcat(big, "I believe the meaning ");
    strcat(big, "\"}");
    mt_resp r = mt_http(&s, "POST", "/completion", big, NULL);
    cr_assert_eq(r.status, 400);
    json_object *e = json_tokener_parse(r.body);
    cr_assert_str_eq(mt_jpath_str(e, "error.type"), "exceed_context_size_error");
    cr_assert_eq(mt_jpath_int(e, "error.n_ctx"), 256);
    cr_assert_gt(mt_jpath_int(e, "error.n_prompt_tokens"), 256);
    cr_assert_eq(mt_jpath_int(e, "error.code"), 400);
    json_object_put(e);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve_llama, props_slots_and_apply_template, .timeout = MT_HANG(120)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' --seed 7 -c 1024 -np 4 --slots --chat-template zephyr -t 1",
                    stories());
    mt_resp r = mt_http(&s, "GET", "/props", NULL, NULL);
    json_object *p = json_tokener_parse(r.body);
    cr_assert_eq(mt_jpath_int(p, "total_slots"), 4);
    cr_assert_eq(mt_jpath_int(p, "default_generation_settings.n_ctx"), 256);
    cr_assert_eq(mt_jpath_int(p, "default_generation_settings.params.seed"), 7);
    cr_assert(strstr(mt_jpath_str(p, "model_path"), "stories260K.gguf"));
    json_object_put(p);
    mt_resp_free(&r);
    r = mt_http(&s, "GET", "/slots", NULL, NULL);
    json_object *sl = json_tokener_parse(r.body);
    cr_assert_eq(json_object_array_length(sl), 4);
    cr_assert_eq(mt_jpath_int(sl, "3.n_ctx"), 256);
    cr_assert_eq(mt_jpath_int(sl, "3.id"), 3);
    cr_assert_eq(json_object_get_boolean(mt_jpath(sl, "0.is_processing")), false);
    json_object_put(sl);
    mt_resp_free(&r);
    json_object *t = mt_post_json(&s, "/apply-template",
                                  "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
    // llama.cpp's zephyr: its built-in names are llama.cpp's (a turn ends in <|endoftext|>)
    cr_assert_str_eq(mt_jpath_str(t, "prompt"), "<|user|>\nHi<|endoftext|>\n<|assistant|>\n");
    json_object_put(t);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve_llama, cors_preflights_and_api_keys, .timeout = MT_HANG(120)) {
    char keys[4096];
    snprintf(keys, sizeof keys, "%s", mt_path(mt_tmpdir(), "serve-keys.txt"));
    cr_assert(mt_write_file(keys, "\n  key-from-file  \n", 18));
    mt_server s;
    mt_server_start(&s, "-m '%s' -t 1 --api-key k1,k2 --api-key-file '%s' --cors-origins localhost",
                    stories(), keys);
    static const char *const ok[] = {"-H 'Authorization: Bearer k1'",
                                     "-H 'Authorization: Bearer k2'",
                                     "-H 'X-Api-Key: key-from-file'"};
    for (int i = 0; i < 3; i++) {
        mt_resp r = mt_http(&s, "GET", "/v1/models", NULL, ok[i]);
        cr_assert_eq(r.status, 200, "%s: %s", ok[i], r.body);
        mt_resp_free(&r);
    }
    mt_resp r = mt_http(&s, "GET", "/v1/models", NULL, "-H 'Authorization: Bearer k3'");
    cr_assert_eq(r.status, 401);
    mt_resp_free(&r);
    // A preflight needs no key; a local page's origin is allowed, another is not.
    r = mt_http(&s, "OPTIONS", "/v1/chat/completions", NULL,
                "-H 'Origin: http://localhost:3000' -H 'Access-Control-Request-Method: POST'");
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.headers, "Access-Control-Allow-Origin: http://localhost:3000"), "%s",
              r.headers);
    cr_assert(strstr(r.headers, "Access-Control-Allow-Methods: GET, POST, DELETE, OPTIONS"));
    mt_resp_free(&r);
    r = mt_http(&s, "OPTIONS", "/v1/chat/completions", NULL,
                "-H 'Origin: http://localhost.evil.com' -H 'Access-Control-Request-Method: POST'");
    cr_assert_eq(r.status, 200);
    cr_assert_null(strstr(r.headers, "Access-Control-Allow-Origin"), "%s", r.headers);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve_llama, hf_repo_comes_from_the_hugging_face_cache, .timeout = MT_HANG(120)) {
    // The hub's layout: models--OWNER--NAME/refs/main, snapshots/<commit>/<file>.
    char cache[1024], dir[1200], cmd[16384];
    snprintf(cache, sizeof cache, "%.1000s", mt_path(mt_tmpdir(), "hf-cache"));
    snprintf(dir, sizeof dir, "%.1000s/models--ggml-org--test-stories/snapshots/abc123", cache);
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s' '%s/models--ggml-org--test-stories/refs' && "
             "printf abc123 > '%s/models--ggml-org--test-stories/refs/main' && "
             "ln -sf '%s' '%s/stories-Q8_0.gguf' && ln -sf '%s' '%s/stories-F32.gguf'",
             dir, cache, cache, stories(), dir, stories(), dir);
    cr_assert_eq(system(cmd), 0);
    setenv("LLAMA_CACHE", cache, 1);
    mt_server s;
    mt_server_start(&s, "-hf ggml-org/test-stories:f32 -t 1");
    char *log = mt_server_log(&s);
    cr_assert(strstr(log, "stories-F32.gguf on http"), "the :QUANT names the file: %s", log);
    free(log);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
    char *out = NULL, *err = NULL;
    snprintf(cmd, sizeof cmd, "'%s' -hf ggml-org/absent --hf-file x.gguf", mt_bin("mint-serve"));
    cr_assert_eq(mt_run(cmd, &out, &err), 1);
    cr_assert(strstr(err, "ggml-org/absent file x.gguf is not in the Hugging Face cache"), "%s",
              err);
    free(out);
    free(err);
    snprintf(cmd, sizeof cmd, "'%s' -hf '../etc'", mt_bin("mint-serve"));
    cr_assert_eq(mt_run(cmd, &out, &err), 1);
    cr_assert(strstr(err, "is not a repository name"), "%s", err);
    free(out);
    free(err);
    unsetenv("LLAMA_CACHE");
}

Test(serve_llama, anthropic_messages_and_prefill, .timeout = MT_HANG(180)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' " SUITE_FLAGS " --chat-template chatml", stories());
    // Anthropic's shape, the same text as the OpenAI chat of the same conversation at temperature
    // 0.
    json_object *a = mt_post_json(
        &s, "/v1/messages",
        "{\"model\":\"x\",\"max_tokens\":8,\"temperature\":0,\"system\":\"Be brief\","
        "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hi\"}]}]}");
    json_object *o = mt_post_json(
        &s, "/v1/chat/completions",
        "{\"max_tokens\":8,\"temperature\":0,\"messages\":[{\"role\":\"system\",\"content\":"
        "\"Be brief\"},{\"role\":\"user\",\"content\":\"Hi\"}]}");
    cr_assert_str_eq(mt_jpath_str(a, "type"), "message");
    cr_assert_str_eq(mt_jpath_str(a, "content.0.text"),
                     mt_jpath_str(o, "choices.0.message.content"));
    cr_assert_str_eq(mt_jpath_str(a, "stop_reason"), "max_tokens");
    cr_assert_eq(mt_jpath_int(a, "usage.output_tokens"), 8);
    json_object *t = mt_post_json(&s, "/v1/messages/count_tokens",
                                  "{\"system\":\"Be brief\",\"messages\":[{\"role\":\"user\","
                                  "\"content\":\"Hi\"}]}");
    cr_assert_eq(mt_jpath_int(t, "input_tokens"), mt_jpath_int(o, "usage.prompt_tokens"));
    json_object_put(t);
    json_object_put(o);
    // Streamed: named events, the text deltas adding up to the one-body text.
    mt_resp r = mt_http(&s, "POST", "/v1/messages",
                        "{\"max_tokens\":8,\"temperature\":0,\"stream\":true,\"system\":\"Be "
                        "brief\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}",
                        NULL);
    cr_assert(strstr(r.body, "event: message_start\ndata: ") &&
                  strstr(r.body, "event: message_stop\ndata: "),
              "%s", r.body);
    char joined[1024] = "";
    for (char *p = strstr(r.body, "\"text_delta\",\"text\":"); p;
         p = strstr(p + 1, "\"text_delta\",\"text\":")) {
        json_object *s1 = json_tokener_parse(p + strlen("\"text_delta\",\"text\":"));
        cr_assert(s1);
        strncat(joined, json_object_get_string(s1), sizeof joined - strlen(joined) - 1);
        json_object_put(s1);
    }
    cr_assert_str_eq(joined, mt_jpath_str(a, "content.0.text"));
    mt_resp_free(&r);
    json_object_put(a);
    r = mt_http(&s, "POST", "/v1/messages",
                "{\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
                "\"image\",\"source\":{\"type\":\"base64\",\"data\":\"AA==\"}}]}]}",
                NULL);
    cr_assert_eq(r.status, 500, "llama-server's status for an image it cannot see");
    cr_assert(strstr(r.body, "image input is not supported"), "%s", r.body);
    mt_resp_free(&r);
    // A last assistant message is continued: the prompt ends with its text, no end of turn.
    json_object *p = mt_post_json(
        &s, "/v1/chat/completions",
        "{\"max_tokens\":2,\"verbose\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"},"
        "{\"role\":\"assistant\",\"content\":\"Once upon\"}]}");
    const char *prompt = mt_jpath_str(p, "__verbose.prompt");
    cr_assert(strlen(prompt) > 9 && !strcmp(prompt + strlen(prompt) - 9, "Once upon"), "%s",
              prompt);
    json_object_put(p);
    // Its text parts are joined with a blank line, as llama-server continues them.
    p = mt_post_json(&s, "/v1/chat/completions",
                     "{\"max_tokens\":2,\"verbose\":true,\"messages\":[{\"role\":\"user\","
                     "\"content\":\"Hi\"},{\"role\":\"assistant\",\"content\":[{\"type\":"
                     "\"text\",\"text\":\"Wh\"},{\"type\":\"text\",\"text\":\"ill\"}]}]}");
    prompt = mt_jpath_str(p, "__verbose.prompt");
    cr_assert(strlen(prompt) > 7 && !strcmp(prompt + strlen(prompt) - 7, "Wh\n\nill"), "%s",
              prompt);
    json_object_put(p);
    r = mt_http(&s, "POST", "/v1/chat/completions",
                "{\"add_generation_prompt\":true,\"continue_final_message\":true,\"messages\":"
                "[{\"role\":\"user\",\"content\":\"Hi\"}]}",
                NULL);
    cr_assert_eq(r.status, 400);
    mt_resp_free(&r);
    // An empty list is an empty conversation, as llama-server renders it (Anthropic's too).
    r = mt_http(&s, "POST", "/v1/chat/completions", "{\"max_tokens\":2,\"messages\":[]}", NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    mt_resp_free(&r);
    r = mt_http(&s, "POST", "/v1/messages", "{\"max_tokens\":2,\"messages\":[]}", NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert(strstr(r.body, "\"type\":\"message\""), "%s", r.body);
    mt_resp_free(&r);
    // Two assistant messages at the end: no prefill, a malformed conversation (llama-server's 400).
    r = mt_http(&s, "POST", "/v1/chat/completions",
                "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"},{\"role\":"
                "\"assistant\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":\"b\"}]}",
                NULL);
    cr_assert_eq(r.status, 400);
    cr_assert(strstr(r.body, "2 or more assistant messages"), "%s", r.body);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

// response_format json_schema and grammar, as llama-server takes them: every answer of 12 seeds
// parses and fits the schema (the grammar is llama.cpp's json_schema_to_grammar's); a bad schema
// or grammar is a 400 naming it.
Test(serve_llama, schemas_and_grammars_constrain_every_answer, .timeout = MT_HANG(300)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' " SUITE_FLAGS " --chat-template chatml", stories());
    for (int seed = 0; seed < 12; seed++) {
        char body[1024];
        snprintf(body, sizeof body,
                 "{\"max_tokens\":200,\"seed\":%d,\"temperature\":1.0,\"messages\":[{\"role\":"
                 "\"user\",\"content\":\"Who?\"}],\"response_format\":{\"type\":\"json_schema\","
                 "\"json_schema\":{\"schema\":{\"type\":\"object\",\"properties\":{\"name\":{"
                 "\"type\":\"string\",\"maxLength\":8},\"age\":{\"type\":\"integer\","
                 "\"minimum\":0,\"maximum\":120}},\"required\":[\"name\",\"age\"],"
                 "\"additionalProperties\":false}}}}",
                 seed);
        json_object *o = mt_post_json(&s, "/v1/chat/completions", body);
        const char *text = mt_jpath_str(o, "choices.0.message.content");
        cr_assert_str_eq(mt_jpath_str(o, "choices.0.finish_reason"), "stop", "seed %d: %s", seed,
                         text);
        json_object *v = json_tokener_parse(text), *name, *age;
        cr_assert(v && json_object_is_type(v, json_type_object), "seed %d: not JSON: %s", seed,
                  text);
        cr_assert_eq(json_object_object_length(v), 2, "seed %d: %s", seed, text);
        cr_assert(json_object_object_get_ex(v, "name", &name) &&
                      json_object_is_type(name, json_type_string) &&
                      json_object_get_string_len(name) <= 8 &&
                      json_object_object_get_ex(v, "age", &age) &&
                      json_object_is_type(age, json_type_int) && json_object_get_int(age) >= 0 &&
                      json_object_get_int(age) <= 120,
                  "seed %d: %s", seed, text);
        json_object_put(v);
        json_object_put(o);
    }
    json_object *a = mt_post_json(&s, "/completion",
                                  "{\"prompt\":\"Once\",\"n_predict\":10,\"grammar\":\"root ::= "
                                  "\\\"a\\\"{5,5}\"}");
    cr_assert_str_eq(mt_jpath_str(a, "content"), "aaaaa");
    cr_assert_str_eq(mt_jpath_str(a, "stop_type"), "eos", "the grammar is complete: it ends");
    json_object_put(a);
    mt_resp r = mt_http(&s, "POST", "/completion",
                        "{\"prompt\":\"Once\",\"grammar\":\"root ::= \\\"a\"}", NULL);
    cr_assert_eq(r.status, 400);
    cr_assert(strstr(r.body, "\"param\":\"grammar\""), "%s", r.body);
    mt_resp_free(&r);
    r = mt_http(&s, "POST", "/completion",
                "{\"prompt\":\"Once\",\"json_schema\":{\"$ref\":\"#/nowhere\"}}", NULL);
    cr_assert_eq(r.status, 400, "%s", r.body);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

// Tools through the model's own template (Qwen 2.5's, a Hermes-style <tool_call>): with
// tool_choice "required" every answer of 8 seeds is a well-formed call of an offered function
// (a grammar holds the model to the format's syntax and the function's parameters), and the
// streamed deltas add up to the same call.
Test(serve_llama, required_tool_calls_are_well_formed, .timeout = MT_HANG(300)) {
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s", mt_data_path("templates/Qwen-Qwen2.5-7B-Instruct.jinja"));
    mt_server s;
    mt_server_start(&s, "-m '%s' -t 1 -c 1024 -np 1 --chat-template-file '%s'", stories(), tmpl);
    const char *req =
        "\"messages\":[{\"role\":\"user\",\"content\":\"Weather in Paris?\"}],"
        "\"tool_choice\":\"required\",\"tools\":[{\"type\":\"function\",\"function\":"
        "{\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\",\"properties\":"
        "{\"city\":{\"type\":\"string\",\"maxLength\":12}},\"required\":[\"city\"],"
        "\"additionalProperties\":false}}}]";
    for (int seed = 0; seed < 8; seed++) {
        char body[2048];
        snprintf(body, sizeof body,
                 "{%s,\"max_tokens\":120,\"seed\":%d,\"parallel_tool_calls\":false}", req, seed);
        json_object *o = mt_post_json(&s, "/v1/chat/completions", body);
        cr_assert_str_eq(mt_jpath_str(o, "choices.0.finish_reason"), "tool_calls", "seed %d: %s",
                         seed, json_object_to_json_string(o));
        cr_assert_str_eq(mt_jpath_str(o, "choices.0.message.tool_calls.0.function.name"),
                         "get_weather");
        const char *args = mt_jpath_str(o, "choices.0.message.tool_calls.0.function.arguments");
        json_object *a = json_tokener_parse(args), *city;
        cr_assert(a && json_object_object_get_ex(a, "city", &city) &&
                      json_object_is_type(city, json_type_string) &&
                      json_object_object_length(a) == 1,
                  "seed %d: arguments %s", seed, args);
        json_object_put(a);
        if (seed == 0) { // streamed: the call's name once, its arguments in pieces
            snprintf(body, sizeof body,
                     "{%s,\"max_tokens\":120,\"seed\":0,\"parallel_tool_calls\":false,"
                     "\"stream\":true}",
                     req);
            mt_resp r = mt_http(&s, "POST", "/v1/chat/completions", body, NULL);
            char joined[1024] = "";
            int names = 0;
            for (char *p = strstr(r.body, "data: {"); p; p = strstr(p + 1, "data: {")) {
                json_object *ev = json_tokener_parse(p + 6), *calls, *fn, *v;
                if (!ev) continue;
                json_object *d = mt_jpath(ev, "choices.0.delta");
                if (json_object_object_get_ex(d, "tool_calls", &calls) && calls) {
                    json_object_object_get_ex(mt_jidx(calls, 0), "function", &fn);
                    if (json_object_object_get_ex(fn, "name", &v)) names++;
                    if (json_object_object_get_ex(fn, "arguments", &v))
                        strncat(joined, json_object_get_string(v),
                                sizeof joined - strlen(joined) - 1);
                }
                json_object_put(ev);
            }
            cr_assert_eq(names, 1);
            cr_assert_str_eq(joined, args);
            cr_assert(strstr(r.body, "\"finish_reason\":\"tool_calls\""));
            mt_resp_free(&r);
        }
        json_object_put(o);
    }
    // "auto": a lazy grammar (free text until the model opens a call): an answer is text, or a
    // call that parses and fits the schema.
    char auto_req[1024];
    snprintf(auto_req, sizeof auto_req, "%s", req);
    memcpy(strstr(auto_req, "\"required\""), "\"auto\"    ", 10);
    for (int seed = 0; seed < 4; seed++) {
        char body[2048];
        snprintf(body, sizeof body, "{%s,\"max_tokens\":40,\"seed\":%d}", auto_req, seed);
        json_object *o = mt_post_json(&s, "/v1/chat/completions", body);
        const char *fin = mt_jpath_str(o, "choices.0.finish_reason");
        cr_assert(!strcmp(fin, "stop") || !strcmp(fin, "length") || !strcmp(fin, "tool_calls"),
                  "seed %d: %s", seed, fin);
        if (!strcmp(fin, "tool_calls")) {
            const char *args = mt_jpath_str(o, "choices.0.message.tool_calls.0.function.arguments");
            json_object *a = json_tokener_parse(args);
            cr_assert(a, "seed %d: arguments %s", seed, args);
            json_object_put(a);
        }
        json_object_put(o);
    }
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

// return_progress: with -b 16 a prompt is evaluated 16 tokens a step, and the stream says so
// before the first token (llama-server's prompt_progress: a record at admission holding the
// cached part, then one per step); timings_per_token adds timings to each. /metrics carries
// llama-server's llamacpp:* series, equal to the sums of the answers' timings.
Test(serve_llama, prompt_progress_and_llama_server_metrics, .timeout = MT_HANG(180)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' -np 1 -c 512 -b 16 -t 1", stories());
    const char *body = "{\"prompt\":\"Once upon a time there was a little girl who lived in a "
                       "village near the forest and she liked to play\",\"n_predict\":4,"
                       "\"temperature\":0,\"stream\":true,\"return_progress\":true,"
                       "\"timings_per_token\":true}";
    int prompt_sum = 0, cached_sum = 0, predicted_sum = 0;
    for (int round = 0; round < 2; round++) { // the second finds the prompt cached
        mt_resp r = mt_http(&s, "POST", "/completion", body, NULL);
        cr_assert_eq(r.status, 200);
        int n_prog = 0, total = -1, cache = -1, last = -1;
        json_object *final = NULL;
        for (char *line = strstr(r.body, "data: "); line; line = strstr(line + 1, "data: ")) {
            json_object *ev = json_tokener_parse(line + 6);
            cr_assert(ev);
            json_object *p = NULL, *stop = NULL;
            if (json_object_object_get_ex(ev, "prompt_progress", &p)) {
                cr_assert(mt_jpath(ev, "timings"), "timings_per_token");
                if (n_prog == 0) {
                    total = mt_jpath_int(p, "total");
                    cache = mt_jpath_int(p, "cache");
                    cr_assert_eq(mt_jpath_int(p, "processed"), cache, "the first holds the cache");
                    cr_assert_eq(mt_jpath_int(ev, "timings.prompt_n"), 0);
                } else {
                    cr_assert_gt(mt_jpath_int(p, "processed"), last);
                }
                last = mt_jpath_int(p, "processed");
                n_prog++;
            }
            if (json_object_object_get_ex(ev, "stop", &stop) && json_object_get_boolean(stop)) {
                json_object_put(final);
                final = json_object_get(ev);
            }
            json_object_put(ev);
        }
        cr_assert_eq(last, total, "the last record: the whole prompt");
        cr_assert_eq(n_prog, 1 + (total - cache + 15) / 16, "%d records, %d tokens, %d cached",
                     n_prog, total, cache);
        if (round == 1) cr_assert_gt(cache, 0, "the second request reuses the first's prompt");
        cr_assert(final);
        prompt_sum += mt_jpath_int(final, "timings.prompt_n");
        cached_sum += mt_jpath_int(final, "timings.cache_n");
        predicted_sum += mt_jpath_int(final, "timings.predicted_n");
        json_object_put(final);
        mt_resp_free(&r);
    }
    cr_expect_eq(mt_metric(&s, "llamacpp:prompt_tokens_total"), prompt_sum);
    cr_expect_eq(mt_metric(&s, "llamacpp:prompt_tokens_cached_total"), cached_sum);
    cr_expect_eq(mt_metric(&s, "llamacpp:tokens_predicted_total"), predicted_sum);
    cr_expect_gt(mt_metric(&s, "llamacpp:n_decode_total"), 0);
    cr_expect_eq(mt_metric(&s, "llamacpp:requests_processing"), 0);
    mt_resp r = mt_http(&s, "GET", "/metrics", NULL, NULL);
    cr_expect(strstr(r.body, "# TYPE llamacpp:prompt_tokens_total counter"));
    cr_expect(strstr(r.body, "# TYPE llamacpp:requests_deferred gauge"));
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

// POST /slots/N?action=save|restore|erase with --slot-save-path, as llama-server's clients use
// them: a saved slot restored into another slot makes a request sharing its prefix evaluate only
// the rest; the file is llama-server's layout (a plain token list, as older servers wrote it,
// restores too); erase makes the slot evaluate everything again; bad names and files are 400s.
Test(serve_llama, slots_save_restore_and_erase, .timeout = MT_HANG(180)) {
    char dir[2048];
    snprintf(dir, sizeof dir, "%s", mt_path(mt_tmpdir(), "slots")); // (a rotating buffer)
    mkdir(dir, 0755);
    mt_server s;
    mt_server_start(&s, "-m '%s' -np 2 -c 1024 -t 1 --slot-save-path '%s'", stories(), dir);
    const char *first = "{\"prompt\":\"Once upon a time there was a dog\",\"n_predict\":8,"
                        "\"temperature\":0,\"id_slot\":1}";
    json_object *a = mt_post_json(&s, "/completion", first);
    const int p_all = mt_jpath_int(a, "timings.prompt_n");
    cr_assert_eq(mt_jpath_int(a, "id_slot"), 1);
    cr_assert_eq(mt_jpath_int(a, "timings.cache_n"), 0);
    json_object_put(a);
    json_object *sv = mt_post_json(&s, "/slots/1?action=save", "{\"filename\":\"one.bin\"}");
    const int n_saved = mt_jpath_int(sv, "n_saved");
    cr_assert_eq(n_saved, p_all + 7, "the prompt and 7 of the 8 tokens are in the cache");
    cr_assert_eq(mt_jpath_int(sv, "n_written"), 4 * (7 + n_saved));
    json_object_put(sv);
    json_object *rs = mt_post_json(&s, "/slots/0?action=restore", "{\"filename\":\"one.bin\"}");
    cr_assert_eq(mt_jpath_int(rs, "n_restored"), n_saved);
    json_object_put(rs);
    json_object *b = mt_post_json(&s, "/completion",
                                  "{\"prompt\":\"Once upon a time there was a cat\","
                                  "\"n_predict\":4,\"temperature\":0,\"id_slot\":0}");
    cr_assert_eq(mt_jpath_int(b, "id_slot"), 0);
    cr_assert_gt(mt_jpath_int(b, "timings.cache_n"), 0, "the restored prefix is reused");
    cr_assert_lt(mt_jpath_int(b, "timings.prompt_n"), p_all);
    json_object_put(b);
    // The same tokens as a plain list (header, count, tokens), as servers before the packed
    // format wrote them.
    char path[4096];
    snprintf(path, sizeof path, "%s/one.bin", dir);
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    uint32_t words[4096];
    const size_t nw = fread(words, 4, 4096, f);
    fclose(f);
    cr_assert_eq(nw, (size_t)(7 + n_saved));
    cr_assert_eq(words[0], 0x67677371u);
    cr_assert_eq(words[3], 0xffffffffu);
    snprintf(path, sizeof path, "%s/legacy.bin", dir);
    f = fopen(path, "wb");
    uint32_t head[3] = {words[0], words[1], (uint32_t)n_saved};
    fwrite(head, 4, 3, f);
    fwrite(words + 6, 4, (size_t)n_saved, f);
    fclose(f);
    rs = mt_post_json(&s, "/slots/1?action=restore", "{\"filename\":\"legacy.bin\"}");
    cr_assert_eq(mt_jpath_int(rs, "n_restored"), n_saved);
    json_object_put(rs);
    // Erased, slot 1 evaluates the whole prompt again.
    json_object *er = mt_post_json(&s, "/slots/1?action=erase", "");
    cr_assert_eq(mt_jpath_int(er, "n_erased"), n_saved);
    json_object_put(er);
    a = mt_post_json(&s, "/completion", first);
    cr_assert_eq(mt_jpath_int(a, "timings.prompt_n"), p_all);
    json_object_put(a);
    // Refused: a name with a path, a file that is no slot file, an unknown action, a bad id.
    snprintf(path, sizeof path, "%s/junk.bin", dir);
    f = fopen(path, "wb");
    fputs("not a slot file", f);
    fclose(f);
    static const struct {
        const char *url, *body, *want;
        int status;
    } bad[] = {
        {"/slots/0?action=save", "{\"filename\":\"../escape.bin\"}", "Invalid filename", 400},
        {"/slots/0?action=restore", "{\"filename\":\"junk.bin\"}", "not a slot file", 400},
        {"/slots/0?action=restore", "{\"filename\":\"absent.bin\"}", "cannot read", 400},
        {"/slots/0?action=dance", "{}", "Invalid action", 400},
        {"/slots/x?action=erase", "{}", "Invalid slot ID", 400},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mt_resp r = mt_http(&s, "POST", bad[i].url, bad[i].body, NULL);
        cr_expect_eq(r.status, bad[i].status, "%s: %s", bad[i].url, r.body);
        cr_expect(strstr(r.body, bad[i].want), "%s: %s", bad[i].url, r.body);
        mt_resp_free(&r);
    }
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}
