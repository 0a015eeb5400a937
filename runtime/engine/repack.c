// repack.c - load-time repacking of the weight matrices into the 16-row groups of quant/pack.h,
// for the kernel levels that read them (gemm_packed).
//
// Why: the AVX-512 kernels keep 16 weight rows in the 16 lanes of a register. On the file's
// layout they load 16 rows side by side and transpose them, which for one token (nothing to
// share the transpose with) costs about as much as the dot products, and reads 16 short
// streams at once. Packed, each group of 16 rows is one contiguous stream of vectors that are
// already lanes = rows.
//
// What it costs: one pass over the weights at load (split across the machine's cores), and no
// memory beyond the file's size: each matrix is copied into one anonymous buffer (huge pages
// where the kernel gives them) and its pages of the read-only map are dropped right after
// (MADV_DONTNEED: they stay in the page cache, not in this process). The map stays the plain
// twin: the token embedding is read from it, and a context running a level without packed
// kernels (MINT_ISA=ref, tests) reads the file's rows, which the kernel maps back in on demand.
#include "runtime/engine/model.h"

#include "base/error.h"
#include "quant/kernels.h"
#include "quant/pack.h"
#include "runtime/engine/pool.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { HUGE = 2 << 20 };

// The matrices a token multiplies with, each once (the output is token_embd when tied).
static int matrices(mint_model *m, mint_weight **out) {
    int n = 0;
    for (int l = 0; l < m->hp.n_layer; l++) {
        mint_layer *L = &m->layers[l];
        mint_weight *ws[7] = {&L->wq, &L->wk, &L->wv, &L->wo, &L->w_gate, &L->w_up, &L->w_down};
        for (int i = 0; i < 7; i++) out[n++] = ws[i];
    }
    out[n++] = &m->output;
    return n;
}

typedef struct pack_job {
    const mint_weight *w;
    uint8_t *dst;
} pack_job;

// Each thread packs a contiguous range of the matrix's groups.
static void pack_share(void *arg, int ith, int nth) {
    const pack_job *j = arg;
    const mint_weight *w = j->w;
    const long groups = (long)((w->n_out + MINT_PACK_ROWS - 1) / MINT_PACK_ROWS);
    long lo, hi;
    mint_split(groups, ith, nth, &lo, &hi);
    if (hi <= lo) return;
    const int64_t r0 = lo * MINT_PACK_ROWS;
    const int64_t r1 = hi * MINT_PACK_ROWS < w->n_out ? hi * MINT_PACK_ROWS : w->n_out;
    mint_pack_rows_ref((mint_type)w->type, w->n_in, (const uint8_t *)w->data + r0 * w->row_bytes,
                       w->row_bytes, r1 - r0, j->dst + (size_t)lo * w->pack_stride);
}

// Drops this process's pages of [p, p + n) when the range lies in one of the file's maps
// (never memory the model owns: that would lose its contents).
static void drop_mapped(const mint_model *m, const void *p, size_t n) {
    const uintptr_t a = (uintptr_t)p, e = a + n, page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < m->file->n_maps; i++) {
        const uintptr_t ms = (uintptr_t)m->file->maps[i].data, me = ms + m->file->maps[i].size;
        if (a < ms || e > me) continue;
        const uintptr_t lo = (a + page - 1) / page * page, hi = e / page * page;
        if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
        return;
    }
}

static bool repack_wanted(const mint_model_params *params) {
    if (params && params->no_repack) return false;
    const char *env = getenv("MINT_REPACK");
    return !(env && strcmp(env, "0") == 0);
}

mint_status mint_model_repack(mint_model *m, const mint_model_params *params, mint_err *err) {
    if (!repack_wanted(params)) return MINT_OK;
    const mint_kernels *k = mint_kernels_get();
    mint_weight **ws = malloc(((size_t)m->hp.n_layer * 7 + 1) * sizeof *ws);
    if (!ws) return mint_fail(err, MINT_E_NOMEM, "out of memory");
    const int n = matrices(m, ws);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        mint_weight *w = ws[i];
        if (!k->t[w->type].gemm_packed || !mint_pack_layout_of((mint_type)w->type)) continue;
        w->pack_stride = mint_pack_group_bytes((mint_type)w->type, w->n_in);
        total += mint_pack_bytes((mint_type)w->type, w->n_in, w->n_out);
    }
    if (total == 0) {
        free(ws);
        return MINT_OK;
    }
    // One buffer for every packed matrix, 2 MiB aligned so that it can be backed by huge pages.
    const size_t bytes = (total + HUGE - 1) / HUGE * HUGE;
    void *map =
        mmap(NULL, bytes + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mint_pool *pool = NULL;
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    mint_status st = MINT_OK;
    if (map == MAP_FAILED) {
        // Not fatal: the kernels read the file's layout instead.
        for (int i = 0; i < n; i++) ws[i]->pack_stride = 0;
        free(ws);
        return MINT_OK;
    }
    if ((st = mint_pool_create(cpus < 1 ? 1 : cpus > 8 ? 8 : (int)cpus, &pool, err))) {
        munmap(map, bytes + HUGE);
        free(ws);
        return st;
    }
    uint8_t *buf = (uint8_t *)(((uintptr_t)map + HUGE - 1) / HUGE * HUGE);
    (void)madvise(buf, bytes, MADV_HUGEPAGE);
    m->packed_map = map;
    m->packed_map_bytes = bytes + HUGE;
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        mint_weight *w = ws[i];
        if (!w->pack_stride) continue;
        pack_job job = {w, buf + off};
        mint_pool_run(pool, pack_share, &job);
        drop_mapped(m, w->data, (size_t)w->n_out * w->row_bytes);
        w->packed = buf + off;
        off += mint_pack_bytes((mint_type)w->type, w->n_in, w->n_out);
    }
    m->packed_bytes = total;
    mint_pool_free(pool);
    free(ws);
    return MINT_OK;
}
