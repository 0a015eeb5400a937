// dot_iq2_neon.c - the IQ2_XXS / IQ2_XS / IQ2_S kernels at the baseline NEON level (the dot
// steps are SMULL + SADALP); the bodies are in quant/dot_iq2_neon.h.
#define MINT_LEVEL_NAME(name) name##_neon
#include "quant/dot_iq2_neon.h"
