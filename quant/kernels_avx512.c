// kernels_avx512.c - the avx512 kernels (compiled only with that instruction set's flags).
#include "quant/kernels.h"

void mint_kernels_init_avx512(mint_kernels *k) {
    (void)k;
}
