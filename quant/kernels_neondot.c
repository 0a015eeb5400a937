// kernels_neondot.c - the neondot kernels (compiled only with that instruction set's flags).
#include "quant/kernels.h"

void mint_kernels_init_neondot(mint_kernels *k) {
    (void)k;
}
