// kernels_avx512.c - the avx512 level's table: AVX-512 F/BW/VL/DQ (Skylake-X; Zen 4 and Ice Lake
// take the avx512vnni level, which stands on this one), on top of the avx2 level (quant/kernels.h
// says how levels stack). What it does not list (the Q4_0 / Q8_0 dequantizers, MXFP4's dot
// product and gemm, which have no lanes = rows version yet) is avx2's.
//
// Float types: quant/float_avx512.c; activation conversions: quant/act_avx512.c; the integer
// types, with gemm_packed over quant/pack.h's layout: quant/legacy_x512.h and quant/kquant_x512.h
// compiled without VNNI (legacy_avx512.c, kquant_avx512.c); vector kernels: quant/vec_avx512.c,
// quant/attn_tile_avx512.c.
#include "quant/kernels.h"
#include "quant/simd_avx512.h"

const mint_kernels mint_kernels_avx512 = {
    .isa = MINT_ISA_AVX512,
    .name = "avx512",
    .t =
        {
            [MINT_TYPE_F32] = {.vec_dot = vec_dot_f32_f32_avx512,
                               .gemm = gemm_f32_f32_avx512,
                               .gemm_packed = gemm_packed_f32_f32_avx512},
            [MINT_TYPE_F16] = {.vec_dot = vec_dot_f16_f16_avx512,
                               .gemm = gemm_f16_f16_avx512,
                               .gemm_packed = gemm_packed_f16_f16_avx512,
                               .from_float = quantize_row_f16_avx512,
                               .to_float = dequantize_row_f16_avx512},
            [MINT_TYPE_BF16] = {.vec_dot = vec_dot_bf16_bf16_avx512,
                                .gemm = gemm_bf16_bf16_avx512,
                                .gemm_packed = gemm_packed_bf16_bf16_avx512,
                                .from_float = quantize_row_bf16_avx512,
                                .to_float = dequantize_row_bf16_avx512},
            [MINT_TYPE_Q4_0] = {.vec_dot = vec_dot_q4_0_q8_0_avx512,
                                .gemm = gemm_q4_0_q8_0_avx512,
                                .gemm_packed = gemm_packed_q4_0_q8_0_avx512},
            [MINT_TYPE_Q4_1] = {.vec_dot = vec_dot_q4_1_q8_1_avx512,
                                .gemm = gemm_q4_1_q8_1_avx512,
                                .gemm_packed = gemm_packed_q4_1_q8_1_avx512},
            [MINT_TYPE_Q5_0] = {.vec_dot = vec_dot_q5_0_q8_0_avx512,
                                .gemm = gemm_q5_0_q8_0_avx512,
                                .gemm_packed = gemm_packed_q5_0_q8_0_avx512},
            [MINT_TYPE_Q5_1] = {.vec_dot = vec_dot_q5_1_q8_1_avx512,
                                .gemm = gemm_q5_1_q8_1_avx512,
                                .gemm_packed = gemm_packed_q5_1_q8_1_avx512},
            [MINT_TYPE_Q8_0] = {.vec_dot = vec_dot_q8_0_q8_0_avx512,
                                .gemm = gemm_q8_0_q8_0_avx512,
                                .gemm_packed = gemm_packed_q8_0_q8_0_avx512,
                                .from_float = quantize_row_q8_0_act_avx512},
            [MINT_TYPE_Q2_K] = {.vec_dot = vec_dot_q2_K_q8_K_avx512,
                                .gemm = gemm_q2_K_q8_K_avx512,
                                .gemm_packed = gemm_packed_q2_K_q8_K_avx512},
            [MINT_TYPE_Q3_K] = {.vec_dot = vec_dot_q3_K_q8_K_avx512,
                                .gemm = gemm_q3_K_q8_K_avx512,
                                .gemm_packed = gemm_packed_q3_K_q8_K_avx512},
            [MINT_TYPE_Q4_K] = {.vec_dot = vec_dot_q4_K_q8_K_avx512,
                                .gemm = gemm_q4_K_q8_K_avx512,
                                .gemm_packed = gemm_packed_q4_K_q8_K_avx512},
            [MINT_TYPE_Q5_K] = {.vec_dot = vec_dot_q5_K_q8_K_avx512,
                                .gemm = gemm_q5_K_q8_K_avx512,
                                .gemm_packed = gemm_packed_q5_K_q8_K_avx512},
            [MINT_TYPE_Q6_K] = {.vec_dot = vec_dot_q6_K_q8_K_avx512,
                                .gemm = gemm_q6_K_q8_K_avx512,
                                .gemm_packed = gemm_packed_q6_K_q8_K_avx512},
            [MINT_TYPE_Q8_1] = {.from_float = quantize_row_q8_1_act_avx512},
            [MINT_TYPE_Q8_K] = {.from_float = quantize_row_q8_K_avx512},
        },
    .vec = {.exp = vec_exp_avx512,
            .max = vec_max_avx512,
            .exp_sum = vec_exp_sum_avx512,
            .scale = vec_scale_avx512,
            .round_f16 = vec_round_f16_avx512,
            .qk_f32 = attn_qk_f32_avx512,
            .qk_f16 = attn_qk_f16_avx512,
            .pv_f32 = attn_pv_f32_avx512,
            .pv_f16 = attn_pv_f16_avx512,
            .pv_q8_0 = attn_pv_q8_0_avx512,
            .pv_q4_0 = attn_pv_q4_0_avx512},
};
