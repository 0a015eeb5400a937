// legacy_avx512.c - Q4_0/Q4_1/Q5_0/Q5_1/Q8_0/MXFP4 kernels for AVX-512 without VNNI (Skylake-X):
// quant/legacy_x512.h compiled with u8 x s8 dots emulated by vpmaddubsw + vpmaddwd.
#define MINT_LEVEL_NAME(name) name##_avx512
#include "quant/legacy_x512.h"
