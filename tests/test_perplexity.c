// test_perplexity.c - mint_perplexity against llama-perplexity (reference/perplexity.json,
// docs/tolerances.md 1.5, 3.6 and 3.7), its KL-divergence base file in llama.cpp's format, and
// its errors.
//
// What llama.cpp measured: stories260K.gguf and its six quants on tinystories_val.txt and
// wiki.test.raw, context 128, 1000 chunks; PPL with its +/-, and for the quants the mean KLD
// and the share of tokens with the same top token against the F32 model's base file.
//
// The KV cache. llama-perplexity ran with its defaults: an F16 K/V cache (and flash attention).
// For the F32 model that hardly matters (mint with F32 K/V: 4.2575 vs 4.2574 on tinystories).
// For the quants it does, at the size of the tolerances, so those comparisons run with mint's
// F16 cache, measured at 1000 chunks:
// - stories260K-f16: its weights change the output so little (mean KLD 3e-6) that K/V rounding
//   is most of llama.cpp's figure. With an F32 cache mint gets 0.000001 (llama.cpp 0.000003
//   +/- 0.000000) and same-top 99.941% (99.910 +/- 0.012); with F16, 0.000003 and 99.921%.
//   On wiki.test.raw even the F16 cache falls just short (see expect_kld).
// - wiki.test.raw, Q5_0: PPL 112.8175 with F32 K/V (+0.12% from llama.cpp's 112.6855),
//   112.6938 with F16 (+0.007%). stories260K on wiki gives many tokens tiny probabilities,
//   whose log grows the K/V rounding into the PPL.
//
// Cost: one 1000-chunk run evaluates 128,000 tokens, about 35 s of CPU with the scalar
// reference kernels (F16 K/V is slower). By default only stories260K.gguf on tinystories_val.txt
// runs at full length (F32 K/V). MINT_TEST_PPL=full runs every llama.cpp figure: the F32 model
// and the six quants on both texts, PPL and KLD, with an F16 cache (14 runs).
#include "helpers/helpers.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STORIES "stories260K.gguf"
#define TS      "tinystories_val.txt"
#define WIKI    "wiki.test.raw"

// llama-perplexity's settings for every reference figure.
#define REF_CTX    128
#define REF_CHUNKS 1000

static bool full_mode(void) {
    const char *v = getenv("MINT_TEST_PPL");
    return v && strcmp(v, "full") == 0;
}

// ---------------------------------------------------------------------------------------------
// Helpers

typedef struct text {
    char *p;  // bytes, NUL-terminated
    size_t n; // length
} text;

static text load_text(const char *rel) {
    text t;
    t.p = (char *)mt_read_file(mt_data_path(rel), &t.n);
    cr_assert(t.p, "cannot read %s", rel);
    return t;
}

// Text that every checkout has: the repository's README (English prose, about 5,000 tokens in the
// synthetic model's byte + letters vocabulary).
static text own_text(void) {
    const char *src = getenv("MINT_SOURCE_DIR");
    cr_assert(src, "MINT_SOURCE_DIR is not set (ctest sets it)");
    char path[4096];
    snprintf(path, sizeof path, "%s/README.md", src);
    text t;
    t.p = (char *)mt_read_file(path, &t.n);
    cr_assert(t.p, "cannot read %s", path);
    return t;
}

// The synthetic small model (random weights, 512-token vocabulary): what the tests below need is
// a model, not llama.cpp's figures, so they run without MINT_TEST_DATA.
static mint_model *own_model(const char *ftype) {
    return mt_synth_model("small", ftype);
}

static mint_model *open_model(const char *rel) {
    mint_model *m;
    mint_err err;
    cr_assert_eq(mint_model_open(mt_data_path(rel), NULL, &m, &err), MINT_OK, "%s: %s", rel,
                 err.msg);
    return m;
}

static mint_ppl_params ppl_params(int n_ctx, int n_chunks) {
    mint_ppl_params p = mint_ppl_default_params();
    p.n_ctx = n_ctx;
    p.n_chunks = n_chunks;
    p.n_threads = 1; // Criterion runs two tests at once on a 2-core machine
    return p;
}

static const char *tmp(const char *name) {
    static char bufs[8][4200];
    static int next;
    char *b = bufs[next];
    next = (next + 1) % 8;
    snprintf(b, sizeof bufs[0], "%s/%s", mt_tmpdir(), name);
    return b;
}

// reference/perplexity.json: texts[text][model].
typedef struct ref_ppl {
    double ppl, ppl_pm;           // Final estimate: PPL = ppl +/- ppl_pm
    bool has_kld;                 // the fields below are set (quants)
    double kld, kld_pm;           // Mean KLD
    double same_top, same_top_pm; // Same top p, in percent
    double ppl_base, ppl_base_pm; // Mean PPL(base)
    double ppl_q, ppl_q_pm;       // Mean PPL(Q)
} ref_ppl;

static double jnum(json_object *o) {
    return json_object_get_double(o);
}

static ref_ppl reference(const char *text_name, const char *model) {
    json_object *root = mt_json_data("reference/perplexity.json");
    json_object *m = mt_jget(mt_jget(mt_jget(root, "texts"), text_name), model);
    ref_ppl r = {0};
    json_object *p = mt_jget(m, "perplexity");
    r.ppl = jnum(mt_jget(p, "ppl"));
    r.ppl_pm = jnum(mt_jget(p, "ppl_pm"));
    cr_assert_eq(json_object_get_int(mt_jget(p, "n_ctx")), REF_CTX);
    cr_assert_eq(json_object_get_int(mt_jget(p, "chunks")), REF_CHUNKS);
    json_object *k;
    if (json_object_object_get_ex(m, "kl_divergence", &k)) {
        r.has_kld = true;
        r.kld = jnum(mt_jidx(mt_jget(k, "mean_kld"), 0));
        r.kld_pm = jnum(mt_jidx(mt_jget(k, "mean_kld"), 1));
        r.same_top = jnum(mt_jidx(mt_jget(k, "same_top_p"), 0));
        r.same_top_pm = jnum(mt_jidx(mt_jget(k, "same_top_p"), 1));
        r.ppl_base = jnum(mt_jidx(mt_jget(k, "mean_ppl_base"), 0));
        r.ppl_base_pm = jnum(mt_jidx(mt_jget(k, "mean_ppl_base"), 1));
        r.ppl_q = jnum(mt_jidx(mt_jget(k, "mean_ppl_q"), 0));
        r.ppl_q_pm = jnum(mt_jidx(mt_jget(k, "mean_ppl_q"), 1));
    }
    json_object_put(root);
    return r;
}

// PPL within 0.1% of llama.cpp's, its +/- within 1%.
static void expect_ppl(const char *what, double ppl, double pm, double ref, double ref_pm) {
    cr_log_info("%s: PPL %.4f +/- %.5f, llama.cpp %.4f +/- %.5f (rel %.2e, +/- rel %.2e)", what,
                ppl, pm, ref, ref_pm, ppl / ref - 1, pm / ref_pm - 1);
    cr_expect_leq(fabs(ppl / ref - 1), 1e-3, "%s: PPL %.4f, llama.cpp %.4f", what, ppl, ref);
    cr_expect_leq(fabs(pm / ref_pm - 1), 1e-2, "%s: PPL +/- %.5f, llama.cpp %.5f", what, pm,
                  ref_pm);
}

// llama.cpp prints these with 6 (KLD) and 3 (same top p, %) decimals; a +/- printed as 0 means
// "below half a unit of the last digit", which is the resolution the figure has.
static double printed_pm(double pm, double unit) {
    return pm > 0.5 * unit ? pm : 0.5 * unit;
}

// Mean KLD and same-top-p within the +/- llama.cpp reports for them.
//
// One case cannot meet that, and gets docs/tolerances.md 3.7's budget instead (mean KLD within
// 2e-5 absolute, same-top within 0.3 percentage points), with a warning in the log: the F16 file
// on wiki.test.raw. Its weights barely change the output, so llama.cpp's figure is mostly the
// rounding of its attention: F16 K/V and flash attention, whose V accumulator is rounded to
// fp16 after every position. mint's F16 cache rounds K, V, q and the probabilities to f16 but
// accumulates in f32 (llama.cpp's non-flash path), which gives most of that noise, not all of
// it: measured at 1000 chunks, mean KLD 0.0000092 vs 0.000010 +/- 0.000000 and same-top 99.770%
// vs 99.790 +/- 0.018 (with an F32 cache: 0.000002 and 99.878%). On tinystories the F16 file is
// within llama.cpp's +/- (0.000003 vs 0.000003, 99.921% vs 99.910 +/- 0.012).
static void expect_kld(const char *what, const mint_ppl_result *r, const ref_ppl *ref,
                       bool flash_attention_noise) {
    double kld_tol = printed_pm(ref->kld_pm, 1e-6);
    double top_tol = printed_pm(ref->same_top_pm, 1e-3);
    const double top = 100.0 * r->same_top;
    cr_log_info(
        "%s: mean KLD %.8f +/- %.8f, llama.cpp %.6f +/- %.6f (diff %+.8f); same top %.3f%%, "
        "llama.cpp %.3f +/- %.3f%% (diff %+.3f); PPL(base) %.6f, llama.cpp %.6f",
        what, r->kld, r->kld_err, ref->kld, ref->kld_pm, r->kld - ref->kld, top, ref->same_top,
        ref->same_top_pm, top - ref->same_top, r->ppl_base, ref->ppl_base);
    if (flash_attention_noise) {
        cr_log_warn(
            "%s: compared with docs/tolerances.md 3.7's budget (KLD 2e-5, same-top 0.3 pp), not "
            "llama.cpp's +/- (see expect_kld)",
            what);
        kld_tol = 2e-5;
        top_tol = 0.3;
    }
    cr_expect_leq(fabs(r->kld - ref->kld), kld_tol, "%s: mean KLD %.8f, llama.cpp %.6f +/- %.6f",
                  what, r->kld, ref->kld, ref->kld_pm);
    cr_expect_leq(fabs(top - ref->same_top), top_tol,
                  "%s: same top %.3f%%, llama.cpp %.3f +/- %.3f%%", what, top, ref->same_top,
                  ref->same_top_pm);
}

// Tokenizes a whole text as llama-perplexity does (BOS first, no special-token parsing).
static int32_t *tokenize(const mint_model *m, const text *t, size_t *n) {
    int32_t *ids = malloc((t->n + 16) * sizeof *ids);
    cr_assert(ids);
    mint_err err;
    cr_assert_eq(mint_tokenize(m, t->p, t->n, true, false, ids, t->n + 16, n, &err), MINT_OK, "%s",
                 err.msg);
    return ids;
}

// ---------------------------------------------------------------------------------------------
// The base file (llama.cpp's format: perplexity.cpp, --kl-divergence-base)
//
//   "_logits_", u32 n_ctx, i32 n_vocab, i32 n_chunk, i32 tokens[n_chunk * n_ctx], then per
//   chunk and scored token (positions n_ctx/2 .. n_ctx-2) nv = 2*((n_vocab+1)/2) + 4 uint16
//   slots: f32 scale, f32 min_log_prob, n_vocab levels (padded to even); log p = scale * level +
//   min_log_prob.

typedef struct base_header {
    uint32_t n_ctx;
    int32_t n_vocab, n_chunk;
} base_header;

static size_t slots_per_token(int32_t n_vocab) {
    return 2 * (((size_t)n_vocab + 1) / 2) + 4;
}

static uint8_t *read_base(const char *path, size_t *len, base_header *h) {
    uint8_t *b = mt_read_file(path, len);
    cr_assert(b, "cannot read %s", path);
    cr_assert_geq(*len, 20);
    cr_assert(memcmp(b, "_logits_", 8) == 0, "magic");
    memcpy(&h->n_ctx, b + 8, 4);
    memcpy(&h->n_vocab, b + 12, 4);
    memcpy(&h->n_chunk, b + 16, 4);
    return b;
}

// The exact size llama.cpp's reader expects for a header.
static size_t base_size(const base_header *h) {
    size_t scored = h->n_ctx - 1 - h->n_ctx / 2;
    return 20 + (size_t)h->n_chunk * h->n_ctx * 4 +
           (size_t)h->n_chunk * scored * slots_per_token(h->n_vocab) * 2;
}

// Writes a base file for `n_chunks` chunks of `n_ctx` of stories260K on tinystories.
static mint_ppl_result write_base(mint_model *m, const text *t, int n_ctx, int n_chunks,
                                  const char *path) {
    mint_ppl_params p = ppl_params(n_ctx, n_chunks);
    p.kld_base_out = path;
    mint_ppl_result r;
    mint_err err;
    cr_assert_eq(mint_perplexity(m, t->p, t->n, &p, &r, &err), MINT_OK, "%s", err.msg);
    return r;
}

Test(ppl_base_file, follows_llama_cpp_format) {
    mint_model *m = open_model(STORIES);
    text t = load_text(TS);
    const int n_ctx = 64, n_chunks = 6;
    const char *path = tmp("base.kld");
    mint_ppl_result r = write_base(m, &t, n_ctx, n_chunks, path);
    cr_assert_eq(r.n_chunks, n_chunks);
    cr_assert_eq(r.count, (uint64_t)n_chunks * (n_ctx - 1 - n_ctx / 2));
    cr_assert_eq(r.n_text_tokens, 393019, "llama.cpp tokenizes the text to 393019 tokens");

    size_t len;
    base_header h;
    uint8_t *b = read_base(path, &len, &h);
    cr_assert_eq(h.n_ctx, (uint32_t)n_ctx);
    cr_assert_eq(h.n_vocab, 512);
    cr_assert_eq(h.n_chunk, n_chunks);
    cr_assert_eq(len, base_size(&h), "%zu bytes, llama.cpp's reader wants %zu", len, base_size(&h));

    // The tokens are the text's, as tokenized, BOS first (the per-chunk BOS is not stored).
    size_t n_tok;
    int32_t *ids = tokenize(m, &t, &n_tok);
    cr_assert_eq(n_tok, 393019);
    cr_assert(memcmp(b + 20, ids, (size_t)n_chunks * n_ctx * 4) == 0, "tokens differ");
    int32_t first;
    memcpy(&first, b + 20, 4);
    cr_assert_eq(first, 1);
    cr_assert_neq(ids[n_ctx], 1, "chunk 1 must not start with BOS in the text for this check");

    // Every scored token's slots decode to the model's log-softmax: evaluate each chunk here
    // with BOS in front, as the scorer does, and compare.
    mint_ctx_params cp = mint_ctx_default_params();
    cp.n_threads = 1;
    cp.n_ctx = n_ctx;
    cp.n_batch = n_ctx;
    mint_ctx *ctx;
    mint_err err;
    cr_assert_eq(mint_ctx_create(m, &cp, &ctx, &err), MINT_OK, "%s", err.msg);
    const size_t nv = slots_per_token(512), scored = n_ctx - 1 - n_ctx / 2;
    const uint8_t *slots = b + 20 + (size_t)n_chunks * n_ctx * 4;
    double sum_nll = 0, worst = 0;
    for (int c = 0; c < n_chunks; c++) {
        int32_t chunk[64];
        memcpy(chunk, ids + (size_t)c * n_ctx, sizeof chunk);
        chunk[0] = 1;
        cr_assert_eq(mint_eval(ctx, chunk, n_ctx, 0, true, &err), MINT_OK, "%s", err.msg);
        for (size_t j = 0; j < scored; j++) {
            const uint16_t *s = (const uint16_t *)(slots + ((size_t)c * scored + j) * nv * 2);
            float scale, min_lp;
            memcpy(&scale, s, 4);
            memcpy(&min_lp, s + 2, 4);
            const uint16_t *q = s + 4;
            const float *l = mint_get_logits(ctx, (int32_t)(n_ctx / 2 + j));
            double max = l[0], sum = 0;
            int imax = 0;
            for (int i = 1; i < 512; i++)
                if (l[i] > max) max = l[i], imax = i;
            for (int i = 0; i < 512; i++) sum += exp(l[i] - max);
            double lse = max + log(sum);
            // The window is 16 nats below the maximum (or the smallest logit, if closer).
            cr_assert_gt(scale, 0);
            cr_assert_leq(scale, 16.0 / 65535 * (1 + 1e-6));
            cr_assert_eq(q[imax], 65535, "the top token takes the top level");
            if (512 % 2) cr_assert_eq(q[512], 0);
            for (int i = 0; i < 512; i++) {
                double lp = l[i] - lse, got = (double)scale * q[i] + min_lp;
                if (lp < min_lp) {
                    cr_assert_eq(q[i], 0, "below the window -> level 0");
                    continue;
                }
                double d = fabs(got - lp);
                worst = d > worst ? d : worst;
                cr_assert_leq(d, 0.5 * scale + 1e-5, "chunk %d token %zu id %d: %f vs %f", c, j, i,
                              got, lp);
            }
            sum_nll += lse - l[ids[(size_t)c * n_ctx + n_ctx / 2 + j + 1]];
        }
    }
    // The PPL of the base run is exp(mean NLL) of the same logits.
    cr_assert_leq(fabs(exp(sum_nll / (double)r.count) / r.ppl - 1), 1e-6);
    cr_log_info("base slots: worst |decoded - log p| %.2e", worst);
    mint_ctx_free(ctx);
    free(ids);
    free(b);
    free(t.p);
    mint_model_close(m);
}

// A model compared with its own base: the same perplexity, KLD ~ 0, the same top token. A trained
// model: a random one puts the right token more than 16 nats below the best, past the window the
// file stores, so its PPL(base) cannot be recovered from the file.
Test(ppl_base_file, round_trip_against_itself) {
    mint_model *m = open_model(STORIES);
    text t = load_text(TS);
    const char *path = tmp("self.kld");
    mint_ppl_result base = write_base(m, &t, 128, 8, path);
    mint_ppl_params p = ppl_params(512, 0); // n_ctx and chunks come from the file
    p.kld_base_in = path;
    mint_ppl_result r;
    mint_err err;
    cr_assert_eq(mint_perplexity(m, NULL, 0, &p, &r, &err), MINT_OK, "%s", err.msg);
    cr_assert(r.has_kld);
    cr_assert_eq(r.n_ctx, 128);
    cr_assert_eq(r.n_chunks, 8);
    cr_assert_eq(r.count, 8 * 63);
    cr_assert_eq(r.ppl, base.ppl, "PPL(Q) %.9f vs the base run's %.9f", r.ppl, base.ppl);
    // PPL(base) comes from the stored levels: within their rounding (half a level, 1.2e-4 nats).
    cr_assert_leq(fabs(log(r.ppl_base / base.ppl)), 1.3e-4, "%.9f vs %.9f", r.ppl_base, base.ppl);
    // Per token, KLD = sum_i p_base,i * (stored - true log p_i): the storage rounding (at most
    // half a level, 16/65535/2 = 1.2e-4 nats) weighted by probabilities summing to ~1.
    cr_assert_leq(fabs(r.kld), 5e-6, "KLD %.3e", r.kld);
    cr_assert_leq(r.kld_pct.max, 1.3e-4, "max KLD %.3e", r.kld_pct.max);
    cr_assert_geq(r.kld_pct.min, -1.3e-4, "min KLD %.3e", r.kld_pct.min);
    cr_assert_eq(r.same_top, 1.0, "same top %.6f", r.same_top);
    cr_assert_gt(r.cor, 0.99999);
    cr_assert_leq(fabs(r.dp), 1e-4);
    cr_assert_leq(r.kld_pct.min, r.kld_pct.median);
    cr_assert_leq(r.kld_pct.median, r.kld_pct.max);
    free(t.p);
    mint_model_close(m);
}

// A base file of one chunk is enough to compare with (llama.cpp's KL-divergence pass reads the
// chunks it holds; only a text needs two contexts' worth): what `mint-quantize --compare
// --chunks 1` writes and then reads.
Test(ppl_base_file, one_chunk_base_is_enough) {
    mint_model *m = open_model(STORIES);
    text t = load_text(TS);
    const char *path = tmp("one.kld");
    write_base(m, &t, 128, 1, path);
    mint_ppl_params p = ppl_params(512, 0);
    p.kld_base_in = path;
    mint_ppl_result r;
    mint_err err;
    cr_assert_eq(mint_perplexity(m, NULL, 0, &p, &r, &err), MINT_OK, "%s", err.msg);
    cr_assert(r.has_kld);
    cr_assert_eq(r.n_chunks, 1);
    cr_assert_eq(r.count, 63);
    cr_assert_eq(r.same_top, 1.0);
    free(t.p);
    mint_model_close(m);
}

// What the KLD run reports hangs together: the order of the percentiles, the ratio and
// difference against PPL(base), and a quant being worse than F32.
Test(ppl_base_file, quant_against_f32_base_is_consistent) {
    mint_model *f32 = own_model("F32");
    text t = own_text();
    const char *path = tmp("q.kld");
    write_base(f32, &t, 128, 6, path);
    mint_model_close(f32);
    mint_model *m = own_model("Q4_0");
    mint_ppl_params p = ppl_params(128, 0);
    p.kld_base_in = path;
    mint_ppl_result r;
    mint_err err;
    cr_assert_eq(mint_perplexity(m, NULL, 0, &p, &r, &err), MINT_OK, "%s", err.msg);
    cr_assert_gt(r.kld, 0.01, "Q4_0 should differ from F32: KLD %.6f", r.kld);
    cr_assert_lt(r.same_top, 0.99);
    cr_assert_gt(r.same_top, 0.5);
    const mint_ppl_percentiles *k = &r.kld_pct;
    cr_assert(k->min <= k->p01 && k->p01 <= k->p1 && k->p1 <= k->p5 && k->p5 <= k->p10 &&
              k->p10 <= k->median && k->median <= k->p90 && k->p90 <= k->p95 && k->p95 <= k->p99 &&
              k->p99 <= k->p999 && k->p999 <= k->max);
    cr_assert_leq(fabs(r.ppl_ratio - r.ppl / r.ppl_base), 1e-9);
    cr_assert_leq(fabs(r.ppl_diff - (r.ppl - r.ppl_base)), 1e-9);
    cr_assert_leq(fabs(r.log_ratio - log(r.ppl / r.ppl_base)), 1e-9);
    cr_assert_gt(r.kld_err, 0);
    cr_assert_gt(r.same_top_err, 0);
    cr_assert_gt(r.dp_rms, 0);
    free(t.p);
    mint_model_close(m);
}

// ---------------------------------------------------------------------------------------------
// Hostile base files: each is a clear error naming the file, never a crash

static void expect_base_error(const char *name, const void *bytes, size_t n, mint_status want,
                              const char *needle) {
    const char *path = tmp(name);
    cr_assert(mt_write_file(path, bytes, n));
    mint_model *m = own_model("F32");
    mint_ppl_params p = ppl_params(128, 0);
    p.kld_base_in = path;
    mint_ppl_result r;
    mint_err err;
    cr_assert_eq(mint_perplexity(m, NULL, 0, &p, &r, &err), want, "%s: %s", name, err.msg);
    cr_assert(strstr(err.msg, path), "%s: message does not name the file: %s", name, err.msg);
    cr_assert(strstr(err.msg, needle), "%s: message lacks '%s': %s", name, needle, err.msg);
    cr_assert_null(strchr(err.msg, '\n'));
    mint_model_close(m);
}

Test(ppl_base_file, hostile_files_are_clear_errors) {
    mint_model *m = own_model("F32");
    text t = own_text();
    const char *good = tmp("good.kld");
    write_base(m, &t, 16, 3, good);
    mint_model_close(m);
    free(t.p);
    size_t n;
    uint8_t *g = mt_read_file(good, &n);
    cr_assert(g);
    uint8_t *b = malloc(n + 8);
    cr_assert(b);

    memcpy(b, g, n);
    memcpy(b, "_logitz_", 8);
    expect_base_error("magic.kld", b, n, MINT_E_FORMAT, "magic");
    expect_base_error("empty.kld", "", 0, MINT_E_FORMAT, "magic");
    expect_base_error("magic-only.kld", g, 8, MINT_E_FORMAT, "truncated header");
    expect_base_error("half-header.kld", g, 14, MINT_E_FORMAT, "truncated header");
    expect_base_error("truncated.kld", g, n - 1, MINT_E_FORMAT, "expected");
    expect_base_error("no-logprobs.kld", g, 20 + 3 * 16 * 4, MINT_E_FORMAT, "expected");
    memcpy(b, g, n);
    memset(b + n, 0, 8);
    expect_base_error("longer.kld", b, n + 8, MINT_E_FORMAT, "expected");

    int32_t v = 32000; // a Llama vocabulary's file, given to a 512-token model
    memcpy(b, g, n);
    memcpy(b + 12, &v, 4);
    expect_base_error("vocab.kld", b, n, MINT_E_FORMAT, "vocabulary of 32000");
    v = 0;
    memcpy(b + 12, &v, 4);
    expect_base_error("vocab0.kld", b, n, MINT_E_FORMAT, "vocabulary of 0");

    memcpy(b, g, n);
    v = 0; // no chunks
    memcpy(b + 16, &v, 4);
    expect_base_error("chunks0.kld", b, n, MINT_E_FORMAT, "out of range");
    v = -5;
    memcpy(b + 16, &v, 4);
    expect_base_error("chunks-neg.kld", b, n, MINT_E_FORMAT, "out of range");
    v = 0x7fffffff; // claims far more than the file holds
    memcpy(b + 16, &v, 4);
    expect_base_error("chunks-huge.kld", b, n, MINT_E_FORMAT, "out of range");
    v = 4; // one chunk more than written
    memcpy(b + 16, &v, 4);
    expect_base_error("chunks4.kld", b, n, MINT_E_FORMAT, "expected");

    memcpy(b, g, n);
    uint32_t c = 4; // a context below 8
    memcpy(b + 8, &c, 4);
    expect_base_error("ctx4.kld", b, n, MINT_E_FORMAT, "out of range");
    c = 0xffffffffu;
    memcpy(b + 8, &c, 4);
    expect_base_error("ctx-huge.kld", b, n, MINT_E_FORMAT, "out of range");

    memcpy(b, g, n);
    v = 512; // a token one past the vocabulary
    memcpy(b + 20 + 4 * 7, &v, 4);
    expect_base_error("token.kld", b, n, MINT_E_FORMAT, "outside the vocabulary");
    v = -1;
    memcpy(b + 20 + 4 * 7, &v, 4);
    expect_base_error("token-neg.kld", b, n, MINT_E_FORMAT, "outside the vocabulary");

    m = own_model("F32");
    mint_ppl_params p = ppl_params(128, 0);
    p.kld_base_in = tmp("missing.kld");
    mint_ppl_result r;
    mint_err err;
    cr_assert_eq(mint_perplexity(m, NULL, 0, &p, &r, &err), MINT_E_IO);
    cr_assert(strstr(err.msg, "missing.kld"), "%s", err.msg);
    mint_model_close(m);
    free(g);
    free(b);
}

// ---------------------------------------------------------------------------------------------
// Arguments

Test(ppl_args, text_shorter_than_two_contexts) {
    mint_model *m = own_model("F32");
    static const char story[] = "Once upon a time, there was a little girl named Lily.";
    mint_ppl_params p = ppl_params(128, 0);
    mint_ppl_result r;
    mint_err err;
    cr_assert_eq(mint_perplexity(m, story, strlen(story), &p, &r, &err), MINT_E_ARG);
    cr_assert(strstr(err.msg, "needs at least 256"), "%s", err.msg);
    cr_assert_eq(mint_perplexity(m, "", 0, &p, &r, &err), MINT_E_ARG);
    // Exactly two contexts' worth is enough: 16 tokens with n_ctx 8.
    p.n_ctx = 8;
    size_t n;
    int32_t ids[64];
    cr_assert_eq(mint_tokenize(m, story, strlen(story), true, false, ids, 64, &n, &err), MINT_OK);
    cr_assert_geq(n, 16, "%zu tokens", n);
    cr_assert_eq(mint_perplexity(m, story, strlen(story), &p, &r, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(r.n_chunks, (int32_t)(n / 8));
    cr_assert_eq(r.count, (uint64_t)r.n_chunks * 3);
    cr_assert(isfinite(r.ppl) && r.ppl > 1, "%f", r.ppl);
    p.n_ctx = 7;
    cr_assert_eq(mint_perplexity(m, story, strlen(story), &p, &r, &err), MINT_E_ARG);
    cr_assert(strstr(err.msg, "below 8"), "%s", err.msg);
    mint_model_close(m);
}

Test(ppl_args, base_file_in_and_out_at_once) {
    mint_model *m = own_model("F32");
    text t = own_text();
    const char *in = tmp("in.kld");
    write_base(m, &t, 16, 2, in);
    mint_ppl_params p = ppl_params(16, 2);
    p.kld_base_in = in;
    p.kld_base_out = tmp("out.kld");
    mint_ppl_result r;
    mint_err err;
    cr_assert_eq(mint_perplexity(m, t.p, t.n, &p, &r, &err), MINT_E_ARG);
    cr_assert(access(tmp("out.kld"), F_OK) != 0);
    free(t.p);
    mint_model_close(m);
}

Test(ppl_args, unwritable_base_file_leaves_nothing) {
    mint_model *m = own_model("F32");
    text t = own_text();
    mint_ppl_params p = ppl_params(16, 2);
    p.kld_base_out = tmp("no-such-dir/base.kld");
    mint_ppl_result r;
    mint_err err;
    cr_assert_eq(mint_perplexity(m, t.p, t.n, &p, &r, &err), MINT_E_IO);
    cr_assert(strstr(err.msg, "no-such-dir"), "%s", err.msg);
    // A failed run leaves an existing base file as it was.
    const char *path = tmp("keep.kld");
    cr_assert(mt_write_file(path, "old", 3));
    p = ppl_params(7, 2); // a context below 8
    p.kld_base_out = path;
    cr_assert_eq(mint_perplexity(m, t.p, t.n, &p, &r, &err), MINT_E_ARG);
    size_t n;
    uint8_t *b = mt_read_file(path, &n);
    cr_assert(b && n == 3 && memcmp(b, "old", 3) == 0);
    free(b);
    free(t.p);
    mint_model_close(m);
}

// Both texts tokenize to llama-perplexity's token counts (docs/tolerances.md 1.5), so the
// 1000 chunks cover the same 128,000 tokens.
Test(ppl_args, texts_tokenize_as_llama_cpp) {
    mint_model *m = open_model(STORIES);
    static const struct {
        const char *rel;
        size_t tokens;
    } texts[] = {{TS, 393019}, {WIKI, 809290}};
    for (size_t i = 0; i < 2; i++) {
        text t = load_text(texts[i].rel);
        size_t n;
        int32_t *ids = tokenize(m, &t, &n);
        cr_assert_eq(n, texts[i].tokens, "%s: %zu tokens, llama.cpp %zu", texts[i].rel, n,
                     texts[i].tokens);
        cr_assert_eq(ids[0], 1, "BOS first");
        free(ids);
        free(t.p);
    }
    mint_model_close(m);
}

// More chunks than the text holds: all of them, and no more.
Test(ppl_args, chunk_count_is_capped_by_the_text) {
    mint_model *m = own_model("F32");
    text t = own_text();
    t.n = 3000; // a few hundred tokens
    t.p[t.n] = '\0';
    mint_ppl_params p = ppl_params(128, 1000);
    mint_ppl_result r;
    mint_err err;
    cr_assert_eq(mint_perplexity(m, t.p, t.n, &p, &r, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(r.n_chunks, (int32_t)(r.n_text_tokens / 128));
    cr_assert_eq(r.count, (uint64_t)r.n_chunks * 63);
    free(t.p);
    mint_model_close(m);
}

// ---------------------------------------------------------------------------------------------
// Against llama-perplexity, 1000 chunks of 128

// PPL of `model` on `text_name`; with `base_out` it also writes the base file.
static mint_ppl_result run_ppl(const char *model, const char *text_name, mint_kv_type kv,
                               const char *base_out, const char *base_in) {
    mint_model *m = open_model(model);
    text t = load_text(text_name);
    mint_ppl_params p = ppl_params(REF_CTX, REF_CHUNKS);
    p.kv_type = kv;
    p.kld_base_out = base_out;
    p.kld_base_in = base_in;
    mint_ppl_result r;
    mint_err err;
    cr_assert_eq(mint_perplexity(m, t.p, t.n, &p, &r, &err), MINT_OK, "%s: %s", model, err.msg);
    cr_assert_eq(r.n_chunks, REF_CHUNKS);
    cr_assert_eq(r.count, (uint64_t)REF_CHUNKS * 63);
    cr_log_info("%s on %s, %s K/V: %d chunks in %.1f s", model, text_name,
                kv == MINT_KV_F16 ? "F16" : "F32", r.n_chunks, r.seconds);
    free(t.p);
    mint_model_close(m);
    return r;
}

// The F32 model (writing the base file), then, in full mode, every quant against that base;
// F16 K/V in full mode, as llama-perplexity ran (see the top of the file).
static void against_llama(const char *text_name, uint64_t n_text_tokens) {
    const mint_kv_type kv = full_mode() ? MINT_KV_F16 : MINT_KV_F32;
    char base[4200];
    snprintf(base, sizeof base, "%s", tmp("base.kld"));
    mint_ppl_result r = run_ppl(STORIES, text_name, kv, base, NULL);
    cr_assert_eq(r.n_text_tokens, n_text_tokens);
    ref_ppl ref = reference(text_name, "f32");
    char what[128];
    snprintf(what, sizeof what, "stories260K F32 on %s", text_name);
    expect_ppl(what, r.ppl, r.ppl_err, ref.ppl, ref.ppl_pm);
    struct stat st;
    cr_assert_eq(stat(base, &st), 0);
    base_header h = {REF_CTX, 512, REF_CHUNKS};
    cr_assert_eq((size_t)st.st_size, base_size(&h));
    if (!full_mode()) return;

    static const char *quants[] = {"f16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1"};
    for (size_t i = 0; i < sizeof quants / sizeof *quants; i++) {
        char model[64];
        snprintf(model, sizeof model, "quant/stories260K-%s.gguf", quants[i]);
        mint_ppl_result q = run_ppl(model, text_name, kv, NULL, base);
        ref_ppl rq = reference(text_name, quants[i]);
        snprintf(what, sizeof what, "stories260K-%s on %s", quants[i], text_name);
        expect_ppl(what, q.ppl, q.ppl_err, rq.ppl, rq.ppl_pm);
        cr_assert(rq.has_kld);
        expect_kld(what, &q, &rq, !strcmp(quants[i], "f16") && !strcmp(text_name, WIKI));
    }
}

Test(ppl_vs_llama, tinystories, .timeout = MT_HANG(3600)) {
    against_llama(TS, 393019);
}

Test(ppl_vs_llama, wiki, .timeout = MT_HANG(3600)) {
    if (!full_mode()) cr_skip_test("1000 chunks of wiki.test.raw: set MINT_TEST_PPL=full");
    against_llama(WIKI, 809290);
}
