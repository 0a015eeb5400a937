// kernels_neondot.c - the NEON dotprod level's table (Armv8.2-A + dotprod + fp16: Cortex-A55/A76
// and later, Neoverse N1 / Graviton 2 and later, Apple M1 and later), on top of the neon level.
//
// Only the integer dot products change: the same tile bodies compiled with SDOT
// (quant/simd_neon.h). The float kernels and the activation converters are the neon level's.
#include "quant/dot_iq2.h"
#include "quant/kernels.h"
#include "quant/simd_neon.h"

const mint_kernels mint_kernels_neondot = {
    .isa = MINT_ISA_NEONDOT,
    .name = "neondot",
    .t =
        {
            [MINT_TYPE_Q4_0] = {.vec_dot = vec_dot_q4_0_q8_0_neondot,
                                .gemm = gemm_q4_0_q8_0_neondot},
            [MINT_TYPE_Q4_1] = {.vec_dot = vec_dot_q4_1_q8_1_neondot,
                                .gemm = gemm_q4_1_q8_1_neondot},
            [MINT_TYPE_Q5_0] = {.vec_dot = vec_dot_q5_0_q8_0_neondot,
                                .gemm = gemm_q5_0_q8_0_neondot},
            [MINT_TYPE_Q5_1] = {.vec_dot = vec_dot_q5_1_q8_1_neondot,
                                .gemm = gemm_q5_1_q8_1_neondot},
            [MINT_TYPE_Q8_0] = {.vec_dot = vec_dot_q8_0_q8_0_neondot,
                                .gemm = gemm_q8_0_q8_0_neondot},
            [MINT_TYPE_MXFP4] = {.vec_dot = vec_dot_mxfp4_q8_0_neondot,
                                 .gemm = gemm_mxfp4_q8_0_neondot},
            [MINT_TYPE_IQ4_NL] = {.vec_dot = vec_dot_iq4_nl_q8_0_neondot,
                                  .gemm = gemm_iq4_nl_q8_0_neondot},
            [MINT_TYPE_IQ4_XS] = {.vec_dot = vec_dot_iq4_xs_q8_K_neondot,
                                  .gemm = gemm_iq4_xs_q8_K_neondot},
            [MINT_TYPE_IQ3_XXS] = {.vec_dot = vec_dot_iq3_xxs_q8_K_neondot,
                                   .gemm = gemm_iq3_xxs_q8_K_neondot},
            [MINT_TYPE_IQ3_S] = {.vec_dot = vec_dot_iq3_s_q8_K_neondot,
                                 .gemm = gemm_iq3_s_q8_K_neondot},
            [MINT_TYPE_IQ2_XXS] = {.vec_dot = vec_dot_iq2_xxs_q8_K_neondot,
                                   .gemm = gemm_iq2_xxs_q8_K_neondot},
            [MINT_TYPE_IQ2_XS] = {.vec_dot = vec_dot_iq2_xs_q8_K_neondot,
                                  .gemm = gemm_iq2_xs_q8_K_neondot},
            [MINT_TYPE_IQ2_S] = {.vec_dot = vec_dot_iq2_s_q8_K_neondot,
                                 .gemm = gemm_iq2_s_q8_K_neondot},
            [MINT_TYPE_IQ1_S] = {.vec_dot = vec_dot_iq1_s_q8_K_neondot,
                                 .gemm = gemm_iq1_s_q8_K_neondot},
            [MINT_TYPE_IQ1_M] = {.vec_dot = vec_dot_iq1_m_q8_K_neondot,
                                 .gemm = gemm_iq1_m_q8_K_neondot},
            [MINT_TYPE_TQ1_0] = {.vec_dot = vec_dot_tq1_0_q8_K_neondot,
                                 .gemm = gemm_tq1_0_q8_K_neondot},
            [MINT_TYPE_Q1_0] = {.vec_dot = vec_dot_q1_0_q8_0_neondot,
                                .gemm = gemm_q1_0_q8_0_neondot},
            [MINT_TYPE_Q2_0] = {.vec_dot = vec_dot_q2_0_q8_0_neondot,
                                .gemm = gemm_q2_0_q8_0_neondot},
            [MINT_TYPE_TQ2_0] = {.vec_dot = vec_dot_tq2_0_q8_K_neondot,
                                 .gemm = gemm_tq2_0_q8_K_neondot},
            [MINT_TYPE_Q2_K] = {.vec_dot = vec_dot_q2_K_q8_K_neondot,
                                .gemm = gemm_q2_K_q8_K_neondot},
            [MINT_TYPE_Q3_K] = {.vec_dot = vec_dot_q3_K_q8_K_neondot,
                                .gemm = gemm_q3_K_q8_K_neondot},
            [MINT_TYPE_Q4_K] = {.vec_dot = vec_dot_q4_K_q8_K_neondot,
                                .gemm = gemm_q4_K_q8_K_neondot},
            [MINT_TYPE_Q5_K] = {.vec_dot = vec_dot_q5_K_q8_K_neondot,
                                .gemm = gemm_q5_K_q8_K_neondot},
            [MINT_TYPE_Q6_K] = {.vec_dot = vec_dot_q6_K_q8_K_neondot,
                                .gemm = gemm_q6_K_q8_K_neondot},
        },
};
