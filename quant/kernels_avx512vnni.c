// kernels_avx512vnni.c - the avx512vnni table (Cascade Lake, Ice Lake, Zen 4): the avx512 table
// with the integer dot products recompiled for vpdpbusd. Float types and activation conversions
// are the avx512 ones (VNNI adds nothing there).
#include "quant/avx512_parts.h"

void mint_kernels_init_avx512vnni(mint_kernels *k) {
    mint_x512_set_legacy_avx512vnni(k);
    mint_x512_set_kquant_avx512vnni(k);
}
