// delta-step.c - the gated delta rule's one-token step (quant/kernels.h: vec.delta_step) on its
// own, at every level this CPU has: Qwen3.5-2B's 16 value heads of 128 x 128 (a state of 1 MiB
// per layer) over 512 tokens, each level in turn within a round, rounds interleaved; prints
// per level the median time per token and layer over the rounds and their range. Measuring by
// hand, not a test; build it against a built tree (one line):
//   cc -O2 -std=gnu11 -I. -Iinclude tools/bench/delta-step.c build/libmint.a -lpthread -lm
//      -lxxhash -ljson-c -o /tmp/delta-step && /tmp/delta-step [ROUNDS]
#include "quant/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { S = 128, HEADS = 16, TOKENS = 512, MAX_ROUNDS = 64 };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? atoi(argv[1]) : 5;
    if (rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "delta-step: ROUNDS must be 1..%d\n", MAX_ROUNDS);
        return 2;
    }
    float *st = malloc(sizeof(float) * S * S * HEADS);
    float q[S], k[S], v[S], out[S];
    if (!st) return 1;
    for (int i = 0; i < S * S * HEADS; i++) st[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
    for (int i = 0; i < S; i++) {
        q[i] = (float)(i % 13) / 13.0f - 0.5f;
        k[i] = (float)(i % 11) / 11.0f - 0.5f;
        v[i] = (float)(i % 7) / 7.0f;
    }
    double ms[MINT_ISA_COUNT][MAX_ROUNDS];
    for (int r = 0; r < rounds; r++)
        for (int isa = 0; isa < MINT_ISA_COUNT; isa++) {
            const mint_kernels *K = mint_kernels_for((mint_isa)isa);
            if (!K) continue;
            const double t0 = now();
            for (int t = 0; t < TOKENS; t++)
                for (int h = 0; h < HEADS; h++)
                    K->vec.delta_step(st + (size_t)h * S * S, S, S, q, k, v, 0.99f, 0.5f, 0.088f,
                                      out);
            ms[isa][r] = (now() - t0) / TOKENS * 1e3;
        }
    for (int isa = 0; isa < MINT_ISA_COUNT; isa++) {
        const mint_kernels *K = mint_kernels_for((mint_isa)isa);
        if (!K) continue;
        qsort(ms[isa], (size_t)rounds, sizeof(double), by_value);
        printf("%-10s %.3f ms per token and layer (%.3f-%.3f), %d rounds\n", K->name,
               ms[isa][rounds / 2], ms[isa][0], ms[isa][rounds - 1], rounds);
    }
    free(st);
    return 0;
}
