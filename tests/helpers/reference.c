// reference.c - see reference.h.
#include "reference.h"

#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

double ref_logprob(const float *l, int n, int id) {
    float max = l[0];
    for (int i = 1; i < n; i++) max = l[i] > max ? l[i] : max;
    double sum = 0;
    for (int i = 0; i < n; i++) sum += exp((double)l[i] - max);
    return (double)l[id] - max - log(sum);
}

int ref_argmax(const float *l, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (l[i] > l[best]) best = i;
    return best;
}

static void add_dlogit(ref_stats *s, double d) {
    d = fabs(d);
    if (d > s->max_dlogit) s->max_dlogit = d;
    s->sum_dlogit += d;
    s->n_dlogit++;
}

// KL(ref || mint) from two full logit vectors, in double.
static double kl(const float *ref, const float *mine, int n) {
    double mr = ref[0], mm = mine[0];
    for (int i = 1; i < n; i++) {
        if (ref[i] > mr) mr = ref[i];
        if (mine[i] > mm) mm = mine[i];
    }
    double zr = 0, zm = 0;
    for (int i = 0; i < n; i++) {
        zr += exp(ref[i] - mr);
        zm += exp(mine[i] - mm);
    }
    double k = 0;
    for (int i = 0; i < n; i++) {
        double lpr = ref[i] - mr - log(zr), lpm = mine[i] - mm - log(zm);
        k += exp(lpr) * (lpr - lpm);
    }
    return k;
}

ref_stats ref_compare(const char *model_rel, const char *ref_rel, const ref_opts *opts) {
    ref_stats s;
    memset(&s, 0, sizeof s);
    s.first_divergence = -1;
    json_object *ref = mt_json_data(ref_rel);
    const char *model_path = mt_data_path(model_rel);
    mint_model *m;
    mint_err err;
    cr_assert_eq(mint_model_open(model_path, NULL, &m, &err), MINT_OK, "%s", err.msg);
    mint_model_desc d;
    mint_model_describe(m, &d);
    mint_ctx_params cp = mint_ctx_default_params();
    cp.n_threads = opts->n_threads ? opts->n_threads : 1;
    cp.n_ctx = 256;
    cp.kv_type = opts->kv_type;
    mint_ctx *ctx;
    cr_assert_eq(mint_ctx_create(m, &cp, &ctx, &err), MINT_OK, "%s", err.msg);

    json_object *run = mt_jget(mt_jget(ref, "runs"), opts->run);
    json_object *prompts = mt_jget(run, "prompts");
    int32_t seq[512];
    for (size_t pi = 0; pi < json_object_array_length(prompts); pi++) {
        json_object *p = mt_jidx(prompts, pi);
        json_object *toks = mt_jget(p, "tokens");
        int n_prompt = (int)json_object_array_length(toks);
        for (int i = 0; i < n_prompt; i++) seq[i] = json_object_get_int(mt_jidx(toks, i));
        json_object *text;
        if (json_object_object_get_ex(p, "text", &text)) {
            // Text prompts: mint's tokenization must equal llama.cpp's exactly.
            const char *t = json_object_get_string(text);
            int32_t ids[512];
            size_t n;
            cr_assert_eq(mint_tokenize(m, t, strlen(t), true, false, ids, 512, &n, &err), MINT_OK,
                         "%s", err.msg);
            cr_assert_eq((int)n, n_prompt, "prompt '%s': %zu tokens, reference %d", t, n, n_prompt);
            for (int i = 0; i < n_prompt; i++)
                cr_assert_eq(ids[i], seq[i], "prompt '%s' token %d", t, i);
        }
        cr_assert_eq(mint_eval(ctx, seq, n_prompt, 0, false, &err), MINT_OK, "%s", err.msg);
        const float *l = mint_get_logits(ctx, -1);
        // Top-10 after the prompt.
        json_object *top = mt_jget(p, "top");
        for (size_t k = 0; k < json_object_array_length(top); k++) {
            json_object *e = mt_jidx(top, k);
            int id = json_object_get_int(mt_jget(e, "id"));
            add_dlogit(&s, l[id] - json_object_get_double(mt_jget(e, "logit")));
        }
        json_object *last;
        if (json_object_object_get_ex(p, "last_logits", &last)) {
            float *rl = malloc((size_t)d.n_vocab * sizeof *rl);
            cr_assert_eq((int)json_object_array_length(last), d.n_vocab);
            for (int i = 0; i < d.n_vocab; i++) {
                rl[i] = (float)json_object_get_double(mt_jidx(last, i));
                add_dlogit(&s, l[i] - rl[i]);
            }
            s.sum_kl += kl(rl, l, d.n_vocab);
            s.n_kl++;
            free(rl);
        }
        // Greedy steps.
        json_object *g = mt_jget(p, "greedy");
        json_object *gt = mt_jget(g, "tokens"), *glp = mt_jget(g, "logprobs");
        json_object *gap = mt_jget(g, "gap");
        int n_gen = (int)json_object_array_length(gt);
        for (int st = 0; st < n_gen; st++) {
            if (opts->free_running && opts->gap_stop > 0 &&
                json_object_get_double(mt_jidx(gap, st)) < opts->gap_stop)
                break; // a near tie in llama.cpp's own logits: the sequences may part here
            int want = json_object_get_int(mt_jidx(gt, st));
            int got = ref_argmax(l, d.n_vocab);
            double dlp =
                fabs(ref_logprob(l, d.n_vocab, want) - json_object_get_double(mt_jidx(glp, st)));
            if (dlp > s.max_dlogprob) s.max_dlogprob = dlp;
            s.steps++;
            if (got == want)
                s.top1_agree++;
            else if (s.first_divergence < 0 && opts->free_running)
                s.first_divergence = s.steps - 1;
            int next = opts->free_running ? got : want;
            if (st + 1 == n_gen) break;
            seq[n_prompt + st] = next;
            cr_assert_eq(mint_eval(ctx, &next, 1, n_prompt + st, false, &err), MINT_OK, "%s",
                         err.msg);
            l = mint_get_logits(ctx, -1);
        }
    }
    mint_ctx_free(ctx);
    mint_model_close(m);
    json_object_put(ref);
    return s;
}
