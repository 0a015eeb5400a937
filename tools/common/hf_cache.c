// hf_cache.c - see hf_cache.h.
#include "hf_cache.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

// The cache folder, in the order llama.cpp's downloader and Hugging Face's tools look for it.
static bool cache_dir(char *out, size_t cap) {
    static const struct {
        const char *var, *sub; // environment variable, and the folder under it
    } where[] = {
        {"LLAMA_CACHE", ""},
        {"HF_HUB_CACHE", ""},
        {"HUGGINGFACE_HUB_CACHE", ""},
        {"HF_HOME", "/hub"},
        {"XDG_CACHE_HOME", "/huggingface/hub"},
        {"HOME", "/.cache/huggingface/hub"},
    };
    for (size_t i = 0; i < sizeof where / sizeof *where; i++) {
        const char *v = getenv(where[i].var);
        if (v && *v) return (size_t)snprintf(out, cap, "%s%s", v, where[i].sub) < cap;
    }
    return false;
}

// A repository name as the hub writes it: owner/name, each of letters, digits, '-', '_', '.'
// (no "..": the name becomes a folder name).
static bool valid_repo(const char *r, size_t n) {
    const char *slash = memchr(r, '/', n);
    if (!slash || slash == r || slash == r + n - 1 ||
        memchr(slash + 1, '/', n - (size_t)(slash - r) - 1))
        return false;
    for (size_t i = 0; i < n; i++) {
        const char c = r[i];
        if (!(c == '/' || c == '-' || c == '_' || c == '.' || (c >= '0' && c <= '9') ||
              (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
            return false;
        if (c == '.' && i + 1 < n && r[i + 1] == '.') return false;
    }
    return true;
}

static bool is_file(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

// Whether name (a file name) contains needle, any case.
static bool contains_nocase(const char *name, const char *needle) {
    const size_t n = strlen(needle);
    for (const char *p = name; *p; p++)
        if (strncasecmp(p, needle, n) == 0) return true;
    return false;
}

static bool ends_with(const char *s, const char *suffix) {
    const size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

// The model file of a snapshot folder when none was named: among its .gguf files (not mmproj
// projectors, and only the first part of a split file), the one whose name holds `quant`, else
// the first in name order; llama.cpp's downloader asks for Q4_K_M when no quant is given.
static bool pick_gguf(const char *dir, const char *quant, char *out, size_t cap) {
    struct dirent **ents = NULL;
    const int n = scandir(dir, &ents, NULL, alphasort);
    if (n < 0) return false;
    const char *best = NULL, *first = NULL;
    for (int i = 0; i < n; i++) {
        const char *f = ents[i]->d_name;
        if (!ends_with(f, ".gguf") || contains_nocase(f, "mmproj")) continue;
        if (strstr(f, "-of-") && !strstr(f, "-00001-of-")) continue;
        if (!first) first = f;
        if (!best && contains_nocase(f, quant)) best = f;
    }
    const char *pick = best ? best : first;
    bool ok = pick && (size_t)snprintf(out, cap, "%s/%s", dir, pick) < cap;
    for (int i = 0; i < n; i++) free(ents[i]);
    free(ents);
    return ok;
}

bool hf_cache_find(const char *repo, const char *file, char *out, size_t cap, char *err,
                   size_t errlen) {
    // "owner/name[:quant]"
    const char *colon = strchr(repo, ':');
    const size_t rn = colon ? (size_t)(colon - repo) : strlen(repo);
    const char *quant = colon ? colon + 1 : "Q4_K_M";
    if (!valid_repo(repo, rn) || (colon && !*quant)) {
        snprintf(err, errlen, "-hf '%.200s' is not a repository name (owner/name[:quant])", repo);
        return false;
    }
    if (file && (strstr(file, "..") || file[0] == '/' || !*file)) {
        snprintf(err, errlen, "--hf-file '%.200s' is not a file of a repository", file);
        return false;
    }
    char base[1024];
    if (!cache_dir(base, sizeof base)) {
        snprintf(err, errlen, "no Hugging Face cache folder (set LLAMA_CACHE or HF_HOME)");
        return false;
    }
    // <cache>/models--owner--name/refs/main holds the commit; the files are in
    // snapshots/<commit>/ (the hub's layout, which llama.cpp's downloader writes too).
    char folder[1400], path[2200], commit[128] = "";
    int k = snprintf(folder, sizeof folder, "%s/models--", base);
    for (size_t i = 0; i < rn && (size_t)k + 3 < sizeof folder; i++) {
        if (repo[i] == '/')
            folder[k++] = '-', folder[k++] = '-';
        else
            folder[k++] = repo[i];
    }
    folder[k] = '\0';
    snprintf(path, sizeof path, "%s/refs/main", folder);
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(commit, sizeof commit, f)) commit[0] = '\0';
        fclose(f);
        commit[strcspn(commit, "\r\n")] = '\0';
    }
    bool found = false;
    if (commit[0] && !strchr(commit, '/') && strcmp(commit, "..") && strcmp(commit, ".")) {
        char snap[1600];
        snprintf(snap, sizeof snap, "%s/snapshots/%s", folder, commit);
        if (file) {
            found = (size_t)snprintf(out, cap, "%s/%s", snap, file) < cap && is_file(out);
        } else {
            found = pick_gguf(snap, quant, out, cap);
        }
    }
    if (!found)
        snprintf(err, errlen,
                 "%.*s%s%.200s is not in the Hugging Face cache %s (mint does not download: "
                 "fetch it first, e.g. with llama.cpp's -hf, or give the file with -m)",
                 (int)rn, repo, file ? " file " : "", file ? file : "", base);
    return found;
}

bool hf_cache_dir(char *out, size_t cap) {
    return cache_dir(out, cap);
}
