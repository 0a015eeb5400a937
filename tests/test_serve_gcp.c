// test_serve_gcp.c - mint-serve under Google Cloud Vertex AI's prediction protocol
// (AIP_MODE=PREDICTION, as llama-server reads it; tools/serve/handlers_gcp.c): instances named
// by camelCase or path answer as their endpoints answer alone, in order, a bad instance as an
// error in its place; the route, the port and the health path come from the AIP_* variables.
#include "helpers/helpers.h"
#include "helpers/server.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Test(serve_gcp, predictions_are_the_endpoints_answers, .timeout = MT_HANG(180)) {
    setenv("AIP_MODE", "PREDICTION", 1);
    setenv("AIP_PREDICT_ROUTE", "vertex/predict", 1); // the leading '/' is added
    setenv("AIP_HEALTH_ROUTE", "/ping", 1);
    mt_server s;
    mt_server_start(&s, "-m '%s' -np 2 -c 1024 -t 1 --temp 0", mt_data_path("stories260K.gguf"));
    const char *chat = "\"max_tokens\":6,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]";
    char body[1024];
    snprintf(body, sizeof body,
             "{\"instances\":[{\"@requestFormat\":\"chatCompletions\",%s},"
             "{\"@requestFormat\":\"/v1/chat/completions\",%s,\"stream\":true},"
             "{\"@requestFormat\":\"tokenize\",\"content\":\"Once upon\"},"
             "{\"@requestFormat\":\"nothing\"},7]}",
             chat, chat);
    json_object *p = mt_post_json(&s, "/vertex/predict", body);
    json_object *alone =
        mt_post_json(&s, "/v1/chat/completions",
                     "{\"max_tokens\":6,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
    const char *want = mt_jpath_str(alone, "choices.0.message.content");
    cr_assert_eq(json_object_array_length(mt_jpath(p, "predictions")), 5);
    cr_assert_str_eq(mt_jpath_str(p, "predictions.0.choices.0.message.content"), want);
    cr_assert_str_eq(mt_jpath_str(p, "predictions.1.choices.0.message.content"), want,
                     "a stream asked for is answered whole");
    cr_assert_gt(json_object_array_length(mt_jpath(p, "predictions.2.tokens")), 0);
    cr_assert(strstr(mt_jpath_str(p, "predictions.3.error.message"), "@requestFormat: nothing"));
    cr_assert(strstr(mt_jpath_str(p, "predictions.4.error.message"), "JSON object"));
    json_object_put(p);
    json_object_put(alone);
    mt_resp r = mt_http(&s, "POST", "/vertex/predict", "{\"instances\":{}}", NULL);
    cr_assert_eq(r.status, 400);
    cr_assert(strstr(r.body, "array field named instances"), "%s", r.body);
    mt_resp_free(&r);
    r = mt_http(&s, "GET", "/ping", NULL, NULL);
    cr_assert_eq(r.status, 200, "AIP_HEALTH_ROUTE answers as /health");
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
    unsetenv("AIP_MODE");
    unsetenv("AIP_PREDICT_ROUTE");
    unsetenv("AIP_HEALTH_ROUTE");
}
