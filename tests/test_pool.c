// test_pool.c - the thread pool: every thread runs, barriers hold, row splits cover each row
// exactly once, and nothing deadlocks (Criterion's timeout fails a hung test).
#include "helpers/hang.h"
#include "runtime/engine/pool.h"

#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct counts {
    mint_pool *pool;
    atomic_int ran[MINT_POOL_MAX_THREADS];
    atomic_int total;
} counts;

static void count_task(void *arg, int ith, int nth) {
    counts *c = arg;
    cr_assert_eq(nth, mint_pool_size(c->pool));
    atomic_fetch_add(&c->ran[ith], 1);
    atomic_fetch_add(&c->total, 1);
}

Test(pool, every_thread_runs_once_per_run, .timeout = MT_HANG(20)) {
    for (int n = 1; n <= 8; n++) {
        counts *c = calloc(1, sizeof *c);
        cr_assert_eq(mint_pool_create(n, &c->pool, NULL), MINT_OK);
        for (int r = 0; r < 200; r++) mint_pool_run(c->pool, count_task, c);
        for (int i = 0; i < n; i++)
            cr_assert_eq(atomic_load(&c->ran[i]), 200, "n=%d thread %d", n, i);
        cr_assert_eq(atomic_load(&c->total), 200 * n);
        mint_pool_free(c->pool);
        free(c);
    }
}

// Each round, every thread writes its slot, meets the others, then checks that all slots hold
// this round's value: a barrier that lets one thread through early fails the check.
typedef struct stress {
    mint_pool *pool;
    int rounds;
    atomic_int slot[MINT_POOL_MAX_THREADS];
    atomic_int errors;
} stress;

static void stress_task(void *arg, int ith, int nth) {
    stress *s = arg;
    for (int r = 1; r <= s->rounds; r++) {
        atomic_store(&s->slot[ith], r);
        mint_pool_barrier(s->pool);
        for (int j = 0; j < nth; j++)
            if (atomic_load(&s->slot[j]) != r) atomic_fetch_add(&s->errors, 1);
        mint_pool_barrier(s->pool);
    }
}

Test(pool, barrier_stress_10k_rounds, .timeout = MT_HANG(60)) {
    int sizes[] = {1, 2, 3, 4, 7};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        stress *s = calloc(1, sizeof *s);
        s->rounds = 10000;
        cr_assert_eq(mint_pool_create(sizes[k], &s->pool, NULL), MINT_OK);
        mint_pool_run(s->pool, stress_task, s);
        cr_assert_eq(atomic_load(&s->errors), 0, "%d threads", sizes[k]);
        mint_pool_free(s->pool);
        free(s);
    }
}

// Sleeping workers wake up: pause between runs so that the workers fall asleep.
Test(pool, wakes_sleeping_workers, .timeout = MT_HANG(20)) {
    counts *c = calloc(1, sizeof *c);
    cr_assert_eq(mint_pool_create(4, &c->pool, NULL), MINT_OK);
    for (int r = 0; r < 20; r++) {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        mint_pool_run(c->pool, count_task, c);
    }
    cr_assert_eq(atomic_load(&c->total), 80);
    mint_pool_free(c->pool);
    free(c);
}

Test(pool, split_covers_every_row_exactly_once) {
    for (long n = 0; n < 300; n += 7) {
        for (int nth = 1; nth <= 9; nth++) {
            int *seen = calloc((size_t)n + 1, sizeof *seen);
            long prev_hi = 0;
            for (int ith = 0; ith < nth; ith++) {
                long lo, hi;
                mint_split(n, ith, nth, &lo, &hi);
                cr_assert_eq(lo, prev_hi, "ranges are contiguous and in order");
                cr_assert(hi - lo == n / nth || hi - lo == n / nth + 1);
                for (long i = lo; i < hi; i++) seen[i]++;
                prev_hi = hi;
            }
            cr_assert_eq(prev_hi, n);
            for (long i = 0; i < n; i++) cr_assert_eq(seen[i], 1);
            free(seen);
        }
    }
}

Test(pool, rejects_bad_thread_counts) {
    mint_pool *p = NULL;
    mint_err err;
    cr_assert_eq(mint_pool_create(0, &p, &err), MINT_E_ARG);
    cr_assert(strstr(err.msg, "thread count 0") != NULL, "%s", err.msg);
    cr_assert_eq(mint_pool_create(MINT_POOL_MAX_THREADS + 1, &p, &err), MINT_E_ARG);
    cr_assert_null(p);
}
