// test_arch_table.c - the architecture table's declarations hang together (runtime/engine/arch.c):
// every layer tensor a row declares has a slot bound once, a fused tensor's views tile it
// exactly, dimensions are what the model's numbers say, and the description names the kinds.
// (test_arch holds every row to llama.cpp's numbers; this holds the table to itself.)
#include "runtime/engine/arch.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static const char *const names[] = {"llama",  "qwen2",  "qwen3", "phi3",   "gpt2",
                                    "gemma2", "gemma3", "lfm2",  "qwen35", "gemma4"};
#define N_NAMES (sizeof names / sizeof *names)

// Qwen3-like numbers where every dimension differs from every other.
static const mint_dims dims = {
    .n_embd = 1024, .n_ff = 3072, .n_head = 16, .n_head_kv = 8, .head_dim = 128};

Test(arch_table, every_row_is_listed_and_found) {
    char list[512];
    mint_arch_list(list, sizeof list);
    for (size_t i = 0; i < N_NAMES; i++) {
        cr_assert_not_null(mint_arch_find(names[i]), "%s", names[i]);
        cr_assert(strstr(list, names[i]), "%s not in '%s'", names[i], list);
    }
    cr_assert_null(mint_arch_find("falcon"));
    cr_assert_null(mint_arch_find(NULL));
}

Test(arch_table, dimensions) {
    cr_assert_eq(mint_dim_value(MINT_DIM_0, &dims), 0);
    cr_assert_eq(mint_dim_value(MINT_DIM_1, &dims), 1);
    cr_assert_eq(mint_dim_value(MINT_DIM_EMBD, &dims), 1024);
    cr_assert_eq(mint_dim_value(MINT_DIM_FF, &dims), 3072);
    cr_assert_eq(mint_dim_value(MINT_DIM_FF2, &dims), 6144);
    cr_assert_eq(mint_dim_value(MINT_DIM_Q, &dims), 2048);
    cr_assert_eq(mint_dim_value(MINT_DIM_KV, &dims), 1024);
    cr_assert_eq(mint_dim_value(MINT_DIM_Q_KV, &dims), 3072);
    cr_assert_eq(mint_dim_value(MINT_DIM_QKV, &dims), 4096);
    cr_assert_eq(mint_dim_value(MINT_DIM_HEAD, &dims), 128);
}

// Each slot of mint_layer is bound by at most one tensor or view a file may have (a tensor the
// row says is absent binds nothing), the projections and norms every block needs are bound, and
// a fused tensor's views cover its rows end to end in order.
Test(arch_table, layer_tensors_bind_each_slot_once) {
    for (size_t a = 0; a < N_NAMES; a++) {
        const mint_arch *row = mint_arch_find(names[a]);
        mint_layer_tensor t[MINT_LAYER_TENSORS_MAX];
        const int n = mint_arch_layer_tensors(row, MINT_MIXER_ATTENTION, t);
        cr_assert(n > 0 && n <= MINT_LAYER_TENSORS_MAX, "%s: %d", names[a], n);
        int bound[MINT_SLOT_COUNT] = {0};
        for (int i = 0; i < n; i++) {
            cr_assert(strstr(t[i].suffix, ".weight") || strstr(t[i].suffix, ".bias"), "%s: %s",
                      names[a], t[i].suffix);
            for (int j = 0; j < i; j++)
                cr_assert_str_neq(t[i].suffix, t[j].suffix, "%s: %s twice", names[a], t[i].suffix);
            if (t[i].need == MINT_ABSENT) continue;
            if (t[i].slot != MINT_SLOT_FUSED) {
                cr_assert_eq(t[i].n_views, 0);
                bound[t[i].slot]++;
                continue;
            }
            cr_assert_gt(t[i].n_views, 1, "%s: %s", names[a], t[i].suffix);
            int64_t next = 0;
            for (int v = 0; v < t[i].n_views; v++) {
                cr_assert_eq(mint_dim_value(t[i].views[v].at, &dims), next, "%s: %s view %d",
                             names[a], t[i].suffix, v);
                next += mint_dim_value(t[i].views[v].n, &dims);
                bound[t[i].views[v].slot]++;
            }
            const mint_dim whole = t[i].n_out == MINT_DIM_1 ? t[i].n_in : t[i].n_out;
            cr_assert_eq(next, mint_dim_value(whole, &dims), "%s: %s views", names[a], t[i].suffix);
        }
        for (int s = 1; s < MINT_SLOT_COUNT; s++)
            cr_assert_leq(bound[s], 1, "%s: slot %d bound %d times", names[a], s, bound[s]);
        const mint_slot every[] = {MINT_SLOT_ATTN_NORM, MINT_SLOT_WQ,    MINT_SLOT_WK,
                                   MINT_SLOT_WV,        MINT_SLOT_WO,    MINT_SLOT_FFN_NORM,
                                   MINT_SLOT_W_UP,      MINT_SLOT_W_DOWN};
        for (size_t s = 0; s < sizeof every / sizeof *every; s++)
            cr_assert_eq(bound[every[s]], 1, "%s: slot %d", names[a], every[s]);
        // A gate exactly when the feed-forward has one.
        cr_assert_eq(bound[MINT_SLOT_W_GATE], row->ffn != MINT_FFN_GELU, "%s", names[a]);
    }
}

// A hybrid's recurrent layer (LFM2's short convolution) declares its mixer's tensors and the
// feed-forward's, and none of attention's.
Test(arch_table, a_recurrent_layer_declares_its_mixer) {
    const mint_arch *row = mint_arch_find("lfm2");
    cr_assert_eq(row->recurrent, MINT_MIXER_SHORTCONV);
    mint_layer_tensor t[MINT_LAYER_TENSORS_MAX];
    const int n = mint_arch_layer_tensors(row, MINT_MIXER_SHORTCONV, t);
    int bound[MINT_SLOT_COUNT] = {0};
    for (int i = 0; i < n; i++)
        if (t[i].need != MINT_ABSENT) bound[t[i].slot]++;
    const mint_slot have[] = {MINT_SLOT_ATTN_NORM, MINT_SLOT_CONV,     MINT_SLOT_CONV_IN,
                              MINT_SLOT_CONV_OUT,  MINT_SLOT_FFN_NORM, MINT_SLOT_W_GATE,
                              MINT_SLOT_W_UP,      MINT_SLOT_W_DOWN};
    for (size_t s = 0; s < sizeof have / sizeof *have; s++) cr_assert_eq(bound[have[s]], 1);
    const mint_slot not [] = {MINT_SLOT_WQ, MINT_SLOT_WK, MINT_SLOT_WV, MINT_SLOT_WO,
                              MINT_SLOT_Q_NORM};
    for (size_t s = 0; s < sizeof not / sizeof *not ; s++) cr_assert_eq(bound[not [s]], 0);
    const mint_dims d = {.n_embd = 1024, .n_conv = 3};
    cr_assert_eq(mint_dim_value(MINT_DIM_CONV, &d), 3);
    cr_assert_eq(mint_dim_value(MINT_DIM_EMBD3, &d), 3072);
}

Test(arch_table, the_description_names_the_kinds) {
    char buf[1024];
    mint_arch_describe(mint_arch_find("gpt2"), buf, sizeof buf);
    cr_assert(strstr(buf, "architecture gpt2: LayerNorm with biases, learned positions, GELU"),
              "%s", buf);
    mint_arch_describe(mint_arch_find("gemma3"), buf, sizeof buf);
    cr_assert(strstr(buf, "RoPE (NEOX pairs") && strstr(buf, "GeGLU") &&
                  strstr(buf, "per-head q/k norms (required)"),
              "%s", buf);
    char small[16];
    mint_arch_describe(mint_arch_find("llama"), small, sizeof small); // truncated, terminated
    cr_assert_eq(strlen(small), sizeof small - 1);
}

// Gemma 4's layer declares k, its norm and v as optional (a layer reading another's KV has none),
// its per-layer input's three tensors and its output scale as optional (the file's per-layer
// width says whether they are there), and one new width: the per-layer input's.
Test(arch_table, gemma4_declares_its_optional_layer_tensors) {
    const mint_arch *row = mint_arch_find("gemma4");
    cr_assert(row && row->layer_shapes && row->v_norm && row->attn_unscaled);
    mint_layer_tensor t[MINT_LAYER_TENSORS_MAX];
    const int n = mint_arch_layer_tensors(row, MINT_MIXER_ATTENTION, t);
    mint_tensor_need need[MINT_SLOT_COUNT] = {0};
    for (int i = 0; i < n; i++)
        if (t[i].need != MINT_ABSENT) need[t[i].slot] = t[i].need;
    const mint_slot optional[] = {MINT_SLOT_WK,       MINT_SLOT_WV,       MINT_SLOT_K_NORM,
                                  MINT_SLOT_PLE_GATE, MINT_SLOT_PLE_PROJ, MINT_SLOT_PLE_NORM,
                                  MINT_SLOT_OUT_SCALE};
    for (size_t s = 0; s < sizeof optional / sizeof *optional; s++)
        cr_assert_eq(need[optional[s]], MINT_OPTIONAL, "slot %d", optional[s]);
    cr_assert_eq(need[MINT_SLOT_WQ], MINT_REQUIRED);
    cr_assert_eq(need[MINT_SLOT_Q_NORM], MINT_REQUIRED);
    cr_assert_eq(need[MINT_SLOT_FFN_POST_NORM], MINT_REQUIRED);
    const mint_dims d = {.n_embd = 1536, .n_ple = 256};
    cr_assert_eq(mint_dim_value(MINT_DIM_PLE, &d), 256);
    cr_assert_null(mint_arch_find("gemma4-assistant"));
}
