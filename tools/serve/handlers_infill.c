// handlers_infill.c - llama-server's POST /infill (fill-in-the-middle, what editor plugins such as
// llama.vim call): input_prefix, input_suffix, optional input_extra ([{filename, text}] chunks
// of other files) and prompt become one token sequence in llama-server's order (its
// format_prompt_infill), which then goes through /completion's flow as a prompt of token ids:
// the same fields, jobs, stream and answer.
//
// The sequence, each part cut to a budget (n_batch: -b, else llama-server's default 2048):
//   [extra] [BOS] FIM_PRE prefix prompt FIM_SUF suffix FIM_MID
// (--spm-infill swaps the two middle parts: FIM_SUF suffix, then FIM_PRE prefix prompt), where
//   extra  = FIM_REP "myproject\n" (when the vocabulary has FIM_REP), then per chunk
//            FIM_SEP filename "\n" text (without FIM_SEP: "\n\n--- snippet ---\n\n" text),
//            then FIM_SEP "filename\n"; its last n_ctx - n_batch - 2 * n_predict tokens are kept
//            (n_predict: -n, -1 by default, so the whole context less a batch, plus 2);
//   prefix = its last 3 * (n_batch / 4) tokens;
//   suffix = its first n_batch / 4 - 2 - (prompt's tokens) tokens (none when that is < 0).
// BOS comes when the vocabulary adds one. Texts are tokenized without special tokens, the
// prompt with them (llama-server's rules). A prefix or suffix may also be a list of texts and
// token ids, as /completion's prompt.
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INFILL_DEFAULT_BATCH 2048 // llama-server's -b when none is given

// A growing token list; ok turns false (and stays) when memory runs out or a text fails.
typedef struct toks {
    int32_t *v; // [n] ids
    int n, cap;
    bool ok;
    char msg[MINT_ERR_MSG_MAX]; // why not ok
} toks;

static void toks_add(toks *t, const int32_t *ids, int n) {
    if (!t->ok || n <= 0) return;
    if (t->n + n > t->cap) {
        int cap = (t->n + n) * 2;
        int32_t *v = realloc(t->v, (size_t)cap * sizeof *v);
        if (!v) {
            t->ok = false;
            snprintf(t->msg, sizeof t->msg, "out of memory");
            return;
        }
        t->v = v;
        t->cap = cap;
    }
    memcpy(t->v + t->n, ids, (size_t)n * sizeof *ids);
    t->n += n;
}

static void toks_one(toks *t, int32_t id) {
    toks_add(t, &id, 1);
}

static void toks_text(toks *t, const mint_model *m, const char *s, size_t len, bool special) {
    int32_t *ids = NULL;
    size_t n = 0;
    mint_err err;
    if (!t->ok || len == 0) return;
    if (serve_tokenize(m, s, len, false, special, &ids, &n, &err) != MINT_OK) {
        t->ok = false;
        snprintf(t->msg, sizeof t->msg, "%s", err.msg);
        return;
    }
    toks_add(t, ids, (int)n);
    free(ids);
}

static void toks_str(toks *t, const mint_model *m, json_object *s, bool special) {
    toks_text(t, m, json_object_get_string(s), (size_t)json_object_get_string_len(s), special);
}

// input_prefix / input_suffix: a text, or a list of texts and token ids; false when neither.
static bool mixed_ok(json_object *v, int32_t n_vocab) {
    if (json_object_is_type(v, json_type_string)) return true;
    if (!json_object_is_type(v, json_type_array)) return false;
    for (size_t k = 0; k < json_object_array_length(v); k++) {
        json_object *e = json_object_array_get_idx(v, k);
        if (json_object_is_type(e, json_type_string)) continue;
        if (!json_object_is_type(e, json_type_int)) return false;
        const int64_t id = json_object_get_int64(e);
        if (id < 0 || id >= n_vocab) return false;
    }
    return true;
}

static void toks_mixed(toks *t, const mint_model *m, json_object *v) {
    if (json_object_is_type(v, json_type_string)) {
        toks_str(t, m, v, false);
        return;
    }
    for (size_t k = 0; k < json_object_array_length(v); k++) {
        json_object *e = json_object_array_get_idx(v, k);
        if (json_object_is_type(e, json_type_string))
            toks_str(t, m, e, false);
        else
            toks_one(t, (int32_t)json_object_get_int64(e));
    }
}

// The request's faults, in llama-server's order; NULL when the body is well-formed.
static const char *check_body(json_object *o, int32_t n_vocab, const char **param) {
    json_object *v;
    if (json_object_object_get_ex(o, "prompt", &v) && !json_object_is_type(v, json_type_string))
        return *param = "prompt", "\"prompt\" must be a string";
    if (!json_object_object_get_ex(o, "input_prefix", &v))
        return *param = "input_prefix", "\"input_prefix\" is required";
    if (!mixed_ok(v, n_vocab))
        return *param = "input_prefix",
               "\"input_prefix\" must be a string or a list of strings and token ids";
    if (!json_object_object_get_ex(o, "input_suffix", &v))
        return *param = "input_suffix", "\"input_suffix\" is required";
    if (!mixed_ok(v, n_vocab))
        return *param = "input_suffix",
               "\"input_suffix\" must be a string or a list of strings and token ids";
    if (!json_object_object_get_ex(o, "input_extra", &v) || json_object_is_type(v, json_type_null))
        return NULL;
    *param = "input_extra";
    if (!json_object_is_type(v, json_type_array))
        return "\"input_extra\" must be an array of {\"filename\": string, \"text\": string}";
    for (size_t k = 0; k < json_object_array_length(v); k++) {
        json_object *chunk = json_object_array_get_idx(v, k), *f;
        if (!json_object_is_type(chunk, json_type_object) ||
            !json_object_object_get_ex(chunk, "text", &f) ||
            !json_object_is_type(f, json_type_string))
            return "each input_extra chunk needs a \"text\" string";
        if (json_object_object_get_ex(chunk, "filename", &f) &&
            !json_object_is_type(f, json_type_string))
            return "an input_extra chunk's \"filename\" must be a string";
    }
    return NULL;
}

// The repository-level context before the prefix (all of it; the caller keeps its tail).
static void extra_context(toks *t, const mint_model *m, const mint_fim_tokens *fim,
                          json_object *extra) {
    static const char repo[] = "myproject\n", file[] = "filename\n";
    static const char snippet[] = "\n\n--- snippet ---\n\n";
    if (fim->rep >= 0) {
        toks_one(t, fim->rep);
        toks_text(t, m, repo, sizeof repo - 1, false);
    }
    for (size_t k = 0; extra && k < json_object_array_length(extra); k++) {
        json_object *chunk = json_object_array_get_idx(extra, k), *text;
        json_object_object_get_ex(chunk, "text", &text);
        if (fim->sep >= 0) {
            json_object *name = NULL; // absent: "tmp", as llama-server names it
            json_object_object_get_ex(chunk, "filename", &name);
            const char *fn = name ? json_object_get_string(name) : "tmp";
            const size_t len = name ? (size_t)json_object_get_string_len(name) : 3;
            char *line = malloc(len + 2);
            if (!line) {
                t->ok = false;
                snprintf(t->msg, sizeof t->msg, "out of memory");
                return;
            }
            memcpy(line, fn, len);
            line[len] = '\n';
            toks_one(t, fim->sep);
            toks_text(t, m, line, len + 1, false);
            free(line);
        } else {
            toks_text(t, m, snippet, sizeof snippet - 1, false);
        }
        toks_str(t, m, text, false);
    }
    if (fim->sep >= 0) {
        toks_one(t, fim->sep);
        toks_text(t, m, file, sizeof file - 1, false);
    }
}

static int imin(int a, int b) {
    return a < b ? a : b;
}

static int imax(int a, int b) {
    return a > b ? a : b;
}

// Builds the whole sequence into out (see the top of the file).
static void build(serve_http *h, json_object *o, const mint_fim_tokens *fim, toks *out) {
    const mint_model *m = sched_model(h->e);
    const serve_config *cfg = h->cfg;
    const int n_batch = cfg->n_batch > 0 ? cfg->n_batch : INFILL_DEFAULT_BATCH;
    json_object *v, *extra = NULL;
    toks pre = {.ok = true}, suf = {.ok = true}, prompt = {.ok = true}, ext = {.ok = true};
    json_object_object_get_ex(o, "input_prefix", &v);
    toks_mixed(&pre, m, v);
    json_object_object_get_ex(o, "input_suffix", &v);
    toks_mixed(&suf, m, v);
    if (json_object_object_get_ex(o, "prompt", &v)) toks_str(&prompt, m, v, true);
    json_object_object_get_ex(o, "input_extra", &extra);
    if (extra && !json_object_is_type(extra, json_type_array)) extra = NULL;
    extra_context(&ext, m, fim, extra);
    const toks *parts[] = {&pre, &suf, &prompt, &ext};
    for (int k = 0; k < 4; k++)
        if (!parts[k]->ok) {
            out->ok = false;
            snprintf(out->msg, sizeof out->msg, "%s", parts[k]->msg);
        }
    const int n_pre = imin(pre.n, 3 * (n_batch / 4));
    const int n_suf = imin(suf.n, imax(0, n_batch / 4 - (2 + prompt.n)));
    const int n_ext = imin(imax(0, cfg->n_ctx - n_batch - 2 * cfg->n_predict), ext.n);
    toks_add(out, ext.v + ext.n - n_ext, n_ext);
    mint_model_desc d;
    mint_model_describe(m, &d);
    if (d.add_bos && d.bos >= 0) toks_one(out, d.bos);
    for (int half = 0; half < 2; half++) {
        if ((half == 0) != cfg->spm_infill) { // the prefix half
            toks_one(out, fim->pre);
            toks_add(out, pre.v + pre.n - n_pre, n_pre);
            toks_add(out, prompt.v, prompt.n);
        } else {
            toks_one(out, fim->suf);
            toks_add(out, suf.v, n_suf);
        }
    }
    toks_one(out, fim->mid);
    free(pre.v);
    free(suf.v);
    free(prompt.v);
    free(ext.v);
}

enum MHD_Result handle_infill(serve_http *h, struct MHD_Connection *c, const serve_call *r) {
    const mint_fim_tokens fim = mint_vocab_fim_tokens(sched_model(h->e));
    if (fim.pre < 0 || fim.suf < 0 || fim.mid < 0) // llama-server checks this before the body
        return reply_error(c, 501, "not_supported_error", NULL,
                           "Infill is not supported by this model:%s%s%s",
                           fim.pre < 0 ? " prefix token is missing." : "",
                           fim.suf < 0 ? " suffix token is missing." : "",
                           fim.mid < 0 ? " middle token is missing." : "");
    enum MHD_Result ret;
    json_object *o = reply_body_object(c, r->body, r->len, &ret);
    if (!o) return ret;
    const char *param = NULL, *bad = check_body(o, h->n_vocab, &param);
    if (bad) {
        json_object_put(o);
        return reply_error(c, 400, "invalid_request_error", param, "%s", bad);
    }
    toks t = {.ok = true};
    build(h, o, &fim, &t);
    if (!t.ok) {
        free(t.v);
        json_object_put(o);
        return reply_error(c, 400, "invalid_request_error", NULL, "%s", t.msg);
    }
    // /completion's body with the sequence as its prompt.
    json_object *ids = json_object_new_array();
    for (int k = 0; k < t.n; k++) json_object_array_add(ids, json_object_new_int(t.v[k]));
    free(t.v);
    json_object_object_del(o, "input_prefix");
    json_object_object_del(o, "input_suffix");
    json_object_object_del(o, "input_extra");
    json_object_object_add(o, "prompt", ids);
    const char *body = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    const serve_call call = {r->method, r->url, body, strlen(body)};
    ret = gen_request(h, c, &call, GEN_NATIVE);
    json_object_put(o);
    return ret;
}
