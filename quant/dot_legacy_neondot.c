// dot_legacy_neondot.c - the 32-element block kernels at the NEON dotprod level (Armv8.2-A +
// dotprod: each 16-byte dot step is one SDOT); the bodies are in quant/dot_legacy_neon.h.
#define MINT_LEVEL_NAME(name) name##_neondot
#include "quant/dot_legacy_neon.h"
