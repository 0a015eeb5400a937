// avx512_parts.h - the pieces of the AVX-512 kernel tables, one setter per file.
//
// Internal to quant/. Each setter overrides the table entries its file implements; the init
// functions in kernels_avx512.c and kernels_avx512vnni.c call them. The integer kernels are one
// source compiled twice (quant/legacy_x512.h, quant/kquant_x512.h), once per level, so they come
// in pairs.
#ifndef MINT_QUANT_AVX512_PARTS_H
#define MINT_QUANT_AVX512_PARTS_H

#include "quant/kernels.h"

void mint_x512_set_float_avx512(mint_kernels *k);  // F32, F16, BF16 (float_avx512.c)
void mint_x512_set_act_avx512(mint_kernels *k);    // Q8_0, Q8_1, Q8_K from_float (act_avx512.c)
void mint_x512_set_legacy_avx512(mint_kernels *k); // Q4_0 .. Q8_0 (legacy_avx512.c)
void mint_x512_set_legacy_avx512vnni(mint_kernels *k);
void mint_x512_set_kquant_avx512(mint_kernels *k); // Q2_K .. Q6_K (kquant_avx512.c)
void mint_x512_set_kquant_avx512vnni(mint_kernels *k);
void mint_x512_set_vec_avx512(mint_kernels *k);  // float vector kernels (vec_avx512.c)
void mint_x512_set_attn_avx512(mint_kernels *k); // attention's products (attn_tile_avx512.c)

#endif // MINT_QUANT_AVX512_PARTS_H
