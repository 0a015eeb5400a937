// kernels_avx2.c - the avx2 kernels (compiled only with that instruction set's flags).
#include "quant/kernels.h"

void mint_kernels_init_avx2(mint_kernels *k) {
    (void)k;
}
