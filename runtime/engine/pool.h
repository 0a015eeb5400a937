// pool.h - a pthreads thread pool: persistent workers, the caller as worker 0, and a barrier
// that spins briefly and then sleeps.
//
// mint_pool_run(pool, fn, arg) makes every thread (the caller included, as ith = 0) call
// fn(arg, ith, nth) once and returns when all have returned. Inside fn, threads meet at
// mint_pool_barrier(), which every thread must call the same number of times. The graph executor
// runs all nodes in one mint_pool_run with a barrier after each node, so workers are woken once
// per evaluation, not once per op.
#ifndef MINT_POOL_H
#define MINT_POOL_H

#include "mint.h"

typedef struct mint_pool mint_pool;

typedef void (*mint_task_fn)(void *arg, int ith, int nth);

// Starts n_threads - 1 workers (n_threads in 1..MINT_POOL_MAX_THREADS).
#define MINT_POOL_MAX_THREADS 256
mint_status mint_pool_create(int n_threads, mint_pool **out, mint_err *err);
// Stops and joins the workers; accepts NULL.
void mint_pool_free(mint_pool *p);
int mint_pool_size(const mint_pool *p);
// Runs started since creation: how often the workers were woken (tests see that a batch too
// small to split leaves them asleep).
unsigned long mint_pool_runs(const mint_pool *p);

// Runs fn(arg, ith, nth) on every thread and waits for all. Not reentrant.
void mint_pool_run(mint_pool *p, mint_task_fn fn, void *arg);

// Waits until every thread of the current run has arrived. Spins for a short while (a node is
// often a few microseconds of work), then sleeps on a condition variable.
void mint_pool_barrier(mint_pool *p);

// Splits n items into nth contiguous ranges; thread ith gets [*lo, *hi). The first n % nth
// threads get one more. Deterministic: depends only on (n, ith, nth).
static inline void mint_split(long n, int ith, int nth, long *lo, long *hi) {
    long base = n / nth, extra = n % nth;
    *lo = ith * base + (ith < extra ? ith : extra);
    *hi = *lo + base + (ith < extra ? 1 : 0);
}

#endif // MINT_POOL_H
