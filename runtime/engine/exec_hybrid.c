// exec_hybrid.c - running a hybrid model's recurrent mixers (runtime/engine/exec_hybrid.h).
//
// A recurrent op walks each run of the batch (consecutive rows of one sequence) in order, so a
// sequence's state (runtime/engine/rstate.h) passes from row to row, and splits its channels or
// heads across threads, never a sum. It stops where the rows cross a KV block boundary for
// which the prefix cache wants a snapshot of the state, and, when the state's norms are
// captured (mint_ctx_capture_state), after every row of sequence 0.
#include "runtime/engine/exec_hybrid.h"

#include "ops/delta_net.h"
#include "ops/ops.h"
#include "runtime/engine/pool.h"

#include <math.h>
#include <string.h>

// The snapshot of sequence seq's state once it holds `held` positions, or NULL when none is due.
static float *snapshot_due(const mint_exec *e, int32_t seq, int32_t held) {
    for (int32_t q = 0; q < e->n_snaps; q++)
        if (e->snaps[q].seq == seq && e->snaps[q].pos == held) return e->snaps[q].dst;
    return NULL;
}

// Whether sequence seq's state norms are captured (mint_ctx_capture_state): row by row.
static bool capturing(const mint_exec *e, int32_t seq) {
    return e->state_cap && seq == 0;
}

// The end of the rows of a run from row i that one call handles: the next block boundary a
// snapshot is due at (the whole run when none is), or the next row when norms are captured.
static int32_t segment_end(const mint_exec *e, const mint_attn_run *run, int32_t i) {
    if (capturing(e, e->seq[run->row0])) return i + 1;
    if (!e->n_snaps) return run->n;
    const int32_t B = e->snap_block;
    const int32_t to_boundary = ((run->pos0 + i) / B + 1) * B - run->pos0;
    return to_boundary < run->n ? to_boundary : run->n;
}

// Where the norm of layer `slot`'s head h after the row at pos goes, or NULL (not captured).
static float *state_norm_at(const mint_exec *e, int32_t slot, int heads, int h, int32_t pos) {
    if (pos >= e->state_cap_max) return NULL;
    return e->state_cap + ((size_t)slot * (size_t)heads + (size_t)h) * e->state_cap_max + pos;
}

// The L2 norm of n floats (summed in double).
static float norm2(const float *x, size_t n) {
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += (double)x[i] * x[i];
    return (float)sqrt(sum);
}

// LFM2's short convolution: the channels split across threads, each thread running its channels
// down every run of the batch in order, so a sequence's state passes from row to row (and from
// run to run, when a sequence has two). A capture of the state's norm runs it on one thread
// (node_serial), row by row.
void mint_run_shortconv(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(n->width, ith, nth, &lo, &hi);
    if (lo >= hi) return;
    const int taps = (int)n->w->n_in;
    for (int32_t r = 0; r < e->n_runs; r++) {
        const mint_attn_run *run = &e->runs[r];
        const int32_t seq = e->seq[run->row0];
        float *state = mint_rs_layer(e->rs, seq, n->slot);
        for (int32_t i = 0; i < run->n;) {
            const int32_t end = segment_end(e, run, i);
            mint_shortconv(mint_exec_row(e, n->src, run->row0 + i), e->stride[n->src],
                           mint_exec_row(e, n->dst, run->row0 + i), e->stride[n->dst], end - i,
                           n->w->data, taps, state, n->width, lo, hi);
            i = end;
            float *norm =
                capturing(e, seq) ? state_norm_at(e, n->slot, 1, 0, run->pos0 + end - 1) : NULL;
            if (norm) *norm = norm2(state, (size_t)(taps - 1) * (size_t)n->width);
            float *snap = snapshot_due(e, seq, run->pos0 + end);
            if (!snap) continue;
            float *dst = snap + (size_t)n->slot * e->rs->layer_floats;
            for (int j = 0; j < taps - 1; j++)
                memcpy(dst + (size_t)j * (size_t)n->width + lo,
                       state + (size_t)j * (size_t)n->width + lo,
                       (size_t)(hi - lo) * sizeof(float));
        }
    }
}

// Qwen3.5's attention: each head's queries [head_dim] into dst, its gates into src2.
void mint_run_q_split(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    const int hd = e->hp->head_dim, nh = (int)(n->width / hd);
    for (long t = lo; t < hi; t++) {
        const float *in = mint_exec_row(e, n->src, t);
        float *q = mint_exec_row(e, n->dst, t), *g = mint_exec_row(e, n->src2, t);
        for (int h = 0; h < nh; h++) {
            memcpy(q + (size_t)h * hd, in + (size_t)h * 2 * hd, (size_t)hd * sizeof *q);
            memcpy(g + (size_t)h * hd, in + ((size_t)h * 2 + 1) * hd, (size_t)hd * sizeof *g);
        }
    }
}

void mint_run_sigmoid_gate(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    const int hd = e->hp->head_dim;
    mint_sigmoid_gate(e->buf[n->dst], e->stride[n->dst], e->buf[n->src], e->stride[n->src],
                      (size_t)hd, (int)(n->width / hd), hd, lo, hi);
}

void mint_run_delta_gates(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    mint_delta_gates(e->buf[n->dst], e->stride[n->dst], e->buf[n->src], e->stride[n->src],
                     n->w->data, n->bias->data, (int)n->width, lo, hi);
}

// The state of recurrent layer `slot` of a delta net: its convolution's [C][L - 1] first, then
// the delta rule's [H_v][S][S].
static float *conv_state(const mint_exec *e, int32_t seq, int32_t slot) {
    return mint_rs_layer(e->rs, seq, slot);
}
static float *delta_state(const mint_exec *e, int32_t seq, int32_t slot, int64_t channels) {
    return mint_rs_layer(e->rs, seq, slot) + (size_t)channels * (size_t)(e->hp->n_conv - 1);
}

// A delta net's convolution and SiLU: channels split across threads, each down every run in
// order (the state passes from row to row); a due snapshot copies this thread's channels.
void mint_run_conv1d(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(n->width, ith, nth, &lo, &hi);
    if (lo >= hi) return;
    const int taps = (int)n->w->n_in, hist = taps - 1;
    for (int32_t r = 0; r < e->n_runs; r++) {
        const mint_attn_run *run = &e->runs[r];
        const int32_t seq = e->seq[run->row0];
        float *state = conv_state(e, seq, n->slot);
        for (int32_t i = 0; i < run->n;) {
            const int32_t end = segment_end(e, run, i);
            mint_conv1d_causal(mint_exec_row(e, n->src, run->row0 + i), e->stride[n->src], end - i,
                               n->w->data, taps, state, mint_exec_row(e, n->dst, run->row0 + i),
                               e->stride[n->dst], true, (int)lo, (int)hi);
            i = end;
            float *snap = snapshot_due(e, seq, run->pos0 + end);
            if (snap) {
                float *dst = snap + (size_t)n->slot * e->rs->layer_floats;
                memcpy(dst + (size_t)lo * hist, state + (size_t)lo * hist,
                       (size_t)(hi - lo) * hist * sizeof(float));
            }
        }
    }
}

void mint_run_l2_norm(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    const int s = e->hp->ssm_s;
    mint_l2_norm_heads(e->buf[n->dst], e->stride[n->dst], (int)(n->width / s), s, e->hp->rms_eps,
                       lo, hi);
}

// The gated delta rule: value heads split across threads, each down every run in order, token
// by token (the recurrent form for every batch shape: the bits never depend on the batch).
void mint_run_delta_net(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    const mint_hparams *hp = e->hp;
    long lo, hi;
    mint_split(hp->ssm_v_heads, ith, nth, &lo, &hi);
    if (lo >= hi) return;
    const int64_t s = hp->ssm_s, kd = (int64_t)hp->ssm_k_heads * s;
    const int64_t channels = 2 * kd + (int64_t)hp->ssm_v_heads * s;
    const mint_delta_dims d = {hp->ssm_k_heads, hp->ssm_v_heads, (int)s, (int)s,
                               1.0f / sqrtf((float)s)};
    const size_t head = (size_t)s * (size_t)s; // one value head's state
    for (int32_t r = 0; r < e->n_runs; r++) {
        const mint_attn_run *run = &e->runs[r];
        const int32_t seq = e->seq[run->row0];
        float *state = delta_state(e, seq, n->slot, channels);
        for (int32_t i = 0; i < run->n;) {
            const int32_t end = segment_end(e, run, i);
            const float *qkv = mint_exec_row(e, n->src, run->row0 + i);
            const mint_delta_seq sq = {
                .n_tokens = end - i,
                .q = qkv,
                .q_stride = e->stride[n->src],
                .k = qkv + kd,
                .k_stride = e->stride[n->src],
                .v = qkv + 2 * kd,
                .v_stride = e->stride[n->src],
                .g = mint_exec_row(e, n->src2, run->row0 + i),
                .g_stride = e->stride[n->src2],
                .beta = mint_exec_row(e, MINT_BUF_BETA, run->row0 + i),
                .beta_stride = e->stride[MINT_BUF_BETA],
                .out = mint_exec_row(e, n->dst, run->row0 + i),
                .out_stride = e->stride[n->dst],
                .state = state,
            };
            mint_delta_net_recurrent(e->k, &d, &sq, (int)lo, (int)hi);
            i = end;
            for (long h = lo; capturing(e, seq) && h < hi; h++) {
                float *norm =
                    state_norm_at(e, n->slot, hp->ssm_v_heads, (int)h, run->pos0 + end - 1);
                if (norm) *norm = norm2(state + (size_t)h * head, head);
            }
            float *snap = snapshot_due(e, seq, run->pos0 + end);
            if (snap) {
                float *dst = snap + (size_t)n->slot * e->rs->layer_floats +
                             (size_t)channels * (size_t)(hp->n_conv - 1);
                memcpy(dst + (size_t)lo * head, state + (size_t)lo * head,
                       (size_t)(hi - lo) * head * sizeof(float));
            }
        }
    }
}

void mint_run_norm_gated(const mint_node *n, const mint_exec *e, int node, int ith, int nth) {
    long lo, hi;
    mint_split(e->n_tokens, ith, nth, &lo, &hi);
    const int s = e->hp->ssm_s;
    mint_rms_norm_gated(e->buf[n->dst], e->stride[n->dst], e->buf[n->src], e->stride[n->src],
                        n->w->data, (int)(n->width / s), s, e->hp->rms_eps, lo, hi);
}
