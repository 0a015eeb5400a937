// report.c - writing the HTML report: the page template with the run's data as JSON in it.
//
// The attention weights go in as bytes (weight x 255, rounded) of the causal triangle only,
// base64-encoded: layers x heads x T (T + 1) / 2 bytes, which the caller keeps under a budget by
// choosing T (report_attention_positions); the page says how many positions it shows.
#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The page, embedded from tools/web/ at build time (CMakeLists.txt, mint_embed).
extern const char mint_web_report_html[];
extern const char mint_web_views_js[];

// A growing buffer that collects the page before it is written.
typedef struct out {
    char *p;
    size_t n, cap;
    bool oom;
} out;

static void put(out *o, const char *s, size_t n) {
    if (o->oom) return;
    if (o->n + n + 1 > o->cap) {
        size_t cap = (o->n + n + 1) * 2;
        char *p = realloc(o->p, cap);
        if (!p) {
            o->oom = true;
            return;
        }
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->n, s, n);
    o->n += n;
}

static void puts_(out *o, const char *s) {
    put(o, s, strlen(s));
}

static void printf_(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void printf_(out *o, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0) put(o, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

// A JSON string; '<', '>' and '&' escaped too, so no text can close the script element.
static void json_str(out *o, const char *s) {
    puts_(o, "\"");
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') {
            char e[2] = {'\\', (char)*c};
            put(o, e, 2);
        } else if (*c < 0x20 || *c == '<' || *c == '>' || *c == '&' || *c == 0x7f) {
            printf_(o, "\\u%04x", *c);
        } else {
            put(o, (const char *)c, 1);
        }
    }
    puts_(o, "\"");
}

// A float, or null for a missing value (< 0 marks one).
static void num(out *o, double v, const char *fmt) {
    if (v < 0 || !isfinite(v))
        puts_(o, "null");
    else
        printf_(o, fmt, v);
}

static void base64(out *o, const uint8_t *b, size_t n) {
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16 | (i + 1 < n ? (uint32_t)b[i + 1] << 8 : 0) |
                     (i + 2 < n ? b[i + 2] : 0);
        char q[4] = {tab[v >> 18 & 63], tab[v >> 12 & 63], i + 1 < n ? tab[v >> 6 & 63] : '=',
                     i + 2 < n ? tab[v & 63] : '='};
        put(o, q, 4);
    }
}

static void write_tokens(out *o, const report *r) {
    puts_(o, "\"tokens\":[");
    for (int i = 0; i < r->n_tok; i++) {
        const report_token *t = &r->tok[i];
        printf_(o, "%s{\"id\":%d,\"piece\":", i ? "," : "", t->id);
        json_str(o, t->piece);
        printf_(o, ",\"gen\":%s,\"p\":", t->generated ? "true" : "false");
        num(o, t->p, "%.6g");
        puts_(o, ",\"H\":");
        num(o, t->p < 0 ? -1 : t->entropy, "%.5g");
        puts_(o, ",\"alt\":[");
        for (int k = 0; k < t->n_alt; k++) {
            printf_(o, "%s[%d,%.5g,", k ? "," : "", t->alt_id[k], (double)t->alt_p[k]);
            json_str(o, t->alt_piece[k]);
            puts_(o, "]");
        }
        puts_(o, "],\"kl\":");
        num(o, t->kl, "%.6g");
        if (t->cmp_top >= 0) {
            printf_(o, ",\"cmp\":%d,\"cmp_piece\":", t->cmp_top);
            json_str(o, t->cmp_piece);
        }
        puts_(o, ",\"ms\":");
        num(o, t->ms, "%.4g");
        printf_(o, ",\"kv\":%d,\"kv_mib\":", t->kv_blocks);
        num(o, t->kv_mib, "%.4g");
        puts_(o, "}");
    }
    puts_(o, "]");
}

static void write_attention(out *o, const report *r) {
    const int L = r->desc.n_layer, H = r->desc.n_head, T = r->att_T;
    printf_(o, ",\"att\":{\"layers\":%d,\"heads\":%d,\"T\":%d,\"data\":\"", L, H, T);
    const size_t tri = (size_t)T * (size_t)(T + 1) / 2, all = (size_t)L * H * tri;
    uint8_t *b = malloc(all ? all : 1);
    if (!b) {
        o->oom = true;
        return;
    }
    size_t k = 0; // the causal triangle of each (layer, head), rows in order, then one base64 run
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            const float *m = r->att + ((size_t)l * H + h) * (size_t)T * T;
            for (int q = 0; q < T; q++)
                for (int j = 0; j <= q; j++) {
                    float w = m[(size_t)q * T + j];
                    b[k++] = (uint8_t)(w <= 0 ? 0 : w >= 1 ? 255 : lrintf(w * 255.0f));
                }
        }
    base64(o, b, all);
    free(b);
    puts_(o, "\"}");
}

// The experts each layer chose for each shown token, the best first, and their weights:
// "ids" and "w" flat in [layer][token][k] order.
static void write_routing(out *o, const report *r) {
    const int L = r->desc.n_layer, K = r->desc.n_expert_used, T = r->route_T;
    printf_(o, ",\"routing\":{\"layers\":%d,\"k\":%d,\"n_expert\":%d,\"T\":%d,\"ids\":[", L, K,
            r->desc.n_expert, T);
    for (int l = 0; l < L; l++)
        for (int t = 0; t < T; t++)
            for (int j = 0; j < K; j++)
                printf_(o, "%s%d", l + t + j ? "," : "",
                        r->route_ids[((size_t)l * r->route_stride + t) * K + j]);
    puts_(o, "],\"w\":[");
    for (int l = 0; l < L; l++)
        for (int t = 0; t < T; t++)
            for (int j = 0; j < K; j++)
                printf_(o, "%s%.3g", l + t + j ? "," : "",
                        r->route_w[((size_t)l * r->route_stride + t) * K + j]);
    puts_(o, "]}");
}

// A hybrid's recurrent state: per recurrent layer and head, its L2 norm after each shown token,
// "norm" flat in [layer][head][token] order.
static void write_state(out *o, const report *r) {
    const int L = r->desc.n_layer_recurrent, H = r->desc.n_state_heads, T = r->state_T;
    printf_(o, ",\"state\":{\"layers\":%d,\"heads\":%d,\"T\":%d,\"bytes\":%llu,\"norm\":[", L, H, T,
            (unsigned long long)r->desc.state_bytes);
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++)
                printf_(o, "%s%.4g", l + h + t ? "," : "",
                        r->state_norm[((size_t)l * H + h) * r->state_stride + t]);
    puts_(o, "]}");
}

static void write_data(out *o, const report *r) {
    const mint_model_desc *d = &r->desc;
    puts_(o, "{\"tool\":");
    json_str(o, r->tool);
    puts_(o, ",\"model\":");
    json_str(o, r->model_path);
    if (r->compare_path) {
        puts_(o, ",\"compare\":");
        json_str(o, r->compare_path);
    }
    puts_(o, ",\"facts\":{\"arch\":");
    json_str(o, d->arch);
    puts_(o, ",\"name\":");
    json_str(o, d->name);
    puts_(o, ",\"types\":");
    json_str(o, d->types);
    printf_(o,
            ",\"n_vocab\":%d,\"n_ctx_train\":%d,\"n_embd\":%d,\"n_ff\":%d,\"n_layer\":%d,"
            "\"n_head\":%d,\"n_head_kv\":%d,\"head_dim\":%d,\"n_params\":%llu,\"weight_mib\":%.2f,"
            "\"kernels\":\"%s\",\"attention\":\"%s\",\"threads\":%d,\"kv_block\":%d},",
            d->n_vocab, d->n_ctx_train, d->n_embd, d->n_ff, d->n_layer, d->n_head, d->n_head_kv,
            d->head_dim, (unsigned long long)d->n_params, d->weight_bytes / 1048576.0, r->isa,
            r->attention, r->threads, r->kv_block);
    write_tokens(o, r);
    if (r->att && r->att_T > 0) write_attention(o, r);
    if (r->route_ids && r->route_T > 0) write_routing(o, r);
    if (r->state_norm && r->state_T > 0) write_state(o, r);
    puts_(o, ",\"ops\":[");
    for (int i = 0; i < r->n_ops; i++) {
        printf_(o, "%s[", i ? "," : "");
        json_str(o, r->op_name[i]);
        printf_(o, ",%.6g]", r->op_seconds[i]);
    }
    puts_(o, "],\"chunks\":[");
    for (int i = 0; i < r->n_chunks; i++) printf_(o, "%s%.6g", i ? "," : "", r->chunk_ppl[i]);
    printf_(o, "],\"ppl\":%.6g,\"ppl_err\":%.6g,\"note\":", r->ppl, r->ppl_err);
    json_str(o, r->note);
    puts_(o, ",\"chat_prompt\":");
    if (r->chat_prompt)
        json_str(o, r->chat_prompt);
    else
        puts_(o, "null");
    puts_(o, "}");
}

mint_status report_write(const report *r, mint_atomic_file *f, mint_err *err) {
    // The template holds two markers: the data's place and the shared script's place.
    static const char data_mark[] = "/*MINT_DATA*/", views_mark[] = "/*MINT_VIEWS*/";
    const char *page = mint_web_report_html;
    const char *d = strstr(page, data_mark), *v = strstr(page, views_mark);
    if (!d || !v || v < d) {
        if (err) {
            err->code = MINT_E_FORMAT;
            snprintf(err->msg, sizeof err->msg, "report: the page template lacks its markers");
        }
        return MINT_E_FORMAT;
    }
    out o = {0};
    put(&o, page, (size_t)(d - page));
    write_data(&o, r);
    put(&o, d + strlen(data_mark), (size_t)(v - d - strlen(data_mark)));
    puts_(&o, mint_web_views_js);
    puts_(&o, v + strlen(views_mark));
    mint_status st = MINT_OK;
    if (o.oom) {
        if (err) {
            err->code = MINT_E_NOMEM;
            snprintf(err->msg, sizeof err->msg, "report: out of memory");
        }
        st = MINT_E_NOMEM;
    } else {
        st = mint_atomic_file_write(f, o.p, o.n, err);
    }
    free(o.p);
    return st;
}

void report_fill_dist(report_token *t, const mint_model *m, const float *logits, int32_t n_vocab) {
    float max = logits[0];
    for (int32_t i = 1; i < n_vocab; i++) max = logits[i] > max ? logits[i] : max;
    double sum = 0;
    for (int32_t i = 0; i < n_vocab; i++) sum += exp((double)logits[i] - max);
    double H = 0;
    for (int32_t i = 0; i < n_vocab; i++) {
        const double p = exp((double)logits[i] - max) / sum;
        if (p > 0) H -= p * log(p);
    }
    // The alternatives: the library's one top-k and log-softmax (runtime/text/logprobs.c).
    double lp[REPORT_ALTS];
    t->n_alt = mint_top_k(logits, n_vocab, REPORT_ALTS, t->alt_id);
    mint_log_softmax(logits, n_vocab, t->alt_id, t->n_alt, lp);
    for (int k = 0; k < t->n_alt; k++) t->alt_p[k] = (float)exp(lp[k]);
    for (int k = 0; k < t->n_alt; k++) {
        size_t n = mint_token_to_piece(m, t->alt_id[k], false, t->alt_piece[k], 31);
        t->alt_piece[k][n < 31 ? n : 31] = '\0';
    }
    t->entropy = (float)H;
    t->p = (float)(exp((double)logits[t->id] - max) / sum);
}

double report_kl(const float *p_logits, const float *q_logits, int32_t n_vocab, int32_t *q_top) {
    float pm = p_logits[0], qm = q_logits[0];
    int32_t top = 0;
    for (int32_t i = 1; i < n_vocab; i++) {
        pm = p_logits[i] > pm ? p_logits[i] : pm;
        if (q_logits[i] > qm) qm = q_logits[i], top = i;
    }
    double ps = 0, qs = 0;
    for (int32_t i = 0; i < n_vocab; i++) {
        ps += exp((double)p_logits[i] - pm);
        qs += exp((double)q_logits[i] - qm);
    }
    const double plse = pm + log(ps), qlse = qm + log(qs);
    double kl = 0;
    for (int32_t i = 0; i < n_vocab; i++) {
        const double lp = p_logits[i] - plse, lq = q_logits[i] - qlse;
        kl += exp(lp) * (lp - lq);
    }
    *q_top = top;
    return kl > 0 ? kl : 0;
}

int report_attention_positions(int layers, int heads, size_t budget, int cap) {
    int T = 0;
    while (T < cap && (size_t)layers * heads * (size_t)(T + 1) * (size_t)(T + 2) / 2 <= budget) T++;
    return T;
}
