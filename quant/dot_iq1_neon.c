// dot_iq1_neon.c - the IQ1_S / IQ1_M kernels at the baseline NEON level (Armv8-A: the dot steps
// are SMULL + SADALP); the bodies are in quant/dot_iq1_neon.h.
#define MINT_LEVEL_NAME(name) name##_neon
#include "quant/dot_iq1_neon.h"
