// test_serve_router.c - mint-serve's router mode (tools/serve/models.h) as its clients meet it:
// started without a model, it lists --models-dir's files, starts a child per model on demand,
// forwards chat completions to it (streamed and not, the child's answer passed on), loads and
// unloads on request, evicts the least recently used model at --models-max, refuses downloads
// and bad presets with one clear line, and leaves no child behind when it stops (SIGTERM) or is
// killed (SIGKILL). tools/scripts/llama-server-suite.sh runs llama.cpp's test_router.py besides.
#include "helpers/helpers.h"
#include "helpers/server.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

// A --models-dir holding stories260K twice (models "a" and "b"), and an empty Hugging Face cache
// so that only these are listed.
static const char *models_dir(void) {
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s", mt_path(mt_tmpdir(), "router-models"));
    mkdir(dir, 0755);
    const char *names[] = {"a.gguf", "b.gguf"};
    for (int i = 0; i < 2; i++) {
        char link[4200];
        snprintf(link, sizeof link, "%s/%s", dir, names[i]);
        unlink(link);
        cr_assert_eq(symlink(mt_data_path("stories260K.gguf"), link), 0);
    }
    char cache[4096];
    snprintf(cache, sizeof cache, "%s", mt_path(mt_tmpdir(), "router-empty-cache"));
    mkdir(cache, 0755);
    setenv("LLAMA_CACHE", cache, 1);
    return dir;
}

// The status of model id in GET /models ("" when it is not listed).
static const char *status_of(const mt_server *s, const char *id, char *out, size_t cap) {
    mt_resp r = mt_http(s, "GET", "/models", NULL, NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    json_object *o = json_tokener_parse(r.body), *data = mt_jpath(o, "data");
    out[0] = '\0';
    for (size_t i = 0; i < json_object_array_length(data); i++) {
        json_object *m = json_object_array_get_idx(data, i);
        if (!strcmp(mt_jpath_str(m, "id"), id))
            snprintf(out, cap, "%s", mt_jpath_str(m, "status.value"));
    }
    json_object_put(o);
    mt_resp_free(&r);
    return out;
}

static void wait_status(const mt_server *s, const char *id, const char *want) {
    char got[32];
    for (int i = 0; i < 600 && strcmp(status_of(s, id, got, sizeof got), want); i++)
        usleep(50 * 1000);
    cr_assert_str_eq(got, want, "model %s", id);
}

// Processes whose command line holds needle (the router's children name the models folder).
static int processes_with(const char *needle) {
    int n = 0;
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        char path[300], cmd[8192];
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t k = fread(cmd, 1, sizeof cmd - 1, f);
        fclose(f);
        for (size_t i = 0; i < k; i++)
            if (!cmd[i]) cmd[i] = ' ';
        cmd[k] = '\0';
        n += strstr(cmd, needle) != NULL && strstr(cmd, " --alias ") != NULL; // a child
    }
    if (d) closedir(d);
    return n;
}

static void wait_no_children(const char *dir) {
    int n = 0;
    for (int i = 0; i < 200 && (n = processes_with(dir)) > 0; i++) usleep(50 * 1000);
    cr_assert_eq(n, 0, "children of the router are left");
}

#define CHAT(model, extra)                                                                         \
    "{\"model\":\"" model "\",\"max_tokens\":8,\"temperature\":0," extra                           \
    "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}"

Test(serve_router, lists_loads_forwards_and_unloads, .timeout = MT_HANG(180)) {
    const char *dir = models_dir();
    mt_server s;
    mt_server_start(&s, "--models-dir '%s' -c 256 -np 1 -t 1", dir);
    char st[32];
    cr_assert_str_eq(status_of(&s, "a", st, sizeof st), "unloaded");
    cr_assert_str_eq(status_of(&s, "b", st, sizeof st), "unloaded");
    json_object *p = json_tokener_parse(mt_http(&s, "GET", "/props", NULL, NULL).body);
    cr_assert_str_eq(mt_jpath_str(p, "role"), "router");
    cr_assert_eq(mt_jpath_int(p, "max_instances"), 4, "--models-max's default");
    json_object_put(p);
    // A chat for "a" starts its child and is answered by it.
    json_object *o = mt_post_json(&s, "/v1/chat/completions", CHAT("a", ""));
    cr_assert_str_eq(mt_jpath_str(o, "model"), "a", "the child answers under the model's name");
    cr_assert_eq(mt_jpath_int(o, "usage.completion_tokens"), 8);
    const char *text = mt_jpath_str(o, "choices.0.message.content");
    cr_assert_gt(strlen(text), 0);
    char answer[1024];
    snprintf(answer, sizeof answer, "%s", text);
    json_object_put(o);
    cr_assert_str_eq(status_of(&s, "a", st, sizeof st), "loaded");
    cr_assert_str_eq(status_of(&s, "b", st, sizeof st), "unloaded");
    // Streamed through: the events' text is the same greedy answer, then [DONE].
    mt_resp r = mt_http(&s, "POST", "/v1/chat/completions", CHAT("a", "\"stream\":true,"), NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert(strstr(r.headers, "text/event-stream"), "%s", r.headers);
    char joined[1024] = "";
    for (char *l = strstr(r.body, "data: {"); l; l = strstr(l + 1, "data: {")) {
        json_object *ev = json_tokener_parse(l + 6);
        cr_assert(ev);
        json_object *c = NULL;
        json_object_object_get_ex(mt_jpath(ev, "choices.0.delta"), "content", &c);
        if (json_object_is_type(c, json_type_string))
            strncat(joined, json_object_get_string(c), sizeof joined - strlen(joined) - 1);
        json_object_put(ev);
    }
    cr_assert_str_eq(joined, answer);
    cr_assert(strstr(r.body, "data: [DONE]"));
    mt_resp_free(&r);
    // Unknown model, a download, a load of a running model: errors, not hangs.
    r = mt_http(&s, "POST", "/v1/chat/completions", CHAT("nope", ""), NULL);
    cr_assert_eq(r.status, 400, "%s", r.body);
    cr_assert(strstr(r.body, "model 'nope' not found"), "%s", r.body);
    mt_resp_free(&r);
    r = mt_http(&s, "POST", "/models", "{\"model\":\"x/y:Q8_0\"}", NULL);
    cr_assert_eq(r.status, 501, "%s", r.body);
    cr_assert(strstr(r.body, "does not download"), "%s", r.body);
    mt_resp_free(&r);
    r = mt_http(&s, "POST", "/models/load", "{\"model\":\"a\"}", NULL);
    cr_assert_eq(r.status, 400, "%s", r.body);
    mt_resp_free(&r);
    // Unload, then load on request.
    o = mt_post_json(&s, "/models/unload", "{\"model\":\"a\"}");
    cr_assert(json_object_get_boolean(mt_jpath(o, "success")));
    json_object_put(o);
    wait_status(&s, "a", "unloaded");
    o = mt_post_json(&s, "/models/load", "{\"model\":\"b\"}");
    cr_assert(json_object_get_boolean(mt_jpath(o, "success")));
    json_object_put(o);
    wait_status(&s, "b", "loaded");
    // SIGTERM: the router stops its children, then itself.
    cr_assert_eq(processes_with(dir), 1, "b's child runs");
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 60), 0);
    wait_no_children(dir);
}

Test(serve_router, models_max_evicts_the_least_recently_used, .timeout = MT_HANG(180)) {
    const char *dir = models_dir();
    mt_server s;
    mt_server_start(&s, "--models-dir '%s' --models-max 1 -c 256 -np 1 -t 1", dir);
    json_object_put(mt_post_json(&s, "/v1/chat/completions", CHAT("a", "")));
    char st[32];
    cr_assert_str_eq(status_of(&s, "a", st, sizeof st), "loaded");
    // "b" needs the only slot: idle "a" gives it up.
    json_object_put(mt_post_json(&s, "/v1/chat/completions", CHAT("b", "")));
    cr_assert_str_eq(status_of(&s, "b", st, sizeof st), "loaded");
    cr_assert_str_eq(status_of(&s, "a", st, sizeof st), "unloaded");
    cr_assert_eq(processes_with(dir), 1, "one child at --models-max 1");
    // SIGKILL leaves the router no time to stop them: its children still go (they die with it).
    cr_assert_eq(mt_server_stop(&s, SIGKILL, 30), 128 + SIGKILL);
    wait_no_children(dir);
}

Test(serve_router, a_bad_preset_is_one_clear_line, .timeout = MT_HANG(60)) {
    models_dir();
    const char *ini = mt_path(mt_tmpdir(), "router-bad.ini");
    FILE *f = fopen(ini, "w");
    fputs("[m]\nhf-repo = a/b\nthis is not a pair\n", f);
    fclose(f);
    char cmd[8192], *out = NULL, *err = NULL;
    snprintf(cmd, sizeof cmd, "'%s' --models-preset '%s' --port 0", mt_bin("mint-serve"), ini);
    cr_assert_eq(mt_run(cmd, &out, &err), 1);
    cr_assert(strstr(err, "line 3: a key without '='") && !strchr(strchr(err, '\n') + 1, '\n'),
              "%s", err);
    free(out), free(err);
    f = fopen(ini, "w");
    fputs("[m]\nhf-repo = a/b\nno-such-flag = 1\n", f);
    fclose(f);
    cr_assert_eq(mt_run(cmd, &out, &err), 1);
    cr_assert(strstr(err, "option 'no-such-flag' not recognized in preset 'm'"), "%s", err);
    free(out), free(err);
}
