// kernels_avx512vnni.c - the avx512vnni level's table (Cascade Lake, Ice Lake, Zen 4), on top of
// the avx512 level: the integer dot products recompiled for vpdpbusd (quant/legacy_x512.h and
// quant/kquant_x512.h through legacy_avx512vnni.c, kquant_avx512vnni.c). Float types, activation
// conversions and vector kernels are the avx512 level's (VNNI adds nothing there).
#include "quant/kernels.h"
#include "quant/simd_avx512.h"

const mint_kernels mint_kernels_avx512vnni = {
    .isa = MINT_ISA_AVX512VNNI,
    .name = "avx512vnni",
    .t =
        {
            [MINT_TYPE_Q4_0] = {.vec_dot = vec_dot_q4_0_q8_0_avx512vnni,
                                .gemm = gemm_q4_0_q8_0_avx512vnni,
                                .gemm_packed = gemm_packed_q4_0_q8_0_avx512vnni},
            [MINT_TYPE_Q4_1] = {.vec_dot = vec_dot_q4_1_q8_1_avx512vnni,
                                .gemm = gemm_q4_1_q8_1_avx512vnni,
                                .gemm_packed = gemm_packed_q4_1_q8_1_avx512vnni},
            [MINT_TYPE_Q5_0] = {.vec_dot = vec_dot_q5_0_q8_0_avx512vnni,
                                .gemm = gemm_q5_0_q8_0_avx512vnni,
                                .gemm_packed = gemm_packed_q5_0_q8_0_avx512vnni},
            [MINT_TYPE_Q5_1] = {.vec_dot = vec_dot_q5_1_q8_1_avx512vnni,
                                .gemm = gemm_q5_1_q8_1_avx512vnni,
                                .gemm_packed = gemm_packed_q5_1_q8_1_avx512vnni},
            [MINT_TYPE_Q8_0] = {.vec_dot = vec_dot_q8_0_q8_0_avx512vnni,
                                .gemm = gemm_q8_0_q8_0_avx512vnni,
                                .gemm_packed = gemm_packed_q8_0_q8_0_avx512vnni},
            [MINT_TYPE_MXFP4] = {.vec_dot = vec_dot_mxfp4_q8_0_avx512vnni,
                                 .gemm = gemm_mxfp4_q8_0_avx512vnni,
                                 .gemm_packed = gemm_packed_mxfp4_q8_0_avx512vnni},
            [MINT_TYPE_IQ4_NL] = {.vec_dot = vec_dot_iq4_nl_q8_0_avx512vnni,
                                  .gemm = gemm_iq4_nl_q8_0_avx512vnni,
                                  .gemm_packed = gemm_packed_iq4_nl_q8_0_avx512vnni},
            [MINT_TYPE_IQ4_XS] = {.vec_dot = vec_dot_iq4_xs_q8_K_avx512vnni,
                                  .gemm = gemm_iq4_xs_q8_K_avx512vnni,
                                  .gemm_packed = gemm_packed_iq4_xs_q8_K_avx512vnni},
            [MINT_TYPE_IQ3_XXS] = {.vec_dot = vec_dot_iq3_xxs_q8_K_avx512vnni,
                                   .gemm = gemm_iq3_xxs_q8_K_avx512vnni},
            [MINT_TYPE_IQ3_S] = {.vec_dot = vec_dot_iq3_s_q8_K_avx512vnni,
                                 .gemm = gemm_iq3_s_q8_K_avx512vnni},
            [MINT_TYPE_Q2_K] = {.vec_dot = vec_dot_q2_K_q8_K_avx512vnni,
                                .gemm = gemm_q2_K_q8_K_avx512vnni,
                                .gemm_packed = gemm_packed_q2_K_q8_K_avx512vnni},
            [MINT_TYPE_Q3_K] = {.vec_dot = vec_dot_q3_K_q8_K_avx512vnni,
                                .gemm = gemm_q3_K_q8_K_avx512vnni,
                                .gemm_packed = gemm_packed_q3_K_q8_K_avx512vnni},
            [MINT_TYPE_Q4_K] = {.vec_dot = vec_dot_q4_K_q8_K_avx512vnni,
                                .gemm = gemm_q4_K_q8_K_avx512vnni,
                                .gemm_packed = gemm_packed_q4_K_q8_K_avx512vnni},
            [MINT_TYPE_Q5_K] = {.vec_dot = vec_dot_q5_K_q8_K_avx512vnni,
                                .gemm = gemm_q5_K_q8_K_avx512vnni,
                                .gemm_packed = gemm_packed_q5_K_q8_K_avx512vnni},
            [MINT_TYPE_Q6_K] = {.vec_dot = vec_dot_q6_K_q8_K_avx512vnni,
                                .gemm = gemm_q6_K_q8_K_avx512vnni,
                                .gemm_packed = gemm_packed_q6_K_q8_K_avx512vnni},
        },
};
