// round.h - ggml's float-to-nearest-integer trick, shared by the quantizers (quant/) and the KL
// divergence file writer (runtime/measure/perplexity.c), which must round exactly as llama.cpp.
#ifndef MINT_BASE_ROUND_H
#define MINT_BASE_ROUND_H

#include <stdint.h>
#include <string.h>

// RNE of f as an int, for |f| <= 4194303 (2^22 - 1), ggml's nearest_int: adding 1.5 * 2^23 moves
// f into [2^23, 2^24) where the float spacing is exactly 1, so the addition itself rounds to an
// integer (ties to even) and the low 23 mantissa bits hold that integer offset by 2^22. Outside
// that range the result is the same garbage ggml gets, so byte-exact reproduction holds there too.
// The caller's translation unit must not contract or reassociate this addition.
static inline int mint_nearest_int(float f) {
    float v = f + 12582912.0f;
    int32_t i;
    memcpy(&i, &v, sizeof i);
    return (i & 0x007FFFFF) - 0x00400000;
}

#endif // MINT_BASE_ROUND_H
