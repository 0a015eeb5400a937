// graph.c - building the forward pass as a node list from the model and its architecture's row
// (runtime/engine/arch.h), and printing it.
#include "runtime/engine/graph.h"

#include "base/error.h"
#include "ops/ops.h"
#include "quant/kernels.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *op_names[MINT_OP_COUNT] = {
    [MINT_OP_GET_ROWS] = "GET_ROWS",
    [MINT_OP_RMS_NORM] = "RMS_NORM",
    [MINT_OP_CONVERT] = "CONVERT",
    [MINT_OP_MATMUL] = "MATMUL",
    [MINT_OP_ROPE] = "ROPE",
    [MINT_OP_KV_STORE] = "KV_STORE",
    [MINT_OP_ATTENTION] = "ATTENTION",
    [MINT_OP_ADD] = "ADD",
    [MINT_OP_SILU_MUL] = "SILU_MUL",
    [MINT_OP_GATHER] = "GATHER",
    [MINT_OP_ADD_BIAS] = "ADD_BIAS",
    [MINT_OP_HEAD_NORM] = "HEAD_NORM",
    [MINT_OP_SCALE] = "SCALE",
    [MINT_OP_LAYER_NORM] = "LAYER_NORM",
    [MINT_OP_GELU] = "GELU",
    [MINT_OP_POS_ROWS] = "POS_ROWS",
    [MINT_OP_GELU_MUL] = "GELU_MUL",
    [MINT_OP_SOFTCAP] = "SOFTCAP",
    [MINT_OP_MOE_ROUTE] = "MOE_ROUTE",
    [MINT_OP_MOE_GROUP] = "MOE_GROUP",
    [MINT_OP_MOE_MATMUL] = "MOE_MATMUL",
    [MINT_OP_MOE_SUM] = "MOE_SUM",
    [MINT_OP_MOE_SHARED] = "MOE_SHARED",
    [MINT_OP_SWIGLU_OAI] = "SWIGLU_OAI",
    [MINT_OP_SHORTCONV] = "SHORTCONV",
    [MINT_OP_Q_SPLIT] = "Q_SPLIT",
    [MINT_OP_SIGMOID_GATE] = "SIGMOID_GATE",
    [MINT_OP_DELTA_GATES] = "DELTA_GATES",
    [MINT_OP_CONV1D] = "CONV1D",
    [MINT_OP_L2_NORM] = "L2_NORM",
    [MINT_OP_DELTA_NET] = "DELTA_NET",
    [MINT_OP_NORM_GATED] = "NORM_GATED",
};

static const char *buf_names[MINT_BUF_COUNT] = {
    [MINT_BUF_X] = "x",           [MINT_BUF_XB] = "xb",     [MINT_BUF_Q] = "q",
    [MINT_BUF_K] = "k",           [MINT_BUF_V] = "v",       [MINT_BUF_ATT] = "att",
    [MINT_BUF_HB] = "hb",         [MINT_BUF_HB2] = "hb2",   [MINT_BUF_TMP] = "tmp",
    [MINT_BUF_LOGITS] = "logits", [MINT_BUF_XQ] = "xq",     [MINT_BUF_ROUTE] = "route",
    [MINT_BUF_SEL] = "sel",       [MINT_BUF_EXP] = "exp",   [MINT_BUF_MIX] = "mix",
    [MINT_BUF_GATE] = "gate",     [MINT_BUF_CONV] = "conv", [MINT_BUF_ALPHA] = "alpha",
    [MINT_BUF_BETA] = "beta",     [MINT_BUF_PLE] = "ple",
};

const char *mint_op_name(mint_op op) {
    return op < MINT_OP_COUNT ? op_names[op] : "?";
}
const char *mint_buf_name(mint_buf_id b) {
    return b >= 0 && b < MINT_BUF_COUNT ? buf_names[b] : "-";
}

// ---------------------------------------------------------------------------------------------
// Builder

typedef struct builder {
    mint_graph *g;         // graph being built
    int cap;               // nodes allocated
    bool oom;              // an allocation failed
    const mint_kernels *k; // for vec_dot_type
} builder;

static mint_node *add(builder *b, mint_op op, mint_buf_id dst, mint_buf_id src, const char *fmt,
                      ...) {
    if (b->oom) return NULL;
    if (b->g->n_nodes == b->cap) {
        int cap = b->cap ? 2 * b->cap : 64;
        mint_node *n = realloc(b->g->nodes, (size_t)cap * sizeof *n);
        if (!n) {
            b->oom = true;
            return NULL;
        }
        b->g->nodes = n;
        b->cap = cap;
    }
    mint_node *n = &b->g->nodes[b->g->n_nodes++];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->dst = dst;
    n->src = src;
    n->src2 = MINT_BUF_NONE;
    n->layer = -1;
    n->slot = -1;
    n->width = dst >= 0 ? b->g->width[dst] : 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->name, sizeof n->name, fmt, ap);
    va_end(ap);
    return n;
}

// xb = norm(x) * w (or of the gathered rows in tmp): RMSNorm, or LayerNorm and its bias.
static void add_norm(builder *b, const mint_weight *w, const mint_weight *bias, bool out_only,
                     const char *name) {
    mint_node *n = add(b, bias->data ? MINT_OP_LAYER_NORM : MINT_OP_RMS_NORM, MINT_BUF_XB,
                       out_only ? MINT_BUF_TMP : MINT_BUF_X, "%s", name);
    if (n) {
        n->w = w;
        n->out_only = out_only;
    }
    if (!bias->data) return;
    n = add(b, MINT_OP_ADD_BIAS, MINT_BUF_XB, MINT_BUF_NONE, "%s_b", name);
    if (n) {
        n->w = bias;
        n->out_only = out_only;
    }
}

// dst[i] = W[i] . src for n weights sharing one input. Inputs are converted once per distinct
// vec_dot_type (F32 weights read the f32 buffer directly); matmuls are grouped by that type so
// q, k and v (or gate and up) share one conversion.
static void add_matmuls(builder *b, mint_buf_id src, int n, const mint_weight *const *w,
                        const mint_buf_id *dst, const char *const *names, bool out_only) {
    bool done[8] = {false};
    for (int i = 0; i < n; i++) {
        if (done[i]) continue;
        uint32_t vt = b->k->t[w[i]->type].vec_dot_type;
        mint_buf_id in = src;
        if (vt != MINT_TYPE_F32) {
            mint_node *c = add(b, MINT_OP_CONVERT, MINT_BUF_XQ, src, "%s.in", names[i]);
            if (!c) return;
            c->type = vt;
            // the weight's row length: a Gemma 4 window layer reads only part of att (or hb)
            c->width = w[i]->n_in < b->g->width[src] ? w[i]->n_in : b->g->width[src];
            c->out_only = out_only;
            in = MINT_BUF_XQ;
            uint64_t bytes = mint_row_size(vt, b->g->width[src]);
            if ((int64_t)bytes > b->g->width[MINT_BUF_XQ])
                b->g->width[MINT_BUF_XQ] = (int64_t)bytes;
        }
        for (int j = i; j < n; j++) {
            if (done[j] || b->k->t[w[j]->type].vec_dot_type != vt) continue;
            mint_node *m = add(b, MINT_OP_MATMUL, dst[j], in, "%s", names[j]);
            if (!m) return;
            m->w = w[j];
            m->type = vt;
            m->out_only = out_only;
            done[j] = true;
        }
    }
}

// add_matmuls for one weight: dst = W . src.
static void add_matmul(builder *b, mint_buf_id src, const mint_weight *w, mint_buf_id dst,
                       const char *name, bool out_only) {
    add_matmuls(b, src, 1, &w, &dst, &name, out_only);
}

// A node with a weight that works in place on dst (ADD_BIAS, HEAD_NORM, ROPE), if w->data.
static mint_node *add_in_place(builder *b, mint_op op, mint_buf_id dst, const mint_weight *w,
                               const char *name) {
    if (op != MINT_OP_ROPE && !w->data) return NULL;
    mint_node *n = add(b, op, dst, MINT_BUF_NONE, "%s", name);
    if (n) n->w = w->data ? w : NULL;
    return n;
}

// dst = rmsnorm(dst) * w in place, when the layer has w (Gemma's norms after attention and
// feed-forward, before their residual adds).
static void add_post_norm(builder *b, mint_buf_id dst, const mint_weight *w, const char *name) {
    if (!w->data) return;
    mint_node *n = add(b, MINT_OP_RMS_NORM, dst, dst, "%s", name);
    if (n) n->w = w;
}

// The converted input of a node reading the first `width` elements of src for weights of
// vec_dot_type vt: src itself for F32, else a CONVERT into xq (grown to fit).
static mint_buf_id add_convert(builder *b, mint_buf_id src, int64_t width, uint32_t vt,
                               const char *name) {
    if (vt == MINT_TYPE_F32) return src;
    mint_node *c = add(b, MINT_OP_CONVERT, MINT_BUF_XQ, src, "%s.in", name);
    if (!c) return MINT_BUF_NONE;
    c->type = vt;
    c->width = width;
    uint64_t bytes = mint_row_size(vt, width);
    if ((int64_t)bytes > b->g->width[MINT_BUF_XQ]) b->g->width[MINT_BUF_XQ] = (int64_t)bytes;
    return MINT_BUF_XQ;
}

// The mixture of experts of one layer on xb, into tmp (graph.h lists the nodes). The experts'
// matrices of one vec_dot_type share a conversion of xb (gate and up; the three stacks have
// one type in llama.cpp's files, else each converts its own); the down projections read hb
// converted, part j of a row for slot j.
static void add_moe(builder *b, const mint_hparams *hp, const mint_layer *L, const mint_arch *a,
                    int l) {
    mint_node *n;
    char nm[32];
    const int64_t hidden = (int64_t)hp->n_expert_used * hp->n_ff_exp; // k experts' hidden rows
    snprintf(nm, sizeof nm, "blk.%d.ffn_router", l);
    add_matmul(b, MINT_BUF_XB, &L->router, MINT_BUF_ROUTE, nm, false);
    snprintf(nm, sizeof nm, "blk.%d.ffn_router_b", l);
    add_in_place(b, MINT_OP_ADD_BIAS, MINT_BUF_ROUTE, &L->router_b, nm); // gpt-oss
    n = add(b, MINT_OP_MOE_ROUTE, MINT_BUF_SEL, MINT_BUF_ROUTE, "blk.%d.ffn_route", l);
    if (n) {
        n->type = a->moe_gating == MINT_MOE_SOFTMAX_TOPK ? MINT_MOE_TOPK_SOFTMAX
                  : a->moe_norm_weights                  ? MINT_MOE_PROBS_NORM
                                                         : MINT_MOE_PROBS;
        n->layer = l; // for the routing capture
    }
    add(b, MINT_OP_MOE_GROUP, MINT_BUF_NONE, MINT_BUF_SEL, "blk.%d.ffn_group", l);
    const mint_weight *gu[2] = {&L->gate_exps, &L->up_exps};
    const mint_weight *gu_b[2] = {&L->gate_exps_b, &L->up_exps_b};
    const mint_buf_id gu_dst[2] = {MINT_BUF_HB, MINT_BUF_HB2};
    const char *gu_name[2] = {"ffn_gate_exps", "ffn_up_exps"};
    for (int i = 0; i < 2; i++) {
        const uint32_t vt = b->k->t[gu[i]->type].vec_dot_type;
        snprintf(nm, sizeof nm, "blk.%d.%s", l, gu_name[i]);
        const bool shared = i == 1 && b->k->t[gu[0]->type].vec_dot_type == vt;
        const mint_buf_id in = shared ? (vt == MINT_TYPE_F32 ? MINT_BUF_XB : MINT_BUF_XQ)
                                      : add_convert(b, MINT_BUF_XB, hp->n_embd, vt, nm);
        n = add(b, MINT_OP_MOE_MATMUL, gu_dst[i], in, "%s", nm);
        if (n) {
            n->w = gu[i];
            n->type = vt;
            n->bias = gu_b[i]->data ? gu_b[i] : NULL;
        }
    }
    n = add(b, a->moe_act == MINT_MOE_SWIGLU_OAI ? MINT_OP_SWIGLU_OAI : MINT_OP_SILU_MUL,
            MINT_BUF_HB, MINT_BUF_HB2, "blk.%d.ffn_act", l);
    if (n) n->width = hidden;
    snprintf(nm, sizeof nm, "blk.%d.ffn_down_exps", l);
    const uint32_t vt = b->k->t[L->down_exps.type].vec_dot_type;
    n = add(b, MINT_OP_MOE_MATMUL, MINT_BUF_EXP, add_convert(b, MINT_BUF_HB, hidden, vt, nm), "%s",
            nm);
    if (n) {
        n->w = &L->down_exps;
        n->type = vt;
        n->per_slot = true;
        n->bias = L->down_exps_b.data ? &L->down_exps_b : NULL;
    }
    n = add(b, MINT_OP_MOE_SUM, MINT_BUF_TMP, MINT_BUF_EXP, "blk.%d.ffn_moe_sum", l);
    if (n) n->src2 = MINT_BUF_SEL;
    if (!L->gate_shexp.data) return;
    // The shared expert (Qwen2-MoE): a dense SwiGLU of n_ff_shexp into exp's first n_embd, its
    // gate's logit (a dot with a vector) into route, then tmp += exp * sigmoid(logit).
    char g[48], u[48], d[48], gi[48]; // (node names keep 31 bytes: "blk.47.ffn_gate_inp_shexp")
    snprintf(g, sizeof g, "blk.%d.ffn_gate_shexp", l);
    snprintf(u, sizeof u, "blk.%d.ffn_up_shexp", l);
    snprintf(d, sizeof d, "blk.%d.ffn_down_shexp", l);
    snprintf(gi, sizeof gi, "blk.%d.ffn_gate_inp_shexp", l);
    const mint_weight *sgu[2] = {&L->gate_shexp, &L->up_shexp};
    const mint_buf_id sgu_dst[2] = {MINT_BUF_HB, MINT_BUF_HB2};
    const char *sgu_name[2] = {g, u};
    add_matmuls(b, MINT_BUF_XB, 2, sgu, sgu_dst, sgu_name, false);
    n = add(b, MINT_OP_SILU_MUL, MINT_BUF_HB, MINT_BUF_HB2, "blk.%d.ffn_shexp_act", l);
    if (n) n->width = hp->n_ff_shexp;
    add_matmul(b, MINT_BUF_HB, &L->down_shexp, MINT_BUF_EXP, d, false);
    add_matmul(b, MINT_BUF_XB, &L->shexp_gate_inp, MINT_BUF_ROUTE, gi, false);
    n = add(b, MINT_OP_MOE_SHARED, MINT_BUF_TMP, MINT_BUF_EXP, "blk.%d.ffn_shexp_add", l);
    if (n) {
        n->src2 = MINT_BUF_ROUTE;
        n->width = hp->n_embd;
    }
}

// Whether node b may run while a is still running on other threads: two matmuls of one input
// into different outputs, or two in-place ops of one kind on different buffers (RoPE, bias
// adds, head norms).
static bool independent(const mint_node *a, const mint_node *b) {
    if (a->op == MINT_OP_MOE_MATMUL && b->op == MINT_OP_MOE_MATMUL)
        return a->src == b->src && a->dst != b->dst && !a->per_slot && !b->per_slot;
    if (a->op == MINT_OP_MATMUL && b->op == MINT_OP_MATMUL)
        return a->src == b->src && a->dst != b->dst && a->dst != a->src && b->dst != b->src &&
               a->out_only == b->out_only;
    if (a->op == b->op &&
        (a->op == MINT_OP_ROPE || a->op == MINT_OP_ADD_BIAS || a->op == MINT_OP_HEAD_NORM))
        return a->dst != b->dst;
    return false;
}

// Layer l's attention, from its q/k/v projections to its output projection in tmp, in the
// layer's head size; a layer reading an earlier layer's cache (Gemma 4) projects only q.
static void add_attention(builder *b, const mint_model *m, int l, const mint_weight *rope_factors) {
    static const mint_weight none = {0};
    const mint_hparams *hp = &m->hp;
    const mint_layer *L = &m->layers[l];
    const int64_t hd = L->head_dim, q_dim = hp->n_head * hd, kv_dim = hp->n_head_kv * hd;
    const bool own_kv = !L->kv_shared;
    char nm[5][32];
    mint_node *n;
    snprintf(nm[0], 32, "blk.%d.attn_q", l);
    snprintf(nm[1], 32, "blk.%d.attn_k", l);
    snprintf(nm[2], 32, "blk.%d.attn_v", l);
    // (a Gemma 4 layer without attn_v: its k again, as bound, whose packed rows repack.c made)
    const mint_weight *wv = L->wv.data && L->wv.data == L->wk.data ? &L->wk : &L->wv;
    const mint_weight *qkv[3] = {&L->wq, &L->wk, wv};
    const bool q_gate = m->desc->q_gate; // Qwen3.5: queries and their gates, split below
    const mint_buf_id qkv_dst[3] = {q_gate ? MINT_BUF_MIX : MINT_BUF_Q, MINT_BUF_K, MINT_BUF_V};
    const char *qkv_names[3] = {nm[0], nm[1], nm[2]};
    add_matmuls(b, MINT_BUF_XB, own_kv ? 3 : 1, qkv, qkv_dst, qkv_names, false);
    if (q_gate) {
        n = add(b, MINT_OP_Q_SPLIT, MINT_BUF_Q, MINT_BUF_MIX, "blk.%d.q_split", l);
        if (n) {
            n->src2 = MINT_BUF_GATE;
            n->width = q_dim;
        }
    }
    // What the architecture adds between the projections and RoPE: biases, per-head norms.
    static const char *const extra[6] = {"q_bias", "k_bias", "v_bias",
                                         "q_norm", "k_norm", "v_norm"};
    const mint_weight *ew[6] = {&L->bq, &L->bk, &L->bv, &L->q_norm, &L->k_norm, &L->v_norm};
    const mint_op eop[6] = {MINT_OP_ADD_BIAS,  MINT_OP_ADD_BIAS,  MINT_OP_ADD_BIAS,
                            MINT_OP_HEAD_NORM, MINT_OP_HEAD_NORM, MINT_OP_HEAD_NORM};
    const mint_buf_id edst[6] = {MINT_BUF_Q, MINT_BUF_K, MINT_BUF_V,
                                 MINT_BUF_Q, MINT_BUF_K, MINT_BUF_V};
    for (int i = 0; i < 6; i++) {
        if (!own_kv && edst[i] != MINT_BUF_Q) continue;
        snprintf(nm[4], 32, "blk.%d.%s", l, extra[i]);
        n = add_in_place(b, eop[i], edst[i], ew[i], nm[4]);
        if (n) n->width = edst[i] == MINT_BUF_Q ? q_dim : kv_dim;
    }
    if (m->desc->pos != MINT_POS_LEARNED) {
        // Gemma 4's rope_freqs turn only its full layers
        const mint_weight *ff =
            m->desc->layer_shapes && mint_layer_windowed(hp, l) ? &none : rope_factors;
        for (int i = 0; i < (own_kv ? 2 : 1); i++) {
            snprintf(nm[4], 32, "blk.%d.rope_%c", l, i ? 'k' : 'q');
            n = add_in_place(b, MINT_OP_ROPE, i ? MINT_BUF_K : MINT_BUF_Q, ff, nm[4]);
            if (n) {
                n->layer = l; // Gemma's window layers have their own base
                n->head_dim = (int32_t)hd;
                n->width = i ? kv_dim : q_dim;
            }
        }
    }
    if (hp->q_scale != 1.0f) {
        n = add(b, MINT_OP_SCALE, MINT_BUF_Q, MINT_BUF_NONE, "blk.%d.q_scale", l);
        if (n) n->scale = hp->q_scale;
    }
    n = own_kv ? add(b, MINT_OP_KV_STORE, MINT_BUF_NONE, MINT_BUF_K, "blk.%d.kv_store", l) : NULL;
    if (n) {
        n->src2 = MINT_BUF_V;
        n->layer = l;
        n->slot = L->kv_slot;
        n->width = kv_dim;
    }
    n = add(b, MINT_OP_ATTENTION, MINT_BUF_ATT, MINT_BUF_Q, "blk.%d.attn", l);
    if (n) {
        n->layer = l;
        n->slot = L->kv_slot;
        n->head_dim = (int32_t)hd;
        n->width = q_dim;
        n->w = L->attn_sinks.data ? &L->attn_sinks : NULL; // gpt-oss's sink logits
    }
    if (q_gate) {
        n = add(b, MINT_OP_SIGMOID_GATE, MINT_BUF_ATT, MINT_BUF_GATE, "blk.%d.attn_gate", l);
        if (n) n->width = (int64_t)hp->n_head * hp->head_dim;
    }
    snprintf(nm[3], 32, "blk.%d.attn_output", l);
    add_matmul(b, MINT_BUF_ATT, &L->wo, MINT_BUF_TMP, nm[3], false);
    snprintf(nm[4], 32, "blk.%d.out_bias", l);
    add_in_place(b, MINT_OP_ADD_BIAS, MINT_BUF_TMP, &L->bo, nm[4]);
    snprintf(nm[4], 32, "blk.%d.attn_post_norm", l);
    add_post_norm(b, MINT_BUF_TMP, &L->attn_post_norm, nm[4]);
}

// Gemma 4's per-layer inputs of every row, once before the first layer (graph.h lists the nodes).
static void add_ple_inputs(builder *b, const mint_model *m) {
    const mint_hparams *hp = &m->hp;
    const int64_t all = (int64_t)hp->n_ple * hp->n_layer;
    mint_node *n = add(b, MINT_OP_GET_ROWS, MINT_BUF_PLE, MINT_BUF_NONE, "per_layer_token_embd");
    if (n) n->w = &m->ple_embd;
    n = add(b, MINT_OP_SCALE, MINT_BUF_PLE, MINT_BUF_NONE, "ple_token_scale");
    if (n) n->scale = sqrtf((float)hp->n_ple);
    add_matmul(b, MINT_BUF_X, &m->ple_model, MINT_BUF_HB, "per_layer_model_proj", false);
    n = add(b, MINT_OP_SCALE, MINT_BUF_HB, MINT_BUF_NONE, "ple_proj_scale");
    if (n) {
        n->scale = 1.0f / sqrtf((float)hp->n_embd);
        n->width = all;
    }
    n = add_in_place(b, MINT_OP_HEAD_NORM, MINT_BUF_HB, &m->ple_norm, "per_layer_proj_norm");
    if (n) n->width = all;
    add(b, MINT_OP_ADD, MINT_BUF_PLE, MINT_BUF_HB, "ple_add");
    n = add(b, MINT_OP_SCALE, MINT_BUF_PLE, MINT_BUF_NONE, "ple_scale");
    if (n) n->scale = 1.0f / sqrtf(2.0f);
}

// Layer l's own input gated into x (Gemma 4), then its output's factor.
static void add_ple_layer(builder *b, const mint_model *m, int l) {
    const mint_layer *L = &m->layers[l];
    char nm[32];
    mint_node *n;
    if (L->ple_gate.data) {
        snprintf(nm, sizeof nm, "blk.%d.inp_gate", l);
        add_matmul(b, MINT_BUF_X, &L->ple_gate, MINT_BUF_HB, nm, false);
        n = add(b, MINT_OP_GELU_MUL, MINT_BUF_HB, MINT_BUF_PLE, "blk.%d.ple_act", l);
        if (n) {
            n->width = m->hp.n_ple;
            n->src_at = (int64_t)l * m->hp.n_ple;
        }
        snprintf(nm, sizeof nm, "blk.%d.proj", l);
        add_matmul(b, MINT_BUF_HB, &L->ple_proj, MINT_BUF_TMP, nm, false);
        snprintf(nm, sizeof nm, "blk.%d.ple_post_norm", l);
        add_post_norm(b, MINT_BUF_TMP, &L->ple_norm, nm);
        add(b, MINT_OP_ADD, MINT_BUF_X, MINT_BUF_TMP, "blk.%d.ple_res", l);
    }
    if (L->out_scale.data) {
        n = add(b, MINT_OP_SCALE, MINT_BUF_X, MINT_BUF_NONE, "blk.%d.out_scale", l);
        if (n) n->scale = *(const float *)L->out_scale.data;
    }
}

// Layer l's short convolution (LFM2): b, c and x from one projection, c * conv(b * x) with the
// sequence's state, the output projection into tmp.
static void add_shortconv(builder *b, const mint_layer *L, int l) {
    char nm[32];
    snprintf(nm, sizeof nm, "blk.%d.conv_in", l);
    add_matmul(b, MINT_BUF_XB, &L->conv_in, MINT_BUF_MIX, nm, false);
    mint_node *n = add(b, MINT_OP_SHORTCONV, MINT_BUF_ATT, MINT_BUF_MIX, "blk.%d.shortconv", l);
    if (n) {
        n->w = &L->conv;
        n->layer = l;
        n->slot = L->rs_slot;
        n->width = L->conv_out.n_in; // n_embd channels
    }
    snprintf(nm, sizeof nm, "blk.%d.conv_out", l);
    add_matmul(b, MINT_BUF_ATT, &L->conv_out, MINT_BUF_TMP, nm, false);
}

// Layer l's gated delta net (Qwen3.5): the four projections of xb, the gates, the convolution,
// the L2 norms, the delta rule, the gated norm, the output projection into tmp.
static void add_delta_net(builder *b, const mint_hparams *hp, const mint_layer *L, int l) {
    char nm[4][32];
    snprintf(nm[0], 32, "blk.%d.ssm_qkv", l);
    snprintf(nm[1], 32, "blk.%d.ssm_z", l);
    snprintf(nm[2], 32, "blk.%d.ssm_beta", l);
    snprintf(nm[3], 32, "blk.%d.ssm_alpha", l);
    const mint_weight *w[4] = {&L->ssm_qkv, &L->ssm_z, &L->ssm_beta, &L->ssm_alpha};
    const mint_buf_id dst[4] = {MINT_BUF_MIX, MINT_BUF_GATE, MINT_BUF_BETA, MINT_BUF_ALPHA};
    const char *names[4] = {nm[0], nm[1], nm[2], nm[3]};
    add_matmuls(b, MINT_BUF_XB, 4, w, dst, names, false);
    const int64_t s = hp->ssm_s, vh = hp->ssm_v_heads, kh = hp->ssm_k_heads;
    mint_node *n =
        add(b, MINT_OP_DELTA_GATES, MINT_BUF_ALPHA, MINT_BUF_BETA, "blk.%d.ssm_gates", l);
    if (n) {
        n->w = &L->ssm_dt;
        n->bias = &L->ssm_a;
        n->width = vh;
    }
    n = add(b, MINT_OP_CONV1D, MINT_BUF_CONV, MINT_BUF_MIX, "blk.%d.ssm_conv", l);
    if (n) {
        n->w = &L->ssm_conv;
        n->layer = l;
        n->slot = L->rs_slot;
        n->width = (2 * kh + vh) * s;
    }
    n = add(b, MINT_OP_L2_NORM, MINT_BUF_CONV, MINT_BUF_NONE, "blk.%d.ssm_l2", l);
    if (n) n->width = 2 * kh * s;
    n = add(b, MINT_OP_DELTA_NET, MINT_BUF_ATT, MINT_BUF_CONV, "blk.%d.ssm_delta", l);
    if (n) {
        n->src2 = MINT_BUF_ALPHA;
        n->layer = l;
        n->slot = L->rs_slot;
        n->width = vh * s;
    }
    n = add(b, MINT_OP_NORM_GATED, MINT_BUF_ATT, MINT_BUF_GATE, "blk.%d.ssm_norm", l);
    if (n) {
        n->w = &L->ssm_norm;
        n->width = vh * s;
    }
    snprintf(nm[0], 32, "blk.%d.ssm_out", l);
    add_matmul(b, MINT_BUF_ATT, &L->ssm_out, MINT_BUF_TMP, nm[0], false);
}

mint_status mint_graph_build(const mint_model *m, const mint_kernels *k, int32_t n_ctx,
                             mint_graph *g, mint_err *err) {
    memset(g, 0, sizeof *g);
    const mint_hparams *hp = &m->hp;
    int64_t q_dim = (int64_t)hp->n_head * hp->head_dim,
            kv_dim = (int64_t)hp->n_head_kv * hp->head_dim;
    g->width[MINT_BUF_X] = hp->n_embd;
    g->width[MINT_BUF_XB] = hp->n_embd;
    g->width[MINT_BUF_Q] = q_dim;
    g->width[MINT_BUF_K] = kv_dim;
    g->width[MINT_BUF_V] = kv_dim;
    g->width[MINT_BUF_ATT] = q_dim;
    g->width[MINT_BUF_HB] = hp->n_ff;
    g->width[MINT_BUF_HB2] = hp->n_ff;
    g->width[MINT_BUF_TMP] = hp->n_embd;
    g->width[MINT_BUF_LOGITS] = hp->n_vocab;
    g->width[MINT_BUF_XQ] = 0; // grown by add_matmuls
    if (hp->n_ple > 0) {       // Gemma 4's per-layer inputs, and their projection in hb
        g->width[MINT_BUF_PLE] = (int64_t)hp->n_ple * hp->n_layer;
        if (g->width[MINT_BUF_PLE] > g->width[MINT_BUF_HB])
            g->width[MINT_BUF_HB] = g->width[MINT_BUF_PLE];
    }
    if (hp->n_layer_rs > 0 && hp->ssm_s == 0) { // LFM2's convolution: b, c, x; its output in att
        g->width[MINT_BUF_MIX] = 3 * (int64_t)hp->n_embd;
        if (hp->n_embd > q_dim) g->width[MINT_BUF_ATT] = hp->n_embd;
    }
    if (hp->ssm_s > 0) { // a delta net: q, k, v before and after the convolution, z, the gates
        const int64_t v_dim = (int64_t)hp->ssm_v_heads * hp->ssm_s;
        const int64_t conv = 2 * (int64_t)hp->ssm_k_heads * hp->ssm_s + v_dim;
        g->width[MINT_BUF_MIX] = conv;
        g->width[MINT_BUF_CONV] = conv;
        g->width[MINT_BUF_GATE] = v_dim;
        g->width[MINT_BUF_ALPHA] = g->width[MINT_BUF_BETA] = hp->ssm_v_heads;
        if (v_dim > g->width[MINT_BUF_ATT]) g->width[MINT_BUF_ATT] = v_dim;
    }
    if (m->desc->q_gate) { // queries with their gates, then the gates alone
        if (2 * q_dim > g->width[MINT_BUF_MIX]) g->width[MINT_BUF_MIX] = 2 * q_dim;
        if (q_dim > g->width[MINT_BUF_GATE]) g->width[MINT_BUF_GATE] = q_dim;
    }
    if (m->desc->ffn == MINT_FFN_MOE) { // a mixture's buffers, its hidden rows k experts wide
        const int64_t kk = hp->n_expert_used;
        if (kk * hp->n_ff_exp > g->width[MINT_BUF_HB])
            g->width[MINT_BUF_HB] = g->width[MINT_BUF_HB2] = kk * hp->n_ff_exp;
        if (hp->n_ff_shexp > g->width[MINT_BUF_HB]) // the shared expert's hidden row
            g->width[MINT_BUF_HB] = g->width[MINT_BUF_HB2] = hp->n_ff_shexp;
        g->width[MINT_BUF_ROUTE] = hp->n_expert;
        g->width[MINT_BUF_SEL] = 2 * kk;
        g->width[MINT_BUF_EXP] = kk * hp->n_embd;
        // Slot j's converted hidden row starts at j times the row size of n_ff_exp elements:
        // only when no block straddles two experts.
        for (int l = 0; l < hp->n_layer; l++) {
            const uint32_t vt = k->t[m->layers[l].down_exps.type].vec_dot_type;
            if (hp->n_ff_exp % (int64_t)mint_type_get(vt)->blck != 0)
                return mint_fail(err, MINT_E_UNSUPPORTED,
                                 "blk.%d.ffn_down_exps: an expert's width %d is not a multiple "
                                 "of %s's block of %u",
                                 l, hp->n_ff_exp, mint_type_name(vt),
                                 (unsigned)mint_type_get(vt)->blck);
        }
    }
    builder b = {g, 0, false, k};
    const mint_weight *rope_factors = mint_model_rope_factors(m, n_ctx);

    mint_node *n = add(&b, MINT_OP_GET_ROWS, MINT_BUF_X, MINT_BUF_NONE, "token_embd");
    if (n) n->w = &m->tok_embd;
    if (hp->embd_scale != 1.0f) { // Gemma: x * sqrt(n_embd)
        n = add(&b, MINT_OP_SCALE, MINT_BUF_X, MINT_BUF_NONE, "embd_scale");
        if (n) n->scale = hp->embd_scale;
    }
    if (m->ple_embd.data) add_ple_inputs(&b, m);
    if (m->desc->pos == MINT_POS_LEARNED) { // x += the row of each token's position
        n = add(&b, MINT_OP_POS_ROWS, MINT_BUF_TMP, MINT_BUF_NONE, "position_embd");
        if (n) n->w = &m->pos_embd;
        add(&b, MINT_OP_ADD, MINT_BUF_X, MINT_BUF_TMP, "pos_add");
    }
    for (int l = 0; l < hp->n_layer && !b.oom; l++) {
        const mint_layer *L = &m->layers[l];
        char nm[5][32];
        add_norm(&b, &L->attn_norm, &L->attn_norm_b, false,
                 (snprintf(nm[0], 32, "blk.%d.attn_norm", l), nm[0]));
        if (L->mixer == MINT_MIXER_ATTENTION)
            add_attention(&b, m, l, rope_factors);
        else if (L->mixer == MINT_MIXER_SHORTCONV)
            add_shortconv(&b, L, l);
        else
            add_delta_net(&b, hp, L, l);
        add(&b, MINT_OP_ADD, MINT_BUF_X, MINT_BUF_TMP, "blk.%d.attn_res", l);

        snprintf(nm[4], 32, "blk.%d.ffn_norm", l);
        add_norm(&b, &L->ffn_norm, &L->ffn_norm_b, false, nm[4]);
        if (m->desc->ffn == MINT_FFN_MOE) {
            add_moe(&b, hp, L, m->desc, l);
            add(&b, MINT_OP_ADD, MINT_BUF_X, MINT_BUF_TMP, "blk.%d.ffn_res", l);
            continue;
        }
        if (m->desc->ffn == MINT_FFN_GELU) { // up (+ bias), GELU, down (+ bias)
            snprintf(nm[0], 32, "blk.%d.ffn_up", l);
            add_matmul(&b, MINT_BUF_XB, &L->w_up, MINT_BUF_HB, nm[0], false);
            snprintf(nm[1], 32, "blk.%d.ffn_up_b", l);
            add_in_place(&b, MINT_OP_ADD_BIAS, MINT_BUF_HB, &L->b_up, nm[1]);
            add(&b, MINT_OP_GELU, MINT_BUF_HB, MINT_BUF_NONE, "blk.%d.ffn_act", l);
        } else {
            snprintf(nm[0], 32, "blk.%d.ffn_gate", l);
            snprintf(nm[1], 32, "blk.%d.ffn_up", l);
            const mint_weight *gu[2] = {&L->w_gate, &L->w_up};
            const mint_buf_id gu_dst[2] = {MINT_BUF_HB, MINT_BUF_HB2};
            const char *gu_names[2] = {nm[0], nm[1]};
            add_matmuls(&b, MINT_BUF_XB, 2, gu, gu_dst, gu_names, false);
            n = add(&b, m->desc->ffn == MINT_FFN_GEGLU ? MINT_OP_GELU_MUL : MINT_OP_SILU_MUL,
                    MINT_BUF_HB, MINT_BUF_HB2, "blk.%d.ffn_act", l);
            if (n) n->width = L->n_ff; // Gemma 4's vary by layer
        }
        snprintf(nm[2], 32, "blk.%d.ffn_down", l);
        add_matmul(&b, MINT_BUF_HB, &L->w_down, MINT_BUF_TMP, nm[2], false);
        snprintf(nm[3], 32, "blk.%d.ffn_down_b", l);
        add_in_place(&b, MINT_OP_ADD_BIAS, MINT_BUF_TMP, &L->b_down, nm[3]);
        snprintf(nm[3], 32, "blk.%d.ffn_post_norm", l);
        add_post_norm(&b, MINT_BUF_TMP, &L->ffn_post_norm, nm[3]);
        add(&b, MINT_OP_ADD, MINT_BUF_X, MINT_BUF_TMP, "blk.%d.ffn_res", l);
        add_ple_layer(&b, m, l);
    }
    // Only the rows whose logits are wanted go through the final norm and the output head.
    n = add(&b, MINT_OP_GATHER, MINT_BUF_TMP, MINT_BUF_X, "out_rows");
    if (n) n->out_only = true;
    add_norm(&b, &m->output_norm, &m->output_norm_b, true, "output_norm");
    add_matmul(&b, MINT_BUF_XB, &m->output, MINT_BUF_LOGITS, "output", true);
    if (hp->final_softcap != 0.0f) { // Gemma 2: logits = c tanh(logits / c)
        n = add(&b, MINT_OP_SOFTCAP, MINT_BUF_LOGITS, MINT_BUF_NONE, "final_softcap");
        if (n) {
            n->scale = hp->final_softcap;
            n->out_only = true;
        }
    }
    if (b.oom) {
        mint_graph_free(g);
        return mint_fail(err, MINT_E_NOMEM, "out of memory building the graph");
    }
    for (int i = 0; i + 1 < g->n_nodes; i++)
        g->nodes[i].no_barrier = independent(&g->nodes[i], &g->nodes[i + 1]);
    return MINT_OK;
}

void mint_graph_free(mint_graph *g) {
    free(g->nodes);
    memset(g, 0, sizeof *g);
}

char *mint_graph_describe(const mint_graph *g, const mint_model *m) {
    size_t cap = 1280 + 8192 + (size_t)g->n_nodes * 128, len = 0;
    char *s = malloc(cap);
    if (!s) return NULL;
#define OUT(...)                                                                                   \
    do {                                                                                           \
        if (len < cap) len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__);                   \
    } while (0)
    char arch[1024];
    mint_arch_describe(m->desc, arch, sizeof arch);
    OUT("# %s\n", arch);
    // The metadata keys the row reads (runtime/engine/arch_keys.c), a line each.
    char *keys = malloc(8192);
    if (keys) {
        mint_arch_describe_keys(m->desc, keys, 8192);
        OUT("# metadata keys:\n");
        for (char *line = keys, *nl; *line; line = nl + 1) {
            if (!(nl = strchr(line, '\n'))) break;
            OUT("#%.*s\n", (int)(nl - line), line);
        }
        free(keys);
    }
    OUT("# %d nodes; rows are tokens of the batch; [width] per row\n", g->n_nodes);
    for (int i = 0; i < g->n_nodes; i++) {
        const mint_node *n = &g->nodes[i];
        char in[64] = "", wt[80] = "";
        if (n->src >= 0 && n->src2 >= 0)
            snprintf(in, sizeof in, "%s, %s", mint_buf_name(n->src), mint_buf_name(n->src2));
        else if (n->src >= 0)
            snprintf(in, sizeof in, "%s", mint_buf_name(n->src));
        else if (n->op == MINT_OP_GET_ROWS)
            snprintf(in, sizeof in, "ids");
        if (n->w)
            snprintf(wt, sizeof wt, "  W %s [%" PRId64 ", %" PRId64 "]", mint_type_name(n->w->type),
                     n->w->n_in, n->w->n_out);
        const char *dst = n->op == MINT_OP_KV_STORE ? "kv_cache" : mint_buf_name(n->dst);
        char type[96] = "";
        if (n->op == MINT_OP_CONVERT || n->op == MINT_OP_MATMUL)
            snprintf(type, sizeof type, "  (act %s)", mint_type_name(n->type));
        if (n->op == MINT_OP_ROPE) { // which pairs turn, with which factors and scale
            const char *ff = !n->w                    ? ""
                             : n->w == &m->rope_long  ? ", LongRoPE long factors"
                             : n->w == &m->rope_short ? ", LongRoPE short factors"
                                                      : ", rope_freqs factors";
            char ms[48] = "";
            if (m->hp.rope_ext_factor != 0.0f) // ops/rope.c multiplies in its own 1 + 0.1 ln s
                snprintf(ms, sizeof ms, ", YaRN x %g, cos/sin x %.4g",
                         1.0 / (double)m->hp.rope_freq_scale,
                         m->hp.rope_mscale * (1.0f + 0.1f * logf(1.0f / m->hp.rope_freq_scale)));
            else if (m->hp.rope_mscale != 1.0f)
                snprintf(ms, sizeof ms, ", cos/sin x %.4g", m->hp.rope_mscale);
            snprintf(type, sizeof type, "  (%s pairs%s%s)", m->hp.rope_neox ? "NEOX" : "NORMAL", ff,
                     ms);
        }
        OUT("%4d  %-9s %-20s %s -> %s [%" PRId64 "]%s%s%s%s\n", i, mint_op_name(n->op), n->name, in,
            dst, n->width, wt, type, n->out_only ? "  (wanted rows only)" : "",
            n->no_barrier ? "  (no barrier)" : "");
    }
#undef OUT
    return s;
}
