// dot_iq1_neondot.c - the IQ1_S / IQ1_M kernels at the NEON dotprod level (Armv8.2-A + dotprod:
// each 16-byte dot step is one SDOT); the bodies are in quant/dot_iq1_neon.h.
#define MINT_LEVEL_NAME(name) name##_neondot
#include "quant/dot_iq1_neon.h"
