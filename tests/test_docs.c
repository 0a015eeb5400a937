// test_docs.c - the documents point at code that exists: every `file:function` in
// docs/walkthrough.md names a file of the repository that defines that function, and every
// docs/formats.md section the code cites is in docs/formats.md.
#include "helpers/helpers.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *source(const char *rel) {
    const char *root = getenv("MINT_SOURCE_DIR");
    cr_assert(root, "MINT_SOURCE_DIR is not set (ctest sets it)");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    size_t n;
    char *s = (char *)mt_read_file(path, &n);
    return s;
}

// Whether text defines name: the name at the start of a declarator followed by '(' on a line that
// does not end in ';' (a definition, not a prototype), or a "#define name".
static bool defines(const char *text, const char *name) {
    const size_t n = strlen(name);
    for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
        if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;
        const char *q = p + n;
        while (*q == ' ') q++;
        if (*q != '(') continue;
        const char *bol = p;
        while (bol > text && bol[-1] != '\n') bol--;
        if (bol[0] == ' ' || bol[0] == '\t' || bol[0] == '/') continue; // a call or a comment
        const char *eol = strchr(p, '\n');
        while (eol && eol[-1] == ',') eol = strchr(eol + 1, '\n'); // parameters over lines
        if (eol && eol[-1] == '{') return true;
        if (eol && eol[-1] == ')') return true; // "void f(...)\n{" style
    }
    return false;
}

Test(docs, walkthrough_references_exist) {
    char *doc = source("docs/walkthrough.md");
    cr_assert(doc, "docs/walkthrough.md is missing");
    regex_t re;
    cr_assert_eq(regcomp(&re, "`([a-z_/]+\\.[ch]):([A-Za-z_][A-Za-z0-9_]*)`", REG_EXTENDED), 0);
    int checked = 0;
    const char *p = doc;
    regmatch_t m[3];
    while (regexec(&re, p, 3, m, 0) == 0) {
        char file[256], fn[128];
        snprintf(file, sizeof file, "%.*s", (int)(m[1].rm_eo - m[1].rm_so), p + m[1].rm_so);
        snprintf(fn, sizeof fn, "%.*s", (int)(m[2].rm_eo - m[2].rm_so), p + m[2].rm_so);
        char *text = source(file);
        cr_assert(text, "walkthrough: %s does not exist", file);
        cr_assert(defines(text, fn), "walkthrough: %s does not define %s", file, fn);
        free(text);
        checked++;
        p += m[0].rm_eo;
    }
    regfree(&re);
    cr_log_info("walkthrough: %d file:function references checked", checked);
    cr_assert_geq(checked, 30);
    free(doc);
}

Test(docs, design_and_formats_exist) {
    char *design = source("docs/design.md"), *formats = source("docs/formats.md");
    cr_assert(design && strstr(design, "## The floors"), "docs/design.md lacks its floors");
    // The sections the code cites most (docs/formats.md N.M in comments).
    static const char *const sections[] = {"## 1. GGUF", "### 1.8", "### 2.3", "### 2.4", "### 2.5",
                                           "### 5.2",    "### 5.3", "### 6.4", "## 7."};
    for (size_t i = 0; i < sizeof sections / sizeof *sections; i++)
        cr_assert(formats && strstr(formats, sections[i]), "docs/formats.md lacks '%s'",
                  sections[i]);
    free(design);
    free(formats);
}
