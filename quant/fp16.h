// fp16.h - scalar conversions between f32 and the two 16-bit float formats ggml stores.
//
// f16 is IEEE binary16 (1 sign, 5 exponent bits biased by 15, 10 mantissa bits); bf16 is the top
// half of an f32. Both f32 -> 16-bit conversions round to nearest, ties to even (RNE), which is
// what ggml does (its software path, F16C's _cvtss_sh(x, 0), and ggml_compute_fp32_to_bf16), so
// mint writes the same bits llama.cpp writes. Widening to f32 is exact. Pure integer code: the
// result does not depend on the FPU's rounding mode or on flush-to-zero settings.
#ifndef MINT_QUANT_FP16_H
#define MINT_QUANT_FP16_H

#include <stdint.h>
#include <string.h>

static inline uint32_t mint_f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float mint_f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

// f16 bits -> f32, exact. Subnormals are kept; inf and NaN (with its payload) map across.
static inline float mint_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1F;
    uint32_t mant = h & 0x3FF;
    if (exp == 0x1F) return mint_f32_from_bits(sign | 0x7F800000 | (mant << 13));
    if (exp == 0) {
        // Subnormal (or zero): mant * 2^-24, exact in f32.
        float v = (float)mant * 0x1p-24f;
        return sign ? -v : v;
    }
    return mint_f32_from_bits(sign | ((exp + 112) << 23) | (mant << 13));
}

// f32 -> f16 bits, RNE. Overflow (|x| >= 65520) gives +-inf; NaN gives sign | 0x7E00 (quiet,
// payload dropped) exactly like ggml's software conversion (docs/formats.md 2.2); results below the
// f16 range round to the nearest subnormal or to zero.
static inline uint16_t mint_f32_to_f16(float f) {
    uint32_t x = mint_f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7FFFFFFF;
    if (ax > 0x7F800000) return sign | 0x7E00;  // NaN
    if (ax >= 0x477FF000) return sign | 0x7C00; // 65520 and up (a tie that goes to even: inf)
    if (ax >= 0x38800000) {
        // Normal f16 (>= 2^-14): rebias the exponent by 127 - 15, then drop 13 mantissa bits with
        // RNE. A carry out of the mantissa correctly bumps the exponent.
        uint32_t r = ax - ((uint32_t)(127 - 15) << 23);
        r += 0xFFF + ((r >> 13) & 1);
        return sign | (uint16_t)(r >> 13);
    }
    // Subnormal f16: the result is RNE(|x| / 2^-24), an integer in 0..1024 (1024 encodes 2^-14).
    uint32_t e = ax >> 23;
    if (e < 102) return sign; // |x| < 2^-25: rounds to zero (f32 subnormals included)
    uint32_t m = (ax & 0x7FFFFF) | 0x800000;
    uint32_t shift = 126 - e; // |x| / 2^-24 = m / 2^shift, shift in 14..24
    uint32_t q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    return sign | (uint16_t)q;
}

// bf16 bits -> f32, exact.
static inline float mint_bf16_to_f32(uint16_t h) {
    return mint_f32_from_bits((uint32_t)h << 16);
}

// f32 -> bf16 bits, RNE on the dropped 16 bits; NaN is forced quiet (bit 6 of the result set,
// as ggml does). Subnormals are not flushed.
static inline uint16_t mint_f32_to_bf16(float f) {
    uint32_t x = mint_f32_bits(f);
    if ((x & 0x7FFFFFFF) > 0x7F800000) return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
}

// E8M0 exponent e (MXFP4's block scale, a power of two with bias 127) -> f32 2^(e - 128): half
// the scale, because MXFP4's value table is doubled to be integers. e = 0 and 1 give the f32
// subnormals 2^-128 and 2^-127; e = 255 (E8M0's NaN) is 2^127, as ggml reads it.
static inline float mint_e8m0_half_to_f32(uint8_t e) {
    return mint_f32_from_bits(e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23);
}

#endif // MINT_QUANT_FP16_H
