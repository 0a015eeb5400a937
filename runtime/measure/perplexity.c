// perplexity.c - perplexity and KL divergence exactly as llama-perplexity computes them
// (docs/formats.md 7; tools/perplexity/perplexity.cpp), so that the figures compare.
//
// Numerics follow llama.cpp's choices one by one: the maximum logit in f32, exponentials as
// expf of f32 differences summed in double; the base file stores per token a scale and an
// offset (two f32) and uint16 levels of the logits over at most 16 nats below the maximum.
#include "base/error.h"
#include "base/fileio.h"
#include "base/round.h"
#include "runtime/engine/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

mint_ppl_params mint_ppl_default_params(void) {
    mint_ppl_params p;
    memset(&p, 0, sizeof p);
    p.n_ctx = 512;
    p.kv_type = MINT_KV_F32;
    return p;
}

// uint16 slots per scored token in the base file: the levels, padded to even, plus 4 slots
// holding two floats (scale, min_log_prob).
static size_t slots_per_token(int32_t n_vocab) {
    return 2 * (((size_t)n_vocab + 1) / 2) + 4;
}

// -log p(tok) of one row of logits (llama.cpp's plain log_softmax).
static double nll_plain(const float *l, int32_t n, int32_t tok) {
    float max = l[0];
    for (int32_t i = 1; i < n; i++) max = l[i] > max ? l[i] : max;
    double sum = 0.0;
    for (int32_t i = 0; i < n; i++) sum += expf(l[i] - max);
    return -((double)(l[tok] - max) - log(sum));
}

// Writes one token's base log-probabilities into slots; returns -log p(tok) as llama.cpp does
// for the base run (a float expression).
static double nll_store_base(const float *l, int32_t n, int32_t tok, uint16_t *slots) {
    float max = l[0], min = l[0];
    for (int32_t i = 1; i < n; i++) {
        max = l[i] > max ? l[i] : max;
        min = l[i] < min ? l[i] : min;
    }
    min = min > max - 16 ? min : max - 16;
    double sum = 0.0;
    for (int32_t i = 0; i < n; i++) sum += expf(l[i] - max);
    const float log_sum = (float)log(sum);
    const float min_log_prob = min - max - log_sum;
    const float scale = (max - min) / 65535.f;
    memcpy(slots, &scale, 4);
    memcpy(slots + 2, &min_log_prob, 4);
    uint16_t *q = slots + 4;
    if (scale != 0) {
        const float inv = 1 / scale;
        for (int32_t i = 0; i < n; i++)
            q[i] = l[i] > min ? (uint16_t)mint_nearest_int(inv * (l[i] - min)) : 0;
    } else {
        memset(q, 0, (size_t)n * sizeof *q);
    }
    if (n % 2) q[n] = 0;
    return max + log_sum - l[tok];
}

// Running sums of the KL-divergence statistics.
typedef struct kld_sums {
    double nll, nll2, nll_base, nll_base2, nll_nll_base, kld, kld2, dp, dp2, dp4;
    uint64_t same_top, count;
} kld_sums;

// Compares one token's logits with its base log-probabilities; returns KLD and delta-p.
static void kld_token(const float *l, int32_t n, int32_t tok, const uint16_t *slots, kld_sums *k,
                      float *kld_out, float *dp_out) {
    float max = l[0];
    int32_t imax = 0;
    for (int32_t i = 1; i < n; i++)
        if (l[i] > max) max = l[i], imax = i;
    double sum_exp = 0.0;
    for (int32_t i = 0; i < n; i++) sum_exp += expf(l[i] - max);
    const float log_sum = (float)log(sum_exp);
    float scale, min_log_prob;
    memcpy(&scale, slots, 4);
    memcpy(&min_log_prob, slots + 2, 4);
    const uint16_t *q = slots + 4;
    const float nll = max + log_sum - l[tok];
    k->nll += nll;
    k->nll2 += nll * nll;
    const float nll_base = -(scale * q[tok] + min_log_prob);
    k->nll_base += nll_base;
    k->nll_base2 += nll_base * nll_base;
    k->nll_nll_base += nll * nll_base;
    const float shift = max + log_sum;
    double kld = 0;
    int32_t imax_base = -1;
    float lp_base_max = 0;
    for (int32_t i = 0; i < n; i++) {
        const float lp_base = scale * q[i] + min_log_prob;
        if (i == 0 || lp_base > lp_base_max) lp_base_max = lp_base, imax_base = i;
        if (lp_base > -16.f) kld += expf(lp_base) * (lp_base - l[i] + shift);
    }
    k->kld += kld;
    k->kld2 += kld * kld;
    k->count++;
    if (imax == imax_base) k->same_top++;
    const float dp = expf(-nll) - expf(-nll_base);
    k->dp += dp;
    k->dp2 += (double)dp * dp;
    k->dp4 += (double)dp * dp * (double)dp * dp;
    *kld_out = (float)kld;
    *dp_out = dp;
}

// Mean and its standard error, llama.cpp's mean_and_uncertainty.
static void mean_unc(double sum, double sum2, uint64_t count, double *mean, double *unc) {
    *mean = *unc = 0;
    if (count < 1) return;
    *mean = sum / (double)count;
    double var = sum2 / (double)count - *mean * *mean;
    *unc = var > 0 && count > 10 ? sqrt(var / (double)(count - 1)) : 0.0;
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

// llama.cpp's percentile: linear interpolation between sorted neighbours, in float.
static double percentile(const float *v, size_t n, float fraction) {
    if (fraction <= 0) return v[0];
    if (fraction >= 1) return v[n - 1];
    float p = fraction * (float)(n - 1);
    size_t ip = (size_t)p;
    p -= (float)ip;
    return (1 - p) * v[ip] + p * v[ip + 1 < n ? ip + 1 : n - 1];
}

static void percentiles(float *v, size_t n, mint_ppl_percentiles *out) {
    qsort(v, n, sizeof *v, cmp_float);
    out->max = v[n - 1];
    out->min = v[0];
    out->median = n % 2 == 0 ? 0.5f * (v[n / 2] + v[n / 2 - 1]) : v[n / 2];
    out->p999 = percentile(v, n, 0.999f);
    out->p99 = percentile(v, n, 0.990f);
    out->p95 = percentile(v, n, 0.950f);
    out->p90 = percentile(v, n, 0.900f);
    out->p75 = percentile(v, n, 0.750f);
    out->p25 = percentile(v, n, 0.250f);
    out->p10 = percentile(v, n, 0.100f);
    out->p5 = percentile(v, n, 0.050f);
    out->p1 = percentile(v, n, 0.010f);
    out->p01 = percentile(v, n, 0.001f);
}

static void kld_results(const kld_sums *k, float *kv, float *dv, mint_ppl_result *r) {
    double lp, lp_unc, lb, lb_unc;
    mean_unc(k->nll, k->nll2, k->count, &lp, &lp_unc);
    mean_unc(k->nll_base, k->nll_base2, k->count, &lb, &lb_unc);
    r->ppl = exp(lp);
    r->ppl_err = r->ppl * lp_unc;
    r->ppl_base = exp(lb);
    r->ppl_base_err = r->ppl_base * lb_unc;
    double cov = 0;
    if (k->count >= 10)
        cov = (k->nll_nll_base / (double)k->count -
               (k->nll / (double)k->count) * (k->nll_base / (double)k->count)) /
              (double)(k->count - 1);
    r->cor = lp_unc > 0 && lb_unc > 0 ? cov / (lp_unc * lb_unc) : 0;
    r->log_ratio = lp - lb;
    r->log_ratio_err = sqrt(lp_unc * lp_unc + lb_unc * lb_unc - 2.0 * cov);
    r->ppl_ratio = exp(r->log_ratio);
    r->ppl_ratio_err = r->ppl_ratio * r->log_ratio_err;
    r->ppl_diff = r->ppl - r->ppl_base;
    r->ppl_diff_err = sqrt(r->ppl_err * r->ppl_err + r->ppl_base_err * r->ppl_base_err -
                           2.0 * r->ppl * r->ppl_base * cov);
    mean_unc(k->kld, k->kld2, k->count, &r->kld, &r->kld_err);
    mean_unc(k->dp, k->dp2, k->count, &r->dp, &r->dp_err);
    double mse, mse_unc;
    mean_unc(k->dp2, k->dp4, k->count, &mse, &mse_unc);
    r->dp_rms = sqrt(mse);
    r->dp_rms_err = r->dp_rms > 0 ? 0.5 / r->dp_rms * mse_unc : 0;
    r->same_top = (double)k->same_top / (double)k->count;
    r->same_top_err =
        k->count > 1 ? sqrt(r->same_top * (1 - r->same_top) / (double)(k->count - 1)) : 0;
    percentiles(kv, (size_t)k->count, &r->kld_pct);
    percentiles(dv, (size_t)k->count, &r->dp_pct);
    r->has_kld = true;
}

// ---------------------------------------------------------------------------------------------
// The base file

typedef struct base_file {
    FILE *fp;              // reading
    mint_atomic_file *out; // writing
    int32_t n_ctx, n_vocab, n_chunk;
    int32_t *tokens; // [n_chunk * n_ctx] (reading)
} base_file;

static mint_status base_open(const char *path, int32_t n_vocab, base_file *b, mint_err *err) {
    b->fp = fopen(path, "rb");
    if (!b->fp) return mint_fail(err, MINT_E_IO, "%s: cannot open", path);
    char magic[8];
    uint32_t n_ctx;
    if (fread(magic, 1, 8, b->fp) != 8 || memcmp(magic, "_logits_", 8) != 0)
        return mint_fail(err, MINT_E_FORMAT, "%s: not a log-probability file (magic)", path);
    if (fread(&n_ctx, 4, 1, b->fp) != 1 || fread(&b->n_vocab, 4, 1, b->fp) != 1 ||
        fread(&b->n_chunk, 4, 1, b->fp) != 1)
        return mint_fail(err, MINT_E_FORMAT, "%s: truncated header", path);
    if (n_ctx < 8 || n_ctx > (1u << 20) || b->n_chunk < 1 || b->n_chunk > (1 << 24))
        return mint_fail(err, MINT_E_FORMAT, "%s: context %u or chunk count %d out of range", path,
                         n_ctx, b->n_chunk);
    if (b->n_vocab != n_vocab)
        return mint_fail(err, MINT_E_FORMAT, "%s: vocabulary of %d tokens, the model has %d", path,
                         b->n_vocab, n_vocab);
    b->n_ctx = (int32_t)n_ctx;
    // The size must be exactly the header, the tokens and every chunk's log-probabilities.
    uint64_t per_chunk = (uint64_t)(b->n_ctx - 1 - b->n_ctx / 2) * slots_per_token(n_vocab) * 2;
    uint64_t want =
        20 + (uint64_t)b->n_chunk * (uint64_t)b->n_ctx * 4 + per_chunk * (uint64_t)b->n_chunk;
    if (fseek(b->fp, 0, SEEK_END) != 0 || (uint64_t)ftell(b->fp) != want)
        return mint_fail(err, MINT_E_FORMAT, "%s: %ld bytes, expected %llu for %d chunks of %d",
                         path, ftell(b->fp), (unsigned long long)want, b->n_chunk, b->n_ctx);
    fseek(b->fp, 20, SEEK_SET);
    b->tokens = malloc((size_t)b->n_chunk * (size_t)b->n_ctx * sizeof *b->tokens);
    if (!b->tokens) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    if (fread(b->tokens, sizeof *b->tokens, (size_t)b->n_chunk * (size_t)b->n_ctx, b->fp) !=
        (size_t)b->n_chunk * (size_t)b->n_ctx)
        return mint_fail(err, MINT_E_FORMAT, "%s: truncated tokens", path);
    for (size_t i = 0; i < (size_t)b->n_chunk * (size_t)b->n_ctx; i++)
        if (b->tokens[i] < 0 || b->tokens[i] >= n_vocab)
            return mint_fail(err, MINT_E_FORMAT, "%s: token %d at %zu outside the vocabulary", path,
                             b->tokens[i], i);
    return MINT_OK;
}

static mint_status base_begin(const char *path, int32_t n_ctx, int32_t n_vocab, int32_t n_chunk,
                              const int32_t *tokens, base_file *b, mint_err *err) {
    mint_status st = mint_atomic_file_begin(path, &b->out, err);
    uint32_t u = (uint32_t)n_ctx;
    if (!st) st = mint_atomic_file_write(b->out, "_logits_", 8, err);
    if (!st) st = mint_atomic_file_write(b->out, &u, 4, err);
    if (!st) st = mint_atomic_file_write(b->out, &n_vocab, 4, err);
    if (!st) st = mint_atomic_file_write(b->out, &n_chunk, 4, err);
    if (!st)
        st = mint_atomic_file_write(b->out, tokens,
                                    (size_t)n_chunk * (size_t)n_ctx * sizeof *tokens, err);
    return st;
}

static void base_close(base_file *b) {
    if (b->fp) fclose(b->fp);
    mint_atomic_file_abort(b->out);
    free(b->tokens);
    memset(b, 0, sizeof *b);
}

// ---------------------------------------------------------------------------------------------

static mint_status tokenize_text(const mint_model *m, const char *text, size_t len, int32_t **out,
                                 size_t *n, mint_err *err) {
    // A token per byte and a few more is the usual bound, but not a sure one (a SentencePiece
    // space without its own token falls back to three byte tokens): on MINT_E_LIMIT, *n is the
    // count needed and the second call gets exactly that.
    size_t cap = len + 16;
    int32_t *ids = malloc(cap * sizeof *ids);
    if (!ids) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    mint_status st = mint_tokenize(m, text, len, true, false, ids, cap, n, err);
    if (st == MINT_E_LIMIT) {
        int32_t *more = realloc(ids, *n * sizeof *ids);
        if (!more) {
            free(ids);
            return mint_fail(err, MINT_E_NOMEM, "out of memory");
        }
        ids = more;
        st = mint_tokenize(m, text, len, true, false, ids, *n, n, err);
    }
    if (st) {
        free(ids);
        return st;
    }
    *out = ids;
    return MINT_OK;
}

mint_status mint_perplexity(mint_model *m, const char *text, size_t len, const mint_ppl_params *pp,
                            mint_ppl_result *r, mint_err *err) {
    memset(r, 0, sizeof *r);
    mint_err_clear(err);
    mint_ppl_params p = pp ? *pp : mint_ppl_default_params();
    const int32_t n_vocab = m->hp.n_vocab, bos = mint_vocab_bos(m->vocab);
    const bool add_bos = mint_vocab_add_bos(m->vocab);
    if (mint_vocab_add_eos(m->vocab))
        return mint_fail(err, MINT_E_UNSUPPORTED, "perplexity needs a vocabulary that adds no EOS");
    if (p.kld_base_in && p.kld_base_out)
        return mint_fail(err, MINT_E_ARG,
                         "perplexity: give a base file to write (%s) or one to compare with (%s), "
                         "not both",
                         p.kld_base_out, p.kld_base_in);
    base_file base = {0};
    int32_t *tokens = NULL;
    size_t n_tokens = 0;
    mint_ctx *ctx = NULL;
    float *kv = NULL, *dv = NULL;
    uint16_t *slots = NULL;
    mint_status st = MINT_OK;
    if (p.kld_base_in) {
        if ((st = base_open(p.kld_base_in, n_vocab, &base, err))) goto done;
        p.n_ctx = base.n_ctx;
        n_tokens = (size_t)base.n_chunk * (size_t)base.n_ctx;
        tokens = base.tokens;
        base.tokens = NULL;
    } else if ((st = tokenize_text(m, text, len, &tokens, &n_tokens, err))) {
        goto done;
    }
    if (p.n_ctx < 8) {
        st = mint_fail(err, MINT_E_ARG, "perplexity context %d is below 8", p.n_ctx);
        goto done;
    }
    // Text needs two contexts' worth, as llama.cpp's perplexity asks; a base file holds whole
    // chunks (one is enough, as in llama.cpp's KL-divergence pass).
    if (!p.kld_base_in && n_tokens < 2 * (size_t)p.n_ctx) {
        st =
            mint_fail(err, MINT_E_ARG,
                      "the text has %zu token%s; perplexity with a context of %d needs at least %d",
                      n_tokens, n_tokens == 1 ? "" : "s", p.n_ctx, 2 * p.n_ctx);
        goto done;
    }
    int32_t n_chunk = (int32_t)(n_tokens / (size_t)p.n_ctx);
    if (p.n_chunks > 0 && p.n_chunks < n_chunk) n_chunk = p.n_chunks;
    const int32_t first = p.n_ctx / 2, n_scored = p.n_ctx - 1 - first;
    const size_t nv = slots_per_token(n_vocab);
    mint_ctx_params cp = mint_ctx_default_params();
    cp.n_threads = p.n_threads;
    cp.n_ctx = p.n_ctx;
    cp.n_batch = p.n_batch > 0 && p.n_batch < p.n_ctx ? p.n_batch : p.n_ctx;
    cp.kv_type = p.kv_type;
    cp.attention = p.attention;
    if ((st = mint_ctx_create(m, &cp, &ctx, err))) goto done;
    if (p.imatrix && (st = mint_ctx_set_imatrix(ctx, p.imatrix, p.imatrix_output, err))) goto done;
    if (p.kld_base_out &&
        (st = base_begin(p.kld_base_out, p.n_ctx, n_vocab, n_chunk, tokens, &base, err)))
        goto done;
    if (p.kld_base_out || p.kld_base_in) {
        slots = malloc((size_t)n_scored * nv * sizeof *slots);
        if (!slots) {
            st = mint_fail(err, MINT_E_NOMEM, "out of memory");
            goto done;
        }
    }
    if (p.kld_base_in) {
        kv = malloc((size_t)n_chunk * (size_t)n_scored * sizeof *kv);
        dv = malloc((size_t)n_chunk * (size_t)n_scored * sizeof *dv);
        if (!kv || !dv) {
            st = mint_fail(err, MINT_E_NOMEM, "out of memory");
            goto done;
        }
    }
    double nll = 0, nll2 = 0, t0 = now();
    kld_sums k = {0};
    for (int32_t c = 0; c < n_chunk; c++) {
        int32_t *chunk = tokens + (size_t)c * (size_t)p.n_ctx;
        const int32_t saved = chunk[0];
        if (add_bos && bos >= 0) chunk[0] = bos; // replaced, not inserted
        if (p.kld_base_in &&
            fread(slots, sizeof *slots, (size_t)n_scored * nv, base.fp) != (size_t)n_scored * nv) {
            chunk[0] = saved;
            st = mint_fail(err, MINT_E_FORMAT, "%s: truncated at chunk %d", p.kld_base_in, c);
            goto done;
        }
        // The chunk in batches of n_batch tokens (one, unless p.n_batch is smaller), every
        // token's logits kept; each batch's scored rows are scored before the next.
        for (int32_t off = 0; off < p.n_ctx && st == MINT_OK; off += cp.n_batch) {
            const int32_t nb = p.n_ctx - off < cp.n_batch ? p.n_ctx - off : cp.n_batch;
            if ((st = mint_eval(ctx, chunk + off, nb, off, true, err))) break;
            for (int32_t i = off > first ? off : first; i < off + nb && i < p.n_ctx - 1; i++) {
                const int32_t j = i - first;
                const float *l = mint_get_logits(ctx, i - off);
                const int32_t tok = chunk[i + 1];
                if (p.kld_base_in) {
                    size_t at = (size_t)c * (size_t)n_scored + (size_t)j;
                    kld_token(l, n_vocab, tok, slots + (size_t)j * nv, &k, &kv[at], &dv[at]);
                } else {
                    double v = p.kld_base_out
                                   ? nll_store_base(l, n_vocab, tok, slots + (size_t)j * nv)
                                   : nll_plain(l, n_vocab, tok);
                    nll += v;
                    nll2 += v * v;
                }
            }
        }
        chunk[0] = saved;
        if (st) goto done;
        if (p.kld_base_out && (st = mint_atomic_file_write(
                                   base.out, slots, (size_t)n_scored * nv * sizeof *slots, err)))
            goto done;
        r->count += (uint64_t)n_scored;
        if (p.on_chunk) {
            double running =
                p.kld_base_in ? exp(k.nll / (double)k.count) : exp(nll / (double)r->count);
            p.on_chunk(p.user, c + 1, n_chunk, running);
        }
    }
    r->seconds = now() - t0;
    r->n_ctx = p.n_ctx;
    r->n_chunks = n_chunk;
    r->n_text_tokens = n_tokens;
    if (p.kld_base_in) {
        kld_results(&k, kv, dv, r);
    } else {
        double mean = nll / (double)r->count, var = nll2 / (double)r->count - mean * mean;
        r->ppl = exp(mean);
        r->ppl_err = var > 0 ? sqrt(var / (double)(r->count - 1)) * r->ppl : 0;
    }
    if (p.kld_base_out) {
        st = mint_atomic_file_commit(base.out, err);
        base.out = NULL;
    }
done:
    mint_ctx_free(ctx);
    base_close(&base);
    free(tokens);
    free(slots);
    free(kv);
    free(dv);
    return st;
}
