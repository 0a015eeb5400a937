// repack.c - repacking the weight matrices into the 16-row groups of quant/pack.h, for the
// kernel levels that read them (gemm_packed), in the background after the model is opened.
//
// Why: the AVX-512 kernels keep 16 weight rows in the 16 lanes of a register. On the file's
// layout they load 16 rows side by side and transpose them, which for one token (nothing to
// share the transpose with) costs about as much as the dot products, and reads 16 short
// streams at once. Packed, each group of 16 rows is one contiguous stream of vectors that are
// already lanes = rows. The float types (F32, F16, BF16) pack 16 rows a chunk of 16 elements at
// a time: one token then runs 16 rows' accumulator chains side by side from one stream, where
// the file's layout allows one row's chain at a time (a fused multiply-add's latency per 16
// elements: about 28 GB/s of F16 at this machine's clock, below what one core can read).
//
// What it costs, and why in the background: a copy of the matrices in fresh anonymous memory.
// The copy itself is quick, but fresh memory is not free: the kernel zeroes every page on first
// touch, and in a virtual machine the host may have to back it first. On the 2-core VM this was
// developed on, packing TinyLlama's 0.6-1.1 GB took 3-4 s of which 80% was page zeroing, more
// than llama.cpp's whole time to first token. So mint_model_open only plans the copy and starts
// one low-priority thread (nice 19) that packs matrix after matrix; the model is usable at once
// and every evaluation reads, matrix by matrix, the packed rows when they are there and the
// file's rows until then. Both give the same bits (gemm_packed equals gemm), so when a matrix
// switches makes no difference to any result. mint_model_repack_wait packs what is left on the
// caller's thread as well, and returns when all is done (benchmarks call it before timing).
//
// Moving, for the rest. A matrix the start-up level has no packed kernel for (every type on
// AVX2 and NEON, which read the file's layout; a float row not a multiple of 16) is copied as it
// is, byte for byte, into the same buffer (`moved`). What that buys is the memory, not a layout:
// the file's map is made of 4 KiB pages of the page cache, and streaming a matrix through them
// crosses a page, and a TLB entry, every 4 KiB, where a hardware prefetcher also stops; the
// anonymous buffer is backed by 2 MiB pages. On F16 TinyLlama it takes away the map's slow
// rounds (docs/speed.md, "F16 and the file map": 5 rounds, one thread, median 12.2 tokens/s
// from the map with one round at 6.1, 12.3 moved with none below 11). The copy serves only on a
// map the file is mapped from: a file read into memory (no_mmap) is already anonymous memory on
// huge pages, and its float matrices are not packed either (two copies of the largest matrices
// there are, for a gain smaller than a block type's).
//
// Memory: no more than the file's size. The packed matrices share one anonymous buffer (huge
// pages where the kernel gives them) and each matrix's pages of the read-only map are dropped
// once it is packed (MADV_DONTNEED: they stay in the page cache, not in this process). The map
// stays the plain twin: the token embedding is read from it, and so is every matrix by a
// context of a level without packed kernels (MINT_ISA=ref, tests); the kernel maps the pages
// back in on demand. A file read into memory instead (no_mmap) keeps all its pages: up to twice
// the file's size (drop_mapped says why).
#include "runtime/engine/model.h"

#include "base/error.h"
#include "quant/kernels.h"
#include "quant/pack.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { HUGE = 2 << 20 };

struct mint_repack {
    mint_model *m;      // the model whose matrices are packed
    int n;              // matrices to pack
    mint_weight **ws;   // [n] the matrices
    uint8_t **dst;      // [n] where each goes in the buffer
    bool *move;         // [n] copied in the file's layout (moved) rather than packed
    atomic_int next;    // next matrix to take
    atomic_int done;    // matrices packed
    atomic_bool stop;   // set by mint_model_close: take no more
    pthread_t thread;   // the background packer
    pthread_mutex_t mu; // guards joined
    bool joined;        // the thread has been joined
};

enum { MATS_PER_LAYER = 23 };

// The matrices a token multiplies with, each once (the output is token_embd when tied; a Gemma 4
// layer without attn_v has its k as v, graph.c then reads wk twice); a stack of experts is one
// matrix of all their rows.
static int matrices(mint_model *m, mint_weight **out) {
    int n = 0;
    for (int l = 0; l < m->hp.n_layer; l++) {
        mint_layer *L = &m->layers[l];
        // (a mixture's layer has no dense gate, up and down: their data is NULL, skipped)
        mint_weight *ws[MATS_PER_LAYER] = {
            &L->wq, &L->wk, &L->wv, &L->wo, &L->w_gate, &L->w_up, &L->w_down, &L->router,
            &L->gate_exps, &L->up_exps, &L->down_exps, &L->gate_shexp, &L->up_shexp, &L->down_shexp,
            &L->ple_gate, &L->ple_proj,
            // a hybrid's recurrent mixers (LFM2's convolution, Qwen3.5's delta net)
            &L->conv_in, &L->conv_out, &L->ssm_qkv, &L->ssm_z, &L->ssm_beta, &L->ssm_alpha,
            &L->ssm_out};
        for (int i = 0; i < MATS_PER_LAYER; i++)
            if (!(ws[i] == &L->wv && L->wv.data && L->wv.data == L->wk.data)) out[n++] = ws[i];
    }
    out[n++] = &m->output;
    out[n++] = &m->ple_model; // Gemma 4's per-layer inputs' projection (data NULL elsewhere)
    return n;
}

// The file map holding all of [p, p + n), or NULL (memory the model owns, a tensor outside the
// maps).
static const mint_mapped_file *map_of(const mint_model *m, const void *p, size_t n) {
    const uintptr_t a = (uintptr_t)p, e = a + n;
    for (int i = 0; i < m->file->n_maps; i++) {
        const uintptr_t ms = (uintptr_t)m->file->maps[i].data, me = ms + m->file->maps[i].size;
        if (a >= ms && e <= me) return &m->file->maps[i];
    }
    return NULL;
}

// Drops this process's pages of [p, p + n) when the range lies in one of the file's maps
// (never memory the model owns: that would lose its contents).
//
// Not when the file was read into anonymous memory (no_mmap): there MADV_DONTNEED does not give
// pages back to the page cache, it discards the only copy, and the next read sees zeros. And the
// file's layout is still read after packing: the token embedding (the output matrix's bytes when
// they are tied), every matrix by a context of a level without packed kernels (MINT_ISA=ref, a
// context's isa "ref") and by the plain pass (mint_plain_forward). So no_mmap keeps both copies.
// With mlock the range is unlocked first (locked pages cannot be dropped): the packed copy is the
// one the kernels read, and it is locked.
static void drop_mapped(const mint_model *m, const void *p, size_t n) {
    const mint_mapped_file *map = map_of(m, p, n);
    if (!map || map->anonymous) return; // the only copy: see above
    const uintptr_t a = (uintptr_t)p, e = a + n, page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t lo = (a + page - 1) / page * page, hi = e / page * page;
    if (hi <= lo) return;
    if (m->mlock) (void)munlock((void *)lo, hi - lo);
    (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

// Takes matrices until none is left (or the model is closing): pack, publish, drop the map's
// copy. Run by the background thread and by mint_model_repack_wait's caller alike.
static void pack_matrices(mint_repack *r) {
    for (;;) {
        if (atomic_load(&r->stop)) return;
        const int i = atomic_fetch_add(&r->next, 1);
        if (i >= r->n) return;
        mint_weight *w = r->ws[i];
        // Release: a thread that sees the pointer sees the bytes.
        if (r->move[i]) {
            memcpy(r->dst[i], w->data, (size_t)mint_weight_all_rows(w) * w->row_bytes);
            __atomic_store_n(&w->moved, (const void *)r->dst[i], __ATOMIC_RELEASE);
        } else {
            mint_pack_rows_ref((mint_type)w->type, w->n_in, w->data, w->row_bytes,
                               mint_weight_all_rows(w), r->dst[i]);
            __atomic_store_n(&w->packed, (const void *)r->dst[i], __ATOMIC_RELEASE);
        }
        drop_mapped(r->m, w->data, (size_t)mint_weight_all_rows(w) * w->row_bytes);
        atomic_fetch_add(&r->done, 1);
    }
}

// Bytes a matrix takes in the buffer: its packed groups, or its moved rows rounded up to 64 so
// that every copy starts 64-byte aligned.
static size_t slot_bytes(const mint_weight *w, bool move) {
    return move ? ((size_t)mint_weight_all_rows(w) * w->row_bytes + 63) / 64 * 64
                : mint_pack_bytes((mint_type)w->type, w->n_in, mint_weight_all_rows(w));
}

static void *packer_main(void *arg) {
    // Low priority: evaluations come first; on an idle core this runs at full speed. (Linux
    // gives each thread its own nice value.)
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
    pack_matrices(arg);
    return NULL;
}

static bool repack_wanted(const mint_model_params *params) {
    if (params && params->no_repack) return false;
    const char *env = getenv("MINT_REPACK");
    return !(env && strcmp(env, "0") == 0);
}

static void repack_free(mint_model *m) {
    mint_repack *r = m->repack;
    if (!r) return;
    free(r->ws);
    free(r->dst);
    free(r->move);
    pthread_mutex_destroy(&r->mu);
    free(r);
    m->repack = NULL;
}

mint_status mint_model_repack(mint_model *m, const mint_model_params *params, mint_err *err) {
    if (!repack_wanted(params)) return MINT_OK;
    const mint_kernels *k = mint_kernels_get();
    mint_repack *r = calloc(1, sizeof *r);
    const size_t cap = (size_t)m->hp.n_layer * MATS_PER_LAYER + 2;
    mint_weight **all = malloc(cap * sizeof *all);
    if (r) {
        r->ws = malloc(cap * sizeof *r->ws);
        r->dst = malloc(cap * sizeof *r->dst);
        r->move = malloc(cap * sizeof *r->move);
    }
    if (!r || !all || !r->ws || !r->dst || !r->move) {
        if (r) free(r->ws), free(r->dst), free(r->move);
        free(r);
        free(all);
        return mint_fail(err, MINT_E_NOMEM, "out of memory");
    }
    const int n = matrices(m, all);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        mint_weight *w = all[i];
        if (!w->data) continue;
        const mint_mapped_file *map =
            map_of(m, w->data, (size_t)mint_weight_all_rows(w) * w->row_bytes);
        const bool own = !map || map->anonymous; // already the model's own memory
        const size_t gb = mint_pack_group_bytes((mint_type)w->type, w->n_in);
        // A float matrix in the model's own memory is left as it is: packing it would keep two
        // copies of the largest matrices there are (a block type's packed copy is about the
        // same size, its speed-up larger).
        // Experts are packed as one matrix of all their rows only when each starts a group
        // (mint_weight_expert finds expert e's groups at e * n_out / 16).
        const bool packs = k->t[w->type].gemm_packed && gb &&
                           !(own && mint_pack_float_size((mint_type)w->type, w->n_in)) &&
                           (w->n_mat <= 1 || w->n_out % MINT_PACK_ROWS == 0);
        if (packs) {
            w->pack_stride = gb;
            r->move[r->n] = false;
        } else {
            if (own) continue;
            r->move[r->n] = true;
        }
        total += slot_bytes(w, r->move[r->n]);
        r->ws[r->n++] = w;
    }
    free(all);
    // One buffer for every packed matrix, 2 MiB aligned so that it can be backed by huge pages.
    const size_t bytes = (total + HUGE - 1) / HUGE * HUGE;
    void *map =
        total ? mmap(NULL, bytes + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
              : MAP_FAILED;
    if (map == MAP_FAILED) { // nothing to pack, or no memory for it: the file's layout serves
        for (int i = 0; i < r->n; i++) r->ws[i]->pack_stride = 0;
        free(r->ws);
        free(r->dst);
        free(r->move);
        free(r);
        return MINT_OK;
    }
    uint8_t *buf = (uint8_t *)(((uintptr_t)map + HUGE - 1) / HUGE * HUGE);
    (void)madvise(buf, bytes, MADV_HUGEPAGE);
    // mlock: locked (and so zeroed) now, on this thread, so that mint_model_describe says
    // right after the open whether everything is locked (runtime/engine/residency.c).
    mint_model_lock(m, buf, bytes);
    size_t off = 0;
    for (int i = 0; i < r->n; i++) {
        r->dst[i] = buf + off;
        off += slot_bytes(r->ws[i], r->move[i]);
    }
    m->packed_map = map;
    m->packed_map_bytes = bytes + HUGE;
    m->packed_bytes = total;
    r->m = m;
    atomic_init(&r->next, 0);
    atomic_init(&r->done, 0);
    atomic_init(&r->stop, false);
    pthread_mutex_init(&r->mu, NULL);
    m->repack = r;
    if (pthread_create(&r->thread, NULL, packer_main, r) != 0) {
        pack_matrices(r); // no thread: pack now, on this one
        r->joined = true;
    }
    return MINT_OK;
}

void mint_model_repack_wait(mint_model *m) {
    mint_repack *r = m->repack;
    if (!r) return;
    pack_matrices(r);
    pthread_mutex_lock(&r->mu);
    if (!r->joined) {
        pthread_join(r->thread, NULL);
        r->joined = true;
    }
    pthread_mutex_unlock(&r->mu);
}

void mint_model_repack_stop(mint_model *m) {
    mint_repack *r = m->repack;
    if (!r) return;
    atomic_store(&r->stop, true);
    pthread_mutex_lock(&r->mu);
    if (!r->joined) {
        pthread_join(r->thread, NULL);
        r->joined = true;
    }
    pthread_mutex_unlock(&r->mu);
    repack_free(m);
}
