// dot_iq3_neon.c - the IQ3_XXS / IQ3_S kernels at the baseline NEON level (Armv8-A: the dot steps
// are SMULL + SADALP); the bodies are in quant/dot_iq3_neon.h.
#define MINT_LEVEL_NAME(name) name##_neon
#include "quant/dot_iq3_neon.h"
