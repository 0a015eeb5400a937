// dot_iq2_neondot.c - the IQ2_XXS / IQ2_XS / IQ2_S kernels at the NEON dotprod level (each
// 16-byte dot step is one SDOT); the bodies are in quant/dot_iq2_neon.h.
#define MINT_LEVEL_NAME(name) name##_neondot
#include "quant/dot_iq2_neon.h"
