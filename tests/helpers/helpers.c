// helpers.c - see helpers.h.
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void remove_tmpdir(void);

static char *rotating(void) {
    static char bufs[8][4096];
    static int next;
    char *b = bufs[next];
    next = (next + 1) % 8;
    return b;
}

// The real data the repository carries itself (models/README.md, tests/reference/README.md): a
// fresh clone with nothing beside it runs every test that needs only these. MINT_TEST_DATA, when
// set, still wins, so CI compares against the shared folder's copies.
static const struct {
    const char *rel;  // the name under MINT_TEST_DATA
    const char *repo; // the copy inside the repository, relative to MINT_SOURCE_DIR
} bundled[] = {
    {"stories260K.gguf", "models/stories260K.gguf"},
    {"reference/stories260K.json", "tests/reference/stories260K.json"},
    {"reference/prompts_stories.json", "tests/reference/prompts_stories.json"},
};

static const char *bundled_path(const char *rel) {
    const char *src = getenv("MINT_SOURCE_DIR");
    if (!src || !*src) return NULL;
    for (size_t i = 0; i < sizeof bundled / sizeof bundled[0]; i++) {
        if (strcmp(rel, bundled[i].rel) != 0) continue;
        char *p = rotating();
        snprintf(p, 4096, "%s/%s", src, bundled[i].repo);
        return access(p, R_OK) == 0 ? p : NULL;
    }
    return NULL;
}

const char *mt_data_path(const char *rel) {
    const char *dir = getenv("MINT_TEST_DATA");
    if (!dir || !*dir) {
        const char *own = bundled_path(rel);
        if (own) return own;
        if (getenv("CI"))
            cr_assert_fail("CI is set but MINT_TEST_DATA is not (needed for %s)", rel);
        cr_skip_test("needs the test data: MINT_TEST_DATA is not set (this case reads %s)", rel);
    }
    char *p = rotating();
    snprintf(p, 4096, "%s/%s", dir, rel);
    if (access(p, R_OK) != 0) {
        if (getenv("CI")) cr_assert_fail("CI is set but test data file %s is missing", p);
        cr_skip_test("needs a test data file: %s is missing", p);
    }
    return p;
}

const char *mt_bin(const char *tool) {
    const char *dir = getenv("MINT_BIN_DIR");
    char *p = rotating();
    snprintf(p, 4096, "%s/%s", dir && *dir ? dir : ".", tool);
    if (access(p, X_OK) != 0) cr_assert_fail("tool %s not found (is MINT_BIN_DIR set?)", p);
    return p;
}

const char *mt_tmpdir(void) {
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/mint-test-XXXXXX");
        if (!mkdtemp(dir)) cr_assert_fail("mkdtemp failed");
        atexit(remove_tmpdir); // each test is a process of its own: its folder goes with it
    }
    return dir;
}

static void remove_tmpdir(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", mt_tmpdir());
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", mt_tmpdir());
}

const char *mt_synth(const char *preset, const char *ftype) {
    char name[128];
    snprintf(name, sizeof name, "synth-%s-%s.gguf", preset, ftype);
    const char *path = mt_path(mt_tmpdir(), name);
    if (access(path, R_OK) == 0) return path;
    mint_synth_params p = {.preset = preset, .ftype = ftype, .seed = 7, .n_threads = 2};
    mint_err err;
    cr_assert_eq(mint_synth_write(&p, path, &err), MINT_OK, "synthetic %s %s: %s", preset, ftype,
                 err.msg);
    return path;
}

mint_model *mt_synth_model(const char *preset, const char *ftype) {
    mint_model *m;
    mint_err err;
    cr_assert_eq(mint_model_open(mt_synth(preset, ftype), NULL, &m, &err), MINT_OK, "%s", err.msg);
    return m;
}

int mt_greedy(mint_model *m, int threads, const int32_t *prompt, int n_prompt, int n, int32_t *out,
              double *logprob) {
    mint_model_desc d;
    mint_model_describe(m, &d);
    mint_ctx_params p = mint_ctx_default_params();
    p.n_threads = threads;
    p.n_ctx = n_prompt + n + 1;
    mint_ctx *c;
    mint_err err;
    cr_assert_eq(mint_ctx_create(m, &p, &c, &err), MINT_OK, "%s", err.msg);
    cr_assert_eq(mint_eval(c, prompt, n_prompt, 0, false, &err), MINT_OK, "%s", err.msg);
    double lp = 0;
    int k = 0;
    while (k < n) {
        const float *l = mint_get_logits(c, -1);
        // An independent double-precision oracle for the tests (argmax and its log-softmax):
        // deliberately not the library's mint_top_k / mint_log_softmax, which it checks.
        int32_t best = 0;
        for (int32_t i = 1; i < d.n_vocab; i++) best = l[i] > l[best] ? i : best;
        double max = l[best], sum = 0;
        for (int32_t i = 0; i < d.n_vocab; i++) sum += exp((double)l[i] - max);
        lp += -log(sum); // log-softmax of the argmax
        out[k++] = best;
        if (mint_token_is_eog(m, best) || k == n) break;
        cr_assert_eq(mint_eval(c, &best, 1, n_prompt + k - 1, false, &err), MINT_OK, "%s", err.msg);
    }
    mint_ctx_free(c);
    if (logprob) *logprob = lp;
    return k;
}

const char *mt_path(const char *dir, const char *name) {
    char *p = rotating();
    snprintf(p, 4096, "%s/%s", dir, name);
    return p;
}

static char *slurp_fd(FILE *f) {
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t k;
    while (buf && (k = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += k;
        if (cap - len < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    if (buf) buf[len] = '\0';
    return buf;
}

int mt_run(const char *cmdline, char **out, char **err) {
    char errpath[] = "/tmp/mint-test-err-XXXXXX";
    int efd = mkstemp(errpath);
    if (efd < 0) cr_assert_fail("mkstemp failed");
    close(efd);
    size_t n = strlen(cmdline) + strlen(errpath) + 16;
    char *full = malloc(n);
    snprintf(full, n, "%s 2>%s", cmdline, errpath);
    FILE *p = popen(full, "r");
    free(full);
    if (!p) cr_assert_fail("popen failed for: %s", cmdline);
    char *o = slurp_fd(p);
    int status = pclose(p);
    if (out)
        *out = o;
    else
        free(o);
    if (err) {
        size_t len;
        *err = (char *)mt_read_file(errpath, &len);
    }
    unlink(errpath);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

uint8_t *mt_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        if (len) *len = (size_t)n;
    }
    return buf;
}

bool mt_write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

json_object *mt_json_data(const char *rel) {
    const char *p = mt_data_path(rel);
    json_object *o = json_object_from_file(p);
    if (!o) cr_assert_fail("cannot parse JSON %s", p);
    return o;
}

json_object *mt_json_source(const char *rel) {
    static struct {
        char rel[128];
        json_object *o;
    } seen[8];
    int i = 0;
    for (; i < 8 && seen[i].o; i++)
        if (strcmp(seen[i].rel, rel) == 0) return seen[i].o;
    const char *src = getenv("MINT_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", src && *src ? src : ".", rel);
    json_object *o = json_object_from_file(path);
    if (!o) cr_assert_fail("cannot read %s (is MINT_SOURCE_DIR set?)", path);
    if (i < 8) {
        snprintf(seen[i].rel, sizeof seen[i].rel, "%s", rel);
        seen[i].o = o;
    }
    return o;
}

json_object *mt_jget(json_object *o, const char *key) {
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v)) cr_assert_fail("JSON key '%s' missing", key);
    return v;
}

json_object *mt_jidx(json_object *a, size_t i) {
    if (!json_object_is_type(a, json_type_array) || i >= json_object_array_length(a))
        cr_assert_fail("JSON index %zu out of range", i);
    return json_object_array_get_idx(a, i);
}

json_object *mt_jpath(json_object *o, const char *path) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save, *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save))
        o = (*k >= '0' && *k <= '9') ? mt_jidx(o, (size_t)atoi(k)) : mt_jget(o, k);
    return o;
}

const char *mt_jpath_str(json_object *o, const char *path) {
    json_object *v = mt_jpath(o, path);
    cr_assert(json_object_is_type(v, json_type_string), "%s is not a string", path);
    return json_object_get_string(v);
}

int mt_jpath_int(json_object *o, const char *path) {
    json_object *v = mt_jpath(o, path);
    cr_assert(json_object_is_type(v, json_type_int), "%s is not an integer", path);
    return json_object_get_int(v);
}

void mt_turn_counts(const char *err, int turn, long *evaluated, long *reused) {
    char key[32];
    snprintf(key, sizeof key, "[turn %d: ", turn);
    const char *l = strstr(err, key);
    cr_assert(l, "no '%s' line:\n%s", key, err);
    cr_assert_eq(sscanf(l + strlen(key), "%ld new tokens evaluated, %ld reused from the cache]",
                        evaluated, reused),
                 2, "%s", l);
}
