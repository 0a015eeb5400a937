// kernels_avx512vnni.c - the avx512vnni kernels (compiled only with that instruction set's flags).
#include "quant/kernels.h"

void mint_kernels_init_avx512vnni(mint_kernels *k) {
    (void)k;
}
