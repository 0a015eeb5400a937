// hang.h - the hang guards of the test suites. A test's `.timeout` bounds a hang; it is never a
// speed limit (speed is measured by benchmarks, not asserted). Builds that run several times
// slower than a plain Release build -- the sanitizers, qemu-user for aarch64 -- would otherwise
// turn a guard into a speed assertion, so CMake's MINT_TIMEOUT_SCALE (1 by default; .ci/run sets
// it per step) multiplies every guard, in the suites and in the helpers' own waits.
#ifndef MINT_TEST_HANG_H
#define MINT_TEST_HANG_H

#ifndef MINT_TIMEOUT_SCALE
#define MINT_TIMEOUT_SCALE 1
#endif

// Seconds s of a hang guard, scaled for this build.
#define MT_HANG(s) ((s)*MINT_TIMEOUT_SCALE)

#endif // MINT_TEST_HANG_H
