// kquant_avx512vnni.c - Q2_K..Q6_K kernels for AVX-512 VNNI (Cascade Lake, Ice Lake, Zen 4):
// quant/kquant_x512.h compiled with vpdpbusd / vpdpwssd.
#define MINT_LEVEL_NAME(name) name##_avx512vnni
#include "quant/kquant_x512.h"
