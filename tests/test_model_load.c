// test_model_load.c - how the weights come into memory: mint_model_params.no_mmap (the file read
// into anonymous memory instead of mapped) and .mlock (the weights locked in RAM), in the library
// and in the programs' --no-mmap, --mlock and mint-bench's -mmp.
//
// no_mmap must change no bit: a repacked quantized model and an F16 one (never repacked: read
// from the file's memory) give the mapped model's logits, and so do a reference-level context
// and the plain pass after the repacking is done, which read the file's layout: on anonymous
// memory the pages the repacker drops on a map would come back as zeros. mlock never fails an
// open: with the memlock limit lowered (and CAP_IPC_LOCK dropped, for root) the model opens,
// works, and says it is not locked and why.
#include "helpers/helpers.h"
#include "formats/hf_checkpoint.h"
#include "helpers/tool.h"
#include "quant/pack.h"
#include "runtime/engine/model.h"

#include <criterion/criterion.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

enum { N_PROMPT = 7, N_STEPS = 3, N_ROWS = N_PROMPT + N_STEPS };

static const int32_t prompt[N_PROMPT] = {1, 40, 77, 261, 378, 432, 383};

// Logits of a fixed program (N_PROMPT tokens as one batch, every row kept, then N_STEPS single
// tokens) in a context of the given level (NULL: the process's) into out[N_ROWS * n_vocab].
// Returns false on any failure; asserts nothing (a forked child uses it too).
static bool logits_of(mint_model *m, const char *isa, int n_threads, float *out) {
    mint_model_desc d;
    mint_model_describe(m, &d);
    const size_t row = (size_t)d.n_vocab;
    mint_ctx_params p = mint_ctx_default_params();
    p.n_threads = n_threads;
    p.n_ctx = 32;
    p.isa = isa;
    mint_ctx *c;
    mint_err err;
    if (mint_ctx_create(m, &p, &c, &err) != MINT_OK) return false;
    bool ok = mint_eval(c, prompt, N_PROMPT, 0, true, &err) == MINT_OK;
    for (int i = 0; ok && i < N_PROMPT; i++)
        memcpy(out + i * row, mint_get_logits(c, i), row * sizeof *out);
    for (int s = 0; ok && s < N_STEPS; s++) {
        const int32_t tok = 100 + 37 * s;
        ok = mint_eval(c, &tok, 1, N_PROMPT + s, false, &err) == MINT_OK;
        if (ok) memcpy(out + (N_PROMPT + s) * row, mint_get_logits(c, 0), row * sizeof *out);
    }
    mint_ctx_free(c);
    return ok;
}

static mint_model *open_with(const char *path, mint_model_params mp) {
    mint_model *m;
    mint_err err;
    cr_assert_eq(mint_model_open(path, &mp, &m, &err), MINT_OK, "%s", err.msg);
    return m;
}

static size_t n_logits(mint_model *m) {
    mint_model_desc d;
    mint_model_describe(m, &d);
    return (size_t)N_ROWS * (size_t)d.n_vocab;
}

// The program's logits of m at a level, asserted to succeed; malloc'd.
static float *logits(mint_model *m, const char *isa, int n_threads) {
    float *out = malloc(n_logits(m) * sizeof *out);
    cr_assert(logits_of(m, isa, n_threads, out), "evaluation failed");
    return out;
}

// The logits of `path` opened with no_mmap (and mp's other fields) equal the mapped file's, at
// the start-up level after the repacking is done and at the reference level; the file's bytes of
// every matrix are still there.
static void check_same_bits(const char *path, mint_model_params mp, const char *what) {
    mint_model *mapped = open_with(path, mp);
    mp.no_mmap = true;
    mint_model *read = open_with(path, mp);
    cr_assert_eq(read->file->no_mmap, true);
    cr_assert(read->file->n_maps >= 1);
    for (int i = 0; i < read->file->n_maps; i++) {
        cr_assert(read->file->maps[i].anonymous, "%s: map %d", what, i);
        cr_assert_not(mapped->file->maps[i].anonymous, "%s: map %d", what, i);
    }
    mint_model_repack_wait(mapped);
    mint_model_repack_wait(read);
    // The same block-type matrices packed (float ones only on the map: read into memory they
    // would be a second copy); on the map, the others are moved to anonymous memory, which the
    // file read into memory already is (runtime/engine/repack.c). (w_down: a Hugging Face
    // folder's q and k are permuted copies the model owns, and stay where they are.)
    for (int l = 0; l < read->hp.n_layer; l++) {
        const mint_weight *a = &read->layers[l].w_down, *b = &mapped->layers[l].w_down;
        const bool is_float = mint_pack_float_size((mint_type)a->type, a->n_in) > 0;
        cr_assert_eq(a->packed != NULL, b->packed != NULL && !is_float, "%s: layer %d", what, l);
        cr_assert_null(a->moved, "%s: layer %d", what, l);
        cr_assert_eq(b->moved != NULL, !b->packed && !mp.no_repack, "%s: layer %d", what, l);
    }
    // The file's layout of every matrix survived the packing (it would read as zeros had its
    // pages been dropped).
    for (int l = 0; l < read->hp.n_layer; l++) {
        const mint_weight *a = &read->layers[l].w_down, *b = &mapped->layers[l].w_down;
        cr_assert_eq(memcmp(a->data, b->data, (size_t)a->n_out * a->row_bytes), 0, "%s: layer %d",
                     what, l);
    }
    const size_t n = n_logits(read);
    const char *isas[] = {NULL, "ref"};
    for (int i = 0; i < 2; i++) {
        float *want = logits(mapped, isas[i], 2), *got = logits(read, isas[i], 2);
        cr_assert_eq(memcmp(got, want, n * sizeof *got), 0, "%s: level %s", what,
                     isas[i] ? isas[i] : mint_isa_name());
        free(want);
        free(got);
    }
    mint_model_close(read);
    mint_model_close(mapped);
}

Test(no_mmap, quantized_and_f16_models_give_the_maps_bits, .timeout = MT_HANG(600)) {
    const char *types[] = {"Q4_0", "Q4_K_M", "F16"};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        const char *path = mt_synth("small", types[i]);
        check_same_bits(path, (mint_model_params){0}, types[i]);
        check_same_bits(path, (mint_model_params){.no_repack = true}, types[i]);
    }
}

// Safetensors shards of a Hugging Face folder go through the same read.
Test(no_mmap, a_sharded_hf_folder_gives_the_maps_bits, .timeout = MT_HANG(300)) {
    mint_file *g;
    mint_err err;
    cr_assert_eq(mint_file_open(mt_data_path("stories260K.gguf"), &g, &err), MINT_OK, "%s",
                 err.msg);
    const char *dir = keep(mt_path(mt_tmpdir(), "stories-sharded"));
    mint_hf_export_opts o = {.max_shard_bytes = 700000, .write_tokenizer = true};
    cr_assert_eq(mint_hf_export(g, dir, &o, &err), MINT_OK, "%s", err.msg);
    mint_file_close(g);
    check_same_bits(dir, (mint_model_params){0}, "hf folder");
}

// The plain pass (one token at a time, reference kernels, the file's layout) of a no_mmap model
// whose repacking is done gives the bits of the mapped model opened without repacking.
Test(no_mmap, the_plain_pass_after_repacking_gives_the_maps_bits, .timeout = MT_HANG(300)) {
    const char *path = mt_synth("small", "Q4_0");
    mint_model *read = open_with(path, (mint_model_params){.no_mmap = true});
    mint_model *mapped = open_with(path, (mint_model_params){.no_repack = true});
    mint_model_repack_wait(read);
    mint_model_desc d;
    mint_model_describe(read, &d);
    const size_t nv = (size_t)d.n_vocab;
    float *a = malloc(nv * sizeof *a), *b = malloc(nv * sizeof *b);
    mint_plain *pa, *pb;
    mint_err err;
    cr_assert_eq(mint_plain_create(read, 16, &pa, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_plain_create(mapped, 16, &pb, &err), MINT_OK, "%s", err.msg);
    for (int i = 0; i < N_PROMPT; i++) {
        cr_assert_eq(mint_plain_forward(pa, prompt[i], i, a, &err), MINT_OK, "%s", err.msg);
        cr_assert_eq(mint_plain_forward(pb, prompt[i], i, b, &err), MINT_OK, "%s", err.msg);
        cr_assert_eq(memcmp(a, b, nv * sizeof *a), 0, "position %d", i);
    }
    mint_plain_free(pa);
    mint_plain_free(pb);
    free(a);
    free(b);
    mint_model_close(read);
    mint_model_close(mapped);
}

// A missing file, a file cut short and one that ends before its stated size fail with one line
// naming the path; the first two with the words the mapped open uses.
Test(no_mmap, unreadable_files_fail_with_one_line_naming_the_path) {
    const char *src = mt_synth("small", "Q4_0");
    size_t len;
    uint8_t *bytes = mt_read_file(src, &len);
    cr_assert(bytes);
    const char *cut = keep(mt_path(mt_tmpdir(), "cut.gguf"));
    cr_assert(mt_write_file(cut, bytes, len / 2));
    free(bytes);
    const char *paths[] = {cut, keep(mt_path(mt_tmpdir(), "absent.gguf"))};
    for (int i = 0; i < 2; i++) {
        mint_model *m = NULL;
        mint_err e_read, e_map;
        const mint_model_params rp = {.no_mmap = true};
        const mint_status st = mint_model_open(paths[i], &rp, &m, &e_read);
        cr_assert_neq(st, MINT_OK, "%s", paths[i]);
        cr_assert_null(m);
        cr_assert(strstr(e_read.msg, paths[i]), "%s", e_read.msg);
        cr_assert_null(strchr(e_read.msg, '\n'), "%s", e_read.msg);
        cr_assert_eq(mint_model_open(paths[i], NULL, &m, &e_map), st);
        cr_assert_str_eq(e_read.msg, e_map.msg);
    }
    // sysfs files are regular files that say 4096 bytes and hold fewer: the read ends early.
    const char *sys = "/sys/kernel/mm/transparent_hugepage/enabled";
    if (access(sys, R_OK) != 0) cr_skip_test("%s is not readable here", sys);
    mint_model *m = NULL;
    mint_err err;
    const mint_model_params rp = {.no_mmap = true};
    cr_assert_eq(mint_model_open(sys, &rp, &m, &err), MINT_E_IO);
    cr_assert(strstr(err.msg, sys) && strstr(err.msg, "ended at byte"), "%s", err.msg);
}

// Root locks whatever it likes (CAP_IPC_LOCK): dropping it from the effective set makes the
// memlock limit apply to this process, as to any user's.
static bool drop_ipc_lock(void) {
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct c[2];
    if (syscall(SYS_capget, &h, c) != 0) return false;
    c[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
    c[CAP_IPC_LOCK / 32].permitted &= ~(1u << (CAP_IPC_LOCK % 32));
    return syscall(SYS_capset, &h, c) == 0;
}

// The sanitizers replace mlock with a no-op that reports success, so a refused lock cannot be
// seen in a sanitized build: those checks run in the plain builds only.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MLOCK_REFUSAL_SEEN 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define MLOCK_REFUSAL_SEEN 0
#endif
#endif
#ifndef MLOCK_REFUSAL_SEEN
#define MLOCK_REFUSAL_SEEN 1
#endif

// In a child with a memlock limit of 64 KiB: mlock is refused, the open succeeds, the desc says
// so, and the logits are want's. The exit status says which check failed.
static int locked_out_child(const char *path, bool no_mmap, const float *want, size_t n) {
    const struct rlimit rl = {64 << 10, 64 << 10};
    if (setrlimit(RLIMIT_MEMLOCK, &rl) != 0 || !drop_ipc_lock()) return 10;
    mint_model *m;
    mint_err err;
    const mint_model_params mp = {.mlock = true, .no_mmap = no_mmap};
    if (mint_model_open(path, &mp, &m, &err) != MINT_OK) return 11;
    mint_model_desc d;
    mint_model_describe(m, &d);
    if (d.locked || !d.lock_error || !strstr(d.lock_error, "RLIMIT_MEMLOCK")) return 12;
    if (strchr(d.lock_error, '\n')) return 13;
    mint_model_repack_wait(m);
    float *got = malloc(n * sizeof *got);
    if (!got || !logits_of(m, NULL, 1, got)) return 14;
    const int rc = memcmp(got, want, n * sizeof *got) ? 15 : 0;
    free(got);
    mint_model_close(m);
    return rc;
}

Test(mlock, locking_never_fails_the_open, .timeout = MT_HANG(300)) {
    const char *path = mt_synth("small", "Q4_K_M");
    mint_model *plain = open_with(path, (mint_model_params){0});
    mint_model_repack_wait(plain);
    float *want = logits(plain, NULL, 1);
    const size_t n = n_logits(plain);
    mint_model_close(plain);
    for (int no_mmap = 0; no_mmap < 2; no_mmap++) {
        // As this process may: locked, or (without the right) a reason.
        mint_model *m = open_with(path, (mint_model_params){.mlock = true, .no_mmap = no_mmap});
        mint_model_desc d;
        mint_model_describe(m, &d);
        cr_assert_eq(d.locked, d.lock_error == NULL, "%s", d.lock_error ? d.lock_error : "");
        mint_model_repack_wait(m);
        float *got = logits(m, NULL, 1);
        cr_assert_eq(memcmp(got, want, n * sizeof *got), 0, "no_mmap %d", no_mmap);
        free(got);
        mint_model_close(m);
        // Without mlock nothing is said.
        m = open_with(path, (mint_model_params){.no_mmap = no_mmap});
        mint_model_describe(m, &d);
        cr_assert(!d.locked && !d.lock_error);
        mint_model_close(m);
        // Not allowed to lock.
        if (!MLOCK_REFUSAL_SEEN) continue;
        const pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) _exit(locked_out_child(path, no_mmap, want, n));
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status), "child status %d", status);
        cr_assert_eq(WEXITSTATUS(status), 0, "no_mmap %d: child check %d failed", no_mmap,
                     WEXITSTATUS(status));
    }
    free(want);
}

// ---------------------------------------------------------------------------------------------
// The programs

Test(programs, no_mmap_and_mlock_change_no_text, .timeout = MT_HANG(300)) {
    const char *model = keep(mt_synth("small", "Q4_K_M"));
    const char *args = "-p 'Once upon a time' -n 24 --temp 0 -t 2";
    char *want, *err;
    cr_assert_eq(run_tool(&want, &err, "mint-run", "-m '%s' %s", model, args), 0, "%s", err);
    free(err);
    const char *flags[] = {"--no-mmap", "--mlock", "--no-mmap --mlock"};
    for (int i = 0; i < 3; i++) {
        char *out;
        cr_assert_eq(run_tool(&out, &err, "mint-run", "-m '%s' %s %s", model, args, flags[i]), 0,
                     "%s: %s", flags[i], err);
        cr_assert_str_eq(out, want, "%s", flags[i]);
        free(out);
        free(err);
    }
    if (!MLOCK_REFUSAL_SEEN) {
        free(want);
        return;
    }
    // Not allowed to lock (root loses CAP_IPC_LOCK through setpriv): one warning, same text.
    char cmd[4096], *out;
    snprintf(cmd, sizeof cmd, "ulimit -l 64 && %s '%s' -m '%s' %s --mlock --no-mmap",
             getuid() == 0 ? "setpriv --bounding-set=-ipc_lock" : "exec", mt_bin("mint-run"), model,
             args);
    cr_assert_eq(mt_run(cmd, &out, &err), 0, "%s", err);
    cr_assert_str_eq(out, want);
    cr_assert(strstr(err, "mint-run: warning: --mlock: could not lock"), "%s", err);
    free(out);
    free(err);
    free(want);
}

Test(programs, bench_reads_with_mmp_0, .timeout = MT_HANG(300)) {
    const char *model = keep(mt_synth("small", "Q4_0"));
    const char *modes[] = {"-mmp 0", "--no-mmap", "-mmp 1"};
    const char *says[] = {"(read into memory", "(read into memory", "(mapped"};
    for (int i = 0; i < 3; i++) {
        char *out, *err;
        cr_assert_eq(run_tool(&out, &err, "mint-bench",
                              "-m '%s' %s -p 8 -n 2 -r 1 -t 1 --membw-gib 0 --no-warmup", model,
                              modes[i]),
                     0, "%s", err);
        cr_assert(strstr(err, says[i]), "%s: %s", modes[i], err);
        cr_assert(strstr(out, "tg2"), "%s", out);
        free(out);
        free(err);
    }
}

Test(programs, bad_mmap_values_exit_2) {
    const char *model = keep(mt_synth("small", "Q4_0"));
    struct {
        const char *tool, *args, *needle;
    } cases[] = {
        {"mint-bench", "-mmp 2", "-mmp"},           {"mint-bench", "--mmap -1", "--mmap"},
        {"mint-bench", "-mmp yes", "-mmp"},         {"mint-run", "--no-mmap=1", "--no-mmap=1"},
        {"mint-perplexity", "--mlock 1 -f x", "1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out, *err;
        int rc = run_tool(&out, &err, cases[i].tool, "-m '%s' %s", model, cases[i].args);
        cr_assert_eq(rc, 2, "%s %s: %d %s", cases[i].tool, cases[i].args, rc, err);
        expect_one_line_error(rc, out, err, cases[i].needle, cases[i].args);
        free(out);
        free(err);
    }
}
