// pool.c - persistent workers woken once per run; a counter-and-generation barrier.
//
// Both waits (a worker waiting for the next run, any thread waiting at the barrier) spin on an
// atomic generation counter for a short while and then sleep on a condition variable. The waker
// only takes the mutex when someone is asleep, so a barrier that nobody sleeps at costs two
// atomic operations per thread.
//
// The spin adapts, per thread and per kind of wait: halved after a wait that had to sleep, down
// to SPIN_MIN, and doubled after one the spin ended, up to SPIN_ITERATIONS. On an idle machine
// the others arrive within the spin and it stays long; on a busy one the thread waited for is
// often descheduled, and a long spin only takes the core it needs (TinyLlama-shaped Q4_0, -t 2
// beside two busy loops, three interleaved rounds of mint-bench -p 0 -n 64 -r 3 -t 2: 7.9-10.1
// tokens/s with a fixed spin of 4096, 10.6-14.6 adaptive).
#include "runtime/engine/pool.h"

#include "base/error.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
static inline void cpu_relax(void) {
    _mm_pause();
}
#elif defined(__aarch64__)
static inline void cpu_relax(void) {
    __asm__ __volatile__("yield");
}
#else
static inline void cpu_relax(void) {}
#endif

// Spins before sleeping; about 10-50 us on current CPUs, longer than a typical node imbalance.
enum { SPIN_ITERATIONS = 4096, SPIN_MIN = 64 };

// A generation counter that threads wait on: wait_change() returns once it differs from `seen`.
typedef struct gen_wait {
    _Alignas(64) atomic_uint gen; // bumped by the waker
    atomic_int sleepers;          // threads blocked in cond_wait
    pthread_mutex_t mu;           // guards the sleep
    pthread_cond_t cv;            // signalled when gen changes and someone sleeps
} gen_wait;

static void gen_init(gen_wait *g) {
    atomic_init(&g->gen, 0);
    atomic_init(&g->sleepers, 0);
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
}

static void gen_destroy(gen_wait *g) {
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
}

static void gen_bump(gen_wait *g) {
    atomic_fetch_add(&g->gen, 1); // seq_cst: pairs with the sleeper's increment below
    if (atomic_load(&g->sleepers) > 0) {
        pthread_mutex_lock(&g->mu);
        pthread_cond_broadcast(&g->cv);
        pthread_mutex_unlock(&g->mu);
    }
}

// Waits until g's generation differs from seen and returns it; *spin is the calling thread's
// spin budget for this kind of wait (adapted here, see the top of the file).
static unsigned gen_wait_change(gen_wait *g, unsigned seen, int *spin) {
    unsigned now;
    for (int i = 0; i < *spin; i++) {
        now = atomic_load_explicit(&g->gen, memory_order_acquire);
        if (now != seen) {
            if (*spin < SPIN_ITERATIONS) *spin *= 2;
            return now;
        }
        cpu_relax();
    }
    if (*spin > SPIN_MIN) *spin /= 2;
    pthread_mutex_lock(&g->mu);
    atomic_fetch_add(&g->sleepers, 1);
    while ((now = atomic_load(&g->gen)) == seen) pthread_cond_wait(&g->cv, &g->mu);
    atomic_fetch_sub(&g->sleepers, 1);
    pthread_mutex_unlock(&g->mu);
    return now;
}

typedef struct worker {
    struct mint_pool *pool; // owner
    int ith;                // 1..n-1
    pthread_t thread;       // the worker thread
} worker;

struct mint_pool {
    int n;                             // threads including the caller
    worker *workers;                   // [n - 1]
    gen_wait run;                      // bumped to start a run (or to stop)
    gen_wait bar;                      // barrier generation
    _Alignas(64) atomic_int bar_count; // threads arrived at the current barrier
    mint_task_fn fn;                   // task of the current run
    void *arg;                         // its argument
    atomic_bool stop;                  // workers exit at the next wake-up
    atomic_ulong runs;                 // mint_pool_run calls so far
};

void mint_pool_barrier(mint_pool *p) {
    if (p->n == 1) return;
    unsigned seen = atomic_load_explicit(&p->bar.gen, memory_order_acquire);
    if (atomic_fetch_add_explicit(&p->bar_count, 1, memory_order_acq_rel) == p->n - 1) {
        // Last to arrive: reset the count before releasing the others, so that their next
        // barrier starts from zero.
        atomic_store_explicit(&p->bar_count, 0, memory_order_relaxed);
        gen_bump(&p->bar);
        return;
    }
    static _Thread_local int spin = SPIN_ITERATIONS; // this thread's barrier waits
    gen_wait_change(&p->bar, seen, &spin);
}

static void *worker_main(void *arg) {
    worker *w = arg;
    mint_pool *p = w->pool;
    unsigned seen = 0;
    int spin = SPIN_ITERATIONS; // this worker's waits for the next run
    for (;;) {
        seen = gen_wait_change(&p->run, seen, &spin);
        if (atomic_load(&p->stop)) break;
        p->fn(p->arg, w->ith, p->n);
        mint_pool_barrier(p); // the caller returns from run only when every worker is done
    }
    return NULL;
}

mint_status mint_pool_create(int n_threads, mint_pool **out, mint_err *err) {
    *out = NULL;
    if (n_threads < 1 || n_threads > MINT_POOL_MAX_THREADS)
        return mint_fail(err, MINT_E_ARG, "thread count %d is outside 1..%d", n_threads,
                         MINT_POOL_MAX_THREADS);
    mint_pool *p = calloc(1, sizeof *p);
    if (!p) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    p->n = n_threads;
    gen_init(&p->run);
    gen_init(&p->bar);
    atomic_init(&p->bar_count, 0);
    atomic_init(&p->stop, false);
    atomic_init(&p->runs, 0);
    p->workers = calloc((size_t)n_threads, sizeof *p->workers);
    if (!p->workers) {
        mint_pool_free(p);
        return mint_fail(err, MINT_E_NOMEM, "out of memory");
    }
    for (int i = 1; i < n_threads; i++) {
        worker *w = &p->workers[i - 1];
        w->pool = p;
        w->ith = i;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            p->n = i; // only threads 1..i-1 exist; free joins those
            mint_pool_free(p);
            return mint_fail(err, MINT_E_NOMEM, "cannot start worker thread %d of %d", i,
                             n_threads);
        }
    }
    *out = p;
    return MINT_OK;
}

void mint_pool_free(mint_pool *p) {
    if (!p) return;
    atomic_store(&p->stop, true);
    gen_bump(&p->run);
    for (int i = 1; i < p->n; i++) pthread_join(p->workers[i - 1].thread, NULL);
    free(p->workers);
    gen_destroy(&p->run);
    gen_destroy(&p->bar);
    free(p);
}

int mint_pool_size(const mint_pool *p) {
    return p->n;
}

unsigned long mint_pool_runs(const mint_pool *p) {
    return atomic_load_explicit(&p->runs, memory_order_relaxed);
}

void mint_pool_run(mint_pool *p, mint_task_fn fn, void *arg) {
    atomic_fetch_add_explicit(&p->runs, 1, memory_order_relaxed);
    p->fn = fn;
    p->arg = arg;
    gen_bump(&p->run); // seq_cst: publishes fn and arg to the workers
    fn(arg, 0, p->n);
    mint_pool_barrier(p);
}
