// decode.c - evaluating batches of (token, position, sequence) entries, and the sequences'
// public API. mint_eval, the single-sequence call, is a thin wrapper over mint_decode.
//
// One batch, in order: validate every entry (nothing changes on an error); reserve the KV blocks
// every sequence needs (allocation, eviction and copy on write happen here, single-threaded);
// fill the per-row arrays and cut the rows into runs (consecutive rows of one sequence); run the
// graph on the pool; record the tokens in their sequences, which registers the blocks they
// filled in the prefix cache.
#include "base/error.h"
#include "runtime/engine/context.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static mint_status check_seq(const mint_ctx *c, int32_t seq, const char *what, mint_err *err) {
    if (seq < 0 || seq >= c->params.n_seq_max)
        return mint_fail(err, MINT_E_ARG, "%s: sequence id %d is outside 0..%d", what, seq,
                         c->params.n_seq_max - 1);
    return MINT_OK;
}

// Every check of mint_decode, before anything changes.
static mint_status validate(mint_ctx *c, const mint_batch_entry *e, int32_t n, mint_err *err) {
    const int32_t n_vocab = c->model->hp.n_vocab;
    if (n < 1 || n > c->params.n_batch)
        return mint_fail(err, MINT_E_ARG, "a batch holds 1..%d entries, not %d", c->params.n_batch,
                         n);
    for (int32_t s = 0; s < c->params.n_seq_max; s++) {
        c->seq_next[s] = c->kv.seq[s].n_past;
        c->seq_count[s] = 0;
    }
    for (int32_t i = 0; i < n; i++) {
        if (e[i].seq < 0 || e[i].seq >= c->params.n_seq_max)
            return mint_fail(err, MINT_E_ARG, "entry %d: sequence id %d is outside 0..%d", i,
                             e[i].seq, c->params.n_seq_max - 1);
        if (e[i].token < 0 || e[i].token >= n_vocab)
            return mint_fail(err, MINT_E_ARG, "token id %d at index %d is outside 0..%d",
                             e[i].token, i, n_vocab - 1);
        const int32_t s = e[i].seq;
        if (e[i].pos != c->seq_next[s])
            return mint_fail(err, MINT_E_ARG,
                             "entry %d: sequence %d continues at position %d, not %d (positions "
                             "are appended in order)",
                             i, s, c->seq_next[s], e[i].pos);
        if (e[i].pos >= c->params.n_ctx)
            return mint_fail(err, MINT_E_LIMIT,
                             "context is full: sequence %d at position %d reaches the context "
                             "length %d",
                             s, e[i].pos, c->params.n_ctx);
        c->seq_next[s]++;
        c->seq_count[s]++;
    }
    int64_t need = 0;
    for (int32_t s = 0; s < c->params.n_seq_max; s++)
        need += mint_kv_blocks_needed(&c->kv, s, c->seq_count[s]);
    const int32_t avail = mint_kv_blocks_available(&c->kv);
    if (need > avail)
        return mint_fail(err, MINT_E_LIMIT,
                         "the KV cache is full: this batch needs %" PRId64
                         " more blocks of %d positions, %d are free (raise kv_size, or free "
                         "sequences)",
                         need, c->kv.block, avail);
    return MINT_OK;
}

static mint_attn_shape attn_shape(const mint_hparams *hp) {
    return (mint_attn_shape){hp->n_head, hp->n_head_kv, hp->head_dim, hp->attn_scale,
                             hp->attn_softcap};
}

// A hybrid's snapshots for the prefix cache: the state of each sequence of the batch at every
// block boundary its rows cross, the last rs.n_snap / 2 of them (a long prompt's latest blocks
// are the ones a later request shares most often), each in a slot of the store.
static int32_t plan_snapshots(mint_ctx *c) {
    if (!c->rs.n_layer) return 0;
    const int32_t B = c->kv.block, cap = c->rs.n_snap / 2;
    int32_t n = 0, total = 0;
    for (int32_t s = 0; s < c->params.n_seq_max; s++) {
        const int32_t past = c->kv.seq[s].n_past, end = past + c->seq_count[s];
        total += end / B - past / B;
    }
    int32_t skip = total > cap ? total - cap : 0;
    for (int32_t s = 0; s < c->params.n_seq_max; s++) {
        const int32_t past = c->kv.seq[s].n_past, end = past + c->seq_count[s];
        for (int32_t p = (past / B + 1) * B; p <= end; p += B) {
            if (skip > 0) {
                skip--;
                continue;
            }
            const int32_t slot = mint_rs_snap_take(&c->rs);
            c->snap_reqs[n++] = (mint_rs_snap_req){s, p, slot, mint_rs_snap(&c->rs, slot)};
        }
    }
    return n;
}

mint_status mint_decode(mint_ctx *c, const mint_batch_entry *e, int32_t n, mint_err *err) {
    mint_err_clear(err);
    mint_status st = validate(c, e, n, err);
    if (st) return st;
    for (int32_t s = 0; s < c->params.n_seq_max; s++)
        if (c->seq_count[s] && (st = mint_kv_reserve(&c->kv, s, c->seq_count[s], err))) return st;
    // A hybrid's sequences keep their recurrent state where a batch of several of their tokens
    // starts (where speculative decoding's rejected drafts go back to, and a chat's next turn
    // after a prompt), and at every block boundary one token at a time reaches: a state can be
    // megabytes, too much to copy before every generated token (runtime/engine/rstate.h).
    for (int32_t s = 0; s < c->params.n_seq_max && c->rs.n_layer; s++) {
        const int32_t past = c->kv.seq[s].n_past;
        if (c->seq_count[s] > 1 || (c->seq_count[s] == 1 && past % c->kv.block == 0))
            mint_rs_checkpoint(&c->rs, s, past);
    }
    const int32_t n_snaps = plan_snapshots(c);

    int32_t n_out = 0, n_runs = 0;
    for (int32_t i = 0; i < n; i++) {
        c->ids[i] = e[i].token;
        c->pos[i] = e[i].pos;
        c->seq[i] = e[i].seq;
        if (e[i].logits) c->out_rows[n_out++] = i;
        if (n_runs > 0 && c->seq[i - 1] == e[i].seq && c->pos[i - 1] + 1 == e[i].pos) {
            c->runs[n_runs - 1].n++;
            continue;
        }
        c->runs[n_runs++] =
            (mint_attn_run){.kv = c->seq_kv[e[i].seq], .row0 = i, .n = 1, .pos0 = e[i].pos};
    }
    const mint_attn_shape sh = attn_shape(&c->model->hp);
    mint_attn_batch plan = {.sh = &sh,
                            .algo = mint_ctx_choose_attention(c, c->runs, n_runs),
                            .runs = c->runs,
                            .n_runs = n_runs};
    mint_exec x = {
        .hp = &c->model->hp,
        .k = c->k,
        .attn = sh,
        .n_tokens = n,
        .n_out = n_out,
        .ids = c->ids,
        .pos = c->pos,
        .seq = c->seq,
        .out_rows = c->out_rows,
        .seq_kv = c->seq_kv,
        .runs = c->runs,
        .n_runs = n_runs,
        .attn_algo = plan.algo,
        .n_attn_items = mint_attention_plan(&plan),
        .att_scratch = c->att_scratch,
        .att_scratch_bytes = c->att_scratch_bytes,
        .chunk = c->chunk,
        .capture = c->capture,
        .cap_max = c->cap_max,
        .node_end = c->trace ? c->trace_t : NULL,
        .n_threads = c->params.n_threads,
        .moe = c->moe,
        .route_ids = c->route_ids,
        .route_w = c->route_w,
        .route_max = c->route_max,
        .rs = &c->rs,
        .snaps = c->snap_reqs,
        .n_snaps = n_snaps,
        .snap_block = c->kv.block,
        .state_cap = c->state_cap,
        .state_cap_max = c->state_cap_max,
        .imx = c->imx.im ? &c->imx : NULL,
    };
    for (int b = 0; b < MINT_BUF_COUNT; b++) {
        x.buf[b] = c->buf[b];
        x.stride[b] = c->stride[b];
    }
    mint_exec_graph(&c->graph, &x, c->pool);
    if (c->trace) mint_trace_fill(c, &x);

    for (int32_t s = 0; s < c->params.n_seq_max; s++) { // each sequence's tokens, in order
        if (!c->seq_count[s]) continue;
        int32_t k = 0;
        for (int32_t i = 0; i < n; i++)
            if (e[i].seq == s) c->scratch_i32[k++] = e[i].token;
        mint_kv_commit(&c->kv, s, c->scratch_i32, k);
    }
    for (int32_t q = 0; q < n_snaps; q++) { // each under its block's key, now committed
        const mint_rs_snap_req *r = &c->snap_reqs[q];
        mint_rs_snap_publish(&c->rs, r->slot, c->kv.seq[r->seq].keys[r->pos / c->kv.block - 1]);
    }
    c->last_algo = (int)plan.algo;
    c->n_logits = n_out;
    c->n_evaluated += (uint64_t)n;
    if (c->imx.im && c->imx.status != MINT_OK) { // the batch ran; its sums could not be kept
        if (err) *err = c->imx.err;
        return c->imx.status;
    }
    return MINT_OK;
}

// Keeps positions 0 .. n_keep - 1 of seq. The KV cache cuts its rows; a hybrid's recurrent state
// cannot be cut, so it goes back to its latest checkpoint at or before n_keep and the tokens from
// there to n_keep are evaluated again (the same bits as the first time: rows never depend on
// their batch). The logits of the last evaluation stay as they were.
static mint_status replay_to(mint_ctx *c, int32_t seq, int32_t n_keep, mint_err *err);

static mint_status go_back(mint_ctx *c, int32_t seq, int32_t n_keep, mint_err *err) {
    if (n_keep >= c->kv.seq[seq].n_past) return MINT_OK;
    if (!c->rs.n_layer) {
        mint_kv_truncate(&c->kv, seq, n_keep);
        return MINT_OK;
    }
    return replay_to(c, seq, n_keep, err);
}

// go_back's work for a hybrid: the state at the latest checkpoint at or before n_keep, the KV
// cut there, the tokens from there to n_keep (those seq holds now) evaluated again.
static mint_status replay_to(mint_ctx *c, int32_t seq, int32_t n_keep, mint_err *err) {
    mint_kv_seq *ks = &c->kv.seq[seq];
    const int32_t from = mint_rs_restore(&c->rs, seq, n_keep);
    const int32_t n = n_keep - from;
    int32_t *tokens = n ? malloc((size_t)n * sizeof *tokens) : NULL;
    if (n && !tokens) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    if (n) memcpy(tokens, ks->tokens + from, (size_t)n * sizeof *tokens);
    mint_kv_truncate(&c->kv, seq, from);
    const int32_t n_logits = c->n_logits;
    mint_status st = MINT_OK;
    for (int32_t off = 0; off < n && !st; off += c->params.n_batch) {
        const int32_t len = n - off < c->params.n_batch ? n - off : c->params.n_batch;
        for (int32_t i = 0; i < len; i++)
            c->entries[i] = (mint_batch_entry){tokens[off + i], from + off + i, seq, false};
        st = mint_decode(c, c->entries, len, err);
    }
    free(tokens);
    c->n_logits = n_logits; // (no row asked for logits: the buffer is as it was)
    c->rs.replayed += (uint64_t)n;
    if (st) { // the sequence stays valid, shorter: as far as the replay got
        mint_err_prefix(err, "going back to position %d of sequence %d", n_keep, seq);
        return st;
    }
    return MINT_OK;
}

mint_status mint_eval(mint_ctx *c, const int32_t *ids, int32_t n, int32_t pos, bool all_logits,
                      mint_err *err) {
    mint_err_clear(err);
    const int32_t n_vocab = c->model->hp.n_vocab, n_past = c->kv.seq[0].n_past;
    const int32_t n_batch = c->params.n_batch;
    if (n < 1) return mint_fail(err, MINT_E_ARG, "no tokens to evaluate (n = %d)", n);
    if (pos < 0 || pos > n_past)
        return mint_fail(err, MINT_E_ARG, "position %d is outside 0..%d (tokens in the cache)", pos,
                         n_past);
    if ((int64_t)pos + n > c->params.n_ctx)
        return mint_fail(
            err, MINT_E_LIMIT,
            "context is full: %d token%s at position %d exceed%s the context length %d", n,
            n == 1 ? "" : "s", pos, n == 1 ? "s" : "", c->params.n_ctx);
    if (all_logits && n > n_batch)
        return mint_fail(err, MINT_E_ARG,
                         "all logits requested for %d tokens, more than the batch size %d", n,
                         n_batch);
    for (int32_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= n_vocab)
            return mint_fail(err, MINT_E_ARG, "token id %d at index %d is outside 0..%d", ids[i], i,
                             n_vocab - 1);
    mint_status st = go_back(c, 0, pos, err); // evaluating at pos drops anything after it
    if (st) return st;
    for (int32_t off = 0; off < n; off += n_batch) {
        const int32_t len = n - off < n_batch ? n - off : n_batch;
        for (int32_t i = 0; i < len; i++)
            c->entries[i] =
                (mint_batch_entry){ids[off + i], pos + off + i, 0, all_logits || off + i == n - 1};
        if ((st = mint_decode(c, c->entries, len, err))) return st;
    }
    return MINT_OK;
}

const float *mint_get_logits(const mint_ctx *c, int32_t i) {
    if (i < 0) i = c->n_logits - 1;
    if (i < 0 || i >= c->n_logits) return NULL;
    return (const float *)((const char *)c->buf[MINT_BUF_LOGITS] +
                           (size_t)i * c->stride[MINT_BUF_LOGITS]);
}

int32_t mint_get_n_logits(const mint_ctx *c) {
    return c->n_logits;
}

int32_t mint_ctx_n_past(const mint_ctx *c) {
    return c->kv.seq[0].n_past;
}

// ---------------------------------------------------------------------------------------------
// Sequences

int32_t mint_seq_n_past(const mint_ctx *c, int32_t seq) {
    return seq < 0 || seq >= c->params.n_seq_max ? -1 : c->kv.seq[seq].n_past;
}

const int32_t *mint_seq_tokens(const mint_ctx *c, int32_t seq) {
    return seq < 0 || seq >= c->params.n_seq_max ? NULL : c->kv.seq[seq].tokens;
}

mint_status mint_seq_fork(mint_ctx *c, int32_t src, int32_t dst, mint_err *err) {
    mint_err_clear(err);
    mint_status st = check_seq(c, src, "fork source", err);
    if (!st) st = check_seq(c, dst, "fork destination", err);
    if (st) return st;
    mint_kv_fork(&c->kv, src, dst);
    mint_rs_fork(&c->rs, src, dst);
    return MINT_OK;
}

mint_status mint_seq_truncate(mint_ctx *c, int32_t seq, int32_t n_keep, mint_err *err) {
    mint_err_clear(err);
    mint_status st = check_seq(c, seq, "truncate", err);
    if (st) return st;
    if (n_keep < 0 || n_keep > c->kv.seq[seq].n_past)
        return mint_fail(err, MINT_E_ARG,
                         "truncate: sequence %d holds %d positions; cannot keep %d", seq,
                         c->kv.seq[seq].n_past, n_keep);
    return go_back(c, seq, n_keep, err);
}

mint_status mint_seq_forget(mint_ctx *c, int32_t seq, mint_err *err) {
    mint_err_clear(err);
    mint_status st = check_seq(c, seq, "forget", err);
    if (st) return st;
    mint_kv_forget(&c->kv, seq);
    mint_rs_clear(&c->rs, seq);
    return MINT_OK;
}

mint_status mint_seq_prefix(mint_ctx *c, int32_t seq, const int32_t *tokens, int32_t n,
                            int32_t *n_held, mint_err *err) {
    mint_err_clear(err);
    mint_status st = check_seq(c, seq, "prefix", err);
    if (st) return st;
    if (n < 0 || n > c->params.n_ctx)
        return mint_fail(err, MINT_E_ARG,
                         "prefix: a length of %d is outside 0..%d (the context length)", n,
                         c->params.n_ctx);
    if (!c->rs.n_layer) {
        *n_held = mint_kv_prefix(&c->kv, seq, tokens, n);
        return MINT_OK;
    }
    // A hybrid's recurrent state: the sequence keeps what it holds that matches (its own
    // checkpoints and a replay give the state there), unless the prefix cache offers more blocks
    // and a snapshot of the state after one of them (runtime/engine/rstate.h).
    const mint_kv_seq *ks = &c->kv.seq[seq];
    const int32_t n_past_before = ks->n_past;
    int32_t own = 0;
    while (own < ks->n_past && own < n - 1 && ks->tokens[own] == tokens[own]) own++;
    const int32_t held = mint_kv_prefix(&c->kv, seq, tokens, n), B = c->kv.block;
    for (int32_t p = held / B * B; p > own; p -= B) {
        const int32_t slot = mint_rs_snap_find(&c->rs, ks->keys[p / B - 1]);
        if (slot < 0) continue;
        mint_rs_restore(&c->rs, seq, own); // the checkpoints up to own still hold
        memcpy(mint_rs_layer(&c->rs, seq, 0), mint_rs_snap(&c->rs, slot),
               c->rs.seq_floats * sizeof(float));
        mint_rs_checkpoint(&c->rs, seq, p);
        mint_kv_truncate(&c->kv, seq, p);
        c->rs.snap_hits++;
        *n_held = p;
        return MINT_OK;
    }
    // No snapshot: the state at own. The live state is that when the sequence held no more (the
    // KV cache may have cut it already), else a checkpoint and a replay give it.
    if (own < n_past_before) {
        if ((st = replay_to(c, seq, own, err))) return st;
    } else {
        mint_kv_truncate(&c->kv, seq, own);
    }
    *n_held = own;
    return MINT_OK;
}

mint_status mint_ctx_capture_routing(mint_ctx *c, int32_t *ids, float *weights, int32_t max_pos,
                                     mint_err *err) {
    mint_err_clear(err);
    if (ids && c->model->hp.n_expert == 0)
        return mint_fail(err, MINT_E_ARG, "routing capture: the model has no experts");
    if (ids && (!weights || max_pos < 1 || max_pos > c->params.n_ctx))
        return mint_fail(err, MINT_E_ARG,
                         "routing capture of %d positions is outside 1..%d (or no weights)",
                         max_pos, c->params.n_ctx);
    c->route_ids = ids;
    c->route_w = ids ? weights : NULL;
    c->route_max = ids ? max_pos : 0;
    return MINT_OK;
}

mint_status mint_ctx_capture_state(mint_ctx *c, float *buf, int32_t max_pos, mint_err *err) {
    mint_err_clear(err);
    if (buf && c->model->hp.n_layer_rs == 0)
        return mint_fail(err, MINT_E_ARG, "state capture: the model has no recurrent layers");
    if (buf && (max_pos < 1 || max_pos > c->params.n_ctx))
        return mint_fail(err, MINT_E_ARG, "state capture of %d positions is outside 1..%d", max_pos,
                         c->params.n_ctx);
    c->state_cap = buf;
    c->state_cap_max = buf ? max_pos : 0;
    return MINT_OK;
}

mint_status mint_ctx_capture_attention(mint_ctx *c, float *buf, int32_t max_pos, mint_err *err) {
    mint_err_clear(err);
    if (buf && (max_pos < 1 || max_pos > c->params.n_ctx))
        return mint_fail(err, MINT_E_ARG, "attention capture of %d positions is outside 1..%d",
                         max_pos, c->params.n_ctx);
    c->capture = buf;
    c->cap_max = buf ? max_pos : 0;
    return MINT_OK;
}
