// membw.c - a read-bandwidth probe for mint-bench: what memory can deliver is the bound on
// token generation, which reads every weight once per token.
#include "base/error.h"
#include "runtime/engine/pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct probe {
    const uint64_t *buf; // [n] the buffer
    size_t n;            // 8-byte words
    uint64_t sink[64];   // per-thread results, so the loads cannot be optimised away
} probe;

// Sums this thread's contiguous share with 8 independent accumulators (64 bytes per step), so
// the loads, not the adds, are the limit.
static void read_share(void *arg, int ith, int nth) {
    probe *p = arg;
    long lo, hi;
    mint_split((long)(p->n / 8), ith, nth, &lo, &hi);
    const uint64_t *a = p->buf + (size_t)lo * 8;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    for (long i = 0; i < hi - lo; i++, a += 8) {
        s0 += a[0], s1 += a[1], s2 += a[2], s3 += a[3];
        s4 += a[4], s5 += a[5], s6 += a[6], s7 += a[7];
    }
    p->sink[ith % 64] = s0 ^ s1 ^ s2 ^ s3 ^ s4 ^ s5 ^ s6 ^ s7;
}

static void touch_share(void *arg, int ith, int nth) {
    probe *p = arg;
    long lo, hi;
    mint_split((long)p->n, ith, nth, &lo, &hi);
    // Each thread first-touches its own share (so pages sit near the thread that reads them).
    uint64_t *a = (uint64_t *)p->buf;
    for (long i = lo; i < hi; i++) a[i] = (uint64_t)i;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

mint_status mint_measure_read_bandwidth(int n_threads, size_t bytes, int reps, double *gb_per_s,
                                        mint_err *err) {
    *gb_per_s = 0;
    if (reps < 1 || bytes < 4096)
        return mint_fail(err, MINT_E_ARG, "bandwidth probe needs reps >= 1 and >= 4096 bytes");
    mint_pool *pool;
    mint_status st = mint_pool_create(n_threads, &pool, err);
    if (st) return st;
    probe *p = calloc(1, sizeof *p);
    size_t n = bytes / 64 * 8;
    uint64_t *buf = aligned_alloc(64, n * sizeof *buf);
    if (!p || !buf) {
        free(p);
        free(buf);
        mint_pool_free(pool);
        return mint_fail(err, MINT_E_NOMEM, "cannot allocate %zu bytes for the bandwidth probe",
                         bytes);
    }
    p->buf = buf;
    p->n = n;
    mint_pool_run(pool, touch_share, p);
    mint_pool_run(pool, read_share, p); // warm-up
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        mint_pool_run(pool, read_share, p);
        double t = now() - t0;
        best = t < best ? t : best;
    }
    *gb_per_s = (double)(n * sizeof *buf) / best / 1e9;
    free(buf);
    free(p);
    mint_pool_free(pool);
    return MINT_OK;
}
