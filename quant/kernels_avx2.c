// kernels_avx2.c - the AVX2 level's table: AVX2 + FMA + F16C + BMI2 (Intel Haswell and later, AMD
// Zen 1 and later), on top of the reference table (quant/kernels.h says how levels stack).
//
// Every weight type gets a vec_dot and a register-tiled gemm built from the same tile function
// (quant/simd_avx2.h explains why they agree bit for bit); the activation types get converters
// that write the reference's bytes; to_float is replaced where a vector version is simple and
// exact (it only serves the token-embedding lookup, one row per token).
#include "quant/dot_iq2.h"
#include "quant/kernels.h"
#include "quant/simd_avx2.h"

const mint_kernels mint_kernels_avx2 = {
    .isa = MINT_ISA_AVX2,
    .name = "avx2",
    .t =
        {
            [MINT_TYPE_F32] = {.vec_dot = vec_dot_f32_f32_avx2, .gemm = gemm_f32_f32_avx2},
            [MINT_TYPE_F16] = {.vec_dot = vec_dot_f16_f16_avx2,
                               .gemm = gemm_f16_f16_avx2,
                               .from_float = quantize_row_f16_avx2,
                               .to_float = dequantize_row_f16_avx2},
            [MINT_TYPE_BF16] = {.vec_dot = vec_dot_bf16_bf16_avx2,
                                .gemm = gemm_bf16_bf16_avx2,
                                .from_float = quantize_row_bf16_avx2,
                                .to_float = dequantize_row_bf16_avx2},
            [MINT_TYPE_Q4_0] = {.vec_dot = vec_dot_q4_0_q8_0_avx2,
                                .gemm = gemm_q4_0_q8_0_avx2,
                                .to_float = dequantize_row_q4_0_avx2},
            [MINT_TYPE_Q4_1] = {.vec_dot = vec_dot_q4_1_q8_1_avx2, .gemm = gemm_q4_1_q8_1_avx2},
            [MINT_TYPE_Q5_0] = {.vec_dot = vec_dot_q5_0_q8_0_avx2, .gemm = gemm_q5_0_q8_0_avx2},
            [MINT_TYPE_Q5_1] = {.vec_dot = vec_dot_q5_1_q8_1_avx2, .gemm = gemm_q5_1_q8_1_avx2},
            [MINT_TYPE_Q8_0] = {.vec_dot = vec_dot_q8_0_q8_0_avx2,
                                .gemm = gemm_q8_0_q8_0_avx2,
                                .from_float = quantize_row_q8_0_act_avx2,
                                .to_float = dequantize_row_q8_0_avx2},
            [MINT_TYPE_MXFP4] = {.vec_dot = vec_dot_mxfp4_q8_0_avx2, .gemm = gemm_mxfp4_q8_0_avx2},
            [MINT_TYPE_IQ4_NL] = {.vec_dot = vec_dot_iq4_nl_q8_0_avx2,
                                  .gemm = gemm_iq4_nl_q8_0_avx2},
            [MINT_TYPE_IQ4_XS] = {.vec_dot = vec_dot_iq4_xs_q8_K_avx2,
                                  .gemm = gemm_iq4_xs_q8_K_avx2},
            [MINT_TYPE_IQ3_XXS] = {.vec_dot = vec_dot_iq3_xxs_q8_K_avx2,
                                   .gemm = gemm_iq3_xxs_q8_K_avx2},
            [MINT_TYPE_IQ3_S] = {.vec_dot = vec_dot_iq3_s_q8_K_avx2, .gemm = gemm_iq3_s_q8_K_avx2},
            [MINT_TYPE_IQ2_XXS] = {.vec_dot = vec_dot_iq2_xxs_q8_K_avx2,
                                   .gemm = gemm_iq2_xxs_q8_K_avx2},
            [MINT_TYPE_IQ2_XS] = {.vec_dot = vec_dot_iq2_xs_q8_K_avx2,
                                  .gemm = gemm_iq2_xs_q8_K_avx2},
            [MINT_TYPE_IQ2_S] = {.vec_dot = vec_dot_iq2_s_q8_K_avx2, .gemm = gemm_iq2_s_q8_K_avx2},
            [MINT_TYPE_IQ1_S] = {.vec_dot = vec_dot_iq1_s_q8_K_avx2, .gemm = gemm_iq1_s_q8_K_avx2},
            [MINT_TYPE_IQ1_M] = {.vec_dot = vec_dot_iq1_m_q8_K_avx2, .gemm = gemm_iq1_m_q8_K_avx2},
            [MINT_TYPE_TQ1_0] = {.vec_dot = vec_dot_tq1_0_q8_K_avx2, .gemm = gemm_tq1_0_q8_K_avx2},
            [MINT_TYPE_TQ2_0] = {.vec_dot = vec_dot_tq2_0_q8_K_avx2, .gemm = gemm_tq2_0_q8_K_avx2},
            [MINT_TYPE_Q1_0] = {.vec_dot = vec_dot_q1_0_q8_0_avx2, .gemm = gemm_q1_0_q8_0_avx2},
            [MINT_TYPE_Q2_0] = {.vec_dot = vec_dot_q2_0_q8_0_avx2, .gemm = gemm_q2_0_q8_0_avx2},
            [MINT_TYPE_Q8_1] = {.from_float = quantize_row_q8_1_act_avx2},
            [MINT_TYPE_Q2_K] = {.vec_dot = vec_dot_q2_K_q8_K_avx2, .gemm = gemm_q2_K_q8_K_avx2},
            [MINT_TYPE_Q3_K] = {.vec_dot = vec_dot_q3_K_q8_K_avx2, .gemm = gemm_q3_K_q8_K_avx2},
            [MINT_TYPE_Q4_K] = {.vec_dot = vec_dot_q4_K_q8_K_avx2, .gemm = gemm_q4_K_q8_K_avx2},
            [MINT_TYPE_Q5_K] = {.vec_dot = vec_dot_q5_K_q8_K_avx2, .gemm = gemm_q5_K_q8_K_avx2},
            [MINT_TYPE_Q6_K] = {.vec_dot = vec_dot_q6_K_q8_K_avx2, .gemm = gemm_q6_K_q8_K_avx2},
            [MINT_TYPE_Q8_K] = {.from_float = quantize_row_q8_K_avx2},
        },
    .vec = {.exp = vec_exp_avx2,
            .max = vec_max_avx2,
            .exp_sum = vec_exp_sum_avx2,
            .scale = vec_scale_avx2,
            .round_f16 = vec_round_f16_avx2,
            .qk_f32 = attn_qk_f32_avx2,
            .qk_f16 = attn_qk_f16_avx2,
            .pv_f32 = attn_pv_f32_avx2,
            .pv_f16 = attn_pv_f16_avx2,
            .pv_q8_0 = attn_pv_q8_0_avx2,
            .pv_q4_0 = attn_pv_q4_0_avx2,
            .delta_step = vec_delta_step_avx2},
};
