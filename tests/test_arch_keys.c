// test_arch_keys.c - the declared metadata keys (runtime/engine/arch_keys.c) are the truth about
// the files and the binder: every "<arch>.*" key the synthetic writer puts in each
// architecture's file is declared for its row, every key a row requires is there, and, key by
// key, a file whose key is renamed away is refused naming the key exactly when the table says
// the key is required (an optional key's absence takes its default; an ignored one changes
// nothing).
#include "formats/tensor_dir.h"
#include "helpers/helpers.h"
#include "mint.h"
#include "runtime/engine/arch.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Every synthetic preset with an architecture, micro-sized (one layer, 8 wide: fast to open
// many times). Mixtral's file is a llama file with experts.
static const char *const presets[] = {"llama3",   "qwen2",  "qwen3",   "phi3",     "gpt2",
                                      "gemma2",   "gemma3", "lfm2",    "qwen35",   "gemma4",
                                      "qwen3moe", "olmoe",  "mixtral", "qwen2moe", "gpt-oss"};
#define N_PRESETS (sizeof presets / sizeof *presets)

static const char *micro_file(size_t i) {
    static char paths[N_PRESETS][4096];
    if (paths[i][0]) return paths[i];
    char name[64];
    snprintf(name, sizeof name, "%s-micro-keys.gguf", presets[i]);
    snprintf(paths[i], sizeof paths[i], "%s", mt_path(mt_tmpdir(), name));
    mint_synth_params p = {
        .preset = presets[i], .ftype = "F32", .seed = 1, .n_threads = 1, .shape = "micro"};
    mint_err err;
    cr_assert_eq(mint_synth_write(&p, paths[i], &err), MINT_OK, "%s: %s", presets[i], err.msg);
    return paths[i];
}

// The file's architecture name and the row it takes.
static const mint_arch *row_of(const mint_file *f, char *arch, size_t cap) {
    const char *name = NULL;
    uint64_t len = 0;
    cr_assert_eq(mint_file_get_str(f, "general.architecture", &name, &len, NULL), MINT_OK);
    snprintf(arch, cap, "%.*s", (int)len, name);
    char key[128];
    snprintf(key, sizeof key, "%s.expert_count", arch);
    uint64_t experts = 0;
    const bool moe = mint_file_get_u64(f, key, &experts, NULL) == MINT_OK && experts > 0;
    const mint_arch *row = mint_arch_for_file(arch, moe);
    cr_assert_not_null(row, "%s", arch);
    return row;
}

// The suffix of key k of f when it is one of the architecture's ("<arch>.<suffix>"), else NULL.
static const char *arch_suffix(const char *key, const char *arch) {
    const size_t n = strlen(arch);
    return strncmp(key, arch, n) == 0 && key[n] == '.' ? key + n + 1 : NULL;
}

Test(arch_keys, every_key_of_every_file_is_declared_for_its_row) {
    for (size_t i = 0; i < N_PRESETS; i++) {
        mint_file *f;
        mint_err err;
        cr_assert_eq(mint_file_open(micro_file(i), &f, &err), MINT_OK, "%s", err.msg);
        char arch[64];
        const mint_arch *row = row_of(f, arch, sizeof arch);
        int seen = 0;
        for (uint64_t k = 0; k < f->n_kv; k++) {
            const char *suffix = arch_suffix(f->kv[k].key, arch);
            if (!suffix) continue;
            const mint_key id = mint_arch_key_find(suffix);
            cr_assert_neq(id, MINT_KEY_COUNT, "%s: %s is not declared", presets[i], f->kv[k].key);
            cr_assert_neq(mint_arch_key_need(row, id), MINT_KEY_ABSENT,
                          "%s: %s is declared, but not for its row", presets[i], f->kv[k].key);
            seen++;
        }
        cr_assert_geq(seen, 5, "%s", presets[i]);
        // ... and every key the row requires is in the file
        for (int id = 0; id < MINT_KEY_COUNT; id++) {
            if (mint_arch_key_need(row, (mint_key)id) != MINT_KEY_REQUIRED) continue;
            char key[128];
            mint_arch_key_name(key, sizeof key, arch, (mint_key)id);
            const mint_kv *kv = NULL;
            for (uint64_t k = 0; k < f->n_kv && !kv; k++)
                if (strcmp(f->kv[k].key, key) == 0) kv = &f->kv[k];
            cr_assert_not_null(kv, "%s: required %s is not in the file", presets[i], key);
        }
        mint_file_close(f);
    }
}

// Each declared key of each file renamed (its last letter changed: the file stays valid, the key
// is no longer there): the binder refuses the file naming the key exactly for the required ones;
// without an optional key it opens, or fails because its default does not fit the file (Gemma
// 2's 4096-key window in a 16-token micro model), never as missing; without an ignored key it
// opens.
Test(arch_keys, the_binder_needs_exactly_the_required_keys) {
    int checked[MINT_KEY_REQUIRED + 1] = {0};
    for (size_t i = 0; i < N_PRESETS; i++) {
        size_t len = 0;
        uint8_t *image = mt_read_file(micro_file(i), &len);
        cr_assert_not_null(image);
        mint_file *f;
        mint_err err;
        cr_assert_eq(mint_file_open(micro_file(i), &f, &err), MINT_OK, "%s", err.msg);
        char arch[64];
        const mint_arch *row = row_of(f, arch, sizeof arch);
        char path[4096];
        snprintf(path, sizeof path, "%s", mt_path(mt_tmpdir(), "renamed-key.gguf"));
        for (uint64_t k = 0; k < f->n_kv; k++) {
            const char *suffix = arch_suffix(f->kv[k].key, arch);
            if (!suffix) continue;
            const mint_key id = mint_arch_key_find(suffix);
            const mint_key_need need = mint_arch_key_need(row, id);
            // the record: u64 name length, then the name
            const size_t at = (size_t)f->kv[k].file_offset + 8 + strlen(f->kv[k].key) - 1;
            cr_assert_lt(at, len);
            const uint8_t was = image[at];
            image[at] = was == 'Z' ? 'Y' : 'Z';
            cr_assert(mt_write_file(path, image, len));
            image[at] = was;
            mint_model *m = NULL;
            const mint_status st = mint_model_open(path, NULL, &m, &err);
            if (need == MINT_KEY_REQUIRED) {
                cr_assert_neq(st, MINT_OK, "%s without %s opened", presets[i], f->kv[k].key);
                // (except the key that chose the row: without expert_count Mixtral's file reads
                // as a dense llama file, refused for its missing feed-forward)
                if (!(row->moe_variant && id == MINT_KEY_EXPERT_COUNT))
                    cr_assert(strstr(err.msg, suffix), "%s without %s: '%s' does not name it",
                              presets[i], f->kv[k].key, err.msg);
            } else if (need == MINT_KEY_IGNORED) {
                cr_assert_eq(st, MINT_OK, "%s without the ignored %s: %s", presets[i], f->kv[k].key,
                             err.msg);
            } else if (st != MINT_OK) { // its default did not fit this file
                cr_assert(!strstr(err.msg, "missing") && !strstr(err.msg, "required"),
                          "%s without the optional %s: '%s'", presets[i], f->kv[k].key, err.msg);
            }
            if (st == MINT_OK) mint_model_close(m);
            checked[need]++;
        }
        mint_file_close(f);
        free(image);
    }
    cr_log_info("renamed keys: %d required, %d optional, %d ignored", checked[MINT_KEY_REQUIRED],
                checked[MINT_KEY_OPTIONAL], checked[MINT_KEY_IGNORED]);
    cr_assert_gt(checked[MINT_KEY_REQUIRED], 60);
    cr_assert_gt(checked[MINT_KEY_OPTIONAL], 20);
    cr_assert_gt(checked[MINT_KEY_IGNORED], 0);
}

Test(arch_keys, names_and_descriptions) {
    cr_assert_str_eq(mint_arch_key_suffix(MINT_KEY_HEAD_COUNT_KV), "attention.head_count_kv");
    cr_assert_null(mint_arch_key_suffix(MINT_KEY_COUNT));
    cr_assert_eq(mint_arch_key_find("rope.freq_base"), MINT_KEY_ROPE_BASE);
    cr_assert_eq(mint_arch_key_find("rope.freq_bas"), MINT_KEY_COUNT);
    char name[64];
    mint_arch_key_name(name, sizeof name, "qwen3", MINT_KEY_CONTEXT_LENGTH);
    cr_assert_str_eq(name, "qwen3.context_length");
    // every key has a distinct suffix
    for (int a = 0; a < MINT_KEY_COUNT; a++)
        cr_assert_eq(mint_arch_key_find(mint_arch_key_suffix((mint_key)a)), a, "%d", a);
    char buf[8192];
    mint_arch_describe_keys(mint_arch_find("qwen3"), buf, sizeof buf);
    cr_assert(strstr(buf, "  qwen3.context_length (uint, optional; absent: 2048): "), "%s", buf);
    cr_assert(strstr(buf, "  qwen3.attention.layer_norm_rms_epsilon (float, required): "), "%s",
              buf);
    cr_assert_null(strstr(buf, "expert_count"), "%s", buf);
    mint_arch_describe_keys(mint_arch_find("phi3"), buf, sizeof buf);
    cr_assert(strstr(buf, "phi3.attention.sliding_window (uint, known, not read)"), "%s", buf);
}
