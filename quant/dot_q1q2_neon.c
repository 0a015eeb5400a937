// dot_q1q2_neon.c - the Q1_0 / Q2_0 kernels at the baseline NEON level (the dot steps are SMULL +
// SADALP); the bodies are in quant/dot_q1q2_neon.h.
#define MINT_LEVEL_NAME(name) name##_neon
#include "quant/dot_q1q2_neon.h"
