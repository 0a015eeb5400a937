// test_pack.c - the repacked weight layout (quant/pack.h) and the kernels that read it: packing
// is a permutation of the file's bytes (unpacking gives them back), and every level's
// gemm_packed over packed rows equals its gemm over the file's rows bit for bit, for one token
// and for tiles, on row counts that are not multiples of the 16-row group; and a few columns
// together give each column the bits of that column alone.
#include "helpers/hang.h"
#include "mint.h"
#include "quant/kernels.h"
#include "quant/pack.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const mint_type packable[] = {
    MINT_TYPE_Q4_0,  MINT_TYPE_Q4_1,   MINT_TYPE_Q5_0,   MINT_TYPE_Q5_1,  MINT_TYPE_Q8_0,
    MINT_TYPE_MXFP4, MINT_TYPE_IQ4_NL, MINT_TYPE_Q2_K,   MINT_TYPE_Q3_K,  MINT_TYPE_Q4_K,
    MINT_TYPE_Q5_K,  MINT_TYPE_Q6_K,   MINT_TYPE_IQ4_XS, MINT_TYPE_TQ2_0, MINT_TYPE_TQ1_0,
};
#define N_PACKABLE (sizeof packable / sizeof *packable)

// The float types: quant/pack.h's second layout, rows of a multiple of 16 elements.
static const mint_type floats[] = {MINT_TYPE_F32, MINT_TYPE_F16, MINT_TYPE_BF16};
#define N_FLOATS (sizeof floats / sizeof *floats)

// Every type with a packed layout: the block types, then the floats.
static mint_type packed_type(size_t i) {
    return i < N_PACKABLE ? packable[i] : floats[i - N_PACKABLE];
}
#define N_PACKED (N_PACKABLE + N_FLOATS)

// Elements of one unit of a type's layout: its block, or a float chunk of 16.
static int64_t unit_of(mint_type t) {
    return mint_pack_float_size(t, 16) ? 16 : mint_type_get(t)->blck;
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static float frand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 4.0 - 2.0);
}

typedef struct mats {
    int64_t n;
    int rows, cols;
    uint8_t *w, *a, *packed;
    size_t w_stride, a_stride, gb;
} mats;

// rows weight rows of type t (quantized from random data) and cols activation rows.
static mats make(mint_type t, int64_t n, int rows, int cols) {
    const mint_kernels *ref = mint_kernels_for(MINT_ISA_REF);
    const mint_type at = ref->t[t].vec_dot_type;
    mats m = {n, rows, cols, NULL, NULL, NULL, 0, 0, 0};
    m.w_stride = (size_t)mint_row_size(t, n);
    m.a_stride = (size_t)mint_row_size(at, n);
    m.w = malloc(m.w_stride * (size_t)rows);
    m.a = malloc(m.a_stride * (size_t)cols);
    float *x = malloc((size_t)n * sizeof *x);
    for (int r = 0; r < rows; r++) {
        for (int64_t i = 0; i < n; i++) x[i] = frand();
        mint_quantizer_ref(t)(x, m.w + (size_t)r * m.w_stride, n);
    }
    for (int c = 0; c < cols; c++) {
        for (int64_t i = 0; i < n; i++) x[i] = frand();
        ref->t[at].from_float(x, m.a + (size_t)c * m.a_stride, n);
    }
    free(x);
    m.gb = mint_pack_group_bytes(t, n);
    const size_t bytes = mint_pack_bytes(t, n, rows);
    m.packed = aligned_alloc(64, bytes);
    mint_pack_rows_ref(t, n, m.w, m.w_stride, rows, m.packed);
    return m;
}

static void release(mats *m) {
    free(m->w);
    free(m->a);
    free(m->packed);
}

// Seven blocks per row: with 2-byte rests three pairs and an unpaired last block, with MXFP4's
// 1-byte rests a run of four and a shorter run of three.
Test(pack, is_a_permutation_of_the_rows) {
    for (size_t ti = 0; ti < N_PACKABLE; ti++) {
        const mint_type t = packable[ti];
        const mint_pack_layout *L = mint_pack_layout_of(t);
        cr_assert_not_null(L);
        const int64_t blk = mint_type_get(t)->blck;
        cr_assert_eq(L->bs, (int)mint_type_get(t)->size);
        cr_assert_eq(4 * L->body_dwords + L->rest_bytes, L->bs);
        cr_assert_eq(L->rest_off >= 0, L->rest_bytes > 0);
        const size_t nb = 7;
        mats m = make(t, (int64_t)nb * blk, 37, 1);
        cr_assert_eq(m.gb % 64, 0);
        cr_assert_eq(m.gb, (16 * nb * (size_t)L->bs + 63) / 64 * 64);
        const int nd = L->body_dwords, rb = L->rest_bytes;
        // Blocks per run of rests: as many as fill 64 bytes with 16 rows' rests.
        const size_t run = rb ? 64 / (16 * (size_t)rb) : 1;
        // Read every byte back from where the layout says it is.
        for (int r = 0; r < 48; r++) {
            const uint8_t *g = m.packed + (size_t)(r / 16) * m.gb;
            for (size_t b = 0; b < nb; b++) {
                uint8_t blkb[256];
                memset(blkb, 0, sizeof blkb);
                // Where the layout puts block b: bodies in order, the rests of a run after the
                // run's bodies (the last run is shorter).
                const size_t first = b / run * run, in_run = nb - first < run ? nb - first : run;
                const size_t base = rb ? (b / run) * (run * (size_t)nd + 1) * 64 : 0;
                const size_t at = rb ? base + (b % run) * (size_t)nd * 64 : b * (size_t)nd * 64;
                const size_t rest = base + in_run * (size_t)nd * 64 + (b % run) * 16 * (size_t)rb;
                cr_assert_eq(at, mint_pack_body_at(nd, rb, (int64_t)nb, (int64_t)b));
                if (rb) cr_assert_eq(rest, mint_pack_rest_at(nd, rb, (int64_t)nb, (int64_t)b));
                for (int j = 0; j < nd; j++)
                    memcpy(blkb + L->body_off + 4 * j,
                           g + at + (size_t)j * 64 + 4 * (size_t)(r % 16), 4);
                if (rb)
                    memcpy(blkb + L->rest_off, g + rest + (size_t)rb * (size_t)(r % 16),
                           (size_t)rb);
                if (r < m.rows) {
                    cr_assert_eq(memcmp(blkb, m.w + (size_t)r * m.w_stride + b * (size_t)L->bs,
                                        (size_t)L->bs),
                                 0, "%s row %d block %zu", mint_type_name(t), r, b);
                } else {
                    for (int i = 0; i < L->bs; i++)
                        cr_assert_eq(blkb[i], 0, "%s padding row %d", mint_type_name(t), r);
                }
            }
        }
        release(&m);
    }
    // The 2-byte rests where they always were (Q4_0: 4 body dwords), and MXFP4's runs of four.
    cr_assert_eq(mint_pack_rest_at(4, 2, 7, 3), 576 + 256 * 2 + 32);
    cr_assert_eq(mint_pack_rest_at(4, 2, 7, 6), 3 * 576 + 256);
    cr_assert_eq(mint_pack_body_at(4, 1, 7, 5), 1088 + 256);
    cr_assert_eq(mint_pack_rest_at(4, 1, 7, 2), 1024 + 32);
    cr_assert_eq(mint_pack_rest_at(4, 1, 7, 6), 1088 + 768 + 32);
    cr_assert_null(mint_pack_layout_of(MINT_TYPE_F16));
    cr_assert_null(mint_pack_layout_of(MINT_TYPE_Q8_K));
}

// The float layout: chunk k of row r at (16 k + r) * 16 * element size in its group, zero rows
// past the last; rows of a length that is not a multiple of 16, and other types, not packed.
Test(pack, floats_interleave_chunks_of_16_elements) {
    for (size_t ti = 0; ti < N_FLOATS; ti++) {
        const mint_type t = floats[ti];
        const size_t es = mint_pack_float_size(t, 48);
        cr_assert_eq(es, (size_t)mint_type_get(t)->size);
        mats m = make(t, 48, 37, 1);
        cr_assert_eq(m.gb, 16 * 48 * es);
        for (int r = 0; r < 48; r++) {
            const uint8_t *g = m.packed + (size_t)(r / 16) * m.gb;
            for (int64_t k = 0; k < 3; k++) {
                const uint8_t *at = g + ((size_t)k * 16 + (size_t)(r % 16)) * 16 * es;
                cr_assert_eq(at, g + mint_pack_chunk_at(es, k, r % 16));
                if (r < m.rows) {
                    cr_assert_eq(
                        memcmp(at, m.w + (size_t)r * m.w_stride + (size_t)k * 16 * es, 16 * es), 0,
                        "%s row %d chunk %lld", mint_type_name(t), r, (long long)k);
                } else {
                    for (size_t i = 0; i < 16 * es; i++)
                        cr_assert_eq(at[i], 0, "%s padding row %d", mint_type_name(t), r);
                }
            }
        }
        release(&m);
        cr_assert_eq(mint_pack_float_size(t, 40), 0);
        cr_assert_eq(mint_pack_group_bytes(t, 40), 0);
    }
    cr_assert_eq(mint_pack_float_size(MINT_TYPE_Q8_0, 64), 0);
    cr_assert_eq(mint_pack_group_bytes(MINT_TYPE_Q8_K, 256), 0);
}

// gemm_packed on packed rows [r0, r0 + nr) (r0 a multiple of 16) against gemm on the file's
// rows, every element bit for bit, nothing outside the tile written.
static void check(const mint_kernels *k, mint_type t, const mats *m, int r0, int nr, int nc) {
    const mint_type_kernels *tk = &k->t[t];
    const size_t ys = (size_t)nr + 5, ny = ys * (size_t)(nc + 1);
    float *y = malloc(ny * sizeof *y), *z = malloc(ny * sizeof *z);
    for (size_t i = 0; i < ny; i++) y[i] = z[i] = NAN;
    tk->gemm(m->n, m->w + (size_t)r0 * m->w_stride, m->w_stride, nr, m->a, m->a_stride, nc, y, ys);
    tk->gemm_packed(m->n, m->packed + (size_t)(r0 / 16) * m->gb, m->gb, nr, m->a, m->a_stride, nc,
                    z, ys);
    for (size_t i = 0; i < ny; i++) {
        const bool inside = i % ys < (size_t)nr && i / ys < (size_t)nc;
        if (inside)
            cr_assert(memcmp(&y[i], &z[i], sizeof *y) == 0,
                      "%s %s n=%lld rows %d+%d x %d: element (%zu,%zu) packed %.9g vs %.9g",
                      k->name, mint_type_name(t), (long long)m->n, r0, nr, nc, i % ys, i / ys, z[i],
                      y[i]);
        else
            cr_assert(isnan(z[i]), "%s %s wrote outside the tile", k->name, mint_type_name(t));
    }
    free(y);
    free(z);
}

Test(pack, gemm_packed_equals_gemm_bit_for_bit, .timeout = MT_HANG(240)) {
    int levels = 0;
    for (int isa = 0; isa < MINT_ISA_COUNT; isa++) {
        const mint_kernels *k = mint_kernels_for((mint_isa)isa);
        if (!k) continue;
        for (size_t ti = 0; ti < N_PACKED; ti++) {
            const mint_type t = packed_type(ti);
            if (!k->t[t].gemm_packed) continue;
            cr_assert_not_null(k->t[t].gemm, "%s %s: gemm_packed without gemm", k->name,
                               mint_type_name(t));
            levels++;
            const int64_t blk = unit_of(t);
            // Short rows (one block), the TinyLlama widths, rows with an odd block count, and
            // six blocks (MXFP4: a run of four rests and a shorter one of two).
            const int64_t widths[] = {blk, 2048, 2816, 3 * blk, 6 * blk};
            for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++) {
                mats m = make(t, widths[wi], 70, 67);
                const int shapes[][3] = {{0, 1, 1},   {0, 16, 1},  {0, 45, 1},   {16, 54, 1},
                                         {0, 70, 1},  {0, 64, 64}, {32, 38, 67}, {0, 17, 2},
                                         {48, 22, 9}, {0, 33, 7}};
                for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
                    check(k, t, &m, shapes[si][0], shapes[si][1], shapes[si][2]);
                release(&m);
            }
        }
    }
    cr_log_info("gemm_packed checked on %d level x type pairs", levels);
}

// Rows longer than a one-token K chunk of the 32-element kernels (the partial sums go through y
// between chunks).
Test(pack, gemm_packed_on_rows_of_128k_elements, .timeout = MT_HANG(120)) {
    const mint_type types[] = {MINT_TYPE_Q4_0, MINT_TYPE_Q8_0, MINT_TYPE_MXFP4,
                               MINT_TYPE_Q4_K, MINT_TYPE_Q6_K, MINT_TYPE_F16};
    for (int isa = 0; isa < MINT_ISA_COUNT; isa++) {
        const mint_kernels *k = mint_kernels_for((mint_isa)isa);
        if (!k) continue;
        for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
            if (!k->t[types[ti]].gemm_packed) continue;
            mats m = make(types[ti], 131072 + 512, 19, 3);
            check(k, types[ti], &m, 0, 19, 1);
            check(k, types[ti], &m, 16, 3, 3);
            release(&m);
        }
    }
}

// The small-batch path (a step of several sequences, a speculative check): gemm_packed over nc
// columns gives every column the bits of the one-token call (nc = 1) on that column alone, for
// every nc up to past the small-batch limit (16) and rows long enough to take several K chunks
// of the 32-element kernels, so batch = each sequence alone stays exact.
Test(pack, small_batches_equal_one_token_per_column, .timeout = MT_HANG(240)) {
    int pairs = 0;
    for (int isa = 0; isa < MINT_ISA_COUNT; isa++) {
        const mint_kernels *k = mint_kernels_for((mint_isa)isa);
        if (!k) continue;
        for (size_t ti = 0; ti < N_PACKED; ti++) {
            const mint_type t = packed_type(ti);
            const mint_type_kernels *tk = &k->t[t];
            if (!tk->gemm_packed) continue;
            pairs++;
            const int64_t widths[] = {2048, 5632, 73728 + 256};
            for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++) {
                const int rows = wi == 2 ? 19 : 37, cols = wi == 2 ? 9 : 18;
                mats m = make(t, widths[wi], rows, cols);
                float *one = malloc(sizeof(float) * (size_t)rows * (size_t)cols);
                for (int c = 0; c < cols; c++)
                    tk->gemm_packed(m.n, m.packed, m.gb, rows, m.a + (size_t)c * m.a_stride,
                                    m.a_stride, 1, one + (size_t)c * rows, (size_t)rows);
                const size_t ys = (size_t)rows + 3;
                float *y = malloc(sizeof(float) * ys * (size_t)cols);
                for (int nc = 2; nc <= cols; nc++) {
                    for (size_t i = 0; i < ys * (size_t)cols; i++) y[i] = NAN;
                    tk->gemm_packed(m.n, m.packed, m.gb, rows, m.a, m.a_stride, nc, y, ys);
                    for (int c = 0; c < cols; c++)
                        for (int r = 0; r < (int)ys; r++) {
                            const float v = y[(size_t)c * ys + (size_t)r];
                            if (c >= nc || r >= rows) {
                                cr_assert(isnan(v), "%s %s nc=%d wrote outside", k->name,
                                          mint_type_name(t), nc);
                                continue;
                            }
                            const float o = one[(size_t)c * rows + (size_t)r];
                            cr_assert(memcmp(&v, &o, sizeof v) == 0,
                                      "%s %s n=%lld nc=%d column %d row %d: %.9g, alone %.9g",
                                      k->name, mint_type_name(t), (long long)m.n, nc, c, r, v, o);
                        }
                }
                free(y);
                free(one);
                release(&m);
            }
        }
    }
    cr_log_info("small batches checked on %d level x type pairs", pairs);
}
