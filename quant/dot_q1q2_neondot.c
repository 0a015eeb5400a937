// dot_q1q2_neondot.c - the Q1_0 / Q2_0 kernels at the NEON dotprod level (each 16-byte dot step
// is one SDOT); the bodies are in quant/dot_q1q2_neon.h.
#define MINT_LEVEL_NAME(name) name##_neondot
#include "quant/dot_q1q2_neon.h"
