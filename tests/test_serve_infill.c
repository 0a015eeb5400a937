// test_serve_infill.c - mint-serve's POST /infill against llama-server's answers to the same
// bodies on the same models (tests/reference/infill.json, made by tests/reference/make_infill.sh):
// the prompt it builds (its tokens as text, and their count) for FIM tokens found by text
// (StarCoder's <fim_prefix>), by key (tokenizer.ggml.fim_rep/sep_token_id: the repository-level
// form), with BOS and --spm-infill (DeepSeek-Coder's), under the n_batch / n_ctx / n_predict
// budgets; the 501 of a vocabulary without FIM tokens; and the 400 of bad bodies. The models are
// synthetic (random weights over the real vocabularies of MINT_TEST_DATA/vocab): only the prompt
// is compared, never the text generated.
#include "formats/gguf.h"
#include "helpers/helpers.h"
#include "helpers/server.h"

#include <criterion/criterion.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// A synthetic qwen2 (tiny shape) over a vocabulary of the test data, as make_infill.sh writes it.
static const char *model(const char *name, const char *vocab) {
    const char *path = mt_path(mt_tmpdir(), name);
    if (access(path, R_OK) == 0) return path;
    char v[64];
    snprintf(v, sizeof v, "vocab/%s", vocab);
    mint_synth_params p = {.preset = "qwen2",
                           .ftype = "F32",
                           .vocab = mt_data_path(v),
                           .seed = 1,
                           .n_threads = 2,
                           .shape = "tiny"};
    mint_err err;
    cr_assert_eq(mint_synth_write(&p, path, &err), MINT_OK, "%s: %s", name, err.msg);
    return path;
}

// StarCoder's vocabulary with the repository-level FIM ids given by key (<repo_name> 5,
// <file_sep> 6: llama.cpp finds neither by text).
static const char *repo_model(void) {
    const char *src = model("sc.gguf", "ggml-vocab-starcoder.gguf");
    const char *path = mt_path(mt_tmpdir(), "screp.gguf");
    mint_file *f;
    mint_err err;
    cr_assert_eq(mint_file_open(src, &f, &err), MINT_OK);
    mint_gguf_writer *w = mint_gguf_writer_create();
    mint_file_info info;
    mint_file_get_info(f, &info);
    for (uint64_t i = 0; i < info.n_kv; i++) mint_gguf_add_kv_from(w, f, i);
    mint_gguf_add_u32(w, "tokenizer.ggml.fim_rep_token_id", 5);
    mint_gguf_add_u32(w, "tokenizer.ggml.fim_sep_token_id", 6);
    for (uint64_t i = 0; i < info.n_tensors; i++) {
        mint_tensor_info t;
        mint_file_tensor(f, i, &t);
        mint_gguf_add_tensor(w, t.name, t.type, t.n_dims, t.ne, t.data, t.nbytes);
    }
    cr_assert_eq(mint_gguf_writer_write_file(w, path, &err), MINT_OK, "%s", err.msg);
    mint_gguf_writer_free(w);
    mint_file_close(f);
    return path;
}

static const char *model_path(const char *name) {
    if (strcmp(name, "screp.gguf") == 0) return repo_model();
    if (strcmp(name, "sc.gguf") == 0) return model(name, "ggml-vocab-starcoder.gguf");
    if (strcmp(name, "ds.gguf") == 0) return model(name, "ggml-vocab-deepseek-coder.gguf");
    if (strcmp(name, "nofim.gguf") == 0) return model(name, "ggml-vocab-gpt-2.gguf");
    cr_assert_fail("unknown model %s", name);
    return NULL;
}

// Every case of the reference on this model: one mint-serve per set of flags, each body posted
// as make_infill.sh posted it, the answer compared with llama-server's.
static void compare(const char *name) {
    json_object *ref = mt_json_source("tests/reference/infill.json");
    json_object *bodies = mt_jget(ref, "bodies"), *cases = mt_jget(ref, "cases");
    const char *flags = NULL;
    char path[4096]; // mt_path's buffers rotate
    snprintf(path, sizeof path, "%s", model_path(name));
    mt_server s;
    int n = 0;
    for (size_t i = 0; i < json_object_array_length(cases); i++) {
        json_object *c = mt_jidx(cases, i);
        if (strcmp(mt_jstr(c, "model"), name) != 0) continue;
        if (!flags || strcmp(flags, mt_jstr(c, "flags")) != 0) {
            if (flags) cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
            flags = mt_jstr(c, "flags");
            mt_server_start(&s, "-m '%s' %s --parallel 1 -t 1", path, flags);
        }
        json_object *body =
            json_tokener_parse(json_object_to_json_string(mt_jget(bodies, mt_jstr(c, "body"))));
        json_object_object_add(body, "n_predict", json_object_new_int(1));
        json_object_object_add(body, "temperature", json_object_new_double(0));
        mt_resp r = mt_http(&s, "POST", "/infill", json_object_to_json_string(body), NULL);
        json_object_put(body);
        const char *what = mt_jstr(c, "body");
        json_object *np = NULL; // llama-server's count of a prompt longer than the context
        cr_assert_eq(r.status, mt_jpath_int(c, "status"), "%s %s %s: %s", name, flags, what,
                     r.body);
        json_object *a = json_tokener_parse(r.body);
        cr_assert(a, "%s", r.body);
        if (r.status == 200) {
            cr_assert_eq(mt_jpath_int(a, "tokens_evaluated"), mt_jpath_int(c, "tokens_evaluated"),
                         "%s %s %s", name, flags, what);
            cr_assert_str_eq(mt_jpath_str(a, "prompt"), mt_jpath_str(c, "prompt"), "%s %s %s", name,
                             flags, what);
            cr_assert_eq(mt_jpath_int(a, "tokens_predicted"), 1);
        } else if (json_object_object_get_ex(c, "n_prompt_tokens", &np) && np) {
            cr_assert_eq(mt_jpath_int(a, "error.n_prompt_tokens"),
                         mt_jpath_int(c, "n_prompt_tokens"), "%s %s %s: %s", name, flags, what,
                         r.body);
        } else { // llama-server's message ends with a space mint leaves out
            const char *want = mt_jstr(c, "message");
            const char *got = mt_jpath_str(a, "error.message");
            cr_assert(strncmp(got, want, strlen(got)) == 0 && strlen(got) + 1 >= strlen(want),
                      "%s / %s", got, want);
            cr_assert_str_eq(mt_jpath_str(a, "error.type"), "not_supported_error");
        }
        json_object_put(a);
        mt_resp_free(&r);
        n++;
    }
    cr_assert(n > 0, "no case for %s", name);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
    json_object_put(ref);
}

Test(serve_infill, fim_tokens_found_by_text_as_llama_server, .timeout = MT_HANG(240)) {
    compare("sc.gguf");
}

Test(serve_infill, repository_level_prompt_as_llama_server, .timeout = MT_HANG(240)) {
    compare("screp.gguf");
}

Test(serve_infill, bos_and_spm_order_as_llama_server, .timeout = MT_HANG(240)) {
    compare("ds.gguf");
}

Test(serve_infill, a_vocabulary_without_fim_tokens_is_501, .timeout = MT_HANG(240)) {
    compare("nofim.gguf");
}

// The library's view of the same vocabularies.
Test(serve_infill, fim_token_ids_by_key_and_by_text) {
    struct {
        const char *name, *pre, *suf, *mid;
        int32_t rep, sep;
    } want[] = {
        {"sc.gguf", "<fim_prefix>", "<fim_suffix>", "<fim_middle>", -1, -1},
        {"screp.gguf", "<fim_prefix>", "<fim_suffix>", "<fim_middle>", 5, 6},
        {"nofim.gguf", NULL, NULL, NULL, -1, -1},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        mint_model *m;
        mint_err err;
        cr_assert_eq(mint_model_open(model_path(want[k].name), NULL, &m, &err), MINT_OK, "%s",
                     err.msg);
        const mint_fim_tokens t = mint_vocab_fim_tokens(m);
        const int32_t ids[3] = {t.pre, t.suf, t.mid};
        const char *texts[3] = {want[k].pre, want[k].suf, want[k].mid};
        for (int i = 0; i < 3; i++) {
            if (!texts[i])
                cr_assert_eq(ids[i], -1, "%s", want[k].name);
            else
                cr_assert_str_eq(mint_token_text(m, ids[i]), texts[i], "%s", want[k].name);
        }
        cr_assert_eq(t.rep, want[k].rep, "%s", want[k].name);
        cr_assert_eq(t.sep, want[k].sep, "%s", want[k].name);
        mint_model_close(m);
    }
}

Test(serve_infill, bad_bodies_are_400_in_one_line_and_completion_fields_apply,
     .timeout = MT_HANG(240)) {
    mt_server s;
    mt_server_start(&s, "-m '%s' -c 512 --parallel 1 -t 1", model_path("sc.gguf"));
    static const struct {
        const char *body, *param, *says;
    } bad[] = {
        {"{\"input_suffix\":\"b\"}", "input_prefix", "is required"},
        {"{\"input_prefix\":\"a\"}", "input_suffix", "is required"},
        {"{\"input_prefix\":{},\"input_suffix\":\"b\"}", "input_prefix", "must be"},
        {"{\"input_prefix\":[\"a\",99999999],\"input_suffix\":\"b\"}", "input_prefix", "token"},
        {"{\"input_prefix\":\"a\",\"input_suffix\":[true]}", "input_suffix", "must be"},
        {"{\"input_prefix\":\"a\",\"input_suffix\":\"b\",\"prompt\":5}", "prompt", "string"},
        {"{\"input_prefix\":\"a\",\"input_suffix\":\"b\",\"input_extra\":{}}", "input_extra",
         "array"},
        {"{\"input_prefix\":\"a\",\"input_suffix\":\"b\",\"input_extra\":[{\"filename\":\"f\"}]}",
         "input_extra", "text"},
        {"{\"input_prefix\":\"a\",\"input_suffix\":\"b\",\"input_extra\":[{\"text\":\"t\","
         "\"filename\":3}]}",
         "input_extra", "filename"},
        {"{\"input_prefix\":\"a\",\"input_suffix\":\"b\",\"n_predict\":\"x\"}", "n_predict", ""},
        {"[1]", NULL, "JSON object"},
        {"{\"input_prefix\":", NULL, ""},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        mt_resp r = mt_http(&s, "POST", "/infill", bad[k].body, NULL);
        cr_assert_eq(r.status, 400, "%s: %s", bad[k].body, r.body);
        json_object *o = json_tokener_parse(r.body);
        const char *msg = mt_jpath_str(o, "error.message");
        cr_assert(*msg && !strchr(msg, '\n') && strstr(msg, bad[k].says), "%s: %s", bad[k].body,
                  msg);
        if (bad[k].param) cr_assert_str_eq(mt_jpath_str(o, "error.param"), bad[k].param, "%s", msg);
        json_object_put(o);
        mt_resp_free(&r);
    }
    // /completion's fields: n_predict, streaming (events, the last one stopping).
    json_object *o = mt_post_json(
        &s, "/infill", "{\"input_prefix\":\"a\",\"input_suffix\":\"b\",\"n_predict\":3}");
    cr_assert_eq(mt_jpath_int(o, "tokens_predicted"), 3);
    cr_assert_str_eq(mt_jpath_str(o, "prompt"), "<fim_prefix>a<fim_suffix>b<fim_middle>");
    json_object_put(o);
    mt_resp r = mt_http(&s, "POST", "/infill",
                        "{\"input_prefix\":\"a\",\"input_suffix\":\"b\",\"n_predict\":3,"
                        "\"stream\":true}",
                        NULL);
    cr_assert_eq(r.status, 200);
    const char *last = NULL;
    int events = 0;
    for (const char *p = strstr(r.body, "data: "); p; p = strstr(p + 1, "data: "))
        last = p, events++;
    cr_assert(events >= 2 && last, "%s", r.body);
    json_object *ev = json_tokener_parse(last + 6);
    cr_assert(json_object_get_boolean(mt_jpath(ev, "stop")), "%s", last);
    cr_assert_eq(mt_jpath_int(ev, "tokens_predicted"), 3);
    json_object_put(ev);
    mt_resp_free(&r);
    cr_assert_eq(mt_server_stop(&s, SIGTERM, 30), 0);
}
