// dot_legacy_neon.c - the 32-element block kernels at the baseline NEON level (Armv8-A: the dot
// steps are SMULL + SADALP); the bodies are in quant/dot_legacy_neon.h.
#define MINT_LEVEL_NAME(name) name##_neon
#include "quant/dot_legacy_neon.h"
