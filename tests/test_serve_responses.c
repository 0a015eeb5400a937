// test_serve_responses.c - OpenAI's Responses API in mint-serve (POST /v1/responses, /responses,
// /v1/responses/input_tokens) against a live server: the answer's shape and its text equal to the
// chat endpoint's for the same greedy conversation, the stream's events in llama-server's order
// with deltas adding up to the same text, function tools and call items translated (a required
// call through Qwen 2.5's template), reasoning as its own item (Qwen 3's template), and bad
// bodies refused with one line.
#include "helpers/helpers.h"
#include "helpers/server.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *stories(void) {
    static char path[4096];
    snprintf(path, sizeof path, "%s", mt_data_path("stories260K.gguf"));
    return path;
}

#define FLAGS "--host 127.0.0.1 --seed 42 --ctx-size 512 --parallel 1 -t 1"

// The events of an SSE body: their names in order (space-separated into names) and, for each
// event of type want, its member key appended to joined.
static void events(const char *body, char *names, size_t cap, const char *want, const char *key,
                   char *joined, size_t jcap) {
    names[0] = joined[0] = '\0';
    for (const char *p = strstr(body, "event: "); p; p = strstr(p + 1, "event: ")) {
        const char *nl = strchr(p, '\n');
        cr_assert(nl && !strncmp(nl + 1, "data: ", 6), "an event line and its data: %s", p);
        char name[96];
        snprintf(name, sizeof name, "%.*s", (int)(nl - p - 7), p + 7);
        json_object *ev = json_tokener_parse(nl + 7);
        cr_assert(ev, "%s", nl + 7);
        cr_assert_str_eq(mt_jpath_str(ev, "type"), name, "the data's type is the event's name");
        strncat(names, name, cap - strlen(names) - 2);
        strcat(names, " ");
        if (!strcmp(name, want)) strncat(joined, mt_jpath_str(ev, key), jcap - strlen(joined) - 1);
        json_object_put(ev);
    }
}

Test(serve_responses, the_answer_and_its_stream_equal_the_chat_answer, .timeout = MT_HANG(180)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' " FLAGS " --chat-template chatml", stories());
    json_object *o = mt_post_json(&s, "/v1/chat/completions",
                                  "{\"max_tokens\":8,\"temperature\":0,\"messages\":[{\"role\":"
                                  "\"system\",\"content\":\"Be brief\"},{\"role\":\"user\","
                                  "\"content\":\"Hi\"}]}");
    const char *text = mt_jpath_str(o, "choices.0.message.content");
    // instructions + a string input, and the same as a list of message items: the same answer.
    const char *bodies[] = {
        "{\"model\":\"x\",\"max_output_tokens\":8,\"temperature\":0,\"instructions\":\"Be "
        "brief\",\"input\":\"Hi\",\"store\":false,\"metadata\":{}}",
        "{\"max_output_tokens\":8,\"temperature\":0,\"input\":[{\"role\":\"system\",\"content\":"
        "\"Be brief\"},{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":"
        "\"input_text\",\"text\":\"Hi\"}]}]}"};
    for (int b = 0; b < 2; b++) {
        json_object *r = mt_post_json(&s, b ? "/responses" : "/v1/responses", bodies[b]);
        cr_assert(!strncmp(mt_jpath_str(r, "id"), "resp_", 5), "%s", json_object_to_json_string(r));
        cr_assert_str_eq(mt_jpath_str(r, "object"), "response");
        cr_assert_str_eq(mt_jpath_str(r, "status"), "completed");
        cr_assert(mt_jpath_int(r, "created_at") > 1700000000);
        cr_assert_str_eq(mt_jpath_str(r, "output.0.type"), "message");
        cr_assert(!strncmp(mt_jpath_str(r, "output.0.id"), "msg_", 4));
        cr_assert_str_eq(mt_jpath_str(r, "output.0.role"), "assistant");
        cr_assert_str_eq(mt_jpath_str(r, "output.0.content.0.type"), "output_text");
        cr_assert_str_eq(mt_jpath_str(r, "output.0.content.0.text"), text);
        cr_assert_eq(json_object_array_length(mt_jpath(r, "output")), 1);
        cr_assert_eq(mt_jpath_int(r, "usage.output_tokens"), 8);
        cr_assert_eq(mt_jpath_int(r, "usage.input_tokens"), mt_jpath_int(o, "usage.prompt_tokens"));
        cr_assert_eq(mt_jpath_int(r, "usage.total_tokens"),
                     8 + mt_jpath_int(o, "usage.prompt_tokens"));
        json_object_put(r);
    }
    json_object *t = mt_post_json(&s, "/v1/responses/input_tokens",
                                  "{\"instructions\":\"Be brief\",\"input\":\"Hi\"}");
    cr_assert_eq(mt_jpath_int(t, "input_tokens"), mt_jpath_int(o, "usage.prompt_tokens"));
    json_object_put(t);
    // Streamed: llama-server's events in its order, the deltas adding up to the text.
    mt_resp r = mt_http(&s, "POST", "/v1/responses",
                        "{\"max_output_tokens\":8,\"temperature\":0,\"stream\":true,"
                        "\"instructions\":\"Be brief\",\"input\":\"Hi\"}",
                        NULL);
    cr_assert_eq(r.status, 200);
    char names[8192], joined[1024];
    events(r.body, names, sizeof names, "response.output_text.delta", "delta", joined,
           sizeof joined);
    cr_assert_str_eq(joined, text);
    const char *head = "response.created response.in_progress response.output_item.added "
                       "response.content_part.added response.output_text.delta ";
    const char *tail = "response.output_text.delta response.output_text.done "
                       "response.content_part.done response.output_item.done response.completed ";
    cr_assert(!strncmp(names, head, strlen(head)), "%s", names);
    cr_assert(strlen(names) > strlen(tail) && !strcmp(names + strlen(names) - strlen(tail), tail),
              "%s", names);
    cr_assert(!strstr(r.body, "[DONE]"), "no [DONE], as llama-server");
    const char *done = strstr(r.body, "event: response.completed\ndata: ");
    json_object *c = json_tokener_parse(done + strlen("event: response.completed\ndata: "));
    cr_assert_str_eq(mt_jpath_str(c, "response.output.0.content.0.text"), text);
    cr_assert_eq(mt_jpath_int(c, "response.usage.output_tokens"), 8);
    json_object_put(c);
    mt_resp_free(&r);
    json_object_put(o);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

Test(serve_responses, bad_bodies_are_refused_with_one_line, .timeout = MT_HANG(120)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' " FLAGS " --chat-template chatml", stories());
    static const struct {
        const char *body, *says;
        unsigned status;
    } bad[] = {
        {"{\"max_output_tokens\":2}", "'input' is required", 400},
        {"[1]", "one JSON object", 400},
        {"{\"input\":3}", "'input' must be a string or a list", 400},
        {"{\"input\":\"Hi\",\"previous_response_id\":\"resp_1\"}", "previous_response_id", 400},
        {"{\"input\":[{\"type\":\"item_reference\",\"id\":\"x\"}]}", "'item_reference'", 400},
        {"{\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_file\"}]}]}",
         "'input_file' is not supported", 400},
        {"{\"input\":[{\"type\":\"function_call\",\"name\":\"f\"}]}", "needs 'call_id'", 400},
        {"{\"input\":\"Hi\",\"text\":{\"format\":{\"type\":\"xml\"}}}", "'text.format'", 400},
        {"{\"input\":\"Hi\",\"tool_choice\":{\"type\":\"mcp\"}}", "'tool_choice'", 400},
        {"{\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_image\","
         "\"image_url\":\"data:image/png;base64,AA==\"}]}]}",
         "image input is not supported", 500},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        mt_resp r = mt_http(&s, "POST", "/v1/responses", bad[i].body, NULL);
        cr_assert_eq(r.status, bad[i].status, "%s: %u %s", bad[i].body, r.status, r.body);
        json_object *e = json_tokener_parse(r.body);
        const char *m = mt_jpath_str(e, "error.message");
        cr_assert(strstr(m, bad[i].says) && !strchr(m, '\n'), "%s: %s", bad[i].body, m);
        json_object_put(e);
        mt_resp_free(&r);
    }
    // text.format json_schema holds the answer to the schema.
    json_object *o = mt_post_json(
        &s, "/v1/responses",
        "{\"input\":\"Hi\",\"max_output_tokens\":40,\"text\":{\"format\":{\"type\":"
        "\"json_schema\",\"name\":\"n\",\"schema\":{\"type\":\"object\",\"properties\":{\"a\":"
        "{\"type\":\"integer\"}},\"required\":[\"a\"],\"additionalProperties\":false}}}}");
    json_object *a = json_tokener_parse(mt_jpath_str(o, "output.0.content.0.text")), *v;
    cr_assert(a && json_object_object_get_ex(a, "a", &v) && json_object_is_type(v, json_type_int),
              "%s", json_object_to_json_string(o));
    json_object_put(a);
    json_object_put(o);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

// Function tools in the Responses shape through Qwen 2.5's template: tool_choice "required" gives
// a function_call item (call_id, name, arguments that parse), streamed as output_item.added and
// argument deltas adding up to the same arguments; a conversation holding call and output items
// counts the same tokens as the same chat.
Test(serve_responses, function_tools_and_call_items, .timeout = MT_HANG(300)) {
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s", mt_data_path("templates/Qwen-Qwen2.5-7B-Instruct.jinja"));
    mt_server s;
    mt_server_start(&s, "-m '%s' -t 1 -c 1024 -np 1 --chat-template-file '%s'", stories(), tmpl);
    const char *tools =
        "\"tool_choice\":\"required\",\"parallel_tool_calls\":false,\"tools\":[{\"type\":"
        "\"function\",\"name\":\"get_weather\",\"description\":\"Weather\",\"parameters\":{"
        "\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"maxLength\":12}},"
        "\"required\":[\"city\"],\"additionalProperties\":false}},{\"type\":\"web_search\"}]";
    char body[2048];
    snprintf(body, sizeof body,
             "{\"input\":\"Weather in Paris?\",\"max_output_tokens\":120,\"seed\":0,%s}", tools);
    json_object *o = mt_post_json(&s, "/v1/responses", body);
    json_object *out = mt_jpath(o, "output"), *call = NULL;
    for (size_t k = 0; k < json_object_array_length(out); k++)
        if (!strcmp(mt_jpath_str(mt_jidx(out, k), "type"), "function_call")) call = mt_jidx(out, k);
    cr_assert(call, "%s", json_object_to_json_string(o));
    cr_assert_str_eq(mt_jpath_str(call, "name"), "get_weather");
    cr_assert_str_eq(mt_jpath_str(call, "status"), "completed");
    const char *call_id = mt_jpath_str(call, "call_id");
    char fc[256];
    snprintf(fc, sizeof fc, "fc_%s", call_id);
    cr_assert(call_id[0] && !strcmp(mt_jpath_str(call, "id"), fc));
    const char *args = mt_jpath_str(call, "arguments");
    json_object *a = json_tokener_parse(args), *city;
    cr_assert(a && json_object_object_get_ex(a, "city", &city) &&
                  json_object_is_type(city, json_type_string),
              "%s", args);
    json_object_put(a);
    snprintf(body, sizeof body,
             "{\"input\":\"Weather in Paris?\",\"max_output_tokens\":120,\"seed\":0,"
             "\"stream\":true,%s}",
             tools);
    mt_resp r = mt_http(&s, "POST", "/v1/responses", body, NULL);
    char names[16384], joined[1024];
    events(r.body, names, sizeof names, "response.function_call_arguments.delta", "delta", joined,
           sizeof joined);
    cr_assert_str_eq(joined, args, "%s", names);
    cr_assert(strstr(r.body, "\"type\":\"function_call\""), "%s", r.body);
    cr_assert(strstr(names, "response.output_item.added response.function_call_arguments.delta"),
              "%s", names);
    const char *end = "response.output_item.done response.completed ";
    cr_assert(!strcmp(names + strlen(names) - strlen(end), end), "%s", names);
    mt_resp_free(&r);
    json_object_put(o);
    // A conversation with a call and its output: the chat's messages, token for token.
    json_object *rt = mt_post_json(
        &s, "/v1/responses/input_tokens",
        "{\"instructions\":\"Be brief\",\"input\":[{\"role\":\"user\",\"content\":\"Weather?\"},"
        "{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"get_weather\",\"arguments\":"
        "\"{\\\"city\\\":\\\"Paris\\\"}\"},{\"type\":\"function_call_output\",\"call_id\":\"c1\","
        "\"output\":\"sunny\"},{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{"
        "\"type\":\"output_text\",\"text\":\"Sunny.\"}]},{\"role\":\"user\",\"content\":"
        "\"Thanks\"}]}");
    json_object *ct = mt_post_json(
        &s, "/v1/chat/completions/input_tokens",
        "{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief\"},{\"role\":\"user\","
        "\"content\":\"Weather?\"},{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{"
        "\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
        "\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]},{\"role\":\"tool\",\"tool_call_id\":"
        "\"c1\",\"content\":\"sunny\"},{\"role\":\"assistant\",\"content\":\"Sunny.\"},{\"role\":"
        "\"user\",\"content\":\"Thanks\"}]}");
    cr_assert(mt_jpath_int(ct, "input_tokens") > 20);
    cr_assert_eq(mt_jpath_int(rt, "input_tokens"), mt_jpath_int(ct, "input_tokens"));
    json_object_put(rt);
    json_object_put(ct);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}

// A reasoning template (Qwen 3's): the text inside <think> is a reasoning item before the
// message, streamed as reasoning_text deltas under its own output_item.added (a grammar makes
// stories260K write the block).
Test(serve_responses, reasoning_is_its_own_item, .timeout = MT_HANG(120)) {
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s", mt_data_path("templates/Qwen-Qwen3-0.6B.jinja"));
    mt_server s;
    mt_server_start(&s, "-m '%s' -t 1 -c 1024 -np 1 --chat-template-file '%s'", stories(), tmpl);
    const char *body = "{\"input\":\"Hi\",\"max_output_tokens\":40,\"grammar\":\"root ::= "
                       "\\\"<think>\\\\nabc\\\\n</think>\\\\n\\\\nhello\\\"\"%s}";
    char b[512];
    snprintf(b, sizeof b, body, "");
    json_object *o = mt_post_json(&s, "/v1/responses", b);
    cr_assert_str_eq(mt_jpath_str(o, "output.0.type"), "reasoning", "%s",
                     json_object_to_json_string(o));
    cr_assert(!strncmp(mt_jpath_str(o, "output.0.id"), "rs_", 3));
    cr_assert_str_eq(mt_jpath_str(o, "output.0.content.0.text"), "abc");
    cr_assert_str_eq(mt_jpath_str(o, "output.1.content.0.text"), "hello");
    json_object_put(o);
    snprintf(b, sizeof b, body, ",\"stream\":true");
    mt_resp r = mt_http(&s, "POST", "/v1/responses", b, NULL);
    char names[8192], joined[256];
    events(r.body, names, sizeof names, "response.reasoning_text.delta", "delta", joined,
           sizeof joined);
    cr_assert_str_eq(joined, "abc");
    const char *head = "response.created response.in_progress response.output_item.added "
                       "response.reasoning_text.delta ";
    cr_assert(!strncmp(names, head, strlen(head)), "%s", names);
    cr_assert(strstr(names, "response.output_item.done response.output_text.done "), "%s", names);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}
