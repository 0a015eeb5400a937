// kernels_neondot.c - the NEON dotprod level (Armv8.2-A + dotprod + fp16: Cortex-A55/A76 and
// later, Neoverse N1 / Graviton 2 and later, Apple M1 and later), on top of the neon level.
//
// Only the integer dot products change: the same tile bodies compiled with SDOT
// (quant/simd_neon.h). The float kernels and the activation converters are the neon level's.
#include "quant/kernels.h"
#include "quant/simd_neon.h"

// Sets a weight type's dot product and gemm together, so the two always come from one tile.
static void set_dot(mint_kernels *k, mint_type t, mint_vec_dot_fn vec_dot, mint_gemm_fn gemm) {
    k->t[t].vec_dot = vec_dot;
    k->t[t].gemm = gemm;
}

void mint_kernels_init_neondot(mint_kernels *k) {
    set_dot(k, MINT_TYPE_Q4_0, vec_dot_q4_0_q8_0_neondot, gemm_q4_0_q8_0_neondot);
    set_dot(k, MINT_TYPE_Q4_1, vec_dot_q4_1_q8_1_neondot, gemm_q4_1_q8_1_neondot);
    set_dot(k, MINT_TYPE_Q5_0, vec_dot_q5_0_q8_0_neondot, gemm_q5_0_q8_0_neondot);
    set_dot(k, MINT_TYPE_Q5_1, vec_dot_q5_1_q8_1_neondot, gemm_q5_1_q8_1_neondot);
    set_dot(k, MINT_TYPE_Q8_0, vec_dot_q8_0_q8_0_neondot, gemm_q8_0_q8_0_neondot);
    set_dot(k, MINT_TYPE_Q2_K, vec_dot_q2_K_q8_K_neondot, gemm_q2_K_q8_K_neondot);
    set_dot(k, MINT_TYPE_Q3_K, vec_dot_q3_K_q8_K_neondot, gemm_q3_K_q8_K_neondot);
    set_dot(k, MINT_TYPE_Q4_K, vec_dot_q4_K_q8_K_neondot, gemm_q4_K_q8_K_neondot);
    set_dot(k, MINT_TYPE_Q5_K, vec_dot_q5_K_q8_K_neondot, gemm_q5_K_q8_K_neondot);
    set_dot(k, MINT_TYPE_Q6_K, vec_dot_q6_K_q8_K_neondot, gemm_q6_K_q8_K_neondot);
}
