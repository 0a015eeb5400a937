// browser.h - opening a page in headless Chromium (Debian's chromium package), as a user's browser
// would: the DOM after the page's scripts ran, and a screenshot.
#ifndef MINT_TEST_BROWSER_H
#define MINT_TEST_BROWSER_H

// Path of the chromium binary ($MINT_CHROMIUM, else /usr/bin/chromium). When it is missing the
// running test is skipped, or fails when CI is set.
const char *mt_chromium(void);
// The serialised DOM of url after load (and up to 3 s of the page's own timers), malloc'd.
char *mt_chromium_dom(const char *url);
// A screenshot of url into png (width x height pixels); fails the test when none is written.
void mt_chromium_screenshot(const char *url, const char *png, int width, int height);

#endif // MINT_TEST_BROWSER_H
