// legacy_avx512vnni.c - Q4_0/Q4_1/Q5_0/Q5_1/Q8_0/MXFP4 kernels for AVX-512 VNNI (Cascade Lake, Ice
// Lake, Zen 4): quant/legacy_x512.h compiled with vpdpbusd.
#define MINT_LEVEL_NAME(name) name##_avx512vnni
#include "quant/legacy_x512.h"
