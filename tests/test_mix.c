// test_mix.c - the per-tensor type choice of runtime/filetools/mix.c against what llama-quantize
// did.
//
// The reference: MINT_TEST_DATA/reference/tensor_types.json lists every tensor's type in every
// quantized fixture file, which llama-quantize made from stories260K.gguf and
// quant/tiny256-f32.gguf. Each file is planned again here from its source's tensor list and
// must match tensor for tensor, in llama-quantize's writing order. Shapes no fixture has
// (TinyLlama-1.1B's) are checked against the rules as stated in each test.
#include "helpers/gguf_fixtures.h"
#include "helpers/helpers.h"
#include "helpers/mix_tinyllama.h"
#include "runtime/filetools/mix.h"
#include "quant/types.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// The reference files

// Which source, file type and --pure made a file of tensor_types.json (docs/tolerances.md 1.2).
typedef struct ref_file {
    const char *source; // relative to MINT_TEST_DATA
    char quant[128];    // the quantized file, relative to MINT_TEST_DATA ("" for a source)
    mint_ftype ftype;   // llama-quantize's type argument
    bool pure;          // --pure
} ref_file;

static ref_file ref_file_of(const char *name) {
    ref_file r = {0};
    const char *type;
    if (strncmp(name, "stories260K", 11) == 0) {
        r.source = "stories260K.gguf";
        type = name[11] == '-' ? name + 12 : NULL;
    } else {
        cr_assert(strncmp(name, "tiny256-", 8) == 0, "unexpected file %s", name);
        r.source = "quant/tiny256-f32.gguf";
        type = strcmp(name, "tiny256-f32.gguf") == 0 ? NULL : name + 8;
    }
    if (!type) return (ref_file){.source = r.source, .ftype = MINT_FTYPE_F32};
    char t[32];
    size_t len = strcspn(type, ".");
    cr_assert_lt(len, sizeof t);
    memcpy(t, type, len);
    t[len] = '\0';
    char *pure = strstr(t, "-pure");
    if (pure) *pure = '\0';
    r.pure = pure != NULL;
    mint_err err;
    cr_assert_eq(mint_ftype_from_name(t, &r.ftype, &err), MINT_OK, "%s: %s", name, err.msg);
    snprintf(r.quant, sizeof r.quant, "quant/%s", name);
    return r;
}

typedef struct planned {
    mint_file *f;         // the source file
    size_t n;             // its tensors
    mint_mix_choice *out; // [n] choices, file order
    size_t *order;        // [n] llama-quantize's order
} planned;

static planned plan_source(const char *rel, const mint_mix_params *p) {
    planned r = {0};
    mint_err err;
    cr_assert_eq(mint_file_open(mt_data_path(rel), &r.f, &err), MINT_OK, "%s", err.msg);
    mint_file_info info;
    mint_file_get_info(r.f, &info);
    r.n = info.n_tensors;
    r.out = calloc(r.n, sizeof *r.out);
    r.order = calloc(r.n, sizeof *r.order);
    cr_assert(r.out && r.order);
    cr_assert_eq(mint_mix_plan_file(r.f, p, r.out, r.order, &err), MINT_OK, "%s: %s", rel, err.msg);
    return r;
}

static void planned_free(planned *r) {
    mint_file_close(r->f);
    free(r->out);
    free(r->order);
}

static const char *tensor_name(const mint_file *f, size_t i) {
    mint_tensor_info ti;
    cr_assert_eq(mint_file_tensor(f, i, &ti), MINT_OK);
    return ti.name;
}

// Every tensor's type equals the listing's; returns how many were checked.
static size_t expect_types(const char *file, json_object *want, const planned *r) {
    cr_assert_eq((size_t)json_object_object_length(want), r->n,
                 "%s: %d tensors listed, %zu planned", file, json_object_object_length(want), r->n);
    for (size_t i = 0; i < r->n; i++) {
        const char *name = tensor_name(r->f, i);
        const char *type = json_object_get_string(mt_jget(want, name));
        cr_expect_str_eq(mint_type_name(r->out[i].type), type, "%s: %s is %s, planned %s (%s)",
                         file, name, type, mint_type_name(r->out[i].type), r->out[i].reason);
    }
    return r->n;
}

Test(mix_reference, every_tensor_of_every_file_matches_llama_quantize) {
    json_object *all = mt_json_data("reference/tensor_types.json");
    size_t n_files = 0, n_tensors = 0;
    json_object_object_foreach(all, file, want) {
        ref_file rf = ref_file_of(file);
        mint_mix_params p = mint_mix_default_params(rf.ftype);
        p.pure = rf.pure;
        planned r = plan_source(rf.source, &p);
        n_tensors += expect_types(file, want, &r);

        if (rf.quant[0]) {
            // llama-quantize writes in the order it decides in, and records the file type.
            mint_file *q = NULL;
            mint_err err;
            cr_assert_eq(mint_file_open(mt_data_path(rf.quant), &q, &err), MINT_OK, "%s", err.msg);
            for (size_t k = 0; k < r.n; k++)
                cr_expect_str_eq(tensor_name(q, k), tensor_name(r.f, r.order[k]), "%s: tensor %zu",
                                 file, k);
            uint32_t ft;
            cr_assert_eq(mint_file_get_u32(q, "general.file_type", &ft, &err), MINT_OK);
            cr_expect_eq(ft, mint_ftype_file_type((int)rf.ftype), "%s: file_type %u", file, ft);
            mint_file_close(q);
        }
        planned_free(&r);
        n_files++;
    }
    cr_expect_eq(n_files, 24);
    cr_expect_eq(n_tensors, 48 * 7 + 39 * 17);
    json_object_put(all);
}

// Q6_K --pure was not stored: it came out byte-identical to the Q6_K mix (docs/tolerances.md 1.2).
Test(mix_reference, q6_k_pure_equals_the_q6_k_mix) {
    json_object *all = mt_json_data("reference/tensor_types.json");
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q6_K);
    p.pure = true;
    planned r = plan_source("quant/tiny256-f32.gguf", &p);
    expect_types("tiny256-q6_k.gguf (pure)", mt_jget(all, "tiny256-q6_k.gguf"), &r);
    planned_free(&r);
    json_object_put(all);
}

// stories260K's n_ff is 172: no block fits ffn_down's rows, and output.weight's 64 columns do
// not fit Q6_K (docs/tolerances.md 1.2).
Test(mix_reference, stories260K_fallbacks_and_reasons) {
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q4_0);
    planned r = plan_source("stories260K.gguf", &p);
    int n_fallback = 0;
    for (size_t i = 0; i < r.n; i++) {
        const char *name = tensor_name(r.f, i);
        n_fallback += r.out[i].fallback;
        if (strcmp(name, "blk.3.ffn_down.weight") == 0)
            cr_expect_str_eq(r.out[i].reason,
                             "ffn_down: base type Q4_0; fallback: ne[0] 172 not a multiple of 32 "
                             "(Q4_0) -> F16");
        if (strcmp(name, "output.weight") == 0)
            cr_expect_str_eq(
                r.out[i].reason,
                "output: Q6_K; fallback: ne[0] 64 not a multiple of 256 (Q6_K) -> Q8_0");
        if (strcmp(name, "blk.0.attn_norm.weight") == 0) {
            cr_expect_str_eq(r.out[i].reason, "kept F32: 1-D");
            cr_expect_not(r.out[i].quantize);
        }
    }
    cr_expect_eq(n_fallback, 6);
    planned_free(&r);
}

Test(mix_reference, model_from_file) {
    mint_file *f = NULL;
    mint_err err;
    cr_assert_eq(mint_file_open(mt_data_path("stories260K.gguf"), &f, &err), MINT_OK);
    mint_mix_model m;
    cr_assert_eq(mint_mix_model_from_file(f, &m, &err), MINT_OK, "%s", err.msg);
    cr_expect_eq(m.n_layer, 5);
    cr_expect_eq(m.n_head, 8);
    cr_expect_eq(m.n_head_kv, 4);
    mint_file_close(f);
}

// Another architecture's keys are read under its name; one mint does not run is refused with the
// names of those it does.
Test(mix_reference, model_from_files_of_other_architectures) {
    const char *path = mt_path(mt_tmpdir(), "gemma2.gguf");
    mint_synth_params sp = {
        .preset = "gemma2", .ftype = "F32", .seed = 1, .n_threads = 1, .shape = "tiny"};
    mint_err err;
    cr_assert_eq(mint_synth_write(&sp, path, &err), MINT_OK, "%s", err.msg);
    mint_file *f = NULL;
    cr_assert_eq(mint_file_open(path, &f, &err), MINT_OK, "%s", err.msg);
    mint_mix_model m;
    cr_assert_eq(mint_mix_model_from_file(f, &m, &err), MINT_OK, "%s", err.msg);
    cr_expect_eq(m.n_layer, 2);
    cr_expect_eq(m.arch, mint_arch_find("gemma2"));
    mint_file_close(f);

    // The same file renamed "gemmaX" (general.architecture is the first "gemma2" in it).
    size_t len;
    uint8_t *b = mt_read_file(path, &len);
    cr_assert(b);
    const size_t at = mt_find_bytes(b, len, "gemma2", 6);
    cr_assert_lt(at, len);
    b[at + 5] = 'X';
    const char *renamed = mt_path(mt_tmpdir(), "gemmaX.gguf");
    cr_assert(mt_write_file(renamed, b, len));
    free(b);
    cr_assert_eq(mint_file_open(renamed, &f, &err), MINT_OK, "%s", err.msg);
    cr_expect_eq(mint_mix_model_from_file(f, &m, &err), MINT_E_UNSUPPORTED);
    cr_expect(strstr(err.msg, "'gemmaX'") && strstr(err.msg, "llama, qwen2"), "%s", err.msg);
    mint_file_close(f);
}

// llama.cpp's well-known TinyLlama Q4_K_M: 45 F32, 135 Q4_K, 21 Q6_K (output.weight plus attn_v
// and ffn_down in the 10 use_more_bits layers 0 1 4 7 10 13 16 19 20 21).
Test(mix_tinyllama, q4_k_m) {
    tinyllama m;
    tinyllama_init(&m);
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q4_K_M);
    mint_mix_choice out[TL_N];
    tl_plan(&m, &p, out);
    cr_expect_str_eq(tl_type(&m, out, "output.weight"), "Q6_K");
    cr_expect_str_eq(tl_type(&m, out, "token_embd.weight"), "Q4_K");
    cr_expect_str_eq(tl_type(&m, out, "output_norm.weight"), "F32");
    for (int l = 0; l < TL_LAYERS; l++) {
        const char *more = tl_more_bits(l) ? "Q6_K" : "Q4_K";
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_v"), more, "layer %d", l);
        cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_down"), more, "layer %d", l);
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_q"), "Q4_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_k"), "Q4_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_output"), "Q4_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_gate"), "Q4_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_up"), "Q4_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_norm"), "F32");
    }
    int counts[MINT_TYPE_COUNT];
    tl_count(out, counts);
    cr_expect_eq(counts[MINT_TYPE_F32], 45);
    cr_expect_eq(counts[MINT_TYPE_Q4_K], 135);
    cr_expect_eq(counts[MINT_TYPE_Q6_K], 21);
    for (size_t i = 0; i < TL_N; i++) cr_expect_not(out[i].fallback, "%s", m.t[i].name);
    cr_expect_str_eq(out[TL_N - 1].reason, "output: Q6_K");
}

// Q5_K_M: the same layers get Q6_K, the rest Q5_K.
Test(mix_tinyllama, q5_k_m) {
    tinyllama m;
    tinyllama_init(&m);
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q5_K_M);
    mint_mix_choice out[TL_N];
    tl_plan(&m, &p, out);
    int counts[MINT_TYPE_COUNT];
    tl_count(out, counts);
    cr_expect_eq(counts[MINT_TYPE_Q5_K], 135);
    cr_expect_eq(counts[MINT_TYPE_Q6_K], 21);
    cr_expect_str_eq(tl_layer_type(&m, out, 19, "ffn_down"), "Q6_K");
    cr_expect_str_eq(tl_layer_type(&m, out, 18, "ffn_down"), "Q5_K");
}

// Q3_K_M: attn_v Q5_K in the first two layers, Q4_K after; ffn_down Q5_K for layer < 22/16 = 1,
// Q4_K after; attn_output Q4_K; output Q6_K; the rest Q3_K.
Test(mix_tinyllama, q3_k_m) {
    tinyllama m;
    tinyllama_init(&m);
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q3_K_M);
    mint_mix_choice out[TL_N];
    tl_plan(&m, &p, out);
    for (int l = 0; l < TL_LAYERS; l++) {
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_v"), l < 2 ? "Q5_K" : "Q4_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_down"), l < 1 ? "Q5_K" : "Q4_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_output"), "Q4_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_q"), "Q3_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_up"), "Q3_K");
    }
    cr_expect_str_eq(tl_type(&m, out, "output.weight"), "Q6_K");
    cr_expect_str_eq(tl_type(&m, out, "token_embd.weight"), "Q3_K");
}

// Q2_K: n_gqa = 32/4 = 8 >= 4, so attn_v is Q4_K; ffn_down and attn_output Q3_K.
Test(mix_tinyllama, q2_k) {
    tinyllama m;
    tinyllama_init(&m);
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q2_K);
    mint_mix_choice out[TL_N];
    tl_plan(&m, &p, out);
    for (int l = 0; l < TL_LAYERS; l++) {
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_v"), "Q4_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_down"), "Q3_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_output"), "Q3_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_gate"), "Q2_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_k"), "Q2_K");
    }
    cr_expect_str_eq(tl_type(&m, out, "output.weight"), "Q6_K");
    cr_expect_str_eq(tl_type(&m, out, "token_embd.weight"), "Q2_K");
}

// IQ4_NL and IQ4_XS (llama.cpp's rules for them): n_gqa = 8 >= 4, so attn_v is Q5_K in every
// layer; without an importance matrix ffn_down is Q5_K for layer < 22/8 = 2; output.weight Q6_K;
// everything else, token_embd included, the base type.
Test(mix_tinyllama, iq4_nl_and_iq4_xs) {
    static const mint_ftype ft[] = {MINT_FTYPE_IQ4_NL, MINT_FTYPE_IQ4_XS};
    for (int f = 0; f < 2; f++) {
        tinyllama m;
        tinyllama_init(&m);
        mint_mix_params p = mint_mix_default_params(ft[f]);
        mint_mix_choice out[TL_N];
        tl_plan(&m, &p, out);
        const char *base = f ? "IQ4_XS" : "IQ4_NL";
        for (int l = 0; l < TL_LAYERS; l++) {
            cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_v"), "Q5_K", "%s layer %d", base, l);
            cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_down"), l < 2 ? "Q5_K" : base,
                             "%s layer %d", base, l);
            cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_output"), base);
            cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_k"), base);
            cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_up"), base);
        }
        cr_expect_str_eq(tl_type(&m, out, "output.weight"), "Q6_K");
        cr_expect_str_eq(tl_type(&m, out, "token_embd.weight"), base);
        int counts[MINT_TYPE_COUNT];
        tl_count(out, counts);
        cr_expect_eq(counts[MINT_TYPE_Q5_K], 22 + 2, "%s", base);
        for (size_t i = 0; i < TL_N; i++) cr_expect_not(out[i].fallback, "%s", m.t[i].name);
    }
}

// Q4_K_S: attn_v Q5_K for the first 4, ffn_down Q5_K for layer < 22/8 = 2; Q3_K_L: attn_v,
// ffn_down and attn_output all Q5_K; Q3_K_S and Q5_K_S: only output.weight differs (Q6_K).
Test(mix_tinyllama, small_and_large_mixes) {
    tinyllama m;
    tinyllama_init(&m);
    mint_mix_choice out[TL_N];
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q4_K_S);
    tl_plan(&m, &p, out);
    for (int l = 0; l < TL_LAYERS; l++) {
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_v"), l < 4 ? "Q5_K" : "Q4_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_down"), l < 2 ? "Q5_K" : "Q4_K");
    }
    p = mint_mix_default_params(MINT_FTYPE_Q3_K_L);
    tl_plan(&m, &p, out);
    for (int l = 0; l < TL_LAYERS; l++) {
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_v"), "Q5_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_down"), "Q5_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_output"), "Q5_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_up"), "Q3_K");
    }
    static const struct {
        mint_ftype ft;
        int base;
    } plain[] = {{MINT_FTYPE_Q3_K_S, MINT_TYPE_Q3_K},
                 {MINT_FTYPE_Q5_K_S, MINT_TYPE_Q5_K},
                 {MINT_FTYPE_Q4_0, MINT_TYPE_Q4_0},
                 {MINT_FTYPE_Q5_1, MINT_TYPE_Q5_1}};
    for (size_t k = 0; k < sizeof plain / sizeof plain[0]; k++) {
        p = mint_mix_default_params(plain[k].ft);
        tl_plan(&m, &p, out);
        int counts[MINT_TYPE_COUNT];
        tl_count(out, counts);
        cr_expect_eq(counts[plain[k].base], 155, "%s", mint_ftype_name(plain[k].ft));
        cr_expect_str_eq(tl_type(&m, out, "output.weight"), "Q6_K");
    }
    // Q8_0 keeps output.weight Q8_0; F16 and BF16 make every matrix the base type.
    p = mint_mix_default_params(MINT_FTYPE_Q8_0);
    tl_plan(&m, &p, out);
    cr_expect_str_eq(tl_type(&m, out, "output.weight"), "Q8_0");
    p = mint_mix_default_params(MINT_FTYPE_BF16);
    tl_plan(&m, &p, out);
    cr_expect_str_eq(tl_type(&m, out, "output.weight"), "BF16");
    cr_expect_str_eq(tl_layer_type(&m, out, 3, "attn_v"), "BF16");
    cr_expect_str_eq(tl_layer_type(&m, out, 3, "ffn_norm"), "F32");
}

// With an importance matrix llama.cpp gives ffn_down of the first n/8 layers of a Q4_0 (Q5_0)
// file Q4_1 (Q5_1), and makes Q2_K_S (attn_v Q4_K for n_gqa >= 4, ffn_down Q4_K below n/8).
Test(mix_tinyllama, with_an_importance_matrix) {
    tinyllama m;
    tinyllama_init(&m);
    mint_mix_choice out[TL_N];
    static const struct {
        mint_ftype ft;
        const char *base, *early;
    } legacy[] = {{MINT_FTYPE_Q4_0, "Q4_0", "Q4_1"}, {MINT_FTYPE_Q5_0, "Q5_0", "Q5_1"}};
    for (size_t k = 0; k < 2; k++) {
        mint_mix_params p = mint_mix_default_params(legacy[k].ft);
        for (int with = 0; with < 2; with++) {
            p.has_imatrix = with;
            tl_plan(&m, &p, out);
            for (int l = 0; l < TL_LAYERS; l++) {
                cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_down"),
                                 with && l < 2 ? legacy[k].early : legacy[k].base, "layer %d", l);
                cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_up"), legacy[k].base);
            }
        }
    }
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q2_K_S);
    p.has_imatrix = true;
    tl_plan(&m, &p, out);
    for (int l = 0; l < TL_LAYERS; l++) {
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_v"), "Q4_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "ffn_down"), l < 2 ? "Q4_K" : "Q2_K");
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_q"), "Q2_K");
    }
}

// Processing order: outside blocks first (by name), then block by block; blk.10 after blk.9.
Test(mix_tinyllama, processing_order) {
    tinyllama m;
    tinyllama_init(&m);
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q4_K_M);
    mint_mix_choice out[TL_N];
    size_t order[TL_N];
    mint_err err;
    cr_assert_eq(mint_mix_plan(&m.model, m.t, TL_N, &p, out, order, &err), MINT_OK);
    cr_expect_str_eq(m.t[order[0]].name, "output.weight");
    cr_expect_str_eq(m.t[order[1]].name, "output_norm.weight");
    cr_expect_str_eq(m.t[order[2]].name, "token_embd.weight");
    cr_expect_str_eq(m.t[order[3]].name, "blk.0.attn_k.weight");
    cr_expect_str_eq(m.t[order[3 + 9 * 10]].name, "blk.10.attn_k.weight");
    cr_expect_str_eq(m.t[order[TL_N - 1]].name, "blk.21.ffn_up.weight");
}

// ---------------------------------------------------------------------------------------------
// Options

Test(mix_options, overrides_first_match_wins_and_skip_the_rules) {
    tinyllama m;
    tinyllama_init(&m);
    mint_mix_override ov[3];
    mint_err err;
    cr_assert_eq(mint_mix_override_parse("blk\\.0\\.FFN_DOWN=q8_0", &ov[0], &err), MINT_OK, "%s",
                 err.msg);
    cr_expect_str_eq(ov[0].pattern, "blk\\.0\\.ffn_down"); // lower-cased like llama-quantize
    cr_assert_eq(mint_mix_override_parse("attn_q=Q5_K", &ov[1], &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_mix_override_parse("blk\\.\\d+\\.attn_q=f16", &ov[2], &err), MINT_OK);
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q4_K_M);
    p.overrides = ov;
    p.n_overrides = 3;
    mint_mix_choice out[TL_N];
    tl_plan(&m, &p, out);
    cr_expect_str_eq(tl_layer_type(&m, out, 0, "ffn_down"), "Q8_0");
    cr_expect_str_eq(tl_layer_type(&m, out, 7, "attn_q"), "Q5_K");
    // The mix rules never saw blk.0.ffn_down, so ffn_down's layer counter runs one behind from
    // blk.1 on, as in llama.cpp: blk.2 is counted as 1 (use_more_bits: Q6_K), blk.4 as 3 (Q4_K).
    cr_expect_str_eq(tl_layer_type(&m, out, 2, "ffn_down"), "Q6_K");
    cr_expect_str_eq(tl_layer_type(&m, out, 4, "ffn_down"), "Q4_K");
    cr_expect_str_eq(tl_layer_type(&m, out, 5, "ffn_down"), "Q6_K");
}

Test(mix_options, override_patterns_search_anywhere_and_digit_classes_work) {
    tinyllama m;
    tinyllama_init(&m);
    mint_mix_override ov;
    mint_err err;
    cr_assert_eq(mint_mix_override_parse("^blk\\.1\\d\\.attn_v=q8_0", &ov, &err), MINT_OK);
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q4_0);
    p.overrides = &ov;
    p.n_overrides = 1;
    mint_mix_choice out[TL_N];
    tl_plan(&m, &p, out);
    for (int l = 0; l < TL_LAYERS; l++)
        cr_expect_str_eq(tl_layer_type(&m, out, l, "attn_v"), l >= 10 && l < 20 ? "Q8_0" : "Q4_0",
                         "layer %d", l);
    // Overrides act only when the base type is a block format, as in llama.cpp.
    p.ftype = MINT_FTYPE_F16;
    tl_plan(&m, &p, out);
    cr_expect_str_eq(tl_layer_type(&m, out, 12, "attn_v"), "F16");
}

Test(mix_options, bad_overrides) {
    mint_mix_override ov;
    mint_err err;
    cr_expect_eq(mint_mix_override_parse("attn_v", &ov, &err), MINT_E_ARG);
    cr_expect_eq(mint_mix_override_parse("=q8_0", &ov, &err), MINT_E_ARG);
    cr_expect_eq(mint_mix_override_parse("attn_v=", &ov, &err), MINT_E_ARG);
    cr_expect_eq(mint_mix_override_parse("attn_v=q9_9", &ov, &err), MINT_E_ARG);
    cr_expect(strstr(err.msg, "q9_9") && strstr(err.msg, "Q6_K"), "%s", err.msg);
    cr_expect_eq(mint_mix_override_parse("attn_v=q8_k", &ov, &err), MINT_E_UNSUPPORTED);
    cr_expect(strstr(err.msg, "Q8_K"), "%s", err.msg);
    cr_expect_eq(mint_mix_override_parse("attn_v=iq4_nl", &ov, &err), MINT_OK, "%s", err.msg);
    cr_expect_eq(ov.type, MINT_TYPE_IQ4_NL);
    cr_expect_eq(mint_mix_override_parse("attn_[v=q8_0", &ov, &err), MINT_E_ARG);
    cr_expect(strstr(err.msg, "attn_[v"), "%s", err.msg);
    char longp[MINT_MIX_PATTERN_MAX + 8];
    memset(longp, 'a', sizeof longp);
    memcpy(longp + sizeof longp - 6, "=q8_0", 6);
    cr_expect_eq(mint_mix_override_parse(longp, &ov, &err), MINT_E_LIMIT);

    // The planner checks overrides built by hand the same way.
    tinyllama m;
    tinyllama_init(&m);
    mint_mix_override bad = {.pattern = "(", .type = MINT_TYPE_Q8_0};
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q4_K_M);
    p.overrides = &bad;
    p.n_overrides = 1;
    mint_mix_choice out[TL_N];
    cr_expect_eq(mint_mix_plan(&m.model, m.t, TL_N, &p, out, NULL, &err), MINT_E_ARG);
    bad = (mint_mix_override){.pattern = "attn", .type = MINT_TYPE_Q8_K};
    cr_expect_eq(mint_mix_plan(&m.model, m.t, TL_N, &p, out, NULL, &err), MINT_E_UNSUPPORTED);
}

Test(mix_options, output_and_token_embd_types_pure_and_leave_output) {
    tinyllama m;
    tinyllama_init(&m);
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q4_K_M);
    p.output_type = MINT_TYPE_Q8_0;
    p.token_embd_type = MINT_TYPE_Q6_K;
    mint_mix_choice out[TL_N];
    tl_plan(&m, &p, out);
    cr_expect_str_eq(tl_type(&m, out, "output.weight"), "Q8_0");
    cr_expect_str_eq(tl_type(&m, out, "token_embd.weight"), "Q6_K");

    p = mint_mix_default_params(MINT_FTYPE_Q4_K_M);
    p.pure = true;
    tl_plan(&m, &p, out);
    int counts[MINT_TYPE_COUNT];
    tl_count(out, counts);
    cr_expect_eq(counts[MINT_TYPE_Q4_K], 156);
    cr_expect_str_eq(out[0].reason, "--pure: Q4_K");

    p.pure = false;
    p.leave_output = true;
    tl_plan(&m, &p, out);
    cr_expect_str_eq(tl_type(&m, out, "output.weight"), "F16");
    cr_expect_not(out[TL_N - 1].quantize);
    cr_expect_str_eq(out[TL_N - 1].reason, "kept F16: --leave-output-tensor");
}

// Without output.weight the embedding doubles as the output head and takes its rule.
Test(mix_options, tied_embeddings_follow_the_output_rule) {
    tinyllama m;
    tinyllama_init(&m);
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q4_0);
    mint_mix_choice out[TL_N - 1];
    mint_err err;
    cr_assert_eq(mint_mix_plan(&m.model, m.t, TL_N - 1, &p, out, NULL, &err), MINT_OK);
    cr_expect_str_eq(mint_type_name(out[0].type), "Q6_K");
    cr_expect_str_eq(out[0].reason, "token_embd (tied to output): Q6_K");
}

// Shapes no block fits: K-quants fall back to 32-element types, those to F16.
Test(mix_options, shape_fallbacks) {
    mint_mix_model model = {.n_layer = 1, .n_head = 4, .n_head_kv = 4};
    mint_mix_tensor t[] = {
        {"blk.0.attn_q.weight", MINT_TYPE_F32, {96, 96, 1, 1}},
        {"blk.0.attn_k.weight", MINT_TYPE_F32, {100, 96, 1, 1}},
        {"blk.0.attn_v.weight", MINT_TYPE_F32, {96, 96, 1, 1}},
        {"blk.0.ffn_down.weight", MINT_TYPE_F32, {96, 96, 1, 1}},
        {"output.weight", MINT_TYPE_F32, {96, 512, 1, 1}},
    };
    mint_mix_choice out[5];
    mint_err err;
    static const struct {
        mint_ftype ft;
        const char *want[5];
    } cases[] = {
        {MINT_FTYPE_Q4_K_M, {"Q5_0", "F16", "Q8_0", "Q8_0", "Q8_0"}},
        {MINT_FTYPE_Q5_K_S, {"Q5_1", "F16", "Q5_1", "Q5_1", "Q8_0"}},
        {MINT_FTYPE_Q3_K_M, {"Q4_0", "F16", "Q5_1", "Q5_0", "Q8_0"}},
        {MINT_FTYPE_Q2_K, {"Q4_0", "F16", "Q4_0", "Q4_0", "Q8_0"}},
        {MINT_FTYPE_Q8_0, {"Q8_0", "F16", "Q8_0", "Q8_0", "Q8_0"}},
        {MINT_FTYPE_IQ4_XS, {"IQ4_NL", "F16", "IQ4_NL", "IQ4_NL", "Q8_0"}},
        {MINT_FTYPE_IQ4_NL, {"IQ4_NL", "F16", "IQ4_NL", "IQ4_NL", "Q8_0"}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mint_mix_params p = mint_mix_default_params(cases[k].ft);
        cr_assert_eq(mint_mix_plan(&model, t, 5, &p, out, NULL, &err), MINT_OK, "%s", err.msg);
        for (size_t i = 0; i < 5; i++)
            cr_expect_str_eq(mint_type_name(out[i].type), cases[k].want[i], "%s %s: %s",
                             mint_ftype_name(cases[k].ft), t[i].name, out[i].reason);
    }
    // The fallback also applies under --pure; a user-given type that does not fit is an error.
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q2_K);
    p.pure = true;
    cr_assert_eq(mint_mix_plan(&model, t, 5, &p, out, NULL, &err), MINT_OK);
    cr_expect_str_eq(out[0].reason,
                     "--pure: Q2_K; fallback: ne[0] 96 not a multiple of 256 (Q2_K) -> Q4_0 "
                     "(older llama.cpp: IQ4_NL)");
    p.output_type = MINT_TYPE_Q6_K;
    cr_expect_eq(mint_mix_plan(&model, t, 5, &p, out, NULL, &err), MINT_E_ARG);
    cr_expect(strstr(err.msg, "output.weight") && strstr(err.msg, "96"), "%s", err.msg);
}

// MXFP4_MOE: stacks of more than one matrix MXFP4 (or F16 when the row does not fit its 32-element
// block: llama.cpp has no smaller block to fall back to), the output head and everything else
// quantized Q8_0, norms and the router kept.
Test(mix_options, mxfp4_moe) {
    mint_mix_model model = {.n_layer = 1, .n_head = 4, .n_head_kv = 4, .n_expert = 4};
    mint_mix_tensor t[] = {
        {"blk.0.ffn_up_exps.weight", MINT_TYPE_F32, {64, 96, 4, 1}},
        {"blk.0.ffn_down_exps.weight", MINT_TYPE_F32, {96, 64, 4, 1}},
        {"blk.0.ffn_gate_exps.weight", MINT_TYPE_F32, {100, 64, 4, 1}},
        {"blk.0.ffn_gate_inp.weight", MINT_TYPE_F32, {64, 4, 1, 1}},
        {"blk.0.attn_v.weight", MINT_TYPE_F32, {64, 64, 1, 1}},
        {"blk.0.ffn_up_shexp.weight", MINT_TYPE_F32, {64, 96, 1, 1}},
        {"blk.0.attn_norm.weight", MINT_TYPE_F32, {64, 1, 1, 1}},
        {"token_embd.weight", MINT_TYPE_F32, {64, 512, 1, 1}},
        {"output.weight", MINT_TYPE_F32, {64, 512, 1, 1}},
    };
    static const char *const want[] = {"MXFP4", "MXFP4", "F16",  "F32", "Q8_0",
                                       "Q8_0",  "F32",   "Q8_0", "Q8_0"};
    mint_mix_choice out[9];
    mint_err err;
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_MXFP4_MOE);
    cr_assert_eq(mint_mix_plan(&model, t, 9, &p, out, NULL, &err), MINT_OK, "%s", err.msg);
    for (size_t i = 0; i < 9; i++)
        cr_expect_str_eq(mint_type_name(out[i].type), want[i], "%s: %s", t[i].name, out[i].reason);
    cr_expect_str_eq(out[2].reason,
                     "MXFP4_MOE: ne[2] = 4 -> MXFP4; fallback: ne[0] 100 not a multiple of 32 "
                     "(MXFP4) -> F16");
    cr_expect_eq(mint_ftype_base_type(MINT_FTYPE_MXFP4_MOE), MINT_TYPE_MXFP4);
    cr_expect_eq(mint_ftype_file_type(MINT_FTYPE_MXFP4_MOE), 38);
}

// The attn_v tensors of an 80-layer model 8192 wide with 1024-wide V.
static void seventy_b_attn_v_tensors(mint_mix_tensor t[80]) {
    static char names[80][32];
    for (int l = 0; l < 80; l++) {
        snprintf(names[l], sizeof names[l], "blk.%d.attn_v.weight", l);
        t[l] = (mint_mix_tensor){names[l], MINT_TYPE_F16, {8192, 1024, 1, 1}};
    }
}

// llama.cpp's 70B (80 layers, n_head != n_head_kv) lifts Q3_K / Q4_K attn_v to Q5_K.
Test(mix_options, seventy_b_attn_v) {
    mint_mix_model model = {.n_layer = 80, .n_head = 64, .n_head_kv = 8};
    mint_mix_tensor t[80];
    seventy_b_attn_v_tensors(t);
    mint_mix_choice out[80];
    mint_err err;
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q3_K_S);
    cr_assert_eq(mint_mix_plan(&model, t, 80, &p, out, NULL, &err), MINT_OK);
    cr_expect_str_eq(mint_type_name(out[40].type), "Q5_K");
    p = mint_mix_default_params(MINT_FTYPE_Q4_K_M);
    cr_assert_eq(mint_mix_plan(&model, t, 80, &p, out, NULL, &err), MINT_OK);
    cr_expect_str_eq(mint_type_name(out[0].type), "Q6_K");  // use_more_bits
    cr_expect_str_eq(mint_type_name(out[11].type), "Q5_K"); // Q4_K lifted
    model.n_head_kv = 64;                                   // 65B: no lift
    cr_assert_eq(mint_mix_plan(&model, t, 80, &p, out, NULL, &err), MINT_OK);
    cr_expect_str_eq(mint_type_name(out[11].type), "Q4_K");
}

// The 70B type is the architecture's fact (runtime/engine/arch.c): Qwen2's 80 layers are 70B
// with or without shared K/V heads, Qwen3 has no such type.
Test(mix_options, seventy_b_by_architecture) {
    mint_mix_model model = {.n_layer = 80, .n_head = 64, .n_head_kv = 64};
    mint_mix_tensor t[80];
    seventy_b_attn_v_tensors(t);
    mint_mix_choice out[80];
    mint_err err;
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q4_K_M);
    model.arch = mint_arch_find("qwen2");
    cr_assert_eq(mint_mix_plan(&model, t, 80, &p, out, NULL, &err), MINT_OK);
    cr_expect_str_eq(mint_type_name(out[11].type), "Q5_K");
    model.arch = mint_arch_find("qwen3");
    model.n_head_kv = 8;
    cr_assert_eq(mint_mix_plan(&model, t, 80, &p, out, NULL, &err), MINT_OK);
    cr_expect_str_eq(mint_type_name(out[11].type), "Q4_K");
}

Test(mix_options, refusals) {
    tinyllama m;
    tinyllama_init(&m);
    mint_mix_choice out[TL_N];
    mint_err err;
    mint_mix_params p = mint_mix_default_params(MINT_FTYPE_Q2_K_S);
    cr_expect_eq(mint_mix_plan(&m.model, m.t, TL_N, &p, out, NULL, &err), MINT_E_ARG);
    cr_expect(strstr(err.msg, "importance matrix"), "%s", err.msg);
    p.has_imatrix = true; // llama-quantize makes Q2_K_S given --imatrix
    cr_expect_eq(mint_mix_plan(&m.model, m.t, TL_N, &p, out, NULL, &err), MINT_OK, "%s", err.msg);
    p = mint_mix_default_params((mint_ftype)22); // IQ3_XS, not in mint's table
    cr_expect_eq(mint_mix_plan(&m.model, m.t, TL_N, &p, out, NULL, &err), MINT_E_ARG);
    p = mint_mix_default_params(MINT_FTYPE_Q4_K_M);
    p.output_type = MINT_TYPE_Q8_K;
    cr_expect_eq(mint_mix_plan(&m.model, m.t, TL_N, &p, out, NULL, &err), MINT_E_UNSUPPORTED);
    p.output_type = -1;
    m.model.n_layer = 23; // 22 attn_v tensors for 23 layers: a hybrid's count, as llama.cpp's
    cr_expect_eq(mint_mix_plan(&m.model, m.t, TL_N, &p, out, NULL, &err), MINT_OK, "%s", err.msg);
    m.model.n_layer = 0;
    cr_expect_eq(mint_mix_plan(&m.model, m.t, TL_N, &p, out, NULL, &err), MINT_E_ARG);
}

// ---------------------------------------------------------------------------------------------
// File type names

Test(mix_ftype, names_as_llama_quantize_takes_them) {
    static const struct {
        const char *name;
        mint_ftype ft;
    } ok[] = {
        {"Q4_K_M", MINT_FTYPE_Q4_K_M},       {"q4_k_m", MINT_FTYPE_Q4_K_M},
        {"Q4_K", MINT_FTYPE_Q4_K_M},         {"q3_k", MINT_FTYPE_Q3_K_M},
        {"Q5_K", MINT_FTYPE_Q5_K_M},         {"F16", MINT_FTYPE_F16},
        {"bf16", MINT_FTYPE_BF16},           {"F32", MINT_FTYPE_F32},
        {"15", MINT_FTYPE_Q4_K_M},           {"0", MINT_FTYPE_F32},
        {"21", MINT_FTYPE_Q2_K_S},           {"q8_0", MINT_FTYPE_Q8_0},
        {"mxfp4_moe", MINT_FTYPE_MXFP4_MOE}, {"38", MINT_FTYPE_MXFP4_MOE},
        {"iq4_nl", MINT_FTYPE_IQ4_NL},       {"25", MINT_FTYPE_IQ4_NL},
        {"IQ4_XS", MINT_FTYPE_IQ4_XS},       {"30", MINT_FTYPE_IQ4_XS},
    };
    mint_err err;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        mint_ftype ft;
        cr_expect_eq(mint_ftype_from_name(ok[i].name, &ft, &err), MINT_OK, "%s", ok[i].name);
        cr_expect_eq(ft, ok[i].ft, "%s", ok[i].name);
    }
    mint_ftype ft;
    cr_expect_eq(mint_ftype_from_name("Q9_K", &ft, &err), MINT_E_ARG);
    cr_expect(strstr(err.msg, "Q9_K") && strstr(err.msg, "Q4_K_M") && strstr(err.msg, "BF16"), "%s",
              err.msg);
    cr_expect_eq(mint_ftype_from_name("4", &ft, &err), MINT_E_ARG); // Q4_1_SOME_F16, removed
    cr_expect_eq(mint_ftype_from_name("", &ft, &err), MINT_E_ARG);
    cr_expect_eq(mint_ftype_from_name("COPY", &ft, &err), MINT_E_UNSUPPORTED);

    cr_expect_str_eq(mint_ftype_name(MINT_FTYPE_Q3_K_M), "Q3_K_M");
    cr_expect_null(mint_ftype_name(99));
    cr_expect_str_eq(mint_ftype_name(19), "IQ2_XXS");
    cr_expect_eq(mint_ftype_base_type(MINT_FTYPE_Q2_K_S), MINT_TYPE_Q2_K);
    cr_expect_eq(mint_ftype_base_type(MINT_FTYPE_Q5_K_M), MINT_TYPE_Q5_K);
    cr_expect_eq(mint_ftype_base_type(MINT_FTYPE_BF16), MINT_TYPE_BF16);
    cr_expect_eq(mint_ftype_base_type(5), -1);
    cr_expect_eq(mint_ftype_file_type(MINT_FTYPE_Q4_K_M), 15);
    cr_expect_eq(mint_ftype_file_type(99), UINT32_MAX);
}
