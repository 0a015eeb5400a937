// inputs.h - the input generator the quantization references were made with (their "inputs"
// text, tests/reference/quant_*.json): splitmix64, and a sum of four uniforms in [0, 1) minus 2
// as a rough bell curve. The tests that replay those references, and the kernel tests that want
// bell-shaped weights, share it so that its sequence exists once.
#ifndef MINT_TESTS_HELPERS_INPUTS_H
#define MINT_TESTS_HELPERS_INPUTS_H

#include <stdint.h>

// The next splitmix64 output of *state (advanced).
uint64_t mt_splitmix64(uint64_t *state);
// A sum of four uniforms from mt_splitmix64 (53 bits each), minus 2: in [-2, 2).
double mt_bell(uint64_t *state);

#endif // MINT_TESTS_HELPERS_INPUTS_H
