// dot_ternary_neon.c - the ternary kernels at the baseline NEON level (the dot steps are SMULL +
// SADALP); the bodies are in quant/dot_ternary_neon.h.
#define MINT_LEVEL_NAME(name) name##_neon
#include "quant/dot_ternary_neon.h"
