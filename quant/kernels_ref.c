// kernels_ref.c - the reference table: scalar C for every computable type, and the reference
// weight quantizers for mint-quantize.
#include "quant/kernels.h"
#include "quant/ref.h"

// ggml's vec_dot_type rule (docs/formats.md 2.5): a weight type's activations are first converted
// with k->t[vec_dot_type].from_float, so the activation types' from_float entries are the
// activation quantizers (x86 llama.cpp rounding), not the weight quantizers. Q8_1 and Q8_K are
// activation-only types: they convert and dequantize but have no dot product of their own. No
// type has a gemm here: the matmul then calls vec_dot per element.
const mint_kernels mint_kernels_ref = {
    .isa = MINT_ISA_REF,
    .name = "ref",
    .t =
        {
            [MINT_TYPE_F32] = {.vec_dot_type = MINT_TYPE_F32,
                               .vec_dot = vec_dot_f32_f32_ref,
                               .from_float = quantize_row_f32_ref,
                               .to_float = dequantize_row_f32_ref},
            [MINT_TYPE_F16] = {.vec_dot_type = MINT_TYPE_F16,
                               .vec_dot = vec_dot_f16_f16_ref,
                               .from_float = quantize_row_f16_ref,
                               .to_float = dequantize_row_f16_ref},
            [MINT_TYPE_BF16] = {.vec_dot_type = MINT_TYPE_BF16,
                                .vec_dot = vec_dot_bf16_bf16_ref,
                                .from_float = quantize_row_bf16_ref,
                                .to_float = dequantize_row_bf16_ref},
            [MINT_TYPE_Q4_0] = {.vec_dot_type = MINT_TYPE_Q8_0,
                                .vec_dot = vec_dot_q4_0_q8_0_ref,
                                .to_float = dequantize_row_q4_0_ref},
            [MINT_TYPE_Q4_1] = {.vec_dot_type = MINT_TYPE_Q8_1,
                                .vec_dot = vec_dot_q4_1_q8_1_ref,
                                .to_float = dequantize_row_q4_1_ref},
            [MINT_TYPE_Q5_0] = {.vec_dot_type = MINT_TYPE_Q8_0,
                                .vec_dot = vec_dot_q5_0_q8_0_ref,
                                .to_float = dequantize_row_q5_0_ref},
            [MINT_TYPE_Q5_1] = {.vec_dot_type = MINT_TYPE_Q8_1,
                                .vec_dot = vec_dot_q5_1_q8_1_ref,
                                .to_float = dequantize_row_q5_1_ref},
            [MINT_TYPE_Q8_0] = {.vec_dot_type = MINT_TYPE_Q8_0,
                                .vec_dot = vec_dot_q8_0_q8_0_ref,
                                .from_float = quantize_row_q8_0_act_ref,
                                .to_float = dequantize_row_q8_0_ref},
            [MINT_TYPE_MXFP4] = {.vec_dot_type = MINT_TYPE_Q8_0,
                                 .vec_dot = vec_dot_mxfp4_q8_0_ref,
                                 .to_float = dequantize_row_mxfp4_ref},
            [MINT_TYPE_IQ4_NL] = {.vec_dot_type = MINT_TYPE_Q8_0,
                                  .vec_dot = vec_dot_iq4_nl_q8_0_ref,
                                  .to_float = dequantize_row_iq4_nl_ref},
            [MINT_TYPE_IQ3_XXS] = {.vec_dot_type = MINT_TYPE_Q8_K,
                                   .vec_dot = vec_dot_iq3_xxs_q8_K_ref,
                                   .to_float = dequantize_row_iq3_xxs_ref},
            [MINT_TYPE_IQ3_S] = {.vec_dot_type = MINT_TYPE_Q8_K,
                                 .vec_dot = vec_dot_iq3_s_q8_K_ref,
                                 .to_float = dequantize_row_iq3_s_ref},
            [MINT_TYPE_IQ4_XS] = {.vec_dot_type = MINT_TYPE_Q8_K,
                                  .vec_dot = vec_dot_iq4_xs_q8_K_ref,
                                  .to_float = dequantize_row_iq4_xs_ref},
            [MINT_TYPE_IQ2_XXS] = {.vec_dot_type = MINT_TYPE_Q8_K,
                                   .vec_dot = vec_dot_iq2_xxs_q8_K_ref,
                                   .to_float = dequantize_row_iq2_xxs_ref},
            [MINT_TYPE_IQ2_XS] = {.vec_dot_type = MINT_TYPE_Q8_K,
                                  .vec_dot = vec_dot_iq2_xs_q8_K_ref,
                                  .to_float = dequantize_row_iq2_xs_ref},
            [MINT_TYPE_IQ2_S] = {.vec_dot_type = MINT_TYPE_Q8_K,
                                 .vec_dot = vec_dot_iq2_s_q8_K_ref,
                                 .to_float = dequantize_row_iq2_s_ref},
            [MINT_TYPE_TQ1_0] = {.vec_dot_type = MINT_TYPE_Q8_K,
                                 .vec_dot = vec_dot_tq1_0_q8_K_ref,
                                 .to_float = dequantize_row_tq1_0_ref},
            [MINT_TYPE_TQ2_0] = {.vec_dot_type = MINT_TYPE_Q8_K,
                                 .vec_dot = vec_dot_tq2_0_q8_K_ref,
                                 .to_float = dequantize_row_tq2_0_ref},
            [MINT_TYPE_IQ1_S] = {.vec_dot_type = MINT_TYPE_Q8_K,
                                 .vec_dot = vec_dot_iq1_s_q8_K_ref,
                                 .to_float = dequantize_row_iq1_s_ref},
            [MINT_TYPE_IQ1_M] = {.vec_dot_type = MINT_TYPE_Q8_K,
                                 .vec_dot = vec_dot_iq1_m_q8_K_ref,
                                 .to_float = dequantize_row_iq1_m_ref},
            [MINT_TYPE_Q1_0] = {.vec_dot_type = MINT_TYPE_Q8_0,
                                .vec_dot = vec_dot_q1_0_q8_0_ref,
                                .to_float = dequantize_row_q1_0_ref},
            [MINT_TYPE_Q2_0] = {.vec_dot_type = MINT_TYPE_Q8_0,
                                .vec_dot = vec_dot_q2_0_q8_0_ref,
                                .to_float = dequantize_row_q2_0_ref},
            [MINT_TYPE_Q8_1] = {.vec_dot_type = MINT_TYPE_Q8_1,
                                .from_float = quantize_row_q8_1_act_ref,
                                .to_float = dequantize_row_q8_1_ref},
            [MINT_TYPE_Q2_K] = {.vec_dot_type = MINT_TYPE_Q8_K,
                                .vec_dot = vec_dot_q2_K_q8_K_ref,
                                .to_float = dequantize_row_q2_K_ref},
            [MINT_TYPE_Q3_K] = {.vec_dot_type = MINT_TYPE_Q8_K,
                                .vec_dot = vec_dot_q3_K_q8_K_ref,
                                .to_float = dequantize_row_q3_K_ref},
            [MINT_TYPE_Q4_K] = {.vec_dot_type = MINT_TYPE_Q8_K,
                                .vec_dot = vec_dot_q4_K_q8_K_ref,
                                .to_float = dequantize_row_q4_K_ref},
            [MINT_TYPE_Q5_K] = {.vec_dot_type = MINT_TYPE_Q8_K,
                                .vec_dot = vec_dot_q5_K_q8_K_ref,
                                .to_float = dequantize_row_q5_K_ref},
            [MINT_TYPE_Q6_K] = {.vec_dot_type = MINT_TYPE_Q8_K,
                                .vec_dot = vec_dot_q6_K_q8_K_ref,
                                .to_float = dequantize_row_q6_K_ref},
            [MINT_TYPE_Q8_K] = {.vec_dot_type = MINT_TYPE_Q8_K,
                                .from_float = quantize_row_q8_K_ref,
                                .to_float = dequantize_row_q8_K_ref},
        },
    .vec = {.exp = vec_exp_ref,
            .max = vec_max_ref,
            .exp_sum = vec_exp_sum_ref,
            .scale = vec_scale_ref,
            .round_f16 = vec_round_f16_ref,
            .qk_f32 = attn_qk_f32_ref,
            .qk_f16 = attn_qk_f16_ref,
            .pv_f32 = attn_pv_f32_ref,
            .pv_f16 = attn_pv_f16_ref,
            .pv_q8_0 = attn_pv_q8_0_ref,
            .pv_q4_0 = attn_pv_q4_0_ref,
            .delta_step = vec_delta_step_ref},
};

mint_quantize_row_fn mint_quantizer_ref(mint_type t) {
    switch (t) {
    case MINT_TYPE_F32:
        return quantize_row_f32_ref;
    case MINT_TYPE_F16:
        return quantize_row_f16_ref;
    case MINT_TYPE_BF16:
        return quantize_row_bf16_ref;
    case MINT_TYPE_Q4_0:
        return quantize_row_q4_0_ref;
    case MINT_TYPE_Q4_1:
        return quantize_row_q4_1_ref;
    case MINT_TYPE_Q5_0:
        return quantize_row_q5_0_ref;
    case MINT_TYPE_Q5_1:
        return quantize_row_q5_1_ref;
    case MINT_TYPE_Q8_0:
        return quantize_row_q8_0_ref;
    case MINT_TYPE_MXFP4:
        return quantize_row_mxfp4_ref;
    case MINT_TYPE_IQ4_NL:
        return quantize_row_iq4_nl_ref;
    case MINT_TYPE_IQ4_XS:
        return quantize_row_iq4_xs_ref;
    case MINT_TYPE_IQ3_XXS:
        return quantize_row_iq3_xxs_ref;
    case MINT_TYPE_IQ3_S:
        return quantize_row_iq3_s_ref;
    case MINT_TYPE_IQ1_S:
        return quantize_row_iq1_s_ref;
    case MINT_TYPE_IQ1_M:
        return quantize_row_iq1_m_ref;
    case MINT_TYPE_IQ2_XXS:
        return quantize_row_iq2_xxs_ref;
    case MINT_TYPE_IQ2_XS:
        return quantize_row_iq2_xs_ref;
    case MINT_TYPE_IQ2_S:
        return quantize_row_iq2_s_ref;
    case MINT_TYPE_TQ1_0:
        return quantize_row_tq1_0_ref;
    case MINT_TYPE_TQ2_0:
        return quantize_row_tq2_0_ref;
    case MINT_TYPE_Q1_0:
        return quantize_row_q1_0_ref;
    case MINT_TYPE_Q2_0:
        return quantize_row_q2_0_ref;
    case MINT_TYPE_Q2_K:
        return quantize_row_q2_K_ref;
    case MINT_TYPE_Q3_K:
        return quantize_row_q3_K_ref;
    case MINT_TYPE_Q4_K:
        return quantize_row_q4_K_ref;
    case MINT_TYPE_Q5_K:
        return quantize_row_q5_K_ref;
    case MINT_TYPE_Q6_K:
        return quantize_row_q6_K_ref;
    default:
        return NULL;
    }
}
