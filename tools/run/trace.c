// trace.c - mint-run --trace / --trace-json: after every evaluated batch, each node of the graph
// in order (shapes, types, bytes read, time, threads) and the KV cache's fill; after every
// sample, how many candidates each step of the sampler left and the token picked. Text goes to
// stderr; JSON lines go to a file written atomically (begun before generation, so an unwritable
// path fails first).
#include "run.h"

#include "cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct run_trace {
    bool text;              // --trace: text on stderr
    mint_atomic_file *json; // --trace-json: JSON lines
    FILE *mem;              // the current JSON line, built in memory
    char *line;             // its buffer (open_memstream)
    size_t line_len;        // its length
    int batch;              // batches so far
    int step;               // samples so far
};

int run_trace_open(session *s, run_trace **out) {
    *out = NULL;
    if (!s->o->trace && !s->o->trace_json) return 0;
    run_trace *t = calloc(1, sizeof *t);
    if (!t) return run_fail("out of memory");
    t->text = s->o->trace;
    mint_err err;
    if (s->o->trace_json && mint_atomic_file_begin(s->o->trace_json, &t->json, &err) != MINT_OK) {
        free(t);
        return run_fail(err.msg);
    }
    mint_ctx_set_trace(s->ctx, true);
    *out = t;
    return 0;
}

// Appends the JSON line built in t->mem to the file.
static void flush_line(run_trace *t) {
    fputc('\n', t->mem);
    fclose(t->mem);
    mint_err err;
    if (mint_atomic_file_write(t->json, t->line, t->line_len, &err) != MINT_OK)
        fprintf(stderr, TOOL ": --trace-json: %s\n", err.msg);
    free(t->line);
    t->mem = NULL;
}

void run_trace_batch(session *s, run_trace *t, int32_t pos0, int32_t n) {
    if (!t) return;
    const mint_trace_node *nodes;
    const int32_t n_nodes = mint_ctx_last_trace(s->ctx, &nodes);
    mint_cache_info kv;
    mint_ctx_cache_info(s->ctx, &kv);
    double total = 0;
    for (int32_t i = 0; i < n_nodes; i++) total += nodes[i].seconds;
    t->batch++;
    if (t->text) {
        fprintf(stderr,
                "[trace] batch %d: %d token%s at positions %d..%d, attention %s, %.3f ms\n"
                "[trace] %4s  %-9s %-18s %5s %6s  %-20s %-5s %9s %8s %3s\n",
                t->batch, n, n == 1 ? "" : "s", pos0, pos0 + n - 1, mint_ctx_attention_name(s->ctx),
                total * 1e3, "#", "op", "name", "rows", "width", "weight", "act", "MB read", "ms",
                "thr");
        for (int32_t i = 0; i < n_nodes; i++) {
            const mint_trace_node *x = &nodes[i];
            char w[48] = "-";
            if (x->weight_type[0])
                snprintf(w, sizeof w, "%s [%" PRId64 "x%" PRId64 "]", x->weight_type,
                         x->weight_ne[0], x->weight_ne[1]);
            fprintf(stderr,
                    "[trace] %4d  %-9s %-18s %5d %6" PRId64 "  %-20s %-5s %9.3f %8.3f %3d\n", i,
                    x->op, x->name, x->rows, x->width, w, x->act_type[0] ? x->act_type : "-",
                    x->bytes_read / 1e6, x->seconds * 1e3, x->threads);
        }
        fprintf(stderr,
                "[trace] kv cache: %d positions held; blocks of %d: %d used, %d cached, %d free, "
                "%d max; %.2f MiB allocated\n",
                mint_ctx_n_past(s->ctx), kv.block, kv.blocks_used, kv.blocks_cached, kv.blocks_free,
                kv.blocks_max, kv.bytes_alloc / 1048576.0);
        if (kv.bytes_state) // a hybrid's recurrent state beside it
            fprintf(stderr,
                    "[trace] recurrent state: %.2f MiB (live, checkpoints, prefix snapshots); "
                    "%llu restores, %llu tokens evaluated again\n",
                    kv.bytes_state / 1048576.0, (unsigned long long)kv.state_restores,
                    (unsigned long long)kv.state_replayed);
    }
    if (t->json && (t->mem = open_memstream(&t->line, &t->line_len))) {
        fprintf(t->mem,
                "{\"event\":\"batch\",\"index\":%d,\"pos\":%d,\"n_tokens\":%d,\"attention\":\"%s\","
                "\"seconds\":%.9f,\"nodes\":[",
                t->batch, pos0, n, mint_ctx_attention_name(s->ctx), total);
        for (int32_t i = 0; i < n_nodes; i++) {
            const mint_trace_node *x = &nodes[i];
            fprintf(
                t->mem,
                "%s{\"name\":\"%s\",\"op\":\"%s\",\"rows\":%d,\"width\":%" PRId64
                ",\"weight_type\":\"%s\",\"weight_ne\":[%" PRId64 ",%" PRId64
                "],\"act_type\":\"%s\",\"bytes_read\":%" PRIu64 ",\"seconds\":%.9f,\"threads\":%d}",
                i ? "," : "", x->name, x->op, x->rows, x->width, x->weight_type, x->weight_ne[0],
                x->weight_ne[1], x->act_type, x->bytes_read, x->seconds, x->threads);
        }
        fprintf(t->mem,
                "],\"kv\":{\"n_past\":%d,\"block\":%d,\"blocks_used\":%d,\"blocks_cached\":%d,"
                "\"blocks_free\":%d,\"blocks_max\":%d,\"bytes_alloc\":%" PRIu64 "}}",
                mint_ctx_n_past(s->ctx), kv.block, kv.blocks_used, kv.blocks_cached, kv.blocks_free,
                kv.blocks_max, kv.bytes_alloc);
        flush_line(t);
    }
}

void run_trace_sample(session *s, run_trace *t, const mint_sample_info *info) {
    if (!t) return;
    char piece[256];
    size_t n = run_piece(s->m, info->token, piece, sizeof piece);
    // With --grammar, what it allowed: its stage of the chain, or for greedy a note (-1: the
    // argmax was allowed alone, the mask not computed).
    char gram[64] = "";
    if (s->grammar && info->greedy && info->n_grammar < 0)
        snprintf(gram, sizeof gram, " (the grammar allowed it)");
    else if (s->grammar && info->greedy)
        snprintf(gram, sizeof gram, " (the grammar allowed %d)", (int)info->n_grammar);
    else if (s->grammar)
        snprintf(gram, sizeof gram, " -> grammar %d", (int)info->n_grammar);
    if (t->text) {
        if (info->greedy)
            fprintf(stderr, "[trace] sample %d: greedy over %d candidates: token %d '%.*s'%s\n",
                    t->step, info->n_vocab, info->token, (int)n, piece, gram);
        else
            fprintf(stderr,
                    "[trace] sample %d: %d candidates%s -> top-k %d -> top-p %d -> min-p %d; drew "
                    "token %d '%.*s' with p = %.4f\n",
                    t->step, info->n_vocab, gram, info->n_top_k, info->n_top_p, info->n_min_p,
                    info->token, (int)n, piece, (double)info->p);
    }
    if (t->json && (t->mem = open_memstream(&t->line, &t->line_len))) {
        fprintf(t->mem,
                "{\"event\":\"sample\",\"step\":%d,\"greedy\":%s,\"n_vocab\":%d,\"top_k\":%d,"
                "\"top_p\":%d,\"min_p\":%d,\"token\":%d,\"piece\":",
                t->step, info->greedy ? "true" : "false", info->n_vocab, info->n_top_k,
                info->n_top_p, info->n_min_p, info->token);
        cli_json_str(t->mem, piece, n);
        fprintf(t->mem, ",\"p\":%.6f", (double)info->p);
        if (s->grammar) fprintf(t->mem, ",\"grammar\":%d", (int)info->n_grammar);
        fprintf(t->mem, "}");
        flush_line(t);
    }
    t->step++;
}

int run_trace_close(run_trace *t, bool ok) {
    if (!t) return 0;
    int rc = 0;
    mint_err err;
    if (t->json) {
        if (!ok)
            mint_atomic_file_abort(t->json);
        else if (mint_atomic_file_commit(t->json, &err) != MINT_OK)
            rc = run_fail(err.msg);
    }
    free(t);
    return rc;
}
