// test_hybrid.c - a hybrid model's recurrent state as a cache (runtime/engine/rstate.h): the
// short convolution against a double-precision twin, and on LFM2's and Qwen3.5's tiny synthetic
// files going back (truncation restores a checkpoint and evaluates the tokens between again),
// forking, forgetting and taking a shared prefix from another sequence's snapshot all give the bits
// of a fresh context. (tests/test_arch.c holds the same file to llama.cpp's logits.)
#include "helpers/hang.h"
#include "helpers/helpers.h"
#include "mint.h"
#include "ops/ops.h"
#include "runtime/engine/rstate.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// The op against its twin

static float urand(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((*s >> 40) & 0xFFFFFF) / 16777216.0f * 2.0f - 1.0f;
}

// Rows fed in runs of 1, 3 and the rest, on split channel ranges, against the convolution of
// the whole sequence in double; the state after the last row holds its last taps - 1 inputs bx.
Test(hybrid, short_convolution_equals_its_double_twin) {
    enum { N = 48, T = 20, L = 4 };
    uint64_t seed = 7;
    float in[T][3 * N], w[N * L], y[T][N], state[(L - 1) * N];
    for (int t = 0; t < T; t++)
        for (int i = 0; i < 3 * N; i++) in[t][i] = urand(&seed);
    for (int i = 0; i < N * L; i++) w[i] = urand(&seed);
    memset(state, 0, sizeof state);
    const int runs[3][2] = {{0, 1}, {1, 4}, {4, T}};
    for (int r = 0; r < 3; r++)
        for (int part = 0; part < 2; part++) // the channels in two calls, as two threads would
            mint_shortconv(in[runs[r][0]], sizeof in[0], y[runs[r][0]], sizeof y[0],
                           runs[r][1] - runs[r][0], w, L, state, N, part ? N / 3 : 0,
                           part ? N : N / 3);
    for (int t = 0; t < T; t++)
        for (int ch = 0; ch < N; ch++) {
            double sum = 0;
            for (int k = 0; k < L; k++) {
                const int src = t - (L - 1) + k;
                if (src < 0) continue; // the zero state
                sum += (double)in[src][ch] * in[src][2 * N + ch] * w[ch * L + k];
            }
            const double want = sum * in[t][N + ch];
            // float products and L fused adds: a few ulps of the terms' size (|terms| <= 1)
            cr_assert(fabs(y[t][ch] - want) < 1e-5, "t %d ch %d: %g, twin %g", t, ch, y[t][ch],
                      want);
        }
    for (int j = 0; j < L - 1; j++)
        for (int ch = 0; ch < N; ch++) {
            const int src = T - (L - 1) + j;
            cr_assert_eq(state[j * N + ch], in[src][ch] * in[src][2 * N + ch]);
        }
}

// The checkpoint store keeps the newest and the oldest, thins the inner ones, and restores the
// latest at or before a position.
Test(hybrid, checkpoints_thin_out_and_restore) {
    mint_rstate rs;
    mint_err err;
    cr_assert_eq(mint_rs_init(&rs, 1, 1, 2, 4, 4, &err), MINT_OK);
    const int32_t pos[] = {4, 8, 9, 10, 30, 31};
    for (size_t i = 0; i < sizeof pos / sizeof *pos; i++) {
        mint_rs_layer(&rs, 0, 0)[0] = (float)pos[i];
        mint_rs_checkpoint(&rs, 0, pos[i]);
    }
    // 30 drops 9 (8 and 10 are closest around it), 31 drops 8 (4 and 10 are closest then)
    const int32_t kept[4] = {4, 10, 30, 31};
    for (int i = 0; i < 4; i++) cr_assert_eq(rs.ckpt_pos[i], kept[i], "slot %d", i);
    cr_assert_eq(mint_rs_restore(&rs, 0, 29), 10);
    cr_assert_eq(mint_rs_layer(&rs, 0, 0)[0], 10.0f);
    cr_assert_eq(rs.ckpt_pos[2], -1);            // 30 and 31 went with the positions after 29
    cr_assert_eq(mint_rs_restore(&rs, 0, 3), 0); // before every checkpoint: the zero state
    cr_assert_eq(mint_rs_layer(&rs, 0, 0)[0], 0.0f);
    mint_rs_free(&rs);
}

// ---------------------------------------------------------------------------------------------
// The state as a cache, on the tiny LFM2

// The hybrids: LFM2's short convolutions, Qwen3.5's gated delta nets.
static const char *const hybrids[] = {"lfm2", "qwen35"};

static mint_model *open_hybrid(int i) {
    static char paths[2][4096];
    char *path = paths[i];
    if (!path[0]) {
        char name[64];
        snprintf(name, sizeof name, "%s-tiny.gguf", hybrids[i]);
        snprintf(path, sizeof paths[i], "%s", mt_path(mt_tmpdir(), name));
        mint_synth_params p = {
            .preset = hybrids[i], .ftype = "F32", .seed = 3, .n_threads = 2, .shape = "tiny"};
        mint_err err;
        cr_assert_eq(mint_synth_write(&p, path, &err), MINT_OK, "%s", err.msg);
    }
    mint_model *m;
    mint_err err;
    cr_assert_eq(mint_model_open(path, NULL, &m, &err), MINT_OK, "%s", err.msg);
    return m;
}

static mint_ctx *new_ctx(mint_model *m, int n_seq, int kv_block) {
    mint_ctx_params p = mint_ctx_default_params();
    p.n_threads = 2;
    p.n_ctx = 128;
    p.n_seq_max = n_seq;
    p.n_batch = 16; // replays and prompts run in several batches
    p.kv_block = kv_block;
    mint_ctx *c;
    mint_err err;
    cr_assert_eq(mint_ctx_create(m, &p, &c, &err), MINT_OK, "%s", err.msg);
    return c;
}

enum { N_TOK = 60 };

static void tokens(int32_t *t) {
    for (int i = 0; i < N_TOK; i++) t[i] = 3 + (i * 37) % 500;
}

// A hybrid's tiny file, the test's tokens and the logits a fresh context gives after all of them.
typedef struct fixture {
    mint_model *m;    // the model
    size_t bytes;     // bytes of one row of logits
    int32_t t[N_TOK]; // the tokens
    float *want;      // [n_vocab] the fresh context's logits after t
} fixture;

static void setup(int which, fixture *f) {
    f->m = open_hybrid(which);
    mint_model_desc d;
    mint_model_describe(f->m, &d);
    f->bytes = (size_t)d.n_vocab * sizeof(float);
    tokens(f->t);
    f->want = malloc(f->bytes);
    mint_ctx *c = new_ctx(f->m, 1, 8);
    mint_err err;
    cr_assert_eq(mint_eval(c, f->t, N_TOK, 0, false, &err), MINT_OK, "%s", err.msg);
    memcpy(f->want, mint_get_logits(c, -1), f->bytes);
    mint_ctx_free(c);
}

static void teardown(fixture *f) {
    free(f->want);
    mint_model_close(f->m);
}

// Going back to any position - one a checkpoint holds, one between two, one before all - and
// evaluating the same tokens again gives the fresh context's bits; the replay is counted.
ParameterizedTestParameters(hybrid, going_back_restores_and_replays) {
    static int idx[2] = {0, 1};
    return cr_make_param_array(int, idx, 2);
}

ParameterizedTest(int *which, hybrid, going_back_restores_and_replays, .timeout = MT_HANG(60)) {
    fixture f;
    setup(*which, &f);
    const int32_t *t = f.t;
    const float *want = f.want;
    const size_t bytes = f.bytes;
    mint_ctx *c = new_ctx(f.m, 1, 8);
    mint_err err;
    // the prompt as one batch, then one token at a time: checkpoints where the batch starts
    // (the zero state) and at the block boundaries (8) the single tokens reach
    cr_assert_eq(mint_eval(c, t, 40, 0, false, &err), MINT_OK, "%s", err.msg);
    for (int i = 40; i < N_TOK; i++)
        cr_assert_eq(mint_eval(c, t + i, 1, i, false, &err), MINT_OK, "%s", err.msg);
    cr_assert(memcmp(mint_get_logits(c, -1), want, bytes) == 0);
    const int32_t back[] = {59, 45, 33, 17, 1};
    for (size_t b = 0; b < sizeof back / sizeof *back; b++) {
        cr_assert_eq(mint_seq_truncate(c, 0, back[b], &err), MINT_OK, "%s", err.msg);
        cr_assert_eq(mint_seq_n_past(c, 0), back[b]);
        cr_assert_eq(mint_eval(c, t + back[b], N_TOK - back[b], back[b], false, &err), MINT_OK,
                     "%s", err.msg);
        cr_assert(memcmp(mint_get_logits(c, -1), want, bytes) == 0, "back to %d", back[b]);
    }
    // A request that shares the first 40 tokens with what the sequence holds (mint-serve's
    // cache_prompt on the same slot): it keeps 40 and the state there.
    int32_t held = 0;
    cr_assert_eq(mint_seq_prefix(c, 0, t, 41, &held, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(held, 40);
    cr_assert_eq(mint_eval(c, t + 40, N_TOK - 40, 40, false, &err), MINT_OK, "%s", err.msg);
    cr_assert(memcmp(mint_get_logits(c, -1), want, bytes) == 0, "a prefix of its own");
    mint_cache_info ci;
    mint_ctx_cache_info(c, &ci);
    cr_assert_geq(ci.state_restores, 5);
    cr_assert_gt(ci.state_replayed, 0);
    cr_assert_gt(ci.bytes_state, 0);
    mint_ctx_free(c);
    teardown(&f);
}

// A fork carries the state; a forgotten sequence starts from the zero state; a sequence that
// takes another's blocks from the prefix cache starts from the snapshot after the last of them
// and needs no replay.
ParameterizedTestParameters(hybrid, fork_forget_and_the_prefix_cache) {
    static int idx[2] = {0, 1};
    return cr_make_param_array(int, idx, 2);
}

ParameterizedTest(int *which, hybrid, fork_forget_and_the_prefix_cache, .timeout = MT_HANG(60)) {
    fixture f;
    setup(*which, &f);
    const int32_t *t = f.t;
    const float *want = f.want;
    const size_t bytes = f.bytes;
    mint_ctx *c = new_ctx(f.m, 3, 8);
    mint_err err;
    cr_assert_eq(mint_eval(c, t, 50, 0, false, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_seq_fork(c, 0, 1, &err), MINT_OK, "%s", err.msg);
    mint_batch_entry e[N_TOK];
    for (int i = 50; i < N_TOK; i++) e[i - 50] = (mint_batch_entry){t[i], i, 1, i == N_TOK - 1};
    cr_assert_eq(mint_decode(c, e, N_TOK - 50, &err), MINT_OK, "%s", err.msg);
    cr_assert(memcmp(mint_get_logits(c, 0), want, bytes) == 0, "the fork");

    mint_cache_info before, after;
    mint_ctx_cache_info(c, &before);
    int32_t held = 0;
    cr_assert_eq(mint_seq_prefix(c, 2, t, N_TOK, &held, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(held, 56, "the last full block of 8 before the 60th token: %d", held);
    mint_ctx_cache_info(c, &after);
    cr_assert_eq(after.state_replayed, before.state_replayed, "a snapshot, not a replay");
    for (int i = held; i < N_TOK; i++) e[i - held] = (mint_batch_entry){t[i], i, 2, i == N_TOK - 1};
    cr_assert_eq(mint_decode(c, e, N_TOK - held, &err), MINT_OK, "%s", err.msg);
    cr_assert(memcmp(mint_get_logits(c, 0), want, bytes) == 0, "from the prefix cache");

    cr_assert_eq(mint_seq_forget(c, 1, &err), MINT_OK);
    cr_assert_eq(mint_eval(c, t, N_TOK, 0, false, &err), MINT_OK); // sequence 0 again, in place
    cr_assert(memcmp(mint_get_logits(c, -1), want, bytes) == 0, "sequence 0 evaluated again");
    for (int i = 0; i < N_TOK; i++) e[i] = (mint_batch_entry){t[i], i, 1, i == N_TOK - 1};
    cr_assert_eq(mint_decode(c, e, 16, &err), MINT_OK, "%s", err.msg);
    for (int i = 16; i < N_TOK; i += 16) {
        const int len = N_TOK - i < 16 ? N_TOK - i : 16;
        cr_assert_eq(mint_decode(c, e + i, len, &err), MINT_OK, "%s", err.msg);
    }
    cr_assert(memcmp(mint_get_logits(c, 0), want, bytes) == 0, "after forgetting");
    mint_ctx_free(c);
    teardown(&f);
}
