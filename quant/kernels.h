// kernels.h - the table of compute kernels, chosen once at start-up from the CPU's features.
//
// For every weight type T the table holds:
//   vec_dot_type  the type activations are converted to before multiplying with T (ggml's rule:
//                 F32->F32, F16->F16, BF16->BF16, Q4_0/Q5_0/Q8_0/MXFP4/IQ4_NL->Q8_0,
//                 Q4_1/Q5_1->Q8_1, K-quants/TQ1_0/TQ2_0/IQ4_XS/IQ3_XXS/IQ3_S->Q8_K), so that
//                 mint rounds activations exactly as llama.cpp does;
//   to_float      dequantize a row (token embedding lookup, tests);
//   from_float    convert a row of f32 activations to T (used for T = an activation type);
//   vec_dot       one weight row . one converted activation row -> one float;
//   gemm          a tile: nr weight rows x nc activation rows -> y[c * y_stride + r].
//
// Every entry of every instruction set has a scalar reference (the *_ref functions, always
// built, no intrinsics), which is the specification. The rules the SIMD versions keep:
//   - from_float writes the same bytes as the reference (activation rounding is exact);
//   - integer inner sums are exact, so for block types vec_dot may differ from the reference
//     only in the order of the float accumulation over blocks (tested within a budget);
//   - gemm gives, for every element, the bit-identical value vec_dot of the same ISA gives, so
//     a prompt evaluated as one batch and token by token produce the same logits;
//   - nothing depends on the thread count (the caller splits rows, never a dot product).
#ifndef MINT_QUANT_KERNELS_H
#define MINT_QUANT_KERNELS_H

#include "quant/types.h"

#include <stddef.h>
#include <stdint.h>

// y[0..n) = dequantized x (n a multiple of the block size).
typedef void (*mint_to_float_fn)(const void *restrict x, float *restrict y, int64_t n);
// y = x converted to the type (n a multiple of the block size).
typedef void (*mint_from_float_fn)(const float *restrict x, void *restrict y, int64_t n);
// *s = dot(w[0..n), a[0..n)) with w of the weight type and a of its vec_dot_type.
typedef void (*mint_vec_dot_fn)(int64_t n, float *restrict s, const void *restrict w,
                                const void *restrict a);
// y[c * y_stride + r] = dot(w row r, a row c) for r < nr, c < nc; rows are w_stride / a_stride
// bytes apart. Bit-identical to vec_dot per element.
typedef void (*mint_gemm_fn)(int64_t n, const void *restrict w, size_t w_stride, int nr,
                             const void *restrict a, size_t a_stride, int nc, float *restrict y,
                             size_t y_stride);

typedef struct mint_type_kernels {
    mint_type vec_dot_type;        // activation type for this weight type
    mint_to_float_fn to_float;     // dequantize (NULL if not computable)
    mint_from_float_fn from_float; // convert f32 -> this type (activation types, F16, BF16)
    mint_vec_dot_fn vec_dot;       // weight row . activation row
    mint_gemm_fn gemm;             // batched tile, or NULL: the matmul then calls vec_dot
    mint_gemm_fn gemm_packed;      // gemm over rows repacked by quant/pack.h (w: the first
                                   // group, w_stride: mint_pack_group_bytes), bit-identical to
                                   // gemm; NULL when the level reads only the file's layout
    int token_block;               // tokens per tile the gemm wants from a batch (0: the
                                   // executor's default; runtime/engine/exec.c)
} mint_type_kernels;

// ---------------------------------------------------------------------------------------------
// Float vector kernels: the per-element work of softmax and attention, and attention's two small
// products. Unlike the dot products above, every entry gives the reference's bits exactly on
// every level (tests/test_vec.c compares them with memcmp): an output element is one fixed
// sequence of IEEE operations, each rounded once (fused multiply-adds where the comment says
// so), and the vector lanes only run that sequence side by side. The one reduction whose order
// matters, exp_sum's double sum, has its order fixed below. e^x is mint's own (quant/vec_exp.h:
// at most 1.013 ulp from the exact value), not the C library's.

// y[i] = e^x[i] for i < n; y may be x.
typedef void (*mint_vexp_fn)(const float *x, float *y, int64_t n);
// The largest of m and x[0..n) (a NaN x[i] is skipped); a zero result is +0.
typedef float (*mint_vmax_fn)(const float *x, int64_t n, float m);
// x[i] = e^(x[i] - m) for i < n (the difference rounded to f32 first); returns the sum of the
// new x[i] in double: lane l = i mod 16 adds its elements in order, starting from +0, then the
// lanes combine as l += l + 8, l += l + 4, l += l + 2 (l below the step), and lane 0 + lane 1.
typedef double (*mint_vexp_sum_fn)(float *x, int64_t n, float m);
// x[i] = x[i] * c for i < n.
typedef void (*mint_vscale_fn)(float *x, int64_t n, float c);
// x[i] = x[i] rounded to f16 (RNE, as mint_f32_to_f16) and widened back, for i < n.
typedef void (*mint_vround_fn)(float *x, int64_t n);
// Scores against transposed keys (kt row i = dimension i of nk keys):
//   s[r * s_stride + j] = (sum_{i < d} q[r * q_stride + i] * kt[i * kt_stride + j]) * scale
// for r < nr, j < nk; the sum is one chain of fused multiply-adds in i order from +0. Strides
// are in elements; kt holds f32 or f16 (the function's type).
typedef void (*mint_qk_fn)(int64_t d, const float *q, size_t q_stride, int nr, const void *kt,
                           size_t kt_stride, int nk, float scale, float *s, size_t s_stride);
// Probabilities times value rows (v row j = the d values of key j):
//   o[r * o_stride + i] = fma(o[r * o_stride + i], a[r], sum_{j < nk} p[r * p_stride + j] *
//   v[j * v_stride + i])
// for r < nr, i < d; the sum is one chain of fused multiply-adds in j order from +0; a == NULL
// means a[r] = 1 (o + sum, exactly). Strides in elements; v holds f32 or f16, or quantized rows
// (v_stride then in bytes) whose elements are the type's to_float (quant/attn_elem.h).
typedef void (*mint_pv_fn)(int64_t d, const float *p, size_t p_stride, int nr, const void *v,
                           size_t v_stride, int nk, const float *a, float *o, size_t o_stride);

// One token of one value head of the gated delta rule (ops/delta_net.h): st [s_v][s_k] is the
// state (column j at st + j * s_k), q and k [s_k], v and out [s_v]. For each column j in order:
//   col *= decay;  a = dot(col, k);  d = (v[j] - a) * beta;  col += k * d;
//   out[j] = dot(col, q) * scale
// each product rounded before it is added (no fused multiply-add); a dot sums element i into
// lane i % 16 in i order from +0, then the lanes combine l += l + 8, l += l + 4, and
// (0 + 2) + (1 + 3) (quant/vec_delta.h).
typedef void (*mint_vdelta_fn)(float *st, int s_k, int s_v, const float *q, const float *k,
                               const float *v, float decay, float beta, float scale, float *out);

typedef struct mint_vec_kernels {
    mint_vexp_fn exp;
    mint_vmax_fn max;
    mint_vexp_sum_fn exp_sum;
    mint_vscale_fn scale;
    mint_vround_fn round_f16;
    mint_qk_fn qk_f32, qk_f16;   // keys of an f32 / f16 cache
    mint_pv_fn pv_f32, pv_f16;   // values of an f32 / f16 cache
    mint_pv_fn pv_q8_0, pv_q4_0; // values of a Q8_0 / Q4_0 cache: v_stride in bytes, d a
                                 // multiple of 32 (quant/attn_elem.h)
    mint_vdelta_fn delta_step;   // the gated delta rule, one token of one head
} mint_vec_kernels;

typedef enum mint_isa {
    MINT_ISA_REF = 0,        // scalar reference C, always available
    MINT_ISA_AVX2 = 1,       // x86: AVX2 + FMA + F16C (Haswell, Zen 1 and later)
    MINT_ISA_AVX512 = 2,     // x86: AVX-512 F/BW/VL/DQ (Skylake-X, Zen 4)
    MINT_ISA_AVX512VNNI = 3, // x86: + AVX-512 VNNI (Cascade Lake, Ice Lake, Zen 4)
    MINT_ISA_NEON = 4,       // aarch64 baseline NEON
    MINT_ISA_NEONDOT = 5,    // aarch64 NEON + dotprod (+fp16) (Armv8.2: Graviton 2, Apple M1)
    MINT_ISA_COUNT = 6,
} mint_isa;

typedef struct mint_kernels {
    mint_isa isa;                         // level this table was built for
    const char *name;                     // "avx2", "ref", ...
    mint_type_kernels t[MINT_TYPE_COUNT]; // per type; zeroed for types mint cannot compute with,
                                          // except Q8_1 / Q8_K: to_float + from_float only
    mint_vec_kernels vec;                 // float vector kernels (softmax, attention)
} mint_kernels;

// The table for the best level this CPU supports, or the level forced by the environment
// variable MINT_ISA (ref, avx2, avx512, avx512vnni, neon, neondot; a level the CPU lacks is
// lowered to the best available one). Built once, thread-safe.
const mint_kernels *mint_kernels_get(void);

// The table for one specific level, or NULL when the CPU or the build does not have it (tests
// compare every available level against MINT_ISA_REF).
const mint_kernels *mint_kernels_for(mint_isa isa);

// llama.cpp's reference weight quantizer for a weight type (what llama-quantize writes without an
// importance matrix, byte for byte): F32 (a copy), F16 and BF16 (RNE), Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0, MXFP4, Q2_K ... Q6_K, TQ1_0, TQ2_0, IQ4_NL / IQ4_XS, IQ3_XXS / IQ3_S and IQ2_S (their
// weighted search with no importance, the only quantizer they have); IQ2_XXS / IQ2_XS, which
// llama.cpp quantizes only with an importance, get their search with a unit one (all 1: for
// tests and synthetic files). NULL for any other type. These are not the activation conversions
// of the kernel table (Q8_0 weights round with roundf, Q8_0 activations with RNE). Always
// scalar.
typedef mint_from_float_fn mint_quantize_row_fn;
mint_quantize_row_fn mint_quantizer_ref(mint_type t);

// A whole matrix as llama-quantize quantizes it (ggml's quantize_<t>(src, dst, nrow, n_per_row,
// imatrix)): nrow rows of n_per_row floats x -> nrow rows of blocks y, byte for byte.
// imatrix[n_per_row] is the importance of each column (the mean squared activation an
// importance matrix records for the matrix, or for one expert of a stack), or NULL. Without one
// it writes what mint_quantizer_ref writes row by row, except for the types whose quantizer is
// always the weighted search (the i-quants). false (and nothing written) when mint has no
// quantizer for t. Always scalar (quant/quant_rows_ref.c).
bool mint_quantize_rows_ref(mint_type t, const float *restrict x, void *restrict y, int64_t nrow,
                            int64_t n_per_row, const float *imatrix);

// Whether llama-quantize refuses to write t without an importance matrix (IQ3_XXS, IQ2_XXS,
// IQ2_XS, IQ2_S, IQ1_S, IQ1_M: its rule, not their quantizers', which weigh by x^2 without one).
bool mint_quantize_needs_imatrix(mint_type t);

// Best level the CPU supports (ignores MINT_ISA).
mint_isa mint_isa_detect(void);
const char *mint_isa_str(mint_isa isa);
// Level by name (case-insensitive "ref", "avx2", ...); -1 when no level has that name.
int mint_isa_from_name(const char *name);

// ---------------------------------------------------------------------------------------------
// Filling the tables: one const mint_kernels per level, each in its quant/kernels_<level>.c and
// written the same way (designated initializers, one line per slot), so that a level's file shows
// which function fills which slot. The reference table is complete; every other level lists only
// what it implements and leaves the rest 0. quant/dispatch.c builds a level's table once at
// start-up from the reference, then each level on the way up to it:
//   ref <- avx2 <- avx512 <- avx512vnni,  ref <- neon <- neondot;
// a nonzero to_float, from_float or float vector kernel replaces the one below, and a level that
// sets a type's vec_dot brings that type's gemm, gemm_packed and token_block along, 0 included, so
// that gemm and vec_dot of one table always come from the same code. vec_dot_type is the
// reference's.
extern const mint_kernels mint_kernels_ref;
extern const mint_kernels mint_kernels_avx2;       // quant/kernels_avx2.c, x86 builds only
extern const mint_kernels mint_kernels_avx512;     // quant/kernels_avx512.c, x86 builds only
extern const mint_kernels mint_kernels_avx512vnni; // quant/kernels_avx512vnni.c, x86 only
extern const mint_kernels mint_kernels_neon;       // quant/kernels_neon.c, aarch64 builds only
extern const mint_kernels mint_kernels_neondot;    // quant/kernels_neondot.c, aarch64 only

// Kernel names: <what>_<types>_<level>, e.g. vec_dot_q4_0_q8_0_avx2. A source compiled once per
// level (quant/tiles.h, quant/attn_tile.h, quant/legacy_x512.h, quant/kquant_x512.h,
// quant/dot_legacy_neon.h, quant/dot_k_neon.h) names its functions MINT_LEVEL_NAME(what_types);
// the .c file that compiles it for a level defines MINT_LEVEL_NAME(name) as name##_<level> first.

// Declares the dot product and gemm of one weight type at one level (signatures above).
#define MINT_DECLARE_DOT(name, level)                                                              \
    void vec_dot_##name##_##level(int64_t n, float *restrict s, const void *restrict w,            \
                                  const void *restrict a);                                         \
    void gemm_##name##_##level(int64_t n, const void *restrict w, size_t w_stride, int nr,         \
                               const void *restrict a, size_t a_stride, int nc, float *restrict y, \
                               size_t y_stride);
// Declares the gemm over packed rows of one weight type at one level (quant/pack.h).
#define MINT_DECLARE_GEMM_PACKED(name, level)                                                      \
    void gemm_packed_##name##_##level(int64_t n, const void *restrict w, size_t w_stride, int nr,  \
                                      const void *restrict a, size_t a_stride, int nc,             \
                                      float *restrict y, size_t y_stride);
// Declares the four attention products of one level (quant/attn_tile.h).
#define MINT_DECLARE_ATTN(level)                                                                   \
    void attn_qk_f32_##level(int64_t d, const float *q, size_t q_stride, int nr, const void *kt,   \
                             size_t kt_stride, int nk, float scale, float *s, size_t s_stride);    \
    void attn_qk_f16_##level(int64_t d, const float *q, size_t q_stride, int nr, const void *kt,   \
                             size_t kt_stride, int nk, float scale, float *s, size_t s_stride);    \
    void attn_pv_f32_##level(int64_t d, const float *p, size_t p_stride, int nr, const void *v,    \
                             size_t v_stride, int nk, const float *a, float *o, size_t o_stride);  \
    void attn_pv_f16_##level(int64_t d, const float *p, size_t p_stride, int nr, const void *v,    \
                             size_t v_stride, int nk, const float *a, float *o, size_t o_stride);  \
    void attn_pv_q8_0_##level(int64_t d, const float *p, size_t p_stride, int nr, const void *v,   \
                              size_t v_stride, int nk, const float *a, float *o, size_t o_stride); \
    void attn_pv_q4_0_##level(int64_t d, const float *p, size_t p_stride, int nr, const void *v,   \
                              size_t v_stride, int nk, const float *a, float *o, size_t o_stride);

#endif // MINT_QUANT_KERNELS_H
