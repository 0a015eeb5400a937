// test_serve_faults.c - mint-serve under concurrency and faults: a full queue answers 503 with
// Retry-After, a client that leaves frees its slot at once, SIGTERM lets the request in flight
// finish and exits 0, eight requests at once each get mint-run's answer (no cross-talk between
// slots), and a small bounded load (tools/bench/serve-load.py) has no error and no answer that
// differs from its single-request one. Long generations use the synthetic model with a large
// context (random weights, so it never stops early: ignore_eos).
#include "helpers/helpers.h"
#include "helpers/server.h"
#include "helpers/tool.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LONG_ARGS "-t 1 --parallel 1 --queue 0 -c 4096 --max-tokens 4000"
#define LONG_BODY "{\"prompt\":\"the cat\",\"max_tokens\":4000,\"ignore_eos\":true,\"stream\":%s}"

// A curl in the background: POST body to path, response body to out, status code to code;
// bounded by max_s seconds. Returns its pid.
static pid_t curl_bg(const mt_server *s, const char *path, const char *body, const char *out,
                     const char *code, int max_s) {
    char *in = strdup(out);
    strcpy(in + strlen(in) - 4, ".req"); // out ends in ".out"
    cr_assert(mt_write_file(in, body, strlen(body)));
    char cmd[16384];
    snprintf(cmd, sizeof cmd,
             "exec curl -sS -N -m %d -H 'Content-Type: application/json' --data-binary '@%s' "
             "-o '%s' -w '%%{http_code}' '%s%s' >'%s' 2>/dev/null",
             max_s, in, out, s->url, path, code);
    free(in);
    return mt_spawn(cmd);
}

static char *slurp(const char *path) {
    char *s = (char *)mt_read_file(path, NULL);
    return s ? s : strdup("");
}

Test(serve_faults, full_queue_answers_503_with_retry_after, .timeout = MT_HANG(120)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' --chat-template zephyr " LONG_ARGS, mt_synth("small", "F32"));
    char body[256];
    snprintf(body, sizeof body, LONG_BODY, "true");
    const char *out = keep(mt_path(mt_tmpdir(), "long.out"));
    const char *code = keep(mt_path(mt_tmpdir(), "long.code"));
    pid_t bg = curl_bg(&s, "/v1/completions", body, out, code, 60);
    cr_assert_eq(mt_metric_wait(&s, "mint_slots_busy", 1, 10), 1, "the long request never ran");
    mt_resp r = mt_http(&s, "POST", "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":2}", NULL);
    cr_assert_eq(r.status, 503, "%d %s", r.status, r.body);
    cr_assert(strstr(r.headers, "Retry-After: 1"), "%s", r.headers);
    json_object *o = json_tokener_parse(r.body), *e;
    cr_assert(o && json_object_object_get_ex(o, "error", &e), "%s", r.body);
    cr_assert_str_eq(mt_jstr(e, "type"), "server_error");
    json_object_put(o);
    mt_resp_free(&r);
    cr_assert_eq(mt_metric(&s, "mint_requests_total{endpoint=\"/v1/completions\",status=\"503\"}"),
                 1);
    kill(bg, SIGTERM); // the long request's client leaves: its slot frees, the next gets in
    mt_wait(bg, 10);
    cr_assert_eq(mt_metric_wait(&s, "mint_slots_busy", 0, 5), 0);
    r = mt_http(&s, "POST", "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":2}", NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

// A client that gives up after a second (curl -m 1) on a long generation, streamed or not: its
// slot is free again within two seconds of leaving.
static void expect_slot_freed(const char *stream) {
    mt_server s;
    mt_server_start(&s, "-m '%s' --chat-template zephyr " LONG_ARGS, mt_synth("small", "F32"));
    char body[256];
    snprintf(body, sizeof body, LONG_BODY, stream);
    const char *out = keep(mt_path(mt_tmpdir(), "gone.out"));
    const char *code = keep(mt_path(mt_tmpdir(), "gone.code"));
    pid_t bg = curl_bg(&s, "/v1/completions", body, out, code, 1);
    const int rc = mt_wait(bg, 10);
    cr_assert_eq(rc, 28, "curl should have timed out (28), got %d", rc); // still generating
    cr_assert_eq(mt_metric_wait(&s, "mint_slots_busy", 0, 2), 0, "the slot stayed busy");
    cr_assert(mt_metric(&s, "mint_generated_tokens_total") < 4000);
    mt_resp r = mt_http(&s, "POST", "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":2}", NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve_faults, client_leaving_a_stream_frees_its_slot, .timeout = MT_HANG(120)) {
    expect_slot_freed("true");
}

Test(serve_faults, client_leaving_a_body_request_frees_its_slot, .timeout = MT_HANG(120)) {
    expect_slot_freed("false");
}

// (-c is the whole context, split over the slots as llama-server splits it: 4096 a slot.)
// Regression: a stream whose time ran out (or whose decode failed) ended with finish_reason
// "length", as if it were a whole answer; it now ends with an error event, which OpenAI's
// clients raise. One body answers 504.
Test(serve_faults, a_request_past_its_time_ends_in_an_error, .timeout = MT_HANG(120)) {
    mt_server s;
    mt_server_start(
        &s,
        "-m '%s' --chat-template zephyr -t 1 --parallel 2 -c 8192 --max-tokens 4000 --timeout 1",
        mt_synth("small", "F32"));
    char body[256];
    snprintf(body, sizeof body, LONG_BODY, "true");
    mt_resp r = mt_http(&s, "POST", "/v1/completions", body, NULL);
    cr_assert_eq(r.status, 200);
    const char *err = strstr(r.body, "data: {\"error\":{\"message\":\"the request took too long\"");
    cr_assert(err, "no error event: %.300s",
              r.body + (strlen(r.body) > 300 ? strlen(r.body) - 300 : 0));
    cr_assert_str_eq(strstr(err, "\n\n"), "\n\ndata: [DONE]\n\n");
    cr_assert_null(strstr(r.body, "\"finish_reason\":\""), "a finish chunk");
    mt_resp_free(&r);
    snprintf(body, sizeof body, LONG_BODY, "false");
    r = mt_http(&s, "POST", "/v1/completions", body, NULL);
    cr_assert_eq(r.status, 504, "%s", r.body);
    cr_assert(strstr(r.body, "\"type\":\"server_error\""), "%s", r.body);
    mt_resp_free(&r);
    cr_assert_eq(mt_metric(&s, "mint_slots_busy"), 0);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve_faults, sigterm_finishes_the_request_in_flight_and_exits_0, .timeout = MT_HANG(180)) {
    mt_server s;
    mt_server_start(
        &s, "-m '%s' --chat-template zephyr -t 1 --parallel 2 -c 8192 --max-tokens 4000 --drain 60",
        mt_synth("small", "F32"));
    const char *out = keep(mt_path(mt_tmpdir(), "drain.out"));
    const char *code = keep(mt_path(mt_tmpdir(), "drain.code"));
    pid_t bg =
        curl_bg(&s, "/v1/completions",
                "{\"prompt\":\"the cat\",\"max_tokens\":1500,\"ignore_eos\":true}", out, code, 120);
    cr_assert_eq(mt_metric_wait(&s, "mint_slots_busy", 1, 10), 1, "the request never ran");
    kill(s.pid, SIGTERM);
    // No new connection is taken (refused, or 503 while the listener closes).
    int status = -1;
    for (int i = 0; i < 100; i++) {
        mt_resp r = mt_http(&s, "GET", "/health", NULL, "--connect-timeout 2");
        status = r.status;
        mt_resp_free(&r);
        if (status != 200) break;
        usleep(20000);
    }
    cr_assert(status == 0 || status == 503, "still accepting after SIGTERM: %d", status);
    // The request in flight completes whole, and the server then exits 0.
    cr_assert_eq(mt_wait(bg, 120), 0, "curl failed");
    char *c = slurp(code), *body = slurp(out);
    cr_assert_str_eq(c, "200", "%s", body);
    json_object *o = json_tokener_parse(body), *u, *ct;
    cr_assert(o && json_object_object_get_ex(o, "usage", &u) &&
                  json_object_object_get_ex(u, "completion_tokens", &ct),
              "%s", body);
    cr_assert_eq(json_object_get_int(ct), 1500);
    json_object_put(o);
    free(c);
    free(body);
    cr_assert_eq(mt_server_stop(&s, 0, 60), 0); // already signalled: wait for the exit
    char *log = mt_server_log(&s);
    cr_assert(strstr(log, "SIGTERM: no new connections") && strstr(log, "stopped"), "%s", log);
    free(log);
}

Test(serve_faults, eight_at_once_each_equal_mint_run, .timeout = MT_HANG(300)) {
    const char *model = keep(mt_data_path("stories260K.gguf"));
    static const char *const prompts[8] = {"Once upon a time",
                                           "The little dog",
                                           "Lily and Tom went to the park",
                                           "One day, a big ball",
                                           "Tim had a toy",
                                           "The bird flew over the tree",
                                           "Anna found a stone",
                                           "The king had a big garden"};
    char *want[8];
    for (int i = 0; i < 8; i++) {
        char *out, *err;
        int rc = run_tool(&out, &err, "mint-run", "-m '%s' -p '%s' --temp 0 -n 48 -t 1", model,
                          prompts[i]);
        cr_assert_eq(rc, 0, "%s", err);
        size_t l = strlen(out);
        if (l && out[l - 1] == '\n') out[l - 1] = '\0';
        want[i] = strdup(out + strlen(prompts[i]));
        free(out);
        free(err);
    }
    mt_server s;
    mt_server_start(&s, "-m '%s' --chat-template zephyr -t 2 --parallel 8", model);
    for (int round = 0; round < 2; round++) { // twice: the second reuses cached prefixes
        pid_t pid[8];
        char out[8][256], code[8][256];
        for (int i = 0; i < 8; i++) {
            char name[32], body[512];
            snprintf(name, sizeof name, "c%d.out", i);
            snprintf(out[i], sizeof out[i], "%s", mt_path(mt_tmpdir(), name));
            snprintf(name, sizeof name, "c%d.code", i);
            snprintf(code[i], sizeof code[i], "%s", mt_path(mt_tmpdir(), name));
            snprintf(body, sizeof body,
                     "{\"prompt\":\"%s\",\"max_tokens\":48,\"temperature\":0,\"stream\":%s}",
                     prompts[i], (i + round) % 2 ? "true" : "false");
            pid[i] = curl_bg(&s, "/v1/completions", body, out[i], code[i], 60);
        }
        for (int i = 0; i < 8; i++) {
            cr_assert_eq(mt_wait(pid[i], 90), 0);
            char *c = slurp(code[i]), *body = slurp(out[i]);
            cr_assert_str_eq(c, "200", "%s", body);
            char text[4096] = "";
            if ((i + round) % 2) { // streamed: join the chunks' texts
                for (char *p = strstr(body, "\"text\":\""); p; p = strstr(p + 1, "\"text\":\"")) {
                    json_object *o = json_tokener_parse(p + 7);
                    cr_assert(o, "%s", p);
                    strcat(text, json_object_get_string(o));
                    json_object_put(o);
                }
            } else {
                json_object *o = json_tokener_parse(body);
                snprintf(text, sizeof text, "%s",
                         mt_jstr(json_object_array_get_idx(mt_jget(o, "choices"), 0), "text"));
                json_object_put(o);
            }
            cr_assert_str_eq(text, want[i], "round %d, prompt '%s'", round, prompts[i]);
            free(c);
            free(body);
        }
    }
    for (int i = 0; i < 8; i++) free(want[i]);
    cr_assert_gt(mt_metric(&s, "mint_prompt_tokens_reused_total"), 0);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve_faults, bounded_load_has_no_error_and_no_cross_talk, .timeout = MT_HANG(180)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' --chat-template zephyr -t 2 --parallel 8",
                    mt_data_path("stories260K.gguf"));
    char cmd[8192], *out, *err;
    snprintf(cmd, sizeof cmd,
             "timeout 120 python3 '%s/tools/bench/serve-load.py' --url %s -n 40 -c 8 "
             "--max-tokens 32 --deadline 90 --timeout 60 --label ci",
             getenv("MINT_SOURCE_DIR"), s.url);
    int rc = mt_run(cmd, &out, &err);
    cr_assert_eq(rc, 0, "%s%s", out, err);
    cr_assert(strstr(out, ": 40 ok, 0 errors, 0 mismatches"), "%s", out);
    cr_log_info("%s", out);
    free(out);
    free(err);
    cr_assert_eq(mt_metric(&s, "mint_requests_total{endpoint=\"/v1/completions\",status=\"200\"}"),
                 40 + 16); // and the 16 single-request answers
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}
