// test_docs.c - the documents and the comments point at code that exists: every repository
// path, every backquoted file.c:function and every backquoted call of a bare function name (name
// and "()") in README.md, docs/*.md or a comment of a .c/.h file resolves (the file exists; the
// function is defined in that file, or anywhere for a bare name); every relative markdown link
// [text](target) of README.md and docs/*.md names a file or folder of the repository, and its
// #anchor a heading of the target page; no "../" path in them leaves the repository (a reader's
// clone has nothing beside it); docs/walkthrough.md names at least 30 file:function pairs; and
// every docs/formats.md section the code cites is in docs/formats.md.
#include "helpers/helpers.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <ftw.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

// A new user's first screen: the README's first 60 lines hold the two set-up commands and the one
// command that runs a model downloaded from Hugging Face, before any measurement table.
Test(docs, readme_starts_with_the_start) {
    char *readme = source("README.md");
    cr_assert(readme, "no README.md");
    const char *p = readme;
    for (int line = 0; line < 60 && p; line++) {
        p = strchr(p, '\n');
        if (p) p++;
    }
    const size_t n = p ? (size_t)(p - readme) : strlen(readme);
    readme[n] = '\0';
    static const char *const must[] = {"tools/scripts/quickstart.sh", "tools/scripts/test.sh",
                                       "huggingface.co", "build/mint-run -m ", "-cnv"};
    for (size_t i = 0; i < sizeof must / sizeof *must; i++)
        cr_assert(strstr(readme, must[i]), "the README's first 60 lines lack '%s'", must[i]);
    cr_assert_null(strstr(readme, "| type |"), "a measurement table in the first 60 lines");
    cr_assert_null(strstr(readme, "../shared"), "a path outside the repository");
    free(readme);
}

// ---------------------------------------------------------------------------------------------
// Every reference in every document and comment

// The tree's files, relative to MINT_SOURCE_DIR; build folders, hidden folders and node_modules
// are left out.
typedef struct tree_file {
    char *rel;  // path relative to the root
    char *text; // the whole file, NUL-terminated (NULL for files that are not read)
} tree_file;

static tree_file g_files[4096];
static int g_n_files;
static size_t g_root_len;

static bool has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int collect(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    const char *base = path + ftw->base;
    if (flag == FTW_D && ftw->level > 0 &&
        (base[0] == '.' || strncmp(base, "build", 5) == 0 || strcmp(base, "node_modules") == 0))
        return FTW_SKIP_SUBTREE;
    if (flag != FTW_F) return FTW_CONTINUE;
    cr_assert(g_n_files < (int)(sizeof g_files / sizeof *g_files), "too many files");
    tree_file *f = &g_files[g_n_files++];
    f->rel = strdup(path + g_root_len + 1);
    f->text = NULL;
    if (has_suffix(base, ".c") || has_suffix(base, ".h") || has_suffix(base, ".md") ||
        has_suffix(base, ".py")) {
        size_t n;
        f->text = (char *)mt_read_file(path, &n);
    }
    (void)st;
    return FTW_CONTINUE;
}

static void load_tree(void) {
    const char *root = getenv("MINT_SOURCE_DIR");
    cr_assert(root, "MINT_SOURCE_DIR is not set (ctest sets it)");
    g_root_len = strlen(root);
    g_n_files = 0;
    cr_assert_eq(nftw(root, collect, 32, FTW_PHYS | FTW_ACTIONRETVAL), 0, "cannot walk %s", root);
}

static const tree_file *find_file(const char *rel) {
    for (int i = 0; i < g_n_files; i++)
        if (strcmp(g_files[i].rel, rel) == 0) return &g_files[i];
    return NULL;
}

// The comments of C source: everything else (code, strings, character constants) blanked, line
// breaks kept, so a match's line number is the file's.
static char *comments_only(const char *src) {
    size_t n = strlen(src);
    char *out = malloc(n + 1);
    cr_assert(out);
    enum { CODE, LINE, BLOCK, STR, CHR } st = CODE;
    for (size_t i = 0; i < n; i++) {
        char c = src[i], next = i + 1 < n ? src[i + 1] : '\0';
        out[i] = c == '\n' ? '\n' : ' ';
        switch (st) {
        case CODE:
            if (c == '/' && next == '/')
                st = LINE;
            else if (c == '/' && next == '*')
                st = BLOCK, i++, out[i] = ' ';
            else if (c == '"')
                st = STR;
            else if (c == '\'')
                st = CHR;
            break;
        case LINE:
            if (c == '\n')
                st = CODE;
            else
                out[i] = c;
            break;
        case BLOCK:
            if (c == '*' && next == '/')
                st = CODE, i++, out[i] = ' ';
            else if (c != '\n')
                out[i] = c;
            break;
        case STR:
        case CHR:
            if (c == '\\' && next)
                i++, out[i] = next == '\n' ? '\n' : ' ';
            else if ((st == STR && c == '"') || (st == CHR && c == '\'') || c == '\n')
                st = CODE;
            break;
        }
    }
    out[n] = '\0';
    return out;
}

static int line_of(const char *text, const char *p) {
    int line = 1;
    for (const char *q = text; q < p; q++) line += *q == '\n';
    return line;
}

// Extensions of the files a path may name in this repository; anything else (a model file, a
// C++ source of llama.cpp, a program name) is not a reference to check.
static bool checked_extension(const char *path) {
    static const char *const exts[] = {".c",   ".h",    ".md",   ".sh",   ".py",   ".json",
                                       ".txt", ".html", ".js",   ".css",  ".in",   ".cmake",
                                       ".yml", ".yaml", ".conf", ".supp", ".ipynb"};
    const char *slash = strrchr(path, '/');
    for (size_t i = 0; i < sizeof exts / sizeof *exts; i++)
        if (has_suffix(slash ? slash : path, exts[i])) return true;
    return false;
}

// Whether `name` is defined by any C file (or, for a method of the Python bindings, any "def").
static bool defined_anywhere(const char *name) {
    char def[160];
    snprintf(def, sizeof def, "def %s(", name);
    for (int i = 0; i < g_n_files; i++) {
        const tree_file *f = &g_files[i];
        if (!f->text) continue;
        if ((has_suffix(f->rel, ".c") || has_suffix(f->rel, ".h")) && defines(f->text, name))
            return true;
        if (has_suffix(f->rel, ".py") && strstr(f->text, def)) return true;
    }
    return false;
}

typedef struct ref_report {
    int paths, functions, calls, links, anchors, stale;
    bool quiet; // count stale references without logging them (the checker's own test)
} ref_report;

// Logs one stale reference (Criterion's error log, which also fails the run's exit status).
#define STALE(r, ...)                                                                              \
    do {                                                                                           \
        if (!(r)->quiet) cr_log_error(__VA_ARGS__);                                                \
        (r)->stale++;                                                                              \
    } while (0)

// Checks every reference in text (the document, or a C file's comments) of the file `from`.
static void check_references(const char *from, const char *text, ref_report *r) {
    regex_t path_re, fn_re, call_re;
    cr_assert_eq(regcomp(&path_re,
                         "(^|[^A-Za-z0-9_./-])((base|quant|formats|ops|runtime|tools|tests|docs|"
                         "include|bindings|deploy|\\.ci)/[A-Za-z0-9_./*<>{},-]*[A-Za-z0-9_*>}])",
                         REG_EXTENDED | REG_NEWLINE),
                 0);
    cr_assert_eq(regcomp(&fn_re, "`([A-Za-z0-9_./-]+\\.[ch]):([A-Za-z_][A-Za-z0-9_]*)`",
                         REG_EXTENDED | REG_NEWLINE),
                 0);
    cr_assert_eq(regcomp(&call_re, "`([A-Za-z_][A-Za-z0-9_]*)\\(\\)`", REG_EXTENDED | REG_NEWLINE),
                 0);
    regmatch_t m[3];
    for (const char *p = text; regexec(&path_re, p, 3, m, p == text ? 0 : REG_NOTBOL) == 0;
         p += m[0].rm_eo) {
        char path[512];
        snprintf(path, sizeof path, "%.*s", (int)(m[2].rm_eo - m[2].rm_so), p + m[2].rm_so);
        if (strpbrk(path, "*<>{},") || !checked_extension(path)) continue; // patterns, not files
        r->paths++;
        if (!find_file(path)) {
            STALE(r, "%s:%d: names %s, which does not exist", from, line_of(text, p + m[2].rm_so),
                  path);
        }
    }
    for (const char *p = text; regexec(&fn_re, p, 3, m, 0) == 0; p += m[0].rm_eo) {
        char file[512], fn[128], dir_rel[600];
        snprintf(file, sizeof file, "%.*s", (int)(m[1].rm_eo - m[1].rm_so), p + m[1].rm_so);
        snprintf(fn, sizeof fn, "%.*s", (int)(m[2].rm_eo - m[2].rm_so), p + m[2].rm_so);
        r->functions++;
        const tree_file *f = find_file(file);
        if (!f && !strchr(file, '/')) { // a bare file name: the citing file's folder
            const char *slash = strrchr(from, '/');
            snprintf(dir_rel, sizeof dir_rel, "%.*s/%s", slash ? (int)(slash - from) : 0, from,
                     file);
            f = find_file(slash ? dir_rel : file);
        }
        if (!f || !f->text || !defines(f->text, fn)) {
            STALE(r, "%s:%d: names %s:%s, but %s", from, line_of(text, p + m[0].rm_so), file, fn,
                  f ? "that file does not define it" : "that file does not exist");
        }
    }
    for (const char *p = text; regexec(&call_re, p, 3, m, 0) == 0; p += m[0].rm_eo) {
        char fn[128];
        snprintf(fn, sizeof fn, "%.*s", (int)(m[1].rm_eo - m[1].rm_so), p + m[1].rm_so);
        r->calls++;
        if (!defined_anywhere(fn)) {
            STALE(r, "%s:%d: names %s(), which nothing in the repository defines", from,
                  line_of(text, p + m[0].rm_so), fn);
        }
    }
    regfree(&path_re);
    regfree(&fn_re);
    regfree(&call_re);
}

// ---------------------------------------------------------------------------------------------
// Links between the documents

// GitHub's anchor for a heading's text: lower case; letters, digits, '-' and '_' kept (and the
// bytes of non-ASCII characters), each space made '-', everything else (punctuation, backquotes)
// dropped. "## Serving many users: mint-serve" -> "serving-many-users-mint-serve".
static void heading_anchor(const char *h, size_t n, char *out, size_t cap) {
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        const unsigned char c = (unsigned char)h[i];
        if (isalnum(c) || c == '-' || c == '_' || c >= 0x80)
            out[o++] = (char)tolower(c);
        else if (c == ' ')
            out[o++] = '-';
    }
    out[o] = '\0';
}

// Whether a markdown text has a heading (outside fenced code) whose anchor is `anchor`; a heading
// repeated in one page gets GitHub's "-1", "-2", ... after its first.
static bool has_anchor(const char *md, const char *anchor) {
    static char seen[512][128];
    int n_seen = 0;
    bool fenced = false;
    for (const char *l = md; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
        const char *eol = strchr(l, '\n');
        const size_t len = eol ? (size_t)(eol - l) : strlen(l);
        if (len >= 3 && strncmp(l, "```", 3) == 0) fenced = !fenced;
        if (fenced || l[0] != '#') continue;
        size_t h = 0;
        while (h < len && l[h] == '#') h++;
        if (h > 6 || h >= len || l[h] != ' ') continue;
        char a[128];
        heading_anchor(l + h + 1, len - h - 1, a, sizeof a);
        int dup = 0;
        for (int i = 0; i < n_seen; i++) dup += strcmp(seen[i], a) == 0;
        if (n_seen < 512) snprintf(seen[n_seen++], sizeof seen[0], "%s", a);
        char full[160];
        if (dup)
            snprintf(full, sizeof full, "%s-%d", a, dup);
        else
            snprintf(full, sizeof full, "%s", a);
        if (strcmp(full, anchor) == 0) return true;
    }
    return false;
}

// `rel` (a path relative to the folder of the file `from`) made relative to the root, with "."
// and ".." resolved; false when it climbs above the root.
static bool resolve(const char *from, const char *rel, char *out, size_t cap) {
    char buf[1024];
    const char *slash = strrchr(from, '/');
    snprintf(buf, sizeof buf, "%.*s%s%s", slash ? (int)(slash - from) : 0, from, slash ? "/" : "",
             rel);
    char *parts[128];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
        if (strcmp(t, ".") == 0) continue;
        if (strcmp(t, "..") == 0) {
            if (n == 0) return false;
            n--;
            continue;
        }
        if (n < 128) parts[n++] = t;
    }
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (i) strncat(out, "/", cap - strlen(out) - 1);
        strncat(out, parts[i], cap - strlen(out) - 1);
    }
    return true;
}

static bool is_folder(const char *rel) {
    const size_t n = strlen(rel);
    for (int i = 0; i < g_n_files; i++)
        if (strncmp(g_files[i].rel, rel, n) == 0 && g_files[i].rel[n] == '/') return true;
    return n == 0; // the root itself
}

// Checks the relative links [text](target) of a markdown file outside fenced code, and that no
// "../" path anywhere in it climbs out of the repository.
static void check_links(const char *from, const char *text, ref_report *r) {
    regex_t link_re, up_re;
    cr_assert_eq(regcomp(&link_re, "\\]\\(([^()# \t\n]*)(#[^() \t\n]*)?\\)", REG_EXTENDED), 0);
    cr_assert_eq(regcomp(&up_re, "(^|[^A-Za-z0-9_./-])((\\.\\./)+[A-Za-z0-9_.*$-][^ `'\")\n]*)",
                         REG_EXTENDED | REG_NEWLINE),
                 0);
    // Fenced code blanked (line breaks kept) for the links; the "../" check reads everything.
    char *prose = strdup(text);
    cr_assert(prose);
    bool fenced = false;
    for (char *l = prose; *l;) {
        char *eol = strchr(l, '\n');
        const size_t len = eol ? (size_t)(eol - l) : strlen(l);
        const bool fence = len >= 3 && strncmp(l, "```", 3) == 0;
        if (fence || fenced) memset(l, ' ', len);
        if (fence) fenced = !fenced;
        if (!eol) break;
        l = eol + 1;
    }
    regmatch_t m[3];
    for (const char *p = prose; regexec(&link_re, p, 3, m, 0) == 0; p += m[0].rm_eo) {
        char target[512], anchor[256] = "", path[1024];
        snprintf(target, sizeof target, "%.*s", (int)(m[1].rm_eo - m[1].rm_so), p + m[1].rm_so);
        if (m[2].rm_so >= 0)
            snprintf(anchor, sizeof anchor, "%.*s", (int)(m[2].rm_eo - m[2].rm_so - 1),
                     p + m[2].rm_so + 1);
        if (strstr(target, "://") || strncmp(target, "mailto:", 7) == 0) continue;
        const int line = line_of(prose, p + m[0].rm_so);
        r->links++;
        if (!target[0]) { // "#anchor": this page
            r->anchors++;
            if (!has_anchor(text, anchor))
                STALE(r, "%s:%d: links to #%s, but it has no such heading", from, line, anchor);
            continue;
        }
        if (!resolve(from, target, path, sizeof path)) {
            STALE(r, "%s:%d: links to %s, outside the repository", from, line, target);
            continue;
        }
        const tree_file *f = find_file(path);
        if (!f && !is_folder(path)) {
            STALE(r, "%s:%d: links to %s, which does not exist", from, line, target);
            continue;
        }
        if (!anchor[0]) continue;
        r->anchors++;
        if (!f || !f->text || !has_suffix(path, ".md") || !has_anchor(f->text, anchor))
            STALE(r, "%s:%d: links to %s#%s, but %s has no such heading", from, line, target,
                  anchor, path);
    }
    for (const char *p = text; regexec(&up_re, p, 3, m, p == text ? 0 : REG_NOTBOL) == 0;
         p += m[0].rm_eo) {
        char rel[512], path[1024];
        snprintf(rel, sizeof rel, "%.*s", (int)(m[2].rm_eo - m[2].rm_so), p + m[2].rm_so);
        if (!resolve(from, rel, path, sizeof path))
            STALE(r,
                  "%s:%d: names %s, outside the repository (a reader's clone has nothing "
                  "beside it)",
                  from, line_of(text, p + m[2].rm_so), rel);
    }
    free(prose);
    regfree(&link_re);
    regfree(&up_re);
}

Test(docs, every_named_file_and_function_exists, .timeout = MT_HANG(60)) {
    load_tree();
    ref_report r = {0};
    int docs = 0, sources = 0;
    for (int i = 0; i < g_n_files; i++) {
        const tree_file *f = &g_files[i];
        if (!f->text) continue;
        const bool top_doc = strcmp(f->rel, "README.md") == 0 ||
                             (strncmp(f->rel, "docs/", 5) == 0 && has_suffix(f->rel, ".md") &&
                              !strchr(f->rel + 5, '/'));
        const bool c_file = has_suffix(f->rel, ".c") || has_suffix(f->rel, ".h");
        if (top_doc) {
            check_references(f->rel, f->text, &r);
            check_links(f->rel, f->text, &r);
            docs++;
        } else if (c_file) {
            char *c = comments_only(f->text);
            check_references(f->rel, c, &r);
            free(c);
            sources++;
        }
    }
    cr_log_info("%d documents and %d C files: %d paths, %d file:function and %d function() "
                "references, %d links (%d with an anchor) checked, %d stale",
                docs, sources, r.paths, r.functions, r.calls, r.links, r.anchors, r.stale);
    cr_assert_eq(r.stale, 0, "%d stale references (listed above)", r.stale);
    cr_assert_geq(docs, 4);
    cr_assert_geq(r.paths, 100);
    cr_assert_geq(r.links, 30);
    cr_assert_geq(r.anchors, 5);
    for (int i = 0; i < g_n_files; i++) {
        free(g_files[i].rel);
        free(g_files[i].text);
    }
}

// The checker itself: a comment naming a file or function that is not there is found.
Test(docs, a_stale_reference_is_found) {
    load_tree();
    ref_report r = {.quiet = true};
    char *c =
        comments_only("int x = 1; // see formats/no_such_file.c and `formats/gguf.c:no_such`\n"
                      "const char *s = \"// formats/in_a_string.c\"; /* `no_such_fn()` */\n");
    check_references("tests/test_docs.c", c, &r);
    free(c);
    cr_assert_eq(r.paths, 2, "the path in the string literal is not a comment");
    cr_assert_eq(r.stale, 3);
    for (int i = 0; i < g_n_files; i++) {
        free(g_files[i].rel);
        free(g_files[i].text);
    }
}

// The link checker itself: a missing page, a missing heading and a path out of the repository are
// found; a good link, a good anchor (a repeated heading's too) and a link to a folder are not.
Test(docs, a_broken_link_is_found) {
    load_tree();
    ref_report r = {.quiet = true};
    const char *doc = "# Title\n\n## Same: heading\n\n## Same: heading\n\n"
                      "[ok](../README.md) [ok](#same-heading-1) [ok](walkthrough.md#0-start-here-"
                      "one-token-in-one-function) [ok](examples/) [web](https://example.com/x)\n"
                      "[bad](no-such-page.md) [bad](#no-such-heading) [bad](../../outside.md)\n"
                      "see ../../shared/data/file.gguf\n"
                      "```\n[in code](not-checked.md)\n```\n";
    check_links("docs/test.md", doc, &r);
    cr_assert_eq(r.links, 7, "%d links", r.links);
    cr_assert_eq(r.anchors, 3);
    // The missing page and heading, the link out, and the two "../../" paths in the prose.
    cr_assert_eq(r.stale, 5, "%d stale", r.stale);
    char a[128];
    const char *h = "Serving many users: `mint-serve`";
    heading_anchor(h, strlen(h), a, sizeof a);
    cr_assert_str_eq(a, "serving-many-users-mint-serve");
    for (int i = 0; i < g_n_files; i++) {
        free(g_files[i].rel);
        free(g_files[i].text);
    }
}
