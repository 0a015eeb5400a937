// browser.c - see browser.h. The flags are those that make Chromium run headless as root on a
// machine with no network: no sandbox (root), no GPU, and none of its background connections.
#include "browser.h"

#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define FLAGS                                                                                      \
    "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "                         \
    "--disable-background-networking --disable-component-update --disable-sync "                   \
    "--disable-default-apps --mute-audio"

const char *mt_chromium(void) {
    const char *p = getenv("MINT_CHROMIUM");
    if (!p || !*p) p = "/usr/bin/chromium";
    if (access(p, X_OK) != 0) {
        if (getenv("CI"))
            cr_assert_fail("CI is set but %s is missing (apt-get install chromium)", p);
        cr_skip_test("%s is not installed; skipping a test that needs a browser", p);
    }
    return p;
}

char *mt_chromium_dom(const char *url) {
    char cmd[8192], *out, *err;
    snprintf(cmd, sizeof cmd,
             "timeout 120 '%s' " FLAGS " --user-data-dir='%s/chromium' --virtual-time-budget=3000 "
             "--dump-dom '%s'",
             mt_chromium(), mt_tmpdir(), url);
    int rc = mt_run(cmd, &out, &err);
    cr_assert_eq(rc, 0, "chromium failed (%d): %s", rc, err);
    free(err);
    return out;
}

void mt_chromium_screenshot(const char *url, const char *png, int width, int height) {
    char cmd[8192], *out, *err;
    snprintf(cmd, sizeof cmd,
             "rm -f '%s'; timeout 120 '%s' " FLAGS
             " --user-data-dir='%s/chromium' --hide-scrollbars --window-size=%d,%d "
             "--screenshot='%s' '%s'",
             png, mt_chromium(), mt_tmpdir(), width, height, png, url);
    int rc = mt_run(cmd, &out, &err);
    cr_assert_eq(rc, 0, "chromium failed (%d): %s", rc, err);
    cr_assert_eq(access(png, R_OK), 0, "no screenshot at %s: %s", png, err);
    free(out);
    free(err);
}
