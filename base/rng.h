// rng.h - the sampler's seeded random numbers: xoshiro256** seeded through SplitMix64.
//
// Why these: xoshiro256** (Blackman & Vigna, 2018) is small, fast, passes BigCrush and has a
// 2^256 - 1 period; SplitMix64 spreads any 64-bit seed (0 included) over the 256-bit state, as
// the xoshiro authors recommend. Both are fully specified by the few lines below, so the same
// seed gives the same token stream on every platform and compiler (no libc rand()).
// Test vectors (tests/test_sampler.c): SplitMix64 from state 0 yields 0xe220a8397b1dcdaf first;
// xoshiro256** from state {1, 2, 3, 4} yields 11520, 0, 1509978240, 1215971899390074240.
#ifndef MINT_RNG_H
#define MINT_RNG_H

#include <stdint.h>

typedef struct mint_rng {
    uint64_t s[4]; // xoshiro256** state; never all zero (SplitMix64 cannot produce four zeros)
} mint_rng;

// One SplitMix64 step: advances *state by the golden-ratio increment and returns its mix.
static inline uint64_t mint_splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static inline uint64_t mint_rotl64(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

// Fills the state from a 64-bit seed with four SplitMix64 outputs.
static inline void mint_rng_seed(mint_rng *r, uint64_t seed) {
    uint64_t sm = seed;
    for (int i = 0; i < 4; i++) r->s[i] = mint_splitmix64(&sm);
}

// Next 64 random bits (xoshiro256**).
static inline uint64_t mint_rng_next(mint_rng *r) {
    uint64_t *s = r->s;
    uint64_t result = mint_rotl64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = mint_rotl64(s[3], 45);
    return result;
}

// Uniform double in [0, 1): the top 53 bits scaled by 2^-53, so every value is exact and 1.0 is
// never returned.
static inline double mint_rng_uniform(mint_rng *r) {
    return (double)(mint_rng_next(r) >> 11) * 0x1.0p-53;
}

#endif // MINT_RNG_H
