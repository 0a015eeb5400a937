// clock.h - seconds from a monotonic clock, for the timings the library reports.
#ifndef MINT_BASE_CLOCK_H
#define MINT_BASE_CLOCK_H

#include <time.h>

static inline double mint_now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif // MINT_BASE_CLOCK_H
