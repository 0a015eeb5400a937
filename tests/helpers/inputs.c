// inputs.c - the references' input generator (tests/helpers/inputs.h).
#include "inputs.h"

uint64_t mt_splitmix64(uint64_t *state) {
    *state += 0x9E3779B97F4A7C15ull;
    uint64_t z = *state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double mt_bell(uint64_t *state) {
    double s = 0;
    for (int k = 0; k < 4; k++) s += (double)(mt_splitmix64(state) >> 11) * 0x1p-53;
    return s - 2.0;
}
