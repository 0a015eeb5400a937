// kquant_avx512.c - Q2_K..Q6_K kernels for AVX-512 without VNNI (Skylake-X): quant/kquant_x512.h
// compiled with u8 x s8 dots emulated by vpmaddubsw + vpmaddwd.
#define MINT_LEVEL_NAME(name) name##_avx512
#include "quant/kquant_x512.h"
