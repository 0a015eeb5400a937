// kernels_neon.c - the neon kernels (compiled only with that instruction set's flags).
#include "quant/kernels.h"

void mint_kernels_init_neon(mint_kernels *k) {
    (void)k;
}
