// mt19937.h - the Mersenne Twister MT19937 (Matsumoto & Nishimura, 1998) and the uniform double
// C++'s std::uniform_real_distribution<double>(0, 1) draws from it with libstdc++, so that the
// sampler's draws are llama.cpp's: llama.cpp samples with std::mt19937 seeded with the 32-bit
// seed and one such double per token (its dist sampler), and the same seed then gives the same
// tokens in mint and in llama.cpp wherever their logits agree.
//
// The generator is the standard one (C++ [rand.predef]: the 10000th output from the default seed
// 5489 is 4123659995; tests/test_sampler.c checks it). The double is libstdc++'s
// generate_canonical<double, 53>: two 32-bit outputs g1, g2, (g1 + g2 * 2^32) / 2^64 in double,
// kept below 1.
#ifndef MINT_MT19937_H
#define MINT_MT19937_H

#include <stdint.h>

#define MINT_MT_N 624
#define MINT_MT_M 397

typedef struct mint_mt19937 {
    uint32_t mt[MINT_MT_N]; // the state words
    int i;                  // the next word to temper; MINT_MT_N: regenerate first
} mint_mt19937;

// Seeds as std::mt19937(seed) does (the seed is taken mod 2^32).
static inline void mint_mt_seed(mint_mt19937 *r, uint32_t seed) {
    r->mt[0] = seed;
    for (int k = 1; k < MINT_MT_N; k++)
        r->mt[k] = 1812433253u * (r->mt[k - 1] ^ (r->mt[k - 1] >> 30)) + (uint32_t)k;
    r->i = MINT_MT_N;
}

// The next 32-bit output.
static inline uint32_t mint_mt_next(mint_mt19937 *r) {
    if (r->i >= MINT_MT_N) { // the twist: all 624 words at once
        for (int k = 0; k < MINT_MT_N; k++) {
            const uint32_t y =
                (r->mt[k] & 0x80000000u) | (r->mt[(k + 1) % MINT_MT_N] & 0x7fffffffu);
            r->mt[k] =
                r->mt[(k + MINT_MT_M) % MINT_MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        r->i = 0;
    }
    uint32_t y = r->mt[r->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

// A double in [0, 1) from two outputs, as libstdc++'s generate_canonical<double, 53> makes it.
static inline double mint_mt_uniform(mint_mt19937 *r) {
    const double lo = (double)mint_mt_next(r);
    const double hi = (double)mint_mt_next(r);
    const double u = (lo + hi * 4294967296.0) / 18446744073709551616.0;
    return u < 1.0 ? u : 0x1.fffffffffffffp-1; // the largest double below 1
}

#endif // MINT_MT19937_H
