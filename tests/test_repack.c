// test_repack.c - background repacking (runtime/engine/repack.c) against the file's layout: a
// model whose matrices were repacked gives the same logits, bit for bit, as the same file opened
// with no_repack, for a prompt evaluated as one batch and token by token, with 1 and 2 threads,
// and so does one evaluated while the packing is still going on.
#include "helpers/helpers.h"
#include "quant/kernels.h"
#include "quant/pack.h"
#include "runtime/engine/model.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

enum { N_PROMPT = 9, N_STEPS = 3 };

// Logits of a fixed program: N_PROMPT tokens in one batch (every row kept), then N_STEPS single
// tokens. Returns a malloc'd array of (N_PROMPT + N_STEPS) rows.
static float *program(mint_model *m, int n_threads) {
    mint_model_desc d;
    mint_model_describe(m, &d);
    mint_ctx_params p = mint_ctx_default_params();
    p.n_threads = n_threads;
    p.n_ctx = 32;
    mint_ctx *c;
    mint_err err;
    cr_assert_eq(mint_ctx_create(m, &p, &c, &err), MINT_OK, "%s", err.msg);
    const size_t row = (size_t)d.n_vocab;
    float *out = malloc((N_PROMPT + N_STEPS) * row * sizeof *out);
    const int32_t prompt[N_PROMPT] = {1, 40, 77, 261, 378, 432, 383, 286, 261};
    cr_assert_eq(mint_eval(c, prompt, N_PROMPT, 0, true, &err), MINT_OK, "%s", err.msg);
    for (int i = 0; i < N_PROMPT; i++)
        memcpy(out + i * row, mint_get_logits(c, i), row * sizeof *out);
    for (int s = 0; s < N_STEPS; s++) {
        const int32_t tok = 100 + 37 * s;
        cr_assert_eq(mint_eval(c, &tok, 1, N_PROMPT + s, false, &err), MINT_OK, "%s", err.msg);
        memcpy(out + (N_PROMPT + s) * row, mint_get_logits(c, 0), row * sizeof *out);
    }
    mint_ctx_free(c);
    return out;
}

static void check_type(const char *ftype) {
    const char *path = mt_synth("small", ftype);
    mint_model *plain, *packed;
    mint_err err;
    const mint_model_params no = {.no_repack = true};
    cr_assert_eq(mint_model_open(path, &no, &plain, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_model_open(path, NULL, &packed, &err), MINT_OK, "%s", err.msg);
    mint_model_repack_wait(packed);
    cr_assert_eq(plain->packed_bytes, 0);
    // Packed exactly when the start-up level reads a matrix type packed; moved (copied in the
    // file's layout to anonymous memory) otherwise, since the file is mapped. Never both.
    const mint_kernels *k = mint_kernels_get();
    const mint_layer *L = &packed->layers[0], *P = &plain->layers[0];
    const mint_weight *ws[] = {&L->wq, &L->wk, &L->wv, &L->wo, &L->w_gate, &L->w_up, &L->w_down};
    const mint_weight *ps[] = {&P->wq, &P->wk, &P->wv, &P->wo, &P->w_gate, &P->w_up, &P->w_down};
    for (size_t i = 0; i < sizeof ws / sizeof *ws; i++) {
        const mint_weight *w = ws[i];
        const bool expect =
            k->t[w->type].gemm_packed && mint_pack_group_bytes((mint_type)w->type, w->n_in) > 0;
        cr_assert_eq(w->packed != NULL, expect, "%s: %s packed %d", ftype, w->name, !!w->packed);
        cr_assert_eq(w->moved != NULL, !expect, "%s: %s moved %d", ftype, w->name, !!w->moved);
        if (w->moved) cr_assert_eq(memcmp(w->moved, w->data, w->n_out * w->row_bytes), 0);
        cr_assert_null(ps[i]->packed, "%s: %s packed without repacking", ftype, w->name);
        cr_assert_null(ps[i]->moved, "%s: %s moved without repacking", ftype, w->name);
    }
    cr_assert_gt(packed->packed_bytes, 0);
    // A copy of the matrices, not more (whole 16-row groups, 64-byte padded).
    cr_assert_leq(packed->packed_bytes, packed->weight_bytes + 64 * 1024, "%s", ftype);
    mint_model_desc d;
    mint_model_describe(plain, &d);
    const size_t n = (N_PROMPT + N_STEPS) * (size_t)d.n_vocab;
    float *ref = program(plain, 1);
    for (int t = 1; t <= 2; t++) {
        float *a = program(packed, t), *b = program(plain, t);
        cr_assert_eq(memcmp(a, ref, n * sizeof *a), 0, "%s: repacked, %d threads", ftype, t);
        cr_assert_eq(memcmp(b, ref, n * sizeof *b), 0, "%s: file layout, %d threads", ftype, t);
        free(a);
        free(b);
    }
    free(ref);
    mint_model_close(plain);
    mint_model_close(packed);
}

Test(repack, legacy_types_give_the_file_layouts_logits, .timeout = MT_HANG(300)) {
    const char *types[] = {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0"};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) check_type(types[i]);
}

Test(repack, k_quants_give_the_file_layouts_logits, .timeout = MT_HANG(300)) {
    const char *types[] = {"Q2_K", "Q3_K_M", "Q4_K_M", "Q5_K_M", "Q6_K"};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) check_type(types[i]);
}

// A mixture whose experts are MXFP4 (the tiny qwen3moe in MXFP4_MOE: expert stacks MXFP4, the
// rest Q8_0): the stacks are packed where the level reads MXFP4 packed (AVX-512), moved
// elsewhere, and the logits are the file layout's, bit for bit, with 1 and 2 threads.
Test(repack, mxfp4_experts_give_the_file_layouts_logits, .timeout = MT_HANG(300)) {
    const char *path = mt_path(mt_tmpdir(), "repack-qwen3moe-tiny-mxfp4_moe.gguf");
    mint_synth_params sp = {
        .preset = "qwen3moe", .ftype = "MXFP4_MOE", .seed = 7, .n_threads = 2, .shape = "tiny"};
    mint_err err;
    cr_assert_eq(mint_synth_write(&sp, path, &err), MINT_OK, "%s", err.msg);
    mint_model *plain, *packed;
    const mint_model_params no = {.no_repack = true};
    cr_assert_eq(mint_model_open(path, &no, &plain, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_model_open(path, NULL, &packed, &err), MINT_OK, "%s", err.msg);
    mint_model_repack_wait(packed);
    const mint_kernels *k = mint_kernels_get();
    const mint_layer *L = &packed->layers[0];
    const mint_weight *ws[] = {&L->gate_exps, &L->up_exps, &L->down_exps};
    for (size_t i = 0; i < sizeof ws / sizeof *ws; i++) {
        const mint_weight *w = ws[i];
        cr_assert_eq(w->type, MINT_TYPE_MXFP4, "%s", w->name);
        const bool expect = k->t[MINT_TYPE_MXFP4].gemm_packed != NULL;
        cr_assert_eq(w->packed != NULL, expect, "%s at %s: packed %d", w->name, k->name,
                     !!w->packed);
        cr_assert_eq(w->moved != NULL, !expect, "%s: moved %d", w->name, !!w->moved);
    }
    mint_model_desc d;
    mint_model_describe(plain, &d);
    cr_assert_gt(d.n_vocab, 432); // the program's tokens
    const size_t n = (N_PROMPT + N_STEPS) * (size_t)d.n_vocab;
    float *ref = program(plain, 1);
    for (int t = 1; t <= 2; t++) {
        float *a = program(packed, t), *b = program(plain, t);
        cr_assert_eq(memcmp(a, ref, n * sizeof *a), 0, "MXFP4_MOE: repacked, %d threads", t);
        cr_assert_eq(memcmp(b, ref, n * sizeof *b), 0, "MXFP4_MOE: file layout, %d threads", t);
        free(a);
        free(b);
    }
    free(ref);
    mint_model_close(plain);
    mint_model_close(packed);
}

// Float matrices: packed where the level has packed float kernels (AVX-512), moved elsewhere
// (AVX2, NEON), and either way the map's bits.
Test(repack, float_types_give_the_file_layouts_logits, .timeout = MT_HANG(300)) {
    const char *types[] = {"F32", "F16", "BF16"};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) check_type(types[i]);
}

// A file read into memory (no_mmap) is already anonymous memory: nothing to move, and its float
// matrices are not packed (that would hold two copies of them).
Test(repack, a_file_read_into_memory_is_not_moved, .timeout = MT_HANG(300)) {
    mint_model *m;
    mint_err err;
    const mint_model_params rd = {.no_mmap = true};
    cr_assert_eq(mint_model_open(mt_synth("small", "F16"), &rd, &m, &err), MINT_OK, "%s", err.msg);
    mint_model_repack_wait(m);
    cr_assert_null(m->layers[0].wq.moved);
    cr_assert_null(m->output.moved);
    cr_assert_eq(m->packed_bytes, 0);
    mint_model_close(m);
}

// A context forced to a level without packed kernels reads the file's rows of a repacked model
// (whose map pages were dropped after packing: they come back from the page cache), and gets
// what it gets on the model opened without repacking.
static float *ref_logits(const char *path, bool no_repack, int n_vocab) {
    mint_model *m;
    mint_err err;
    const mint_model_params mp = {.no_repack = no_repack};
    cr_assert_eq(mint_model_open(path, &mp, &m, &err), MINT_OK, "%s", err.msg);
    mint_ctx_params p = mint_ctx_default_params();
    p.n_ctx = 16;
    p.isa = "ref";
    mint_ctx *c;
    cr_assert_eq(mint_ctx_create(m, &p, &c, &err), MINT_OK, "%s", err.msg);
    const int32_t prompt[4] = {1, 40, 77, 261};
    cr_assert_eq(mint_eval(c, prompt, 4, 0, false, &err), MINT_OK, "%s", err.msg);
    float *out = malloc((size_t)n_vocab * sizeof *out);
    memcpy(out, mint_get_logits(c, 0), (size_t)n_vocab * sizeof *out);
    mint_ctx_free(c);
    mint_model_close(m);
    return out;
}

Test(repack, a_reference_context_reads_the_file_layout, .timeout = MT_HANG(300)) {
    const char *path = mt_synth("small", "Q4_K_M");
    mint_model *m = mt_synth_model("small", "Q4_K_M");
    mint_model_desc d;
    mint_model_describe(m, &d);
    mint_model_close(m);
    float *a = ref_logits(path, false, d.n_vocab), *b = ref_logits(path, true, d.n_vocab);
    cr_assert_eq(memcmp(a, b, (size_t)d.n_vocab * sizeof *a), 0);
    free(a);
    free(b);
}

// Evaluations that start right after mint_model_open run while matrices switch from the file's
// layout to the packed one under them: the logits are still the file layout's, bit for bit.
Test(repack, evaluating_while_packing_changes_no_bit, .timeout = MT_HANG(300)) {
    const char *path = mt_synth("small", "Q4_K_M");
    mint_model *plain, *m;
    mint_err err;
    const mint_model_params no = {.no_repack = true};
    cr_assert_eq(mint_model_open(path, &no, &plain, &err), MINT_OK, "%s", err.msg);
    mint_model_desc d;
    mint_model_describe(plain, &d);
    const size_t n = (N_PROMPT + N_STEPS) * (size_t)d.n_vocab;
    float *ref = program(plain, 2);
    for (int round = 0; round < 4; round++) {
        cr_assert_eq(mint_model_open(path, NULL, &m, &err), MINT_OK, "%s", err.msg);
        float *a = program(m, 1 + round % 2);
        cr_assert_eq(memcmp(a, ref, n * sizeof *a), 0, "round %d", round);
        free(a);
        mint_model_close(m); // stops the packer wherever it is
    }
    free(ref);
    mint_model_close(plain);
}
