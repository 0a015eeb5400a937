// test_install.c - libmint as another program meets it: `cmake --install` into a temporary prefix,
// docs/examples/greedy.c built with `pkg-config --cflags --libs mint` and with a CMake project's
// find_package(mint), each run on a model; the shared library exports mint.h's functions only;
// an installed program finds its library through its RPATH.
#include "helpers/helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char prefix[1024], src[1024], model[1024];

// Installs the build tree into a fresh prefix; fills the paths above.
static void install(void) {
    const char *bin = getenv("MINT_BIN_DIR"), *source = getenv("MINT_SOURCE_DIR");
    cr_assert(bin && source, "MINT_BIN_DIR and MINT_SOURCE_DIR are set by ctest");
    snprintf(prefix, sizeof prefix, "%s", mt_path(mt_tmpdir(), "prefix"));
    snprintf(src, sizeof src, "%s", source);
    snprintf(model, sizeof model, "%s", mt_synth("small", "Q4_0"));
    char cmd[4096], *out, *err;
    snprintf(cmd, sizeof cmd, "cmake --install '%s' --prefix '%s'", bin, prefix);
    cr_assert_eq(mt_run(cmd, &out, &err), 0, "%s\n%s", out, err);
    free(out);
    free(err);
}

// Compiler flags a program needs to link a library built with MINT_SANITIZE.
static const char *san_flags(void) {
    static char f[256];
    if (MINT_SANITIZE_FLAGS[0]) snprintf(f, sizeof f, "-fsanitize=%s", MINT_SANITIZE_FLAGS);
    return f;
}

// Runs cmd, expecting success; returns stdout (caller frees).
static char *ok(const char *cmd) {
    char *out, *err;
    int rc = mt_run(cmd, &out, &err);
    cr_assert_eq(rc, 0, "%s: status %d\n%s\n%s", cmd, rc, out, err);
    free(err);
    return out;
}

Test(install, pkg_config_builds_and_runs_the_example, .timeout = MT_HANG(120)) {
    install();
    char cmd[16384];
    snprintf(cmd, sizeof cmd,
             "set -e; pc=$(find '%s' -name mint.pc); test -n \"$pc\"; "
             "export PKG_CONFIG_PATH=$(dirname \"$pc\"); "
             "test \"$(pkg-config --modversion mint)\" = \"%s\"; "
             "cc -std=c11 -Wall -Werror %s '%s/docs/examples/greedy.c' $(pkg-config --cflags "
             "--libs mint) -o '%s/greedy'; "
             "LD_LIBRARY_PATH=$(pkg-config --variable=libdir mint) '%s/greedy' '%s' 'Hello'",
             prefix, mint_version(), san_flags(), src, prefix, prefix, model);
    char *out = ok(cmd);
    cr_assert(strncmp(out, "Hello", 5) == 0 && strlen(out) > 6, "output: %s", out);
    free(out);
}

Test(install, find_package_builds_the_example, .timeout = MT_HANG(180)) {
    install();
    char cmd[16384];
    snprintf(cmd, sizeof cmd,
             "set -e; d='%s/cmake-app'; mkdir -p \"$d\"; cp '%s/docs/examples/greedy.c' \"$d\"; "
             "printf 'cmake_minimum_required(VERSION 3.25)\\nproject(app C)\\n"
             "find_package(mint REQUIRED)\\nadd_executable(greedy greedy.c)\\n"
             "target_link_libraries(greedy PRIVATE mint::mint)\\n' > \"$d/CMakeLists.txt\"; "
             "cmake -S \"$d\" -B \"$d/build\" -DCMAKE_PREFIX_PATH='%s' -DCMAKE_C_FLAGS='%s' "
             ">/dev/null; "
             "cmake --build \"$d/build\" >/dev/null; \"$d/build/greedy\" '%s' 'Hello'",
             prefix, src, prefix, san_flags(), model);
    char *out = ok(cmd);
    cr_assert(strncmp(out, "Hello", 5) == 0, "output: %s", out);
    free(out);
}

Test(install, only_the_public_api_is_exported, .timeout = MT_HANG(120)) {
    install();
    char cmd[16384];
    // Every dynamic symbol the library defines, minus those mint.h and the headers it includes
    // declare with MINT_API (the installed ones: a header left out of the install fails here).
    snprintf(cmd, sizeof cmd,
             "set -e; so=$(find '%s' -name 'libmint.so.*.*.*'); test -n \"$so\"; "
             "readelf -d \"$so\" | grep -q 'SONAME.*libmint.so.0'; "
             "nm -D --defined-only \"$so\" | awk '{print $3}' | sort > '%s/exported'; "
             "cd '%s/include'; "
             "parts=$(sed -n 's/^#include \"\\(mint_[a-z0-9_]*\\.h\\)\"$/\\1/p' mint.h); "
             "test -n \"$parts\"; "
             "sed -n 's/^MINT_API.*[ *]\\(mint_[a-z0-9_]*\\)(.*/\\1/p' mint.h $parts "
             "| sort > '%s/declared'; comm -3 '%s/exported' '%s/declared'; wc -l < '%s/exported'",
             prefix, prefix, prefix, prefix, prefix, prefix, prefix);
    char *out = ok(cmd);
    int n = 0;
    cr_assert_eq(sscanf(out, "%d", &n), 1,
                 "symbols exported but not declared (or the reverse):\n%s", out);
    cr_assert_gt(n, 40, "%s", out);
    free(out);
}

Test(install, installed_programs_find_their_library, .timeout = MT_HANG(120)) {
    install();
    char cmd[16384];
    snprintf(cmd, sizeof cmd,
             "env -u LD_LIBRARY_PATH '%s/bin/mint-run' -m '%s' --prompt-ids 1,20,30 -n 4 --temp 0 "
             "-t 1 2>/dev/null",
             prefix, model);
    free(ok(cmd));
    snprintf(cmd, sizeof cmd, "'%s/bin/mint-inspect' '%s'", prefix, model);
    char *out = ok(cmd);
    cr_assert(strstr(out, "gguf v3"), "%s", out);
    free(out);
}
