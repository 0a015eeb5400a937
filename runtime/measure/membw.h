// membw.h - the read-bandwidth probe with its spread (membw.c says how it measures). mint.h's
// mint_measure_read_bandwidth gives the median alone; tests read the spread here.
#ifndef MINT_MEMBW_H
#define MINT_MEMBW_H

#include "mint.h"

// GB/s (1e9 bytes per second) over the timed passes.
typedef struct mint_membw {
    double median; // of the passes (the mean of the middle two for an even count)
    double min;    // the slowest pass
    double max;    // the fastest pass
} mint_membw;

// n_threads threads stream a buffer of about `bytes` (rounded down to 256 bytes, at least 4096)
// `passes` times after one warm-up pass (passes in 1..10000).
mint_status mint_membw_measure(int n_threads, size_t bytes, int passes, mint_membw *out,
                               mint_err *err);

#endif // MINT_MEMBW_H
