// test_ops_ref.c - every kernel table against llama.cpp's own matmul outputs.
//
// reference/ops/<model>.bin holds, for tokens [1, 10, 20, 30], the input and output of every
// layer-0 matmul and of the output head as llama.cpp computed them
// (docs/tolerances.md 1.4). Here y = W x is recomputed the way llama.cpp does it:
// each input row is converted once with from_float of the weight type's vec_dot_type, then every
// output element is one dot product — with the reference table's vec_dot, and with every SIMD level
// this CPU has through the same tile call the matmul op makes (gemm). Budget
// (docs/tolerances.md 3.5): max|y - y_ref| / max|y_ref| <= 2e-6 for every op; plain
// f32 activations would be 1e-4 .. 2e-2 off, so this proves the activation rounding too.
#include "helpers/helpers.h"
#include "ops/ops.h"
#include "quant/kernels.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OP_TOLERANCE 2e-6

// The 24 fixture files of reference/ops/index.json (the test ops_ref.index_lists_these_files
// checks that the index holds exactly these).
static const char *const op_files[] = {
    "stories260K.bin",       "stories260K-f16.bin",   "stories260K-q8_0.bin",
    "stories260K-q4_0.bin",  "stories260K-q4_1.bin",  "stories260K-q5_0.bin",
    "stories260K-q5_1.bin",  "tiny256-f32.bin",       "tiny256-f16.bin",
    "tiny256-bf16.bin",      "tiny256-q8_0.bin",      "tiny256-q4_0.bin",
    "tiny256-q4_1.bin",      "tiny256-q5_0.bin",      "tiny256-q5_1.bin",
    "tiny256-q2_k.bin",      "tiny256-q3_k_m.bin",    "tiny256-q4_k_m.bin",
    "tiny256-q5_k_m.bin",    "tiny256-q6_k.bin",      "tiny256-q2_k-pure.bin",
    "tiny256-q3_k-pure.bin", "tiny256-q4_k-pure.bin", "tiny256-q5_k-pure.bin",
};
#define N_OP_FILES (sizeof op_files / sizeof op_files[0])

// One record of a .bin: a named row-major [ne1][ne0] float matrix.
typedef struct record {
    char name[65];     // NUL-terminated
    int64_t ne0, ne1;  // row length, number of rows
    const float *data; // [ne1][ne0], points into the file buffer
} record;

// Splits a fixture file into its records (at most cap). Fails the test on a malformed file.
static int parse_records(const uint8_t *buf, size_t len, record *recs, int cap) {
    size_t off = 0;
    int n = 0;
    while (off < len) {
        cr_assert(n < cap, "more than %d records", cap);
        cr_assert(len - off >= 80, "truncated record header at byte %zu", off);
        record *r = &recs[n++];
        memcpy(r->name, buf + off, 64);
        r->name[64] = '\0';
        memcpy(&r->ne0, buf + off + 64, 8);
        memcpy(&r->ne1, buf + off + 72, 8);
        off += 80;
        size_t bytes = (size_t)(r->ne0 * r->ne1) * sizeof(float);
        cr_assert(r->ne0 > 0 && r->ne1 > 0 && len - off >= bytes, "bad record '%s'", r->name);
        r->data = (const float *)(buf + off); // records are 4-byte aligned (80-byte headers)
        off += bytes;
    }
    return n;
}

static const record *find_record(const record *recs, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(recs[i].name, name) == 0) return &recs[i];
    cr_assert_fail("record '%s' missing", name);
    return NULL;
}

// y = W x for one op with the reference table; returns max|y - y_ref| / max|y_ref|.
static double run_op(const mint_kernels *k, const mint_tensor_info *w, const record *x,
                     const record *yref, const char *vec_dot_type) {
    const mint_type_kernels *wk = &k->t[w->type];
    cr_assert_not_null(wk->vec_dot, "no vec_dot for %s", mint_type_name(w->type));
    cr_assert_str_eq(mint_type_name(wk->vec_dot_type), vec_dot_type, "vec_dot_type of %s",
                     mint_type_name(w->type));
    const mint_type_kernels *ak = &k->t[wk->vec_dot_type];
    cr_assert_not_null(ak->from_float);

    int64_t n_in = w->ne[0], n_out = w->ne[1];
    cr_assert_eq(x->ne0, n_in, "input '%s' has %lld columns, weight %lld", x->name,
                 (long long)x->ne0, (long long)n_in);
    cr_assert_eq(yref->ne0, n_out);
    cr_assert_eq(yref->ne1, x->ne1);
    size_t w_row = mint_row_size(w->type, n_in), a_row = mint_row_size(wk->vec_dot_type, n_in);
    cr_assert(w_row > 0 && a_row > 0);

    uint8_t *act = malloc(a_row * (size_t)x->ne1);
    float *y = malloc(sizeof(float) * (size_t)(n_out * x->ne1));
    for (int64_t t = 0; t < x->ne1; t++) ak->from_float(x->data + t * n_in, act + t * a_row, n_in);
    // All rows of the weight against all tokens in one tile, as op_matmul's batched path does.
    mint_gemm_tile(wk, n_in, w->data, w_row, (int)n_out, act, a_row, (int)x->ne1, y, (size_t)n_out);
    double max_err = 0, max_ref = 0;
    for (int64_t t = 0; t < x->ne1; t++)
        for (int64_t r = 0; r < n_out; r++) {
            double ref = yref->data[t * n_out + r];
            max_err = fmax(max_err, fabs((double)y[t * n_out + r] - ref));
            max_ref = fmax(max_ref, fabs(ref));
        }
    free(y);
    free(act);
    cr_assert(max_ref > 0);
    return max_err / max_ref;
}

// The file's entry in index.json, or a failure.
static json_object *index_entry(json_object *index, const char *file) {
    json_object *files = mt_jget(index, "files");
    json_object *entry;
    cr_assert(json_object_object_get_ex(files, file, &entry), "index.json has no entry %s", file);
    return entry;
}

static void check_file(const char *file) {
    json_object *index = mt_json_data("reference/ops/index.json");
    json_object *entry = index_entry(index, file);
    const char *model = json_object_get_string(mt_jget(entry, "model"));

    char rel[256];
    snprintf(rel, sizeof rel, "reference/ops/%s", file);
    size_t len;
    uint8_t *buf = mt_read_file(mt_data_path(rel), &len);
    cr_assert_not_null(buf);
    record recs[32];
    int n_recs = parse_records(buf, len, recs, 32);

    mint_err err;
    mint_file *f = NULL;
    cr_assert_eq(mint_file_open(mt_data_path(model), &f, &err), MINT_OK, "%s", err.msg);
    const mint_kernels *levels[MINT_ISA_COUNT];
    int n_levels = 0;
    for (int isa = 0; isa < MINT_ISA_COUNT; isa++)
        if (mint_kernels_for((mint_isa)isa)) levels[n_levels++] = mint_kernels_for((mint_isa)isa);
    cr_assert(n_levels >= 1 && levels[0]->isa == MINT_ISA_REF);

    json_object *ops = mt_jget(entry, "ops");
    size_t n_ops = json_object_array_length(ops);
    cr_assert(n_ops >= 8, "%s: only %zu ops", file, n_ops);
    for (size_t i = 0; i < n_ops; i++) {
        json_object *op = mt_jidx(ops, i);
        const char *wname = json_object_get_string(mt_jget(op, "weight"));
        mint_tensor_info w;
        cr_assert_eq(mint_file_find_tensor(f, wname, &w), MINT_OK, "%s: no tensor %s", model,
                     wname);
        cr_assert_str_eq(mint_type_name(w.type),
                         json_object_get_string(mt_jget(op, "weight_type")));
        const record *x = find_record(recs, n_recs, json_object_get_string(mt_jget(op, "input")));
        const record *y = find_record(recs, n_recs, json_object_get_string(mt_jget(op, "output")));
        for (int l = 0; l < n_levels; l++) {
            double rel_err =
                run_op(levels[l], &w, x, y, json_object_get_string(mt_jget(op, "vec_dot_type")));
            cr_expect(rel_err <= OP_TOLERANCE,
                      "%s: %s (%s) with %s kernels: relative error %.3g > "
                      "%.0e",
                      file, wname, mint_type_name(w.type), levels[l]->name, rel_err, OP_TOLERANCE);
        }
    }
    mint_file_close(f);
    free(buf);
    json_object_put(index);
}

// Criterion runs each parameter in a fresh process image, so a parameter carries an index, not a
// pointer into this one.
ParameterizedTestParameters(ops_ref, matmul_matches_llama_cpp) {
    static int idx[N_OP_FILES];
    for (size_t i = 0; i < N_OP_FILES; i++) idx[i] = (int)i;
    return cr_make_param_array(int, idx, N_OP_FILES);
}

ParameterizedTest(int *i, ops_ref, matmul_matches_llama_cpp, .timeout = MT_HANG(120)) {
    check_file(op_files[*i]);
}

Test(ops_ref, index_lists_these_files) {
    json_object *index = mt_json_data("reference/ops/index.json");
    json_object *files = mt_jget(index, "files");
    cr_assert_eq((size_t)json_object_object_length(files), N_OP_FILES);
    for (size_t i = 0; i < N_OP_FILES; i++) index_entry(index, op_files[i]);
    json_object_put(index);
}
