// membw.c - the read-bandwidth probe behind mint-bench's bound: token generation reads every
// weight once per token, so what memory delivers to it bounds tokens per second.
//
// The probe measures what a one-token matmul can reach at the same thread count, not the
// memory's peak, so that a runtime's share of it says how much of the reachable it gets (an
// earlier probe, the best of its passes over pages each thread had placed, gave shares up to
// 143%):
//   - the same threads: a mint_pool of n_threads, the caller as thread 0 and the workers
//     unpinned, as a context's;
//   - the same memory: anonymous pages, 2 MiB aligned with MADV_HUGEPAGE, first written by the
//     calling thread alone, as the loader and the repacker write the weights (on a machine with
//     several memory nodes the pages then sit where the weights' do);
//   - the same split (exec.c, run_matmul for one token): each thread owns a contiguous share of
//     GROUP-byte groups, takes it in about 8 chunks from its own counter, then helps with what is
//     left of the others' shares, so one descheduled thread costs what it costs generation;
//   - the same loads: each chunk is summed in the vector registers of the kernel level in use
//     (64 bytes for AVX-512, 32 for AVX2, the baseline's 16 otherwise; MINT_ISA lowers it as it
//     lowers the kernels), four sums in flight so that the loads and not the adds are the limit.
// The buffer is the caller's size (mint-bench: --membw-gib, 1 GiB by default, 8 times a large
// last-level cache). The figure is the median of the passes, with the slowest and the fastest:
// the best pass is a moment generation cannot count on, and on a shared machine the passes of
// one run differ by more than a runtime's gain.
#include "runtime/measure/membw.h"

#include "base/error.h"
#include "quant/kernels.h"
#include "runtime/engine/pool.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

// Bytes per group, about 16 rows of a small model's matrix (exec.c splits by 16-row groups).
enum { GROUP = 16384, STEP = 256, MAX_PASSES = 10000 };
#define HUGE_PAGE ((size_t)2 << 20)

// A register's worth of the buffer at each level; may_alias: the buffer was written as bytes.
typedef uint64_t v2u64 __attribute__((vector_size(16), may_alias));
#if defined(MINT_ARCH_x86) && defined(__GNUC__)
typedef uint64_t v4u64 __attribute__((vector_size(32), may_alias));
typedef uint64_t v8u64 __attribute__((vector_size(64), may_alias));
#endif

// The sum of n bytes at p (n a multiple of STEP, p 64-byte aligned) in vectors of type V, four
// in flight. A macro so that each target below compiles it for its own register width.
#define SUM_BODY(V, p, n)                                                                          \
    V s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};                                                      \
    for (const V *q = (const V *)(p), *end = (const V *)((p) + (n)); q < end; q += 4) {            \
        s0 += q[0];                                                                                \
        s1 += q[1];                                                                                \
        s2 += q[2];                                                                                \
        s3 += q[3];                                                                                \
    }                                                                                              \
    const V s = s0 + s1 + s2 + s3;                                                                 \
    uint64_t r = 0;                                                                                \
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) r += s[i];                                 \
    return r

typedef uint64_t (*sum_fn)(const char *p, size_t n);

static uint64_t sum_base(const char *p, size_t n) {
    SUM_BODY(v2u64, p, n);
}

#if defined(MINT_ARCH_x86) && defined(__GNUC__)
__attribute__((target("avx2"))) static uint64_t sum_avx2(const char *p, size_t n) {
    SUM_BODY(v4u64, p, n);
}
__attribute__((target("avx512f"))) static uint64_t sum_avx512(const char *p, size_t n) {
    SUM_BODY(v8u64, p, n);
}
#endif

// The loads of the kernel level generation uses (MINT_ISA included).
static sum_fn pick_sum(void) {
#if defined(MINT_ARCH_x86) && defined(__GNUC__)
    switch (mint_kernels_get()->isa) {
    case MINT_ISA_AVX512:
    case MINT_ISA_AVX512VNNI:
        return sum_avx512;
    case MINT_ISA_AVX2:
        return sum_avx2;
    default:
        break;
    }
#endif
    return sum_base;
}

typedef struct counter {
    _Alignas(64) atomic_long next; // the next chunk of one thread's share
} counter;

typedef struct probe {
    const char *buf;                          // 64-byte aligned
    size_t bytes;                             // a multiple of STEP
    long groups;                              // GROUP-byte groups (the last may be shorter)
    sum_fn sum;                               // the loads
    counter next[MINT_POOL_MAX_THREADS];      // per owner of a share, reset before each pass
    uint64_t sink[MINT_POOL_MAX_THREADS * 8]; // per thread, a cache line apart: the sums are used
} probe;

static void read_share(void *arg, int ith, int nth) {
    probe *p = arg;
    const long share = (p->groups + nth - 1) / nth;
    const long cg = share / 8 > 1 ? share / 8 : 1;
    uint64_t s = 0;
    for (int v = 0; v < nth; v++) {
        const int o = (ith + v) % nth;
        long lo, hi;
        mint_split(p->groups, o, nth, &lo, &hi);
        atomic_long *next = &p->next[o].next;
        for (long k = atomic_fetch_add(next, 1); lo + k * cg < hi; k = atomic_fetch_add(next, 1)) {
            const long g0 = lo + k * cg, g1 = g0 + cg < hi ? g0 + cg : hi;
            const size_t b0 = (size_t)g0 * GROUP;
            const size_t b1 = (size_t)g1 * GROUP < p->bytes ? (size_t)g1 * GROUP : p->bytes;
            s += p->sum(p->buf + b0, b1 - b0);
        }
    }
    p->sink[(size_t)ith * 8] = s;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double pass(mint_pool *pool, probe *p) {
    for (int i = 0; i < mint_pool_size(pool); i++) atomic_store(&p->next[i].next, 0);
    const double t0 = now();
    mint_pool_run(pool, read_share, p);
    return now() - t0;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

mint_status mint_membw_measure(int n_threads, size_t bytes, int passes, mint_membw *out,
                               mint_err *err) {
    memset(out, 0, sizeof *out);
    if (passes < 1 || passes > MAX_PASSES || bytes < 4096)
        return mint_fail(err, MINT_E_ARG,
                         "the bandwidth probe needs 1..%d passes and at least 4096 bytes (got %d "
                         "passes, %zu bytes)",
                         MAX_PASSES, passes, bytes);
    bytes = bytes / STEP * STEP;
    mint_pool *pool;
    mint_status st = mint_pool_create(n_threads, &pool, err);
    if (st) return st;
    // One huge page more than asked for, to start the buffer on a huge-page boundary.
    const size_t mapped = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE + HUGE_PAGE;
    void *map = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    probe *p = calloc(1, sizeof *p);
    double *gbps = malloc((size_t)passes * sizeof *gbps);
    if (map == MAP_FAILED || !p || !gbps) {
        if (map != MAP_FAILED) munmap(map, mapped);
        free(p);
        free(gbps);
        mint_pool_free(pool);
        return mint_fail(err, MINT_E_NOMEM, "cannot allocate %zu bytes for the bandwidth probe",
                         bytes);
    }
    char *buf = (char *)(((uintptr_t)map + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE);
#ifdef MADV_HUGEPAGE
    (void)madvise(buf, mapped - (size_t)(buf - (char *)map), MADV_HUGEPAGE);
#endif
    memset(buf, 0x5a, bytes); // this thread places every page, as the loader does the weights'
    p->buf = buf;
    p->bytes = bytes;
    p->groups = (long)((bytes + GROUP - 1) / GROUP);
    p->sum = pick_sum();
    (void)pass(pool, p); // warm-up: the first run of a pool also starts its workers
    for (int r = 0; r < passes; r++) gbps[r] = (double)bytes / pass(pool, p) / 1e9;
    qsort(gbps, (size_t)passes, sizeof *gbps, cmp_double);
    out->min = gbps[0];
    out->max = gbps[passes - 1];
    out->median = passes % 2 ? gbps[passes / 2] : (gbps[passes / 2 - 1] + gbps[passes / 2]) / 2;
    free(gbps);
    free(p);
    munmap(map, mapped);
    mint_pool_free(pool);
    return MINT_OK;
}

mint_status mint_measure_read_bandwidth(int n_threads, size_t bytes, int reps, double *gb_per_s,
                                        mint_err *err) {
    mint_membw m;
    mint_status st = mint_membw_measure(n_threads, bytes, reps, &m, err);
    *gb_per_s = m.median;
    return st;
}
