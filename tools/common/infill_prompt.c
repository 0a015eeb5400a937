// infill_prompt.c - llama-server's /infill prompt from a request body (infill_prompt.h).
#include "infill_prompt.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A growing token list; ok turns false (and stays) when memory runs out or a text fails.
typedef struct toks {
    int32_t *v; // [n] ids
    int n, cap;
    bool ok;
    char msg[MINT_ERR_MSG_MAX]; // why not ok
} toks;

// Makes room for n more ids; false (and not ok) when memory runs out.
static bool toks_room(toks *t, int n) {
    if (t->n + n <= t->cap) return true;
    int cap = (t->n + n) * 2;
    int32_t *v = realloc(t->v, (size_t)cap * sizeof *v);
    if (!v) {
        t->ok = false;
        snprintf(t->msg, sizeof t->msg, "out of memory");
        return false;
    }
    t->v = v;
    t->cap = cap;
    return true;
}

static void toks_add(toks *t, const int32_t *ids, int n) {
    if (!t->ok || n <= 0 || !toks_room(t, n)) return;
    memcpy(t->v + t->n, ids, (size_t)n * sizeof *ids);
    t->n += n;
}

static void toks_one(toks *t, int32_t id) {
    toks_add(t, &id, 1);
}

static void toks_text(toks *t, const mint_model *m, const char *s, size_t len, bool special) {
    if (!t->ok || len == 0) return;
    // Room for a token per byte first; the library says how many when that is not enough.
    for (size_t want = len + 8;;) {
        if (t->n + (int64_t)want > INT32_MAX / 2) {
            t->ok = false;
            snprintf(t->msg, sizeof t->msg, "the input is too long");
            return;
        }
        if (!toks_room(t, (int)want)) return;
        size_t n = 0;
        mint_err err;
        const mint_status st =
            mint_tokenize(m, s, len, false, special, t->v + t->n, want, &n, &err);
        if (st == MINT_OK) {
            t->n += (int)n;
            return;
        }
        if (st != MINT_E_LIMIT || n <= want) {
            t->ok = false;
            snprintf(t->msg, sizeof t->msg, "%s", err.msg);
            return;
        }
        want = n;
    }
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
const char *infill_check(json_object *o, int32_t n_vocab, const char **param) {
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

bool infill_tokens(const mint_model *m, const mint_fim_tokens *fim, json_object *o,
                   const infill_limits *lim, int32_t **ids, int *n, char *msg, size_t cap) {
    toks out_ = {.ok = true}, *out = &out_;
    const int n_batch = lim->n_batch > 0 ? lim->n_batch : INFILL_DEFAULT_BATCH;
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
    const int n_ext = imin(imax(0, lim->n_ctx - n_batch - 2 * lim->n_predict), ext.n);
    if (n_ext > 0) toks_add(out, ext.v + ext.n - n_ext, n_ext); // the tail
    mint_model_desc d;
    mint_model_describe(m, &d);
    if (d.add_bos && d.bos >= 0) toks_one(out, d.bos);
    for (int half = 0; half < 2; half++) {
        if ((half == 0) != lim->spm) { // the prefix half
            toks_one(out, fim->pre);
            if (n_pre > 0) toks_add(out, pre.v + pre.n - n_pre, n_pre);
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
    if (!out->ok) {
        snprintf(msg, cap, "%s", out->msg);
        free(out->v);
        return false;
    }
    *ids = out->v;
    *n = out->n;
    return true;
}
