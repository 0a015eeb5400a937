// dot_ternary_neondot.c - the ternary kernels at the NEON dotprod level (each 16-byte dot step is
// one SDOT); the bodies are in quant/dot_ternary_neon.h.
#define MINT_LEVEL_NAME(name) name##_neondot
#include "quant/dot_ternary_neon.h"
